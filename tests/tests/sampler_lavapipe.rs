//! The reference sampler that checks the simulated Gen9 sampler
//! (kernel_iface::gpu::sampler::reference) against a real Vulkan implementation: seeded
//! random images (2-D, 2-D arrays, cubes; UNORM, sRGB, SNORM, float, packed, shared-exponent
//! and integer formats; several mip levels), samplers (filters, mip modes, address modes, LOD
//! bias and clamps, border colours) and coordinates are sampled with textureLod on lavapipe,
//! and every result is compared with the reference. Differences are listed with their size;
//! a difference larger than Vulkan's precision rules allow (8-bit sub-texel and mipmap
//! precision, as lavapipe and Gen9 report, plus the format's own precision) fails.
//!
//! The loader reads VK_DRIVER_FILES once per process, so lavapipe runs in a child process
//! (this binary again, on its ignored `child_samples_on_lavapipe` test).
//! `FERRITE_SAMPLER_LAVAPIPE=<cases>` changes the number of cases (default 24).

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_isa::random::Rng;
use ferrite_isa::surface_format::{NumericClass, SurfaceFormat};
use kernel_iface::gpu::sampler::reference::{RefImage, RefKind, RefLevel, RefSampler, RefWrap};

const LANES: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    D2,
    D2Array,
    Cube,
    D3,
}

/// What the shader does with the image.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    /// textureLod
    Sample,
    /// textureGather of one component (2-D and 2-D arrays)
    Gather(u8),
    /// texelFetch at in-bounds integer coordinates
    Fetch,
}

/// Formats with their Vulkan names (the mapping anv uses for these).
const FORMATS: &[(SurfaceFormat, vk::Format)] = &[
    (SurfaceFormat::R8G8B8A8_UNORM, vk::Format::R8G8B8A8_UNORM),
    (
        SurfaceFormat::R8G8B8A8_UNORM_SRGB,
        vk::Format::R8G8B8A8_SRGB,
    ),
    (SurfaceFormat::B8G8R8A8_UNORM, vk::Format::B8G8R8A8_UNORM),
    (
        SurfaceFormat::R16G16B16A16_FLOAT,
        vk::Format::R16G16B16A16_SFLOAT,
    ),
    (SurfaceFormat::R32_FLOAT, vk::Format::R32_SFLOAT),
    (
        SurfaceFormat::R10G10B10A2_UNORM,
        vk::Format::A2B10G10R10_UNORM_PACK32,
    ),
    (
        SurfaceFormat::R11G11B10_FLOAT,
        vk::Format::B10G11R11_UFLOAT_PACK32,
    ),
    (SurfaceFormat::R8_SNORM, vk::Format::R8_SNORM),
    (SurfaceFormat::R16G16_UNORM, vk::Format::R16G16_UNORM),
    (
        SurfaceFormat::R9G9B9E5_SHAREDEXP,
        vk::Format::E5B9G9R9_UFLOAT_PACK32,
    ),
    (SurfaceFormat::B5G6R5_UNORM, vk::Format::R5G6B5_UNORM_PACK16),
    (
        SurfaceFormat::R32G32B32A32_UINT,
        vk::Format::R32G32B32A32_UINT,
    ),
    (SurfaceFormat::R16_SINT, vk::Format::R16_SINT),
];

const WRAPS: &[(vk::SamplerAddressMode, RefWrap)] = &[
    (vk::SamplerAddressMode::REPEAT, RefWrap::Repeat),
    (
        vk::SamplerAddressMode::MIRRORED_REPEAT,
        RefWrap::MirroredRepeat,
    ),
    (vk::SamplerAddressMode::CLAMP_TO_EDGE, RefWrap::ClampToEdge),
    (
        vk::SamplerAddressMode::CLAMP_TO_BORDER,
        RefWrap::ClampToBorder,
    ),
];

