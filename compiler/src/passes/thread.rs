//! Threading `if`s through what a branch decides.
//!
//! * Inside the arms of `if c`, `c` is known: true in `then`, false in `else` (and `x` the
//!   opposite where `c` is `inot x`). Its uses there read a constant instead, which the
//!   folding passes carry on (NIR's `opt_if_evaluate_condition_use`).
//! * `%r = if c1 {A; yield a} else {B; yield b}; P; if c2 {X} else {Y}`, with `P` pure
//!   instructions: where `c2` is a constant in each arm of the first `if` that falls
//!   through (from the values it yields, the constants and the facts above) and the two
//!   constants differ in truth, the second `if`'s arm for each constant moves to the end of
//!   the first's arm that gives it, and the second `if` goes: one branch instead of two.
//!   The front end's early `return` out of a `switch` leaves such a flag, tested again
//!   after the switch; NIR's structurizer moves the code after the switch into the arms
//!   instead (`nir_lower_returns`). Nothing is duplicated: each moved arm goes to one place
//!   (so the invocations that run it are the same ones, which subgroup operations need),
//!   `P` is copied into the arms for the moved code and stays after the `if` for the rest.

use crate::eval::eval_alu;
use crate::hash::HashMap;
use crate::ir::*;

/// Most instructions between the two `if`s (each is copied into the arms).
const MAX_BETWEEN: usize = 8;
/// Deepest chain of definitions followed to evaluate a condition.
const MAX_DEPTH: u32 = 8;

/// What a condition is computed from: constants and scalar integer and boolean ALU ops.
struct Eval {
    consts: Consts,
    defs: HashMap<Value, (AluOp, Vec<Value>)>,
    types: Vec<Type>,
    /// `x` for each value defined as `inot x`.
    nots: HashMap<Value, Value>,
}

impl Eval {
    fn new(f: &Function) -> Eval {
        let mut defs = HashMap::default();
        let mut nots = HashMap::default();
        let exact = |t: Type| t.comps == 1 && t.kind != Kind::Float;
        f.for_each_node(&mut |n| {
            if let Node::Instr(Instr {
                dst: Some(d),
                op: Op::Alu(a, s),
                ..
            }) = n
            {
                if exact(f.ty(*d)) && s.iter().all(|v| exact(f.ty(*v))) {
                    defs.insert(*d, (*a, s.clone()));
                }
                if *a == AluOp::Inot {
                    nots.insert(*d, s[0]);
                }
            }
        });
        Eval {
            consts: f.consts(),
            defs,
            types: f.values.clone(),
            nots,
        }
    }

    /// The bits of `v` where the values of `known` hold, if they decide it.
    fn eval(&self, v: Value, known: &HashMap<Value, u64>, depth: u32) -> Option<u64> {
        if let Some(k) = known.get(&v) {
            return Some(*k);
        }
        if self.types[v.0 as usize].comps != 1 {
            return None;
        }
        if let Some(c) = self.consts.get(v) {
            return c.first().copied();
        }
        let (op, srcs) = self.defs.get(&v)?;
        if depth >= MAX_DEPTH {
            return None;
        }
        let vals = srcs
            .iter()
            .map(|s| self.eval(*s, known, depth + 1))
            .collect::<Option<Vec<u64>>>()?;
        let tys: Vec<Type> = srcs.iter().map(|s| self.types[s.0 as usize]).collect();
        Some(eval_alu(*op, self.types[v.0 as usize], &tys, &vals))
    }

    /// The facts an arm of `if cond` starts with (`truth`: the `then` arm).
    fn facts(&self, cond: Value, truth: bool) -> Vec<(Value, bool)> {
        let mut f = vec![(cond, truth)];
        if let Some(x) = self.nots.get(&cond) {
            f.push((*x, !truth));
        }
        f
    }

    fn bits(&self, v: Value, truth: bool) -> u64 {
        if truth {
            self.types[v.0 as usize].mask()
        } else {
            0
        }
    }
}

/// Replaces the uses of each `if`'s condition (and of what it negates) in its arms by
/// constants defined at the arm's start: one walk, with the facts of the enclosing arms in
/// scope (a nested arm's fact about the same value hides the outer one).
struct Facts<'a> {
    ev: &'a Eval,
    values: &'a mut Vec<Type>,
    /// Facts in scope: the value, its truth, and the constant made for it at its first use.
    stack: Vec<(Value, bool, Option<Value>)>,
    /// Where in `stack` each value's innermost fact is.
    live: HashMap<Value, usize>,
    changed: bool,
}

