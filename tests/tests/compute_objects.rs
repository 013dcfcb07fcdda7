//! Compute objects through the loader: the pipeline cache (header, serialization round trip,
//! merge, hits), dynamic descriptor offsets, secondary command buffers, timestamps, events,
//! semaphores, a runaway shader (device lost, then a new device works) and a multi-threaded
//! stress test.

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::storage_buffer_layout;

#[test]
fn pipeline_cache_header_round_trip_and_merge() {
    let mut c = Ctx::new();
    let code = spirv("saxpy", None);
    // SAFETY: valid create infos; objects destroyed below.
    unsafe {
        let cache = c
            .dev
            .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
            .unwrap();
        let ty = vec![vk::DescriptorType::STORAGE_BUFFER; 2];
        c.kernel_with(&code, &ty, 8, &[], cache).unwrap();
        let data = c.dev.get_pipeline_cache_data(cache).unwrap();
        let props = c.h.instance.get_physical_device_properties(c.pd);
        let word = |i: usize| u32::from_le_bytes(data[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(word(0), 32, "headerSize");
        assert_eq!(word(1), 1, "VK_PIPELINE_CACHE_HEADER_VERSION_ONE");
        assert_eq!(word(2), props.vendor_id);
        assert_eq!(word(3), props.device_id);
        assert_eq!(&data[16..32], &props.pipeline_cache_uuid[..]);
        assert!(data.len() > 64, "the compiled kernel is in the data");
        // A second cache made from the data serializes to the same bytes.
        let again = c
            .dev
            .create_pipeline_cache(
                &vk::PipelineCacheCreateInfo::default().initial_data(&data),
                None,
            )
            .unwrap();
        assert_eq!(c.dev.get_pipeline_cache_data(again).unwrap(), data);
        // Merging into an empty cache gives the same content too.
        let empty = c
            .dev
            .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
            .unwrap();
        c.dev.merge_pipeline_caches(empty, &[again]).unwrap();
        assert_eq!(c.dev.get_pipeline_cache_data(empty).unwrap(), data);
        // Data with a wrong UUID is ignored, not an error.
        let mut bad = data.clone();
        bad[16] ^= 0xFF;
        let ignored = c
            .dev
            .create_pipeline_cache(
                &vk::PipelineCacheCreateInfo::default().initial_data(&bad),
                None,
            )
            .unwrap();
        assert_eq!(c.dev.get_pipeline_cache_data(ignored).unwrap().len(), 36);
        // A pipeline from the loaded cache computes the same thing.
        let k = c.kernel_with(&code, &ty, 8, &[], again).unwrap();
        let n = 64usize;
        let x = c.buffer(n as u64 * 4);
        let y = c.buffer(n as u64 * 4);
        c.buf(x).write_f32s(&vec![2.0; n]);
        c.bind(k, &[x, y]);
        let mut pc = 3.0f32.to_le_bytes().to_vec();
        pc.extend((n as u32).to_le_bytes());
        c.run(|dev, cb| {
            c.bind_kernel(cb, k);
            dev.cmd_push_constants(cb, c.k(k).layout, vk::ShaderStageFlags::COMPUTE, 0, &pc);
            dev.cmd_dispatch(cb, 1, 1, 1);
        })
        .unwrap();
        assert_eq!(c.buf(y).read_f32s(n), vec![6.0; n]);
        for p in [cache, again, empty, ignored] {
            c.dev.destroy_pipeline_cache(p, None);
        }
    }
    c.finish();
}

const DYN: &str = "#version 450
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) buffer O { uint o[4]; };
void main() { o[gl_LocalInvocationIndex] = 100u + gl_LocalInvocationIndex; }
";

#[test]
fn dynamic_offsets_move_the_binding() {
    let mut c = Ctx::new();
    let ty = [vk::DescriptorType::STORAGE_BUFFER_DYNAMIC];
    let k = c
        .kernel_with(
            &spirv("dyn", Some(DYN)),
            &ty,
            0,
            &[],
            vk::PipelineCache::null(),
        )
        .unwrap();
    let o = c.buffer(1024);
    c.bind_typed(k, &[o], &ty);
    c.run(|dev, cb| {
        let kk = c.k(k);
        // SAFETY: recording into a live command buffer.
        unsafe {
            dev.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, kk.pipeline);
            for off in [0u32, 256, 512] {
                dev.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::COMPUTE,
                    kk.layout,
                    0,
                    &[kk.set],
                    &[off],
                );
                dev.cmd_dispatch(cb, 1, 1, 1);
            }
        }
    })
    .unwrap();
    let v = c.buf(o).read_u32s(256);
    for off in [0usize, 64, 128] {
        assert_eq!(
            &v[off..off + 4],
            &[100, 101, 102, 103],
            "offset {}",
            off * 4
        );
        assert_eq!(v[off + 4], 0, "range of 16 bytes respected");
    }
    assert_eq!(v[192], 0);
    c.finish();
}