/// One random case: image, sampler, and the lanes' coordinates (xyz) and LODs (w).
struct Case {
    kind: Kind,
    op: Op,
    format: SurfaceFormat,
    vk_format: vk::Format,
    /// Width, height and (3-D) depth.
    size: [u32; 3],
    levels: u32,
    layers: u32,
    /// Texel bytes per level, layer-major, rows tightly packed.
    data: Vec<Vec<u8>>,
    reference: RefImage,
    sampler: RefSampler,
    border: vk::BorderColor,
    coords: Vec<[f32; 4]>,
}

fn gen_case(seed: u64) -> Case {
    let mut r = Rng::new(seed);
    let kind = r.pick(&[Kind::D2, Kind::D2Array, Kind::Cube, Kind::D3]);
    let op = match (r.below(5), kind) {
        (0, Kind::D2 | Kind::D2Array) => Op::Gather(r.below(4) as u8),
        (1, Kind::D2 | Kind::D2Array | Kind::D3) => Op::Fetch,
        _ => Op::Sample,
    };
    let (format, vk_format) = r.pick(FORMATS);
    let side = |r: &mut Rng| 1 + r.below(12) as u32;
    let size = match kind {
        Kind::Cube => {
            let s = side(&mut r);
            [s, s, 1]
        }
        Kind::D3 => [side(&mut r), side(&mut r), 1 + r.below(6) as u32],
        _ => [side(&mut r), side(&mut r), 1],
    };
    let layers = match kind {
        Kind::D2 | Kind::D3 => 1,
        Kind::D2Array => 1 + r.below(3) as u32,
        Kind::Cube => 6,
    };
    let max_levels = 32 - size[0].max(size[1]).max(size[2]).leading_zeros();
    let levels = 1 + r.below(max_levels as u64) as u32;
    let integer = format.numeric_class() != NumericClass::Float;
    let n = format.bytes_per_texel() as usize;
    let mut data = Vec::new();
    let mut ref_levels = Vec::new();
    for l in 0..levels {
        let (w, h) = ((size[0] >> l).max(1), (size[1] >> l).max(1));
        // Layers, or the level's 3-D slices.
        let slices = if kind == Kind::D3 {
            (size[2] >> l).max(1)
        } else {
            layers
        };
        let mut bytes = Vec::new();
        let mut texels = Vec::new();
        for _ in 0..(w * h * slices) {
            let v = [0; 4].map(|_: u32| match format.numeric_class() {
                NumericClass::Float => ((r.below(2001) as f32 - 500.0) / 1000.0).to_bits(),
                NumericClass::Uint => r.next_u64() as u32 >> r.below(32),
                NumericClass::Sint => (r.next_u64() as i32 >> r.below(32)) as u32,
            });
            let mut raw = [0u8; 16];
            format.encode(v, &mut raw);
            bytes.extend_from_slice(&raw[..n]);
            texels.push(format.decode(&raw));
        }
        data.push(bytes);
        ref_levels.push(RefLevel {
            w,
            h,
            n: slices,
            texels,
        });
    }
    let linear_ok = !integer;
    let mag_linear = linear_ok && r.chance(1, 2);
    let min_linear = linear_ok && r.chance(1, 2);
    // Linear mip filtering needs the linear-filter feature too: float-class formats only.
    let mip_linear = linear_ok && r.chance(1, 2);
    let wraps = [0; 3].map(|_: u32| r.pick(WRAPS));
    let bias = (r.below(513) as f64 - 256.0) / 128.0; // [-2, 2], exact in s4.8
                                                      // LOD clamps off the halfway points between levels (nearest mip selection may round
                                                      // those either way).
    let min_lod = r.below(9) as f64 / 4.0 + 1.0 / 16.0;
    let max_lod = min_lod + r.below(17) as f64 / 4.0;
    let (border, border_bits) = match (r.below(3), integer) {
        (0, false) => (vk::BorderColor::FLOAT_TRANSPARENT_BLACK, [0; 4]),
        (1, false) => (
            vk::BorderColor::FLOAT_OPAQUE_BLACK,
            [0, 0, 0, 1.0f32.to_bits()],
        ),
        (_, false) => (vk::BorderColor::FLOAT_OPAQUE_WHITE, [1.0f32.to_bits(); 4]),
        (0, true) => (vk::BorderColor::INT_TRANSPARENT_BLACK, [0; 4]),
        (1, true) => (vk::BorderColor::INT_OPAQUE_BLACK, [0, 0, 0, 1]),
        (_, true) => (vk::BorderColor::INT_OPAQUE_WHITE, [1; 4]),
    };
    let sampler = RefSampler {
        mag_linear,
        min_linear,
        mip_linear: Some(mip_linear),
        wrap: [wraps[0].1, wraps[1].1, wraps[2].1],
        bias,
        min_lod,
        max_lod,
        unnormalized: false,
        border: border_bits,
    };
    // Fine steps, so that a coordinate rarely lands exactly on a texel boundary (where
    // implementations may round either way).
    let span =
        |r: &mut Rng, lo: f32, hi: f32| lo + (hi - lo) * (r.below(1 << 20) as f32 / 1048576.0);
    let coords = (0..LANES)
        .map(|_| {
            let lod = span(&mut r, -1.0, levels as f32 + 0.5);
            if op == Op::Fetch {
                // In-bounds integer coordinates (as i32 bits): x, y, layer or z, level.
                let l = r.below(levels as u64) as u32;
                let ext = |d: usize| (size[d] >> l).max(1) as u64;
                let z = if kind == Kind::D3 {
                    r.below(ext(2))
                } else {
                    r.below(layers as u64)
                };
                return [r.below(ext(0)), r.below(ext(1)), z, l as u64]
                    .map(|v| f32::from_bits(v as u32));
            }
            match kind {
                Kind::D3 => [
                    span(&mut r, -1.25, 2.25),
                    span(&mut r, -1.25, 2.25),
                    span(&mut r, -1.25, 2.25),
                    lod,
                ],
                Kind::Cube => [
                    span(&mut r, -1.0, 1.0),
                    span(&mut r, -1.0, 1.0),
                    span(&mut r, -1.0, 1.0),
                    lod,
                ],
                Kind::D2Array => [
                    span(&mut r, -1.25, 2.25),
                    span(&mut r, -1.25, 2.25),
                    span(&mut r, -0.4, layers as f32 - 0.6),
                    lod,
                ],
                Kind::D2 => [
                    span(&mut r, -1.25, 2.25),
                    span(&mut r, -1.25, 2.25),
                    0.0,
                    lod,
                ],
            }
        })
        .collect();
    Case {
        kind,
        op,
        format,
        vk_format,
        size,
        levels,
        layers,
        data,
        reference: RefImage {
            kind: match kind {
                Kind::Cube => RefKind::Cube,
                Kind::D3 => RefKind::D3,
                _ => RefKind::D2,
            },
            arrayed: kind == Kind::D2Array,
            integer,
            present: [0u8, 1, 2, 3].map(|c| format.has_component(c)),
            levels: ref_levels,
        },
        sampler,
        border,
        coords,
    }
}

