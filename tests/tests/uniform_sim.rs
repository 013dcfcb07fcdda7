//! Uniform values (push constants, workgroup ids, arithmetic on them) computed once per
//! thread at exec size 1 with `WE_all`, on the simulated GPU at SIMD8/16/32, against a CPU
//! reference and against the same kernel with uniform values computed per channel
//! (`BackendOptions::no_uniform`). Skipped when glslangValidator is not installed.

mod sim_common;

use sim_common::*;

/// The uniform values `u` and `w` are computed inside a branch that channel 0 never takes
/// (odd invocations only) and inside a loop whose trip count differs per channel: channel 0
/// is disabled there, so they are only right if written with `WE_all`.
const UNIFORM: &str = "#version 450
layout(local_size_x = 16) in;
layout(push_constant) uniform P { uint a; uint b; float s; } pc;
layout(set=0, binding=0) buffer B { uint v[]; };
layout(set=0, binding=1) buffer F { float f[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = v[i];
    if ((i & 1u) == 1u) {
        uint u = pc.a * 3u + gl_WorkGroupID.x;
        uint w = (u ^ pc.b) >> 1u;
        x = x * w + u;
    }
    for (uint k = 0u; k < (i & 3u); k++) {
        uint t = (pc.b + k) * (gl_WorkGroupID.x + 5u);
        x += t;
    }
    v[i] = x;
    f[i] = f[i] * (pc.s * 2.0 + float(gl_NumWorkGroups.x));
}";

fn reference(i: u32, v: u32, f: f32, push: [u32; 3], groups: u32) -> (u32, f32) {
    let (a, b, s) = (push[0], push[1], f32::from_bits(push[2]));
    let wg = i / 16;
    let mut x = v;
    if i & 1 == 1 {
        let u = a.wrapping_mul(3).wrapping_add(wg);
        let w = (u ^ b) >> 1;
        x = x.wrapping_mul(w).wrapping_add(u);
    }
    for k in 0..(i & 3) {
        x = x.wrapping_add(b.wrapping_add(k).wrapping_mul(wg + 5));
    }
    (x, f * (s * 2.0 + groups as f32))
}

fn kernel_at(words: &[u32], simd: u32, no_uniform: bool) -> Kernel {
    let copts = CompileOptions {
        entry_point: "main".into(),
        bindings: (0..2)
            .map(|b| BindingSlot {
                set: 0,
                binding: b,
                bti: b + 1,
                count: 1,
            })
            .collect(),
        push_constant_range: (0, 12),
        ..Default::default()
    };
    let (shader, _) = compile_to_ir(words, &Target::gen9(), &copts).expect("front end");
    let opts = BackendOptions {
        no_uniform,
        ..options_at(simd)
    };
    let k = backend::compile(&shader, &opts).unwrap_or_else(|e| panic!("{e}\n{shader}"));
    assert_eq!(k.simd, simd);
    k
}

fn instructions(k: &Kernel) -> usize {
    k.asm.lines().filter(|l| l.starts_with("0x")).count()
}

#[test]
fn uniform_values_once_per_thread_match_cpu_under_divergence() {
    let Some(words) = glsl("uniform", UNIFORM) else {
        return;
    };
    let groups = 3u32;
    let n = 16 * groups as usize;
    let push = [0x1234_5677u32, 0x0F0F_1357, 1.5f32.to_bits()];
    let vi: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let fi: Vec<u32> = (0..n).map(|i| (i as f32 * 0.75 - 9.0).to_bits()).collect();
    for simd in [8, 16, 32] {
        let mut counts = Vec::new();
        for no_uniform in [false, true] {
            let k = kernel_at(&words, simd, no_uniform);
            let (out, _) = run_buffers_push(&k, [groups, 1, 1], &[vi.clone(), fi.clone()], &push);
            for i in 0..n {
                let (want_v, want_f) =
                    reference(i as u32, vi[i], f32::from_bits(fi[i]), push, groups);
                assert_eq!(
                    out[0][i], want_v,
                    "SIMD{simd} no_uniform={no_uniform} v[{i}] (input {:#x}, push {push:x?})\n{}",
                    vi[i], k.asm
                );
                assert_eq!(
                    f32::from_bits(out[1][i]),
                    want_f,
                    "SIMD{simd} no_uniform={no_uniform} f[{i}]\n{}",
                    k.asm
                );
            }
            counts.push((instructions(&k), k.asm.clone()));
        }
        let (uni, per_channel) = (&counts[0], &counts[1]);
        // The uniform products and sums run once per thread: exec size 1, WE_all.
        assert!(
            uni.1
                .lines()
                .any(|l| l.contains("(1)") && l.contains("WE_all") && l.contains("mul")),
            "SIMD{simd}: no uniform multiply at exec size 1\n{}",
            uni.1
        );
        assert!(
            !per_channel
                .1
                .lines()
                .any(|l| l.starts_with("0x") && l.contains("mul(1)")),
            "SIMD{simd}: no_uniform still computes a product once per thread\n{}",
            per_channel.1
        );
        assert!(
            uni.0 <= per_channel.0,
            "SIMD{simd}: {} instructions with uniform values once per thread, {} per channel",
            uni.0,
            per_channel.0
        );
    }
}
