//! 8/16-bit integers and fp16 through the Gen9 back end on the simulated GPU (issue 7):
//! GLSL with GL_EXT_shader_explicit_arithmetic_types and 8/16-bit storage, compiled at
//! SIMD8/16/32, dispatched through the simulated i915 and compared per element with a Rust
//! reference (wrapping integer semantics; fp16 via the `half` crate). Without a float mode
//! fp16 denormal results are flushed (cr0 = 0: the F -> HF conversion flushes them); the
//! DenormPreserve/FlushToZero modes are tested in float_controls_sim.rs. Skipped without
//! glslangValidator.

mod sim_common;

use sim_common::*;

/// The 8/16-bit shaders are compiled for Vulkan 1.2.
fn kernel(name: &str, src: &str, simd: u32) -> Option<Kernel> {
    kernel_env(name, src, simd, "vulkan1.2")
}

/// Deterministic inputs: the edge values first, then a fixed-seed LCG.
fn inputs(n: usize, edges: &[u32], seed: u64) -> Vec<u32> {
    let mut s = seed;
    let mut v: Vec<u32> = edges.to_vec();
    while v.len() < n {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.push((s >> 33) as u32);
    }
    v.truncate(n);
    v
}

/// Runs `src` at every width over `groups` groups of 32 with the buffers' initial words;
/// returns the buffers' final words per width.
fn run_all(
    name: &str,
    src: &str,
    groups: u32,
    bufs: &[Vec<u32>],
) -> Option<Vec<(u32, Vec<Vec<u32>>)>> {
    let mut out = Vec::new();
    for simd in [8, 16, 32] {
        let k = kernel(name, src, simd)?;
        out.push((simd, run_buffers(&k, [groups, 1, 1], bufs)));
    }
    Some(out)
}