impl Facts<'_> {
    fn map(&mut self, v: Value) -> Value {
        let Some(&ix) = self.live.get(&v) else {
            return v;
        };
        let values = &mut *self.values;
        *self.stack[ix].2.get_or_insert_with(|| {
            values.push(values[v.0 as usize]);
            Value(values.len() as u32 - 1)
        })
    }

    fn block(&mut self, b: &mut Block) {
        for n in b {
            match n {
                Node::Instr(i) => {
                    for s in i.op.srcs_mut() {
                        *s = self.map(*s);
                    }
                }
                Node::If(i) => {
                    let cond = i.cond;
                    i.cond = self.map(cond);
                    for (arm, truth) in [(&mut i.then_, true), (&mut i.else_, false)] {
                        let base = self.stack.len();
                        let mut hidden = Vec::new();
                        for (v, t) in self.ev.facts(cond, truth) {
                            hidden.push((v, self.live.insert(v, self.stack.len())));
                            self.stack.push((v, t, None));
                        }
                        self.block(arm);
                        for (v, t, k) in self.stack.drain(base..) {
                            if let Some(k) = k {
                                let c = Op::Const(vec![self.ev.bits(v, t)]);
                                arm.insert(0, Node::Instr(Instr::new(Some(k), c)));
                                self.changed = true;
                            }
                        }
                        for (v, old) in hidden.into_iter().rev() {
                            match old {
                                Some(ix) => self.live.insert(v, ix),
                                None => self.live.remove(&v),
                            };
                        }
                    }
                }
                Node::Loop(l) => {
                    for p in &mut l.params {
                        p.1 = self.map(p.1);
                    }
                    self.block(&mut l.body);
                }
                Node::Break(x) | Node::Continue(x) | Node::Yield(x) => {
                    for v in x {
                        *v = self.map(*v);
                    }
                }
            }
        }
    }
}

/// How an arm of the first `if` ends.
enum End {
    /// It yields these values (or falls off its end without results).
    Falls(Vec<Value>),
    /// It never reaches the code after the `if`.
    Jumps,
}

fn end(arm: &Block, results: &[Value]) -> Option<End> {
    match arm.last() {
        Some(Node::Yield(y)) => Some(End::Falls(y.clone())),
        Some(Node::Break(_) | Node::Continue(_)) => Some(End::Jumps),
        _ if results.is_empty() => Some(End::Falls(Vec::new())),
        _ => None,
    }
}

/// `first`, then the pure instructions `between`, then `second`, as one `if` (see the
/// module's comment), or None where `second`'s condition is not decided in each arm.
fn thread(
    first: &If,
    between: &[Instr],
    second: &If,
    ev: &Eval,
    values: &mut Vec<Type>,
) -> Option<If> {
    let mut picks = [None, None];
    for (k, (arm, truth)) in [(&first.then_, true), (&first.else_, false)]
        .into_iter()
        .enumerate()
    {
        let End::Falls(y) = end(arm, &first.results)? else {
            continue;
        };
        let mut known: HashMap<Value, u64> = HashMap::default();
        for (v, t) in ev.facts(first.cond, truth) {
            known.insert(v, ev.bits(v, t));
        }
        for (r, v) in first.results.iter().zip(&y) {
            if let Some(c) = ev.eval(*v, &known, 0) {
                known.insert(*r, c);
            }
        }
        picks[k] = Some(ev.eval(second.cond, &known, 0)? != 0);
    }
    match picks {
        [None, None] => return None,
        [Some(a), Some(b)] if a == b => return None,
        _ => {}
    }
    // An arm of the second `if` with results ends in a jump (the validator's rule), so
    // moved code always ends the way the arm it joins must.
    let second_end_ok =
        |arm: &Block| second.results.is_empty() || end(arm, &second.results).is_some();
    if !second_end_ok(&second.then_) || !second_end_ok(&second.else_) {
        return None;
    }
    let mut arms = [first.then_.clone(), first.else_.clone()];
    for (arm, pick) in arms.iter_mut().zip(picks) {
        let Some(pick) = pick else { continue };
        let yielded = pop_yield(arm);
        let had_yield = yielded.is_some();
        let y = yielded.unwrap_or_default();
        let mut map: HashMap<Value, Value> = first.results.iter().copied().zip(y.clone()).collect();
        for i in between {
            let mut c = i.clone();
            for s in c.op.srcs_mut() {
                *s = map.get(s).copied().unwrap_or(*s);
            }
            if let Some(d) = i.dst {
                values.push(values[d.0 as usize]);
                let nd = Value(values.len() as u32 - 1);
                map.insert(d, nd);
                c.dst = Some(nd);
            }
            arm.push(Node::Instr(c));
        }
        let mut moved = if pick {
            second.then_.clone()
        } else {
            second.else_.clone()
        };
        rewrite_uses_in(&mut moved, &|u| map.get(&u).copied().unwrap_or(u));
        let jumps = matches!(moved.last(), Some(Node::Break(_) | Node::Continue(_)));
        let y2 = pop_yield(&mut moved);
        arm.extend(moved);
        match y2 {
            Some(y2) => arm.push(Node::Yield(y.into_iter().chain(y2).collect())),
            None if had_yield && !jumps => arm.push(Node::Yield(y)),
            None => {}
        }
    }
    let [then_, else_] = arms;
    Some(If {
        cond: first.cond,
        then_,
        else_,
        results: first
            .results
            .iter()
            .chain(&second.results)
            .copied()
            .collect(),
    })
}

