//! Final emission: allocated LIR -> ferrite-isa instructions with JIP/UIP, the ISA
//! validator, encoding with compaction, and the disassembly with offsets.

use super::lir::*;
use super::BackendError;
use crate::ir;
use ferrite_isa::validate::{self, Platform};
use ferrite_isa::{
    Addr, CondMod, Dst, Dst3, ExDesc, Gen, Imm, Instruction, Opcode, Operands, PredCtrl, Predicate,
    Reg, RegSrc, Region, SendDesc, SendsReg, Src, Src3, Swizzle, Type, WriteMask,
};

fn grf_of(o: &Opnd, reg: &[u8]) -> Option<(u8, u8)> {
    let base = match o.base {
        Base::V(v) => reg[v as usize] as u32,
        Base::G(g) => g as u32,
        _ => return None,
    };
    Some(((base + o.off / 32) as u8, (o.off % 32) as u8))
}

fn dst_of(o: &Opnd, reg: &[u8]) -> Dst {
    match (grf_of(o, reg), o.base) {
        (Some((nr, sub)), _) => Dst::grf(nr, o.ty)
            .with_subnr(sub)
            .with_hstride(o.stride.max(1)),
        // The ISA validator rejects the ARF destinations the hardware does not allow.
        (None, Base::Arf(a)) => Dst::new(Addr::arf(a, o.off as u8), o.ty),
        (None, _) => Dst::null(o.ty),
    }
}

fn imm_of(o: &Opnd) -> Imm {
    let Base::Imm(bits) = o.base else {
        unreachable!("immediate operand")
    };
    if o.ty.size() == 8 {
        let mut bits = bits;
        if o.neg {
            bits = match o.ty {
                Type::DF => bits ^ (1 << 63),
                _ => bits.wrapping_neg(),
            };
        }
        if o.abs && o.ty == Type::DF {
            bits &= !(1 << 63);
        }
        return Imm { ty: o.ty, bits };
    }
    let mut bits = bits & 0xFFFF_FFFF;
    if o.ty == Type::HF {
        let mut h = bits & 0xFFFF;
        if o.abs {
            h &= 0x7FFF;
        }
        if o.neg {
            h ^= 0x8000;
        }
        // HF immediates are replicated in both words, like W/UW.
        return Imm {
            ty: o.ty,
            bits: h | (h << 16),
        };
    }
    if o.neg {
        bits = match o.ty {
            Type::F => bits ^ 0x8000_0000,
            _ => (bits as u32).wrapping_neg() as u64,
        };
    }
    if o.abs && o.ty == Type::F {
        bits &= 0x7FFF_FFFF;
    }
    if matches!(o.ty, Type::UW | Type::W) {
        bits = (bits & 0xFFFF) | ((bits & 0xFFFF) << 16);
    }
    Imm { ty: o.ty, bits }
}

fn src_of(o: &Opnd, exec: u8, reg: &[u8]) -> Src {
    if o.is_imm() {
        return Src::Imm(imm_of(o));
    }
    let o = &o.at_exec(u32::from(exec));
    let region = if o.is_scalar() || exec == 1 {
        Region::SCALAR
    } else if let Some(r) = o.rows {
        Region::new(r.vstride, r.width, o.stride)
    } else {
        // The Width elements of a row may not cross a GRF (a SIMD8 DF source is <4,4,1>,
        // a SIMD8 dword view of qwords <8,4,2>); only VertStride crosses.
        let mut w = exec.min(8);
        while w > 1 && w as u32 * o.stride as u32 * o.ty.size() > 32 {
            w /= 2;
        }
        Region::new(w * o.stride, w, o.stride)
    };
    let (nr, sub) = grf_of(o, reg).unwrap_or((0, 0));
    let mut r = match o.base {
        Base::Null => RegSrc::new(Addr::null(), o.ty, region),
        Base::Arf(a) => RegSrc::new(Addr::arf(a, o.off as u8), o.ty, region),
        _ => RegSrc::grf(nr, sub, o.ty, region),
    };
    r.negate = o.neg;
    r.abs = o.abs;
    Src::Reg(r)
}

