//! `OpGroupNonUniform*` instructions and the subgroup mask built-ins.
//!
//! Ballots are `u32x4` values of which only the first word can be non-zero: Ferrite's
//! widest subgroup has 32 invocations. The bit-count, find and extract instructions on a
//! ballot therefore read that word only.

use super::values::FVal;
use super::{invalid, unsupported, Fe, Res};
use crate::ir::{AluOp, Op, RedOp, SubgroupOp, SysVal, Type, Value};
use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, BuiltIn, GroupOperation};

impl Fe<'_> {
    /// One scalar subgroup operation, or one per component of a vector.
    fn sg_map(&mut self, op: SubgroupOp, t: Type, srcs: &[Value]) -> Res<Value> {
        if t.comps == 1 {
            return self.emit(t, Op::Subgroup(op, srcs.to_vec()));
        }
        let mut comps = Vec::new();
        for c in 0..t.comps {
            let x = self.extract(srcs[0], c)?;
            let mut s = vec![x];
            s.extend_from_slice(&srcs[1..]);
            comps.push(self.emit(t.scalar_type(), Op::Subgroup(op, s))?);
        }
        self.emit(t, Op::Vec(comps))
    }

    /// Bits of a ballot word that name invocations of the subgroup: `~0 >> (32 - size)`.
    fn sg_size_mask(&mut self) -> Res<Value> {
        let size = self.emit(Type::I32, Op::SysVal(SysVal::SubgroupSize))?;
        let k32 = self.i32c(32)?;
        let sh = self.alu(AluOp::Isub, Type::I32, &[k32, size])?;
        let ones = self.i32c(u32::MAX)?;
        self.alu(AluOp::Ushr, Type::I32, &[ones, sh])
    }

    /// Bit `i` of the ballot `x` as a boolean.
    fn sg_ballot_bit(&mut self, x: Value, i: Value) -> Res<Value> {
        let w = self.extract(x, 0)?;
        let s = self.alu(AluOp::Ushr, Type::I32, &[w, i])?;
        let one = self.i32c(1)?;
        let b = self.alu(AluOp::Iand, Type::I32, &[s, one])?;
        let zero = self.i32c(0)?;
        self.alu(AluOp::Ine, Type::B1, &[b, zero])
    }

    /// The `SubgroupEq/Ge/Gt/Le/LtMask` built-ins from the invocation's index.
    pub(super) fn subgroup_mask(&mut self, b: BuiltIn) -> Res<FVal> {
        let l = self.emit(Type::I32, Op::SysVal(SysVal::SubgroupInvocation))?;
        let ones = self.i32c(u32::MAX)?;
        let one = self.i32c(1)?;
        let ge = self.alu(AluOp::Ishl, Type::I32, &[ones, l])?;
        // Shifted twice so that invocation 31 gets an empty mask, not a shift by 32.
        let gt = self.alu(AluOp::Ishl, Type::I32, &[ge, one])?;
        let m = match b {
            BuiltIn::SubgroupEqMask => self.alu(AluOp::Ishl, Type::I32, &[one, l])?,
            BuiltIn::SubgroupGeMask => ge,
            BuiltIn::SubgroupGtMask => gt,
            BuiltIn::SubgroupLeMask => self.alu(AluOp::Inot, Type::I32, &[gt])?,
            BuiltIn::SubgroupLtMask => self.alu(AluOp::Inot, Type::I32, &[ge])?,
            other => return unsupported(format!("built-in {other:?}")),
        };
        let valid = self.sg_size_mask()?;
        let m = self.alu(AluOp::Iand, Type::I32, &[m, valid])?;
        let zero = self.i32c(0)?;
        Ok(FVal::V(self.emit(
            Type::I32.vec(4),
            Op::Vec(vec![m, zero, zero, zero]),
        )?))
    }

    /// An `OpGroupNonUniform*` instruction; `args` are its id operands after the scope.
    pub(super) fn subgroup_instruction(
        &mut self,
        i: &dr::Instruction,
        t: Type,
        args: &[FVal],
    ) -> Res<FVal> {
        use spirv::Op as O;
        let op = i.class.opcode;
        let scope = i.operands.first().and_then(|o| match o {
            Operand::IdScope(s) => Some(*s),
            _ => None,
        });
        let Some(scope) = scope else {
            return invalid(format!("{op:?} without an execution scope"));
        };
        if self.const_u32(scope)? != spirv::Scope::Subgroup as u32 {
            return unsupported(format!("{op:?} at a scope other than Subgroup"));
        }
        let group_op = i.operands.iter().find_map(|o| match o {
            Operand::GroupOperation(g) => Some(*g),
            _ => None,
        });
        let a: Vec<Value> = args.iter().map(|x| x.v()).collect::<Res<_>>()?;
        let need = |n: usize| -> Res<()> {
            if a.len() < n {
                invalid(format!("{op:?} operand count"))
            } else {
                Ok(())
            }
        };
        let red = |r: RedOp| -> Res<SubgroupOp> {
            Ok(match group_op {
                Some(GroupOperation::Reduce) => SubgroupOp::Reduce(r),
                Some(GroupOperation::InclusiveScan) => SubgroupOp::InclusiveScan(r),
                Some(GroupOperation::ExclusiveScan) => SubgroupOp::ExclusiveScan(r),
                g => return unsupported(format!("{op:?} with group operation {g:?}")),
            })
        };
        if let Some(r) = reduction(op) {
            need(1)?;
            let s = if group_op == Some(GroupOperation::ClusteredReduce) {
                let id = i.operands.iter().rev().find_map(|o| match o {
                    Operand::IdRef(v) => Some(*v),
                    _ => None,
                });
                let (true, Some(id)) = (a.len() == 2, id) else {
                    return invalid(format!("{op:?} without a cluster size"));
                };
                let n = self.const_u32(id)?;
                if !n.is_power_of_two() || n > 128 {
                    return invalid(format!("{op:?} cluster size {n}"));
                }
                SubgroupOp::ClusteredReduce(r, n as u8)
            } else {
                red(r)?
            };
            return Ok(FVal::V(self.sg_map(s, t, &a[..1])?));
        }
        let v = match op {
            O::GroupNonUniformElect => self.emit(t, Op::Subgroup(SubgroupOp::Elect, vec![]))?,
            O::GroupNonUniformAll | O::GroupNonUniformAny => {
                need(1)?;
                let s = if op == O::GroupNonUniformAll {
                    SubgroupOp::All
                } else {
                    SubgroupOp::Any
                };
                self.emit(t, Op::Subgroup(s, vec![a[0]]))?
            }
            O::GroupNonUniformAllEqual => {
                // A vector is equal across the subgroup when each of its components is: one
                // operation per component, their results ANDed.
                need(1)?;
                let comps = self.ty(a[0]).comps;
                let mut all = None;
                for c in 0..comps {
                    let x = self.extract(a[0], c)?;
                    let e = self.emit(t, Op::Subgroup(SubgroupOp::AllEqual, vec![x]))?;
                    all = Some(match all {
                        None => e,
                        Some(p) => self.alu(AluOp::Iand, t, &[p, e])?,
                    });
                }
                match all {
                    Some(v) => v,
                    None => {
                        return invalid("OpGroupNonUniformAllEqual on a value of no components")
                    }
                }
            }
            O::GroupNonUniformBallot => {
                need(1)?;
                self.emit(t, Op::Subgroup(SubgroupOp::Ballot, vec![a[0]]))?
            }
            O::GroupNonUniformInverseBallot => {
                need(1)?;
                let l = self.emit(Type::I32, Op::SysVal(SysVal::SubgroupInvocation))?;
                self.sg_ballot_bit(a[0], l)?
            }
            O::GroupNonUniformBallotBitExtract => {
                need(2)?;
                self.sg_ballot_bit(a[0], a[1])?
            }
            O::GroupNonUniformBallotBitCount => {
                need(1)?;
                let w = self.extract(a[0], 0)?;
                let m = match group_op {
                    Some(GroupOperation::Reduce) => self.sg_size_mask()?,
                    Some(GroupOperation::InclusiveScan) => {
                        match self.subgroup_mask(BuiltIn::SubgroupLeMask)? {
                            FVal::V(x) => self.extract(x, 0)?,
                            _ => unreachable!(),
                        }
                    }
                    Some(GroupOperation::ExclusiveScan) => {
                        match self.subgroup_mask(BuiltIn::SubgroupLtMask)? {
                            FVal::V(x) => self.extract(x, 0)?,
                            _ => unreachable!(),
                        }
                    }
                    g => return unsupported(format!("{op:?} with group operation {g:?}")),
                };
                let x = self.alu(AluOp::Iand, Type::I32, &[w, m])?;
                self.alu(AluOp::BitCount, Type::I32, &[x])?
            }
            O::GroupNonUniformBallotFindLSB | O::GroupNonUniformBallotFindMSB => {
                need(1)?;
                let w = self.extract(a[0], 0)?;
                let f = if op == O::GroupNonUniformBallotFindLSB {
                    AluOp::FindLsb
                } else {
                    AluOp::UfindMsb
                };
                self.alu(f, Type::I32, &[w])?
            }
            O::GroupNonUniformBroadcast => {
                need(2)?;
                self.sg_map(SubgroupOp::Broadcast, t, &a[..2])?
            }
            O::GroupNonUniformShuffle
            | O::GroupNonUniformShuffleXor
            | O::GroupNonUniformShuffleUp
            | O::GroupNonUniformShuffleDown
            | O::GroupNonUniformQuadBroadcast
            | O::GroupNonUniformQuadSwap => {
                need(2)?;
                let k = a[1];
                let id = if op == O::GroupNonUniformShuffle {
                    k
                } else {
                    let l = self.emit(Type::I32, Op::SysVal(SysVal::SubgroupInvocation))?;
                    match op {
                        O::GroupNonUniformShuffleXor => {
                            self.alu(AluOp::Ixor, Type::I32, &[l, k])?
                        }
                        O::GroupNonUniformShuffleUp => self.alu(AluOp::Isub, Type::I32, &[l, k])?,
                        O::GroupNonUniformShuffleDown => {
                            self.alu(AluOp::Iadd, Type::I32, &[l, k])?
                        }
                        O::GroupNonUniformQuadBroadcast => {
                            let m = self.i32c(!3)?;
                            let q = self.alu(AluOp::Iand, Type::I32, &[l, m])?;
                            self.alu(AluOp::Ior, Type::I32, &[q, k])?
                        }
                        _ => {
                            // Direction 0, 1, 2: swap across x, y, the diagonal.
                            let one = self.i32c(1)?;
                            let x = self.alu(AluOp::Iadd, Type::I32, &[k, one])?;
                            self.alu(AluOp::Ixor, Type::I32, &[l, x])?
                        }
                    }
                };
                self.sg_map(SubgroupOp::Shuffle, t, &[a[0], id])?
            }
            O::GroupNonUniformBroadcastFirst => {
                need(1)?;
                self.sg_map(SubgroupOp::BroadcastFirst, t, &a[..1])?
            }
            other => return unsupported(format!("subgroup operation {other:?}")),
        };
        Ok(FVal::V(v))
    }
}

