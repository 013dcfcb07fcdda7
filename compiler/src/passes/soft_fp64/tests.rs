//! Soft fp64 against the interpreter's f64 semantics, bit for bit, and its size.

use super::*;
use crate::interp::{run, Memory};
use crate::parse::parse_shader;

/// xorshift64*: deterministic inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const EDGES: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    3.0,
    0.1,
    -7.75,
    1e300,
    -1e-300,
    4503599627370496.0,
    4503599627370497.0,
    9007199254740993.0,
    2147483647.5,
    -2147483648.0,
    -2147483649.0,
    4294967295.9,
    4294967296.0,
    9.3e18,
    -9.3e18,
    f64::MAX,
    f64::MIN_POSITIVE,
    -f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    2.225073858507201e-308,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::EPSILON,
    1.0 - f64::EPSILON / 2.0,
    0.49999999999999994,
    3.4028235677973366e38,
    3.4028234663852886e38,
    1.401298464324817e-45,
    7.006492321624085e-46,
    6.103515625e-5,
];

/// A random f64 bit pattern from a mix of classes: raw bits, edges, denormals, values
/// near the overflow and underflow limits, small integers and halves.
fn rand_f64(r: &mut Rng) -> u64 {
    let s = r.next() & (1 << 63);
    match r.below(10) {
        0 | 1 => r.next(),
        2 => EDGES[r.below(EDGES.len() as u64) as usize].to_bits(),
        3 => s | (r.next() & ((1 << 52) - 1)),
        4 => s | ((2040 + r.below(7)) << 52) | (r.next() & ((1 << 52) - 1)),
        5 => s | ((1 + r.below(4)) << 52) | (r.next() & ((1 << 52) - 1)),
        6 => ((r.below(4000) as f64 - 2000.0) / 4.0).to_bits() ^ s,
        7 => s | ((1023 + r.below(64)) << 52) | (r.next() & ((1 << 52) - 1)),
        8 => s | ((1020 + r.below(8)) << 52) | (r.next() >> 40 << 40 & ((1 << 52) - 1)),
        _ => s | ((900 + r.below(250)) << 52) | (r.next() & ((1 << 52) - 1)),
    }
}

fn bytes_of(t: &str) -> usize {
    match t {
        "f64" | "i64" => 8,
        "f32" | "i32" => 4,
        "f16" | "i16" => 2,
        "i8" => 1,
        _ => panic!("{t}"),
    }
}

/// A shader that applies `op` to inputs loaded from ssbo[k] and stores the result to
/// ssbo[7]; a boolean result is stored as b2i.
fn op_shader(op: &str, srcs: &[&str], dst: &str, lanes: usize) -> String {
    let mut s = format!(
        "shader local_size {lanes} 1 1 shared 0 local 0 push 0\n\
         %0:i32 = sysval local_invocation_index\n"
    );
    let mut args = Vec::new();
    for (k, t) in srcs.iter().enumerate() {
        let n = bytes_of(t);
        s += &format!("%{}:i32 = const {n}\n", 10 + k);
        s += &format!("%{}:i32 = imul %0, %{}\n", 20 + k, 10 + k);
        s += &format!("%{}:{t} = load ssbo[{k}] %{} align {n}\n", 30 + k, 20 + k);
        args.push(format!("%{}", 30 + k));
    }
    let (store_t, r) = if dst == "b1" {
        s += &format!("%40:b1 = {op} {}\n%41:i32 = b2i %40\n", args.join(", "));
        ("i32", 41)
    } else {
        s += &format!("%41:{dst} = {op} {}\n", args.join(", "));
        (dst, 41)
    };
    let n = bytes_of(store_t);
    s += &format!("%50:i32 = const {n}\n%51:i32 = imul %0, %50\n");
    s += &format!("store ssbo[7] %51, %{r} align {n}\n");
    s
}