/// A 3-source (Align16) ALU instruction: GRF operands only, contiguous (swizzle XYZW) or a
/// replicated scalar (RepCtrl); the destination writes all channels (XYZW).
fn three_src(
    op: Opcode,
    exec: ferrite_isa::ExecSize,
    i: &LInst,
    reg: &[u8],
) -> Result<Instruction, BackendError> {
    let bad = |what: &str| BackendError::Internal(format!("3-source {op:?}: {what}"));
    let (dnr, dsub) = grf_of(&i.dst, reg).ok_or_else(|| bad("destination is not a GRF"))?;
    if dsub % 4 != 0 || i.dst.stride > 1 {
        return Err(bad("destination must be dword aligned and contiguous"));
    }
    let mut src = [Src3 {
        nr: 0,
        subnr: 0,
        swizzle: Swizzle::XYZW,
        rep_ctrl: false,
        negate: false,
        abs: false,
        ty: Type::F,
    }; 3];
    for (k, o) in i.srcs.iter().enumerate() {
        let (nr, sub) = grf_of(o, reg).ok_or_else(|| bad("source is not a GRF"))?;
        if o.stride > 1 || o.rows.is_some() {
            return Err(bad("strided source"));
        }
        src[k] = Src3 {
            nr,
            subnr: sub,
            swizzle: Swizzle::XYZW,
            // 64-bit sources may not replicate (legalize widens their scalars); at exec
            // size 1 channel 0 reads the first element anyway.
            rep_ctrl: (o.stride == 0 || i.exec == 1) && o.ty.size() < 8,
            negate: o.neg,
            abs: o.abs,
            ty: o.ty,
        };
    }
    Ok(Instruction::new(
        op,
        exec,
        Operands::ThreeSrc {
            cond_mod: CondMod::None,
            dst: Dst3 {
                nr: dnr,
                subnr_dw: dsub / 4,
                writemask: WriteMask::XYZW,
                ty: i.dst.ty,
            },
            src,
        },
    ))
}

fn sends_reg(o: &Opnd, reg: &[u8]) -> SendsReg {
    match grf_of(o, reg) {
        Some((nr, _)) => SendsReg::grf(nr),
        None => SendsReg::null(),
    }
}

/// For every instruction `p`, the index of the instruction closing the innermost structure
/// around it (ELSE/ENDIF of an IF, WHILE of a loop; DO markers open loops): the first later
/// ELSE, ENDIF or WHILE with as many openings as closings between. One pass: the
/// instructions still waiting for their closer are kept per nesting depth.
fn block_ends(insts: &[LInst]) -> Vec<Option<usize>> {
    let mut ends = vec![None; insts.len()];
    // Index `depth + insts.len()`: malformed code may close more than it opened.
    let mut waiting: Vec<Vec<usize>> = vec![Vec::new(); 2 * insts.len() + 2];
    let mut depth = insts.len();
    for (k, i) in insts.iter().enumerate() {
        if matches!(i.op, LOp::Else | LOp::Endif | LOp::While) {
            for p in waiting[depth].drain(..) {
                ends[p] = Some(k);
            }
        }
        match i.op {
            LOp::If | LOp::Do => depth += 1,
            LOp::Endif | LOp::While => depth -= 1,
            _ => {}
        }
        waiting[depth].push(k);
    }
    ends
}

fn matching(insts: &[LInst], p: usize, want: &[LOp]) -> Option<usize> {
    let mut depth = 0i32;
    for (k, i) in insts.iter().enumerate().skip(p + 1) {
        match i.op {
            LOp::If | LOp::Do => depth += 1,
            LOp::Endif | LOp::While if depth > 0 => depth -= 1,
            op if depth == 0 && want.contains(&op) => return Some(k),
            _ => {}
        }
    }
    None
}

fn wait_instruction() -> Result<Instruction, BackendError> {
    let p = ferrite_isa::asm::parse_program("wait(1) n0<1>UD { align1 WE_all 1N };", Gen::Gen9)
        .map_err(|err| BackendError::Isa { what: "wait", err })?;
    p.first()
        .map(|a| a.inst)
        .ok_or_else(|| BackendError::Internal("wait: empty".into()))
}

