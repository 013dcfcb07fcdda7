//! Optimisations on the LIR after instruction selection (before SIMD-width lowering unless
//! stated).
//!
//! Instruction selection emits every component of a vector value (all three of
//! `gl_GlobalInvocationID`'s, say) and copies payload values (push constants) into virtual
//! registers before use. These passes clean that up where the middle end cannot see it:
//!
//! - [`propagate_payload_copies`]: a virtual register written once, by a plain `mov` of a
//!   scalar payload register (`g1.0<0,1,0>`: push constants, the driver register; the payload
//!   registers below the allocatable file are never written by the kernel), is read from the
//!   payload register directly as a scalar region.
//! - [`dce`]: ALU and math instructions whose destination bytes no other instruction reads
//!   are removed, to a fixed point (a worklist over per-GRF read counts: linear in the
//!   program).
//!
//! - [`fold_flag_moves`]: a `mov.nz null, x` that only sets the flag from a boolean `x` is
//!   removed when the flag already holds `x != 0` (the `cmp` that computed `x` wrote it, or
//!   an identical `mov.nz` did), or folded into the logic instruction that computed `x` as
//!   its conditional modifier; a `cmp` whose destination is then unread writes `null`.
//! - [`flatten_ifs`]: small `if`/`else` regions of ALU instructions become predicated
//!   instructions, and the two copies of an `if` result one `sel`.
//! - [`predicate_jumps`]: `(+f0) if; <copies>; break; endif` becomes
//!   `(+f0) <copies>; (+f0) break` (also for `continue`).
//! - [`propagate_copies`] (after SIMD-width lowering and legalization, then [`dce`]): a
//!   register written only by byte-for-byte copies of another register that no longer
//!   changes is read from that register, and the copies go.
//! - [`reuse_constants`] (after legalization): a constant moved into a register again in
//!   the same block, on the same channels, is read from the first move's register.
//!
//! Each returns true when it changed the program; `backend::compile_one` runs them and logs
//! the LIR after each that did (`RUST_LOG=trace`).

use super::lir::{Base, LInst, LOp, Opnd, Pred, Program};
use ferrite_isa::{CondMod, Opcode, Type};

/// ALU opcodes with no effect besides writing `dst` (no accumulator, no control flow).
fn is_pure_alu(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Mov | Sel
            | Not
            | And
            | Or
            | Xor
            | Shr
            | Shl
            | Asr
            | Add
            | Mul
            | Avg
            | Frc
            | Rndu
            | Rndd
            | Rnde
            | Rndz
            | Mad
            | Lrp
            | Bfe
            | Bfi1
            | Bfi2
            | Bfrev
            | Fbh
            | Fbl
            | Cbit
            | Lzd
    )
}

/// Whether `i` may be removed when nothing reads its destination.
fn removable(i: &LInst) -> bool {
    let op_ok = match i.op {
        LOp::Alu(o) => is_pure_alu(o),
        LOp::Math(_) => true,
        _ => false,
    };
    op_ok && i.cmod == CondMod::None && matches!(i.dst.base, Base::V(_))
}

/// The byte range `[start, end)` of a virtual register that an operand covers at `exec`
/// channels, or the whole register (`None` end) where the region does not say (message
/// payloads are named by their first register).
fn src_ranges(i: &LInst) -> impl Iterator<Item = (u32, u32, Option<u32>)> + '_ {
    let regioned = matches!(i.op, LOp::Alu(_) | LOp::Math(_));
    i.srcs.iter().filter_map(move |s| {
        let v = s.vreg()?;
        if regioned {
            Some((v, s.off, Some(s.off + s.span(u32::from(i.exec)))))
        } else {
            Some((v, 0, None))
        }
    })
}

/// First and last GRF (32-byte unit) of `[start, end)` in a register of `bytes` bytes.
fn grfs(start: u32, end: Option<u32>, bytes: u32) -> std::ops::RangeInclusive<u32> {
    let end = end.unwrap_or(bytes).min(bytes.max(start + 1));
    start / 32..=(end.max(start + 1) - 1) / 32
}

/// Removes ALU/math instructions whose destination bytes are never read (see the module
/// documentation). Returns true if anything was removed.
pub fn dce(prog: &mut Program) -> bool {
    let nv = prog.vregs.len();
    // GRF counts per register and their first index in the flat read-count table.
    let mut base = Vec::with_capacity(nv + 1);
    let mut total = 0u32;
    for r in &prog.vregs {
        base.push(total);
        total += r.regs();
    }
    let bytes = |v: u32| prog.vregs[v as usize].bytes;
    let mut reads = vec![0u32; total as usize];
    let mut writers: Vec<Vec<u32>> = vec![Vec::new(); nv];
    for (k, i) in prog.insts.iter().enumerate() {
        for (v, s, e) in src_ranges(i) {
            for g in grfs(s, e, bytes(v)) {
                reads[(base[v as usize] + g) as usize] += 1;
            }
        }
        if removable(i) {
            writers[i.dst.vreg().unwrap() as usize].push(k as u32);
        }
    }
    let mut dead = vec![false; prog.insts.len()];
    let mut work: Vec<u32> = (0..prog.insts.len() as u32)
        .filter(|k| removable(&prog.insts[*k as usize]))
        .collect();
    let mut any = false;
    while let Some(k) = work.pop() {
        let i = &prog.insts[k as usize];
        if dead[k as usize] {
            continue;
        }
        let v = i.dst.vreg().unwrap();
        let written = grfs(
            i.dst.off,
            Some(i.dst.off + i.dst.span(u32::from(i.exec))),
            bytes(v),
        );
        // Reads of the written GRFs by other instructions (its own, e.g. `x = x + 1`, do
        // not keep it alive).
        let live = written.clone().any(|g| {
            let own = src_ranges(i)
                .filter(|(sv, s, e)| *sv == v && grfs(*s, *e, bytes(v)).contains(&g))
                .count() as u32;
            reads[(base[v as usize] + g) as usize] > own
        });
        if live {
            continue;
        }
        dead[k as usize] = true;
        any = true;
        for (sv, s, e) in src_ranges(i) {
            for g in grfs(s, e, bytes(sv)) {
                let c = &mut reads[(base[sv as usize] + g) as usize];
                *c -= 1;
                if *c == 0 && sv != v {
                    work.extend(writers[sv as usize].iter().copied());
                }
            }
        }
    }
    if any {
        let mut k = 0;
        prog.insts.retain(|_| {
            k += 1;
            !dead[k - 1]
        });
    }
    any
}

