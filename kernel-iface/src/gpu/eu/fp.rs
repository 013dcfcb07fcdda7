//! Floating-point helpers of the EU: cr0 rounding and denormal modes, half-float
//! conversion with a rounding mode, directed rounding of f64 results to f32.
//!
//! cr0.0 (docs/gen9.md 2.10): bits 5:4 rounding mode (0 RTNE, 1 RU, 2 RD, 3 RTZ), bit 6 fp64
//! denormal preserve, bit 7 fp32 denormal preserve, bit 10 fp16 denormal preserve. A clear
//! preserve bit means denormal inputs and results are flushed to a zero of the same sign.

/// Rounding mode of float results (cr0 bits 5:4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rnd {
    /// Round to nearest, ties to even.
    Rtne,
    /// Round toward +infinity.
    Ru,
    /// Round toward -infinity.
    Rd,
    /// Round toward zero.
    Rtz,
}

/// The float environment taken from cr0 at the start of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FpEnv {
    pub rnd: Rnd,
    pub df_denorm: bool,
    pub f_denorm: bool,
    pub hf_denorm: bool,
}

impl FpEnv {
    pub fn from_cr0(cr0: u32) -> FpEnv {
        FpEnv {
            rnd: match (cr0 >> 4) & 3 {
                0 => Rnd::Rtne,
                1 => Rnd::Ru,
                2 => Rnd::Rd,
                _ => Rnd::Rtz,
            },
            df_denorm: cr0 & (1 << 6) != 0,
            f_denorm: cr0 & (1 << 7) != 0,
            hf_denorm: cr0 & (1 << 10) != 0,
        }
    }
}

/// `flush_fN(x, preserve)`: a denormal `x` becomes a zero of its sign unless `preserve`.
macro_rules! flush {
    ($($name:ident: $t:ty),*) => {$(
        #[inline]
        pub fn $name(x: $t, preserve: bool) -> $t {
            if !preserve && x.is_subnormal() {
                (0.0 as $t).copysign(x)
            } else {
                x
            }
        }
    )*};
}
flush!(flush_f32: f32, flush_f64: f64);

/// Next representable f32 toward +inf (`up`) or -inf.
fn step_f32(x: f32, up: bool) -> f32 {
    if x.is_nan() || (x.is_infinite() && (x > 0.0) == up) {
        return x;
    }
    if x == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = x.to_bits();
    let away = (x > 0.0) == up;
    f32::from_bits(if away { b + 1 } else { b - 1 })
}

/// Rounds an f64 to f32 with `rnd`. Exact for every f64 input.
#[inline]
pub fn f64_to_f32(x: f64, rnd: Rnd) -> f32 {
    let r = x as f32;
    if rnd == Rnd::Rtne || x.is_nan() || r as f64 == x {
        return r;
    }
    directed_f32(r, r as f64 > x, x < 0.0, rnd)
}

/// `r`, the f32 nearest to an inexact value, corrected for a directed rounding mode: `above`
/// says whether `r` lies above the exact value, `neg` whether that value is negative (`r`
/// has its sign, so it lies away from zero when `above != neg`).
#[inline]
fn directed_f32(r: f32, above: bool, neg: bool, rnd: Rnd) -> f32 {
    match rnd {
        Rnd::Rtne => r,
        Rnd::Ru if !above => step_f32(r, true),
        Rnd::Rd if above => step_f32(r, false),
        Rnd::Rtz if above != neg => step_f32(r, neg),
        Rnd::Ru | Rnd::Rd | Rnd::Rtz => r,
    }
}

/// Half-float bits to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let e = ((h >> 10) & 0x1F) as i32;
    let m = (h & 0x3FF) as u32;
    match e {
        0 => sign * (m as f32) * f32::from_bits(0x3380_0000), // 2^-24
        31 => {
            if m == 0 {
                sign * f32::INFINITY
            } else {
                // Keep the payload, quiet bit included, in the top mantissa bits.
                f32::from_bits(((h as u32 & 0x8000) << 16) | 0x7F80_0000 | (m << 13))
            }
        }
        _ => f32::from_bits(((h as u32 & 0x8000) << 16) | (((e + 112) as u32) << 23) | (m << 13)),
    }
}

