//! VkSampler and sampler descriptors through the loader, validation on: samplers of every
//! filter/address/border combination a compute shader can use, SAMPLER bindings with and
//! without immutable samplers, writes and copies between sets.

use ash::vk;
use ferrite_tests::icd::Harness;

#[test]
fn samplers_and_sampler_descriptors() {
    let h = Harness::new();
    let device = h.create_device(h.physical_device());
    let modes = [
        vk::SamplerAddressMode::REPEAT,
        vk::SamplerAddressMode::MIRRORED_REPEAT,
        vk::SamplerAddressMode::CLAMP_TO_EDGE,
        vk::SamplerAddressMode::CLAMP_TO_BORDER,
    ];
    let borders = [
        vk::BorderColor::FLOAT_TRANSPARENT_BLACK,
        vk::BorderColor::INT_OPAQUE_BLACK,
        vk::BorderColor::FLOAT_OPAQUE_WHITE,
    ];
    // SAFETY: valid create infos and handles throughout; everything is destroyed at the end.
    unsafe {
        let mut samplers = Vec::new();
        for (i, &mode) in modes.iter().enumerate() {
            for (j, &filter) in [vk::Filter::NEAREST, vk::Filter::LINEAR].iter().enumerate() {
                let info = vk::SamplerCreateInfo::default()
                    .mag_filter(filter)
                    .min_filter(filter)
                    .mipmap_mode(vk::SamplerMipmapMode::LINEAR)
                    .address_mode_u(mode)
                    .address_mode_v(mode)
                    .address_mode_w(mode)
                    .mip_lod_bias(0.5 * j as f32)
                    .max_lod(vk::LOD_CLAMP_NONE)
                    .border_color(borders[(i + j) % borders.len()]);
                samplers.push(device.create_sampler(&info, None).unwrap());
            }
        }
        let unnormalized = vk::SamplerCreateInfo::default()
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .unnormalized_coordinates(true);
        samplers.push(device.create_sampler(&unnormalized, None).unwrap());

        let immutable = [samplers[0], samplers[1]];
        let bindings = [
            vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::SAMPLER)
                .descriptor_count(3)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
            vk::DescriptorSetLayoutBinding::default()
                .binding(1)
                .descriptor_type(vk::DescriptorType::SAMPLER)
                .descriptor_count(2)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .immutable_samplers(&immutable),
            vk::DescriptorSetLayoutBinding::default()
                .binding(2)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
        ];
        let layout = device
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                None,
            )
            .unwrap();
        let sizes = [
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::SAMPLER,
                descriptor_count: 10,
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: 2,
            },
        ];
        let pool = device
            .create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(2)
                    .pool_sizes(&sizes),
                None,
            )
            .unwrap();
        let layouts = [layout, layout];
        let sets = device
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
            .unwrap();
        let infos: Vec<vk::DescriptorImageInfo> = samplers[2..5]
            .iter()
            .map(|&s| vk::DescriptorImageInfo::default().sampler(s))
            .collect();
        let write = vk::WriteDescriptorSet::default()
            .dst_set(sets[0])
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::SAMPLER)
            .image_info(&infos);
        let copy = vk::CopyDescriptorSet::default()
            .src_set(sets[0])
            .src_binding(0)
            .src_array_element(1)
            .dst_set(sets[1])
            .dst_binding(0)
            .dst_array_element(0)
            .descriptor_count(2);
        device.update_descriptor_sets(&[write], &[copy]);
        device.destroy_descriptor_pool(pool, None);
        device.destroy_descriptor_set_layout(layout, None);
        for s in samplers {
            device.destroy_sampler(s, None);
        }
        device.destroy_sampler(vk::Sampler::null(), None);
        ferrite_tests::icd::destroy_device(&device);
    }
    h.assert_clean();
}
