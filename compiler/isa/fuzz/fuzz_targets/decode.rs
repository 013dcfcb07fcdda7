//! Any bytes: decoding returns instructions or an error, never panics; whatever decodes
//! re-encodes to the same bytes, and its disassembly assembles back to them.
#![no_main]

use ferrite_isa::{assemble, compact, decode_program, disasm, encode, Gen};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for gen in [Gen::Gen9, Gen::Gen8] {
        let Ok(prog) = decode_program(data, gen) else {
            continue;
        };
        for p in &prog {
            let native = encode(&p.inst, gen).expect("a decoded instruction encodes");
            if p.compacted {
                let c: [u8; 8] = data[p.offset..p.offset + 8].try_into().unwrap();
                let un = compact::uncompact(&c, gen, p.offset).expect("uncompacts");
                assert_eq!(native, un, "uncompacted bytes re-encode exactly");
            } else {
                assert_eq!(
                    &native[..],
                    &data[p.offset..p.offset + 16],
                    "native bytes re-encode exactly"
                );
            }
        }
        // Disassembly never panics; assembling it never panics either.
        let text = disasm::format_program(&prog);
        let _ = assemble(&text, gen);
    }
});
