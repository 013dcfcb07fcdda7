//! Ferrite's shader compiler: SPIR-V -> Ferrite IR -> passes -> EU backend -> Gen binary.
