//! The GPU's view of memory during one job: GPU virtual address -> buffer object.
//!
//! i915 gives every context a full PPGTT: addresses no object is bound at are mapped to a
//! scratch page, so a stray read returns whatever the scratch page holds (zeros until someone
//! writes there) and a stray write lands in it; neither faults. [`GpuMemory`] does the same,
//! unless `FERRITE_DEBUG=simstrict`, which turns such an access into a reported fault (and
//! so a GPU hang with the address in the reason).
//!
//! Atomic read-modify-write operations are serialised with a striped lock keyed by the dword
//! address, so atomics from EU threads running on different host threads are atomic with
//! respect to each other (as the data port's atomics are with respect to other atomics).

use std::sync::{Arc, Mutex, OnceLock};

use crate::sim::{BoMemory, ExecObject};

/// Size of the PPGTT scratch page.
pub const SCRATCH_PAGE_SIZE: usize = 4096;

/// An access the simulated PPGTT refused (only with `simstrict`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("GPU page fault: {kind} of {len} bytes at 0x{address:x}, which no object covers")]
pub struct MemFault {
    pub address: u64,
    pub len: usize,
    pub kind: &'static str,
}

/// `FERRITE_DEBUG` contains `simstrict` (read once per process).
pub fn simstrict_from_env() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| debug_flag("simstrict"))
}

use crate::debug_flag;

#[derive(Debug, Clone)]
struct Range {
    start: u64,
    end: u64,
    memory: Arc<BoMemory>,
}

/// A bound object's backed address range `[start, end)`, as [`GpuMemory::span_at`] gives it.
#[derive(Debug, Clone, Copy)]
pub struct Span<'m> {
    pub start: u64,
    pub end: u64,
    pub memory: &'m BoMemory,
}

impl Span<'_> {
    /// Whether `[address, address + len)` lies wholly inside the span: such an access is one
    /// copy from or to the object, exactly what [`GpuMemory::read`]/[`GpuMemory::write`] do
    /// for it after their look-up.
    pub fn covers(&self, address: u64, len: usize) -> bool {
        address >= self.start
            && address
                .checked_add(len as u64)
                .is_some_and(|end| end <= self.end)
    }

    /// Copies `out.len()` bytes at `address` (which [`Span::covers`]).
    pub fn read(&self, address: u64, out: &mut [u8]) {
        let ok = self.memory.read(address - self.start, out);
        debug_assert!(ok, "span read outside its object");
    }

    /// Copies `data` to `address` (which [`Span::covers`]).
    pub fn write(&self, address: u64, data: &[u8]) {
        let ok = self.memory.write(address - self.start, data);
        debug_assert!(ok, "span write outside its object");
    }
}

const STRIPES: usize = 64;

/// Memory of one job, shared by the command streamer and every EU thread.
pub struct GpuMemory {
    /// Sorted by `start`, non-overlapping (the kernel rejects overlapping softpins).
    ranges: Vec<Range>,
    scratch: Arc<Mutex<Vec<u8>>>,
    strict: bool,
    stripes: [Mutex<()>; STRIPES],
}

impl std::fmt::Debug for GpuMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GpuMemory({} objects, strict {})",
            self.ranges.len(),
            self.strict
        )
    }
}

/// Little-endian accessors of one width each: `read_uN`/`write_uN` over `read`/`write`, and
/// `atomic_uN`, which replaces the value at `address` by `op(old)` (`None`: no write) and
/// returns the old value, the read-modify-write under the lock of the qword's stripe.
macro_rules! le_access {
    ($($read:ident, $write:ident, $atomic:ident: $t:ty),*) => {$(
        pub fn $read(&self, address: u64) -> Result<$t, MemFault> {
            let mut b = [0u8; std::mem::size_of::<$t>()];
            self.read(address, &mut b)?;
            Ok(<$t>::from_le_bytes(b))
        }

        pub fn $write(&self, address: u64, v: $t) -> Result<(), MemFault> {
            self.write(address, &v.to_le_bytes())
        }

        pub fn $atomic(
            &self,
            address: u64,
            op: impl FnOnce($t) -> Option<$t>,
        ) -> Result<$t, MemFault> {
            let _g = self.stripe(address & !7);
            let old = self.$read(address)?;
            if let Some(new) = op(old) {
                self.$write(address, new)?;
            }
            Ok(old)
        }
    )*};
}

