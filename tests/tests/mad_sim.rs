//! Multiply-add fusion of subtractions on the simulated GPU at SIMD8/16/32: `a * b - c`,
//! `c - a * b` and `-(a * b) + c` become one `mad` each with a negated source, and round
//! once (compared bit for bit with the CPU's fused multiply-add); with `precise` they stay a
//! multiply and an add. Skipped when glslangValidator is not installed.

mod sim_common;

use sim_common::*;

const SUBTRACT: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer B { float v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float a = v[4u * i], b = v[4u * i + 1u], c = v[4u * i + 2u], d = v[4u * i + 3u];
    v[4u * i] = a * b - c;
    v[4u * i + 1u] = c - b * d;
    v[4u * i + 2u] = -(c * d) + a;
}";

const PRECISE: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer B { float v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float a = v[4u * i], b = v[4u * i + 1u], c = v[4u * i + 2u];
    precise float p = a * b - c;
    v[4u * i] = p;
}";

/// Inputs whose product is not exact in f32, so fused and unfused results differ in the
/// last bits for many elements (deterministic, no seed needed).
fn inputs(n: usize) -> Vec<u32> {
    (0..n)
        .flat_map(|i| {
            let a = 1.0 + (i as f32) * 0.123_456_7;
            let b = 3.0 - (i as f32) * 0.010_987_6;
            let c = a * b + (i as f32 - 20.0) * 1.0e-6;
            let d = b * 0.75 + 0.001;
            [a.to_bits(), b.to_bits(), c.to_bits(), d.to_bits()]
        })
        .collect()
}

#[test]
fn subtractions_of_products_are_one_mad_with_a_negated_source() {
    let n = 48;
    let init = inputs(n);
    at_each_simd(
        "mad_sub",
        SUBTRACT,
        &Build::default(),
        [3, 1, 1],
        std::slice::from_ref(&init),
        |simd, k, out| {
            let mads = k.asm.lines().filter(|l| l.contains("mad(")).count();
            let muls = k
                .asm
                .lines()
                .filter(|l| l.contains(" mul(") && l.contains("F"))
                .count();
            assert!(
                mads >= 3 && muls == 0,
                "SIMD{simd}: {mads} mad, {muls} float mul\n{}",
                k.asm
            );
            for i in 0..n {
                let f = |k: usize| f32::from_bits(init[4 * i + k]);
                let (a, b, c, d) = (f(0), f(1), f(2), f(3));
                let want = [a.mul_add(b, -c), (-b).mul_add(d, c), (-c).mul_add(d, a)];
                for (j, w) in want.iter().enumerate() {
                    let got = f32::from_bits(out[0][4 * i + j]);
                    assert_eq!(
                        got.to_bits(),
                        w.to_bits(),
                        "SIMD{simd} element {i} form {j}: {got} want {w} (a={a} b={b} c={c} d={d})\n{}",
                        k.asm
                    );
                }
            }
        },
    );
}

#[test]
fn precise_subtraction_is_not_fused() {
    let n = 48;
    let init = inputs(n);
    at_each_simd(
        "mad_precise",
        PRECISE,
        &Build::default(),
        [3, 1, 1],
        std::slice::from_ref(&init),
        |simd, k, out| {
            assert!(
                !k.asm.contains("mad("),
                "SIMD{simd}: precise fused\n{}",
                k.asm
            );
            for i in 0..n {
                let f = |k: usize| f32::from_bits(init[4 * i + k]);
                let want = f(0) * f(1) - f(2);
                let got = f32::from_bits(out[0][4 * i]);
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "SIMD{simd} element {i}\n{}",
                    k.asm
                );
            }
        },
    );
}
