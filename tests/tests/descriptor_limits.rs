//! Image, sampler and texel-buffer limits and the buffer offset alignments at the values
//! Ferrite reports (docs/limits.md), through the loader with validation on the simulated GPU:
//! one shader with maxPerStageDescriptorSamplers separate samplers, maxPerStageDescriptor-
//! SampledImages sampled images and maxPerStageDescriptorStorageImages storage images (every
//! binding-table entry; the last sampler's index is past the message's 4-bit field), reading
//! the last of each; maxSamplerAllocationCount samplers alive at once; storage buffers bound
//! at minStorageBufferOffsetAlignment offsets and texel-buffer views at
//! minTexelBufferOffsetAlignment offsets, read, written and sized, with their neighbours
//! untouched.

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::compute_binding;

fn limits(c: &Ctx) -> vk::PhysicalDeviceLimits {
    // SAFETY: live instance and physical device.
    unsafe { c.h.instance.get_physical_device_properties(c.pd) }.limits
}

/// A set layout of (binding, type, count) rows and a pipeline layout of that set.
fn layout(
    c: &Ctx,
    rows: &[(u32, vk::DescriptorType, u32)],
) -> (vk::DescriptorSetLayout, vk::PipelineLayout) {
    let bindings: Vec<_> = rows
        .iter()
        .map(|&(b, ty, n)| compute_binding(b, ty, n))
        .collect();
    set_and_pipeline_layout(
        c,
        vk::DescriptorSetLayoutCreateFlags::empty(),
        &bindings,
        None,
    )
}

/// A 4x4 image of `format` and `usage` (plus TRANSFER_DST), cleared to `value` in every
/// channel and left in GENERAL layout, and its view; the caller destroys the three.
fn cleared_image(
    c: &Ctx,
    format: vk::Format,
    usage: vk::ImageUsageFlags,
    value: vk::ClearColorValue,
) -> (vk::Image, vk::DeviceMemory, vk::ImageView) {
    let (image, memory) = bound_image(
        c,
        &vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D {
                width: 4,
                height: 4,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage | vk::ImageUsageFlags::TRANSFER_DST),
        c.mem_type,
    );
    let range = color_range(1, 1);
    c.run(|d, cb| {
        // SAFETY: recording into a live command buffer with a live image.
        unsafe {
            image_barrier(
                d,
                cb,
                image,
                range,
                (
                    vk::ImageLayout::UNDEFINED,
                    vk::AccessFlags::empty(),
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                ),
                (
                    vk::ImageLayout::GENERAL,
                    vk::AccessFlags::TRANSFER_WRITE,
                    vk::PipelineStageFlags::TRANSFER,
                ),
            );
            d.cmd_clear_color_image(cb, image, vk::ImageLayout::GENERAL, &value, &[range]);
            image_barrier(
                d,
                cb,
                image,
                range,
                (
                    vk::ImageLayout::GENERAL,
                    vk::AccessFlags::TRANSFER_WRITE,
                    vk::PipelineStageFlags::TRANSFER,
                ),
                (
                    vk::ImageLayout::GENERAL,
                    vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                ),
            );
        }
    })
    .unwrap();
    // SAFETY: a valid create info for a live image.
    let view = unsafe {
        c.dev.create_image_view(
            &vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(format)
                .subresource_range(range),
            None,
        )
    }
    .unwrap();
    (image, memory, view)
}

fn sampler(c: &Ctx, mode: vk::SamplerAddressMode) -> vk::Sampler {
    // SAFETY: a valid create info on a live device; destroyed by the caller.
    unsafe {
        c.dev.create_sampler(
            &vk::SamplerCreateInfo::default()
                .mag_filter(vk::Filter::NEAREST)
                .min_filter(vk::Filter::NEAREST)
                .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
                .address_mode_u(mode)
                .address_mode_v(mode)
                .address_mode_w(mode)
                .border_color(vk::BorderColor::FLOAT_OPAQUE_WHITE)
                .max_lod(0.0),
            None,
        )
    }
    .unwrap()
}

