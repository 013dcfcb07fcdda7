//! Float-controls execution modes (VK_KHR_shader_float_controls) on the simulated GPU: the
//! same GLSL body compiled with each mode for 16/32/64-bit floats (execution modes written
//! with GL_EXT_spirv_intrinsics), run at SIMD8/16/32, compared bit for bit with a Rust
//! reference that rounds to nearest even or toward zero and keeps or flushes denormals.
//! The inputs are chosen so the exact results fit an f64 (the reference rounds once), and
//! include lanes where RTE and RTZ differ and lanes whose results are denormal.
//! Skipped without glslangValidator.

mod sim_common;

use ferrite_compiler::pipeline::CompileError;
use half::f16;
use sim_common::*;

const RTE: u32 = 4462;
const RTZ: u32 = 4463;
const PRESERVE: u32 = 4459;
const FLUSH: u32 = 4460;

/// A mode of one width: (execution mode, capability).
fn header(modes: &[(u32, u32)]) -> String {
    let mut s = String::new();
    for (mode, width) in modes {
        // Capabilities are the execution modes' numbers + 5 (DenormPreserve 4464, ...).
        s += &format!(
            "spirv_execution_mode(capabilities = [{}], {mode}, {width});\n",
            mode + 5
        );
    }
    s
}

fn source(modes: &[(u32, u32)], body: &str) -> String {
    format!(
        "#version 450\n#extension GL_EXT_spirv_intrinsics : require\n\
         #extension GL_EXT_shader_explicit_arithmetic_types : require\n\
         #extension GL_EXT_shader_16bit_storage : require\n{}{body}",
        header(modes)
    )
}

/// Compiles and runs `src` at `simd` over one group of 32 with the buffers' words.
fn run(name: &str, src: &str, simd: u32, bufs: &[Vec<u32>]) -> Option<Vec<Vec<u32>>> {
    let k = kernel_env(name, src, simd, "vulkan1.2")?;
    let sizes: Vec<u64> = bufs.iter().map(|b| b.len() as u64 * 4).collect();
    let (g, data) = compute_setup(&sizes);
    for (b, words) in data.iter().zip(bufs) {
        g.write_u32s(*b, 0, words);
    }
    let list: Vec<(usize, u64)> = data.iter().zip(&sizes).map(|(d, s)| (*d, *s)).collect();
    dispatch(&g, &k, [1, 1, 1], &list);
    Some(
        data.iter()
            .zip(bufs)
            .map(|(d, b)| g.read_u32s(*d, 0, b.len()))
            .collect(),
    )
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

/// (kernel name, execution modes as (mode, width), what the reference does).
type Case = (&'static str, Vec<(u32, u32)>, Mode);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Mode {
    rtz: bool,
    keep: bool,
}

/// The exact value `x` (an f64 holding it exactly) rounded to f32.
fn round_f32(x: f64, m: Mode) -> f32 {
    let mut r = x as f32;
    if m.rtz && r.is_finite() && (r as f64).abs() > x.abs() || m.rtz && r.is_infinite() {
        r = f32::from_bits(r.to_bits() - 1);
    }
    flush32(r, m.keep)
}

fn flush32(x: f32, keep: bool) -> f32 {
    if !keep && x.is_subnormal() {
        0f32.copysign(x)
    } else {
        x
    }
}

fn round_f16(x: f64, m: Mode) -> f16 {
    let mut r = f16::from_f64(x);
    if m.rtz && (r.is_infinite() || f64::from(r).abs() > x.abs()) {
        r = f16::from_bits(r.to_bits() - 1);
    }
    flush16(r, m.keep)
}

fn flush16(x: f16, keep: bool) -> f16 {
    if !keep && x.is_finite() && !x.is_normal() && x.to_bits() & 0x7FFF != 0 {
        f16::from_bits(x.to_bits() & 0x8000)
    } else {
        x
    }
}

fn flush64(x: f64, keep: bool) -> f64 {
    if !keep && x.is_subnormal() {
        0f64.copysign(x)
    } else {
        x
    }
}

/// a op b rounded toward zero (op exact up to one rounding: the error term decides).
fn rtz64(r: f64, err: f64) -> f64 {
    if r.is_finite() && err != 0.0 && (err < 0.0) != (r < 0.0) {
        f64::from_bits(r.to_bits() - 1)
    } else {
        r
    }
}

/// A float with a `bits`-bit significand, magnitude in [1, 16), random sign.
fn rand_f32(g: &mut Lcg, bits: u32) -> f32 {
    let m = g.next() & 0x7F_FFFF & !((1u32 << (23 - (bits - 1))) - 1);
    let e = 127 + g.next() % 4;
    f32::from_bits((g.next() & 0x8000_0000) | (e << 23) | m)
}

const F32_BODY: &str = "
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer I { float a[]; };
layout(set=0, binding=1) buffer N { int n[]; };
layout(set=0, binding=2) buffer O { float o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float x = a[3u * i], y = a[3u * i + 1u], z = a[3u * i + 2u];
    o[4u * i] = x + y;
    o[4u * i + 1u] = x * y;
    o[4u * i + 2u] = fma(x, y, z);
    o[4u * i + 3u] = float(n[i]);
}";

fn f32_inputs() -> (Vec<u32>, Vec<u32>) {
    let mut g = Lcg(0xF32);
    let mut a = Vec::new();
    let mut n = Vec::new();
    let tiny = f32::MIN_POSITIVE;
    // Edge lanes: denormal results of add and mul, a denormal input.
    let edges: [[f32; 3]; 4] = [
        [1.5 * tiny, -tiny, 0.0],
        [2f32.powi(-70), 2f32.powi(-70), 0.0],
        [f32::from_bits(3), 2.0, f32::from_bits(5)],
        [-2f32.powi(-64), 2f32.powi(-63), -tiny],
    ];
    for e in edges {
        a.extend(e.map(f32::to_bits));
    }
    while a.len() < 96 {
        let x = rand_f32(&mut g, 12);
        let y = rand_f32(&mut g, 12);
        let z = rand_f32(&mut g, 24);
        a.extend([x, y, z].map(f32::to_bits));
    }
    for k in 0..32u32 {
        // Above 2^24 with low bits set: RTE and RTZ differ for most.
        n.push(if k % 2 == 0 {
            0x7FFF_FFC1u32.wrapping_sub(k * 977)
        } else {
            (0x8000_0001u32).wrapping_add(k * 131)
        });
    }
    (a, n)
}

fn f32_reference(a: &[u32], n: &[u32], m: Mode) -> Vec<u32> {
    let mut o = Vec::new();
    for i in 0..32 {
        let [x, y, z] = [0, 1, 2].map(|k| f64::from(flush32(f32::from_bits(a[3 * i + k]), m.keep)));
        o.push(round_f32(x + y, m).to_bits());
        o.push(round_f32(x * y, m).to_bits());
        o.push(round_f32(x * y + z, m).to_bits());
        o.push(round_f32(f64::from(n[i] as i32), m).to_bits());
    }
    o
}

fn check(what: &str, simd: u32, got: &[u32], want: &[u32], show: impl Fn(u32) -> String) {
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g,
            w,
            "{what} SIMD{simd} element {k}: got {:#x} ({}), want {:#x} ({})",
            g,
            show(*g),
            w,
            show(*w)
        );
    }
}