/// A byte-for-byte copy `mov dst, src` between virtual registers: no predicate,
/// conditional modifier, saturation or source modifier, the same element size and stride on
/// both sides, and no conversion (the same type, or two integer types). Returns the source
/// register and the byte distance from a destination byte to the source byte it copies.
fn byte_copy(i: &LInst) -> Option<(u32, i64)> {
    let [s] = i.srcs.as_slice() else { return None };
    let d = &i.dst;
    let same_kind = s.ty == d.ty || (!s.ty.is_float() && !d.ty.is_float());
    let ok = i.op == LOp::Alu(Opcode::Mov)
        && i.pred.is_none()
        && i.cmod == CondMod::None
        && !i.sat
        && !s.neg
        && !s.abs
        && same_kind
        && s.ty.size() == d.ty.size()
        && s.stride == d.stride
        && (s.stride > 0 || i.exec == 1);
    let (sv, dv) = (s.vreg()?, d.vreg()?);
    (ok && sv != dv).then_some((sv, i64::from(s.off) - i64::from(d.off)))
}

/// For each instruction, the `[do, while]` range of the outermost loop around it.
fn outermost_loops(prog: &Program) -> Vec<Option<(usize, usize)>> {
    let mut out = vec![None; prog.insts.len()];
    let mut open: Vec<usize> = Vec::new();
    for (k, i) in prog.insts.iter().enumerate() {
        match i.op {
            LOp::Do => open.push(k),
            LOp::While => {
                let d = open.pop().expect("balanced loops");
                if open.is_empty() {
                    out[d..=k].fill(Some((d, k)));
                }
            }
            _ => {}
        }
    }
    out
}

/// Copy propagation over virtual registers: a register `d` whose every write is a
/// byte-for-byte `mov` from the same register `s` at the same byte distance (see
/// [`byte_copy`]) is read from `s` instead, and the moves go, when `s` cannot change once
/// a move has run: every write of `s` comes before the first move in program order and
/// shares no loop with any move (a loop would run it again after the move). Each byte of
/// `d` a move wrote then equals its byte of `s` wherever `d` is read; bytes no move wrote
/// held nothing defined. Only ALU and math sources are rewritten (their regions say which
/// bytes they read); a register a message or a gather reads whole keeps its copy. Runs to
/// a fixed point (a copy of a copy), linear per round.
///
/// Lowering leaves such copies behind: a 64-bit load repacked into qwords and then copied
/// into its value's register, each 64-bit result copied into its destination, both per
/// SIMD8 piece.
pub fn propagate_copies(prog: &mut Program) -> bool {
    let mut any = false;
    for _round in 0..4 {
        if !propagate_copies_once(prog) {
            break;
        }
        any = true;
    }
    any
}

fn propagate_copies_once(prog: &mut Program) -> bool {
    let nv = prog.vregs.len();
    // Per register: its writes, and whether something reads it without a region.
    let mut writes: Vec<Vec<u32>> = vec![Vec::new(); nv];
    let mut whole = vec![false; nv];
    for (k, i) in prog.insts.iter().enumerate() {
        if let Some(v) = i.dst.vreg() {
            writes[v as usize].push(k as u32);
        }
        if !matches!(i.op, LOp::Alu(_) | LOp::Math(_)) {
            for s in &i.srcs {
                if let Some(v) = s.vreg() {
                    whole[v as usize] = true;
                }
            }
        }
    }
    let loops = outermost_loops(prog);
    // The register each copied register is read from instead, with the byte distance.
    let mut from: Vec<Option<(u32, i64)>> = vec![None; nv];
    let mut any = false;
    for d in 0..nv {
        let ws = &writes[d];
        if ws.is_empty() || whole[d] {
            continue;
        }
        let Some(c) = byte_copy(&prog.insts[ws[0] as usize]) else {
            continue;
        };
        if ws
            .iter()
            .any(|&k| byte_copy(&prog.insts[k as usize]) != Some(c))
        {
            continue;
        }
        let (s, _) = c;
        // A register that is itself replaced this round is left for the next.
        if from[s as usize].is_some() || writes[s as usize].is_empty() {
            continue;
        }
        let first = ws[0];
        let stable = writes[s as usize].iter().all(|&j| {
            j < first
                && ws.iter().all(|&m| {
                    loops[m as usize].is_none_or(|(a, w)| !(a..=w).contains(&(j as usize)))
                })
        });
        if stable {
            from[d] = Some(c);
        }
    }
    // A source register must not be replaced itself in the same round.
    for d in 0..nv {
        if let Some((s, _)) = from[d] {
            if from[s as usize].is_some() {
                from[d] = None;
            }
        }
    }
    // Every rewritten read must stay inside the source register.
    let mut fits = vec![true; nv];
    for i in &prog.insts {
        if !matches!(i.op, LOp::Alu(_) | LOp::Math(_)) {
            continue;
        }
        for o in &i.srcs {
            let Some(v) = o.vreg() else { continue };
            let Some((s, delta)) = from[v as usize] else {
                continue;
            };
            let start = i64::from(o.off) + delta;
            let end = start + i64::from(o.span(u32::from(i.exec)));
            if start < 0 || end > i64::from(prog.vregs[s as usize].bytes) {
                fits[v as usize] = false;
            }
        }
    }
    for d in 0..nv {
        if !fits[d] {
            from[d] = None;
        }
    }
    let mut dead = vec![false; prog.insts.len()];
    for (d, f) in from.iter().enumerate() {
        if f.is_some() {
            for &k in &writes[d] {
                dead[k as usize] = true;
                any = true;
            }
        }
    }
    if !any {
        return false;
    }
    for i in &mut prog.insts {
        if !matches!(i.op, LOp::Alu(_) | LOp::Math(_)) {
            continue;
        }
        for o in &mut i.srcs {
            let Some(v) = o.vreg() else { continue };
            if let Some((s, delta)) = from[v as usize] {
                o.base = Base::V(s);
                o.off = (i64::from(o.off) + delta) as u32;
            }
        }
    }
    let mut k = 0;
    prog.insts.retain(|_| {
        k += 1;
        !dead[k - 1]
    });
    true
}

/// Instructions back an identical constant move may be reused from by
/// [`reuse_constants`]: reusing it keeps its register live that much longer.
const CONSTANT_REUSE_WINDOW: usize = 48;

/// What identifies the bytes a constant move writes: value, source and destination types,
/// destination offset and stride, exec size, channel group, `WE_all`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ConstantKey(u64, Type, Type, u32, u8, u8, u8, bool);

/// A constant move `mov v, imm` with no predicate or modifier, and the key of what it writes.
fn constant_move(i: &LInst) -> Option<ConstantKey> {
    let [s] = i.srcs.as_slice() else { return None };
    let Base::Imm(bits) = s.base else { return None };
    (i.op == LOp::Alu(Opcode::Mov)
        && i.pred.is_none()
        && i.cmod == CondMod::None
        && !i.sat
        && !s.neg
        && !s.abs
        && i.dst.vreg().is_some())
    .then_some(ConstantKey(
        bits,
        s.ty,
        i.dst.ty,
        i.dst.off,
        i.dst.stride,
        i.exec,
        i.group,
        i.we_all,
    ))
}