impl GpuMemory {
    /// The address space of a job: `objects` at their bound addresses, everything else the
    /// context's scratch page.
    pub fn new(objects: &[ExecObject], scratch: Arc<Mutex<Vec<u8>>>, strict: bool) -> GpuMemory {
        let mut ranges: Vec<Range> = objects
            .iter()
            .map(|o| Range {
                start: o.address,
                // Only the pages that exist are backed; padding beyond them reads scratch.
                end: o.address + o.size.min(o.memory.len() as u64),
                memory: o.memory.clone(),
            })
            .collect();
        ranges.sort_by_key(|r| r.start);
        GpuMemory {
            ranges,
            scratch,
            strict,
            stripes: [const { Mutex::new(()) }; STRIPES],
        }
    }

    /// A fresh scratch page.
    pub fn new_scratch_page() -> Arc<Mutex<Vec<u8>>> {
        Arc::new(Mutex::new(vec![0u8; SCRATCH_PAGE_SIZE]))
    }

    fn find(&self, address: u64) -> Option<&Range> {
        let i = self.ranges.partition_point(|r| r.start <= address);
        let r = self.ranges.get(i.checked_sub(1)?)?;
        (address < r.end).then_some(r)
    }

    /// Whether `address` lies inside a bound object.
    pub fn is_backed(&self, address: u64) -> bool {
        self.find(address).is_some()
    }

    /// The object bound at `address` and the offset in it (strict: no scratch page).
    pub fn object_at(&self, address: u64) -> Option<(&Arc<BoMemory>, u64)> {
        self.find(address).map(|r| (&r.memory, address - r.start))
    }

    /// The bound object whose range holds `address`, for callers that keep the last object
    /// they touched (the data port does, per EU thread run).
    pub fn span_at(&self, address: u64) -> Option<Span<'_>> {
        self.find(address).map(|r| Span {
            start: r.start,
            end: r.end,
            memory: &r.memory,
        })
    }

    /// Splits `[address, address + len)` into pieces that each lie in one object or in
    /// unbacked space, calling `f(address, piece_offset, piece_len, object)`.
    fn pieces(
        &self,
        address: u64,
        len: usize,
        mut f: impl FnMut(u64, usize, usize, Option<(&BoMemory, u64)>),
    ) {
        let mut done = 0usize;
        while done < len {
            let a = address.wrapping_add(done as u64);
            let rest = len - done;
            match self.find(a) {
                Some(r) => {
                    let n = rest.min((r.end - a) as usize);
                    f(a, done, n, Some((&r.memory, a - r.start)));
                    done += n;
                }
                None => {
                    let next = self.ranges.iter().map(|r| r.start).find(|&s| s > a);
                    let to_page = SCRATCH_PAGE_SIZE - (a as usize % SCRATCH_PAGE_SIZE);
                    let mut n = rest.min(to_page);
                    if let Some(s) = next {
                        n = n.min((s - a) as usize);
                    }
                    f(a, done, n, None);
                    done += n;
                }
            }
        }
    }

    /// Reads `out.len()` bytes at `address`.
    pub fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemFault> {
        let mut fault = None;
        let len = out.len();
        self.pieces(address, len, |a, off, n, obj| match obj {
            Some((m, o)) => {
                m.read(o, &mut out[off..off + n]);
            }
            None => {
                if self.strict {
                    fault.get_or_insert(MemFault {
                        address: a,
                        len: n,
                        kind: "read",
                    });
                    out[off..off + n].fill(0);
                } else {
                    let page = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
                    let p = a as usize % SCRATCH_PAGE_SIZE;
                    out[off..off + n].copy_from_slice(&page[p..p + n]);
                }
            }
        });
        fault.map_or(Ok(()), Err)
    }

    /// Writes `data` at `address`.
    pub fn write(&self, address: u64, data: &[u8]) -> Result<(), MemFault> {
        let mut fault = None;
        self.pieces(address, data.len(), |a, off, n, obj| match obj {
            Some((m, o)) => {
                m.write(o, &data[off..off + n]);
            }
            None => {
                if self.strict {
                    fault.get_or_insert(MemFault {
                        address: a,
                        len: n,
                        kind: "write",
                    });
                } else {
                    let mut page = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
                    let p = a as usize % SCRATCH_PAGE_SIZE;
                    page[p..p + n].copy_from_slice(&data[off..off + n]);
                }
            }
        });
        fault.map_or(Ok(()), Err)
    }

    le_access!(read_u32, write_u32, atomic_u32: u32, read_u64, write_u64, atomic_u64: u64);

    fn stripe(&self, address: u64) -> std::sync::MutexGuard<'_, ()> {
        let i = ((address >> 2) as usize ^ (address >> 12) as usize) % STRIPES;
        self.stripes[i].lock().unwrap_or_else(|e| e.into_inner())
    }
}
