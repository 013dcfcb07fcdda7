//! Scalar replacement of private memory: when a function's private memory (`Space::Local`,
//! the function arrays the front end could not keep in variables because some access chain
//! indexes them at run time) is small and every access to it is a 32-bit scalar or vector,
//! each 32-bit word ("slot") becomes a variable and vars-to-SSA turns the variables into
//! values. Scratch messages and their address arithmetic disappear:
//! - an access at a constant offset reads or writes its slots' variables;
//! - a load at a run-time offset selects among the slots it may start at with a binary tree
//!   of `ult offset, k` / `bcsel` (brw's NIR does the same for a small array: the indirect
//!   read becomes a `bcsel` tree);
//! - a store at a run-time offset writes every slot it may start at with
//!   `bcsel(offset == k, value, old)`.
//!
//! The slots an access at a run-time offset may start at are those its known alignment
//! allows (a `vec4` array of stride 16 is reached only at multiples of 16) that leave room
//! for all its components. An offset outside the memory is undefined behaviour (SPIR-V
//! allows no out-of-bounds access chain into function memory), so selecting some slot for it
//! is as good as the scratch access was.
//!
//! Replacement is done only when it does not cost more instructions than scratch does: a
//! run-time load over `k` slots costs `k - 1` compares and selects per component, a run-time
//! store `k` of each, against about [`SCRATCH_COST`] instructions per scratch access (the
//! lane's base, the offset, the thread's scratch base and the message). Large arrays stay in
//! scratch (values for all their slots would take registers).

use crate::builder::{expand_instrs, Builder};
use crate::ir::*;

/// At most this many slots become values when every access has a constant offset.
const MAX_SLOTS: u32 = 32;
/// At most this many slots when some access has a run-time offset.
const MAX_DYN_SLOTS: u32 = 16;
/// Instructions of one scratch access (backend/isel/memory.rs: `mul` of the lane by the
/// per-lane size, `add` of the offset, `and` of r0.5's scratch base and its `add`, and the
/// message).
const SCRATCH_COST: u32 = 5;

/// One access to private memory.
pub(crate) struct Access {
    /// Byte offset when constant.
    pub konst: Option<u32>,
    /// First slot of each start the access may have (one when `konst` is set).
    pub starts: Vec<u32>,
    pub ty: Type,
    pub store: bool,
}

/// The function's private memory as 32-bit slots, with every access to it: None when there
/// is none, or when some access is not a 32-bit scalar or vector load or store at a byte
/// offset that is a multiple of 4 (constant and in bounds, or of known alignment 4 or
/// more). What keeping the memory out of scratch needs, here as values and in the back end
/// as a register array (`backend::isel::private`).
pub(crate) fn slot_accesses(f: &Function) -> Option<(u32, Vec<Access>)> {
    let size = f.local_mem_size;
    if size == 0 || !size.is_multiple_of(4) {
        return None;
    }
    let n = size / 4;
    let consts = f.consts();
    let mut accesses = Vec::new();
    let mut ok = true;
    f.for_each_node(&mut |node| {
        let Node::Instr(i) = node else { return };
        let (offset, align, ty, store) = match &i.op {
            Op::Load {
                space: Space::Local,
                offset,
                align,
            } => match i.dst {
                Some(d) => (*offset, *align, f.values[d.0 as usize], false),
                None => {
                    ok = false;
                    return;
                }
            },
            Op::Store {
                space: Space::Local,
                offset,
                value,
                align,
            } => (*offset, *align, f.values[value.0 as usize], true),
            Op::Atomic {
                space: Space::Local,
                ..
            } => {
                ok = false;
                return;
            }
            _ => return,
        };
        if ty.bits != 32 || !matches!(ty.kind, Kind::Int | Kind::Float) || ty.comps > 4 {
            ok = false;
            return;
        }
        let comps = u32::from(ty.comps);
        let konst = consts.splat(offset).map(|c| c as u32);
        let fits = match konst {
            Some(o) => o.is_multiple_of(4) && o / 4 + comps <= n,
            None => align >= 4 && comps <= n,
        };
        if !fits {
            ok = false;
            return;
        }
        let starts = starts_of(konst, align, comps, n);
        accesses.push(Access {
            konst,
            starts,
            ty,
            store,
        });
    });
    ok.then_some((n, accesses))
}

