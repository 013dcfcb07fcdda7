//! 64-bit types on Gen9: native DF and Q/UQ instructions where the hardware has them,
//! integer sequences on the two dword halves where it has none (docs/architecture.md,
//! "Design rules").
//!
//! Layout: a 64-bit component of a value occupies `8 x W` bytes, one qword per lane
//! (a SIMD8 DF value spans 2 GRFs). Its halves are the strided dword views [`lo`] and
//! [`hi`] (`<2>:UD` at byte 0 and 4). Booleans produced by 64-bit comparisons are held as
//! 32-bit 0 / ~0 like every other boolean in the back end: the CMP writes a 64-bit
//! temporary (the hardware writes a result of the execution type's size) and its low
//! dwords are copied out with a stride-2 source.
//!
//! What the hardware lacks and is built here:
//! * 64 x 64 multiply: from 32 x 32 -> 64 (`mul UQ = UD x UD`) and two 32-bit cross
//!   products added to the high half;
//! * DF trunc (no DF rounding instructions are used): integer mask of the fraction bits
//!   computed from the exponent, selected with predicated moves (no branches); floor and
//!   ceil from trunc, fract = x - floor(x); roundEven by the exact (|x| + 2^52) - 2^52;
//! * DF division, reciprocal, sqrt and inverse sqrt (the math unit has no DF functions):
//!   the operand is reduced to a mantissa near 1, an F-precision guess from the math
//!   unit is refined by two Newton-Raphson steps in DF (DF MADs where a step has a
//!   subtraction to fuse), the exponent is put back by
//!   exact multiplications with powers of two. A divisor's special values (0, inf, NaN)
//!   are carried by its first exponent factor, an infinite dividend by a `sel` of the
//!   remainder; sqrt/rsq patch theirs with predicated moves. DF constants of two-source
//!   instructions sit in scalar registers moved once. The reciprocal of a divisor
//!   ([`Recip`]) is shared by `1 / y` and every `x / y`; a quotient takes one correction
//!   with its fused remainder; a constant divisor's reciprocal is constants. Division
//!   and reciprocal are within an ULP for normal results (Vulkan asks of doubles the
//!   precision of single precision, docs/float-controls.md), not always correctly
//!   rounded; sqrt/rsq stay within an ULP or two;
//! * fneg/fabs/fsign: integer operations on the high dword; frexp the same after a
//!   denormal operand is scaled by 2^54; ldexp as frexp's significand times two powers
//!   of two, the first product exact (one rounding, denormal results too).
//!
//! Kernels that use DF start with a cr0 write keeping DF denormals (see
//! [`super::emit::cr0_float_mode`]), so add/mul/mad/cmp/conversions are IEEE with
//! denormals. Division and sqrt/rsq scale a denormal divisor or operand by 2^54 first
//! (exactly), since their sequences read the exponent field.
//!
//! * 64-bit integers built from two dwords (pack64, packDouble2x32) and read as dwords
//!   (unpack32): dword moves into and out of the halves (`Isel`'s `dword_pairs`), and
//!   shifts by a constant 32 as dword moves (`shift_by`);
//! * 64-bit integer division and remainder: restoring long division, a uniform loop over
//!   the 64 quotient bits with predicated subtracts (signed forms on magnitudes).
//!
//! Not built (errors as [`BackendError::Unsupported`]): 64-bit bit-counting and bitfield
//! ops, 64-bit `*_mul_high`. (64-bit atomics are A64 messages, `Isel::atomic64`.)

use super::lir::*;
use super::BackendError;
use crate::ir::{self, AluOp, Kind};
use ferrite_isa::{CondMod, MathFunction, Opcode as O, Type};

type Res<T> = Result<T, BackendError>;

const SIGN: u32 = 0x8000_0000;

/// True for 64-bit integers and floats (64-bit booleans are held as 32-bit values).
pub fn is_wide(t: ir::Type) -> bool {
    t.bits == 64 && t.kind != Kind::Bool
}

fn p() -> Option<Pred> {
    Some(Pred {
        flag_sub: 0,
        inverse: false,
    })
}

/// The low dword of each lane of a 64-bit operand.
pub fn lo(o: Opnd) -> Opnd {
    half(o, false)
}

/// The high dword of each lane of a 64-bit operand.
pub fn hi(o: Opnd) -> Opnd {
    half(o, true)
}

fn half(o: Opnd, high: bool) -> Opnd {
    match o.base {
        Base::Imm(bits) => Opnd::ud(if high {
            (bits >> 32) as u32
        } else {
            bits as u32
        }),
        _ => Opnd {
            ty: Type::UD,
            stride: o.stride * 2,
            neg: false,
            abs: false,
            off: o.off + if high { 4 } else { 0 },
            ..o
        },
    }
}

fn df_imm(x: f64) -> Opnd {
    Opnd::imm(Type::DF, x.to_bits())
}

/// The biased exponent field (0..=2047) of a DF operand.
fn exponent(b: &mut Builder, x: Opnd) -> Opnd {
    let e = b.vreg(Type::D, 1);
    b.alu2(O::Shr, e.retype(Type::UD), hi(x), Opnd::ud(20));
    b.alu2(O::And, e, e, Opnd::d(0x7FF));
    e
}

/// 2^k as DF for a D operand k in [-1022, 1023].
fn pow2(b: &mut Builder, k: Opnd) -> Opnd {
    let h = b.vreg(Type::D, 1);
    b.alu2(O::Add, h, k, Opnd::d(1023));
    from_field(b, h)
}

/// The DF with high dword `f << 20` and low dword 0: 2^(f - 1023) for an exponent field f
/// in 1..=2046 (2047 gives infinity, 0 zero), with the sign of bit 11 of f. The shift
/// writes the high dword directly (no packed temporary and copy).
fn from_field(b: &mut Builder, f: Opnd) -> Opnd {
    let t = b.vreg(Type::DF, 1);
    b.mov(lo(t), Opnd::ud(0));
    b.alu2(O::Shl, hi(t), f.retype(Type::UD), Opnd::ud(20));
    t
}

/// `d = c ? a : d` with the condition already in f0.0.
fn pmov(b: &mut Builder, d: Opnd, a: Opnd) {
    b.mov(d.retype(Type::UQ), a.retype(Type::UQ)).pred = p();
}

/// A 64-bit comparison as a 32-bit boolean: CMP into a 64-bit temporary, low dwords out.
fn cmp64(b: &mut Builder, cm: CondMod, d: Opnd, x: Opnd, y: Opnd) {
    let t = b.vreg(x.ty, 1);
    b.cmp(cm, t, x, y.retype(x.ty));
    b.mov(d.retype(Type::UD), lo(t));
}

/// Sets f0.0 from `e == 0 || e == 2047` (zero/denormal or inf/NaN) for an exponent field
/// e in 0..=2047: (e + 1) & 0x7FE is 0 exactly when e + 1 is 1 or 2048.
fn flag_special(b: &mut Builder, e: Opnd) {
    let t = b.vreg(Type::D, 1);
    b.alu2(O::Add, t, e, Opnd::d(1));
    b.alu2(O::And, Opnd::null(Type::D), t, Opnd::d(0x7FE)).cmod = CondMod::Z;
}

/// Sets f0.0 where `x`'s exponent field is 0 (a zero or a denormal): one AND of the high
/// dword with the conditional modifier, no exponent extracted.
fn flag_zero_exponent(b: &mut Builder, x: Opnd) {
    b.alu2(O::And, Opnd::null(Type::UD), hi(x), Opnd::ud(0x7FF0_0000))
        .cmod = CondMod::Z;
}

/// Signed clamp of a D operand to [lo, hi] into a new register.
fn clamp_d(b: &mut Builder, v: Opnd, lo: i32, hi: i32) -> Opnd {
    let t = b.vreg(Type::D, 1);
    b.alu2(O::Sel, t, v, Opnd::d(lo)).cmod = CondMod::Ge;
    b.alu2(O::Sel, t, t, Opnd::d(hi)).cmod = CondMod::L;
    t
}

/// frexp(x): (significand in [0.5, 1) with x's sign, exponent as D). A denormal x is
/// first scaled by 2^54 (exact, DF denormals are kept) and the exponent corrected; zero,
/// inf and NaN give (x, 0).
fn frexp(b: &mut Builder, x: Opnd) -> (Opnd, Opnd) {
    let e0 = exponent(b, x);
    let xn = b.vreg(Type::DF, 1);
    b.mov(xn.retype(Type::UQ), x.retype(Type::UQ));
    let adj = b.vreg(Type::D, 1);
    b.mov(adj, Opnd::d(-1022));
    let scale = df_const(b, 2f64.powi(54));
    b.cmp(CondMod::Z, Opnd::null(Type::D), e0, Opnd::d(0));
    b.alu2(O::Mul, xn, x, scale).pred = p();
    b.mov(adj, Opnd::d(-1022 - 54)).pred = p();
    let e = exponent(b, xn);
    let sig = b.vreg(Type::DF, 1);
    b.mov(lo(sig), lo(xn));
    b.alu2(O::And, hi(sig), hi(xn), Opnd::ud(0x800F_FFFF));
    b.alu2(O::Or, hi(sig), hi(sig), Opnd::ud(0x3FE0_0000));
    let ex = b.vreg(Type::D, 1);
    b.alu2(O::Add, ex, e, adj);
    // After the scaling, a zero exponent field means zero.
    flag_special(b, e);
    pmov(b, sig, x);
    b.mov(ex, Opnd::d(0)).pred = p();
    (sig, ex)
}

