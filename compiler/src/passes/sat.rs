//! Saturating additions (`iadd_sat`, `uadd_sat`) on types other than 32 bits become ordinary
//! integer ops.
//!
//! At 32 bits the back end selects one `add.sat` (Gen clamps an integer result to the
//! destination type's range, as brw does for its saturating adds). Narrower types live in a
//! dword slot per channel and `lower_narrow` computes most of their ops at 32 bits, where a
//! saturation would clamp to the wrong range; 64-bit integers have no saturating form in the
//! back end's 64-bit selection. For those widths the sum is computed wrapping and fixed up:
//!
//! * unsigned: `s = a + b`; it wrapped exactly when `s < a`, then the result is the maximum;
//! * signed: `s = a + b`; it overflowed exactly when `a` and `b` have the same sign and `s`
//!   the other one, i.e. when `(a ^ s) & (b ^ s)` is negative; the result is then the
//!   minimum if `a` is negative and the maximum otherwise.
//!
//! It runs before `lower_narrow`, so the comparisons and selects it emits are narrowed like
//! every other op.

use crate::builder::expand_instrs;
use crate::ir::*;

/// Rewrites every non-32-bit `iadd_sat` / `uadd_sat`. Returns true if anything changed.
pub fn lower_sat_add(f: &mut Function) -> bool {
    expand_instrs(f, &mut |i, bd| {
        let (Some(d), Op::Alu(op @ (AluOp::IaddSat | AluOp::UaddSat), srcs)) = (i.dst, &i.op)
        else {
            return false;
        };
        let t = bd.ty(d);
        if t.bits == 32 {
            return false;
        }
        let (op, x, y) = (*op, srcs[0], srcs[1]);
        let n = usize::from(t.comps);
        let bt = Type::B1.vec(t.comps);
        let s = bd.emit(t, Op::Alu(AluOp::Iadd, vec![x, y]));
        if op == AluOp::UaddSat {
            let wrapped = bd.emit(bt, Op::Alu(AluOp::Ult, vec![s, x]));
            let max = bd.emit(t, Op::Const(vec![t.mask(); n]));
            bd.emit_to(d, Op::Alu(AluOp::Bcsel, vec![wrapped, max, s]));
        } else {
            let max = t.mask() >> 1;
            let zero = bd.emit(t, Op::Const(vec![0; n]));
            let xs = bd.emit(t, Op::Alu(AluOp::Ixor, vec![x, s]));
            let ys = bd.emit(t, Op::Alu(AluOp::Ixor, vec![y, s]));
            let both = bd.emit(t, Op::Alu(AluOp::Iand, vec![xs, ys]));
            let ovf = bd.emit(bt, Op::Alu(AluOp::Ilt, vec![both, zero]));
            let neg = bd.emit(bt, Op::Alu(AluOp::Ilt, vec![x, zero]));
            let min_c = bd.emit(t, Op::Const(vec![max + 1; n]));
            let max_c = bd.emit(t, Op::Const(vec![max; n]));
            let clamp = bd.emit(t, Op::Alu(AluOp::Bcsel, vec![neg, min_c, max_c]));
            bd.emit_to(d, Op::Alu(AluOp::Bcsel, vec![ovf, clamp, s]));
        }
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_alu;
    use crate::passes::check_pass;

    #[test]
    fn thirty_two_bit_saturating_adds_stay() {
        let f = "%0:i32 = sysval local_invocation_index
            %1:i32 = iadd_sat %0, %0
            %2:i32 = uadd_sat %1, %0
            store ssbo[0] %0, %2 align 4";
        check_pass(lower_sat_add, f, f);
    }

    #[test]
    fn unsigned_byte_saturating_add_becomes_compare_and_select() {
        check_pass(
            lower_sat_add,
            "%0:i32 = sysval local_invocation_index
            %1:i8 = u2u %0
            %2:i8 = uadd_sat %1, %1
            store ssbo[0] %0, %2 align 1",
            "%0:i32 = sysval local_invocation_index
            %1:i8 = u2u %0
            %3:i8 = iadd %1, %1
            %4:b1 = ult %3, %1
            %5:i8 = const 255
            %2:i8 = bcsel %4, %5, %3
            store ssbo[0] %0, %2 align 1",
        );
    }

    /// The lowered form, run by the interpreter, against eval's semantics of the op on every
    /// pair of the edge values of each width (min, min + 1, -1, 0, 1, max - 1, max and a few
    /// in between), signed and unsigned.
    #[test]
    fn lowered_form_matches_the_op_at_the_edges() {
        for (bits, ty) in [(8u8, "i8"), (16, "i16"), (64, "i64")] {
            let t = Type::int(bits);
            let m = t.mask();
            let half = m >> 1;
            let edges: Vec<u64> = vec![
                0,
                1,
                2,
                half - 1,
                half,
                half + 1,
                half + 2,
                m - 1,
                m,
                m / 3,
                (m / 3) * 2,
            ];
            let size = u32::from(bits / 8);
            for op in ["iadd_sat", "uadd_sat"] {
                let src = format!(
                    "shader local_size 1 1 1 shared 0 local 0 push 0
                    %0:i32 = const 0
                    %1:i32 = const {size}
                    %2:i32 = const {two}
                    %3:{ty} = load ssbo[0] %0 align {size}
                    %4:{ty} = load ssbo[0] %1 align {size}
                    %5:{ty} = {op} %3, %4
                    store ssbo[0] %2, %5 align {size}",
                    two = 2 * size
                );
                let mut s = crate::parse::parse_shader(&src).unwrap();
                assert!(lower_sat_add(&mut s.func));
                crate::validate::validate(&s.func).unwrap();
                for &a in &edges {
                    for &b in &edges {
                        let mut mem = crate::interp::Memory::default();
                        let n = usize::from(bits / 8);
                        let mut buf = vec![0u8; 3 * n];
                        buf[..n].copy_from_slice(&a.to_le_bytes()[..n]);
                        buf[n..2 * n].copy_from_slice(&b.to_le_bytes()[..n]);
                        mem.ssbo.insert(0, buf);
                        crate::interp::run(&s, [1, 1, 1], 1, &mut mem).unwrap();
                        let mut got = [0u8; 8];
                        got[..n].copy_from_slice(&mem.ssbo[&0][2 * n..3 * n]);
                        let got = u64::from_le_bytes(got);
                        let want = eval_alu(AluOp::from_name(op).unwrap(), t, &[t, t], &[a, b]);
                        assert_eq!(got, want, "{op} {ty}: a={a:#x} b={b:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn eval_saturates_at_the_type_range() {
        let t8 = Type::int(8);
        let s = |a: i8, b: i8| {
            eval_alu(
                AluOp::IaddSat,
                t8,
                &[t8, t8],
                &[a as u8 as u64, b as u8 as u64],
            ) as u8 as i8
        };
        assert_eq!(s(127, 1), 127);
        assert_eq!(s(-128, -1), -128);
        assert_eq!(s(-128, 127), -1);
        assert_eq!(s(100, 27), 127);
        assert_eq!(s(-100, -28), -128);
        assert_eq!(s(-100, -29), -128);
        let u = |a: u64, b: u64| eval_alu(AluOp::UaddSat, t8, &[t8, t8], &[a, b]);
        assert_eq!(u(255, 1), 255);
        assert_eq!(u(200, 55), 255);
        assert_eq!(u(200, 54), 254);
        let t32 = Type::I32;
        assert_eq!(
            eval_alu(
                AluOp::IaddSat,
                t32,
                &[t32, t32],
                &[0x7fff_ffff, 0x7fff_ffff]
            ),
            0x7fff_ffff
        );
        assert_eq!(
            eval_alu(
                AluOp::IaddSat,
                t32,
                &[t32, t32],
                &[0x8000_0000, 0xffff_ffff]
            ),
            0x8000_0000
        );
        let t64 = Type::int(64);
        assert_eq!(
            eval_alu(AluOp::IaddSat, t64, &[t64, t64], &[i64::MAX as u64, 1]),
            i64::MAX as u64
        );
        assert_eq!(
            eval_alu(
                AluOp::IaddSat,
                t64,
                &[t64, t64],
                &[i64::MIN as u64, u64::MAX]
            ),
            i64::MIN as u64
        );
        assert_eq!(
            eval_alu(AluOp::UaddSat, t64, &[t64, t64], &[u64::MAX, 1]),
            u64::MAX
        );
        assert_eq!(eval_alu(AluOp::UaddSat, t64, &[t64, t64], &[5, 7]), 12);
    }
}
