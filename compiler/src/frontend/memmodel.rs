//! The Vulkan memory model (`VulkanMemoryModel`, `SPV_KHR_vulkan_memory_model`, core in
//! SPIR-V 1.5): the availability and visibility operations and the ordering semantics that
//! sit on loads, stores and atomics become memory barriers (`Op::Barrier` with no execution
//! scope) before or after the access, which the back end turns into a data-port fence
//! (docs/memory-model.md).
//!
//! * A load with `MakePointerVisible` gets an acquire + make-visible barrier before it; a store
//!   with `MakePointerAvailable` a release + make-available barrier after it.
//! * An atomic's semantics are split: the release part (`Release`, `AcquireRelease`,
//!   `SequentiallyConsistent`) and `MakeVisible` before the atomic, the acquire part and
//!   `MakeAvailable` after it. More than one ordering bit counts as `AcquireRelease`.
//! * `NonPrivatePointer` / `NonPrivateTexel` and `Volatile` need nothing: every storage-buffer,
//!   shared-memory and image access is a data-port message that is never cached in registers
//!   across another access or removed while another invocation could observe it.
//!
//! Only storage the data port reaches (buffers, physical pointers, shared memory, images) takes
//! a barrier; an access to function or private memory is the invocation's own.

use super::memory::Ptr;
use super::{invalid, Fe, Res};
use crate::ir::{Op, Space};
use rspirv::dr::{self, Operand};
use rspirv::spirv::{MemoryAccess, MemorySemantics};

/// The storage-class bit of the memory a pointer reaches, or None for the invocation's own.
pub(super) fn storage_semantics(p: &Ptr) -> Option<MemorySemantics> {
    match p {
        Ptr::Mem {
            space: Space::Ssbo(_) | Space::SsboArray(_) | Space::Global(_),
            ..
        } => Some(MemorySemantics::UNIFORM_MEMORY),
        Ptr::Mem {
            space: Space::Shared,
            ..
        } => Some(MemorySemantics::WORKGROUP_MEMORY),
        Ptr::Texel { .. } | Ptr::Image { .. } => Some(MemorySemantics::IMAGE_MEMORY),
        _ => None,
    }
}

/// The barriers an atomic's `semantics` ask for: (before, after), empty when none.
pub(super) fn split_semantics(semantics: u32) -> (u32, u32) {
    let s = MemorySemantics::from_bits_truncate(semantics);
    let ordering = MemorySemantics::ACQUIRE
        | MemorySemantics::RELEASE
        | MemorySemantics::ACQUIRE_RELEASE
        | MemorySemantics::SEQUENTIALLY_CONSISTENT;
    let storage = MemorySemantics::UNIFORM_MEMORY
        | MemorySemantics::SUBGROUP_MEMORY
        | MemorySemantics::WORKGROUP_MEMORY
        | MemorySemantics::CROSS_WORKGROUP_MEMORY
        | MemorySemantics::ATOMIC_COUNTER_MEMORY
        | MemorySemantics::IMAGE_MEMORY
        | MemorySemantics::OUTPUT_MEMORY;
    let mut order = s & ordering;
    if order.bits().count_ones() > 1 {
        order = MemorySemantics::ACQUIRE_RELEASE;
    }
    let classes = s & storage;
    let releases = order.intersects(
        MemorySemantics::RELEASE
            | MemorySemantics::ACQUIRE_RELEASE
            | MemorySemantics::SEQUENTIALLY_CONSISTENT,
    );
    let acquires = order.intersects(
        MemorySemantics::ACQUIRE
            | MemorySemantics::ACQUIRE_RELEASE
            | MemorySemantics::SEQUENTIALLY_CONSISTENT,
    );
    let mut before = MemorySemantics::empty();
    let mut after = MemorySemantics::empty();
    if releases {
        before |= MemorySemantics::RELEASE | classes;
    }
    if acquires {
        after |= MemorySemantics::ACQUIRE | classes;
    }
    if s.contains(MemorySemantics::MAKE_VISIBLE) {
        before |= MemorySemantics::MAKE_VISIBLE | classes;
    }
    if s.contains(MemorySemantics::MAKE_AVAILABLE) {
        after |= MemorySemantics::MAKE_AVAILABLE | classes;
    }
    // A barrier that names no storage class orders nothing (as OpMemoryBarrier with only
    // ordering bits).
    let keep = |m: MemorySemantics| if m.intersects(storage) { m.bits() } else { 0 };
    (keep(before), keep(after))
}

