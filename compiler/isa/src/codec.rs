//! Native 128-bit encoding and decoding (docs/gen9.md section 1).
//!
//! The bit positions live in the field tables below ([`ALIGN1_DST`], [`SRC0`], [`SRC1`],
//! ...); Gen8 and Gen9 share the native layout (only SENDS/SENDSC are Gen9-only, which
//! the opcode table records). Decoding is strict: it returns an error instead of
//! dropping bits the model does not represent, so `encode(decode(b)) == b` always.

use crate::error::{IsaError, Result};
use crate::model::*;

/// A bit range `hi:lo` of the 128-bit instruction.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub hi: u32,
    pub lo: u32,
}

const fn f(hi: u32, lo: u32) -> Field {
    Field { hi, lo }
}

#[inline]
pub(crate) fn get(w: u128, fl: Field) -> u32 {
    ((w >> fl.lo) & ((1u128 << (fl.hi - fl.lo + 1)) - 1)) as u32
}

#[inline]
pub(crate) fn get64(w: u128, hi: u32, lo: u32) -> u64 {
    ((w >> lo) & ((1u128 << (hi - lo + 1)) - 1)) as u64
}

#[inline]
pub(crate) fn bit(w: u128, b: u32) -> bool {
    (w >> b) & 1 != 0
}

#[inline]
fn put(w: &mut u128, fl: Field, v: u64) {
    let width = fl.hi - fl.lo + 1;
    let mask = (1u128 << width) - 1;
    debug_assert!(
        (v as u128) <= mask,
        "value {v:#x} does not fit {}:{}",
        fl.hi,
        fl.lo
    );
    *w = (*w & !(mask << fl.lo)) | (((v as u128) & mask) << fl.lo);
}

#[inline]
fn put_bit(w: &mut u128, b: u32, v: bool) {
    put(w, f(b, b), v as u64)
}

/// Header fields common to every native format (F1.1).
pub mod hdr {
    use super::{f, Field};
    pub const OPCODE: Field = f(6, 0);
    pub const ACCESS_MODE: u32 = 8;
    pub const NO_DD_CLEAR: u32 = 9;
    pub const NO_DD_CHECK: u32 = 10;
    pub const NIB_CTRL: u32 = 11;
    pub const QTR_CTRL: Field = f(13, 12);
    pub const THREAD_CTRL: Field = f(15, 14);
    pub const PRED_CTRL: Field = f(19, 16);
    pub const PRED_INV: u32 = 20;
    pub const EXEC_SIZE: Field = f(23, 21);
    /// Cond-mod (ALU) / math function (MATH) / SFID (SEND*).
    pub const FUNC: Field = f(27, 24);
    /// AccWrEnable / BranchCtrl.
    pub const BIT28: u32 = 28;
    pub const CMPT_CTRL: u32 = 29;
    pub const DEBUG: u32 = 30;
    pub const SATURATE: u32 = 31;
    pub const FLAG_SUBREG: u32 = 32;
    pub const FLAG_REG: u32 = 33;
    pub const MASK_CTRL: u32 = 34;
}

/// Positions of one operand's fields in the 2-source layouts (F1.2, F1.3).
#[derive(Clone, Copy, Debug)]
pub struct OperandFields {
    pub file: Field,
    pub ty: Field,
    pub addr_mode: u32,
    /// Direct: sub-register (bytes) / register number.
    pub subreg: Field,
    pub reg: Field,
    /// Indirect: AddrImm[8:0], AddrImm[9], address sub-register.
    pub ia_imm: Field,
    pub ia_imm9: u32,
    pub ia_subreg: Field,
    /// Sources only (dst: hstride only).
    pub hstride: Field,
    pub width: Field,
    pub vstride: Field,
    pub abs: u32,
    pub negate: u32,
    /// Align16: swizzle x,y,z,w / dst write mask, and the 16-byte sub-register bit.
    pub swz: [Field; 4],
    pub da16_subreg: u32,
}

/// Destination fields (F1.2, F1.3). `width`/`vstride`/`abs`/`negate` are unused.
pub const DST: OperandFields = OperandFields {
    file: f(36, 35),
    ty: f(40, 37),
    addr_mode: 63,
    subreg: f(52, 48),
    reg: f(60, 53),
    ia_imm: f(56, 48),
    ia_imm9: 47,
    ia_subreg: f(60, 57),
    hstride: f(62, 61),
    width: f(0, 0),
    vstride: f(0, 0),
    abs: 0,
    negate: 0,
    swz: [f(51, 48), f(51, 48), f(51, 48), f(51, 48)],
    da16_subreg: 52,
};

/// Source 0 fields (F1.2, F1.3).
pub const SRC0: OperandFields = OperandFields {
    file: f(42, 41),
    ty: f(46, 43),
    addr_mode: 79,
    subreg: f(68, 64),
    reg: f(76, 69),
    ia_imm: f(72, 64),
    ia_imm9: 95,
    ia_subreg: f(76, 73),
    hstride: f(81, 80),
    width: f(84, 82),
    vstride: f(88, 85),
    abs: 77,
    negate: 78,
    swz: [f(65, 64), f(67, 66), f(81, 80), f(83, 82)],
    da16_subreg: 68,
};

/// Source 1 fields (F1.2, F1.3).
pub const SRC1: OperandFields = OperandFields {
    file: f(90, 89),
    ty: f(94, 91),
    addr_mode: 111,
    subreg: f(100, 96),
    reg: f(108, 101),
    ia_imm: f(104, 96),
    ia_imm9: 121,
    ia_subreg: f(108, 105),
    hstride: f(113, 112),
    width: f(116, 114),
    vstride: f(120, 117),
    abs: 109,
    negate: 110,
    swz: [f(97, 96), f(99, 98), f(113, 112), f(115, 114)],
    da16_subreg: 100,
};

