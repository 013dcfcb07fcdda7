//! Private arrays in registers: a function's private memory (`Space::Local`) that the middle
//! end's `private_arrays` left in memory (too many run-time reads for selects) becomes one
//! virtual register of a row per 32-bit slot, each row one element per channel (slot `s` of
//! channel `c` at byte `(s x W + c) x 4`, like the components of a vector value), instead of
//! a block per lane in scratch:
//! - an access at a constant offset is a `mov` per component to or from its rows;
//! - a load at a run-time offset is a row gather per component ([`Lanes::Table`]: the row
//!   index `offset >> 2`, then `a0` addresses and one VxH indirect `mov` per 16 channels,
//!   `emit::shuffle`), the same gather a subgroup shuffle uses;
//! - a store at a run-time offset writes each row it may start at under
//!   `offset == 4 x row` (`cmp` and a predicated `mov` per component). A destination has a
//!   single `a0` address (docs/gen9.md, "Per-channel gathers"), so no indirect write serves
//!   channels whose indices differ. The execution mask keeps disabled channels' rows, so the
//!   writes are right in non-uniform control flow.
//!
//! Policy ([`register_rows`]): every access a 32-bit load or store the middle end accepts
//! for values (`passes::private::slot_accesses`), at least one load at a run-time offset
//! (without one the middle end's selects cost as little), and the array at most
//! [`ARRAY_SHARE`] of the register file at this width (brw keeps arrays of up to 16
//! elements out of scratch, "16 floats is 1/8 of the entire register file" at SIMD8; a
//! quarter leaves the other values room at every width Ferrite tries: 12 slots fit at
//! SIMD8 and SIMD16, not at SIMD32). Larger arrays stay in scratch.
//!
//! Liveness: the register allocator takes a register to be live from its first to its last
//! reference, extended over loops that reference it and something before them. The array's
//! rows are written piecewise, and a row written late in a loop's body may be read early in
//! the next iteration; when the first access is inside a loop, a one-channel write of row 0
//! at the program's start makes the array live across every loop that uses it.

use super::*;
use crate::hash::HashSet;
use crate::passes::private::{slot_accesses, starts_of};

/// The largest share of the GRF file a private array may take (as 1 / this).
const ARRAY_SHARE: u32 = 4;

/// The array: its register (row 0) and its rows.
#[derive(Clone, Copy, Debug)]
pub(super) struct RegArray {
    reg: Opnd,
    rows: u32,
    /// Whether an access has been selected (the first one decides about the anchor).
    used: bool,
}

/// The rows of `f`'s private memory when it lives in registers at width `w`, per the
/// policy in the module comment.
pub(super) fn register_rows(f: &ir::Function, w: u32, hw: &HwFacts) -> Option<u32> {
    let (n, accesses) = slot_accesses(f)?;
    let dynamic_load = accesses.iter().any(|a| !a.store && a.konst.is_none());
    let bytes = n * w * 4;
    let budget = u32::from(hw.grf_count) * 32 / ARRAY_SHARE;
    (dynamic_load && bytes <= budget && n <= u32::from(u8::MAX)).then_some(n)
}

/// The word indices of the run-time offsets of 32-bit table reads and writes (private memory,
/// push constants): an offset computed as `ishl x, 2` or `imul x, 4` maps to `x`, which
/// indexes the table without the shift back (`x` past the table is as undefined as its
/// offset, and the gather clamps either). Also the sources of each `vec` stored to private
/// memory, which the rows take without the `vec`'s copies.
pub(super) struct TableIndices {
    pub words: HashMap<ir::Value, ir::Value>,
    pub stored_vecs: HashMap<ir::Value, Vec<ir::Value>>,
}

pub(super) fn table_indices(f: &ir::Function) -> TableIndices {
    let consts = f.consts();
    let mut offsets = HashSet::default();
    let mut stored = HashSet::default();
    f.for_each_node(&mut |n| {
        let Node::Instr(i) = n else { return };
        match &i.op {
            Op::Load {
                space: Space::Local | Space::Push,
                offset,
                ..
            } => {
                offsets.insert(*offset);
            }
            Op::Store {
                space: Space::Local,
                offset,
                value,
                ..
            } => {
                offsets.insert(*offset);
                stored.insert(*value);
            }
            _ => {}
        }
    });
    let mut words = HashMap::default();
    f.for_each_node(&mut |n| {
        let Node::Instr(ir::Instr {
            dst: Some(d),
            op: Op::Alu(op, srcs),
            ..
        }) = n
        else {
            return;
        };
        if !offsets.contains(d) || f.ty(*d) != ir::Type::I32 {
            return;
        }
        let x = match (op, srcs.as_slice()) {
            (AluOp::Ishl, [x, k]) if consts.splat(*k) == Some(2) => *x,
            (AluOp::Imul, [x, k]) | (AluOp::Imul, [k, x]) if consts.splat(*k) == Some(4) => *x,
            _ => return,
        };
        words.insert(*d, x);
    });
    TableIndices {
        words,
        stored_vecs: vec_sources(f, |d| stored.contains(&d)),
    }
}

