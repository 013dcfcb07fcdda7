//! [`DrmDevice`]: the one handle through which every ioctl and mmap goes.

use std::ffi::c_void;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Arc;

use crate::device_info::{lookup_pci_id, DeviceInfo};
use crate::sim::{BoMemory, SimKernel};
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
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid, exclusively borrowed location.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    debug_assert_eq!(rc, 0);
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Issues `request` on a real DRM fd, retrying on EINTR/EAGAIN as libdrm's `drmIoctl` does.
fn raw_ioctl<T: Ioctl>(fd: i32, arg: &mut T) -> Result<(), KernelError> {
    loop {
        // SAFETY: `arg` is a live, exclusively borrowed `T`, and `T::REQUEST` encodes exactly
        // `size_of::<T>()` (the `Ioctl` contract), so the kernel touches only `*arg`. User
        // pointers inside `T` are checked by the kernel (EFAULT).
        let rc = unsafe { libc::ioctl(fd, T::REQUEST as _, arg as *mut T as *mut c_void) };
        if rc != -1 {
            return Ok(());
        }
        let errno = last_errno();
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

/// What the driver uses of i915 and DRM core beyond what every i915 kernel has, with the
/// kernel's way of saying it has it. A render node whose kernel lacks one is not offered (the
/// simulated kernel has them all).
pub const KERNEL_REQUIREMENTS: &[(&str, Probe)] = &[
    // Every object softpinned at the driver's VA (bo.rs), no relocations (queue.rs).
    (
        "EXEC_OBJECT_PINNED (I915_PARAM_HAS_EXEC_SOFTPIN)",
        Probe::Param(uapi::I915_PARAM_HAS_EXEC_SOFTPIN, 1),
    ),
    (
        "I915_EXEC_NO_RELOC",
        Probe::Param(uapi::I915_PARAM_HAS_EXEC_NO_RELOC, 1),
    ),
    // Binary semaphores and fences as syncobjs of the execbuffer.
    (
        "I915_EXEC_FENCE_ARRAY",
        Probe::Param(uapi::I915_PARAM_HAS_EXEC_FENCE_ARRAY, 1),
    ),
    // Timeline semaphores (VK_KHR_timeline_semaphore is always advertised).
    (
        "DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES",
        Probe::Param(uapi::I915_PARAM_HAS_EXEC_TIMELINE_FENCES, 1),
    ),
    // Version 4 of the GTT mmap ABI is the one with GEM_MMAP_OFFSET.
    (
        "DRM_IOCTL_I915_GEM_MMAP_OFFSET (I915_PARAM_MMAP_GTT_VERSION >= 4)",
        Probe::Param(uapi::I915_PARAM_MMAP_GTT_VERSION, 4),
    ),
    ("DRM_CAP_SYNCOBJ", Probe::Cap(uapi::DRM_CAP_SYNCOBJ)),
    // SYNCOBJ_TIMELINE_WAIT/QUERY/TRANSFER/TIMELINE_SIGNAL.
    (
        "DRM_CAP_SYNCOBJ_TIMELINE",
        Probe::Cap(uapi::DRM_CAP_SYNCOBJ_TIMELINE),
    ),
    // The driver's heaps reach 0x7001_0000_0000: a full 48-bit PPGTT per context.
    ("48-bit full PPGTT", Probe::GttSize(1 << 48)),
];

/// The [`KERNEL_REQUIREMENTS`] rows the kernel does not meet; `answer` runs a probe and gives
/// the kernel's value, None when the ioctl fails (an older kernel answers EINVAL for a
/// parameter or capability it does not know).
pub fn missing_kernel_requirements(answer: impl Fn(Probe) -> Option<u64>) -> Vec<&'static str> {
    KERNEL_REQUIREMENTS
        .iter()
        .filter(|(_, probe)| {
            let min = match *probe {
                Probe::Param(_, min) => min as u64,
                Probe::Cap(_) => 1,
                Probe::GttSize(min) => min,
            };
            answer(*probe).is_none_or(|v| v < min)
        })
        .map(|(what, _)| *what)
        .collect()
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
        let dev = DrmDevice {
            backend: Backend::Render {
                fd,
                path: node.path.clone(),
            },
            info,
        };
        let missing = dev.missing_kernel_requirements();
        if !missing.is_empty() {
            return Err(KernelError::KernelTooOld(missing.join(", ")));
        }
        Ok(dev)
    }

    /// The [`KERNEL_REQUIREMENTS`] this device's kernel does not meet.
    pub fn missing_kernel_requirements(&self) -> Vec<&'static str> {
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

    /// Creates a simulated i915 answering as `info`.
    pub fn open_sim(info: &'static DeviceInfo) -> Result<DrmDevice, KernelError> {
        Ok(DrmDevice {
            backend: Backend::Sim(Arc::new(SimKernel::new(info))),
            info,
        })
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
            Backend::Sim(sim) => {
                // SAFETY: `arg` is a live, exclusively borrowed `T` and `T::REQUEST` is the
                // request whose argument type is `T` (the `Ioctl` contract), which is what
                // `SimKernel::ioctl` requires.
                unsafe { sim.ioctl(T::REQUEST, arg as *mut T as *mut c_void) }
                    .map_err(|errno| KernelError::from_errno(T::NAME, errno))
            }
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

    /// `DRM_IOCTL_I915_GEM_MMAP_OFFSET` (write-back: Gen9 has an LLC) followed by mmap of
    /// `size` bytes at the returned fake offset.
    pub fn gem_mmap(&self, handle: u32, size: u64) -> Result<Mapping, KernelError> {
        let mut mo = uapi::drm_i915_gem_mmap_offset {
            handle,
            flags: uapi::I915_MMAP_OFFSET_WB,
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
        let mut q = uapi::drm_i915_query {
            num_items: 1,
            flags: 0,
            items_ptr: &mut item as *mut _ as u64,
        };
        self.ioctl(&mut q)?;
        if item.length < 0 {
            return Err(KernelError::from_errno(
                "DRM_IOCTL_I915_QUERY",
                -item.length,
            ));
        }
        let mut data = vec![0u8; item.length as usize];
        item.data_ptr = data.as_mut_ptr() as u64;
        let mut q = uapi::drm_i915_query {
            num_items: 1,
            flags: 0,
            items_ptr: &mut item as *mut _ as u64,
        };
        self.ioctl(&mut q)?;
        if item.length < 0 {
            return Err(KernelError::from_errno(
                "DRM_IOCTL_I915_QUERY",
                -item.length,
            ));
        }
        data.truncate(item.length as usize);
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

    /// Copies `out.len()` bytes from `offset`. Panics if the range is outside the mapping.
    pub fn read(&self, offset: usize, out: &mut [u8]) {
        let end = offset.checked_add(out.len()).expect("range overflow");
        assert!(
            end <= self.len,
            "read {offset}..{end} outside a mapping of {} bytes",
            self.len
        );
        // SAFETY: `offset..end` lies inside the live mapping (checked above), and `out` is a
        // distinct Rust buffer.
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
        let end = offset.checked_add(data.len()).expect("range overflow");
        assert!(
            end <= self.len,
            "write {offset}..{end} outside a mapping of {} bytes",
            self.len
        );
        // SAFETY: `offset..end` lies inside the live, writable mapping (checked above), and
        // `data` is a distinct Rust buffer.
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
        let dev = DrmDevice::open_sim(info).unwrap();
        assert_eq!(dev.missing_kernel_requirements(), Vec::<&str>::new());
        assert_eq!(dev.get_cap(uapi::DRM_CAP_SYNCOBJ_TIMELINE).unwrap(), 1);
        // An unknown capability is EINVAL, as on a render node.
        let err = dev.get_cap(0x7fff).unwrap_err();
        assert_eq!(err.errno(), Some(libc::EINVAL));
        // The probe context is destroyed again.
        assert_eq!(dev.sim().unwrap().counts().contexts, 0);
    }

    #[test]
    fn an_older_kernel_lacks_timelines_and_mmap_offset() {
        // A kernel before timeline syncobjs and GEM_MMAP_OFFSET (Linux 5.4): it answers
        // EINVAL for the newer parameter and capability, version 3 of the GTT mmap ABI.
        let old = |probe: Probe| match probe {
            Probe::Param(uapi::I915_PARAM_HAS_EXEC_TIMELINE_FENCES, _) => None,
            Probe::Param(uapi::I915_PARAM_MMAP_GTT_VERSION, _) => Some(3),
            Probe::Param(..) => Some(1),
            Probe::Cap(uapi::DRM_CAP_SYNCOBJ_TIMELINE) => None,
            Probe::Cap(_) => Some(1),
            Probe::GttSize(_) => Some(1 << 48),
        };
        assert_eq!(
            missing_kernel_requirements(old),
            [
                "DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES",
                "DRM_IOCTL_I915_GEM_MMAP_OFFSET (I915_PARAM_MMAP_GTT_VERSION >= 4)",
                "DRM_CAP_SYNCOBJ_TIMELINE",
            ]
        );
        // Aliasing PPGTT (32-bit) cannot hold the driver's heaps.
        let small_vm = |probe: Probe| match probe {
            Probe::GttSize(_) => Some(1 << 32),
            _ => Some(4),
        };
        assert_eq!(missing_kernel_requirements(small_vm), ["48-bit full PPGTT"]);
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
