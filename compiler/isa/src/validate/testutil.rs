//! Builders for rule tests and the per-rule case list.

use super::*;

/// A rule test: every program in `pass` must validate with no violation at all on
/// `platform`; every program in `fail` must violate `rule`.
pub(crate) struct Case {
    pub rule: &'static str,
    pub platform: Platform,
    pub pass: Vec<Vec<Instruction>>,
    pub fail: Vec<Vec<Instruction>>,
}

impl Case {
    pub fn check(&self) -> Result<(), String> {
        let mut errs = Vec::new();
        for p in &self.pass {
            let v = validate_program(p, self.platform);
            if !v.is_empty() {
                errs.push(format!(
                    "[{} on {}] expected to pass:\n{}",
                    self.rule,
                    self.platform,
                    report(&v)
                ));
            }
        }
        for p in &self.fail {
            let v = validate_program(p, self.platform);
            if !v.iter().any(|v| v.rule.id == self.rule) {
                let text: Vec<String> = p.iter().map(|i| i.to_string()).collect();
                errs.push(format!(
                    "[{} on {}] expected to fail: {}\n  got: {:?}",
                    self.rule,
                    self.platform,
                    text.join(" | "),
                    v.iter().map(|v| v.rule.id).collect::<Vec<_>>()
                ));
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join("\n"))
        }
    }
}

/// One-instruction case on `platform`.
pub(crate) fn case(
    rule: &'static str,
    platform: Platform,
    pass: Vec<Instruction>,
    fail: Vec<Instruction>,
) -> Case {
    Case {
        rule,
        platform,
        pass: pass.into_iter().map(|i| vec![i]).collect(),
        fail: fail.into_iter().map(|i| vec![i]).collect(),
    }
}

pub(crate) fn all_cases() -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(super::region::rule_cases::cases());
    v.extend(super::types::rule_cases::cases());
    v.extend(super::mixed::rule_cases::cases());
    v.extend(super::qword::rule_cases::cases());
    v.extend(super::insn::rule_cases::cases());
    v.extend(super::send::rule_cases::cases());
    v.extend(super::branch::rule_cases::cases());
    v
}

pub(crate) const SKL: Platform = Platform::Skl;

pub(crate) fn es(n: u32) -> ExecSize {
    ExecSize::new(n).expect("exec size")
}

/// Align1 GRF destination `g<nr>` at byte `sub`, stride `h`.
pub(crate) fn d(nr: u8, sub: u8, ty: Type, h: u8) -> Dst {
    Dst::grf(nr, ty).with_subnr(sub).with_hstride(h)
}

/// GRF source `g<nr>` at byte `sub` with region `<v;w,h>`.
pub(crate) fn s(nr: u8, sub: u8, ty: Type, v: u8, w: u8, h: u8) -> Src {
    Src::Reg(rs(nr, sub, ty, v, w, h))
}

pub(crate) fn rs(nr: u8, sub: u8, ty: Type, v: u8, w: u8, h: u8) -> RegSrc {
    RegSrc::grf(nr, sub, ty, Region::new(v, w, h))
}

/// Accumulator `acc<n>` source.
pub(crate) fn acc(n: u8, sub: u8, ty: Type, v: u8, w: u8, h: u8) -> Src {
    Src::Reg(RegSrc::new(
        Addr::arf(ArfReg::new(ArfKind::Acc, n), sub),
        ty,
        Region::new(v, w, h),
    ))
}

/// Indirect source `g[a0.0]` with region `<v;w,h>`.
pub(crate) fn ind(ty: Type, v: u8, w: u8, h: u8) -> Src {
    Src::Reg(RegSrc::indirect(ty, Region::new(v, w, h)))
}

/// `ce0` (`mask0`) as a scalar source.
pub(crate) fn ce0_src(ty: Type) -> Src {
    Src::Reg(RegSrc::new(
        Addr::arf(ArfReg::new(ArfKind::ChannelEnable, 0), 0),
        ty,
        Region::SCALAR,
    ))
}

/// `ce0` as a destination.
pub(crate) fn ce0_dst() -> Dst {
    Dst::new(
        Addr::arf(ArfReg::new(ArfKind::ChannelEnable, 0), 0),
        Type::UD,
    )
}

