//! Exact-width types end to end (issue #7, "Done when" item 2): GLSL compute shaders using
//! GL_EXT_shader_explicit_arithmetic_types(_int8/_int16/_int64/_float16/_float64),
//! GL_EXT_shader_16bit_storage and GL_EXT_shader_8bit_storage, compiled by glslangValidator at
//! test time, run through the loader on Ferrite's simulated GPU (at the SIMD width the
//! compiler picks, forced to SIMD8 and to SIMD32, and with `FERRITE_DEBUG=soft64` for the
//! workloads with doubles) and on lavapipe, each compared with a CPU reference.
//!
//! Workloads (fixed-seed inputs):
//! - `nbody`: n-body in doubles (64 bodies, 4 steps, sqrt and division in f64). Vulkan only
//!   requires fp64 to be as precise as fp32 and lets `a * b + c` be fused, so positions and
//!   velocities are compared with the CPU's f64 within a relative bound ([`NBODY_REL_TOL`]); the
//!   largest ulp distance Ferrite vs lavapipe (and native vs soft64) is printed.
//! - `matmul_f16`: 16x16 fp16 matrix multiply in f16vec4 arithmetic with f16 storage, inputs
//!   chosen so every product and partial sum is exact in f16: exact compare.
//! - `matmul_f16_f32acc`: the same from f16 storage with f32 accumulation, inputs whose sums
//!   leave f16's range but stay exact in f32: exact compare.
//! - `dot_i8`: int8/uint8 dot products with int32 accumulation (signed x signed, unsigned x
//!   unsigned, signed x unsigned, wrapping int8/uint8 sums, i8vec4/u8vec4 loads), -128/127/255
//!   extremes: exact compare.
//! - `bools`: comparisons of int8/16/32/64, float16/32/64 values (NaN, -0, inf among them)
//!   combined with &&, ||, ^^, ! in one expression, carried across if/else and a loop (phis),
//!   selected with ?: and stored as ints: exact compare.
//! - `convert`: every source type to every destination type among the 11 exact-width scalar
//!   types (121 pairs) on inputs where the conversion is defined. Integer results are exact.
//!   Float results follow Vulkan's conversion rule ("Floating-Point Conversion": an inexact
//!   value becomes one of its two neighbours, an overflow the largest finite value or infinity,
//!   denormals may be flushed to zero): the CPU gives round-to-nearest-even; a driver may give
//!   the other neighbour or a flushed zero, and every such result is printed.
//! - `packing`: the pack/unpack builtins that are OpBitcast between vectors of different
//!   component counts (pack64/unpack32, packUint2x32/unpackUint2x32, packFloat2x16/
//!   unpackFloat2x16, pack32/unpack8, pack32/unpack16, pack64/unpack16): exact compare.
//! - `bf16`: bfloat16 as ncnn's `bf16p` shaders handle it (issue 23): `uint(x) << 16` and
//!   `& 0xffff0000` unpacking, truncating and round-to-nearest-even packing, 16-bit storage,
//!   unpack16/pack32, a dynamic component index into an unpacked pair, a compare-and-swap
//!   loop storing half words that neighbouring invocations share, and bf16 / fp32 workgroup
//!   tree reductions: exact compare.
//!
//! The loader reads VK_DRIVER_FILES once per process, so each driver runs in a child process
//! (compute_common::run_child) that prints its results.

mod compute_common;

use std::collections::BTreeMap;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::{loader_env, Harness};
use half::f16;

/// The child test every driver's process runs.
const CHILD: &str = "child_runs_exact_width_workloads";

/// Relative bound of the n-body comparison with the CPU: |got - want| <= tol * (|want| + 1).
/// Vulkan allows much more (fp64 at fp32's precision); the observed error is ~1e-15.
const NBODY_REL_TOL: f64 = 1e-11;

// ---------------------------------------------------------------------------------------------
// Device

/// A context on a device with every exact-width feature this file uses enabled, after checking
/// the driver reports each one.
fn exact_width_ctx() -> Ctx {
    let h = Harness::with_instance_extensions(true, &[c"VK_KHR_get_physical_device_properties2"]);
    let pd = h.physical_device();
    let gp2 = ash::khr::get_physical_device_properties2::Instance::new(&h.entry, &h.instance);
    let mut f16i8 = vk::PhysicalDeviceShaderFloat16Int8Features::default();
    let mut s8 = vk::PhysicalDevice8BitStorageFeatures::default();
    let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut f16i8)
        .push_next(&mut s8)
        .push_next(&mut s16);
    // SAFETY: valid output chain for a live physical device.
    unsafe { gp2.get_physical_device_features2(pd, &mut f2) };
    let f = f2.features;
    let have = [
        ("shaderFloat64", f.shader_float64),
        ("shaderInt64", f.shader_int64),
        ("shaderInt16", f.shader_int16),
        ("shaderFloat16", f16i8.shader_float16),
        ("shaderInt8", f16i8.shader_int8),
        ("storageBuffer8BitAccess", s8.storage_buffer8_bit_access),
        ("storageBuffer16BitAccess", s16.storage_buffer16_bit_access),
    ];
    for (name, v) in have {
        assert_eq!(v, vk::TRUE, "the driver must report {name}");
    }
    let exts = [
        c"VK_KHR_storage_buffer_storage_class".as_ptr(),
        c"VK_KHR_16bit_storage".as_ptr(),
        c"VK_KHR_8bit_storage".as_ptr(),
        c"VK_KHR_shader_float16_int8".as_ptr(),
    ];
    let mut f16i8 = vk::PhysicalDeviceShaderFloat16Int8Features::default()
        .shader_float16(true)
        .shader_int8(true);
    let mut s8 = vk::PhysicalDevice8BitStorageFeatures::default()
        .storage_buffer8_bit_access(true)
        .uniform_and_storage_buffer8_bit_access(true);
    let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default()
        .storage_buffer16_bit_access(true)
        .uniform_and_storage_buffer16_bit_access(true);
    let features = vk::PhysicalDeviceFeatures::default()
        .shader_float64(true)
        .shader_int64(true)
        .shader_int16(true);
    let info = vk::DeviceCreateInfo::default()
        .enabled_extension_names(&exts)
        .enabled_features(&features)
        .push_next(&mut f16i8)
        .push_next(&mut s8)
        .push_next(&mut s16);
    Ctx::with_create_info(h, info)
}

/// A storage buffer holding `bytes`.
fn filled(c: &mut Ctx, bytes: &[u8]) -> usize {
    let b = c.buffer(bytes.len() as u64);
    c.buf(b).write_bytes(0, bytes);
    b
}

/// Little-endian bytes -> 32-bit words (zero-padded).
fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|ch| {
            let mut w = [0u8; 4];
            w[..ch.len()].copy_from_slice(ch);
            u32::from_le_bytes(w)
        })
        .collect()
}

/// Builds the kernel of `name` with `n` storage buffers bound to `bufs`, dispatches `groups`,
/// and reads back `out_bytes` bytes of buffer `out`.
struct Job<'a> {
    name: &'a str,
    src: &'a str,
    bufs: Vec<usize>,
    push: Vec<u8>,
    groups: (u32, u32),
    out: usize,
    out_bytes: usize,
}

fn run_job(c: &mut Ctx, j: Job) -> Result<Vec<u32>, String> {
    let code = spirv(j.name, Some(j.src));
    let k = c
        .kernel_with(
            &code,
            &vec![vk::DescriptorType::STORAGE_BUFFER; j.bufs.len()],
            j.push.len() as u32,
            &[],
            vk::PipelineCache::null(),
        )
        .map_err(|e| format!("vkCreateComputePipelines: {e:?}"))?;
    c.bind(k, &j.bufs);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        if !j.push.is_empty() {
            push(c, cb, k, &j.push);
        }
        dispatch(c, cb, j.groups.0, j.groups.1);
    })
    .map_err(|e| format!("submission: {e:?}"))?;
    Ok(words(&c.buf(j.out).read_bytes(j.out_bytes)))
}

// ---------------------------------------------------------------------------------------------
// 1. n-body in doubles

const NBODY_N: usize = 64;
const NBODY_STEPS: u32 = 4;
const NBODY_DT: f64 = 0.01;
const NBODY_EPS: f64 = 1e-3;

