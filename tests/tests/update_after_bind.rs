//! Update-after-bind descriptors (VK_EXT_descriptor_indexing, core 1.2), through the loader with
//! validation: a set whose bindings carry UPDATE_AFTER_BIND is written after
//! vkCmdBindDescriptorSets (while recording and after vkEndCommandBuffer), and the dispatch
//! reads what the set holds at vkQueueSubmit, for every descriptor type the feature bits name
//! (storage and uniform buffers, uniform and storage texel buffers, sampled and storage images).
//! A command buffer submitted again after another write sees that write (its batch is rebuilt),
//! and one submitted again without a write gives the same results. A binding the kernel does
//! not use is written while the command buffer is pending (UPDATE_UNUSED_WHILE_PENDING).

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::{compute_binding, Harness};

/// Every source binding reads element i of its version, a value below 10, and the output is
/// their sum with the weights 1 (s), 10 (u), 100 (ut), 1000 (st), 10000 (si), 100000 (img), so
/// the decimal digits tell which version of which descriptor the dispatch read.
const SHADER: &str = "#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer S { uint s[8]; };
layout(set = 0, binding = 1) uniform U { uvec4 u[2]; };
layout(set = 0, binding = 2) uniform usamplerBuffer ut;
layout(set = 0, binding = 3, r32ui) uniform readonly uimageBuffer st;
layout(set = 0, binding = 4) uniform texture2D si;
layout(set = 0, binding = 5) uniform sampler smp;
layout(set = 0, binding = 6, r32f) uniform readonly image2D img;
layout(set = 0, binding = 7) buffer O { uint o[8]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    ivec2 p = ivec2(int(i), 0);
    o[i] = s[i] + 10u * u[i / 4u][i % 4u] + 100u * texelFetch(ut, int(i)).x
        + 1000u * imageLoad(st, int(i)).x + 10000u * uint(texelFetch(sampler2D(si, smp), p, 0).x)
        + 100000u * uint(imageLoad(img, p).x);
}";

/// Bindings 0..=6 are sources (update-after-bind), 7 is the output, 8 is a storage buffer the
/// kernel never reads (update-after-bind and update-unused-while-pending: the validation layer
/// wants both to allow a write while pending).
const SOURCES: usize = 7;
const TYPES: [vk::DescriptorType; 9] = [
    vk::DescriptorType::STORAGE_BUFFER,
    vk::DescriptorType::UNIFORM_BUFFER,
    vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
    vk::DescriptorType::STORAGE_TEXEL_BUFFER,
    vk::DescriptorType::SAMPLED_IMAGE,
    vk::DescriptorType::SAMPLER,
    vk::DescriptorType::STORAGE_IMAGE,
    vk::DescriptorType::STORAGE_BUFFER,
    vk::DescriptorType::STORAGE_BUFFER,
];

/// The value version `v` of a source holds at element i (below 10, see [`SHADER`]).
fn value(v: u32, i: u32) -> u32 {
    (v * 3 + i) % 10
}

fn ctx() -> Ctx {
    let h = Harness::with_api_version(true, &[], vk::API_VERSION_1_2);
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default()
        .descriptor_binding_storage_buffer_update_after_bind(true)
        .descriptor_binding_uniform_buffer_update_after_bind(true)
        .descriptor_binding_uniform_texel_buffer_update_after_bind(true)
        .descriptor_binding_storage_texel_buffer_update_after_bind(true)
        .descriptor_binding_sampled_image_update_after_bind(true)
        .descriptor_binding_storage_image_update_after_bind(true)
        .descriptor_binding_update_unused_while_pending(true);
    let info = vk::DeviceCreateInfo::default().push_next(&mut v12);
    Ctx::with_create_info(h, info)
}

/// One version of every source: a buffer (storage, uniform, and both R32_UINT texel views over
/// it), an 8x1 R32_SFLOAT image (sampled and storage view) filled from a float copy of it.
struct Version {
    buffer: usize,
    texel: vk::BufferView,
    image: vk::Image,
    memory: vk::DeviceMemory,
    view: vk::ImageView,
}