/// Three-source fields (F1.5).
pub mod three {
    use super::{f, Field};
    pub const SRC2_HF: u32 = 35;
    pub const SRC1_HF: u32 = 36;
    pub const ABS: [u32; 3] = [37, 39, 41];
    pub const NEG: [u32; 3] = [38, 40, 42];
    pub const SRC_TYPE: Field = f(45, 43);
    pub const DST_TYPE: Field = f(48, 46);
    pub const DST_WRMASK: Field = f(52, 49);
    pub const DST_SUBREG: Field = f(55, 53);
    pub const DST_REG: Field = f(63, 56);
    pub const REP: [u32; 3] = [64, 85, 106];
    pub const SWZ: [Field; 3] = [f(72, 65), f(93, 86), f(114, 107)];
    pub const SUBREG: [Field; 3] = [f(75, 73), f(96, 94), f(117, 115)];
    pub const REG: [Field; 3] = [f(83, 76), f(104, 97), f(125, 118)];
    pub const WORD: [u32; 3] = [84, 105, 126];
}

/// Split-send fields (F1.7).
pub mod sends {
    use super::{f, Field};
    pub const DST_FILE: u32 = 35;
    pub const SRC1_FILE: u32 = 36;
    pub const SRC1_REG: Field = f(51, 44);
    pub const DST_SUBREG: u32 = 52;
    pub const DST_REG: Field = f(60, 53);
    pub const EXDESC_A0: u32 = 61;
    pub const DST_ADDR_MODE: u32 = 63;
    pub const EXDESC_9_6: Field = f(67, 64);
    pub const SRC0_SUBREG: u32 = 68;
    pub const SRC0_REG: Field = f(76, 69);
    pub const DESC_A0: u32 = 77;
    pub const SRC0_ADDR_MODE: u32 = 79;
    pub const EXDESC_A0_SUBREG: Field = f(82, 80);
    pub const EXDESC_31_16: Field = f(95, 80);
    pub const DESC: Field = f(126, 96);
    pub const EOT: u32 = 127;
    /// Bits no split-send field uses; they must be zero.
    pub const UNUSED: &[Field] = &[f(7, 7), f(43, 37), f(62, 62), f(78, 78)];
}

/// Bits 126:96 of SEND/SENDC (descriptor) and 127 (EOT). F1.6.
pub const SEND_DESC: Field = f(126, 96);
pub const SEND_EOT: u32 = 127;

fn unenc(op: Opcode, what: impl Into<String>) -> IsaError {
    IsaError::Unencodable {
        opcode: op,
        what: what.into(),
    }
}

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

fn enc_header(w: &mut u128, i: &Instruction, gen: Gen, func: u32) -> Result<()> {
    let op = i.opcode;
    if !op.is_valid_on(gen) {
        return Err(unenc(op, format!("opcode not valid on {gen}")));
    }
    put(w, hdr::OPCODE, op.hw() as u64);
    put_bit(w, hdr::ACCESS_MODE, i.access_mode == AccessMode::Align16);
    put_bit(w, hdr::NO_DD_CLEAR, i.dep_ctrl.no_dd_clear);
    put_bit(w, hdr::NO_DD_CHECK, i.dep_ctrl.no_dd_check);
    put_bit(w, hdr::NIB_CTRL, i.group.nib);
    if i.group.qtr > 3 {
        return Err(unenc(op, "quarter control > 3"));
    }
    put(w, hdr::QTR_CTRL, i.group.qtr as u64);
    put(w, hdr::THREAD_CTRL, i.thread_ctrl as u64);
    if let Some(p) = i.predicate {
        let code = p.ctrl.hw(i.access_mode).ok_or_else(|| {
            unenc(
                op,
                format!("predicate {} not valid in {}", p.ctrl, i.access_mode),
            )
        })?;
        put(w, hdr::PRED_CTRL, code as u64);
        put_bit(w, hdr::PRED_INV, p.inverse);
    }
    put(w, hdr::EXEC_SIZE, i.exec_size.hw() as u64);
    put(w, hdr::FUNC, func as u64);
    let b28 = if op.has_branch_ctrl() {
        if i.acc_wr_en {
            return Err(unenc(op, "AccWrEnable on a branch (bit 28 is BranchCtrl)"));
        }
        i.branch_ctrl
    } else {
        if i.branch_ctrl {
            return Err(unenc(op, "BranchCtrl on a non-branch opcode"));
        }
        i.acc_wr_en
    };
    put_bit(w, hdr::BIT28, b28);
    put_bit(w, hdr::DEBUG, i.debug);
    put_bit(w, hdr::SATURATE, i.saturate);
    if i.flag.nr > 1 || i.flag.subnr > 1 {
        return Err(unenc(op, format!("flag register {}", i.flag)));
    }
    put_bit(w, hdr::FLAG_SUBREG, i.flag.subnr == 1);
    put_bit(w, hdr::FLAG_REG, i.flag.nr == 1);
    put_bit(w, hdr::MASK_CTRL, i.we_all);
    Ok(())
}

fn reg_type_hw(op: Opcode, ty: Type, gen: Gen) -> Result<u64> {
    ty.reg_hw(gen)
        .map(u64::from)
        .ok_or_else(|| unenc(op, format!("type {ty} is not a register type")))
}

fn enc_indirect(
    w: &mut u128,
    op: Opcode,
    fl: &OperandFields,
    addr_subnr: u8,
    imm: i16,
) -> Result<()> {
    if !(-512..=511).contains(&imm) {
        return Err(unenc(
            op,
            format!("indirect offset {imm} out of 10-bit range"),
        ));
    }
    if addr_subnr > 15 {
        return Err(unenc(op, "address sub-register > 15"));
    }
    let v = (imm as u16) & 0x3FF;
    put(w, fl.ia_imm, (v & 0x1FF) as u64);
    put_bit(w, fl.ia_imm9, v & 0x200 != 0);
    put(w, fl.ia_subreg, addr_subnr as u64);
    put_bit(w, fl.addr_mode, true);
    Ok(())
}

