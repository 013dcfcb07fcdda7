//! Variables to SSA on the structured IR: a walk that carries the current value of every
//! variable; an `if` that leaves a variable different in its arms gets a result (yielded by
//! each falling-through arm); a loop gets a parameter for every variable stored inside it
//! (passed by every `continue` and the initial value) and a result for it (passed by every
//! `break`). Variables start as zero (SPIR-V leaves them undefined).

use crate::builder::Builder;
use crate::hash::{HashMap, HashSet};
use crate::ir::*;

struct Ssa {
    values: Vec<Type>,
    vars: Vec<Type>,
    subst: HashMap<Value, Value>,
    /// Variables carried by each enclosing loop.
    loops: Vec<Vec<Var>>,
    /// The current value of every variable.
    cur: Vec<Value>,
    /// `(variable, previous value)` per assignment to `cur`: an arm or a loop body is undone
    /// in time proportional to the variables it assigned, not to all of them.
    log: Vec<(u32, Value)>,
    /// Variable slots read or written while merging and restoring variable states (a work
    /// counter for the test that pins the pass's growth with the program's size).
    work: u64,
}

/// Appends the variables stored in `b` to `out` in the order of their first store; `seen`
/// holds those already in `out`.
fn stored_vars(b: &Block, out: &mut Vec<Var>, seen: &mut HashSet<Var>, work: &mut u64) {
    for n in b {
        match n {
            Node::Instr(Instr {
                op: Op::StoreVar(v, _),
                ..
            }) => {
                *work += 1;
                if seen.insert(*v) {
                    out.push(*v);
                }
            }
            Node::If(i) => {
                stored_vars(&i.then_, out, seen, work);
                stored_vars(&i.else_, out, seen, work);
            }
            Node::Loop(l) => stored_vars(&l.body, out, seen, work),
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

    fn jump_args(&self, v: Vec<Value>) -> Vec<Value> {
        let mut v: Vec<Value> = v.into_iter().map(|x| self.s(x)).collect();
        if let Some(carried) = self.loops.last() {
            v.extend(carried.iter().map(|c| self.cur[c.0 as usize]));
        }
        v
    }

    fn set(&mut self, v: usize, x: Value) {
        self.log.push((v as u32, self.cur[v]));
        self.cur[v] = x;
        self.work += 1;
    }

    /// The variables assigned since the log had `mark` entries, in variable order, with
    /// their current values.
    fn changed_since(&mut self, mark: usize) -> Vec<(usize, Value)> {
        let mut c: Vec<(usize, Value)> = self.log[mark..]
            .iter()
            .map(|&(v, _)| (v as usize, self.cur[v as usize]))
            .collect();
        self.work += c.len() as u64;
        c.sort_unstable_by_key(|&(v, _)| v);
        c.dedup_by_key(|&mut (v, _)| v);
        c
    }

    /// Restores the variables' values from when the log had `mark` entries.
    fn rollback(&mut self, mark: usize) {
        self.work += (self.log.len() - mark) as u64;
        for (v, x) in self.log.drain(mark..).rev() {
            self.cur[v as usize] = x;
        }
    }

    fn block(&mut self, b: Block) -> Block {
        let mut out = Vec::with_capacity(b.len());
        for n in b {
            match n {
                Node::Instr(mut i) => {
                    for s in i.op.srcs_mut() {
                        *s = self.s(*s);
                    }
                    match i.op {
                        Op::LoadVar(v) => {
                            self.subst.insert(i.dst.unwrap(), self.cur[v.0 as usize]);
                        }
                        Op::StoreVar(v, x) => self.set(v.0 as usize, x),
                        _ => out.push(Node::Instr(i)),
                    }
                }
                Node::If(i) => {
                    let i = *i;
                    let cond = self.s(i.cond);
                    let mark = self.log.len();
                    let mut then_ = self.block(i.then_);
                    let tc = self.changed_since(mark);
                    self.rollback(mark);
                    let mut else_ = self.block(i.else_);
                    let ec = self.changed_since(mark);
                    self.rollback(mark);
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
                    // through left it unchanged) may be used directly after it. A variable
                    // neither arm assigned keeps its value.
                    let (mut ti, mut ei) = (tc.into_iter().peekable(), ec.into_iter().peekable());
                    loop {
                        let v = match (ti.peek(), ei.peek()) {
                            (Some(&(t, _)), Some(&(e, _))) => t.min(e),
                            (Some(&(t, _)), None) => t,
                            (None, Some(&(e, _))) => e,
                            (None, None) => break,
                        };
                        self.work += 1;
                        let before = self.cur[v];
                        let a = ti.next_if(|&(t, _)| t == v).map_or(before, |(_, x)| x);
                        let b = ei.next_if(|&(e, _)| e == v).map_or(before, |(_, x)| x);
                        // The value each arm yields; None for an arm that leaves by a jump.
                        let (ta, eb) = match (t_yields, e_yields) {
                            (true, true) if a == b => (None, None),
                            (true, true) => (Some(a), Some(b)),
                            (true, false) if a != before => (Some(a), None),
                            (false, true) if b != before => (None, Some(b)),
                            _ => (None, None),
                        };
                        if ta.is_none() && eb.is_none() {
                            let after = if t_yields {
                                a
                            } else if e_yields {
                                b
                            } else {
                                before
                            };
                            if after != before {
                                self.set(v, after);
                            }
                            continue;
                        }
                        let r = Builder::new(&mut self.values, &mut out).new_value(self.vars[v]);
                        results.push(r);
                        new_t.extend(ta);
                        new_e.extend(eb);
                        self.set(v, r);
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
                    stored_vars(
                        &l.body,
                        &mut carried,
                        &mut HashSet::default(),
                        &mut self.work,
                    );
                    let mut params: Vec<(Value, Value)> =
                        l.params.iter().map(|(p, i)| (*p, self.s(*i))).collect();
                    let mark = self.log.len();
                    for v in &carried {
                        let p = Builder::new(&mut self.values, &mut out)
                            .new_value(self.vars[v.0 as usize]);
                        params.push((p, self.cur[v.0 as usize]));
                        self.set(v.0 as usize, p);
                    }
                    self.loops.push(carried.clone());
                    let mut body = self.block(l.body);
                    self.loops.pop();
                    if !body.last().is_some_and(|n| n.is_jump()) && !carried.is_empty() {
                        body.push(Node::Continue(
                            carried.iter().map(|v| self.cur[v.0 as usize]).collect(),
                        ));
                    }
                    // Only carried variables were assigned in the body.
                    self.rollback(mark);
                    let mut results = l.results.clone();
                    for v in &carried {
                        let r = Builder::new(&mut self.values, &mut out)
                            .new_value(self.vars[v.0 as usize]);
                        results.push(r);
                        self.set(v.0 as usize, r);
                    }
                    out.push(Node::Loop(Box::new(Loop {
                        params,
                        body,
                        results,
                    })));
                }
                Node::Break(v) => {
                    let v = self.jump_args(v);
                    out.push(Node::Break(v));
                }
                Node::Continue(v) => {
                    let v = self.jump_args(v);
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
    vars_to_ssa_counted(f).is_some()
}

/// [`vars_to_ssa`], returning the work done (see `Ssa::work`), or None without variables.
fn vars_to_ssa_counted(f: &mut Function) -> Option<u64> {
    if f.vars.is_empty() {
        return None;
    }
    let body = std::mem::take(&mut f.body);
    let mut s = Ssa {
        values: std::mem::take(&mut f.values),
        vars: f.vars.clone(),
        subst: HashMap::default(),
        loops: vec![],
        cur: Vec::new(),
        log: Vec::new(),
        work: 0,
    };
    let mut prologue = Vec::new();
    for t in &f.vars {
        let zero = Builder::new(&mut s.values, &mut prologue).konst(*t, 0);
        s.cur.push(zero);
    }
    let mut out = s.block(body);
    prologue.append(&mut out);
    f.body = prologue;
    f.values = s.values;
    f.vars.clear();
    Some(s.work)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    /// `n` variables, each the counter of a loop of its own followed by an `if` that stores
    /// it, all inside one loop (the front end's shape: the whole body in a loop that carries
    /// every variable).
    fn counter_loops(n: usize) -> String {
        let mut s: String = (0..n).map(|k| format!("var ${k}:i32\n")).collect();
        s += "%0:b1 = const true\n%1:i32 = const 1\nloop {\n";
        for k in 0..n {
            let (x, y) = (2 + 2 * k, 3 + 2 * k);
            s += &format!(
                "loop {{\n%{x}:i32 = load_var ${k}\nif %0 {{\nbreak\n}}\n\
                 %{y}:i32 = iadd %{x}, %1\nstore_var ${k}, %{y}\n}}\n\
                 if %0 {{\nstore_var ${k}, %1\n}}\n"
            );
        }
        s + "break\n}\n"
    }

    /// The variable states are copied and merged per changed variable, not per variable of
    /// the function at every `if` and loop (that was quadratic in the number of variables:
    /// the scaling benchmark's `loops` shader has one per loop).
    #[test]
    fn work_grows_linearly_with_loops_and_variables() {
        let work = |n: usize| {
            let mut f = crate::parse::parse_function(&counter_loops(n)).expect("parses");
            let w = vars_to_ssa_counted(&mut f).expect("has variables");
            crate::validate::validate(&f).unwrap_or_else(|e| panic!("{e}\n{f}"));
            w
        };
        let (w1, w2) = (work(500), work(1000));
        assert!(
            w2 * 10 <= w1 * 23,
            "work {w1} at 500 variables, {w2} at 1000: more than linear"
        );
    }

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

/// Random structured programs over variables (nested `if`/`loop`, `break`/`continue` at any
/// depth, `if` results, loads and stores of variables, per-invocation stores to memory): each
/// is run on the IR interpreter before and after [`vars_to_ssa`], with 8 invocations that
/// diverge, and the output memory must be the same. The seeds are fixed; a failure prints the
/// seed and both programs. `FERRITE_SSA_FUZZ=N` runs N programs instead of the default count.
#[cfg(test)]
mod random_cfg {
    use super::vars_to_ssa;
    use crate::interp::{run, Memory};
    use crate::parse::parse_shader;
    use crate::validate::validate;
    use ferrite_isa::random::Rng;
    use std::fmt::Write;

    /// Programs in the default test run (about a second in a debug build).
    const DEFAULT_COUNT: u64 = 400;
    const LANES: u32 = 8;
    /// Output words per invocation; output stores cycle through them.
    const SLOTS: u32 = 16;
    /// Variables the program computes with; loop counters come after them.
    const DATA_VARS: usize = 3;

    struct Gen {
        rng: Rng,
        text: String,
        indent: usize,
        next_value: u32,
        /// Loop counter variables allocated so far.
        counters: usize,
        /// Statements left to emit.
        budget: u32,
        next_slot: u32,
        /// For each enclosing loop: whether it has a counter (false: the function wrapper).
        counted: Vec<bool>,
    }

    impl Gen {
        fn line(&mut self, s: &str) {
            for _ in 0..self.indent {
                self.text.push_str("    ");
            }
            self.text.push_str(s);
            self.text.push('\n');
        }
        fn value(&mut self, ty: &str, rhs: &str) -> String {
            let v = format!("%{}", self.next_value);
            self.next_value += 1;
            self.line(&format!("{v}:{ty} = {rhs}"));
            v
        }
        /// A `break` or a `continue` of the innermost loop; the function wrapper (a loop
        /// without a counter) only takes `break`, as the front end's does.
        fn jump(&mut self) -> &'static str {
            if self.counted.last() != Some(&true) || self.rng.chance(50, 100) {
                "break"
            } else {
                "continue"
            }
        }
        fn data_var(&mut self) -> usize {
            self.rng.below(DATA_VARS as u64) as usize
        }
        /// A fresh i32 computed from a variable, the invocation's input or a constant.
        fn expr(&mut self) -> String {
            let a = match self.rng.below(4) {
                0 => "%3".to_string(),
                1 => {
                    let k = self.rng.below(16);
                    self.value("i32", &format!("const {k}"))
                }
                _ => {
                    let u = self.data_var();
                    self.value("i32", &format!("load_var ${u}"))
                }
            };
            let k = self.rng.below(7) + 1;
            let k = self.value("i32", &format!("const {k}"));
            let op = ["iadd", "imul", "ixor", "iadd"][self.rng.below(4) as usize];
            self.value("i32", &format!("{op} {a}, {k}"))
        }
        /// A condition that differs between invocations most of the time.
        fn cond(&mut self) -> String {
            let x = self.expr();
            let three = self.value("i32", "const 3");
            let m = self.value("i32", &format!("iand {x}, {three}"));
            let k = self.rng.below(4);
            let k = self.value("i32", &format!("const {k}"));
            let op = ["ult", "ieq", "ine"][self.rng.below(3) as usize];
            self.value("b1", &format!("{op} {m}, {k}"))
        }
        fn output(&mut self) {
            let u = self.data_var();
            let x = self.value("i32", &format!("load_var ${u}"));
            let off = self.next_slot % SLOTS * 4;
            self.next_slot += 1;
            let off = self.value("i32", &format!("const {off}"));
            let addr = self.value("i32", &format!("iadd %5, {off}"));
            self.line(&format!("store ssbo[1] {addr}, {x} align 4"));
        }
        /// Emits a block; `loops` is the loop nesting depth. Returns true if the block ends
        /// in a jump.
        fn block(&mut self, loops: u32, depth: u32) -> bool {
            let n = self.rng.below(5) + 1;
            for _ in 0..n {
                if self.budget == 0 {
                    break;
                }
                self.budget -= 1;
                let pick = self.rng.below(100);
                if pick < 30 {
                    let v = self.data_var();
                    let x = self.expr();
                    self.line(&format!("store_var ${v}, {x}"));
                } else if pick < 45 {
                    self.output();
                } else if pick < 65 && depth < 4 {
                    self.if_(loops, depth);
                } else if pick < 80 && depth < 4 && loops < 3 {
                    self.loop_(loops, depth);
                } else if pick < 90 && loops > 0 {
                    let c = self.cond();
                    self.line(&format!("if {c} {{"));
                    self.indent += 1;
                    let jump = self.jump();
                    self.line(jump);
                    self.indent -= 1;
                    self.line("}");
                } else if loops > 0 && self.rng.chance(30, 100) {
                    let jump = self.jump();
                    self.line(jump);
                    return true;
                } else {
                    self.output();
                }
            }
            false
        }
        fn if_(&mut self, loops: u32, depth: u32) {
            let c = self.cond();
            // Sometimes the `if` has a result of its own (as the front end makes for a
            // SPIR-V OpPhi), which vars_to_ssa must keep next to the ones it adds.
            let result = self.rng.chance(25, 100).then(|| {
                self.next_value += 1;
                format!("%{}", self.next_value - 1)
            });
            match &result {
                Some(r) => self.line(&format!("{r}:i32 = if {c} {{")),
                None => self.line(&format!("if {c} {{")),
            }
            for arm in 0..2 {
                if arm == 1 {
                    self.line("} else {");
                }
                self.indent += 1;
                let jumps = self.block(loops, depth + 1);
                if result.is_some() && !jumps {
                    let x = self.expr();
                    self.line(&format!("yield {x}"));
                }
                self.indent -= 1;
            }
            self.line("}");
            if let Some(r) = result {
                let v = self.data_var();
                self.line(&format!("store_var ${v}, {r}"));
            }
        }
        fn loop_(&mut self, loops: u32, depth: u32) {
            let counter = DATA_VARS + self.counters;
            self.counters += 1;
            let zero = self.value("i32", "const 0");
            self.line(&format!("store_var ${counter}, {zero}"));
            self.line("loop {");
            self.indent += 1;
            let i = self.value("i32", &format!("load_var ${counter}"));
            let trips = self.rng.below(4) + 1;
            let trips = self.value("i32", &format!("const {trips}"));
            let done = self.value("b1", &format!("ige {i}, {trips}"));
            self.line(&format!("if {done} {{"));
            self.line("    break");
            self.line("}");
            let one = self.value("i32", "const 1");
            let next = self.value("i32", &format!("iadd {i}, {one}"));
            self.line(&format!("store_var ${counter}, {next}"));
            self.counted.push(true);
            let jumps = self.block(loops + 1, depth + 1);
            self.counted.pop();
            if !jumps && self.rng.chance(50, 100) {
                self.line("continue");
            }
            self.indent -= 1;
            self.line("}");
        }
    }

    /// The program of one seed, as IR text with variables.
    fn program(seed: u64) -> String {
        let mut g = Gen {
            rng: Rng::new(seed),
            text: String::new(),
            indent: 1,
            next_value: 6,
            counters: 0,
            budget: 24,
            next_slot: 0,
            counted: Vec::new(),
        };
        // Like the front end's function wrapper: a `break` at depth one is a `return`.
        let wrapped = g.rng.chance(50, 100);
        if wrapped {
            g.counted.push(false);
            g.line("loop {");
            g.indent += 1;
        }
        let jumps = g.block(u32::from(wrapped), 0);
        if wrapped {
            if !jumps {
                g.line("break");
            }
            g.indent -= 1;
            g.line("}");
        }
        let mut text =
            format!("shader local_size {LANES} 1 1 shared 0 local 0 push 0\nfn main {{\n");
        for v in 0..DATA_VARS + g.counters {
            writeln!(text, "    var ${v}:i32").unwrap();
        }
        // %3: the invocation's input; %5: the byte offset of its output words.
        writeln!(text, "    %0:i32 = sysval local_invocation_index").unwrap();
        writeln!(text, "    %1:i32 = const 4").unwrap();
        writeln!(text, "    %2:i32 = imul %0, %1").unwrap();
        writeln!(text, "    %3:i32 = load ssbo[0] %2 align 4").unwrap();
        writeln!(text, "    %4:i32 = const {}", SLOTS * 4).unwrap();
        writeln!(text, "    %5:i32 = imul %0, %4").unwrap();
        text.push_str(&g.text);
        text.push_str("}\n");
        text
    }

    fn memory(seed: u64) -> Memory {
        let mut rng = Rng::new(seed ^ 0x5eed);
        let input: Vec<u8> = (0..LANES)
            .flat_map(|_| (rng.below(64) as u32).to_le_bytes())
            .collect();
        let mut m = Memory::default();
        m.ssbo.insert(0, input);
        m.ssbo.insert(1, vec![0xaa; (LANES * SLOTS * 4) as usize]);
        m
    }

    fn check(seed: u64) {
        let text = program(seed);
        let mut shader = parse_shader(&text)
            .unwrap_or_else(|e| panic!("seed {seed}: generated IR does not parse: {e}\n{text}"));
        validate(&shader.func)
            .unwrap_or_else(|e| panic!("seed {seed}: generated IR is invalid: {e}\n{text}"));
        let mut before = memory(seed);
        run(&shader, [1, 1, 1], LANES, &mut before)
            .unwrap_or_else(|e| panic!("seed {seed}: interpreter (variables): {e}\n{text}"));
        vars_to_ssa(&mut shader.func);
        let ssa = shader.func.to_string();
        validate(&shader.func).unwrap_or_else(|e| {
            panic!("seed {seed}: vars_to_ssa output invalid: {e}\n{text}\n{ssa}")
        });
        assert!(
            shader.func.vars.is_empty() && !ssa.contains("_var "),
            "seed {seed}: variables left\n{ssa}"
        );
        let mut after = memory(seed);
        run(&shader, [1, 1, 1], LANES, &mut after)
            .unwrap_or_else(|e| panic!("seed {seed}: interpreter (SSA): {e}\n{ssa}"));
        let words = |m: &Memory| -> Vec<u32> {
            m.ssbo[&1]
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
        let (b, a) = (words(&before), words(&after));
        if let Some(k) = (0..b.len()).find(|&k| b[k] != a[k]) {
            panic!(
                "seed {seed}: invocation {} output word {}: {:#x} with variables, {:#x} after \
                 vars_to_ssa\ninput: {:?}\n{text}\n{ssa}",
                k as u32 / SLOTS,
                k as u32 % SLOTS,
                b[k],
                a[k],
                memory(seed).ssbo[&0],
            );
        }
    }

    /// The deepest nesting of `loop`s in IR text.
    fn loop_depth(text: &str) -> usize {
        let mut stack = Vec::new();
        let mut deepest = 0;
        for l in text.lines().map(str::trim) {
            if l.ends_with('{') && l != "} else {" && !l.starts_with("fn ") {
                stack.push(l.ends_with("loop {"));
                deepest = deepest.max(stack.iter().filter(|x| **x).count());
            } else if l == "}" {
                stack.pop();
            }
        }
        deepest
    }

    /// Whether some loop body in IR text ends without a `break` or `continue`.
    fn loop_falls_off_its_end(text: &str) -> bool {
        let mut stack = Vec::new();
        let mut prev = "";
        for l in text.lines().map(str::trim) {
            if l.ends_with('{') && l != "} else {" {
                stack.push(l.ends_with("loop {"));
            } else if l == "}" && stack.pop() == Some(true) && prev != "break" && prev != "continue"
            {
                return true;
            }
            prev = l;
        }
        false
    }

    /// A shape of program the pass must handle, and how to recognise it in IR text.
    type Shape = (&'static str, fn(&str) -> bool);

    const SHAPES: [Shape; 5] = [
        ("an if with a result", |t| t.contains("= if ")),
        ("a continue", |t| t.contains("continue")),
        ("a then-arm ending in break beside an else-arm", |t| {
            let l: Vec<&str> = t.lines().map(str::trim).collect();
            l.windows(2).any(|w| w == ["break", "} else {"])
        }),
        ("loops nested three deep", |t| loop_depth(t) >= 3),
        ("a loop body falling off its end", loop_falls_off_its_end),
    ];

    #[test]
    fn random_structured_programs_keep_their_results() {
        let count = std::env::var("FERRITE_SSA_FUZZ")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(DEFAULT_COUNT);
        // How many programs have each shape; in the default run every one must occur, so the
        // generator cannot drift away from what it is here to test.
        let mut seen = [0u32; 5];
        for seed in 0..count {
            let text = program(seed);
            for (k, (_, has)) in SHAPES.iter().enumerate() {
                seen[k] += u32::from(has(&text));
            }
            check(seed);
        }
        for (k, (what, _)) in SHAPES.iter().enumerate() {
            println!("{what}: {} of {count} programs", seen[k]);
            assert!(
                count < DEFAULT_COUNT || seen[k] > 0,
                "no program has {what}"
            );
        }
    }
}