/// ldexp(x, n) with one rounding (as the interpreter's `eval::ldexp` and soft64): frexp's
/// significand m is scaled exactly by 2^k1 (|k1| <= 100), then one DF multiplication by
/// 2^k2 (|k2| <= 1000) rounds, so a denormal result is not rounded twice. Zero, inf and
/// NaN pass through the products.
fn ldexp(b: &mut Builder, d: Opnd, x: Opnd, n: Opnd) {
    let n = clamp_d(b, n, -2200, 2200);
    let (m, e) = frexp(b, x);
    let ne = b.vreg(Type::D, 1);
    b.alu2(O::Add, ne, e, n);
    let ne = clamp_d(b, ne, -1100, 1100);
    let k2 = clamp_d(b, ne, -1000, 1000);
    let k1 = b.vreg(Type::D, 1);
    b.alu2(O::Add, k1, ne, k2.negate());
    let t = b.vreg(Type::DF, 1);
    let p1 = pow2(b, k1);
    b.alu2(O::Mul, t, m, p1);
    let p2 = pow2(b, k2);
    b.alu2(O::Mul, d.retype(Type::DF), t, p2);
}

/// trunc(x): clears the fraction bits below the binary point with a 64-bit mask.
fn trunc(b: &mut Builder, d: Opnd, x: Opnd) {
    let e = exponent(b, x);
    // Fraction bits to clear: 1075 - e, at least 0 (|x| >= 2^52, inf, NaN keep all);
    // |x| < 1 (e < 1023) keeps only the sign: 63.
    let c = b.vreg(Type::D, 1);
    b.alu2(O::Add, c, e.negate(), Opnd::d(1075));
    b.alu2(O::Sel, c, c, Opnd::d(0)).cmod = CondMod::Ge;
    b.cmp(CondMod::L, Opnd::null(Type::D), e, Opnd::d(1023));
    b.mov(c, Opnd::d(63)).pred = p();
    let c64 = b.vreg(Type::UQ, 1);
    b.mov(c64, c.retype(Type::UD));
    let m = b.vreg(Type::Q, 1);
    b.mov(m, Opnd::imm(Type::Q, u64::MAX));
    b.alu2(O::Shl, m, m, c64);
    b.alu2(
        O::And,
        d.retype(Type::UQ),
        x.retype(Type::UQ),
        m.retype(Type::UQ),
    );
}

/// floor (down = true) or ceil from trunc: step by one where trunc moved the wrong way.
fn floor_ceil(b: &mut Builder, d: Opnd, x: Opnd, down: bool) {
    let t = b.vreg(Type::DF, 1);
    trunc(b, t, x);
    let cm = if down { CondMod::L } else { CondMod::G };
    b.cmp(cm, Opnd::null(Type::DF), x, t);
    let one = df_const(b, if down { -1.0 } else { 1.0 });
    b.alu2(O::Add, t, t, one).pred = p();
    b.mov(d.retype(Type::UQ), t.retype(Type::UQ));
}

/// roundEven(x) by integer rounding of the magnitude bits, so the result does not depend
/// on cr0's rounding mode (the classic `(|x| + 2^52) - 2^52` rounds in that mode: under
/// RoundingModeRTZ it would truncate). With c = 1075 - e fraction bits (1..=52), adding
/// (2^(c-1) - 1) + (bit c) and clearing the low c bits rounds half to even; a carry out
/// of the fraction steps the exponent, as it should. |x| >= 2^52, inf and NaN are kept;
/// |x| < 1 becomes 1 when |x| > 0.5, else 0 (ties to the even 0). The sign is put back.
fn round_even(b: &mut Builder, d: Opnd, x: Opnd) {
    let e = exponent(b, x);
    let m = b.vreg(Type::UQ, 1);
    b.mov(lo(m), lo(x));
    b.alu2(O::And, hi(m), hi(x), Opnd::ud(!SIGN));
    let c = b.vreg(Type::D, 1);
    b.alu2(O::Add, c, e.negate(), Opnd::d(1075));
    b.alu2(O::Sel, c, c, Opnd::d(1)).cmod = CondMod::Ge;
    b.alu2(O::Sel, c, c, Opnd::d(52)).cmod = CondMod::L;
    let c64 = b.vreg(Type::UQ, 1);
    b.mov(c64, c.retype(Type::UD));
    // keep = ones << c (the integer part), low = !keep, half_minus_1 = low >> 1.
    let ones = b.vreg(Type::UQ, 1);
    b.mov(ones, Opnd::imm(Type::Q, u64::MAX));
    let keep = b.vreg(Type::UQ, 1);
    b.alu2(O::Shl, keep, ones, c64);
    let h = b.vreg(Type::UQ, 1);
    b.alu2(O::Xor, h, keep, ones);
    b.alu2(O::Shr, h, h, Opnd::imm(Type::UQ, 1));
    let lsb = b.vreg(Type::UQ, 1);
    b.alu2(O::Shr, lsb, m, c64);
    b.alu2(O::And, lsb, lsb, Opnd::imm(Type::UQ, 1));
    let r = b.vreg(Type::UQ, 1);
    b.alu2(O::Add, r, m, h);
    b.alu2(O::Add, r, r, lsb);
    b.alu2(O::And, r, r, keep);
    // |x| >= 2^52 (e >= 1075), inf, NaN: unchanged.
    b.cmp(CondMod::Ge, Opnd::null(Type::D), e, Opnd::d(1075));
    pmov(b, r, m);
    // |x| < 1: 1.0 when |x| > 0.5, else 0.
    let small = b.vreg(Type::UQ, 1);
    b.mov(small, Opnd::imm(Type::UQ, 0));
    let half = df_const(b, 0.5);
    b.cmp(CondMod::G, Opnd::null(Type::DF), m.retype(Type::DF), half);
    pmov(b, small, Opnd::imm(Type::UQ, 1f64.to_bits()));
    b.cmp(CondMod::L, Opnd::null(Type::D), e, Opnd::d(1023));
    pmov(b, r, small);
    let s = b.vreg(Type::UD, 1);
    b.alu2(O::And, s, hi(x), Opnd::ud(SIGN));
    b.alu2(O::Or, hi(r), hi(r), s);
    b.mov(d.retype(Type::UQ), r);
}

/// A guess of 1/m (`rsq` false) or 1/sqrt(m) from the F math unit, for m near 1. The
/// DF -> F conversion writes F with stride 2 (the execution type's size, docs/gen9.md
/// 8.2.6); the math unit reads and writes that region in place (an Align1 MATH's source
/// and destination strides must be equal, 8.3.14), and the DF conversion reads it back:
/// no packing copy. A strided F operand is 8 bytes a lane, so the MATH runs per SIMD8
/// piece like the DF moves around it.
fn guess(b: &mut Builder, m: Opnd, rsq: bool) -> Opnd {
    let t = b.vreg(Type::DF, 1);
    let f = Opnd {
        stride: 2,
        ..t.retype(Type::F)
    };
    b.mov(f, m);
    let func = if rsq {
        MathFunction::Rsq
    } else {
        MathFunction::Inv
    };
    b.math(func, f, vec![f]);
    let r = b.vreg(Type::DF, 1);
    b.mov(r, f);
    r
}

/// A DF constant in a register of its own, moved once and read as a scalar region
/// ([`Builder::scalar_copy`]). Two-source instructions only: a three-source one has no
/// replicated 64-bit scalar.
fn df_const(b: &mut Builder, x: f64) -> Opnd {
    b.scalar_copy(df_imm(x))
}

/// `x` times 2^54 where x's exponent field is 0: denormals become normal, exactly (zeros
/// stay zeros). Leaves f0.0 set there. The test comes first and the product reads the
/// copy, so `x` may end at the copy (and the copy be coalesced away).
fn scale_denormal(b: &mut Builder, x: Opnd) -> Opnd {
    flag_zero_exponent(b, x);
    let t = b.vreg(Type::DF, 1);
    b.mov(t.retype(Type::UQ), x.retype(Type::UQ));
    let s = df_const(b, 2f64.powi(54));
    b.alu2(O::Mul, t, t, s).pred = p();
    t
}