#[test]
fn timestamps_increase() {
    let mut c = Ctx::new();
    // SAFETY: valid create info; destroyed below.
    let pool = unsafe {
        c.dev.create_query_pool(
            &vk::QueryPoolCreateInfo::default()
                .query_type(vk::QueryType::TIMESTAMP)
                .query_count(3),
            None,
        )
    }
    .unwrap();
    let k = c.kernel(&spirv("prefix", None), 1, 0);
    let v = c.buffer(1024);
    c.bind(k, &[v]);
    c.run(|dev, cb| {
        // SAFETY: recording into a live command buffer.
        unsafe {
            dev.cmd_reset_query_pool(cb, pool, 0, 3);
            dev.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, pool, 0);
            c.bind_kernel(cb, k);
            dev.cmd_dispatch(cb, 1, 1, 1);
            dev.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 1);
            dev.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2);
        }
    })
    .unwrap();
    let mut ts = [0u64; 3];
    // SAFETY: live pool; results written into ts.
    unsafe {
        c.dev
            .get_query_pool_results(
                pool,
                0,
                &mut ts,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
            .unwrap();
        c.dev.destroy_query_pool(pool, None);
    }
    assert!(ts[0] > 0 && ts[0] <= ts[1] && ts[1] <= ts[2], "{ts:?}");
    c.finish();
}

#[test]
fn secondary_command_buffers_and_semaphores() {
    let mut c = Ctx::new();
    let k = c.kernel(&spirv("saxpy", None), 2, 8);
    let n = 64usize;
    let (x, y) = (c.buffer(n as u64 * 4), c.buffer(n as u64 * 4));
    c.buf(x).write_f32s(&vec![1.0; n]);
    c.bind(k, &[x, y]);
    let mut pc = 5.0f32.to_le_bytes().to_vec();
    pc.extend((n as u32).to_le_bytes());
    // SAFETY: valid objects on a live device; all waited for and freed below.
    unsafe {
        let sec = c
            .dev
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(c.cmd_pool)
                    .level(vk::CommandBufferLevel::SECONDARY)
                    .command_buffer_count(1),
            )
            .unwrap()[0];
        let inh = vk::CommandBufferInheritanceInfo::default();
        c.dev
            .begin_command_buffer(
                sec,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)
                    .inheritance_info(&inh),
            )
            .unwrap();
        c.bind_kernel(sec, k);
        c.dev
            .cmd_push_constants(sec, c.k(k).layout, vk::ShaderStageFlags::COMPUTE, 0, &pc);
        c.dev.cmd_dispatch(sec, 1, 1, 1);
        c.dev.end_command_buffer(sec).unwrap();
        // Two primaries, the second waits on a semaphore the first signals.
        let sem = c
            .dev
            .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            .unwrap();
        let prim = c
            .dev
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(c.cmd_pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(2),
            )
            .unwrap();
        for &p in &prim {
            c.dev
                .begin_command_buffer(
                    p,
                    &vk::CommandBufferBeginInfo::default()
                        .flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE),
                )
                .unwrap();
            c.dev.cmd_execute_commands(p, &[sec]);
            c.dev.end_command_buffer(p).unwrap();
        }
        let fence = c.fence();
        let sems = [sem];
        let stages = [vk::PipelineStageFlags::COMPUTE_SHADER];
        let s1 = [prim[0]];
        let s2 = [prim[1]];
        let submits = [
            vk::SubmitInfo::default()
                .command_buffers(&s1)
                .signal_semaphores(&sems),
            vk::SubmitInfo::default()
                .command_buffers(&s2)
                .wait_semaphores(&sems)
                .wait_dst_stage_mask(&stages),
        ];
        c.dev.queue_submit(c.queue, &submits, fence).unwrap();
        c.dev.wait_for_fences(&[fence], true, u64::MAX).unwrap();
        c.dev.destroy_fence(fence, None);
        c.dev.destroy_semaphore(sem, None);
        c.dev.free_command_buffers(c.cmd_pool, &prim);
        c.dev.free_command_buffers(c.cmd_pool, &[sec]);
    }
    assert_eq!(c.buf(y).read_f32s(n), vec![10.0; n]);
    c.finish();
}

#[test]
fn runaway_shader_loses_the_device_and_a_new_device_works() {
    let mut c = Ctx::new();
    let k = c.kernel(&spirv("runaway", None), 1, 0);
    let o = c.buffer(64);
    c.bind(k, &[o]);
    let r = c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: recording into a live command buffer.
        unsafe { dev.cmd_dispatch(cb, 1, 1, 1) };
    });
    assert_eq!(r, Err(vk::Result::ERROR_DEVICE_LOST));
    // The device stays lost.
    // SAFETY: a live (lost) device.
    assert_eq!(
        unsafe { c.dev.device_wait_idle() },
        Err(vk::Result::ERROR_DEVICE_LOST)
    );
    drop_lost(c);
    // A new device computes again.
    let mut c = Ctx::new();
    let k = c.kernel(&spirv("prefix", None), 1, 0);
    let v = c.buffer(1024);
    c.buf(v).write_u32s(&[1; 256]);
    c.bind(k, &[v]);
    c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: as above.
        unsafe { dev.cmd_dispatch(cb, 1, 1, 1) };
    })
    .unwrap();
    assert_eq!(c.buf(v).read_u32s(256)[255], 256);
    c.finish();
}

