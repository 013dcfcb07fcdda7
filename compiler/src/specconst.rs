//! `OpSpecConstantOp`: constants computed from specialization constants, evaluated once the
//! specialization values are known (at pipeline creation).
//!
//! SPIR-V, OpSpecConstantOp: "If the Shader capability was declared, only the following
//! opcodes can be used as the Opcode": SConvert, UConvert, FConvert, SNegate, Not, IAdd, ISub,
//! IMul, UDiv, SDiv, UMod, SRem, SMod, ShiftRightLogical, ShiftRightArithmetic,
//! ShiftLeftLogical, BitwiseOr, BitwiseXor, BitwiseAnd, VectorShuffle, CompositeExtract,
//! CompositeInsert, LogicalOr, LogicalAnd, LogicalNot, LogicalEqual, LogicalNotEqual, Select,
//! IEqual, INotEqual, ULessThan, SLessThan, UGreaterThan, SGreaterThan, ULessThanEqual,
//! SLessThanEqual, UGreaterThanEqual, SGreaterThanEqual, QuantizeToF16. The Kernel-only
//! float arithmetic and float<->int conversions are accepted too (they cost nothing and
//! Ferrite accepted them before); everything else is refused with a clear error.
//!
//! Every scalar operation is computed by `eval::eval_alu_vec`, the constant folder's own
//! semantics, so a folded `OpIAdd` and a specialized `OpSpecConstantOp IAdd` cannot disagree.

use crate::eval::eval_alu_vec;
use crate::frontend::FrontendError;
use crate::ir::{AluOp, Type};
use rspirv::spirv::Op;

/// A constant's value: raw bits of a scalar (masked to its size; booleans 0 or 1), or the
/// members of a composite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Const {
    Scalar(u64),
    Comp(Vec<Const>),
}

/// One operand of an `OpSpecConstantOp`, after the front end looked its id up.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A constant operand and its IR type (`None` for arrays and structs).
    Value(Const, Option<Type>),
    /// A literal (composite indices, shuffle components).
    Literal(u32),
}

type Res<T> = Result<T, FrontendError>;

fn invalid<T>(msg: impl Into<String>) -> Res<T> {
    Err(FrontendError::Invalid(format!(
        "OpSpecConstantOp: {}",
        msg.into()
    )))
}

/// The opcodes that evaluate as one ALU op: the ones the specification allows in
/// `OpSpecConstantOp` with the Shader capability, and the Kernel-only float ones accepted
/// before (see the module comment). The op each computes comes from the op table.
const ALU_OPCODES: &[Op] = &[
    Op::IAdd,
    Op::ISub,
    Op::IMul,
    Op::UDiv,
    Op::SDiv,
    Op::UMod,
    Op::SRem,
    Op::SMod,
    Op::ShiftRightLogical,
    Op::ShiftRightArithmetic,
    Op::ShiftLeftLogical,
    Op::BitwiseOr,
    Op::BitwiseXor,
    Op::BitwiseAnd,
    Op::LogicalOr,
    Op::LogicalAnd,
    Op::LogicalEqual,
    Op::LogicalNotEqual,
    Op::IEqual,
    Op::INotEqual,
    Op::ULessThan,
    Op::SLessThan,
    Op::UGreaterThan,
    Op::SGreaterThan,
    Op::ULessThanEqual,
    Op::SLessThanEqual,
    Op::UGreaterThanEqual,
    Op::SGreaterThanEqual,
    Op::SConvert,
    Op::UConvert,
    Op::FConvert,
    Op::FAdd,
    Op::FSub,
    Op::FMul,
    Op::FDiv,
    Op::FRem,
    Op::FMod,
    Op::ConvertFToS,
    Op::ConvertSToF,
    Op::ConvertFToU,
    Op::ConvertUToF,
];

