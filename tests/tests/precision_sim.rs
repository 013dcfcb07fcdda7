//! Vulkan precision of the 32-bit GLSL built-ins on the simulated GPU: GLSL compiled with
//! glslangValidator, through the front end, the passes and the Gen9 back end, run on the
//! simulator with seeded random and edge inputs, and compared with an f64 reference on the
//! host against the bounds of the Vulkan spec's precision table ("Precision and Operation
//! of SPIR-V Instructions"). Skipped when glslangValidator is not installed.
//!
//! `cargo test -p ferrite-tests --test precision_sim -- --nocapture` prints the worst case
//! of every built-in.

mod sim_common;

use sim_common::*;

/// Inputs per built-in; one workgroup of 64 per 64 inputs.
const N: usize = 512;

/// The built-ins under test, in the shader's order: (name, GLSL expression of x and y).
const FUNCS: &[(&str, &str)] = &[
    ("x/y", "x / y"),
    ("exp", "exp(x)"),
    ("exp2", "exp2(x)"),
    ("log", "log(x)"),
    ("log2", "log2(x)"),
    ("sqrt", "sqrt(x)"),
    ("inversesqrt", "inversesqrt(x)"),
    ("sin", "sin(x)"),
    ("cos", "cos(x)"),
    ("tan", "tan(x)"),
    ("asin", "asin(x)"),
    ("acos", "acos(x)"),
    ("atan", "atan(x)"),
    ("atan2", "atan(x, y)"),
    ("pow", "pow(x, y)"),
];

fn shader() -> String {
    let mut s = String::from(
        "#version 450
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer X { float xs[]; };
layout(set=0, binding=1) buffer Y { float ys[]; };
layout(set=0, binding=2) buffer O { float os[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float x, y;
",
    );
    for (j, (_, e)) in FUNCS.iter().enumerate() {
        let k = j * N;
        s += &format!("    x = xs[{k}u + i]; y = ys[{k}u + i]; os[{k}u + i] = {e};\n");
    }
    s += "}\n";
    s
}

/// xorshift64*, fixed seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f32 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (lo + (hi - lo) * u) as f32
    }
    /// Log-uniform magnitude in [2^lo, 2^hi), random sign when `signed`.
    fn magnitude(&mut self, lo: f64, hi: f64, signed: bool) -> f32 {
        let e = self.uniform(lo, hi) as f64;
        let v = 2f64.powf(e) as f32;
        if signed && self.next() & 1 == 1 {
            -v
        } else {
            v
        }
    }
}

/// One ULP of an f32 of magnitude |v| (normal range).
fn ulp(v: f64) -> f64 {
    let a = (v.abs() as f32).max(f32::MIN_POSITIVE);
    let b = f32::from_bits(a.to_bits() + 1);
    (b - a) as f64
}

