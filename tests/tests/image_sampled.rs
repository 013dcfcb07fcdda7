//! Sampled images end to end: texelFetch, textureLod (nearest and linear, every address mode,
//! normalized and unnormalized coordinates), textureSize and textureQueryLevels through a
//! combined image sampler, on each format reporting SAMPLED_IMAGE, LINEAR (written by the
//! host) and OPTIMAL (Y-tiled, written by a storage-image shader). The same program runs on
//! Ferrite's simulated GPU and on lavapipe (child processes); fetches, nearest samples and
//! sizes must be equal, linear samples within the filter-weight precision (Gen9 rounds
//! weights to 8 fractional bits; 2/256 of the texel range) and UNORM conversions within one
//! float ulp.

mod compute_common;

use ash::vk;
use compute_common::*;

const W: u32 = 8;
const H: u32 = 8;

/// (format, bytes per texel, name).
const FORMATS: &[(vk::Format, usize, &str)] = &[
    (vk::Format::R32G32B32A32_SFLOAT, 16, "rgba32f"),
    (vk::Format::R8G8B8A8_UNORM, 4, "rgba8"),
    (vk::Format::R32_SFLOAT, 4, "r32f"),
    // Filled with vkCmdCopyBufferToImage when OPTIMAL (they are not storage formats).
    (vk::Format::R8_UNORM, 1, "r8"),
    (vk::Format::R8G8_UNORM, 2, "rg8"),
    (vk::Format::B8G8R8A8_UNORM, 4, "bgra8"),
    (vk::Format::A2B10G10R10_UNORM_PACK32, 4, "rgb10a2"),
    (vk::Format::R16G16B16A16_UNORM, 8, "rgba16"),
    // SNORM (both most negative codes read -1.0), sRGB (decoded before filtering), 16-bit
    // UNORM. (The 5-6-5 / 5-5-5-1 formats are not compared: lavapipe samples them through
    // 8-bit UNORM, 25/31 reads 206/255, beyond the one-ulp bound of this test.)
    (vk::Format::R8G8B8A8_SNORM, 4, "rgba8sn"),
    (vk::Format::R8G8_SNORM, 2, "rg8sn"),
    (vk::Format::R16G16B16A16_SNORM, 8, "rgba16sn"),
    (vk::Format::R8G8B8A8_SRGB, 4, "srgba8"),
    (vk::Format::B8G8R8A8_SRGB, 4, "sbgra8"),
    (vk::Format::R16_UNORM, 2, "r16"),
    (vk::Format::R16G16_UNORM, 4, "rg16"),
    // Unsigned 11/11/10-bit floats: the data keeps every exponent below 15 (values in [0, 1),
    // no infinities or NaNs), which the decoders turn into f32 exactly.
    (vk::Format::B10G11R11_UFLOAT_PACK32, 4, "b10g11r11"),
];

/// UNORM, SNORM and sRGB formats: any bits are a valid texel, and the conversion to float
/// may differ in the last bit (Vulkan's precision rules).
fn is_unorm(fname: &str) -> bool {
    !fname.ends_with('f')
}

/// The formats whose OPTIMAL image a storage-image shader fills.
fn storage_filled(format: vk::Format) -> bool {
    matches!(
        format,
        vk::Format::R32G32B32A32_SFLOAT | vk::Format::R32_SFLOAT | vk::Format::R8G8B8A8_UNORM
    )
}

/// One invocation per texel: a fetch, a sample at a coordinate that goes outside [0, 1]
/// (the push constant scales it to texels for unnormalized samplers), the size and levels.
const SHADER: &str = "
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform sampler2D tex;
layout(set = 0, binding = 1) buffer Out { vec4 o[]; };
layout(push_constant) uniform P { float scale; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    ivec2 p = ivec2(i % 8u, i / 8u);
    vec2 uv = ((vec2(p) + vec2(0.3, 0.55)) / 6.0 - 0.2) * scale;
    o[3u * i] = texelFetch(tex, p, 0);
    o[3u * i + 1u] = textureLod(tex, uv, 0.0);
    o[3u * i + 2u] = vec4(textureSize(tex, 0), textureQueryLevels(tex), 0.0);
}
";

/// Writes the texel data into an OPTIMAL (Y-tiled) image with imageStore.
fn fill_shader(format: vk::Format) -> String {
    let (layout, value) = match format {
        vk::Format::R32G32B32A32_SFLOAT => (
            "rgba32f",
            "uintBitsToFloat(uvec4(d[4u * i], d[4u * i + 1u], d[4u * i + 2u], d[4u * i + 3u]))",
        ),
        vk::Format::R32_SFLOAT => ("r32f", "vec4(uintBitsToFloat(d[i]))"),
        _ => ("rgba8", "unpackUnorm4x8(d[i])"),
    };
    format!(
        "
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, {layout}) uniform writeonly image2D img;
layout(set = 0, binding = 1) buffer In {{ uint d[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    imageStore(img, ivec2(i % 8u, i / 8u), {value});
}}
"
    )
}

