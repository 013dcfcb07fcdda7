//! Any byte string through the whole compiler (front end, passes, Gen9 back end with the ISA
//! validator) must give a kernel or an error, never a panic.
#![no_main]

use ferrite_compiler::pipeline::compile;
use ferrite_compiler::testing::{spirv_words, validating_options};
use ferrite_compiler::{CompileError, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words = spirv_words(data);
    if let Err(CompileError::Validation { pass, err }) =
        compile(&words, &Target::gen9(), &validating_options())
    {
        panic!("IR invalid after {pass}: {err}");
    }
});
