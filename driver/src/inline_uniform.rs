//! Inline uniform blocks (VK_EXT_inline_uniform_block, core in Vulkan 1.3).
//!
//! A binding of type INLINE_UNIFORM_BLOCK holds `descriptorCount` bytes of uniform data in the
//! descriptor set itself. Ferrite gives each set that has such bindings one GEM object of its
//! own (driver-owned memory, `Memory::internal`), with every block of the set at a 64-byte
//! aligned offset in it. The binding takes one descriptor slot, which holds an ordinary
//! uniform-buffer descriptor over its block's bytes from the moment the set is allocated; a
//! shader reads the block like any uniform buffer (binding-table surface or descriptor table,
//! docs/dispatch-contract.md, "Inline uniform blocks"), and the command buffer lists the object
//! as it lists a buffer's memory. Writes, copies and template updates copy bytes into the
//! object; the descriptor itself never changes.

use std::sync::Arc;

use ash::vk;

use crate::descriptor::{BufferDesc, DescriptorSet, LayoutBinding, SetLayout};
use crate::device::Core;
use crate::error::{DriverError, Result};
use crate::memory::Memory;

/// maxInlineUniformBlockSize: anv's value on Gen9. A block is read through a uniform-buffer
/// surface, so the hardware's bound is maxUniformBufferRange; 4 KiB keeps a set's object small.
pub const MAX_INLINE_UNIFORM_BLOCK_SIZE: u32 = 4096;
/// maxPerStageDescriptorInlineUniformBlocks and maxDescriptorSetInlineUniformBlocks (anv: 32).
pub const MAX_INLINE_UNIFORM_BLOCKS: u32 = 32;
/// maxInlineUniformTotalSize: the bytes of all blocks of a pipeline layout (anv: 65535).
pub const MAX_INLINE_UNIFORM_TOTAL_SIZE: u32 = 65535;
/// Where blocks start in a set's object: the uniform-buffer offset alignment Ferrite reports.
const BLOCK_ALIGNMENT: u32 = 64;

/// One inline uniform block of a set layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InlineBlock {
    pub binding: u32,
    /// Bytes (the binding's descriptorCount).
    pub size: u32,
    /// Byte offset in the set's object.
    pub offset: u32,
}

/// Takes the inline uniform blocks out of a layout's raw bindings: each becomes a binding of
/// one descriptor (its slot), and their (binding, bytes) are returned for [`place`]. Refuses a
/// size that is not a multiple of 4 or exceeds maxInlineUniformBlockSize, and more blocks than
/// maxDescriptorSetInlineUniformBlocks.
pub fn take_blocks(raw: &mut [(u32, vk::DescriptorType, u32)]) -> Result<Vec<(u32, u32)>> {
    let mut blocks = Vec::new();
    for (binding, ty, count) in raw.iter_mut() {
        if *ty != vk::DescriptorType::INLINE_UNIFORM_BLOCK {
            continue;
        }
        if *count % 4 != 0 || *count > MAX_INLINE_UNIFORM_BLOCK_SIZE {
            return Err(DriverError::InvalidArgument(format!(
                "inline uniform block binding {binding} of {count} bytes: a multiple of 4 up to \
                 maxInlineUniformBlockSize ({MAX_INLINE_UNIFORM_BLOCK_SIZE}) is allowed"
            )));
        }
        blocks.push((*binding, *count));
        *count = u32::from(*count > 0);
    }
    if blocks.len() > MAX_INLINE_UNIFORM_BLOCKS as usize {
        return Err(DriverError::InvalidArgument(format!(
            "{} inline uniform blocks in a set exceed maxDescriptorSetInlineUniformBlocks ({})",
            blocks.len(),
            MAX_INLINE_UNIFORM_BLOCKS
        )));
    }
    Ok(blocks)
}

/// Places the blocks [`take_blocks`] found in the set's object, in binding order.
pub fn place(blocks: &[(u32, u32)]) -> Vec<InlineBlock> {
    let mut sorted = blocks.to_vec();
    sorted.sort_unstable();
    let mut at = 0u32;
    sorted
        .into_iter()
        .map(|(binding, size)| {
            let b = InlineBlock {
                binding,
                size,
                offset: at,
            };
            at += size.div_ceil(BLOCK_ALIGNMENT) * BLOCK_ALIGNMENT;
            b
        })
        .collect()
}

/// Bytes of the object a set of `layout` needs (0: no blocks).
fn object_size(layout: &SetLayout) -> u64 {
    layout
        .inline
        .iter()
        .map(|b| u64::from(b.offset + b.size))
        .max()
        .unwrap_or(0)
}

