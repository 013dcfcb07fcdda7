//! Mesa's Gen9 assembler vectors (see `vectors/SOURCES.md`): every `.asm` must assemble
//! to its `.expected` bytes, and disassembling the bytes must give the `.asm` text back
//! (whitespace-normalized). URB, sampler and render-target messages may print their
//! descriptor generically, provided the printed text assembles to the same bytes.

use ferrite_isa::{assemble, decode_program, disasm, Gen, Operands, Sfid};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/gen9")
}

fn files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir())
        .expect("vector dir")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "asm" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    v.sort();
    v
}

fn expected_bytes(name: &str) -> Vec<u8> {
    let text =
        std::fs::read_to_string(dir().join(format!("{name}.expected"))).expect("expected file");
    text.split_whitespace()
        .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
        .collect()
}

fn normalize(s: &str) -> Vec<String> {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.split(';')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

#[test]
fn all_vectors_assemble_to_expected_bytes() {
    let files = files();
    assert_eq!(files.len(), 43, "expected 43 Gen9 vector files");
    let mut failures = Vec::new();
    for name in &files {
        let asm = std::fs::read_to_string(dir().join(format!("{name}.asm"))).expect("asm");
        let want = expected_bytes(name);
        let n = want.len() / 16;
        match assemble(&asm, Gen::Gen9) {
            Ok(got) => {
                let ok = (0..n)
                    .filter(|&k| got.get(k * 16..k * 16 + 16) == Some(&want[k * 16..k * 16 + 16]))
                    .count();
                println!("bytes {name:8} {ok}/{n}");
                if got != want {
                    for k in 0..n {
                        let g = got.get(k * 16..k * 16 + 16);
                        if g != Some(&want[k * 16..k * 16 + 16]) {
                            failures.push(format!(
                                "{name}[{k}]: got {g:02x?} want {:02x?}",
                                &want[k * 16..k * 16 + 16]
                            ));
                        }
                    }
                    if got.len() != want.len() {
                        failures.push(format!("{name}: length {} vs {}", got.len(), want.len()));
                    }
                }
            }
            Err(e) => {
                println!("bytes {name:8} 0/{n} ({e})");
                failures.push(format!("{name}: {e}"));
            }
        }
    }
    for f in failures.iter().take(30) {
        println!("FAIL {f}");
    }
    assert!(failures.is_empty(), "{} byte mismatches", failures.len());
}

/// The statement without its human-readable message description.
fn strip_msg_desc(s: &str) -> String {
    match (s.find("MsgDesc:"), s.rfind('{')) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &s[..a], &s[b..]),
        _ => s.to_string(),
    }
}

#[test]
fn all_vectors_disassemble_to_their_text() {
    let mut failures = Vec::new();
    let (mut exact_total, mut generic_total, mut total) = (0, 0, 0);
    for name in files() {
        let asm = std::fs::read_to_string(dir().join(format!("{name}.asm"))).expect("asm");
        let bytes = expected_bytes(&name);
        let prog = match decode_program(&bytes, Gen::Gen9) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}: decode error {e}"));
                continue;
            }
        };
        let text = disasm::format_program(&prog);
        let want = normalize(&asm);
        let got = normalize(&text);
        let (mut exact, mut generic) = (0, 0);
        // Statements may include a leading label; instructions map 1:1 in order.
        for (k, (g, w)) in got.iter().zip(want.iter()).enumerate() {
            if g == w {
                exact += 1;
                continue;
            }
            let generic_ok = prog.get(k).is_some_and(|p| match p.inst.operands {
                Operands::Send { sfid, .. } | Operands::SplitSend { sfid, .. } => {
                    matches!(sfid, Sfid::Urb | Sfid::Sampler | Sfid::DpRender)
                }
                _ => false,
            }) && strip_msg_desc(g) == strip_msg_desc(w)
                && assemble(&format!("{g};"), Gen::Gen9).ok().as_deref()
                    == Some(&bytes[prog[k].offset..prog[k].offset + 16]);
            if generic_ok {
                generic += 1;
            } else {
                failures.push(format!("{name}[{k}]:\n  got  {g}\n  want {w}"));
            }
        }
        if got.len() != want.len() {
            failures.push(format!(
                "{name}: {} statements vs {}",
                got.len(),
                want.len()
            ));
        }
        println!(
            "text  {name:8} exact {exact}/{} generic-descriptor {generic}",
            want.len()
        );
        exact_total += exact;
        generic_total += generic;
        total += want.len();
    }
    println!("text total: exact {exact_total}, generic {generic_total}, of {total}");
    for f in failures.iter().take(40) {
        println!("FAIL {f}");
    }
    assert!(failures.is_empty(), "{} text mismatches", failures.len());
}

/// Every vector instruction that has a compact form uncompacts to exactly its bytes and
/// decodes to the same instruction; prints how many compact (with Mesa's retyping).
#[test]
fn vector_instructions_compact_exactly() {
    use ferrite_isa::compact::{compact_u128, precompact, uncompact_u64};
    use ferrite_isa::{decode, encode};
    let (mut total, mut direct, mut retyped, mut sends) = (0, 0, 0, 0);
    for name in files() {
        let bytes = expected_bytes(&name);
        for chunk in bytes.chunks(16) {
            total += 1;
            let w = u128::from_le_bytes(chunk.try_into().expect("16 bytes"));
            let (inst, _) = decode(chunk, Gen::Gen9).expect("decodes");
            if inst.opcode.is_send() {
                sends += 1;
            }
            if let Some(c) = compact_u128(w, Gen::Gen9) {
                direct += 1;
                assert_eq!(
                    uncompact_u64(c, Gen::Gen9, 0).expect("uncompacts"),
                    w,
                    "{name}"
                );
                assert_eq!(
                    decode(&c.to_le_bytes(), Gen::Gen9).expect("decodes").0,
                    inst,
                    "{name}"
                );
            } else {
                let p = precompact(&inst);
                let pw = u128::from_le_bytes(encode(&p, Gen::Gen9).expect("encodes"));
                if let Some(c) = compact_u128(pw, Gen::Gen9) {
                    retyped += 1;
                    assert_eq!(
                        decode(&c.to_le_bytes(), Gen::Gen9).expect("decodes").0,
                        p,
                        "{name}"
                    );
                }
            }
        }
    }
    println!(
        "compactable: {direct} as is, {retyped} after Mesa's retyping, of {total} \
         ({sends} sends, whose 31-bit descriptors rarely fit the 13-bit compact immediate)"
    );
    assert!(
        direct + retyped > (total - sends) / 4,
        "compaction should apply to many non-send instructions"
    );
    // Mesa's padding NOP is a fixed point.
    let nop = [0x7e, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00];
    let w = uncompact_u64(u64::from_le_bytes(nop), Gen::Gen9, 0).expect("uncompacts");
    assert_eq!(compact_u128(w, Gen::Gen9), Some(u64::from_le_bytes(nop)));
}
