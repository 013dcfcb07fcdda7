//! The measuring side: runs in a child process with one driver's loader environment
//! (or, for `compiler`, calls Ferrite's compiler crate directly) and returns a JSON result.
//!
//! Per shader: the pipeline-executable statistics and the SIMD width (one pipeline created
//! with the capture flags on a device of its own), and `vkCreateComputePipelines` times
//! without a pipeline cache: `runs` more devices, each compiling every shader once, so no
//! creation can hit a driver's per-device in-memory cache (the parent also sets
//! `MESA_SHADER_CACHE_DISABLE=true` for anv's disk cache). Then driver overhead: creating the
//! overhead pipeline with a `VkPipelineCache` (a miss on a fresh cache, then a hit), recording
//! 10,000 `vkCmdDispatch` and `vkQueueSubmit` + `vkWaitForFences` of an empty batch.

use crate::bench::corpus::{self, Entry};
use crate::bench::json::Json;
use ash::vk;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Dispatches recorded in one command buffer for the recording-cost figure.
pub const RECORDED_DISPATCHES: u32 = 10_000;
/// Empty submissions per sample of the submit figure.
pub const SUBMITS_PER_SAMPLE: u32 = 100;

/// Printed on stderr before each shader's statistics pipeline, so the parent can attach
/// the driver's log lines to the shader they belong to.
pub const MARK: &str = "@@ferrite-bench shader ";

/// Printed on stderr before each timed pipeline creation (after the statistics pass), so the
/// parent knows which shader a crashed worker was compiling.
pub const TIMED_MARK: &str = "@@ferrite-bench timed ";

/// The error of a shader the parent skipped because it crashed an earlier worker.
pub const CRASHED: &str = "crashed the driver's process";

