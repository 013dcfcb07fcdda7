//! Rules from the instruction pages: CMP/CMPN, SEL, MUL, MATH, logic ops, BFI2, CSEL; and how
//! the channel-enable register ce0 may be used.

use super::ctx::{is_int, Ctx, Loc, Shape};
use crate::model::*;

pub(super) fn cmp_cond_mod(c: &Ctx) -> Option<String> {
    (matches!(c.inst.opcode, Opcode::Cmp | Opcode::Cmpn) && c.inst.cond_mod() == CondMod::None)
        .then(|| format!("{} without a conditional modifier", c.inst.opcode))
}

pub(super) fn sel_pred_or_cmod(c: &Ctx) -> Option<String> {
    if c.inst.opcode != Opcode::Sel {
        return None;
    }
    let pred = c.inst.predicate.is_some();
    let cmod = c.inst.cond_mod() != CondMod::None;
    (pred == cmod).then(|| {
        if pred {
            "both predicated and with a conditional modifier".into()
        } else {
            "neither predicated nor with a conditional modifier".into()
        }
    })
}

fn mul(c: &Ctx) -> bool {
    c.inst.opcode == Opcode::Mul && c.shape == Shape::Alu
}

pub(super) fn mul_dword_src0(c: &Ctx) -> Option<String> {
    if !mul(c) {
        return None;
    }
    let (s0, s1) = (c.src(0)?.ty, c.src(1)?.ty);
    (is_int(s0) && is_int(s1) && s0.size() < 4 && s1.size() == 4)
        .then(|| format!("src0 {s0}, src1 {s1}: the DWord operand must be src0"))
}

pub(super) fn mul_int_acc_src(c: &Ctx) -> Option<String> {
    if !mul(c) {
        return None;
    }
    c.sources()
        .find(|(_, s)| s.is_acc() && is_int(s.ty))
        .map(|(i, s)| format!("src{i} is an {} accumulator", s.ty))
}

pub(super) fn mul_dword_dst_not_acc(c: &Ctx) -> Option<String> {
    let d = c.dst?;
    (mul(c) && c.is_dword_int_mul() && d.is_arf_not_null())
        .then(|| "DW x DW into an ARF register".into())
}

pub(super) fn mul_dword_sat_cmod(c: &Ctx) -> Option<String> {
    if !mul(c) {
        return None;
    }
    let d = c.dst?;
    let dw_src = c.sources().any(|(_, s)| matches!(s.ty, Type::D | Type::UD));
    let narrow_dst = matches!(d.ty, Type::D | Type::UD | Type::W | Type::UW);
    (dw_src && narrow_dst && c.inst.saturate && c.inst.cond_mod() != CondMod::None)
        .then(|| "saturate and conditional modifier on a DWord integer multiply".into())
}

pub(super) fn math_intdiv_no_srcmod(c: &Ctx) -> Option<String> {
    let Operands::Basic {
        math_fn: Some(f), ..
    } = c.inst.operands
    else {
        return None;
    };
    if !matches!(
        f,
        MathFunction::IntDiv | MathFunction::IntMod | MathFunction::IntDivMod
    ) {
        return None;
    }
    c.sources()
        .find(|(_, s)| s.negate || s.abs)
        .map(|(i, _)| format!("{f}: src{i} has a source modifier"))
}

/// A floating-point operand type of MATH and LRP: F, and HF from Gen9 on.
fn float_math_type(c: &Ctx, t: Type) -> bool {
    t == Type::F || (t == Type::HF && c.gen() == Gen::Gen9)
}

pub(super) fn math_types(c: &Ctx) -> Option<String> {
    let Operands::Basic {
        math_fn: Some(f), ..
    } = c.inst.operands
    else {
        return None;
    };
    let int_div = matches!(
        f,
        MathFunction::IntDiv | MathFunction::IntMod | MathFunction::IntDivMod
    );
    // INVM and RSQRTM are the IEEE macro steps; their type list is not enforced
    // (AMBIGUITIES).
    if matches!(f, MathFunction::Invm | MathFunction::Rsqrtm) {
        return None;
    }
    let ok = |t: Type| {
        if int_div {
            matches!(t, Type::D | Type::UD)
        } else {
            float_math_type(c, t)
        }
    };
    if let Some(d) = c.dst.filter(|d| !d.is_null()) {
        if !ok(d.ty) {
            return Some(format!("{f}: destination type {}", d.ty));
        }
    }
    c.sources()
        .find(|(_, s)| !ok(s.ty))
        .map(|(i, s)| format!("{f}: src{i} type {}", s.ty))
}

