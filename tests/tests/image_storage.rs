//! Storage images and storage texel buffers end to end: a shader writes texels with
//! imageStore, a second one reads them back with imageLoad into a buffer, on every storage
//! format Ferrite reports, LINEAR and OPTIMAL (Y-tiled) images, 1-D/2-D/2-D array/3-D shapes
//! and image atomics. The same program runs on Ferrite's simulated GPU and on lavapipe (each
//! in a child process: the loader reads VK_DRIVER_FILES once); the results must be equal,
//! LINEAR and OPTIMAL must agree, and for LINEAR images the bytes in memory (read through
//! vkGetImageSubresourceLayout) must be equal too.

mod compute_common;

use ash::vk;
use compute_common::*;

/// One storage format: Vulkan format, GLSL layout qualifier, GLSL type prefix ("" float,
/// "u", "i"), channel count and bits per channel.
struct Fmt {
    vk: vk::Format,
    glsl: &'static str,
    prefix: &'static str,
    channels: u32,
    bits: u32,
}

const FORMATS: &[Fmt] = &[
    Fmt {
        vk: vk::Format::R32_UINT,
        glsl: "r32ui",
        prefix: "u",
        channels: 1,
        bits: 32,
    },
    Fmt {
        vk: vk::Format::R32_SINT,
        glsl: "r32i",
        prefix: "i",
        channels: 1,
        bits: 32,
    },
    Fmt {
        vk: vk::Format::R32_SFLOAT,
        glsl: "r32f",
        prefix: "",
        channels: 1,
        bits: 32,
    },
    Fmt {
        vk: vk::Format::R32G32B32A32_UINT,
        glsl: "rgba32ui",
        prefix: "u",
        channels: 4,
        bits: 32,
    },
    Fmt {
        vk: vk::Format::R32G32B32A32_SINT,
        glsl: "rgba32i",
        prefix: "i",
        channels: 4,
        bits: 32,
    },
    Fmt {
        vk: vk::Format::R32G32B32A32_SFLOAT,
        glsl: "rgba32f",
        prefix: "",
        channels: 4,
        bits: 32,
    },
    Fmt {
        vk: vk::Format::R16G16B16A16_UINT,
        glsl: "rgba16ui",
        prefix: "u",
        channels: 4,
        bits: 16,
    },
    Fmt {
        vk: vk::Format::R16G16B16A16_SINT,
        glsl: "rgba16i",
        prefix: "i",
        channels: 4,
        bits: 16,
    },
    Fmt {
        vk: vk::Format::R16G16B16A16_SFLOAT,
        glsl: "rgba16f",
        prefix: "",
        channels: 4,
        bits: 16,
    },
    Fmt {
        vk: vk::Format::R8G8B8A8_UINT,
        glsl: "rgba8ui",
        prefix: "u",
        channels: 4,
        bits: 8,
    },
    // Lowered formats: the typed messages access R32_UINT; the shader unpacks and packs.
    Fmt {
        vk: vk::Format::R8G8B8A8_UNORM,
        glsl: "rgba8",
        prefix: "",
        channels: 4,
        bits: 8,
    },
    Fmt {
        vk: vk::Format::R8G8B8A8_SNORM,
        glsl: "rgba8_snorm",
        prefix: "",
        channels: 4,
        bits: 8,
    },
    Fmt {
        vk: vk::Format::R8G8B8A8_SINT,
        glsl: "rgba8i",
        prefix: "i",
        channels: 4,
        bits: 8,
    },
];

/// An image shape: GLSL image type suffix, Vulkan image/view types, extent, layers, and the
/// GLSL coordinate type and expression of invocation (x, y, z).
#[derive(Clone, Copy)]
struct Shape {
    name: &'static str,
    glsl: &'static str,
    ty: vk::ImageType,
    view: vk::ImageViewType,
    extent: [u32; 3],
    layers: u32,
    coord: &'static str,
}

