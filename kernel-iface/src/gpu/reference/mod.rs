//! Reference semantics (placeholder while the EU lands).
