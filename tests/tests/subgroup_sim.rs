//! Subgroup operations on the simulated GPU at SIMD8/16/32: GLSL subgroup built-ins, vote,
//! ballot, broadcast and arithmetic compiled at each width, run through the simulated i915,
//! and compared with a CPU model of the subgroup semantics written here (a subgroup is
//! `simd` consecutive local indices; an invocation is active when the workgroup has it and
//! its branch condition holds). Each shader runs once with every invocation active
//! (uniform control flow) and once with some inactive (divergent control flow), with a
//! workgroup of 40 so that the last thread of each workgroup is partly filled.
//! Skipped when glslangValidator is not installed.

mod sim_common;

use ferrite_tests::rng::XorShift32;
use sim_common::*;

const LOCAL: usize = 40;
const GROUPS: usize = 2;
const N: usize = LOCAL * GROUPS;

/// Deterministic inputs: `divergent` = false makes the branch condition `x & 3 != 0` true
/// everywhere.
fn inputs(divergent: bool) -> Vec<u32> {
    let mut rng = XorShift32(0x1234_5678);
    (0..N)
        .map(|_| {
            let x = rng.next_u32() % 256;
            if divergent {
                x
            } else {
                x | 1
            }
        })
        .collect()
}

/// The active invocations of each subgroup: `(first global index, lanes active)`.
fn subgroups(simd: usize, active: impl Fn(usize) -> bool) -> Vec<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    for g in 0..GROUPS {
        for base in (0..LOCAL).step_by(simd) {
            let lanes: Vec<(usize, usize)> = (base..(base + simd).min(LOCAL))
                .filter(|l| active(g * LOCAL + l))
                .map(|l| (l - base, g * LOCAL + l))
                .collect();
            out.push(lanes);
        }
    }
    out
}

fn branch(x: u32) -> bool {
    x & 3 != 0
}

const VOTE: &str = "#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer A { uint a[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i];
    uint b = i * 16u;
    o[b + 0u] = gl_SubgroupSize;
    o[b + 1u] = gl_SubgroupInvocationID;
    o[b + 2u] = gl_SubgroupID;
    o[b + 3u] = gl_NumSubgroups;
    o[b + 4u] = subgroupBroadcast(x, 3u);
    o[b + 5u] = gl_SubgroupLtMask.x;
    o[b + 6u] = gl_SubgroupGeMask.x;
    if ((x & 3u) != 0u) {
        o[b + 7u] = subgroupElect() ? 1u : 0u;
        o[b + 8u] = subgroupAll(x > 10u) ? 1u : 0u;
        o[b + 9u] = subgroupAny(x > 200u) ? 1u : 0u;
        o[b + 10u] = subgroupAllEqual(x >> 7) ? 1u : 0u;
        uvec4 m = subgroupBallot(x > 100u);
        o[b + 11u] = m.x;
        o[b + 12u] = m.y | m.z | m.w;
        o[b + 13u] = subgroupBallotBitCount(m);
        o[b + 14u] = subgroupBroadcastFirst(x);
        o[b + 15u] = subgroupBallotExclusiveBitCount(m);
    }
}";

/// `size` is `SubgroupSize`: the width, or the reported 32 at a narrower width (whose
/// invocations past the width are inactive, but inside the subgroup's masks).
fn vote_reference(simd: usize, size: u32, a: &[u32]) -> Vec<u32> {
    let mut o = vec![0u32; N * 16];
    let num_sg = LOCAL.div_ceil(simd) as u32;
    for sg in subgroups(simd, |_| true) {
        let first = sg[0].1;
        for &(lane, i) in &sg {
            let b = i * 16;
            o[b] = size;
            o[b + 1] = lane as u32;
            o[b + 2] = ((i % LOCAL) / simd) as u32;
            o[b + 3] = num_sg;
            o[b + 4] = a[first + 3];
            let valid = u32::MAX >> (32 - size);
            o[b + 5] = ((1u64 << lane) as u32).wrapping_sub(1) & valid;
            o[b + 6] = (u32::MAX << lane) & valid;
        }
    }
    for sg in subgroups(simd, |i| branch(a[i])) {
        let Some(&(_, first)) = sg.first() else {
            continue;
        };
        let xs: Vec<u32> = sg.iter().map(|&(_, i)| a[i]).collect();
        let mask: u32 = sg
            .iter()
            .filter(|&&(_, i)| a[i] > 100)
            .map(|&(l, _)| 1u32 << l)
            .sum();
        for &(lane, i) in &sg {
            let b = i * 16;
            o[b + 7] = u32::from(i == first);
            o[b + 8] = u32::from(xs.iter().all(|&x| x > 10));
            o[b + 9] = u32::from(xs.iter().any(|&x| x > 200));
            o[b + 10] = u32::from(xs.iter().all(|&x| x >> 7 == a[first] >> 7));
            o[b + 11] = mask;
            o[b + 12] = 0;
            o[b + 13] = mask.count_ones();
            o[b + 14] = a[first];
            o[b + 15] = (mask & ((1u64 << lane) as u32).wrapping_sub(1)).count_ones();
        }
    }
    o
}

