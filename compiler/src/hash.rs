//! The compiler's hash maps and sets. Their keys are small integers (IR value numbers,
//! SPIR-V ids) and tuples of them, hashed millions of times for a large shader: with the
//! standard library's default hasher (SipHash, built to resist collision attacks on
//! untrusted keys) hashing alone was about a tenth of a compile. FxHash, rustc's own hasher,
//! is a multiply and a rotate per word. No pass depends on iteration order (with the
//! standard hasher it was random per process already); with FxHash it is fixed.

pub use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