impl Isel<'_> {
    /// The word index of a run-time table offset (see [`table_indices`]): the value the
    /// offset scales by 4, or the offset shifted right by 2.
    pub(super) fn word_index(&mut self, offset: ir::Value) -> Res<Opnd> {
        if let Some(&x) = self.table_indices.words.get(&offset) {
            return Ok(self.comp(x, 0)?.retype(Type::UD));
        }
        let off = self.comp(offset, 0)?;
        let mut b = self.b();
        let idx = b.vreg(Type::UD, 1);
        b.alu2(Opcode::Shr, idx, off.retype(Type::UD), Opnd::ud(2));
        Ok(idx)
    }

    /// A new array of `rows` rows (see [`register_rows`]).
    pub(super) fn reg_array(&mut self, rows: u32) -> RegArray {
        let reg = self.b().vreg(Type::UD, rows);
        RegArray {
            reg,
            rows,
            used: false,
        }
    }

    /// Marks the array used; at the first access inside a loop, writes channel 0 of row 0
    /// at the start of the program (see the module comment on liveness).
    fn array_access(&mut self) -> Res<RegArray> {
        let mut a = self
            .private_regs
            .ok_or_else(|| BackendError::Internal("no private register array".into()))?;
        if !a.used && !self.loops.is_empty() {
            let mut b = Builder::new(&mut self.prog, 1);
            b.we_all = true;
            b.mov(a.reg, Opnd::ud(0));
            let anchor = self.prog.insts.pop().expect("the anchor was just pushed");
            self.prog.insts.insert(0, anchor);
        }
        a.used = true;
        self.private_regs = Some(a);
        Ok(a)
    }

    /// The bytes of one row.
    fn row_bytes(&self) -> u32 {
        4 * u32::from(self.w)
    }

    /// `d = load local[offset]` from the register array.
    pub(super) fn private_load(&mut self, d: ir::Value, offset: ir::Value) -> Res<()> {
        let a = self.array_access()?;
        let t = self.func.ty(d);
        let ty = hw_ty(t)?;
        self.def_reg(d)?;
        let row = self.row_bytes();
        if let Some(Val::Imm(k)) = &self.vals[offset.0 as usize] {
            let first = (k.first().copied().unwrap_or(0) / 4) as u32;
            for c in 0..t.comps as u32 {
                let dst = self.dst_comp(d, c as usize);
                let src = a.reg.offset((first + c) * row).retype(ty);
                self.b().mov(dst, src);
            }
            return Ok(());
        }
        let idx = self.word_index(offset)?;
        let lanes = self.lane_bytes(4);
        let w = self.w;
        for c in 0..t.comps as u32 {
            let dst = self.dst_comp(d, c as usize).retype(Type::UD);
            // Component c reads the rows from c on: index 0 is row c.
            self.b().inst(
                LOp::Shuffle {
                    width: w,
                    lanes: Lanes::Table {
                        count: (a.rows - c) as u8,
                        shift: row.trailing_zeros() as u8,
                        own: true,
                    },
                },
                dst,
                vec![a.reg.offset(c * row), idx, lanes],
            );
        }
        Ok(())
    }

    /// `store local[offset] = value` into the register array. `align` is the offset's known
    /// alignment: a run-time offset can only be a multiple of it.
    pub(super) fn private_store(
        &mut self,
        offset: ir::Value,
        value: ir::Value,
        align: u32,
    ) -> Res<()> {
        let a = self.array_access()?;
        let comps = self.func.ty(value).comps as u32;
        let row = self.row_bytes();
        // A `vec`'s components straight from its sources (its copies are then unread).
        let srcs = match self.table_indices.stored_vecs.get(&value).cloned() {
            Some(parts) => parts
                .iter()
                .map(|p| self.comp(*p, 0))
                .collect::<Res<Vec<_>>>()?,
            None => (0..comps as usize)
                .map(|c| self.comp(value, c))
                .collect::<Res<Vec<_>>>()?,
        };
        if let Some(Val::Imm(k)) = &self.vals[offset.0 as usize] {
            let first = (k.first().copied().unwrap_or(0) / 4) as u32;
            let mut b = self.b();
            for (c, s) in srcs.iter().enumerate() {
                b.mov(a.reg.offset((first + c as u32) * row).retype(s.ty), *s);
            }
            return Ok(());
        }
        let idx = self.word_index(offset)?;
        let mut b = self.b();
        for start in starts_of(None, align, comps, a.rows) {
            b.cmp(CondMod::Z, Opnd::null(Type::UD), idx, Opnd::ud(start));
            for (c, s) in srcs.iter().enumerate() {
                let dst = a.reg.offset((start + c as u32) * row).retype(s.ty);
                b.mov(dst, *s).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
        }
        Ok(())
    }
}
