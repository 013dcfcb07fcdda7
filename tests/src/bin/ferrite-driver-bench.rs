//! CPU cost of the driver's hot paths (issue 6 "Done when"), on the simulated GPU through the
//! system loader, without validation: recording one dispatch (bind pipeline, bind set, push
//! constants, vkCmdDispatch), vkQueueSubmit + fence wait of an empty batch, and
//! vkCreateComputePipelines of the SAXPY shader without a pipeline cache and with a cache hit.
//! Prints median, min and max of each (microseconds). Not a test: `scripts/bench-driver`.
//!
//! Usage: ferrite-driver-bench [--samples N]   (N samples per figure; default 31)
//! The environment chooses the library like the tests do (FERRITE_ICD_LIB or next to the
//! executable); FERRITE_DEVICE=sim is set here.

use std::process::ExitCode;
use std::time::Instant;

use ash::vk;
use ferrite_tests::bench::report::spread;
use ferrite_tests::icd::{storage_buffer_layout, storage_buffer_set, workspace_root, Harness};

/// Dispatches recorded per sample (the per-dispatch figure is the sample over this).
const DISPATCHES_PER_SAMPLE: u32 = 100;

fn saxpy_spirv() -> Result<Vec<u32>, String> {
    let path = workspace_root().join("tests/shaders/saxpy.comp");
    let src = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    ferrite_compiler::testing::glsl_to_spirv("saxpy", &src, "vulkan1.0").map_err(|e| e.to_string())
}

fn print(name: &str, samples: &[f64]) {
    if let Some((median, min, max)) = spread(samples) {
        println!(
            "{name:<44} median {median:>10.2} us   min {min:>10.2}   max {max:>10.2}   ({} samples)",
            samples.len()
        );
    }
}

fn micros(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e6
}

struct Objects {
    layout: vk::PipelineLayout,
    module: vk::ShaderModule,
}

/// # Safety
/// `dev` must be live; `o` made on it.
unsafe fn create_pipeline(
    dev: &ash::Device,
    o: &Objects,
    cache: vk::PipelineCache,
) -> vk::Pipeline {
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(o.module)
        .name(c"main");
    let info = vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(o.layout);
    // SAFETY: forwarded contract.
    unsafe { dev.create_compute_pipelines(cache, &[info], None) }
        .map_err(|(_, e)| e)
        .expect("vkCreateComputePipelines")[0]
}

fn run(samples: usize) -> Result<(), String> {
    std::env::set_var("FERRITE_DEVICE", "sim");
    let code = saxpy_spirv()?;
    let h = Harness::with_validation(false);
    let pd = h.physical_device();
    let dev = h.create_device(pd);
    // SAFETY: valid create infos on a live device; everything is destroyed at the end.
    unsafe {
        let (set_layout, layout) = storage_buffer_layout(&dev, 2, 8).map_err(|e| e.to_string())?;
        let module = dev
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
            .map_err(|e| e.to_string())?;
        let o = Objects { layout, module };

        // vkCreateComputePipelines without a cache: every call compiles.
        let mut uncached = Vec::new();
        for _ in 0..samples.min(15) {
            let t = Instant::now();
            let p = create_pipeline(&dev, &o, vk::PipelineCache::null());
            uncached.push(micros(t));
            dev.destroy_pipeline(p, None);
        }
        // With a cache hit: the cache was filled by one creation first.
        let cache = dev
            .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
            .map_err(|e| e.to_string())?;
        let first = create_pipeline(&dev, &o, cache);
        let mut cached = Vec::new();
        for _ in 0..samples {
            let t = Instant::now();
            let p = create_pipeline(&dev, &o, cache);
            cached.push(micros(t));
            dev.destroy_pipeline(p, None);
        }

        // Buffers and a descriptor set for the recorded dispatches.
        let mem_type = h
            .memory_type(pd, vk::MemoryPropertyFlags::HOST_VISIBLE)
            .ok_or("no host-visible memory type")?;
        let mut buffers = Vec::new();
        for _ in 0..2 {
            let b = dev
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(4096)
                        .usage(vk::BufferUsageFlags::STORAGE_BUFFER),
                    None,
                )
                .map_err(|e| e.to_string())?;
            let req = dev.get_buffer_memory_requirements(b);
            let m = dev
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(mem_type),
                    None,
                )
                .map_err(|e| e.to_string())?;
            dev.bind_buffer_memory(b, m, 0).map_err(|e| e.to_string())?;
            buffers.push((b, m));
        }
        let handles: Vec<vk::Buffer> = buffers.iter().map(|&(b, _)| b).collect();
        let (dpool, set) =
            storage_buffer_set(&dev, set_layout, &handles).map_err(|e| e.to_string())?;

        // Recording: one sample = begin, 100 x (bind, bind set, push, dispatch), end.
        let pool = dev
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
            .map_err(|e| e.to_string())?;
        let cb = dev
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
            .map_err(|e| e.to_string())?[0];
        let push: Vec<u8> = [2.0f32.to_bits(), 1024]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut record = Vec::new();
        for _ in 0..samples {
            dev.reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
                .map_err(|e| e.to_string())?;
            let t = Instant::now();
            dev.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .map_err(|e| e.to_string())?;
            for _ in 0..DISPATCHES_PER_SAMPLE {
                dev.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, first);
                dev.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::COMPUTE,
                    layout,
                    0,
                    &[set],
                    &[],
                );
                dev.cmd_push_constants(cb, layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
                dev.cmd_dispatch(cb, 16, 1, 1);
            }
            dev.end_command_buffer(cb).map_err(|e| e.to_string())?;
            record.push(micros(t) / f64::from(DISPATCHES_PER_SAMPLE));
        }

        // Empty batch: vkQueueSubmit (no command buffers) with a fence, wait, reset.
        let queue = dev.get_device_queue(0, 0);
        let fence = dev
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .map_err(|e| e.to_string())?;
        let mut submit = Vec::new();
        for _ in 0..samples * 4 {
            let t = Instant::now();
            dev.queue_submit(queue, &[], fence)
                .map_err(|e| e.to_string())?;
            dev.wait_for_fences(&[fence], true, u64::MAX)
                .map_err(|e| e.to_string())?;
            submit.push(micros(t));
            dev.reset_fences(&[fence]).map_err(|e| e.to_string())?;
        }

        println!("ferrite-driver-bench: CPU time on the simulated GPU (FERRITE_DEVICE=sim), release build");
        print("record one dispatch (bind+set+push+dispatch)", &record);
        print("vkQueueSubmit + fence wait, empty batch", &submit);
        print("vkCreateComputePipelines, no cache (SAXPY)", &uncached);
        print("vkCreateComputePipelines, cache hit (SAXPY)", &cached);

        dev.device_wait_idle().map_err(|e| e.to_string())?;
        dev.destroy_fence(fence, None);
        dev.destroy_command_pool(pool, None);
        dev.destroy_descriptor_pool(dpool, None);
        for (b, m) in buffers {
            dev.destroy_buffer(b, None);
            dev.free_memory(m, None);
        }
        dev.destroy_pipeline(first, None);
        dev.destroy_pipeline_cache(cache, None);
        dev.destroy_shader_module(module, None);
        dev.destroy_pipeline_layout(layout, None);
        dev.destroy_descriptor_set_layout(set_layout, None);
        dev.destroy_device(None);
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let samples = match args.as_slice() {
        [] => 31,
        [flag, n] if flag == "--samples" => match n.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("--samples takes a positive number");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: ferrite-driver-bench [--samples N]");
            return ExitCode::from(2);
        }
    };
    match run(samples) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferrite-driver-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
