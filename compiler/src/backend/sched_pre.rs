//! Scheduling for register pressure before allocation (the idea of brw's pre-allocation
//! scheduling modes that minimise register pressure, run when the default order would spill).
//!
//! After SIMD-width lowering, a SIMD32 instruction becomes two SIMD16 halves placed one after
//! the other, so the two halves of every value are live at the same time: a kernel whose
//! values fit the register file at SIMD16 needs twice as many GRFs at SIMD32. The same holds
//! for the two SIMD8 halves of 64-bit code at SIMD16. Nothing forces that interleaving: the
//! halves are independent computations on disjoint channels. This pass reorders each basic
//! block bottom-up, choosing at every step the ready instruction that makes the fewest GRFs
//! live above it, so a dependence chain is finished before another one is started, and the
//! values of one half die before the other half's are loaded.
//!
//! Dependences are those of the virtual registers (any two references of one register where
//! one writes are ordered; per register, not per byte), of the fixed GRFs, of the flag
//! register, and of messages: a message that only reads memory (loads, sampling) may pass
//! another such message, every other pair of messages keeps its order. Control flow, waits,
//! barriers and the end of thread delimit blocks, as for the scheduler after allocation.
//!
//! The pass runs only where the program needs more GRFs than the file has ([`crate::backend`]),
//! and the new order is kept only when it lowers the most GRFs live at one instruction
//! ([`ra::max_pressure`]): elsewhere program order (and the latency scheduling after
//! allocation) is left as it was.

use super::lir::*;
use super::ra;
use super::sched::is_barrier;

/// Blocks longer than this keep their order: the ready list is scanned at every step, and a
/// block of several thousand instructions whose every value is live at once is rare.
pub const MAX_BLOCK: usize = 4096;

/// The resources an instruction reads and writes: virtual registers as their number, fixed
/// GRFs as `nvregs + GRF`, the flag as `nvregs + 256`.
fn resources(i: &LInst, nvregs: usize) -> (Vec<usize>, Vec<usize>) {
    let flag = nvregs + 256;
    let mut r = Vec::new();
    let mut w = Vec::new();
    let add = |o: &Opnd, len: Option<u32>, out: &mut Vec<usize>| match o.base {
        Base::V(v) => out.push(v as usize),
        Base::G(g) => {
            let start = u32::from(g) * 32 + o.off;
            let span = len.unwrap_or_else(|| o.span(i.exec as u32)).max(1);
            for x in start / 32..=(start + span - 1) / 32 {
                out.push(nvregs + x.min(255) as usize);
            }
        }
        // An ARF source (ce0) depends only on the control flow, which bounds the
        // scheduling region.
        Base::Null | Base::Imm(_) | Base::Arf(_) => {}
    };
    for (k, s) in i.srcs.iter().enumerate() {
        add(s, i.message_src_regs(k).map(|n| n * 32), &mut r);
    }
    let rlen = match i.op {
        LOp::Send { rlen, .. } => Some(u32::from(rlen) * 32),
        _ => None,
    };
    if rlen != Some(0) {
        add(&i.dst, rlen, &mut w);
    }
    if i.reads_flag() {
        r.push(flag);
    }
    if i.writes_flag() {
        w.push(flag);
    }
    r.sort_unstable();
    r.dedup();
    w.sort_unstable();
    w.dedup();
    (r, w)
}

/// Predecessors of each instruction of a block (indices into the block).
fn dependences(block: &[LInst], nvregs: usize) -> Vec<Vec<usize>> {
    let n = block.len();
    let nres = nvregs + 257;
    let mut last_w: Vec<Option<usize>> = vec![None; nres];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nres];
    // Messages: the last one that is not a pure read, and the pure reads since it.
    let mut last_other: Option<usize> = None;
    let mut reads_since: Vec<usize> = Vec::new();
    let mut preds = vec![Vec::new(); n];
    for (b, i) in block.iter().enumerate() {
        let (r, w) = resources(i, nvregs);
        let p: &mut Vec<usize> = &mut preds[b];
        for &x in &r {
            p.extend(last_w[x]);
        }
        for &x in &w {
            p.extend(last_w[x]);
            p.append(&mut readers[x]);
        }
        if i.op.is_message() {
            p.extend(last_other);
            if i.op.is_pure_read() {
                reads_since.push(b);
            } else {
                p.append(&mut reads_since);
                last_other = Some(b);
            }
        }
        p.sort_unstable();
        p.dedup();
        p.retain(|&a| a != b);
        for &x in &r {
            readers[x].push(b);
        }
        for &x in &w {
            last_w[x] = Some(b);
        }
    }
    preds
}

