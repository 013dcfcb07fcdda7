//! "General Restrictions Based on Operand Types": conversions, destination stride and
//! alignment versus the execution type, byte destinations; immediate vectors; 3-source
//! replicate control; null sources; opcode availability.

use super::ctx::{is_byte, is_int, Ctx, Shape, SrcV};
use super::Platform;
use crate::model::*;

/// The operand-type rules speak about ALU instructions with more than one channel: with
/// ExecSize 1 there is no destination stride, and Mesa skips them too (see AMBIGUITIES).
fn alu_multi(c: &Ctx) -> bool {
    c.shape == Shape::Alu && c.exec > 1
}

pub(super) fn opcode_on_gen(c: &Ctx) -> Option<String> {
    let op = c.inst.opcode;
    (!op.is_valid_on(c.gen())).then(|| format!("{op} does not exist on {}", c.gen()))
}

pub(super) fn src_not_null(c: &Ctx) -> Option<String> {
    if !matches!(c.shape, Shape::Alu | Shape::Send) {
        return None;
    }
    c.sources()
        .find(|(_, s)| s.is_null())
        .map(|(i, _)| format!("src{i} is null"))
}

pub(super) fn packed_byte_dst(c: &Ctx) -> Option<String> {
    if !alu_multi(c) {
        return None;
    }
    let d = c.dst?;
    (is_byte(d.ty) && d.hstride == 1 && !c.is_raw_mov())
        .then(|| format!("packed {} destination on a non-raw {}", d.ty, c.inst.opcode))
}

/// The first source whose conversion to the destination goes between a type of class `a`
/// and one of class `b`, in either direction (the conversion restrictions name type pairs,
/// not directions).
fn converting_src<'c>(
    c: &'c Ctx,
    a: impl Fn(Type) -> bool,
    b: impl Fn(Type) -> bool,
) -> Option<(usize, &'c SrcV)> {
    let d = c.dst?;
    c.sources()
        .find(|(_, s)| (a(d.ty) && b(s.ty)) || (b(d.ty) && a(s.ty)))
}

fn is_64bit(t: Type) -> bool {
    t.size() == 8
}

fn is_hf(t: Type) -> bool {
    t == Type::HF
}

/// A conversion between classes `a` and `b` on a multi-channel ALU instruction, as the
/// diagnostic `dst <- srcN type`.
fn multi_conversion(c: &Ctx, a: impl Fn(Type) -> bool, b: impl Fn(Type) -> bool) -> Option<String> {
    if !alu_multi(c) {
        return None;
    }
    let d = c.dst?;
    converting_src(c, a, b).map(|(i, s)| format!("{} <- src{i} {}", d.ty, s.ty))
}

pub(super) fn byte_64bit_conversion(c: &Ctx) -> Option<String> {
    multi_conversion(c, is_byte, is_64bit)
}

pub(super) fn hf_64bit_conversion(c: &Ctx) -> Option<String> {
    multi_conversion(c, is_hf, is_64bit)
}

/// Align1 conversion between an integer type and HF (either direction).
fn int_hf_conversion(c: &Ctx) -> bool {
    alu_multi(c) && !c.align16() && converting_src(c, is_hf, is_int).is_some()
}

pub(super) fn int_hf_dst_stride(c: &Ctx) -> Option<String> {
    let d = c.dst?;
    (int_hf_conversion(c) && d.hstride * d.ty.size() != 4).then(|| {
        format!(
            "destination stride {} x {} bytes = {} bytes",
            d.hstride,
            d.ty.size(),
            d.hstride * d.ty.size()
        )
    })
}

pub(super) fn int_hf_dst_align(c: &Ctx) -> Option<String> {
    let d = c.dst?;
    (int_hf_conversion(c) && d.is_direct() && !d.subnr.is_multiple_of(4))
        .then(|| format!("destination at byte {}", d.subnr))
}

