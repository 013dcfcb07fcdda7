//! VkQueue: submissions to the kernel.
//!
//! Command buffers are not implemented yet, so the only submissions are empty ones: they
//! complete at once and signal their fence through the kernel's syncobj. The queue keeps the
//! syncobjs of work in flight; vkQueueWaitIdle waits for all of them.

use std::sync::{Arc, Mutex};

use ash::vk;
use kernel_iface::uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;

use crate::device::Device;
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::handles::{self, Registry};
use crate::physical::Adapter;
use crate::sync::Fence;

pub struct Queue {
    adapter: Arc<Adapter>,
    /// The device's fence registry (a submission's fence is named by id).
    fences: Arc<Registry<Fence>>,
    /// Syncobjs signalled by the kernel when submitted work finishes; owned by the queue.
    in_flight: Mutex<Vec<u32>>,
}

impl Queue {
    pub fn new(adapter: Arc<Adapter>, fences: Arc<Registry<Fence>>) -> Queue {
        Queue {
            adapter,
            fences,
            in_flight: Mutex::new(Vec::new()),
        }
    }

    /// # Safety
    /// `h` must be null or a queue of a live device.
    pub unsafe fn from_handle<'a>(h: vk::Queue) -> Result<&'a Queue> {
        use ash::vk::Handle;
        // SAFETY: forwarded caller contract.
        unsafe { handles::borrow(h.as_raw() as *mut u8, "VkQueue") }
    }

    /// Waits for every submission in flight and releases their syncobjs.
    pub fn wait_idle(&self) -> Result<()> {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if !in_flight.is_empty() {
            self.adapter.drm.syncobj_wait_flags(
                &in_flight,
                i64::MAX,
                DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
            )?;
            for h in in_flight.drain(..) {
                self.adapter.drm.syncobj_destroy(h)?;
            }
        }
        Ok(())
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let in_flight = self.in_flight.get_mut().unwrap_or_else(|e| e.into_inner());
        for h in in_flight.drain(..) {
            if let Err(e) = self.adapter.drm.syncobj_destroy(h) {
                log::warn!("queue teardown: syncobj {h}: {e}");
            }
        }
    }
}

pub(crate) unsafe extern "system" fn get_device_queue(
    device: vk::Device,
    family: u32,
    index: u32,
    p_queue: *mut vk::Queue,
) {
    ffi::void("vkGetDeviceQueue", || {
        // SAFETY: a live device per the spec.
        let dev = unsafe { Device::from_handle(device) }?;
        if family != 0 || index != 0 {
            return Err(DriverError::InvalidArgument(format!(
                "no queue {index} in family {family}"
            )));
        }
        use ash::vk::Handle;
        let q = vk::Queue::from_raw(handles::as_raw(dev.queue()) as u64);
        // SAFETY: valid output pointer per the spec.
        unsafe { ffi::write(p_queue, q, "pQueue") }
    })
}

pub(crate) unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    ffi::result("vkQueueSubmit", || {
        // SAFETY: a live queue per the spec.
        let q = unsafe { Queue::from_handle(queue) }?;
        // SAFETY: pSubmits holds submitCount structures per the spec.
        let submits = unsafe { ffi::slice(p_submits, submit_count, "pSubmits") }?;
        for s in submits {
            if s.command_buffer_count != 0
                || s.wait_semaphore_count != 0
                || s.signal_semaphore_count != 0
            {
                return Err(DriverError::NotImplemented(
                    "vkQueueSubmit with command buffers or semaphores",
                ));
            }
        }
        if fence != vk::Fence::null() {
            // Empty submissions are complete once submitted: the fence signals now, in order
            // after everything already in flight.
            use ash::vk::Handle;
            let fence_obj = q.fences.get(fence.as_raw())?;
            q.wait_idle()?;
            q.adapter.drm.syncobj_signal(&[fence_obj.syncobj])?;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn queue_wait_idle(queue: vk::Queue) -> vk::Result {
    ffi::result("vkQueueWaitIdle", || {
        // SAFETY: a live queue per the spec.
        unsafe { Queue::from_handle(queue) }?.wait_idle()?;
        Ok(vk::Result::SUCCESS)
    })
}