/// Reorders every block of `prog` for register pressure; keeps the new order only if the
/// most GRFs live at one instruction went down. Returns true if the program changed.
pub fn schedule_for_pressure(prog: &mut Program) -> bool {
    let before = ra::max_pressure(prog);
    let iv = ra::intervals(prog);
    let sizes: Vec<u32> = prog.vregs.iter().map(|v| v.regs()).collect();
    let old = prog.insts.clone();
    let mut out = Vec::with_capacity(old.len());
    let mut start = 0;
    let mut changed = false;
    for k in 0..=old.len() {
        if k == old.len() || is_barrier(&old[k]) {
            let order = if k - start > 1 && k - start <= MAX_BLOCK {
                order_block(&old[start..k], start, &iv, &sizes)
            } else {
                (0..k - start).collect()
            };
            changed |= order.iter().enumerate().any(|(a, &b)| a != b);
            out.extend(order.into_iter().map(|j| old[start + j].clone()));
            if k < old.len() {
                out.push(old[k].clone());
            }
            start = k + 1;
        }
    }
    if !changed {
        return false;
    }
    prog.insts = out;
    let after = ra::max_pressure(prog);
    log::debug!("pressure scheduling: {before} -> {after} GRFs live at most");
    if after >= before {
        prog.insts = old;
        return false;
    }
    true
}

