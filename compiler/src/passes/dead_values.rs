//! Dead loop-carried values: loop parameters, loop results and `if` results whose values reach
//! no side effect.
//!
//! `opt_dce` counts uses, so a loop parameter read only by the `continue` that feeds it (or a
//! loop result read only by an enclosing loop's `continue`, whose parameter feeds the inner
//! loop's initial value) keeps itself alive. Front ends produce such cycles for every
//! variable declared at function scope and assigned inside a loop: after `vars_to_ssa` the
//! variable is a loop parameter even when each iteration overwrites it before reading it.
//! In the back end each such parameter is a register live across the whole loop plus a copy
//! per `continue` and `break` (an f64x4 is eight GRFs at SIMD16), which is what kept the
//! double-precision n-body kernel at SIMD8.
//!
//! The pass marks live what a side effect (store, atomic, barrier, subgroup operation) or a
//! branch condition needs, following instruction sources, `if` results to the values their
//! arms yield, loop results to the values their `break`s pass and loop parameters to their
//! initial values and the values their `continue`s pass; everything else among parameters
//! and results is removed (with its argument in every jump), and `opt_dce` then removes the
//! instructions left unused. `FERRITE_DEBUG=nodeadvalues` skips the pass.
//! Linear in the size of the function.

use super::opt::{edit_jumps, opt_dce};
use crate::ir::*;

/// The innermost loop around a node: its parameters and results.
#[derive(Clone, Copy)]
struct LoopCtx<'a> {
    params: &'a [(Value, Value)],
    results: &'a [Value],
}

/// The values each value needs, in two flat arrays (compressed rows): the needs of value `v`
/// are `to[start[v]..start[v + 1]]`. One allocation per array for the whole function
/// instead of a `Vec` per value, which was one heap block per value of the program.
struct Deps {
    start: Vec<u32>,
    to: Vec<Value>,
}

