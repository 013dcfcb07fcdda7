//! Descriptor writes besides vkUpdateDescriptorSets, through the loader with validation:
//! VK_KHR_descriptor_update_template (a template over a descriptor array and a single
//! binding, with a stride and unaligned offsets in the application's data),
//! VK_KHR_push_descriptor (vkCmdPushDescriptorSetKHR and its template form, pushes between
//! dispatches of one command buffer) and VK_KHR_maintenance3 (vkGetDescriptorSetLayoutSupport
//! and the properties it reports).

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::{compute_binding, compute_layout, Harness};

const DEVICE_EXTS: [&std::ffi::CStr; 3] = [
    c"VK_KHR_descriptor_update_template",
    c"VK_KHR_push_descriptor",
    c"VK_KHR_maintenance3",
];

struct Ext {
    dut: ash::khr::descriptor_update_template::Device,
    pd: ash::khr::push_descriptor::Device,
    m3: ash::khr::maintenance3::Device,
    pdp2: ash::khr::get_physical_device_properties2::Instance,
}

fn ctx() -> (Ctx, Ext) {
    let h = Harness::with_instance_extensions(true, &[c"VK_KHR_get_physical_device_properties2"]);
    let pd = h.physical_device();
    let names: Vec<_> = DEVICE_EXTS.iter().map(|e| e.as_ptr()).collect();
    let info = vk::DeviceCreateInfo::default().enabled_extension_names(&names);
    let dev = h.create_device_with(pd, info);
    let e = Ext {
        dut: ash::khr::descriptor_update_template::Device::new(&h.instance, &dev),
        pd: ash::khr::push_descriptor::Device::new(&h.instance, &dev),
        m3: ash::khr::maintenance3::Device::new(&h.instance, &dev),
        pdp2: ash::khr::get_physical_device_properties2::Instance::new(&h.entry, &h.instance),
    };
    (Ctx::with_device(h, pd, dev), e)
}

/// o[i] = arr[0].v[i] + 10 * arr[1].v[i] + 100 * s[i]
const SHADER: &str = "#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer Arr { uint v[8]; } arr[2];
layout(set = 0, binding = 2) buffer S { uint s[8]; };
layout(set = 0, binding = 3) buffer O { uint o[8]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    o[i] = arr[0].v[i] + 10u * arr[1].v[i] + 100u * s[i];
}";

struct Objects {
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
}

fn objects(c: &Ctx, flags: vk::DescriptorSetLayoutCreateFlags) -> Objects {
    let code = spirv("descriptor_updates", Some(SHADER));
    let b = |binding, count| compute_binding(binding, vk::DescriptorType::STORAGE_BUFFER, count);
    let bindings = [b(0, 2), b(2, 1), b(3, 1)];
    // SAFETY: valid create infos on a live device; destroyed by `destroy`.
    unsafe {
        let (set_layout, layout) = compute_layout(&c.dev, &bindings, flags, 0).unwrap();
        let pipeline = c.pipeline(&code, layout).unwrap();
        Objects {
            set_layout,
            layout,
            pipeline,
        }
    }
}

fn destroy(c: &Ctx, o: Objects) {
    // SAFETY: no pending work uses them.
    unsafe {
        c.dev.destroy_pipeline(o.pipeline, None);
        c.dev.destroy_pipeline_layout(o.layout, None);
        c.dev.destroy_descriptor_set_layout(o.set_layout, None);
    }
}

/// Four input buffers with distinct contents (input k holds k * 8 + i + 1) and an output.
fn buffers(c: &mut Ctx) -> (Vec<usize>, usize) {
    let ins: Vec<usize> = (0..4u32)
        .map(|k| {
            let b = c.buffer(32);
            c.buf(b)
                .write_u32s(&(0..8).map(|i| k * 8 + i + 1).collect::<Vec<_>>());
            b
        })
        .collect();
    let out = zeroed(c, 8);
    (ins, out)
}