fn enc_dst(w: &mut u128, op: Opcode, mode: AccessMode, d: &Dst, gen: Gen) -> Result<()> {
    let fl = &DST;
    put(w, fl.file, d.addr.file() as u64);
    if d.addr.file() == RegFile::Imm {
        return Err(unenc(op, "immediate destination"));
    }
    put(w, fl.ty, reg_type_hw(op, d.ty, gen)?);
    let hs = Region::hstride_hw(d.hstride).ok_or_else(|| unenc(op, "bad dst hstride"))?;
    put(w, fl.hstride, hs as u64);
    match (mode, d.addr) {
        (AccessMode::Align1, Addr::Direct { reg, subnr }) => {
            if d.writemask != WriteMask::XYZW {
                return Err(unenc(op, "write mask in Align1"));
            }
            if subnr > 31 {
                return Err(unenc(op, "dst sub-register > 31"));
            }
            put(w, fl.subreg, subnr as u64);
            put(w, fl.reg, reg.nr() as u64);
        }
        (
            AccessMode::Align1,
            Addr::Indirect {
                addr_subnr, imm, ..
            },
        ) => {
            if d.writemask != WriteMask::XYZW {
                return Err(unenc(op, "write mask in Align1"));
            }
            enc_indirect(w, op, fl, addr_subnr, imm)?;
        }
        (AccessMode::Align16, Addr::Direct { reg, subnr }) => {
            if subnr != 0 && subnr != 16 {
                return Err(unenc(op, "Align16 dst sub-register must be 0 or 16"));
            }
            put(w, fl.swz[0], (d.writemask.0 & 0xF) as u64);
            put_bit(w, fl.da16_subreg, subnr == 16);
            put(w, fl.reg, reg.nr() as u64);
        }
        (AccessMode::Align16, Addr::Indirect { .. }) => {
            return Err(unenc(op, "Align16 indirect destination is not supported"))
        }
    }
    Ok(())
}

/// Encodes a register source (not immediate).
fn enc_reg_src(
    w: &mut u128,
    op: Opcode,
    mode: AccessMode,
    fl: &OperandFields,
    r: &RegSrc,
    gen: Gen,
) -> Result<()> {
    put(w, fl.file, r.addr.file() as u64);
    if r.addr.file() == RegFile::Imm {
        return Err(unenc(op, "indirect operand with IMM file"));
    }
    put(w, fl.ty, reg_type_hw(op, r.ty, gen)?);
    put_bit(w, fl.abs, r.abs);
    put_bit(w, fl.negate, r.negate);
    let v = Region::vstride_hw(r.region.vstride).ok_or_else(|| unenc(op, "bad vstride"))?;
    put(w, fl.vstride, v as u64);
    match mode {
        AccessMode::Align1 => {
            if r.swizzle != Swizzle::XYZW {
                return Err(unenc(op, "swizzle in Align1"));
            }
            let wd = Region::width_hw(r.region.width).ok_or_else(|| unenc(op, "bad width"))?;
            let hs =
                Region::hstride_hw(r.region.hstride).ok_or_else(|| unenc(op, "bad hstride"))?;
            put(w, fl.width, wd as u64);
            put(w, fl.hstride, hs as u64);
            match r.addr {
                Addr::Direct { reg, subnr } => {
                    if subnr > 31 {
                        return Err(unenc(op, "src sub-register > 31"));
                    }
                    put(w, fl.subreg, subnr as u64);
                    put(w, fl.reg, reg.nr() as u64);
                }
                Addr::Indirect {
                    addr_subnr, imm, ..
                } => enc_indirect(w, op, fl, addr_subnr, imm)?,
            }
        }
        AccessMode::Align16 => {
            let Addr::Direct { reg, subnr } = r.addr else {
                return Err(unenc(op, "Align16 indirect source is not supported"));
            };
            if subnr != 0 && subnr != 16 {
                return Err(unenc(op, "Align16 src sub-register must be 0 or 16"));
            }
            for (k, fld) in fl.swz.iter().enumerate() {
                put(w, *fld, (r.swizzle.0[k] & 3) as u64);
            }
            put_bit(w, fl.da16_subreg, subnr == 16);
            put(w, fl.reg, reg.nr() as u64);
        }
    }
    Ok(())
}

fn enc_basic(
    w: &mut u128,
    i: &Instruction,
    gen: Gen,
    dst: &Dst,
    src0: &Src,
    src1: &Src,
) -> Result<()> {
    let op = i.opcode;
    let mode = i.access_mode;
    enc_dst(w, op, mode, dst, gen)?;
    match (src0, src1) {
        (Src::Imm(imm), _) if imm.ty.is_64bit() => {
            // Value in 127:64; src1's file/type bits belong to the value.
            if *src1 != Src::zero() {
                return Err(unenc(
                    op,
                    "src1 must be Src::zero() with a 64-bit src0 immediate",
                ));
            }
            put(w, SRC0.file, RegFile::Imm as u64);
            put(w, SRC0.ty, imm.ty.imm_hw(gen).unwrap_or(0) as u64);
            *w = (*w & ((1u128 << 64) - 1)) | ((imm.bits as u128) << 64);
        }
        (Src::Imm(imm), Src::Unused { file, ty_hw }) => {
            let ty = imm
                .ty
                .imm_hw(gen)
                .ok_or_else(|| unenc(op, format!("no {} immediates", imm.ty)))?;
            put(w, SRC0.file, RegFile::Imm as u64);
            put(w, SRC0.ty, ty as u64);
            // Only src1's file and type survive; its other fields are the value.
            if *file == RegFile::Imm || *ty_hw > 15 {
                return Err(unenc(
                    op,
                    "unused src1 slot must have a register file and a 4-bit type",
                ));
            }
            put(w, SRC1.file, *file as u64);
            put(w, SRC1.ty, *ty_hw as u64);
            put(w, f(127, 96), imm.bits & 0xFFFF_FFFF);
            if imm.bits >> 32 != 0 {
                return Err(unenc(op, "32-bit immediate with high bits set"));
            }
        }
        (Src::Imm(_), _) => {
            return Err(unenc(
                op,
                "with a 32-bit src0 immediate, src1 must be Src::Unused",
            ))
        }
        (_, Src::Unused { .. }) | (Src::Unused { .. }, _) => {
            return Err(unenc(
                op,
                "Src::Unused only as src1 next to a 32-bit src0 immediate",
            ))
        }
        (Src::Reg(r0), Src::Imm(imm)) => {
            enc_reg_src(w, op, mode, &SRC0, r0, gen)?;
            if imm.ty.is_64bit() {
                return Err(unenc(op, "64-bit immediate in src1"));
            }
            let ty = imm
                .ty
                .imm_hw(gen)
                .ok_or_else(|| unenc(op, format!("no {} immediates", imm.ty)))?;
            put(w, SRC1.file, RegFile::Imm as u64);
            put(w, SRC1.ty, ty as u64);
            if imm.bits >> 32 != 0 {
                return Err(unenc(op, "32-bit immediate with high bits set"));
            }
            put(w, f(127, 96), imm.bits);
        }
        (Src::Reg(r0), Src::Reg(r1)) => {
            enc_reg_src(w, op, mode, &SRC0, r0, gen)?;
            enc_reg_src(w, op, mode, &SRC1, r1, gen)?;
        }
    }
    Ok(())
}

