//! Subgroup operations on the types beyond 32 bits (`shaderSubgroupExtendedTypes` and the
//! 64-bit ones): 8/16/64-bit integers, fp16 and fp64, plus f32 through the same shader as a
//! check of the shader itself. Each type's shader is compiled at SIMD8/16/32, run on the
//! simulated GPU with every invocation active and with some inactive, and compared with a
//! CPU model written here (a subgroup is `simd` consecutive local indices of a workgroup of
//! 40, so the last thread is partly filled). Results whose source invocation is inactive
//! are undefined and not compared. Skipped when glslangValidator is not installed.

mod sim_common;

use sim_common::*;

const LOCAL: usize = 40;
const GROUPS: usize = 2;
const N: usize = LOCAL * GROUPS;
/// Output dwords per invocation: two per result (low and high dword).
const SLOTS: usize = 40;

/// Deterministic inputs in 0..256 (seed 0x9e3779b9); `divergent` = false makes the branch
/// condition `x & 3 != 0` true everywhere.
fn inputs(divergent: bool) -> Vec<u32> {
    let mut s = 0x9e37_79b9u32;
    (0..N)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = s % 256;
            if divergent {
                x
            } else {
                x | 1
            }
        })
        .collect()
}

fn active(x: u32) -> bool {
    x & 3 != 0
}

/// `(lane, global index)` of every invocation of each subgroup, with its activity.
fn subgroups(simd: usize, a: &[u32]) -> Vec<Vec<(usize, usize, bool)>> {
    let mut out = Vec::new();
    for g in 0..GROUPS {
        for base in (0..LOCAL).step_by(simd) {
            out.push(
                (base..(base + simd).min(LOCAL))
                    .map(|l| (l - base, g * LOCAL + l, active(a[g * LOCAL + l])))
                    .collect(),
            );
        }
    }
    out
}

const HEADER: &str = "#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_clustered : require
#extension GL_KHR_shader_subgroup_quad : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
";