impl Deps {
    /// Builds the rows of `n` values from (value, needed value) edges, each row in the
    /// edges' order.
    fn new(n: usize, edges: &[(Value, Value)]) -> Deps {
        let mut start = vec![0u32; n + 1];
        for (d, _) in edges {
            start[d.0 as usize + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut to = vec![Value(0); edges.len()];
        // Fill each row from its end backwards, leaving `start` pointing at the row starts.
        for (d, a) in edges.iter().rev() {
            let k = d.0 as usize + 1;
            start[k] -= 1;
            to[start[k] as usize] = *a;
        }
        // `start[k + 1]` now holds row k's start: shift the table down by one.
        start.remove(0);
        start.push(to.len() as u32);
        Deps { start, to }
    }

    fn of(&self, v: usize) -> &[Value] {
        &self.to[self.start[v] as usize..self.start[v + 1] as usize]
    }

    /// Bytes of the two arrays (pinned by a test: 4 per value and 4 per edge).
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        (self.start.capacity() + self.to.capacity()) * 4
    }
}

/// Records each dependency as an edge (a value, a value it needs) in `deps`, and pushes the
/// values needed by side effects and branches (`roots`).
fn collect(
    b: &Block,
    lp: Option<LoopCtx<'_>>,
    yields_to: Option<&[Value]>,
    deps: &mut Vec<(Value, Value)>,
    roots: &mut Vec<Value>,
) {
    let pair = |deps: &mut Vec<(Value, Value)>, defs: &[Value], args: &[Value]| {
        deps.extend(defs.iter().copied().zip(args.iter().copied()));
    };
    for n in b {
        match n {
            Node::Instr(i) => match i.dst {
                Some(d) if !i.op.has_side_effects() && !matches!(i.op, Op::Atomic { .. }) => {
                    deps.extend(i.op.srcs_iter().map(|x| (d, x)))
                }
                _ => roots.extend(i.op.srcs_iter()),
            },
            Node::If(i) => {
                roots.push(i.cond);
                collect(&i.then_, lp, Some(&i.results), deps, roots);
                collect(&i.else_, lp, Some(&i.results), deps, roots);
            }
            Node::Loop(l) => {
                deps.extend(l.params.iter().copied());
                let inner = LoopCtx {
                    params: &l.params,
                    results: &l.results,
                };
                collect(&l.body, Some(inner), None, deps, roots);
            }
            Node::Break(args) => {
                if let Some(lp) = lp {
                    pair(deps, lp.results, args);
                }
            }
            Node::Continue(args) => {
                if let Some(lp) = lp {
                    deps.extend(lp.params.iter().zip(args).map(|((p, _), a)| (*p, *a)));
                }
            }
            Node::Yield(args) => {
                if let Some(results) = yields_to {
                    pair(deps, results, args);
                }
            }
        }
    }
}

/// Removes the parameters and results `live` does not hold, with their jump arguments.
fn sweep(b: &mut Block, live: &[bool]) -> bool {
    let mut changed = false;
    for n in b.iter_mut() {
        match n {
            Node::If(i) => {
                for k in (0..i.results.len()).rev() {
                    if !live[i.results[k].0 as usize] {
                        i.results.remove(k);
                        for arm in [&mut i.then_, &mut i.else_] {
                            if let Some(Node::Yield(y)) = arm.last_mut() {
                                if k < y.len() {
                                    y.remove(k);
                                }
                            }
                        }
                        changed = true;
                    }
                }
                changed |= sweep(&mut i.then_, live);
                changed |= sweep(&mut i.else_, live);
            }
            Node::Loop(l) => {
                // Descending indices, each jump edited once.
                let dead: Vec<usize> = (0..l.results.len())
                    .rev()
                    .filter(|&k| !live[l.results[k].0 as usize])
                    .collect();
                changed |= remove_slots(&mut l.results, &dead, &mut l.body, true);
                let dead: Vec<usize> = (0..l.params.len())
                    .rev()
                    .filter(|&k| !live[l.params[k].0 .0 as usize])
                    .collect();
                changed |= remove_slots(&mut l.params, &dead, &mut l.body, false);
                changed |= sweep(&mut l.body, live);
            }
            Node::Instr(_) | Node::Break(_) | Node::Continue(_) | Node::Yield(_) => {}
        }
    }
    changed
}

/// Removes the entries at `dead` (descending indices) from a loop's results (`is_break`) or
/// parameters, and the same operands from the breaks or continues in its `body` that carry
/// them; true if there were any.
fn remove_slots<T>(list: &mut Vec<T>, dead: &[usize], body: &mut Block, is_break: bool) -> bool {
    if dead.is_empty() {
        return false;
    }
    for &k in dead {
        list.remove(k);
    }
    edit_jumps(body, is_break, &mut |v| {
        for &k in dead {
            if k < v.len() {
                v.remove(k);
            }
        }
    });
    true
}

/// Removes loop parameters, loop results and `if` results that reach no side effect, then
/// the instructions that computed only them (see the module documentation).
pub fn opt_dead_values(f: &mut Function) -> bool {
    let n = f.values.len();
    let mut edges = Vec::new();
    let mut roots = Vec::new();
    collect(&f.body, None, None, &mut edges, &mut roots);
    let deps = Deps::new(n, &edges);
    drop(edges);
    let mut live = vec![false; n];
    while let Some(v) = roots.pop() {
        let k = v.0 as usize;
        if live[k] {
            continue;
        }
        live[k] = true;
        roots.extend(deps.of(k).iter().copied().filter(|d| !live[d.0 as usize]));
    }
    let changed = sweep(&mut f.body, &live);
    if changed {
        opt_dce(f);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    /// The flat rows hold each value's needs in the order they were recorded (the order
    /// the per-value `Vec`s had), in exactly 4 bytes per value and per edge.
    #[test]
    fn dependency_rows_are_flat_and_keep_the_edge_order() {
        let seed = 0x5eed_u64;
        let mut x = seed;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for n in [1usize, 7, 100, 2000] {
            let edges: Vec<(Value, Value)> = (0..3 * n)
                .map(|_| (Value(next(n as u64) as u32), Value(next(n as u64) as u32)))
                .collect();
            let mut want = vec![Vec::new(); n];
            for (d, a) in &edges {
                want[d.0 as usize].push(*a);
            }
            let deps = Deps::new(n, &edges);
            for (v, w) in want.iter().enumerate() {
                assert_eq!(deps.of(v), &w[..], "seed {seed:#x}, {n} values, value {v}");
            }
            assert_eq!(deps.heap_bytes(), 4 * (n + 1 + edges.len()), "{n} values");
        }
        assert_eq!(
            Deps::new(0, &[]).heap_bytes(),
            4,
            "no values: the end of the table"
        );
    }

    #[test]
    fn parameter_read_only_by_its_continue_is_removed() {
        check_pass(
            opt_dead_values,
            "%0:i32 = const 0
            %1:i32 = const 1
            %2:i32 = const 10
            loop (%3:i32 = %0, %4:i32 = %0) {
                %5:b32 = uge %3, %2
                if %5 {
                    break
                }
                %6:i32 = iadd %4, %1
                store ssbo[0] %3, %3 align 4
                %7:i32 = iadd %3, %1
                continue %7, %6
            }",
            "%0:i32 = const 0
            %1:i32 = const 1
            %2:i32 = const 10
            loop (%3:i32 = %0) {
                %5:b32 = uge %3, %2
                if %5 {
                    break
                }
                store ssbo[0] %3, %3 align 4
                %7:i32 = iadd %3, %1
                continue %7
            }",
        );
    }

    #[test]
    fn cycle_through_nested_loops_is_removed() {
        // %4 (outer) feeds %7 (inner), whose last value leaves as %6 and comes back as the
        // outer continue's argument: read by nothing else.
        check_pass(
            opt_dead_values,
            "%0:i32 = const 0
            %1:i32 = const 1
            %2:i32 = const 4
            loop (%3:i32 = %0, %4:i32 = %0) {
                %5:b32 = uge %3, %2
                if %5 {
                    break
                }
                %6:i32 = loop (%7:i32 = %4, %8:i32 = %0) {
                    %9:b32 = uge %8, %2
                    if %9 {
                        break %7
                    }
                    %10:i32 = imul %8, %8
                    store ssbo[0] %8, %3 align 4
                    %11:i32 = iadd %8, %1
                    continue %10, %11
                }
                %12:i32 = iadd %3, %1
                continue %12, %6
            }",
            "%0:i32 = const 0
            %1:i32 = const 1
            %2:i32 = const 4
            loop (%3:i32 = %0) {
                %5:b32 = uge %3, %2
                if %5 {
                    break
                }
                loop (%8:i32 = %0) {
                    %9:b32 = uge %8, %2
                    if %9 {
                        break
                    }
                    store ssbo[0] %8, %3 align 4
                    %11:i32 = iadd %8, %1
                    continue %11
                }
                %12:i32 = iadd %3, %1
                continue %12
            }",
        );
    }

    #[test]
    fn values_reaching_a_store_through_results_stay() {
        let src = "%0:i32 = const 0
            %1:i32 = const 1
            %2:i32 = const 4
            %3:i32 = loop (%4:i32 = %0, %5:i32 = %0) {
                %6:b32 = uge %4, %2
                %7:i32 = if %6 {
                    yield %5
                } else {
                    %8:i32 = iadd %5, %1
                    yield %8
                }
                if %6 {
                    break %7
                }
                %9:i32 = iadd %4, %1
                continue %9, %7
            }
            store ssbo[0] %0, %3 align 4";
        check_pass(opt_dead_values, src, src);
    }
}