#[test]
fn fp32_rounding_and_denormal_modes_match_reference() {
    let (a, n) = f32_inputs();
    let cases: [Case; 6] = [
        // No mode: the dispatch default, cr0 = 0 (RTNE, fp32 denormals flushed).
        (
            "f32_default",
            vec![],
            Mode {
                rtz: false,
                keep: false,
            },
        ),
        (
            "f32_rte",
            vec![(RTE, 32)],
            Mode {
                rtz: false,
                keep: false,
            },
        ),
        (
            "f32_rtz",
            vec![(RTZ, 32)],
            Mode {
                rtz: true,
                keep: false,
            },
        ),
        (
            "f32_preserve",
            vec![(PRESERVE, 32)],
            Mode {
                rtz: false,
                keep: true,
            },
        ),
        (
            "f32_flush",
            vec![(FLUSH, 32)],
            Mode {
                rtz: false,
                keep: false,
            },
        ),
        (
            "f32_rtz_preserve",
            vec![(RTZ, 32), (PRESERVE, 32)],
            Mode {
                rtz: true,
                keep: true,
            },
        ),
    ];
    let show = |b: u32| format!("{:e}", f32::from_bits(b));
    let mut differ = 0;
    for (name, modes, m) in &cases {
        let want = f32_reference(&a, &n, *m);
        for simd in [8, 16, 32] {
            let src = source(modes, F32_BODY);
            let Some(out) = run(name, &src, simd, &[a.clone(), n.clone(), vec![0; 128]]) else {
                return;
            };
            check(name, simd, &out[2], &want, show);
        }
        let rte = f32_reference(
            &a,
            &n,
            Mode {
                rtz: false,
                keep: m.keep,
            },
        );
        differ += want.iter().zip(&rte).filter(|(x, y)| x != y).count();
    }
    // The inputs exercise the modes: RTZ changes many results, preserve keeps denormals.
    assert!(differ > 40, "only {differ} results tell RTZ from RTE");
    let keep = f32_reference(
        &a,
        &n,
        Mode {
            rtz: false,
            keep: true,
        },
    );
    let flush = f32_reference(
        &a,
        &n,
        Mode {
            rtz: false,
            keep: false,
        },
    );
    assert!(keep.iter().zip(&flush).filter(|(x, y)| x != y).count() >= 4);
}

