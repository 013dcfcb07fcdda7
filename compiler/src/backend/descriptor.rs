//! Buffers of descriptor arrays chosen at run time (`Space::SsboArray` / `Space::UboArray`).
//!
//! A data-port message names its surface by a binding-table index in the message
//! descriptor, one index for all channels of the SEND. A run-time index is therefore
//! made uniform first and then given to the SEND through `a0` (the descriptor register
//! form of SEND: `a0.0 = descriptor | index`), as Mesa's brw does:
//!
//! * The index is clamped to the array (`min(index, count - 1)` unsigned), so no channel
//!   ever reaches the binding-table entry of another descriptor.
//! * A dynamically uniform index (no `NonUniform`): the unsigned minimum over the active
//!   channels is the value they all hold; the message runs once with it.
//! * A `NonUniform` index: a loop over the distinct indices. Each iteration takes the
//!   minimum index `m` over the channels still in the loop, runs the message for the
//!   channels whose index is `m`, and those channels leave the loop (`break`). The loop
//!   runs once per distinct index in the subgroup; a channel's result is written in the
//!   iteration that served it.
//!
//! Buffers past the binding table (descriptor slots at or above
//! `HwFacts::max_descriptor_btis`) have no surface: the kernel reads the bound range's GPU
//! address and size from the descriptor table the driver writes for the dispatch (its
//! address in the CURBE, `CurbeLayout::TABLE_LO` / `TABLE_HI`), checks in the shader that the
//! access lies inside the range and runs the access as an A64 message (see
//! [`Isel::table_access`]). Per-channel addresses need no uniform index, so `NonUniform`
//! indices need no loop there.

use super::isel::Isel;
use super::lir::*;
use super::{narrow, wide, BackendError};
use crate::hw::HwFacts;
use crate::ir::{self, BufIndex, RedOp, Space};
use ferrite_isa::{CondMod, Opcode, Type};

/// The descriptor slots (first, count) a buffer space reaches when they lie past the binding
/// table (then the whole array goes through the descriptor table); None for a buffer in
/// the binding table and for every other space.
pub(super) fn table_range(space: Space, hw: &HwFacts) -> Option<(u32, u32)> {
    let (first, count) = match space {
        Space::Ssbo(b) | Space::Ubo(b) => (b, 1),
        Space::SsboArray(x) | Space::UboArray(x) => (x.base, x.count),
        Space::Push | Space::Shared | Space::Local | Space::Global(_) => return None,
    };
    (first + count > hw.max_descriptor_btis()).then_some((first, count))
}

/// The buffer space a memory instruction or `buffer_size` names.
fn buffer_space(op: &ir::Op) -> Option<Space> {
    match op {
        ir::Op::Load { space, .. }
        | ir::Op::Store { space, .. }
        | ir::Op::Atomic { space, .. }
        | ir::Op::BufferSize(space) => Some(*space),
        _ => None,
    }
}

/// The descriptor-table slots an instruction reads (see [`table_range`]).
pub(super) fn table_access(op: &ir::Op, hw: &HwFacts) -> Option<(u32, u32)> {
    table_range(buffer_space(op)?, hw)
}

type Res<T> = Result<T, BackendError>;

/// The descriptor-array space an instruction accesses, if any.
pub(super) fn indexed_space(op: &ir::Op) -> Option<BufIndex> {
    match op {
        ir::Op::Load { space, .. } | ir::Op::Store { space, .. } | ir::Op::Atomic { space, .. } => {
            space.array()
        }
        _ => None,
    }
}

