//! EU interpreter throughput: lane-instructions per second of an ALU-heavy SIMD16 kernel on
//! one host thread, against a plain Rust loop doing the same per-lane arithmetic measured
//! in the same run.
//!
//! `cargo run --release -p ferrite-kernel-iface --bin eu-bench [threads] [iterations]`

use std::hint::black_box;
use std::time::Instant;

use ferrite_isa::Gen;
use kernel_iface::gpu::eu::{Kernel, Message, MessagePort, SendOutcome, ThreadState, ThreadStatus};

/// The loop body: 9 ALU instructions (3-src MAD, float MUL/ADD/CMP/SEL, integer
/// ADD/XOR/SHL) plus the loop counter, compare and WHILE.
const KERNEL: &str = r"
        mov(16)         g40<1>D         0D                              { align1 1H };
    LLOOP:
        mad(16)         g20<1>F         g22<4,4,1>F     g20<4,4,1>F     g24<4,4,1>F { align16 1H };
        mul(16)         g26<1>F         g20<8,8,1>F     g24<8,8,1>F     { align1 1H };
        add(16)         g28<1>F         g26<8,8,1>F     -g22<8,8,1>F    { align1 1H };
        add(16)         g30<1>D         g30<8,8,1>D     g32<8,8,1>D     { align1 1H };
        xor(16)         g32<1>D         g30<8,8,1>D     g34<8,8,1>D     { align1 1H };
        shl(16)         g34<1>D         g32<8,8,1>D     3D              { align1 1H };
        cmp.l.f0.0(16)  null<1>F        g28<8,8,1>F     g26<8,8,1>F     { align1 1H };
        (+f0.0) sel(16) g36<1>F         g28<8,8,1>F     g26<8,8,1>F     { align1 1H };
        add(16)         g40<1>D         g40<8,8,1>D     1D              { align1 1H };
        cmp.l.f0.0(16)  null<1>D        g40<8,8,1>D     g42<8,8,1>D     { align1 1H };
        (+f0.0) while(16) JIP: LLOOP                                    { align1 1H };
        send(16)        null<1>UD       g127<0,1,0>UD   0x82000010
                            thread_spawner MsgDesc: mlen 1 rlen 0       { align1 WE_all 1H EOT };
";

struct EotPort;

impl MessagePort for EotPort {
    fn send(&mut self, m: Message<'_>) -> Result<SendOutcome, String> {
        let sfid = m.sfid;
        if sfid == 7 {
            Ok(SendOutcome::Eot)
        } else {
            Err(format!("unexpected message to SFID {sfid}"))
        }
    }
}

fn init(t: &mut ThreadState, iters: u32, seed: u32) {
    let g = t.grf_bytes_mut();
    for lane in 0..16usize {
        let put = |g: &mut [u8], reg: usize, v: u32| {
            let o = reg * 32 + lane * 4;
            g[o..o + 4].copy_from_slice(&v.to_le_bytes());
        };
        let f = |x: f32| x.to_bits();
        put(g, 20, f(0.25 + lane as f32 * 0.01));
        put(g, 22, f(0.5));
        put(g, 24, f(0.999));
        put(g, 30, seed.wrapping_add(lane as u32));
        put(g, 32, 0x1234_5678 ^ lane as u32);
        put(g, 34, 7);
        put(g, 42, iters);
    }
}

/// The same per-lane arithmetic as the kernel, in plain Rust.
fn baseline(iters: u32, seed: u32) -> (f32, u32) {
    let mut a = [0f32; 16];
    let mut b = [0.5f32; 16];
    let mut c = [0.999f32; 16];
    let (mut d, mut e, mut h, mut s, mut m, mut n) = (
        [0f32; 16], [0f32; 16], [0f32; 16], [0u32; 16], [0u32; 16], [7u32; 16],
    );
    for l in 0..16 {
        a[l] = 0.25 + l as f32 * 0.01;
        s[l] = seed.wrapping_add(l as u32);
        m[l] = 0x1234_5678 ^ l as u32;
    }
    let mut i = [0u32; 16];
    loop {
        for l in 0..16 {
            a[l] = a[l].mul_add(c[l], b[l]);
            d[l] = a[l] * c[l];
            e[l] = d[l] - b[l];
            s[l] = s[l].wrapping_add(m[l]);
            m[l] = s[l] ^ n[l];
            n[l] = m[l] << 3;
            h[l] = if e[l] < d[l] { e[l] } else { d[l] };
            i[l] += 1;
        }
        black_box((&mut a, &mut b, &mut c));
        if i[0] >= iters {
            break;
        }
    }
    (h.iter().sum(), n.iter().fold(0, |x, y| x ^ y))
}

/// CPU time of this thread in seconds: the machine is shared, so wall time alone would
/// measure the other processes too.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid, exclusive pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let threads = args.first().copied().unwrap_or(200);
    let iters = args.get(1).copied().unwrap_or(1000) as u32;
    let bytes = match ferrite_isa::assemble(KERNEL, Gen::Gen9) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("eu-bench: kernel does not assemble: {e}");
            std::process::exit(1);
        }
    };
    let kernel = match Kernel::decode(&bytes, Gen::Gen9) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("eu-bench: kernel does not decode: {e}");
            std::process::exit(1);
        }
    };

    let start = Instant::now();
    let cpu0 = thread_cpu_seconds();
    let (mut insts, mut lanes) = (0u64, 0u64);
    let mut port = EotPort;
    for t in 0..threads {
        let mut th = ThreadState::new(16, 0xFFFF);
        th.set_trace(false);
        init(&mut th, iters, t as u32);
        let mut budget = u64::MAX;
        match th.run(&kernel, &mut port, &mut budget) {
            ThreadStatus::Eot => {}
            other => {
                eprintln!("eu-bench: thread {t} ended with {other:?}");
                std::process::exit(1);
            }
        }
        insts += th.instructions;
        lanes += th.lane_instructions;
    }
    let sim_wall = start.elapsed().as_secs_f64();
    let sim = thread_cpu_seconds() - cpu0;

    let start = Instant::now();
    let cpu0 = thread_cpu_seconds();
    let mut sink = 0u32;
    for t in 0..threads {
        let (f, u) = baseline(black_box(iters), t as u32);
        sink ^= u ^ f.to_bits();
    }
    let base_wall = start.elapsed().as_secs_f64();
    let base = thread_cpu_seconds() - cpu0;
    black_box(sink);
    // The baseline does the same lane operations as the kernel's 11 loop instructions.
    let base_lanes = threads as f64 * iters as f64 * 11.0 * 16.0;

    println!("eu-bench: {threads} SIMD16 threads x {iters} loop iterations, single host thread");
    println!(
        "  simulated:  {insts} instructions, {lanes} lane-instructions in {sim:.3} s CPU ({sim_wall:.3} s wall) = {:.1} M lane-instructions/s ({:.1} M instructions/s)",
        lanes as f64 / sim / 1e6,
        insts as f64 / sim / 1e6
    );
    println!(
        "  baseline:   plain Rust loop, same lane arithmetic: {:.1} M lane-ops/s ({base:.3} s CPU, {base_wall:.3} s wall)",
        base_lanes / base / 1e6
    );
    println!(
        "  ratio:      simulator is {:.1}x slower than the baseline",
        (base_lanes / base) / (lanes as f64 / sim)
    );
}
