//! Meta kernels: the internal compute kernels behind the transfer commands on images
//! (vkCmdCopyBufferToImage, vkCmdCopyImageToBuffer, vkCmdCopyImage, vkCmdClearColorImage)
//! and large vkCmdCopyBuffer / vkCmdFillBuffer, as anv's blorp runs them on the compute
//! path when the 3D pipe is not used.
//!
//! Every transfer is "texels from a source to a destination": the source is an image, a
//! buffer or a constant texel, the destination an image or a buffer. One SPIR-V module per
//! (source, destination) pair is built here with rspirv's builder, compiled once per device
//! by Ferrite's own compiler and dispatched under the ordinary dispatch contract
//! (docs/dispatch-contract.md, "Meta kernels"). Both sides are bound as typed surfaces in the
//! UINT format of the texel's size (R8, R16, R32, R32G32, R32G32B32A32), so a copy moves the
//! bits unchanged whatever the Vulkan format, on LINEAR and Y-tiled images alike; buffers are
//! formatted SURFTYPE_BUFFER surfaces indexed by texel.
//!
//! A blit (vkCmdBlitImage) is the same shape with the source read by the sampler: see
//! [`blit_push_data`] for its push constants.
//!
//! Push constants (24 dwords): for each side `[x, y, z, row]` and `[zy, zz, slice, 0]`
//! (source at dword 0, destination at dword 8), the extent `[w, h, 0, 0]` at 16 and the
//! constant texel at 20. Invocation (gx, gy, gz) of a w x h x d grid reads image texel
//! `(x + gx, y + gy + gz * zy, z + gz * zz)` (zy/zz say whether the third axis is a 1-D
//! array's layer or a 2-D layer / 3-D slice) or buffer texel `gx + gy * row + gz * slice`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ash::vk;
use ferrite_compiler::pipeline::CompileOptions;
use ferrite_compiler::BindingSlot;
use ferrite_isa::surface_format::SurfaceFormat;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{self, Capability, Decoration, Dim, ImageFormat, StorageClass};

use crate::device::Core;
use crate::error::{DriverError, Result};
use crate::pipeline::{Pipeline, PipelineLayout};

/// Invocations per workgroup (along x).
pub const GROUP: u32 = 64;
/// Push-constant bytes of every meta kernel.
pub const PUSH_BYTES: u32 = 96;
/// Binding-table indices of the source and destination surfaces.
pub const SRC_BTI: u32 = 0;
pub const DST_BTI: u32 = 1;

/// Where texels come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    Image,
    Buffer,
    /// The constant texel of the push constants (clears and fills).
    Constant,
    /// vkCmdBlitImage: one layer of one level of the source image, read with the sampler
    /// (`sample_l` at LOD 0) at normalized coordinates of the given dimension (1, 2 or 3),
    /// so the sampler filters and converts the format. The destination is an image whose
    /// surface state has the destination's own format: the typed write converts.
    Blit(u8),
}

/// Where texels go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dest {
    Image,
    Buffer,
}

/// One meta kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MetaOp {
    pub src: Source,
    pub dst: Dest,
}

/// The UINT surface format a transfer of `bytes`-byte texels uses; None for sizes the typed
/// messages cannot move in one texel (the 96-bit formats).
pub fn uint_format(bytes: u32) -> Option<SurfaceFormat> {
    Some(match bytes {
        1 => SurfaceFormat::R8_UINT,
        2 => SurfaceFormat::R16_UINT,
        4 => SurfaceFormat::R32_UINT,
        8 => SurfaceFormat::R32G32_UINT,
        16 => SurfaceFormat::R32G32B32A32_UINT,
        _ => return None,
    })
}

/// One side of a transfer in the kernel's terms.
#[derive(Clone, Copy, Debug, Default)]
pub struct Place {
    /// Image: the texel of invocation (0, 0, 0).
    pub origin: [u32; 3],
    /// Image: how the grid's third axis moves (y for 1-D array layers, z otherwise).
    pub z_axis: [u32; 2],
    /// Buffer: texels per row and per slice.
    pub row: u32,
    pub slice: u32,
}

impl Place {
    /// An image side whose third grid axis is the layer of a 1-D array (`layered_y`) or the
    /// layer / slice of a 2-D array or 3-D image.
    pub fn image(origin: [u32; 3], layered_y: bool) -> Place {
        Place {
            origin,
            z_axis: if layered_y { [1, 0] } else { [0, 1] },
            row: 0,
            slice: 0,
        }
    }

