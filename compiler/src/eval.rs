//! Per-component semantics of ALU ops, shared by constant folding and the reference
//! interpreter. Values are raw bits in a `u64`, masked to the type's size; booleans are 0 or
//! all ones of their size (1 for `b1`).

use crate::ir::{sign_extend, AluOp, Kind, Type};
use half::f16;

fn to_f64(t: Type, b: u64) -> f64 {
    match t.bits {
        16 => f16::from_bits(b as u16).to_f64(),
        32 => f64::from(f32::from_bits(b as u32)),
        _ => f64::from_bits(b),
    }
}

fn from_f64(t: Type, v: f64) -> u64 {
    match t.bits {
        16 => u64::from(f16::from_f64(v).to_bits()),
        32 => u64::from((v as f32).to_bits()),
        _ => v.to_bits(),
    }
}

/// A float op computed in the type's own precision (f16 through f32, then rounded).
fn fop1(t: Type, a: u64, f32op: fn(f32) -> f32, f64op: fn(f64) -> f64) -> u64 {
    match t.bits {
        64 => f64op(f64::from_bits(a)).to_bits(),
        32 => u64::from(f32op(f32::from_bits(a as u32)).to_bits()),
        _ => from_f64(t, f64::from(f32op(to_f64(t, a) as f32))),
    }
}

fn fop2(t: Type, a: u64, b: u64, f32op: fn(f32, f32) -> f32, f64op: fn(f64, f64) -> f64) -> u64 {
    match t.bits {
        64 => f64op(f64::from_bits(a), f64::from_bits(b)).to_bits(),
        32 => u64::from(f32op(f32::from_bits(a as u32), f32::from_bits(b as u32)).to_bits()),
        _ => from_f64(
            t,
            f64::from(f32op(to_f64(t, a) as f32, to_f64(t, b) as f32)),
        ),
    }
}

fn boolv(t: Type, v: bool) -> u64 {
    if v {
        t.mask()
    } else {
        0
    }
}

fn fmod32(x: f32, y: f32) -> f32 {
    x - y * (x / y).floor()
}
/// As the 64-bit lowering (`lower_int_div`): a result equal to y is 0 (docs/seed-lessons.md).
fn fmod64(x: f64, y: f64) -> f64 {
    let r = x - y * (x / y).floor();
    if r == y {
        0.0
    } else {
        r
    }
}
fn frem32(x: f32, y: f32) -> f32 {
    x - y * (x / y).trunc()
}
fn frem64(x: f64, y: f64) -> f64 {
    x - y * (x / y).trunc()
}
/// 1 or -1 by the sign; zeros (keeping theirs) and NaN as they are.
fn fsign<T: Copy + PartialOrd + From<i8>>(x: T) -> T {
    let zero = T::from(0);
    if x > zero {
        T::from(1)
    } else if x < zero {
        T::from(-1)
    } else {
        x
    }
}
fn ffract32(x: f32) -> f32 {
    x - x.floor()
}
fn ffract64(x: f64) -> f64 {
    x - x.floor()
}

/// x = sig * 2^exp with 0.5 <= |sig| < 1; zero, infinities and NaN give (x, 0). Exact for
/// every f64, denormals included (read from the bits, not through log2 and powers of two,
/// which overflow for |x| >= 2^1023 and underflow for denormals).
/// x * 2^n with one rounding: x's significand m in [0.5, 1) is first scaled exactly by
/// 2^k1 (|k1| <= 100), then one multiplication by 2^k2 (|k2| <= 1000) rounds, so denormal
/// results are not rounded twice. Zero, inf and NaN come back as they are.
pub fn ldexp(x: f64, n: i64) -> f64 {
    let (m, e) = frexp(x);
    let ne = (e + n.clamp(-2200, 2200)).clamp(-1100, 1100);
    let k2 = ne.clamp(-1000, 1000);
    m * 2f64.powi((ne - k2) as i32) * 2f64.powi(k2 as i32)
}

