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
    eprintln!(
        "  --isolate   run each file in a child process: a driver crash fails that file only"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let (mut timing, mut cache, mut print, mut isolate) = (false, true, false, false);
    let mut files: Vec<PathBuf> = Vec::new();
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--timing" => timing = true,
            "--no-cache" => cache = false,
            "--print" => print = true,
            "--isolate" => isolate = true,
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
        let o = if isolate {
            run_isolated(f, cache)
        } else {
            runner.run_file(f)
        };
        if isolate {
            runner.summary.count(&o);
        }
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

/// Runs one file in a child process (this binary again) and reads its result line; a child
/// killed by a signal (a driver crash) or one that runs past
/// `$FERRITE_AMBER_FILE_TIMEOUT_S` (default 600 s) fails that file.
fn run_isolated(f: &std::path::Path, cache: bool) -> Outcome {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return Outcome::Fail(format!("cannot find ferrite-amber: {e}")),
    };
    let mut cmd = std::process::Command::new(exe);
    if !cache {
        cmd.arg("--no-cache");
    }
    cmd.arg(f)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::Fail(format!("cannot start a child runner: {e}")),
    };
    let limit = std::env::var("FERRITE_AMBER_FILE_TIMEOUT_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600u64);
    let start = Instant::now();
    // Drain the pipes on threads so a chatty child cannot block on a full pipe.
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = std::io::Read::read_to_string(p, &mut s);
        }
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = std::io::Read::read_to_string(p, &mut s);
        }
        s
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if start.elapsed().as_secs() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
            Err(e) => return Outcome::Fail(format!("waiting for the child runner: {e}")),
        }
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    let Some(status) = status else {
        return Outcome::Fail(format!(
            "killed after {limit} s (FERRITE_AMBER_FILE_TIMEOUT_S)"
        ));
    };
    let name = f.display().to_string();
    for l in stdout.lines() {
        if l == format!("PASS {name}") {
            return Outcome::Pass;
        }
        if let Some(r) = l.strip_prefix(&format!("FAIL {name}: ")) {
            return Outcome::Fail(r.to_string());
        }
        if let Some(r) = l.strip_prefix(&format!("SKIP {name}: ")) {
            return Outcome::Skip(r.to_string());
        }
    }
    let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
    #[cfg(unix)]
    if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return Outcome::Fail(format!(
            "the runner crashed (signal {sig}; likely in the driver) {}",
            tail.join(" | ")
        ));
    }
    Outcome::Fail(format!(
        "the child runner exited with {status} and no result line {}",
        tail.join(" | ")
    ))
}