pub struct WorkerArgs {
    pub label: String,
    pub corpus: PathBuf,
    pub overhead_spirv: Option<PathBuf>,
    pub runs: usize,
    pub dump_dir: Option<PathBuf>,
    /// The statistics pass (one pipeline per shader with the capture flags, untimed). Off,
    /// the worker only creates the timed pipelines: what `--scaling` needs, whose time
    /// limit then bounds the timed compiles alone.
    pub stats: bool,
    /// Shaders (corpus indices) not to touch: they crashed an earlier worker of this driver.
    /// Each gets the error [`CRASHED`].
    pub skip: Vec<usize>,
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn read_words(p: &Path) -> Result<Vec<u32>, String> {
    let b = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// The output object of a run (its driver label and where its figures come from) and the
/// corpus it runs on; an unreadable corpus ends the run with the output's `error`.
fn open_run(a: &WorkerArgs, source: &str) -> Result<(Json, Vec<corpus::Entry>), Json> {
    let mut out = Json::obj();
    out.set("driver", a.label.as_str());
    out.set("source", source);
    match corpus::load(&a.corpus) {
        Ok(entries) => Ok((out, entries)),
        Err(e) => {
            out.set("error", e);
            Err(out)
        }
    }
}

/// Where the figures of `run_compiler` and of `run_vulkan` come from.
const COMPILER_SOURCE: &str = "ferrite_compiler::compile (the compiler crate directly, no driver)";
const VULKAN_SOURCE: &str = "Vulkan loader (VK_KHR_pipeline_executable_properties)";

/// Ferrite's compiler called directly (no driver, no loader).
pub fn run_compiler(a: &WorkerArgs) -> Json {
    use ferrite_compiler::{compile, CompileOptions, DebugFlags, Target};
    let (mut out, entries) = match open_run(a, COMPILER_SOURCE) {
        Ok(run) => run,
        Err(out) => return out,
    };
    let target = Target::gen9();
    let mut shaders = Vec::new();
    for e in &entries {
        let iface = corpus::reflect(&e.spirv);
        let mk = |dump: Option<PathBuf>| CompileOptions {
            entry_point: e.entry.clone(),
            specialization: e
                .specs
                .iter()
                .map(|&(id, v)| (id, v.to_le_bytes().to_vec()))
                .collect(),
            push_constant_range: (0, if iface.push_constants { 128 } else { 0 }),
            debug: DebugFlags {
                asm: dump.is_some(),
                ..DebugFlags::default()
            },
            dump_dir: dump,
            ..CompileOptions::default()
        };
        let mut s = Json::obj();
        s.set("name", e.name.as_str());
        let dump = a.dump_dir.as_ref().map(|d| {
            let p = d.join(format!("{}.ferrite-cc", sanitize(&e.name)));
            let _ = std::fs::create_dir_all(&p);
            p
        });
        let opts = mk(dump.clone());
        let r = std::panic::catch_unwind(|| compile(&e.spirv, &target, &opts));
        match r {
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                s.set("error", format!("compiler panicked: {msg}"));
            }
            Ok(Err(err)) => s.set("error", err.to_string()),
            Ok(Ok(k)) => {
                s.set("simd", k.simd);
                let mut st = Json::obj();
                for (n, v) in k.mesa_statistics() {
                    st.set(n, v);
                }
                s.set("stats", st);
                let mut passes = Json::obj();
                for (name, d) in &k.stats.pass_times.0 {
                    let before = passes.get(name).and_then(Json::as_f64).unwrap_or(0.0);
                    passes.set(name, before + d.as_secs_f64() * 1e3);
                }
                s.set("pass_ms", passes);
                if let Some(d) = &dump {
                    s.set("asm", d.join("kernel.asm").display().to_string());
                }
                let plain = mk(None);
                let mut times = Vec::new();
                let mut cpu = Vec::new();
                for _ in 0..a.runs {
                    let t = Instant::now();
                    let c = process_cpu_ms();
                    let ok =
                        std::panic::catch_unwind(|| compile(&e.spirv, &target, &plain).is_ok())
                            .unwrap_or(false);
                    if ok {
                        times.push(Json::Num(ms(t)));
                        cpu.push(Json::Num(process_cpu_ms() - c));
                    }
                }
                s.set("compile_ms", times);
                s.set("cpu_ms", cpu);
            }
        }
        shaders.push(s);
    }
    out.set("shaders", shaders);
    if let Some(kb) = peak_rss_kb() {
        out.set("peak_rss_kb", kb);
    }
    out
}

/// CPU time this process has used (all its threads), in ms: on a shared machine a compile's
/// CPU time, unlike its wall time, does not grow with the other processes' load.
pub fn process_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// CPU time (user + system, all threads) process `pid` has used so far, in seconds, from
/// /proc/PID/stat.
pub fn cpu_of_process_s(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) close with ')': utime and stime
    // are the 14th and 15th fields of the line, the 12th and 13th after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| ticks / hz as f64)
}

/// This process's peak resident set size (VmHWM of /proc/self/status), in KB.
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct Ctx {
    instance: ash::Instance,
    pd: vk::PhysicalDevice,
    api: u32,
    has_pep: bool,
    max_push: u32,
    queue_family: u32,
}

/// `FERRITE_BENCH_CRASH_AT=NAME`: the worker aborts (SIGABRT) before compiling the shader
/// NAME, as a driver that crashes on it would (to exercise the parent's recovery).
fn crash_if_asked(name: &str) {
    if std::env::var("FERRITE_BENCH_CRASH_AT").is_ok_and(|v| v == name) {
        eprintln!("ferrite-bench worker: FERRITE_BENCH_CRASH_AT={name}: aborting");
        std::process::abort();
    }
}

