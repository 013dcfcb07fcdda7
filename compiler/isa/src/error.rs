//! The crate's one error enum.

use thiserror::Error;

/// Every error the ISA layer reports. Decoding errors carry the byte offset of the
/// instruction in the program; assembly errors a line and column (1-based).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IsaError {
    #[error(
        "offset {offset}: truncated instruction: {needed} bytes needed, {available} available"
    )]
    Truncated {
        offset: usize,
        needed: usize,
        available: usize,
    },
    #[error("offset {offset}: invalid opcode 0x{hw:02x} for {gen}")]
    InvalidOpcode {
        offset: usize,
        hw: u8,
        gen: crate::Gen,
    },
    #[error("offset {offset}: invalid encoding: {what}")]
    InvalidEncoding { offset: usize, what: String },
    #[error("cannot encode {opcode}: {what}")]
    Unencodable { opcode: crate::Opcode, what: String },
    #[error("{line}:{col}: {msg}")]
    Asm {
        line: usize,
        col: usize,
        msg: String,
    },
    #[error("validator not available in this build")]
    ValidatorUnavailable,
}

pub type Result<T> = std::result::Result<T, IsaError>;