/// Reuses constants (after legalization): a register written once, by a move of an
/// immediate, is replaced by the register of an identical move (same value, types, region,
/// exec size, channel group and `WE_all`) at most [`CONSTANT_REUSE_WINDOW`] instructions
/// earlier in the same block, which is written by nothing else either. The two moves ran on
/// the same channels (no control flow in between), so the earlier register holds the same
/// bytes wherever the later one was read. Legalization moves each immediate that an
/// instruction cannot encode (64-bit values, three-source and math operands) into a
/// register of its own, once per SIMD8 or SIMD16 piece; this leaves one per block and
/// piece within the window. A register a message or gather reads keeps its own move: a
/// split send's two payloads must not overlap (SENDS), so one constant register must not
/// become both.
pub fn reuse_constants(prog: &mut Program) -> bool {
    let nv = prog.vregs.len();
    let mut writes = vec![0u32; nv];
    let mut message_read = vec![false; nv];
    for i in &prog.insts {
        if let Some(v) = i.dst.vreg() {
            writes[v as usize] += 1;
        }
        if !matches!(i.op, LOp::Alu(_) | LOp::Math(_)) {
            for s in &i.srcs {
                if let Some(v) = s.vreg() {
                    message_read[v as usize] = true;
                }
            }
        }
    }
    let mut seen: std::collections::HashMap<_, (u32, usize)> = std::collections::HashMap::new();
    let mut to: Vec<Option<u32>> = vec![None; nv];
    let mut dead = vec![false; prog.insts.len()];
    let mut any = false;
    for (k, i) in prog.insts.iter().enumerate() {
        if i.op.is_control() {
            seen.clear();
            continue;
        }
        let Some(key) = constant_move(i) else {
            continue;
        };
        let v = i.dst.vreg().unwrap();
        if writes[v as usize] != 1 || message_read[v as usize] {
            continue;
        }
        match seen.get(&key) {
            Some(&(w, at))
                if k - at <= CONSTANT_REUSE_WINDOW
                    && prog.vregs[w as usize].bytes == prog.vregs[v as usize].bytes =>
            {
                to[v as usize] = Some(w);
                dead[k] = true;
                any = true;
            }
            _ => {
                seen.insert(key, (v, k));
            }
        }
    }
    if !any {
        return false;
    }
    for i in &mut prog.insts {
        for o in &mut i.srcs {
            if let Some(w) = o.vreg().and_then(|v| to[v as usize]) {
                o.base = Base::V(w);
            }
        }
    }
    let mut k = 0;
    prog.insts.retain(|_| {
        k += 1;
        !dead[k - 1]
    });
    true
}

/// Whether `t` is a 32-bit type a payload copy may be propagated through.
fn is_dword(t: Type) -> bool {
    matches!(t, Type::D | Type::UD | Type::F)
}

/// Replaces reads of registers that hold a copy of a scalar payload register with the payload
/// register itself (see the module documentation). `payload_end` is the first GRF the
/// register allocator may hand out: payload registers below it are never written.
pub fn propagate_payload_copies(prog: &mut Program, payload_end: u8) -> bool {
    let nv = prog.vregs.len();
    let mut writes = vec![0u32; nv];
    for i in &prog.insts {
        if let Some(v) = i.dst.vreg() {
            writes[v as usize] += 1;
        }
    }
    // The payload operand each single-write copy register holds, with the bytes it covers.
    let mut copy: Vec<Option<(Opnd, u32)>> = vec![None; nv];
    for i in &prog.insts {
        let Some(v) = i.dst.vreg() else { continue };
        let [s] = i.srcs.as_slice() else { continue };
        let plain = i.op == LOp::Alu(Opcode::Mov)
            && writes[v as usize] == 1
            && i.pred.is_none()
            && i.cmod == CondMod::None
            && !i.sat
            && !i.we_all
            && i.group == 0
            && i.dst.off == 0
            && i.dst.stride == 1
            && i.dst.ty == s.ty
            && is_dword(s.ty)
            && !s.neg
            && !s.abs
            && s.stride == 0
            && matches!(s.base, Base::G(g) if g < payload_end);
        if plain {
            copy[v as usize] = Some((*s, i.dst.span(u32::from(i.exec))));
        }
    }
    let mut any = false;
    for i in &mut prog.insts {
        // Regioned ALU sources only; three-source (align16) and math operands keep their
        // registers, as do the flag-setting `mov`s of booleans (retyped reads).
        let ok = match i.op {
            LOp::Alu(Opcode::Mad | Opcode::Lrp | Opcode::Bfe | Opcode::Bfi2) => false,
            LOp::Alu(o) => is_pure_alu(o) || o == Opcode::Cmp,
            _ => false,
        };
        if !ok {
            continue;
        }
        let exec = u32::from(i.exec);
        for s in &mut i.srcs {
            let Some(v) = s.vreg() else { continue };
            let Some((p, covered)) = copy[v as usize] else {
                continue;
            };
            if s.ty != p.ty || s.off + s.span(exec) > covered {
                continue;
            }
            *s = Opnd {
                neg: s.neg,
                abs: s.abs,
                ..p
            };
            any = true;
        }
    }
    any
}

/// Whether `o` names exactly the bytes `d` (a destination) wrote: same register, offset,
/// stride and element size.
fn same_region(o: &Opnd, d: &Opnd) -> bool {
    o.base == d.base && o.off == d.off && o.stride == d.stride && o.ty.size() == d.ty.size()
}

/// Whether `a` and `b` run on the same channels (exec size, channel group, `WE_all`).
fn same_channels(a: &LInst, b: &LInst) -> bool {
    a.exec == b.exec && a.group == b.group && a.we_all == b.we_all
}

/// Whether `i` writes any byte of virtual register `v`.
fn writes_vreg(i: &LInst, v: u32) -> bool {
    i.dst.vreg() == Some(v)
}

/// A flag-setting move: `mov.nz null, x` of a register, no predicate, modifier or
/// saturation. Returns `x`.
fn flag_move(i: &LInst) -> Option<Opnd> {
    let [x] = i.srcs.as_slice() else { return None };
    (i.op == LOp::Alu(Opcode::Mov)
        && i.cmod == CondMod::Nz
        && i.dst.base == Base::Null
        && i.pred.is_none()
        && !i.sat
        && !x.neg
        && !x.abs
        && x.stride != 0
        && x.vreg().is_some()
        && !x.ty.is_float())
    .then_some(*x)
}