fn enc_three_src(
    w: &mut u128,
    i: &Instruction,
    gen: Gen,
    dst: &Dst3,
    src: &[Src3; 3],
) -> Result<()> {
    let op = i.opcode;
    if i.access_mode != AccessMode::Align16 {
        return Err(unenc(op, "three-source instructions are Align16 on Gen8/9"));
    }
    let t3 = |ty: Type| {
        ty.three_src_hw(gen)
            .map(u64::from)
            .ok_or_else(|| unenc(op, format!("type {ty} not valid in a 3-source instruction")))
    };
    put(w, three::DST_TYPE, t3(dst.ty)?);
    put(w, three::SRC_TYPE, t3(src[0].ty)?);
    let mixed = matches!(src[0].ty, Type::F | Type::HF);
    for (k, b) in [(1, three::SRC1_HF), (2, three::SRC2_HF)] {
        if mixed {
            match src[k].ty {
                Type::F => {}
                Type::HF => put_bit(w, b, true),
                t => {
                    return Err(unenc(
                        op,
                        format!("src{k} type {t} with src0 type {}", src[0].ty),
                    ))
                }
            }
        } else if src[k].ty != src[0].ty {
            return Err(unenc(
                op,
                format!(
                    "src{k} type {} differs from src0 type {}",
                    src[k].ty, src[0].ty
                ),
            ));
        }
    }
    if dst.subnr_dw > 7 {
        return Err(unenc(op, "3-src dst sub-register > 7 dwords"));
    }
    put(w, three::DST_WRMASK, (dst.writemask.0 & 0xF) as u64);
    put(w, three::DST_SUBREG, dst.subnr_dw as u64);
    put(w, three::DST_REG, dst.nr as u64);
    for (k, s) in src.iter().enumerate() {
        if s.subnr > 30 || s.subnr % 2 != 0 {
            return Err(unenc(
                op,
                format!(
                    "src{k} sub-register {} not an even byte offset < 32",
                    s.subnr
                ),
            ));
        }
        put_bit(w, three::ABS[k], s.abs);
        put_bit(w, three::NEG[k], s.negate);
        put_bit(w, three::REP[k], s.rep_ctrl);
        put(w, three::SWZ[k], s.swizzle.packed() as u64);
        put(w, three::SUBREG[k], (s.subnr / 4) as u64);
        put_bit(w, three::WORD[k], s.subnr % 4 != 0);
        put(w, three::REG[k], s.nr as u64);
    }
    Ok(())
}

/// Encodes one instruction in the native 128-bit form.
pub fn encode(i: &Instruction, gen: Gen) -> Result<[u8; 16]> {
    encode_u128(i, gen).map(|w| w.to_le_bytes())
}