/// With `WE_all` (NoMask).
pub(crate) fn we_all(mut i: Instruction) -> Instruction {
    i.we_all = true;
    i
}

/// In channel group quarter `qtr`.
pub(crate) fn with_group(mut i: Instruction, qtr: u8) -> Instruction {
    i.group = ChannelGroup { qtr, nib: false };
    i
}

pub(crate) fn null_src(ty: Type) -> Src {
    Src::Reg(RegSrc::new(Addr::null(), ty, Region::SCALAR))
}

pub(crate) fn imm(i: Imm) -> Src {
    Src::Imm(i)
}

pub(crate) fn mov(exec: u32, dst: Dst, src: Src) -> Instruction {
    Instruction::alu1(Opcode::Mov, es(exec), dst, src)
}

pub(crate) fn op2(op: Opcode, exec: u32, dst: Dst, s0: Src, s1: Src) -> Instruction {
    Instruction::alu2(op, es(exec), dst, s0, s1)
}

pub(crate) fn math(f: MathFunction, exec: u32, dst: Dst, s0: Src, s1: Src) -> Instruction {
    let mut i = Instruction::alu2(Opcode::Math, es(exec), dst, s0, s1);
    if let Operands::Basic { math_fn, .. } = &mut i.operands {
        *math_fn = Some(f);
    }
    i
}

pub(crate) fn with_cmod(mut i: Instruction, c: CondMod) -> Instruction {
    match &mut i.operands {
        Operands::Basic { cond_mod, .. } | Operands::ThreeSrc { cond_mod, .. } => *cond_mod = c,
        _ => panic!("no cond-mod field"),
    }
    i
}

pub(crate) fn predicated(mut i: Instruction) -> Instruction {
    i.predicate = Some(Predicate {
        ctrl: PredCtrl::Normal,
        inverse: false,
    });
    i
}

pub(crate) fn sat(mut i: Instruction) -> Instruction {
    i.saturate = true;
    i
}

pub(crate) fn align16(mut i: Instruction) -> Instruction {
    i.access_mode = AccessMode::Align16;
    i
}

/// Align16 source `g<nr>` with vertical stride `v` (width 4, hstride 1 implicit).
pub(crate) fn s16(nr: u8, ty: Type, v: u8) -> Src {
    s(nr, 0, ty, v, 4, 1)
}

/// A 3-source instruction with Align16 operands.
pub(crate) fn three(op: Opcode, exec: u32, dst_ty: Type, src: [Src3; 3]) -> Instruction {
    Instruction::new(
        op,
        es(exec),
        Operands::ThreeSrc {
            cond_mod: CondMod::None,
            dst: Dst3 {
                nr: 10,
                subnr_dw: 0,
                writemask: WriteMask::XYZW,
                ty: dst_ty,
            },
            src,
        },
    )
}

pub(crate) fn src3(nr: u8, ty: Type) -> Src3 {
    Src3::grf(nr, ty)
}

/// SEND with an immediate descriptor of `mlen`/`rlen`.
pub(crate) fn send(dst: u8, src0: u8, mlen: u32, rlen: u32, eot: bool) -> Instruction {
    let dst = if rlen == 0 {
        Dst::null(Type::UW)
    } else {
        Dst::grf(dst, Type::UW)
    };
    Instruction::new(
        Opcode::Send,
        es(8),
        Operands::Send {
            sfid: Sfid::DpDc1,
            eot,
            dst,
            src0: rs(src0, 0, Type::UD, 0, 1, 0),
            desc: SendDesc::Imm((mlen << 25) | (rlen << 20)),
            ex_desc_31_28: 0,
        },
    )
}

/// SENDS with immediate descriptors; `src1 = None` is null.
pub(crate) fn sends(src0: u8, mlen: u32, src1: Option<u8>, ex_mlen: u32, eot: bool) -> Instruction {
    Instruction::new(
        Opcode::Sends,
        es(8),
        Operands::SplitSend {
            sfid: Sfid::DpDc1,
            eot,
            dst: SendsReg::null(),
            src0: SendsReg::grf(src0),
            src1: src1.map_or(SendsReg::null(), SendsReg::grf),
            desc: SendDesc::Imm(mlen << 25),
            ex_desc: ExDesc::Imm(ex_mlen << 6),
        },
    )
}
