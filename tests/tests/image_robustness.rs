//! robustImageAccess against the *view's* dimensions, which AmberScript cannot express (its
//! images are whole, single-layer views): a 4x4 R32_UINT image with 2 levels and 3 layers is
//! bound through three storage views, the whole of level 0, layer 1 alone, and level 1 (2x2).
//! One workgroup fills the image, then reads and writes through the narrower views at texels
//! that exist in the image but lie outside the view (another layer, beyond level 1's extent),
//! then reads the image back. Vulkan's "Robust Image Access": reads outside the view return 0,
//! writes outside change nothing. The same program runs on Ferrite's simulated GPU and on
//! lavapipe (child processes), both checked against the CPU model.

mod compute_common;

use ash::vk;
use compute_common::*;

const SHADER: &str = "#version 450
layout(local_size_x = 4, local_size_y = 4, local_size_z = 3) in;
layout(set = 0, binding = 0, r32ui) uniform coherent uimage2DArray full;
layout(set = 0, binding = 1, r32ui) uniform coherent uimage2DArray part;
layout(set = 0, binding = 2, r32ui) uniform coherent uimage2DArray lvl1;
layout(set = 0, binding = 3) buffer O { uint o[]; };
void main() {
    ivec3 p = ivec3(gl_LocalInvocationID);
    uint i = gl_LocalInvocationIndex;
    imageStore(full, p, uvec4(1000u + i));
    if (p.x < 2 && p.y < 2) imageStore(lvl1, p, uvec4(5000u + i));
    memoryBarrierImage();
    barrier();
    o[i] = imageLoad(part, p).x;
    o[48u + i] = imageLoad(lvl1, p).x;
    memoryBarrierImage();
    barrier();
    if (p.z > 0) imageStore(part, p, uvec4(7u));
    if (p.x >= 2 || p.y >= 2) imageStore(lvl1, p, uvec4(9u));
    memoryBarrierImage();
    barrier();
    o[96u + i] = imageLoad(full, p).x;
    if (p.x < 2 && p.y < 2) o[144u + i] = imageLoad(lvl1, p).x;
}";

/// What the shader writes, from Vulkan's rules.
fn expected() -> Results {
    let mut o = vec![0u32; 192];
    for z in 0..3u32 {
        for y in 0..4u32 {
            for x in 0..4u32 {
                let i = (z * 16 + y * 4 + x) as usize;
                let small = x < 2 && y < 2;
                // `part` shows image layer 1 as its only layer.
                o[i] = if z == 0 { 1000 + 16 + y * 4 + x } else { 0 };
                o[48 + i] = if small { 5000 + i as u32 } else { 0 };
                o[96 + i] = 1000 + i as u32;
                o[144 + i] = if small { 5000 + i as u32 } else { 0 };
            }
        }
    }
    Results::from([("views".to_string(), o)])
}

fn ctx() -> Ctx {
    let mut robust = vk::PhysicalDeviceImageRobustnessFeatures::default().robust_image_access(true);
    Ctx::with_extension(c"VK_EXT_image_robustness", &mut robust)
}

fn run_cases() -> Results {
    let mut c = ctx();
    let code = spirv("image_robustness", Some(SHADER));
    let si = vk::DescriptorType::STORAGE_IMAGE;
    let k = c
        .kernel_with(
            &code,
            &[si, si, si, vk::DescriptorType::STORAGE_BUFFER],
            0,
            &[],
            vk::PipelineCache::null(),
        )
        .expect("pipeline");
    let out = zeroed(&mut c, 192);
    let (image, memory) = bound_image(
        &c,
        &vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(vk::Format::R32_UINT)
            .extent(vk::Extent3D {
                width: 4,
                height: 4,
                depth: 1,
            })
            .mip_levels(2)
            .array_layers(3)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(vk::ImageUsageFlags::STORAGE)
            .initial_layout(vk::ImageLayout::UNDEFINED),
        c.mem_type,
    );
    let view = |level: u32, layer: u32, layers: u32| {
        // SAFETY: a valid create info for a live image.
        unsafe {
            c.dev.create_image_view(
                &vk::ImageViewCreateInfo::default()
                    .image(image)
                    .view_type(vk::ImageViewType::TYPE_2D_ARRAY)
                    .format(vk::Format::R32_UINT)
                    .subresource_range(vk::ImageSubresourceRange {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        base_mip_level: level,
                        level_count: 1,
                        base_array_layer: layer,
                        layer_count: layers,
                    }),
                None,
            )
        }
        .unwrap()
    };
    let views = [view(0, 0, 3), view(0, 1, 1), view(1, 0, 3)];
    let infos: Vec<[vk::DescriptorImageInfo; 1]> = views
        .iter()
        .map(|&v| {
            [vk::DescriptorImageInfo {
                sampler: vk::Sampler::null(),
                image_view: v,
                image_layout: vk::ImageLayout::GENERAL,
            }]
        })
        .collect();
    let bi = [vk::DescriptorBufferInfo {
        buffer: c.buf(out).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let mut writes: Vec<_> = infos
        .iter()
        .enumerate()
        .map(|(b, ii)| {
            vk::WriteDescriptorSet::default()
                .dst_set(c.k(k).set)
                .dst_binding(b as u32)
                .descriptor_type(si)
                .image_info(ii)
        })
        .collect();
    writes.push(
        vk::WriteDescriptorSet::default()
            .dst_set(c.k(k).set)
            .dst_binding(3)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&bi),
    );
    // SAFETY: valid writes to a set no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&writes, &[]) };
    c.run(|d, cb| {
        // SAFETY: recording into a live command buffer; the image is alive.
        unsafe {
            image_barrier(
                d,
                cb,
                image,
                color_range(2, 3),
                (
                    vk::ImageLayout::UNDEFINED,
                    vk::AccessFlags::empty(),
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                ),
                (
                    vk::ImageLayout::GENERAL,
                    vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::SHADER_READ,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                ),
            )
        };
        c.bind_kernel(cb, k);
        dispatch(&c, cb, 1, 1);
    })
    .expect("submit");
    let words = c.buf(out).read_u32s(192);
    // SAFETY: the device is idle after `run`; these objects are no longer used.
    unsafe {
        for v in views {
            c.dev.destroy_image_view(v, None);
        }
        c.dev.destroy_image(image, None);
        c.dev.free_memory(memory, None);
    }
    c.finish();
    Results::from([("views".to_string(), words)])
}

#[test]
#[ignore = "runs in the child processes of outside_the_view_reads_zero_and_drops_writes"]
fn child_runs_view_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_cases());
}

#[test]
fn outside_the_view_reads_zero_and_drops_writes() {
    check_ferrite_and_lavapipe_against("child_runs_view_cases", &expected());
}