/// Writes `n` image descriptors of `ty` at `binding`: `all` for elements 0..n-1, `last` for
/// element n - 1 (image view and sampler; either may be null for the type).
fn write_images(
    c: &Ctx,
    set: vk::DescriptorSet,
    binding: u32,
    ty: vk::DescriptorType,
    n: u32,
    all: (vk::ImageView, vk::Sampler),
    last: (vk::ImageView, vk::Sampler),
) {
    let infos: Vec<_> = (0..n)
        .map(|k| {
            let (image_view, sampler) = if k + 1 == n { last } else { all };
            vk::DescriptorImageInfo {
                sampler,
                image_view,
                image_layout: vk::ImageLayout::GENERAL,
            }
        })
        .collect();
    let w = vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(binding)
        .descriptor_type(ty)
        .image_info(&infos);
    // SAFETY: a live set no pending command buffer uses, live views and samplers.
    unsafe { c.dev.update_descriptor_sets(&[w], &[]) };
}

#[test]
fn max_samplers_and_images_in_one_shader() {
    let mut c = Ctx::new();
    let l = limits(&c);
    let (ns, ni, nj) = (
        l.max_per_stage_descriptor_samplers,
        l.max_per_stage_descriptor_sampled_images,
        l.max_per_stage_descriptor_storage_images,
    );
    assert_eq!(
        (ns, ni, nj),
        (
            l.max_descriptor_set_samplers,
            l.max_descriptor_set_sampled_images,
            l.max_descriptor_set_storage_images
        ),
        "one stage: the per-set counts are the per-stage ones"
    );
    let src = format!(
        "#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform sampler s[{ns}];
layout(set = 0, binding = 1) uniform texture2D t[{ni}];
layout(set = 0, binding = 2, r32ui) uniform uimage2D im[{nj}];
layout(set = 0, binding = 3) buffer O {{ float o[8]; }};
void main() {{
    o[0] = textureLod(sampler2D(t[{li}], s[{ls}]), vec2(2.5, 0.5), 0.0).x;
    o[1] = textureLod(sampler2D(t[{li}], s[0]), vec2(2.5, 0.5), 0.0).x;
    o[2] = textureLod(sampler2D(t[0], s[{ls}]), vec2(2.5, 0.5), 0.0).x;
    o[3] = textureLod(sampler2D(t[0], s[0]), vec2(2.5, 0.5), 0.0).x;
    o[4] = float(imageLoad(im[{lj}], ivec2(1, 1)).x);
    o[5] = float(imageLoad(im[0], ivec2(1, 1)).x);
    imageStore(im[{lj}], ivec2(2, 3), uvec4(99u));
}}",
        li = ni - 1,
        ls = ns - 1,
        lj = nj - 1
    );
    let code = spirv("max_image_descriptors", Some(&src));
    let (set_layout, layout) = layout(
        &c,
        &[
            (0, vk::DescriptorType::SAMPLER, ns),
            (1, vk::DescriptorType::SAMPLED_IMAGE, ni),
            (2, vk::DescriptorType::STORAGE_IMAGE, nj),
            (3, vk::DescriptorType::STORAGE_BUFFER, 1),
        ],
    );
    let pipeline = c.pipeline(&code, layout).expect("vkCreateComputePipelines");
    let (pool, sets) = pool_and_sets(
        &c,
        vk::DescriptorPoolCreateFlags::empty(),
        &[
            (vk::DescriptorType::SAMPLER, ns),
            (vk::DescriptorType::SAMPLED_IMAGE, ni),
            (vk::DescriptorType::STORAGE_IMAGE, nj),
            (vk::DescriptorType::STORAGE_BUFFER, 1),
        ],
        &[set_layout],
        None,
    );
    let set = sets[0];
    let float = |v: f32| vk::ClearColorValue { float32: [v; 4] };
    let uint = |v: u32| vk::ClearColorValue { uint32: [v; 4] };
    let sampled = vk::ImageUsageFlags::SAMPLED;
    let storage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC;
    let a = cleared_image(&c, vk::Format::R32_SFLOAT, sampled, float(2.0));
    let b = cleared_image(&c, vk::Format::R32_SFLOAT, sampled, float(7.0));
    let ci = cleared_image(&c, vk::Format::R32_UINT, storage, uint(3));
    let d = cleared_image(&c, vk::Format::R32_UINT, storage, uint(11));
    let repeat = sampler(&c, vk::SamplerAddressMode::REPEAT);
    let border = sampler(&c, vk::SamplerAddressMode::CLAMP_TO_BORDER);
    let null = vk::ImageView::null();
    let nos = vk::Sampler::null();
    write_images(
        &c,
        set,
        0,
        vk::DescriptorType::SAMPLER,
        ns,
        (null, repeat),
        (null, border),
    );
    write_images(
        &c,
        set,
        1,
        vk::DescriptorType::SAMPLED_IMAGE,
        ni,
        (a.2, nos),
        (b.2, nos),
    );
    write_images(
        &c,
        set,
        2,
        vk::DescriptorType::STORAGE_IMAGE,
        nj,
        (ci.2, nos),
        (d.2, nos),
    );
    let out = zeroed(&mut c, 8);
    let bi = [vk::DescriptorBufferInfo {
        buffer: c.buf(out).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let w = vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(3)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .buffer_info(&bi);
    // SAFETY: a live set not in use.
    unsafe { c.dev.update_descriptor_sets(&[w], &[]) };
    // The stored texel comes back through a copy of the last storage image.
    let back = zeroed(&mut c, 16);
    c.run(|dv, cb| {
        // SAFETY: recording into a live command buffer with live objects.
        unsafe {
            dv.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            dv.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            dv.cmd_dispatch(cb, 1, 1, 1);
            image_barrier(
                dv,
                cb,
                d.0,
                color_range(1, 1),
                (
                    vk::ImageLayout::GENERAL,
                    vk::AccessFlags::SHADER_WRITE,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                ),
                (
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                    vk::AccessFlags::TRANSFER_READ,
                    vk::PipelineStageFlags::TRANSFER,
                ),
            );
            let region = vk::BufferImageCopy::default()
                .image_subresource(vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: 0,
                    base_array_layer: 0,
                    layer_count: 1,
                })
                .image_extent(vk::Extent3D {
                    width: 4,
                    height: 4,
                    depth: 1,
                });
            dv.cmd_copy_image_to_buffer(
                cb,
                d.0,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                c.buf(back).buffer,
                &[region],
            );
        }
    })
    .unwrap();
    let got = c.buf(out).read_f32s(6);
    let want = [1.0, 7.0, 1.0, 2.0, 11.0, 3.0];
    for (i, (g, e)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            *g, e,
            "o[{i}] with {ns} samplers, {ni} sampled images, {nj} storage images (the last of \
             each is the odd one: border sampler, image of 7.0, image of 11)"
        );
    }
    let texels = c.buf(back).read_u32s(16);
    for (k, t) in texels.iter().enumerate() {
        let want = if k == 3 * 4 + 2 { 99 } else { 11 };
        assert_eq!(
            *t,
            want,
            "texel ({}, {}) of the last storage image",
            k % 4,
            k / 4
        );
    }
    // SAFETY: nothing pending uses these (`run` waits).
    unsafe {
        c.dev.destroy_pipeline(pipeline, None);
        c.dev.destroy_descriptor_pool(pool, None);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
        c.dev.destroy_sampler(repeat, None);
        c.dev.destroy_sampler(border, None);
        for (image, memory, view) in [a, b, ci, d] {
            c.dev.destroy_image_view(view, None);
            c.dev.destroy_image(image, None);
            c.dev.free_memory(memory, None);
        }
    }
    c.finish();
}

