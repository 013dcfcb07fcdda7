//! Fences and DRM sync objects (binary and timeline) of the simulated kernel.
//!
//! All fence state changes happen under one mutex, with one condition variable that wakes
//! every waiter to re-check; waits take absolute CLOCK_MONOTONIC deadlines like the uAPI.
//! The table counts the threads blocked on the condition variable, so a state change with
//! nobody waiting (the common case: a job runs synchronously, its fence is signaled before
//! anyone waits for it) costs no wake-up system call.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use rustc_hash::FxHashMap;

use crate::drm_device::monotonic_ns;

/// A dma-fence: signaled once, possibly with an error (e.g. -EIO after a GPU hang).
#[derive(Debug, Default)]
pub(crate) struct Fence {
    signaled: bool,
    error: i32,
}

pub(crate) type FenceRef = Arc<Mutex<Fence>>;

/// One point of a sync object: value 0 for a binary payload.
#[derive(Debug, Clone)]
struct Point {
    value: u64,
    fence: FenceRef,
}

#[derive(Debug, Default)]
struct Syncobj {
    /// Points in the order they were added.
    points: Vec<Point>,
    /// Highest value of signaled points that were garbage-collected.
    base: u64,
}

fn fence_signaled(f: &FenceRef) -> bool {
    f.lock().map(|f| f.signaled).unwrap_or(true)
}

impl Syncobj {
    /// The binary payload / the timeline's head: signaled when every point is.
    fn has_fence(&self) -> bool {
        !self.points.is_empty() || self.base > 0
    }

    fn head_signaled(&self) -> bool {
        self.has_fence() && self.points.iter().all(|p| fence_signaled(&p.fence))
    }

    /// The timeline value: the highest value up to which every point is signaled.
    fn payload(&self) -> u64 {
        let mut sorted: Vec<&Point> = self.points.iter().collect();
        sorted.sort_by_key(|p| p.value);
        let mut value = self.base;
        for p in sorted {
            if !fence_signaled(&p.fence) {
                break;
            }
            value = value.max(p.value);
        }
        value
    }

    fn last_submitted(&self) -> u64 {
        self.points
            .iter()
            .map(|p| p.value)
            .max()
            .unwrap_or(0)
            .max(self.base)
    }

    fn available(&self, point: u64) -> bool {
        if point == 0 {
            self.has_fence()
        } else {
            self.last_submitted() >= point
        }
    }

    fn signaled(&self, point: u64) -> bool {
        if point == 0 {
            self.head_signaled()
        } else {
            self.payload() >= point
        }
    }

    /// The fence standing for `point`: the earliest point at or after it (a chain node is
    /// signaled once everything before it is, which the payload rule models).
    fn fence_for(&self, point: u64, done: &FenceRef) -> Option<FenceRef> {
        if point == 0 {
            return self
                .points
                .last()
                .map(|p| p.fence.clone())
                .or_else(|| (self.base > 0).then(|| done.clone()));
        }
        if self.payload() >= point {
            return Some(done.clone());
        }
        self.points
            .iter()
            .filter(|p| p.value >= point)
            .min_by_key(|p| p.value)
            .map(|p| p.fence.clone())
    }

    fn replace(&mut self, fence: Option<FenceRef>) {
        self.points.clear();
        self.base = 0;
        if let Some(fence) = fence {
            self.points.push(Point { value: 0, fence });
        }
    }

    /// Attaches `fence` at `point`: the payload for point 0 (a binary syncobj), a timeline point
    /// otherwise.
    fn attach(&mut self, point: u64, fence: FenceRef) {
        if point == 0 {
            self.replace(Some(fence));
        } else {
            self.add_point(point, fence);
        }
    }

    fn add_point(&mut self, value: u64, fence: FenceRef) {
        self.points.push(Point { value, fence });
        // Collect signaled points below the payload, keeping the head.
        if self.points.len() > 32 {
            let payload = self.payload();
            let last = self.points.len() - 1;
            let mut i = 0;
            self.points.retain(|p| {
                let keep = i == last || p.value > payload || !fence_signaled(&p.fence);
                i += 1;
                keep
            });
            self.base = self.base.max(payload);
        }
    }
}

/// What a wait waits for on each handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitFor {
    Signaled,
    Available,
}

#[derive(Debug, Default)]
struct Table {
    syncobjs: FxHashMap<u32, Syncobj>,
    next_handle: u32,
    /// Threads blocked in [`SyncTable::wait`] or [`SyncTable::wait_fence_until`]; changed
    /// and read under the table's lock, so a change made under it cannot miss a waiter.
    waiters: usize,
    /// Wake-ups sent (notifications with at least one waiter), for tests.
    wakeups: u64,
}

