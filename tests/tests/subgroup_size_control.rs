//! VK_EXT_subgroup_size_control end to end on the simulated GPU, through the loader with
//! validation: a compute pipeline with `VkPipelineShaderStageRequiredSubgroupSizeCreateInfo`
//! of 8, 16 and 32 (with and without `REQUIRE_FULL_SUBGROUPS`) sees that `gl_SubgroupSize`,
//! the matching invocation and subgroup ids and a subgroup sum over full subgroups; without
//! the structure `gl_SubgroupSize` is the reported `subgroupSize` (32) while the kernel runs
//! at the width policy's choice (16 here), or at 32 with `REQUIRE_FULL_SUBGROUPS`; with
//! `ALLOW_VARYING_SUBGROUP_SIZE` it runs at one of the sizes between min and max, the same in
//! every invocation. The properties report the compute stage as size-controllable.

mod compute_common;

use ash::vk;
use compute_common::*;

const LOCAL: u32 = 64;
const GROUPS: u32 = 2;

const SHADER: &str = "#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x * 4u;
    o[i] = gl_SubgroupSize;
    o[i + 1u] = gl_SubgroupInvocationID;
    o[i + 2u] = gl_SubgroupID;
    o[i + 3u] = subgroupAdd(gl_LocalInvocationIndex);
}";

fn ctx() -> Ctx {
    let mut features = vk::PhysicalDeviceSubgroupSizeControlFeatures::default()
        .subgroup_size_control(true)
        .compute_full_subgroups(true);
    Ctx::with_extension(c"VK_EXT_subgroup_size_control", &mut features)
}

/// Runs the shader with the stage settings of `c` and returns the subgroup size every
/// invocation saw and the dispatch width (the invocations of subgroup 0), after checking the
/// ids and sums against the width: a subgroup's active invocations are one hardware thread's
/// channels, also when `SubgroupSize` is the API constant 32 at a narrower width.
fn run(c: &mut Ctx, code: &[u32], what: &str) -> (u32, u32) {
    let n = (LOCAL * GROUPS) as usize;
    let out = zeroed(c, n * 4);
    let k = c.kernel(code, 1, 0);
    c.bind(k, &[out]);
    c.run(|d, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: recording into a live command buffer.
        unsafe { d.cmd_dispatch(cb, GROUPS, 1, 1) };
    })
    .unwrap();
    let o = c.buf(out).read_u32s(n * 4);
    let size = o[0];
    let width = (0..LOCAL as usize).filter(|&i| o[4 * i + 2] == 0).count() as u32;
    assert!(
        [8, 16, 32].contains(&size) && [8, 16, 32].contains(&width) && width <= size,
        "{what}: gl_SubgroupSize {size}, {width} invocations in subgroup 0"
    );
    for i in 0..n {
        let l = (i as u32) % LOCAL;
        let first = l - l % width;
        let want = [
            size,
            l % width,
            l / width,
            (first..first + width).sum::<u32>(),
        ];
        assert_eq!(
            &o[4 * i..4 * i + 4],
            &want,
            "{what}: invocation {i}: [size, id, subgroup id, sum] (width {width})"
        );
    }
    (size, width)
}

#[test]
fn required_subgroup_sizes_are_the_dispatch_width() {
    let mut c = ctx();
    let code = spirv_env("subgroup_size", Some(SHADER), "vulkan1.1");
    for full in [false, true] {
        c.stage_flags = if full {
            vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS
        } else {
            vk::PipelineShaderStageCreateFlags::empty()
        };
        for size in [8u32, 16, 32] {
            c.required_subgroup_size = Some(size);
            let got = run(&mut c, &code, &format!("required {size}, full {full}"));
            assert_eq!(
                got,
                (size, size),
                "required size {size}, full subgroups {full}"
            );
        }
    }
    c.finish();
}

#[test]
fn default_and_varying_sizes_are_honest() {
    let mut c = ctx();
    let mut v13 = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
    let mut sg = vk::PhysicalDeviceSubgroupProperties::default();
    {
        let mut p2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut v13)
            .push_next(&mut sg);
        // SAFETY: a live physical device and a valid output chain.
        unsafe { c.h.instance.get_physical_device_properties2(c.pd, &mut p2) };
    }
    assert_eq!((v13.min_subgroup_size, v13.max_subgroup_size), (8, 32));
    assert_eq!(
        v13.required_subgroup_size_stages,
        vk::ShaderStageFlags::COMPUTE
    );
    let code = spirv_env("subgroup_size", Some(SHADER), "vulkan1.1");
    // Without size control the reported size is an API constant: the kernel runs at the
    // width policy's choice (SIMD16 for 64 invocations, as anv), and the invocations from the
    // width up to 32 are never active.
    let got = run(&mut c, &code, "default");
    assert_eq!(
        got,
        (sg.subgroup_size, 16),
        "without size control: the reported size at the policy's width"
    );
    // Full subgroups without a required or varying size: full subgroups of the reported size.
    c.stage_flags = vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS;
    let got = run(&mut c, &code, "full");
    assert_eq!(got, (sg.subgroup_size, sg.subgroup_size), "full subgroups");
    c.stage_flags = vk::PipelineShaderStageCreateFlags::ALLOW_VARYING_SUBGROUP_SIZE;
    let (size, width) = run(&mut c, &code, "varying");
    assert!(
        (v13.min_subgroup_size..=v13.max_subgroup_size).contains(&size) && size == width,
        "varying size {size} at width {width}"
    );
    c.finish();
}
