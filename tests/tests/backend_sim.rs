//! The Gen9 back end end to end on the simulated GPU: GLSL compiled with glslangValidator,
//! through the front end, the middle passes and the back end at SIMD8/16/32, dispatched
//! through the simulated i915 (batch, binding table, CURBE per docs/dispatch-contract.md),
//! and compared with a CPU reference. Skipped when glslangValidator is not installed.

mod sim_common;

use sim_common::*;

const ARITH: &str = "#version 450
layout(local_size_x = 24) in;
layout(set=0, binding=0) buffer A { int a[]; };
layout(set=0, binding=1) buffer F { float f[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int x = a[i];
    a[i] = x * 7 - 3 + (x >> 2) + (x & 12) + max(x, 5) + abs(x - 40) + int(gl_WorkGroupID.x);
    float y = f[i];
    f[i] = y * 0.5 + 2.0 - floor(y * 0.25);
}";

#[test]
fn arithmetic_matches_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("arith", ARITH, simd) else {
            return;
        };
        let n = 24 * 3;
        let (g, data) = compute_setup(&[n as u64 * 4, n as u64 * 4]);
        let ai: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(37) % 101).collect();
        let fi: Vec<u32> = (0..n).map(|i| (i as f32 * 1.75 - 20.0).to_bits()).collect();
        g.write_u32s(data[0], 0, &ai);
        g.write_u32s(data[1], 0, &fi);
        dispatch(
            &g,
            &k,
            [3, 1, 1],
            &[(data[0], n as u64 * 4), (data[1], n as u64 * 4)],
        );
        let ao = g.read_u32s(data[0], 0, n);
        let fo = g.read_u32s(data[1], 0, n);
        for i in 0..n {
            let x = ai[i] as i32;
            let want =
                x * 7 - 3 + (x >> 2) + (x & 12) + x.max(5) + (x - 40).abs() + (i / 24) as i32;
            assert_eq!(ao[i] as i32, want, "SIMD{simd} int element {i}\n{}", k.asm);
            let y = f32::from_bits(fi[i]);
            let wf = y * 0.5 + 2.0 - (y * 0.25).floor();
            assert_eq!(f32::from_bits(fo[i]), wf, "SIMD{simd} float element {i}");
        }
    }
}

const LOOPS: &str = "#version 450
layout(local_size_x = 8, local_size_y = 4) in;
layout(set=0, binding=0) buffer B { uint v[]; };
void main() {
    uint i = gl_LocalInvocationIndex + gl_WorkGroupID.x * 32u;
    uint n = v[i] % 50u;
    uint acc = 0u;
    for (uint k = 0u; k < n; k++) {
        if ((k & 3u) == 1u) continue;
        if (acc > 1000u) break;
        acc += k * k;
    }
    if ((i & 1u) == 0u) { acc += 100000u; } else { acc += gl_LocalInvocationID.y * 10u; }
    v[i] = acc;
}";

#[test]
fn divergent_loops_match_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("loops", LOOPS, simd) else {
            return;
        };
        let n = 32 * 2;
        let (g, data) = compute_setup(&[n as u64 * 4]);
        let input: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2654435761) >> 7)
            .collect();
        g.write_u32s(data[0], 0, &input);
        dispatch(&g, &k, [2, 1, 1], &[(data[0], n as u64 * 4)]);
        let out = g.read_u32s(data[0], 0, n);
        for i in 0..n {
            let cnt = input[i] % 50;
            let mut acc = 0u32;
            for kk in 0..cnt {
                if kk & 3 == 1 {
                    continue;
                }
                if acc > 1000 {
                    break;
                }
                acc += kk * kk;
            }
            let local_y = (i as u32 % 32) / 8;
            if i & 1 == 0 {
                acc += 100000;
            } else {
                acc += local_y * 10;
            }
            assert_eq!(out[i], acc, "SIMD{simd} element {i}\n{}", k.asm);
        }
    }
}

const REDUCE: &str = "#version 450
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer B { uint v[]; };
layout(set=0, binding=1) buffer C { uint count; };
shared uint s[64];
void main() {
    uint l = gl_LocalInvocationID.x;
    s[l] = v[gl_GlobalInvocationID.x];
    barrier();
    for (uint st = 32u; st > 0u; st >>= 1u) {
        if (l < st) s[l] += s[l + st];
        barrier();
    }
    if (l == 0u) v[gl_WorkGroupID.x * 64u] = s[0];
    atomicAdd(count, 1u);
}";