fn expect(c: &Ctx, out: usize, a0: u32, a1: u32, s: u32, what: &str) {
    let got = c.buf(out).read_u32s(8);
    let want: Vec<u32> = (0..8)
        .map(|i| (a0 * 8 + i + 1) + 10 * (a1 * 8 + i + 1) + 100 * (s * 8 + i + 1))
        .collect();
    assert_eq!(got, want, "{what}: inputs {a0}, {a1}, {s}");
}

/// Application data for a template: a 3-byte prefix (so nothing is aligned), then the four
/// VkDescriptorBufferInfos of bindings 0 (two elements), 2 and 3, `stride` bytes apart.
fn template_data(c: &Ctx, bufs: [usize; 4], stride: usize) -> Vec<u8> {
    let mut data = vec![0xAAu8; 3 + 4 * stride];
    for (k, &b) in bufs.iter().enumerate() {
        let info = vk::DescriptorBufferInfo {
            buffer: c.buf(b).buffer,
            offset: 0,
            range: vk::WHOLE_SIZE,
        };
        // SAFETY: plain data of the structure's size.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                (&info as *const vk::DescriptorBufferInfo).cast::<u8>(),
                std::mem::size_of::<vk::DescriptorBufferInfo>(),
            )
        };
        data[3 + k * stride..][..bytes.len()].copy_from_slice(bytes);
    }
    data
}

fn write(binding: u32, infos: &[vk::DescriptorBufferInfo]) -> vk::WriteDescriptorSet<'_> {
    vk::WriteDescriptorSet::default()
        .dst_binding(binding)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .buffer_info(infos)
}

fn create_template(
    c: &Ctx,
    e: &Ext,
    info: &vk::DescriptorUpdateTemplateCreateInfo<'_>,
) -> vk::DescriptorUpdateTemplate {
    let mut t = vk::DescriptorUpdateTemplate::null();
    // SAFETY: valid create info on a live device with the extension enabled.
    let r = unsafe {
        (e.dut.fp().create_descriptor_update_template_khr)(
            c.dev.handle(),
            info,
            std::ptr::null(),
            &mut t,
        )
    };
    assert_eq!(r, vk::Result::SUCCESS);
    t
}

fn template_entries(stride: usize) -> [vk::DescriptorUpdateTemplateEntry; 2] {
    // Bindings 0 (both elements) and 2 in one entry that runs on into binding 2, binding 3
    // in another.
    [
        vk::DescriptorUpdateTemplateEntry {
            dst_binding: 0,
            dst_array_element: 0,
            descriptor_count: 3,
            descriptor_type: vk::DescriptorType::STORAGE_BUFFER,
            offset: 3,
            stride,
        },
        vk::DescriptorUpdateTemplateEntry {
            dst_binding: 3,
            dst_array_element: 0,
            descriptor_count: 1,
            descriptor_type: vk::DescriptorType::STORAGE_BUFFER,
            offset: 3 + 3 * stride,
            stride,
        },
    ]
}

#[test]
fn update_template_writes_a_set() {
    let (mut c, e) = ctx();
    let (ins, out) = buffers(&mut c);
    let o = objects(&c, vk::DescriptorSetLayoutCreateFlags::empty());
    let stride = 40;
    let entries = template_entries(stride);
    // SAFETY: valid objects on a live device; everything destroyed here.
    unsafe {
        let (pool, sets) = pool_and_sets(
            &c,
            vk::DescriptorPoolCreateFlags::empty(),
            &[(vk::DescriptorType::STORAGE_BUFFER, 4)],
            &[o.set_layout],
            None,
        );
        let set = sets[0];
        let t = create_template(
            &c,
            &e,
            &vk::DescriptorUpdateTemplateCreateInfo::default()
                .descriptor_update_entries(&entries)
                .template_type(vk::DescriptorUpdateTemplateType::DESCRIPTOR_SET)
                .descriptor_set_layout(o.set_layout),
        );
        let data = template_data(&c, [ins[2], ins[0], ins[3], out], stride);
        (e.dut.fp().update_descriptor_set_with_template_khr)(
            c.dev.handle(),
            set,
            t,
            data.as_ptr().cast(),
        );
        c.run(|d, cb| {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, o.pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                o.layout,
                0,
                &[set],
                &[],
            );
            d.cmd_dispatch(cb, 1, 1, 1);
        })
        .unwrap();
        expect(&c, out, 2, 0, 3, "template");
        (e.dut.fp().destroy_descriptor_update_template_khr)(c.dev.handle(), t, std::ptr::null());
        c.dev.destroy_descriptor_pool(pool, None);
    }
    destroy(&c, o);
    c.finish();
}