    pub fn buffer(row: u32, slice: u32) -> Place {
        Place {
            row,
            slice,
            ..Place::default()
        }
    }

    fn words(&self) -> [u32; 8] {
        let o = self.origin;
        [
            o[0],
            o[1],
            o[2],
            self.row,
            self.z_axis[0],
            self.z_axis[1],
            self.slice,
            0,
        ]
    }
}

/// The push-constant bytes of one meta dispatch.
pub fn push_data(src: &Place, dst: &Place, extent: [u32; 2], texel: [u32; 4]) -> Vec<u8> {
    let mut w = Vec::with_capacity(24);
    w.extend(src.words());
    w.extend(dst.words());
    w.extend([extent[0], extent[1], 0, 0]);
    w.extend(texel);
    w.iter().flat_map(|d| d.to_le_bytes()).collect()
}

/// How a blit maps the destination grid onto the source: invocation (gx, gy, gz) samples
/// the source at normalized coordinate `(base + g * step) * inv_size` per axis, where `base`
/// and `step` are in source texels (the spec's `u = (i + 1/2 - x_dst0) * scale + x_src0`,
/// with `i = lo + g`, folded on the host) and `inv_size` is 1 / the source level's extent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlitMap {
    pub base: [f32; 3],
    pub step: [f32; 3],
    pub inv_size: [f32; 3],
}

/// The push-constant bytes of one blit dispatch: `base` at dword 0, `step` at 4, the
/// destination place at 8 (as for the other kernels), the extent at 16 and `inv_size` at 20.
pub fn blit_push_data(map: &BlitMap, dst: &Place, extent: [u32; 2]) -> Vec<u8> {
    let f = |v: [f32; 3]| [v[0].to_bits(), v[1].to_bits(), v[2].to_bits(), 0];
    let mut w = Vec::with_capacity(24);
    w.extend(f(map.base));
    w.extend(f(map.step));
    w.extend(dst.words());
    w.extend([extent[0], extent[1], 0, 0]);
    w.extend(f(map.inv_size));
    w.iter().flat_map(|d| d.to_le_bytes()).collect()
}

/// The workgroup counts of a w x h x d grid.
pub fn groups(extent: [u32; 3]) -> [u32; 3] {
    [extent[0].div_ceil(GROUP), extent[1], extent[2]]
}

/// The device's meta kernels, compiled on first use.
#[derive(Default)]
pub struct MetaKernels {
    pipelines: Mutex<HashMap<MetaOp, Arc<Pipeline>>>,
}

impl MetaKernels {
    pub fn get(&self, core: &Core, op: MetaOp) -> Result<Arc<Pipeline>> {
        let mut g = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = g.get(&op) {
            return Ok(p.clone());
        }
        let p = Arc::new(build(core, op)?);
        g.insert(op, p.clone());
        Ok(p)
    }
}

/// The compile options of every meta kernel: source at set 0 binding 0, destination at
/// binding 1 (BTIs 0 and 1), 96 bytes of push constants.
pub fn compile_options() -> CompileOptions {
    CompileOptions {
        entry_point: "main".into(),
        specialization: Vec::new(),
        bindings: vec![
            BindingSlot {
                set: 0,
                binding: 0,
                bti: SRC_BTI,
                count: 1,
            },
            BindingSlot {
                set: 0,
                binding: 1,
                bti: DST_BTI,
                count: 1,
            },
        ],
        push_constant_range: (0, PUSH_BYTES),
        debug: crate::pipeline::compiler_debug(),
        dump_dir: None,
        keep_ir: false,
        subgroup: Default::default(),
    }
}

fn build(core: &Core, op: MetaOp) -> Result<Pipeline> {
    let words = spirv(op)?;
    let kernel = crate::pipeline::compile(core.adapter.info, &words, &compile_options())?;
    log::debug!(
        "meta kernel {op:?}: SIMD{}, {} instructions",
        kernel.simd,
        kernel.stats.instructions
    );
    let layout = PipelineLayout::new(
        Vec::new(),
        &[vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: PUSH_BYTES,
        }],
    )?;
    Pipeline::upload(
        core,
        Arc::new(kernel),
        vk::PipelineCreateFlags::empty(),
        Arc::new(layout),
    )
}

