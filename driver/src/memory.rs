//! VkDeviceMemory (GEM buffer objects) and VkBuffer.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, Weak};

use ash::vk;
use ash::vk::Handle;
use kernel_iface::{DrmDevice, KernelError, Mapping};

use crate::debug::{self, Flag};
use crate::device::{dev, Device};
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::physical::memory_types;

/// GEM objects are whole pages.
const PAGE_SIZE: u64 = 4096;
/// Buffer placement alignment: a cache line, so no two buffers share one (the GPU and the CPU
/// would otherwise fight over lines of unrelated buffers) and every minimum offset alignment
/// Ferrite reports (64) is met from the buffer's start.
pub const BUFFER_ALIGNMENT: u64 = 64;

fn align_up(v: u64, a: u64) -> Option<u64> {
    v.checked_add(a - 1).map(|x| x & !(a - 1))
}

pub struct Memory {
    // Field order matters: the mapping is dropped (unmapped) before the object is closed.
    mapping: Mutex<Option<Mapping>>,
    drm: Arc<DrmDevice>,
    pub bo: u32,
    /// The size the application asked for.
    pub size: u64,
    pub type_index: u32,
    /// Where the object is softpinned in the device's address space.
    pub va: u64,
    /// Allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT: shaders may reach it through a
    /// buffer device address without any descriptor naming it, so every submission of the
    /// device lists it (`queue.rs`).
    pub device_address: bool,
    va_alloc: Arc<crate::bo::VaAllocator>,
}