/// f32 to half-float bits with a rounding mode; `preserve` keeps half denormal results.
/// Integer arithmetic on the f32 fields (it is the simulator's hottest conversion in fp16
/// workloads); `f32_to_f16_reference` in the tests is the floating-point formulation it must
/// match bit for bit.
pub fn f32_to_f16(x: f32, rnd: Rnd, preserve: bool) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let abs = b & 0x7FFF_FFFF;
    if abs > 0x7F80_0000 {
        return sign | 0x7E00 | ((b >> 13) & 0x1FF) as u16;
    }
    if abs == 0x7F80_0000 {
        return sign | 0x7C00;
    }
    if abs == 0 {
        return sign;
    }
    let neg = sign != 0;
    // The value is sig * 2^e2 with sig an integer below 2^24.
    let (sig, e2) = if abs >> 23 == 0 {
        (abs, -149)
    } else {
        ((abs & 0x7F_FFFF) | 0x80_0000, (abs >> 23) as i32 - 150)
    };
    // Its binary exponent, and the quantum of a half with that exponent (the denormal
    // quantum 2^-24 below 2^-14).
    let e = e2 + 31 - sig.leading_zeros() as i32;
    let qe = e.max(-14) - 10;
    let shift = qe - e2;
    let n: u64 = if shift <= 0 {
        u64::from(sig) << (-shift)
    } else {
        let (fl, rem, half) = if shift > 25 {
            // sig < 2^24 <= half: everything is below one half of a quantum.
            (0u64, u64::from(sig), 1u64 << 25)
        } else {
            let fl = u64::from(sig >> shift);
            let rem = u64::from(sig) & ((1u64 << shift) - 1);
            (fl, rem, 1u64 << (shift - 1))
        };
        let up = match (rnd, neg) {
            (Rnd::Rtne, _) => rem > half || (rem == half && fl & 1 == 1),
            (Rnd::Rtz, _) | (Rnd::Ru, true) | (Rnd::Rd, false) => false,
            (Rnd::Ru, false) | (Rnd::Rd, true) => rem != 0,
        };
        fl + u64::from(up)
    };
    // Overflow: the rounded magnitude n * 2^qe above the largest half, 65504.
    let over = e > 15 || (qe >= 0 && n << qe > 65504);
    if over {
        let trunc = matches!(
            (rnd, neg),
            (Rnd::Rtz, _) | (Rnd::Ru, true) | (Rnd::Rd, false)
        );
        return sign | if trunc { 0x7BFF } else { 0x7C00 };
    }
    if e < -14 {
        // n quanta of 2^-24: a denormal, or exactly the smallest normal when n == 1024 (whose
        // encoding is also 1024).
        if n < 1024 && !preserve {
            return sign;
        }
        return sign | n as u16;
    }
    // n in [1024, 2048]: 2048 carries into the exponent.
    sign | ((((e + 15) as u32) << 10) + (n as u32 - 1024)) as u16
}

/// Rounds an f64 holding an integer-valued or arbitrary value to f64 — identity, present so
/// integer-to-DF conversion can name its rounding (exact below 2^53).
#[inline]
pub fn i128_to_f64(v: i128, rnd: Rnd) -> f64 {
    let r = v as f64;
    if rnd == Rnd::Rtne || r.is_infinite() {
        return r;
    }
    let back = r as i128;
    if back == v {
        return r;
    }
    let up = |x: f64| {
        f64::from_bits(if x >= 0.0 {
            x.to_bits() + 1
        } else {
            x.to_bits() - 1
        })
    };
    let down = |x: f64| {
        f64::from_bits(if x > 0.0 {
            x.to_bits() - 1
        } else {
            x.to_bits() + 1
        })
    };
    match rnd {
        Rnd::Rtne => r,
        Rnd::Ru => {
            if back < v {
                up(r)
            } else {
                r
            }
        }
        Rnd::Rd => {
            if back > v {
                down(r)
            } else {
                r
            }
        }
        Rnd::Rtz => {
            if back.abs() > v.abs() {
                if r > 0.0 {
                    down(r)
                } else {
                    up(r)
                }
            } else {
                r
            }
        }
    }
}

