//! Descriptor indexing (VK_EXT_descriptor_indexing), through the loader with validation on the
//! simulated GPU, against a CPU model written here: the feature and property bits, including
//! every feature the spec requires with descriptorIndexing and the extension's listing; a runtime
//! descriptor array with PARTIALLY_BOUND and holes (only some elements written, only those
//! read); a variable-count binding (VkDescriptorSetVariableDescriptorCountAllocateInfo) and
//! vkGetDescriptorSetLayoutSupport's maxVariableDescriptorCount; a runtime array of storage
//! buffers that crosses from the binding table into the descriptor table (after 250 uniform
//! buffers), indexed with NonUniform indices; runtime arrays of uniform and storage texel
//! buffers, partially bound and with a variable count. Update-after-bind is in
//! update_after_bind.rs and descriptor_inline_update_after_bind.rs. The AmberScript files
//! tests/amber/desc_runtime_* and desc_texel_* cover the same paths (ferrite-only where lavapipe
//! lacks the features; its 32 storage buffers per stage rule out the binding-table crossing
//! there).

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::{compute_binding, Harness};

/// A context whose device enables the descriptor-indexing features this file uses.
fn indexing_ctx() -> Ctx {
    let h = Harness::with_api_version(true, &[], vk::API_VERSION_1_2);
    let mut di = vk::PhysicalDeviceDescriptorIndexingFeatures::default()
        .runtime_descriptor_array(true)
        .descriptor_binding_partially_bound(true)
        .descriptor_binding_variable_descriptor_count(true)
        .shader_storage_buffer_array_non_uniform_indexing(true)
        .shader_uniform_buffer_array_non_uniform_indexing(true)
        .shader_uniform_texel_buffer_array_dynamic_indexing(true)
        .shader_storage_texel_buffer_array_dynamic_indexing(true)
        .shader_uniform_texel_buffer_array_non_uniform_indexing(true)
        .shader_storage_texel_buffer_array_non_uniform_indexing(true);
    let features = vk::PhysicalDeviceFeatures::default()
        .shader_storage_buffer_array_dynamic_indexing(true)
        .shader_uniform_buffer_array_dynamic_indexing(true);
    let info = vk::DeviceCreateInfo::default()
        .enabled_features(&features)
        .push_next(&mut di);
    Ctx::with_create_info(h, info)
}