/// Runs everything on the first physical device the loader exposes.
pub fn run_vulkan(a: &WorkerArgs) -> Json {
    let (mut out, entries) = match open_run(a, VULKAN_SOURCE) {
        Ok(run) => run,
        Err(out) => return out,
    };
    // SAFETY: loads the system loader; no preconditions on our side.
    let entry = match unsafe { ash::Entry::load() } {
        Ok(e) => e,
        Err(e) => {
            out.set("error", format!("cannot load the Vulkan loader: {e}"));
            return out;
        }
    };
    // SAFETY: every Vulkan call below gets valid create infos built right before it, handles
    // from this function only, and destroys children before their parents.
    let ctx = match unsafe { open_instance(&entry) } {
        Ok(c) => c,
        Err(e) => {
            out.set("error", e);
            return out;
        }
    };
    // SAFETY: live instance and physical device.
    let props = unsafe { ctx.instance.get_physical_device_properties(ctx.pd) };
    let name = props
        .device_name_as_c_str()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.set("device", name);
    out.set(
        "api_version",
        format!(
            "{}.{}.{}",
            vk::api_version_major(props.api_version),
            vk::api_version_minor(props.api_version),
            vk::api_version_patch(props.api_version)
        ),
    );
    if !ctx.has_pep {
        out.set(
            "stats_error",
            "the device does not offer VK_KHR_pipeline_executable_properties",
        );
    }
    // Statistics pass.
    let mut shaders: Vec<Json> = Vec::new();
    // SAFETY: as above.
    match unsafe { make_device(&ctx) } {
        Err(e) => out.set("error", e),
        Ok(dev) => {
            for (i, e) in entries.iter().enumerate() {
                eprintln!("{MARK}{i}");
                let mut s = Json::obj();
                s.set("name", e.name.as_str());
                if a.skip.contains(&i) {
                    s.set("error", CRASHED);
                    shaders.push(s);
                    continue;
                }
                crash_if_asked(&e.name);
                if !a.stats {
                    shaders.push(s);
                    continue;
                }
                // SAFETY: as above.
                match unsafe { stats_of(&ctx, &dev, e, a.dump_dir.as_deref(), &a.label) } {
                    Ok(fields) => {
                        for (k, v) in fields.members() {
                            s.set(k, v.clone());
                        }
                    }
                    Err(err) => s.set("error", err),
                }
                shaders.push(s);
            }
            eprintln!("{MARK}end");
            // SAFETY: nothing created on it remains.
            unsafe { dev.destroy_device(None) };
        }
    }
    // Timing passes: a fresh device per pass, every shader once per device.
    let mut times: Vec<Vec<Json>> = vec![Vec::new(); entries.len()];
    let mut cpu: Vec<Vec<Json>> = vec![Vec::new(); entries.len()];
    for _ in 0..a.runs {
        // SAFETY: as above.
        let Ok(dev) = (unsafe { make_device(&ctx) }) else {
            break;
        };
        for (i, e) in entries.iter().enumerate() {
            if shaders[i].get("error").is_some() {
                continue;
            }
            eprintln!("{TIMED_MARK}{i}");
            let c = process_cpu_ms();
            // SAFETY: as above.
            match unsafe { timed_create(&ctx, &dev, e) } {
                Ok(t) => {
                    times[i].push(Json::Num(t));
                    cpu[i].push(Json::Num(process_cpu_ms() - c));
                }
                // Without the statistics pass, the timed creation is where an error shows.
                Err(err) if !a.stats => shaders[i].set("error", err),
                Err(_) => {}
            }
        }
        // SAFETY: every pipeline was destroyed by timed_create.
        unsafe { dev.destroy_device(None) };
    }
    eprintln!("{TIMED_MARK}end");
    for ((s, t), c) in shaders.iter_mut().zip(times).zip(cpu) {
        if s.get("error").is_none() {
            s.set("compile_ms", t);
            // Includes the shader module, layout and their destruction around the pipeline.
            s.set("cpu_ms", c);
        }
    }
    out.set("shaders", shaders);
    let ov = match &a.overhead_spirv {
        None => Err("no overhead shader".to_string()),
        // SAFETY: as above.
        Some(p) => read_words(p).and_then(|w| unsafe { overhead(&ctx, &w, a.runs) }),
    };
    match ov {
        Ok(j) => out.set("overhead", j),
        Err(e) => {
            let mut j = Json::obj();
            j.set("error", e);
            out.set("overhead", j);
        }
    }
    // SAFETY: all devices are gone.
    unsafe { ctx.instance.destroy_instance(None) };
    if let Some(kb) = peak_rss_kb() {
        out.set("peak_rss_kb", kb);
    }
    out
}

