//! Reference semantics of the Gen9 ALU, one lane at a time, written independently of
//! [`crate::gpu::eu`] (it shares no code with the simulator's execution path, so a test
//! comparing the two can fail). Half floats go through the `half` crate here, while the EU
//! has its own conversion; directed rounding is done with `next_up`/`next_down` here and
//! with bit stepping there.
//!
//! Semantics (the PRM's, and where the PRM is silent the simulator's documented choice):
//! * The execution type is DF if any source is DF, F if any source is a float, otherwise
//!   integer (computed exactly, then wrapped or saturated to the destination).
//! * Float sources: denormals flush to a same-signed zero unless cr0's preserve bit for
//!   their type is set (not for a raw MOV); then `abs`, then `negate`. On AND/OR/XOR/NOT,
//!   `negate` is bitwise NOT.
//! * Float results: cr0 rounding mode (MAD is fused; DF results too, decided exactly in
//!   fixed point), flush of denormal results,
//!   saturation clamps to [0, 1] (NaN -> 0). Float to integer: toward zero, saturating,
//!   NaN -> 0. Integer to integer: wraps, or clamps with `.sat`.
//! * Conditional modifiers test the written destination value (CMP/CMPN: the comparison).

use ferrite_isa::{CondMod, MathFunction, Opcode, Type};
use half::f16;

/// cr0 rounding mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    NearestEven,
    Up,
    Down,
    TowardZero,
}

/// Float environment: rounding and denormal preservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Env {
    pub rounding: Rounding,
    pub keep_f16_denorms: bool,
    pub keep_f32_denorms: bool,
    pub keep_f64_denorms: bool,
}

impl Env {
    /// The environment cr0.0 = `cr0` selects (docs/gen9.md 2.10).
    pub fn from_cr0(cr0: u32) -> Env {
        let rounding = [
            Rounding::NearestEven,
            Rounding::Up,
            Rounding::Down,
            Rounding::TowardZero,
        ][((cr0 >> 4) & 3) as usize];
        Env {
            rounding,
            keep_f64_denorms: (cr0 >> 6) & 1 == 1,
            keep_f32_denorms: (cr0 >> 7) & 1 == 1,
            keep_f16_denorms: (cr0 >> 10) & 1 == 1,
        }
    }
}

/// One lane of one source operand.
#[derive(Clone, Copy, Debug)]
pub struct Operand {
    pub ty: Type,
    pub bits: u64,
    pub negate: bool,
    pub abs: bool,
}

impl Operand {
    pub fn new(ty: Type, bits: u64) -> Operand {
        Operand {
            ty,
            bits,
            negate: false,
            abs: false,
        }
    }
}

/// Expected result of one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    /// Destination bits (low `size` bytes meaningful).
    pub bits: u64,
    /// Flag bit written by the conditional modifier, if any.
    pub flag: Option<bool>,
    /// Destination bits of the accumulator (ADDC/SUBB carry, MACH low half), if written.
    pub acc: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum V {
    I(i128),
    F(f32),
    D(f64),
}

fn is_float(t: Type) -> bool {
    matches!(t, Type::HF | Type::F | Type::DF)
}

fn signed(t: Type) -> bool {
    matches!(t, Type::B | Type::W | Type::D | Type::Q)
}

fn width_bits(t: Type) -> u32 {
    match t {
        Type::UB | Type::B => 8,
        Type::UW | Type::W | Type::HF => 16,
        Type::UD | Type::D | Type::F => 32,
        _ => 64,
    }
}

fn int_value(t: Type, bits: u64) -> i128 {
    let w = width_bits(t);
    let masked = if w == 64 {
        bits
    } else {
        bits & ((1u64 << w) - 1)
    };
    if signed(t) && (masked >> (w - 1)) & 1 == 1 {
        masked as i128 - (1i128 << w)
    } else {
        masked as i128
    }
}

