//! VK_KHR_pipeline_executable_properties through the loader with the validation layer: the
//! feature bit, the one executable of a compute pipeline (SIMD width as subgroup size), anv's
//! statistic names with sane values, the internal representations (Ferrite IR and GEN assembly)
//! with the two-call protocol and VK_INCOMPLETE, capture flags honoured, statistics and IR kept
//! across pipeline-cache hits and a serialized cache.

mod compute_common;

use ash::vk;
use compute_common::spirv;
use ferrite_tests::icd::Harness;

/// A loop with a trip count from memory (cannot be unrolled), buffer reads and writes.
const SHADER: &str = r#"#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint n; uint v[]; } data;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint acc = 0u;
    for (uint k = 0u; k < data.n; ++k)
        acc += data.v[(i + k) & 255u] * (k + 1u);
    data.v[i] = acc;
}
"#;

/// anv's statistics, in anv's order (Mesa's anv_GetPipelineExecutableStatisticsKHR).
const ANV_NAMES: [&str; 7] = [
    "Instruction Count",
    "SEND Count",
    "Loop Count",
    "Cycle Count",
    "Spill Count",
    "Fill Count",
    "Max dispatch width",
];

struct Setup {
    h: Harness,
    dev: ash::Device,
    pep: ash::khr::pipeline_executable_properties::Device,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    module: vk::ShaderModule,
}