#[test]
fn descriptor_indexing_features_and_properties() {
    let c = indexing_ctx();
    let mut di = vk::PhysicalDeviceDescriptorIndexingFeatures::default();
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut di)
        .push_next(&mut v12);
    // SAFETY: live instance and physical device, a valid chain.
    unsafe { c.h.instance.get_physical_device_features2(c.pd, &mut f2) };
    let f10 = f2.features;
    for (name, ext, core, want) in [
        (
            "runtimeDescriptorArray",
            di.runtime_descriptor_array,
            v12.runtime_descriptor_array,
            true,
        ),
        (
            "descriptorBindingPartiallyBound",
            di.descriptor_binding_partially_bound,
            v12.descriptor_binding_partially_bound,
            true,
        ),
        (
            "descriptorBindingVariableDescriptorCount",
            di.descriptor_binding_variable_descriptor_count,
            v12.descriptor_binding_variable_descriptor_count,
            true,
        ),
        (
            "shaderStorageBufferArrayNonUniformIndexing",
            di.shader_storage_buffer_array_non_uniform_indexing,
            v12.shader_storage_buffer_array_non_uniform_indexing,
            true,
        ),
        (
            "shaderUniformBufferArrayNonUniformIndexing",
            di.shader_uniform_buffer_array_non_uniform_indexing,
            v12.shader_uniform_buffer_array_non_uniform_indexing,
            true,
        ),
        // Update-after-bind works (batches are built at submit: update_after_bind.rs).
        (
            "descriptorBindingStorageBufferUpdateAfterBind",
            di.descriptor_binding_storage_buffer_update_after_bind,
            v12.descriptor_binding_storage_buffer_update_after_bind,
            true,
        ),
        (
            "shaderUniformTexelBufferArrayDynamicIndexing",
            di.shader_uniform_texel_buffer_array_dynamic_indexing,
            v12.shader_uniform_texel_buffer_array_dynamic_indexing,
            true,
        ),
        (
            "shaderStorageTexelBufferArrayDynamicIndexing",
            di.shader_storage_texel_buffer_array_dynamic_indexing,
            v12.shader_storage_texel_buffer_array_dynamic_indexing,
            true,
        ),
        (
            "shaderUniformTexelBufferArrayNonUniformIndexing",
            di.shader_uniform_texel_buffer_array_non_uniform_indexing,
            v12.shader_uniform_texel_buffer_array_non_uniform_indexing,
            true,
        ),
        (
            "shaderStorageTexelBufferArrayNonUniformIndexing",
            di.shader_storage_texel_buffer_array_non_uniform_indexing,
            v12.shader_storage_texel_buffer_array_non_uniform_indexing,
            true,
        ),
        // Input attachments do not exist in compute.
        (
            "shaderInputAttachmentArrayNonUniformIndexing",
            di.shader_input_attachment_array_non_uniform_indexing,
            v12.shader_input_attachment_array_non_uniform_indexing,
            false,
        ),
    ] {
        assert_eq!(ext, core, "{name}: extension and 1.2 structures disagree");
        assert_eq!(ext == vk::TRUE, want, "{name}");
    }
    assert_eq!(v12.descriptor_indexing, vk::TRUE, "descriptorIndexing");
    // Every feature vk.xml requires with descriptorIndexing (VK_VERSION_1_2, "Feature
    // requirements"), read back from the device.
    for (name, on) in [
        (
            "shaderSampledImageArrayDynamicIndexing",
            f10.shader_sampled_image_array_dynamic_indexing,
        ),
        (
            "shaderStorageBufferArrayDynamicIndexing",
            f10.shader_storage_buffer_array_dynamic_indexing,
        ),
        (
            "shaderSampledImageArrayNonUniformIndexing",
            v12.shader_sampled_image_array_non_uniform_indexing,
        ),
        (
            "descriptorBindingSampledImageUpdateAfterBind",
            v12.descriptor_binding_sampled_image_update_after_bind,
        ),
        (
            "descriptorBindingStorageImageUpdateAfterBind",
            v12.descriptor_binding_storage_image_update_after_bind,
        ),
        (
            "descriptorBindingUniformTexelBufferUpdateAfterBind",
            v12.descriptor_binding_uniform_texel_buffer_update_after_bind,
        ),
        (
            "descriptorBindingStorageTexelBufferUpdateAfterBind",
            v12.descriptor_binding_storage_texel_buffer_update_after_bind,
        ),
        (
            "descriptorBindingUpdateUnusedWhilePending",
            v12.descriptor_binding_update_unused_while_pending,
        ),
    ] {
        assert_eq!(on, vk::TRUE, "{name} is required with descriptorIndexing");
    }
    // And the extension is listed.
    // SAFETY: live instance and physical device.
    let exts = unsafe { c.h.instance.enumerate_device_extension_properties(c.pd) }.unwrap();
    assert!(
        exts.iter()
            .any(|e| e.extension_name_as_c_str() == Ok(c"VK_EXT_descriptor_indexing")),
        "VK_EXT_descriptor_indexing listed"
    );
    let mut dp = vk::PhysicalDeviceDescriptorIndexingProperties::default();
    let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut dp)
        .push_next(&mut p12);
    // SAFETY: as above.
    unsafe { c.h.instance.get_physical_device_properties2(c.pd, &mut p2) };
    let l = p2.properties.limits;
    assert_eq!(
        dp.max_per_stage_update_after_bind_resources,
        p12.max_per_stage_update_after_bind_resources
    );
    // The update-after-bind counts cover every descriptor (with or without the flag), so
    // they are the ordinary limits.
    assert_eq!(
        dp.max_per_stage_update_after_bind_resources,
        l.max_per_stage_resources
    );
    assert_eq!(
        dp.max_per_stage_descriptor_update_after_bind_storage_buffers,
        l.max_per_stage_descriptor_storage_buffers
    );
    assert_eq!(
        p12.max_descriptor_set_update_after_bind_uniform_buffers_dynamic,
        l.max_descriptor_set_uniform_buffers_dynamic
    );
    assert_eq!(dp.robust_buffer_access_update_after_bind, vk::TRUE);
    assert_eq!(
        dp.shader_storage_buffer_array_non_uniform_indexing_native,
        vk::FALSE
    );
    assert_eq!(dp.quad_divergent_implicit_lod, vk::FALSE);
    c.finish();
}

