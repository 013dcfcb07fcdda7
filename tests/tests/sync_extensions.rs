//! The synchronization and dispatch extensions through the loader with validation:
//! VK_KHR_timeline_semaphore (host signal/wait/query, wait-before-signal submissions held back
//! until the host signals, timelines between submissions next to binary semaphores),
//! VK_KHR_synchronization2 (vkQueueSubmit2, barrier2, timestamp2, events2), VK_KHR_device_group
//! (vkCmdDispatchBase offsets gl_WorkGroupID), VK_KHR_maintenance1 (vkTrimCommandPool), and the
//! Vulkan 1.0 error codes of invalid handles.

mod compute_common;

use ash::vk;
use ash::vk::Handle;
use compute_common::*;
use ferrite_tests::icd::Harness;

const DEVICE_EXTS: [&std::ffi::CStr; 4] = [
    c"VK_KHR_timeline_semaphore",
    c"VK_KHR_synchronization2",
    c"VK_KHR_device_group",
    c"VK_KHR_maintenance1",
];

/// The extension function tables (the device reports Vulkan 1.0: no core aliases).
#[derive(Clone)]
struct Ext {
    tl: ash::khr::timeline_semaphore::Device,
    s2: ash::khr::synchronization2::Device,
    dg: ash::khr::device_group::Device,
    m1: ash::khr::maintenance1::Device,
    pdp2: ash::khr::get_physical_device_properties2::Instance,
}

/// A context whose device has the four extensions and their features enabled.
fn ctx() -> (Ctx, Ext) {
    let h = Harness::with_instance_extensions(
        true,
        &[
            c"VK_KHR_get_physical_device_properties2",
            c"VK_KHR_device_group_creation",
        ],
    );
    let pd = h.physical_device();
    let names: Vec<_> = DEVICE_EXTS.iter().map(|e| e.as_ptr()).collect();
    let mut timeline =
        vk::PhysicalDeviceTimelineSemaphoreFeatures::default().timeline_semaphore(true);
    let mut sync2 = vk::PhysicalDeviceSynchronization2Features::default().synchronization2(true);
    let info = vk::DeviceCreateInfo::default()
        .enabled_extension_names(&names)
        .push_next(&mut timeline)
        .push_next(&mut sync2);
    let dev = h.create_device_with(pd, info);
    let e = Ext {
        tl: ash::khr::timeline_semaphore::Device::new(&h.instance, &dev),
        s2: ash::khr::synchronization2::Device::new(&h.instance, &dev),
        dg: ash::khr::device_group::Device::new(&h.instance, &dev),
        m1: ash::khr::maintenance1::Device::new(&h.instance, &dev),
        pdp2: ash::khr::get_physical_device_properties2::Instance::new(&h.entry, &h.instance),
    };
    (Ctx::with_device(h, pd, dev), e)
}

fn timeline_semaphore(c: &Ctx, initial: u64) -> vk::Semaphore {
    let mut ty = vk::SemaphoreTypeCreateInfo::default()
        .semaphore_type(vk::SemaphoreType::TIMELINE)
        .initial_value(initial);
    // SAFETY: valid create info on a live device.
    unsafe {
        c.dev
            .create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut ty), None)
            .unwrap()
    }
}

/// o[i] = o[i] * a + x[i]: order-sensitive, so the tests see in which order dispatches ran.
const MULADD: &str = "#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint a; uint n; } pc;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(set = 0, binding = 1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) o[i] = o[i] * pc.a + x[i];
}
";

const N: usize = 1000;

/// Buffers x and o with fixed contents and the muladd kernel bound to them.
fn muladd_setup(c: &mut Ctx) -> (usize, usize, usize, Vec<u32>, Vec<u32>) {
    let x = c.buffer(4 * N as u64);
    let o = c.buffer(4 * N as u64);
    let xs: Vec<u32> = random_u32s(7, N).iter().map(|v| v % 1000).collect();
    let os: Vec<u32> = random_u32s(11, N).iter().map(|v| v % 1000).collect();
    c.buf(x).write_u32s(&xs);
    c.buf(o).write_u32s(&os);
    let k = c.kernel(&spirv("sync_muladd", Some(MULADD)), 2, 8);
    c.bind(k, &[x, o]);
    (k, x, o, xs, os)
}