/// Dividends below 2^-915 (exponent field under 108) are scaled by 2^108 before the
/// quotient is formed, so it and its remainder stay clear of the denormal range.
const TINY_EXP: i32 = 108;

/// What every division by one DF divisor `y` shares (see [`recip`]). Isel computes it
/// once per divisor operand and reuses it for `1 / y` and each `x / y` it dominates (brw
/// gets the same from NIR's CSE of its `drcp` lowering).
#[derive(Clone, Copy, Debug)]
pub enum Recip {
    /// Its reciprocal in reduced form and the factors that put the exponent back: a
    /// divisor known at run time, or a constant one under DenormFlushToZero.
    Reduced(Reduced),
    /// A constant divisor's reciprocal as two doubles (DF denormals kept).
    Split(Split),
}

/// The reduced reciprocal of [`Recip::Reduced`].
#[derive(Clone, Copy, Debug)]
pub struct Reduced {
    /// |y| (a denormal y times 2^54) with its exponent cleared: [1, 2). A full-width
    /// register: it is a MAD operand.
    m: Opnd,
    /// 1/m within an ULP (below). Full width too.
    r: Opnd,
    /// 1/y = r * s1 * s2. For a finite nonzero y, s1 = sign(y) * 2^k1 and s2 = 2^k2 with
    /// k1 + k2 = k, 1/y = 2^k / m: each a normal power of two, so each product is exact
    /// unless the result is denormal (or overflows). For a special y, s1 is 1/y itself:
    /// +-inf for a zero, +-0 for an infinity, the NaN for a NaN; r and s2 are then finite
    /// and positive, so every product with s1 is what a division by y gives. A constant y
    /// whose 2^k is a normal double has s1 = sign(y) * 2^k and no s2.
    s1: Opnd,
    s2: Option<Opnd>,
    /// The quotient's scalar constants, moved once with the reciprocal so that every
    /// quotient of the divisor reads the same registers.
    c: QuotientConsts,
}

/// A constant divisor y's reciprocal as the unevaluated sum of two doubles (see
/// [`split_recip`]): `x / y` is `x * hi + x * lo`, one product and one DF MAD, with one
/// more product where x or the quotient is scaled.
#[derive(Clone, Copy, Debug)]
pub struct Split {
    /// A full-width register when `lo` is there (it is a MAD operand), else a scalar one.
    hi: Opnd,
    /// A scalar register; None where 1/y is a power of two.
    lo: Option<Opnd>,
    /// [`SplitRecip`]'s `pre` and `post` (scalar registers); None for 1.
    pre: Option<Opnd>,
    post: Option<Opnd>,
    /// 1/y rounded to nearest: `1 / y` itself.
    inv: f64,
}

/// The DF constants of [`quotient`] (scalar registers).
#[derive(Clone, Copy, Debug)]
struct QuotientConsts {
    /// 2^-915: dividends below it are tiny.
    tiny: Opnd,
    /// 2^108 and 2^-108: a tiny dividend's scaling and its undoing.
    up: Opnd,
    down: Opnd,
    /// The lowest double, for the `sel` that keeps an infinite dividend.
    lowest: Opnd,
}

impl QuotientConsts {
    fn new(b: &mut Builder) -> QuotientConsts {
        QuotientConsts {
            tiny: df_const(b, 2f64.powi(TINY_EXP - 1023)),
            up: df_const(b, 2f64.powi(TINY_EXP)),
            down: df_const(b, 2f64.powi(-TINY_EXP)),
            lowest: df_const(b, f64::MIN),
        }
    }
}

/// The value of a DF immediate operand with its source modifiers applied.
fn imm_value(o: Opnd) -> Option<f64> {
    let Base::Imm(bits) = o.base else {
        return None;
    };
    let mut v = f64::from_bits(bits);
    if o.abs {
        v = v.abs();
    }
    if o.neg {
        v = -v;
    }
    Some(v)
}

/// The sign and exponent field of DF `x` (`raw`: the high dword shifted right by 20, the
/// sign at bit 11) and the exponent field alone (`e`, bits 10..0 of `raw`).
fn sign_exponent(b: &mut Builder, x: Opnd) -> (Opnd, Opnd) {
    let raw = b.vreg(Type::UD, 1);
    b.alu2(O::Shr, raw, hi(x), Opnd::ud(20));
    let e = b.vreg(Type::D, 1);
    b.alu2(O::And, e, raw.retype(Type::D), Opnd::d(0x7FF));
    (raw, e)
}

/// The reciprocal of a DF divisor `y` as a [`Recip`]: y (a denormal one scaled by 2^54
/// first, the 54 going into the exponent factors) is reduced to m in [1, 2); an F guess of
/// 1/m from the math unit (about 22 good bits) is refined by two Newton-Raphson steps
/// r += r * (1 - m * r), each two DF MADs with the residual fused. With e the guess's
/// relative error, a step leaves e^2 + e * 2^-53 before its rounding, so after the second
/// |r - 1/m| <= 0.5 ULP + 2^-86: r is within an ULP of 1/m (not always its correctly
/// rounded value). A constant divisor takes [`split_recip`] where the kernel rounds DF
/// results to nearest and keeps DF denormals (`nearest_denormals`; the bound there is
/// proved for that environment), else [`const_recip`] where it applies.
///
/// `one` is the full-width DF 1.0 of an earlier reciprocal whose block dominates this one
/// (None: moved here, and returned there for the next).
pub fn recip(b: &mut Builder, y: Opnd, one: &mut Option<Opnd>, nearest_denormals: bool) -> Recip {
    let constant = imm_value(y);
    if let Some(v) = constant.filter(|_| nearest_denormals) {
        if let Some(s) = split_recip(v) {
            return Recip::Split(split_consts(b, v, s));
        }
    }
    let c = QuotientConsts::new(b);
    if let Some(r) = constant.and_then(|v| const_recip(b, v, c)) {
        return Recip::Reduced(r);
    }
    let ys = scale_denormal(b, y);
    // f0.0: y was scaled.
    let (raw, e) = sign_exponent(b, ys);
    // 1/y = 2^k / m with k = 1023 - e, plus 54 where y was scaled; kf = k + 2046, so that
    // h1 = kf >> 1 = k1 + 1023 and h2 = kf - h1 = k2 + 1023 are the exponent fields of
    // 2^k1 and 2^k2 (k1 = floor(k / 2), k2 = k - k1).
    let kf = b.vreg(Type::D, 1);
    b.alu2(O::Add, kf, e.negate(), Opnd::d(3069));
    b.alu2(O::Add, kf, kf, Opnd::d(54)).pred = p();
    let m = b.vreg(Type::DF, 1);
    b.mov(lo(m), lo(ys));
    b.alu2(O::And, hi(m), hi(ys), Opnd::ud(0x000F_FFFF));
    b.alu2(O::Or, hi(m), hi(m), Opnd::ud(0x3FF0_0000));
    let r = guess(b, m, false);
    // 1.0 in a full-width register: a three-source instruction takes no immediate, and a
    // 64-bit source has no replicated scalar (docs/gen9.md 8.2.2).
    let one = *one.get_or_insert_with(|| {
        let t = b.vreg(Type::DF, 1);
        b.mov(t, df_imm(1.0));
        t
    });
    let t = b.vreg(Type::DF, 1);
    for _ in 0..2 {
        b.inst(LOp::Alu(O::Mad), t, vec![one, m.negate(), r]);
        b.inst(LOp::Alu(O::Mad), r, vec![r, t, r]);
    }
    // k in [-1024, 1077] (e = 2047 .. a zero scaled): k1, k2 in [-512, 539], exponent
    // fields 511 ..= 1562.
    let h1 = b.vreg(Type::D, 1);
    b.alu2(O::Asr, h1, kf, Opnd::d(1));
    let h2 = b.vreg(Type::D, 1);
    b.alu2(O::Add, h2, kf, h1.negate());
    // s1's exponent field for a special y: 2047 - e (2047 for a zero, 0 for an infinity;
    // a NaN takes y below); then y's sign at bit 11, bit 31 after the shift.
    flag_special(b, e);
    b.alu2(O::Add, h1, e.negate(), Opnd::d(0x7FF)).pred = p();
    let sy = b.vreg(Type::UD, 1);
    b.alu2(O::And, sy, raw, Opnd::ud(0x800));
    b.alu2(O::Or, h1.retype(Type::UD), h1.retype(Type::UD), sy);
    let s1 = from_field(b, h1);
    b.cmp(CondMod::Nz, Opnd::null(Type::DF), ys, ys);
    pmov(b, s1, ys);
    let s2 = from_field(b, h2);
    Recip::Reduced(Reduced {
        m,
        r,
        s1,
        s2: Some(s2),
        c,
    })
}

