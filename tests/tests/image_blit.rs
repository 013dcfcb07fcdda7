//! vkCmdBlitImage end to end: nearest and linear filters, up- and down-scaling by
//! non-integer factors, regions flipped on the source side and on the destination side,
//! format conversion (UNORM <-> float, float -> half, sRGB decoding, integer formats),
//! 2-D arrays, 1-D arrays and 3-D images, LINEAR and OPTIMAL tiling. The same program runs on
//! Ferrite's simulated GPU and on lavapipe (child processes) and every destination is read
//! back whole (texels outside the blitted region keep a clear colour).
//!
//! The spec allows vkCmdBlitImage only on a queue with graphics support, which Ferrite (a
//! compute-only driver) does not have, so the validation layer reports every call on
//! Ferrite; the test allows that one report and no other. The format features (BLIT_SRC,
//! BLIT_DST, required by the spec's format tables whatever the queues) and the command
//! itself still work, for applications and layers that call it anyway.
//!
//! What must match: a nearest blit between identical formats picks source texels, so the
//! bytes must be equal (the test coordinates stay away from texel edges, where the spec
//! leaves the choice of texel to the implementation's rounding). Conversions and linear
//! filtering are compared within the spec's precision: one code of an 8-bit UNORM format
//! (Vulkan's float -> UNORM conversion may round either way by up to one ULP), and, for linear
//! filtering, the 8-bit sub-texel weights Gen9 uses (2/256 of the difference between
//! neighbouring texels, at most 2/256 of the format's range). The tolerance of each case is
//! the prefix of its name.

mod compute_common;

use ash::vk;
use compute_common::*;

/// How a case's destination is compared: by texel component, in the destination format.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Cmp {
    /// Every byte equal.
    Exact,
    /// 8-bit UNORM components within this many codes.
    Unorm8(u32),
    /// 32-bit floats within this absolute difference.
    F32(f32),
    /// 16-bit floats within this absolute difference (plus one half-float ULP).
    F16(f32),
}

impl Cmp {
    fn prefix(self) -> &'static str {
        match self {
            Cmp::Exact => "exact",
            Cmp::Unorm8(1) => "unorm8x1",
            Cmp::Unorm8(_) => "unorm8x2",
            Cmp::F32(_) => "f32",
            Cmp::F16(_) => "f16",
        }
    }

    fn from_name(name: &str) -> Cmp {
        match name.split('.').next().unwrap() {
            "exact" => Cmp::Exact,
            "unorm8x1" => Cmp::Unorm8(1),
            "unorm8x2" => Cmp::Unorm8(2),
            "f32" => Cmp::F32(2.0 / 256.0),
            "f16" => Cmp::F16(2.0 / 256.0),
            p => panic!("unknown comparison {p}"),
        }
    }
}

/// One image of a case.
#[derive(Clone, Copy)]
struct Side {
    format: vk::Format,
    bpt: u32,
    ty: vk::ImageType,
    extent: [u32; 3],
    layers: u32,
    tiling: vk::ImageTiling,
}

/// How the source texels are generated.
#[derive(Clone, Copy)]
enum Data {
    /// Random bytes (UNORM, sRGB and integer formats: every bit pattern is a value).
    Bytes,
    /// 32-bit floats in [-2, 2).
    F32,
    /// 16-bit floats of magnitude 2^-4 .. 4.
    F16,
}

/// One region: source offsets, destination offsets, source base layer, destination base
/// layer, layer count.
type Region = ([[i32; 3]; 2], [[i32; 3]; 2], u32, u32, u32);

struct Case {
    name: &'static str,
    cmp: Cmp,
    src: Side,
    data: Data,
    dst: Side,
    filter: vk::Filter,
    regions: &'static [Region],
}

const fn side(format: vk::Format, bpt: u32, extent: [u32; 3]) -> Side {
    Side {
        format,
        bpt,
        ty: vk::ImageType::TYPE_2D,
        extent,
        layers: 1,
        tiling: vk::ImageTiling::OPTIMAL,
    }
}

const RGBA8: vk::Format = vk::Format::R8G8B8A8_UNORM;