const SHAPES: &[Shape] = &[
    Shape {
        name: "2d",
        glsl: "2D",
        ty: vk::ImageType::TYPE_2D,
        view: vk::ImageViewType::TYPE_2D,
        extent: [5, 3, 1],
        layers: 1,
        coord: "ivec2(p.xy)",
    },
    Shape {
        name: "1d",
        glsl: "1D",
        ty: vk::ImageType::TYPE_1D,
        view: vk::ImageViewType::TYPE_1D,
        extent: [7, 1, 1],
        layers: 1,
        coord: "int(p.x)",
    },
    Shape {
        name: "2darray",
        glsl: "2DArray",
        ty: vk::ImageType::TYPE_2D,
        view: vk::ImageViewType::TYPE_2D_ARRAY,
        extent: [4, 3, 1],
        layers: 3,
        coord: "ivec3(p)",
    },
    Shape {
        name: "3d",
        glsl: "3D",
        ty: vk::ImageType::TYPE_3D,
        view: vk::ImageViewType::TYPE_3D,
        extent: [3, 2, 4],
        layers: 1,
        coord: "ivec3(p)",
    },
];

/// Input words for texel channel values that every format holds exactly: integers in the
/// channel's range, floats that are small halves (exact in f16).
fn inputs(f: &Fmt, n: usize, seed: u32) -> Vec<u32> {
    random_u32s(seed, n * 4)
        .into_iter()
        .map(|r| match (f.glsl, f.prefix, f.bits) {
            // Values the channel holds exactly: c / 255 and c / 127, as f32.
            ("rgba8", ..) => (((r % 256) as f64 / 255.0) as f32).to_bits(),
            ("rgba8_snorm", ..) => ((((r % 255) as f64 - 127.0) / 127.0) as f32).to_bits(),
            (_, "", 32) => ((r % 2001) as f32 * 0.25 - 250.0).to_bits(),
            (_, "", _) => ((r % 401) as f32 * 0.5 - 100.0).to_bits(),
            (_, "u", 32) => r,
            (_, "u", b) => r & ((1 << b) - 1),
            (_, _, 32) => r,
            (_, _, b) => ((r as i32) >> (32 - b)) as u32,
        })
        .collect()
}

/// One shader per format and shape: push constant `mode` 0 stores the buffer's texels into
/// the image (imageStore), 1 loads the image into the buffer (imageLoad).
fn shader(f: &Fmt, s: &Shape) -> String {
    let (to_texel, from_texel) = match f.prefix {
        "" => ("uintBitsToFloat(v)", "floatBitsToUint(t)"),
        "u" => ("v", "t"),
        _ => ("ivec4(v)", "uvec4(t)"),
    };
    format!(
        "#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, {fmt}) uniform {p}image{img} img;
layout(set = 0, binding = 1) buffer Texels {{ uvec4 texels[]; }};
layout(push_constant) uniform P {{ uvec3 size; uint mode; }};
void main() {{
  uvec3 p = gl_GlobalInvocationID;
  uint i = (p.z * size.y + p.y) * size.x + p.x;
  if (mode == 0u) {{
    uvec4 v = texels[i];
    imageStore(img, {coord}, {p}vec4({to_texel}));
  }} else {{
    {p}vec4 t = imageLoad(img, {coord});
    texels[i] = {from_texel};
  }}
}}
",
        fmt = f.glsl,
        p = f.prefix,
        img = s.glsl,
        coord = s.coord,
    )
}

/// An image with its memory and a storage view.
struct Img {
    image: vk::Image,
    memory: vk::DeviceMemory,
    view: vk::ImageView,
    ptr: *mut u8,
}

