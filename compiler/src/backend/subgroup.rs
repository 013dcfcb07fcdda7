//! Subgroup operations at one SIMD width (see docs/subgroups.md).
//!
//! The subgroup is the thread's SIMD8/16/32 channels. Every operation follows one scheme:
//! a temporary of one element per channel is first filled with the operation's identity by
//! a `WE_all` move (so disabled channels hold the identity), then the active channels write
//! their contribution with an ordinary, execution-masked instruction; the combining steps
//! after that run `WE_all` over the temporary, so they see every channel and the disabled
//! ones cannot change the result. Reductions halve the channel count per step
//! (16, 8, 4, 2, 1 channels, all aligned contiguous regions); scans run a chain of
//! one-channel steps. The result is read back with a scalar `<0;1,0>` region (reductions)
//! or per channel (scans) by an execution-masked move.
//!
//! Types: the temporaries hold dwords or qwords. 32-bit values and booleans are used as
//! they are; 8/16-bit integers and 16-bit booleans are widened to a dword (sign-extended
//! for signed min/max and booleans, zero-extended otherwise) and fp16 is converted to f32
//! for the float operations, then the result is truncated (integers) or rounded to fp16;
//! 64-bit integers and doubles use qword temporaries and the 64-bit instruction selection
//! (`wide`) for the combining steps. Operations that only move bits (broadcast, shuffle)
//! move the narrow value's dword slot or the 64-bit value as it is.

use super::isel::Isel;
use super::lir::*;
use super::{narrow, wide, BackendError};
use crate::hash::HashMap;
use crate::ir::{self, AluOp, Kind, Node, Op, RedOp, SubgroupOp, SysVal};
use ferrite_isa::{CondMod, Opcode, Type};

type Res<T> = Result<T, BackendError>;

/// The hardware operation of one combining step: opcode, operand type, conditional
/// modifier (`sel.l` / `sel.ge` for min / max).
fn step_op(r: RedOp) -> (Opcode, Type, CondMod) {
    match r {
        RedOp::Iadd => (Opcode::Add, Type::D, CondMod::None),
        RedOp::Fadd => (Opcode::Add, Type::F, CondMod::None),
        RedOp::Imul => (Opcode::Mul, Type::D, CondMod::None),
        RedOp::Fmul => (Opcode::Mul, Type::F, CondMod::None),
        RedOp::Imin => (Opcode::Sel, Type::D, CondMod::L),
        RedOp::Umin => (Opcode::Sel, Type::UD, CondMod::L),
        RedOp::Fmin => (Opcode::Sel, Type::F, CondMod::L),
        RedOp::Imax => (Opcode::Sel, Type::D, CondMod::Ge),
        RedOp::Umax => (Opcode::Sel, Type::UD, CondMod::Ge),
        RedOp::Fmax => (Opcode::Sel, Type::F, CondMod::Ge),
        RedOp::And => (Opcode::And, Type::UD, CondMod::None),
        RedOp::Or => (Opcode::Or, Type::UD, CondMod::None),
        RedOp::Xor => (Opcode::Xor, Type::UD, CondMod::None),
    }
}

/// A shuffle index that is a function of the channel number `c` alone: the front end's
/// translation of the shuffle-relative and quad operations (`frontend::subgroup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LaneFn {
    /// `c ^ k` (shuffle xor, the quad swaps).
    Xor(u32),
    /// `c + k`, wrapping at 2^32 (shuffle down; shuffle up is `c - k`).
    Add(u32),
    /// `(c & ~3) | k` with `k` below 4 (quad broadcast; `c & ~3` for k = 0).
    Quad(u32),
}

/// The values of `f` that are a [`LaneFn`] of `subgroup_invocation`: the ALU instruction
/// with a constant operand on the channel number (or, for [`LaneFn::Quad`], on the channel
/// number ANDed with `~3`).
pub(super) fn lane_fns(f: &ir::Function) -> HashMap<ir::Value, LaneFn> {
    let consts = f.consts();
    let mut lanes = Vec::new();
    let mut quads = Vec::new();
    let mut m = HashMap::default();
    f.for_each_node(&mut |n| {
        let Node::Instr(ir::Instr {
            dst: Some(d), op, ..
        }) = n
        else {
            return;
        };
        match op {
            Op::SysVal(SysVal::SubgroupInvocation) => lanes.push(*d),
            Op::Alu(a, s) if s.len() == 2 => {
                // The operand that is the channel number (or its quad base) and the
                // constant, in either order for the commutative operations.
                let pick = |from: &[ir::Value]| {
                    let k = |i: usize| consts.splat(s[1 - i]).map(|k| k as u32);
                    (0..2)
                        .filter(|&i| i == 0 || *a != AluOp::Isub)
                        .find_map(|i| from.contains(&s[i]).then(|| k(i)).flatten())
                };
                let lf = match a {
                    AluOp::Ixor => pick(&lanes).map(LaneFn::Xor),
                    AluOp::Iadd => pick(&lanes).map(LaneFn::Add),
                    AluOp::Isub => pick(&lanes).map(|k| LaneFn::Add(k.wrapping_neg())),
                    AluOp::Iand if pick(&lanes) == Some(!3) => {
                        quads.push(*d);
                        Some(LaneFn::Quad(0))
                    }
                    AluOp::Ior => pick(&quads).filter(|k| *k < 4).map(LaneFn::Quad),
                    _ => None,
                };
                if let Some(lf) = lf {
                    m.insert(*d, lf);
                }
            }
            _ => {}
        }
    });
    m
}

/// How an operand enters a subgroup operation's temporaries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Widen {
    /// Its bits (8/16-bit values zero-extended).
    Bits,
    /// Sign-extended (signed min/max, booleans).
    Signed,
    /// As a float (fp16 converted to f32).
    Float,
}

/// What the temporaries of one operation hold.
#[derive(Clone, Copy)]
struct Dom {
    /// Qwords (64-bit values) rather than dwords.
    wide: bool,
    /// An fp16 value converted to f32: the result is rounded back.
    promoted: bool,
    /// The operand's scalar type.
    src: ir::Type,
}

impl Dom {
    /// Bytes per channel.
    fn es(self) -> u32 {
        if self.wide {
            8
        } else {
            4
        }
    }

    /// The unsigned type of one element.
    fn bits_ty(self) -> Type {
        if self.wide {
            Type::UQ
        } else {
            Type::UD
        }
    }