const NBODY_SRC: &str = r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Pos { f64vec4 pos[]; };
layout(std430, binding = 1) buffer Vel { f64vec4 vel[]; };
layout(push_constant) uniform P { double dt; double eps; uint n; uint steps; } pc;
void main() {
    uint i = gl_LocalInvocationID.x;
    for (uint s = 0u; s < pc.steps; s++) {
        f64vec3 pi = pos[i].xyz;
        f64vec3 a = f64vec3(0.0);
        for (uint j = 0u; j < pc.n; j++) {
            f64vec4 pj = pos[j];
            f64vec3 d = pj.xyz - pi;
            double r2 = d.x * d.x + d.y * d.y + d.z * d.z + pc.eps;
            double inv = pj.w / (r2 * sqrt(r2));
            a += d * inv;
        }
        memoryBarrierBuffer();
        barrier();
        f64vec3 v = vel[i].xyz + a * pc.dt;
        vel[i].xyz = v;
        pos[i].xyz = pi + v * pc.dt;
        memoryBarrierBuffer();
        barrier();
    }
}
"#;

/// Positions (xyz, mass in w) and velocities (xyz, w unused).
fn nbody_inputs() -> (Vec<[f64; 4]>, Vec<[f64; 4]>) {
    let r = random_u32s(2024, NBODY_N * 7);
    let u = |i: usize| r[i] as f64 / 4294967296.0;
    let pos = (0..NBODY_N)
        .map(|b| {
            let o = b * 7;
            [
                2.0 * u(o) - 1.0,
                2.0 * u(o + 1) - 1.0,
                2.0 * u(o + 2) - 1.0,
                0.5 + u(o + 3),
            ]
        })
        .collect();
    let vel = (0..NBODY_N)
        .map(|b| {
            let o = b * 7 + 4;
            [
                0.1 * (u(o) - 0.5),
                0.1 * (u(o + 1) - 0.5),
                0.1 * (u(o + 2) - 0.5),
                0.0,
            ]
        })
        .collect();
    (pos, vel)
}

fn f64_bytes(v: &[[f64; 4]]) -> Vec<u8> {
    v.iter().flatten().flat_map(|x| x.to_le_bytes()).collect()
}

fn run_nbody(c: &mut Ctx) -> Result<Vec<u32>, String> {
    let (pos, vel) = nbody_inputs();
    let p = filled(c, &f64_bytes(&pos));
    let v = filled(c, &f64_bytes(&vel));
    let mut pc = NBODY_DT.to_le_bytes().to_vec();
    pc.extend(NBODY_EPS.to_le_bytes());
    pc.extend((NBODY_N as u32).to_le_bytes());
    pc.extend(NBODY_STEPS.to_le_bytes());
    let mut out = run_job(
        c,
        Job {
            name: "nbody_f64",
            src: NBODY_SRC,
            bufs: vec![p, v],
            push: pc,
            groups: (1, 1),
            out: p,
            out_bytes: NBODY_N * 32,
        },
    )?;
    out.extend(words(&c.buf(v).read_bytes(NBODY_N * 32)));
    Ok(out)
}

/// The CPU's n-body in the shader's operation order (no fusing): positions then velocities.
fn nbody_reference() -> Vec<f64> {
    let (mut pos, mut vel) = nbody_inputs();
    for _ in 0..NBODY_STEPS {
        let old = pos.clone();
        for i in 0..NBODY_N {
            let pi = [old[i][0], old[i][1], old[i][2]];
            let mut a = [0.0f64; 3];
            for pj in &old {
                let d = [pj[0] - pi[0], pj[1] - pi[1], pj[2] - pi[2]];
                let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + NBODY_EPS;
                let inv = pj[3] / (r2 * r2.sqrt());
                for k in 0..3 {
                    a[k] += d[k] * inv;
                }
            }
            for k in 0..3 {
                vel[i][k] += a[k] * NBODY_DT;
                pos[i][k] = pi[k] + vel[i][k] * NBODY_DT;
            }
        }
    }
    pos.iter().chain(&vel).flatten().copied().collect()
}

fn as_f64s(w: &[u32]) -> Vec<f64> {
    w.chunks(2)
        .map(|p| f64::from_bits(p[0] as u64 | (p[1] as u64) << 32))
        .collect()
}

/// Distance in units in the last place between two finite doubles of the same sign region.
fn ulps(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        let b = x.to_bits() as i64;
        if b < 0 {
            i64::MIN - b
        } else {
            b
        }
    };
    key(a).abs_diff(key(b))
}

/// Checks an n-body result against the CPU; returns the largest error relative to the bound.
fn check_nbody(driver: &str, got: &[u32], want: &[f64]) -> f64 {
    let got = as_f64s(got);
    assert_eq!(got.len(), want.len(), "{driver}: n-body result size");
    let mut worst = 0.0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (g - w).abs() / (w.abs() + 1.0);
        assert!(
            err <= NBODY_REL_TOL,
            "{driver}: n-body value {i} is {g:e}, the CPU's {w:e} (relative error {err:e})"
        );
        worst = worst.max(err);
    }
    worst
}

// ---------------------------------------------------------------------------------------------
// 2. fp16 matrix multiply

const MAT_N: usize = 16;

const MATMUL_F16_SRC: &str = r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 4, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) readonly buffer B { f16vec4 b[]; };
layout(std430, binding = 2) writeonly buffer C { f16vec4 c[]; };
const uint N = 16u;
void main() {
    uint row = gl_GlobalInvocationID.y, q = gl_GlobalInvocationID.x;
    f16vec4 acc = f16vec4(0.0hf);
    for (uint k = 0u; k < N; k++) {
        acc += a[row * N + k] * b[k * (N / 4u) + q];
    }
    c[row * (N / 4u) + q] = acc;
}
"#;

const MATMUL_F32ACC_SRC: &str = r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) readonly buffer B { float16_t b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
const uint N = 16u;
void main() {
    uint row = gl_GlobalInvocationID.y, col = gl_GlobalInvocationID.x;
    float acc = 0.0;
    for (uint k = 0u; k < N; k++) {
        acc += float(a[row * N + k]) * float(b[k * N + col]);
    }
    c[row * N + col] = acc;
}
"#;

/// Small halves: every product and partial sum is a multiple of 0.25 below 2^9, exact in f16.
fn matmul_f16_inputs() -> (Vec<f64>, Vec<f64>) {
    let n = MAT_N * MAT_N;
    (
        (0..n).map(|i| ((i * 7) % 9) as f64 * 0.5 - 2.0).collect(),
        (0..n).map(|i| ((i * 5) % 7) as f64 * 0.5 - 1.5).collect(),
    )
}

/// Integers up to 1000 in magnitude (exact in f16): products up to 2^20, sums of 16 below 2^24,
/// exact in f32 but far outside f16's range.
fn matmul_f32acc_inputs() -> (Vec<f64>, Vec<f64>) {
    let r = random_u32s(77, 2 * MAT_N * MAT_N);
    let v = |x: u32| (x % 2001) as f64 - 1000.0;
    let n = MAT_N * MAT_N;
    (
        r[..n].iter().map(|&x| v(x)).collect(),
        r[n..].iter().map(|&x| v(x)).collect(),
    )
}

fn f16_bytes(v: &[f64]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| {
            let h = f16::from_f64(x);
            assert_eq!(h.to_f64(), x, "input {x} is exact in f16");
            h.to_le_bytes()
        })
        .collect()
}

fn run_matmul_f16(c: &mut Ctx) -> Result<Vec<u32>, String> {
    let (a, b) = matmul_f16_inputs();
    let (ba, bb) = (filled(c, &f16_bytes(&a)), filled(c, &f16_bytes(&b)));
    let out = zeroed(c, MAT_N * MAT_N / 2);
    run_job(
        c,
        Job {
            name: "matmul_f16",
            src: MATMUL_F16_SRC,
            bufs: vec![ba, bb, out],
            push: vec![],
            groups: (1, 1),
            out,
            out_bytes: MAT_N * MAT_N * 2,
        },
    )
}

fn run_matmul_f32acc(c: &mut Ctx) -> Result<Vec<u32>, String> {
    let (a, b) = matmul_f32acc_inputs();
    let (ba, bb) = (filled(c, &f16_bytes(&a)), filled(c, &f16_bytes(&b)));
    let out = zeroed(c, MAT_N * MAT_N);
    run_job(
        c,
        Job {
            name: "matmul_f16_f32acc",
            src: MATMUL_F32ACC_SRC,
            bufs: vec![ba, bb, out],
            push: vec![],
            groups: (1, 1),
            out,
            out_bytes: MAT_N * MAT_N * 4,
        },
    )
}

