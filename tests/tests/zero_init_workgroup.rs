//! VK_KHR_zero_initialize_workgroup_memory (shaderZeroInitializeWorkgroupMemory, core in
//! Vulkan 1.3) on the simulated GPU through the loader with validation: `shared` variables with
//! a null initializer (`= {}`, GL_EXT_null_initializer) read as zero at the start of every
//! workgroup, for several types and sizes and workgroup sizes that do not divide the SLM range.
//! The simulated GPU keeps shared local memory as real hardware does (a fresh allocation holds
//! a fixed non-zero pattern, a group finds its predecessor's data), and each group overwrites
//! the variables after reading them, so a missing or partial zeroing shows.

mod compute_common;

use ash::vk;
use compute_common::*;

fn ctx() -> Ctx {
    let mut zi = vk::PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures::default()
        .shader_zero_initialize_workgroup_memory(true);
    Ctx::with_extension(c"VK_KHR_zero_initialize_workgroup_memory", &mut zi)
}

/// One case: declarations, the element type's "bits" expression of `s[j]`, a garbage store
/// for `s[j]`, the element count and the workgroup size.
struct Case {
    name: &'static str,
    decl: &'static str,
    bits: &'static str,
    garbage: &'static str,
    n: u32,
    wg: [u32; 2],
}

const CASES: &[Case] = &[
    Case {
        name: "uint_1_wg1",
        decl: "shared uint s[1] = {};",
        bits: "s[j]",
        garbage: "s[j] = 0xdeadbeefu;",
        n: 1,
        wg: [1, 1],
    },
    Case {
        name: "uint_100_wg7",
        decl: "shared uint s[100] = {};",
        bits: "s[j]",
        garbage: "s[j] = i + 1u;",
        n: 100,
        wg: [7, 1],
    },
    Case {
        name: "uint_4096_wg64",
        decl: "shared uint s[4096] = {};",
        bits: "s[j]",
        garbage: "s[j] = ~j;",
        n: 4096,
        wg: [64, 1],
    },
    Case {
        name: "float_1000_wg5x3",
        decl: "shared float s[1000] = {};",
        bits: "floatBitsToUint(s[j])",
        garbage: "s[j] = -1.5;",
        n: 1000,
        wg: [5, 3],
    },
    Case {
        name: "vec3_33_wg16",
        decl: "shared vec3 s[33] = {};",
        bits: "floatBitsToUint(s[j].x) | floatBitsToUint(s[j].y) | floatBitsToUint(s[j].z)",
        garbage: "s[j] = vec3(1.0, 2.0, 3.0);",
        n: 33,
        wg: [16, 1],
    },
    Case {
        name: "struct_50_wg100",
        decl: "struct S { uvec3 a; float b; uint c[2]; };\nshared S s[50] = {};",
        bits: "s[j].a.x | s[j].a.y | s[j].a.z | floatBitsToUint(s[j].b) | s[j].c[0] | s[j].c[1]",
        garbage: "s[j] = S(uvec3(1u, 2u, 3u), 4.0, uint[2](5u, 6u));",
        n: 50,
        wg: [100, 1],
    },
    Case {
        name: "bool_9_wg4",
        decl: "shared bool s[9] = {};",
        bits: "(s[j] ? 1u : 0u)",
        garbage: "s[j] = true;",
        n: 9,
        wg: [4, 1],
    },
    Case {
        // An uninitialized variable before the initialized one: it may be zeroed too, but the
        // initialized one must be.
        name: "after_uninitialized_wg32",
        decl: "shared uint other[37];\nshared uint s[70] = {};",
        bits: "s[j]",
        garbage: "s[j] = 7u; other[j % 37u] = 9u;",
        n: 70,
        wg: [32, 1],
    },
];

fn source(c: &Case) -> String {
    format!(
        "#version 450
#extension GL_EXT_null_initializer : require
layout(local_size_x = {}, local_size_y = {}) in;
{}
layout(set = 0, binding = 0) buffer O {{ uint o[]; }};
void main() {{
    uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y;
    uint i = gl_LocalInvocationIndex;
    uint base = gl_WorkGroupID.x * {n}u;
    for (uint j = i; j < {n}u; j += n) o[base + j] = {};
    barrier();
    for (uint j = i; j < {n}u; j += n) {{ {} }}
}}
",
        c.wg[0],
        c.wg[1],
        c.decl,
        c.bits,
        c.garbage,
        n = c.n
    )
}

#[test]
fn null_initialized_shared_variables_read_zero_in_every_group() {
    let mut c = ctx();
    const GROUPS: u32 = 3;
    for case in CASES {
        let code = spirv_env(case.name, Some(&source(case)), "vulkan1.1");
        let words = (case.n * GROUPS) as usize;
        let out = c.buffer(words as u64 * 4);
        c.buf(out).write_u32s(&vec![99; words]);
        let k = c.kernel(&code, 1, 0);
        c.bind(k, &[out]);
        c.run(|d, cb| {
            c.bind_kernel(cb, k);
            // SAFETY: recording into a live command buffer.
            unsafe { d.cmd_dispatch(cb, GROUPS, 1, 1) };
        })
        .unwrap();
        let got = c.buf(out).read_u32s(words);
        for (w, &g) in got.iter().enumerate() {
            assert_eq!(
                g,
                0,
                "{}: group {} element {} read {g:#x} (99 = never written)",
                case.name,
                w as u32 / case.n,
                w as u32 % case.n
            );
        }
    }
    c.finish();
}