#[test]
fn shared_memory_reduction_and_atomics_match_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("reduce", REDUCE, simd) else {
            return;
        };
        let n = 64 * 2;
        let (g, data) = compute_setup(&[n as u64 * 4, 64]);
        let input: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
        g.write_u32s(data[0], 0, &input);
        g.write_u32s(data[1], 0, &[0]);
        dispatch(&g, &k, [2, 1, 1], &[(data[0], n as u64 * 4), (data[1], 4)]);
        let out = g.read_u32s(data[0], 0, n);
        for grp in 0..2 {
            let want: u32 = input[grp * 64..grp * 64 + 64].iter().sum();
            assert_eq!(out[grp * 64], want, "SIMD{simd} group {grp}\n{}", k.asm);
        }
        assert_eq!(
            g.read_u32s(data[1], 0, 1)[0],
            n as u32,
            "SIMD{simd} atomic count"
        );
    }
}

const BUILTINS: &str = "#version 450
layout(local_size_x = 6, local_size_y = 3) in;
layout(set=0, binding=0) buffer B { int v[]; };
layout(set=0, binding=1) buffer F { float f[]; };
void main() {
    uint i = gl_GlobalInvocationID.y * 12u + gl_GlobalInvocationID.x;
    int a = v[i];
    int b = int(i % 7u) - 3;
    if (b == 0) b = 5;
    v[i] = (a / b) * 1000 + (a % b) * 100 + int(gl_LocalInvocationID.x) * 10 + int(gl_LocalInvocationID.y)
         + int(gl_NumWorkGroups.x) * 100000;
    float x = f[i];
    f[i] = sqrt(x) + 1.0 / (x + 1.0) + exp2(x * 0.125);
}";

#[test]
fn builtins_division_and_math_match_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("builtins", BUILTINS, simd) else {
            return;
        };
        // 2 x 1 groups of 6 x 3: global x in 0..12, y in 0..3.
        let n = 36;
        let (g, data) = compute_setup(&[n as u64 * 4, n as u64 * 4]);
        let vi: Vec<u32> = (0..n as i32).map(|i| (i * 37 - 500) as u32).collect();
        let fi: Vec<u32> = (0..n).map(|i| (i as f32 * 0.75).to_bits()).collect();
        g.write_u32s(data[0], 0, &vi);
        g.write_u32s(data[1], 0, &fi);
        dispatch(
            &g,
            &k,
            [2, 1, 1],
            &[(data[0], n as u64 * 4), (data[1], n as u64 * 4)],
        );
        let vo = g.read_u32s(data[0], 0, n);
        let fo = g.read_u32s(data[1], 0, n);
        for i in 0..n {
            let (gx, gy) = (i % 12, i / 12);
            let a = vi[i] as i32;
            let mut b = (i % 7) as i32 - 3;
            if b == 0 {
                b = 5;
            }
            // glslang emits OpSMod for %: the remainder takes the divisor's sign.
            let mut m = a % b;
            if m != 0 && (m < 0) != (b < 0) {
                m += b;
            }
            let want = (a / b) * 1000 + m * 100 + (gx % 6) as i32 * 10 + gy as i32 + 200000;
            assert_eq!(vo[i] as i32, want, "SIMD{simd} element {i}\n{}", k.asm);
            let x = f32::from_bits(fi[i]);
            let wf = x.sqrt() + 1.0 / (x + 1.0) + (x * 0.125).exp2();
            let got = f32::from_bits(fo[i]);
            assert!(
                (got - wf).abs() <= wf.abs() * 1e-5,
                "SIMD{simd} float {i}: {got} vs {wf}"
            );
        }
    }
}

const BITS: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer B { uint u[]; };
layout(set=0, binding=1) buffer F { float f[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = u[i];
    int off = int(i % 9u);
    int bits = int(i % 5u) * 7;
    u[i] = bitfieldExtract(x, off, min(bits, 32 - off)) ^ uint(bitfieldExtract(int(x), 3, 9))
         ^ bitfieldInsert(x, 0x5u, off, 3) ^ bitfieldInsert(0u, x, 0, 32);
    f[i] = ldexp(f[i], off - 4);
}";

#[test]
fn bitfields_and_ldexp_match_cpu() {
    fn ubfe(x: u32, off: u32, bits: u32) -> u32 {
        if bits == 0 {
            0
        } else {
            (x >> off) & (u32::MAX >> (32 - bits))
        }
    }
    fn bfi(base: u32, ins: u32, off: u32, bits: u32) -> u32 {
        let m = if bits == 32 {
            u32::MAX
        } else {
            ((1u32 << bits) - 1) << off
        };
        (base & !m) | ((ins << off) & m)
    }
    for simd in [8, 16, 32] {
        let Some(k) = kernel("bits", BITS, simd) else {
            return;
        };
        let n = 32;
        let (g, data) = compute_setup(&[n as u64 * 4, n as u64 * 4]);
        let ui: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0xF0F0_1234)
            .collect();
        let fi: Vec<u32> = (0..n).map(|i| (i as f32 * 1.5 - 7.0).to_bits()).collect();
        g.write_u32s(data[0], 0, &ui);
        g.write_u32s(data[1], 0, &fi);
        dispatch(
            &g,
            &k,
            [2, 1, 1],
            &[(data[0], n as u64 * 4), (data[1], n as u64 * 4)],
        );
        let uo = g.read_u32s(data[0], 0, n);
        let fo = g.read_u32s(data[1], 0, n);
        for i in 0..n {
            let x = ui[i];
            let off = (i % 9) as u32;
            let bits = ((i % 5) as u32 * 7).min(32 - off);
            let sbfe = (((x << (32 - 3 - 9)) as i32) >> (32 - 9)) as u32;
            let want = ubfe(x, off, bits) ^ sbfe ^ bfi(x, 5, off, 3) ^ bfi(0, x, 0, 32);
            assert_eq!(uo[i], want, "SIMD{simd} element {i}\n{}", k.asm);
            let wf = f32::from_bits(fi[i]) * 2f32.powi(off as i32 - 4);
            assert_eq!(f32::from_bits(fo[i]), wf, "SIMD{simd} float {i}");
        }
    }
}

