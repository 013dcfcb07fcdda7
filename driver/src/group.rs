//! Device groups of one (VK_KHR_device_group_creation, VK_KHR_device_group): every physical
//! device is its own group, so device masks are always 1. What the extensions are for here is
//! vkCmdDispatchBase (in cmd.rs), whose base workgroup goes to the CURBE driver register.

use ash::vk;

use crate::cmd::CommandBuffer;
use crate::error::DriverError;
use crate::ffi;
use crate::instance::Instance;

/// The only valid device mask: device 0 of a group of one.
pub const DEVICE_MASK: u32 = 1;

pub(crate) unsafe extern "system" fn enumerate_physical_device_groups(
    instance: vk::Instance,
    p_count: *mut u32,
    p_groups: *mut vk::PhysicalDeviceGroupProperties<'_>,
) -> vk::Result {
    ffi::result("vkEnumeratePhysicalDeviceGroupsKHR", || {
        // SAFETY: a live instance per the spec.
        let inst = unsafe { Instance::from_handle(instance) }?;
        let pds = inst.physical_device_handles();
        if p_count.is_null() {
            return Err(DriverError::NullPointer("pPhysicalDeviceGroupCount"));
        }
        if p_groups.is_null() {
            // SAFETY: non-null count pointer, valid per the spec.
            unsafe { p_count.write(pds.len() as u32) };
            return Ok(vk::Result::SUCCESS);
        }
        // SAFETY: as above.
        let capacity = unsafe { p_count.read() } as usize;
        let n = capacity.min(pds.len());
        for (i, &pd) in pds.iter().take(n).enumerate() {
            // SAFETY: p_groups holds `capacity` structures whose sType/pNext the application
            // set; only the output members are written.
            let g = unsafe { &mut *p_groups.add(i) };
            g.physical_device_count = 1;
            g.physical_devices = [vk::PhysicalDevice::null(); vk::MAX_DEVICE_GROUP_SIZE];
            g.physical_devices[0] = pd;
            g.subset_allocation = vk::FALSE;
        }
        // SAFETY: as above.
        unsafe { p_count.write(n as u32) };
        Ok(if n < pds.len() {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        })
    })
}

pub(crate) unsafe extern "system" fn get_device_group_peer_memory_features(
    _device: vk::Device,
    _heap: u32,
    local: u32,
    remote: u32,
    p_features: *mut vk::PeerMemoryFeatureFlags,
) {
    ffi::void("vkGetDeviceGroupPeerMemoryFeaturesKHR", || {
        // A group of one has no peer: any (local, remote) pair is out of range.
        // SAFETY: valid output pointer per the spec.
        unsafe {
            ffi::write(
                p_features,
                vk::PeerMemoryFeatureFlags::empty(),
                "pPeerMemoryFeatures",
            )
        }?;
        Err(DriverError::InvalidArgument(format!(
            "device indices {local}/{remote} in a group of one device"
        )))
    })
}

pub(crate) unsafe extern "system" fn cmd_set_device_mask(cb: vk::CommandBuffer, mask: u32) {
    ffi::void("vkCmdSetDeviceMaskKHR", || {
        // SAFETY: a live command buffer per the spec.
        unsafe { CommandBuffer::from_handle(cb) }?;
        if mask != DEVICE_MASK {
            return Err(DriverError::InvalidArgument(format!(
                "device mask {mask:#x} in a group of one device"
            )));
        }
        Ok(())
    })
}
