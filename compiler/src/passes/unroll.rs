//! Full unrolling of small loops with a constant trip count. Handled shape (what the front
//! end and vars-to-SSA make of a `for` loop):
//!
//! ```text
//! %r = loop (%i = %init, ...) {
//!     <instructions>           // compute the exit condition
//!     if %exit { break ... }   // the only exit
//!     <body without jumps to this loop>
//!     continue ...
//! }
//! ```
//! The exit condition is evaluated at compile time, iteration by iteration, from the
//! parameters' constant initial values through the top-level ALU instructions.
//!
//! Policy (body size x trip count, as Mesa's NIR unroller decides for Intel, plus two rules
//! for what unrolling does not pay for): at most [`MAX_TRIPS`] iterations and
//! [`MAX_UNROLLED_INSTRS`] instructions unrolled. A loop with a workgroup barrier stays a
//! loop unless it runs at most once or unrolls to at most [`TINY_UNROLLED_INSTRS`]
//! instructions: each copy repeats the barrier's fence, gateway message and wait, and the
//! threads wait at the barrier whatever the loop costs. A loop with memory accesses stays a
//! loop when unrolling it would emit more than [`MAX_UNROLLED_MESSAGES`] of them: each
//! message is a SEND of its own, and the loop's counter and branch are few next to them.

use crate::builder::Builder;
use crate::eval::eval_alu_vec;
use crate::hash::HashMap;
use crate::ir::*;

/// Most iterations unrolled (Mesa's `max_unroll_iterations` for Intel), and most
/// instructions the unrolled loop may have.
const MAX_TRIPS: usize = 32;
const MAX_UNROLLED_INSTRS: usize = 512;
/// Most instructions a loop with a workgroup barrier may unroll to.
const TINY_UNROLLED_INSTRS: usize = 32;
/// Most memory accesses (loads, stores, atomics, image operations) an unrolled loop may
/// have.
const MAX_UNROLLED_MESSAGES: usize = 32;

/// Emits a copy of `src` through `b`, every defined value renamed to a fresh one (the
/// renaming is recorded in `map`, which also renames the sources).
fn clone_into(b: &mut Builder, src: &[Node], map: &mut HashMap<Value, Value>) {
    let m = |v: Value, map: &HashMap<Value, Value>| *map.get(&v).unwrap_or(&v);
    let fresh = |b: &mut Builder, v: Value, map: &mut HashMap<Value, Value>| {
        let n = b.new_value(b.ty(v));
        map.insert(v, n);
        n
    };
    for n in src {
        match n {
            Node::Instr(i) => {
                let mut op = i.op.clone();
                for s in op.srcs_mut() {
                    *s = m(*s, map);
                }
                match i.dst {
                    Some(d) => {
                        let nd = b.emit(b.ty(d), op);
                        map.insert(d, nd);
                    }
                    None => b.emit_void(op),
                }
            }
            Node::If(i) => {
                let cond = m(i.cond, map);
                let outer = b.take_block();
                clone_into(b, &i.then_, map);
                let then_ = b.take_block();
                clone_into(b, &i.else_, map);
                let else_ = b.put_block(outer);
                let results = i.results.iter().map(|r| fresh(b, *r, map)).collect();
                b.push(Node::If(Box::new(If {
                    cond,
                    then_,
                    else_,
                    results,
                })));
            }
            Node::Loop(l) => {
                let inits: Vec<Value> = l.params.iter().map(|p| m(p.1, map)).collect();
                let params = l
                    .params
                    .iter()
                    .zip(inits)
                    .map(|(p, i)| (fresh(b, p.0, map), i))
                    .collect();
                let outer = b.take_block();
                clone_into(b, &l.body, map);
                let body = b.put_block(outer);
                let results = l.results.iter().map(|r| fresh(b, *r, map)).collect();
                b.push(Node::Loop(Box::new(Loop {
                    params,
                    body,
                    results,
                })));
            }
            Node::Break(v) => b.push(Node::Break(v.iter().map(|x| m(*x, map)).collect())),
            Node::Continue(v) => b.push(Node::Continue(v.iter().map(|x| m(*x, map)).collect())),
            Node::Yield(v) => b.push(Node::Yield(v.iter().map(|x| m(*x, map)).collect())),
        }
    }
}