impl Memory {
    fn lock_mapping(&self) -> std::sync::MutexGuard<'_, Option<Mapping>> {
        self.mapping.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Driver-owned memory that no VkDeviceMemory names (the inline uniform blocks of a
    /// descriptor set): `size` bytes in a GEM object of its own, zeroed as GEM objects are.
    pub(crate) fn internal(core: &crate::device::Core, size: u64) -> Result<Arc<Memory>> {
        let bo_size = align_up(size.max(1), PAGE_SIZE)
            .ok_or_else(|| DriverError::OutOfDeviceMemory("size overflow".into()))?;
        let drm = core.adapter.drm.clone();
        let bo = drm.gem_create(bo_size).map_err(|e| match e {
            KernelError::OutOfMemory => {
                DriverError::OutOfDeviceMemory(format!("GEM_CREATE of {bo_size} bytes: {e}"))
            }
            other => DriverError::Kernel(other),
        })?;
        let va = match core.va.alloc(crate::bo::Heap::General, bo_size) {
            Ok(va) => va,
            Err(e) => {
                let _ = drm.gem_close(bo);
                return Err(e);
            }
        };
        Ok(Arc::new(Memory {
            mapping: Mutex::new(None),
            drm,
            bo,
            size,
            type_index: 0,
            va,
            device_address: false,
            va_alloc: core.va.clone(),
        }))
    }

    /// Runs `f` on the mapping of driver-owned memory, mapping it on first use.
    fn with_internal_mapping(&self, f: impl FnOnce(&Mapping)) -> Result<()> {
        let mut mapping = self.lock_mapping();
        if mapping.is_none() {
            let bo_size = align_up(self.size.max(1), PAGE_SIZE).unwrap_or(PAGE_SIZE);
            *mapping = Some(self.drm.gem_mmap(self.bo, bo_size).map_err(|e| {
                DriverError::MemoryMapFailed(format!("GEM handle {}: {e}", self.bo))
            })?);
        }
        if let Some(m) = mapping.as_ref() {
            f(m);
        }
        Ok(())
    }

    /// Copies `data` to byte `offset` of driver-owned memory.
    pub(crate) fn write_bytes(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.check_range(offset, data.len())?;
        self.with_internal_mapping(|m| m.write(offset as usize, data))
    }

    /// Copies `out.len()` bytes from byte `offset` of driver-owned memory.
    pub(crate) fn read_bytes(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        self.check_range(offset, out.len())?;
        self.with_internal_mapping(|m| m.read(offset as usize, out))
    }

    fn check_range(&self, offset: u64, len: usize) -> Result<()> {
        match offset.checked_add(len as u64) {
            Some(end) if end <= self.size => Ok(()),
            _ => Err(DriverError::InvalidArgument(format!(
                "bytes {offset}+{len} outside a {}-byte object",
                self.size
            ))),
        }
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        self.mapping
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if debug::enabled(Flag::Mem) {
            log::info!(
                "free: GEM handle {} ({} bytes, type {})",
                self.bo,
                self.size,
                self.type_index
            );
        }
        if let Err(e) = self.drm.gem_close(self.bo) {
            log::error!("GEM_CLOSE of handle {}: {e}", self.bo);
        }
        let bo_size = align_up(self.size, PAGE_SIZE).unwrap_or(self.size);
        self.va_alloc
            .free(crate::bo::Heap::General, self.va, bo_size);
    }
}

/// Where a buffer or an image lives once bound. The memory may be freed while the resource
/// still exists (it is then unusable), so the link is weak.
#[derive(Clone)]
pub struct Binding {
    pub memory: Weak<Memory>,
    pub offset: u64,
}

/// Where a buffer or an image is bound: empty until vkBind*Memory sets it, once.
#[derive(Default)]
pub struct BindingSlot(Mutex<Option<Binding>>);

impl BindingSlot {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Binding>> {
        // One assignment under the lock: a panic cannot leave it half-written.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Binds the `what` ("buffer" or "image") of requirements `req` to `memory` at `offset`:
    /// the offset must be aligned, the resource must fit in the allocation, and a resource is
    /// bound only once.
    pub fn bind(
        &self,
        device: &Device,
        req: vk::MemoryRequirements,
        memory: vk::DeviceMemory,
        offset: u64,
        what: &str,
    ) -> Result<()> {
        let mem = device.memories.get(memory.as_raw())?;
        if !offset.is_multiple_of(req.alignment) {
            return Err(DriverError::InvalidArgument(format!(
                "{what} memory offset {offset} is not a multiple of {}",
                req.alignment
            )));
        }
        if offset
            .checked_add(req.size)
            .is_none_or(|end| end > mem.size)
        {
            return Err(DriverError::InvalidArgument(format!(
                "{} {what} bytes at offset {offset} exceed a {}-byte allocation",
                req.size, mem.size
            )));
        }
        let mut binding = self.lock();
        if binding.is_some() {
            return Err(DriverError::InvalidArgument(format!(
                "{what} is already bound"
            )));
        }
        *binding = Some(Binding {
            memory: Arc::downgrade(&mem),
            offset,
        });
        Ok(())
    }

    /// The memory and the byte offset in it where the `what` starts.
    pub fn resolve(&self, what: &str) -> Result<(Arc<Memory>, u64)> {
        let binding = self.lock();
        let b = binding.as_ref().ok_or_else(|| {
            DriverError::InvalidArgument(format!("{what} is not bound to memory"))
        })?;
        let mem = b
            .memory
            .upgrade()
            .ok_or_else(|| DriverError::InvalidArgument(format!("{what}'s memory was freed")))?;
        Ok((mem, b.offset))
    }
}

pub struct Buffer {
    pub size: u64,
    #[allow(dead_code)] // kept for validation of descriptor writes against the usage
    pub usage: vk::BufferUsageFlags,
    pub binding: BindingSlot,
}

impl Buffer {
    /// The memory and the byte offset in it where the buffer's data starts.
    pub fn resolve(&self) -> Result<(Arc<Memory>, u64)> {
        self.binding.resolve("buffer")
    }

    /// The memory, the byte offset in it where the buffer's data starts, and the byte count of
    /// a range of the buffer from `offset` (`vk::WHOLE_SIZE`: to the end) as a descriptor or a
    /// view (`what`, in the error) uses it; an offset past the end is an error.
    pub fn resolve_range(
        &self,
        offset: u64,
        range: u64,
        what: &str,
    ) -> Result<(Arc<Memory>, u64, u64)> {
        let (memory, base) = self.resolve()?;
        if offset > self.size {
            return Err(DriverError::InvalidArgument(format!(
                "{what} offset {offset} past a {}-byte buffer",
                self.size
            )));
        }
        let range = if range == vk::WHOLE_SIZE {
            self.size - offset
        } else {
            range
        };
        Ok((memory, base, range))
    }

