//! Generates the Gen9 command and state layouts (`src/genxml`) from Mesa's genxml description
//! (`genxml/gen9.xml`, see `genxml/SOURCES.md`).
//!
//! For every instruction, struct and register named in [`WANTED`] it emits a Rust struct with
//! one public field per genxml field, `Default` (the XML defaults: opcodes, DWord Length),
//! `pack`/`unpack` over dwords and a `Display` listing every field. Instructions also get a
//! header match (their opcode fields) so the command streamer can recognise them; together
//! they form the `Command` enum. The XML reader below handles exactly the subset of XML the
//! genxml files use (elements, double- or single-quoted attributes, comments, the prolog).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The definitions the simulator decodes and the driver emits.
const WANTED: &[&str] = &[
    // MI commands.
    "MI_NOOP",
    "MI_BATCH_BUFFER_START",
    "MI_BATCH_BUFFER_END",
    "MI_STORE_DATA_IMM",
    "MI_STORE_DATA_INDEX",
    "MI_LOAD_REGISTER_IMM",
    "MI_LOAD_REGISTER_MEM",
    "MI_LOAD_REGISTER_REG",
    "MI_STORE_REGISTER_MEM",
    "MI_SEMAPHORE_WAIT",
    "MI_COPY_MEM_MEM",
    "MI_ATOMIC",
    "MI_ARB_CHECK",
    "MI_USER_INTERRUPT",
    "MI_REPORT_PERF_COUNT",
    // Render/GPGPU pipe.
    "PIPE_CONTROL",
    "PIPELINE_SELECT",
    "STATE_BASE_ADDRESS",
    "STATE_SIP",
    "MEDIA_VFE_STATE",
    "MEDIA_CURBE_LOAD",
    "MEDIA_INTERFACE_DESCRIPTOR_LOAD",
    "GPGPU_WALKER",
    "MEDIA_STATE_FLUSH",
    "3DSTATE_CC_STATE_POINTERS",
    "3DSTATE_BINDING_TABLE_POOL_ALLOC",
    // State structures.
    "INTERFACE_DESCRIPTOR_DATA",
    "RENDER_SURFACE_STATE",
    "BINDING_TABLE_STATE",
    "SAMPLER_STATE",
    "SAMPLER_BORDER_COLOR_STATE",
    // Registers.
    "L3CNTLREG",
];

/// Names of dword-0 fields that identify an instruction (with their defaults).
const HEADER_FIELDS: &[&str] = &[
    "Command Type",
    "MI Command Opcode",
    "Command SubType",
    "3D Command Opcode",
    "3D Command Sub Opcode",
    "Pipeline",
    "Media Command Opcode",
    "SubOpcode",
];

#[derive(Debug)]
struct Element {
    name: String,
    attrs: BTreeMap<String, String>,
    children: Vec<Element>,
}

