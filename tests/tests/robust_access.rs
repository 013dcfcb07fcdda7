//! robustBufferAccess through real descriptor ranges: a window of 256 bytes at offset 1024 of
//! an 8 KiB buffer filled with a pattern is bound as the storage or uniform buffer, and shaders
//! read, write and update atomically at indices inside the window, just past it and far past
//! it, at several workgroup sizes (the compiler's SIMD8/16/32 choices). Vulkan's rules: an
//! out-of-bounds load returns zero or a value from the buffer's memory, a store or atomic may
//! only touch the buffer. Gen9's data port is stricter (bounds-checked at dword granularity
//! against the surface, which the driver sizes to the descriptor range): loads past the window
//! return 0, stores and atomics past it change nothing, atomics return 0. Both are checked,
//! and the same shaders run on lavapipe (with robustBufferAccess) in a child process must give
//! the same results.

mod compute_common;

use std::collections::BTreeMap;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::{loader_env, Harness};

const BUF_BYTES: u64 = 8192;
const WINDOW_OFFSET: u64 = 1024;
const WINDOW_BYTES: u64 = 256;
const WINDOW_WORDS: u32 = (WINDOW_BYTES / 4) as u32;

/// Indices (in elements of the access) the shaders use: inside, at the edge, past the window
/// but inside the buffer, and far outside.
const INDICES: [u32; 16] = [
    0,
    1,
    15,
    16,
    17,
    31,
    62,
    63,
    64,
    65,
    100,
    700,
    2047,
    4096,
    1 << 20,
    0x3fff_ffff,
];

fn pattern(i: u32) -> u32 {
    0x5a00_0000 | i
}

/// A device with robustBufferAccess and 8/16-bit storage enabled, and VK_EXT_robustness2's
/// robustBufferAccess2 with `robustness2`.
fn robust_ctx(robustness2: bool) -> Ctx {
    let h = Harness::with_instance_extensions(true, &[c"VK_KHR_get_physical_device_properties2"]);
    let pd = h.physical_device();
    let features = vk::PhysicalDeviceFeatures::default()
        .robust_buffer_access(true)
        .shader_int16(true);
    let mut exts = vec![
        c"VK_KHR_8bit_storage".as_ptr(),
        c"VK_KHR_16bit_storage".as_ptr(),
        c"VK_KHR_shader_float16_int8".as_ptr(),
        c"VK_KHR_storage_buffer_storage_class".as_ptr(),
    ];
    let mut r2 = vk::PhysicalDeviceRobustness2FeaturesEXT::default().robust_buffer_access2(true);
    if robustness2 {
        // The device reports the feature before it is asked for.
        let mut query = vk::PhysicalDeviceRobustness2FeaturesEXT::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut query);
        // SAFETY: a live physical device and a valid output chain.
        unsafe { h.instance.get_physical_device_features2(pd, &mut f2) };
        assert_eq!(query.robust_buffer_access2, vk::TRUE, "robustBufferAccess2");
        exts.push(c"VK_EXT_robustness2".as_ptr());
    }
    // glslang's Vulkan 1.0 SPIR-V puts storage buffers in the Uniform storage class.
    let mut s8 = vk::PhysicalDevice8BitStorageFeatures::default()
        .storage_buffer8_bit_access(true)
        .uniform_and_storage_buffer8_bit_access(true);
    let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default()
        .storage_buffer16_bit_access(true)
        .uniform_and_storage_buffer16_bit_access(true);
    let mut i8 = vk::PhysicalDeviceShaderFloat16Int8Features::default().shader_int8(true);
    let info = vk::DeviceCreateInfo::default()
        .enabled_extension_names(&exts)
        .enabled_features(&features)
        .push_next(&mut s8)
        .push_next(&mut s16)
        .push_next(&mut i8);
    let info = if robustness2 {
        info.push_next(&mut r2)
    } else {
        info
    };
    Ctx::with_create_info(h, info)
}

/// Binding 0: the window of `data` (as `ty`, dynamic types get `dynamic` added); 1: the
/// indices; 2: the results.
fn bind_window(c: &Ctx, k: usize, data: usize, idx: usize, out: usize, ty: vk::DescriptorType) {
    let dynamic = matches!(
        ty,
        vk::DescriptorType::STORAGE_BUFFER_DYNAMIC | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
    );
    let window = [vk::DescriptorBufferInfo {
        buffer: c.buf(data).buffer,
        // A dynamic descriptor's base is half the offset; the dynamic offset adds the rest.
        offset: if dynamic {
            WINDOW_OFFSET / 2
        } else {
            WINDOW_OFFSET
        },
        range: WINDOW_BYTES,
    }];
    let whole = |b: usize| {
        [vk::DescriptorBufferInfo {
            buffer: c.buf(b).buffer,
            offset: 0,
            range: vk::WHOLE_SIZE,
        }]
    };
    let (i, o) = (whole(idx), whole(out));
    let set = c.k(k).set;
    let writes = [
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(ty)
            .buffer_info(&window),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(1)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&i),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(2)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&o),
    ];
    // SAFETY: valid writes to a live set no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&writes, &[]) };
}

