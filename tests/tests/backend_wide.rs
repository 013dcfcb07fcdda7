//! 64-bit types (issue 7, native fp64 and int64 on Gen9) through the front end, the
//! middle passes and the back end at SIMD8/16/32 on the simulated GPU, per op, against a
//! Rust reference on edge and seeded random inputs. Skipped when glslangValidator is
//! not installed.
//!
//! Kernels that use DF set cr0 bit 6 (DF denormals preserved), so the reference is plain
//! IEEE f64 with denormals. Operations
//! built from Newton-Raphson (division, reciprocal, sqrt, inversesqrt) are compared
//! within [`ULPS`] (division and reciprocal within [`DIV_ULPS`], on a large operand set in
//! their own test); everything else bit for bit.

mod sim_common;

use ferrite_tests::rng::{XorShift32, XorShift64};
use sim_common::*;

/// Largest distance in units in the last place allowed for sqrt/inversesqrt.
const ULPS: u64 = 2;

/// Division and reciprocal: within an ULP, not necessarily correctly rounded
/// (docs/float-controls.md).
const DIV_ULPS: u64 = 1;

/// Distance in ULPs between two doubles of the same sign (u64::MAX otherwise).
fn ulps(a: f64, b: f64) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    if a == b {
        return 0;
    }
    if a.is_sign_negative() != b.is_sign_negative() || a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    a.to_bits().abs_diff(b.to_bits())
}

/// Deterministic inputs: edge values first, then seeded random doubles with exponents in
/// [-80, 80] (no denormals, products stay normal).
fn doubles(n: usize, seed: u64) -> Vec<f64> {
    let edges = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        3.5,
        0.49999999999999994,
        4503599627370495.5,
        -4503599627370495.5,
        9007199254740993.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e300,
        -1e300,
        1e-300,
        f64::MAX,
        f64::MIN_POSITIVE,
        3.0,
        -7.25,
        123456789.125,
        6.0,
    ];
    let mut rng = XorShift64(seed);
    let mut v: Vec<f64> = Vec::with_capacity(n);
    for i in 0..n {
        if i < edges.len() && seed % 2 == 1 {
            v.push(edges[i]);
            continue;
        }
        let s = rng.next_u64();
        let mant = (s >> 12) | 0x3FF0_0000_0000_0000;
        let e = ((s >> 4) % 161) as i32 - 80;
        let m = f64::from_bits(mant) * if s & 1 == 1 { -1.0 } else { 1.0 };
        v.push(m * 2f64.powi(e));
    }
    v
}