const MULHI: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer B { uint u[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint a = u[2u * i], b = u[2u * i + 1u];
    uint hi, lo;
    umulExtended(a, b, hi, lo);
    int shi, slo;
    imulExtended(int(a), int(b), shi, slo);
    u[2u * i] = hi;
    u[2u * i + 1u] = uint(shi) ^ lo ^ uint(slo);
}";

#[test]
fn mul_high_matches_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("mulhi", MULHI, simd) else {
            return;
        };
        let n = 64;
        let (g, data) = compute_setup(&[n as u64 * 4]);
        let mut x = 0x1234_5678_9ABC_DEF0u64;
        let input: Vec<u32> = (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 32) as u32
            })
            .collect();
        g.write_u32s(data[0], 0, &input);
        dispatch(&g, &k, [2, 1, 1], &[(data[0], n as u64 * 4)]);
        let out = g.read_u32s(data[0], 0, n);
        for i in 0..n / 2 {
            let (a, b) = (input[2 * i], input[2 * i + 1]);
            let p = a as u64 * b as u64;
            let sp = (a as i32 as i64 * b as i32 as i64) as u64;
            assert_eq!(
                out[2 * i],
                (p >> 32) as u32,
                "SIMD{simd} umul_high {i}\n{}",
                k.asm
            );
            let want = (sp >> 32) as u32 ^ p as u32 ^ sp as u32;
            assert_eq!(out[2 * i + 1], want, "SIMD{simd} imul_high {i}");
        }
    }
}

const PRESSURE: &str = "#version 450
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer B { vec4 v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x * 10u;
    vec4 a0 = v[i], a1 = v[i + 1u], a2 = v[i + 2u], a3 = v[i + 3u], a4 = v[i + 4u];
    vec4 a5 = v[i + 5u], a6 = v[i + 6u], a7 = v[i + 7u], a8 = v[i + 8u], a9 = v[i + 9u];
    vec4 b0 = a0 * a1 + a2, b1 = a3 * a4 + a5, b2 = a6 * a7 + a8, b3 = a9 * a0 + a1;
    vec4 b4 = a2 * a3 + a4, b5 = a5 * a6 + a7, b6 = a8 * a9 + a0;
    v[i] = b0 * b1 + b2 * b3 + b4 * b5 + b6 + a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
}";

/// Runs the `PRESSURE` kernel on one group of 32 invocations and compares with the CPU.
fn check_pressure_kernel(k: &Kernel) {
    let n = 32 * 10 * 4;
    let scratch_bytes = 168 * k.scratch_size.max(1024) as u64;
    let (g, data) = compute_setup(&[n as u64 * 4, scratch_bytes]);
    let input: Vec<u32> = (0..n)
        .map(|i| ((i % 17) as f32 * 0.25 - 1.0).to_bits())
        .collect();
    g.write_u32s(data[0], 0, &input);
    if k.scratch_size > 0 {
        dispatch_scratch(&g, k, [1, 1, 1], &[(data[0], n as u64 * 4)], 0x200_0000);
    } else {
        dispatch(&g, k, [1, 1, 1], &[(data[0], n as u64 * 4)]);
    }
    let out = g.read_u32s(data[0], 0, n);
    let f = |k: usize| f32::from_bits(input[k]);
    for inv in 0..32 {
        for c in 0..4 {
            let a: Vec<f32> = (0..10).map(|j| f((inv * 10 + j) * 4 + c)).collect();
            let b0 = a[0] * a[1] + a[2];
            let b1 = a[3] * a[4] + a[5];
            let b2 = a[6] * a[7] + a[8];
            let b3 = a[9] * a[0] + a[1];
            let b4 = a[2] * a[3] + a[4];
            let b5 = a[5] * a[6] + a[7];
            let b6 = a[8] * a[9] + a[0];
            let mut want = b0 * b1 + b2 * b3 + b4 * b5 + b6;
            for x in &a {
                want += x;
            }
            let got = f32::from_bits(out[inv * 40 + c]);
            assert!(
                (got - want).abs() <= 1e-4 * want.abs().max(1.0),
                "SIMD{} invocation {inv} comp {c}: {got} vs {want}",
                k.simd
            );
        }
    }
}

