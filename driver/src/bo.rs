//! GPU virtual addresses and the driver's own GEM objects (batches, state, kernels, scratch).
//!
//! Every object is softpinned: the driver picks its address from a [`VaAllocator`] and tells
//! the kernel with EXEC_OBJECT_PINNED, so batches can hold final addresses (no relocations).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use kernel_iface::{DrmDevice, Mapping};

use crate::error::{DriverError, Result};

/// 4 KB pages.
pub const PAGE: u64 = 4096;

/// Address ranges: scratch below 4 GB, general objects, then a 4 GB instruction heap (kernel
/// start pointers are 32-bit offsets from Instruction Base).
///
/// Scratch (spill space) must lie in the low 4 GB: a thread finds its scratch through R0.5
/// bits 31:10 (MEDIA_VFE_STATE's base plus FFTID times the per-thread size), relative to
/// General State Base, which is 0; a scratch object above 4 GB would be addressed truncated.
/// The first megabyte stays unused so no object sits at address 0.
pub const SCRATCH_BASE: u64 = 0x0000_0000_0010_0000;
pub const SCRATCH_END: u64 = 0x0000_0001_0000_0000;
pub const GENERAL_BASE: u64 = 0x0000_0001_0000_0000;
pub const GENERAL_END: u64 = 0x0000_7000_0000_0000;
pub const INSTRUCTION_BASE: u64 = 0x0000_7000_0000_0000;
pub const INSTRUCTION_END: u64 = INSTRUCTION_BASE + (1 << 32);

/// First-fit allocator of page-aligned address ranges with coalescing frees.
#[derive(Debug)]
pub struct VaRange {
    /// Free ranges: start -> size.
    free: BTreeMap<u64, u64>,
}

impl VaRange {
    pub fn new(start: u64, end: u64) -> VaRange {
        let mut free = BTreeMap::new();
        free.insert(start, end - start);
        VaRange { free }
    }

    pub fn alloc(&mut self, size: u64) -> Option<u64> {
        let size = size.max(1).div_ceil(PAGE) * PAGE;
        let (&start, &len) = self.free.iter().find(|(_, &len)| len >= size)?;
        self.free.remove(&start);
        if len > size {
            self.free.insert(start + size, len - size);
        }
        Some(start)
    }

    pub fn free(&mut self, start: u64, size: u64) {
        let mut start = start;
        let mut size = size.max(1).div_ceil(PAGE) * PAGE;
        if let Some((&next, &nlen)) = self.free.range(start..).next() {
            if start + size == next {
                self.free.remove(&next);
                size += nlen;
            }
        }
        if let Some((&prev, &plen)) = self.free.range(..start).next_back() {
            if prev + plen == start {
                self.free.remove(&prev);
                start = prev;
                size += plen;
            }
        }
        self.free.insert(start, size);
    }
}

/// Which heap an object lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heap {
    General,
    Instruction,
    /// Per-thread scratch space (below 4 GB, see [`SCRATCH_BASE`]).
    Scratch,
}

/// The device's address space.
#[derive(Debug)]
pub struct VaAllocator {
    general: Mutex<VaRange>,
    instruction: Mutex<VaRange>,
    scratch: Mutex<VaRange>,
}

impl Default for VaAllocator {
    fn default() -> Self {
        VaAllocator {
            general: Mutex::new(VaRange::new(GENERAL_BASE, GENERAL_END)),
            instruction: Mutex::new(VaRange::new(INSTRUCTION_BASE, INSTRUCTION_END)),
            scratch: Mutex::new(VaRange::new(SCRATCH_BASE, SCRATCH_END)),
        }
    }
}