/// Records one muladd with factor `a` (push constants and dispatch; the kernel is bound).
fn cmd_muladd(c: &Ctx, cb: vk::CommandBuffer, k: usize, a: u32) {
    let push: Vec<u8> = [a, N as u32].iter().flat_map(|v| v.to_le_bytes()).collect();
    // SAFETY: recording into a live command buffer.
    unsafe {
        c.dev
            .cmd_push_constants(cb, c.k(k).layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
        c.dev.cmd_dispatch(cb, N.div_ceil(64) as u32, 1, 1);
    }
}

/// A recorded command buffer doing one muladd with factor `a`.
fn record_muladd(c: &Ctx, k: usize, a: u32) -> vk::CommandBuffer {
    let cb = c.begin_command_buffer();
    c.bind_kernel(cb, k);
    cmd_muladd(c, cb, k, a);
    // SAFETY: a command buffer in the recording state; the caller submits and frees it.
    unsafe { c.dev.end_command_buffer(cb).unwrap() };
    cb
}

/// One VkSubmitInfo: command buffers, waits and signals as (semaphore, value); the value of a
/// binary semaphore is ignored.
#[derive(Default)]
struct Batch<'a> {
    cbs: &'a [vk::CommandBuffer],
    waits: &'a [(vk::Semaphore, u64)],
    signals: &'a [(vk::Semaphore, u64)],
}

/// One vkQueueSubmit of `batches`, each with its VkTimelineSemaphoreSubmitInfo (a value for
/// every semaphore) and waits at the compute stage.
fn submit(c: &Ctx, batches: &[Batch], fence: vk::Fence) -> Result<(), vk::Result> {
    let split = |v: &[(vk::Semaphore, u64)]| -> (Vec<vk::Semaphore>, Vec<u64>) {
        v.iter().copied().unzip()
    };
    let waits: Vec<_> = batches.iter().map(|b| split(b.waits)).collect();
    let signals: Vec<_> = batches.iter().map(|b| split(b.signals)).collect();
    let stages: Vec<_> = batches
        .iter()
        .map(|b| vec![vk::PipelineStageFlags::COMPUTE_SHADER; b.waits.len()])
        .collect();
    let mut timelines: Vec<_> = waits
        .iter()
        .zip(&signals)
        .map(|((_, wv), (_, sv))| {
            vk::TimelineSemaphoreSubmitInfo::default()
                .wait_semaphore_values(wv)
                .signal_semaphore_values(sv)
        })
        .collect();
    let infos: Vec<_> = timelines
        .iter_mut()
        .enumerate()
        .map(|(i, tl)| {
            vk::SubmitInfo::default()
                .wait_semaphores(&waits[i].0)
                .wait_dst_stage_mask(&stages[i])
                .command_buffers(batches[i].cbs)
                .signal_semaphores(&signals[i].0)
                .push_next(tl)
        })
        .collect();
    // SAFETY: valid submit infos of live objects on a live queue.
    unsafe { c.dev.queue_submit(c.queue, &infos, fence) }
}

/// vkWaitSemaphoresKHR for (semaphore, value) pairs: all of them, or `any`.
fn wait_values(
    tl: &ash::khr::timeline_semaphore::Device,
    pairs: &[(vk::Semaphore, u64)],
    any: bool,
    timeout: u64,
) -> Result<(), vk::Result> {
    let (sems, values): (Vec<_>, Vec<_>) = pairs.iter().copied().unzip();
    let flags = if any {
        vk::SemaphoreWaitFlags::ANY
    } else {
        vk::SemaphoreWaitFlags::empty()
    };
    let info = vk::SemaphoreWaitInfo::default()
        .flags(flags)
        .semaphores(&sems)
        .values(&values);
    // SAFETY: live semaphores of the device `tl` was made for.
    unsafe { tl.wait_semaphores(&info, timeout) }
}

/// vkSignalSemaphoreKHR from the host.
fn signal(tl: &ash::khr::timeline_semaphore::Device, sem: vk::Semaphore, value: u64) {
    let info = vk::SemaphoreSignalInfo::default()
        .semaphore(sem)
        .value(value);
    // SAFETY: a live timeline semaphore of the device `tl` was made for.
    unsafe { tl.signal_semaphore(&info) }.unwrap()
}

