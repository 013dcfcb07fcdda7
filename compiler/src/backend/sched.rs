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

/// Appends the GRFs an operand touches (given the allocation) to `out`.
fn grfs(o: &Opnd, exec: u8, reg: &[u8], len_override: Option<u32>, out: &mut Vec<u8>) {
    let start = match o.base {
        Base::V(v) => reg[v as usize] as u32 * 32 + o.off,
        Base::G(g) => g as u32 * 32 + o.off,
        _ => return,
    };
    let span = len_override.unwrap_or_else(|| o.span(exec as u32)).max(1);
    let (a, b) = (start / 32, (start + span - 1) / 32);
    out.extend((a..=b).map(|x| x as u8));
}

/// (reads, writes) GRFs of an instruction.
pub fn footprint(i: &LInst, reg: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let (mut r, mut w) = (Vec::new(), Vec::new());
    footprint_into(i, reg, &mut r, &mut w);
    (r, w)
}

/// [`footprint`], appended to `r` and `w`.
fn footprint_into(i: &LInst, reg: &[u8], r: &mut Vec<u8>, w: &mut Vec<u8>) {
    match i.op {
        LOp::Send { rlen, .. } => {
            for (k, s) in i.srcs.iter().enumerate() {
                let len = i.message_src_regs(k).map(|n| n * 32);
                grfs(s, i.exec, reg, len, r);
            }
            if rlen != 0 {
                grfs(&i.dst, i.exec, reg, Some(rlen as u32 * 32), w);
            }
        }
        _ => {
            // A gather of a register array reads all its rows, not what its region says.
            for (k, s) in i.srcs.iter().enumerate() {
                let len = i.message_src_regs(k).map(|n| n * 32);
                grfs(s, i.exec, reg, len, r);
            }
            grfs(&i.dst, i.exec, reg, None, w);
            // Partial writes keep the other channels: count as a read too.
            if i.pred.is_some() {
                grfs(&i.dst, i.exec, reg, None, r);
            }
        }
    }
}

/// The footprints of a block's instructions, in two flat lists (reads, writes) with an
/// offset per instruction.
#[derive(Default)]
struct Footprints {
    r: Vec<u8>,
    w: Vec<u8>,
    /// Instruction k reads `r[at[k].0..at[k + 1].0]` and writes `w[at[k].1..at[k + 1].1]`.
    at: Vec<(u32, u32)>,
}

impl Footprints {
    fn fill(&mut self, block: &[LInst], reg: &[u8]) {
        self.r.clear();
        self.w.clear();
        self.at.clear();
        for i in block {
            self.at.push((self.r.len() as u32, self.w.len() as u32));
            footprint_into(i, reg, &mut self.r, &mut self.w);
        }
        self.at.push((self.r.len() as u32, self.w.len() as u32));
    }
    fn reads(&self, k: usize) -> &[u8] {
        &self.r[self.at[k].0 as usize..self.at[k + 1].0 as usize]
    }
    fn writes(&self, k: usize) -> &[u8] {
        &self.w[self.at[k].1 as usize..self.at[k + 1].1 as usize]
    }
}

/// A graph as one list of neighbours with an offset per node.
#[derive(Default)]
struct Adjacency {
    list: Vec<usize>,
    /// Node k's neighbours are `list[at[k]..at[k + 1]]`.
    at: Vec<usize>,
}

impl Adjacency {
    fn of(&self, k: usize) -> &[usize] {
        &self.list[self.at[k]..self.at[k + 1]]
    }
    fn count(&self, k: usize) -> usize {
        self.at[k + 1] - self.at[k]
    }
}

/// Instructions no scheduling moves anything across: control flow, waits, the end of thread
/// and gateway (barrier) messages.
pub fn is_barrier(i: &LInst) -> bool {
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
    schedule_counted(prog, reg).0
}

/// [`schedule`], also returning the work done: dependency edges built plus ready-queue
/// operations. It grows linearly (times a logarithm) with the instruction count; tests pin
/// that.
pub fn schedule_counted(prog: &mut Program, reg: &[u8]) -> (u64, u64) {
    let insts = std::mem::take(&mut prog.insts);
    let mut out = Vec::with_capacity(insts.len());
    let mut total = 0u64;
    let mut work = 0u64;
    let mut block: Vec<LInst> = Vec::new();
    let mut sc = Scratch::new();
    // Seven tables of GRFS entries, initialised once per program.
    work += 7 * GRFS as u64;
    for i in insts {
        if is_barrier(&i) {
            total += schedule_block(&mut sc, &mut block, reg, &mut out, &mut work);
            total += issue(&i) as u64;
            out.push(i);
        } else {
            block.push(i);
        }
    }
    total += schedule_block(&mut sc, &mut block, reg, &mut out, &mut work);
    prog.insts = out;
    (total, work)
}

