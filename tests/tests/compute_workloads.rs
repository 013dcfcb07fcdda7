//! Compute workloads on Ferrite's simulated GPU through the loader with validation, against
//! CPU references: SAXPY (push constants), reduction and prefix sum (shared memory, barriers),
//! tiled matmul, histogram with atomics at a non-multiple-of-SIMD group size, dependent
//! dispatches with barriers, indirect and base dispatch, fill/update/copy, timestamps.

mod compute_common;

use ash::vk;
use compute_common::*;

fn push(dev: &ash::Device, cb: vk::CommandBuffer, layout: vk::PipelineLayout, bytes: &[u8]) {
    // SAFETY: recording into a live command buffer; the range lies in the layout's.
    unsafe { dev.cmd_push_constants(cb, layout, vk::ShaderStageFlags::COMPUTE, 0, bytes) };
}

#[test]
fn saxpy_matches_cpu() {
    let mut c = Ctx::new();
    let n = 1usize << 20;
    let k = c.kernel(&spirv("saxpy", None), 2, 8);
    let x = c.buffer(n as u64 * 4);
    let y = c.buffer(n as u64 * 4);
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 100.0).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 3.25).collect();
    c.buf(x).write_f32s(&xs);
    c.buf(y).write_f32s(&ys);
    c.bind(k, &[x, y]);
    let a = 2.5f32;
    let mut pc = a.to_le_bytes().to_vec();
    pc.extend((n as u32).to_le_bytes());
    c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        push(dev, cb, c.k(k).layout, &pc);
        // SAFETY: recording into a live command buffer.
        unsafe { dev.cmd_dispatch(cb, n.div_ceil(64) as u32, 1, 1) };
    })
    .unwrap();
    let out = c.buf(y).read_f32s(n);
    for i in 0..n {
        assert_eq!(out[i], a * xs[i] + ys[i], "element {i}");
    }
    c.finish();
}

#[test]
fn reduction_with_shared_memory_and_atomics() {
    let mut c = Ctx::new();
    let groups = 5usize;
    let n = 64 * groups;
    let k = c.kernel(&spirv("reduce", None), 2, 0);
    let v = c.buffer(n as u64 * 4);
    let t = c.buffer(8);
    let input: Vec<u32> = random_u32s(7, n).iter().map(|x| x % 1000).collect();
    c.buf(v).write_u32s(&input);
    c.bind(k, &[v, t]);
    c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: recording into a live command buffer.
        unsafe { dev.cmd_dispatch(cb, groups as u32, 1, 1) };
    })
    .unwrap();
    assert_eq!(
        c.buf(t).read_u32s(2),
        vec![input.iter().sum::<u32>(), groups as u32]
    );
    c.finish();
}

#[test]
fn prefix_sum_in_one_group() {
    let mut c = Ctx::new();
    let k = c.kernel(&spirv("prefix", None), 1, 0);
    let v = c.buffer(256 * 4);
    let input: Vec<u32> = random_u32s(3, 256).iter().map(|x| x % 100).collect();
    c.buf(v).write_u32s(&input);
    c.bind(k, &[v]);
    c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: recording into a live command buffer.
        unsafe { dev.cmd_dispatch(cb, 1, 1, 1) };
    })
    .unwrap();
    let want: Vec<u32> = input
        .iter()
        .scan(0u32, |s, &x| {
            *s += x;
            Some(*s)
        })
        .collect();
    assert_eq!(c.buf(v).read_u32s(256), want);
    c.finish();
}

#[test]
fn tiled_matmul_matches_cpu() {
    let mut c = Ctx::new();
    let n = 16usize;
    let k = c.kernel(&spirv("matmul", None), 3, 4);
    let (a, b, out) = (
        c.buffer((n * n * 4) as u64),
        c.buffer((n * n * 4) as u64),
        c.buffer((n * n * 4) as u64),
    );
    let av: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let bv: Vec<f32> = (0..n * n).map(|i| ((i * 3) % 5) as f32 * 0.5).collect();
    c.buf(a).write_f32s(&av);
    c.buf(b).write_f32s(&bv);
    c.bind(k, &[a, b, out]);
    c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        push(dev, cb, c.k(k).layout, &(n as u32).to_le_bytes());
        // SAFETY: recording into a live command buffer.
        unsafe { dev.cmd_dispatch(cb, (n / 8) as u32, (n / 8) as u32, 1) };
    })
    .unwrap();
    let got = c.buf(out).read_f32s(n * n);
    for r in 0..n {
        for col in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..n {
                acc += av[r * n + kk] * bv[kk * n + col];
            }
            assert_eq!(got[r * n + col], acc, "C[{r}][{col}]");
        }
    }
    c.finish();
}

