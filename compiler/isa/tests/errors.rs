//! Bad input gives errors with positions, never a panic.

use ferrite_isa::{assemble, decode, decode_program, Gen, IsaError};

fn asm_err(text: &str) -> (usize, usize, String) {
    match assemble(text, Gen::Gen9) {
        Err(IsaError::Asm { line, col, msg }) => (line, col, msg),
        other => panic!("expected an assembly error for {text:?}, got {other:?}"),
    }
}

#[test]
fn truncated_binary_reports_offset() {
    let add = [
        0x40, 0x00, 0x60, 0x00, 0xe8, 0x0a, 0x80, 0x2f, 0xe0, 0x00, 0x8d, 0x0e, 0x01, 0x00, 0x00,
        0x00,
    ];
    let mut prog = add.to_vec();
    prog.extend_from_slice(&add[..12]);
    match decode_program(&prog, Gen::Gen9) {
        Err(IsaError::Truncated {
            offset: 16,
            needed: 16,
            available: 12,
        }) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        decode(&add[..5], Gen::Gen9),
        Err(IsaError::Truncated {
            offset: 0,
            needed: 8,
            ..
        })
    ));
}

#[test]
fn unknown_opcode_reports_offset_and_number() {
    let mut b = [0u8; 32];
    b[0] = 0x7e; // nop
    b[16] = 0x0b; // unassigned opcode
    match decode_program(&b, Gen::Gen9) {
        Err(IsaError::InvalidOpcode {
            offset: 16,
            hw: 0x0b,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // SENDS does not exist on Gen8.
    let mut s = [0u8; 16];
    s[0] = 0x33;
    assert!(matches!(
        decode(&s, Gen::Gen8),
        Err(IsaError::InvalidOpcode { hw: 0x33, .. })
    ));
}

#[test]
fn reserved_bits_and_invalid_fields_are_errors() {
    let add = [
        0x40u8, 0x00, 0x60, 0x00, 0xe8, 0x0a, 0x80, 0x2f, 0xe0, 0x00, 0x8d, 0x0e, 0x01, 0x00, 0x00,
        0x00,
    ];
    let mut b = add;
    b[0] |= 0x80; // bit 7 reserved
    assert!(matches!(
        decode(&b, Gen::Gen9),
        Err(IsaError::InvalidEncoding { offset: 0, .. })
    ));
    let mut b = add;
    b[2] = (b[2] & !0xe0) | (7 << 5); // exec size 7
    assert!(matches!(
        decode(&b, Gen::Gen9),
        Err(IsaError::InvalidEncoding { .. })
    ));
    let mut b = add;
    b[4] = (b[4] & !0x18) | (2 << 3); // dst file 2 (MRF)
    assert!(matches!(
        decode(&b, Gen::Gen9),
        Err(IsaError::InvalidEncoding { .. })
    ));
}

#[test]
fn malformed_assembly_reports_line_and_column() {
    assert_eq!(
        asm_err("mov(8) g1<1>F g2<8,8,1>F { align1 1Q };\nfoo(8) g1<1>F;").0,
        2
    );
    let (l, c, m) = asm_err("add(8) g1<1>F g2<8,8,1>F 1.5Q { align1 };");
    assert_eq!((l, c), (1, 26), "{m}");
    let (l, c, _) = asm_err("\n  mov(3) g1<1>F g2<8,8,1>F;");
    assert_eq!((l, c), (2, 7));
    let (l, _, m) = asm_err("if(8) JIP: NOWHERE UIP: NOWHERE { align1 1Q };");
    assert_eq!(l, 1);
    assert!(m.contains("undefined label"), "{m}");
    let (_, _, m) = asm_err("mov(8) g1<1>F g2<8,8,1>F { align1 bogus };");
    assert!(m.contains("bogus"), "{m}");
    let (_, _, m) = asm_err("mov(8) g1<1>F g2<8,8,1>F { align1 compacted WE_all 3Q };\nmov(8) g1<1>F g2<8,8,1>F { align1 1Q }");
    assert!(m.contains("';'") || m.contains("compact"), "{m}");
    let (l, c, _) = asm_err("/* unterminated");
    assert_eq!((l, c), (1, 1));
    // Found by scripts/isa-fuzz: an Align16 destination stride other than <1> assembled, but
    // the disassembly (always <1>) did not assemble to the same bytes.
    let (_, _, m) = asm_err("add(8) g7<0>F -g6<4>.xyxyF g6<4>.zwzwF { align16 1Q };");
    assert!(m.contains("Align16 destination"), "{m}");
}

#[test]
fn compacted_requests_that_cannot_compact_are_errors() {
    // A 32-bit immediate that is not a sign-extended 13-bit value has no compact form.
    let (_, _, m) = asm_err("mov(8) g1<1>UD 0x12345678UD { align1 1Q compacted };");
    assert!(m.contains("compact"), "{m}");
    // A simple one does.
    let b = assemble(
        "mov(8) g1<1>UD 0x00000001UD { align1 1Q compacted };",
        Gen::Gen9,
    )
    .expect("compacts");
    assert_eq!(b.len(), 8);
}

/// Inputs the fuzzer found (scripts/isa-fuzz): each decodes to an error, or to
/// instructions that re-encode to exactly the input bytes.
#[test]
fn fuzz_regressions_decode_exactly_or_fail() {
    let cases: &[&[u8]] = &[
        // dst AddrImm[9] (bit 47) set on a direct destination.
        &[
            25, 0, 96, 0, 8, 10, 128, 34, 96, 2, 141, 10, 64, 2, 141, 0, 25, 0, 128, 0, 8, 192, 34,
            10, 0, 1, 141, 10, 128, 1, 141, 0,
        ],
    ];
    for bytes in cases {
        if let Ok(prog) = decode_program(bytes, Gen::Gen9) {
            for p in &prog {
                if !p.compacted {
                    let again = ferrite_isa::encode(&p.inst, Gen::Gen9).expect("encodes");
                    assert_eq!(&again[..], &bytes[p.offset..p.offset + 16]);
                }
            }
        }
    }
}

#[test]
fn float_literals_are_values() {
    let a = assemble("mov(8) g1<1>F 1.5F { align1 1Q };", Gen::Gen9).expect("asm");
    let b = assemble("mov(8) g1<1>F 0x3fc00000F { align1 1Q };", Gen::Gen9).expect("asm");
    assert_eq!(a, b);
    let a = assemble("mov(8) g1<1>HF -2HF { align1 1Q };", Gen::Gen9).expect("asm");
    let b = assemble("mov(8) g1<1>HF 0xc000HF { align1 1Q };", Gen::Gen9).expect("asm");
    assert_eq!(a, b);
    assert!(assemble("mov(8) g1<1>D 1.5D { align1 1Q };", Gen::Gen9).is_err());
    assert!(assemble("mov(8) g1.99<1>D g2<8,8,1>D { align1 1Q };", Gen::Gen9).is_err());
}

/// Inputs the assembler fuzzer found: their disassembly must assemble to the same bytes.
#[test]
fn fuzz_regressions_text_roundtrip() {
    let cases = [
        // SIMD16 in quarter 2 (Mesa's syntax would print it as 1H).
        "fbl(16) g43<1>UD mask0<0,1,0>UD { align1 WE_all 2Q };",
    ];
    for text in cases {
        let bytes = assemble(text, Gen::Gen9).expect("assembles");
        let again = ferrite_isa::disassemble_program(&bytes, Gen::Gen9).expect("decodes");
        assert_eq!(
            assemble(&again, Gen::Gen9).expect("reassembles"),
            bytes,
            "{again}"
        );
    }
}