/// The [`Reduced`] reciprocal of a constant divisor y = +-m * 2^-k with 2^k a normal
/// double (|k| <= 1022; other constants take the general sequence), for kernels that
/// flush DF denormals or round toward zero (where [`split_recip`]'s bound is not
/// proved): m and r = 1/m rounded to nearest (within the half ULP the Newton steps
/// reach, so the quotient's bound holds as proved for them) moved into full-width
/// registers, and s1 = +-2^k. No s2: one exact product puts the exponent back.
fn const_recip(b: &mut Builder, y: f64, c: QuotientConsts) -> Option<Reduced> {
    if !y.is_normal() {
        return None;
    }
    let bits = y.to_bits();
    let k = 1023 - ((bits >> 52) & 0x7FF) as i32;
    if !(-1022..=1022).contains(&k) {
        return None;
    }
    let mv = f64::from_bits(bits & 0x000F_FFFF_FFFF_FFFF | 1f64.to_bits());
    let m = b.vreg(Type::DF, 1);
    b.mov(m, df_imm(mv));
    let r = b.vreg(Type::DF, 1);
    b.mov(r, df_imm(1.0 / mv));
    let s1 = df_const(b, 2f64.powi(k).copysign(y));
    Some(Reduced {
        m,
        r,
        s1,
        s2: None,
        c,
    })
}

/// The compile-time constants of a [`Split`] reciprocal: x / y = ((x * pre) / Y) * post,
/// with hi + lo = 1/Y.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SplitRecip {
    hi: f64,
    lo: f64,
    /// Powers of two (1 where there is no scaling) for y = Y * 2^j: 2^-j before for
    /// j < 0, after for j > 0.
    pre: f64,
    post: f64,
}

/// A finite nonzero constant y's reciprocal as hi + lo (None for 0, infinities, NaN).
/// hi is 1/y truncated toward zero to a normal double and lo = 1/y - hi rounded to
/// nearest, a normal double of hi's sign or zero: |hi + lo - 1/y| <= 2^-53 |lo| <=
/// 2^-105 |1/y|. Where 1/y or its lo is not normal, y = Y * 2^j with Y in [1, 2) and
/// the pair is Y's: j > 0 for |y| from about 2^969 up (then j <= 1022 and |Y| < 4), the
/// quotient x / Y scaled by 2^-j after; j = -1022 for a denormal y (|Y| in [2^-52, 1)),
/// the dividend scaled by 2^1022 before.
///
/// Why `x * hi + x * lo` (one product, one DF MAD) is within an ULP (RTE with
/// denormals; docs/float-controls.md):
/// - with t = x * lo normal, the MAD's exact sum x * hi + t is within 2^-104 |x / Y| of
///   x / Y (t rounds by at most 2^-53 |t| <= 2^-105 |x / Y|), so its one rounding is
///   within 0.5 + 2^-51 ULP: correctly rounded except next to a midpoint;
/// - where t underflows, x / Y is below 2^-969: above 2^-1021 its ULP is at least
///   2^-1073 and t's rounding error (at most 2^-1075) is at most a quarter of it, so the
///   result stays within 0.75 + 2^-51 ULP; below 2^-1021 t's grid is the result's, and
///   the two roundings add to at most 1 + 2^-52 ULP of the exact quotient: the
///   correctly rounded value or one next to it;
/// - scaled after (j > 0): |Y| >= 1, so x / Y overflows only where the quotient does;
///   the product with 2^-j is exact unless the quotient is denormal, where it rounds
///   once more: half an ULP on top of an error scaled down by 2^-j;
/// - scaled before (j < 0): x * 2^1022 is exact, or overflows where the quotient does
///   (|Y| < 1); a nonzero scaled dividend is at least 2^-52, so x / Y is never tiny;
/// - specials: lo has hi's sign, so an infinite x gives inf + inf of one sign, never
///   inf - inf; a zero x gives +-0 * hi + (+-0 of the same sign); NaN stays NaN; an
///   overflowing quotient rounds to infinity in the MAD (its product is exact there).
fn split_recip(y: f64) -> Option<SplitRecip> {
    if y == 0.0 || !y.is_finite() {
        return None;
    }
    // hi and lo of 1/y for a y whose pair is normal.
    let pair = |y: f64| -> Option<(f64, f64)> {
        let mut hi = 1.0 / y;
        // 1 - hi * y is exact (hi is within an ULP of 1/y); negative when |hi| > |1/y|.
        if (-hi).mul_add(y, 1.0) < 0.0 {
            hi = f64::from_bits(hi.to_bits() - 1);
        }
        let lo = (-hi).mul_add(y, 1.0) / y;
        (hi.is_normal() && (lo == 0.0 || lo.is_normal())).then_some((hi, lo))
    };
    if let Some((hi, lo)) = pair(y) {
        return Some(SplitRecip {
            hi,
            lo,
            pre: 1.0,
            post: 1.0,
        });
    }
    let field = ((y.to_bits() >> 52) & 0x7FF) as i32;
    let j = (field - 1023).clamp(-1022, 1022);
    let (hi, lo) = pair(y * 2f64.powi(-j))?;
    let (pre, post) = if j < 0 {
        (2f64.powi(-j), 1.0)
    } else {
        (1.0, 2f64.powi(-j))
    };
    Some(SplitRecip { hi, lo, pre, post })
}

/// [`SplitRecip`]'s constants (of divisor `y`) moved into registers: `hi` full width
/// where it is a MAD operand, the others as scalars.
fn split_consts(b: &mut Builder, y: f64, s: SplitRecip) -> Split {
    let (hi, lo) = if s.lo == 0.0 {
        (df_const(b, s.hi), None)
    } else {
        let hi = b.vreg(Type::DF, 1);
        b.mov(hi, df_imm(s.hi));
        (hi, Some(df_const(b, s.lo)))
    };
    let mut scale = |v: f64| (v != 1.0).then(|| df_const(b, v));
    let (pre, post) = (scale(s.pre), scale(s.post));
    Split {
        hi,
        lo,
        pre,
        post,
        inv: 1.0 / y,
    }
}

/// `d = x / y` from a constant y's [`Split`] reciprocal: x scaled, t = x * lo, then
/// x * hi + t in one DF MAD, the quotient scaled (see [`split_recip`] for the bound).
fn split_quotient(b: &mut Builder, d: Opnd, x: Opnd, s: &Split) {
    let d = d.retype(Type::DF);
    let x = match s.pre {
        Some(pre) => {
            let t = b.vreg(Type::DF, 1);
            b.alu2(O::Mul, t, x, pre);
            t
        }
        None => x,
    };
    let q = if s.post.is_some() {
        b.vreg(Type::DF, 1)
    } else {
        d
    };
    match s.lo {
        Some(lo) => {
            let t = b.vreg(Type::DF, 1);
            b.alu2(O::Mul, t, x, lo);
            b.inst(LOp::Alu(O::Mad), q, vec![t, x, s.hi]);
        }
        None => {
            b.alu2(O::Mul, q, x, s.hi);
        }
    }
    if let Some(post) = s.post {
        b.alu2(O::Mul, d, q, post);
    }
}

/// `d = q * s1 * s2` as a DF: the exponent put back (exactly unless the result is
/// denormal or overflows, rounded once there).
fn unreduce(b: &mut Builder, d: Opnd, q: Opnd, r: &Reduced) {
    let d = d.retype(Type::DF);
    match r.s2 {
        Some(s2) => {
            let t = b.vreg(Type::DF, 1);
            b.alu2(O::Mul, t, q, r.s1);
            b.alu2(O::Mul, d, t, s2);
        }
        None => {
            b.alu2(O::Mul, d, q, r.s1);
        }
    }
}

