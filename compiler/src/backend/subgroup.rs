//! Subgroup operations at one SIMD width (see docs/subgroups.md).
//!
//! The subgroup is the thread's SIMD8/16/32 channels. Every operation follows one scheme:
//! a temporary of one dword per channel is first filled with the operation's identity by a
//! `WE_all` move (so disabled channels hold the identity), then the active channels write
//! their contribution with an ordinary, execution-masked instruction; the combining steps
//! after that run `WE_all` over the temporary, so they see every channel and the disabled
//! ones cannot change the result. Reductions halve the channel count per step
//! (16, 8, 4, 2, 1 channels, all aligned contiguous regions); scans run a chain of
//! one-channel steps. The result is read back with a scalar `<0;1,0>` region (reductions)
//! or per channel (scans) by an execution-masked move.

use super::isel::Isel;
use super::lir::*;
use super::BackendError;
use crate::ir::{self, RedOp, SubgroupOp};
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

impl Isel<'_> {
    /// A 32-bit value of `v` (component 0), or an error naming the unsupported type.
    fn sg_src(&mut self, v: ir::Value) -> Res<Opnd> {
        let t = self.func.ty(v);
        if t.bits != 32 && !(t.is_bool() && t.bits == 1) {
            return Err(BackendError::Unsupported(format!(
                "subgroup operation on {t} (32-bit types only so far)"
            )));
        }
        self.comp(v, 0)
    }

    /// A dword per channel: `identity` in every channel (`WE_all`), then `src` in the
    /// active ones.
    pub(super) fn sg_fill(&mut self, src: Opnd, identity: u32) -> Opnd {
        let w = self.w;
        let mut b = self.b();
        let t = b.vreg(Type::UD, 1);
        b.at(w, 0, true).mov(t, Opnd::ud(identity));
        b.mov(t.retype(src.ty), src);
        t
    }

    /// One combining step over `n` channels: `d = a op b`, `WE_all`.
    fn sg_step(&mut self, r: RedOp, n: u8, d: Opnd, a: Opnd, c: Opnd) {
        let (op, ty, cm) = step_op(r);
        let mut b = self.b();
        let mut b = b.at(n, 0, true);
        b.alu2(op, d.retype(ty), a.retype(ty), c.retype(ty)).cmod = cm;
    }

    /// Reduces a filled temporary in place; the result is its channel 0.
    pub(super) fn sg_reduce(&mut self, r: RedOp, t: Opnd) -> Opnd {
        let mut n = self.w as u32;
        while n > 1 {
            n /= 2;
            self.sg_step(r, n as u8, t, t, t.offset(4 * n));
        }
        t.scalar()
    }

    /// The lowest-numbered active channel, as a scalar dword.
    fn sg_first_lane(&mut self) -> Opnd {
        let lane = self.lane();
        let t = self.sg_fill(lane.retype(Type::UD), u32::MAX);
        self.sg_reduce(RedOp::Umin, t)
    }

    /// `x` of the channel numbered `id` (a dword per channel, the same in all active
    /// channels): the active channels keep `x` where their number is `id`, zero
    /// elsewhere, and an OR over all channels collects it.
    fn sg_pick(&mut self, x: Opnd, id: Opnd) -> Opnd {
        let lane = self.lane();
        let w = self.w;
        let mut b = self.b();
        let e = b.vreg(Type::D, 1);
        b.cmp(CondMod::Z, e, lane, id.retype(Type::D));
        let t = b.vreg(Type::UD, 1);
        b.at(w, 0, true).mov(t, Opnd::ud(0));
        b.alu2(Opcode::And, t, x.retype(Type::UD), e.retype(Type::UD));
        self.sg_reduce(RedOp::Or, t)
    }

    pub(super) fn subgroup(
        &mut self,
        op: SubgroupOp,
        srcs: &[ir::Value],
        dst: ir::Value,
    ) -> Res<()> {
        let w = self.w as u32;
        let d = self.def_reg(dst)?;
        if !matches!(op, SubgroupOp::Ballot) && self.func.ty(dst).bits != 32 {
            let t = self.func.ty(dst);
            if !(t.is_bool() && t.bits == 1) {
                return Err(BackendError::Unsupported(format!(
                    "subgroup operation with a {t} result (32-bit types only so far)"
                )));
            }
        }
        match op {
            SubgroupOp::Elect => {
                let first = self.sg_first_lane();
                let lane = self.lane();
                self.b()
                    .cmp(CondMod::Z, d.retype(Type::D), lane, first.retype(Type::D));
            }
            SubgroupOp::All | SubgroupOp::Any => {
                let x = self.sg_src(srcs[0])?;
                let (r, id) = if op == SubgroupOp::All {
                    (RedOp::And, u32::MAX)
                } else {
                    (RedOp::Or, 0)
                };
                let t = self.sg_fill(x.retype(Type::UD), id);
                let s = self.sg_reduce(r, t);
                self.b().mov(d.retype(Type::UD), s);
            }
            SubgroupOp::AllEqual => {
                // Bit equality with the first active channel's value, then `all`.
                let x = self.sg_src(srcs[0])?;
                let first = self.sg_first_lane();
                let f = self.sg_pick(x, first);
                let mut b = self.b();
                let e = b.vreg(Type::D, 1);
                b.cmp(CondMod::Z, e, x.retype(Type::D), f.retype(Type::D));
                let t = self.sg_fill(e.retype(Type::UD), u32::MAX);
                let s = self.sg_reduce(RedOp::And, t);
                self.b().mov(d.retype(Type::UD), s);
            }
            SubgroupOp::Ballot => {
                // Channel i contributes 1 << i where its boolean is true; an OR collects
                // the mask. Channels past the width give the zero words 1..3.
                let x = self.sg_src(srcs[0])?;
                let lane = self.lane();
                let mut b = self.b();
                let bit = b.vreg(Type::UD, 1);
                b.alu2(Opcode::Shl, bit, Opnd::ud(1), lane.retype(Type::UD));
                let t = b.vreg(Type::UD, 1);
                b.at(w as u8, 0, true).mov(t, Opnd::ud(0));
                b.alu2(Opcode::And, t, bit, x.retype(Type::UD));
                let s = self.sg_reduce(RedOp::Or, t);
                let mut b = self.b();
                b.mov(d.retype(Type::UD), s);
                for c in 1..4 {
                    b.mov(d.retype(Type::UD).offset(c * 4 * w), Opnd::ud(0));
                }
            }
            SubgroupOp::Broadcast => {
                let x = self.sg_src(srcs[0])?;
                let id = self.comp(srcs[1], 0)?;
                let v = match id.base {
                    // A constant channel: a scalar region on that channel's dword.
                    Base::Imm(i) if !x.is_imm() => x.lane_offset(i as u32 % w).scalar(),
                    _ if x.is_imm() => x,
                    _ => self.sg_pick(x, id),
                };
                self.b().mov(d.retype(Type::UD), v.retype(Type::UD));
            }
            SubgroupOp::Shuffle => {
                let x = self.sg_src(srcs[0])?;
                let id = self.comp(srcs[1], 0)?;
                if x.is_imm() {
                    self.b().mov(d.retype(Type::UD), x.retype(Type::UD));
                } else if let Base::Imm(i) = id.base {
                    let v = x.lane_offset(i as u32 % w).scalar();
                    self.b().mov(d.retype(Type::UD), v.retype(Type::UD));
                } else {
                    // Without indirect addressing: for each channel j, the channels whose
                    // index is j take channel j's value through a scalar region, under a
                    // flag from `cmp.z`. 2 x W instructions.
                    let mut b = self.b();
                    for j in 0..w {
                        b.cmp(
                            CondMod::Z,
                            Opnd::null(Type::D),
                            id.retype(Type::D),
                            Opnd::d(j as i32),
                        );
                        b.mov(
                            d.retype(Type::UD),
                            x.retype(Type::UD).lane_offset(j).scalar(),
                        )
                        .pred = Some(Pred {
                            flag_sub: 0,
                            inverse: false,
                        });
                    }
                }
            }
            SubgroupOp::BroadcastFirst => {
                let x = self.sg_src(srcs[0])?;
                let v = if x.is_imm() {
                    x
                } else {
                    let first = self.sg_first_lane();
                    self.sg_pick(x, first)
                };
                self.b().mov(d.retype(Type::UD), v.retype(Type::UD));
            }
            SubgroupOp::Reduce(r) => {
                let x = self.sg_src(srcs[0])?;
                let t = self.sg_fill(x, r.identity32());
                let s = self.sg_reduce(r, t);
                self.b().mov(d.retype(Type::UD), s.retype(Type::UD));
            }
            SubgroupOp::ClusteredReduce(r, size) => {
                // Halving steps inside each cluster, then each cluster's channel 0 copied
                // back over the cluster by doubling `mov`s, all `WE_all`; the result is
                // read per channel.
                let x = self.sg_src(srcs[0])?;
                let t = self.sg_fill(x, r.identity32());
                let c = u32::from(size).min(w);
                let mut n = c;
                while n > 1 {
                    n /= 2;
                    for base in (0..w).step_by(c as usize) {
                        let at = t.offset(4 * base);
                        self.sg_step(r, n as u8, at, at, at.offset(4 * n));
                    }
                }
                while n < c {
                    for base in (0..w).step_by(c as usize) {
                        let at = t.offset(4 * base);
                        let mut b = self.b();
                        b.at(n as u8, 0, true).mov(at.offset(4 * n), at);
                    }
                    n *= 2;
                }
                self.b().mov(d.retype(Type::UD), t);
            }
            SubgroupOp::InclusiveScan(r) => {
                let x = self.sg_src(srcs[0])?;
                let t = self.sg_fill(x, r.identity32());
                for i in 1..w {
                    self.sg_step(
                        r,
                        1,
                        t.offset(4 * i),
                        t.offset(4 * (i - 1)),
                        t.offset(4 * i),
                    );
                }
                self.b().mov(d.retype(Type::UD), t);
            }
            SubgroupOp::ExclusiveScan(r) => {
                let x = self.sg_src(srcs[0])?;
                let t = self.sg_fill(x, r.identity32());
                let mut b = self.b();
                let e = b.vreg(Type::UD, 1);
                b.at(1, 0, true).mov(e, Opnd::ud(r.identity32()));
                for i in 1..w {
                    self.sg_step(
                        r,
                        1,
                        e.offset(4 * i),
                        e.offset(4 * (i - 1)),
                        t.offset(4 * (i - 1)),
                    );
                }
                self.b().mov(d.retype(Type::UD), e);
            }
        }
        Ok(())
    }
}
