//! Hand-assembled Gen9 compute kernels on the simulated GPU, through the real path: BOs on
//! the simulated DrmDevice, a batch packed with the genxml structs (STATE_BASE_ADDRESS,
//! MEDIA_VFE_STATE, MEDIA_CURBE_LOAD, MEDIA_INTERFACE_DESCRIPTOR_LOAD, GPGPU_WALKER), binding
//! table + RENDER_SURFACE_STATE, EXECBUFFER2 and a fence, then the memory is read back.

mod gpu_common;

use gpu_common::*;
use kernel_iface::gpu::SimGpu;

fn fill_kernel() -> String {
    // out[linear] = linear * 3 + 7, untyped write SIMD16 to BTI 1.
    format!(
        "{LINEAR16}
mul(16) g12<1>UD  g4<8,8,1>UD 0x00000003UD {{ align1 1H }};
add(16) g12<1>UD  g12<8,8,1>UD 0x00000007UD {{ align1 1H }};
sends(16) nullUD  g10UD g12UD 0x04025e01 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
{EOT}"
    )
}

#[test]
fn buffer_fill_over_many_groups() {
    let n = 64 * 40;
    let (g, data) = compute_setup(&[n as u64 * 4 + 64]);
    g.write_u32s(data[0], 0, &vec![0xDEAD_BEEF; n + 16]);
    let asm = fill_kernel();
    let d = Dispatch {
        asm: &asm,
        group_size: 64,
        groups: [40, 1, 1],
        push: [64, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], n as u64 * 4)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, n + 16);
    for (i, &v) in out.iter().enumerate().take(n) {
        assert_eq!(v, i as u32 * 3 + 7, "element {i}");
    }
    // Nothing was dispatched past the end.
    assert!(out[n..].iter().all(|&v| v == 0xDEAD_BEEF));
    let s = g.sim.stats();
    assert_eq!(s.groups.load(std::sync::atomic::Ordering::Relaxed), 40);
    assert_eq!(s.threads.load(std::sync::atomic::Ordering::Relaxed), 160);
}

#[test]
fn partial_last_thread_and_out_of_bounds_writes() {
    // Group of 20 at SIMD16: 2 threads, the second with only 4 channels (Right Execution
    // Mask 0xF). 3 groups = 60 invocations. The surface covers 70 elements: a last thread
    // running all 16 channels would write elements 60..69 (in bounds) and 70..71 (out of
    // bounds, dropped although the BO has room).
    let (g, data) = compute_setup(&[4096]);
    g.write_u32s(data[0], 0, &[0xDEAD_BEEF; 80]);
    let asm = fill_kernel();
    let d = Dispatch {
        asm: &asm,
        group_size: 20,
        groups: [3, 1, 1],
        push: [20, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 70 * 4)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, 80);
    for (i, &v) in out.iter().enumerate() {
        let want = if i < 60 {
            i as u32 * 3 + 7
        } else {
            0xDEAD_BEEF
        };
        assert_eq!(v, want, "element {i}");
    }
}

#[test]
fn writes_past_the_surface_are_dropped() {
    // 64 invocations write elements 0..63 but the surface has 50: 50..63 stay untouched.
    let (g, data) = compute_setup(&[4096]);
    g.write_u32s(data[0], 0, &[0xDEAD_BEEF; 80]);
    let asm = fill_kernel();
    let d = Dispatch {
        asm: &asm,
        group_size: 64,
        push: [64, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 50 * 4)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, 80);
    for (i, &v) in out.iter().enumerate() {
        let want = if i < 50 {
            i as u32 * 3 + 7
        } else {
            0xDEAD_BEEF
        };
        assert_eq!(v, want, "element {i}");
    }
}

