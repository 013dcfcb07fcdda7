//! `ferrite-cc`'s listing is assembler input: for each kernel, the Mesa-syntax text it prints
//! (offsets, `compacted` markers, `//` comments) assembled by `ferrite-asm`'s assembler gives
//! back the binary `ferrite-cc -o` wrote, byte for byte, so branch offsets point where they
//! did.

use ferrite_compiler::backend::emit::first_difference;
use ferrite_isa::Gen;
use std::process::Command;

mod corpus;
use corpus::CORPUS as KERNELS;

#[test]
fn assembling_the_listing_reproduces_the_binary() {
    let exe = env!("CARGO_BIN_EXE_ferrite-cc");
    let dir = std::env::temp_dir().join(format!("ferrite-cc-listing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut compared = 0;
    let mut with_branches = 0;
    for (name, spv) in KERNELS {
        let input = dir.join(format!("{name}.spv"));
        std::fs::write(&input, spv).unwrap();
        for simd in ["8", "16", "32"] {
            let bin = dir.join(format!("{name}-{simd}.bin"));
            let out = Command::new(exe)
                .arg(&input)
                .args(["--simd", simd, "-o"])
                .arg(&bin)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name} SIMD{simd}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let listing = String::from_utf8(out.stdout).unwrap();
            let binary = std::fs::read(&bin).unwrap();
            let assembled = ferrite_isa::asm::assemble(&listing, Gen::Gen9)
                .unwrap_or_else(|e| panic!("{name} SIMD{simd}: {e}\n{listing}"));
            if let Some(i) = first_difference(&binary, &assembled) {
                panic!(
                    "{name} SIMD{simd}: assembled listing differs from the -o binary at byte \
                     {i:#x} ({} vs {} bytes)\n{listing}",
                    assembled.len(),
                    binary.len()
                );
            }
            assert!(listing.contains("compacted"), "{name}: {listing}");
            compared += 1;
            with_branches += usize::from(listing.contains("JIP:"));
        }
    }
    assert_eq!(compared, 3 * KERNELS.len());
    assert!(
        with_branches >= 3,
        "control flow must be among the kernels compared"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