    /// The IR type the combining operation `r` computes in.
    fn ir_ty(self, r: RedOp) -> ir::Type {
        let bits = if self.wide { 64 } else { 32 };
        if r.is_float() {
            ir::Type::float(bits)
        } else {
            ir::Type::int(bits)
        }
    }

    /// The identity of `r` as an immediate element: an 8/16-bit integer's own identity,
    /// extended as its operands are (so that it is also what an exclusive scan's first
    /// invocation gets after truncation).
    fn identity(self, r: RedOp) -> Opnd {
        let t = self.src;
        let bits = if narrow::is_narrow(t) && !r.is_float() {
            let i = r.identity(t);
            if widen_for(r) == Widen::Signed {
                ir::sign_extend(i, t.bits) as u64 & 0xFFFF_FFFF
            } else {
                i
            }
        } else {
            r.identity(self.ir_ty(r))
        };
        Opnd::imm(self.bits_ty(), bits)
    }
}

impl Isel<'_> {
    /// Component 0 of `v` as an element of the temporaries (see [`Widen`]), with the
    /// domain it computes in.
    fn sg_in(&mut self, v: ir::Value, how: Widen) -> Res<(Opnd, Dom)> {
        let t = self.func.ty(v).scalar_type();
        let x = self.comp(v, 0)?;
        if wide::is_wide(t) {
            return Ok((
                x,
                Dom {
                    wide: true,
                    promoted: false,
                    src: t,
                },
            ));
        }
        let dom = Dom {
            wide: false,
            promoted: false,
            src: t,
        };
        if !narrow::is_narrow(t) {
            if t.bits != 32 && !t.is_bool() {
                return Err(BackendError::Unsupported(format!(
                    "subgroup operation on {t}"
                )));
            }
            return Ok((x, dom));
        }
        let float = how == Widen::Float && t.kind == Kind::Float;
        let signed = how == Widen::Signed || t.is_bool();
        let size = x.ty.size();
        if let Base::Imm(bits) = x.base {
            let mask = (1u64 << (8 * size)) - 1;
            let bits = bits & mask;
            let o = if float {
                Opnd::imm(
                    Type::F,
                    u64::from(half::f16::from_bits(bits as u16).to_f32().to_bits()),
                )
            } else if signed {
                Opnd::ud(ir::sign_extend(bits, (8 * size) as u8) as u32)
            } else {
                Opnd::ud(bits as u32)
            };
            return Ok((
                o,
                Dom {
                    promoted: float,
                    ..dom
                },
            ));
        }
        let (dt, st) = match (float, signed, size) {
            (true, _, _) => (Type::F, Type::HF),
            (false, true, 1) => (Type::D, Type::B),
            (false, false, 1) => (Type::UD, Type::UB),
            (false, true, _) => (Type::D, Type::W),
            (false, false, _) => (Type::UD, Type::UW),
        };
        let mut b = self.b();
        let r = b.vreg(dt, 1);
        b.mov(r, x.retype(st));
        Ok((
            r,
            Dom {
                promoted: float,
                ..dom
            },
        ))
    }

    /// Writes a result element `s` (scalar or per channel, in the domain `dom`) to `d`,
    /// the register of the IR value `dst`: truncated to a narrow integer's dword slot,
    /// rounded to fp16 where it was promoted, moved as bits otherwise.
    fn sg_out(&mut self, dst: ir::Value, d: Opnd, s: Opnd, dom: Dom) {
        let t = self.func.ty(dst);
        let mut b = self.b();
        if narrow::is_narrow(t) {
            if dom.promoted {
                b.mov(d.retype(Type::HF), s.retype(Type::F));
            } else {
                b.mov(narrow::slot(d), s.retype(Type::UD));
            }
        } else if wide::is_wide(t) {
            b.mov(d.retype(Type::UQ), s.retype(Type::UQ));
        } else {
            b.mov(d.retype(Type::UD), s.retype(Type::UD));
        }
    }

    /// An element per channel: `identity` in every channel (`WE_all`), then `src` in the
    /// active ones.
    fn sg_fill_in(&mut self, src: Opnd, identity: Opnd) -> Opnd {
        let w = self.w;
        let mut b = self.b();
        let t = b.vreg(identity.ty, 1);
        b.at(w, 0, true).mov(t, identity);
        b.mov(t.retype(src.ty), src);
        t
    }

    /// A dword per channel: `identity` in every channel (`WE_all`), then `src` in the
    /// active ones.
    pub(super) fn sg_fill(&mut self, src: Opnd, identity: u32) -> Opnd {
        self.sg_fill_in(src, Opnd::ud(identity))
    }

    /// One combining step over `n` channels: `d = a op b`, `WE_all`.
    fn sg_step(&mut self, r: RedOp, dom: Dom, n: u8, d: Opnd, a: Opnd, c: Opnd) -> Res<()> {
        let mut b = self.b();
        let mut b = b.at(n, 0, true);
        if dom.wide {
            let it = dom.ir_ty(r);
            let ty = if r.is_float() { Type::DF } else { Type::Q };
            wide::alu64(
                &mut b,
                r.alu(),
                d.retype(ty),
                &[a.retype(ty), c.retype(ty)],
                it,
                it,
            )?;
        } else {
            let (op, ty, cm) = step_op(r);
            b.alu2(op, d.retype(ty), a.retype(ty), c.retype(ty)).cmod = cm;
        }
        Ok(())
    }

    /// Reduces a filled temporary in place; the result is its channel 0.
    fn sg_reduce_in(&mut self, r: RedOp, dom: Dom, t: Opnd) -> Res<Opnd> {
        let mut n = self.w as u32;
        while n > 1 {
            n /= 2;
            self.sg_step(r, dom, n as u8, t, t, t.offset(dom.es() * n))?;
        }
        Ok(t.scalar())
    }

    /// Reduces a filled dword temporary in place; the result is its channel 0.
    pub(super) fn sg_reduce(&mut self, r: RedOp, t: Opnd) -> Opnd {
        let dom = Dom {
            wide: false,
            promoted: false,
            src: ir::Type::I32,
        };
        self.sg_reduce_in(r, dom, t)
            .expect("32-bit combining steps always select")
    }

    /// Scans a filled temporary in place (element c becomes the combination of elements
    /// 0..=c) in ceil(log2 W) levels, as brw does: pairs (odd elements combine with the even
    /// element before them, stride-2 regions), then within blocks of 4 (elements 2 and 3
    /// take element 1, stride-4 regions; for qwords per block through a scalar region), then
    /// for blocks of 8, 16, 32 the upper half of each block takes the last element of its
    /// lower half through a scalar region. No step reads an element it writes.
    fn sg_scan_in(&mut self, r: RedOp, dom: Dom, t: Opnd) -> Res<()> {
        self.sg_scan_levels(r, dom, t, self.w as u32)
    }

    /// [`Self::sg_scan_in`] inside each cluster of `c` elements (a power of two up to W).
    fn sg_scan_levels(&mut self, r: RedOp, dom: Dom, t: Opnd, c: u32) -> Res<()> {
        let w = self.w as u32;
        let es = dom.es();
        let strided = |o: Opnd, s: u8| Opnd { stride: s, ..o };
        if c >= 2 {
            let right = strided(t.offset(es), 2);
            self.sg_step(r, dom, (w / 2) as u8, right, strided(t, 2), right)?;
        }
        if c >= 4 {
            if dom.wide {
                for b in (0..w).step_by(4) {
                    let right = t.offset(es * (b + 2));
                    let left = t.offset(es * (b + 1)).scalar();
                    self.sg_step(r, dom, 2, right, left, right)?;
                }
            } else {
                let left = strided(t.offset(es), 4);
                for k in [2, 3] {
                    let right = strided(t.offset(es * k), 4);
                    self.sg_step(r, dom, (w / 4) as u8, right, left, right)?;
                }
            }
        }
        let mut i = 4;
        while i < c {
            for b in (0..w).step_by(2 * i as usize) {
                let right = t.offset(es * (b + i));
                let left = t.offset(es * (b + i - 1)).scalar();
                self.sg_step(r, dom, i as u8, right, left, right)?;
            }
            i *= 2;
        }
        Ok(())
    }

    /// The lowest-numbered active channel, as a scalar UD (docs/gen9.md 2.10.1): channel 0
    /// outside any `if` or loop, where every dispatched channel is live and a compute
    /// dispatch is packed from channel 0; elsewhere `fbl` of the channel enables (ce0, read
    /// `WE_all` at exec size 1). ce0 leaves out the dispatch mask, which cannot change the
    /// lowest set bit: the undispatched channels are above every dispatched one.
    fn sg_first_lane(&mut self) -> Opnd {
        if self.cf_depth == 0 {
            return Opnd::ud(0);
        }
        self.first_enabled_channel()
    }

    /// Sets all 32 bits of the flag register `f0` (`all`) or clears them, `WE_all`, before
    /// the active channels write theirs by a conditional modifier under the execution
    /// mask: the bits of disabled channels, and those past the width, keep this value
    /// (brw's votes and ballots do the same).
    fn sg_flag_fill(&mut self, all: bool) {
        let v = if all { u32::MAX } else { 0 };
        self.b()
            .at(1, 0, true)
            .mov(Opnd::flag(Type::UD), Opnd::ud(v));
    }

    /// [`Self::sg_flag_fill`], then the flag set from the boolean `x` in the active
    /// channels. When `x` is the destination of the instruction just selected, an
    /// unpredicated `cmp`, the fill goes before that compare instead: its flag write is then
    /// the vote's, and `opt::fold_flag_moves` drops the `mov.nz` (one instruction fewer).
    fn sg_flag_set(&mut self, x: Opnd, all: bool) {
        let last = self.prog.insts.len().checked_sub(1);
        let before = last.filter(|&k| {
            let p = &self.prog.insts[k];
            p.op == LOp::Alu(Opcode::Cmp)
                && p.pred.is_none()
                && !p.we_all
                && p.dst.base == x.base
                && p.dst.off == x.off
                && p.dst.stride == x.stride
        });
        let v = if all { u32::MAX } else { 0 };
        let mut b = self.b();
        b.cursor = before;
        b.at(1, 0, true).mov(Opnd::flag(Type::UD), Opnd::ud(v));
        b.cursor = None;
        b.flag_from(x);
    }

    /// After [`Self::sg_flag_fill`] and the active channels' flag writes: whether every
    /// bit of `f0` is set (`all`) or any is, as a scalar boolean (a D of 0 / ~0), by one
    /// `cmp` of exec size 1 on the flag read as a UD.
    fn sg_flag_vote(&mut self, all: bool) -> Opnd {
        let mut b = self.b();
        let mut b = b.at(1, 0, true);
        let t = b.vreg(Type::D, 1);
        let (cm, v) = if all {
            (CondMod::Z, u32::MAX)
        } else {
            (CondMod::Nz, 0)
        };
        b.cmp(cm, t.retype(Type::UD), Opnd::flag(Type::UD), Opnd::ud(v));
        t.scalar()
    }

    /// `fbl` of the channel enables, as a scalar UD, wherever control flow stands: the
    /// loops Isel opens itself (the `NonUniform` descriptor loop) are not counted in
    /// `cf_depth`, so their heads ask here directly.
    pub(super) fn first_enabled_channel(&mut self) -> Opnd {
        let mut b = self.b();
        let mut b = b.at(1, 0, true);
        let t = b.vreg(Type::UD, 1);
        b.alu1(Opcode::Fbl, t, Opnd::ce0());
        t.scalar()
    }

    /// Component 0 of `v` as the bits a permute moves: its dword slot (UD) for an 8/16-bit
    /// value, whose bits above the low byte / word are unspecified anyway (`narrow`), so
    /// no widening copy is needed; a qword (UQ) for a 64-bit value; UD otherwise.
    fn sg_bits(&mut self, v: ir::Value) -> Res<Opnd> {
        let x = narrow::slot(self.comp(v, 0)?);
        let ty = if wide::is_wide(self.func.ty(v)) {
            Type::UQ
        } else {
            Type::UD
        };
        Ok(x.retype(ty))
    }

    /// `x` (bits from [`Self::sg_bits`], one element per channel) of the channel `id` in
    /// every active channel of `d` (the destination's bits, the same view): a scalar region
    /// for a constant id, one indirect read through `a0` for a scalar id (which must be
    /// below the width), a VxH gather (one `a0` address per channel) for an id per channel
    /// (`LOp::Shuffle`).
    fn sg_gather(&mut self, d: Opnd, x: Opnd, id: Opnd) {
        let w = self.w as u32;
        if let Base::Imm(i) = id.base {
            let v = x.lane_offset(i as u32 % w).scalar();
            self.b().mov(d, v);
            return;
        }
        self.sg_shuffle_into(d, x, Lanes::Index, id.retype(Type::UD));
    }

    /// `x` (bits from [`Self::sg_bits`]) of the channel `f(c)` in every active channel `c`
    /// of `d`: a quad broadcast reads element k of each quad through the region `<4;4,0>`
    /// (one move, brw's `CLUSTER_BROADCAST`); `c ^ k` and `c + k` are gathers whose `a0`
    /// addresses come from the lanes' byte offsets (`WE_all`), not from an index computed
    /// under the execution mask; `k` = 0 (modulo the width) is a copy.
    fn sg_permute(&mut self, d: Opnd, x: Opnd, f: LaneFn) {
        let w = self.w as u32;
        let es = x.ty.size();
        let lanes = match f {
            LaneFn::Quad(k) => {
                let v = x.offset(es * k).scalar().with_rows(4, 4);
                self.b().mov(d, v);
                return;
            }
            // k at or past the width leaves every channel's result undefined: any k will do.
            LaneFn::Xor(k) => Lanes::Xor((k % w) as u8),
            LaneFn::Add(k) => {
                // Signed: a shuffle up by 5 reads 5 channels back, which `emit::shuffle` may
                // read without wrapping; c + (w - 5) would leave the value.
                let k = k as i32;
                let k = if k.unsigned_abs() < w {
                    k
                } else {
                    k.rem_euclid(w as i32)
                };
                Lanes::Add(k as i8)
            }
        };
        if matches!(lanes, Lanes::Xor(0) | Lanes::Add(0)) {
            self.b().mov(d, x);
            return;
        }
        let offs = self.lane_bytes(es);
        self.sg_shuffle_into(d, x, lanes, offs);
    }

    /// `LOp::Shuffle` of `x` (copied into a register of one element per channel first
    /// unless it is one) into `r`, the channels named by `lanes` and `id`.
    fn sg_shuffle_into(&mut self, r: Opnd, x: Opnd, lanes: Lanes, id: Opnd) {
        let w = self.w;
        let mut b = self.b();
        let x = if x.stride == 1 {
            x
        } else {
            let t = b.vreg(x.ty, 1);
            b.mov(t, x);
            t
        };
        b.inst(LOp::Shuffle { width: w, lanes }, r, vec![x, id]);
    }

    /// `x` (an element per channel) of the channel `id` (a scalar below the width, or a
    /// constant), in a new register: a scalar region for a constant, else one indirect read
    /// into every channel.
    fn sg_lane_value(&mut self, x: Opnd, dom: Dom, id: Opnd) -> Opnd {
        let w = self.w as u32;
        if let Base::Imm(i) = id.base {
            return x.lane_offset(i as u32 % w).scalar();
        }
        let bt = dom.bits_ty();
        let r = self.b().vreg(bt, 1);
        self.sg_shuffle_into(r, x.retype(bt), Lanes::Index, id.retype(Type::UD));
        r.retype(x.ty)
    }

    pub(super) fn subgroup(
        &mut self,
        op: SubgroupOp,
        srcs: &[ir::Value],
        dst: ir::Value,
    ) -> Res<()> {
        let w = self.w as u32;
        let d = self.def_reg(dst)?;
        let dt = self.func.ty(dst);
        let dword = Dom {
            wide: false,
            promoted: false,
            src: ir::Type::I32,
        };
        // A boolean result computed as a dword 0 / ~0: written in place unless the
        // destination is a 16-bit boolean, which takes the low word of a copy.
        let bool_dst = |this: &mut Self| {
            if narrow::is_narrow(dt) {
                this.b().vreg(Type::D, 1)
            } else {
                d.retype(Type::D)
            }
        };
        match op {
            SubgroupOp::Elect => {
                let first = self.sg_first_lane();
                let lane = self.lane();
                let r = bool_dst(self);
                self.b().cmp(CondMod::Z, r, lane, first.retype(Type::D));
                if r != d.retype(Type::D) {
                    self.sg_out(dst, d, r, dword);
                }
            }
            SubgroupOp::All | SubgroupOp::Any => {
                let all = op == SubgroupOp::All;
                let x = self.comp(srcs[0], 0)?;
                self.sg_flag_set(x, all);
                let s = self.sg_flag_vote(all);
                self.sg_out(dst, d, s, dword);
            }
            SubgroupOp::AllEqual => {
                // Equality with the first active channel's value, then `all`. Floats compare
                // by value, as an `OpFOrdEqual` would (-0.0 equals 0.0, a NaN equals nothing;
                // Mesa does the same), fp16 after its exact conversion to f32; other types
                // by bits.
                let float = self.func.ty(srcs[0]).scalar_type().kind == Kind::Float;
                let how = if float { Widen::Float } else { Widen::Bits };
                let (x, dom) = self.sg_in(srcs[0], how)?;
                let f = if x.is_imm() || x.stride == 0 {
                    x
                } else {
                    let first = self.sg_first_lane();
                    self.sg_lane_value(x, dom, first)
                };
                // Filled before the compares, so that the flag-setting move after them can
                // fold into the last one (`opt::fold_flag_moves`).
                self.sg_flag_fill(true);
                let mut b = self.b();
                let e = b.vreg(Type::D, 1);
                if float && dom.wide {
                    // A DF compare writes a qword of ones or zeros; its low dword is the
                    // boolean.
                    let t = b.vreg(Type::DF, 1);
                    b.cmp(CondMod::Z, t, x.retype(Type::DF), f.retype(Type::DF));
                    b.mov(e.retype(Type::UD), wide::lo(t).retype(Type::UD));
                } else if float {
                    b.cmp(
                        CondMod::Z,
                        e.retype(Type::F),
                        x.retype(Type::F),
                        f.retype(Type::F),
                    );
                } else if dom.wide {
                    let eh = b.vreg(Type::D, 1);
                    let (xl, xh) = (wide::lo(x), wide::hi(x));
                    let (fl, fh) = (wide::lo(f), wide::hi(f));
                    b.cmp(CondMod::Z, e, xl.retype(Type::D), fl.retype(Type::D));
                    b.cmp(CondMod::Z, eh, xh.retype(Type::D), fh.retype(Type::D));
                    b.alu2(Opcode::And, e, e, eh);
                } else {
                    b.cmp(CondMod::Z, e, x.retype(Type::D), f.retype(Type::D));
                }
                b.flag_from(e);
                let s = self.sg_flag_vote(true);
                self.sg_out(dst, d, s, dword);
            }
            SubgroupOp::Ballot => {
                // The flag, cleared, then set by the active channels whose boolean is true
                // is the mask (bit i = channel i). Channels past the width give the zero
                // words 1..3.
                let x = self.comp(srcs[0], 0)?;
                self.sg_flag_set(x, false);
                let mut b = self.b();
                b.mov(d.retype(Type::UD), Opnd::flag(Type::UD));
                for c in 1..4 {
                    b.mov(d.retype(Type::UD).offset(c * 4 * w), Opnd::ud(0));
                }
            }
            // Broadcast takes one id for all channels (constant or dynamically uniform);
            // Shuffle one per channel, which may also be the same in all of them.
            SubgroupOp::Broadcast | SubgroupOp::Shuffle => {
                let x = self.sg_bits(srcs[0])?;
                let d = narrow::slot(d).retype(x.ty);
                let id = self.comp(srcs[1], 0)?;
                let lane_fn = self.lane_fns.get(&srcs[1]).copied();
                if x.is_imm() || x.stride == 0 {
                    // A uniform value: every channel holds it already.
                    self.b().mov(d, x);
                } else if id.stride == 0 && !id.is_imm() {
                    // One id in a scalar: reduced modulo the width (an id past it names an
                    // inactive invocation), then one indirect read.
                    let mut b = self.b();
                    let mut b = b.at(1, 0, true);
                    let m = b.vreg(Type::UD, 1);
                    b.alu2(Opcode::And, m, id.retype(Type::UD), Opnd::ud(w - 1));
                    self.sg_gather(d, x, m.scalar());
                } else if let Some(f) = lane_fn {
                    // An id computed from the channel number (`lane_fns`). Where the
                    // reported subgroup size exceeds the width, the invocations from the
                    // width up are never active: an id naming one leaves the result
                    // undefined, as an id past the width does.
                    self.sg_permute(d, x, f);
                } else {
                    // A constant id, or channel c reading channel `id[c]` of x.
                    self.sg_gather(d, x, id);
                }
            }
            SubgroupOp::BroadcastFirst => {
                let x = self.sg_bits(srcs[0])?;
                let d = narrow::slot(d).retype(x.ty);
                if x.is_imm() || x.stride == 0 {
                    self.b().mov(d, x);
                } else {
                    let first = self.sg_first_lane();
                    self.sg_gather(d, x, first);
                }
            }
            SubgroupOp::Reduce(r) => {
                let (x, dom) = self.sg_in(srcs[0], widen_for(r))?;
                let t = self.sg_fill_in(x, dom.identity(r));
                let s = self.sg_reduce_in(r, dom, t)?;
                self.sg_out(dst, d, s, dom);
            }
            SubgroupOp::ClusteredReduce(r, size) => {
                // A cluster as wide as the subgroup is a reduction, a cluster of one the
                // operand itself. Other sizes: the scan's levels inside each cluster leave
                // the cluster's result in its last element, which every channel of the
                // cluster reads straight into the destination through the region
                // `<c;c,0>` from that element (one row per cluster), as brw does.
                let c = u32::from(size).min(w);
                if c == 1 {
                    // The operand's bits (a narrow value's whole dword slot).
                    let x = self.comp(srcs[0], 0)?;
                    let wide = wide::is_wide(self.func.ty(dst));
                    let ty = if wide { Type::UQ } else { Type::UD };
                    let (d, x) = (narrow::slot(d), narrow::slot(x));
                    self.b().mov(d.retype(ty), x.retype(ty));
                    return Ok(());
                }
                let (x, dom) = self.sg_in(srcs[0], widen_for(r))?;
                let t = self.sg_fill_in(x, dom.identity(r));
                if c == w {
                    let s = self.sg_reduce_in(r, dom, t)?;
                    self.sg_out(dst, d, s, dom);
                } else {
                    self.sg_scan_levels(r, dom, t, c)?;
                    let last = t.offset(dom.es() * (c - 1)).scalar();
                    self.sg_out(dst, d, last.with_rows(c as u8, c as u8), dom);
                }
            }
            SubgroupOp::InclusiveScan(r) => {
                let (x, dom) = self.sg_in(srcs[0], widen_for(r))?;
                let t = self.sg_fill_in(x, dom.identity(r));
                self.sg_scan_in(r, dom, t)?;
                self.sg_out(dst, d, t, dom);
            }
            SubgroupOp::ExclusiveScan(r) => {
                // The inclusive scan of the operands shifted up by one channel: channel c
                // contributes at element c + 1 of a temporary of W + 1 elements filled with
                // the identity, so element c of its scan combines channels 0..c-1 (and
                // element 0 is the identity).
                let (x, dom) = self.sg_in(srcs[0], widen_for(r))?;
                let es = dom.es();
                let id = dom.identity(r);
                let mut b = self.b();
                let u = Opnd::v(b.prog.new_vreg(((w + 1) * es).next_multiple_of(32)), id.ty);
                b.at(w as u8, 0, true).mov(u, id);
                b.at(1, 0, true).mov(u.offset(es * w), id);
                // One GRF of operands per move: the destination, one element off, then
                // spans two GRFs, the most a region may.
                let n = 32 / es;
                for g in (0..w).step_by(n as usize) {
                    b.at(n as u8, g as u8, false)
                        .mov(u.offset(es * (g + 1)).retype(x.ty), x.lane_offset(g));
                }
                self.sg_scan_in(r, dom, u)?;
                self.sg_out(dst, d, u, dom);
            }
        }
        Ok(())
    }
}

