//! Instance-level behaviour of Ferrite through the real Vulkan loader, with validation on.

use ash::vk;
use ferrite_tests::icd::Harness;

fn name(chars: &[std::ffi::c_char]) -> String {
    chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8 as char)
        .collect()
}

#[test]
fn instance_lifecycle_is_clean_under_validation() {
    let h = Harness::new();
    assert_eq!(h.physical_devices().len(), 1);
    h.assert_clean();
}

#[test]
fn simulated_skl_gt2_properties() {
    let h = Harness::new();
    let pd = h.physical_device();
    // SAFETY: a physical device of a live instance.
    let p = unsafe { h.instance.get_physical_device_properties(pd) };
    assert_eq!(p.vendor_id, 0x8086);
    assert_eq!(p.device_id, 0x1912);
    assert_eq!(p.device_type, vk::PhysicalDeviceType::INTEGRATED_GPU);
    let n = name(&p.device_name);
    assert!(n.contains("(SKL GT2)"), "{n}");
    assert!(n.contains("simulated"), "{n}");
    assert_eq!(p.api_version, vk::API_VERSION_1_3);
    // The manifests (icd.json, and through it the tests' and scripts') state what the driver
    // reports; the loader reads it before loading the driver.
    let reported = format!(
        "{}.{}",
        vk::api_version_major(p.api_version),
        vk::api_version_minor(p.api_version)
    );
    let manifest = ferrite_tests::icd::manifest_api_version();
    assert!(
        manifest.starts_with(&format!("{reported}.")),
        "icd.json states api_version {manifest}, the driver reports {reported}"
    );
    assert_eq!(p.limits.max_compute_shared_memory_size, 64 * 1024);
    assert_eq!(p.limits.max_compute_work_group_invocations, 1024);
    // The cache UUID is stable across instances.
    let h2 = Harness::new();
    // SAFETY: as above.
    let p2 = unsafe {
        h2.instance
            .get_physical_device_properties(h2.physical_device())
    };
    assert_eq!(p.pipeline_cache_uuid, p2.pipeline_cache_uuid);
    assert_ne!(p.pipeline_cache_uuid, [0; vk::UUID_SIZE]);
    h.assert_clean();
    h2.assert_clean();
}

