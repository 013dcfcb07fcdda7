//! Function-body instructions other than ALU ops: phis, loads, stores, composites,
//! calls, barriers, atomics, and extended instructions.

use super::memory::Ptr;
use super::types::SType;
use super::values::FVal;
use super::{idref, invalid, op_id, op_lit, rid, rty, unsupported, Fe, Res};
use crate::ir::{AluOp, AtomicOp, ImageOp, Kind, Op, Scope, Space, Type, Value};
use rspirv::dr;
use rspirv::spirv;

impl Fe<'_> {
    pub(super) fn instruction(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        use spirv::Op as O;
        let op = i.class.opcode;
        match op {
            O::Nop
            | O::Line
            | O::NoLine
            | O::SelectionMerge
            | O::LoopMerge
            | O::Name
            | O::ExecutionMode => {}
            O::Phi => {
                let r = rid(i)?;
                let t = rty(i)?;
                let tree = match self.phi_vars.get(&r) {
                    Some(t) => t.clone(),
                    None => {
                        let tree = self.type_tree(t, 0)?;
                        self.phi_vars.insert(r, tree.clone());
                        tree
                    }
                };
                let v = self.load_tree(&tree)?;
                self.define(r, v)?;
            }
            O::Variable => {
                let r = rid(i)?;
                let Some(SType::Pointer(_, pointee)) = self.decl.types.get(&rty(i)?).cloned()
                else {
                    return invalid("variable type");
                };
                let p = self.alloc_var(r, pointee)?;
                let init = i.operands.get(1).map(idref).transpose()?;
                self.init_var(&p, pointee, init)?;
                self.define(r, FVal::P(Box::new(p)))?;
            }
            O::Load => {
                let p = self.ptr_of(op_id(i, 0)?, b)?;
                self.visible_before_load(i, &p)?;
                let v = self.load_ptr(&p)?;
                self.define(rid(i)?, v)?;
            }
            O::Store => {
                let p = self.ptr_of(op_id(i, 0)?, b)?;
                let v = self.get(op_id(i, 1)?, b)?;
                self.store_ptr(&p, &v)?;
                self.available_after_store(i, &p)?;
            }
            O::CopyMemory => {
                let dst = self.ptr_of(op_id(i, 0)?, b)?;
                let src = self.ptr_of(op_id(i, 1)?, b)?;
                self.visible_before_load(i, &src)?;
                let v = self.load_ptr(&src)?;
                self.store_ptr(&dst, &v)?;
                self.available_after_store(i, &dst)?;
            }
            O::AccessChain | O::InBoundsAccessChain => {
                let base = self.ptr_of(op_id(i, 0)?, b)?;
                let idx: Vec<u32> = (1..i.operands.len())
                    .map(|k| op_id(i, k))
                    .collect::<Res<_>>()?;
                let p = self.access_chain(base, &idx, b)?;
                // A PhysicalStorageBuffer pointer is a value: its address.
                let v = if self.is_physical_pointer(rty(i)?) {
                    FVal::V(self.global_address(&p)?)
                } else {
                    FVal::P(Box::new(p))
                };
                self.define(rid(i)?, v)?;
            }
            O::PtrAccessChain | O::InBoundsPtrAccessChain => {
                let idx: Vec<u32> = (1..i.operands.len())
                    .map(|k| op_id(i, k))
                    .collect::<Res<_>>()?;
                let a = self.ptr_access_chain(op_id(i, 0)?, &idx, b)?;
                self.define(rid(i)?, FVal::V(a))?;
            }
            O::ConvertUToPtr | O::ConvertPtrToU => {
                // A PhysicalStorageBuffer pointer is its 64-bit address; other widths convert
                // as unsigned integers.
                let x = self.getv(op_id(i, 0)?, b)?;
                let t = self.ir_type(rty(i)?)?;
                let st = self.ty(x);
                if st.kind != Kind::Int || st.comps != 1 || t.comps != 1 {
                    return invalid(format!("{op:?} operand"));
                }
                let v = if st.bits == t.bits {
                    x
                } else {
                    self.alu(AluOp::U2u, t, &[x])?
                };
                self.define(rid(i)?, FVal::V(v))?;
            }
            O::PtrEqual | O::PtrNotEqual => {
                // SPIR-V 1.4: two pointers into buffer or shared memory are equal when they
                // name the same space and byte offset; pointers into different spaces never
                // are.
                let x = self.ptr_of(op_id(i, 0)?, b)?;
                let y = self.ptr_of(op_id(i, 1)?, b)?;
                let (
                    Ptr::Mem {
                        space: sx,
                        dyn_off: dx,
                        konst: kx,
                        ..
                    },
                    Ptr::Mem {
                        space: sy,
                        dyn_off: dy,
                        konst: ky,
                        ..
                    },
                ) = (&x, &y)
                else {
                    return unsupported(format!("{op:?} on pointers to function variables"));
                };
                let (sx, sy, dx, dy, kx, ky) = (*sx, *sy, *dx, *dy, *kx, *ky);
                let mut addr = |d: Option<Value>, k: u32| -> Res<Value> {
                    let k = self.i32c(k)?;
                    match d {
                        Some(d) => self.alu(AluOp::Iadd, Type::I32, &[d, k]),
                        None => Ok(k),
                    }
                };
                let (ax, ay) = if sx == sy {
                    (addr(dx, kx)?, addr(dy, ky)?)
                } else {
                    (self.i32c(0)?, self.i32c(1)?)
                };
                let cmp = if op == O::PtrEqual {
                    AluOp::Ieq
                } else {
                    AluOp::Ine
                };
                let r = self.alu(cmp, Type::B1, &[ax, ay])?;
                self.define(rid(i)?, FVal::V(r))?;
            }
            O::PtrDiff => {
                let v = self.ptr_diff(i, b)?;
                self.define(rid(i)?, FVal::V(v))?;
            }
            O::ArrayLength => {
                let p = self.ptr_of(op_id(i, 0)?, b)?;
                let member = op_lit(i, 1)?;
                let Ptr::Mem {
                    space,
                    konst,
                    ty,
                    dyn_off: None,
                    ..
                } = p
                else {
                    return invalid("OpArrayLength of a non-buffer pointer");
                };
                let SType::Struct(m) = self.stype(ty)? else {
                    return invalid("OpArrayLength of a non-struct");
                };
                let Some(SType::RuntimeArray(e)) =
                    m.get(member as usize).map(|t| self.stype(*t)).transpose()?
                else {
                    return invalid("OpArrayLength member is not a runtime array");
                };
                let arr = m[member as usize];
                let off = konst + self.member_offset(ty, member)?;
                let stride = self.elem_stride(arr, e)?.max(1);
                // length = (size - offset) / stride, floored; a range smaller than the
                // offset has length 0 (unsigned: sizes may exceed i32::MAX).
                let size = self.emit(Type::I32, Op::BufferSize(space))?;
                let o = self.i32c(off)?;
                let at_least = self.alu(AluOp::Umax, Type::I32, &[size, o])?;
                let avail = self.alu(AluOp::Isub, Type::I32, &[at_least, o])?;
                let s = self.i32c(stride)?;
                let n = self.alu(AluOp::Udiv, Type::I32, &[avail, s])?;
                self.define(rid(i)?, FVal::V(n))?;
            }
            O::FunctionCall => {
                let callee = op_id(i, 0)?;
                let mut args = Vec::new();
                for k in 1..i.operands.len() {
                    args.push(self.get(op_id(i, k)?, b)?);
                }
                let saved = std::mem::take(&mut self.vals);
                let r = self.inline_call(callee, &args, Some(rty(i)?));
                self.vals = saved;
                if let Some(v) = r? {
                    self.define(rid(i)?, v)?;
                }
            }
            O::ControlBarrier => {
                let exec = self.scope(op_id(i, 0)?)?;
                let mem = self.scope(op_id(i, 1)?)?;
                let semantics = self.const_u32(op_id(i, 2)?)?;
                self.emit_void(Op::Barrier {
                    exec: Some(exec),
                    mem,
                    semantics,
                })?;
            }
            O::MemoryBarrier => {
                let mem = self.scope(op_id(i, 0)?)?;
                let semantics = self.const_u32(op_id(i, 1)?)?;
                self.emit_void(Op::Barrier {
                    exec: None,
                    mem,
                    semantics,
                })?;
            }
            O::AtomicLoad
            | O::AtomicStore
            | O::AtomicExchange
            | O::AtomicCompareExchange
            | O::AtomicIIncrement
            | O::AtomicIDecrement
            | O::AtomicIAdd
            | O::AtomicISub
            | O::AtomicSMin
            | O::AtomicUMin
            | O::AtomicSMax
            | O::AtomicUMax
            | O::AtomicAnd
            | O::AtomicOr
            | O::AtomicXor => self.atomic(i, b)?,
            O::ImageRead | O::ImageWrite => self.image_access(i, b)?,
            O::ImageTexelPointer => self.image_texel_pointer(i, b)?,
            O::SampledImage => self.sampled_image(i, b)?,
            O::Image => self.image_from_sampled(i, b)?,
            O::ImageFetch => self.image_fetch(i, b)?,
            O::ImageSampleExplicitLod => self.image_sample_lod(i, b)?,
            O::ImageGather => self.image_gather(i, b)?,
            O::ImageQuerySizeLod | O::ImageQueryLevels | O::ImageQuerySize => {
                self.image_query(i, b)?
            }
            O::ExtInst => {
                let set = op_id(i, 0)?;
                if !self.decl.ext_glsl.contains(&set) {
                    // NonSemantic instructions carry no meaning.
                    return Ok(());
                }
                let n = op_lit(i, 1)?;
                let mut args = Vec::new();
                for k in 2..i.operands.len() {
                    args.push(self.get(op_id(i, k)?, b)?);
                }
                let v = super::glsl::glsl_std_450(self, n, rty(i)?, &args)?;
                self.define(rid(i)?, v)?;
            }
            _ => {
                let v = self.alu_instruction(i, b)?;
                self.define(rid(i)?, v)?;
            }
        }
        Ok(())
    }

    pub(super) fn scope(&self, id: u32) -> Res<Scope> {
        Ok(match spirv::Scope::from_u32(self.const_u32(id)?) {
            Some(spirv::Scope::Invocation) => Scope::Invocation,
            Some(spirv::Scope::Subgroup) => Scope::Subgroup,
            Some(spirv::Scope::Workgroup) => Scope::Workgroup,
            Some(spirv::Scope::Device | spirv::Scope::CrossDevice | spirv::Scope::QueueFamily) => {
                Scope::Device
            }
            _ => return invalid("bad scope"),
        })
    }

    /// An atomic with the barriers its memory semantics ask for (frontend/memmodel.rs).
    pub(super) fn atomic(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let p = self.ptr_of(op_id(i, 0)?, b)?;
        let (scope, before, after) = self.atomic_barriers(i, &p)?;
        self.memory_barrier(scope, before)?;
        self.atomic_access(i, b)?;
        self.memory_barrier(scope, after)
    }

    fn atomic_access(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        use spirv::Op as O;
        let p = self.ptr_of(op_id(i, 0)?, b)?;
        if let Ptr::Texel { img, coord } = p {
            return self.image_atomic(i, b, img, coord);
        }
        let (space, offset, ty) = match p {
            Ptr::Mem {
                space:
                    space @ (Space::Ssbo(_) | Space::SsboArray(_) | Space::Shared | Space::Global(_)),
                dyn_off,
                konst,
                ty,
                ..
            } => (space, self.offset_value(dyn_off, konst)?, ty),
            Ptr::Var { .. }
            | Ptr::VarComp { .. }
            | Ptr::Mem {
                space: Space::Local,
                ..
            } => {
                // Atomics on function memory are plain read-modify-writes.
                return self.atomic_private(i, p, b);
            }
            _ => {
                return unsupported(
                    "atomics on memory other than storage buffers and shared memory",
                )
            }
        };
        let t = self.ir_type(ty)?;
        if t.kind != Kind::Int || t.comps != 1 {
            return unsupported("atomics on non-integer types");
        }
        let (aop, data) = atomic_op(i)?;
        let store = i.class.opcode == O::AtomicStore;
        let mut dv = Vec::new();
        for k in data {
            // AtomicStore has no result, so its value is operand 3 as well.
            let v = self.getv(op_id(i, k)?, b)?;
            if self.ty(v) != t {
                return invalid("atomic operand type");
            }
            dv.push(v);
        }
        let op = Op::Atomic {
            op: aop,
            space,
            offset,
            data: dv,
        };
        if store {
            self.emit_void(op)?;
        } else {
            let r = self.emit(t, op)?;
            self.define(rid(i)?, FVal::V(r))?;
        }
        Ok(())
    }

    /// An atomic through an `OpImageTexelPointer`: a typed atomic on a one-channel 32-bit
    /// integer texel.
    fn image_atomic(
        &mut self,
        i: &dr::Instruction,
        b: u32,
        img: crate::ir::ImgRef,
        coord: crate::ir::Value,
    ) -> Res<()> {
        use spirv::Op as O;
        let (aop, data) = atomic_op(i)?;
        let t = match i.class.opcode {
            O::AtomicStore => {
                let v = self.getv(op_id(i, 3)?, b)?;
                self.ty(v)
            }
            _ => self.ir_type(rty(i)?)?,
        };
        if t != Type::I32 {
            return unsupported("image atomics on types other than 32-bit integers");
        }
        let mut srcs = vec![coord];
        for k in data {
            let v = self.getv(op_id(i, k)?, b)?;
            if self.ty(v) != t {
                return invalid("atomic operand type");
            }
            srcs.push(v);
        }
        let op = Op::Image(ImageOp::Atomic(aop), img, srcs);
        if i.class.opcode == O::AtomicStore {
            self.emit_void(op)
        } else {
            let r = self.emit(t, op)?;
            self.define(rid(i)?, FVal::V(r))
        }
    }

    pub(super) fn atomic_private(&mut self, i: &dr::Instruction, p: Ptr, b: u32) -> Res<()> {
        use spirv::Op as O;
        let old = self.load_ptr(&p)?.v()?;
        let t = self.ty(old);
        let arg = |this: &mut Self, k| this.getv(op_id(i, k)?, b);
        let new = match i.class.opcode {
            O::AtomicLoad => None,
            O::AtomicStore | O::AtomicExchange => Some(arg(self, 3)?),
            O::AtomicCompareExchange => {
                let (v, cmp) = (arg(self, 4)?, arg(self, 5)?);
                let eq = self.alu(AluOp::Ieq, Type::B1, &[old, cmp])?;
                Some(self.alu(AluOp::Bcsel, t, &[eq, v, old])?)
            }
            O::AtomicIIncrement | O::AtomicIDecrement => {
                let one = self.konst(t, 1)?;
                let op = if i.class.opcode == O::AtomicIIncrement {
                    AluOp::Iadd
                } else {
                    AluOp::Isub
                };
                Some(self.alu(op, t, &[old, one])?)
            }
            o => {
                let v = arg(self, 3)?;
                let op = match o {
                    O::AtomicIAdd => AluOp::Iadd,
                    O::AtomicISub => AluOp::Isub,
                    O::AtomicSMin => AluOp::Imin,
                    O::AtomicUMin => AluOp::Umin,
                    O::AtomicSMax => AluOp::Imax,
                    O::AtomicUMax => AluOp::Umax,
                    O::AtomicAnd => AluOp::Iand,
                    O::AtomicOr => AluOp::Ior,
                    _ => AluOp::Ixor,
                };
                Some(self.alu(op, t, &[old, v])?)
            }
        };
        if let Some(n) = new {
            self.store_ptr(&p, &FVal::V(n))?;
        }
        if i.class.opcode != O::AtomicStore {
            self.define(rid(i)?, FVal::V(old))?;
        }
        Ok(())
    }
}

