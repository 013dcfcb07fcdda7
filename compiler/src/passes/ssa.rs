//! Variables to SSA on the structured IR: a walk that carries the current value of every
//! variable; an `if` that leaves a variable different in its arms gets a result (yielded by
//! each falling-through arm); a loop gets a parameter for every variable stored inside it
//! (passed by every `continue` and the initial value) and a result for it (passed by every
//! `break`). Variables start as zero (SPIR-V leaves them undefined).

use crate::builder::Builder;
use crate::ir::*;
use std::collections::HashMap;

struct Ssa {
    values: Vec<Type>,
    vars: Vec<Type>,
    subst: HashMap<Value, Value>,
    /// Variables carried by each enclosing loop.
    loops: Vec<Vec<Var>>,
}

fn stored_vars(b: &Block, out: &mut Vec<Var>) {
    for n in b {
        match n {
            Node::Instr(Instr {
                op: Op::StoreVar(v, _),
                ..
            }) if !out.contains(v) => out.push(*v),
            Node::If(i) => {
                stored_vars(&i.then_, out);
                stored_vars(&i.else_, out);
            }
            Node::Loop(l) => stored_vars(&l.body, out),
            _ => {}
        }
    }
}

impl Ssa {
    fn s(&self, v: Value) -> Value {
        let mut v = v;
        while let Some(x) = self.subst.get(&v) {
            v = *x;
        }
        v
    }

    fn jump_args(&self, v: Vec<Value>, cur: &[Value]) -> Vec<Value> {
        let mut v: Vec<Value> = v.into_iter().map(|x| self.s(x)).collect();
        if let Some(carried) = self.loops.last() {
            v.extend(carried.iter().map(|c| cur[c.0 as usize]));
        }
        v
    }