fn create_image(c: &Ctx, f: &Fmt, s: &Shape, tiling: vk::ImageTiling) -> Img {
    let mem_type =
        c.h.memory_type(
            c.pd,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        )
        .unwrap();
    // SAFETY: valid create infos on a live device; destroyed by `destroy_image`.
    unsafe {
        let (image, memory) = bound_image(
            c,
            &vk::ImageCreateInfo::default()
                .image_type(s.ty)
                .format(f.vk)
                .extent(vk::Extent3D {
                    width: s.extent[0],
                    height: s.extent[1],
                    depth: s.extent[2],
                })
                .mip_levels(1)
                .array_layers(s.layers)
                .samples(vk::SampleCountFlags::TYPE_1)
                .tiling(tiling)
                .usage(vk::ImageUsageFlags::STORAGE)
                .initial_layout(vk::ImageLayout::UNDEFINED),
            mem_type,
        );
        let ptr = c
            .dev
            .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            .unwrap()
            .cast();
        let view = c
            .dev
            .create_image_view(
                &vk::ImageViewCreateInfo::default()
                    .image(image)
                    .view_type(s.view)
                    .format(f.vk)
                    .subresource_range(vk::ImageSubresourceRange {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        base_mip_level: 0,
                        level_count: 1,
                        base_array_layer: 0,
                        layer_count: s.layers,
                    }),
                None,
            )
            .unwrap();
        Img {
            image,
            memory,
            view,
            ptr,
        }
    }
}

fn destroy_image(c: &Ctx, i: Img) {
    // SAFETY: objects created by `create_image`, idle.
    unsafe {
        c.dev.destroy_image_view(i.view, None);
        c.dev.destroy_image(i.image, None);
        c.dev.free_memory(i.memory, None);
    }
}

/// The texel bytes of a LINEAR image, row by row without padding.
fn linear_bytes(c: &Ctx, i: &Img, f: &Fmt, s: &Shape) -> Vec<u32> {
    let bpt = (f.channels * f.bits / 8) as usize;
    let mut out = Vec::new();
    let slices = s.extent[2].max(s.layers);
    for z in 0..slices {
        let layer = if s.layers > 1 { z } else { 0 };
        // SAFETY: a LINEAR image of this device.
        let l = unsafe {
            c.dev.get_image_subresource_layout(
                i.image,
                vk::ImageSubresource {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: 0,
                    array_layer: layer,
                },
            )
        };
        let slice_off = if s.layers > 1 {
            0
        } else {
            z as u64 * l.depth_pitch
        };
        for y in 0..s.extent[1] {
            let at = (l.offset + slice_off + y as u64 * l.row_pitch) as usize;
            for k in 0..s.extent[0] as usize * bpt {
                // SAFETY: inside the mapped image memory the layout describes.
                out.push(u32::from(unsafe { *i.ptr.add(at + k) }));
            }
        }
    }
    out
}

/// Transitions an image from UNDEFINED to GENERAL (recorded into `cb`).
fn to_general(c: &Ctx, cb: vk::CommandBuffer, image: vk::Image) {
    // SAFETY: recording into a live command buffer; the image is alive.
    unsafe {
        image_barrier(
            &c.dev,
            cb,
            image,
            color_range(1, vk::REMAINING_ARRAY_LAYERS),
            (
                vk::ImageLayout::UNDEFINED,
                vk::AccessFlags::empty(),
                vk::PipelineStageFlags::TOP_OF_PIPE,
            ),
            (
                vk::ImageLayout::GENERAL,
                vk::AccessFlags::SHADER_WRITE,
                vk::PipelineStageFlags::COMPUTE_SHADER,
            ),
        )
    }
}

const TYPES: &[vk::DescriptorType] = &[
    vk::DescriptorType::STORAGE_IMAGE,
    vk::DescriptorType::STORAGE_BUFFER,
];

