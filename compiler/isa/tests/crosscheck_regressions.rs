//! Disagreements with Mesa's disassembler found by `scripts/isa-crosscheck`, kept as tests.

use ferrite_isa::{assemble, disassemble_program, Gen};

/// Sampler SIMD mode is desc 18:17 plus desc 29 as a third bit; Mesa prints mode 6 as SIMD16H.
#[test]
fn sampler_simd_mode_uses_desc_bit_29() {
    let bytes: [u8; 16] = [
        0x33, 0x84, 0xa0, 0x12, 0x0c, 0x00, 0x00, 0x05, 0x94, 0x02, 0x82, 0x3f, 0x57, 0x71, 0x44,
        0x7a,
    ];
    let text = disassemble_program(&bytes, Gen::Gen9).expect("decodes");
    assert!(text.contains("ld SIMD16H HP"), "got: {text}");
    // The descriptor is printed in hex, so the text still assembles to the same bytes.
    assert_eq!(
        assemble(&text, Gen::Gen9).expect("assembles"),
        bytes.to_vec()
    );
}
