//! SPIR-V 1.4 instructions on the simulated GPU at SIMD8/16/32: OpPtrEqual / OpPtrNotEqual on
//! storage-buffer pointers (same buffer, same or different element; different buffers), in a
//! module whose entry point lists every global variable, as SPIR-V 1.4 requires. Assembled with
//! spirv-as for Vulkan 1.2 (SPIR-V 1.5) and checked by spirv-val; skipped when the tools are not
//! installed.

mod sim_common;

use sim_common::*;

const PTR_EQUAL: &str = "
OpCapability Shader
OpCapability VariablePointersStorageBuffer
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %gid %in %out
OpExecutionMode %main LocalSize 16 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %rta ArrayStride 4
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %in DescriptorSet 0
OpDecorate %in Binding 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%bool = OpTypeBool
%v3u32 = OpTypeVector %u32 3
%rta = OpTypeRuntimeArray %u32
%blk = OpTypeStruct %rta
%pblk = OpTypePointer StorageBuffer %blk
%pu = OpTypePointer StorageBuffer %u32
%pin3 = OpTypePointer Input %v3u32
%in = OpVariable %pblk StorageBuffer
%out = OpVariable %pblk StorageBuffer
%gid = OpVariable %pin3 Input
%c0 = OpConstant %u32 0
%c1 = OpConstant %u32 1
%c2 = OpConstant %u32 2
%c4 = OpConstant %u32 4
%c8 = OpConstant %u32 8
%cm = OpConstant %u32 4294967294
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3u32 %gid
%i = OpCompositeExtract %u32 %g 0
%v = OpAccessChain %pu %in %c0 %i
%x = OpLoad %u32 %v
%even = OpBitwiseAnd %u32 %i %cm
%data = OpAccessChain %pu %in %c0 %x
%pair = OpAccessChain %pu %in %c0 %even
%same = OpPtrEqual %bool %data %pair
%other = OpAccessChain %pu %out %c0 %x
%diff = OpPtrNotEqual %bool %data %other
%self = OpPtrEqual %bool %v %v
%s0 = OpSelect %u32 %same %c1 %c0
%s1 = OpSelect %u32 %diff %c2 %c0
%s2 = OpSelect %u32 %self %c4 %c0
%t0 = OpBitwiseOr %u32 %s0 %s1
%t1 = OpBitwiseOr %u32 %t0 %s2
%o = OpAccessChain %pu %out %c0 %i
OpStore %o %t1
OpReturn
OpFunctionEnd
";

#[test]
fn ptr_equal_compares_space_and_offset() {
    let Some(words) = spirv_as("ptr_equal", PTR_EQUAL, "vulkan1.2") else {
        return;
    };
    let build = Build {
        bindings: 2,
        ..Build::default()
    };
    // in[i] = a data-dependent element index (fixed pattern); the pointer to in[in[i]] equals
    // the one to in[i & ~1] exactly when in[i] == i & ~1.
    let n = 64usize;
    let xs: Vec<u32> = (0..n as u32).map(|i| (i * 7 + 3) % 5 + (i & !7)).collect();
    let equal = (0..n).filter(|&i| xs[i] == (i as u32 & !1)).count();
    assert!(
        equal > 0 && equal < n,
        "both outcomes occur: {equal} of {n} equal"
    );
    for simd in [8, 16, 32] {
        let k = kernel_words("ptr_equal", &words, simd, &build);
        let out = run_buffers(&k, [4, 1, 1], &[xs.clone(), vec![0; n]]);
        for i in 0..n {
            let same = xs[i] == (i as u32 & !1);
            let want = u32::from(same) | 2 | 4;
            assert_eq!(
                out[1][i], want,
                "SIMD{simd} invocation {i}: in[i] = {}: bit 0 = PtrEqual(in[in[i]], in[i & ~1]), \
                 bit 1 = PtrNotEqual(in[in[i]], out[in[i]]), bit 2 = PtrEqual(p, p)",
                xs[i]
            );
        }
    }
}
