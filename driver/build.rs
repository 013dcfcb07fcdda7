//! Computes a hash of the sources that decide what the driver and its compiler produce.
//! It feeds `pipelineCacheUUID`: a cache written by one build is never handed to another.

use std::fs;
use std::path::Path;

fn hash_dir(dir: &Path, hash: &mut u64) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            hash_dir(&path, hash);
        } else if path.extension().is_some_and(|e| e == "rs") {
            println!("cargo:rerun-if-changed={}", path.display());
            for b in path
                .to_string_lossy()
                .bytes()
                .chain(fs::read(&path).unwrap_or_default())
            {
                // FNV-1a, 64 bit.
                *hash ^= u64::from(b);
                *hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
}

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for dir in ["src", "../compiler/src", "../compiler/isa/src"] {
        let dir = manifest.join(dir);
        println!("cargo:rerun-if-changed={}", dir.display());
        hash_dir(&dir, &mut hash);
    }
    println!("cargo:rustc-env=FERRITE_BUILD_HASH={hash:016x}");
    // The loader dlclose()s the ICD when the last instance goes. Rust code does not survive being
    // unloaded (thread-local destructors and the process-wide logger would point into unmapped
    // code), so the library stays mapped for the life of the process, as process-wide state
    // should.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
