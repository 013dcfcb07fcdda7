//! The compile entry point: front end, the pass pipeline, dumps, and (once it exists) the
//! Gen9 back end.
//!
//! # What a back end receives ([`compile_to_ir`])
//!
//! A [`Shader`]: `local_size`, `shared_size` (bytes of SLM), `push_size`, and one function
//! (with its `local_mem_size`: bytes of per-invocation private memory, i.e. scratch, for
//! dynamically indexed function arrays) in which, after [`PIPELINE`]:
//! * there are no variables (`load_var`/`store_var`) and no 1-bit booleans: booleans are
//!   `b16`/`b32`/`b64` holding 0 or all ones, sized as the hardware's CMP produces them;
//! * every ALU op is scalar; vectors remain only in `vec` (building a store's data),
//!   `extract`, vector `load`/`store`, `sysval` of the 3-component ids, and `const`;
//! * memory ops are logical: `load`/`store`/`atomic_*` with a space (`ssbo[bti]`,
//!   `ubo[bti]`, `push`, `shared`, `local`), an `i32` byte offset and its known alignment;
//!   `buffer_size ssbo[bti]` is the bound range in bytes (for `length()`);
//! * `iadd_sat`/`uadd_sat` remain only at 32 bits (`add.sat`; `lower_sat_add` expands others);
//! * `idiv`/`udiv`/`irem`/`umod` remain only for 32-bit non-power-of-two divisors (math
//!   INT DIV); `imod` and `isign` are gone; `fpow`, `fexp2`, `flog2`, `fsin`, `fcos`,
//!   `fsqrt`, `frsq`, `frcp`, `fdiv` map to the math unit; `ldexp`, `frexp_*`, `fsign`,
//!   `fmod`/`frem` (defined as x - y*floor(x/y), x - y*trunc(x/y)) still need lowering;
//! * control flow is `if`/`loop`/`break`/`continue`/`yield` with values on the edges
//!   (out of SSA = parallel copies before each edge); `sysval global_invocation_id` and
//!   `local_invocation_index` are not yet lowered to workgroup id/local id arithmetic.

use crate::frontend::{self, FrontendError, FrontendInput};
use crate::ir::Shader;
use crate::kernel::Kernel;
use crate::passes;
use crate::validate::{validate, ValidationError};
use crate::{BindingSlot, BindingUse, Target};
use std::fmt;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Frontend(#[from] FrontendError),
    #[error("after pass {pass}: {err}")]
    Validation {
        pass: &'static str,
        err: ValidationError,
    },
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error(transparent)]
    Backend(#[from] crate::backend::BackendError),
    #[error("cannot write dump: {0}")]
    Dump(String),
}

/// Debug output and checks (`FERRITE_DEBUG` flags; the driver parses the variable).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DebugFlags {
    pub spirv: bool,
    pub ir: bool,
    pub opt: bool,
    pub asm: bool,
    pub stats: bool,
    pub validate: bool,
    pub no8: bool,
    pub no16: bool,
    pub no32: bool,
    pub soft64: bool,
    pub passtime: bool,
    pub nocontract: bool,
    pub nouniform: bool,
    pub nopresched: bool,
    pub nobranchopt: bool,
    pub nodeadvalues: bool,
    pub novectorize: bool,
    pub noprivate: bool,
    pub noprivregs: bool,
}

impl DebugFlags {
    /// The flags this crate understands, with one line of help each.
    pub const REGISTRY: &'static [(&'static str, &'static str)] = &[
        ("spirv", "print the SPIR-V input (spirv-dis when installed)"),
        (
            "ir",
            "print the IR after the front end and after the pipeline",
        ),
        ("opt", "print the IR after every pass that changed it"),
        ("asm", "print the final assembly"),
        ("stats", "print shader statistics"),
        (
            "validate",
            "validate the IR between passes, the ISA, and that the listing assembles to the binary \
             (always on in debug builds)",
        ),
        ("no8", "never choose SIMD8"),
        ("no16", "never choose SIMD16"),
        ("no32", "never choose SIMD32"),
        (
            "soft64",
            "lower fp64 to 32-bit integer code even where the target has DF hardware",
        ),
        (
            "passtime",
            "print the time of the front end and of every pass (middle and back end)",
        ),
        (
            "nocontract",
            "never fuse a multiply and an add into a MAD (as if every float op were NoContraction)",
        ),
        (
            "nouniform",
            "compute uniform values per channel instead of once per thread (exec size 1)",
        ),
        (
            "nopresched",
            "never reorder for register pressure before allocation (keep program order)",
        ),
        (
            "nobranchopt",
            "keep the flag moves, small if/else regions and if/break/endif that instruction selection emits",
        ),
        (
            "nodeadvalues",
            "keep loop parameters and results that reach no side effect (skip dead_values)",
        ),
        (
            "novectorize",
            "keep adjacent loads and stores as separate messages (skip vectorize)",
        ),
        (
            "noprivate",
            "keep small private arrays in scratch (skip private_arrays)",
        ),
        (
            "noprivregs",
            "keep private arrays in scratch, never in a register array (backend isel::private)",
        ),
    ];

    /// Parses a comma-separated list; unknown names are returned as errors.
    pub fn parse(s: &str) -> Result<DebugFlags, String> {
        let mut d = DebugFlags::default();
        for name in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            match name {
                "spirv" => d.spirv = true,
                "ir" => d.ir = true,
                "opt" => d.opt = true,
                "asm" => d.asm = true,
                "stats" => d.stats = true,
                "validate" => d.validate = true,
                "no8" => d.no8 = true,
                "no16" => d.no16 = true,
                "no32" => d.no32 = true,
                "soft64" => d.soft64 = true,
                "passtime" => d.passtime = true,
                "nocontract" => d.nocontract = true,
                "nouniform" => d.nouniform = true,
                "nopresched" => d.nopresched = true,
                "nobranchopt" => d.nobranchopt = true,
                "nodeadvalues" => d.nodeadvalues = true,
                "novectorize" => d.novectorize = true,
                "noprivate" => d.noprivate = true,
                "noprivregs" => d.noprivregs = true,
                other => return Err(format!("unknown debug flag '{other}'")),
            }
        }
        Ok(d)
    }
}