fn version(c: &mut Ctx, v: u32) -> Version {
    let data: Vec<u32> = (0..8).map(|i| value(v, i)).collect();
    let buffer = c.buffer(256);
    c.buf(buffer).write_u32s(&data);
    let floats = c.buffer(32);
    c.buf(floats)
        .write_f32s(&data.iter().map(|&v| v as f32).collect::<Vec<_>>());
    let (image, memory) = bound_image(
        c,
        &vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(vk::Format::R32_SFLOAT)
            .extent(vk::Extent3D {
                width: 8,
                height: 1,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(
                vk::ImageUsageFlags::SAMPLED
                    | vk::ImageUsageFlags::STORAGE
                    | vk::ImageUsageFlags::TRANSFER_DST,
            ),
        c.mem_type,
    );
    // SAFETY: valid create infos on a live device; destroyed by `destroy_version`.
    let (texel, view) = unsafe {
        let texel = c
            .dev
            .create_buffer_view(
                &vk::BufferViewCreateInfo::default()
                    .buffer(c.buf(buffer).buffer)
                    .format(vk::Format::R32_UINT)
                    .offset(0)
                    .range(32),
                None,
            )
            .unwrap();
        let view = c
            .dev
            .create_image_view(
                &vk::ImageViewCreateInfo::default()
                    .image(image)
                    .view_type(vk::ImageViewType::TYPE_2D)
                    .format(vk::Format::R32_SFLOAT)
                    .subresource_range(color_range(1, 1)),
                None,
            )
            .unwrap();
        (texel, view)
    };
    // The image's texels from the buffer, then GENERAL for the kernel.
    c.run(|d, cb| {
        // SAFETY: recording into a live command buffer.
        unsafe {
            image_barrier(
                d,
                cb,
                image,
                color_range(1, 1),
                (
                    vk::ImageLayout::UNDEFINED,
                    vk::AccessFlags::empty(),
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                ),
                (
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    vk::AccessFlags::TRANSFER_WRITE,
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
                    width: 8,
                    height: 1,
                    depth: 1,
                });
            d.cmd_copy_buffer_to_image(
                cb,
                c.buf(floats).buffer,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[region],
            );
            image_barrier(
                d,
                cb,
                image,
                color_range(1, 1),
                (
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    vk::AccessFlags::TRANSFER_WRITE,
                    vk::PipelineStageFlags::TRANSFER,
                ),
                (
                    vk::ImageLayout::GENERAL,
                    vk::AccessFlags::SHADER_READ,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                ),
            );
        }
    })
    .unwrap();
    Version {
        buffer,
        texel,
        image,
        memory,
        view,
    }
}

fn destroy_version(c: &Ctx, v: Version) {
    // SAFETY: no pending work uses them.
    unsafe {
        c.dev.destroy_buffer_view(v.texel, None);
        c.dev.destroy_image_view(v.view, None);
        c.dev.destroy_image(v.image, None);
        c.dev.free_memory(v.memory, None);
    }
}

/// Points the source bindings in `which` at version `v` (binding 5, the sampler, always at
/// `smp`).
fn write_sources(c: &Ctx, set: vk::DescriptorSet, v: &Version, smp: vk::Sampler, which: &[u32]) {
    let buf = [vk::DescriptorBufferInfo {
        buffer: c.buf(v.buffer).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let texel = [v.texel];
    let image = [vk::DescriptorImageInfo {
        sampler: vk::Sampler::null(),
        image_view: v.view,
        image_layout: vk::ImageLayout::GENERAL,
    }];
    let sampler = [vk::DescriptorImageInfo {
        sampler: smp,
        image_view: vk::ImageView::null(),
        image_layout: vk::ImageLayout::UNDEFINED,
    }];
    let writes: Vec<_> = which
        .iter()
        .map(|&b| {
            let w = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(b)
                .descriptor_type(TYPES[b as usize]);
            match b {
                0 | 1 => w.buffer_info(&buf),
                2 | 3 => w.texel_buffer_view(&texel),
                5 => w.image_info(&sampler),
                _ => w.image_info(&image),
            }
        })
        .collect();
    // SAFETY: valid writes; the bindings are update-after-bind (or, for binding 8,
    // update-unused-while-pending), so the set may be bound in a recorded command buffer.
    unsafe { c.dev.update_descriptor_sets(&writes, &[]) };
}

/// Points storage-buffer binding `b` at the whole of buffer `buf`.
fn write_buffer(c: &Ctx, set: vk::DescriptorSet, b: u32, buf: usize) {
    let info = [vk::DescriptorBufferInfo {
        buffer: c.buf(buf).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let w = [vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(b)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .buffer_info(&info)];
    // SAFETY: a valid write to a live set.
    unsafe { c.dev.update_descriptor_sets(&w, &[]) };
}

/// Checks the output against the versions `vs[b]` each source binding should have read.
fn expect(c: &Ctx, out: usize, vs: [u32; SOURCES], what: &str) {
    let got = c.buf(out).read_u32s(8);
    // Binding 5 is the sampler: no digit of its own (weights of the other six).
    let reads = [
        (0, 1),
        (1, 10),
        (2, 100),
        (3, 1000),
        (4, 10000),
        (6, 100000),
    ];
    let want: Vec<u32> = (0..8)
        .map(|i| reads.iter().map(|&(b, w)| w * value(vs[b], i)).sum())
        .collect();
    assert_eq!(got, want, "{what}: versions by binding {vs:?}");
}

#[test]
fn descriptors_written_after_bind_are_read_at_submit() {
    let mut c = ctx();
    let versions: Vec<Version> = (0..3).map(|v| version(&mut c, v)).collect();
    let out = c.buffer(32);
    let unused = c.buffer(32);
    let uab = vk::DescriptorBindingFlags::UPDATE_AFTER_BIND;
    let flags: Vec<vk::DescriptorBindingFlags> = (0..TYPES.len())
        .map(|b| match b {
            7 => vk::DescriptorBindingFlags::empty(),
            8 => uab | vk::DescriptorBindingFlags::UPDATE_UNUSED_WHILE_PENDING,
            _ => uab,
        })
        .collect();
    let bindings: Vec<_> = TYPES
        .iter()
        .enumerate()
        .map(|(b, &ty)| compute_binding(b as u32, ty, 1))
        .collect();
    let code = spirv("update_after_bind", Some(SHADER));
    // SAFETY: valid objects on a live device; everything is destroyed at the end.
    unsafe {
        let (set_layout, layout) = set_and_pipeline_layout(
            &c,
            vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL,
            &bindings,
            Some(&flags),
        );
        let pipeline = c.pipeline(&code, layout).unwrap();
        let sizes: Vec<_> = TYPES.iter().map(|&ty| (ty, 1)).collect();
        let (pool, sets) = pool_and_sets(
            &c,
            vk::DescriptorPoolCreateFlags::UPDATE_AFTER_BIND,
            &sizes,
            &[set_layout],
            None,
        );
        let set = sets[0];
        let smp = c
            .dev
            .create_sampler(&vk::SamplerCreateInfo::default(), None)
            .unwrap();
        let all: Vec<u32> = (0..SOURCES as u32).collect();
        write_sources(&c, set, &versions[0], smp, &all);
        write_buffer(&c, set, 7, out);
        write_buffer(&c, set, 8, unused);

        // Recorded with version 0 bound; version 1 written after the bind, while recording.
        let cb = c.begin_command_buffer();
        c.dev
            .cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
        c.dev
            .cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
        write_sources(&c, set, &versions[1], smp, &all);
        c.dev.cmd_dispatch(cb, 1, 1, 1);
        c.dev.end_command_buffer(cb).unwrap();
        let fence = c.fence();
        let submit = |what: &str| {
            let cbs = [cb];
            c.dev
                .queue_submit(
                    c.queue,
                    &[vk::SubmitInfo::default().command_buffers(&cbs)],
                    fence,
                )
                .unwrap_or_else(|e| panic!("{what}: vkQueueSubmit {e}"));
        };
        let wait = || {
            c.dev.wait_for_fences(&[fence], true, u64::MAX).unwrap();
            c.dev.reset_fences(&[fence]).unwrap();
        };
        submit("written while recording");
        // Pending now: a binding the kernel does not use may be written.
        write_buffer(&c, set, 8, out);
        wait();
        expect(&c, out, [1; SOURCES], "written while recording");

        // Written after vkEndCommandBuffer: half the sources to version 2.
        write_sources(&c, set, &versions[2], smp, &[0, 2, 4]);
        c.buf(out).write_u32s(&[0; 8]);
        submit("written after the end");
        wait();
        expect(
            &c,
            out,
            [2, 1, 2, 1, 2, 1, 1],
            "written after vkEndCommandBuffer",
        );

        // No write since: the same results again.
        c.buf(out).write_u32s(&[0; 8]);
        submit("submitted again");
        wait();
        expect(&c, out, [2, 1, 2, 1, 2, 1, 1], "submitted again unchanged");

        // The other half, then everything back to version 0.
        write_sources(&c, set, &versions[2], smp, &[1, 3, 6]);
        submit("other half");
        wait();
        expect(&c, out, [2; SOURCES], "the other half written");
        write_sources(&c, set, &versions[0], smp, &all);
        submit("back to version 0");
        wait();
        expect(&c, out, [0; SOURCES], "back to version 0");

        c.dev.destroy_fence(fence, None);
        c.dev.free_command_buffers(c.cmd_pool, &[cb]);
        c.dev.destroy_sampler(smp, None);
        c.dev.destroy_descriptor_pool(pool, None);
        c.dev.destroy_pipeline(pipeline, None);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
    }
    for v in versions {
        destroy_version(&c, v);
    }
    c.finish();
}
