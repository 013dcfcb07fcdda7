//! Transfer commands on images and buffers end to end: vkCmdCopyBufferToImage,
//! vkCmdCopyImage, vkCmdClearColorImage and vkCmdCopyImageToBuffer on 1-D arrays, 2-D arrays
//! and 3-D images with several levels, odd sizes, offsets, bufferRowLength/bufferImageHeight
//! padding, LINEAR and OPTIMAL tiling, in formats of every texel size (1, 2, 4, 8, 16 bytes;
//! UNORM, float, packed float, UINT), plus vkCmdCopyBuffer/vkCmdFillBuffer on both the
//! command-streamer path and the meta-kernel path (unaligned copies included). The same
//! program runs on Ferrite's simulated GPU and on lavapipe (child processes); every byte read
//! back must be equal. LINEAR images are also read through mapped memory, so a copy that
//! misplaced texels but read them back from the same wrong place still fails.

mod compute_common;

use ash::vk;
use compute_common::*;

/// (name, format, bytes per texel, clear colour as four 32-bit words).
const FORMATS: &[(&str, vk::Format, u32, [u32; 4])] = &[
    ("r8", vk::Format::R8_UNORM, 1, F_CLEAR),
    ("r16f", vk::Format::R16_SFLOAT, 2, F_CLEAR),
    ("rgba8", vk::Format::R8G8B8A8_UNORM, 4, F_CLEAR),
    ("r11g11b10", vk::Format::B10G11R11_UFLOAT_PACK32, 4, F_CLEAR),
    ("rg32ui", vk::Format::R32G32_UINT, 8, [7, 70000, 9, 11]),
    ("rgba32f", vk::Format::R32G32B32A32_SFLOAT, 16, F_CLEAR),
];

/// 0.25, 0.75, 0.5, 1.0: exact in every float format, no rounding ties in UNORM.
const F_CLEAR: [u32; 4] = [0x3E80_0000, 0x3F40_0000, 0x3F00_0000, 0x3F80_0000];

struct Cfg {
    name: &'static str,
    ty: vk::ImageType,
    extent: [u32; 3],
    levels: u32,
    layers: u32,
    tiling: vk::ImageTiling,
}

const CFGS: &[Cfg] = &[
    Cfg {
        name: "2d",
        ty: vk::ImageType::TYPE_2D,
        extent: [13, 7, 1],
        levels: 3,
        layers: 3,
        tiling: vk::ImageTiling::OPTIMAL,
    },
    Cfg {
        name: "2dlinear",
        ty: vk::ImageType::TYPE_2D,
        extent: [13, 7, 1],
        levels: 1,
        layers: 1,
        tiling: vk::ImageTiling::LINEAR,
    },
    Cfg {
        name: "3d",
        ty: vk::ImageType::TYPE_3D,
        extent: [9, 6, 5],
        levels: 2,
        layers: 1,
        tiling: vk::ImageTiling::OPTIMAL,
    },
    Cfg {
        name: "1d",
        ty: vk::ImageType::TYPE_1D,
        extent: [37, 1, 1],
        levels: 2,
        layers: 4,
        tiling: vk::ImageTiling::OPTIMAL,
    },
];

struct Img {
    image: vk::Image,
    memory: vk::DeviceMemory,
}

fn level_extent(cfg: &Cfg, level: u32) -> [u32; 3] {
    cfg.extent.map(|e| (e >> level).max(1))
}

fn create_image(c: &Ctx, cfg: &Cfg, format: vk::Format) -> Img {
    let usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    create_image_with(c, cfg, format, usage)
}

fn create_image_with(c: &Ctx, cfg: &Cfg, format: vk::Format, usage: vk::ImageUsageFlags) -> Img {
    let props = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let mem_type = c.h.memory_type(c.pd, props).unwrap();
    let (image, memory) = bound_image(
        c,
        &vk::ImageCreateInfo::default()
            .image_type(cfg.ty)
            .format(format)
            .extent(vk::Extent3D {
                width: cfg.extent[0],
                height: cfg.extent[1],
                depth: cfg.extent[2],
            })
            .mip_levels(cfg.levels)
            .array_layers(cfg.layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(cfg.tiling)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED),
        mem_type,
    );
    Img { image, memory }
}