pub(super) fn lrp_types(c: &Ctx) -> Option<String> {
    if c.inst.opcode != Opcode::Lrp {
        return None;
    }
    let d = c.dst?.ty;
    if !float_math_type(c, d) {
        return Some(format!("destination type {d}"));
    }
    c.sources()
        .find(|(_, s)| !float_math_type(c, s.ty))
        .map(|(i, s)| format!("src{i} type {}", s.ty))
}

fn logic(c: &Ctx) -> bool {
    c.inst.opcode.is_logic() && c.shape == Shape::Alu
}

pub(super) fn logic_acc_no_srcmod(c: &Ctx) -> Option<String> {
    if !logic(c) {
        return None;
    }
    c.sources()
        .find(|(_, s)| s.is_acc() && (s.negate || s.abs))
        .map(|(i, _)| format!("src{i} accumulator with a source modifier"))
}

pub(super) fn logic_cond_mod(c: &Ctx) -> Option<String> {
    if !logic(c) {
        return None;
    }
    let m = c.inst.cond_mod();
    matches!(m, CondMod::O | CondMod::R | CondMod::U)
        .then(|| format!("conditional modifier {m} on {}", c.inst.opcode))
}

fn bfi2(c: &Ctx) -> bool {
    c.inst.opcode == Opcode::Bfi2 && c.shape == Shape::ThreeSrc
}

pub(super) fn bfi2_no_cond_mod(c: &Ctx) -> Option<String> {
    (bfi2(c) && c.inst.cond_mod() != CondMod::None).then(|| "conditional modifier".into())
}

pub(super) fn bfi2_no_sat(c: &Ctx) -> Option<String> {
    (bfi2(c) && c.inst.saturate).then(|| "saturate".into())
}

pub(super) fn bfi2_types(c: &Ctx) -> Option<String> {
    if !bfi2(c) {
        return None;
    }
    let d = c.dst?.ty;
    if !matches!(d, Type::D | Type::UD) {
        return Some(format!("destination type {d}"));
    }
    c.sources()
        .find(|(_, s)| s.ty != d)
        .map(|(i, s)| format!("src{i} type {} with destination {d}", s.ty))
}

fn csel(c: &Ctx) -> bool {
    c.inst.opcode == Opcode::Csel && c.shape == Shape::ThreeSrc
}

pub(super) fn csel_no_pred(c: &Ctx) -> Option<String> {
    (csel(c) && c.inst.predicate.is_some()).then(|| "predicated".into())
}

pub(super) fn csel_cond_mod(c: &Ctx) -> Option<String> {
    (csel(c) && c.inst.cond_mod() == CondMod::None).then(|| "no conditional modifier".into())
}

pub(super) fn csel_types(c: &Ctx) -> Option<String> {
    if !csel(c) {
        return None;
    }
    let d = c.dst?.ty;
    if d != Type::F {
        return Some(format!("destination type {d}"));
    }
    c.sources()
        .find(|(_, s)| s.ty != Type::F)
        .map(|(i, s)| format!("src{i} type {}", s.ty))
}

pub(super) fn csel_types_gen8(c: &Ctx) -> Option<String> {
    if !csel(c) {
        return None;
    }
    let d = c.dst?.ty;
    if !matches!(d, Type::F | Type::HF | Type::D | Type::W) {
        return Some(format!("destination type {d}"));
    }
    c.sources()
        .find(|(_, s)| s.ty != d)
        .map(|(i, s)| format!("src{i} type {} with destination {d}", s.ty))
}

fn is_ce0(loc: Loc) -> bool {
    matches!(loc, Loc::Arf(a) if a.kind == ArfKind::ChannelEnable)
}

pub(super) fn ce0_read_only(c: &Ctx) -> Option<String> {
    c.dst
        .is_some_and(|d| is_ce0(d.loc))
        .then(|| "ce0 as a destination".into())
}