/// Removes `mov.nz null, x` instructions whose flag the program already holds or that the
/// instruction computing `x` can set itself (see the module documentation). Scans back from
/// each such move within its block (no control flow in between, so the channel mask is the
/// same) to the last instruction that wrote the flag or `x`:
///
/// - a `cmp` (any conditional modifier) that wrote exactly `x` on the same channels and flag:
///   its flag bit is set exactly where it wrote `~0` into `x`, so the move is redundant;
/// - an identical `mov.nz null, x` with `x` unchanged since: redundant too;
/// - an `and`/`or`/`xor`/`not` of integers that wrote exactly `x` with no conditional
///   modifier, and no instruction in between reads the flag: it gets `.nz` (the condition
///   tests the integer result, as the move did), and the move goes.
///
/// A `cmp` whose destination no instruction reads any more then writes `null`.
pub fn fold_flag_moves(prog: &mut Program) -> bool {
    let mut dead = vec![false; prog.insts.len()];
    let mut any = false;
    for k in 0..prog.insts.len() {
        let Some(x) = flag_move(&prog.insts[k]) else {
            continue;
        };
        let v = x.vreg().unwrap();
        let mut flag_read = false;
        for j in (0..k).rev() {
            if dead[j] {
                continue;
            }
            let p = &prog.insts[j];
            if p.op.is_control() {
                break;
            }
            let wrote_x = writes_vreg(p, v);
            if !p.writes_flag() && !wrote_x {
                flag_read |= p.reads_flag();
                continue;
            }
            let m = &prog.insts[k];
            let same = same_channels(p, m) && p.flag_sub == m.flag_sub && p.pred.is_none();
            let exact = wrote_x && same_region(&x, &p.dst) && !p.sat;
            let redundant = same
                && ((p.op == LOp::Alu(Opcode::Cmp) && p.writes_flag() && exact)
                    || (!wrote_x && flag_move(p) == Some(x)));
            let logic = matches!(
                p.op,
                LOp::Alu(Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Not)
            );
            let foldable = same
                && exact
                && logic
                && !flag_read
                && !p.writes_flag()
                && !p.dst.ty.is_float()
                && p.srcs
                    .iter()
                    .all(|s| s.ty.size() == p.dst.ty.size() && !s.ty.is_float());
            if redundant || foldable {
                if foldable {
                    prog.insts[j].cmod = CondMod::Nz;
                }
                dead[k] = true;
                any = true;
            }
            break;
        }
    }
    if !any {
        return false;
    }
    let mut k = 0;
    prog.insts.retain(|_| {
        k += 1;
        !dead[k - 1]
    });
    // Destinations of flag-writing compares that nothing reads.
    let mut read = vec![false; prog.vregs.len()];
    for i in &prog.insts {
        for s in &i.srcs {
            if let Some(v) = s.vreg() {
                read[v as usize] = true;
            }
        }
    }
    for i in &mut prog.insts {
        if i.op == LOp::Alu(Opcode::Cmp) && i.writes_flag() && i.pred.is_none() {
            if let Some(v) = i.dst.vreg() {
                if !read[v as usize] {
                    i.dst = Opnd::null(i.dst.ty);
                }
            }
        }
    }
    true
}

/// Whether `i` may run under a predicate instead of inside an `if`: an ALU or math
/// instruction on the block's channels that neither reads nor writes the flag (a `sel`
/// reads its predicate as the selector) and has no side effect.
fn predicable(i: &LInst, outer: &LInst) -> bool {
    let op_ok = match i.op {
        LOp::Alu(o) => is_pure_alu(o) && o != Opcode::Sel,
        LOp::Math(_) => true,
        _ => false,
    };
    op_ok
        && i.pred.is_none()
        && i.cmod == CondMod::None
        && same_channels(i, outer)
        && !i.we_all
        && matches!(i.dst.base, Base::V(_))
}

/// Most instructions moved from an `if` before a `break`/`continue` under its predicate.
const MAX_PREDICATED_COPIES: usize = 8;

/// Rewrites `(+f0) if; <ALU>; break; endif` into `(+f0) <ALU>; (+f0) break` (and the same
/// for `continue`), see the module documentation. The instructions before the jump (the
/// copies of the loop's results or parameters) run on the channels that take the jump,
/// as inside the `if`; Gen9's BREAK and CONT take a predicate (a channel jumps where it
/// holds), and their JIP/UIP follow from the structure as before.
pub fn predicate_jumps(prog: &mut Program) -> bool {
    let mut dead = vec![false; prog.insts.len()];
    let mut any = false;
    let n = prog.insts.len();
    let mut k = 0;
    while k < n {
        let i = &prog.insts[k];
        let Some(pred) = i.pred.filter(|_| i.op == LOp::If) else {
            k += 1;
            continue;
        };
        // The jump and the ENDIF right after the copies.
        let mut j = k + 1;
        while j < n && j - k <= MAX_PREDICATED_COPIES + 1 && predicable(&prog.insts[j], i) {
            j += 1;
        }
        let fits = j + 1 < n
            && matches!(prog.insts[j].op, LOp::Break | LOp::Cont)
            && prog.insts[j].pred.is_none()
            && same_channels(&prog.insts[j], i)
            && prog.insts[j + 1].op == LOp::Endif;
        if !fits {
            k += 1;
            continue;
        }
        for q in k + 1..=j {
            prog.insts[q].pred = Some(pred);
            prog.insts[q].flag_sub = pred.flag_sub;
        }
        dead[k] = true;
        dead[j + 1] = true;
        any = true;
        k = j + 2;
    }
    if any {
        let mut k = 0;
        prog.insts.retain(|_| {
            k += 1;
            !dead[k - 1]
        });
    }
    any
}

/// Most instructions in one arm of an `if` that [`flatten_ifs`] runs under a predicate
/// (the limit Mesa's NIR uses for Intel's peephole select): past it, running both arms
/// for every channel costs more than the jump saves.
const MAX_FLATTENED_ARM: usize = 8;

/// The end (exclusive) of a run of predicable instructions from `from`, if it is at most
/// [`MAX_FLATTENED_ARM`] long.
fn predicable_run(prog: &Program, from: usize, outer: &LInst) -> Option<usize> {
    let mut j = from;
    while j < prog.insts.len() && predicable(&prog.insts[j], outer) {
        j += 1;
        if j - from > MAX_FLATTENED_ARM {
            return None;
        }
    }
    Some(j)
}

/// A plain copy a `sel` can take over: `mov` of the destination's type (no conversion, no
/// saturation), at most 32 bits.
fn plain_copy(i: &LInst) -> Option<Opnd> {
    let [x] = i.srcs.as_slice() else { return None };
    (i.op == LOp::Alu(Opcode::Mov) && !i.sat && x.ty == i.dst.ty && x.ty.size() <= 4).then_some(*x)
}

/// Whether `i` reads or writes any byte of virtual register `v`.
fn touches(i: &LInst, v: u32) -> bool {
    i.dst.vreg() == Some(v) || i.srcs.iter().any(|s| s.vreg() == Some(v))
}

