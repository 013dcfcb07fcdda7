//! VK_KHR_maintenance4 (core in Vulkan 1.3) through the loader with validation: the
//! create-info memory-requirement queries agree with the object queries for every buffer
//! usage and every image format, type, tiling, usage and flag combination the driver reports
//! as supported; the size guarantees of the extension; maxBufferSize reported and honoured;
//! LocalSizeId with specialization constants; a pipeline layout destroyed right after use.

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::Harness;

/// Debian's validation layer (1.3.2xx) can crash in `vkCreateDevice` while another thread
/// runs `vkGetDeviceImageSparseMemoryRequirements` through it on another device (seen about
/// once in 50 runs: SIGSEGV inside the layer, under `create_device`). The tests of this file
/// hold this lock so that none creates a device while another queries; they take 0.2 s in all.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A context whose device enables VK_KHR_maintenance4 and its feature.
fn ctx() -> Ctx {
    let mut m4 = vk::PhysicalDeviceMaintenance4Features::default().maintenance4(true);
    Ctx::with_extension(c"VK_KHR_maintenance4", &mut m4)
}

/// (size, alignment, memoryTypeBits, prefersDedicated, requiresDedicated).
type Req = (u64, u64, u32, u32, u32);

fn req_of(m: vk::MemoryRequirements, d: &vk::MemoryDedicatedRequirements) -> Req {
    (
        m.size,
        m.alignment,
        m.memory_type_bits,
        d.prefers_dedicated_allocation,
        d.requires_dedicated_allocation,
    )
}

/// Dedicated-requirement members start at a value no driver writes, so an unanswered chained
/// structure shows.
fn dedicated() -> vk::MemoryDedicatedRequirements<'static> {
    vk::MemoryDedicatedRequirements {
        prefers_dedicated_allocation: 7,
        requires_dedicated_allocation: 7,
        ..Default::default()
    }
}

fn buffer_device_req(m4: &ash::khr::maintenance4::Device, ci: &vk::BufferCreateInfo) -> Req {
    let mut d = dedicated();
    let mut r = vk::MemoryRequirements2::default().push_next(&mut d);
    let info = vk::DeviceBufferMemoryRequirements::default().create_info(ci);
    // SAFETY: a valid create info on a device with the extension enabled.
    unsafe { m4.get_device_buffer_memory_requirements(&info, &mut r) };
    let m = r.memory_requirements;
    req_of(m, &d)
}

fn buffer_object_req(dev: &ash::Device, ci: &vk::BufferCreateInfo) -> Req {
    // SAFETY: a valid create info on a live device; the buffer is destroyed here.
    unsafe {
        let b = dev.create_buffer(ci, None).expect("vkCreateBuffer");
        let mut d = dedicated();
        let mut r = vk::MemoryRequirements2::default().push_next(&mut d);
        dev.get_buffer_memory_requirements2(
            &vk::BufferMemoryRequirementsInfo2::default().buffer(b),
            &mut r,
        );
        let m = r.memory_requirements;
        let out = req_of(m, &d);
        dev.destroy_buffer(b, None);
        out
    }
}