/// Dependency edges (pred -> succ with latency) of a block: every earlier instruction it
/// conflicts with (read after write, write after read or write, the flag, message order).
/// Quadratic; the scheduler does not use it (see [`schedule_block`]), it is the reference the
/// scheduler's tests compare against.
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

/// Number of GRFs (footprints are GRF numbers).
const GRFS: usize = 256;

/// The scheduler's tables, allocated once per program and shared by its blocks: the
/// per-GRF tables have 256 entries, and a program has a block per branch or loop (thousands
/// of blocks of a few instructions in loop nests), so allocating and clearing them per block
/// cost more than scheduling. After a block only the entries its footprints touched are
/// reset; every reset counts as work, so the work stays proportional to the instructions.
struct Scratch {
    fp: Footprints,
    preds: Adjacency,
    succs: Adjacency,
    /// Per GRF: the last writer and the readers since (dependency edges).
    last_w: Vec<Option<usize>>,
    readers: Vec<Vec<usize>>,
    /// Per GRF: the largest critical path of later readers and writers.
    later_r: Vec<Option<u32>>,
    later_w: Vec<Option<u32>>,
    issued: Issued,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            fp: Footprints::default(),
            preds: Adjacency::default(),
            succs: Adjacency::default(),
            last_w: vec![None; GRFS],
            readers: vec![Vec::new(); GRFS],
            later_r: vec![None; GRFS],
            later_w: vec![None; GRFS],
            issued: Issued::new(),
        }
    }

    /// Resets the per-GRF entries the current block's footprints touched.
    fn reset(&mut self, work: &mut u64) {
        for &x in self.fp.r.iter().chain(&self.fp.w) {
            let x = x as usize;
            self.last_w[x] = None;
            self.readers[x].clear();
            self.later_r[x] = None;
            self.later_w[x] = None;
            self.issued.w_lat[x] = 0;
            self.issued.w_one[x] = 0;
            self.issued.r_one[x] = 0;
        }
        *work += (self.fp.r.len() + self.fp.w.len()) as u64;
        self.issued.flag_w_lat = 0;
        self.issued.flag_r_lat = 0;
        self.issued.msg_one = 0;
    }
}

/// The nearest earlier instructions each instruction of a block must wait for: per GRF it
/// reads, the last writer; per GRF it writes, the last writer and the readers since; the
/// same for the flag; the previous message. Every edge of [`dependencies`] is a path in
/// this graph, so "all predecessors scheduled" means the same in both. Linear in the block.
fn near_preds(sc: &mut Scratch, block: &[LInst], work: &mut u64) {
    let n = block.len();
    let Scratch {
        fp,
        preds,
        last_w,
        readers,
        ..
    } = sc;
    let mut flag_w: Option<usize> = None;
    let mut flag_r: Vec<usize> = Vec::new();
    let mut last_msg: Option<usize> = None;
    preds.list.clear();
    preds.at.clear();
    for b in 0..n {
        let (rb, wb) = (fp.reads(b), fp.writes(b));
        let from = preds.list.len();
        preds.at.push(from);
        let p = &mut preds.list;
        for &x in rb {
            p.extend(last_w[x as usize]);
        }
        for &x in wb {
            p.extend(last_w[x as usize]);
            p.append(&mut readers[x as usize]);
        }
        if block[b].reads_flag() || block[b].writes_flag() {
            p.extend(flag_w);
        }
        if block[b].writes_flag() {
            p.append(&mut flag_r);
        }
        if block[b].op.is_message() {
            p.extend(last_msg);
            last_msg = Some(b);
        }
        p[from..].sort_unstable();
        let mut kept = from;
        for k in from..p.len() {
            let a = p[k];
            if a != b && (kept == from || p[kept - 1] != a) {
                p[kept] = a;
                kept += 1;
            }
        }
        p.truncate(kept);
        *work += (kept - from) as u64 + 1;
        for &x in rb {
            readers[x as usize].push(b);
        }
        for &x in wb {
            last_w[x as usize] = Some(b);
        }
        if block[b].reads_flag() {
            flag_r.push(b);
        }
        if block[b].writes_flag() {
            flag_w = Some(b);
        }
    }
    preds.at.push(preds.list.len());
    // Successors: the same edges reversed, in increasing order of the successor.
    let succs = &mut sc.succs;
    succs.at.clear();
    succs.at.resize(n + 1, 0);
    for &a in &sc.preds.list {
        succs.at[a + 1] += 1;
    }
    for k in 0..n {
        succs.at[k + 1] += succs.at[k];
    }
    succs.list.clear();
    succs.list.resize(sc.preds.list.len(), 0);
    let mut next: Vec<usize> = succs.at[..n].to_vec();
    for b in 0..n {
        for &a in sc.preds.of(b) {
            succs.list[next[a]] = b;
            next[a] += 1;
        }
    }
}

