//! Ferrite's shader compiler: SPIR-V -> Ferrite IR -> passes -> EU backend -> Gen binary.

pub mod eval;
pub mod interp;
pub mod ir;
pub mod parse;
pub mod validate;
