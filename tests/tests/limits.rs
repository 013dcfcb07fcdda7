//! The descriptor limits of docs/limits.md through the loader with validation on the simulated
//! GPU: the reported limits equal the document's table; a shader with the maximum number of
//! storage buffers (an array of maxPerStageDescriptorStorageBuffers) writes each one, and one
//! with the maximum number of uniform buffers reads each one; 300 separately bound storage
//! buffers cross from the binding table into the descriptor table; a pipeline layout whose highest set index is
//! maxBoundDescriptorSets - 1 dispatches; a storage buffer of maxStorageBufferRange bytes is
//! bound whole and its last dword written (the allocation is anonymous memory that the
//! simulated kernel maps lazily, so only the touched pages are backed); one descriptor past the
//! limit is refused; maxDescriptorSetUniformBuffersDynamic dynamic uniform buffers read at their
//! dynamic offsets; a workgroup of maxComputeWorkGroupSize along each dimension in turn reports
//! every local id.

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::{compute_binding, compute_layout, storage_buffer_set};

/// Descriptors in one binding-table row: 251 descriptors fit in the binding table (the
/// compiler's `HwFacts::max_descriptor_btis`); 300 cross into the descriptor table.
const ACROSS_THE_TABLE: usize = 300;

fn doc_table() -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(ferrite_tests::icd::workspace_root().join("docs/limits.md"))
        .unwrap();
    text.lines()
        .filter(|l| l.starts_with("| max") || l.starts_with("| min"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[2].parse().unwrap())
        })
        .collect()
}

fn reported(l: &vk::PhysicalDeviceLimits, name: &str) -> u64 {
    match name {
        "maxPerStageDescriptorStorageBuffers" => l.max_per_stage_descriptor_storage_buffers.into(),
        "maxPerStageDescriptorUniformBuffers" => l.max_per_stage_descriptor_uniform_buffers.into(),
        "maxPerStageResources" => l.max_per_stage_resources.into(),
        "maxDescriptorSetStorageBuffers" => l.max_descriptor_set_storage_buffers.into(),
        "maxDescriptorSetStorageBuffersDynamic" => {
            l.max_descriptor_set_storage_buffers_dynamic.into()
        }
        "maxDescriptorSetUniformBuffers" => l.max_descriptor_set_uniform_buffers.into(),
        "maxDescriptorSetUniformBuffersDynamic" => {
            l.max_descriptor_set_uniform_buffers_dynamic.into()
        }
        "maxBoundDescriptorSets" => l.max_bound_descriptor_sets.into(),
        "maxStorageBufferRange" => l.max_storage_buffer_range.into(),
        "maxUniformBufferRange" => l.max_uniform_buffer_range.into(),
        "maxPushConstantsSize" => l.max_push_constants_size.into(),
        "maxComputeSharedMemorySize" => l.max_compute_shared_memory_size.into(),
        "maxComputeWorkGroupInvocations" => l.max_compute_work_group_invocations.into(),
        "maxMemoryAllocationCount" => l.max_memory_allocation_count.into(),
        "maxComputeWorkGroupSize[0]" => l.max_compute_work_group_size[0].into(),
        "maxComputeWorkGroupSize[1]" => l.max_compute_work_group_size[1].into(),
        "maxComputeWorkGroupSize[2]" => l.max_compute_work_group_size[2].into(),
        "maxComputeWorkGroupCount[0]" => l.max_compute_work_group_count[0].into(),
        "maxTexelBufferElements" => l.max_texel_buffer_elements.into(),
        "minStorageBufferOffsetAlignment" => l.min_storage_buffer_offset_alignment,
        "minUniformBufferOffsetAlignment" => l.min_uniform_buffer_offset_alignment,
        "minTexelBufferOffsetAlignment" => l.min_texel_buffer_offset_alignment,
        "maxPerStageDescriptorSamplers" => l.max_per_stage_descriptor_samplers.into(),
        "maxPerStageDescriptorSampledImages" => l.max_per_stage_descriptor_sampled_images.into(),
        "maxPerStageDescriptorStorageImages" => l.max_per_stage_descriptor_storage_images.into(),
        "maxDescriptorSetSamplers" => l.max_descriptor_set_samplers.into(),
        "maxDescriptorSetSampledImages" => l.max_descriptor_set_sampled_images.into(),
        "maxDescriptorSetStorageImages" => l.max_descriptor_set_storage_images.into(),
        "maxSamplerAllocationCount" => l.max_sampler_allocation_count.into(),
        other => panic!("docs/limits.md names {other}, which this test does not know"),
    }
}