#[test]
fn max_sampler_allocation_count_samplers_alive_at_once() {
    let c = Ctx::new();
    let n = limits(&c).max_sampler_allocation_count;
    let samplers: Vec<_> = (0..n)
        .map(|k| {
            let mode = if k % 2 == 0 {
                vk::SamplerAddressMode::REPEAT
            } else {
                vk::SamplerAddressMode::CLAMP_TO_EDGE
            };
            sampler(&c, mode)
        })
        .collect();
    assert_eq!(samplers.len(), n as usize);
    // SAFETY: live samplers of this device, used by nothing.
    unsafe {
        for s in samplers {
            c.dev.destroy_sampler(s, None);
        }
    }
    c.finish();
}

#[test]
fn storage_buffers_at_the_minimum_offset_alignment() {
    let mut c = Ctx::new();
    let align = limits(&c).min_storage_buffer_offset_alignment;
    assert!(align <= 4, "minStorageBufferOffsetAlignment {align}");
    // Three descriptors over one buffer at offsets align, 64 + 3 * align and 128 + 5 * align
    // (none of them 8-byte aligned when align is 4), each 8 words long; the shader adds its index to each word, counts with an atomic in word 0,
    // and writes each range's length.
    let src = "#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer B { uint v[]; } b[3];
layout(set = 0, binding = 1) buffer O { uint o[4]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    for (uint k = 0u; k < 3u; k++) {
        if (i > 0u) b[k].v[i] += 100u * (k + 1u) + i;
    }
    for (uint k = 0u; k < 3u; k++) {
        atomicAdd(b[k].v[0], 1u);
    }
    if (i < 3u) o[i] = uint(b[i].v.length());
}";
    let code = spirv("ssbo_alignment", Some(src));
    let ssbo = vk::DescriptorType::STORAGE_BUFFER;
    let (set_layout, layout) = layout(&c, &[(0, ssbo, 3), (1, ssbo, 1)]);
    let pipeline = c.pipeline(&code, layout).expect("vkCreateComputePipelines");
    let (pool, sets) = pool_and_sets(
        &c,
        vk::DescriptorPoolCreateFlags::empty(),
        &[(ssbo, 4)],
        &[set_layout],
        None,
    );
    let set = sets[0];
    const SEED: u32 = 0xa11c;
    let words = 64;
    let init: Vec<u32> = random_u32s(SEED, words)
        .iter()
        .map(|w| w % 10_000)
        .collect();
    let buf = c.buffer(4 * words as u64);
    c.buf(buf).write_u32s(&init);
    let out = zeroed(&mut c, 4);
    let offsets = [align, 64 + 3 * align, 128 + 5 * align];
    let infos: Vec<_> = offsets
        .iter()
        .map(|&offset| vk::DescriptorBufferInfo {
            buffer: c.buf(buf).buffer,
            offset,
            range: 32,
        })
        .collect();
    let oi = [vk::DescriptorBufferInfo {
        buffer: c.buf(out).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let w = [
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(ssbo)
            .buffer_info(&infos),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(1)
            .descriptor_type(ssbo)
            .buffer_info(&oi),
    ];
    // SAFETY: a live set not in use.
    unsafe { c.dev.update_descriptor_sets(&w, &[]) };
    let mut want = init.clone();
    let word = |k: usize, i: usize| offsets[k] as usize / 4 + i;
    for k in 0..3 {
        for i in 1..8 {
            want[word(k, i)] = want[word(k, i)].wrapping_add(100 * (k as u32 + 1) + i as u32);
        }
    }
    for k in 0..3 {
        want[word(k, 0)] += 8;
    }
    c.run(|d, cb| {
        // SAFETY: recording into a live command buffer with live objects.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            d.cmd_dispatch(cb, 1, 1, 1);
        }
    })
    .unwrap();
    assert_eq!(
        c.buf(out).read_u32s(3),
        vec![8, 8, 8],
        "length() of each range"
    );
    let got = c.buf(buf).read_u32s(words);
    for (w, (g, e)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g, e,
            "word {w} (ranges at byte offsets {offsets:?}; seed {SEED})"
        );
    }
    // SAFETY: nothing pending uses these (`run` waits).
    unsafe {
        c.dev.destroy_pipeline(pipeline, None);
        c.dev.destroy_descriptor_pool(pool, None);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
    }
    c.finish();
}

