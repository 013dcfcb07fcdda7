//! Any byte string through the front end and the pass pipeline must give IR or an error,
//! never a panic; IR that comes out must validate after every pass.
#![no_main]

use ferrite_compiler::pipeline::compile_to_ir;
use ferrite_compiler::testing::{spirv_words, validating_options};
use ferrite_compiler::{CompileError, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words = spirv_words(data);
    if let Err(CompileError::Validation { pass, err }) =
        compile_to_ir(&words, &Target::gen9(), &validating_options())
    {
        panic!("IR invalid after {pass}: {err}");
    }
});
