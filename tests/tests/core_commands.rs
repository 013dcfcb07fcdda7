//! Commands and structures of the Vulkan 1.1–1.3 compute surface that Ferrite offers as
//! extensions while it reports an older apiVersion, through the loader with validation:
//! VK_EXT_host_query_reset (vkResetQueryPool from the CPU), VK_EXT_private_data (slots
//! holding a u64 per object), VK_KHR_driver_properties, and the feature rows answering the
//! extension structures and VkPhysicalDeviceVulkan12/13Features alike.

mod compute_common;

use ash::vk;
use ash::vk::Handle;
use compute_common::*;
use ferrite_tests::icd::Harness;

const DEVICE_EXTS: [&std::ffi::CStr; 2] = [c"VK_EXT_host_query_reset", c"VK_EXT_private_data"];

/// A context whose device has the two extensions and their features enabled.
fn ctx() -> Ctx {
    let h = Harness::with_instance_extensions(true, &[c"VK_KHR_get_physical_device_properties2"]);
    let pd = h.physical_device();
    let prio = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(0)
        .queue_priorities(&prio)];
    let names: Vec<_> = DEVICE_EXTS.iter().map(|e| e.as_ptr()).collect();
    let mut hqr = vk::PhysicalDeviceHostQueryResetFeatures::default().host_query_reset(true);
    let mut pdf = vk::PhysicalDevicePrivateDataFeatures::default().private_data(true);
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&names)
        .push_next(&mut hqr)
        .push_next(&mut pdf);
    // SAFETY: valid create info for a live physical device.
    let dev = unsafe { h.instance.create_device(pd, &info, None) }.expect("vkCreateDevice");
    Ctx::with_device(h, pd, dev)
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