fn limits(c: &Ctx) -> vk::PhysicalDeviceLimits {
    // SAFETY: live instance and physical device.
    unsafe { c.h.instance.get_physical_device_properties(c.pd) }.limits
}

#[test]
fn reported_limits_match_docs_limits_md() {
    let c = Ctx::new();
    let l = limits(&c);
    let table = doc_table();
    assert!(table.len() >= 10, "docs/limits.md table not found");
    for (name, value) in &table {
        assert_eq!(reported(&l, name), *value, "{name}");
    }
    c.finish();
}

/// `n` separately bound storage buffers, each written with its own length: the first 251
/// through the binding table, the rest through the descriptor table; with `dynamic_push`,
/// the shader also indexes push constants per invocation, so the kernel's push-constant
/// surface takes the binding-table entry after the last binding-table descriptor.
fn across_the_binding_table(dynamic_push: bool) {
    let mut c = Ctx::new();
    let n = ACROSS_THE_TABLE;
    assert!(n <= limits(&c).max_per_stage_descriptor_storage_buffers as usize);
    let mut src = String::from("#version 450\nlayout(local_size_x = 1) in;\n");
    src += "layout(push_constant) uniform P { uint v[4]; } pc;\n";
    for i in 0..n {
        src += &format!("layout(set = 0, binding = {i}) buffer B{i} {{ uint v[]; }} b{i};\n");
    }
    src += "void main() {\n";
    let add = if dynamic_push {
        "pc.v[gl_LocalInvocationIndex + 1u]"
    } else {
        "pc.v[1]"
    };
    for i in 0..n {
        src += &format!(
            "    b{i}.v[0] = {}u + uint(b{i}.v.length()) + {add};\n",
            1000 + i
        );
    }
    src += "}\n";
    let code = spirv("max_ssbos", Some(&src));
    let k = c.kernel(&code, n, 16);
    let bufs: Vec<usize> = (0..n).map(|_| c.buffer(16)).collect();
    c.bind(k, &bufs);
    let pushed: Vec<u8> = [0u32, 20000, 0, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        push(&c, cb, k, &pushed);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    for (i, &b) in bufs.iter().enumerate() {
        assert_eq!(
            c.buf(b).read_u32s(1)[0],
            1000 + i as u32 + 4 + 20000,
            "buffer {i}"
        );
    }
    c.finish();
}

#[test]
fn storage_buffers_across_the_binding_table() {
    across_the_binding_table(false);
}

#[test]
fn storage_buffers_across_the_binding_table_with_the_push_constant_surface() {
    across_the_binding_table(true);
}

/// A pipeline over one array binding of `n` descriptors of type `ty` (binding 0) and one
/// storage buffer (binding 1), its set written: element i covers 16 bytes at 64 * i of one
/// buffer, binding 1 the whole of another. Returns (kernel, array buffer, output buffer) as
/// handles the caller destroys with `destroy`.
struct ArrayKernel {
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    array: usize,
    out: usize,
}

fn array_kernel(c: &mut Ctx, code: &[u32], ty: vk::DescriptorType, n: u32) -> ArrayKernel {
    let array = c.buffer(64 * u64::from(n));
    let out = c.buffer(64);
    let bindings = [
        compute_binding(0, ty, n),
        compute_binding(1, vk::DescriptorType::STORAGE_BUFFER, 1),
    ];
    // SAFETY: valid create infos and writes on a live device; destroyed in `destroy`.
    unsafe {
        let (set_layout, layout) = compute_layout(
            &c.dev,
            &bindings,
            vk::DescriptorSetLayoutCreateFlags::empty(),
            0,
        )
        .unwrap();
        let pipeline = c.pipeline(code, layout).expect("vkCreateComputePipelines");
        let (pool, set) = ferrite_tests::icd::one_set_of(
            &c.dev,
            set_layout,
            &[(ty, n), (vk::DescriptorType::STORAGE_BUFFER, 1)],
        )
        .unwrap();
        let infos: Vec<vk::DescriptorBufferInfo> = (0..u64::from(n))
            .map(|i| vk::DescriptorBufferInfo {
                buffer: c.buf(array).buffer,
                offset: 64 * i,
                range: 16,
            })
            .collect();
        let out_info = [vk::DescriptorBufferInfo {
            buffer: c.buf(out).buffer,
            offset: 0,
            range: vk::WHOLE_SIZE,
        }];
        let writes = [
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(0)
                .descriptor_type(ty)
                .buffer_info(&infos),
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(1)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&out_info),
        ];
        c.dev.update_descriptor_sets(&writes, &[]);
        ArrayKernel {
            set_layout,
            layout,
            pipeline,
            pool,
            set,
            array,
            out,
        }
    }
}

