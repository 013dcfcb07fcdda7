//! Optimisations on the LIR after instruction selection (before SIMD-width lowering).
//!
//! Instruction selection emits every component of a vector value (all three of
//! `gl_GlobalInvocationID`'s, say) and copies payload values (push constants) into virtual
//! registers before use. These passes clean that up where the middle end cannot see it:
//!
//! - [`propagate_payload_copies`]: a virtual register written once, by a plain `mov` of a
//!   scalar payload register (`g1.0<0,1,0>`: push constants, the driver register; the payload
//!   registers below the allocatable file are never written by the kernel), is read from the
//!   payload register directly as a scalar region.
//! - [`dce`]: ALU and math instructions whose destination bytes no other instruction reads
//!   are removed, to a fixed point (a worklist over per-GRF read counts: linear in the
//!   program).
//!
//! Each returns true when it changed the program; `backend::compile_one` runs them and logs
//! the LIR after each that did (`RUST_LOG=trace`).

use super::lir::{Base, LInst, LOp, Opnd, Program};
use ferrite_isa::{CondMod, Opcode, Type};

/// ALU opcodes with no effect besides writing `dst` (no accumulator, no control flow).
fn is_pure_alu(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Mov | Sel
            | Not
            | And
            | Or
            | Xor
            | Shr
            | Shl
            | Asr
            | Add
            | Mul
            | Avg
            | Frc
            | Rndu
            | Rndd
            | Rnde
            | Rndz
            | Mad
            | Lrp
            | Bfe
            | Bfi1
            | Bfi2
            | Bfrev
            | Fbh
            | Fbl
            | Cbit
            | Lzd
    )
}

/// Whether `i` may be removed when nothing reads its destination.
fn removable(i: &LInst) -> bool {
    let op_ok = match i.op {
        LOp::Alu(o) => is_pure_alu(o),
        LOp::Math(_) => true,
        _ => false,
    };
    op_ok && i.cmod == CondMod::None && matches!(i.dst.base, Base::V(_))
}

/// The byte range `[start, end)` of a virtual register that an operand covers at `exec`
/// channels, or the whole register (`None` end) where the region does not say (message
/// payloads are named by their first register).
fn src_ranges(i: &LInst) -> impl Iterator<Item = (u32, u32, Option<u32>)> + '_ {
    let regioned = matches!(i.op, LOp::Alu(_) | LOp::Math(_));
    i.srcs.iter().filter_map(move |s| {
        let v = s.vreg()?;
        if regioned {
            Some((v, s.off, Some(s.off + s.span(u32::from(i.exec)))))
        } else {
            Some((v, 0, None))
        }
    })
}

/// First and last GRF (32-byte unit) of `[start, end)` in a register of `bytes` bytes.
fn grfs(start: u32, end: Option<u32>, bytes: u32) -> std::ops::RangeInclusive<u32> {
    let end = end.unwrap_or(bytes).min(bytes.max(start + 1));
    start / 32..=(end.max(start + 1) - 1) / 32
}