#[test]
fn device_buffer_requirements_match_the_buffer_objects() {
    let _serial = serial();
    let c = ctx();
    let m4 = ash::khr::maintenance4::Device::new(&c.h.instance, &c.dev);
    let usages = [
        vk::BufferUsageFlags::TRANSFER_SRC,
        vk::BufferUsageFlags::TRANSFER_DST,
        vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
        vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER,
        vk::BufferUsageFlags::UNIFORM_BUFFER,
        vk::BufferUsageFlags::STORAGE_BUFFER,
        vk::BufferUsageFlags::INDIRECT_BUFFER,
    ];
    let all = usages
        .iter()
        .fold(vk::BufferUsageFlags::empty(), |a, u| a | *u);
    let sizes: [u64; 12] = [
        1,
        2,
        3,
        4,
        5,
        63,
        64,
        1000,
        4097,
        (1 << 20) + 3,
        1 << 30,
        1 << 32,
    ];
    let mut checked = 0;
    for usage in usages.iter().copied().chain([all]) {
        let mut alignment = None;
        let mut prev: Option<(u64, u64)> = None;
        for &size in &sizes {
            let ci = vk::BufferCreateInfo::default().size(size).usage(usage);
            let dq = buffer_device_req(&m4, &ci);
            let oq = buffer_object_req(&c.dev, &ci);
            assert_eq!(
                dq, oq,
                "usage {usage:?} size {size}: device query vs object"
            );
            assert_eq!((dq.3, dq.4), (0, 0), "dedicated members answered");
            let (rsize, align) = (dq.0, dq.1);
            assert!(
                align.is_power_of_two(),
                "usage {usage:?}: alignment {align}"
            );
            // The same usage and flags give the same alignment (core guarantee).
            assert_eq!(*alignment.get_or_insert(align), align, "usage {usage:?}");
            // maintenance4: never more than the create size aligned to the alignment, and
            // never more than a buffer of a greater size needs.
            assert!(
                rsize >= size && rsize <= size.next_multiple_of(align),
                "size {size}: {rsize}"
            );
            if let Some((ps, pr)) = prev {
                assert!(ps <= size && pr <= rsize, "{ps} -> {pr}, {size} -> {rsize}");
            }
            prev = Some((size, rsize));
            checked += 1;
        }
    }
    println!("{checked} buffer create infos");
    c.finish();
}

/// Every (format, type, tiling, usage, flags) the driver reports through
/// vkGetPhysicalDeviceImageFormatProperties, with its properties.
fn supported_images(c: &Ctx) -> Vec<(vk::ImageCreateInfo<'static>, vk::ImageFormatProperties)> {
    let usages = [
        vk::ImageUsageFlags::TRANSFER_SRC,
        vk::ImageUsageFlags::TRANSFER_DST,
        vk::ImageUsageFlags::SAMPLED,
        vk::ImageUsageFlags::STORAGE,
        vk::ImageUsageFlags::TRANSFER_SRC
            | vk::ImageUsageFlags::TRANSFER_DST
            | vk::ImageUsageFlags::SAMPLED,
        vk::ImageUsageFlags::TRANSFER_SRC
            | vk::ImageUsageFlags::TRANSFER_DST
            | vk::ImageUsageFlags::SAMPLED
            | vk::ImageUsageFlags::STORAGE,
    ];
    let mut out = Vec::new();
    // The core formats of Vulkan 1.0 (VK_FORMAT_UNDEFINED + 1 ..= ASTC_12x12_SRGB).
    for f in 1..=184 {
        let format = vk::Format::from_raw(f);
        for ty in [
            vk::ImageType::TYPE_1D,
            vk::ImageType::TYPE_2D,
            vk::ImageType::TYPE_3D,
        ] {
            for tiling in [vk::ImageTiling::LINEAR, vk::ImageTiling::OPTIMAL] {
                for usage in usages {
                    for flags in [
                        vk::ImageCreateFlags::empty(),
                        vk::ImageCreateFlags::MUTABLE_FORMAT,
                        vk::ImageCreateFlags::CUBE_COMPATIBLE,
                    ] {
                        // SAFETY: a live physical device.
                        let p = unsafe {
                            c.h.instance.get_physical_device_image_format_properties(
                                c.pd, format, ty, tiling, usage, flags,
                            )
                        };
                        if let Ok(p) = p {
                            let ci = vk::ImageCreateInfo::default()
                                .image_type(ty)
                                .format(format)
                                .tiling(tiling)
                                .usage(usage)
                                .flags(flags)
                                .samples(vk::SampleCountFlags::TYPE_1)
                                .initial_layout(vk::ImageLayout::UNDEFINED);
                            out.push((ci, p));
                        }
                    }
                }
            }
        }
    }
    out
}

