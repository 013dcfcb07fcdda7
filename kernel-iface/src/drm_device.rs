//! [`DrmDevice`]: the one handle through which every ioctl and mmap goes.

use std::ffi::c_void;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Arc;

use crate::device_info::{lookup_pci_id, DeviceInfo};
use crate::sim::{BoMemory, Faults, KernelVersion, SimKernel};
use crate::uapi::{self, Ioctl};
use crate::KernelError;

/// A DRM render node driven by i915, as found by [`DrmDevice::enumerate_render_nodes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderNode {
    pub path: PathBuf,
    /// The kernel driver's name (always "i915" in the enumeration's results).
    pub driver: String,
    /// `I915_PARAM_CHIPSET_ID`.
    pub pci_id: u16,
    /// The device-table row, if the PCI id is known.
    pub info: Option<&'static DeviceInfo>,
}

enum Backend {
    Render { fd: OwnedFd, path: PathBuf },
    Sim(Arc<SimKernel>),
}

/// An open i915 device: a real render node or the simulated kernel.
pub struct DrmDevice {
    backend: Backend,
    info: &'static DeviceInfo,
    caps: KernelCaps,
}

impl std::fmt::Debug for DrmDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backend {
            Backend::Render { path, .. } => {
                write!(f, "DrmDevice({}, {})", path.display(), self.info.name)
            }
            Backend::Sim(_) => write!(f, "DrmDevice(simulated, {})", self.info.name),
        }
    }
}

