//! The simulated i915: an in-process kernel behind the same ioctl structs.
//!
//! [`SimKernel::ioctl`] takes the request number and a pointer to the argument struct, as the
//! real `ioctl(2)` does, and answers as i915 would for the selected [`DeviceInfo`]: GEM objects
//! with real memory and fake mmap offsets, contexts, GETPARAM/QUERY, sync objects and the
//! checks of EXECBUFFER2 with the kernel's errno values (facts from
//! `drivers/gpu/drm/i915/gem/i915_gem_execbuffer.c`). Running the batch is the job of a
//! [`GpuBackend`]; the default is the simulated Gen9 GPU ([`crate::gpu::SimGpu`]), and
//! [`NoGpu`] refuses every batch.
//!
//! Where the simulation models a choice of the real kernel it behaves as for an unprivileged
//! client (no CAP_SYS_ADMIN / CAP_SYS_NICE) on a kernel with full 48-bit PPGTT. Not
//! simulated, and rejected with EINVAL and a log line: relocations (use softpin), sync_file
//! fences (`I915_EXEC_FENCE_IN/OUT/SUBMIT`; use syncobjs), engines other than render,
//! GEM_CREATE_EXT extensions, and the SSEU/VM/ENGINES context parameters.

mod faults;
mod gpu;
mod memory;
mod sync;
mod uaccess;

pub use faults::{FaultKind, Faults, FAULT_NAMES};
pub use gpu::{ExecError, ExecJob, ExecObject, GpuBackend, GpuHang, NoGpu};
pub use memory::BoMemory;

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use rustc_hash::FxHashMap;

use crate::device_info::DeviceInfo;
use crate::drm_device::monotonic_ns;
use crate::uapi::*;
use memory::PAGE_SIZE;
use sync::{FenceRef, SyncTable, WaitFor};

/// The GPU virtual address space of a Gen9 context (full 48-bit PPGTT).
const VM_SIZE: u64 = 1 << 48;
/// Objects without EXEC_OBJECT_SUPPORTS_48B_ADDRESS must end below 4 GiB minus one page
/// (`eb_vma_misplaced`: `(start + size + 4095) >> 32` must be 0).
const LOW_4G_END: u64 = (1 << 32) - PAGE_SIZE;
/// Where the simulated kernel starts placing objects that are not softpinned.
const FIRST_AUTO_ADDRESS: u64 = 0x10_0000;
/// First fake mmap offset (any page-aligned non-zero value would do).
const FIRST_MMAP_OFFSET: u64 = 0x1_0000_0000;
/// `i915_user_extensions` gives up after this many links.
const MAX_EXTENSION_CHAIN: usize = 512;
/// Largest object the simulation allocates.
const MAX_BO_SIZE: u64 = 1 << 36;
/// Slices/subslices/EUs the kernel reports as maxima for Gen9 (not LP) topology.
const GEN9_MAX_SLICES: u16 = 3;
const GEN9_MAX_SUBSLICES: u16 = 4;
const GEN9_MAX_EUS_PER_SUBSLICE: u16 = 8;

#[derive(Debug)]
struct Bo {
    memory: Arc<BoMemory>,
    size: u64,
    mmap_offset: u64,
    /// Fence of the last job that used the object.
    busy: Option<FenceRef>,
}

#[derive(Debug)]
struct Context {
    recoverable: bool,
    bannable: bool,
    banned: bool,
    priority: i64,
    no_error_capture: bool,
    no_zeromap: bool,
    persistent: bool,
    batch_active: u32,
    batch_pending: u32,
    /// Where unpinned objects were last placed in this context's address space.
    bound: FxHashMap<u32, u64>,
    next_address: u64,
}

impl Default for Context {
    fn default() -> Context {
        Context {
            recoverable: true,
            bannable: true,
            banned: false,
            priority: I915_CONTEXT_DEFAULT_PRIORITY,
            no_error_capture: false,
            no_zeromap: false,
            persistent: true,
            batch_active: 0,
            batch_pending: 0,
            bound: FxHashMap::default(),
            next_address: FIRST_AUTO_ADDRESS,
        }
    }
}

#[derive(Debug)]
struct State {
    bos: FxHashMap<u32, Bo>,
    next_bo: u32,
    /// mmap offset -> handle.
    offsets: BTreeMap<u64, u32>,
    next_offset: u64,
    contexts: FxHashMap<u32, Context>,
    next_ctx: u32,
    reset_count: u32,
}

/// Live objects of a simulated device, for leak checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SimCounts {
    /// GEM handles.
    pub bos: usize,
    /// Object memories still alive (handles, mappings or running jobs hold them).
    pub bo_memory: usize,
    /// Contexts besides the default context 0.
    pub contexts: usize,
    pub syncobjs: usize,
}

/// The Linux version whose i915 uAPI the simulated kernel offers (`FERRITE_SIM_KERNEL`, e.g.
/// `5.4`): interfaces added later are missing as on that kernel (an unknown GETPARAM, capability
/// or ioctl is EINVAL, an unknown execbuffer flag too), so the driver's capability probing and
/// fallbacks are tested without such a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KernelVersion(pub u16, pub u16);

impl KernelVersion {
    /// A kernel with every interface the simulation knows (the default).
    pub const LATEST: KernelVersion = KernelVersion(6, 8);

    /// Parses `major.minor` (a trailing `.patch` or suffix is ignored).
    pub fn parse(text: &str) -> Option<KernelVersion> {
        let mut it = text.trim().split(['.', '-']);
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        Some(KernelVersion(major, minor))
    }

    /// `FERRITE_SIM_KERNEL`, or [`KernelVersion::LATEST`] when unset; an unparsable value is
    /// logged and ignored.
    pub fn from_env() -> KernelVersion {
        match std::env::var("FERRITE_SIM_KERNEL") {
            Ok(v) => KernelVersion::parse(&v).unwrap_or_else(|| {
                log::error!("FERRITE_SIM_KERNEL={v:?} is not a version like 5.4; using the latest");
                KernelVersion::LATEST
            }),
            Err(_) => KernelVersion::LATEST,
        }
    }
}

impl std::fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

/// The Linux versions that introduced the optional interfaces the simulation gates (the
/// simulated kernel's own table; the driver probes instead of reading it).
mod since {
    use super::KernelVersion;
    /// `I915_PARAM_CS_TIMESTAMP_FREQUENCY`.
    pub const CS_TIMESTAMP_FREQUENCY: KernelVersion = KernelVersion(4, 15);
    /// Timeline syncobjs: `DRM_CAP_SYNCOBJ_TIMELINE` and the TIMELINE_WAIT, QUERY,
    /// TRANSFER and TIMELINE_SIGNAL ioctls.
    pub const SYNCOBJ_TIMELINE: KernelVersion = KernelVersion(5, 2);
    /// `DRM_IOCTL_I915_GEM_MMAP_OFFSET` (`I915_PARAM_MMAP_GTT_VERSION` 4).
    pub const MMAP_OFFSET: KernelVersion = KernelVersion(5, 5);
    /// `I915_EXEC_USE_EXTENSIONS` with `DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES`
    /// (`I915_PARAM_HAS_EXEC_TIMELINE_FENCES`).
    pub const EXEC_TIMELINE_FENCES: KernelVersion = KernelVersion(5, 8);
}

/// The simulated kernel of one open device.
pub struct SimKernel {
    info: &'static DeviceInfo,
    kernel: KernelVersion,
    faults: Faults,
    state: Mutex<State>,
    sync: SyncTable,
    gpu: RwLock<Arc<dyn GpuBackend>>,
    /// The render engine runs one job at a time.
    engine: Mutex<()>,
    live_memory: Arc<AtomicUsize>,
    /// Ioctls received, by ioctl number (the request's low byte: EXECBUFFER2 and its `_WR`
    /// variant share one), for tests that pin how many system calls a driver path costs.
    ioctls: [AtomicU64; 256],
    /// Buffers of finished execbuffers, reused by the next ones (no allocation per submission
    /// once they have grown to the lists' sizes).
    exec_scratch: Mutex<Vec<ExecScratch>>,
}