const INT_BODY: &str = "
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer A { uint a[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
void put(uint k, S r) { uint b = gl_GlobalInvocationID.x * 40u + 2u * k; o[b] = LO(r); o[b + 1u] = HI(r); }
void putu(uint k, U r) { put(k, S(r)); }
void main() {
    uint x = a[gl_GlobalInvocationID.x];
    S v = VAL(x);
    U u = U(v);
    S e = S(x >> 7) * BIG;
    if ((x & 3u) != 0u) {
        put(0u, subgroupAdd(v));
        put(1u, subgroupMul(v | S(1)));
        put(2u, subgroupMin(v));
        put(3u, subgroupMax(v));
        putu(4u, subgroupMin(u));
        putu(5u, subgroupMax(u));
        putu(6u, subgroupAnd(u | U(0xF0)));
        putu(7u, subgroupOr(u));
        putu(8u, subgroupXor(u));
        put(9u, subgroupInclusiveAdd(v));
        put(10u, subgroupExclusiveMax(v));
        putu(11u, subgroupInclusiveMin(u));
        put(12u, subgroupBroadcast(v, 3u));
        put(13u, subgroupBroadcastFirst(v));
        put(14u, subgroupShuffleXor(v, 1u));
        put(15u, subgroupClusteredAdd(v, 4u));
        put(16u, subgroupAllEqual(e) ? S(1) : S(0));
        putu(17u, subgroupShuffleDown(u, 1u));
        put(18u, subgroupQuadBroadcast(v, 1u));
        putu(19u, subgroupExclusiveAdd(u));
    }
}";

/// One integer type: its GLSL names, how the value is made from the input, and width.
struct IntType {
    name: &'static str,
    bits: u32,
    defs: &'static str,
    /// The value of input x, before wrapping to `bits`.
    val: fn(u32) -> i64,
    /// The multiplier of the all-equal operand.
    big: i64,
}

const INTS: [IntType; 3] = [
    IntType {
        name: "int8",
        bits: 8,
        defs: "#extension GL_EXT_shader_subgroup_extended_types_int8 : require
#define S int8_t
#define U uint8_t
#define VAL(x) int8_t(int(x) - 128)
#define BIG int8_t(1)
#define LO(r) uint(int(r))
#define HI(r) 0u
",
        val: |x| x as i64 - 128,
        big: 1,
    },
    IntType {
        name: "int16",
        bits: 16,
        defs: "#extension GL_EXT_shader_subgroup_extended_types_int16 : require
#define S int16_t
#define U uint16_t
#define VAL(x) int16_t((int(x) - 128) * 97)
#define BIG int16_t(300)
#define LO(r) uint(int(r))
#define HI(r) 0u
",
        val: |x| (x as i64 - 128) * 97,
        big: 300,
    },
    IntType {
        name: "int64",
        bits: 64,
        defs: "#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#define S int64_t
#define U uint64_t
#define VAL(x) ((int64_t(int(x) - 128) << 33) + int64_t(x))
#define BIG (int64_t(1) << 40)
#define LO(r) uint(r)
#define HI(r) uint(r >> 32)
",
        val: |x| ((x as i64 - 128) << 33) + x as i64,
        big: 1 << 40,
    },
];

/// Wraps to a signed `bits`-bit value.
fn sx(v: i64, bits: u32) -> i64 {
    if bits == 64 {
        v
    } else {
        (v << (64 - bits)) >> (64 - bits)
    }
}

/// The unsigned `bits`-bit value of the same bits.
fn zx(v: i64, bits: u32) -> i64 {
    if bits == 64 {
        v
    } else {
        v & ((1i64 << bits) - 1)
    }
}

fn int_reference(t: &IntType, simd: usize, a: &[u32]) -> Vec<Option<u32>> {
    let bits = t.bits;
    let mut o = vec![Some(0u32); N * SLOTS];
    for sg in subgroups(simd, a) {
        let v = |i: usize| sx((t.val)(a[i]), bits);
        let u = |i: usize| zx(v(i), bits) as u64;
        let act: Vec<(usize, usize)> = sg.iter().filter(|s| s.2).map(|s| (s.0, s.1)).collect();
        let from = |lane: usize| act.iter().find(|s| s.0 == lane).map(|s| s.1);
        let vs: Vec<i64> = act.iter().map(|s| v(s.1)).collect();
        let us: Vec<u64> = act.iter().map(|s| u(s.1)).collect();
        let wrap = |x: i64| sx(x, bits);
        let umax_id = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        for (k, &(lane, i)) in act.iter().enumerate() {
            let mut put = |slot: usize, r: Option<i64>| {
                let r = r.map(|r| sx(r, bits));
                o[i * SLOTS + 2 * slot] = r.map(|r| r as u32);
                o[i * SLOTS + 2 * slot + 1] =
                    r.map(|r| if bits == 64 { (r >> 32) as u32 } else { 0 });
            };
            let su = |x: u64| Some(x as i64);
            put(
                0,
                Some(vs.iter().fold(0i64, |p, &x| wrap(p.wrapping_add(x)))),
            );
            put(
                1,
                Some(vs.iter().fold(1i64, |p, &x| wrap(p.wrapping_mul(x | 1)))),
            );
            put(2, vs.iter().copied().min());
            put(3, vs.iter().copied().max());
            put(4, su(*us.iter().min().unwrap()));
            put(5, su(*us.iter().max().unwrap()));
            put(6, su(us.iter().fold(umax_id, |p, &x| p & (x | 0xF0))));
            put(7, su(us.iter().fold(0, |p, &x| p | x)));
            put(8, su(us.iter().fold(0, |p, &x| p ^ x)));
            put(
                9,
                Some(vs[..=k].iter().fold(0i64, |p, &x| wrap(p.wrapping_add(x)))),
            );
            put(
                10,
                Some(
                    vs[..k]
                        .iter()
                        .copied()
                        .fold(sx(1 << (bits - 1), bits), i64::max),
                ),
            );
            put(11, su(*us[..=k].iter().min().unwrap()));
            put(12, from(3).map(v));
            put(13, Some(vs[0]));
            put(14, from(lane ^ 1).map(v));
            let cluster = act.iter().filter(|s| s.0 / 4 == lane / 4);
            put(
                15,
                Some(cluster.fold(0i64, |p, s| wrap(p.wrapping_add(v(s.1))))),
            );
            let e = |i: usize| wrap((a[i] >> 7) as i64 * t.big);
            put(16, Some(act.iter().all(|s| e(s.1) == e(act[0].1)) as i64));
            put(17, from(lane + 1).map(|j| u(j) as i64));
            put(18, from((lane & !3) | 1).map(v));
            put(19, su(us[..k].iter().fold(0u64, |p, &x| p.wrapping_add(x))));
        }
    }
    o
}

const FLOAT_BODY: &str = "
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer A { uint a[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
void put(uint k, F r) { o[gl_GlobalInvocationID.x * 40u + 2u * k] = floatBitsToUint(float(r)); }
void main() {
    uint x = a[gl_GlobalInvocationID.x];
    F f = F(int(x >> 4) - 8);
    F m = (x % 5u) == 0u ? F(2) : ((x & 4u) != 0u ? F(-1) : F(1));
    if ((x & 3u) != 0u) {
        put(0u, subgroupAdd(f));
        put(1u, subgroupMul(m));
        put(2u, subgroupMin(f));
        put(3u, subgroupMax(f));
        put(4u, subgroupInclusiveAdd(f));
        put(5u, subgroupExclusiveMin(f));
        put(6u, subgroupBroadcastFirst(f));
        put(7u, subgroupShuffleXor(f, 2u));
        put(8u, subgroupClusteredMax(f, 8u));
        put(9u, subgroupInclusiveMul(m));
        put(10u, subgroupAllEqual(F(x >> 7)) ? F(1) : F(0));
        put(11u, subgroupQuadSwapDiagonal(f));
        put(12u, subgroupExclusiveMax(f));
        put(13u, subgroupClusteredMul(m, 2u));
        put(14u, subgroupAdd(V2(f, f * F(2))).y);
        put(15u, subgroupBroadcast(f, 2u));
        // Zeros of both signs are equal by value (not by bits); a vector is equal when
        // each component is.
        F z = (x & 8u) != 0u ? F(-0.0) : F(0.0);
        put(16u, subgroupAllEqual(z) ? F(1) : F(0));
        put(17u, subgroupAllEqual(V2(F(x >> 7), z)) ? F(1) : F(0));
    }
}";

/// Float types: GLSL definitions. Every value and partial result is a small integer or
/// a power of two, so each is exact in every type and in any order of evaluation.
const FLOATS: [(&str, &str); 3] = [
    (
        "float16",
        "#extension GL_EXT_shader_subgroup_extended_types_float16 : require
#define F float16_t
#define V2 f16vec2
",
    ),
    ("float64", "#define F double\n#define V2 dvec2\n"),
    ("float32", "#define F float\n#define V2 vec2\n"),
];

fn float_reference(simd: usize, a: &[u32]) -> Vec<Option<u32>> {
    let mut o: Vec<Option<u32>> = (0..N * SLOTS)
        .map(|j| (j % 2 == 1 || j % SLOTS >= 36).then_some(0))
        .collect();
    let f = |i: usize| ((a[i] >> 4) as i32 - 8) as f64;
    let m = |i: usize| {
        if a[i].is_multiple_of(5) {
            2.0
        } else if a[i] & 4 != 0 {
            -1.0
        } else {
            1.0
        }
    };
    for sg in subgroups(simd, a) {
        let act: Vec<(usize, usize)> = sg.iter().filter(|s| s.2).map(|s| (s.0, s.1)).collect();
        let from = |lane: usize| act.iter().find(|s| s.0 == lane).map(|s| s.1);
        let fs: Vec<f64> = act.iter().map(|s| f(s.1)).collect();
        let ms: Vec<f64> = act.iter().map(|s| m(s.1)).collect();
        for (k, &(lane, i)) in act.iter().enumerate() {
            let mut put = |slot: usize, r: Option<f64>| {
                o[i * SLOTS + 2 * slot] = r.map(|r| (r as f32).to_bits());
            };
            put(0, Some(fs.iter().sum()));
            put(1, Some(ms.iter().product()));
            put(2, Some(fs.iter().copied().fold(f64::INFINITY, f64::min)));
            put(
                3,
                Some(fs.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
            );
            put(4, Some(fs[..=k].iter().sum()));
            put(
                5,
                Some(fs[..k].iter().copied().fold(f64::INFINITY, f64::min)),
            );
            put(6, Some(fs[0]));
            put(7, from(lane ^ 2).map(f));
            let cluster: Vec<usize> = act
                .iter()
                .filter(|s| s.0 / 8 == lane / 8)
                .map(|s| s.1)
                .collect();
            put(
                8,
                Some(
                    cluster
                        .iter()
                        .map(|&j| f(j))
                        .fold(f64::NEG_INFINITY, f64::max),
                ),
            );
            put(9, Some(ms[..=k].iter().product()));
            let e = |i: usize| a[i] >> 7;
            put(
                10,
                Some(f64::from(u8::from(
                    act.iter().all(|s| e(s.1) == e(act[0].1)),
                ))),
            );
            put(11, from(lane ^ 3).map(f));
            put(
                12,
                Some(fs[..k].iter().copied().fold(f64::NEG_INFINITY, f64::max)),
            );
            let pair = act.iter().filter(|s| s.0 / 2 == lane / 2);
            put(13, Some(pair.map(|s| m(s.1)).product()));
            put(14, Some(fs.iter().map(|x| 2.0 * x).sum()));
            put(15, from(2).map(f));
            put(16, Some(1.0));
            put(
                17,
                Some(f64::from(u8::from(
                    act.iter().all(|s| e(s.1) == e(act[0].1)),
                ))),
            );
        }
    }
    o
}

/// The expected output words at a SIMD width for some inputs (None: undefined).
type Reference = dyn Fn(usize, &[u32]) -> Vec<Option<u32>>;

/// Floats compare by value (the first invocation of an exclusive sum gets a zero whose
/// sign the specification leaves open), integers by bits.
fn same(g: u32, w: u32, float: bool) -> bool {
    g == w || (float && f32::from_bits(g) == f32::from_bits(w))
}

fn check(name: &str, src: &str, float: bool, reference: &Reference) {
    for simd in [8usize, 16, 32] {
        let Some(k) = kernel_env(name, src, simd as u32, "vulkan1.1") else {
            return;
        };
        for divergent in [false, true] {
            let a = inputs(divergent);
            let out = run_buffers(&k, [GROUPS as u32, 1, 1], &[a.clone(), vec![0; N * SLOTS]]);
            let want = reference(simd, &a);
            let mut checked = 0;
            for (j, (&g, w)) in out[1].iter().zip(&want).enumerate() {
                let Some(w) = *w else { continue };
                checked += 1;
                let (i, slot) = (j / SLOTS, j % SLOTS);
                assert!(
                    same(g, w, float),
                    "{name} SIMD{simd} {} invocation {i} (lane {}) result {} {}: got {g:#x}, \
                     want {w:#x}, input {:#x} (inputs: seed 0x9e3779b9)\n{}",
                    if divergent { "divergent" } else { "uniform" },
                    (i % LOCAL) % simd,
                    slot / 2,
                    if slot % 2 == 1 {
                        "high dword"
                    } else {
                        "low dword"
                    },
                    a[i],
                    k.asm
                );
            }
            assert!(
                checked > N * 8,
                "{name} SIMD{simd}: only {checked} results defined"
            );
        }
    }
}

#[test]
fn integer_subgroup_operations_on_8_16_and_64_bit_types_match_cpu() {
    for t in &INTS {
        let src = format!("{HEADER}{}{INT_BODY}", t.defs);
        check(&format!("subgroup_{}", t.name), &src, false, &|simd, a| {
            int_reference(t, simd, a)
        });
    }
}

#[test]
fn float_subgroup_operations_on_fp16_and_fp64_match_cpu() {
    for (name, defs) in FLOATS {
        let src = format!("{HEADER}{defs}{FLOAT_BODY}");
        check(&format!("subgroup_{name}"), &src, true, &float_reference);
    }
}
