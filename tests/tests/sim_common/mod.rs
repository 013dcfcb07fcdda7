//! The harness shared by the back-end tests on the simulated GPU (backend_sim, backend_wide,
//! narrow_sim): GLSL through glslangValidator, the compiler at a forced SIMD width, and one
//! dispatch on the simulated i915 per docs/dispatch-contract.md.
#![allow(dead_code)] // each test binary uses its own subset

#[path = "../../../kernel-iface/tests/gpu_common/mod.rs"]
mod gpu_common;

pub use ferrite_compiler::backend::{self, BackendOptions, Kernel};
pub use ferrite_compiler::pipeline::{compile_to_ir, CompileOptions};
pub use ferrite_compiler::{BindingSlot, Target};
pub use gpu_common::*;
use std::process::Command;

/// GLSL to SPIR-V words with glslangValidator for Vulkan 1.1; None (and a note) when it is not
/// installed.
pub fn glsl(name: &str, src: &str) -> Option<Vec<u32>> {
    glsl_env(name, src, "vulkan1.1")
}

/// As [`glsl`], for the given `--target-env`.
pub fn glsl_env(name: &str, src: &str, env: &str) -> Option<Vec<u32>> {
    let dir = std::env::temp_dir().join(format!("ferrite-simtest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join(format!("{name}.comp"));
    let output = dir.join(format!("{name}.spv"));
    std::fs::write(&input, src).unwrap();
    let out = match Command::new("glslangValidator")
        .args(["-V", "--target-env", env, "-o"])
        .arg(&output)
        .arg(&input)
        .output()
    {
        Ok(o) => o,
        Err(_) => {
            eprintln!("glslangValidator not installed: skipping {name}");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let bytes = std::fs::read(&output).unwrap();
    Some(
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    )
}

/// Compiles `src` at exactly `simd`; binding b of set 0 goes to BTI b + 1 (the harness
/// binds its buffers at BTI 1, 2, ...).
pub fn kernel(name: &str, src: &str, simd: u32) -> Option<Kernel> {
    kernel_env(name, src, simd, "vulkan1.1")
}

/// As [`kernel`], with GLSL compiled for the given `--target-env`.
pub fn kernel_env(name: &str, src: &str, simd: u32, env: &str) -> Option<Kernel> {
    let words = glsl_env(name, src, env)?;
    let copts = CompileOptions {
        entry_point: "main".into(),
        bindings: (0..4)
            .map(|b| BindingSlot {
                set: 0,
                binding: b,
                bti: b + 1,
            })
            .collect(),
        ..Default::default()
    };
    let (shader, _) = compile_to_ir(&words, &Target::gen9(), &copts).unwrap();
    let opts = BackendOptions {
        no8: simd != 8,
        no16: simd != 16,
        no32: simd != 32,
        validate: true,
        ..BackendOptions::gen9()
    };
    let k = backend::compile(&shader, &opts).unwrap_or_else(|e| panic!("{name}: {e}\n{shader}"));
    assert_eq!(k.simd, simd);
    Some(k)
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
    assert_eq!(k.push_regs, 0, "the harness has one cross-thread register");
    let d = Dispatch {
        asm: EOT,
        simd: k.simd,
        group_size: k.local_size.iter().product(),
        groups,
        slm_bytes: k.slm_size,
        barrier: k.uses_barrier,
        // The cross-thread driver register: num_workgroups, base_workgroup_id = 0.
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
