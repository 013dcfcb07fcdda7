//! The kernel interface: i915 uAPI types, real render nodes and the simulated i915.
//!
//! Every ioctl and mmap of the driver goes through [`DrmDevice`]. It has two backends: a real
//! DRM render node (`/dev/dri/renderD*` driven by i915) and [`sim::SimKernel`], an in-process
//! stand-in for the i915 kernel driver that receives the very same `repr(C)` structs.

pub mod device_info;
mod drm_device;
pub mod genxml;
pub mod gpu;
pub mod image;
pub mod sim;
pub mod uapi;

pub use device_info::{
    lookup_pci_id, lookup_platform, parse_device_selection, DeviceInfo, DeviceSelection, Platform,
    DEFAULT_SIM_PCI_ID,
};
pub use drm_device::{
    missing_kernel_requirements, monotonic_ns, thread_cpu_ns, DrmDevice, KernelCaps, Mapping,
    Probe, RenderNode, Requirement, KERNEL_REQUIREMENTS,
};
pub use sim::KernelVersion;

/// Errors of the kernel interface.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// An ioctl failed with an errno that has no more specific variant.
    #[error("{call} failed: {errno_name} ({errno})")]
    Errno {
        call: &'static str,
        errno: i32,
        errno_name: &'static str,
    },
    /// A wait ran out of time (`ETIME`).
    #[error("timed out")]
    Timeout,
    /// The GPU hung or the context was banned (`EIO`).
    #[error("device lost (GPU hang): {0}")]
    DeviceLost(String),
    /// The kernel could not allocate memory (`ENOMEM`).
    #[error("out of memory")]
    OutOfMemory,
    /// `FERRITE_DEVICE` holds something we do not understand.
    #[error("FERRITE_DEVICE={value:?} is not valid: {reason}")]
    InvalidDeviceSelection { value: String, reason: String },
    /// A render node is driven by i915 but its PCI id is not in the device table.
    #[error("PCI id 0x{0:04x} is not in the device table")]
    UnknownDevice(u16),
    /// A render node's kernel lacks interfaces the driver uses (listed).
    #[error("the kernel lacks {0}")]
    KernelTooOld(String),
    /// An image the Gen9 layout cannot describe (size, format or tiling; the message says).
    #[error("image layout: {0}")]
    InvalidImage(String),
    /// Opening or mapping a file failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl KernelError {
    /// Builds the error for an ioctl that failed with `errno`.
    pub fn from_errno(call: &'static str, errno: i32) -> KernelError {
        match errno {
            libc::ETIME => KernelError::Timeout,
            libc::ENOMEM => KernelError::OutOfMemory,
            libc::EIO => KernelError::DeviceLost(format!("{call} failed with EIO")),
            _ => KernelError::Errno {
                call,
                errno,
                errno_name: errno_name(errno),
            },
        }
    }

    /// The errno this error stands for, if it came from (or maps to) one.
    pub fn errno(&self) -> Option<i32> {
        match self {
            KernelError::Errno { errno, .. } => Some(*errno),
            KernelError::Timeout => Some(libc::ETIME),
            KernelError::DeviceLost(_) => Some(libc::EIO),
            KernelError::OutOfMemory => Some(libc::ENOMEM),
            KernelError::Io { source, .. } => source.raw_os_error(),
            KernelError::InvalidDeviceSelection { .. }
            | KernelError::UnknownDevice(_)
            | KernelError::KernelTooOld(_)
            | KernelError::InvalidImage(_) => None,
        }
    }
}

/// The symbolic name of the errno values the DRM uAPI uses.
pub fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::ENOSPC => "ENOSPC",
        libc::ERANGE => "ERANGE",
        libc::ENOSYS => "ENOSYS",
        libc::ETIME => "ETIME",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENOTTY => "ENOTTY",
        libc::EDEADLK => "EDEADLK",
        libc::ECANCELED => "ECANCELED",
        _ => "errno",
    }
}

/// The `FERRITE_DEBUG` switches the simulated device reads (name, one-line help). The driver's
/// registry lists these beside its own and the compiler's, so `FERRITE_DEBUG=help` shows all.
pub const DEBUG_FLAGS: &[(&str, &str)] = &[
    (
        "simtrace",
        "simulated GPU: print each executed EU instruction (bounded)",
    ),
    (
        "simstrict",
        "simulated GPU: an access no buffer object covers is a fault (GPU hang)",
    ),
    (
        "batch",
        "simulated GPU: decode every submitted batch (the driver also dumps recorded batches)",
    ),
    (
        "simstats",
        "simulated GPU: log its work and speed (lane-instructions per second) when it goes away",
    ),
];

/// Whether `FERRITE_DEBUG` (comma/space/colon separated) names `flag`, one of [`DEBUG_FLAGS`].
pub fn debug_flag(flag: &str) -> bool {
    debug_assert!(
        DEBUG_FLAGS.iter().any(|(n, _)| *n == flag),
        "{flag} not in DEBUG_FLAGS"
    );
    std::env::var("FERRITE_DEBUG")
        .map(|v| v.split([',', ' ', ':']).any(|f| f == flag))
        .unwrap_or(false)
}