const CASES: &[Case] = &[
    // Up by 3 x 2 (destination texel centres map to sixths and quarters of source texels,
    // never to an edge), into the middle of a larger destination.
    Case {
        name: "rgba8_nearest_up",
        cmp: Cmp::Exact,
        src: side(RGBA8, 4, [16, 8, 1]),
        data: Data::Bytes,
        dst: side(RGBA8, 4, [56, 20, 1]),
        filter: vk::Filter::NEAREST,
        regions: &[([[0, 0, 0], [16, 8, 1]], [[3, 2, 0], [51, 18, 1]], 0, 0, 1)],
    },
    // Flipped on the source side in x and y, and on the destination side in x; two regions.
    Case {
        name: "rgba8_nearest_flip",
        cmp: Cmp::Exact,
        src: Side {
            tiling: vk::ImageTiling::LINEAR,
            ..side(RGBA8, 4, [16, 8, 1])
        },
        data: Data::Bytes,
        dst: side(RGBA8, 4, [40, 16, 1]),
        filter: vk::Filter::NEAREST,
        regions: &[
            ([[16, 8, 0], [0, 0, 1]], [[0, 0, 0], [16, 8, 1]], 0, 0, 1),
            ([[2, 1, 0], [14, 7, 1]], [[39, 8, 0], [15, 14, 1]], 0, 0, 1),
        ],
    },
    // Down by 16/6 x 8/3 with the linear filter.
    Case {
        name: "rgba8_linear_down",
        cmp: Cmp::Unorm8(2),
        src: side(RGBA8, 4, [16, 8, 1]),
        data: Data::Bytes,
        dst: side(RGBA8, 4, [8, 4, 1]),
        filter: vk::Filter::LINEAR,
        regions: &[([[0, 0, 0], [16, 8, 1]], [[1, 1, 0], [7, 4, 1]], 0, 0, 1)],
    },
    // UNORM -> float with linear upscaling (and a flipped y).
    Case {
        name: "rgba8_to_rgba32f_linear",
        cmp: Cmp::F32(2.0 / 256.0),
        src: side(RGBA8, 4, [8, 8, 1]),
        data: Data::Bytes,
        dst: side(vk::Format::R32G32B32A32_SFLOAT, 16, [20, 12, 1]),
        filter: vk::Filter::LINEAR,
        regions: &[([[0, 8, 0], [8, 0, 1]], [[0, 0, 0], [20, 12, 1]], 0, 0, 1)],
    },
    // float -> half, nearest, down by 3 (texel centres at 1.5, 4.5, ...).
    Case {
        name: "r32f_to_r16f_nearest",
        cmp: Cmp::F16(0.0),
        src: side(vk::Format::R32_SFLOAT, 4, [24, 9, 1]),
        data: Data::F32,
        dst: side(vk::Format::R16_SFLOAT, 2, [8, 3, 1]),
        filter: vk::Filter::NEAREST,
        regions: &[([[0, 0, 0], [24, 9, 1]], [[0, 0, 0], [8, 3, 1]], 0, 0, 1)],
    },
    // half -> UNORM (clamps values outside [0, 1]), nearest at 1:1 and scaled.
    Case {
        name: "rgba16f_to_rgba8_nearest",
        cmp: Cmp::Unorm8(1),
        src: side(vk::Format::R16G16B16A16_SFLOAT, 8, [10, 6, 1]),
        data: Data::F16,
        dst: side(RGBA8, 4, [24, 12, 1]),
        filter: vk::Filter::NEAREST,
        regions: &[
            ([[0, 0, 0], [10, 6, 1]], [[0, 0, 0], [10, 6, 1]], 0, 0, 1),
            ([[0, 0, 0], [10, 6, 1]], [[10, 0, 0], [24, 12, 1]], 0, 0, 1),
        ],
    },
    // sRGB decoding on the way to UNORM.
    Case {
        name: "srgb_to_rgba8_nearest",
        cmp: Cmp::Unorm8(1),
        src: side(vk::Format::R8G8B8A8_SRGB, 4, [12, 10, 1]),
        data: Data::Bytes,
        dst: side(RGBA8, 4, [12, 10, 1]),
        filter: vk::Filter::NEAREST,
        regions: &[([[0, 0, 0], [12, 10, 1]], [[0, 0, 0], [12, 10, 1]], 0, 0, 1)],
    },
    // Integer texels between layers of 2-D arrays (layers 1..3 to 0..2), scaled.
    Case {
        name: "rgba8ui_array_nearest",
        cmp: Cmp::Exact,
        src: Side {
            layers: 3,
            ..side(vk::Format::R8G8B8A8_UINT, 4, [12, 6, 1])
        },
        data: Data::Bytes,
        dst: Side {
            layers: 3,
            ..side(vk::Format::R8G8B8A8_UINT, 4, [36, 12, 1])
        },
        filter: vk::Filter::NEAREST,
        regions: &[([[0, 0, 0], [12, 6, 1]], [[0, 0, 0], [36, 12, 1]], 1, 0, 2)],
    },
    // Signed integers, flipped both ways, 1:1.
    Case {
        name: "rgba32i_nearest_flip",
        cmp: Cmp::Exact,
        src: side(vk::Format::R32G32B32A32_SINT, 16, [7, 5, 1]),
        data: Data::Bytes,
        dst: side(vk::Format::R32G32B32A32_SINT, 16, [7, 5, 1]),
        filter: vk::Filter::NEAREST,
        regions: &[([[7, 5, 0], [0, 0, 1]], [[0, 0, 0], [7, 5, 1]], 0, 0, 1)],
    },
    // 3-D: half the width, twice the depth.
    Case {
        name: "r32f_3d_nearest",
        cmp: Cmp::Exact,
        src: Side {
            ty: vk::ImageType::TYPE_3D,
            ..side(vk::Format::R32_SFLOAT, 4, [12, 6, 4])
        },
        data: Data::F32,
        dst: Side {
            ty: vk::ImageType::TYPE_3D,
            ..side(vk::Format::R32_SFLOAT, 4, [4, 6, 8])
        },
        filter: vk::Filter::NEAREST,
        regions: &[([[0, 0, 0], [12, 6, 4]], [[0, 0, 0], [4, 6, 8]], 0, 0, 1)],
    },
    // 3-D with the linear filter, down in every axis.
    Case {
        name: "r32f_3d_linear",
        cmp: Cmp::F32(4.0 * 2.0 / 256.0),
        src: Side {
            ty: vk::ImageType::TYPE_3D,
            ..side(vk::Format::R32_SFLOAT, 4, [8, 8, 6])
        },
        data: Data::F32,
        dst: Side {
            ty: vk::ImageType::TYPE_3D,
            ..side(vk::Format::R32_SFLOAT, 4, [5, 3, 4])
        },
        filter: vk::Filter::LINEAR,
        regions: &[([[0, 0, 0], [8, 8, 6]], [[0, 0, 0], [5, 3, 4]], 0, 0, 1)],
    },
    // 1-D arrays: two layers halved with the linear filter (every destination texel is the
    // mean of two source texels).
    Case {
        name: "rgba32f_1d_array_linear",
        cmp: Cmp::F32(4.0 * 2.0 / 256.0),
        src: Side {
            ty: vk::ImageType::TYPE_1D,
            layers: 2,
            ..side(vk::Format::R32G32B32A32_SFLOAT, 16, [20, 1, 1])
        },
        data: Data::F32,
        dst: Side {
            ty: vk::ImageType::TYPE_1D,
            layers: 2,
            ..side(vk::Format::R32G32B32A32_SFLOAT, 16, [12, 1, 1])
        },
        filter: vk::Filter::LINEAR,
        regions: &[([[0, 0, 0], [20, 1, 1]], [[1, 0, 0], [11, 1, 1]], 0, 0, 2)],
    },
];

