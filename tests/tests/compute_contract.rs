//! The dispatch contract's buffer-size dwords and push-constant surface (docs/dispatch-contract.md)
//! end to end through the loader with validation, at SIMD8, SIMD16 and SIMD32: `length()` of
//! runtime arrays (plain and array-of-struct members) over buffers bound with offsets, ranges,
//! VK_WHOLE_SIZE and dynamic offsets; push constants read at per-lane offsets; dynamic indices
//! into std140 arrays of a dynamic uniform buffer. Results are compared with CPU references.
//!
//! The width is forced with FERRITE_DEBUG=noN, which the driver reads at pipeline creation, so
//! `contract_at_every_simd_width` reruns `contract_workloads` of this test binary in a child
//! process per width (the environment of a multi-threaded test process must not change) and
//! checks the compiler's "Max dispatch width" statistic that FERRITE_DEBUG=stats prints.

mod compute_common;

use ash::vk;
use compute_common::*;
use std::process::Command;

const WORKLOADS: &str = "contract_workloads";

#[test]
fn contract_at_every_simd_width() {
    let exe = std::env::current_exe().unwrap();
    for (width, flags) in [
        (8, "no16,no32,stats"),
        (16, "no8,no32,stats"),
        (32, "no8,no16,stats"),
    ] {
        let out = Command::new(&exe)
            .args(["--exact", WORKLOADS, "--nocapture", "--test-threads=1"])
            .env("FERRITE_DEBUG", flags)
            .env("RUST_LOG", "info")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "SIMD{width}:\n{text}");
        assert!(
            text.contains("1 passed"),
            "SIMD{width}: test not run\n{text}"
        );
        let widths: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("Max dispatch width: "))
            .collect();
        // One pipeline per workload, each compiled at the forced width.
        assert_eq!(widths.len(), 3, "SIMD{width}:\n{text}");
        assert!(
            widths.iter().all(|w| *w == width.to_string()),
            "SIMD{width}: {widths:?}"
        );
    }
}

/// All three workloads in one device (run directly at the default width, or by
/// `contract_at_every_simd_width` at a forced one).
#[test]
fn contract_workloads() {
    let mut c = Ctx::new();
    runtime_array_lengths(&mut c);
    dynamic_push_constant_indices(&mut c);
    dynamic_std140_indices(&mut c);
    c.finish();
}

fn write_buffers(
    c: &Ctx,
    set: vk::DescriptorSet,
    writes: &[(u32, vk::DescriptorType, usize, u64, u64)],
) {
    let infos: Vec<[vk::DescriptorBufferInfo; 1]> = writes
        .iter()
        .map(|&(_, _, b, offset, range)| {
            [vk::DescriptorBufferInfo {
                buffer: c.buf(b).buffer,
                offset,
                range,
            }]
        })
        .collect();
    let w: Vec<_> = writes
        .iter()
        .zip(&infos)
        .map(|(&(binding, ty, ..), info)| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(binding)
                .descriptor_type(ty)
                .buffer_info(info)
        })
        .collect();
    // SAFETY: valid writes to a live set that no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&w, &[]) };
}

fn dispatch(c: &Ctx, k: usize, dynamic: &[u32], push: &[u8]) {
    c.run(|dev, cb| {
        let kk = c.k(k);
        // SAFETY: recording into a live command buffer; offsets and push bytes lie in the
        // layout's ranges.
        unsafe {
            dev.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, kk.pipeline);
            dev.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                kk.layout,
                0,
                &[kk.set],
                dynamic,
            );
            if !push.is_empty() {
                dev.cmd_push_constants(cb, kk.layout, vk::ShaderStageFlags::COMPUTE, 0, push);
            }
            dev.cmd_dispatch(cb, 1, 1, 1);
        }
    })
    .unwrap();
}

const LENGTHS: &str = "#version 450
layout(local_size_x = 64) in;
struct S { vec3 p; uint tag; float w; };
layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B { uint head; uint pad; S items[]; };
layout(set = 0, binding = 2) readonly buffer C { uvec2 c[]; };
layout(set = 0, binding = 3) buffer O { uint o[]; };
void main() {
    uint i = gl_LocalInvocationIndex;
    uint la = uint(a.length());
    uint lb = uint(items.length());
    uint lc = uint(c.length());
    uint v = 0u;
    if (i < la) v += a[i];
    if (i < lb) v += items[i].tag * 1000u;
    if (i % 3u == 1u && i / 3u < lc) v += c[i / 3u].y * 100000u;
    o[4u * i] = la;
    o[4u * i + 1u] = lb;
    o[4u * i + 2u] = lc;
    o[4u * i + 3u] = v;
}";