/// Everything `vkCreateComputePipelines` knows about the shader.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    pub entry_point: String,
    /// (SpecId, value bytes).
    pub specialization: Vec<(u32, Vec<u8>)>,
    /// set/binding -> binding-table index; empty: consecutive indices in use order.
    pub bindings: Vec<BindingSlot>,
    /// Push-constant range (offset, size) of the pipeline layout.
    pub push_constant_range: (u32, u32),
    pub debug: DebugFlags,
    /// When set, dumps go to files here instead of the log.
    pub dump_dir: Option<std::path::PathBuf>,
    /// Keep the optimized IR text in [`Kernel::ir`].
    pub keep_ir: bool,
    /// The subgroup-size rule of the stage (VK_EXT_subgroup_size_control).
    pub subgroup: crate::backend::SubgroupWidth,
}

/// Time spent per compiler pass, in the order the passes ran: the front end, each middle
/// pass (a pass that runs several times appears several times), IR validation (summed), then
/// per SIMD width tried the back end's passes. Always recorded (two clock reads per pass);
/// `FERRITE_DEBUG=passtime` prints it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassTimes(pub Vec<(String, Duration)>);

impl PassTimes {
    /// Runs `f`, recording its time under `name`.
    pub fn time<T>(&mut self, name: impl Into<String>, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = f();
        self.0.push((name.into(), t.elapsed()));
        r
    }

    /// Adds `d` to the entry `name` (created at the end when missing).
    pub fn add(&mut self, name: &str, d: Duration) {
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some((_, t)) => *t += d,
            None => self.0.push((name.to_string(), d)),
        }
    }

    pub fn total(&self) -> Duration {
        self.0.iter().map(|(_, d)| *d).sum()
    }
}

impl fmt::Display for PassTimes {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (name, d) in &self.0 {
            writeln!(f, "{:>12.3} ms  {name}", d.as_secs_f64() * 1e3)?;
        }
        writeln!(f, "{:>12.3} ms  total", self.total().as_secs_f64() * 1e3)
    }
}

fn dump(opts: &CompileOptions, name: &str, text: &str) -> Result<(), CompileError> {
    match &opts.dump_dir {
        Some(dir) => {
            std::fs::write(dir.join(name), text).map_err(|e| CompileError::Dump(e.to_string()))
        }
        None => {
            log::info!("{name}:\n{text}");
            Ok(())
        }
    }
}

fn spirv_listing(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let tmp = std::env::temp_dir().join(format!("ferrite-{}.spv", std::process::id()));
    if std::fs::write(&tmp, &bytes).is_ok() {
        if let Ok(out) = std::process::Command::new("spirv-dis").arg(&tmp).output() {
            let _ = std::fs::remove_file(&tmp);
            if out.status.success() {
                return String::from_utf8_lossy(&out.stdout).into_owned();
            }
        }
        let _ = std::fs::remove_file(&tmp);
    }
    match crate::specconst::load_words(words) {
        Ok(m) => {
            use rspirv::binary::Disassemble;
            m.disassemble()
        }
        Err(e) => format!("(unparsable: {e})"),
    }
}

/// One pass in the pipeline: changes the function, returns whether anything changed, or why it cannot.
type Pass = (
    &'static str,
    fn(&mut crate::ir::Function) -> Result<bool, String>,
);

