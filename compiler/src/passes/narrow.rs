//! 8/16-bit lowering: what the hardware computes natively on 16-bit values stays; every
//! other ALU operation on 8/16-bit integers or 16-bit floats is computed in 32 bits.
//!
//! * Native (`native16`, the Gen9 facts' list `hw::HwFacts::native16`, computed by the back
//!   end in W/UW or HF): 16-bit integer add, sub, mul (low half), neg, abs, min/max
//!   (signed and unsigned), and/or/xor/not, shifts (the count is reduced modulo 16 here,
//!   the reference's semantics) and compares; fp16 add, sub, mul, neg, abs, min/max, the
//!   ordered compares, `fneu` and `isnan`. The fp16 ones give the same bits as the promoted
//!   form: one rounding of the exact result (the hardware computes HF through f32, and
//!   f32's 24 bits >= 2 x 11 + 2, so rounding twice is innocuous), and HF denormals
//!   follow cr0 bit 10 either way (the promoted form's HF <-> F moves flush them exactly as
//!   HF arithmetic does).
//! * Byte compares become word compares (sources extended to i16: `i2i` for the signed
//!   orderings, `u2u` else), so 8/16-bit compares yield 16-bit booleans (`lower_bools`);
//!   no 8-bit booleans.
//! * Other integer ops extend their sources to 32 bits (`i2i` sign-extends where the result
//!   depends on the sign: signed division, remainder, min/max, arithmetic shift right,
//!   signed compares, high multiply, find-msb; `u2u` zero-extends elsewhere), compute the
//!   32-bit op and truncate the result back (`i2i` to the narrow type). 8-bit add,
//!   subtract, multiply, shift left and bitwise ops wrap exactly as the narrow op would.
//!   Shift counts are taken modulo the bit width, as the reference (`eval`) does (SPIR-V
//!   leaves larger counts undefined).
//! * Other fp16 ops (division, fma, sqrt, transcendentals, rounding, ...) convert their
//!   sources to f32 (exact), compute in f32 and round the result to f16 (`f2f`, round to
//!   nearest even). fma stays promoted because MAD is a 3-source Align16 instruction, which
//!   needs packed operands (the dword-slot representation is stride 2); division and
//!   transcendentals are within Vulkan's fp16 precision.
//! * Conversions: 8/16 <-> 32-bit (`i2i`, `u2u`, `f2f` f16 <-> f32) and bitcasts between
//!   equal sizes stay for the back end; anything else involving a narrow type goes
//!   through a 32-bit intermediate (f16 <-> f64 through f32, as docs/architecture.md, "Design rules" asks).
//!
//! Runs before `lower_int_div` (which then sees only 32-bit division) and `lower_bools`.

use crate::builder::{expand_instrs, Builder};
use crate::ir::*;

fn is_narrow(t: Type) -> bool {
    matches!((t.kind, t.bits), (Kind::Int, 8 | 16) | (Kind::Float, 16))
}

/// Ops the back end computes natively on 16-bit operands of type `st` (W/UW or HF in the
/// dword-slot representation, see `backend::narrow`): everything else is promoted. The set
/// is a Gen9 hardware fact ([`crate::hw::HwFacts::native16`]), read from [`crate::hw::GEN9`]
/// directly: the pipeline's passes take only the function, and Gen9 is the one target.
fn native16(op: AluOp, st: Type) -> bool {
    crate::hw::GEN9.is_native16(op, st)
}

/// How a narrow source is widened.
#[derive(Clone, Copy, PartialEq)]
enum Ext {
    Sign,
    Zero,
}

struct Narrow<'b, 'f> {
    b: &'b mut Builder<'f>,
}

impl Narrow<'_, '_> {
    fn ty(&self, v: Value) -> Type {
        self.b.ty(v)
    }

    /// `v` widened to 32 bits (unchanged when it is not narrow).
    fn widen(&mut self, v: Value, ext: Ext) -> Value {
        let t = self.ty(v);
        if !is_narrow(t) {
            return v;
        }
        match t.kind {
            Kind::Float => self.b.alu(AluOp::F2f, Type::F32.vec(t.comps), &[v]),
            _ => {
                let op = if ext == Ext::Sign {
                    AluOp::I2i
                } else {
                    AluOp::U2u
                };
                self.b.alu(op, Type::I32.vec(t.comps), &[v])
            }
        }
    }