/// A (timeline) semaphore wait or signal of vkQueueSubmit2 at all stages.
fn sem2(sem: vk::Semaphore, value: u64) -> vk::SemaphoreSubmitInfo<'static> {
    vk::SemaphoreSubmitInfo::default()
        .semaphore(sem)
        .value(value)
        .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
}

fn expect_muladd(os: &[u32], xs: &[u32], factors: &[u32]) -> Vec<u32> {
    os.iter()
        .zip(xs)
        .map(|(&o, &x)| {
            factors
                .iter()
                .fold(o, |acc, &a| acc.wrapping_mul(a).wrapping_add(x))
        })
        .collect()
}

#[test]
fn extensions_features_and_properties_are_reported() {
    let (c, e) = ctx();
    // SAFETY: live instance and physical device.
    unsafe {
        let exts =
            c.h.instance
                .enumerate_device_extension_properties(c.pd)
                .unwrap();
        for want in DEVICE_EXTS {
            assert!(
                exts.iter()
                    .any(|e| e.extension_name_as_c_str().unwrap() == want),
                "{want:?} not advertised"
            );
        }
        let mut timeline = vk::PhysicalDeviceTimelineSemaphoreFeatures::default();
        let mut sync2 = vk::PhysicalDeviceSynchronization2Features::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut timeline)
            .push_next(&mut sync2);
        e.pdp2.get_physical_device_features2(c.pd, &mut f2);
        assert_eq!(timeline.timeline_semaphore, vk::TRUE);
        assert_eq!(sync2.synchronization2, vk::TRUE);
        let mut tprops = vk::PhysicalDeviceTimelineSemaphoreProperties::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut tprops);
        e.pdp2.get_physical_device_properties2(c.pd, &mut p2);
        assert!(tprops.max_timeline_semaphore_value_difference >= 1 << 31);
    }
    c.finish();
}

#[test]
fn physical_device_groups_of_one() {
    // Without validation: the loader sends vkEnumeratePhysicalDeviceGroupsKHR to the layer's
    // core vkEnumeratePhysicalDeviceGroups, which then reports a 1.1 function called on a 1.0
    // instance (UNASSIGNED-API-Version-Violation) although the application used the extension.
    let h = Harness::with_instance_extensions(false, &[c"VK_KHR_device_group_creation"]);
    let pd = h.physical_device();
    let dgc = ash::khr::device_group_creation::Instance::new(&h.entry, &h.instance);
    // SAFETY: live instance.
    unsafe {
        assert_eq!(dgc.enumerate_physical_device_groups_len().unwrap(), 1);
        let mut groups = [vk::PhysicalDeviceGroupProperties::default()];
        dgc.enumerate_physical_device_groups(&mut groups).unwrap();
        assert_eq!(groups[0].physical_device_count, 1);
        assert_eq!(groups[0].physical_devices[0], pd);
        assert_eq!(groups[0].subset_allocation, vk::FALSE);
    }
}

#[test]
fn timeline_host_signal_query_and_wait() {
    let (c, e) = ctx();
    let a = timeline_semaphore(&c, 5);
    let b = timeline_semaphore(&c, 0);
    // SAFETY: live device and semaphores.
    unsafe {
        assert_eq!(e.tl.get_semaphore_counter_value(a).unwrap(), 5);
        signal(&e.tl, a, 9);
        assert_eq!(e.tl.get_semaphore_counter_value(a).unwrap(), 9);
        // Reached values, a value below the current one, and one not reached yet.
        assert_eq!(wait_values(&e.tl, &[(a, 9)], false, 0), Ok(()));
        assert_eq!(wait_values(&e.tl, &[(a, 3)], false, 0), Ok(()));
        let timeout = Err(vk::Result::TIMEOUT);
        assert_eq!(wait_values(&e.tl, &[(a, 10)], false, 0), timeout);
        assert_eq!(wait_values(&e.tl, &[(a, 10)], false, 1_000_000), timeout);
        // All vs any.
        assert_eq!(wait_values(&e.tl, &[(a, 9), (b, 1)], false, 0), timeout);
        assert_eq!(wait_values(&e.tl, &[(a, 9), (b, 1)], true, 0), Ok(()));
        c.dev.destroy_semaphore(a, None);
        c.dev.destroy_semaphore(b, None);
    }
    c.finish();
}

