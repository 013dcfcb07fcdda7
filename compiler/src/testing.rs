//! SPIR-V for tests, benchmarks, fuzz targets and tools: from GLSL (through
//! `glslangValidator`) and from raw bytes, and the options robustness tests compile with.
//! One copy, used by the compiler's tests and fuzz targets, the end-to-end tests and the
//! benchmarks.

use crate::pipeline::{CompileError, CompileOptions, DebugFlags};
use crate::Target;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The SPIR-V words of little-endian `bytes` (a trailing partial word is dropped).
pub fn spirv_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Options for robustness tests and fuzzing: entry point `main`, the IR validated after every
/// pass (so an invalid pass result is a `CompileError::Validation`, not a later panic).
pub fn validating_options() -> CompileOptions {
    CompileOptions {
        entry_point: "main".into(),
        debug: DebugFlags {
            validate: true,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The fuzz targets' one check: `compile` (the whole pipeline, or its part up to the IR) on
/// the SPIR-V words of `data` for Gen9, with [`validating_options`], gives a result or an
/// error. A pass that leaves invalid IR panics with the pass's name, which the fuzzer reports;
/// any other panic inside `compile` is reported the same way.
pub fn check_fuzz_input<T>(
    data: &[u8],
    compile: impl FnOnce(&[u32], &Target, &CompileOptions) -> Result<T, CompileError>,
) {
    if let Err(CompileError::Validation { pass, err }) =
        compile(&spirv_words(data), &Target::gen9(), &validating_options())
    {
        panic!("IR invalid after {pass}: {err}");
    }
}

/// Why GLSL did not become SPIR-V.
#[derive(Debug, thiserror::Error)]
pub enum GlslError {
    #[error("glslangValidator not installed ({0})")]
    NotInstalled(std::io::Error),
    #[error("glslangValidator rejected {name}:\n{log}")]
    Rejected { name: String, log: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Compiles the GLSL compute shader `src` with `glslangValidator -V --target-env env`
/// (e.g. "vulkan1.0", "vulkan1.1"). `name` names the files (in a directory of their own,
/// removed afterwards) and the messages.
pub fn glsl_to_spirv(name: &str, src: &str, env: &str) -> Result<Vec<u32>, GlslError> {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ferrite-glsl-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let input = dir.join(format!("{name}.comp"));
    let output = dir.join(format!("{name}.spv"));
    std::fs::write(&input, src)?;
    let result = Command::new("glslangValidator")
        .args(["-V", "--target-env", env, "-o"])
        .arg(&output)
        .arg(&input)
        .output();
    let words = match result {
        Err(e) => Err(GlslError::NotInstalled(e)),
        Ok(out) if !out.status.success() => Err(GlslError::Rejected {
            name: name.to_string(),
            log: String::from_utf8_lossy(&out.stdout).into_owned(),
        }),
        Ok(_) => std::fs::read(&output)
            .map(|b| spirv_words(&b))
            .map_err(GlslError::from),
    };
    let _ = std::fs::remove_dir_all(&dir);
    words
}

/// [`glsl_to_spirv`] for tests: None (with a message) when glslangValidator is not
/// installed, so the test can skip; a panic with glslangValidator's log when it rejects the
/// source.
pub fn glsl_for_test(name: &str, src: &str, env: &str) -> Option<Vec<u32>> {
    match glsl_to_spirv(name, src, env) {
        Ok(w) => Some(w),
        Err(GlslError::NotInstalled(_)) => {
            eprintln!("glslangValidator not installed: skipping {name}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Deterministic pseudo-random numbers for the compiler's own tests (xorshift, shifts
/// 13/7/17), so a failure can be replayed from its seed.
#[cfg(test)]
pub(crate) struct Rng(pub u64);

#[cfg(test)]
impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number below `m`.
    pub fn next(&mut self, m: u32) -> u32 {
        (self.next_u64() % u64::from(m)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spirv_words_are_little_endian_and_drop_a_partial_word() {
        assert_eq!(
            spirv_words(&[0x03, 0x02, 0x23, 0x07, 1, 0, 0, 0, 9]),
            vec![0x0723_0203, 1]
        );
    }

    #[test]
    fn fuzz_check_accepts_an_error_that_is_not_invalid_ir() {
        check_fuzz_input(&[1, 2, 3, 4, 5, 6, 7, 8], crate::pipeline::compile_to_ir);
    }

    #[test]
    #[should_panic(expected = "IR invalid after ssa: invalid IR: a use before its definition")]
    fn fuzz_check_panics_on_invalid_ir() {
        check_fuzz_input(&[], |_, _, opts| -> Result<(), CompileError> {
            assert!(opts.debug.validate);
            Err(CompileError::Validation {
                pass: "ssa",
                err: crate::validate::ValidationError("a use before its definition".into()),
            })
        });
    }
}
