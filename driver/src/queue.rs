//! VkQueue: submissions to the kernel.
//!
//! Each command buffer of a submission is one EXECBUFFER2 on the device's hardware context
//! (which runs them in order), with every object it references softpinned. Wait semaphores go
//! to the first execbuffer of a VkSubmitInfo, signal semaphores and the fence to the last, as
//! syncobjs in an I915_EXEC_FENCE_ARRAY. Every execbuffer also signals a syncobj the queue
//! keeps (with the executables, so their objects live) until the work is known complete.
//! A hang (the kernel resets the context) makes the device lost: the queue sees it in the
//! context's reset statistics, and every later wait and submit reports VK_ERROR_DEVICE_LOST.
//!
//! Timeline semaphores (VK_KHR_timeline_semaphore) travel as (syncobj, point) pairs in the
//! execbuffer timeline-fences extension (I915_EXEC_USE_EXTENSIONS). The kernel refuses to wait
//! for a point no one has submitted a signal for yet, while Vulkan allows waiting before the
//! signal: such a submission (and, to keep queue order, every later one) is held back in a
//! deferred list and handed to the kernel when its points become available, which only a
//! host-side vkSignalSemaphore (or an earlier deferred submission going out) can cause, so
//! the list is flushed there and at every submit. Waits on the host use WAIT_FOR_SUBMIT, so a
//! fence or value whose submission is deferred is simply not signalled yet.
//! On a kernel without timeline fences (Linux < 5.8) timeline semaphores are emulated
//! (`sync::EmulatedTimeline`): their waits and signals travel as binary syncobjs in the fence
//! array, resolved when the step goes to the kernel (`Queue::exec_step`).
//! vkQueueSubmit and vkQueueSubmit2KHR share one plan: [`Step`]s, one per execbuffer.
//!
//! A submission with nothing but a fence (no command buffer, no semaphore) needs no
//! execbuffer: its fence must signal once everything submitted before it has completed, and
//! the context runs its execbuffers in order, so the fence gets the completion fence of the
//! last execbuffer (DRM_IOCTL_SYNCOBJ_TRANSFER), or is signalled at once when everything is
//! known complete. Kernels without the timeline syncobj ioctls, or a queue with deferred
//! submissions, take the general path (the no-op batch).
//!
//! The syncobjs that track execbuffers (`done`) are recycled once their execbuffers are known
//! complete, and the lists an execbuffer is built from are kept for their capacity: in the
//! steady state a submission creates and destroys no kernel object and allocates only its plan.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

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
use crate::sync::{Fence, Semaphore, TimelinePoint};

/// Execbuffers in flight beyond which the next one first retires everything.
const MAX_IN_FLIGHT: usize = 256;

type InFlight = (u32, Option<Arc<Executable>>);

/// Execbuffers handed to the kernel, and what the next one reuses.
#[derive(Default)]
struct Flight {
    /// (done syncobj, executable) of each execbuffer not yet known complete.
    in_flight: Vec<InFlight>,
    /// Done syncobjs of completed execbuffers, for the next ones (a binary syncobj an
    /// execbuffer signals gets that execbuffer's fence in place of the old one).
    free: Vec<u32>,
    /// The done syncobj of the last execbuffer; None once everything is known complete.
    last: Option<u32>,
    /// The lists of the last execbuffer, kept for their capacity.
    objs: HashMap<u32, crate::cmd::ExecObject>,
    list: Vec<drm_i915_gem_exec_object2>,
    fences: Vec<drm_i915_gem_exec_fence>,
    points: Vec<u64>,
}

/// One execbuffer of a submission: its batch (None: the no-op batch), the (syncobj, point)
/// pairs it waits for and signals (point 0: binary), and the semaphores whose points must be
/// available before the kernel accepts it.
pub struct Step {
    pub exe: Option<Arc<Executable>>,
    pub waits: Vec<(u32, u64)>,
    pub signals: Vec<(u32, u64)>,
    pub gates: Vec<(Arc<Semaphore>, u64)>,
    /// Waits and signals of emulated timelines (kernels without timeline fences), resolved to
    /// binary syncobjs when the step goes to the kernel.
    pub emulated_waits: Vec<(Arc<Semaphore>, u64)>,
    pub emulated_signals: Vec<(Arc<Semaphore>, u64)>,
    /// Keeps the fence's syncobj alive while the step is deferred.
    pub _fence: Option<Arc<Fence>>,
}