/// Converts allocated LIR to instructions in the native layout (16 bytes each, branch
/// offsets in that layout). `grf_count`: the registers of the GRF file (`HwFacts`), which
/// every indirect address must stay inside.
pub fn to_isa(
    prog: &Program,
    reg: &[u8],
    simd: u8,
    grf_count: u8,
) -> Result<Vec<Instruction>, BackendError> {
    let insts = &prog.insts;
    let grf_bytes = u32::from(grf_count) * 32;
    // Native index of every LIR instruction (DO markers emit nothing).
    let mut idx = Vec::with_capacity(insts.len() + 1);
    let mut n = 0usize;
    for i in insts {
        idx.push(n);
        n += native_len(i, reg, grf_bytes)?;
    }
    idx.push(n);
    let off = |from: usize, to: usize| -> i32 { (idx[to] as i32 - idx[from] as i32) * 16 };
    let ends = block_ends(insts);
    let mut out = Vec::with_capacity(n);
    for (k, i) in insts.iter().enumerate() {
        let exec = ferrite_isa::ExecSize::new(i.exec as u32)
            .ok_or_else(|| BackendError::Internal(format!("exec size {}", i.exec)))?;
        let mut inst = match i.op {
            LOp::Do => continue,
            LOp::Alu(op) => {
                let dst = dst_of(&i.dst, reg);
                let s0 = src_of(&i.srcs[0], i.exec, reg);
                let mut x = if i.srcs.len() == 3 {
                    three_src(op, exec, i, reg)?
                } else if i.srcs.len() == 1 {
                    Instruction::alu1(op, exec, dst, s0)
                } else {
                    Instruction::alu2(op, exec, dst, s0, src_of(&i.srcs[1], i.exec, reg))
                };
                if let Operands::Basic { cond_mod, .. } | Operands::ThreeSrc { cond_mod, .. } =
                    &mut x.operands
                {
                    *cond_mod = i.cmod;
                }
                x
            }
            LOp::Math(f) => {
                let dst = dst_of(&i.dst, reg);
                let s0 = src_of(&i.srcs[0], i.exec, reg);
                let mut x = if i.srcs.len() == 1 {
                    Instruction::alu1(Opcode::Math, exec, dst, s0)
                } else {
                    Instruction::alu2(Opcode::Math, exec, dst, s0, src_of(&i.srcs[1], i.exec, reg))
                };
                if let Operands::Basic { math_fn, .. } = &mut x.operands {
                    *math_fn = Some(f);
                }
                x
            }
            LOp::Send {
                sfid,
                indirect,
                desc,
                ex_desc,
                ex_mlen,
                eot,
                ..
            } => {
                // A run-time binding-table index: `or(1) a0.0 index desc`, then the SEND
                // takes its descriptor from a0.0.
                let desc = if indirect {
                    let bti = i.srcs.last().ok_or_else(|| {
                        BackendError::Internal("indirect send without an index".into())
                    })?;
                    let mut or = Instruction::alu2(
                        Opcode::Or,
                        ferrite_isa::ExecSize::new(1).expect("exec size 1"),
                        Dst::new(Addr::arf(ferrite_isa::ArfReg::A0, 0), Type::UD),
                        src_of(&bti.retype(Type::UD).scalar(), 1, reg),
                        Src::Imm(Imm {
                            ty: Type::UD,
                            bits: u64::from(desc),
                        }),
                    );
                    or.we_all = true;
                    out.push(or);
                    SendDesc::A0 { subnr: 0 }
                } else {
                    SendDesc::Imm(desc)
                };
                if ex_mlen > 0 {
                    Instruction::new(
                        Opcode::Sends,
                        exec,
                        Operands::SplitSend {
                            sfid,
                            eot,
                            dst: sends_reg(&i.dst, reg),
                            src0: sends_reg(&i.srcs[0], reg),
                            src1: sends_reg(&i.srcs[1], reg),
                            desc,
                            ex_desc: ExDesc::Imm(ex_desc),
                        },
                    )
                } else {
                    let (nr, _) = grf_of(&i.srcs[0], reg).unwrap_or((0, 0));
                    Instruction::new(
                        Opcode::Send,
                        exec,
                        Operands::Send {
                            sfid,
                            eot,
                            dst: match grf_of(&i.dst, reg) {
                                Some((d, _)) => Dst::grf(d, Type::UD),
                                None => Dst::null(Type::UD),
                            },
                            src0: RegSrc::grf(nr, 0, Type::UD, Region::SCALAR),
                            desc,
                            ex_desc_31_28: 0,
                        },
                    )
                }
            }
            LOp::Wait => wait_instruction()?,
            LOp::Shuffle { width, lanes } => {
                out.extend(shuffle(i, width, lanes, reg, grf_bytes)?);
                continue;
            }
            LOp::If | LOp::Else | LOp::Endif | LOp::While | LOp::Break | LOp::Cont => {
                let (op, jip, uip) = match i.op {
                    LOp::If => {
                        let e = matching(insts, k, &[LOp::Else, LOp::Endif])
                            .ok_or_else(|| BackendError::Internal("IF without ENDIF".into()))?;
                        let endif = if insts[e].op == LOp::Else {
                            matching(insts, e, &[LOp::Endif]).ok_or_else(|| {
                                BackendError::Internal("ELSE without ENDIF".into())
                            })?
                        } else {
                            e
                        };
                        let jip = if insts[e].op == LOp::Else {
                            off(k, e) + 16
                        } else {
                            off(k, e)
                        };
                        (Opcode::If, jip, off(k, endif))
                    }
                    LOp::Else => {
                        let endif = matching(insts, k, &[LOp::Endif])
                            .ok_or_else(|| BackendError::Internal("ELSE without ENDIF".into()))?;
                        (Opcode::Else, off(k, endif), off(k, endif))
                    }
                    LOp::Endif => {
                        let j = ends[k].map_or(16, |e| off(k, e));
                        (Opcode::Endif, j, 0x0800_0000)
                    }
                    LOp::While => {
                        let mut depth = 0;
                        let mut start = 0;
                        for q in (0..k).rev() {
                            match insts[q].op {
                                LOp::While => depth += 1,
                                LOp::Do if depth == 0 => {
                                    start = q;
                                    break;
                                }
                                LOp::Do => depth -= 1,
                                _ => {}
                            }
                        }
                        (Opcode::While, off(k, start), 0x0800_0000)
                    }
                    _ => {
                        let wh = matching_while(insts, k)
                            .ok_or_else(|| BackendError::Internal("BREAK outside a loop".into()))?;
                        let j = ends[k].map_or(off(k, wh), |e| off(k, e));
                        let op = if i.op == LOp::Break {
                            Opcode::Break
                        } else {
                            Opcode::Cont
                        };
                        (op, j, off(k, wh))
                    }
                };
                Instruction::new(
                    op,
                    ferrite_isa::ExecSize::new(simd as u32).unwrap_or(exec),
                    Operands::branch(op, jip, uip),
                )
            }
            _ => {
                return Err(BackendError::Internal(format!(
                    "logical instruction {:?} reached emission",
                    i.op
                )))
            }
        };
        if !matches!(i.op, LOp::Wait) {
            inst.we_all = i.we_all;
            inst.group = ferrite_isa::ChannelGroup {
                qtr: i.group / 8,
                nib: i.group % 8 == 4,
            };
        }
        if let Some(p) = i.pred {
            inst.predicate = Some(Predicate {
                ctrl: PredCtrl::Normal,
                inverse: p.inverse,
            });
        }
        if i.pred.is_some() || i.cmod != CondMod::None {
            inst.flag = ferrite_isa::FlagReg {
                nr: 0,
                subnr: if i.pred.is_some() {
                    i.pred.map_or(0, |p| p.flag_sub)
                } else {
                    i.flag_sub
                },
            };
        }
        inst.saturate = i.sat;
        let _ = Reg::Grf(0);
        out.push(inst);
    }
    Ok(out)
}