fn frexp(x: f64) -> (f64, i64) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    // Denormals: scale by 2^54 (exact) so the exponent field is meaningful.
    let (x, adj) = if x.abs() < f64::MIN_POSITIVE {
        (x * 2f64.powi(54), -54)
    } else {
        (x, 0)
    };
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7ff) as i64 - 1022;
    (f64::from_bits((b & !(0x7ff << 52)) | (1022 << 52)), e + adj)
}

/// Converts a float to an integer the way Gen's conversions do: saturating, NaN to 0.
fn f2int(v: f64, bits: u8, signed: bool) -> u64 {
    let t = Type::int(bits);
    if v.is_nan() {
        return 0;
    }
    let v = v.trunc();
    if signed {
        let max = (t.mask() >> 1) as i64 as f64;
        let min = -max - 1.0;
        (v.clamp(min, max) as i64) as u64 & t.mask()
    } else {
        v.clamp(0.0, t.mask() as f64) as u64 & t.mask()
    }
}

/// Evaluates one component. `srcs[i]` has type `src_tys[i]`; the result has type `dt`.
pub fn eval_alu(op: AluOp, dt: Type, src_tys: &[Type], s: &[u64]) -> u64 {
    use AluOp::*;
    let t0 = src_tys.first().copied().unwrap_or(dt);
    let m = dt.mask();
    let bits = u32::from(dt.bits);
    let sx = |i: usize| sign_extend(s[i], src_tys[i].bits);
    let r: u64 = match op {
        Mov => s[0],
        Iadd => s[0].wrapping_add(s[1]),
        Isub => s[0].wrapping_sub(s[1]),
        Imul => s[0].wrapping_mul(s[1]),
        ImulHigh => ((i128::from(sx(0)) * i128::from(sx(1))) >> bits) as u64,
        UmulHigh => ((u128::from(s[0]) * u128::from(s[1])) >> bits) as u64,
        Udiv => s[0].checked_div(s[1]).unwrap_or(m),
        Umod => s[0].checked_rem(s[1]).unwrap_or(s[0]),
        Idiv => {
            if s[1] == 0 {
                m
            } else {
                sx(0).wrapping_div(sx(1)) as u64
            }
        }
        Irem => {
            if s[1] == 0 {
                s[0]
            } else {
                sx(0).wrapping_rem(sx(1)) as u64
            }
        }
        Imod => {
            if s[1] == 0 {
                s[0]
            } else {
                let r = sx(0).wrapping_rem(sx(1));
                if r != 0 && ((r < 0) != (sx(1) < 0)) {
                    r.wrapping_add(sx(1)) as u64
                } else {
                    r as u64
                }
            }
        }
        IaddSat => {
            let max = (m >> 1) as i64;
            (sx(0).saturating_add(sx(1)).clamp(-max - 1, max)) as u64
        }
        UaddSat => s[0].checked_add(s[1]).map_or(m, |v| v.min(m)),
        Ineg => s[0].wrapping_neg(),
        Iabs => sx(0).unsigned_abs(),
        Isign => sx(0).signum() as u64,
        Imin => sx(0).min(sx(1)) as u64,
        Imax => sx(0).max(sx(1)) as u64,
        Umin => s[0].min(s[1]),
        Umax => s[0].max(s[1]),
        Iand => s[0] & s[1],
        Ior => s[0] | s[1],
        Ixor => s[0] ^ s[1],
        Inot => !s[0],
        // Shift counts use the low bits only, as SPIR-V leaves larger counts undefined and
        // Gen masks them.
        Ishl => s[0] << (s[1] as u32 % bits),
        Ishr => (sx(0) >> (s[1] as u32 % bits)) as u64,
        Ushr => s[0] >> (s[1] as u32 % bits),
        BitfieldInsert => {
            let (off, cnt) = (s[2] as u32, s[3] as u32);
            if cnt == 0 || off >= bits {
                s[0]
            } else {
                let cnt = cnt.min(bits - off);
                let fm = Type::int(cnt as u8).mask() << off;
                (s[0] & !fm) | ((s[1] << off) & fm)
            }
        }
        UbitfieldExtract | IbitfieldExtract => {
            let (off, cnt) = (s[1] as u32, s[2] as u32);
            if cnt == 0 || off >= bits {
                0
            } else {
                let cnt = cnt.min(bits - off);
                let v = (s[0] >> off) & Type::int(cnt as u8).mask();
                if op == IbitfieldExtract {
                    sign_extend(v, cnt as u8) as u64
                } else {
                    v
                }
            }
        }
        BitfieldReverse => s[0].reverse_bits() >> (64 - bits),
        BitCount => u64::from(s[0].count_ones()),
        FindLsb => {
            if s[0] == 0 {
                m
            } else {
                u64::from(s[0].trailing_zeros())
            }
        }
        UfindMsb => {
            if s[0] == 0 {
                m
            } else {
                u64::from(63 - s[0].leading_zeros())
            }
        }
        IfindMsb => {
            let v = if sx(0) < 0 { !s[0] & m } else { s[0] };
            if v == 0 {
                m
            } else {
                u64::from(63 - v.leading_zeros())
            }
        }
        Fadd => fop2(dt, s[0], s[1], |a, b| a + b, |a, b| a + b),
        Fsub => fop2(dt, s[0], s[1], |a, b| a - b, |a, b| a - b),
        Fmul => fop2(dt, s[0], s[1], |a, b| a * b, |a, b| a * b),
        Fdiv => fop2(dt, s[0], s[1], |a, b| a / b, |a, b| a / b),
        Fmod => fop2(dt, s[0], s[1], fmod32, fmod64),
        Frem => fop2(dt, s[0], s[1], frem32, frem64),
        Fpow => fop2(dt, s[0], s[1], f32::powf, f64::powf),
        Fmin => fop2(dt, s[0], s[1], f32::min, f64::min),
        Fmax => fop2(dt, s[0], s[1], f32::max, f64::max),
        Fneg => s[0] ^ (1u64 << (bits - 1)),
        Fabs => s[0] & !(1u64 << (bits - 1)),
        Fsign => fop1(dt, s[0], fsign::<f32>, fsign::<f64>),
        Ffma => match dt.bits {
            64 => f64::from_bits(s[0])
                .mul_add(f64::from_bits(s[1]), f64::from_bits(s[2]))
                .to_bits(),
            32 => u64::from(
                f32::from_bits(s[0] as u32)
                    .mul_add(f32::from_bits(s[1] as u32), f32::from_bits(s[2] as u32))
                    .to_bits(),
            ),
            _ => from_f64(
                dt,
                to_f64(dt, s[0]).mul_add(to_f64(dt, s[1]), to_f64(dt, s[2])),
            ),
        },
        Ffloor => fop1(dt, s[0], f32::floor, f64::floor),
        Fceil => fop1(dt, s[0], f32::ceil, f64::ceil),
        Ftrunc => fop1(dt, s[0], f32::trunc, f64::trunc),
        FroundEven => fop1(dt, s[0], f32::round_ties_even, f64::round_ties_even),
        Ffract => fop1(dt, s[0], ffract32, ffract64),
        Fsqrt => fop1(dt, s[0], f32::sqrt, f64::sqrt),
        Frsq => fop1(dt, s[0], |x| 1.0 / x.sqrt(), |x| 1.0 / x.sqrt()),
        Frcp => fop1(dt, s[0], |x| 1.0 / x, |x| 1.0 / x),
        Fexp2 => fop1(dt, s[0], f32::exp2, f64::exp2),
        Flog2 => fop1(dt, s[0], f32::log2, f64::log2),
        Fsin => fop1(dt, s[0], f32::sin, f64::sin),
        Fcos => fop1(dt, s[0], f32::cos, f64::cos),
        Ldexp => from_f64(dt, ldexp(to_f64(dt, s[0]), sx(1))),
        FrexpSig | FrexpExp => {
            let (sig, exp) = frexp(to_f64(t0, s[0]));
            if op == FrexpSig {
                from_f64(dt, sig)
            } else {
                exp as u64
            }
        }
        I2f => from_f64(dt, sx(0) as f64),
        U2f => match dt.bits {
            32 => u64::from((s[0] as f32).to_bits()),
            _ => from_f64(dt, s[0] as f64),
        },
        F2i => f2int(to_f64(t0, s[0]), dt.bits, true),
        F2u => f2int(to_f64(t0, s[0]), dt.bits, false),
        I2i => sx(0) as u64,
        U2u => s[0],
        F2f => from_f64(dt, to_f64(t0, s[0])),
        B2i => u64::from(s[0] != 0),
        B2f => from_f64(dt, if s[0] != 0 { 1.0 } else { 0.0 }),
        I2b | B2b => boolv(dt, s[0] != 0),
        Bitcast => s[0],
        Ieq => boolv(dt, s[0] == s[1]),
        Ine => boolv(dt, s[0] != s[1]),
        Ilt => boolv(dt, sx(0) < sx(1)),
        Ige => boolv(dt, sx(0) >= sx(1)),
        Ult => boolv(dt, s[0] < s[1]),
        Uge => boolv(dt, s[0] >= s[1]),
        Feq | Fne | Flt | Fle | Fgt | Fge | Fequ | Fneu | Fltu | Fleu | Fgtu | Fgeu => {
            let (a, b) = (to_f64(t0, s[0]), to_f64(t0, s[1]));
            let unordered = a.is_nan() || b.is_nan();
            let v = match op {
                Feq => a == b,
                Fne => !unordered && a != b,
                Flt => a < b,
                Fle => a <= b,
                Fgt => a > b,
                Fge => a >= b,
                Fequ => unordered || a == b,
                Fneu => a != b,
                Fltu => unordered || a < b,
                Fleu => unordered || a <= b,
                Fgtu => unordered || a > b,
                _ => unordered || a >= b,
            };
            boolv(dt, v)
        }
        IsNan => boolv(dt, to_f64(t0, s[0]).is_nan()),
        IsInf => boolv(dt, to_f64(t0, s[0]).is_infinite()),
        Bcsel => {
            if s[0] != 0 {
                s[1]
            } else {
                s[2]
            }
        }
    };
    let _ = Kind::Int;
    r & m
}