    /// The 32-bit counterpart of a narrow type (same kind and component count).
    fn wide_ty(t: Type) -> Type {
        if is_narrow(t) {
            Type { bits: 32, ..t }
        } else {
            t
        }
    }

    /// Rewrites one ALU instruction; returns false when it stays as it is.
    fn alu(&mut self, d: Value, op: AluOp, srcs: &[Value]) -> bool {
        use AluOp::*;
        let dt = self.ty(d);
        let st = self.ty(srcs[0]);
        let narrow_any = srcs.iter().any(|s| is_narrow(self.ty(*s))) || is_narrow(dt);
        if !narrow_any {
            return false;
        }
        match op.class() {
            AluClass::Convert => return self.convert(d, op, srcs[0], st, dt),
            // A select of narrow values is a select of their slots: the back end does it.
            AluClass::Select => return false,
            _ => {}
        }
        if op == Mov {
            return false;
        }
        if native16(op, st) {
            // Shift counts modulo the width (the reference's semantics), in 32 bits.
            if matches!(op, Ishl | Ishr | Ushr) {
                // A 16-bit count is masked natively; the back end reads any count's low word.
                let c = if self.ty(srcs[1]).bits == 16 {
                    srcs[1]
                } else {
                    self.widen(srcs[1], Ext::Zero)
                };
                let ct = self.ty(c);
                let m = self.b.konst(ct, 15);
                let c = self.b.alu(Iand, ct, &[c, m]);
                self.b.emit_to(d, Op::Alu(op, vec![srcs[0], c]));
                return true;
            }
            return false;
        }
        if st.kind == Kind::Int && st.bits == 8 && op.class() == AluClass::Compare {
            // Byte compares are word compares (16-bit booleans; byte destinations would
            // need stride 2 and there are no byte immediates).
            let cv = if op.signed_srcs() { I2i } else { U2u };
            let ws: Vec<Value> = srcs
                .iter()
                .map(|s| {
                    let t = self.ty(*s);
                    self.b.alu(cv, Type { bits: 16, ..t }, &[*s])
                })
                .collect();
            self.b.emit_to(d, Op::Alu(op, ws));
            return true;
        }
        let ext = if op.signed_srcs() {
            Ext::Sign
        } else {
            Ext::Zero
        };
        let mut ws: Vec<Value> = srcs.iter().map(|s| self.widen(*s, ext)).collect();
        // Shift counts modulo the width (the reference's semantics).
        if matches!(op, Ishl | Ishr | Ushr) && is_narrow(st) {
            let m = self
                .b
                .konst(Type::I32.vec(self.ty(ws[1]).comps), u64::from(st.bits) - 1);
            ws[1] = self.b.alu(Iand, self.ty(ws[1]), &[ws[1], m]);
        }
        let wt = Self::wide_ty(dt);
        let bits = u64::from(st.bits);
        let r = match op {
            ImulHigh | UmulHigh => {
                // The full product of two extended narrow values fits in 32 bits.
                let p = self.b.alu(Imul, wt, &ws);
                let k = self.b.konst(Type::I32.vec(wt.comps), bits);
                let sh = if op == ImulHigh { Ishr } else { Ushr };
                self.b.alu(sh, wt, &[p, k])
            }
            BitfieldReverse => {
                let r = self.b.alu(BitfieldReverse, wt, &ws);
                let k = self.b.konst(Type::I32.vec(wt.comps), 32 - bits);
                self.b.alu(Ushr, wt, &[r, k])
            }
            _ => self.b.alu(op, wt, &ws),
        };
        self.finish(d, r);
        true
    }

    /// Defines `d` (narrow or not) from the 32-bit result `r`.
    fn finish(&mut self, d: Value, r: Value) {
        let dt = self.ty(d);
        if !is_narrow(dt) {
            // Wide result: the instruction that computed `r` defines `d` itself.
            if let Some(Node::Instr(i)) = self.b.last_mut() {
                if i.dst == Some(r) {
                    i.dst = Some(d);
                    return;
                }
            }
        }
        let op = if !is_narrow(dt) {
            AluOp::Mov
        } else if dt.is_float() {
            AluOp::F2f
        } else {
            AluOp::I2i
        };
        self.b.emit_to(d, Op::Alu(op, vec![r]));
    }

