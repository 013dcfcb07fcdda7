//! Compute pipelines compiled on several threads at once through the loader, as llama.cpp's
//! ggml Vulkan back end does (it creates each pipeline on a task of its own, all sharing one
//! device): every creation must succeed and give the same GEN code as on one thread.
//!
//! The shader is modelled on ggml's `mul_mat_vec`: a row block per workgroup, a strided dot
//! product per invocation and a tree reduction through shared memory, sized by specialization
//! constants (block size, rows per workgroup), so each variant is a different pipeline.
//! Validation is on (zero messages).

mod compute_common;

use ash::vk;
use compute_common::spirv;
use ferrite_tests::icd::Harness;

const SHADER: &str = r#"#version 450
layout(constant_id = 0) const uint BLOCK_SIZE = 32;
layout(constant_id = 1) const uint NUM_ROWS = 1;
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint ncols; uint nrows; } p;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer D { float d[]; };
shared float tmp[NUM_ROWS][BLOCK_SIZE];
void main() {
    uint tid = gl_LocalInvocationID.x;
    uint first_row = gl_WorkGroupID.x * NUM_ROWS;
    float acc[NUM_ROWS];
    for (uint n = 0; n < NUM_ROWS; ++n) acc[n] = 0.0;
    for (uint col = tid; col < p.ncols; col += BLOCK_SIZE) {
        float bv = b[col];
        for (uint n = 0; n < NUM_ROWS; ++n)
            acc[n] = fma(a[(first_row + n) * p.ncols + col], bv, acc[n]);
    }
    for (uint n = 0; n < NUM_ROWS; ++n) tmp[n][tid] = acc[n];
    barrier();
    for (uint s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s)
            for (uint n = 0; n < NUM_ROWS; ++n) tmp[n][tid] += tmp[n][tid + s];
        barrier();
    }
    if (tid == 0)
        for (uint n = 0; n < NUM_ROWS; ++n)
            if (first_row + n < p.nrows) d[first_row + n] = tmp[n][0];
}
"#;

/// (BLOCK_SIZE, NUM_ROWS) of each pipeline.
const VARIANTS: [(u32, u32); 8] = [
    (32, 1),
    (32, 2),
    (32, 4),
    (64, 1),
    (64, 2),
    (128, 1),
    (128, 4),
    (256, 2),
];
const THREADS: usize = 4;

/// The "GEN assembly" internal representation of pipeline `p`.
fn assembly(
    dev: &ash::Device,
    pep: &ash::khr::pipeline_executable_properties::Device,
    p: vk::Pipeline,
) -> String {
    let f = pep
        .fp()
        .get_pipeline_executable_internal_representations_khr;
    let exe = vk::PipelineExecutableInfoKHR::default()
        .pipeline(p)
        .executable_index(0);
    let mut n = 0u32;
    // SAFETY: live pipeline created with CAPTURE_INTERNAL_REPRESENTATIONS; valid pointers.
    unsafe {
        assert_eq!(
            f(dev.handle(), &exe, &mut n, std::ptr::null_mut()),
            vk::Result::SUCCESS
        );
        let mut reps = vec![vk::PipelineExecutableInternalRepresentationKHR::default(); n as usize];
        assert_eq!(
            f(dev.handle(), &exe, &mut n, reps.as_mut_ptr()),
            vk::Result::SUCCESS
        );
        let mut bufs: Vec<Vec<u8>> = reps.iter().map(|r| vec![0u8; r.data_size]).collect();
        for (r, b) in reps.iter_mut().zip(bufs.iter_mut()) {
            r.p_data = b.as_mut_ptr().cast();
        }
        assert_eq!(
            f(dev.handle(), &exe, &mut n, reps.as_mut_ptr()),
            vk::Result::SUCCESS
        );
        let i = reps
            .iter()
            .position(|r| {
                std::ffi::CStr::from_ptr(r.name.as_ptr()).to_string_lossy() == "GEN Assembly"
            })
            .expect("a GEN assembly representation");
        String::from_utf8_lossy(&bufs[i]).into_owned()
    }
}

/// Creates the pipeline of variant `v` (module and layout shared) and returns its assembly.
fn create(
    dev: &ash::Device,
    pep: &ash::khr::pipeline_executable_properties::Device,
    module: vk::ShaderModule,
    layout: vk::PipelineLayout,
    v: (u32, u32),
) -> Result<String, vk::Result> {
    let entries = [0u32, 1].map(|i| vk::SpecializationMapEntry {
        constant_id: i,
        offset: 4 * i,
        size: 4,
    });
    let data: Vec<u8> = [v.0, v.1].iter().flat_map(|x| x.to_le_bytes()).collect();
    let spec = vk::SpecializationInfo::default()
        .map_entries(&entries)
        .data(&data);
    let info = vk::ComputePipelineCreateInfo::default()
        .flags(vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR)
        .stage(
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main")
                .specialization_info(&spec),
        )
        .layout(layout);
    // SAFETY: valid create info on a live device; the pipeline is destroyed here.
    unsafe {
        let p = dev
            .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
            .map_err(|(_, e)| e)?[0];
        let asm = assembly(dev, pep, p);
        dev.destroy_pipeline(p, None);
        Ok(asm)
    }
}

#[test]
fn pipelines_compiled_on_several_threads_at_once_match_one_thread() {
    let h =
        Harness::with_instance_extensions(true, &[ash::khr::get_physical_device_properties2::NAME]);
    let pd = h.physical_device();
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
    let code = spirv("pipeline_threads", Some(SHADER));
    // SAFETY: valid create infos; every object is destroyed at the end.
    unsafe {
        let dev = ferrite_tests::icd::create_device(&h.instance, pd, &info).unwrap();
        let pep = ash::khr::pipeline_executable_properties::Device::new(&h.instance, &dev);
        let (set_layout, layout) = ferrite_tests::icd::storage_buffer_layout(&dev, 3, 8).unwrap();
        let module = dev
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
            .unwrap();

        // One thread first: the reference code of every variant.
        let reference: Vec<String> = VARIANTS
            .iter()
            .map(|&v| create(&dev, &pep, module, layout, v).expect("vkCreateComputePipelines"))
            .collect();

        // Then THREADS threads at once, each over every variant in its own order (a rotation,
        // so different variants compile side by side), twice.
        let results: Vec<Vec<(usize, Result<String, vk::Result>)>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (dev, pep) = (&dev, &pep);
                    s.spawn(move || {
                        let mut out = Vec::new();
                        for round in 0..2 {
                            for k in 0..VARIANTS.len() {
                                let i = (k + t * 3 + round) % VARIANTS.len();
                                out.push((i, create(dev, pep, module, layout, VARIANTS[i])));
                            }
                        }
                        out
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (t, rs) in results.iter().enumerate() {
            for (i, r) in rs {
                let (bs, rows) = VARIANTS[*i];
                match r {
                    Ok(asm) => assert!(
                        *asm == reference[*i],
                        "thread {t}: BLOCK_SIZE={bs} NUM_ROWS={rows} compiled to other code \
                         than on one thread"
                    ),
                    Err(e) => panic!(
                        "thread {t}: BLOCK_SIZE={bs} NUM_ROWS={rows}: vkCreateComputePipelines \
                         failed with {e:?}"
                    ),
                }
            }
        }
        dev.destroy_shader_module(module, None);
        dev.destroy_pipeline_layout(layout, None);
        dev.destroy_descriptor_set_layout(set_layout, None);
        ferrite_tests::icd::destroy_device(&dev);
    }
    h.assert_clean();
}