impl Case {
    fn vk_wraps(&self) -> [vk::SamplerAddressMode; 3] {
        self.sampler
            .wrap
            .map(|w| WRAPS.iter().find(|x| x.1 == w).unwrap().0)
    }

    fn shader_key(&self) -> String {
        let prefix = match self.format.numeric_class() {
            NumericClass::Float => "",
            NumericClass::Uint => "u",
            NumericClass::Sint => "i",
        };
        let (ty, coord, icoord) = match self.kind {
            Kind::D2 => ("sampler2D", "c.xy", "ic.xy"),
            Kind::D2Array => ("sampler2DArray", "c.xyz", "ic.xyz"),
            Kind::Cube => ("samplerCube", "c.xyz", ""),
            Kind::D3 => ("sampler3D", "c.xyz", "ic.xyz"),
        };
        let body = match self.op {
            Op::Sample => format!("textureLod(tex, {coord}, c.w)"),
            Op::Gather(comp) => format!("textureGather(tex, {coord}, {comp})"),
            Op::Fetch => format!("texelFetch(tex, {icoord}, ic.w)"),
        };
        format!(
            "#version 450
layout(local_size_x = {LANES}) in;
layout(set = 0, binding = 0) uniform {prefix}{ty} tex;
layout(set = 0, binding = 1) buffer In {{ vec4 c[]; }} inp;
layout(set = 0, binding = 2) buffer Out {{ {prefix}vec4 r[]; }} outp;
void main() {{
    uint i = gl_GlobalInvocationID.x;
    vec4 c = inp.c[i];
    ivec4 ic = floatBitsToInt(c);
    outp.r[i] = {body};
}}
"
        )
    }
}