#[test]
fn spilled_kernel_matches_cpu() {
    // In program order (no scheduling for pressure) the ten vec4 values of both SIMD16
    // halves are live at once: more than the register file.
    let build = Build {
        no_pressure_sched: true,
        ..Build::default()
    };
    let Some(k) = kernel_with("pressure", PRESSURE, 32, &build) else {
        return;
    };
    assert!(k.stats.spills > 0, "the test needs spills");
    assert!(k.scratch_size >= 1024 && k.scratch_size.is_power_of_two());
    check_pressure_kernel(&k);
}

/// Scheduled for register pressure, the same kernel runs one SIMD16 half after the other
/// and needs no spill at SIMD32; the results stay those of the CPU at every width.
#[test]
fn pressure_scheduled_kernel_does_not_spill_and_matches_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("pressure", PRESSURE, simd) else {
            return;
        };
        assert_eq!(
            (k.stats.spills, k.stats.fills, k.scratch_size),
            (0, 0, 0),
            "SIMD{simd}"
        );
        check_pressure_kernel(&k);
    }
}

const LOCAL_ARRAY: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer B { uint v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint t[12];
    for (uint k = 0u; k < 12u; k++) t[k] = v[i] * k + k;
    uint j = v[i] % 12u;
    t[j] += 1000u;
    t[(j + 5u) % 12u] ^= 0x55u;
    uint s = 0u;
    for (uint k = 0u; k < 12u; k++) s += t[(k * 7u + j) % 12u] * (k + 1u);
    v[i] = s;
}";

/// `LOCAL_ARRAY` on the CPU for input `x`.
fn local_array_cpu(x: u32) -> u32 {
    let mut t: Vec<u32> = (0..12u32)
        .map(|k| x.wrapping_mul(k).wrapping_add(k))
        .collect();
    let j = (x % 12) as usize;
    t[j] = t[j].wrapping_add(1000);
    t[(j + 5) % 12] ^= 0x55;
    let mut s = 0u32;
    for kk in 0..12usize {
        s = s.wrapping_add(t[(kk * 7 + j) % 12].wrapping_mul(kk as u32 + 1));
    }
    s
}

/// The twelve-word array in a register array at SIMD8 and SIMD16 (backend isel::private:
/// run-time reads as row gathers, run-time writes as a compare and a predicated move per
/// row), in scratch at SIMD32 (48 GRFs, over the quarter of the file) and with
/// `no_private_regs`: the CPU's results in each case.
#[test]
fn private_arrays_in_registers_and_in_scratch_match_cpu() {
    for simd in [8, 16, 32] {
        for no_private_regs in [false, true] {
            let build = Build {
                no_private_regs,
                ..Build::default()
            };
            let Some(k) = kernel_with("local_array", LOCAL_ARRAY, simd, &build) else {
                return;
            };
            let in_scratch = no_private_regs || simd == 32;
            assert_eq!(
                k.scratch_size >= 1024,
                in_scratch,
                "SIMD{simd} no_private_regs {no_private_regs}: scratch {}\n{}",
                k.scratch_size,
                k.asm
            );
            let n = 32;
            let (g, data) = compute_setup(&[n as u64 * 4, 168 * k.scratch_size.max(1024) as u64]);
            let input: Vec<u32> = (0..n as u32).map(|i| i * 13 + 5).collect();
            g.write_u32s(data[0], 0, &input);
            dispatch_scratch(&g, &k, [2, 1, 1], &[(data[0], n as u64 * 4)], 0x200_0000);
            let out = g.read_u32s(data[0], 0, n);
            for i in 0..n {
                assert_eq!(
                    out[i],
                    local_array_cpu(input[i]),
                    "SIMD{simd} no_private_regs {no_private_regs} element {i}\n{}",
                    k.asm
                );
            }
        }
    }
}

/// An eight-word array (32 GRFs at SIMD32: in registers at every width) first written in a
/// loop the compiler cannot unroll, then read and written at divergent indices under a
/// divergent `if` in a loop of divergent trip count, the value written in one iteration
/// read in the next.
const LOOP_ARRAY: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer B { uint v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = v[i];
    uint n = 8u + (x >> 31);
    uint t[8];
    for (uint k = 0u; k < n; k++) t[k] = x * (k + 1u);
    uint s = 0u;
    for (uint k = 0u; k < (x & 7u) + 3u; k++) {
        if (((x >> k) & 1u) != 0u)
            t[(x + k) & 7u] += s;
        s = s * 3u + t[(x * 5u + k) & 7u];
    }
    v[i] = s;
}";