const F16_BODY: &str = "
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer I { float16_t h[]; };
layout(set=0, binding=1) buffer F { float f[]; };
layout(set=0, binding=2) buffer O { float16_t o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float16_t x = h[2u * i], y = h[2u * i + 1u];
    o[4u * i] = x + y;
    o[4u * i + 1u] = x * y;
    o[4u * i + 2u] = float16_t(f[i]);
    o[4u * i + 3u] = x - y;
}";

#[test]
fn fp16_rounding_and_denormal_modes_match_reference() {
    let mut g = Lcg(0xF16);
    let mut h: Vec<u16> = vec![
        // Denormal results: 2^-10 * 2^-10, 1.5 * 2^-14 - 2^-14; denormal inputs.
        0x1400, 0x1400, 0x0600, 0x8400, 0x0003, 0x0001, 0x8005, 0x0002,
        // Overflow: RTZ gives 65504.
        0x7BFF, 0x7BFF,
    ];
    while h.len() < 64 {
        let e = 15 + g.next() % 3;
        h.push(((g.next() & 0x8000) | (e << 10) | (g.next() & 0x3FF)) as u16);
    }
    let mut f: Vec<f32> = vec![
        1.0 + 2f32.powi(-12),
        -(1.0 + 3.0 * 2f32.powi(-12)),
        2f32.powi(-20) * 1.7,
        70000.0,
    ];
    while f.len() < 32 {
        f.push(rand_f32(&mut g, 24) * 2f32.powi(g.next() as i32 % 20 - 10));
    }
    let hw: Vec<u32> = h
        .chunks(2)
        .map(|c| c[0] as u32 | (c[1] as u32) << 16)
        .collect();
    let fw: Vec<u32> = f.iter().map(|x| x.to_bits()).collect();
    let cases: [Case; 6] = [
        (
            "f16_default",
            vec![],
            Mode {
                rtz: false,
                keep: false,
            },
        ),
        (
            "f16_rte",
            vec![(RTE, 16)],
            Mode {
                rtz: false,
                keep: false,
            },
        ),
        (
            "f16_rtz",
            vec![(RTZ, 16)],
            Mode {
                rtz: true,
                keep: false,
            },
        ),
        (
            "f16_preserve",
            vec![(PRESERVE, 16)],
            Mode {
                rtz: false,
                keep: true,
            },
        ),
        (
            "f16_flush",
            vec![(FLUSH, 16), (PRESERVE, 32)],
            Mode {
                rtz: false,
                keep: false,
            },
        ),
        (
            "f16_rtz_preserve",
            vec![(RTZ, 16), (PRESERVE, 16), (FLUSH, 32)],
            Mode {
                rtz: true,
                keep: true,
            },
        ),
    ];
    let reference = |m: Mode| -> Vec<u16> {
        let mut o = Vec::new();
        for i in 0..32 {
            // fp16 operands are read into f32, where they are normal: only results flush
            // (DenormFlushToZero lets operands be flushed or not).
            let x = f64::from(f16::from_bits(h[2 * i]));
            let y = f64::from(f16::from_bits(h[2 * i + 1]));
            o.push(round_f16(x + y, m).to_bits());
            o.push(round_f16(x * y, m).to_bits());
            o.push(round_f16(f64::from(f[i]), m).to_bits());
            o.push(round_f16(x - y, m).to_bits());
        }
        o
    };
    for (name, modes, m) in &cases {
        let want: Vec<u32> = reference(*m).iter().map(|x| u32::from(*x)).collect();
        for simd in [8, 16, 32] {
            let src = source(modes, F16_BODY);
            let Some(out) = run(name, &src, simd, &[hw.clone(), fw.clone(), vec![0; 64]]) else {
                return;
            };
            let got: Vec<u32> = out[2].iter().flat_map(|w| [w & 0xFFFF, w >> 16]).collect();
            check(name, simd, &got, &want, |b| {
                format!("{}", f16::from_bits(b as u16))
            });
        }
    }
    let rtz = reference(Mode {
        rtz: true,
        keep: true,
    });
    let rte = reference(Mode {
        rtz: false,
        keep: true,
    });
    assert!(rtz.iter().zip(&rte).filter(|(x, y)| x != y).count() > 20);
    let flush = reference(Mode {
        rtz: false,
        keep: false,
    });
    assert!(rte.iter().zip(&flush).filter(|(x, y)| x != y).count() >= 4);
}

