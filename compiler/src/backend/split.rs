//! Splitting virtual registers into the pieces instructions access separately, before
//! register allocation (the idea of brw's `split_virtual_grfs`).
//!
//! Instruction selection gives a vector value one register of `components x width` bytes:
//! a SIMD32 `vec4` is 16 GRFs. After SIMD-width lowering each instruction reads or writes
//! one component of one half (2 GRFs), yet the allocator sees the 16 GRFs as one node,
//! live from the first write of any part to the last read of any part, and spills it whole.
//! Here every register is cut at each GRF boundary that no operand crosses; each piece
//! becomes a register of its own, with its own (shorter) live interval, so that a component
//! or half that is dead no longer holds GRFs and the allocator may spill or place the
//! pieces separately.
//!
//! An operand covers the bytes of its region at the instruction's exec size; a SEND's
//! payload and response cover `mlen`/`ex_mlen`/`rlen` whole GRFs, so a message's registers
//! stay in one piece. Logical messages (not lowered yet) keep their registers whole.

use super::lir::{Base, LInst, LOp, Program};

/// The GRF range `[lo, hi)` operand `k` of `i` touches (`k == None`: the destination), as
/// the allocator's spill code computes it.
fn grf_range(i: &LInst, k: Option<usize>) -> (u32, u32) {
    let o = match k {
        None => &i.dst,
        Some(k) => &i.srcs[k],
    };
    let len = match (i.op, k) {
        (LOp::Send { rlen, .. }, None) => Some(u32::from(rlen) * 32),
        (_, Some(k)) => i.message_src_regs(k).map(|r| r * 32),
        _ => None,
    };
    let span = len.unwrap_or_else(|| o.span(i.exec as u32)).max(1);
    (o.off / 32, (o.off + span).div_ceil(32))
}