fn loop_array_cpu(x: u32) -> u32 {
    let mut t: Vec<u32> = (0..8u32).map(|k| x.wrapping_mul(k + 1)).collect();
    let mut s = 0u32;
    for k in 0..(x & 7) + 3 {
        if (x >> k) & 1 != 0 {
            let j = (x.wrapping_add(k) & 7) as usize;
            t[j] = t[j].wrapping_add(s);
        }
        s = s
            .wrapping_mul(3)
            .wrapping_add(t[(x.wrapping_mul(5).wrapping_add(k) & 7) as usize]);
    }
    s
}

#[test]
fn register_arrays_in_divergent_loops_match_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("loop_array", LOOP_ARRAY, simd) else {
            return;
        };
        assert_eq!(k.scratch_size, 0, "SIMD{simd}: in registers\n{}", k.asm);
        assert!(k.asm.contains("VxH"), "SIMD{simd}: row gathers\n{}", k.asm);
        let n = 64;
        let (g, data) = compute_setup(&[n as u64 * 4]);
        let input: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(0x9E37_79B9) >> 7)
            .collect();
        g.write_u32s(data[0], 0, &input);
        dispatch(&g, &k, [4, 1, 1], &[(data[0], n as u64 * 4)]);
        let out = g.read_u32s(data[0], 0, n);
        for i in 0..n {
            assert_eq!(
                out[i],
                loop_array_cpu(input[i]),
                "SIMD{simd} element {i} (x = {:#x})\n{}",
                input[i],
                k.asm
            );
        }
    }
}

/// A private array of four words, read and written at run-time indices: small enough that
/// the middle end keeps it in values (passes/private.rs: selects over the four words), so
/// no scratch at all.
const SMALL_LOCAL_ARRAY: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer B { uint v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint t[4];
    for (uint k = 0u; k < 4u; k++) t[k] = v[i] * k + k;
    uint j = v[i] % 4u;
    t[j] += 1000u;
    t[(j + 1u) % 4u] ^= 0x55u;
    uint s = 0u;
    for (uint k = 0u; k < 4u; k++) s += t[(k * 3u + j) % 4u] * (k + 1u);
    v[i] = s;
}";

#[test]
fn small_private_arrays_in_values_match_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("small_local_array", SMALL_LOCAL_ARRAY, simd) else {
            return;
        };
        assert_eq!(k.scratch_size, 0, "SIMD{simd}: no scratch\n{}", k.asm);
        let n = 32;
        let (g, data) = compute_setup(&[n as u64 * 4]);
        let input: Vec<u32> = (0..n as u32).map(|i| i * 13 + 5).collect();
        g.write_u32s(data[0], 0, &input);
        dispatch(&g, &k, [2, 1, 1], &[(data[0], n as u64 * 4)]);
        let out = g.read_u32s(data[0], 0, n);
        for i in 0..n {
            let x = input[i];
            let mut t: Vec<u32> = (0..4u32)
                .map(|k| x.wrapping_mul(k).wrapping_add(k))
                .collect();
            let j = (x % 4) as usize;
            t[j] = t[j].wrapping_add(1000);
            t[(j + 1) % 4] ^= 0x55;
            let mut s = 0u32;
            for kk in 0..4usize {
                s = s.wrapping_add(t[(kk * 3 + j) % 4].wrapping_mul(kk as u32 + 1));
            }
            assert_eq!(out[i], s, "SIMD{simd} element {i}\n{}", k.asm);
        }
    }
}

const FREXP: &str = "#version 450
layout(local_size_x = 8) in;
layout(set=0, binding=0) buffer F { float f[]; };
layout(set=0, binding=1) buffer E { int e[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int ex;
    f[i] = frexp(f[i], ex);
    e[i] = ex;
}";

#[test]
fn frexp_matches_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("frexp", FREXP, simd) else {
            return;
        };
        let vals = [
            0.0f32, 1.0, -1.0, 0.75, 3.0, -1000.5, 1e-20, 6.5e10, 0.1, -0.0, 2.0, 7.0, 1e30, -3e-5,
            42.0, 0.5,
        ];
        let n = vals.len();
        let (g, data) = compute_setup(&[n as u64 * 4, n as u64 * 4]);
        let fi: Vec<u32> = vals.iter().map(|v| v.to_bits()).collect();
        g.write_u32s(data[0], 0, &fi);
        dispatch(
            &g,
            &k,
            [2, 1, 1],
            &[(data[0], n as u64 * 4), (data[1], n as u64 * 4)],
        );
        let fo = g.read_u32s(data[0], 0, n);
        let eo = g.read_u32s(data[1], 0, n);
        for (i, &x) in vals.iter().enumerate() {
            let (m, e) = if x == 0.0 {
                (x, 0)
            } else {
                let e = ((x.to_bits() >> 23) & 0xFF) as i32 - 126;
                (x / 2f32.powi(e), e)
            };
            assert_eq!(
                f32::from_bits(fo[i]).to_bits(),
                m.to_bits(),
                "SIMD{simd} {x}\n{}",
                k.asm
            );
            assert_eq!(eo[i] as i32, e, "SIMD{simd} exponent of {x}");
        }
    }
}