const ARITH: &str = "#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer A { uint a[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i];
    int s = int(x) - 128;
    uint b = i * 16u;
    if ((x & 3u) != 0u) {
        o[b + 0u] = subgroupAdd(x);
        o[b + 1u] = uint(subgroupMin(s));
        o[b + 2u] = uint(subgroupMax(s));
        o[b + 3u] = subgroupMin(x);
        o[b + 4u] = subgroupMax(x);
        o[b + 5u] = subgroupAnd(x | 0xF0u);
        o[b + 6u] = subgroupOr(x);
        o[b + 7u] = subgroupXor(x);
        o[b + 8u] = uint(subgroupMul(s | 1));
        o[b + 9u] = floatBitsToUint(subgroupAdd(float(s)));
        o[b + 10u] = floatBitsToUint(subgroupMul((x & 4u) != 0u ? 2.0 : 0.5));
        o[b + 11u] = floatBitsToUint(subgroupMin(float(s) * 0.25));
        o[b + 12u] = floatBitsToUint(subgroupMax(float(s) * 0.25));
        o[b + 13u] = subgroupInclusiveAdd(x);
        o[b + 14u] = subgroupExclusiveAdd(x);
        o[b + 15u] = uint(subgroupExclusiveMin(s));
    }
}";

fn arith_reference(simd: usize, a: &[u32]) -> Vec<u32> {
    let mut o = vec![0u32; N * 16];
    for sg in subgroups(simd, |i| branch(a[i])) {
        let xs: Vec<u32> = sg.iter().map(|&(_, i)| a[i]).collect();
        let ss: Vec<i32> = xs.iter().map(|&x| x as i32 - 128).collect();
        let fs: Vec<f32> = ss.iter().map(|&s| s as f32).collect();
        for (k, &(_, i)) in sg.iter().enumerate() {
            let b = i * 16;
            o[b] = xs.iter().fold(0u32, |p, &x| p.wrapping_add(x));
            o[b + 1] = *ss.iter().min().unwrap() as u32;
            o[b + 2] = *ss.iter().max().unwrap() as u32;
            o[b + 3] = *xs.iter().min().unwrap();
            o[b + 4] = *xs.iter().max().unwrap();
            o[b + 5] = xs.iter().fold(u32::MAX, |p, &x| p & (x | 0xF0));
            o[b + 6] = xs.iter().fold(0, |p, &x| p | x);
            o[b + 7] = xs.iter().fold(0, |p, &x| p ^ x);
            o[b + 8] = ss.iter().fold(1i32, |p, &s| p.wrapping_mul(s | 1)) as u32;
            // Sums of small integers and products of powers of two are exact in any order.
            o[b + 9] = fs.iter().sum::<f32>().to_bits();
            o[b + 10] = xs
                .iter()
                .map(|&x| if x & 4 != 0 { 2.0f32 } else { 0.5 })
                .product::<f32>()
                .to_bits();
            o[b + 11] = fs
                .iter()
                .map(|f| f * 0.25)
                .fold(f32::INFINITY, f32::min)
                .to_bits();
            o[b + 12] = fs
                .iter()
                .map(|f| f * 0.25)
                .fold(f32::NEG_INFINITY, f32::max)
                .to_bits();
            o[b + 13] = xs[..=k].iter().fold(0u32, |p, &x| p.wrapping_add(x));
            o[b + 14] = xs[..k].iter().fold(0u32, |p, &x| p.wrapping_add(x));
            o[b + 15] = ss[..k].iter().copied().fold(i32::MAX, i32::min) as u32;
        }
    }
    o
}

/// Runs `src` at SIMD8/16/32 over [`inputs`] (uniform and divergent) and compares every
/// result with `reference`; `names` names the 16 results of an invocation.
fn check(name: &str, src: &str, reference: fn(usize, &[u32]) -> Vec<u32>, names: &[&str]) {
    check_defined(
        name,
        src,
        |simd, a| reference(simd, a).into_iter().map(Some).collect(),
        names,
        N * 16,
    )
}

