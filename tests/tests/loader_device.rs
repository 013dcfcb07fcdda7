//! Device, queue, memory, buffer and fence lifecycles on Ferrite through the real loader,
//! with validation on (zero warnings/errors expected) except where invalid input is the point.

use ash::vk;
use ferrite_tests::icd::Harness;

#[test]
fn device_and_queue_lifecycle() {
    let h = Harness::new();
    let device = h.create_device(h.physical_device());
    // SAFETY: a live device; the queue exists (family 0, index 0).
    unsafe {
        let q = device.get_device_queue(0, 0);
        assert_ne!(q, vk::Queue::null());
        assert_eq!(device.get_device_queue(0, 0), q);
        device.queue_wait_idle(q).unwrap();
        device.device_wait_idle().unwrap();
        ferrite_tests::icd::destroy_device(&device);
    }
    h.assert_clean();
}

#[test]
fn mapped_memory_write_and_read_back_in_every_memory_type() {
    let h = Harness::new();
    let pd = h.physical_device();
    let device = h.create_device(pd);
    // SAFETY: a live physical device.
    let mem = unsafe { h.instance.get_physical_device_memory_properties(pd) };
    for type_index in 0..mem.memory_type_count {
        let size = 3 * 4096 + 100;
        // SAFETY: valid allocate info; memory freed below.
        unsafe {
            let info = vk::MemoryAllocateInfo::default()
                .allocation_size(size)
                .memory_type_index(type_index);
            let m = device.allocate_memory(&info, None).unwrap();
            let p = device
                .map_memory(m, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .unwrap()
                .cast::<u8>();
            let bytes = std::slice::from_raw_parts_mut(p, size as usize);
            assert!(bytes.iter().all(|&b| b == 0), "fresh memory reads as zero");
            for (i, b) in bytes.iter_mut().enumerate() {
                *b = (i * 7 + type_index as usize) as u8;
            }
            device.unmap_memory(m);
            // Map again at an offset: the same bytes must come back.
            let off = 4096u64;
            let p = device
                .map_memory(m, off, 256, vk::MemoryMapFlags::empty())
                .unwrap()
                .cast::<u8>();
            let back = std::slice::from_raw_parts(p, 256);
            for (i, &b) in back.iter().enumerate() {
                assert_eq!(
                    b,
                    ((i + off as usize) * 7 + type_index as usize) as u8,
                    "type {type_index} byte {i}"
                );
            }
            let range = vk::MappedMemoryRange::default()
                .memory(m)
                .offset(off)
                .size(vk::WHOLE_SIZE);
            device.flush_mapped_memory_ranges(&[range]).unwrap();
            device.invalidate_mapped_memory_ranges(&[range]).unwrap();
            device.unmap_memory(m);
            device.free_memory(m, None);
        }
    }
    // SAFETY: all children destroyed.
    unsafe { ferrite_tests::icd::destroy_device(&device) };
    h.assert_clean();
}

#[test]
fn buffer_requirements_and_binding() {
    let h = Harness::new();
    let pd = h.physical_device();
    let device = h.create_device(pd);
    let ty = h
        .memory_type(pd, vk::MemoryPropertyFlags::HOST_VISIBLE)
        .unwrap();
    // SAFETY: valid create infos; everything destroyed below.
    unsafe {
        let info = vk::BufferCreateInfo::default()
            .size(1001)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
        let a = device.create_buffer(&info, None).unwrap();
        let b = device.create_buffer(&info, None).unwrap();
        assert_ne!(a, b);
        let req = device.get_buffer_memory_requirements(a);
        assert!(req.size >= 1001);
        assert!(req.alignment.is_power_of_two() && req.alignment >= 4);
        assert_ne!(req.memory_type_bits & (1 << ty), 0);
        let stride = req.size.next_multiple_of(req.alignment);
        let m = device
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(2 * stride)
                    .memory_type_index(ty),
                None,
            )
            .unwrap();
        device.bind_buffer_memory(a, m, 0).unwrap();
        device.bind_buffer_memory(b, m, stride).unwrap();
        device.destroy_buffer(a, None);
        device.destroy_buffer(b, None);
        device.free_memory(m, None);
        ferrite_tests::icd::destroy_device(&device);
    }
    h.assert_clean();
}

#[test]
fn fence_lifecycle_with_empty_submission() {
    let h = Harness::new();
    let device = h.create_device(h.physical_device());
    // SAFETY: valid create infos; everything destroyed below.
    unsafe {
        let q = device.get_device_queue(0, 0);
        let f = device
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .unwrap();
        assert_eq!(device.get_fence_status(f), Ok(false));
        assert_eq!(
            device.wait_for_fences(&[f], true, 0),
            Err(vk::Result::TIMEOUT)
        );
        device.queue_submit(q, &[], f).unwrap();
        assert_eq!(device.get_fence_status(f), Ok(true));
        device.wait_for_fences(&[f], true, u64::MAX).unwrap();
        device.reset_fences(&[f]).unwrap();
        assert_eq!(device.get_fence_status(f), Ok(false));

        let s = device
            .create_fence(
                &vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED),
                None,
            )
            .unwrap();
        assert_eq!(device.get_fence_status(s), Ok(true));
        // Any-of: one signalled fence is enough; all-of: the unsignalled one times out.
        device.wait_for_fences(&[f, s], false, 1_000_000).unwrap();
        assert_eq!(
            device.wait_for_fences(&[f, s], true, 0),
            Err(vk::Result::TIMEOUT)
        );
        device.destroy_fence(f, None);
        device.destroy_fence(s, None);
        device.queue_wait_idle(q).unwrap();
        ferrite_tests::icd::destroy_device(&device);
    }
    h.assert_clean();
}