/// Native instructions one LIR instruction becomes: none for a DO marker, two for a SEND
/// with a run-time descriptor (the `a0` write and the SEND), what [`shuffle`] emits for a
/// shuffle.
fn native_len(i: &LInst, reg: &[u8], grf_bytes: u32) -> Result<usize, BackendError> {
    Ok(match i.op {
        LOp::Do => 0,
        LOp::Send { indirect: true, .. } => 2,
        LOp::Shuffle { width, lanes } => shuffle(i, width, lanes, reg, grf_bytes)?.len(),
        _ => 1,
    })
}

/// Largest byte offset the 10-bit signed immediate of a register-indirect operand holds.
const ADDR_IMM_MAX: u32 = 511;

/// A GRF byte address as (the part added to `a0`, the part in the operand's immediate).
fn split_address(base: u32) -> (u32, i16) {
    let lo = base % (ADDR_IMM_MAX + 1);
    (base - lo, lo as i16)
}

/// The channel groups (first channel, channels) a [`LOp::Shuffle`] is emitted in: `a0`
/// holds 16 addresses, and a qword gather reads at most 8 (64 bytes per operand).
fn shuffle_groups(i: &LInst) -> impl Iterator<Item = (u8, u8)> {
    let n = if i.dst.ty.size() > 4 { 8 } else { 16 }.min(i.exec);
    (0..i.exec).step_by(n as usize).map(move |g| (g, n))
}