/// Regression (Amber cf_do_while, cf_loops_in_branches): a value defined in a loop and read
/// after it (the loop's result) must stay live through the whole loop, since lanes that
/// left keep it while the others run the body again; it once shared a GRF with a
/// temporary of the body.
const LOOP_RESULT: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer B { int v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int x = v[i];
    int c = 0;
    int w = x;
    do { w = w / 2; c++; } while (w != 0);
    int s = 0;
    if (x > 0) {
        for (int k = 0; k < x % 17; ++k) s += k ^ x;
    } else {
        int k = 0;
        while (k < (-x) % 13) { s -= k; ++k; }
    }
    v[i] = c * 100000 + s;
}";

#[test]
fn loop_results_survive_divergent_iterations() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("loopresult", LOOP_RESULT, simd) else {
            return;
        };
        let n = 64;
        let (g, data) = compute_setup(&[n as u64 * 4]);
        let input: Vec<i32> = (0..n as i32).map(|i| (i * 37 + 11) % 101 - 50).collect();
        let words: Vec<u32> = input.iter().map(|&x| x as u32).collect();
        g.write_u32s(data[0], 0, &words);
        dispatch(&g, &k, [4, 1, 1], &[(data[0], n as u64 * 4)]);
        let out = g.read_u32s(data[0], 0, n);
        for i in 0..n {
            let x = input[i];
            let (mut w, mut c) = (x, 0);
            loop {
                w /= 2;
                c += 1;
                if w == 0 {
                    break;
                }
            }
            let mut s = 0;
            if x > 0 {
                for kk in 0..x % 17 {
                    s += kk ^ x;
                }
            } else {
                for kk in 0..(-x) % 13 {
                    s -= kk;
                }
            }
            assert_eq!(
                out[i] as i32,
                c * 100000 + s,
                "SIMD{simd} element {i}\n{}",
                k.asm
            );
        }
    }
}

/// Regression (Amber atomic_compswap_claim): OpAtomicCompareExchange's operands are
/// Pointer, Scope, Equal, Unequal, Value, Comparator; the front end once read one past.
const COMPSWAP: &str = "#version 450
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer L { uint owner[]; };
layout(set=0, binding=1) buffer W { uint wins; uint prevs[]; };
void main() {
    uint id = gl_GlobalInvocationID.x + 1u;
    uint prev = atomicCompSwap(owner[gl_GlobalInvocationID.x & 7u], 0u, id);
    if (prev == 0u) atomicAdd(wins, 1u);
    // A comparator that never matches leaves the value alone and returns it.
    prevs[gl_GlobalInvocationID.x] = atomicCompSwap(owner[8u + (gl_GlobalInvocationID.x & 3u)], 0xdeadu, id);
}";

#[test]
fn atomic_compare_exchange_matches_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("compswap", COMPSWAP, simd) else {
            return;
        };
        let n = 64;
        let (g, data) = compute_setup(&[12 * 4, 4 + n as u64 * 4]);
        let owner: Vec<u32> = (0..12).map(|i| if i < 8 { 0 } else { 1000 + i }).collect();
        g.write_u32s(data[0], 0, &owner);
        g.write_u32s(data[1], 0, &[0]);
        dispatch(
            &g,
            &k,
            [2, 1, 1],
            &[(data[0], 12 * 4), (data[1], 4 + n as u64 * 4)],
        );
        let o = g.read_u32s(data[0], 0, 12);
        let w = g.read_u32s(data[1], 0, 1 + n);
        assert_eq!(w[0], 8, "SIMD{simd}: one winner per slot\n{}", k.asm);
        for (s, &id) in o.iter().enumerate().take(8) {
            assert!(
                (1..=n as u32).contains(&id) && (id - 1) & 7 == s as u32,
                "SIMD{simd} slot {s} owner {id}"
            );
        }
        for (s, &v) in o.iter().enumerate().skip(8) {
            assert_eq!(v, 1000 + s as u32, "SIMD{simd} untouched slot {s}");
        }
        for i in 0..n {
            assert_eq!(w[1 + i], 1000 + 8 + (i as u32 & 3), "SIMD{simd} prev {i}");
        }
    }
}

