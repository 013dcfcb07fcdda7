//! Sampling arrayed and cube images end to end: `textureLod` (nearest filter with nearest
//! mips, linear filter with linear mips and REPEAT), `texelFetch`, `textureGather`,
//! `textureSize` at levels 0 and 1 and `textureQueryLevels` on 1-D arrays, 2-D arrays (a view
//! starting at layer 1), cube maps and cube arrays, with random coordinates, layers (rounded
//! and clamped), cube directions and explicit LODs. The images are OPTIMAL (Y-tiled) RGBA8
//! with two levels, filled with vkCmdCopyBufferToImage. The same program runs on Ferrite's
//! simulated GPU and on lavapipe (child processes).
//!
//! Fetches, gathers, sizes and nearest samples must be equal (within one float ulp of the
//! UNORM conversion); linear samples within 2/256 of the texel range (Gen9's 8-bit filter
//! and mip weights) — the Vulkan precision rules for filtering.

mod compute_common;

use ash::vk;
use compute_common::*;

const FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
/// Invocations (lanes) per case.
const N: usize = 64;
/// vec4 results per invocation.
const OUT: usize = 6;

struct Kind {
    name: &'static str,
    ty: vk::ImageType,
    extent: [u32; 2],
    /// Image layers, and the view's first layer and layer count.
    layers: u32,
    view: (vk::ImageViewType, u32, u32),
    sampler: &'static str,
    coord: &'static str,
    fetch: &'static str,
    gather: &'static str,
    size: &'static str,
}

const KINDS: &[Kind] = &[
    Kind {
        name: "1d_array",
        ty: vk::ImageType::TYPE_1D,
        extent: [16, 1],
        layers: 3,
        view: (vk::ImageViewType::TYPE_1D_ARRAY, 0, 3),
        sampler: "sampler1DArray",
        coord: "vec2(r.x, r.w)",
        fetch: "texelFetch(tn, ivec2(s.y, s.w), 0)",
        gather: "vec4(0.0)",
        size: "vec4(vec2(textureSize(tn, 0)), vec2(textureSize(tn, 1)))",
    },
    Kind {
        name: "2d_array",
        ty: vk::ImageType::TYPE_2D,
        extent: [8, 8],
        layers: 4,
        view: (vk::ImageViewType::TYPE_2D_ARRAY, 1, 3),
        sampler: "sampler2DArray",
        coord: "vec3(r.xy, r.w)",
        fetch: "texelFetch(tn, ivec3(s.yz, s.w), 0)",
        gather: "textureGather(tl, vec3(r.xy, r.w), 1)",
        size: "vec4(vec3(textureSize(tn, 0)), float(textureSize(tn, 1).x))",
    },
    Kind {
        name: "cube",
        ty: vk::ImageType::TYPE_2D,
        extent: [8, 8],
        layers: 6,
        view: (vk::ImageViewType::CUBE, 0, 6),
        sampler: "samplerCube",
        coord: "r.xyz",
        fetch: "vec4(0.0)",
        gather: "textureGather(tl, r.xyz, 2)",
        size: "vec4(vec2(textureSize(tn, 0)), vec2(textureSize(tn, 1)))",
    },
    Kind {
        name: "cube_array",
        ty: vk::ImageType::TYPE_2D,
        extent: [8, 8],
        layers: 12,
        view: (vk::ImageViewType::CUBE_ARRAY, 0, 12),
        sampler: "samplerCubeArray",
        coord: "r",
        fetch: "vec4(0.0)",
        gather: "textureGather(tl, r, 0)",
        size: "vec4(vec3(textureSize(tn, 0)), float(textureSize(tn, 1).x))",
    },
];