#[test]
fn queue_family_memory_and_features_say_only_what_works() {
    let h = Harness::new();
    let pd = h.physical_device();
    // SAFETY: a physical device of a live instance.
    let (families, mem, features) = unsafe {
        (
            h.instance.get_physical_device_queue_family_properties(pd),
            h.instance.get_physical_device_memory_properties(pd),
            h.instance.get_physical_device_features(pd),
        )
    };
    assert_eq!(families.len(), 1);
    assert_eq!(
        families[0].queue_flags,
        vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER
    );
    assert_eq!(
        families[0].timestamp_valid_bits, 36,
        "the command streamer's 36-bit TIMESTAMP"
    );
    assert_eq!(mem.memory_heap_count, 1);
    assert!(mem.memory_heaps[0]
        .flags
        .contains(vk::MemoryHeapFlags::DEVICE_LOCAL));
    let base = vk::MemoryPropertyFlags::DEVICE_LOCAL
        | vk::MemoryPropertyFlags::HOST_VISIBLE
        | vk::MemoryPropertyFlags::HOST_COHERENT;
    assert!(mem.memory_type_count >= 1);
    for t in &mem.memory_types[..mem.memory_type_count as usize] {
        assert!(t.property_flags.contains(base), "{:?}", t.property_flags);
        assert_eq!(t.heap_index, 0);
    }
    // Native DF / Q on Gen9 (compiler backend::wide).
    assert_eq!(features.shader_float64, vk::TRUE);
    assert_eq!(features.shader_int64, vk::TRUE);
    // Required by Vulkan 1.0; tests/tests/robust_access.rs.
    assert_eq!(features.robust_buffer_access, vk::TRUE);
    // SAFETY: as above.
    let fp = unsafe {
        h.instance
            .get_physical_device_format_properties(pd, vk::Format::R8G8B8A8_UNORM)
    };
    // Uniform texel buffers read it with the sampler; storage texel buffers would need the
    // lowered (UINT) access, which is tested on images only.
    assert_eq!(
        fp.buffer_features,
        vk::FormatFeatureFlags::UNIFORM_TEXEL_BUFFER
    );
    // SAFETY: as above.
    let exts = unsafe { h.instance.enumerate_device_extension_properties(pd) }.unwrap();
    let names: Vec<String> = exts.iter().map(|e| name(&e.extension_name)).collect();
    // Each of these has its own tests (sync_extensions.rs for the four after bind_memory2).
    let known = [
        "VK_KHR_get_memory_requirements2",
        "VK_KHR_bind_memory2",
        "VK_KHR_timeline_semaphore",
        "VK_KHR_synchronization2",
        "VK_KHR_device_group",
        "VK_KHR_maintenance1",
        "VK_KHR_pipeline_executable_properties",
        // 8/16-bit types: tests/tests/narrow_sim.rs and the Amber corpus.
        "VK_KHR_storage_buffer_storage_class",
        "VK_KHR_16bit_storage",
        "VK_KHR_8bit_storage",
        "VK_KHR_shader_float16_int8",
        // cr0 float modes: tests/tests/float_controls_sim.rs and float_controls.rs.
        "VK_KHR_shader_float_controls",
        // robustBufferAccess2: tests/tests/robust_access.rs.
        "VK_EXT_robustness2",
        // robustImageAccess: tests/amber/img_robust_*.amber.
        "VK_EXT_image_robustness",
        // Inline uniform blocks: tests/tests/inline_uniform.rs.
        "VK_EXT_inline_uniform_block",
        // Host query reset, private data, driver properties: tests/tests/core_commands.rs.
        "VK_EXT_host_query_reset",
        "VK_EXT_private_data",
        "VK_KHR_driver_properties",
        "VK_EXT_pipeline_creation_cache_control",
        "VK_EXT_pipeline_creation_feedback",
        "VK_KHR_dedicated_allocation",
        // Descriptor writes: tests/tests/descriptor_updates.rs.
        "VK_KHR_descriptor_update_template",
        "VK_KHR_push_descriptor",
        "VK_KHR_maintenance3",
        // Create-info memory requirements, maxBufferSize: tests/tests/maintenance4.rs.
        "VK_KHR_maintenance4",
        // Zeroed shared memory: tests/tests/zero_init_workgroup.rs.
        "VK_KHR_zero_initialize_workgroup_memory",
        // 8/16-bit subgroup operations: tests/tests/subgroup_types_sim.rs.
        "VK_KHR_shader_subgroup_extended_types",
        // Required subgroup sizes: tests/tests/subgroup_size_control.rs.
        "VK_EXT_subgroup_size_control",
        // Subgroup uniform control flow: the conformance suite's files in tests/amber/cts.
        "VK_KHR_shader_subgroup_uniform_control_flow",
        // Pointers, block layouts and 64-bit atomics: tests/tests/buffer_address.rs and
        // block_layout.rs.
        "VK_KHR_buffer_device_address",
        "VK_KHR_uniform_buffer_standard_layout",
        "VK_EXT_scalar_block_layout",
        "VK_KHR_shader_atomic_int64",
        // MIRROR_CLAMP_TO_EDGE: tests/amber/img_sample_2d_*_mirrored_clamp_to_edge.amber.
        "VK_KHR_sampler_mirror_clamp_to_edge",
        // Integer dot products: tests/tests/integer_dot_sim.rs.
        "VK_KHR_shader_integer_dot_product",
        // The memory model: tests/tests/memory_model_sim.rs.
        "VK_KHR_vulkan_memory_model",
        // Descriptor indexing: tests/tests/descriptor_indexing.rs, update_after_bind.rs.
        "VK_EXT_descriptor_indexing",
    ];
    assert!(
        names.iter().all(|n| known.contains(&n.as_str())),
        "{names:?}"
    );
    h.assert_clean();
}

#[test]
fn properties2_matches_properties() {
    let h = Harness::new();
    let pd = h.physical_device();
    // SAFETY: a physical device of a live instance; the loader provides the 1.1 entry point and
    // routes it to the driver's KHR function or emulates it.
    let (p, p2) = unsafe {
        let mut p2 = vk::PhysicalDeviceProperties2::default();
        h.instance.get_physical_device_properties2(pd, &mut p2);
        (h.instance.get_physical_device_properties(pd), p2.properties)
    };
    assert_eq!(p.device_id, p2.device_id);
    assert_eq!(name(&p.device_name), name(&p2.device_name));
}

#[test]
fn unknown_instance_function_names_are_null() {
    let h = Harness::new();
    // SAFETY: a live instance and NUL-terminated names.
    unsafe {
        let gipa = h.entry.static_fn().get_instance_proc_addr;
        assert!(gipa(h.instance.handle(), c"vkFerriteDoesNotExist".as_ptr()).is_none());
        assert!(gipa(
            h.instance.handle(),
            c"vkGetPhysicalDeviceProperties".as_ptr()
        )
        .is_some());
    }
    h.assert_clean();
}

/// Through loader interface 5 an application may ask for a newer apiVersion than the driver
/// implements; the instance is created and the device still says what it really implements.
#[test]
fn newer_application_api_version_is_accepted() {
    ferrite_tests::icd::init_process_env();
    // SAFETY: loads the system loader; the instance is destroyed below.
    unsafe {
        let entry = ash::Entry::load().unwrap();
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
            .expect("vkCreateInstance with apiVersion 1.3");
        let pds = instance.enumerate_physical_devices().unwrap();
        assert_eq!(pds.len(), 1);
        let p = instance.get_physical_device_properties(pds[0]);
        assert_eq!(p.api_version, vk::API_VERSION_1_3);
        instance.destroy_instance(None);
    }
}