fn ext_names(props: &[vk::ExtensionProperties]) -> Vec<String> {
    props
        .iter()
        .filter_map(|p| p.extension_name_as_c_str().ok())
        .map(|c| c.to_string_lossy().into_owned())
        .collect()
}

unsafe fn open_instance(entry: &ash::Entry) -> Result<Ctx, String> {
    let loader = entry
        .try_enumerate_instance_version()
        .ok()
        .flatten()
        .unwrap_or(vk::API_VERSION_1_0);
    let api = loader.min(vk::API_VERSION_1_3);
    let avail = ext_names(
        &entry
            .enumerate_instance_extension_properties(None)
            .unwrap_or_default(),
    );
    let gpdp2 = c"VK_KHR_get_physical_device_properties2";
    let mut exts = Vec::new();
    if avail.iter().any(|e| e.as_bytes() == gpdp2.to_bytes()) {
        exts.push(gpdp2.as_ptr());
    }
    let app = vk::ApplicationInfo::default()
        .application_name(c"ferrite-bench")
        .api_version(api);
    let info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_extension_names(&exts);
    let instance = entry
        .create_instance(&info, None)
        .map_err(|e| format!("vkCreateInstance: {e}"))?;
    let pds = instance.enumerate_physical_devices().unwrap_or_default();
    let Some(&pd) = pds.first() else {
        instance.destroy_instance(None);
        return Err("the loader exposes no Vulkan physical device".into());
    };
    let props = instance.get_physical_device_properties(pd);
    let dev_exts = ext_names(
        &instance
            .enumerate_device_extension_properties(pd)
            .unwrap_or_default(),
    );
    let has_pep = dev_exts
        .iter()
        .any(|e| e == "VK_KHR_pipeline_executable_properties");
    let families = instance.get_physical_device_queue_family_properties(pd);
    let queue_family = families
        .iter()
        .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .unwrap_or(0) as u32;
    Ok(Ctx {
        api: props.api_version.min(api),
        max_push: props.limits.max_push_constants_size,
        instance,
        pd,
        has_pep,
        queue_family,
    })
}

/// A device with every feature the driver supports (core, and the Vulkan 1.1/1.2/1.3 feature
/// structs when the device has them) plus pipeline-executable info when offered.
unsafe fn make_device(c: &Ctx) -> Result<ash::Device, String> {
    let minor = vk::api_version_minor(c.api);
    let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut core = vk::PhysicalDeviceFeatures2::default();
    if minor >= 2 {
        let mut q = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f11)
            .push_next(&mut f12);
        if minor >= 3 {
            q = q.push_next(&mut f13);
        }
        c.instance.get_physical_device_features2(c.pd, &mut q);
        core.features = q.features;
        f11.p_next = std::ptr::null_mut();
        f12.p_next = std::ptr::null_mut();
        f13.p_next = std::ptr::null_mut();
    } else {
        core.features = c.instance.get_physical_device_features(c.pd);
    }
    let mut pep = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true);
    let prio = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(c.queue_family)
        .queue_priorities(&prio)];
    let exts = [c"VK_KHR_pipeline_executable_properties".as_ptr()];
    let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
    if c.has_pep {
        info = info.enabled_extension_names(&exts).push_next(&mut pep);
    }
    if minor >= 2 {
        info = info
            .push_next(&mut core)
            .push_next(&mut f11)
            .push_next(&mut f12);
        if minor >= 3 {
            info = info.push_next(&mut f13);
        }
    } else {
        info = info.enabled_features(&core.features);
    }
    c.instance
        .create_device(c.pd, &info, None)
        .map_err(|e| format!("vkCreateDevice: {e}"))
}

/// Layouts and a shader module for one entry.
struct Prepared {
    module: vk::ShaderModule,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    layout: vk::PipelineLayout,
}