fn int_bounds(t: Type) -> (i128, i128) {
    let w = width_bits(t);
    if signed(t) {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

fn flush32(x: f32, keep: bool) -> f32 {
    if !keep && x != 0.0 && x.abs() < f32::MIN_POSITIVE {
        0.0f32.copysign(x)
    } else {
        x
    }
}

fn flush64(x: f64, keep: bool) -> f64 {
    if !keep && x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        0.0f64.copysign(x)
    } else {
        x
    }
}

/// Rounds an exact-enough f64 to f32 in `r` (next_up/next_down based).
fn to_f32(x: f64, r: Rounding) -> f32 {
    let n = x as f32;
    if x.is_nan() || (n as f64) == x {
        return n;
    }
    let below = if (n as f64) < x { n } else { n.next_down() };
    let above = if (n as f64) > x { n } else { n.next_up() };
    pick(r, x > 0.0, n, below, above)
}

/// What rounding mode `r` makes of an inexact value (`positive`: its sign) given its nearest
/// neighbour and the neighbours below and above it.
fn pick<T>(r: Rounding, positive: bool, nearest: T, below: T, above: T) -> T {
    match r {
        Rounding::NearestEven => nearest,
        Rounding::Up => above,
        Rounding::Down => below,
        Rounding::TowardZero => {
            if positive {
                below
            } else {
                above
            }
        }
    }
}

/// An integer to a float in `r` (exact decision through i128 comparisons); the same for f32
/// and f64.
macro_rules! int_to_float {
    ($name:ident, $t:ty) => {
        fn $name(v: i128, r: Rounding) -> $t {
            let n = v as $t;
            let back = n as i128;
            if back == v || n.is_infinite() {
                return n;
            }
            let below = if back < v { n } else { n.next_down() };
            let above = if back > v { n } else { n.next_up() };
            pick(r, v > 0, n, below, above)
        }
    };
}
int_to_float!(int_to_f32, f32);
int_to_float!(int_to_f64, f64);

/// A finite double as (negative, integer significand, exponent): x = +-m * 2^e.
fn parts(x: f64) -> (bool, u128, i32) {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7FF) as i32;
    let frac = u128::from(bits & ((1u64 << 52) - 1));
    let (m, e) = if field == 0 {
        (frac, -1074)
    } else {
        (frac + (1u128 << 52), field - 1075)
    };
    (bits >> 63 != 0, m, e)
}

/// Sign of the exact sum of terms +-m * 2^e: 32-bit limbs of a fixed point with unit
/// 2^-2240, accumulated signed, then carried from the bottom (the final carry is the sign).
fn exact_sum_sign(terms: &[(bool, u128, i32)]) -> std::cmp::Ordering {
    let mut limbs = vec![0i128; 150];
    for &(neg, m, e) in terms {
        let at = (e + 2240) as usize;
        let (q, r) = (at / 32, at % 32);
        for k in 0..4 {
            let piece = ((m >> (32 * k)) & 0xFFFF_FFFF) << r;
            let (lo, hi) = ((piece & 0xFFFF_FFFF) as i128, (piece >> 32) as i128);
            let sign = if neg { -1 } else { 1 };
            limbs[q + k] += sign * lo;
            limbs[q + k + 1] += sign * hi;
        }
    }
    let mut carry = 0i128;
    let mut any = false;
    for l in limbs.iter_mut() {
        let v = *l + carry;
        *l = v.rem_euclid(1 << 32);
        carry = v.div_euclid(1 << 32);
        any |= *l != 0;
    }
    match (carry.signum(), any) {
        (-1, _) => std::cmp::Ordering::Less,
        (0, false) => std::cmp::Ordering::Equal,
        _ => std::cmp::Ordering::Greater,
    }
}

