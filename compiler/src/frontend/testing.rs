//! Test helper of the front end's unit tests: a SPIR-V assembly snippet (everything after a
//! fixed preamble) assembled with `spirv-as`, translated, and its IR compared as text with the
//! expected IR (parsed and printed again, so indentation does not matter).
//!
//! The preamble declares the GLCompute entry point `%main` (local size 1x1x1), imports
//! GLSL.std.450 as `%glsl` and declares the types most snippets need: `%void`, `%fn_void`,
//! `%bool`, `%u32`, `%i32`, `%f32`, `%v2f32`, `%v3u32`, `%v4f32`. A snippet holds its extra
//! capabilities, its decorations, then its own types, constants, variables and `%main`'s
//! body; the capabilities and decorations are moved to where a module has them.

use super::{translate, FrontendError, FrontendInput};
use crate::Target;
use std::process::Command;

const PREAMBLE: &str = "
OpCapability Shader
%glsl = OpExtInstImport \"GLSL.std.450\"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main \"main\"
OpExecutionMode %main LocalSize 1 1 1
";

const TYPES: &str = "
%void = OpTypeVoid
%fn_void = OpTypeFunction %void
%bool = OpTypeBool
%u32 = OpTypeInt 32 0
%i32 = OpTypeInt 32 1
%f32 = OpTypeFloat 32
%v2f32 = OpTypeVector %f32 2
%v3u32 = OpTypeVector %u32 3
%v4f32 = OpTypeVector %f32 4
";

/// Assembles `text` with spirv-as for SPIR-V 1.0; None (and a note naming the test) when
/// spirv-as is not installed.
pub(super) fn spirv_as(test: &str, text: &str) -> Option<Vec<u32>> {
    let dir = std::env::temp_dir().join(format!(
        "ferrite-frontend-test-{}-{test}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.spvasm");
    let output = dir.join("out.spv");
    std::fs::write(&input, text).unwrap();
    let Ok(out) = Command::new("spirv-as")
        .args(["--target-env", "spv1.0", "-o"])
        .arg(&output)
        .arg(&input)
        .output()
    else {
        eprintln!("spirv-as not installed (package spirv-tools): skipping {test}");
        let _ = std::fs::remove_dir_all(&dir);
        return None;
    };
    assert!(
        out.status.success(),
        "spirv-as failed on {test}:\n{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&output).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// The module around a snippet: its OpCapability lines go first, its decorations after the
/// entry point (they must precede the preamble's types), and the rest after the types.
pub(super) fn module_text(snippet: &str) -> String {
    let lines: Vec<&str> = snippet
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let pick = |f: &dyn Fn(&str) -> bool| -> String {
        lines
            .iter()
            .filter(|l| f(l))
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    };
    // Capabilities and extensions go first; a snippet using physical pointers gets the
    // PhysicalStorageBuffer64 addressing model.
    let is_cap = |l: &str| l.starts_with("OpCapability") || l.starts_with("OpExtension");
    let is_deco = |l: &str| l.starts_with("OpDecorate") || l.starts_with("OpMemberDecorate");
    let preamble = if snippet.contains("PhysicalStorageBufferAddresses") {
        PREAMBLE.replace(
            "OpMemoryModel Logical",
            "OpMemoryModel PhysicalStorageBuffer64",
        )
    } else {
        PREAMBLE.to_string()
    };
    format!(
        "{}\n{preamble}{}\n{TYPES}{}\n",
        pick(&is_cap),
        pick(&is_deco),
        pick(&|l| !is_cap(l) && !is_deco(l))
    )
}

/// Translates a snippet with the Gen9 target and the given specialization values; None when
/// spirv-as is missing.
pub(super) fn translate_snippet(
    test: &str,
    snippet: &str,
    specialization: &[(u32, Vec<u8>)],
) -> Option<Result<String, FrontendError>> {
    let words = spirv_as(test, &module_text(snippet))?;
    let target = Target::gen9();
    let out = translate(&FrontendInput {
        words: &words,
        entry: "main",
        specialization,
        bindings: &[],
        target: &target,
    });
    Some(out.map(|o| o.shader.to_string()))
}

/// Checks that `snippet` translates to `expected` (a whole shader: header line and `fn main`).
pub(super) fn check_ir(test: &str, snippet: &str, expected: &str) {
    check_ir_specialized(test, snippet, &[], expected);
}

/// [`check_ir`] with specialization values (SpecId, little-endian bytes).
pub(super) fn check_ir_specialized(
    test: &str,
    snippet: &str,
    specialization: &[(u32, Vec<u8>)],
    expected: &str,
) {
    let Some(actual) = translate_snippet(test, snippet, specialization) else {
        return;
    };
    let actual = actual.unwrap_or_else(|e| panic!("{test}: {e}"));
    let want = crate::parse::parse_shader(expected)
        .unwrap_or_else(|e| panic!("{test}: expected IR does not parse: {e}\n--- actual\n{actual}"))
        .to_string();
    assert_eq!(
        actual, want,
        "{test}: IR differs\n--- actual\n{actual}\n--- expected\n{want}"
    );
}

/// Checks that `snippet` is rejected with an error whose message contains `expected` (ids
/// are numbered by spirv-as, so messages naming one are matched in part).
pub(super) fn check_err(test: &str, snippet: &str, expected: &str) {
    let Some(actual) = translate_snippet(test, snippet, &[]) else {
        return;
    };
    match actual {
        Ok(ir) => panic!("{test}: expected an error with '{expected}', got IR\n{ir}"),
        Err(e) => assert!(
            e.to_string().contains(expected),
            "{test}: expected an error with '{expected}', got '{e}'"
        ),
    }
}
