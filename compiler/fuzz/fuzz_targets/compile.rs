//! Any byte string through the whole compiler (front end, passes, Gen9 back end with the ISA
//! validator) must give a kernel or an error, never a panic.
#![no_main]

use ferrite_compiler::pipeline::compile;
use ferrite_compiler::testing::check_fuzz_input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| check_fuzz_input(data, compile));
