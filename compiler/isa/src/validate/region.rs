//! "General Restrictions on Regioning Parameters" and "Region Alignment Rules" (Align1),
//! the Align16 region rules, and the ExecSize x element-size limit.

use super::ctx::{Ctx, Shape, SrcV};
use crate::model::*;

const GRF: u32 = 32;

/// Register sources whose Align1 region is encoded (ALU and SEND src0).
fn a1_srcs<'c>(c: &'c Ctx) -> impl Iterator<Item = (usize, &'c SrcV)> {
    let on = matches!(c.shape, Shape::Alu | Shape::Send) && !c.align16();
    c.sources().filter(move |(_, s)| on && !s.is_imm())
}

fn first<'c>(
    mut it: impl Iterator<Item = (usize, &'c SrcV)>,
    bad: impl Fn(&SrcV) -> bool,
) -> Option<String> {
    it.find(|(_, s)| bad(s))
        .map(|(i, s)| format!("src{i} region {}", s.region))
}

pub(super) fn exec_ge_width(c: &Ctx) -> Option<String> {
    first(a1_srcs(c), |s| c.exec < s.region.width as u32)
        .map(|d| format!("{d} with ExecSize {}", c.exec))
}

pub(super) fn width1_hstride0(c: &Ctx) -> Option<String> {
    first(a1_srcs(c), |s| s.region.width == 1 && s.region.hstride != 0)
}

pub(super) fn exec_eq_width_vstride(c: &Ctx) -> Option<String> {
    first(a1_srcs(c), |s| {
        let r = s.region;
        r.vstride != Region::VXH
            && c.exec == r.width as u32
            && r.hstride != 0
            && r.vstride as u32 != r.width as u32 * r.hstride as u32
    })
    .map(|d| format!("{d} with ExecSize {}", c.exec))
}

pub(super) fn scalar_exec1(c: &Ctx) -> Option<String> {
    first(a1_srcs(c), |s| {
        let r = s.region;
        r.vstride != Region::VXH
            && c.exec == 1
            && r.width == 1
            && (r.vstride != 0 || r.hstride != 0)
    })
}

pub(super) fn zero_strides_width1(c: &Ctx) -> Option<String> {
    first(a1_srcs(c), |s| {
        s.region.vstride == 0 && s.region.hstride == 0 && s.region.width != 1
    })
}

/// Rows of a direct GRF region whose `width` elements straddle a GRF boundary.
/// Strides are non-negative, so a row spans from its first element's first byte to its
/// last element's last byte.
fn row_crosses_grf(c: &Ctx, s: &SrcV) -> bool {
    let r = s.region;
    if s.grf().is_none() || r.vstride == Region::VXH || r.width == 0 {
        return false;
    }
    let size = s.ty.size();
    let width = (r.width as u32).min(c.exec).max(1);
    let rows = (c.exec / width).max(1);
    let row_len = (width - 1) * r.hstride as u32 * size + size;
    (0..rows).any(|y| {
        let base = s.subnr + y * r.vstride as u32 * size;
        base / GRF != (base + row_len - 1) / GRF
    })
}

pub(super) fn width_no_grf_cross(c: &Ctx) -> Option<String> {
    first(a1_srcs(c).filter(|_| c.shape == Shape::Alu), |s| {
        row_crosses_grf(c, s)
    })
    .map(|d| format!("{d}: a row crosses a GRF boundary"))
}

/// One past the last byte a direct GRF source region touches, from the register start
/// (the last element of the last row: strides are non-negative).
fn src_end(c: &Ctx, s: &SrcV) -> u32 {
    let r = s.region;
    let size = s.ty.size();
    let width = (r.width as u32).min(c.exec).max(1);
    let rows = (c.exec / width).max(1);
    s.subnr + ((rows - 1) * r.vstride as u32 + (width - 1) * r.hstride as u32) * size + size
}

pub(super) fn src_two_grfs(c: &Ctx) -> Option<String> {
    if c.shape != Shape::Alu {
        return None;
    }
    a1_srcs(c)
        .filter(|(_, s)| s.grf().is_some() && s.region.vstride != Region::VXH)
        .find(|(_, s)| src_end(c, s) > 2 * GRF)
        .map(|(i, s)| {
            format!(
                "src{i} region {} reaches byte {}",
                s.region,
                src_end(c, s) - 1
            )
        })
}

fn dst_end(c: &Ctx) -> Option<u32> {
    let d = c.dst?;
    d.loc_grf()?;
    Some(d.subnr + ((c.exec - 1) * d.hstride + 1) * d.ty.size())
}

pub(super) fn dst_two_grfs(c: &Ctx) -> Option<String> {
    if c.shape != Shape::Alu || c.align16() {
        return None;
    }
    let end = dst_end(c)?;
    (end > 2 * GRF).then(|| format!("destination reaches byte {}", end - 1))
}

