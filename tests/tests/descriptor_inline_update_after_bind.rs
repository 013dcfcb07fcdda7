//! Inline uniform blocks written after bind (descriptorBindingInlineUniformBlockUpdateAfterBind,
//! Vulkan 1.3), through the loader with the validation layer: a block whose binding carries
//! UPDATE_AFTER_BIND is written after vkEndCommandBuffer and between vkCmdBindDescriptorSets
//! and vkCmdDispatch, and each submission reads what the block holds at vkQueueSubmit; the same
//! command buffer submitted again after another write reads the new bytes; a second block the
//! kernel never reads is written while the command buffer is pending
//! (descriptorBindingUpdateUnusedWhilePending) and changes nothing the dispatch reads.

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::{compute_binding, Harness};

const IUB: vk::DescriptorType = vk::DescriptorType::INLINE_UNIFORM_BLOCK;
const SSBO: vk::DescriptorType = vk::DescriptorType::STORAGE_BUFFER;
/// Bytes of the block the kernel reads (binding 0) and of the unused one (binding 1).
const READ_BYTES: u32 = 64;
const UNUSED_BYTES: u32 = 32;
const SEED: u32 = 0x1ab0_2026;

const SHADER: &str = "#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) uniform A { uvec4 a[4]; };
layout(set = 0, binding = 1) uniform B { uvec4 b[2]; };
layout(set = 0, binding = 2) buffer O { uint o[16]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    o[i] = a[i / 4u][i % 4u];
}";

fn ctx() -> Ctx {
    let h = Harness::with_api_version(true, &[], vk::API_VERSION_1_3);
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default()
        .descriptor_binding_update_unused_while_pending(true);
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default()
        .inline_uniform_block(true)
        .descriptor_binding_inline_uniform_block_update_after_bind(true);
    let info = vk::DeviceCreateInfo::default()
        .push_next(&mut v12)
        .push_next(&mut v13);
    Ctx::with_create_info(h, info)
}

/// Writes `words` at byte 0 of inline uniform block `binding`.
fn write_block(c: &Ctx, set: vk::DescriptorSet, binding: u32, words: &[u32]) {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut iub = vk::WriteDescriptorSetInlineUniformBlock::default().data(&bytes);
    let mut w = vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(binding)
        .descriptor_type(IUB)
        .push_next(&mut iub);
    w.descriptor_count = bytes.len() as u32;
    // SAFETY: a live set; the block's binding is UPDATE_AFTER_BIND (and, for binding 1,
    // UPDATE_UNUSED_WHILE_PENDING), so writing it with a command buffer recorded or pending
    // is allowed.
    unsafe { c.dev.update_descriptor_sets(&[w], &[]) };
}

/// Submits `cb` and waits for it; `while_pending` runs between the submission and the wait.
fn submit_and_wait(c: &Ctx, cb: vk::CommandBuffer, while_pending: impl FnOnce()) {
    let fence = c.fence();
    let cbs = [cb];
    // SAFETY: a live, executable command buffer and fence; waited for here.
    unsafe {
        c.dev
            .queue_submit(
                c.queue,
                &[vk::SubmitInfo::default().command_buffers(&cbs)],
                fence,
            )
            .unwrap();
        while_pending();
        c.dev.wait_for_fences(&[fence], true, u64::MAX).unwrap();
        c.dev.destroy_fence(fence, None);
    }
}

/// Version `v` of the block the kernel reads: 16 seeded words.
fn version(v: u32) -> Vec<u32> {
    random_u32s(SEED + v, 16)
}

fn check(c: &Ctx, out: usize, v: u32, what: &str) {
    let got = c.buf(out).read_u32s(16);
    let want = version(v);
    for (i, (g, e)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            e,
            "{what}: invocation {i} reads version {v} (seed {})",
            SEED + v
        );
    }
}

