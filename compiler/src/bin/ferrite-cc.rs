//! `ferrite-cc shader.spv [--entry main] [--simd 16] [--gen 9] [--ir] [-o OUT.bin]`: compiles
//! a compute shader through the front end, the middle passes and the Gen9 back end and prints
//! the final assembly (with byte offsets and the `compacted` marker), the binding-table entries
//! and the statistics (Mesa's names plus compile time) as `//` comments. `--ir` prints the
//! optimized IR first. `-o` writes the kernel binary; without `--ir`, `ferrite-asm` on the
//! printed listing assembles the same bytes.
//! `FERRITE_DEBUG=passtime` adds the time of the front end and of every pass.

use ferrite_compiler::backend::{self, BackendOptions};
use ferrite_compiler::pipeline::{compile_to_ir_timed, CompileOptions, DebugFlags, PassTimes};
use ferrite_compiler::Target;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str =
    "usage: ferrite-cc shader.spv [--entry main] [--simd 8|16|32] [--gen 9] [--ir] [-o OUT.bin]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut path = None;
    let mut entry = "main".to_string();
    let mut gen = 9;
    let mut simd = None;
    let mut print_ir = false;
    let mut output = None;
    let mut k = 0;
    while k < args.len() {
        let next = |k: usize| args.get(k + 1).cloned();
        match args[k].as_str() {
            "--entry" => {
                entry = next(k).unwrap_or_default();
                k += 1;
            }
            "--gen" => {
                gen = next(k).and_then(|s| s.parse().ok()).unwrap_or(0);
                k += 1;
            }
            "--simd" => {
                simd = next(k).and_then(|s| s.parse::<u32>().ok());
                k += 1;
            }
            "-o" => {
                output = next(k);
                k += 1;
            }
            "--ir" => print_ir = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            p => path = Some(p.to_string()),
        }
        k += 1;
    }
    let Some(path) = path else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if gen != 9 {
        eprintln!("ferrite-cc: only --gen 9 is supported");
        return ExitCode::from(2);
    }
    let mut target = Target::gen9();
    if let Some(w) = simd {
        if ![8, 16, 32].contains(&w) {
            eprintln!("ferrite-cc: --simd must be 8, 16 or 32");
            return ExitCode::from(2);
        }
        target.simd_widths = vec![w];
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("ferrite-cc: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    if bytes.len() % 4 != 0 {
        eprintln!("ferrite-cc: {path}: size is not a multiple of 4 bytes");
        return ExitCode::FAILURE;
    }
    let words = ferrite_compiler::testing::spirv_words(&bytes);
    let debug = std::env::var("FERRITE_DEBUG")
        .ok()
        .map(|s| DebugFlags::parse(&s))
        .transpose();
    let debug = match debug {
        Ok(d) => d.unwrap_or_default(),
        Err(e) => {
            eprintln!("ferrite-cc: FERRITE_DEBUG: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = CompileOptions {
        entry_point: entry,
        debug,
        dump_dir: std::env::var_os("FERRITE_DUMP_DIR").map(Into::into),
        ..Default::default()
    };
    let start = Instant::now();
    let mut times = PassTimes::default();
    let (shader, bindings) = match compile_to_ir_timed(&words, &target, &opts, &mut times) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ferrite-cc: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    if print_ir {
        print!("{shader}");
        println!("// IR instructions: {}", shader.func.instr_count());
    }
    let bopts = BackendOptions {
        validate: true,
        ..BackendOptions::new(&target, &opts.debug)
    };
    let kernel = match backend::compile(&shader, &bopts) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("ferrite-cc: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let elapsed = start.elapsed();
    println!(
        "// SIMD{} kernel, {} bytes, local size {:?}",
        kernel.simd,
        kernel.binary.len(),
        kernel.local_size
    );
    for b in &bindings {
        println!("// {b}");
    }
    print!("{}", kernel.asm);
    if !kernel.asm.ends_with('\n') {
        println!();
    }
    println!("// Statistics");
    for (name, value) in kernel.mesa_statistics() {
        println!("// {name}: {value}");
    }
    println!("// Compile time (us): {}", elapsed.as_micros());
    if let Some(out) = output {
        if let Err(e) = std::fs::write(&out, &kernel.binary) {
            eprintln!("ferrite-cc: {out}: {e}");
            return ExitCode::FAILURE;
        }
    }
    if opts.debug.passtime {
        times.0.extend(kernel.stats.pass_times.0.iter().cloned());
        println!("// Pass times (FERRITE_DEBUG=passtime)");
        for line in times.to_string().lines() {
            println!("// {line}");
        }
        println!(
            "// SIMD{} register allocation rounds: {}",
            kernel.simd, kernel.stats.ra_rounds
        );
    }
    ExitCode::SUCCESS
}
