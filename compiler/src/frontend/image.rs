//! Image descriptors, storage images and storage texel buffers: `OpImageRead`, `OpImageWrite`,
//! `OpImageTexelPointer` (for atomics). Each access becomes one IR `image_*` op on the
//! image's binding-table index, which the back end turns into typed surface messages; the
//! surface format (and with it the conversion between memory and the 32-bit channels) is
//! the descriptor's, as the hardware's typed messages define it.

use super::memory::Ptr;
use super::types::{ImageType, SType};
use super::values::FVal;
use super::{invalid, op_id, rid, rty, unsupported, Fe, Res};
use crate::ir::{AluOp, BufIndex, ImageOp, ImgRef, Kind, Op, Type, Value};
use ferrite_isa::surface_format::{ChannelKind, StorageAccess, SurfaceFormat};
use rspirv::dr;
use rspirv::spirv::{self, ImageFormat};

/// The Gen9 surface format of a SPIR-V storage image format (the same one the driver's
/// VkFormat table picks for the matching VkFormat); None for Unknown and formats Ferrite
/// does not know.
pub(crate) fn surface_format(f: ImageFormat) -> Option<SurfaceFormat> {
    use ImageFormat as I;
    use SurfaceFormat as S;
    Some(match f {
        I::Rgba32f => S::R32G32B32A32_FLOAT,
        I::Rgba16f => S::R16G16B16A16_FLOAT,
        I::R32f => S::R32_FLOAT,
        I::Rgba8 => S::R8G8B8A8_UNORM,
        I::Rgba8Snorm => S::R8G8B8A8_SNORM,
        I::Rg32f => S::R32G32_FLOAT,
        I::Rg16f => S::R16G16_FLOAT,
        I::R11fG11fB10f => S::R11G11B10_FLOAT,
        I::R16f => S::R16_FLOAT,
        I::Rgba16 => S::R16G16B16A16_UNORM,
        I::Rgb10A2 => S::R10G10B10A2_UNORM,
        I::Rg16 => S::R16G16_UNORM,
        I::Rg8 => S::R8G8_UNORM,
        I::R16 => S::R16_UNORM,
        I::R8 => S::R8_UNORM,
        I::Rgba16Snorm => S::R16G16B16A16_SNORM,
        I::Rg16Snorm => S::R16G16_SNORM,
        I::Rg8Snorm => S::R8G8_SNORM,
        I::R16Snorm => S::R16_SNORM,
        I::R8Snorm => S::R8_SNORM,
        I::Rgba32i => S::R32G32B32A32_SINT,
        I::Rgba16i => S::R16G16B16A16_SINT,
        I::Rgba8i => S::R8G8B8A8_SINT,
        I::R32i => S::R32_SINT,
        I::Rg32i => S::R32G32_SINT,
        I::Rg16i => S::R16G16_SINT,
        I::Rg8i => S::R8G8_SINT,
        I::R16i => S::R16_SINT,
        I::R8i => S::R8_SINT,
        I::Rgba32ui => S::R32G32B32A32_UINT,
        I::Rgba16ui => S::R16G16B16A16_UINT,
        I::Rgba8ui => S::R8G8B8A8_UINT,
        I::R32ui => S::R32_UINT,
        I::Rgb10a2ui => S::R10G10B10A2_UINT,
        I::Rg32ui => S::R32G32_UINT,
        I::Rg16ui => S::R16G16_UINT,
        I::Rg8ui => S::R8G8_UINT,
        I::R16ui => S::R16_UINT,
        I::R8ui => S::R8_UINT,
        _ => return None,
    })
}

/// The storage format a shader's image is lowered from, when the typed messages cannot
/// access its format natively (the surface-format table's `StorageAccess::Lowered`): the
/// descriptor then holds the table's `via` UINT format and the shader unpacks and packs
/// the channels itself.
fn lowered(t: &ImageType) -> Res<Option<SurfaceFormat>> {
    let Some(f) = surface_format(t.format) else {
        return Ok(None);
    };
    match f.info().storage {
        StorageAccess::Native => Ok(None),
        StorageAccess::Lowered { .. } if storage_format_supported(f) => Ok(Some(f)),
        _ => unsupported(format!("storage images of format {f}")),
    }
}

/// True when reads of a storage image of type `t` go through a lowered format (see
/// [`lowered`]). A write-only one is instead bound in its own format and written by typed
/// writes that convert the texel (`BindingKind::StorageImageWriteOnly`).
pub(super) fn reads_lowered(t: &ImageType) -> bool {
    matches!(lowered(t), Ok(Some(_)))
}