fn jumps_to_this_loop(b: &[Node]) -> usize {
    let mut n = 0;
    for x in b {
        match x {
            Node::Break(_) | Node::Continue(_) => n += 1,
            Node::If(i) => n += jumps_to_this_loop(&i.then_) + jumps_to_this_loop(&i.else_),
            _ => {}
        }
    }
    n
}

fn count_instrs(b: &[Node]) -> usize {
    b.iter()
        .map(|n| match n {
            Node::Instr(_) => 1,
            Node::If(i) => 1 + count_instrs(&i.then_) + count_instrs(&i.else_),
            Node::Loop(l) => 1 + count_instrs(&l.body),
            _ => 0,
        })
        .sum()
}

/// The numbers of workgroup barriers and of memory accesses in `b`, nested blocks included.
fn count_sync_and_messages(b: &[Node]) -> (usize, usize) {
    let mut n = (0, 0);
    for x in b {
        let (bar, msg) = match x {
            Node::Instr(i) => match &i.op {
                Op::Barrier { exec, .. } => (usize::from(exec.is_some()), 0),
                Op::Load { .. } | Op::Store { .. } | Op::Atomic { .. } | Op::Image(..) => (0, 1),
                _ => (0, 0),
            },
            Node::If(i) => {
                let (a, b) = count_sync_and_messages(&i.then_);
                let (c, d) = count_sync_and_messages(&i.else_);
                (a + c, b + d)
            }
            Node::Loop(l) => count_sync_and_messages(&l.body),
            _ => (0, 0),
        };
        n.0 += bar;
        n.1 += msg;
    }
    n
}

/// Whether unrolling `trips` iterations of `body` is worth it (see the module
/// documentation). The exit test runs once more than the rest of the body.
fn worth_unrolling(body: &[Node], trips: usize) -> bool {
    let unrolled = count_instrs(body) * (trips + 1);
    let (barriers, messages) = count_sync_and_messages(body);
    unrolled <= MAX_UNROLLED_INSTRS
        && (barriers == 0 || trips <= 1 || unrolled <= TINY_UNROLLED_INSTRS)
        && messages * trips <= MAX_UNROLLED_MESSAGES
}