/// Integer to f32 with a rounding mode (exact for every 64-bit value).
#[inline]
pub fn i128_to_f32(v: i128, rnd: Rnd) -> f32 {
    if rnd == Rnd::Rtne {
        return v as f32;
    }
    let r = v as f32;
    let back = r as i128;
    if back == v || r.is_infinite() {
        return r;
    }
    directed_f32(r, back > v, v < 0, rnd)
}

/// The exponent `e` of a positive finite `a`: 2^e <= a < 2^(e+1) (for the reference below).
#[cfg(test)]
fn floor_log2(a: f64) -> i32 {
    let e = a.log2().floor() as i32;
    // Guard against log2 rounding at exact powers of two.
    if 2f64.powi(e) > a {
        e - 1
    } else if 2f64.powi(e + 1) <= a {
        e + 1
    } else {
        e
    }
}

/// The first, floating-point formulation of [`f32_to_f16`], kept as its reference.
#[cfg(test)]
fn f32_to_f16_reference(x: f32, rnd: Rnd, preserve: bool) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if x.is_nan() {
        return sign | 0x7E00 | ((b >> 13) & 0x1FF) as u16;
    }
    let a = x.abs() as f64;
    if a.is_infinite() {
        return sign | 0x7C00;
    }
    if a == 0.0 {
        return sign;
    }
    let neg = sign != 0;
    // Magnitude rounding direction.
    #[derive(PartialEq)]
    enum M {
        Near,
        Trunc,
        Ceil,
    }
    let mm = match (rnd, neg) {
        (Rnd::Rtne, _) => M::Near,
        (Rnd::Rtz, _) => M::Trunc,
        (Rnd::Ru, false) | (Rnd::Rd, true) => M::Ceil,
        (Rnd::Ru, true) | (Rnd::Rd, false) => M::Trunc,
    };
    let exp = floor_log2(a);
    let q = if exp < -14 {
        2f64.powi(-24)
    } else {
        2f64.powi(exp - 10)
    };
    let m = a / q; // exact: a has 24 significant bits, q a power of two
    let fl = m.floor();
    let frac = m - fl;
    let mut n = match mm {
        M::Trunc => fl,
        M::Ceil => {
            if frac > 0.0 {
                fl + 1.0
            } else {
                fl
            }
        }
        M::Near => {
            if frac > 0.5 || (frac == 0.5 && fl % 2.0 != 0.0) {
                fl + 1.0
            } else {
                fl
            }
        }
    };
    let mut r = n * q;
    if r > 65504.0 {
        if mm == M::Trunc {
            r = 65504.0;
            n = 2047.0;
            let _ = n;
        } else {
            return sign | 0x7C00;
        }
    }
    let bits = if r < 2f64.powi(-14) {
        let d = (r / 2f64.powi(-24)) as u16;
        if !preserve {
            0
        } else {
            d
        }
    } else {
        let e = floor_log2(r);
        let mant = ((r / 2f64.powi(e) - 1.0) * 1024.0) as u16;
        (((e + 15) as u16) << 10) | (mant & 0x3FF)
    };
    sign | bits
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The integer conversion equals the floating-point one for every high half of an f32
    /// (all exponents, signs and leading mantissa bits) with low halves that sit on, just
    /// below and just above each rounding boundary, in every mode, with and without
    /// denormal preservation.
    #[test]
    fn f32_to_f16_matches_reference() {
        let lows = [
            0u32, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x2001, 0x7FFF, 0x8000, 0xA5A5, 0xFFFF,
        ];
        for hi in 0..=0xFFFFu32 {
            for &lo in &lows {
                let f = f32::from_bits((hi << 16) | lo);
                for rnd in [Rnd::Rtne, Rnd::Ru, Rnd::Rd, Rnd::Rtz] {
                    for preserve in [false, true] {
                        assert_eq!(
                            f32_to_f16(f, rnd, preserve),
                            f32_to_f16_reference(f, rnd, preserve),
                            "{:#010x} {rnd:?} preserve={preserve}",
                            f.to_bits()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn half_round_trip_and_modes() {
        for h in 0..=0xFFFFu16 {
            let f = f16_to_f32(h);
            if f.is_nan() {
                continue;
            }
            assert_eq!(f32_to_f16(f, Rnd::Rtne, true), h, "{h:#x} {f}");
        }
        // 1 + 2^-11 is a tie between 1.0 and 1 + 2^-10.
        let t = 1.0 + 2f32.powi(-11);
        assert_eq!(f32_to_f16(t, Rnd::Rtne, true), 0x3C00);
        assert_eq!(f32_to_f16(t, Rnd::Ru, true), 0x3C01);
        assert_eq!(f32_to_f16(-t, Rnd::Rd, true), 0xBC01);
        assert_eq!(f32_to_f16(-t, Rnd::Rtz, true), 0xBC00);
        assert_eq!(f32_to_f16(1e6, Rnd::Rtz, true), 0x7BFF);
        assert_eq!(f32_to_f16(1e6, Rnd::Rtne, true), 0x7C00);
        assert_eq!(f32_to_f16(1e-6, Rnd::Rtne, false), 0);
    }

    #[test]
    fn directed_f64_to_f32() {
        let x = 1.0f64 + 2f64.powi(-30);
        assert_eq!(f64_to_f32(x, Rnd::Rtne), 1.0);
        assert_eq!(f64_to_f32(x, Rnd::Ru), 1.0 + f32::EPSILON);
        assert_eq!(f64_to_f32(-x, Rnd::Rd), -1.0 - f32::EPSILON);
        assert_eq!(f64_to_f32(-x, Rnd::Rtz), -1.0);
    }
}

/// Sign, integer significand and exponent of a finite f64: x = +-m * 2^e.
fn split_f64(x: f64) -> (bool, u128, i32) {
    let b = x.to_bits();
    let e = ((b >> 52) & 0x7FF) as i32;
    let f = u128::from(b & 0x000F_FFFF_FFFF_FFFF);
    if e == 0 {
        (b >> 63 == 1, f, -1074)
    } else {
        (b >> 63 == 1, f | 1 << 52, e - 1075)
    }
}

/// Words of the fixed-point accumulators of [`exact_cmp`]: unit 2^-2300, and a product of
/// two finite doubles (106 bits at up to 2^1942) fits below 2^4480.
const EXACT_WORDS: usize = 70;
const EXACT_BIAS: i32 = 2300;

fn add_word(acc: &mut [u64; EXACT_WORDS], mut i: usize, v: u64) {
    let (s, mut carry) = acc[i].overflowing_add(v);
    acc[i] = s;
    while carry && i + 1 < EXACT_WORDS {
        i += 1;
        let (s, c) = acc[i].overflowing_add(1);
        acc[i] = s;
        carry = c;
    }
}

/// How the exact sum of the terms (+-m * 2^e) compares with zero, computed in wide fixed
/// point (every product, sum or fused multiply-add of finite doubles is exact there).
fn exact_cmp(terms: &[(bool, u128, i32)]) -> std::cmp::Ordering {
    let mut pos = [0u64; EXACT_WORDS];
    let mut neg = [0u64; EXACT_WORDS];
    for &(n, m, e) in terms {
        if m == 0 {
            continue;
        }
        let sh = (e + EXACT_BIAS) as usize;
        let (w, b) = (sh / 64, (sh % 64) as u32);
        let acc = if n { &mut neg } else { &mut pos };
        for (k, part) in [(0, m as u64), (1, (m >> 64) as u64)] {
            if part == 0 {
                continue;
            }
            add_word(acc, w + k, part << b);
            if b > 0 {
                add_word(acc, w + k + 1, part >> (64 - b));
            }
        }
    }
    pos.iter().rev().cmp(neg.iter().rev())
}

/// Rounds an f64 operation in `rnd` from its round-to-nearest-even result `r` and the
/// exact result's terms (the operands' values and products). Non-finite operands or
/// results of infinite operands are returned as `r`; an overflow to infinity under a
/// directed mode becomes the largest finite value where the mode says so.
fn directed_f64(r: f64, finite_inputs: bool, terms: &[(bool, u128, i32)], rnd: Rnd) -> f64 {
    use std::cmp::Ordering::*;
    if rnd == Rnd::Rtne || !finite_inputs || r.is_nan() {
        return r;
    }
    // How the exact value compares with r.
    let dir = if r.is_infinite() {
        if r > 0.0 {
            Less
        } else {
            Greater
        }
    } else {
        let (n, m, e) = split_f64(r);
        let mut t = terms.to_vec();
        t.push((!n, m, e));
        exact_cmp(&t)
    };
    match (rnd, dir) {
        (Rnd::Ru, Greater) => r.next_up(),
        (Rnd::Rd, Less) => r.next_down(),
        (Rnd::Rtz, Less) if r > 0.0 => r.next_down(),
        (Rnd::Rtz, Greater) if r < 0.0 => r.next_up(),
        _ => r,
    }
}

/// a + b in `rnd`.
pub fn add_f64(a: f64, b: f64, rnd: Rnd) -> f64 {
    let r = a + b;
    if rnd == Rnd::Rtne {
        return r;
    }
    let ok = a.is_finite() && b.is_finite();
    directed_f64(r, ok, &[split_f64(a), split_f64(b)], rnd)
}

fn product_term(a: f64, b: f64) -> (bool, u128, i32) {
    let (na, ma, ea) = split_f64(a);
    let (nb, mb, eb) = split_f64(b);
    (na != nb, ma * mb, ea + eb)
}

/// a * b in `rnd`.
pub fn mul_f64(a: f64, b: f64, rnd: Rnd) -> f64 {
    let r = a * b;
    if rnd == Rnd::Rtne {
        return r;
    }
    let ok = a.is_finite() && b.is_finite();
    directed_f64(r, ok, &[product_term(a, b)], rnd)
}

/// a * b + c, fused, in `rnd`.
pub fn fma_f64(a: f64, b: f64, c: f64, rnd: Rnd) -> f64 {
    let r = a.mul_add(b, c);
    if rnd == Rnd::Rtne {
        return r;
    }
    let ok = a.is_finite() && b.is_finite() && c.is_finite();
    directed_f64(r, ok, &[product_term(a, b), split_f64(c)], rnd)
}

#[cfg(test)]
mod directed_tests {
    use super::*;

    #[test]
    fn directed_f64_add_mul_fma() {
        // 1 + 2^-60: RTZ/RD keep 1, RU steps up.
        let t = 2f64.powi(-60);
        assert_eq!(add_f64(1.0, t, Rnd::Rtz), 1.0);
        assert_eq!(add_f64(1.0, t, Rnd::Ru), 1.0f64.next_up());
        assert_eq!(add_f64(-1.0, -t, Rnd::Rtz), -1.0);
        assert_eq!(add_f64(-1.0, -t, Rnd::Rd), (-1.0f64).next_down());
        // -1.5 + 2^-54 (RTE gives -1.5): RTZ steps toward zero.
        assert_eq!(add_f64(-1.5, 2f64.powi(-54), Rnd::Rtz), (-1.5f64).next_up());
        // (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104.
        let x = 1.0f64.next_up();
        assert_eq!(mul_f64(x, x, Rnd::Rtz), 1.0 + 2f64.powi(-51));
        assert_eq!(mul_f64(x, x, Rnd::Ru), (1.0 + 2f64.powi(-51)).next_up());
        assert_eq!(
            fma_f64(x, x, -1.0, Rnd::Rtz),
            2f64.powi(-51) + 2f64.powi(-104)
        );
        assert_eq!(
            fma_f64(x, x, -(1.0 + 2f64.powi(-51)), Rnd::Rtz),
            2f64.powi(-104)
        );
        // Overflow: RTZ gives MAX; denormal underflow toward zero.
        assert_eq!(mul_f64(f64::MAX, 2.0, Rnd::Rtz), f64::MAX);
        assert_eq!(mul_f64(1e-200, 1e-200, Rnd::Rtz), 0.0);
        assert_eq!(mul_f64(1e-200, 1e-200, Rnd::Ru), f64::from_bits(1));
        let d = f64::from_bits(3);
        assert_eq!(mul_f64(d, 0.5, Rnd::Rtz), f64::from_bits(1));
        assert_eq!(mul_f64(d, 0.5, Rnd::Rtne), f64::from_bits(2));
        assert!(add_f64(f64::NAN, 1.0, Rnd::Rtz).is_nan());
        assert_eq!(add_f64(f64::INFINITY, 1.0, Rnd::Rtz), f64::INFINITY);
    }
}