/// Writes then reads one image with kernel `k`; returns the read-back words and (LINEAR)
/// the memory bytes.
fn round_trip(
    c: &mut Ctx,
    k: usize,
    f: &Fmt,
    s: &Shape,
    tiling: vk::ImageTiling,
    seed: u32,
) -> (Vec<u32>, Vec<u32>) {
    let [w, h, d] = s.extent;
    let grid = [w, h, d.max(s.layers)];
    let n = (grid[0] * grid[1] * grid[2]) as usize;
    let input = inputs(f, n, seed);
    let b = c.buffer(n as u64 * 16);
    c.buf(b).write_u32s(&input);
    let img = create_image(c, f, s, tiling);
    write_image_and_buffer(c, k, vk::DescriptorType::STORAGE_IMAGE, img.view, b);
    let pc = |mode: u32| -> Vec<u8> {
        grid.iter()
            .chain(std::iter::once(&mode))
            .flat_map(|v| v.to_le_bytes())
            .collect()
    };
    c.run(|dev, cb| {
        to_general(c, cb, img.image);
        c.bind_kernel(cb, k);
        push(c, cb, k, &pc(0));
        // SAFETY: recording into a live command buffer.
        unsafe { dev.cmd_dispatch(cb, grid[0], grid[1], grid[2]) };
        c.barrier(cb);
        push(c, cb, k, &pc(1));
        // SAFETY: as above.
        unsafe { dev.cmd_dispatch(cb, grid[0], grid[1], grid[2]) };
    })
    .unwrap();
    let words = c.buf(b).read_u32s(n * 4);
    let bytes = if tiling == vk::ImageTiling::LINEAR {
        linear_bytes(c, &img, f, s)
    } else {
        Vec::new()
    };
    destroy_image(c, img);
    (words, bytes)
}

/// Image atomics from 64 invocations (SIMD splitting included) on a 4x4 r32ui image and a
/// 4x1 r32i image: per texel an operation whose final value does not depend on the order
/// (add, umax, umin, and, or, xor, exchange and compare-exchange with one value; smin, smax).
const ATOMIC_SHADER: &str = "#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32ui) uniform uimage2D u;
layout(set = 0, binding = 1, r32i) uniform iimage2D s;
layout(set = 0, binding = 2) buffer B { uint words[]; };
layout(push_constant) uniform P { uint mode; };
void main() {
  uvec2 p = gl_LocalInvocationID.xy;
  ivec2 t = ivec2(p % 4u);
  uint v = words[32 + p.y * 8u + p.x];
  if (mode == 0u) {
    if (p.x < 4u && p.y < 4u) imageStore(u, t, uvec4(words[p.y * 4u + p.x]));
    if (p.x < 4u && p.y == 0u) imageStore(s, t, ivec4(int(words[16u + p.x])));
  } else if (mode == 1u) {
    uint op = uint(t.y) * 4u + uint(t.x);
    if (op < 4u) imageAtomicAdd(u, t, v);
    else if (op < 6u) imageAtomicMax(u, t, v);
    else if (op < 8u) imageAtomicMin(u, t, v);
    else if (op < 10u) imageAtomicAnd(u, t, v | 0x0F0F0000u);
    else if (op < 12u) imageAtomicOr(u, t, v & 0x10101u);
    else if (op < 14u) imageAtomicXor(u, t, v);
    else if (op == 14u) imageAtomicExchange(u, t, 77u);
    else imageAtomicCompSwap(u, t, words[15], 12345u);
    if (t.y == 0) {
      if (t.x < 2) imageAtomicMin(s, ivec2(t.x, 0), int(v));
      else imageAtomicMax(s, ivec2(t.x, 0), int(v));
    }
  } else {
    if (p.x < 4u && p.y < 4u) words[p.y * 4u + p.x] = imageLoad(u, t).x;
    if (p.x < 4u && p.y == 0u) words[16u + p.x] = uint(imageLoad(s, t).x);
  }
}
";