    fn convert(&mut self, d: Value, op: AluOp, s: Value, st: Type, dt: Type) -> bool {
        use AluOp::*;
        let (ss, ds) = (st.bits, dt.bits);
        match op {
            // Kept for the back end: 8/16/32-bit integer resizes, f16 <-> f32, equal sizes.
            I2i | U2u if ss <= 32 && ds <= 32 => false,
            F2f if ss <= 32 && ds <= 32 => false,
            Bitcast if ss == ds => false,
            // Through 32 bits: the narrow source widened (sign-extended for the signed
            // conversions), converted, the result narrowed by `finish`. For I2i/U2u one side
            // is 64-bit; I2f/U2f of up to 32-bit integers are exact in f32 up to 2^24,
            // beyond f16's range, so rounding once to f16 afterwards is correct; booleans
            // are never narrow, so B2i/B2f convert their source as it is.
            I2i | U2u | F2f | I2f | U2f | F2i | F2u | FrexpExp | B2i | B2f => {
                let ext = if matches!(op, I2i | I2f) {
                    Ext::Sign
                } else {
                    Ext::Zero
                };
                let m = self.widen(s, ext);
                let r = self.b.alu(op, Self::wide_ty(dt), &[m]);
                self.finish(d, r);
                true
            }
            I2b => {
                let m = self.widen(s, Ext::Zero);
                self.b.emit_to(d, Op::Alu(I2b, vec![m]));
                true
            }
            _ => false,
        }
    }
}