/// A [`LOp::Shuffle`]: per group of channels, the byte address of each channel's source
/// element goes into `a0.0..a0.n-1` (`WE_all`, so that the disabled channels' addresses are
/// valid as well), then one `mov` with a VxH region (`g[a0.0]<VxH;1,0>`: channel k reads
/// the element at `a0.k`) gathers them under the instruction's execution mask and channel
/// group. The addresses ([`Lanes`]): an index is reduced modulo the width, scaled to bytes
/// and added to the source's GRF byte address (3 instructions); `c ^ k` is the channels'
/// byte offsets xor `k`'s, plus that address (2); `c + k` is the byte offsets plus the
/// address of element `k` (1) where every channel's address, past the subgroup's end
/// included, lies inside the GRF file, else reduced modulo the width first (3). A source
/// address the gather's immediate holds saves the `add` of the address (not in the 1).
fn shuffle(
    i: &LInst,
    width: u8,
    lanes: Lanes,
    reg: &[u8],
    grf_bytes: u32,
) -> Result<Vec<Instruction>, BackendError> {
    let bad = |what: &str| BackendError::Internal(format!("shuffle: {what}"));
    let (x, idx, lane_offs) = match (i.srcs.as_slice(), lanes) {
        ([x, idx, offs], Lanes::Table { own: true, .. }) => (x, idx, Some(offs)),
        ([x, idx], _) if !matches!(lanes, Lanes::Table { own: true, .. }) => (x, idx, None),
        _ => {
            return Err(bad(
                "needs a value, an index (and a row table lane offsets)",
            ))
        }
    };
    let es = i.dst.ty.size();
    if i.pred.is_some() || i.cmod != CondMod::None {
        return Err(bad("predicated or flag-writing"));
    }
    if x.stride != 1
        || x.rows.is_some()
        || x.ty.size() != es
        || (matches!(lanes, Lanes::Index | Lanes::Table { .. }) && idx.ty.size() != 4)
        || !width.is_power_of_two()
    {
        return Err(bad(
            "value must be contiguous elements of the result type, index dwords",
        ));
    }
    let (nr, sub) = grf_of(x, reg).ok_or_else(|| bad("value is not in a GRF"))?;
    let base = u32::from(nr) * 32 + u32::from(sub);
    let uw = |v: u32| Src::Imm(imm_of(&Opnd::imm(Type::UW, u64::from(v))));
    let mut out = Vec::new();
    if lanes == Lanes::Index && idx.stride == 0 {
        // One channel for all: its byte address in a0.0 (the part of the base the operand's
        // immediate cannot hold added), then a scalar indirect read per group of channels.
        let one = ferrite_isa::ExecSize::new(1).ok_or_else(|| bad("exec size"))?;
        let a0_dst = Dst::new(Addr::arf(ferrite_isa::ArfReg::A0, 0), Type::UW);
        let a0_src = Src::Reg(RegSrc::new(
            Addr::arf(ferrite_isa::ArfReg::A0, 0),
            Type::UW,
            Region::SCALAR,
        ));
        let (far, near) = split_address(base);
        let mut shl = Instruction::alu2(
            Opcode::Shl,
            one,
            a0_dst,
            src_of(&idx.retype(Type::UW), 1, reg),
            uw(es.trailing_zeros()),
        );
        shl.we_all = true;
        out.push(shl);
        if far != 0 {
            let mut add = Instruction::alu2(Opcode::Add, one, a0_dst, a0_src, uw(far));
            add.we_all = true;
            out.push(add);
        }
        let ty = if es == 8 { Type::UQ } else { Type::UD };
        for (g, n) in shuffle_groups(i) {
            let exec = ferrite_isa::ExecSize::new(u32::from(n)).ok_or_else(|| bad("exec size"))?;
            let from = RegSrc::new(
                Addr::Indirect {
                    file: ferrite_isa::RegFile::Grf,
                    addr_subnr: 0,
                    imm: near,
                },
                ty,
                Region::SCALAR,
            );
            let mut mov = Instruction::alu1(
                Opcode::Mov,
                exec,
                dst_of(&i.dst.lane_offset(u32::from(g)).retype(ty), reg),
                Src::Reg(from),
            );
            mov.we_all = i.we_all;
            mov.group = ferrite_isa::ChannelGroup {
                qtr: (i.group + g) / 8,
                nib: false,
            };
            out.push(mov);
        }
        return Ok(out);
    }
    let width = u32::from(width);
    for (g, n) in shuffle_groups(i) {
        let exec = ferrite_isa::ExecSize::new(u32::from(n)).ok_or_else(|| bad("exec size"))?;
        let a0_dst = Dst::new(Addr::arf(ferrite_isa::ArfReg::A0, 0), Type::UW);
        let a0_src = Src::Reg(RegSrc::new(
            Addr::arf(ferrite_isa::ArfReg::A0, 0),
            Type::UW,
            Region::new(8, 8, 1),
        ));
        let a0_op = |op: Opcode, s: Src, v: u32| Instruction::alu2(op, exec, a0_dst, s, uw(v));
        // The value's address in the gather's immediate instead of an `add` to `a0` where it
        // fits and is GRF-aligned (low five bits zero: nothing carries into the register
        // number, docs/gen9.md "Per-channel gathers").
        let (add_base, mut imm) = if base <= ADDR_IMM_MAX && base % 32 == 0 {
            (None, base as i16)
        } else {
            (Some(a0_op(Opcode::Add, a0_src, base)), 0)
        };
        let mut steps = match lanes {
            Lanes::Index => {
                // The index's low words: a UD register read as UW with stride 2.
                let lo = idx.lane_offset(u32::from(g)).retype(Type::UW);
                let lo = Opnd {
                    stride: if idx.stride == 0 { 0 } else { 2 },
                    ..lo
                };
                let mut v = vec![
                    a0_op(Opcode::And, src_of(&lo, n, reg), width - 1),
                    a0_op(Opcode::Shl, a0_src, es.trailing_zeros()),
                ];
                v.extend(add_base);
                v
            }
            Lanes::Table { count, shift, own } => {
                // min(index, count - 1) << shift (+ the channel's byte offset): the low word of
                // the index (a UD read as UW with stride 2), as for `Index`.
                let lo = Opnd {
                    stride: if idx.stride == 0 { 0 } else { 2 },
                    ..idx.lane_offset(u32::from(g)).retype(Type::UW)
                };
                if count == 0 {
                    return Err(bad("an empty table"));
                }
                let mut clamp = a0_op(Opcode::Sel, src_of(&lo, n, reg), u32::from(count) - 1);
                if let Operands::Basic { cond_mod, .. } = &mut clamp.operands {
                    *cond_mod = CondMod::L;
                }
                let mut v = vec![clamp];
                if shift != 0 {
                    v.push(a0_op(Opcode::Shl, a0_src, u32::from(shift)));
                }
                if own {
                    let offs = lane_offs.ok_or_else(|| bad("row table without lane offsets"))?;
                    let offs = src_of(&lane_bytes(offs, g, es)?, n, reg);
                    v.push(Instruction::alu2(Opcode::Add, exec, a0_dst, a0_src, offs));
                }
                v.extend(add_base);
                v
            }
            Lanes::Xor(k) => {
                let offs = src_of(&lane_bytes(idx, g, es)?, n, reg);
                let mut v = vec![a0_op(Opcode::Xor, offs, es * u32::from(k))];
                v.extend(add_base);
                v
            }
            Lanes::Add(k) => {
                let offs = src_of(&lane_bytes(idx, g, es)?, n, reg);
                let delta = es as i64 * i64::from(k);
                // Channels g..g+n read elements g+k..g+n+k of the value, wherever they are.
                let first = i64::from(base) + delta + i64::from(es * u32::from(g));
                let end = first + i64::from(es * u32::from(n));
                if first >= 0 && end <= i64::from(grf_bytes) {
                    imm = 0;
                    vec![a0_op(Opcode::Add, offs, (i64::from(base) + delta) as u32)]
                } else {
                    let mut v = vec![
                        // Modulo 2^16, then modulo the value's bytes (a power of two).
                        a0_op(Opcode::Add, offs, (delta & 0xFFFF) as u32),
                        a0_op(Opcode::And, a0_src, es * width - 1),
                    ];
                    v.extend(add_base);
                    v
                }
            }
        };
        for s in &mut steps {
            s.we_all = true;
        }
        out.extend(steps);
        let ty = if es == 8 { Type::UQ } else { Type::UD };
        let mut mov = Instruction::alu1(
            Opcode::Mov,
            exec,
            dst_of(&i.dst.lane_offset(u32::from(g)).retype(ty), reg),
            Src::Reg(RegSrc::new(
                Addr::Indirect {
                    file: ferrite_isa::RegFile::Grf,
                    addr_subnr: 0,
                    imm,
                },
                ty,
                Region::new(Region::VXH, 1, 0),
            )),
        );
        mov.we_all = i.we_all;
        mov.group = ferrite_isa::ChannelGroup {
            qtr: (i.group + g) / 8,
            nib: false,
        };
        out.push(mov);
    }
    Ok(out)
}