#[test]
fn inline_uniform_block_written_after_bind() {
    let mut c = ctx();
    let uab = vk::DescriptorBindingFlags::UPDATE_AFTER_BIND;
    let unused = uab | vk::DescriptorBindingFlags::UPDATE_UNUSED_WHILE_PENDING;
    let bindings = [
        compute_binding(0, IUB, READ_BYTES),
        compute_binding(1, IUB, UNUSED_BYTES),
        compute_binding(2, SSBO, 1),
    ];
    let flags = [uab, unused, vk::DescriptorBindingFlags::empty()];
    // SPIR-V for Vulkan 1.2: glslang writes LocalSizeId for 1.3, which needs maintenance4.
    let code = spirv_env("inline_uab", Some(SHADER), "vulkan1.2");
    // SAFETY: valid create infos on a live device; everything destroyed at the end.
    let (set_layout, layout, pool, set) = unsafe {
        let (set_layout, layout) = set_and_pipeline_layout(
            &c,
            vk::DescriptorSetLayoutCreateFlags::UPDATE_AFTER_BIND_POOL,
            &bindings,
            Some(&flags),
        );
        let sizes = [
            vk::DescriptorPoolSize {
                ty: IUB,
                descriptor_count: READ_BYTES + UNUSED_BYTES,
            },
            vk::DescriptorPoolSize {
                ty: SSBO,
                descriptor_count: 1,
            },
        ];
        let mut pool_iub = vk::DescriptorPoolInlineUniformBlockCreateInfo::default()
            .max_inline_uniform_block_bindings(2);
        let pool = c
            .dev
            .create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .flags(vk::DescriptorPoolCreateFlags::UPDATE_AFTER_BIND)
                    .max_sets(1)
                    .pool_sizes(&sizes)
                    .push_next(&mut pool_iub),
                None,
            )
            .unwrap();
        let set = c
            .dev
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&[set_layout]),
            )
            .unwrap()[0];
        (set_layout, layout, pool, set)
    };
    let pipeline = c.pipeline(&code, layout).expect("vkCreateComputePipelines");
    let out = zeroed(&mut c, 16);
    let bi = [vk::DescriptorBufferInfo {
        buffer: c.buf(out).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let w = vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(2)
        .descriptor_type(SSBO)
        .buffer_info(&bi);
    // SAFETY: a live set not in use.
    unsafe { c.dev.update_descriptor_sets(&[w], &[]) };
    write_block(&c, set, 0, &version(0));
    write_block(&c, set, 1, &[7; UNUSED_BYTES as usize / 4]);

    // Written between the bind and the dispatch, and again after vkEndCommandBuffer.
    let cb = c.begin_command_buffer();
    // SAFETY: recording into a live command buffer with live objects.
    unsafe {
        c.dev
            .cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
        c.dev
            .cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
        write_block(&c, set, 0, &version(1));
        c.dev.cmd_dispatch(cb, 1, 1, 1);
        c.dev.end_command_buffer(cb).unwrap();
    }
    write_block(&c, set, 0, &version(2));
    submit_and_wait(&c, cb, || {});
    check(&c, out, 2, "written after vkEndCommandBuffer");

    // The same command buffer after another write sees it.
    write_block(&c, set, 0, &version(3));
    submit_and_wait(&c, cb, || {});
    check(&c, out, 3, "written before the second submission");

    // The unused block written while pending changes nothing the kernel reads.
    c.buf(out).write_u32s(&[0; 16]);
    submit_and_wait(&c, cb, || {
        write_block(&c, set, 1, &[9; UNUSED_BYTES as usize / 4]);
    });
    check(&c, out, 3, "an unused block written while pending");

    // SAFETY: nothing pending uses these.
    unsafe {
        c.dev.free_command_buffers(c.cmd_pool, &[cb]);
        c.dev.destroy_pipeline(pipeline, None);
        c.dev.destroy_descriptor_pool(pool, None);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
    }
    c.finish();
}