impl ArrayKernel {
    /// Dispatches `groups` x 1 x 1 groups.
    fn run(&self, c: &Ctx, groups: u32) {
        c.run(|d, cb| {
            // SAFETY: recording into a live command buffer with live objects.
            unsafe {
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, self.pipeline);
                d.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::COMPUTE,
                    self.layout,
                    0,
                    &[self.set],
                    &[],
                );
                d.cmd_dispatch(cb, groups, 1, 1);
            }
        })
        .unwrap();
    }

    fn destroy(self, c: &Ctx) {
        // SAFETY: no command buffer using these is pending (`run` waits).
        unsafe {
            c.dev.destroy_descriptor_pool(self.pool, None);
            c.dev.destroy_pipeline(self.pipeline, None);
            c.dev.destroy_pipeline_layout(self.layout, None);
            c.dev.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// Groups of the array tests: group g serves elements g, g + GROUPS, ... (an index uniform in
/// the group, as an array index without NonUniform must be).
const GROUPS: u32 = 64;

#[test]
fn max_storage_buffers_in_one_stage() {
    let mut c = Ctx::new();
    let max = limits(&c).max_per_stage_descriptor_storage_buffers;
    assert!(max > 251, "not past the binding table");
    // The array and the output buffer: `max` storage buffers in all.
    let n = max - 1;
    let src = format!(
        "#version 450\nlayout(local_size_x = 1) in;\n\
         layout(set = 0, binding = 0) buffer B {{ uint v[]; }} b[{n}];\n\
         layout(set = 0, binding = 1) buffer O {{ uint v[]; }} o;\n\
         void main() {{\n\
             for (uint i = gl_WorkGroupID.x; i < {n}u; i += {GROUPS}u) {{\n\
                 b[i].v[1] = i * 3u + uint(b[i].v.length()) + b[i].v[0];\n\
                 b[i].v[7] = 1u;\n\
             }}\n\
             atomicAdd(o.v[0], 1u);\n\
         }}\n"
    );
    let code = spirv("max_ssbo_array", Some(&src));
    let k = array_kernel(&mut c, &code, vk::DescriptorType::STORAGE_BUFFER, n);
    let seeds: Vec<u32> = (0..16 * n)
        .map(|w| w.wrapping_mul(2_654_435_761) >> 8)
        .collect();
    c.buf(k.array).write_u32s(&seeds);
    k.run(&c, GROUPS);
    let words = c.buf(k.array).read_u32s(16 * n as usize);
    for i in 0..n as usize {
        let e = &words[16 * i..16 * i + 16];
        let want_1 = (i as u32 * 3).wrapping_add(4).wrapping_add(seeds[16 * i]);
        assert_eq!(e[1], want_1, "element {i}: v[1]");
        // v[7] lies past the 16-byte range: the store is dropped.
        assert_eq!(
            &e[2..],
            &seeds[16 * i + 2..16 * i + 16],
            "element {i}: outside its range"
        );
    }
    assert_eq!(c.buf(k.out).read_u32s(1)[0], GROUPS);
    k.destroy(&c);
    c.finish();
}

/// A workgroup of maxComputeWorkGroupSize[d] invocations along each dimension d in turn:
/// every invocation writes its LocalInvocationID and LocalInvocationIndex.
#[test]
fn largest_workgroup_along_each_dimension() {
    let mut c = Ctx::new();
    let l = limits(&c);
    for d in 0..3 {
        let n = l.max_compute_work_group_size[d];
        assert!(n <= l.max_compute_work_group_invocations);
        let mut size = [1u32; 3];
        size[d] = n;
        // Specialization constants: glslang refuses a literal z above its own default of 64.
        let src = "#version 450\n\
             layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;\n\
             layout(set = 0, binding = 0) buffer O { uvec4 o[]; };\n\
             void main() {\n\
                 uint i = gl_LocalInvocationIndex;\n\
                 o[i] = uvec4(gl_LocalInvocationID, i + 1u);\n\
             }\n";
        let code = spirv(&format!("largest_group_{d}"), Some(src));
        let spec = [(0, size[0]), (1, size[1]), (2, size[2])];
        let k = c
            .kernel_with(
                &code,
                &[vk::DescriptorType::STORAGE_BUFFER],
                0,
                &spec,
                vk::PipelineCache::null(),
            )
            .expect("vkCreateComputePipelines");
        let out = c.buffer(16 * u64::from(n));
        c.bind(k, &[out]);
        c.run(|_, cb| {
            c.bind_kernel(cb, k);
            dispatch(&c, cb, 1, 1);
        })
        .unwrap();
        let got = c.buf(out).read_u32s(4 * n as usize);
        for i in 0..n {
            let mut want = [0u32, 0, 0, i + 1];
            want[d] = i;
            let at = 4 * i as usize;
            assert_eq!(
                &got[at..at + 4],
                &want,
                "dimension {d}, invocation {i} of {n}"
            );
        }
    }
    c.finish();
}

#[test]
fn highest_set_index() {
    let mut c = Ctx::new();
    let sets = limits(&c).max_bound_descriptor_sets;
    assert!(sets > 4);
    let last = sets - 1;
    let src = format!(
        "#version 450\nlayout(local_size_x = 1) in;\n\
         layout(set = {last}, binding = 0) buffer B {{ uint v[]; }} b;\n\
         void main() {{ b.v[0] = {last}u + 7u; }}\n"
    );
    let code = spirv("highest_set", Some(&src));
    let buf = c.buffer(16);
    // SAFETY: valid create infos on a live device; everything destroyed below.
    unsafe {
        let d = &c.dev;
        let empty = d
            .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default(), None)
            .unwrap();
        let binding = [compute_binding(0, vk::DescriptorType::STORAGE_BUFFER, 1)];
        let one = d
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
                None,
            )
            .unwrap();
        let mut sls = vec![empty; last as usize];
        sls.push(one);
        let layout = d
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&sls),
                None,
            )
            .unwrap();
        let pipeline = c.pipeline(&code, layout).unwrap();
        let (pool, set) = storage_buffer_set(d, one, &[c.buf(buf).buffer]).unwrap();
        c.run(|d, cb| {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                layout,
                last,
                &[set],
                &[],
            );
            d.cmd_dispatch(cb, 1, 1, 1);
        })
        .unwrap();
        assert_eq!(c.buf(buf).read_u32s(1)[0], last + 7);
        d.destroy_descriptor_pool(pool, None);
        d.destroy_pipeline(pipeline, None);
        d.destroy_pipeline_layout(layout, None);
        d.destroy_descriptor_set_layout(one, None);
        d.destroy_descriptor_set_layout(empty, None);
    }
    c.finish();
}