/// The reduction an arithmetic or logical `OpGroupNonUniform*` instruction performs
/// (the logical ones act on booleans, which the bitwise reductions cover).
fn reduction(op: spirv::Op) -> Option<RedOp> {
    use spirv::Op as O;
    Some(match op {
        O::GroupNonUniformIAdd => RedOp::Iadd,
        O::GroupNonUniformFAdd => RedOp::Fadd,
        O::GroupNonUniformIMul => RedOp::Imul,
        O::GroupNonUniformFMul => RedOp::Fmul,
        O::GroupNonUniformSMin => RedOp::Imin,
        O::GroupNonUniformUMin => RedOp::Umin,
        O::GroupNonUniformFMin => RedOp::Fmin,
        O::GroupNonUniformSMax => RedOp::Imax,
        O::GroupNonUniformUMax => RedOp::Umax,
        O::GroupNonUniformFMax => RedOp::Fmax,
        O::GroupNonUniformBitwiseAnd | O::GroupNonUniformLogicalAnd => RedOp::And,
        O::GroupNonUniformBitwiseOr | O::GroupNonUniformLogicalOr => RedOp::Or,
        O::GroupNonUniformBitwiseXor | O::GroupNonUniformLogicalXor => RedOp::Xor,
        _ => return None,
    })
}

/// Whether the front end translates `op` through [`Fe::subgroup_instruction`].
pub(super) fn is_subgroup_instruction(op: spirv::Op) -> bool {
    use spirv::Op as O;
    reduction(op).is_some()
        || matches!(
            op,
            O::GroupNonUniformElect
                | O::GroupNonUniformAll
                | O::GroupNonUniformAny
                | O::GroupNonUniformAllEqual
                | O::GroupNonUniformBroadcast
                | O::GroupNonUniformBroadcastFirst
                | O::GroupNonUniformShuffle
                | O::GroupNonUniformShuffleXor
                | O::GroupNonUniformShuffleUp
                | O::GroupNonUniformShuffleDown
                | O::GroupNonUniformQuadBroadcast
                | O::GroupNonUniformQuadSwap
                | O::GroupNonUniformBallot
                | O::GroupNonUniformInverseBallot
                | O::GroupNonUniformBallotBitExtract
                | O::GroupNonUniformBallotBitCount
                | O::GroupNonUniformBallotFindLSB
                | O::GroupNonUniformBallotFindMSB
        )
}
