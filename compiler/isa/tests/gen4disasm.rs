//! Second opinion: Debian's `intel-gen4disasm -g 9` (intel-gpu-tools) decodes a sample of
//! native Align1 ALU instructions encoded by Ferrite; opcode, execution size, predicate,
//! register operands (register, sub-register, region, type) and immediate types must
//! agree with Ferrite's own disassembly. Skipped (with a message) if the tool is absent.

use ferrite_isa::disasm::format_instruction;
use ferrite_isa::random::{self, Rng};
use ferrite_isa::{cli, encode, Gen};
use std::fmt::Write;
use std::process::Command;

const TOOL: &str = "/usr/bin/intel-gen4disasm";

/// The operand part of a line (before `{`), as tokens, in a form both tools share.
fn fields(line: &str) -> Vec<String> {
    let body = line.split('{').next().unwrap_or("");
    let body = body.split("/*").next().unwrap_or("");
    body.split_whitespace()
        .map(|t| {
            // gen4disasm prints "(+f0)" for f0.0.
            let t = t.replace("f0)", "f0.0)").replace("f1)", "f1.0)");
            // Immediates: keep only the type (float formatting differs: 2F vs 0x40000000F).
            let is_imm =
                t.starts_with(|c: char| c.is_ascii_digit() || c == '-') && !t.contains('<');
            if is_imm {
                let ty: String = t
                    .chars()
                    .rev()
                    .take_while(|c| c.is_ascii_uppercase())
                    .collect();
                format!("imm:{}", ty.chars().rev().collect::<String>())
            } else {
                t
            }
        })
        .collect()
}

#[test]
fn intel_gen4disasm_agrees_on_native_alu_instructions() {
    if !std::path::Path::new(TOOL).exists() {
        println!("SKIPPED: {TOOL} not installed (Debian package intel-gpu-tools)");
        return;
    }
    let mut r = Rng::new(0x9e4);
    let insts: Vec<_> = (0..600).map(|_| random::simple_alu(&mut r)).collect();
    let mut hex = String::new();
    for i in &insts {
        let b = encode(i, Gen::Gen9).expect("encode");
        let w = u128::from_le_bytes(b);
        let _ = writeln!(hex, "{}", cli::hex_dwords(w));
    }
    let path = std::env::temp_dir().join(format!("ferrite-isa-gen4-{}.hex", std::process::id()));
    std::fs::write(&path, hex).expect("write temp file");
    let out = Command::new(TOOL)
        .args(["-g", "9"])
        .arg(&path)
        .output()
        .expect("run intel-gen4disasm");
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "intel-gen4disasm failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(theirs.len(), insts.len(), "one line per instruction");
    let mut bad = Vec::new();
    for (k, (i, t)) in insts.iter().zip(&theirs).enumerate() {
        let ours = format_instruction(i, None, false);
        if fields(&ours) != fields(t) {
            bad.push(format!(
                "#{k}\n  ferrite:        {ours}\n  gen4disasm:     {t}"
            ));
        }
    }
    println!(
        "intel-gen4disasm agreed on {} of {} instructions",
        insts.len() - bad.len(),
        insts.len()
    );
    for b in bad.iter().take(10) {
        println!("{b}");
    }
    assert!(bad.is_empty(), "{} disagreements", bad.len());
}
