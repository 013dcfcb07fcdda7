//! Inline uniform blocks (VK_EXT_inline_uniform_block) through the loader with the validation
//! layer: blocks of 16, 256 and 4096 bytes (maxInlineUniformBlockSize) in one set, filled by
//! VkWriteDescriptorSetInlineUniformBlock writes at several byte offsets (one running on from
//! one block into the next, the consecutive-binding rule), by copies between two sets and by a
//! descriptor update template; a shader reads every byte of the three blocks as uniform
//! blocks, and the results are compared with a CPU model of each set's bytes. The first set is
//! read, updated and read again in a second submission, together with the second set in the
//! same command buffer. Data are seeded (seed printed on failure).

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::{compute_binding, compute_layout};

/// Bytes of the blocks at bindings 0, 1, 2; binding 3 is the output buffer.
const SIZES: [usize; 3] = [16, 256, 4096];
const WORDS: usize = (16 + 256 + 4096) / 4;
const SEED: u32 = 0x1b1b_2024;

/// o = the three blocks' dwords, one after the other.
const SHADER: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform A { uvec4 a; };
layout(set = 0, binding = 1) uniform B { uvec4 b[16]; };
layout(set = 0, binding = 2) uniform C { uvec4 c[256]; };
layout(set = 0, binding = 3) buffer O { uint o[]; };
void main() {
    uint i = gl_LocalInvocationID.x;
    if (i < 4u) o[i] = a[i];
    o[4u + i] = b[i / 4u][i % 4u];
    for (uint k = 0u; k < 16u; k++) {
        uint j = i * 16u + k;
        o[68u + j] = c[j / 4u][j % 4u];
    }
}";

const IUB: vk::DescriptorType = vk::DescriptorType::INLINE_UNIFORM_BLOCK;

/// The bytes a set's blocks should hold.
#[derive(Clone)]
struct Model(Vec<Vec<u8>>);

impl Model {
    fn new() -> Model {
        Model(SIZES.iter().map(|&n| vec![0; n]).collect())
    }

    /// Writes `data` at byte `offset` of `binding`, continuing into the next bindings.
    fn write(&mut self, mut binding: usize, mut offset: usize, mut data: &[u8]) {
        while !data.is_empty() {
            let n = data.len().min(SIZES[binding] - offset);
            self.0[binding][offset..offset + n].copy_from_slice(&data[..n]);
            data = &data[n..];
            binding += 1;
            offset = 0;
        }
    }

