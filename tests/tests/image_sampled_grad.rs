//! textureGrad (`OpImageSampleExplicitLod ... Grad`, Gen9's sample_d) on Ferrite's simulated
//! GPU and on lavapipe: a 16x16 RGBA8 image with five levels, as a 2-D image, a 2-D array
//! (two layers) and a 1-D image, sampled with derivatives that select LODs from -1.3 to 6.2
//! (magnification, every level, beyond the last), with and without a constant offset.
//!
//! The derivatives are axis-aligned (dP/dx along u, dP/dy along v, or swapped), so the scale
//! factor rho is the same under the spec's exact formula and under the approximations it
//! allows, and the LOD is log2 of it either way; nearest-mip samplers get LODs away from
//! the halfway point between levels, linear-mip samplers integer LODs, so that a log2
//! approximation cannot change the result. Samplers add LOD biases up to maxSamplerLodBias
//! (16). Results must equal lavapipe's within the filter weights' precision (8 fractional
//! bits: 2/256 of the texel range).

mod compute_common;

use ash::vk;
use compute_common::*;

const W: u32 = 16;
const LEVELS: u32 = 5;
const LAYERS: u32 = 2;
/// Lanes per case.
const N: usize = 64;
const SEED: u32 = 0x6EAD_0000;

/// LODs for nearest-mip samplers (none within 0.2 of a halfway point) and for linear-mip
/// ones (integers).
const LODS_NEAREST: &[f32] = &[
    -1.3, -0.2, 0.0, 0.25, 0.8, 1.0, 1.2, 1.75, 2.3, 3.0, 3.8, 5.0, 6.2,
];
const LODS_LINEAR: &[f32] = &[-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0];

struct Kind {
    name: &'static str,
    ty: vk::ImageType,
    view: vk::ImageViewType,
    layers: u32,
    /// GLSL sampler type, coordinate and derivative expressions (r = vec4 input), and the
    /// offset variant's call.
    sampler: &'static str,
    coord: &'static str,
    grad: &'static str,
    offset: &'static str,
}

const KINDS: &[Kind] = &[
    Kind {
        name: "2d",
        ty: vk::ImageType::TYPE_2D,
        view: vk::ImageViewType::TYPE_2D,
        layers: 1,
        sampler: "sampler2D",
        coord: "r.xy",
        grad: "d.xy, d.zw",
        offset: "textureGradOffset(t, r.xy, d.xy, d.zw, ivec2(1, -2))",
    },
    Kind {
        name: "2darray",
        ty: vk::ImageType::TYPE_2D,
        view: vk::ImageViewType::TYPE_2D_ARRAY,
        layers: LAYERS,
        sampler: "sampler2DArray",
        coord: "r.xyz",
        grad: "d.xy, d.zw",
        offset: "textureGradOffset(t, r.xyz, d.xy, d.zw, ivec2(-3, 2))",
    },
    Kind {
        name: "1d",
        ty: vk::ImageType::TYPE_1D,
        view: vk::ImageViewType::TYPE_1D,
        layers: 1,
        sampler: "sampler1D",
        coord: "r.x",
        grad: "d.x, d.z",
        offset: "textureGradOffset(t, r.x, d.x, d.z, 3)",
    },
];