/// Critical path of every instruction to the end of the block, as over the edges of
/// [`dependencies`]: the longest (edge latency + successor's path), or the instruction's own
/// latency when nothing depends on it. Edge latency is the producer's latency for a read after
/// write or a flag dependency, else 1. Per GRF, the flag and messages it keeps the largest path
/// among later readers and writers, so each instruction costs its footprint.
fn critical_paths(sc: &mut Scratch, block: &[LInst], work: &mut u64) -> Vec<u32> {
    let n = block.len();
    let Scratch {
        fp,
        later_r,
        later_w,
        ..
    } = sc;
    let (mut flag_r, mut flag_w, mut msg): (Option<u32>, Option<u32>, Option<u32>) =
        (None, None, None);
    let mut prio = vec![0u32; n];
    for a in (0..n).rev() {
        let (ra, wa) = (fp.reads(a), fp.writes(a));
        let own = latency(&block[a]);
        let mut best: Option<u32> = None;
        let mut see = |l: u32, p: Option<u32>| {
            if let Some(p) = p {
                best = Some(best.map_or(l + p, |b| b.max(l + p)));
            }
        };
        for &x in wa {
            see(own, later_r[x as usize]);
            see(1, later_w[x as usize]);
        }
        for &x in ra {
            see(1, later_w[x as usize]);
        }
        if block[a].writes_flag() {
            see(own, flag_r);
            see(own, flag_w);
        }
        if block[a].reads_flag() {
            see(own, flag_w);
        }
        if block[a].op.is_message() {
            see(1, msg);
        }
        *work += (ra.len() + wa.len()) as u64 + 1;
        let pa = best.unwrap_or(own);
        prio[a] = pa;
        let keep = |slot: &mut Option<u32>| *slot = Some(slot.map_or(pa, |s| s.max(pa)));
        for &x in ra {
            keep(&mut later_r[x as usize]);
        }
        for &x in wa {
            keep(&mut later_w[x as usize]);
        }
        if block[a].reads_flag() {
            keep(&mut flag_r);
        }
        if block[a].writes_flag() {
            keep(&mut flag_w);
        }
        if block[a].op.is_message() {
            keep(&mut msg);
        }
    }
    prio
}

/// Start-time bookkeeping of scheduled instructions: per GRF, the flag and messages, the
/// largest (start + latency) of writers and (start + 1) of readers and writers. When an
/// instruction becomes ready, every scheduled instruction it conflicts with precedes it in
/// program order (a later one would depend on it), so these maxima give exactly its
/// earliest start over the edges of [`dependencies`].
struct Issued {
    w_lat: Vec<u64>,
    w_one: Vec<u64>,
    r_one: Vec<u64>,
    flag_w_lat: u64,
    flag_r_lat: u64,
    msg_one: u64,
}

impl Issued {
    fn new() -> Issued {
        Issued {
            w_lat: vec![0; GRFS],
            w_one: vec![0; GRFS],
            r_one: vec![0; GRFS],
            flag_w_lat: 0,
            flag_r_lat: 0,
            msg_one: 0,
        }
    }

    fn ready_at(&self, i: &LInst, r: &[u8], w: &[u8]) -> u64 {
        let mut t = 0;
        for &x in r {
            t = t.max(self.w_lat[x as usize]);
        }
        for &x in w {
            t = t.max(self.w_one[x as usize]).max(self.r_one[x as usize]);
        }
        if i.reads_flag() || i.writes_flag() {
            t = t.max(self.flag_w_lat);
        }
        if i.writes_flag() {
            t = t.max(self.flag_r_lat);
        }
        if i.op.is_message() {
            t = t.max(self.msg_one);
        }
        t
    }