/// A DF result in rounding mode `r`: `n` is the round-to-nearest-even result of the exact
/// value `terms` (finite inputs); the exact value's side of `n` picks the neighbour.
fn directed_df(n: f64, terms: &[(bool, u128, i32)], finite: bool, r: Rounding) -> f64 {
    use std::cmp::Ordering::*;
    if r == Rounding::NearestEven || !finite || n.is_nan() {
        return n;
    }
    let side = if n.is_infinite() {
        if n > 0.0 {
            Less
        } else {
            Greater
        }
    } else {
        let (neg, m, e) = parts(n);
        let mut t = terms.to_vec();
        t.push((!neg, m, e));
        exact_sum_sign(&t)
    };
    match (r, side) {
        (Rounding::Up, Greater) => n.next_up(),
        (Rounding::Down, Less) => n.next_down(),
        (Rounding::TowardZero, Less) if n > 0.0 => n.next_down(),
        (Rounding::TowardZero, Greater) if n < 0.0 => n.next_up(),
        _ => n,
    }
}

/// a * b as an exact term.
fn product(a: f64, b: f64) -> (bool, u128, i32) {
    let (na, ma, ea) = parts(a);
    let (nb, mb, eb) = parts(b);
    (na ^ nb, ma * mb, ea + eb)
}

/// Value of a source lane in the execution domain `dom` ('i', 'f', 'd').
fn load(o: &Operand, dom: char, env: &Env, raw_mov: bool, logic: bool) -> V {
    let r = env.rounding;
    let v = match (dom, o.ty) {
        ('f', Type::F) => V::F(f32::from_bits(o.bits as u32)),
        ('f', Type::HF) => V::F(f16::from_bits(o.bits as u16).to_f32()),
        ('f', t) => V::F(int_to_f32(int_value(t, o.bits), r)),
        ('d', Type::DF) => V::D(f64::from_bits(o.bits)),
        ('d', Type::F) => V::D(f32::from_bits(o.bits as u32) as f64),
        ('d', Type::HF) => V::D(f16::from_bits(o.bits as u16).to_f64()),
        ('d', t) => V::D(int_to_f64(int_value(t, o.bits), r)),
        (_, Type::F) => V::I(f32::from_bits(o.bits as u32) as i64 as i128),
        (_, Type::DF) => V::I(f64::from_bits(o.bits) as i64 as i128),
        (_, Type::HF) => V::I(f16::from_bits(o.bits as u16).to_f32() as i64 as i128),
        (_, t) => V::I(int_value(t, o.bits)),
    };
    let v = if raw_mov {
        v
    } else {
        match v {
            V::F(x) => V::F(flush32(
                x,
                if o.ty == Type::HF {
                    env.keep_f16_denorms
                } else {
                    env.keep_f32_denorms
                },
            )),
            V::D(x) if o.ty == Type::F => {
                if !env.keep_f32_denorms && (x as f32).is_subnormal() {
                    V::D(0.0f64.copysign(x))
                } else {
                    V::D(x)
                }
            }
            V::D(x) if o.ty == Type::DF => V::D(flush64(x, env.keep_f64_denorms)),
            other => other,
        }
    };
    let v = if o.abs {
        match v {
            V::I(i) => V::I(i.abs()),
            V::F(x) => V::F(x.abs()),
            V::D(x) => V::D(x.abs()),
        }
    } else {
        v
    };
    if o.negate {
        match v {
            V::I(i) if logic => V::I(!i),
            V::I(i) => V::I(-i),
            V::F(x) => V::F(-x),
            V::D(x) => V::D(-x),
        }
    } else {
        v
    }
}

impl V {
    fn i(self) -> i128 {
        match self {
            V::I(i) => i,
            V::F(x) => x as i64 as i128,
            V::D(x) => x as i64 as i128,
        }
    }
    fn f(self) -> f32 {
        match self {
            V::F(x) => x,
            V::D(x) => x as f32,
            V::I(i) => i as f32,
        }
    }
    fn d(self) -> f64 {
        match self {
            V::D(x) => x,
            V::F(x) => x as f64,
            V::I(i) => i as f64,
        }
    }
}