impl Isel<'_> {
    /// Selects a load, store or atomic on element `x.index` of a descriptor array.
    pub(super) fn indexed_access(&mut self, i: &ir::Instr, x: BufIndex) -> Res<()> {
        if x.count == 0 || x.base + x.count - 1 > self.hw.max_buffer_bti {
            return Err(BackendError::Internal(format!(
                "descriptor array at bti {}..{} beyond the binding table",
                x.base,
                x.base + x.count
            )));
        }
        let bti = if x.nonuniform {
            let clamped = self.clamped_index(x)?;
            let m = self.nonuniform_loop_head(clamped);
            self.nonuniform_if(clamped, m);
            if x.base == 0 {
                m
            } else {
                let mut b = self.b();
                let mut s1 = b.at(1, 0, true);
                let bti = s1.vreg(Type::UD, 1).scalar();
                s1.alu2(Opcode::Add, bti, m, Opnd::ud(x.base));
                bti
            }
        } else {
            self.uniform_index(x)?
        };
        let start = self.prog.insts.len();
        self.instr_on_surface(i, Surface::Indirect)?;
        for inst in &mut self.prog.insts[start..] {
            if inst.op.surface() == Some(Surface::Indirect) {
                inst.srcs.push(bti);
            }
        }
        if x.nonuniform {
            self.nonuniform_loop_end();
        }
        Ok(())
    }

    /// The index of `x` per channel, clamped to the array (`min(index, count - 1)`
    /// unsigned), as a UD vector.
    pub(super) fn clamped_index(&mut self, x: BufIndex) -> Res<Opnd> {
        let idx = self.comp(x.index, 0)?;
        let mut b = self.b();
        let c = b.vreg(Type::UD, 1);
        b.alu2(Opcode::Sel, c, idx.retype(Type::UD), Opnd::ud(x.count - 1))
            .cmod = CondMod::L;
        Ok(c)
    }

    /// Opens the loop over the distinct values of `key` (a UD vector, one element per
    /// channel) that a `NonUniform` index needs (module doc) and returns the key of the
    /// first channel still in the loop, as a scalar: `fbl` of the channel enables and one
    /// indirect read (docs/gen9.md 2.10.1), as brw does, where a minimum over the channels
    /// costs 2 + log2(width) instructions. [`Isel::nonuniform_if`] then selects the
    /// channels holding it.
    pub(super) fn nonuniform_loop_head(&mut self, key: Opnd) -> Opnd {
        self.b().control(LOp::Do);
        let first = self.first_enabled_channel();
        let w = self.w;
        let mut b = self.b();
        let mut s1 = b.at(1, 0, true);
        let m = s1.vreg(Type::UD, 1).scalar();
        s1.inst(
            LOp::Shuffle {
                width: w,
                lanes: Lanes::Index,
            },
            m,
            vec![key.retype(Type::UD), first],
        );
        m
    }

    /// The `if` around the message of one iteration: the channels whose `key` is `m`.
    pub(super) fn nonuniform_if(&mut self, key: Opnd, m: Opnd) {
        let mut b = self.b();
        b.cmp(CondMod::Z, Opnd::null(Type::UD), key, m);
        b.control(LOp::If).pred = Some(Pred {
            flag_sub: 0,
            inverse: false,
        });
    }

    /// Closes the iteration: the channels served leave the loop, the others go round again.
    pub(super) fn nonuniform_loop_end(&mut self) {
        let mut b = self.b();
        b.control(LOp::Break);
        b.control(LOp::Endif);
        b.control(LOp::While);
    }
}