#[test]
fn unknown_device_function_names_are_null() {
    let h = Harness::new();
    let device = h.create_device(h.physical_device());
    // SAFETY: a live device and NUL-terminated names.
    unsafe {
        let gdpa = h.instance.fp_v1_0().get_device_proc_addr;
        assert!(gdpa(device.handle(), c"vkFerriteDoesNotExist".as_ptr()).is_none());
        assert!(gdpa(device.handle(), c"vkAllocateMemory".as_ptr()).is_some());
        ferrite_tests::icd::destroy_device(&device);
    }
    h.assert_clean();
}

// Invalid input on purpose: validation would (rightly) complain, so it is off here.

#[test]
fn unsupported_feature_is_refused() {
    let h = Harness::with_validation(false);
    let pd = h.physical_device();
    let prio = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(0)
        .queue_priorities(&prio)];
    // Sparse binding is one of the features Ferrite does not offer.
    let features = vk::PhysicalDeviceFeatures {
        sparse_binding: vk::TRUE,
        ..Default::default()
    };
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_features(&features);
    // SAFETY: valid create info (the feature is unsupported, which the driver must report).
    let r = unsafe { ferrite_tests::icd::create_device(&h.instance, pd, &info) };
    assert_eq!(r.err(), Some(vk::Result::ERROR_FEATURE_NOT_PRESENT));
}

#[test]
fn unsupported_extension_is_refused() {
    let h = Harness::with_validation(false);
    let pd = h.physical_device();
    let prio = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(0)
        .queue_priorities(&prio)];
    let exts = [c"VK_KHR_swapchain".as_ptr()];
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&exts);
    // SAFETY: valid create info naming an extension Ferrite does not offer.
    let r = unsafe { ferrite_tests::icd::create_device(&h.instance, pd, &info) };
    assert_eq!(r.err(), Some(vk::Result::ERROR_EXTENSION_NOT_PRESENT));
}

#[test]
fn allocation_larger_than_the_heap_is_out_of_device_memory() {
    let h = Harness::with_validation(false);
    let pd = h.physical_device();
    let device = h.create_device(pd);
    // SAFETY: a live device; the allocation fails, nothing to free.
    unsafe {
        let heap = h
            .instance
            .get_physical_device_memory_properties(pd)
            .memory_heaps[0]
            .size;
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(heap + 4096)
            .memory_type_index(0);
        assert_eq!(
            device.allocate_memory(&info, None).err(),
            Some(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY)
        );
        // The device keeps working.
        let ok = device
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(4096)
                    .memory_type_index(0),
                None,
            )
            .unwrap();
        device.free_memory(ok, None);
        ferrite_tests::icd::destroy_device(&device);
    }
}

/// The harness must see what the validation layer says, or the "clean" assertions above prove
/// nothing: a wrong memory type index is a validation error (and a driver error).
#[test]
fn harness_catches_validation_errors() {
    let h = Harness::new();
    let device = h.create_device(h.physical_device());
    // SAFETY: invalid on purpose but harmless: the layer reports it and the driver refuses it.
    unsafe {
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(4096)
            .memory_type_index(31);
        assert!(device.allocate_memory(&info, None).is_err());
        ferrite_tests::icd::destroy_device(&device);
    }
    let p = h.problems();
    assert!(
        !p.is_empty(),
        "validation reported nothing for memoryTypeIndex 31"
    );
    assert!(
        p.iter().any(|m| m.text.contains("memoryTypeIndex")),
        "{p:#?}"
    );
}

/// Core commands not implemented yet answer with an error through the loader (no NULL call),
/// and destroying VK_NULL_HANDLE of such a type is the no-op the spec allows.
#[test]
fn unimplemented_core_commands_refuse_with_an_error() {
    let h = Harness::new();
    let device = h.create_device(h.physical_device());
    // SAFETY: valid calls; the driver refuses the creations, nothing is created.
    unsafe {
        let subpass =
            [vk::SubpassDescription::default()
                .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)];
        let info = vk::RenderPassCreateInfo::default().subpasses(&subpass);
        assert_eq!(
            device.create_render_pass(&info, None).err(),
            Some(vk::Result::ERROR_FEATURE_NOT_PRESENT)
        );
        device.destroy_sampler(vk::Sampler::null(), None);
        device.destroy_image(vk::Image::null(), None);
        device.destroy_render_pass(vk::RenderPass::null(), None);
        ferrite_tests::icd::destroy_device(&device);
    }
    h.assert_clean();
}