fn shader(k: &Kind) -> String {
    format!(
        "
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform {s} t;
layout(set = 0, binding = 1) buffer Out {{ vec4 o[]; }};
layout(set = 0, binding = 2) buffer In {{ vec4 inp[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    vec4 r = inp[2u * i];
    vec4 d = inp[2u * i + 1u];
    o[2u * i] = textureGrad(t, {c}, {g});
    o[2u * i + 1u] = {o};
}}
",
        s = k.sampler,
        c = k.coord,
        g = k.grad,
        o = k.offset,
    )
}

/// Per lane: r = (u, v, layer, -), d = (dP/dx, dP/dy) as (du/dx, dv/dx, du/dy, dv/dy), with
/// the LOD drawn from `lods` and, at random, the derivative along u on x or on y.
fn inputs(seed: u32, lods: &[f32]) -> Vec<f32> {
    let w = random_u32s(seed, N * 4);
    let unit = |v: u32| (v >> 8) as f32 / (1u32 << 24) as f32;
    let mut v = Vec::with_capacity(N * 8);
    for l in 0..N {
        let r = &w[4 * l..4 * l + 4];
        let lod = lods[r[3] as usize % lods.len()];
        let g = lod.exp2() / W as f32;
        v.extend([
            unit(r[0]) * 1.2 - 0.1,
            unit(r[1]) * 1.2 - 0.1,
            (r[2] % LAYERS) as f32,
            0.0,
        ]);
        v.extend(if r[3] & 0x100 == 0 {
            [g, 0.0, 0.0, g]
        } else {
            [0.0, g, g, 0.0]
        });
    }
    v
}

/// The image with random texels in every level, filled by vkCmdCopyBufferToImage.
fn create_image(c: &mut Ctx, k: &Kind, seed: u32) -> ImageAndView {
    let h = if k.ty == vk::ImageType::TYPE_1D { 1 } else { W };
    let texels = |l: u32| ((W >> l).max(1) * (h >> l).max(1) * k.layers) as usize;
    let total: usize = (0..LEVELS).map(texels).sum();
    let data = c.buffer(total as u64 * 4);
    c.buf(data).write_u32s(&random_u32s(seed, total));
    let mem_type =
        c.h.memory_type(c.pd, vk::MemoryPropertyFlags::HOST_VISIBLE)
            .unwrap();
    let (image, memory) = bound_image(
        c,
        &vk::ImageCreateInfo::default()
            .image_type(k.ty)
            .format(vk::Format::R8G8B8A8_UNORM)
            .extent(vk::Extent3D {
                width: W,
                height: h,
                depth: 1,
            })
            .mip_levels(LEVELS)
            .array_layers(k.layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST)
            .initial_layout(vk::ImageLayout::UNDEFINED),
        mem_type,
    );
    let range = color_range(LEVELS, k.layers);
    let view = color_view(c, image, k.view, vk::Format::R8G8B8A8_UNORM, range);
    let mut at = 0u64;
    let regions: Vec<_> = (0..LEVELS)
        .map(|l| {
            let r = vk::BufferImageCopy {
                buffer_offset: at,
                buffer_row_length: 0,
                buffer_image_height: 0,
                image_subresource: vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: l,
                    base_array_layer: 0,
                    layer_count: k.layers,
                },
                image_offset: vk::Offset3D::default(),
                image_extent: vk::Extent3D {
                    width: (W >> l).max(1),
                    height: (h >> l).max(1),
                    depth: 1,
                },
            };
            at += texels(l) as u64 * 4;
            r
        })
        .collect();
    upload_to_image(c, data, image, range, &regions);
    ImageAndView {
        image,
        memory,
        view,
    }
}

type SamplerCase = (
    &'static str,
    vk::Filter,
    vk::SamplerMipmapMode,
    vk::SamplerAddressMode,
    &'static [f32],
    f32,
);