/// Like [`encode`], returning the instruction as a little-endian `u128`.
pub fn encode_u128(i: &Instruction, gen: Gen) -> Result<u128> {
    let op = i.opcode;
    let mut w = 0u128;
    let want = op.format();
    let got = match i.operands {
        Operands::Basic { .. } => Format::Basic,
        Operands::ThreeSrc { .. } => Format::ThreeSrc,
        Operands::Send { .. } => Format::Send,
        Operands::SplitSend { .. } => Format::SplitSend,
        Operands::Branch { .. } => Format::Branch,
    };
    if want != got {
        return Err(unenc(
            op,
            format!("operands of format {got:?}, opcode needs {want:?}"),
        ));
    }
    match &i.operands {
        Operands::Basic {
            cond_mod,
            math_fn,
            dst,
            src0,
            src1,
        } => {
            let func = if op == Opcode::Math {
                if *cond_mod != CondMod::None {
                    return Err(unenc(op, "MATH has no conditional modifier"));
                }
                math_fn.ok_or_else(|| unenc(op, "MATH without a function"))? as u32
            } else {
                if math_fn.is_some() {
                    return Err(unenc(op, "math function on a non-MATH opcode"));
                }
                *cond_mod as u32
            };
            enc_header(&mut w, i, gen, func)?;
            enc_basic(&mut w, i, gen, dst, src0, src1)?;
        }
        Operands::ThreeSrc { cond_mod, dst, src } => {
            enc_header(&mut w, i, gen, *cond_mod as u32)?;
            enc_three_src(&mut w, i, gen, dst, src)?;
        }
        Operands::Send {
            sfid,
            eot,
            dst,
            src0,
            desc,
            ex_desc_31_28,
        } => {
            enc_header(&mut w, i, gen, *sfid as u32)?;
            enc_dst(&mut w, op, i.access_mode, dst, gen)?;
            enc_reg_src(&mut w, op, i.access_mode, &SRC0, src0, gen)?;
            if *ex_desc_31_28 > 15 {
                return Err(unenc(op, "ExDesc[31:28] > 15"));
            }
            put(&mut w, SRC1.ty, *ex_desc_31_28 as u64);
            match desc {
                SendDesc::Imm(d) => {
                    if *d >> 31 != 0 {
                        return Err(unenc(op, "descriptor wider than 31 bits"));
                    }
                    put(&mut w, SRC1.file, RegFile::Imm as u64);
                    put(&mut w, SEND_DESC, *d as u64);
                }
                SendDesc::A0 { subnr } => {
                    if *subnr > 31 {
                        return Err(unenc(op, "a0 sub-register > 31"));
                    }
                    put(&mut w, SRC1.file, RegFile::Arf as u64);
                    put(&mut w, SRC1.reg, ArfReg::A0.nr() as u64);
                    put(&mut w, SRC1.subreg, *subnr as u64);
                }
            }
            put_bit(&mut w, SEND_EOT, *eot);
        }
        Operands::SplitSend {
            sfid,
            eot,
            dst,
            src0,
            src1,
            desc,
            ex_desc,
        } => {
            enc_header(&mut w, i, gen, *sfid as u32)?;
            let file_bit = |r: &SendsReg, what: &str| -> Result<bool> {
                match r.file {
                    RegFile::Grf => Ok(true),
                    RegFile::Arf => Ok(false),
                    RegFile::Imm => Err(unenc(op, format!("{what} cannot be an immediate"))),
                }
            };
            put_bit(&mut w, sends::DST_FILE, file_bit(dst, "dst")?);
            put_bit(&mut w, sends::SRC1_FILE, file_bit(src1, "src1")?);
            if src0.file != RegFile::Grf {
                return Err(unenc(op, "split-send src0 must be a GRF"));
            }
            if dst.subnr16 > 1 || src0.subnr16 > 1 || src1.subnr16 != 0 {
                return Err(unenc(op, "split-send sub-register out of range"));
            }
            put(&mut w, sends::SRC1_REG, src1.nr as u64);
            put_bit(&mut w, sends::DST_SUBREG, dst.subnr16 == 1);
            put(&mut w, sends::DST_REG, dst.nr as u64);
            put_bit(&mut w, sends::SRC0_SUBREG, src0.subnr16 == 1);
            put(&mut w, sends::SRC0_REG, src0.nr as u64);
            match desc {
                SendDesc::Imm(d) => {
                    if *d >> 31 != 0 {
                        return Err(unenc(op, "descriptor wider than 31 bits"));
                    }
                    put(&mut w, sends::DESC, *d as u64);
                }
                SendDesc::A0 { subnr } => {
                    if *subnr != 0 {
                        return Err(unenc(op, "split-send descriptor register must be a0.0"));
                    }
                    put_bit(&mut w, sends::DESC_A0, true);
                }
            }
            match ex_desc {
                ExDesc::Imm(x) => {
                    if x & !ExDesc::IMM_MASK != 0 {
                        return Err(unenc(
                            op,
                            format!("extended descriptor 0x{x:08x} has bits outside 31:16 and 9:6"),
                        ));
                    }
                    put(&mut w, sends::EXDESC_9_6, ((x >> 6) & 0xF) as u64);
                    put(&mut w, sends::EXDESC_31_16, (x >> 16) as u64);
                }
                ExDesc::A0 { subnr_dw } => {
                    if *subnr_dw > 7 {
                        return Err(unenc(op, "ExDesc a0 sub-register > 7"));
                    }
                    put_bit(&mut w, sends::EXDESC_A0, true);
                    put(&mut w, sends::EXDESC_A0_SUBREG, *subnr_dw as u64);
                }
            }
            put_bit(&mut w, sends::EOT, *eot);
        }
        Operands::Branch {
            dst,
            src0_file,
            src0_ty,
            jip,
            uip,
        } => {
            enc_header(&mut w, i, gen, 0)?;
            enc_dst(&mut w, op, i.access_mode, dst, gen)?;
            put(&mut w, SRC0.file, *src0_file as u64);
            let ty = if *src0_file == RegFile::Imm {
                src0_ty.imm_hw(gen)
            } else {
                src0_ty.reg_hw(gen)
            };
            put(
                &mut w,
                SRC0.ty,
                ty.ok_or_else(|| unenc(op, "bad src0 type"))? as u64,
            );
            put(&mut w, f(95, 64), *uip as u32 as u64);
            put(&mut w, f(127, 96), *jip as u32 as u64);
        }
    }
    Ok(w)
}

// ---------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------

struct Dec {
    w: u128,
    offset: usize,
    gen: Gen,
}

impl Dec {
    fn err(&self, what: impl Into<String>) -> IsaError {
        IsaError::InvalidEncoding {
            offset: self.offset,
            what: what.into(),
        }
    }
    fn get(&self, fl: Field) -> u32 {
        get(self.w, fl)
    }
    fn bit(&self, b: u32) -> bool {
        bit(self.w, b)
    }
    fn zero(&self, fl: Field, what: &str) -> Result<()> {
        if self.get(fl) != 0 {
            return Err(self.err(format!("reserved bits {}:{} set ({what})", fl.hi, fl.lo)));
        }
        Ok(())
    }
    fn file(&self, fl: Field) -> Result<RegFile> {
        let v = self.get(fl);
        RegFile::from_hw(v).ok_or_else(|| self.err(format!("register file {v} (MRF) is invalid")))
    }
    fn reg_type(&self, fl: Field, file: RegFile) -> Result<Type> {
        let v = self.get(fl);
        Type::from_hw(file, v, self.gen)
            .ok_or_else(|| self.err(format!("invalid {file} type encoding {v}")))
    }
    fn direct_reg(&self, file: RegFile, nr: u32) -> Result<Reg> {
        match file {
            RegFile::Grf => Ok(Reg::Grf(nr as u8)),
            _ => ArfReg::from_nr(nr as u8)
                .map(Reg::Arf)
                .ok_or_else(|| self.err(format!("invalid ARF register 0x{nr:02x}"))),
        }
    }
    fn indirect(&self, fl: &OperandFields, file: RegFile) -> Addr {
        let raw = self.get(fl.ia_imm) | ((self.bit(fl.ia_imm9) as u32) << 9);
        let imm = ((raw << 6) as u16 as i16) >> 6;
        Addr::Indirect {
            file,
            addr_subnr: self.get(fl.ia_subreg) as u8,
            imm,
        }
    }