/// How an opcode maps onto the IR's ALU ops: the op, its source count, and whether the
/// two sources are swapped (SPIR-V's `a > b` is the IR's `b < a`).
fn alu_form(op: Op) -> Option<(AluOp, usize, bool)> {
    // The unary negations and `Not` are not in the op table's SPIR-V mapping (the front
    // end emits them with their own type checks), so they are named here.
    let unary = match op {
        Op::SNegate => Some(AluOp::Ineg),
        Op::Not | Op::LogicalNot => Some(AluOp::Inot),
        Op::FNegate => Some(AluOp::Fneg),
        _ => None,
    };
    if let Some(a) = unary {
        return Some((a, 1, false));
    }
    if !ALU_OPCODES.contains(&op) {
        return None;
    }
    AluOp::from_spirv(op).map(|m| (m.op, m.op.num_srcs(), m.swapped))
}

/// Evaluates `OpSpecConstantOp <op> <args>` whose result has IR type `result` (`None` for
/// an array or struct result, which only the composite opcodes can produce).
pub fn eval_spec_op(op: Op, result: Option<Type>, args: &[Arg]) -> Res<Const> {
    let value = |k: usize| -> Res<(&Const, Option<Type>)> {
        match args.get(k) {
            Some(Arg::Value(c, t)) => Ok((c, *t)),
            Some(Arg::Literal(_)) => invalid(format!("{op:?} operand {k} is not an id")),
            None => invalid(format!("{op:?} has too few operands")),
        }
    };
    let literals = |from: usize| -> Res<Vec<u32>> {
        args.get(from..)
            .unwrap_or(&[])
            .iter()
            .map(|a| match a {
                Arg::Literal(v) => Ok(*v),
                Arg::Value(..) => invalid(format!("{op:?} expects literal operands")),
            })
            .collect()
    };
    match op {
        Op::CompositeExtract => {
            let (c, _) = value(0)?;
            let mut v = c;
            for idx in literals(1)? {
                v = match v {
                    Const::Comp(m) => m
                        .get(idx as usize)
                        .ok_or_else(|| bad(format!("index {idx} out of range")))?,
                    Const::Scalar(_) => return invalid("CompositeExtract from a scalar"),
                };
            }
            Ok(v.clone())
        }
        Op::CompositeInsert => {
            let (obj, _) = value(0)?;
            let (comp, _) = value(1)?;
            let path = literals(2)?;
            if path.is_empty() {
                return invalid("CompositeInsert without an index");
            }
            let mut out = comp.clone();
            let mut slot = &mut out;
            for idx in path {
                slot = match slot {
                    Const::Comp(m) => m
                        .get_mut(idx as usize)
                        .ok_or_else(|| bad(format!("index {idx} out of range")))?,
                    Const::Scalar(_) => return invalid("CompositeInsert into a scalar"),
                };
            }
            *slot = obj.clone();
            Ok(out)
        }
        Op::VectorShuffle => {
            let (Const::Comp(a), _) = value(0)? else {
                return invalid("VectorShuffle of a scalar");
            };
            let (Const::Comp(b), _) = value(1)? else {
                return invalid("VectorShuffle of a scalar");
            };
            let all: Vec<&Const> = a.iter().chain(b).collect();
            literals(2)?
                .into_iter()
                .map(|k| {
                    // 0xFFFFFFFF: "the corresponding result component has no source and is
                    // undefined"; zero is as good a value as any.
                    if k == u32::MAX {
                        return Ok(Const::Scalar(0));
                    }
                    all.get(k as usize)
                        .map(|c| (*c).clone())
                        .ok_or_else(|| bad(format!("shuffle component {k} out of range")))
                })
                .collect::<Res<_>>()
                .map(Const::Comp)
        }
        Op::Select => {
            let (cond, _) = value(0)?;
            let (a, _) = value(1)?;
            let (b, _) = value(2)?;
            match (cond, a, b) {
                (Const::Scalar(c), _, _) => Ok(if *c != 0 { a.clone() } else { b.clone() }),
                (Const::Comp(c), Const::Comp(a), Const::Comp(b))
                    if c.len() == a.len() && c.len() == b.len() =>
                {
                    Ok(Const::Comp(
                        c.iter()
                            .zip(a.iter().zip(b))
                            .map(|(c, (a, b))| {
                                if matches!(c, Const::Scalar(v) if *v != 0) {
                                    a.clone()
                                } else {
                                    b.clone()
                                }
                            })
                            .collect(),
                    ))
                }
                _ => invalid("Select operand shapes differ"),
            }
        }
        Op::QuantizeToF16 => {
            let dt = scalar_result(op, result)?;
            let (x, t) = value(0)?;
            let t = t.ok_or_else(|| bad("QuantizeToF16 of a composite"))?;
            if dt.bits != 32 || t.bits != 32 || dt.comps != t.comps {
                return invalid("QuantizeToF16 needs 32-bit float operand and result");
            }
            let half = Type::float(16).vec(dt.comps);
            let h = eval(AluOp::F2f, half, &[(x, t)])?;
            // "If the magnitude of Value is too small to represent as a normalized 16-bit
            // floating-point value, the result may be either +0 or -0": denormal halves
            // become zeros of their sign.
            let h = map_scalars(&h, |v| if v & 0x7c00 == 0 { v & 0x8000 } else { v });
            eval(AluOp::F2f, dt, &[(&h, half)])
        }
        _ => {
            let (alu, n, swap) = alu_form(op)
                .ok_or_else(|| FrontendError::Unsupported(format!("OpSpecConstantOp {op:?}")))?;
            let dt = scalar_result(op, result)?;
            let mut srcs = Vec::with_capacity(n);
            for k in 0..n {
                let (c, t) = value(k)?;
                let t = t.ok_or_else(|| bad(format!("{op:?} of a composite")))?;
                srcs.push((c, t));
            }
            if args.len() != n {
                return invalid(format!("{op:?} takes {n} operands, not {}", args.len()));
            }
            if swap {
                srcs.swap(0, 1);
            }
            eval(alu, dt, &srcs)
        }
    }
}

