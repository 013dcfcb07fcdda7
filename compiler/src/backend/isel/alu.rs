//! Selection of ALU operations at every operand size.

use super::*;

impl Isel<'_> {
    /// A conversion between an 8/16-bit and a 64-bit type goes through the 32-bit type of
    /// the narrow side's kind (Gen9 has no direct B/UB or HF <-> 64-bit conversion,
    /// docs/gen9.md 8.2.4). fp16 <-> fp64 thus rounds twice, as Mesa's lowering does.
    pub(super) fn narrow_wide_convert(
        &mut self,
        op: AluOp,
        d: Opnd,
        s: Opnd,
        st: ir::Type,
        dt: ir::Type,
    ) -> Res<()> {
        use AluOp::*;
        if !matches!(op, I2i | U2u | I2f | U2f | F2i | F2u | F2f | B2i | B2f) {
            return Err(unsupported(format!("{} from {st} to {dt}", op.name())));
        }
        let same_kind = |t: ir::Type, signed: bool| -> AluOp {
            match (t.kind, signed) {
                (Kind::Float, _) => F2f,
                (Kind::Bool, _) => B2b,
                (_, true) => I2i,
                _ => U2u,
            }
        };
        let signed_src = op.signed_srcs();
        let signed_dst = op.signed_dst();
        if narrow::is_narrow(st) {
            let mid = ir::Type { bits: 32, ..st };
            let t = self.b().vreg(hw_ty(mid)?, 1);
            self.narrow_alu(same_kind(st, signed_src), t, &[s], st, mid)?;
            let mut b = self.b();
            wide::alu64(&mut b, op, d, &[t], mid, dt)
        } else {
            let mid = ir::Type { bits: 32, ..dt };
            let t = self.b().vreg(hw_ty(mid)?, 1);
            let mut b = self.b();
            wide::alu64(&mut b, op, t, &[s], st, mid)?;
            self.narrow_alu(same_kind(dt, signed_dst), d, &[t], mid, dt)
        }
    }

    pub(in crate::backend) fn alu(
        &mut self,
        op: AluOp,
        d: Opnd,
        s: &[Opnd],
        st: ir::Type,
        dt: ir::Type,
    ) -> Res<()> {
        use AluOp::*;
        use Opcode as O;
        let mut b = self.b();
        let f = |o: Opnd| o.retype(Type::F);
        let i = |o: Opnd| o.retype(Type::D);
        let u = |o: Opnd| o.retype(Type::UD);
        let _ = dt;
        match op {
            Mov | B2b | I2i | U2u | F2f => {
                b.mov(d.retype(s[0].ty), s[0]);
            }
            Bitcast => {
                b.mov(u(d), u(s[0]));
            }
            Iadd | Isub | Imul => {
                add_sub_mul(&mut b, op, d, s, Type::D);
            }
            // The adder's exact result clamped to the destination type's range (D or UD);
            // other widths were expanded by the lower_sat_add pass.
            IaddSat => {
                b.alu2(O::Add, i(d), i(s[0]), i(s[1])).sat = true;
            }
            UaddSat => {
                b.alu2(O::Add, u(d), u(s[0]), u(s[1])).sat = true;
            }
            Idiv | Udiv | Irem | Umod | Fsqrt | Frsq | Frcp | Fexp2 | Flog2 | Fsin | Fcos
            | Fpow => {
                let (m, t, n) = math_op(op).expect("a math-unit op");
                b.math(m, d.retype(t), s[..n].iter().map(|x| x.retype(t)).collect());
            }
            Imod => {
                // r = rem(a, b); if r != 0 && sign(r) != sign(b) then r += b.
                b.math(MathFunction::IntMod, i(d), vec![i(s[0]), i(s[1])]);
                let t = b.vreg(Type::D, 1);
                b.alu2(O::Xor, t, i(d), i(s[1]));
                let n = b.vreg(Type::D, 1);
                b.cmp(CondMod::L, n, t, Opnd::d(0));
                let z = b.vreg(Type::D, 1);
                b.cmp(CondMod::Nz, z, i(d), Opnd::d(0));
                b.alu2(O::And, n, n, z).cmod = CondMod::Nz;
                b.alu2(O::Add, i(d), i(d), i(s[1])).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
            Ineg | Iabs | Fneg | Fabs => neg_abs(&mut b, op, d, s, [Type::D, Type::F]),
            Isign => {
                let p = b.vreg(Type::D, 1);
                b.cmp(CondMod::G, p, i(s[0]), Opnd::d(0));
                let n = b.vreg(Type::D, 1);
                b.cmp(CondMod::L, n, i(s[0]), Opnd::d(0));
                b.alu2(O::Add, i(d), n, p.negate());
            }
            Imin | Imax | Umin | Umax | Fmin | Fmax => {
                min_max(&mut b, op, d, s, [Type::D, Type::UD, Type::F]);
            }
            Iand | Ior | Ixor | Inot => {
                logic(&mut b, op, d, s, Type::UD);
            }
            Ishl | Ishr | Ushr | BitfieldReverse | BitCount | FindLsb | Ffloor | Ftrunc
            | FroundEven | Ffract => {
                let (o, t) = one_instruction(op).expect("a one-instruction op");
                if matches!(o, O::Shl | O::Asr | O::Shr) {
                    b.alu2(o, d.retype(t), s[0].retype(t), u(s[1]));
                } else {
                    b.alu1(o, d.retype(t), s[0].retype(t));
                }
            }
            UfindMsb | IfindMsb => {
                let t = b.vreg(Type::UD, 1);
                let src = if op == IfindMsb { i(s[0]) } else { u(s[0]) };
                b.alu1(O::Fbh, t, src);
                b.cmp(CondMod::Z, Opnd::null(Type::D), i(t), Opnd::d(-1));
                b.alu2(O::Add, i(d), i(t).negate(), Opnd::d(31));
                b.mov(i(d), Opnd::d(-1)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
            Fadd | Fsub | Fmul => {
                add_sub_mul(&mut b, op, d, s, Type::F);
            }
            Fdiv => {
                let t = b.vreg(Type::F, 1);
                b.math(MathFunction::Inv, t, vec![f(s[1])]);
                b.alu2(O::Mul, f(d), f(s[0]), t);
            }
            Fmod | Frem => {
                // x - y * floor(x / y)   (frem: trunc)
                let t = b.vreg(Type::F, 1);
                b.math(MathFunction::Inv, t, vec![f(s[1])]);
                b.alu2(O::Mul, t, f(s[0]), t);
                b.alu1(if op == Fmod { O::Rndd } else { O::Rndz }, t, t);
                b.alu2(O::Mul, t, t, f(s[1]));
                b.alu2(O::Add, f(d), f(s[0]), t.negate());
            }
            Fsign => {
                let t = b.vreg(Type::UD, 1);
                b.cmp(
                    CondMod::Nz,
                    Opnd::null(Type::F),
                    f(s[0]),
                    Opnd::imm(Type::F, 0),
                );
                b.alu2(O::And, t, u(s[0]), Opnd::ud(0x8000_0000));
                b.alu2(O::Or, t, t, Opnd::ud(0x3f80_0000)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
                b.mov(u(d), t);
            }
            Ffma => {
                // MAD: dst = src0 + src1 * src2 (3-source, Align16 on Gen9; legalize moves
                // immediates and strided operands to registers).
                b.inst(LOp::Alu(O::Mad), f(d), vec![f(s[2]), f(s[0]), f(s[1])]);
            }
            Fceil => {
                let t = b.vreg(Type::F, 1);
                b.alu1(O::Rndd, t, f(s[0]).negate());
                b.mov(f(d), t.negate());
            }
            I2f | U2f | F2i | F2u => {
                let (dt, st) = match op {
                    I2f => (Type::F, Type::D),
                    U2f => (Type::F, Type::UD),
                    F2i => (Type::D, Type::F),
                    _ => (Type::UD, Type::F),
                };
                b.mov(d.retype(dt), s[0].retype(st));
            }
            B2i => {
                b.mov(i(d), i(s[0]).negate());
            }
            B2f => {
                b.alu2(O::And, u(d), u(s[0]), Opnd::ud(0x3f80_0000));
            }
            I2b => {
                let ty = hw_ty(st)?;
                b.cmp(CondMod::Nz, d.retype(ty), s[0].retype(ty), Opnd::imm(ty, 0));
            }
            Ieq | Ine | Ilt | Ige | Ult | Uge | Feq | Flt | Fle | Fgt | Fge | Fneu => {
                let (ty, cm) =
                    compare(op, [Type::D, Type::UD, Type::F]).expect("a single-cmp comparison");
                b.cmp(cm, d.retype(ty), s[0].retype(ty), s[1].retype(ty));
            }
            Fequ | Fltu | Fleu | Fgtu | Fgeu => {
                // Unordered = not(ordered opposite).
                let cm = match op {
                    Fequ => CondMod::Nz,
                    Fltu => CondMod::Ge,
                    Fleu => CondMod::G,
                    Fgtu => CondMod::Le,
                    _ => CondMod::L,
                };
                let t = b.vreg(Type::F, 1);
                if op == Fequ {
                    // fequ = !(a < b) && !(a > b)
                    let t2 = b.vreg(Type::F, 1);
                    b.cmp(CondMod::L, t, f(s[0]), f(s[1]));
                    b.cmp(CondMod::G, t2, f(s[0]), f(s[1]));
                    b.alu2(O::Or, u(t), u(t), u(t2));
                } else {
                    b.cmp(cm, t, f(s[0]), f(s[1]));
                }
                b.alu1(O::Not, u(d), u(t));
            }
            Fne => {
                // ordered !=: a != b and neither is NaN.
                let t = b.vreg(Type::F, 1);
                let t2 = b.vreg(Type::F, 1);
                b.cmp(CondMod::L, t, f(s[0]), f(s[1]));
                b.cmp(CondMod::G, t2, f(s[0]), f(s[1]));
                b.alu2(O::Or, u(d), u(t), u(t2));
            }
            IsNan => {
                b.cmp(CondMod::Nz, f(d), f(s[0]), f(s[0]));
            }
            IsInf => {
                b.cmp(
                    CondMod::Z,
                    f(d),
                    f(s[0]).absolute(),
                    Opnd::imm(Type::F, f32::INFINITY.to_bits() as u64),
                );
            }
            Bcsel => {
                b.flag_from(s[0]);
                let ty = s[1].ty;
                b.alu2(O::Sel, d.retype(ty), s[1], s[2].retype(ty)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
            UbitfieldExtract | IbitfieldExtract if bitfield_extract_const(&mut b, op, d, s) => {}
            UbitfieldExtract | IbitfieldExtract => {
                // (v << (32 - off - bits)) >> (32 - bits), 0 when bits == 0.
                let sh = b.vreg(Type::D, 1);
                b.alu2(O::Add, sh, i(s[1]).negate(), i(s[2]).negate());
                b.alu2(O::Add, sh, sh, Opnd::d(32));
                let t = b.vreg(Type::UD, 1);
                b.alu2(O::Shl, t, u(s[0]), u(sh));
                let sh2 = b.vreg(Type::D, 1);
                b.alu2(O::Add, sh2, i(s[2]).negate(), Opnd::d(32));
                if op == UbitfieldExtract {
                    b.alu2(O::Shr, u(d), t, u(sh2));
                } else {
                    b.alu2(O::Asr, i(d), i(t), u(sh2));
                }
                b.cmp(CondMod::Z, Opnd::null(Type::D), i(s[2]), Opnd::d(0));
                b.mov(i(d), Opnd::d(0)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
            BitfieldInsert => {
                // m = ((1 << bits) - 1) << off (all ones when bits == 32);
                // r = (base & ~m) | ((insert << off) & m).
                let m = b.vreg(Type::UD, 1);
                b.alu2(O::Shl, m, Opnd::ud(1), u(s[3]));
                b.alu2(O::Add, i(m), i(m), Opnd::d(-1));
                b.cmp(CondMod::Ge, Opnd::null(Type::D), i(s[3]), Opnd::d(32));
                b.mov(m, Opnd::ud(0xFFFF_FFFF)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
                b.alu2(O::Shl, m, m, u(s[2]));
                let t = b.vreg(Type::UD, 1);
                b.alu2(O::Shl, t, u(s[1]), u(s[2]));
                b.alu2(O::And, t, t, m);
                let keep = b.vreg(Type::UD, 1);
                b.alu1(O::Not, keep, m);
                b.alu2(O::And, keep, keep, u(s[0]));
                b.alu2(O::Or, u(d), keep, t);
            }
            Ldexp => {
                // x * 2^e as (x * 2^e1) * 2^e2 with e clamped to [-252, 254] and split into
                // e1 = e >> 1 and e2 = e - e1, both in [-126, 127] so each power of two is a
                // normal float: a single power clamped to the normal range would give a
                // finite x * 2^127 for e = 128. The halves have e's sign, so the first
                // product overflows or underflows only when the result does. With f32
                // denormals preserved (float controls) a denormal x with e > 254 - 149 is
                // not scaled far enough, and a denormal result may round twice.
                let e = b.vreg(Type::D, 1);
                b.alu2(O::Sel, e, i(s[1]), Opnd::d(-252)).cmod = CondMod::Ge;
                b.alu2(O::Sel, e, e, Opnd::d(254)).cmod = CondMod::L;
                let e1 = b.vreg(Type::D, 1);
                b.alu2(O::Asr, e1, e, Opnd::d(1));
                let e2 = b.vreg(Type::D, 1);
                b.alu2(O::Add, e2, e, e1.negate());
                let t = b.vreg(Type::F, 1);
                for (k, src, dst) in [(e1, f(s[0]), t), (e2, t, f(d))] {
                    let p = b.vreg(Type::D, 1);
                    b.alu2(O::Add, p, k, Opnd::d(127));
                    b.alu2(O::Shl, u(p), u(p), Opnd::ud(23));
                    b.alu2(O::Mul, dst, src, f(p));
                }
            }
            UmulHigh | ImulHigh => {
                // One dword multiply with a QWord destination gives the whole 64-bit
                // product (Gen9 multiplies D x D -> Q, signed or unsigned by the source
                // types); the result is its high dword.
                let (ty, half) = if op == UmulHigh {
                    (Type::UQ, u as fn(Opnd) -> Opnd)
                } else {
                    (Type::Q, i as fn(Opnd) -> Opnd)
                };
                let t = b.vreg(ty, 1);
                b.alu2(O::Mul, t, half(s[0]), half(s[1]));
                b.mov(u(d), wide::hi(t));
            }
            FrexpSig | FrexpExp => {
                // Normal x: significand in [0.5, 1) keeps the sign, exponent = biased - 126;
                // zero gives (0, 0). Denormals are flushed by the hardware.
                let zero = b.vreg(Type::D, 1);
                b.cmp(CondMod::Z, zero, f(s[0]), Opnd::imm(Type::F, 0));
                let t = b.vreg(Type::UD, 1);
                if op == FrexpSig {
                    b.alu2(O::And, t, u(s[0]), Opnd::ud(0x807F_FFFF));
                    b.alu2(O::Or, t, t, Opnd::ud(0x3F00_0000));
                } else {
                    b.alu2(O::Shr, t, u(s[0]), Opnd::ud(23));
                    b.alu2(O::And, t, t, Opnd::ud(0xFF));
                    b.alu2(O::Add, i(t), i(t), Opnd::d(-126));
                }
                b.flag_from(zero);
                let z = if op == FrexpSig { u(s[0]) } else { Opnd::ud(0) };
                b.alu2(O::Sel, u(d), z, t).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
        }
        Ok(())
    }
}

/// A 32-bit bitfield extract whose offset and width are constants, with `offset + bits <=
/// 32` (SPIR-V leaves larger fields undefined; the general sequence takes them): byte or
/// word k of each dword is a `mov` from the region `<32;8,4>:B` / `<16;8,2>:W` at byte k
/// (`UB`/`UW` zero-extend, `B`/`W` sign-extend), a field that ends at bit 31 one shift, any
/// other field a left and a right shift. Returns false (nothing emitted) otherwise.
fn bitfield_extract_const(b: &mut Builder, op: ir::AluOp, d: Opnd, s: &[Opnd]) -> bool {
    let signed = op == ir::AluOp::IbitfieldExtract;
    let (Base::Imm(off), Base::Imm(bits)) = (s[1].base, s[2].base) else {
        return false;
    };
    let (off, bits) = (off as u32, bits as u32);
    if off + bits > 32 || s[0].rows.is_some() {
        return false;
    }
    let (dt, shr) = if signed {
        (Type::D, Opcode::Asr)
    } else {
        (Type::UD, Opcode::Shr)
    };
    let x = s[0].retype(dt);
    if let Base::Imm(v) = x.base {
        let t = ir::Type::I32;
        let field = crate::eval::eval_alu(op, t, &[t; 3], &[v, u64::from(off), u64::from(bits)]);
        b.mov(d.retype(dt), Opnd::imm(dt, u64::from(field as u32)));
        return true;
    }
    match bits {
        0 => {
            b.mov(d.retype(dt), Opnd::d(0));
        }
        32 => {
            b.mov(d.retype(dt), x);
        }
        8 | 16 if off % bits == 0 => {
            let t = narrow::int_view(if bits == 8 { Type::UB } else { Type::UW }, signed);
            let mut part = x.offset(off / 8).retype(t);
            if part.stride != 0 {
                part.stride = narrow::slot_stride(t);
            }
            b.mov(d.retype(dt), part);
        }
        _ if off + bits == 32 => {
            b.alu2(shr, d.retype(dt), x, Opnd::ud(off));
        }
        _ => {
            let t = b.vreg(dt, 1);
            b.alu2(Opcode::Shl, t, x, Opnd::ud(32 - off - bits));
            b.alu2(shr, d.retype(dt), t, Opnd::ud(32 - bits));
        }
    }
    true
}

/// The 32-bit ops that are one ALU instruction: its opcode and the type of the destination
/// and first source (a shift's count is read as UD).
fn one_instruction(op: AluOp) -> Option<(Opcode, Type)> {
    use AluOp::*;
    Some(match op {
        Ishl => (Opcode::Shl, Type::UD),
        Ishr => (Opcode::Asr, Type::D),
        Ushr => (Opcode::Shr, Type::UD),
        BitfieldReverse => (Opcode::Bfrev, Type::UD),
        BitCount => (Opcode::Cbit, Type::UD),
        FindLsb => (Opcode::Fbl, Type::UD),
        Ffloor => (Opcode::Rndd, Type::F),
        Ftrunc => (Opcode::Rndz, Type::F),
        FroundEven => (Opcode::Rnde, Type::F),
        Ffract => (Opcode::Frc, Type::F),
        _ => return None,
    })
}

/// The 32-bit ops that are one math-unit instruction: the function, the operand type and
/// the number of sources.
fn math_op(op: AluOp) -> Option<(MathFunction, Type, usize)> {
    use AluOp::*;
    Some(match op {
        Idiv => (MathFunction::IntDiv, Type::D, 2),
        Udiv => (MathFunction::IntDiv, Type::UD, 2),
        Irem => (MathFunction::IntMod, Type::D, 2),
        Umod => (MathFunction::IntMod, Type::UD, 2),
        Fpow => (MathFunction::Pow, Type::F, 2),
        Fsqrt => (MathFunction::Sqrt, Type::F, 1),
        Frsq => (MathFunction::Rsq, Type::F, 1),
        Frcp => (MathFunction::Inv, Type::F, 1),
        Fexp2 => (MathFunction::Exp, Type::F, 1),
        Flog2 => (MathFunction::Log, Type::F, 1),
        Fsin => (MathFunction::Sin, Type::F, 1),
        Fcos => (MathFunction::Cos, Type::F, 1),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use crate::backend::{compile, BackendOptions};
    use crate::parse::parse_shader;

    /// 32-bit `umul_high`/`imul_high` are one dword multiply into a UQ/Q destination per
    /// SIMD8 quarter and a move of its high dwords, not 16-bit partial products.
    #[test]
    fn mul_high_is_one_qword_multiply() {
        let s = parse_shader(
            "shader local_size 16 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const -1640531527
            %2:i32 = umul_high %0, %1
            %3:i32 = imul_high %0, %1
            %4:i32 = ixor %2, %3
            %5:i32 = const 4
            %6:i32 = imul %0, %5
            store ssbo[0] %6, %4 align 4",
        )
        .unwrap();
        for simd in [8u32, 16, 32] {
            let k = compile(&s, &BackendOptions::gen9_at(simd)).unwrap();
            let muls = |ty: &str| {
                k.asm
                    .lines()
                    .filter(|l| l.contains("mul(") && l.contains(&format!("<1>{ty} ")))
                    .count()
            };
            let quarters = (simd / 8) as usize;
            assert_eq!(muls("UQ"), quarters, "SIMD{simd}:\n{}", k.asm);
            assert_eq!(muls("Q"), quarters, "SIMD{simd}:\n{}", k.asm);
            assert!(!k.asm.contains("0x0000ffffUD"), "SIMD{simd}:\n{}", k.asm);
        }
    }
}
