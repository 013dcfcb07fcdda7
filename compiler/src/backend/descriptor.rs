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

use super::isel::Isel;
use super::lir::*;
use super::BackendError;
use crate::ir::{self, BufIndex, RedOp, Space};
use ferrite_isa::{CondMod, Opcode, Type};

type Res<T> = Result<T, BackendError>;

/// The descriptor-array space an instruction accesses, if any.
pub(super) fn indexed_space(op: &ir::Op) -> Option<BufIndex> {
    match op {
        ir::Op::Load { space, .. } | ir::Op::Store { space, .. } | ir::Op::Atomic { space, .. } => {
            match space {
                Space::SsboArray(x) | Space::UboArray(x) => Some(*x),
                Space::Ssbo(_)
                | Space::Ubo(_)
                | Space::Push
                | Space::Shared
                | Space::Local
                | Space::Global(_) => None,
            }
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
        let idx = self.comp(x.index, 0)?;
        let mut b = self.b();
        let clamped = b.vreg(Type::UD, 1);
        b.alu2(
            Opcode::Sel,
            clamped,
            idx.retype(Type::UD),
            Opnd::ud(x.count - 1),
        )
        .cmod = CondMod::L;
        if x.nonuniform {
            self.b().control(LOp::Do);
        }
        // The minimum index over the active channels, as a scalar.
        let t = self.sg_fill(clamped, u32::MAX);
        let m = self.sg_reduce(RedOp::Umin, t);
        let mut b = self.b();
        let bti = b.vreg(Type::UD, 1).scalar();
        b.at(1, 0, true)
            .alu2(Opcode::Add, bti, m.retype(Type::UD), Opnd::ud(x.base));
        if x.nonuniform {
            let mut b = self.b();
            b.cmp(
                CondMod::Z,
                Opnd::null(Type::UD),
                clamped,
                m.retype(Type::UD),
            );
            b.control(LOp::If).pred = Some(Pred {
                flag_sub: 0,
                inverse: false,
            });
        }
        let start = self.prog.insts.len();
        self.instr_on_surface(i, Surface::Indirect)?;
        for inst in &mut self.prog.insts[start..] {
            if inst.op.surface() == Some(Surface::Indirect) {
                inst.srcs.push(bti);
            }
        }
        if x.nonuniform {
            let mut b = self.b();
            b.control(LOp::Break);
            b.control(LOp::Endif);
            b.control(LOp::While);
        }
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
                let opts = BackendOptions {
                    no8: simd != 8,
                    no16: simd != 16,
                    no32: simd != 32,
                    validate: true,
                    ..BackendOptions::gen9()
                };
                let k = compile(&s, &opts).unwrap();
                let a0_sends = k
                    .asm
                    .lines()
                    .filter(|l| l.contains("send") && l.contains("a0<0,1,0>UD"))
                    .count();
                assert!(a0_sends >= 1, "SIMD{simd} nu={nu}:\n{}", k.asm);
                let whiles = k.asm.lines().filter(|l| l.contains("while")).count();
                assert_eq!(whiles, usize::from(nu), "SIMD{simd} nu={nu}:\n{}", k.asm);
            }
        }
    }
}