/// fma() is one 3-source MAD (Align16): vector, replicated-scalar (the workgroup id),
/// immediate (moved to a register) and negated/absolute operands.
const FMA: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer F { float f[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float x = f[2u * i], y = f[2u * i + 1u];
    float w = float(gl_WorkGroupID.x) + 0.5;
    f[2u * i] = fma(x, y, w) + fma(-x, abs(y), 1.25);
    f[2u * i + 1u] = fma(w, x, y);
}";

#[test]
fn fma_is_one_mad_and_matches_cpu() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("fma", FMA, simd) else {
            return;
        };
        assert!(k.asm.contains("mad("), "SIMD{simd}: no MAD\n{}", k.asm);
        let n = 64;
        let (g, data) = compute_setup(&[n as u64 * 8]);
        let input: Vec<f32> = (0..2 * n)
            .map(|i| ((i * 7919) % 211) as f32 * 0.173 - 17.0)
            .collect();
        g.write_u32s(
            data[0],
            0,
            &input.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        );
        dispatch(&g, &k, [4, 1, 1], &[(data[0], n as u64 * 8)]);
        let out = g.read_u32s(data[0], 0, 2 * n);
        // Vulkan lets fma be fused or a multiply then an add: accept either rounding.
        let fma_either = |a: f32, b: f32, c: f32| [a.mul_add(b, c), a * b + c];
        for i in 0..n {
            let (x, y) = (input[2 * i], input[2 * i + 1]);
            let w = (i / 16) as f32 + 0.5;
            let got0 = f32::from_bits(out[2 * i]);
            let ok0 = fma_either(x, y, w)
                .iter()
                .any(|&p| fma_either(-x, y.abs(), 1.25).iter().any(|&q| p + q == got0));
            assert!(
                ok0,
                "SIMD{simd} element {i}: {got0} for x={x} y={y} w={w}\n{}",
                k.asm
            );
            let got1 = f32::from_bits(out[2 * i + 1]);
            assert!(
                fma_either(w, x, y).contains(&got1),
                "SIMD{simd} element {i}: {got1} for x={x} y={y} w={w}"
            );
        }
    }
}

/// Regression (Amber mem_buffer_array_sets): an array of blocks is a descriptor array whose
/// element k is its own buffer at binding-table entry first + k (the dispatch contract); the
/// front end once read it as one buffer with a 16-byte element stride. A dynamic index is
/// refused with a clear error until the dynamic-indexing features exist.
const DESC_ARRAY: &str = "#version 450
layout(local_size_x = 8) in;
layout(set=0, binding=0) buffer Arr { int v[8]; } arr[3];
layout(set=1, binding=0) buffer Out { int o[24]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    o[i] = arr[0].v[i];
    o[8u + i] = arr[1].v[i] * 2;
    o[16u + i] = arr[2].v[7u - i] * 3;
}";

#[test]
fn descriptor_array_elements_are_separate_buffers() {
    let Some(words) = glsl("descarray", DESC_ARRAY) else {
        return;
    };
    let slots = vec![
        BindingSlot {
            set: 0,
            binding: 0,
            bti: 1,
            count: 1,
        },
        BindingSlot {
            set: 1,
            binding: 0,
            bti: 4,
            count: 1,
        },
    ];
    let copts = CompileOptions {
        entry_point: "main".into(),
        bindings: slots.clone(),
        ..Default::default()
    };
    let (shader, uses) = compile_to_ir(&words, &Target::gen9(), &copts).unwrap();
    let mut btis: Vec<u32> = uses.iter().map(|u| u.bti).collect();
    btis.sort_unstable();
    assert_eq!(btis, [1, 2, 3, 4], "{uses:?}");
    for simd in [8, 16] {
        let k = backend::compile(&shader, &options_at(simd)).unwrap();
        let (g, data) = compute_setup(&[32, 32, 32, 96]);
        for (b, base) in [(0usize, 100i32), (1, -200), (2, 300)] {
            let v: Vec<u32> = (0..8).map(|i| (base + i * 7) as u32).collect();
            g.write_u32s(data[b], 0, &v);
        }
        dispatch(
            &g,
            &k,
            [1, 1, 1],
            &[(data[0], 32), (data[1], 32), (data[2], 32), (data[3], 96)],
        );
        let o = g.read_u32s(data[3], 0, 24);
        for i in 0..8 {
            assert_eq!(o[i] as i32, 100 + i as i32 * 7, "SIMD{simd} o[{i}]");
            assert_eq!(o[8 + i] as i32, (-200 + i as i32 * 7) * 2, "SIMD{simd}");
            assert_eq!(
                o[16 + i] as i32,
                (300 + (7 - i) as i32 * 7) * 3,
                "SIMD{simd}"
            );
        }
    }
    let dynamic = DESC_ARRAY.replace("arr[2].v[7u - i]", "arr[i % 3u].v[7u - i]");
    let words = glsl("descarraydyn", &dynamic).unwrap();
    let copts = CompileOptions {
        entry_point: "main".into(),
        bindings: slots,
        ..Default::default()
    };
    // A run-time index becomes an indexed buffer space (tests/tests/descriptor_sim.rs runs
    // such kernels).
    let (shader, _) = compile_to_ir(&words, &Target::gen9(), &copts).unwrap();
    assert!(shader.to_string().contains("ssbo[1+%"), "{shader}");
}