    fn block(&mut self, b: Block, cur: &mut [Value]) -> Block {
        let mut out = Vec::with_capacity(b.len());
        for n in b {
            match n {
                Node::Instr(mut i) => {
                    for s in i.op.srcs_mut() {
                        *s = self.s(*s);
                    }
                    match i.op {
                        Op::LoadVar(v) => {
                            self.subst.insert(i.dst.unwrap(), cur[v.0 as usize]);
                        }
                        Op::StoreVar(v, x) => cur[v.0 as usize] = x,
                        _ => out.push(Node::Instr(i)),
                    }
                }
                Node::If(i) => {
                    let i = *i;
                    let cond = self.s(i.cond);
                    let mut tc = cur.to_vec();
                    let mut ec = cur.to_vec();
                    let mut then_ = self.block(i.then_, &mut tc);
                    let mut else_ = self.block(i.else_, &mut ec);
                    let t_falls = !then_.last().is_some_and(|n| n.is_jump());
                    let e_falls = !else_.last().is_some_and(|n| n.is_jump());
                    let t_yields = t_falls || matches!(then_.last(), Some(Node::Yield(_)));
                    let e_yields = e_falls || matches!(else_.last(), Some(Node::Yield(_)));
                    let mut results = i.results.clone();
                    let mut new_t = Vec::new();
                    let mut new_e = Vec::new();
                    // A value defined inside an arm is visible only in that arm, so a
                    // variable whose value changed in an arm that reaches the code after
                    // the `if` becomes a result of the `if`, even when the other arm leaves
                    // through a `break`/`continue` and so yields nothing. Only a value
                    // defined before the `if` (both arms agree, or the one arm that falls
                    // through left it unchanged) may be used directly after it.
                    for v in 0..cur.len() {
                        let (before, a, b) = (cur[v], tc[v], ec[v]);
                        // The value each arm yields; None for an arm that leaves by a jump.
                        let (ta, eb) = match (t_yields, e_yields) {
                            (true, true) if a == b => (None, None),
                            (true, true) => (Some(a), Some(b)),
                            (true, false) if a != before => (Some(a), None),
                            (false, true) if b != before => (None, Some(b)),
                            _ => (None, None),
                        };
                        if ta.is_none() && eb.is_none() {
                            if t_yields {
                                cur[v] = a;
                            } else if e_yields {
                                cur[v] = b;
                            }
                            continue;
                        }
                        let r = Builder::new(&mut self.values, &mut out).new_value(self.vars[v]);
                        results.push(r);
                        new_t.extend(ta);
                        new_e.extend(eb);
                        cur[v] = r;
                    }
                    for (arm, vals) in [(&mut then_, new_t), (&mut else_, new_e)] {
                        if vals.is_empty() {
                            continue;
                        }
                        match arm.last_mut() {
                            Some(Node::Yield(y)) => y.extend(vals),
                            Some(n) if n.is_jump() => {}
                            _ => arm.push(Node::Yield(vals)),
                        }
                    }
                    out.push(Node::If(Box::new(If {
                        cond,
                        then_,
                        else_,
                        results,
                    })));
                }
                Node::Loop(l) => {
                    let l = *l;
                    let mut carried = Vec::new();
                    stored_vars(&l.body, &mut carried);
                    let mut params: Vec<(Value, Value)> =
                        l.params.iter().map(|(p, i)| (*p, self.s(*i))).collect();
                    let mut inner = cur.to_vec();
                    for v in &carried {
                        let p = Builder::new(&mut self.values, &mut out)
                            .new_value(self.vars[v.0 as usize]);
                        params.push((p, cur[v.0 as usize]));
                        inner[v.0 as usize] = p;
                    }
                    self.loops.push(carried.clone());
                    let mut body = self.block(l.body, &mut inner);
                    self.loops.pop();
                    if !body.last().is_some_and(|n| n.is_jump()) && !carried.is_empty() {
                        body.push(Node::Continue(
                            carried.iter().map(|v| inner[v.0 as usize]).collect(),
                        ));
                    }
                    let mut results = l.results.clone();
                    for v in &carried {
                        let r = Builder::new(&mut self.values, &mut out)
                            .new_value(self.vars[v.0 as usize]);
                        results.push(r);
                        cur[v.0 as usize] = r;
                    }
                    out.push(Node::Loop(Box::new(Loop {
                        params,
                        body,
                        results,
                    })));
                }
                Node::Break(v) => {
                    let v = self.jump_args(v, cur);
                    out.push(Node::Break(v));
                }
                Node::Continue(v) => {
                    let v = self.jump_args(v, cur);
                    out.push(Node::Continue(v));
                }
                Node::Yield(v) => out.push(Node::Yield(v.into_iter().map(|x| self.s(x)).collect())),
            }
        }
        out
    }
}