/// Gives a new set of a layout with inline uniform blocks its object (zeroed) and points each
/// block's slot at its bytes.
pub fn attach(core: &Core, set: &DescriptorSet) -> Result<()> {
    let size = object_size(&set.layout);
    if size == 0 {
        return Ok(());
    }
    let memory = Memory::internal(core, size)?;
    let mut slots = set.lock();
    for b in &set.layout.inline {
        let Some(lb) = set.layout.binding(b.binding).filter(|l| l.count > 0) else {
            continue;
        };
        slots[lb.first as usize] = Some(BufferDesc {
            memory: memory.clone(),
            offset: u64::from(b.offset),
            range: u64::from(b.size),
            surface: None,
            write_surface: None,
        });
    }
    Ok(())
}

/// The binding `binding` of `set` when it is an inline uniform block: its layout binding, its
/// block, and the memory and offset of its bytes.
fn block_of(set: &DescriptorSet, binding: u32) -> Result<(LayoutBinding, InlineBlock, BufferDesc)> {
    let bad = || {
        DriverError::InvalidArgument(format!(
            "binding {binding} is not an inline uniform block of the set"
        ))
    };
    let lb = *set.layout.binding(binding).ok_or_else(bad)?;
    let block = *set
        .layout
        .inline
        .iter()
        .find(|b| b.binding == binding)
        .ok_or_else(bad)?;
    let desc = if lb.count == 0 {
        None
    } else {
        set.lock()[lb.first as usize].clone()
    };
    let desc = desc.ok_or_else(|| {
        DriverError::InvalidArgument(format!(
            "binding {binding}: the set has no inline uniform block storage (push descriptor \
             sets cannot hold inline uniform blocks)"
        ))
    })?;
    Ok((lb, block, desc))
}

/// The binding after `binding` in `set`'s layout (consecutive binding updates).
fn next_binding(set: &DescriptorSet, binding: u32) -> Option<u32> {
    set.layout
        .bindings
        .iter()
        .map(|b| b.binding)
        .find(|&b| b > binding)
}

/// Writes `data` at byte `offset` of block `binding`; bytes past the block's end continue at
/// the start of the next binding (vkUpdateDescriptorSets' consecutive-binding rule, which the
/// specification applies to inline uniform blocks byte by byte).
pub fn write(set: &DescriptorSet, binding: u32, offset: u32, data: &[u8]) -> Result<()> {
    let (mut binding, mut offset, mut data) = (binding, offset, data);
    loop {
        let (_, block, desc) = block_of(set, binding)?;
        if offset > block.size {
            return Err(DriverError::InvalidArgument(format!(
                "inline uniform block write at byte {offset} of a {}-byte block",
                block.size
            )));
        }
        let n = data.len().min((block.size - offset) as usize);
        desc.memory
            .write_bytes(desc.offset + u64::from(offset), &data[..n])?;
        data = &data[n..];
        if data.is_empty() {
            return Ok(());
        }
        binding = next_binding(set, binding).ok_or_else(|| {
            DriverError::InvalidArgument("inline uniform block write past the set".into())
        })?;
        offset = 0;
    }
}

/// Reads `len` bytes from byte `offset` of block `binding` on, continuing into the next
/// bindings like [`write`].
pub fn read(set: &DescriptorSet, binding: u32, offset: u32, len: usize) -> Result<Vec<u8>> {
    let (mut binding, mut offset) = (binding, offset);
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let (_, block, desc) = block_of(set, binding)?;
        if offset > block.size {
            return Err(DriverError::InvalidArgument(format!(
                "inline uniform block copy from byte {offset} of a {}-byte block",
                block.size
            )));
        }
        let n = (len - out.len()).min((block.size - offset) as usize);
        let mut buf = vec![0u8; n];
        desc.memory
            .read_bytes(desc.offset + u64::from(offset), &mut buf)?;
        out.extend_from_slice(&buf);
        if out.len() < len {
            binding = next_binding(set, binding).ok_or_else(|| {
                DriverError::InvalidArgument("inline uniform block copy past the set".into())
            })?;
            offset = 0;
        }
    }
    Ok(out)
}

/// Whether binding `binding` of `set` is an inline uniform block.
pub fn is_block(set: &DescriptorSet, binding: u32) -> bool {
    set.layout.binding(binding).map(|b| b.ty) == Some(vk::DescriptorType::INLINE_UNIFORM_BLOCK)
}