struct Img {
    image: vk::Image,
    memory: vk::DeviceMemory,
}

fn create_image(c: &Ctx, s: &Side) -> Img {
    let props = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let mem_type = c.h.memory_type(c.pd, props).unwrap();
    let usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    let (image, memory) = bound_image(
        c,
        &vk::ImageCreateInfo::default()
            .image_type(s.ty)
            .format(s.format)
            .extent(extent(s.extent))
            .mip_levels(1)
            .array_layers(s.layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(s.tiling)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED),
        mem_type,
    );
    Img { image, memory }
}

fn extent(e: [u32; 3]) -> vk::Extent3D {
    vk::Extent3D {
        width: e[0],
        height: e[1],
        depth: e[2],
    }
}

fn offsets(o: [[i32; 3]; 2]) -> [vk::Offset3D; 2] {
    o.map(|v| vk::Offset3D {
        x: v[0],
        y: v[1],
        z: v[2],
    })
}

fn layers(base: u32, count: u32) -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: 0,
        base_array_layer: base,
        layer_count: count,
    }
}

fn whole(s: &Side) -> vk::BufferImageCopy {
    vk::BufferImageCopy {
        buffer_offset: 0,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: layers(0, s.layers),
        image_offset: vk::Offset3D::default(),
        image_extent: extent(s.extent),
    }
}

