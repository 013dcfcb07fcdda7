//! The simulated Gen9 GPU: EU execution ([`eu`]) and the per-op reference semantics used to
//! test it ([`reference`]).

pub mod eu;
pub mod reference;
