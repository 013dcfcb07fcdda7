//! Sampled images and texel buffers: `OpSampledImage`, `OpImage`, `OpImageFetch`,
//! `OpImageSampleExplicitLod`, `OpImageGather`/`OpImageDrefGather` and the size and level
//! queries. Each becomes one IR sampler op on the image's binding-table index (and the
//! sampler's), which the back end turns into a sampler message; the descriptors and storage
//! images are in `image.rs`.

use super::memory::Ptr;
use super::types::{ImageType, SType};
use super::values::FVal;
use super::{invalid, op_id, rid, rty, unsupported, Fe, Res};
use crate::ir::{ImageOp, ImgRef, Kind, Op, Type, Value};
use crate::specconst::Const;
use rspirv::dr;
use rspirv::spirv;

/// The explicit level of an image instruction's optional operands starting at `from`:
/// only `Lod` is supported (offsets, gradients, sample indices and the rest are refused).
fn lod_operand(i: &dr::Instruction, from: usize) -> Res<Option<u32>> {
    let ops = image_operands(i, from)?;
    if ops.const_offset.is_some() || ops.grad.is_some() || ops.has_gather_offsets() {
        return unsupported("an offset or Grad image operand on this instruction");
    }
    Ok(ops.lod)
}

/// The ids of the optional image operands Ferrite compiles.
#[derive(Default)]
struct ImageOperands {
    lod: Option<u32>,
    /// d/dx, d/dy.
    grad: Option<(u32, u32)>,
    const_offset: Option<u32>,
    /// `Offset`: a texel offset that need not be a constant (gathers only, in Vulkan).
    offset: Option<u32>,
    /// `ConstOffsets`: one constant offset per gathered texel (gathers only).
    const_offsets: Option<u32>,
}

impl ImageOperands {
    /// The operands Vulkan allows on gathers only (shaderImageGatherExtended).
    fn has_gather_offsets(&self) -> bool {
        self.offset.is_some() || self.const_offsets.is_some()
    }
}

/// The `Lod`, `Grad` and `ConstOffset` ids of an image instruction's optional operands
/// starting at `from` (they follow the mask in the order of its bits); other operands are
/// refused.
fn image_operands(i: &dr::Instruction, from: usize) -> Res<ImageOperands> {
    use rspirv::spirv::ImageOperands as IO;
    match i.operands.get(from) {
        None => Ok(ImageOperands::default()),
        Some(dr::Operand::ImageOperands(m)) => {
            // SignExtend / ZeroExtend (SPIR-V 1.4; glslang marks every fetch from an
            // unsigned or signed image with them) take no operand and change nothing: the
            // format's integer type already decides how a texel widens to 32 bits.
            let known = IO::LOD
                | IO::GRAD
                | IO::CONST_OFFSET
                | IO::OFFSET
                | IO::CONST_OFFSETS
                | IO::SIGN_EXTEND
                | IO::ZERO_EXTEND;
            if !known.contains(*m) {
                return unsupported(format!(
                    "image operands {m:?} (only Lod, Grad, ConstOffset, Offset and \
                     ConstOffsets are supported)"
                ));
            }
            let mut at = from + 1;
            let mut next = |on: bool| -> Res<Option<u32>> {
                if !on {
                    return Ok(None);
                }
                at += 1;
                op_id(i, at - 1).map(Some)
            };
            let lod = next(m.contains(IO::LOD))?;
            let dx = next(m.contains(IO::GRAD))?;
            let dy = next(m.contains(IO::GRAD))?;
            let const_offset = next(m.contains(IO::CONST_OFFSET))?;
            let offset = next(m.contains(IO::OFFSET))?;
            let const_offsets = next(m.contains(IO::CONST_OFFSETS))?;
            Ok(ImageOperands {
                lod,
                grad: dx.zip(dy),
                const_offset,
                offset,
                const_offsets,
            })
        }
        Some(o) => invalid(format!("image operand {o:?}")),
    }
}