#[test]
fn storage_buffer_of_the_largest_range() {
    let mut c = Ctx::new();
    let range = limits(&c).max_storage_buffer_range;
    assert!(range > 1 << 27);
    let code = spirv(
        "largest_range",
        Some(
            "#version 450\nlayout(local_size_x = 1) in;\n\
             layout(set = 0, binding = 0) buffer B { uint v[]; } b;\n\
             void main() { uint n = uint(b.v.length()); b.v[n - 1u] = n; b.v[0] = 5u; }\n",
        ),
    );
    let k = c.kernel(&code, 1, 0);
    let b = c.buffer(u64::from(range));
    c.bind(k, &[b]);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    let buf = c.buf(b);
    // SAFETY: the buffer maps `range` bytes.
    let last = unsafe {
        buf.ptr
            .add(range as usize - 4)
            .cast::<u32>()
            .read_volatile()
    };
    assert_eq!(last, range / 4);
    assert_eq!(buf.read_u32s(1)[0], 5);
    c.finish();
}

#[test]
fn one_descriptor_past_the_limit_is_refused() {
    // Without validation: the layer would (rightly) report the invalid layout.
    let h = ferrite_tests::icd::Harness::with_instance_extensions(
        false,
        &[ash::khr::get_physical_device_properties2::NAME],
    );
    let pd = h.physical_device();
    let dev = h.create_device(pd);
    // SAFETY: live instance and device.
    let n = unsafe { h.instance.get_physical_device_properties(pd) }
        .limits
        .max_per_stage_descriptor_storage_buffers;
    let binding = [compute_binding(0, vk::DescriptorType::STORAGE_BUFFER, n)];
    let one = [compute_binding(0, vk::DescriptorType::STORAGE_BUFFER, 1)];
    // Two sets of n and 1 storage buffers: each set layout is made, the pipeline layout over
    // both (n + 1 in one stage) is refused.
    // SAFETY: valid create infos on a live device; what is made here is destroyed here.
    unsafe {
        let make = |b: &[vk::DescriptorSetLayoutBinding]| {
            dev.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(b),
                None,
            )
            .expect("a set within the limits")
        };
        let sls = [make(&binding), make(&one)];
        let r = dev.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default().set_layouts(&sls),
            None,
        );
        assert_eq!(r.err(), Some(vk::Result::ERROR_OUT_OF_HOST_MEMORY));
        let r = dev.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default().set_layouts(&sls[..1]),
            None,
        );
        dev.destroy_pipeline_layout(r.expect("maxPerStageDescriptorStorageBuffers"), None);
        for s in sls {
            dev.destroy_descriptor_set_layout(s, None);
        }
    }
    // One descriptor past maxPerSetDescriptors is refused by the set layout itself.
    let mut props = vk::PhysicalDeviceMaintenance3Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
    let gpdp2 = ash::khr::get_physical_device_properties2::Instance::new(&h.entry, &h.instance);
    // SAFETY: live instance with the extension enabled.
    unsafe { gpdp2.get_physical_device_properties2(pd, &mut p2) };
    let per_set = props.max_per_set_descriptors;
    assert_eq!(per_set, n, "maxPerSetDescriptors");
    let binding = [binding[0].descriptor_count(per_set + 1)];
    // SAFETY: valid create info on a live device.
    let r = unsafe {
        dev.create_descriptor_set_layout(
            &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
            None,
        )
    };
    assert_eq!(r.err(), Some(vk::Result::ERROR_OUT_OF_HOST_MEMORY));
    // SAFETY: nothing else lives on the device.
    unsafe { ferrite_tests::icd::destroy_device(&dev) };
}