/// Tries to unroll one loop; returns the replacement nodes.
fn try_unroll(l: &Loop, consts: &Consts, values: &mut Vec<Type>) -> Option<Block> {
    let body = &l.body;
    let exit_at = body.iter().position(|n| !matches!(n, Node::Instr(_)))?;
    let Node::If(exit) = &body[exit_at] else {
        return None;
    };
    if !exit.else_.is_empty() || exit.then_.len() != 1 || !exit.results.is_empty() {
        return None;
    }
    let Node::Break(break_args) = &exit.then_[0] else {
        return None;
    };
    let Some(Node::Continue(cont_args)) = body.last() else {
        return None;
    };
    let rest = &body[exit_at + 1..body.len() - 1];
    if jumps_to_this_loop(rest) != 0 {
        return None;
    }
    // Simulate the trip count.
    let mut env: HashMap<Value, Vec<u64>> = HashMap::default();
    for (p, init) in &l.params {
        if let Some(c) = consts.get(*init) {
            env.insert(*p, c.to_vec());
        }
    }
    let eval_top = |env: &mut HashMap<Value, Vec<u64>>, nodes: &[Node], values: &[Type]| {
        for n in nodes {
            if let Node::Instr(Instr {
                dst: Some(d), op, ..
            }) = n
            {
                let v = match op {
                    Op::Const(c) => Some(c.clone()),
                    Op::Alu(a, s)
                        if s.iter().all(|x| env.contains_key(x) || consts.contains(*x)) =>
                    {
                        let tys: Vec<Type> = s.iter().map(|x| values[x.0 as usize]).collect();
                        let vals: Vec<Vec<u64>> = s
                            .iter()
                            .filter_map(|x| {
                                env.get(x).map(Vec::as_slice).or_else(|| consts.get(*x))
                            })
                            .map(<[u64]>::to_vec)
                            .collect();
                        let refs: Vec<&[u64]> = vals.iter().map(|v| v.as_slice()).collect();
                        Some(eval_alu_vec(*a, values[d.0 as usize], &tys, &refs))
                    }
                    _ => None,
                };
                match v {
                    Some(v) => env.insert(*d, v),
                    None => env.remove(d),
                };
            }
        }
    };
    let mut trips = 0;
    loop {
        eval_top(&mut env, &body[..exit_at], values);
        let c = env
            .get(&exit.cond)
            .map(Vec::as_slice)
            .or_else(|| consts.get(exit.cond))?;
        if c[0] != 0 {
            break;
        }
        trips += 1;
        if trips > MAX_TRIPS {
            return None;
        }
        eval_top(&mut env, rest, values);
        let next: Vec<Option<Vec<u64>>> = cont_args
            .iter()
            .map(|a| {
                env.get(a)
                    .map(Vec::as_slice)
                    .or_else(|| consts.get(*a))
                    .map(<[u64]>::to_vec)
            })
            .collect();
        for ((p, _), v) in l.params.iter().zip(next) {
            match v {
                Some(v) => env.insert(*p, v),
                None => env.remove(p),
            };
        }
    }
    if !worth_unrolling(body, trips) {
        return None;
    }
    // Emit the iterations.
    let mut out = Vec::new();
    let mut b = Builder::new(values, &mut out);
    let mut cur: Vec<Value> = l.params.iter().map(|p| p.1).collect();
    let mut results = Vec::new();
    for t in 0..=trips {
        let mut map: HashMap<Value, Value> = l
            .params
            .iter()
            .map(|p| p.0)
            .zip(cur.iter().copied())
            .collect();
        clone_into(&mut b, &body[..exit_at], &mut map);
        if t == trips {
            results = break_args
                .iter()
                .map(|a| *map.get(a).unwrap_or(a))
                .collect();
            break;
        }
        clone_into(&mut b, rest, &mut map);
        cur = cont_args.iter().map(|a| *map.get(a).unwrap_or(a)).collect();
    }
    // Loop results become copies of the final break arguments.
    for (r, v) in l.results.iter().zip(results) {
        b.emit_to(*r, Op::Alu(AluOp::Mov, vec![v]));
    }
    Some(out)
}

fn walk(b: &mut Block, consts: &Consts, values: &mut Vec<Type>, changed: &mut bool) {
    let old = std::mem::take(b);
    // One allocation for the rebuilt block instead of a doubling series.
    b.reserve(old.len());
    for n in old {
        match n {
            Node::Loop(mut l) => {
                walk(&mut l.body, consts, values, changed);
                match try_unroll(&l, consts, values) {
                    Some(nodes) => {
                        *changed = true;
                        b.extend(nodes);
                    }
                    None => b.push(Node::Loop(l)),
                }
            }
            Node::If(mut i) => {
                walk(&mut i.then_, consts, values, changed);
                walk(&mut i.else_, consts, values, changed);
                b.push(Node::If(i));
            }
            other => b.push(other),
        }
    }
}

