//! The Vulkan memory model on the simulated GPU at SIMD8/16/32: GLSL with
//! `#pragma use_vulkan_memory_model` (glslangValidator --target-env vulkan1.2: `OpMemoryModel
//! Logical Vulkan`, `MakePointerAvailable` / `MakePointerVisible` / `NonPrivatePointer` memory
//! operands, acquire/release atomics at QueueFamily and Device scope, barriers with
//! availability and visibility semantics) compiles, computes the right values, and carries a
//! data-port fence for every availability, visibility, acquire and release the module asks
//! for (docs/memory-model.md). The simulator executes memory messages in order, so the
//! values alone cannot show a missing fence; the fence count in the kernel does.

mod sim_common;

use sim_common::*;

const MESSAGE_PASSING: &str = r#"
#version 450
#pragma use_vulkan_memory_model
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) coherent buffer Data { uint data[]; };
layout(std430, binding = 1) buffer Flags { uint flag[]; };
layout(std430, binding = 2) buffer Out { uint res[]; };
shared uint sh[64];
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint l = gl_LocalInvocationID.x;
    data[i] = i * 3u + 1u;
    atomicStore(flag[i], 1u, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
                gl_SemanticsRelease | gl_SemanticsMakeAvailable);
    sh[l] = i;
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup,
                   gl_StorageSemanticsShared | gl_StorageSemanticsBuffer,
                   gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible);
    uint j = (l ^ 5u) + gl_WorkGroupID.x * 64u;
    uint f = atomicLoad(flag[j], gl_ScopeDevice, gl_StorageSemanticsBuffer,
                        gl_SemanticsAcquire | gl_SemanticsMakeVisible);
    uint d = data[j];
    memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
    res[i] = f * 1000000u + d * 100u + (sh[l ^ 5u] - gl_WorkGroupID.x * 64u);
}
"#;

/// The same computation without any memory-model operation: relaxed atomics, no coherent
/// buffer, a barrier with no memory semantics. It must compile without a fence, so the
/// fences counted above come from the memory-model operations.
const RELAXED: &str = r#"
#version 450
#pragma use_vulkan_memory_model
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { uint data[]; };
layout(std430, binding = 1) buffer Flags { uint flag[]; };
layout(std430, binding = 2) buffer Out { uint res[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    data[i] = i * 3u + 1u;
    atomicStore(flag[i], 1u, gl_ScopeDevice, 0, 0);
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, 0, 0);
    uint j = (gl_LocalInvocationID.x ^ 5u) + gl_WorkGroupID.x * 64u;
    uint f = atomicLoad(flag[j], gl_ScopeDevice, 0, 0);
    res[i] = f;
}
"#;

fn fences(k: &ferrite_compiler::Kernel) -> usize {
    k.asm.matches("DC mfence").count()
}

#[test]
fn memory_model_shader_computes_and_fences_each_availability_and_visibility() {
    let build = Build {
        env: "vulkan1.2",
        bindings: 3,
        ..Build::default()
    };
    let n = 128usize;
    let init = [vec![0u32; n], vec![0u32; n], vec![0u32; n]];
    at_each_simd(
        "memory_model_message_passing",
        MESSAGE_PASSING,
        &build,
        [2, 1, 1],
        &init,
        |simd, k, out| {
            for (i, &got) in out[2].iter().enumerate() {
                let l = i % 64;
                let j = (l ^ 5) + i / 64 * 64;
                let want = 1_000_000 + (j as u32 * 3 + 1) * 100 + (l ^ 5) as u32;
                assert_eq!(got, want, "SIMD{simd} invocation {i}");
            }
            // The store to the coherent buffer (available after), the release atomic store
            // (release before, make-available after), the store to shared memory (available
            // after, workgroup scope), the control barrier's semantics, the acquire atomic
            // load (make-visible before, acquire after), the coherent load (visible before),
            // the memory barrier and the load from shared memory (visible before, workgroup
            // scope: shared memory is coherent under this model): 10 memory barriers, each
            // one fence on a SIMD8 header.
            assert_eq!(fences(k), 10, "SIMD{simd} fences\n{}", k.asm);
            assert!(k.uses_barrier);
        },
    );
    at_each_simd(
        "memory_model_relaxed",
        RELAXED,
        &build,
        [2, 1, 1],
        &init,
        |simd, k, out| {
            // Relaxed: 0 or 1 are both allowed values.
            assert!(out[2].iter().all(|&f| f <= 1), "SIMD{simd}: {:?}", out[2]);
            assert_eq!(fences(k), 0, "SIMD{simd} fences\n{}", k.asm);
        },
    );
}