fn whole(cfg: &Cfg) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: cfg.levels,
        base_array_layer: 0,
        layer_count: cfg.layers,
    }
}

fn layers(level: u32, base: u32, count: u32) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: level,
        base_array_layer: base,
        layer_count: count,
    }
}

fn extent(e: [u32; 3]) -> vk::Extent3D {
    vk::Extent3D {
        width: e[0],
        height: e[1],
        depth: e[2],
    }
}

fn offset(o: [i32; 3]) -> vk::Offset3D {
    vk::Offset3D {
        x: o[0],
        y: o[1],
        z: o[2],
    }
}

/// Transfer -> transfer (and host) memory dependency.
fn transfer_barrier(d: &ash::Device, cb: vk::CommandBuffer) {
    let mb = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(
            vk::AccessFlags::TRANSFER_READ
                | vk::AccessFlags::TRANSFER_WRITE
                | vk::AccessFlags::HOST_READ,
        )];
    // SAFETY: recording into a live command buffer.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &mb,
            &[],
            &[],
        )
    };
}

/// Moves every subresource of `images` from layout `old` to `new` after earlier transfers.
fn layout(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    cfg: &Cfg,
    images: &[vk::Image],
    old: vk::ImageLayout,
    new: vk::ImageLayout,
) {
    let barriers: Vec<_> = images
        .iter()
        .map(|&image| {
            vk::ImageMemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .dst_access_mask(vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE)
                .old_layout(old)
                .new_layout(new)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image)
                .subresource_range(whole(cfg))
        })
        .collect();
    // SAFETY: recording into a live command buffer.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &barriers,
        )
    };
}

/// Upload regions of every level (rows padded by 3 texels, slices by one row), at 16-byte
/// aligned buffer offsets; returns the regions and the bytes they span.
fn upload_regions(cfg: &Cfg, bpt: u32) -> (Vec<vk::BufferImageCopy>, u64) {
    let mut at = 0u64;
    let mut v = Vec::new();
    for level in 0..cfg.levels {
        let e = level_extent(cfg, level);
        let row = e[0] + 3;
        let height = e[1] + 1;
        let slices = e[2] * cfg.layers;
        v.push(vk::BufferImageCopy {
            buffer_offset: at,
            buffer_row_length: row,
            buffer_image_height: height,
            image_subresource: layers(level, 0, cfg.layers),
            image_offset: vk::Offset3D::default(),
            image_extent: extent(e),
        });
        at += (u64::from(row * height * slices * bpt)).div_ceil(16) * 16;
    }
    (v, at)
}

/// Tightly packed read-back regions of every level; returns them and the bytes they span.
fn readback_regions(cfg: &Cfg, bpt: u32) -> (Vec<vk::BufferImageCopy>, u64) {
    let mut at = 0u64;
    let mut v = Vec::new();
    for level in 0..cfg.levels {
        let e = level_extent(cfg, level);
        v.push(vk::BufferImageCopy {
            buffer_offset: at,
            buffer_row_length: 0,
            buffer_image_height: 0,
            image_subresource: layers(level, 0, cfg.layers),
            image_offset: vk::Offset3D::default(),
            image_extent: extent(e),
        });
        at += u64::from(e[0] * e[1] * e[2] * cfg.layers * bpt).div_ceil(16) * 16;
    }
    (v, at)
}

