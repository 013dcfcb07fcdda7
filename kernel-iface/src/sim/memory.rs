//! The backing memory of simulated buffer objects.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The pages of one simulated buffer object: zero-filled, page-aligned anonymous memory.
///
/// Shared by the object's handle, every CPU mapping of it and jobs on the simulated GPU; it
/// is freed when the last of them lets go (as the kernel keeps pages of a mapped object alive
/// after GEM_CLOSE). Access is by copies with bounds checks; like real GPU memory, ordering
/// CPU and GPU accesses is the user's job (fences).
pub struct BoMemory {
    ptr: NonNull<u8>,
    len: usize,
    live: Arc<AtomicUsize>,
}

// SAFETY: plain anonymous memory with no thread affinity; see the type's documentation.
unsafe impl Send for BoMemory {}
// SAFETY: `&BoMemory` only allows bounds-checked copies in and out of the pages.
unsafe impl Sync for BoMemory {}

impl std::fmt::Debug for BoMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BoMemory({:p}, {} bytes)", self.ptr, self.len)
    }
}

pub(crate) const PAGE_SIZE: u64 = 4096;

impl BoMemory {
    /// Maps `len` (page-aligned, non-zero) bytes; `None` if the system refuses.
    pub(crate) fn new(len: usize, live: Arc<AtomicUsize>) -> Option<BoMemory> {
        debug_assert!(len > 0 && (len as u64).is_multiple_of(PAGE_SIZE));
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing; it
        // aliases nothing and is unmapped only in `Drop`.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        live.fetch_add(1, Ordering::Relaxed);
        Some(BoMemory {
            ptr: NonNull::new(ptr as *mut u8)?,
            len,
            live,
        })
    }

    /// Start of the object's memory.
    pub fn base(&self) -> NonNull<u8> {
        self.ptr
    }

    /// Size in bytes (page-aligned).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: objects have at least one page.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn check(&self, offset: u64, len: usize) -> Option<usize> {
        let end = offset.checked_add(len as u64)?;
        (end <= self.len as u64).then_some(offset as usize)
    }

    /// Copies `out.len()` bytes from `offset`; `false` (and nothing copied) if out of range.
    pub fn read(&self, offset: u64, out: &mut [u8]) -> bool {
        let Some(off) = self.check(offset, out.len()) else {
            return false;
        };
        // SAFETY: `off..off + out.len()` lies inside the live mapping (checked), and `out` is a
        // distinct buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ptr.as_ptr().add(off), out.as_mut_ptr(), out.len())
        };
        true
    }

    /// Copies `data` to `offset`; `false` (and nothing written) if out of range.
    pub fn write(&self, offset: u64, data: &[u8]) -> bool {
        let Some(off) = self.check(offset, data.len()) else {
            return false;
        };
        // SAFETY: `off..off + data.len()` lies inside the live, writable mapping (checked), and
        // `data` is a distinct buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.as_ptr().add(off), data.len())
        };
        true
    }

    /// Reads a little-endian dword.
    pub fn read_u32(&self, offset: u64) -> Option<u32> {
        let mut b = [0u8; 4];
        self.read(offset, &mut b).then(|| u32::from_le_bytes(b))
    }

    /// Writes a little-endian dword.
    pub fn write_u32(&self, offset: u64, value: u32) -> bool {
        self.write(offset, &value.to_le_bytes())
    }

    /// Reads a little-endian qword.
    pub fn read_u64(&self, offset: u64) -> Option<u64> {
        let mut b = [0u8; 8];
        self.read(offset, &mut b).then(|| u64::from_le_bytes(b))
    }

    /// Writes a little-endian qword.
    pub fn write_u64(&self, offset: u64, value: u64) -> bool {
        self.write(offset, &value.to_le_bytes())
    }
}

impl Drop for BoMemory {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned; this is the only unmap.
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut c_void, self.len) };
        self.live.fetch_sub(1, Ordering::Relaxed);
    }
}
