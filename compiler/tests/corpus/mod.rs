//! The SPIR-V modules of the front end's fuzz corpus that the integration tests compile
//! (control flow, shared memory, float ops, a small kernel).

pub const CORPUS: &[(&str, &[u8])] = &[
    (
        "control",
        include_bytes!("../../fuzz/corpus/frontend/control.spv"),
    ),
    (
        "shared",
        include_bytes!("../../fuzz/corpus/frontend/shared.spv"),
    ),
    (
        "float",
        include_bytes!("../../fuzz/corpus/frontend/float.spv"),
    ),
    ("t1", include_bytes!("../../fuzz/corpus/frontend/t1.spv")),
];