/// What replacement needs: the variable type of every slot, or None to keep scratch.
fn plan(f: &Function) -> Option<Vec<Type>> {
    let (n, accesses) = slot_accesses(f)?;
    if n > MAX_SLOTS {
        return None;
    }
    let dynamic = accesses.iter().any(|a| a.konst.is_none());
    if dynamic {
        let select: u32 = accesses
            .iter()
            .filter(|a| a.konst.is_none())
            .map(|a| {
                let k = a.starts.len() as u32;
                let per_comp = if a.store { 2 * k } else { 2 * (k - 1) };
                per_comp * u32::from(a.ty.comps)
            })
            .sum();
        if n > MAX_DYN_SLOTS || select > SCRATCH_COST * accesses.len() as u32 {
            return None;
        }
    }
    // A slot every access reads or writes as a float is a float variable; otherwise an
    // integer one (a float access to it goes through a bitcast).
    let mut float = vec![true; n as usize];
    let mut used = vec![false; n as usize];
    for a in &accesses {
        for &s in &a.starts {
            for j in 0..u32::from(a.ty.comps) {
                let s = (s + j) as usize;
                used[s] = true;
                float[s] &= a.ty.kind == Kind::Float;
            }
        }
    }
    Some(
        (0..n as usize)
            .map(|s| {
                if used[s] && float[s] {
                    Type::F32
                } else {
                    Type::I32
                }
            })
            .collect(),
    )
}

/// `x` as type `t` (a bitcast between a slot's type and an access's).
fn cast(b: &mut Builder, x: Value, t: Type) -> Value {
    if b.ty(x) == t {
        x
    } else {
        b.alu(AluOp::Bitcast, t, &[x])
    }
}

/// The slot each start of an access may be at: its constant byte offset's, or every slot its
/// offset's alignment `align` allows that leaves room for its `comps` components of the `n`
/// (checked by [`slot_accesses`]: a constant offset is 4-aligned and in bounds, `align >= 4`,
/// `comps <= n`).
pub(crate) fn starts_of(konst: Option<u32>, align: u32, comps: u32, n: u32) -> Vec<u32> {
    match konst {
        Some(o) => vec![o / 4],
        None => (0..=n - comps).step_by((align / 4) as usize).collect(),
    }
}

/// Replaces small private memory by values (see the module comment). Returns true if it did.
pub fn opt_private_arrays(f: &mut Function) -> bool {
    let Some(slots) = plan(f) else {
        return false;
    };
    let n = slots.len() as u32;
    let base = f.vars.len() as u32;
    f.vars.extend(slots.iter().copied());
    let consts = f.consts();
    let vars = f.vars.clone();
    // A slot's variable read as the access's scalar type `t`.
    let load = |b: &mut Builder, s: u32, t: Type| -> Value {
        let v = Var(base + s);
        let x = b.emit(vars[v.0 as usize], Op::LoadVar(v));
        cast(b, x, t)
    };
    expand_instrs(f, &mut |i, b| match i.op {
        Op::Load {
            space: Space::Local,
            offset,
            align,
        } => {
            let Some(d) = i.dst else { return false };
            let ty = b.ty(d);
            let t = Type::scalar(ty.kind, 32);
            let comps = u32::from(ty.comps);
            let starts = starts_of(consts.splat(offset).map(|c| c as u32), align, comps, n);
            let xs: Vec<Value> = (0..comps)
                .map(|j| dyn_load(b, offset, &starts, j, t, &load))
                .collect();
            if comps == 1 {
                b.emit_to(d, Op::Alu(AluOp::Mov, xs));
            } else {
                b.emit_to(d, Op::Vec(xs));
            }
            true
        }
        Op::Store {
            space: Space::Local,
            offset,
            value,
            align,
        } => {
            let ty = b.ty(value);
            let comps = u32::from(ty.comps);
            let starts = starts_of(consts.splat(offset).map(|c| c as u32), align, comps, n);
            for j in 0..comps {
                let x = if comps == 1 {
                    value
                } else {
                    b.extract(value, j as u8)
                };
                for &s in &starts {
                    let v = Var(base + s + j);
                    let vt = vars[v.0 as usize];
                    let x = cast(b, x, vt);
                    let new = if starts.len() == 1 {
                        x
                    } else {
                        let ot = b.ty(offset);
                        let k = b.konst(ot, u64::from(s * 4));
                        let c = b.alu(AluOp::Ieq, Type::B1, &[offset, k]);
                        let old = b.emit(vt, Op::LoadVar(v));
                        b.alu(AluOp::Bcsel, vt, &[c, x, old])
                    };
                    b.emit_void(Op::StoreVar(v, new));
                }
            }
            true
        }
        _ => false,
    });
    f.local_mem_size = 0;
    super::vars_to_ssa(f);
    true
}

