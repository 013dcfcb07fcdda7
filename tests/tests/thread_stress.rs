//! Thread safety on one device (issue 6 item 5): several threads each record command buffers
//! from their own command pool and create compute pipelines (with their layouts, descriptor
//! pools and sets) concurrently, while one thread submits every command buffer and waits for
//! it; each recording thread checks its results. With validation on (zero messages).
//!
//! `FERRITE_STRESS_ROUNDS` (default 3) sets the rounds per thread; `scripts/stress --long`
//! runs it for many rounds.

mod compute_common;

use std::sync::mpsc;

use ash::vk;
use compute_common::*;

const SHADER: &str = "#version 450
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint C = 0u;
layout(push_constant) uniform P { uint a; uint n; } pc;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(set = 0, binding = 1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) o[i] = x[i] * pc.a + C;
}
";

const THREADS: usize = 3;
/// Not a multiple of the group size: partial groups too.
const N: usize = 300;

/// What a recording thread hands to the submitting one; the reply says the work is done.
struct Job {
    cb: vk::CommandBuffer,
    done: mpsc::Sender<Result<(), vk::Result>>,
}

/// Everything one round of a recording thread creates.
struct RoundObjects {
    module: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
}

/// Creates the pipeline (specialised with `c`) and a descriptor set over (x, o).
///
/// # Safety
/// `dev` must be live; the buffers must be valid storage buffers of that device.
unsafe fn make_round(
    dev: &ash::Device,
    code: &[u32],
    c: u32,
    x: vk::Buffer,
    o: vk::Buffer,
) -> (RoundObjects, vk::DescriptorSet) {
    // SAFETY: forwarded contract; valid create infos.
    unsafe {
        let module = dev
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(code), None)
            .unwrap();
        let (set_layout, layout) = ferrite_tests::icd::storage_buffer_layout(dev, 2, 8).unwrap();
        let entries = [vk::SpecializationMapEntry {
            constant_id: 0,
            offset: 0,
            size: 4,
        }];
        let data = c.to_le_bytes();
        let spec = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main")
            .specialization_info(&spec);
        let pipeline = dev
            .create_compute_pipelines(
                vk::PipelineCache::null(),
                &[vk::ComputePipelineCreateInfo::default()
                    .stage(stage)
                    .layout(layout)],
                None,
            )
            .unwrap()[0];
        let (pool, set) = ferrite_tests::icd::storage_buffer_set(dev, set_layout, &[x, o]).unwrap();
        (
            RoundObjects {
                module,
                set_layout,
                layout,
                pipeline,
                pool,
            },
            set,
        )
    }
}

/// # Safety
/// The objects must be idle.
unsafe fn destroy_round(dev: &ash::Device, r: RoundObjects) {
    // SAFETY: forwarded contract.
    unsafe {
        dev.destroy_pipeline(r.pipeline, None);
        dev.destroy_descriptor_pool(r.pool, None);
        dev.destroy_pipeline_layout(r.layout, None);
        dev.destroy_descriptor_set_layout(r.set_layout, None);
        dev.destroy_shader_module(r.module, None);
    }
}

