//! Throughput of the simulated GPU in lane-instructions per second, through the real path
//! (simulated DrmDevice, EXECBUFFER2, GPGPU_WALKER), single-threaded and on every core, against
//! a plain Rust loop doing the same lane arithmetic in the same run.
//!
//! `cargo run --release -p ferrite-kernel-iface --example sim_bench [groups] [iterations] [mem]`
//! (or `scripts/sim-bench`); `mem` runs a read-add-write loop through the data port instead
//! of the ALU loop (the baseline line still times the ALU loop in Rust).

#[path = "../tests/gpu_common/mod.rs"]
mod gpu_common;

use std::hint::black_box;
use std::sync::atomic::Ordering;
use std::time::Instant;

use gpu_common::*;
use kernel_iface::gpu::SimGpu;

const GROUP: u32 = 64;
/// ALU instructions per loop iteration (plus the WHILE).
const ALU_PER_ITER: u64 = 6;

fn kernel() -> String {
    format!(
        "{LINEAR16}
mov(16) g20<1>F 0x3f800000F {{ align1 1H }};
mov(16) g22<1>F g4<8,8,1>UD {{ align1 1H }};
mov(16) g24<1>UD 0x00000000UD {{ align1 1H }};
LOOP:
mul(16) g20<1>F g20<8,8,1>F 0x3f7fff58F {{ align1 1H }};
add(16) g20<1>F g20<8,8,1>F g22<8,8,1>F {{ align1 1H }};
mul(16) g26<1>F g20<8,8,1>F 0x3a83126fF {{ align1 1H }};
add(16) g22<1>F g22<8,8,1>F g26<8,8,1>F {{ align1 1H }};
add(16) g24<1>UD g24<8,8,1>UD 0x00000001UD {{ align1 1H }};
cmp.l.f0.0(16) null<1>UD g24<8,8,1>UD g1.1<0,1,0>UD {{ align1 1H }};
(+f0.0) while(16) JIP: LOOP {{ align1 1H }};
sends(16) nullUD g10UD g20UD 0x04025e01 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
{EOT}"
    )
}

/// Data-port variant (`mem` argument): per iteration every lane reads its dword (untyped
/// surface read, BTI 1), adds one and writes it back, so the data port's per-lane address
/// checks and memory look-ups dominate. Each lane ends with `iterations` in its dword.
fn memory_kernel() -> String {
    format!(
        "{LINEAR16}
mov(16) g24<1>UD 0x00000000UD {{ align1 1H }};
LOOP:
send(16) g20<1>UD g10<8,8,1>UD 0x04205e01 dp data 1 MsgDesc: untyped read {{ align1 1H }};
add(16) g20<1>UD g20<8,8,1>UD 0x00000001UD {{ align1 1H }};
sends(16) nullUD g10UD g20UD 0x04025e01 0x00000080 dp data 1 MsgDesc: untyped write {{ align1 1H }};
add(16) g24<1>UD g24<8,8,1>UD 0x00000001UD {{ align1 1H }};
cmp.l.f0.0(16) null<1>UD g24<8,8,1>UD g1.1<0,1,0>UD {{ align1 1H }};
(+f0.0) while(16) JIP: LOOP {{ align1 1H }};
{EOT}"
    )
}

/// The same lane arithmetic in plain Rust: returns the lanes' results.
fn baseline(n: usize, iters: u32) -> Vec<f32> {
    (0..n)
        .map(|lane| {
            let mut x = 1.0f32;
            let mut y = lane as f32;
            let mut i = 0u32;
            loop {
                x = black_box(x * f32::from_bits(0x3f7f_ff58));
                x += y;
                let t = x * f32::from_bits(0x3a83_126f);
                y += t;
                i += 1;
                if i >= iters {
                    break;
                }
            }
            x
        })
        .collect()
}

/// CPU seconds (user + system) this process has used so far, from /proc/self/stat (the
/// machine may be shared, so wall time alone understates the simulator).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = after
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // Fields 14 and 15 of the file (utime, stime) are at 11 and 12 after the command name.
    let ticks = f.get(10).copied().unwrap_or(0.0) + f.get(11).copied().unwrap_or(0.0);
    ticks / 100.0
}

fn main() {
    let memory = std::env::args().any(|a| a == "mem");
    let args: Vec<u32> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let groups = args.first().copied().unwrap_or(128);
    let iters = args.get(1).copied().unwrap_or(1000);
    let n = (groups * GROUP) as usize;
    let cores = std::thread::available_parallelism()
        .map(|c| c.get())
        .unwrap_or(1);
    let asm = if memory { memory_kernel() } else { kernel() };

    let t = Instant::now();
    let want = baseline(n, iters);
    let base_s = t.elapsed().as_secs_f64();
    // Per lane and iteration the Rust loop does the same 6 operations the kernel's ALU
    // instructions do (mul, add, mul, add, counter add, compare).
    let base_rate = n as f64 * iters as f64 * ALU_PER_ITER as f64 / base_s;
    println!(
        "baseline (plain Rust loop, 1 thread): {:.1} M lane-ops/s ({n} lanes x {iters} iterations x {ALU_PER_ITER} ops in {base_s:.3} s)",
        base_rate / 1e6
    );

    for host_threads in [1, cores] {
        let sim = SimGpu::new();
        sim.set_host_threads(host_threads);
        let (g, data) = compute_setup_with(sim, &[n as u64 * 4]);
        let d = Dispatch {
            asm: &asm,
            group_size: GROUP,
            groups: [groups, 1, 1],
            push: [GROUP, iters, 0, 0, 0, 0, 0, 0],
            buffers: &[(data[0], n as u64 * 4)],
            ..Default::default()
        };
        build_dispatch(&g, &d, KERNEL_BO, STATE_BO, BATCH_BO);
        let t = Instant::now();
        let c = cpu_seconds();
        let outcome = g.submit(BATCH_BO).expect("execbuffer");
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - c;
        assert_eq!(outcome, Outcome::Ok, "the benchmark kernel ran");
        let out = g.read_u32s(data[0], 0, n);
        let mismatches = if memory {
            out.iter().filter(|&&o| o != iters).count()
        } else {
            out.iter()
                .zip(&want)
                .filter(|(o, w)| **o != w.to_bits())
                .count()
        };
        let s = g.sim.stats();
        let lanes = s.lane_instructions.load(Ordering::Relaxed);
        let insts = s.instructions.load(Ordering::Relaxed);
        if memory {
            // Two messages of 16 lanes per iteration and lane group.
            let lane_accesses = 2.0 * n as f64 * iters as f64;
            println!(
                "data port, {host_threads} host thread(s): {:.1} M lane-accesses per CPU-second",
                lane_accesses / cpu.max(0.01) / 1e6
            );
        }
        println!(
            "simulated GPU, {host_threads} host thread(s): {:.1} M lane-instr/s wall, {:.1} M per CPU-second ({:.1} M instr/s wall; {lanes} lane-instructions in {secs:.3} s wall, {cpu:.2} s CPU; {:.2}x the baseline; {mismatches} results differ from the baseline)",
            lanes as f64 / secs / 1e6,
            lanes as f64 / cpu.max(0.01) / 1e6,
            insts as f64 / secs / 1e6,
            lanes as f64 / secs / base_rate,
        );
    }
}