/// The scopes of the `MakePointerAvailable` and `MakePointerVisible` memory operands of a
/// load, store or copy (every memory-operand set of the instruction), as scope ids.
fn av_vis_scopes(i: &dr::Instruction) -> Res<(Option<u32>, Option<u32>)> {
    let (mut avail, mut vis) = (None, None);
    let mut k = 0;
    while k < i.operands.len() {
        if let Operand::MemoryAccess(m) = i.operands[k] {
            k += 1;
            if m.contains(MemoryAccess::ALIGNED) {
                k += 1;
            }
            if m.contains(MemoryAccess::MAKE_POINTER_AVAILABLE) {
                match i.operands.get(k) {
                    Some(Operand::IdScope(s) | Operand::IdRef(s)) => avail = Some(*s),
                    _ => return invalid("MakePointerAvailable without a scope"),
                }
                k += 1;
            }
            if m.contains(MemoryAccess::MAKE_POINTER_VISIBLE) {
                match i.operands.get(k) {
                    Some(Operand::IdScope(s) | Operand::IdRef(s)) => vis = Some(*s),
                    _ => return invalid("MakePointerVisible without a scope"),
                }
                k += 1;
            }
        } else {
            k += 1;
        }
    }
    Ok((avail, vis))
}

/// The image operands that concern the memory model (`MakeTexelAvailable`,
/// `MakeTexelVisible`, `NonPrivateTexel`, `VolatileTexel`), removed from a copy of an
/// `OpImageRead` / `OpImageWrite` so the image code sees only the operands it samples with;
/// returns the copy and the availability and visibility scope ids.
pub(super) fn strip_texel_operands(
    i: &dr::Instruction,
) -> Res<(dr::Instruction, Option<u32>, Option<u32>)> {
    use rspirv::spirv::ImageOperands as IO;
    let Some(at) = i
        .operands
        .iter()
        .position(|o| matches!(o, Operand::ImageOperands(_)))
    else {
        return Ok((i.clone(), None, None));
    };
    let Operand::ImageOperands(mask) = i.operands[at] else {
        return Ok((i.clone(), None, None));
    };
    let memory = IO::MAKE_TEXEL_AVAILABLE
        | IO::MAKE_TEXEL_VISIBLE
        | IO::NON_PRIVATE_TEXEL
        | IO::VOLATILE_TEXEL;
    if !mask.intersects(memory) {
        return Ok((i.clone(), None, None));
    }
    // Operands follow in the order of their mask bits; these take ids before the texel ones.
    let before = [
        (IO::BIAS, 1),
        (IO::LOD, 1),
        (IO::GRAD, 2),
        (IO::CONST_OFFSET, 1),
        (IO::OFFSET, 1),
        (IO::CONST_OFFSETS, 1),
        (IO::SAMPLE, 1),
        (IO::MIN_LOD, 1),
    ];
    let mut k = at
        + 1
        + before
            .iter()
            .filter(|(b, _)| mask.contains(*b))
            .map(|(_, n)| n)
            .sum::<usize>();
    let mut out = i.clone();
    let scope_at = |k: usize| match i.operands.get(k) {
        Some(Operand::IdScope(s) | Operand::IdRef(s)) => Ok(*s),
        _ => invalid("MakeTexelAvailable / MakeTexelVisible without a scope"),
    };
    let (mut avail, mut vis) = (None, None);
    let mut remove = Vec::new();
    if mask.contains(IO::MAKE_TEXEL_AVAILABLE) {
        avail = Some(scope_at(k)?);
        remove.push(k);
        k += 1;
    }
    if mask.contains(IO::MAKE_TEXEL_VISIBLE) {
        vis = Some(scope_at(k)?);
        remove.push(k);
    }
    for r in remove.into_iter().rev() {
        out.operands.remove(r);
    }
    let rest = mask - memory;
    if rest.is_empty() && out.operands.len() == at + 1 {
        out.operands.remove(at);
    } else {
        out.operands[at] = Operand::ImageOperands(rest);
    }
    Ok((out, avail, vis))
}

