//! The Intel EU instruction-set layer: the single source of truth for Gen9 machine code.
//! The compiler emits through it, the simulated GPU decodes with it, people read its
//! disassembly.
//!
//! * [`model`]: the typed instruction model ([`Instruction`], [`Operands`], [`Dst`], [`Src`],
//!   [`Type`], [`Region`], ...), exact down to every encoded bit (docs/gen9.md sections 1-2).
//! * [`codec`]: native 128-bit [`encode`] / [`codec::decode_native`]; bit positions as tables.
//! * [`compact`]: 64-bit compaction ([`compact()`], [`uncompact`]) with the Gen8/9 tables.
//! * [`program`]: [`decode`], [`decode_program`], [`encode_program`] (compaction with
//!   branch-offset fix-up).
//! * [`disasm`]: Mesa's assembly syntax ([`disassemble_program`]; `Display` of every type).
//! * [`asm`]: the assembler for that syntax ([`assemble`], [`asm::parse_program`]).
//!
//! Conventions: branch offsets (JIP/UIP) are signed byte distances from the branch itself.
//! In [`encode_program`] they are given for the native layout (16 bytes per instruction);
//! the encoder rewrites them when compaction moves instructions.

pub mod asm;
#[doc(hidden)]
pub mod cli;
pub mod codec;
pub mod compact;
pub mod disasm;
pub mod error;
pub mod model;
pub mod program;
pub mod random;
pub mod sampler_msg;
pub mod surface_format;
pub mod validate;

pub use asm::assemble;
pub use codec::encode;
pub use compact::{compact, uncompact};
pub use disasm::ProgramInst;
pub use error::{IsaError, Result};
pub use model::*;
pub use program::{decode, decode_at, decode_program, encode_program, to_native_layout};

/// Decodes `bytes` and prints it in Mesa's syntax, one instruction per line, with
/// `LABELn:` lines at branch targets.
pub fn disassemble_program(bytes: &[u8], gen: Gen) -> Result<String> {
    Ok(disasm::format_program(&decode_program(bytes, gen)?))
}
