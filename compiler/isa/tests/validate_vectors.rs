//! Every instruction of Mesa's Gen9 ISA vectors (`tests/vectors/gen9`, compiled by Mesa's
//! own compiler or hand-written for its assembler tests) is judged by the PRM validator.
//! They must all pass, except the few listed in `EXPECTED`, which the PRM forbids (each
//! entry says why).

use ferrite_isa::validate::{validate_program_at, Platform};
use ferrite_isa::{decode_program, Gen};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/gen9")
}

fn expected_bytes(name: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(dir().join(format!("{name}.expected"))).expect("vector");
    text.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
        .collect()
}

fn files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir())
        .expect("vector dir")
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "expected").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    v.sort();
    v
}

/// (file, instruction index, rule id, why the PRM forbids it).
const EXPECTED: &[(&str, usize, &str, &str)] = &[];

#[test]
fn gen9_vectors_pass_the_validator() {
    let files = files();
    assert_eq!(files.len(), 43, "43 Gen9 vector files");
    let mut unexpected = Vec::new();
    let mut seen_expected = Vec::new();
    let mut total = 0;
    for name in &files {
        let bytes = expected_bytes(name);
        let prog = decode_program(&bytes, Gen::Gen9).expect("vectors decode");
        let insts: Vec<_> = prog.iter().map(|p| p.inst).collect();
        let offsets: Vec<usize> = prog.iter().map(|p| p.offset).collect();
        total += insts.len();
        let v = validate_program_at(&insts, &offsets, bytes.len(), Platform::Skl);
        let mut n = 0;
        for viol in &v {
            if let Some(e) = EXPECTED
                .iter()
                .find(|e| e.0 == name && e.1 == viol.index && e.2 == viol.rule.id)
            {
                seen_expected.push(*e);
            } else {
                n += 1;
                unexpected.push(format!("{name}.expected: {viol}"));
            }
        }
        eprintln!(
            "{name}: {} instructions, {n} unexpected violations",
            insts.len()
        );
    }
    eprintln!("{total} instructions in {} files", files.len());
    for e in EXPECTED {
        assert!(
            seen_expected.contains(e),
            "expected violation not reported: {e:?}"
        );
    }
    assert!(
        unexpected.is_empty(),
        "{} violations:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
}

/// The validator is engaged on real code: breaking one field of every decoded ALU
/// instruction with a GRF destination (dst HorzStride 0) is reported for each of them.
#[test]
fn mutated_vectors_are_rejected() {
    use ferrite_isa::validate::validate_instruction;
    use ferrite_isa::{Addr, Operands, Reg};
    let mut checked = 0;
    for name in files() {
        let bytes = expected_bytes(&name);
        for p in decode_program(&bytes, Gen::Gen9).expect("decode") {
            let mut inst = p.inst;
            let Operands::Basic { dst, .. } = &mut inst.operands else {
                continue;
            };
            if !matches!(
                dst.addr,
                Addr::Direct {
                    reg: Reg::Grf(_),
                    ..
                }
            ) || inst.access_mode != ferrite_isa::AccessMode::Align1
            {
                continue;
            }
            dst.hstride = 0;
            let v = validate_instruction(&inst, 0, Gen::Gen9);
            assert!(
                v.iter().any(|v| v.rule.id == "region.dst-hstride-nonzero"),
                "{name}: {inst} not rejected"
            );
            checked += 1;
        }
    }
    assert!(checked > 300, "only {checked} ALU instructions mutated");
}

/// Informational: what the low-power (BXT) rules say about this SKL code.
#[test]
fn gen9_vectors_on_bxt_report() {
    let mut hist = std::collections::BTreeMap::new();
    for name in files() {
        let bytes = expected_bytes(&name);
        let prog = decode_program(&bytes, Gen::Gen9).expect("decode");
        let insts: Vec<_> = prog.iter().map(|p| p.inst).collect();
        let offsets: Vec<usize> = prog.iter().map(|p| p.offset).collect();
        for v in validate_program_at(&insts, &offsets, bytes.len(), Platform::Bxt) {
            *hist.entry(v.rule.id).or_insert(0) += 1;
        }
    }
    eprintln!("on BXT: {hist:?}");
    // Only the BXT-only 64-bit rules may differ from SKL.
    assert!(hist.keys().all(|k| k.starts_with("lp64.")), "{hist:?}");
}

/// Throughput measurement (not a timing assertion): `cargo test --release -p ferrite-isa
/// --test validate_vectors -- --ignored --nocapture`.
#[test]
#[ignore]
fn validator_throughput() {
    let mut progs = Vec::new();
    for name in files() {
        let bytes = expected_bytes(&name);
        let prog = decode_program(&bytes, Gen::Gen9).expect("decode");
        let insts: Vec<_> = prog.iter().map(|p| p.inst).collect();
        let offsets: Vec<usize> = prog.iter().map(|p| p.offset).collect();
        progs.push((insts, offsets, bytes.len()));
    }
    let rounds = 200;
    let start = std::time::Instant::now();
    let mut n = 0usize;
    for _ in 0..rounds {
        for (insts, offsets, size) in &progs {
            n += insts.len();
            assert!(validate_program_at(insts, offsets, *size, Platform::Skl).is_empty());
        }
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "validated {n} instructions in {secs:.3} s: {:.2} M instructions/s",
        n as f64 / secs / 1e6
    );
}

/// The validator never panics, whatever the field values (debug build: overflow checks
/// on): every vector instruction with randomly mutated regions, strides, sub-registers,
/// types and exec sizes (fixed-seed LCG), on every platform.
#[test]
fn validator_never_panics_on_mutated_fields() {
    use ferrite_isa::validate::validate_instruction;
    use ferrite_isa::{Addr, ExecSize, Operands, Region, Src, Type};
    let mut seed: u64 = 0x5eed_1234_abcd_0001;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as u32
    };
    let types = Type::register_types();
    let mut n = 0;
    for name in files() {
        let bytes = expected_bytes(&name);
        for p in decode_program(&bytes, Gen::Gen9).expect("decode") {
            for _ in 0..8 {
                let mut inst = p.inst;
                inst.exec_size = ExecSize::from_hw(next() % 6).expect("exec");
                match &mut inst.operands {
                    Operands::Basic {
                        dst, src0, src1, ..
                    } => {
                        dst.hstride = (next() % 5) as u8;
                        dst.ty = types[next() as usize % types.len()];
                        if let Addr::Direct { subnr, .. } = &mut dst.addr {
                            *subnr = next() as u8;
                        }
                        for s in [src0, src1] {
                            if let Src::Reg(r) = s {
                                r.region = Region::new(
                                    [0, 1, 2, 4, 8, 16, 32, Region::VXH][next() as usize % 8],
                                    (next() % 17) as u8,
                                    (next() % 5) as u8,
                                );
                                r.ty = types[next() as usize % types.len()];
                                if let Addr::Direct { subnr, .. } = &mut r.addr {
                                    *subnr = next() as u8;
                                }
                            }
                        }
                    }
                    Operands::ThreeSrc { src, dst, .. } => {
                        dst.ty = types[next() as usize % types.len()];
                        for s in src.iter_mut() {
                            s.rep_ctrl = next() % 2 == 0;
                            s.subnr = (next() % 32) as u8;
                        }
                    }
                    Operands::Branch { jip, uip, .. } => {
                        *jip = next() as i32;
                        *uip = -(next() as i32);
                    }
                    _ => {}
                }
                for pl in Platform::ALL {
                    let _ = validate_instruction(&inst, 0, pl);
                }
                n += 1;
            }
        }
    }
    assert!(n > 20_000, "{n}");
}