fn atomics(c: &mut Ctx, tiling: vk::ImageTiling) -> Vec<u32> {
    let types = [
        vk::DescriptorType::STORAGE_IMAGE,
        vk::DescriptorType::STORAGE_IMAGE,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let k = c
        .kernel_with(
            &spirv("image_atomics", Some(ATOMIC_SHADER)),
            &types,
            4,
            &[],
            vk::PipelineCache::null(),
        )
        .unwrap();
    let b = c.buffer(96 * 4);
    c.buf(b).write_u32s(&random_u32s(5, 96));
    let su = SHAPES[0];
    let u = create_image(
        c,
        &FORMATS[0],
        &Shape {
            extent: [4, 4, 1],
            ..su
        },
        tiling,
    );
    let si = create_image(
        c,
        &FORMATS[1],
        &Shape {
            extent: [4, 1, 1],
            ..su
        },
        tiling,
    );
    let info = |v| {
        [vk::DescriptorImageInfo {
            sampler: vk::Sampler::null(),
            image_view: v,
            image_layout: vk::ImageLayout::GENERAL,
        }]
    };
    let (iu, is) = (info(u.view), info(si.view));
    let bi = [vk::DescriptorBufferInfo {
        buffer: c.buf(b).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let set = c.k(k).set;
    let w = [
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
            .image_info(&iu),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(1)
            .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
            .image_info(&is),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(2)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&bi),
    ];
    // SAFETY: valid writes to a set no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&w, &[]) };
    c.run(|dev, cb| {
        to_general(c, cb, u.image);
        to_general(c, cb, si.image);
        c.bind_kernel(cb, k);
        for mode in 0..3u32 {
            if mode > 0 {
                c.barrier(cb);
            }
            push(c, cb, k, &mode.to_le_bytes());
            // SAFETY: recording into a live command buffer.
            unsafe { dev.cmd_dispatch(cb, 1, 1, 1) };
        }
    })
    .unwrap();
    let words = c.buf(b).read_u32s(20);
    destroy_image(c, u);
    destroy_image(c, si);
    words
}

/// Storage texel buffers: the same store/load round trip through a buffer view, and an
/// atomic add on an r32ui texel buffer.
const TEXEL_BUFFER_SHADER: &str = "#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0, rgba32f) uniform imageBuffer f;
layout(set = 0, binding = 1, r32ui) uniform uimageBuffer u;
layout(set = 0, binding = 2) buffer B { uvec4 texels[24]; uint words[]; };
layout(push_constant) uniform P { uint mode; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (mode == 0u) {
    if (i < 24u) imageStore(f, int(i), uintBitsToFloat(texels[i]));
    if (i < 8u) imageStore(u, int(i), uvec4(words[i]));
  } else if (mode == 1u) {
    imageAtomicAdd(u, int(i % 8u), i + 1u);
  } else {
    if (i < 24u) texels[i] = floatBitsToUint(imageLoad(f, int(i)));
    if (i < 8u) words[i] = imageLoad(u, int(i)).x;
  }
}
";

fn texel_buffers(c: &mut Ctx) -> Vec<u32> {
    let types = [
        vk::DescriptorType::STORAGE_TEXEL_BUFFER,
        vk::DescriptorType::STORAGE_TEXEL_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let k = c
        .kernel_with(
            &spirv("texel_buffers", Some(TEXEL_BUFFER_SHADER)),
            &types,
            4,
            &[],
            vk::PipelineCache::null(),
        )
        .unwrap();
    let b = c.buffer(24 * 16 + 8 * 4);
    let mut data = inputs(&FORMATS[5], 24, 9);
    data.extend(random_u32s(3, 8).iter().map(|x| x % 1000));
    c.buf(b).write_u32s(&data);
    // The texel buffers live in one buffer (32 rgba32f texels, then 8 r32ui ones at 512).
    let tb = c.buffer(512 + 64);
    let view = |format, offset, range| {
        // SAFETY: a valid view of a live buffer; destroyed below.
        unsafe {
            c.dev
                .create_buffer_view(
                    &vk::BufferViewCreateInfo::default()
                        .buffer(c.buf(tb).buffer)
                        .format(format)
                        .offset(offset)
                        .range(range),
                    None,
                )
                .unwrap()
        }
    };
    let vf = [view(vk::Format::R32G32B32A32_SFLOAT, 0, 24 * 16)];
    let vu = [view(vk::Format::R32_UINT, 512, vk::WHOLE_SIZE)];
    let bi = [vk::DescriptorBufferInfo {
        buffer: c.buf(b).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let set = c.k(k).set;
    let w = [
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_TEXEL_BUFFER)
            .texel_buffer_view(&vf),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(1)
            .descriptor_type(vk::DescriptorType::STORAGE_TEXEL_BUFFER)
            .texel_buffer_view(&vu),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(2)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&bi),
    ];
    // SAFETY: valid writes to a set no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&w, &[]) };
    c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        for mode in 0..3u32 {
            if mode > 0 {
                c.barrier(cb);
            }
            push(c, cb, k, &mode.to_le_bytes());
            // SAFETY: recording into a live command buffer.
            unsafe { dev.cmd_dispatch(cb, 2, 1, 1) };
        }
    })
    .unwrap();
    let mut out = c.buf(b).read_u32s(24 * 4 + 8);
    // The buffer's memory too: the texel buffer's bytes are the formats' memory layout.
    out.extend(c.buf(tb).read_u32s(128 + 8));
    // SAFETY: idle views of this device.
    unsafe {
        c.dev.destroy_buffer_view(vf[0], None);
        c.dev.destroy_buffer_view(vu[0], None);
    }
    out
}

/// Every case on the driver the loader picks in this process.
fn run_cases() -> Results {
    let mut r = Results::new();
    let mut c = Ctx::new();
    let tilings = [
        ("linear", vk::ImageTiling::LINEAR),
        ("optimal", vk::ImageTiling::OPTIMAL),
    ];
    for (fi, f) in FORMATS.iter().enumerate() {
        let shapes: &[Shape] = if fi == 0 || fi == 5 {
            SHAPES
        } else {
            &SHAPES[..1]
        };
        for s in shapes {
            let code = spirv("image_storage", Some(&shader(f, s)));
            let k = c
                .kernel_with(&code, TYPES, 16, &[], vk::PipelineCache::null())
                .unwrap();
            for (tn, t) in tilings {
                let (words, bytes) = round_trip(&mut c, k, f, s, t, 17 + fi as u32);
                r.insert(format!("{}_{}_{tn}", f.glsl, s.name), words);
                if !bytes.is_empty() {
                    r.insert(format!("{}_{}_{tn}_memory", f.glsl, s.name), bytes);
                }
            }
        }
    }
    for (tn, t) in tilings {
        r.insert(format!("atomics_{tn}"), atomics(&mut c, t));
    }
    r.insert("texel_buffers".into(), texel_buffers(&mut c));
    c.finish();
    r
}

#[test]
#[ignore = "runs in the child processes of storage_images_match_lavapipe"]
fn child_runs_image_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_cases());
}

#[test]
fn storage_images_match_lavapipe() {
    let (ferrite, lvp) = run_on_ferrite_and_lavapipe("child_runs_image_cases");
    for (name, want) in &lvp {
        let got = ferrite
            .get(name)
            .unwrap_or_else(|| panic!("{name}: no Ferrite result"));
        assert_eq!(
            got, want,
            "{name}: Ferrite (left) differs from lavapipe (right)"
        );
    }
    // Tiled and linear images give the same texels.
    for (name, words) in &ferrite {
        if let Some(base) = name.strip_suffix("_linear") {
            assert_eq!(
                Some(words),
                ferrite.get(&format!("{base}_optimal")),
                "{base}: LINEAR and OPTIMAL differ"
            );
        }
    }
}