const F64_BODY: &str = "
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer I { double a[]; };
layout(set=0, binding=1) buffer P { float p[]; };
layout(set=0, binding=2) buffer O { double o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    double x = a[2u * i], y = a[2u * i + 1u];
    o[6u * i] = x + y;
    o[6u * i + 1u] = x * y;
    o[6u * i + 2u] = roundEven(x);
    o[6u * i + 3u] = x - y;
    // Operands with 26-bit significands: their product is exact, the fused add rounds once.
    o[6u * i + 4u] = fma(a[2u * i + 64u], a[2u * i + 65u], x);
    // Newton-Raphson steps: within 2 ULP in either rounding mode.
    o[6u * i + 5u] = x / y;
    p[i] = float(x);
}";

#[test]
fn fp64_rounding_and_denormal_modes_match_reference() {
    let mut g = Lcg(0xF64);
    let tiny = f64::MIN_POSITIVE;
    let mut a: Vec<f64> = vec![
        1e-160,
        1e-160, // product denormal
        1.5 * tiny,
        -tiny, // difference denormal
        2.5,
        1.0,
        -3.5,
        1.0,
        0.5,
        1.0,
        4503599627370495.5,
        1.0,
        -0.49999999999999994,
        1.0,
        1.5,
        2f64.powi(-60),
        1.0 + f64::EPSILON,
        -f64::EPSILON / 4.0,
    ];
    while a.len() < 64 {
        let m = (u64::from(g.next()) << 32 | u64::from(g.next())) & 0x000F_FFFF_FFFF_FFFF;
        let e = 1023 + u64::from(g.next() % 8);
        a.push(f64::from_bits(
            (u64::from(g.next() & 1) << 63) | e << 52 | m,
        ));
    }
    // The fma operands: the random values cut to 26-bit significands (normal products).
    let short: Vec<f64> = (0..64)
        .map(|k| f64::from_bits(a[18 + k % 46].to_bits() & !((1u64 << 27) - 1)))
        .collect();
    a.extend(short);
    let words: Vec<u32> = a
        .iter()
        .flat_map(|x| [x.to_bits() as u32, (x.to_bits() >> 32) as u32])
        .collect();
    let mode = |rtz, keep| Mode { rtz, keep };
    let cases: [Case; 7] = [
        // No mode: DF kernels keep fp64 denormals (cr0 bit 6), RTNE.
        ("f64_default", vec![], mode(false, true)),
        ("f64_rte", vec![(RTE, 64)], mode(false, true)),
        ("f64_rtz", vec![(RTZ, 64)], mode(true, true)),
        ("f64_preserve", vec![(PRESERVE, 64)], mode(false, true)),
        ("f64_flush", vec![(FLUSH, 64)], mode(false, false)),
        (
            "f64_rtz_flush",
            vec![(RTZ, 64), (FLUSH, 64)],
            mode(true, false),
        ),
        (
            "f64_rte_flush_f32_rte",
            vec![(RTE, 64), (FLUSH, 64), (RTE, 32)],
            mode(false, false),
        ),
    ];
    // TwoSum of x + y: (rounded sum, error); the error's sign says where the exact sum is.
    let two_sum = |x: f64, y: f64| {
        let s = x + y;
        let bb = s - x;
        (s, (x - (s - bb)) + (y - bb))
    };
    let reference = |m: Mode| -> (Vec<u64>, Vec<u32>) {
        let mut o = Vec::new();
        let mut p = Vec::new();
        for i in 0..32 {
            let x = flush64(a[2 * i], m.keep);
            let y = flush64(a[2 * i + 1], m.keep);
            let round = |(r, err): (f64, f64)| {
                let r = if m.rtz { rtz64(r, err) } else { r };
                flush64(r, m.keep).to_bits()
            };
            o.push(round(two_sum(x, y)));
            let pr = x * y;
            o.push(round((pr, x.mul_add(y, -pr))));
            o.push(flush64(x.round_ties_even(), m.keep).to_bits());
            o.push(round(two_sum(x, -y)));
            let (xs, ys) = (a[64 + 2 * i], a[65 + 2 * i]);
            let ps = xs * ys;
            assert!(
                ps.is_normal() && xs.mul_add(ys, -ps) == 0.0,
                "exact fma product"
            );
            o.push(round(two_sum(ps, x)));
            o.push(flush64(x / y, m.keep).to_bits());
            p.push(round_f32(x, mode(m.rtz, false)).to_bits());
        }
        (o, p)
    };
    let out_words = vec![0; 6 * 32 * 2];
    for (name, modes, m) in &cases {
        let (want, want_p) = reference(*m);
        for simd in [8, 16, 32] {
            let src = source(modes, F64_BODY);
            let bufs = [words.clone(), vec![0; 32], out_words.clone()];
            let Some(out) = run(name, &src, simd, &bufs) else {
                return;
            };
            let got: Vec<u64> = out[2]
                .chunks(2)
                .map(|c| u64::from(c[0]) | u64::from(c[1]) << 32)
                .collect();
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                if k % 6 == 5 {
                    let ulps = (*g as i64).wrapping_sub(*w as i64).unsigned_abs();
                    assert!(
                        ulps <= 2,
                        "{name} SIMD{simd} lane {} division: got {:e}, want {:e}",
                        k / 6,
                        f64::from_bits(*g),
                        f64::from_bits(*w)
                    );
                    continue;
                }
                assert_eq!(
                    g,
                    w,
                    "{name} SIMD{simd} element {k} (lane {}, op {}): got {:e}, want {:e}",
                    k / 6,
                    k % 6,
                    f64::from_bits(*g),
                    f64::from_bits(*w)
                );
            }
            check(name, simd, &out[1], &want_p, |b| {
                format!("{:e}", f32::from_bits(b))
            });
        }
    }
    let (rtz, _) = reference(mode(true, true));
    let (rte, _) = reference(mode(false, true));
    assert!(rtz.iter().zip(&rte).filter(|(x, y)| x != y).count() > 30);
    let (flush, _) = reference(mode(false, false));
    assert!(rte.iter().zip(&flush).filter(|(x, y)| x != y).count() >= 2);
    // fp32 RTZ in a kernel with doubles: the DF -> F conversion rounds toward zero too.
    let src = source(&[(RTZ, 32)], F64_BODY);
    let (_, want_p) = reference(mode(true, true));
    let (_, rte_p) = reference(mode(false, true));
    assert!(want_p.iter().zip(&rte_p).filter(|(x, y)| x != y).count() > 10);
    for simd in [8, 16, 32] {
        let bufs = [words.clone(), vec![0; 32], out_words.clone()];
        let Some(out) = run("f64_f32_rtz", &src, simd, &bufs) else {
            return;
        };
        check("f64_f32_rtz", simd, &out[1], &want_p, |b| {
            format!("{:e}", f32::from_bits(b))
        });
    }
}