/// Stores a domain value into `ty`. Returns (bits, overflowed).
fn store(v: V, ty: Type, sat: bool, env: &Env) -> (u64, bool) {
    let sat01 = |x: f64| -> f64 {
        if x.is_nan() || x <= 0.0 {
            0.0
        } else if x > 1.0 {
            1.0
        } else {
            x
        }
    };
    // The value as f32 in the rounding mode, saturated if asked (F and HF).
    let single = || -> f32 {
        let x = match v {
            V::F(x) => x,
            V::D(x) => to_f32(x, env.rounding),
            V::I(i) => int_to_f32(i, env.rounding),
        };
        if sat {
            sat01(x as f64) as f32
        } else {
            x
        }
    };
    match ty {
        Type::F => {
            let x = flush32(single(), env.keep_f32_denorms);
            (x.to_bits() as u64, x.is_infinite())
        }
        Type::HF => {
            let h = f16::from_f32(single());
            let h = if !env.keep_f16_denorms
                && h.is_finite()
                && !h.is_normal()
                && h.to_bits() & 0x7FFF != 0
            {
                if h.is_sign_negative() {
                    f16::NEG_ZERO
                } else {
                    f16::ZERO
                }
            } else {
                h
            };
            (h.to_bits() as u64, h.is_infinite())
        }
        Type::DF => {
            let x = match v {
                V::D(x) => x,
                V::F(x) => x as f64,
                V::I(i) => int_to_f64(i, env.rounding),
            };
            let x = if sat { sat01(x) } else { x };
            let x = flush64(x, env.keep_f64_denorms);
            (x.to_bits(), x.is_infinite())
        }
        t => {
            let (lo, hi) = int_bounds(t);
            match v {
                V::I(i) => {
                    let out = i < lo || i > hi;
                    let i = if sat { i.max(lo).min(hi) } else { i };
                    (i as u64 & mask_of(t), out)
                }
                V::F(_) | V::D(_) => {
                    let x = v.d();
                    if x.is_nan() {
                        return (0, true);
                    }
                    let t_ = x.trunc();
                    let i = if t_ < lo as f64 {
                        lo
                    } else if t_ > hi as f64 {
                        hi
                    } else {
                        t_ as i128
                    };
                    (i as u64 & mask_of(t), t_ < lo as f64 || t_ > hi as f64)
                }
            }
        }
    }
}