pub(super) fn ce0_read(c: &Ctx) -> Option<String> {
    let (i, s) = c.sources().find(|(_, s)| is_ce0(s.loc))?;
    let g = c.inst.group;
    if s.ty.size() != 4 || !s.is_scalar() || s.subnr != 0 {
        Some(format!(
            "src{i} reads ce0 as {} with region {:?}",
            s.ty, s.region
        ))
    } else if !c.inst.we_all {
        Some(format!("src{i} reads ce0 without WE_all"))
    } else if g.qtr != 0 || g.nib {
        Some(format!(
            "src{i} reads ce0 in channel group qtr {} nib {}",
            g.qtr, g.nib
        ))
    } else {
        None
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
        let cmp = |m| {
            with_cmod(
                op2(
                    Opcode::Cmp,
                    8,
                    Dst::null(F),
                    s(12, 0, F, 8, 8, 1),
                    s(14, 0, F, 8, 8, 1),
                ),
                m,
            )
        };
        let sel = || {
            op2(
                Opcode::Sel,
                8,
                d(10, 0, F, 1),
                s(12, 0, F, 8, 8, 1),
                s(14, 0, F, 8, 8, 1),
            )
        };
        let mul = |dt, t0, t1| {
            op2(
                Opcode::Mul,
                8,
                d(10, 0, dt, 1),
                s(12, 0, t0, 8, 8, 1),
                s(14, 0, t1, 8, 8, 1),
            )
        };
        let intdiv = |neg| {
            let mut i = math(
                MathFunction::IntDiv,
                8,
                d(10, 0, D, 1),
                s(12, 0, D, 8, 8, 1),
                s(14, 0, D, 8, 8, 1),
            );
            if let Operands::Basic {
                src1: Src::Reg(r), ..
            } = &mut i.operands
            {
                r.negate = neg;
            }
            i
        };
        // One-source float math: destination type, source type.
        let fmath = |f, dt, st| math(f, 8, d(10, 0, dt, 1), s(12, 0, st, 8, 8, 1), null_src(st));
        let lrp = |t: Type| three(Opcode::Lrp, 8, t, [src3(2, t), src3(4, t), src3(6, t)]);
        let and_acc = |neg| {
            let mut a = acc(0, 0, UD, 8, 8, 1);
            if let Src::Reg(r) = &mut a {
                r.negate = neg;
            }
            op2(Opcode::And, 8, d(10, 0, UD, 1), a, s(14, 0, UD, 8, 8, 1))
        };
        let and = |m| {
            with_cmod(
                op2(
                    Opcode::And,
                    8,
                    d(10, 0, UD, 1),
                    s(12, 0, UD, 8, 8, 1),
                    s(14, 0, UD, 8, 8, 1),
                ),
                m,
            )
        };
        let bfi2 = |t: Type| three(Opcode::Bfi2, 8, t, [src3(2, t), src3(4, t), src3(6, t)]);
        let csel = |t: Type, m| {
            with_cmod(
                three(Opcode::Csel, 8, t, [src3(2, t), src3(4, t), src3(6, t)]),
                m,
            )
        };
        vec![
            case(
                "inst.cmp-cond-mod",
                SKL,
                vec![cmp(CondMod::L)],
                vec![cmp(CondMod::None)],
            ),
            case(
                "inst.sel-pred-or-cmod",
                SKL,
                vec![predicated(sel()), with_cmod(sel(), CondMod::Ge)],
                vec![sel(), predicated(with_cmod(sel(), CondMod::Ge))],
            ),
            case(
                "mul.dword-src0",
                SKL,
                vec![mul(D, D, W)],
                vec![mul(D, W, D)],
            ),
            case(
                "mul.int-acc-src",
                SKL,
                vec![op2(
                    Opcode::Mul,
                    8,
                    d(10, 0, F, 1),
                    acc(0, 0, F, 8, 8, 1),
                    s(14, 0, F, 8, 8, 1),
                )],
                vec![op2(
                    Opcode::Mul,
                    8,
                    d(10, 0, D, 1),
                    acc(0, 0, D, 8, 8, 1),
                    s(14, 0, W, 8, 8, 1),
                )],
            ),
            case(
                "mul.dword-sat-cmod",
                SKL,
                vec![mul(D, D, W), sat(mul(F, F, F))],
                vec![sat(with_cmod(mul(D, D, W), CondMod::Nz))],
            ),
            case(
                "math.intdiv-no-srcmod",
                SKL,
                vec![intdiv(false)],
                vec![intdiv(true)],
            ),
            case(
                "math.operand-types",
                SKL,
                vec![
                    fmath(MathFunction::Sqrt, F, F),
                    fmath(MathFunction::Inv, HF, HF),
                    math(
                        MathFunction::Fdiv,
                        8,
                        d(10, 0, F, 1),
                        s(12, 0, F, 8, 8, 1),
                        s(14, 0, F, 8, 8, 1),
                    ),
                    intdiv(false),
                ],
                vec![
                    // A DF math: there is no double-precision math unit.
                    math(
                        MathFunction::Sqrt,
                        4,
                        d(10, 0, DF, 1),
                        s(12, 0, DF, 4, 4, 1),
                        null_src(DF),
                    ),
                    fmath(MathFunction::Inv, DF, F),
                    fmath(MathFunction::Log, F, D),
                    math(
                        MathFunction::IntDiv,
                        8,
                        d(10, 0, D, 1),
                        s(12, 0, F, 8, 8, 1),
                        s(14, 0, D, 8, 8, 1),
                    ),
                    math(
                        MathFunction::IntMod,
                        4,
                        d(10, 0, Q, 1),
                        s(12, 0, Q, 4, 4, 1),
                        s(14, 0, Q, 4, 4, 1),
                    ),
                ],
            ),
            case(
                "lrp.types",
                SKL,
                vec![lrp(F), lrp(HF)],
                vec![lrp(DF), lrp(D), {
                    let mut i = lrp(F);
                    if let Operands::ThreeSrc { src, .. } = &mut i.operands {
                        src[1].ty = DF;
                    }
                    i
                }],
            ),
            case(
                "logic.acc-no-srcmod",
                SKL,
                vec![and_acc(false)],
                vec![and_acc(true)],
            ),
            case(
                "logic.cond-mod",
                SKL,
                vec![and(CondMod::Nz), and(CondMod::G)],
                vec![and(CondMod::O), and(CondMod::U)],
            ),
            case(
                "bfi2.no-cond-mod",
                SKL,
                vec![bfi2(UD)],
                vec![with_cmod(bfi2(UD), CondMod::Z)],
            ),
            case("bfi2.no-sat", SKL, vec![bfi2(D)], vec![sat(bfi2(D))]),
            case(
                "bfi2.types",
                SKL,
                vec![bfi2(UD)],
                vec![bfi2(F), {
                    let mut i = bfi2(UD);
                    if let Operands::ThreeSrc { src, .. } = &mut i.operands {
                        src[2].ty = D;
                    }
                    i
                }],
            ),
            case(
                "csel.no-pred",
                SKL,
                vec![csel(F, CondMod::Nz)],
                vec![predicated(csel(F, CondMod::Nz))],
            ),
            case(
                "csel.cond-mod",
                SKL,
                vec![csel(F, CondMod::Nz)],
                vec![csel(F, CondMod::None)],
            ),
            crate::validate::testutil::Case {
                rule: "csel.types-gen8",
                platform: crate::validate::Platform::Bdw,
                pass: vec![vec![csel(D, CondMod::L)], vec![csel(HF, CondMod::G)]],
                fail: vec![
                    vec![csel(UD, CondMod::L)],
                    vec![{
                        let mut i = csel(F, CondMod::L);
                        if let Operands::ThreeSrc { src, .. } = &mut i.operands {
                            src[1].ty = HF;
                        }
                        i
                    }],
                ],
            },
            crate::validate::testutil::Case {
                rule: "mul.dword-dst-not-acc",
                platform: crate::validate::Platform::Bdw,
                pass: vec![vec![mul(D, D, D)]],
                fail: vec![vec![op2(
                    Opcode::Mul,
                    8,
                    Dst::new(Addr::arf(ArfReg::new(ArfKind::Acc, 0), 0), D),
                    s(12, 0, D, 8, 8, 1),
                    s(14, 0, D, 8, 8, 1),
                )]],
            },
            case(
                "csel.types",
                SKL,
                vec![csel(F, CondMod::L)],
                vec![csel(D, CondMod::L)],
            ),
            case(
                "ce0.read-only",
                SKL,
                vec![we_all(mov(1, d(10, 0, UD, 1), ce0_src(UD)))],
                vec![we_all(mov(1, ce0_dst(), s(10, 0, UD, 0, 1, 0)))],
            ),
            case(
                "ce0.read",
                SKL,
                vec![
                    we_all(mov(1, d(10, 0, UD, 1), ce0_src(UD))),
                    we_all(Instruction::alu1(
                        Opcode::Fbl,
                        es(1),
                        d(10, 0, UD, 1),
                        ce0_src(UD),
                    )),
                ],
                vec![
                    mov(1, d(10, 0, UD, 1), ce0_src(UD)),
                    we_all(mov(1, d(10, 0, UW, 1), ce0_src(UW))),
                    with_group(we_all(mov(1, d(10, 0, UD, 1), ce0_src(UD))), 1),
                ],
            ),
        ]
    }
}