    fn header(&self, mode: AccessMode) -> Result<(ExecSize, Option<Predicate>)> {
        let exec = ExecSize::from_hw(self.get(hdr::EXEC_SIZE)).ok_or_else(|| {
            self.err(format!(
                "invalid execution size {}",
                self.get(hdr::EXEC_SIZE)
            ))
        })?;
        let pc = self.get(hdr::PRED_CTRL);
        let pred = if pc == 0 {
            if self.bit(hdr::PRED_INV) {
                return Err(self.err("predicate inverse without predicate control"));
            }
            None
        } else {
            let ctrl = PredCtrl::from_hw(pc, mode)
                .ok_or_else(|| self.err(format!("invalid predicate control {pc} in {mode}")))?;
            Some(Predicate {
                ctrl,
                inverse: self.bit(hdr::PRED_INV),
            })
        };
        if self.get(hdr::THREAD_CTRL) == 3 {
            return Err(self.err("invalid thread control 3"));
        }
        Ok((exec, pred))
    }

    fn dst(&self, mode: AccessMode) -> Result<Dst> {
        let fl = &DST;
        let file = self.file(fl.file)?;
        if file == RegFile::Imm {
            return Err(self.err("immediate destination"));
        }
        let ty = self.reg_type(fl.ty, file)?;
        let hstride = Region::hstride_from_hw(self.get(fl.hstride));
        let indirect = self.bit(fl.addr_mode);
        if !indirect {
            self.zero(
                f(fl.ia_imm9, fl.ia_imm9),
                "dst AddrImm[9] on a direct destination",
            )?;
        }
        match (mode, indirect) {
            (AccessMode::Align1, false) => {
                let reg = self.direct_reg(file, self.get(fl.reg))?;
                Ok(Dst {
                    addr: Addr::Direct {
                        reg,
                        subnr: self.get(fl.subreg) as u8,
                    },
                    ty,
                    hstride,
                    writemask: WriteMask::XYZW,
                })
            }
            (AccessMode::Align1, true) => Ok(Dst {
                addr: self.indirect(fl, file),
                ty,
                hstride,
                writemask: WriteMask::XYZW,
            }),
            (AccessMode::Align16, false) => {
                let reg = self.direct_reg(file, self.get(fl.reg))?;
                let subnr = if self.bit(fl.da16_subreg) { 16 } else { 0 };
                Ok(Dst {
                    addr: Addr::Direct { reg, subnr },
                    ty,
                    hstride,
                    writemask: WriteMask(self.get(fl.swz[0]) as u8),
                })
            }
            (AccessMode::Align16, true) => {
                Err(self.err("Align16 indirect destination is not supported"))
            }
        }
    }

    fn reg_src(&self, fl: &OperandFields, mode: AccessMode, file: RegFile) -> Result<RegSrc> {
        let ty = self.reg_type(fl.ty, file)?;
        let vraw = self.get(fl.vstride);
        let vstride = Region::vstride_from_hw(vraw)
            .ok_or_else(|| self.err(format!("invalid vertical stride {vraw}")))?;
        let abs = self.bit(fl.abs);
        let negate = self.bit(fl.negate);
        let indirect = self.bit(fl.addr_mode);
        match mode {
            AccessMode::Align1 => {
                let wraw = self.get(fl.width);
                let width = Region::width_from_hw(wraw)
                    .ok_or_else(|| self.err(format!("invalid width {wraw}")))?;
                let hstride = Region::hstride_from_hw(self.get(fl.hstride));
                let addr = if indirect {
                    self.indirect(fl, file)
                } else {
                    Addr::Direct {
                        reg: self.direct_reg(file, self.get(fl.reg))?,
                        subnr: self.get(fl.subreg) as u8,
                    }
                };
                Ok(RegSrc {
                    addr,
                    ty,
                    region: Region {
                        vstride,
                        width,
                        hstride,
                    },
                    swizzle: Swizzle::XYZW,
                    negate,
                    abs,
                })
            }
            AccessMode::Align16 => {
                if indirect {
                    return Err(self.err("Align16 indirect source is not supported"));
                }
                // Width bit 2 is unused in Align16.
                if self.bit(fl.width.hi) {
                    return Err(self.err(format!("reserved Align16 bit {} set", fl.width.hi)));
                }
                let reg = self.direct_reg(file, self.get(fl.reg))?;
                let subnr = if self.bit(fl.da16_subreg) { 16 } else { 0 };
                let swizzle = Swizzle([
                    self.get(fl.swz[0]) as u8,
                    self.get(fl.swz[1]) as u8,
                    self.get(fl.swz[2]) as u8,
                    self.get(fl.swz[3]) as u8,
                ]);
                Ok(RegSrc {
                    addr: Addr::Direct { reg, subnr },
                    ty,
                    region: Region {
                        vstride,
                        width: 4,
                        hstride: 1,
                    },
                    swizzle,
                    negate,
                    abs,
                })
            }
        }
    }