fn image_device_req(m4: &ash::khr::maintenance4::Device, ci: &vk::ImageCreateInfo) -> (Req, u32) {
    let mut d = dedicated();
    let mut r = vk::MemoryRequirements2::default().push_next(&mut d);
    let info = vk::DeviceImageMemoryRequirements::default().create_info(ci);
    // SAFETY: a valid create info on a device with the extension enabled.
    let sparse = unsafe {
        m4.get_device_image_memory_requirements(&info, &mut r);
        m4.get_device_image_sparse_memory_requirements_len(&info)
    };
    let m = r.memory_requirements;
    (req_of(m, &d), sparse as u32)
}

fn image_object_req(dev: &ash::Device, ci: &vk::ImageCreateInfo) -> (Req, u32) {
    // SAFETY: a valid create info on a live device; the image is destroyed here.
    unsafe {
        let img = dev.create_image(ci, None).expect("vkCreateImage");
        let mut d = dedicated();
        let mut r = vk::MemoryRequirements2::default().push_next(&mut d);
        dev.get_image_memory_requirements2(
            &vk::ImageMemoryRequirementsInfo2::default().image(img),
            &mut r,
        );
        let m = r.memory_requirements;
        let out = req_of(m, &d);
        let sparse = dev.get_image_sparse_memory_requirements(img).len() as u32;
        dev.destroy_image(img, None);
        (out, sparse)
    }
}

#[test]
fn device_image_requirements_match_the_image_objects() {
    let _serial = serial();
    let c = ctx();
    let m4 = ash::khr::maintenance4::Device::new(&c.h.instance, &c.dev);
    let images = supported_images(&c);
    assert!(
        images.len() > 100,
        "only {} supported image combinations",
        images.len()
    );
    let mut formats = std::collections::BTreeSet::new();
    let mut checked = 0;
    for (ci, p) in &images {
        formats.insert(ci.format.as_raw());
        let cube = ci.flags.contains(vk::ImageCreateFlags::CUBE_COMPATIBLE);
        // Extents from small to large (each no smaller than the one before in every
        // dimension), clamped to the type and the format's limits.
        let dims = |w: u32, h: u32, d: u32| match ci.image_type {
            vk::ImageType::TYPE_1D => vk::Extent3D::default().width(w).height(1).depth(1),
            vk::ImageType::TYPE_2D if cube => vk::Extent3D::default().width(w).height(w).depth(1),
            vk::ImageType::TYPE_2D => vk::Extent3D::default().width(w).height(h).depth(1),
            _ => vk::Extent3D::default().width(w).height(h).depth(d),
        };
        // A cube-compatible image has at least six layers.
        let (few, many) = if ci.image_type == vk::ImageType::TYPE_3D {
            (1, 1)
        } else if cube {
            (6, 12)
        } else {
            (1, 3.min(p.max_array_layers))
        };
        for (mips, layers) in [(1, few), (3.min(p.max_mip_levels), many)] {
            let mut prev: Option<u64> = None;
            let mut alignment = None;
            for (w, h, d) in [
                (4, 4, 4),
                (5, 7, 4),
                (33, 17, 5),
                (64, 64, 8),
                (257, 131, 9),
            ] {
                let e = dims(w, h, d);
                if e.width > p.max_extent.width
                    || e.height > p.max_extent.height
                    || e.depth > p.max_extent.depth
                {
                    continue;
                }
                let info = vk::ImageCreateInfo {
                    extent: e,
                    mip_levels: mips,
                    array_layers: layers,
                    ..*ci
                };
                let (dq, ds) = image_device_req(&m4, &info);
                let (oq, os) = image_object_req(&c.dev, &info);
                let what = format!(
                    "{:?} {:?} {:?} {:?} {:?} {}x{}x{} {mips} levels {layers} layers",
                    info.format,
                    info.image_type,
                    info.tiling,
                    info.usage,
                    info.flags,
                    e.width,
                    e.height,
                    e.depth
                );
                assert_eq!(dq, oq, "{what}: device query vs object");
                assert_eq!((dq.3, dq.4), (0, 0), "{what}: dedicated members answered");
                assert_eq!((ds, os), (0, 0), "{what}: no sparse requirements");
                assert!(dq.1.is_power_of_two(), "{what}: alignment {}", dq.1);
                // The layout's alignment depends on format and tiling, not on the extent.
                assert_eq!(*alignment.get_or_insert(dq.1), dq.1, "{what}");
                // maintenance4: a larger extent never needs less memory.
                if let Some(ps) = prev {
                    assert!(ps <= dq.0, "{what}: {ps} bytes before, {} now", dq.0);
                }
                prev = Some(dq.0);
                checked += 1;
            }
        }
    }
    println!(
        "{checked} image create infos over {} supported combinations of {} formats",
        images.len(),
        formats.len()
    );
    c.finish();
}