#[test]
fn threads_record_and_create_pipelines_while_one_submits() {
    let rounds: u32 = std::env::var("FERRITE_STRESS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mut c = Ctx::new();
    let code = spirv("stress", Some(SHADER));
    // Per thread: input x and output o (host-visible, coherent).
    let bufs: Vec<(usize, usize)> = (0..THREADS)
        .map(|t| {
            let x = c.buffer(4 * N as u64);
            let o = c.buffer(4 * N as u64);
            c.buf(x).write_u32s(&random_u32s(100 + t as u32, N));
            (x, o)
        })
        .collect();
    // (buffer handles, mapped pointers as addresses) for the threads.
    let shared: Vec<(vk::Buffer, vk::Buffer, usize, usize)> = bufs
        .iter()
        .map(|&(x, o)| {
            (
                c.buf(x).buffer,
                c.buf(o).buffer,
                c.buf(x).ptr as usize,
                c.buf(o).ptr as usize,
            )
        })
        .collect();
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::scope(|s| {
        let mut workers = Vec::new();
        for (t, &(xb, ob, xp, op)) in shared.iter().enumerate() {
            let tx = tx.clone();
            let dev = c.dev.clone();
            let code = &code;
            workers.push(s.spawn(move || {
                // SAFETY: valid objects on a live device; every command buffer is waited for
                // (the reply) before its objects are destroyed; the mapped pointers cover N
                // u32s and only this thread touches its buffers between submissions.
                unsafe {
                    let pool = dev
                        .create_command_pool(&vk::CommandPoolCreateInfo::default(), None)
                        .unwrap();
                    let xs = std::slice::from_raw_parts(xp as *const u32, N).to_vec();
                    for round in 0..rounds {
                        let cst = 1000 * t as u32 + round;
                        let a = 3 + round + t as u32;
                        let (objs, set) = make_round(&dev, code, cst, xb, ob);
                        std::ptr::write_bytes(op as *mut u32, 0, N);
                        let cb = dev
                            .allocate_command_buffers(
                                &vk::CommandBufferAllocateInfo::default()
                                    .command_pool(pool)
                                    .level(vk::CommandBufferLevel::PRIMARY)
                                    .command_buffer_count(1),
                            )
                            .unwrap()[0];
                        dev.begin_command_buffer(
                            cb,
                            &vk::CommandBufferBeginInfo::default()
                                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                        )
                        .unwrap();
                        dev.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, objs.pipeline);
                        dev.cmd_bind_descriptor_sets(
                            cb,
                            vk::PipelineBindPoint::COMPUTE,
                            objs.layout,
                            0,
                            &[set],
                            &[],
                        );
                        let push: Vec<u8> =
                            [a, N as u32].iter().flat_map(|v| v.to_le_bytes()).collect();
                        dev.cmd_push_constants(
                            cb,
                            objs.layout,
                            vk::ShaderStageFlags::COMPUTE,
                            0,
                            &push,
                        );
                        dev.cmd_dispatch(cb, N.div_ceil(32) as u32, 1, 1);
                        dev.end_command_buffer(cb).unwrap();
                        let (done_tx, done_rx) = mpsc::channel();
                        tx.send(Job { cb, done: done_tx }).unwrap();
                        done_rx.recv().unwrap().unwrap();
                        let got = std::slice::from_raw_parts(op as *const u32, N);
                        for i in 0..N {
                            let want = xs[i].wrapping_mul(a).wrapping_add(cst);
                            assert_eq!(got[i], want, "thread {t} round {round} element {i}");
                        }
                        dev.free_command_buffers(pool, &[cb]);
                        destroy_round(&dev, objs);
                    }
                    dev.destroy_command_pool(pool, None);
                }
            }));
        }
        drop(tx);
        // The submitting thread: one queue, one fence, until every worker hung up.
        // SAFETY: valid objects on a live device; the fence outlives every wait.
        unsafe {
            let fence = c
                .dev
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .unwrap();
            let mut submitted = 0;
            for job in rx {
                let cbs = [job.cb];
                let r = c
                    .dev
                    .queue_submit(
                        c.queue,
                        &[vk::SubmitInfo::default().command_buffers(&cbs)],
                        fence,
                    )
                    .and_then(|_| c.dev.wait_for_fences(&[fence], true, u64::MAX))
                    .and_then(|_| c.dev.reset_fences(&[fence]));
                submitted += 1;
                job.done.send(r).unwrap();
            }
            assert_eq!(submitted, THREADS * rounds as usize);
            c.dev.destroy_fence(fence, None);
        }
        for w in workers {
            w.join().unwrap();
        }
    });
    c.finish();
}
