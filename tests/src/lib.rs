//! Shared helpers for Ferrite's end-to-end tests and tools.
pub mod amber;
pub mod bench;
pub mod icd;
pub mod rng;
pub mod spirv;

/// A new, empty temporary directory `<tmp>/<prefix>-<pid>-<n>`, unique per call: tests run on
/// parallel threads and may compile shaders of the same name, and a shared file could be read
/// while another thread rewrites it.
pub fn fresh_temp_dir(prefix: &str) -> std::io::Result<std::path::PathBuf> {
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