/// How the operand of a reduction or scan enters the temporaries.
fn widen_for(r: RedOp) -> Widen {
    match r {
        RedOp::Imin | RedOp::Imax => Widen::Signed,
        _ if r.is_float() => Widen::Float,
        _ => Widen::Bits,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{compile, BackendOptions};
    use crate::parse::parse_shader;

    /// `%8 = OP` of a loaded value of type `ty` (the index of a shuffle: the loaded value
    /// plus one), stored per invocation.
    fn kernel(op: &str, ty: &str, simd: u32) -> String {
        let text = format!(
            "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {{
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 4
    %2:i32 = imul %0, %1
    %3:i32 = load ssbo[0] %2 align 4
    %4:i32 = const 1
    %5:i32 = iadd %3, %4
    %7:{ty} = {conv} %3
    %8:{ty} = {op}
    %9:i32 = {back} %8
    store ssbo[0] %2, %9 align 4
}}
",
            conv = if ty == "i64" { "i2i" } else { "bitcast" },
            back = if ty == "i64" { "i2i" } else { "bitcast" },
        );
        compile_text(&text, simd)
    }

    /// `%8 = OP` of a loaded value `%7` of type `ty`, stored per invocation (a boolean
    /// result as 0 / 1), inside an `if` on the loaded value (divergent control flow) when
    /// `in_if`, compiled at SIMD `simd` with the ISA validator on.
    fn kernel_at(op: &str, ty: &str, boolean: bool, in_if: bool, simd: u32) -> String {
        let conv = if ty == "i64" { "i2i" } else { "bitcast" };
        let (res, back) = if boolean { ("b1", "b2i") } else { (ty, conv) };
        let body = format!(
            "%7:{ty} = {conv} %3
        %8:{res} = {op}
        %9:i32 = {back} %8
        store ssbo[0] %2, %9 align 4"
        );
        let body = if in_if {
            format!("if %6 {{\n        {body}\n    }}")
        } else {
            body
        };
        let text = format!(
            "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {{
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 4
    %2:i32 = imul %0, %1
    %3:i32 = load ssbo[0] %2 align 4
    %4:i32 = const 1
    %6:b1 = ine %3, %4
    {body}
}}
"
        );
        compile_text(&text, simd)
    }

    /// The first active channel (broadcast-first, all-equal, elect): before, a umin-reduction
    /// of the channel numbers (a fill, a masked move and log2 W `sel.l` steps) and an
    /// OR-reduction picking the value (per dword half for qwords); after, inside divergent
    /// control flow, `fbl` of ce0 and one indirect read through `a0` per 16 channels (8 for
    /// qwords); outside any control flow channel 0, a scalar region, and no read at all.
    #[test]
    fn first_active_lane_is_fbl_of_ce0_and_one_indirect_read() {
        for simd in [8u32, 16, 32] {
            for (ty, per) in [("i32", 16usize), ("i64", 8)] {
                let groups = (simd as usize).div_ceil(per);
                for (op, boolean) in [
                    ("subgroup_broadcast_first %7", false),
                    ("subgroup_all_equal %7", true),
                ] {
                    let asm = kernel_at(op, ty, boolean, true, simd);
                    let ctx = format!("{op} {ty} SIMD{simd}:\n{asm}");
                    assert_eq!(count(&asm, "fbl(1)"), 1, "{ctx}");
                    assert!(asm.contains("mask0<0,1,0>UD"), "{ctx}");
                    assert_eq!(count(&asm, "g[a0"), groups, "{ctx}");
                    assert_eq!(count(&asm, "sel.l"), 0, "{ctx}");
                    let top = kernel_at(op, ty, boolean, false, simd);
                    let ctx = format!("{op} {ty} SIMD{simd} at the top level:\n{top}");
                    assert_eq!(count(&top, "fbl"), 0, "{ctx}");
                    assert_eq!(count(&top, "g[a0"), 0, "{ctx}");
                    assert_eq!(count(&top, "sel.l"), 0, "{ctx}");
                }
            }
            let asm = kernel_at("subgroup_elect", "i32", true, true, simd);
            assert_eq!(count(&asm, "fbl(1)"), 1, "elect SIMD{simd}:\n{asm}");
            assert_eq!(count(&asm, "sel.l"), 0, "elect SIMD{simd}:\n{asm}");
        }
    }

    fn count(asm: &str, what: &str) -> usize {
        asm.lines().filter(|l| l.contains(what)).count()
    }

    /// `mov(1) f0<1>UD imm` lines.
    fn flag_fills(asm: &str) -> usize {
        asm.lines()
            .filter(|l| l.contains(": mov(1)") && l.contains(" f0<1>UD"))
            .count()
    }

    /// A shuffle with a per-channel index is one VxH gather per 16 channels (8 for qwords),
    /// each after its `a0` computation, instead of a compare and a predicated move per channel.
    #[test]
    fn dynamic_shuffle_is_a_vxh_gather_per_sixteen_channels() {
        for simd in [8u32, 16, 32] {
            for (ty, per) in [("i32", 16), ("i64", 8)] {
                let asm = kernel("subgroup_shuffle %7, %5", ty, simd);
                let gathers = count(&asm, "g[a0");
                let want = (simd as usize).div_ceil(per);
                assert_eq!(gathers, want, "{ty} SIMD{simd}:\n{asm}");
                assert!(asm.contains("VxH"), "{ty} SIMD{simd}:\n{asm}");
                assert_eq!(count(&asm, "cmp.z"), 0, "{ty} SIMD{simd}:\n{asm}");
                // and, shl, and the add of the value's address unless the gather's
                // immediate holds it.
                let a0 = a0_writes(&asm);
                assert!(
                    (2 * want..=3 * want).contains(&a0),
                    "{ty} SIMD{simd}:\n{asm}"
                );
            }
        }
    }

    /// Lines writing `a0` (the address computations of gathers and indirect reads).
    fn a0_writes(asm: &str) -> usize {
        count(asm, "a0<1>UW")
    }

    /// The shuffle-relative and quad operations, whose index the front end computes from
    /// the channel number: a quad broadcast is one move per two GRFs through `<4;4,0>` (no
    /// gather); `c ^ k` takes at most 2 `a0` instructions per gather (xor of the lanes' byte
    /// offsets, add of the value's address) and `c + k` one, where an index per channel took
    /// 3 (and, shl, add) after the IR's own `xor` / `add` / `and`+`or` under the mask. Inside
    /// a branch (disabled channels) and at every width the ISA validator accepts them.
    #[test]
    fn relative_shuffles_take_their_addresses_from_the_lane_offsets() {
        for simd in [8u32, 16, 32] {
            for in_if in [false, true] {
                for (ty, per) in [("i32", 16usize), ("i64", 8)] {
                    let groups = (simd as usize).div_ceil(per);
                    let (conv, back) = if ty == "i64" {
                        ("%12:i64 = i2i %3", "%9:i32 = i2i %13")
                    } else {
                        ("%12:i32 = bitcast %3", "%9:i32 = bitcast %13")
                    };
                    let shuffle = |id: &str| {
                        format!(
                            "{conv}\n        {id}\n        %13:{ty} = subgroup_shuffle %12, %14\n        {back}"
                        )
                    };
                    // The same kernel storing the operand itself.
                    let base = body_kernel(
                        &format!("{conv}\n        {}", back.replace("%13", "%12")),
                        in_if,
                        simd,
                    );
                    for (op, k, a0) in [
                        ("ixor", 1, 2),
                        ("ixor", 5, 2),
                        ("iadd", 3, 1),
                        ("isub", 1, 1),
                    ] {
                        let id = format!("%11:i32 = const {k}\n        %14:i32 = {op} %10, %11");
                        let asm = body_kernel(&shuffle(&id), in_if, simd);
                        let ctx = format!("{op} {k} {ty} SIMD{simd} in_if {in_if}:\n{asm}");
                        assert_eq!(count(&asm, "VxH"), groups, "{ctx}");
                        // xor and add (the add in the gather's immediate where the value
                        // sits in g0..g15), or the one add.
                        assert!(a0_writes(&asm) <= a0 * groups, "{ctx}");
                        assert!(a0_writes(&asm) >= groups, "{ctx}");
                        let a0_shl = asm
                            .lines()
                            .filter(|l| l.contains(": shl(") && l.contains("a0<1>UW"))
                            .count();
                        assert_eq!(a0_shl, 0, "{ctx}");
                        assert_eq!(count(&asm, ": and("), count(&base, ": and("), "{ctx}");
                    }
                    // Quad broadcast of element 2: `(c & ~3) | 2`.
                    let id = "%11:i32 = const -4\n        %15:i32 = iand %10, %11\n        %16:i32 = const 2\n        %14:i32 = ior %15, %16";
                    let asm = body_kernel(&shuffle(id), in_if, simd);
                    let ctx = format!(
                        "quad broadcast {ty} SIMD{simd} in_if {in_if}:\n{asm}\nbase:\n{base}"
                    );
                    assert_eq!(a0_writes(&asm), 0, "{ctx}");
                    assert!(count(&asm, "<4,4,0>") >= 1, "{ctx}");
                    // Instructions, not listing lines: a `nop` pads a compacted kernel's end.
                    let insts = |a: &str| {
                        a.lines()
                            .filter(|l| l.starts_with("0x") && !l.contains(": nop"))
                            .count()
                    };
                    assert!(insts(&asm) <= insts(&base) + groups, "{ctx}");
                }
            }
        }
    }

    /// `text` compiled at SIMD `simd` with the ISA validator on.
    fn compile_text(text: &str, simd: u32) -> String {
        let s = parse_shader(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let opts = BackendOptions {
            validate: true,
            ..BackendOptions::gen9_at(simd)
        };
        compile(&s, &opts)
            .unwrap_or_else(|e| panic!("SIMD{simd}: {e}\n{text}"))
            .asm
    }

    /// A kernel storing `%9` (an i32 computed by `body` from `%3`, the loaded value, `%5`
    /// = `%3 + 1`, `%6` = `%3 != 1` and `%10`, the channel number), inside an `if` on `%6`
    /// when `in_if`.
    fn body_kernel(body: &str, in_if: bool, simd: u32) -> String {
        let body = format!("{body}\n        store ssbo[0] %2, %9 align 4");
        let body = if in_if {
            format!("if %6 {{\n        {body}\n    }}")
        } else {
            body
        };
        compile_text(
            &format!(
                "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {{
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 4
    %2:i32 = imul %0, %1
    %3:i32 = load ssbo[0] %2 align 4
    %4:i32 = const 1
    %5:i32 = iadd %3, %4
    %6:b1 = ine %3, %4
    %10:i32 = sysval subgroup_invocation
    {body}
}}
"
            ),
            simd,
        )
    }

    /// Votes and ballots go through the flag register: `f0` filled (`mov(1)`, `WE_all`),
    /// written by the active channels' conditional modifier, then compared once at exec size
    /// 1 (`all`, `any`, `all_equal`) or moved (ballot). Before, each filled a temporary,
    /// wrote the active channels into it and combined it in log2 W `and`/`or` steps
    /// (`WE_all`), and a ballot shifted 1 by the channel number first.
    #[test]
    fn votes_and_ballots_read_the_flag() {
        let we_all_logic = |asm: &str| {
            asm.lines()
                .filter(|l| (l.contains(": and(") || l.contains(": or(")) && l.contains("WE_all"))
                .count()
        };
        for simd in [8u32, 16, 32] {
            for in_if in [false, true] {
                let base = body_kernel("%8:b1 = ine %3, %4\n        %9:i32 = b2i %8", in_if, simd);
                let votes = [
                    "%8:b1 = subgroup_all %6",
                    "%8:b1 = subgroup_any %6",
                    "%8:b1 = subgroup_all_equal %3",
                    "%7:i64 = i2i %3\n        %8:b1 = subgroup_all_equal %7",
                ];
                for v in votes {
                    let asm = body_kernel(&format!("{v}\n        %9:i32 = b2i %8"), in_if, simd);
                    let ctx = format!("{v} SIMD{simd} in_if {in_if}:\n{asm}");
                    assert_eq!(we_all_logic(&asm), we_all_logic(&base), "{ctx}");
                    assert_eq!(flag_fills(&asm), 1, "{ctx}");
                    assert_eq!(count(&asm, "f0<0,1,0>UD"), 1, "{ctx}");
                }
                // A boolean compared just before: the fill goes before its `cmp`, whose
                // flag write is the vote's (no `mov.nz`).
                for v in ["subgroup_all", "subgroup_any"] {
                    let asm = body_kernel(
                        &format!(
                            "%11:b1 = ine %5, %4\n        %8:b1 = {v} %11\n        %9:i32 = b2i %8"
                        ),
                        in_if,
                        simd,
                    );
                    let ctx = format!("{v} of a compare SIMD{simd} in_if {in_if}:\n{asm}");
                    assert_eq!(flag_fills(&asm), 1, "{ctx}");
                    assert_eq!(count(&asm, "mov.nz"), 0, "{ctx}");
                }
                let asm = body_kernel(
                    "%7:i32x4 = subgroup_ballot %6\n        %9:i32 = extract %7, 0",
                    in_if,
                    simd,
                );
                let ctx = format!("ballot SIMD{simd} in_if {in_if}:\n{asm}");
                assert_eq!(we_all_logic(&asm), we_all_logic(&base), "{ctx}");
                assert_eq!(flag_fills(&asm), 1, "{ctx}");
                assert_eq!(count(&asm, ": shl("), count(&base, ": shl("), "{ctx}");
                let halves = (simd as usize).div_ceil(16);
                assert_eq!(count(&asm, "f0<0,1,0>UD"), halves, "{ctx}");
            }
        }
    }

    /// A clustered reduction is the scan's levels inside each cluster and a copy of each
    /// cluster's last element over the cluster: at SIMD32, clusters of 2 take 2 + 2 instructions
    /// (strided steps split in halves), clusters of 4 take 2 + 4 + 6.
    /// A clustered reduction is the scan's levels inside each cluster, then one move per
    /// two GRFs reading each cluster's last element through `<c;c,0>` into the result: at
    /// SIMD32, clusters of 2 take 2 combining instructions, of 4 take 2 + 4, and no `WE_all`
    /// move but the fill (two SIMD16 halves) copies anything over the clusters.
    #[test]
    fn clustered_reductions_read_the_last_element_through_rows() {
        let we_all = |asm: &str, op: &str| {
            asm.lines()
                .filter(|l| l.contains(&format!(": {op}(")) && l.contains("WE_all"))
                .count()
        };
        let base = kernel("iadd %7, %7", "i32", 32);
        for (c, adds, region) in [
            (2u32, 2usize, Some("<2,2,0>")),
            (4, 6, Some("<4,4,0>")),
            (8, 10, Some("<8,8,0>")),
            // A cluster of 16 fills each SIMD16 half: a scalar region per half.
            (16, 12, None),
        ] {
            let asm = kernel(&format!("subgroup_clustered_reduce.iadd.{c} %7"), "i32", 32);
            assert_eq!(
                we_all(&asm, "add") - we_all(&base, "add"),
                adds,
                "cluster {c}:\n{asm}"
            );
            assert_eq!(
                we_all(&asm, "mov") - we_all(&base, "mov"),
                2,
                "cluster {c}:\n{asm}"
            );
            if let Some(region) = region {
                assert_eq!(count(&asm, region), 2, "cluster {c}:\n{asm}");
            }
        }
    }

    /// `%8 = op` of type `ty` (`%7`, converted from the loaded i32 `%3` by the instructions
    /// `conv`; `back` converts the result `%8` to the stored i32 `%9`) compiled with the ISA
    /// validator on.
    fn clustered(op: &str, ty: &str, conv: &str, back: &str, simd: u32) -> String {
        let text = format!(
            "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {{
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 4
    %2:i32 = imul %0, %1
    %3:i32 = load ssbo[0] %2 align 4
    {conv}
    %8:{ty} = {op}
    {back}
    store ssbo[0] %2, %9 align 4
}}
"
        );
        compile_text(&text, simd)
    }

    /// Every cluster size (1 up to the width) of 8/16/32/64-bit integers and 16/32/64-bit
    /// floats at SIMD8/16/32 passes the ISA validator's region rules; below the width the
    /// result is read through `<c;c,0>` (one element per row), a cluster of one is the operand itself (no
    /// combining step), and a cluster as wide as the subgroup is a reduction (scalar read).
    #[test]
    fn clustered_reductions_of_every_size_and_type_validate() {
        let int = |ty: &str, op: &'static str| {
            (
                ty.to_string(),
                op,
                format!("%7:{ty} = i2i %3"),
                "%9:i32 = i2i %8".to_string(),
            )
        };
        let types = [
            int("i8", "iadd"),
            int("i16", "imax"),
            int("i64", "iadd"),
            (
                "i32".into(),
                "iadd",
                "%7:i32 = bitcast %3".into(),
                "%9:i32 = bitcast %8".into(),
            ),
            (
                "f16".into(),
                "fadd",
                "%6:i16 = i2i %3\n    %7:f16 = bitcast %6".into(),
                "%10:i16 = bitcast %8\n    %9:i32 = i2i %10".into(),
            ),
            (
                "f32".into(),
                "fmax",
                "%7:f32 = bitcast %3".into(),
                "%9:i32 = bitcast %8".into(),
            ),
            (
                "f64".into(),
                "fadd",
                "%7:f64 = i2f %3".into(),
                "%9:i32 = f2i %8".into(),
            ),
        ];
        for simd in [8u32, 16, 32] {
            for (ty, op, conv, back) in &types {
                let steps = |asm: &str| {
                    asm.lines()
                        .filter(|l| {
                            l.contains("WE_all")
                                && [": add(", ": sel."].iter().any(|o| l.contains(o))
                        })
                        .count()
                };
                // The same kernel storing the operand itself.
                let base = clustered("bitcast %7", ty, conv, back, simd);
                let mut c = 1;
                while c <= simd {
                    let red = format!("subgroup_clustered_reduce.{op}.{c} %7");
                    let asm = clustered(&red, ty, conv, back, simd);
                    let ctx = format!("{red} {ty} SIMD{simd}:\n{asm}");
                    let rows = count(&asm, &format!("<{c},{c},0>"));
                    if c == 1 {
                        assert_eq!(asm.lines().count(), base.lines().count(), "{ctx}");
                    } else {
                        assert!(steps(&asm) > steps(&base), "{ctx}");
                    }
                    // The result move runs in pieces of two GRFs (8 qwords or 16 dword
                    // slots); a cluster as wide as a piece is one element: a scalar.
                    let piece = simd.min(if ty.ends_with("64") { 8 } else { 16 });
                    if c > 1 && c < piece {
                        assert!(rows > 0, "{ctx}");
                    } else {
                        assert_eq!(rows, 0, "{ctx}");
                    }
                    c *= 2;
                }
            }
        }
    }
    /// Scans take ceil(log2 W) levels: at SIMD32, 13 combining instructions (after the
    /// SIMD-width lowering of the strided steps) instead of a chain of 31.
    #[test]
    fn scans_are_log_step() {
        let we_all_adds = |asm: &str| {
            asm.lines()
                .filter(|l| l.contains(": add(") && l.contains("WE_all"))
                .count()
        };
        for (simd, steps) in [(8u32, 4usize), (16, 6), (32, 13)] {
            // The same kernel without the scan: its own `WE_all` adds (lane numbers).
            let base = we_all_adds(&kernel("iadd %7, %7", "i32", simd));
            for op in ["inclusive_scan", "exclusive_scan"] {
                let asm = kernel(&format!("subgroup_{op}.iadd %7"), "i32", simd);
                let adds = we_all_adds(&asm) - base;
                assert_eq!(adds, steps, "{op} SIMD{simd}:\n{asm}");
            }
        }
    }
}
