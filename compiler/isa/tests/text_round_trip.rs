//! Encodings whose text must keep every bit, so that a listing assembles back to its binary
//! (cases found by the back end's listing check, `backend::emit::check_listing`).

use ferrite_isa::{assemble, disassemble_program, Gen};

/// A replicated scalar source of an Align16 three-source instruction with the identity
/// swizzle (what Ferrite's back end emits; Mesa leaves the field zero): the text names the
/// swizzle, and the instruction stays compacted.
#[test]
fn replicated_three_source_operand_keeps_its_swizzle() {
    // mad(8) g7<1>F g6<4,4,1>F g1.0<0,1,0>.xyzwF g5<4,4,1>F { align16 1Q compacted }
    let bytes: [u8; 8] = [0x5b, 0x71, 0x00, 0x20, 0x01, 0x30, 0x04, 0x0a];
    let text = disassemble_program(&bytes, Gen::Gen9).expect("decodes");
    assert!(text.contains("g1.0<0,1,0>.xyzwF"), "got: {text}");
    assert_eq!(
        assemble(&text, Gen::Gen9).expect("assembles"),
        bytes.to_vec()
    );
    // Mesa's zero swizzle prints as before and assembles to the same field.
    let mesa = "mad(8) g7<1>F g6<4,4,1>F g1.0<0,1,0>F g5<4,4,1>F { align16 1Q };";
    let native = assemble(mesa, Gen::Gen9).expect("assembles");
    let again = disassemble_program(&native, Gen::Gen9).expect("decodes");
    assert!(again.contains("g1.0<0,1,0>F"), "got: {again}");
    assert_eq!(assemble(&again, Gen::Gen9).expect("assembles"), native);
}