/// Removes ALU/math instructions whose destination bytes are never read (see the module
/// documentation). Returns true if anything was removed.
pub fn dce(prog: &mut Program) -> bool {
    let nv = prog.vregs.len();
    // GRF counts per register and their first index in the flat read-count table.
    let mut base = Vec::with_capacity(nv + 1);
    let mut total = 0u32;
    for r in &prog.vregs {
        base.push(total);
        total += r.regs();
    }
    let bytes = |v: u32| prog.vregs[v as usize].bytes;
    let mut reads = vec![0u32; total as usize];
    let mut writers: Vec<Vec<u32>> = vec![Vec::new(); nv];
    for (k, i) in prog.insts.iter().enumerate() {
        for (v, s, e) in src_ranges(i) {
            for g in grfs(s, e, bytes(v)) {
                reads[(base[v as usize] + g) as usize] += 1;
            }
        }
        if removable(i) {
            writers[i.dst.vreg().unwrap() as usize].push(k as u32);
        }
    }
    let mut dead = vec![false; prog.insts.len()];
    let mut work: Vec<u32> = (0..prog.insts.len() as u32)
        .filter(|k| removable(&prog.insts[*k as usize]))
        .collect();
    let mut any = false;
    while let Some(k) = work.pop() {
        let i = &prog.insts[k as usize];
        if dead[k as usize] {
            continue;
        }
        let v = i.dst.vreg().unwrap();
        let written = grfs(
            i.dst.off,
            Some(i.dst.off + i.dst.span(u32::from(i.exec))),
            bytes(v),
        );
        // Reads of the written GRFs by other instructions (its own, e.g. `x = x + 1`, do
        // not keep it alive).
        let live = written.clone().any(|g| {
            let own = src_ranges(i)
                .filter(|(sv, s, e)| *sv == v && grfs(*s, *e, bytes(v)).contains(&g))
                .count() as u32;
            reads[(base[v as usize] + g) as usize] > own
        });
        if live {
            continue;
        }
        dead[k as usize] = true;
        any = true;
        for (sv, s, e) in src_ranges(i) {
            for g in grfs(s, e, bytes(sv)) {
                let c = &mut reads[(base[sv as usize] + g) as usize];
                *c -= 1;
                if *c == 0 && sv != v {
                    work.extend(writers[sv as usize].iter().copied());
                }
            }
        }
    }
    if any {
        let mut k = 0;
        prog.insts.retain(|_| {
            k += 1;
            !dead[k - 1]
        });
    }
    any
}

/// Whether `t` is a 32-bit type a payload copy may be propagated through.
fn is_dword(t: Type) -> bool {
    matches!(t, Type::D | Type::UD | Type::F)
}