fn descriptor_type(k: corpus::DescriptorKind) -> vk::DescriptorType {
    use corpus::DescriptorKind as K;
    match k {
        K::UniformBuffer => vk::DescriptorType::UNIFORM_BUFFER,
        K::StorageBuffer => vk::DescriptorType::STORAGE_BUFFER,
        K::UniformTexelBuffer => vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
        K::StorageTexelBuffer => vk::DescriptorType::STORAGE_TEXEL_BUFFER,
        K::SampledImage => vk::DescriptorType::SAMPLED_IMAGE,
        K::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
        K::CombinedImageSampler => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        K::Sampler => vk::DescriptorType::SAMPLER,
    }
}

unsafe fn prepare(c: &Ctx, dev: &ash::Device, e: &Entry) -> Result<Prepared, String> {
    let iface = corpus::reflect(&e.spirv);
    let max_set = iface.bindings.iter().map(|b| b.set + 1).max().unwrap_or(0);
    let mut set_layouts = Vec::new();
    for s in 0..max_set {
        let binds: Vec<vk::DescriptorSetLayoutBinding> = iface
            .bindings
            .iter()
            .filter(|b| b.set == s)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b.binding)
                    .descriptor_type(descriptor_type(b.kind))
                    .descriptor_count(b.count)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&binds);
        set_layouts.push(
            dev.create_descriptor_set_layout(&info, None)
                .map_err(|e| format!("vkCreateDescriptorSetLayout: {e}"))?,
        );
    }
    let push = [vk::PushConstantRange {
        stage_flags: vk::ShaderStageFlags::COMPUTE,
        offset: 0,
        size: c.max_push.min(128),
    }];
    let mut pli = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
    if iface.push_constants {
        pli = pli.push_constant_ranges(&push);
    }
    let layout = dev
        .create_pipeline_layout(&pli, None)
        .map_err(|e| format!("vkCreatePipelineLayout: {e}"))?;
    let module = dev
        .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&e.spirv), None)
        .map_err(|e| format!("vkCreateShaderModule: {e}"))?;
    Ok(Prepared {
        module,
        set_layouts,
        layout,
    })
}

unsafe fn release(dev: &ash::Device, p: Prepared) {
    dev.destroy_shader_module(p.module, None);
    dev.destroy_pipeline_layout(p.layout, None);
    for l in p.set_layouts {
        dev.destroy_descriptor_set_layout(l, None);
    }
}

/// Creates the pipeline; returns it and the time of vkCreateComputePipelines in ms.
unsafe fn create(
    dev: &ash::Device,
    p: &Prepared,
    e: &Entry,
    flags: vk::PipelineCreateFlags,
) -> Result<(vk::Pipeline, f64), String> {
    create_cached(dev, p, e, flags, vk::PipelineCache::null())
}

/// [`create`] with a pipeline cache.
unsafe fn create_cached(
    dev: &ash::Device,
    p: &Prepared,
    e: &Entry,
    flags: vk::PipelineCreateFlags,
    cache: vk::PipelineCache,
) -> Result<(vk::Pipeline, f64), String> {
    let entry = std::ffi::CString::new(e.entry.as_str()).map_err(|e| e.to_string())?;
    let (map, data) = crate::icd::specialization(&e.specs);
    let spec = vk::SpecializationInfo::default()
        .map_entries(&map)
        .data(&data);
    let mut stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(p.module)
        .name(&entry);
    if !e.specs.is_empty() {
        stage = stage.specialization_info(&spec);
    }
    let info = [vk::ComputePipelineCreateInfo::default()
        .flags(flags)
        .stage(stage)
        .layout(p.layout)];
    let t = Instant::now();
    let r = dev.create_compute_pipelines(cache, &info, None);
    let elapsed = ms(t);
    match r {
        Ok(v) => Ok((v[0], elapsed)),
        Err((v, err)) => {
            for pl in v {
                if pl != vk::Pipeline::null() {
                    dev.destroy_pipeline(pl, None);
                }
            }
            Err(format!("vkCreateComputePipelines: {err}"))
        }
    }
}

unsafe fn timed_create(c: &Ctx, dev: &ash::Device, e: &Entry) -> Result<f64, String> {
    let p = prepare(c, dev, e)?;
    let r = create(dev, &p, e, vk::PipelineCreateFlags::empty());
    if let Ok((pl, _)) = &r {
        dev.destroy_pipeline(*pl, None);
    }
    release(dev, p);
    r.map(|(_, t)| t)
}