/// (offset, range) of one descriptor write; `u64::MAX` is VK_WHOLE_SIZE.
type Bind = (u64, u64);

fn runtime_array_lengths(c: &mut Ctx) {
    use vk::DescriptorType as T;
    let ty = [
        T::STORAGE_BUFFER_DYNAMIC,
        T::STORAGE_BUFFER,
        T::STORAGE_BUFFER,
        T::STORAGE_BUFFER,
    ];
    let k = c
        .kernel_with(
            &spirv("lengths", Some(LENGTHS)),
            &ty,
            0,
            &[],
            vk::PipelineCache::null(),
        )
        .unwrap();
    let size = 1024u64;
    let (a, b, cc, o) = (
        c.buffer(size),
        c.buffer(size),
        c.buffer(size),
        c.buffer(1024),
    );
    let fill: Vec<u32> = (0..256).collect();
    for buf in [a, b, cc] {
        c.buf(buf).write_u32s(&fill);
    }
    let whole = vk::WHOLE_SIZE;
    // (a, dynamic offset of a, b, c): ranges with and without VK_WHOLE_SIZE, ranges that are
    // not multiples of the stride, smaller than one element, smaller than the runtime
    // array's offset in its block, and a dynamic offset that moves the base only.
    let cases: [(Bind, u32, Bind, Bind); 4] = [
        ((0, 20), 256, (64, whole), (0, 40)),
        ((64, whole), 0, (256, 20), (64, 100)),
        ((128, 4), 512, (0, 8), (0, 4)),
        ((0, 1000), 0, (0, 1024), (960, whole)),
    ];
    for (n, &(ba, dyn_a, bb, bc)) in cases.iter().enumerate() {
        write_buffers(
            c,
            c.k(k).set,
            &[
                (0, ty[0], a, ba.0, ba.1),
                (1, ty[1], b, bb.0, bb.1),
                (2, ty[2], cc, bc.0, bc.1),
                (3, ty[3], o, 0, whole),
            ],
        );
        dispatch(c, k, &[dyn_a], &[]);
        let range = |(off, r): Bind| if r == whole { size - off } else { r };
        // Block offsets and strides (std430): a[] at 0 stride 4; items[] at 16 stride 32
        // (vec3 aligns S to 16; p, tag, w take 20 bytes, padded to 32); c[] at 0 stride 8.
        let la = range(ba) / 4;
        let lb = range(bb).saturating_sub(16) / 32;
        let lc = range(bc) / 8;
        let base_a = (ba.0 + u64::from(dyn_a)) / 4;
        let got = c.buf(o).read_u32s(256);
        for i in 0..64u64 {
            let mut v = 0u64;
            if i < la {
                v += base_a + i;
            }
            if i < lb {
                // tag is dword 3 of items[i]: byte bb.0 + 16 + 32 i + 12.
                v += (bb.0 / 4 + 4 + 8 * i + 3) * 1000;
            }
            if i % 3 == 1 && i / 3 < lc {
                v += (bc.0 / 4 + 2 * (i / 3) + 1) * 100_000;
            }
            let want = [la, lb, lc, v].map(|x| x as u32);
            let i = i as usize;
            assert_eq!(&got[4 * i..4 * i + 4], &want, "case {n} invocation {i}");
        }
    }
}

const PUSH: &str = "#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint scale; int arr[16]; vec4 v[2]; } pc;
layout(set = 0, binding = 0) buffer O { int o[]; };
void main() {
    uint i = gl_LocalInvocationIndex;
    int x = pc.arr[(i * 7u + 3u) % 16u] * int(pc.scale) + pc.arr[15u - (i % 16u)];
    if (i % 3u == 0u) x += pc.arr[i / 4u] * 1000;
    float f = pc.v[i & 1u][(i >> 1) & 3u];
    o[2u * i] = x;
    o[2u * i + 1u] = floatBitsToInt(f);
}";