/// One format x configuration: upload, partial upload at an offset, clear of the last
/// level/layer, image-to-image copies (at offsets on level 0, whole level 1), read-back.
fn run_image_case(c: &mut Ctx, r: &mut Results, cfg: &Cfg, fi: usize) {
    let (fname, format, bpt, clear) = FORMATS[fi];
    let name = format!("{}_{fname}", cfg.name);
    let a = create_image(c, cfg, format);
    let b = create_image(c, cfg, format);
    let (up, up_bytes) = upload_regions(cfg, bpt);
    let src = c.buffer(up_bytes + 256);
    let seed = 0x5EED_0000 + 97 * fi as u32 + cfg.extent[0];
    let words = random_u32s(seed, (up_bytes as usize + 256) / 4);
    c.buf(src).write_u32s(&words);
    let (rb, rb_bytes) = readback_regions(cfg, bpt);
    let out_a = zeroed(c, rb_bytes as usize / 4);
    let out_b = zeroed(c, rb_bytes as usize / 4);
    let e0 = cfg.extent;
    let one_d = cfg.ty == vk::ImageType::TYPE_1D;
    let three_d = cfg.ty == vk::ImageType::TYPE_3D;
    // A box inside level 0 at (1, 1, 1) of the last layer, from its own rows of 6 texels.
    let part_off = [1, i32::from(!one_d), i32::from(three_d)];
    let part_ext = [
        4.min(e0[0] - 1),
        if one_d { 1 } else { 3.min(e0[1] - 1) },
        if three_d { 2 } else { 1 },
    ];
    let part = vk::BufferImageCopy {
        buffer_offset: 16 * 5,
        buffer_row_length: 6,
        buffer_image_height: 0,
        image_subresource: layers(0, cfg.layers - 1, 1),
        image_offset: offset(part_off),
        image_extent: extent(part_ext),
    };
    // Level 0 from (2, 1, 1) of A to (0, 2, 0) of B over every layer; level 1 whole.
    let mut copies = vec![vk::ImageCopy {
        src_subresource: layers(0, 0, cfg.layers),
        src_offset: offset([2, i32::from(!one_d), i32::from(three_d)]),
        dst_subresource: layers(0, 0, cfg.layers),
        dst_offset: offset([0, if one_d { 0 } else { 2 }, 0]),
        extent: extent([
            e0[0] - 3,
            if one_d { 1 } else { e0[1] - 2 },
            if three_d { e0[2] - 1 } else { 1 },
        ]),
    }];
    if cfg.levels > 1 {
        copies.push(vk::ImageCopy {
            src_subresource: layers(1, 0, cfg.layers),
            src_offset: vk::Offset3D::default(),
            dst_subresource: layers(1, 0, cfg.layers),
            dst_offset: vk::Offset3D::default(),
            extent: extent(level_extent(cfg, 1)),
        });
    }
    let color = vk::ClearColorValue { uint32: clear };
    let other = vk::ClearColorValue {
        uint32: clear.map(|w| w ^ 0x0010_0001),
    };
    let last = vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: cfg.levels - 1,
        level_count: 1,
        base_array_layer: cfg.layers - 1,
        layer_count: 1,
    };
    // SAFETY: valid commands on live objects; the submission is waited for.
    unsafe {
        c.run(|d, cb| {
            let dst = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
            let srcl = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
            let undef = vk::ImageLayout::UNDEFINED;
            layout(d, cb, cfg, &[a.image, b.image], undef, dst);
            d.cmd_clear_color_image(cb, b.image, dst, &other, &[whole(cfg)]);
            d.cmd_copy_buffer_to_image(cb, c.buf(src).buffer, a.image, dst, &up);
            transfer_barrier(d, cb);
            d.cmd_copy_buffer_to_image(cb, c.buf(src).buffer, a.image, dst, &[part]);
            if cfg.levels * cfg.layers > 1 {
                d.cmd_clear_color_image(cb, a.image, dst, &color, &[last]);
            }
            transfer_barrier(d, cb);
            layout(d, cb, cfg, &[a.image], dst, srcl);
            d.cmd_copy_image(cb, a.image, srcl, b.image, dst, &copies);
            layout(d, cb, cfg, &[b.image], dst, srcl);
            d.cmd_copy_image_to_buffer(cb, a.image, srcl, c.buf(out_a).buffer, &rb);
            d.cmd_copy_image_to_buffer(cb, b.image, srcl, c.buf(out_b).buffer, &rb);
            transfer_barrier(d, cb);
        })
        .unwrap();
    }
    let n = rb_bytes as usize / 4;
    r.insert(format!("{name}_a"), c.buf(out_a).read_u32s(n));
    r.insert(format!("{name}_b"), c.buf(out_b).read_u32s(n));
    if cfg.tiling == vk::ImageTiling::LINEAR {
        r.insert(format!("{name}_a_mapped"), mapped_texels(c, cfg, &a, bpt));
    }
    // SAFETY: idle objects created above.
    unsafe {
        for i in [a, b] {
            c.dev.destroy_image(i.image, None);
            c.dev.free_memory(i.memory, None);
        }
    }
}