fn drop_lost(c: Ctx) {
    // Validation may complain about the lost device's objects; only tear down.
    c.finish_unchecked();
}

#[test]
fn threads_record_and_submit_concurrently() {
    // Four threads, each with its own instance, device, pipeline and buffers, recording and
    // submitting at the same time against the one simulated kernel and GPU.
    let code = spirv("saxpy", None);
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let code = &code;
            s.spawn(move || {
                let mut c = Ctx::new();
                let k = c.kernel(code, 2, 8);
                let x = c.buffer(256 * 4);
                let y = c.buffer(256 * 4);
                c.buf(x).write_f32s(&vec![t as f32; 256]);
                c.bind(k, &[x, y]);
                let mut pc = 1.0f32.to_le_bytes().to_vec();
                pc.extend(256u32.to_le_bytes());
                for _ in 0..5 {
                    c.run(|dev, cb| {
                        c.bind_kernel(cb, k);
                        // SAFETY: recording into a live command buffer.
                        unsafe {
                            dev.cmd_push_constants(
                                cb,
                                c.k(k).layout,
                                vk::ShaderStageFlags::COMPUTE,
                                0,
                                &pc,
                            );
                            dev.cmd_dispatch(cb, 4, 1, 1);
                        }
                    })
                    .unwrap();
                }
                assert_eq!(c.buf(y).read_f32s(256), vec![5.0 * t as f32; 256]);
                c.finish();
            });
        }
    });
}

/// Valid SPIR-V that Ferrite does not compile: 1.2 MB of function memory per invocation
/// (Ferrite's limit is 1 MiB).
const HUGE_PRIVATE_ARRAY: &str = "#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer O { uint o[]; };
void main() {
    uint big[300000];
    for (uint i = 0u; i < 300000u; i++) big[i] = i * 3u;
    o[0] = big[o[1] % 300000u];
}
";

/// A shader Ferrite cannot compile: vkCreateComputePipelines answers VK_ERROR_UNKNOWN (an
/// implementation failure; no memory ran out; the compiler's message is logged), writes
/// VK_NULL_HANDLE for that pipeline, and the device keeps working.
#[test]
fn shader_ferrite_cannot_compile_is_unknown_and_a_null_pipeline() {
    let mut c = Ctx::new();
    let code = spirv("huge_private_array", Some(HUGE_PRIVATE_ARRAY));
    // SAFETY: valid create infos on a live device; everything made here is destroyed here.
    unsafe {
        let (set_layout, layout) = storage_buffer_layout(&c.dev, 1, 0).unwrap();
        let (pipelines, e) = c
            .pipeline(&code, layout)
            .expect_err("more than 1 MiB of function memory");
        assert_eq!(e, vk::Result::ERROR_UNKNOWN);
        assert_eq!(pipelines, [vk::Pipeline::null()]);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
    }
    // The device still creates and runs pipelines.
    let k = c.kernel(&spirv("saxpy", None), 2, 8);
    let n = 64usize;
    let (x, y) = (c.buffer(n as u64 * 4), c.buffer(n as u64 * 4));
    c.buf(x).write_f32s(&vec![1.0; n]);
    c.bind(k, &[x, y]);
    let mut pc = 3.0f32.to_le_bytes().to_vec();
    pc.extend((n as u32).to_le_bytes());
    c.run(|d, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: recording into a live command buffer.
        unsafe {
            d.cmd_push_constants(cb, c.k(k).layout, vk::ShaderStageFlags::COMPUTE, 0, &pc);
            d.cmd_dispatch(cb, 1, 1, 1);
        }
    })
    .unwrap();
    assert_eq!(c.buf(y).read_f32s(n), vec![3.0; n]);
    c.finish();
}

/// A shader that declares a capability the device does not report (float atomics,
/// `AtomicFloat32AddEXT`: Ferrite has no VK_EXT_shader_atomic_float) is invalid input; the
/// answer is VK_ERROR_UNKNOWN and a null pipeline. The validation layer is off: it would
/// (rightly) report the shader.
#[test]
fn shader_with_a_capability_the_device_lacks_is_unknown() {
    let src = "#version 450
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer O { float o; };
void main() { atomicAdd(o, 1.0); }
";
    let h = ferrite_tests::icd::Harness::with_validation(false);
    let c = Ctx::with_create_info(h, vk::DeviceCreateInfo::default());
    let code = spirv_env("atomic_float", Some(src), "vulkan1.1");
    // SAFETY: valid create infos on a live device; everything made here is destroyed here.
    unsafe {
        let (set_layout, layout) = storage_buffer_layout(&c.dev, 1, 0).unwrap();
        let (pipelines, e) = c
            .pipeline(&code, layout)
            .expect_err("AtomicFloat32AddEXT is not supported");
        assert_eq!(e, vk::Result::ERROR_UNKNOWN);
        assert_eq!(pipelines, [vk::Pipeline::null()]);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
    }
    c.finish();
}