#[test]
fn max_uniform_buffers_in_one_stage() {
    let mut c = Ctx::new();
    let max = limits(&c).max_per_stage_descriptor_uniform_buffers;
    assert!(max > 251, "not past the binding table");
    // The array and the output buffer: `max` descriptors in one stage, as
    // maxPerStageResources allows.
    let n = max - 1;
    let src = format!(
        "#version 450\nlayout(local_size_x = 1) in;\n\
         layout(set = 0, binding = 0) uniform U {{ uvec4 v; }} u[{n}];\n\
         layout(set = 0, binding = 1) buffer O {{ uint v[]; }} o;\n\
         void main() {{\n\
             uint s = 0u;\n\
             for (uint i = gl_WorkGroupID.x; i < {n}u; i += {GROUPS}u) {{\n\
                 s += u[i].v.y * (i + 1u);\n\
             }}\n\
             atomicAdd(o.v[0], s);\n\
         }}\n"
    );
    let code = spirv("max_ubo_array", Some(&src));
    let k = array_kernel(&mut c, &code, vk::DescriptorType::UNIFORM_BUFFER, n);
    let mut words = vec![0u32; 16 * n as usize];
    let mut want = 0u32;
    for i in 0..n {
        let v = i.wrapping_mul(2_654_435_761) >> 12;
        words[16 * i as usize + 1] = v;
        want = want.wrapping_add(v.wrapping_mul(i + 1));
    }
    c.buf(k.array).write_u32s(&words);
    k.run(&c, GROUPS);
    assert_eq!(c.buf(k.out).read_u32s(1)[0], want);
    k.destroy(&c);
    c.finish();
}