pub(super) fn to_hf_word_location(c: &Ctx) -> Option<String> {
    let d = c.dst?;
    if !alu_multi(c) || c.align16() || d.ty != Type::HF || int_hf_conversion(c) {
        return None;
    }
    if !c.sources().any(|(_, s)| s.ty != Type::HF) {
        return None;
    }
    let packed_ok = c.is_mixed_float() && d.hstride == 1 && d.subnr.is_multiple_of(16);
    (d.hstride != 2 && !packed_ok).then(|| {
        format!(
            "HF destination stride {} at byte {} (mixed-float: {})",
            d.hstride,
            d.subnr,
            c.is_mixed_float()
        )
    })
}

/// The general dst-vs-execution-type rule applies: not mixed-float (which has its own
/// rules on CHV/SKL+), execution type wider than the destination.
fn exec_wider_than_dst(c: &Ctx) -> Option<(Type, Type)> {
    let d = c.dst?;
    let et = c.exec_type()?;
    let mixed_has_own_rules = c.is_mixed_float() && c.platform != Platform::Bdw;
    (alu_multi(c) && !mixed_has_own_rules && et.size() > d.ty.size()).then_some((et, d.ty))
}

pub(super) fn dst_stride_exec_ratio(c: &Ctx) -> Option<String> {
    let (et, dt) = exec_wider_than_dst(c)?;
    let d = c.dst?;
    if is_byte(dt) && c.is_raw_mov() {
        return None;
    }
    (d.hstride * dt.size() != et.size()).then(|| {
        format!(
            "execution type {et} ({} bytes), destination {dt} stride {} ({} bytes)",
            et.size(),
            d.hstride,
            d.hstride * dt.size()
        )
    })
}

pub(super) fn dst_align_exec(c: &Ctx) -> Option<String> {
    let (et, dt) = exec_wider_than_dst(c)?;
    let d = c.dst?;
    if c.align16() || !d.is_direct() {
        return None;
    }
    let off = d.subnr % et.size();
    // Byte destinations may sit at the second byte of the channel; on CHV and SKL+ word
    // destinations at the second word ("relaxed alignment rule for word destinations").
    let ok = off == 0
        || (is_byte(dt) && off == 1)
        || (dt.size() == 2 && off == 2 && c.platform != Platform::Bdw);
    (!ok).then(|| {
        format!(
            "destination at byte {} with execution type {et} ({} bytes)",
            d.subnr,
            et.size()
        )
    })
}

/// The vector immediate of an ALU instruction (it sits in the last source).
fn vector_imm(c: &Ctx) -> Option<Type> {
    if c.shape != Shape::Alu {
        return None;
    }
    let s = c.src(c.nsrc.checked_sub(1)?)?;
    (s.is_imm() && s.ty.is_vector_imm()).then_some(s.ty)
}

pub(super) fn vector_imm_dst_align(c: &Ctx) -> Option<String> {
    let t = vector_imm(c)?;
    let d = c.dst?;
    (!d.subnr.is_multiple_of(16)).then(|| format!("{t} immediate, destination at byte {}", d.subnr))
}

pub(super) fn vector_imm_dst_stride(c: &Ctx) -> Option<String> {
    let t = vector_imm(c)?;
    let d = c.dst?;
    let want = if t == Type::VF { 4 } else { 2 };
    let got = d.hstride * d.ty.size();
    (got != want)
        .then(|| format!("{t} immediate needs a {want}-byte destination stride, got {got}"))
}

pub(super) fn three_src_rep_ctrl_64(c: &Ctx) -> Option<String> {
    if c.shape != Shape::ThreeSrc {
        return None;
    }
    c.sources()
        .find(|(_, s)| s.rep_ctrl && s.ty.size() == 8)
        .map(|(i, s)| format!("src{i} {} uses RepCtrl", s.ty))
}

/// The rule tests' cases (see `testutil::all_cases`): for each rule of this file,
/// instructions that pass it and instructions that break it.
#[cfg(test)]
pub(super) mod rule_cases {
    use super::*;

