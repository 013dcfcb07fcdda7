//! Any byte string through the front end and the pass pipeline must give IR or an error,
//! never a panic; IR that comes out must validate after every pass.
#![no_main]

use ferrite_compiler::pipeline::compile_to_ir;
use ferrite_compiler::testing::check_fuzz_input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| check_fuzz_input(data, compile_to_ir));
