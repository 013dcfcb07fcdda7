//! The Intel EU instruction-set layer: the single source of truth for Gen9 machine code.
//!
//! * [`model`]: the typed instruction model ([`Instruction`], [`Operands`], [`Dst`], [`Src`],
//!   [`Type`], [`Region`], ...), exact down to every encoded bit (GEN9-FACTS sections 1-2).
//! * [`disasm`]: Mesa's assembly syntax (`Display` of every model type).

pub mod disasm;
pub mod error;
pub mod model;

pub use error::{IsaError, Result};
pub use model::*;