fn halves(words: &[u32]) -> Vec<u16> {
    words
        .iter()
        .flat_map(|w| [*w as u16, (*w >> 16) as u16])
        .collect()
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

const INT16: &str = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer I { int16_t a[]; };
layout(set=0, binding=1) buffer O { int16_t o[]; };
layout(set=0, binding=2) buffer P { int r[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int16_t x = a[2u * i], y = a[2u * i + 1u];
    int16_t yd = y == int16_t(0) ? int16_t(1) : y;
    uint k = 12u * i;
    o[k + 0u] = x + y;
    o[k + 1u] = x - y;
    o[k + 2u] = x * y;
    o[k + 3u] = x / yd;
    o[k + 4u] = x % yd;
    o[k + 5u] = x >> (y & int16_t(15));
    o[k + 6u] = x << (y & int16_t(15));
    o[k + 7u] = min(x, y);
    o[k + 8u] = max(x, y);
    o[k + 9u] = abs(x);
    o[k + 10u] = ~x ^ y;
    o[k + 11u] = int16_t(uint16_t(x) >> (uint16_t(y) & uint16_t(15)));
    uint m = 8u * i;
    r[m + 0u] = int(x);
    r[m + 1u] = int(uint(uint16_t(x)));
    r[m + 2u] = (x < y ? 1 : 0) | (uint16_t(x) < uint16_t(y) ? 2 : 0) | (x == y ? 4 : 0)
        | (x >= y ? 8 : 0);
    r[m + 3u] = int(int8_t(x));
    r[m + 4u] = floatBitsToInt(float(x));
    r[m + 5u] = int(float16BitsToInt16(float16_t(x)));
    r[m + 6u] = int(uint(min(uint16_t(x), uint16_t(y))));
    r[m + 7u] = int(x) * int(y);
}";

#[test]
fn int16_ops_match_reference() {
    let n = 64;
    let edges: Vec<u32> = [
        (0x8000, 0xFFFF), // INT16_MIN, -1
        (0x8000, 0x8000),
        (0x7FFF, 1),
        (0xFFFF, 0x7FFF),
        (0, 0),
        (5, 0xFFFD),
        (0xFFF9, 3),
        (1234, 17),
    ]
    .iter()
    .map(|(x, y)| x | (y << 16))
    .collect();
    let a = inputs(n, &edges, 0x16);
    let Some(runs) = run_all(
        "int16",
        INT16,
        n as u32 / 32,
        &[a.clone(), vec![0; n * 6], vec![0; n * 8]],
    ) else {
        return;
    };
    let ah = halves(&a);
    for (simd, res) in runs {
        let o = halves(&res[1]);
        let r = &res[2];
        for i in 0..n {
            let (x, y) = (ah[2 * i] as i16, ah[2 * i + 1] as i16);
            let yd = if y == 0 { 1 } else { y };
            let (ux, uy) = (x as u16, y as u16);
            // OpSMod: the sign of the result follows the divisor.
            let smod = {
                let r = x.wrapping_rem(yd);
                if r != 0 && (r < 0) != (yd < 0) {
                    r.wrapping_add(yd)
                } else {
                    r
                }
            };
            let want16: [i16; 12] = [
                x.wrapping_add(y),
                x.wrapping_sub(y),
                x.wrapping_mul(y),
                x.wrapping_div(yd),
                smod,
                x >> (y & 15),
                x.wrapping_shl((y & 15) as u32),
                x.min(y),
                x.max(y),
                x.wrapping_abs(),
                !x ^ y,
                (ux >> (uy & 15)) as i16,
            ];
            expect_slots(simd, i, "op", format_args!("x={x} y={y}"), &want16, |k| {
                o[12 * i + k] as i16
            });
            let want32: [i32; 8] = [
                x as i32,
                ux as i32,
                (x < y) as i32
                    | ((ux < uy) as i32) << 1
                    | ((x == y) as i32) << 2
                    | ((x >= y) as i32) << 3,
                x as i8 as i32,
                (x as f32).to_bits() as i32,
                half::f16::from_f32(x as f32).to_bits() as i16 as i32,
                ux.min(uy) as i32,
                x as i32 * y as i32,
            ];
            expect_slots(
                simd,
                i,
                "32-bit result",
                format_args!("x={x} y={y}"),
                &want32,
                |k| r[8 * i + k] as i32,
            );
        }
    }
}

const INT8: &str = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer I { int8_t a[]; };
layout(set=0, binding=1) buffer O { int8_t o[]; };
layout(set=0, binding=2) buffer P { int r[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int8_t x = a[2u * i], y = a[2u * i + 1u];
    int8_t yd = y == int8_t(0) ? int8_t(1) : y;
    uint k = 12u * i;
    o[k + 0u] = x + y;
    o[k + 1u] = x - y;
    o[k + 2u] = x * y;
    o[k + 3u] = x / yd;
    o[k + 4u] = int8_t(uint8_t(x) / uint8_t(yd));
    o[k + 5u] = x >> (y & int8_t(7));
    o[k + 6u] = x << (y & int8_t(7));
    o[k + 7u] = min(x, y);
    o[k + 8u] = int8_t(max(uint8_t(x), uint8_t(y)));
    o[k + 9u] = -x;
    o[k + 10u] = x & y | int8_t(3);
    o[k + 11u] = int8_t(int16_t(x) * int16_t(3));
    uint m = 6u * i;
    r[m + 0u] = int(x);
    r[m + 1u] = int(uint(uint8_t(x)));
    r[m + 2u] = (x < y ? 1 : 0) | (uint8_t(x) < uint8_t(y) ? 2 : 0) | (x != y ? 4 : 0);
    r[m + 3u] = int(int16_t(x));
    r[m + 4u] = floatBitsToInt(float(uint8_t(x)));
    r[m + 5u] = int(int8_t(float(y) * 0.5));
}";

#[test]
fn int8_ops_match_reference() {
    let n = 64;
    let edges: Vec<u32> = [
        (0x80, 0xFF),
        (0x80, 0x80),
        (0x7F, 1),
        (0xFF, 0x7F),
        (0, 0),
        (5, 0xFD),
    ]
    .iter()
    .map(|(x, y)| x | (y << 8) | (0x11 << 16) | (0x22 << 24))
    .collect();
    // Every element takes two bytes; edges fill the first pairs.
    let mut a = inputs(n / 2, &edges, 0x8);
    a.resize(n / 2, 0);
    let ab = bytes(&a);
    let Some(runs) = run_all(
        "int8",
        INT8,
        n as u32 / 32,
        &[a.clone(), vec![0xA5A5_A5A5; n * 3], vec![0; n * 6]],
    ) else {
        return;
    };
    for (simd, res) in runs {
        let o = bytes(&res[1]);
        let r = &res[2];
        for i in 0..n {
            let (x, y) = (ab[2 * i] as i8, ab[2 * i + 1] as i8);
            let yd = if y == 0 { 1 } else { y };
            let (ux, uy) = (x as u8, y as u8);
            let want8: [i8; 12] = [
                x.wrapping_add(y),
                x.wrapping_sub(y),
                x.wrapping_mul(y),
                x.wrapping_div(yd),
                (ux / yd as u8) as i8,
                x >> (y & 7),
                x.wrapping_shl((y & 7) as u32),
                x.min(y),
                ux.max(uy) as i8,
                x.wrapping_neg(),
                x & y | 3,
                (x as i16 * 3) as i8,
            ];
            // Every byte is written by one lane: neighbours written by other lanes in the
            // same message survive (byte scattered writes, no read-modify-write).
            expect_slots(simd, i, "op", format_args!("x={x} y={y}"), &want8, |k| {
                o[12 * i + k] as i8
            });
            let want32: [i32; 6] = [
                x as i32,
                ux as i32,
                (x < y) as i32 | ((ux < uy) as i32) << 1 | ((x != y) as i32) << 2,
                x as i32,
                (ux as f32).to_bits() as i32,
                (y as f32 * 0.5) as i8 as i32,
            ];
            expect_slots(
                simd,
                i,
                "32-bit result",
                format_args!("x={x} y={y}"),
                &want32,
                |k| r[6 * i + k] as i32,
            );
        }
    }
}

const FP16: &str = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer I { float16_t a[]; };
layout(set=0, binding=1) buffer O { float16_t o[]; };
layout(set=0, binding=2) buffer P { int r[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float16_t x = a[2u * i], y = a[2u * i + 1u];
    uint k = 8u * i;
    o[k + 0u] = x + y;
    o[k + 1u] = x - y;
    o[k + 2u] = x * y;
    o[k + 3u] = x / y;
    o[k + 4u] = sqrt(abs(x));
    o[k + 5u] = -x;
    o[k + 6u] = float16_t(float(x) * 3.0);
    o[k + 7u] = min(x, y);
    uint m = 4u * i;
    r[m + 0u] = floatBitsToInt(float(x));
    r[m + 1u] = (x < y ? 1 : 0) | (x == y ? 2 : 0) | (x != y ? 4 : 0) | (isnan(x) ? 8 : 0)
        | (isinf(x) ? 16 : 0) | (x >= y ? 32 : 0);
    r[m + 2u] = abs(x) < float16_t(30000.0) ? int(x) : 12345;
    r[m + 3u] = int(float16BitsToUint16(float16_t(int(y) * 7)));
}";

/// A binary f32 reference operation.
type F2 = dyn Fn(f32, f32) -> f32;

/// `h` with a denormal flushed to zero of the same sign.
fn ftz(h: half::f16) -> half::f16 {
    if h.to_bits() & 0x7C00 == 0 && h.to_bits() & 0x3FF != 0 {
        half::f16::from_bits(h.to_bits() & 0x8000)
    } else {
        h
    }
}

/// Whether the f16 bits `got` are `f(x, y)` rounded to f16 (within `ulps`) under any
/// denormal treatment: the inputs read as they are or flushed, the result kept or flushed.
fn f16_matches(got: u16, x: half::f16, y: half::f16, f: &F2, ulps: u16) -> bool {
    [(x, y), (ftz(x), ftz(y))].iter().any(|(xh, yh)| {
        let v = half::f16::from_f32(f(xh.to_f32(), yh.to_f32()));
        f16_close(got, v, ulps) || f16_close(got, ftz(v), ulps)
    })
}

fn f16_close(got: u16, want: half::f16, ulps: u16) -> bool {
    let g = half::f16::from_bits(got);
    if want.is_nan() {
        return g.is_nan();
    }
    if g.is_nan() || (g.to_bits() ^ want.to_bits()) & 0x8000 != 0 {
        return g.to_f32() == 0.0 && want.to_f32() == 0.0;
    }
    got.abs_diff(want.to_bits()) <= ulps
}

#[test]
fn fp16_ops_match_reference() {
    use half::f16;
    let n = 96;
    let e = |x: f32| f16::from_f32(x).to_bits() as u32;
    let edges: Vec<u32> = [
        (e(1.0), e(3.0)),
        (0x7C00, 0xFC00),     // inf, -inf
        (0x7E00, e(1.0)),     // NaN
        (0x8000, 0x0000),     // -0, +0
        (0x0001, e(1.0)),     // smallest denormal
        (0x03FF, 0x8200),     // denormals
        (e(65504.0), e(2.0)), // overflow
        (e(0.5), e(-0.5)),
        (e(2049.0), e(1.0)), // rounding at 2048
        (e(-7.25), e(0.1)),
        (e(1e-4), e(1e-3)), // results in the denormal range
    ]
    .iter()
    .map(|(x, y)| x | (y << 16))
    .collect();
    // Random halves with NaN/inf exponents made rarer (fold exponent 31 into 30).
    let a: Vec<u32> = inputs(n, &edges, 0xF16)
        .into_iter()
        .enumerate()
        .map(|(k, w)| if k < edges.len() { w } else { w & !0x4000_4000 })
        .collect();
    let Some(runs) = run_all(
        "fp16",
        FP16,
        n as u32 / 32,
        &[a.clone(), vec![0; n * 4], vec![0; n * 4]],
    ) else {
        return;
    };
    let ah = halves(&a);
    for (simd, res) in runs {
        let o = halves(&res[1]);
        let r = &res[2];
        for i in 0..n {
            let (xr, yr) = (f16::from_bits(ah[2 * i]), f16::from_bits(ah[2 * i + 1]));
            // Denormal behaviour is not fixed (the driver reports neither preserve nor
            // flush-to-zero for fp16): inputs may be read as they are or flushed, results may be
            // flushed. Every other value must match exactly (or within the ULP bound).
            let ok16 = |k: usize, got: u16, ulps: u16, f: &F2| {
                f16_matches(got, xr, yr, f, ulps) || (k == 7 && (xr.is_nan() || yr.is_nan()))
            };
            let ops: [(&F2, u16); 8] = [
                (&|x, y| x + y, 0),
                (&|x, y| x - y, 0),
                (&|x, y| x * y, 0),
                (&|x, y| x / y, 2),
                (&|x, _| x.abs().sqrt(), 1),
                (&|x, _| -x, 0),
                (&|x, _| x * 3.0, 0),
                (&|x, y| if y < x { y } else { x }, 0),
            ];
            let (x, y) = (xr.to_f32(), yr.to_f32());
            for (k, (f, ulps)) in ops.iter().enumerate() {
                let got = o[8 * i + k];
                assert!(
                    ok16(k, got, *ulps, f),
                    "SIMD{simd} element {i} op {k}: x={x} y={y} got {got:#06x} ({})",
                    f16::from_bits(got),
                );
            }
            let rnd = |v: f32| f16::from_f32(v);
            let xf = r[4 * i];
            assert!(
                xf == x.to_bits() || xf == ftz(xr).to_f32().to_bits(),
                "SIMD{simd} element {i} f16->f32 x={x}: got {xf:#x}"
            );
            let cmp = |x: f32, y: f32| {
                (x < y) as u32
                    | ((x == y) as u32) << 1
                    | ((x != y) as u32) << 2
                    | (x.is_nan() as u32) << 3
                    | (x.is_infinite() as u32) << 4
                    | ((x >= y) as u32) << 5
            };
            let c = r[4 * i + 1];
            assert!(
                c == cmp(x, y) || c == cmp(ftz(xr).to_f32(), ftz(yr).to_f32()),
                "SIMD{simd} element {i} compares x={x} y={y}: got {c:#x}"
            );
            let conv = if x.abs() < 30000.0 { x as i32 } else { 12345 };
            assert_eq!(
                r[4 * i + 2] as i32,
                conv,
                "SIMD{simd} element {i} f2i x={x}"
            );
            if y.is_finite() && y.abs() < 1000.0 {
                let w = ftz(rnd((y as i32 * 7) as f32)).to_bits() as u32;
                assert_eq!(r[4 * i + 3], w, "SIMD{simd} element {i} i2f16 y={y}");
            }
        }
    }
}

/// Pairs (x, y) of 16-bit words: the edge pairs first, then fixed-seed random words.
fn pairs16(n: usize, edges: &[(u32, u32)], seed: u64) -> Vec<u32> {
    let e: Vec<u32> = edges.iter().map(|(x, y)| x | (y << 16)).collect();
    inputs(n, &e, seed)
}

const INT16_NATIVE: &str = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer I { int16_t a[]; };
layout(set=0, binding=1) buffer O { int16_t o[]; };
layout(set=0, binding=2) buffer P { int r[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int16_t x = a[2u * i], y = a[2u * i + 1u];
    uint16_t ux = uint16_t(x), uy = uint16_t(y);
    uint k = 14u * i;
    o[k + 0u] = -x;
    o[k + 1u] = int16_t(max(ux, uy));
    o[k + 2u] = x | y;
    o[k + 3u] = x & int16_t(0x0F0F);
    o[k + 4u] = x + int16_t(-7);
    o[k + 5u] = int16_t(100) - x;
    o[k + 6u] = x * int16_t(-3);
    o[k + 7u] = clamp(x, int16_t(-100), int16_t(100));
    o[k + 8u] = x >> 3;
    o[k + 9u] = int16_t(ux >> uint16_t(7));
    o[k + 10u] = x != y ? x : y;
    o[k + 11u] = x << 15;
    o[k + 12u] = int16_t(min(ux, uint16_t(1000)));
    o[k + 13u] = int16_t(uint16_t(x) * uint16_t(y)) ^ int16_t(0x5555);
    uint m = 2u * i;
    r[m + 0u] = (x < int16_t(5) ? 1 : 0) | (int16_t(5) < x ? 2 : 0) | (ux >= uy ? 4 : 0)
        | (x <= y ? 8 : 0) | (x > y ? 16 : 0) | (ux > uint16_t(40000) ? 32 : 0)
        | (x != int16_t(-1) ? 64 : 0) | (!(x == y) ? 128 : 0);
    r[m + 1u] = int(x < y) + int(uy < ux) * 10;
}";

/// Every native 16-bit integer op (with register and immediate operands) against the Rust
/// reference at SIMD8/16/32.
#[test]
fn int16_native_ops_match_reference() {
    let n = 96;
    let edges = [
        (0x8000, 0xFFFF), // INT16_MIN, -1
        (0x8000, 0x8000),
        (0x7FFF, 0x7FFF),
        (0xFFFF, 0x7FFF),
        (0, 0),
        (5, 5),
        (0xFFFF, 0xFFFF),
        (100, 0xFF9C),
        (0x9C40, 0x9C41), // around 40000 unsigned
        (0x0F0F, 0xF0F0),
    ];
    let a = pairs16(n, &edges, 0x1616);
    let Some(runs) = run_all(
        "int16_native",
        INT16_NATIVE,
        n as u32 / 32,
        &[a.clone(), vec![0; n * 7], vec![0; n * 2]],
    ) else {
        return;
    };
    let ah = halves(&a);
    for (simd, res) in runs {
        let o = halves(&res[1]);
        let r = &res[2];
        for i in 0..n {
            let (x, y) = (ah[2 * i] as i16, ah[2 * i + 1] as i16);
            let (ux, uy) = (x as u16, y as u16);
            let want: [i16; 14] = [
                x.wrapping_neg(),
                ux.max(uy) as i16,
                x | y,
                x & 0x0F0F,
                x.wrapping_add(-7),
                100i16.wrapping_sub(x),
                x.wrapping_mul(-3),
                x.clamp(-100, 100),
                x >> 3,
                (ux >> 7) as i16,
                if x != y { x } else { y },
                x.wrapping_shl(15),
                ux.min(1000) as i16,
                (ux.wrapping_mul(uy) as i16) ^ 0x5555,
            ];
            expect_slots(simd, i, "op", format_args!("x={x} y={y}"), &want, |k| {
                o[14 * i + k] as i16
            });
            let flags = (x < 5) as i32
                | ((5 < x) as i32) << 1
                | ((ux >= uy) as i32) << 2
                | ((x <= y) as i32) << 3
                | ((x > y) as i32) << 4
                | ((ux > 40000) as i32) << 5
                | ((x != -1) as i32) << 6
                | ((x != y) as i32) << 7;
            assert_eq!(r[2 * i] as i32, flags, "SIMD{simd} element {i} compares");
            let b2i = (x < y) as i32 + (uy < ux) as i32 * 10;
            assert_eq!(r[2 * i + 1] as i32, b2i, "SIMD{simd} element {i} b2i");
        }
    }
}

const FP16_NATIVE: &str = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer I { float16_t a[]; };
layout(set=0, binding=1) buffer O { float16_t o[]; };
layout(set=0, binding=2) buffer P { int r[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float16_t x = a[2u * i], y = a[2u * i + 1u];
    uint k = 10u * i;
    o[k + 0u] = max(x, y);
    o[k + 1u] = abs(x);
    o[k + 2u] = x * float16_t(2.5);
    o[k + 3u] = float16_t(1.0) - x;
    o[k + 4u] = -abs(x);
    o[k + 5u] = clamp(x, float16_t(-1.0), float16_t(1.0));
    o[k + 6u] = x > y ? x : y;
    o[k + 7u] = x * y + y;
    o[k + 8u] = (x - y) * float16_t(0.1);
    o[k + 9u] = -(x + float16_t(-0.0));
    r[i] = (x <= y ? 1 : 0) | (x > y ? 2 : 0) | (isnan(y) ? 4 : 0) | (x < float16_t(0.5) ? 8 : 0)
        | (float16_t(0.5) <= x ? 16 : 0) | (x == float16_t(1.0) ? 32 : 0)
        | (!(x != y) ? 64 : 0) | (x >= y ? 128 : 0);
}";

/// Every native fp16 op (with register and immediate operands) against the Rust reference
/// at SIMD8/16/32: one rounding of the exact result (0 ULP), denormals kept or flushed.
#[test]
fn fp16_native_ops_match_reference() {
    use half::f16;
    let n = 128;
    let e = |x: f32| f16::from_f32(x).to_bits() as u32;
    let edges = [
        (0x7C00, 0xFC00), // inf, -inf
        (0x7E00, e(1.0)), // NaN
        (e(1.0), 0x7E00),
        (0x8000, 0x0000), // -0, +0
        (0x0000, 0x8000),
        (0x0001, e(1.0)), // smallest denormal
        (0x03FF, 0x8200), // denormals
        (e(65504.0), e(65504.0)),
        (e(0.5), e(-0.5)),
        (e(2049.0), e(1.0)), // ties at 2048
        (e(1.0), e(1.0)),
        (e(-1.5), e(0.5)),
        (e(6.1e-5), e(-6.0e-5)), // results in the denormal range
        (0x3C01, 0x3C01),        // 1 + 2^-10: the product rounds (tie cases nearby)
        (0x3BFF, 0x4001),
    ];
    // Random halves with NaN/inf exponents made rarer (fold exponent 31 into 30).
    let a: Vec<u32> = pairs16(n, &edges, 0xF160)
        .into_iter()
        .enumerate()
        .map(|(k, w)| if k < edges.len() { w } else { w & !0x4000_4000 })
        .collect();
    let Some(runs) = run_all(
        "fp16_native",
        FP16_NATIVE,
        n as u32 / 32,
        &[a.clone(), vec![0; n * 5], vec![0; n]],
    ) else {
        return;
    };
    let ah = halves(&a);
    let h = |x: f32| f16::from_f32(x);
    let ops: [&F2; 10] = [
        &|x, y| if x >= y { x } else { y },
        &|x, _| x.abs(),
        &|x, _| x * 2.5,
        &|x, _| 1.0 - x,
        &|x, _| -x.abs(),
        &|x, _| {
            let l = if x >= -1.0 { x } else { -1.0 };
            if l < 1.0 {
                l
            } else {
                1.0
            }
        },
        &|x, y| if x > y { x } else { y },
        // x * y rounded to f16 first, then + y (two GLSL operations).
        &|x, y| f16::from_f32(x * y).to_f32() + y,
        &|x, y| f16::from_f32(x - y).to_f32() * f16::from_f32(0.1).to_f32(),
        &|x, _| -(x + -0.0),
    ];
    for (simd, res) in runs {
        let o = halves(&res[1]);
        let r = &res[2];
        for i in 0..n {
            let (xr, yr) = (f16::from_bits(ah[2 * i]), f16::from_bits(ah[2 * i + 1]));
            let nan = xr.is_nan() || yr.is_nan();
            for (k, f) in ops.iter().enumerate() {
                // max/clamp of a NaN: which operand the hardware picks is not checked.
                if nan && matches!(k, 0 | 5) {
                    continue;
                }
                let got = o[10 * i + k];
                let ok = f16_matches(got, xr, yr, *f, 0)
                    || (k == 7 || k == 8) && {
                        // The intermediate (x*y or x-y) in the denormal range, flushed.
                        let (x, y) = (ftz(xr).to_f32(), ftz(yr).to_f32());
                        let m = if k == 7 {
                            ftz(h(x * y)).to_f32() + y
                        } else {
                            ftz(h(x - y)).to_f32() * h(0.1).to_f32()
                        };
                        f16_close(got, ftz(h(m)), 0)
                    };
                assert!(
                    ok,
                    "SIMD{simd} element {i} op {k}: x={xr} ({:#06x}) y={yr} ({:#06x}) got {got:#06x} ({})",
                    xr.to_bits(),
                    yr.to_bits(),
                    f16::from_bits(got),
                );
            }
            let (x, y) = (xr.to_f32(), yr.to_f32());
            let (fx, fy) = (ftz(xr).to_f32(), ftz(yr).to_f32());
            let c = r[i];
            assert!(
                c == cmp2(x, y) || c == cmp2(fx, fy),
                "SIMD{simd} element {i} compares x={x} y={y}: got {c:#x} want {:#x}",
                cmp2(x, y)
            );
        }
    }
}

/// The compare bits of FP16_NATIVE (`!(x != y)`: GLSL `!=` is unordered, so its negation
/// is ordered equality).
fn cmp2(x: f32, y: f32) -> u32 {
    (x <= y) as u32
        | ((x > y) as u32) << 1
        | (y.is_nan() as u32) << 2
        | ((x < 0.5) as u32) << 3
        | ((0.5 <= x) as u32) << 4
        | ((x == 1.0) as u32) << 5
        | ((x == y) as u32) << 6
        | ((x >= y) as u32) << 7
}

const BOOLS: &str = "#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer I { int16_t a[]; };
layout(set=0, binding=1) buffer F { float16_t h[]; };
layout(set=0, binding=2) buffer D { double d[]; };
layout(set=0, binding=3) buffer P { int r[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int16_t x = a[2u * i], y = a[2u * i + 1u];
    float16_t p = h[2u * i], q = h[2u * i + 1u];
    double u = d[i];
    int w = int(i) * 7 - 100;
    bool b16 = x < y;
    bool bh = p <= q;
    bool b8 = int8_t(x) > int8_t(y);
    bool b32 = w > int(x);
    bool b64 = u < double(w);
    bool e = (b16 && b32) || ((b64 != bh) ^^ b8);
    bool ph;
    if (b32) {
        ph = b16 || b64;
    } else {
        ph = bh && !b8;
    }
    bool lp = b8;
    for (int k = 0; k < int(i & 7u); k++) {
        lp = lp != (x > int16_t(k * 1000 - 3000));
        if (lp && b64) {
            lp = bh;
        }
    }
    uint m = 4u * i;
    r[m + 0u] = int(e) | int(ph) << 1 | int(lp) << 2 | int(b16 == b64) << 3
        | int(bh != b32) << 4 | int(b8) << 5;
    r[m + 1u] = int(ph ? x : y);
    r[m + 2u] = floatBitsToInt(float(b16) + float(bh ? float16_t(2.0) : float16_t(0.5)));
    r[m + 3u] = int(double(lp) * 3.0lf) + int(uint16_t(b8)) * 10 + int(int64_t(e)) * 100;
}";

/// 16-bit booleans (of 8/16-bit compares) mixed with 32- and 64-bit ones in one expression,
/// across `if` results (phis) and loop parameters, selected on and converted, at
/// SIMD8/16/32.
#[test]
fn mixed_width_booleans_match_reference() {
    use half::f16;
    let n = 96;
    let e = |x: f32| f16::from_f32(x).to_bits() as u32;
    let a = pairs16(
        n,
        &[(0x8000, 0xFFFF), (5, 5), (0xFF80, 0x007F), (0, 1)],
        0xB16,
    );
    let hp = pairs16(
        n,
        &[
            (0x7E00, e(1.0)),
            (e(1.0), e(1.0)),
            (0x8000, 0),
            (e(-2.0), e(3.0)),
        ],
        0xB0F,
    );
    // Random halves without NaN/inf.
    let hp: Vec<u32> = hp
        .into_iter()
        .enumerate()
        .map(|(k, w)| if k < 4 { w } else { w & !0x4000_4000 })
        .collect();
    let dv: Vec<f64> = (0..n).map(|k| (k as f64 * 37.0) % 150.0 - 90.5).collect();
    let dw: Vec<u32> = dv
        .iter()
        .flat_map(|v| [v.to_bits() as u32, (v.to_bits() >> 32) as u32])
        .collect();
    let Some(runs) = run_all(
        "bools",
        BOOLS,
        n as u32 / 32,
        &[a.clone(), hp.clone(), dw, vec![0; n * 4]],
    ) else {
        return;
    };
    let (ah, hh) = (halves(&a), halves(&hp));
    for (simd, res) in runs {
        let r = &res[3];
        for i in 0..n {
            let (x, y) = (ah[2 * i] as i16, ah[2 * i + 1] as i16);
            let (p, q) = (
                f16::from_bits(hh[2 * i]).to_f32(),
                f16::from_bits(hh[2 * i + 1]).to_f32(),
            );
            let u = dv[i];
            let w = i as i32 * 7 - 100;
            let b16 = x < y;
            let bh = p <= q;
            let b8 = (x as i8) > (y as i8);
            let b32 = w > x as i32;
            let b64 = u < w as f64;
            let e = (b16 && b32) || ((b64 != bh) ^ b8);
            let ph = if b32 { b16 || b64 } else { bh && !b8 };
            let mut lp = b8;
            for k in 0..(i & 7) as i32 {
                lp = lp != (x as i32 > k * 1000 - 3000);
                if lp && b64 {
                    lp = bh;
                }
            }
            let want = [
                e as i32
                    | (ph as i32) << 1
                    | (lp as i32) << 2
                    | ((b16 == b64) as i32) << 3
                    | ((bh != b32) as i32) << 4
                    | (b8 as i32) << 5,
                if ph { x } else { y } as i32,
                (b16 as i32 as f32 + if bh { 2.0 } else { 0.5 }).to_bits() as i32,
                lp as i32 * 3 + b8 as i32 * 10 + e as i32 * 100,
            ];
            for (k, want) in want.iter().enumerate() {
                assert_eq!(
                    r[4 * i + k] as i32,
                    *want,
                    "SIMD{simd} element {i} result {k}: x={x} y={y} p={p} q={q} u={u}"
                );
            }
        }
    }
}

/// A 16-bit boolean widened to 32 and 64 bits (IR text straight into the back end: the
/// boolean pass itself only ever narrows, so no GLSL reaches this conversion) and then
/// inverted by XOR with `true`: a widening that does not sign-extend the 0 / 0xFFFF word
/// over the whole slot leaves stray bits that XOR turns into a wrong `true`.
const WIDEN_B16: &str = "shader local_size 16 1 1 shared 0 local 0 push 0
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 2
    %2:i32 = ishl %0, %1
    %3:i32 = load ssbo[1] %2 align 4
    %4:i16 = i2i %3
    %5:i16 = const 7
    %6:b16 = ilt %4, %5
    %7:b32 = b2b %6
    %8:b32 = const true
    %9:b32 = ixor %7, %8
    %10:i32 = b2i %9
    %11:b64 = b2b %6
    %12:b64 = const true
    %13:b64 = ixor %11, %12
    %14:i32 = b2i %13
    %15:i32 = const 3
    %16:i32 = ishl %0, %15
    store ssbo[2] %16, %10 align 4
    %17:i32 = const 4
    %18:i32 = iadd %16, %17
    store ssbo[2] %18, %14 align 4";

#[test]
fn sixteen_bit_booleans_widen_by_sign_extension() {
    let shader = ferrite_compiler::parse::parse_shader(WIDEN_B16).expect("IR parses");
    let xs: Vec<u32> = (0..16i32).map(|i| (i * 3 - 20) as u32).collect();
    for simd in [8, 16] {
        let k = backend::compile(&shader, &options_at(simd)).expect("compiles");
        assert_eq!(k.simd, simd);
        let out = run_buffers(&k, [1, 1, 1], &[xs.clone(), vec![0; 32]]);
        for (i, &x) in xs.iter().enumerate() {
            let want = u32::from((x as i32 as i16) >= 7);
            assert_eq!(
                (out[1][2 * i], out[1][2 * i + 1]),
                (want, want),
                "SIMD{simd} lane {i}: x={}: !(x < 7) through b32 and b64\n{}",
                x as i32,
                k.asm
            );
        }
    }
}
