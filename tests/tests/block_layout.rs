//! VK_EXT_scalar_block_layout and VK_KHR_uniform_buffer_standard_layout through the loader
//! with validation: a scalar-layout storage buffer of structs with misaligned vec3 and vec2
//! members (a 28-byte array stride), a scalar vec3 array (12-byte stride), and a uniform
//! block in std430 layout (a float array of stride 4), read and written by one shader and
//! checked against a CPU model and against lavapipe (the same shader, run in a child process
//! on each driver).

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::Harness;

const N: usize = 32;

const SHADER: &str = "#version 450
#extension GL_EXT_scalar_block_layout : require
layout(local_size_x = 16) in;
struct S { float a; vec3 b; vec2 c; uint d; };
layout(scalar, set = 0, binding = 0) buffer In { S s[]; } inb;
layout(std430, set = 0, binding = 1) uniform U { float k; vec3 v; uvec2 w; float tail[4]; } u;
layout(scalar, set = 0, binding = 2) buffer Out3 { vec3 o3[]; };
layout(std430, set = 0, binding = 3) buffer Out { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    S x = inb.s[i];
    o3[i] = x.b * u.k + vec3(x.c, float(x.d)) + u.v;
    o[i] = (floatBitsToUint(x.a) ^ u.w.x) + floatBitsToUint(u.tail[i % 4u]) + u.w.y;
    inb.s[i].c = x.c.yx;
}";

/// Struct i of the input (scalar layout: a@0, b@4, c@16, d@24; 28 bytes): small integers as
/// floats, so every result is exact.
fn input() -> Vec<u32> {
    let r = random_u32s(3, 7 * N);
    let f = |x: u32| ((x % 200) as f32 - 100.0).to_bits();
    (0..7 * N)
        .map(|k| if k % 7 == 6 { r[k] % 1000 } else { f(r[k]) })
        .collect()
}

/// The uniform block in std430: k@0, v@16, w@32, tail@40 (stride 4).
fn uniforms() -> Vec<u32> {
    let f = |x: f32| x.to_bits();
    vec![
        f(3.0),
        0,
        0,
        0,
        f(0.5),
        f(-2.0),
        f(8.0),
        0,
        0x5555_0000,
        7,
        f(1.0),
        f(2.0),
        f(4.0),
        f(-8.0),
    ]
}

fn ctx() -> Ctx {
    let h = Harness::with_instance_extensions(true, &[c"VK_KHR_get_physical_device_properties2"]);
    let exts = [
        c"VK_EXT_scalar_block_layout".as_ptr(),
        c"VK_KHR_uniform_buffer_standard_layout".as_ptr(),
    ];
    let mut scalar =
        vk::PhysicalDeviceScalarBlockLayoutFeatures::default().scalar_block_layout(true);
    let mut std_ubo = vk::PhysicalDeviceUniformBufferStandardLayoutFeatures::default()
        .uniform_buffer_standard_layout(true);
    let info = vk::DeviceCreateInfo::default()
        .enabled_extension_names(&exts)
        .push_next(&mut scalar)
        .push_next(&mut std_ubo);
    Ctx::with_create_info(h, info)
}

fn run() -> Results {
    let mut c = ctx();
    let types = [
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::UNIFORM_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let code = spirv("block_layout", Some(SHADER));
    let k = c
        .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
        .expect("vkCreateComputePipelines");
    let inb = c.buffer(28 * N as u64);
    c.buf(inb).write_u32s(&input());
    let ubo = c.buffer(64);
    c.buf(ubo).write_u32s(&uniforms());
    let o3 = zeroed(&mut c, 3 * N);
    let o = zeroed(&mut c, N);
    c.bind_typed(k, &[inb, ubo, o3, o], &types);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        dispatch(&c, cb, (N / 16) as u32, 1);
    })
    .unwrap();
    let mut r = Results::new();
    r.insert("in".into(), c.buf(inb).read_u32s(7 * N));
    r.insert("o3".into(), c.buf(o3).read_u32s(3 * N));
    r.insert("o".into(), c.buf(o).read_u32s(N));
    c.finish();
    r
}

fn reference() -> Results {
    let inp = input();
    let u = uniforms();
    let f = |x: u32| f32::from_bits(x);
    let mut out_in = inp.clone();
    let mut o3 = Vec::new();
    let mut o = Vec::new();
    for i in 0..N {
        let s = &inp[7 * i..7 * i + 7];
        let (k, v) = (f(u[0]), [f(u[4]), f(u[5]), f(u[6])]);
        let extra = [f(s[4]), f(s[5]), s[6] as f32];
        for j in 0..3 {
            o3.push((f(s[1 + j]) * k + extra[j] + v[j]).to_bits());
        }
        o.push((s[0] ^ u[8]).wrapping_add(u[10 + i % 4]).wrapping_add(u[9]));
        out_in[7 * i + 4] = s[5];
        out_in[7 * i + 5] = s[4];
    }
    let mut r = Results::new();
    r.insert("in".into(), out_in);
    r.insert("o3".into(), o3);
    r.insert("o".into(), o);
    r
}

#[test]
#[ignore = "run by block_layouts_match_cpu_and_lavapipe in a child process"]
fn child_runs_block_layout() {
    if !is_child() {
        return;
    }
    print_results(&run());
}

/// Ferrite (simulated GPU) against the CPU model, and lavapipe against the CPU model.
#[test]
fn block_layouts_match_cpu_and_lavapipe() {
    check_ferrite_and_lavapipe_against("child_runs_block_layout", &reference());
}