fn spv_err(e: rspirv::dr::Error) -> DriverError {
    DriverError::InvalidArgument(format!("building a meta kernel: {e:?}"))
}

/// Ids the kernel body needs.
struct Ids {
    u32_t: u32,
    v3: u32,
    v4: u32,
    pc: u32,
    pc_v4: u32,
}

impl Ids {
    fn k(&self, b: &mut Builder, v: u32) -> u32 {
        b.constant_bit32(self.u32_t, v)
    }

    /// Push-constant vector `i` (16 bytes each).
    fn push(&self, b: &mut Builder, i: u32) -> std::result::Result<u32, rspirv::dr::Error> {
        let idx = self.k(b, i);
        let p = b.access_chain(self.pc_v4, None, self.pc, [idx])?;
        b.load(self.v4, None, p, None, [])
    }

    /// The coordinate of a side whose place vectors are push vectors `at` and `at + 1`:
    /// an image's (x, y, layer / z) or a buffer's texel index.
    fn coord(
        &self,
        b: &mut Builder,
        image: bool,
        at: u32,
        g: [u32; 3],
    ) -> std::result::Result<u32, rspirv::dr::Error> {
        let u = self.u32_t;
        let p0 = self.push(b, at)?;
        let p1 = self.push(b, at + 1)?;
        let c = |b: &mut Builder, v, i| b.composite_extract(u, None, v, [i]);
        if image {
            let x0 = c(b, p0, 0)?;
            let y0 = c(b, p0, 1)?;
            let z0 = c(b, p0, 2)?;
            let zy = c(b, p1, 0)?;
            let zz = c(b, p1, 1)?;
            let x = b.i_add(u, None, x0, g[0])?;
            let y = b.i_add(u, None, y0, g[1])?;
            let gzy = b.i_mul(u, None, g[2], zy)?;
            let y = b.i_add(u, None, y, gzy)?;
            let gzz = b.i_mul(u, None, g[2], zz)?;
            let z = b.i_add(u, None, z0, gzz)?;
            b.composite_construct(self.v3, None, [x, y, z])
        } else {
            let row = c(b, p0, 3)?;
            let slice = c(b, p1, 2)?;
            let yr = b.i_mul(u, None, g[1], row)?;
            let zs = b.i_mul(u, None, g[2], slice)?;
            let i = b.i_add(u, None, g[0], yr)?;
            b.i_add(u, None, i, zs)
        }
    }
}

/// The SPIR-V of one meta kernel (see the module documentation for what it does).
pub fn spirv(op: MetaOp) -> Result<Vec<u32>> {
    spirv_inner(op).map_err(spv_err)
}

