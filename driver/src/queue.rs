//! VkQueue: submissions to the kernel.
//!
//! Each command buffer of a submission is one EXECBUFFER2 on the device's hardware context
//! (which runs them in order), with every object it references softpinned. Wait semaphores go
//! to the first execbuffer of a VkSubmitInfo, signal semaphores and the fence to the last, as
//! syncobjs in an I915_EXEC_FENCE_ARRAY. Every execbuffer also signals a syncobj the queue
//! keeps (with the executables, so their objects live) until the work is known complete.
//! A hang (the kernel resets the context) makes the device lost: the queue sees it in the
//! context's reset statistics, and every later wait and submit reports VK_ERROR_DEVICE_LOST.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ash::vk;
use ash::vk::Handle;
use kernel_iface::genxml::{MiBatchBufferEnd, MiNoop};
use kernel_iface::uapi::*;
use kernel_iface::KernelError;

use crate::bo::{GemBo, Heap};
use crate::cmd::{CommandBuffer, Executable};
use crate::device::{Core, Device};
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::handles;

/// Submissions in flight beyond which a submit first retires everything.
const MAX_IN_FLIGHT: usize = 256;

type InFlight = (u32, Option<Arc<Executable>>);

pub struct Queue {
    core: Arc<Core>,
    /// The hardware context all submissions run on.
    ctx: u32,
    /// A batch that does nothing (semaphore-only and fence-only submissions).
    noop: GemBo,
    in_flight: Mutex<Vec<InFlight>>,
}

impl Queue {
    pub fn new(core: Arc<Core>) -> Result<Queue> {
        let drm = &core.adapter.drm;
        let ctx = drm.context_create()?;
        let mut dws = MiBatchBufferEnd::default().to_dwords();
        dws.extend(MiNoop::default().to_dwords());
        let bytes: Vec<u8> = dws.iter().flat_map(|d| d.to_le_bytes()).collect();
        let noop = match GemBo::with_data(drm, &core.va, Heap::General, &bytes) {
            Ok(b) => b,
            Err(e) => {
                let _ = drm.context_destroy(ctx);
                return Err(e);
            }
        };
        Ok(Queue {
            core,
            ctx,
            noop,
            in_flight: Mutex::new(Vec::new()),
        })
    }