/// A set layout of (binding, type, count, flags) rows and a pipeline layout of that set.
fn flagged_layout(
    c: &Ctx,
    rows: &[(u32, vk::DescriptorType, u32, vk::DescriptorBindingFlags)],
) -> (vk::DescriptorSetLayout, vk::PipelineLayout) {
    let bindings: Vec<_> = rows
        .iter()
        .map(|&(b, ty, n, _)| compute_binding(b, ty, n))
        .collect();
    let flags: Vec<_> = rows.iter().map(|r| r.3).collect();
    set_and_pipeline_layout(
        c,
        vk::DescriptorSetLayoutCreateFlags::empty(),
        &bindings,
        Some(&flags),
    )
}

/// A pool for one set of `sizes` and that set of `set_layout`, with `variable` as its
/// variable descriptor count when given.
fn alloc_set(
    c: &Ctx,
    set_layout: vk::DescriptorSetLayout,
    sizes: &[(vk::DescriptorType, u32)],
    variable: Option<u32>,
) -> (vk::DescriptorPool, vk::DescriptorSet) {
    let counts = variable.map(|v| [v]);
    let (pool, sets) = pool_and_sets(
        c,
        vk::DescriptorPoolCreateFlags::empty(),
        sizes,
        &[set_layout],
        counts.as_ref().map(|c| &c[..]),
    );
    (pool, sets[0])
}

/// Writes `ranges` (buffer index, offset, range) as consecutive elements of `binding` from
/// element `first` on.
fn write(
    c: &Ctx,
    set: vk::DescriptorSet,
    binding: u32,
    first: u32,
    ty: vk::DescriptorType,
    ranges: &[(usize, u64, u64)],
) {
    let infos: Vec<_> = ranges
        .iter()
        .map(|&(b, offset, range)| vk::DescriptorBufferInfo {
            buffer: c.buf(b).buffer,
            offset,
            range,
        })
        .collect();
    let w = vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(binding)
        .dst_array_element(first)
        .descriptor_type(ty)
        .buffer_info(&infos);
    // SAFETY: a live set not in use, valid buffer infos.
    unsafe { c.dev.update_descriptor_sets(&[w], &[]) };
}

/// Binds `set` with `layout` and `pipeline` and dispatches `groups` groups, waiting for it.
fn run(
    c: &Ctx,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set: vk::DescriptorSet,
    groups: u32,
) {
    c.run(|d, cb| {
        // SAFETY: recording into a live command buffer with live objects.
        unsafe {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            d.cmd_dispatch(cb, groups, 1, 1);
        }
    })
    .unwrap();
}

fn destroy(
    c: &Ctx,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
) {
    // SAFETY: nothing pending uses these (`run` waits).
    unsafe {
        c.dev.destroy_pipeline(pipeline, None);
        c.dev.destroy_descriptor_pool(pool, None);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
    }
}

const SSBO: vk::DescriptorType = vk::DescriptorType::STORAGE_BUFFER;
const UBO: vk::DescriptorType = vk::DescriptorType::UNIFORM_BUFFER;

/// The elements of the 16-element runtime array that are written; the others stay holes.
const WRITTEN: [u32; 5] = [1, 4, 6, 11, 15];

#[test]
fn partially_bound_runtime_array_with_holes() {
    let mut c = indexing_ctx();
    let src = "#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 40) in;
layout(set = 0, binding = 0) buffer O { uint o[40]; };
layout(set = 0, binding = 1) buffer A { uint n; uint v[15]; } arr[];
const uint written[5] = uint[](1u, 4u, 6u, 11u, 15u);
void main() {
    uint i = gl_LocalInvocationID.x;
    uint k = written[(i * 3u + i / 7u) % 5u];
    o[i] = arr[nonuniformEXT(k)].v[i % 15u] + k * 1000u;
    atomicAdd(arr[nonuniformEXT(k)].n, 1u);
}";
    let code = spirv_env("partially_bound", Some(src), "vulkan1.2");
    let pb = vk::DescriptorBindingFlags::PARTIALLY_BOUND;
    let (set_layout, layout) = flagged_layout(
        &c,
        &[
            (0, SSBO, 1, vk::DescriptorBindingFlags::empty()),
            (1, SSBO, 16, pb),
        ],
    );
    let pipeline = c.pipeline(&code, layout).expect("vkCreateComputePipelines");
    let (pool, set) = alloc_set(&c, set_layout, &[(SSBO, 17)], None);
    let out = zeroed(&mut c, 40);
    // Element k covers 64 bytes at 256 * k of one buffer; only the WRITTEN ones are written.
    let arr = c.buffer(256 * 16);
    let seeds = random_u32s(16, 64 * 16);
    let seeds: Vec<u32> = seeds.iter().map(|s| s % 100_000).collect();
    c.buf(arr).write_u32s(&seeds);
    write(&c, set, 0, 0, SSBO, &[(out, 0, vk::WHOLE_SIZE)]);
    for &k in &WRITTEN {
        write(&c, set, 1, k, SSBO, &[(arr, 256 * u64::from(k), 64)]);
    }
    run(&c, pipeline, layout, set, 1);
    let got = c.buf(out).read_u32s(40);
    let words = c.buf(arr).read_u32s(64 * 16);
    let mut count = [0u32; 16];
    for (i, g) in got.iter().enumerate() {
        let k = WRITTEN[(i * 3 + i / 7) % 5] as usize;
        count[k] += 1;
        let want = seeds[64 * k + 1 + i % 15] + 1000 * k as u32;
        assert_eq!(*g, want, "invocation {i}, element {k} (seed 16)");
    }
    for k in 0..16 {
        assert_eq!(
            words[64 * k],
            seeds[64 * k] + count[k],
            "counter of element {k} (holes stay untouched)"
        );
    }
    destroy(&c, pipeline, layout, set_layout, pool);
    c.finish();
}