/// Bottom-up list scheduling of one block (`block` starts at instruction `first` of the
/// program whose live intervals are `iv`): returns the new order as indices into `block`.
///
/// A register is live below the scheduled part when it is live after the block or one of its
/// references is already scheduled; scheduling an instruction makes its registers live above
/// it unless that was their last unscheduled reference and they are not live into the block.
/// Each step takes the ready instruction (all its dependants scheduled) with the smallest
/// growth of live GRFs, the latest in program order among equals (so an order that gains
/// nothing is program order).
pub fn order_block(
    block: &[LInst],
    first: usize,
    iv: &[Option<(usize, usize)>],
    sizes: &[u32],
) -> Vec<usize> {
    let n = block.len();
    let nvregs = sizes.len();
    let end = first + n;
    let preds = dependences(block, nvregs);
    let mut nsucc = vec![0usize; n];
    for p in &preds {
        for &a in p {
            nsucc[a] += 1;
        }
    }
    // Registers each instruction references, once each.
    let refs: Vec<Vec<u32>> = block
        .iter()
        .map(|i| {
            let mut v: Vec<u32> = std::iter::once(&i.dst)
                .chain(i.srcs.iter())
                .filter_map(|o| o.vreg())
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    let mut remaining = vec![0u32; nvregs];
    for r in &refs {
        for &v in r {
            remaining[v as usize] += 1;
        }
    }
    let live_in = |v: u32| iv[v as usize].is_some_and(|x| x.0 < first);
    let mut live = vec![false; nvregs];
    for r in &refs {
        for &v in r {
            live[v as usize] = iv[v as usize].is_some_and(|x| x.1 >= end);
        }
    }
    let growth = |k: usize, live: &[bool], remaining: &[u32]| -> i64 {
        refs[k]
            .iter()
            .map(|&v| {
                let above = remaining[v as usize] > 1 || live_in(v);
                let s = i64::from(sizes[v as usize]);
                match (live[v as usize], above) {
                    (false, true) => s,
                    (true, false) => -s,
                    _ => 0,
                }
            })
            .sum()
    };
    let mut ready: Vec<usize> = (0..n).filter(|&k| nsucc[k] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while !ready.is_empty() {
        let (at, _) = ready
            .iter()
            .enumerate()
            .min_by_key(|&(_, &k)| (growth(k, &live, &remaining), std::cmp::Reverse(k)))
            .expect("ready instructions");
        let k = ready.swap_remove(at);
        for &v in &refs[k] {
            remaining[v as usize] -= 1;
            live[v as usize] = remaining[v as usize] > 0 || live_in(v);
        }
        for &a in &preds[k] {
            nsucc[a] -= 1;
            if nsucc[a] == 0 {
                ready.push(a);
            }
        }
        order.push(k);
    }
    debug_assert_eq!(order.len(), n, "acyclic dependences");
    order.reverse();
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrite_isa::{CondMod, Opcode, Type};

    fn text(p: &Program) -> String {
        p.insts.iter().map(|i| format!("{i}\n")).collect()
    }

    fn read(b: &mut Builder, dst: Opnd, addr: Opnd) {
        b.inst(
            LOp::UntypedRead {
                surf: Surface::Bti(1),
                comps: 1,
                comp_stride: 64,
            },
            dst,
            vec![addr],
        );
    }

    fn write(b: &mut Builder, addr: Opnd, data: Opnd) {
        b.inst(
            LOp::UntypedWrite {
                surf: Surface::Bti(1),
                comps: 1,
                comp_stride: 64,
            },
            Opnd::null(Type::UD),
            vec![addr, data],
        );
    }

    /// Two SIMD16 halves of `x0 + x1 + x2` from three loads each, interleaved as SIMD-width
    /// lowering leaves them: every load of both halves is live before the first add. After
    /// scheduling, the first half is done (its sum waiting for its store, which may not
    /// pass the second half's loads) before the second half's address and loads.
    #[test]
    fn interleaved_halves_are_scheduled_one_after_the_other() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let addr = [b.vreg(Type::UD, 1), b.vreg(Type::UD, 1)];
        let x: Vec<[Opnd; 2]> = (0..3)
            .map(|_| [b.vreg(Type::F, 1), b.vreg(Type::F, 1)])
            .collect();
        let sum = [b.vreg(Type::F, 1), b.vreg(Type::F, 1)];
        for h in 0..2 {
            b.at(16, h as u8 * 16, false).mov(addr[h], Opnd::ud(0));
        }
        for xs in &x {
            for h in 0..2 {
                read(&mut b.at(16, h as u8 * 16, false), xs[h], addr[h]);
            }
        }
        for h in 0..2 {
            let mut b = b.at(16, h as u8 * 16, false);
            b.alu2(Opcode::Add, sum[h], x[0][h], x[1][h]);
            b.alu2(Opcode::Add, sum[h], sum[h], x[2][h]);
        }
        for h in 0..2 {
            write(&mut b.at(16, h as u8 * 16, false), addr[h], sum[h]);
        }
        let before = ra::max_pressure(&p);
        assert!(schedule_for_pressure(&mut p), "{}", text(&p));
        assert_eq!(
            text(&p),
            "mov(16@0) v0+0<1>:UD, 0x0:UD\n\
             UntypedRead { surf: Bti(1), comps: 1, comp_stride: 64 }(16@0) v2+0<1>:F, v0+0<1>:UD\n\
             UntypedRead { surf: Bti(1), comps: 1, comp_stride: 64 }(16@0) v4+0<1>:F, v0+0<1>:UD\n\
             add(16@0) v8+0<1>:F, v2+0<1>:F, v4+0<1>:F\n\
             UntypedRead { surf: Bti(1), comps: 1, comp_stride: 64 }(16@0) v6+0<1>:F, v0+0<1>:UD\n\
             add(16@0) v8+0<1>:F, v8+0<1>:F, v6+0<1>:F\n\
             mov(16@16) v1+0<1>:UD, 0x0:UD\n\
             UntypedRead { surf: Bti(1), comps: 1, comp_stride: 64 }(16@16) v3+0<1>:F, v1+0<1>:UD\n\
             UntypedRead { surf: Bti(1), comps: 1, comp_stride: 64 }(16@16) v5+0<1>:F, v1+0<1>:UD\n\
             UntypedRead { surf: Bti(1), comps: 1, comp_stride: 64 }(16@16) v7+0<1>:F, v1+0<1>:UD\n\
             UntypedWrite { surf: Bti(1), comps: 1, comp_stride: 64 }(16@0) null<1>:UD, v0+0<1>:UD, v8+0<1>:F\n\
             add(16@16) v9+0<1>:F, v3+0<1>:F, v5+0<1>:F\n\
             add(16@16) v9+0<1>:F, v9+0<1>:F, v7+0<1>:F\n\
             UntypedWrite { surf: Bti(1), comps: 1, comp_stride: 64 }(16@16) null<1>:UD, v1+0<1>:UD, v9+0<1>:F\n"
        );
        let after = ra::max_pressure(&p);
        assert!(after < before, "{before} -> {after}");
    }

    /// A load may not pass a store (nor a store a load): only loads are reordered among
    /// themselves, whatever it would gain.
    #[test]
    fn loads_never_pass_stores() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let addr = b.vreg(Type::UD, 1);
        let x = b.vreg(Type::F, 1);
        let y = b.vreg(Type::F, 1);
        b.mov(addr, Opnd::ud(0));
        read(&mut b, x, addr);
        write(&mut b, addr, x);
        read(&mut b, y, addr);
        write(&mut b, addr, y);
        let block = p.insts.clone();
        let preds = dependences(&block, p.vregs.len());
        assert_eq!(
            preds[3],
            vec![0, 2],
            "the second load waits for the first store"
        );
        assert_eq!(preds[4], vec![0, 2, 3]);
        let q = dependences(&block[1..2], p.vregs.len());
        assert!(q[0].is_empty());
    }

    /// A program whose order is already the best keeps it (the pass reports no change).
    #[test]
    fn program_order_kept_when_nothing_is_gained() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let a = b.vreg(Type::F, 1);
        let c = b.vreg(Type::F, 1);
        b.mov(a, Opnd::imm(Type::F, 0));
        b.alu2(Opcode::Add, c, a, a);
        b.alu2(Opcode::Mul, c, c, c);
        let before = text(&p);
        assert!(!schedule_for_pressure(&mut p));
        assert_eq!(text(&p), before);
    }

    use crate::testing::Rng;

    /// Whether `a` (earlier in program order) and `b` must keep their order: a register one
    /// of them writes and the other references, the flag, or two messages that are not both
    /// pure reads. The pairwise form of the rule [`dependences`] builds as a graph.
    fn conflict(a: &LInst, b: &LInst, nvregs: usize) -> bool {
        let (ra, wa) = resources(a, nvregs);
        let (rb, wb) = resources(b, nvregs);
        let meets = |x: &[usize], y: &[usize]| x.iter().any(|r| y.contains(r));
        meets(&wa, &rb)
            || meets(&wa, &wb)
            || meets(&ra, &wb)
            || (a.op.is_message()
                && b.op.is_message()
                && !(a.op.is_pure_read() && b.op.is_pure_read()))
    }

    #[test]
    fn random_blocks_keep_every_dependence() {
        for seed in 1..150u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let mut p = Program::default();
            let nv = 3 + rng.next(10);
            for _ in 0..nv {
                p.new_vreg(32 * (1 + rng.next(2)));
            }
            let n = 2 + rng.next(40) as usize;
            for _ in 0..n {
                let v = |r: &mut Rng| Opnd::v(r.next(nv), Type::F);
                let mut b = Builder::new(&mut p, 8);
                match rng.next(6) {
                    0 => read(&mut b, v(&mut rng), v(&mut rng)),
                    1 => write(&mut b, v(&mut rng), v(&mut rng)),
                    2 => {
                        let (d, s) = (v(&mut rng), v(&mut rng));
                        b.cmp(CondMod::L, d, s, Opnd::imm(Type::F, 0));
                    }
                    3 => {
                        let (d, s) = (v(&mut rng), v(&mut rng));
                        b.mov(d, s).pred = Some(Pred {
                            flag_sub: 0,
                            inverse: false,
                        });
                    }
                    _ => {
                        let (d, s, t) = (v(&mut rng), v(&mut rng), v(&mut rng));
                        b.alu2(Opcode::Add, d, s, t);
                    }
                }
            }
            let iv = ra::intervals(&p);
            let sizes: Vec<u32> = p.vregs.iter().map(|r| r.regs()).collect();
            let order = order_block(&p.insts, 0, &iv, &sizes);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..n).collect::<Vec<_>>(),
                "seed {seed}: not a permutation"
            );
            let mut pos = vec![0; n];
            for (at, &k) in order.iter().enumerate() {
                pos[k] = at;
            }
            for b in 0..n {
                for a in 0..b {
                    if conflict(&p.insts[a], &p.insts[b], p.vregs.len()) {
                        assert!(
                            pos[a] < pos[b],
                            "seed {seed}: {a} ({}) must stay before {b} ({}); order {order:?}",
                            p.insts[a],
                            p.insts[b]
                        );
                    }
                }
            }
        }
    }
}
