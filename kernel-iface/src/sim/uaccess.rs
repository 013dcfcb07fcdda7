//! Access to "user" memory named by addresses inside ioctl structs (`buffers_ptr`, `handles`,
//! ...), the simulated kernel's `copy_from_user`/`copy_to_user`.
//!
//! The copies go through `process_vm_readv`/`process_vm_writev` on our own process, so a bad
//! address gives `EFAULT` as from the real kernel instead of a crash. Where those system calls
//! are unavailable (seccomp, ENOSYS) the copies fall back to plain memory copies, and then the
//! addresses must be valid, as for any pointer handed to a library.
//!
//! Those system calls cost about as much as the rest of a submission (they pin the pages they
//! copy): a submission reads its object and fence arrays and a fence wait its handles, each a
//! system call. So the pages a checked copy has read (or written) are remembered in a small
//! table, and a later copy that lies in remembered pages only is a plain copy. A remembered
//! page is one our process had mapped with that access; the checked copy still catches every
//! address the program has never handed in successfully (a wild or null-page pointer, a fuzzed
//! address). What it no longer catches is a pointer into a page that was valid once and has
//! been unmapped since, which a correct caller cannot pass: its arrays are live for the call.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

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

/// Pages per table of remembered pages (direct-mapped by page number).
const REMEMBERED: usize = 256;
/// Copies spanning more pages than this are always checked.
const REMEMBERED_SPAN: u64 = 4;
const PAGE_SHIFT: u32 = 12;
/// Page numbers + 1 (0: empty) a checked copy read from, and wrote to.
static READ_PAGES: [AtomicU64; REMEMBERED] = [const { AtomicU64::new(0) }; REMEMBERED];
static WRITE_PAGES: [AtomicU64; REMEMBERED] = [const { AtomicU64::new(0) }; REMEMBERED];

/// The page numbers `len` bytes at `remote` touch, when they are few enough to remember.
fn pages(remote: u64, len: usize) -> Option<std::ops::RangeInclusive<u64>> {
    let (first, last) = (
        remote >> PAGE_SHIFT,
        (remote + len as u64 - 1) >> PAGE_SHIFT,
    );
    (last - first < REMEMBERED_SPAN).then_some(first..=last)
}

fn table(to_user: bool) -> &'static [AtomicU64; REMEMBERED] {
    if to_user {
        &WRITE_PAGES
    } else {
        &READ_PAGES
    }
}

/// Whether every page of the copy was read (or, for a write, written) by a checked copy before.
fn remembered(remote: u64, len: usize, to_user: bool) -> bool {
    let t = table(to_user);
    pages(remote, len)
        .is_some_and(|mut r| r.all(|p| t[p as usize % REMEMBERED].load(Ordering::Relaxed) == p + 1))
}

/// Remembers the pages of a checked copy that succeeded (a written page is readable too).
fn remember(remote: u64, len: usize, to_user: bool) {
    if let Some(r) = pages(remote, len) {
        for p in r {
            table(false)[p as usize % REMEMBERED].store(p + 1, Ordering::Relaxed);
            if to_user {
                table(true)[p as usize % REMEMBERED].store(p + 1, Ordering::Relaxed);
            }
        }
    }
}