fn spirv_inner(op: MetaOp) -> std::result::Result<Vec<u32>, rspirv::dr::Error> {
    use rspirv::binary::Assemble;
    let mut b = Builder::new();
    b.set_version(1, 0);
    b.capability(Capability::Shader);
    if op.src == Source::Blit(1) {
        b.capability(Capability::Sampled1D);
    }
    let buffers = op.src == Source::Buffer || op.dst == Dest::Buffer;
    if buffers {
        b.capability(Capability::ImageBuffer);
    }
    b.memory_model(spirv::AddressingModel::Logical, spirv::MemoryModel::GLSL450);
    let void = b.type_void();
    let fn_t = b.type_function(void, []);
    let bool_t = b.type_bool();
    let u32_t = b.type_int(32, 0);
    let v3 = b.type_vector(u32_t, 3);
    let v4 = b.type_vector(u32_t, 4);
    let in_v3 = b.type_pointer(None, StorageClass::Input, v3);
    let gid = b.variable(in_v3, None, StorageClass::Input, None);
    b.decorate(
        gid,
        Decoration::BuiltIn,
        [Operand::BuiltIn(spirv::BuiltIn::GlobalInvocationId)],
    );
    let pc_t = b.type_struct([v4; 6]);
    b.decorate(pc_t, Decoration::Block, []);
    for m in 0..6 {
        b.member_decorate(pc_t, m, Decoration::Offset, [Operand::LiteralBit32(16 * m)]);
    }
    let pc_ptr = b.type_pointer(None, StorageClass::PushConstant, pc_t);
    let pc = b.variable(pc_ptr, None, StorageClass::PushConstant, None);
    let pc_v4 = b.type_pointer(None, StorageClass::PushConstant, v4);
    // The declared format only says "natively accessed, 32-bit unsigned channels": the
    // surface state's UINT format of the texel size is what the typed messages use.
    // A blit writes the sampler's float-typed registers (the bits of whatever the source
    // format's class is) to a destination in its own format: float-typed, also native.
    let blit = matches!(op.src, Source::Blit(_));
    let f32_t = b.type_float(32);
    let (texel_t, texel_format) = if blit {
        (f32_t, ImageFormat::Rgba32f)
    } else {
        (u32_t, ImageFormat::Rgba32ui)
    };
    let image_t = |b: &mut Builder, image: bool| {
        let (dim, arrayed) = if image {
            (Dim::Dim2D, 1)
        } else {
            (Dim::DimBuffer, 0)
        };
        b.type_image(texel_t, dim, 0, arrayed, 0, 2, texel_format, None)
    };
    let bind = |b: &mut Builder, t: u32, n: u32| {
        let p = b.type_pointer(None, StorageClass::UniformConstant, t);
        let v = b.variable(p, None, StorageClass::UniformConstant, None);
        b.decorate(v, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        b.decorate(v, Decoration::Binding, [Operand::LiteralBit32(n)]);
        v
    };
    let binding = |b: &mut Builder, image: bool, n: u32| {
        let t = image_t(b, image);
        let p = b.type_pointer(None, StorageClass::UniformConstant, t);
        let v = b.variable(p, None, StorageClass::UniformConstant, None);
        b.decorate(v, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        b.decorate(v, Decoration::Binding, [Operand::LiteralBit32(n)]);
        (v, t)
    };
    let src = match op.src {
        Source::Constant => None,
        Source::Blit(n) => {
            let dim = match n {
                1 => Dim::Dim1D,
                3 => Dim::Dim3D,
                _ => Dim::Dim2D,
            };
            let image = b.type_image(f32_t, dim, 0, 0, 0, 1, ImageFormat::Unknown, None);
            let t = b.type_sampled_image(image);
            Some((bind(&mut b, t, 0), t))
        }
        s => Some(binding(&mut b, s == Source::Image, 0)),
    };
    let dst = binding(&mut b, op.dst == Dest::Image, 1);
    let ids = Ids {
        u32_t,
        v3,
        v4,
        pc,
        pc_v4,
    };
    let main = b.begin_function(void, None, spirv::FunctionControl::NONE, fn_t)?;
    b.begin_block(None)?;
    let g = b.load(v3, None, gid, None, [])?;
    let gx = b.composite_extract(u32_t, None, g, [0])?;
    let gy = b.composite_extract(u32_t, None, g, [1])?;
    let gz = b.composite_extract(u32_t, None, g, [2])?;
    let ext = ids.push(&mut b, 4)?;
    let w = b.composite_extract(u32_t, None, ext, [0])?;
    let h = b.composite_extract(u32_t, None, ext, [1])?;
    let in_x = b.u_less_than(bool_t, None, gx, w)?;
    let in_y = b.u_less_than(bool_t, None, gy, h)?;
    let inside = b.logical_and(bool_t, None, in_x, in_y)?;
    let body = b.id();
    let end = b.id();
    b.selection_merge(end, spirv::SelectionControl::NONE)?;
    b.branch_conditional(inside, body, end, [])?;
    b.begin_block(Some(body))?;
    let texel = match (op.src, src) {
        (Source::Constant, _) | (_, None) => ids.push(&mut b, 5)?,
        (Source::Blit(n), Some((var, t))) => {
            let v4f = b.type_vector(f32_t, 4);
            let pf = |b: &mut Builder, i| {
                let v = ids.push(b, i)?;
                b.bitcast(v4f, None, v)
            };
            let base = pf(&mut b, 0)?;
            let step = pf(&mut b, 1)?;
            let inv = pf(&mut b, 5)?;
            let mut coord = Vec::new();
            for (axis, g) in [gx, gy, gz].into_iter().enumerate().take(n as usize) {
                let a = axis as u32;
                let gf = b.convert_u_to_f(f32_t, None, g)?;
                let s = b.composite_extract(f32_t, None, step, [a])?;
                let o = b.composite_extract(f32_t, None, base, [a])?;
                let i = b.composite_extract(f32_t, None, inv, [a])?;
                let u = b.f_mul(f32_t, None, gf, s)?;
                let u = b.f_add(f32_t, None, u, o)?;
                coord.push(b.f_mul(f32_t, None, u, i)?);
            }
            let coord = if n == 1 {
                coord[0]
            } else {
                let vt = b.type_vector(f32_t, u32::from(n));
                b.composite_construct(vt, None, coord)?
            };
            let si = b.load(t, None, var, None, [])?;
            let lod = b.constant_bit32(f32_t, 0);
            b.image_sample_explicit_lod(
                v4f,
                None,
                si,
                coord,
                spirv::ImageOperands::LOD,
                [Operand::IdRef(lod)],
            )?
        }
        (s, Some((var, t))) => {
            let c = ids.coord(&mut b, s == Source::Image, 0, [gx, gy, gz])?;
            let img = b.load(t, None, var, None, [])?;
            b.image_read(v4, None, img, c, None, [])?
        }
    };
    let c = ids.coord(&mut b, op.dst == Dest::Image, 2, [gx, gy, gz])?;
    let img = b.load(dst.1, None, dst.0, None, [])?;
    b.image_write(img, c, texel, None, [])?;
    b.branch(end)?;
    b.begin_block(Some(end))?;
    b.ret()?;
    b.end_function()?;
    b.entry_point(spirv::ExecutionModel::GLCompute, main, "main", [gid]);
    b.execution_mode(main, spirv::ExecutionMode::LocalSize, [GROUP, 1, 1]);
    Ok(b.module().assemble())
}

/// Every meta kernel the transfer commands use.
#[cfg(test)]
pub const ALL: [MetaOp; 9] = [
    MetaOp {
        src: Source::Blit(1),
        dst: Dest::Image,
    },
    MetaOp {
        src: Source::Blit(2),
        dst: Dest::Image,
    },
    MetaOp {
        src: Source::Blit(3),
        dst: Dest::Image,
    },
    MetaOp {
        src: Source::Buffer,
        dst: Dest::Image,
    },
    MetaOp {
        src: Source::Image,
        dst: Dest::Buffer,
    },
    MetaOp {
        src: Source::Image,
        dst: Dest::Image,
    },
    MetaOp {
        src: Source::Constant,
        dst: Dest::Image,
    },
    MetaOp {
        src: Source::Buffer,
        dst: Dest::Buffer,
    },
    MetaOp {
        src: Source::Constant,
        dst: Dest::Buffer,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use ferrite_compiler::Target;

    #[test]
    fn every_meta_kernel_compiles_for_gen9() {
        for op in ALL {
            let words = spirv(op).unwrap();
            let k = ferrite_compiler::compile(&words, &Target::gen9(), &compile_options())
                .unwrap_or_else(|e| panic!("{op:?}: {e}"));
            assert_eq!(k.stats.spills, 0, "{op:?} spills");
            let want: Vec<u32> = match op.src {
                Source::Constant => vec![DST_BTI],
                _ => vec![SRC_BTI, DST_BTI],
            };
            assert_eq!(k.btis, want, "{op:?} binding table");
        }
    }

    #[test]
    fn meta_spirv_passes_spirv_val_when_installed() {
        let dir = std::env::temp_dir().join(format!("ferrite-meta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for op in ALL {
            let words = spirv(op).unwrap();
            let p = dir.join("meta.spv");
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            std::fs::write(&p, bytes).unwrap();
            match std::process::Command::new("spirv-val").arg(&p).output() {
                Ok(out) => assert!(
                    out.status.success(),
                    "{op:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ),
                Err(_) => {
                    eprintln!("spirv-val not installed: meta SPIR-V not validated");
                    break;
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn push_data_places_each_field() {
        let src = Place::image([1, 2, 3], true);
        let dst = Place::buffer(10, 100);
        let d = push_data(&src, &dst, [7, 8], [9, 10, 11, 12]);
        let w: Vec<u32> = d
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(d.len() as u32, PUSH_BYTES);
        assert_eq!(&w[0..8], &[1, 2, 3, 0, 1, 0, 0, 0]);
        assert_eq!(&w[8..16], &[0, 0, 0, 10, 0, 0, 100, 0]);
        assert_eq!(&w[16..24], &[7, 8, 0, 0, 9, 10, 11, 12]);
        assert_eq!(groups([65, 3, 2]), [2, 3, 2]);
    }
}