    /// # Safety
    /// `h` must be null or a queue of a live device.
    pub unsafe fn from_handle<'a>(h: vk::Queue) -> Result<&'a Queue> {
        // SAFETY: forwarded caller contract.
        unsafe { handles::borrow(h.as_raw() as *mut u8, "VkQueue") }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<InFlight>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reports (and remembers) a hang of this queue's context.
    pub fn check_hang(&self) -> Result<()> {
        self.core.check_lost()?;
        let stats = self.core.adapter.drm.context_reset_stats(self.ctx)?;
        if stats.batch_active > 0 {
            self.core.lost.store(true, Ordering::Release);
            return Err(DriverError::DeviceLost(format!(
                "GPU hang on context {} ({} batch(es) lost)",
                self.ctx, stats.batch_active
            )));
        }
        Ok(())
    }

    /// Waits for every submission in flight and releases their syncobjs.
    pub fn wait_idle(&self) -> Result<()> {
        let mut in_flight = self.lock();
        if !in_flight.is_empty() {
            let handles: Vec<u32> = in_flight.iter().map(|x| x.0).collect();
            let drm = &self.core.adapter.drm;
            drm.syncobj_wait_flags(&handles, i64::MAX, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL)?;
            for (h, _) in in_flight.drain(..) {
                drm.syncobj_destroy(h)?;
            }
        }
        drop(in_flight);
        self.check_hang()
    }

    /// One EXECBUFFER2 of `exe` (or the no-op batch).
    fn exec(&self, exe: Option<&Arc<Executable>>, waits: &[u32], signals: &[u32]) -> Result<()> {
        self.core.check_lost()?;
        let drm = &self.core.adapter.drm;
        let mut objs = HashMap::new();
        let batch = match exe {
            Some(e) => {
                e.objects(&mut objs);
                &e.batch
            }
            None => &self.noop,
        };
        let pinned = EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS;
        let mut list: Vec<drm_i915_gem_exec_object2> = objs
            .values()
            .filter(|o| o.0 != batch.handle)
            .map(|&(handle, va, _)| drm_i915_gem_exec_object2 {
                handle,
                offset: va,
                flags: pinned | EXEC_OBJECT_WRITE,
                ..Default::default()
            })
            .collect();
        // Deterministic order (handles), the batch last as EXECBUFFER2 wants by default.
        list.sort_by_key(|o| o.handle);
        list.push(drm_i915_gem_exec_object2 {
            handle: batch.handle,
            offset: batch.va,
            flags: pinned,
            ..Default::default()
        });
        let done = drm.syncobj_create(false)?;
        let mut fences: Vec<drm_i915_gem_exec_fence> = waits
            .iter()
            .map(|&handle| drm_i915_gem_exec_fence {
                handle,
                flags: I915_EXEC_FENCE_WAIT,
            })
            .chain(signals.iter().chain(std::iter::once(&done)).map(|&handle| {
                drm_i915_gem_exec_fence {
                    handle,
                    flags: I915_EXEC_FENCE_SIGNAL,
                }
            }))
            .collect();
        let mut eb = drm_i915_gem_execbuffer2 {
            buffers_ptr: list.as_mut_ptr() as u64,
            buffer_count: list.len() as u32,
            flags: I915_EXEC_RENDER | I915_EXEC_NO_RELOC | I915_EXEC_FENCE_ARRAY,
            num_cliprects: fences.len() as u32,
            cliprects_ptr: fences.as_mut_ptr() as u64,
            rsvd1: u64::from(self.ctx),
            ..Default::default()
        };
        if let Err(e) = drm.execbuffer2(&mut eb) {
            let _ = drm.syncobj_destroy(done);
            if e.errno() == Some(libc_eio()) || matches!(e, KernelError::DeviceLost(_)) {
                self.core.lost.store(true, Ordering::Release);
                return Err(DriverError::DeviceLost(format!("EXECBUFFER2: {e}")));
            }
            return Err(e.into());
        }
        self.lock().push((done, exe.cloned()));
        Ok(())
    }
}

const fn libc_eio() -> i32 {
    5
}

impl Drop for Queue {
    fn drop(&mut self) {
        let drm = self.core.adapter.drm.clone();
        let in_flight = self.in_flight.get_mut().unwrap_or_else(|e| e.into_inner());
        for (h, _) in in_flight.drain(..) {
            if let Err(e) = drm.syncobj_destroy(h) {
                log::warn!("queue teardown: syncobj {h}: {e}");
            }
        }
        if let Err(e) = drm.context_destroy(self.ctx) {
            log::warn!("queue teardown: context {}: {e}", self.ctx);
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
        q.core.check_lost()?;
        if q.lock().len() > MAX_IN_FLIGHT {
            q.wait_idle()?;
        }
        // SAFETY: pSubmits holds submitCount structures per the spec.
        let submits = unsafe { ffi::slice(p_submits, submit_count, "pSubmits") }?;
        let fence_sync = if fence.is_null() {
            None
        } else {
            Some(q.core.fences.get(fence.as_raw())?.syncobj)
        };
        let sems = |p: *const vk::Semaphore, n: u32| -> Result<Vec<u32>> {
            // SAFETY: `n` semaphores per the spec.
            let s = unsafe { ffi::slice(p, n, "semaphores") }?;
            s.iter()
                .map(|h| q.core.semaphores.get(h.as_raw()).map(|s| s.syncobj))
                .collect()
        };
        // Resolve everything before submitting anything.
        let mut plan = Vec::new();
        for s in submits {
            let waits = sems(s.p_wait_semaphores, s.wait_semaphore_count)?;
            let signals = sems(s.p_signal_semaphores, s.signal_semaphore_count)?;
            // SAFETY: commandBufferCount handles per the spec.
            let cbs = unsafe {
                ffi::slice(
                    s.p_command_buffers,
                    s.command_buffer_count,
                    "pCommandBuffers",
                )
            }?;
            let exes = cbs
                .iter()
                // SAFETY: live primary command buffers per the spec.
                .map(|c| unsafe { CommandBuffer::from_handle(*c) }?.executable())
                .collect::<Result<Vec<_>>>()?;
            plan.push((waits, exes, signals));
        }
        let last = plan.len().wrapping_sub(1);
        for (i, (waits, exes, mut signals)) in plan.into_iter().enumerate() {
            if i == last {
                signals.extend(fence_sync);
            }
            if exes.is_empty() {
                if !waits.is_empty() || !signals.is_empty() {
                    q.exec(None, &waits, &signals)?;
                }
                continue;
            }
            let n = exes.len();
            for (j, e) in exes.iter().enumerate() {
                let w: &[u32] = if j == 0 { &waits } else { &[] };
                let s: &[u32] = if j + 1 == n { &signals } else { &[] };
                q.exec(Some(e), w, s)?;
            }
        }
        if submits.is_empty() {
            if let Some(f) = fence_sync {
                q.exec(None, &[], &[f])?;
            }
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