/// Rewrites `load_var`/`store_var` into SSA values. Returns true if there were variables.
pub fn vars_to_ssa(f: &mut Function) -> bool {
    if f.vars.is_empty() {
        return false;
    }
    let body = std::mem::take(&mut f.body);
    let mut s = Ssa {
        values: std::mem::take(&mut f.values),
        vars: f.vars.clone(),
        subst: HashMap::new(),
        loops: vec![],
    };
    let mut prologue = Vec::new();
    let mut cur = Vec::new();
    for t in &f.vars {
        cur.push(Builder::new(&mut s.values, &mut prologue).konst(*t, 0));
    }
    let mut out = s.block(body, &mut cur);
    prologue.append(&mut out);
    f.body = prologue;
    f.values = s.values;
    f.vars.clear();
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    #[test]
    fn loop_counter_becomes_parameter() {
        check_pass(
            vars_to_ssa,
            "var $0:i32
            %0:i32 = const 0
            store_var $0, %0
            loop {
                %1:i32 = load_var $0
                %2:i32 = const 10
                %3:b1 = ige %1, %2
                if %3 {
                    break
                }
                %4:i32 = const 1
                %5:i32 = iadd %1, %4
                store_var $0, %5
            }
            %6:i32 = load_var $0
            store ssbo[0] %0, %6 align 4",
            "%7:i32 = const 0
            %0:i32 = const 0
            %8:i32 = loop (%9:i32 = %0) {
                %2:i32 = const 10
                %3:b1 = ige %9, %2
                if %3 {
                    break %9
                }
                %4:i32 = const 1
                %5:i32 = iadd %9, %4
                continue %5
            }
            store ssbo[0] %0, %8 align 4",
        );
    }

    #[test]
    fn if_merges_with_result() {
        check_pass(
            vars_to_ssa,
            "var $0:f32
            %0:b1 = const true
            %1:f32 = const 1.0
            store_var $0, %1
            if %0 {
                %2:f32 = const 2.0
                store_var $0, %2
            }
            %3:f32 = load_var $0
            %4:i32 = const 0
            store ssbo[0] %4, %3 align 4",
            "%9:f32 = const 0.0
            %0:b1 = const true
            %1:f32 = const 1.0
            %5:f32 = if %0 {
                %2:f32 = const 2.0
                yield %2
            } else {
                yield %1
            }
            %4:i32 = const 0
            store ssbo[0] %4, %5 align 4",
        );
    }

    /// The arm that falls through defines the variable's new value inside itself, and the
    /// other arm leaves the loop: after the `if` the value is only visible as a result of
    /// the `if` (GLSL `if (c) return; else v = x * 3;` followed by a use of `v`).
    #[test]
    fn value_from_the_only_falling_arm_becomes_if_result() {
        check_pass(
            vars_to_ssa,
            "var $0:i32
            %0:i32 = const 7
            store_var $0, %0
            loop {
                %1:i32 = const 0
                %2:i32 = load ssbo[0] %1 align 4
                %3:b1 = ieq %2, %1
                if %3 {
                    break
                } else {
                    %4:i32 = const 3
                    %5:i32 = imul %2, %4
                    store_var $0, %5
                }
                %6:i32 = load_var $0
                store ssbo[1] %1, %6 align 4
                break
            }",
            "%7:i32 = const 0
            %0:i32 = const 7
            %8:i32 = loop (%9:i32 = %0) {
                %1:i32 = const 0
                %2:i32 = load ssbo[0] %1 align 4
                %3:b1 = ieq %2, %1
                %10:i32 = if %3 {
                    break %9
                } else {
                    %4:i32 = const 3
                    %5:i32 = imul %2, %4
                    yield %5
                }
                store ssbo[1] %1, %10 align 4
                break %10
            }",
        );
    }

    /// The same with the arms swapped and a variable the falling arm leaves unchanged: that
    /// one needs no result.
    #[test]
    fn unchanged_value_from_the_only_falling_arm_needs_no_result() {
        check_pass(
            vars_to_ssa,
            "var $0:i32
            var $1:i32
            %0:i32 = const 7
            store_var $0, %0
            store_var $1, %0
            loop {
                %1:i32 = const 0
                %2:i32 = load ssbo[0] %1 align 4
                %3:b1 = ieq %2, %1
                if %3 {
                    %4:i32 = const 3
                    %5:i32 = imul %2, %4
                    store_var $0, %5
                } else {
                    store_var $1, %2
                    break
                }
                %6:i32 = load_var $0
                %7:i32 = load_var $1
                store ssbo[1] %6, %7 align 4
                break
            }",
            "%8:i32 = const 0
            %9:i32 = const 0
            %0:i32 = const 7
            %10:i32, %11:i32 = loop (%12:i32 = %0, %13:i32 = %0) {
                %1:i32 = const 0
                %2:i32 = load ssbo[0] %1 align 4
                %3:b1 = ieq %2, %1
                %14:i32 = if %3 {
                    %4:i32 = const 3
                    %5:i32 = imul %2, %4
                    yield %5
                } else {
                    break %12, %2
                }
                store ssbo[1] %14, %13 align 4
                break %14, %13
            }",
        );
    }
}
