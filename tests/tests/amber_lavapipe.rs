//! Runs the whole AmberScript corpus (tests/amber/) on lavapipe through the ferrite-amber
//! binary: every file must pass, or be skipped because it is marked `# ferrite-only`, or be
//! listed in tests/amber/lavapipe-known-failures.txt (a lavapipe defect on some host CPUs).
//! Skips (with a printed reason) when lavapipe or glslangValidator is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

const LAVAPIPE_MANIFESTS: &[&str] = &[
    "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json",
    "/usr/share/vulkan/icd.d/lvp_icd.aarch64.json",
];

fn lavapipe() -> Option<&'static str> {
    LAVAPIPE_MANIFESTS
        .iter()
        .copied()
        .find(|m| Path::new(m).exists())
}

fn have_glslang() -> bool {
    Command::new("glslangValidator")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("amber")
}

/// Runs ferrite-amber on lavapipe with `args`; returns (success, stdout).
fn run(manifest: &str, args: &[&Path]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ferrite-amber"))
        .args(args)
        .env("VK_DRIVER_FILES", manifest)
        .env("VK_ICD_FILENAMES", manifest)
        .output()
        .expect("ferrite-amber runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprint!("{stderr}");
    // With VK_LAYER_KHRONOS_validation enabled by the environment, the run must be clean.
    for text in [&stdout, &stderr] {
        assert!(
            !text.contains("Validation Error") && !text.contains("Validation Warning"),
            "validation messages:\n{text}"
        );
    }
    (out.status.success(), stdout)
}

fn requirements() -> Option<&'static str> {
    let Some(m) = lavapipe() else {
        println!(
            "SKIP: no lavapipe manifest ({}); install mesa-vulkan-drivers",
            LAVAPIPE_MANIFESTS.join(", ")
        );
        return None;
    };
    if !have_glslang() {
        println!("SKIP: glslangValidator not found (install glslang-tools)");
        return None;
    }
    Some(m)
}

#[test]
fn corpus_passes_on_lavapipe() {
    let Some(manifest) = requirements() else {
        return;
    };
    let dir = corpus();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/amber exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "amber"))
        .collect();
    files.sort();
    assert!(files.len() >= 120, "corpus has {} files", files.len());
    let (ok, stdout) = run(manifest, &[dir.as_path(), Path::new("--timing")]);
    println!("{stdout}");
    let summary = stdout.lines().last().unwrap_or_default().to_string();
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("PASS ") || l.starts_with("FAIL ") || l.starts_with("SKIP "))
        .collect();
    assert_eq!(lines.len(), files.len(), "one result line per file");
    let known = lavapipe_known_failures();
    let failed: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("FAIL ") && !known.iter().any(|k| l[5..].starts_with(k)))
        .collect();
    assert!(
        failed.is_empty(),
        "failures on lavapipe:\n{}",
        failed
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Only files that say they need more than lavapipe has may be skipped.
    for l in lines.iter().filter(|l| l.starts_with("SKIP ")) {
        let path = l[5..].split(':').next().unwrap_or_default();
        let text = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            text.lines()
                .take(5)
                .any(|h| h.starts_with("# ferrite-only:")),
            "skipped but not marked ferrite-only: {l}"
        );
    }
    let passed = lines.iter().filter(|l| l.starts_with("PASS ")).count();
    assert!(passed >= 120, "only {passed} files passed");
    let listed_failures =
        lines.len() - passed - lines.iter().filter(|l| l.starts_with("SKIP ")).count();
    assert!(
        ok || listed_failures > 0,
        "ferrite-amber exited with failure: {summary}"
    );
    assert!(
        summary.ends_with(" skipped") && summary.contains(&format!(" {listed_failures} failed")),
        "{summary}"
    );
}

/// The corpus files (as paths under tests/amber) that tests/amber/lavapipe-known-failures.txt
/// lists as lavapipe defects: they may fail on lavapipe.
fn lavapipe_known_failures() -> Vec<String> {
    let list = corpus().join("lavapipe-known-failures.txt");
    std::fs::read_to_string(&list)
        .expect("tests/amber/lavapipe-known-failures.txt exists")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|p| p.strip_prefix("tests/amber/"))
        .map(|name| corpus().join(name).display().to_string())
        .collect()
}

/// The runner must be able to fail: a wrong expectation, a syntax error and a wrong
/// tolerance each make it exit non-zero with the cause on the file's line.
#[test]
fn runner_reports_failures() {
    let Some(manifest) = requirements() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("ferrite-amber-fail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let shader = "SHADER compute s GLSL\n#version 450\nlayout(local_size_x = 4) in;\n\
                  layout(set = 0, binding = 0) buffer B { int v[]; };\n\
                  void main() { v[gl_LocalInvocationID.x] = int(gl_LocalInvocationID.x) * 10; }\nEND\n\
                  BUFFER b DATA_TYPE int32 SIZE 4 FILL 0\n\
                  PIPELINE compute p\n  ATTACH s\n  BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\n";
    let good = dir.join("good.amber");
    std::fs::write(
        &good,
        format!("#!amber\n{shader}EXPECT b IDX 0 EQ 0 10 20 30\n"),
    )
    .expect("write");
    let bad = dir.join("bad_value.amber");
    std::fs::write(&bad, format!("#!amber\n{shader}EXPECT b IDX 4 EQ 10 21\n")).expect("write");
    let syntax = dir.join("bad_syntax.amber");
    std::fs::write(
        &syntax,
        format!("#!amber\n{shader}EXPECT b IDX 0 EQUALS 0\n"),
    )
    .expect("write");
    let feature = dir.join("needs_feature.amber");
    std::fs::write(
        &feature,
        format!("#!amber\nDEVICE_FEATURE NoSuchStruct.member\n{shader}"),
    )
    .expect("write");

    let (ok, out) = run(manifest, &[good.as_path()]);
    assert!(ok, "{out}");
    assert!(out.contains("1 passed, 0 failed, 0 skipped"), "{out}");

    let (ok, out) = run(
        manifest,
        &[
            good.as_path(),
            bad.as_path(),
            syntax.as_path(),
            feature.as_path(),
        ],
    );
    println!("{out}");
    assert!(!ok, "a failing file must fail the run");
    let line = out
        .lines()
        .find(|l| l.contains("bad_value.amber"))
        .expect("bad_value line");
    assert!(
        line.starts_with("FAIL ")
            && line.contains("byte offset 8")
            && line.contains("expected EQ 21")
            && line.contains("actual 20"),
        "{line}"
    );
    let line = out
        .lines()
        .find(|l| l.contains("bad_syntax.amber"))
        .expect("bad_syntax line");
    assert!(
        line.starts_with("FAIL ")
            && line.contains("bad_syntax.amber:14:")
            && line.contains("'EQUALS'"),
        "{line}"
    );
    let line = out
        .lines()
        .find(|l| l.contains("needs_feature.amber"))
        .expect("needs_feature line");
    assert!(
        line.starts_with("FAIL ") && line.contains("unknown DEVICE_FEATURE NoSuchStruct.member"),
        "{line}"
    );
    assert!(out.contains("1 passed, 3 failed, 0 skipped"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
