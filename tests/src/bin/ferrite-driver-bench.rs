//! CPU cost of the driver's hot paths (issue 6 and issue 18 "Done when"), through the system
//! loader without validation, on Ferrite's simulated GPU:
//! - recording one vkCmdDispatch: begin, bind pipeline and set, 10,000 vkCmdDispatch, end,
//!   over 10,000 (the figure `scripts/bench` reports);
//! - recording bind pipeline + bind set + push constants + vkCmdDispatch (100 per command
//!   buffer);
//! - vkQueueSubmit + fence wait of a freshly recorded command buffer of 1,000 dispatches (the
//!   first submission builds its batch) and of the same command buffer again (built already):
//!   both include the simulated GPU running the 1,000 dispatches, whose time varies more than
//!   the build costs, so only the two totals are shown;
//! - vkQueueSubmit + fence wait with no command buffer, and with one empty command buffer;
//! - vkCreateComputePipelines of the SAXPY shader without a pipeline cache and with a cache hit.
//!
//! Prints median, min and max of each. Not a test: `scripts/bench-driver`.
//!
//! Usage: ferrite-driver-bench [--samples N] [--submits M] [--only-submit] [--anv]
//! N samples per figure (default 31); M samples of each empty-submission figure (default 4N;
//! a large M with a small N is a loop of empty submissions to run under `perf`).
//! `--only-submit` measures the two empty-submission figures alone (no pipeline compiled, no
//! dispatch recorded or run), so a profile or an instruction count of the run is all theirs. `--anv` also runs the same figures on Mesa's anv on the
//! noop drm-shim (`FERRITE_ANV_SHIM`, `FERRITE_ANV_ICD` from `scripts/peer-setup`) in a child
//! process and prints the ratios; anv's submissions are no-ops there (its EXECBUFFER2 does
//! nothing and fences signal at once), so its submit figures are its CPU bookkeeping only.
//! The environment chooses Ferrite's library like the tests do (FERRITE_ICD_LIB or next to the
//! executable); FERRITE_DEVICE=sim is set here.

use std::process::{Command, ExitCode};
use std::time::Instant;

use ash::vk;
use ferrite_tests::bench::report::spread;
use ferrite_tests::icd::{
    bound_storage_buffer, primary_command_buffers, storage_buffer_layout, storage_buffer_set,
    workspace_root, Harness,
};

/// Dispatches recorded per sample of the bind+set+push+dispatch figure.
const DISPATCHES_PER_SAMPLE: u32 = 100;
/// Dispatches in the command buffer of the recording figure (as `scripts/bench`).
const RECORDED_DISPATCHES: u32 = 10_000;
/// Dispatches in the command buffer of the first-submission figures.
const BUILT_DISPATCHES: u32 = 1_000;
/// The child's machine-readable lines start with this.
const FIGURE: &str = "figure\t";

fn saxpy_spirv() -> Result<Vec<u32>, String> {
    let path = workspace_root().join("tests/shaders/saxpy.comp");
    let src = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    ferrite_compiler::testing::glsl_to_spirv("saxpy", &src, "vulkan1.0").map_err(|e| e.to_string())
}

