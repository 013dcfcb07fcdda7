//! VkFence and VkSemaphore, backed by kernel syncobjs: a fence is a binary syncobj a
//! submission's completion signals; a binary semaphore is one a submission signals and a later
//! one waits for; a timeline semaphore (VK_KHR_timeline_semaphore) is a timeline syncobj whose
//! points are the semaphore's values (DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT/SIGNAL/QUERY on the host,
//! the execbuffer timeline-fences extension on the queue).

use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;
use kernel_iface::uapi::{
    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
};
use kernel_iface::{monotonic_ns, DrmDevice, KernelError};

use crate::device::{dev, Device};
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

/// The kernel takes an absolute CLOCK_MONOTONIC deadline; UINT64_MAX (anything past i64) means
/// forever.
fn deadline(timeout_ns: u64) -> i64 {
    i64::try_from(timeout_ns)
        .ok()
        .and_then(|t| monotonic_ns().checked_add(t))
        .unwrap_or(i64::MAX)
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
        let r = wait(d, &handles, wait_all != vk::FALSE, deadline(timeout))?;
        d.queue().obj.check_hang()?;
        Ok(r)
    })
}

/// A VkSemaphore: binary (a syncobj a submission signals and a later one waits for) or
/// timeline (a timeline syncobj; values are its points).
pub struct Semaphore {
    drm: Arc<DrmDevice>,
    pub syncobj: u32,
    pub timeline: bool,
}

impl Semaphore {
    /// The syncobj point a wait or signal of `value` uses: the value for a timeline, 0 (the
    /// binary payload) for a binary semaphore, whose value the application must leave out.
    pub fn point(&self, value: u64) -> u64 {
        if self.timeline {
            value
        } else {
            0
        }
    }

    /// Whether a submission waiting for `value` may be handed to the kernel now: the kernel
    /// refuses a wait for a timeline point nobody has submitted a signal for yet (EINVAL), so
    /// such a submission is held back by the queue until one is (wait-before-signal).
    pub fn available(&self, value: u64) -> Result<bool> {
        if !self.timeline {
            return Ok(true);
        }
        match self.drm.syncobj_timeline_wait(
            &[self.syncobj],
            &[value],
            0,
            DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
        ) {
            Ok(_) => Ok(true),
            Err(KernelError::Timeout) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
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
        let (timeline, initial) = match unsafe {
            ffi::find_in_chain(info.p_next, vk::StructureType::SEMAPHORE_TYPE_CREATE_INFO)
        } {
            Some(t) => {
                // SAFETY: the sType says what it is.
                let t = unsafe { &*t.cast::<vk::SemaphoreTypeCreateInfo<'_>>() };
                (
                    t.semaphore_type == vk::SemaphoreType::TIMELINE,
                    t.initial_value,
                )
            }
            None => (false, 0),
        };
        let drm = &d.adapter.drm;
        let syncobj = drm.syncobj_create(false)?;
        // Owned from here on: dropped (destroying the syncobj) on every error path.
        let sem = Semaphore {
            drm: drm.clone(),
            syncobj,
            timeline,
        };
        if timeline && initial > 0 {
            drm.syncobj_timeline_signal(&[syncobj], &[initial])?;
        }
        let id = d.semaphores.insert(sem);
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

/// One (semaphore, value) pair of vkWaitSemaphores.
fn timeline_handles(
    d: &Device,
    count: u32,
    p_sems: *const vk::Semaphore,
    p_values: *const u64,
) -> Result<(Vec<u32>, Vec<u64>)> {
    // SAFETY: `count` semaphores and values per the spec.
    let (sems, values) = unsafe {
        (
            ffi::slice(p_sems, count, "pSemaphores")?,
            ffi::slice(p_values, count, "pValues")?,
        )
    };
    let mut handles = Vec::with_capacity(sems.len());
    for h in sems {
        let s = d.semaphores.get(h.as_raw())?;
        if !s.timeline {
            return Err(DriverError::InvalidArgument(
                "a binary semaphore passed where a timeline semaphore is required".into(),
            ));
        }
        handles.push(s.syncobj);
    }
    Ok((handles, values.to_vec()))
}

pub(crate) unsafe extern "system" fn get_semaphore_counter_value(
    device: vk::Device,
    semaphore: vk::Semaphore,
    p_value: *mut u64,
) -> vk::Result {
    ffi::result("vkGetSemaphoreCounterValueKHR", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        d.check_lost()?;
        let s = d.semaphores.get(semaphore.as_raw())?;
        if !s.timeline {
            return Err(DriverError::InvalidArgument(
                "vkGetSemaphoreCounterValue of a binary semaphore".into(),
            ));
        }
        let value = d.adapter.drm.syncobj_query(&[s.syncobj], 0)?[0];
        // SAFETY: valid output pointer per the spec.
        unsafe { ffi::write(p_value, value, "pValue") }?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn wait_semaphores(
    device: vk::Device,
    p_info: *const vk::SemaphoreWaitInfo<'_>,
    timeout: u64,
) -> vk::Result {
    ffi::result("vkWaitSemaphoresKHR", || {
        // SAFETY: live device and valid wait info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pWaitInfo")?) };
        d.check_lost()?;
        let (handles, values) =
            timeline_handles(d, info.semaphore_count, info.p_semaphores, info.p_values)?;
        if handles.is_empty() {
            return Ok(vk::Result::SUCCESS);
        }
        // A value nobody has signalled yet is waited for too (WAIT_FOR_SUBMIT): another thread
        // may still signal it from the host or submit work that does.
        let mut flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
        if !info.flags.contains(vk::SemaphoreWaitFlags::ANY) {
            flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
        }
        let r =
            match d
                .adapter
                .drm
                .syncobj_timeline_wait(&handles, &values, deadline(timeout), flags)
            {
                Ok(_) => vk::Result::SUCCESS,
                Err(KernelError::Timeout) => vk::Result::TIMEOUT,
                Err(e) => return Err(e.into()),
            };
        d.queue().obj.check_hang()?;
        Ok(r)
    })
}

pub(crate) unsafe extern "system" fn signal_semaphore(
    device: vk::Device,
    p_info: *const vk::SemaphoreSignalInfo<'_>,
) -> vk::Result {
    ffi::result("vkSignalSemaphoreKHR", || {
        // SAFETY: live device and valid signal info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pSignalInfo")?) };
        d.check_lost()?;
        let s = d.semaphores.get(info.semaphore.as_raw())?;
        if !s.timeline {
            return Err(DriverError::InvalidArgument(
                "vkSignalSemaphore of a binary semaphore".into(),
            ));
        }
        d.adapter
            .drm
            .syncobj_timeline_signal(&[s.syncobj], &[info.value])?;
        // Submissions held back waiting for this value can go to the kernel now.
        d.queue().obj.flush_deferred()?;
        Ok(vk::Result::SUCCESS)
    })
}
