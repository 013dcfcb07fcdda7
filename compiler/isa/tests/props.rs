//! Property tests: random valid instructions encode, decode, compact, uncompact,
//! disassemble and assemble to themselves. Fixed seeds (deterministic runs).

use ferrite_isa::compact::{compact_u128, precompact, uncompact_u64};
use ferrite_isa::disasm::format_instruction;
use ferrite_isa::random::{self, Rng};
use ferrite_isa::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(0x1f_e221),
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(4000))]

    #[test]
    fn native_encode_decode_roundtrip(seed in any::<u64>()) {
        let inst = random::instruction(&mut Rng::new(seed), Gen::Gen9);
        let bytes = encode(&inst, Gen::Gen9).map_err(|e| TestCaseError::fail(format!("{e} for {inst:?}")))?;
        let (back, n) = decode(&bytes, Gen::Gen9).map_err(|e| TestCaseError::fail(format!("{e} for {inst:?}")))?;
        prop_assert_eq!(n, 16);
        prop_assert_eq!(back, inst);
        prop_assert_eq!(encode(&back, Gen::Gen9).unwrap(), bytes);
    }

    #[test]
    fn disassemble_assemble_roundtrip(seed in any::<u64>()) {
        let inst = random::instruction(&mut Rng::new(seed), Gen::Gen9);
        let bytes = encode(&inst, Gen::Gen9).unwrap();
        let text = format!("{}\n", format_instruction(&inst, None, false));
        let asm = assemble(&text, Gen::Gen9).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(asm.as_slice(), bytes.as_slice(), "text: {}", text);
    }

    #[test]
    fn compaction_of_random_instructions_is_exact(seed in any::<u64>()) {
        let inst = precompact(&random::instruction(&mut Rng::new(seed), Gen::Gen9));
        let w = u128::from_le_bytes(encode(&inst, Gen::Gen9).unwrap());
        if let Some(c) = compact_u128(w, Gen::Gen9) {
            prop_assert_eq!(uncompact_u64(c, Gen::Gen9, 0).unwrap(), w);
            let (back, n) = decode(&c.to_le_bytes(), Gen::Gen9).unwrap();
            prop_assert_eq!(n, 8);
            prop_assert_eq!(back, inst);
        }
    }

    /// Random compact words built from table indices: uncompact, then compact again must
    /// give the same word, and the text (with `compacted`) must assemble back to it.
    #[test]
    fn random_compact_words_roundtrip(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let ops: Vec<u8> = OPCODES.iter().filter(|o| o.op.is_valid_on(Gen::Gen9)).map(|o| o.hw).collect();
        let op = r.pick(&ops) as u64;
        let mut c = r.next_u64();
        c = (c & !0x7F) | op;
        c |= 1 << 29;
        let three = Opcode::from_hw(op as u8, Gen::Gen9).is_some_and(|o| o.format() == Format::ThreeSrc);
        if three {
            c &= !((1 << 7) | (0x1FF << 19) | (0x1FF << 34)); // reserved bits, sub-registers 0
        } else {
            c &= !(1 << 28);
        }
        let w = uncompact_u64(c, Gen::Gen9, 0).unwrap();
        // With an immediate the src1 part of the sub-register entry is dead (the value
        // occupies those bits); like Mesa we only compact with entries whose src1 part is
        // zero, so only such words are canonical.
        let imm = (w >> 41) & 3 == 3 || (w >> 89) & 3 == 3;
        let sub_entry = compact::GEN8_TABLES.subreg[((c >> 18) & 31) as usize];
        if !(three || !imm || sub_entry >> 10 == 0) {
            return Ok(());
        }
        // A SEND whose sign-extended descriptor sets bit 127 is an EOT send, which (like
        // Mesa) we never compact.
        let send = matches!(op, 0x31 | 0x32);
        if send && (w >> 127) == 1 {
            return Ok(());
        }
        prop_assert_eq!(compact_u128(w, Gen::Gen9), Some(c), "native {:032x}", w);
        if let Ok((inst, 8)) = decode(&c.to_le_bytes(), Gen::Gen9) {
            let text = format!("{}\n", format_instruction(&inst, None, true));
            // Only instructions the text can express exactly are compared (e.g. not an
            // Align16 SEND, which Mesa's syntax prints as Align1 operands).
            if let Ok(bytes) = assemble(&text, Gen::Gen9) {
                if bytes.len() == 8 && decode(&bytes, Gen::Gen9).map(|d| d.0) == Ok(inst) {
                    let want = c.to_le_bytes();
                    prop_assert_eq!(bytes.as_slice(), want.as_slice(), "text: {}", text);
                }
            }
        }
    }
}