/// Copies `len` bytes between our buffer `local` and the user address `remote`.
fn copy(local: *mut u8, remote: u64, len: usize, to_user: bool) -> Result<(), i32> {
    if len == 0 {
        return Ok(());
    }
    if remote == 0 || remote.checked_add(len as u64).is_none() {
        return Err(libc::EFAULT);
    }
    if MODE.load(Ordering::Relaxed) != MODE_DIRECT && !remembered(remote, len, to_user) {
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
            remember(remote, len, to_user);
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
    // SAFETY: pages a checked copy reached before (see the module comment), or the fallback
    // when the checked copy is unavailable: the caller of the ioctl promised valid user
    // addresses (documented on `SimKernel::ioctl`); `local` is our own buffer.
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

/// The byte length of `count` values of `T`, refused past [`MAX_USER_ARRAY`].
fn array_len<T: Pod>(count: usize) -> Result<usize, i32> {
    let len = count
        .checked_mul(std::mem::size_of::<T>())
        .ok_or(libc::EINVAL)?;
    // The kernel's kvmalloc of a user-sized array fails for absurd sizes; the simulation
    // draws the line at MAX_USER_ARRAY rather than try to allocate gigabytes (found by
    // scripts/soak's ioctl fuzzer: a random count made the simulated kernel abort).
    if len > MAX_USER_ARRAY {
        return Err(libc::ENOMEM);
    }
    Ok(len)
}

/// Reads `count` values of `T` from the user address `addr` (ENOMEM past [`MAX_USER_ARRAY`]).
pub(crate) fn read_array<T: Pod>(addr: u64, count: usize) -> Result<Vec<T>, i32> {
    let mut out = Vec::new();
    read_array_into(addr, count, &mut out)?;
    Ok(out)
}

/// [`read_array`] into `out` (replacing its contents; no allocation when its capacity
/// suffices, so a caller that keeps the vector reads without allocating).
pub(crate) fn read_array_into<T: Pod>(
    addr: u64,
    count: usize,
    out: &mut Vec<T>,
) -> Result<(), i32> {
    let len = array_len::<T>(count)?;
    out.clear();
    out.resize(count, T::default());
    copy(out.as_mut_ptr() as *mut u8, addr, len, false)
}

/// A user array copied in: on the stack up to `N` values, on the heap beyond.
pub(crate) enum UserArray<T: Pod, const N: usize> {
    Inline([T; N], usize),
    Heap(Vec<T>),
}

impl<T: Pod, const N: usize> std::ops::Deref for UserArray<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            UserArray::Inline(a, n) => &a[..*n],
            UserArray::Heap(v) => v,
        }
    }
}

/// [`read_array`] without an allocation for up to `N` values.
pub(crate) fn read_small<T: Pod, const N: usize>(
    addr: u64,
    count: usize,
) -> Result<UserArray<T, N>, i32> {
    if count > N {
        return read_array(addr, count).map(UserArray::Heap);
    }
    let len = array_len::<T>(count)?;
    let mut a = [T::default(); N];
    copy(a.as_mut_ptr() as *mut u8, addr, len, false)?;
    Ok(UserArray::Inline(a, count))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One page mapped with `prot`, unmapped on drop.
    struct Page(*mut u8);
    impl Page {
        fn new(prot: i32) -> Page {
            // SAFETY: an anonymous private mapping of one page at an address of the kernel's
            // choice; nothing else refers to it.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    prot,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(p, libc::MAP_FAILED);
            Page(p.cast())
        }
        fn addr(&self) -> u64 {
            self.0 as u64
        }
    }
    impl Drop for Page {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, not used after this.
            unsafe { libc::munmap(self.0.cast(), 4096) };
        }
    }

    #[test]
    fn remembered_pages_read_the_same_as_checked_copies() {
        let data: Vec<u32> = (0..64).map(|i| i * 7 + 1).collect();
        let addr = data.as_ptr() as u64;
        let first: Vec<u32> = read_array(addr, 64).unwrap();
        let again: Vec<u32> = read_array(addr, 64).unwrap();
        assert_eq!(first, data);
        assert_eq!(again, data);
    }

    #[test]
    fn a_page_never_handed_in_is_efault_every_time() {
        let v = 7u32;
        assert_eq!(read::<u32>(&v as *const u32 as u64), Ok(7));
        if MODE.load(Ordering::Relaxed) != MODE_SYSCALL {
            return; // no checked copies on this system
        }
        // The page above the null page is never mapped (vm.mmap_min_addr), so no checked copy
        // can have remembered it.
        assert_eq!(read::<u32>(0x1000), Err(libc::EFAULT));
        assert_eq!(read::<u32>(0x1000), Err(libc::EFAULT));
        assert_eq!(write(0x1000, 1u32), Err(libc::EFAULT));
    }

    #[test]
    fn a_page_only_read_is_not_trusted_for_writes() {
        let page = Page::new(libc::PROT_READ);
        assert_eq!(read::<u32>(page.addr()), Ok(0));
        if MODE.load(Ordering::Relaxed) != MODE_SYSCALL {
            return;
        }
        // Remembered for reading; a write to the read-only page still fails as EFAULT.
        assert_eq!(write(page.addr(), 5u32), Err(libc::EFAULT));
        assert_eq!(read::<u32>(page.addr()), Ok(0));
    }
}