fn text(a: &[std::ffi::c_char]) -> String {
    // SAFETY: Vulkan name arrays are NUL-terminated within their length.
    unsafe { std::ffi::CStr::from_ptr(a.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

impl Setup {
    fn new(validation: bool) -> Setup {
        let h = Harness::with_instance_extensions(
            validation,
            &[ash::khr::get_physical_device_properties2::NAME],
        );
        let pd = h.physical_device();
        // SAFETY: live physical device.
        let exts = unsafe { h.instance.enumerate_device_extension_properties(pd) }.unwrap();
        assert!(exts
            .iter()
            .any(|e| text(&e.extension_name) == "VK_KHR_pipeline_executable_properties"));
        let mut supported = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut supported);
        let p2 = ash::khr::get_physical_device_properties2::Instance::new(&h.entry, &h.instance);
        // SAFETY: live physical device, valid output chain.
        unsafe { p2.get_physical_device_features2(pd, &mut f2) };
        assert_eq!(supported.pipeline_executable_info, vk::TRUE);

        let prio = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(0)
            .queue_priorities(&prio)];
        let dev_exts = [ash::khr::pipeline_executable_properties::NAME.as_ptr()];
        let mut feature = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
            .pipeline_executable_info(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&dev_exts)
            .push_next(&mut feature);
        // SAFETY: valid create infos; every object is destroyed in Drop.
        unsafe {
            let dev = ferrite_tests::icd::create_device(&h.instance, pd, &info).unwrap();
            let pep = ash::khr::pipeline_executable_properties::Device::new(&h.instance, &dev);
            let (set_layout, layout) =
                ferrite_tests::icd::storage_buffer_layout(&dev, 1, 0).unwrap();
            // Compiled once per process: the tests run in parallel and spirv() writes to a
            // per-process path named after the shader.
            static CODE: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
            let code = CODE.get_or_init(|| spirv("pipeline_executable", Some(SHADER)));
            let module = dev
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(code), None)
                .unwrap();
            Setup {
                h,
                dev,
                pep,
                set_layout,
                layout,
                module,
            }
        }
    }

    fn pipeline(&self, flags: vk::PipelineCreateFlags, cache: vk::PipelineCache) -> vk::Pipeline {
        let info = vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::COMPUTE)
                    .module(self.module)
                    .name(c"main"),
            )
            .layout(self.layout);
        // SAFETY: valid create info on a live device; destroyed by the caller.
        unsafe {
            self.dev
                .create_compute_pipelines(cache, &[info], None)
                .map_err(|(_, e)| e)
                .unwrap()[0]
        }
    }

    fn exe(&self, p: vk::Pipeline) -> vk::PipelineExecutableInfoKHR<'static> {
        vk::PipelineExecutableInfoKHR::default()
            .pipeline(p)
            .executable_index(0)
    }

    fn properties(&self, p: vk::Pipeline) -> Vec<vk::PipelineExecutablePropertiesKHR<'_>> {
        let info = vk::PipelineInfoKHR::default().pipeline(p);
        // SAFETY: live pipeline.
        unsafe { self.pep.get_pipeline_executable_properties(&info) }.unwrap()
    }

    fn statistics(&self, p: vk::Pipeline) -> Vec<(String, String, u64)> {
        // SAFETY: live pipeline created with CAPTURE_STATISTICS (or no validation).
        let stats = unsafe { self.pep.get_pipeline_executable_statistics(&self.exe(p)) }.unwrap();
        stats
            .iter()
            .map(|s| {
                assert_eq!(s.format, vk::PipelineExecutableStatisticFormatKHR::UINT64);
                // SAFETY: the format says u64.
                (text(&s.name), text(&s.description), unsafe { s.value.u64 })
            })
            .collect()
    }

    /// (name, text) of every internal representation, via the full two-call protocol.
    fn representations(&self, p: vk::Pipeline) -> Vec<(String, String)> {
        let f = self
            .pep
            .fp()
            .get_pipeline_executable_internal_representations_khr;
        let exe = self.exe(p);
        let mut n = 0u32;
        // SAFETY: live pipeline, valid count pointer.
        let r = unsafe { f(self.dev.handle(), &exe, &mut n, std::ptr::null_mut()) };
        assert_eq!(r, vk::Result::SUCCESS);
        let mut reps = vec![vk::PipelineExecutableInternalRepresentationKHR::default(); n as usize];
        // SAFETY: n structures with null pData: sizes only.
        let r = unsafe { f(self.dev.handle(), &exe, &mut n, reps.as_mut_ptr()) };
        assert_eq!(r, vk::Result::SUCCESS);
        let mut bufs: Vec<Vec<u8>> = reps.iter().map(|r| vec![0xAAu8; r.data_size]).collect();
        for (r, b) in reps.iter_mut().zip(bufs.iter_mut()) {
            r.p_data = b.as_mut_ptr().cast();
        }
        // SAFETY: every pData holds dataSize bytes.
        let r = unsafe { f(self.dev.handle(), &exe, &mut n, reps.as_mut_ptr()) };
        assert_eq!(r, vk::Result::SUCCESS);
        reps.iter()
            .zip(&bufs)
            .map(|(r, b)| {
                assert_eq!(r.is_text, vk::TRUE);
                assert_eq!(r.data_size, b.len());
                assert_eq!(b.last(), Some(&0), "text ends with its NUL");
                assert!(!text(&r.description).is_empty());
                let t = String::from_utf8(b[..b.len() - 1].to_vec()).expect("UTF-8 text");
                (text(&r.name), t)
            })
            .collect()
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        // SAFETY: objects of this setup, no longer in use.
        unsafe {
            self.dev.destroy_shader_module(self.module, None);
            self.dev.destroy_pipeline_layout(self.layout, None);
            self.dev
                .destroy_descriptor_set_layout(self.set_layout, None);
            ferrite_tests::icd::destroy_device(&self.dev);
        }
    }
}

const CAPTURE_ALL: vk::PipelineCreateFlags = vk::PipelineCreateFlags::from_raw(
    vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR.as_raw()
        | vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR.as_raw(),
);

