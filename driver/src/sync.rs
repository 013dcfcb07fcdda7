//! VkFence, backed by a kernel syncobj: what a submission's completion signals.

use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;
use kernel_iface::uapi::{DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT};
use kernel_iface::{monotonic_ns, DrmDevice, KernelError};

use crate::device::Device;
use crate::error::{DriverError, Result};
use crate::ffi;

pub struct Fence {
    drm: Arc<DrmDevice>,
    pub syncobj: u32,
}

impl Drop for Fence {
    fn drop(&mut self) {
        if let Err(e) = self.drm.syncobj_destroy(self.syncobj) {
            log::error!("SYNCOBJ_DESTROY of {}: {e}", self.syncobj);
        }
    }
}

/// # Safety
/// `device` must be null or a live device.
unsafe fn dev<'a>(device: vk::Device) -> Result<&'a Device> {
    // SAFETY: forwarded caller contract.
    unsafe { Device::from_handle(device) }
}

/// The syncobjs behind `count` fences.
fn syncobjs(d: &Device, count: u32, p_fences: *const vk::Fence) -> Result<Vec<u32>> {
    // SAFETY: `count` valid fence handles per the spec.
    let fences = unsafe { ffi::slice(p_fences, count, "pFences") }?;
    fences
        .iter()
        .map(|f| d.fences.get(f.as_raw()).map(|f| f.syncobj))
        .collect()
}

/// Waits with the kernel's semantics for Vulkan fences: an unsubmitted fence is simply not
/// signalled yet (WAIT_FOR_SUBMIT), so it times out instead of failing.
fn wait(d: &Device, handles: &[u32], wait_all: bool, timeout_abs_ns: i64) -> Result<vk::Result> {
    let mut flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
    if wait_all {
        flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
    }
    match d
        .adapter
        .drm
        .syncobj_wait_flags(handles, timeout_abs_ns, flags)
    {
        Ok(_) => Ok(vk::Result::SUCCESS),
        Err(KernelError::Timeout) => Ok(vk::Result::TIMEOUT),
        Err(e) => Err(e.into()),
    }
}

pub(crate) unsafe extern "system" fn create_fence(
    device: vk::Device,
    p_info: *const vk::FenceCreateInfo<'_>,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
    p_fence: *mut vk::Fence,
) -> vk::Result {
    ffi::result("vkCreateFence", || {
        // SAFETY: live device and valid create info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pCreateInfo")?) };
        let signaled = info.flags.contains(vk::FenceCreateFlags::SIGNALED);
        let syncobj = d.adapter.drm.syncobj_create(signaled)?;
        let id = d.fences.insert(Fence {
            drm: d.adapter.drm.clone(),
            syncobj,
        });
        // SAFETY: valid output pointer per the spec.
        if let Err(e) = unsafe { ffi::write(p_fence, vk::Fence::from_raw(id), "pFence") } {
            d.fences.remove(id)?;
            return Err(e);
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_fence(
    device: vk::Device,
    fence: vk::Fence,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    ffi::void("vkDestroyFence", || {
        // SAFETY: a live device per the spec.
        unsafe { dev(device) }?.fences.remove(fence.as_raw())?;
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn reset_fences(
    device: vk::Device,
    count: u32,
    p_fences: *const vk::Fence,
) -> vk::Result {
    ffi::result("vkResetFences", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        let handles = syncobjs(d, count, p_fences)?;
        if !handles.is_empty() {
            d.adapter.drm.syncobj_reset(&handles)?;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn get_fence_status(
    device: vk::Device,
    fence: vk::Fence,
) -> vk::Result {
    ffi::result("vkGetFenceStatus", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        let syncobj = d.fences.get(fence.as_raw())?.syncobj;
        d.queue().obj.check_hang()?;
        Ok(match wait(d, &[syncobj], true, 0)? {
            vk::Result::TIMEOUT => vk::Result::NOT_READY,
            other => other,
        })
    })
}

pub(crate) unsafe extern "system" fn wait_for_fences(
    device: vk::Device,
    count: u32,
    p_fences: *const vk::Fence,
    wait_all: vk::Bool32,
    timeout: u64,
) -> vk::Result {
    ffi::result("vkWaitForFences", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        let handles = syncobjs(d, count, p_fences)?;
        if handles.is_empty() {
            return Err(DriverError::InvalidArgument("fenceCount is 0".into()));
        }
        // The kernel takes an absolute CLOCK_MONOTONIC deadline; UINT64_MAX means forever.
        let deadline = i64::try_from(timeout)
            .ok()
            .and_then(|t| monotonic_ns().checked_add(t))
            .unwrap_or(i64::MAX);
        let r = wait(d, &handles, wait_all != vk::FALSE, deadline)?;
        d.queue().obj.check_hang()?;
        Ok(r)
    })
}

/// A binary VkSemaphore: a syncobj a submission signals and a later one waits for.
pub struct Semaphore {
    drm: Arc<DrmDevice>,
    pub syncobj: u32,
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        if let Err(e) = self.drm.syncobj_destroy(self.syncobj) {
            log::error!("SYNCOBJ_DESTROY of {}: {e}", self.syncobj);
        }
    }
}

pub(crate) unsafe extern "system" fn create_semaphore(
    device: vk::Device,
    p_info: *const vk::SemaphoreCreateInfo<'_>,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
    p_semaphore: *mut vk::Semaphore,
) -> vk::Result {
    ffi::result("vkCreateSemaphore", || {
        // SAFETY: live device and valid create info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pCreateInfo")?) };
        // SAFETY: a valid pNext chain per the spec.
        if let Some(t) = unsafe {
            ffi::find_in_chain(info.p_next, vk::StructureType::SEMAPHORE_TYPE_CREATE_INFO)
        } {
            // SAFETY: the sType says what it is.
            let t = unsafe { &*t.cast::<vk::SemaphoreTypeCreateInfo<'_>>() };
            if t.semaphore_type == vk::SemaphoreType::TIMELINE {
                return Err(DriverError::NotImplemented("timeline semaphores"));
            }
        }
        let syncobj = d.adapter.drm.syncobj_create(false)?;
        let id = d.semaphores.insert(Semaphore {
            drm: d.adapter.drm.clone(),
            syncobj,
        });
        // SAFETY: valid output pointer per the spec.
        unsafe { ffi::write(p_semaphore, vk::Semaphore::from_raw(id), "pSemaphore") }?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_semaphore(
    device: vk::Device,
    semaphore: vk::Semaphore,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    ffi::void("vkDestroySemaphore", || {
        // SAFETY: a live device per the spec.
        unsafe { dev(device) }?
            .semaphores
            .remove(semaphore.as_raw())?;
        Ok(())
    })
}