/// The channels (1-4) a typed write to a storage image of type `t` stores: those of its
/// format, or of the UINT format a lowered one is accessed through (unless `own_format`: a
/// write-only image bound in its own format); 4 for format Unknown.
fn written_channels(t: &ImageType, own_format: bool) -> u8 {
    let accessed = surface_format(t.format).map(|f| match f.info().storage {
        StorageAccess::Lowered { via } if !own_format => via,
        StorageAccess::Lowered { .. } | StorageAccess::Native | StorageAccess::Unsupported => f,
    });
    accessed.map_or(4, |f| f.info().channels.len().clamp(1, 4) as u8)
}

/// True when storage images of `f` work: the typed messages access it natively, or it is
/// lowered and every channel is UNORM, SNORM, UINT or SINT (the conversions
/// `unpack_texel`/`pack_texel` implement; packed floats are not lowered yet). The driver's
/// format features ask this, so they and the compiler cannot disagree.
pub fn storage_format_supported(f: SurfaceFormat) -> bool {
    match f.info().storage {
        StorageAccess::Native => true,
        StorageAccess::Lowered { .. } => f.info().channels.iter().all(|c| {
            matches!(
                c.kind,
                ChannelKind::Unorm | ChannelKind::Snorm | ChannelKind::Uint | ChannelKind::Sint
            )
        }),
        StorageAccess::Unsupported => false,
    }
}