/// The middle-end pipeline, in order.
pub const PIPELINE: &[Pass] = &[
    ("vars_to_ssa", |f| Ok(passes::vars_to_ssa(f))),
    ("copy_prop", |f| Ok(passes::opt_copy_prop(f))),
    ("dead_cf", |f| Ok(passes::opt_dead_cf(f))),
    ("const_fold", |f| Ok(passes::opt_const_fold(f))),
    ("algebraic", |f| Ok(passes::opt_algebraic(f))),
    ("copy_prop", |f| Ok(passes::opt_copy_prop(f))),
    ("dead_cf", |f| Ok(passes::opt_dead_cf(f))),
    ("cse", |f| Ok(passes::opt_cse(f))),
    // After CSE, which makes a condition computed twice one value.
    ("thread_ifs", |f| Ok(passes::opt_thread_ifs(f))),
    ("dce", |f| Ok(passes::opt_dce(f))),
    // Before unrolling: a dead loop-carried value would be copied into every iteration.
    ("dead_values", |f| Ok(passes::opt_dead_values(f))),
    ("unroll", |f| Ok(passes::opt_unroll(f))),
    ("const_fold", |f| Ok(passes::opt_const_fold(f))),
    ("algebraic", |f| Ok(passes::opt_algebraic(f))),
    ("copy_prop", |f| Ok(passes::opt_copy_prop(f))),
    ("dead_cf", |f| Ok(passes::opt_dead_cf(f))),
    ("cse", |f| Ok(passes::opt_cse(f))),
    ("thread_ifs", |f| Ok(passes::opt_thread_ifs(f))),
    // After unrolling and folding, which make most private-array offsets constant.
    ("private_arrays", |f| Ok(passes::opt_private_arrays(f))),
    // Unrolled loops over descriptor arrays index them with constants.
    ("const_desc_index", |f| Ok(passes::opt_const_desc_index(f))),
    ("load_cse", |f| Ok(passes::opt_load_cse(f))),
    ("dce", |f| Ok(passes::opt_dce(f))),
    ("lower_sat_add", |f| Ok(passes::lower_sat_add(f))),
    ("lower_narrow", |f| Ok(passes::lower_narrow(f))),
    ("const_fold", |f| Ok(passes::opt_const_fold(f))),
    ("cse", |f| Ok(passes::opt_cse(f))),
    ("lower_int_div", |f| Ok(passes::lower_int_div(f))),
    ("scalarize", |f| Ok(passes::scalarize(f))),
    // Gated: see GATED.
    ("soft_fp64", passes::soft_fp64),
    ("copy_prop", |f| Ok(passes::opt_copy_prop(f))),
    ("const_fold", |f| Ok(passes::opt_const_fold(f))),
    ("algebraic", |f| Ok(passes::opt_algebraic(f))),
    ("copy_prop", |f| Ok(passes::opt_copy_prop(f))),
    ("cse", |f| Ok(passes::opt_cse(f))),
    ("load_cse", |f| Ok(passes::opt_load_cse(f))),
    // After load CSE (a repeated load is one load before it joins a vector).
    ("vectorize", |f| Ok(passes::opt_vectorize(f))),
    ("fuse_mad", |f| Ok(passes::opt_fuse_mad(f))),
    ("dce", |f| Ok(passes::opt_dce(f))),
    // Scalarized vectors: a loop-carried component nobody reads.
    ("dead_values", |f| Ok(passes::opt_dead_values(f))),
    ("lower_bools", |f| Ok(passes::lower_bools(f))),
    ("dce", |f| Ok(passes::opt_dce(f))),
];