fn dynamic_push_constant_indices(c: &mut Ctx) {
    // std430 push block: scale at 0, arr at 4 (stride 4), v at 80 (stride 16): 112 bytes.
    let k = c.kernel(&spirv("push_dyn", Some(PUSH)), 1, 112);
    let o = c.buffer(512);
    c.bind(k, &[o]);
    let scale = 3u32;
    let arr: Vec<i32> = random_u32s(11, 16)
        .iter()
        .map(|x| (x % 2001) as i32 - 1000)
        .collect();
    let v: Vec<f32> = (0..8).map(|j| j as f32 * 1.5 - 4.25).collect();
    let mut pc = scale.to_le_bytes().to_vec();
    pc.extend(arr.iter().flat_map(|x| x.to_le_bytes()));
    pc.resize(80, 0);
    pc.extend(v.iter().flat_map(|x| x.to_le_bytes()));
    assert_eq!(pc.len(), 112);
    dispatch(c, k, &[], &pc);
    let got = c.buf(o).read_u32s(128);
    for i in 0..64usize {
        let mut x = arr[(i * 7 + 3) % 16] * scale as i32 + arr[15 - i % 16];
        if i % 3 == 0 {
            x += arr[i / 4] * 1000;
        }
        let f = v[(i & 1) * 4 + ((i >> 1) & 3)];
        assert_eq!(got[2 * i] as i32, x, "invocation {i} int");
        assert_eq!(f32::from_bits(got[2 * i + 1]), f, "invocation {i} float");
    }
}

const UBO: &str = "#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std140) uniform U { float f[20]; vec2 g[6]; ivec3 h[5]; mat2 m[3]; } u;
layout(set = 0, binding = 1) buffer O { float o[]; };
void main() {
    uint i = gl_LocalInvocationIndex;
    o[4u * i] = u.f[i % 20u];
    o[4u * i + 1u] = u.g[(i * 5u) % 6u].y;
    o[4u * i + 2u] = float(u.h[i % 5u][i % 3u]);
    o[4u * i + 3u] = u.m[i % 3u][i & 1u][(i >> 1) & 1u];
}";

fn dynamic_std140_indices(c: &mut Ctx) {
    use vk::DescriptorType as T;
    let ty = [T::UNIFORM_BUFFER_DYNAMIC, T::STORAGE_BUFFER];
    let k = c
        .kernel_with(
            &spirv("ubo_dyn", Some(UBO)),
            &ty,
            0,
            &[],
            vk::PipelineCache::null(),
        )
        .unwrap();
    let (u, o) = (c.buffer(1024), c.buffer(1024));
    // Every dword of the UBO distinct: float dwords k * 0.5 - 7, the ivec3 dwords as ints.
    let dyn_off = 256u64;
    let words: Vec<u32> = (0..256u32)
        .map(|k| {
            let rel = i64::from(k) - (dyn_off / 4) as i64;
            if (104..124).contains(&rel) {
                (k * 3 + 1).wrapping_neg()
            } else {
                (k as f32 * 0.5 - 7.0).to_bits()
            }
        })
        .collect();
    c.buf(u).write_u32s(&words);
    write_buffers(
        c,
        c.k(k).set,
        &[(0, ty[0], u, 0, 592), (1, ty[1], o, 0, vk::WHOLE_SIZE)],
    );
    dispatch(c, k, &[dyn_off as u32], &[]);
    // std140 offsets: f[] 0 stride 16; g[] 320 stride 16; h[] 416 stride 16; m[] 496 stride
    // 32, columns 16 apart.
    let at = |byte: usize| words[dyn_off as usize / 4 + byte / 4];
    let got = c.buf(o).read_f32s(256);
    for i in 0..64usize {
        let want = [
            f32::from_bits(at(16 * (i % 20))),
            f32::from_bits(at(320 + 16 * ((i * 5) % 6) + 4)),
            at(416 + 16 * (i % 5) + 4 * (i % 3)) as i32 as f32,
            f32::from_bits(at(496 + 32 * (i % 3) + 16 * (i & 1) + 4 * ((i >> 1) & 1))),
        ];
        assert_eq!(&got[4 * i..4 * i + 4], &want, "invocation {i}");
    }
}