impl Fe<'_> {
    /// The image behind id `id` (an image variable, an element of an image array, or an
    /// image loaded from one): the descriptor it names and its type.
    pub(super) fn image_of(&mut self, id: u32, b: u32) -> Res<(ImgRef, ImageType)> {
        let (bti, ty, index) = self.descriptor_of(id, b)?;
        match self.stype(ty)? {
            SType::Image(t) => Ok((
                ImgRef {
                    bti,
                    index,
                    sampler: None,
                },
                t,
            )),
            _ => invalid(format!("%{id} is not an image")),
        }
    }

    /// A run-time array index, marked non-uniform when the descriptor operand `id` is
    /// decorated `NonUniform` (GLSL's `nonuniformEXT` decorates the loaded descriptor as
    /// well as the index).
    pub(super) fn with_nonuniform(&self, id: u32, x: Option<BufIndex>) -> Option<BufIndex> {
        let nu = self.deco(id, spirv::Decoration::NonUniform).is_some();
        x.map(|x| BufIndex {
            nonuniform: x.nonuniform || nu,
            ..x
        })
    }

    /// The typed message's coordinates: the first `t.coords()` components of the SPIR-V
    /// coordinate as 32-bit integers.
    pub(super) fn image_coords(&mut self, t: &ImageType, id: u32, b: u32) -> Res<Value> {
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
    pub(super) fn texel_type(&self, t: &ImageType) -> Res<Type> {
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
        let texel = match lowered(&t)? {
            None => self.emit(tt, Op::Image(ImageOp::Load, bti, vec![coord]))?,
            Some(f) => {
                let raw =
                    self.emit(Type::I32.vec(4), Op::Image(ImageOp::Load, bti, vec![coord]))?;
                self.unpack_texel(f, raw, tt)?
            }
        };
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
        // A write-only image of a lowered format is bound in its own format, which Gen9's
        // typed writes convert natively (docs/images.md, "Format table"), so nothing is
        // packed in the shader; brw leaves write-only images unlowered the same way.
        let own_format = self
            .iface
            .bindings
            .iter()
            .any(|u| u.bti == bti.bti && u.kind == crate::BindingKind::StorageImageWriteOnly);
        let texel = match lowered(&t)? {
            Some(f) if !own_format => self.pack_texel(f, texel)?,
            _ => texel,
        };
        // Only the channels the accessed surface format has: the typed write sends those
        // (one data register per channel and 8 channels), as brw does.
        let n = written_channels(&t, own_format);
        let texel = match n {
            4 => texel,
            1 => self.extract(texel, 0)?,
            _ => {
                let comps = (0..n)
                    .map(|k| self.extract(texel, k))
                    .collect::<Res<Vec<_>>>()?;
                let st = self.ty(texel).scalar_type();
                self.emit(st.vec(n), Op::Vec(comps))?
            }
        };
        self.emit_void(Op::Image(ImageOp::Store, bti, vec![coord, texel]))
    }

    /// Bits `off .. off + bits` of the dword `dw` (sign-extended when `signed`), by shifts
    /// and masks with constant amounts: a channel at the top of the dword is one shift, one
    /// at the bottom one `and`, where a bitfield extract with run-time operands costs seven
    /// instructions.
    fn channel_bits(&mut self, dw: Value, off: u32, bits: u32, signed: bool) -> Res<Value> {
        if off == 0 && bits == 32 {
            return Ok(dw);
        }
        let top = off + bits == 32;
        if signed {
            // Move the field to the top, then shift it down arithmetically.
            let x = if top {
                dw
            } else {
                let up = self.i32c(32 - off - bits)?;
                self.alu(AluOp::Ishl, Type::I32, &[dw, up])?
            };
            let down = self.i32c(32 - bits)?;
            return self.alu(AluOp::Ishr, Type::I32, &[x, down]);
        }
        let x = if off == 0 {
            dw
        } else {
            let sh = self.i32c(off)?;
            self.alu(AluOp::Ushr, Type::I32, &[dw, sh])?
        };
        if top {
            return Ok(x);
        }
        let mask = self.i32c(((1u64 << bits) - 1) as u32)?;
        self.alu(AluOp::Iand, Type::I32, &[x, mask])
    }

    /// The raw dwords of a lowered texel (lowest bits first) to its 4 channels of type `tt`,
    /// converted by each channel's kind as the Vulkan spec's fixed-point conversions say;
    /// missing channels read 0 (G, B) and 1 (A).
    fn unpack_texel(&mut self, f: SurfaceFormat, raw: Value, tt: Type) -> Res<Value> {
        let st = tt.scalar_type();
        let mut comps: Vec<Option<Value>> = vec![None; 4];
        let mut at = 0u32;
        for ch in f.info().channels {
            let bits = u32::from(ch.bits);
            let dw = self.extract(raw, (at / 32) as u8)?;
            let signed = matches!(ch.kind, ChannelKind::Snorm | ChannelKind::Sint);
            let c = self.channel_bits(dw, at % 32, bits, signed)?;
            let v = match ch.kind {
                // c * (1 / (2^n - 1)): the reciprocal is a constant, rounded once; the
                // division was a `math inv` of that constant (the same rounding) and a `mul`.
                ChannelKind::Unorm => {
                    let x = self.alu(AluOp::U2f, Type::F32, &[c])?;
                    let r = self.fconst(Type::F32, recip_f32((1u64 << bits) - 1))?;
                    self.alu(AluOp::Fmul, Type::F32, &[x, r])?
                }
                ChannelKind::Snorm => {
                    let x = self.alu(AluOp::I2f, Type::F32, &[c])?;
                    let r = self.fconst(Type::F32, recip_f32((1u64 << (bits - 1)) - 1))?;
                    let q = self.alu(AluOp::Fmul, Type::F32, &[x, r])?;
                    let lo = self.fconst(Type::F32, -1.0)?;
                    self.alu(AluOp::Fmax, Type::F32, &[q, lo])?
                }
                _ => c,
            };
            if self.ty(v) != st {
                return invalid(format!("image format {f} does not match its sampled type"));
            }
            comps[usize::from(ch.comp)] = Some(v);
            at += bits;
        }
        let mut out = Vec::new();
        for (k, c) in comps.into_iter().enumerate() {
            out.push(match c {
                Some(v) => v,
                None if k == 3 && st.is_float() => self.fconst(st, 1.0)?,
                None => self.konst(st, u64::from(k == 3))?,
            });
        }
        self.emit(tt, Op::Vec(out))
    }

    /// The 4 channels of a texel to the raw dwords of a lowered format (lowest bits first):
    /// UNORM/SNORM clamped, scaled and rounded to nearest even, integers clamped to the
    /// channel's range, as the Vulkan spec's conversions say.
    fn pack_texel(&mut self, f: SurfaceFormat, texel: Value) -> Res<Value> {
        let mut dwords: Vec<Option<Value>> = vec![None; 4];
        let mut at = 0u32;
        for ch in f.info().channels {
            let bits = u32::from(ch.bits);
            let x = self.extract(texel, ch.comp)?;
            let c = match ch.kind {
                ChannelKind::Unorm | ChannelKind::Snorm => {
                    let snorm = ch.kind == ChannelKind::Snorm;
                    let hi = self.fconst(Type::F32, 1.0)?;
                    // fmax/fmin return the non-NaN operand: NaN becomes 0, as the spec says.
                    let zero = self.fconst(Type::F32, 0.0)?;
                    let pos = self.alu(AluOp::Fmax, Type::F32, &[x, zero])?;
                    let x = if snorm {
                        // The negative part, clamped to -1 (NaN gives 0 here too).
                        let lo = self.fconst(Type::F32, -1.0)?;
                        let neg = self.alu(AluOp::Fmin, Type::F32, &[x, zero])?;
                        let neg = self.alu(AluOp::Fmax, Type::F32, &[neg, lo])?;
                        self.alu(AluOp::Fadd, Type::F32, &[pos, neg])?
                    } else {
                        pos
                    };
                    let x = self.alu(AluOp::Fmin, Type::F32, &[x, hi])?;
                    let m = if snorm {
                        (1u64 << (bits - 1)) - 1
                    } else {
                        (1u64 << bits) - 1
                    };
                    let m = self.fconst(Type::F32, m as f64)?;
                    let y = self.alu(AluOp::Fmul, Type::F32, &[x, m])?;
                    let y = self.alu(AluOp::FroundEven, Type::F32, &[y])?;
                    let op = if snorm { AluOp::F2i } else { AluOp::F2u };
                    self.alu(op, Type::I32, &[y])?
                }
                ChannelKind::Uint => {
                    let m = self.i32c(((1u64 << bits) - 1) as u32)?;
                    self.alu(AluOp::Umin, Type::I32, &[x, m])?
                }
                _ => {
                    let lo = self.i32c((-(1i64 << (bits - 1))) as u32)?;
                    let hi = self.i32c(((1i64 << (bits - 1)) - 1) as u32)?;
                    let y = self.alu(AluOp::Imax, Type::I32, &[x, lo])?;
                    self.alu(AluOp::Imin, Type::I32, &[y, hi])?
                }
            };
            let mask = self.i32c(((1u64 << bits) - 1) as u32)?;
            let c = self.alu(AluOp::Iand, Type::I32, &[c, mask])?;
            let sh = self.i32c(at % 32)?;
            let c = self.alu(AluOp::Ishl, Type::I32, &[c, sh])?;
            let slot = &mut dwords[(at / 32) as usize];
            *slot = Some(match *slot {
                None => c,
                Some(d) => self.alu(AluOp::Ior, Type::I32, &[d, c])?,
            });
            at += bits;
        }
        let mut out = Vec::new();
        for d in dwords {
            out.push(match d {
                Some(v) => v,
                None => self.i32c(0)?,
            });
        }
        self.emit(Type::I32.vec(4), Op::Vec(out))
    }

    /// `OpImageTexelPointer`: operands (image pointer, coordinate, sample).
    pub(super) fn image_texel_pointer(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (bti, t) = self.image_of(op_id(i, 0)?, b)?;
        let coord = self.image_coords(&t, op_id(i, 1)?, b)?;
        self.define(rid(i)?, FVal::P(Box::new(Ptr::Texel { img: bti, coord })))
    }

    /// The binding-table index, type id and run-time array index (if any) of the image,
    /// sampler or sampled-image descriptor behind `id`.
    pub(super) fn descriptor_of(&mut self, id: u32, b: u32) -> Res<(u32, u32, Option<BufIndex>)> {
        match self.get(id, b)? {
            FVal::P(p) => match *p {
                Ptr::Image {
                    bti,
                    count: 1,
                    ty,
                    index,
                } => Ok((bti, ty, self.with_nonuniform(id, index))),
                Ptr::Image { .. } => invalid(format!("%{id} is an array of descriptors")),
                _ => invalid(format!("%{id} is not a descriptor")),
            },
            _ => invalid(format!("%{id} is not a descriptor")),
        }
    }
}