impl Element {
    fn attr(&self, k: &str) -> Option<&str> {
        self.attrs.get(k).map(|s| s.as_str())
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Parses the element tree of `text` (text content is ignored: genxml has none that matters).
fn parse_xml(text: &str) -> Element {
    let mut stack = vec![Element {
        name: "#root".into(),
        attrs: BTreeMap::new(),
        children: Vec::new(),
    }];
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        if text[i..].starts_with("<!--") {
            i += text[i..].find("-->").expect("unterminated comment") + 3;
            continue;
        }
        if text[i..].starts_with("<?") {
            i += text[i..].find("?>").expect("unterminated prolog") + 2;
            continue;
        }
        let end = i + text[i..].find('>').expect("unterminated tag");
        let tag = &text[i + 1..end];
        i = end + 1;
        if let Some(name) = tag.strip_prefix('/') {
            let e = stack.pop().expect("unbalanced xml");
            assert_eq!(e.name, name.trim(), "mismatched closing tag");
            stack.last_mut().expect("root").children.push(e);
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let mut e = Element {
            name: tag[..name_end].to_string(),
            attrs: BTreeMap::new(),
            children: Vec::new(),
        };
        let mut rest = tag[name_end..].trim_start();
        while !rest.is_empty() {
            let eq = rest.find('=').expect("attribute without value");
            let key = rest[..eq].trim().to_string();
            let after = rest[eq + 1..].trim_start();
            let q = after.chars().next().expect("attribute value");
            let close = after[1..].find(q).expect("unterminated attribute") + 1;
            e.attrs.insert(key, unescape(&after[1..close]));
            rest = after[close + 1..].trim_start();
        }
        if self_closing {
            stack.last_mut().expect("root").children.push(e);
        } else {
            stack.push(e);
        }
    }
    assert_eq!(stack.len(), 1, "unclosed elements");
    stack.pop().expect("root")
}

fn rust_ident(name: &str) -> String {
    let mut s = String::new();
    let mut last_us = true;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
            last_us = false;
        } else if !last_us {
            s.push('_');
            last_us = true;
        }
    }
    while s.ends_with('_') {
        s.pop();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    match s.as_str() {
        "type" | "mod" | "fn" | "struct" | "enum" | "match" | "ref" | "loop" | "move" => {
            format!("r#{s}")
        }
        _ => s,
    }
}

fn type_name(name: &str) -> String {
    let mut s = String::new();
    let mut up = true;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if up {
                s.push(c.to_ascii_uppercase());
            } else {
                s.push(c.to_ascii_lowercase());
            }
            up = false;
        } else {
            up = true;
        }
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'X');
    }
    s
}

fn const_name(name: &str) -> String {
    rust_ident(name)
        .trim_start_matches("r#")
        .to_ascii_uppercase()
}

fn parse_num(s: &str) -> u64 {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).expect("hex number")
    } else {
        s.parse().expect("number")
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Shifted unsigned value.
    Uint,
    /// Shifted, sign-extended value.
    Int,
    Bool,
    Float,
    /// Address/offset: the value keeps its bit positions inside the (q)word.
    Address,
    /// Must be zero / one: not a field; packed as its constant.
    Mbz,
    Mbo,
}

struct Field {
    ident: String,
    name: String,
    start: u32,
    end: u32,
    kind: Kind,
    default: Option<u64>,
    values: Vec<(String, u64)>,
}

impl Field {
    /// A member of the generated structure: not a must-be-zero/one constant.
    fn is_member(&self) -> bool {
        !matches!(self.kind, Kind::Mbz | Kind::Mbo)
    }
}

