//! Shared helpers for Ferrite's end-to-end tests and tools.
pub mod amber;
pub mod bench;
pub mod icd;