fn is_nan_bits(t: &str, b: u64) -> bool {
    match t {
        "f64" => f64::from_bits(b).is_nan(),
        "f32" => f32::from_bits(b as u32).is_nan(),
        "f16" => (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0,
        _ => false,
    }
}

/// Runs `op` on every input tuple, once as written (the interpreter computes f64 with
/// Rust's f64) and once after soft_fp64; results must be bit-identical, except that
/// NaN results need only both be NaN. `fixup` may adjust the expected value.
fn check_op(
    op: &str,
    srcs: &[&str],
    dst: &str,
    inputs: &[Vec<u64>],
    fixup: &dyn Fn(&[u64], u64) -> u64,
) {
    let lanes = inputs.len();
    let text = op_shader(op, srcs, dst, lanes);
    let orig = parse_shader(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut lowered = orig.clone();
    assert!(soft_fp64(&mut lowered.func).unwrap());
    crate::validate::validate(&lowered.func).unwrap_or_else(|e| panic!("{e}\n{lowered}"));
    assert!(
        !lowered.func.values.iter().any(|t| is_f64(*t)),
        "an f64 type remains"
    );
    let mut mem = Memory::default();
    for (k, t) in srcs.iter().enumerate() {
        let n = bytes_of(t);
        let mut buf = vec![0u8; n * lanes];
        for (l, inp) in inputs.iter().enumerate() {
            buf[l * n..l * n + n].copy_from_slice(&inp[k].to_le_bytes()[..n]);
        }
        mem.ssbo.insert(k as u32, buf);
    }
    let out_t = if dst == "b1" { "i32" } else { dst };
    let on = bytes_of(out_t);
    mem.ssbo.insert(7, vec![0; on * lanes]);
    let mut m1 = mem.clone();
    run(&orig, [1, 1, 1], 16, &mut m1).unwrap();
    run(&lowered, [1, 1, 1], 16, &mut mem).unwrap();
    let read = |m: &Memory, l: usize| {
        let mut b = [0u8; 8];
        b[..on].copy_from_slice(&m.ssbo[&7][l * on..l * on + on]);
        u64::from_le_bytes(b)
    };
    let mut bad = Vec::new();
    for (l, inp) in inputs.iter().enumerate() {
        let want = fixup(inp, read(&m1, l));
        let got = read(&mem, l);
        let ok = want == got || (is_nan_bits(dst, want) && is_nan_bits(dst, got));
        if !ok {
            bad.push(format!(
                "lane {l}: {op} {:x?} ({:?}): want {want:#x} got {got:#x}",
                inp,
                inp.iter()
                    .zip(srcs)
                    .map(|(x, t)| if *t == "f64" {
                        format!("{:e}", f64::from_bits(*x))
                    } else {
                        format!("{x:#x}")
                    })
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {lanes} differ (seeded inputs):\n{}",
        bad.len(),
        bad.iter().take(12).cloned().collect::<Vec<_>>().join("\n")
    );
}

fn same(_: &[u64], w: u64) -> u64 {
    w
}

/// Every pair of edge values, then `n` random tuples.
fn inputs(arity: usize, n: usize, seed: u64) -> Vec<Vec<u64>> {
    let mut v = Vec::new();
    let e: Vec<u64> = EDGES.iter().map(|x| x.to_bits()).collect();
    match arity {
        1 => v.extend(e.iter().map(|x| vec![*x])),
        2 => {
            for a in &e {
                for b in &e {
                    v.push(vec![*a, *b]);
                }
            }
        }
        _ => {}
    }
    let mut r = Rng(seed);
    for _ in 0..n {
        let a = rand_f64(&mut r);
        let mut t = vec![a];
        for k in 1..arity {
            // Half the time a close neighbour of the first operand (cancellation,
            // equal exponents).
            let x = if r.below(2) == 0 {
                rand_f64(&mut r)
            } else {
                (a ^ (r.next() & 0xffff)) ^ (r.below(2) << 63) ^ (u64::from(k == 2) << 62)
            };
            t.push(x);
        }
        v.push(t);
    }
    v
}

fn check_f64_unary(op: &str, seed: u64) {
    check_op(op, &["f64"], "f64", &inputs(1, 2000, seed), &same);
}
fn check_f64_binary(op: &str, seed: u64) {
    check_op(op, &["f64", "f64"], "f64", &inputs(2, 1500, seed), &same);
}

#[test]
fn fadd_fsub_are_correctly_rounded() {
    check_f64_binary("fadd", 1);
    check_f64_binary("fsub", 2);
}

#[test]
fn fmul_is_correctly_rounded() {
    check_f64_binary("fmul", 3);
}

#[test]
fn fdiv_is_correctly_rounded() {
    check_f64_binary("fdiv", 4);
}

#[test]
fn fsqrt_is_correctly_rounded() {
    check_f64_unary("fsqrt", 5);
}

#[test]
fn frcp_frsq_match_the_two_rounding_reference() {
    check_f64_unary("frcp", 6);
    check_f64_unary("frsq", 7);
}

#[test]
fn ffma_is_fused() {
    let mut v = inputs(3, 2500, 8);
    // Products that cancel against the addend.
    let mut r = Rng(80);
    for _ in 0..500 {
        let a = f64::from_bits(rand_f64(&mut r));
        let b = f64::from_bits(rand_f64(&mut r));
        let c = -(a * b);
        v.push(vec![a.to_bits(), b.to_bits(), c.to_bits()]);
    }
    let e: Vec<u64> = EDGES.iter().step_by(3).map(|x| x.to_bits()).collect();
    for a in &e {
        for b in &e {
            for c in &e {
                v.push(vec![*a, *b, *c]);
            }
        }
    }
    check_op("ffma", &["f64", "f64", "f64"], "f64", &v, &same);
}

#[test]
fn rounding_to_integers() {
    for (k, op) in [
        "ftrunc",
        "ffloor",
        "fceil",
        "fround_even",
        "ffract",
        "fsign",
    ]
    .iter()
    .enumerate()
    {
        check_f64_unary(op, 10 + k as u64);
    }
}

#[test]
fn fneg_fabs_keep_payloads() {
    check_f64_unary("fneg", 20);
    check_f64_unary("fabs", 21);
}

#[test]
fn comparisons_ordered_and_unordered() {
    let v = inputs(2, 1000, 30);
    for op in [
        "feq", "fne", "flt", "fle", "fgt", "fge", "fequ", "fneu", "fltu", "fleu", "fgtu", "fgeu",
    ] {
        check_op(op, &["f64", "f64"], "b1", &v, &same);
    }
    let v = inputs(1, 500, 31);
    check_op("isnan", &["f64"], "b1", &v, &same);
    check_op("isinf", &["f64"], "b1", &v, &same);
}

#[test]
fn fmin_fmax_return_the_number_and_order_zeros() {
    // Rust's min/max may return either zero for (+0, -0); the lowering orders -0 < +0
    // (IEEE 754-2019 minimum/maximum on zeros).
    let zeros = |max: bool| {
        move |i: &[u64], w: u64| {
            let (a, b) = (f64::from_bits(i[0]), f64::from_bits(i[1]));
            if a == 0.0 && b == 0.0 {
                let neg = if max {
                    a.is_sign_negative() && b.is_sign_negative()
                } else {
                    a.is_sign_negative() || b.is_sign_negative()
                };
                if neg {
                    (-0.0f64).to_bits()
                } else {
                    0
                }
            } else {
                w
            }
        }
    };
    let v = inputs(2, 1000, 40);
    check_op("fmin", &["f64", "f64"], "f64", &v, &zeros(false));
    check_op("fmax", &["f64", "f64"], "f64", &v, &zeros(true));
}

#[test]
fn conversions_to_and_from_f32_f16() {
    let v = inputs(1, 3000, 50);
    check_op("f2f", &["f64"], "f32", &v, &same);
    check_op("f2f", &["f64"], "f16", &v, &same);
    let mut r = Rng(51);
    let mut w: Vec<Vec<u64>> = (0..2000).map(|_| vec![r.next() & 0xffff_ffff]).collect();
    w.extend(
        [
            0u64,
            0x8000_0000,
            1,
            0x807f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0001,
        ]
        .iter()
        .map(|x| vec![*x]),
    );
    check_op("f2f", &["f32"], "f64", &w, &same);
    let h: Vec<Vec<u64>> = (0..2000).map(|_| vec![r.next() & 0xffff]).collect();
    check_op("f2f", &["f16"], "f64", &h, &same);
}

#[test]
fn conversions_to_and_from_integers() {
    let v = inputs(1, 3000, 60);
    for dst in ["i32", "i16", "i8", "i64"] {
        check_op("f2i", &["f64"], dst, &v, &same);
        check_op("f2u", &["f64"], dst, &v, &same);
    }
    let mut r = Rng(61);
    let mut w: Vec<Vec<u64>> = (0..1500)
        .map(|_| {
            let x = r.next();
            vec![x >> r.below(64)]
        })
        .collect();
    w.extend(
        [
            0u64,
            1,
            u64::MAX,
            1 << 63,
            (1 << 63) - 1,
            0x8000_0000,
            0x7fff_ffff,
        ]
        .iter()
        .map(|x| vec![*x]),
    );
    for src in ["i32", "i16", "i8", "i64"] {
        check_op("i2f", &[src], "f64", &w, &same);
        check_op("u2f", &[src], "f64", &w, &same);
    }
}

/// IR instructions one scalar op costs after soft fp64 and the clean-up passes (the
/// load/store scaffolding of [`op_shader`] subtracted).
fn op_size(op: &str, srcs: &[&str], dst: &str) -> usize {
    let count = |op: &str, srcs: &[&str], dst: &str| {
        let mut s = parse_shader(&op_shader(op, srcs, dst, 1)).unwrap();
        let opts = crate::pipeline::CompileOptions {
            debug: crate::pipeline::DebugFlags {
                soft64: true,
                ..Default::default()
            },
            ..Default::default()
        };
        crate::pipeline::run_pipeline_for(&mut s, &crate::Target::gen9(), &opts).unwrap();
        s.func.instr_count()
    };
    count(op, srcs, dst) - count("mov", &srcs[..1], srcs[0]) + 1
}

/// Code size per op stays within bounds (today's count + ~5%), so a change that
/// bloats a helper is noticed; `--nocapture` prints the counts.
#[test]
fn op_sizes_stay_bounded() {
    for (op, srcs, dst, max) in [
        ("fadd", &["f64", "f64"][..], "f64", 190),
        ("fmul", &["f64", "f64"], "f64", 220),
        ("ffma", &["f64", "f64", "f64"], "f64", 510),
        ("fdiv", &["f64", "f64"], "f64", 250),
        ("fsqrt", &["f64"], "f64", 225),
        ("ldexp", &["f64", "i32"], "f64", 115),
        ("frexp_sig", &["f64"], "f64", 62),
        ("flt", &["f64", "f64"], "b1", 56),
        ("f2f", &["f64"], "f32", 110),
        ("f2i", &["f64"], "i32", 60),
        ("i2f", &["i32"], "f64", 31),
        ("fround_even", &["f64"], "f64", 78),
    ] {
        let n = op_size(op, srcs, dst);
        println!("{op}: {n} IR instructions");
        assert!(n <= max, "{op}: {n} IR instructions (bound {max})");
    }
}

#[test]
fn constructs_without_a_lowering_are_errors_and_leave_the_function_alone() {
    let head = "shader local_size 1 1 1 shared 0 local 0 push 0\n";
    for (body, want) in [
        (
            "var $0:f64
            %0:f64 = const 1.5
            store_var $0, %0
            %1:f64 = load_var $0
            %2:i32 = const 0
            store ssbo[0] %2, %1 align 8",
            "variable",
        ),
        (
            "%0:i32 = const 0
            %1:f64 = const 2.5
            %2:f64 = atomic_xchg ssbo[0] %0, %1
            store ssbo[1] %0, %2 align 8",
            "atomic",
        ),
    ] {
        let text = format!("{head}{body}");
        let mut s = parse_shader(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let before = s.to_string();
        let err = soft_fp64(&mut s.func).expect_err(&text);
        assert!(err.contains(want), "{err}");
        assert_eq!(s.to_string(), before);
    }
}

#[test]
fn frexp_and_ldexp() {
    let v = inputs(1, 2000, 70);
    check_op("frexp_sig", &["f64"], "f64", &v, &same);
    check_op("frexp_exp", &["f64"], "i32", &v, &same);
    let mut r = Rng(71);
    let w: Vec<Vec<u64>> = (0..2500)
        .map(|_| {
            let e = match r.below(3) {
                0 => r.below(200) as i64 - 100,
                1 => r.below(4400) as i64 - 2200,
                _ => r.next() as i32 as i64,
            };
            vec![rand_f64(&mut r), e as u64 & 0xffff_ffff]
        })
        .collect();
    check_op("ldexp", &["f64", "i32"], "f64", &w, &same);
}

#[test]
fn fneg_becomes_a_sign_flip_of_the_high_word() {
    crate::passes::check_pass(
        |f| soft_fp64(f).unwrap(),
        "%0:i32 = const 0
        %1:f64 = load ssbo[0] %0 align 8
        %2:f64 = fneg %1
        store ssbo[0] %0, %2 align 8",
        "%0:i32 = const 0
        %1:i32x2 = load ssbo[0] %0 align 8
        %2:i32 = extract %1, 0
        %3:i32 = extract %1, 1
        %4:i32 = const -2147483648
        %5:i32 = ixor %3, %4
        %6:i32x2 = vec %2, %5
        store ssbo[0] %0, %6 align 8",
    );
}

#[test]
fn vectors_phis_and_selects_carry_word_pairs() {
    // f64x3/f64x4 loads and stores split into i32x4 pieces, a loop parameter, an if
    // result, bcsel, vec/extract/swizzle/insert: same memory as the f64 original.
    let text = "shader local_size 8 1 1 shared 0 local 0 push 0
        %0:i32 = sysval local_invocation_index
        %1:i32 = const 32
        %2:i32 = imul %0, %1
        %3:f64x3 = load ssbo[0] %2 align 8
        %4:f64 = extract %3, 0
        %5:f64 = extract %3, 2
        %6:i32 = const 0
        %7:i32 = const 1
        %8:i32 = const 3
        %9:f64 = loop (%10:i32 = %6, %11:f64 = %4) {
            %12:b1 = ige %10, %8
            if %12 {
                break %11
            }
            %13:f64 = fmul %11, %5
            %14:i32 = iadd %10, %7
            continue %14, %13
        }
        %15:b1 = flt %9, %5
        %16:f64 = if %15 {
            %17:f64 = fadd %9, %4
            yield %17
        } else {
            yield %5
        }
        %18:f64 = bcsel %15, %4, %16
        %19:f64x4 = vec %16, %18, %9, %4
        %20:f64x4 = swizzle %19, 3 2 1 0
        %21:f64x4 = insert %20, %5, 1
        store ssbo[1] %2, %21 align 8";
    let orig = parse_shader(text).unwrap();
    let mut lowered = orig.clone();
    assert!(soft_fp64(&mut lowered.func).unwrap());
    crate::validate::validate(&lowered.func).unwrap_or_else(|e| panic!("{e}\n{lowered}"));
    assert!(!lowered.to_string().contains("f64"), "{lowered}");
    let mut r = Rng(90);
    let mut mem = Memory::default();
    let input: Vec<u8> = (0..8 * 4)
        .flat_map(|_| f64::from_bits(rand_f64(&mut r)).to_le_bytes())
        .collect();
    mem.ssbo.insert(0, input);
    mem.ssbo.insert(1, vec![0; 8 * 32]);
    let mut m1 = mem.clone();
    run(&orig, [1, 1, 1], 8, &mut m1).unwrap();
    run(&lowered, [1, 1, 1], 8, &mut mem).unwrap();
    let words = |m: &Memory| -> Vec<u64> {
        m.ssbo[&1]
            .chunks(8)
            .map(|c| {
                let b = u64::from_le_bytes(c.try_into().unwrap());
                if f64::from_bits(b).is_nan() {
                    u64::MAX
                } else {
                    b
                }
            })
            .collect()
    };
    assert_eq!(words(&m1), words(&mem));
    assert!(words(&mem).iter().any(|w| *w != 0));
}

#[test]
fn pack_and_unpack_double_2x32_need_no_64_bit_integers() {
    // The front end's packDouble2x32 / unpackDouble2x32 shapes.
    let text = "shader local_size 8 1 1 shared 0 local 0 push 0
        %0:i32 = sysval local_invocation_index
        %1:i32 = const 8
        %2:i32 = imul %0, %1
        %3:i32x2 = load ssbo[0] %2 align 8
        %4:i32 = extract %3, 0
        %5:i32 = extract %3, 1
        %6:i64 = u2u %4
        %7:i64 = u2u %5
        %8:i32 = const 32
        %9:i64 = ishl %7, %8
        %10:i64 = ior %6, %9
        %11:f64 = bitcast %10
        %12:f64 = fmul %11, %11
        %13:i64 = bitcast %12
        %14:i32 = u2u %13
        %15:i64 = ushr %13, %8
        %16:i32 = u2u %15
        %17:i32x2 = vec %16, %14
        store ssbo[1] %2, %17 align 8";
    let orig = parse_shader(text).unwrap();
    let mut lowered = orig.clone();
    assert!(soft_fp64(&mut lowered.func).unwrap());
    crate::passes::opt_copy_prop(&mut lowered.func);
    crate::passes::opt_dce(&mut lowered.func);
    crate::validate::validate(&lowered.func).unwrap();
    let t = lowered.to_string();
    assert!(!t.contains("f64") && !t.contains("i64"), "{t}");
    let mut r = Rng(95);
    let mut mem = Memory::default();
    let input: Vec<u8> = (0..8)
        .flat_map(|_| {
            f64::from_bits(rand_f64(&mut r) & !(0x7ffu64 << 52) | (1000 << 52)).to_le_bytes()
        })
        .collect();
    mem.ssbo.insert(0, input);
    mem.ssbo.insert(1, vec![0; 64]);
    let mut m1 = mem.clone();
    run(&orig, [1, 1, 1], 8, &mut m1).unwrap();
    run(&lowered, [1, 1, 1], 8, &mut mem).unwrap();
    assert_eq!(m1.ssbo[&1], mem.ssbo[&1]);
    assert!(mem.ssbo[&1].iter().any(|x| *x != 0));
}