/// One figure: its name, unit and samples.
struct Figure {
    name: &'static str,
    unit: &'static str,
    samples: Vec<f64>,
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

/// vkQueueSubmit of `cbs` with `fence`, the wait, and the fence reset (outside the caller's
/// timing when it measures the first two). Mesa's noop drm-shim fails vkResetFences (no syncobj
/// reset): a new fence does the same job there.
///
/// # Safety
/// Live objects of `dev`.
unsafe fn submit_wait(
    dev: &ash::Device,
    queue: vk::Queue,
    cbs: &[vk::CommandBuffer],
    fence: &mut vk::Fence,
) -> Result<f64, String> {
    let submit = [vk::SubmitInfo::default().command_buffers(cbs)];
    let t = Instant::now();
    // SAFETY: forwarded contract.
    unsafe {
        dev.queue_submit(queue, &submit, *fence)
            .map_err(|e| format!("vkQueueSubmit: {e}"))?;
        dev.wait_for_fences(&[*fence], true, u64::MAX)
            .map_err(|e| format!("vkWaitForFences: {e}"))?;
        let us = micros(t);
        if dev.reset_fences(&[*fence]).is_err() {
            dev.destroy_fence(*fence, None);
            *fence = dev
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(|e| e.to_string())?;
        }
        Ok(us)
    }
}

/// Empty submissions on `queue` with `fence`: no command buffer, and the empty command buffer
/// `empty` (recorded here), `submits` samples each, interleaved.
///
/// # Safety
/// Live objects of `dev`; `empty` is a primary command buffer in the initial state.
unsafe fn empty_submits(
    dev: &ash::Device,
    queue: vk::Queue,
    empty: vk::CommandBuffer,
    fence: &mut vk::Fence,
    submits: usize,
) -> Result<[Figure; 2], String> {
    // SAFETY: forwarded contract.
    unsafe {
        dev.begin_command_buffer(empty, &vk::CommandBufferBeginInfo::default())
            .map_err(|e| e.to_string())?;
        dev.end_command_buffer(empty).map_err(|e| e.to_string())?;
        let mut submit_none = Vec::new();
        let mut submit_empty = Vec::new();
        for _ in 0..submits {
            submit_none.push(submit_wait(dev, queue, &[], fence)?);
            submit_empty.push(submit_wait(dev, queue, &[empty], fence)?);
        }
        Ok([
            Figure {
                name: "vkQueueSubmit (no command buffer) + fence wait",
                unit: "us",
                samples: submit_none,
            },
            Figure {
                name: "vkQueueSubmit (empty command buffer) + fence wait",
                unit: "us",
                samples: submit_empty,
            },
        ])
    }
}

/// The empty-submission figures alone (`--only-submit`).
fn run_submits(submits: usize) -> Result<Vec<Figure>, String> {
    std::env::set_var("FERRITE_DEVICE", "sim");
    let h = Harness::with_validation(false);
    let dev = h.create_device(h.physical_device());
    // SAFETY: valid create infos on a live device; everything is destroyed at the end.
    let figures = unsafe {
        let pool = dev
            .create_command_pool(&vk::CommandPoolCreateInfo::default(), None)
            .map_err(|e| e.to_string())?;
        let empty = primary_command_buffers(&dev, pool, 1).map_err(|e| e.to_string())?[0];
        let mut fence = dev
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .map_err(|e| e.to_string())?;
        let queue = dev.get_device_queue(0, 0);
        let figures = empty_submits(&dev, queue, empty, &mut fence, submits);
        dev.device_wait_idle().map_err(|e| e.to_string())?;
        dev.destroy_fence(fence, None);
        dev.destroy_command_pool(pool, None);
        ferrite_tests::icd::destroy_device(&dev);
        figures?
    };
    Ok(figures.into())
}

fn run(samples: usize, submits: usize) -> Result<Vec<Figure>, String> {
    std::env::set_var("FERRITE_DEVICE", "sim");
    let code = saxpy_spirv()?;
    let h = Harness::with_validation(false);
    let pd = h.physical_device();
    let dev = h.create_device(pd);
    let mut figures = Vec::new();
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
            let (b, m, _, _) = bound_storage_buffer(&dev, 4096, |_| Ok(mem_type))?;
            buffers.push((b, m));
        }
        let handles: Vec<vk::Buffer> = buffers.iter().map(|&(b, _)| b).collect();
        let (dpool, set) =
            storage_buffer_set(&dev, set_layout, &handles).map_err(|e| e.to_string())?;

        let pool = dev
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
            .map_err(|e| e.to_string())?;
        let cbs = primary_command_buffers(&dev, pool, 2).map_err(|e| e.to_string())?;
        let (cb, empty) = (cbs[0], cbs[1]);
        let push: Vec<u8> = [2.0f32.to_bits(), 1024]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let begin = vk::CommandBufferBeginInfo::default();
        // Begin, bind, `n` dispatches of one group (push constants before each when `push`),
        // end.
        let record_dispatches = |n: u32, rebind: bool| -> Result<(), String> {
            dev.begin_command_buffer(cb, &begin)
                .map_err(|e| e.to_string())?;
            for i in 0..n {
                if rebind || i == 0 {
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
                }
                dev.cmd_dispatch(cb, 1, 1, 1);
            }
            dev.end_command_buffer(cb).map_err(|e| e.to_string())
        };

        // Nanoseconds per dispatch of recording `n` dispatches into the reset command buffer,
        // one sample per run.
        let per_dispatch = |n: u32, rebind: bool| -> Result<Vec<f64>, String> {
            let mut out = Vec::new();
            for _ in 0..samples {
                dev.reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
                    .map_err(|e| e.to_string())?;
                let t = Instant::now();
                record_dispatches(n, rebind)?;
                out.push(micros(t) * 1e3 / f64::from(n));
            }
            Ok(out)
        };
        // Recording 10,000 dispatches (begin, binds and end included), per dispatch.
        let record_one = per_dispatch(RECORDED_DISPATCHES, false)?;
        // Recording bind + set + push + dispatch, 100 per command buffer.
        let record = per_dispatch(DISPATCHES_PER_SAMPLE, true)?;

        // The first submission (which builds the batch) and a second one.
        let queue = dev.get_device_queue(0, 0);
        let mut fence = dev
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .map_err(|e| e.to_string())?;
        let (mut first_submit, mut again_submit) = (Vec::new(), Vec::new());
        for _ in 0..samples.min(15) {
            dev.reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
                .map_err(|e| e.to_string())?;
            record_dispatches(BUILT_DISPATCHES, false)?;
            first_submit.push(submit_wait(&dev, queue, &[cb], &mut fence)?);
            again_submit.push(submit_wait(&dev, queue, &[cb], &mut fence)?);
        }

