//! `cargo run --release -p ferrite-isa --bin isa-bench [-- --count N]`
//!
//! Throughput of encode (+ compaction attempt), decode (native and compacted) and
//! disassembly, in instructions per second, with a memcpy of the same bytes as baseline.
//! A benchmark, not a test: numbers vary with the machine.

use ferrite_isa::compact::compact_u128;
use ferrite_isa::random::{self, Rng};
use ferrite_isa::{codec, decode_program, disasm, Gen, Instruction};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Runs `f` repeatedly for at least `min` and returns the time per call.
fn time(min: Duration, mut f: impl FnMut()) -> Duration {
    let mut n = 0u32;
    let start = Instant::now();
    loop {
        f();
        n += 1;
        let e = start.elapsed();
        if e >= min {
            return e / n;
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let count = args
        .iter()
        .position(|a| a == "--count")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000usize);
    let gen = Gen::Gen9;
    let mut r = Rng::new(42);
    // A realistic mix: mostly simple ALU (compactable), plus every other form.
    let insts: Vec<Instruction> = (0..count)
        .map(|k| {
            if k % 2 == 0 {
                random::simple_alu(&mut r)
            } else {
                random::instruction(&mut r, gen)
            }
        })
        .collect();
    let min = Duration::from_millis(400);

    let mut native = Vec::with_capacity(count * 16);
    let mut mixed = Vec::with_capacity(count * 16);
    let t_encode = time(min, || {
        native.clear();
        mixed.clear();
        for i in &insts {
            let w = codec::encode_u128(i, gen).expect("encodable");
            native.extend_from_slice(&w.to_le_bytes());
            match compact_u128(w, gen) {
                Some(c) => mixed.extend_from_slice(&c.to_le_bytes()),
                None => mixed.extend_from_slice(&w.to_le_bytes()),
            }
        }
        black_box(&mixed);
    });
    let compacted = decode_program(&mixed, gen)
        .expect("decodes")
        .iter()
        .filter(|p| p.compacted)
        .count();
    let t_decode_native = time(min, || {
        black_box(decode_program(black_box(&native), gen).expect("decodes"));
    });
    let t_decode_mixed = time(min, || {
        black_box(decode_program(black_box(&mixed), gen).expect("decodes"));
    });
    let prog = decode_program(&native, gen).expect("decodes");
    let t_disasm = time(min, || {
        black_box(disasm::format_program(black_box(&prog)));
    });
    let mut copy = vec![0u8; native.len()];
    let t_memcpy = time(min, || {
        copy.copy_from_slice(black_box(&native));
        black_box(&copy);
    });

    let rate = |t: Duration| count as f64 / t.as_secs_f64();
    println!(
        "isa-bench: {count} instructions ({compacted} compactable), {} native bytes",
        native.len()
    );
    println!("  encode + compact      {:>14.0} inst/s", rate(t_encode));
    println!(
        "  decode (native)       {:>14.0} inst/s",
        rate(t_decode_native)
    );
    println!(
        "  decode (compacted mix){:>14.0} inst/s",
        rate(t_decode_mixed)
    );
    println!("  disassemble (text)    {:>14.0} inst/s", rate(t_disasm));
    println!(
        "  baseline memcpy       {:>14.0} inst/s ({:.2} GB/s)",
        rate(t_memcpy),
        native.len() as f64 / t_memcpy.as_secs_f64() / 1e9
    );
}