impl Fe<'_> {
    /// A sampled image of an `OpSampledImage` result or a combined image sampler: the image
    /// as an [`ImgRef`] (with the sampler's run-time index, if any), the sampler's first
    /// binding-table index and the image type id. A combined image sampler's sampler is
    /// the same descriptor as its image.
    fn sampled_of(&mut self, id: u32, b: u32) -> Res<(ImgRef, u32, u32)> {
        if let FVal::P(p) = self.get(id, b)? {
            if let Ptr::Sampled {
                image,
                sampler,
                ty,
                image_index,
                sampler_index,
            } = *p
            {
                let r = ImgRef {
                    bti: image,
                    index: self.with_nonuniform(id, image_index),
                    sampler: self.with_nonuniform(id, sampler_index),
                };
                return Ok((r, sampler, ty));
            }
        }
        let (bti, ty, index) = self.descriptor_of(id, b)?;
        match self.stype(ty)? {
            SType::SampledImage(img) => Ok((
                ImgRef {
                    bti,
                    index,
                    sampler: index,
                },
                bti,
                img,
            )),
            _ => invalid(format!("%{id} is not a sampled image")),
        }
    }

    /// The image type of a sampled image, refusing what the sampler path does not do yet.
    fn sampled_type(&mut self, ty: u32) -> Res<ImageType> {
        let SType::Image(t) = self.stype(ty)? else {
            return invalid("sampled image of a non-image type");
        };
        if t.sampled != 1 {
            return invalid("a storage image used with the sampler");
        }
        match t.dim {
            spirv::Dim::Dim1D | spirv::Dim::Dim2D | spirv::Dim::Dim3D | spirv::Dim::DimCube => {
                Ok(t)
            }
            d => unsupported(format!("sampled images of dimension {d:?}")),
        }
    }

    /// The first `n` components of the float coordinate `id` (all of it when it has `n`).
    fn float_coords(&mut self, id: u32, b: u32, n: u8) -> Res<Value> {
        let c = self.getv(id, b)?;
        let ct = self.ty(c);
        if ct.kind != Kind::Float || ct.bits != 32 || ct.comps < n {
            return invalid(format!(
                "sample coordinate is not a float vector of {n} components"
            ));
        }
        if ct.comps == n {
            return Ok(c);
        }
        let comps = (0..n)
            .map(|k| self.extract(c, k))
            .collect::<Res<Vec<_>>>()?;
        if n == 1 {
            Ok(comps[0])
        } else {
            self.emit(Type::F32.vec(n), Op::Vec(comps))
        }
    }

    pub(super) fn sampled_image(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (image, ty, image_index) = self.descriptor_of(op_id(i, 0)?, b)?;
        let (sampler, sty, sampler_index) = self.descriptor_of(op_id(i, 1)?, b)?;
        if !matches!(self.stype(sty)?, SType::Sampler) {
            return invalid("OpSampledImage without a sampler");
        }
        self.sampled_type(ty)?;
        let p = Ptr::Sampled {
            image,
            sampler,
            ty,
            image_index,
            sampler_index,
        };
        self.define(rid(i)?, FVal::P(Box::new(p)))
    }

    pub(super) fn image_from_sampled(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (r, _, ty) = self.sampled_of(op_id(i, 0)?, b)?;
        let p = Ptr::Image {
            bti: r.bti,
            count: 1,
            ty,
            index: r.index,
        };
        self.define(rid(i)?, FVal::P(Box::new(p)))
    }

    /// The result of a sampler message as the instruction's result type.
    fn texel_result(&mut self, i: &dr::Instruction, t: &ImageType, texel: Value) -> Res<()> {
        let tt = self.texel_type(t)?;
        let rt = self.ir_type(rty(i)?)?;
        if rt != tt {
            return invalid("sampled result type differs from the image's sampled type");
        }
        self.define(rid(i)?, FVal::V(texel))
    }

    /// `OpImageFetch` (texelFetch): the sampler's `ld` at integer coordinates and level.
    pub(super) fn image_fetch(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (bti, ty, index) = self.descriptor_of(op_id(i, 0)?, b)?;
        let bti = ImgRef {
            bti,
            index,
            sampler: None,
        };
        // A uniform texel buffer (Dim Buffer, Sampled 1) is fetched with `ld` as well: the
        // sampler reads a formatted SURFTYPE_BUFFER at the element index (level 0).
        let t = match self.stype(ty)? {
            SType::Image(t) if t.dim == spirv::Dim::DimBuffer && t.sampled == 1 => t,
            _ => self.sampled_type(ty)?,
        };
        let coord = self.image_coords(&t, op_id(i, 1)?, b)?;
        let lod = match lod_operand(i, 2)? {
            Some(l) => {
                let l = self.getv(l, b)?;
                self.as_i32(l)?
            }
            None => self.konst(Type::I32, 0)?,
        };
        let tt = self.texel_type(&t)?;
        let texel = self.emit(tt, Op::Image(ImageOp::Fetch, bti, vec![coord, lod]))?;
        self.texel_result(i, &t, texel)
    }

    /// `OpImageSampleExplicitLod` (textureLod, textureGrad): `sample_l` with `Lod`,
    /// `sample_d` with `Grad`, with the descriptor's sampler (its binding-table index is its
    /// sampler-table index).
    pub(super) fn image_sample_lod(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (image, sampler, ty) = self.sampled_of(op_id(i, 0)?, b)?;
        let t = self.sampled_type(ty)?;
        // The message's U, V, R, AI in order: the array layer follows the coordinates (1-D
        // array: V, 2-D array: R, cube array: AI), a cube's direction is (U, V, R).
        let coord = self.float_coords(op_id(i, 1)?, b, t.sample_coords())?;
        let ops = image_operands(i, 2)?;
        if ops.has_gather_offsets() {
            return invalid("Offset or ConstOffsets on a sample (Vulkan allows them on gathers)");
        }
        let offset = self.const_offset(ops.const_offset, &t)?;
        let (op, srcs) = match (ops.lod, ops.grad) {
            (Some(lod), None) => {
                let lod = self.getv(lod, b)?;
                if self.ty(lod) != Type::F32 {
                    return invalid("Lod of a sample is not a 32-bit float");
                }
                (ImageOp::SampleLod { sampler, offset }, vec![coord, lod])
            }
            (None, Some((dx, dy))) => {
                if t.dim == spirv::Dim::DimCube {
                    // The derivatives of a direction would have to be projected onto the
                    // selected face (the spec's cube derivative rules); not done.
                    return unsupported("Grad on a cube image");
                }
                let n = t.sample_coords() - t.arrayed as u8;
                let dx = self.float_coords(dx, b, n)?;
                let dy = self.float_coords(dy, b, n)?;
                (ImageOp::SampleGrad { sampler, offset }, vec![coord, dx, dy])
            }
            _ => return invalid("OpImageSampleExplicitLod needs exactly one of Lod and Grad"),
        };
        let tt = self.texel_type(&t)?;
        let texel = self.emit(tt, Op::Image(op, image, srcs))?;
        self.texel_result(i, &t, texel)
    }

    /// `OpImageGather` (textureGather): `gather4` of one component (a constant) with the
    /// descriptor's sampler, on 2-D and cube images and their arrays (what Vulkan allows).
    pub(super) fn image_gather(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (image, sampler, ty) = self.sampled_of(op_id(i, 0)?, b)?;
        let t = self.sampled_type(ty)?;
        if !matches!(t.dim, spirv::Dim::Dim2D | spirv::Dim::DimCube) {
            return invalid("gathers on images other than 2-D and cube ones");
        }
        let coord = self.float_coords(op_id(i, 1)?, b, t.sample_coords())?;
        let comp = self.const_u32(op_id(i, 2)?)?;
        if comp > 3 {
            return invalid("gather component is not 0..3");
        }
        let ops = image_operands(i, 3)?;
        if ops.lod.is_some() || ops.grad.is_some() {
            return invalid("Lod or Grad as an operand of OpImageGather");
        }
        let any_offset = ops.const_offset.is_some() || ops.has_gather_offsets();
        if t.dim == spirv::Dim::DimCube && any_offset {
            return invalid("texel offsets on a cube gather");
        }
        let tt = self.texel_type(&t)?;
        let texel = if let Some(id) = ops.const_offsets {
            // One gather per returned texel, each with its own offset: texel k of the result
            // is the (i0, j0) texel (the fourth) of the footprint at offset k, as GLSL's
            // textureGatherOffsets defines it.
            let v = self.const_ints(id)?;
            if v.len() != 8 {
                return invalid("ConstOffsets is not an array of four 2-component vectors");
            }
            let mut comps = Vec::new();
            for k in 0..4 {
                let g =
                    self.gather_at(tt, image, sampler, comp, coord, [v[2 * k], v[2 * k + 1]])?;
                comps.push(self.extract(g, 3)?);
            }
            self.emit(tt, Op::Vec(comps))?
        } else if let Some(id) = ops.offset {
            // A run-time offset: gather4_po takes one per lane.
            let off = self.getv(id, b)?;
            if self.ty(off) != Type::I32.vec(2) {
                return invalid("the Offset of a gather is not a 2-component integer vector");
            }
            let op = ImageOp::GatherOffset { sampler, comp };
            self.emit(tt, Op::Image(op, image, vec![coord, off]))?
        } else if let Some(id) = ops.const_offset {
            let v = self.const_ints(id)?;
            if v.len() != 2 {
                return invalid("the ConstOffset of a gather is not a 2-component vector");
            }
            self.gather_at(tt, image, sampler, comp, coord, [v[0], v[1]])?
        } else {
            let op = ImageOp::Gather {
                sampler,
                comp,
                offset: [0; 3],
            };
            self.emit(tt, Op::Image(op, image, vec![coord]))?
        };
        self.texel_result(i, &t, texel)
    }

    /// A gather (result type `tt`) with the constant offset `off` (Vulkan's minTexelGatherOffset..
    /// maxTexelGatherOffset, -32..31): in the header when it fits its 4-bit fields (-8..7),
    /// otherwise as gather4_po's per-lane offsets, which take 6 bits.
    fn gather_at(
        &mut self,
        tt: Type,
        image: ImgRef,
        sampler: u32,
        comp: u32,
        coord: Value,
        off: [i32; 2],
    ) -> Res<Value> {
        if off.iter().any(|o| !(-32..=31).contains(o)) {
            return invalid(format!("gather offset {off:?} outside -32..31"));
        }
        if off.iter().all(|o| (-8..=7).contains(o)) {
            let op = ImageOp::Gather {
                sampler,
                comp,
                offset: [off[0] as i8, off[1] as i8, 0],
            };
            return self.emit(tt, Op::Image(op, image, vec![coord]));
        }
        let x = self.i32c(off[0] as u32)?;
        let y = self.i32c(off[1] as u32)?;
        let v = self.emit(Type::I32.vec(2), Op::Vec(vec![x, y]))?;
        let op = ImageOp::GatherOffset { sampler, comp };
        self.emit(tt, Op::Image(op, image, vec![coord, v]))
    }

    /// The integers of constant `id` (a scalar, a vector or an array of vectors), flattened.
    fn const_ints(&self, id: u32) -> Res<Vec<i32>> {
        fn flat(c: &Const, out: &mut Vec<i32>) {
            match c {
                Const::Scalar(v) => out.push(*v as u32 as i32),
                Const::Comp(cs) => cs.iter().for_each(|c| flat(c, out)),
            }
        }
        match self.decl.consts.get(&id) {
            Some((_, c)) => {
                let mut v = Vec::new();
                flat(c, &mut v);
                Ok(v)
            }
            None => invalid(format!("texel offset %{id} is not a constant")),
        }
    }

    /// A `ConstOffset` operand as the header's offsets (U, V, R). Gen9's header holds 4-bit
    /// signed offsets, -8..7, Vulkan's minTexelOffset..maxTexelOffset; cubes take none.
    fn const_offset(&self, id: Option<u32>, t: &ImageType) -> Res<[i8; 3]> {
        let Some(id) = id else {
            return Ok([0; 3]);
        };
        if t.dim == spirv::Dim::DimCube {
            return invalid("ConstOffset on a cube image");
        }
        let vals: Vec<u64> = match self.decl.consts.get(&id) {
            Some((_, Const::Scalar(v))) => vec![*v],
            Some((_, Const::Comp(c))) => c
                .iter()
                .map(|x| match x {
                    Const::Scalar(v) => Ok(*v),
                    Const::Comp(_) => invalid("ConstOffset is not an integer vector"),
                })
                .collect::<Res<_>>()?,
            None => return invalid(format!("ConstOffset %{id} is not a constant")),
        };
        let mut o = [0i8; 3];
        for (k, v) in vals.iter().take(3).enumerate() {
            let s = *v as u32 as i32;
            if !(-8..=7).contains(&s) {
                return invalid(format!("texel offset {s} outside -8..7"));
            }
            o[k] = s as i8;
        }
        Ok(o)
    }

    /// `OpImageQuerySizeLod` and `OpImageQueryLevels` on a sampled image: `resinfo`.
    pub(super) fn image_query(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (bti, ty, index) = self.descriptor_of(op_id(i, 0)?, b)?;
        let bti = ImgRef {
            bti,
            index,
            sampler: None,
        };
        // OpImageQuerySize (imageSize) on a storage image: `resinfo` at LOD 0 on the storage
        // surface, whose SurfaceMinLOD is the view's level (docs/images.md).
        let storage = i.class.opcode == spirv::Op::ImageQuerySize;
        let t = if storage {
            match self.stype(ty)? {
                SType::Image(t)
                    if t.sampled == 2
                        && !t.multisampled
                        && matches!(
                            t.dim,
                            spirv::Dim::Dim1D | spirv::Dim::Dim2D | spirv::Dim::Dim3D
                        ) =>
                {
                    t
                }
                // textureSize / imageSize on a texel buffer: `resinfo` on the SURFTYPE_BUFFER
                // state answers its element count.
                SType::Image(t) if t.dim == spirv::Dim::DimBuffer => t,
                _ => return unsupported(
                    "OpImageQuerySize other than on 1-D/2-D/3-D storage images and texel buffers",
                ),
            }
        } else {
            self.sampled_type(ty)?
        };
        let levels = i.class.opcode == spirv::Op::ImageQueryLevels;
        let lod = if levels || storage {
            self.konst(Type::I32, 0)?
        } else {
            let l = self.getv(op_id(i, 1)?, b)?;
            self.as_i32(l)?
        };
        let info = self.emit(Type::I32.vec(4), Op::Image(ImageOp::Size, bti, vec![lod]))?;
        let rt = self.ir_type(rty(i)?)?;
        let v = if levels {
            self.extract(info, 3)?
        } else {
            let n = t.coords();
            if rt.comps != n || rt.kind != Kind::Int {
                return invalid("OpImageQuerySizeLod result is not an integer vector of the size");
            }
            if n == 1 {
                self.extract(info, 0)?
            } else {
                let comps = (0..n)
                    .map(|k| self.extract(info, k))
                    .collect::<Res<Vec<_>>>()?;
                self.emit(Type::I32.vec(n), Op::Vec(comps))?
            }
        };
        self.define(rid(i)?, FVal::V(v))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::check_ir;
    /// texelFetch, textureLod through a combined image sampler and through OpSampledImage
    /// of a separate image and sampler, and textureSize/textureQueryLevels become sampler
    /// ops: the sampler index is the sampler descriptor's binding-table index.
    #[test]
    fn const_offsets_become_part_of_the_sampler_op() {
        check_ir(
            "const_offsets_become_part_of_the_sampler_op",
            "
            OpDecorate %comb DescriptorSet 0
            OpDecorate %comb Binding 0
            %v2i32 = OpTypeVector %i32 2
            %img = OpTypeImage %f32 2D 0 0 0 1 Unknown
            %simg = OpTypeSampledImage %img
            %pcomb = OpTypePointer UniformConstant %simg
            %comb = OpVariable %pcomb UniformConstant
            %c1 = OpConstant %i32 1
            %cm2 = OpConstant %i32 -2
            %c3 = OpConstant %i32 3
            %h = OpConstant %f32 0.5
            %uv = OpConstantComposite %v2f32 %h %h
            %off = OpConstantComposite %v2i32 %c1 %cm2
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %c = OpLoad %simg %comb
            %s = OpImageSampleExplicitLod %v4f32 %c %uv Lod|ConstOffset %h %off
            %g = OpImageGather %v4f32 %c %uv %c3 ConstOffset %off
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:f32x2 = const 0.5, 0.5
                    %1:f32 = const 0.5
                    %2:f32x4 = image_sample_l.s0.o1_-2_0 img[0] %0, %1
                    %3:f32x2 = const 0.5, 0.5
                    %4:f32x4 = image_gather.s0.c3.o1_-2_0 img[0] %3
                    break
                }
            }
            ",
        );
    }

    #[test]
    fn grad_operands_become_sample_d_with_one_derivative_per_spatial_coordinate() {
        check_ir(
            "grad_operands_become_sample_d_with_one_derivative_per_spatial_coordinate",
            "
            OpDecorate %comb DescriptorSet 0
            OpDecorate %comb Binding 1
            %v2i32 = OpTypeVector %i32 2
            %v3f32 = OpTypeVector %f32 3
            %img = OpTypeImage %f32 2D 0 1 0 1 Unknown
            %simg = OpTypeSampledImage %img
            %pcomb = OpTypePointer UniformConstant %simg
            %comb = OpVariable %pcomb UniformConstant
            %c1 = OpConstant %i32 1
            %cm2 = OpConstant %i32 -2
            %h = OpConstant %f32 0.5
            %q = OpConstant %f32 0.25
            %uvl = OpConstantComposite %v3f32 %h %h %h
            %dx = OpConstantComposite %v2f32 %q %h
            %dy = OpConstantComposite %v2f32 %h %q
            %off = OpConstantComposite %v2i32 %c1 %cm2
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %c = OpLoad %simg %comb
            %s = OpImageSampleExplicitLod %v4f32 %c %uvl Grad %dx %dy
            %o = OpImageSampleExplicitLod %v4f32 %c %uvl Grad|ConstOffset %dx %dy %off
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:f32x3 = const 0.5, 0.5, 0.5
                    %1:f32x2 = const 0.25, 0.5
                    %2:f32x2 = const 0.5, 0.25
                    %3:f32x4 = image_sample_d.s0 img[0] %0, %1, %2
                    %4:f32x3 = const 0.5, 0.5, 0.5
                    %5:f32x2 = const 0.25, 0.5
                    %6:f32x2 = const 0.5, 0.25
                    %7:f32x4 = image_sample_d.s0.o1_-2_0 img[0] %4, %5, %6
                    break
                }
            }
            ",
        );
    }

    /// A run-time Offset and a constant one beyond the header's -8..7 take gather4_po's
    /// per-lane offsets; ConstOffsets is one gather per texel, each giving its (i0, j0) texel.
    #[test]
    fn gather_offsets_become_gather_po_or_one_gather_per_texel() {
        check_ir(
            "gather_offsets_become_gather_po_or_one_gather_per_texel",
            "
            OpDecorate %comb DescriptorSet 0
            OpDecorate %comb Binding 0
            %v2i32 = OpTypeVector %i32 2
            %c4 = OpConstant %u32 4
            %arr = OpTypeArray %v2i32 %c4
            %img = OpTypeImage %f32 2D 0 0 0 1 Unknown
            %simg = OpTypeSampledImage %img
            %pcomb = OpTypePointer UniformConstant %simg
            %comb = OpVariable %pcomb UniformConstant
            %c1 = OpConstant %i32 1
            %cm20 = OpConstant %i32 -20
            %c2 = OpConstant %i32 2
            %h = OpConstant %f32 0.5
            %uv = OpConstantComposite %v2f32 %h %h
            %far = OpConstantComposite %v2i32 %cm20 %c1
            %near = OpConstantComposite %v2i32 %c1 %c2
            %offs = OpConstantComposite %arr %near %far %near %far
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %c = OpLoad %simg %comb
            %g0 = OpImageGather %v4f32 %c %uv %c1 Offset %near
            %g1 = OpImageGather %v4f32 %c %uv %c2 ConstOffset %far
            %g2 = OpImageGather %v4f32 %c %uv %c1 ConstOffsets %offs
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:f32x2 = const 0.5, 0.5
                    %1:i32x2 = const 1, 2
                    %2:f32x4 = image_gather_po.s0.c1 img[0] %0, %1
                    %3:f32x2 = const 0.5, 0.5
                    %4:i32 = const -20
                    %5:i32 = const 1
                    %6:i32x2 = vec %4, %5
                    %7:f32x4 = image_gather_po.s0.c2 img[0] %3, %6
                    %8:f32x2 = const 0.5, 0.5
                    %9:f32x4 = image_gather.s0.c1.o1_2_0 img[0] %8
                    %10:f32 = extract %9, 3
                    %11:i32 = const -20
                    %12:i32 = const 1
                    %13:i32x2 = vec %11, %12
                    %14:f32x4 = image_gather_po.s0.c1 img[0] %8, %13
                    %15:f32 = extract %14, 3
                    %16:f32x4 = image_gather.s0.c1.o1_2_0 img[0] %8
                    %17:f32 = extract %16, 3
                    %18:i32 = const -20
                    %19:i32 = const 1
                    %20:i32x2 = vec %18, %19
                    %21:f32x4 = image_gather_po.s0.c1 img[0] %8, %20
                    %22:f32 = extract %21, 3
                    %23:f32x4 = vec %10, %15, %17, %22
                    break
                }
            }
            ",
        );
    }

    #[test]
    fn image_gather_becomes_gather_op_with_its_component() {
        check_ir(
            "image_gather_becomes_gather_op_with_its_component",
            "
            OpDecorate %comb DescriptorSet 0
            OpDecorate %comb Binding 3
            %img = OpTypeImage %f32 2D 0 0 0 1 Unknown
            %simg = OpTypeSampledImage %img
            %pcomb = OpTypePointer UniformConstant %simg
            %comb = OpVariable %pcomb UniformConstant
            %c2 = OpConstant %i32 2
            %h = OpConstant %f32 0.5
            %uv = OpConstantComposite %v2f32 %h %h
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %c = OpLoad %simg %comb
            %g = OpImageGather %v4f32 %c %uv %c2
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:f32x2 = const 0.5, 0.5
                    %1:f32x4 = image_gather.s0.c2 img[0] %0
                    break
                }
            }
            ",
        );
    }

    #[test]
    fn sampled_image_ops_become_sampler_ops() {
        check_ir(
            "sampled_image_ops_become_sampler_ops",
            "
            OpDecorate %comb DescriptorSet 0
            OpDecorate %comb Binding 0
            OpDecorate %tex DescriptorSet 0
            OpDecorate %tex Binding 1
            OpDecorate %smp DescriptorSet 0
            OpDecorate %smp Binding 2
            %v2i32 = OpTypeVector %i32 2
            %img = OpTypeImage %f32 2D 0 0 0 1 Unknown
            %simg = OpTypeSampledImage %img
            %stype = OpTypeSampler
            %pcomb = OpTypePointer UniformConstant %simg
            %pimg = OpTypePointer UniformConstant %img
            %psmp = OpTypePointer UniformConstant %stype
            %comb = OpVariable %pcomb UniformConstant
            %tex = OpVariable %pimg UniformConstant
            %smp = OpVariable %psmp UniformConstant
            %c1 = OpConstant %i32 1
            %c2 = OpConstant %i32 2
            %h = OpConstant %f32 0.5
            %xy = OpConstantComposite %v2i32 %c1 %c2
            %uv = OpConstantComposite %v2f32 %h %h
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %c = OpLoad %simg %comb
            %ci = OpImage %img %c
            %f = OpImageFetch %v4f32 %ci %xy Lod %c1
            %s = OpImageSampleExplicitLod %v4f32 %c %uv Lod %h
            %t = OpLoad %img %tex
            %sm = OpLoad %stype %smp
            %ts = OpSampledImage %simg %t %sm
            %s2 = OpImageSampleExplicitLod %v4f32 %ts %uv Lod %h
            %sz = OpImageQuerySizeLod %v2i32 %t %c1
            %lv = OpImageQueryLevels %i32 %t
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i32x2 = const 1, 2
                    %1:i32 = const 1
                    %2:f32x4 = image_fetch img[0] %0, %1
                    %3:f32x2 = const 0.5, 0.5
                    %4:f32 = const 0.5
                    %5:f32x4 = image_sample_l.s0 img[0] %3, %4
                    %6:f32x2 = const 0.5, 0.5
                    %7:f32 = const 0.5
                    %8:f32x4 = image_sample_l.s2 img[1] %6, %7
                    %9:i32 = const 1
                    %10:i32x4 = image_size img[1] %9
                    %11:i32 = extract %10, 0
                    %12:i32 = extract %10, 1
                    %13:i32x2 = vec %11, %12
                    %14:i32 = const 0
                    %15:i32x4 = image_size img[1] %14
                    %16:i32 = extract %15, 3
                    break
                }
            }
            ",
        );
    }

    /// Run-time indices into arrays of combined image samplers, of separate images and
    /// samplers, and of storage images become image ops on the array (`img[B+%V<N]`, the
    /// sampler's `smp[...]`); `NonUniform` on the index or the loaded descriptor marks them
    /// `.nu`. A combined image sampler's sampler index is its image index.
    #[test]
    fn dynamic_image_array_indices_become_indexed_image_ops() {
        check_ir(
            "dynamic_image_array_indices_become_indexed_image_ops",
            "
            OpCapability StorageImageExtendedFormats
            OpCapability ShaderNonUniform
            OpCapability SampledImageArrayNonUniformIndexing
            OpExtension \"SPV_EXT_descriptor_indexing\"
            OpDecorate %comb DescriptorSet 0
            OpDecorate %comb Binding 0
            OpDecorate %tex DescriptorSet 0
            OpDecorate %tex Binding 1
            OpDecorate %smp DescriptorSet 0
            OpDecorate %smp Binding 2
            OpDecorate %sto DescriptorSet 0
            OpDecorate %sto Binding 3
            OpDecorate %lid BuiltIn LocalInvocationIndex
            OpDecorate %ld2 NonUniform
            %v2i32 = OpTypeVector %i32 2
            %img = OpTypeImage %f32 2D 0 0 0 1 Unknown
            %simg = OpTypeSampledImage %img
            %stype = OpTypeSampler
            %simg_st = OpTypeImage %f32 2D 0 0 0 2 R32f
            %c2 = OpConstant %u32 2
            %c3 = OpConstant %u32 3
            %acomb = OpTypeArray %simg %c2
            %atex = OpTypeArray %img %c3
            %asmp = OpTypeArray %stype %c2
            %asto = OpTypeArray %simg_st %c3
            %pacomb = OpTypePointer UniformConstant %acomb
            %patex = OpTypePointer UniformConstant %atex
            %pasmp = OpTypePointer UniformConstant %asmp
            %pasto = OpTypePointer UniformConstant %asto
            %pcomb = OpTypePointer UniformConstant %simg
            %pimg = OpTypePointer UniformConstant %img
            %psmp = OpTypePointer UniformConstant %stype
            %psto = OpTypePointer UniformConstant %simg_st
            %pin = OpTypePointer Input %u32
            %comb = OpVariable %pacomb UniformConstant
            %tex = OpVariable %patex UniformConstant
            %smp = OpVariable %pasmp UniformConstant
            %sto = OpVariable %pasto UniformConstant
            %lid = OpVariable %pin Input
            %i1 = OpConstant %i32 1
            %h = OpConstant %f32 0.5
            %xy = OpConstantComposite %v2i32 %i1 %i1
            %uv = OpConstantComposite %v2f32 %h %h
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %k = OpLoad %u32 %lid
            %pc = OpAccessChain %pcomb %comb %k
            %c = OpLoad %simg %pc
            %s0 = OpImageSampleExplicitLod %v4f32 %c %uv Lod %h
            %pt = OpAccessChain %pimg %tex %k
            %t = OpLoad %img %pt
            %ps = OpAccessChain %psmp %smp %k
            %ld2 = OpLoad %stype %ps
            %ts = OpSampledImage %simg %t %ld2
            %s1 = OpImageSampleExplicitLod %v4f32 %ts %uv Lod %h
            %pw = OpAccessChain %psto %sto %k
            %w = OpLoad %simg_st %pw
            OpImageWrite %w %xy %s1
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i32 = sysval local_invocation_index
                    %1:f32x2 = const 0.5, 0.5
                    %2:f32 = const 0.5
                    %3:f32x4 = image_sample_l.s0 img[0+%0<2] smp[0+%0<2] %1, %2
                    %4:f32x2 = const 0.5, 0.5
                    %5:f32 = const 0.5
                    %6:f32x4 = image_sample_l.s5 img[2+%0<3] smp.nu[5+%0<2] %4, %5
                    %7:i32x2 = const 1, 1
                    %8:f32 = extract %6, 0
                    image_store img[7+%0<3] %7, %8
                    break
                }
            }
            ",
        );
    }

    /// texelFetch on a uniform texel buffer (Dim Buffer, Sampled 1) is the sampler's `ld`
    /// with one coordinate and level 0, like a fetch from a sampled image.
    #[test]
    fn uniform_texel_buffer_fetch_becomes_image_fetch() {
        check_ir(
            "uniform_texel_buffer_fetch_becomes_image_fetch",
            "
            OpCapability SampledBuffer
            OpDecorate %buf DescriptorSet 0
            OpDecorate %buf Binding 3
            %img = OpTypeImage %f32 Buffer 0 0 0 1 Unknown
            %pimg = OpTypePointer UniformConstant %img
            %buf = OpVariable %pimg UniformConstant
            %c5 = OpConstant %i32 5
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %t = OpLoad %img %buf
            %f = OpImageFetch %v4f32 %t %c5
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i32 = const 5
                    %1:i32 = const 0
                    %2:f32x4 = image_fetch img[0] %0, %1
                    break
                }
            }
            ",
        );
    }

    /// A cube array's direction and cube index are the sample's four coordinates (U, V, R,
    /// AI), a 2-D array's layer its third; textureSize on a texel buffer is `image_size`.
    #[test]
    fn array_and_cube_coordinates_and_texel_buffer_size() {
        check_ir(
            "array_and_cube_coordinates_and_texel_buffer_size",
            "
            OpCapability SampledBuffer
            OpCapability SampledCubeArray
            OpDecorate %cube DescriptorSet 0
            OpDecorate %cube Binding 0
            OpDecorate %arr DescriptorSet 0
            OpDecorate %arr Binding 1
            OpDecorate %buf DescriptorSet 0
            OpDecorate %buf Binding 2
            %ci = OpTypeImage %f32 Cube 0 1 0 1 Unknown
            %cs = OpTypeSampledImage %ci
            %pcs = OpTypePointer UniformConstant %cs
            %cube = OpVariable %pcs UniformConstant
            %ai = OpTypeImage %f32 2D 0 1 0 1 Unknown
            %as = OpTypeSampledImage %ai
            %pas = OpTypePointer UniformConstant %as
            %arr = OpVariable %pas UniformConstant
            %bi = OpTypeImage %f32 Buffer 0 0 0 1 Unknown
            %pbi = OpTypePointer UniformConstant %bi
            %buf = OpVariable %pbi UniformConstant
            %f1 = OpConstant %f32 1
            %f2 = OpConstant %f32 2
            %dir = OpConstantComposite %v4f32 %f1 %f2 %f1 %f2
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %c = OpLoad %cs %cube
            %s0 = OpImageSampleExplicitLod %v4f32 %c %dir Lod %f1
            %a = OpLoad %as %arr
            %s1 = OpImageSampleExplicitLod %v4f32 %a %dir Lod %f2
            %b = OpLoad %bi %buf
            %n = OpImageQuerySize %i32 %b
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:f32x4 = const 1.0, 2.0, 1.0, 2.0
                    %1:f32 = const 1.0
                    %2:f32x4 = image_sample_l.s0 img[0] %0, %1
                    %3:f32x4 = const 1.0, 2.0, 1.0, 2.0
                    %4:f32 = extract %3, 0
                    %5:f32 = extract %3, 1
                    %6:f32 = extract %3, 2
                    %7:f32x3 = vec %4, %5, %6
                    %8:f32 = const 2.0
                    %9:f32x4 = image_sample_l.s1 img[1] %7, %8
                    %10:i32 = const 0
                    %11:i32x4 = image_size img[2] %10
                    %12:i32 = extract %11, 0
                    break
                }
            }
            ",
        );
    }
}