#[test]
fn texel_buffers_at_the_minimum_offset_alignment() {
    let mut c = Ctx::new();
    let align = limits(&c).min_texel_buffer_offset_alignment;
    assert!(align <= 16, "minTexelBufferOffsetAlignment {align}");
    // A uniform texel view (R32_UINT, 8 texels) at byte `align` and a storage texel view
    // (R32G32B32A32_UINT, 2 texels) at byte 5 * align of one buffer: the shader copies the
    // uniform texels into the storage view's dwords (reversed) and writes both sizes.
    let src = "#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) uniform usamplerBuffer u;
layout(set = 0, binding = 1, rgba32ui) uniform uimageBuffer s;
layout(set = 0, binding = 2) buffer O { uint o[10]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    o[i] = texelFetch(u, int(i)).x;
    if (i < 2u) {
        uvec4 v = uvec4(texelFetch(u, int(7u - 4u * i)).x, texelFetch(u, int(6u - 4u * i)).x,
                        texelFetch(u, int(5u - 4u * i)).x, texelFetch(u, int(4u - 4u * i)).x);
        imageStore(s, int(i), v + uvec4(1000000u));
    }
    if (i == 0u) {
        o[8] = uint(textureSize(u));
        o[9] = uint(imageSize(s));
    }
}";
    let code = spirv("texel_alignment", Some(src));
    let (set_layout, layout) = layout(
        &c,
        &[
            (0, vk::DescriptorType::UNIFORM_TEXEL_BUFFER, 1),
            (1, vk::DescriptorType::STORAGE_TEXEL_BUFFER, 1),
            (2, vk::DescriptorType::STORAGE_BUFFER, 1),
        ],
    );
    let pipeline = c.pipeline(&code, layout).expect("vkCreateComputePipelines");
    let (pool, sets) = pool_and_sets(
        &c,
        vk::DescriptorPoolCreateFlags::empty(),
        &[
            (vk::DescriptorType::UNIFORM_TEXEL_BUFFER, 1),
            (vk::DescriptorType::STORAGE_TEXEL_BUFFER, 1),
            (vk::DescriptorType::STORAGE_BUFFER, 1),
        ],
        &[set_layout],
        None,
    );
    let set = sets[0];
    const SEED: u32 = 0x7e1a;
    let words = 64usize;
    let init: Vec<u32> = random_u32s(SEED, words)
        .iter()
        .map(|w| w % 1_000_000)
        .collect();
    let (buffer, memory) = texel_buffer(&c, &init);
    let view = |format, offset, range| {
        // SAFETY: a valid create info for a live buffer; destroyed at the end.
        unsafe {
            c.dev.create_buffer_view(
                &vk::BufferViewCreateInfo::default()
                    .buffer(buffer)
                    .format(format)
                    .offset(offset)
                    .range(range),
                None,
            )
        }
        .unwrap()
    };
    let uv = view(vk::Format::R32_UINT, align, 32);
    let sv = view(vk::Format::R32G32B32A32_UINT, 5 * align, 32);
    let out = zeroed(&mut c, 10);
    let (uvs, svs) = ([uv], [sv]);
    let oi = [vk::DescriptorBufferInfo {
        buffer: c.buf(out).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let w = [
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::UNIFORM_TEXEL_BUFFER)
            .texel_buffer_view(&uvs),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(1)
            .descriptor_type(vk::DescriptorType::STORAGE_TEXEL_BUFFER)
            .texel_buffer_view(&svs),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(2)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&oi),
    ];
    // SAFETY: a live set not in use, live views and buffer.
    unsafe { c.dev.update_descriptor_sets(&w, &[]) };
    c.run(|d, cb| {
        // SAFETY: recording into a live command buffer with live objects.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            d.cmd_dispatch(cb, 1, 1, 1);
        }
    })
    .unwrap();
    let a = align as usize / 4;
    let got = c.buf(out).read_u32s(10);
    for i in 0..8 {
        assert_eq!(
            got[i],
            init[a + i],
            "texel {i} of the view at byte {align} (seed {SEED})"
        );
    }
    assert_eq!(got[8..], [8, 2], "textureSize and imageSize");
    let mut want = init.clone();
    for k in 0..8 {
        want[5 * a + k] = init[a + 7 - k] + 1_000_000;
    }
    let after = read_texels(&c, memory, words);
    for (w, (g, e)) in after.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            e,
            "word {w}: the storage view at byte {} holds 8 dwords (seed {SEED})",
            5 * align
        );
    }
    // SAFETY: nothing pending uses these (`run` waits).
    unsafe {
        c.dev.destroy_pipeline(pipeline, None);
        c.dev.destroy_descriptor_pool(pool, None);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
        c.dev.destroy_buffer_view(uv, None);
        c.dev.destroy_buffer_view(sv, None);
        c.dev.destroy_buffer(buffer, None);
        c.dev.free_memory(memory, None);
    }
    c.finish();
}