#[test]
fn max_buffer_size_is_reported_and_a_buffer_of_it_works() {
    let _serial = serial();
    let c = ctx();
    let mut m4p = vk::PhysicalDeviceMaintenance4Properties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut m4p);
    // SAFETY: a live physical device and a valid output chain.
    unsafe { c.h.instance.get_physical_device_properties2(c.pd, &mut p2) };
    let max = m4p.max_buffer_size;
    assert_eq!(
        max,
        1 << 32,
        "Gen9 RAW surfaces hold 2^32 bytes, as anv reports"
    );
    let heap = {
        // SAFETY: a live physical device.
        let mp = unsafe { c.h.instance.get_physical_device_memory_properties(c.pd) };
        mp.memory_heaps[0].size
    };
    // SAFETY: valid create infos on a live device; everything is destroyed here.
    unsafe {
        let ci = vk::BufferCreateInfo::default()
            .size(max)
            .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST);
        let big = c
            .dev
            .create_buffer(&ci, None)
            .expect("a buffer of maxBufferSize");
        let req = c.dev.get_buffer_memory_requirements(big);
        assert_eq!(req.size, max);
        if req.size > heap {
            println!("heap of {heap} bytes: a {max}-byte buffer is created, not bound");
        } else {
            // The last 16 bytes of the buffer: filled, then copied into a small buffer.
            let mem = c
                .dev
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(0),
                    None,
                )
                .expect("an allocation of maxBufferSize");
            c.dev.bind_buffer_memory(big, mem, 0).unwrap();
            let mut c = c;
            let small = c.buffer(32);
            c.run(|d, cb| {
                d.cmd_fill_buffer(cb, big, max - 16, 16, 0xA5A5_0001);
                d.cmd_fill_buffer(cb, big, max - 32, 16, 0x1234_5678);
                let b = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                    .dst_access_mask(vk::AccessFlags::TRANSFER_READ)];
                d.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::DependencyFlags::empty(),
                    &b,
                    &[],
                    &[],
                );
                let r = [vk::BufferCopy {
                    src_offset: max - 32,
                    dst_offset: 0,
                    size: 32,
                }];
                d.cmd_copy_buffer(cb, big, c.buf(small).buffer, &r);
            })
            .unwrap();
            let got = c.buf(small).read_u32s(8);
            assert_eq!(
                got,
                [0x1234_5678; 4]
                    .into_iter()
                    .chain([0xA5A5_0001; 4])
                    .collect::<Vec<_>>()
            );
            c.dev.destroy_buffer(big, None);
            c.dev.free_memory(mem, None);
            return c.finish();
        }
        c.dev.destroy_buffer(big, None);
    }
    c.finish();
}

#[test]
fn buffers_past_max_buffer_size_are_refused() {
    let _serial = serial();
    // Invalid usage on purpose: no validation layer.
    let h = Harness::with_api_version(false, &[], vk::API_VERSION_1_1);
    let pd = h.physical_device();
    let dev = h.create_device(pd);
    let ci = vk::BufferCreateInfo::default()
        .size((1 << 32) + 1)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
    // SAFETY: a live device; the create info is valid apart from its size.
    let r = unsafe { dev.create_buffer(&ci, None) };
    assert!(r.is_err(), "a buffer past maxBufferSize was created");
    // SAFETY: no child object is alive.
    unsafe { ferrite_tests::icd::destroy_device(&dev) };
}

