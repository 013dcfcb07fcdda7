//! The shader corpus: every compute pipeline of the Amber files (`tests/amber/**/*.amber`)
//! and the GLSL compute shaders written as string literals in the compiler's and the end-to-end
//! tests (`compiler/tests/*.rs`, `tests/tests/*.rs`), compiled once to SPIR-V with
//! glslangValidator (through the Amber runner's cached [`Compiler`]), plus a small SPIR-V
//! reflection for what a pipeline layout needs.

use crate::amber::ast::{Command, Shader, ShaderFormat};
use crate::amber::parser;
use crate::amber::shader::Compiler;
use crate::bench::json::Json;
use std::path::{Path, PathBuf};

/// One shader to compile: SPIR-V, entry point, specialization (id, 32-bit value).
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    pub spirv: Vec<u32>,
    pub entry: String,
    pub specs: Vec<(u32, u32)>,
}

/// A shader the corpus could not turn into SPIR-V.
#[derive(Clone, Debug)]
pub struct Skipped {
    pub name: String,
    pub why: String,
}

fn files_with_ext(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files_with_ext(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

/// GLSL compute shaders written as Rust string literals (`"#version ...` or `r#"#version ...`),
/// named after the `const NAME` they initialise or the short string literal just before them
/// (the `("saxpy", "#version ...")` sample tables), else their index in the file.
pub fn glsl_literals(rust: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let b = rust.as_bytes();
    let mut i = 0;
    let mut last_short: Option<String> = None;
    let mut n = 0;
    while i < b.len() {
        let raw = b[i..].starts_with(b"r#\"");
        if !(raw || b[i] == b'"') {
            if b[i..].starts_with(b"//") {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        // A string literal: find its end and its value.
        let start = i;
        let (value, end) = if raw {
            let body = i + 3;
            let close = rust[body..].find("\"#").map(|p| body + p);
            match close {
                Some(c) => (rust[body..c].to_string(), c + 2),
                None => break,
            }
        } else {
            let mut j = i + 1;
            let mut v = String::new();
            while j < b.len() && b[j] != b'"' {
                if b[j] == b'\\' && j + 1 < b.len() {
                    match b[j + 1] {
                        b'n' => v.push('\n'),
                        b't' => v.push('\t'),
                        b'"' => v.push('"'),
                        b'\\' => v.push('\\'),
                        b'\n' => {
                            // Line continuation: skip the newline and leading whitespace.
                            j += 2;
                            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                                j += 1;
                            }
                            continue;
                        }
                        c => v.push(c as char),
                    }
                    j += 2;
                    continue;
                }
                let ch_len = rust[j..].chars().next().map_or(1, char::len_utf8);
                v.push_str(&rust[j..j + ch_len]);
                j += ch_len;
            }
            (v, j + 1)
        };
        if value.starts_with("#version") && value.contains("local_size") {
            let before = rust[..start].trim_end();
            let const_name = before
                .strip_suffix('=')
                .and_then(|s| s.trim_end().strip_suffix("&str"))
                .and_then(|s| s.trim_end().strip_suffix(':'))
                .and_then(|s| s.trim_end().rsplit(|c: char| c.is_whitespace()).next())
                .map(|s| s.to_ascii_lowercase());
            let name = const_name
                .or_else(|| last_short.take())
                .unwrap_or_else(|| format!("glsl{n}"));
            out.push((name, value));
            n += 1;
        } else if value.len() <= 32
            && !value.is_empty()
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            last_short = Some(value);
        }
        i = end.max(start + 1);
    }
    out
}

/// (name, shader, entry point, specialization) before compilation.
type Pending = (String, Shader, String, Vec<(u32, u32)>);

/// Builds the corpus under the workspace `root`; `filter` keeps names containing it.
pub fn collect(root: &Path, filter: Option<&str>) -> (Vec<Entry>, Vec<Skipped>) {
    let mut compiler = Compiler::new(Some(Compiler::default_cache_dir()));
    let mut pending: Vec<Pending> = Vec::new();
    let mut skipped = Vec::new();

    let mut ambers = Vec::new();
    files_with_ext(&root.join("tests/amber"), "amber", &mut ambers);
    for path in &ambers {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let src = match std::fs::read_to_string(path) {
            Ok(s) => s,
            Err(e) => {
                skipped.push(Skipped {
                    name: stem,
                    why: e.to_string(),
                });
                continue;
            }
        };
        let script = match parser::parse(&path.display().to_string(), &src) {
            Ok(s) => s,
            Err(e) => {
                skipped.push(Skipped {
                    name: stem,
                    why: e.to_string(),
                });
                continue;
            }
        };
        let shaders: Vec<&Shader> = script
            .stmts
            .iter()
            .filter_map(|s| match &s.cmd {
                Command::Shader(sh) => Some(sh),
                _ => None,
            })
            .collect();
        let pipes: Vec<_> = script
            .stmts
            .iter()
            .filter_map(|s| match &s.cmd {
                Command::Pipeline(p) => Some(p),
                _ => None,
            })
            .collect();
        for p in &pipes {
            let Some(sh) = shaders.iter().find(|s| s.name == p.attach.shader) else {
                continue;
            };
            let name = if pipes.len() == 1 {
                stem.clone()
            } else {
                format!("{stem}/{}", p.name)
            };
            let specs = p
                .attach
                .specializations
                .iter()
                .map(|s| (s.id, s.bits()))
                .collect();
            pending.push((name, (*sh).clone(), p.attach.entry_point.clone(), specs));
        }
    }

    let mut rust_files = Vec::new();
    files_with_ext(&root.join("compiler/tests"), "rs", &mut rust_files);
    files_with_ext(&root.join("tests/tests"), "rs", &mut rust_files);
    for path in &rust_files {
        let Ok(src) = std::fs::read_to_string(path) else {
            continue;
        };
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (name, glsl) in glsl_literals(&src) {
            let sh = Shader {
                name: name.clone(),
                format: ShaderFormat::Glsl,
                target_env: None,
                source: glsl,
                line: 0,
            };
            pending.push((format!("{stem}:{name}"), sh, "main".into(), Vec::new()));
        }
    }

    pending.retain(|(n, ..)| filter.is_none_or(|f| n.contains(f)));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let shaders: Vec<Shader> = pending.iter().map(|p| p.1.clone()).collect();
    compiler.precompile(&shaders, threads);
    let mut entries: Vec<Entry> = Vec::new();
    for (name, sh, entry, specs) in pending {
        match compiler.compile(&sh) {
            Ok(spirv) => {
                let e = Entry {
                    name,
                    spirv,
                    entry,
                    specs,
                };
                // The same shader twice (a test and a sample) would only be measured twice.
                if !entries
                    .iter()
                    .any(|x| x.spirv == e.spirv && x.entry == e.entry && x.specs == e.specs)
                {
                    entries.push(e);
                }
            }
            Err(err) => skipped.push(Skipped {
                name,
                why: err.to_string(),
            }),
        }
    }
    (entries, skipped)
}

/// Writes the corpus into `dir` (`N.spv` + `corpus.json`) for the worker processes.
pub fn save(dir: &Path, entries: &[Entry]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let mut list = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let file = format!("{i}.spv");
        let bytes: Vec<u8> = e.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(dir.join(&file), bytes)?;
        let mut o = Json::obj();
        o.set("name", e.name.as_str());
        o.set("file", file);
        o.set("entry", e.entry.as_str());
        o.set(
            "specs",
            e.specs
                .iter()
                .map(|&(id, v)| Json::Arr(vec![id.into(), v.into()]))
                .collect::<Vec<_>>(),
        );
        list.push(o);
    }
    let path = dir.join("corpus.json");
    std::fs::write(&path, Json::Arr(list).to_string())?;
    Ok(path)
}

/// Reads what [`save`] wrote.
pub fn load(path: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let j = Json::parse(&text)?;
    let mut out = Vec::new();
    for e in j.as_arr() {
        let file = e.get("file").and_then(Json::as_str).unwrap_or("");
        let bytes = std::fs::read(dir.join(file)).map_err(|err| format!("{file}: {err}"))?;
        let spirv = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let specs = e
            .get("specs")
            .map(|s| {
                s.as_arr()
                    .iter()
                    .map(|p| {
                        let a = p.as_arr();
                        let g = |i: usize| a.get(i).and_then(Json::as_f64).unwrap_or(0.0) as u32;
                        (g(0), g(1))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push(Entry {
            name: e.get("name").and_then(Json::as_str).unwrap_or("").into(),
            spirv,
            entry: e
                .get("entry")
                .and_then(Json::as_str)
                .unwrap_or("main")
                .into(),
            specs,
        });
    }
    Ok(out)
}

/// The kind of descriptor a binding takes, as the shader's variable type says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescriptorKind {
    UniformBuffer,
    StorageBuffer,
    /// `OpTypeImage` with `Dim` Buffer and `Sampled` 1 (`samplerBuffer`).
    UniformTexelBuffer,
    /// `OpTypeImage` with `Dim` Buffer and `Sampled` 2 (`imageBuffer`).
    StorageTexelBuffer,
    /// `OpTypeImage` with `Sampled` 1 (a `texture2D` used with a separate sampler).
    SampledImage,
    /// `OpTypeImage` with `Sampled` 2 (`image2D`).
    StorageImage,
    /// `OpTypeSampledImage` (`sampler2D`).
    CombinedImageSampler,
    /// `OpTypeSampler`.
    Sampler,
}

/// A descriptor binding the shader declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    pub set: u32,
    pub binding: u32,
    pub kind: DescriptorKind,
    pub count: u32,
}

/// What a pipeline layout needs: the bindings and whether push constants are used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Interface {
    pub bindings: Vec<Binding>,
    pub push_constants: bool,
}

/// Reads the descriptor bindings (buffers, texel buffers, images and samplers, with array
/// sizes) and the use of push constants from SPIR-V. A layout without a binding the shader
/// uses, or with the wrong descriptor type, is invalid usage: anv crashes on it (a storage
/// texel buffer array reflected as nothing made its bench worker segfault).
pub fn reflect(words: &[u32]) -> Interface {
    use std::collections::HashMap;
    let mut set: HashMap<u32, u32> = HashMap::new();
    let mut binding: HashMap<u32, u32> = HashMap::new();
    let mut block: HashMap<u32, bool> = HashMap::new(); // struct id -> BufferBlock?
    let mut pointers: HashMap<u32, u32> = HashMap::new(); // pointer type -> pointee
    let mut arrays: HashMap<u32, (u32, Option<u32>)> = HashMap::new(); // id -> (elem, len id)
    let mut consts: HashMap<u32, u32> = HashMap::new();
    // Image types (id -> (Dim, Sampled)), sampled image types and sampler types.
    let mut images: HashMap<u32, (u32, u32)> = HashMap::new();
    let mut sampled_images: Vec<u32> = Vec::new();
    let mut samplers: Vec<u32> = Vec::new();
    let mut vars: Vec<(u32, u32, u32)> = Vec::new(); // (id, pointer type, storage class)
    for (op, w) in crate::spirv::instructions(words) {
        match (op, w.len()) {
            // OpDecorate id DescriptorSet(34)/Binding(33)/Block(2)/BufferBlock(3)
            (71, 4) if w[2] == 34 => {
                set.insert(w[1], w[3]);
            }
            (71, 4) if w[2] == 33 => {
                binding.insert(w[1], w[3]);
            }
            (71, 3) if w[2] == 2 || w[2] == 3 => {
                block.insert(w[1], w[2] == 3);
            }
            (32, 4) => {
                pointers.insert(w[1], w[3]);
            }
            (28, 4) => {
                arrays.insert(w[1], (w[2], Some(w[3])));
            }
            (29, 3) => {
                arrays.insert(w[1], (w[2], None));
            }
            (43, 4) => {
                consts.insert(w[2], w[3]);
            }
            // OpTypeImage result sampled-type Dim Depth Arrayed MS Sampled Format
            (25, n) if n >= 9 => {
                images.insert(w[1], (w[3], w[7]));
            }
            (27, 3) => sampled_images.push(w[1]),
            (26, 2) => samplers.push(w[1]),
            (59, n) if n >= 4 => vars.push((w[2], w[1], w[3])),
            _ => {}
        }
    }
    let mut out = Interface::default();
    for (id, ptr, sc) in vars {
        if sc == 9 {
            out.push_constants = true;
            continue;
        }
        // Uniform, StorageBuffer, UniformConstant (images, samplers).
        if sc != 2 && sc != 12 && sc != 0 {
            continue;
        }
        let (Some(&s), Some(&b)) = (set.get(&id), binding.get(&id)) else {
            continue;
        };
        let mut ty = pointers.get(&ptr).copied().unwrap_or(0);
        let mut count = 1;
        if let Some(&(elem, len)) = arrays.get(&ty) {
            count = len.and_then(|l| consts.get(&l).copied()).unwrap_or(1);
            ty = elem;
        }
        const DIM_BUFFER: u32 = 5;
        let kind = if sc == 0 {
            if let Some(&(dim, sampled)) = images.get(&ty) {
                match (dim == DIM_BUFFER, sampled == 2) {
                    (true, false) => DescriptorKind::UniformTexelBuffer,
                    (true, true) => DescriptorKind::StorageTexelBuffer,
                    (false, false) => DescriptorKind::SampledImage,
                    (false, true) => DescriptorKind::StorageImage,
                }
            } else if sampled_images.contains(&ty) {
                DescriptorKind::CombinedImageSampler
            } else if samplers.contains(&ty) {
                DescriptorKind::Sampler
            } else {
                // Acceleration structures and other opaque types: no compute corpus uses them.
                continue;
            }
        } else if sc == 12 || block.get(&ty).copied().unwrap_or(false) {
            DescriptorKind::StorageBuffer
        } else {
            DescriptorKind::UniformBuffer
        };
        out.bindings.push(Binding {
            set: s,
            binding: b,
            kind,
            count,
        });
    }
    out.bindings.sort_by_key(|b| (b.set, b.binding));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_glsl_literals_and_names() {
        let src = r####"
const ARITH: &str = "#version 450
layout(local_size_x = 24) in;
void main() {}";
pub const SAMPLES: &[(&str, &str)] = &[
    ("saxpy", "#version 450\nlayout(local_size_x = 64) in;\nvoid main() { }"),
];
let s = r#"#version 450
layout(local_size_x = 8) in;
void main() {}"#;
let not_glsl = "hello";
"####;
        let found = glsl_literals(src);
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["arith", "saxpy", "glsl2"]);
        assert!(found[1].1.contains("local_size_x = 64) in;\nvoid"));
        assert!(found[2].1.ends_with("void main() {}"));
    }

    #[test]
    fn reflects_bindings_and_push_constants() {
        // Hand-assembled: two SSBOs (set 0 binding 1: StorageBuffer class; set 1 binding 0:
        // Uniform + BufferBlock, an array of 3), one UBO (Block), one push-constant variable.
        let mut w = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        let mut ins = |op: u32, args: &[u32]| {
            w.push(((args.len() as u32 + 1) << 16) | op);
            w.extend_from_slice(args);
        };
        ins(71, &[10, 34, 0]);
        ins(71, &[10, 33, 1]);
        ins(71, &[11, 34, 1]);
        ins(71, &[11, 33, 0]);
        ins(71, &[12, 34, 0]);
        ins(71, &[12, 33, 2]);
        ins(71, &[20, 2]); // struct 20: Block
        ins(71, &[21, 3]); // struct 21: BufferBlock
        ins(43, &[1, 30, 3]); // constant 30 = 3
        ins(28, &[22, 21, 30]); // array of 3 x struct 21
        ins(32, &[40, 12, 20]);
        ins(32, &[41, 2, 22]);
        ins(32, &[42, 2, 20]);
        ins(32, &[43, 9, 20]);
        ins(59, &[40, 10, 12]);
        ins(59, &[41, 11, 2]);
        ins(59, &[42, 12, 2]);
        ins(59, &[43, 13, 9]);
        let r = reflect(&w);
        assert!(r.push_constants);
        assert_eq!(
            r.bindings,
            [
                Binding {
                    set: 0,
                    binding: 1,
                    kind: DescriptorKind::StorageBuffer,
                    count: 1
                },
                Binding {
                    set: 0,
                    binding: 2,
                    kind: DescriptorKind::UniformBuffer,
                    count: 1
                },
                Binding {
                    set: 1,
                    binding: 0,
                    kind: DescriptorKind::StorageBuffer,
                    count: 3
                },
            ]
        );
    }

    #[test]
    fn reflects_images_texel_buffers_and_samplers() {
        // Hand-assembled, as GLSL's `samplerBuffer` (binding 0), `imageBuffer[2]` (binding 1),
        // `image2D` (binding 2), `sampler2D` (binding 3), `texture2D` (binding 4) and
        // `sampler` (binding 5), all UniformConstant variables of set 0.
        let mut w = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        let mut ins = |op: u32, args: &[u32]| {
            w.push(((args.len() as u32 + 1) << 16) | op);
            w.extend_from_slice(args);
        };
        for (var, b) in [(60, 0), (61, 1), (62, 2), (63, 3), (64, 4), (65, 5)] {
            ins(71, &[var, 34, 0]);
            ins(71, &[var, 33, b]);
        }
        ins(22, &[1, 32]); // float
        ins(21, &[2, 32, 0]); // uint
        ins(43, &[2, 3, 2]); // constant 3 = 2
        ins(25, &[10, 1, 5, 0, 0, 0, 1, 0]); // samplerBuffer: Dim Buffer, Sampled 1
        ins(25, &[11, 1, 5, 0, 0, 0, 2, 1]); // imageBuffer rgba32f: Sampled 2
        ins(28, &[12, 11, 3]); // imageBuffer[2]
        ins(25, &[13, 1, 1, 0, 0, 0, 2, 1]); // image2D
        ins(25, &[14, 1, 1, 0, 0, 0, 1, 0]); // texture2D
        ins(27, &[15, 14]); // sampler2D
        ins(26, &[16]); // sampler
        for (ptr, ty) in [(40, 10), (41, 12), (42, 13), (43, 15), (44, 14), (45, 16)] {
            ins(32, &[ptr, 0, ty]);
        }
        for (var, ptr) in [(60, 40), (61, 41), (62, 42), (63, 43), (64, 44), (65, 45)] {
            ins(59, &[ptr, var, 0]);
        }
        let r = reflect(&w);
        assert!(!r.push_constants);
        let kinds: Vec<(u32, DescriptorKind, u32)> = r
            .bindings
            .iter()
            .map(|b| (b.binding, b.kind, b.count))
            .collect();
        assert_eq!(
            kinds,
            [
                (0, DescriptorKind::UniformTexelBuffer, 1),
                (1, DescriptorKind::StorageTexelBuffer, 2),
                (2, DescriptorKind::StorageImage, 1),
                (3, DescriptorKind::CombinedImageSampler, 1),
                (4, DescriptorKind::SampledImage, 1),
                (5, DescriptorKind::Sampler, 1),
            ]
        );
    }
}
