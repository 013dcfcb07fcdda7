//! Shader compilation (glslangValidator, spirv-as, hex) with an on-disk cache, and a small
//! SPIR-V reader for what the runner must check before creating a pipeline (the workgroup
//! memory a shader declares).

use super::ast::{Shader, ShaderFormat, Specialization, TargetEnv};
use super::AmberError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Compiles shaders, caching SPIR-V by (format, target environment, source).
pub struct Compiler {
    cache_dir: Option<PathBuf>,
    /// Time spent in external tools (cache misses only).
    pub tool_time: Duration,
    /// Wall time of `precompile` (tools run in parallel there).
    pub precompile_wall: Duration,
    pub hits: u32,
    pub misses: u32,
}

/// 64-bit FNV-1a; two of them with different seeds make the 128-bit cache key.
fn fnv1a(seed: u64, parts: &[&[u8]]) -> u64 {
    let mut h = seed;
    for p in parts {
        for &b in p.iter().chain(&[0xffu8]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

impl Compiler {
    /// `cache_dir` None disables the cache.
    pub fn new(cache_dir: Option<PathBuf>) -> Compiler {
        Compiler {
            cache_dir,
            tool_time: Duration::ZERO,
            precompile_wall: Duration::ZERO,
            hits: 0,
            misses: 0,
        }
    }

    /// The default cache: `$FERRITE_AMBER_CACHE`, else `<tmp>/ferrite-amber-cache`.
    pub fn default_cache_dir() -> PathBuf {
        std::env::var_os("FERRITE_AMBER_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| std::env::temp_dir().join("ferrite-amber-cache"))
    }

    /// Compiles one shader (from the cache when it can).
    pub fn compile(&mut self, sh: &Shader) -> Result<Vec<u32>, AmberError> {
        if sh.format == ShaderFormat::SpirvHex {
            return hex_to_words(&sh.source).map_err(|m| AmberError::Compile {
                shader: sh.name.clone(),
                msg: m,
            });
        }
        let key = cache_key(sh);
        if let Some(w) = self.lookup(&key) {
            self.hits += 1;
            return Ok(w);
        }
        self.misses += 1;
        let (r, time) = run_tools(self.cache_dir.as_deref(), &key, sh);
        self.tool_time += time;
        r
    }

    fn lookup(&self, key: &str) -> Option<Vec<u32>> {
        let dir = self.cache_dir.as_ref()?;
        let bytes = std::fs::read(dir.join(format!("{key}.spv"))).ok()?;
        bytes_to_words(&bytes).ok()
    }

    /// Fills the cache for `shaders` with `threads` tool processes at a time (cache
    /// misses only; errors are left for `compile` to report). Tool time is summed per
    /// shader, so `tool_time` stays the total compile cost, not the wall time.
    pub fn precompile(&mut self, shaders: &[Shader], threads: usize) {
        if self.cache_dir.is_none() {
            return;
        }
        let mut todo: Vec<(String, &Shader)> = Vec::new();
        for sh in shaders
            .iter()
            .filter(|s| s.format != ShaderFormat::SpirvHex)
        {
            let key = cache_key(sh);
            if self.lookup(&key).is_none() && !todo.iter().any(|(k, _)| *k == key) {
                todo.push((key, sh));
            }
        }
        let start = Instant::now();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let dir = self.cache_dir.as_deref();
        let times: Vec<Duration> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads.max(1))
                .map(|_| {
                    scope.spawn(|| {
                        let mut t = Duration::ZERO;
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some((key, sh)) = todo.get(i) else {
                                return t;
                            };
                            t += run_tools(dir, key, sh).1;
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().unwrap_or_default())
                .collect()
        });
        self.precompile_wall += start.elapsed();
        self.misses += todo.len() as u32;
        self.tool_time += times.into_iter().sum::<Duration>();
    }
}

/// The cache key: 128 bits of FNV-1a over (format, target environment, source).
fn cache_key(sh: &Shader) -> String {
    let env = sh.target_env.unwrap_or(TargetEnv::DEFAULT);
    let fmt = sh.format.to_string();
    let env_s = format!("{}/{}", env.spv_minor, env.vk_minor);
    let parts: [&[u8]; 3] = [fmt.as_bytes(), env_s.as_bytes(), sh.source.as_bytes()];
    format!(
        "{:016x}{:016x}",
        fnv1a(0xcbf2_9ce4_8422_2325, &parts),
        fnv1a(0x8422_2325_cbf2_9ce4, &parts)
    )
}

/// Runs glslangValidator or spirv-as; stores the result in the cache when there is one.
fn run_tools(
    cache_dir: Option<&Path>,
    key: &str,
    sh: &Shader,
) -> (Result<Vec<u32>, AmberError>, Duration) {
    let start = Instant::now();
    let r = run_tools_inner(cache_dir, key, sh);
    (r, start.elapsed())
}

fn run_tools_inner(
    cache_dir: Option<&Path>,
    key: &str,
    sh: &Shader,
) -> Result<Vec<u32>, AmberError> {
    let env = sh.target_env.unwrap_or(TargetEnv::DEFAULT);
    let work = match cache_dir {
        Some(d) => d.to_path_buf(),
        None => std::env::temp_dir().join("ferrite-amber-nocache"),
    };
    std::fs::create_dir_all(&work).map_err(|e| AmberError::Io(work.display().to_string(), e))?;
    // Unique names: several runners (and threads) may share the directory.
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let uniq = format!(
        "{key}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let out = work.join(format!("{uniq}.tmp.spv"));
    let (ext, mut cmd) = match sh.format {
        ShaderFormat::Glsl => {
            let mut c = Command::new("glslangValidator");
            c.arg("-V")
                .arg("--target-env")
                .arg(format!("vulkan1.{}", env.vk_minor))
                .arg("--target-env")
                .arg(format!("spirv1.{}", env.spv_minor));
            ("comp", c)
        }
        ShaderFormat::SpirvAsm => {
            let mut c = Command::new("spirv-as");
            c.arg("--target-env").arg(format!("spv1.{}", env.spv_minor));
            ("spvasm", c)
        }
        ShaderFormat::SpirvHex => {
            return hex_to_words(&sh.source).map_err(|m| AmberError::Compile {
                shader: sh.name.clone(),
                msg: m,
            })
        }
    };
    let src = work.join(format!("{uniq}.{ext}"));
    write(&src, sh.source.as_bytes())?;
    let r = run_tool(cmd.arg("-o").arg(&out).arg(&src), &sh.name);
    let _ = std::fs::remove_file(&src);
    if let Err(e) = r {
        let _ = std::fs::remove_file(&out);
        return Err(e);
    }
    let bytes = std::fs::read(&out).map_err(|e| AmberError::Io(out.display().to_string(), e))?;
    let words = bytes_to_words(&bytes).map_err(|m| AmberError::Compile {
        shader: sh.name.clone(),
        msg: m,
    });
    if cache_dir.is_some() && words.is_ok() {
        // Rename is atomic: a concurrent reader sees the whole file or none.
        let _ = std::fs::rename(&out, work.join(format!("{key}.spv")));
    } else {
        let _ = std::fs::remove_file(&out);
    }
    words
}

fn write(p: &Path, b: &[u8]) -> Result<(), AmberError> {
    std::fs::write(p, b).map_err(|e| AmberError::Io(p.display().to_string(), e))
}

fn run_tool(cmd: &mut Command, shader: &str) -> Result<(), AmberError> {
    let tool = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd.output().map_err(|e| AmberError::Io(tool.clone(), e))?;
    if !out.status.success() {
        let mut msg = String::from_utf8_lossy(&out.stdout).into_owned();
        msg.push_str(&String::from_utf8_lossy(&out.stderr));
        let msg: Vec<&str> = msg
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('/'))
            .take(6)
            .collect();
        return Err(AmberError::Compile {
            shader: shader.to_string(),
            msg: format!("{tool}: {}", msg.join(" | ")),
        });
    }
    Ok(())
}

fn bytes_to_words(b: &[u8]) -> Result<Vec<u32>, String> {
    if b.len() & 3 != 0 || b.len() < 20 {
        return Err(format!("SPIR-V of {} bytes is not a module", b.len()));
    }
    let w: Vec<u32> = b
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if w[0] != 0x0723_0203 {
        return Err(format!("bad SPIR-V magic {:#010x}", w[0]));
    }
    Ok(w)
}

/// SPIRV-HEX: hex bytes separated by blanks, in file order (so the magic reads `03 02 23 07`).
pub fn hex_to_words(src: &str) -> Result<Vec<u32>, String> {
    let mut bytes = Vec::new();
    for tok in src.split_whitespace() {
        let t = tok.strip_prefix("0x").unwrap_or(tok);
        if t.len() % 2 != 0 {
            return Err(format!("odd hex token '{tok}'"));
        }
        for i in (0..t.len()).step_by(2) {
            bytes.push(
                u8::from_str_radix(&t[i..i + 2], 16)
                    .map_err(|_| format!("bad hex token '{tok}'"))?,
            );
        }
    }
    bytes_to_words(&bytes)
}

/// Bytes of Workgroup-storage variables the module declares (specialization applied to
/// spec-constant array lengths). Counts every such variable, as drivers allocate them all.
pub fn workgroup_memory_bytes(words: &[u32], specs: &[Specialization]) -> u64 {
    const OP_DECORATE: u32 = 71;
    const OP_TYPE_INT: u32 = 21;
    const OP_TYPE_FLOAT: u32 = 22;
    const OP_TYPE_BOOL: u32 = 20;
    const OP_TYPE_VECTOR: u32 = 23;
    const OP_TYPE_MATRIX: u32 = 24;
    const OP_TYPE_ARRAY: u32 = 28;
    const OP_TYPE_STRUCT: u32 = 30;
    const OP_TYPE_POINTER: u32 = 32;
    const OP_CONSTANT: u32 = 43;
    const OP_SPEC_CONSTANT: u32 = 50;
    const OP_VARIABLE: u32 = 59;
    const SC_WORKGROUP: u32 = 4;
    const DEC_SPEC_ID: u32 = 1;

    let mut spec_id: HashMap<u32, u32> = HashMap::new();
    let mut size: HashMap<u32, u64> = HashMap::new();
    let mut consts: HashMap<u32, u64> = HashMap::new();
    let mut pointee: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut total = 0u64;
    for (op, w) in crate::spirv::instructions(words) {
        let wc = w.len();
        match op {
            OP_DECORATE if wc >= 4 && w[2] == DEC_SPEC_ID => {
                spec_id.insert(w[1], w[3]);
            }
            OP_TYPE_BOOL => {
                size.insert(w[1], 4);
            }
            OP_TYPE_INT | OP_TYPE_FLOAT => {
                size.insert(w[1], w[2] as u64 / 8);
            }
            OP_TYPE_VECTOR | OP_TYPE_MATRIX => {
                let e = size.get(&w[2]).copied().unwrap_or(4);
                size.insert(w[1], e * w[3] as u64);
            }
            OP_TYPE_ARRAY => {
                let e = size.get(&w[2]).copied().unwrap_or(4);
                let n = consts.get(&w[3]).copied().unwrap_or(1);
                size.insert(w[1], e * n);
            }
            OP_TYPE_STRUCT => {
                let s = w[2..]
                    .iter()
                    .map(|m| size.get(m).copied().unwrap_or(4))
                    .sum();
                size.insert(w[1], s);
            }
            OP_TYPE_POINTER => {
                pointee.insert(w[1], (w[2], w[3]));
            }
            OP_CONSTANT | OP_SPEC_CONSTANT if wc >= 4 => {
                let mut v = w[3] as u64;
                if op == OP_SPEC_CONSTANT {
                    if let Some(s) = spec_id
                        .get(&w[2])
                        .and_then(|id| specs.iter().find(|s| s.id == *id))
                    {
                        v = s.bits() as u64;
                    }
                }
                consts.insert(w[2], v);
            }
            OP_VARIABLE if wc >= 4 && w[3] == SC_WORKGROUP => {
                if let Some((_, t)) = pointee.get(&w[1]) {
                    total += size.get(t).copied().unwrap_or(0);
                }
            }
            _ => {}
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_words() {
        let w = hex_to_words("03 02 23 07 00 00 01 00\n00 00 00 00 01 00 00 00 00 00 00 00")
            .expect("hex");
        assert_eq!(w, vec![0x0723_0203, 0x0001_0000, 0, 1, 0]);
        assert!(hex_to_words("03 02 23").is_err());
        assert!(hex_to_words("zz").is_err());
    }

    #[test]
    fn cache_key_separates_envs() {
        let a = fnv1a(1, &[b"GLSL", b"0/0", b"x"]);
        let b = fnv1a(1, &[b"GLSL", b"3/1", b"x"]);
        let c = fnv1a(1, &[b"GLSL0", b"/0", b"x"]);
        assert_ne!(a, b);
        assert_ne!(a, c);
    }
}
