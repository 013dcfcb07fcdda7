//! Register allocation by graph colouring (Chaitin-Briggs: simplify with optimistic
//! push, select the lowest free GRF range) over live intervals of the linear structured
//! program, with spilling to scratch (DC0 OWord block, BTI 253) when colouring fails.
//!
//! Liveness: a register is live from its first to its last reference in program order;
//! a register live into a loop (referenced in the loop and before it) stays live to the
//! loop's WHILE, since the back edge may read it again; a register defined in a loop and
//! read after it is live from the loop's DO, since lanes that left the loop keep their
//! value while the other lanes run the body again (SIMD divergence). Definitions count as live at
//! their instruction, so a destination never shares a GRF with that instruction's
//! sources (messages may not overlap payload and response).

use super::lir::*;
use super::lower;
use super::BackendError;

/// First GRF a kernel may allocate and the end of the allocatable range (g127 holds the
/// EOT payload).
#[derive(Clone, Copy, Debug)]
pub struct RegFile {
    pub first: u8,
    pub end: u8,
}

/// Result of allocation.
#[derive(Clone, Debug, Default)]
pub struct Allocation {
    /// First GRF of each virtual register.
    pub reg: Vec<u8>,
    pub spills: u32,
    pub fills: u32,
    /// Bytes of scratch per thread the spills use.
    pub scratch_bytes: u32,
    /// Highest GRF used + 1.
    pub grf_used: u32,
}

/// Live interval [start, end] (instruction indices, inclusive) of every virtual register.
pub fn intervals(prog: &Program) -> Vec<Option<(usize, usize)>> {
    let mut iv: Vec<Option<(usize, usize)>> = vec![None; prog.vregs.len()];
    for (k, i) in prog.insts.iter().enumerate() {
        for o in std::iter::once(&i.dst).chain(i.srcs.iter()) {
            if let Some(v) = o.vreg() {
                let e = iv[v as usize].get_or_insert((k, k));
                e.0 = e.0.min(k);
                e.1 = e.1.max(k);
            }
        }
    }
    let loops = loop_ranges(prog);
    let mut changed = true;
    while changed {
        changed = false;
        for &(s, e) in &loops {
            for x in iv.iter_mut().flatten() {
                if x.0 < s && x.1 >= s && x.1 < e {
                    x.1 = e;
                    changed = true;
                }
                // Defined in the loop and read after it: lanes that left the loop early
                // keep their value while the other lanes run the body again, so the
                // register is live through the whole loop.
                if x.0 > s && x.0 <= e && x.1 > e {
                    x.0 = s;
                    changed = true;
                }
            }
        }
    }
    iv
}

/// (DO index, WHILE index) of every loop.
pub fn loop_ranges(prog: &Program) -> Vec<(usize, usize)> {
    let mut stack = Vec::new();
    let mut out = Vec::new();
    for (k, i) in prog.insts.iter().enumerate() {
        match i.op {
            LOp::Do => stack.push(k),
            LOp::While => {
                if let Some(s) = stack.pop() {
                    out.push((s, k));
                }
            }
            _ => {}
        }
    }
    out
}

fn loop_depth(prog: &Program) -> Vec<u32> {
    let mut d = 0u32;
    prog.insts
        .iter()
        .map(|i| {
            match i.op {
                LOp::Do => d += 1,
                LOp::While => d = d.saturating_sub(1),
                _ => {}
            }
            d
        })
        .collect()
}