#[test]
fn wait_before_signal_submission_waits_for_a_host_signal_from_another_thread() {
    let (mut c, e) = ctx();
    let (k, _, o, xs, os) = muladd_setup(&mut c);
    let gate = timeline_semaphore(&c, 0);
    let done = timeline_semaphore(&c, 0);
    let cb1 = record_muladd(&c, k, 2);
    let cb2 = record_muladd(&c, k, 3);
    let fence = c.fence();
    // Submission 1 waits for gate = 1, which nobody has signalled yet, and signals done = 1.
    // Submission 2 has no wait of its own but comes after 1 in queue order.
    let (cbs1, cbs2) = ([cb1], [cb2]);
    let first = Batch {
        cbs: &cbs1,
        waits: &[(gate, 1)],
        signals: &[(done, 1)],
    };
    submit(&c, &[first], vk::Fence::null()).unwrap();
    let second = Batch {
        cbs: &cbs2,
        ..Default::default()
    };
    submit(&c, &[second], fence).unwrap();
    // SAFETY: valid objects on a live device; everything is waited for before it is freed.
    unsafe {
        // Nothing ran: the output is untouched, the fence and `done` are not signalled.
        assert_eq!(c.buf(o).read_u32s(N), os);
        assert_eq!(c.dev.get_fence_status(fence), Ok(false));
        assert_eq!(e.tl.get_semaphore_counter_value(done).unwrap(), 0);
        // Another thread waits for done = 1 (before it can be signalled), a third signals the
        // gate from the host.
        let tl = e.tl.clone();
        let waiter = std::thread::spawn(move || wait_values(&tl, &[(done, 1)], false, u64::MAX));
        let tl = e.tl.clone();
        std::thread::spawn(move || signal(&tl, gate, 1))
            .join()
            .unwrap();
        assert_eq!(waiter.join().unwrap(), Ok(()));
        c.dev.wait_for_fences(&[fence], true, u64::MAX).unwrap();
        assert!(e.tl.get_semaphore_counter_value(done).unwrap() >= 1);
        // Both ran, in queue order: (o*2 + x)*3 + x.
        assert_eq!(c.buf(o).read_u32s(N), expect_muladd(&os, &xs, &[2, 3]));
        c.dev.queue_wait_idle(c.queue).unwrap();
        c.dev.destroy_fence(fence, None);
        c.dev.free_command_buffers(c.cmd_pool, &[cb1, cb2]);
        c.dev.destroy_semaphore(gate, None);
        c.dev.destroy_semaphore(done, None);
    }
    c.finish();
}

#[test]
fn timelines_and_binary_semaphores_chain_submissions() {
    let (mut c, e) = ctx();
    let (k, _, o, xs, os) = muladd_setup(&mut c);
    let t = timeline_semaphore(&c, 10);
    let cbs: Vec<_> = [2u32, 3, 5]
        .iter()
        .map(|&a| record_muladd(&c, k, a))
        .collect();
    // SAFETY: valid create info on a live device.
    let binary = unsafe {
        c.dev
            .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            .unwrap()
    };
    let (c1, c2, c3) = ([cbs[0]], [cbs[1]], [cbs[2]]);
    let batches = [
        // 1: signals t = 11 and the binary semaphore.
        Batch {
            cbs: &c1,
            waits: &[],
            signals: &[(t, 11), (binary, 0)],
        },
        // 2: waits for the binary semaphore, signals t = 12.
        Batch {
            cbs: &c2,
            waits: &[(binary, 0)],
            signals: &[(t, 12)],
        },
        // 3: waits for t = 12 (already submitted), signals t = 20.
        Batch {
            cbs: &c3,
            waits: &[(t, 12)],
            signals: &[(t, 20)],
        },
    ];
    submit(&c, &batches, vk::Fence::null()).unwrap();
    wait_values(&e.tl, &[(t, 20)], false, u64::MAX).unwrap();
    // SAFETY: valid objects on a live device; everything is waited for before it is freed.
    unsafe {
        assert_eq!(e.tl.get_semaphore_counter_value(t).unwrap(), 20);
        assert_eq!(c.buf(o).read_u32s(N), expect_muladd(&os, &xs, &[2, 3, 5]));
        c.dev.queue_wait_idle(c.queue).unwrap();
        c.dev.free_command_buffers(c.cmd_pool, &cbs);
        c.dev.destroy_semaphore(binary, None);
        c.dev.destroy_semaphore(t, None);
    }
    c.finish();
}