#[test]
fn push_descriptors_between_dispatches() {
    let (mut c, e) = ctx();
    let (ins, out) = buffers(&mut c);
    let out2 = zeroed(&mut c, 8);
    let o = objects(&c, vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR);
    let stride = 32;
    let entries = template_entries(stride);
    let info = |b: usize| {
        [vk::DescriptorBufferInfo {
            buffer: c.buf(b).buffer,
            offset: 0,
            range: vk::WHOLE_SIZE,
        }]
    };
    let (i01, i3, o1) = ([info(ins[0])[0], info(ins[1])[0]], info(ins[3]), info(out));
    // SAFETY: valid objects on a live device; everything destroyed here.
    unsafe {
        let t = create_template(
            &c,
            &e,
            &vk::DescriptorUpdateTemplateCreateInfo::default()
                .descriptor_update_entries(&entries)
                .template_type(vk::DescriptorUpdateTemplateType::PUSH_DESCRIPTORS_KHR)
                .pipeline_bind_point(vk::PipelineBindPoint::COMPUTE)
                .pipeline_layout(o.layout)
                .set(0),
        );
        let data = template_data(&c, [ins[3], ins[2], ins[1], out2], stride);
        c.run(|d, cb| {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, o.pipeline);
            let writes = [write(0, &i01), write(2, &i3), write(3, &o1)];
            e.pd.cmd_push_descriptor_set(cb, vk::PipelineBindPoint::COMPUTE, o.layout, 0, &writes);
            d.cmd_dispatch(cb, 1, 1, 1);
            let b = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &b,
                &[],
                &[],
            );
            e.pd.cmd_push_descriptor_set_with_template(cb, t, o.layout, 0, data.as_ptr().cast());
            d.cmd_dispatch(cb, 1, 1, 1);
        })
        .unwrap();
        expect(&c, out, 0, 1, 3, "first push");
        expect(&c, out2, 3, 2, 1, "template push");
        (e.dut.fp().destroy_descriptor_update_template_khr)(c.dev.handle(), t, std::ptr::null());
    }
    destroy(&c, o);
    c.finish();
}

#[test]
fn layout_support_and_properties() {
    let (c, e) = ctx();
    let mut push = vk::PhysicalDevicePushDescriptorPropertiesKHR::default();
    let mut m3 = vk::PhysicalDeviceMaintenance3Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut push)
        .push_next(&mut m3);
    // SAFETY: valid chain for a live physical device.
    unsafe { e.pdp2.get_physical_device_properties2(c.pd, &mut p2) };
    let limits = p2.properties.limits;
    let per_set = m3.max_per_set_descriptors;
    assert!(
        push.max_push_descriptors >= 32,
        "{}",
        push.max_push_descriptors
    );
    assert!(per_set >= 1024.min(limits.max_per_stage_resources));
    assert!(m3.max_memory_allocation_size >= 1 << 30);
    let support = |count: u32| {
        let b = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(count)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let mut s = vk::DescriptorSetLayoutSupport::default();
        // SAFETY: valid create info on a live device.
        unsafe {
            e.m3.get_descriptor_set_layout_support(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&b),
                &mut s,
            )
        };
        s.supported == vk::TRUE
    };
    assert!(support(1));
    assert!(support(per_set));
    assert!(
        !support(per_set + 1),
        "one descriptor past maxPerSetDescriptors"
    );
    c.finish();
}