/// Uniform buffers bound one per binding across the binding table: 299 uniform buffers and
/// a storage buffer.
#[test]
fn uniform_buffers_across_the_binding_table() {
    let mut c = Ctx::new();
    let n = ACROSS_THE_TABLE;
    // n - 1 uniform buffers and one storage buffer for the result: n descriptors in all.
    let mut src = String::from("#version 450\nlayout(local_size_x = 1) in;\n");
    let mut types = Vec::new();
    for i in 0..n - 1 {
        src += &format!("layout(set = 0, binding = {i}) uniform U{i} {{ uvec4 v; }} u{i};\n");
        types.push(vk::DescriptorType::UNIFORM_BUFFER);
    }
    src += &format!(
        "layout(set = 0, binding = {}) buffer O {{ uint v[]; }} o;\n",
        n - 1
    );
    types.push(vk::DescriptorType::STORAGE_BUFFER);
    src += "void main() {\n    uint s = 0u;\n";
    for i in 0..n - 1 {
        src += &format!("    s += u{i}.v.y * {}u;\n", i + 1);
    }
    src += "    o.v[0] = s;\n}\n";
    let code = spirv("max_ubos", Some(&src));
    let k = c
        .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
        .expect("vkCreateComputePipelines");
    let bufs: Vec<usize> = (0..n).map(|_| c.buffer(16)).collect();
    let mut want = 0u32;
    for (i, &b) in bufs[..n - 1].iter().enumerate() {
        let v = 3 + i as u32;
        c.buf(b).write_u32s(&[0, v, 0, 0]);
        want = want.wrapping_add(v * (i as u32 + 1));
    }
    c.bind_typed(k, &bufs, &types);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    assert_eq!(c.buf(bufs[n - 1]).read_u32s(1)[0], want);
    c.finish();
}

