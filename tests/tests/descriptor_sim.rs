//! Descriptor arrays indexed at run time on the simulated GPU at SIMD8/16/32: a
//! dynamically uniform index (one message through the `a0` descriptor) and a `NonUniform`
//! index (the loop over the distinct indices of a subgroup), for loads, stores and
//! atomics, in uniform and divergent control flow, compared with a CPU model written here.
//! The array `arr[3]` is bindings 0..2 (binding-table entries 1..3), the output binding 3.
//! Skipped when glslangValidator is not installed.

mod sim_common;

use sim_common::*;

const LOCAL: usize = 40;
const N: usize = 64;

/// Deterministic array contents: element `e` of buffer `k`.
fn arr_init() -> Vec<Vec<u32>> {
    (0..3u32)
        .map(|k| (0..N as u32).map(|e| 1000 * (k + 1) + e).collect())
        .collect()
}

fn with_out(out: Vec<u32>) -> Vec<Vec<u32>> {
    let mut v = arr_init();
    v.push(out);
    v
}

/// Index pattern of invocation `i`: differs between neighbouring invocations so that
/// every subgroup holds several distinct indices (and some subgroups hold all three).
fn pick(i: usize) -> usize {
    (i * 7 / 3) % 3
}

const NONUNIFORM_LOAD: &str = "#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer Arr { uint v[]; } arr[3];
layout(set=0, binding=3) buffer O { uint o[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    uint k = (i * 7u / 3u) % 3u;
    o[i] = arr[nonuniformEXT(k)].v[i];
    if ((i & 3u) == 1u) {
        o[i + 40u] = arr[nonuniformEXT(2u - k)].v[i + 1u];
    }
}";

#[test]
fn nonuniform_index_loads_each_invocations_own_buffer() {
    let arr = arr_init();
    at_each_simd(
        "nonuniform_load",
        NONUNIFORM_LOAD,
        &Build::default(),
        [1, 1, 1],
        &with_out(vec![0; 2 * LOCAL]),
        |simd, _, out| {
            for i in 0..LOCAL {
                let k = pick(i);
                assert_eq!(out[3][i], arr[k][i], "SIMD{simd} invocation {i} index {k}");
                let want = if i & 3 == 1 { arr[2 - k][i + 1] } else { 0 };
                assert_eq!(
                    out[3][i + LOCAL],
                    want,
                    "SIMD{simd} invocation {i} (divergent) index {}",
                    2 - k
                );
            }
        },
    );
}

const NONUNIFORM_STORE_ATOMIC: &str = "#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer Arr { uint v[]; } arr[3];
layout(set=0, binding=3) buffer O { uint o[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    uint k = (i * 7u / 3u) % 3u;
    arr[nonuniformEXT(k)].v[i] = i + 7u;
    o[i] = atomicAdd(arr[nonuniformEXT(k)].v[63], 1u) < 64u ? 1u : 0u;
}";

#[test]
fn nonuniform_index_stores_and_atomics_reach_each_invocations_buffer() {
    let mut init = with_out(vec![0; LOCAL]);
    for a in init.iter_mut().take(3) {
        a[63] = 0;
    }
    at_each_simd(
        "nonuniform_store_atomic",
        NONUNIFORM_STORE_ATOMIC,
        &Build::default(),
        [1, 1, 1],
        &init,
        |simd, _, out| {
            let mut count = [0u32; 3];
            for i in 0..LOCAL {
                count[pick(i)] += 1;
            }
            for (k, buf) in out.iter().take(3).enumerate() {
                for e in 0..LOCAL {
                    let want = if pick(e) == k {
                        e as u32 + 7
                    } else {
                        init[k][e]
                    };
                    assert_eq!(buf[e], want, "SIMD{simd} buffer {k} element {e}");
                }
                assert_eq!(buf[63], count[k], "SIMD{simd} atomic count of buffer {k}");
            }
            assert!(out[3].iter().all(|&x| x == 1), "SIMD{simd}: {:?}", out[3]);
        },
    );
}

const UNIFORM_INDEX: &str = "#version 450
layout(local_size_x = 40) in;
layout(set=0, binding=0) buffer Arr { uint v[]; } arr[3];
layout(set=0, binding=3) buffer O { uint o[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    // A dynamically uniform index from memory, and a loop counter; one in divergent flow.
    uint k = arr[0].v[60] % 3u;
    uint s = 0u;
    for (uint j = 0u; j < 3u; ++j) s += arr[j].v[i] * (j + 1u);
    o[i] = s;
    if ((i & 1u) == 0u) o[i + 40u] = arr[k].v[i];
    // An index past the array: clamped to the last element, never another binding.
    o[i + 80u] = arr[k + 5u].v[i];
}";

#[test]
fn uniform_index_from_memory_and_loop_counter() {
    let arr = arr_init();
    // arr[0].v[60] = 1060: k = 1060 % 3 = 1.
    let k = (arr[0][60] % 3) as usize;
    at_each_simd(
        "uniform_index",
        UNIFORM_INDEX,
        &Build::default(),
        [1, 1, 1],
        &with_out(vec![0; 3 * LOCAL]),
        |simd, _, out| {
            for i in 0..LOCAL {
                let s: u32 = (0..3).map(|j| arr[j][i] * (j as u32 + 1)).sum();
                assert_eq!(out[3][i], s, "SIMD{simd} invocation {i} loop sum");
                let want = if i & 1 == 0 { arr[k][i] } else { 0 };
                assert_eq!(
                    out[3][i + LOCAL],
                    want,
                    "SIMD{simd} invocation {i} index {k}"
                );
                assert_eq!(
                    out[3][i + 2 * LOCAL],
                    arr[2][i],
                    "SIMD{simd} invocation {i} clamp"
                );
            }
        },
    );
}