/// The byte offsets of channels `g..` (`c * es`, UW) in the operand `offs` of a
/// lane-relative [`LOp::Shuffle`].
fn lane_bytes(offs: &Opnd, g: u8, es: u32) -> Result<Opnd, BackendError> {
    if offs.ty != Type::UW || offs.stride != 1 {
        return Err(BackendError::Internal(format!(
            "shuffle: the lane byte offsets of a {es}-byte value must be UW, stride 1"
        )));
    }
    Ok(offs.lane_offset(u32::from(g)))
}

fn matching_while(insts: &[LInst], p: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, i) in insts.iter().enumerate().skip(p + 1) {
        match i.op {
            LOp::Do => depth += 1,
            LOp::While if depth == 0 => return Some(k),
            LOp::While => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Whether an instruction reads or writes a DF operand (a register or an immediate).
pub fn uses_df(i: &Instruction) -> bool {
    match &i.operands {
        Operands::Basic {
            dst, src0, src1, ..
        } => {
            // Not `Src::ty` of an unused slot: its raw type code can read as DF (F1.9).
            let df = |s: &Src| matches!(s, Src::Reg(_) | Src::Imm(_)) && s.ty() == Type::DF;
            dst.ty == Type::DF || df(src0) || df(src1)
        }
        Operands::ThreeSrc { dst, src, .. } => {
            dst.ty == Type::DF || src.iter().any(|s| s.ty == Type::DF)
        }
        _ => false,
    }
}

/// cr0.0 bits (docs/gen9.md 2.10): rounding mode field and the
/// per-width denormal-preserve bits.
pub const CR0_RND_MASK: u32 = 0x30;
pub const CR0_RND_RTZ: u32 = 0x30;
pub const CR0_FP64_DENORM_PRESERVE: u32 = 1 << 6;
pub const CR0_FP32_DENORM_PRESERVE: u32 = 1 << 7;
pub const CR0_FP16_DENORM_PRESERVE: u32 = 1 << 10;

/// The cr0.0 (bits to change, their new value) for a kernel's float modes.
///
/// Rounding: RTZ sets 5:4 to 3, RTE to 0, no mode leaves the field (0 = RTNE from
/// dispatch). Denormals: Preserve sets the width's bit, FlushToZero clears it. Without a
/// mode fp32/fp16 keep the dispatch value (bit clear: flushed, allowed by default) and
/// fp64 is preserved in kernels that use DF, as Vulkan, SPIR-V and the software fp64
/// lowering keep them (the hardware default, bit clear, flushes DF denormals).
pub fn cr0_float_mode(fc: &ir::FloatControls, uses_df: bool) -> (u32, u32) {
    let (mut mask, mut value) = (0, 0);
    for m in &fc.modes {
        match m.rounding {
            ir::Rounding::Rtz => {
                mask |= CR0_RND_MASK;
                value |= CR0_RND_RTZ;
            }
            ir::Rounding::Rte => mask |= CR0_RND_MASK,
            ir::Rounding::Any => {}
        }
    }
    let bits = [
        CR0_FP16_DENORM_PRESERVE,
        CR0_FP32_DENORM_PRESERVE,
        CR0_FP64_DENORM_PRESERVE,
    ];
    for (i, (m, bit)) in fc.modes.iter().zip(bits).enumerate() {
        match m.denorm {
            ir::Denorm::Preserve => {
                mask |= bit;
                value |= bit;
            }
            ir::Denorm::FlushToZero => mask |= bit,
            ir::Denorm::Any if i == 2 && uses_df => {
                mask |= bit;
                value |= bit;
            }
            ir::Denorm::Any => {}
        }
    }
    (mask, value)
}

/// The instructions that put cr0.0 = (cr0.0 & !mask) | value: `and(1)` when a bit is
/// cleared, `or(1)` when one is set. A write of cr0 is a single channel with NoMask and
/// the `switch` thread control, as the SKL PRM asks of instructions naming cr0 ("hardware
/// does not ensure execution pipeline coherency", docs/gen9.md 2.9).
pub fn cr0_write(mask: u32, value: u32) -> Result<Vec<Instruction>, BackendError> {
    let mut text = String::new();
    if mask & !value != 0 {
        text += &format!(
            "and(1) cr0.0<1>UD cr0.0<0,1,0>UD 0x{:08x}UD {{ align1 WE_all 1N switch }};\n",
            !mask
        );
    }
    if value != 0 {
        text += &format!(
            "or(1) cr0.0<1>UD cr0.0<0,1,0>UD 0x{value:08x}UD {{ align1 WE_all 1N switch }};\n"
        );
    }
    let p = ferrite_isa::asm::parse_program(&text, Gen::Gen9).map_err(|err| BackendError::Isa {
        what: "cr0 write",
        err,
    })?;
    Ok(p.into_iter().map(|a| a.inst).collect())
}

/// Runs the PRM validator; returns the report of violations.
pub fn validate(insts: &[Instruction]) -> Result<(), BackendError> {
    let v = validate::validate_program(insts, Platform::Skl);
    if v.is_empty() {
        Ok(())
    } else {
        Err(BackendError::Validation(validate::report(&v)))
    }
}

/// Disassembly with byte offsets.
pub fn disassemble(bytes: &[u8]) -> Result<String, BackendError> {
    let prog = ferrite_isa::decode_program(bytes, Gen::Gen9).map_err(|err| BackendError::Isa {
        what: "decode",
        err,
    })?;
    let mut s = String::new();
    for p in prog {
        // Branch offsets print as byte distances: the `compacted` marker keeps every
        // instruction's size, so `ferrite-asm` on this text rebuilds the same binary.
        let text = ferrite_isa::disasm::format_instruction(&p.inst, None, p.compacted);
        s.push_str(&format!("0x{:05x}: {text}\n", p.offset));
    }
    Ok(s)
}

/// Checks that the listing of `bytes` (what [`disassemble`] prints, `ferrite-cc` shows and
/// `ferrite-asm` reads) assembles to `bytes` again, byte for byte: the compacted forms,
/// the branch distances and every operand survive the text.
pub fn check_listing(bytes: &[u8]) -> Result<(), BackendError> {
    let text = disassemble(bytes)?;
    let again = ferrite_isa::asm::assemble(&text, Gen::Gen9).map_err(|err| BackendError::Isa {
        what: "assembling the listing",
        err,
    })?;
    match first_difference(bytes, &again) {
        None => Ok(()),
        Some(at) => Err(BackendError::Internal(format!(
            "the listing assembles to other bytes ({} instead of {} bytes, the first difference \
             at byte {at:#x}):\n{text}",
            again.len(),
            bytes.len()
        ))),
    }
}

/// The first byte offset at which two programs differ (where one ends, if it is a prefix of
/// the other).
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i))
}

