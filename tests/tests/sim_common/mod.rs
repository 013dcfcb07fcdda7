//! The harness shared by the back-end tests on the simulated GPU (backend_sim, backend_wide,
//! narrow_sim, precision_sim, soft_fp64_sim): GLSL through glslangValidator, the compiler at a forced SIMD width, and one
//! dispatch on the simulated i915 per docs/dispatch-contract.md.
#![allow(dead_code)] // each test binary uses its own subset

#[path = "../../../kernel-iface/tests/gpu_common/mod.rs"]
mod gpu_common;

pub use ferrite_compiler::backend::{self, BackendOptions, Kernel, SubgroupWidth};
pub use ferrite_compiler::pipeline::{compile_to_ir, CompileOptions};
pub use ferrite_compiler::{BindingSlot, DebugFlags, Target};
pub use gpu_common::*;
use std::process::Command;
use std::sync::atomic::Ordering;

/// GLSL to SPIR-V words with glslangValidator for Vulkan 1.1; None (and a note) when it is not
/// installed.
pub fn glsl(name: &str, src: &str) -> Option<Vec<u32>> {
    glsl_env(name, src, "vulkan1.1")
}

/// As [`glsl`], for the given `--target-env`.
pub fn glsl_env(name: &str, src: &str, env: &str) -> Option<Vec<u32>> {
    ferrite_compiler::testing::glsl_for_test(name, src, env)
}

/// How [`kernel_with`] builds a test kernel.
#[derive(Clone)]
pub struct Build<'a> {
    /// glslangValidator's `--target-env`.
    pub env: &'a str,
    /// Bindings 0..n of set 0, binding b at BTI b + 1 (the harness binds its buffers at
    /// BTI 1, 2, ...).
    pub bindings: u32,
    /// Software fp64 forced (`FERRITE_DEBUG=soft64`); the harness then checks that no f64
    /// value is left in the IR.
    pub soft64: bool,
    pub target: Target,
    /// No scheduling for register pressure before allocation (`FERRITE_DEBUG=nopresched`).
    pub no_pressure_sched: bool,
    /// Private memory in scratch, never in a register array (`FERRITE_DEBUG=noprivregs`).
    pub no_private_regs: bool,
    /// The stage's subgroup-size rule (the default: `SubgroupSize` is the reported 32 at
    /// every width).
    pub subgroup: SubgroupWidth,
}

impl Default for Build<'_> {
    fn default() -> Self {
        Build {
            env: "vulkan1.1",
            bindings: 4,
            soft64: false,
            target: Target::gen9(),
            no_pressure_sched: false,
            no_private_regs: false,
            subgroup: SubgroupWidth::Reported,
        }
    }
}

/// Compiles `src` at exactly `simd` with the default [`Build`].
pub fn kernel(name: &str, src: &str, simd: u32) -> Option<Kernel> {
    kernel_with(name, src, simd, &Build::default())
}

/// As [`kernel`], with GLSL compiled for the given `--target-env`.
pub fn kernel_env(name: &str, src: &str, simd: u32, env: &str) -> Option<Kernel> {
    kernel_with(
        name,
        src,
        simd,
        &Build {
            env,
            ..Build::default()
        },
    )
}

/// Compiles `src` at exactly `simd` as `build` says, with the PRM validator on every
/// instruction; None (and a note) when glslangValidator is not installed.
pub fn kernel_with(name: &str, src: &str, simd: u32, build: &Build) -> Option<Kernel> {
    let words = glsl_env(name, src, build.env)?;
    Some(kernel_words(name, &words, simd, build))
}