impl Step {
    fn ready(&self) -> Result<bool> {
        for (s, v) in &self.gates {
            if !s.available(*v)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The semaphore waits and signals of one VkSubmitInfo / VkSubmitInfo2, resolved.
#[derive(Default)]
pub struct Batch {
    pub waits: Vec<(Arc<Semaphore>, u64)>,
    pub exes: Vec<Arc<Executable>>,
    pub signals: Vec<(Arc<Semaphore>, u64)>,
}

pub struct Queue {
    core: Arc<Core>,
    /// The hardware context all submissions run on.
    ctx: u32,
    /// A batch that does nothing (semaphore-only and fence-only submissions).
    noop: GemBo,
    flight: Mutex<Flight>,
    /// Steps waiting for timeline points nobody has submitted yet, in queue order.
    deferred: Mutex<VecDeque<Step>>,
    /// Notified whenever `deferred` becomes empty while a thread waits for that.
    drained: Condvar,
    /// Threads blocked on `drained` (changed under the `deferred` lock): a submission that
    /// leaves `deferred` empty with nobody waiting sends no wake-up.
    drain_waiters: AtomicUsize,
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
            flight: Mutex::new(Flight::default()),
            deferred: Mutex::new(VecDeque::new()),
            drained: Condvar::new(),
            drain_waiters: AtomicUsize::new(0),
        })
    }