/// (x, y) inputs for built-in `name`: edge values first, then seeded random ones.
fn inputs(name: &str, rng: &mut Rng) -> Vec<(f32, f32)> {
    let pi = std::f32::consts::PI;
    let edges: Vec<(f32, f32)> = match name {
        "x/y" => vec![
            (1.0, 3.0),
            (-7.0, 7.0),
            (1.0, f32::MIN_POSITIVE * 2.0),
            (3.0e38, 2.0f32.powi(126)),
            (2.0f32.powi(-100), 2.0f32.powi(-26)),
            (f32::from_bits(0x3fff_ffff), f32::from_bits(0x3f80_0001)),
        ],
        "exp" => vec![
            (0.0, 0.0),
            (1.0, 0.0),
            (-1.0, 0.0),
            (88.0, 0.0),
            (-87.0, 0.0),
        ],
        "exp2" => vec![
            (0.0, 0.0),
            (0.5, 0.0),
            (127.5, 0.0),
            (-125.5, 0.0),
            (-1.0, 0.0),
        ],
        "log" | "log2" => vec![
            (1.0, 0.0),
            (f32::from_bits(0x3f80_0001), 0.0),
            (f32::from_bits(0x3f7f_ffff), 0.0),
            (0.5, 0.0),
            (2.0, 0.0),
            (f32::MIN_POSITIVE, 0.0),
            (f32::MAX, 0.0),
            (std::f32::consts::E, 0.0),
        ],
        "sqrt" | "inversesqrt" => vec![
            (1.0, 0.0),
            (2.0, 0.0),
            (f32::MIN_POSITIVE, 0.0),
            (f32::MAX, 0.0),
            (f32::from_bits(0x3f80_0001), 0.0),
        ],
        "sin" | "cos" => vec![
            (0.0, 0.0),
            (pi, 0.0),
            (-pi, 0.0),
            (pi / 2.0, 0.0),
            (1e-3, 0.0),
        ],
        "tan" => vec![(0.0, 0.0), (1.0, 0.0), (-1.2, 0.0), (pi / 4.0, 0.0)],
        "asin" | "acos" => vec![
            (0.0, 0.0),
            (1.0, 0.0),
            (-1.0, 0.0),
            (0.5, 0.0),
            (0.999, 0.0),
        ],
        "atan" => vec![
            (0.0, 0.0),
            (1.0, 0.0),
            (-1.0, 0.0),
            (1e6, 0.0),
            (-1e-6, 0.0),
        ],
        "atan2" => vec![
            (1.0, 1.0),
            (1.0, -1.0),
            (-1.0, -1.0),
            (0.0, 1.0),
            (3.0, -1e-3),
        ],
        "pow" => vec![
            (2.0, 10.0),
            (10.0, 3.0),
            (0.5, -20.0),
            (1.5, 1.5),
            (7.0, 0.0),
        ],
        _ => unreachable!("{name}"),
    };
    let mut v = edges;
    while v.len() < N {
        let xy = match name {
            "x/y" => (
                rng.magnitude(-60.0, 60.0, true),
                rng.magnitude(-60.0, 60.0, true),
            ),
            "exp" => (rng.uniform(-87.0, 88.0), 0.0),
            "exp2" => (rng.uniform(-125.0, 127.0), 0.0),
            "log" | "log2" => {
                if rng.next() & 1 == 0 {
                    (rng.uniform(0.5, 2.0), 0.0)
                } else {
                    (rng.magnitude(-125.0, 127.0, false), 0.0)
                }
            }
            "sqrt" | "inversesqrt" => (rng.magnitude(-125.0, 127.0, false), 0.0),
            "sin" | "cos" => (rng.uniform(-pi as f64, pi as f64), 0.0),
            "tan" => (rng.uniform(-1.4, 1.4), 0.0),
            "asin" | "acos" => (rng.uniform(-1.0, 1.0), 0.0),
            "atan" => (rng.magnitude(-20.0, 20.0, true), 0.0),
            "atan2" => (
                rng.magnitude(-20.0, 20.0, true),
                rng.magnitude(-20.0, 20.0, true),
            ),
            "pow" => (rng.magnitude(-4.0, 4.0, false), rng.uniform(-8.0, 8.0)),
            _ => unreachable!(),
        };
        v.push(xy);
    }
    v
}

/// The f64 reference.
fn reference(name: &str, x: f64, y: f64) -> f64 {
    match name {
        "x/y" => x / y,
        "exp" => x.exp(),
        "exp2" => x.exp2(),
        "log" => x.ln(),
        "log2" => x.log2(),
        "sqrt" => x.sqrt(),
        "inversesqrt" => 1.0 / x.sqrt(),
        "sin" => x.sin(),
        "cos" => x.cos(),
        "tan" => x.tan(),
        "asin" => x.asin(),
        "acos" => x.acos(),
        "atan" => x.atan(),
        "atan2" => x.atan2(y),
        "pow" => x.powf(y),
        _ => unreachable!(),
    }
}