/// The feature and property bits docs/limits.md's "Descriptor features and properties outside
/// the table" names, as the device reports them.
fn reported_bits(c: &Ctx) -> Vec<(&'static str, bool)> {
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut v12)
        .push_next(&mut v13);
    // SAFETY: live instance and physical device, a valid chain.
    unsafe { c.h.instance.get_physical_device_features2(c.pd, &mut f2) };
    let f = f2.features;
    let mut dp = vk::PhysicalDeviceDescriptorIndexingProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut dp);
    // SAFETY: as above.
    unsafe { c.h.instance.get_physical_device_properties2(c.pd, &mut p2) };
    let b = |x: vk::Bool32| x == vk::TRUE;
    vec![
        (
            "shaderStorageBufferArrayDynamicIndexing",
            b(f.shader_storage_buffer_array_dynamic_indexing),
        ),
        (
            "shaderUniformBufferArrayDynamicIndexing",
            b(f.shader_uniform_buffer_array_dynamic_indexing),
        ),
        (
            "shaderSampledImageArrayDynamicIndexing",
            b(f.shader_sampled_image_array_dynamic_indexing),
        ),
        (
            "shaderStorageImageArrayDynamicIndexing",
            b(f.shader_storage_image_array_dynamic_indexing),
        ),
        ("descriptorIndexing", b(v12.descriptor_indexing)),
        (
            "shaderUniformTexelBufferArrayDynamicIndexing",
            b(v12.shader_uniform_texel_buffer_array_dynamic_indexing),
        ),
        (
            "shaderStorageTexelBufferArrayDynamicIndexing",
            b(v12.shader_storage_texel_buffer_array_dynamic_indexing),
        ),
        (
            "shaderUniformBufferArrayNonUniformIndexing",
            b(v12.shader_uniform_buffer_array_non_uniform_indexing),
        ),
        (
            "shaderSampledImageArrayNonUniformIndexing",
            b(v12.shader_sampled_image_array_non_uniform_indexing),
        ),
        (
            "shaderStorageBufferArrayNonUniformIndexing",
            b(v12.shader_storage_buffer_array_non_uniform_indexing),
        ),
        (
            "shaderStorageImageArrayNonUniformIndexing",
            b(v12.shader_storage_image_array_non_uniform_indexing),
        ),
        (
            "shaderUniformTexelBufferArrayNonUniformIndexing",
            b(v12.shader_uniform_texel_buffer_array_non_uniform_indexing),
        ),
        (
            "shaderStorageTexelBufferArrayNonUniformIndexing",
            b(v12.shader_storage_texel_buffer_array_non_uniform_indexing),
        ),
        (
            "descriptorBindingUniformBufferUpdateAfterBind",
            b(v12.descriptor_binding_uniform_buffer_update_after_bind),
        ),
        (
            "descriptorBindingSampledImageUpdateAfterBind",
            b(v12.descriptor_binding_sampled_image_update_after_bind),
        ),
        (
            "descriptorBindingStorageImageUpdateAfterBind",
            b(v12.descriptor_binding_storage_image_update_after_bind),
        ),
        (
            "descriptorBindingStorageBufferUpdateAfterBind",
            b(v12.descriptor_binding_storage_buffer_update_after_bind),
        ),
        (
            "descriptorBindingUniformTexelBufferUpdateAfterBind",
            b(v12.descriptor_binding_uniform_texel_buffer_update_after_bind),
        ),
        (
            "descriptorBindingStorageTexelBufferUpdateAfterBind",
            b(v12.descriptor_binding_storage_texel_buffer_update_after_bind),
        ),
        (
            "descriptorBindingInlineUniformBlockUpdateAfterBind",
            b(v13.descriptor_binding_inline_uniform_block_update_after_bind),
        ),
        (
            "descriptorBindingUpdateUnusedWhilePending",
            b(v12.descriptor_binding_update_unused_while_pending),
        ),
        (
            "descriptorBindingPartiallyBound",
            b(v12.descriptor_binding_partially_bound),
        ),
        (
            "descriptorBindingVariableDescriptorCount",
            b(v12.descriptor_binding_variable_descriptor_count),
        ),
        ("runtimeDescriptorArray", b(v12.runtime_descriptor_array)),
        (
            "uniformBufferStandardLayout",
            b(v12.uniform_buffer_standard_layout),
        ),
        ("scalarBlockLayout", b(v12.scalar_block_layout)),
        ("bufferDeviceAddress", b(v12.buffer_device_address)),
        (
            "bufferDeviceAddressCaptureReplay",
            b(v12.buffer_device_address_capture_replay),
        ),
        (
            "bufferDeviceAddressMultiDevice",
            b(v12.buffer_device_address_multi_device),
        ),
        (
            "shaderBufferInt64Atomics",
            b(v12.shader_buffer_int64_atomics),
        ),
        (
            "shaderSharedInt64Atomics",
            b(v12.shader_shared_int64_atomics),
        ),
        (
            "robustBufferAccessUpdateAfterBind",
            b(dp.robust_buffer_access_update_after_bind),
        ),
        (
            "quadDivergentImplicitLod",
            b(dp.quad_divergent_implicit_lod),
        ),
        (
            "shaderUniformBufferArrayNonUniformIndexingNative",
            b(dp.shader_uniform_buffer_array_non_uniform_indexing_native),
        ),
        (
            "shaderSampledImageArrayNonUniformIndexingNative",
            b(dp.shader_sampled_image_array_non_uniform_indexing_native),
        ),
        (
            "shaderStorageBufferArrayNonUniformIndexingNative",
            b(dp.shader_storage_buffer_array_non_uniform_indexing_native),
        ),
        (
            "shaderStorageImageArrayNonUniformIndexingNative",
            b(dp.shader_storage_image_array_non_uniform_indexing_native),
        ),
        (
            "shaderInputAttachmentArrayNonUniformIndexingNative",
            b(dp.shader_input_attachment_array_non_uniform_indexing_native),
        ),
    ]
}