#[test]
fn builtins_vote_ballot_and_broadcast_match_cpu() {
    check_sized(
        "subgroup_vote",
        VOTE,
        |simd, size, a| {
            vote_reference(simd, size, a)
                .into_iter()
                .map(Some)
                .collect()
        },
        &[
            "SubgroupSize",
            "SubgroupLocalInvocationId",
            "SubgroupId",
            "NumSubgroups",
            "broadcast(x, 3)",
            "SubgroupLtMask",
            "SubgroupGeMask",
            "elect",
            "all",
            "any",
            "all_equal",
            "ballot.x",
            "ballot.yzw",
            "ballot bit count",
            "broadcast_first",
            "ballot exclusive bit count",
        ],
        N * 16,
        true,
    );
}

#[test]
fn reductions_and_scans_match_cpu() {
    check(
        "subgroup_arith",
        ARITH,
        arith_reference,
        &[
            "add",
            "min (int)",
            "max (int)",
            "min (uint)",
            "max (uint)",
            "and",
            "or",
            "xor",
            "mul (int)",
            "add (float)",
            "mul (float)",
            "min (float)",
            "max (float)",
            "inclusive add",
            "exclusive add",
            "exclusive min (int)",
        ],
    );
}

const SHUFFLE: &str = "#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_quad : require
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer A { uint a[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i];
    uint b = i * 16u;
    if ((x & 3u) != 0u) {
        o[b + 0u] = subgroupShuffle(x, x % 32u);
        o[b + 1u] = subgroupShuffleXor(x, 5u);
        o[b + 2u] = subgroupShuffleUp(x, 3u);
        o[b + 3u] = subgroupShuffleDown(x, 2u);
        o[b + 4u] = subgroupQuadBroadcast(x, 2u);
        o[b + 5u] = subgroupQuadSwapHorizontal(x);
        o[b + 6u] = subgroupQuadSwapVertical(x);
        o[b + 7u] = subgroupQuadSwapDiagonal(x);
        o[b + 8u] = subgroupShuffle(x, gl_SubgroupInvocationID ^ 1u);
        o[b + 9u] = subgroupShuffle(x, 1u);
        o[b + 10u] = subgroupShuffleXor(uvec2(x, x + 7u), 1u).y;
        o[b + 11u] = floatBitsToUint(subgroupShuffleDown(float(x) * 0.5, 1u));
    }
}";

/// Shuffle results, None where the source invocation is inactive or outside the subgroup
/// (undefined by the specification).
fn shuffle_reference(simd: usize, a: &[u32]) -> Vec<Option<u32>> {
    let mut o = vec![Some(0u32); N * 16];
    for sg in subgroups(simd, |i| branch(a[i])) {
        let src = |id: i64, f: &dyn Fn(u32) -> u32| -> Option<u32> {
            sg.iter()
                .find(|&&(l, _)| l as i64 == id)
                .map(|&(_, i)| f(a[i]))
        };
        for &(lane, i) in &sg {
            let b = i * 16;
            let l = lane as i64;
            let x = a[i];
            let id = |v: u32| v as i64;
            o[b] = src(id(x % 32), &|v| v);
            o[b + 1] = src(l ^ 5, &|v| v);
            o[b + 2] = src(l - 3, &|v| v);
            o[b + 3] = src(l + 2, &|v| v);
            o[b + 4] = src((l & !3) | 2, &|v| v);
            o[b + 5] = src(l ^ 1, &|v| v);
            o[b + 6] = src(l ^ 2, &|v| v);
            o[b + 7] = src(l ^ 3, &|v| v);
            o[b + 8] = src(l ^ 1, &|v| v);
            o[b + 9] = src(1, &|v| v);
            o[b + 10] = src(l ^ 1, &|v| v + 7);
            o[b + 11] = src(l + 1, &|v| (v as f32 * 0.5).to_bits());
        }
    }
    o
}

/// As [`check`], for results that may be undefined (None): those are not compared, and at
/// least `min_defined` results per run must be defined.
fn check_defined(
    name: &str,
    src: &str,
    reference: impl Fn(usize, &[u32]) -> Vec<Option<u32>>,
    names: &[&str],
    min_defined: usize,
) {
    check_sized(
        name,
        src,
        |simd, _, a| reference(simd, a),
        names,
        min_defined,
        false,
    )
}

