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
//!   the 64-bit `cmp` whose low dwords `x` copies, or an identical `mov.nz` did), or folded
//!   into the logic instruction that computed `x` as its conditional modifier; a `cmp` whose
//!   destination is then unread writes `null`.
//! - [`flatten_ifs`]: small `if`/`else` regions of ALU instructions become predicated
//!   instructions, and the two copies of an `if` result one `sel`.
//! - [`predicate_jumps`]: `(+f0) if; <copies>; break; endif` becomes
//!   `(+f0) <copies>; (+f0) break` (also for `continue`).
//! - [`coalesce_copies`] (after the branch passes): a register whose last references are
//!   copies into another (an `if` arm's result, a `break` argument) is written as that
//!   register from its first write on, and the copies go (`opt/coalesce.rs`).
//! - [`propagate_copies`] (after SIMD-width lowering and legalization, then [`dce`]): a
//!   register written only by byte-for-byte copies of registers that no longer change
//!   (one, or several into separate bytes: a SIMD32 load's two responses) is read from
//!   them, and the copies go.
//! - [`reuse_constants`] (after legalization): a constant moved into a register again in
//!   the same block, on the same channels, is read from the first move's register.
//!
//! Each returns true when it changed the program; `backend::compile_one` runs them and logs
//! the LIR after each that did (`RUST_LOG=trace`).

use super::lir::{Base, LInst, LOp, Opnd, Pred, Program};
use ferrite_isa::{CondMod, Opcode, Type};

