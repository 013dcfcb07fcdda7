//! Any text: the assembler returns bytes or an error with a position, never panics;
//! whatever assembles decodes, and its disassembly assembles to the same bytes.
#![no_main]

use ferrite_isa::{assemble, decode_program, disasm, Gen, IsaError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match assemble(text, Gen::Gen9) {
        Ok(bytes) => {
            let prog = decode_program(&bytes, Gen::Gen9).expect("assembled bytes decode");
            let again = disasm::format_program(&prog);
            let bytes2 = assemble(&again, Gen::Gen9)
                .unwrap_or_else(|e| panic!("disassembly does not assemble: {e}\n{again}"));
            assert_eq!(bytes, bytes2, "text round trip changed the bytes:\n{again}");
        }
        Err(IsaError::Asm { line, col, .. }) => {
            assert!(line >= 1 && col >= 1, "positions are 1-based");
        }
        Err(e) => panic!("assembler error without a position: {e}"),
    }
});