#[cfg(test)]
mod tests {

    /// The closer of the innermost structure around `p` by a forward scan (the form the
    /// one-pass version must agree with).
    fn block_end_scan(insts: &[LInst], p: usize) -> Option<usize> {
        let mut depth = 0i32;
        for (k, i) in insts.iter().enumerate().skip(p + 1) {
            match i.op {
                LOp::If | LOp::Do => depth += 1,
                LOp::Else if depth == 0 => return Some(k),
                LOp::Endif | LOp::While => {
                    if depth == 0 {
                        return Some(k);
                    }
                    depth -= 1;
                }
                _ => {}
            }
        }
        None
    }

    #[test]
    fn block_ends_match_the_forward_scan() {
        let ops = [
            LOp::If,
            LOp::Else,
            LOp::Endif,
            LOp::Do,
            LOp::While,
            LOp::Break,
            LOp::Alu(ferrite_isa::Opcode::Mov),
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for seed in 0..300 {
            let mut p = Program::default();
            let n = 1 + seed % 40;
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let op = ops[(x % ops.len() as u64) as usize];
                p.insts.push(LInst {
                    op,
                    exec: 8,
                    group: 0,
                    we_all: false,
                    pred: None,
                    cmod: ferrite_isa::CondMod::None,
                    flag_sub: 0,
                    sat: false,
                    dst: Opnd::null(ferrite_isa::Type::D),
                    srcs: vec![],
                });
            }
            let ends = block_ends(&p.insts);
            for k in 0..p.insts.len() {
                assert_eq!(ends[k], block_end_scan(&p.insts, k), "seed {seed}, at {k}");
            }
        }
    }

