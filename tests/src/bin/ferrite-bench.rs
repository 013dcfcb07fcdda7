//! `ferrite-bench`: Ferrite against Mesa's anv (on the noop drm-shim) over the shader corpus.
//!
//! ```text
//! ferrite-bench [--runs N] [--filter TEXT] [--json OUT.json] [--dump DIR] [--drivers anv,ferrite,compiler]
//! ferrite-bench compare BEFORE.json AFTER.json
//! ferrite-bench report RUN.json [--svg OUT.svg]
//! ferrite-bench --scaling [--runs N] [--sizes 100,200,...] [--shapes straight,loops,...] [--json OUT.json]
//!                         [--drivers anv,ferrite,compiler] [--timeout SECS] [--svg OUT.svg]
//! ```
//!
//! `--scaling`: compile time against shader size over generated shaders (see
//! `ferrite_tests::bench::scaling`), one child process per shader and driver.
//!
//! Each driver runs in a child process of its own (`ferrite-bench worker ...`) with one
//! loader environment: anv = `LD_PRELOAD=$FERRITE_ANV_SHIM VK_DRIVER_FILES=$FERRITE_ANV_ICD
//! MESA_SHADER_CACHE_DISABLE=true` (`scripts/bench` sets both from `scripts/peer-setup`);
//! Ferrite = a manifest for the built `libvulkan_ferrite.so` + `FERRITE_DEVICE=sim`. A third
//! child calls Ferrite's compiler crate directly. The parent merges the JSON results.

use ferrite_tests::amber::ast::{Shader, ShaderFormat};
use ferrite_tests::amber::shader::Compiler;
use ferrite_tests::bench::json::Json;
use ferrite_tests::bench::{corpus, report, scaling, worker};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "usage: ferrite-bench [--runs N] [--filter TEXT] [--json OUT.json] [--dump DIR] [--drivers anv,ferrite,compiler]
       ferrite-bench compare BEFORE.json AFTER.json
       ferrite-bench report RUN.json [--svg OUT.svg]     (issue 18's done-when table as markdown, the per-shader ratio plot)
       ferrite-bench --scaling [--runs N] [--sizes 100,200,...] [--shapes straight,branches,loops,live,memory] [--json OUT.json] [--drivers anv,ferrite,compiler] [--timeout SECS] [--svg OUT.svg]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("worker") => worker_main(&args[1..]),
        Some("compare") => compare_main(&args[1..]),
        Some("report") => report_main(&args[1..]),
        Some("-h" | "--help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => parent_main(&args),
    }
}

fn read_json(p: &str) -> Result<Json, String> {
    let t = std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"))?;
    Json::parse(&t).map_err(|e| format!("{p}: {e}"))
}

