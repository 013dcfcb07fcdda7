//! Access to "user" memory named by addresses inside ioctl structs (`buffers_ptr`, `handles`,
//! ...), the simulated kernel's `copy_from_user`/`copy_to_user`.
//!
//! The copies go through `process_vm_readv`/`process_vm_writev` on our own process, so a bad
//! address gives `EFAULT` as from the real kernel instead of a crash. Where those system calls
//! are unavailable (seccomp, ENOSYS) the copies fall back to plain memory copies, and then the
//! addresses must be valid, as for any pointer handed to a library.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::uapi;

/// Types for which every bit pattern is a valid value (plain integers and `repr(C)` structs
/// of them), so they can be filled from raw user bytes.
///
/// # Safety
/// Implementors must be `repr(C)` (or primitive) with no padding-sensitive invariants, no
/// pointers, references or enums.
pub(crate) unsafe trait Pod: Copy + Default {}

macro_rules! pod {
    ($($t:ty),* $(,)?) => { $(
        // SAFETY: a primitive integer or a repr(C) struct of integers.
        unsafe impl Pod for $t {}
    )* };
}
pod!(
    u8,
    u32,
    u64,
    i32,
    uapi::i915_user_extension,
    uapi::drm_i915_gem_exec_object2,
    uapi::drm_i915_gem_exec_fence,
    uapi::drm_i915_gem_execbuffer_ext_timeline_fences,
    uapi::drm_i915_gem_context_create_ext_setparam,
    uapi::drm_i915_query_item,
    uapi::drm_i915_query_engine_info,
);

const MODE_UNKNOWN: u8 = 0;
const MODE_SYSCALL: u8 = 1;
const MODE_DIRECT: u8 = 2;
static MODE: AtomicU8 = AtomicU8::new(MODE_UNKNOWN);

/// Copies `len` bytes between our buffer `local` and the user address `remote`.
fn copy(local: *mut u8, remote: u64, len: usize, to_user: bool) -> Result<(), i32> {
    if len == 0 {
        return Ok(());
    }
    if remote == 0 || remote.checked_add(len as u64).is_none() {
        return Err(libc::EFAULT);
    }
    if MODE.load(Ordering::Relaxed) != MODE_DIRECT {
        let liov = libc::iovec {
            iov_base: local as *mut c_void,
            iov_len: len,
        };
        let riov = libc::iovec {
            iov_base: remote as usize as *mut c_void,
            iov_len: len,
        };
        // SAFETY: `liov` describes `len` bytes of a live buffer owned by the caller; the
        // remote side is checked by the kernel, which returns EFAULT for unmapped memory.
        let n = unsafe {
            if to_user {
                libc::process_vm_writev(libc::getpid(), &liov, 1, &riov, 1, 0)
            } else {
                libc::process_vm_readv(libc::getpid(), &liov, 1, &riov, 1, 0)
            }
        };
        if n == len as isize {
            MODE.store(MODE_SYSCALL, Ordering::Relaxed);
            return Ok(());
        }
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if n >= 0 || errno == libc::EFAULT {
            return Err(libc::EFAULT);
        }
        if errno != libc::ENOSYS && errno != libc::EPERM {
            return Err(errno);
        }
        log::debug!("process_vm_readv unavailable (errno {errno}); simulated kernel copies user memory directly");
        MODE.store(MODE_DIRECT, Ordering::Relaxed);
    }
    // SAFETY: fallback when the checked copy is unavailable: the caller of the ioctl promised
    // valid user addresses (documented on `SimKernel::ioctl`); `local` is our own buffer.
    unsafe {
        if to_user {
            std::ptr::copy_nonoverlapping(local as *const u8, remote as usize as *mut u8, len);
        } else {
            std::ptr::copy_nonoverlapping(remote as usize as *const u8, local, len);
        }
    }
    Ok(())
}

/// Largest array the simulated kernel copies in from user memory at once (bytes).
pub(crate) const MAX_USER_ARRAY: usize = 64 << 20;

/// Reads `count` values of `T` from the user address `addr` (ENOMEM past [`MAX_USER_ARRAY`]).
pub(crate) fn read_array<T: Pod>(addr: u64, count: usize) -> Result<Vec<T>, i32> {
    let len = count
        .checked_mul(std::mem::size_of::<T>())
        .ok_or(libc::EINVAL)?;
    // The kernel's kvmalloc of a user-sized array fails for absurd sizes; the simulation
    // draws the line at MAX_USER_ARRAY rather than try to allocate gigabytes (found by
    // scripts/soak's ioctl fuzzer: a random count made the simulated kernel abort).
    if len > MAX_USER_ARRAY {
        return Err(libc::ENOMEM);
    }
    let mut out = vec![T::default(); count];
    copy(out.as_mut_ptr() as *mut u8, addr, len, false)?;
    Ok(out)
}

/// Reads one `T` from the user address `addr`.
pub(crate) fn read<T: Pod>(addr: u64) -> Result<T, i32> {
    let mut out = T::default();
    copy(
        &mut out as *mut T as *mut u8,
        addr,
        std::mem::size_of::<T>(),
        false,
    )?;
    Ok(out)
}

/// Writes `values` to the user address `addr`.
pub(crate) fn write_array<T: Pod>(addr: u64, values: &[T]) -> Result<(), i32> {
    let mut copy_buf = values.to_vec();
    copy(
        copy_buf.as_mut_ptr() as *mut u8,
        addr,
        std::mem::size_of_val(values),
        true,
    )
}

/// Writes one `T` to the user address `addr`.
pub(crate) fn write<T: Pod>(addr: u64, value: T) -> Result<(), i32> {
    write_array(addr, std::slice::from_ref(&value))
}