#[test]
fn executable_statistics_and_representations_are_sane() {
    let s = Setup::new(true);
    let p = s.pipeline(CAPTURE_ALL, vk::PipelineCache::null());

    let props = s.properties(p);
    assert_eq!(props.len(), 1, "one executable per compute pipeline");
    let simd = props[0].subgroup_size;
    assert!([8, 16, 32].contains(&simd), "SIMD width {simd}");
    assert_eq!(props[0].stages, vk::ShaderStageFlags::COMPUTE);
    assert_eq!(text(&props[0].name), "compute");
    assert_eq!(
        text(&props[0].description),
        format!("SIMD{simd} compute shader")
    );

    let stats = s.statistics(p);
    let names: Vec<&str> = stats.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(&names[..7], &ANV_NAMES, "anv's names, in anv's order");
    let get = |name: &str| stats.iter().find(|(n, _, _)| n == name).unwrap().2;
    assert!(stats.iter().all(|(_, d, _)| !d.is_empty()));
    let instructions = get("Instruction Count");
    assert!(
        (10..2000).contains(&instructions),
        "{instructions} instructions"
    );
    // Two reads of the buffer, one write, the end-of-thread send.
    let sends = get("SEND Count");
    assert!((3..instructions).contains(&sends), "{sends} sends");
    assert_eq!(
        get("Loop Count"),
        1,
        "the loop has a trip count from memory"
    );
    assert!(get("Cycle Count") >= instructions, "cycles >= instructions");
    assert_eq!((get("Spill Count"), get("Fill Count")), (0, 0));
    assert_eq!(get("Max dispatch width"), u64::from(simd));
    assert_eq!(get("Scratch Memory Size"), 0, "no spills, no scratch");
    assert_eq!(get("Workgroup Memory Size"), 0, "no shared memory");
    assert!((3..=128).contains(&get("GRF Registers")));
    assert!(get("Compile Time (us)") > 0);

    let reps = s.representations(p);
    let names: Vec<&str> = reps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Ferrite IR", "GEN Assembly"]);
    assert!(!reps[0].1.trim().is_empty(), "IR text");
    let asm = &reps[1].1;
    assert!(
        asm.contains("send") && asm.contains("EOT"),
        "assembly:\n{asm}"
    );
    // SAFETY: live pipeline.
    unsafe { s.dev.destroy_pipeline(p, None) };
    s.h.assert_clean();
}

#[test]
fn two_call_protocol_reports_incomplete() {
    let s = Setup::new(true);
    let p = s.pipeline(CAPTURE_ALL, vk::PipelineCache::null());
    let exe = s.exe(p);
    let fp = s.pep.fp();
    let dev = s.dev.handle();
    // SAFETY: live pipeline; every array holds the count passed in.
    unsafe {
        // Properties: room for none.
        let info = vk::PipelineInfoKHR::default().pipeline(p);
        let mut props = [vk::PipelineExecutablePropertiesKHR::default()];
        let mut n = 0u32;
        let r = (fp.get_pipeline_executable_properties_khr)(dev, &info, &mut n, props.as_mut_ptr());
        assert_eq!((r, n), (vk::Result::INCOMPLETE, 0));

        // Statistics: three of them.
        let mut total = 0u32;
        let r = (fp.get_pipeline_executable_statistics_khr)(
            dev,
            &exe,
            &mut total,
            std::ptr::null_mut(),
        );
        assert_eq!(r, vk::Result::SUCCESS);
        assert!(total >= 7, "{total} statistics");
        let mut stats = vec![vk::PipelineExecutableStatisticKHR::default(); total as usize];
        let mut n = 3u32;
        let r = (fp.get_pipeline_executable_statistics_khr)(dev, &exe, &mut n, stats.as_mut_ptr());
        assert_eq!((r, n), (vk::Result::INCOMPLETE, 3));
        assert_eq!(text(&stats[2].name), "Loop Count");
        assert_eq!(text(&stats[3].name), "", "nothing written past the count");

        // Representations: one of two, then a short text buffer.
        let f = fp.get_pipeline_executable_internal_representations_khr;
        let mut reps = [vk::PipelineExecutableInternalRepresentationKHR::default(); 2];
        let mut n = 1u32;
        let r = f(dev, &exe, &mut n, reps.as_mut_ptr());
        assert_eq!((r, n), (vk::Result::INCOMPLETE, 1));
        assert_eq!(text(&reps[0].name), "Ferrite IR");
        assert_eq!(text(&reps[1].name), "");
        let mut n = 2u32;
        let r = f(dev, &exe, &mut n, reps.as_mut_ptr());
        assert_eq!((r, n), (vk::Result::SUCCESS, 2));
        let full = reps[1].data_size;
        assert!(full > 16);
        let mut short = vec![0xAAu8; 16];
        let mut big = vec![0xAAu8; reps[0].data_size];
        reps[0].p_data = big.as_mut_ptr().cast();
        reps[1].p_data = short.as_mut_ptr().cast();
        reps[1].data_size = short.len();
        let r = f(dev, &exe, &mut n, reps.as_mut_ptr());
        assert_eq!(r, vk::Result::INCOMPLETE);
        assert_eq!(reps[0].data_size, big.len(), "the first fits");
        assert_eq!(reps[1].data_size, 16, "bytes written");
        assert_eq!(short[15], 0, "truncated text still NUL-terminated");
        assert!(short[..15].iter().all(|&b| b != 0 && b != 0xAA));
        s.dev.destroy_pipeline(p, None);
    }
    s.h.assert_clean();
}