#[test]
fn synchronization2_submit_barrier_timestamps_and_events() {
    let (mut c, e) = ctx();
    let (k, _, o, xs, os) = muladd_setup(&mut c);
    let t = timeline_semaphore(&c, 0);
    // SAFETY: valid objects on a live device; everything is waited for before it is freed.
    unsafe {
        let pool = c
            .dev
            .create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(3),
                None,
            )
            .unwrap();
        let event = c
            .dev
            .create_event(&vk::EventCreateInfo::default(), None)
            .unwrap();
        let fence = c.fence();
        let cb = c.begin_command_buffer();
        c.dev.cmd_reset_query_pool(cb, pool, 0, 3);
        e.s2.cmd_write_timestamp2(cb, vk::PipelineStageFlags2::NONE, pool, 0);
        c.bind_kernel(cb, k);
        let mb = [vk::MemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
            .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
            .dst_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
            .dst_access_mask(
                vk::AccessFlags2::SHADER_STORAGE_READ | vk::AccessFlags2::SHADER_STORAGE_WRITE,
            )];
        let dep = vk::DependencyInfo::default().memory_barriers(&mb);
        for a in [2u32, 3] {
            cmd_muladd(&c, cb, k, a);
            e.s2.cmd_pipeline_barrier2(cb, &dep);
        }
        e.s2.cmd_write_timestamp2(cb, vk::PipelineStageFlags2::COMPUTE_SHADER, pool, 1);
        // Set, wait (satisfied within the same command buffer), then a third dispatch.
        e.s2.cmd_set_event2(cb, event, &dep);
        e.s2.cmd_wait_events2(cb, &[event], &[dep]);
        cmd_muladd(&c, cb, k, 5);
        e.s2.cmd_pipeline_barrier2(cb, &dep);
        e.s2.cmd_write_timestamp2(cb, vk::PipelineStageFlags2::ALL_COMMANDS, pool, 2);
        e.s2.cmd_reset_event2(cb, event, vk::PipelineStageFlags2::ALL_COMMANDS);
        c.dev.end_command_buffer(cb).unwrap();
        let cbi = [vk::CommandBufferSubmitInfo::default().command_buffer(cb)];
        let sig = [sem2(t, 4)];
        let submit = vk::SubmitInfo2::default()
            .command_buffer_infos(&cbi)
            .signal_semaphore_infos(&sig);
        e.s2.queue_submit2(c.queue, &[submit], fence).unwrap();
        c.dev.wait_for_fences(&[fence], true, u64::MAX).unwrap();
        assert_eq!(e.tl.get_semaphore_counter_value(t).unwrap(), 4);
        assert_eq!(c.buf(o).read_u32s(N), expect_muladd(&os, &xs, &[2, 3, 5]));
        assert_eq!(c.dev.get_event_status(event), Ok(false), "reset by the GPU");
        let mut ts = [0u64; 3];
        c.dev
            .get_query_pool_results(
                pool,
                0,
                &mut ts,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
            .unwrap();
        assert!(ts[0] < ts[1] && ts[1] < ts[2], "timestamps {ts:?}");
        // A second vkQueueSubmit2 that only waits on the timeline and signals it further.
        let (wait, sig) = ([sem2(t, 4)], [sem2(t, 5)]);
        let submit = vk::SubmitInfo2::default()
            .wait_semaphore_infos(&wait)
            .signal_semaphore_infos(&sig);
        e.s2.queue_submit2(c.queue, &[submit], vk::Fence::null())
            .unwrap();
        c.dev.queue_wait_idle(c.queue).unwrap();
        assert_eq!(e.tl.get_semaphore_counter_value(t).unwrap(), 5);
        c.dev.free_command_buffers(c.cmd_pool, &[cb]);
        c.dev.destroy_fence(fence, None);
        c.dev.destroy_event(event, None);
        c.dev.destroy_query_pool(pool, None);
        c.dev.destroy_semaphore(t, None);
    }
    c.finish();
}

