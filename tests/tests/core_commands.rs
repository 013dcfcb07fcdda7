//! Commands and structures of the Vulkan 1.1–1.3 compute surface that Ferrite offers as
//! extensions while it reports an older apiVersion, through the loader with validation:
//! VK_EXT_host_query_reset (vkResetQueryPool from the CPU), VK_EXT_private_data (slots
//! holding a u64 per object), VK_EXT_pipeline_creation_cache_control (FAIL_ON_PIPELINE_COMPILE_
//! REQUIRED, EARLY_RETURN_ON_FAILURE), VK_EXT_pipeline_creation_feedback, VK_KHR_driver_properties,
//! and the feature rows answering the
//! extension structures and VkPhysicalDeviceVulkan12/13Features alike.

mod compute_common;

use ash::vk;
use ash::vk::Handle;
use compute_common::*;
use ferrite_tests::icd::{storage_buffer_layout, Harness};

const DEVICE_EXTS: [&std::ffi::CStr; 6] = [
    c"VK_KHR_get_memory_requirements2",
    c"VK_KHR_dedicated_allocation",
    c"VK_EXT_host_query_reset",
    c"VK_EXT_private_data",
    c"VK_EXT_pipeline_creation_cache_control",
    c"VK_EXT_pipeline_creation_feedback",
];

/// A context whose device has the extensions and their features enabled.
fn ctx() -> Ctx {
    let h = Harness::with_instance_extensions(true, &[c"VK_KHR_get_physical_device_properties2"]);
    let names: Vec<_> = DEVICE_EXTS.iter().map(|e| e.as_ptr()).collect();
    let mut hqr = vk::PhysicalDeviceHostQueryResetFeatures::default().host_query_reset(true);
    let mut pdf = vk::PhysicalDevicePrivateDataFeatures::default().private_data(true);
    let mut pcc = vk::PhysicalDevicePipelineCreationCacheControlFeatures::default()
        .pipeline_creation_cache_control(true);
    let info = vk::DeviceCreateInfo::default()
        .enabled_extension_names(&names)
        .push_next(&mut hqr)
        .push_next(&mut pdf)
        .push_next(&mut pcc);
    Ctx::with_create_info(h, info)
}

#[test]
fn host_query_reset_clears_availability_written_by_the_gpu() {
    let c = ctx();
    let hqr = ash::ext::host_query_reset::Device::new(&c.h.instance, &c.dev);
    // SAFETY: valid objects on a live device; the pool is destroyed before the context.
    unsafe {
        let pool = c
            .dev
            .create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(4),
                None,
            )
            .unwrap();
        // A pool is created unavailable-undefined: the host reset makes every query unavailable.
        (hqr.fp().reset_query_pool_ext)(c.dev.handle(), pool, 0, 4);
        c.run(|d, cb| {
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 1);
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2);
        })
        .unwrap();
        let avail = |first: u32, n: usize| -> Vec<u64> {
            let mut out = vec![[0u64; 2]; n];
            let r = c.dev.get_query_pool_results(
                pool,
                first,
                &mut out,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY,
            );
            assert!(
                matches!(r, Ok(()) | Err(vk::Result::NOT_READY)),
                "vkGetQueryPoolResults: {r:?}"
            );
            out.iter().map(|q| q[1]).collect()
        };
        let before = avail(0, 4);
        assert_eq!(before[0], 0, "query 0 was never written");
        assert!(
            before[1] != 0 && before[2] != 0,
            "written queries: {before:?}"
        );
        assert_eq!(before[3], 0);
        // Reset only query 2 from the host; query 1 keeps its value.
        (hqr.fp().reset_query_pool_ext)(c.dev.handle(), pool, 2, 1);
        let after = avail(0, 4);
        assert!(after[1] != 0, "query 1 must stay available: {after:?}");
        assert_eq!(after[2], 0, "query 2 was reset: {after:?}");
        c.dev.destroy_query_pool(pool, None);
    }
    c.finish();
}