fn shader(k: &Kind) -> String {
    format!(
        "
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform {s} tn;
layout(set = 0, binding = 1) buffer Out {{ vec4 o[]; }};
layout(set = 0, binding = 2) uniform {s} tl;
layout(set = 0, binding = 3) buffer In {{ vec4 inp[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    vec4 r = inp[2u * i];
    vec4 s = inp[2u * i + 1u];
    o[6u * i] = textureLod(tn, {c}, s.x);
    o[6u * i + 1u] = textureLod(tl, {c}, s.x);
    o[6u * i + 2u] = {f};
    o[6u * i + 3u] = {g};
    o[6u * i + 4u] = {z};
    o[6u * i + 5u] = vec4(float(textureQueryLevels(tn)), 0.0, 0.0, 0.0);
}}
",
        s = k.sampler,
        c = k.coord,
        f = k.fetch,
        g = k.gather,
        z = k.size,
    )
}

/// Per lane: r = (x, y, z, layer) coordinates, s = (lod, integer x, y, layer) for the
/// fetch. Sample coordinates reach outside [0, 1] (wrapping), layers outside the view
/// (clamping), cube directions cover every face.
fn inputs(k: &Kind, seed: u32) -> Vec<f32> {
    let w = random_u32s(seed, N * 8);
    let unit = |v: u32| (v >> 8) as f32 / (1u32 << 24) as f32;
    let cube = matches!(
        k.view.0,
        vk::ImageViewType::CUBE | vk::ImageViewType::CUBE_ARRAY
    );
    let layers = if cube { k.view.2 / 6 } else { k.view.2 } as f32;
    let mut v = Vec::with_capacity(N * 8);
    for l in 0..N {
        let r = &w[8 * l..8 * l + 8];
        let coord = |x: u32| {
            if cube {
                unit(x) * 2.0 - 1.0
            } else {
                unit(x) * 1.4 - 0.2
            }
        };
        v.extend([
            coord(r[0]),
            coord(r[1]),
            coord(r[2]),
            unit(r[3]) * (layers + 1.4) - 0.7,
        ]);
        v.extend([
            unit(r[4]) * 1.4,
            (r[5] % k.extent[0]) as f32,
            (r[6] % k.extent[1]) as f32,
            (r[7] % k.view.2) as f32,
        ]);
    }
    v
}

type Img = ImageAndView;

fn create_image(c: &mut Ctx, k: &Kind, seed: u32) -> Img {
    let mem_type =
        c.h.memory_type(c.pd, vk::MemoryPropertyFlags::HOST_VISIBLE)
            .unwrap();
    let flags = if k.layers >= 6 && k.ty == vk::ImageType::TYPE_2D {
        vk::ImageCreateFlags::CUBE_COMPATIBLE
    } else {
        vk::ImageCreateFlags::empty()
    };
    let [w, h] = k.extent;
    let texels = |l: u32| ((w >> l).max(1) * (h >> l).max(1) * k.layers) as usize;
    let words = random_u32s(seed, texels(0) + texels(1));
    let data = c.buffer(words.len() as u64 * 4);
    c.buf(data).write_u32s(&words);
    let (image, memory) = bound_image(
        c,
        &vk::ImageCreateInfo::default()
            .flags(flags)
            .image_type(k.ty)
            .format(FORMAT)
            .extent(vk::Extent3D {
                width: w,
                height: h,
                depth: 1,
            })
            .mip_levels(2)
            .array_layers(k.layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST)
            .initial_layout(vk::ImageLayout::UNDEFINED),
        mem_type,
    );
    let (vt, base, count) = k.view;
    let range = vk::ImageSubresourceRange {
        base_array_layer: base,
        layer_count: count,
        ..color_range(2, k.layers)
    };
    let view = color_view(c, image, vt, FORMAT, range);
    let regions: Vec<_> = (0..2)
        .map(|l| vk::BufferImageCopy {
            buffer_offset: if l == 0 { 0 } else { texels(0) as u64 * 4 },
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
                width: (w >> l).max(1),
                height: (h >> l).max(1),
                depth: 1,
            },
        })
        .collect();
    upload_to_image(c, data, image, color_range(2, k.layers), &regions);
    Img {
        image,
        memory,
        view,
    }
}