const FP64: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer X { double x[]; };
layout(set=0, binding=1) buffer Y { double y[]; };
layout(set=0, binding=2) buffer O { double o[]; };
layout(set=0, binding=3) buffer I { int n[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    double a = x[i];
    double b = y[i];
    uint k = i * 24u;
    o[k + 0u] = a + b;
    o[k + 1u] = a - b;
    o[k + 2u] = a * b;
    o[k + 3u] = a / b;
    o[k + 4u] = sqrt(a);
    o[k + 5u] = inversesqrt(a);
    o[k + 6u] = 1.0LF / b;
    o[k + 7u] = floor(a);
    o[k + 8u] = ceil(a);
    o[k + 9u] = trunc(a);
    o[k + 10u] = roundEven(a);
    o[k + 11u] = fract(a);
    o[k + 12u] = mod(a, b);
    o[k + 13u] = min(a, b);
    o[k + 14u] = max(a, b);
    o[k + 15u] = abs(a);
    o[k + 16u] = -a;
    o[k + 17u] = sign(a);
    o[k + 18u] = fma(a, b, a);
    o[k + 19u] = double(float(a));
    o[k + 20u] = double(int(clamp(a, -1e9LF, 1e9LF)));
    o[k + 21u] = ldexp(a, int(i) - 32);
    int e;
    o[k + 22u] = frexp(a, e);
    o[k + 23u] = double(uint(clamp(b, 0.0LF, 4e9LF))) + double(float(i) * 0.25);
    int f = 0;
    if (a < b) f |= 1;
    if (a <= b) f |= 2;
    if (a == b) f |= 4;
    if (a != b) f |= 8;
    if (a > b) f |= 16;
    if (a >= b) f |= 32;
    if (isnan(a)) f |= 64;
    if (isinf(a)) f |= 128;
    n[3u * i] = f;
    n[3u * i + 1u] = e;
    uvec2 u = unpackDouble2x32(a);
    n[3u * i + 2u] = int(u.x ^ u.y);
    x[i] = packDouble2x32(uvec2(u.y, u.x));
}";

/// GLSL's mod(a, b) = a - b * floor(a / b), except that a result equal to b is 0: the
/// result lies in [0, b) (or (b, 0]), so where the rounded formula gives b (a negative
/// a of tiny magnitude, or a quotient rounded down at an exact multiple) it must be 0.
fn mod_reference(a: f64, b: f64) -> f64 {
    let r = a - b * (a / b).floor();
    if r == b {
        0.0
    } else {
        r
    }
}

fn fp64_reference(i: usize, a: f64, b: f64) -> [Option<f64>; 24] {
    let m = mod_reference(a, b);
    let (fr_sig, _) = frexp(a);
    let finite = a.is_finite();
    [
        Some(a + b),
        Some(a - b),
        Some(a * b),
        None, // division: checked in ULPs
        None,
        None,
        None,
        Some(a.floor()),
        Some(a.ceil()),
        Some(a.trunc()),
        Some(a.round_ties_even()),
        Some(a - a.floor()),
        Some(m),
        Some(if a.is_nan() {
            b
        } else if b.is_nan() || a < b {
            a
        } else {
            b
        }),
        Some(if a.is_nan() {
            b
        } else if b.is_nan() || a >= b {
            a
        } else {
            b
        }),
        Some(a.abs()),
        Some(-a),
        (!a.is_nan()).then(|| if a == 0.0 { a } else { 1f64.copysign(a) }),
        // One fused DF MAD: a single rounding.
        Some(a.mul_add(b, a)),
        Some((a as f32) as f64),
        (!a.is_nan()).then(|| a.clamp(-1e9, 1e9) as i32 as f64),
        Some(a * 2f64.powi(i as i32 - 32)),
        finite.then_some(fr_sig),
        (!b.is_nan()).then(|| b.clamp(0.0, 4e9) as u32 as f64 + (i as f32 * 0.25) as f64),
    ]
}

fn frexp(a: f64) -> (f64, i32) {
    if a == 0.0 || !a.is_finite() {
        return (a, 0);
    }
    let e = ((a.to_bits() >> 52) & 0x7FF) as i32;
    let sig = f64::from_bits((a.to_bits() & 0x800F_FFFF_FFFF_FFFF) | 0x3FE0_0000_0000_0000);
    (sig, e - 1022)
}

#[test]
fn fp64_ops_match_reference() {
    let mut worst = [0u64; 4];
    let n = 64;
    let xs = doubles(n, 0x9E37_79B9_7F4A_7C15 | 1);
    let mut ys = doubles(n, 0x2545_F491_4F6C_DD1C);
    // A few exact pairs for the comparisons and mod.
    ys[2] = 1.0;
    ys[3] = -1.0;
    ys[8] = 2.5;
    ys[10] = f64::NAN;
    ys[22] = 3.0;
    ys[25] = 0.0;
    ys[0] = -0.0;
    let init = [
        f64_words(&xs),
        f64_words(&ys),
        vec![0; n * 2 * 24],
        vec![0; n * 3],
    ];
    at_each_simd(
        "fp64",
        FP64,
        &Build::default(),
        [4, 1, 1],
        &init,
        |simd, _, bufs| {
            let out = words_f64(&bufs[2]);
            let ints = &bufs[3];
            let swapped = words_u64(&bufs[0]);
            for i in 0..n {
                let (a, b) = (xs[i], ys[i]);
                let want = fp64_reference(i, a, b);
                let got = &out[i * 24..i * 24 + 24];
                let ctx = |j: usize| {
                    format!(
                        "SIMD{simd} lane {i} slot {j}: a={a:e} ({:#x}) b={b:e}",
                        a.to_bits()
                    )
                };
                for (j, w) in want.iter().enumerate() {
                    if let Some(w) = w {
                        expect_f64(got[j], *w, format_args!("{}", ctx(j)));
                    }
                }
                for (slot, want, wi) in [
                    (3usize, a / b, 0usize),
                    (4, a.sqrt(), 1),
                    (5, 1.0 / a.sqrt(), 2),
                    (6, 1.0 / b, 3),
                ] {
                    let d = ulps(got[slot], want);
                    let tol = if slot == 3 || slot == 6 {
                        DIV_ULPS
                    } else {
                        ULPS
                    };
                    assert!(
                        d <= tol,
                        "{}: got {:e} want {:e} ({d} ulps)",
                        ctx(slot),
                        got[slot],
                        want
                    );
                    worst[wi] = worst[wi].max(d);
                }
                let mut f = 0;
                for (bit, c) in [
                    a < b,
                    a <= b,
                    a == b,
                    a != b,
                    a > b,
                    a >= b,
                    a.is_nan(),
                    a.is_infinite(),
                ]
                .into_iter()
                .enumerate()
                {
                    f |= (c as u32) << bit;
                }
                assert_eq!(
                    ints[3 * i],
                    f,
                    "SIMD{simd} lane {i} comparisons a={a:e} b={b:e}"
                );
                if a.is_finite() {
                    assert_eq!(
                        ints[3 * i + 1] as i32,
                        frexp(a).1,
                        "SIMD{simd} lane {i} frexp exp a={a:e}"
                    );
                }
                let bits = a.to_bits();
                assert_eq!(
                    ints[3 * i + 2],
                    (bits as u32) ^ (bits >> 32) as u32,
                    "SIMD{simd} lane {i} unpack"
                );
                assert_eq!(swapped[i], bits.rotate_left(32), "SIMD{simd} lane {i} pack");
            }
        },
    );
    eprintln!(
        "worst ULPs: div {} sqrt {} rsq {} rcp {}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

const FP64_MOD: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer X { double x[]; };
layout(set=0, binding=1) buffer Y { double y[]; };
layout(set=0, binding=2) buffer O { double o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[2u * i] = mod(x[i], y[i]);
    // A divisor known at compile time (the lowering sees a constant).
    o[2u * i + 1u] = mod(x[i], 0.1LF);
}";

/// (x, y) pairs for mod: exact multiples of every sign, tiny x against y of the other
/// sign (where the formula rounds to y), y = +-inf, and ordinary pairs.
fn mod_pairs() -> Vec<(f64, f64)> {
    let mut v = vec![
        (6.0, 3.0),
        (-6.0, 3.0),
        (6.0, -3.0),
        (-6.0, -3.0),
        (0.3, 0.1),
        (-0.3, 0.1),
        (0.7, 0.1),
        (1.0, 0.1),
        (7.5, 2.5),
        (-7.5, 2.5),
        (7.5, -2.5),
        (1e300, 1e-8),
        (0.0, 3.0),
        (-0.0, 3.0),
        (-1e-20, 1.0),
        (1e-20, -1.0),
        (-1e-300, 3.0),
        (-4.9e-324, 1.0),
        (5.0, f64::INFINITY),
        (-5.0, f64::INFINITY),
        (5.0, f64::NEG_INFINITY),
        (-5.0, f64::NEG_INFINITY),
        (f64::INFINITY, 3.0),
        (f64::NAN, 3.0),
        (3.0, 0.0),
        (1.5, -0.75),
        (-2.25, 0.75),
        (123456789.0, 3.0),
        (-123456789.0, 9.0),
        (9007199254740992.0, 7.0),
    ];
    let mut rng = XorShift64(0x1234_5678_9ABC_DEF1);
    while v.len() < 64 {
        let s = rng.next_u64();
        let k = (s % 2001) as f64 - 1000.0;
        let y = ((s >> 16) % 97 + 1) as f64 * if s & 2 == 2 { -0.125 } else { 0.375 };
        // Every other pair an exact multiple k * y.
        let x = if v.len() % 2 == 0 {
            k * y
        } else {
            k * y + ((s >> 40) % 1000) as f64 * 1e-3
        };
        v.push((x, y));
    }
    v
}

#[test]
fn df_mod_is_exact_and_zero_where_the_formula_gives_y() {
    let pairs = mod_pairs();
    let n = pairs.len();
    let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let init = [f64_words(&xs), f64_words(&ys), vec![0; n * 2 * 2]];
    let check = |what: &str, simd: u32, bufs: &[Vec<u32>]| {
        let out = words_f64(&bufs[2]);
        for (i, &(a, b)) in pairs.iter().enumerate() {
            for (slot, b) in [(0usize, b), (1, 0.1)] {
                let want = mod_reference(a, b);
                let got = out[2 * i + slot];
                expect_f64(
                    got,
                    want,
                    format_args!(
                        "{what} SIMD{simd} lane {i}: mod({a:e} ({:#x}), {b:e})",
                        a.to_bits()
                    ),
                );
            }
        }
    };
    at_each_simd(
        "fp64_mod",
        FP64_MOD,
        &Build::default(),
        [4, 1, 1],
        &init,
        |simd, _, bufs| check("DF", simd, bufs),
    );
    at_simds(
        &[16],
        "fp64_mod_soft",
        FP64_MOD,
        &Build {
            soft64: true,
            ..Build::default()
        },
        [4, 1, 1],
        &init,
        |simd, _, bufs| check("soft64", simd, bufs),
    );
}

const INT64: &str = "#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer X { int64_t x[]; };
layout(set=0, binding=1) buffer Y { int64_t y[]; };
layout(set=0, binding=2) buffer O { int64_t o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int64_t a = x[i];
    int64_t b = y[i];
    uint64_t ua = uint64_t(a);
    uint64_t ub = uint64_t(b);
    int s = int(i % 64u);
    uint k = i * 30u;
    o[k + 0u] = a + b;
    o[k + 1u] = a - b;
    o[k + 2u] = a * b;
    o[k + 3u] = a << s;
    o[k + 4u] = a >> s;
    o[k + 5u] = int64_t(ua >> s);
    o[k + 6u] = a & b;
    o[k + 7u] = a | b;
    o[k + 8u] = a ^ b;
    o[k + 9u] = ~a;
    o[k + 10u] = -a;
    o[k + 11u] = abs(a);
    o[k + 12u] = min(a, b);
    o[k + 13u] = max(a, b);
    o[k + 14u] = int64_t(min(ua, ub));
    o[k + 15u] = int64_t(max(ua, ub));
    int64_t f = 0;
    if (a < b) f |= 1;
    if (a <= b) f |= 2;
    if (a == b) f |= 4;
    if (a != b) f |= 8;
    if (ua < ub) f |= 16;
    if (ua >= ub) f |= 32;
    o[k + 16u] = f;
    o[k + 17u] = int64_t(int(a));
    o[k + 18u] = int64_t(uint(a));
    o[k + 19u] = int64_t(double(a));
    o[k + 20u] = int64_t(float(a));
    o[k + 21u] = int64_t(double(ua) * 0.25);
    o[k + 22u] = sign(a);
    o[k + 23u] = a * 3 + int64_t(int(i)) - (a < 0 ? b : int64_t(uint(s)));
    o[k + 24u] = a / b;
    o[k + 25u] = a % b;
    o[k + 26u] = int64_t(ua / ub);
    o[k + 27u] = int64_t(ua % ub);
    o[k + 28u] = a / 10;
    o[k + 29u] = int64_t(ua % 1000000007ul);
}";

fn int64_inputs(n: usize, seed: u64) -> Vec<i64> {
    let edges = [
        0i64,
        1,
        -1,
        i64::MIN,
        i64::MAX,
        i32::MIN as i64,
        i32::MAX as i64,
        u32::MAX as i64,
        1 << 32,
        -(1 << 32),
        0x1234_5678_9ABC_DEF0,
        7,
    ];
    let mut rng = XorShift64(seed);
    (0..n)
        .map(|i| {
            if i < edges.len() && seed % 2 == 1 {
                return edges[i];
            }
            let s = rng.next_u64();
            match i % 3 {
                0 => s as i64,
                1 => (s as i64) >> 33,
                _ => (s as i32) as i64,
            }
        })
        .collect()
}

#[test]
fn int64_ops_match_reference() {
    let n = 64;
    let xs = int64_inputs(n, 0x9E37_79B9_7F4A_7C15 | 1);
    let mut ys = int64_inputs(n, 0x2545_F491_4F6C_DD1C);
    ys[1] = 1;
    ys[4] = i64::MAX;
    ys[3] = 5;
    let bits = |v: &[i64]| u64_words(&v.iter().map(|x| *x as u64).collect::<Vec<_>>());
    let init = [bits(&xs), bits(&ys), vec![0; n * 2 * 30]];
    at_each_simd(
        "int64",
        INT64,
        &Build::default(),
        [4, 1, 1],
        &init,
        |simd, k, bufs| {
            let out = words_u64(&bufs[2]);
            for i in 0..n {
                let (a, b) = (xs[i], ys[i]);
                let (ua, ub) = (a as u64, b as u64);
                let s = (i % 64) as u32;
                let f = (a < b) as i64
                    | ((a <= b) as i64) << 1
                    | ((a == b) as i64) << 2
                    | ((a != b) as i64) << 3
                    | ((ua < ub) as i64) << 4
                    | ((ua >= ub) as i64) << 5;
                let want: [i64; 30] = [
                    a.wrapping_add(b),
                    a.wrapping_sub(b),
                    a.wrapping_mul(b),
                    a << s,
                    a >> s,
                    (ua >> s) as i64,
                    a & b,
                    a | b,
                    a ^ b,
                    !a,
                    a.wrapping_neg(),
                    a.wrapping_abs(),
                    a.min(b),
                    a.max(b),
                    ua.min(ub) as i64,
                    ua.max(ub) as i64,
                    f,
                    a as i32 as i64,
                    a as u32 as i64,
                    (a as f64) as i64,
                    (a as f32) as i64,
                    ((ua as f64) * 0.25) as i64,
                    a.signum(),
                    a.wrapping_mul(3)
                        .wrapping_add(i as i64)
                        .wrapping_sub(if a < 0 { b } else { s as i64 }),
                    if b == 0 { 0 } else { a.wrapping_div(b) },
                    // GLSL % on signed integers is OpSMod: the sign follows the divisor.
                    match a.checked_rem(b) {
                        Some(r) if r != 0 && (r < 0) != (b < 0) => r + b,
                        Some(r) => r,
                        None => 0,
                    },
                    ua.checked_div(ub).unwrap_or(0) as i64,
                    ua.checked_rem(ub).unwrap_or(0) as i64,
                    a / 10,
                    (ua % 1_000_000_007) as i64,
                ];
                for j in 0..30 {
                    // Division by zero and INT64_MIN / -1 are undefined.
                    if (24..28).contains(&j) && (b == 0 || (a == i64::MIN && b == -1)) {
                        continue;
                    }
                    // Float -> int64 of a value >= 2^63 is undefined (the hardware gives
                    // i64::MIN, Rust saturates).
                    if (j == 19 || j == 20) && a as f64 >= 2f64.powi(63) {
                        continue;
                    }
                    assert_eq!(
                        out[i * 30 + j] as i64,
                        want[j],
                        "SIMD{simd} lane {i} slot {j}: a={a:#x} b={b:#x}\n{}",
                        if j == 0 { k.asm.as_str() } else { "" }
                    );
                }
            }
        },
    );
}

const MEM64: &str = "#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x = 16) in;
layout(std430, set=0, binding=0) buffer V { dvec4 v4[]; };
layout(std430, set=0, binding=1) buffer W { dvec3 v3[]; };
layout(std140, set=0, binding=2) uniform U { dvec2 u2[16]; };
layout(std430, set=0, binding=3) buffer R { u64vec2 r[]; };
shared double sh[16];
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint l = gl_LocalInvocationID.x;
    dvec4 a = v4[i];
    dvec3 c = v3[i];
    sh[l] = a.x + a.w;
    barrier();
    double nb = sh[(l + 1u) % 16u];
    v4[i] = dvec4(a.w, a.z + c.y, u2[l].y, nb);
    v3[i] = c.zxy * 2.0LF;
    double p[4];
    for (int j = 0; j < 4; j++) p[j] = a[j] * double(j + 1);
    r[i] = u64vec2(doubleBitsToUint64(p[i % 4u]), uint64_t(i) << 40);
}";

#[test]
fn sixty_four_bit_memory_matches_cpu() {
    let n = 32;
    let v4: Vec<f64> = (0..n * 4).map(|j| j as f64 * 1.25 - 7.0).collect();
    let v3: Vec<f64> = (0..n * 4).map(|j| j as f64 * -0.5 + 3.0).collect();
    let u2: Vec<f64> = (0..32).map(|j| j as f64 * 10.0 + 0.5).collect();
    let init = [
        f64_words(&v4),
        f64_words(&v3),
        f64_words(&u2),
        vec![0; n * 4],
    ];
    at_each_simd(
        "mem64",
        MEM64,
        &Build::default(),
        [2, 1, 1],
        &init,
        |simd, _, bufs| {
            let o4 = words_f64(&bufs[0]);
            let o3 = words_f64(&bufs[1]);
            let r = words_u64(&bufs[3]);
            for i in 0..n {
                let l = i % 16;
                let a = &v4[i * 4..i * 4 + 4];
                let c = &v3[i * 4..i * 4 + 4];
                let nbi = (i / 16) * 16 + (l + 1) % 16;
                let nb = v4[nbi * 4] + v4[nbi * 4 + 3];
                let want4 = [a[3], a[2] + c[1], u2[l * 2 + 1], nb];
                assert_eq!(&o4[i * 4..i * 4 + 4], &want4, "SIMD{simd} dvec4 {i}");
                // dvec3 in std430 has a 32-byte stride; the fourth double is untouched.
                let want3 = [c[2] * 2.0, c[0] * 2.0, c[1] * 2.0, c[3]];
                assert_eq!(&o3[i * 4..i * 4 + 4], &want3, "SIMD{simd} dvec3 {i}");
                let pj = a[i % 4] * ((i % 4) as f64 + 1.0);
                assert_eq!(r[2 * i], pj.to_bits(), "SIMD{simd} private array {i}");
                assert_eq!(r[2 * i + 1], (i as u64) << 40, "SIMD{simd} u64 {i}");
            }
        },
    );
}

const NARROW64: &str = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer X { int x[]; };
layout(set=0, binding=1) buffer D { double d[]; };
layout(set=0, binding=2) buffer O { int64_t o[]; };
layout(set=0, binding=3) buffer R { int r[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int v = x[i];
    double dv = d[i];
    int16_t h = int16_t(v);
    uint8_t u8 = uint8_t(v);
    float16_t f16 = float16_t(float(v) * 0.125);
    uint k = i * 5u;
    o[k + 0u] = int64_t(h);
    o[k + 1u] = int64_t(uint64_t(u8));
    o[k + 2u] = doubleBitsToInt64(double(f16));
    o[k + 3u] = doubleBitsToInt64(double(h));
    o[k + 4u] = int64_t(f16);
    uint j = i * 4u;
    r[j + 0u] = int(int16_t(int64_t(v) * 3l));
    r[j + 1u] = int(uint8_t(uint64_t(v)));
    r[j + 2u] = floatBitsToInt(float(float16_t(dv)));
    r[j + 3u] = int(int16_t(clamp(dv, -30000.0LF, 30000.0LF)));
}";

/// 8/16-bit <-> 64-bit conversions (through a 32-bit intermediate) at SIMD8/16/32.
#[test]
fn narrow_to_and_from_sixty_four_bit_conversions_match_reference() {
    let n = 32;
    let xs: Vec<i32> = (0..n as i32)
        .map(|i| i.wrapping_mul(-2_654_435_761_i64 as i32) >> (i % 13))
        .collect();
    let mut ds = doubles(n, 0x5DEE_CE66_D1CE_4E5B | 1);
    for (i, d) in ds.iter_mut().enumerate() {
        if d.is_nan() {
            *d = i as f64 * 0.3;
        }
    }
    let init = [
        xs.iter().map(|v| *v as u32).collect(),
        f64_words(&ds),
        vec![0; n * 10],
        vec![0; n * 4],
    ];
    at_each_simd(
        "narrow64",
        NARROW64,
        &Build::default(),
        [2, 1, 1],
        &init,
        |simd, _, bufs| {
            let o = words_u64(&bufs[2]);
            let r = &bufs[3];
            for i in 0..n {
                let v = xs[i];
                let dv = ds[i];
                let h = v as i16;
                let f16 = half::f16::from_f32(v as f32 * 0.125);
                let want = [
                    h as i64,
                    v as u8 as i64,
                    (f16.to_f32() as f64).to_bits() as i64,
                    (h as f64).to_bits() as i64,
                    f16.to_f32() as i64,
                ];
                for (j, w) in want.iter().enumerate() {
                    assert_eq!(
                        o[i * 5 + j] as i64,
                        *w,
                        "SIMD{simd} lane {i} slot {j}: v={v}"
                    );
                }
                // F -> HF flushes HF denormals in the default float mode.
                let hf = half::f16::from_f32(dv as f32);
                let f = if hf.is_finite() && !hf.is_normal() {
                    0.0f32.copysign(hf.to_f32())
                } else {
                    hf.to_f32()
                };
                let wr = [
                    (v as i64 * 3) as i16 as i32,
                    v as u8 as i32,
                    f.to_bits() as i32,
                    dv.clamp(-30000.0, 30000.0) as i16 as i32,
                ];
                for (j, w) in wr.iter().enumerate() {
                    assert_eq!(
                        r[i * 4 + j] as i32,
                        *w,
                        "SIMD{simd} lane {i} result {j}: v={v} d={dv:e}"
                    );
                }
            }
        },
    );
}

/// OpBitcast between different component counts, as glslang emits it for the
/// explicit-arithmetic-types pack/unpack functions: 64 <-> 2x32, 64 <-> 4x16, 32 <-> 2x16,
/// 32 <-> 4x8, 16 <-> 2x8, f16vec2 <-> 32 and doubles through 2x32 and 4x16.
const BITCAST: &str = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer X { uvec2 x[]; };
layout(set=0, binding=1) buffer D { double d[]; };
layout(set=0, binding=2) buffer O { uint o[]; };
layout(set=0, binding=3) buffer Q { uint64_t q[]; };
layout(set=0, binding=4) buffer E { double e[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uvec2 v = x[i];
    double dv = d[i];
    uint64_t a = pack64(v);
    uvec2 b = unpack32(a ^ 0x0123456789abcdeful);
    u16vec2 h = unpack16(v.x);
    u8vec4 c = unpack8(v.y);
    u16vec4 h4 = unpack16(a);
    u8vec2 c2 = unpack8(h.x);
    f16vec2 f2 = unpackFloat2x16(v.y);
    uvec2 w = unpack32(doubleBitsToUint64(dv + 0.5LF));
    uint k = i * 10u;
    o[k + 0u] = b.x;
    o[k + 1u] = b.y;
    o[k + 2u] = pack32(c.wzyx);
    o[k + 3u] = pack32(h.yx);
    o[k + 4u] = uint(pack16(c.yx));
    o[k + 5u] = uint(c2.x) | uint(c2.y) << 20;
    o[k + 6u] = packFloat2x16(f2.yx);
    o[k + 7u] = w.x;
    o[k + 8u] = w.y;
    o[k + 9u] = packUint2x32(v) == a ? 1u : 0u;
    q[2u * i] = pack64(h4 + u16vec4(1us, 2us, 3us, 0xffffus));
    q[2u * i + 1u] = pack64(unpackUint2x32(a).yx);
    e[2u * i] = uint64BitsToDouble(pack64(v.yx));
    e[2u * i + 1u] = uint64BitsToDouble(pack64(h4.wzyx)) * 2.0LF;
}";

/// Per lane: the input words, the input double, and the expected o[10], q[2] and e[2] bits.
fn bitcast_reference(v: [u32; 2], dv: f64) -> ([u32; 10], [u64; 2], [u64; 2]) {
    let a = u64::from(v[0]) | u64::from(v[1]) << 32;
    let b = a ^ 0x0123_4567_89ab_cdef;
    let h4: Vec<u16> = (0..4).map(|j| (a >> (16 * j)) as u16).collect();
    let bumped = h4
        .iter()
        .zip([1u16, 2, 3, 0xffff])
        .enumerate()
        .fold(0u64, |acc, (j, (h, d))| {
            acc | u64::from(h.wrapping_add(d)) << (16 * j)
        });
    let wv = (dv + 0.5).to_bits();
    let lanes_reversed = h4
        .iter()
        .enumerate()
        .fold(0u64, |acc, (j, h)| acc | u64::from(*h) << (16 * (3 - j)));
    let o = [
        b as u32,
        (b >> 32) as u32,
        v[1].swap_bytes(),
        v[0].rotate_left(16),
        (v[1] >> 8) & 0xff | (v[1] & 0xff) << 8,
        v[0] & 0xff | ((v[0] >> 8) & 0xff) << 20,
        v[1].rotate_left(16),
        wv as u32,
        (wv >> 32) as u32,
        1,
    ];
    let e1 = f64::from_bits(lanes_reversed) * 2.0;
    (
        o,
        [bumped, a.rotate_left(32)],
        [a.rotate_left(32), e1.to_bits()],
    )
}

fn bitcast_check(simd: u32, soft64: bool, xs: &[u32], ds: &[f64], bufs: &[Vec<u32>]) {
    let q = words_u64(&bufs[3]);
    let e = words_u64(&bufs[4]);
    for i in 0..ds.len() {
        let (wo, wq, we) = bitcast_reference([xs[2 * i], xs[2 * i + 1]], ds[i]);
        let ctx = format!(
            "SIMD{simd} soft64={soft64} lane {i}: v = {:#x} {:#x}, d = {:e}",
            xs[2 * i],
            xs[2 * i + 1],
            ds[i]
        );
        for (j, w) in wo.iter().enumerate() {
            let got = bufs[2][i * 10 + j];
            assert_eq!(got, *w, "{ctx}: o[{j}] {got:#x} want {w:#x}");
        }
        for j in 0..2 {
            assert_eq!(q[2 * i + j], wq[j], "{ctx}: q[{j}]");
            let (got, want) = (f64::from_bits(e[2 * i + j]), f64::from_bits(we[j]));
            assert!(
                same_f64(got, want),
                "{ctx}: e[{j}] {:#x} want {:#x}",
                e[2 * i + j],
                we[j]
            );
        }
    }
}

#[test]
fn bitcasts_between_component_counts_match_rust() {
    let n = 64;
    let mut rng = XorShift64(0x5851_f42d_4c95_7f2d);
    let mut xs: Vec<u32> = (0..2 * n).map(|_| (rng.next_u64() >> 16) as u32).collect();
    // Edge words: all ones, sign bits, zero, f16 infinities and NaNs.
    xs[..8].copy_from_slice(&[
        u32::MAX,
        0x8000_0000,
        0,
        0x7c00_fc00,
        0x7e01_0001,
        0x0000_8000,
        0x00ff_ff00,
        0xffff_0000,
    ]);
    let mut ds = doubles(n, 0x0DDB_1A5E_5BAD_5EED);
    ds[0] = -0.5;
    ds[1] = 5e-324;
    ds[2] = f64::INFINITY;
    let init = || {
        [
            xs.clone(),
            f64_words(&ds),
            vec![0; n * 10],
            vec![0; n * 4],
            vec![0; n * 4],
        ]
    };
    for soft64 in [false, true] {
        let build = Build {
            bindings: 5,
            soft64,
            ..Build::default()
        };
        at_each_simd(
            &format!("bitcast_{soft64}"),
            BITCAST,
            &build,
            [4, 1, 1],
            &init(),
            |simd, _, bufs| bitcast_check(simd, soft64, &xs, &ds, bufs),
        );
    }
}

/// pack64 / unpack32 and the bitcasts through two words are dword moves: the BITCAST
/// kernel keeps no 64-bit shift and no 64-bit `or` (its one 64-bit logic op is the `xor`
/// with the constant), and `packUint2x32(v) == pack64(v)` is the constant 1 (no 64-bit
/// `cmp`). The old code shifted and or-ed qwords for every pack and unpack.
#[test]
fn packs_and_unpacks_of_words_are_dword_moves() {
    // The opcode is the first word with a '(' that is not a predicate: "shl(8)",
    // "cmp.z.f0.0(8)"; a qword operand is typed Q or UQ.
    let qword_op = |l: &str, op: &str| {
        let opcode = l
            .split_whitespace()
            .find(|w| w.contains('(') && !w.starts_with('('))
            .unwrap_or("");
        opcode.split(['(', '.']).next() == Some(op) && (l.contains("UQ") || l.contains(">Q"))
    };
    for simd in [8, 16, 32] {
        let build = Build {
            bindings: 5,
            ..Build::default()
        };
        let Some(k) = kernel_with("bitcast_moves", BITCAST, simd, &build) else {
            return;
        };
        for op in ["shl", "shr", "or", "cmp"] {
            let found: Vec<&str> = k.asm.lines().filter(|l| qword_op(l, op)).collect();
            assert!(
                found.is_empty(),
                "SIMD{simd}: 64-bit {op}:\n{}\n{}",
                found.join("\n"),
                k.asm
            );
        }
        let xors = k.asm.lines().filter(|l| qword_op(l, "xor")).count();
        assert_eq!(xors, simd as usize / 8, "SIMD{simd}:\n{}", k.asm);
    }
}

/// Vector-to-vector OpBitcast (no GLSL spelling): uvec4 <-> dvec2 and u64vec2, uvec2 <->
/// u16vec4 and f16vec4, u16vec2 <-> u8vec4, f16vec4 <-> double.
const BITCAST_VEC: &str = "
OpCapability Shader
OpCapability Int16
OpCapability Int8
OpCapability Int64
OpCapability Float64
OpCapability Float16
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %gid
OpExecutionMode %main LocalSize 16 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %rta ArrayStride 16
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %in DescriptorSet 0
OpDecorate %in Binding 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%u16 = OpTypeInt 16 0
%u8 = OpTypeInt 8 0
%u64 = OpTypeInt 64 0
%f64 = OpTypeFloat 64
%f16 = OpTypeFloat 16
%v2u32 = OpTypeVector %u32 2
%v3u32 = OpTypeVector %u32 3
%v4u32 = OpTypeVector %u32 4
%v4u16 = OpTypeVector %u16 4
%v2u16 = OpTypeVector %u16 2
%v4u8 = OpTypeVector %u8 4
%v2u64 = OpTypeVector %u64 2
%v2f64 = OpTypeVector %f64 2
%v4f16 = OpTypeVector %f16 4
%rta = OpTypeRuntimeArray %v4u32
%blk = OpTypeStruct %rta
%pblk = OpTypePointer StorageBuffer %blk
%pv4 = OpTypePointer StorageBuffer %v4u32
%pin3 = OpTypePointer Input %v3u32
%in = OpVariable %pblk StorageBuffer
%out = OpVariable %pblk StorageBuffer
%gid = OpVariable %pin3 Input
%c0 = OpConstant %u32 0
%c1 = OpConstant %u32 1
%c2 = OpConstant %u32 2
%c3 = OpConstant %u32 3
%c4 = OpConstant %u32 4
%h1 = OpConstant %u16 1
%h2c = OpConstant %u16 2
%h3 = OpConstant %u16 3
%hff = OpConstant %u16 65535
%hadd = OpConstantComposite %v4u16 %h1 %h2c %h3 %hff
%b1 = OpConstant %u8 1
%b7 = OpConstant %u8 7
%badd = OpConstantComposite %v4u8 %b1 %b7 %b1 %b7
%l1 = OpConstant %u64 1
%lm = OpConstant %u64 4294967295
%ladd = OpConstantComposite %v2u64 %l1 %lm
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3u32 %gid
%i = OpCompositeExtract %u32 %g 0
%pi = OpAccessChain %pv4 %in %c0 %i
%u = OpLoad %v4u32 %pi
%d2 = OpBitcast %v2f64 %u
%d2s = OpVectorShuffle %v2f64 %d2 %d2 1 0
%r0 = OpBitcast %v4u32 %d2s
%uv2 = OpVectorShuffle %v2u32 %u %u 0 1
%h4 = OpBitcast %v4u16 %uv2
%h4b = OpIAdd %v4u16 %h4 %hadd
%uv2b = OpBitcast %v2u32 %h4b
%h2 = OpVectorShuffle %v2u16 %h4 %h4 2 3
%b4 = OpBitcast %v4u8 %h2
%b4b = OpIAdd %v4u8 %b4 %badd
%b4s = OpVectorShuffle %v4u8 %b4b %b4b 3 2 1 0
%h2b = OpBitcast %v2u16 %b4s
%w = OpBitcast %u32 %h2b
%f4 = OpBitcast %v4f16 %uv2
%df = OpBitcast %f64 %f4
%dw = OpBitcast %v2u32 %df
%dx = OpCompositeExtract %f64 %d2 0
%f4b = OpBitcast %v4f16 %dx
%f4s = OpVectorShuffle %v4f16 %f4b %f4b 3 2 1 0
%dy = OpBitcast %f64 %f4s
%dyw = OpBitcast %v2u32 %dy
%q = OpBitcast %v2u64 %u
%qb = OpIAdd %v2u64 %q %ladd
%r3 = OpBitcast %v4u32 %qb
%r1 = OpCompositeConstruct %v4u32 %uv2b %dw
%r2 = OpCompositeConstruct %v4u32 %w %c0 %dyw
%k = OpIMul %u32 %i %c4
%k1 = OpIAdd %u32 %k %c1
%k2 = OpIAdd %u32 %k %c2
%k3 = OpIAdd %u32 %k %c3
%p0 = OpAccessChain %pv4 %out %c0 %k
%p1 = OpAccessChain %pv4 %out %c0 %k1
%p2 = OpAccessChain %pv4 %out %c0 %k2
%p3 = OpAccessChain %pv4 %out %c0 %k3
OpStore %p0 %r0
OpStore %p1 %r1
OpStore %p2 %r2
OpStore %p3 %r3
OpReturn
OpFunctionEnd
";

fn bitcast_vec_reference(u: [u32; 4]) -> [u32; 16] {
    let lanes16 = |a: u32, b: u32| [a as u16, (a >> 16) as u16, b as u16, (b >> 16) as u16];
    let h4 = lanes16(u[0], u[1]);
    let hb: Vec<u16> = h4
        .iter()
        .zip([1u16, 2, 3, 0xffff])
        .map(|(h, d)| h.wrapping_add(d))
        .collect();
    let b4 = u[1].to_le_bytes();
    let bb: Vec<u8> = b4
        .iter()
        .zip([1u8, 7, 1, 7])
        .map(|(b, d)| b.wrapping_add(d))
        .collect();
    let w = u32::from_le_bytes([bb[3], bb[2], bb[1], bb[0]]);
    let dy = h4
        .iter()
        .enumerate()
        .fold(0u64, |acc, (j, h)| acc | u64::from(*h) << (16 * (3 - j)));
    let q0 = (u64::from(u[0]) | u64::from(u[1]) << 32).wrapping_add(1);
    let q1 = (u64::from(u[2]) | u64::from(u[3]) << 32).wrapping_add(0xffff_ffff);
    [
        u[2],
        u[3],
        u[0],
        u[1],
        u32::from(hb[0]) | u32::from(hb[1]) << 16,
        u32::from(hb[2]) | u32::from(hb[3]) << 16,
        u[0],
        u[1],
        w,
        0,
        dy as u32,
        (dy >> 32) as u32,
        q0 as u32,
        (q0 >> 32) as u32,
        q1 as u32,
        (q1 >> 32) as u32,
    ]
}

#[test]
fn vector_to_vector_bitcasts_match_rust() {
    let n = 64;
    let mut rng = XorShift64(0x1405_7b7e_f767_814f);
    let mut xs: Vec<u32> = (0..4 * n).map(|_| (rng.next_u64() >> 24) as u32).collect();
    xs[..8].copy_from_slice(&[
        u32::MAX,
        u32::MAX,
        0,
        0x8000_0000,
        0x7c00_fc00,
        0x7ff8_0000,
        0x0000_ffff,
        0xfff0_0000,
    ]);
    for soft64 in [false, true] {
        let build = Build {
            bindings: 2,
            soft64,
            ..Build::default()
        };
        let Some(words) = spirv_as("bitcast_vec", BITCAST_VEC, "vulkan1.1") else {
            return;
        };
        for simd in [8, 16, 32] {
            let k = kernel_words("bitcast_vec", &words, simd, &build);
            let out = run_buffers(&k, [4, 1, 1], &[xs.clone(), vec![0; 20 * n]]);
            for i in 0..n {
                let u = [xs[4 * i], xs[4 * i + 1], xs[4 * i + 2], xs[4 * i + 3]];
                let want = bitcast_vec_reference(u);
                assert_eq!(
                    &out[1][16 * i..16 * i + 16],
                    &want,
                    "SIMD{simd} soft64={soft64} lane {i}: u = {u:#x?}"
                );
            }
        }
    }
}

const DENORM_DIV: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer X { double x[]; };
layout(set=0, binding=1) buffer Y { double y[]; };
layout(set=0, binding=2) buffer O { double o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    double a = x[i];
    double b = y[i];
    o[4u * i] = a / b;
    o[4u * i + 1u] = sqrt(abs(b));
    o[4u * i + 2u] = inversesqrt(abs(b));
    o[4u * i + 3u] = 1.0LF / b;
}";

/// sqrt and inversesqrt of one operand share its reduction and refined inverse square
/// root: one math-unit `rsq` per SIMD8 piece (the guess's MATH runs per piece) and the
/// MADs of one root's Newton steps (2) plus sqrt's correction (2), beside the division's
/// (4 Newton, 2 for its quotient), per piece.
#[test]
fn df_sqrt_and_inversesqrt_of_one_operand_share_its_root() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("denorm_div", DENORM_DIV, simd) else {
            return;
        };
        let count = |what: &str| k.asm.lines().filter(|l| l.contains(what)).count();
        let pieces = simd as usize / 8;
        assert_eq!(count("math rsq"), pieces, "SIMD{simd}\n{}", k.asm);
        assert_eq!(
            count(" mad("),
            (4 + 2 + 2 + 2) * pieces,
            "SIMD{simd}\n{}",
            k.asm
        );
    }
}

const ROOTS: &str = "#version 450
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer X { double x[]; };
layout(set=0, binding=2) buffer O { double o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    double a = x[i];
    o[2u * i] = sqrt(a);
    o[2u * i + 1u] = inversesqrt(a);
}";

/// sqrt and inversesqrt of operands of every class (all exponents, both parities of the
/// exponent field, denormals, extremes) are within [`ULPS`] of Rust's `sqrt` and
/// `1 / sqrt`; zeros, infinities, NaNs and negative operands give IEEE's values (the sign
/// of zero too), at SIMD8/16/32.
#[test]
fn df_sqrt_and_inversesqrt_are_within_two_ulps() {
    let n = 8192;
    let xs = div_operands(n, 0x0DDB_A11C_AFE5_EED5);
    let init = [f64_words(&xs), vec![0; 2 * n], vec![0; n * 4]];
    at_each_simd(
        "roots",
        ROOTS,
        &Build::default(),
        [(n / 64) as u32, 1, 1],
        &init,
        |simd, _, bufs| {
            let out = words_f64(&bufs[2]);
            for (i, &a) in xs.iter().enumerate() {
                for (j, w) in [a.sqrt(), 1.0 / a.sqrt()].into_iter().enumerate() {
                    let got = out[2 * i + j];
                    let exact = a == 0.0 || !a.is_finite() || a < 0.0;
                    let ok = if exact {
                        same_f64(got, w)
                    } else {
                        ulps(got, w) <= ULPS
                    };
                    assert!(
                        ok,
                        "SIMD{simd} lane {i} op {j}: {a:e} ({:#x}): got {got:e} ({:#x}) want {w:e}",
                        a.to_bits(),
                        got.to_bits()
                    );
                }
            }
        },
    );
}

/// Division, reciprocal, sqrt and inversesqrt of denormal operands (scaled by 2^54 before
/// the sequences that read the exponent field) within [`ULPS`] of Rust's f64.
#[test]
fn df_division_and_sqrt_of_denormals_match_reference() {
    let n = 64;
    let mut rng = XorShift64(0x3C6E_F372_FE94_F82B);
    let mut next = move || rng.next_u64();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for k in 0..n {
        let r = next();
        // Dividends 2^-1022 .. 2^-300 (quotients from ~1 to ~2^770), signs mixed.
        let e = 1 + (r >> 40) % 723;
        let sign = (r & 1) << 63;
        xs.push(f64::from_bits(sign | e << 52 | (r >> 12) & ((1 << 52) - 1)));
        // Denormal divisors of every size, a few tiny normals, one of each edge.
        let m = next();
        let y = match k {
            0 => 5e-324,
            1 => -f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            2 => f64::MIN_POSITIVE,
            3 => 0.0,
            _ if k % 8 == 7 => f64::from_bits(((1 + m % 3) << 52) | (m >> 12)),
            _ => f64::from_bits((m >> ((m >> 58) % 52 + 12)) | (m & 1) << 63),
        };
        ys.push(if y == 0.0 && k != 3 { 5e-324 } else { y });
    }
    let init = [f64_words(&xs), f64_words(&ys), vec![0; n * 8]];
    let mut worst = 0;
    at_each_simd(
        "denorm_div",
        DENORM_DIV,
        &Build::default(),
        [4, 1, 1],
        &init,
        |simd, _, bufs| {
            let out = words_f64(&bufs[2]);
            for i in 0..n {
                let (a, b) = (xs[i], ys[i]);
                let want = [a / b, b.abs().sqrt(), 1.0 / b.abs().sqrt(), 1.0 / b];
                for (j, w) in want.iter().enumerate() {
                    let got = out[4 * i + j];
                    let d = ulps(got, *w);
                    let tol = if j == 0 || j == 3 { DIV_ULPS } else { ULPS };
                    assert!(
                    d <= tol,
                    "SIMD{simd} lane {i} result {j}: a = {a:e} b = {b:e} ({:#x}): got {got:e} want {w:e} ({d} ulps)",
                    b.to_bits()
                );
                    worst = worst.max(d);
                }
            }
        },
    );
    println!("worst {worst} ulps");
}

const DIV: &str = "#version 450
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer X { double x[]; };
layout(set=0, binding=1) buffer Y { double y[]; };
layout(set=0, binding=2) buffer O { double o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[2u * i] = x[i] / y[i];
    o[2u * i + 1u] = 1.0LF / y[i];
}";

/// Doubles for the division test: every class of operand a quotient can meet.
fn div_operands(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = XorShift64(seed);
    let frac = (1u64 << 52) - 1;
    let extremes = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MAX,
        -f64::MAX,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        f64::from_bits(frac),
        f64::from_bits(1 << 51),
        2f64.powi(1023),
        2f64.powi(-1022) * 1.5,
        3.0,
        0.1,
        f64::from_bits(0x3FF0_0000_0000_0000 | frac),
    ];
    (0..n)
        .map(|k| {
            let (r, t) = (rng.next_u64(), rng.next_u64());
            let sign = (t & 1) << 63;
            let bits = match k % 8 {
                // Exponents within 2^+-200: random, all-ones-ish and short significands.
                0 => sign | (1023 - 200 + (t >> 52) % 400) << 52 | (r & frac),
                1 => sign | (1023 - 200 + (t >> 52) % 400) << 52 | (frac - (r & 0xff)),
                2 => sign | (1023 - 200 + (t >> 52) % 400) << 52 | (r & frac) >> 40 << 40,
                // Every exponent: quotients overflow, underflow to denormals or to 0.
                3 | 4 => sign | (1 + (t >> 52) % 2046) << 52 | (r & frac),
                // Denormals of every size, and tiny normals.
                5 => sign | (r & frac) >> ((t >> 58) % 52),
                6 => sign | (1 + (t >> 52) % 120) << 52 | (r & frac),
                _ => return extremes[(r % extremes.len() as u64) as usize],
            };
            f64::from_bits(bits)
        })
        .collect()
}

/// Whether `a / b` is exactly zero, infinite or NaN (not by rounding): those quotients
/// must be exact, the sign of zero too.
fn special_quotient(a: f64, b: f64) -> bool {
    a.is_nan() || b.is_nan() || a == 0.0 || b == 0.0 || a.is_infinite() || b.is_infinite()
}

/// Native DF division and reciprocal (F guess, two fused Newton-Raphson steps, one
/// correction of the quotient with its fused remainder) are within [`DIV_ULPS`] of the
/// correctly rounded quotient (Rust's) for every finite nonzero result, denormal results
/// included; zeros, infinities and NaNs are exact (the sign of zero too). Operands: all
/// exponents, denormal dividends and divisors, extremes (0, inf, NaN, MAX, the smallest
/// normal and denormal), significands near 1 and 2, every pairing of the classes.
#[test]
fn df_division_and_reciprocal_are_within_an_ulp() {
    let n = 8192;
    let xs = div_operands(n, 0x8BAD_F00D_DEAD_BEEF);
    let mut ys = div_operands(n, 0x0123_4567_89AB_CDEF);
    // Pair each class with each other: rotate the divisors by a non-multiple of 8.
    ys.rotate_left(3);
    let init = [f64_words(&xs), f64_words(&ys), vec![0; n * 4]];
    let groups = [(n / 64) as u32, 1, 1];
    at_each_simd(
        "div_ulp",
        DIV,
        &Build::default(),
        groups,
        &init,
        |simd, _, bufs| {
            let out = words_f64(&bufs[2]);
            let (mut bad, mut worst, mut inexact) = (Vec::new(), 0, 0);
            for i in 0..n {
                let (a, b) = (xs[i], ys[i]);
                for (j, w) in [a / b, 1.0 / b].into_iter().enumerate() {
                    let got = out[2 * i + j];
                    let exact = special_quotient(if j == 0 { a } else { 1.0 }, b);
                    let d = ulps(got, w);
                    let ok = if exact {
                        same_f64(got, w)
                    } else {
                        d <= DIV_ULPS
                    };
                    if !ok {
                        bad.push(format!(
                            "lane {i} op {j}: {a:e} ({:#x}) / {b:e} ({:#x}): got {got:e} ({:#x}) want {w:e} ({:#x})",
                            a.to_bits(),
                            b.to_bits(),
                            got.to_bits(),
                            w.to_bits()
                        ));
                    } else if !exact {
                        worst = worst.max(d);
                        inexact += (d != 0) as u32;
                    }
                }
            }
            assert!(
                bad.is_empty(),
                "SIMD{simd}: {} of {} out of bounds:\n{}",
                bad.len(),
                2 * n,
                bad[..bad.len().min(10)].join("\n")
            );
            println!(
                "SIMD{simd}: worst {worst} ulp, {inexact} of {} not correctly rounded",
                2 * n
            );
        },
    );
}

const DIV_SHARED: &str = "#version 450
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer X { double x[]; };
layout(set=0, binding=1) buffer Y { double y[]; };
layout(set=0, binding=2) buffer O { double o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    double a = x[i], b = y[i];
    o[4u * i] = a / b;
    o[4u * i + 1u] = 1.0LF / b;
    dvec2 v = dvec2(a + 1.0LF, a * a) / b;
    o[4u * i + 2u] = v.x;
    o[4u * i + 3u] = v.y;
}";

const RCP_ONLY: &str = "#version 450
layout(local_size_x = 64) in;
layout(set=0, binding=1) buffer Y { double y[]; };
layout(set=0, binding=2) buffer O { double o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = 1.0LF / y[i];
}";

/// The divisions by one divisor share its reciprocal: `a / b`, `1 / b` and a vector over
/// `b` compile to as many math-unit `inv`s as `1 / b` alone, and to the MADs of one
/// reciprocal's Newton steps plus two per quotient; and they compute what Rust does within
/// [`DIV_ULPS`].
#[test]
fn df_divisions_by_one_divisor_share_its_reciprocal() {
    for simd in [8, 16, 32] {
        let (Some(k), Some(k1)) = (
            kernel("div_shared", DIV_SHARED, simd),
            kernel("rcp_only", RCP_ONLY, simd),
        ) else {
            return;
        };
        let count = |asm: &str, what: &str| asm.lines().filter(|l| l.contains(what)).count();
        let invs = count(&k.asm, "math inv");
        assert!(invs > 0, "SIMD{simd}: no math inv\n{}", k.asm);
        assert_eq!(invs, count(&k1.asm, "math inv"), "SIMD{simd}\n{}", k.asm);
        // Per SIMD8 piece (DF instructions run at SIMD8): 4 MADs of the Newton steps, 2
        // per quotient (three quotients).
        assert_eq!(
            count(&k.asm, " mad("),
            (4 + 3 * 2) * simd as usize / 8,
            "SIMD{simd}\n{}",
            k.asm
        );
    }
    let n = 256;
    let xs = div_operands(n, 7);
    let ys = div_operands(n, 11);
    let init = [f64_words(&xs), f64_words(&ys), vec![0; n * 8]];
    at_each_simd(
        "div_shared",
        DIV_SHARED,
        &Build::default(),
        [(n / 64) as u32, 1, 1],
        &init,
        |simd, _, bufs| {
            let out = words_f64(&bufs[2]);
            for i in 0..n {
                let (a, b) = (xs[i], ys[i]);
                for (j, w) in [a / b, 1.0 / b, (a + 1.0) / b, (a * a) / b]
                    .into_iter()
                    .enumerate()
                {
                    let got = out[4 * i + j];
                    let num = [a, 1.0, a + 1.0, a * a][j];
                    let ok = if special_quotient(num, b) {
                        same_f64(got, w)
                    } else {
                        ulps(got, w) <= DIV_ULPS
                    };
                    assert!(
                        ok,
                        "SIMD{simd} lane {i} op {j}: {a:e} / {b:e}: got {got:e} want {w:e}"
                    );
                }
            }
        },
    );
}

/// The f64 division's constants (2^54, 2^+-108, the tiny-dividend bound, the lowest
/// double) are moved once into a scalar register, not once per SIMD8 piece of a DF
/// value: the only full-width 64-bit immediate move left is the 1.0 that the Newton
/// steps' MADs read (three-source instructions take neither immediates nor 64-bit
/// scalars), once per kernel and piece however many reciprocals read it. The
/// special-case values come from the exponent factors, not from predicated moves.
#[test]
fn df_division_constants_are_moved_once() {
    let wide_imm = |l: &str| {
        let l = l.trim_start();
        // Instruction text: "mov(8) ...", "(+f0.0) mov(16) ...".
        let op = l.split_whitespace().find(|w| w.starts_with("mov("));
        let sixty_four = l.contains("DF /*")
            || l.split_whitespace().any(|w| {
                w.starts_with("0x") && (w.ends_with("UQ") || w.ends_with('Q')) && w.len() > 2 + 16
            });
        op.is_some_and(|o| o != "mov(1)") && sixty_four
    };
    for simd in [8, 16, 32] {
        // `div` loads y[i] again after its first store, to another binding: no store names
        // y's, so the load is the first one's and one reciprocal serves both quotients;
        // the 1.0 is moved once per kernel however many reciprocals read it.
        for name in ["div", "div_shared", "rcp_only"] {
            let src = match name {
                "div" => DIV,
                "div_shared" => DIV_SHARED,
                _ => RCP_ONLY,
            };
            let Some(k) = kernel(name, src, simd) else {
                return;
            };
            let wide: Vec<&str> = k.asm.lines().filter(|l| wide_imm(l)).collect();
            assert_eq!(
                wide.len(),
                simd as usize / 8,
                "{name} SIMD{simd}: full-width 64-bit immediate moves:\n{}\n{}",
                wide.join("\n"),
                k.asm
            );
        }
    }
}

const DIV_BY_CONSTANTS: &str = "#version 450
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer X { double x[]; };
layout(set=0, binding=2) buffer O { double o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    double a = x[i];
    o[6u * i] = a / 0.1LF;
    o[6u * i + 1u] = a / -3.0LF;
    o[6u * i + 2u] = a / 1.2345e300LF;
    o[6u * i + 3u] = a / -6.5e-300LF;
    o[6u * i + 4u] = a / 1.348269851146737e308LF;
    o[6u * i + 5u] = a / 1.5e-323LF;
}";

/// The divisors of [`DIV_BY_CONSTANTS`], in its order.
const CONSTANT_DIVISORS: [f64; 6] = [
    0.1,
    -3.0,
    1.2345e300,
    -6.5e-300,
    1.348269851146737e308,
    1.5e-323,
];

/// A constant divisor needs no reciprocal sequence: its reciprocal is two constants
/// hi + lo (and a power-of-two scale where y is near 2^1023 and above, tiny or denormal),
/// so each quotient is one product and one DF MAD per SIMD8 piece, with no math-unit
/// `inv` and no comparison; and every quotient is within [`DIV_ULPS`] of Rust's, the
/// special ones exact, at SIMD8/16/32.
#[test]
fn df_division_by_a_constant_takes_no_reciprocal_sequence() {
    assert!(CONSTANT_DIVISORS[5] > 0.0 && !CONSTANT_DIVISORS[5].is_normal());
    for simd in [8, 16, 32] {
        let Some(k) = kernel("div_by_constants", DIV_BY_CONSTANTS, simd) else {
            return;
        };
        let count = |op: &str| k.asm.lines().filter(|l| l.contains(op)).count();
        assert_eq!(count("math"), 0, "SIMD{simd}\n{}", k.asm);
        assert_eq!(count("cmp"), 0, "SIMD{simd}\n{}", k.asm);
        let pieces = simd as usize / 8;
        assert_eq!(count("mad("), 6 * pieces, "SIMD{simd}\n{}", k.asm);
    }
    let n = 1024;
    let xs = div_operands(n, 0x5EED_0C0D_E5EE_D0C0);
    let init = [f64_words(&xs), vec![0; 2 * n], vec![0; n * 12]];
    at_each_simd(
        "div_by_constants",
        DIV_BY_CONSTANTS,
        &Build::default(),
        [(n / 64) as u32, 1, 1],
        &init,
        |simd, _, bufs| {
            let out = words_f64(&bufs[2]);
            for (i, &a) in xs.iter().enumerate() {
                for (j, &b) in CONSTANT_DIVISORS.iter().enumerate() {
                    let (got, w) = (out[6 * i + j], a / b);
                    let ok = if special_quotient(a, b) {
                        same_f64(got, w)
                    } else {
                        ulps(got, w) <= DIV_ULPS
                    };
                    assert!(
                        ok,
                        "SIMD{simd} lane {i}: {a:e} ({:#x}) / {b:e}: got {got:e} ({:#x}) want {w:e}",
                        a.to_bits(),
                        got.to_bits()
                    );
                }
            }
        },
    );
}

/// Seeded doubles in [-lim, lim) with all mantissa bits busy (both dwords matter).
fn doubles_in(n: usize, seed: u64, lim: f64) -> Vec<f64> {
    let mut rng = XorShift64(seed);
    (0..n)
        .map(|_| {
            let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            (unit * 2.0 - 1.0) * lim
        })
        .collect()
}

const DF_DIVERGENT: &str = "#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer X { double x[]; };
layout(set=0, binding=1) buffer Y { double y[]; };
layout(set=0, binding=2) buffer O { double o[]; };
layout(set=0, binding=3) buffer N { int64_t n[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    double a = x[i];
    double b = y[i];
    double r;
    if (a < b) {
        r = a * b;
    } else if (a > 2.0LF * b) {
        r = a - b;
    } else {
        r = -a;
    }
    // precise: the reference rounds the product and the sum separately (NoContraction
    // keeps the compiler from fusing them into one DF mad).
    precise double acc = a;
    int64_t q = (int64_t(i) << 33) | 5l;
    int k = 0;
    for (; k < 64; k++) {
        acc = acc * 1.25LF;
        acc = acc + b;
        q = q * 3l + int64_t(k);
        if (abs(acc) > 1e4LF) {
            break;
        }
        if (((k + int(i)) & 3) == 0) {
            continue;
        }
        acc = acc - 0.5LF;
    }
    o[2u * i] = r;
    o[2u * i + 1u] = acc;
    n[2u * i] = q;
    n[2u * i + 1u] = int64_t(k);
}";

fn df_divergent_reference(i: usize, a: f64, b: f64) -> (f64, f64, i64, i64) {
    let r = if a < b {
        a * b
    } else if a > 2.0 * b {
        a - b
    } else {
        -a
    };
    let mut acc = a;
    let mut q = ((i as i64) << 33) | 5;
    let mut k = 0i64;
    while k < 64 {
        acc *= 1.25;
        acc += b;
        q = q.wrapping_mul(3).wrapping_add(k);
        if acc.abs() > 1e4 {
            break;
        }
        if (k + i as i64) & 3 != 0 {
            acc -= 0.5;
        }
        k += 1;
    }
    (r, acc, q, k)
}

/// DF and Q arithmetic where lanes disagree: an if/else-if/else on DF compares, and a
/// loop whose lanes leave at different iterations (break) and skip its tail (continue).
/// A 64-bit instruction runs as several narrower pieces; each piece must take the
/// execution mask of its own channels, which only divergent lanes show.
#[test]
fn df_arithmetic_under_divergent_control_flow_matches_reference() {
    let n = 64;
    let xs = doubles_in(n, 0x51ED_2701_AB39_0C11, 12.0);
    let mut ys = doubles_in(n, 0x0DDB_A11C_0FFE_E123, 3.0);
    // Lanes that start on the loop's fixed point (acc = 2 - 4b) run all 64 iterations.
    for i in [3, 21, 40] {
        ys[i] = (2.0 - xs[i]) / 4.0;
    }
    let init = [
        f64_words(&xs),
        f64_words(&ys),
        vec![0; n * 4],
        vec![0; n * 4],
    ];
    let mut trips = std::collections::BTreeSet::new();
    at_each_simd(
        "df_divergent",
        DF_DIVERGENT,
        &Build::default(),
        [4, 1, 1],
        &init,
        |simd, _, bufs| {
            let out = words_f64(&bufs[2]);
            let ints = words_u64(&bufs[3]);
            for i in 0..n {
                let (a, b) = (xs[i], ys[i]);
                let (r, acc, q, k) = df_divergent_reference(i, a, b);
                trips.insert(k);
                let got = (
                    out[2 * i],
                    out[2 * i + 1],
                    ints[2 * i] as i64,
                    ints[2 * i + 1] as i64,
                );
                assert!(
                    same_f64(got.0, r) && same_f64(got.1, acc) && got.2 == q && got.3 == k,
                    "SIMD{simd} lane {i}: a={a:e} b={b:e}: got (r {:e}, acc {:e}, q {:#x}, k {}) \
                     want (r {r:e}, acc {acc:e}, q {q:#x}, k {k})",
                    got.0,
                    got.1,
                    got.2,
                    got.3
                );
            }
        },
    );
    assert!(
        trips.len() > 3,
        "the inputs must diverge: trip counts {trips:?}"
    );
}

/// Live doubles and int64s per invocation in the spill test: at SIMD8 each takes 2 GRFs,
/// so 2 * 2 * SPILL64_LIVE GRFs exceed the register file at SIMD8 and SIMD16.
const SPILL64_LIVE: usize = 36;

fn spill64_source() -> String {
    let n = SPILL64_LIVE;
    let mut s = format!(
        "#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer X {{ double x[]; }};
layout(set=0, binding=1) buffer Q {{ int64_t q[]; }};
layout(set=0, binding=2) buffer O {{ double o[]; }};
layout(set=0, binding=3) buffer P {{ int64_t p[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    uint b = i * {n}u;
"
    );
    for k in 0..n {
        s += &format!("    double d{k} = x[b + {k}u];\n    int64_t q{k} = q[b + {k}u];\n");
    }
    // A loop with a lane-dependent trip count: every value above is live across it, and
    // the loop carries a double and an int64 of its own.
    s += "    double acc = 0.0LF;
    int64_t iacc = 0l;
    for (uint k = 0u; k < (i & 7u) + 1u; k++) {
        acc = acc * 0.5LF + x[b + k];
        iacc = (iacc << 3) ^ q[b + k];
    }
";
    for k in (0..n).rev() {
        s += &format!("    o[b + {k}u] = d{k} + acc;\n    p[b + {k}u] = q{k} ^ iacc;\n");
    }
    s += "}\n";
    s
}

/// 64-bit values spilled to scratch and filled back at SIMD8 and SIMD16: both dwords
/// (both GRFs per SIMD8 half) of every DF and Q value must come back, also for values
/// live across a loop.
#[test]
fn spilled_df_and_q_values_come_back_whole() {
    let n = SPILL64_LIVE;
    let lanes = 64;
    let xs = doubles_in(lanes * n, 0x7A11_5EED_0000_0001, 1e6);
    let mut rng = XorShift64(0x0123_4567_89AB_CDEF);
    let qs: Vec<u64> = (0..lanes * n).map(|_| rng.next_u64()).collect();
    let init = [
        f64_words(&xs),
        u64_words(&qs),
        vec![0; lanes * n * 2],
        vec![0; lanes * n * 2],
    ];
    let src = spill64_source();
    at_simds(
        &[8, 16],
        "spill64",
        &src,
        &Build::default(),
        [4, 1, 1],
        &init,
        |simd, k, bufs| {
            assert!(
                k.stats.spills > 0 && k.stats.fills > 0,
                "SIMD{simd}: the test needs spills (spills {}, fills {})",
                k.stats.spills,
                k.stats.fills
            );
            let out = words_f64(&bufs[2]);
            let ints = words_u64(&bufs[3]);
            for i in 0..lanes {
                let b = i * n;
                let mut acc = 0.0f64;
                let mut iacc = 0u64;
                for k in 0..(i & 7) + 1 {
                    acc = acc * 0.5 + xs[b + k];
                    iacc = (iacc << 3) ^ qs[b + k];
                }
                for j in 0..n {
                    let want = xs[b + j] + acc;
                    let got = out[b + j];
                    expect_f64(
                        got,
                        want,
                        format_args!(
                            "SIMD{simd} lane {i} double {j}: x={:e} acc={acc:e}",
                            xs[b + j]
                        ),
                    );
                    let want = qs[b + j] ^ iacc;
                    assert_eq!(
                        ints[b + j],
                        want,
                        "SIMD{simd} lane {i} int64 {j}: q={:#x} iacc={iacc:#x}",
                        qs[b + j]
                    );
                }
            }
        },
    );
}

const DOUBLES_AFTER_32BIT: &str = "#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(local_size_x = 16) in;
struct S { float a; double b; };
// std430 (push constants): 8-byte doubles right after 4-byte members.
layout(push_constant) uniform P {
    float f;      // 0
    double d;     // 8
    int i;        // 16
    dvec2 v;      // 32
    uint u;       // 48
    double e;     // 56
    float g;      // 64
    int64_t q;    // 72
    dvec3 w;      // 96
} pc;
layout(std140, set=0, binding=0) uniform U {
    float f;        // 0
    double d;       // 8
    int i;          // 16
    double arr[3];  // 32, 48, 64 (std140 array stride 16)
    float g;        // 80
    dvec2 v;        // 96
    uint u;         // 112
    double e;       // 120
    S s;            // 128: a 128, b 136
} ub;
layout(std430, set=0, binding=1) buffer B {
    float f;        // 0
    double d;       // 8
    int i;          // 16
    double arr[3];  // 24, 32, 40 (std430 array stride 8)
    float g;        // 48
    dvec3 w;        // 64
    uint u;         // 88
    double e;       // 96
    S s;            // 104: a 104, b 112
    double back[3]; // 120, 128, 136: written by lane 0
} sb;
layout(set=0, binding=2) buffer O { double o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    double k = double(i + 1u);
    uint b = i * 32u;
    o[b + 0u] = pc.d * k;
    o[b + 1u] = pc.v.x * k;
    o[b + 2u] = pc.v.y * k;
    o[b + 3u] = pc.e * k;
    o[b + 4u] = double(pc.q) * k;
    o[b + 5u] = pc.w.x * k;
    o[b + 6u] = pc.w.y * k;
    o[b + 7u] = pc.w.z * k;
    o[b + 8u] = double(pc.f) + double(pc.i) + double(pc.u) + double(pc.g);
    o[b + 9u] = ub.d * k;
    o[b + 10u] = ub.arr[0] * k;
    o[b + 11u] = ub.arr[1] * k;
    o[b + 12u] = ub.arr[2] * k;
    o[b + 13u] = ub.v.x * k;
    o[b + 14u] = ub.v.y * k;
    o[b + 15u] = ub.e * k;
    o[b + 16u] = ub.s.b * k;
    o[b + 17u] = double(ub.f) + double(ub.i) + double(ub.u) + double(ub.g) + double(ub.s.a);
    o[b + 18u] = sb.d * k;
    o[b + 19u] = sb.arr[0] * k;
    o[b + 20u] = sb.arr[1] * k;
    o[b + 21u] = sb.arr[2] * k;
    o[b + 22u] = sb.w.x * k;
    o[b + 23u] = sb.w.y * k;
    o[b + 24u] = sb.w.z * k;
    o[b + 25u] = sb.e * k;
    o[b + 26u] = sb.s.b * k;
    o[b + 27u] = double(sb.f) + double(sb.i) + double(sb.u) + double(sb.g) + double(sb.s.a);
    // A dynamic index into the std140 double array (stride 16).
    o[b + 28u] = ub.arr[i % 3u];
    if (i == 0u) {
        sb.back[0] = pc.d;
        sb.back[1] = ub.d;
        sb.back[2] = sb.d + 1.0LF;
    }
}";

/// Writes `v` as little-endian bytes at byte `at` of the dword buffer `w`.
fn put(w: &mut [u32], at: usize, v: &[u8]) {
    for (k, b) in v.iter().enumerate() {
        let (i, s) = ((at + k) / 4, 8 * ((at + k) % 4));
        w[i] = (w[i] & !(0xFF << s)) | (u32::from(*b) << s);
    }
}

/// Doubles right after 32-bit members (8-byte alignment, std430/std140 offsets) in push
/// constants, a std140 uniform block and a std430 storage block, read at SIMD8/16/32 and
/// written back. The inputs sit at the offsets the layout rules give (in the comments of
/// the shader), so a double read from a 4-byte-packed or 16-byte-rounded offset shows.
#[test]
fn doubles_after_32bit_members_in_push_std140_and_std430() {
    let dd = |k: u32| 1.0 + f64::from(k) * 0.001 + 1e-12 * f64::from(k * k + 7);
    let mut push = vec![0u32; 32];
    put(&mut push, 0, &1.5f32.to_le_bytes());
    put(&mut push, 8, &dd(1).to_le_bytes());
    put(&mut push, 16, &(-7i32).to_le_bytes());
    put(&mut push, 32, &dd(2).to_le_bytes());
    put(&mut push, 40, &dd(3).to_le_bytes());
    put(&mut push, 48, &9u32.to_le_bytes());
    put(&mut push, 56, &dd(4).to_le_bytes());
    put(&mut push, 64, &0.25f32.to_le_bytes());
    put(&mut push, 72, &(-0x1_2345_6789i64).to_le_bytes());
    for (c, at) in [96, 104, 112].into_iter().enumerate() {
        put(&mut push, at, &dd(5 + c as u32).to_le_bytes());
    }
    let mut ubo = vec![0u32; 40];
    put(&mut ubo, 0, &2.5f32.to_le_bytes());
    put(&mut ubo, 8, &dd(10).to_le_bytes());
    put(&mut ubo, 16, &3i32.to_le_bytes());
    for (c, at) in [32, 48, 64].into_iter().enumerate() {
        put(&mut ubo, at, &dd(11 + c as u32).to_le_bytes());
    }
    put(&mut ubo, 80, &(-0.5f32).to_le_bytes());
    put(&mut ubo, 96, &dd(14).to_le_bytes());
    put(&mut ubo, 104, &dd(15).to_le_bytes());
    put(&mut ubo, 112, &11u32.to_le_bytes());
    put(&mut ubo, 120, &dd(16).to_le_bytes());
    put(&mut ubo, 128, &4.0f32.to_le_bytes());
    put(&mut ubo, 136, &dd(17).to_le_bytes());
    let mut ssbo = vec![0u32; 40];
    put(&mut ssbo, 0, &0.75f32.to_le_bytes());
    put(&mut ssbo, 8, &dd(20).to_le_bytes());
    put(&mut ssbo, 16, &(-2i32).to_le_bytes());
    for (c, at) in [24, 32, 40].into_iter().enumerate() {
        put(&mut ssbo, at, &dd(21 + c as u32).to_le_bytes());
    }
    put(&mut ssbo, 48, &8.0f32.to_le_bytes());
    for (c, at) in [64, 72, 80].into_iter().enumerate() {
        put(&mut ssbo, at, &dd(24 + c as u32).to_le_bytes());
    }
    put(&mut ssbo, 88, &5u32.to_le_bytes());
    put(&mut ssbo, 96, &dd(27).to_le_bytes());
    put(&mut ssbo, 104, &(-1.25f32).to_le_bytes());
    put(&mut ssbo, 112, &dd(28).to_le_bytes());
    let lanes = 64usize;
    let init = [ubo, ssbo.clone(), vec![0; lanes * 32 * 2]];
    for simd in [8, 16, 32] {
        let Some(k) = kernel("doubles_after_32bit", DOUBLES_AFTER_32BIT, simd) else {
            return;
        };
        let (bufs, _) = run_buffers_push(&k, [4, 1, 1], &init, &push);
        let out = words_f64(&bufs[2]);
        for i in 0..lanes {
            let kf = (i + 1) as f64;
            let scaled = [
                dd(1),
                dd(2),
                dd(3),
                dd(4),
                -0x1_2345_6789i64 as f64,
                dd(5),
                dd(6),
                dd(7),
            ];
            let mut want: Vec<f64> = scaled.iter().map(|v| v * kf).collect();
            want.push(1.5 - 7.0 + 9.0 + 0.25);
            want.extend([10, 11, 12, 13, 14, 15, 16, 17].map(|c| dd(c) * kf));
            want.push(2.5 + 3.0 + 11.0 - 0.5 + 4.0);
            want.extend([20, 21, 22, 23, 24, 25, 26, 27, 28].map(|c| dd(c) * kf));
            want.push(0.75 - 2.0 + 5.0 + 8.0 - 1.25);
            want.push(dd(11 + (i % 3) as u32));
            for (j, w) in want.iter().enumerate() {
                let got = out[i * 32 + j];
                expect_f64(got, *w, format_args!("SIMD{simd} lane {i} value {j}"));
            }
        }
        let back = words_f64(&bufs[1][30..36]);
        let want = [dd(1), dd(10), dd(20) + 1.0];
        for (j, (g, w)) in back.iter().zip(want).enumerate() {
            expect_f64(*g, w, format_args!("SIMD{simd} sb.back[{j}]"));
        }
    }
}

/// ldexp with 8-, 16-, 32- and 64-bit exponents (f32 and f64 results) and
/// OpUMulExtended/OpSMulExtended on 64-bit operands. The exponents come from one i64
/// input, narrowed with OpSConvert; results are stored as dwords.
const LDEXP_MULEXT: &str = "
               OpCapability Shader
               OpCapability Int8
               OpCapability Int16
               OpCapability Int64
               OpCapability Float64
          %1 = OpExtInstImport \"GLSL.std.450\"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main \"main\" %gid
               OpExecutionMode %main LocalSize 16 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %arrl ArrayStride 8
               OpDecorate %arrf ArrayStride 4
               OpDecorate %arru ArrayStride 4
               OpMemberDecorate %SL 0 Offset 0
               OpMemberDecorate %SF 0 Offset 0
               OpMemberDecorate %SU 0 Offset 0
               OpDecorate %SL Block
               OpDecorate %SF Block
               OpDecorate %SU Block
               OpDecorate %ain DescriptorSet 0
               OpDecorate %ain Binding 0
               OpDecorate %bin DescriptorSet 0
               OpDecorate %bin Binding 1
               OpDecorate %xin DescriptorSet 0
               OpDecorate %xin Binding 2
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 3
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %short = OpTypeInt 16 1
       %char = OpTypeInt 8 1
       %long = OpTypeInt 64 1
      %ulong = OpTypeInt 64 0
      %float = OpTypeFloat 32
     %double = OpTypeFloat 64
      %v2u = OpTypeVector %uint 2
      %v3u = OpTypeVector %uint 3
       %su = OpTypeStruct %ulong %ulong
       %sl = OpTypeStruct %long %long
     %pv3u = OpTypePointer Input %v3u
        %gid = OpVariable %pv3u Input
       %arrl = OpTypeRuntimeArray %long
       %arrf = OpTypeRuntimeArray %float
       %arru = OpTypeRuntimeArray %uint
         %SL = OpTypeStruct %arrl
         %SF = OpTypeStruct %arrf
         %SU = OpTypeStruct %arru
        %pSL = OpTypePointer StorageBuffer %SL
        %pSF = OpTypePointer StorageBuffer %SF
        %pSU = OpTypePointer StorageBuffer %SU
         %pl = OpTypePointer StorageBuffer %long
         %pf = OpTypePointer StorageBuffer %float
         %pu = OpTypePointer StorageBuffer %uint
        %ain = OpVariable %pSL StorageBuffer
        %bin = OpVariable %pSL StorageBuffer
        %xin = OpVariable %pSF StorageBuffer
        %out = OpVariable %pSU StorageBuffer
      %int_0 = OpConstant %int 0
     %uint_20 = OpConstant %uint 20
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3u %gid
          %i = OpCompositeExtract %uint %g 0
         %pa = OpAccessChain %pl %ain %int_0 %i
          %a = OpLoad %long %pa
         %pb = OpAccessChain %pl %bin %int_0 %i
          %b = OpLoad %long %pb
         %px = OpAccessChain %pf %xin %int_0 %i
          %x = OpLoad %float %px
         %xd = OpFConvert %double %x
         %ua = OpBitcast %ulong %a
         %ub = OpBitcast %ulong %b
         %um = OpUMulExtended %su %ua %ub
        %ulo = OpCompositeExtract %ulong %um 0
        %uhi = OpCompositeExtract %ulong %um 1
         %sm = OpSMulExtended %sl %a %b
        %slo = OpCompositeExtract %long %sm 0
        %shi = OpCompositeExtract %long %sm 1
        %e32 = OpSConvert %int %b
        %e16 = OpSConvert %short %b
         %e8 = OpSConvert %char %b
        %f64 = OpExtInst %float %1 Ldexp %x %b
        %f32 = OpExtInst %float %1 Ldexp %x %e32
        %f16 = OpExtInst %float %1 Ldexp %x %e16
         %f8 = OpExtInst %float %1 Ldexp %x %e8
        %d64 = OpExtInst %double %1 Ldexp %xd %b
        %d16 = OpExtInst %double %1 Ldexp %xd %e16
         %d8 = OpExtInst %double %1 Ldexp %xd %e8
       %base = OpIMul %uint %i %uint_20
OUTPUTS
               OpReturn
               OpFunctionEnd
";

/// The outputs of [`LDEXP_MULEXT`], in order: (SPIR-V id, kind); f32 ones take one dword,
/// the 64-bit ones two (18 of the 20 dwords each invocation owns).
const LDEXP_MULEXT_OUTS: [(&str, &str); 11] = [
    ("ulo", "u64"),
    ("uhi", "u64"),
    ("slo", "i64"),
    ("shi", "i64"),
    ("f64", "f32"),
    ("f32", "f32"),
    ("f16", "f32"),
    ("f8", "f32"),
    ("d64", "f64"),
    ("d16", "f64"),
    ("d8", "f64"),
];

/// [`LDEXP_MULEXT`] with its stores: each output at dword `base + k` (64-bit ones as two
/// dwords through a bitcast to uvec2).
fn ldexp_mulext_source() -> String {
    let mut body = String::new();
    let mut k = 0u32;
    for (id, kind) in LDEXP_MULEXT_OUTS {
        let words: Vec<String> = match kind {
            "f32" => {
                body += &format!("     %w_{id} = OpBitcast %uint %{id}\n");
                vec![format!("%w_{id}")]
            }
            _ => {
                body += &format!("     %v_{id} = OpBitcast %v2u %{id}\n");
                (0..2)
                    .map(|c| {
                        body += &format!("   %w{c}_{id} = OpCompositeExtract %uint %v_{id} {c}\n");
                        format!("%w{c}_{id}")
                    })
                    .collect()
            }
        };
        for w in words {
            body += &format!(
                "     %k{k} = OpConstant %uint {k}\n     %o{k} = OpIAdd %uint %base %k{k}\n     %p{k} = OpAccessChain %pu %out %int_0 %o{k}\n               OpStore %p{k} {w}\n"
            );
            k += 1;
        }
    }
    assert!(k <= 20);
    // Constants must precede the function: hoist them.
    let (consts, code): (Vec<&str>, Vec<&str>) =
        body.lines().partition(|l| l.contains("OpConstant"));
    LDEXP_MULEXT
        .replace(
            "       %main = OpFunction",
            &format!("{}\n       %main = OpFunction", consts.join("\n")),
        )
        .replace("OUTPUTS", &code.join("\n"))
}

/// x * 2^n for an f32 x as the hardware computes it by default (f32 denormal results
/// flushed to zero, kernels without float controls): exact in f64, rounded once.
fn ldexp_f32_reference(x: f32, n: i64) -> f32 {
    let r = (f64::from(x) * 2f64.powi(n.clamp(-400, 400) as i32)) as f32;
    if r != 0.0 && r.abs() < f32::MIN_POSITIVE {
        0.0f32.copysign(r)
    } else {
        r
    }
}

/// x * 2^n for an f64 x (no denormal results among the test's inputs): two exact powers of
/// two so that neither overflows before the product does.
fn ldexp_f64_reference(x: f64, n: i64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let n = n.clamp(-2200, 2200) as i32;
    x * 2f64.powi(n / 2) * 2f64.powi(n - n / 2)
}

/// ldexp with 8/16/32/64-bit exponents gives x * 2^e (the narrow exponents sign-extended,
/// 64-bit ones beyond the 32-bit range saturating), and OpUMulExtended/OpSMulExtended on
/// 64-bit operands give the 128-bit product's halves, at SIMD8/16/32.
#[test]
fn ldexp_exponent_widths_and_64bit_mul_extended_match_reference() {
    let n = 64;
    let xs64 = int64_inputs(n, 0x9E37_79B9_7F4A_7C15 | 1);
    let mut ys = int64_inputs(n, 0x2545_F491_4F6C_DD1C | 1);
    // Exponents: small signed values (narrow ones sign-extended), the 8/16/32-bit edges,
    // values that saturate (+-128, +-300), and 64-bit values beyond the 32-bit range.
    let exps: [i64; 24] = [
        -1,
        -3,
        -20,
        5,
        0,
        127,
        -128,
        128,
        -126,
        -127,
        300,
        -300,
        1 << 32,
        -(1 << 32),
        (1 << 32) + 5,
        -(1 << 32) - 3,
        i64::MAX,
        i64::MIN,
        0x7fff,
        -0x8000,
        40,
        -40,
        100,
        -100,
    ];
    for (i, e) in exps.iter().enumerate() {
        ys[20 + i] = *e;
    }
    let mut rng = XorShift32(0x1234_5678);
    let xf: Vec<f32> = (0..n)
        .map(|i| {
            let s = rng.next_u32();
            let edges = [1.0f32, -1.5, 0.0, -0.0, f32::INFINITY, 1.75, -1.25, 0.75];
            if i % 5 == 0 {
                edges[(i / 5) % edges.len()]
            } else {
                // |x| in [1, 2): no input denormals.
                f32::from_bits(0x3f80_0000 | (s & 0x807f_ffff))
            }
        })
        .collect();
    let bits = |v: &[i64]| u64_words(&v.iter().map(|x| *x as u64).collect::<Vec<_>>());
    let xw: Vec<u32> = xf.iter().map(|x| x.to_bits()).collect();
    let Some(words) = spirv_as("ldexp_mulext", &ldexp_mulext_source(), "vulkan1.1") else {
        return;
    };
    for simd in [8, 16, 32] {
        let k = kernel_words("ldexp_mulext", &words, simd, &Build::default());
        let out = run_buffers(
            &k,
            [4, 1, 1],
            &[bits(&xs64), bits(&ys), xw.clone(), vec![0; 20 * n]],
        );
        let o = &out[3];
        for i in 0..n {
            let (a, b, x) = (xs64[i], ys[i], xf[i]);
            let w = |k: usize| o[20 * i + k];
            let q = |k: usize| u64::from(w(k)) | (u64::from(w(k + 1)) << 32);
            let up = u128::from(a as u64) * u128::from(b as u64);
            let sp = i128::from(a) * i128::from(b);
            let ctx = format!("SIMD{simd} lane {i}: a = {a:#x}, b = {b:#x}, x = {x:e}");
            assert_eq!(q(0), up as u64, "umulExtended lo, {ctx}");
            assert_eq!(q(2), (up >> 64) as u64, "umulExtended hi, {ctx}");
            assert_eq!(q(4), sp as u64, "smulExtended lo, {ctx}");
            assert_eq!(q(6), (sp >> 64) as u64, "smulExtended hi, {ctx}");
            let f32_cases = [
                (8, b, "i64"),
                (9, i64::from(b as i32), "i32"),
                (10, i64::from(b as i16), "i16"),
                (11, i64::from(b as i8), "i8"),
            ];
            for (k, e, ty) in f32_cases {
                let want = ldexp_f32_reference(x, e);
                let got = f32::from_bits(w(k));
                assert!(
                    got.to_bits() == want.to_bits(),
                    "ldexp(f32, {ty} {e}) = {got:e}, want {want:e}, {ctx}"
                );
            }
            let xd = f64::from(x);
            for (k, e, ty) in [
                (12, b, "i64"),
                (14, i64::from(b as i16), "i16"),
                (16, i64::from(b as i8), "i8"),
            ] {
                let want = ldexp_f64_reference(xd, e);
                let got = f64::from_bits(q(k));
                assert!(
                    same_f64(got, want),
                    "ldexp(f64, {ty} {e}) = {got:e}, want {want:e}, {ctx}"
                );
            }
        }
    }
}