/// Current CLOCK_MONOTONIC time in nanoseconds: the clock of the syncobj wait timeouts.
pub fn monotonic_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time the calling thread has used, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`): on a
/// shared machine, wall time also counts the time other processes held the core.
pub fn thread_cpu_ns() -> i64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The time of `clock` in nanoseconds.
fn clock_ns(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid, exclusively borrowed location.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    debug_assert_eq!(rc, 0);
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Issues `request` on a real DRM fd, retrying on EINTR/EAGAIN as libdrm's `drmIoctl` does.
///
/// A failure is normally -1 with `errno`. Mesa's drm-shim (an `LD_PRELOAD` fake of the render
/// node) returns the negated errno itself for some requests, and -1 without setting `errno` for
/// others: both are accepted, the latter as EINVAL, and `errno` is cleared before each call so a
/// stale EINTR cannot make the retry loop spin.
fn raw_ioctl<T: Ioctl>(fd: i32, arg: &mut T) -> Result<(), KernelError> {
    loop {
        // SAFETY: `__errno_location` returns this thread's errno slot, always valid to write.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: `arg` is a live, exclusively borrowed `T`, and `T::REQUEST` encodes exactly
        // `size_of::<T>()` (the `Ioctl` contract), so the kernel touches only `*arg`. User
        // pointers inside `T` are checked by the kernel (EFAULT).
        let rc = unsafe { libc::ioctl(fd, T::REQUEST as _, arg as *mut T as *mut c_void) };
        if rc >= 0 {
            return Ok(());
        }
        let errno = match rc {
            -1 => match last_errno() {
                0 => libc::EINVAL,
                e => e,
            },
            negated => -negated,
        };
        if errno != libc::EINTR && errno != libc::EAGAIN {
            return Err(KernelError::from_errno(T::NAME, errno));
        }
    }
}

fn open_rw(path: &Path) -> Result<OwnedFd, KernelError> {
    use std::os::unix::ffi::OsStrExt;
    let cpath =
        std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| KernelError::Io {
            what: format!("open {}", path.display()),
            source: std::io::Error::from_raw_os_error(libc::EINVAL),
        })?;
    // SAFETY: `cpath` is a NUL-terminated string that outlives the call.
    let fd = unsafe { libc::open(cpath.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(KernelError::Io {
            what: format!("open {}", path.display()),
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: `fd` was just returned by open() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads the driver name with DRM_IOCTL_VERSION (first call sizes, second call fills).
fn driver_name(fd: i32) -> Result<String, KernelError> {
    let mut v = uapi::drm_version::default();
    raw_ioctl(fd, &mut v)?;
    let mut name = vec![0u8; v.name_len as usize];
    let mut v2 = uapi::drm_version {
        name_len: name.len() as u64,
        name: name.as_mut_ptr() as u64,
        ..Default::default()
    };
    raw_ioctl(fd, &mut v2)?;
    name.truncate((v2.name_len as usize).min(name.len()));
    Ok(String::from_utf8_lossy(&name).into_owned())
}

fn getparam_fd(fd: i32, param: i32) -> Result<i32, KernelError> {
    let mut value: i32 = 0;
    let mut gp = uapi::drm_i915_getparam {
        param,
        value: &mut value as *mut i32 as u64,
    };
    raw_ioctl(fd, &mut gp)?;
    Ok(value)
}

/// Opens `path` and identifies it; `Ok(None)` if it is not driven by i915.
fn probe_render_node(path: &Path) -> Result<Option<(OwnedFd, RenderNode)>, KernelError> {
    let fd = open_rw(path)?;
    let driver = driver_name(fd.as_raw_fd())?;
    if driver != "i915" {
        log::debug!("{}: driver {driver:?}, not i915; skipped", path.display());
        return Ok(None);
    }
    let pci_id = getparam_fd(fd.as_raw_fd(), uapi::I915_PARAM_CHIPSET_ID)? as u16;
    let node = RenderNode {
        path: path.to_path_buf(),
        driver,
        pci_id,
        info: lookup_pci_id(pci_id),
    };
    Ok(Some((fd, node)))
}

/// How the kernel is asked whether it has a [`KERNEL_REQUIREMENTS`] row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// `I915_PARAM_*` answers at least this value.
    Param(i32, i32),
    /// `DRM_CAP_*` answers non-zero.
    Cap(u64),
    /// A new context's `I915_CONTEXT_PARAM_GTT_SIZE` is at least this many bytes.
    GttSize(u64),
}

/// One kernel interface the driver cannot do without: what it is, how it is probed, and the
/// Linux version that introduced it (named in the refusal, see docs/kernel.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirement {
    pub what: &'static str,
    pub probe: Probe,
    pub since: &'static str,
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (Linux {})", self.what, self.since)
    }
}

/// What the driver uses of i915 and DRM core with no fallback, beyond what every i915 kernel
/// has, with the kernel's way of saying it has it. A render node whose kernel lacks one is not
/// offered, and the log names the interface and the kernel version that has it. Optional
/// interfaces are [`KernelCaps`].
pub const KERNEL_REQUIREMENTS: &[Requirement] = &[
    // Every object softpinned at the driver's VA (bo.rs), no relocations (queue.rs).
    Requirement {
        what: "EXEC_OBJECT_PINNED (I915_PARAM_HAS_EXEC_SOFTPIN)",
        probe: Probe::Param(uapi::I915_PARAM_HAS_EXEC_SOFTPIN, 1),
        since: "4.5",
    },
    Requirement {
        what: "I915_EXEC_NO_RELOC",
        probe: Probe::Param(uapi::I915_PARAM_HAS_EXEC_NO_RELOC, 1),
        since: "3.10",
    },
    // Semaphores and fences as syncobjs of the execbuffer.
    Requirement {
        what: "I915_EXEC_FENCE_ARRAY",
        probe: Probe::Param(uapi::I915_PARAM_HAS_EXEC_FENCE_ARRAY, 1),
        since: "4.14",
    },
    // Version 4 of the GTT mmap ABI is the one with GEM_MMAP_OFFSET.
    Requirement {
        what: "DRM_IOCTL_I915_GEM_MMAP_OFFSET (I915_PARAM_MMAP_GTT_VERSION >= 4)",
        probe: Probe::Param(uapi::I915_PARAM_MMAP_GTT_VERSION, 4),
        since: "5.5",
    },
    Requirement {
        what: "DRM_CAP_SYNCOBJ",
        probe: Probe::Cap(uapi::DRM_CAP_SYNCOBJ),
        since: "4.13",
    },
    // The driver's heaps reach 0x7001_0000_0000: a full 48-bit PPGTT per context.
    Requirement {
        what: "48-bit full PPGTT",
        probe: Probe::GttSize(1 << 48),
        since: "4.9 on Gen9",
    },
];

/// The [`KERNEL_REQUIREMENTS`] rows the kernel does not meet; `answer` runs a probe and gives
/// the kernel's value, None when the ioctl fails (an older kernel answers EINVAL for a
/// parameter or capability it does not know).
pub fn missing_kernel_requirements(answer: impl Fn(Probe) -> Option<u64>) -> Vec<Requirement> {
    KERNEL_REQUIREMENTS
        .iter()
        .filter(|r| {
            let min = match r.probe {
                Probe::Param(_, min) => min as u64,
                Probe::Cap(_) => 1,
                Probe::GttSize(min) => min,
            };
            answer(r.probe).is_none_or(|v| v < min)
        })
        .copied()
        .collect()
}

/// The optional kernel interfaces and the facts the kernel reports about the GPU, probed when
/// a device is opened. Each has a fallback (docs/kernel.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelCaps {
    /// Timeline points in the execbuffer (`I915_PARAM_HAS_EXEC_TIMELINE_FENCES`, Linux 5.8)
    /// and the timeline syncobj ioctls (`DRM_CAP_SYNCOBJ_TIMELINE`, Linux 5.2). Without them
    /// the driver builds timeline semaphores from binary syncobjs, one per signalled value.
    pub timeline_fences: bool,
    /// The GPU shares the CPU's last-level cache (`I915_PARAM_HAS_LLC`): mappings are
    /// write-back and a cached memory type is offered; without it mappings are write-combined.
    pub has_llc: bool,
    /// Command-streamer timestamp ticks per second (`I915_PARAM_CS_TIMESTAMP_FREQUENCY`, Linux
    /// 4.15); the device table's value on older kernels.
    pub timestamp_frequency_hz: u64,
}

impl KernelCaps {
    /// Asks the kernel through `param` (GETPARAM, None when it fails) and `cap` (GET_CAP);
    /// `table` gives the values a kernel too old to report them is assumed to have.
    pub fn probe(
        table: &DeviceInfo,
        param: impl Fn(i32) -> Option<i32>,
        cap: impl Fn(u64) -> Option<u64>,
    ) -> KernelCaps {
        let timeline_fences = param(uapi::I915_PARAM_HAS_EXEC_TIMELINE_FENCES).unwrap_or(0) > 0
            && cap(uapi::DRM_CAP_SYNCOBJ_TIMELINE).unwrap_or(0) > 0;
        let has_llc = match param(uapi::I915_PARAM_HAS_LLC) {
            Some(v) => v > 0,
            None => table.has_llc,
        };
        let timestamp_frequency_hz = match param(uapi::I915_PARAM_CS_TIMESTAMP_FREQUENCY) {
            Some(v) if v > 0 => v as u64,
            _ => {
                log::info!(
                    "I915_PARAM_CS_TIMESTAMP_FREQUENCY not answered (Linux < 4.15): {} Hz from the device table",
                    table.timestamp_frequency_hz
                );
                table.timestamp_frequency_hz
            }
        };
        KernelCaps {
            timeline_fences,
            has_llc,
            timestamp_frequency_hz,
        }
    }
}

/// `base` with what the kernel reported ([`KernelCaps`]) in place of the table's guesses.
/// Interned: one leaked row per distinct combination, so [`DrmDevice::info`] stays `'static`.
fn info_with_caps(base: &'static DeviceInfo, caps: &KernelCaps) -> &'static DeviceInfo {
    use std::sync::Mutex;
    if base.has_llc == caps.has_llc && base.timestamp_frequency_hz == caps.timestamp_frequency_hz {
        return base;
    }
    let wanted = DeviceInfo {
        has_llc: caps.has_llc,
        timestamp_frequency_hz: caps.timestamp_frequency_hz,
        ..*base
    };
    static ROWS: Mutex<Vec<&'static DeviceInfo>> = Mutex::new(Vec::new());
    let mut rows = ROWS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = rows.iter().find(|r| ***r == wanted) {
        return r;
    }
    let row: &'static DeviceInfo = Box::leak(Box::new(wanted));
    rows.push(row);
    row
}

impl DrmDevice {
    /// Lists `/dev/dri/renderD*` nodes driven by i915, in path order. Nodes that cannot be
    /// opened or identified are skipped (and logged); no `/dev/dri` gives an empty list.
    pub fn enumerate_render_nodes() -> Vec<RenderNode> {
        Self::enumerate_render_nodes_in(Path::new("/dev/dri"))
    }

    /// [`DrmDevice::enumerate_render_nodes`] over another directory (for tests).
    pub fn enumerate_render_nodes_in(dir: &Path) -> Vec<RenderNode> {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                log::debug!("no render nodes: {}: {e}", dir.display());
                return Vec::new();
            }
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("renderD"))
            .map(|e| e.path())
            .collect();
        paths.sort();
        let mut nodes = Vec::new();
        for path in paths {
            match probe_render_node(&path) {
                Ok(Some((_fd, node))) => {
                    log::info!(
                        "{}: i915, PCI id 0x{:04x} ({})",
                        path.display(),
                        node.pci_id,
                        node.info.map_or("not in the device table", |i| i.name)
                    );
                    nodes.push(node);
                }
                Ok(None) => {}
                Err(e) => log::debug!("{}: skipped: {e}", path.display()),
            }
        }
        nodes
    }

    /// Opens a render node found by the enumeration.
    pub fn open_render_node(node: &RenderNode) -> Result<DrmDevice, KernelError> {
        let (fd, found) = probe_render_node(&node.path)?.ok_or(KernelError::Errno {
            call: "DRM_IOCTL_VERSION",
            errno: libc::ENODEV,
            errno_name: "ENODEV",
        })?;
        let info = found.info.ok_or(KernelError::UnknownDevice(found.pci_id))?;
        Self::checked(
            Backend::Render {
                fd,
                path: node.path.clone(),
            },
            info,
        )
    }

    /// A device on `backend` once its kernel meets [`KERNEL_REQUIREMENTS`], with its
    /// [`KernelCaps`] probed and the device-table row adjusted to what the kernel reports.
    fn checked(backend: Backend, table: &'static DeviceInfo) -> Result<DrmDevice, KernelError> {
        let mut dev = DrmDevice {
            backend,
            info: table,
            caps: KernelCaps {
                timeline_fences: false,
                has_llc: table.has_llc,
                timestamp_frequency_hz: table.timestamp_frequency_hz,
            },
        };
        let missing = dev.missing_kernel_requirements();
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|r| r.to_string()).collect();
            return Err(KernelError::KernelTooOld(list.join(", ")));
        }
        dev.caps = KernelCaps::probe(table, |p| dev.getparam(p).ok(), |c| dev.get_cap(c).ok());
        dev.info = info_with_caps(table, &dev.caps);
        if !dev.caps.timeline_fences {
            log::info!(
                "{dev:?}: no timeline fences in the execbuffer (Linux < 5.8): timeline semaphores use binary syncobjs"
            );
        }
        Ok(dev)
    }

    /// The optional interfaces the kernel offers and the GPU facts it reported.
    pub fn caps(&self) -> &KernelCaps {
        &self.caps
    }

    /// The [`KERNEL_REQUIREMENTS`] this device's kernel does not meet.
    pub fn missing_kernel_requirements(&self) -> Vec<Requirement> {
        missing_kernel_requirements(|probe| match probe {
            Probe::Param(p, _) => self.getparam(p).ok().map(|v| v.max(0) as u64),
            Probe::Cap(c) => self.get_cap(c).ok(),
            Probe::GttSize(_) => {
                let ctx = self.context_create().ok()?;
                let size = self.context_get_param(ctx, uapi::I915_CONTEXT_PARAM_GTT_SIZE);
                if let Err(e) = self.context_destroy(ctx) {
                    log::warn!("probe context {ctx}: {e}");
                }
                size.ok()
            }
        })
    }

    /// Creates a simulated i915 answering as `info`, with the uAPI of the kernel version
    /// `FERRITE_SIM_KERNEL` names (the latest when unset). Probed like a render node: a
    /// simulated kernel too old for the driver is refused the same way.
    /// `FERRITE_SIM_FAULTS` makes it inject faults ([`crate::sim::Faults`]).
    pub fn open_sim(info: &'static DeviceInfo) -> Result<DrmDevice, KernelError> {
        Self::open_sim_with(info, KernelVersion::from_env(), Faults::from_env())
    }

    /// [`DrmDevice::open_sim`] with an explicit kernel version.
    pub fn open_sim_kernel(
        info: &'static DeviceInfo,
        kernel: KernelVersion,
    ) -> Result<DrmDevice, KernelError> {
        Self::open_sim_with(info, kernel, Faults::default())
    }

    /// [`DrmDevice::open_sim`] with an explicit kernel version and faults.
    pub fn open_sim_with(
        info: &'static DeviceInfo,
        kernel: KernelVersion,
        faults: Faults,
    ) -> Result<DrmDevice, KernelError> {
        Self::checked(
            Backend::Sim(Arc::new(SimKernel::with_faults(info, kernel, faults))),
            info,
        )
    }

    /// The device-table row of this device.
    pub fn info(&self) -> &'static DeviceInfo {
        self.info
    }

    /// Whether this is the simulated i915.
    pub fn is_simulated(&self) -> bool {
        matches!(self.backend, Backend::Sim(_))
    }

    /// The simulated kernel behind this device, if it is simulated (to plug in a GPU backend,
    /// or for tests to count live objects).
    pub fn sim(&self) -> Option<&Arc<SimKernel>> {
        match &self.backend {
            Backend::Sim(s) => Some(s),
            Backend::Render { .. } => None,
        }
    }

    /// Issues the ioctl that `T` belongs to.
    pub fn ioctl<T: Ioctl>(&self, arg: &mut T) -> Result<(), KernelError> {
        match &self.backend {
            Backend::Render { fd, .. } => raw_ioctl(fd.as_raw_fd(), arg),
            Backend::Sim(sim) => loop {
                // SAFETY: `arg` is a live, exclusively borrowed `T` and `T::REQUEST` is the
                // request whose argument type is `T` (the `Ioctl` contract), which is what
                // `SimKernel::ioctl` requires.
                match unsafe { sim.ioctl(T::REQUEST, arg as *mut T as *mut c_void) } {
                    Ok(()) => return Ok(()),
                    // Repeated, as on a render node (the simulated kernel's fault storms).
                    Err(libc::EINTR | libc::EAGAIN) => continue,
                    Err(errno) => return Err(KernelError::from_errno(T::NAME, errno)),
                }
            },
        }
    }

    /// `DRM_IOCTL_I915_GETPARAM`.
    pub fn getparam(&self, param: i32) -> Result<i32, KernelError> {
        let mut value: i32 = 0;
        let mut gp = uapi::drm_i915_getparam {
            param,
            value: &mut value as *mut i32 as u64,
        };
        self.ioctl(&mut gp)?;
        Ok(value)
    }

    /// `DRM_IOCTL_GET_CAP`.
    pub fn get_cap(&self, capability: u64) -> Result<u64, KernelError> {
        let mut c = uapi::drm_get_cap {
            capability,
            value: 0,
        };
        self.ioctl(&mut c)?;
        Ok(c.value)
    }

    /// `DRM_IOCTL_I915_GEM_CREATE`: a zero-filled buffer object of at least `size` bytes.
    pub fn gem_create(&self, size: u64) -> Result<u32, KernelError> {
        let mut c = uapi::drm_i915_gem_create {
            size,
            ..Default::default()
        };
        self.ioctl(&mut c)?;
        Ok(c.handle)
    }

    /// `DRM_IOCTL_GEM_CLOSE`.
    pub fn gem_close(&self, handle: u32) -> Result<(), KernelError> {
        self.ioctl(&mut uapi::drm_gem_close { handle, pad: 0 })
    }

    /// `DRM_IOCTL_I915_GEM_MMAP_OFFSET` followed by mmap of `size` bytes at the returned fake
    /// offset: write-back when the GPU snoops the CPU's last-level cache
    /// ([`KernelCaps::has_llc`]), write-combined (uncached, so still coherent) otherwise.
    pub fn gem_mmap(&self, handle: u32, size: u64) -> Result<Mapping, KernelError> {
        let mut mo = uapi::drm_i915_gem_mmap_offset {
            handle,
            flags: if self.caps.has_llc {
                uapi::I915_MMAP_OFFSET_WB
            } else {
                uapi::I915_MMAP_OFFSET_WC
            },
            ..Default::default()
        };
        self.ioctl(&mut mo)?;
        let len =
            usize::try_from(size).map_err(|_| KernelError::from_errno("mmap", libc::EINVAL))?;
        if len == 0 {
            return Err(KernelError::from_errno("mmap", libc::EINVAL));
        }
        match &self.backend {
            Backend::Render { fd, .. } => {
                // SAFETY: a fresh shared mapping chosen by the kernel (no fixed address), of
                // `len` bytes of the object behind the fake offset; nothing else aliases it.
                let ptr = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        len,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_SHARED,
                        fd.as_raw_fd(),
                        mo.offset as libc::off_t,
                    )
                };
                if ptr == libc::MAP_FAILED {
                    return Err(KernelError::from_errno("mmap", last_errno()));
                }
                let ptr = NonNull::new(ptr as *mut u8)
                    .ok_or(KernelError::from_errno("mmap", libc::EFAULT))?;
                Ok(Mapping {
                    ptr,
                    len,
                    keep: MappingKeep::Munmap,
                })
            }
            Backend::Sim(sim) => {
                let (mem, inside) = sim
                    .mmap(mo.offset, len)
                    .map_err(|errno| KernelError::from_errno("mmap", errno))?;
                // SAFETY: `inside + len` lies within the object's memory (checked by
                // `SimKernel::mmap`), which `keep` holds alive as long as the mapping.
                let ptr = unsafe { NonNull::new_unchecked(mem.base().as_ptr().add(inside)) };
                Ok(Mapping {
                    ptr,
                    len,
                    keep: MappingKeep::Sim(mem),
                })
            }
        }
    }

    /// `DRM_IOCTL_I915_GEM_WAIT` with a relative timeout (negative: forever). ETIME becomes
    /// [`KernelError::Timeout`].
    pub fn gem_wait(&self, handle: u32, timeout_ns: i64) -> Result<(), KernelError> {
        self.ioctl(&mut uapi::drm_i915_gem_wait {
            bo_handle: handle,
            flags: 0,
            timeout_ns,
        })
    }

    /// `DRM_IOCTL_I915_GEM_SET_DOMAIN`.
    pub fn gem_set_domain(
        &self,
        handle: u32,
        read_domains: u32,
        write_domain: u32,
    ) -> Result<(), KernelError> {
        self.ioctl(&mut uapi::drm_i915_gem_set_domain {
            handle,
            read_domains,
            write_domain,
        })
    }

    /// Creates a context that is not recoverable: after a hang it is banned and later
    /// execbufs on it fail with EIO (what Vulkan's device-lost wants). Uses
    /// `GEM_CONTEXT_CREATE_EXT` with a `SETPARAM(RECOVERABLE=0)` extension.
    pub fn context_create(&self) -> Result<u32, KernelError> {
        let mut setparam = uapi::drm_i915_gem_context_create_ext_setparam {
            base: uapi::i915_user_extension {
                next_extension: 0,
                name: uapi::I915_CONTEXT_CREATE_EXT_SETPARAM,
                ..Default::default()
            },
            param: uapi::drm_i915_gem_context_param {
                ctx_id: 0,
                size: 0,
                param: uapi::I915_CONTEXT_PARAM_RECOVERABLE,
                value: 0,
            },
        };
        let mut create = uapi::drm_i915_gem_context_create_ext {
            ctx_id: 0,
            flags: uapi::I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS,
            extensions: &mut setparam as *mut _ as u64,
        };
        self.ioctl(&mut create)?;
        Ok(create.ctx_id)
    }

    /// `DRM_IOCTL_I915_GEM_CONTEXT_DESTROY`.
    pub fn context_destroy(&self, ctx: u32) -> Result<(), KernelError> {
        self.ioctl(&mut uapi::drm_i915_gem_context_destroy {
            ctx_id: ctx,
            pad: 0,
        })
    }

    /// `DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM` for a plain 64-bit parameter.
    pub fn context_set_param(&self, ctx: u32, param: u64, value: u64) -> Result<(), KernelError> {
        self.ioctl(&mut uapi::ContextSetParam(
            uapi::drm_i915_gem_context_param {
                ctx_id: ctx,
                size: 0,
                param,
                value,
            },
        ))
    }

    /// `DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM` for a plain 64-bit parameter.
    pub fn context_get_param(&self, ctx: u32, param: u64) -> Result<u64, KernelError> {
        let mut p = uapi::drm_i915_gem_context_param {
            ctx_id: ctx,
            size: 0,
            param,
            value: 0,
        };
        self.ioctl(&mut p)?;
        Ok(p.value)
    }

    /// `DRM_IOCTL_I915_GET_RESET_STATS`.
    pub fn context_reset_stats(&self, ctx: u32) -> Result<uapi::drm_i915_reset_stats, KernelError> {
        let mut s = uapi::drm_i915_reset_stats {
            ctx_id: ctx,
            ..Default::default()
        };
        self.ioctl(&mut s)?;
        Ok(s)
    }

    /// `DRM_IOCTL_I915_GEM_EXECBUFFER2_WR` (the read-write variant, so `rsvd2` comes back).
    pub fn execbuffer2(&self, eb: &mut uapi::drm_i915_gem_execbuffer2) -> Result<(), KernelError> {
        let mut wr = uapi::Execbuffer2Wr(*eb);
        self.ioctl(&mut wr)?;
        *eb = wr.0;
        Ok(())
    }

    /// Runs one `DRM_IOCTL_I915_QUERY` item with the kernel's two-call protocol: the first call
    /// (length 0) returns the size, the second fills the buffer.
    pub fn query(&self, query_id: u64, flags: u32) -> Result<Vec<u8>, KernelError> {
        let mut item = uapi::drm_i915_query_item {
            query_id,
            flags,
            ..Default::default()
        };
        // One item per call; the kernel reports a per-item error as a negative length.
        let run = |item: &mut uapi::drm_i915_query_item| -> Result<usize, KernelError> {
            let mut q = uapi::drm_i915_query {
                num_items: 1,
                flags: 0,
                items_ptr: item as *mut _ as u64,
            };
            self.ioctl(&mut q)?;
            if item.length < 0 {
                return Err(KernelError::from_errno(
                    "DRM_IOCTL_I915_QUERY",
                    -item.length,
                ));
            }
            Ok(item.length as usize)
        };
        let mut data = vec![0u8; run(&mut item)?];
        item.data_ptr = data.as_mut_ptr() as u64;
        let len = run(&mut item)?;
        data.truncate(len);
        Ok(data)
    }

    /// `DRM_I915_QUERY_TOPOLOGY_INFO`: the header and the mask bytes that follow it.
    pub fn query_topology(
        &self,
    ) -> Result<(uapi::drm_i915_query_topology_info, Vec<u8>), KernelError> {
        let data = self.query(uapi::DRM_I915_QUERY_TOPOLOGY_INFO, 0)?;
        let hdr_len = std::mem::size_of::<uapi::drm_i915_query_topology_info>();
        if data.len() < hdr_len {
            return Err(KernelError::from_errno(
                "DRM_IOCTL_I915_QUERY",
                libc::EINVAL,
            ));
        }
        let u16_at = |i: usize| u16::from_ne_bytes([data[2 * i], data[2 * i + 1]]);
        let hdr = uapi::drm_i915_query_topology_info {
            flags: u16_at(0),
            max_slices: u16_at(1),
            max_subslices: u16_at(2),
            max_eus_per_subslice: u16_at(3),
            subslice_offset: u16_at(4),
            subslice_stride: u16_at(5),
            eu_offset: u16_at(6),
            eu_stride: u16_at(7),
        };
        Ok((hdr, data[hdr_len..].to_vec()))
    }

    /// `DRM_I915_QUERY_ENGINE_INFO`: the engines the kernel exposes.
    pub fn query_engines(&self) -> Result<Vec<uapi::drm_i915_engine_info>, KernelError> {
        let data = self.query(uapi::DRM_I915_QUERY_ENGINE_INFO, 0)?;
        let hdr_len = std::mem::size_of::<uapi::drm_i915_query_engine_info>();
        let eng_len = std::mem::size_of::<uapi::drm_i915_engine_info>();
        if data.len() < hdr_len {
            return Err(KernelError::from_errno(
                "DRM_IOCTL_I915_QUERY",
                libc::EINVAL,
            ));
        }
        let count = u32::from_ne_bytes(data[0..4].try_into().expect("4 bytes")) as usize;
        if data.len() < hdr_len + count * eng_len {
            return Err(KernelError::from_errno(
                "DRM_IOCTL_I915_QUERY",
                libc::EINVAL,
            ));
        }
        let le_u16 = |b: &[u8], o: usize| u16::from_ne_bytes([b[o], b[o + 1]]);
        let le_u64 =
            |b: &[u8], o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        Ok((0..count)
            .map(|i| {
                let b = &data[hdr_len + i * eng_len..hdr_len + (i + 1) * eng_len];
                uapi::drm_i915_engine_info {
                    engine: uapi::i915_engine_class_instance {
                        engine_class: le_u16(b, 0),
                        engine_instance: le_u16(b, 2),
                    },
                    flags: le_u64(b, 8),
                    capabilities: le_u64(b, 16),
                    logical_instance: le_u16(b, 24),
                    ..Default::default()
                }
            })
            .collect())
    }

    /// `DRM_IOCTL_SYNCOBJ_CREATE`.
    pub fn syncobj_create(&self, signaled: bool) -> Result<u32, KernelError> {
        let mut c = uapi::drm_syncobj_create {
            handle: 0,
            flags: if signaled {
                uapi::DRM_SYNCOBJ_CREATE_SIGNALED
            } else {
                0
            },
        };
        self.ioctl(&mut c)?;
        Ok(c.handle)
    }

    /// `DRM_IOCTL_SYNCOBJ_DESTROY`.
    pub fn syncobj_destroy(&self, h: u32) -> Result<(), KernelError> {
        self.ioctl(&mut uapi::drm_syncobj_destroy { handle: h, pad: 0 })
    }

    /// `DRM_IOCTL_SYNCOBJ_WAIT` with an absolute CLOCK_MONOTONIC timeout (see
    /// [`monotonic_ns`]); ETIME becomes [`KernelError::Timeout`].
    pub fn syncobj_wait(
        &self,
        handles: &[u32],
        timeout_abs_ns: i64,
        wait_all: bool,
    ) -> Result<(), KernelError> {
        let flags = if wait_all {
            uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL
        } else {
            0
        };
        self.syncobj_wait_flags(handles, timeout_abs_ns, flags)
            .map(|_| ())
    }

    /// `DRM_IOCTL_SYNCOBJ_WAIT` with explicit `DRM_SYNCOBJ_WAIT_FLAGS_*`; returns
    /// `first_signaled` (meaningful without WAIT_ALL).
    pub fn syncobj_wait_flags(
        &self,
        handles: &[u32],
        timeout_abs_ns: i64,
        flags: u32,
    ) -> Result<u32, KernelError> {
        let mut w = uapi::drm_syncobj_wait {
            handles: handles.as_ptr() as u64,
            timeout_nsec: timeout_abs_ns,
            count_handles: handles.len() as u32,
            flags,
            ..Default::default()
        };
        self.ioctl(&mut w)?;
        Ok(w.first_signaled)
    }

    /// `DRM_IOCTL_SYNCOBJ_RESET`.
    pub fn syncobj_reset(&self, handles: &[u32]) -> Result<(), KernelError> {
        self.ioctl(&mut uapi::SyncobjReset(uapi::drm_syncobj_array {
            handles: handles.as_ptr() as u64,
            count_handles: handles.len() as u32,
            pad: 0,
        }))
    }

    /// `DRM_IOCTL_SYNCOBJ_SIGNAL`.
    pub fn syncobj_signal(&self, handles: &[u32]) -> Result<(), KernelError> {
        self.ioctl(&mut uapi::SyncobjSignal(uapi::drm_syncobj_array {
            handles: handles.as_ptr() as u64,
            count_handles: handles.len() as u32,
            pad: 0,
        }))
    }

    /// `DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT`: waits until each `handles[i]` reaches `points[i]`
    /// (all of them with `DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL`); returns `first_signaled`.
    pub fn syncobj_timeline_wait(
        &self,
        handles: &[u32],
        points: &[u64],
        timeout_abs_ns: i64,
        flags: u32,
    ) -> Result<u32, KernelError> {
        if handles.len() != points.len() {
            return Err(KernelError::from_errno(
                "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT",
                libc::EINVAL,
            ));
        }
        let mut w = uapi::drm_syncobj_timeline_wait {
            handles: handles.as_ptr() as u64,
            points: points.as_ptr() as u64,
            timeout_nsec: timeout_abs_ns,
            count_handles: handles.len() as u32,
            flags,
            ..Default::default()
        };
        self.ioctl(&mut w)?;
        Ok(w.first_signaled)
    }

    /// `DRM_IOCTL_SYNCOBJ_QUERY`: the current (signaled) point of each timeline, or the last
    /// submitted one with `DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED`.
    pub fn syncobj_query(&self, handles: &[u32], flags: u32) -> Result<Vec<u64>, KernelError> {
        let mut points = vec![0u64; handles.len()];
        self.ioctl(&mut uapi::SyncobjQuery(uapi::drm_syncobj_timeline_array {
            handles: handles.as_ptr() as u64,
            points: points.as_mut_ptr() as u64,
            count_handles: handles.len() as u32,
            flags,
        }))?;
        Ok(points)
    }

    /// `DRM_IOCTL_SYNCOBJ_TRANSFER`: moves the fence of `src` at `src_point` (0: the binary
    /// fence) to `dst` at `dst_point` (0: replaces the binary fence).
    pub fn syncobj_transfer(
        &self,
        dst: u32,
        dst_point: u64,
        src: u32,
        src_point: u64,
        flags: u32,
    ) -> Result<(), KernelError> {
        self.ioctl(&mut uapi::drm_syncobj_transfer {
            src_handle: src,
            dst_handle: dst,
            src_point,
            dst_point,
            flags,
            pad: 0,
        })
    }

    /// `DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL`: signals `points[i]` on `handles[i]`.
    pub fn syncobj_timeline_signal(
        &self,
        handles: &[u32],
        points: &[u64],
    ) -> Result<(), KernelError> {
        if handles.len() != points.len() {
            return Err(KernelError::from_errno(
                "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL",
                libc::EINVAL,
            ));
        }
        self.ioctl(&mut uapi::SyncobjTimelineSignal(
            uapi::drm_syncobj_timeline_array {
                handles: handles.as_ptr() as u64,
                points: points.as_ptr() as u64,
                count_handles: handles.len() as u32,
                flags: 0,
            },
        ))
    }
}