/// A compute shader whose workgroup size is LocalSizeId of specialization constants 0 and 1
/// (x, y; z is the constant 1): each invocation writes (local id x + 1000 * x-size +
/// 100000 * local id y) at its flat global index.
const LOCAL_SIZE_ID: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %lid %nwg
               OpExecutionModeId %main LocalSizeId %sx %sy %c1
               OpDecorate %sx SpecId 0
               OpDecorate %sy SpecId 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %lid BuiltIn LocalInvocationId
               OpDecorate %nwg BuiltIn NumWorkgroups
               OpDecorate %rta ArrayStride 4
               OpMemberDecorate %blk 0 Offset 0
               OpDecorate %blk Block
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %u32 = OpTypeInt 32 0
         %v3 = OpTypeVector %u32 3
        %pv3 = OpTypePointer Input %v3
        %gid = OpVariable %pv3 Input
        %lid = OpVariable %pv3 Input
        %nwg = OpVariable %pv3 Input
        %rta = OpTypeRuntimeArray %u32
        %blk = OpTypeStruct %rta
       %pblk = OpTypePointer StorageBuffer %blk
        %out = OpVariable %pblk StorageBuffer
         %pu = OpTypePointer StorageBuffer %u32
         %sx = OpSpecConstant %u32 4
         %sy = OpSpecConstant %u32 1
         %c0 = OpConstant %u32 0
         %c1 = OpConstant %u32 1
      %c1000 = OpConstant %u32 1000
    %c100000 = OpConstant %u32 100000
       %main = OpFunction %void None %fn
          %l = OpLabel
          %g = OpLoad %v3 %gid
         %gx = OpCompositeExtract %u32 %g 0
         %gy = OpCompositeExtract %u32 %g 1
          %n = OpLoad %v3 %nwg
         %nx = OpCompositeExtract %u32 %n 0
      %width = OpIMul %u32 %nx %sx
        %row = OpIMul %u32 %gy %width
       %flat = OpIAdd %u32 %row %gx
         %li = OpLoad %v3 %lid
         %lx = OpCompositeExtract %u32 %li 0
         %ly = OpCompositeExtract %u32 %li 1
         %kx = OpIMul %u32 %sx %c1000
         %ky = OpIMul %u32 %ly %c100000
         %v0 = OpIAdd %u32 %lx %kx
          %v = OpIAdd %u32 %v0 %ky
          %p = OpAccessChain %pu %out %c0 %flat
               OpStore %p %v
               OpReturn
               OpFunctionEnd
"#;

fn spirv_asm(name: &str, text: &str) -> Vec<u32> {
    let dir = ferrite_tests::fresh_temp_dir("ferrite-m4").unwrap();
    let (input, output) = (
        dir.join(format!("{name}.spvasm")),
        dir.join(format!("{name}.spv")),
    );
    std::fs::write(&input, text).unwrap();
    let out = std::process::Command::new("spirv-as")
        .args(["--target-env", "vulkan1.1", "-o"])
        .arg(&output)
        .arg(&input)
        .output()
        .expect("spirv-as (package spirv-tools) is required by this test");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&output).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn local_size_id_takes_the_specialized_workgroup_size() {
    let _serial = serial();
    let mut c = ctx();
    let code = spirv_asm("local_size_id", LOCAL_SIZE_ID);
    let groups = [3u32, 2];
    for (sx, sy) in [(4u32, 1u32), (48, 1), (5, 3), (8, 8), (33, 2)] {
        let n = (groups[0] * sx * groups[1] * sy) as usize;
        let out = zeroed(&mut c, n + 8);
        let k = c
            .kernel_with(
                &code,
                &[vk::DescriptorType::STORAGE_BUFFER],
                0,
                &[(0, sx), (1, sy)],
                vk::PipelineCache::null(),
            )
            .expect("vkCreateComputePipelines");
        c.bind(k, &[out]);
        c.run(|d, cb| {
            c.bind_kernel(cb, k);
            // SAFETY: recording into a live command buffer.
            unsafe { d.cmd_dispatch(cb, groups[0], groups[1], 1) };
        })
        .unwrap();
        let got = c.buf(out).read_u32s(n + 8);
        let width = groups[0] * sx;
        for (i, &g) in got.iter().enumerate() {
            let want = if i < n {
                let (x, y) = (i as u32 % width, i as u32 / width);
                x % sx + 1000 * sx + 100_000 * (y % sy)
            } else {
                0
            };
            assert_eq!(g, want, "size {sx}x{sy}: word {i}");
        }
    }
    c.finish();
}