impl Isel<'_> {
    /// The binding-table index of the array element a dynamically uniform index names, as a
    /// scalar UD: `base + min(index, count - 1)`, the index taken as the unsigned minimum
    /// over the active channels (they all hold it). Computed once per index value and array
    /// where it dominates the accesses (the cache follows the structured control flow, see
    /// `Isel::block`); an index already held as a scalar region (a push constant, a uniform
    /// ALU result) needs no reduction, and a base of 0 no `add`.
    pub(super) fn uniform_index(&mut self, x: BufIndex) -> Res<Opnd> {
        let key = (x.index, x.count, x.base);
        if let Some(&m) = self.desc_index.get(&key) {
            return Ok(m);
        }
        let idx = self.comp(x.index, 0)?.retype(Type::UD);
        let m = if idx.stride == 0 && matches!(idx.base, Base::V(_) | Base::G(_)) {
            idx
        } else {
            let t = self.sg_fill(idx, u32::MAX);
            self.sg_reduce(RedOp::Umin, t).retype(Type::UD)
        };
        let mut b = self.b();
        let mut s1 = b.at(1, 0, true);
        let c = s1.vreg(Type::UD, 1).scalar();
        s1.alu2(Opcode::Sel, c, m, Opnd::ud(x.count - 1)).cmod = CondMod::L;
        if x.base != 0 {
            s1.alu2(Opcode::Add, c, c, Opnd::ud(x.base));
        }
        self.desc_index.insert(key, c);
        Ok(c)
    }

    /// The bound range of a table descriptor, per channel: (GPU address as UQ, size in
    /// bytes as UD), read from the descriptor table at `16 * slot`. An array index is
    /// clamped to the array as surface accesses are.
    fn table_entry(&mut self, space: Space) -> Res<(Opnd, Opnd)> {
        let (first, count) = table_range(space, self.hw)
            .ok_or_else(|| BackendError::Internal(format!("{space} is not a table descriptor")))?;
        let [(rl, bl), (rh, bh)] = self
            .layout
            .table_slots()
            .ok_or_else(|| BackendError::Internal("no descriptor-table address".into()))?;
        let index = match space {
            Space::SsboArray(x) | Space::UboArray(x) => Some(self.comp(x.index, 0)?),
            _ => None,
        };
        let w = u32::from(self.w);
        let mut b = self.b();
        let slot = b.vreg(Type::UD, 1);
        match index {
            Some(idx) => {
                b.alu2(Opcode::Sel, slot, idx.retype(Type::UD), Opnd::ud(count - 1))
                    .cmod = CondMod::L;
                b.alu2(Opcode::Add, slot, slot, Opnd::ud(first));
            }
            None => {
                b.mov(slot, Opnd::ud(first));
            }
        }
        b.alu2(Opcode::Shl, slot, slot, Opnd::ud(4));
        let entry = b.vreg(Type::UQ, 1);
        b.mov(wide::lo(entry), Opnd::g(rl, bl, Type::UD, 0));
        b.mov(wide::hi(entry), Opnd::g(rh, bh, Type::UD, 0));
        let off = b.vreg(Type::UQ, 1);
        b.mov(off, slot);
        b.alu2(Opcode::Add, entry, entry, off);
        // Dwords 0-1 the address, 2 the size.
        let words = b.vreg(Type::UD, 3);
        b.inst(
            LOp::UntypedRead {
                surf: Surface::A64,
                comps: 3,
                comp_stride: 4 * w,
            },
            words,
            vec![entry],
        );
        let base = b.vreg(Type::UQ, 1);
        b.mov(wide::lo(base), words);
        b.mov(wide::hi(base), words.offset(4 * w));
        Ok((base, words.offset(8 * w)))
    }

    /// Bytes a memory instruction touches per channel.
    fn access_bytes(&self, op: &ir::Op, dst: Option<ir::Value>) -> u32 {
        let bytes = |t: ir::Type| u32::from(t.comps) * (u32::from(t.bits) / 8).max(1);
        match op {
            ir::Op::Store { value, .. } => bytes(self.func.ty(*value)),
            ir::Op::Atomic { data, .. } => data
                .first()
                .map(|v| bytes(self.func.ty(*v)))
                .or(dst.map(|d| bytes(self.func.ty(d))))
                .unwrap_or(4),
            _ => dst.map_or(4, |d| bytes(self.func.ty(d))),
        }
    }

    /// Selects a load, store, atomic or `buffer_size` on a buffer past the binding table.
    /// The access runs as an A64 message at the bound range's address plus the offset, in
    /// an `if` over the channels whose whole access lies inside the range (A64 messages are
    /// not bounds-checked): outside it a load or atomic returns 0 and a store is dropped, as
    /// a surface access past its surface's end behaves.
    pub(super) fn table_access(&mut self, i: &ir::Instr) -> Res<()> {
        let space = buffer_space(&i.op)
            .ok_or_else(|| BackendError::Internal("table access without a buffer".into()))?;
        let (base, size) = self.table_entry(space)?;
        if let ir::Op::BufferSize(_) = i.op {
            let d = i.dst.expect("buffer_size has a destination");
            let dst = self.def_reg(d)?;
            self.b().mov(dst.retype(Type::UD), size);
            return Ok(());
        }
        let offset = match &i.op {
            ir::Op::Load { offset, .. }
            | ir::Op::Store { offset, .. }
            | ir::Op::Atomic { offset, .. } => *offset,
            _ => {
                return Err(BackendError::Internal(
                    "table access without an offset".into(),
                ))
            }
        };
        let bytes = self.access_bytes(&i.op, i.dst);
        let off = self.comp(offset, 0)?;
        let mut b = self.b();
        // In bounds: offset + bytes <= size, in 64 bits so no offset wraps around.
        let end = b.vreg(Type::UQ, 1);
        b.mov(end, off.retype(Type::UD));
        let addr = b.vreg(Type::UQ, 1);
        b.alu2(Opcode::Add, addr, base, end);
        b.alu2(Opcode::Add, end, end, Opnd::imm(Type::UQ, u64::from(bytes)));
        let size64 = b.vreg(Type::UQ, 1);
        b.mov(size64, size);
        b.cmp(CondMod::Le, Opnd::null(Type::UQ), end, size64);
        b.control(LOp::If).pred = Some(Pred {
            flag_sub: 0,
            inverse: false,
        });
        self.table_address = Some(addr);
        let r = self.instr_at_table_address(i);
        self.table_address = None;
        r?;
        if let Some(d) = self.read_dst(i) {
            self.b().control(LOp::Else);
            let t = self.func.ty(d);
            for c in 0..usize::from(t.comps) {
                let o = self.dst_comp(d, c);
                let (o, zero) = if wide::is_wide(t) {
                    (o.retype(Type::UQ), Opnd::imm(Type::UQ, 0))
                } else {
                    (narrow::slot(o).retype(Type::UD), Opnd::ud(0))
                };
                self.b().mov(o, zero);
            }
        }
        self.b().control(LOp::Endif);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{compile, BackendOptions};
    use crate::interp::{run, Memory};
    use crate::parse::parse_shader;

    /// Invocation i loads element i of buffer `i % 3` of the array at BTIs 1..3 (a NonUniform
    /// index when `nu`) and stores it to BTI 0.
    fn shader(nu: bool) -> String {
        format!(
            "shader local_size 16 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 3
            %2:i32 = umod %0, %1
            %3:i32 = const 4
            %4:i32 = imul %0, %3
            %5:i32 = load ssbo{}[1+%2<3] %4 align 4
            store ssbo[0] %4, %5 align 4",
            if nu { ".nu" } else { "" }
        )
    }

    #[test]
    fn indexed_space_prints_and_parses_back() {
        for nu in [false, true] {
            let s = parse_shader(&shader(nu)).unwrap();
            crate::validate::validate(&s.func).unwrap();
            let text = s.func.to_string();
            let want = if nu {
                "ssbo.nu[1+%2<3]"
            } else {
                "ssbo[1+%2<3]"
            };
            assert!(text.contains(want), "{text}");
            assert_eq!(
                crate::parse::parse_function(&text).unwrap().to_string(),
                text
            );
        }
    }

    #[test]
    fn reference_interpreter_reads_each_lanes_buffer() {
        let s = parse_shader(&shader(true)).unwrap();
        let mut mem = Memory::default();
        mem.ssbo.insert(0, vec![0; 64]);
        for k in 0..3u32 {
            let words: Vec<u8> = (0..16u32)
                .flat_map(|e| (100 * (k + 1) + e).to_le_bytes())
                .collect();
            mem.ssbo.insert(1 + k, words);
        }
        run(&s, [1, 1, 1], 16, &mut mem).unwrap();
        for i in 0..16u32 {
            let got = u32::from_le_bytes(mem.ssbo[&0][4 * i as usize..][..4].try_into().unwrap());
            assert_eq!(got, 100 * (i % 3 + 1) + i, "invocation {i}");
        }
    }

    /// The message takes its descriptor from a0; a NonUniform index adds the loop.
    #[test]
    fn indexed_message_uses_a0_and_nonuniform_adds_a_loop() {
        for simd in [8u32, 16, 32] {
            for nu in [false, true] {
                let s = parse_shader(&shader(nu)).unwrap();
                let opts = BackendOptions::gen9_at(simd);
                let k = compile(&s, &opts).unwrap();
                let a0_sends = k
                    .asm
                    .lines()
                    .filter(|l| l.contains("send") && l.contains("a0<0,1,0>UD"))
                    .count();
                assert!(a0_sends >= 1, "SIMD{simd} nu={nu}:\n{}", k.asm);
                let whiles = k.asm.lines().filter(|l| l.contains("while")).count();
                assert_eq!(whiles, usize::from(nu), "SIMD{simd} nu={nu}:\n{}", k.asm);
                // The loop head: the first enabled channel's key by `fbl` of ce0 and one
                // scalar indirect read, not a minimum over the channels.
                let ctx = format!("SIMD{simd} nu={nu}:\n{}", k.asm);
                assert_eq!(count(&k.asm, "fbl(1)"), usize::from(nu), "{ctx}");
                assert_eq!(count(&k.asm, "mask0<0,1,0>UD"), usize::from(nu), "{ctx}");
                if nu {
                    // Only the per-channel clamp selects; no reduction step (sel.l(2), (1)).
                    assert_eq!(count(&k.asm, "sel.l(1)"), 0, "{ctx}");
                    assert_eq!(count(&k.asm, "sel.l(2)"), 0, "{ctx}");
                }
            }
        }
    }

    /// Lines of `asm` containing `pat`.
    fn count(asm: &str, pat: &str) -> usize {
        asm.lines().filter(|l| l.contains(pat)).count()
    }

    /// A dynamically uniform index used by three accesses is clamped and reduced over the
    /// channels once (one `sel.l(2)` step of the minimum); an access in an `if` arm gets its
    /// own reduction, and the one after the `if` reuses the reduction before it, not the
    /// arm's. No `add` of a zero base.
    #[test]
    fn uniform_index_is_computed_once_where_it_dominates() {
        let src = "shader local_size 16 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:i32 = load ubo[4] %1 align 4
            %3:i32 = const 4
            %4:i32 = imul %0, %3
            %5:i32 = load ssbo[0+%2<3] %4 align 4
            %6:i32 = load ssbo[0+%2<3] %1 align 4
            %7:i32 = iadd %5, %6
            %8:b1 = ilt %0, %3
            if %8 {
                %9:i32 = load ssbo[0+%2<2] %4 align 4
                store ssbo[5] %4, %9 align 4
            }
            store ssbo[0+%2<3] %4, %7 align 4";
        let s = parse_shader(src).unwrap();
        for simd in [8u32, 16, 32] {
            let k = compile(&s, &BackendOptions::gen9_at(simd)).unwrap();
            // One reduction outside the `if`, one for the arm's array of two.
            assert_eq!(count(&k.asm, "sel.l(2)"), 2, "SIMD{simd}:\n{}", k.asm);
            assert!(
                !k.asm
                    .lines()
                    .any(|l| l.contains("add(1)") && l.contains(" 0x00000000UD")),
                "SIMD{simd}:\n{}",
                k.asm
            );
        }
    }

    /// A dynamically uniform index computed in an `if` arm is not reused after the `if`:
    /// a thread whose channels all skip the arm jumps over it.
    #[test]
    fn uniform_index_of_an_arm_is_not_reused_after_it() {
        let src = "shader local_size 16 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:i32 = load ubo[4] %1 align 4
            %3:i32 = const 4
            %4:i32 = imul %0, %3
            %8:b1 = ilt %0, %3
            if %8 {
                %9:i32 = load ssbo[1+%2<3] %4 align 4
                store ssbo[0] %4, %9 align 4
            }
            %5:i32 = load ssbo[1+%2<3] %4 align 4
            store ssbo[0] %4, %5 align 4";
        let s = parse_shader(src).unwrap();
        for simd in [8u32, 16, 32] {
            let k = compile(&s, &BackendOptions::gen9_at(simd)).unwrap();
            assert_eq!(count(&k.asm, "sel.l(2)"), 2, "SIMD{simd}:\n{}", k.asm);
        }
    }

    /// Buffers past the binding table (slot 251 and up; an array straddling the boundary
    /// with them) are read through the descriptor table: no binding-table entry, the table's
    /// address in the CURBE, the runs in `table_descriptors`, and A64 messages guarded by an
    /// `if` (loads return 0 outside the range: an `else`).
    #[test]
    fn buffers_past_the_binding_table_use_the_descriptor_table() {
        let src = "shader local_size 16 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 3
            %2:i32 = umod %0, %1
            %3:i32 = const 4
            %4:i32 = imul %0, %3
            %5:i32 = load ssbo[300] %4 align 4
            %6:i32 = load ssbo.nu[250+%2<3] %4 align 4
            %7:i32 = buffer_size ssbo[400]
            %8:i32 = iadd %5, %6
            %9:i32 = iadd %8, %7
            %10:i32 = atomic_add ssbo[301] %4, %9
            store ssbo[0] %4, %10 align 4";
        let s = parse_shader(src).unwrap();
        for simd in [8u32, 16, 32] {
            let opts = BackendOptions::gen9_at(simd);
            let k = compile(&s, &opts).unwrap();
            assert_eq!(k.btis, vec![0], "SIMD{simd}");
            assert_eq!(
                k.table_descriptors,
                vec![(250, 3), (300, 2), (400, 1)],
                "SIMD{simd}"
            );
            assert!(k.layout.table_slots().is_some(), "SIMD{simd}");
            assert_eq!(k.layout.push_bti, None);
            // No a0-indexed surface message and no loop: the index is per channel.
            assert!(!k.asm.contains("a0<0,1,0>UD"), "SIMD{simd}:\n{}", k.asm);
            assert!(!k.asm.contains("while"), "SIMD{simd}:\n{}", k.asm);
            let ifs = k.asm.lines().filter(|l| l.contains(" if(")).count();
            let elses = k.asm.lines().filter(|l| l.contains(" else(")).count();
            assert!(ifs >= 3 && elses >= 3, "SIMD{simd}:\n{}", k.asm);
        }
    }
}
