//! Shared helpers for Ferrite's end-to-end tests and tools.