#[test]
fn private_data_round_trips_per_slot_and_object() {
    let c = ctx();
    let pd = ash::ext::private_data::Device::new(&c.h.instance, &c.dev);
    // SAFETY: valid objects on a live device; everything made here is destroyed here.
    unsafe {
        let a = pd
            .create_private_data_slot(&vk::PrivateDataSlotCreateInfo::default(), None)
            .unwrap();
        let b = pd
            .create_private_data_slot(&vk::PrivateDataSlotCreateInfo::default(), None)
            .unwrap();
        assert_ne!(a.as_raw(), b.as_raw());
        let fence = c.fence();
        let queue = c.queue;
        pd.set_private_data(fence, a, 0x1234_5678_9abc_def0)
            .unwrap();
        pd.set_private_data(fence, b, 7).unwrap();
        pd.set_private_data(queue, a, 42).unwrap();
        assert_eq!(pd.get_private_data(fence, a), 0x1234_5678_9abc_def0);
        assert_eq!(pd.get_private_data(fence, b), 7);
        assert_eq!(pd.get_private_data(queue, a), 42);
        // A pair never set reads 0.
        assert_eq!(pd.get_private_data(queue, b), 0);
        pd.destroy_private_data_slot(a, None);
        pd.destroy_private_data_slot(b, None);
        c.dev.destroy_fence(fence, None);
    }
    c.finish();
}

#[test]
fn extension_and_core_structures_report_the_same_rows() {
    let h = Harness::with_instance_extensions(false, &[c"VK_KHR_get_physical_device_properties2"]);
    let pd = h.physical_device();
    let gpdp2 = ash::khr::get_physical_device_properties2::Instance::new(&h.entry, &h.instance);
    let mut hqr = vk::PhysicalDeviceHostQueryResetFeatures::default();
    let mut pdf = vk::PhysicalDevicePrivateDataFeatures::default();
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut v13 = vk::PhysicalDeviceVulkan13Features {
        // Unsupported members come back false whatever the application left there.
        dynamic_rendering: vk::TRUE,
        ..Default::default()
    };
    let mut f2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut hqr)
        .push_next(&mut pdf)
        .push_next(&mut v12)
        .push_next(&mut v13);
    // SAFETY: live physical device, valid chain.
    unsafe { gpdp2.get_physical_device_features2(pd, &mut f2) };
    assert_eq!(hqr.host_query_reset, vk::TRUE);
    assert_eq!(v12.host_query_reset, vk::TRUE);
    assert_eq!(pdf.private_data, vk::TRUE);
    assert_eq!(v13.private_data, vk::TRUE);
    assert_eq!(v13.synchronization2, vk::TRUE);
    assert_eq!(v13.dynamic_rendering, vk::FALSE);

    let mut drv = vk::PhysicalDeviceDriverProperties::default();
    let mut v12p = vk::PhysicalDeviceVulkan12Properties::default();
    let mut sg = vk::PhysicalDeviceSubgroupProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut drv)
        .push_next(&mut v12p)
        .push_next(&mut sg);
    // SAFETY: as above.
    unsafe { gpdp2.get_physical_device_properties2(pd, &mut p2) };
    let api = p2.properties.api_version;
    assert_eq!(drv.driver_name_as_c_str().unwrap(), c"Ferrite");
    assert_eq!(drv.driver_name, v12p.driver_name);
    assert_eq!(drv.driver_info, v12p.driver_info);
    // Subgroup stages/operations are reported from Vulkan 1.1 on, where shaders using them
    // are accepted.
    if api < vk::API_VERSION_1_1 {
        assert!(sg.supported_operations.is_empty(), "{sg:?}");
    } else {
        assert!(sg.supported_stages.contains(vk::ShaderStageFlags::COMPUTE));
        assert!(sg
            .supported_operations
            .contains(vk::SubgroupFeatureFlags::BASIC));
    }
    assert_eq!(sg.subgroup_size, 32);
}