/// `d = x / y` from y's [`Recip`], within an ULP for normal quotients (not always
/// correctly rounded). xs = x (times 2^108 if tiny) is divided by m: q = xs * r, then one
/// correction with the remainder, q1 = q - r * (q * m - xs), both DF MADs. q is within
/// 2.5 ULPs of xs / m, so the remainder is exact or rounded by at most 2^-53 of itself and
/// r errs by at most 2^-52 relatively: q1 before its one rounding is within 2^-49 ULP of
/// xs / m, i.e. at most 0.5 + 2^-49 ULP after it (RTE; under RTZ less than 1 + 2^-49).
/// The factors s1, s2 then put the exponent back, exactly unless the quotient is
/// denormal (rounded once more there), and give a special y's quotient. With m and r
/// positive, the remainder of a zero dividend is +0 and q - r * (+0) keeps q's sign.
pub fn quotient(b: &mut Builder, d: Opnd, x: Opnd, r: &Recip) {
    // 1.0 / y (GLSL has no reciprocal): the reciprocal's own sequence, as close.
    if x.base == Base::Imm(1f64.to_bits()) && !x.neg {
        return reciprocal(b, d, r);
    }
    let r = match r {
        Recip::Split(s) => return split_quotient(b, d, x, s),
        Recip::Reduced(r) => r,
    };
    // A constant dividend in a register: it is read with the absolute-value modifier.
    let x = if x.is_imm() {
        let t = b.vreg(Type::DF, 1);
        b.mov(t.retype(Type::UQ), x.retype(Type::UQ));
        t
    } else {
        x
    };
    let c = r.c;
    // f0.0 = x is tiny, up to the last product (nothing between writes the flag: SEL
    // writes none, docs/gen9.md). The scaling reads the copy, so x may end at the copy.
    b.cmp(CondMod::L, Opnd::null(Type::DF), x.absolute(), c.tiny);
    let xs = b.vreg(Type::DF, 1);
    b.mov(xs.retype(Type::UQ), x.retype(Type::UQ));
    b.alu2(O::Mul, xs, xs, c.up).pred = p();
    let q = b.vreg(Type::DF, 1);
    b.alu2(O::Mul, q, xs, r.r);
    let t = b.vreg(Type::DF, 1);
    b.inst(LOp::Alu(O::Mad), t, vec![xs.negate(), q, r.m]);
    // An infinite x makes q +-inf and the remainder NaN: max(NaN, lowest) is `lowest`
    // (SEL with a conditional modifier returns the other operand of a NaN), and
    // q - r * lowest is q again, which s1 and s2 scale as a quotient (inf / inf is NaN by
    // s1 = 0). A finite remainder is above `lowest` and kept; a NaN x stays NaN through q.
    b.alu2(O::Sel, t, t, c.lowest).cmod = CondMod::Ge;
    b.inst(LOp::Alu(O::Mad), q, vec![q, t.negate(), r.r]);
    unreduce(b, d, q, r);
    let d = d.retype(Type::DF);
    b.alu2(O::Mul, d, d, c.down).pred = p();
}

/// `d = 1 / y` from y's [`Recip`]: r * s1 * s2, within an ULP for normal results, and
/// exact for a special y (s1 is the result there).
pub fn reciprocal(b: &mut Builder, d: Opnd, r: &Recip) {
    match r {
        Recip::Reduced(r) => unreduce(b, d, r.r, r),
        // Correctly rounded at compile time.
        Recip::Split(s) => {
            b.mov(d.retype(Type::DF), df_imm(s.inv));
        }
    }
}

/// What sqrt(x) and 1/sqrt(x) of one DF operand share (see [`root`]): x reduced to
/// m * 2^(2j) and 1/sqrt(m) refined. Isel computes it once per operand and reuses it for
/// both functions where its block dominates, as it does a divisor's [`Recip`].
#[derive(Clone, Copy, Debug)]
pub struct Root {
    /// The operand as given (its exponent field says whether it was scaled).
    x0: Opnd,
    /// The operand, a denormal one times 2^54.
    x: Opnd,
    /// x's exponent field, and `hi(x) >> 20` (the sign at bit 11).
    e: Opnd,
    raw: Opnd,
    /// x = m * 2^(2j), m in [0.5, 2).
    j: Opnd,
    m: Opnd,
    /// 1/sqrt(m) after two Newton steps.
    r: Opnd,
    /// 0.5 (a scalar register).
    half: Opnd,
}

/// The reduction and refined inverse square root of `x` ([`Root`]): a denormal x is
/// scaled by 2^54 (exact; the result is scaled back by 2^-27 or 2^27), x = m * 2^(2j),
/// the F `rsq` guess of m refined by two Newton steps r *= 1.5 - (m / 2) * r * r, the
/// subtraction fused (m / 2 is exact; three-source instructions take no immediates, so
/// 1.5 sits in a full-width register).
pub fn root(b: &mut Builder, x0: Opnd) -> Root {
    let x = scale_denormal(b, x0);
    let (raw, e) = sign_exponent(b, x);
    // x = 1.f * 2^(e - 1023) = m * 2^(2j) with j = (e - 1022) >> 1: m keeps the exponent
    // field's lowest bit and takes 1022 + that bit as its field (1.f for an odd field,
    // 1.f / 2 for an even one): the fraction and that bit, or 0x3FE00000 (its bit 20 is 0).
    let j = b.vreg(Type::D, 1);
    b.alu2(O::Add, j, e, Opnd::d(-1022));
    b.alu2(O::Asr, j, j, Opnd::d(1));
    let m = b.vreg(Type::DF, 1);
    b.mov(lo(m), lo(x));
    b.alu2(O::And, hi(m), hi(x), Opnd::ud(0x001F_FFFF));
    b.alu2(O::Or, hi(m), hi(m), Opnd::ud(0x3FE0_0000));
    let r = guess(b, m, true);
    let t = b.vreg(Type::DF, 1);
    let half = df_const(b, 0.5);
    let hm = b.vreg(Type::DF, 1);
    b.alu2(O::Mul, hm, m, half);
    let c = b.vreg(Type::DF, 1);
    b.mov(c, df_imm(1.5));
    for _ in 0..2 {
        b.alu2(O::Mul, t, r, r);
        b.inst(LOp::Alu(O::Mad), t, vec![c, hm.negate(), t]);
        b.alu2(O::Mul, r, r, t);
    }
    Root {
        x0,
        x,
        e,
        raw,
        j,
        m,
        r,
        half,
    }
}

/// sqrt(x) or (rsq) 1/sqrt(x) from x's [`Root`].
pub fn sqrt(b: &mut Builder, d: Opnd, rt: &Root, rsq: bool) {
    let Root {
        x0,
        x,
        e,
        raw,
        j,
        m,
        r,
        half,
    } = *rt;
    let q = b.vreg(Type::DF, 1);
    if rsq {
        // r * 2^-j. The factor's exponent field is 1023 - j, for a special x 2047 - e (as a
        // divisor's s1): 2047 for a zero (1/sqrt(+-0) = +-inf), 0 for an infinity or a NaN
        // (1/sqrt(+inf) = +0; the NaN is patched below). x's sign goes into the factor:
        // -0 gives -inf, and any other negative x is patched to NaN below. r is finite and
        // positive.
        let f = b.vreg(Type::D, 1);
        b.alu2(O::Add, f, j.negate(), Opnd::d(1023));
        flag_special(b, e);
        b.alu2(O::Add, f, e.negate(), Opnd::d(0x7FF)).pred = p();
        let sx = b.vreg(Type::UD, 1);
        b.alu2(O::And, sx, raw, Opnd::ud(0x800));
        b.alu2(O::Or, f.retype(Type::UD), f.retype(Type::UD), sx);
        let s = from_field(b, f);
        b.alu2(O::Mul, q, r, s);
    } else {
        // s = m * r, then s += (r / 2) * (m - s * s), the remainder fused.
        b.alu2(O::Mul, q, m, r);
        let t = b.vreg(Type::DF, 1);
        b.inst(LOp::Alu(O::Mad), t, vec![m, q.negate(), q]);
        let hr = b.vreg(Type::DF, 1);
        b.alu2(O::Mul, hr, r, half);
        b.inst(LOp::Alu(O::Mad), q, vec![q, t, hr]);
        let s = pow2(b, j);
        b.alu2(O::Mul, q, q, s);
    }
    // Specials: +-0 -> +-0 (sqrt; rsq's +-inf came from its factor); inf/NaN; negative
    // -> NaN.
    if rsq {
        // A NaN is itself.
        b.cmp(CondMod::Nz, Opnd::null(Type::DF), x, x);
    } else {
        // sqrt of +-0, +inf and NaN is the operand (after the scaling a zero exponent
        // field means zero); -inf is negative, below.
        flag_special(b, e);
    }
    pmov(b, q, x);
    let zero = df_const(b, 0.0);
    b.cmp(CondMod::L, Opnd::null(Type::DF), x, zero);
    pmov(b, q, Opnd::imm(Type::UQ, f64::NAN.to_bits()));
    let unscale = df_const(b, 2f64.powi(if rsq { 27 } else { -27 }));
    flag_zero_exponent(b, x0);
    b.alu2(O::Mul, q, q, unscale).pred = p();
    b.mov(d.retype(Type::UQ), q.retype(Type::UQ));
}

/// A 64-bit-type value converted to a 32-bit type: the conversion writes with stride 2.
fn narrow(b: &mut Builder, d: Opnd, s: Opnd) {
    let t = b.vreg(Type::UQ, 1);
    let ts = Opnd {
        stride: 2,
        ..t.retype(d.ty)
    };
    b.mov(ts, s);
    b.mov(d, ts);
}

/// The hardware type of an IR type for conversions (signedness from the op).
fn conv_ty(t: ir::Type, signed: bool) -> Type {
    match (t.kind, t.bits, signed) {
        (Kind::Float, 64, _) => Type::DF,
        (Kind::Float, _, _) => Type::F,
        (_, 64, true) => Type::Q,
        (_, 64, false) => Type::UQ,
        (_, _, true) => Type::D,
        (_, _, false) => Type::UD,
    }
}