/// (name, min/mag filter, mip mode, address mode, LODs, mipLodBias). Integer biases keep the
/// LODs' distance from halfway points; 16 and -16 are maxSamplerLodBias.
fn samplers() -> Vec<SamplerCase> {
    use vk::{Filter as F, SamplerAddressMode as A, SamplerMipmapMode as M};
    vec![
        (
            "nearest_nearest",
            F::NEAREST,
            M::NEAREST,
            A::REPEAT,
            LODS_NEAREST,
            0.0,
        ),
        (
            "linear_nearest",
            F::LINEAR,
            M::NEAREST,
            A::CLAMP_TO_EDGE,
            LODS_NEAREST,
            0.0,
        ),
        (
            "linear_linear",
            F::LINEAR,
            M::LINEAR,
            A::MIRRORED_REPEAT,
            LODS_LINEAR,
            0.0,
        ),
        (
            "nearest_bias_3",
            F::NEAREST,
            M::NEAREST,
            A::REPEAT,
            LODS_NEAREST,
            3.0,
        ),
        (
            "linear_linear_bias_-2",
            F::LINEAR,
            M::LINEAR,
            A::REPEAT,
            LODS_LINEAR,
            -2.0,
        ),
        (
            "nearest_bias_16",
            F::NEAREST,
            M::NEAREST,
            A::REPEAT,
            LODS_NEAREST,
            16.0,
        ),
        (
            "linear_nearest_bias_-16",
            F::LINEAR,
            M::NEAREST,
            A::REPEAT,
            LODS_NEAREST,
            -16.0,
        ),
    ]
}

fn run_cases() -> Results {
    let mut c = Ctx::new();
    let mut r = Results::new();
    let types = [
        vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    for (ki, k) in KINDS.iter().enumerate() {
        let img = create_image(&mut c, k, SEED + ki as u32);
        let code = spirv(&format!("image_sampled_grad_{}", k.name), Some(&shader(k)));
        let kern = c
            .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
            .unwrap();
        for (si, (sname, filter, mip, address, lods, bias)) in samplers().into_iter().enumerate() {
            let input = c.buffer((N * 8 * 4) as u64);
            let seed = SEED ^ (0x100 * ki as u32 + si as u32 + 0x5A5A);
            c.buf(input).write_f32s(&inputs(seed, lods));
            let out = zeroed(&mut c, N * 8);
            let info = vk::SamplerCreateInfo::default()
                .mag_filter(filter)
                .min_filter(filter)
                .mipmap_mode(mip)
                .address_mode_u(address)
                .address_mode_v(address)
                .address_mode_w(address)
                .mip_lod_bias(bias)
                .max_lod(vk::LOD_CLAMP_NONE);
            // SAFETY: a valid create info on a live device; destroyed after the submission
            // completed.
            let sampler = unsafe { c.dev.create_sampler(&info, None) }.unwrap();
            write_descriptors(
                &c,
                kern,
                &[
                    Desc::Image(
                        vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                        img.view,
                        sampler,
                    ),
                    Desc::Storage(out),
                    Desc::Storage(input),
                ],
            );
            // SAFETY: the submission is waited for before the sampler is destroyed.
            unsafe {
                c.run(|d, cb| {
                    c.bind_kernel(cb, kern);
                    d.cmd_dispatch(cb, (N / 64) as u32, 1, 1);
                    c.barrier(cb);
                })
                .unwrap();
                c.dev.destroy_sampler(sampler, None);
            }
            r.insert(format!("{}_{sname}", k.name), c.buf(out).read_u32s(N * 8));
        }
        img.destroy(&c);
    }
    c.finish();
    r
}

#[test]
#[ignore = "runs in the child processes of texture_grad_matches_lavapipe"]
fn child_runs_texture_grad_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_cases());
}

#[test]
fn texture_grad_matches_lavapipe() {
    compare_with_lavapipe(
        "child_runs_texture_grad_cases",
        KINDS.len() * samplers().len(),
        |name, _, g, w| {
            let (g, w) = (f32::from_bits(g), f32::from_bits(w));
            let tol = if name.contains("linear") {
                2.0 / 256.0
            } else {
                0.0
            } + 1e-6;
            (g - w).abs() <= tol && g.is_nan() == w.is_nan()
        },
        |i| {
            format!(
                "lane {} {} component {} (seed {SEED:#x} ^ (0x100 * kind + sampler + 0x5A5A))",
                i / 8,
                ["textureGrad", "textureGradOffset"][(i / 4) % 2],
                i % 4
            )
        },
    );
}
