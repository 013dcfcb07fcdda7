//! Constant descriptor-array indices: an access to element `c` of a descriptor array, where
//! `c` is a constant (typically after loop unrolling: `for (k = 0; k < 3; k++) imageLoad(a[k],
//! ...)`), names the binding-table entry `base + min(c, count - 1)` directly, as a fixed
//! descriptor does. Without this the back end treats the constant as a run-time index: the
//! clamp, the minimum over the active channels and the `a0` descriptor are emitted at every
//! access, although the result is known at compile time.
//!
//! The clamp is the one the back end applies at run time (an index outside the array
//! reaches its last element, never another descriptor's entry), so the result is the same.
//! An array of one element (a runtime-sized array bound with one descriptor, or declared so)
//! names that element whatever the index: the clamp maps every value to it, so the index,
//! run-time or `NonUniform`, needs no code at all (anv's NIR does the same: `umin(i, 0)`
//! folds to 0 and the non-uniform loop around the access disappears).
//!
//! For a combined image sampler the image and the sampler share the index and the sampler
//! table entry is the image's binding-table entry; a separate sampler array folds into the
//! op's sampler index.

use crate::ir::*;

/// The clamped array element `x` names, when its index is a constant or the array has one
/// element.
fn fixed_entry(x: &BufIndex, consts: &Consts) -> Option<u32> {
    if x.count == 1 {
        return Some(x.base);
    }
    let c = consts.splat(x.index)?;
    Some(x.base + (c as u32).min(x.count.checked_sub(1)?))
}

/// The sampler-table index a sampler message names, if it is one.
fn sampler_mut(op: &mut ImageOp) -> Option<&mut u32> {
    match op {
        ImageOp::SampleLod { sampler, .. }
        | ImageOp::SampleGrad { sampler, .. }
        | ImageOp::Gather { sampler, .. }
        | ImageOp::GatherOffset { sampler, .. } => Some(sampler),
        ImageOp::Load | ImageOp::Store | ImageOp::Atomic(_) | ImageOp::Fetch | ImageOp::Size => {
            None
        }
    }
}

/// A buffer space of a descriptor array with a constant index, as the fixed buffer it names.
fn fold_space(space: &mut Space, consts: &Consts) -> bool {
    match space.array().and_then(|x| fixed_entry(&x, consts)) {
        Some(entry) => {
            *space = space.element(entry);
            true
        }
        None => false,
    }
}

/// The image (and sampler) arrays of an image op indexed by constants, as fixed entries.
fn fold_image(op: &mut ImageOp, r: &mut ImgRef, consts: &Consts) -> bool {
    let combined = r.index.is_some() && r.sampler == r.index;
    let mut changed = false;
    if let Some(bti) = r.index.as_ref().and_then(|x| fixed_entry(x, consts)) {
        r.bti = bti;
        r.index = None;
        if combined {
            // The sampler-table entry of a combined descriptor is its binding-table entry.
            if let Some(s) = sampler_mut(op) {
                *s = bti;
            }
            r.sampler = None;
        }
        changed = true;
    }
    if let Some(x) = r.sampler {
        if let (Some(e), Some(s)) = (fixed_entry(&x, consts), sampler_mut(op)) {
            // `x.base` is the op's sampler index: the element replaces it.
            *s = e;
            r.sampler = None;
            changed = true;
        }
    }
    changed
}