/// Selects one ALU op whose source or destination type is 64-bit. `d` and `s` are the
/// component operands in the types `isel::hw_ty` gives (booleans D).
pub fn alu64(
    b: &mut Builder,
    op: AluOp,
    d: Opnd,
    s: &[Opnd],
    st: ir::Type,
    dt: ir::Type,
) -> Res<()> {
    use AluOp::*;
    let q = |o: Opnd| o.retype(Type::Q);
    let uq = |o: Opnd| o.retype(Type::UQ);
    let df = |o: Opnd| o.retype(Type::DF);
    match op {
        Mov | B2b | Bitcast => {
            if is_wide(dt) && is_wide(st) {
                b.mov(uq(d), uq(s[0]));
            } else {
                return Err(BackendError::Unsupported(format!(
                    "{} from {st} to {dt}",
                    op.name()
                )));
            }
        }
        I2i | U2u | I2f | U2f | F2i | F2u | F2f if st.bits < 32 || dt.bits < 32 => {
            return Err(BackendError::Unsupported(format!(
                "{} from {st} to {dt} (8/16-bit <-> 64-bit needs an intermediate)",
                op.name()
            )))
        }
        I2i | U2u | I2f | U2f | F2i | F2u | F2f => {
            let ss = op.signed_srcs();
            let ds = op.signed_dst();
            let sty = conv_ty(st, ss);
            let dty = conv_ty(dt, ds);
            let src = s[0].retype(sty);
            let dst = d.retype(dty);
            if matches!(op, I2i | U2u) && st.bits == 64 && dt.bits <= 32 {
                // Integer narrowing keeps the low dword.
                b.mov(dst.retype(Type::UD), lo(src));
            } else if dt.bits == 64 {
                b.mov(dst, src);
            } else {
                narrow(b, dst, src);
            }
        }
        B2i => {
            b.mov(q(d), s[0].retype(Type::D).negate());
        }
        B2f => {
            b.mov(df(d), s[0].retype(Type::D).negate());
        }
        I2b => {
            cmp64(b, CondMod::Nz, d, q(s[0]), Opnd::imm(Type::Q, 0));
        }
        Iadd | Isub => {
            super::isel::add_sub_mul(b, op, d, s, Type::Q);
        }
        IaddSat | UaddSat => {
            return Err(BackendError::Unsupported(format!(
                "64-bit {} (the lower_sat_add pass expands it)",
                op.name()
            )))
        }
        Imul => {
            // (aH:aL) * (bH:bL) mod 2^64 = aL*bL + ((aL*bH + aH*bL) << 32). A constant
            // whose high dword is zero (`q * 3`) has no aL*bH product: it goes second.
            let zero_hi = |o: &Opnd| matches!(o.base, Base::Imm(bits) if bits >> 32 == 0);
            let (x, y) = if zero_hi(&s[0]) {
                (s[1], s[0])
            } else {
                (s[0], s[1])
            };
            let t = b.vreg(Type::UQ, 1);
            b.alu2(O::Mul, t, lo(x), lo(y));
            let c2 = b.vreg(Type::UD, 1);
            b.alu2(O::Mul, c2, hi(x), lo(y));
            if !zero_hi(&y) {
                let c1 = b.vreg(Type::UD, 1);
                b.alu2(O::Mul, c1, lo(x), hi(y));
                b.alu2(O::Add, c2, c2, c1);
            }
            b.alu2(O::Add, hi(t), hi(t), c2);
            b.mov(uq(d), t);
        }
        Ineg => super::isel::neg_abs(b, op, d, s, [Type::Q, Type::DF]),
        Iabs => {
            let t = b.vreg(Type::Q, 1);
            b.mov(t, q(s[0]).negate());
            b.alu2(O::Sel, q(d), q(s[0]), t).cmod = CondMod::Ge;
        }
        Isign => {
            // max(min(x, 1), -1)
            let t = b.vreg(Type::Q, 1);
            let one = b.vreg(Type::Q, 1);
            b.mov(one, Opnd::imm(Type::Q, 1));
            b.alu2(O::Sel, t, q(s[0]), one).cmod = CondMod::L;
            b.mov(one, Opnd::imm(Type::Q, u64::MAX));
            b.alu2(O::Sel, q(d), t, one).cmod = CondMod::Ge;
        }
        Imin | Imax | Umin | Umax | Fmin | Fmax => {
            super::isel::min_max(b, op, d, s, [Type::Q, Type::UQ, Type::DF]);
        }
        Iand | Ior | Ixor | Inot => {
            super::isel::logic(b, op, d, s, Type::UQ);
        }
        Ishl | Ishr | Ushr if s[1].is_imm() => {
            let Base::Imm(n) = s[1].base else {
                unreachable!()
            };
            shift_by(b, op, d, s[0], n as u32 & 63);
        }
        Ishl | Ishr | Ushr => {
            // The count, modulo 64, as a qword like the value.
            let c = b.vreg(Type::UD, 1);
            b.alu2(O::And, c, s[1].retype(Type::UD), Opnd::ud(63));
            let c64 = b.vreg(Type::UQ, 1);
            b.mov(c64, c);
            let (o, ty) = match op {
                Ishl => (O::Shl, Type::UQ),
                Ishr => (O::Asr, Type::Q),
                _ => (O::Shr, Type::UQ),
            };
            b.alu2(o, d.retype(ty), s[0].retype(ty), c64);
        }
        Fadd | Fsub | Fmul => {
            super::isel::add_sub_mul(b, op, d, s, Type::DF);
        }
        Ffma => {
            // One fused DF MAD (dst = src0 + src1 * src2, one rounding, as soft64 computes
            // it): 3-source Align16, at most SIMD8 for DF (64 bytes per operand, split by
            // lower_simd_width), no RepCtrl on 64-bit sources (legalize expands scalars).
            b.inst(LOp::Alu(O::Mad), df(d), vec![df(s[2]), df(s[0]), df(s[1])]);
        }
        // Isel selects f64 division through `div64` (shared reciprocals, the float modes
        // known); other callers get constants through the sequence proved under every mode.
        Fdiv => {
            let r = recip(b, df(s[1]), &mut None, false);
            quotient(b, d, df(s[0]), &r);
        }
        Frcp => {
            let r = recip(b, df(s[0]), &mut None, false);
            reciprocal(b, d, &r);
        }
        Fsqrt | Frsq => {
            let rt = root(b, df(s[0]));
            sqrt(b, d, &rt, op == Frsq);
        }
        Fneg | Fabs => {
            b.mov(lo(d), lo(s[0]));
            if op == Fneg {
                b.alu2(O::Xor, hi(d), hi(s[0]), Opnd::ud(SIGN));
            } else {
                b.alu2(O::And, hi(d), hi(s[0]), Opnd::ud(!SIGN));
            }
        }
        Fsign => {
            let t = b.vreg(Type::DF, 1);
            b.mov(lo(t), Opnd::ud(0));
            b.alu2(O::And, hi(t), hi(s[0]), Opnd::ud(SIGN));
            b.alu2(O::Or, hi(t), hi(t), Opnd::ud(0x3FF0_0000));
            b.mov(uq(d), uq(s[0]));
            let zero = df_const(b, 0.0);
            b.cmp(CondMod::Nz, Opnd::null(Type::DF), df(s[0]), zero);
            pmov(b, d, t);
        }
        Ftrunc => trunc(b, d, df(s[0])),
        Ffloor => floor_ceil(b, d, df(s[0]), true),
        Fceil => floor_ceil(b, d, df(s[0]), false),
        FroundEven => round_even(b, d, df(s[0])),
        Ffract => {
            let t = b.vreg(Type::DF, 1);
            floor_ceil(b, t, df(s[0]), true);
            b.alu2(O::Add, df(d), df(s[0]), t.negate());
        }
        Ldexp => ldexp(b, d, df(s[0]), s[1].retype(Type::D)),
        FrexpSig | FrexpExp => {
            let (sig, e) = frexp(b, df(s[0]));
            if op == FrexpSig {
                b.mov(uq(d), uq(sig));
            } else {
                b.mov(d.retype(Type::D), e);
            }
        }
        Ieq | Ine | Ilt | Ige | Ult | Uge | Feq | Flt | Fle | Fgt | Fge | Fneu => {
            let (ty, cm) = super::isel::compare(op, [Type::Q, Type::UQ, Type::DF])
                .expect("a single-cmp comparison");
            cmp64(b, cm, d, s[0].retype(ty), s[1].retype(ty));
        }
        Fne | Fequ => {
            // fne (ordered) = a < b || a > b; fequ = its negation.
            let t = b.vreg(Type::D, 1);
            let t2 = b.vreg(Type::D, 1);
            cmp64(b, CondMod::L, t, df(s[0]), df(s[1]));
            cmp64(b, CondMod::G, t2, df(s[0]), df(s[1]));
            if op == Fne {
                b.alu2(
                    O::Or,
                    d.retype(Type::UD),
                    t.retype(Type::UD),
                    t2.retype(Type::UD),
                );
            } else {
                b.alu2(
                    O::Or,
                    t.retype(Type::UD),
                    t.retype(Type::UD),
                    t2.retype(Type::UD),
                );
                b.alu1(O::Not, d.retype(Type::UD), t.retype(Type::UD));
            }
        }
        Fltu | Fleu | Fgtu | Fgeu => {
            let cm = match op {
                Fltu => CondMod::Ge,
                Fleu => CondMod::G,
                Fgtu => CondMod::Le,
                _ => CondMod::L,
            };
            let t = b.vreg(Type::D, 1);
            cmp64(b, cm, t, df(s[0]), df(s[1]));
            b.alu1(O::Not, d.retype(Type::UD), t.retype(Type::UD));
        }
        IsNan => cmp64(b, CondMod::Nz, d, df(s[0]), df(s[0])),
        IsInf => {
            let a = b.vreg(Type::DF, 1);
            b.mov(lo(a), lo(s[0]));
            b.alu2(O::And, hi(a), hi(s[0]), Opnd::ud(!SIGN));
            let inf = df_const(b, f64::INFINITY);
            cmp64(b, CondMod::Z, d, a, inf);
        }
        Bcsel => {
            b.flag_from(s[0]);
            b.alu2(O::Sel, uq(d), uq(s[1]), uq(s[2])).pred = p();
        }
        Udiv | Umod => {
            let (qo, ro) = if op == Udiv {
                (Some(d), None)
            } else {
                (None, Some(d))
            };
            udivmod(b, qo, ro, uq(s[0]), uq(s[1]));
        }
        Idiv | Irem => {
            // On magnitudes; the quotient is negative when the signs differ, the
            // remainder takes the dividend's sign.
            let abs = |b: &mut Builder, x: Opnd| {
                let n = b.vreg(Type::Q, 1);
                b.mov(n, q(x).negate());
                let a = b.vreg(Type::Q, 1);
                b.alu2(O::Sel, a, q(x), n).cmod = CondMod::Ge;
                a
            };
            let (na, nb) = (abs(b, s[0]), abs(b, s[1]));
            let t = b.vreg(Type::UQ, 1);
            let sign = b.vreg(Type::UD, 1);
            if op == Idiv {
                udivmod(b, Some(t), None, uq(na), uq(nb));
                b.alu2(O::Xor, sign, hi(s[0]), hi(s[1]));
            } else {
                udivmod(b, None, Some(t), uq(na), uq(nb));
                b.mov(sign, hi(s[0]));
            }
            b.mov(q(d), q(t));
            b.cmp(
                CondMod::L,
                Opnd::null(Type::D),
                sign.retype(Type::D),
                Opnd::d(0),
            );
            b.mov(q(d), q(t).negate()).pred = p();
        }
        UmulHigh => umul_high(b, uq(d), s[0], s[1]),
        ImulHigh => {
            // The signed high half from the unsigned one: a read as signed is a - 2^64 when
            // its sign bit is set, so hi_s(a*b) = hi_u(a*b) - (a < 0 ? b : 0) - (b < 0 ? a : 0)
            // (mod 2^64).
            let t = b.vreg(Type::UQ, 1);
            umul_high(b, t, s[0], s[1]);
            for (x, y) in [(s[0], s[1]), (s[1], s[0])] {
                let m = b.vreg(Type::D, 1);
                b.alu2(O::Asr, m, hi(x).retype(Type::D), Opnd::d(31));
                let c = b.vreg(Type::UQ, 1);
                b.alu2(O::And, lo(c), lo(y), m.retype(Type::UD));
                b.alu2(O::And, hi(c), hi(y), m.retype(Type::UD));
                b.alu2(O::Add, q(t), q(t), q(c).negate());
            }
            b.mov(uq(d), t);
        }
        Imod | BitfieldInsert | IbitfieldExtract | UbitfieldExtract | BitfieldReverse
        | BitCount | FindLsb | UfindMsb | IfindMsb | Fmod | Frem | Fexp2 | Flog2 | Fsin | Fcos
        | Fpow => {
            return Err(BackendError::Unsupported(format!(
                "{} on 64-bit operands",
                op.name()
            )))
        }
    }
    Ok(())
}

