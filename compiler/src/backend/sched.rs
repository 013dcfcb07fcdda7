//! List scheduling of each basic block after register allocation (dependencies on GRFs,
//! the flag register and message order), and the static cycle model behind the
//! "Cycle Count" statistic. Latencies are Gen9 ballpark figures, as a table.

use super::lir::*;
use ferrite_isa::{MathFunction, Sfid};

/// Gen9 latencies in cycles (result available after issue), per instruction class.
pub const LATENCIES: &[(LatencyClass, u32)] = &[
    (LatencyClass::Alu, 14),
    (LatencyClass::MathSimple, 22),
    (LatencyClass::MathTrig, 30),
    (LatencyClass::MathPow, 40),
    (LatencyClass::MathIntDiv, 80),
    (LatencyClass::DataPort, 200),
    (LatencyClass::Fence, 100),
    (LatencyClass::Other, 2),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatencyClass {
    Alu,
    MathSimple,
    MathTrig,
    MathPow,
    MathIntDiv,
    DataPort,
    Fence,
    Other,
}

pub fn latency_class(i: &LInst) -> LatencyClass {
    match i.op {
        LOp::Alu(_) => LatencyClass::Alu,
        LOp::Math(MathFunction::Sin | MathFunction::Cos) => LatencyClass::MathTrig,
        LOp::Math(MathFunction::Pow) => LatencyClass::MathPow,
        LOp::Math(MathFunction::IntDiv | MathFunction::IntMod | MathFunction::IntDivMod) => {
            LatencyClass::MathIntDiv
        }
        LOp::Math(_) => LatencyClass::MathSimple,
        LOp::Send {
            sfid: Sfid::DpDc0 | Sfid::DpDc1,
            rlen,
            desc,
            ..
        } => {
            if (desc >> 14) & 0x1F == 0x07 && sfid_is_dc0(i) {
                LatencyClass::Fence
            } else if rlen > 0 {
                LatencyClass::DataPort
            } else {
                LatencyClass::Other
            }
        }
        _ => LatencyClass::Other,
    }
}

fn sfid_is_dc0(i: &LInst) -> bool {
    matches!(
        i.op,
        LOp::Send {
            sfid: Sfid::DpDc0,
            ..
        }
    )
}

pub fn latency(i: &LInst) -> u32 {
    let c = latency_class(i);
    LATENCIES
        .iter()
        .find(|(k, _)| *k == c)
        .map_or(2, |(_, l)| *l)
}

/// Issue cycles: 2 per GRF of 32-bit data the instruction processes.
pub fn issue(i: &LInst) -> u32 {
    2 * (i.exec as u32 * 4).div_ceil(32).max(1)
}

/// GRFs an operand touches (given the allocation).
fn grfs(o: &Opnd, exec: u8, reg: &[u8], len_override: Option<u32>) -> Vec<u8> {
    let start = match o.base {
        Base::V(v) => reg[v as usize] as u32 * 32 + o.off,
        Base::G(g) => g as u32 * 32 + o.off,
        _ => return vec![],
    };
    let span = len_override.unwrap_or_else(|| o.span(exec as u32)).max(1);
    let (a, b) = (start / 32, (start + span - 1) / 32);
    (a..=b).map(|x| x as u8).collect()
}

/// (reads, writes) GRFs of an instruction.
pub fn footprint(i: &LInst, reg: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut r = Vec::new();
    let mut w = Vec::new();
    match i.op {
        LOp::Send {
            mlen,
            ex_mlen,
            rlen,
            ..
        } => {
            if let Some(s) = i.srcs.first() {
                r.extend(grfs(s, i.exec, reg, Some(mlen as u32 * 32)));
            }
            if let Some(s) = i.srcs.get(1) {
                r.extend(grfs(s, i.exec, reg, Some(ex_mlen as u32 * 32)));
            }
            w.extend(grfs(&i.dst, i.exec, reg, Some(rlen as u32 * 32)));
            if rlen == 0 {
                w.clear();
            }
        }
        _ => {
            for s in &i.srcs {
                r.extend(grfs(s, i.exec, reg, None));
            }
            w.extend(grfs(&i.dst, i.exec, reg, None));
            // Partial writes keep the other channels: count as a read too.
            if i.pred.is_some() {
                r.extend(grfs(&i.dst, i.exec, reg, None));
            }
        }
    }
    (r, w)
}

fn is_barrier(i: &LInst) -> bool {
    i.op.is_control()
        || matches!(i.op, LOp::Wait)
        || matches!(i.op, LOp::Send { eot: true, .. })
        || matches!(
            i.op,
            LOp::Send {
                sfid: Sfid::Gateway,
                ..
            }
        )
}

/// Schedules every basic block in place; returns the estimated cycles (loops counted once).
pub fn schedule(prog: &mut Program, reg: &[u8]) -> u64 {
    let insts = std::mem::take(&mut prog.insts);
    let mut out = Vec::with_capacity(insts.len());
    let mut total = 0u64;
    let mut block: Vec<LInst> = Vec::new();
    for i in insts {
        if is_barrier(&i) {
            total += schedule_block(&mut block, reg, &mut out);
            total += issue(&i) as u64;
            out.push(i);
        } else {
            block.push(i);
        }
    }
    total += schedule_block(&mut block, reg, &mut out);
    prog.insts = out;
    total
}

/// Dependency edges (pred -> succ with latency) of a block.
pub fn dependencies(block: &[LInst], reg: &[u8]) -> Vec<Vec<(usize, u32)>> {
    let n = block.len();
    let fp: Vec<_> = block.iter().map(|i| footprint(i, reg)).collect();
    let mut preds: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    for b in 0..n {
        for a in 0..b {
            let (ra, wa) = &fp[a];
            let (rb, wb) = &fp[b];
            let raw = wa.iter().any(|x| rb.contains(x));
            let war = ra.iter().any(|x| wb.contains(x));
            let waw = wa.iter().any(|x| wb.contains(x));
            let flag = (block[a].writes_flag()
                && (block[b].reads_flag() || block[b].writes_flag()))
                || (block[a].reads_flag() && block[b].writes_flag());
            let msg = block[a].op.is_message() && block[b].op.is_message();
            if raw || flag {
                preds[b].push((a, latency(&block[a])));
            } else if war || waw || msg {
                preds[b].push((a, 1));
            }
        }
    }
    preds
}

fn schedule_block(block: &mut Vec<LInst>, reg: &[u8], out: &mut Vec<LInst>) -> u64 {
    let n = block.len();
    if n == 0 {
        return 0;
    }
    let preds = dependencies(block, reg);
    let mut succs: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    for (b, ps) in preds.iter().enumerate() {
        for &(a, l) in ps {
            succs[a].push((b, l));
        }
    }
    // Critical path to the end of the block.
    let mut prio = vec![0u32; n];
    for a in (0..n).rev() {
        let own = latency(&block[a]);
        prio[a] = succs[a]
            .iter()
            .map(|&(b, l)| l + prio[b])
            .max()
            .unwrap_or(own);
    }
    let mut npred: Vec<usize> = preds.iter().map(|p| p.len()).collect();
    let mut ready_at = vec![0u64; n];
    let mut done = vec![false; n];
    let mut cycle = 0u64;
    let mut end = 0u64;
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        // Among ready instructions prefer one whose operands are available, then the
        // longest critical path, then program order.
        let pick = (0..n)
            .filter(|&k| !done[k] && npred[k] == 0)
            .min_by_key(|&k| (ready_at[k].max(cycle), std::cmp::Reverse(prio[k]), k))
            .expect("acyclic dependencies");
        done[pick] = true;
        let start = ready_at[pick].max(cycle);
        cycle = start + issue(&block[pick]) as u64;
        end = end.max(start + latency(&block[pick]) as u64);
        for &(b, l) in &succs[pick] {
            npred[b] -= 1;
            ready_at[b] = ready_at[b].max(start + l as u64);
        }
        order.push(pick);
    }
    let mut taken: Vec<Option<LInst>> = std::mem::take(block).into_iter().map(Some).collect();
    for k in order {
        out.push(taken[k].take().expect("scheduled once"));
    }
    end.max(cycle)
}