/// `a{B,C}d{E,F}` -> aBdE, aBdF, aCdE, aCdF.
fn expand_braces(name: &str) -> Vec<String> {
    let Some(open) = name.find('{') else {
        return vec![name.to_string()];
    };
    let close = open
        + name[open..]
            .find('}')
            .expect("unclosed brace in docs/limits.md");
    name[open + 1..close]
        .split(',')
        .flat_map(|alt| expand_braces(&format!("{}{alt}{}", &name[..open], &name[close + 1..])))
        .collect()
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, name: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == name;
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || !name.ends_with(last) || name.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    true
}

#[test]
fn reported_features_match_docs_limits_md() {
    let h = ferrite_tests::icd::Harness::with_api_version(true, &[], vk::API_VERSION_1_3);
    let c = Ctx::with_create_info(h, vk::DeviceCreateInfo::default());
    let bits = reported_bits(&c);
    let text = std::fs::read_to_string(ferrite_tests::icd::workspace_root().join("docs/limits.md"))
        .unwrap();
    let section = text
        .split("## Descriptor features and properties outside the table")
        .nth(1)
        .expect("the features section of docs/limits.md");
    let section = section.split("\n## ").next().unwrap();
    let mut checked = 0;
    for line in section.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let want = match cells[2] {
            "true" => true,
            "false" => false,
            _ => continue,
        };
        for name in cells[1].split(", ") {
            // "descriptorIndexing (VK_EXT_descriptor_indexing)": the name before a remark.
            let name = name.split(" (").next().unwrap().trim_matches('`');
            for pattern in expand_braces(name) {
                let hits: Vec<_> = bits.iter().filter(|(n, _)| glob(&pattern, n)).collect();
                assert!(
                    !hits.is_empty(),
                    "docs/limits.md names {pattern}, which this test does not know"
                );
                for (n, on) in hits {
                    assert_eq!(*on, want, "{n}: docs/limits.md says {want}");
                    checked += 1;
                }
            }
        }
    }
    assert!(
        checked >= 30,
        "only {checked} bits checked: table not found?"
    );
    c.finish();
}