/// Removes and returns the values of the `yield` that ends `b`, if it ends in one.
fn pop_yield(b: &mut Block) -> Option<Vec<Value>> {
    match b.last() {
        Some(Node::Yield(_)) => match b.pop() {
            Some(Node::Yield(y)) => Some(y),
            _ => unreachable!("the last node is a yield"),
        },
        _ => None,
    }
}

fn pure(i: &Instr) -> bool {
    !i.op.has_side_effects() && !i.op.reads_memory()
}

fn thread_block(b: &mut Block, ev: &Eval, values: &mut Vec<Type>, changed: &mut bool) {
    for n in b.iter_mut() {
        match n {
            Node::If(i) => {
                thread_block(&mut i.then_, ev, values, changed);
                thread_block(&mut i.else_, ev, values, changed);
            }
            Node::Loop(l) => thread_block(&mut l.body, ev, values, changed),
            _ => {}
        }
    }
    let mut k = 0;
    while k < b.len() {
        let Node::If(first) = &b[k] else {
            k += 1;
            continue;
        };
        let n = b[k + 1..]
            .iter()
            .take_while(|n| matches!(n, Node::Instr(i) if pure(i)))
            .count();
        let j = k + 1 + n;
        let merged = match b.get(j) {
            Some(Node::If(second)) if n <= MAX_BETWEEN => {
                let between: Vec<Instr> = b[k + 1..j]
                    .iter()
                    .map(|n| match n {
                        Node::Instr(i) => i.clone(),
                        _ => unreachable!(),
                    })
                    .collect();
                thread(first, &between, second, ev, values).map(|m| (m, between))
            }
            _ => None,
        };
        match merged {
            Some((m, between)) => {
                *changed = true;
                let rest = std::iter::once(Node::If(Box::new(m)))
                    .chain(between.into_iter().map(Node::Instr));
                b.splice(k..=j, rest);
            }
            None => k += 1,
        }
    }
}