/// A random program with branches whose targets are inside the program.
fn random_program(seed: u64, n: usize) -> Vec<Instruction> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|k| {
            if r.chance(1, 5) {
                let t = |r: &mut Rng| (r.below(n as u64 + 1) as i64 - k as i64) as i32 * 16;
                let op = r.pick(&[
                    Opcode::If,
                    Opcode::Else,
                    Opcode::Endif,
                    Opcode::While,
                    Opcode::Break,
                    Opcode::Cont,
                    Opcode::Halt,
                ]);
                let (j, u) = (t(&mut r), t(&mut r));
                random::branch_with(&mut r, op, j, u)
            } else if r.chance(1, 2) {
                random::simple_alu(&mut r)
            } else {
                match random::instruction(&mut r, Gen::Gen9) {
                    i if matches!(i.operands, Operands::Branch { .. }) => {
                        random::simple_alu(&mut r)
                    }
                    i => i,
                }
            }
        })
        .collect()
}

#[test]
fn encode_program_with_compaction_keeps_meaning_and_targets() {
    let mut compacted_total = 0;
    let mut total = 0;
    for seed in 0..300u64 {
        // Replace random branches by in-range ones (random::instruction may emit far ones).
        let insts: Vec<Instruction> = random_program(seed, 40)
            .into_iter()
            .enumerate()
            .map(|(k, i)| match i.operands {
                Operands::Branch { .. }
                    if !(0..=40)
                        .contains(&(k as i64 + i.branch_offsets().unwrap().0 as i64 / 16)) =>
                {
                    random::simple_alu(&mut Rng::new(seed ^ k as u64))
                }
                Operands::Branch { .. }
                    if i.branch_offsets()
                        .unwrap()
                        .1
                        .is_some_and(|u| !(0..=40).contains(&(k as i64 + u as i64 / 16))) =>
                {
                    random::simple_alu(&mut Rng::new(seed ^ k as u64))
                }
                _ => i,
            })
            .collect();
        let bytes = encode_program(&insts, Gen::Gen9, true).expect("encode");
        assert_eq!(bytes.len() % 16, 0, "padded to 16 bytes");
        let prog = decode_program(&bytes, Gen::Gen9).expect("decode");
        compacted_total += prog.iter().filter(|p| p.compacted).count();
        total += insts.len();
        let native = to_native_layout(&prog);
        let want: Vec<Instruction> = insts
            .iter()
            .zip(prog.iter())
            .map(|(i, p)| {
                if p.compacted && p.inst != *i {
                    precompact(i)
                } else {
                    *i
                }
            })
            .collect();
        for k in 0..insts.len() {
            assert_eq!(
                native[k], want[k],
                "seed {seed} inst {k}:\n got  {}\n want {}",
                native[k], want[k]
            );
        }
        // Text of the compacted program assembles back to the same bytes.
        let text = disasm::format_program(&prog);
        let again = match assemble(&text, Gen::Gen9) {
            Ok(b) => b,
            Err(IsaError::Asm { line, msg, .. }) => {
                panic!(
                    "seed {seed}: {msg} at line {line}: {}",
                    text.lines().nth(line - 1).unwrap_or("")
                )
            }
            Err(e) => panic!("seed {seed}: {e}"),
        };
        if again != bytes {
            let p = prog.iter().find(|p| {
                let n = if p.compacted { 8 } else { 16 };
                again.get(p.offset..p.offset + n) != Some(&bytes[p.offset..p.offset + n])
            });
            panic!(
                "seed {seed}: text does not reassemble at {:?}\n{}",
                p.map(|p| p.offset),
                p.map(|p| disasm::format_instruction(&p.inst, None, p.compacted))
                    .unwrap_or_default()
            );
        }
    }
    println!("compacted {compacted_total} of {total} instructions");
    assert!(
        compacted_total > total / 10,
        "compaction should hit often: {compacted_total}/{total}"
    );
}

/// The random generator's operand types come from the type table: bytes are register-only,
/// the vector types immediate-only, everything else both.
#[test]
fn operand_type_lists_follow_the_type_table() {
    let reg = Type::register_types();
    let imm = Type::immediate_types();
    for t in TYPES {
        let has = |hw: [Option<u8>; 2]| hw.iter().any(Option::is_some);
        assert_eq!(reg.contains(&t.ty), has(t.reg_hw), "{}", t.name);
        assert_eq!(imm.contains(&t.ty), has(t.imm_hw), "{}", t.name);
    }
    assert!(reg.contains(&Type::UB) && !imm.contains(&Type::UB));
    assert!(imm.contains(&Type::VF) && !reg.contains(&Type::VF));
    assert_eq!((reg.len(), imm.len()), (11, 12));
    assert!(reg.windows(2).all(|w| (w[0] as usize) < (w[1] as usize)));
}