/// `d = x << n`, `x >> n` (`Ishr` arithmetic) for a constant count `n` in 0..64. By 32 the
/// result is the other dword of `x` and a zero (or the sign) in dword moves; another count
/// is an immediate (`legalize` moves it into a scalar register once).
fn shift_by(b: &mut Builder, op: AluOp, d: Opnd, x: Opnd, n: u32) {
    match (op, n) {
        (AluOp::Ishl, 32) => {
            b.mov(hi(d), lo(x));
            b.mov(lo(d), Opnd::ud(0));
        }
        (AluOp::Ushr, 32) => {
            b.mov(lo(d), hi(x));
            b.mov(hi(d), Opnd::ud(0));
        }
        (AluOp::Ishr, 32) => {
            b.mov(lo(d), hi(x));
            b.alu2(
                O::Asr,
                hi(d).retype(Type::D),
                hi(x).retype(Type::D),
                Opnd::d(31),
            );
        }
        _ => {
            let (o, ty) = match op {
                AluOp::Ishl => (O::Shl, Type::UQ),
                AluOp::Ishr => (O::Asr, Type::Q),
                _ => (O::Shr, Type::UQ),
            };
            let c = Opnd::imm(Type::UQ, u64::from(n));
            b.alu2(o, d.retype(ty), x.retype(ty), c);
        }
    }
}

/// The high 64 bits of the unsigned 128-bit product of two 64-bit operands, from the four
/// 32x32 -> 64 partial products (a dword multiply with a QWord destination):
/// hi = aH*bH + hi(aL*bH) + hi(aH*bL) + hi(hi(aL*bL) + lo(aL*bH) + lo(aH*bL)), where the
/// inner sum (below 3 * 2^32) is computed in 64 bits so its carry is kept.
fn umul_high(b: &mut Builder, d: Opnd, x: Opnd, y: Opnd) {
    let prod = |b: &mut Builder, u: Opnd, v: Opnd| {
        let t = b.vreg(Type::UQ, 1);
        b.alu2(O::Mul, t, u, v);
        t
    };
    let ll = prod(b, lo(x), lo(y));
    let lh = prod(b, lo(x), hi(y));
    let hl = prod(b, hi(x), lo(y));
    let hh = prod(b, hi(x), hi(y));
    let widen = |b: &mut Builder, v: Opnd| {
        let t = b.vreg(Type::UQ, 1);
        b.mov(t, v);
        t
    };
    let mid = widen(b, hi(ll));
    let t = widen(b, lo(lh));
    b.alu2(O::Add, mid, mid, t);
    let t = widen(b, lo(hl));
    b.alu2(O::Add, mid, mid, t);
    let r = b.vreg(Type::UQ, 1);
    let t = widen(b, hi(lh));
    b.alu2(O::Add, r, hh, t);
    let t = widen(b, hi(hl));
    b.alu2(O::Add, r, r, t);
    let t = widen(b, hi(mid));
    b.alu2(O::Add, r, r, t);
    b.mov(d.retype(Type::UQ), r);
}

/// Unsigned 64-bit division by restoring long division, one quotient bit per step in a
/// 64-iteration loop with predicated updates: for i = 63..0, if (n >> i) >= d then n -= d << i and set bit i
/// of the quotient; n is then the remainder. Division by zero gives an all-ones quotient
/// and the dividend as remainder (as the math unit's 32-bit INT DIV).
fn udivmod(b: &mut Builder, qo: Option<Opnd>, ro: Option<Opnd>, n: Opnd, dv: Opnd) {
    let r = b.vreg(Type::UQ, 1);
    b.mov(r, n);
    let dv = if dv.is_imm() {
        let t = b.vreg(Type::UQ, 1);
        b.mov(t, dv);
        t
    } else {
        dv
    };
    let qq = b.vreg(Type::UQ, 1);
    b.mov(qq, Opnd::imm(Type::UQ, 0));
    let t = b.vreg(Type::UQ, 1);
    let sh = b.vreg(Type::UQ, 1);
    let one = b.vreg(Type::UQ, 1);
    b.mov(one, Opnd::imm(Type::UQ, 1));
    let i = b.vreg(Type::D, 1);
    b.mov(i, Opnd::d(63));
    let c = b.vreg(Type::UQ, 1);
    // A uniform loop (every channel runs 64 steps): the unrolled form is ~60 KB of code
    // per division.
    b.control(LOp::Do);
    b.mov(c, i.retype(Type::UD));
    b.alu2(O::Shr, t, r, c);
    b.cmp(CondMod::Ge, Opnd::null(Type::UQ), t, dv);
    b.alu2(O::Shl, sh, dv, c);
    b.alu2(O::Add, r, r, sh.negate()).pred = p();
    b.alu2(O::Shl, sh, one, c);
    b.alu2(O::Or, qq, qq, sh).pred = p();
    b.alu2(O::Add, i, i, Opnd::d(-1)).cmod = CondMod::Ge;
    b.control(LOp::While).pred = p();
    if let Some(q) = qo {
        b.mov(q.retype(Type::UQ), qq);
    }
    if let Some(x) = ro {
        b.mov(x.retype(Type::UQ), r);
    }
}

