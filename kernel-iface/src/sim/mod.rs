//! The simulated i915: an in-process kernel behind the same ioctl structs.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::device_info::DeviceInfo;

/// The memory of one simulated buffer object.
pub struct BoMemory {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: plain anonymous memory shared like GPU memory; see `Mapping`.
unsafe impl Send for BoMemory {}
// SAFETY: as above.
unsafe impl Sync for BoMemory {}

impl BoMemory {
    /// Start of the object's memory.
    pub fn base(&self) -> NonNull<u8> {
        self.ptr
    }
    /// Size in bytes (page-aligned).
    pub fn len(&self) -> usize {
        self.len
    }
    /// Never empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The simulated kernel.
pub struct SimKernel {
    info: &'static DeviceInfo,
}

impl SimKernel {
    /// A fresh simulated i915 answering as `info`.
    pub fn new(info: &'static DeviceInfo) -> SimKernel {
        SimKernel { info }
    }

    /// The device this kernel answers as.
    pub fn info(&self) -> &'static DeviceInfo {
        self.info
    }

    /// Handles one ioctl; returns the errno on failure.
    ///
    /// # Safety
    /// `arg` must point to a live, writable value of the argument type of `request`.
    pub unsafe fn ioctl(&self, request: u64, arg: *mut c_void) -> Result<(), i32> {
        let _ = (request, arg);
        log::error!("simulated i915: ioctls not implemented yet");
        Err(libc::ENODEV)
    }

    /// Looks up the object behind a fake mmap offset.
    pub fn mmap(&self, offset: u64, len: usize) -> Result<Arc<BoMemory>, i32> {
        let _ = (offset, len);
        Err(libc::ENODEV)
    }
}