/// Evaluates an op over whole vectors (`srcs[i]` holds `comps` of `src_tys[i]`, or one for a
/// scalar operand such as a `bcsel` condition).
pub fn eval_alu_vec(op: AluOp, dt: Type, src_tys: &[Type], srcs: &[&[u64]]) -> Vec<u64> {
    let scalar_tys: Vec<Type> = src_tys.iter().map(|t| t.scalar_type()).collect();
    (0..usize::from(dt.comps))
        .map(|c| {
            let s: Vec<u64> = srcs
                .iter()
                .map(|v| if v.len() == 1 { v[0] } else { v[c] })
                .collect();
            eval_alu(op, dt.scalar_type(), &scalar_tys, &s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    #[test]
    fn integer_ops_respect_bit_size() {
        let t8 = Type::int(8);
        assert_eq!(eval_alu(AluOp::Iadd, t8, &[t8, t8], &[200, 100]), 44);
        assert_eq!(
            eval_alu(AluOp::Ishr, t8, &[t8, Type::I32], &[0x80, 7]),
            0xff
        );
        let t = Type::I32;
        assert_eq!(
            eval_alu(AluOp::Idiv, t, &[t, t], &[(-7i32) as u32 as u64, 2]),
            (-3i32) as u32 as u64
        );
        assert_eq!(
            eval_alu(AluOp::Imod, t, &[t, t], &[(-7i32) as u32 as u64, 2]),
            1
        );
        assert_eq!(
            eval_alu(AluOp::Irem, t, &[t, t], &[(-7i32) as u32 as u64, 2]),
            0xffff_ffff
        );
        assert_eq!(eval_alu(AluOp::IfindMsb, t, &[t], &[0xffff_fff0]), 3);
        assert_eq!(eval_alu(AluOp::UfindMsb, t, &[t], &[0]), 0xffff_ffff);
        assert_eq!(eval_alu(AluOp::BitfieldReverse, t, &[t], &[1]), 0x8000_0000);
        assert_eq!(
            eval_alu(AluOp::IbitfieldExtract, t, &[t, t, t], &[0xf0, 4, 4]),
            0xffff_ffff
        );
        assert_eq!(
            eval_alu(AluOp::BitfieldInsert, t, &[t, t, t, t], &[0, 0xff, 8, 4]),
            0xf00
        );
    }

    #[test]
    fn frexp_is_exact_for_denormals_and_huge_values() {
        let d = Type::float(64);
        let e = |x: f64| {
            (
                f64::from_bits(eval_alu(AluOp::FrexpSig, d, &[d], &[x.to_bits()])),
                eval_alu(AluOp::FrexpExp, Type::I32, &[d], &[x.to_bits()]) as u32 as i32,
            )
        };
        assert_eq!(e(5e-324), (0.5, -1073));
        assert_eq!(e(-f64::MAX), (-(1.0 - f64::EPSILON / 2.0), 1024));
        assert_eq!(e(3.0 * f64::MIN_POSITIVE / 4.0), (0.75, -1022));
        assert_eq!(e(f64::NEG_INFINITY), (f64::NEG_INFINITY, 0));
    }

    #[test]
    fn ldexp_rounds_once_into_the_denormals() {
        let l = |x: f64, n: i64| ldexp(x, n).to_bits();
        // x * 2^-2 * 2^-2 would round twice (to 0x291be2870e878).
        assert_eq!(
            l(f64::from_bits(0x0024_8df1_4387_43bb), -4),
            0x0002_91be_2870_e877
        );
        assert_eq!(l(5e-324, 1074 + 52), 0x4330_0000_0000_0000);
        assert_eq!(l(1.5, -1074), 2 * 5e-324f64.to_bits());
        assert_eq!(l(1.0, -1075), 0);
        assert_eq!(l(-f64::MAX, -2098), (-5e-324f64).to_bits());
        assert_eq!(l(f64::MIN_POSITIVE, 2045), 0x7fe0_0000_0000_0000);
        assert_eq!(l(f64::MIN_POSITIVE, 2046), f64::INFINITY.to_bits());
        assert_eq!(l(-0.0, 5000), (-0.0f64).to_bits());
        assert_eq!(l(3.0, i64::from(i32::MIN)), 0);
    }

    #[test]
    fn float_ops_and_conversions() {
        let t = Type::F32;
        assert_eq!(
            eval_alu(AluOp::Fmod, t, &[t, t], &[f(-1.0), f(3.0)]),
            f(2.0)
        );
        assert_eq!(
            eval_alu(AluOp::F2i, Type::I32, &[t], &[f(-3.7)]),
            (-3i32) as u32 as u64
        );
        assert_eq!(eval_alu(AluOp::F2u, Type::I32, &[t], &[f(-3.7)]), 0);
        assert_eq!(eval_alu(AluOp::FroundEven, t, &[t], &[f(2.5)]), f(2.0));
        assert_eq!(
            eval_alu(AluOp::Flt, Type::B1, &[t, t], &[f(1.0), f(2.0)]),
            1
        );
        assert_eq!(
            eval_alu(AluOp::Flt, Type::bool(32), &[t, t], &[f(1.0), f(2.0)]),
            0xffff_ffff
        );
        assert_eq!(
            eval_alu(AluOp::Fneu, Type::B1, &[t, t], &[f(f32::NAN), f(2.0)]),
            1
        );
        assert_eq!(
            eval_alu(AluOp::Fne, Type::B1, &[t, t], &[f(f32::NAN), f(2.0)]),
            0
        );
        let h = Type::float(16);
        assert_eq!(eval_alu(AluOp::F2f, h, &[t], &[f(1.5)]), 0x3e00);
        assert_eq!(eval_alu(AluOp::FrexpSig, t, &[t], &[f(8.0)]), f(0.5));
        assert_eq!(eval_alu(AluOp::FrexpExp, Type::I32, &[t], &[f(8.0)]), 4);
        assert_eq!(
            eval_alu(AluOp::Ldexp, t, &[t, Type::I32], &[f(0.75), 3]),
            f(6.0)
        );
    }
}