/// Replaces reads of registers that hold a copy of a scalar payload register with the payload
/// register itself (see the module documentation). `payload_end` is the first GRF the
/// register allocator may hand out: payload registers below it are never written.
pub fn propagate_payload_copies(prog: &mut Program, payload_end: u8) -> bool {
    let nv = prog.vregs.len();
    let mut writes = vec![0u32; nv];
    for i in &prog.insts {
        if let Some(v) = i.dst.vreg() {
            writes[v as usize] += 1;
        }
    }
    // The payload operand each single-write copy register holds, with the bytes it covers.
    let mut copy: Vec<Option<(Opnd, u32)>> = vec![None; nv];
    for i in &prog.insts {
        let Some(v) = i.dst.vreg() else { continue };
        let [s] = i.srcs.as_slice() else { continue };
        let plain = i.op == LOp::Alu(Opcode::Mov)
            && writes[v as usize] == 1
            && i.pred.is_none()
            && i.cmod == CondMod::None
            && !i.sat
            && !i.we_all
            && i.group == 0
            && i.dst.off == 0
            && i.dst.stride == 1
            && i.dst.ty == s.ty
            && is_dword(s.ty)
            && !s.neg
            && !s.abs
            && s.stride == 0
            && matches!(s.base, Base::G(g) if g < payload_end);
        if plain {
            copy[v as usize] = Some((*s, i.dst.span(u32::from(i.exec))));
        }
    }
    let mut any = false;
    for i in &mut prog.insts {
        // Regioned ALU sources only; three-source (align16) and math operands keep their
        // registers, as do the flag-setting `mov`s of booleans (retyped reads).
        let ok = match i.op {
            LOp::Alu(Opcode::Mad | Opcode::Lrp | Opcode::Bfe | Opcode::Bfi2) => false,
            LOp::Alu(o) => is_pure_alu(o) || o == Opcode::Cmp,
            _ => false,
        };
        if !ok {
            continue;
        }
        let exec = u32::from(i.exec);
        for s in &mut i.srcs {
            let Some(v) = s.vreg() else { continue };
            let Some((p, covered)) = copy[v as usize] else {
                continue;
            };
            if s.ty != p.ty || s.off + s.span(exec) > covered {
                continue;
            }
            *s = Opnd {
                neg: s.neg,
                abs: s.abs,
                ..p
            };
            any = true;
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::lir::Builder;

    fn text(p: &Program) -> String {
        p.to_string()
    }

    #[test]
    fn dce_removes_unread_components_and_their_inputs() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let id = b.vreg(Type::D, 3);
        let t = b.vreg(Type::D, 1);
        b.alu2(Opcode::Add, t, Opnd::g(0, 4, Type::D, 0), Opnd::d(1));
        // Components x, y and z; only x is read.
        b.mov(id, t);
        b.alu2(Opcode::Mul, id.offset(64), t, Opnd::d(2));
        b.alu2(Opcode::Mul, id.offset(128), t, Opnd::d(3));
        let a = b.vreg(Type::UD, 1);
        b.alu2(Opcode::Shl, a, id.retype(Type::UD), Opnd::ud(2));
        let data = b.vreg(Type::UD, 1);
        b.inst(
            LOp::UntypedWrite {
                surf: crate::backend::lir::Surface::Bti(0),
                comps: 1,
                comp_stride: 64,
            },
            Opnd::null(Type::UD),
            vec![a, data],
        );
        let before = text(&p);
        assert!(dce(&mut p));
        let after = text(&p);
        assert_eq!(before.lines().count() - 2, after.lines().count(), "{after}");
        assert!(
            !after.contains("mul"),
            "the y and z components are gone:\n{after}"
        );
        assert!(after.contains("add") && after.contains("mov") && after.contains("shl"));
        assert!(!dce(&mut p), "a second run finds nothing");
    }

    #[test]
    fn dce_follows_chains_and_ignores_self_reads() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let x = b.vreg(Type::D, 1);
        let y = b.vreg(Type::D, 1);
        b.mov(x, Opnd::d(5));
        b.alu2(Opcode::Add, x, x, Opnd::d(1)); // x = x + 1, read by nobody else
        b.alu2(Opcode::Add, y, x, Opnd::d(2)); // unread
                                               // A flag write stays even though its destination is unread.
        b.cmp(CondMod::G, y, x, Opnd::d(0));
        let before = text(&p);
        assert!(dce(&mut p), "{before}");
        let after = text(&p);
        assert_eq!(
            after.lines().count(),
            3,
            "only the unread add goes:\n{after}"
        );
        assert!(after.contains("cmp"));
    }

    #[test]
    fn dce_keeps_writes_read_by_a_message_payload() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let payload = b.vreg(Type::UD, 2);
        b.mov(payload, Opnd::ud(1));
        b.mov(payload.offset(32), Opnd::ud(2));
        // The send names only the first register of its two-register payload.
        b.inst(
            LOp::Send {
                sfid: ferrite_isa::Sfid::DpSampler,
                desc: 0,
                ex_desc: 0,
                mlen: 2,
                ex_mlen: 0,
                rlen: 0,
                eot: false,
                indirect: false,
            },
            Opnd::null(Type::UD),
            vec![payload.scalar()],
        );
        assert!(!dce(&mut p), "{p}");
        assert_eq!(p.insts.len(), 3);
    }

    #[test]
    fn payload_copy_is_read_from_the_payload_register() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let c = b.vreg(Type::F, 1);
        let x = b.vreg(Type::F, 1);
        let y = b.vreg(Type::F, 1);
        b.mov(c, Opnd::g(1, 4, Type::F, 0));
        b.alu2(Opcode::Mul, y, c.negate(), x);
        b.inst(LOp::Eot, Opnd::null(Type::UD), vec![y]);
        assert!(propagate_payload_copies(&mut p, 3));
        let after = text(&p);
        assert!(
            after.contains("mul(16@0) v2+0<1>:F, -g1+4<0>:F, v1+0<1>:F"),
            "{after}"
        );
        assert!(dce(&mut p));
        assert_eq!(p.insts.len(), 2, "the copy is dead:\n{p}");
    }

    #[test]
    fn copies_of_allocatable_or_rewritten_registers_are_kept() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 8);
        let c = b.vreg(Type::D, 1);
        let d = b.vreg(Type::D, 1);
        let y = b.vreg(Type::D, 1);
        // g5 is past the payload; d is written twice.
        b.mov(c, Opnd::g(5, 0, Type::D, 0));
        b.mov(d, Opnd::g(1, 0, Type::D, 0));
        b.alu2(Opcode::Add, d, d, Opnd::d(1));
        b.alu2(Opcode::Add, y, c, d);
        assert!(!propagate_payload_copies(&mut p, 3), "{p}");
    }
}