fn fill_optimal(c: &mut Ctx, img: &Img, format: vk::Format, bpt: usize, seed: u32) {
    let words = texel_words(format, bpt, seed);
    let data = c.buffer(words.len() as u64 * 4);
    c.buf(data).write_u32s(&words);
    let types = [
        vk::DescriptorType::STORAGE_IMAGE,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let code = spirv("image_sampled_fill", Some(&fill_shader(format)));
    let k = c
        .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
        .unwrap();
    write_image_and_buffer(c, k, vk::DescriptorType::STORAGE_IMAGE, img.view, data);
    // SAFETY: valid commands on live objects; the submission is waited for.
    unsafe {
        c.run(|d, cb| {
            image_barrier(
                d,
                cb,
                img.image,
                color_range(1, 1),
                (
                    vk::ImageLayout::UNDEFINED,
                    vk::AccessFlags::empty(),
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                ),
                (
                    vk::ImageLayout::GENERAL,
                    vk::AccessFlags::SHADER_WRITE,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                ),
            );
            c.bind_kernel(cb, k);
            dispatch(c, cb, 1, 1);
        })
        .unwrap();
    }
}

/// Writes the texel data into an OPTIMAL (Y-tiled) image with vkCmdCopyBufferToImage.
fn copy_optimal(c: &mut Ctx, img: &Img, format: vk::Format, bpt: usize, seed: u32) {
    let words = texel_words(format, bpt, seed);
    let data = c.buffer(words.len() as u64 * 4);
    c.buf(data).write_u32s(&words);
    let region = vk::BufferImageCopy {
        buffer_offset: 0,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: vk::Extent3D {
            width: W,
            height: H,
            depth: 1,
        },
    };
    upload_to_image(c, data, img.image, color_range(1, 1), &[region]);
}

/// The same through a separate texture and sampler (OpSampledImage): the sampler sits at
/// binding 2, so the sampler table's entry 2 must be used.
const SEPARATE: &str = "
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform texture2D t;
layout(set = 0, binding = 1) buffer Out { vec4 o[]; };
layout(set = 0, binding = 2) uniform sampler s;
layout(push_constant) uniform P { float scale; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    ivec2 p = ivec2(i % 8u, i / 8u);
    vec2 uv = ((vec2(p) + vec2(0.3, 0.55)) / 6.0 - 0.2) * scale;
    o[3u * i] = texelFetch(sampler2D(t, s), p, 0);
    o[3u * i + 1u] = textureLod(sampler2D(t, s), uv, 0.0);
    o[3u * i + 2u] = vec4(textureSize(sampler2D(t, s), 0), textureQueryLevels(sampler2D(t, s)), 0.0);
}
";

type Img = ImageAndView;

/// The seeded texel data of an image, as dwords (float formats: floats in [0, 1)).
fn texel_words(format: vk::Format, bpt: usize, seed: u32) -> Vec<u32> {
    let words = random_u32s(seed, (W * H) as usize * bpt / 4);
    if format == vk::Format::B10G11R11_UFLOAT_PACK32 {
        // R: exponent bits 10:6, G: 21:17, B: 31:27; each taken modulo 15.
        let exp15 = |w: u32, at: u32| {
            let e = (w >> at) & 31;
            (w & !(31 << at)) | ((e % 15) << at)
        };
        return words
            .iter()
            .map(|&w| exp15(exp15(exp15(w, 6), 17), 27))
            .collect();
    }
    let unorm = FORMATS.iter().any(|f| f.0 == format && is_unorm(f.2));
    if !unorm {
        words
            .iter()
            .map(|w| ((*w >> 8) as f32 / (1 << 24) as f32).to_bits())
            .collect()
    } else {
        words
    }
}

/// An 8x8 image: LINEAR ones filled through mapped memory, OPTIMAL ones left for
/// `fill_optimal` (a storage-image write of the same data).
fn create_image(
    c: &Ctx,
    format: vk::Format,
    bpt: usize,
    seed: u32,
    tiling: vk::ImageTiling,
) -> Img {
    let linear = tiling == vk::ImageTiling::LINEAR;
    let mem_type =
        c.h.memory_type(
            c.pd,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        )
        .unwrap();
    // SAFETY: valid create infos on a live device; destroyed by the caller.
    unsafe {
        let (image, memory) = bound_image(
            c,
            &vk::ImageCreateInfo::default()
                .image_type(vk::ImageType::TYPE_2D)
                .format(format)
                .extent(vk::Extent3D {
                    width: W,
                    height: H,
                    depth: 1,
                })
                .mip_levels(1)
                .array_layers(1)
                .samples(vk::SampleCountFlags::TYPE_1)
                .tiling(tiling)
                .usage(if linear {
                    vk::ImageUsageFlags::SAMPLED
                } else {
                    vk::ImageUsageFlags::SAMPLED
                        | if storage_filled(format) {
                            vk::ImageUsageFlags::STORAGE
                        } else {
                            vk::ImageUsageFlags::TRANSFER_DST
                        }
                })
                .initial_layout(if linear {
                    vk::ImageLayout::PREINITIALIZED
                } else {
                    vk::ImageLayout::UNDEFINED
                }),
            mem_type,
        );
        if linear {
            let ptr: *mut u8 = c
                .dev
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .unwrap()
                .cast();
            let l = c.dev.get_image_subresource_layout(
                image,
                vk::ImageSubresource {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: 0,
                    array_layer: 0,
                },
            );
            let bytes: Vec<u8> = texel_words(format, bpt, seed)
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            let row = W as usize * bpt;
            for y in 0..H as usize {
                let at = l.offset as usize + y * l.row_pitch as usize;
                std::ptr::copy_nonoverlapping(bytes[y * row..].as_ptr(), ptr.add(at), row);
            }
            c.dev.unmap_memory(memory);
        }
        let view = color_view(
            c,
            image,
            vk::ImageViewType::TYPE_2D,
            format,
            color_range(1, 1),
        );
        Img {
            image,
            memory,
            view,
        }
    }
}

/// The samplers of the cases: (name, create info, push-constant scale).
fn samplers() -> Vec<(String, vk::SamplerCreateInfo<'static>, f32)> {
    let mut v = Vec::new();
    let modes = [
        ("repeat", vk::SamplerAddressMode::REPEAT),
        ("mirror", vk::SamplerAddressMode::MIRRORED_REPEAT),
        ("edge", vk::SamplerAddressMode::CLAMP_TO_EDGE),
        ("border", vk::SamplerAddressMode::CLAMP_TO_BORDER),
    ];
    let filters = [
        ("nearest", vk::Filter::NEAREST),
        ("linear", vk::Filter::LINEAR),
    ];
    for (fname, f) in filters {
        for (mname, m) in modes {
            let info = vk::SamplerCreateInfo::default()
                .mag_filter(f)
                .min_filter(f)
                .address_mode_u(m)
                .address_mode_v(m)
                .address_mode_w(m)
                .border_color(vk::BorderColor::FLOAT_OPAQUE_WHITE);
            v.push((format!("{fname}_{mname}"), info, 1.0));
        }
        let unnorm = vk::SamplerCreateInfo::default()
            .mag_filter(f)
            .min_filter(f)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .unnormalized_coordinates(true);
        v.push((format!("{fname}_unnormalized"), unnorm, W as f32));
    }
    v
}

fn run_cases() -> Results {
    let mut r = Results::new();
    let mut c = Ctx::new();
    let code = spirv("image_sampled", Some(SHADER));
    let types = [
        vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let k = c
        .kernel_with(&code, &types, 4, &[], vk::PipelineCache::null())
        .unwrap();
    let code2 = spirv("image_sampled_separate", Some(SEPARATE));
    let types2 = [
        vk::DescriptorType::SAMPLED_IMAGE,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::SAMPLER,
    ];
    let k2 = c
        .kernel_with(&code2, &types2, 4, &[], vk::PipelineCache::null())
        .unwrap();
    let n = (W * H) as usize * 3 * 4;
    let out = zeroed(&mut c, n);
    let tilings = [
        ("linear", vk::ImageTiling::LINEAR),
        ("optimal", vk::ImageTiling::OPTIMAL),
    ];
    for ((fi, &(format, bpt, fname)), (tname, tiling)) in FORMATS
        .iter()
        .enumerate()
        .flat_map(|f| tilings.map(|t| (f, t)))
    {
        let seed = 31 + fi as u32;
        let img = create_image(&c, format, bpt, seed, tiling);
        let linear = tiling == vk::ImageTiling::LINEAR;
        if !linear {
            if storage_filled(format) {
                fill_optimal(&mut c, &img, format, bpt, seed);
            } else {
                copy_optimal(&mut c, &img, format, bpt, seed);
            }
        }
        for (si, (sname, info, scale)) in samplers().into_iter().enumerate() {
            // The first submission moves the host-written image to GENERAL.
            let old = if si == 0 && linear {
                vk::ImageLayout::PREINITIALIZED
            } else {
                vk::ImageLayout::GENERAL
            };
            // SAFETY: valid objects on a live device; the sampler is destroyed after the
            // submission completed.
            unsafe {
                let sampler = c.dev.create_sampler(&info, None).unwrap();
                let ii = [vk::DescriptorImageInfo {
                    sampler,
                    image_view: img.view,
                    image_layout: vk::ImageLayout::GENERAL,
                }];
                let bi = [vk::DescriptorBufferInfo {
                    buffer: c.buf(out).buffer,
                    offset: 0,
                    range: vk::WHOLE_SIZE,
                }];
                let w = [
                    vk::WriteDescriptorSet::default()
                        .dst_set(c.k(k).set)
                        .dst_binding(0)
                        .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                        .image_info(&ii),
                    vk::WriteDescriptorSet::default()
                        .dst_set(c.k(k).set)
                        .dst_binding(1)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(&bi),
                ];
                c.dev.update_descriptor_sets(&w, &[]);
                c.run(|d, cb| {
                    image_barrier(
                        d,
                        cb,
                        img.image,
                        color_range(1, 1),
                        (
                            old,
                            vk::AccessFlags::HOST_WRITE,
                            vk::PipelineStageFlags::HOST,
                        ),
                        (
                            vk::ImageLayout::GENERAL,
                            vk::AccessFlags::SHADER_READ,
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                        ),
                    );
                    c.bind_kernel(cb, k);
                    push(&c, cb, k, &scale.to_le_bytes());
                    dispatch(&c, cb, 1, 1);
                })
                .unwrap();
                r.insert(format!("{fname}_{tname}_{sname}"), c.buf(out).read_u32s(n));
                if sname == "linear_mirror" {
                    let ti = [vk::DescriptorImageInfo {
                        sampler: vk::Sampler::null(),
                        image_view: img.view,
                        image_layout: vk::ImageLayout::GENERAL,
                    }];
                    let si = [vk::DescriptorImageInfo {
                        sampler,
                        image_view: vk::ImageView::null(),
                        image_layout: vk::ImageLayout::UNDEFINED,
                    }];
                    let w = [
                        vk::WriteDescriptorSet::default()
                            .dst_set(c.k(k2).set)
                            .dst_binding(0)
                            .descriptor_type(vk::DescriptorType::SAMPLED_IMAGE)
                            .image_info(&ti),
                        vk::WriteDescriptorSet::default()
                            .dst_set(c.k(k2).set)
                            .dst_binding(1)
                            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                            .buffer_info(&bi),
                        vk::WriteDescriptorSet::default()
                            .dst_set(c.k(k2).set)
                            .dst_binding(2)
                            .descriptor_type(vk::DescriptorType::SAMPLER)
                            .image_info(&si),
                    ];
                    c.dev.update_descriptor_sets(&w, &[]);
                    c.run(|_, cb| {
                        c.bind_kernel(cb, k2);
                        push(&c, cb, k2, &scale.to_le_bytes());
                        dispatch(&c, cb, 1, 1);
                    })
                    .unwrap();
                    r.insert(
                        format!("{fname}_{tname}_{sname}_separate"),
                        c.buf(out).read_u32s(n),
                    );
                }
                c.dev.destroy_sampler(sampler, None);
            }
        }
        img.destroy(&c);
    }
    c.finish();
    r
}

#[test]
#[ignore = "runs in the child processes of sampled_images_match_lavapipe"]
fn child_runs_sampled_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_cases());
}