const STORE: &str = "#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer O { uint o[]; };
void main() { o[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x * 3u; }
";

/// Creates one compute pipeline with `flags`, asking for creation feedback.
fn create(
    c: &Ctx,
    cache: vk::PipelineCache,
    module: vk::ShaderModule,
    layout: vk::PipelineLayout,
    flags: vk::PipelineCreateFlags,
) -> (vk::Result, vk::Pipeline, vk::PipelineCreationFeedback) {
    let mut pipeline_fb = vk::PipelineCreationFeedback::default();
    let mut stage_fb = [vk::PipelineCreationFeedback::default()];
    let mut fb = vk::PipelineCreationFeedbackCreateInfo::default()
        .pipeline_creation_feedback(&mut pipeline_fb)
        .pipeline_stage_creation_feedbacks(&mut stage_fb);
    let info = vk::ComputePipelineCreateInfo::default()
        .flags(flags)
        .stage(
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main"),
        )
        .layout(layout)
        .push_next(&mut fb);
    // SAFETY: valid objects on a live device.
    let (r, p) = match unsafe { c.dev.create_compute_pipelines(cache, &[info], None) } {
        Ok(p) => (vk::Result::SUCCESS, p[0]),
        Err((p, r)) => (r, p[0]),
    };
    assert_eq!(stage_fb[0].flags, pipeline_fb.flags);
    (r, p, pipeline_fb)
}

#[test]
fn compile_required_cache_control_and_creation_feedback() {
    let c = ctx();
    let words = spirv("core_store", Some(STORE));
    // SAFETY: valid objects on a live device; everything made here is destroyed here.
    unsafe {
        let module = c
            .dev
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
            .unwrap();
        let (set_layout, layout) = storage_buffer_layout(&c.dev, 1, 0).unwrap();
        let cache = c
            .dev
            .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
            .unwrap();
        let fail = vk::PipelineCreateFlags::FAIL_ON_PIPELINE_COMPILE_REQUIRED;
        // An empty cache: the compile is required, the pipeline is VK_NULL_HANDLE.
        let (r, p, _) = create(&c, cache, module, layout, fail);
        assert_eq!(
            (r, p),
            (vk::Result::PIPELINE_COMPILE_REQUIRED, vk::Pipeline::null())
        );
        // Compiled into the cache: feedback is valid, not a cache hit.
        let (r, p1, fb) = create(&c, cache, module, layout, vk::PipelineCreateFlags::empty());
        assert_eq!(r, vk::Result::SUCCESS);
        assert_ne!(p1, vk::Pipeline::null());
        assert_eq!(fb.flags, vk::PipelineCreationFeedbackFlags::VALID);
        // Now the cache holds it: the flag succeeds, and the feedback says hit.
        let (r, p2, fb) = create(&c, cache, module, layout, fail);
        assert_eq!(r, vk::Result::SUCCESS);
        assert_ne!(p2, vk::Pipeline::null());
        assert_eq!(
            fb.flags,
            vk::PipelineCreationFeedbackFlags::VALID
                | vk::PipelineCreationFeedbackFlags::APPLICATION_PIPELINE_CACHE_HIT
        );
        // EARLY_RETURN_ON_FAILURE: the first fails (another cache, empty), the second is not
        // created and reads VK_NULL_HANDLE.
        let empty = c
            .dev
            .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
            .unwrap();
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let infos = [
            vk::ComputePipelineCreateInfo::default()
                .flags(fail | vk::PipelineCreateFlags::EARLY_RETURN_ON_FAILURE)
                .stage(stage)
                .layout(layout),
            vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout),
        ];
        let r = c.dev.create_compute_pipelines(empty, &infos, None);
        let Err((ps, code)) = r else {
            panic!("expected PIPELINE_COMPILE_REQUIRED, got {r:?}");
        };
        assert_eq!(code, vk::Result::PIPELINE_COMPILE_REQUIRED);
        assert_eq!(ps, [vk::Pipeline::null(), vk::Pipeline::null()]);
        for p in [p1, p2] {
            c.dev.destroy_pipeline(p, None);
        }
        c.dev.destroy_pipeline_cache(cache, None);
        c.dev.destroy_pipeline_cache(empty, None);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
        c.dev.destroy_shader_module(module, None);
    }
    c.finish();
}

#[test]
fn dedicated_allocation_is_neither_preferred_nor_required_and_accepted() {
    let c = ctx();
    let gmr2 = ash::khr::get_memory_requirements2::Device::new(&c.h.instance, &c.dev);
    // SAFETY: valid objects on a live device; everything made here is destroyed here.
    unsafe {
        let buffer = c
            .dev
            .create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(1000)
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER),
                None,
            )
            .unwrap();
        // Start from TRUE so the test sees the driver write FALSE.
        let mut ded = vk::MemoryDedicatedRequirements {
            prefers_dedicated_allocation: vk::TRUE,
            requires_dedicated_allocation: vk::TRUE,
            ..Default::default()
        };
        let mut req = vk::MemoryRequirements2::default().push_next(&mut ded);
        gmr2.get_buffer_memory_requirements2(
            &vk::BufferMemoryRequirementsInfo2::default().buffer(buffer),
            &mut req,
        );
        let r = req.memory_requirements;
        assert_eq!(r.size, 1000);
        assert_eq!(
            (
                ded.prefers_dedicated_allocation,
                ded.requires_dedicated_allocation
            ),
            (vk::FALSE, vk::FALSE)
        );
        let mut dinfo = vk::MemoryDedicatedAllocateInfo::default().buffer(buffer);
        let mem = c
            .dev
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(r.size)
                    .memory_type_index(r.memory_type_bits.trailing_zeros())
                    .push_next(&mut dinfo),
                None,
            )
            .unwrap();
        c.dev.bind_buffer_memory(buffer, mem, 0).unwrap();
        c.dev.destroy_buffer(buffer, None);
        c.dev.free_memory(mem, None);
    }
    c.finish();
}