/// Passes of [`PIPELINE`] that run only when their condition holds.
type Gate = (&'static str, fn(&Target, &DebugFlags) -> bool);
pub const GATED: &[Gate] = &[
    // Software fp64 where the target has no DF hardware, or when forced.
    ("soft_fp64", |t, d| uses_soft_fp64(t, d)),
    ("fuse_mad", |_, d| !d.nocontract),
    ("dead_values", |_, d| !d.nodeadvalues),
    ("vectorize", |_, d| !d.novectorize),
    ("private_arrays", |_, d| !d.noprivate),
];

/// Doubles go through the software lowering: the target has no DF hardware, or forced.
pub fn uses_soft_fp64(target: &Target, debug: &DebugFlags) -> bool {
    debug.soft64 || !target.has_fp64
}

/// Runs the pipeline for a Gen9 target ([`run_pipeline_for`]).
pub fn run_pipeline(shader: &mut Shader, opts: &CompileOptions) -> Result<(), CompileError> {
    run_pipeline_for(shader, &Target::gen9(), opts)
}

/// Runs the pipeline (the [`GATED`] passes when their condition holds for `target` and the
/// debug flags); validates after every pass when `check` is set.
pub fn run_pipeline_for(
    shader: &mut Shader,
    target: &Target,
    opts: &CompileOptions,
) -> Result<(), CompileError> {
    run_pipeline_timed(shader, target, opts, &mut PassTimes::default())
}

/// [`run_pipeline_for`], recording each pass's time in `times`.
pub fn run_pipeline_timed(
    shader: &mut Shader,
    target: &Target,
    opts: &CompileOptions,
    times: &mut PassTimes,
) -> Result<(), CompileError> {
    let check = cfg!(debug_assertions) || opts.debug.validate;
    for (name, pass) in PIPELINE {
        if let Some((_, when)) = GATED.iter().find(|(n, _)| n == name) {
            if !when(target, &opts.debug) {
                continue;
            }
        }
        let changed = times
            .time(*name, || pass(&mut shader.func))
            .map_err(|e| CompileError::Unsupported(format!("{name}: {e}")))?;
        if check {
            let t = Instant::now();
            validate(&shader.func).map_err(|err| CompileError::Validation { pass: name, err })?;
            times.add("ir validation", t.elapsed());
        }
        if changed && opts.debug.opt {
            dump(opts, &format!("opt-{name}.ir"), &shader.to_string())?;
        }
    }
    Ok(())
}

/// Front end + middle end: SPIR-V to optimized IR.
pub fn compile_to_ir(
    words: &[u32],
    target: &Target,
    opts: &CompileOptions,
) -> Result<(Shader, Vec<BindingUse>), CompileError> {
    compile_to_ir_timed(words, target, opts, &mut PassTimes::default())
}

/// [`compile_to_ir`], recording the front end's and each pass's time in `times`.
pub fn compile_to_ir_timed(
    words: &[u32],
    target: &Target,
    opts: &CompileOptions,
    times: &mut PassTimes,
) -> Result<(Shader, Vec<BindingUse>), CompileError> {
    if opts.debug.spirv {
        dump(opts, "input.spvasm", &spirv_listing(words))?;
    }
    let out = times.time("frontend", || {
        frontend::translate(&FrontendInput {
            words,
            entry: &opts.entry_point,
            specialization: &opts.specialization,
            bindings: &opts.bindings,
            target,
        })
    })?;
    let mut shader = out.shader;
    let support = crate::float_controls::support(target, uses_soft_fp64(target, &opts.debug));
    crate::float_controls::check(&shader.func.float_controls, &support)
        .map_err(CompileError::Unsupported)?;
    if cfg!(debug_assertions) || opts.debug.validate {
        let t = Instant::now();
        validate(&shader.func).map_err(|err| CompileError::Validation {
            pass: "frontend",
            err,
        })?;
        times.add("ir validation", t.elapsed());
    }
    if opts.debug.ir {
        dump(opts, "frontend.ir", &shader.to_string())?;
    }
    if let Some(n) = opts.subgroup.fixed_size(&target.hw) {
        crate::passes::fold_subgroup_size(&mut shader.func, n);
    }
    run_pipeline_timed(&mut shader, target, opts, times)?;
    if opts.debug.ir {
        dump(opts, "final.ir", &shader.to_string())?;
    }
    Ok((shader, out.bindings))
}

/// Compiles a compute shader: front end, the middle passes, then the Gen9 back end
/// ([`crate::backend`]), which picks the SIMD width among `target.simd_widths` minus the
/// `no8/no16/no32` debug flags.
pub fn compile(
    words: &[u32],
    target: &Target,
    opts: &CompileOptions,
) -> Result<Kernel, CompileError> {
    let start = Instant::now();
    let mut times = PassTimes::default();
    let (shader, bindings) = compile_to_ir_timed(words, target, opts, &mut times)?;
    if opts.debug.stats {
        dump(
            opts,
            "stats.txt",
            &format!(
                "IR instructions: {}\nfront end + passes: {:?}\n",
                shader.func.instr_count(),
                start.elapsed()
            ),
        )?;
    }
    let mut bopts = crate::backend::BackendOptions::new(target, &opts.debug);
    bopts.subgroup = opts.subgroup;
    let mut k = crate::backend::compile_binary(&shader, &bopts)?;
    if opts.keep_ir || opts.debug.asm {
        k = crate::backend::with_asm(k)?;
    }
    k.stats.compile_time_us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
    k.bindings = bindings;
    if opts.keep_ir {
        k.ir = shader.to_string();
    }
    if opts.debug.asm {
        dump(opts, "kernel.asm", &k.asm)?;
    }
    if opts.debug.stats {
        dump(opts, "kernel-stats.txt", &k.to_string())?;
    }
    times.0.extend(k.stats.pass_times.0.iter().cloned());
    if opts.debug.passtime {
        dump(opts, "passtime.txt", &times.to_string())?;
    }
    k.stats.pass_times = times;
    Ok(k)
}