/// Component `j` of a load at `offset` that may start at any of `starts`: the slot's value
/// for one start, else a binary tree of `ult offset, 4 * start` and `bcsel` over the slots
/// `start + j`, as type `t`.
fn dyn_load(
    b: &mut Builder,
    offset: Value,
    starts: &[u32],
    j: u32,
    t: Type,
    load: &dyn Fn(&mut Builder, u32, Type) -> Value,
) -> Value {
    if let [s] = starts {
        return load(b, s + j, t);
    }
    let mid = starts.len() / 2;
    let ot = b.ty(offset);
    let k = b.konst(ot, u64::from(starts[mid] * 4));
    let c = b.alu(AluOp::Ult, Type::B1, &[offset, k]);
    let lo = dyn_load(b, offset, &starts[..mid], j, t, load);
    let hi = dyn_load(b, offset, &starts[mid..], j, t, load);
    b.alu(AluOp::Bcsel, t, &[c, lo, hi])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_shader;

    /// Runs the pass on `input` (a shader, for its private-memory size) and compares with
    /// `expected`, both renumbered.
    fn check(input: &str, expected: &str) {
        let mut s = parse_shader(input).expect("input parses");
        crate::validate::validate(&s.func).expect("input is valid");
        opt_private_arrays(&mut s.func);
        crate::validate::validate(&s.func).unwrap_or_else(|e| panic!("{e}\n{s}"));
        s.func.renumber();
        let mut e = parse_shader(expected).expect("expected parses");
        e.func.renumber();
        assert_eq!(s.to_string(), e.to_string());
    }

    /// Unchanged by the pass.
    fn kept(input: &str) {
        check(input, input);
    }

    #[test]
    fn constant_offsets_become_values() {
        check(
            "shader local_size 1 1 1 shared 0 local 8 push 0
            %0:i32 = const 0
            %1:i32 = const 4
            %2:f32 = const 1.5
            store local %0, %2 align 4
            %3:i32 = sysval local_invocation_index
            store local %1, %3 align 4
            %4:f32 = load local %0 align 4
            %5:i32 = load local %1 align 4
            store ssbo[0] %0, %4 align 4
            store ssbo[0] %1, %5 align 4",
            "shader local_size 1 1 1 shared 0 local 0 push 0
            %10:f32 = const 0.0
            %11:i32 = const 0
            %0:i32 = const 0
            %1:i32 = const 4
            %2:f32 = const 1.5
            %3:i32 = sysval local_invocation_index
            %4:f32 = mov %2
            %5:i32 = mov %3
            store ssbo[0] %0, %4 align 4
            store ssbo[0] %1, %5 align 4",
        );
    }

    /// `const uint idx[4] = ...; x = idx[i];` (limits_ubo_range_64k's shape): the run-time
    /// read is a two-level select tree over the four words.
    #[test]
    fn run_time_read_is_a_select_tree() {
        check(
            "shader local_size 8 1 1 shared 0 local 16 push 0
            %0:i32 = const 0
            %1:i32 = const 4
            %2:i32 = const 8
            %3:i32 = const 12
            %4:i32 = const 10
            %5:i32 = const 11
            %6:i32 = const 12
            %7:i32 = const 13
            store local %0, %4 align 4
            store local %1, %5 align 4
            store local %2, %6 align 4
            store local %3, %7 align 4
            %8:i32 = sysval local_invocation_index
            %9:i32 = imul %8, %1
            %10:i32 = load local %9 align 4
            store ssbo[0] %9, %10 align 4",
            "shader local_size 8 1 1 shared 0 local 0 push 0
            %30:i32 = const 0
            %31:i32 = const 0
            %32:i32 = const 0
            %33:i32 = const 0
            %0:i32 = const 0
            %1:i32 = const 4
            %2:i32 = const 8
            %3:i32 = const 12
            %4:i32 = const 10
            %5:i32 = const 11
            %6:i32 = const 12
            %7:i32 = const 13
            %8:i32 = sysval local_invocation_index
            %9:i32 = imul %8, %1
            %20:i32 = const 8
            %21:b1 = ult %9, %20
            %22:i32 = const 4
            %23:b1 = ult %9, %22
            %24:i32 = bcsel %23, %4, %5
            %25:i32 = const 12
            %26:b1 = ult %9, %25
            %27:i32 = bcsel %26, %6, %7
            %28:i32 = bcsel %21, %24, %27
            %10:i32 = mov %28
            store ssbo[0] %9, %10 align 4",
        );
    }

    /// A run-time store writes each slot it may reach through a select; a `vec2` of
    /// alignment 8 starts only at even slots.
    #[test]
    fn run_time_store_selects_per_slot() {
        check(
            "shader local_size 8 1 1 shared 0 local 16 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 8
            %2:i32 = imul %0, %1
            %3:f32x2 = const 1.0, 2.0
            store local %2, %3 align 8
            %4:i32 = const 12
            %5:f32 = load local %4 align 4
            store ssbo[0] %2, %5 align 4",
            "shader local_size 8 1 1 shared 0 local 0 push 0
            %90:f32 = const 0.0
            %91:f32 = const 0.0
            %92:f32 = const 0.0
            %93:f32 = const 0.0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 8
            %2:i32 = imul %0, %1
            %3:f32x2 = const 1.0, 2.0
            %10:f32 = extract %3, 0
            %11:i32 = const 0
            %12:b1 = ieq %2, %11
            %13:f32 = bcsel %12, %10, %90
            %14:i32 = const 8
            %15:b1 = ieq %2, %14
            %16:f32 = bcsel %15, %10, %92
            %20:f32 = extract %3, 1
            %21:i32 = const 0
            %22:b1 = ieq %2, %21
            %23:f32 = bcsel %22, %20, %91
            %24:i32 = const 8
            %25:b1 = ieq %2, %24
            %26:f32 = bcsel %25, %20, %93
            %4:i32 = const 12
            %5:f32 = mov %26
            store ssbo[0] %2, %5 align 4",
        );
    }

    /// The loop accumulator of pipeline_threads (`float acc[1]` indexed by the loop of one
    /// iteration, unrolled): carried by the loop as a value, not loaded and stored in scratch
    /// each iteration.
    #[test]
    fn loop_accumulator_becomes_loop_parameter() {
        check(
            "shader local_size 32 1 1 shared 0 local 4 push 0
            %0:i32 = const 0
            %1:f32 = const 0.0
            store local %0, %1 align 4
            %2:i32 = sysval local_invocation_index
            %3:i32 = loop (%4:i32 = %2) {
                %5:i32 = const 64
                %6:b1 = uge %4, %5
                if %6 {
                    break %4
                }
                %7:f32 = load ssbo[0] %4 align 4
                %8:f32 = load local %0 align 4
                %9:f32 = fadd %7, %8
                store local %0, %9 align 4
                %10:i32 = const 32
                %11:i32 = iadd %4, %10
                continue %11
            }
            %12:f32 = load local %0 align 4
            store ssbo[1] %2, %12 align 4",
            "shader local_size 32 1 1 shared 0 local 0 push 0
            %30:f32 = const 0.0
            %0:i32 = const 0
            %1:f32 = const 0.0
            %2:i32 = sysval local_invocation_index
            %3:i32, %20:f32 = loop (%4:i32 = %2, %21:f32 = %1) {
                %5:i32 = const 64
                %6:b1 = uge %4, %5
                if %6 {
                    break %4, %21
                }
                %7:f32 = load ssbo[0] %4 align 4
                %8:f32 = mov %21
                %9:f32 = fadd %7, %8
                %10:i32 = const 32
                %11:i32 = iadd %4, %10
                continue %11, %9
            }
            %12:f32 = mov %20
            store ssbo[1] %2, %12 align 4",
        );
    }

    #[test]
    fn large_narrow_and_costly_private_memory_stay_in_scratch() {
        // 33 words: more than MAX_SLOTS.
        kept(
            "shader local_size 1 1 1 shared 0 local 132 push 0
            %0:i32 = const 0
            %1:i32 = const 7
            store local %0, %1 align 4
            %2:i32 = load local %0 align 4
            store ssbo[0] %0, %2 align 4",
        );
        // A 16-bit access.
        kept(
            "shader local_size 1 1 1 shared 0 local 4 push 0
            %0:i32 = const 0
            %1:i16 = const 7
            store local %0, %1 align 4
            %2:i16 = load local %0 align 4
            store ssbo[0] %0, %2 align 4",
        );
        // Run-time accesses to 16 words: 2 * 16 per store and 2 * 15 per load against five
        // per scratch access.
        kept(
            "shader local_size 1 1 1 shared 0 local 64 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            store local %2, %0 align 4
            %3:i32 = load local %2 align 4
            store ssbo[0] %2, %3 align 4",
        );
    }
}