    fn basic(&self, mode: AccessMode) -> Result<(Dst, Src, Src)> {
        let dst = self.dst(mode)?;
        let f0 = self.file(SRC0.file)?;
        if f0 == RegFile::Imm {
            let raw = self.get(SRC0.ty);
            let ty = Type::from_hw(RegFile::Imm, raw, self.gen)
                .ok_or_else(|| self.err(format!("invalid immediate type {raw}")))?;
            if ty.is_64bit() {
                return Ok((
                    dst,
                    Src::Imm(Imm {
                        ty,
                        bits: get64(self.w, 127, 64),
                    }),
                    Src::zero(),
                ));
            }
            // The bits of src0's register fields must be clear; src1 keeps file + type.
            self.zero(
                f(95, 64).with_hi(88),
                "src0 register fields with an immediate",
            )?;
            self.zero(f(95, 95), "src0 AddrImm[9] with an immediate")?;
            let f1 = self.file(SRC1.file)?;
            if f1 == RegFile::Imm {
                return Err(self.err("two immediate sources"));
            }
            let src1 = Src::Unused {
                file: f1,
                ty_hw: self.get(SRC1.ty) as u8,
            };
            let imm = Imm {
                ty,
                bits: get64(self.w, 127, 96),
            };
            return Ok((dst, Src::Imm(imm), src1));
        }
        let src0 = self.reg_src(&SRC0, mode, f0)?;
        if !bit(self.w, SRC0.addr_mode) || mode == AccessMode::Align16 {
            self.zero(f(95, 95), "src0 AddrImm[9] on a direct operand")?;
        }
        let f1 = self.file(SRC1.file)?;
        if f1 == RegFile::Imm {
            let raw = self.get(SRC1.ty);
            let ty = Type::from_hw(RegFile::Imm, raw, self.gen)
                .ok_or_else(|| self.err(format!("invalid immediate type {raw}")))?;
            if ty.is_64bit() {
                return Err(self.err("64-bit immediate in src1"));
            }
            return Ok((
                dst,
                Src::Reg(src0),
                Src::Imm(Imm {
                    ty,
                    bits: get64(self.w, 127, 96),
                }),
            ));
        }
        let src1 = self.reg_src(&SRC1, mode, f1)?;
        // Bits 127:122 are unused in the 2-register-source layout (121 = src1 AddrImm[9]).
        self.zero(f(127, 122), "unused high bits")?;
        if !bit(self.w, SRC1.addr_mode) || mode == AccessMode::Align16 {
            self.zero(f(121, 121), "src1 AddrImm[9] on a direct operand")?;
        }
        if !bit(self.w, SRC0.addr_mode) || mode == AccessMode::Align16 {
            self.zero(f(95, 95), "src0 AddrImm[9] on a direct operand")?;
        }
        Ok((dst, Src::Reg(src0), Src::Reg(src1)))
    }
}

impl Field {
    const fn with_hi(self, hi: u32) -> Field {
        Field { hi, lo: self.lo }
    }
}