/// Allowed absolute error of `name` at (x, y) with reference result `r`, from the Vulkan
/// precision table (32-bit). "Inherited" bounds are those of the formula the spec names,
/// each step with its own bound.
fn bound(name: &str, x: f64, y: f64, r: f64) -> f64 {
    const SINCOS_ABS: f64 = 1.0 / 2048.0; // 2^-11 in [-pi, pi]
    match name {
        "x/y" => 2.5 * ulp(r),
        "exp" | "exp2" => (3.0 + 2.0 * x.abs()) * ulp(r),
        "log" | "log2" => {
            if (0.5..=2.0).contains(&x) {
                2f64.powi(-21)
            } else {
                3.0 * ulp(r)
            }
        }
        "inversesqrt" => 2.0 * ulp(r),
        // Inherited from 1.0 / inversesqrt(x): 2 ULP of the reciprocal square root carried
        // through the division, plus the division's 2.5 ULP.
        "sqrt" => 2.0 * ulp(1.0 / r) * r * r + 2.5 * ulp(r),
        "sin" | "cos" => SINCOS_ABS,
        // Inherited from sin(x) / cos(x).
        "tan" => {
            let (s, c) = (x.sin(), x.cos());
            SINCOS_ABS / c.abs() + s.abs() * SINCOS_ABS / (c * c) + 2.5 * ulp(r)
        }
        // atan and atan2 are 4096 ULP; asin/acos inherit from atan2(x, sqrt(1 - x*x)) and
        // atan2(sqrt(1 - x*x), x), whose sqrt error is far below 4096 ULP of the result.
        "atan" | "atan2" => 4096.0 * ulp(r),
        "asin" | "acos" => 4096.0 * ulp(r) + 8.0 * ulp(r.abs().max(1.0)),
        // Inherited from exp2(y * log2(x)).
        "pow" => {
            let l = x.log2();
            let t = y * l;
            let log_err = if (0.5..=2.0).contains(&x) {
                2f64.powi(-21)
            } else {
                3.0 * ulp(l)
            };
            let t_err = y.abs() * log_err + 0.5 * ulp(t);
            (3.0 + 2.0 * t.abs()) * ulp(r) + r.abs() * std::f64::consts::LN_2 * t_err * 1.01
        }
        _ => unreachable!(),
    }
}

#[test]
fn builtins_meet_vulkan_precision() {
    let src = shader();
    let build = Build {
        bindings: 3,
        ..Build::default()
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let total = FUNCS.len() * N;
    let mut xs = Vec::with_capacity(total);
    let mut ys = Vec::with_capacity(total);
    for (name, _) in FUNCS {
        for (x, y) in inputs(name, &mut rng) {
            xs.push(x);
            ys.push(y);
        }
    }
    let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let init = [bits(&xs), bits(&ys), vec![0; total]];
    let groups = [(N / 64) as u32, 1, 1];
    at_simds(
        &[8, 16],
        "precision",
        &src,
        &build,
        groups,
        &init,
        |simd, k, bufs| {
            assert_eq!(k.scratch_size, 0, "the precision kernel does not spill");
            let out = &bufs[2];
            let mut failures = Vec::new();
            for (j, (name, _)) in FUNCS.iter().enumerate() {
                // Worst error as a fraction of the bound, and in ULPs of the result.
                let (mut worst, mut worst_ulps, mut at) = (0f64, 0f64, (0f32, 0f32));
                for i in 0..N {
                    let (x, y) = (xs[j * N + i], ys[j * N + i]);
                    let got = f32::from_bits(out[j * N + i]) as f64;
                    let r = reference(name, x as f64, y as f64);
                    let err = (got - r).abs();
                    let b = bound(name, x as f64, y as f64, r);
                    let frac = if err.is_nan() { f64::INFINITY } else { err / b };
                    if frac > worst {
                        (worst, at) = (frac, (x, y));
                    }
                    worst_ulps = worst_ulps.max(err / ulp(r));
                    if err.is_nan() || err > b {
                        failures.push(format!(
                        "SIMD{simd} {name}({x:e}, {y:e}) = {got:e}, reference {r:e}: error {err:e} > bound {b:e}"
                    ));
                    }
                }
                println!(
                    "SIMD{simd} {name:12} worst {:6.3} of the bound at ({:e}, {:e}); max {:.3} ULP",
                    worst, at.0, at.1, worst_ulps
                );
            }
            assert!(
                failures.is_empty(),
                "{} inputs out of bounds:\n{}",
                failures.len(),
                failures[..failures.len().min(40)].join("\n")
            );
        },
    );
}