    use super::*;

    #[test]
    fn df_denorm_preserve_is_a_valid_switch_write_of_cr0_bit_6() {
        let (mask, value) = cr0_float_mode(&ir::FloatControls::default(), true);
        assert_eq!((mask, value), (0x40, 0x40));
        assert_eq!(cr0_float_mode(&ir::FloatControls::default(), false), (0, 0));
        let w = cr0_write(mask, value).unwrap();
        assert_eq!(w.len(), 1);
        let i = w[0];
        assert!(!uses_df(&i));
        // A 1-source op with a `V` immediate: its unused src1 type code is DF's (6).
        let v = ferrite_isa::asm::parse_program(
            "mov(8) g3<1>UW 0x76543210V { align1 WE_all 1Q };",
            Gen::Gen9,
        )
        .unwrap();
        assert!(!uses_df(&v[0].inst));
        let d = ferrite_isa::asm::parse_program(
            "add(8) g4<1>DF g6<4,4,1>DF g8<4,4,1>DF { align1 1Q };",
            Gen::Gen9,
        )
        .unwrap();
        assert!(uses_df(&d[0].inst));
        validate(std::slice::from_ref(&i)).unwrap();
        let bin = ferrite_isa::encode_program(&[i], Gen::Gen9, true).unwrap();
        let text = disassemble(&bin).unwrap();
        for want in ["or(1)", "cr0", "0x00000040UD", "WE_all", "switch"] {
            assert!(text.contains(want), "{want} missing in {text}");
        }
    }

    #[test]
    fn the_listing_check_fails_on_what_the_text_loses() {
        let text = "add(8) g4<1>F g6<8,8,1>F g8<8,8,1>F { align1 1Q };\n\
                    mov(8) g3<1>UW 0x76543210V { align1 WE_all 1Q };\n";
        let insts: Vec<_> = ferrite_isa::asm::parse_program(text, Gen::Gen9)
            .unwrap()
            .into_iter()
            .map(|a| a.inst)
            .collect();
        for compact in [false, true] {
            let bin = ferrite_isa::encode_program(&insts, Gen::Gen9, compact).unwrap();
            check_listing(&bin).unwrap();
        }
        // Bit 7 of a native instruction is reserved: no text names it, so a binary with it
        // set cannot come back from its listing.
        let mut bin = ferrite_isa::encode_program(&insts, Gen::Gen9, false).unwrap();
        bin[0] |= 0x80;
        assert!(check_listing(&bin).is_err());
        assert_eq!(first_difference(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_difference(&[1, 2, 3], &[1, 5, 3]), Some(1));
        assert_eq!(first_difference(&[1, 2], &[1, 2, 3]), Some(2));
    }

    #[test]
    fn float_modes_set_and_clear_the_cr0_bits() {
        let fc: ir::FloatControls =
            "f16:denorm_preserve f16:rtz f32:denorm_flush_to_zero f64:denorm_flush_to_zero"
                .parse()
                .unwrap();
        let (mask, value) = cr0_float_mode(&fc, true);
        assert_eq!(mask, 0x30 | 0x400 | 0x80 | 0x40);
        assert_eq!(value, 0x30 | 0x400);
        let w = cr0_write(mask, value).unwrap();
        assert_eq!(w.len(), 2);
        validate(&w).unwrap();
        let bin = ferrite_isa::encode_program(&w, Gen::Gen9, true).unwrap();
        let text = disassemble(&bin).unwrap();
        for want in ["and(1)", "0xfffffb0fUD", "or(1)", "0x00000430UD"] {
            assert!(text.contains(want), "{want} missing in {text}");
        }
        // RTE with fp32 preserve: clear the rounding field, set bit 7.
        let fc: ir::FloatControls = "f32:rte f32:denorm_preserve".parse().unwrap();
        assert_eq!(cr0_float_mode(&fc, false), (0xB0, 0x80));
    }
}
