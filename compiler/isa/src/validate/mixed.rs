//! "Special Restrictions for Handling Mixed Mode Float Operations" (CHV, SKL+): F and HF
//! mixed among the destination and the sources of a 1- or 2-source instruction.

use super::ctx::Ctx;
use crate::model::*;

fn mixed(c: &Ctx) -> bool {
    c.is_mixed_float()
}

pub(super) fn indirect_src(c: &Ctx) -> Option<String> {
    if !mixed(c) {
        return None;
    }
    c.sources()
        .find(|(_, s)| s.is_indirect())
        .map(|(i, _)| format!("src{i} is indirect"))
}

pub(super) fn f_dst_simd8(c: &Ctx) -> Option<String> {
    let d = c.dst?;
    (mixed(c) && d.ty == Type::F && c.exec > 8 && c.inst.opcode != Opcode::Mov)
        .then(|| format!("F destination with ExecSize {}", c.exec))
}

/// HF destination that is packed: Align16 (always packed) or Align1 stride 1.
fn packed_hf_dst(c: &Ctx) -> bool {
    c.dst
        .is_some_and(|d| d.ty == Type::HF && (c.align16() || d.hstride == 1))
}

pub(super) fn packed_hf_dst_simd8(c: &Ctx) -> Option<String> {
    (mixed(c) && packed_hf_dst(c) && c.exec > 8 && c.inst.opcode != Opcode::Mov)
        .then(|| format!("packed HF destination with ExecSize {}", c.exec))
}

pub(super) fn align16_packed(c: &Ctx) -> Option<String> {
    if !mixed(c) || !c.align16() {
        return None;
    }
    c.sources()
        .find(|(_, s)| !s.is_imm() && s.region.vstride != 4)
        .map(|(i, s)| format!("src{i} VertStride {}", s.region.vstride))
}

pub(super) fn align16_oword(c: &Ctx) -> Option<String> {
    (mixed(c) && c.align16() && c.exec > 8)
        .then(|| format!("Align16 mixed mode with ExecSize {}", c.exec))
}

pub(super) fn align16_no_acc(c: &Ctx) -> Option<String> {
    (mixed(c) && c.align16() && c.reads_acc()).then(|| "accumulator read".into())
}

pub(super) fn align1_packed_hf_oword(c: &Ctx) -> Option<String> {
    let d = c.dst?;
    if !mixed(c) || c.align16() || d.ty != Type::HF || d.hstride != 1 {
        return None;
    }
    let start = d.subnr % 16;
    (start != 0 || start + 2 * c.exec > 16).then(|| {
        format!(
            "packed HF destination at byte {} with ExecSize {}",
            d.subnr, c.exec
        )
    })
}

pub(super) fn align1_math_strided_hf(c: &Ctx) -> Option<String> {
    if !mixed(c) || c.align16() || c.inst.opcode != Opcode::Math {
        return None;
    }
    // A scalar (<0;1,0>) input is not "strided" nor packed; left unenforced (AMBIGUITIES).
    c.sources()
        .find(|(_, s)| s.ty == Type::HF && !s.is_imm() && !s.is_scalar() && s.region.hstride <= 1)
        .map(|(i, s)| format!("src{i} HF region {}", s.region))
}

pub(super) fn acc_src_offset0(c: &Ctx) -> Option<String> {
    let d = c.dst?;
    if !mixed(c) || c.align16() || d.ty != Type::HF || d.hstride != 1 {
        return None;
    }
    c.sources()
        .find(|(_, s)| s.is_acc() && matches!(s.ty, Type::F | Type::HF) && s.subnr != 0)
        .map(|(i, s)| format!("src{i} accumulator at byte {}", s.subnr))
}

pub(super) fn acc_hf_dst_stride2(c: &Ctx) -> Option<String> {
    let d = c.dst?;
    (mixed(c) && !c.align16() && d.ty == Type::HF && c.reads_acc() && d.hstride != 2).then(|| {
        format!(
            "HF destination stride {} with an accumulator source",
            d.hstride
        )
    })
}

/// The rule tests' cases (see `testutil::all_cases`): for each rule of this file,
/// instructions that pass it and instructions that break it.
#[cfg(test)]
pub(super) mod rule_cases {
    use super::*;