    pub fn requirements(&self, device: &Device) -> vk::MemoryRequirements {
        buffer_requirements(device.adapter.info, self.size)
    }

    fn bind(&self, device: &Device, memory: vk::DeviceMemory, offset: u64) -> Result<()> {
        let req = self.requirements(device);
        self.binding.bind(device, req, memory, offset, "buffer")
    }
}

fn allocate(device: &Device, info: &vk::MemoryAllocateInfo<'_>) -> Result<u64> {
    let types = memory_types(device.adapter.info);
    if info.memory_type_index as usize >= types.len() {
        return Err(DriverError::InvalidArgument(format!(
            "memory type {} does not exist",
            info.memory_type_index
        )));
    }
    if info.allocation_size == 0 {
        return Err(DriverError::InvalidArgument("allocationSize is 0".into()));
    }
    // VkMemoryAllocateFlagsInfo: DEVICE_ADDRESS makes the memory resident in every
    // submission; DEVICE_MASK is the single device's; capture/replay addresses are not
    // offered (bufferDeviceAddressCaptureReplay is false).
    // SAFETY: the create info's chain is valid per the spec.
    let flags =
        unsafe { ffi::find_in_chain(info.p_next, vk::StructureType::MEMORY_ALLOCATE_FLAGS_INFO) }
            // SAFETY: a structure with this sType is this type.
            .map(|p| unsafe { (*p.cast::<vk::MemoryAllocateFlagsInfo<'_>>()).flags })
            .unwrap_or_default();
    if flags.contains(vk::MemoryAllocateFlags::DEVICE_ADDRESS_CAPTURE_REPLAY) {
        return Err(DriverError::NotImplemented(
            "capture/replay device addresses (bufferDeviceAddressCaptureReplay is false)",
        ));
    }
    let device_address = flags.contains(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
    if info.allocation_size > device.adapter.heap_size {
        return Err(DriverError::OutOfDeviceMemory(format!(
            "{} bytes exceed the {}-byte heap",
            info.allocation_size, device.adapter.heap_size
        )));
    }
    let bo_size = align_up(info.allocation_size, PAGE_SIZE)
        .ok_or_else(|| DriverError::OutOfDeviceMemory("size overflow".into()))?;
    let bo = device
        .adapter
        .drm
        .gem_create(bo_size)
        .map_err(|e| match e {
            KernelError::OutOfMemory => {
                DriverError::OutOfDeviceMemory(format!("GEM_CREATE of {bo_size} bytes: {e}"))
            }
            other => DriverError::Kernel(other),
        })?;
    if debug::enabled(Flag::Mem) {
        log::info!(
            "allocate: {} bytes (type {}) -> GEM handle {bo}",
            info.allocation_size,
            info.memory_type_index
        );
    }
    let va = match device.va.alloc(crate::bo::Heap::General, bo_size) {
        Ok(va) => va,
        Err(e) => {
            let _ = device.adapter.drm.gem_close(bo);
            return Err(e);
        }
    };
    let memory = Memory {
        mapping: Mutex::new(None),
        drm: device.adapter.drm.clone(),
        bo,
        size: info.allocation_size,
        type_index: info.memory_type_index,
        va,
        device_address,
        va_alloc: device.va.clone(),
    };
    Ok(device.memories.insert(memory))
}

pub(crate) unsafe extern "system" fn allocate_memory(
    device: vk::Device,
    p_info: *const vk::MemoryAllocateInfo<'_>,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
    p_memory: *mut vk::DeviceMemory,
) -> vk::Result {
    ffi::result("vkAllocateMemory", || {
        // SAFETY: live device and valid allocate info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pAllocateInfo")?) };
        let id = allocate(d, info)?;
        // SAFETY: valid output pointer per the spec.
        if let Err(e) = unsafe { ffi::write(p_memory, vk::DeviceMemory::from_raw(id), "pMemory") } {
            d.memories.remove(id)?;
            return Err(e);
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn free_memory(
    device: vk::Device,
    memory: vk::DeviceMemory,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    ffi::void("vkFreeMemory", || {
        // SAFETY: a live device per the spec.
        unsafe { dev(device) }?.memories.remove(memory.as_raw())?;
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn map_memory(
    device: vk::Device,
    memory: vk::DeviceMemory,
    offset: u64,
    size: u64,
    _flags: vk::MemoryMapFlags,
    pp_data: *mut *mut c_void,
) -> vk::Result {
    ffi::result("vkMapMemory", || {
        // SAFETY: a live device per the spec.
        let mem = unsafe { dev(device) }?.memories.get(memory.as_raw())?;
        let len = if size == vk::WHOLE_SIZE {
            mem.size.checked_sub(offset)
        } else {
            Some(size)
        };
        match len.and_then(|l| offset.checked_add(l)) {
            Some(end) if end <= mem.size && len != Some(0) => {}
            _ => {
                return Err(DriverError::MemoryMapFailed(format!(
                    "range {offset}+{size} outside a {}-byte allocation",
                    mem.size
                )))
            }
        }
        let mut mapping = mem.lock_mapping();
        if mapping.is_some() {
            return Err(DriverError::MemoryMapFailed(
                "memory is already mapped".into(),
            ));
        }
        let bo_size = align_up(mem.size, PAGE_SIZE).unwrap_or(mem.size);
        let m = mem
            .drm
            .gem_mmap(mem.bo, bo_size)
            .map_err(|e| DriverError::MemoryMapFailed(format!("GEM handle {}: {e}", mem.bo)))?;
        let ptr = m.as_ptr().wrapping_add(offset as usize).cast::<c_void>();
        if debug::enabled(Flag::Mem) {
            log::info!("map: GEM handle {} at {:p} (+{offset})", mem.bo, m.as_ptr());
        }
        *mapping = Some(m);
        // SAFETY: valid output pointer per the spec.
        unsafe { ffi::write(pp_data, ptr, "ppData") }?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn unmap_memory(device: vk::Device, memory: vk::DeviceMemory) {
    ffi::void("vkUnmapMemory", || {
        // SAFETY: a live device per the spec.
        let mem = unsafe { dev(device) }?.memories.get(memory.as_raw())?;
        if mem.lock_mapping().take().is_none() {
            return Err(DriverError::InvalidArgument(
                "vkUnmapMemory of memory that is not mapped".into(),
            ));
        }
        Ok(())
    })
}

/// Defines vkFlushMappedMemoryRanges and vkInvalidateMappedMemoryRanges. Every memory type is
/// HOST_COHERENT: flushes and invalidations have nothing to do, but the ranges must still name
/// live memory.
macro_rules! coherent_range_checks {
    ($($f:ident, $name:literal;)*) => {$(
        pub(crate) unsafe extern "system" fn $f(
            device: vk::Device,
            count: u32,
            p_ranges: *const vk::MappedMemoryRange<'_>,
        ) -> vk::Result {
            ffi::result($name, || {
                // SAFETY: a live device and `count` valid ranges per the spec.
                let (d, ranges) =
                    unsafe { (dev(device)?, ffi::slice(p_ranges, count, "pMemoryRanges")?) };
                for r in ranges {
                    d.memories.get(r.memory.as_raw())?;
                }
                Ok(vk::Result::SUCCESS)
            })
        }
    )*};
}

coherent_range_checks! {
    flush_mapped_memory_ranges, "vkFlushMappedMemoryRanges";
    invalidate_mapped_memory_ranges, "vkInvalidateMappedMemoryRanges";
}

/// GEM objects are backed in full when created.
pub(crate) unsafe extern "system" fn get_device_memory_commitment(
    device: vk::Device,
    memory: vk::DeviceMemory,
    p_committed: *mut u64,
) {
    ffi::void("vkGetDeviceMemoryCommitment", || {
        // SAFETY: a live device per the spec.
        let mem = unsafe { dev(device) }?.memories.get(memory.as_raw())?;
        // SAFETY: valid output pointer per the spec.
        unsafe { ffi::write(p_committed, mem.size, "pCommittedMemoryInBytes") }
    })
}

crate::device::registry_creates! {
    create_buffer, "vkCreateBuffer", BufferCreateInfo => buffers, Buffer, "pBuffer", new_buffer;
}

/// The object vkCreateBuffer makes of its create info.
fn new_buffer(_d: &Device, info: &vk::BufferCreateInfo<'_>) -> Result<Buffer> {
    check_buffer_info(info)?;
    Ok(Buffer {
        size: info.size,
        usage: info.usage,
        binding: BindingSlot::default(),
    })
}

crate::device::registry_destroys! {
    destroy_buffer, "vkDestroyBuffer", vk::Buffer => buffers;
}

/// The GPU address of a buffer's first byte (VK_KHR_buffer_device_address): its memory's
/// softpinned address plus the binding offset. Shaders reach it through A64 messages.
fn buffer_address(d: &Device, buffer: vk::Buffer) -> Result<u64> {
    let (mem, offset) = d.buffers.get(buffer.as_raw())?.resolve()?;
    if !mem.device_address {
        log::warn!(
            "vkGetBufferDeviceAddress: the buffer's memory was allocated without \
             VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT, so submissions do not make it resident"
        );
    }
    Ok(mem.va + offset)
}

pub(crate) unsafe extern "system" fn get_buffer_device_address(
    device: vk::Device,
    p_info: *const vk::BufferDeviceAddressInfo<'_>,
) -> vk::DeviceAddress {
    ffi::run(
        "vkGetBufferDeviceAddress",
        |_| 0,
        || {
            // SAFETY: live device and valid info per the spec.
            let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pInfo")?) };
            buffer_address(d, info.buffer)
        },
    )
}

/// Opaque capture addresses exist for capture/replay tools, which Ferrite does not support
/// (bufferDeviceAddressCaptureReplay is false): a buffer has none (0, "no address to
/// request"), as anv answers for buffers.
pub(crate) unsafe extern "system" fn get_buffer_opaque_capture_address(
    device: vk::Device,
    p_info: *const vk::BufferDeviceAddressInfo<'_>,
) -> u64 {
    ffi::run(
        "vkGetBufferOpaqueCaptureAddress",
        |_| 0,
        || {
            // SAFETY: live device and valid info per the spec.
            let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pInfo")?) };
            d.buffers.get(info.buffer.as_raw())?;
            Ok(0)
        },
    )
}

/// The memory object's softpinned address (what a replay would have to request).
pub(crate) unsafe extern "system" fn get_device_memory_opaque_capture_address(
    device: vk::Device,
    p_info: *const vk::DeviceMemoryOpaqueCaptureAddressInfo<'_>,
) -> u64 {
    ffi::run(
        "vkGetDeviceMemoryOpaqueCaptureAddress",
        |_| 0,
        || {
            // SAFETY: live device and valid info per the spec.
            let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pInfo")?) };
            Ok(d.memories.get(info.memory.as_raw())?.va)
        },
    )
}

/// What vkCreateBuffer refuses, shared with vkGetDeviceBufferMemoryRequirements (which answers
/// for the buffer vkCreateBuffer would create).
pub fn check_buffer_info(info: &vk::BufferCreateInfo<'_>) -> Result<()> {
    if !info.flags.is_empty() {
        // Sparse and protected buffers need features Ferrite does not offer.
        return Err(DriverError::NotImplemented(
            "buffer create flags (sparse/protected)",
        ));
    }
    if info.size == 0 {
        return Err(DriverError::InvalidArgument("buffer size is 0".into()));
    }
    if info.size > crate::physical::MAX_BUFFER_SIZE {
        return Err(DriverError::InvalidArgument(format!(
            "buffer size {} exceeds maxBufferSize ({})",
            info.size,
            crate::physical::MAX_BUFFER_SIZE
        )));
    }
    Ok(())
}

/// The memory requirements of a buffer of `size` bytes (every buffer has the same rules).
pub fn buffer_requirements(info: &kernel_iface::DeviceInfo, size: u64) -> vk::MemoryRequirements {
    vk::MemoryRequirements {
        // Dword granular: the data-port messages that will read and write buffers move dwords.
        size: align_up(size, 4).unwrap_or(size),
        alignment: BUFFER_ALIGNMENT,
        memory_type_bits: (1u32 << memory_types(info).len()) - 1,
    }
}

/// Defines `vkGet*MemoryRequirements2` entry points: each reads its `$info` structure,
/// computes the requirements with `$req` from the device and that structure (named by the
/// two closure parameters) and writes them with [`write_requirements2`], inside [`ffi::void`]
/// (no panic crosses the FFI edge).
macro_rules! requirements2_entries {
    ($($f:ident, $name:literal, $info:ident, |$d:ident, $i:ident| $req:expr;)*) => {$(
        pub(crate) unsafe extern "system" fn $f(
            device: ::ash::vk::Device,
            p_info: *const ::ash::vk::$info<'_>,
            p_req: *mut ::ash::vk::MemoryRequirements2<'_>,
        ) {
            crate::ffi::void($name, || {
                // SAFETY: live device and valid info per the spec.
                let ($d, $i) =
                    unsafe { (crate::device::dev(device)?, crate::ffi::read(p_info, "pInfo")?) };
                let req = $req;
                // SAFETY: valid output structure and chain per the spec.
                unsafe { crate::memory::write_requirements2(p_req, req) }
            })
        }
    )*};
}
pub(crate) use requirements2_entries;

requirements2_entries! {
    get_buffer_memory_requirements2, "vkGetBufferMemoryRequirements2KHR",
        BufferMemoryRequirementsInfo2, |d, info| d.buffers.get(info.buffer.as_raw())?.requirements(d);
}

/// Writes `req` into a `VkMemoryRequirements2` and answers a chained
/// `VkMemoryDedicatedRequirements` (buffers and images alike, object or create-info queries).
///
/// # Safety
/// `p_req` must be null or a writable `VkMemoryRequirements2` with a valid output chain.
pub(crate) unsafe fn write_requirements2(
    p_req: *mut vk::MemoryRequirements2<'_>,
    req: vk::MemoryRequirements,
) -> Result<()> {
    // SAFETY: caller contract; the core member and a chained VkMemoryDedicatedRequirements are
    // written, sType/pNext are left alone.
    let out = unsafe { p_req.as_mut() }.ok_or(DriverError::NullPointer("pMemoryRequirements"))?;
    out.memory_requirements = req;
    // VK_KHR_dedicated_allocation: a resource is one range of a softpinned GEM object; it
    // gains nothing from an allocation of its own, so neither preferred nor required.
    // SAFETY: the output chain is valid (caller contract).
    if let Some(p) =
        unsafe { ffi::find_in_chain(out.p_next, vk::StructureType::MEMORY_DEDICATED_REQUIREMENTS) }
    {
        // SAFETY: a structure with this sType is this type, writable per the spec.
        let d = unsafe { &mut *p.cast_mut().cast::<vk::MemoryDedicatedRequirements<'_>>() };
        d.prefers_dedicated_allocation = vk::FALSE;
        d.requires_dedicated_allocation = vk::FALSE;
    }
    Ok(())
}

crate::device::registry_binds! {
    get_buffer_memory_requirements, "vkGetBufferMemoryRequirements";
    bind_buffer_memory, "vkBindBufferMemory", vk::Buffer;
    bind_buffer_memory2, "vkBindBufferMemory2KHR", BindBufferMemoryInfo.buffer => buffers;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_up_rounds_and_detects_overflow() {
        assert_eq!(align_up(1, 4096), Some(4096));
        assert_eq!(align_up(4096, 4096), Some(4096));
        assert_eq!(align_up(u64::MAX, 4096), None);
    }
}