#[test]
fn histogram_with_atomics_and_odd_group_size() {
    let mut c = Ctx::new();
    let groups = 3usize;
    let n = 50 * groups;
    let k = c.kernel(&spirv("histogram", None), 2, 0);
    let v = c.buffer(n as u64 * 4);
    let h = c.buffer(64);
    let input = random_u32s(11, n);
    c.buf(v).write_u32s(&input);
    c.bind(k, &[v, h]);
    c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: recording into a live command buffer.
        unsafe { dev.cmd_dispatch(cb, groups as u32, 1, 1) };
    })
    .unwrap();
    let mut want = vec![0u32; 16];
    for x in &input {
        want[(x & 15) as usize] += 1;
    }
    assert_eq!(c.buf(h).read_u32s(16), want);
    c.finish();
}

#[test]
fn dependent_dispatches_with_barriers() {
    // y = 2x + y three times with barriers between: y + 6x.
    let mut c = Ctx::new();
    let n = 128usize;
    let k = c.kernel(&spirv("saxpy", None), 2, 8);
    let x = c.buffer(n as u64 * 4);
    let y = c.buffer(n as u64 * 4);
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    c.buf(x).write_f32s(&xs);
    c.bind(k, &[x, y]);
    let mut pc = 2.0f32.to_le_bytes().to_vec();
    pc.extend((n as u32).to_le_bytes());
    c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        push(dev, cb, c.k(k).layout, &pc);
        // SAFETY: recording into a live command buffer.
        unsafe {
            dev.cmd_fill_buffer(cb, c.buf(y).buffer, 0, vk::WHOLE_SIZE, 1.0f32.to_bits());
        }
        for _ in 0..3 {
            c.barrier(cb);
            // SAFETY: as above.
            unsafe { dev.cmd_dispatch(cb, 2, 1, 1) };
        }
    })
    .unwrap();
    let out = c.buf(y).read_f32s(n);
    for i in 0..n {
        assert_eq!(out[i], 1.0 + 6.0 * xs[i], "element {i}");
    }
    c.finish();
}

#[test]
fn indirect_and_base_dispatch_report_group_ids() {
    let mut c = Ctx::new();
    let k = c.kernel(&spirv("ids", None), 1, 0);
    let o = c.buffer(4 * 4 * 64);
    let ind = c.buffer(12);
    c.buf(ind).write_u32s(&[3, 2, 1]);
    c.bind(k, &[o]);
    c.run(|dev, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: recording into a live command buffer.
        unsafe { dev.cmd_dispatch_indirect(cb, c.buf(ind).buffer, 0) };
    })
    .unwrap();
    let got = c.buf(o).read_u32s(4 * 64);
    for gy in 0..2u32 {
        for gx in 0..3u32 {
            let g = (gx + 16 * gy) as usize;
            assert_eq!(
                &got[4 * g..4 * g + 4],
                &[3, 2, gx, 1 + gy],
                "group {gx},{gy}"
            );
        }
    }
    // Nothing outside the 3x2 groups was written.
    assert_eq!(got[4 * 3], 0);
    c.finish();
}