/// Replaces descriptor-array accesses with constant indices (or to arrays of one element) by accesses to the fixed
/// element they name (module doc). Returns true if anything changed.
pub fn opt_const_desc_index(f: &mut Function) -> bool {
    let consts = f.consts();
    let mut changed = false;
    f.for_each_instr_mut(&mut |i| {
        changed |= match &mut i.op {
            Op::Load { space, .. }
            | Op::Store { space, .. }
            | Op::Atomic { space, .. }
            | Op::BufferSize(space) => fold_space(space, &consts),
            Op::Image(op, r, _) => fold_image(op, r, &consts),
            Op::Const(_)
            | Op::Alu(..)
            | Op::Vec(_)
            | Op::Extract(..)
            | Op::Insert(..)
            | Op::Swizzle(..)
            | Op::LoadVar(_)
            | Op::StoreVar(..)
            | Op::SysVal(_)
            | Op::Barrier { .. }
            | Op::Subgroup(..) => false,
        };
    });
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    #[test]
    fn constant_buffer_index_names_the_element() {
        check_pass(
            opt_const_desc_index,
            "
            %0:i32 = const 1
            %1:i32 = const 0
            %2:f32 = load ssbo[2+%0<3] %1 align 4
            %3:f32 = load ubo[5+%1<2] %1 align 4
            %4:f32 = fadd %2, %3
            store ssbo.nu[2+%0<3] %1, %4 align 4
            %5:i32 = buffer_size ssbo[2+%0<3]
            store ssbo[0] %1, %5 align 4
            ",
            "
            %0:i32 = const 1
            %1:i32 = const 0
            %2:f32 = load ssbo[3] %1 align 4
            %3:f32 = load ubo[5] %1 align 4
            %4:f32 = fadd %2, %3
            store ssbo[3] %1, %4 align 4
            %5:i32 = buffer_size ssbo[3]
            store ssbo[0] %1, %5 align 4
            ",
        );
    }

    /// An index past the array reaches its last element, as the run-time clamp does; a
    /// negative one is a huge unsigned value.
    #[test]
    fn constant_index_outside_the_array_is_clamped() {
        check_pass(
            opt_const_desc_index,
            "
            %0:i32 = const 7
            %1:i32 = const -1
            %2:i32 = const 0
            %3:f32 = load ssbo[2+%0<3] %2 align 4
            %4:f32 = load ssbo[2+%1<3] %2 align 4
            %5:f32 = fadd %3, %4
            store ssbo[0] %2, %5 align 4
            ",
            "
            %0:i32 = const 7
            %1:i32 = const -1
            %2:i32 = const 0
            %3:f32 = load ssbo[4] %2 align 4
            %4:f32 = load ssbo[4] %2 align 4
            %5:f32 = fadd %3, %4
            store ssbo[0] %2, %5 align 4
            ",
        );
    }

    #[test]
    fn run_time_index_is_kept() {
        let src = "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:f32 = load ssbo[2+%0<3] %1 align 4
            %3:i32x4 = image_load img[6+%0<2] %1
            store ssbo[0] %1, %2 align 4
            ";
        check_pass(opt_const_desc_index, src, src);
    }

    /// An array of one element: every index, run-time or `NonUniform`, names it (the
    /// back end's clamp would give 0 in every channel).
    #[test]
    fn array_of_one_element_names_it_whatever_the_index() {
        check_pass(
            opt_const_desc_index,
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:f32 = load ssbo.nu[2+%0<1] %1 align 4
            %3:f32x4 = image_fetch img.nu[4+%0<1] %0, %1
            %4:i32x4 = image_size img.nu[5+%0<1] %1
            %5:f32x4 = image_sample_l.s6 img[6+%0<1] smp[6+%0<1] %3, %2
            %6:f32x4 = image_sample_l.s9 img[7+%0<2] smp[9+%0<1] %3, %2
            store ssbo[0] %1, %2 align 4
            ",
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:f32 = load ssbo[2] %1 align 4
            %3:f32x4 = image_fetch img[4] %0, %1
            %4:i32x4 = image_size img[5] %1
            %5:f32x4 = image_sample_l.s6 img[6] %3, %2
            %6:f32x4 = image_sample_l.s9 img[7+%0<2] %3, %2
            store ssbo[0] %1, %2 align 4
            ",
        );
    }

    #[test]
    fn constant_image_index_names_the_element() {
        check_pass(
            opt_const_desc_index,
            "
            %0:i32 = const 2
            %1:i32 = const 0
            %2:i32x4 = image_load img[1+%0<3] %1
            image_store img[1+%1<3] %1, %2
            ",
            "
            %0:i32 = const 2
            %1:i32 = const 0
            %2:i32x4 = image_load img[3] %1
            image_store img[1] %1, %2
            ",
        );
    }

    /// A combined image sampler: the sampler-table entry follows the image's entry. Separate
    /// arrays: each index folds on its own, a run-time one stays.
    #[test]
    fn constant_sampler_indices_fold_into_the_message() {
        check_pass(
            opt_const_desc_index,
            "
            %0:i32 = const 1
            %1:f32x2 = const 0.5, 0.5
            %2:f32 = const 0.0
            %3:i32 = sysval local_invocation_index
            %4:f32x4 = image_sample_l.s2 img[2+%0<3] smp[2+%0<3] %1, %2
            %5:f32x4 = image_sample_l.s5 img[2+%0<3] smp[5+%0<2] %1, %2
            %6:f32x4 = image_sample_l.s5 img[2+%3<3] smp[5+%0<2] %1, %2
            %7:f32x4 = image_sample_l.s5 img[2+%0<3] smp[5+%3<2] %1, %2
            %8:f32x4 = fadd %4, %5
            %9:f32x4 = fadd %6, %7
            %10:f32x4 = fadd %8, %9
            %11:f32 = extract %10, 0
            store ssbo[0] %0, %11 align 4
            ",
            "
            %0:i32 = const 1
            %1:f32x2 = const 0.5, 0.5
            %2:f32 = const 0.0
            %3:i32 = sysval local_invocation_index
            %4:f32x4 = image_sample_l.s3 img[3] %1, %2
            %5:f32x4 = image_sample_l.s6 img[3] %1, %2
            %6:f32x4 = image_sample_l.s6 img[2+%3<3] %1, %2
            %7:f32x4 = image_sample_l.s5 img[3] smp[5+%3<2] %1, %2
            %8:f32x4 = fadd %4, %5
            %9:f32x4 = fadd %6, %7
            %10:f32x4 = fadd %8, %9
            %11:f32 = extract %10, 0
            store ssbo[0] %0, %11 align 4
            ",
        );
    }
}