/// The GLSL of one access kind; `D` is binding 0, `I` the indices, `O` the results.
fn shader(kind: &str, local: u32) -> String {
    let narrow = "#extension GL_EXT_shader_8bit_storage : require\n\
                  #extension GL_EXT_shader_16bit_storage : require\n\
                  #extension GL_EXT_shader_explicit_arithmetic_types : require\n";
    let (decl, body) = match kind {
        "load8" => (
            "layout(set=0, binding=0) buffer D { uint8_t d[]; };",
            "O[g] = uint(d[I[g % 16u]]);",
        ),
        "load16" => (
            "layout(set=0, binding=0) buffer D { uint16_t d[]; };",
            "O[g] = uint(d[I[g % 16u]]);",
        ),
        "store16" => (
            "layout(set=0, binding=0) buffer D { uint16_t d[]; };",
            "uint i = I[g % 16u]; if (i >= 128u) d[i] = uint16_t(0xbeefu); O[g] = 0u;",
        ),
        "load" => (
            "layout(set=0, binding=0) buffer D { uint d[]; };",
            "O[g] = d[I[g % 16u]];",
        ),
        "load_vec4" => (
            "layout(set=0, binding=0) buffer D { uvec4 d[]; };",
            "uvec4 v = d[I[g % 16u] / 4u]; O[g] = v.x ^ (v.y << 1) ^ (v.z << 2) ^ (v.w << 3);",
        ),
        "store" => (
            "layout(set=0, binding=0) buffer D { uint d[]; };",
            "uint i = I[g % 16u]; if (i >= 64u) d[i] = 0xbeef0000u | g; O[g] = 0u;",
        ),
        "atomic" => (
            "layout(set=0, binding=0) buffer D { uint d[]; };",
            "uint i = I[g % 16u]; O[g] = (i >= 64u) ? atomicAdd(d[i], 1u) : 0u;",
        ),
        "ubo" => (
            "layout(set=0, binding=0) uniform D { uvec4 d[1024]; };",
            "uint i = min(I[g % 16u], 4095u); O[g] = d[i / 4u][i % 4u];",
        ),
        _ => unreachable!("{kind}"),
    };
    format!(
        "#version 450\n{narrow}layout(local_size_x = {local}) in;\n{decl}\n\
         layout(set=0, binding=1) buffer Idx {{ uint I[]; }};\n\
         layout(set=0, binding=2) buffer Out {{ uint O[]; }};\n\
         void main() {{ uint g = gl_GlobalInvocationID.x; {body} }}\n"
    )
}

const KINDS: [(&str, vk::DescriptorType); 10] = [
    ("load8", vk::DescriptorType::STORAGE_BUFFER),
    ("load16", vk::DescriptorType::STORAGE_BUFFER),
    ("store16", vk::DescriptorType::STORAGE_BUFFER),
    ("load", vk::DescriptorType::STORAGE_BUFFER),
    ("load_vec4", vk::DescriptorType::STORAGE_BUFFER),
    ("store", vk::DescriptorType::STORAGE_BUFFER),
    ("atomic", vk::DescriptorType::STORAGE_BUFFER),
    ("ubo", vk::DescriptorType::UNIFORM_BUFFER),
    ("load", vk::DescriptorType::STORAGE_BUFFER_DYNAMIC),
    ("ubo", vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC),
];

/// Workgroup sizes: 8 (SIMD8), 32 (SIMD16), 1024 (SIMD32, the 56-thread limit).
const LOCAL_SIZES: [u32; 3] = [8, 32, 1024];

/// Runs every kind at every size; per case the results and the whole data buffer afterwards.
fn run_all() -> BTreeMap<String, Vec<u32>> {
    let mut results = BTreeMap::new();
    // robustBufferAccess at every size; robustBufferAccess2 (the same rules, required exactly
    // at the range rounded up to robustStorage/UniformBufferAccessSizeAlignment) at SIMD16.
    run_cases(robust_ctx(false), "rba", &LOCAL_SIZES, &mut results);
    run_cases(robust_ctx(true), "rba2", &[32], &mut results);
    results
}