fn mask_of(t: Type) -> u64 {
    let w = width_bits(t);
    if w == 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

fn compare(cm: CondMod, a: V, b: V, exec_int: Type) -> bool {
    match (a, b) {
        (V::I(x), V::I(y)) => ordering(cm, x, y).unwrap_or_else(|| match cm {
            CondMod::O => {
                let (lo, hi) = int_bounds(exec_int);
                !(lo..=hi).contains(&(x - y))
            }
            _ => false,
        }),
        _ => {
            let (x, y) = (a.d(), b.d());
            ordering(cm, x, y).unwrap_or_else(|| match cm {
                CondMod::U => x.is_nan() || y.is_nan(),
                CondMod::O => x.is_finite() && y.is_finite() && (x - y).is_infinite(),
                _ => false,
            })
        }
    }
}

/// Z, NZ, G, GE, L and LE of `x` against `y`, in either domain; `None` for the modifiers
/// whose meaning depends on the domain (O, U) and for none.
fn ordering<T: PartialOrd>(cm: CondMod, x: T, y: T) -> Option<bool> {
    Some(match cm {
        CondMod::Z => x == y,
        CondMod::Nz => x != y,
        CondMod::G => x > y,
        CondMod::Ge => x >= y,
        CondMod::L => x < y,
        CondMod::Le => x <= y,
        _ => return None,
    })
}

fn test_result(cm: CondMod, ty: Type, bits: u64, overflow: bool) -> bool {
    if is_float(ty) {
        let x = match ty {
            Type::HF => f16::from_bits(bits as u16).to_f64(),
            Type::F => f32::from_bits(bits as u32) as f64,
            _ => f64::from_bits(bits),
        };
        ordering(cm, x, 0.0).unwrap_or(match cm {
            CondMod::U => x.is_nan(),
            CondMod::O => overflow || x.is_infinite(),
            _ => false,
        })
    } else {
        ordering(cm, int_value(ty, bits), 0).unwrap_or(cm == CondMod::O && overflow)
    }
}

/// Inputs of one lane beyond the sources.
#[derive(Clone, Copy, Debug)]
pub struct Lane {
    /// Predicate bit (SEL chooses src0 when set).
    pub pred: bool,
    /// Accumulator value (in the destination type) for MAC.
    pub acc: u64,
}

/// Expected result of `op` on one lane. `Err` for an opcode/type combination the reference
/// does not define (the caller should not test it).
pub fn alu(
    op: Opcode,
    cmod: CondMod,
    sat: bool,
    dst_ty: Type,
    srcs: &[Operand],
    lane: Lane,
    env: &Env,
) -> Result<Expected, String> {
    let dom = if srcs.iter().any(|s| s.ty == Type::DF) {
        'd'
    } else if srcs.iter().any(|s| is_float(s.ty)) {
        'f'
    } else {
        'i'
    };
    let logic = matches!(op, Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Not);
    let raw_mov =
        op == Opcode::Mov && !sat && srcs[0].ty == dst_ty && !srcs[0].negate && !srcs[0].abs;
    let s: Vec<V> = srcs
        .iter()
        .map(|o| load(o, dom, env, raw_mov, logic))
        .collect();
    let rm = env.rounding;
    let exec_int = {
        let wide = srcs.iter().any(|o| width_bits(o.ty) == 64);
        let sg = srcs.iter().any(|o| signed(o.ty));
        match (wide, sg) {
            (true, true) => Type::Q,
            (true, false) => Type::UQ,
            (false, true) => Type::D,
            (false, false) => Type::UD,
        }
    };
    if matches!(op, Opcode::Cmp | Opcode::Cmpn) {
        let nan = |v: V| matches!(v, V::F(x) if x.is_nan()) || matches!(v, V::D(x) if x.is_nan());
        let c = if op == Opcode::Cmpn && (nan(s[0]) || nan(s[1])) {
            nan(s[1])
        } else {
            compare(cmod, s[0], s[1], exec_int)
        };
        return Ok(Expected {
            bits: if c { mask_of(dst_ty) } else { 0 },
            flag: (cmod != CondMod::None).then_some(c),
            acc: None,
        });
    }
    let fbin = |f: fn(f64, f64) -> f64| -> V {
        match dom {
            'f' => {
                let e = f(s[0].f() as f64, s[1].f() as f64);
                V::F(to_f32(e, rm))
            }
            _ => V::D(f(s[0].d(), s[1].d())),
        }
    };
    let un = |ff: fn(f32) -> f32, fd: fn(f64) -> f64| -> V {
        match dom {
            'f' => V::F(ff(s[0].f())),
            _ => V::D(fd(s[0].d())),
        }
    };
    let pick_minmax = |a: V, b: V| -> V {
        let nan = |v: V| match v {
            V::F(x) => x.is_nan(),
            V::D(x) => x.is_nan(),
            V::I(_) => false,
        };
        if nan(a) {
            b
        } else if nan(b) || compare(cmod, a, b, Type::Q) {
            a
        } else {
            b
        }
    };
    let u32of = |v: V| v.i() as u64 as u32;
    let mut acc = None;
    let result: V = match (op, dom) {
        (Opcode::Mov, _) => s[0],
        (Opcode::Sel, _) => {
            if cmod == CondMod::None {
                if lane.pred {
                    s[0]
                } else {
                    s[1]
                }
            } else {
                pick_minmax(s[0], s[1])
            }
        }
        (Opcode::Csel, _) => {
            let zero = match s[2] {
                V::I(_) => V::I(0),
                V::F(_) => V::F(0.0),
                V::D(_) => V::D(0.0),
            };
            if compare(cmod, s[2], zero, Type::Q) {
                s[0]
            } else {
                s[1]
            }
        }
        (Opcode::Add, 'i') => V::I(s[0].i() + s[1].i()),
        (Opcode::Add, 'f') if rm == Rounding::NearestEven => V::F(s[0].f() + s[1].f()),
        (Opcode::Add, 'd') => {
            let (a, b) = (s[0].d(), s[1].d());
            let fin = a.is_finite() && b.is_finite();
            V::D(directed_df(a + b, &[parts(a), parts(b)], fin, rm))
        }
        (Opcode::Mul, 'd') => {
            let (a, b) = (s[0].d(), s[1].d());
            let fin = a.is_finite() && b.is_finite();
            V::D(directed_df(a * b, &[product(a, b)], fin, rm))
        }
        (Opcode::Add, _) => fbin(|a, b| a + b),
        (Opcode::Mul, 'i') => V::I(s[0].i().wrapping_mul(s[1].i())),
        (Opcode::Mul, _) => fbin(|a, b| a * b),
        (Opcode::Mad, 'i') => V::I(s[0].i().wrapping_add(s[1].i().wrapping_mul(s[2].i()))),
        (Opcode::Mad, 'f') => {
            if rm == Rounding::NearestEven {
                V::F(s[1].f().mul_add(s[2].f(), s[0].f()))
            } else {
                V::F(to_f32(
                    (s[1].f() as f64).mul_add(s[2].f() as f64, s[0].f() as f64),
                    rm,
                ))
            }
        }
        (Opcode::Mad | Opcode::Madm, 'd') => {
            let (c, a, b) = (s[0].d(), s[1].d(), s[2].d());
            let fin = a.is_finite() && b.is_finite() && c.is_finite();
            V::D(directed_df(
                a.mul_add(b, c),
                &[product(a, b), parts(c)],
                fin,
                rm,
            ))
        }
        (Opcode::Lrp, 'f') => {
            let a = s[0].f() as f64;
            V::F(to_f32(
                a * s[1].f() as f64 + (1.0 - a) * s[2].f() as f64,
                rm,
            ))
        }
        (Opcode::Avg, 'i') => V::I((s[0].i() + s[1].i() + 1).div_euclid(2)),
        (Opcode::Frc, _) => un(|x| x - x.floor(), |x| x - x.floor()),
        (Opcode::Rndd, _) => un(f32::floor, f64::floor),
        (Opcode::Rndu, _) => un(f32::ceil, f64::ceil),
        (Opcode::Rndz, _) => un(f32::trunc, f64::trunc),
        (Opcode::Rnde, _) => un(f32::round_ties_even, f64::round_ties_even),
        (Opcode::Not, 'i') => V::I(!s[0].i()),
        (Opcode::And, 'i') => V::I(s[0].i() & s[1].i()),
        (Opcode::Or, 'i') => V::I(s[0].i() | s[1].i()),
        (Opcode::Xor, 'i') => V::I(s[0].i() ^ s[1].i()),
        (Opcode::Shl | Opcode::Shr | Opcode::Asr, 'i') => {
            let w = width_bits(srcs[0].ty);
            let count_mask = if exec_int == Type::Q || exec_int == Type::UQ {
                63
            } else {
                31
            };
            let n = (s[1].i() as u64 & count_mask) as u32;
            let bits = srcs[0].bits & mask_of(srcs[0].ty);
            let bits = if srcs[0].negate || srcs[0].abs {
                s[0].i() as u64 & mask_of(srcs[0].ty)
            } else {
                bits
            };
            match op {
                Opcode::Shl => V::I((s[0].i() as u128).wrapping_shl(n) as i128),
                Opcode::Shr => V::I((bits as u128 >> n) as i128),
                _ => {
                    // Arithmetic: the top bit of src0's width is the sign.
                    let v = if (bits >> (w - 1)) & 1 == 1 {
                        bits as i128 - (1i128 << w)
                    } else {
                        bits as i128
                    };
                    V::I(v >> n)
                }
            }
        }
        (Opcode::Bfrev, 'i') => V::I(u32of(s[0]).reverse_bits() as i128),
        (Opcode::Cbit, 'i') => V::I((s[0].i() as u64 & mask_of(srcs[0].ty)).count_ones() as i128),
        (Opcode::Lzd, 'i') => V::I(u32of(s[0]).leading_zeros() as i128),
        (Opcode::Fbl, 'i') => {
            let x = u32of(s[0]);
            V::I(if x == 0 {
                0xFFFF_FFFF
            } else {
                x.trailing_zeros() as i128
            })
        }
        (Opcode::Fbh, 'i') => {
            let x = u32of(s[0]);
            let x = if signed(srcs[0].ty) && x >> 31 == 1 {
                !x
            } else {
                x
            };
            V::I(if x == 0 {
                0xFFFF_FFFF
            } else {
                x.leading_zeros() as i128
            })
        }
        (Opcode::Bfe, 'i') => {
            let width = u32of(s[0]) % 32;
            let offset = u32of(s[1]) % 32;
            let v = u32of(s[2]);
            if width == 0 {
                V::I(0)
            } else {
                let top = (width + offset).min(32);
                let field = ((v as u64) >> offset) & ((1u64 << (top - offset)) - 1);
                let fw = top - offset;
                if signed(srcs[2].ty) && (field >> (fw - 1)) & 1 == 1 {
                    V::I(field as i128 - (1i128 << fw))
                } else {
                    V::I(field as i128)
                }
            }
        }
        (Opcode::Bfi1, 'i') => {
            let width = u32of(s[0]) % 32;
            let offset = u32of(s[1]) % 32;
            let m = (1u64 << width) - 1;
            V::I(((m << offset) & 0xFFFF_FFFF) as i128)
        }
        (Opcode::Bfi2, 'i') => {
            let (m, a, b) = (s[0].i(), s[1].i(), s[2].i());
            V::I((m & a) | (!m & b))
        }
        (Opcode::Addc, 'i') => {
            let sum = u32of(s[0]) as u64 + u32of(s[1]) as u64;
            acc = Some(sum >> 32);
            V::I(sum as i128)
        }
        (Opcode::Subb, 'i') => {
            let (a, b) = (u32of(s[0]), u32of(s[1]));
            acc = Some((a < b) as u64);
            V::I(a as i128 - b as i128)
        }
        (Opcode::Mac, 'i') => V::I(
            s[0].i()
                .wrapping_mul(s[1].i())
                .wrapping_add(int_value(dst_ty, lane.acc)),
        ),
        (Opcode::Mac, 'f') => V::F(to_f32(
            (s[0].f() as f64).mul_add(s[1].f() as f64, f32::from_bits(lane.acc as u32) as f64),
            rm,
        )),
        (Opcode::Mach, 'i') => {
            let p = s[0].i().wrapping_mul(s[1].i());
            acc = Some(p as u64 & 0xFFFF_FFFF);
            V::I(p >> 32)
        }
        _ => return Err(format!("no reference for {op} in domain {dom}")),
    };
    let (bits, overflow) = if raw_mov {
        (srcs[0].bits & mask_of(dst_ty), false)
    } else {
        store(result, dst_ty, sat, env)
    };
    let flag = match (op, cmod) {
        (_, CondMod::None) | (Opcode::Sel | Opcode::Csel, _) => None,
        _ => Some(test_result(cmod, dst_ty, bits, overflow)),
    };
    Ok(Expected { bits, flag, acc })
}

/// Documented precision of a math function result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// Exact (bit for bit, NaN matches any NaN).
    Exact,
    /// Units in the last place of f32.
    Ulp(u32),
    /// |actual - expected| <= abs, or relative error <= rel.
    AbsRel { abs: f64, rel: f64 },
}