/// Runs `src` at SIMD8/16/32 with `SubgroupSize` the reported 32 (the default stage rule: the
/// invocations from the width up to 32 are never active) and, when `both`, also with the size
/// equal to the width (a required size); `reference(simd, size, inputs)` gives the results.
fn check_sized(
    name: &str,
    src: &str,
    reference: impl Fn(usize, u32, &[u32]) -> Vec<Option<u32>>,
    names: &[&str],
    min_defined: usize,
    both: bool,
) {
    for simd in [8usize, 16, 32] {
        let mut modes = vec![(SubgroupWidth::Reported, 32)];
        if both && simd < 32 {
            modes.push((SubgroupWidth::Required(simd as u32), simd as u32));
        }
        for (mode, size) in modes {
            let build = Build {
                env: "vulkan1.1",
                subgroup: mode,
                ..Build::default()
            };
            let Some(k) = kernel_with(name, src, simd as u32, &build) else {
                return;
            };
            check_kernel(&k, simd, size, &reference, names, min_defined);
        }
    }
}

fn check_kernel(
    k: &Kernel,
    simd: usize,
    size: u32,
    reference: &impl Fn(usize, u32, &[u32]) -> Vec<Option<u32>>,
    names: &[&str],
    min_defined: usize,
) {
    for divergent in [false, true] {
        let a = inputs(divergent);
        let out = run_buffers(k, [GROUPS as u32, 1, 1], &[a.clone(), vec![0; N * 16]]);
        let want = reference(simd, size, &a);
        let mut checked = 0;
        for (j, (&g, w)) in out[1].iter().zip(&want).enumerate() {
            let (i, f) = (j / 16, j % 16);
            let Some(w) = *w else { continue };
            checked += 1;
            assert_eq!(
                g,
                w,
                "SIMD{simd} (SubgroupSize {size}) {} invocation {i} (lane {}) {}: got {g:#x}, \
                 want {w:#x}, input {:#x}\n{}",
                if divergent { "divergent" } else { "uniform" },
                (i % LOCAL) % simd,
                names.get(f).unwrap_or(&"unused"),
                a[i],
                k.asm
            );
        }
        // Most results are defined: the comparison is not vacuous.
        assert!(
            checked >= min_defined,
            "SIMD{simd}: only {checked} results defined"
        );
    }
}

#[test]
fn shuffles_and_quad_operations_match_cpu() {
    check_defined(
        "subgroup_shuffle",
        SHUFFLE,
        shuffle_reference,
        &[
            "shuffle(x, x % 32)",
            "shuffle_xor 5",
            "shuffle_up 3",
            "shuffle_down 2",
            "quad_broadcast 2",
            "quad_swap_horizontal",
            "quad_swap_vertical",
            "quad_swap_diagonal",
            "shuffle(x, id ^ 1)",
            "shuffle(x, 1)",
            "shuffle_xor uvec2 .y",
            "shuffle_down float",
        ],
        N * 12,
    );
}

const CLUSTERED: &str = "#version 450
#extension GL_KHR_shader_subgroup_clustered : require
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer A { uint a[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i];
    int s = int(x) - 128;
    uint b = i * 16u;
    if ((x & 3u) != 0u) {
        o[b + 0u] = subgroupClusteredAdd(x, 1u);
        o[b + 1u] = subgroupClusteredAdd(x, 2u);
        o[b + 2u] = subgroupClusteredAdd(x, 4u);
        o[b + 3u] = subgroupClusteredAdd(x, 8u);
        o[b + 4u] = subgroupClusteredAdd(x, 16u);
        o[b + 5u] = subgroupClusteredAdd(x, 32u);
        o[b + 6u] = uint(subgroupClusteredMin(s, 4u));
        o[b + 7u] = subgroupClusteredOr(x, 8u);
        o[b + 8u] = floatBitsToUint(subgroupClusteredMax(float(s), 2u));
        o[b + 9u] = subgroupClusteredXor(x, 16u);
    }
}";

/// Clustered results; None where the cluster is wider than the subgroup (undefined).
fn clustered_reference(simd: usize, a: &[u32]) -> Vec<Option<u32>> {
    let mut o = vec![Some(0u32); N * 16];
    for sg in subgroups(simd, |i| branch(a[i])) {
        for &(lane, i) in &sg {
            let b = i * 16;
            let cluster = |size: usize| {
                sg.iter()
                    .filter(move |&&(l, _)| l / size == lane / size)
                    .map(|&(_, j)| a[j])
            };
            let def = |size: usize, v: u32| (size <= simd).then_some(v);
            for (f, size) in [1usize, 2, 4, 8, 16, 32].into_iter().enumerate() {
                o[b + f] = def(size, cluster(size).fold(0u32, |p, x| p.wrapping_add(x)));
            }
            o[b + 6] = Some(cluster(4).map(|x| x as i32 - 128).min().unwrap() as u32);
            o[b + 7] = Some(cluster(8).fold(0, |p, x| p | x));
            o[b + 8] = Some(
                cluster(2)
                    .map(|x| (x as i32 - 128) as f32)
                    .fold(f32::NEG_INFINITY, f32::max)
                    .to_bits(),
            );
            o[b + 9] = def(16, cluster(16).fold(0, |p, x| p ^ x));
        }
    }
    o
}