/// Decodes one native (uncompacted) instruction given as a `u128`. `offset` is only used
/// in error messages.
pub fn decode_native(w: u128, gen: Gen, offset: usize) -> Result<Instruction> {
    let d = Dec { w, offset, gen };
    let hw = d.get(hdr::OPCODE) as u8;
    let opcode = Opcode::from_hw(hw, gen).ok_or(IsaError::InvalidOpcode { offset, hw, gen })?;
    if d.bit(hdr::CMPT_CTRL) {
        return Err(d.err("compaction bit set in a native instruction"));
    }
    d.zero(f(7, 7), "bit 7")?;
    let mode = if d.bit(hdr::ACCESS_MODE) {
        AccessMode::Align16
    } else {
        AccessMode::Align1
    };
    let (exec_size, predicate) = d.header(mode)?;
    let b28 = d.bit(hdr::BIT28);
    let func = d.get(hdr::FUNC);
    let thread_ctrl = match d.get(hdr::THREAD_CTRL) {
        0 => ThreadCtrl::Normal,
        1 => ThreadCtrl::Atomic,
        _ => ThreadCtrl::Switch,
    };
    let cmod = || {
        CondMod::from_hw(func).ok_or_else(|| d.err(format!("invalid conditional modifier {func}")))
    };
    let operands = match opcode.format() {
        Format::Basic => {
            let (dst, src0, src1) = d.basic(mode)?;
            if opcode == Opcode::Math {
                let m = MathFunction::from_hw(func)
                    .ok_or_else(|| d.err(format!("invalid math function {func}")))?;
                Operands::Basic {
                    cond_mod: CondMod::None,
                    math_fn: Some(m),
                    dst,
                    src0,
                    src1,
                }
            } else {
                Operands::Basic {
                    cond_mod: cmod()?,
                    math_fn: None,
                    dst,
                    src0,
                    src1,
                }
            }
        }
        Format::ThreeSrc => {
            if mode != AccessMode::Align16 {
                return Err(d.err("three-source instruction in Align1 (Gen10+ only)"));
            }
            d.zero(f(127, 127), "3-src bit 127")?;
            let t = |fl: Field| {
                let v = d.get(fl);
                Type::from_three_src_hw(v, gen)
                    .ok_or_else(|| d.err(format!("invalid 3-src type {v}")))
            };
            let dst_ty = t(three::DST_TYPE)?;
            let st = t(three::SRC_TYPE)?;
            let mixed = matches!(st, Type::F | Type::HF);
            let mut tys = [st; 3];
            for (k, b) in [(1usize, three::SRC1_HF), (2, three::SRC2_HF)] {
                if d.bit(b) {
                    if !mixed {
                        return Err(d.err(format!("src{k} HF flag with source type {st}")));
                    }
                    tys[k] = Type::HF;
                } else if mixed {
                    tys[k] = Type::F;
                }
            }
            let dst = Dst3 {
                nr: d.get(three::DST_REG) as u8,
                subnr_dw: d.get(three::DST_SUBREG) as u8,
                writemask: WriteMask(d.get(three::DST_WRMASK) as u8),
                ty: dst_ty,
            };
            let mk = |k: usize| Src3 {
                nr: d.get(three::REG[k]) as u8,
                subnr: (d.get(three::SUBREG[k]) * 4 + d.bit(three::WORD[k]) as u32 * 2) as u8,
                swizzle: Swizzle::from_packed(d.get(three::SWZ[k])),
                rep_ctrl: d.bit(three::REP[k]),
                negate: d.bit(three::NEG[k]),
                abs: d.bit(three::ABS[k]),
                ty: tys[k],
            };
            Operands::ThreeSrc {
                cond_mod: cmod()?,
                dst,
                src: [mk(0), mk(1), mk(2)],
            }
        }
        Format::Send => {
            let sfid = Sfid::from_hw(func).ok_or_else(|| d.err(format!("invalid SFID {func}")))?;
            let dst = d.dst(mode)?;
            let f0 = d.file(SRC0.file)?;
            if f0 == RegFile::Imm {
                return Err(d.err("SEND payload cannot be an immediate"));
            }
            let src0 = d.reg_src(&SRC0, mode, f0)?;
            if !bit(w, SRC0.addr_mode) || mode == AccessMode::Align16 {
                d.zero(f(95, 95), "src0 AddrImm[9] on a direct operand")?;
            }
            let ex_desc_31_28 = d.get(SRC1.ty) as u8;
            let desc = match d.file(SRC1.file)? {
                RegFile::Imm => SendDesc::Imm(d.get(SEND_DESC)),
                RegFile::Arf => {
                    if d.get(SRC1.reg) != ArfReg::A0.nr() as u32 {
                        return Err(d.err("SEND descriptor register is not a0"));
                    }
                    d.zero(f(126, 109), "SEND a0 descriptor operand fields")?;
                    SendDesc::A0 {
                        subnr: d.get(SRC1.subreg) as u8,
                    }
                }
                RegFile::Grf => return Err(d.err("SEND descriptor in a GRF")),
            };
            Operands::Send {
                sfid,
                eot: d.bit(SEND_EOT),
                dst,
                src0,
                desc,
                ex_desc_31_28,
            }
        }
        Format::SplitSend => {
            let sfid = Sfid::from_hw(func).ok_or_else(|| d.err(format!("invalid SFID {func}")))?;
            for u in sends::UNUSED {
                d.zero(*u, "unused split-send bits")?;
            }
            if d.bit(sends::DST_ADDR_MODE) || d.bit(sends::SRC0_ADDR_MODE) {
                return Err(d.err("indirect split-send operands are not supported"));
            }
            let file = |b: bool| if b { RegFile::Grf } else { RegFile::Arf };
            let dst = SendsReg {
                file: file(d.bit(sends::DST_FILE)),
                nr: d.get(sends::DST_REG) as u8,
                subnr16: d.bit(sends::DST_SUBREG) as u8,
            };
            let src0 = SendsReg {
                file: RegFile::Grf,
                nr: d.get(sends::SRC0_REG) as u8,
                subnr16: d.bit(sends::SRC0_SUBREG) as u8,
            };
            let src1 = SendsReg {
                file: file(d.bit(sends::SRC1_FILE)),
                nr: d.get(sends::SRC1_REG) as u8,
                subnr16: 0,
            };
            let desc = if d.bit(sends::DESC_A0) {
                d.zero(sends::DESC, "descriptor bits with a0 descriptor")?;
                SendDesc::A0 { subnr: 0 }
            } else {
                SendDesc::Imm(d.get(sends::DESC))
            };
            let ex_desc = if d.bit(sends::EXDESC_A0) {
                d.zero(f(95, 83), "ExDesc bits with a0 extended descriptor")?;
                d.zero(sends::EXDESC_9_6, "ExDesc[9:6] with a0 extended descriptor")?;
                ExDesc::A0 {
                    subnr_dw: d.get(sends::EXDESC_A0_SUBREG) as u8,
                }
            } else {
                ExDesc::Imm((d.get(sends::EXDESC_31_16) << 16) | (d.get(sends::EXDESC_9_6) << 6))
            };
            Operands::SplitSend {
                sfid,
                eot: d.bit(sends::EOT),
                dst,
                src0,
                src1,
                desc,
                ex_desc,
            }
        }
        Format::Branch => {
            d.zero(hdr::FUNC, "branch function bits")?;
            let dst = d.dst(mode)?;
            let src0_file = d.file(SRC0.file)?;
            let raw = d.get(SRC0.ty);
            let src0_ty = Type::from_hw(src0_file, raw, gen)
                .ok_or_else(|| d.err(format!("invalid src0 type {raw}")))?;
            Operands::Branch {
                dst,
                src0_file,
                src0_ty,
                jip: get(w, f(127, 96)) as i32,
                uip: get(w, f(95, 64)) as i32,
            }
        }
    };
    Ok(Instruction {
        opcode,
        access_mode: mode,
        exec_size,
        group: ChannelGroup {
            qtr: d.get(hdr::QTR_CTRL) as u8,
            nib: d.bit(hdr::NIB_CTRL),
        },
        we_all: d.bit(hdr::MASK_CTRL),
        dep_ctrl: DepCtrl {
            no_dd_clear: d.bit(hdr::NO_DD_CLEAR),
            no_dd_check: d.bit(hdr::NO_DD_CHECK),
        },
        thread_ctrl,
        predicate,
        flag: FlagReg {
            nr: d.bit(hdr::FLAG_REG) as u8,
            subnr: d.bit(hdr::FLAG_SUBREG) as u8,
        },
        saturate: d.bit(hdr::SATURATE),
        acc_wr_en: b28 && !opcode.has_branch_ctrl(),
        branch_ctrl: b28 && opcode.has_branch_ctrl(),
        debug: d.bit(hdr::DEBUG),
        operands,
    })
}