/// Level 0, layer 0 of a LINEAR image read through mapped memory at the offsets
/// vkGetImageSubresourceLayout reports (texel bytes only; the row pitch is the driver's).
fn mapped_texels(c: &Ctx, cfg: &Cfg, img: &Img, bpt: u32) -> Vec<u32> {
    // SAFETY: a LINEAR image bound to host-visible memory; the device is idle.
    unsafe {
        let l = c.dev.get_image_subresource_layout(
            img.image,
            vk::ImageSubresource {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                array_layer: 0,
            },
        );
        let ptr: *const u8 = c
            .dev
            .map_memory(img.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            .unwrap()
            .cast();
        let row = (cfg.extent[0] * bpt) as usize;
        let mut bytes = Vec::new();
        for y in 0..cfg.extent[1] as usize {
            let at = l.offset as usize + y * l.row_pitch as usize;
            bytes.extend_from_slice(std::slice::from_raw_parts(ptr.add(at), row));
        }
        c.dev.unmap_memory(img.memory);
        bytes.resize(bytes.len().div_ceil(4) * 4, 0);
        bytes
            .chunks(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .collect()
    }
}

/// vkCmdCopyBuffer and vkCmdFillBuffer: unaligned and aligned copies and fills above the
/// command-streamer limit (meta kernels) and small ones (MI stores).
fn run_buffer_case(c: &mut Ctx, r: &mut Results) {
    let src = c.buffer(8192);
    c.buf(src).write_u32s(&random_u32s(0xB0FF, 2048));
    let dst = zeroed(c, 2048);
    let copies = [
        vk::BufferCopy {
            src_offset: 3,
            dst_offset: 5,
            size: 1001,
        },
        vk::BufferCopy {
            src_offset: 4096,
            dst_offset: 2048,
            size: 4096,
        },
        vk::BufferCopy {
            src_offset: 8,
            dst_offset: 7000,
            size: 16,
        },
        vk::BufferCopy {
            src_offset: 1026,
            dst_offset: 1030,
            size: 6,
        },
    ];
    // SAFETY: valid commands on live buffers; the submission is waited for.
    unsafe {
        c.run(|d, cb| {
            d.cmd_copy_buffer(cb, c.buf(src).buffer, c.buf(dst).buffer, &copies);
            d.cmd_fill_buffer(cb, c.buf(dst).buffer, 6200, 512, 0xDEAD_BEEF);
            d.cmd_fill_buffer(cb, c.buf(dst).buffer, 7100, 16, 0x1234);
            transfer_barrier(d, cb);
        })
        .unwrap();
    }
    r.insert("buffer_copy_fill".into(), c.buf(dst).read_u32s(2048));
}

/// imageSize of storage views that start at level 1 (2-D array, 3-D) or at layer 1 (1-D
/// array): `resinfo` on the storage surface state.
const SIZE_SHADER: &str = "
#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, r32ui) uniform readonly uimage2DArray a;
layout(set = 0, binding = 1, r32ui) uniform readonly uimage3D b;
layout(set = 0, binding = 2, r32ui) uniform readonly uimage1DArray c;
layout(set = 0, binding = 3) buffer Out { ivec4 o[]; };
void main() {
    o[0] = ivec4(imageSize(a), 0);
    o[1] = ivec4(imageSize(b), 0);
    o[2] = ivec4(imageSize(c), 0, 0);
}
";

fn run_size_case(c: &mut Ctx, r: &mut Results) {
    let usage = vk::ImageUsageFlags::STORAGE;
    let f = vk::Format::R32_UINT;
    // (configuration, view type, base level, base layer, layer count)
    let views = [
        (&CFGS[0], vk::ImageViewType::TYPE_2D_ARRAY, 1, 1, 2),
        (&CFGS[2], vk::ImageViewType::TYPE_3D, 1, 0, 1),
        (&CFGS[3], vk::ImageViewType::TYPE_1D_ARRAY, 0, 1, 3),
    ];
    let types = [
        vk::DescriptorType::STORAGE_IMAGE,
        vk::DescriptorType::STORAGE_IMAGE,
        vk::DescriptorType::STORAGE_IMAGE,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let code = spirv("image_transfer_size", Some(SIZE_SHADER));
    let k = c
        .kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
        .unwrap();
    let out = zeroed(c, 12);
    let mut made = Vec::new();
    // SAFETY: valid objects on a live device; destroyed after the submission completed.
    unsafe {
        for (i, &(cfg, view_type, level, layer, count)) in views.iter().enumerate() {
            let img = create_image_with(c, cfg, f, usage);
            let view = c
                .dev
                .create_image_view(
                    &vk::ImageViewCreateInfo::default()
                        .image(img.image)
                        .view_type(view_type)
                        .format(f)
                        .subresource_range(vk::ImageSubresourceRange {
                            aspect_mask: vk::ImageAspectFlags::COLOR,
                            base_mip_level: level,
                            level_count: 1,
                            base_array_layer: layer,
                            layer_count: count,
                        }),
                    None,
                )
                .unwrap();
            let ii = [vk::DescriptorImageInfo {
                sampler: vk::Sampler::null(),
                image_view: view,
                image_layout: vk::ImageLayout::GENERAL,
            }];
            let w = vk::WriteDescriptorSet::default()
                .dst_set(c.k(k).set)
                .dst_binding(i as u32)
                .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
                .image_info(&ii);
            c.dev.update_descriptor_sets(&[w], &[]);
            made.push((img, view, cfg));
        }
        let bi = [vk::DescriptorBufferInfo {
            buffer: c.buf(out).buffer,
            offset: 0,
            range: vk::WHOLE_SIZE,
        }];
        let w = vk::WriteDescriptorSet::default()
            .dst_set(c.k(k).set)
            .dst_binding(3)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&bi);
        c.dev.update_descriptor_sets(&[w], &[]);
        c.run(|d, cb| {
            for (img, _, cfg) in &made {
                layout(
                    d,
                    cb,
                    cfg,
                    &[img.image],
                    vk::ImageLayout::UNDEFINED,
                    vk::ImageLayout::GENERAL,
                );
            }
            c.bind_kernel(cb, k);
            dispatch(c, cb, 1, 1);
        })
        .unwrap();
        r.insert("image_size".into(), c.buf(out).read_u32s(12));
        for (img, view, _) in made {
            c.dev.destroy_image_view(view, None);
            c.dev.destroy_image(img.image, None);
            c.dev.free_memory(img.memory, None);
        }
    }
}

fn run_cases() -> Results {
    let mut r = Results::new();
    let mut c = Ctx::new();
    run_buffer_case(&mut c, &mut r);
    run_size_case(&mut c, &mut r);
    for cfg in CFGS {
        for fi in 0..FORMATS.len() {
            run_image_case(&mut c, &mut r, cfg, fi);
        }
    }
    c.finish();
    r
}

#[test]
#[ignore = "runs in the child processes of transfers_match_lavapipe"]
fn child_runs_transfer_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_cases());
}

#[test]
fn transfers_match_lavapipe() {
    let (ferrite, lvp) = run_on_ferrite_and_lavapipe("child_runs_transfer_cases");
    // The buffer and size cases, two read-backs per image case, one mapped read per LINEAR
    // case.
    let linear = CFGS
        .iter()
        .filter(|c| c.tiling == vk::ImageTiling::LINEAR)
        .count();
    assert_eq!(ferrite.len(), 2 + FORMATS.len() * (2 * CFGS.len() + linear));
    for (name, want) in &lvp {
        let got = &ferrite[name];
        assert_eq!(got.len(), want.len(), "{name}: lengths");
        // A case that wrote nothing would compare equal on zeros: every case has data.
        assert!(
            want.iter().any(|w| *w != 0),
            "{name}: lavapipe wrote nothing"
        );
        if let Some(i) = got.iter().zip(want).position(|(g, w)| g != w) {
            panic!(
                "{name}: word {i} differs: Ferrite {:#010x}, lavapipe {:#010x} ({} of {} words differ)",
                got[i],
                want[i],
                got.iter().zip(want).filter(|(g, w)| g != w).count(),
                got.len()
            );
        }
    }
}