/// A VkWriteDescriptorSet of type INLINE_UNIFORM_BLOCK: `descriptorCount` bytes from its
/// chained VkWriteDescriptorSetInlineUniformBlock, written at byte `dstArrayElement`.
///
/// # Safety
/// The write's pNext chain must be valid per the spec.
pub unsafe fn apply_write(core: &Core, w: &vk::WriteDescriptorSet<'_>) -> Result<()> {
    let set = core.descriptor_sets.get(vk::Handle::as_raw(w.dst_set))?;
    // SAFETY: the write's chain is valid (caller contract).
    let info = unsafe {
        crate::ffi::find_in_chain(
            w.p_next,
            vk::StructureType::WRITE_DESCRIPTOR_SET_INLINE_UNIFORM_BLOCK,
        )
    }
    .ok_or_else(|| {
        DriverError::InvalidArgument(
            "an INLINE_UNIFORM_BLOCK write without VkWriteDescriptorSetInlineUniformBlock".into(),
        )
    })?;
    // SAFETY: a structure with this sType is this type.
    let info = unsafe { &*info.cast::<vk::WriteDescriptorSetInlineUniformBlock<'_>>() };
    if info.data_size != w.descriptor_count {
        return Err(DriverError::InvalidArgument(format!(
            "inline uniform block write: dataSize {} differs from descriptorCount {}",
            info.data_size, w.descriptor_count
        )));
    }
    // SAFETY: pData holds dataSize bytes per the spec.
    let data = unsafe { crate::ffi::slice(info.p_data.cast::<u8>(), info.data_size, "pData") }?;
    write(&set, w.dst_binding, w.dst_array_element, data)
}

/// A VkCopyDescriptorSet whose source binding is an inline uniform block: `descriptorCount`
/// bytes from byte `srcArrayElement` to byte `dstArrayElement`.
pub fn apply_copy(
    src: &DescriptorSet,
    dst: &DescriptorSet,
    c: &vk::CopyDescriptorSet<'_>,
) -> Result<()> {
    if !is_block(dst, c.dst_binding) {
        return Err(DriverError::InvalidArgument(
            "descriptor copy from an inline uniform block to another type".into(),
        ));
    }
    let bytes = read(
        src,
        c.src_binding,
        c.src_array_element,
        c.descriptor_count as usize,
    )?;
    write(dst, c.dst_binding, c.dst_array_element, &bytes)
}

/// Checks a pipeline layout's inline uniform blocks against maxPerStageDescriptorInline-
/// UniformBlocks / maxDescriptorSetInlineUniformBlocks and maxInlineUniformTotalSize (one
/// stage: compute).
pub fn check_pipeline_layout(sets: &[Arc<SetLayout>]) -> Result<()> {
    let blocks: usize = sets.iter().map(|s| s.inline.len()).sum();
    if blocks > MAX_INLINE_UNIFORM_BLOCKS as usize {
        return Err(DriverError::InvalidArgument(format!(
            "{blocks} inline uniform blocks exceed maxPerStageDescriptorInlineUniformBlocks \
             ({MAX_INLINE_UNIFORM_BLOCKS})"
        )));
    }
    let total: u64 = sets
        .iter()
        .flat_map(|s| s.inline.iter())
        .map(|b| u64::from(b.size))
        .sum();
    if total > u64::from(MAX_INLINE_UNIFORM_TOTAL_SIZE) {
        return Err(DriverError::InvalidArgument(format!(
            "{total} bytes of inline uniform blocks exceed maxInlineUniformTotalSize \
             ({MAX_INLINE_UNIFORM_TOTAL_SIZE})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const IUB: vk::DescriptorType = vk::DescriptorType::INLINE_UNIFORM_BLOCK;

    #[test]
    fn blocks_take_one_slot_and_sit_64_bytes_apart() {
        let original = vec![
            (3, IUB, 20),
            (0, vk::DescriptorType::STORAGE_BUFFER, 2),
            (1, IUB, 256),
            (2, IUB, 0),
        ];
        let mut raw = original.clone();
        let blocks = take_blocks(&mut raw).unwrap();
        assert_eq!(
            raw.iter().map(|r| r.2).collect::<Vec<_>>(),
            [1, 2, 1, 0],
            "a block is one descriptor, an empty one none"
        );
        let placed = place(&blocks);
        assert_eq!(
            placed,
            [
                InlineBlock {
                    binding: 1,
                    size: 256,
                    offset: 0
                },
                InlineBlock {
                    binding: 2,
                    size: 0,
                    offset: 256
                },
                InlineBlock {
                    binding: 3,
                    size: 20,
                    offset: 256
                },
            ]
        );
        let l = SetLayout::new(original).unwrap();
        assert_eq!((l.slots, l.inline.clone()), (4, placed));
        assert_eq!(l.slot_of(3, 0), Some(3));
    }

    #[test]
    fn block_sizes_and_counts_are_limited() {
        assert!(take_blocks(&mut [(0, IUB, 6)]).is_err());
        assert!(take_blocks(&mut [(0, IUB, MAX_INLINE_UNIFORM_BLOCK_SIZE + 4)]).is_err());
        assert!(take_blocks(&mut [(0, IUB, MAX_INLINE_UNIFORM_BLOCK_SIZE)]).is_ok());
        let many = |n: u32| -> Vec<_> { (0..n).map(|b| (b, IUB, 4)).collect() };
        assert!(take_blocks(&mut many(MAX_INLINE_UNIFORM_BLOCKS + 1)).is_err());
        assert!(take_blocks(&mut many(MAX_INLINE_UNIFORM_BLOCKS)).is_ok());
    }
}