fn bad(msg: impl Into<String>) -> FrontendError {
    FrontendError::Invalid(format!("OpSpecConstantOp: {}", msg.into()))
}

fn scalar_result(op: Op, result: Option<Type>) -> Res<Type> {
    result.ok_or_else(|| bad(format!("{op:?} must give a scalar or vector")))
}

fn map_scalars(c: &Const, f: impl Fn(u64) -> u64 + Copy) -> Const {
    match c {
        Const::Scalar(v) => Const::Scalar(f(*v)),
        Const::Comp(m) => Const::Comp(m.iter().map(|x| map_scalars(x, f)).collect()),
    }
}

/// One ALU op over scalar or vector constants, component by component.
fn eval(op: AluOp, dt: Type, srcs: &[(&Const, Type)]) -> Res<Const> {
    let flat = |c: &Const| -> Res<Vec<u64>> {
        match c {
            Const::Scalar(v) => Ok(vec![*v]),
            Const::Comp(m) => m
                .iter()
                .map(|x| match x {
                    Const::Scalar(s) => Ok(*s),
                    Const::Comp(_) => invalid("nested composite operand"),
                })
                .collect(),
        }
    };
    let vals: Vec<Vec<u64>> = srcs.iter().map(|(c, _)| flat(c)).collect::<Res<_>>()?;
    if vals
        .iter()
        .any(|v| v.len() != 1 && v.len() != usize::from(dt.comps))
    {
        return invalid(format!(
            "{} operand sizes do not match the result",
            op.name()
        ));
    }
    let tys: Vec<Type> = srcs.iter().map(|(_, t)| *t).collect();
    let refs: Vec<&[u64]> = vals.iter().map(|v| v.as_slice()).collect();
    let mask = if dt.is_bool() { 1 } else { dt.mask() };
    let r = eval_alu_vec(op, dt, &tys, &refs);
    Ok(if dt.comps == 1 {
        Const::Scalar(r[0] & mask)
    } else {
        Const::Comp(r.into_iter().map(|x| Const::Scalar(x & mask)).collect())
    })
}