/// The working lists of one EXECBUFFER2, kept across calls for their capacity.
#[derive(Default)]
struct ExecScratch {
    exec: Vec<drm_i915_gem_exec_object2>,
    user_fences: Vec<drm_i915_gem_exec_fence>,
    values: Vec<u64>,
    fences: Vec<ExecFence>,
    sizes: Vec<u64>,
    placed: Vec<Option<u64>>,
    moved: Vec<usize>,
    objects: Vec<ExecObject>,
}

impl ExecScratch {
    /// Empties every list (dropping the references to objects and fences they hold), keeping
    /// the capacity.
    fn clear(&mut self) {
        self.exec.clear();
        self.user_fences.clear();
        self.values.clear();
        self.fences.clear();
        self.sizes.clear();
        self.placed.clear();
        self.moved.clear();
        self.objects.clear();
    }
}

/// The requests the simulation answers, with their uAPI names (for the ioctl counts).
const REQUESTS: [(u64, &str); 27] = [
    (DRM_IOCTL_VERSION, "VERSION"),
    (DRM_IOCTL_GET_CAP, "GET_CAP"),
    (DRM_IOCTL_GEM_CLOSE, "GEM_CLOSE"),
    (DRM_IOCTL_SYNCOBJ_CREATE, "SYNCOBJ_CREATE"),
    (DRM_IOCTL_SYNCOBJ_DESTROY, "SYNCOBJ_DESTROY"),
    (DRM_IOCTL_SYNCOBJ_WAIT, "SYNCOBJ_WAIT"),
    (DRM_IOCTL_SYNCOBJ_RESET, "SYNCOBJ_RESET"),
    (DRM_IOCTL_SYNCOBJ_SIGNAL, "SYNCOBJ_SIGNAL"),
    (DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, "SYNCOBJ_TIMELINE_WAIT"),
    (DRM_IOCTL_SYNCOBJ_QUERY, "SYNCOBJ_QUERY"),
    (DRM_IOCTL_SYNCOBJ_TRANSFER, "SYNCOBJ_TRANSFER"),
    (DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, "SYNCOBJ_TIMELINE_SIGNAL"),
    (DRM_IOCTL_I915_GETPARAM, "I915_GETPARAM"),
    (DRM_IOCTL_I915_GEM_CREATE, "I915_GEM_CREATE"),
    (DRM_IOCTL_I915_GEM_CREATE_EXT, "I915_GEM_CREATE_EXT"),
    (DRM_IOCTL_I915_GEM_MMAP_OFFSET, "I915_GEM_MMAP_OFFSET"),
    (DRM_IOCTL_I915_GEM_SET_DOMAIN, "I915_GEM_SET_DOMAIN"),
    (DRM_IOCTL_I915_GEM_EXECBUFFER2, "I915_GEM_EXECBUFFER2"),
    (DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, "I915_GEM_EXECBUFFER2"),
    (DRM_IOCTL_I915_GEM_WAIT, "I915_GEM_WAIT"),
    (DRM_IOCTL_I915_GEM_CONTEXT_CREATE, "I915_GEM_CONTEXT_CREATE"),
    (
        DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT,
        "I915_GEM_CONTEXT_CREATE",
    ),
    (
        DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM,
        "I915_GEM_CONTEXT_GETPARAM",
    ),
    (
        DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM,
        "I915_GEM_CONTEXT_SETPARAM",
    ),
    (
        DRM_IOCTL_I915_GEM_CONTEXT_DESTROY,
        "I915_GEM_CONTEXT_DESTROY",
    ),
    (DRM_IOCTL_I915_GET_RESET_STATS, "I915_GET_RESET_STATS"),
    (DRM_IOCTL_I915_QUERY, "I915_QUERY"),
];

/// The ioctl number of a request (`_IOC_NR`).
fn ioctl_nr(request: u64) -> usize {
    (request & 0xff) as usize
}

impl std::fmt::Debug for SimKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SimKernel({})", self.info.name)
    }
}

impl Drop for SimKernel {
    /// Reports the objects the client left behind, as a leak check the tests read in the log
    /// (a real kernel frees them when the file is closed).
    fn drop(&mut self) {
        let c = self.counts();
        let line = format!(
            "simulated i915 closed: {} GEM objects, {} contexts, {} syncobjs left",
            c.bos, c.contexts, c.syncobjs
        );
        if c.bos + c.contexts + c.syncobjs == 0 {
            log::info!("{line}");
        } else {
            log::warn!("{line}");
        }
        let counts: Vec<String> = self
            .ioctl_counts()
            .iter()
            .map(|(name, n)| format!("{name}={n}"))
            .collect();
        log::info!("simulated i915 ioctls: {}", counts.join(" "));
    }
}

/// Exec lists up to this long are checked for duplicate handles by a scan.
const SHORT_EXEC_LIST: usize = 32;

/// `i915_user_extensions`: walks the chain of extensions starting at user address `first` (0 is
/// an empty chain), giving `each` every link's name and address after checking its header.
/// A chain longer than `MAX_EXTENSION_CHAIN` links fails with E2BIG, a header with flags or
/// reserved bits set with EINVAL; the first error stops the walk.
fn walk_extensions(
    first: u64,
    mut each: impl FnMut(u32, u64) -> Result<(), i32>,
) -> Result<(), i32> {
    let mut next = first;
    let mut depth = 0;
    while next != 0 {
        depth += 1;
        if depth > MAX_EXTENSION_CHAIN {
            return Err(libc::E2BIG);
        }
        let head: i915_user_extension = uaccess::read(next)?;
        if head.flags != 0 || head.rsvd.iter().any(|&r| r != 0) {
            return Err(libc::EINVAL);
        }
        each(head.name, next)?;
        next = head.next_extension;
    }
    Ok(())
}

/// `gen8_canonical_addr`: sign-extends bit 47.
fn canonical(address: u64) -> u64 {
    (((address << 16) as i64) >> 16) as u64
}

fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1
}

/// A fence an execbuffer waits on or signals.
struct ExecFence {
    handle: u32,
    point: u64,
    flags: u32,
    wait: Option<FenceRef>,
}

impl SimKernel {
    /// A fresh simulated i915 answering as `info`, with the default context 0 and the
    /// simulated Gen9 GPU ([`crate::gpu::SimGpu`]) as backend, offering the uAPI of the
    /// latest kernel.
    pub fn new(info: &'static DeviceInfo) -> SimKernel {
        Self::with_kernel(info, KernelVersion::LATEST)
    }

    /// [`SimKernel::new`] offering the uAPI of Linux `kernel` (see [`KernelVersion`]).
    pub fn with_kernel(info: &'static DeviceInfo, kernel: KernelVersion) -> SimKernel {
        Self::with_faults(info, kernel, Faults::default())
    }

    /// [`SimKernel::with_kernel`] that injects `faults`.
    pub fn with_faults(
        info: &'static DeviceInfo,
        kernel: KernelVersion,
        faults: Faults,
    ) -> SimKernel {
        let mut contexts = FxHashMap::default();
        contexts.insert(0, Context::default());
        SimKernel {
            info,
            kernel,
            faults,
            state: Mutex::new(State {
                bos: FxHashMap::default(),
                next_bo: 0,
                offsets: BTreeMap::new(),
                next_offset: FIRST_MMAP_OFFSET,
                contexts,
                next_ctx: 0,
                reset_count: 0,
            }),
            sync: SyncTable::default(),
            gpu: RwLock::new(Arc::new(crate::gpu::SimGpu::new())),
            engine: Mutex::new(()),
            live_memory: Arc::new(AtomicUsize::new(0)),
            ioctls: [const { AtomicU64::new(0) }; 256],
            exec_scratch: Mutex::new(Vec::new()),
        }
    }