/// Expected value of a single-precision math function and its tolerance.
///
/// Tolerances: the SKL PRM's "Extended Math" precision table as summarized in the report
/// (INV, SQRT, FDIV 1 ULP; RSQ 2 ULP; LOG absolute 2^-21 inside [0.5, 2], else relative
/// 2^-21; EXP relative 2^-21 (2 ULP); SIN/COS absolute 2^-21 within |x| <= 100*pi;
/// POW relative 2^-20). Values outside those ranges are not compared.
pub fn math_f32(f: MathFunction, x: f32, y: f32, env: &Env) -> Option<(f64, Tolerance)> {
    let x = flush32(x, env.keep_f32_denorms) as f64;
    let y = flush32(y, env.keep_f32_denorms) as f64;
    let rel21 = 2f64.powi(-21);
    let keep = env.keep_f32_denorms;
    let flush = move |(v, t): (f64, Tolerance)| {
        if !keep && v != 0.0 && v.abs() < f32::MIN_POSITIVE as f64 {
            (0.0f64.copysign(v), t)
        } else {
            (v, t)
        }
    };
    Some(flush(match f {
        MathFunction::Inv => (1.0 / x, Tolerance::Ulp(1)),
        MathFunction::Sqrt => (x.sqrt(), Tolerance::Ulp(1)),
        MathFunction::Rsq => (1.0 / x.sqrt(), Tolerance::Ulp(2)),
        MathFunction::Fdiv => (x / y, Tolerance::Ulp(1)),
        MathFunction::Log => (
            x.ln() / std::f64::consts::LN_2,
            if (0.5..=2.0).contains(&x) {
                Tolerance::AbsRel {
                    abs: rel21,
                    rel: 0.0,
                }
            } else {
                Tolerance::AbsRel {
                    abs: 0.0,
                    rel: rel21,
                }
            },
        ),
        MathFunction::Exp => (
            (x * std::f64::consts::LN_2).exp(),
            Tolerance::AbsRel {
                abs: 0.0,
                rel: rel21,
            },
        ),
        MathFunction::Sin | MathFunction::Cos => {
            if x.abs() > 100.0 * std::f64::consts::PI {
                return None;
            }
            let v = if f == MathFunction::Sin {
                x.sin()
            } else {
                x.cos()
            };
            (
                v,
                Tolerance::AbsRel {
                    abs: rel21,
                    rel: 0.0,
                },
            )
        }
        MathFunction::Pow => {
            // Negative bases, 0^0 and inf^0 are undefined (GLSL); not compared.
            if x < 0.0 || (y * x.ln()).is_nan() {
                return None;
            }
            (
                (y * x.ln()).exp(),
                Tolerance::AbsRel {
                    abs: 0.0,
                    rel: 2f64.powi(-20),
                },
            )
        }
        _ => return None,
    }))
}