    pub(in crate::validate) fn cases() -> Vec<crate::validate::testutil::Case> {
        use crate::validate::testutil::*;
        use Type::*;
        let add = |exec, dst, s0, s1| op2(Opcode::Add, exec, dst, s0, s1);
        vec![
            case(
                "mixed.indirect-src",
                SKL,
                vec![add(
                    8,
                    d(10, 0, F, 1),
                    s(12, 0, HF, 8, 8, 1),
                    s(14, 0, F, 8, 8, 1),
                )],
                vec![add(
                    8,
                    d(10, 0, F, 1),
                    ind(HF, 8, 8, 1),
                    s(14, 0, F, 8, 8, 1),
                )],
            ),
            case(
                "mixed.f-dst-simd8",
                SKL,
                vec![
                    add(
                        8,
                        d(10, 0, F, 1),
                        s(12, 0, HF, 8, 8, 1),
                        s(14, 0, F, 8, 8, 1),
                    ),
                    // Conversion MOVs are exempt (Mesa's SIMD16 HF->F MOVs, see AMBIGUITIES).
                    mov(16, d(6, 0, F, 1), s(2, 0, HF, 0, 1, 0)),
                ],
                vec![add(
                    16,
                    d(10, 0, F, 1),
                    s(12, 0, HF, 16, 16, 1),
                    s(14, 0, F, 8, 8, 1),
                )],
            ),
            case(
                "mixed.packed-hf-dst-simd8",
                SKL,
                vec![add(
                    8,
                    d(10, 0, HF, 1),
                    s(12, 0, HF, 8, 8, 1),
                    s(14, 0, F, 8, 8, 1),
                )],
                vec![add(
                    16,
                    d(10, 0, HF, 1),
                    s(12, 0, HF, 16, 16, 1),
                    s(14, 0, F, 8, 8, 1),
                )],
            ),
            case(
                "mixed.align16-packed",
                SKL,
                vec![align16(add(
                    4,
                    d(10, 0, F, 1),
                    s16(12, HF, 4),
                    s16(14, F, 4),
                ))],
                vec![align16(add(
                    4,
                    d(10, 0, F, 1),
                    s16(12, HF, 0),
                    s16(14, F, 4),
                ))],
            ),
            case(
                "mixed.align16-oword",
                SKL,
                vec![align16(add(
                    8,
                    d(10, 0, HF, 1),
                    s16(12, HF, 4),
                    s16(14, F, 4),
                ))],
                vec![align16(mov(16, d(10, 0, HF, 1), s16(12, F, 4)))],
            ),
            case(
                "mixed.align16-no-acc",
                SKL,
                vec![align16(add(
                    4,
                    d(10, 0, F, 1),
                    s16(12, HF, 4),
                    s16(14, F, 4),
                ))],
                vec![align16(add(
                    4,
                    d(10, 0, F, 1),
                    s16(12, HF, 4),
                    acc(0, 0, F, 4, 4, 1),
                ))],
            ),
            case(
                "mixed.align1-packed-hf-oword",
                SKL,
                vec![
                    mov(8, d(10, 16, HF, 1), s(12, 0, F, 8, 8, 1)),
                    add(
                        4,
                        d(10, 0, HF, 1),
                        s(12, 0, HF, 4, 4, 1),
                        s(14, 0, F, 4, 4, 1),
                    ),
                ],
                vec![
                    mov(8, d(10, 8, HF, 1), s(12, 0, F, 8, 8, 1)),
                    mov(16, d(10, 0, HF, 1), s(12, 0, F, 8, 8, 1)),
                ],
            ),
            case(
                "mixed.align1-math-strided-hf",
                SKL,
                vec![math(
                    MathFunction::Inv,
                    8,
                    d(10, 0, F, 1),
                    s(12, 0, HF, 16, 8, 2),
                    null_src(F),
                )],
                vec![math(
                    MathFunction::Inv,
                    8,
                    d(10, 0, F, 1),
                    s(12, 0, HF, 8, 8, 1),
                    null_src(F),
                )],
            ),
            case(
                "mixed.acc-src-offset0",
                SKL,
                vec![add(
                    4,
                    d(10, 0, HF, 2),
                    acc(0, 16, F, 4, 4, 1),
                    s(14, 0, F, 4, 4, 1),
                )],
                vec![add(
                    4,
                    d(10, 0, HF, 1),
                    acc(0, 16, F, 4, 4, 1),
                    s(14, 0, F, 4, 4, 1),
                )],
            ),
            case(
                "mixed.acc-hf-dst-stride2",
                SKL,
                vec![add(
                    4,
                    d(10, 0, HF, 2),
                    acc(0, 0, F, 4, 4, 1),
                    s(14, 0, F, 4, 4, 1),
                )],
                vec![add(
                    4,
                    d(10, 0, HF, 1),
                    acc(0, 0, F, 4, 4, 1),
                    s(14, 0, F, 4, 4, 1),
                )],
            ),
        ]
    }
}