pub(super) fn dst_hstride_nonzero(c: &Ctx) -> Option<String> {
    if !matches!(c.shape, Shape::Alu | Shape::Send) || c.align16() {
        return None;
    }
    let d = c.dst?;
    (!d.is_null() && d.hstride == 0).then(|| "destination HorzStride 0".into())
}

pub(super) fn math_dst_even_split(c: &Ctx) -> Option<String> {
    if c.inst.opcode != Opcode::Math || c.align16() {
        return None;
    }
    let d = c.dst?;
    d.loc_grf()?;
    let size = d.ty.size();
    let (mut lo, mut hi) = (0u32, 0u32);
    for ch in 0..c.exec {
        let start = d.subnr + ch * d.hstride * size;
        if start / GRF == 0 {
            lo += 1;
        } else {
            hi += 1;
        }
    }
    (lo != 0 && hi != 0 && lo != hi)
        .then(|| format!("{lo} elements in the first register, {hi} in the second"))
}

/// An Align1 MATH source that is not a scalar steps through its elements as the
/// destination does, in bytes (mixed-float math reads HF at stride 2 into a packed F,
/// `mixed.align1-math-strided-hf`). A source row of one element steps by its vertical
/// stride.
pub(super) fn math_src_dst_stride(c: &Ctx) -> Option<String> {
    if c.inst.opcode != Opcode::Math || c.align16() {
        return None;
    }
    let d = c.dst.filter(|d| !d.is_null())?;
    let step = |s: &SrcV| {
        let elems = if s.region.width == 1 {
            s.region.vstride as u32
        } else {
            s.region.hstride as u32
        };
        elems * s.ty.size()
    };
    first(a1_srcs(c), |s| {
        !s.is_scalar() && step(s) != d.hstride * d.ty.size()
    })
    .map(|e| format!("{e} with destination HorzStride {}", d.hstride))
}

pub(super) fn align16_dst_hstride1(c: &Ctx) -> Option<String> {
    if c.shape != Shape::Alu || !c.align16() {
        return None;
    }
    let d = c.dst?;
    (!d.is_null() && d.hstride != 1).then(|| format!("destination HorzStride {}", d.hstride))
}

pub(super) fn align16_vstride(c: &Ctx) -> Option<String> {
    if c.shape != Shape::Alu || !c.align16() {
        return None;
    }
    c.sources()
        .find(|(_, s)| !s.is_imm() && !matches!(s.region.vstride, 0 | 2 | 4))
        .map(|(i, s)| format!("src{i} VertStride {}", s.region.vstride))
}

pub(super) fn exec_size_bytes(c: &Ctx) -> Option<String> {
    if !matches!(c.shape, Shape::Alu | Shape::ThreeSrc) {
        return None;
    }
    let n = c
        .sources()
        .map(|(_, s)| s.ty.size())
        .chain(c.dst.map(|d| d.ty.size()))
        .max()?;
    (c.exec * n > 64).then(|| format!("ExecSize {} x {n} bytes = {}", c.exec, c.exec * n))
}

pub(super) fn three_src_align16(c: &Ctx) -> Option<String> {
    (c.shape == Shape::ThreeSrc && !c.align16()).then(|| "3-source instruction in Align1".into())
}

impl super::ctx::DstV {
    /// GRF number of a direct GRF destination.
    pub fn loc_grf(&self) -> Option<u8> {
        match self.loc {
            super::ctx::Loc::Grf(n) => Some(n),
            _ => None,
        }
    }
}

/// The rule tests' cases (see `testutil::all_cases`): for each rule of this file,
/// instructions that pass it and instructions that break it.
#[cfg(test)]
pub(super) mod rule_cases {
    use super::*;