fn bytes(s: &Side) -> usize {
    (s.extent.iter().product::<u32>() * s.layers * s.bpt) as usize
}

/// The source texels of `data`'s kind, as words.
fn source_words(data: Data, seed: u32, n_bytes: usize) -> Vec<u32> {
    let words = random_u32s(seed, n_bytes.div_ceil(4));
    match data {
        Data::Bytes => words,
        Data::F32 => words
            .iter()
            .map(|w| ((*w >> 8) as f32 / (1u32 << 24) as f32 * 4.0 - 2.0).to_bits())
            .collect(),
        Data::F16 => words
            .iter()
            .map(|w| {
                let half = |v: u32| {
                    // sign, exponent 11..17 (2^-4 .. 4), random mantissa
                    (v & 0x8000) | ((11 + (v >> 10) % 7) << 10) | (v & 0x3FF)
                };
                half(*w) | (half(w.rotate_left(13)) << 16)
            })
            .collect(),
    }
}

/// Transfer -> transfer/host memory dependency with a layout change of `images`.
fn transition(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    images: &[(vk::Image, vk::ImageLayout, vk::ImageLayout)],
) {
    let barriers: Vec<_> = images
        .iter()
        .map(|&(image, old, new)| {
            vk::ImageMemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .dst_access_mask(
                    vk::AccessFlags::TRANSFER_READ
                        | vk::AccessFlags::TRANSFER_WRITE
                        | vk::AccessFlags::HOST_READ,
                )
                .old_layout(old)
                .new_layout(new)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image)
                .subresource_range(color_range(1, vk::REMAINING_ARRAY_LAYERS))
        })
        .collect();
    // SAFETY: recording into a live command buffer.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &barriers,
        )
    };
}

fn run_case(c: &mut Ctx, r: &mut Results, ci: usize) {
    let case = &CASES[ci];
    let a = create_image(c, &case.src);
    let b = create_image(c, &case.dst);
    let src_bytes = bytes(&case.src);
    let dst_bytes = bytes(&case.dst);
    let up = c.buffer(src_bytes.div_ceil(16) as u64 * 16);
    let seed = 0xB117_0000 + ci as u32;
    c.buf(up)
        .write_u32s(&source_words(case.data, seed, src_bytes));
    let out = zeroed(c, dst_bytes.div_ceil(4));
    // 0.25, 0.75, 0.5, 1.0 (integers: the same bits).
    let clear = vk::ClearColorValue {
        uint32: [0x3E80_0000, 0x3F40_0000, 0x3F00_0000, 0x3F80_0000],
    };
    let regions: Vec<vk::ImageBlit> = case
        .regions
        .iter()
        .map(|&(s, d, sl, dl, n)| vk::ImageBlit {
            src_subresource: layers(sl, n),
            src_offsets: offsets(s),
            dst_subresource: layers(dl, n),
            dst_offsets: offsets(d),
        })
        .collect();
    let undef = vk::ImageLayout::UNDEFINED;
    let tdst = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
    let tsrc = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
    // SAFETY: valid commands on live objects; the submission is waited for.
    unsafe {
        c.run(|d, cb| {
            transition(d, cb, &[(a.image, undef, tdst), (b.image, undef, tdst)]);
            d.cmd_copy_buffer_to_image(cb, c.buf(up).buffer, a.image, tdst, &[whole(&case.src)]);
            d.cmd_clear_color_image(
                cb,
                b.image,
                tdst,
                &clear,
                &[color_range(1, vk::REMAINING_ARRAY_LAYERS)],
            );
            transition(d, cb, &[(a.image, tdst, tsrc), (b.image, tdst, tdst)]);
            d.cmd_blit_image(cb, a.image, tsrc, b.image, tdst, &regions, case.filter);
            transition(d, cb, &[(b.image, tdst, tsrc)]);
            d.cmd_copy_image_to_buffer(cb, b.image, tsrc, c.buf(out).buffer, &[whole(&case.dst)]);
            transition(d, cb, &[]);
        })
        .unwrap();
    }
    let name = format!("{}.{}", case.cmp.prefix(), case.name);
    r.insert(name, c.buf(out).read_u32s(dst_bytes.div_ceil(4)));
    // SAFETY: idle objects created above.
    unsafe {
        for i in [a, b] {
            c.dev.destroy_image(i.image, None);
            c.dev.free_memory(i.memory, None);
        }
    }
}