/// Applies `f` to the syncobj of each of `handles` (with its index in `handles`), to all of them
/// or, when one handle names no syncobj, to none (ENOENT).
fn update_all(
    t: &mut Table,
    handles: &[u32],
    mut f: impl FnMut(usize, &mut Syncobj),
) -> Result<(), i32> {
    if !handles.iter().all(|h| t.syncobjs.contains_key(h)) {
        return Err(libc::ENOENT);
    }
    for (i, h) in handles.iter().enumerate() {
        if let Some(s) = t.syncobjs.get_mut(h) {
            f(i, s);
        }
    }
    Ok(())
}

/// The sync-object table of one simulated device.
#[derive(Debug)]
pub(crate) struct SyncTable {
    table: Mutex<Table>,
    cond: Condvar,
    /// A fence signaled without error, shared by everything that gets one (a job that ran
    /// without error, a host signal, a syncobj created signaled): a signaled fence never
    /// changes again, so one object serves them all without an allocation each.
    done: FenceRef,
}

impl Default for SyncTable {
    fn default() -> SyncTable {
        SyncTable {
            table: Mutex::default(),
            cond: Condvar::new(),
            done: Arc::new(Mutex::new(Fence {
                signaled: true,
                error: 0,
            })),
        }
    }
}

impl SyncTable {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes every waiter to re-check, if there is one; `t` is the held table lock.
    fn notify(&self, t: &mut Table) {
        if t.waiters > 0 {
            t.wakeups += 1;
            self.cond.notify_all();
        }
    }