#[test]
fn clustered_reductions_match_cpu() {
    check_defined(
        "subgroup_clustered",
        CLUSTERED,
        clustered_reference,
        &[
            "clustered add 1",
            "clustered add 2",
            "clustered add 4",
            "clustered add 8",
            "clustered add 16",
            "clustered add 32",
            "clustered min 4 (int)",
            "clustered or 8",
            "clustered max 2 (float)",
            "clustered xor 16",
        ],
        N * 12,
    );
}

const LOOP: &str = "#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer A { uint a[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i];
    uint n = x % 7u;
    uint count = 0u;
    uint bits = 0u;
    uint first = 0u;
    for (uint k = 0u; ; k++) {
        if (k >= n) {
            break;
        }
        count += subgroupAdd(1u);
        bits ^= subgroupBallot(true).x;
        first += subgroupBroadcastFirst(k + x);
    }
    o[i * 3u] = count;
    o[i * 3u + 1u] = bits;
    o[i * 3u + 2u] = first;
}";

/// Subgroup operations in a loop that invocations leave after `x % 7` iterations.
#[test]
fn subgroup_operations_in_a_divergent_loop_match_cpu() {
    for simd in [8usize, 16, 32] {
        let Some(k) = kernel_env("subgroup_loop", LOOP, simd as u32, "vulkan1.1") else {
            return;
        };
        let a = inputs(true);
        let out = run_buffers(&k, [GROUPS as u32, 1, 1], &[a.clone(), vec![0; N * 3]]);
        let mut want = vec![0u32; N * 3];
        for sg in subgroups(simd, |_| true) {
            for &(_, i) in &sg {
                let n = a[i] % 7;
                for it in 0..n {
                    let act: Vec<(usize, usize)> =
                        sg.iter().copied().filter(|&(_, j)| a[j] % 7 > it).collect();
                    want[i * 3] += act.len() as u32;
                    want[i * 3 + 1] ^= act.iter().map(|&(l, _)| 1u32 << l).sum::<u32>();
                    want[i * 3 + 2] += it + a[act[0].1];
                }
            }
        }
        for i in 0..N {
            assert_eq!(
                &out[1][i * 3..i * 3 + 3],
                &want[i * 3..i * 3 + 3],
                "SIMD{simd} invocation {i} (lane {}), {} iterations: [active count sum, ballot \
                 xor, broadcast-first sum]\n{}",
                (i % LOCAL) % simd,
                a[i] % 7,
                k.asm
            );
        }
    }
}

/// SPIR-V 1.5 lets `OpGroupNonUniformBroadcast` take a dynamically uniform id
/// (`subgroupBroadcastDynamicId`): here the id depends on a buffer value and on the subgroup,
/// and stays below 8 so it names an active lane in every subgroup (the partial last thread
/// of a 40-wide workgroup has 8).
const DYNAMIC_BROADCAST: &str = "#version 450
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer A { uint a[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint id = (a[0] + gl_SubgroupID * 3u) % 8u;
    o[i] = subgroupBroadcast(a[i], id);
}";

#[test]
fn broadcast_with_a_dynamically_uniform_id_matches_cpu() {
    for simd in [8usize, 16, 32] {
        let Some(k) = kernel_env(
            "subgroup_dyn_broadcast",
            DYNAMIC_BROADCAST,
            simd as u32,
            "vulkan1.2",
        ) else {
            return;
        };
        let a = inputs(true);
        let out = run_buffers(&k, [GROUPS as u32, 1, 1], &[a.clone(), vec![0; N]]);
        for (i, &got) in out[1].iter().enumerate() {
            let (g, l) = (i / LOCAL, i % LOCAL);
            let s = l / simd;
            let id = (a[0] as usize + s * 3) % 8;
            let want = a[g * LOCAL + s * simd + id];
            assert_eq!(
                got, want,
                "SIMD{simd} invocation {i}: broadcast from lane {id} of subgroup {s}, input a[0] = {}\n{}",
                a[0], k.asm
            );
        }
    }
}