/// Unrolls small constant-trip loops. Returns true if any was unrolled.
pub fn opt_unroll(f: &mut Function) -> bool {
    let consts = f.consts();
    let mut changed = false;
    let mut body = std::mem::take(&mut f.body);
    walk(&mut body, &consts, &mut f.values, &mut changed);
    f.body = body;
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_shader;

    const SUM3: &str = "shader local_size 4 1 1 shared 0 local 0 push 0
        %0:i32 = sysval local_invocation_index
        %1:i32 = const 0
        %2:i32 = const 3
        %3:i32 = const 1
        %4:i32 = loop (%5:i32 = %1, %6:i32 = %1) {
            %7:b1 = ige %5, %2
            if %7 {
                break %6
            }
            %8:i32 = iadd %6, %0
            %9:i32 = iadd %5, %3
            continue %9, %8
        }
        %10:i32 = const 4
        %11:i32 = imul %0, %10
        store ssbo[0] %11, %4 align 4";

    #[test]
    fn three_trip_loop_is_unrolled_and_keeps_results() {
        let mut s = parse_shader(SUM3).unwrap();
        assert!(opt_unroll(&mut s.func));
        crate::validate::validate(&s.func).unwrap();
        let mut loops = 0;
        s.func
            .for_each_node(&mut |n| loops += usize::from(matches!(n, Node::Loop(_))));
        assert_eq!(loops, 0, "{}", s.func);
        let mut mem = crate::interp::Memory::default();
        mem.ssbo.insert(0, vec![0; 16]);
        crate::interp::run(&s, [1, 1, 1], 4, &mut mem).unwrap();
        let out: Vec<u32> = mem.ssbo[&0]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(out, vec![0, 3, 6, 9]);
    }

    #[test]
    fn loop_with_unknown_bound_is_kept() {
        let text = SUM3.replace("%2:i32 = const 3", "%2:i32 = load ssbo[0] %1 align 4");
        let mut s = parse_shader(&text).unwrap();
        assert!(!opt_unroll(&mut s.func));
    }

    #[test]
    fn long_loop_is_kept() {
        let text = SUM3.replace("%2:i32 = const 3", "%2:i32 = const 1000");
        let mut s = parse_shader(&text).unwrap();
        assert!(!opt_unroll(&mut s.func));
    }

    fn loops_after_unroll(text: &str) -> usize {
        let mut s = parse_shader(text).unwrap();
        opt_unroll(&mut s.func);
        crate::validate::validate(&s.func).unwrap();
        let mut loops = 0;
        s.func
            .for_each_node(&mut |n| loops += usize::from(matches!(n, Node::Loop(_))));
        loops
    }

    /// SUM3 with a workgroup barrier in the body and `trips` iterations.
    fn with_barrier(trips: u32) -> String {
        SUM3.replace("%2:i32 = const 3", &format!("%2:i32 = const {trips}"))
            .replace(
                "%9:i32 = iadd %5, %3",
                "control_barrier workgroup workgroup 0x108\n            %9:i32 = iadd %5, %3",
            )
    }

    #[test]
    fn loop_with_a_barrier_stays_a_loop_unless_it_runs_once() {
        assert_eq!(loops_after_unroll(&with_barrier(8)), 1);
        assert_eq!(loops_after_unroll(&with_barrier(1)), 0);
        // The same loop without the barrier is unrolled.
        assert_eq!(
            loops_after_unroll(&SUM3.replace("%2:i32 = const 3", "%2:i32 = const 8")),
            0
        );
    }

    #[test]
    fn thirty_two_trips_are_unrolled_but_not_thirty_three() {
        let n = |t: u32| SUM3.replace("%2:i32 = const 3", &format!("%2:i32 = const {t}"));
        assert_eq!(loops_after_unroll(&n(32)), 0);
        assert_eq!(loops_after_unroll(&n(33)), 1);
    }

    #[test]
    fn loop_with_many_memory_accesses_stays_a_loop() {
        // Two loads per iteration: 16 iterations unroll to 32 loads, 17 to 34.
        let load = |t: u32, loads: usize| {
            let l = (0..loads)
                .map(|k| format!("%{}:i32 = load ssbo[1] %5 align 4\n", 20 + k))
                .collect::<String>();
            SUM3.replace("%2:i32 = const 3", &format!("%2:i32 = const {t}"))
                .replace("%8:i32 = iadd %6, %0", &format!("{l}%8:i32 = iadd %6, %0"))
        };
        assert_eq!(loops_after_unroll(&load(16, 2)), 0);
        assert_eq!(loops_after_unroll(&load(17, 2)), 1);
    }
}