/// Colours the interference graph of `iv` with `k` registers starting at `first`.
/// Returns the first GRF per node or the nodes that must be spilled.
pub fn colour(
    iv: &[Option<(usize, usize)>],
    sizes: &[u32],
    cost: &[f64],
    no_spill: &[bool],
    file: RegFile,
) -> Result<Vec<u8>, Vec<usize>> {
    let n = iv.len();
    let k = (file.end - file.first) as u32;
    // Interference graph.
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut order: Vec<usize> = (0..n).filter(|&v| iv[v].is_some()).collect();
    order.sort_by_key(|&v| iv[v].map(|x| x.0));
    let mut active: Vec<usize> = Vec::new();
    for &v in &order {
        let (s, _) = iv[v].expect("live");
        active.retain(|&a| iv[a].expect("live").1 >= s);
        for &a in &active {
            adj[a].push(v);
            adj[v].push(a);
        }
        active.push(v);
    }
    // Simplify.
    let mut removed = vec![false; n];
    let mut weight: Vec<u32> = (0..n)
        .map(|v| adj[v].iter().map(|&u| sizes[u]).sum())
        .collect();
    let mut stack = Vec::with_capacity(order.len());
    let mut left: Vec<usize> = order.clone();
    while !left.is_empty() {
        let pick = left
            .iter()
            .position(|&v| weight[v] + sizes[v] <= k)
            .unwrap_or_else(|| {
                // Spill candidate: cheapest per interference, spill temporaries last.
                let mut best = 0;
                let mut best_score = f64::MAX;
                for (p, &v) in left.iter().enumerate() {
                    let score = if no_spill[v] {
                        f64::MAX / 2.0
                    } else {
                        cost[v] / (weight[v] as f64 + 1.0)
                    };
                    if score < best_score {
                        best_score = score;
                        best = p;
                    }
                }
                best
            });
        let v = left.swap_remove(pick);
        removed[v] = true;
        for &u in &adj[v] {
            weight[u] = weight[u].saturating_sub(sizes[v]);
        }
        stack.push(v);
    }
    // Select.
    let mut reg: Vec<Option<u8>> = vec![None; n];
    let mut spill = Vec::new();
    while let Some(v) = stack.pop() {
        let mut busy = [false; 128];
        for &u in &adj[v] {
            if let Some(r) = reg[u] {
                for x in r as u32..r as u32 + sizes[u] {
                    busy[x as usize] = true;
                }
            }
        }
        let sz = sizes[v];
        let found = (file.first as u32..=(file.end as u32).saturating_sub(sz))
            .find(|&r| (r..r + sz).all(|x| !busy[x as usize]));
        match found {
            Some(r) => reg[v] = Some(r as u8),
            None => spill.push(v),
        }
    }
    if spill.is_empty() {
        Ok(reg.into_iter().map(|r| r.unwrap_or(0)).collect())
    } else {
        Err(spill)
    }
}