/// Replaces conditions known in an `if`'s arms by constants, and threads an `if` whose
/// condition each arm of the `if` before it decides into those arms. Returns true if
/// anything changed.
pub fn opt_thread_ifs(f: &mut Function) -> bool {
    let mut changed = false;
    let ev = Eval::new(f);
    let mut body = std::mem::take(&mut f.body);
    let mut facts = Facts {
        ev: &ev,
        values: &mut f.values,
        stack: Vec::new(),
        live: HashMap::default(),
        changed: false,
    };
    facts.block(&mut body);
    changed |= facts.changed;
    f.body = body;
    // Again, for the constants the arms now define.
    let ev = Eval::new(f);
    let mut body = std::mem::take(&mut f.body);
    thread_block(&mut body, &ev, &mut f.values, &mut changed);
    f.body = body;
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    #[test]
    fn condition_is_a_constant_in_its_arms() {
        // `%2` in the `then` arm and `%1` (which `%2` negates) in both.
        check_pass(
            opt_thread_ifs,
            "%0:i32 = sysval local_invocation_index
            %9:i32 = const 3
            %1:b1 = ieq %0, %9
            %2:b1 = inot %1
            if %2 {
                %3:i32 = b2i %2
                %4:i32 = b2i %1
                store ssbo[0] %3, %4 align 4
            } else {
                %5:i32 = b2i %1
                store ssbo[0] %0, %5 align 4
            }",
            "%0:i32 = sysval local_invocation_index
            %9:i32 = const 3
            %1:b1 = ieq %0, %9
            %2:b1 = inot %1
            if %2 {
                %11:b1 = const false
                %10:b1 = const true
                %3:i32 = b2i %10
                %4:i32 = b2i %11
                store ssbo[0] %3, %4 align 4
            } else {
                %12:b1 = const true
                %5:i32 = b2i %12
                store ssbo[0] %0, %5 align 4
            }",
        );
    }

    #[test]
    fn a_switch_return_flag_threads_into_the_arms() {
        // A `switch` with a `return` in one case: its flag (0 in the `default` arm, 1 in
        // the other, where the arm's own condition decides it) is tested again after the
        // switch. The code after the switch moves into the arm that yields 0; the flag's
        // comparison stays after the `if` (dead now) and its copy in the arms folds.
        check_pass(
            opt_thread_ifs,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = load ssbo[0] %0 align 4
            %2:i32 = const 0
            %3:i32 = const 1
            %4:b1 = ieq %1, %3
            %5:b1 = inot %4
            %6:i32 = if %5 {
                store ssbo[1] %2, %0 align 4
                yield %2
            } else {
                %7:i32 = b2i %4
                yield %7
            }
            %8:b1 = ine %6, %3
            if %8 {
                %9:b1 = subgroup_elect
                %10:i32 = b2i %9
                store ssbo[2] %0, %10 align 4
            }
            store ssbo[3] %0, %6 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = load ssbo[0] %0 align 4
            %2:i32 = const 0
            %3:i32 = const 1
            %4:b1 = ieq %1, %3
            %5:b1 = inot %4
            %6:i32 = if %5 {
                store ssbo[1] %2, %0 align 4
                %12:b1 = ine %2, %3
                %9:b1 = subgroup_elect
                %10:i32 = b2i %9
                store ssbo[2] %0, %10 align 4
                yield %2
            } else {
                %11:b1 = const true
                %7:i32 = b2i %11
                %13:b1 = ine %7, %3
                yield %7
            }
            %8:b1 = ine %6, %3
            store ssbo[3] %0, %6 align 4",
        );
    }

    #[test]
    fn second_if_results_join_the_first() {
        // The same condition twice: each arm of the second `if` joins the first's arm
        // of the same truth, with its result.
        check_pass(
            opt_thread_ifs,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 7
            %2:b1 = ult %0, %1
            if %2 {
                store ssbo[0] %0, %0 align 4
            }
            %3:i32 = if %2 {
                %4:i32 = iadd %0, %1
                yield %4
            } else {
                yield %1
            }
            store ssbo[1] %0, %3 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 7
            %2:b1 = ult %0, %1
            %3:i32 = if %2 {
                store ssbo[0] %0, %0 align 4
                %4:i32 = iadd %0, %1
                yield %4
            } else {
                yield %1
            }
            store ssbo[1] %0, %3 align 4",
        );
    }

    #[test]
    fn a_jumping_arm_takes_nothing() {
        // The `then` arm leaves the loop: the second `if` runs only after the `else` arm,
        // whose flag picks its `else` arm; the second `if`'s `then` arm is never reached.
        check_pass(
            opt_thread_ifs,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 7
            %2:b1 = ult %0, %1
            loop {
                %3:b1 = if %2 {
                    break
                } else {
                    %4:b1 = const false
                    yield %4
                }
                if %3 {
                    store ssbo[0] %0, %1 align 4
                } else {
                    store ssbo[1] %0, %1 align 4
                }
                break
            }",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 7
            %2:b1 = ult %0, %1
            loop {
                %3:b1 = if %2 {
                    break
                } else {
                    %4:b1 = const false
                    store ssbo[1] %0, %1 align 4
                    yield %4
                }
                break
            }",
        );
    }

    #[test]
    fn undecided_or_duplicated_second_if_is_kept() {
        for text in [
            // The flag is a loaded value in one arm.
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 7
            %2:b1 = ult %0, %1
            %3:i32 = if %2 {
                yield %1
            } else {
                %4:i32 = load ssbo[0] %0 align 4
                yield %4
            }
            %5:b1 = ieq %3, %1
            if %5 {
                store ssbo[1] %0, %1 align 4
            }",
            // Both arms pick the `then` arm: it would run in two places (a subgroup
            // operation there would see two groups of invocations).
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 7
            %2:b1 = ult %0, %1
            %3:i32 = if %2 {
                store ssbo[0] %0, %1 align 4
                yield %1
            } else {
                yield %1
            }
            %5:b1 = ieq %3, %1
            if %5 {
                %6:b1 = subgroup_elect
                %7:i32 = b2i %6
                store ssbo[1] %0, %7 align 4
            }",
            // A load between the two `if`s.
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 7
            %2:b1 = ult %0, %1
            if %2 {
                store ssbo[0] %0, %1 align 4
            }
            %4:i32 = load ssbo[0] %0 align 4
            if %2 {
                store ssbo[1] %0, %4 align 4
            }",
        ] {
            check_pass(opt_thread_ifs, text, text);
        }
    }
}