fn compare_main(args: &[String]) -> ExitCode {
    let [b, a] = args else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match (read_json(b), read_json(a)) {
        (Ok(b), Ok(a)) => {
            print!("{}", report::compare(&b, &a));
            ExitCode::SUCCESS
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("ferrite-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `report RUN.json [--svg OUT.svg]`: issue 18's done-when table of a saved run (markdown on
/// stdout) and the per-shader instruction-ratio plot.
fn report_main(args: &[String]) -> ExitCode {
    let (file, svg) = match args {
        [f] => (f, None),
        [f, flag, out] if flag == "--svg" => (f, Some(out)),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let run = match read_json(file) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("ferrite-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", ferrite_tests::bench::issue18::markdown(&run));
    if let Some(out) = svg {
        if let Err(e) = std::fs::write(out, ferrite_tests::bench::issue18::svg(&run)) {
            eprintln!("ferrite-bench: {out}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn worker_main(args: &[String]) -> ExitCode {
    let mut kind = String::new();
    let mut wa = worker::WorkerArgs {
        label: String::new(),
        corpus: PathBuf::new(),
        overhead_spirv: None,
        runs: 5,
        dump_dir: None,
        stats: true,
        skip: Vec::new(),
    };
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().cloned().unwrap_or_default();
        match a.as_str() {
            "--kind" => kind = v,
            "--label" => wa.label = v,
            "--corpus" => wa.corpus = v.into(),
            "--overhead" => wa.overhead_spirv = Some(v.into()),
            "--runs" => wa.runs = v.parse().unwrap_or(5),
            "--dump" => wa.dump_dir = Some(v.into()),
            "--stats" => wa.stats = v != "0",
            "--skip" => wa.skip = v.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
            "--out" => out = Some(PathBuf::from(v)),
            _ => {
                eprintln!("ferrite-bench worker: unknown argument {a}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(out) = out else {
        eprintln!("ferrite-bench worker: --out is required");
        return ExitCode::from(2);
    };
    let result = if kind == "compiler" {
        worker::run_compiler(&wa)
    } else {
        worker::run_vulkan(&wa)
    };
    match std::fs::write(&out, result.to_string()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferrite-bench worker: {}: {e}", out.display());
            ExitCode::FAILURE
        }
    }
}

#[derive(Clone)]
struct Opts {
    runs: usize,
    filter: Option<String>,
    json: Option<PathBuf>,
    dump: Option<PathBuf>,
    drivers: Vec<String>,
    scaling: bool,
    sizes: Vec<u32>,
    shapes: Vec<String>,
    /// `--scaling`: seconds a loader worker (one shader, `runs` compiles) may take.
    timeout: u64,
    /// `--scaling`: the plot of time against size.
    svg: Option<PathBuf>,
}

fn parse_opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        runs: 5,
        filter: None,
        json: None,
        dump: None,
        drivers: vec!["anv".into(), "ferrite".into(), "compiler".into()],
        scaling: false,
        sizes: scaling::SIZES.to_vec(),
        shapes: scaling::SHAPES.iter().map(|s| s.0.to_string()).collect(),
        timeout: 120,
        svg: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--runs" => {
                o.runs = val()?.parse().map_err(|_| "--runs takes a number")?;
                if o.runs == 0 {
                    return Err("--runs must be at least 1".into());
                }
            }
            "--filter" => o.filter = Some(val()?),
            "--json" => o.json = Some(val()?.into()),
            "--dump" => o.dump = Some(val()?.into()),
            "--drivers" => o.drivers = val()?.split(',').map(String::from).collect(),
            "--scaling" => o.scaling = true,
            "--sizes" => {
                o.sizes = val()?
                    .split(',')
                    .map(|x| {
                        x.trim()
                            .parse()
                            .map_err(|_| format!("--sizes: bad size {x}"))
                    })
                    .collect::<Result<_, _>>()?
            }
            "--shapes" => o.shapes = val()?.split(',').map(String::from).collect(),
            "--timeout" => o.timeout = val()?.parse().map_err(|_| "--timeout takes seconds")?,
            "--svg" => o.svg = Some(val()?.into()),
            _ => return Err(format!("unknown argument {a}\n{USAGE}")),
        }
    }
    Ok(o)
}

/// Runs one worker child; its stderr goes to `<work>/<label>.log`.
fn spawn_worker(label: &str, kind: &str, env: &[(String, String)], work: &Path, o: &Opts) -> Json {
    spawn_worker_with(label, kind, env, work, o, &[], None)
}

/// [`spawn_worker`] with extra worker arguments and a time limit: a worker still running
/// after `timeout` is killed and its result is an error with `timeout_s` set.
fn spawn_worker_with(
    label: &str,
    kind: &str,
    env: &[(String, String)],
    work: &Path,
    o: &Opts,
    extra: &[&str],
    timeout: Option<std::time::Duration>,
) -> Json {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return error_json(label, format!("cannot find own executable: {e}")),
    };
    let out = work.join(format!("{label}.json"));
    let log = work.join(format!("{label}.log"));
    // A worker killed by a signal while compiling a shader is run again without that shader
    // (Mesa's anv segfaults on some invalid inputs); the shader's error says it crashed.
    let mut skip: Vec<usize> = Vec::new();
    loop {
        let mut cmd = worker_command(&exe, label, kind, work, o, extra, &out);
        if !skip.is_empty() {
            let list: Vec<String> = skip.iter().map(usize::to_string).collect();
            cmd.arg("--skip").arg(list.join(","));
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        match run_worker(label, &mut cmd, &out, &log, timeout) {
            WorkerEnd::Crashed { status, shader } if skip.len() < MAX_CRASHES => {
                eprintln!(
                    "ferrite-bench: {label} crashed ({status}) on shader {shader}; running it again without that shader"
                );
                skip.push(shader);
            }
            WorkerEnd::Crashed { status, .. } => {
                return error_json(
                    label,
                    format!("worker crashed ({status}) on more than {MAX_CRASHES} shaders"),
                )
            }
            WorkerEnd::Done(mut j) => {
                if !skip.is_empty() {
                    let list: Vec<Json> = skip.iter().map(|&i| Json::from(i as u32)).collect();
                    j.set("crashed", list);
                }
                return j;
            }
        }
    }
}

/// Shaders a driver may crash on before its column is given up.
const MAX_CRASHES: usize = 16;

/// How one worker run ended.
enum WorkerEnd {
    /// Its result, or an error result (including a crash outside any shader).
    Done(Json),
    /// Killed by a signal while it compiled this shader (corpus index).
    Crashed {
        status: std::process::ExitStatus,
        shader: usize,
    },
}

/// The worker command line, without the environment.
fn worker_command(
    exe: &Path,
    label: &str,
    kind: &str,
    work: &Path,
    o: &Opts,
    extra: &[&str],
    out: &Path,
) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("worker")
        .args(["--kind", kind, "--label", label])
        .arg("--corpus")
        .arg(work.join("corpus.json"))
        .arg("--overhead")
        .arg(work.join("overhead.spv"))
        .args(["--runs", &o.runs.to_string()])
        .args(extra)
        .arg("--out")
        .arg(out);
    if let Some(d) = &o.dump {
        cmd.arg("--dump").arg(d);
    }
    for k in [
        "LD_PRELOAD",
        "VK_ICD_FILENAMES",
        "VK_DRIVER_FILES",
        "VK_INSTANCE_LAYERS",
        "VK_LOADER_LAYERS_ENABLE",
    ] {
        cmd.env_remove(k);
    }
    cmd
}

/// The shader a worker was compiling when it stopped: the index of its last
/// [`worker::MARK`] or [`worker::TIMED_MARK`] line, unless the statistics pass had ended
/// and no timed creation had started.
fn shader_in_progress(stderr: &str) -> Option<usize> {
    let mut current = None;
    for line in stderr.lines() {
        if let Some(rest) = line
            .strip_prefix(worker::MARK)
            .or_else(|| line.strip_prefix(worker::TIMED_MARK))
        {
            current = rest.trim().parse().ok();
        }
    }
    current
}

/// Runs one worker and reads its result.
fn run_worker(
    label: &str,
    cmd: &mut Command,
    out: &Path,
    log: &Path,
    timeout: Option<std::time::Duration>,
) -> WorkerEnd {
    let _ = std::fs::remove_file(out);
    eprintln!("ferrite-bench: running {label} ...");
    let start = std::time::Instant::now();
    let status = match run_child(cmd, log, timeout) {
        Ok(Ended::Exited(s)) => s,
        Ok(Ended::Stopped(cpu)) => {
            eprintln!("ferrite-bench: {label} stopped after {cpu:.1} s of CPU time");
            let mut j = error_json(
                label,
                format!(
                    "stopped after {cpu:.1} s of CPU time (limit {} s)",
                    timeout.map_or(0, |t| t.as_secs())
                ),
            );
            j.set("timeout_s", cpu);
            return WorkerEnd::Done(j);
        }
        Err(e) => return WorkerEnd::Done(error_json(label, format!("cannot run the worker: {e}"))),
    };
    let stderr = std::fs::read_to_string(log).unwrap_or_default();
    eprintln!(
        "ferrite-bench: {label} done in {:.1} s (log: {})",
        start.elapsed().as_secs_f64(),
        log.display()
    );
    let mut result = match std::fs::read_to_string(out).map(|t| Json::parse(&t)) {
        Ok(Ok(j)) if status.success() => j,
        _ => {
            let signaled = status.code().is_none();
            if let (true, Some(shader)) = (signaled, shader_in_progress(&stderr)) {
                return WorkerEnd::Crashed { status, shader };
            }
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return WorkerEnd::Done(error_json(
                label,
                format!("worker failed ({status}): {}", tail.join(" | ")),
            ));
        }
    };
    attach_logs(&mut result, &stderr);
    WorkerEnd::Done(result)
}

/// How a child ended.
enum Ended {
    Exited(std::process::ExitStatus),
    /// Stopped after using this many seconds of CPU time.
    Stopped(f64),
}

/// Runs `cmd` with stdout discarded and stderr into `log`. With a `timeout`, the child is
/// stopped once it has used that much CPU time (on a shared machine its wall time says more
/// about the other processes), or four times as much wall time.
fn run_child(
    cmd: &mut Command,
    log: &Path,
    timeout: Option<std::time::Duration>,
) -> std::io::Result<Ended> {
    let err = std::fs::File::create(log)?;
    cmd.stdout(std::process::Stdio::null()).stderr(err);
    let mut child = cmd.spawn()?;
    let start = std::time::Instant::now();
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Ended::Exited(s));
        }
        if let Some(t) = timeout {
            let cpu = worker::cpu_of_process_s(child.id()).unwrap_or(0.0);
            if cpu > t.as_secs_f64() || start.elapsed() > 4 * t {
                child.kill()?;
                child.wait()?;
                return Ok(Ended::Stopped(cpu));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn error_json(label: &str, e: String) -> Json {
    let mut j = Json::obj();
    j.set("driver", label);
    j.set("error", e);
    j
}

/// Appends the driver's log lines printed while a shader's pipeline was created to that
/// shader's error, so "unavailable" says what the driver said.
fn attach_logs(result: &mut Json, stderr: &str) {
    let mut segments: Vec<Vec<&str>> = Vec::new();
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix(worker::MARK) {
            if rest == "end" {
                break;
            }
            segments.push(Vec::new());
        } else if let Some(seg) = segments.last_mut() {
            let l = line.trim();
            if !l.is_empty() && !l.contains("Unknown drm_i915_query_item") {
                seg.push(l);
            }
        }
    }
    let Json::Obj(members) = result else {
        return;
    };
    for (k, v) in members.iter_mut() {
        if k != "shaders" {
            continue;
        }
        if let Json::Arr(list) = v {
            for (s, seg) in list.iter_mut().zip(&segments) {
                let Some(err) = s.get("error").and_then(Json::as_str).map(String::from) else {
                    continue;
                };
                if !seg.is_empty() {
                    let text: Vec<&str> = seg.iter().take(2).copied().collect();
                    s.set("error", format!("{err} — driver log: {}", text.join(" / ")));
                }
            }
        }
    }
}

fn parent_main(args: &[String]) -> ExitCode {
    let o = match parse_opts(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("ferrite-bench: {e}");
            return ExitCode::from(2);
        }
    };
    if o.scaling {
        return scaling_main(&o);
    }
    let root = ferrite_tests::icd::workspace_root();
    let (entries, skipped) = corpus::collect(&root, o.filter.as_deref());
    for s in &skipped {
        eprintln!("ferrite-bench: skipped {}: {}", s.name, s.why);
    }
    if entries.is_empty() {
        eprintln!("ferrite-bench: the corpus is empty");
        return ExitCode::FAILURE;
    }
    let work = std::env::temp_dir().join(format!("ferrite-bench-{}", std::process::id()));
    if let Err(e) = corpus::save(&work, &entries) {
        eprintln!("ferrite-bench: {}: {e}", work.display());
        return ExitCode::FAILURE;
    }
    let mut cc = Compiler::new(Some(Compiler::default_cache_dir()));
    let ov = Shader {
        name: "overhead".into(),
        format: ShaderFormat::Glsl,
        target_env: None,
        source: worker::OVERHEAD_GLSL.into(),
        line: 0,
    };
    match cc.compile(&ov) {
        Ok(w) => {
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            let _ = std::fs::write(work.join("overhead.spv"), bytes);
        }
        Err(e) => eprintln!("ferrite-bench: overhead shader: {e}"),
    }
    eprintln!(
        "ferrite-bench: {} shaders ({} skipped), {} timed runs each; work dir {}",
        entries.len(),
        skipped.len(),
        o.runs,
        work.display()
    );
    let mut merged = Json::obj();
    merged.set("runs", o.runs as u32);
    merged.set("shader_count", entries.len() as u32);
    merged.set(
        "skipped",
        skipped
            .iter()
            .map(|s| Json::from(format!("{}: {}", s.name, s.why)))
            .collect::<Vec<_>>(),
    );
    let want = |d: &str| o.drivers.iter().any(|x| x == d);
    if want("anv") {
        let shim = std::env::var("FERRITE_ANV_SHIM").unwrap_or_default();
        let icd = std::env::var("FERRITE_ANV_ICD").unwrap_or_default();
        let r = if shim.is_empty() || icd.is_empty() {
            error_json(
                "anv",
                "FERRITE_ANV_SHIM / FERRITE_ANV_ICD are not set: run scripts/bench, or eval \"$(scripts/peer-setup)\" first".into(),
            )
        } else {
            let env = vec![
                ("LD_PRELOAD".to_string(), shim),
                ("VK_DRIVER_FILES".to_string(), icd),
                ("MESA_SHADER_CACHE_DISABLE".to_string(), "true".to_string()),
            ];
            spawn_worker("anv", "vulkan", &env, &work, &o)
        };
        merged.set("anv", r);
    }
    if want("ferrite") {
        let r = match ferrite_tests::icd::driver_library()
            .and_then(|lib| ferrite_tests::icd::write_manifest(&lib).map_err(|e| e.to_string()))
        {
            Err(e) => error_json("ferrite", e),
            Ok(m) => {
                let env = vec![
                    ("VK_DRIVER_FILES".to_string(), m.path.display().to_string()),
                    ("FERRITE_DEVICE".to_string(), "sim".to_string()),
                    (
                        "FERRITE_LOG".to_string(),
                        std::env::var("FERRITE_LOG").unwrap_or_else(|_| "warn".into()),
                    ),
                ];
                spawn_worker("ferrite", "vulkan", &env, &work, &o)
            }
        };
        merged.set("ferrite", r);
    }
    if want("compiler") {
        merged.set(
            "ferrite-compiler",
            spawn_worker("ferrite-compiler", "compiler", &[], &work, &o),
        );
    }
    print!("{}", report::side_by_side(&merged));
    if let Some(p) = &o.json {
        if let Err(e) = std::fs::write(p, merged.to_string()) {
            eprintln!("ferrite-bench: {}: {e}", p.display());
            return ExitCode::FAILURE;
        }
        eprintln!("ferrite-bench: results saved to {}", p.display());
    }
    // The work dir keeps the workers' logs and results; only the SPIR-V copies go.
    for i in 0..entries.len() {
        let _ = std::fs::remove_file(work.join(format!("{i}.spv")));
    }
    ExitCode::SUCCESS
}

/// The loader environment of the anv child, or why there is none.
fn anv_env() -> Result<Vec<(String, String)>, String> {
    let shim = std::env::var("FERRITE_ANV_SHIM").unwrap_or_default();
    let icd = std::env::var("FERRITE_ANV_ICD").unwrap_or_default();
    if shim.is_empty() || icd.is_empty() {
        return Err("unavailable: FERRITE_ANV_SHIM / FERRITE_ANV_ICD are not set (run scripts/bench, or eval \"$(scripts/peer-setup)\" first)".into());
    }
    Ok(vec![
        ("LD_PRELOAD".to_string(), shim),
        ("VK_DRIVER_FILES".to_string(), icd),
        ("MESA_SHADER_CACHE_DISABLE".to_string(), "true".to_string()),
    ])
}

/// The loader environment of a Ferrite child (a manifest for the built library, the
/// simulated device), or why there is none.
fn ferrite_env() -> Result<Vec<(String, String)>, String> {
    ferrite_tests::icd::driver_library()?;
    // The process-wide manifest: it lives as long as the children need it.
    let m = ferrite_tests::icd::manifest();
    Ok(vec![
        ("VK_DRIVER_FILES".to_string(), m.path.display().to_string()),
        ("FERRITE_DEVICE".to_string(), "sim".to_string()),
        (
            "FERRITE_LOG".to_string(),
            std::env::var("FERRITE_LOG").unwrap_or_else(|_| "warn".into()),
        ),
    ])
}

/// `--scaling`: every shape at every size: Ferrite's compiler crate (per-pass times), and
/// through the loader Ferrite and anv (when set up), each in a child process per shader.
///
/// The `--runs` compiles of a point are measured in rounds: each round visits every shape,
/// size and driver once (one compile per worker, the drivers' order rotating from round to
/// round), so a slow phase of the shared machine falls on all of them alike instead of on
/// one driver's or one size's runs. Each loader worker may use `--timeout / --runs` seconds
/// of CPU; when an anv worker runs out, that shape's larger sizes are not run for anv (its
/// time grows with the size) and the point's result is the bound.
fn scaling_main(o: &Opts) -> ExitCode {
    let want = |d: &str| o.drivers.iter().any(|x| x == d);
    let anv = if want("anv") {
        anv_env()
    } else {
        Err("not requested (--drivers)".into())
    };
    let ferrite_vk = if want("ferrite") {
        ferrite_env()
    } else {
        Err("not requested (--drivers)".into())
    };
    let mut note = String::new();
    if let Err(e) = &anv {
        note += &format!("anv: {e}\n");
    }
    if let Err(e) = &ferrite_vk {
        note += &format!("Ferrite through the loader: {e}\n");
    }
    let limit = std::time::Duration::from_secs_f64(o.timeout as f64 / o.runs as f64);
    let one = Opts {
        runs: 1,
        ..o.clone()
    };
    let timed = ["--stats", "0"];
    let work = std::env::temp_dir().join(format!("ferrite-scaling-{}", std::process::id()));
    let mut cc = Compiler::new(Some(Compiler::default_cache_dir()));
    // Every point's SPIR-V first: (shape, size, directory).
    let mut todo = Vec::new();
    for shape in &o.shapes {
        for &size in &o.sizes {
            let Some(source) = scaling::glsl(shape, size) else {
                eprintln!("ferrite-bench: unknown shape {shape}");
                return ExitCode::from(2);
            };
            let name = format!("{shape}-{size}");
            let sh = Shader {
                name: name.clone(),
                format: ShaderFormat::Glsl,
                target_env: None,
                source,
                line: 0,
            };
            let spirv = match cc.compile(&sh) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("ferrite-bench: {name}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let dir = work.join(&name);
            let entry = corpus::Entry {
                name: name.clone(),
                spirv,
                entry: "main".into(),
                specs: vec![],
            };
            if let Err(e) = corpus::save(&dir, &[entry]) {
                eprintln!("ferrite-bench: {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
            todo.push((shape.clone(), size, dir));
        }
    }
    // rounds[point][driver]: one result per round (drivers: compiler, Ferrite, anv).
    let mut rounds: Vec<[Vec<Json>; 3]> = todo.iter().map(|_| Default::default()).collect();
    // Per shape, the smallest size at which anv ran out of time.
    let mut anv_out: std::collections::HashMap<String, u32> = Default::default();
    for round in 0..o.runs {
        for (k, (shape, size, dir)) in todo.iter().enumerate() {
            for d in 0..3 {
                let driver = (d + round) % 3;
                let label = format!("{}-r{round}", ["ferrite", "ferrite-vk", "anv"][driver]);
                let result = match driver {
                    0 if want("compiler") => spawn_worker(&label, "compiler", &[], dir, &one),
                    1 => match &ferrite_vk {
                        Ok(env) => {
                            spawn_worker_with(&label, "vulkan", env, dir, &one, &timed, Some(limit))
                        }
                        Err(_) => continue,
                    },
                    2 => match &anv {
                        Ok(_) if anv_out.get(shape).is_some_and(|at| at <= size) => continue,
                        Ok(env) => {
                            let j = spawn_worker_with(
                                &label,
                                "vulkan",
                                env,
                                dir,
                                &one,
                                &timed,
                                Some(limit),
                            );
                            if j.get("timeout_s").is_some() {
                                anv_out.insert(shape.clone(), *size);
                            }
                            j
                        }
                        Err(_) => continue,
                    },
                    _ => continue,
                };
                rounds[k][driver].push(result);
            }
        }
    }
    let mut points = Vec::new();
    for ((shape, size, _), [compiler, vk, anv_rounds]) in todo.into_iter().zip(rounds) {
        let anv_result = match anv_out.get(&shape) {
            Some(&at) if at < size => {
                let mut j = error_json(
                    "anv",
                    format!("not run: the limit ran out at {at} statements"),
                );
                j.set(
                    "bound_ms",
                    scaling::timeout_bound_ms(limit.as_secs_f64(), 1),
                );
                j.set("bound_from", at);
                Some(j)
            }
            _ => scaling::merge_rounds(anv_rounds).map(|mut j| {
                if let Some(t) = j.get("timeout_s").and_then(Json::as_f64) {
                    j.set("bound_ms", scaling::timeout_bound_ms(t, 1));
                }
                j
            }),
        };
        points.push(scaling::Point {
            shape,
            size,
            ferrite: scaling::merge_rounds(compiler),
            ferrite_vk: scaling::merge_rounds(vk),
            anv: anv_result,
        });
    }
    print!("{}", scaling::report(&points, &note));
    if let Some(path) = &o.svg {
        if let Err(e) = std::fs::write(path, scaling::svg(&points)) {
            eprintln!("ferrite-bench: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(path) = &o.json {
        let list: Vec<Json> = points
            .iter()
            .map(|p| {
                let mut j = Json::obj();
                j.set("shape", p.shape.as_str());
                j.set("size", p.size);
                for (k, v) in [
                    ("ferrite", &p.ferrite),
                    ("ferrite_vk", &p.ferrite_vk),
                    ("anv", &p.anv),
                ] {
                    if let Some(v) = v {
                        j.set(k, v.clone());
                    }
                }
                j
            })
            .collect();
        let mut j = Json::obj();
        j.set("scaling", list);
        if let Err(e) = std::fs::write(path, j.to_string()) {
            eprintln!("ferrite-bench: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
