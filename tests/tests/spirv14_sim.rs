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

/// OpPtrDiff between pointers to elements of one storage-buffer array: of `uint`s (stride 4)
/// and of a 16-byte-strided struct, the pointer type decorated with its ArrayStride as
/// variable pointers require; the result counts elements, negative when the first pointer
/// is the lower one.
const PTR_DIFF: &str = "
OpCapability Shader
OpCapability VariablePointersStorageBuffer
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\" %gid %in %out %st
OpExecutionMode %main LocalSize 16 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %rta ArrayStride 4
OpMemberDecorate %blk 0 Offset 0
OpDecorate %blk Block
OpDecorate %in DescriptorSet 0
OpDecorate %in Binding 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 1
OpDecorate %st DescriptorSet 0
OpDecorate %st Binding 2
OpMemberDecorate %s 0 Offset 0
OpMemberDecorate %s 1 Offset 4
OpDecorate %rts ArrayStride 16
OpMemberDecorate %sblk 0 Offset 0
OpDecorate %sblk Block
OpDecorate %ps ArrayStride 16
OpDecorate %pu ArrayStride 4
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%i32 = OpTypeInt 32 1
%v3u32 = OpTypeVector %u32 3
%rta = OpTypeRuntimeArray %u32
%blk = OpTypeStruct %rta
%s = OpTypeStruct %u32 %u32
%rts = OpTypeRuntimeArray %s
%sblk = OpTypeStruct %rts
%pblk = OpTypePointer StorageBuffer %blk
%psblk = OpTypePointer StorageBuffer %sblk
%pu = OpTypePointer StorageBuffer %u32
%ps = OpTypePointer StorageBuffer %s
%pin3 = OpTypePointer Input %v3u32
%in = OpVariable %pblk StorageBuffer
%out = OpVariable %pblk StorageBuffer
%st = OpVariable %psblk StorageBuffer
%gid = OpVariable %pin3 Input
%c0 = OpConstant %u32 0
%c1000 = OpConstant %i32 1000
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3u32 %gid
%i = OpCompositeExtract %u32 %g 0
%pi = OpAccessChain %pu %in %c0 %i
%x = OpLoad %u32 %pi
%px = OpAccessChain %pu %in %c0 %x
%d = OpPtrDiff %i32 %px %pi
%sx = OpAccessChain %ps %st %c0 %x
%si = OpAccessChain %ps %st %c0 %i
%e = OpPtrDiff %i32 %si %sx
%e1000 = OpIMul %i32 %e %c1000
%r = OpIAdd %i32 %d %e1000
%ru = OpBitcast %u32 %r
%o = OpAccessChain %pu %out %c0 %i
OpStore %o %ru
OpReturn
OpFunctionEnd
";

#[test]
fn ptr_diff_counts_elements_of_the_pointee() {
    let Some(words) = spirv_as("ptr_diff", PTR_DIFF, "vulkan1.2") else {
        return;
    };
    let build = Build {
        bindings: 3,
        ..Build::default()
    };
    let n = 64usize;
    let xs: Vec<u32> = (0..n as u32).map(|i| (i * 37 + 11) % n as u32).collect();
    for simd in [8, 16, 32] {
        let k = kernel_words("ptr_diff", &words, simd, &build);
        let out = run_buffers(&k, [4, 1, 1], &[xs.clone(), vec![0; n], vec![0; 4 * n]]);
        for (i, (&x, &got)) in xs.iter().zip(&out[1]).enumerate() {
            let d = x as i32 - i as i32;
            let want = d + (i as i32 - x as i32) * 1000;
            assert_eq!(
                got as i32, want,
                "SIMD{simd} invocation {i}: x = {x}: PtrDiff(in[x], in[i]) + 1000 * PtrDiff(st[i], st[x])"
            );
        }
    }
}