/// Row-major product in f64, asserting each partial sum is exact in `exact` (checks the
/// inputs' design: then fused or not, any order of the same sums gives these bits).
fn matmul_f64(a: &[f64], b: &[f64], exact: impl Fn(f64) -> bool) -> Vec<f64> {
    let mut m = vec![0.0; MAT_N * MAT_N];
    for r in 0..MAT_N {
        for col in 0..MAT_N {
            let mut acc = 0.0;
            for k in 0..MAT_N {
                let p = a[r * MAT_N + k] * b[k * MAT_N + col];
                acc += p;
                assert!(exact(p) && exact(acc), "inexact partial result {acc}");
            }
            m[r * MAT_N + col] = acc;
        }
    }
    m
}

fn matmul_f16_reference() -> Vec<u32> {
    let (a, b) = matmul_f16_inputs();
    let m = matmul_f64(&a, &b, |x| f16::from_f64(x).to_f64() == x);
    let bytes: Vec<u8> = m
        .iter()
        .flat_map(|&x| f16::from_f64(x).to_le_bytes())
        .collect();
    words(&bytes)
}

fn matmul_f32acc_reference() -> Vec<u32> {
    let (a, b) = matmul_f32acc_inputs();
    matmul_f64(&a, &b, |x| x as f32 as f64 == x)
        .iter()
        .map(|&x| (x as f32).to_bits())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 3. int8 dot products with int32 accumulation

const DOT_ROWS: usize = 16;
const DOT_LEN: usize = 64;

const DOT_SRC: &str = r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 16) in;
layout(std430, binding = 0) readonly buffer S { int8_t sx[1024]; int8_t sy[1024]; };
layout(std430, binding = 1) readonly buffer U { uint8_t ux[1024]; uint8_t uy[1024]; };
layout(std430, binding = 2) readonly buffer V { i8vec4 vx[256]; u8vec4 vy[256]; };
layout(std430, binding = 3) writeonly buffer O { int o[]; };
const uint L = 64u;
void main() {
    uint r = gl_LocalInvocationID.x;
    int ss = 0, su = 0, v4 = 0;
    uint uu = 0u;
    int8_t w8 = int8_t(0);
    uint8_t wu8 = uint8_t(0);
    for (uint k = 0u; k < L; k++) {
        uint e = r * L + k;
        ss += int(sx[e]) * int(sy[e]);
        uu += uint(ux[e]) * uint(uy[e]);
        su += int(sx[e]) * int(uy[e]);
        w8 += sx[e] * sy[e];
        wu8 += ux[e] * uy[e] + uint8_t(1);
    }
    for (uint q = 0u; q < L / 4u; q++) {
        ivec4 p = ivec4(vx[r * (L / 4u) + q]) * ivec4(vy[r * (L / 4u) + q]);
        v4 += p.x + p.y + p.z + p.w;
    }
    o[r * 6u + 0u] = ss;
    o[r * 6u + 1u] = int(uu);
    o[r * 6u + 2u] = su;
    o[r * 6u + 3u] = int(w8);
    o[r * 6u + 4u] = int(wu8);
    o[r * 6u + 5u] = v4;
}
"#;

/// (sx, sy, ux, uy), row-major DOT_ROWS x DOT_LEN; rows 0-3 are the extremes.
fn dot_inputs() -> (Vec<i8>, Vec<i8>, Vec<u8>, Vec<u8>) {
    let n = DOT_ROWS * DOT_LEN;
    let r = random_u32s(99, 4 * n);
    let mut sx: Vec<i8> = r[..n].iter().map(|&x| x as i8).collect();
    let mut sy: Vec<i8> = r[n..2 * n].iter().map(|&x| x as i8).collect();
    let mut ux: Vec<u8> = r[2 * n..3 * n].iter().map(|&x| x as u8).collect();
    let mut uy: Vec<u8> = r[3 * n..].iter().map(|&x| x as u8).collect();
    for k in 0..DOT_LEN {
        (sx[k], sy[k], ux[k], uy[k]) = (-128, -128, 255, 255);
        let e = DOT_LEN + k;
        (sx[e], sy[e], ux[e], uy[e]) = (127, -128, 0, 255);
        let e = 2 * DOT_LEN + k;
        (sx[e], sy[e], ux[e], uy[e]) = (127, 127, 128, 128);
        let e = 3 * DOT_LEN + k;
        let alt = k % 2 == 0;
        (sx[e], sy[e], ux[e], uy[e]) = (
            if alt { -128 } else { 127 },
            if alt { 127 } else { -1 },
            if alt { 255 } else { 1 },
            if alt { 1 } else { 255 },
        );
    }
    (sx, sy, ux, uy)
}

fn run_dot(c: &mut Ctx) -> Result<Vec<u32>, String> {
    let (sx, sy, ux, uy) = dot_inputs();
    let sbytes: Vec<u8> = sx.iter().chain(&sy).map(|&x| x as u8).collect();
    let ubytes: Vec<u8> = ux.iter().chain(&uy).copied().collect();
    // The vector path reads sx as i8vec4 and uy as u8vec4.
    let vbytes: Vec<u8> = sx.iter().map(|&x| x as u8).chain(uy.clone()).collect();
    let (s, u, v) = (filled(c, &sbytes), filled(c, &ubytes), filled(c, &vbytes));
    let out = zeroed(c, DOT_ROWS * 6);
    run_job(
        c,
        Job {
            name: "dot_i8",
            src: DOT_SRC,
            bufs: vec![s, u, v, out],
            push: vec![],
            groups: (1, 1),
            out,
            out_bytes: DOT_ROWS * 6 * 4,
        },
    )
}

fn dot_reference() -> Vec<u32> {
    let (sx, sy, ux, uy) = dot_inputs();
    let mut o = Vec::new();
    for r in 0..DOT_ROWS {
        let (mut ss, mut uu, mut su) = (0i32, 0u32, 0i32);
        let (mut w8, mut wu8) = (0i8, 0u8);
        for k in 0..DOT_LEN {
            let e = r * DOT_LEN + k;
            ss += sx[e] as i32 * sy[e] as i32;
            uu += ux[e] as u32 * uy[e] as u32;
            su += sx[e] as i32 * uy[e] as i32;
            w8 = w8.wrapping_add(sx[e].wrapping_mul(sy[e]));
            wu8 = wu8.wrapping_add(ux[e].wrapping_mul(uy[e]).wrapping_add(1));
        }
        o.extend([
            ss as u32,
            uu,
            su as u32,
            w8 as i32 as u32,
            wu8 as u32,
            su as u32,
        ]);
    }
    o
}

// ---------------------------------------------------------------------------------------------
// 4. mixed-width boolean logic

const BOOL_N: usize = 64;

