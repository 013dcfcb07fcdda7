//! Invalid SPIR-V must give an error, never a panic: deterministic mutations of the fuzz
//! corpus (fixed seed) through the front end and the pipeline (validated after every pass).

use ferrite_compiler::pipeline::{compile_to_ir, DebugFlags};
use ferrite_compiler::testing::{spirv_words as words, validating_options as opts};
use ferrite_compiler::{CompileError, Target};

mod corpus;
use corpus::CORPUS;

fn check(name: &str, seed: u64, w: &[u32]) {
    if let Err(CompileError::Validation { pass, err }) = compile_to_ir(w, &Target::gen9(), &opts())
    {
        panic!("{name} seed {seed}: invalid IR after {pass}: {err}");
    }
}

#[test]
fn corpus_compiles_to_valid_ir() {
    for (name, b) in CORPUS {
        compile_to_ir(&words(b), &Target::gen9(), &opts())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn mutated_modules_give_errors_not_panics() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (name, b) in CORPUS {
        let base = words(b);
        for seed in 0..150u64 {
            let mut w = base.clone();
            let n = 1 + rand() % 4;
            for _ in 0..n {
                let at = 5 + (rand() as usize) % (w.len() - 5);
                match rand() % 4 {
                    0 => w[at] = rand() as u32,
                    1 => w[at] ^= 1 << (rand() % 32),
                    2 => w[at] = (w[at] & 0xffff_0000) | (rand() as u32 & 0xff),
                    _ => w.truncate(at),
                }
            }
            check(name, seed, &w);
        }
    }
}

#[test]
fn garbage_and_truncated_inputs_are_errors() {
    let t = Target::gen9();
    for w in [
        vec![],
        vec![0x0723_0203],
        vec![0x0723_0203, 0x0001_0000, 0, 10],
        vec![0xdead_beef; 20],
    ] {
        assert!(compile_to_ir(&w, &t, &opts()).is_err());
    }
    let mut old = words(CORPUS[0].1);
    old[1] = 0x0001_0700; // SPIR-V 1.7 does not exist
    let e = compile_to_ir(&old, &t, &opts()).unwrap_err();
    assert!(e.to_string().contains("SPIR-V version 1.7"), "{e}");
}

#[test]
fn dumps_go_to_the_dump_dir_and_parse_back() {
    let dir = std::env::temp_dir().join(format!("ferrite-dump-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut o = opts();
    o.debug = DebugFlags::parse("spirv,ir,opt").unwrap();
    o.dump_dir = Some(dir.clone());
    let (shader, _) = compile_to_ir(&words(CORPUS[0].1), &Target::gen9(), &o).unwrap();
    for f in [
        "input.spvasm",
        "frontend.ir",
        "final.ir",
        "opt-vars_to_ssa.ir",
        "opt-lower_bools.ir",
    ] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
    assert!(std::fs::read_to_string(dir.join("input.spvasm"))
        .unwrap()
        .contains("OpEntryPoint"));
    // The printed IR of a real shader parses back to the same text.
    for f in ["frontend.ir", "final.ir"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        let parsed =
            ferrite_compiler::parse::parse_shader(&text).unwrap_or_else(|e| panic!("{f}: {e}"));
        ferrite_compiler::validate::validate(&parsed.func).unwrap();
        assert_eq!(parsed.to_string(), text, "{f}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("final.ir")).unwrap(),
        shader.to_string()
    );
    assert!(DebugFlags::parse("ir,bogus").is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ferrite_cc_prints_assembly_statistics_and_reports_errors() {
    let exe = env!("CARGO_BIN_EXE_ferrite-cc");
    let dir = std::env::temp_dir().join(format!("ferrite-cc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.spv");
    std::fs::write(&good, CORPUS[0].1).unwrap();
    let out = std::process::Command::new(exe)
        .arg(&good)
        .args(["--entry", "main", "--simd", "16"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("fn main {"), "IR only with --ir:\n{text}");
    assert!(text.contains("// SIMD16 kernel"), "{text}");
    // Assembly with byte offsets, ending in the EOT send.
    assert!(text.contains("0x00000: "), "{text}");
    assert!(text.contains("EOT"), "{text}");
    for name in [
        "Instruction Count",
        "SEND Count",
        "Loop Count",
        "Cycle Count",
        "Spill Count",
        "Fill Count",
        "Max dispatch width",
        "Compile time (us)",
    ] {
        assert!(
            text.contains(&format!("{name}: ")),
            "{name} missing:\n{text}"
        );
    }
    assert!(text.contains("Max dispatch width: 16"), "{text}");
    // The instruction count is that of the assembly listing, without the padding NOP after EOT.
    let listed = text
        .lines()
        .filter(|l| l.starts_with("0x") && !l.contains(": nop "))
        .count();
    assert!(
        text.contains(&format!("Instruction Count: {listed}\n")),
        "{listed} listed\n{text}"
    );
    let out = std::process::Command::new(exe)
        .arg(&good)
        .args(["--ir", "--simd", "8"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fn main {") && text.contains("shader local_size 32 1 1"),
        "{text}"
    );
    assert!(text.contains("Max dispatch width: 8"), "{text}");
    let out = std::process::Command::new(exe)
        .arg(&good)
        .args(["--entry", "other"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no GLCompute entry point named 'other'"));
    let bad = dir.join("bad.spv");
    std::fs::write(&bad, [1u8, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    let out = std::process::Command::new(exe).arg(&bad).output().unwrap();
    assert!(!out.status.success());
    let out = std::process::Command::new(exe)
        .arg(&good)
        .args(["--gen", "12"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fuzz_regressions_are_errors() {
    // Unstructured branches that made region emission recurse until the stack overflowed.
    let w = words(include_bytes!(
        "../fuzz/corpus/frontend/regress-deep-recursion.spv"
    ));
    let e = compile_to_ir(&w, &Target::gen9(), &opts()).unwrap_err();
    assert!(e.to_string().contains("not structured"), "{e}");
    // A switch whose case target is not a block.
    let w = words(include_bytes!(
        "../fuzz/corpus/frontend/regress-switch-target.spv"
    ));
    assert!(compile_to_ir(&w, &Target::gen9(), &opts()).is_err());
    // A LocalSize whose three factors overflow u64 when multiplied.
    let w = words(include_bytes!(
        "../fuzz/corpus/frontend/regress-workgroup-size-overflow.spv"
    ));
    let e = compile_to_ir(&w, &Target::gen9(), &opts()).unwrap_err();
    assert!(e.to_string().contains("workgroup size"), "{e}");
}