impl Fe<'_> {
    /// An `OpImageRead` or `OpImageWrite` with its texel availability and visibility
    /// operations: a make-visible barrier before a read, a make-available one after a write.
    pub(super) fn image_access(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        let (plain, avail, vis) = strip_texel_operands(i)?;
        let image = MemorySemantics::IMAGE_MEMORY;
        if let Some(s) = vis {
            let sem = MemorySemantics::MAKE_VISIBLE | MemorySemantics::ACQUIRE | image;
            self.memory_barrier(s, sem.bits())?;
        }
        if i.class.opcode == rspirv::spirv::Op::ImageRead {
            self.image_read(&plain, b)?;
        } else {
            self.image_write(&plain, b)?;
        }
        if let Some(s) = avail {
            let sem = MemorySemantics::MAKE_AVAILABLE | MemorySemantics::RELEASE | image;
            self.memory_barrier(s, sem.bits())?;
        }
        Ok(())
    }

    /// A memory barrier at `scope_id` with `semantics` (nothing when they are empty).
    pub(super) fn memory_barrier(&mut self, scope_id: u32, semantics: u32) -> Res<()> {
        if semantics == 0 {
            return Ok(());
        }
        let mem = self.scope(scope_id)?;
        self.emit_void(Op::Barrier {
            exec: None,
            mem,
            semantics,
        })
    }

    /// Before a load from `p` (instruction `i`): its make-visible barrier, if it asks for one.
    pub(super) fn visible_before_load(&mut self, i: &dr::Instruction, p: &Ptr) -> Res<()> {
        let (_, vis) = av_vis_scopes(i)?;
        let semantics = MemorySemantics::MAKE_VISIBLE | MemorySemantics::ACQUIRE;
        self.access_barrier(vis, p, semantics)
    }

    /// After a store to `p` (instruction `i`): its make-available barrier, if it asks for one.
    pub(super) fn available_after_store(&mut self, i: &dr::Instruction, p: &Ptr) -> Res<()> {
        let (avail, _) = av_vis_scopes(i)?;
        let semantics = MemorySemantics::MAKE_AVAILABLE | MemorySemantics::RELEASE;
        self.access_barrier(avail, p, semantics)
    }

    /// The barrier of an access to `p` that asks for `semantics` at `scope` (none if it asks
    /// for no scope or `p` has no storage class with semantics), the class added.
    fn access_barrier(
        &mut self,
        scope: Option<u32>,
        p: &Ptr,
        semantics: MemorySemantics,
    ) -> Res<()> {
        match (scope, storage_semantics(p)) {
            (Some(scope), Some(class)) => self.memory_barrier(scope, (semantics | class).bits()),
            _ => Ok(()),
        }
    }

    /// An atomic's semantics (operand 2, and for a compare-exchange also the unequal
    /// semantics, operand 3) as barriers before and after it, with the storage class of the
    /// memory it reaches added as SPIR-V implies.
    pub(super) fn atomic_barriers(&mut self, i: &dr::Instruction, p: &Ptr) -> Res<(u32, u32, u32)> {
        let scope = super::op_id(i, 1)?;
        let mut semantics = self.const_u32(super::op_id(i, 2)?)?;
        if i.class.opcode == rspirv::spirv::Op::AtomicCompareExchange {
            semantics |= self.const_u32(super::op_id(i, 3)?)?;
        }
        let Some(class) = storage_semantics(p) else {
            return Ok((scope, 0, 0));
        };
        let (before, after) = split_semantics(semantics | class.bits());
        Ok((scope, before, after))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIFORM: u32 = MemorySemantics::UNIFORM_MEMORY.bits();

    #[test]
    fn relaxed_atomics_take_no_barrier() {
        assert_eq!(split_semantics(0), (0, 0));
        assert_eq!(split_semantics(UNIFORM), (0, 0));
    }

    #[test]
    fn release_goes_before_and_acquire_after() {
        let rel = MemorySemantics::RELEASE.bits();
        let acq = MemorySemantics::ACQUIRE.bits();
        assert_eq!(split_semantics(rel | UNIFORM), (rel | UNIFORM, 0));
        assert_eq!(split_semantics(acq | UNIFORM), (0, acq | UNIFORM));
        let ar = MemorySemantics::ACQUIRE_RELEASE.bits();
        assert_eq!(
            split_semantics(ar | UNIFORM),
            (rel | UNIFORM, acq | UNIFORM)
        );
        // Sequential consistency is acquire-release, and so are several ordering bits.
        let sc = MemorySemantics::SEQUENTIALLY_CONSISTENT.bits();
        assert_eq!(
            split_semantics(sc | UNIFORM),
            (rel | UNIFORM, acq | UNIFORM)
        );
        assert_eq!(
            split_semantics(acq | rel | UNIFORM),
            (rel | UNIFORM, acq | UNIFORM)
        );
    }

    #[test]
    fn visibility_goes_before_and_availability_after() {
        let ar = MemorySemantics::ACQUIRE_RELEASE.bits();
        let av = MemorySemantics::MAKE_AVAILABLE.bits();
        let vis = MemorySemantics::MAKE_VISIBLE.bits();
        let wg = MemorySemantics::WORKGROUP_MEMORY.bits();
        let rel = MemorySemantics::RELEASE.bits();
        let acq = MemorySemantics::ACQUIRE.bits();
        assert_eq!(
            split_semantics(ar | av | vis | wg),
            (rel | vis | wg, acq | av | wg)
        );
    }

    #[test]
    fn ordering_without_a_storage_class_orders_nothing() {
        assert_eq!(
            split_semantics(MemorySemantics::ACQUIRE_RELEASE.bits()),
            (0, 0)
        );
    }
}