#[test]
fn fill_update_copy() {
    let mut c = Ctx::new();
    let a = c.buffer(4096);
    let b = c.buffer(4096);
    let data: Vec<u32> = (0..64).map(|i| i * 3 + 1).collect();
    let bytes: Vec<u8> = data.iter().flat_map(|d| d.to_le_bytes()).collect();
    c.run(|dev, cb| {
        // SAFETY: recording into a live command buffer.
        unsafe {
            dev.cmd_fill_buffer(cb, c.buf(a).buffer, 4, 1020, 0xABCD_0123);
            dev.cmd_update_buffer(cb, c.buf(a).buffer, 1024, &bytes);
            let mb = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .dst_access_mask(vk::AccessFlags::TRANSFER_READ)];
            dev.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &mb,
                &[],
                &[],
            );
            dev.cmd_copy_buffer(
                cb,
                c.buf(a).buffer,
                c.buf(b).buffer,
                &[vk::BufferCopy {
                    src_offset: 0,
                    dst_offset: 8,
                    size: 1024 + 256,
                }],
            );
        }
    })
    .unwrap();
    let av = c.buf(a).read_u32s(1024);
    assert_eq!(av[0], 0);
    assert!(av[1..256].iter().all(|&x| x == 0xABCD_0123));
    assert_eq!(&av[256..320], &data[..]);
    let bv = c.buf(b).read_u32s(1024);
    assert_eq!(&bv[2..2 + 320], &av[..320]);
    assert_eq!(bv[1], 0);
    assert_eq!(bv[322], 0);
    c.finish();
}

/// Values live across a barrier: more than the register file holds even at SIMD8, so the
/// kernel spills before the barrier and fills after it while the group's threads interleave:
/// each must find its own scratch. Scratch objects used to sit above 4 GB, where the thread
/// payload's 32-bit scratch pointer truncated them (the threads then shared one unbacked page).
const SPILL_LIVE: usize = 40;

fn spill_barrier_source() -> String {
    let mut s = String::from(
        "#version 450\nlayout(local_size_x = 64) in;\n\
         layout(set=0, binding=0) buffer B { vec4 v[]; };\nvoid main() {\n\
         uint i = gl_GlobalInvocationID.x * 40u;\n",
    );
    for k in 0..SPILL_LIVE {
        s += &format!("    vec4 a{k} = v[i + {k}u];\n");
    }
    s += "    barrier();\n    vec4 sum = vec4(0.0);\n";
    for k in 0..SPILL_LIVE {
        s += &format!("    sum = sum * 0.5 + a{k};\n");
    }
    s + "    v[i] = sum;\n}\n"
}

#[test]
fn spilling_kernel_with_barrier_matches_cpu() {
    use ferrite_compiler::backend::{self, BackendOptions};
    use ferrite_compiler::pipeline::{compile_to_ir, CompileOptions};
    use ferrite_compiler::{BindingSlot, Target};

    let code = spirv("spill_barrier", Some(&spill_barrier_source()));
    // The premise: the compiler spills this kernel at the width it picks.
    let copts = CompileOptions {
        entry_point: "main".into(),
        bindings: vec![BindingSlot {
            set: 0,
            binding: 0,
            bti: 0,
            count: 1,
        }],
        ..Default::default()
    };
    let (ir, _) = compile_to_ir(&code, &Target::gen9(), &copts).unwrap();
    let k = backend::compile(&ir, &BackendOptions::gen9()).unwrap();
    assert!(k.stats.spills > 0, "the test needs spills");

    let mut c = Ctx::new();
    let groups = 2usize;
    let n = 64 * groups * SPILL_LIVE * 4;
    let kk = c.kernel(&code, 1, 0);
    let b = c.buffer(n as u64 * 4);
    let input: Vec<f32> = (0..n).map(|i| (i % 17) as f32 * 0.25 - 1.0).collect();
    c.buf(b).write_f32s(&input);
    c.bind(kk, &[b]);
    c.run(|dev, cb| {
        c.bind_kernel(cb, kk);
        // SAFETY: recording into a live command buffer.
        unsafe { dev.cmd_dispatch(cb, groups as u32, 1, 1) };
    })
    .unwrap();
    let out = c.buf(b).read_f32s(n);
    for inv in 0..64 * groups {
        for comp in 0..4 {
            // s * 0.5 is exact, so a fused multiply-add rounds the same as separate ops.
            let want = (0..SPILL_LIVE).fold(0.0f32, |s, k| {
                s * 0.5 + input[(inv * SPILL_LIVE + k) * 4 + comp]
            });
            let got = out[inv * SPILL_LIVE * 4 + comp];
            assert_eq!(got, want, "invocation {inv} component {comp}");
        }
    }
    c.finish();
}