/// Loads `comps` 64-bit components from `addr` into `dst` (component c at
/// `c * comp_stride`): untyped dword reads of at most two components each, then the lo/hi
/// dwords interleaved with strided moves.
pub fn load64(b: &mut Builder, surf: Surface, addr: Opnd, dst: Opnd, comps: u32, comp_stride: u32) {
    let w = b.exec as u32;
    let mut c = 0;
    while c < comps {
        let n = (comps - c).min(2);
        let a = chunk_addr(b, surf, addr, c);
        let t = b.vreg(Type::UD, 2 * n);
        b.inst(
            LOp::UntypedRead {
                surf,
                comps: 2 * n as u8,
                comp_stride: 4 * w,
            },
            t,
            vec![a],
        );
        for j in 0..n {
            let o = dst.offset((c + j) * comp_stride);
            b.mov(lo(o), t.offset(2 * j * 4 * w));
            b.mov(hi(o), t.offset((2 * j + 1) * 4 * w));
        }
        c += n;
    }
}

/// Stores `comps` 64-bit components of `src` (immediate or register, component c at
/// `c * comp_stride`) at `addr`.
pub fn store64(b: &mut Builder, surf: Surface, addr: Opnd, src: &[Opnd]) {
    let w = b.exec as u32;
    let comps = src.len() as u32;
    let mut c = 0;
    while c < comps {
        let n = (comps - c).min(2);
        let a = chunk_addr(b, surf, addr, c);
        let t = b.vreg(Type::UD, 2 * n);
        for j in 0..n {
            let o = src[(c + j) as usize];
            b.mov(t.offset(2 * j * 4 * w), lo(o));
            b.mov(t.offset((2 * j + 1) * 4 * w), hi(o));
        }
        b.inst(
            LOp::UntypedWrite {
                surf,
                comps: 2 * n as u8,
                comp_stride: 4 * w,
            },
            Opnd::null(Type::UD),
            vec![a, t],
        );
        c += n;
    }
}

fn chunk_addr(b: &mut Builder, surf: Surface, addr: Opnd, c: u32) -> Opnd {
    b.addr_add(surf, addr, 8 * c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// What the hardware computes for `x / y` from y's [`SplitRecip`]: x times pre, the
    /// product x * lo, the DF MAD x * hi + t (one rounding), the product with post; each
    /// as IEEE rounds it to nearest with denormals (Rust's f64).
    fn split_div(x: f64, s: SplitRecip) -> f64 {
        let x = x * s.pre;
        let q = if s.lo == 0.0 {
            x * s.hi
        } else {
            x.mul_add(s.hi, x * s.lo)
        };
        q * s.post
    }

    /// Distance in ULPs of two doubles (0 for two NaNs, u64::MAX across signs).
    fn ulps(a: f64, b: f64) -> u64 {
        if (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits() {
            return 0;
        }
        if a.is_sign_negative() != b.is_sign_negative() || a.is_nan() || b.is_nan() {
            return u64::MAX;
        }
        a.to_bits().abs_diff(b.to_bits())
    }

    /// A double of any sign and exponent field (finite).
    fn any(rng: &mut Rng) -> f64 {
        let b = rng.next_u64();
        let v = f64::from_bits(b);
        if v.is_finite() {
            v
        } else {
            f64::from_bits(b & !(1 << 62))
        }
    }

    fn divisors(rng: &mut Rng) -> Vec<f64> {
        let mut ys = vec![
            0.1,
            -3.0,
            7.0,
            1.2345e300,
            -6.5e-300,
            1.348269851146737e308,
            1.5e-323,
            5e-324,
            f64::MAX,
            -f64::MIN_POSITIVE,
            f64::MIN_POSITIVE * 1.5,
            2f64.powi(1023),
            2f64.powi(-1022),
            2f64.powi(-1074),
            2f64.powi(-1073) * 3.0,
            2f64.powi(969),
            2f64.powi(970) * 1.75,
            f64::from_bits(0x3FFF_FFFF_FFFF_FFFF),
            f64::from_bits(0x0000_0000_0000_0003),
            f64::from_bits(0x000F_FFFF_FFFF_FFFF),
        ];
        ys.extend((0..300).map(|_| any(rng)));
        ys
    }

    /// Dividends of every class for divisor y: random doubles, tiny and denormal ones,
    /// ones whose quotient is tiny (below 2^-1021, where the bound is loosest), near
    /// overflow, and the specials.
    fn dividends(rng: &mut Rng, y: f64) -> Vec<f64> {
        let mut xs = vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            -f64::MAX,
            5e-324,
            -5e-324,
            f64::MIN_POSITIVE,
        ];
        for _ in 0..600 {
            let r = rng.next_u64();
            xs.push(any(rng));
            // Denormal and tiny normal dividends.
            xs.push(f64::from_bits(r >> (r % 64) as u32 & !(0x7FF << 52)));
            // Quotients near 2^-1074 .. 2^-1019 and near the largest double.
            let q = f64::from_bits(r & 0x001F_FFFF_FFFF_FFFF | (r % 4) << 52);
            xs.push(q * y);
            xs.push(f64::MAX * f64::from_bits(0x3FE0_0000_0000_0000 | r >> 12) * y.abs());
        }
        xs
    }

    /// Every pair [`split_recip`] gives is normal, lo has hi's sign, and hi + lo is 1/Y
    /// to within 2^-104 relatively (its residual 1 - Y * (hi + lo) is below 2^-104).
    #[test]
    fn split_recip_pairs_are_normal_same_signed_and_tight() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for y in divisors(&mut rng) {
            let s = split_recip(y).unwrap_or_else(|| panic!("{y:e}"));
            assert!(s.hi.is_normal(), "{y:e}: {s:?}");
            assert!(s.lo == 0.0 || s.lo.is_normal(), "{y:e}: {s:?}");
            assert!(
                s.lo == 0.0 || s.lo.signum() == s.hi.signum(),
                "{y:e}: {s:?}"
            );
            for scale in [s.pre, s.post] {
                assert!(
                    scale.is_normal() && scale.log2().fract() == 0.0,
                    "{y:e}: {s:?}"
                );
            }
            assert!(s.pre == 1.0 || s.post == 1.0, "{y:e}: {s:?}");
            // y = Y * 2^j, pre = 2^-j (j < 0) or post = 2^-j (j > 0).
            let yy = y * s.pre * s.post;
            assert!(s.post == 1.0 || yy.abs() >= 1.0, "{y:e}: {s:?}");
            assert!(s.pre == 1.0 || yy.abs() < 1.0, "{y:e}: {s:?}");
            let e = (-s.hi).mul_add(yy, 1.0);
            let residual = (-s.lo).mul_add(yy, e);
            assert!(
                residual.abs() <= 2f64.powi(-104),
                "{y:e}: {s:?} {residual:e}"
            );
        }
        for y in [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            assert_eq!(split_recip(y), None);
        }
    }

    /// The sequence is within an ULP of the correctly rounded quotient for every class
    /// of dividend and divisor, exact for zeros, infinities, NaN and overflow; and it is
    /// the correctly rounded quotient for almost every result from 2^-968 up (where
    /// x * lo does not underflow).
    #[test]
    fn split_quotients_are_within_an_ulp() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let (mut normal, mut rounded) = (0u64, 0u64);
        for y in divisors(&mut rng) {
            let s = split_recip(y).expect("finite nonzero");
            for x in dividends(&mut rng, y) {
                let (got, want) = (split_div(x, s), x / y);
                let d = ulps(got, want);
                let special = want == 0.0 || !want.is_finite();
                assert!(
                    if special { d == 0 } else { d <= 1 },
                    "{x:e} ({:#x}) / {y:e}: got {got:e} want {want:e} ({d} ulps)",
                    x.to_bits()
                );
                // Where x * lo does not underflow.
                if want.is_finite() && want.abs() >= 2f64.powi(-968) {
                    normal += 1;
                    rounded += (d == 0) as u64;
                }
            }
        }
        assert!(normal > 100_000, "{normal}");
        assert!(rounded * 10_000 >= normal * 9_999, "{rounded} of {normal}");
    }
}