#[test]
fn capture_flags_are_honoured_and_kept_across_cache_hits() {
    let s = Setup::new(true);
    // SAFETY: valid create infos; objects destroyed below.
    unsafe {
        let cache = s
            .dev
            .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
            .unwrap();
        // Compiled without capture: the cache entry has no IR text.
        let plain = s.pipeline(vk::PipelineCreateFlags::empty(), cache);
        assert_eq!(s.properties(plain).len(), 1, "properties need no flag");
        // Same shader with capture: must still get statistics and IR (recompiled or cached).
        let first = s.pipeline(CAPTURE_ALL, cache);
        let stats = s.statistics(first);
        let reps = s.representations(first);
        assert_eq!(reps.len(), 2);
        // A hit now: identical figures (compile time is the original compilation's) and text.
        let hit = s.pipeline(CAPTURE_ALL, cache);
        assert_eq!(s.statistics(hit), stats);
        assert_eq!(s.representations(hit), reps);
        // Through serialized cache data into a new cache.
        let data = s.dev.get_pipeline_cache_data(cache).unwrap();
        let cache2 = s
            .dev
            .create_pipeline_cache(
                &vk::PipelineCacheCreateInfo::default().initial_data(&data),
                None,
            )
            .unwrap();
        let loaded = s.pipeline(CAPTURE_ALL, cache2);
        assert_eq!(s.statistics(loaded), stats);
        assert_eq!(s.representations(loaded), reps);
        // Statistics only, from the cache: the same statistics.
        let stats_only = s.pipeline(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR, cache2);
        assert_eq!(s.statistics(stats_only), stats);
        for p in [plain, first, hit, loaded, stats_only] {
            s.dev.destroy_pipeline(p, None);
        }
        s.dev.destroy_pipeline_cache(cache, None);
        s.dev.destroy_pipeline_cache(cache2, None);
    }
    s.h.assert_clean();
}

#[test]
fn without_capture_flags_nothing_is_reported() {
    // Asking a pipeline created without the capture flags is invalid usage, so no validation
    // layer here: the driver answers with empty lists instead of crashing.
    let s = Setup::new(false);
    // SAFETY: valid create info; destroyed below.
    let cache = unsafe {
        s.dev
            .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
    }
    .unwrap();
    // The cache entry has statistics and IR; pipelines that did not ask do not report them.
    let all = s.pipeline(CAPTURE_ALL, cache);
    assert_eq!(s.representations(all).len(), 2);
    let p = s.pipeline(vk::PipelineCreateFlags::empty(), cache);
    assert!(s.statistics(p).is_empty());
    assert!(s.representations(p).is_empty());
    let stats_only = s.pipeline(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR, cache);
    assert_eq!(s.statistics(stats_only), s.statistics(all));
    assert!(s.representations(stats_only).is_empty());
    // A second executable does not exist.
    let mut exe = s.exe(p);
    exe.executable_index = 1;
    let mut n = 0u32;
    // SAFETY: live pipeline (invalid index on purpose).
    let r = unsafe {
        (s.pep.fp().get_pipeline_executable_statistics_khr)(
            s.dev.handle(),
            &exe,
            &mut n,
            std::ptr::null_mut(),
        )
    };
    assert_ne!(r, vk::Result::SUCCESS);
    // SAFETY: live objects.
    unsafe {
        for p in [all, p, stats_only] {
            s.dev.destroy_pipeline(p, None);
        }
        s.dev.destroy_pipeline_cache(cache, None);
    }
}