#[test]
fn variable_descriptor_count() {
    let mut c = indexing_ctx();
    // The layout allows 1000 uniform buffers in the last binding; the set has 7.
    let vdc = vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT;
    let bindings = [compute_binding(0, SSBO, 1), compute_binding(1, UBO, 1000)];
    let flags = [vk::DescriptorBindingFlags::empty(), vdc];
    let mut fi = vk::DescriptorSetLayoutBindingFlagsCreateInfo::default().binding_flags(&flags);
    let info = vk::DescriptorSetLayoutCreateInfo::default()
        .bindings(&bindings)
        .push_next(&mut fi);
    let mut vs = vk::DescriptorSetVariableDescriptorCountLayoutSupport::default();
    let mut support = vk::DescriptorSetLayoutSupport::default().push_next(&mut vs);
    // SAFETY: a valid create info and output chain on a live device.
    unsafe { c.dev.get_descriptor_set_layout_support(&info, &mut support) };
    assert_eq!(support.supported, vk::TRUE);
    let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut p11);
    // SAFETY: live instance and physical device.
    unsafe { c.h.instance.get_physical_device_properties2(c.pd, &mut p2) };
    assert_eq!(
        vs.max_variable_descriptor_count,
        p11.max_per_set_descriptors - 1,
        "what maxPerSetDescriptors leaves after binding 0"
    );
    let (set_layout, layout) =
        flagged_layout(&c, &[(0, SSBO, 1, flags[0]), (1, UBO, 1000, flags[1])]);
    let src = "#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 21) in;
layout(set = 0, binding = 0) buffer O { uint o[21]; };
layout(set = 0, binding = 1) uniform U { uvec4 u[4]; } arr[];
void main() {
    uint i = gl_LocalInvocationID.x;
    uint k = (i * 5u) % 7u;
    o[i] = arr[nonuniformEXT(k)].u[i % 4u].y;
}";
    let code = spirv_env("variable_count", Some(src), "vulkan1.2");
    let pipeline = c.pipeline(&code, layout).expect("vkCreateComputePipelines");
    let (pool, set) = alloc_set(&c, set_layout, &[(SSBO, 1), (UBO, 7)], Some(7));
    let out = zeroed(&mut c, 21);
    let ubos = c.buffer(256 * 7);
    let seeds = random_u32s(7, 64 * 7);
    c.buf(ubos).write_u32s(&seeds);
    write(&c, set, 0, 0, SSBO, &[(out, 0, vk::WHOLE_SIZE)]);
    let ranges: Vec<_> = (0..7u64).map(|k| (ubos, 256 * k, 64)).collect();
    write(&c, set, 1, 0, UBO, &ranges);
    run(&c, pipeline, layout, set, 1);
    let got = c.buf(out).read_u32s(21);
    for (i, g) in got.iter().enumerate() {
        let k = (i * 5) % 7;
        let want = seeds[64 * k + 4 * (i % 4) + 1];
        assert_eq!(*g, want, "invocation {i}, element {k} (seed 7)");
    }
    destroy(&c, pipeline, layout, set_layout, pool);
    c.finish();
}

