//! Images at the dimension limits Ferrite reports (anv's Gen9 values): maxImageDimension1D
//! and 2D 16384, maxImageDimension3D 2048, maxImageArrayLayers 2048. Each dimension is
//! taken to its limit on its own (the others 1) in R32_UINT (the narrowest storage format
//! Ferrite reports), so memory stays small (at most 8 MiB tiled); the image is cleared (vkCmdClearColorImage), a shader stores a texel at
//! the far corner and reads it and its neighbour back (typed messages), and the whole image
//! is copied to a buffer (vkCmdCopyImageToBuffer), where only that texel may be set. Both
//! Ferrite's simulated GPU and lavapipe must give the CPU model's answer. A cube at
//! maxImageDimensionCube (6 x 16384 x 16384 R8_UNORM texels, 1.5 GiB) is created and its memory requirements
//! checked, but not bound; the limits and vkGetPhysicalDeviceImageFormatProperties'
//! maximum extents must reach these values. (The corner is the last texel of the copy, so a
//! stray byte anywhere else shows up before it and fails the comparison.)

mod compute_common;

use ash::vk;
use compute_common::*;

const MAX_2D: u32 = 16384;
const MAX_3D: u32 = 2048;
const MAX_LAYERS: u32 = 2048;
const MARK: u32 = 0xA5;

struct Case {
    name: &'static str,
    ty: vk::ImageType,
    view: vk::ImageViewType,
    extent: [u32; 3],
    layers: u32,
    /// GLSL image type and the coordinate expression of the far corner (`c` = push ivec4).
    glsl: &'static str,
    coord: &'static str,
    prev: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "1d_16384",
        ty: vk::ImageType::TYPE_1D,
        view: vk::ImageViewType::TYPE_1D,
        extent: [MAX_2D, 1, 1],
        layers: 1,
        glsl: "uimage1D",
        coord: "c.x",
        prev: "c.x - 1",
    },
    Case {
        name: "2d_16384_wide",
        ty: vk::ImageType::TYPE_2D,
        view: vk::ImageViewType::TYPE_2D,
        extent: [MAX_2D, 1, 1],
        layers: 1,
        glsl: "uimage2D",
        coord: "c.xy",
        prev: "c.xy - ivec2(1, 0)",
    },
    Case {
        name: "2d_16384_tall",
        ty: vk::ImageType::TYPE_2D,
        view: vk::ImageViewType::TYPE_2D,
        extent: [1, MAX_2D, 1],
        layers: 1,
        glsl: "uimage2D",
        coord: "c.xy",
        prev: "c.xy - ivec2(0, 1)",
    },
    Case {
        name: "3d_2048_wide",
        ty: vk::ImageType::TYPE_3D,
        view: vk::ImageViewType::TYPE_3D,
        extent: [MAX_3D, 1, 1],
        layers: 1,
        glsl: "uimage3D",
        coord: "c.xyz",
        prev: "c.xyz - ivec3(1, 0, 0)",
    },
    Case {
        name: "3d_2048_deep",
        ty: vk::ImageType::TYPE_3D,
        view: vk::ImageViewType::TYPE_3D,
        extent: [1, 1, MAX_3D],
        layers: 1,
        glsl: "uimage3D",
        coord: "c.xyz",
        prev: "c.xyz - ivec3(0, 0, 1)",
    },
    Case {
        name: "1darray_2048",
        ty: vk::ImageType::TYPE_1D,
        view: vk::ImageViewType::TYPE_1D_ARRAY,
        extent: [1, 1, 1],
        layers: MAX_LAYERS,
        glsl: "uimage1DArray",
        coord: "c.xy",
        prev: "c.xy - ivec2(0, 1)",
    },
    Case {
        name: "2darray_2048",
        ty: vk::ImageType::TYPE_2D,
        view: vk::ImageViewType::TYPE_2D_ARRAY,
        extent: [1, 1, 1],
        layers: MAX_LAYERS,
        glsl: "uimage2DArray",
        coord: "c.xyz",
        prev: "c.xyz - ivec3(0, 0, 1)",
    },
];

