//! ALU instructions: SPIR-V opcodes mapped to IR ALU ops, checked operand types, component-
//! wise ops over composites, and the matrix and vector helpers.

use super::types::SType;
use super::values::FVal;
use super::{invalid, lit, op_id, rty, unsupported, Fe, FrontendError, Res};
use crate::ir::{self, AluOp, Kind, Op, Sign, SpirvAlu, Type, Value};
use rspirv::dr::{self, Operand};
use rspirv::spirv;

/// The ALU op a SPIR-V opcode computes on its operands in order (the op table's mapping),
/// with its source count and whether it reads signed integers.
pub(super) fn spirv_alu(op: spirv::Op) -> Option<(AluOp, usize, bool)> {
    AluOp::from_spirv(op)
        .filter(|a| !a.swapped)
        .map(|a| (a.op, a.op.num_srcs(), a.op.sign() == Sign::Signed))
}

impl Fe<'_> {
    /// Applies a scalar/vector op component-wise through matrices and other composites.
    pub(super) fn map_alu(&mut self, op: AluOp, rt: u32, args: &[FVal]) -> Res<FVal> {
        match self.stype(rt)? {
            st @ (SType::Matrix(..) | SType::Array(..)) => {
                let (col, n) = match st {
                    SType::Matrix(c, n) => (c, u32::from(n)),
                    SType::Array(c, n) => (c, n),
                    _ => unreachable!(),
                };
                if n > 64 {
                    return unsupported("arithmetic on large arrays");
                }
                let mut cols = Vec::new();
                for k in 0..n as usize {
                    let a: Vec<FVal> = args
                        .iter()
                        .map(|x| {
                            x.comps().and_then(|c| {
                                c.get(k)
                                    .cloned()
                                    .ok_or_else(|| FrontendError::Invalid("shape".into()))
                            })
                        })
                        .collect::<Res<_>>()?;
                    cols.push(self.map_alu(op, col, &a)?);
                }
                Ok(FVal::C(cols))
            }
            _ => {
                let t = self.ir_type(rt)?;
                let srcs: Vec<Value> = args.iter().map(|a| a.v()).collect::<Res<_>>()?;
                Ok(FVal::V(self.alu_checked(op, t, &srcs)?))
            }
        }
    }

    /// Emits an ALU op after checking operand types (invalid SPIR-V must not reach the IR).
    pub(super) fn alu_checked(&mut self, op: AluOp, t: Type, srcs: &[Value]) -> Res<Value> {
        let tys: Vec<Type> = srcs.iter().map(|s| self.ty(*s)).collect();
        let ok = srcs.len() == op.num_srcs()
            && match op.class() {
                ir::AluClass::Same => {
                    tys.iter().all(|x| *x == t)
                        && (t.is_float() == op.is_float_op()
                            || matches!(
                                op,
                                AluOp::Mov | AluOp::Iand | AluOp::Ior | AluOp::Ixor | AluOp::Inot
                            ) && !t.is_float())
                }
                ir::AluClass::Compare => {
                    tys[0] == tys[1]
                        && t.is_bool()
                        && t.comps == tys[0].comps
                        && (tys[0].is_float() == op.is_float_op())
                }
                ir::AluClass::Convert => tys[0].comps == t.comps,
                ir::AluClass::Select => {
                    tys[0].is_bool()
                        && (tys[0].comps == t.comps || tys[0].comps == 1)
                        && tys[1] == t
                        && tys[2] == t
                }
                ir::AluClass::Shift => {
                    tys[0] == t
                        && tys[1..]
                            .iter()
                            .all(|x| x.kind == Kind::Int && x.comps == t.comps)
                }
                ir::AluClass::Test => tys[0].is_float() && t.is_bool() && t.comps == tys[0].comps,
            };
        if !ok {
            return invalid(format!("operand types of {} do not match", op.name()));
        }
        // Shift counts, bitfield operands and ldexp's exponent are 32-bit in the IR.
        let mut srcs = srcs.to_vec();
        if op.class() == ir::AluClass::Shift {
            for s in &mut srcs[1..] {
                let st = self.ty(*s);
                if st.bits == 32 {
                    continue;
                }
                let t32 = Type::I32.vec(st.comps);
                *s = if op != AluOp::Ldexp {
                    // Counts and offsets are unsigned (larger ones are undefined in SPIR-V).
                    self.alu(AluOp::U2u, t32, &[*s])?
                } else if st.bits < 32 {
                    // The exponent is signed: a narrow one is sign-extended.
                    self.alu(AluOp::I2i, t32, &[*s])?
                } else {
                    // A 64-bit exponent is clamped into the 32-bit range before it is
                    // narrowed, so 2^32 + 5 stays huge instead of becoming 5; every
                    // exponent beyond +-2^31 already gives 0 or inf for any float.
                    let lo = self.konst(st, i64::from(i32::MIN) as u64)?;
                    let hi = self.konst(st, i32::MAX as u64)?;
                    let c = self.alu(AluOp::Imax, st, &[*s, lo])?;
                    let c = self.alu(AluOp::Imin, st, &[c, hi])?;
                    self.alu(AluOp::I2i, t32, &[c])?
                };
            }
        }
        self.alu(op, t, &srcs)
    }

    pub(super) fn alu_instruction(&mut self, i: &dr::Instruction, b: u32) -> Res<FVal> {
        use spirv::Op as O;
        let op = i.class.opcode;
        let rt = rty(i)?;
        let mut args = Vec::new();
        let arg_ids: Vec<u32> = i
            .operands
            .iter()
            .filter_map(|o| {
                if let Operand::IdRef(v) = o {
                    Some(*v)
                } else {
                    None
                }
            })
            .collect();
        match op {
            O::CompositeExtract | O::CompositeInsert | O::VectorShuffle => {}
            _ => {
                for id in &arg_ids {
                    args.push(self.get(*id, b)?);
                }
            }
        }
        // Orderings the table maps onto the op of the swapped operands (a > b is b < a).
        let swapped = AluOp::from_spirv(op).filter(|a| a.swapped);
        if let Some(SpirvAlu { op: alu, .. }) = swapped {
            if args.len() != 2 {
                return invalid(format!("{op:?} operand count"));
            }
            return self.map_alu(alu, rt, &[args[1].clone(), args[0].clone()]);
        }
        if let Some((alu, n, _)) = spirv_alu(op) {
            if args.len() != n {
                return invalid(format!("{op:?} operand count"));
            }
            // The SPIR-V spec says a conversion's component width must differ from the
            // result's, but glslang turns a redundant same-type constructor such as
            // `float16_t(x)` on a float16_t (or `uint16_t(x)`, `int64_t(x)`) into one
            // (glslang issue 3616; llama.cpp's rope shaders for f16 have it). Its meaning is
            // plain: the value itself, so it is read as a copy.
            if matches!(op, O::SConvert | O::UConvert | O::FConvert)
                && self.ir_type(rt)? == self.ty(args[0].v()?)
            {
                return Ok(args[0].clone());
            }
            return self.map_alu(alu, rt, &args);
        }
        let v = |k: usize, a: &[FVal]| {
            a.get(k)
                .ok_or_else(|| FrontendError::Invalid(format!("{op:?} operand")))
                .and_then(|x| x.v())
        };
        Ok(match op {
            O::Undef => {
                let c = self.null_const(rt, 0)?;
                self.const_fval(rt, &c, 0)?
            }
            O::CopyObject | O::CopyLogical => args
                .first()
                .cloned()
                .ok_or_else(|| FrontendError::Invalid("copy".into()))?,
            O::Bitcast => {
                let x = v(0, &args)?;
                let t = self.ir_type(rt)?;
                let st = self.ty(x);
                if st.bits as u32 * st.comps as u32 != t.bits as u32 * t.comps as u32
                    || st.is_bool()
                    || t.is_bool()
                {
                    return invalid("OpBitcast between sizes that differ");
                }
                if st.comps == t.comps {
                    FVal::V(self.alu(AluOp::Bitcast, t, &[x])?)
                } else {
                    FVal::V(self.bitcast_regroup(x, t)?)
                }
            }
            O::QuantizeToF16 => {
                let x = v(0, &args)?;
                let t = self.ty(x);
                let h = self.alu(AluOp::F2f, Type::float(16).vec(t.comps), &[x])?;
                FVal::V(self.alu(AluOp::F2f, t, &[h])?)
            }
            O::SNegate => {
                FVal::V(self.alu_checked(AluOp::Ineg, self.ir_type(rt)?, &[v(0, &args)?])?)
            }
            O::FNegate => self.map_alu(AluOp::Fneg, rt, &args)?,
            O::Not => FVal::V(self.alu_checked(AluOp::Inot, self.ir_type(rt)?, &[v(0, &args)?])?),
            O::LogicalNot => {
                FVal::V(self.alu_checked(AluOp::Inot, self.ir_type(rt)?, &[v(0, &args)?])?)
            }
            O::Select => {
                let t = self.ir_type(rt).ok();
                let c = v(0, &args)?;
                match t {
                    Some(t) => FVal::V(self.alu_checked(
                        AluOp::Bcsel,
                        t,
                        &[c, v(1, &args)?, v(2, &args)?],
                    )?),
                    None => {
                        // Select of composites with a scalar condition.
                        if self.ty(c).comps != 1 {
                            return invalid("OpSelect of composites needs a scalar condition");
                        }
                        self.select_tree(c, &args[1], &args[2])?
                    }
                }
            }
            O::IAddCarry | O::ISubBorrow | O::UMulExtended | O::SMulExtended => {
                let (a, bb) = (v(0, &args)?, v(1, &args)?);
                let t = self.ty(a);
                let (lo, hi) = match op {
                    O::IAddCarry => {
                        let s = self.alu_checked(AluOp::Iadd, t, &[a, bb])?;
                        let c = self.alu(AluOp::Ult, Type::B1.vec(t.comps), &[s, a])?;
                        (s, self.alu(AluOp::B2i, t, &[c])?)
                    }
                    O::ISubBorrow => {
                        let s = self.alu_checked(AluOp::Isub, t, &[a, bb])?;
                        let c = self.alu(AluOp::Ult, Type::B1.vec(t.comps), &[a, bb])?;
                        (s, self.alu(AluOp::B2i, t, &[c])?)
                    }
                    O::UMulExtended => (
                        self.alu_checked(AluOp::Imul, t, &[a, bb])?,
                        self.alu_checked(AluOp::UmulHigh, t, &[a, bb])?,
                    ),
                    _ => (
                        self.alu_checked(AluOp::Imul, t, &[a, bb])?,
                        self.alu_checked(AluOp::ImulHigh, t, &[a, bb])?,
                    ),
                };
                FVal::C(vec![FVal::V(lo), FVal::V(hi)])
            }
            O::Any | O::All => {
                let x = v(0, &args)?;
                let t = self.ty(x);
                let mut r = self.extract(x, 0)?;
                for k in 1..t.comps {
                    let c = self.extract(x, k)?;
                    r = self.alu(
                        if op == O::Any {
                            AluOp::Ior
                        } else {
                            AluOp::Iand
                        },
                        Type::B1,
                        &[r, c],
                    )?;
                }
                FVal::V(r)
            }
            O::Dot => {
                let (a, bb) = (v(0, &args)?, v(1, &args)?);
                FVal::V(self.dot(a, bb)?)
            }
            O::SDot | O::UDot | O::SUDot | O::SDotAccSat | O::UDotAccSat | O::SUDotAccSat => {
                self.integer_dot(i, &args, rt)?
            }
            O::VectorTimesScalar => {
                let (a, s) = (v(0, &args)?, v(1, &args)?);
                let n = self.ty(a).comps;
                let s = self.splat(s, n)?;
                FVal::V(self.alu_checked(AluOp::Fmul, self.ty(a), &[a, s])?)
            }
            O::MatrixTimesScalar => {
                let cols = args[0].comps()?.to_vec();
                let s = v(1, &args)?;
                let mut out = Vec::new();
                for c in cols {
                    let c = c.v()?;
                    let n = self.ty(c).comps;
                    let sv = self.splat(s, n)?;
                    out.push(FVal::V(self.alu_checked(
                        AluOp::Fmul,
                        self.ty(c),
                        &[c, sv],
                    )?));
                }
                FVal::C(out)
            }
            O::MatrixTimesVector => {
                let cols = args[0].comps()?.to_vec();
                let x = v(1, &args)?;
                FVal::V(self.mat_vec(&cols, x)?)
            }
            O::VectorTimesMatrix => {
                let x = v(0, &args)?;
                let cols = args[1].comps()?.to_vec();
                let mut out = Vec::new();
                for c in cols {
                    out.push(self.dot(x, c.v()?)?);
                }
                let t = self.ty(out[0]);
                FVal::V(self.emit(t.vec(out.len() as u8), Op::Vec(out))?)
            }
            O::MatrixTimesMatrix => {
                let a = args[0].comps()?.to_vec();
                let bc = args[1].comps()?.to_vec();
                let mut out = Vec::new();
                for c in bc {
                    out.push(FVal::V(self.mat_vec(&a, c.v()?)?));
                }
                FVal::C(out)
            }
            O::OuterProduct => {
                let (a, bb) = (v(0, &args)?, v(1, &args)?);
                let n = self.ty(bb).comps;
                let mut out = Vec::new();
                for k in 0..n {
                    let s = self.extract(bb, k)?;
                    let s = self.splat(s, self.ty(a).comps)?;
                    out.push(FVal::V(self.alu_checked(
                        AluOp::Fmul,
                        self.ty(a),
                        &[a, s],
                    )?));
                }
                FVal::C(out)
            }
            O::Transpose => {
                let cols: Vec<Value> =
                    args[0].comps()?.iter().map(|c| c.v()).collect::<Res<_>>()?;
                FVal::C(self.transpose(&cols)?.into_iter().map(FVal::V).collect())
            }
            O::CompositeConstruct => {
                let ids = arg_ids.clone();
                let mut parts = Vec::new();
                for id in ids {
                    parts.push(self.get(id, b)?);
                }
                match self.stype(rt)? {
                    SType::Vector(..) => {
                        let t = self.ir_type(rt)?;
                        let vs: Vec<Value> = parts.iter().map(|p| p.v()).collect::<Res<_>>()?;
                        let mut comps = Vec::new();
                        for x in vs {
                            let xt = self.ty(x);
                            if xt.scalar_type() != t.scalar_type() {
                                return invalid("vector construct component type");
                            }
                            for k in 0..xt.comps {
                                comps.push(self.extract(x, k)?);
                            }
                        }
                        if comps.len() != usize::from(t.comps) {
                            return invalid("vector construct size");
                        }
                        FVal::V(self.emit(t, Op::Vec(comps))?)
                    }
                    _ => FVal::C(parts),
                }
            }
            O::CompositeExtract => {
                let mut x = self.get(arg_ids[0], b)?;
                let lits: Vec<u32> = i.operands[1..].iter().map(lit).collect::<Res<_>>()?;
                for l in lits {
                    x = match x {
                        FVal::C(c) => c
                            .get(l as usize)
                            .cloned()
                            .ok_or_else(|| FrontendError::Invalid("extract index".into()))?,
                        FVal::V(v) => {
                            if l >= u32::from(self.ty(v).comps) {
                                return invalid("extract index");
                            }
                            FVal::V(self.extract(v, l as u8)?)
                        }
                        FVal::P(_) => return invalid("extract from pointer"),
                    };
                }
                x
            }
            O::CompositeInsert => {
                // Operands: Object (the part written), Composite (the value it goes into),
                // then the index path.
                let part = self.get(op_id(i, 0)?, b)?;
                let composite = self.get(op_id(i, 1)?, b)?;
                let lits: Vec<u32> = i.operands[2..].iter().map(lit).collect::<Res<_>>()?;
                self.insert_path(part, composite, &lits)?
            }
            O::VectorShuffle => {
                let a = self.getv(op_id(i, 0)?, b)?;
                let bb = self.getv(op_id(i, 1)?, b)?;
                let (ta, tb) = (self.ty(a), self.ty(bb));
                let t = self.ir_type(rt)?;
                if ta.scalar_type() != t.scalar_type() || tb.scalar_type() != t.scalar_type() {
                    return invalid("shuffle types");
                }
                let lits: Vec<u32> = i.operands[2..].iter().map(lit).collect::<Res<_>>()?;
                if lits.len() != usize::from(t.comps) {
                    return invalid("shuffle size");
                }
                let mut comps = Vec::new();
                for l in lits {
                    let c = if l == u32::MAX {
                        self.konst(t.scalar_type(), 0)?
                    } else if l < u32::from(ta.comps) {
                        self.extract(a, l as u8)?
                    } else if l < u32::from(ta.comps + tb.comps) {
                        self.extract(bb, (l - u32::from(ta.comps)) as u8)?
                    } else {
                        return invalid("shuffle index");
                    };
                    comps.push(c);
                }
                FVal::V(self.emit(t, Op::Vec(comps))?)
            }
            O::VectorExtractDynamic => {
                let (x, idx) = (v(0, &args)?, v(1, &args)?);
                FVal::V(self.dyn_extract(x, idx)?)
            }
            O::VectorInsertDynamic => {
                let (x, c, idx) = (v(0, &args)?, v(1, &args)?, v(2, &args)?);
                FVal::V(self.dyn_insert(x, c, idx)?)
            }
            op if super::subgroup::is_subgroup_instruction(op) => {
                let t = self.ir_type(rt)?;
                self.subgroup_instruction(i, t, &args)?
            }
            other => return unsupported(format!("SPIR-V instruction {other:?}")),
        })
    }

    pub(super) fn select_tree(&mut self, c: Value, a: &FVal, bb: &FVal) -> Res<FVal> {
        match (a, bb) {
            (FVal::V(x), FVal::V(y)) => {
                let t = self.ty(*x);
                Ok(FVal::V(self.alu_checked(AluOp::Bcsel, t, &[c, *x, *y])?))
            }
            (FVal::C(x), FVal::C(y)) if x.len() == y.len() => Ok(FVal::C(
                x.iter()
                    .zip(y)
                    .map(|(p, q)| self.select_tree(c, p, q))
                    .collect::<Res<_>>()?,
            )),
            _ => invalid("select operands differ in shape"),
        }
    }

    /// `composite` with `part` written at the index `path` (OpCompositeInsert).
    pub(super) fn insert_path(&mut self, part: FVal, composite: FVal, path: &[u32]) -> Res<FVal> {
        let Some((&first, rest)) = path.split_first() else {
            return Ok(part);
        };
        match composite {
            FVal::C(mut c) => {
                let k = first as usize;
                let old = c
                    .get(k)
                    .cloned()
                    .ok_or_else(|| FrontendError::Invalid("insert index".into()))?;
                c[k] = self.insert_path(part, old, rest)?;
                Ok(FVal::C(c))
            }
            FVal::V(v) => {
                if !rest.is_empty() || first >= u32::from(self.ty(v).comps) {
                    return invalid("insert index");
                }
                let s = part.v()?;
                let t = self.ty(v);
                if self.ty(s) != t.scalar_type() {
                    return invalid("insert type");
                }
                Ok(FVal::V(self.emit(t, Op::Insert(v, s, first as u8))?))
            }
            FVal::P(_) => invalid("insert into pointer"),
        }
    }

    pub(super) fn dot(&mut self, a: Value, b: Value) -> Res<Value> {
        let t = self.ty(a);
        if t != self.ty(b) || !t.is_float() {
            return invalid("dot operand types");
        }
        let st = t.scalar_type();
        let m = self.alu(AluOp::Fmul, t, &[a, b])?;
        let mut r = self.extract(m, 0)?;
        for k in 1..t.comps {
            let c = self.extract(m, k)?;
            r = self.alu(AluOp::Fadd, st, &[r, c])?;
        }
        Ok(r)
    }

    pub(super) fn mat_vec(&mut self, cols: &[FVal], x: Value) -> Res<Value> {
        let xt = self.ty(x);
        if usize::from(xt.comps) != cols.len() {
            return invalid("matrix times vector shape");
        }
        let mut acc: Option<Value> = None;
        for (k, c) in cols.iter().enumerate() {
            let c = c.v()?;
            let ct = self.ty(c);
            let s = self.extract(x, k as u8)?;
            let s = self.splat(s, ct.comps)?;
            let p = self.alu_checked(AluOp::Fmul, ct, &[c, s])?;
            acc = Some(match acc {
                Some(a) => self.alu_checked(AluOp::Fadd, ct, &[a, p])?,
                None => p,
            });
        }
        acc.ok_or_else(|| FrontendError::Invalid("empty matrix".into()))
    }

    pub(super) fn transpose(&mut self, cols: &[Value]) -> Res<Vec<Value>> {
        let rows = self.ty(cols[0]).comps;
        let st = self.ty(cols[0]).scalar_type();
        let mut out = Vec::new();
        for r in 0..rows {
            let mut comps = Vec::new();
            for c in cols {
                comps.push(self.extract(*c, r)?);
            }
            out.push(self.emit(st.vec(cols.len() as u8), Op::Vec(comps))?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_err, check_ir};

    /// Arithmetic, signed compares and OpDot map to IR ALU ops (OpDot: a multiply and a sum
    /// of the components).
    #[test]
    fn arithmetic_compare_and_dot_map_to_alu_ops() {
        check_ir(
            "arithmetic_compare_and_dot_map_to_alu_ops",
            "
            OpDecorate %gid BuiltIn GlobalInvocationId
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %ptr_f = OpTypePointer Function %f32
            %ptr_b = OpTypePointer Function %bool
            %c3 = OpConstant %i32 3
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_f Function
            %y = OpVariable %ptr_b Function
            %id = OpLoad %v3u32 %gid
            %i = OpCompositeExtract %u32 %id 0
            %s = OpBitcast %i32 %i
            %lt = OpSLessThan %bool %s %c3
            OpStore %y %lt
            %f = OpConvertSToF %f32 %s
            %v = OpCompositeConstruct %v2f32 %f %f
            %w = OpFMul %v2f32 %v %v
            %d = OpDot %f32 %w %v
            OpStore %x %d
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:f32
                var $1:b1
                loop {
                    %0:f32 = const 0.0
                    store_var $0, %0
                    %1:b1 = const false
                    store_var $1, %1
                    %2:i32x3 = sysval global_invocation_id
                    %3:i32 = extract %2, 0
                    %4:i32 = bitcast %3
                    %5:i32 = const 3
                    %6:b1 = ilt %4, %5
                    store_var $1, %6
                    %7:f32 = i2f %4
                    %8:f32x2 = vec %7, %7
                    %9:f32x2 = fmul %8, %8
                    %10:f32x2 = fmul %9, %8
                    %11:f32 = extract %10, 0
                    %12:f32 = extract %10, 1
                    %13:f32 = fadd %11, %12
                    store_var $0, %13
                    break
                }
            }
            ",
        );
    }

    #[test]
    fn mismatched_operand_types_are_rejected() {
        check_err(
            "mismatched_operand_types_are_rejected",
            "
            %ptr_f = OpTypePointer Function %f32
            %one = OpConstant %f32 1
            %two = OpConstant %u32 2
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_f Function
            %s = OpFAdd %f32 %one %two
            OpStore %x %s
            OpReturn
            OpFunctionEnd
            ",
            "operand types of fadd do not match",
        );
    }

    /// Shift counts are 32-bit in the IR: a 16-bit count is converted first.
    #[test]
    fn narrow_shift_count_is_widened_to_32_bits() {
        check_ir(
            "narrow_shift_count_is_widened_to_32_bits",
            "
            OpCapability Int16
            OpDecorate %gid BuiltIn GlobalInvocationId
            %u16 = OpTypeInt 16 0
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %ptr_u = OpTypePointer Function %u32
            %c3 = OpConstant %u16 3
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_u Function
            %id = OpLoad %v3u32 %gid
            %i = OpCompositeExtract %u32 %id 0
            %s = OpShiftLeftLogical %u32 %i %c3
            OpStore %x %s
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:i32
                loop {
                    %0:i32 = const 0
                    store_var $0, %0
                    %1:i32x3 = sysval global_invocation_id
                    %2:i32 = extract %1, 0
                    %3:i16 = const 3
                    %4:i32 = u2u %3
                    %5:i32 = ishl %2, %4
                    store_var $0, %5
                    break
                }
            }
            ",
        );
    }
    /// OpCompositeInsert writes its first operand (the Object) into its second (the
    /// Composite); reduced from llama.cpp's argsort, which builds an ivec2 with `v.y = x`.
    #[test]
    fn composite_insert_writes_the_object_into_the_composite() {
        check_ir(
            "composite_insert_writes_the_object_into_the_composite",
            "
            %v2i32 = OpTypeVector %i32 2
            %ptr_v = OpTypePointer Function %v2i32
            %c0 = OpConstant %i32 0
            %c7 = OpConstant %i32 7
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_v Function
            %v = OpCompositeConstruct %v2i32 %c0 %c0
            %w = OpCompositeInsert %v2i32 %c7 %v 1
            OpStore %x %w
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:i32x2
                loop {
                    %0:i32x2 = const 0, 0
                    store_var $0, %0
                    %1:i32 = const 0
                    %2:i32 = const 0
                    %3:i32 = const 0
                    %4:i32 = const 0
                    %5:i32x2 = vec %3, %4
                    %6:i32 = const 7
                    %7:i32x2 = insert %5, %6, 1
                    store_var $0, %7
                    break
                }
            }
            ",
        );
    }

    /// glslang emits OpFConvert/OpUConvert from a type to itself for a redundant
    /// constructor (`float16_t(h)` in llama.cpp's f16 rope shaders); it is a copy.
    #[test]
    fn same_type_conversion_is_a_copy() {
        check_ir(
            "same_type_conversion_is_a_copy",
            "
            OpCapability Float16
            OpCapability Int16
            %f16 = OpTypeFloat 16
            %u16 = OpTypeInt 16 0
            %ptr_h = OpTypePointer Function %f16
            %ptr_s = OpTypePointer Function %u16
            %h = OpConstant %f16 1.5
            %s = OpConstant %u16 9
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_h Function
            %y = OpVariable %ptr_s Function
            %a = OpFConvert %f16 %h
            OpStore %x %a
            %b = OpUConvert %u16 %s
            OpStore %y %b
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:f16
                var $1:i16
                loop {
                    %0:f16 = const 0x0
                    store_var $0, %0
                    %1:i16 = const 0
                    store_var $1, %1
                    %2:f16 = const 0x3e00
                    store_var $0, %2
                    %3:i16 = const 9
                    store_var $1, %3
                    break
                }
            }
            ",
        );
    }
}