/// Modes the hardware cannot give are compile errors, not silently wrong kernels.
#[test]
fn unsupported_mode_combinations_are_rejected() {
    let body = "layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer O { double o[]; };
void main() { o[gl_GlobalInvocationID.x] += 1.0; }";
    let compile = |modes: &[(u32, u32)], soft64: bool| -> Option<Result<(), CompileError>> {
        let words = glsl_env("reject", &source(modes, body), "vulkan1.2")?;
        let copts = CompileOptions {
            entry_point: "main".into(),
            debug: ferrite_compiler::DebugFlags {
                soft64,
                ..Default::default()
            },
            ..Default::default()
        };
        Some(compile_to_ir(&words, &Target::gen9(), &copts).map(|_| ()))
    };
    // One rounding field in cr0: RTE for one width and RTZ for another cannot both hold.
    let Some(r) = compile(&[(RTE, 32), (RTZ, 64)], false) else {
        return;
    };
    let e = r.unwrap_err().to_string();
    assert!(e.contains("rounding mode"), "{e}");
    // Software fp64 always rounds to nearest even and keeps denormals.
    assert!(compile(&[(RTZ, 64)], false).unwrap().is_ok());
    let e = compile(&[(RTZ, 64)], true)
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(e.contains("RoundingModeRTZ for 64-bit"), "{e}");
    assert!(compile(&[(FLUSH, 64)], false).unwrap().is_ok());
    let e = compile(&[(FLUSH, 64)], true)
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(e.contains("DenormFlushToZero for 64-bit"), "{e}");
    assert!(compile(&[(PRESERVE, 64), (RTE, 64)], true).unwrap().is_ok());
}