#[test]
fn max_dynamic_storage_buffers() {
    let mut c = Ctx::new();
    let n = limits(&c).max_descriptor_set_storage_buffers_dynamic as usize;
    assert!(n > 4, "still the spec's minimum");
    let mut src = String::from("#version 450\nlayout(local_size_x = 1) in;\n");
    for i in 0..n {
        src += &format!("layout(set = 0, binding = {i}) buffer B{i} {{ uint v[]; }} b{i};\n");
    }
    src += "void main() {\n";
    for i in 0..n {
        src += &format!("    b{i}.v[0] = {}u + uint(b{i}.v.length());\n", 500 + i);
    }
    src += "}\n";
    let code = spirv("max_dyn_ssbos", Some(&src));
    let types = vec![vk::DescriptorType::STORAGE_BUFFER_DYNAMIC; n];
    let k = c
        .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
        .expect("vkCreateComputePipelines");
    // 128-byte buffers bound with 16-byte ranges (bind_typed) at dynamic offset 64 each.
    let bufs: Vec<usize> = (0..n).map(|_| c.buffer(128)).collect();
    c.bind_typed(k, &bufs, &types);
    let offsets = vec![64u32; n];
    c.run(|_, cb| {
        c.bind_kernel_at(cb, k, &offsets);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    for (i, &b) in bufs.iter().enumerate() {
        let words = c.buf(b).read_u32s(32);
        assert!(
            words[..16].iter().chain(&words[17..]).all(|&w| w == 0),
            "buffer {i}: written outside its dynamic range: {words:?}"
        );
        assert_eq!(words[16], 500 + i as u32 + 4, "buffer {i}");
    }
    c.finish();
}

/// maxDescriptorSetUniformBuffersDynamic dynamic uniform buffers in one set, each read at its
/// dynamic offset (64 bytes into its buffer, where its value is; word 0 holds a decoy), and a
/// storage buffer for the result, which lands past the binding table.
#[test]
fn max_dynamic_uniform_buffers() {
    let mut c = Ctx::new();
    let n = limits(&c).max_descriptor_set_uniform_buffers_dynamic as usize;
    assert!(n > 8, "still the spec's minimum");
    let mut src = String::from("#version 450\nlayout(local_size_x = 1) in;\n");
    for i in 0..n {
        src += &format!("layout(set = 0, binding = {i}) uniform U{i} {{ uvec4 v; }} u{i};\n");
    }
    src += &format!("layout(set = 0, binding = {n}) buffer O {{ uint o[4]; }};\n");
    src += "void main() {\n    uint s = 0u;\n    uint t = 0u;\n";
    for i in 0..n {
        src += &format!("    s += u{i}.v.x * {}u;\n    t += u{i}.v.y;\n", i + 1);
    }
    src += "    o[0] = s;\n    o[1] = t;\n}\n";
    let code = spirv("max_dyn_ubos", Some(&src));
    let mut types = vec![vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC; n];
    types.push(vk::DescriptorType::STORAGE_BUFFER);
    let k = c
        .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
        .expect("vkCreateComputePipelines");
    let bufs: Vec<usize> = (0..=n).map(|_| c.buffer(128)).collect();
    for (i, &b) in bufs.iter().take(n).enumerate() {
        let mut words = vec![0u32; 32];
        words[0] = 77_777;
        words[16] = 1000 + i as u32;
        c.buf(b).write_u32s(&words);
    }
    c.bind_typed(k, &bufs, &types);
    let offsets = vec![64u32; n];
    c.run(|_, cb| {
        c.bind_kernel_at(cb, k, &offsets);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    let want: u32 = (0..n as u32).map(|i| (1000 + i) * (i + 1)).sum();
    let got = c.buf(bufs[n]).read_u32s(2);
    assert_eq!(
        got,
        vec![want, 0],
        "weighted sum of the values at the dynamic offsets"
    );
    c.finish();
}

#[test]
fn uniform_buffer_of_the_largest_range() {
    let mut c = Ctx::new();
    let range = limits(&c).max_uniform_buffer_range;
    assert!(range > 1 << 16);
    // The front end takes arrays of at most 2^24 elements, so the block is four arrays
    // of uvec4 that together span `range` bytes.
    let vecs = range / 64;
    let src = format!(
        "#version 450\nlayout(local_size_x = 1) in;\n\
         layout(set = 0, binding = 0) buffer O {{ uint v[]; }} o;\n\
         layout(set = 0, binding = 1) uniform U {{ uvec4 a[{vecs}]; uvec4 b[{vecs}]; \
         uvec4 c[{vecs}]; uvec4 d[{vecs}]; }} u;\n\
         void main() {{ o.v[0] = u.d[{last}].w + u.a[0].x; }}\n",
        last = vecs - 1
    );
    let code = spirv("largest_ubo", Some(&src));
    let types = [
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::UNIFORM_BUFFER,
    ];
    let k = c
        .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
        .expect("vkCreateComputePipelines");
    let o = c.buffer(16);
    let u = c.buffer(u64::from(range));
    let ub = c.buf(u);
    ub.write_u32s(&[11]);
    // SAFETY: the buffer maps `range` bytes.
    unsafe {
        ub.ptr
            .add(range as usize - 4)
            .cast::<u32>()
            .write_volatile(1 << 20)
    };
    c.bind_typed(k, &[o, u], &types);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    assert_eq!(c.buf(o).read_u32s(1)[0], (1 << 20) + 11);
    c.finish();
}

/// Many memory objects alive at once: 8192 (twice the spec's minimum maxMemoryAllocationCount),
/// or 60000 with `FERRITE_LIMITS_FULL=1`; each is written through its mapping and read back
/// after all exist.
#[test]
fn many_memory_allocations_at_once() {
    let c = Ctx::new();
    let max = limits(&c).max_memory_allocation_count;
    let full = std::env::var_os("FERRITE_LIMITS_FULL").is_some_and(|v| v == "1");
    let n: u32 = if full { 60_000 } else { 8192 };
    assert!(max >= n, "maxMemoryAllocationCount {max}");
    let mut mems = Vec::with_capacity(n as usize);
    // SAFETY: valid allocate infos on a live device; every object is freed below.
    unsafe {
        for i in 0..n {
            let m = c
                .dev
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(4096)
                        .memory_type_index(c.mem_type),
                    None,
                )
                .unwrap_or_else(|e| panic!("allocation {i} of {n}: {e:?}"));
            let p = c
                .dev
                .map_memory(m, 0, 4096, vk::MemoryMapFlags::empty())
                .unwrap();
            p.cast::<u32>().write_volatile(i ^ 0x5A5A_5A5A);
            c.dev.unmap_memory(m);
            mems.push(m);
        }
        for (i, &m) in mems.iter().enumerate() {
            let p = c
                .dev
                .map_memory(m, 0, 4096, vk::MemoryMapFlags::empty())
                .unwrap();
            assert_eq!(
                p.cast::<u32>().read_volatile(),
                i as u32 ^ 0x5A5A_5A5A,
                "allocation {i}"
            );
            c.dev.unmap_memory(m);
            c.dev.free_memory(m, None);
        }
    }
    c.finish();
}