    fn issue(&mut self, i: &LInst, r: &[u8], w: &[u8], start: u64) {
        let lat = start + latency(i) as u64;
        for &x in r {
            self.r_one[x as usize] = self.r_one[x as usize].max(start + 1);
        }
        for &x in w {
            self.w_lat[x as usize] = self.w_lat[x as usize].max(lat);
            self.w_one[x as usize] = self.w_one[x as usize].max(start + 1);
        }
        if i.reads_flag() {
            self.flag_r_lat = self.flag_r_lat.max(lat);
        }
        if i.writes_flag() {
            self.flag_w_lat = self.flag_w_lat.max(lat);
        }
        if i.op.is_message() {
            self.msg_one = self.msg_one.max(start + 1);
        }
    }
}

/// List-schedules one block: among ready instructions prefer one whose operands are
/// available, then the longest critical path, then program order. Gives the order and cycles
/// of a scan over all instructions with the edges of [`dependencies`], in O(n log n).
fn schedule_block(
    sc: &mut Scratch,
    block: &mut Vec<LInst>,
    reg: &[u8],
    out: &mut Vec<LInst>,
    work: &mut u64,
) -> u64 {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = block.len();
    if n == 0 {
        return 0;
    }
    sc.fp.fill(block, reg);
    near_preds(sc, block, work);
    let prio = critical_paths(sc, block, work);
    let mut npred: Vec<usize> = (0..n).map(|k| sc.preds.count(k)).collect();
    let mut ready_at = vec![0u64; n];
    // Ready instructions whose operands are available at `cycle`: (longest path, first).
    let mut avail: BinaryHeap<(u32, Reverse<usize>)> = BinaryHeap::new();
    // Ready instructions still waiting for an operand: (earliest start, longest path, first).
    let mut waiting: BinaryHeap<Reverse<(u64, Reverse<u32>, usize)>> = BinaryHeap::new();
    for k in 0..n {
        if npred[k] == 0 {
            waiting.push(Reverse((0, Reverse(prio[k]), k)));
        }
    }
    let mut cycle = 0u64;
    let mut end = 0u64;
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        while let Some(&Reverse((t, _, k))) = waiting.peek() {
            if t > cycle {
                break;
            }
            waiting.pop();
            avail.push((prio[k], Reverse(k)));
            *work += 1;
        }
        let pick = match avail.pop() {
            Some((_, Reverse(k))) => k,
            None => {
                let Reverse((_, _, k)) = waiting.pop().expect("acyclic dependencies");
                k
            }
        };
        *work += 1;
        let start = ready_at[pick].max(cycle);
        cycle = start + issue(&block[pick]) as u64;
        end = end.max(start + latency(&block[pick]) as u64);
        let fp = &sc.fp;
        sc.issued
            .issue(&block[pick], fp.reads(pick), fp.writes(pick), start);
        for &b in sc.succs.of(pick) {
            npred[b] -= 1;
            if npred[b] == 0 {
                ready_at[b] = sc.issued.ready_at(&block[b], fp.reads(b), fp.writes(b));
                waiting.push(Reverse((ready_at[b], Reverse(prio[b]), b)));
                *work += 1;
            }
        }
        order.push(pick);
    }
    sc.reset(work);
    let mut taken: Vec<Option<LInst>> = std::mem::take(block).into_iter().map(Some).collect();
    for k in order {
        out.push(taken[k].take().expect("scheduled once"));
    }
    end.max(cycle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrite_isa::{CondMod, MathFunction, Opcode, Type};

    /// The scheduler as it was before it became O(n log n): every pair of instructions
    /// compared, every ready instruction scanned per pick. The fast one must match it.
    fn reference_block(block: &[LInst], reg: &[u8]) -> (Vec<usize>, u64) {
        let n = block.len();
        if n == 0 {
            return (vec![], 0);
        }
        let preds = dependencies(block, reg);
        let mut succs: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
        for (b, ps) in preds.iter().enumerate() {
            for &(a, l) in ps {
                succs[a].push((b, l));
            }
        }
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
        let (mut cycle, mut end) = (0u64, 0u64);
        let mut order = Vec::new();
        for _ in 0..n {
            let pick = (0..n)
                .filter(|&k| !done[k] && npred[k] == 0)
                .min_by_key(|&k| (ready_at[k].max(cycle), std::cmp::Reverse(prio[k]), k))
                .unwrap();
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
        (order, end.max(cycle))
    }

    use crate::testing::Rng;

    /// A block of ALU, math and message instructions over a few registers, some of them
    /// predicated or writing the flag, some operands two GRFs wide.
    fn random_block(rng: &mut Rng, n: usize, vregs: u32) -> Vec<LInst> {
        let mut v = Vec::new();
        for _ in 0..n {
            let exec = if rng.next(3) == 0 { 16 } else { 8 };
            let opnd = |r: &mut Rng| Opnd::v(r.next(vregs), Type::F);
            let op = match rng.next(8) {
                0 => LOp::Math(MathFunction::Inv),
                1 => LOp::Send {
                    indirect: false,
                    sfid: Sfid::DpDc1,
                    desc: 0x0210_6e01,
                    ex_desc: 0,
                    mlen: 1,
                    ex_mlen: 0,
                    rlen: rng.next(2) as u8,
                    eot: false,
                },
                2 => LOp::Alu(Opcode::Mul),
                _ => LOp::Alu(Opcode::Add),
            };
            let srcs = (0..1 + rng.next(2)).map(|_| opnd(rng)).collect();
            let mut i = LInst {
                op,
                exec,
                group: 0,
                we_all: false,
                pred: None,
                cmod: CondMod::None,
                flag_sub: 0,
                sat: false,
                dst: opnd(rng),
                srcs,
            };
            match rng.next(6) {
                0 => i.cmod = CondMod::L,
                1 => {
                    i.pred = Some(Pred {
                        flag_sub: 0,
                        inverse: false,
                    })
                }
                _ => {}
            }
            v.push(i);
        }
        v
    }

    #[test]
    fn fast_scheduler_matches_the_pairwise_reference() {
        for seed in 1..200u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let vregs = 2 + rng.next(12);
            let n = 1 + rng.next(60) as usize;
            let block = random_block(&mut rng, n, vregs);
            let reg: Vec<u8> = (0..vregs).map(|_| 10 + rng.next(10) as u8).collect();
            let (order, cycles) = reference_block(&block, &reg);
            let want: Vec<LInst> = order.iter().map(|&k| block[k].clone()).collect();
            let mut b = block.clone();
            let (mut out, mut work) = (Vec::new(), 0);
            let got_cycles = schedule_block(&mut Scratch::new(), &mut b, &reg, &mut out, &mut work);
            assert_eq!(
                out, want,
                "seed {seed}: order differs (reference {order:?})"
            );
            assert_eq!(got_cycles, cycles, "seed {seed}: cycles differ");
        }
    }

    #[test]
    fn small_blocks_cost_their_instructions_not_the_grf_tables() {
        // 2,000 blocks of two instructions (a loop nest's many small blocks): the per-GRF
        // tables (7 x 256 entries) are set up once and reset only where a block touched
        // them, so the work per instruction stays small.
        let mut rng = Rng(0x5eed);
        let block = random_block(&mut rng, 4000, 40);
        let mut insts = Vec::new();
        for pair in block.chunks(2) {
            insts.extend_from_slice(pair);
            insts.push(LInst {
                op: LOp::Wait,
                ..pair[0].clone()
            });
        }
        let mut p = Program {
            insts,
            ..Default::default()
        };
        let reg: Vec<u8> = (0..40).map(|k| 10 + k as u8 * 2).collect();
        let work = schedule_counted(&mut p, &reg).1;
        assert!(
            work < 40 * 4000,
            "work {work} for 2,000 blocks of 2 instructions (seed 0x5eed)"
        );
    }

    #[test]
    fn scheduling_work_grows_linearly() {
        let work = |n: usize| {
            let mut rng = Rng(0x1234_5678);
            let mut p = Program {
                insts: random_block(&mut rng, n, 40),
                ..Default::default()
            };
            let reg: Vec<u8> = (0..40).map(|k| 10 + k as u8 * 2).collect();
            schedule_counted(&mut p, &reg).1
        };
        let (w1, w2) = (work(4000), work(8000));
        // Quadratic work would double twice; n log n stays well under 2.3x.
        assert!(
            (w2 as f64) < 2.3 * w1 as f64,
            "work {w1} for 4000 instructions, {w2} for 8000"
        );
    }
}