fn fields_of(e: &Element) -> Vec<Field> {
    let mut out: Vec<Field> = Vec::new();
    let push = |f: &Element, base: u32, suffix: &str, out: &mut Vec<Field>| {
        let name = f.attr("name").expect("field name").to_string();
        let start = parse_num(f.attr("start").expect("start")) as u32 + base;
        let end = parse_num(f.attr("end").expect("end")) as u32 + base;
        let ty = f.attr("type").unwrap_or("uint");
        let kind = match ty {
            "bool" => Kind::Bool,
            "int" => Kind::Int,
            "float" if end - start == 31 => Kind::Float,
            "address" | "offset" => Kind::Address,
            "mbz" => Kind::Mbz,
            "mbo" => Kind::Mbo,
            _ => Kind::Uint,
        };
        let mut ident = format!("{}{}", rust_ident(&name), suffix);
        let mut n = 1;
        while out.iter().any(|o| o.ident == ident) {
            n += 1;
            ident = format!("{}{}_{n}", rust_ident(&name), suffix);
        }
        let values = f
            .children
            .iter()
            .filter(|v| v.name == "value")
            .map(|v| {
                (
                    const_name(v.attr("name").unwrap_or("")),
                    parse_num(v.attr("value").unwrap_or("0")),
                )
            })
            .collect();
        out.push(Field {
            ident,
            name,
            start,
            end,
            kind,
            default: f.attr("default").map(parse_num),
            values,
        });
    };
    for c in &e.children {
        match c.name.as_str() {
            "field" => push(c, 0, "", &mut out),
            "group" => {
                let count = parse_num(c.attr("count").unwrap_or("0")) as u32;
                let start = parse_num(c.attr("start").unwrap_or("0")) as u32;
                let size = parse_num(c.attr("size").unwrap_or("0")) as u32;
                // Variable-length groups (count 0) are walked by hand by their users.
                for k in 0..count {
                    for f in c.children.iter().filter(|f| f.name == "field") {
                        push(f, start + k * size, &format!("_{k}"), &mut out);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn gen_item(out: &mut String, e: &Element, commands: &mut Vec<(String, String)>) {
    let name = e.attr("name").expect("name");
    let ty = type_name(name);
    let fields = fields_of(e);
    let length = e.attr("length").map(parse_num);
    let bias = e.attr("bias").map(parse_num).unwrap_or(0);
    let num = e.attr("num").map(parse_num);
    let is_insn = e.name == "instruction";
    let len_field = fields
        .iter()
        .find(|f| f.name == "DWord Length" && f.start == 0);
    let min_len = length.unwrap_or(1);

    writeln!(out, "/// `{name}` ({}, genxml gen9).", e.name).unwrap();
    writeln!(
        out,
        "#[derive(Debug, Clone, Copy, PartialEq)]\npub struct {ty} {{"
    )
    .unwrap();
    for f in fields.iter().filter(|f| f.is_member()) {
        let rty = match f.kind {
            Kind::Bool => "bool",
            Kind::Int => "i64",
            Kind::Float => "f32",
            _ => "u64",
        };
        writeln!(
            out,
            "    /// `{}` (bits {}..={}).\n    pub {}: {rty},",
            f.name, f.start, f.end, f.ident
        )
        .unwrap();
    }
    writeln!(out, "}}\n").unwrap();

    writeln!(
        out,
        "impl Default for {ty} {{\n    fn default() -> Self {{\n        {ty} {{"
    )
    .unwrap();
    for f in fields.iter().filter(|f| f.is_member()) {
        let v = match (f.kind, f.default) {
            (Kind::Bool, d) => format!("{}", d.unwrap_or(0) != 0),
            (Kind::Int, d) => format!("{}", d.unwrap_or(0) as i64),
            (Kind::Float, d) => format!("{}.0", d.unwrap_or(0)),
            (_, d) => format!("{}", d.unwrap_or(0)),
        };
        writeln!(out, "            {}: {v},", f.ident).unwrap();
    }
    writeln!(out, "        }}\n    }}\n}}\n").unwrap();

    writeln!(out, "impl {ty} {{").unwrap();
    writeln!(out, "    pub const NAME: &'static str = {name:?};").unwrap();
    writeln!(
        out,
        "    /// Length in dwords (the minimum for variable-length commands).\n    pub const LENGTH: usize = {min_len};"
    )
    .unwrap();
    if is_insn {
        writeln!(out, "    /// Added to `DWord Length` to get the length in dwords.\n    pub const BIAS: usize = {bias};").unwrap();
    }
    if let Some(n) = num {
        writeln!(
            out,
            "    /// MMIO offset.\n    pub const NUM: u32 = {n:#x};"
        )
        .unwrap();
    }
    for f in &fields {
        for (vn, vv) in &f.values {
            if vn.is_empty() {
                continue;
            }
            let mut c = format!("{}_{}", const_name(&f.name), vn);
            if c.starts_with(|ch: char| ch.is_ascii_digit()) {
                c.insert(0, '_');
            }
            writeln!(out, "    pub const {c}: u64 = {vv};").unwrap();
        }
    }
    // Header match.
    if is_insn {
        let (mut mask, mut value) = (0u32, 0u32);
        for f in fields
            .iter()
            .filter(|f| f.end < 32 && HEADER_FIELDS.contains(&f.name.as_str()))
        {
            let m = (((1u64 << (f.end - f.start + 1)) - 1) << f.start) as u32;
            mask |= m;
            value |= ((f.default.unwrap_or(0) << f.start) as u32) & m;
        }
        writeln!(
            out,
            "    /// Dword-0 bits that identify the command, and their value.\n    pub const HEADER_MASK: u32 = {mask:#010x};\n    pub const HEADER_VALUE: u32 = {value:#010x};"
        )
        .unwrap();
        commands.push((name.to_string(), ty.clone()));
        match len_field {
            Some(f) => writeln!(
                out,
                "    /// Length in dwords of the command starting with `dw0`.\n    pub fn length_of(dw0: u32) -> usize {{ ((dw0 >> {}) & {:#x}) as usize + {bias} }}",
                f.start,
                (1u64 << (f.end - f.start + 1)) - 1
            )
            .unwrap(),
            None => writeln!(
                out,
                "    /// Length in dwords of the command starting with `dw0`.\n    pub fn length_of(_dw0: u32) -> usize {{ {min_len} }}"
            )
            .unwrap(),
        }
    }
    // pack
    writeln!(
        out,
        "    /// Writes the fields into `dw` (at least `LENGTH` dwords; bits of no field become 0).\n    pub fn pack(&self, dw: &mut [u32]) {{"
    )
    .unwrap();
    writeln!(
        out,
        "        for d in dw.iter_mut().take(Self::LENGTH) {{ *d = 0; }}"
    )
    .unwrap();
    for f in &fields {
        let (s, e) = (f.start, f.end);
        match f.kind {
            Kind::Mbz => {}
            Kind::Mbo => writeln!(out, "        set_bits(dw, {s}, {e}, u64::MAX);").unwrap(),
            Kind::Bool => writeln!(
                out,
                "        set_bits(dw, {s}, {e}, self.{} as u64);",
                f.ident
            )
            .unwrap(),
            Kind::Int => writeln!(
                out,
                "        set_bits(dw, {s}, {e}, self.{} as u64);",
                f.ident
            )
            .unwrap(),
            Kind::Float => writeln!(
                out,
                "        set_bits(dw, {s}, {e}, self.{}.to_bits() as u64);",
                f.ident
            )
            .unwrap(),
            Kind::Uint => {
                writeln!(out, "        set_bits(dw, {s}, {e}, self.{});", f.ident).unwrap()
            }
            Kind::Address => {
                writeln!(out, "        set_address(dw, {s}, {e}, self.{});", f.ident).unwrap()
            }
        }
    }
    writeln!(out, "    }}").unwrap();
    writeln!(
        out,
        "    /// Packs into a new `LENGTH`-dword vector.\n    pub fn to_dwords(&self) -> Vec<u32> {{ let mut v = vec![0; Self::LENGTH]; self.pack(&mut v); v }}"
    )
    .unwrap();
    // unpack
    writeln!(
        out,
        "    /// Reads the fields from `dw` (missing dwords read as 0).\n    pub fn unpack(dw: &[u32]) -> Self {{\n        {ty} {{"
    )
    .unwrap();
    for f in fields.iter().filter(|f| f.is_member()) {
        let (s, e) = (f.start, f.end);
        let v = match f.kind {
            Kind::Bool => format!("get_bits(dw, {s}, {e}) != 0"),
            Kind::Int => format!("sign_extend(get_bits(dw, {s}, {e}), {})", e - s + 1),
            Kind::Float => format!("f32::from_bits(get_bits(dw, {s}, {e}) as u32)"),
            Kind::Address => format!("get_address(dw, {s}, {e})"),
            _ => format!("get_bits(dw, {s}, {e})"),
        };
        writeln!(out, "            {}: {v},", f.ident).unwrap();
    }
    writeln!(out, "        }}\n    }}\n}}\n").unwrap();

    // Display
    writeln!(
        out,
        "impl std::fmt::Display for {ty} {{\n    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {{\n        write!(f, \"{name}\")?;"
    )
    .unwrap();
    for fl in fields.iter().filter(|f| {
        f.is_member()
            && !(is_insn
                && f.end < 32
                && (HEADER_FIELDS.contains(&f.name.as_str()) || f.name == "DWord Length"))
    }) {
        let fmt = match fl.kind {
            Kind::Address => "{:#x}",
            Kind::Uint if fl.end - fl.start >= 15 => "{:#x}",
            _ => "{}",
        };
        let label = fl.name.replace('{', "{{").replace('}', "}}");
        writeln!(
            out,
            "        write!(f, \"\\n    {label}: {fmt}\", self.{})?;",
            fl.ident
        )
        .unwrap();
    }
    writeln!(out, "        Ok(())\n    }}\n}}\n").unwrap();
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let xml_path = manifest.join("genxml").join("gen9.xml");
    println!("cargo:rerun-if-changed={}", xml_path.display());
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(&xml_path).expect("genxml/gen9.xml");
    let root = parse_xml(&text);
    let genxml = root
        .children
        .iter()
        .find(|e| e.name == "genxml")
        .expect("<genxml> root");

    let mut out = String::new();
    out.push_str("// @generated by kernel-iface/build.rs from genxml/gen9.xml (Mesa 23.2.1, MIT). Do not edit.\n\n");
    let mut commands = Vec::new();
    for want in WANTED {
        let e = genxml
            .children
            .iter()
            .find(|e| {
                matches!(e.name.as_str(), "instruction" | "struct" | "register")
                    && e.attr("name") == Some(want)
            })
            .unwrap_or_else(|| panic!("{want} not in gen9.xml"));
        gen_item(&mut out, e, &mut commands);
    }

    // The command enum.
    out.push_str("/// Every command the simulator decodes.\n#[derive(Debug, Clone, Copy, PartialEq)]\npub enum Command {\n");
    for (_, ty) in &commands {
        writeln!(out, "    {ty}({ty}),").unwrap();
    }
    out.push_str("}\n\nimpl Command {\n");
    out.push_str("    /// Identifies the command whose first dword is `dw0`: its name and length in dwords.\n    pub fn identify(dw0: u32) -> Option<(&'static str, usize)> {\n");
    for (_, ty) in &commands {
        writeln!(
            out,
            "        if dw0 & {ty}::HEADER_MASK == {ty}::HEADER_VALUE {{ return Some(({ty}::NAME, {ty}::length_of(dw0))); }}"
        )
        .unwrap();
    }
    out.push_str("        None\n    }\n\n");
    out.push_str("    /// Decodes the command at the start of `dw` (which holds at least its whole length).\n    pub fn unpack(dw: &[u32]) -> Option<Command> {\n        let dw0 = *dw.first()?;\n");
    for (_, ty) in &commands {
        writeln!(
            out,
            "        if dw0 & {ty}::HEADER_MASK == {ty}::HEADER_VALUE {{ return Some(Command::{ty}({ty}::unpack(dw))); }}"
        )
        .unwrap();
    }
    out.push_str("        None\n    }\n\n    /// The genxml name.\n    pub fn name(&self) -> &'static str {\n        match self {\n");
    for (_, ty) in &commands {
        writeln!(out, "            Command::{ty}(_) => {ty}::NAME,").unwrap();
    }
    out.push_str("        }\n    }\n}\n\nimpl std::fmt::Display for Command {\n    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {\n        match self {\n");
    for (_, ty) in &commands {
        writeln!(out, "            Command::{ty}(c) => c.fmt(f),").unwrap();
    }
    out.push_str("        }\n    }\n}\n");

    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("genxml_gen9.rs");
    std::fs::write(dest, out).expect("write generated genxml");
}