/// maintenance4: a pipeline layout may be destroyed once used to create a pipeline, and one
/// bound while recording may be destroyed before the command buffer runs.
#[test]
fn pipeline_layouts_may_be_destroyed_once_used() {
    let _serial = serial();
    let mut c = ctx();
    let code = spirv(
        "m4_layout",
        Some(
            "#version 450\nlayout(local_size_x = 16) in;\n\
             layout(push_constant) uniform P { uint add; } p;\n\
             layout(set = 0, binding = 0) buffer B { uint v[]; } b;\n\
             void main() { b.v[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x * 3u + p.add; }\n",
        ),
    );
    let out = zeroed(&mut c, 64);
    // SAFETY: valid create infos on a live device; every object is destroyed here.
    unsafe {
        let bindings = [ferrite_tests::icd::compute_binding(
            0,
            vk::DescriptorType::STORAGE_BUFFER,
            1,
        )];
        let layout_pair = || {
            ferrite_tests::icd::compute_layout(
                &c.dev,
                &bindings,
                vk::DescriptorSetLayoutCreateFlags::empty(),
                4,
            )
            .unwrap()
        };
        let (set_layout, first) = layout_pair();
        let pipeline = c.pipeline(&code, first).expect("pipeline");
        c.dev.destroy_pipeline_layout(first, None);
        let (set_layout2, second) = layout_pair();
        let (pool, set) =
            ferrite_tests::icd::one_set(&c.dev, set_layout, &[vk::DescriptorType::STORAGE_BUFFER])
                .unwrap();
        ferrite_tests::icd::write_buffers(
            &c.dev,
            set,
            &[(
                c.buf(out).buffer,
                vk::DescriptorType::STORAGE_BUFFER,
                vk::WHOLE_SIZE,
            )],
        );
        let cb = c.begin_command_buffer();
        c.dev
            .cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
        c.dev
            .cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, second, 0, &[set], &[]);
        c.dev.cmd_push_constants(
            cb,
            second,
            vk::ShaderStageFlags::COMPUTE,
            0,
            &7u32.to_le_bytes(),
        );
        c.dev.cmd_dispatch(cb, 4, 1, 1);
        c.dev.end_command_buffer(cb).unwrap();
        c.dev.destroy_pipeline_layout(second, None);
        let fence = c.fence();
        let cbs = [cb];
        c.dev
            .queue_submit(
                c.queue,
                &[vk::SubmitInfo::default().command_buffers(&cbs)],
                fence,
            )
            .unwrap();
        c.dev.wait_for_fences(&[fence], true, u64::MAX).unwrap();
        c.dev.destroy_fence(fence, None);
        c.dev.free_command_buffers(c.cmd_pool, &cbs);
        let got = c.buf(out).read_u32s(64);
        let want: Vec<u32> = (0..64).map(|i| i * 3 + 7).collect();
        assert_eq!(got, want);
        c.dev.destroy_pipeline(pipeline, None);
        c.dev.destroy_descriptor_pool(pool, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout2, None);
    }
    c.finish();
}
