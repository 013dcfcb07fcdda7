//! Uniform texel buffers end to end: `texelFetch` on `textureBuffer`, `utextureBuffer` and
//! `itextureBuffer` (OpImageFetch on a Dim Buffer image, the sampler's `ld` on a formatted
//! SURFTYPE_BUFFER), for every format reporting UNIFORM_TEXEL_BUFFER, at a buffer-view offset.
//! The same program runs on Ferrite's simulated GPU and on lavapipe (child processes);
//! integer and float results must be equal, UNORM/SNORM conversions within one float ulp
//! of 1.0 (Vulkan's precision rules allow the last bit to differ).

mod compute_common;

use ash::vk;
use compute_common::*;

/// Texels fetched per format.
const N: u32 = 64;

/// (name, format, bytes per texel, shader kind: 0 float, 1 uint, 2 int).
const FORMATS: &[(&str, vk::Format, u32, u32)] = &[
    ("rgba32f", vk::Format::R32G32B32A32_SFLOAT, 16, 0),
    ("r32f", vk::Format::R32_SFLOAT, 4, 0),
    ("rgba16f", vk::Format::R16G16B16A16_SFLOAT, 8, 0),
    ("rgba8unorm", vk::Format::R8G8B8A8_UNORM, 4, 0),
    ("rgba8snorm", vk::Format::R8G8B8A8_SNORM, 4, 0),
    ("rgb10a2unorm", vk::Format::A2B10G10R10_UNORM_PACK32, 4, 0),
    ("r11g11b10f", vk::Format::B10G11R11_UFLOAT_PACK32, 4, 0),
    ("r32ui", vk::Format::R32_UINT, 4, 1),
    ("rgba32ui", vk::Format::R32G32B32A32_UINT, 16, 1),
    ("rgba8ui", vk::Format::R8G8B8A8_UINT, 4, 1),
    ("rg16i", vk::Format::R16G16_SINT, 4, 2),
];

fn shader(kind: u32) -> String {
    let (ty, conv) = match kind {
        0 => ("textureBuffer", "floatBitsToUint"),
        1 => ("utextureBuffer", "uvec4"),
        _ => ("itextureBuffer", "uvec4"),
    };
    format!(
        "
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform {ty} t;
layout(set = 0, binding = 1) buffer Out {{ uvec4 o[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    o[i] = {conv}(texelFetch(t, int(i)));
}}
"
    )
}

/// Seeded texel data that is a finite value in every format (float exponents kept below
/// their all-ones code, so no NaN or infinity whose bits drivers may canonicalize).
fn texel_words(format: vk::Format, words: usize, seed: u32) -> Vec<u32> {
    random_u32s(seed, words)
        .into_iter()
        .map(|w| match format {
            vk::Format::R32G32B32A32_SFLOAT | vk::Format::R32_SFLOAT => {
                ((w >> 8) as f32 / (1 << 20) as f32 - 8.0).to_bits()
            }
            // Each half: clear the top exponent bit.
            vk::Format::R16G16B16A16_SFLOAT => w & !0x4000_4000,
            // R (11 bits), G (11), B (10): clear each top exponent bit.
            vk::Format::B10G11R11_UFLOAT_PACK32 => w & !(1 << 10 | 1 << 21 | 1 << 31),
            _ => w,
        })
        .collect()
}

/// A host-visible buffer holding `words`, usable only as a uniform texel buffer (a buffer
/// that may also be a storage texel buffer needs formats supporting both).
fn texel_buffer(c: &Ctx, words: &[u32]) -> (vk::Buffer, vk::DeviceMemory) {
    let props = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let mem_type = c.h.memory_type(c.pd, props).unwrap();
    // SAFETY: valid create infos on a live device; destroyed by the caller.
    unsafe {
        let buffer = c
            .dev
            .create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(words.len() as u64 * 4)
                    .usage(vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER),
                None,
            )
            .unwrap();
        let req = c.dev.get_buffer_memory_requirements(buffer);
        let memory = c
            .dev
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(mem_type),
                None,
            )
            .unwrap();
        c.dev.bind_buffer_memory(buffer, memory, 0).unwrap();
        let ptr: *mut u32 = c
            .dev
            .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            .unwrap()
            .cast();
        std::ptr::copy_nonoverlapping(words.as_ptr(), ptr, words.len());
        c.dev.unmap_memory(memory);
        (buffer, memory)
    }
}