/// Splits every virtual register at the GRF boundaries no operand crosses. Returns true if
/// any register was split.
pub fn split_vregs(prog: &mut Program) -> bool {
    let n = prog.vregs.len();
    // Per register, the GRF boundaries an access crosses (`joined[v][g]`: GRF g-1 and g
    // must stay together), and whether a logical message keeps it whole.
    let mut joined: Vec<Vec<bool>> = prog
        .vregs
        .iter()
        .map(|r| vec![false; r.regs() as usize])
        .collect();
    let mut whole = vec![false; n];
    for i in &prog.insts {
        let logical = i.op.is_logical();
        for k in std::iter::once(None).chain((0..i.srcs.len()).map(Some)) {
            let o = k.map_or(&i.dst, |k| &i.srcs[k]);
            let Base::V(v) = o.base else { continue };
            let v = v as usize;
            if logical {
                whole[v] = true;
                continue;
            }
            let (lo, hi) = grf_range(i, k);
            let j = &mut joined[v];
            for g in lo + 1..hi.min(j.len() as u32) {
                j[g as usize] = true;
            }
        }
    }
    // Pieces: (first GRF, new register) per register that splits.
    let mut pieces: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    let mut changed = false;
    for v in 0..n {
        let regs = joined[v].len() as u32;
        if whole[v] || regs < 2 || (1..regs).all(|g| joined[v][g as usize]) {
            continue;
        }
        let bytes = prog.vregs[v].bytes;
        let starts: Vec<u32> = std::iter::once(0)
            .chain((1..regs).filter(|&g| !joined[v][g as usize]))
            .collect();
        let mut list = Vec::with_capacity(starts.len());
        for (s, &start) in starts.iter().enumerate() {
            let end = starts.get(s + 1).map_or(bytes, |&e| e * 32);
            let size = end - start * 32;
            let id = if s == 0 {
                prog.vregs[v].bytes = size;
                v as u32
            } else {
                prog.new_vreg(size)
            };
            list.push((start, id));
        }
        pieces[v] = list;
        changed = true;
    }
    if !changed {
        return false;
    }
    for i in &mut prog.insts {
        for o in std::iter::once(&mut i.dst).chain(i.srcs.iter_mut()) {
            let Base::V(v) = o.base else { continue };
            let list = &pieces[v as usize];
            if list.is_empty() {
                continue;
            }
            let g = o.off / 32;
            let p = list.partition_point(|&(start, _)| start <= g) - 1;
            let (start, id) = list[p];
            o.base = Base::V(id);
            o.off -= start * 32;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::lir::{Builder, Opnd, Surface};
    use ferrite_isa::{Opcode, Sfid, Type};

    fn text(p: &Program) -> String {
        p.insts.iter().map(|i| format!("{i}\n")).collect()
    }

    /// A SIMD32 vec2 (8 GRFs) written and read per component and half after width lowering:
    /// four registers of 2 GRFs (v0's pieces are v0, v2, v3, v4; v1's are v1, v5).
    #[test]
    fn simd32_vector_splits_into_component_halves() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 32);
        let v = b.vreg(Type::F, 2);
        let s = b.vreg(Type::F, 1);
        for c in 0..2u32 {
            for h in 0..2u8 {
                let mut b = b.at(16, h * 16, false);
                b.mov(v.offset(c * 128 + h as u32 * 64), Opnd::imm(Type::F, 0));
            }
        }
        for h in 0..2u8 {
            let mut b = b.at(16, h * 16, false);
            let off = h as u32 * 64;
            b.alu2(
                Opcode::Add,
                s.offset(off),
                v.offset(off),
                v.offset(128 + off),
            );
        }
        let before = text(&p);
        assert!(split_vregs(&mut p));
        let after = text(&p);
        assert_eq!(
            before,
            "mov(16@0) v0+0<1>:F, 0x0:F\n\
             mov(16@16) v0+64<1>:F, 0x0:F\n\
             mov(16@0) v0+128<1>:F, 0x0:F\n\
             mov(16@16) v0+192<1>:F, 0x0:F\n\
             add(16@0) v1+0<1>:F, v0+0<1>:F, v0+128<1>:F\n\
             add(16@16) v1+64<1>:F, v0+64<1>:F, v0+192<1>:F\n"
        );
        assert_eq!(
            after,
            "mov(16@0) v0+0<1>:F, 0x0:F\n\
             mov(16@16) v2+0<1>:F, 0x0:F\n\
             mov(16@0) v3+0<1>:F, 0x0:F\n\
             mov(16@16) v4+0<1>:F, 0x0:F\n\
             add(16@0) v1+0<1>:F, v0+0<1>:F, v3+0<1>:F\n\
             add(16@16) v5+0<1>:F, v2+0<1>:F, v4+0<1>:F\n"
        );
        assert!(p.vregs.iter().all(|r| r.bytes == 64), "{:?}", p.vregs);
    }

    /// A SEND's response covers `rlen` GRFs and its payload `mlen`: both stay whole, while the
    /// response's components read separately afterwards still may not be cut apart.
    #[test]
    fn message_registers_stay_whole() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let addr = b.vreg(Type::UD, 1);
        let data = b.vreg(Type::F, 2);
        let out = b.vreg(Type::F, 1);
        b.mov(addr, Opnd::ud(0));
        b.inst(
            LOp::Send {
                sfid: Sfid::DpDc1,
                indirect: false,
                desc: 0,
                ex_desc: 0,
                mlen: 2,
                ex_mlen: 0,
                rlen: 4,
                eot: false,
            },
            data,
            vec![addr],
        );
        b.alu2(Opcode::Add, out, data, data.offset(64));
        assert!(!split_vregs(&mut p), "{}", text(&p));
        assert_eq!(p.vregs[data.vreg().unwrap() as usize].bytes, 128);
    }

    /// A logical message (before `lower_sends`) keeps its registers whole.
    #[test]
    fn logical_message_registers_stay_whole() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let addr = b.vreg(Type::UD, 1);
        let data = b.vreg(Type::F, 2);
        b.mov(addr, Opnd::ud(0));
        b.mov(data, Opnd::imm(Type::F, 0));
        b.mov(data.offset(64), Opnd::imm(Type::F, 0));
        b.inst(
            LOp::UntypedWrite {
                surf: Surface::Bti(0),
                comps: 2,
                comp_stride: 64,
            },
            Opnd::null(Type::UD),
            vec![addr, data],
        );
        assert!(!split_vregs(&mut p));
    }
}