    /// Blocks on the condition variable until notified or `deadline_ns` (absolute
    /// CLOCK_MONOTONIC, in the future) passes, counted in `waiters` meanwhile.
    fn block<'a>(&self, mut t: MutexGuard<'a, Table>, deadline_ns: i64) -> MutexGuard<'a, Table> {
        let left = Duration::from_nanos(deadline_ns.saturating_sub(monotonic_ns()).max(0) as u64);
        t.waiters += 1;
        let mut t = self
            .cond
            .wait_timeout(t, left)
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
        t.waiters -= 1;
        t
    }

    /// Wake-up notifications sent so far (a state change with no waiter sends none).
    pub(crate) fn wakeups(&self) -> u64 {
        self.lock().wakeups
    }

    /// Threads blocked in a wait right now.
    pub(crate) fn waiters(&self) -> usize {
        self.lock().waiters
    }

    pub(crate) fn count(&self) -> usize {
        self.lock().syncobjs.len()
    }

    /// A fence already signaled with `error` (0: the shared one, no allocation).
    pub(crate) fn finished_fence(&self, error: i32) -> FenceRef {
        if error == 0 {
            return self.done.clone();
        }
        Arc::new(Mutex::new(Fence {
            signaled: true,
            error,
        }))
    }

    pub(crate) fn create(&self, signaled: bool) -> u32 {
        let mut t = self.lock();
        t.next_handle += 1;
        let handle = t.next_handle;
        let mut s = Syncobj::default();
        if signaled {
            s.replace(Some(self.done.clone()));
        }
        t.syncobjs.insert(handle, s);
        handle
    }

    pub(crate) fn destroy(&self, handle: u32) -> Result<(), i32> {
        self.lock()
            .syncobjs
            .remove(&handle)
            .map(|_| ())
            .ok_or(libc::EINVAL)
    }

    /// The fence a job waiting on `handle` at `point` depends on; `Ok(None)` if the point is
    /// already signaled and collected. ENOENT for a bad handle, EINVAL if there is no fence.
    pub(crate) fn wait_fence(&self, handle: u32, point: u64) -> Result<Option<FenceRef>, i32> {
        self.exec_fence(handle, Some(point))
    }

    /// An execbuffer's fence on `handle`: ENOENT if there is no such syncobj; with `wait`
    /// (the point waited for), what [`SyncTable::wait_fence`] gives. One lock for both.
    pub(crate) fn exec_fence(
        &self,
        handle: u32,
        wait: Option<u64>,
    ) -> Result<Option<FenceRef>, i32> {
        let t = self.lock();
        let s = t.syncobjs.get(&handle).ok_or(libc::ENOENT)?;
        let Some(point) = wait else {
            return Ok(None);
        };
        if !s.available(point) {
            return Err(libc::EINVAL);
        }
        Ok(s.fence_for(point, &self.done))
    }

    /// Error of the fence behind `handle` (binary payload), if it is signaled with one.
    pub(crate) fn fence_error(&self, handle: u32) -> Result<Option<i32>, i32> {
        let t = self.lock();
        let s = t.syncobjs.get(&handle).ok_or(libc::ENOENT)?;
        Ok(s.points
            .iter()
            .filter_map(|p| p.fence.lock().ok().map(|f| f.error))
            .find(|e| *e != 0))
    }

    /// Attaches `fence` to `handle`: replaces the payload for point 0, adds a timeline point
    /// otherwise.
    pub(crate) fn attach(&self, handle: u32, point: u64, fence: FenceRef) -> Result<(), i32> {
        let mut t = self.lock();
        t.syncobjs
            .get_mut(&handle)
            .ok_or(libc::ENOENT)?
            .attach(point, fence);
        self.notify(&mut t);
        Ok(())
    }

    /// Attaches `fence` to each (handle, point) of `targets` as [`SyncTable::attach`] does,
    /// under one lock; a handle that names no syncobj (destroyed meanwhile) is skipped.
    pub(crate) fn attach_each(&self, targets: impl Iterator<Item = (u32, u64)>, fence: &FenceRef) {
        let mut t = self.lock();
        for (handle, point) in targets {
            if let Some(s) = t.syncobjs.get_mut(&handle) {
                s.attach(point, fence.clone());
            }
        }
        self.notify(&mut t);
    }

    pub(crate) fn reset(&self, handles: &[u32]) -> Result<(), i32> {
        update_all(&mut self.lock(), handles, |_, s| s.replace(None))
    }

    /// Signals each `handles[i]` at `points[i]` (an empty `points`: point 0 for every handle)
    /// with an already-signaled fence.
    pub(crate) fn signal(&self, handles: &[u32], points: &[u64]) -> Result<(), i32> {
        let mut t = self.lock();
        update_all(&mut t, handles, |i, s| {
            s.attach(points.get(i).copied().unwrap_or(0), self.done.clone())
        })?;
        self.notify(&mut t);
        Ok(())
    }

    pub(crate) fn query(&self, handles: &[u32], last_submitted: bool) -> Result<Vec<u64>, i32> {
        let t = self.lock();
        handles
            .iter()
            .map(|h| {
                let s = t.syncobjs.get(h).ok_or(libc::ENOENT)?;
                Ok(if last_submitted {
                    s.last_submitted()
                } else {
                    s.payload()
                })
            })
            .collect()
    }

    /// DRM_IOCTL_SYNCOBJ_TRANSFER.
    pub(crate) fn transfer(
        &self,
        src: u32,
        src_point: u64,
        dst: u32,
        dst_point: u64,
    ) -> Result<(), i32> {
        let fence = self.wait_fence(src, src_point)?;
        let fence = fence.unwrap_or_else(|| self.done.clone());
        self.attach(dst, dst_point, fence)
    }

    /// Waits until `handles[i]` reaches `points[i]` (all of them, or any; an empty `points`:
    /// point 0, the binary payload, for every handle). Returns the index of the first one that
    /// is ready. ENOENT if a handle is not a syncobj (checked first, as the kernel looks
    /// them all up before waiting). `for_submit`: points without a fence yet are waited for
    /// instead of being an error (EINVAL). `deadline_ns` is absolute CLOCK_MONOTONIC.
    pub(crate) fn wait(
        &self,
        handles: &[u32],
        points: &[u64],
        wait_all: bool,
        for_submit: bool,
        what: WaitFor,
        deadline_ns: i64,
    ) -> Result<u32, i32> {
        let mut t = self.lock();
        if !handles.iter().all(|h| t.syncobjs.contains_key(h)) {
            return Err(libc::ENOENT);
        }
        loop {
            let mut first = None;
            let mut all = true;
            for (i, h) in handles.iter().enumerate() {
                let p = points.get(i).copied().unwrap_or(0);
                let s = t.syncobjs.get(h).ok_or(libc::ENOENT)?;
                if !for_submit && !s.available(p) && what == WaitFor::Signaled {
                    return Err(libc::EINVAL);
                }
                let ready = match what {
                    WaitFor::Signaled => s.signaled(p),
                    WaitFor::Available => s.available(p),
                };
                if ready {
                    first.get_or_insert(i as u32);
                } else {
                    all = false;
                }
            }
            if wait_all && all {
                return Ok(first.unwrap_or(0));
            }
            if !wait_all {
                if let Some(f) = first {
                    return Ok(f);
                }
            }
            if monotonic_ns() >= deadline_ns {
                return Err(libc::ETIME);
            }
            t = self.block(t, deadline_ns);
        }
    }

    /// Waits for one fence (GEM_WAIT); `deadline_ns` absolute. Returns whether it signaled.
    pub(crate) fn wait_fence_until(&self, fence: &FenceRef, deadline_ns: i64) -> bool {
        let mut t = self.lock();
        loop {
            if fence_signaled(fence) {
                return true;
            }
            if monotonic_ns() >= deadline_ns {
                return false;
            }
            t = self.block(t, deadline_ns);
        }
    }
}

pub(crate) fn is_signaled(fence: &FenceRef) -> bool {
    fence_signaled(fence)
}

/// The error a signaled fence carries (0 if none).
pub(crate) fn error_of(fence: &FenceRef) -> i32 {
    fence.lock().map(|f| f.error).unwrap_or(0)
}