fn c_text(chars: &[std::ffi::c_char]) -> String {
    // A fixed-size C string buffer: stop at the first NUL.
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

unsafe fn stats_of(
    c: &Ctx,
    dev: &ash::Device,
    e: &Entry,
    dump: Option<&Path>,
    label: &str,
) -> Result<Json, String> {
    let p = prepare(c, dev, e)?;
    let flags = if c.has_pep {
        vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR
            | vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR
    } else {
        vk::PipelineCreateFlags::empty()
    };
    let r = create(dev, &p, e, flags);
    let (pl, _) = match r {
        Ok(x) => x,
        Err(err) => {
            release(dev, p);
            return Err(err);
        }
    };
    let mut out = Json::obj();
    if c.has_pep {
        match executable_stats(c, dev, pl, e, dump, label) {
            Ok(j) => {
                for (k, v) in j.members() {
                    out.set(k, v.clone());
                }
            }
            Err(err) => out.set("stats_error", err),
        }
    }
    dev.destroy_pipeline(pl, None);
    release(dev, p);
    Ok(out)
}

unsafe fn executable_stats(
    c: &Ctx,
    dev: &ash::Device,
    pl: vk::Pipeline,
    e: &Entry,
    dump: Option<&Path>,
    label: &str,
) -> Result<Json, String> {
    let pep = ash::khr::pipeline_executable_properties::Device::new(&c.instance, dev);
    let info = vk::PipelineInfoKHR::default().pipeline(pl);
    let execs = pep
        .get_pipeline_executable_properties(&info)
        .map_err(|e| format!("vkGetPipelineExecutablePropertiesKHR: {e}"))?;
    let Some(first) = execs.first() else {
        return Err("vkGetPipelineExecutablePropertiesKHR: no executable".into());
    };
    let mut out = Json::obj();
    out.set("simd", first.subgroup_size);
    out.set("executable", c_text(&first.description));
    let ei = vk::PipelineExecutableInfoKHR::default()
        .pipeline(pl)
        .executable_index(0);
    let stats = pep
        .get_pipeline_executable_statistics(&ei)
        .map_err(|e| format!("vkGetPipelineExecutableStatisticsKHR: {e}"))?;
    let mut st = Json::obj();
    for s in &stats {
        let v = match s.format {
            vk::PipelineExecutableStatisticFormatKHR::BOOL32 => f64::from(s.value.b32),
            vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64 as f64,
            vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64 as f64,
            vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => s.value.f64,
            _ => continue,
        };
        st.set(&c_text(&s.name), v);
    }
    if let Some(w) = st.get("Max dispatch width").and_then(Json::as_f64) {
        out.set("simd", w);
    }
    out.set("stats", st);
    if let Some(dir) = dump {
        // Internal representations: count, then sizes, then the data.
        let f = pep
            .fp()
            .get_pipeline_executable_internal_representations_khr;
        let mut n = 0u32;
        if f(dev.handle(), &ei, &mut n, std::ptr::null_mut()) == vk::Result::SUCCESS && n > 0 {
            let mut reps =
                vec![vk::PipelineExecutableInternalRepresentationKHR::default(); n as usize];
            if f(dev.handle(), &ei, &mut n, reps.as_mut_ptr()) == vk::Result::SUCCESS {
                let mut bufs: Vec<Vec<u8>> = reps.iter().map(|r| vec![0u8; r.data_size]).collect();
                for (r, b) in reps.iter_mut().zip(bufs.iter_mut()) {
                    r.p_data = b.as_mut_ptr().cast();
                }
                let res = f(dev.handle(), &ei, &mut n, reps.as_mut_ptr());
                if res == vk::Result::SUCCESS || res == vk::Result::INCOMPLETE {
                    let _ = std::fs::create_dir_all(dir);
                    let mut text = String::new();
                    for (r, b) in reps.iter().zip(&bufs) {
                        let body = if r.is_text != 0 {
                            let end = b.iter().position(|&x| x == 0).unwrap_or(b.len());
                            String::from_utf8_lossy(&b[..end]).into_owned()
                        } else {
                            format!("({} bytes of binary data)\n", b.len())
                        };
                        text.push_str(&format!(
                            "==== {}: {}\n{body}\n",
                            c_text(&r.name),
                            c_text(&r.description)
                        ));
                    }
                    let path = dir.join(format!("{}.{label}.txt", sanitize(&e.name)));
                    if std::fs::write(&path, text).is_ok() {
                        out.set("asm", path.display().to_string());
                    }
                }
            }
        }
    }
    Ok(out)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

/// Recording cost of 10,000 dispatches and the cost of an empty submit + fence wait.
unsafe fn overhead(c: &Ctx, spirv: &[u32], runs: usize) -> Result<Json, String> {
    let dev = make_device(c)?;
    let e = Entry {
        name: "overhead".into(),
        spirv: spirv.to_vec(),
        entry: "main".into(),
        specs: Vec::new(),
    };
    let r = overhead_on(c, &dev, &e, runs);
    let _ = dev.device_wait_idle();
    dev.destroy_device(None);
    r
}

unsafe fn overhead_on(c: &Ctx, dev: &ash::Device, e: &Entry, runs: usize) -> Result<Json, String> {
    let vkerr = |what: &'static str| move |r: vk::Result| format!("{what}: {r}");
    let p = prepare(c, dev, e)?;
    let (pl, _) = create(dev, &p, e, vk::PipelineCreateFlags::empty())?;
    let mut out = Json::obj();
    // vkCreateComputePipelines with a VkPipelineCache: a miss (fresh cache) then a hit.
    let mut miss = Vec::new();
    let mut hit = Vec::new();
    let r: Result<(), String> = (|| {
        for _ in 0..runs.max(5) {
            let cache = dev
                .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
                .map_err(vkerr("vkCreatePipelineCache"))?;
            let r = (|| {
                let (a, t_miss) =
                    create_cached(dev, &p, e, vk::PipelineCreateFlags::empty(), cache)?;
                dev.destroy_pipeline(a, None);
                let (b, t_hit) =
                    create_cached(dev, &p, e, vk::PipelineCreateFlags::empty(), cache)?;
                dev.destroy_pipeline(b, None);
                miss.push(Json::Num(t_miss));
                hit.push(Json::Num(t_hit));
                Ok::<(), String>(())
            })();
            dev.destroy_pipeline_cache(cache, None);
            r?;
        }
        Ok(())
    })();
    match r {
        Ok(()) => {
            out.set("cache_miss_ms", miss);
            out.set("cache_hit_ms", hit);
        }
        Err(e) => out.set("cache_error", e),
    }
    // A 256-byte storage buffer for the one binding.
    let (buf, mem, _, _) = crate::icd::bound_storage_buffer(dev, 256, |req| {
        (0..32)
            .find(|i| req.memory_type_bits & (1 << i) != 0)
            .ok_or_else(|| "no memory type for the buffer".to_string())
    })?;
    let sizes = [vk::DescriptorPoolSize {
        ty: vk::DescriptorType::STORAGE_BUFFER,
        descriptor_count: 1,
    }];
    let pool = dev
        .create_descriptor_pool(
            &vk::DescriptorPoolCreateInfo::default()
                .max_sets(1)
                .pool_sizes(&sizes),
            None,
        )
        .map_err(vkerr("vkCreateDescriptorPool"))?;
    let sets = dev
        .allocate_descriptor_sets(
            &vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(pool)
                .set_layouts(&p.set_layouts),
        )
        .map_err(vkerr("vkAllocateDescriptorSets"))?;
    let bi = [vk::DescriptorBufferInfo {
        buffer: buf,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let w = [vk::WriteDescriptorSet::default()
        .dst_set(sets[0])
        .dst_binding(0)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .buffer_info(&bi)];
    dev.update_descriptor_sets(&w, &[]);
    let cmd_pool = dev
        .create_command_pool(
            &vk::CommandPoolCreateInfo::default().queue_family_index(c.queue_family),
            None,
        )
        .map_err(vkerr("vkCreateCommandPool"))?;
    let cbs = crate::icd::primary_command_buffers(dev, cmd_pool, 2)
        .map_err(vkerr("vkAllocateCommandBuffers"))?;
    let begin = vk::CommandBufferBeginInfo::default();
    let mut record = Vec::new();
    let mut err = None;
    for _ in 0..runs.max(5) {
        let t = Instant::now();
        if let Err(e) = dev.begin_command_buffer(cbs[0], &begin) {
            err = Some(format!("vkBeginCommandBuffer: {e}"));
            break;
        }
        dev.cmd_bind_pipeline(cbs[0], vk::PipelineBindPoint::COMPUTE, pl);
        dev.cmd_bind_descriptor_sets(
            cbs[0],
            vk::PipelineBindPoint::COMPUTE,
            p.layout,
            0,
            &sets,
            &[],
        );
        for _ in 0..RECORDED_DISPATCHES {
            dev.cmd_dispatch(cbs[0], 1, 1, 1);
        }
        if let Err(e) = dev.end_command_buffer(cbs[0]) {
            err = Some(format!("vkEndCommandBuffer: {e}"));
            break;
        }
        record.push(ms(t));
        if let Err(e) = dev.reset_command_pool(cmd_pool, vk::CommandPoolResetFlags::empty()) {
            err = Some(format!("vkResetCommandPool: {e}"));
            break;
        }
    }
    match err.take() {
        Some(e) => out.set("record_error", e),
        None => out.set(
            "record_10k_ms",
            record.into_iter().map(Json::Num).collect::<Vec<_>>(),
        ),
    }
    // Empty batch: one command buffer with nothing in it.
    let r: Result<Vec<Json>, String> = (|| {
        dev.begin_command_buffer(cbs[1], &begin)
            .map_err(vkerr("vkBeginCommandBuffer"))?;
        dev.end_command_buffer(cbs[1])
            .map_err(vkerr("vkEndCommandBuffer"))?;
        let mut fence = dev
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .map_err(vkerr("vkCreateFence"))?;
        let queue = dev.get_device_queue(c.queue_family, 0);
        let submit = [vk::SubmitInfo::default().command_buffers(&cbs[1..2])];
        let mut samples = Vec::new();
        let res: Result<(), String> = (|| {
            for _ in 0..runs.max(5) {
                let mut per = Vec::new();
                for _ in 0..SUBMITS_PER_SAMPLE {
                    let t = Instant::now();
                    dev.queue_submit(queue, &submit, fence)
                        .map_err(vkerr("vkQueueSubmit"))?;
                    dev.wait_for_fences(&[fence], true, 10_000_000_000)
                        .map_err(vkerr("vkWaitForFences"))?;
                    per.push(ms(t));
                    // Outside the timed region. The noop drm-shim fails vkResetFences
                    // (no syncobj reset): a new fence does the same job there.
                    if dev.reset_fences(&[fence]).is_err() {
                        dev.destroy_fence(fence, None);
                        fence = dev
                            .create_fence(&vk::FenceCreateInfo::default(), None)
                            .map_err(vkerr("vkCreateFence"))?;
                    }
                }
                samples.push(Json::Num(median(&mut per)));
            }
            Ok(())
        })();
        let _ = dev.device_wait_idle();
        dev.destroy_fence(fence, None);
        res.map(|_| samples)
    })();
    match r {
        Ok(s) => out.set("submit_ms", s),
        Err(e) => out.set("submit_error", e),
    }
    dev.destroy_command_pool(cmd_pool, None);
    dev.destroy_descriptor_pool(pool, None);
    dev.destroy_pipeline(pl, None);
    dev.destroy_buffer(buf, None);
    dev.free_memory(mem, None);
    release(dev, p);
    Ok(out)
}

/// The GLSL of the overhead pipeline: one storage buffer at set 0, binding 0.
pub const OVERHEAD_GLSL: &str = "#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer B { uint v[]; };
void main() { v[gl_LocalInvocationIndex] = gl_LocalInvocationIndex; }
";
