//! Software fp64 end to end on the simulated GPU: a GLSL shader in doubles compiled with
//! `soft64` forced (every f64 operation becomes 32-bit integer code in the middle end), run
//! through the Gen9 back end at SIMD8/16/32 on the simulated i915, and compared bit for bit
//! with Rust's f64. Skipped when glslangValidator is not installed.

mod sim_common;

use ferrite_tests::rng::XorShift64;
use sim_common::*;

/// soft64 forced (or native DF when `soft64` is false).
fn build(soft64: bool) -> Build<'static> {
    Build {
        soft64,
        ..Build::default()
    }
}

/// One shader per case (the whole list in one kernel would outgrow the harness's 64 KiB
/// kernel buffer): `o[i] = <expression of x, y, i>`.
const CASES: &[(&str, &str)] = &[
    ("add", "x + y"),
    ("mul_sub", "x * y - y"),
    ("div", "x / y"),
    ("sqrt", "sqrt(abs(x))"),
    ("fma", "fma(x, y, 0.25)"),
    (
        "floor_conv",
        "floor(x) + double(int(y)) + double(uint(abs(y)))",
    ),
    ("f32_trunc", "double(float(x)) + trunc(y)"),
    ("min_max", "min(x, y) + max(x, -y)"),
    ("loop_phi", "poly(x, i) * (x < y ? 1.0 : -1.0)"),
    ("round_fract", "roundEven(x * 4.0) + fract(y)"),
];

fn shader(expr: &str) -> String {
    format!(
        "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer A {{ double a[]; }};
layout(set=0, binding=1) buffer B {{ double b[]; }};
layout(set=0, binding=2) buffer O {{ double o[]; }};
double poly(double x, uint i) {{
    double acc = 0.0;
    for (int j = 0; j < int(i % 5u); j++) {{
        acc = acc * x + double(j);
    }}
    return acc;
}}
int frexp_exp(double x) {{
    int e;
    frexp(x, e);
    return e;
}}
void main() {{
    uint i = gl_GlobalInvocationID.x;
    double x = a[i];
    double y = b[i];
    int ei;
    // precise: the references round every product and sum on its own (NoContraction keeps
    // native DF code from fusing them into a mad, as the soft64 lowering does not).
    precise double r = {expr};
    o[i] = r;
}}"
    )
}

fn reference(case: &str, x: f64, y: f64, i: usize) -> f64 {
    let f2i = |v: f64| {
        if v.is_nan() {
            0
        } else {
            v.trunc().clamp(i32::MIN as f64, i32::MAX as f64) as i32
        }
    };
    let f2u = |v: f64| {
        if v.is_nan() {
            0
        } else {
            v.trunc().clamp(0.0, u32::MAX as f64) as u32
        }
    };
    match case {
        "add" => x + y,
        "mul_sub" => x * y - y,
        "div" => x / y,
        "sqrt" => x.abs().sqrt(),
        "fma" => x.mul_add(y, 0.25),
        "floor_conv" => x.floor() + f64::from(f2i(y)) + f64::from(f2u(y.abs())),
        "f32_trunc" => f64::from(x as f32) + y.trunc(),
        "min_max" => x.min(y) + x.max(-y),
        "loop_phi" => {
            let mut acc = 0.0;
            for j in 0..(i % 5) {
                acc = acc * x + j as f64;
            }
            acc * if x < y { 1.0 } else { -1.0 }
        }
        "round_fract" => (x * 4.0).round_ties_even() + (y - y.floor()),
        _ => unreachable!(),
    }
}