    pub(in crate::validate) fn cases() -> Vec<crate::validate::testutil::Case> {
        use crate::validate::testutil::*;
        use Type::*;
        let mut rep = three(Opcode::Mad, 4, DF, [src3(2, DF), src3(4, DF), src3(6, DF)]);
        let pass_rep = rep;
        if let Operands::ThreeSrc { src, .. } = &mut rep.operands {
            src[1].rep_ctrl = true;
        }
        vec![
            case(
                "opcode.on-gen",
                SKL,
                vec![sends(20, 1, Some(30), 1, false)],
                vec![],
            ),
            crate::validate::testutil::Case {
                rule: "opcode.on-gen",
                platform: Platform::Bdw,
                pass: vec![vec![send(0, 20, 1, 0, false)]],
                fail: vec![vec![sends(20, 1, Some(30), 1, false)]],
            },
            case(
                "src.not-null",
                SKL,
                vec![op2(
                    Opcode::Add,
                    8,
                    d(10, 0, F, 1),
                    s(12, 0, F, 8, 8, 1),
                    s(14, 0, F, 8, 8, 1),
                )],
                vec![
                    op2(
                        Opcode::Add,
                        8,
                        d(10, 0, F, 1),
                        s(12, 0, F, 8, 8, 1),
                        null_src(F),
                    ),
                    mov(8, d(10, 0, F, 1), null_src(F)),
                ],
            ),
            case(
                "type.packed-byte-dst",
                SKL,
                vec![
                    mov(8, d(10, 0, UB, 1), s(12, 0, UB, 8, 8, 1)),
                    mov(8, d(10, 0, B, 1), s(12, 0, UB, 8, 8, 1)),
                    mov(8, d(10, 0, UB, 2), s(12, 0, UW, 8, 8, 1)),
                ],
                vec![
                    op2(
                        Opcode::Add,
                        8,
                        d(10, 0, UB, 1),
                        s(12, 0, UB, 8, 8, 1),
                        s(14, 0, UB, 8, 8, 1),
                    ),
                    mov(8, d(10, 0, UB, 1), s(12, 0, UW, 8, 8, 1)),
                    sat(mov(8, d(10, 0, UB, 1), s(12, 0, UB, 8, 8, 1))),
                ],
            ),
            case(
                "type.byte-64bit-conversion",
                SKL,
                vec![mov(4, d(10, 0, D, 2), s(12, 0, DF, 4, 4, 1))],
                vec![
                    mov(4, d(10, 0, B, 8), s(12, 0, DF, 4, 4, 1)),
                    mov(4, d(10, 0, Q, 1), s(12, 0, UB, 4, 4, 1)),
                ],
            ),
            case(
                "type.hf-64bit-conversion",
                SKL,
                vec![mov(4, d(10, 0, F, 2), s(12, 0, DF, 4, 4, 1))],
                vec![
                    mov(4, d(10, 0, HF, 4), s(12, 0, DF, 4, 4, 1)),
                    mov(4, d(10, 0, DF, 1), s(12, 0, HF, 4, 4, 1)),
                ],
            ),
            case(
                "type.int-hf-dst-stride",
                SKL,
                vec![
                    // The example: HF -> B with a DWord destination stride.
                    mov(16, d(9, 0, B, 4), s(3, 0, HF, 16, 8, 2)),
                    mov(8, d(10, 0, HF, 2), s(12, 0, D, 8, 8, 1)),
                    mov(8, d(10, 0, D, 1), s(12, 0, HF, 8, 8, 1)),
                    mov(8, d(10, 0, W, 2), s(12, 0, HF, 8, 8, 1)),
                ],
                vec![
                    mov(16, d(9, 0, B, 2), s(3, 0, HF, 16, 8, 2)),
                    mov(8, d(10, 0, HF, 1), s(12, 0, W, 8, 8, 1)),
                    mov(8, d(10, 0, W, 1), s(12, 0, HF, 8, 8, 1)),
                ],
            ),
            case(
                "type.int-hf-dst-align",
                SKL,
                vec![mov(16, d(9, 0, B, 4), s(3, 0, HF, 16, 8, 2))],
                vec![
                    mov(16, d(9, 1, B, 4), s(3, 0, HF, 16, 8, 2)),
                    mov(4, d(10, 2, HF, 2), s(12, 0, D, 4, 4, 1)),
                ],
            ),
            case(
                "type.to-hf-word-location",
                SKL,
                vec![
                    mov(8, d(10, 0, HF, 2), s(12, 0, F, 8, 8, 1)),
                    mov(8, d(10, 0, HF, 1), s(12, 0, F, 8, 8, 1)),
                ],
                vec![
                    mov(4, d(10, 0, HF, 4), s(12, 0, F, 4, 4, 1)),
                    mov(4, d(10, 8, HF, 1), s(12, 0, F, 4, 4, 1)),
                ],
            ),
            case(
                "type.dst-stride-exec-ratio",
                SKL,
                vec![
                    mov(8, d(10, 0, W, 2), s(12, 0, D, 8, 8, 1)),
                    mov(8, d(10, 0, B, 4), s(12, 0, D, 8, 8, 1)),
                    // 64-bit to word (an int64 -> int16 conversion): the QWord execution type
                    // needs a destination stride of 4 words.
                    mov(8, d(10, 0, W, 4), s(12, 0, Q, 4, 4, 1)),
                    mov(4, d(10, 0, UW, 4), s(12, 0, UQ, 4, 4, 1)),
                ],
                vec![
                    mov(8, d(10, 0, W, 1), s(12, 0, D, 8, 8, 1)),
                    mov(8, d(10, 0, B, 2), s(12, 0, D, 8, 8, 1)),
                    mov(8, d(10, 0, W, 2), s(12, 0, Q, 4, 4, 1)),
                    mov(8, d(10, 0, W, 1), s(12, 0, Q, 4, 4, 1)),
                ],
            ),
            case(
                "type.dst-align-exec",
                SKL,
                vec![
                    mov(8, d(10, 4, W, 2), s(12, 0, D, 8, 8, 1)),
                    // Byte destinations may start at the second byte of the channel.
                    mov(8, d(10, 1, B, 4), s(12, 0, D, 8, 8, 1)),
                    // CHV/SKL+: a word destination may use the second word of the channel.
                    mov(4, d(10, 2, W, 2), s(12, 0, D, 4, 4, 1)),
                    // Word from QWord: the QWord channel's first (or second) word.
                    mov(4, d(10, 8, W, 4), s(12, 0, Q, 4, 4, 1)),
                    mov(4, d(10, 2, W, 4), s(12, 0, Q, 4, 4, 1)),
                ],
                vec![
                    mov(8, d(10, 2, B, 4), s(12, 0, D, 8, 8, 1)),
                    // DWord-aligned but not QWord-aligned for a QWord execution type.
                    mov(4, d(10, 4, W, 4), s(12, 0, Q, 4, 4, 1)),
                ],
            ),
            crate::validate::testutil::Case {
                rule: "type.dst-align-exec",
                platform: Platform::Bdw,
                pass: vec![vec![mov(4, d(10, 0, W, 2), s(12, 0, D, 4, 4, 1))]],
                fail: vec![vec![mov(4, d(10, 2, W, 2), s(12, 0, D, 4, 4, 1))]],
            },
            case(
                "imm.vector-dst-align",
                SKL,
                vec![mov(8, d(10, 0, W, 1), imm(Imm::v(0x7654_3210)))],
                vec![mov(8, d(10, 8, W, 1), imm(Imm::v(0x7654_3210)))],
            ),
            case(
                "imm.vector-dst-stride",
                SKL,
                vec![
                    mov(8, d(10, 0, UW, 1), imm(Imm::uv(0x7654_3210))),
                    mov(4, d(10, 0, F, 1), imm(Imm::vf(0x3020_1000))),
                ],
                vec![
                    mov(8, d(10, 0, UD, 1), imm(Imm::v(0x7654_3210))),
                    mov(8, d(10, 0, HF, 1), imm(Imm::vf(0x3020_1000))),
                ],
            ),
            case("3src.rep-ctrl-64bit", SKL, vec![pass_rep], vec![rep]),
        ]
    }
}
