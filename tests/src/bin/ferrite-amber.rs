//! `ferrite-amber [--timing] [--no-cache] [--print] FILE|DIR...`: runs AmberScript compute
//! files on the first Vulkan device the loader exposes (choose the driver with
//! `VK_DRIVER_FILES`). Prints one line per file and `N passed, N failed, N skipped`; exits
//! non-zero when any file fails.

use ferrite_tests::amber::ast::{Command, Shader};
use ferrite_tests::amber::parser;
use ferrite_tests::amber::runner::{Outcome, Runner};
use ferrite_tests::amber::shader::Compiler;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

fn usage() -> ExitCode {
    eprintln!("usage: ferrite-amber [--timing] [--no-cache] [--print] FILE|DIR...");
    eprintln!("  --timing    report parse, shader compile, pipeline creation and runner overhead");
    eprintln!("  --no-cache  compile every shader (no SPIR-V cache; default cache: $FERRITE_AMBER_CACHE or <tmp>/ferrite-amber-cache)");
    eprintln!("  --print     parse only and print each script back from its AST");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let (mut timing, mut cache, mut print) = (false, true, false);
    let mut files: Vec<PathBuf> = Vec::new();
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--timing" => timing = true,
            "--no-cache" => cache = false,
            "--print" => print = true,
            "-h" | "--help" => return usage(),
            _ if a.starts_with("--") => return usage(),
            _ => {
                let p = PathBuf::from(&a);
                if p.is_dir() {
                    let mut v: Vec<PathBuf> = match std::fs::read_dir(&p) {
                        Ok(rd) => rd
                            .filter_map(|e| e.ok().map(|e| e.path()))
                            .filter(|p| p.extension().is_some_and(|x| x == "amber"))
                            .collect(),
                        Err(e) => {
                            eprintln!("{a}: {e}");
                            return ExitCode::from(2);
                        }
                    };
                    v.sort();
                    files.extend(v);
                } else {
                    files.push(p);
                }
            }
        }
    }
    if files.is_empty() {
        return usage();
    }
    if print {
        let mut bad = false;
        for f in &files {
            match std::fs::read_to_string(f)
                .map_err(|e| e.to_string())
                .and_then(|s| {
                    parser::parse(&f.display().to_string(), &s).map_err(|e| e.to_string())
                }) {
                Ok(s) => print!("{s}"),
                Err(e) => {
                    eprintln!("{e}");
                    bad = true;
                }
            }
        }
        return if bad {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        };
    }
    let wall = Instant::now();
    let compiler = Compiler::new(cache.then(Compiler::default_cache_dir));
    let mut runner = match Runner::new(compiler) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ferrite-amber: {e}");
            return ExitCode::FAILURE;
        }
    };
    if cache {
        // Compile every shader of every file up front, in parallel, into the cache.
        let shaders: Vec<Shader> = files
            .iter()
            .filter_map(|f| {
                std::fs::read_to_string(f)
                    .ok()
                    .and_then(|s| parser::parse(&f.display().to_string(), &s).ok())
            })
            .flat_map(|s| s.stmts.into_iter())
            .filter_map(|st| match st.cmd {
                Command::Shader(sh) => Some(sh),
                _ => None,
            })
            .collect();
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 8);
        runner.compiler.precompile(&shaders, threads);
    }
    match runner.device_description() {
        Ok(d) => println!("ferrite-amber: device: {d}"),
        Err(e) => {
            eprintln!("ferrite-amber: {e}");
            return ExitCode::FAILURE;
        }
    }
    for f in &files {
        let o = runner.run_file(f);
        match &o {
            Outcome::Pass => println!("PASS {}", f.display()),
            Outcome::Fail(r) => println!("FAIL {}: {r}", f.display()),
            Outcome::Skip(r) => println!("SKIP {}: {r}", f.display()),
        }
    }
    let s = &runner.summary;
    if timing {
        println!(
            "{}",
            s.timing_report(wall.elapsed(), runner.compiler.precompile_wall)
        );
    }
    println!("{s}");
    if s.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