fn shader(k: &Case) -> String {
    format!(
        "
#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, r32ui) uniform {t} img;
layout(set = 0, binding = 1) buffer Out {{ uint o[]; }};
layout(push_constant) uniform P {{ ivec4 c; }};
void main() {{
    imageStore(img, {c}, uvec4({MARK}u));
    o[0] = imageLoad(img, {c}).x;
    o[1] = imageLoad(img, {p}).x;
}}
",
        t = k.glsl,
        c = k.coord,
        p = k.prev,
    )
}

/// The far corner as (x, y, z or layer).
fn corner(k: &Case) -> [u32; 3] {
    if k.layers > 1 && k.ty == vk::ImageType::TYPE_1D {
        return [k.extent[0] - 1, k.layers - 1, 0];
    }
    if k.layers > 1 {
        return [k.extent[0] - 1, k.extent[1] - 1, k.layers - 1];
    }
    k.extent.map(|e| e - 1)
}

fn texels(k: &Case) -> usize {
    (k.extent[0] * k.extent[1] * k.extent[2] * k.layers) as usize
}

fn run_case(c: &mut Ctx, k: &Case) -> Vec<u32> {
    let mem_type =
        c.h.memory_type(c.pd, vk::MemoryPropertyFlags::HOST_VISIBLE)
            .unwrap();
    let (image, memory) = bound_image(
        c,
        &vk::ImageCreateInfo::default()
            .image_type(k.ty)
            .format(vk::Format::R32_UINT)
            .extent(vk::Extent3D {
                width: k.extent[0],
                height: k.extent[1],
                depth: k.extent[2],
            })
            .mip_levels(1)
            .array_layers(k.layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(
                vk::ImageUsageFlags::STORAGE
                    | vk::ImageUsageFlags::TRANSFER_SRC
                    | vk::ImageUsageFlags::TRANSFER_DST,
            )
            .initial_layout(vk::ImageLayout::UNDEFINED),
        mem_type,
    );
    let range = color_range(1, k.layers);
    let img = ImageAndView {
        image,
        memory,
        view: color_view(c, image, k.view, vk::Format::R32_UINT, range),
    };
    let types = [
        vk::DescriptorType::STORAGE_IMAGE,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let code = spirv(&format!("image_limits_{}", k.name), Some(&shader(k)));
    let kern = c
        .kernel_with(&code, &types, 16, &[], vk::PipelineCache::null())
        .unwrap();
    let out = zeroed(c, 4);
    write_image_and_buffer(c, kern, vk::DescriptorType::STORAGE_IMAGE, img.view, out);
    let n = texels(k);
    let whole = c.buffer(n as u64 * 4);
    let [x, y, z] = corner(k);
    let pc: Vec<u8> = [x, y, z, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let clear = (
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        vk::AccessFlags::TRANSFER_WRITE,
        vk::PipelineStageFlags::TRANSFER,
    );
    let shader_rw = (
        vk::ImageLayout::GENERAL,
        vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
        vk::PipelineStageFlags::COMPUTE_SHADER,
    );
    let read = (
        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        vk::AccessFlags::TRANSFER_READ,
        vk::PipelineStageFlags::TRANSFER,
    );
    let region = vk::BufferImageCopy {
        buffer_offset: 0,
        buffer_row_length: 0,
        buffer_image_height: 0,
        image_subresource: vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: k.layers,
        },
        image_offset: vk::Offset3D::default(),
        image_extent: vk::Extent3D {
            width: k.extent[0],
            height: k.extent[1],
            depth: k.extent[2],
        },
    };
    let whole_buf = c.buf(whole).buffer;
    // SAFETY: valid commands on live objects; the submission is waited for.
    unsafe {
        c.run(|d, cb| {
            let undefined = (
                vk::ImageLayout::UNDEFINED,
                vk::AccessFlags::empty(),
                vk::PipelineStageFlags::TOP_OF_PIPE,
            );
            image_barrier(d, cb, image, range, undefined, clear);
            d.cmd_clear_color_image(
                cb,
                image,
                clear.0,
                &vk::ClearColorValue::default(),
                &[range],
            );
            image_barrier(d, cb, image, range, clear, shader_rw);
            c.bind_kernel(cb, kern);
            push(c, cb, kern, &pc);
            dispatch(c, cb, 1, 1);
            image_barrier(d, cb, image, range, shader_rw, read);
            d.cmd_copy_image_to_buffer(cb, image, read.0, whole_buf, &[region]);
            c.barrier(cb);
        })
        .unwrap();
    }
    let mut r = c.buf(out).read_u32s(2);
    // The image's texels, as (index, value) pairs of the ones that are set.
    for (i, t) in c.buf(whole).read_u32s(n).iter().enumerate() {
        if *t != 0 {
            r.extend([i as u32, *t]);
        }
    }
    img.destroy(c);
    r
}

/// The expected result: the texel read back, its (cleared) neighbour, and the one set byte
/// of the copy at the corner's linear index.
fn expected(k: &Case) -> Vec<u32> {
    let [x, y, z] = corner(k);
    let [w, h, _] = k.extent;
    vec![MARK, 0, x + w * (y + h * z), MARK]
}

/// The cube at maxImageDimensionCube and one past each limit: (name, 1 = as expected).
fn creation_checks(c: &Ctx) -> Vec<u32> {
    let inst = &c.h.instance;
    let props = |ty, usage, flags| {
        // SAFETY: a query on a live physical device.
        unsafe {
            inst.get_physical_device_image_format_properties(
                c.pd,
                vk::Format::R32_UINT,
                ty,
                vk::ImageTiling::OPTIMAL,
                usage,
                flags,
            )
        }
    };
    let storage = vk::ImageUsageFlags::STORAGE;
    let mut v = Vec::new();
    // SAFETY: a query on a live physical device.
    let l = unsafe { inst.get_physical_device_properties(c.pd) }.limits;
    v.push(u32::from(
        [
            l.max_image_dimension1_d,
            l.max_image_dimension2_d,
            l.max_image_dimension_cube,
        ]
        .iter()
        .all(|&d| d >= MAX_2D)
            && l.max_image_dimension3_d >= MAX_3D
            && l.max_image_array_layers >= MAX_LAYERS,
    ));
    let p2 = props(
        vk::ImageType::TYPE_2D,
        storage,
        vk::ImageCreateFlags::empty(),
    )
    .unwrap();
    let p3 = props(
        vk::ImageType::TYPE_3D,
        storage,
        vk::ImageCreateFlags::empty(),
    )
    .unwrap();
    v.push(u32::from(
        p2.max_extent.width >= MAX_2D
            && p2.max_extent.height >= MAX_2D
            && p2.max_array_layers >= MAX_LAYERS
            && p3.max_extent.depth >= MAX_3D,
    ));
    // The cube: created with its memory requirements (at least 6 faces of 16384^2 texels),
    // in R8_UNORM (sampled), which keeps it under maxResourceSize (2 GiB).
    let cube = vk::ImageCreateInfo::default()
        .flags(vk::ImageCreateFlags::CUBE_COMPATIBLE)
        .image_type(vk::ImageType::TYPE_2D)
        .format(vk::Format::R8_UNORM)
        .extent(vk::Extent3D {
            width: MAX_2D,
            height: MAX_2D,
            depth: 1,
        })
        .mip_levels(1)
        .array_layers(6)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(vk::ImageTiling::OPTIMAL)
        .usage(vk::ImageUsageFlags::SAMPLED)
        .initial_layout(vk::ImageLayout::UNDEFINED);
    // SAFETY: a valid create info on a live device; destroyed at once.
    unsafe {
        let image = c.dev.create_image(&cube, None).unwrap();
        let req = c.dev.get_image_memory_requirements(image);
        v.push(u32::from(
            req.size >= 6 * u64::from(MAX_2D) * u64::from(MAX_2D),
        ));
        c.dev.destroy_image(image, None);
    }
    v
}

fn run_cases() -> Results {
    let mut c = Ctx::new();
    let mut r = Results::new();
    for k in CASES {
        let v = run_case(&mut c, k);
        r.insert(k.name.to_string(), v);
    }
    r.insert("creation".into(), creation_checks(&c));
    c.finish();
    r
}

#[test]
#[ignore = "runs in the child processes of images_work_at_the_dimension_limits"]
fn child_runs_image_limit_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_cases());
}

#[test]
fn images_work_at_the_dimension_limits() {
    let mut want = Results::new();
    for k in CASES {
        want.insert(k.name.to_string(), expected(k));
    }
    want.insert("creation".into(), vec![1, 1, 1]);
    check_ferrite_and_lavapipe_against("child_runs_image_limit_cases", &want);
}