mod coalesce;
pub use coalesce::coalesce_copies;

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
/// payloads are named by their first register). A gather's index and lane offsets are
/// regioned, and so is its value, which is the table `LInst::message_src_regs` gives or the
/// elements of its channels.
fn src_ranges(i: &LInst) -> impl Iterator<Item = (u32, u32, Option<u32>)> + '_ {
    let regioned = matches!(i.op, LOp::Alu(_) | LOp::Math(_) | LOp::Shuffle { .. });
    i.srcs.iter().enumerate().filter_map(move |(k, s)| {
        let v = s.vreg()?;
        if !regioned {
            return Some((v, 0, None));
        }
        let end = match i.message_src_regs(k) {
            Some(regs) => s.off - s.off % 32 + regs * 32,
            None => s.off + s.span(u32::from(i.exec)),
        };
        Some((v, s.off, Some(end)))
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
        remove_marked(&mut prog.insts, &dead);
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
        && s.rows.is_none()
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
/// byte-for-byte `mov` (see [`byte_copy`]) is read from the copies' sources instead, and
/// the moves go. The moves fall into classes by source register `s` and byte distance; a
/// class's source must not change once one of its moves has run: every write of `s` comes
/// before the class's first move in program order and shares no loop with any of its
/// moves (a loop would run it again after the move). A read of `d` is rewritten to the
/// class whose moves wrote its bytes, which then equal their bytes of `s`; with one class,
/// bytes no move wrote held nothing defined. With several, each read must overlap the
/// destination bytes of exactly one class, or `d` keeps its moves. Only ALU and math
/// sources are rewritten (their regions say which bytes they read); a register a message
/// or a gather reads whole keeps its copies. Runs to a fixed point (a copy of a copy),
/// linear per round.
///
/// Lowering leaves such copies behind: a 64-bit load repacked into qwords and then copied
/// into its value's register, each 64-bit result copied into its destination, both per
/// SIMD8 piece; and at SIMD32 a vector load's two SIMD16 messages, each of whose responses
/// holds its half of every component back to back, copied into the value's register, where
/// a component's two halves are adjacent (several classes: one per response and
/// component).
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

/// Most classes of moves [`propagate_copies`] reads one register through (a SIMD32 `vec4`
/// load has eight: two responses of four components); past it the register keeps its
/// moves, which bounds the work per move and per read.
const MAX_COPY_CLASSES: usize = 16;

/// The moves of one source register at one byte distance into a copied register.
struct CopyClass {
    /// Source register and the distance from a destination byte to the byte it copies.
    copy: (u32, i64),
    /// The moves (instruction indices, ascending).
    moves: Vec<u32>,
    /// The destination bytes `[start, end)` of each move.
    bytes: Vec<(u32, u32)>,
}

/// The class a read of `bytes` of a copied register comes from: the only one, or the only
/// one whose moves wrote any of those bytes.
fn class_of(classes: &[CopyClass], bytes: (u32, u32)) -> Option<(u32, i64)> {
    if let [c] = classes {
        return Some(c.copy);
    }
    let mut hit = classes
        .iter()
        .filter(|c| c.bytes.iter().any(|&(a, b)| a < bytes.1 && bytes.0 < b));
    let c = hit.next()?;
    hit.next().is_none().then_some(c.copy)
}

fn propagate_copies_once(prog: &mut Program) -> bool {
    let nv = prog.vregs.len();
    let mut writes: Vec<Vec<u32>> = vec![Vec::new(); nv];
    for (k, i) in prog.insts.iter().enumerate() {
        if let Some(v) = i.dst.vreg() {
            writes[v as usize].push(k as u32);
        }
    }
    let whole = read_whole(prog);
    let loops = outermost_loops(prog);
    // The classes of each copied register's moves (empty: not propagated).
    let mut from: Vec<Vec<CopyClass>> = (0..nv).map(|_| Vec::new()).collect();
    for d in 0..nv {
        let ws = &writes[d];
        if ws.is_empty() || whole[d] {
            continue;
        }
        let mut classes: Vec<CopyClass> = Vec::new();
        // Every write a move, of at most `MAX_COPY_CLASSES` classes.
        let all_copies = ws.iter().all(|&k| {
            let i = &prog.insts[k as usize];
            let Some(c) = byte_copy(i) else {
                return false;
            };
            let bytes = (i.dst.off, i.dst.off + i.dst.span(u32::from(i.exec)));
            match classes.iter().position(|x| x.copy == c) {
                Some(x) => {
                    classes[x].moves.push(k);
                    classes[x].bytes.push(bytes);
                }
                None if classes.len() < MAX_COPY_CLASSES => classes.push(CopyClass {
                    copy: c,
                    moves: vec![k],
                    bytes: vec![bytes],
                }),
                None => return false,
            }
            true
        });
        // A register that is itself replaced this round is left for the next.
        let stable = all_copies
            && classes.iter().all(|c| {
                let s = c.copy.0 as usize;
                let first = c.moves[0];
                from[s].is_empty()
                    && !writes[s].is_empty()
                    && writes[s].iter().all(|&j| {
                        j < first
                            && c.moves.iter().all(|&m| {
                                loops[m as usize]
                                    .is_none_or(|(a, w)| !(a..=w).contains(&(j as usize)))
                            })
                    })
            });
        if stable {
            from[d] = classes;
        }
    }
    // A source register must not be replaced itself in the same round.
    for d in 0..nv {
        if from[d].iter().any(|c| !from[c.copy.0 as usize].is_empty()) {
            from[d].clear();
        }
    }
    // Every read must come from one class and stay inside its source register.
    let mut fits = vec![true; nv];
    for i in &prog.insts {
        if !i.op.has_regioned_operands() {
            continue;
        }
        for o in &i.srcs {
            let Some(v) = o.vreg() else { continue };
            if from[v as usize].is_empty() {
                continue;
            }
            let span = o.span(u32::from(i.exec));
            let Some((s, delta)) = class_of(&from[v as usize], (o.off, o.off + span)) else {
                fits[v as usize] = false;
                continue;
            };
            let start = i64::from(o.off) + delta;
            let end = start + i64::from(span);
            if start < 0 || end > i64::from(prog.vregs[s as usize].bytes) {
                fits[v as usize] = false;
            }
        }
    }
    let mut dead = vec![false; prog.insts.len()];
    let mut any = false;
    for d in 0..nv {
        if !fits[d] {
            from[d].clear();
        }
        if !from[d].is_empty() {
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
        if !i.op.has_regioned_operands() {
            continue;
        }
        let exec = u32::from(i.exec);
        for o in &mut i.srcs {
            let Some(v) = o.vreg() else { continue };
            if from[v as usize].is_empty() {
                continue;
            }
            let (s, delta) =
                class_of(&from[v as usize], (o.off, o.off + o.span(exec))).expect("checked above");
            o.base = Base::V(s);
            o.off = (i64::from(o.off) + delta) as u32;
        }
    }
    remove_marked(&mut prog.insts, &dead);
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
    for i in &prog.insts {
        if let Some(v) = i.dst.vreg() {
            writes[v as usize] += 1;
        }
    }
    let message_read = read_whole(prog);
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
    remove_marked(&mut prog.insts, &dead);
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
    o.base == d.base
        && o.off == d.off
        && o.stride == d.stride
        && o.rows.is_none()
        && o.ty.size() == d.ty.size()
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
        && x.rows.is_none()
        && x.vreg().is_some()
        && !x.ty.is_float())
    .then_some(*x)
}

/// Whether the copy at `j` (`mov x, lo(t)`) reads the low dwords of a 64-bit `cmp` result
/// `t` that wrote the flag `m` (a flag move) tests, on `m`'s channels, with no flag write or
/// control flow in between: the comparison's qword is all ones or zero per channel, so its
/// low dword is nonzero exactly where it set the flag.
fn compare_behind(insts: &[LInst], dead: &[bool], j: usize, m: &LInst) -> bool {
    let [src] = insts[j].srcs.as_slice() else {
        return false;
    };
    let Some(t) = src.vreg() else { return false };
    if src.ty.size() != 4 || src.neg || src.abs || src.rows.is_some() {
        return false;
    }
    for c in (0..j).rev() {
        if dead[c] {
            continue;
        }
        let p = &insts[c];
        if p.op.is_control() {
            return false;
        }
        if !p.writes_flag() && !writes_vreg(p, t) {
            continue;
        }
        return p.op == LOp::Alu(Opcode::Cmp)
            && p.writes_flag()
            && writes_vreg(p, t)
            && same_channels(p, m)
            && p.flag_sub == m.flag_sub
            && p.pred.is_none()
            && p.dst.ty.size() == 8
            && p.dst.off == src.off
            && p.dst.stride * 2 == src.stride
            && p.dst.rows.is_none();
    }
    false
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
            // A copy of the low dwords of a 64-bit comparison's result (`wide::cmp64`):
            // the flag that comparison set is the copy's `!= 0` too.
            let through = same
                && exact
                && p.op == LOp::Alu(Opcode::Mov)
                && p.cmod == CondMod::None
                && p.pred.is_none()
                && !p.writes_flag()
                && compare_behind(&prog.insts, &dead, j, m);
            if redundant || foldable || through {
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
    remove_marked(&mut prog.insts, &dead);
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
        && !i.reads_flag()
        && !i.writes_flag()
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
        remove_marked(&mut prog.insts, &dead);
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
    remove_marked(arm, &gone);
}

/// Removes the instructions whose index is marked in `dead`.
fn remove_marked(insts: &mut Vec<LInst>, dead: &[bool]) {
    let mut k = 0;
    insts.retain(|_| {
        k += 1;
        !dead[k - 1]
    });
}

/// Per virtual register: whether an instruction other than an ALU or math one (a message,
/// a gather) reads it. Such reads take the register whole, not through a region, so a
/// pass may neither move them to another register's bytes nor merge two of them.
fn read_whole(prog: &Program) -> Vec<bool> {
    taken_whole(prog, false)
}

/// Per virtual register: whether an instruction other than an ALU or math one reads it,
/// or with `writes` also writes it (such instructions take their registers whole, from
/// their start).
fn taken_whole(prog: &Program, writes: bool) -> Vec<bool> {
    let mut whole = vec![false; prog.vregs.len()];
    for i in &prog.insts {
        if !i.op.has_regioned_operands() {
            let dst = writes.then_some(&i.dst);
            for o in dst.into_iter().chain(&i.srcs) {
                if let Some(v) = o.vreg() {
                    whole[v as usize] = true;
                }
            }
        }
    }
    whole
}

#[cfg(test)]
mod tests;
