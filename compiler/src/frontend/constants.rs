//! Constants and specialisation: OpConstant*, OpSpecConstant* (with the pipeline's
//! specialization values), OpSpecConstantOp folded with the IR's op semantics, null and
//! undefined values, and constants turned into IR values.

use super::types::SType;
use super::values::FVal;
use super::{invalid, op_id, rid, rty, unsupported, Fe, FrontendError, Res};
use crate::ir::Op;
use rspirv::dr::{self, Operand};
use rspirv::spirv;
use spirv::Decoration;

pub(super) use crate::specconst::Const;

impl Fe<'_> {
    pub(super) fn spec_value(&self, id: u32) -> Option<&[u8]> {
        let sid = *self.deco(id, Decoration::SpecId)?.first()?;
        self.input
            .specialization
            .iter()
            .find(|(k, _)| *k == sid)
            .map(|(_, v)| v.as_slice())
    }

    pub(super) fn add_const(&mut self, i: &dr::Instruction, t: u32, c: Const) -> Res<()> {
        let id = rid(i)?;
        self.check_type(t)?;
        self.check_const_shape(t, &c, 0)?;
        self.decl.result_types.insert(id, t);
        self.decl.consts.insert(id, (t, c));
        Ok(())
    }

    pub(super) fn check_const_shape(&self, t: u32, c: &Const, depth: u32) -> Res<()> {
        if depth > 16 {
            return invalid("constant nested too deep");
        }
        let ok = match (self.decl.types.get(&t), c) {
            (Some(SType::Bool | SType::Int(_) | SType::Float(_)), Const::Scalar(_)) => true,
            (Some(SType::Vector(e, n)), Const::Comp(v)) => {
                v.len() == usize::from(*n)
                    && v.iter()
                        .all(|x| self.check_const_shape(*e, x, depth + 1).is_ok())
            }
            (Some(SType::Matrix(e, n)), Const::Comp(v)) => {
                v.len() == usize::from(*n)
                    && v.iter()
                        .all(|x| self.check_const_shape(*e, x, depth + 1).is_ok())
            }
            (Some(SType::Array(e, n)), Const::Comp(v)) => {
                v.len() == *n as usize
                    && v.iter()
                        .all(|x| self.check_const_shape(*e, x, depth + 1).is_ok())
            }
            (Some(SType::Struct(m)), Const::Comp(v)) => {
                v.len() == m.len()
                    && v.iter()
                        .zip(m)
                        .all(|(x, t)| self.check_const_shape(*t, x, depth + 1).is_ok())
            }
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            invalid(format!("constant does not match its type %{t}"))
        }
    }

    pub(super) fn null_const(&self, t: u32, depth: u32) -> Res<Const> {
        if depth > 16 {
            return invalid("type nested too deep");
        }
        Ok(match self.decl.types.get(&t) {
            // A PhysicalStorageBuffer pointer is its address: null is address 0.
            Some(
                SType::Bool
                | SType::Int(_)
                | SType::Float(_)
                | SType::Pointer(spirv::StorageClass::PhysicalStorageBuffer, _),
            ) => Const::Scalar(0),
            Some(SType::Vector(e, n)) | Some(SType::Matrix(e, n)) => {
                Const::Comp(vec![self.null_const(*e, depth + 1)?; usize::from(*n)])
            }
            Some(SType::Array(e, n)) => {
                if *n > 4096 {
                    return unsupported("null constant of a large array");
                }
                Const::Comp(vec![self.null_const(*e, depth + 1)?; *n as usize])
            }
            Some(SType::Struct(m)) => Const::Comp(
                m.iter()
                    .map(|x| self.null_const(*x, depth + 1))
                    .collect::<Res<_>>()?,
            ),
            _ => return invalid(format!("no null value for type %{t}")),
        })
    }

    pub(super) fn const_u32(&self, id: u32) -> Res<u32> {
        match self.decl.consts.get(&id) {
            Some((_, Const::Scalar(v))) => Ok(*v as u32),
            _ => invalid(format!("%{id} is not a scalar constant")),
        }
    }

    pub(super) fn spec_op(&self, i: &dr::Instruction, t: u32) -> Res<Const> {
        let Some(Operand::LiteralSpecConstantOpInteger(op)) = i.operands.first() else {
            return invalid("OpSpecConstantOp without opcode");
        };
        let mut args = Vec::new();
        for o in &i.operands[1..] {
            args.push(match o {
                Operand::IdRef(id) => {
                    let (ct, c) = self.decl.consts.get(id).cloned().ok_or_else(|| {
                        FrontendError::Invalid(format!("%{id} is not a constant"))
                    })?;
                    crate::specconst::Arg::Value(c, self.ir_type(ct).ok())
                }
                Operand::LiteralBit32(v) => crate::specconst::Arg::Literal(*v),
                _ => return invalid("OpSpecConstantOp operand"),
            });
        }
        crate::specconst::eval_spec_op(*op, self.ir_type(t).ok(), &args)
    }

    pub(super) fn const_fval(&mut self, t: u32, c: &Const, depth: u32) -> Res<FVal> {
        if depth > 32 {
            return invalid("constant nested too deep");
        }
        match (self.stype(t)?, c) {
            (
                SType::Bool
                | SType::Int(_)
                | SType::Float(_)
                | SType::Pointer(spirv::StorageClass::PhysicalStorageBuffer, _),
                Const::Scalar(v),
            ) => {
                let ty = self.scalar_ir_type(t)?;
                Ok(FVal::V(self.konst(ty, *v)?))
            }
            (SType::Vector(e, _), Const::Comp(v)) => {
                let ty = self.ir_type(t)?;
                let _ = e;
                let bits: Vec<u64> = v
                    .iter()
                    .map(|x| match x {
                        Const::Scalar(s) => {
                            if ty.is_bool() && *s != 0 {
                                ty.mask()
                            } else {
                                s & ty.mask()
                            }
                        }
                        Const::Comp(_) => 0,
                    })
                    .collect();
                Ok(FVal::V(self.emit(ty, Op::Const(bits))?))
            }
            (SType::Matrix(e, _) | SType::Array(e, _), Const::Comp(v)) => Ok(FVal::C(
                v.iter()
                    .map(|x| self.const_fval(e, x, depth + 1))
                    .collect::<Res<_>>()?,
            )),
            (SType::Struct(m), Const::Comp(v)) => Ok(FVal::C(
                m.iter()
                    .zip(v)
                    .map(|(mt, x)| self.const_fval(*mt, x, depth + 1))
                    .collect::<Res<_>>()?,
            )),
            _ => invalid(format!("constant shape does not match type %{t}")),
        }
    }

    /// Records a constant, specialisation constant or undefined value declared at module level.
    pub(super) fn declare_const(&mut self, i: &dr::Instruction) -> Res<()> {
        use spirv::Op as O;
        let op = i.class.opcode;
        match op {
            O::ConstantTrue | O::ConstantFalse | O::SpecConstantTrue | O::SpecConstantFalse => {
                let t = rty(i)?;
                let mut v = matches!(op, O::ConstantTrue | O::SpecConstantTrue);
                if matches!(op, O::SpecConstantTrue | O::SpecConstantFalse) {
                    if let Some(bytes) = self.spec_value(rid(i)?) {
                        v = bytes.iter().any(|b| *b != 0);
                    }
                }
                self.add_const(i, t, Const::Scalar(u64::from(v)))?
            }
            O::Constant | O::SpecConstant => {
                let t = rty(i)?;
                let mut bits = 0u64;
                for (k, o) in i.operands.iter().enumerate() {
                    let w = match o {
                        Operand::LiteralBit32(v) => u64::from(*v),
                        Operand::LiteralBit64(v) => *v,
                        _ => return invalid("constant literal"),
                    };
                    if matches!(o, Operand::LiteralBit64(_)) {
                        bits = w;
                    } else {
                        bits |= w << (32 * k.min(1));
                    }
                }
                let sty = self.scalar_ir_type(t)?;
                if op == O::SpecConstant {
                    if let Some(bytes) = self.spec_value(rid(i)?) {
                        let mut b = [0u8; 8];
                        let n = bytes.len().min(8);
                        b[..n].copy_from_slice(&bytes[..n]);
                        bits = u64::from_le_bytes(b);
                    }
                }
                self.add_const(i, t, Const::Scalar(bits & sty.mask()))?
            }
            O::ConstantComposite | O::SpecConstantComposite => {
                let t = rty(i)?;
                let mut c = Vec::new();
                for k in 0..i.operands.len() {
                    let id = op_id(i, k)?;
                    c.push(
                        self.decl
                            .consts
                            .get(&id)
                            .ok_or_else(|| {
                                FrontendError::Invalid(format!("%{id} is not a constant"))
                            })?
                            .1
                            .clone(),
                    );
                }
                self.add_const(i, t, Const::Comp(c))?
            }
            O::ConstantNull => {
                let t = rty(i)?;
                let c = self.null_const(t, 0)?;
                self.add_const(i, t, c)?
            }
            O::SpecConstantOp => {
                let t = rty(i)?;
                let c = self.spec_op(i, t)?;
                self.add_const(i, t, c)?
            }
            O::Undef => {
                let t = rty(i)?;
                let c = self.null_const(t, 0)?;
                self.add_const(i, t, c)?
            }
            _ => return invalid(format!("{op:?} is not a constant declaration")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_ir, check_ir_specialized};

    /// Without a specialization value a spec constant takes its default, and
    /// OpSpecConstantOp is folded with the IR's op semantics.
    #[test]
    fn spec_constant_op_folds_defaults() {
        check_ir(
            "spec_constant_op_folds_defaults",
            "
            OpDecorate %s SpecId 0
            OpDecorate %Buf BufferBlock
            OpMemberDecorate %Buf 0 Offset 0
            OpDecorate %buf DescriptorSet 0
            OpDecorate %buf Binding 0
            %Buf = OpTypeStruct %u32
            %ptr_buf = OpTypePointer Uniform %Buf
            %ptr_u32 = OpTypePointer Uniform %u32
            %buf = OpVariable %ptr_buf Uniform
            %c0 = OpConstant %i32 0
            %s = OpSpecConstant %u32 20
            %c3 = OpConstant %u32 3
            %sum = OpSpecConstantOp %u32 IMul %s %c3
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %p = OpAccessChain %ptr_u32 %buf %c0
            OpStore %p %sum
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i32 = const 60
                    %1:i32 = const 0
                    store ssbo[0] %1, %0 align 16
                    break
                }
            }
            ",
        );
    }

    #[test]
    fn null_and_composite_constants_become_const_and_vec() {
        check_ir(
            "null_and_composite_constants_become_const_and_vec",
            "
            %ptr_v = OpTypePointer Function %v2f32
            %null = OpConstantNull %v2f32
            %one = OpConstant %f32 1
            %two = OpConstant %f32 2
            %v = OpConstantComposite %v2f32 %one %two
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_v Function %null
            OpStore %x %v
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:f32x2
                loop {
                    %0:f32x2 = const 0.0, 0.0
                    store_var $0, %0
                    %1:f32x2 = const 1.0, 2.0
                    store_var $0, %1
                    break
                }
            }
            ",
        );
    }

    /// A specialization value replaces the default before OpSpecConstantOp is folded.
    #[test]
    fn specialization_value_feeds_spec_constant_op() {
        check_ir_specialized(
            "specialization_value_feeds_spec_constant_op",
            "
            OpDecorate %s SpecId 5
            OpDecorate %Buf BufferBlock
            OpMemberDecorate %Buf 0 Offset 0
            OpDecorate %buf DescriptorSet 0
            OpDecorate %buf Binding 0
            %Buf = OpTypeStruct %u32
            %ptr_buf = OpTypePointer Uniform %Buf
            %ptr_u32 = OpTypePointer Uniform %u32
            %buf = OpVariable %ptr_buf Uniform
            %c0 = OpConstant %i32 0
            %s = OpSpecConstant %u32 20
            %c3 = OpConstant %u32 3
            %sum = OpSpecConstantOp %u32 IMul %s %c3
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %p = OpAccessChain %ptr_u32 %buf %c0
            OpStore %p %sum
            OpReturn
            OpFunctionEnd
            ",
            &[(5, 7u32.to_le_bytes().to_vec())],
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i32 = const 21
                    %1:i32 = const 0
                    store ssbo[0] %1, %0 align 16
                    break
                }
            }
            ",
        );
    }
}