/// The IR atomic of a SPIR-V atomic instruction and the operand indices of its data.
fn atomic_op(i: &dr::Instruction) -> Res<(AtomicOp, Vec<usize>)> {
    use spirv::Op as O;
    Ok(match i.class.opcode {
        O::AtomicLoad => (AtomicOp::Load, vec![]),
        O::AtomicStore => (AtomicOp::Xchg, vec![3]),
        O::AtomicExchange => (AtomicOp::Xchg, vec![3]),
        // Operands: Pointer, Scope, Equal semantics, Unequal semantics, Value, Comparator.
        O::AtomicCompareExchange => (AtomicOp::CmpXchg, vec![4, 5]),
        O::AtomicIIncrement => (AtomicOp::Inc, vec![]),
        O::AtomicIDecrement => (AtomicOp::Dec, vec![]),
        O::AtomicIAdd => (AtomicOp::Add, vec![3]),
        O::AtomicISub => (AtomicOp::Sub, vec![3]),
        O::AtomicSMin => (AtomicOp::Smin, vec![3]),
        O::AtomicUMin => (AtomicOp::Umin, vec![3]),
        O::AtomicSMax => (AtomicOp::Smax, vec![3]),
        O::AtomicUMax => (AtomicOp::Umax, vec![3]),
        O::AtomicAnd => (AtomicOp::And, vec![3]),
        O::AtomicOr => (AtomicOp::Or, vec![3]),
        O::AtomicXor => (AtomicOp::Xor, vec![3]),
        o => return invalid(format!("{o:?} is not an atomic")),
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::check_ir;

    /// An atomic on a buffer becomes an IR atomic with the buffer's slot and byte offset.
    #[test]
    fn buffer_atomic_add_becomes_atomic_op() {
        check_ir(
            "buffer_atomic_add_becomes_atomic_op",
            "
            OpDecorate %Buf BufferBlock
            OpMemberDecorate %Buf 0 Offset 0
            OpMemberDecorate %Buf 1 Offset 4
            OpDecorate %buf DescriptorSet 0
            OpDecorate %buf Binding 0
            %Buf = OpTypeStruct %u32 %u32
            %ptr_buf = OpTypePointer Uniform %Buf
            %ptr_u32 = OpTypePointer Uniform %u32
            %buf = OpVariable %ptr_buf Uniform
            %c1 = OpConstant %i32 1
            %u1 = OpConstant %u32 1
            %device = OpConstant %u32 1
            %relaxed = OpConstant %u32 0
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %p = OpAccessChain %ptr_u32 %buf %c1
            %old = OpAtomicIAdd %u32 %p %device %relaxed %u1
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i32 = const 4
                    %1:i32 = const 1
                    %2:i32 = atomic_add ssbo[0] %0, %1
                    break
                }
            }
            ",
        );
    }

    /// Composite construction and extraction work on front-end values: a vector is built
    /// with `vec` and read back with `extract`.
    #[test]
    fn composite_construct_and_extract() {
        check_ir(
            "composite_construct_and_extract",
            "
            OpDecorate %gid BuiltIn GlobalInvocationId
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %ptr_f = OpTypePointer Function %f32
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_f Function
            %id = OpLoad %v3u32 %gid
            %i = OpCompositeExtract %u32 %id 1
            %f = OpConvertUToF %f32 %i
            %v = OpCompositeConstruct %v2f32 %f %f
            %e = OpCompositeExtract %f32 %v 1
            OpStore %x %e
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:f32
                loop {
                    %0:f32 = const 0.0
                    store_var $0, %0
                    %1:i32x3 = sysval global_invocation_id
                    %2:i32 = extract %1, 1
                    %3:f32 = u2f %2
                    %4:f32x2 = vec %3, %3
                    %5:f32 = extract %4, 1
                    store_var $0, %5
                    break
                }
            }
            ",
        );
    }
}