/// `1 / m` rounded to f32 once (an f64 quotient narrowed to f32 could round twice).
fn recip_f32(m: u64) -> f64 {
    f64::from(1.0f32 / m as f32)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_ir, module_text, spirv_as, translate_snippet};
    use super::super::{translate, FrontendInput};

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
                    %3:i32 = extract %1, 0
                    image_store img[1] %2, %3
                    %4:i32x2 = const 1, 2
                    %5:i32 = const 1
                    %6:i32 = image_atomic_add img[1] %4, %5
                    break
                }
            }
            ",
        );
    }

    /// A read of a lowered RGBA8 SNORM image (through its raw R32_UINT view) extracts each
    /// channel with constant shifts (`ishl` then `ishr`; the top channel one `ishr`) and
    /// scales it by the constant reciprocal of 127, where it was a `ibitfield_extract` with
    /// run-time operands (seven instructions) and an `fdiv` (a `math inv` and a `mul`).
    #[test]
    fn lowered_read_unpacks_with_constant_shifts_and_a_reciprocal() {
        let test = "lowered_read_unpacks_with_constant_shifts_and_a_reciprocal";
        let snippet = "
            OpDecorate %src DescriptorSet 0
            OpDecorate %src Binding 0
            %v2i32 = OpTypeVector %i32 2
            %img = OpTypeImage %f32 2D 0 0 0 2 Rgba8Snorm
            %pimg = OpTypePointer UniformConstant %img
            %src = OpVariable %pimg UniformConstant
            %c1 = OpConstant %i32 1
            %xy = OpConstantComposite %v2i32 %c1 %c1
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %s = OpLoad %img %src
            %t = OpImageRead %v4f32 %s %xy
            OpReturn
            OpFunctionEnd
            ";
        let Some(ir) = translate_snippet(test, snippet, &[]) else {
            return;
        };
        let ir = ir.unwrap_or_else(|e| panic!("{test}: {e}"));
        let count = |op: &str| {
            ir.lines()
                .filter(|l| l.contains(&format!(" = {op} ")))
                .count()
        };
        assert_eq!(count("image_load"), 1, "{ir}");
        assert_eq!(count("ibitfield_extract"), 0, "{ir}");
        assert_eq!(count("fdiv"), 0, "{ir}");
        // R, G and B: a shift up and one down; A, the top byte: one shift down.
        assert_eq!(count("ishl"), 3, "{ir}");
        assert_eq!(count("ishr"), 4, "{ir}");
        assert_eq!(count("i2f"), 4, "{ir}");
        assert_eq!(count("fmul"), 4, "{ir}");
        assert_eq!(count("fmax"), 4, "{ir}");
    }

    /// A write-only (`NonReadable`) storage image of a format whose reads are lowered is
    /// bound in its own format (`StorageImageWriteOnly`): the texel goes to the typed write
    /// as its four channels, unconverted. The same image readable is written through the raw
    /// R32_UINT view: clamped, scaled, rounded and packed into one dword in the shader.
    #[test]
    fn write_only_lowered_image_is_written_in_its_own_format() {
        let snippet = |deco: &str| {
            format!(
                "
                OpDecorate %dst DescriptorSet 0
                OpDecorate %dst Binding 0
                {deco}
                %v2i32 = OpTypeVector %i32 2
                %img = OpTypeImage %f32 2D 0 0 0 2 Rgba8
                %pimg = OpTypePointer UniformConstant %img
                %dst = OpVariable %pimg UniformConstant
                %c1 = OpConstant %i32 1
                %h = OpConstant %f32 0.5
                %xy = OpConstantComposite %v2i32 %c1 %c1
                %t = OpConstantComposite %v4f32 %h %h %h %h
                %main = OpFunction %void None %fn_void
                %entry = OpLabel
                %d = OpLoad %img %dst
                OpImageWrite %d %xy %t
                OpReturn
                OpFunctionEnd
                "
            )
        };
        check_ir(
            "write_only_lowered_image_is_written_in_its_own_format",
            &snippet("OpDecorate %dst NonReadable"),
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                loop {
                    %0:i32x2 = const 1, 1
                    %1:f32x4 = const 0.5, 0.5, 0.5, 0.5
                    image_store img[0] %0, %1
                    break
                }
            }
            ",
        );
        let kinds = |deco: &str| {
            let words = spirv_as("write_only_kinds", &module_text(&snippet(deco)))?;
            let target = crate::Target::gen9();
            let out = translate(&FrontendInput {
                words: &words,
                entry: "main",
                specialization: &[],
                bindings: &[],
                target: &target,
            })
            .unwrap();
            let packs = out.shader.to_string().matches("fround_even").count();
            Some((
                out.bindings.iter().map(|b| b.kind).collect::<Vec<_>>(),
                packs,
            ))
        };
        if let Some((k, packs)) = kinds("OpDecorate %dst NonReadable") {
            assert_eq!(k, [crate::BindingKind::StorageImageWriteOnly]);
            assert_eq!(packs, 0);
        }
        if let Some((k, packs)) = kinds("") {
            assert_eq!(k, [crate::BindingKind::StorageImage]);
            assert_eq!(packs, 4, "one rounding per channel");
        }
    }
}