#[test]
fn runtime_array_across_the_binding_table() {
    let mut c = indexing_ctx();
    // 250 uniform buffers take binding-table entries 0-249; the runtime array's 8 storage
    // buffers take slots 250-257: the first in the binding table, the rest in the
    // descriptor table.
    const PAD: u32 = 250;
    const N: u32 = 8;
    let src = format!(
        "#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform P {{ uint x; }} pad[{PAD}];
layout(set = 0, binding = 1) buffer A {{ uint v[64]; }} arr[];
void main() {{
    uint i = gl_LocalInvocationID.x;
    uint g = gl_WorkGroupID.x;
    uint k = (i * 3u + g) % {N}u;
    arr[nonuniformEXT(k)].v[i] += pad[g * 61u].x + k;
}}"
    );
    let code = spirv_env("runtime_across", Some(&src), "vulkan1.2");
    let (set_layout, layout) = flagged_layout(
        &c,
        &[
            (0, UBO, PAD, vk::DescriptorBindingFlags::empty()),
            (1, SSBO, N, vk::DescriptorBindingFlags::empty()),
        ],
    );
    let pipeline = c.pipeline(&code, layout).expect("vkCreateComputePipelines");
    let (pool, set) = alloc_set(&c, set_layout, &[(UBO, PAD), (SSBO, N)], None);
    let ubo = c.buffer(256 * u64::from(PAD));
    let pad: Vec<u32> = (0..64 * PAD)
        .map(|w| if w % 64 == 0 { w / 64 * 10 } else { 0 })
        .collect();
    c.buf(ubo).write_u32s(&pad);
    let ranges: Vec<_> = (0..u64::from(PAD)).map(|k| (ubo, 256 * k, 16)).collect();
    write(&c, set, 0, 0, UBO, &ranges);
    let arr = zeroed(&mut c, 64 * N as usize);
    let ranges: Vec<_> = (0..u64::from(N)).map(|k| (arr, 256 * k, 256)).collect();
    write(&c, set, 1, 0, SSBO, &ranges);
    const GROUPS: u32 = 4;
    // Lane i of group g adds to element (3i + g) % 8: with 4 groups no two groups touch the
    // same (element, lane), so the read-modify-writes do not race.
    run(&c, pipeline, layout, set, GROUPS);
    let mut want = vec![0u32; 64 * N as usize];
    for g in 0..GROUPS {
        for i in 0..64 {
            let k = (i * 3 + g) % N;
            want[(64 * k + i) as usize] += g * 61 * 10 + k;
        }
    }
    let got = c.buf(arr).read_u32s(64 * N as usize);
    for (w, (g, e)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, e, "element {} word {}", w / 64, w % 64);
    }
    destroy(&c, pipeline, layout, set_layout, pool);
    c.finish();
}

const UTB: vk::DescriptorType = vk::DescriptorType::UNIFORM_TEXEL_BUFFER;
const STB: vk::DescriptorType = vk::DescriptorType::STORAGE_TEXEL_BUFFER;

/// Views of `buffer` as R32_UINT, `texels` texels each, at `offset(k)` bytes, written as
/// elements `elements` of `binding` (binding number, descriptor type).
fn write_texel_views(
    c: &Ctx,
    set: vk::DescriptorSet,
    (binding, ty): (u32, vk::DescriptorType),
    buffer: vk::Buffer,
    elements: &[u32],
    texels: u64,
    offset: impl Fn(u32) -> u64,
) -> Vec<vk::BufferView> {
    let views: Vec<_> = elements
        .iter()
        .map(|&k| {
            // SAFETY: a valid create info on a live device; destroyed by the caller.
            unsafe {
                c.dev.create_buffer_view(
                    &vk::BufferViewCreateInfo::default()
                        .buffer(buffer)
                        .format(vk::Format::R32_UINT)
                        .offset(offset(k))
                        .range(4 * texels),
                    None,
                )
            }
            .unwrap()
        })
        .collect();
    for (&k, v) in elements.iter().zip(&views) {
        let vs = [*v];
        let w = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(binding)
            .dst_array_element(k)
            .descriptor_type(ty)
            .texel_buffer_view(&vs);
        // SAFETY: a live set not in use, a live view.
        unsafe { c.dev.update_descriptor_sets(&[w], &[]) };
    }
    views
}