    /// # Safety
    /// `h` must be null or a queue of a live device.
    pub unsafe fn from_handle<'a>(h: vk::Queue) -> Result<&'a Queue> {
        // SAFETY: forwarded caller contract.
        unsafe { handles::borrow(h.as_raw() as *mut u8, "VkQueue") }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Flight> {
        self.flight.lock().unwrap_or_else(|e| e.into_inner())
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

    fn lock_deferred(&self) -> std::sync::MutexGuard<'_, VecDeque<Step>> {
        self.deferred.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Submits the steps `plan` appends to the deferred list, in order after anything still
    /// deferred, deferring what cannot go yet (planned in place: no list of their own).
    pub fn submit(&self, plan: impl FnOnce(&mut VecDeque<Step>)) -> Result<()> {
        let mut deferred = self.lock_deferred();
        plan(&mut deferred);
        self.flush_locked(&mut deferred)
    }

    /// Hands deferred steps whose waits became available to the kernel.
    pub fn flush_deferred(&self) -> Result<()> {
        let mut deferred = self.lock_deferred();
        self.flush_locked(&mut deferred)
    }

    fn flush_locked(&self, deferred: &mut VecDeque<Step>) -> Result<()> {
        let outcome = (|| {
            while deferred.front().map(Step::ready).transpose()? == Some(true) {
                let Some(step) = deferred.pop_front() else {
                    break;
                };
                if let Err(e) = self.exec_step(&step) {
                    // Its signals will never come from the GPU: signal them so no waiter hangs
                    // (waiters then see the error: the device is lost, or the submit failed).
                    self.abandon(std::iter::once(step));
                    return Err(e);
                }
            }
            Ok(())
        })();
        if outcome.is_err() {
            // Later submissions depended on the failed one: none of them can run in order.
            self.abandon(deferred.drain(..));
        }
        if deferred.is_empty() {
            self.notify_drained();
        }
        outcome
    }

    /// Signals what `steps` would have signalled (device lost or teardown).
    fn abandon(&self, steps: impl Iterator<Item = Step>) {
        let drm = &self.core.adapter.drm;
        for step in steps {
            for (s, v) in &step.emulated_signals {
                if let Some(e) = &s.emulated {
                    e.reach(*v);
                }
            }
            for &(h, point) in &step.signals {
                let r = if point == 0 {
                    drm.syncobj_signal(&[h])
                } else {
                    drm.syncobj_timeline_signal(&[h], &[point])
                };
                if let Err(e) = r {
                    log::warn!("abandoned submission: signalling syncobj {h}: {e}");
                }
            }
        }
    }

    /// Drops every deferred step, signalling what it would have (vkDestroyDevice: nothing may
    /// wait for them any more).
    pub fn abandon_deferred(&self) {
        let mut deferred = self.lock_deferred();
        if !deferred.is_empty() {
            log::warn!(
                "{} submission(s) still waiting for semaphore values are dropped",
                deferred.len()
            );
        }
        self.abandon(deferred.drain(..));
        self.notify_drained();
    }

    /// Wakes the threads waiting for `deferred` to empty, if any (call with its lock held).
    fn notify_drained(&self) {
        if self.drain_waiters.load(Ordering::Relaxed) > 0 {
            self.drained.notify_all();
        }
    }

    /// Waits for every submission in flight and releases their syncobjs.
    pub fn wait_idle(&self) -> Result<()> {
        // Deferred submissions first: they go out when the host signals what they wait for.
        let mut deferred = self.lock_deferred();
        while !deferred.is_empty() {
            self.core.check_lost()?;
            self.drain_waiters.fetch_add(1, Ordering::Relaxed);
            deferred = self
                .drained
                .wait(deferred)
                .unwrap_or_else(|e| e.into_inner());
            self.drain_waiters.fetch_sub(1, Ordering::Relaxed);
        }
        drop(deferred);
        self.retire()
    }

    /// Waits for every execbuffer handed to the kernel, releases their executables and keeps
    /// their syncobjs for the next execbuffers.
    fn retire(&self) -> Result<()> {
        self.retire_locked(&mut self.lock())?;
        self.check_hang()
    }

    /// [`Queue::retire`] without the hang check, under the held `flight` lock.
    fn retire_locked(&self, flight: &mut Flight) -> Result<()> {
        if !flight.in_flight.is_empty() {
            let handles: Vec<u32> = flight.in_flight.iter().map(|x| x.0).collect();
            let drm = &self.core.adapter.drm;
            drm.syncobj_wait_flags(&handles, i64::MAX, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL)?;
            let Flight {
                in_flight, free, ..
            } = flight;
            free.extend(in_flight.drain(..).map(|(h, _)| h));
        }
        flight.last = None;
        Ok(())
    }

    /// Signals `fence` once everything submitted before has completed, without an execbuffer
    /// (see the module's comment). Returns false, having done nothing, where that takes the
    /// general path: deferred submissions, or a kernel without SYNCOBJ_TRANSFER.
    fn signal_fence_in_order(&self, fence: &Fence) -> Result<bool> {
        let drm = &self.core.adapter.drm;
        if !drm.caps().timeline_fences {
            return Ok(false);
        }
        // Held to the end: a concurrent submission (another queue handle is not possible, but
        // the flush of a host signal is) cannot slip between the check and the transfer.
        let deferred = self.lock_deferred();
        if !deferred.is_empty() {
            return Ok(false);
        }
        let flight = self.lock();
        match flight.last {
            Some(done) => drm.syncobj_transfer(fence.syncobj, 0, done, 0, 0)?,
            None => drm.syncobj_signal(&[fence.syncobj])?,
        }
        drop(flight);
        drop(deferred);
        Ok(true)
    }

    /// One EXECBUFFER2 for `step`: an emulated timeline's wait becomes a wait for the binary
    /// syncobj of the smallest submitted value that reaches it (none if already reached), each
    /// emulated signal a fresh binary syncobj the timeline records once the kernel took the
    /// execbuffer.
    fn exec_step(&self, step: &Step) -> Result<()> {
        let mut held = Vec::new();
        for (s, v) in &step.emulated_waits {
            if let Some(p) = s.emulated.as_ref().and_then(|e| e.wait_point(*v)) {
                held.push(p);
            }
        }
        let mut points = Vec::new();
        for (s, v) in &step.emulated_signals {
            let p = TimelinePoint::new(&self.core.adapter.drm)?;
            points.push((s, *v, p));
        }
        let waits = step
            .waits
            .iter()
            .copied()
            .chain(held.iter().map(|p| (p.syncobj, 0)));
        let signals = step
            .signals
            .iter()
            .copied()
            .chain(points.iter().map(|(_, _, p)| (p.syncobj, 0)));
        self.exec(step.exe.as_ref(), waits, signals)?;
        for (s, v, p) in points {
            if let Some(e) = &s.emulated {
                e.submitted(v, p);
            }
        }
        drop(held);
        Ok(())
    }

    /// One EXECBUFFER2 of `exe` (or the no-op batch); waits and signals are (syncobj, point),
    /// point 0 for binary syncobjs.
    fn exec(
        &self,
        exe: Option<&Arc<Executable>>,
        waits: impl Iterator<Item = (u32, u64)>,
        signals: impl Iterator<Item = (u32, u64)>,
    ) -> Result<()> {
        self.core.check_lost()?;
        let drm = &self.core.adapter.drm;
        // Held across the ioctl: the lists are the queue's, and every execbuffer goes out
        // under the deferred list's lock anyway.
        let mut flight = self.lock();
        if flight.in_flight.len() > MAX_IN_FLIGHT {
            self.retire_locked(&mut flight)?;
            self.check_hang()?;
        }
        let Flight {
            in_flight,
            free,
            last,
            objs,
            list,
            fences,
            points,
        } = &mut *flight;
        objs.clear();
        list.clear();
        fences.clear();
        points.clear();
        let batch = match exe {
            Some(e) => {
                e.objects(objs);
                // Memory a shader may reach through a buffer device address, named by no
                // descriptor: resident in every submission (as anv does).
                self.core.memories.for_each(|m| {
                    if m.device_address {
                        let size = m.size.div_ceil(crate::bo::PAGE) * crate::bo::PAGE;
                        objs.insert(m.bo, (m.bo, m.va, size));
                    }
                });
                &e.batch
            }
            None => &self.noop,
        };
        let pinned = EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS;
        list.extend(
            objs.values()
                .filter(|o| o.0 != batch.handle)
                .map(|&(handle, va, _)| drm_i915_gem_exec_object2 {
                    handle,
                    offset: va,
                    flags: pinned | EXEC_OBJECT_WRITE,
                    ..Default::default()
                }),
        );
        objs.clear();
        // Deterministic order (handles), the batch last as EXECBUFFER2 wants by default.
        list.sort_unstable_by_key(|o| o.handle);
        list.push(drm_i915_gem_exec_object2 {
            handle: batch.handle,
            offset: batch.va,
            flags: pinned,
            ..Default::default()
        });
        let done = match free.pop() {
            Some(h) => h,
            None => drm.syncobj_create(false)?,
        };
        let fence = |handle, flags| drm_i915_gem_exec_fence { handle, flags };
        for (handle, point) in waits {
            fences.push(fence(handle, I915_EXEC_FENCE_WAIT));
            points.push(point);
        }
        for (handle, point) in signals.chain(std::iter::once((done, 0))) {
            fences.push(fence(handle, I915_EXEC_FENCE_SIGNAL));
            points.push(point);
        }
        let mut eb = drm_i915_gem_execbuffer2 {
            buffers_ptr: list.as_mut_ptr() as u64,
            buffer_count: list.len() as u32,
            flags: I915_EXEC_RENDER | I915_EXEC_NO_RELOC | I915_EXEC_FENCE_ARRAY,
            num_cliprects: fences.len() as u32,
            cliprects_ptr: fences.as_mut_ptr() as u64,
            rsvd1: u64::from(self.ctx),
            ..Default::default()
        };
        // Timeline points need the timeline-fences extension instead of the fence array (it
        // takes binary syncobjs too, with point 0).
        let mut timeline = drm_i915_gem_execbuffer_ext_timeline_fences {
            base: i915_user_extension {
                name: DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES,
                ..Default::default()
            },
            fence_count: fences.len() as u64,
            handles_ptr: fences.as_mut_ptr() as u64,
            values_ptr: points.as_mut_ptr() as u64,
        };
        if points.iter().any(|&p| p != 0) {
            eb.flags = (eb.flags & !I915_EXEC_FENCE_ARRAY) | I915_EXEC_USE_EXTENSIONS;
            eb.num_cliprects = 0;
            eb.cliprects_ptr = std::ptr::addr_of_mut!(timeline) as u64;
        }
        if let Err(e) = drm.execbuffer2(&mut eb) {
            // The kernel signalled nothing: the syncobj is as it was, fit for the next one.
            free.push(done);
            if e.errno() == Some(libc_eio()) || matches!(e, KernelError::DeviceLost(_)) {
                self.core.lost.store(true, Ordering::Release);
                return Err(DriverError::DeviceLost(format!("EXECBUFFER2: {e}")));
            }
            return Err(e.into());
        }
        in_flight.push((done, exe.cloned()));
        *last = Some(done);
        Ok(())
    }
}

const fn libc_eio() -> i32 {
    5
}

impl Drop for Queue {
    fn drop(&mut self) {
        let drm = self.core.adapter.drm.clone();
        let flight = self.flight.get_mut().unwrap_or_else(|e| e.into_inner());
        let done = flight.in_flight.drain(..).map(|(h, _)| h);
        for h in done.chain(flight.free.drain(..)) {
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

/// vkGetDeviceQueue2: the one queue, for flags 0. Ferrite creates no protected-capable
/// queue, so a request with flags gets VK_NULL_HANDLE (the spec's answer when no queue was
/// created with those flags).
pub(crate) unsafe extern "system" fn get_device_queue2(
    device: vk::Device,
    p_info: *const vk::DeviceQueueInfo2<'_>,
    p_queue: *mut vk::Queue,
) {
    ffi::void("vkGetDeviceQueue2", || {
        // SAFETY: a valid structure per the spec.
        let info = unsafe { ffi::read(p_info, "pQueueInfo") }?;
        if !info.flags.is_empty() {
            log::warn!(
                "vkGetDeviceQueue2: no queue was created with flags {:?}",
                info.flags
            );
            // SAFETY: valid output pointer per the spec.
            return unsafe { ffi::write(p_queue, vk::Queue::null(), "pQueue") };
        }
        // SAFETY: forwarded; the same contract as vkGetDeviceQueue.
        unsafe { get_device_queue(device, info.queue_family_index, info.queue_index, p_queue) };
        Ok(())
    })
}

/// Turns resolved batches into execbuffer steps, appended to `steps`: waits on the first
/// execbuffer of a batch, signals (and, for the last batch, the fence) on its last; a batch
/// without command buffers runs the no-op batch if it waits or signals anything.
pub fn plan(batches: Vec<Batch>, fence: Option<Arc<Fence>>, steps: &mut VecDeque<Step>) {
    // Kernel syncobjs (binary or timeline) and emulated timelines go separate ways (one pass,
    // nothing allocated for an empty list).
    let split = |list: Vec<(Arc<Semaphore>, u64)>| {
        let (mut kernel, mut emulated) = (Vec::new(), Vec::new());
        for (s, v) in list {
            if s.emulated.is_some() {
                emulated.push((s, v));
            } else {
                kernel.push((s.syncobj, s.point(v)));
            }
        }
        (kernel, emulated)
    };
    let first = steps.len();
    let last = batches.len().wrapping_sub(1);
    for (i, b) in batches.into_iter().enumerate() {
        let gates: Vec<(Arc<Semaphore>, u64)> = b
            .waits
            .iter()
            .filter(|(s, _)| s.timeline)
            .cloned()
            .collect();
        let (waits, emulated_waits) = split(b.waits);
        let (mut signals, mut emulated_signals) = split(b.signals);
        let mut step_fence = None;
        if i == last {
            if let Some(f) = &fence {
                signals.push((f.syncobj, 0));
                step_fence = Some(f.clone());
            }
        }
        if b.exes.is_empty() {
            if !waits.is_empty()
                || !signals.is_empty()
                || !emulated_waits.is_empty()
                || !emulated_signals.is_empty()
            {
                steps.push_back(Step {
                    exe: None,
                    waits,
                    signals,
                    gates,
                    emulated_waits,
                    emulated_signals,
                    _fence: step_fence,
                });
            }
            continue;
        }
        let n = b.exes.len();
        let mut waits = Some((waits, gates, emulated_waits));
        for (j, e) in b.exes.into_iter().enumerate() {
            let (w, g, ew) = waits.take().unwrap_or_default();
            let (s, es, f) = if j + 1 == n {
                (
                    std::mem::take(&mut signals),
                    std::mem::take(&mut emulated_signals),
                    step_fence.take(),
                )
            } else {
                (Vec::new(), Vec::new(), None)
            };
            steps.push_back(Step {
                exe: Some(e),
                waits: w,
                signals: s,
                gates: g,
                emulated_waits: ew,
                emulated_signals: es,
                _fence: f,
            });
        }
    }
    if steps.len() == first {
        if let Some(f) = fence {
            steps.push_back(Step {
                exe: None,
                waits: Vec::new(),
                signals: vec![(f.syncobj, 0)],
                gates: Vec::new(),
                emulated_waits: Vec::new(),
                emulated_signals: Vec::new(),
                _fence: Some(f),
            });
        }
    }
}

/// A submission of nothing but `fence` (no command buffer, no semaphore): the fence signals in
/// queue order without an execbuffer where the kernel allows (see the module's comment).
/// Returns false where it takes the general path.
fn submit_fence_only(q: &Queue, fence: vk::Fence) -> Result<bool> {
    q.core.check_lost()?;
    if fence.is_null() {
        // Nothing to signal and nothing to run; deferred submissions go out when what they
        // wait for is signalled, which this submission is not.
        return Ok(q.lock_deferred().is_empty());
    }
    let fence = q.core.fences.get(fence.as_raw())?;
    q.signal_fence_in_order(&fence)
}

/// The common part of vkQueueSubmit and vkQueueSubmit2KHR.
pub fn submit_batches(
    q: &Queue,
    fence: vk::Fence,
    resolve: impl FnOnce(&Core) -> Result<Vec<Batch>>,
) -> Result<vk::Result> {
    q.core.check_lost()?;
    let fence = if fence.is_null() {
        None
    } else {
        Some(q.core.fences.get(fence.as_raw())?)
    };
    // Resolve everything before submitting anything.
    let batches = resolve(&q.core)?;
    q.submit(|steps| plan(batches, fence, steps))?;
    Ok(vk::Result::SUCCESS)
}

/// The executable of a primary command buffer handle.
pub fn executable(cb: vk::CommandBuffer) -> Result<Arc<Executable>> {
    // SAFETY: a live primary command buffer per the spec.
    unsafe { CommandBuffer::from_handle(cb) }?.executable()
}

/// The common part of the vkQueueSubmit and vkQueueSubmit2KHR entry points: `counts` gives a
/// submission's wait, command-buffer and signal counts (all zero: it signals at most the fence),
/// `batch` resolves it.
///
/// # Safety
/// `p_submits` holds `submit_count` valid structures (the entry point's contract).
unsafe fn submit<S>(
    name: &'static str,
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const S,
    fence: vk::Fence,
    counts: impl Fn(&S) -> (u32, u32, u32),
    batch: impl Fn(&Core, &S) -> Result<Batch>,
) -> vk::Result {
    ffi::result(name, || {
        // SAFETY: a live queue per the spec.
        let q = unsafe { Queue::from_handle(queue) }?;
        // SAFETY: pSubmits holds submitCount structures per the spec.
        let submits = unsafe { ffi::slice(p_submits, submit_count, "pSubmits") }?;
        let fence_only = submits.iter().all(|s| counts(s) == (0, 0, 0));
        if fence_only && submit_fence_only(q, fence)? {
            return Ok(vk::Result::SUCCESS);
        }
        submit_batches(q, fence, |core| {
            submits.iter().map(|s| batch(core, s)).collect()
        })
    })
}

pub(crate) unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: the entry point's contract.
    unsafe {
        submit(
            "vkQueueSubmit",
            queue,
            submit_count,
            p_submits,
            fence,
            |s| {
                (
                    s.wait_semaphore_count,
                    s.command_buffer_count,
                    s.signal_semaphore_count,
                )
            },
            submit_info_batch,
        )
    }
}

/// A `VkSubmitInfo` (with its `VkTimelineSemaphoreSubmitInfo`) as a batch.
fn submit_info_batch(core: &Core, s: &vk::SubmitInfo<'_>) -> Result<Batch> {
    // SAFETY: a valid pNext chain per the spec.
    let tl =
        unsafe { ffi::find_in_chain(s.p_next, vk::StructureType::TIMELINE_SEMAPHORE_SUBMIT_INFO) }
            // SAFETY: the sType says what it is.
            .map(|p| unsafe { &*p.cast::<vk::TimelineSemaphoreSubmitInfo<'_>>() });
    let (wait_values, signal_values) = match tl {
        // SAFETY: arrays of the given counts per the spec.
        Some(t) => unsafe {
            (
                ffi::slice(
                    t.p_wait_semaphore_values,
                    t.wait_semaphore_value_count,
                    "pWaitSemaphoreValues",
                )?,
                ffi::slice(
                    t.p_signal_semaphore_values,
                    t.signal_semaphore_value_count,
                    "pSignalSemaphoreValues",
                )?,
            )
        },
        None => (&[][..], &[][..]),
    };
    let sems = |p: *const vk::Semaphore, n: u32, values: &[u64]| {
        // SAFETY: `n` semaphores per the spec.
        let s = unsafe { ffi::slice(p, n, "semaphores") }?;
        s.iter()
            .enumerate()
            .map(|(i, h)| {
                let sem = core.semaphores.get(h.as_raw())?;
                let v = values.get(i).copied().unwrap_or(0);
                if sem.timeline && values.len() <= i {
                    return Err(DriverError::InvalidArgument(
                        "timeline semaphore without a value (VkTimelineSemaphoreSubmitInfo)".into(),
                    ));
                }
                Ok((sem, v))
            })
            .collect::<Result<Vec<_>>>()
    };
    // SAFETY: commandBufferCount handles per the spec.
    let cbs = unsafe {
        ffi::slice(
            s.p_command_buffers,
            s.command_buffer_count,
            "pCommandBuffers",
        )
    }?;
    Ok(Batch {
        waits: sems(s.p_wait_semaphores, s.wait_semaphore_count, wait_values)?,
        exes: cbs.iter().map(|c| executable(*c)).collect::<Result<_>>()?,
        signals: sems(
            s.p_signal_semaphores,
            s.signal_semaphore_count,
            signal_values,
        )?,
    })
}

pub(crate) unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    submit_count: u32,
    p_submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: the entry point's contract.
    unsafe {
        submit(
            "vkQueueSubmit2KHR",
            queue,
            submit_count,
            p_submits,
            fence,
            |s| {
                (
                    s.wait_semaphore_info_count,
                    s.command_buffer_info_count,
                    s.signal_semaphore_info_count,
                )
            },
            submit_info2_batch,
        )
    }
}

/// A `VkSubmitInfo2` as a batch.
fn submit_info2_batch(core: &Core, s: &vk::SubmitInfo2<'_>) -> Result<Batch> {
    let sems = |p: *const vk::SemaphoreSubmitInfo<'_>, n: u32| {
        // SAFETY: `n` semaphore infos per the spec.
        let infos = unsafe { ffi::slice(p, n, "pSemaphoreInfos") }?;
        infos
            .iter()
            .map(|i| Ok((core.semaphores.get(i.semaphore.as_raw())?, i.value)))
            .collect::<Result<Vec<_>>>()
    };
    // SAFETY: commandBufferInfoCount infos per the spec.
    let cbs = unsafe {
        ffi::slice(
            s.p_command_buffer_infos,
            s.command_buffer_info_count,
            "pCommandBufferInfos",
        )
    }?;
    Ok(Batch {
        waits: sems(s.p_wait_semaphore_infos, s.wait_semaphore_info_count)?,
        exes: cbs
            .iter()
            .map(|c| executable(c.command_buffer))
            .collect::<Result<_>>()?,
        signals: sems(s.p_signal_semaphore_infos, s.signal_semaphore_info_count)?,
    })
}

pub(crate) unsafe extern "system" fn queue_wait_idle(queue: vk::Queue) -> vk::Result {
    ffi::result("vkQueueWaitIdle", || {
        // SAFETY: a live queue per the spec.
        unsafe { Queue::from_handle(queue) }?.wait_idle()?;
        Ok(vk::Result::SUCCESS)
    })
}