fn run_cases() -> Results {
    let mut c = Ctx::with_features(&vk::PhysicalDeviceFeatures::default().image_cube_array(true));
    let mut r = Results::new();
    // SAFETY: valid create infos; destroyed at the end.
    let (nearest, linear) = unsafe {
        let base = vk::SamplerCreateInfo::default()
            .max_lod(vk::LOD_CLAMP_NONE)
            .border_color(vk::BorderColor::FLOAT_TRANSPARENT_BLACK);
        (
            c.dev
                .create_sampler(
                    &base
                        .mag_filter(vk::Filter::NEAREST)
                        .min_filter(vk::Filter::NEAREST)
                        .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
                        .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                        .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
                        .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE),
                    None,
                )
                .unwrap(),
            c.dev
                .create_sampler(
                    &base
                        .mag_filter(vk::Filter::LINEAR)
                        .min_filter(vk::Filter::LINEAR)
                        .mipmap_mode(vk::SamplerMipmapMode::LINEAR)
                        .address_mode_u(vk::SamplerAddressMode::REPEAT)
                        .address_mode_v(vk::SamplerAddressMode::REPEAT)
                        .address_mode_w(vk::SamplerAddressMode::REPEAT),
                    None,
                )
                .unwrap(),
        )
    };
    let types = [
        vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let mut made = Vec::new();
    for (ki, k) in KINDS.iter().enumerate() {
        let seed = 0x1A7E_0000 + ki as u32;
        let img = create_image(&mut c, k, seed);
        let code = spirv(
            &format!("image_sampled_layers_{}", k.name),
            Some(&shader(k)),
        );
        let kern = c
            .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
            .unwrap();
        let input = c.buffer((N * 8 * 4) as u64);
        c.buf(input).write_f32s(&inputs(k, seed ^ 0xFFFF));
        let out = zeroed(&mut c, N * OUT * 4);
        write_descriptors(
            &c,
            kern,
            &[
                Desc::Image(
                    vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                    img.view,
                    nearest,
                ),
                Desc::Storage(out),
                Desc::Image(vk::DescriptorType::COMBINED_IMAGE_SAMPLER, img.view, linear),
                Desc::Storage(input),
            ],
        );
        // SAFETY: the submission is waited for.
        unsafe {
            c.run(|d, cb| {
                c.bind_kernel(cb, kern);
                d.cmd_dispatch(cb, (N / 64) as u32, 1, 1);
                c.barrier(cb);
            })
            .unwrap();
        }
        r.insert(k.name.to_string(), c.buf(out).read_u32s(N * OUT * 4));
        made.push(img);
    }
    // SAFETY: the device is idle; objects created above.
    unsafe {
        c.dev.device_wait_idle().unwrap();
        c.dev.destroy_sampler(nearest, None);
        c.dev.destroy_sampler(linear, None);
    }
    for img in made {
        img.destroy(&c);
    }
    c.finish();
    r
}

#[test]
#[ignore = "runs in the child processes of sampled_layers_match_lavapipe"]
fn child_runs_sampled_layer_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_cases());
}

#[test]
fn sampled_layers_match_lavapipe() {
    let what = [
        "textureLod nearest",
        "textureLod linear",
        "texelFetch",
        "textureGather",
        "textureSize",
        "textureQueryLevels",
    ];
    // Seeds: 0x1A7E_0000 + the kind's index.
    compare_with_lavapipe(
        "child_runs_sampled_layer_cases",
        KINDS.len(),
        |_, i, g, w| {
            let (g, w) = (f32::from_bits(g), f32::from_bits(w));
            let tol = if (i / 4) % OUT == 1 { 2.0 / 256.0 } else { 0.0 } + 1e-6;
            (g - w).abs() <= tol && g.is_nan() == w.is_nan()
        },
        |i| {
            format!(
                "lane {} {} component {}",
                i / (4 * OUT),
                what[(i / 4) % OUT],
                i % 4
            )
        },
    );
}
