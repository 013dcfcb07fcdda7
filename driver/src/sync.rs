//! VkFence and VkSemaphore, backed by kernel syncobjs: a fence is a binary syncobj a
//! submission's completion signals; a binary semaphore is one a submission signals and a later
//! one waits for; a timeline semaphore (VK_KHR_timeline_semaphore) is a timeline syncobj whose
//! points are the semaphore's values (DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT/SIGNAL/QUERY on the host,
//! the execbuffer timeline-fences extension on the queue).
//!
//! A kernel without timeline fences in the execbuffer (Linux < 5.8, see docs/kernel.md) gets
//! [`EmulatedTimeline`]s instead: the semaphore's value lives in the driver, and each value a
//! submission signals is a fresh binary syncobj that execbuffer signals; a submission waiting
//! for value v waits for the binary syncobj of the smallest submitted value >= v (values of one
//! timeline only grow, so that one completes no earlier than v's own signal operation).

use std::sync::{Arc, Condvar, Mutex};

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

/// Fences looked up without an allocation up to this many (vkWaitForFences' usual case).
const FEW_FENCES: usize = 8;

/// Calls `f` with the syncobjs behind `count` fences: on the stack for up to [`FEW_FENCES`].
fn with_syncobjs<R>(
    d: &Device,
    count: u32,
    p_fences: *const vk::Fence,
    f: impl FnOnce(&[u32]) -> Result<R>,
) -> Result<R> {
    if count as usize > FEW_FENCES {
        return f(&syncobjs(d, count, p_fences)?);
    }
    // SAFETY: `count` valid fence handles per the spec.
    let fences = unsafe { ffi::slice(p_fences, count, "pFences") }?;
    let mut handles = [0u32; FEW_FENCES];
    for (h, fence) in handles.iter_mut().zip(fences) {
        *h = d.fences.get(fence.as_raw())?.syncobj;
    }
    f(&handles[..fences.len()])
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

crate::device::registry_creates! {
    create_fence, "vkCreateFence", FenceCreateInfo => fences, Fence, "pFence", new_fence;
}

/// The object vkCreateFence makes of its create info.
fn new_fence(d: &Device, info: &vk::FenceCreateInfo<'_>) -> Result<Fence> {
    let signaled = info.flags.contains(vk::FenceCreateFlags::SIGNALED);
    let syncobj = d.adapter.drm.syncobj_create(signaled)?;
    Ok(Fence {
        drm: d.adapter.drm.clone(),
        syncobj,
    })
}

crate::device::registry_destroys! {
    destroy_fence, "vkDestroyFence", vk::Fence => fences;
}

pub(crate) unsafe extern "system" fn reset_fences(
    device: vk::Device,
    count: u32,
    p_fences: *const vk::Fence,
) -> vk::Result {
    ffi::result("vkResetFences", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        if count > 0 {
            with_syncobjs(d, count, p_fences, |handles| {
                Ok(d.adapter.drm.syncobj_reset(handles)?)
            })?;
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
        if count == 0 {
            return Err(DriverError::InvalidArgument("fenceCount is 0".into()));
        }
        let r = with_syncobjs(d, count, p_fences, |handles| {
            wait(d, handles, wait_all != vk::FALSE, deadline(timeout))
        })?;
        d.queue().obj.check_hang()?;
        Ok(r)
    })
}

/// A VkSemaphore: binary (a syncobj a submission signals and a later one waits for),
/// timeline on a timeline syncobj (values are its points), or an emulated timeline.
pub struct Semaphore {
    drm: Arc<DrmDevice>,
    /// The binary or timeline syncobj (0 for an emulated timeline, which has none).
    pub syncobj: u32,
    pub timeline: bool,
    /// Set for a timeline semaphore on a kernel without timeline fences.
    pub emulated: Option<EmulatedTimeline>,
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
        if let Some(e) = &self.emulated {
            return Ok(e.available(value));
        }
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

    /// The current value of a timeline semaphore.
    pub fn value(&self) -> Result<u64> {
        match &self.emulated {
            Some(e) => e.value(),
            None => Ok(self.drm.syncobj_query(&[self.syncobj], 0)?[0]),
        }
    }

    /// Signals `value` of a timeline semaphore from the host.
    pub fn host_signal(&self, value: u64) -> Result<()> {
        match &self.emulated {
            Some(e) => e.reach(value),
            None => self
                .drm
                .syncobj_timeline_signal(&[self.syncobj], &[value])?,
        }
        Ok(())
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        if self.emulated.is_some() {
            return;
        }
        if let Err(e) = self.drm.syncobj_destroy(self.syncobj) {
            log::error!("SYNCOBJ_DESTROY of {}: {e}", self.syncobj);
        }
    }
}

/// A binary syncobj one submission signals for one value of an [`EmulatedTimeline`];
/// destroyed when the last holder (the timeline, or a submission about to wait for it) drops it.
pub struct TimelinePoint {
    drm: Arc<DrmDevice>,
    pub syncobj: u32,
}

impl TimelinePoint {
    pub fn new(drm: &Arc<DrmDevice>) -> Result<Arc<TimelinePoint>> {
        let syncobj = drm.syncobj_create(false)?;
        Ok(Arc::new(TimelinePoint {
            drm: drm.clone(),
            syncobj,
        }))
    }
}

impl Drop for TimelinePoint {
    fn drop(&mut self) {
        if let Err(e) = self.drm.syncobj_destroy(self.syncobj) {
            log::error!("SYNCOBJ_DESTROY of timeline point {}: {e}", self.syncobj);
        }
    }
}

#[derive(Default)]
struct TimelineState {
    /// The value known reached (host signals and completed points).
    reached: u64,
    /// Values submitted for signalling and not yet seen complete, in increasing order.
    pending: Vec<(u64, Arc<TimelinePoint>)>,
}

/// Wakes host waits on emulated timelines whenever a value is signalled from the host or a
/// submission that signals one goes to the kernel (a generation counter and its condvar;
/// process-wide, so a wait over several semaphores needs one place to sleep).
static TIMELINE_EVENTS: (Mutex<u64>, Condvar) = (Mutex::new(0), Condvar::new());

fn timeline_event() {
    let (m, cv) = &TIMELINE_EVENTS;
    *m.lock().unwrap_or_else(|e| e.into_inner()) += 1;
    cv.notify_all();
}

fn timeline_generation() -> u64 {
    *TIMELINE_EVENTS.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sleeps until the generation differs from `seen` or `deadline` (CLOCK_MONOTONIC ns) passes.
fn wait_timeline_event(seen: u64, deadline: i64) {
    let (m, cv) = &TIMELINE_EVENTS;
    let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
    while *g == seen {
        let left = deadline.saturating_sub(monotonic_ns());
        if left <= 0 {
            return;
        }
        g = cv
            .wait_timeout(g, std::time::Duration::from_nanos(left as u64))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// A timeline semaphore kept by the driver (kernels without timeline fences).
pub struct EmulatedTimeline {
    drm: Arc<DrmDevice>,
    state: Mutex<TimelineState>,
}

impl EmulatedTimeline {
    pub fn new(drm: &Arc<DrmDevice>, initial: u64) -> EmulatedTimeline {
        EmulatedTimeline {
            drm: drm.clone(),
            state: Mutex::new(TimelineState {
                reached: initial,
                pending: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TimelineState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `value` is reached or a submitted signal will reach it.
    pub fn available(&self, value: u64) -> bool {
        let st = self.lock();
        st.reached >= value || st.pending.iter().any(|(v, _)| *v >= value)
    }

    /// What a submission waiting for `value` must wait for: nothing if it is reached, else the
    /// point of the smallest submitted value >= `value` (None too if there is none: the caller
    /// checked [`EmulatedTimeline::available`] first).
    pub fn wait_point(&self, value: u64) -> Option<Arc<TimelinePoint>> {
        let st = self.lock();
        if st.reached >= value {
            return None;
        }
        st.pending
            .iter()
            .find(|(v, _)| *v >= value)
            .map(|(_, p)| p.clone())
    }

    /// Records that an execbuffer handed to the kernel signals `point` for `value`.
    pub fn submitted(&self, value: u64, point: Arc<TimelinePoint>) {
        let mut st = self.lock();
        let at = st.pending.partition_point(|(v, _)| *v <= value);
        st.pending.insert(at, (value, point));
        drop(st);
        timeline_event();
    }

    /// The value is reached (host signal, or a submission abandoned so no waiter hangs).
    pub fn reach(&self, value: u64) {
        let mut st = self.lock();
        st.reached = st.reached.max(value);
        st.pending.retain(|(v, _)| *v > value);
        drop(st);
        timeline_event();
    }

    /// Folds completed points into the value and releases their syncobjs; returns the value.
    pub fn value(&self) -> Result<u64> {
        let mut st = self.lock();
        let mut done = Vec::new();
        for (i, (_, p)) in st.pending.iter().enumerate() {
            match self.drm.syncobj_wait(&[p.syncobj], 0, true) {
                Ok(()) => done.push(i),
                Err(KernelError::Timeout) => {}
                Err(e) => return Err(e.into()),
            }
        }
        for &i in done.iter().rev() {
            let (v, _) = st.pending.remove(i);
            st.reached = st.reached.max(v);
        }
        let reached = st.reached;
        // Points at or below the value are not needed by any later wait.
        st.pending.retain(|(v, _)| *v > reached);
        Ok(reached)
    }

    /// The syncobj of the smallest pending value >= `value`, if any.
    fn pending_syncobj(&self, value: u64) -> Option<Arc<TimelinePoint>> {
        self.lock()
            .pending
            .iter()
            .find(|(v, _)| *v >= value)
            .map(|(_, p)| p.clone())
    }
}

/// vkWaitSemaphores over emulated timelines: re-checks the values whenever something may have
/// changed. While submitted points exist it sleeps in the kernel on them, in slices of
/// [`EMULATED_WAIT_SLICE_NS`] so a host signal from another thread is seen too; otherwise it
/// sleeps until a host signal or a submission.
fn wait_emulated(
    drm: &DrmDevice,
    sems: &[(Arc<Semaphore>, u64)],
    wait_all: bool,
    deadline: i64,
) -> Result<vk::Result> {
    loop {
        let seen = timeline_generation();
        let mut reached = 0;
        let mut points = Vec::new();
        for (s, v) in sems {
            let e = s.emulated.as_ref().ok_or_else(|| {
                DriverError::InvalidArgument("a kernel timeline among emulated ones".into())
            })?;
            if e.value()? >= *v {
                reached += 1;
            } else if let Some(p) = e.pending_syncobj(*v) {
                points.push(p);
            }
        }
        if reached == sems.len() || (!wait_all && reached > 0) {
            return Ok(vk::Result::SUCCESS);
        }
        let now = monotonic_ns();
        if now >= deadline {
            return Ok(vk::Result::TIMEOUT);
        }
        if points.is_empty() {
            wait_timeline_event(seen, deadline);
        } else {
            let handles: Vec<u32> = points.iter().map(|p| p.syncobj).collect();
            let slice = deadline.min(now.saturating_add(EMULATED_WAIT_SLICE_NS));
            match drm.syncobj_wait(&handles, slice, false) {
                Ok(()) | Err(KernelError::Timeout) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// How long one kernel wait of [`wait_emulated`] lasts before it looks for host signals.
const EMULATED_WAIT_SLICE_NS: i64 = 5_000_000;

crate::device::registry_creates! {
    create_semaphore, "vkCreateSemaphore", SemaphoreCreateInfo => semaphores, Semaphore, "pSemaphore", new_semaphore;
}

/// The object vkCreateSemaphore makes of its create info.
fn new_semaphore(d: &Device, info: &vk::SemaphoreCreateInfo<'_>) -> Result<Semaphore> {
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
    let sem = if timeline && !drm.caps().timeline_fences {
        Semaphore {
            drm: drm.clone(),
            syncobj: 0,
            timeline,
            emulated: Some(EmulatedTimeline::new(drm, initial)),
        }
    } else {
        let syncobj = drm.syncobj_create(false)?;
        // Owned from here on: dropped (destroying the syncobj) on every error path.
        let sem = Semaphore {
            drm: drm.clone(),
            syncobj,
            timeline,
            emulated: None,
        };
        if timeline && initial > 0 {
            drm.syncobj_timeline_signal(&[syncobj], &[initial])?;
        }
        sem
    };
    Ok(sem)
}

crate::device::registry_destroys! {
    destroy_semaphore, "vkDestroySemaphore", vk::Semaphore => semaphores;
}

/// The (semaphore, value) pairs of vkWaitSemaphores.
fn timeline_pairs(
    d: &Device,
    count: u32,
    p_sems: *const vk::Semaphore,
    p_values: *const u64,
) -> Result<Vec<(Arc<Semaphore>, u64)>> {
    // SAFETY: `count` semaphores and values per the spec.
    let (sems, values) = unsafe {
        (
            ffi::slice(p_sems, count, "pSemaphores")?,
            ffi::slice(p_values, count, "pValues")?,
        )
    };
    let mut pairs = Vec::with_capacity(sems.len());
    for (h, v) in sems.iter().zip(values) {
        let s = d.semaphores.get(h.as_raw())?;
        if !s.timeline {
            return Err(DriverError::InvalidArgument(
                "a binary semaphore passed where a timeline semaphore is required".into(),
            ));
        }
        pairs.push((s, *v));
    }
    Ok(pairs)
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
        let value = s.value()?;
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
        let pairs = timeline_pairs(d, info.semaphore_count, info.p_semaphores, info.p_values)?;
        if pairs.is_empty() {
            return Ok(vk::Result::SUCCESS);
        }
        let wait_all = !info.flags.contains(vk::SemaphoreWaitFlags::ANY);
        if pairs.iter().any(|(s, _)| s.emulated.is_some()) {
            let r = wait_emulated(&d.adapter.drm, &pairs, wait_all, deadline(timeout))?;
            d.queue().obj.check_hang()?;
            return Ok(r);
        }
        let handles: Vec<u32> = pairs.iter().map(|(s, _)| s.syncobj).collect();
        let values: Vec<u64> = pairs.iter().map(|(_, v)| *v).collect();
        // A value nobody has signalled yet is waited for too (WAIT_FOR_SUBMIT): another thread
        // may still signal it from the host or submit work that does.
        let mut flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
        if wait_all {
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
        s.host_signal(info.value)?;
        // Submissions held back waiting for this value can go to the kernel now.
        d.queue().obj.flush_deferred()?;
        Ok(vk::Result::SUCCESS)
    })
}