#[test]
#[ignore = "runs in the child processes of blits_match_lavapipe"]
fn child_runs_blit_cases() {
    if !is_child() {
        return;
    }
    let mut r = Results::new();
    let mut c = Ctx::new();
    for ci in 0..CASES.len() {
        run_case(&mut c, &mut r, ci);
    }
    // The spec allows vkCmdBlitImage only on queues with VK_QUEUE_GRAPHICS_BIT; Ferrite's one
    // queue family is compute + transfer, so the validation layer reports each call. That
    // report is the only one allowed here.
    let others: Vec<_> =
        c.h.problems()
            .into_iter()
            .filter(|m| !m.text.contains("VUID-vkCmdBlitImage-commandBuffer-cmdpool"))
            .collect();
    assert!(others.is_empty(), "validation reported {others:#?}");
    c.finish_unchecked();
    print_results(&r);
}

fn f16_to_f32(h: u16) -> f32 {
    half::f16::from_bits(h).to_f32()
}

/// The first difference beyond `cmp`'s tolerance: (component index, Ferrite, lavapipe).
fn first_difference(cmp: Cmp, got: &[u32], want: &[u32]) -> Option<(usize, String, String)> {
    let bytes = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let (g, w) = (bytes(got), bytes(want));
    match cmp {
        Cmp::Exact => g
            .iter()
            .zip(&w)
            .position(|(a, b)| a != b)
            .map(|i| (i, format!("{:#04x}", g[i]), format!("{:#04x}", w[i]))),
        Cmp::Unorm8(tol) => g
            .iter()
            .zip(&w)
            .position(|(a, b)| u32::from(a.abs_diff(*b)) > tol)
            .map(|i| (i, g[i].to_string(), w[i].to_string())),
        Cmp::F32(tol) => got
            .iter()
            .zip(want)
            .map(|(a, b)| (f32::from_bits(*a), f32::from_bits(*b)))
            .position(|(a, b)| (a - b).abs() > tol || a.is_nan() != b.is_nan())
            .map(|i| {
                let (a, b) = (f32::from_bits(got[i]), f32::from_bits(want[i]));
                (i, a.to_string(), b.to_string())
            }),
        Cmp::F16(tol) => {
            let halves = |b: &[u8]| -> Vec<u16> {
                b.chunks(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect()
            };
            let (hg, hw) = (halves(&g), halves(&w));
            hg.iter()
                .zip(&hw)
                .position(|(a, b)| {
                    let (x, y) = (f16_to_f32(*a), f16_to_f32(*b));
                    let ulp = y.abs().max(f32::MIN_POSITIVE) * 2f32.powi(-10);
                    (x - y).abs() > tol + ulp
                })
                .map(|i| {
                    (
                        i,
                        f16_to_f32(hg[i]).to_string(),
                        f16_to_f32(hw[i]).to_string(),
                    )
                })
        }
    }
}

#[test]
fn blits_match_lavapipe() {
    compare_results_with_lavapipe("child_runs_blit_cases", CASES.len(), |name, got, want| {
        first_difference(Cmp::from_name(name), got, want)
            .map(|(i, g, w)| {
                format!(
                    "{name}: component {i} differs: Ferrite {g}, lavapipe {w} (seed 0xB117_0000 + case index)"
                )
            })
            .into_iter()
            .collect()
    });
}