/// SPIR-V assembly to words with spirv-as (and checked by spirv-val) for `build.env`;
/// None (and a note) when the tools are not installed.
pub fn spirv_as(name: &str, text: &str, env: &str) -> Option<Vec<u32>> {
    let dir = ferrite_tests::fresh_temp_dir("ferrite-simtest").unwrap();
    let input = dir.join(format!("{name}.spvasm"));
    let output = dir.join(format!("{name}.spv"));
    std::fs::write(&input, text).unwrap();
    let Ok(out) = Command::new("spirv-as")
        .args(["--target-env", env, "-o"])
        .arg(&output)
        .arg(&input)
        .output()
    else {
        eprintln!("spirv-as not installed: skipping {name}");
        return None;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Ok(val) = Command::new("spirv-val")
        .args(["--target-env", env])
        .arg(&output)
        .output()
    {
        assert!(
            val.status.success(),
            "{}",
            String::from_utf8_lossy(&val.stderr)
        );
    }
    let words = ferrite_compiler::testing::spirv_words(&std::fs::read(&output).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
    Some(words)
}

/// As [`kernel_with`], from SPIR-V words.
pub fn kernel_words(name: &str, words: &[u32], simd: u32, build: &Build) -> Kernel {
    let copts = CompileOptions {
        entry_point: "main".into(),
        bindings: (0..build.bindings)
            .map(|b| BindingSlot {
                set: 0,
                binding: b,
                bti: b + 1,
                count: 1,
            })
            .collect(),
        debug: DebugFlags {
            soft64: build.soft64,
            ..Default::default()
        },
        // The middle end folds `SubgroupSize` where the rule fixes it.
        subgroup: build.subgroup,
        ..Default::default()
    };
    let (shader, _) = compile_to_ir(words, &build.target, &copts)
        .unwrap_or_else(|e| panic!("{name}: front end / passes: {e}"));
    if build.soft64 {
        let text = shader.to_string();
        assert!(!text.contains(":f64"), "{name}: f64 after soft64\n{text}");
    }
    let opts = BackendOptions {
        no_pressure_sched: build.no_pressure_sched,
        no_private_regs: build.no_private_regs,
        subgroup: build.subgroup,
        ..options_at(simd)
    };
    let k = backend::compile(&shader, &opts).unwrap_or_else(|e| panic!("{name}: {e}\n{shader}"));
    assert_eq!(k.simd, simd);
    k
}

/// Back-end options that compile at exactly `simd` channels, with the PRM validator on.
pub fn options_at(simd: u32) -> BackendOptions {
    BackendOptions::gen9_at(simd)
}

/// One dispatch of `k` over `groups` with one buffer per entry of `init` (binding b is
/// `init[b]`, sized and filled by it; pass zeros for outputs) and per-thread scratch when
/// the kernel spills; returns every buffer's words afterwards.
pub fn run_buffers(k: &Kernel, groups: [u32; 3], init: &[Vec<u32>]) -> Vec<Vec<u32>> {
    run_buffers_counted(k, groups, init).0
}

/// As [`run_buffers`], also returning the EU instructions the simulator executed (the
/// simulator's measure of work; it has no cycle model).
pub fn run_buffers_counted(
    k: &Kernel,
    groups: [u32; 3],
    init: &[Vec<u32>],
) -> (Vec<Vec<u32>>, u64) {
    run_buffers_push(k, groups, init, &[])
}

/// As [`run_buffers_counted`], with the client push constants `push` (dwords from push
/// offset 0) in the CURBE registers before the driver register.
pub fn run_buffers_push(
    k: &Kernel,
    groups: [u32; 3],
    init: &[Vec<u32>],
    push: &[u32],
) -> (Vec<Vec<u32>>, u64) {
    let mut sizes: Vec<u64> = init.iter().map(|v| v.len() as u64 * 4).collect();
    // Scratch after the buffers: a generous bound on the simulator's threads in flight.
    if k.scratch_size > 0 {
        sizes.push(168 * u64::from(k.scratch_size));
    }
    let (g, data) = compute_setup(&sizes);
    for (bo, words) in data.iter().zip(init) {
        g.write_u32s(*bo, 0, words);
    }
    let bufs: Vec<(usize, u64)> = data.iter().zip(&sizes).map(|(d, s)| (*d, *s)).collect();
    // compute_setup puts buffer i at 0x100_0000 * (i + 1).
    let scratch = 0x100_0000 * (init.len() as u64 + 1);
    let before = g.sim.stats().instructions.load(Ordering::Relaxed);
    dispatch_push(&g, k, groups, &bufs[..init.len()], scratch, push);
    let executed = g.sim.stats().instructions.load(Ordering::Relaxed) - before;
    let out = data
        .iter()
        .zip(init)
        .map(|(bo, words)| g.read_u32s(*bo, 0, words.len()))
        .collect();
    (out, executed)
}

/// The usual per-op test: compiles `src` at SIMD8, 16 and 32 (as `build` says), runs each
/// kernel with [`run_buffers`] and hands `check` the width, the kernel and the buffers
/// after the dispatch. Does nothing when glslangValidator is not installed.
pub fn at_each_simd(
    name: &str,
    src: &str,
    build: &Build,
    groups: [u32; 3],
    init: &[Vec<u32>],
    check: impl FnMut(u32, &Kernel, &[Vec<u32>]),
) {
    at_simds(&[8, 16, 32], name, src, build, groups, init, check)
}

/// As [`at_each_simd`], at the given widths.
pub fn at_simds(
    simds: &[u32],
    name: &str,
    src: &str,
    build: &Build,
    groups: [u32; 3],
    init: &[Vec<u32>],
    mut check: impl FnMut(u32, &Kernel, &[Vec<u32>]),
) {
    at_simds_counted(simds, name, src, build, groups, init, |simd, k, out, _| {
        check(simd, k, out)
    })
}

/// As [`at_simds`], also handing `check` the EU instructions the dispatch executed.
pub fn at_simds_counted(
    simds: &[u32],
    name: &str,
    src: &str,
    build: &Build,
    groups: [u32; 3],
    init: &[Vec<u32>],
    mut check: impl FnMut(u32, &Kernel, &[Vec<u32>], u64),
) {
    for &simd in simds {
        let Some(k) = kernel_with(name, src, simd, build) else {
            return;
        };
        let (out, executed) = run_buffers_counted(&k, groups, init);
        check(simd, &k, &out, executed);
    }
}

/// A kernel's cost for `--nocapture` output: its instructions and the EU instructions one
/// thread executed on average when `lanes` invocations ran.
pub fn cost(k: &Kernel, executed: u64, lanes: u64) -> String {
    format!(
        "{} instructions, {} executed per thread",
        k.asm.lines().filter(|l| l.starts_with("0x")).count(),
        executed / (lanes / u64::from(k.simd)).max(1)
    )
}

/// Doubles equal bit for bit, or both NaN (any payload).
pub fn same_f64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// Asserts `got` equals `want` bit for bit (or both NaN); the message is `ctx` (width,
/// lane, inputs) and both values with their bits.
pub fn expect_f64(got: f64, want: f64, ctx: std::fmt::Arguments) {
    assert!(
        same_f64(got, want),
        "{ctx}: got {got:e} ({:#x}) want {want:e} ({:#x})",
        got.to_bits(),
        want.to_bits()
    );
}

/// The per-element comparison of the per-op tests: slot k of element `i` must be
/// `want[k]`; a failure names the width, the element, the slot, the inputs, the expected
/// and the actual value.
pub fn expect_slots<T: PartialEq + std::fmt::Debug>(
    simd: u32,
    i: usize,
    what: &str,
    inputs: std::fmt::Arguments,
    want: &[T],
    got: impl Fn(usize) -> T,
) {
    for (k, w) in want.iter().enumerate() {
        let g = got(k);
        assert!(
            g == *w,
            "SIMD{simd} element {i} {what} {k}: {inputs}: got {g:?} want {w:?}"
        );
    }
}

/// Doubles as little-endian dword pairs (a buffer of `double`/`int64_t`).
pub fn u64_words(v: &[u64]) -> Vec<u32> {
    v.iter()
        .flat_map(|x| [*x as u32, (x >> 32) as u32])
        .collect()
}

/// The f64 values of `v` as dword pairs.
pub fn f64_words(v: &[f64]) -> Vec<u32> {
    u64_words(&v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
}

/// Dword pairs back to 64-bit values.
pub fn words_u64(w: &[u32]) -> Vec<u64> {
    w.chunks(2)
        .map(|c| u64::from(c[0]) | u64::from(c[1]) << 32)
        .collect()
}

/// Dword pairs back to f64 values.
pub fn words_f64(w: &[u32]) -> Vec<f64> {
    words_u64(w).into_iter().map(f64::from_bits).collect()
}

/// Dispatches `k` over `groups` with the buffers; returns nothing (read the BOs after).
pub fn dispatch(g: &Gpu, k: &Kernel, groups: [u32; 3], buffers: &[(usize, u64)]) {
    dispatch_scratch(g, k, groups, buffers, 0)
}

/// As [`dispatch`], with per-thread scratch at GPU address `scratch` (General State Base
/// is 0 in the harness) when the kernel spills.
pub fn dispatch_scratch(
    g: &Gpu,
    k: &Kernel,
    groups: [u32; 3],
    buffers: &[(usize, u64)],
    scratch: u64,
) {
    dispatch_push(g, k, groups, buffers, scratch, &[])
}

/// As [`dispatch_scratch`], with the client push constants `push` (dwords from push
/// offset 0) in the CURBE registers g1.. before the driver register.
pub fn dispatch_push(
    g: &Gpu,
    k: &Kernel,
    groups: [u32; 3],
    buffers: &[(usize, u64)],
    scratch: u64,
    push: &[u32],
) {
    assert_eq!(
        k.layout.push_regs as usize,
        push.len().div_ceil(8),
        "push registers of the kernel vs push dwords given"
    );
    assert!(
        k.layout.push_bti.is_none(),
        "the harness has no push-constant surface"
    );
    let d = Dispatch {
        asm: EOT,
        simd: k.simd,
        group_size: k.local_size.iter().product(),
        groups,
        slm_bytes: k.slm_size,
        barrier: k.uses_barrier,
        // The cross-thread driver register: num_workgroups, base_workgroup_id = 0.
        client_push: push,
        push: [groups[0], groups[1], groups[2], 0, 0, 0, 0, 0],
        buffers,
        scratch: (k.scratch_size > 0)
            .then(|| (scratch, u64::from(k.scratch_size.trailing_zeros() - 10))),
        ..Default::default()
    };
    build_dispatch(g, &d, KERNEL_BO, STATE_BO, BATCH_BO);
    g.write(KERNEL_BO, 0, &k.binary);
    let out = g.submit(BATCH_BO).unwrap();
    assert_eq!(out, Outcome::Ok, "{}", k.asm);
}