    pub(in crate::validate) fn cases() -> Vec<crate::validate::testutil::Case> {
        use crate::validate::testutil::*;
        use Type::*;
        // An Align16 SIMD8 float add: the destination's HorzStride and src0's VertStride vary.
        let a16_add = |dst_hstride, src0_vstride| {
            align16(op2(
                Opcode::Add,
                8,
                d(10, 0, F, dst_hstride),
                s16(12, F, src0_vstride),
                s16(14, F, 4),
            ))
        };
        vec![
            case(
                "region.exec-ge-width",
                SKL,
                vec![mov(8, d(10, 0, F, 1), s(12, 0, F, 8, 8, 1))],
                vec![mov(4, d(10, 0, F, 1), s(12, 0, F, 8, 8, 1))],
            ),
            case(
                "region.width1-hstride0",
                SKL,
                vec![mov(8, d(10, 0, F, 1), s(12, 0, F, 1, 1, 0))],
                vec![mov(8, d(10, 0, F, 1), s(12, 0, F, 1, 1, 1))],
            ),
            case(
                "region.exec-eq-width-vstride",
                SKL,
                vec![
                    mov(8, d(10, 0, W, 1), s(12, 0, W, 16, 8, 2)),
                    // ExecSize > Width: VertStride is free.
                    mov(8, d(10, 0, F, 1), s(12, 0, F, 0, 4, 1)),
                ],
                vec![mov(8, d(10, 0, F, 1), s(12, 0, F, 4, 8, 1))],
            ),
            case(
                "region.scalar-exec1",
                SKL,
                vec![mov(1, d(10, 0, F, 1), s(12, 0, F, 0, 1, 0))],
                vec![mov(1, d(10, 0, F, 1), s(12, 0, F, 1, 1, 0))],
            ),
            case(
                "region.zero-strides-width1",
                SKL,
                vec![mov(8, d(10, 0, F, 1), s(12, 0, F, 0, 1, 0))],
                vec![mov(8, d(10, 0, F, 1), s(12, 0, F, 0, 2, 0))],
            ),
            case(
                "region.width-no-grf-cross",
                SKL,
                vec![
                    mov(8, d(10, 0, F, 1), s(12, 0, F, 8, 8, 1)),
                    add_df_simd8_4_4_1(),
                ],
                vec![
                    // g12.1<8,8,1>F: the 8th element lands in g13.
                    mov(8, d(10, 0, F, 1), s(12, 4, F, 8, 8, 1)),
                    // SIMD8 <8,8,1>DF is 64 bytes in one row.
                    op2(
                        Opcode::Add,
                        8,
                        d(10, 0, DF, 1),
                        s(20, 0, DF, 8, 8, 1),
                        s(22, 0, DF, 4, 4, 1),
                    ),
                ],
            ),
            case(
                "region.src-two-grfs",
                SKL,
                vec![mov(16, d(10, 0, F, 1), s(12, 0, F, 8, 8, 1))],
                vec![mov(16, d(10, 0, F, 1), s(12, 0, F, 16, 8, 1))],
            ),
            case(
                "region.dst-two-grfs",
                SKL,
                vec![mov(16, d(10, 0, W, 2), s(12, 0, W, 16, 16, 1))],
                vec![mov(16, d(10, 0, F, 2), s(12, 0, F, 0, 1, 0))],
            ),
            case(
                "region.dst-hstride-nonzero",
                SKL,
                vec![mov(8, d(10, 0, F, 1), s(12, 0, F, 8, 8, 1))],
                vec![mov(8, d(10, 0, F, 0), s(12, 0, F, 8, 8, 1))],
            ),
            case(
                "region.math-dst-even-split",
                SKL,
                vec![math(
                    MathFunction::Inv,
                    16,
                    d(10, 0, F, 1),
                    s(12, 0, F, 8, 8, 1),
                    null_src(F),
                )],
                vec![math(
                    MathFunction::Inv,
                    8,
                    d(10, 8, F, 1),
                    s(12, 0, F, 8, 8, 1),
                    null_src(F),
                )],
            ),
            case(
                "region.math-src-dst-stride",
                SKL,
                vec![
                    math(
                        MathFunction::Inv,
                        8,
                        d(10, 0, F, 2),
                        s(12, 0, F, 8, 4, 2),
                        null_src(F),
                    ),
                    math(
                        MathFunction::Inv,
                        8,
                        d(10, 0, F, 1),
                        s(12, 0, F, 0, 1, 0),
                        null_src(F),
                    ),
                ],
                vec![math(
                    MathFunction::Inv,
                    8,
                    d(10, 0, F, 1),
                    s(12, 0, F, 8, 4, 2),
                    null_src(F),
                )],
            ),
            case(
                "region.align16-dst-hstride1",
                SKL,
                vec![a16_add(1, 4)],
                vec![a16_add(2, 4)],
            ),
            case(
                "region.align16-vstride",
                SKL,
                vec![a16_add(1, 0)],
                vec![a16_add(1, 8)],
            ),
            case(
                "region.exec-size-bytes",
                SKL,
                vec![
                    op2(
                        Opcode::Add,
                        32,
                        d(10, 0, UW, 1),
                        s(2, 8, UW, 1, 4, 0),
                        imm(Imm::v(0x1100_1010)),
                    ),
                    add_df_simd8_4_4_1(),
                ],
                vec![mov(16, d(10, 0, DF, 1), s(12, 0, DF, 0, 1, 0))],
            ),
            case(
                "3src.align16",
                SKL,
                vec![three(
                    Opcode::Mad,
                    8,
                    F,
                    [src3(2, F), src3(4, F), src3(6, F)],
                )],
                vec![{
                    let mut i = three(Opcode::Mad, 8, F, [src3(2, F), src3(4, F), src3(6, F)]);
                    i.access_mode = AccessMode::Align1;
                    i
                }],
            ),
        ]
    }

    fn add_df_simd8_4_4_1() -> Instruction {
        use crate::validate::testutil::*;
        op2(
            Opcode::Add,
            8,
            d(53, 0, Type::DF, 1),
            s(49, 0, Type::DF, 4, 4, 1),
            s(51, 0, Type::DF, 4, 4, 1),
        )
    }
}