#[test]
fn simd16_float_arithmetic_reads_and_writes_buffers() {
    let n = 48usize;
    let (g, data) = compute_setup(&[n as u64 * 4, n as u64 * 4]);
    let input: Vec<f32> = (0..n).map(|i| (i as f32 - 20.0) * 0.37 + 0.001).collect();
    let bits: Vec<u32> = input.iter().map(|f| f.to_bits()).collect();
    g.write_u32s(data[0], 0, &bits);
    let asm = format!(
        "{LINEAR16}
send(16) g20<1>UD g10<8,8,1>UD 0x04205e01 dp data 1 MsgDesc: untyped read {{ align1 1H }};
mul(16) g22<1>F g20<8,8,1>F 0x40200000F {{ align1 1H }};
add(16) g22<1>F g22<8,8,1>F 0x3f800000F {{ align1 1H }};
mul(16) g22<1>F g22<8,8,1>F g20<8,8,1>F {{ align1 1H }};
sends(16) nullUD g10UD g22UD 0x04025e02 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
{EOT}"
    );
    let d = Dispatch {
        asm: &asm,
        group_size: 16,
        groups: [3, 1, 1],
        push: [16, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], n as u64 * 4), (data[1], n as u64 * 4)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[1], 0, n);
    for i in 0..n {
        let a = input[i];
        let want = (a * 2.5 + 1.0) * a;
        assert_eq!(f32::from_bits(out[i]), want, "element {i} (input {a})");
    }
}

#[test]
fn loop_with_break_runs_per_channel_trip_counts() {
    let (g, data) = compute_setup(&[4096]);
    // i = 0; do { i++; if (i >= lane + 3) break; } while (true); out[lane] = i.
    let asm = format!(
        "{LINEAR16}
mov(16) g20<1>UD 0x00000000UD {{ align1 1H }};
add(16) g22<1>UD g4<8,8,1>UD 0x00000003UD {{ align1 1H }};
LOOP:
add(16) g20<1>UD g20<8,8,1>UD 0x00000001UD {{ align1 1H }};
cmp.ge.f0.0(16) null<1>UD g20<8,8,1>UD g22<8,8,1>UD {{ align1 1H }};
(+f0.0) break(16) JIP: WEND UIP: WEND {{ align1 1H }};
WEND:
while(16) JIP: LOOP {{ align1 1H }};
sends(16) nullUD g10UD g20UD 0x04025e01 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
{EOT}"
    );
    let d = Dispatch {
        asm: &asm,
        group_size: 32,
        groups: [1, 1, 1],
        push: [32, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 32 * 4)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, 32);
    let want: Vec<u32> = (0..32).map(|i| i + 3).collect();
    assert_eq!(out, want);
}

fn slm_kernel() -> String {
    // SLM[linear_in_group] = linear; barrier; out[linear] = SLM[63 - linear_in_group] + 1000 * group.
    format!(
        "{LINEAR16}
mov(8)  g3<1>UW   0x76543210V {{ align1 WE_all 1Q }};
add(8)  g3.8<1>UW g3<8,8,1>UW 0x0008UW {{ align1 WE_all 1Q }};
mov(16) g14<1>UD  g3<8,8,1>UW {{ align1 1H }};
add(16) g14<1>UD  g14<8,8,1>UD g6<8,8,1>UD {{ align1 1H }};
shl(16) g16<1>UD  g14<8,8,1>UD 0x00000002UD {{ align1 1H }};
sends(16) nullUD g16UD g4UD 0x04025efe 0x00000080 dp data 1 MsgDesc: SLM write {{ align1 1H }};
mov(8)  g30<1>UD  0x00000000UD {{ align1 WE_all 1Q }};
and(1)  g30.2<1>UD g0.2<0,1,0>UD 0x8f000000UD {{ align1 WE_all 1N }};
send(16) null<1>UW g30<8,8,1>UD 0x02000004 gateway MsgDesc: (barrier msg) mlen 1 rlen 0 {{ align1 WE_all 1H }};
wait(1) n0<1>UD {{ align1 WE_all 1N }};
add(16) g18<1>D   -g14<8,8,1>D 0x0000003fD {{ align1 1H }};
shl(16) g18<1>UD  g18<8,8,1>UD 0x00000002UD {{ align1 1H }};
send(16) g20<1>UD g18<8,8,1>UD 0x04205efe dp data 1 MsgDesc: SLM read {{ align1 1H }};
mul(16) g24<1>UD  g0.1<0,1,0>UD 0x000003e8UD {{ align1 1H }};
add(16) g20<1>UD  g20<8,8,1>UD g24<8,8,1>UD {{ align1 1H }};
sends(16) nullUD g10UD g20UD 0x04025e01 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
{EOT}"
    )
}