fn cases() -> u64 {
    std::env::var("FERRITE_SAMPLER_LAVAPIPE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

const SEED: u64 = 0x1A7A_0000;

/// Samples every case on the driver of this process; None when it lacks the format.
fn run_case(c: &mut Ctx, case: &Case) -> Option<Vec<u32>> {
    let features = vk::FormatFeatureFlags::SAMPLED_IMAGE
        | if case.sampler.mag_linear
            || case.sampler.min_linear
            || case.sampler.mip_linear == Some(true)
        {
            vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR
        } else {
            vk::FormatFeatureFlags::empty()
        };
    // SAFETY: a live instance and physical device.
    let props = unsafe {
        c.h.instance
            .get_physical_device_format_properties(c.pd, case.vk_format)
    };
    if !props.optimal_tiling_features.contains(features) {
        return None;
    }
    let key = case.shader_key();
    let code = spirv("sampler_lavapipe", Some(&key));
    let k = c
        .kernel_with(
            &code,
            &[
                vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                vk::DescriptorType::STORAGE_BUFFER,
                vk::DescriptorType::STORAGE_BUFFER,
            ],
            0,
            &[],
            vk::PipelineCache::null(),
        )
        .unwrap();
    let input = c.buffer((LANES * 16) as u64);
    let output = c.buffer((LANES * 16) as u64);
    let words: Vec<u32> = case
        .coords
        .iter()
        .flat_map(|v| v.map(f32::to_bits))
        .collect();
    c.buf(input).write_u32s(&words);
    let staging_size: usize = case.data.iter().map(|d| d.len()).sum();
    let staging = c.buffer(staging_size.max(4) as u64);
    let mut offsets = Vec::new();
    let mut at = 0;
    for d in &case.data {
        c.buf(staging).write_bytes(at, d);
        offsets.push(at as u64);
        at += d.len();
    }
    let dev = c.dev.clone();
    // SAFETY: valid create infos on a live device; every object is destroyed below after
    // the queue is idle.
    unsafe {
        let image = dev
            .create_image(
                &vk::ImageCreateInfo::default()
                    .flags(if case.kind == Kind::Cube {
                        vk::ImageCreateFlags::CUBE_COMPATIBLE
                    } else {
                        vk::ImageCreateFlags::empty()
                    })
                    .image_type(if case.kind == Kind::D3 {
                        vk::ImageType::TYPE_3D
                    } else {
                        vk::ImageType::TYPE_2D
                    })
                    .format(case.vk_format)
                    .extent(vk::Extent3D {
                        width: case.size[0],
                        height: case.size[1],
                        depth: case.size[2],
                    })
                    .mip_levels(case.levels)
                    .array_layers(case.layers)
                    .samples(vk::SampleCountFlags::TYPE_1)
                    .tiling(vk::ImageTiling::OPTIMAL)
                    .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST)
                    .initial_layout(vk::ImageLayout::UNDEFINED),
                None,
            )
            .unwrap();
        let req = dev.get_image_memory_requirements(image);
        let mem_type = req.memory_type_bits.trailing_zeros();
        let memory = dev
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(mem_type),
                None,
            )
            .unwrap();
        dev.bind_image_memory(image, memory, 0).unwrap();
        let range = vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: case.levels,
            base_array_layer: 0,
            layer_count: case.layers,
        };
        let view = dev
            .create_image_view(
                &vk::ImageViewCreateInfo::default()
                    .image(image)
                    .view_type(match case.kind {
                        Kind::D2 => vk::ImageViewType::TYPE_2D,
                        Kind::D2Array => vk::ImageViewType::TYPE_2D_ARRAY,
                        Kind::Cube => vk::ImageViewType::CUBE,
                        Kind::D3 => vk::ImageViewType::TYPE_3D,
                    })
                    .format(case.vk_format)
                    .subresource_range(range),
                None,
            )
            .unwrap();
        let s = &case.sampler;
        let w = case.vk_wraps();
        let filter = |l: bool| {
            if l {
                vk::Filter::LINEAR
            } else {
                vk::Filter::NEAREST
            }
        };
        let sampler = dev
            .create_sampler(
                &vk::SamplerCreateInfo::default()
                    .mag_filter(filter(s.mag_linear))
                    .min_filter(filter(s.min_linear))
                    .mipmap_mode(if s.mip_linear == Some(true) {
                        vk::SamplerMipmapMode::LINEAR
                    } else {
                        vk::SamplerMipmapMode::NEAREST
                    })
                    .address_mode_u(w[0])
                    .address_mode_v(w[1])
                    .address_mode_w(w[2])
                    .mip_lod_bias(s.bias as f32)
                    .min_lod(s.min_lod as f32)
                    .max_lod(s.max_lod as f32)
                    .border_color(case.border),
                None,
            )
            .unwrap();
        let info = [vk::DescriptorImageInfo {
            sampler,
            image_view: view,
            image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        }];
        let bufs = [
            [vk::DescriptorBufferInfo {
                buffer: c.buf(input).buffer,
                offset: 0,
                range: vk::WHOLE_SIZE,
            }],
            [vk::DescriptorBufferInfo {
                buffer: c.buf(output).buffer,
                offset: 0,
                range: vk::WHOLE_SIZE,
            }],
        ];
        let set = c.k(k).set;
        let writes = [
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .image_info(&info),
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(1)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&bufs[0]),
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(2)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&bufs[1]),
        ];
        dev.update_descriptor_sets(&writes, &[]);
        let staging_buf = c.buf(staging).buffer;
        c.run(|d, cb| {
            let to_dst = [vk::ImageMemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::empty())
                .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .old_layout(vk::ImageLayout::UNDEFINED)
                .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image)
                .subresource_range(range)];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &to_dst,
            );
            let regions: Vec<_> = (0..case.levels)
                .map(|l| vk::BufferImageCopy {
                    buffer_offset: offsets[l as usize],
                    buffer_row_length: 0,
                    buffer_image_height: 0,
                    image_subresource: vk::ImageSubresourceLayers {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        mip_level: l,
                        base_array_layer: 0,
                        layer_count: case.layers,
                    },
                    image_offset: vk::Offset3D::default(),
                    image_extent: vk::Extent3D {
                        width: (case.size[0] >> l).max(1),
                        height: (case.size[1] >> l).max(1),
                        depth: (case.size[2] >> l).max(1),
                    },
                })
                .collect();
            d.cmd_copy_buffer_to_image(
                cb,
                staging_buf,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &regions,
            );
            let to_read = [vk::ImageMemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .dst_access_mask(vk::AccessFlags::SHADER_READ)
                .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
                .new_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image)
                .subresource_range(range)];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &to_read,
            );
            c.bind_kernel(cb, k);
            dispatch(c, cb, 1, 1);
        })
        .unwrap();
        dev.destroy_sampler(sampler, None);
        dev.destroy_image_view(view, None);
        dev.destroy_image(image, None);
        dev.free_memory(memory, None);
    }
    Some(c.buf(output).read_u32s(LANES * 4))
}