    /// The device this kernel answers as.
    pub fn info(&self) -> &'static DeviceInfo {
        self.info
    }

    /// The Linux version whose uAPI this kernel offers.
    pub fn kernel_version(&self) -> KernelVersion {
        self.kernel
    }

    fn has(&self, since: KernelVersion) -> bool {
        self.kernel >= since
    }

    /// Plugs in the simulated GPU that runs validated batches.
    pub fn set_gpu_backend(&self, backend: Arc<dyn GpuBackend>) {
        *self.gpu.write().unwrap_or_else(|e| e.into_inner()) = backend;
    }

    /// Live objects, for leak checks.
    pub fn counts(&self) -> SimCounts {
        let st = self.lock();
        SimCounts {
            bos: st.bos.len(),
            bo_memory: self.live_memory.load(Ordering::Relaxed),
            contexts: st.contexts.len() - 1,
            syncobjs: self.sync.count(),
        }
    }

    /// Wake-ups the sync-object table has sent to blocked waiters so far: a fence signaled or
    /// a syncobj changed while nobody waits sends none (tests pin that an empty submission
    /// followed by a wait costs no wake-up).
    pub fn sync_wakeups(&self) -> u64 {
        self.sync.wakeups()
    }

    /// Ioctls with the number of `request` received so far (EXECBUFFER2 and its `_WR` variant
    /// count together, as do the two CONTEXT_CREATE requests), refused ones included.
    pub fn ioctl_count(&self, request: u64) -> u64 {
        self.ioctls[ioctl_nr(request)].load(Ordering::Relaxed)
    }

    /// Every ioctl number received so far, by uAPI name (without `DRM_IOCTL_`), in the
    /// uAPI's order.
    pub fn ioctl_counts(&self) -> Vec<(&'static str, u64)> {
        let mut out: Vec<(&'static str, u64)> = Vec::new();
        for (request, name) in REQUESTS {
            let n = self.ioctl_count(request);
            if n > 0 && !out.iter().any(|(seen, _)| *seen == name) {
                out.push((name, n));
            }
        }
        out
    }

    /// Threads blocked in a sync-object or fence wait of this device right now.
    pub fn sync_waiters(&self) -> usize {
        self.sync.waiters()
    }

    /// The error the payload fence of sync object `handle` was signaled with (e.g. `-EIO`
    /// after a GPU hang), or `None`. ENOENT for a bad handle.
    pub fn syncobj_fence_error(&self, handle: u32) -> Result<Option<i32>, i32> {
        self.sync.fence_error(handle)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Handles one ioctl; returns the errno on failure.
    ///
    /// # Safety
    /// `arg` must point to a live, writable value of the argument type of `request` (what
    /// [`crate::uapi::Ioctl`] guarantees). User addresses inside the struct are read with
    /// EFAULT checking where the system allows it (see `uaccess`), otherwise they must be
    /// valid or zero.
    pub unsafe fn ioctl(&self, request: u64, arg: *mut c_void) -> Result<(), i32> {
        macro_rules! arg {
            ($t:ty) => {
                // SAFETY: the caller guarantees `arg` points to the argument type of
                // `request`, which is `$t` for this arm (the request numbers are built from
                // the same types in `uapi`).
                unsafe { &mut *(arg as *mut $t) }
            };
        }
        let timeline_ioctl = matches!(
            request,
            DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT
                | DRM_IOCTL_SYNCOBJ_QUERY
                | DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL
                | DRM_IOCTL_SYNCOBJ_TRANSFER
        );
        self.ioctls[ioctl_nr(request)].fetch_add(1, Ordering::Relaxed);
        if let Some(errno) = self.faults.storm() {
            return Err(errno);
        }
        if timeline_ioctl && !self.has(since::SYNCOBJ_TIMELINE) {
            // drm_ioctl: a request number past the kernel's table is EINVAL.
            return Err(libc::EINVAL);
        }
        let result = match request {
            DRM_IOCTL_VERSION => self.version(arg!(drm_version)),
            DRM_IOCTL_GEM_CLOSE => self.gem_close(arg!(drm_gem_close)),
            DRM_IOCTL_GET_CAP => self.get_cap(arg!(drm_get_cap)),
            DRM_IOCTL_I915_GETPARAM => self.getparam(arg!(drm_i915_getparam)),
            DRM_IOCTL_I915_QUERY => self.query(arg!(drm_i915_query)),
            DRM_IOCTL_I915_GEM_CREATE | DRM_IOCTL_I915_GEM_CREATE_EXT
                if self.faults.fire(FaultKind::CreateEnomem) =>
            {
                Err(libc::ENOMEM)
            }
            DRM_IOCTL_I915_GEM_CREATE => {
                let c = arg!(drm_i915_gem_create);
                self.gem_create(c.size).map(|(handle, size)| {
                    c.handle = handle;
                    c.size = size;
                })
            }
            DRM_IOCTL_I915_GEM_CREATE_EXT => self.gem_create_ext(arg!(drm_i915_gem_create_ext)),
            DRM_IOCTL_I915_GEM_MMAP_OFFSET => self.gem_mmap_offset(arg!(drm_i915_gem_mmap_offset)),
            DRM_IOCTL_I915_GEM_SET_DOMAIN => self.gem_set_domain(arg!(drm_i915_gem_set_domain)),
            DRM_IOCTL_I915_GEM_WAIT => self.gem_wait(arg!(drm_i915_gem_wait)),
            DRM_IOCTL_I915_GEM_CONTEXT_CREATE => {
                let c = arg!(drm_i915_gem_context_create);
                // The short struct is the head of the _ext one: `pad` is where `flags` is.
                self.context_create(c.pad, 0).map(|id| c.ctx_id = id)
            }
            DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT => {
                let c = arg!(drm_i915_gem_context_create_ext);
                self.context_create(c.flags, c.extensions)
                    .map(|id| c.ctx_id = id)
            }
            DRM_IOCTL_I915_GEM_CONTEXT_DESTROY => {
                self.context_destroy(arg!(drm_i915_gem_context_destroy))
            }
            DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM => {
                self.context_getparam(arg!(drm_i915_gem_context_param))
            }
            DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM => self.context_setparam(&arg!(ContextSetParam).0),
            DRM_IOCTL_I915_GET_RESET_STATS => self.reset_stats(arg!(drm_i915_reset_stats)),
            DRM_IOCTL_I915_GEM_EXECBUFFER2 => {
                let mut copy = *arg!(drm_i915_gem_execbuffer2);
                self.execbuffer2(&mut copy)
            }
            DRM_IOCTL_I915_GEM_EXECBUFFER2_WR => {
                let eb = &mut arg!(Execbuffer2Wr).0;
                let mut copy = *eb;
                let r = self.execbuffer2(&mut copy);
                eb.rsvd2 = copy.rsvd2;
                r
            }
            DRM_IOCTL_SYNCOBJ_CREATE => {
                let c = arg!(drm_syncobj_create);
                if c.flags & !DRM_SYNCOBJ_CREATE_SIGNALED != 0 {
                    Err(libc::EINVAL)
                } else {
                    c.handle = self.sync.create(c.flags & DRM_SYNCOBJ_CREATE_SIGNALED != 0);
                    Ok(())
                }
            }
            DRM_IOCTL_SYNCOBJ_DESTROY => {
                let d = arg!(drm_syncobj_destroy);
                if d.pad != 0 {
                    Err(libc::EINVAL)
                } else {
                    self.sync.destroy(d.handle)
                }
            }
            DRM_IOCTL_SYNCOBJ_WAIT => self.syncobj_wait(arg!(drm_syncobj_wait)),
            DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT => {
                self.syncobj_timeline_wait(arg!(drm_syncobj_timeline_wait))
            }
            DRM_IOCTL_SYNCOBJ_RESET => {
                let a = arg!(SyncobjReset).0;
                Self::syncobj_array(&a).and_then(|h| self.sync.reset(&h))
            }
            DRM_IOCTL_SYNCOBJ_SIGNAL => {
                let a = arg!(SyncobjSignal).0;
                Self::syncobj_array(&a).and_then(|h| self.sync.signal(&h, &[]))
            }
            DRM_IOCTL_SYNCOBJ_QUERY => self.syncobj_query(&arg!(SyncobjQuery).0),
            DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL => {
                self.syncobj_timeline_signal(&arg!(SyncobjTimelineSignal).0)
            }
            DRM_IOCTL_SYNCOBJ_TRANSFER => {
                let t = arg!(drm_syncobj_transfer);
                if t.pad != 0 || t.flags & !DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT != 0 {
                    Err(libc::EINVAL)
                } else {
                    self.sync
                        .transfer(t.src_handle, t.src_point, t.dst_handle, t.dst_point)
                }
            }
            _ => {
                log::warn!("simulated i915: unknown ioctl request 0x{request:08x}");
                Err(libc::EINVAL)
            }
        };
        if let Err(errno) = result {
            log::debug!(
                "simulated i915: ioctl 0x{request:08x} -> {}",
                crate::errno_name(errno)
            );
        }
        result
    }

    /// Looks up the object behind a fake mmap offset; returns its memory and the byte offset
    /// of `offset` inside it. EINVAL if no live object covers `offset..offset + len`.
    pub fn mmap(&self, offset: u64, len: usize) -> Result<(Arc<BoMemory>, usize), i32> {
        if self.faults.fire(FaultKind::MmapEnomem) {
            return Err(libc::ENOMEM);
        }
        let st = self.lock();
        let (&start, &handle) = st
            .offsets
            .range(..=offset)
            .next_back()
            .ok_or(libc::EINVAL)?;
        let bo = st.bos.get(&handle).ok_or(libc::EINVAL)?;
        let inside = offset - start;
        if !inside.is_multiple_of(PAGE_SIZE) || inside + len as u64 > bo.size {
            return Err(libc::EINVAL);
        }
        Ok((bo.memory.clone(), inside as usize))
    }

    // --- core -----------------------------------------------------------------------------

    /// DRM_IOCTL_GET_CAP: the capabilities a render node answers that the simulation has
    /// (syncobjs, timeline syncobjs); the others are EINVAL as for an unknown one.
    fn get_cap(&self, c: &mut drm_get_cap) -> Result<(), i32> {
        c.value = match c.capability {
            DRM_CAP_SYNCOBJ => 1,
            DRM_CAP_SYNCOBJ_TIMELINE if self.has(since::SYNCOBJ_TIMELINE) => 1,
            _ => return Err(libc::EINVAL),
        };
        Ok(())
    }

    fn version(&self, v: &mut drm_version) -> Result<(), i32> {
        let fill = |ptr: u64, cap: u64, text: &str| -> Result<u64, i32> {
            let n = (text.len() as u64).min(cap);
            if n > 0 {
                uaccess::write_array(ptr, &text.as_bytes()[..n as usize])?;
            }
            Ok(text.len() as u64)
        };
        v.version_major = 1;
        v.version_minor = 6;
        v.version_patchlevel = 0;
        v.name_len = fill(v.name, v.name_len, "i915")?;
        v.date_len = fill(v.date, v.date_len, "20201103")?;
        v.desc_len = fill(v.desc, v.desc_len, "Intel Graphics (simulated by Ferrite)")?;
        Ok(())
    }

    fn getparam(&self, gp: &mut drm_i915_getparam) -> Result<(), i32> {
        let d = self.info;
        let slice_mask = (1u32 << d.slices) - 1;
        let subslice_mask = (1u32 << d.subslices_per_slice()) - 1;
        let value: i64 = match gp.param {
            I915_PARAM_HAS_EXEC_TIMELINE_FENCES if !self.has(since::EXEC_TIMELINE_FENCES) => {
                return Err(libc::EINVAL)
            }
            I915_PARAM_CS_TIMESTAMP_FREQUENCY if !self.has(since::CS_TIMESTAMP_FREQUENCY) => {
                return Err(libc::EINVAL)
            }
            // Version 3 is the last one before GEM_MMAP_OFFSET.
            I915_PARAM_MMAP_GTT_VERSION if !self.has(since::MMAP_OFFSET) => 3,
            I915_PARAM_CHIPSET_ID => d.pci_id as i64,
            I915_PARAM_REVISION => 0,
            I915_PARAM_HAS_EXECBUF2
            | I915_PARAM_HAS_WAIT_TIMEOUT
            | I915_PARAM_HAS_EXEC_NO_RELOC
            | I915_PARAM_HAS_EXEC_HANDLE_LUT
            | I915_PARAM_HAS_GPU_RESET
            | I915_PARAM_HAS_EXEC_SOFTPIN
            | I915_PARAM_HAS_EXEC_ASYNC
            | I915_PARAM_HAS_EXEC_CAPTURE
            | I915_PARAM_HAS_EXEC_BATCH_FIRST
            | I915_PARAM_HAS_EXEC_FENCE_ARRAY
            | I915_PARAM_HAS_EXEC_TIMELINE_FENCES => 1,
            // sync_file fences are not simulated.
            I915_PARAM_HAS_EXEC_FENCE | I915_PARAM_HAS_EXEC_SUBMIT_FENCE => 0,
            I915_PARAM_HAS_LLC | I915_PARAM_MMAP_GTT_COHERENT => d.has_llc as i64,
            // Version 4 of the GTT mmap ABI is the one with GEM_MMAP_OFFSET.
            I915_PARAM_MMAP_GTT_VERSION => 4,
            // The legacy CPU mmap ioctl is not simulated.
            I915_PARAM_MMAP_VERSION => 0,
            I915_PARAM_SUBSLICE_TOTAL => d.subslices as i64,
            I915_PARAM_EU_TOTAL => d.eu_total as i64,
            I915_PARAM_SLICE_MASK => slice_mask as i64,
            I915_PARAM_SUBSLICE_MASK => subslice_mask as i64,
            I915_PARAM_HAS_SCHEDULER => {
                (I915_SCHEDULER_CAP_ENABLED | I915_SCHEDULER_CAP_PRIORITY) as i64
            }
            // A mask of engine classes with context isolation: render.
            I915_PARAM_HAS_CONTEXT_ISOLATION => 1 << I915_ENGINE_CLASS_RENDER,
            I915_PARAM_CS_TIMESTAMP_FREQUENCY => d.timestamp_frequency_hz as i64,
            _ => return Err(libc::EINVAL),
        };
        uaccess::write(gp.value, value as i32)
    }

    fn query(&self, q: &mut drm_i915_query) -> Result<(), i32> {
        if q.flags != 0 {
            return Err(libc::EINVAL);
        }
        // i915_query_ioctl: one item at a time, so a bad pointer or count stops at the first
        // item that cannot be copied (EFAULT) instead of sizing a buffer by the count.
        let size = std::mem::size_of::<drm_i915_query_item>() as u64;
        for i in 0..u64::from(q.num_items) {
            let addr = q.items_ptr.wrapping_add(i * size);
            let mut item: drm_i915_query_item = uaccess::read(addr)?;
            item.length = match self.query_item(&item) {
                Ok(len) => len,
                Err(errno) => -errno,
            };
            uaccess::write_array(addr, std::slice::from_ref(&item))?;
        }
        Ok(())
    }

    /// One query item with the two-call protocol; returns the length to report.
    fn query_item(&self, item: &drm_i915_query_item) -> Result<i32, i32> {
        let data = match item.query_id {
            DRM_I915_QUERY_TOPOLOGY_INFO => {
                if item.flags != 0 {
                    return Err(libc::EINVAL);
                }
                self.topology_bytes()
            }
            DRM_I915_QUERY_ENGINE_INFO => {
                if item.flags != 0 {
                    return Err(libc::EINVAL);
                }
                if item.length > 0 {
                    // The kernel requires the header the user passes in to be zeroed.
                    let hdr: drm_i915_query_engine_info = uaccess::read(item.data_ptr)?;
                    if hdr != drm_i915_query_engine_info::default() {
                        return Err(libc::EINVAL);
                    }
                }
                self.engine_info_bytes()
            }
            _ => return Err(libc::EINVAL),
        };
        let total = data.len() as i32;
        if item.length == 0 {
            return Ok(total);
        }
        if item.length < total {
            return Err(libc::EINVAL);
        }
        uaccess::write_array(item.data_ptr, &data)?;
        Ok(total)
    }

    fn topology_bytes(&self) -> Vec<u8> {
        let d = self.info;
        let (max_s, max_ss, max_eu) = (
            GEN9_MAX_SLICES,
            GEN9_MAX_SUBSLICES,
            GEN9_MAX_EUS_PER_SUBSLICE,
        );
        let ss_stride = max_ss.div_ceil(8);
        let eu_stride = max_eu.div_ceil(8);
        let slice_len: u16 = 1;
        let ss_len = max_s * ss_stride;
        let hdr = drm_i915_query_topology_info {
            flags: 0,
            max_slices: max_s,
            max_subslices: max_ss,
            max_eus_per_subslice: max_eu,
            subslice_offset: slice_len,
            subslice_stride: ss_stride,
            eu_offset: slice_len + ss_len,
            eu_stride,
        };
        let mut out = Vec::new();
        for v in [
            hdr.flags,
            hdr.max_slices,
            hdr.max_subslices,
            hdr.max_eus_per_subslice,
            hdr.subslice_offset,
            hdr.subslice_stride,
            hdr.eu_offset,
            hdr.eu_stride,
        ] {
            out.extend_from_slice(&v.to_ne_bytes());
        }
        let ss_per_slice = d.subslices_per_slice();
        out.push(((1u32 << d.slices) - 1) as u8);
        for s in 0..max_s as u32 {
            let mask: u32 = if s < d.slices {
                (1 << ss_per_slice) - 1
            } else {
                0
            };
            out.extend((0..ss_stride).map(|b| (mask >> (8 * b)) as u8));
        }
        for s in 0..max_s as u32 {
            for ss in 0..max_ss as u32 {
                let on = s < d.slices && ss < ss_per_slice;
                let mask: u32 = if on { (1 << d.eus_per_subslice) - 1 } else { 0 };
                out.extend((0..eu_stride).map(|b| (mask >> (8 * b)) as u8));
            }
        }
        out
    }

    fn engine_info_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; std::mem::size_of::<drm_i915_query_engine_info>()];
        // Only the render engine is simulated.
        out[0..4].copy_from_slice(&1u32.to_ne_bytes());
        let mut e = vec![0u8; std::mem::size_of::<drm_i915_engine_info>()];
        e[0..2].copy_from_slice(&I915_ENGINE_CLASS_RENDER.to_ne_bytes());
        e[2..4].copy_from_slice(&0u16.to_ne_bytes());
        // flags: I915_ENGINE_INFO_HAS_LOGICAL_INSTANCE; logical_instance 0.
        e[8..16].copy_from_slice(&1u64.to_ne_bytes());
        out.extend(e);
        out
    }

    // --- GEM ------------------------------------------------------------------------------

    fn gem_create(&self, size: u64) -> Result<(u32, u64), i32> {
        let size = size.checked_add(PAGE_SIZE - 1).ok_or(libc::E2BIG)? & !(PAGE_SIZE - 1);
        if size == 0 {
            return Err(libc::EINVAL);
        }
        if size > MAX_BO_SIZE {
            return Err(libc::E2BIG);
        }
        let memory = BoMemory::new(size as usize, self.live_memory.clone()).ok_or(libc::ENOMEM)?;
        let mut st = self.lock();
        st.next_bo += 1;
        let handle = st.next_bo;
        let mmap_offset = st.next_offset;
        st.next_offset += size;
        st.offsets.insert(mmap_offset, handle);
        st.bos.insert(
            handle,
            Bo {
                memory: Arc::new(memory),
                size,
                mmap_offset,
                busy: None,
            },
        );
        Ok((handle, size))
    }

    fn gem_create_ext(&self, c: &mut drm_i915_gem_create_ext) -> Result<(), i32> {
        if c.flags & !I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS != 0 {
            return Err(libc::EINVAL);
        }
        if c.extensions != 0 {
            log::warn!("simulated i915: GEM_CREATE_EXT extensions are not simulated");
            return Err(libc::EINVAL);
        }
        let (handle, size) = self.gem_create(c.size)?;
        c.handle = handle;
        c.size = size;
        Ok(())
    }

    fn gem_close(&self, c: &mut drm_gem_close) -> Result<(), i32> {
        if c.pad != 0 {
            return Err(libc::EINVAL);
        }
        let mut st = self.lock();
        let bo = st.bos.remove(&c.handle).ok_or(libc::EINVAL)?;
        st.offsets.remove(&bo.mmap_offset);
        for ctx in st.contexts.values_mut() {
            ctx.bound.remove(&c.handle);
        }
        Ok(())
    }

    fn gem_mmap_offset(&self, m: &mut drm_i915_gem_mmap_offset) -> Result<(), i32> {
        if m.extensions != 0 {
            return Err(libc::EINVAL);
        }
        match m.flags {
            I915_MMAP_OFFSET_GTT | I915_MMAP_OFFSET_WC | I915_MMAP_OFFSET_WB
            | I915_MMAP_OFFSET_UC => {}
            // FIXED is for discrete parts only.
            _ => return Err(libc::EINVAL),
        }
        let st = self.lock();
        let bo = st.bos.get(&m.handle).ok_or(libc::ENOENT)?;
        m.offset = bo.mmap_offset;
        Ok(())
    }

    fn gem_set_domain(&self, d: &mut drm_i915_gem_set_domain) -> Result<(), i32> {
        const GPU_DOMAINS: u32 = I915_GEM_DOMAIN_RENDER
            | I915_GEM_DOMAIN_SAMPLER
            | I915_GEM_DOMAIN_COMMAND
            | I915_GEM_DOMAIN_INSTRUCTION
            | I915_GEM_DOMAIN_VERTEX;
        if (d.write_domain | d.read_domains) & GPU_DOMAINS != 0 {
            return Err(libc::EINVAL);
        }
        if d.write_domain != 0 && d.read_domains != d.write_domain {
            return Err(libc::EINVAL);
        }
        if d.read_domains == 0 {
            return Ok(());
        }
        let busy = {
            let st = self.lock();
            st.bos.get(&d.handle).ok_or(libc::ENOENT)?.busy.clone()
        };
        // Moving to a CPU domain waits for the GPU.
        if let Some(f) = busy {
            self.sync.wait_fence_until(&f, i64::MAX);
        }
        Ok(())
    }

    fn gem_wait(&self, w: &mut drm_i915_gem_wait) -> Result<(), i32> {
        if w.flags != 0 {
            return Err(libc::EINVAL);
        }
        let busy = {
            let st = self.lock();
            st.bos.get(&w.bo_handle).ok_or(libc::ENOENT)?.busy.clone()
        };
        let Some(fence) = busy else {
            return Ok(());
        };
        if sync::is_signaled(&fence) {
            return Ok(());
        }
        if w.timeout_ns == 0 {
            return Err(libc::ETIME);
        }
        let start = monotonic_ns();
        let deadline = if w.timeout_ns < 0 {
            i64::MAX
        } else {
            start.saturating_add(w.timeout_ns)
        };
        let done = self.sync.wait_fence_until(&fence, deadline);
        if w.timeout_ns > 0 {
            w.timeout_ns = (deadline - monotonic_ns()).max(0);
        }
        if done {
            Ok(())
        } else {
            Err(libc::ETIME)
        }
    }

    // --- contexts -------------------------------------------------------------------------

    fn context_create(&self, flags: u32, extensions: u64) -> Result<u32, i32> {
        if flags & I915_CONTEXT_CREATE_FLAGS_UNKNOWN != 0 {
            return Err(libc::EINVAL);
        }
        let mut ctx = Context::default();
        if flags & I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS != 0 {
            walk_extensions(extensions, |name, at| match name {
                I915_CONTEXT_CREATE_EXT_SETPARAM => {
                    let sp: drm_i915_gem_context_create_ext_setparam = uaccess::read(at)?;
                    if sp.param.ctx_id != 0 {
                        return Err(libc::EINVAL);
                    }
                    Self::set_param(&mut ctx, &sp.param)
                }
                _ => Err(libc::EINVAL),
            })?;
        }
        let mut st = self.lock();
        st.next_ctx += 1;
        let id = st.next_ctx;
        st.contexts.insert(id, ctx);
        Ok(id)
    }

    fn context_destroy(&self, d: &mut drm_i915_gem_context_destroy) -> Result<(), i32> {
        if d.pad != 0 {
            return Err(libc::EINVAL);
        }
        if d.ctx_id == 0 {
            return Err(libc::ENOENT);
        }
        self.lock().contexts.remove(&d.ctx_id).ok_or(libc::ENOENT)?;
        self.gpu_backend().context_destroyed(d.ctx_id);
        Ok(())
    }

    fn set_param(ctx: &mut Context, p: &drm_i915_gem_context_param) -> Result<(), i32> {
        let simple = || {
            if p.size != 0 {
                Err(libc::EINVAL)
            } else {
                Ok(())
            }
        };
        match p.param {
            I915_CONTEXT_PARAM_RECOVERABLE => {
                simple()?;
                ctx.recoverable = p.value != 0;
            }
            I915_CONTEXT_PARAM_BANNABLE => {
                simple()?;
                // Clearing BANNABLE needs CAP_SYS_ADMIN; the simulation is unprivileged.
                if p.value == 0 {
                    return Err(libc::EPERM);
                }
                ctx.bannable = true;
            }
            I915_CONTEXT_PARAM_PRIORITY => {
                simple()?;
                let prio = p.value as i64;
                if !(I915_CONTEXT_MIN_USER_PRIORITY..=I915_CONTEXT_MAX_USER_PRIORITY)
                    .contains(&prio)
                {
                    return Err(libc::EINVAL);
                }
                // Raising priority needs CAP_SYS_NICE.
                if prio > I915_CONTEXT_DEFAULT_PRIORITY {
                    return Err(libc::EPERM);
                }
                ctx.priority = prio;
            }
            I915_CONTEXT_PARAM_NO_ERROR_CAPTURE => {
                simple()?;
                ctx.no_error_capture = p.value != 0;
            }
            I915_CONTEXT_PARAM_NO_ZEROMAP => {
                simple()?;
                ctx.no_zeromap = p.value != 0;
            }
            I915_CONTEXT_PARAM_PERSISTENCE => {
                simple()?;
                ctx.persistent = p.value != 0;
            }
            I915_CONTEXT_PARAM_SSEU | I915_CONTEXT_PARAM_VM | I915_CONTEXT_PARAM_ENGINES => {
                log::warn!(
                    "simulated i915: context parameter 0x{:x} is not simulated",
                    p.param
                );
                return Err(libc::EINVAL);
            }
            _ => return Err(libc::EINVAL),
        }
        Ok(())
    }

    fn context_setparam(&self, p: &drm_i915_gem_context_param) -> Result<(), i32> {
        let mut st = self.lock();
        let ctx = st.contexts.get_mut(&p.ctx_id).ok_or(libc::ENOENT)?;
        Self::set_param(ctx, p)
    }

    fn context_getparam(&self, p: &mut drm_i915_gem_context_param) -> Result<(), i32> {
        let st = self.lock();
        let ctx = st.contexts.get(&p.ctx_id).ok_or(libc::ENOENT)?;
        p.size = 0;
        p.value = match p.param {
            I915_CONTEXT_PARAM_RECOVERABLE => ctx.recoverable as u64,
            I915_CONTEXT_PARAM_BANNABLE => ctx.bannable as u64,
            I915_CONTEXT_PARAM_PRIORITY => ctx.priority as u64,
            I915_CONTEXT_PARAM_NO_ERROR_CAPTURE => ctx.no_error_capture as u64,
            I915_CONTEXT_PARAM_NO_ZEROMAP => ctx.no_zeromap as u64,
            I915_CONTEXT_PARAM_PERSISTENCE => ctx.persistent as u64,
            I915_CONTEXT_PARAM_GTT_SIZE => VM_SIZE,
            _ => return Err(libc::EINVAL),
        };
        Ok(())
    }

    fn reset_stats(&self, s: &mut drm_i915_reset_stats) -> Result<(), i32> {
        if s.flags != 0 || s.pad != 0 {
            return Err(libc::EINVAL);
        }
        let st = self.lock();
        let ctx = st.contexts.get(&s.ctx_id).ok_or(libc::ENOENT)?;
        s.reset_count = st.reset_count;
        s.batch_active = ctx.batch_active;
        s.batch_pending = ctx.batch_pending;
        Ok(())
    }

    // --- sync objects ---------------------------------------------------------------------

    fn syncobj_array(a: &drm_syncobj_array) -> Result<uaccess::UserArray<u32, 16>, i32> {
        if a.pad != 0 || a.count_handles == 0 {
            return Err(libc::EINVAL);
        }
        uaccess::read_small(a.handles, a.count_handles as usize)
    }

    fn syncobj_wait(&self, w: &mut drm_syncobj_wait) -> Result<(), i32> {
        let known = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
        if w.flags & !known != 0 || w.count_handles == 0 {
            return Err(libc::EINVAL);
        }
        let handles: uaccess::UserArray<u32, 16> =
            uaccess::read_small(w.handles, w.count_handles as usize)?;
        let first = self.sync.wait(
            &handles,
            &[],
            w.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL != 0,
            w.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT != 0,
            WaitFor::Signaled,
            w.timeout_nsec,
        )?;
        if w.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL == 0 {
            w.first_signaled = first;
        }
        Ok(())
    }

    fn syncobj_timeline_wait(&self, w: &mut drm_syncobj_timeline_wait) -> Result<(), i32> {
        let known = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL
            | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT
            | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE;
        if w.flags & !known != 0 || w.count_handles == 0 {
            return Err(libc::EINVAL);
        }
        let handles: Vec<u32> = uaccess::read_array(w.handles, w.count_handles as usize)?;
        let points: Vec<u64> = uaccess::read_array(w.points, w.count_handles as usize)?;
        let available = w.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE != 0;
        let first = self.sync.wait(
            &handles,
            &points,
            w.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL != 0,
            w.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT != 0 || available,
            if available {
                WaitFor::Available
            } else {
                WaitFor::Signaled
            },
            w.timeout_nsec,
        )?;
        if w.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL == 0 {
            w.first_signaled = first;
        }
        Ok(())
    }

    fn syncobj_query(&self, a: &drm_syncobj_timeline_array) -> Result<(), i32> {
        if a.flags & !DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED != 0 || a.count_handles == 0 {
            return Err(libc::EINVAL);
        }
        let handles: Vec<u32> = uaccess::read_array(a.handles, a.count_handles as usize)?;
        let values = self.sync.query(
            &handles,
            a.flags & DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED != 0,
        )?;
        uaccess::write_array(a.points, &values)
    }

    fn syncobj_timeline_signal(&self, a: &drm_syncobj_timeline_array) -> Result<(), i32> {
        if a.flags != 0 || a.count_handles == 0 {
            return Err(libc::EINVAL);
        }
        let handles: Vec<u32> = uaccess::read_array(a.handles, a.count_handles as usize)?;
        let points: Vec<u64> = uaccess::read_array(a.points, a.count_handles as usize)?;
        self.sync.signal(&handles, &points)
    }

    // --- execbuffer -----------------------------------------------------------------------

    fn gpu_backend(&self) -> Arc<dyn GpuBackend> {
        self.gpu.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Parses one `drm_i915_gem_exec_fence` (with its timeline point) as the kernel does.
    fn exec_fence(&self, f: drm_i915_gem_exec_fence, point: u64) -> Result<Option<ExecFence>, i32> {
        if f.flags & I915_EXEC_FENCE_UNKNOWN_FLAGS != 0 {
            return Err(libc::EINVAL);
        }
        let signal = f.flags & I915_EXEC_FENCE_SIGNAL != 0;
        let wait = f.flags & I915_EXEC_FENCE_WAIT != 0;
        if point != 0 && signal && wait {
            // The handle is looked up first (ENOENT before EINVAL).
            self.sync.exec_fence(f.handle, None)?;
            // Waiting on and signaling the same timeline point would break the timeline.
            return Err(libc::EINVAL);
        }
        // ENOENT for a bad handle; with a wait and no fence (or no such point) yet: EINVAL,
        // the kernel does not wait for submit.
        let wait_fence = self.sync.exec_fence(f.handle, wait.then_some(point))?;
        if !wait && !signal {
            return Ok(None);
        }
        Ok(Some(ExecFence {
            handle: f.handle,
            point,
            flags: f.flags,
            wait: wait_fence,
        }))
    }

    fn execbuffer2(&self, args: &mut drm_i915_gem_execbuffer2) -> Result<(), i32> {
        let lock_scratch = || self.exec_scratch.lock().unwrap_or_else(|e| e.into_inner());
        let mut scratch = lock_scratch().pop().unwrap_or_default();
        let result = self.execbuffer2_with(args, &mut scratch);
        scratch.clear();
        lock_scratch().push(scratch);
        result
    }

    fn execbuffer2_with(
        &self,
        args: &mut drm_i915_gem_execbuffer2,
        scratch: &mut ExecScratch,
    ) -> Result<(), i32> {
        let ExecScratch {
            exec,
            user_fences,
            values,
            fences,
            sizes,
            placed,
            moved,
            objects,
        } = scratch;
        const ILLEGAL: u64 =
            I915_EXEC_UNKNOWN_FLAGS | I915_EXEC_CONSTANTS_MASK | I915_EXEC_RESOURCE_STREAMER;
        // i915_gem_execbuffer2_ioctl / i915_gem_check_execbuffer
        if args.buffer_count < 1 || args.buffer_count > i32::MAX as u32 {
            return Err(libc::EINVAL);
        }
        if args.flags & ILLEGAL != 0 {
            return Err(libc::EINVAL);
        }
        // Before the extension existed its flag bit was an unknown flag.
        if args.flags & I915_EXEC_USE_EXTENSIONS != 0 && !self.has(since::EXEC_TIMELINE_FENCES) {
            return Err(libc::EINVAL);
        }
        if args.flags & (I915_EXEC_FENCE_ARRAY | I915_EXEC_USE_EXTENSIONS) == 0
            && (args.num_cliprects != 0 || args.cliprects_ptr != 0)
        {
            return Err(libc::EINVAL);
        }
        if args.DR4 == 0xffff_ffff {
            args.DR4 = 0;
        }
        if args.DR1 != 0 || args.DR4 != 0 {
            return Err(libc::EINVAL);
        }
        if (args.batch_start_offset | args.batch_len) & 0x7 != 0 {
            return Err(libc::EINVAL);
        }
        uaccess::read_array_into(args.buffers_ptr, args.buffer_count as usize, exec)?;

        // i915_gem_do_execbuffer
        if args.flags & I915_EXEC_SECURE != 0 {
            // Needs DRM master and CAP_SYS_ADMIN.
            return Err(libc::EPERM);
        }
        if args.flags & I915_EXEC_USE_EXTENSIONS != 0 {
            if args.flags & I915_EXEC_FENCE_ARRAY != 0 || args.num_cliprects != 0 {
                return Err(libc::EINVAL);
            }
            walk_extensions(args.cliprects_ptr, |name, at| {
                if name != DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES {
                    return Err(libc::EINVAL);
                }
                let tf: drm_i915_gem_execbuffer_ext_timeline_fences = uaccess::read(at)?;
                let count = usize::try_from(tf.fence_count).map_err(|_| libc::EINVAL)?;
                uaccess::read_array_into(tf.handles_ptr, count, user_fences)?;
                uaccess::read_array_into(tf.values_ptr, count, values)?;
                for (&f, &v) in user_fences.iter().zip(values.iter()) {
                    fences.extend(self.exec_fence(f, v)?);
                }
                Ok(())
            })?;
        }
        if args.flags & I915_EXEC_FENCE_ARRAY != 0 && args.num_cliprects != 0 {
            uaccess::read_array_into(args.cliprects_ptr, args.num_cliprects as usize, user_fences)?;
            for &f in user_fences.iter() {
                fences.extend(self.exec_fence(f, 0)?);
            }
        }
        if args.flags & (I915_EXEC_FENCE_IN | I915_EXEC_FENCE_SUBMIT | I915_EXEC_FENCE_OUT) != 0 {
            // The kernel rejects IN|SUBMIT together with EINVAL, and an in-fence that is not a
            // sync_file with EINVAL; the simulation has no sync_files at all.
            log::warn!("simulated i915: sync_file fences (FENCE_IN/OUT/SUBMIT) are not simulated; use syncobjs");
            return Err(libc::EINVAL);
        }

        let ctx_id = (args.rsvd1 & I915_EXEC_CONTEXT_ID_MASK) as u32;
        let ring = args.flags & I915_EXEC_RING_MASK;
        let mut st = self.lock();
        if !st.contexts.contains_key(&ctx_id) {
            return Err(libc::ENOENT);
        }
        // eb_select_legacy_ring
        if ring != I915_EXEC_BSD && args.flags & I915_EXEC_BSD_MASK != 0 {
            return Err(libc::EINVAL);
        }
        if ring > I915_EXEC_VEBOX {
            return Err(libc::EINVAL);
        }
        if ring != I915_EXEC_DEFAULT && ring != I915_EXEC_RENDER {
            log::warn!("simulated i915: only the render engine is simulated (ring {ring})");
            return Err(libc::EINVAL);
        }

        // eb_lookup_vmas / eb_validate_vma
        let batch_index = if args.flags & I915_EXEC_BATCH_FIRST != 0 {
            0
        } else {
            exec.len() - 1
        };
        let invalid_flags = EXEC_OBJECT_UNKNOWN_FLAGS | EXEC_OBJECT_NEEDS_GTT;
        // Duplicate handles: a scan of the objects before for short lists (no allocation),
        // a set for long ones.
        let mut seen = (exec.len() > SHORT_EXEC_LIST).then(std::collections::HashSet::new);
        for (i, e) in exec.iter().enumerate() {
            let bo = st.bos.get(&e.handle).ok_or(libc::ENOENT)?;
            if e.relocation_count != 0 {
                log::warn!("simulated i915: relocations are not simulated; use softpin (EXEC_OBJECT_PINNED)");
                return Err(libc::EINVAL);
            }
            if e.flags & invalid_flags != 0 {
                return Err(libc::EINVAL);
            }
            if e.alignment != 0 && !e.alignment.is_power_of_two() {
                return Err(libc::EINVAL);
            }
            if e.flags & EXEC_OBJECT_PINNED != 0
                && e.offset != canonical(e.offset & !(PAGE_SIZE - 1))
            {
                return Err(libc::EINVAL);
            }
            let pad = if e.flags & EXEC_OBJECT_PAD_TO_SIZE != 0 {
                if e.rsvd1 % PAGE_SIZE != 0 {
                    return Err(libc::EINVAL);
                }
                e.rsvd1
            } else {
                0
            };
            let duplicate = match &mut seen {
                Some(set) => !set.insert(e.handle),
                None => exec[..i].iter().any(|o| o.handle == e.handle),
            };
            if duplicate {
                // "Object appears more than once in object list"
                return Err(libc::EINVAL);
            }
            sizes.push(bo.size.max(pad));
        }
        let batch = &exec[batch_index];
        if batch.flags & EXEC_OBJECT_WRITE != 0 {
            // Self-modifying batch buffer.
            return Err(libc::EINVAL);
        }
        let batch_size = st.bos[&batch.handle].size;
        let start = args.batch_start_offset as u64;
        if start + args.batch_len as u64 > batch_size {
            return Err(libc::EINVAL);
        }
        let batch_len = if args.batch_len == 0 {
            batch_size - start
        } else {
            args.batch_len as u64
        };
        if batch_len == 0 {
            return Err(libc::EINVAL);
        }
        if self.faults.fire(FaultKind::ExecEio) {
            return Err(libc::EIO);
        }
        if self.faults.fire(FaultKind::ExecEnospc) {
            return Err(libc::ENOSPC);
        }
        if self.faults.fire(FaultKind::Ban) {
            // As if an earlier batch of this context had hung and the kernel banned it.
            st.reset_count += 1;
            let ctx = st.contexts.get_mut(&ctx_id).ok_or(libc::ENOENT)?;
            ctx.batch_active += 1;
            ctx.banned = true;
        }
        let ctx = st.contexts.get(&ctx_id).ok_or(libc::ENOENT)?;
        if ctx.banned {
            return Err(libc::EIO);
        }

        // Placement (eb_reserve): softpinned objects must fit and must not overlap.
        placed.resize(exec.len(), None);
        for (i, e) in exec.iter().enumerate() {
            if e.flags & EXEC_OBJECT_PINNED == 0 {
                continue;
            }
            let addr = e.offset & (VM_SIZE - 1);
            let end = if e.flags & EXEC_OBJECT_SUPPORTS_48B_ADDRESS != 0 {
                VM_SIZE
            } else {
                LOW_4G_END
            };
            if (e.alignment != 0 && !addr.is_multiple_of(e.alignment)) || addr + sizes[i] > end {
                return Err(libc::EINVAL);
            }
            for (j, other) in placed.iter().enumerate() {
                if let Some(other) = other {
                    if overlaps((addr, sizes[i]), (*other, sizes[j])) {
                        // Overlapping softpinned objects in one execbuf (i915_gem_evict_for_node).
                        return Err(libc::EINVAL);
                    }
                }
            }
            placed[i] = Some(addr);
        }
        let ctx = st.contexts.get_mut(&ctx_id).ok_or(libc::ENOENT)?;
        for (i, e) in exec.iter().enumerate() {
            if placed[i].is_some() {
                continue;
            }
            let align = e.alignment.max(PAGE_SIZE);
            let end = if e.flags & EXEC_OBJECT_SUPPORTS_48B_ADDRESS != 0 {
                VM_SIZE
            } else {
                LOW_4G_END
            };
            let fits = |addr: u64, placed: &[Option<u64>]| {
                addr.is_multiple_of(align)
                    && addr + sizes[i] <= end
                    && placed
                        .iter()
                        .enumerate()
                        .all(|(j, p)| p.is_none_or(|p| !overlaps((addr, sizes[i]), (p, sizes[j]))))
            };
            let mut addr = match ctx.bound.get(&e.handle) {
                Some(&a) if fits(a, placed) => a,
                _ => ctx.next_address.next_multiple_of(align),
            };
            while !fits(addr, placed) {
                let blocker = placed
                    .iter()
                    .enumerate()
                    .filter_map(|(j, p)| p.map(|p| (p, sizes[j])))
                    .filter(|&(p, s)| overlaps((addr, sizes[i]), (p, s)))
                    .map(|(p, s)| p + s)
                    .max();
                addr = match blocker {
                    Some(after) => after.next_multiple_of(align),
                    None => addr.next_multiple_of(align),
                };
                if addr + sizes[i] > end {
                    return Err(libc::ENOSPC);
                }
            }
            ctx.next_address = ctx.next_address.max(addr + sizes[i]);
            ctx.bound.insert(e.handle, addr);
            placed[i] = Some(addr);
            if e.offset != canonical(addr) {
                moved.push(i);
            }
        }
        objects.extend(exec.iter().enumerate().map(|(i, e)| ExecObject {
            handle: e.handle,
            address: placed[i].unwrap_or(0),
            size: sizes[i],
            flags: e.flags,
            memory: st.bos[&e.handle].memory.clone(),
        }));
        drop(st);
        if !moved.is_empty() {
            // The kernel writes the new offsets back to the user's exec list.
            for &i in moved.iter() {
                exec[i].offset = canonical(objects[i].address);
            }
            let _ = uaccess::write_array(args.buffers_ptr, exec);
        }

        // Dependencies: the kernel queues the request behind them; with an error, the request
        // is cancelled with that error.
        let mut dep_error = 0;
        for f in fences.iter().filter_map(|f| f.wait.as_ref()) {
            self.sync.wait_fence_until(f, i64::MAX);
            let e = sync::error_of(f);
            if e != 0 {
                dep_error = e;
            }
        }

        let job = ExecJob {
            ctx_id,
            objects,
            batch_index,
            batch_start: start,
            batch_len,
        };
        let outcome = if dep_error != 0 {
            Err(ExecError::Hang(GpuHang {
                reason: format!("a dependency failed with error {dep_error}"),
            }))
        } else {
            let _engine = self.engine.lock().unwrap_or_else(|e| e.into_inner());
            self.gpu_backend().execute(&job)
        };
        let error = match outcome {
            Ok(()) => 0,
            Err(ExecError::Unsupported(why)) => {
                log::error!("simulated i915: execbuffer not run: {why}");
                return Err(libc::ENODEV);
            }
            Err(ExecError::Hang(hang)) => {
                let mut st = self.lock();
                if dep_error == 0 {
                    st.reset_count += 1;
                }
                if let Some(ctx) = st.contexts.get_mut(&ctx_id) {
                    if dep_error == 0 {
                        ctx.batch_active += 1;
                        if !ctx.recoverable && ctx.bannable {
                            ctx.banned = true;
                        }
                    }
                    log::error!(
                        "simulated i915: context {ctx_id}: {hang}{}",
                        if ctx.banned { "; context banned" } else { "" }
                    );
                }
                if dep_error != 0 {
                    dep_error
                } else {
                    -libc::EIO
                }
            }
        };

        // The request's fence: signaled (the job ran synchronously), with its error.
        let fence = self.sync.finished_fence(error);
        {
            let mut st = self.lock();
            for o in objects.iter() {
                if let Some(bo) = st.bos.get_mut(&o.handle) {
                    bo.busy = Some(fence.clone());
                }
            }
        }
        // A syncobj destroyed meanwhile is simply skipped, as the kernel holds its own
        // reference.
        let signals = fences
            .iter()
            .filter(|f| f.flags & I915_EXEC_FENCE_SIGNAL != 0)
            .map(|f| (f.handle, f.point));
        self.sync.attach_each(signals, &fence);
        Ok(())
    }
}
