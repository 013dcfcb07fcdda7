//! The Intel EU instruction-set layer: the single source of truth for Gen9 machine code.
