//! Memory requirements from a create info, without an object (VK_KHR_maintenance4, core in
//! Vulkan 1.3): the answer is the one the object queries give for the buffer or image that
//! vkCreateBuffer / vkCreateImage would make from the same create info, computed by the same
//! code (`memory::buffer_requirements`, the image layout of `image::Image::new`).

use ash::vk;

use crate::device::dev;
use crate::ffi;
use crate::image::Image;
use crate::memory::{buffer_requirements, check_buffer_info};

crate::memory::requirements2_entries! {
    get_device_buffer_memory_requirements, "vkGetDeviceBufferMemoryRequirements",
        DeviceBufferMemoryRequirements, |d, info| {
            // SAFETY: pCreateInfo is a valid create info per the spec.
            let ci = unsafe { ffi::read(info.p_create_info, "pCreateInfo") }?;
            check_buffer_info(ci)?;
            buffer_requirements(d.adapter.info, ci.size)
        };
    get_device_image_memory_requirements, "vkGetDeviceImageMemoryRequirements",
        DeviceImageMemoryRequirements, |d, info| {
            // SAFETY: pCreateInfo is a valid create info per the spec.
            let ci = unsafe { ffi::read(info.p_create_info, "pCreateInfo") }?;
            // planeAspect only matters for disjoint multi-planar images, which Ferrite has no
            // format for.
            Image::new(ci)?.requirements(d)
        };
}

/// No image is sparse (vkCreateImage refuses the sparse flags: no sparse feature is offered),
/// and for an image created without `SPARSE_RESIDENCY` the specification answers with a count
/// of zero and leaves the array alone.
pub(crate) unsafe extern "system" fn get_device_image_sparse_memory_requirements(
    device: vk::Device,
    p_info: *const vk::DeviceImageMemoryRequirements<'_>,
    p_count: *mut u32,
    _p_req: *mut vk::SparseImageMemoryRequirements2<'_>,
) {
    ffi::void("vkGetDeviceImageSparseMemoryRequirements", || {
        // SAFETY: live device and valid info per the spec.
        let (_, info) = unsafe { (dev(device)?, ffi::read(p_info, "pInfo")?) };
        // SAFETY: pCreateInfo is a valid create info per the spec.
        let ci = unsafe { ffi::read(info.p_create_info, "pCreateInfo") }?;
        if ci.flags.intersects(
            vk::ImageCreateFlags::SPARSE_BINDING
                | vk::ImageCreateFlags::SPARSE_RESIDENCY
                | vk::ImageCreateFlags::SPARSE_ALIASED,
        ) {
            log::warn!(
                "vkGetDeviceImageSparseMemoryRequirements: sparse flags {:?} (no sparse feature is offered)",
                ci.flags
            );
        }
        // SAFETY: valid count pointer per the spec.
        unsafe { ffi::write(p_count, 0, "pSparseMemoryRequirementCount") }
    })
}