#[test]
fn dispatch_base_offsets_gl_workgroup_id() {
    let (mut c, e) = ctx();
    c.pipeline_flags = vk::PipelineCreateFlags::DISPATCH_BASE;
    let out = c.buffer(4 * 4 * 16 * 4);
    c.buf(out).write_u32s(&[0xDEAD; 256]);
    let k = c.kernel(&spirv("ids", None), 1, 0);
    c.bind(k, &[out]);
    let (base, groups) = ([2u32, 1, 0], [3u32, 2, 1]);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: recording into a live command buffer.
        unsafe { e.dg.cmd_dispatch_base(cb, base.into(), groups.into()) };
    })
    .unwrap();
    let got = c.buf(out).read_u32s(256);
    for y in 0..4u32 {
        for x in 0..16u32 {
            let g = (x + 16 * y) as usize;
            let inside = (base[0]..base[0] + groups[0]).contains(&x)
                && (base[1]..base[1] + groups[1]).contains(&y);
            let want = if inside {
                // gl_NumWorkGroups is the group count, not base + count.
                [groups[0], groups[1], x, 1 + y]
            } else {
                [0xDEAD; 4]
            };
            assert_eq!(&got[4 * g..4 * g + 4], &want, "group ({x}, {y})");
        }
    }
    c.finish();
}

#[test]
fn trimmed_command_pool_keeps_working() {
    let (mut c, e) = ctx();
    let (k, _, o, xs, os) = muladd_setup(&mut c);
    // SAFETY: live device and pool.
    unsafe {
        let cb = record_muladd(&c, k, 2);
        c.dev.free_command_buffers(c.cmd_pool, &[cb]);
        e.m1.trim_command_pool(c.cmd_pool, vk::CommandPoolTrimFlags::empty());
    }
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        cmd_muladd(&c, cb, k, 7);
    })
    .unwrap();
    // SAFETY: live device and pool.
    unsafe {
        e.m1.trim_command_pool(c.cmd_pool, vk::CommandPoolTrimFlags::empty())
    };
    assert_eq!(c.buf(o).read_u32s(N), expect_muladd(&os, &xs, &[7]));
    c.finish();
}

#[test]
fn invalid_handles_get_vulkan_1_0_error_codes() {
    // Without validation: the point is what the driver answers to invalid input.
    let h = Harness::with_validation(false);
    let pd = h.physical_device();
    let dev = h.create_device(pd);
    let bogus_fence = vk::Fence::from_raw(0xBAD_F00D);
    // SAFETY: the device is live; the invalid handles are non-dispatchable ids the driver checks.
    unsafe {
        assert_eq!(
            dev.reset_fences(&[bogus_fence]),
            Err(vk::Result::ERROR_OUT_OF_HOST_MEMORY)
        );
        assert_eq!(
            dev.get_fence_status(bogus_fence),
            Err(vk::Result::ERROR_OUT_OF_HOST_MEMORY)
        );
        let r = dev.bind_buffer_memory(
            vk::Buffer::from_raw(0xBAD),
            vk::DeviceMemory::from_raw(0xBAD),
            0,
        );
        assert_eq!(r, Err(vk::Result::ERROR_OUT_OF_HOST_MEMORY));
        // The device still works.
        let f = dev
            .create_fence(
                &vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED),
                None,
            )
            .unwrap();
        assert_eq!(dev.get_fence_status(f), Ok(true));
        dev.destroy_fence(f, None);
        ferrite_tests::icd::destroy_device(&dev);
    }
}

/// The timeline tests again, each in a child process on a simulated Linux 5.7: its execbuffer
/// has no timeline fences (5.8), so timeline semaphores are emulated over binary syncobjs.
#[test]
fn timeline_tests_on_a_kernel_without_timeline_fences() {
    const KERNEL: &str = "FERRITE_SIM_KERNEL";
    if std::env::var_os(KERNEL).is_some() {
        // Already the child (or run by hand on an old kernel): the tests below run directly.
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for test in [
        "timeline_host_signal_query_and_wait",
        "wait_before_signal_submission_waits_for_a_host_signal_from_another_thread",
        "timelines_and_binary_semaphores_chain_submissions",
        "synchronization2_submit_barrier_timestamps_and_events",
    ] {
        let out = std::process::Command::new(&exe)
            .args([test, "--exact", "--nocapture", "--test-threads=1"])
            .env(KERNEL, "5.7")
            .env("FERRITE_LOG", "kernel_iface=info,warn")
            .output()
            .expect("running the child test process");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{test} on Linux 5.7 failed:\n{stdout}\n{stderr}"
        );
        assert!(
            stderr.contains("timeline semaphores use binary syncobjs"),
            "{test}: the child did not run on the emulated timelines:\n{stderr}"
        );
    }
}