        // Empty submissions: no command buffer, and one empty command buffer.
        let [submit_none, submit_empty] = empty_submits(&dev, queue, empty, &mut fence, submits)?;

        figures.push(Figure {
            name: "record one vkCmdDispatch (10,000 per command buffer)",
            unit: "ns",
            samples: record_one,
        });
        figures.push(Figure {
            name: "record bind+set+push+dispatch",
            unit: "ns",
            samples: record,
        });
        figures.push(Figure {
            name: "submit + wait, 1,000 dispatches, first",
            unit: "us",
            samples: first_submit,
        });
        figures.push(Figure {
            name: "submit + wait, 1,000 dispatches, again",
            unit: "us",
            samples: again_submit,
        });
        figures.push(submit_none);
        figures.push(submit_empty);
        figures.push(Figure {
            name: "vkCreateComputePipelines, no cache (SAXPY)",
            unit: "us",
            samples: uncached,
        });
        figures.push(Figure {
            name: "vkCreateComputePipelines, cache hit (SAXPY)",
            unit: "us",
            samples: cached,
        });

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
        ferrite_tests::icd::destroy_device(&dev);
    }
    Ok(figures)
}

fn print(driver: &str, figures: &[Figure]) {
    println!("{driver}: CPU time, release build (median, min, max)");
    for f in figures {
        if let Some((median, min, max)) = spread(&f.samples) {
            println!(
                "  {:<52} median {median:>10.2} {u}   min {min:>10.2}   max {max:>10.2}   ({} samples)",
                f.name,
                f.samples.len(),
                u = f.unit
            );
        }
    }
}

/// The figures a child run printed as machine-readable lines: (name, median).
fn parse(out: &str) -> Vec<(String, f64)> {
    out.lines()
        .filter_map(|l| l.strip_prefix(FIGURE))
        .filter_map(|l| {
            let (name, median) = l.split_once('\t')?;
            Some((name.to_string(), median.parse().ok()?))
        })
        .collect()
}

/// Runs this program again on anv (Mesa's noop drm-shim) and returns its figures.
fn run_anv(samples: usize, only_submit: bool) -> Result<Vec<(String, f64)>, String> {
    let var = |k: &str| {
        std::env::var(k).map_err(|_| format!("{k} is not set (eval \"$(scripts/peer-setup)\")"))
    };
    let (shim, icd) = (var("FERRITE_ANV_SHIM")?, var("FERRITE_ANV_ICD")?);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["--samples", &samples.to_string(), "--child"])
        .args(only_submit.then_some("--only-submit"))
        .env("LD_PRELOAD", shim)
        .env("VK_DRIVER_FILES", icd)
        .env("FERRITE_TESTS_OTHER_DRIVER", "1")
        .env("MESA_SHADER_CACHE_DISABLE", "true")
        .output()
        .map_err(|e| format!("running the anv child: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "the anv child failed: {}{}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(parse(&stdout))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut samples = 31;
    let mut submits = None;
    let (mut anv, mut child, mut only_submit) = (false, false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--samples" => match it.next().and_then(|n| n.parse::<usize>().ok()) {
                Some(n) if n > 0 => samples = n,
                _ => {
                    eprintln!("--samples takes a positive number");
                    return ExitCode::from(2);
                }
            },
            "--submits" => match it.next().and_then(|n| n.parse::<usize>().ok()) {
                Some(n) if n > 0 => submits = Some(n),
                _ => {
                    eprintln!("--submits takes a positive number");
                    return ExitCode::from(2);
                }
            },
            "--anv" => anv = true,
            "--only-submit" => only_submit = true,
            "--child" => child = true,
            _ => {
                eprintln!(
                    "usage: ferrite-driver-bench [--samples N] [--submits N] [--only-submit] [--anv]"
                );
                return ExitCode::from(2);
            }
        }
    }
    let submits = submits.unwrap_or(samples * 4);
    let figures = match if only_submit {
        run_submits(submits)
    } else {
        run(samples, submits)
    } {
        Ok(f) => f,
        Err(e) => {
            eprintln!("ferrite-driver-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    if child {
        for f in &figures {
            if let Some((median, _, _)) = spread(&f.samples) {
                println!("{FIGURE}{}\t{median}", f.name);
            }
        }
        return ExitCode::SUCCESS;
    }
    print("Ferrite (simulated i915)", &figures);
    if anv {
        match run_anv(samples, only_submit) {
            Ok(other) => {
                println!("anv on Mesa's noop drm-shim (its submissions do nothing), medians and Ferrite / anv:");
                for f in &figures {
                    let theirs = other.iter().find(|(n, _)| n == f.name).map(|x| x.1);
                    if let (Some((ours, _, _)), Some(t)) = (spread(&f.samples), theirs) {
                        println!(
                            "  {:<52} anv {t:>10.2} {u}   Ferrite {ours:>10.2} {u}   ratio {:.2}",
                            f.name,
                            ours / t,
                            u = f.unit
                        );
                    }
                }
            }
            Err(e) => {
                eprintln!("ferrite-driver-bench: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