#[test]
fn slm_and_barrier_across_a_group() {
    let groups = 6u32;
    let n = 64 * groups as usize;
    let (g, data) = compute_setup(&[n as u64 * 4]);
    let asm = slm_kernel();
    let d = Dispatch {
        asm: &asm,
        group_size: 64,
        groups: [groups, 1, 1],
        slm_bytes: 256,
        barrier: true,
        push: [64, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], n as u64 * 4)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, n);
    for (i, &v) in out.iter().enumerate() {
        let (grp, l) = (i / 64, i % 64);
        // Thread t's lane j wrote linear = grp*64 + l at SLM[l]; we read SLM[63 - l].
        let want = (grp * 64 + 63 - l) as u32 + 1000 * grp as u32;
        assert_eq!(v, want, "element {i}");
    }
}

#[test]
fn slm_without_an_slm_l3_configuration_hangs() {
    let (g, data) = compute_setup(&[4096]);
    let asm = slm_kernel();
    let d = Dispatch {
        asm: &asm,
        group_size: 64,
        slm_bytes: 256,
        barrier: true,
        push: [64, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 4096)],
        l3: 0x6000_0020,
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::FenceError(-libc::EIO));
}

#[test]
fn atomics_from_many_threads_on_two_host_threads() {
    // Every invocation does counter = atomic_add(counter, 1) and stores the returned old
    // value at out[linear]: the returned values must be exactly 0..n-1, each once.
    let groups = 64u32;
    let n = 64 * groups as usize;
    let sim = SimGpu::new();
    sim.set_host_threads(2);
    let (g, data) = compute_setup_with(sim, &[64, n as u64 * 4]);
    let asm = format!(
        "{LINEAR16}
mov(16) g12<1>UD 0x00000000UD {{ align1 1H }};
mov(16) g14<1>UD 0x00000001UD {{ align1 1H }};
sends(16) g20UD g12UD g14UD 0x0420a701 0x00000080 dp data 1 MsgDesc: atomic add {{ align1 1H }};
sends(16) nullUD g10UD g20UD 0x04025e02 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
mov(16) g16<1>UD 0x00000004UD {{ align1 1H }};
sends(16) nullUD g16UD g4UD 0x04008c01 0x00000080 dp data 1 MsgDesc: atomic umax {{ align1 1H }};
{EOT}"
    );
    let d = Dispatch {
        asm: &asm,
        group_size: 64,
        groups: [groups, 1, 1],
        push: [64, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 64), (data[1], n as u64 * 4)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::Ok);
    let counter = g.read_u32s(data[0], 0, 2);
    assert_eq!(counter, [n as u32, n as u32 - 1]);
    let mut seen = g.read_u32s(data[1], 0, n);
    seen.sort_unstable();
    let want: Vec<u32> = (0..n as u32).collect();
    assert_eq!(seen, want, "every old value returned exactly once");
}

#[test]
fn runaway_kernel_hangs_within_its_budget_and_the_next_context_works() {
    let sim = SimGpu::new();
    sim.set_thread_budget(200_000);
    let (g, data) = compute_setup_with(sim, &[4096]);
    let asm = format!(
        "{LINEAR16}
LOOP:
add(16) g20<1>UD g20<8,8,1>UD 0x00000001UD {{ align1 1H }};
while(16) JIP: LOOP {{ align1 1H }};
{EOT}"
    );
    let d = Dispatch {
        asm: &asm,
        group_size: 64,
        groups: [8, 1, 1],
        push: [64, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 4096)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::FenceError(-libc::EIO));
    assert_eq!(
        g.sim
            .stats()
            .hangs
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    // A new context on the same device runs a good kernel.
    let ctx = g.dev.context_create().unwrap();
    let asm = fill_kernel();
    let d = Dispatch {
        asm: &asm,
        group_size: 16,
        push: [16, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 64)],
        ..Default::default()
    };
    build_dispatch(&g, &d, KERNEL_BO, STATE_BO, BATCH_BO);
    assert_eq!(g.submit_on(ctx, BATCH_BO).unwrap(), Outcome::Ok);
    let out = g.read_u32s(data[0], 0, 16);
    assert_eq!(out, (0..16).map(|i| i * 3 + 7).collect::<Vec<u32>>());
}

#[test]
fn more_than_56_threads_per_group_is_rejected() {
    let (g, data) = compute_setup(&[4096]);
    let asm = fill_kernel();
    let d = Dispatch {
        asm: &asm,
        simd: 8,
        group_size: 57 * 8,
        push: [57 * 8, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 4096)],
        ..Default::default()
    };
    assert_eq!(run(&g, &d), Outcome::FenceError(-libc::EIO));
}