enum MappingKeep {
    /// A real mmap: unmapped on drop.
    Munmap,
    /// The simulated object's memory, kept alive as the kernel keeps pages of a mapped object.
    Sim(#[allow(dead_code)] Arc<BoMemory>),
}

/// A CPU mapping of a buffer object; unmapped on drop.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
    keep: MappingKeep,
}

// SAFETY: the mapping is plain shared memory with no thread affinity; the raw pointer is only
// handed out, never dereferenced by `Mapping` without bounds checks, and synchronising access
// to the bytes is the user's job exactly as for GPU-shared memory.
unsafe impl Send for Mapping {}
// SAFETY: see `Send`; `&Mapping` allows only copies in and out of the mapping.
unsafe impl Sync for Mapping {}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapping({:p}, {} bytes)", self.ptr, self.len)
    }
}

impl Mapping {
    /// Start of the mapping.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: mappings have at least one byte).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Panics unless `offset..offset + len` lies inside the mapping (`what`: read or write).
    fn check_range(&self, what: &str, offset: usize, len: usize) {
        let end = offset.checked_add(len).expect("range overflow");
        assert!(
            end <= self.len,
            "{what} {offset}..{end} outside a mapping of {} bytes",
            self.len
        );
    }

    /// Copies `out.len()` bytes from `offset`. Panics if the range is outside the mapping.
    pub fn read(&self, offset: usize, out: &mut [u8]) {
        self.check_range("read", offset, out.len());
        // SAFETY: `offset..offset + out.len()` lies inside the live mapping (`check_range`),
        // and `out` is a distinct Rust buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ptr.as_ptr().add(offset),
                out.as_mut_ptr(),
                out.len(),
            )
        }
    }

    /// Copies `data` to `offset`. Panics if the range is outside the mapping.
    pub fn write(&self, offset: usize, data: &[u8]) {
        self.check_range("write", offset, data.len());
        // SAFETY: `offset..offset + data.len()` lies inside the live, writable mapping
        // (`check_range`), and `data` is a distinct Rust buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.as_ptr().add(offset), data.len())
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        match self.keep {
            MappingKeep::Munmap => {
                // SAFETY: `ptr`/`len` are exactly what mmap returned, unmapped only here.
                let rc = unsafe { libc::munmap(self.ptr.as_ptr() as *mut c_void, self.len) };
                if rc != 0 {
                    log::warn!(
                        "munmap of {} bytes failed: {}",
                        self.len,
                        std::io::Error::last_os_error()
                    );
                }
            }
            MappingKeep::Sim(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_ioctl_on_a_non_drm_file_reports_the_errno() {
        // /dev/null accepts open(O_RDWR) but no DRM ioctl: the real path must report ENOTTY.
        let fd = open_rw(Path::new("/dev/null")).unwrap();
        let err = driver_name(fd.as_raw_fd()).unwrap_err();
        assert_eq!(err.errno(), Some(libc::ENOTTY), "{err}");
        assert!(err.to_string().contains("DRM_IOCTL_VERSION"), "{err}");
        let err = getparam_fd(fd.as_raw_fd(), uapi::I915_PARAM_CHIPSET_ID).unwrap_err();
        assert_eq!(err.errno(), Some(libc::ENOTTY));
        assert!(probe_render_node(Path::new("/dev/null")).is_err());
    }

    #[test]
    fn the_simulated_kernel_meets_every_requirement() {
        let info = crate::lookup_platform("skl").unwrap();
        let dev = DrmDevice::open_sim_kernel(info, KernelVersion::LATEST).unwrap();
        assert_eq!(dev.missing_kernel_requirements(), Vec::<Requirement>::new());
        assert_eq!(dev.get_cap(uapi::DRM_CAP_SYNCOBJ_TIMELINE).unwrap(), 1);
        assert_eq!(
            *dev.caps(),
            KernelCaps {
                timeline_fences: true,
                has_llc: true,
                timestamp_frequency_hz: 12_000_000
            }
        );
        // An unknown capability is EINVAL, as on a render node.
        let err = dev.get_cap(0x7fff).unwrap_err();
        assert_eq!(err.errno(), Some(libc::EINVAL));
        // The probe context is destroyed again.
        assert_eq!(dev.sim().unwrap().counts().contexts, 0);
    }

    #[test]
    fn a_kernel_before_5_8_opens_without_timeline_fences() {
        let info = crate::lookup_platform("skl").unwrap();
        for (version, syncobj_timeline) in [((5, 7), true), ((5, 5), true)] {
            let v = KernelVersion(version.0, version.1);
            let dev = DrmDevice::open_sim_kernel(info, v).unwrap();
            assert!(!dev.caps().timeline_fences, "Linux {v}");
            assert_eq!(
                dev.get_cap(uapi::DRM_CAP_SYNCOBJ_TIMELINE).is_ok(),
                syncobj_timeline,
                "Linux {v}"
            );
            // The execbuffer's extension flag is an unknown flag there.
            let err = dev
                .getparam(uapi::I915_PARAM_HAS_EXEC_TIMELINE_FENCES)
                .unwrap_err();
            assert_eq!(err.errno(), Some(libc::EINVAL));
            assert!(dev.caps().has_llc);
            assert_eq!(dev.info().timestamp_frequency_hz, 12_000_000);
        }
    }

    #[test]
    fn a_kernel_before_5_5_is_refused_naming_the_interface_and_version() {
        let info = crate::lookup_platform("skl").unwrap();
        let err = DrmDevice::open_sim_kernel(info, KernelVersion(5, 4)).unwrap_err();
        assert!(matches!(err, KernelError::KernelTooOld(_)), "{err}");
        assert_eq!(
            err.to_string(),
            "the kernel lacks DRM_IOCTL_I915_GEM_MMAP_OFFSET (I915_PARAM_MMAP_GTT_VERSION >= 4) (Linux 5.5)"
        );
    }

    #[test]
    fn llc_and_timestamp_frequency_come_from_the_kernel() {
        let table = crate::lookup_platform("skl").unwrap();
        // A kernel that says "no LLC" and 19.2 MHz wins over the table (12 MHz, LLC).
        let caps = KernelCaps::probe(
            table,
            |p| match p {
                uapi::I915_PARAM_HAS_LLC => Some(0),
                uapi::I915_PARAM_CS_TIMESTAMP_FREQUENCY => Some(19_200_000),
                _ => None,
            },
            |_| None,
        );
        assert!(!caps.has_llc && !caps.timeline_fences);
        assert_eq!(caps.timestamp_frequency_hz, 19_200_000);
        let row = info_with_caps(table, &caps);
        assert!(!row.has_llc);
        assert_eq!(row.timestamp_frequency_hz, 19_200_000);
        assert_eq!((row.pci_id, row.eu_total), (table.pci_id, table.eu_total));
        // Interned: the same answer gives the same row; the table's own answer the table row.
        assert!(std::ptr::eq(row, info_with_caps(table, &caps)));
        let same = KernelCaps::probe(table, |_| None, |_| Some(1));
        assert!(std::ptr::eq(info_with_caps(table, &same), table));
        // Timeline fences need both the execbuffer parameter and the syncobj capability.
        let only_param = KernelCaps::probe(
            table,
            |p| (p == uapi::I915_PARAM_HAS_EXEC_TIMELINE_FENCES).then_some(1),
            |_| None,
        );
        assert!(!only_param.timeline_fences);
        let both = KernelCaps::probe(table, |_| Some(1), |_| Some(1));
        assert!(both.timeline_fences);
    }

    #[test]
    fn missing_requirements_are_listed_with_their_kernel_versions() {
        // A kernel before GEM_MMAP_OFFSET (Linux 5.4): version 3 of the GTT mmap ABI.
        let old = |probe: Probe| match probe {
            Probe::Param(uapi::I915_PARAM_MMAP_GTT_VERSION, _) => Some(3),
            Probe::Param(..) => Some(1),
            Probe::Cap(_) => Some(1),
            Probe::GttSize(_) => Some(1 << 48),
        };
        let missing: Vec<String> = missing_kernel_requirements(old)
            .iter()
            .map(|r| r.to_string())
            .collect();
        assert_eq!(
            missing,
            ["DRM_IOCTL_I915_GEM_MMAP_OFFSET (I915_PARAM_MMAP_GTT_VERSION >= 4) (Linux 5.5)"]
        );
        // Aliasing PPGTT (32-bit) cannot hold the driver's heaps.
        let small_vm = |probe: Probe| match probe {
            Probe::GttSize(_) => Some(1 << 32),
            _ => Some(4),
        };
        let missing = missing_kernel_requirements(small_vm);
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].what, "48-bit full PPGTT");
        assert_eq!(
            missing_kernel_requirements(|_| None).len(),
            KERNEL_REQUIREMENTS.len()
        );
    }

    #[test]
    fn opening_a_missing_node_is_an_io_error() {
        let err = open_rw(Path::new("/nonexistent/renderD128")).unwrap_err();
        assert_eq!(err.errno(), Some(libc::ENOENT));
    }

    #[test]
    fn handles_are_shareable_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<DrmDevice>();
        send_sync::<Mapping>();
        send_sync::<SimKernel>();
        send_sync::<BoMemory>();
    }

    #[test]
    fn monotonic_clock_does_not_go_back() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(a > 0 && b >= a);
    }

    #[test]
    fn errno_mapping() {
        assert!(matches!(
            KernelError::from_errno("x", libc::ETIME),
            KernelError::Timeout
        ));
        assert!(matches!(
            KernelError::from_errno("x", libc::EIO),
            KernelError::DeviceLost(_)
        ));
        assert!(matches!(
            KernelError::from_errno("x", libc::ENOMEM),
            KernelError::OutOfMemory
        ));
        let e = KernelError::from_errno("DRM_IOCTL_GEM_CLOSE", libc::EINVAL);
        assert_eq!(e.to_string(), "DRM_IOCTL_GEM_CLOSE failed: EINVAL (22)");
    }
}