#[test]
#[ignore = "runs only as the child of reference_sampler_matches_lavapipe"]
fn child_samples_on_lavapipe() {
    if !is_child() {
        return;
    }
    let mut c = Ctx::new();
    let mut results = Results::new();
    for i in 0..cases() {
        let case = gen_case(SEED + i);
        if let Some(words) = run_case(&mut c, &case) {
            results.insert(format!("case{i:04}"), words);
        }
    }
    c.finish();
    print_results(&results);
}

/// The largest difference allowed between two implementations of a float sample: the
/// texels here lie in [-0.5, 1.5], so 8-bit-precise filter and mip weights may move a result
/// by about 2 / 256; plus the format's own precision where the implementations may round
/// differently (f16 and the 11/10-bit floats, the shared exponent).
fn tolerance(case: &Case, want: f32) -> f32 {
    let weights = 2.0 / 256.0;
    let format = match case.format {
        SurfaceFormat::R16G16B16A16_FLOAT
        | SurfaceFormat::R11G11B10_FLOAT
        | SurfaceFormat::R9G9B9E5_SHAREDEXP => want.abs() / 64.0,
        _ => 0.0,
    };
    weights + format + 1e-6
}

#[test]
fn reference_sampler_matches_lavapipe() {
    let lavapipe = run_child("child_samples_on_lavapipe", &lavapipe_env());
    assert!(!lavapipe.is_empty(), "lavapipe sampled no case");
    let mut report = Vec::new();
    let mut failures = Vec::new();
    let mut ambiguous = 0;
    for i in 0..cases() {
        let case = gen_case(SEED + i);
        let Some(got) = lavapipe.get(&format!("case{i:04}")) else {
            report.push(format!("case {i}: {} not sampled by lavapipe", case.format));
            continue;
        };
        let float = case.format.numeric_class() == NumericClass::Float;
        let (mut worst_ulp, mut worst_abs, mut exact) = (0u32, 0f32, 0usize);
        for (lane, c) in case.coords.iter().enumerate() {
            // Nearest mip selection may round a level halfway between two levels either
            // way (the spec allows ceil(d + 0.5) - 1 and floor(d + 0.5)): skip such lanes.
            let s = &case.sampler;
            let lambda = (c[3] as f64 + s.bias).max(s.min_lod).min(s.max_lod);
            if case.op == Op::Sample
                && s.mip_linear == Some(false)
                && (lambda - lambda.floor() - 0.5).abs() < 1.0 / 512.0
            {
                ambiguous += 1;
                continue;
            }
            let want = match case.op {
                Op::Sample => case.reference.sample(&case.sampler, *c, c[3], [0; 3]),
                Op::Gather(comp) => case
                    .reference
                    .gather(&case.sampler, *c, comp as usize, [0; 2]),
                Op::Fetch => {
                    let i = c.map(|v| v.to_bits() as i32);
                    case.reference.fetch([i[0], i[1], i[2]], i[3], [0; 3])
                }
            };
            for ch in 0..4 {
                let g = got[lane * 4 + ch];
                let w = want[ch];
                if g == w {
                    exact += 1;
                    continue;
                }
                if !float {
                    failures.push(format!(
                        "case {i} lane {lane} ch {ch}: lavapipe {g:#x} reference {w:#x} ({:?} {:?} {} {:?} coord {c:?})",
                        case.op, case.kind, case.format, case.sampler
                    ));
                    continue;
                }
                let (gf, wf) = (f32::from_bits(g), f32::from_bits(w));
                let key = |x: u32| if x >> 31 == 1 { !x } else { x | 0x8000_0000 };
                worst_ulp = worst_ulp.max(key(g).abs_diff(key(w)));
                worst_abs = worst_abs.max((gf - wf).abs());
                if (gf - wf).abs() > tolerance(&case, wf) || gf.is_nan() != wf.is_nan() {
                    failures.push(format!(
                        "case {i} lane {lane} ch {ch}: lavapipe {gf} reference {wf} (diff {}) [{:?} {:?} {} {:?} L{} x{} sampler {:?} coord {c:?}]",
                        (gf - wf).abs(),
                        case.op,
                        case.kind,
                        case.format,
                        case.size,
                        case.levels,
                        case.layers,
                        case.sampler
                    ));
                }
            }
        }
        report.push(format!(
            "case {i}: {:?} {:?} {} {:?} levels {} layers {}: {exact}/{} exact, worst {worst_ulp} ULP ({worst_abs:e})",
            case.op,
            case.kind,
            case.format,
            case.size,
            case.levels,
            case.layers,
            LANES * 4
        ));
    }
    report.push(format!(
        "{ambiguous} lanes skipped: nearest mip selection exactly halfway between levels"
    ));
    eprintln!("{}", report.join("\n"));
    assert!(
        failures.is_empty(),
        "{} differences beyond Vulkan's precision:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