/// `rspirv::dr::load_words`, but for `OpSpecConstantOp` with more than one literal operand
/// and for `OpExecutionModeId` / `OpDecorateId` (read as `OpExecutionMode` / `OpDecorate`, see
/// below).
///
/// rspirv 0.12 reads the inner opcode's operands one logical operand at a time and ignores
/// their `*` quantifier, so `OpSpecConstantOp %v2 VectorShuffle %a %b 1 0` (or a
/// CompositeExtract/CompositeInsert with a multi-level index) fails with "found extra
/// operands". The literal lists are cut to one word for rspirv and put back afterwards.
pub fn load_words(words: &[u32]) -> Result<rspirv::dr::Module, rspirv::binary::ParseState> {
    use crate::hash::HashMap;
    const SPEC_CONSTANT_OP: u32 = 52;
    const EXECUTION_MODE: u32 = 16;
    const EXECUTION_MODE_ID: u32 = 331;
    const DECORATE: u32 = 71;
    const DECORATE_ID: u32 = 332;
    let mut out = Vec::with_capacity(words.len());
    let mut lists: HashMap<u32, Vec<u32>> = HashMap::default();
    let mut i = 5.min(words.len());
    out.extend_from_slice(&words[..i]);
    while i < words.len() {
        let wc = (words[i] >> 16) as usize;
        if wc == 0 || i + wc > words.len() {
            // Malformed framing: let rspirv report it.
            out.extend_from_slice(&words[i..]);
            break;
        }
        let inst = &words[i..i + wc];
        let ids = match inst.get(3).map(|o| Op::from_u32(*o)) {
            _ if inst[0] & 0xffff != SPEC_CONSTANT_OP => None,
            Some(Some(Op::VectorShuffle)) => Some(2),
            Some(Some(Op::CompositeExtract)) => Some(1),
            Some(Some(Op::CompositeInsert)) => Some(2),
            _ => None,
        };
        match ids {
            Some(n) if wc > 4 + n + 1 => {
                lists.insert(inst[2], inst[4 + n..].to_vec());
                let keep = 4 + n + 1;
                out.push(((keep as u32) << 16) | SPEC_CONSTANT_OP);
                out.extend_from_slice(&inst[1..keep]);
            }
            // rspirv 0.12 does not place OpExecutionModeId (SPIR-V 1.2; glslang writes
            // LocalSizeId with it for Vulkan 1.3) among the execution modes, nor OpDecorateId
            // (UniformId, AlignmentId, ...) among the annotations, and refuses the module.
            // Their operands have OpExecutionMode's and OpDecorate's shapes, so they are read
            // as those; the mode or decoration says its operands are ids.
            _ if inst[0] & 0xffff == EXECUTION_MODE_ID => {
                out.push((inst[0] & 0xffff_0000) | EXECUTION_MODE);
                out.extend_from_slice(&inst[1..]);
            }
            _ if inst[0] & 0xffff == DECORATE_ID => {
                out.push((inst[0] & 0xffff_0000) | DECORATE);
                out.extend_from_slice(&inst[1..]);
            }
            _ => out.extend_from_slice(inst),
        }
        i += wc;
    }
    let mut module = rspirv::dr::load_words(&out)?;
    if !lists.is_empty() {
        for inst in &mut module.types_global_values {
            let Some(lits) = inst.result_id.and_then(|id| lists.get(&id)) else {
                continue;
            };
            if inst.class.opcode != Op::SpecConstantOp {
                continue;
            }
            let n = inst
                .operands
                .iter()
                .take_while(|o| !matches!(o, rspirv::dr::Operand::LiteralBit32(_)))
                .count();
            inst.operands.truncate(n);
            inst.operands
                .extend(lits.iter().map(|l| rspirv::dr::Operand::LiteralBit32(*l)));
        }
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    const I32: Type = Type::I32;

    fn u32t() -> Type {
        Type::int(32)
    }

    fn s(v: u64, t: Type) -> Arg {
        Arg::Value(Const::Scalar(v), Some(t))
    }

    fn v(vals: &[u64], t: Type) -> Arg {
        Arg::Value(
            Const::Comp(vals.iter().map(|x| Const::Scalar(*x)).collect()),
            Some(t.vec(vals.len() as u8)),
        )
    }

    fn scalar(op: Op, dt: Type, args: &[Arg]) -> u64 {
        match eval_spec_op(op, Some(dt), args).unwrap() {
            Const::Scalar(x) => x,
            c => panic!("{op:?} gave {c:?}"),
        }
    }

    fn neg(x: i64) -> u64 {
        (x as u64) & 0xffff_ffff
    }

    #[test]
    fn spec_op_integer_arithmetic() {
        assert_eq!(
            scalar(Op::IAdd, I32, &[s(7, I32), s(neg(-9), I32)]),
            neg(-2)
        );
        assert_eq!(scalar(Op::ISub, I32, &[s(7, I32), s(9, I32)]), neg(-2));
        assert_eq!(
            scalar(Op::IMul, I32, &[s(0x10000, I32), s(0x10001, I32)]),
            0x10000
        );
        assert_eq!(scalar(Op::SNegate, I32, &[s(5, I32)]), neg(-5));
        assert_eq!(
            scalar(Op::UDiv, I32, &[s(neg(-8), I32), s(2, I32)]),
            0x7fff_fffc
        );
        assert_eq!(
            scalar(Op::SDiv, I32, &[s(neg(-7), I32), s(2, I32)]),
            neg(-3)
        );
        assert_eq!(scalar(Op::UMod, I32, &[s(17, I32), s(5, I32)]), 2);
        // SRem takes the dividend's sign, SMod the divisor's.
        assert_eq!(
            scalar(Op::SRem, I32, &[s(neg(-7), I32), s(3, I32)]),
            neg(-1)
        );
        assert_eq!(scalar(Op::SMod, I32, &[s(neg(-7), I32), s(3, I32)]), 2);
        assert_eq!(
            scalar(Op::SMod, I32, &[s(7, I32), s(neg(-3), I32)]),
            neg(-2)
        );
    }

    #[test]
    fn spec_op_bitwise_and_shifts() {
        assert_eq!(scalar(Op::Not, I32, &[s(0x0f0f_0000, I32)]), 0xf0f0_ffff);
        assert_eq!(
            scalar(Op::BitwiseAnd, I32, &[s(0xff00, I32), s(0x0ff0, I32)]),
            0x0f00
        );
        assert_eq!(
            scalar(Op::BitwiseOr, I32, &[s(0xff00, I32), s(0x0ff0, I32)]),
            0xfff0
        );
        assert_eq!(
            scalar(Op::BitwiseXor, I32, &[s(0xff00, I32), s(0x0ff0, I32)]),
            0xf0f0
        );
        assert_eq!(
            scalar(Op::ShiftLeftLogical, I32, &[s(3, I32), s(30, I32)]),
            0xc000_0000
        );
        assert_eq!(
            scalar(
                Op::ShiftRightLogical,
                I32,
                &[s(0x8000_0000, I32), s(4, I32)]
            ),
            0x0800_0000
        );
        assert_eq!(
            scalar(
                Op::ShiftRightArithmetic,
                I32,
                &[s(0x8000_0000, I32), s(4, I32)]
            ),
            0xf800_0000
        );
        let u16t = Type::int(16);
        assert_eq!(
            scalar(Op::ShiftLeftLogical, u16t, &[s(0x00ff, u16t), s(12, I32)]),
            0xf000
        );
    }

    #[test]
    fn spec_op_comparisons() {
        let b = Type::B1;
        let m1 = neg(-1);
        let cases: [(Op, u64, u64, u64); 12] = [
            (Op::SGreaterThan, 1, m1, 1),
            (Op::SGreaterThan, m1, 1, 0),
            (Op::UGreaterThan, m1, 1, 1),
            (Op::SLessThan, m1, 1, 1),
            (Op::ULessThan, m1, 1, 0),
            (Op::SLessThanEqual, 4, 4, 1),
            (Op::SLessThanEqual, 5, 4, 0),
            (Op::ULessThanEqual, m1, 4, 0),
            (Op::SGreaterThanEqual, m1, m1, 1),
            (Op::UGreaterThanEqual, 3, 4, 0),
            (Op::IEqual, 9, 9, 1),
            (Op::INotEqual, 9, 9, 0),
        ];
        for (op, a, bb, want) in cases {
            assert_eq!(
                scalar(op, b, &[s(a, I32), s(bb, I32)]),
                want,
                "{op:?} {a} {bb}"
            );
        }
        assert_eq!(scalar(Op::LogicalAnd, b, &[s(1, b), s(0, b)]), 0);
        assert_eq!(scalar(Op::LogicalOr, b, &[s(1, b), s(0, b)]), 1);
        assert_eq!(scalar(Op::LogicalNot, b, &[s(1, b)]), 0);
        assert_eq!(scalar(Op::LogicalNot, b, &[s(0, b)]), 1);
        assert_eq!(scalar(Op::LogicalEqual, b, &[s(0, b), s(0, b)]), 1);
        assert_eq!(scalar(Op::LogicalNotEqual, b, &[s(1, b), s(0, b)]), 1);
        let r = eval_spec_op(
            Op::SGreaterThan,
            Some(b.vec(2)),
            &[v(&[1, m1], I32), v(&[0, 0], I32)],
        );
        assert_eq!(
            r.unwrap(),
            Const::Comp(vec![Const::Scalar(1), Const::Scalar(0)])
        );
    }

    #[test]
    fn spec_op_select() {
        assert_eq!(
            scalar(Op::Select, I32, &[s(1, Type::B1), s(10, I32), s(20, I32)]),
            10
        );
        assert_eq!(
            scalar(Op::Select, I32, &[s(0, Type::B1), s(10, I32), s(20, I32)]),
            20
        );
        let r = eval_spec_op(
            Op::Select,
            Some(I32.vec(2)),
            &[v(&[1, 0], Type::B1), v(&[1, 2], I32), v(&[3, 4], I32)],
        )
        .unwrap();
        assert_eq!(r, Const::Comp(vec![Const::Scalar(1), Const::Scalar(4)]));
    }

    #[test]
    fn spec_op_conversions() {
        let i16t = Type::int(16);
        let i64t = Type::int(64);
        assert_eq!(
            scalar(Op::SConvert, i64t, &[s(0xfffe, i16t)]),
            (-2i64) as u64
        );
        assert_eq!(scalar(Op::UConvert, i64t, &[s(0xfffe, i16t)]), 0xfffe);
        assert_eq!(scalar(Op::SConvert, i16t, &[s(0x1234_5678, I32)]), 0x5678);
        assert_eq!(
            scalar(Op::UConvert, i16t, &[s(0x1234_8765, u32t())]),
            0x8765
        );
        let f32t = Type::F32;
        let f16t = Type::float(16);
        let f64t = Type::float(64);
        assert_eq!(
            scalar(Op::FConvert, f16t, &[s(u64::from(1.5f32.to_bits()), f32t)]),
            0x3e00
        );
        assert_eq!(
            scalar(Op::FConvert, f64t, &[s(u64::from(0.1f32.to_bits()), f32t)]),
            f64::from(0.1f32).to_bits()
        );
        assert_eq!(
            scalar(Op::ConvertSToF, f32t, &[s(neg(-3), I32)]),
            u64::from((-3.0f32).to_bits())
        );
    }

    #[test]
    fn spec_op_quantize_to_f16() {
        let f = |x: f32| u64::from(x.to_bits());
        let q = |x: f32| scalar(Op::QuantizeToF16, Type::F32, &[s(f(x), Type::F32)]);
        // 1 + 2^-11 is halfway between two halves: rounds to even (1.0).
        assert_eq!(q(1.0 + 1.0 / 2048.0), f(1.0));
        assert_eq!(q(0.1), f(f32::from(half::f16::from_f32(0.1))));
        assert_eq!(q(1.0e6), f(f32::INFINITY));
        assert_eq!(q(-1.0e6), f(f32::NEG_INFINITY));
        // Too small for a normal half: a zero of the same sign.
        assert_eq!(q(1.0e-6), f(0.0));
        assert_eq!(q(-1.0e-6), f(-0.0));
        assert_eq!(q(6.103_515_6e-5), f(6.103_515_6e-5));
        assert!(f32::from_bits(q(f32::NAN) as u32).is_nan());
    }

    #[test]
    fn spec_op_composites() {
        let vec3 = v(&[1, 2, 3], I32);
        assert_eq!(
            eval_spec_op(
                Op::CompositeExtract,
                Some(I32),
                &[vec3.clone(), Arg::Literal(2)]
            )
            .unwrap(),
            Const::Scalar(3)
        );
        assert_eq!(
            eval_spec_op(
                Op::CompositeInsert,
                Some(I32.vec(3)),
                &[s(9, I32), vec3.clone(), Arg::Literal(1)]
            )
            .unwrap(),
            Const::Comp(vec![Const::Scalar(1), Const::Scalar(9), Const::Scalar(3)])
        );
        let nested = Arg::Value(
            Const::Comp(vec![
                Const::Comp(vec![Const::Scalar(1), Const::Scalar(2)]),
                Const::Comp(vec![Const::Scalar(3), Const::Scalar(4)]),
            ]),
            None,
        );
        assert_eq!(
            eval_spec_op(
                Op::CompositeExtract,
                Some(I32),
                &[nested.clone(), Arg::Literal(1), Arg::Literal(0)]
            )
            .unwrap(),
            Const::Scalar(3)
        );
        assert!(eval_spec_op(
            Op::CompositeExtract,
            Some(I32),
            &[vec3.clone(), Arg::Literal(3)]
        )
        .is_err());
        let sh = eval_spec_op(
            Op::VectorShuffle,
            Some(I32.vec(4)),
            &[
                vec3.clone(),
                v(&[7, 8], I32),
                Arg::Literal(4),
                Arg::Literal(0),
                Arg::Literal(3),
                Arg::Literal(2),
            ],
        )
        .unwrap();
        assert_eq!(
            sh,
            Const::Comp(vec![
                Const::Scalar(8),
                Const::Scalar(1),
                Const::Scalar(7),
                Const::Scalar(3)
            ])
        );
    }

    #[test]
    fn load_words_reads_execution_mode_id_as_execution_mode() {
        // %1 = void, %2 = fn, %3 = main, %4 = uint, %5 = 8 (spec), %6 = 1;
        // OpExecutionModeId %3 LocalSizeId %5 %6 %6.
        let op = |code: u32, words: &[u32]| {
            let mut v = vec![((words.len() as u32 + 1) << 16) | code];
            v.extend_from_slice(words);
            v
        };
        let mut w = vec![0x0723_0203, 0x0001_0200, 0, 10, 0];
        w.extend(op(17, &[1])); // OpCapability Shader
        w.extend(op(14, &[0, 1])); // OpMemoryModel Logical GLSL450
        w.extend(op(15, &[5, 3, 0x6e69_616d, 0])); // OpEntryPoint GLCompute %3 "main"
        w.extend(op(331, &[3, 38, 5, 6, 6])); // OpExecutionModeId LocalSizeId
        w.extend(op(19, &[1])); // OpTypeVoid
        w.extend(op(33, &[2, 1])); // OpTypeFunction
        w.extend(op(21, &[4, 32, 0])); // OpTypeInt
        w.extend(op(50, &[4, 5, 8])); // OpSpecConstant
        w.extend(op(43, &[4, 6, 1])); // OpConstant
        w.extend(op(54, &[1, 3, 0, 2])); // OpFunction
        w.extend(op(248, &[7])); // OpLabel
        w.extend(op(253, &[])); // OpReturn
        w.extend(op(56, &[])); // OpFunctionEnd
        assert!(
            rspirv::dr::load_words(&w).is_err(),
            "rspirv was fixed: drop the workaround"
        );
        let m = load_words(&w).unwrap();
        assert_eq!(m.execution_modes.len(), 1);
        assert_eq!(
            m.execution_modes[0].operands,
            [
                rspirv::dr::Operand::IdRef(3),
                rspirv::dr::Operand::ExecutionMode(rspirv::spirv::ExecutionMode::LocalSizeId),
                rspirv::dr::Operand::IdRef(5),
                rspirv::dr::Operand::IdRef(6),
                rspirv::dr::Operand::IdRef(6),
            ]
        );
    }

    #[test]
    fn load_words_keeps_every_shuffle_and_index_literal() {
        // %1 = int, %2 = v3int, %3 = 5, %4 = 6, %5 = 7, %6 = {5,6,7},
        // %7 = shuffle %6 %6 2 0 4, %8 = extract %6 1, %9 = insert %3 %6 0.
        let op = |code: u32, words: &[u32]| {
            let mut v = vec![((words.len() as u32 + 1) << 16) | code];
            v.extend_from_slice(words);
            v
        };
        let mut w = vec![0x0723_0203, 0x0001_0000, 0, 10, 0];
        w.extend(op(17, &[1])); // OpCapability Shader
        w.extend(op(14, &[0, 1])); // OpMemoryModel Logical GLSL450
        w.extend(op(21, &[1, 32, 1])); // OpTypeInt
        w.extend(op(23, &[2, 1, 3])); // OpTypeVector
        for (id, val) in [(3, 5), (4, 6), (5, 7)] {
            w.extend(op(50, &[1, id, val])); // OpSpecConstant
        }
        w.extend(op(51, &[2, 6, 3, 4, 5])); // OpSpecConstantComposite
        w.extend(op(52, &[2, 7, Op::VectorShuffle as u32, 6, 6, 2, 0, 4]));
        w.extend(op(52, &[1, 8, Op::CompositeExtract as u32, 6, 1]));
        w.extend(op(52, &[2, 9, Op::CompositeInsert as u32, 3, 6, 0]));
        assert!(
            rspirv::dr::load_words(&w).is_err(),
            "rspirv was fixed: drop the workaround"
        );
        let m = load_words(&w).unwrap();
        let lits = |id: u32| -> Vec<u32> {
            let inst = m
                .types_global_values
                .iter()
                .find(|i| i.result_id == Some(id))
                .unwrap();
            inst.operands
                .iter()
                .filter_map(|o| match o {
                    rspirv::dr::Operand::LiteralBit32(v) => Some(*v),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(lits(7), vec![2, 0, 4]);
        assert_eq!(lits(8), vec![1]);
        assert_eq!(lits(9), vec![0]);
    }

    #[test]
    fn spec_op_refuses_other_opcodes() {
        for op in [Op::AccessChain, Op::ExtInst, Op::Dot, Op::FunctionCall] {
            let e = eval_spec_op(op, Some(I32), &[s(1, I32)]).unwrap_err();
            assert_eq!(
                e,
                FrontendError::Unsupported(format!("OpSpecConstantOp {op:?}"))
            );
        }
        // Wrong operand count is invalid SPIR-V, not a silent result.
        assert!(matches!(
            eval_spec_op(Op::IAdd, Some(I32), &[s(1, I32)]),
            Err(FrontendError::Invalid(_))
        ));
    }
}