/// Integer division reference: (quotient, remainder) of 32-bit values, with the
/// simulator's documented choices for x/0 (quotient all ones, remainder x) and
/// INT_MIN / -1 (INT_MIN, 0).
pub fn int_divide(a: u32, b: u32, is_signed: bool) -> (u32, u32) {
    if b == 0 {
        return (u32::MAX, a);
    }
    if is_signed {
        let (x, y) = (a as i32 as i64, b as i32 as i64);
        let q = x / y;
        let r = x - q * y;
        (q as u32, r as u32)
    } else {
        (a / b, a % b)
    }
}

/// Does `actual` (f32 bits) satisfy `tol` around `expected`?
pub fn within(expected: f64, actual: f32, tol: Tolerance) -> bool {
    let a = actual as f64;
    if expected.is_nan() {
        return actual.is_nan();
    }
    if expected.is_infinite() || a.is_infinite() {
        return (expected as f32) == actual || a == expected;
    }
    match tol {
        Tolerance::Exact => (expected as f32).to_bits() == actual.to_bits(),
        Tolerance::Ulp(n) => {
            let e = expected as f32;
            if e == actual {
                return true;
            }
            let ulp = (e.abs().next_up() - e.abs()) as f64;
            (a - expected).abs() <= n as f64 * ulp
        }
        Tolerance::AbsRel { abs, rel } => {
            let d = (a - expected).abs();
            d <= abs || d <= rel * expected.abs() || (expected as f32) == actual
        }
    }
}
