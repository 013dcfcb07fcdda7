//! Gathers with the offsets of shaderImageGatherExtended on Ferrite's simulated GPU and on
//! lavapipe: `textureGatherOffset` with a run-time offset (SPIR-V `Offset`) anywhere in
//! minTexelGatherOffset..maxTexelGatherOffset (-32..31), with constant offsets inside and
//! outside the message header's -8..7, `textureGatherOffsets` (`ConstOffsets`, one offset per
//! texel) and a run-time offset on a 2-D array, over a 32x16 RGBA8 image (REPEAT, so offsets
//! wrap) and a two-layer array (CLAMP_TO_EDGE). Gathers return texels unfiltered, so the
//! results must be equal (UNORM conversion within one float ulp).

mod compute_common;

use ash::vk;
use compute_common::*;

const W: u32 = 32;
const H: u32 = 16;
const LAYERS: u32 = 2;
const N: usize = 64;
/// vec4 results per lane.
const OUT: usize = 6;
const SEED: u32 = 0x6A7E_0FF5;

const SHADER: &str = "
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform sampler2D t;
layout(set = 0, binding = 1) buffer Out { vec4 o[]; };
struct Lane { vec4 f; ivec4 n; };
layout(set = 0, binding = 2) buffer In { Lane inp[]; };
layout(set = 0, binding = 3) uniform sampler2DArray ta;
const ivec2 offs[4] = ivec2[4](ivec2(-32, 31), ivec2(1, 2), ivec2(-5, 0), ivec2(17, -9));
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 f = inp[i].f;
    ivec2 n = inp[i].n.xy;
    o[6u * i] = textureGatherOffset(t, f.xy, n);
    o[6u * i + 1u] = textureGatherOffset(t, f.xy, n, 2);
    o[6u * i + 2u] = textureGatherOffset(t, f.xy, ivec2(-20, 13), 1);
    o[6u * i + 3u] = textureGatherOffset(t, f.xy, ivec2(3, -4), 3);
    o[6u * i + 4u] = textureGatherOffsets(t, f.xy, offs);
    o[6u * i + 5u] = textureGatherOffset(ta, f.xyz, n, 0);
}
";

/// Per lane: (u, v, layer, 0) as f32 bits and (offset x, offset y, 0, 0) as i32.
fn inputs() -> Vec<u32> {
    let w = random_u32s(SEED ^ 0xFFFF, N * 5);
    let unit = |v: u32| (v >> 8) as f32 / (1u32 << 24) as f32;
    let mut v = Vec::with_capacity(N * 8);
    for l in 0..N {
        let r = &w[5 * l..5 * l + 5];
        v.extend([
            (unit(r[0]) * 1.2 - 0.1).to_bits(),
            (unit(r[1]) * 1.2 - 0.1).to_bits(),
            ((r[2] % 3) as f32 - 0.4).to_bits(),
            0,
        ]);
        // -32..31 each.
        v.extend([(r[3] % 64) as i32 - 32, (r[4] % 64) as i32 - 32, 0, 0].map(|x| x as u32));
    }
    v
}

fn create_image(c: &mut Ctx, layers: u32, seed: u32) -> ImageAndView {
    let total = (W * H * layers) as usize;
    let data = c.buffer(total as u64 * 4);
    c.buf(data).write_u32s(&random_u32s(seed, total));
    let mem_type =
        c.h.memory_type(c.pd, vk::MemoryPropertyFlags::HOST_VISIBLE)
            .unwrap();
    let (image, memory) = bound_image(
        c,
        &vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(vk::Format::R8G8B8A8_UNORM)
            .extent(vk::Extent3D {
                width: W,
                height: H,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST)
            .initial_layout(vk::ImageLayout::UNDEFINED),
        mem_type,
    );
    let range = color_range(1, layers);
    let ty = if layers > 1 {
        vk::ImageViewType::TYPE_2D_ARRAY
    } else {
        vk::ImageViewType::TYPE_2D
    };
    let view = color_view(c, image, ty, vk::Format::R8G8B8A8_UNORM, range);
    let region = vk::BufferImageCopy {
        buffer_offset: 0,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: layers,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: vk::Extent3D {
            width: W,
            height: H,
            depth: 1,
        },
    };
    upload_to_image(c, data, image, range, &[region]);
    ImageAndView {
        image,
        memory,
        view,
    }
}

fn run_cases() -> Results {
    let mut c = Ctx::with_features(
        &vk::PhysicalDeviceFeatures::default().shader_image_gather_extended(true),
    );
    let img = create_image(&mut c, 1, SEED);
    let arr = create_image(&mut c, LAYERS, SEED + 1);
    let sampler = |c: &Ctx, mode| {
        let info = vk::SamplerCreateInfo::default()
            .address_mode_u(mode)
            .address_mode_v(mode)
            .address_mode_w(mode);
        // SAFETY: a valid create info; destroyed below.
        unsafe { c.dev.create_sampler(&info, None) }.unwrap()
    };
    let (repeat, edge) = (
        sampler(&c, vk::SamplerAddressMode::REPEAT),
        sampler(&c, vk::SamplerAddressMode::CLAMP_TO_EDGE),
    );
    let types = [
        vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
    ];
    let code = spirv("image_gather_offsets", Some(SHADER));
    let kern = c
        .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
        .unwrap();
    let input = c.buffer((N * 8 * 4) as u64);
    c.buf(input).write_u32s(&inputs());
    let out = zeroed(&mut c, N * OUT * 4);
    write_descriptors(
        &c,
        kern,
        &[
            Desc::Image(vk::DescriptorType::COMBINED_IMAGE_SAMPLER, img.view, repeat),
            Desc::Storage(out),
            Desc::Storage(input),
            Desc::Image(vk::DescriptorType::COMBINED_IMAGE_SAMPLER, arr.view, edge),
        ],
    );
    // SAFETY: the submission is waited for before the samplers are destroyed.
    unsafe {
        c.run(|d, cb| {
            c.bind_kernel(cb, kern);
            d.cmd_dispatch(cb, (N / 64) as u32, 1, 1);
            c.barrier(cb);
        })
        .unwrap();
        c.dev.destroy_sampler(repeat, None);
        c.dev.destroy_sampler(edge, None);
    }
    let mut r = Results::new();
    r.insert("gathers".into(), c.buf(out).read_u32s(N * OUT * 4));
    img.destroy(&c);
    arr.destroy(&c);
    c.finish();
    r
}

#[test]
#[ignore = "runs in the child processes of gather_offsets_match_lavapipe"]
fn child_runs_gather_offset_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_cases());
}

#[test]
fn gather_offsets_match_lavapipe() {
    let what = [
        "run-time offset",
        "run-time offset, component 2",
        "constant (-20, 13)",
        "constant (3, -4)",
        "ConstOffsets",
        "2-D array, run-time offset",
    ];
    compare_with_lavapipe(
        "child_runs_gather_offset_cases",
        1,
        |_, _, g, w| (f32::from_bits(g) - f32::from_bits(w)).abs() <= 1e-6,
        |i| {
            format!(
                "lane {} {} texel {} (seed {SEED:#x})",
                i / (4 * OUT),
                what[(i / 4) % OUT],
                i % 4
            )
        },
    );
}