const BOOL_SRC: &str = r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In {
    float64_t d[128]; int64_t q[128]; float f[128]; int w[128];
    float16_t h[128]; int16_t s[128]; int8_t b[128];
};
layout(std430, binding = 1) writeonly buffer O { int o[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    uint x = 2u * i, y = 2u * i + 1u;
    // One expression mixing every width (GLSL precedence: && over ^^ over ||).
    bool e1 = (b[x] < b[y] && !(s[x] >= s[y])) || ((w[x] == w[y]) ^^ (q[x] > q[y]))
        && (h[x] < h[y] || !(f[x] <= f[y])) ^^ (d[x] != d[y]);
    bool c8 = b[x] < b[y], c16 = s[x] >= s[y], c32 = w[x] == w[y], c64 = q[x] > q[y];
    bool ch = h[x] < h[y], cf = f[x] <= f[y], cd = d[x] != d[y];
    bool acc = cd;
    if (c16) {
        acc = acc ^^ c64;
    } else {
        acc = acc || ch;
    }
    int count = 0;
    for (uint k = 0u; k < 4u; k++) {
        uint j = 2u * ((i + k * 5u) % 64u);
        bool t = (q[j] < int64_t(w[j])) ^^ (double(f[j]) > d[j]) || (h[j] == float16_t(f[j + 1u]));
        acc = acc ? !t : (t && c8);
        if (acc != cf) {
            count += int(s[j] < int16_t(b[j + 1u]));
        }
    }
    int mask = int(c8) | int(c16) << 1 | int(c32) << 2 | int(c64) << 3 | int(ch) << 4
        | int(cf) << 5 | int(cd) << 6;
    int64_t sel64 = (ch && cd) ? q[x] : int64_t(w[y]);
    float16_t sel16 = (c8 ^^ c64) ? h[x] : h[y];
    o[8u * i + 0u] = e1 ? 1 : 0;
    o[8u * i + 1u] = acc ? -1 : 7;
    o[8u * i + 2u] = mask;
    o[8u * i + 3u] = (cf ^^ c32) ? int(s[x]) : int(b[y]);
    o[8u * i + 4u] = int(sel64 & 0xffffffffl);
    o[8u * i + 5u] = int(sel64 >> 32);
    o[8u * i + 6u] = int(float16BitsToUint16(sel16));
    o[8u * i + 7u] = count;
}
"#;

struct BoolIn {
    d: Vec<f64>,
    q: Vec<i64>,
    f: Vec<f32>,
    w: Vec<i32>,
    h: Vec<f16>,
    s: Vec<i16>,
    b: Vec<i8>,
}

/// Values drawn from small sets so that equal pairs are common; NaN, infinities and -0 included.
fn bool_inputs() -> BoolIn {
    let n = 2 * BOOL_N;
    let r = random_u32s(4242, 7 * n);
    let pick = |t: usize, i: usize| r[t * n + i] as usize;
    let fl = [0.0, -0.0, 1.0, -1.0, 2.5, f64::NAN, f64::INFINITY, -2.5];
    let ints = [0i64, 1, -1, 2, 127, -128, 3, -2];
    BoolIn {
        d: (0..n).map(|i| fl[pick(0, i) % 8]).collect(),
        q: (0..n)
            .map(|i| match pick(1, i) % 10 {
                8 => i64::MIN,
                9 => i64::MAX,
                k => ints[k] << 33 | ints[(k + 1) % 8] & 3,
            })
            .collect(),
        f: (0..n).map(|i| fl[pick(2, i) % 8] as f32).collect(),
        w: (0..n)
            .map(|i| match pick(3, i) % 10 {
                8 => i32::MIN,
                9 => i32::MAX,
                k => ints[k] as i32,
            })
            .collect(),
        h: (0..n).map(|i| f16::from_f64(fl[pick(4, i) % 8])).collect(),
        s: (0..n)
            .map(|i| match pick(5, i) % 10 {
                8 => i16::MIN,
                9 => i16::MAX,
                k => ints[k] as i16,
            })
            .collect(),
        b: (0..n).map(|i| ints[pick(6, i) % 8] as i8).collect(),
    }
}

fn run_bools(c: &mut Ctx) -> Result<Vec<u32>, String> {
    let v = bool_inputs();
    let mut bytes: Vec<u8> = Vec::new();
    bytes.extend(v.d.iter().flat_map(|x| x.to_le_bytes()));
    bytes.extend(v.q.iter().flat_map(|x| x.to_le_bytes()));
    bytes.extend(v.f.iter().flat_map(|x| x.to_le_bytes()));
    bytes.extend(v.w.iter().flat_map(|x| x.to_le_bytes()));
    bytes.extend(v.h.iter().flat_map(|x| x.to_le_bytes()));
    bytes.extend(v.s.iter().flat_map(|x| x.to_le_bytes()));
    bytes.extend(v.b.iter().flat_map(|x| x.to_le_bytes()));
    let input = filled(c, &bytes);
    let out = zeroed(c, 8 * BOOL_N);
    run_job(
        c,
        Job {
            name: "bools",
            src: BOOL_SRC,
            bufs: vec![input, out],
            push: vec![],
            groups: (1, 1),
            out,
            out_bytes: 8 * BOOL_N * 4,
        },
    )
}

fn bools_reference() -> Vec<u32> {
    let v = bool_inputs();
    let mut o = Vec::new();
    for i in 0..BOOL_N {
        let (x, y) = (2 * i, 2 * i + 1);
        let c8 = v.b[x] < v.b[y];
        let c16 = v.s[x] >= v.s[y];
        let c32 = v.w[x] == v.w[y];
        let c64 = v.q[x] > v.q[y];
        let ch = v.h[x] < v.h[y];
        let cf = v.f[x] <= v.f[y];
        let cd = v.d[x] != v.d[y];
        let e1 = (c8 && !c16) || (((c32 ^ c64) && (ch || !cf)) ^ cd);
        let mut acc = cd;
        if c16 {
            acc ^= c64;
        } else {
            acc = acc || ch;
        }
        let mut count = 0i32;
        for k in 0..4 {
            let j = 2 * ((i + k * 5) % 64);
            let t = ((v.q[j] < v.w[j] as i64) ^ (v.f[j] as f64 > v.d[j]))
                || (v.h[j] == f16::from_f32(v.f[j + 1]));
            acc = if acc { !t } else { t && c8 };
            if acc != cf {
                count += (v.s[j] < v.b[j + 1] as i16) as i32;
            }
        }
        let mask = c8 as i32
            | (c16 as i32) << 1
            | (c32 as i32) << 2
            | (c64 as i32) << 3
            | (ch as i32) << 4
            | (cf as i32) << 5
            | (cd as i32) << 6;
        let sel64 = if ch && cd { v.q[x] } else { v.w[y] as i64 };
        let sel16 = if c8 ^ c64 { v.h[x] } else { v.h[y] };
        o.extend([
            e1 as u32,
            if acc { u32::MAX } else { 7 },
            mask as u32,
            if cf ^ c32 {
                v.s[x] as i32 as u32
            } else {
                v.b[y] as i32 as u32
            },
            sel64 as u32,
            (sel64 >> 32) as u32,
            sel16.to_bits() as u32,
            count as u32,
        ]);
    }
    o
}

// ---------------------------------------------------------------------------------------------
// 5. type-conversion matrix

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
}

/// Every type, in the order the shader's blocks declare their arrays (widest first, so every
/// array starts aligned).
const TYPES: [Ty; 11] = [
    Ty::F64,
    Ty::I64,
    Ty::U64,
    Ty::F32,
    Ty::I32,
    Ty::U32,
    Ty::F16,
    Ty::I16,
    Ty::U16,
    Ty::I8,
    Ty::U8,
];

/// Inputs per (source, destination) pair; also the workgroup size.
const CONV_K: usize = 20;