/// If-conversion: an `if` (with or without `else`) whose arms hold at most
/// [`MAX_FLATTENED_ARM`] ALU or math instructions each, none of which touches the flag, is
/// replaced by its arms run under the `if`'s predicate (the `else` arm under the inverse).
/// A predicated instruction writes exactly the channels the arm would have run on, so each
/// register holds what it held after the `if`. Then each copy of the `else` arm that
/// writes what a copy of the `then` arm wrote (the two sides of an `if` result) becomes
/// one `(+f0) sel r, then, else` in its place, when nothing between the two touches `r` or
/// changes the `then` copy's source. Returns true if any `if` went.
pub fn flatten_ifs(prog: &mut Program) -> bool {
    // One pass that copies into a new list (splicing each arm in place would move the rest
    // of the program once per `if`: quadratic in a program of many small `if`s).
    let mut out: Vec<LInst> = Vec::with_capacity(prog.insts.len());
    let mut any = false;
    let mut k = 0;
    while k < prog.insts.len() {
        let i = &prog.insts[k];
        let Some(flat) = i
            .pred
            .filter(|_| i.op == LOp::If)
            .and_then(|pred| flattened_if(prog, k, pred))
        else {
            out.push(prog.insts[k].clone());
            k += 1;
            continue;
        };
        let (arm, endif) = flat;
        out.extend(arm);
        any = true;
        k = endif + 1;
    }
    if any {
        prog.insts = out;
    }
    any
}

/// The predicated arms (with `sel` merges) that replace the `if` at `k` through its
/// `endif`, and the `endif`'s index; `None` if the `if` does not qualify (see
/// [`flatten_ifs`]).
fn flattened_if(prog: &Program, k: usize, pred: Pred) -> Option<(Vec<LInst>, usize)> {
    let outer = &prog.insts[k];
    let t_end = predicable_run(prog, k + 1, outer)?;
    let (e_range, endif) = match prog.insts.get(t_end).map(|x| x.op) {
        Some(LOp::Endif) => (t_end..t_end, t_end),
        Some(LOp::Else) => {
            let e = predicable_run(prog, t_end + 1, outer)?;
            if prog.insts.get(e).map(|x| x.op) != Some(LOp::Endif) {
                return None;
            }
            (t_end + 1..e, e)
        }
        _ => return None,
    };
    let inverse = Pred {
        inverse: !pred.inverse,
        ..pred
    };
    let mut arm: Vec<LInst> = Vec::with_capacity(endif - k);
    for q in k + 1..t_end {
        let mut x = prog.insts[q].clone();
        x.pred = Some(pred);
        arm.push(x);
    }
    let then_len = arm.len();
    for q in e_range {
        let mut x = prog.insts[q].clone();
        x.pred = Some(inverse);
        arm.push(x);
    }
    merge_into_sel(&mut arm, then_len, pred);
    Some((arm, endif))
}