fn inputs(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut rng = XorShift64(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.next_u64();
    let edges = [
        0.0,
        -0.0,
        1.0,
        -2.5,
        0.5,
        1e300,
        -1e-300,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        -3.0e9,
        4.5e9,
        1.0 / 3.0,
        -7.125,
        2.0f64.powi(52) + 1.0,
    ];
    let mut gen = |k: usize| {
        if k < edges.len() {
            return edges[k];
        }
        let r = next();
        match r % 4 {
            0 => (r >> 11) as f64 / 1e6 - 4e6,
            1 => f64::from_bits((r & !(0x7ff << 52)) | ((1000 + (r >> 56) % 50) << 52)),
            2 => ((r % 2000) as f64 - 1000.0) / 8.0,
            _ => f64::from_bits(r >> 1 | (r & 1) << 63) / 1e10,
        }
    };
    let a: Vec<f64> = (0..n).map(&mut gen).collect();
    let b: Vec<f64> = (0..n).map(|k| gen((k * 7 + 3) % (2 * n))).collect();
    (a, b)
}

#[test]
fn soft64_doubles_match_rust_f64_on_the_simulated_gpu() {
    let n = 64;
    let (a, b) = inputs(n);
    for (case, expr) in CASES {
        let init = [f64_words(&a), f64_words(&b), vec![0; n * 2]];
        let groups = [(n / 16) as u32, 1, 1];
        let src = shader(expr);
        at_simds_counted(
            &[8, 16, 32],
            case,
            &src,
            &build(true),
            groups,
            &init,
            |simd, k, out, executed| {
                // `--nocapture` shows the cost of each case (EU instructions per thread).
                println!("{case:10} SIMD{simd}: {}", cost(k, executed, n as u64));
                let got = words_f64(&out[2]);
                for i in 0..n {
                    let w = reference(case, a[i], b[i], i);
                    assert!(
                    same_f64(w, got[i]),
                    "{case} SIMD{simd} lane {i}: x = {:e} ({:#x}), y = {:e} ({:#x}): want {w:e} ({:#x}) got {:e} ({:#x})",
                    a[i],
                    a[i].to_bits(),
                    b[i],
                    b[i].to_bits(),
                    w.to_bits(),
                    got[i],
                    got[i].to_bits()
                );
                }
            },
        );
    }
}

#[test]
fn targets_without_fp64_lower_doubles_automatically() {
    // No soft64 flag: a target without DF hardware gets the lowering by itself.
    let Some(words) = glsl("nofp64", &shader("x / y + sqrt(x)")) else {
        return;
    };
    let target = Target {
        has_fp64: false,
        ..Target::gen9()
    };
    let copts = CompileOptions {
        entry_point: "main".into(),
        ..Default::default()
    };
    let (shader, _) = compile_to_ir(&words, &target, &copts).unwrap();
    assert!(!shader.to_string().contains(":f64"));
    let (native, _) = compile_to_ir(&words, &Target::gen9(), &copts).unwrap();
    assert!(native.to_string().contains(":f64"));
}

/// Denormal cases for native DF against soft64. Only operations correctly rounded natively
/// for denormal results too: native square root is a Newton-Raphson sequence (within 2
/// ULPs, see backend_wide.rs) and native division is correctly rounded only for normal
/// quotients (its exponent is put back by multiplications), so they are left out of the
/// bit-exact comparison. `fma` is one fused DF MAD natively and fused in soft64
/// too (one rounding); `mul_add` is the unfused form (two roundings).
const DENORM_CASES: &[(&str, &str)] = &[
    ("add", "x + y"),
    ("sub", "x - y"),
    ("mul", "x * y"),
    ("mul_add", "x * y + x"),
    ("fma", "fma(x, y, x)"),
    ("fma_neg", "fma(-x, y, 0.75)"),
    ("frexp_sig", "frexp(x, ei)"),
    ("frexp_exp", "double(frexp_exp(x))"),
    ("ldexp_down", "ldexp(x, int(i % 64u) - 50)"),
    ("ldexp_far", "ldexp(y, int(i) * 37 - 2400)"),
    (
        "conv",
        "double(float(x)) + double(int(x * 1.0e300 * 1.0e15)) * 1.0e-310 + double(uint(i)) * y",
    ),
    ("cmp", "(x < y ? 1.0 : -1.0) * min(x, y) - max(x, -y)"),
];

fn denorm_reference(case: &str, x: f64, y: f64, i: usize) -> f64 {
    match case {
        "add" => x + y,
        "sub" => x - y,
        "mul" => x * y,
        "mul_add" => x * y + x,
        "fma" => x.mul_add(y, x),
        "fma_neg" => (-x).mul_add(y, 0.75),
        "frexp_sig" => frexp(x).0,
        "frexp_exp" => f64::from(frexp(x).1),
        "ldexp_down" => ldexp(x, (i % 64) as i64 - 50),
        "ldexp_far" => ldexp(y, i as i64 * 37 - 2400),
        "conv" => {
            f64::from(x as f32) + f64::from((x * 1.0e300 * 1.0e15) as i32) * 1.0e-310 + i as f64 * y
        }
        "cmp" => (if x < y { 1.0 } else { -1.0 }) * x.min(y) - x.max(-y),
        _ => unreachable!(),
    }
}

/// frexp on the bits: significand in [0.5, 1) and exponent, denormals normalized;
/// zero, inf and NaN give (x, 0).
fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let b = x.to_bits();
    let (mut m, mut e) = (b & ((1 << 52) - 1), ((b >> 52) & 0x7ff) as i32);
    if e == 0 {
        // Denormal: shift the leading one up to the implicit bit's place.
        let z = m.leading_zeros() as i32 - 11;
        m = (m << z) & ((1 << 52) - 1);
        e = 1 - z;
    }
    let sig = f64::from_bits((b & (1 << 63)) | (1022 << 52) | m);
    (sig, e - 1022)
}