/// Allocates registers, spilling as needed (the program is rewritten with fills and
/// spills, already lowered to messages).
/// Spill slots start at byte `scratch_base` of the thread's scratch (after private memory).
pub fn allocate(
    prog: &mut Program,
    file: RegFile,
    scratch_base: u32,
) -> Result<Allocation, BackendError> {
    let mut alloc = Allocation {
        scratch_bytes: scratch_base,
        ..Allocation::default()
    };
    let mut no_spill = vec![false; prog.vregs.len()];
    for _round in 0..64 {
        let iv = intervals(prog);
        let sizes: Vec<u32> = prog.vregs.iter().map(|v| v.regs()).collect();
        let depth = loop_depth(prog);
        let mut cost = vec![0f64; prog.vregs.len()];
        for (k, i) in prog.insts.iter().enumerate() {
            for o in std::iter::once(&i.dst).chain(i.srcs.iter()) {
                if let Some(v) = o.vreg() {
                    cost[v as usize] += 10f64.powi(depth[k].min(6) as i32);
                }
            }
        }
        no_spill.resize(prog.vregs.len(), false);
        match colour(&iv, &sizes, &cost, &no_spill, file) {
            Ok(reg) => {
                alloc.grf_used = (0..reg.len())
                    .filter(|&v| iv[v].is_some())
                    .map(|v| reg[v] as u32 + sizes[v])
                    .max()
                    .unwrap_or(file.first as u32);
                alloc.reg = reg;
                return Ok(alloc);
            }
            Err(failed) => {
                // Spill the failed nodes that may be spilled; for a failed temporary spill
                // the cheapest spillable register live across it instead.
                let mut spills: Vec<usize> =
                    failed.iter().copied().filter(|&v| !no_spill[v]).collect();
                if spills.is_empty() {
                    let (s0, e0) = failed
                        .iter()
                        .filter_map(|&v| iv[v])
                        .fold((usize::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
                    let victim = (0..iv.len())
                        .filter(|&v| !no_spill[v])
                        .filter(|&v| iv[v].is_some_and(|(s, e)| s <= e0 && e >= s0))
                        .min_by(|&a, &b| {
                            let ka = cost[a] / sizes[a] as f64;
                            let kb = cost[b] / sizes[b] as f64;
                            ka.total_cmp(&kb)
                        });
                    match victim {
                        Some(v) => spills.push(v),
                        None => {
                            return Err(BackendError::Internal(
                                "register allocation failed on a spill temporary".into(),
                            ))
                        }
                    }
                }
                for v in spills {
                    spill_vreg(prog, v as u32, &mut alloc, &mut no_spill);
                }
                lower::lower_sends(prog);
                // Temporaries created by the lowering must stay in registers.
                no_spill.resize(prog.vregs.len(), true);
            }
        }
    }
    Err(BackendError::Internal(
        "register allocation did not converge".into(),
    ))
}

/// Rewrites every reference to `v` through a fresh temporary filled from scratch before
/// the instruction and spilled after it when written.
fn spill_vreg(prog: &mut Program, v: u32, alloc: &mut Allocation, no_spill: &mut Vec<bool>) {
    let regs = prog.vregs[v as usize].regs();
    let slot = alloc.scratch_bytes;
    alloc.scratch_bytes += regs * 32;
    let old = std::mem::take(&mut prog.insts);
    for mut i in old {
        let reads = i.srcs.iter().any(|o| o.vreg() == Some(v));
        let writes = i.dst.vreg() == Some(v);
        if !reads && !writes {
            prog.insts.push(i);
            continue;
        }
        // Only the GRFs this instruction touches are filled (and spilled back).
        let (mut lo, mut hi) = (u32::MAX, 0u32);
        let (mlen, ex_mlen, rlen) = match i.op {
            LOp::Send {
                mlen,
                ex_mlen,
                rlen,
                ..
            } => (Some(mlen as u32), Some(ex_mlen as u32), Some(rlen as u32)),
            _ => (None, None, None),
        };
        let mut touch = |o: &Opnd, len: Option<u32>| {
            if o.vreg() == Some(v) {
                let span = len.map_or_else(|| o.span(i.exec as u32), |l| l * 32).max(1);
                lo = lo.min(o.off / 32);
                hi = hi.max((o.off + span).div_ceil(32));
            }
        };
        touch(&i.dst, rlen);
        for (k, o) in i.srcs.iter().enumerate() {
            touch(o, if k == 0 { mlen } else { ex_mlen });
        }
        let hi = hi.min(regs).max(lo + 1);
        let n_regs = hi - lo;
        let t = prog.new_vreg(n_regs * 32);
        no_spill.resize(prog.vregs.len(), false);
        no_spill[t as usize] = true;
        let mut b = Builder::new(prog, 8);
        b.we_all = true;
        // Fill before reads and before partial writes (unwritten channels keep their value).
        let mut c = 0;
        while c < n_regs {
            let n = (n_regs - c).min(4);
            b.inst(
                LOp::ScratchRead {
                    offset: slot + (lo + c) * 32,
                    regs: n as u8,
                },
                Opnd::v(t, ferrite_isa::Type::UD).offset(c * 32),
                vec![],
            );
            alloc.fills += 1;
            c += n;
        }
        for o in std::iter::once(&mut i.dst).chain(i.srcs.iter_mut()) {
            if o.vreg() == Some(v) {
                o.base = Base::V(t);
                o.off -= lo * 32;
            }
        }
        b.push(i);
        if writes {
            let mut c = 0;
            while c < n_regs {
                let n = (n_regs - c).min(4);
                b.inst(
                    LOp::ScratchWrite {
                        offset: slot + (lo + c) * 32,
                        regs: n as u8,
                    },
                    Opnd::null(ferrite_isa::Type::UD),
                    vec![Opnd::v(t, ferrite_isa::Type::UD).offset(c * 32)],
                );
                alloc.spills += 1;
                c += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrite_isa::{Opcode, Type};

    /// v0 defined before the loop, v1 defined in the loop body and read after it (a break
    /// value), v2 a temporary inside the loop after v1's definition.
    #[test]
    fn value_defined_in_loop_and_read_after_is_live_through_the_loop() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let v0 = b.vreg(Type::D, 1);
        let v1 = b.vreg(Type::D, 1);
        let v2 = b.vreg(Type::D, 1);
        b.mov(v0, Opnd::d(1)); // 0
        b.control(LOp::Do); // 1
        b.mov(v2, v0); // 2: temporary of one iteration, last read at 5
        b.alu2(Opcode::Add, v2, v2, Opnd::d(1)); // 3
        b.control(LOp::If); // 4
        b.mov(v1, v2); // 5: lanes that break keep v1
        b.control(LOp::Break); // 6
        b.control(LOp::Endif); // 7
        b.control(LOp::While); // 8
        b.mov(Opnd::null(Type::D), v1); // 9
        let iv = intervals(&p);
        assert_eq!(iv[0], Some((0, 8)), "live into the loop: to the WHILE");
        assert_eq!(iv[1], Some((1, 9)), "live out of the loop: from the DO");
        assert_eq!(iv[2], Some((2, 5)), "a temporary of one iteration");
        // So v1 and v2 interfere and never share a GRF: the other lanes' next iteration
        // would overwrite the value the breaking lanes left in v1.
        let sizes = vec![1; 3];
        let regs = colour(
            &iv,
            &sizes,
            &[1.0; 3],
            &[false; 3],
            RegFile { first: 10, end: 20 },
        )
        .expect("colourable");
        assert_ne!(regs[1], regs[2]);
    }
}