/// Turns the pairs of copies `(+f0) mov r, a` (in `arm[..then_len]`) and `(-f0) mov r, b`
/// (after it) into `(+f0) sel r, a, b` at the second one's place (see [`flatten_ifs`]).
fn merge_into_sel(arm: &mut Vec<LInst>, then_len: usize, pred: Pred) {
    let mut gone = vec![false; arm.len()];
    for e in then_len..arm.len() {
        let Some(b) = plain_copy(&arm[e]) else {
            continue;
        };
        let r = arm[e].dst;
        let Some(v) = r.vreg() else { continue };
        // The last then-arm copy into exactly `r`.
        let Some(t) = (0..then_len)
            .rev()
            .find(|&t| !gone[t] && touches(&arm[t], v))
        else {
            continue;
        };
        let Some(a) = plain_copy(&arm[t]) else {
            continue;
        };
        if arm[t].dst != r || b.ty != a.ty {
            continue;
        }
        let clobbered = (t + 1..e).any(|q| {
            !gone[q]
                && (touches(&arm[q], v) || a.vreg().is_some_and(|av| arm[q].dst.vreg() == Some(av)))
        });
        if clobbered {
            continue;
        }
        let sel = &mut arm[e];
        sel.op = LOp::Alu(Opcode::Sel);
        sel.srcs = vec![a, b];
        sel.pred = Some(pred);
        gone[t] = true;
    }
    let mut k = 0;
    arm.retain(|_| {
        k += 1;
        !gone[k - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::lir::Builder;

    fn text(p: &Program) -> String {
        p.to_string()
    }

    #[test]
    fn dce_removes_unread_components_and_their_inputs() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let id = b.vreg(Type::D, 3);
        let t = b.vreg(Type::D, 1);
        b.alu2(Opcode::Add, t, Opnd::g(0, 4, Type::D, 0), Opnd::d(1));
        // Components x, y and z; only x is read.
        b.mov(id, t);
        b.alu2(Opcode::Mul, id.offset(64), t, Opnd::d(2));
        b.alu2(Opcode::Mul, id.offset(128), t, Opnd::d(3));
        let a = b.vreg(Type::UD, 1);
        b.alu2(Opcode::Shl, a, id.retype(Type::UD), Opnd::ud(2));
        let data = b.vreg(Type::UD, 1);
        b.inst(
            LOp::UntypedWrite {
                surf: crate::backend::lir::Surface::Bti(0),
                comps: 1,
                comp_stride: 64,
            },
            Opnd::null(Type::UD),
            vec![a, data],
        );
        let before = text(&p);
        assert!(dce(&mut p));
        let after = text(&p);
        assert_eq!(before.lines().count() - 2, after.lines().count(), "{after}");
        assert!(
            !after.contains("mul"),
            "the y and z components are gone:\n{after}"
        );
        assert!(after.contains("add") && after.contains("mov") && after.contains("shl"));
        assert!(!dce(&mut p), "a second run finds nothing");
    }

    #[test]
    fn dce_follows_chains_and_ignores_self_reads() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let x = b.vreg(Type::D, 1);
        let y = b.vreg(Type::D, 1);
        b.mov(x, Opnd::d(5));
        b.alu2(Opcode::Add, x, x, Opnd::d(1)); // x = x + 1, read by nobody else
        b.alu2(Opcode::Add, y, x, Opnd::d(2)); // unread
                                               // A flag write stays even though its destination is unread.
        b.cmp(CondMod::G, y, x, Opnd::d(0));
        let before = text(&p);
        assert!(dce(&mut p), "{before}");
        let after = text(&p);
        assert_eq!(
            after.lines().count(),
            3,
            "only the unread add goes:\n{after}"
        );
        assert!(after.contains("cmp"));
    }

    #[test]
    fn dce_keeps_writes_read_by_a_message_payload() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let payload = b.vreg(Type::UD, 2);
        b.mov(payload, Opnd::ud(1));
        b.mov(payload.offset(32), Opnd::ud(2));
        // The send names only the first register of its two-register payload.
        b.inst(
            LOp::Send {
                sfid: ferrite_isa::Sfid::DpSampler,
                desc: 0,
                ex_desc: 0,
                mlen: 2,
                ex_mlen: 0,
                rlen: 0,
                eot: false,
                indirect: false,
            },
            Opnd::null(Type::UD),
            vec![payload.scalar()],
        );
        assert!(!dce(&mut p), "{p}");
        assert_eq!(p.insts.len(), 3);
    }

    #[test]
    fn payload_copy_is_read_from_the_payload_register() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let c = b.vreg(Type::F, 1);
        let x = b.vreg(Type::F, 1);
        let y = b.vreg(Type::F, 1);
        b.mov(c, Opnd::g(1, 4, Type::F, 0));
        b.alu2(Opcode::Mul, y, c.negate(), x);
        b.inst(LOp::Eot, Opnd::null(Type::UD), vec![y]);
        assert!(propagate_payload_copies(&mut p, 3));
        let after = text(&p);
        assert!(
            after.contains("mul(16@0) v2+0<1>:F, -g1+4<0>:F, v1+0<1>:F"),
            "{after}"
        );
        assert!(dce(&mut p));
        assert_eq!(p.insts.len(), 2, "the copy is dead:\n{p}");
    }

    #[test]
    fn copies_of_allocatable_or_rewritten_registers_are_kept() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let c = b.vreg(Type::D, 1);
        let d = b.vreg(Type::D, 1);
        let y = b.vreg(Type::D, 1);
        // g5 is past the payload; d is written twice.
        b.mov(c, Opnd::g(5, 0, Type::D, 0));
        b.mov(d, Opnd::g(1, 0, Type::D, 0));
        b.alu2(Opcode::Add, d, d, Opnd::d(1));
        b.alu2(Opcode::Add, y, c, d);
        assert!(!propagate_payload_copies(&mut p, 3), "{p}");
    }

    #[test]
    fn copies_of_a_stable_register_are_read_from_it() {
        // A SIMD16 DF value repacked in two SIMD8 pieces, then copied per piece.
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let raw = b.vreg(Type::UD, 2);
        let packed = b.vreg(Type::UQ, 1);
        let val = b.vreg(Type::DF, 1);
        let out = b.vreg(Type::DF, 1);
        // Each instruction is split into its pieces in turn.
        for q in 0..2u8 {
            let o = u32::from(q) * 32;
            b.at(8, 8 * q, false).mov(
                Opnd {
                    stride: 2,
                    ..packed.retype(Type::UD).offset(2 * o)
                },
                raw.offset(o),
            );
        }
        for q in 0..2u8 {
            let o = u32::from(q) * 64;
            b.at(8, 8 * q, false)
                .mov(val.retype(Type::UQ).offset(o), packed.offset(o));
        }
        for q in 0..2u8 {
            let o = u32::from(q) * 64;
            b.at(8, 8 * q, false)
                .alu2(Opcode::Add, out.offset(o), val.offset(o), val.offset(o));
        }
        let before = p.to_string();
        assert!(propagate_copies(&mut p), "{before}");
        assert_eq!(
            body(&p),
            [
                "mov(8@0) v1+0<2>:UD, v0+0<1>:UD",
                "mov(8@8) v1+64<2>:UD, v0+32<1>:UD",
                "add(8@0) v3+0<1>:DF, v1+0<1>:DF, v1+0<1>:DF",
                "add(8@8) v3+64<1>:DF, v1+64<1>:DF, v1+64<1>:DF",
            ],
            "before:\n{before}"
        );
        assert!(!propagate_copies(&mut p));
    }

    #[test]
    fn chains_of_copies_and_offsets_collapse() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let a = b.vreg(Type::D, 2);
        let c = b.vreg(Type::UD, 1);
        let e = b.vreg(Type::D, 1);
        let r = b.vreg(Type::D, 1);
        b.alu2(
            Opcode::Add,
            a.offset(32),
            Opnd::g(2, 0, Type::D, 1),
            Opnd::d(1),
        );
        b.mov(c, a.retype(Type::UD).offset(32));
        b.mov(e, c.retype(Type::D));
        b.alu2(Opcode::Mul, r, e.negate(), Opnd::d(3));
        assert!(propagate_copies(&mut p));
        assert_eq!(
            body(&p),
            [
                "add(8@0) v0+32<1>:D, g2+0<1>:D, 0x1:D",
                "mul(8@0) v3+0<1>:D, -v0+32<1>:D, 0x3:D",
            ]
        );
    }

    #[test]
    fn copies_that_may_see_another_value_stay() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (s, d, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
        // s is written again after the copy.
        b.mov(s, Opnd::d(1));
        b.mov(d, s);
        b.alu2(Opcode::Add, s, s, Opnd::d(1));
        b.alu2(Opcode::Add, r, d, s);
        // The copy runs in a loop that also writes its source.
        let (s2, d2) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
        b.mov(s2, Opnd::d(0));
        b.control(LOp::Do);
        b.mov(d2, s2);
        b.alu2(Opcode::Add, s2, r, Opnd::d(2));
        b.alu2(Opcode::Add, r, d2, r);
        b.control(LOp::While);
        // A conversion, a predicated copy, a copy read by a message, and a copy from two
        // different sources.
        let (f, g, h, m, n) = (
            b.vreg(Type::F, 1),
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
        );
        b.mov(f, r);
        b.mov(g, r).pred = Some(P);
        b.mov(h, r);
        b.mov(m, r);
        b.mov(m, s);
        b.mov(n, r);
        b.inst(
            LOp::UntypedWrite {
                surf: crate::backend::lir::Surface::Bti(0),
                comps: 1,
                comp_stride: 32,
            },
            Opnd::null(Type::UD),
            vec![n, h],
        );
        b.alu2(Opcode::Add, r, f.retype(Type::D), g);
        b.alu2(Opcode::Add, r, m, h);
        let before = body(&p);
        assert!(!propagate_copies(&mut p), "{before:#?}");
    }

    #[test]
    fn a_copy_after_its_sources_loop_is_propagated() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (s, d, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
        b.mov(s, Opnd::d(0));
        b.control(LOp::Do);
        b.alu2(Opcode::Add, s, s, Opnd::d(1));
        b.control(LOp::While);
        b.control(LOp::Do);
        b.mov(d, s);
        b.alu2(Opcode::Add, r, d, r);
        b.control(LOp::While);
        assert!(propagate_copies(&mut p));
        assert_eq!(body(&p)[5], "add(8@0) v2+0<1>:D, v0+0<1>:D, v2+0<1>:D");
        assert_eq!(p.insts.len(), 7);
    }

    fn body(p: &Program) -> Vec<String> {
        p.insts.iter().map(|i| i.to_string()).collect()
    }

    const P: Pred = Pred {
        flag_sub: 0,
        inverse: false,
    };

    #[test]
    fn identical_constant_moves_in_a_block_share_one_register() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (x, y) = (b.vreg(Type::DF, 1), b.vreg(Type::DF, 1));
        let (c0, c1, c2, c3) = (
            b.vreg(Type::DF, 1),
            b.vreg(Type::DF, 1),
            b.vreg(Type::DF, 1),
            b.vreg(Type::DF, 1),
        );
        let one = Opnd::imm(Type::DF, 1f64.to_bits());
        b.mov(c0, one);
        b.alu2(Opcode::Add, x, x, c0);
        b.mov(c1, one);
        b.alu2(Opcode::Add, y, y, c1);
        // Another channel group: its own constant.
        b.at(8, 8, false).mov(c2, one);
        b.at(8, 8, false).alu2(Opcode::Add, y, y, c2);
        // After control flow the mask may differ.
        b.control(LOp::If).pred = Some(P);
        b.mov(c3, one);
        b.alu2(Opcode::Mul, x, x, c3);
        b.control(LOp::Endif);
        let before = body(&p);
        assert!(reuse_constants(&mut p), "{before:#?}");
        assert_eq!(
            body(&p),
            [
                "mov(8@0) v2+0<1>:DF, 0x3ff0000000000000:DF",
                "add(8@0) v0+0<1>:DF, v0+0<1>:DF, v2+0<1>:DF",
                "add(8@0) v1+0<1>:DF, v1+0<1>:DF, v2+0<1>:DF",
                "mov(8@8) v4+0<1>:DF, 0x3ff0000000000000:DF",
                "add(8@8) v1+0<1>:DF, v1+0<1>:DF, v4+0<1>:DF",
                "(+f0.0) If(8@0) null<1>:D",
                "mov(8@0) v5+0<1>:DF, 0x3ff0000000000000:DF",
                "mul(8@0) v0+0<1>:DF, v0+0<1>:DF, v5+0<1>:DF",
                "Endif(8@0) null<1>:D",
            ],
            "before: {before:#?}"
        );
        assert!(!reuse_constants(&mut p));
    }

    #[test]
    fn constants_rewritten_predicated_or_far_apart_are_not_shared() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (x, c0, c1, c2, c3) = (
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
        );
        // c0 is written twice; c1 under a predicate.
        b.mov(c0, Opnd::d(7));
        b.alu2(Opcode::Add, c0, c0, x);
        b.mov(c1, Opnd::d(7)).pred = Some(P);
        b.mov(c2, Opnd::d(7));
        for _ in 0..CONSTANT_REUSE_WINDOW {
            b.alu2(Opcode::Add, x, x, c2);
        }
        b.mov(c3, Opnd::d(7));
        b.alu2(Opcode::Add, x, c1, c3);
        let before = body(&p);
        assert!(!reuse_constants(&mut p), "{before:#?}");
    }

    /// An untyped write of the constant 0 to address 0 (specop_compare's first store): the
    /// address and the data are the same constant, but a split send's two payloads must not
    /// overlap, so the payload registers keep their own moves.
    #[test]
    fn constants_a_message_reads_keep_their_own_register() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (x, addr, data) = (
            b.vreg(Type::UD, 1),
            b.vreg(Type::UD, 1),
            b.vreg(Type::UD, 1),
        );
        b.mov(x, Opnd::ud(0));
        b.mov(addr, Opnd::ud(0));
        b.mov(data, Opnd::ud(0));
        b.inst(
            LOp::UntypedWrite {
                surf: crate::backend::lir::Surface::Bti(0),
                comps: 1,
                comp_stride: 32,
            },
            Opnd::null(Type::UD),
            vec![addr, data],
        );
        b.alu2(Opcode::Add, x, x, x);
        let before = body(&p);
        assert!(!reuse_constants(&mut p), "{before:#?}");
    }

    #[test]
    fn flag_move_after_its_cmp_goes_and_the_unread_cmp_writes_null() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let x = b.vreg(Type::UD, 1);
        let c = b.vreg(Type::D, 1);
        b.cmp(CondMod::Ge, c.retype(Type::UD), x, Opnd::ud(4));
        b.flag_from(c);
        b.control(LOp::If).pred = Some(P);
        b.control(LOp::Endif);
        let before = body(&p);
        assert_eq!(before[1], "mov.nz.f0.0(16@0) null<1>:D, v1+0<1>:D");
        assert!(fold_flag_moves(&mut p));
        assert_eq!(
            body(&p),
            [
                "cmp.ge.f0.0(16@0) null<1>:UD, v0+0<1>:UD, 0x4:UD",
                "(+f0.0) If(16@0) null<1>:D",
                "Endif(16@0) null<1>:D",
            ],
            "before: {before:#?}"
        );
        assert!(!fold_flag_moves(&mut p));
    }

    #[test]
    fn flag_move_stays_when_the_flag_was_rewritten_or_the_block_changed() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let x = b.vreg(Type::D, 1);
        let c = b.vreg(Type::D, 1);
        let t = b.vreg(Type::D, 1);
        b.cmp(CondMod::L, c, x, Opnd::d(0));
        // Another comparison writes the flag in between.
        b.cmp(CondMod::G, t, x, Opnd::d(9));
        b.flag_from(c);
        b.control(LOp::If).pred = Some(P);
        // A move in a nested block: the channel mask differs from the cmp's.
        b.flag_from(t);
        b.control(LOp::Endif);
        // The cmp is at exec size 1: it set only channel 0's flag.
        let u = b.vreg(Type::D, 1);
        b.at(1, 0, true)
            .cmp(CondMod::Z, u.scalar(), x.scalar(), Opnd::d(1));
        b.flag_from(u.scalar());
        let before = body(&p);
        assert!(!fold_flag_moves(&mut p), "{before:#?}");
        // The mov.nz of a scalar region is not a flag move of a register (stride 0).
        assert_eq!(body(&p), before);
    }

    #[test]
    fn second_flag_move_of_the_same_value_is_redundant() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let c = b.vreg(Type::D, 1);
        let (d0, d1) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
        b.mov(c, Opnd::g(1, 0, Type::D, 0));
        b.flag_from(c);
        b.alu2(Opcode::Sel, d0, Opnd::g(1, 4, Type::D, 0), Opnd::d(1))
            .pred = Some(P);
        b.flag_from(c);
        b.alu2(Opcode::Sel, d1, Opnd::g(1, 8, Type::D, 0), Opnd::d(2))
            .pred = Some(P);
        assert!(fold_flag_moves(&mut p));
        let after = body(&p);
        assert_eq!(after.len(), 4, "{after:#?}");
        assert_eq!(
            after.iter().filter(|l| l.starts_with("mov.nz")).count(),
            1,
            "{after:#?}"
        );
    }

    #[test]
    fn flag_move_folds_into_the_logic_op_that_computed_it() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (a, c, d) = (b.vreg(Type::F, 1), b.vreg(Type::F, 1), b.vreg(Type::UD, 1));
        let t = b.vreg(Type::F, 1);
        b.cmp(CondMod::L, t, a, c);
        let t2 = b.vreg(Type::F, 1);
        b.cmp(CondMod::G, t2, a, c);
        b.alu2(Opcode::Or, d, t.retype(Type::UD), t2.retype(Type::UD));
        b.flag_from(d);
        b.control(LOp::If).pred = Some(P);
        b.control(LOp::Endif);
        assert!(fold_flag_moves(&mut p));
        let after = body(&p);
        assert_eq!(after.len(), 5, "{after:#?}");
        assert_eq!(
            after[2],
            "or.nz.f0.0(8@0) v2+0<1>:UD, v3+0<1>:UD, v4+0<1>:UD"
        );
    }

    #[test]
    fn flag_move_does_not_fold_past_a_flag_read() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (x, y, d, e) = (
            b.vreg(Type::UD, 1),
            b.vreg(Type::UD, 1),
            b.vreg(Type::UD, 1),
            b.vreg(Type::UD, 1),
        );
        b.alu2(Opcode::And, d, x, y);
        // Reads the flag an earlier instruction set: `and.nz` would change what it sees.
        b.mov(e, x).pred = Some(P);
        b.flag_from(d);
        let before = body(&p);
        assert!(!fold_flag_moves(&mut p), "{before:#?}");
    }

    #[test]
    fn conditional_break_becomes_a_predicated_break() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let (i, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
        b.mov(i, Opnd::d(0));
        b.control(LOp::Do);
        b.cmp(CondMod::Ge, Opnd::null(Type::D), i, Opnd::d(10));
        b.control(LOp::If).pred = Some(P);
        b.mov(r, i);
        b.control(LOp::Break);
        b.control(LOp::Endif);
        b.alu2(Opcode::Add, i, i, Opnd::d(1));
        b.control(LOp::While);
        assert!(predicate_jumps(&mut p));
        assert_eq!(
            body(&p),
            [
                "mov(16@0) v0+0<1>:D, 0x0:D",
                "Do(16@0) null<1>:D",
                "cmp.ge.f0.0(16@0) null<1>:D, v0+0<1>:D, 0xa:D",
                "(+f0.0) mov(16@0) v1+0<1>:D, v0+0<1>:D",
                "(+f0.0) Break(16@0) null<1>:D",
                "add(16@0) v0+0<1>:D, v0+0<1>:D, 0x1:D",
                "While(16@0) null<1>:D",
            ]
        );
    }

    #[test]
    fn jumps_after_other_work_or_with_an_else_keep_their_if() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (i, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
        b.control(LOp::Do);
        b.control(LOp::If).pred = Some(P);
        // A message before the jump cannot be predicated here.
        b.inst(
            LOp::UntypedWrite {
                surf: crate::backend::lir::Surface::Bti(0),
                comps: 1,
                comp_stride: 32,
            },
            Opnd::null(Type::UD),
            vec![i, r],
        );
        b.control(LOp::Break);
        b.control(LOp::Endif);
        b.control(LOp::If).pred = Some(P);
        b.control(LOp::Cont);
        b.control(LOp::Else);
        b.control(LOp::Break);
        b.control(LOp::Endif);
        b.control(LOp::While);
        let before = body(&p);
        assert!(!predicate_jumps(&mut p), "{before:#?}");
    }

    #[test]
    fn small_if_else_becomes_predicated_code_and_a_sel() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let (x, y, r, t) = (
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
            b.vreg(Type::D, 1),
        );
        b.cmp(
            CondMod::Ge,
            Opnd::null(Type::UD),
            x.retype(Type::UD),
            Opnd::ud(1),
        );
        b.control(LOp::If).pred = Some(P);
        b.alu2(Opcode::Add, t, x, y);
        b.mov(r, t);
        b.control(LOp::Else);
        b.mov(r, y);
        b.control(LOp::Endif);
        b.alu2(Opcode::Add, x, r, Opnd::d(1));
        assert!(flatten_ifs(&mut p));
        assert_eq!(
            body(&p),
            [
                "cmp.ge.f0.0(16@0) null<1>:UD, v0+0<1>:UD, 0x1:UD",
                "(+f0.0) add(16@0) v3+0<1>:D, v0+0<1>:D, v1+0<1>:D",
                "(+f0.0) sel(16@0) v2+0<1>:D, v3+0<1>:D, v1+0<1>:D",
                "add(16@0) v0+0<1>:D, v2+0<1>:D, 0x1:D",
            ]
        );
        assert!(!flatten_ifs(&mut p));
    }

    #[test]
    fn if_without_else_keeps_its_moves_predicated() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (x, r) = (b.vreg(Type::F, 1), b.vreg(Type::F, 1));
        b.mov(r, Opnd::imm(Type::F, 0));
        b.control(LOp::If).pred = Some(Pred {
            flag_sub: 0,
            inverse: true,
        });
        b.math(ferrite_isa::MathFunction::Sqrt, r, vec![x]);
        b.control(LOp::Endif);
        assert!(flatten_ifs(&mut p));
        assert_eq!(
            body(&p),
            [
                "mov(8@0) v1+0<1>:F, 0x0:F",
                "(-f0.0) math.sqrt(8@0) v1+0<1>:F, v0+0<1>:F",
            ]
        );
    }

    #[test]
    fn ifs_with_messages_flag_writes_or_long_arms_stay() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (x, r) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1));
        b.control(LOp::If).pred = Some(P);
        b.inst(
            LOp::UntypedRead {
                surf: crate::backend::lir::Surface::Bti(0),
                comps: 1,
                comp_stride: 32,
            },
            r,
            vec![x],
        );
        b.control(LOp::Endif);
        b.control(LOp::If).pred = Some(P);
        b.cmp(CondMod::Z, r, x, Opnd::d(0));
        b.control(LOp::Endif);
        b.control(LOp::If).pred = Some(P);
        for _ in 0..=MAX_FLATTENED_ARM {
            b.alu2(Opcode::Add, r, r, x);
        }
        b.control(LOp::Endif);
        // A sel reads the flag as its selector.
        b.control(LOp::If).pred = Some(P);
        b.alu2(Opcode::Sel, r, r, x).cmod = CondMod::None;
        b.control(LOp::Endif);
        // Uniform (exec size 1, WE_all) code runs whatever the mask.
        b.control(LOp::If).pred = Some(P);
        b.at(1, 0, true).mov(r.scalar(), x.scalar());
        b.control(LOp::Endif);
        let before = body(&p);
        assert!(!flatten_ifs(&mut p), "{before:#?}");
    }

    #[test]
    fn copies_are_not_merged_across_a_clobbered_source() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let (a, r, y) = (b.vreg(Type::D, 1), b.vreg(Type::D, 1), b.vreg(Type::D, 1));
        b.control(LOp::If).pred = Some(P);
        b.mov(r, a);
        b.alu2(Opcode::Add, a, a, Opnd::d(1));
        b.control(LOp::Else);
        b.mov(r, y);
        b.control(LOp::Endif);
        assert!(flatten_ifs(&mut p));
        assert_eq!(
            body(&p),
            [
                "(+f0.0) mov(8@0) v1+0<1>:D, v0+0<1>:D",
                "(+f0.0) add(8@0) v0+0<1>:D, v0+0<1>:D, 0x1:D",
                "(-f0.0) mov(8@0) v1+0<1>:D, v2+0<1>:D",
            ]
        );
    }
}
