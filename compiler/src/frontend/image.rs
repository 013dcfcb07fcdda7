//! Storage images and storage texel buffers: `OpImageRead`, `OpImageWrite`,
//! `OpImageTexelPointer` (for atomics). Each access becomes one IR `image_*` op on the
//! image's binding-table index, which the back end turns into typed surface messages; the
//! surface format (and with it the conversion between memory and the 32-bit channels) is
//! the descriptor's, as the hardware's typed messages define it.

use super::memory::Ptr;
use super::types::{ImageType, SType};
use super::values::FVal;
use super::{invalid, op_id, rid, rty, unsupported, Fe, Res};
use crate::ir::{ImageOp, Kind, Op, Type, Value};
use rspirv::dr;

impl Fe<'_> {
    /// The image behind id `id` (an image variable, an element of an image array, or an
    /// image loaded from one): its first binding-table index and type.
    pub(super) fn image_of(&mut self, id: u32, b: u32) -> Res<(u32, ImageType)> {
        match self.get(id, b)? {
            FVal::P(p) => match *p {
                Ptr::Image { bti, count: 1, ty } => match self.stype(ty)? {
                    SType::Image(t) => Ok((bti, t)),
                    _ => invalid(format!("%{id} is not an image")),
                },
                Ptr::Image { .. } => invalid(format!("%{id} is an array of images")),
                _ => invalid(format!("%{id} is not an image")),
            },
            _ => invalid(format!("%{id} is not an image")),
        }
    }

    /// The typed message's coordinates: the first `t.coords()` components of the SPIR-V
    /// coordinate as 32-bit integers.
    fn image_coords(&mut self, t: &ImageType, id: u32, b: u32) -> Res<Value> {
        if t.multisampled {
            return unsupported("multisampled storage images");
        }
        let c = self.getv(id, b)?;
        let ct = self.ty(c);
        let n = t.coords();
        if ct.kind != Kind::Int || ct.comps < n {
            return invalid("image coordinate is not an integer vector of the image's dimension");
        }
        if ct.comps == n && ct.bits == 32 {
            return Ok(c);
        }
        let mut comps = Vec::new();
        for k in 0..n {
            let x = self.extract(c, k)?;
            comps.push(self.as_i32(x)?);
        }
        if n == 1 {
            return Ok(comps[0]);
        }
        self.emit(Type::I32.vec(n), Op::Vec(comps))
    }

    /// The IR texel type of an image (4 components of its 32-bit sampled type).
    fn texel_type(&self, t: &ImageType) -> Res<Type> {
        let s = self.ir_type(t.sampled_ty)?;
        if s.bits != 32 || s.comps != 1 || s.is_bool() {
            return unsupported("images whose sampled type is not a 32-bit scalar");
        }
        Ok(s.vec(4))
    }

    pub(super) fn image_read(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (bti, t) = self.image_of(op_id(i, 0)?, b)?;
        let coord = self.image_coords(&t, op_id(i, 1)?, b)?;
        let tt = self.texel_type(&t)?;
        let rt = self.ir_type(rty(i)?)?;
        if rt.scalar_type() != tt.scalar_type() {
            return invalid("OpImageRead result type differs from the sampled type");
        }
        let texel = self.emit(tt, Op::Image(ImageOp::Load, bti, vec![coord]))?;
        let v = if rt.comps == 4 {
            texel
        } else if rt.comps == 1 {
            self.extract(texel, 0)?
        } else {
            let comps = (0..rt.comps)
                .map(|k| self.extract(texel, k))
                .collect::<Res<Vec<_>>>()?;
            self.emit(rt, Op::Vec(comps))?
        };
        self.define(rid(i)?, FVal::V(v))
    }

    pub(super) fn image_write(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (bti, t) = self.image_of(op_id(i, 0)?, b)?;
        let coord = self.image_coords(&t, op_id(i, 1)?, b)?;
        let tt = self.texel_type(&t)?;
        let v = self.getv(op_id(i, 2)?, b)?;
        let vt = self.ty(v);
        if vt.scalar_type() != tt.scalar_type() {
            return invalid("OpImageWrite texel type differs from the sampled type");
        }
        // Channels the texel lacks are written as 0 (the format has none of them).
        let texel = if vt.comps == 4 {
            v
        } else {
            let zero = self.konst(tt.scalar_type(), 0)?;
            let mut comps = Vec::new();
            for k in 0..4 {
                comps.push(if k < vt.comps {
                    self.extract(v, k)?
                } else {
                    zero
                });
            }
            self.emit(tt, Op::Vec(comps))?
        };
        self.emit_void(Op::Image(ImageOp::Store, bti, vec![coord, texel]))
    }

    /// `OpImageTexelPointer`: operands (image pointer, coordinate, sample).
    pub(super) fn image_texel_pointer(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (bti, t) = self.image_of(op_id(i, 0)?, b)?;
        let coord = self.image_coords(&t, op_id(i, 1)?, b)?;
        self.define(rid(i)?, FVal::P(Box::new(Ptr::Texel { bti, coord })))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::check_ir;

    /// A storage image read, write and atomic become typed image ops on the image's
    /// binding-table entry, with the coordinate as a 32-bit integer vector and the texel
    /// widened to four components.
    #[test]
    fn storage_image_read_write_atomic_become_image_ops() {
        check_ir(
            "storage_image_read_write_atomic_become_image_ops",
            "
            OpCapability StorageImageExtendedFormats
            OpDecorate %src DescriptorSet 0
            OpDecorate %src Binding 0
            OpDecorate %dst DescriptorSet 0
            OpDecorate %dst Binding 1
            %v2i32 = OpTypeVector %i32 2
            %v4u32 = OpTypeVector %u32 4
            %img = OpTypeImage %u32 2D 0 0 0 2 R32ui
            %pimg = OpTypePointer UniformConstant %img
            %src = OpVariable %pimg UniformConstant
            %dst = OpVariable %pimg UniformConstant
            %ptex = OpTypePointer Image %u32
            %c1 = OpConstant %i32 1
            %c2 = OpConstant %i32 2
            %u0 = OpConstant %u32 0
            %u1 = OpConstant %u32 1
            %xy = OpConstantComposite %v2i32 %c1 %c2
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %s = OpLoad %img %src
            %t = OpImageRead %v4u32 %s %xy
            %d = OpLoad %img %dst
            OpImageWrite %d %xy %t
            %p = OpImageTexelPointer %ptex %dst %xy %u0
            %old = OpAtomicIAdd %u32 %p %u1 %u0 %u1
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i32x2 = const 1, 2
                    %1:i32x4 = image_load img[0] %0
                    %2:i32x2 = const 1, 2
                    image_store img[1] %2, %1
                    %3:i32x2 = const 1, 2
                    %4:i32 = const 1
                    %5:i32 = image_atomic_add img[1] %3, %4
                    break
                }
            }
            ",
        );
    }
}
