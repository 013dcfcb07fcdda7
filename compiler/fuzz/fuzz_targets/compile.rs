//! Any byte string through the whole compiler (front end, passes, Gen9 back end with the ISA
//! validator) must give a kernel or an error, never a panic.
#![no_main]

use ferrite_compiler::pipeline::{compile, CompileOptions, DebugFlags};
use ferrite_compiler::Target;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let opts = CompileOptions {
        entry_point: "main".into(),
        debug: DebugFlags {
            validate: true,
            ..Default::default()
        },
        ..Default::default()
    };
    if let Err(ferrite_compiler::CompileError::Validation { pass, err }) =
        compile(&words, &Target::gen9(), &opts)
    {
        panic!("IR invalid after {pass}: {err}");
    }
});
