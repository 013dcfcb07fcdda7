//! "Special Requirements for Handling Double Precision Data Types" and the CHV/BXT
//! restrictions for 64-bit operands and integer DWord multiply (applied to GLK as well:
//! it is the same 9LP design).

use super::ctx::{Ctx, Shape};

/// ALU instruction in "64-bit context": dst 8 bytes, execution type 8 bytes, or D x D MUL.
fn ctx64(c: &Ctx) -> bool {
    c.shape == Shape::Alu && c.is_64bit_context()
}

pub(super) fn align16_qword_exec2(c: &Ctx) -> Option<String> {
    if !ctx64(c) || !c.align16() {
        return None;
    }
    let d = c.dst?;
    let s0 = c.src(0)?.ty.size();
    let s1 = c.src(1).map_or(s0, |s| s.ty.size());
    (d.ty.size() == 8 && (s0 != 8 || s1 != 8) && c.exec > 2)
        .then(|| format!("QWord destination, non-QWord source, ExecSize {}", c.exec))
}

pub(super) fn lp_stride(c: &Ctx) -> Option<String> {
    if !ctx64(c) || c.align16() {
        return None;
    }
    let d = c.dst?;
    let dst_stride = d.hstride * d.ty.size();
    c.sources()
        .filter(|(_, s)| !s.is_imm() && !s.is_scalar())
        .find_map(|(i, s)| {
            let r = s.region;
            let h = if r.hstride != 0 { r.hstride } else { r.vstride };
            let src_stride = h as u32 * s.ty.size();
            (!src_stride.is_multiple_of(8)
                || !dst_stride.is_multiple_of(8)
                || src_stride != dst_stride)
                .then(|| {
                    format!(
                        "src{i} stride {src_stride} bytes, destination stride {dst_stride} bytes"
                    )
                })
        })
}

pub(super) fn lp_vstride(c: &Ctx) -> Option<String> {
    if !ctx64(c) || c.align16() {
        return None;
    }
    c.sources()
        .filter(|(_, s)| !s.is_imm())
        .find(|(_, s)| {
            let r = s.region;
            r.vstride as u32 != r.width as u32 * r.hstride as u32
        })
        .map(|(i, s)| format!("src{i} region {}", s.region))
}

pub(super) fn lp_same_offset(c: &Ctx) -> Option<String> {
    if !ctx64(c) || c.align16() {
        return None;
    }
    let d = c.dst?;
    c.sources()
        .filter(|(_, s)| !s.is_imm() && !s.is_scalar())
        .find(|(_, s)| s.subnr != d.subnr)
        .map(|(i, s)| {
            format!(
                "src{i} at byte {}, destination at byte {}",
                s.subnr, d.subnr
            )
        })
}

pub(super) fn lp_no_indirect(c: &Ctx) -> Option<String> {
    if !ctx64(c) {
        return None;
    }
    if c.dst.is_some_and(|d| d.is_indirect()) {
        return Some("indirect destination".into());
    }
    c.sources()
        .find(|(_, s)| s.is_indirect())
        .map(|(i, _)| format!("src{i} is indirect"))
}

pub(super) fn lp_no_arf(c: &Ctx) -> Option<String> {
    if !ctx64(c) {
        return None;
    }
    if c.inst.opcode == crate::model::Opcode::Mac {
        return Some("MAC reads the accumulator".into());
    }
    if c.inst.acc_wr_en {
        return Some("AccWrEnable writes the accumulator".into());
    }
    if c.dst.is_some_and(|d| d.is_arf_not_null()) {
        return Some("ARF destination".into());
    }
    c.sources()
        .find(|(_, s)| s.is_arf_not_null())
        .map(|(i, _)| format!("src{i} is an ARF register"))
}

pub(super) fn lp_no_depctrl(c: &Ctx) -> Option<String> {
    let dc = c.inst.dep_ctrl;
    (ctx64(c) && (dc.no_dd_check || dc.no_dd_clear)).then(|| "NoDDClr/NoDDChk set".into())
}

/// The rule tests' cases (see `testutil::all_cases`): for each rule of this file,
/// instructions that pass it and instructions that break it.
#[cfg(test)]
pub(super) mod rule_cases {
    pub(in crate::validate) fn cases() -> Vec<crate::validate::testutil::Case> {
        use crate::model::*;
        use crate::validate::testutil::*;
        use crate::validate::Platform;
        use Type::*;
        const BXT: Platform = Platform::Bxt;
        let add_df = |exec, dst, s0, s1| op2(Opcode::Add, exec, dst, s0, s1);
        let good = add_df(
            4,
            d(10, 0, DF, 1),
            s(12, 0, DF, 4, 4, 1),
            s(14, 0, DF, 4, 4, 1),
        );
        vec![
            case(
                "qword.align16-exec2",
                SKL,
                vec![align16(mov(2, d(10, 0, DF, 1), s16(12, F, 4)))],
                vec![align16(mov(4, d(10, 0, DF, 1), s16(12, F, 4)))],
            ),
            case(
                "lp64.stride",
                BXT,
                vec![
                    good,
                    // Scalar sources are exempt.
                    add_df(
                        4,
                        d(10, 0, DF, 1),
                        s(12, 8, DF, 0, 1, 0),
                        s(14, 0, DF, 4, 4, 1),
                    ),
                ],
                vec![mov(4, d(10, 0, DF, 1), s(12, 0, F, 4, 4, 1))],
            ),
            case(
                "lp64.vstride",
                BXT,
                vec![good],
                vec![add_df(
                    4,
                    d(10, 0, DF, 1),
                    s(12, 0, DF, 4, 2, 1),
                    s(14, 0, DF, 4, 4, 1),
                )],
            ),
            case(
                "lp64.same-offset",
                BXT,
                vec![good],
                vec![add_df(
                    2,
                    d(10, 0, DF, 1),
                    s(12, 8, DF, 2, 2, 1),
                    s(14, 0, DF, 2, 2, 1),
                )],
            ),
            case(
                "lp64.no-indirect",
                BXT,
                vec![good],
                vec![add_df(
                    4,
                    d(10, 0, DF, 1),
                    ind(DF, 4, 4, 1),
                    s(14, 0, DF, 4, 4, 1),
                )],
            ),
            case(
                "lp64.no-arf",
                Platform::Glk,
                vec![good],
                vec![
                    add_df(
                        4,
                        d(10, 0, DF, 1),
                        acc(0, 0, DF, 4, 4, 1),
                        s(14, 0, DF, 4, 4, 1),
                    ),
                    {
                        let mut i = good;
                        i.acc_wr_en = true;
                        i
                    },
                ],
            ),
            case(
                "lp64.no-depctrl",
                Platform::Chv,
                vec![good],
                vec![{
                    let mut i = good;
                    i.dep_ctrl.no_dd_check = true;
                    i
                }],
            ),
            // The same instructions are fine on SKL, where the low-power rules do not apply.
            case(
                "lp64.no-depctrl",
                SKL,
                vec![{
                    let mut i = good;
                    i.dep_ctrl.no_dd_check = true;
                    i
                }],
                vec![],
            ),
        ]
    }
}