fn run_cases() -> Results {
    let mut r = Results::new();
    let mut c = Ctx::new();
    let types = [
        vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let kernels: Vec<usize> = (0..3)
        .map(|kind| {
            let code = spirv(&format!("texel_buffers_{kind}"), Some(&shader(kind)));
            c.kernel_with(&code, &types, 0, &[], vk::PipelineCache::null())
                .unwrap()
        })
        .collect();
    let out = zeroed(&mut c, N as usize * 4);
    // The view starts 256 bytes into the buffer (minTexelBufferOffsetAlignment is at most
    // 256 on both drivers).
    const VIEW_OFFSET: u64 = 256;
    for (fi, &(name, format, bpt, kind)) in FORMATS.iter().enumerate() {
        let words = (VIEW_OFFSET as usize + (N * bpt) as usize) / 4;
        let data = texel_buffer(&c, &texel_words(format, words, 0x7E4E_0000 + fi as u32));
        let k = kernels[kind as usize];
        // SAFETY: valid objects on a live device; the view is destroyed after the
        // submission completed.
        unsafe {
            let view = c
                .dev
                .create_buffer_view(
                    &vk::BufferViewCreateInfo::default()
                        .buffer(data.0)
                        .format(format)
                        .offset(VIEW_OFFSET)
                        .range(u64::from(N * bpt)),
                    None,
                )
                .unwrap();
            let views = [view];
            let bi = [vk::DescriptorBufferInfo {
                buffer: c.buf(out).buffer,
                offset: 0,
                range: vk::WHOLE_SIZE,
            }];
            let w = [
                vk::WriteDescriptorSet::default()
                    .dst_set(c.k(k).set)
                    .dst_binding(0)
                    .descriptor_type(vk::DescriptorType::UNIFORM_TEXEL_BUFFER)
                    .texel_buffer_view(&views),
                vk::WriteDescriptorSet::default()
                    .dst_set(c.k(k).set)
                    .dst_binding(1)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&bi),
            ];
            c.dev.update_descriptor_sets(&w, &[]);
            c.run(|_, cb| {
                c.bind_kernel(cb, k);
                dispatch(&c, cb, N / 64, 1);
            })
            .unwrap();
            r.insert(name.to_string(), c.buf(out).read_u32s(N as usize * 4));
            c.dev.destroy_buffer_view(view, None);
            c.dev.destroy_buffer(data.0, None);
            c.dev.free_memory(data.1, None);
        }
    }
    c.finish();
    r
}

#[test]
#[ignore = "runs in the child processes of uniform_texel_buffers_match_lavapipe"]
fn child_runs_texel_buffer_cases() {
    if !is_child() {
        return;
    }
    print_results(&run_cases());
}

#[test]
fn uniform_texel_buffers_match_lavapipe() {
    let (ferrite, lvp) = run_on_ferrite_and_lavapipe("child_runs_texel_buffer_cases");
    assert_eq!(ferrite.len(), FORMATS.len());
    for (name, want) in &lvp {
        let got = &ferrite[name];
        assert!(
            want.iter().any(|w| *w != 0),
            "{name}: lavapipe read nothing"
        );
        let normalized = name.contains("norm");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let (gf, wf) = (f32::from_bits(*g), f32::from_bits(*w));
            let ok = g == w || (normalized && (gf - wf).abs() <= 1.2e-7);
            assert!(
                ok,
                "{name}: texel {} component {}: Ferrite {g:#010x} ({gf}), lavapipe {w:#010x} ({wf})",
                i / 4,
                i % 4
            );
        }
    }
}