fn run_cases(mut c: Ctx, prefix: &str, sizes: &[u32], results: &mut BTreeMap<String, Vec<u32>>) {
    for (kind, ty) in KINDS {
        for &local in sizes {
            let name = format!("{kind}-{ty:?}-{local}-{prefix}");
            let invocations = local.max(64);
            let data = c.buffer(BUF_BYTES);
            let idx = c.buffer(64);
            let out = c.buffer(u64::from(invocations) * 4);
            let words: Vec<u32> = (0..(BUF_BYTES / 4) as u32).map(pattern).collect();
            c.buf(data).write_u32s(&words);
            c.buf(idx).write_u32s(&INDICES);
            let code = spirv(
                &format!("robust_{kind}_{local}"),
                Some(&shader(kind, local)),
            );
            let types = [
                ty,
                vk::DescriptorType::STORAGE_BUFFER,
                vk::DescriptorType::STORAGE_BUFFER,
            ];
            let k = c
                .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
                .expect("vkCreateComputePipelines");
            bind_window(&c, k, data, idx, out, ty);
            let kk = (c.k(k).pipeline, c.k(k).layout, c.k(k).set);
            let dynamic: &[u32] = if types[0] == vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
                || types[0] == vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
            {
                &[(WINDOW_OFFSET / 2) as u32]
            } else {
                &[]
            };
            c.run(|dev, cb| {
                // SAFETY: recording into a live command buffer.
                unsafe {
                    dev.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, kk.0);
                    dev.cmd_bind_descriptor_sets(
                        cb,
                        vk::PipelineBindPoint::COMPUTE,
                        kk.1,
                        0,
                        &[kk.2],
                        dynamic,
                    );
                    dev.cmd_dispatch(cb, invocations / local, 1, 1);
                }
            })
            .expect("dispatch");
            results.insert(
                format!("{name}-out"),
                c.buf(out).read_u32s(invocations as usize),
            );
            results.insert(
                format!("{name}-data"),
                c.buf(data).read_u32s((BUF_BYTES / 4) as usize),
            );
        }
    }
    c.finish();
}

/// The Vulkan rules and Gen9's stricter ones for one case.
fn check(name: &str, out: &[u32], data: &[u32]) {
    let kind = name.split('-').next().unwrap();
    let base = (WINDOW_OFFSET / 4) as u32;
    let in_window = |w: u32| w < WINDOW_WORDS;
    // Nothing outside the window changed (stores and atomics stay inside: Gen9 drops them).
    for (w, &v) in data.iter().enumerate() {
        let w = w as u32;
        let window = w >= base && w < base + WINDOW_WORDS;
        if !window {
            assert_eq!(v, pattern(w), "{name}: word {w} outside the window changed");
        }
    }
    for (g, &v) in out.iter().enumerate() {
        let i = INDICES[g % 16];
        let expect = match kind {
            "load" | "ubo" => {
                if in_window(i) {
                    pattern(base + i)
                } else {
                    0
                }
            }
            // 256 bytes are 256 u8 or 128 u16 elements; Gen9's byte scattered messages check
            // the dword each element lies in, and the window is dword-aligned.
            "load8" => {
                if i < 256 {
                    pattern(base + i / 4) >> (8 * (i % 4)) & 0xff
                } else {
                    0
                }
            }
            "load16" => {
                if i < 128 {
                    pattern(base + i / 2) >> (16 * (i % 2)) & 0xffff
                } else {
                    0
                }
            }
            "load_vec4" => {
                let e = i / 4 * 4;
                let word = |c: u32| {
                    if in_window(e + c) {
                        pattern(base + e + c)
                    } else {
                        0
                    }
                };
                word(0) ^ (word(1) << 1) ^ (word(2) << 2) ^ (word(3) << 3)
            }
            // Indices past the window: the store is dropped, the atomic returns 0.
            "store" | "store16" | "atomic" => 0,
            _ => unreachable!(),
        };
        assert_eq!(
            v, expect,
            "{name}: invocation {g}, index {i}: got 0x{v:08x}, want 0x{expect:08x}"
        );
    }
}

#[test]
#[ignore = "runs only as the child of robust_buffer_access_*"]
fn child_runs_robust_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_all());
}

#[test]
fn robust_buffer_access_follows_the_data_port_rules_and_agrees_with_lavapipe() {
    // Both children at once (each is single-threaded).
    let (ferrite, lavapipe) = std::thread::scope(|s| {
        let f = s.spawn(|| run_child("child_runs_robust_cases", &loader_env()));
        let l = s.spawn(|| run_child("child_runs_robust_cases", &lavapipe_env()));
        (f.join().unwrap(), l.join().unwrap())
    });
    assert_eq!(ferrite.len(), 2 * KINDS.len() * (LOCAL_SIZES.len() + 1));
    for (name, out) in ferrite.iter().filter(|(n, _)| n.ends_with("-out")) {
        let case = name.trim_end_matches("-out");
        check(case, out, &ferrite[&format!("{case}-data")]);
    }
    for (name, want) in &lavapipe {
        assert_eq!(ferrite.get(name), Some(want), "Ferrite vs lavapipe: {name}");
    }
    assert_eq!(ferrite.len(), lavapipe.len());
}