/// Elements of the 8-element uniform-texel-buffer array that are written.
const UTB_WRITTEN: [u32; 3] = [0, 3, 6];
/// Elements of the storage-texel-buffer array (variable count 6 of a layout's 32) that are
/// written; 3 stays a hole.
const STB_WRITTEN: [u32; 5] = [0, 1, 2, 4, 5];

#[test]
fn texel_buffer_runtime_arrays_partially_bound_variable_count() {
    let mut c = indexing_ctx();
    let src = "#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 48) in;
layout(set = 0, binding = 0) buffer O { uint o[48]; };
layout(set = 0, binding = 1) uniform usamplerBuffer u[];
layout(set = 0, binding = 2, r32ui) uniform uimageBuffer s[];
const uint uw[3] = uint[](0u, 3u, 6u);
const uint sw[5] = uint[](0u, 1u, 2u, 4u, 5u);
void main() {
    uint i = gl_LocalInvocationID.x;
    uint a = uw[(i * 5u + i / 4u) % 3u];
    uint b = sw[(i * 7u + 1u) % 5u];
    o[i] = texelFetch(u[nonuniformEXT(a)], int(i)).x + imageSize(s[nonuniformEXT(b)]) * 1000000u;
    imageAtomicAdd(s[nonuniformEXT(b)], int(i % 16u), i + 1u);
}";
    let code = spirv_env("texel_arrays", Some(src), "vulkan1.2");
    let pb = vk::DescriptorBindingFlags::PARTIALLY_BOUND;
    let vdc = vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT;
    let (set_layout, layout) = flagged_layout(
        &c,
        &[
            (0, SSBO, 1, vk::DescriptorBindingFlags::empty()),
            (1, UTB, 8, pb),
            (2, STB, 32, pb | vdc),
        ],
    );
    let pipeline = c.pipeline(&code, layout).expect("vkCreateComputePipelines");
    let (pool, set) = alloc_set(&c, set_layout, &[(SSBO, 1), (UTB, 8), (STB, 6)], Some(6));
    let out = zeroed(&mut c, 48);
    write(&c, set, 0, 0, SSBO, &[(out, 0, vk::WHOLE_SIZE)]);
    // Uniform element k: 64 texels at byte 256 * k; storage element k: 16 texels at 64 * k.
    const SEED_U: u32 = 31;
    const SEED_S: u32 = 32;
    let u_words: Vec<u32> = random_u32s(SEED_U, 64 * 8)
        .iter()
        .map(|w| w % 1_000_000)
        .collect();
    let s_words: Vec<u32> = random_u32s(SEED_S, 16 * 6)
        .iter()
        .map(|w| w % 1_000_000)
        .collect();
    let ub = texel_buffer(&c, &u_words);
    let sb = texel_buffer(&c, &s_words);
    let mut views = write_texel_views(&c, set, (1, UTB), ub.0, &UTB_WRITTEN, 64, |k| {
        256 * u64::from(k)
    });
    views.extend(write_texel_views(
        &c,
        set,
        (2, STB),
        sb.0,
        &STB_WRITTEN,
        16,
        |k| 64 * u64::from(k),
    ));
    run(&c, pipeline, layout, set, 1);
    let got = c.buf(out).read_u32s(48);
    let mut want_s = s_words.clone();
    for (i, g) in got.iter().enumerate() {
        let a = UTB_WRITTEN[(i * 5 + i / 4) % 3] as usize;
        let b = STB_WRITTEN[(i * 7 + 1) % 5] as usize;
        want_s[16 * b + i % 16] += i as u32 + 1;
        let want = u_words[64 * a + i] + 16_000_000;
        assert_eq!(
            *g, want,
            "invocation {i}: uniform element {a}, storage element {b} (seeds {SEED_U}, {SEED_S})"
        );
    }
    let got_s = read_texels(&c, sb.1, 16 * 6);
    for (w, (g, e)) in got_s.iter().zip(&want_s).enumerate() {
        assert_eq!(
            g,
            e,
            "storage element {} texel {} (the hole, element 3, stays as written; seed {SEED_S})",
            w / 16,
            w % 16
        );
    }
    destroy(&c, pipeline, layout, set_layout, pool);
    // SAFETY: the submission completed (`run` waits).
    unsafe {
        for v in views {
            c.dev.destroy_buffer_view(v, None);
        }
        for (b, m) in [ub, sb] {
            c.dev.destroy_buffer(b, None);
            c.dev.free_memory(m, None);
        }
    }
    c.finish();
}
