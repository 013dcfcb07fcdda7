//! SPIR-V 1.6 modules on the simulated GPU at SIMD8/16/32 (the compiler's gate; the driver
//! accepts 1.6 once it reports Vulkan 1.3, docs/api-version.md):
//!
//! * GLSL compiled by glslangValidator for Vulkan 1.3, which writes SPIR-V 1.6 with the
//!   workgroup size as `OpExecutionModeId LocalSizeId` and `gl_WorkGroupSize` as a constant,
//!   with shared memory, a barrier and a subgroup reduction;
//! * hand-written SPIR-V 1.6 with what 1.6 changed for compute: the integer dot products
//!   without their extension (core since 1.6), the `UniformId` decoration (1.6's scoped form
//!   of `Uniform`) on a value, the deprecated `WorkgroupSize` built-in on a constant, and
//!   `LocalSizeId` from specialisation-free constants.
//!
//! Assembled with spirv-as and checked by spirv-val; skipped without the tools.

mod sim_common;

use sim_common::*;

const GLSL_13: &str = r#"
#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer In { uint a[]; };
layout(std430, binding = 1) buffer Out { uint o[]; };
shared uint sh[64];
void main() {
    uint i = gl_GlobalInvocationID.x;
    sh[gl_LocalInvocationIndex] = a[i] * 2u;
    barrier();
    uint s = subgroupAdd(sh[gl_LocalInvocationIndex ^ 1u]);
    o[i] = s + gl_WorkGroupSize.x * 1000u;
}
"#;

#[test]
fn glslang_vulkan13_module_runs() {
    let Some(words) = glsl_env("spirv16_glsl", GLSL_13, "vulkan1.3") else {
        return;
    };
    // SPIR-V 1.6 in the header's version word.
    assert_eq!(
        words[1], 0x0001_0600,
        "glslang wrote version {:#x}",
        words[1]
    );
    let n = 128usize;
    let a: Vec<u32> = (0..n as u32).map(|i| i * 7 + 3).collect();
    for simd in [8, 16, 32] {
        let build = Build {
            bindings: 2,
            ..Build::default()
        };
        let k = kernel_words("spirv16_glsl", &words, simd, &build);
        assert_eq!(k.local_size, [64, 1, 1]);
        let out = run_buffers(&k, [2, 1, 1], &[a.clone(), vec![0; n]]);
        for (i, &got) in out[1].iter().enumerate() {
            // The subgroup is `simd` consecutive invocations of the workgroup; each reads its
            // neighbour's doubled value, which stays inside the subgroup.
            let base = i / simd as usize * simd as usize;
            let want: u32 = (base..base + simd as usize)
                .map(|j| a[j ^ 1] * 2)
                .sum::<u32>()
                + 64_000;
            assert_eq!(got, want, "SIMD{simd} invocation {i}");
        }
    }
}

const ASM_16: &str = "
OpCapability Shader
OpCapability DotProduct
OpCapability DotProductInput4x8BitPacked
OpCapability UniformDecoration
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %gid %buf %wgs_unused
OpExecutionModeId %main LocalSizeId %c16 %c1 %c1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %rta ArrayStride 4
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
OpDecorate %wgs BuiltIn WorkgroupSize
OpDecorateId %x UniformId %scope_sub
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%v3u32 = OpTypeVector %u32 3
%rta = OpTypeRuntimeArray %u32
%blk = OpTypeStruct %rta
%pblk = OpTypePointer StorageBuffer %blk
%pu = OpTypePointer StorageBuffer %u32
%pin3 = OpTypePointer Input %v3u32
%pprivate = OpTypePointer Private %u32
%buf = OpVariable %pblk StorageBuffer
%gid = OpVariable %pin3 Input
%wgs_unused = OpVariable %pprivate Private
%c0 = OpConstant %u32 0
%c1 = OpConstant %u32 1
%c16 = OpConstant %u32 16
%scope_sub = OpConstant %u32 3
%packed = OpConstant %u32 0x01020304
%wgs = OpConstantComposite %v3u32 %c16 %c1 %c1
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3u32 %gid
%i = OpCompositeExtract %u32 %g 0
%p = OpAccessChain %pu %buf %c0 %i
%x = OpLoad %u32 %p
%d = OpUDot %u32 %x %packed PackedVectorFormat4x8Bit
%w = OpCompositeExtract %u32 %wgs 0
%r = OpIAdd %u32 %d %w
OpStore %p %r
OpReturn
OpFunctionEnd
";

#[test]
fn spirv16_core_dot_product_uniform_id_and_workgroup_size_run() {
    let Some(words) = spirv_as("spirv16_asm", ASM_16, "spv1.6") else {
        return;
    };
    let n = 64usize;
    let x: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    for simd in [8, 16, 32] {
        let build = Build {
            bindings: 1,
            ..Build::default()
        };
        let k = kernel_words("spirv16_asm", &words, simd, &build);
        assert_eq!(k.local_size, [16, 1, 1]);
        let out = run_buffers(&k, [4, 1, 1], std::slice::from_ref(&x));
        for (i, (&xi, &got)) in x.iter().zip(&out[0]).enumerate() {
            let b = xi.to_le_bytes();
            // Bytes of 0x01020304 from the lowest: 4, 3, 2, 1.
            let want = u32::from(b[0]) * 4
                + u32::from(b[1]) * 3
                + u32::from(b[2]) * 2
                + u32::from(b[3])
                + 16;
            assert_eq!(got, want, "SIMD{simd} invocation {i}: x = {xi:#010x}");
        }
    }
}