impl VaAllocator {
    fn range(&self, heap: Heap) -> std::sync::MutexGuard<'_, VaRange> {
        match heap {
            Heap::General => &self.general,
            Heap::Instruction => &self.instruction,
            Heap::Scratch => &self.scratch,
        }
        .lock()
        .unwrap_or_else(|e| e.into_inner())
    }

    pub fn alloc(&self, heap: Heap, size: u64) -> Result<u64> {
        self.range(heap)
            .alloc(size)
            .ok_or_else(|| DriverError::OutOfDeviceMemory(format!("no {size}-byte GPU VA range")))
    }

    pub fn free(&self, heap: Heap, va: u64, size: u64) {
        self.range(heap).free(va, size);
    }
}

/// A driver-owned GEM object at a fixed GPU address, mapped for the CPU.
pub struct GemBo {
    // Unmapped before the object is closed.
    map: Mapping,
    drm: Arc<DrmDevice>,
    va_alloc: Arc<VaAllocator>,
    heap: Heap,
    pub handle: u32,
    pub va: u64,
    pub size: u64,
}

impl GemBo {
    pub fn new(
        drm: &Arc<DrmDevice>,
        va_alloc: &Arc<VaAllocator>,
        heap: Heap,
        size: u64,
    ) -> Result<GemBo> {
        let size = size.max(1).div_ceil(PAGE) * PAGE;
        let handle = drm.gem_create(size)?;
        let map = match drm.gem_mmap(handle, size) {
            Ok(m) => m,
            Err(e) => {
                let _ = drm.gem_close(handle);
                return Err(e.into());
            }
        };
        let va = match va_alloc.alloc(heap, size) {
            Ok(v) => v,
            Err(e) => {
                drop(map);
                let _ = drm.gem_close(handle);
                return Err(e);
            }
        };
        Ok(GemBo {
            map,
            drm: drm.clone(),
            va_alloc: va_alloc.clone(),
            heap,
            handle,
            va,
            size,
        })
    }

    /// A new object holding `data`.
    pub fn with_data(
        drm: &Arc<DrmDevice>,
        va_alloc: &Arc<VaAllocator>,
        heap: Heap,
        data: &[u8],
    ) -> Result<GemBo> {
        let bo = GemBo::new(drm, va_alloc, heap, data.len() as u64)?;
        bo.map.write(0, data);
        Ok(bo)
    }

    pub fn write(&self, offset: usize, data: &[u8]) {
        self.map.write(offset, data);
    }

    pub fn read(&self, offset: usize, out: &mut [u8]) {
        self.map.read(offset, out);
    }
}

impl Drop for GemBo {
    fn drop(&mut self) {
        if let Err(e) = self.drm.gem_close(self.handle) {
            log::error!("GEM_CLOSE of handle {}: {e}", self.handle);
        }
        self.va_alloc.free(self.heap, self.va, self.size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn va_first_fit_reuses_and_coalesces() {
        let mut r = VaRange::new(0x10000, 0x20000);
        let a = r.alloc(100).unwrap();
        let b = r.alloc(PAGE + 1).unwrap();
        assert_eq!((a, b), (0x10000, 0x11000));
        let c = r.alloc(PAGE).unwrap();
        assert_eq!(c, 0x13000);
        r.free(b, 2 * PAGE);
        r.free(a, PAGE);
        // a and b coalesced: a 3-page request fits at the start again.
        assert_eq!(r.alloc(3 * PAGE), Some(0x10000));
        assert_eq!(r.alloc(0x100000), None);
    }

    #[test]
    fn scratch_addresses_fit_the_thread_payload() {
        // R0.5 carries bits 31:10 of a thread's scratch address: the whole scratch heap,
        // including the end of its last object, must stay below 4 GB, and nothing at 0.
        let va = VaAllocator::default();
        let a = va.alloc(Heap::Scratch, 64 << 20).unwrap();
        assert!(a >= SCRATCH_BASE && a + (64 << 20) <= 1 << 32);
        assert!(va.alloc(Heap::General, PAGE).unwrap() >= 1 << 32);
        assert!(va.alloc(Heap::Scratch, SCRATCH_END - SCRATCH_BASE).is_err());
    }
}