/// `a * b + c` may become one MAD; a `precise` one (SPIR-V NoContraction) may not. Half of
/// the lanes have c = -(a * b rounded), where the two differ: a multiply then an add gives
/// exactly 0, a fused multiply-add the rounding error of the product.
const CONTRACT: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer F { float f[]; };
layout(set=0, binding=1) buffer O { float o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float a = f[3u * i], b = f[3u * i + 1u], c = f[3u * i + 2u];
    float r = a * b + c;
    precise float p = a * b + c;
    o[2u * i] = r;
    o[2u * i + 1u] = p;
}";

#[test]
fn multiply_add_fuses_unless_no_contraction() {
    for simd in [8, 16, 32] {
        let Some(k) = kernel("contract", CONTRACT, simd) else {
            return;
        };
        // SIMD32 float instructions are two SIMD16 halves.
        let halves = if simd == 32 { 2 } else { 1 };
        let mads = k.asm.lines().filter(|l| l.contains(" mad(")).count();
        assert_eq!(
            mads, halves,
            "SIMD{simd}: one fused, one precise\n{}",
            k.asm
        );
        let n = 64;
        let (g, data) = compute_setup(&[n as u64 * 12, n as u64 * 8]);
        let mut input = Vec::new();
        for i in 0..n {
            let a = 1.0 + (i as f32) * 0.013_7;
            let b = 3.0 - (i as f32) * 0.007_3;
            let c = if i % 2 == 0 {
                -(a * b)
            } else {
                0.25 * i as f32
            };
            input.extend([a, b, c]);
        }
        g.write_u32s(
            data[0],
            0,
            &input.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        );
        dispatch(
            &g,
            &k,
            [4, 1, 1],
            &[(data[0], n as u64 * 12), (data[1], n as u64 * 8)],
        );
        let out = g.read_u32s(data[1], 0, 2 * n);
        let mut fused_lanes = 0;
        for i in 0..n {
            let (a, b, c) = (input[3 * i], input[3 * i + 1], input[3 * i + 2]);
            let (r, p) = (f32::from_bits(out[2 * i]), f32::from_bits(out[2 * i + 1]));
            // Vulkan: a contractible a * b + c is either rounding.
            assert!(
                r == a.mul_add(b, c) || r == a * b + c,
                "SIMD{simd} element {i}: {r} for a={a} b={b} c={c}"
            );
            // NoContraction: the product is rounded before the add.
            assert_eq!(
                p.to_bits(),
                (a * b + c).to_bits(),
                "SIMD{simd} element {i}: precise {p} for a={a} b={b} c={c}"
            );
            fused_lanes += usize::from(r != a * b + c);
        }
        // The inputs make the two roundings differ in some lanes, so the MAD is observed.
        assert!(
            fused_lanes > 0,
            "SIMD{simd}: no lane shows the fused rounding"
        );
    }
}

/// A 64-bit atomic on a descriptor-array element at an index held in a scalar register (the
/// workgroup id) picks the element's address and size once per thread: `mov(1)`s predicated
/// on a `cmp(1)` per element, not a full-width copy per SIMD8 piece per element.
#[test]
fn int64_atomic_at_a_uniform_array_index_picks_its_address_as_scalars() {
    const SRC: &str = "#version 450
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer A { uint64_t v[]; } a[4];
layout(set = 0, binding = 1) buffer R { uint64_t ret[]; };
void main() {
    uint g = gl_WorkGroupID.x;
    uint j = gl_LocalInvocationID.x;
    ret[g * 16u + j] = atomicAdd(a[g].v[j], uint64_t(j + 1u));
}";
    for simd in [8, 16, 32] {
        let Some(k) = kernel("int64_atomic_uniform_index", SRC, simd) else {
            return;
        };
        let wide_picks: Vec<&str> = k
            .asm
            .lines()
            .filter(|l| {
                l.contains("(+f0.0) mov(") && !l.contains("mov(1)") && l.contains("<0,1,0>UD")
            })
            .collect();
        let scalar_picks = k
            .asm
            .lines()
            .filter(|l| l.contains("(+f0.0) mov(1)"))
            .count();
        assert!(
            wide_picks.is_empty() && scalar_picks == 3 * 3,
            "SIMD{simd}: full-width predicated moves {wide_picks:?}, scalar ones {scalar_picks} \
             (want 3 per element past the first: address low, high, size)\n{}",
            k.asm
        );
    }
}