/// x * 2^n correctly rounded (ties to even), on the integer significand: an independent
/// reference for the two-product scaling of the compiler.
fn ldexp(x: f64, n: i64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let b = x.to_bits();
    let sign = b & (1 << 63);
    let e = ((b >> 52) & 0x7ff) as i64;
    let mut m = b & ((1 << 52) - 1);
    // x = m * 2^t with m normalized to [2^52, 2^53).
    let mut t = if e == 0 { -1074 } else { e - 1075 };
    if e != 0 {
        m |= 1 << 52;
    }
    while m < 1 << 52 {
        m <<= 1;
        t -= 1;
    }
    let t = t + n.clamp(-5000, 5000);
    let biased = t + 1075;
    if biased >= 2047 {
        return f64::from_bits(sign | 0x7ff0_0000_0000_0000);
    }
    if biased >= 1 {
        return f64::from_bits(sign | (biased as u64) << 52 | (m & ((1 << 52) - 1)));
    }
    // Denormal or zero: drop s bits, round half to even (a carry into bit 52 gives the
    // smallest normal, which the bits encode as they are).
    let s = (1 - biased).min(63) as u32;
    let (mut q, r, half) = (m >> s, m & ((1u64 << s) - 1), 1u64 << (s - 1));
    if r > half || (r == half && q & 1 == 1) {
        q += 1;
    }
    f64::from_bits(sign | q)
}

/// Denormal inputs, tiny normals whose sums, differences and products are denormal, and
/// moderate values, none in the f32 denormal range (f32 denormal modes are not at issue).
fn denorm_inputs(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut rng = XorShift64(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.next_u64();
    let edges = [
        5e-324,
        -5e-324,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(0x000F_FFFF_FFFF_FFFF),
        1e-160,
        0.0,
        -0.0,
    ];
    let mut gen = |k: usize| {
        if k < edges.len() {
            return edges[k];
        }
        let r = next();
        let sign = (r & 1) << 63;
        let frac = (r >> 8) & 0x000F_FFFF_FFFF_FFFF;
        let bits = match (r >> 1) % 4 {
            0 => frac,                                  // denormal
            1 => frac | ((1 + (r >> 60) % 4) << 52),    // just above the denormals
            2 => frac | ((480 + (r >> 56) % 60) << 52), // 2^-543..2^-484: products underflow
            _ => frac | ((1020 + (r >> 58) % 8) << 52), // 0.125..16
        };
        f64::from_bits(bits | sign)
    };
    let a: Vec<f64> = (0..n).map(&mut gen).collect();
    let b: Vec<f64> = (0..n).map(|k| gen((k * 5 + 1) % (2 * n))).collect();
    (a, b)
}

#[test]
fn native_df_keeps_denormals_bit_identical_to_soft64() {
    let n = 128;
    let (mut a, b) = denorm_inputs(n);
    // Inputs whose scaling in two steps would round twice (ldexp_down scales lane i by
    // 2^(i % 64 - 50)): x * 2^-7, x * 2^-4 and x * 2^-3.
    for (lane, bits) in [
        (43, 0x001a_75f9_f639_18bd),
        (46, 0x0024_8df1_4387_43bb),
        (47, 0x0010_0f14_e94f_c7ab),
    ] {
        a[lane] = f64::from_bits(bits);
        a[lane + 64] = -f64::from_bits(bits);
    }
    let mut denormal_results = 0;
    for (case, expr) in DENORM_CASES {
        for simd in [8, 16] {
            let mut outs = Vec::new();
            for soft64 in [false, true] {
                let name = format!("denorm_{case}_{soft64}");
                let Some(k) = kernel_with(&name, &shader(expr), simd, &build(soft64)) else {
                    return;
                };
                // Native DF kernels set the preserve bit first (cr0.0 bit 6).
                assert_eq!(k.asm.contains("cr0"), !soft64, "{name}:\n{}", k.asm);
                let init = [f64_words(&a), f64_words(&b), vec![0; n * 2]];
                let (out, executed) = run_buffers_counted(&k, [(n / 16) as u32, 1, 1], &init);
                // `--nocapture` shows the cost of each case (EU instructions per thread).
                println!(
                    "{case:10} SIMD{simd} soft64={soft64:5}: {}",
                    cost(&k, executed, n as u64)
                );
                outs.push(words_u64(&out[2]));
            }
            for i in 0..n {
                let w = denorm_reference(case, a[i], b[i], i);
                if w.is_subnormal() {
                    denormal_results += 1;
                }
                let (native, soft) = (f64::from_bits(outs[0][i]), f64::from_bits(outs[1][i]));
                assert!(
                    same_f64(native, soft) && same_f64(w, soft),
                    "{case} SIMD{simd} lane {i}: x = {:e} ({:#x}), y = {:e} ({:#x}): native {native:e} ({:#x}) soft64 {soft:e} ({:#x}) want {w:e} ({:#x})",
                    a[i],
                    a[i].to_bits(),
                    b[i],
                    b[i].to_bits(),
                    native.to_bits(),
                    soft.to_bits(),
                    w.to_bits()
                );
            }
        }
    }
    // The inputs do reach denormal results (the test would be vacuous otherwise).
    assert!(
        denormal_results > 100,
        "{denormal_results} denormal results"
    );
}