#[test]
fn sampled_images_match_lavapipe() {
    // Word i of a result: texel i / 12, vec4 (i / 4) % 3 (0 fetch, 1 sample, 2 size), component.
    let what = |i: usize| {
        format!(
            "texel {}, {}",
            i / 12,
            ["fetch", "sample", "size"][(i / 4) % 3]
        )
    };
    compare_with_lavapipe(
        "child_runs_sampled_cases",
        FORMATS.len() * 2 * 11,
        |name, i, g, w| {
            // FORMAT_TILING_FILTER_MODE: only linear filtering gets the weight tolerance.
            let linear = name.split('_').nth(2) == Some("linear");
            let sample = (i / 4) % 3 == 1;
            let (gf, wf) = (f32::from_bits(g), f32::from_bits(w));
            let size = (i / 4) % 3 == 2;
            // UNORM-to-float conversion may differ in the last bit (Vulkan's precision rules).
            let unorm = !size && is_unorm(name.split('_').next().unwrap_or(""));
            // sRGB: lavapipe decodes with an approximation (code 229 reads 0.78243 there,
            // 0.78351 by the spec's transfer function, which Ferrite's sampler computes); 2e-3
            // stays below half the step between neighbouring codes wherever that step is
            // larger than it, so a wrong code is still caught above the dark end.
            let srgb = name.starts_with('s');
            if linear && sample {
                (gf - wf).abs() <= 2.0 / 256.0 + 1e-6
            } else if srgb && !size {
                (gf - wf).abs() <= 2e-3
            } else if unorm {
                (gf - wf).abs() <= 1e-6
            } else {
                g == w
            }
        },
        what,
    );
}