    fn words(&self) -> Vec<u32> {
        self.0
            .concat()
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
}

fn bytes(seed: u32, n: usize) -> Vec<u8> {
    random_u32s(seed, n.div_ceil(4))
        .into_iter()
        .flat_map(u32::to_le_bytes)
        .take(n)
        .collect()
}

/// A device with VK_EXT_inline_uniform_block and its feature enabled.
fn ctx() -> Ctx {
    let mut iub =
        vk::PhysicalDeviceInlineUniformBlockFeatures::default().inline_uniform_block(true);
    Ctx::with_extension(c"VK_EXT_inline_uniform_block", &mut iub)
}

/// One inline-uniform-block write of `data` at byte `offset` of `binding`.
fn write(c: &Ctx, set: vk::DescriptorSet, binding: u32, offset: u32, data: &[u8]) {
    let mut block = vk::WriteDescriptorSetInlineUniformBlock::default().data(data);
    let w = vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(binding)
        .dst_array_element(offset)
        .descriptor_type(IUB)
        .push_next(&mut block);
    // descriptorCount is the byte count for this type.
    let w = vk::WriteDescriptorSet {
        descriptor_count: data.len() as u32,
        ..w
    };
    // SAFETY: a valid write to a set no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&[w], &[]) };
}

/// Copies `count` bytes from (`src`, `binding`, `from`) to (`dst`, `binding`, `to`).
fn copy(
    c: &Ctx,
    src: vk::DescriptorSet,
    dst: vk::DescriptorSet,
    binding: u32,
    from: u32,
    to: u32,
    count: u32,
) {
    let cp = vk::CopyDescriptorSet::default()
        .src_set(src)
        .src_binding(binding)
        .src_array_element(from)
        .dst_set(dst)
        .dst_binding(binding)
        .dst_array_element(to)
        .descriptor_count(count);
    // SAFETY: a valid copy between sets no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&[], &[cp]) };
}

fn check(name: &str, got: &[u32], model: &Model) {
    let want = model.words();
    if let Some(k) = (0..WORDS).find(|&k| got[k] != want[k]) {
        let (block, at) = match k {
            0..=3 => (0, k * 4),
            4..=67 => (1, (k - 4) * 4),
            _ => (2, (k - 68) * 4),
        };
        panic!(
            "{name}: dword {k} (binding {block}, byte {at}) is {:#x}, the model says {:#x} \
             (seed {SEED:#x})",
            got[k], want[k]
        );
    }
}

#[test]
fn inline_uniform_blocks_are_written_copied_and_read() {
    let mut c = ctx();
    // The limits and the feature as the device reports them.
    let mut props = vk::PhysicalDeviceInlineUniformBlockProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut props);
    let mut feats = vk::PhysicalDeviceInlineUniformBlockFeatures::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut feats);
    // SAFETY: a live physical device and valid output chains.
    unsafe {
        c.h.instance.get_physical_device_properties2(c.pd, &mut p2);
        c.h.instance.get_physical_device_features2(c.pd, &mut f2);
    }
    assert_eq!(feats.inline_uniform_block, vk::TRUE);
    assert_eq!(props.max_inline_uniform_block_size, 4096);
    assert_eq!(props.max_per_stage_descriptor_inline_uniform_blocks, 32);
    assert_eq!(props.max_descriptor_set_inline_uniform_blocks, 32);

    let code = spirv("inline_uniform", Some(SHADER));
    let out_a = c.buffer(WORDS as u64 * 4);
    let out_b = c.buffer(WORDS as u64 * 4);
    // SAFETY: objects of a live device, destroyed below after the device is idle.
    unsafe {
        let mut bindings: Vec<_> = SIZES
            .iter()
            .enumerate()
            .map(|(b, &n)| compute_binding(b as u32, IUB, n as u32))
            .collect();
        bindings.push(compute_binding(3, vk::DescriptorType::STORAGE_BUFFER, 1));
        let (set_layout, layout) = compute_layout(
            &c.dev,
            &bindings,
            vk::DescriptorSetLayoutCreateFlags::empty(),
            0,
        )
        .unwrap();
        let pipeline = c.pipeline(&code, layout).expect("pipeline");
        let sizes = [
            vk::DescriptorPoolSize {
                ty: IUB,
                descriptor_count: 2 * (16 + 256 + 4096),
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: 2,
            },
        ];
        let mut pool_iub = vk::DescriptorPoolInlineUniformBlockCreateInfo::default()
            .max_inline_uniform_block_bindings(6);
        let pool = c
            .dev
            .create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(2)
                    .pool_sizes(&sizes)
                    .push_next(&mut pool_iub),
                None,
            )
            .unwrap();
        let sets = c
            .dev
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&[set_layout, set_layout]),
            )
            .unwrap();
        let (x, y) = (sets[0], sets[1]);
        write_buffers_at(&c, x, c.buf(out_a).buffer);
        write_buffers_at(&c, y, c.buf(out_b).buffer);

        // Set X: whole blocks, then pieces at offsets, one running from B into C.
        let mut mx = Model::new();
        let mut seed = SEED;
        let mut put = |c: &Ctx, m: &mut Model, set, binding: usize, offset: usize, n: usize| {
            seed += 1;
            let d = bytes(seed, n);
            write(c, set, binding as u32, offset as u32, &d);
            m.write(binding, offset, &d);
        };
        put(&c, &mut mx, x, 0, 0, 16);
        put(&c, &mut mx, x, 1, 0, 256);
        put(&c, &mut mx, x, 2, 0, 4096);
        put(&c, &mut mx, x, 2, 1000, 512);
        put(&c, &mut mx, x, 0, 8, 4);
        put(&c, &mut mx, x, 1, 240, 32);

        let run = |c: &Ctx, with: &[(vk::DescriptorSet, usize)]| {
            c.run(|d, cb| {
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
                for &(set, _) in with {
                    d.cmd_bind_descriptor_sets(
                        cb,
                        vk::PipelineBindPoint::COMPUTE,
                        layout,
                        0,
                        &[set],
                        &[],
                    );
                    d.cmd_dispatch(cb, 1, 1, 1);
                }
            })
            .expect("submit");
        };
        run(&c, &[(x, out_a)]);
        check(
            "set X, first submission",
            &c.buf(out_a).read_u32s(WORDS),
            &mx,
        );

        // Set Y: copies from X (whole blocks and a range at other offsets), then a template.
        let mut my = Model::new();
        copy(&c, x, y, 0, 0, 0, 16);
        copy(&c, x, y, 1, 0, 0, 256);
        copy(&c, x, y, 2, 0, 0, 4096);
        copy(&c, x, y, 2, 64, 2048, 1024);
        my.0 = mx.0.clone();
        let piece = mx.0[2][64..64 + 1024].to_vec();
        my.write(2, 2048, &piece);
        let mut data = vec![0u8; 8];
        let ta = bytes(SEED ^ 0xa, 16);
        let tc = bytes(SEED ^ 0xc, 300);
        data.extend_from_slice(&ta);
        data.extend_from_slice(&[0; 4]);
        data.extend_from_slice(&tc);
        let entries = [
            vk::DescriptorUpdateTemplateEntry {
                dst_binding: 0,
                dst_array_element: 0,
                descriptor_count: 16,
                descriptor_type: IUB,
                offset: 8,
                stride: 0,
            },
            vk::DescriptorUpdateTemplateEntry {
                dst_binding: 2,
                dst_array_element: 3700,
                descriptor_count: 300,
                descriptor_type: IUB,
                offset: 28,
                stride: 0,
            },
        ];
        let template = c
            .dev
            .create_descriptor_update_template(
                &vk::DescriptorUpdateTemplateCreateInfo::default()
                    .descriptor_update_entries(&entries)
                    .template_type(vk::DescriptorUpdateTemplateType::DESCRIPTOR_SET)
                    .descriptor_set_layout(set_layout),
                None,
            )
            .unwrap();
        c.dev
            .update_descriptor_set_with_template(y, template, data.as_ptr().cast());
        my.write(0, 0, &ta);
        my.write(2, 3700, &tc);

        // X changes between submissions; both sets are read in one command buffer.
        put(&c, &mut mx, x, 0, 0, 16);
        put(&c, &mut mx, x, 2, 4000, 96);
        run(&c, &[(x, out_a), (y, out_b)]);
        check(
            "set X, second submission",
            &c.buf(out_a).read_u32s(WORDS),
            &mx,
        );
        check(
            "set Y (copies and a template)",
            &c.buf(out_b).read_u32s(WORDS),
            &my,
        );

        c.dev.device_wait_idle().unwrap();
        c.dev.destroy_descriptor_update_template(template, None);
        c.dev.destroy_descriptor_pool(pool, None);
        c.dev.destroy_pipeline(pipeline, None);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
    }
    c.finish();
}

/// Points binding 3 of `set` at the whole of `buffer`.
fn write_buffers_at(c: &Ctx, set: vk::DescriptorSet, buffer: vk::Buffer) {
    let bi = [vk::DescriptorBufferInfo {
        buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let w = vk::WriteDescriptorSet::default()
        .dst_set(set)
        .dst_binding(3)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .buffer_info(&bi);
    // SAFETY: a valid write to a set no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&[w], &[]) };
}