/// Computes 8/16-bit ALU operations in 32 bits (see the module docs). Returns true if
/// anything changed.
pub fn lower_narrow(f: &mut Function) -> bool {
    expand_instrs(f, &mut |i, b| match i {
        Instr {
            dst: Some(d),
            op: Op::Alu(op, srcs),
            ..
        } => Narrow { b }.alu(*d, *op, srcs),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    #[test]
    fn i16_add_stays_native() {
        let src = "
            %0:i32 = const 0
            %1:i16 = load ssbo[0] %0 align 2
            %2:i16 = iadd %1, %1
            %3:i16 = imul %2, %1
            %4:i16 = umin %3, %1
            store ssbo[0] %0, %4 align 2
            ";
        check_pass(lower_narrow, src, src);
    }

    #[test]
    fn i16_division_is_computed_in_32_bits_and_truncated() {
        check_pass(
            lower_narrow,
            "
            %0:i32 = const 0
            %1:i16 = load ssbo[0] %0 align 2
            %2:i16 = udiv %1, %1
            store ssbo[0] %0, %2 align 2
            ",
            "
            %0:i32 = const 0
            %1:i16 = load ssbo[0] %0 align 2
            %3:i32 = u2u %1
            %4:i32 = u2u %1
            %5:i32 = udiv %3, %4
            %2:i16 = i2i %5
            store ssbo[0] %0, %2 align 2
            ",
        );
    }

    #[test]
    fn i8_add_is_computed_in_32_bits_and_truncated() {
        check_pass(
            lower_narrow,
            "
            %0:i32 = const 0
            %1:i8 = load ssbo[0] %0 align 1
            %2:i8 = iadd %1, %1
            store ssbo[0] %0, %2 align 1
            ",
            "
            %0:i32 = const 0
            %1:i8 = load ssbo[0] %0 align 1
            %3:i32 = u2u %1
            %4:i32 = u2u %1
            %5:i32 = iadd %3, %4
            %2:i8 = i2i %5
            store ssbo[0] %0, %2 align 1
            ",
        );
    }

    #[test]
    fn i8_signed_compare_is_a_sign_extended_i16_compare() {
        check_pass(
            lower_narrow,
            "
            %0:i32 = const 0
            %1:i8 = load ssbo[0] %0 align 1
            %2:i8 = load ssbo[0] %0 align 1
            %3:b1 = ilt %1, %2
            %4:i32 = b2i %3
            store ssbo[0] %0, %4 align 4
            ",
            "
            %0:i32 = const 0
            %1:i8 = load ssbo[0] %0 align 1
            %2:i8 = load ssbo[0] %0 align 1
            %5:i16 = i2i %1
            %6:i16 = i2i %2
            %3:b1 = ilt %5, %6
            %4:i32 = b2i %3
            store ssbo[0] %0, %4 align 4
            ",
        );
    }

    #[test]
    fn f16_mul_stays_native() {
        let src = "
            %0:i32 = const 0
            %1:f16 = load ssbo[0] %0 align 2
            %2:f16 = fmul %1, %1
            %3:b1 = flt %2, %1
            %4:i32 = b2i %3
            store ssbo[0] %0, %2 align 2
            store ssbo[0] %0, %4 align 4
            ";
        check_pass(lower_narrow, src, src);
    }

    #[test]
    fn f16_division_rounds_after_the_f32_op() {
        check_pass(
            lower_narrow,
            "
            %0:i32 = const 0
            %1:f16 = load ssbo[0] %0 align 2
            %2:f16 = fdiv %1, %1
            store ssbo[0] %0, %2 align 2
            ",
            "
            %0:i32 = const 0
            %1:f16 = load ssbo[0] %0 align 2
            %3:f32 = f2f %1
            %4:f32 = f2f %1
            %5:f32 = fdiv %3, %4
            %2:f16 = f2f %5
            store ssbo[0] %0, %2 align 2
            ",
        );
    }

    #[test]
    fn narrow_shift_count_is_masked_to_the_width() {
        check_pass(
            lower_narrow,
            "
            %0:i32 = const 0
            %1:i16 = load ssbo[0] %0 align 2
            %2:i32 = load ssbo[0] %0 align 4
            %3:i16 = ushr %1, %2
            %4:i8 = load ssbo[0] %0 align 1
            %5:i8 = ishl %4, %2
            store ssbo[0] %0, %3 align 2
            store ssbo[0] %0, %5 align 1
            ",
            "
            %0:i32 = const 0
            %1:i16 = load ssbo[0] %0 align 2
            %2:i32 = load ssbo[0] %0 align 4
            %6:i32 = const 15
            %7:i32 = iand %2, %6
            %3:i16 = ushr %1, %7
            %4:i8 = load ssbo[0] %0 align 1
            %8:i32 = u2u %4
            %9:i32 = const 7
            %10:i32 = iand %2, %9
            %11:i32 = ishl %8, %10
            %5:i8 = i2i %11
            store ssbo[0] %0, %3 align 2
            store ssbo[0] %0, %5 align 1
            ",
        );
    }

    /// A vector shift's count mask is a vector constant with one value per component
    /// (llama.cpp's iq1_m/iq4_xs dequantisation shifts u16vec4 and u8vec2 values; the mask
    /// was a one-component constant of a vector type, which the IR validator refused).
    #[test]
    fn narrow_vector_shift_count_mask_has_every_component() {
        check_pass(
            lower_narrow,
            "
            %0:i32 = const 0
            %1:i16x4 = load ssbo[0] %0 align 8
            %2:i32x4 = load ssbo[0] %0 align 16
            %3:i16x4 = ushr %1, %2
            %4:i8x2 = load ssbo[0] %0 align 2
            %5:i32x2 = load ssbo[0] %0 align 8
            %6:i8x2 = ishl %4, %5
            store ssbo[0] %0, %3 align 8
            store ssbo[0] %0, %6 align 2
            ",
            "
            %0:i32 = const 0
            %1:i16x4 = load ssbo[0] %0 align 8
            %2:i32x4 = load ssbo[0] %0 align 16
            %7:i32x4 = const 15, 15, 15, 15
            %8:i32x4 = iand %2, %7
            %3:i16x4 = ushr %1, %8
            %4:i8x2 = load ssbo[0] %0 align 2
            %5:i32x2 = load ssbo[0] %0 align 8
            %9:i32x2 = u2u %4
            %10:i32x2 = const 7, 7
            %11:i32x2 = iand %5, %10
            %12:i32x2 = ishl %9, %11
            %6:i8x2 = i2i %12
            store ssbo[0] %0, %3 align 8
            store ssbo[0] %0, %6 align 2
            ",
        );
    }

    #[test]
    fn f16_to_f64_goes_through_f32() {
        check_pass(
            lower_narrow,
            "
            %0:i32 = const 0
            %1:f16 = load ssbo[0] %0 align 2
            %2:f64 = f2f %1
            store ssbo[0] %0, %2 align 8
            ",
            "
            %0:i32 = const 0
            %1:f16 = load ssbo[0] %0 align 2
            %3:f32 = f2f %1
            %2:f64 = f2f %3
            store ssbo[0] %0, %2 align 8
            ",
        );
    }

    #[test]
    fn i32_code_is_unchanged() {
        check_pass(
            lower_narrow,
            "
            %0:i32 = const 0
            %1:i32 = load ssbo[0] %0 align 4
            %2:i32 = iadd %1, %1
            store ssbo[0] %0, %2 align 4
            ",
            "
            %0:i32 = const 0
            %1:i32 = load ssbo[0] %0 align 4
            %2:i32 = iadd %1, %1
            store ssbo[0] %0, %2 align 4
            ",
        );
    }
}