impl Ty {
    fn glsl(self) -> &'static str {
        match self {
            Ty::I8 => "int8_t",
            Ty::U8 => "uint8_t",
            Ty::I16 => "int16_t",
            Ty::U16 => "uint16_t",
            Ty::I32 => "int32_t",
            Ty::U32 => "uint32_t",
            Ty::I64 => "int64_t",
            Ty::U64 => "uint64_t",
            Ty::F16 => "float16_t",
            Ty::F32 => "float32_t",
            Ty::F64 => "float64_t",
        }
    }
    fn short(self) -> &'static str {
        &self.glsl()[..self.glsl().len() - 2]
    }
    fn bytes(self) -> usize {
        match self {
            Ty::I8 | Ty::U8 => 1,
            Ty::I16 | Ty::U16 | Ty::F16 => 2,
            Ty::I32 | Ty::U32 | Ty::F32 => 4,
            Ty::I64 | Ty::U64 | Ty::F64 => 8,
        }
    }
    fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::F32 | Ty::F64)
    }
    /// Integer range.
    fn range(self) -> (i128, i128) {
        match self {
            Ty::I8 => (i8::MIN as i128, i8::MAX as i128),
            Ty::U8 => (0, u8::MAX as i128),
            Ty::I16 => (i16::MIN as i128, i16::MAX as i128),
            Ty::U16 => (0, u16::MAX as i128),
            Ty::I32 => (i32::MIN as i128, i32::MAX as i128),
            Ty::U32 => (0, u32::MAX as i128),
            Ty::I64 => (i64::MIN as i128, i64::MAX as i128),
            Ty::U64 => (0, u64::MAX as i128),
            _ => unreachable!("float type"),
        }
    }
    /// Bits of `v` (an integer in range, or a float value exact in this type), little-endian.
    fn encode(self, v: Val) -> Vec<u8> {
        let n = self.bytes();
        match v {
            Val::I(x) => x.to_le_bytes()[..n].to_vec(),
            Val::F(x) => {
                let bits: u64 = match self {
                    Ty::F16 => f16::from_f64(x).to_bits() as u64,
                    Ty::F32 => (x as f32).to_bits() as u64,
                    _ => x.to_bits(),
                };
                bits.to_le_bytes()[..n].to_vec()
            }
        }
    }
    /// The value of a float of this type from its bits.
    fn float_of(self, bits: u64) -> f64 {
        match self {
            Ty::F16 => f16::from_bits(bits as u16).to_f64(),
            Ty::F32 => f32::from_bits(bits as u32) as f64,
            _ => f64::from_bits(bits),
        }
    }
    /// Round-to-nearest-even of the exact `v` in this float type, as bits.
    fn round(self, v: Val) -> u64 {
        match (self, v) {
            (Ty::F16, Val::F(x)) => f16::from_f64(x).to_bits() as u64,
            (Ty::F16, Val::I(x)) => f16::from_f64(x as f64).to_bits() as u64, // |x| < 2^17: exact in f64
            (Ty::F32, Val::F(x)) => (x as f32).to_bits() as u64,
            (Ty::F32, Val::I(x)) => (x as f32).to_bits() as u64,
            (Ty::F64, Val::F(x)) => x.to_bits(),
            (Ty::F64, Val::I(x)) => (x as f64).to_bits(),
            _ => unreachable!("integer type"),
        }
    }
    /// The neighbour of float bits `b` one step up (`up`) or down in value.
    fn step(self, b: u64, up: bool) -> u64 {
        let sign = 1u64 << (8 * self.bytes() - 1);
        let mag = b & !sign;
        let neg = b & sign != 0;
        if mag == 0 {
            // From +-0 to the smallest denormal of the direction.
            return if up { 1 } else { sign | 1 };
        }
        if up != neg {
            b + 1
        } else {
            b - 1
        }
    }
    fn max_finite(self) -> f64 {
        match self {
            Ty::F16 => 65504.0,
            Ty::F32 => f32::MAX as f64,
            _ => f64::MAX,
        }
    }
    fn min_normal(self) -> f64 {
        match self {
            Ty::F16 => 2f64.powi(-14),
            Ty::F32 => f32::MIN_POSITIVE as f64,
            _ => f64::MIN_POSITIVE,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Val {
    I(i128),
    F(f64),
}

/// Candidate inputs of each source type: extremes, negatives, rounding-sensitive values for
/// narrowing (ties and near-ties), large int64 values, -0, denormals, infinities.
fn pool(t: Ty) -> Vec<Val> {
    let p = |e: i32| 2f64.powi(e);
    let ints = |v: &[i128]| v.iter().map(|&x| Val::I(x)).collect();
    let floats = |v: &[f64]| v.iter().map(|&x| Val::F(x)).collect();
    match t {
        Ty::I8 => ints(&[
            0, 1, -1, 2, -2, 127, -128, 100, -100, 64, -65, 3, -3, 50, -51, 17,
        ]),
        Ty::U8 => ints(&[
            0, 1, 2, 127, 128, 200, 255, 3, 64, 99, 254, 17, 33, 135, 250, 5,
        ]),
        Ty::I16 => ints(&[
            0, -1, 127, -128, 255, -32768, 32767, 2049, 2051, -4097, 1000, -1000, 300, -300, 12345,
            -2,
        ]),
        Ty::U16 => ints(&[
            0, 1, 255, 256, 65535, 65504, 65519, 2049, 2051, 4097, 32768, 40000, 1000, 12345,
            65280, 7,
        ]),
        Ty::I32 => ints(&[
            0,
            -1,
            -128,
            255,
            65535,
            -32769,
            2049,
            2051,
            16777217,
            -16777219,
            i32::MAX as i128,
            i32::MIN as i128,
            70000,
            -70000,
            123456789,
            -5,
        ]),
        Ty::U32 => ints(&[
            0,
            1,
            255,
            65536,
            u32::MAX as i128,
            1 << 31,
            16777217,
            16777219,
            2051,
            3000000000,
            70000,
            65519,
            123456789,
            4294967040,
            7,
            4097,
        ]),
        Ty::I64 => ints(&[
            0,
            -1,
            i64::MIN as i128,
            i64::MAX as i128,
            (1 << 53) + 1,
            -(1 << 53) - 3,
            1 << 32,
            -(1 << 31) - 1,
            16777217,
            2051,
            0x0123456789abcdef,
            -0x0123456789abcdef,
            65519,
            70000,
            -128,
            255,
        ]),
        Ty::U64 => ints(&[
            0,
            1,
            u64::MAX as i128,
            1 << 63,
            (1 << 53) + 1,
            (1 << 53) + 3,
            1 << 32,
            0xfedcba9876543210,
            16777217,
            2051,
            65535,
            65519,
            70000,
            255,
            128,
            (1 << 64) - 2049,
        ]),
        Ty::F16 => floats(&[
            0.0,
            -0.0,
            -1.5,
            2.75,
            127.5,
            -128.0,
            255.0,
            1000.5,
            65504.0,
            -32768.0,
            p(-14),
            p(-24),
            3.0 * p(-20),
            -p(-17),
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
        Ty::F32 => floats(&[
            0.0,
            -0.0,
            -2.5,
            127.75,
            -128.5,
            1.0 + p(-11),
            1.0 + 3.0 * p(-11),
            1.0 + p(-11) + p(-20),
            p(-20),
            3.0 * p(-25),
            65505.0,
            70000.0,
            4294967040.0,
            -2147483648.0,
            p(62),
            p(64) - p(40),
            f32::from_bits(0x0001_16c2) as f64,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
        Ty::F64 => floats(&[
            0.0,
            -0.0,
            -2.5,
            1.0 + p(-24),
            1.0 + 3.0 * p(-24),
            1.0 + p(-24) + p(-50),
            1.0 + p(-11) + p(-40),
            p(-20),
            3.0 * p(-25),
            1e-310,
            4294967295.0,
            -2147483648.75,
            9.2e18,
            -9223372036854775808.0,
            18446744073709549568.0,
            f32::MAX as f64,
            1e39,
            70000.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
    }
}

/// Whether converting `v` (of `s`) to `d` is defined: float -> integer needs a finite value
/// whose truncation fits `d`; everything else is defined.
fn defined(v: Val, d: Ty) -> bool {
    match v {
        Val::F(x) if !d.is_float() => {
            let (lo, hi) = d.range();
            x.is_finite() && (x.trunc() as i128) >= lo && (x.trunc() as i128) <= hi
        }
        _ => true,
    }
}

/// The CONV_K inputs of pair (s, d): the defined values of s's pool, repeated to fill.
fn conv_inputs(s: Ty, d: Ty) -> Vec<Val> {
    let ok: Vec<Val> = pool(s).into_iter().filter(|&v| defined(v, d)).collect();
    assert!(!ok.is_empty(), "{s:?} -> {d:?} has inputs");
    (0..CONV_K).map(|i| ok[i % ok.len()]).collect()
}

/// Byte offsets of each type's array in a block of 11 * CONV_K elements per type, in TYPES order.
fn conv_offsets() -> (BTreeMap<&'static str, usize>, usize) {
    let mut off = BTreeMap::new();
    let mut at = 0;
    for t in TYPES {
        off.insert(t.short(), at);
        at += t.bytes() * 11 * CONV_K;
    }
    (off, at)
}

fn type_index(t: Ty) -> usize {
    TYPES.iter().position(|&x| x == t).unwrap()
}

/// The shader: out_<d>[s * K + i] = <d>(in_<s>[d * K + i]) for all 121 pairs.
fn conv_source() -> String {
    let n = 11 * CONV_K;
    let mut src = format!(
        "#version 450\n#extension GL_EXT_shader_explicit_arithmetic_types : require\n\
         #extension GL_EXT_shader_8bit_storage : require\n\
         #extension GL_EXT_shader_16bit_storage : require\n\
         layout(local_size_x = {CONV_K}) in;\n"
    );
    for (binding, dir) in [(0, "in"), (1, "out")] {
        src += &format!("layout(std430, binding = {binding}) buffer B{dir} {{\n");
        for t in TYPES {
            src += &format!("    {} {dir}_{}[{n}];\n", t.glsl(), t.short());
        }
        src += "};\n";
    }
    src += "void main() {\n    uint i = gl_LocalInvocationID.x;\n";
    for s in TYPES {
        for d in TYPES {
            src += &format!(
                "    out_{}[{}u + i] = {}(in_{}[{}u + i]);\n",
                d.short(),
                type_index(s) * CONV_K,
                d.glsl(),
                s.short(),
                type_index(d) * CONV_K
            );
        }
    }
    src + "}\n"
}

fn conv_input_bytes() -> Vec<u8> {
    let (off, size) = conv_offsets();
    let mut bytes = vec![0u8; size];
    for s in TYPES {
        for d in TYPES {
            for (i, v) in conv_inputs(s, d).into_iter().enumerate() {
                let at = off[s.short()] + s.bytes() * (type_index(d) * CONV_K + i);
                let b = s.encode(v);
                bytes[at..at + b.len()].copy_from_slice(&b);
            }
        }
    }
    bytes
}

fn run_convert(c: &mut Ctx) -> Result<Vec<u32>, String> {
    let (_, size) = conv_offsets();
    let input = filled(c, &conv_input_bytes());
    let out = zeroed(c, size / 4);
    let src = conv_source();
    run_job(
        c,
        Job {
            name: "convert",
            src: &src,
            bufs: vec![input, out],
            push: vec![],
            groups: (1, 1),
            out,
            out_bytes: size,
        },
    )
}

/// What a float conversion may give: the round-to-nearest-even bits first, then the other
/// results Vulkan allows (the other neighbour of an inexact value; the largest finite value
/// for an overflow; a zero of the same sign for a denormal source or result).
fn float_results(s: Ty, d: Ty, v: Val) -> Vec<u64> {
    let rte = d.round(v);
    let mut ok = vec![rte];
    let (exact, x) = match v {
        Val::F(x) => (x, x),
        Val::I(i) => (i as f64, i as f64),
    };
    let got = d.float_of(rte);
    let inexact = match v {
        Val::F(x) => got != x,
        Val::I(i) => !got.is_finite() || got as i128 != i,
    };
    if inexact {
        if got.is_infinite() {
            let max = d.round(Val::F(d.max_finite().copysign(x)));
            ok.push(max);
        } else {
            // The neighbour on the other side of the exact value.
            let up = match v {
                Val::F(x) => got < x,
                Val::I(i) => (got as i128) < i,
            };
            ok.push(d.step(rte, up));
        }
    }
    let denormal_src = s.is_float() && exact != 0.0 && exact.abs() < s.min_normal();
    let denormal_res = got != 0.0 && got.abs() < d.min_normal();
    if denormal_src || denormal_res {
        ok.push(d.round(Val::F(0.0f64.copysign(x))));
    }
    ok
}

/// Expected result of every pair, per destination array: (allowed bit patterns, first = RTE).
fn conv_expected() -> Vec<(Ty, Ty, usize, Val, Vec<u64>)> {
    let mut e = Vec::new();
    for s in TYPES {
        for d in TYPES {
            for (i, v) in conv_inputs(s, d).into_iter().enumerate() {
                let allowed = if d.is_float() {
                    float_results(s, d, v)
                } else {
                    let int = match v {
                        Val::I(x) => x,
                        Val::F(x) => x.trunc() as i128,
                    };
                    // Integer -> integer keeps the low bits (sign/zero extension by the source).
                    let mask = if d.bytes() == 8 {
                        u64::MAX
                    } else {
                        (1u64 << (8 * d.bytes())) - 1
                    };
                    vec![int as u64 & mask]
                };
                e.push((s, d, i, v, allowed));
            }
        }
    }
    e
}

/// Checks a conversion result; returns the non-RTE results a driver chose (allowed ones).
fn check_convert(driver: &str, got: &[u32]) -> Vec<String> {
    let (off, _) = conv_offsets();
    let bytes: Vec<u8> = got.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut notes = Vec::new();
    let mut bad = Vec::new();
    for (s, d, i, v, allowed) in conv_expected() {
        let at = off[d.short()] + d.bytes() * (type_index(s) * CONV_K + i);
        let mut b = [0u8; 8];
        b[..d.bytes()].copy_from_slice(&bytes[at..at + d.bytes()]);
        let g = u64::from_le_bytes(b);
        if g == allowed[0] {
            continue;
        }
        let msg = format!(
            "{}({:?} as {}) = {:#x}, round-to-nearest-even {:#x}",
            d.glsl(),
            v,
            s.glsl(),
            g,
            allowed[0]
        );
        if allowed.contains(&g) {
            notes.push(msg);
        } else {
            bad.push(msg);
        }
    }
    assert!(
        bad.is_empty(),
        "{driver}: {} conversion(s) differ from the CPU:\n{}",
        bad.len(),
        bad.join("\n")
    );
    notes
}

// ---------------------------------------------------------------------------------------------
// 6. pack/unpack builtins: OpBitcast between vectors of different component counts

const PACK_N: usize = 16;

const PACK_SRC: &str = r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 16) in;
layout(std430, binding = 0) readonly buffer In { uint64_t q[16]; uint w[32]; };
layout(std430, binding = 1) writeonly buffer O { uint o[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    uint a = w[2u * i], b = w[2u * i + 1u];
    uint64_t v = q[i];
    uint base = 16u * i;
    uint64_t p = pack64(u32vec2(a, b));
    o[base + 0u] = uint(p);
    o[base + 1u] = uint(p >> 32);
    u32vec2 u = unpack32(v);
    o[base + 2u] = u.x;
    o[base + 3u] = u.y;
    uint64_t p2 = packUint2x32(u32vec2(b, a));
    o[base + 4u] = uint(p2);
    o[base + 5u] = uint(p2 >> 32);
    u32vec2 u2 = unpackUint2x32(v);
    o[base + 6u] = u2.y;
    o[base + 7u] = u2.x;
    f16vec2 hv = unpackFloat2x16(a);
    o[base + 8u] = uint(float16BitsToUint16(hv.y)) | uint(float16BitsToUint16(hv.x)) << 16;
    o[base + 9u] = packFloat2x16(f16vec2(uint16BitsToFloat16(uint16_t(b >> 16)),
                                         uint16BitsToFloat16(uint16_t(b & 0xffffu))));
    u8vec4 bytes = unpack8(a);
    o[base + 10u] = pack32(bytes.wzyx);
    u16vec2 hw = unpack16(b);
    o[base + 11u] = pack32(hw.yx);
    u16vec4 h4 = unpack16(v);
    uint64_t p4 = pack64(h4.wzyx);
    o[base + 12u] = uint(p4);
    o[base + 13u] = uint(p4 >> 32);
    o[base + 14u] = uint(bytes.x) + uint(bytes.y) * 3u + uint(bytes.z) * 5u + uint(bytes.w) * 7u;
    i8vec4 sb = unpack8(int(a));
    o[base + 15u] = uint(int(sb.x) * 3 + int(sb.w));
}
"#;

fn pack_inputs() -> (Vec<u64>, Vec<u32>) {
    let r = random_u32s(555, 4 * PACK_N);
    let q = (0..PACK_N)
        .map(|i| r[2 * i] as u64 | (r[2 * i + 1] as u64) << 32)
        .collect();
    let mut w: Vec<u32> = r[2 * PACK_N..].to_vec();
    (w[0], w[1]) = (0x8000_7fff, 0xff80_0080);
    w[2] = 0x7e00_fc00; // a NaN and -inf in f16 halves: moved, never computed
    (q, w)
}

fn run_packing(c: &mut Ctx) -> Result<Vec<u32>, String> {
    let (q, w) = pack_inputs();
    let mut bytes: Vec<u8> = q.iter().flat_map(|x| x.to_le_bytes()).collect();
    bytes.extend(w.iter().flat_map(|x| x.to_le_bytes()));
    let input = filled(c, &bytes);
    let out = zeroed(c, 16 * PACK_N);
    run_job(
        c,
        Job {
            name: "packing",
            src: PACK_SRC,
            bufs: vec![input, out],
            push: vec![],
            groups: (1, 1),
            out,
            out_bytes: 16 * PACK_N * 4,
        },
    )
}

fn packing_reference() -> Vec<u32> {
    let (q, w) = pack_inputs();
    let mut o = Vec::new();
    for i in 0..PACK_N {
        let (a, b, v) = (w[2 * i], w[2 * i + 1], q[i]);
        let by = a.to_le_bytes();
        let sb = by.map(|x| x as i8 as i32);
        let h4 = [
            v as u16,
            (v >> 16) as u16,
            (v >> 32) as u16,
            (v >> 48) as u16,
        ];
        let p4 = h4[3] as u64 | (h4[2] as u64) << 16 | (h4[1] as u64) << 32 | (h4[0] as u64) << 48;
        o.extend([
            a,
            b,
            v as u32,
            (v >> 32) as u32,
            b,
            a,
            (v >> 32) as u32,
            v as u32,
            a.rotate_left(16),
            b.rotate_left(16),
            u32::from_le_bytes([by[3], by[2], by[1], by[0]]),
            b.rotate_left(16),
            p4 as u32,
            (p4 >> 32) as u32,
            by[0] as u32 + by[1] as u32 * 3 + by[2] as u32 * 5 + by[3] as u32 * 7,
            (sb[0] * 3 + sb[3]) as u32,
        ]);
    }
    o
}

// ---------------------------------------------------------------------------------------------
// 7. bfloat16 through 16-bit storage and through packed words (ncnn's bf16 idioms)

/// Invocations of the bf16 workload (two workgroups of 64).
const BF16_N: usize = 128;
/// bf16 values in the input (each workgroup reduces 256 of them).
const BF16_VALUES: usize = 512;
/// Words of the bf16 output: 8 per invocation, the half-word CAS area, two reductions per group.
const BF16_OUT: usize = 8 * BF16_N + BF16_N / 2 + 4;

/// The bf16 <-> fp32 patterns of ncnn's `bf16p` shaders: unpacking with `uint(x) << 16` and
/// `& 0xffff0000`, packing with `>> 16` (truncation) and round-to-nearest-even, 16-bit
/// storage loads and stores, `unpack16`/`pack32` bit casts, a dynamic component index into
/// an unpacked pair, ncnn's compare-and-swap loop that stores one half of a shared word
/// (neighbouring invocations write the two halves of one word), and two workgroup tree
/// reductions: bf16 partial sums in a 16-bit shared array (truncated at every level) and
/// fp32 partial sums.
const BF16_SRC: &str = r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint16_t a[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) writeonly buffer H { uint16_t h[]; };
layout(std430, binding = 3) buffer O { uint o[]; };
shared uint16_t s16[64];
shared float sf[64];
#define ld16(i) uintBitsToFloat(uint(a[i]) << 16)
#define unpackBF(v) vec2(uintBitsToFloat((v) << 16), uintBitsToFloat((v) & 0xffff0000u))
#define packBF(v) uint((floatBitsToUint((v).x) >> 16) | (floatBitsToUint((v).y) & 0xffff0000u))
#define ldw(i) unpackBF(w[(i) / 2u])[(i) % 2u]
uint16_t trunc16(float f) { return uint16_t(floatBitsToUint(f) >> 16); }
uint16_t rne16(float f) {
    uint b = floatBitsToUint(f);
    return uint16_t((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
void main() {
    uint g = gl_GlobalInvocationID.x;
    uint t = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupID.x;
    uint i = 2u * g;
    float x = ld16(i), y = ld16(i + 1u);
    float xw = ldw(i + 1u), yw = ldw(i);
    uint hb = 8u * g;
    h[hb + 0u] = trunc16(x * 3.0);
    h[hb + 1u] = rne16(x * 3.0);
    h[hb + 2u] = trunc16(x + y);
    h[hb + 3u] = rne16(xw * yw);
    u16vec2 u = unpack16(w[g]);
    h[hb + 4u] = u.y;
    h[hb + 5u] = u.x;
    h[hb + 6u] = uint16_t(w[g] >> 16) ^ a[i];
    h[hb + 7u] = trunc16(ld16((7u * i) % 512u));
    uint ob = 8u * g;
    o[ob + 0u] = pack32(u16vec2(a[i + 1u], a[i]));
    o[ob + 1u] = packBF(unpackBF(w[g]).yx);
    o[ob + 2u] = floatBitsToUint(xw) ^ floatBitsToUint(yw);
    o[ob + 3u] = packBF(vec2(x * 0.5, y * -2.0));
    o[ob + 4u] = floatBitsToUint(ldw((5u * g) % 512u));
    o[ob + 5u] = uint(a[i]) << 16 | uint(a[i + 1u]);
    o[ob + 6u] = floatBitsToUint(uintBitsToFloat(w[g] & 0xffff0000u) + uintBitsToFloat(w[g] << 16));
    o[ob + 7u] = uint(rne16(y)) | uint(trunc16(y)) << 16;

    uint dst = g ^ 1u;
    uint wi = 1024u + dst / 2u;
    uint half_ = dst % 2u;
    float vs = x * 2.0;
    uint oldv, newv;
    do {
        oldv = atomicCompSwap(o[wi], 0u, 0u);
        vec2 v2 = unpackBF(oldv);
        v2[half_] = vs;
        newv = packBF(v2);
    } while (atomicCompSwap(o[wi], oldv, newv) != oldv);

    float acc = 0.0;
    for (uint k = t; k < 256u; k += 64u) {
        acc += ld16(wg * 256u + k);
    }
    s16[t] = trunc16(acc);
    sf[t] = acc;
    barrier();
    for (uint st = 32u; st > 0u; st >>= 1) {
        if (t < st) {
            float p = uintBitsToFloat(uint(s16[t]) << 16);
            float q = uintBitsToFloat(uint(s16[t + st]) << 16);
            s16[t] = trunc16(p + q);
            sf[t] = sf[t] + sf[t + st];
        }
        barrier();
    }
    if (t == 0u) {
        o[1088u + 2u * wg] = uint(s16[0]);
        o[1089u + 2u * wg] = floatBitsToUint(sf[0]);
    }
}
"#;

/// bf16 inputs: magnitudes 2^-7..2^8 of either sign (no overflow, no denormal anywhere in
/// the workload), with +0 and -0 among them.
fn bf16_inputs() -> Vec<u16> {
    let r = random_u32s(1623, BF16_VALUES);
    let mut v: Vec<u16> = r
        .iter()
        .map(|x| {
            let sign = (x >> 31) as u16;
            let exp = 120 + (x >> 8) as u16 % 16;
            (sign << 15) | (exp << 7) | (*x as u16 & 0x7f)
        })
        .collect();
    (v[6], v[9]) = (0x0000, 0x8000);
    v
}

fn run_bf16(c: &mut Ctx) -> Result<Vec<u32>, String> {
    let v = bf16_inputs();
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let a = filled(c, &bytes);
    let w = filled(c, &bytes);
    let h = zeroed(c, 4 * BF16_N);
    let o = zeroed(c, BF16_OUT);
    let mut out = run_job(
        c,
        Job {
            name: "bf16",
            src: BF16_SRC,
            bufs: vec![a, w, h, o],
            push: vec![],
            groups: (2, 1),
            out: h,
            out_bytes: 16 * BF16_N,
        },
    )?;
    out.extend(c.buf(o).read_u32s(BF16_OUT));
    Ok(out)
}

fn bf16_reference() -> Vec<u32> {
    let v = bf16_inputs();
    let f = |b: u16| f32::from_bits(u32::from(b) << 16);
    let trunc = |x: f32| (x.to_bits() >> 16) as u16;
    let rne = |x: f32| {
        let b = x.to_bits();
        (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16
    };
    let ldw = |k: usize| f(v[k]);
    let mut h = vec![0u16; 8 * BF16_N];
    let mut o = vec![0u32; BF16_OUT];
    for g in 0..BF16_N {
        let i = 2 * g;
        let (x, y) = (f(v[i]), f(v[i + 1]));
        let (xw, yw) = (ldw(i + 1), ldw(i));
        let hb = 8 * g;
        h[hb] = trunc(x * 3.0);
        h[hb + 1] = rne(x * 3.0);
        h[hb + 2] = trunc(x + y);
        h[hb + 3] = rne(xw * yw);
        h[hb + 4] = v[i + 1];
        h[hb + 5] = v[i];
        h[hb + 6] = v[i + 1] ^ v[i];
        h[hb + 7] = v[(7 * i) % BF16_VALUES];
        let ob = 8 * g;
        o[ob] = u32::from(v[i + 1]) | u32::from(v[i]) << 16;
        o[ob + 1] = u32::from(v[i + 1]) | u32::from(v[i]) << 16;
        o[ob + 2] = xw.to_bits() ^ yw.to_bits();
        o[ob + 3] = u32::from(trunc(x * 0.5)) | u32::from(trunc(y * -2.0)) << 16;
        o[ob + 4] = ldw((5 * g) % BF16_VALUES).to_bits();
        o[ob + 5] = u32::from(v[i]) << 16 | u32::from(v[i + 1]);
        o[ob + 6] = (f(v[i + 1]) + f(v[i])).to_bits();
        o[ob + 7] = u32::from(rne(y)) | u32::from(trunc(y)) << 16;
        let dst = g ^ 1;
        o[1024 + dst / 2] |= u32::from(trunc(x * 2.0)) << (16 * (dst % 2));
    }
    for wg in 0..2 {
        let mut s16 = [0u16; 64];
        let mut sf = [0f32; 64];
        for t in 0..64 {
            let mut acc = 0f32;
            for k in (t..256).step_by(64) {
                acc += f(v[wg * 256 + k]);
            }
            s16[t] = trunc(acc);
            sf[t] = acc;
        }
        let mut st = 32;
        while st > 0 {
            for t in 0..st {
                s16[t] = trunc(f(s16[t]) + f(s16[t + st]));
                sf[t] += sf[t + st];
            }
            st >>= 1;
        }
        o[1088 + 2 * wg] = u32::from(s16[0]);
        o[1089 + 2 * wg] = sf[0].to_bits();
    }
    let mut out: Vec<u32> = h
        .chunks(2)
        .map(|p| u32::from(p[0]) | u32::from(p[1]) << 16)
        .collect();
    out.extend(o);
    out
}

// ---------------------------------------------------------------------------------------------
// Child and parent

type Workload = fn(&mut Ctx) -> Result<Vec<u32>, String>;

const WORKLOADS: &[(&str, Workload)] = &[
    ("nbody", run_nbody),
    ("matmul_f16", run_matmul_f16),
    ("matmul_f16_f32acc", run_matmul_f32acc),
    ("dot_i8", run_dot),
    ("bools", run_bools),
    ("convert", run_convert),
    ("packing", run_packing),
    ("bf16", run_bf16),
];

/// The workloads that use doubles (run again with FERRITE_DEBUG=soft64).
const F64_WORKLOADS: &[&str] = &["nbody", "bools", "convert"];

/// Environment variable naming the workloads a child runs (comma-separated; all when unset).
const ONLY_ENV: &str = "FERRITE_EXACT_WIDTH_ONLY";

/// Runs the workloads on the driver the loader picks in this process. A workload that fails
/// (pipeline creation or submission) reports `failed:<name>` with the reason's bytes as words.
fn run_workloads() -> Results {
    let only = std::env::var(ONLY_ENV).ok();
    let mut r = Results::new();
    for &(name, f) in WORKLOADS {
        if let Some(only) = &only {
            if !only.split(',').any(|w| w == name) {
                continue;
            }
        }
        // A fresh device per workload: a lost device does not take the others with it.
        let mut c = exact_width_ctx();
        match f(&mut c) {
            Ok(words) => {
                r.insert(name.into(), words);
                c.finish();
            }
            Err(e) => {
                r.insert(format!("failed:{name}"), words(e.as_bytes()));
                c.finish_unchecked();
            }
        }
    }
    r
}

#[test]
#[ignore = "runs only as the child of exact_width_workloads_agree_on_ferrite_lavapipe_and_cpu"]
fn child_runs_exact_width_workloads() {
    if !is_child() {
        return;
    }
    print_results(&run_workloads());
}

/// A driver's result of `name`, or a message saying why there is none.
fn result<'a>(driver: &str, r: &'a Results, name: &str) -> Result<&'a [u32], String> {
    if let Some(w) = r.get(name) {
        return Ok(w);
    }
    match r.get(&format!("failed:{name}")) {
        Some(e) => {
            let bytes: Vec<u8> = e.iter().flat_map(|w| w.to_le_bytes()).collect();
            let text = String::from_utf8_lossy(&bytes);
            Err(format!(
                "{driver}: {name} failed: {}",
                text.trim_end_matches('\0')
            ))
        }
        None => Err(format!("{driver}: no result for {name}")),
    }
}

/// Compares one driver's results with the CPU; returns the problems found.
fn check_driver(driver: &str, r: &Results, names: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for &name in names {
        let got = match result(driver, r, name) {
            Ok(g) => g,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let outcome = std::panic::catch_unwind(|| match name {
            "nbody" => {
                let worst = check_nbody(driver, got, &nbody_reference());
                println!("{driver}: n-body largest relative error vs CPU {worst:e}");
            }
            "convert" => {
                for n in check_convert(driver, got) {
                    println!("{driver}: allowed non-RTE conversion: {n}");
                }
            }
            _ => {
                let want = match name {
                    "matmul_f16" => matmul_f16_reference(),
                    "matmul_f16_f32acc" => matmul_f32acc_reference(),
                    "dot_i8" => dot_reference(),
                    "bools" => bools_reference(),
                    "packing" => packing_reference(),
                    "bf16" => bf16_reference(),
                    _ => unreachable!("workload {name}"),
                };
                assert_eq!(got.len(), want.len(), "{driver}: {name} result size");
                let bad: Vec<String> = got
                    .iter()
                    .zip(&want)
                    .enumerate()
                    .filter(|(_, (g, w))| g != w)
                    .map(|(i, (g, w))| format!("word {i}: {g:#x}, CPU {w:#x}"))
                    .collect();
                assert!(
                    bad.is_empty(),
                    "{driver}: {name}: {} word(s) differ from the CPU:\n{}",
                    bad.len(),
                    bad[..bad.len().min(20)].join("\n")
                );
            }
        });
        if let Err(e) = outcome {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            problems.push(msg);
        }
    }
    problems
}

/// Largest ulp distance between two drivers' n-body doubles.
fn max_ulps(a: &[u32], b: &[u32]) -> u64 {
    as_f64s(a)
        .iter()
        .zip(as_f64s(b))
        .map(|(&x, y)| ulps(x, y))
        .max()
        .unwrap_or(0)
}

/// Known Ferrite failures: (driver label, workload, reason). The test asserts each still
/// fails, so an entry cannot outlive its fix unnoticed (remove it when the fix lands).
const EXPECTED_FAILURES: &[(&str, &str, &str)] = &[];

fn expected_failure(driver: &str, name: &str) -> Option<&'static str> {
    EXPECTED_FAILURES
        .iter()
        .find(|e| e.0 == driver && e.1 == name)
        .map(|e| e.2)
}

/// Checks `names` on one driver, splitting off the expected failures (which must fail).
fn check_with_expected(driver: &str, r: &Results, names: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for &name in names {
        let p = check_driver(driver, r, &[name]);
        match expected_failure(driver, name) {
            None => problems.extend(p),
            Some(reason) if p.is_empty() => problems.push(format!(
                "{driver}: {name} passes now; remove it from EXPECTED_FAILURES ({reason})"
            )),
            Some(reason) => {
                println!(
                    "expected failure, {driver} {name}: {reason}\n  {}",
                    p.join("\n  ")
                )
            }
        }
    }
    problems
}

#[test]
fn exact_width_workloads_agree_on_ferrite_lavapipe_and_cpu() {
    let all: Vec<&str> = WORKLOADS.iter().map(|w| w.0).collect();
    let lavapipe = run_child(CHILD, &lavapipe_env());
    // Ferrite with debug switches; `simstrict` makes an access to unbacked memory (a wrong
    // address, e.g. scratch) a GPU fault instead of a read of zeros.
    let ferrite_with = |flags: &str, only: Option<&[&str]>| {
        let mut env = loader_env();
        env.push(("FERRITE_DEBUG".into(), format!("simstrict,{flags}")));
        if let Some(only) = only {
            env.push((ONLY_ENV.into(), only.join(",")));
        }
        run_child(CHILD, &env)
    };
    let ferrite = ferrite_with("", None);
    let soft64 = ferrite_with("soft64", Some(F64_WORKLOADS));
    // The widths the compiler does not pick by itself, forced.
    let simd8 = ferrite_with("no16,no32", None);
    let simd32 = ferrite_with("no8,no16", None);

    let mut problems = check_driver("lavapipe", &lavapipe, &all);
    problems.extend(check_with_expected("Ferrite", &ferrite, &all));
    problems.extend(check_with_expected(
        "Ferrite soft64",
        &soft64,
        F64_WORKLOADS,
    ));
    problems.extend(check_with_expected("Ferrite SIMD8", &simd8, &all));
    problems.extend(check_with_expected("Ferrite SIMD32", &simd32, &all));
    if let (Some(f), Some(l)) = (ferrite.get("nbody"), lavapipe.get("nbody")) {
        println!("n-body: Ferrite vs lavapipe max {} ulp", max_ulps(f, l));
    }
    if let (Some(f), Some(s)) = (ferrite.get("nbody"), soft64.get("nbody")) {
        println!(
            "n-body: Ferrite native vs soft64 max {} ulp",
            max_ulps(f, s)
        );
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}
