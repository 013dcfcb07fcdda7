//! AmberScript parser for the compute subset: tokens -> [`Script`].
//!
//! Names are checked as the script goes (a buffer must be declared before a pipeline binds
//! it). Constructs outside the compute subset (graphics pipelines, attachments, probes, ...)
//! give [`ParseError::Unsupported`], which the runner reports as SKIP.

use super::ast::*;
use super::format::{self, ImageFormat};
use super::lexer::{Lexer, Token, TokenKind};
use std::collections::HashMap;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum ParseError {
    #[error("{file}:{line}: {token}: {msg}")]
    Syntax {
        file: String,
        line: usize,
        token: String,
        msg: String,
    },
    #[error("{file}:{line}: unsupported: {what}")]
    Unsupported {
        file: String,
        line: usize,
        what: String,
    },
}

type PResult<T> = Result<T, ParseError>;

/// Parses a whole script. `file` is used in error messages only.
pub fn parse(file: &str, src: &str) -> PResult<Script> {
    Parser::new(file, src).script()
}

struct Parser<'a> {
    file: String,
    lx: Lexer<'a>,
    shaders: HashMap<String, ()>,
    buffers: HashMap<String, DataType>,
    /// Buffers with an image format, and whether they are `IMAGE`s.
    formats: HashMap<String, bool>,
    samplers: HashMap<String, ()>,
    pipelines: HashMap<String, ()>,
    features: Vec<String>,
}

impl<'a> Parser<'a> {
    fn new(file: &str, src: &'a str) -> Self {
        Parser {
            file: file.to_string(),
            lx: Lexer::new(src),
            shaders: HashMap::new(),
            buffers: HashMap::new(),
            formats: HashMap::new(),
            samplers: HashMap::new(),
            pipelines: HashMap::new(),
            features: Vec::new(),
        }
    }

    fn err<T>(&self, t: &Token, msg: impl Into<String>) -> PResult<T> {
        Err(ParseError::Syntax {
            file: self.file.clone(),
            line: t.line,
            token: t.to_string(),
            msg: msg.into(),
        })
    }

    fn unsupported<T>(&self, t: &Token, what: impl Into<String>) -> PResult<T> {
        Err(ParseError::Unsupported {
            file: self.file.clone(),
            line: t.line,
            what: what.into(),
        })
    }

    fn ident(&mut self, what: &str) -> PResult<Token> {
        let t = self.lx.next();
        if t.kind != TokenKind::Ident {
            return self.err(&t, format!("expected {what}"));
        }
        Ok(t)
    }

    /// A name: any word that is not a line end (Amber names are blank-delimited ASCII).
    fn name(&mut self, what: &str) -> PResult<Token> {
        let t = self.lx.next();
        if t.is_eol() {
            return self.err(&t, format!("expected {what}"));
        }
        Ok(t)
    }

    fn keyword(&mut self, kw: &str) -> PResult<Token> {
        let t = self.lx.next();
        if !t.is_ident(kw) {
            return self.err(&t, format!("expected {kw}"));
        }
        Ok(t)
    }

    fn eol(&mut self) -> PResult<()> {
        let t = self.lx.next();
        if !t.is_eol() {
            return self.err(&t, "extra token, expected end of line");
        }
        Ok(())
    }

    fn uint(&mut self, what: &str) -> PResult<u64> {
        let t = self.lx.next();
        match t.kind {
            TokenKind::Int(v) if (0..=u64::MAX as i128).contains(&v) => Ok(v as u64),
            _ => self.err(&t, format!("expected {what} (a non-negative integer)")),
        }
    }

    fn u32(&mut self, what: &str) -> PResult<u32> {
        let t = self.lx.peek().clone();
        let v = self.uint(what)?;
        u32::try_from(v).or_else(|_| self.err(&t, format!("{what} does not fit in 32 bits")))
    }

    fn number(&mut self, what: &str) -> PResult<f64> {
        let t = self.lx.next();
        match t.kind {
            TokenKind::Int(v) => Ok(v as f64),
            TokenKind::Float(v) => Ok(v),
            _ => self.err(&t, format!("expected {what} (a number)")),
        }
    }

    /// A value for an element of scalar type `s`: floats only for float types.
    fn value_for(&self, t: &Token, s: Scalar) -> PResult<Value> {
        match t.kind {
            TokenKind::Int(v) => Ok(Value::Int(v)),
            TokenKind::Float(v) if s.is_float() => Ok(Value::Float(v)),
            // CTS files write integer data as `0.0`; a whole-valued float is that integer.
            TokenKind::Float(v) if v.fract() == 0.0 && v.abs() < 1.8e19 => {
                Ok(Value::Int(v as i128))
            }
            TokenKind::Float(_) => self.err(t, format!("a float value for {s} data")),
            _ => self.err(t, format!("expected a {s} value")),
        }
    }

    fn buffer_ref(&mut self) -> PResult<(Token, DataType)> {
        let t = self.name("buffer name")?;
        match self.buffers.get(&t.text) {
            Some(ty) => Ok((t.clone(), *ty)),
            None => self.err(&t, "unknown buffer"),
        }
    }

    fn script(mut self) -> PResult<Script> {
        let first = self.lx.line_text(1).trim_end();
        if first != "#!amber" {
            let t = Token {
                kind: TokenKind::Ident,
                text: first.to_string(),
                line: 1,
            };
            return self.err(&t, "an AmberScript file must start with #!amber");
        }
        let mut script = Script::default();
        let mut n = 1;
        loop {
            let l = self.lx.line_text(n);
            if !l.starts_with('#') {
                break;
            }
            if let Some(r) = l
                .trim_start_matches('#')
                .trim()
                .strip_prefix("ferrite-only:")
            {
                script.ferrite_only = Some(r.trim().to_string());
            }
            n += 1;
        }
        loop {
            let t = self.lx.next();
            match t.kind {
                TokenKind::Eof => return Ok(script),
                TokenKind::Eol => continue,
                _ => {}
            }
            let line = t.line;
            let cmd = self.command(t, false)?;
            script.stmts.push(Stmt { line, cmd });
        }
    }

    fn command(&mut self, t: Token, in_repeat: bool) -> PResult<Command> {
        if t.kind != TokenKind::Ident {
            return self.err(&t, "expected a command");
        }
        let top_only = |p: &Self| -> PResult<()> {
            if in_repeat {
                return p.err(&t, "not allowed inside REPEAT");
            }
            Ok(())
        };
        let cmd = match t.text.as_str() {
            "DEVICE_FEATURE" => {
                top_only(self)?;
                let n = self.ident("feature name")?;
                self.features.push(n.text.clone());
                self.eol()?;
                Command::DeviceFeature(n.text)
            }
            "DEVICE_PROPERTY" => {
                top_only(self)?;
                let n = self.ident("property name")?;
                if !n.text.contains('.') {
                    return self.err(&n, "property names are Struct.member");
                }
                self.eol()?;
                Command::DeviceProperty(n.text)
            }
            "DEVICE_EXTENSION" | "INSTANCE_EXTENSION" => {
                top_only(self)?;
                let n = self.ident("extension name")?;
                self.eol()?;
                if t.text == "DEVICE_EXTENSION" {
                    Command::DeviceExtension(n.text)
                } else {
                    Command::InstanceExtension(n.text)
                }
            }
            "SET" => {
                top_only(self)?;
                self.keyword("ENGINE_DATA")?;
                let v = self.ident("engine data variable")?;
                if v.text != "fence_timeout_ms" {
                    return self.err(&v, "unknown engine data variable");
                }
                let ms = self.u32("fence timeout")?;
                self.eol()?;
                Command::FenceTimeout(ms)
            }
            "SHADER" => {
                top_only(self)?;
                Command::Shader(self.shader(&t)?)
            }
            "BUFFER" => {
                top_only(self)?;
                Command::Buffer(self.buffer(&t)?)
            }
            "IMAGE" => {
                top_only(self)?;
                Command::Buffer(self.image()?)
            }
            "SAMPLER" => {
                top_only(self)?;
                Command::Sampler(self.sampler()?)
            }
            "PIPELINE" => {
                top_only(self)?;
                Command::Pipeline(self.pipeline(&t)?)
            }
            "RUN" => self.run()?,
            "COPY" => {
                let (a, ta) = self.buffer_ref()?;
                self.keyword("TO")?;
                let (b, tb) = self.buffer_ref()?;
                if ta != tb {
                    return self.err(&b, format!("COPY between different types ({ta} and {tb})"));
                }
                self.eol()?;
                Command::Copy {
                    from: a.text,
                    to: b.text,
                }
            }
            "REPEAT" => {
                let count = self.u32("repeat count")?;
                self.eol()?;
                let mut body = Vec::new();
                loop {
                    let t = self.lx.next();
                    match t.kind {
                        TokenKind::Eol => continue,
                        TokenKind::Eof => return self.err(&t, "REPEAT without END"),
                        _ => {}
                    }
                    if t.is_ident("END") {
                        self.eol()?;
                        break;
                    }
                    let line = t.line;
                    let cmd = self.command(t, true)?;
                    body.push(Stmt { line, cmd });
                }
                Command::Repeat { count, body }
            }
            "EXPECT" => Command::Expect(self.expect()?),
            "DERIVE_PIPELINE"
            | "VIRTUAL_FILE"
            | "CLEAR"
            | "CLEAR_COLOR"
            | "CLEAR_DEPTH"
            | "CLEAR_STENCIL"
            | "DEBUG"
            | "ACCELERATION_STRUCTURE"
            | "SHADER_BINDING_TABLE" => {
                return self.unsupported(&t, format!("{} (outside the compute subset)", t.text))
            }
            _ => return self.err(&t, "unknown command"),
        };
        Ok(cmd)
    }

    fn shader(&mut self, _kw: &Token) -> PResult<Shader> {
        let ty = self.ident("shader type")?;
        if ty.text != "compute" {
            return self.unsupported(&ty, format!("{} shaders (compute subset only)", ty.text));
        }
        let name = self.name("shader name")?;
        if self.shaders.contains_key(&name.text) {
            return self.err(&name, "duplicate shader name");
        }
        let fmt_tok = self.ident("shader format")?;
        let format = match fmt_tok.text.as_str() {
            "GLSL" => ShaderFormat::Glsl,
            "SPIRV-ASM" => ShaderFormat::SpirvAsm,
            "SPIRV-HEX" => ShaderFormat::SpirvHex,
            "HLSL" | "OPENCL-C" | "SPIRV-BIN" | "PASSTHROUGH" => {
                return self.unsupported(&fmt_tok, format!("{} shaders", fmt_tok.text))
            }
            _ => return self.err(&fmt_tok, "unknown shader format"),
        };
        let mut target_env = None;
        let t = self.lx.next();
        if t.is_ident("TARGET_ENV") {
            let e = self.name("target environment")?;
            target_env = Some(
                TargetEnv::parse(&e.text)
                    .map_or_else(|| self.err(&e, "unknown target environment"), Ok)?,
            );
            self.eol()?;
        } else if t.is_ident("FILE") || t.is_ident("VIRTUAL_FILE") {
            return self.unsupported(&t, "shader source from a file");
        } else if !t.is_eol() {
            return self.err(&t, "extra token, expected end of line");
        }
        let Some((source, _)) = self.lx.raw_block() else {
            return self.err(&name, "SHADER without END");
        };
        self.shaders.insert(name.text.clone(), ());
        Ok(Shader {
            name: name.text,
            format,
            target_env,
            source,
            line: name.line,
        })
    }

    fn data_type(&mut self) -> PResult<DataType> {
        let t = self.ident("data type")?;
        let (mut s, array) = match t.text.strip_suffix("[]") {
            Some(b) => (b, true),
            None => (t.text.as_str(), false),
        };
        let (mut rows, mut cols) = (1, 1);
        if let Some(rest) = s.strip_prefix("vec") {
            let (n, inner) = rest
                .split_once('<')
                .ok_or(())
                .or_else(|_| self.err(&t, "malformed vector type"))?;
            rows = n.parse().unwrap_or(0);
            s = inner
                .strip_suffix('>')
                .map_or_else(|| self.err(&t, "malformed vector type"), Ok)?;
        } else if let Some(rest) = s.strip_prefix("mat") {
            let (cr, inner) = rest
                .split_once('<')
                .ok_or(())
                .or_else(|_| self.err(&t, "malformed matrix type"))?;
            let (c, r) = cr
                .split_once('x')
                .ok_or(())
                .or_else(|_| self.err(&t, "malformed matrix type"))?;
            cols = c.parse().unwrap_or(0);
            rows = r.parse().unwrap_or(0);
            if !(2..=4).contains(&cols) {
                return self.err(&t, "matrix columns must be 2..4");
            }
            s = inner
                .strip_suffix('>')
                .map_or_else(|| self.err(&t, "malformed matrix type"), Ok)?;
        }
        if !(1..=4).contains(&rows)
            || (rows == 1 && s.len() != t.text.len() - if array { 2 } else { 0 })
        {
            return self.err(&t, "vector size must be 2..4");
        }
        let Some(scalar) = Scalar::from_name(s) else {
            if ["R8G8B8A8_UNORM", "B8G8R8A8_UNORM", "R32G32B32A32_SFLOAT"].contains(&s)
                || s.contains('_')
            {
                return self.unsupported(&t, format!("image format {s}"));
            }
            return self.err(&t, "unknown data type");
        };
        Ok(DataType {
            scalar,
            rows,
            cols,
            array,
        })
    }

    fn buffer(&mut self, _kw: &Token) -> PResult<Buffer> {
        let name = self.name("buffer name")?;
        if self.buffers.contains_key(&name.text) {
            return self.err(&name, "duplicate buffer name");
        }
        let t = self.ident("DATA_TYPE")?;
        if t.text == "FORMAT" {
            return self.unsupported(
                &t,
                "BUFFER ... FORMAT (attachment-sized buffers; use IMAGE or DATA_TYPE <format>)",
            );
        }
        if t.text != "DATA_TYPE" {
            return self.err(&t, "expected DATA_TYPE");
        }
        let fmt = match self.lx.peek().clone() {
            f if f.kind == TokenKind::Ident && format::looks_like_format(&f.text) => {
                self.lx.next();
                Some(self.image_format(&f)?)
            }
            _ => None,
        };
        let ty = match fmt {
            Some(f) => f.ty,
            None => self.data_type()?,
        };
        let mut layout = Layout::Std430;
        let mut t = self.lx.next();
        if t.is_ident("STD140") || t.is_ident("STD430") {
            layout = if t.text == "STD140" {
                Layout::Std140
            } else {
                Layout::Std430
            };
            t = self.lx.next();
        }
        let init = if t.is_ident("SIZE") {
            let size = self.uint("buffer size")?;
            let k = self.ident("FILL or SERIES_FROM")?;
            match k.text.as_str() {
                "FILL" => {
                    let v = self.lx.next();
                    let value = self.value_for(&v, ty.scalar)?;
                    BufferInit::Fill { size, value }
                }
                "SERIES_FROM" => {
                    let v = self.lx.next();
                    let from = self.value_for(&v, ty.scalar)?;
                    self.keyword("INC_BY")?;
                    let v = self.lx.next();
                    let inc = self.value_for(&v, ty.scalar)?;
                    BufferInit::Series { size, from, inc }
                }
                "FILE" => return self.unsupported(&k, "buffer data from a file"),
                _ => return self.err(&k, "expected FILL or SERIES_FROM"),
            }
        } else if t.is_ident("DATA") {
            let mut values = Vec::new();
            loop {
                let v = self.lx.next();
                match v.kind {
                    TokenKind::Eol => continue,
                    TokenKind::Eof => return self.err(&v, "DATA without END"),
                    _ => {}
                }
                if v.is_ident("END") {
                    break;
                }
                values.push(self.value_for(&v, ty.scalar)?);
            }
            BufferInit::Data(values)
        } else if t.is_ident("WIDTH") {
            return self.unsupported(&t, "WIDTH/HEIGHT buffers");
        } else {
            return self.err(&t, "expected SIZE or DATA");
        };
        self.eol()?;
        if let Some(f) = fmt {
            self.check_packed_init(&name, f, &init)?;
            self.formats.insert(name.text.clone(), false);
        }
        self.buffers.insert(name.text.clone(), ty);
        Ok(Buffer {
            name: name.text,
            ty,
            layout,
            init,
            format: fmt,
            image: None,
            line: name.line,
        })
    }

    fn image_format(&self, t: &Token) -> PResult<ImageFormat> {
        match format::lookup(&t.text) {
            Some(f) => Ok(f),
            None => self.unsupported(t, format!("image format {}", t.text)),
        }
    }

    /// Packed formats take values only where they need no splitting into bit fields.
    fn check_packed_init(&self, name: &Token, f: ImageFormat, init: &BufferInit) -> PResult<()> {
        let zero = |v: &Value| v.as_f64() == 0.0;
        let ok = match init {
            BufferInit::Fill { value, .. } => zero(value),
            BufferInit::Series { .. } => false,
            BufferInit::Data(v) => v.iter().all(zero),
        };
        if f.packed && !ok {
            return self.unsupported(
                name,
                format!("values for the packed format {} (only zero fills)", f.name),
            );
        }
        Ok(())
    }

    /// `IMAGE name (FORMAT f | DATA_TYPE t) [MIP_LEVELS n] DIM_xD WIDTH w [HEIGHT h [DEPTH d]]
    /// initializer`, the options in any order before the initializer, as Amber takes them.
    fn image(&mut self) -> PResult<Buffer> {
        let name = self.name("image name")?;
        if self.buffers.contains_key(&name.text) {
            return self.err(&name, "duplicate buffer name");
        }
        let mut fmt: Option<ImageFormat> = None;
        let (mut dim, mut width, mut height, mut depth, mut mips) = (None, None, None, None, 1);
        let init = loop {
            let t = self.lx.next();
            match t.text.as_str() {
                _ if t.is_eol() => return self.err(&t, "IMAGE without an initializer"),
                "FORMAT" => {
                    let f = self.ident("image format")?;
                    fmt = Some(self.image_format(&f)?);
                }
                "DATA_TYPE" => {
                    let tt = self.lx.peek().clone();
                    let ty = self.data_type()?;
                    match format::for_data_type(&ty) {
                        Some(f) => fmt = Some(f),
                        None => return self.unsupported(&tt, format!("IMAGE DATA_TYPE {ty}")),
                    }
                }
                "MIP_LEVELS" => {
                    mips = self.u32("mip levels")?;
                    if mips == 0 {
                        return self.err(&t, "MIP_LEVELS must be positive");
                    }
                }
                "SAMPLES" => {
                    let n = self.u32("sample count")?;
                    if n != 1 {
                        return self.unsupported(&t, "multisampled images");
                    }
                }
                "DIM_1D" => dim = Some(ImageDim::D1),
                "DIM_2D" => dim = Some(ImageDim::D2),
                "DIM_3D" => dim = Some(ImageDim::D3),
                "WIDTH" | "HEIGHT" | "DEPTH" => {
                    let v = self.u32("image size")?;
                    if v == 0 {
                        return self.err(&t, "image sizes must be positive");
                    }
                    match t.text.as_str() {
                        "WIDTH" => width = Some(v),
                        "HEIGHT" => height = Some(v),
                        _ => depth = Some(v),
                    }
                }
                "FILL" | "SERIES_FROM" | "DATA" => break t,
                "FILE" => return self.unsupported(&t, "image data from a file"),
                _ => return self.err(&t, "unexpected token in IMAGE"),
            }
        };
        let Some(fmt) = fmt else {
            return self.err(&name, "IMAGE needs FORMAT or DATA_TYPE");
        };
        let Some(dim) = dim else {
            return self.err(&name, "IMAGE needs DIM_1D, DIM_2D or DIM_3D");
        };
        let Some(width) = width else {
            return self.err(&name, "IMAGE needs WIDTH");
        };
        let need = |h: Option<u32>, what: &str, p: &Self| -> PResult<u32> {
            h.map_or_else(|| p.err(&name, format!("IMAGE {dim} needs {what}")), Ok)
        };
        let (height, depth) = match dim {
            ImageDim::D1 => (1, 1),
            ImageDim::D2 => (need(height, "HEIGHT", self)?, 1),
            ImageDim::D3 => (need(height, "HEIGHT", self)?, need(depth, "DEPTH", self)?),
        };
        let desc = ImageDesc {
            dim,
            width,
            height,
            depth,
            mip_levels: mips,
        };
        let size = desc.texels();
        let s = fmt.ty.scalar;
        let init = match init.text.as_str() {
            "FILL" => {
                let v = self.lx.next();
                BufferInit::Fill {
                    size,
                    value: self.value_for(&v, s)?,
                }
            }
            "SERIES_FROM" => {
                let v = self.lx.next();
                let from = self.value_for(&v, s)?;
                self.keyword("INC_BY")?;
                let v = self.lx.next();
                let inc = self.value_for(&v, s)?;
                BufferInit::Series { size, from, inc }
            }
            _ => {
                let mut values = Vec::new();
                loop {
                    let v = self.lx.next();
                    match v.kind {
                        TokenKind::Eol => continue,
                        TokenKind::Eof => return self.err(&v, "DATA without END"),
                        _ => {}
                    }
                    if v.is_ident("END") {
                        break;
                    }
                    values.push(self.value_for(&v, s)?);
                }
                if values.len() as u64 > size * fmt.ty.rows as u64 {
                    return self.err(&name, "more DATA values than the image has components");
                }
                BufferInit::Data(values)
            }
        };
        self.eol()?;
        self.check_packed_init(&name, fmt, &init)?;
        self.buffers.insert(name.text.clone(), fmt.ty);
        self.formats.insert(name.text.clone(), true);
        Ok(Buffer {
            name: name.text,
            ty: fmt.ty,
            layout: Layout::Std430,
            init,
            format: Some(fmt),
            image: Some(desc),
            line: name.line,
        })
    }

    /// `SAMPLER name [options]` (see [`Sampler`]); `COMPARE on` (depth comparison) is
    /// outside the compute subset Ferrite's runner models.
    fn sampler(&mut self) -> PResult<Sampler> {
        let name = self.name("sampler name")?;
        if self.samplers.contains_key(&name.text) {
            return self.err(&name, "duplicate sampler name");
        }
        let mut s = Sampler::new(name.text.clone(), name.line);
        loop {
            let t = self.lx.next();
            if t.is_eol() {
                break;
            }
            fn pick<T: Copy>(table: &[(&str, T)], w: &str) -> Option<T> {
                table.iter().find(|(n, _)| *n == w).map(|(_, v)| *v)
            }
            match t.text.as_str() {
                "MAG_FILTER" | "MIN_FILTER" => {
                    let v = self.ident("filter")?;
                    let Some(f) = pick(FILTERS, &v.text) else {
                        return self.err(&v, "filter must be nearest or linear");
                    };
                    if t.text == "MAG_FILTER" {
                        s.mag_filter = f;
                    } else {
                        s.min_filter = f;
                    }
                }
                "ADDRESS_MODE_U" | "ADDRESS_MODE_V" | "ADDRESS_MODE_W" => {
                    let v = self.ident("address mode")?;
                    let Some(m) = pick(ADDRESS_MODES, &v.text) else {
                        return self.err(&v, "unknown address mode");
                    };
                    let axis = match t.text.as_str() {
                        "ADDRESS_MODE_U" => 0,
                        "ADDRESS_MODE_V" => 1,
                        _ => 2,
                    };
                    s.address[axis] = m;
                }
                "BORDER_COLOR" => {
                    let v = self.ident("border color")?;
                    let Some(c) = pick(BORDER_COLORS, &v.text) else {
                        return self.err(&v, "unknown border color");
                    };
                    s.border = c;
                }
                "MIN_LOD" => s.min_lod = self.number("MIN_LOD")?,
                "MAX_LOD" => s.max_lod = self.number("MAX_LOD")?,
                "NORMALIZED_COORDS" => s.normalized = true,
                "UNNORMALIZED_COORDS" => {
                    s.normalized = false;
                    s.min_lod = 0.0;
                    s.max_lod = 0.0;
                }
                "COMPARE" => {
                    if self.on_off()? {
                        return self.unsupported(&t, "depth-compare samplers");
                    }
                }
                "COMPARE_OP" => {
                    self.ident("compare op")?;
                }
                _ => return self.err(&t, "unknown SAMPLER option"),
            }
        }
        if s.max_lod < s.min_lod {
            return self.err(&name, "MAX_LOD is below MIN_LOD");
        }
        self.samplers.insert(name.text.clone(), ());
        Ok(s)
    }

    fn pipeline(&mut self, _kw: &Token) -> PResult<Pipeline> {
        let ty = self.ident("pipeline type")?;
        if ty.text != "compute" {
            return self.unsupported(&ty, format!("{} pipelines (compute subset only)", ty.text));
        }
        let name = self.name("pipeline name")?;
        if self.pipelines.contains_key(&name.text) {
            return self.err(&name, "duplicate pipeline name");
        }
        self.eol()?;
        let mut attach: Option<Attach> = None;
        let mut binds: Vec<DescriptorBind> = Vec::new();
        let mut push_constant = None;
        let mut subgroup = None;
        loop {
            let t = self.lx.next();
            match t.kind {
                TokenKind::Eol => continue,
                TokenKind::Eof => return self.err(&t, "PIPELINE without END"),
                _ => {}
            }
            match t.text.as_str() {
                "END" => {
                    self.eol()?;
                    break;
                }
                "ATTACH" => {
                    if attach.is_some() {
                        return self.err(&t, "a compute pipeline takes one shader");
                    }
                    attach = Some(self.attach()?);
                }
                "BIND" => {
                    let k = self.ident("BUFFER or BUFFER_ARRAY")?;
                    if k.text == "ACCELERATION_STRUCTURE" {
                        return self.unsupported(&k, format!("BIND {}", k.text));
                    }
                    let bound = match k.text.as_str() {
                        "BUFFER" | "BUFFER_ARRAY" => self.bind(k.text == "BUFFER_ARRAY")?,
                        "SAMPLER" | "SAMPLER_ARRAY" => {
                            self.bind_sampler(k.text == "SAMPLER_ARRAY")?
                        }
                        _ => return self.err(&k, "expected BUFFER, BUFFER_ARRAY or SAMPLER"),
                    };
                    match bound {
                        Bound::Descriptor(b) => {
                            if let Some(o) = binds
                                .iter()
                                .find(|o| o.set == b.set && o.binding == b.binding)
                            {
                                let _ = o;
                                return self.err(
                                    &t,
                                    format!(
                                        "descriptor set {} binding {} bound twice",
                                        b.set, b.binding
                                    ),
                                );
                            }
                            binds.push(b)
                        }
                        Bound::Push(n) => {
                            if push_constant.is_some() {
                                return self.err(&n, "only one push_constant buffer per pipeline");
                            }
                            push_constant = Some(n.text);
                        }
                    }
                }
                "SUBGROUP" => {
                    if subgroup.is_some() {
                        return self.err(&t, "duplicate SUBGROUP block");
                    }
                    subgroup = Some(self.subgroup()?);
                }
                "SHADER_OPTIMIZATION"
                | "COMPILE_OPTIONS"
                | "POLYGON_MODE"
                | "FRAMEBUFFER_SIZE"
                | "VERTEX_DATA"
                | "INDEX_DATA" => return self.unsupported(&t, format!("{} in a pipeline", t.text)),
                _ => return self.err(&t, "unknown pipeline command"),
            }
        }
        let Some(attach) = attach else {
            return self.err(&name, "pipeline has no ATTACH");
        };
        if let Some(s) = &subgroup {
            if s.shader != attach.shader {
                return self.err(
                    &name,
                    format!("SUBGROUP names shader {} which is not attached", s.shader),
                );
            }
        }
        self.pipelines.insert(name.text.clone(), ());
        Ok(Pipeline {
            name: name.text,
            attach,
            binds,
            push_constant,
            subgroup,
            line: name.line,
        })
    }

    fn shader_ref(&mut self) -> PResult<Token> {
        let t = self.name("shader name")?;
        if !self.shaders.contains_key(&t.text) {
            return self.err(&t, "unknown shader");
        }
        Ok(t)
    }

    fn attach(&mut self) -> PResult<Attach> {
        let shader = self.shader_ref()?;
        let mut a = Attach {
            shader: shader.text,
            entry_point: "main".into(),
            specializations: Vec::new(),
        };
        loop {
            let t = self.lx.next();
            if t.is_eol() {
                return Ok(a);
            }
            match t.text.as_str() {
                "ENTRY_POINT" => a.entry_point = self.name("entry point name")?.text,
                "TYPE" => {
                    let ty = self.ident("shader type")?;
                    if ty.text != "compute" {
                        return self.unsupported(&ty, "multi-stage shaders");
                    }
                }
                "SPECIALIZE" => {
                    let id = self.u32("specialization id")?;
                    self.keyword("AS")?;
                    let ty = self.ident("uint32, int32 or float")?;
                    let ty = match ty.text.as_str() {
                        "uint32" => SpecType::U32,
                        "int32" => SpecType::I32,
                        "float" => SpecType::F32,
                        _ => {
                            return self
                                .err(&ty, "specialization type must be uint32, int32 or float")
                        }
                    };
                    let v = self.lx.next();
                    let value = self.value_for(
                        &v,
                        if ty == SpecType::F32 {
                            Scalar::F32
                        } else {
                            Scalar::U32
                        },
                    )?;
                    a.specializations.push(Specialization { id, ty, value });
                }
                _ => return self.err(&t, "expected ENTRY_POINT or SPECIALIZE"),
            }
        }
    }

    fn bind(&mut self, array: bool) -> PResult<Bound> {
        let mut buffers = Vec::new();
        loop {
            let t = self.lx.peek().clone();
            if t.is_ident("AS") || t.is_eol() {
                break;
            }
            let (b, _) = self.buffer_ref()?;
            buffers.push(b.text);
            if !array {
                break;
            }
        }
        let first = self.lx.peek().clone();
        if buffers.is_empty() {
            return self.err(&first, "expected a buffer name");
        }
        let as_t = self.lx.next();
        if !as_t.is_ident("AS") {
            if as_t.is_ident("KERNEL") {
                return self.unsupported(&as_t, "OpenCL kernel arguments");
            }
            return self.err(&as_t, "expected AS");
        }
        let kt = self.ident("buffer type")?;
        let kind = match kt.text.as_str() {
            "storage" => DescriptorKind::Storage,
            "uniform" => DescriptorKind::Uniform,
            "storage_dynamic" => DescriptorKind::StorageDynamic,
            "uniform_dynamic" => DescriptorKind::UniformDynamic,
            "push_constant" => {
                if array || buffers.len() != 1 {
                    return self.err(&kt, "push_constant takes one BUFFER");
                }
                self.eol()?;
                let name = Token {
                    kind: TokenKind::Ident,
                    text: buffers.remove(0),
                    line: kt.line,
                };
                return Ok(Bound::Push(name));
            }
            "storage_image" => DescriptorKind::StorageImage,
            "sampled_image" => DescriptorKind::SampledImage,
            "combined_image_sampler" => DescriptorKind::CombinedImageSampler,
            "uniform_texel_buffer" => DescriptorKind::UniformTexelBuffer,
            "storage_texel_buffer" => DescriptorKind::StorageTexelBuffer,
            "color" | "depth_stencil" | "resolve" => {
                return self.unsupported(&kt, format!("buffer type {}", kt.text))
            }
            _ => return self.err(&kt, "unknown buffer type"),
        };
        for name in &buffers {
            let is_image = self.formats.get(name).copied();
            if kind.is_image() && is_image != Some(true) {
                return self.err(&kt, format!("{name} is not an IMAGE; {kind} needs one"));
            }
            if kind.is_texel_buffer() && is_image != Some(false) {
                return self.err(
                    &kt,
                    format!("{name} needs an image format (DATA_TYPE <format>) for {kind}"),
                );
            }
            if !kind.is_image() && !kind.is_texel_buffer() && is_image == Some(true) {
                return self.err(&kt, format!("the IMAGE {name} cannot be bound as {kind}"));
            }
        }
        let mut sampler = None;
        if kind == DescriptorKind::CombinedImageSampler {
            self.keyword("SAMPLER")?;
            let s = self.name("sampler name")?;
            if !self.samplers.contains_key(&s.text) {
                return self.err(&s, "unknown sampler");
            }
            sampler = Some(s.text);
        }
        let n = buffers.len();
        let mut b = DescriptorBind {
            buffers,
            array,
            kind,
            set: 0,
            binding: 0,
            dynamic_offsets: Vec::new(),
            descriptor_offsets: vec![0; n],
            descriptor_ranges: vec![None; n],
            sampler,
            base_mip_level: 0,
        };
        let (mut have_set, mut have_binding) = (false, false);
        loop {
            let t = self.lx.next();
            if t.is_eol() {
                break;
            }
            match t.text.as_str() {
                "DESCRIPTOR_SET" => {
                    b.set = self.u32("descriptor set")?;
                    have_set = true;
                }
                "BINDING" => {
                    b.binding = self.u32("binding")?;
                    have_binding = true;
                }
                "OFFSET" => {
                    if !kind.is_dynamic() {
                        return self.err(&t, "OFFSET only applies to dynamic buffers");
                    }
                    for _ in 0..n {
                        b.dynamic_offsets.push(self.u32("dynamic offset")?);
                    }
                }
                "BASE_MIP_LEVEL" => {
                    if !kind.is_image() {
                        return self.err(&t, "BASE_MIP_LEVEL only applies to images");
                    }
                    b.base_mip_level = self.u32("base mip level")?;
                }
                "DESCRIPTOR_OFFSET" => {
                    for i in 0..n {
                        b.descriptor_offsets[i] = self.uint("descriptor offset")?;
                    }
                }
                "DESCRIPTOR_RANGE" => {
                    for i in 0..n {
                        let r = self.lx.next();
                        b.descriptor_ranges[i] = match r.kind {
                            TokenKind::Int(-1) => None,
                            TokenKind::Int(v) if v > 0 && v <= u64::MAX as i128 => Some(v as u64),
                            _ => return self.err(&r, "descriptor range must be positive or -1"),
                        };
                    }
                }
                _ => return self.err(&t, "unexpected token in BIND"),
            }
        }
        if !have_set || !have_binding {
            let t = Token {
                kind: TokenKind::Eol,
                text: String::new(),
                line: kt.line,
            };
            return self.err(&t, "BIND needs DESCRIPTOR_SET and BINDING");
        }
        if kind.is_dynamic() && b.dynamic_offsets.len() != n {
            let t = Token {
                kind: TokenKind::Eol,
                text: String::new(),
                line: kt.line,
            };
            return self.err(&t, "dynamic buffers need OFFSET");
        }
        Ok(Bound::Descriptor(b))
    }

    /// `BIND SAMPLER s DESCRIPTOR_SET n BINDING m` (or `SAMPLER_ARRAY s1 s2 ...`).
    fn bind_sampler(&mut self, array: bool) -> PResult<Bound> {
        let mut names = Vec::new();
        loop {
            let t = self.lx.peek().clone();
            if t.is_ident("DESCRIPTOR_SET") || t.is_eol() {
                break;
            }
            let s = self.name("sampler name")?;
            if s.is_ident("KERNEL") {
                return self.unsupported(&s, "OpenCL kernel arguments");
            }
            if !self.samplers.contains_key(&s.text) {
                return self.err(&s, "unknown sampler");
            }
            names.push(s.text);
            if !array {
                break;
            }
        }
        let first = self.lx.peek().clone();
        if names.is_empty() {
            return self.err(&first, "expected a sampler name");
        }
        self.keyword("DESCRIPTOR_SET")?;
        let set = self.u32("descriptor set")?;
        self.keyword("BINDING")?;
        let binding = self.u32("binding")?;
        self.eol()?;
        let n = names.len();
        Ok(Bound::Descriptor(DescriptorBind {
            buffers: names,
            array,
            kind: DescriptorKind::Sampler,
            set,
            binding,
            dynamic_offsets: Vec::new(),
            descriptor_offsets: vec![0; n],
            descriptor_ranges: vec![None; n],
            sampler: None,
            base_mip_level: 0,
        }))
    }

    fn on_off(&mut self) -> PResult<bool> {
        let t = self.ident("on or off")?;
        match t.text.as_str() {
            "on" => Ok(true),
            "off" => Ok(false),
            _ => self.err(&t, "expected on or off"),
        }
    }

    fn require_feature(&self, t: &Token, f: &str) -> PResult<()> {
        if !self.features.iter().any(|x| x == f) {
            return self.err(t, format!("needs DEVICE_FEATURE {f}"));
        }
        Ok(())
    }

    fn subgroup(&mut self) -> PResult<SubgroupControl> {
        let shader = self.shader_ref()?;
        self.eol()?;
        let mut s = SubgroupControl {
            shader: shader.text,
            ..Default::default()
        };
        loop {
            let t = self.lx.next();
            match t.kind {
                TokenKind::Eol => continue,
                TokenKind::Eof => return self.err(&t, "SUBGROUP without END"),
                _ => {}
            }
            match t.text.as_str() {
                "END" => {
                    self.eol()?;
                    return Ok(s);
                }
                "FULLY_POPULATED" => {
                    self.require_feature(&t, "SubgroupSizeControl.computeFullSubgroups")?;
                    s.fully_populated = Some(self.on_off()?);
                }
                "VARYING_SIZE" => {
                    self.require_feature(&t, "SubgroupSizeControl.subgroupSizeControl")?;
                    s.varying_size = Some(self.on_off()?);
                }
                "REQUIRED_SIZE" => {
                    self.require_feature(&t, "SubgroupSizeControl.subgroupSizeControl")?;
                    let v = self.lx.next();
                    s.required_size = Some(match v.kind {
                        TokenKind::Int(n) if n > 0 && n <= 128 && (n & (n - 1)) == 0 => {
                            RequiredSize::Size(n as u32)
                        }
                        _ if v.is_ident("MIN") => RequiredSize::Min,
                        _ if v.is_ident("MAX") => RequiredSize::Max,
                        _ => {
                            return self.err(&v, "REQUIRED_SIZE must be a power of two, MIN or MAX")
                        }
                    });
                }
                _ => return self.err(&t, "unknown SUBGROUP option"),
            }
            self.eol()?;
        }
    }

    fn run(&mut self) -> PResult<Command> {
        let mut p = self.name("pipeline name")?;
        let mut timed = false;
        if p.text == "TIMED_EXECUTION" {
            timed = true;
            p = self.name("pipeline name")?;
        }
        if !self.pipelines.contains_key(&p.text) {
            return self.err(&p, "unknown pipeline");
        }
        let t = self.lx.peek().clone();
        if t.is_ident("DRAW_RECT")
            || t.is_ident("DRAW_GRID")
            || t.is_ident("DRAW_ARRAY")
            || t.is_ident("RAYGEN")
        {
            return self.unsupported(&t, format!("RUN {}", t.text));
        }
        let groups = [
            self.u32("group count x")?,
            self.u32("group count y")?,
            self.u32("group count z")?,
        ];
        self.eol()?;
        Ok(Command::Run {
            pipeline: p.text,
            groups,
            timed,
        })
    }

    fn expect(&mut self) -> PResult<Expect> {
        let (buf, ty) = self.buffer_ref()?;
        let t = self.ident("IDX, EQ_BUFFER or RMSE_BUFFER")?;
        match t.text.as_str() {
            "EQ_BUFFER" | "RMSE_BUFFER" => {
                let (b, tb) = self.buffer_ref()?;
                if tb != ty {
                    return self.err(&b, format!("buffers have different types ({ty} and {tb})"));
                }
                let e = if t.text == "EQ_BUFFER" {
                    Expect::EqBuffer {
                        a: buf.text,
                        b: b.text,
                    }
                } else {
                    self.keyword("TOLERANCE")?;
                    let tolerance = self.number("tolerance")?;
                    Expect::Rmse {
                        a: buf.text,
                        b: b.text,
                        tolerance,
                    }
                };
                self.eol()?;
                return Ok(e);
            }
            "EQ_HISTOGRAM_EMD_BUFFER" => return self.unsupported(&t, "EQ_HISTOGRAM_EMD_BUFFER"),
            "IDX" => {}
            _ => return self.err(&t, "expected IDX, EQ_BUFFER or RMSE_BUFFER"),
        }
        let offset = self.uint("byte offset")?;
        let mut tolerances = Vec::new();
        let mut c = self.lx.next();
        if let TokenKind::Int(_) = c.kind {
            return self.unsupported(&c, "image probes (IDX x y SIZE ...)");
        }
        if c.is_ident("TOLERANCE") {
            loop {
                let v = self.lx.peek().clone();
                let (num, percent) = match &v.kind {
                    TokenKind::Int(n) => (*n as f64, false),
                    TokenKind::Float(f) => (*f, false),
                    TokenKind::Ident => {
                        match v.text.strip_suffix('%').and_then(|s| s.parse::<f64>().ok()) {
                            Some(f) => (f, true),
                            None => break,
                        }
                    }
                    _ => break,
                };
                self.lx.next();
                tolerances.push(Tolerance {
                    value: num,
                    percent,
                });
            }
            if tolerances.is_empty() || tolerances.len() > 4 {
                let v = self.lx.peek().clone();
                return self.err(&v, "TOLERANCE takes 1 to 4 values");
            }
            c = self.lx.next();
        }
        let Some(cmp) = Comparator::ALL
            .iter()
            .find(|(n, _)| c.is_ident(n))
            .map(|(_, c)| *c)
        else {
            if c.is_ident("EQ_RGB") || c.is_ident("EQ_RGBA") {
                return self.unsupported(&c, "image probes");
            }
            return self.err(&c, "expected a comparator (EQ NE LT LE GT GE)");
        };
        if !tolerances.is_empty() && cmp != Comparator::Eq {
            return self.err(&c, "TOLERANCE only applies to EQ");
        }
        let mut values = Vec::new();
        loop {
            let v = self.lx.next();
            if v.is_eol() {
                break;
            }
            values.push(self.value_for(&v, ty.scalar)?);
        }
        if values.is_empty() {
            return self.err(&c, "EXPECT needs at least one value");
        }
        Ok(Expect::Values {
            buffer: buf.text,
            offset,
            tolerances,
            cmp,
            values,
        })
    }
}

enum Bound {
    Descriptor(DescriptorBind),
    Push(Token),
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHADER: &str = "SHADER compute s GLSL\n#version 450\nvoid main() {}\nEND\n";

    fn ok(body: &str) -> Script {
        let src = format!("#!amber\n{SHADER}{body}");
        parse("t.amber", &src).unwrap_or_else(|e| panic!("{e}\n{src}"))
    }

    fn syntax_err(body: &str) -> (usize, String, String) {
        let src = format!("#!amber\n{SHADER}{body}");
        match parse("t.amber", &src) {
            Err(ParseError::Syntax {
                line, token, msg, ..
            }) => (line, token, msg),
            other => panic!("expected a syntax error, got {other:?}"),
        }
    }

    fn unsupported(body: &str) -> String {
        let src = format!("#!amber\n{SHADER}{body}");
        match parse("t.amber", &src) {
            Err(ParseError::Unsupported { what, .. }) => what,
            other => panic!("expected unsupported, got {other:?}"),
        }
    }

    fn last(s: &Script) -> &Command {
        &s.stmts.last().expect("a command").cmd
    }

    /// Printing a script and parsing it again gives the same script.
    fn round_trip(s: &Script) {
        let text = s.to_string();
        let again = parse("rt.amber", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        // Compared as text: NaN values never compare equal.
        assert_eq!(again.to_string(), text);
        assert_eq!(again.stmts.len(), s.stmts.len());
    }

    #[test]
    fn image_forms() {
        let s = ok("IMAGE im FORMAT R8G8B8A8_UNORM MIP_LEVELS 2 DIM_2D WIDTH 4 HEIGHT 2 FILL 7\n");
        let Command::Buffer(b) = last(&s) else {
            panic!("not a buffer")
        };
        let img = b.image.expect("an image");
        assert_eq!(
            (img.dim, img.width, img.height, img.depth, img.mip_levels),
            (ImageDim::D2, 4, 2, 1, 2)
        );
        assert_eq!(b.format.map(|f| f.name), Some("R8G8B8A8_UNORM"));
        assert_eq!(
            b.init,
            BufferInit::Fill {
                size: 8,
                value: Value::Int(7)
            }
        );
        round_trip(&s);
        // DATA_TYPE images take Amber's format for the type; options come in any order.
        let s = ok("IMAGE v DIM_3D DATA_TYPE vec4<int32> WIDTH 2 DEPTH 2 HEIGHT 2 SERIES_FROM 1 INC_BY 2\n");
        let Command::Buffer(b) = last(&s) else {
            panic!("not a buffer")
        };
        assert_eq!(b.format.map(|f| f.name), Some("R32G32B32A32_SINT"));
        assert_eq!(b.image.map(|i| i.texels()), Some(8));
        round_trip(&s);
        let s = ok("IMAGE d DATA_TYPE float DIM_1D WIDTH 3 DATA\n1.5 2 3\nEND\n");
        round_trip(&s);
        // A texel buffer is a buffer with a format.
        let s = ok("BUFFER t DATA_TYPE R32G32_SFLOAT DATA 1 2 3 4 END\n");
        let Command::Buffer(b) = last(&s) else {
            panic!("not a buffer")
        };
        assert!(b.image.is_none());
        assert_eq!((b.ty.scalar, b.ty.rows), (Scalar::F32, 2));
        round_trip(&s);
    }

    #[test]
    fn image_errors() {
        assert!(
            syntax_err("IMAGE i FORMAT R32_UINT DIM_2D WIDTH 4 FILL 0\n")
                .2
                .contains("HEIGHT")
        );
        assert!(syntax_err("IMAGE i FORMAT R32_UINT WIDTH 4 FILL 0\n")
            .2
            .contains("DIM_"));
        assert!(syntax_err("IMAGE i DIM_1D WIDTH 4 FILL 0\n")
            .2
            .contains("FORMAT"));
        assert!(
            syntax_err("IMAGE i FORMAT R32_UINT DIM_1D WIDTH 0 FILL 0\n")
                .2
                .contains("positive")
        );
        assert!(
            syntax_err("IMAGE i FORMAT R32_UINT DIM_1D WIDTH 2 DATA 1 2 3 END\n")
                .2
                .contains("more DATA")
        );
        assert!(syntax_err("IMAGE i FORMAT R32_UINT DIM_1D WIDTH 2\n")
            .2
            .contains("initializer"));
        assert!(
            unsupported("IMAGE i FORMAT R8G8B8_UNORM DIM_1D WIDTH 2 FILL 0\n")
                .contains("R8G8B8_UNORM")
        );
        assert!(
            unsupported("IMAGE i FORMAT R32_UINT SAMPLES 4 DIM_2D WIDTH 2 HEIGHT 2 FILL 0\n")
                .contains("multisampled")
        );
        assert!(
            unsupported("IMAGE i FORMAT B10G11R11_UFLOAT_PACK32 DIM_1D WIDTH 2 FILL 1\n")
                .contains("packed")
        );
        ok("IMAGE i FORMAT B10G11R11_UFLOAT_PACK32 DIM_1D WIDTH 2 FILL 0\n");
    }

    #[test]
    fn sampler_forms_and_binds() {
        let s = ok("SAMPLER s0\n\
             SAMPLER s1 MAG_FILTER linear MIN_FILTER linear ADDRESS_MODE_U clamp_to_border \\\n\
             ADDRESS_MODE_W mirrored_clamp_to_edge BORDER_COLOR int_opaque_white MIN_LOD 0.5 MAX_LOD 3\n\
             SAMPLER s2 UNNORMALIZED_COORDS\n\
             IMAGE im FORMAT R32G32B32A32_SFLOAT MIP_LEVELS 3 DIM_2D WIDTH 4 HEIGHT 4 FILL 0.5\n\
             IMAGE st FORMAT R32_UINT DIM_1D WIDTH 4 FILL 0\n\
             BUFFER tb DATA_TYPE R32_UINT SIZE 4 FILL 1\n\
             PIPELINE compute p\n  ATTACH s\n\
             BIND BUFFER im AS combined_image_sampler SAMPLER s1 DESCRIPTOR_SET 0 BINDING 0 BASE_MIP_LEVEL 1\n\
             BIND BUFFER im AS sampled_image DESCRIPTOR_SET 0 BINDING 1\n\
             BIND SAMPLER_ARRAY s0 s2 DESCRIPTOR_SET 0 BINDING 2\n\
             BIND BUFFER st AS storage_image DESCRIPTOR_SET 1 BINDING 0\n\
             BIND BUFFER tb AS uniform_texel_buffer DESCRIPTOR_SET 1 BINDING 1\n\
             BIND BUFFER_ARRAY tb tb AS storage_texel_buffer DESCRIPTOR_SET 1 BINDING 2\n\
             END\n");
        let Command::Sampler(s1) = &s.stmts[2].cmd else {
            panic!("not a sampler")
        };
        assert_eq!(s1.mag_filter, Filter::Linear);
        assert_eq!(s1.address[0], AddressMode::ClampToBorder);
        assert_eq!(s1.address[1], AddressMode::Repeat);
        assert_eq!(s1.address[2], AddressMode::MirroredClampToEdge);
        assert_eq!(s1.border, BorderColor::IntOpaqueWhite);
        assert_eq!((s1.min_lod, s1.max_lod), (0.5, 3.0));
        let Command::Sampler(s2) = &s.stmts[3].cmd else {
            panic!("not a sampler")
        };
        assert!(!s2.normalized);
        assert_eq!(s2.max_lod, 0.0);
        let Command::Pipeline(p) = last(&s) else {
            panic!("not a pipeline")
        };
        assert_eq!(p.binds[0].kind, DescriptorKind::CombinedImageSampler);
        assert_eq!(p.binds[0].sampler.as_deref(), Some("s1"));
        assert_eq!(p.binds[0].base_mip_level, 1);
        assert_eq!(p.binds[2].kind, DescriptorKind::Sampler);
        assert_eq!(p.binds[2].buffers, vec!["s0", "s2"]);
        assert_eq!(p.binds[5].kind, DescriptorKind::StorageTexelBuffer);
        round_trip(&s);
    }

    #[test]
    fn sampler_and_image_bind_errors() {
        let decl = "IMAGE im FORMAT R32_UINT DIM_1D WIDTH 4 FILL 0\n\
                    BUFFER b DATA_TYPE uint32 SIZE 4 FILL 0\n\
                    SAMPLER s\n";
        let bind = |line: &str| format!("{decl}PIPELINE compute p\n  ATTACH s\n  {line}\nEND\n");
        assert!(syntax_err(&bind(
            "BIND BUFFER b AS storage_image DESCRIPTOR_SET 0 BINDING 0"
        ))
        .2
        .contains("not an IMAGE"));
        assert!(syntax_err(&bind(
            "BIND BUFFER im AS storage DESCRIPTOR_SET 0 BINDING 0"
        ))
        .2
        .contains("cannot be bound"));
        assert!(syntax_err(&bind(
            "BIND BUFFER b AS uniform_texel_buffer DESCRIPTOR_SET 0 BINDING 0"
        ))
        .2
        .contains("format"));
        assert!(syntax_err(&bind(
            "BIND BUFFER im AS combined_image_sampler SAMPLER t DESCRIPTOR_SET 0 BINDING 0"
        ))
        .2
        .contains("unknown sampler"));
        assert!(
            syntax_err(&bind("BIND SAMPLER nope DESCRIPTOR_SET 0 BINDING 0"))
                .2
                .contains("unknown sampler")
        );
        assert!(syntax_err(&bind(
            "BIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0 BASE_MIP_LEVEL 1"
        ))
        .2
        .contains("only applies to images"));
        assert!(syntax_err("SAMPLER s MAG_FILTER cubic\n")
            .2
            .contains("filter"));
        assert!(syntax_err("SAMPLER s MIN_LOD 2 MAX_LOD 1\n")
            .2
            .contains("MAX_LOD"));
        assert!(syntax_err("SAMPLER s\nSAMPLER s\n").2.contains("duplicate"));
        assert!(unsupported("SAMPLER s COMPARE on\n").contains("depth-compare"));
    }

    #[test]
    fn header_is_required() {
        let e = parse("x.amber", "SHADER compute s GLSL\nEND\n").unwrap_err();
        assert!(e.to_string().starts_with("x.amber:1:"), "{e}");
    }

    #[test]
    fn shader_forms() {
        let s = ok("SHADER compute a SPIRV-ASM TARGET_ENV spv1.3\n; asm\nEND\nSHADER compute h SPIRV-HEX\n03 02 23 07\nEND\n");
        let Command::Shader(a) = &s.stmts[1].cmd else {
            panic!()
        };
        assert_eq!(a.format, ShaderFormat::SpirvAsm);
        assert_eq!(
            a.target_env,
            Some(TargetEnv {
                spv_minor: 3,
                vk_minor: 1
            })
        );
        assert_eq!(a.source, "; asm\n");
        let Command::Shader(g) = &s.stmts[0].cmd else {
            panic!()
        };
        assert_eq!(g.source, "#version 450\nvoid main() {}\n");
        assert_eq!(
            TargetEnv::parse("spv1.4"),
            Some(TargetEnv {
                spv_minor: 4,
                vk_minor: 2
            })
        );
        assert_eq!(
            TargetEnv::parse("spv1.0"),
            Some(TargetEnv {
                spv_minor: 0,
                vk_minor: 0
            })
        );
        assert_eq!(
            TargetEnv::parse("vulkan1.1"),
            Some(TargetEnv {
                spv_minor: 3,
                vk_minor: 1
            })
        );
        round_trip(&s);
    }

    #[test]
    fn shader_errors() {
        assert_eq!(
            syntax_err("SHADER compute s GLSL\nEND\n").2,
            "duplicate shader name"
        );
        assert_eq!(
            syntax_err("SHADER compute t GLSL TARGET_ENV spv9.9\nEND\n").2,
            "unknown target environment"
        );
        assert_eq!(
            syntax_err("SHADER compute t GLSLX\nEND\n").2,
            "unknown shader format"
        );
        let (line, _, msg) = syntax_err("SHADER compute t GLSL\nvoid main(){}\n");
        assert_eq!((line, msg.as_str()), (6, "SHADER without END"));
        assert!(unsupported("SHADER vertex v GLSL\nEND\n").contains("vertex"));
        assert!(unsupported("SHADER compute v HLSL\nEND\n").contains("HLSL"));
    }

    #[test]
    fn buffer_forms() {
        let s = ok("BUFFER a DATA_TYPE int32 SIZE 4 FILL -1\n\
                    BUFFER b DATA_TYPE vec3<float> STD140 SIZE 2 SERIES_FROM 1.5 INC_BY 0.5\n\
                    BUFFER c DATA_TYPE mat2x3<double>[] DATA\n1 2 3\n4 5 nan END\n\
                    BUFFER d DATA_TYPE uint8 DATA 0xff 256 END\n");
        let Command::Buffer(a) = &s.stmts[1].cmd else {
            panic!()
        };
        assert_eq!(a.ty, DataType::scalar(Scalar::I32));
        assert_eq!(a.layout, Layout::Std430);
        assert_eq!(
            a.init,
            BufferInit::Fill {
                size: 4,
                value: Value::Int(-1)
            }
        );
        let Command::Buffer(b) = &s.stmts[2].cmd else {
            panic!()
        };
        assert_eq!((b.ty.rows, b.ty.cols, b.layout), (3, 1, Layout::Std140));
        let Command::Buffer(c) = &s.stmts[3].cmd else {
            panic!()
        };
        assert_eq!(
            (c.ty.rows, c.ty.cols, c.ty.array, c.ty.scalar),
            (3, 2, true, Scalar::F64)
        );
        let BufferInit::Data(v) = &c.init else {
            panic!()
        };
        assert_eq!(v.len(), 6);
        assert_eq!(c.ty.to_string(), "mat2x3<double>[]");
        round_trip(&s);
    }

    #[test]
    fn whole_floats_are_integers() {
        // CTS files fill integer buffers with `0.0`.
        let s = ok("BUFFER w DATA_TYPE vec2<int16> SIZE 4 FILL 0.0\nBUFFER x DATA_TYPE int8 DATA -2.0 END\n");
        let Command::Buffer(w) = &s.stmts[1].cmd else {
            panic!()
        };
        assert_eq!(
            w.init,
            BufferInit::Fill {
                size: 4,
                value: Value::Int(0)
            }
        );
        let Command::Buffer(x) = &s.stmts[2].cmd else {
            panic!()
        };
        assert_eq!(x.init, BufferInit::Data(vec![Value::Int(-2)]));
    }

    #[test]
    fn buffer_errors() {
        assert_eq!(
            syntax_err("BUFFER a DATA_TYPE int32 DATA 1.5 END\n").2,
            "a float value for int32 data"
        );
        assert_eq!(
            syntax_err("BUFFER a DATA_TYPE int33 SIZE 1 FILL 0\n").2,
            "unknown data type"
        );
        assert_eq!(
            syntax_err("BUFFER a DATA_TYPE vec5<float> SIZE 1 FILL 0\n").2,
            "vector size must be 2..4"
        );
        assert_eq!(
            syntax_err("BUFFER a DATA_TYPE int32 SIZE 1 FILLX 0\n").2,
            "expected FILL or SERIES_FROM"
        );
        assert_eq!(
            syntax_err(
                "BUFFER a DATA_TYPE int32 SIZE 1 FILL 0\nBUFFER a DATA_TYPE int32 SIZE 1 FILL 0\n"
            )
            .2,
            "duplicate buffer name"
        );
        assert_eq!(
            syntax_err("BUFFER a DATA_TYPE int32 DATA 1 2\n").2,
            "DATA without END"
        );
        assert_eq!(
            syntax_err("BUFFER a DATA_TYPE int32 SIZE 2 SERIES_FROM 1 INC 1\n").2,
            "expected INC_BY"
        );
        let (line, token, _) = syntax_err("\n\nBUFFER a DATA_TYPE int32 SIZE x FILL 0\n");
        assert_eq!((line, token.as_str()), (8, "'x'"));
        assert!(unsupported("BUFFER i FORMAT R8G8B8A8_UNORM\n").contains("FORMAT"));
    }

    #[test]
    fn pipeline_forms() {
        let s = ok("BUFFER a DATA_TYPE int32 SIZE 64 FILL 0\nBUFFER b DATA_TYPE int32 SIZE 64 FILL 0\n\
                    BUFFER p DATA_TYPE uint32 DATA 1 2 END\n\
                    DEVICE_FEATURE SubgroupSizeControl.subgroupSizeControl\n\
                    DEVICE_FEATURE SubgroupSizeControl.computeFullSubgroups\n\
                    PIPELINE compute pl\n  ATTACH s ENTRY_POINT main SPECIALIZE 1 AS uint32 7 SPECIALIZE 2 AS float 1.5\n\
                    BIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 1 DESCRIPTOR_OFFSET 16 DESCRIPTOR_RANGE 32\n\
                    BIND BUFFER_ARRAY a b AS uniform_dynamic DESCRIPTOR_SET 1 BINDING 0 OFFSET 0 256\n\
                    BIND BUFFER p AS push_constant\n\
                    SUBGROUP s\n FULLY_POPULATED on\n VARYING_SIZE off\n REQUIRED_SIZE MAX\n END\nEND\n");
        let Command::Pipeline(p) = last(&s) else {
            panic!()
        };
        assert_eq!(p.attach.specializations.len(), 2);
        assert_eq!(p.attach.specializations[1].bits(), 1.5f32.to_bits());
        assert_eq!(p.binds[0].descriptor_offsets, vec![16]);
        assert_eq!(p.binds[0].descriptor_ranges, vec![Some(32)]);
        assert_eq!(p.binds[1].buffers, vec!["a", "b"]);
        assert_eq!(p.binds[1].dynamic_offsets, vec![0, 256]);
        assert_eq!(p.push_constant.as_deref(), Some("p"));
        let sg = p.subgroup.as_ref().expect("subgroup");
        assert_eq!(
            (
                sg.fully_populated,
                sg.varying_size,
                sg.required_size.clone()
            ),
            (Some(true), Some(false), Some(RequiredSize::Max))
        );
        round_trip(&s);
    }

    #[test]
    fn pipeline_errors() {
        let b = "BUFFER a DATA_TYPE int32 SIZE 4 FILL 0\n";
        assert_eq!(
            syntax_err("PIPELINE compute p\nATTACH nope\nEND\n").2,
            "unknown shader"
        );
        assert_eq!(
            syntax_err("PIPELINE compute p\nEND\n").2,
            "pipeline has no ATTACH"
        );
        assert_eq!(syntax_err(&format!("{b}PIPELINE compute p\nATTACH s\nBIND BUFFER zz AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\n")).2, "unknown buffer");
        assert_eq!(
            syntax_err(&format!(
                "{b}PIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage BINDING 0\nEND\n"
            ))
            .2,
            "BIND needs DESCRIPTOR_SET and BINDING"
        );
        assert_eq!(syntax_err(&format!("{b}PIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage_dynamic DESCRIPTOR_SET 0 BINDING 0\nEND\n")).2, "dynamic buffers need OFFSET");
        assert_eq!(syntax_err(&format!("{b}PIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0 OFFSET 4\nEND\n")).2, "OFFSET only applies to dynamic buffers");
        assert_eq!(syntax_err(&format!("{b}PIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0\nBIND BUFFER a AS uniform DESCRIPTOR_SET 0 BINDING 0\nEND\n")).2, "descriptor set 0 binding 0 bound twice");
        assert_eq!(syntax_err(&format!("{b}PIPELINE compute p\nATTACH s\nBIND BUFFER a AS push_constant\nBIND BUFFER a AS push_constant\nEND\n")).2, "only one push_constant buffer per pipeline");
        assert_eq!(syntax_err(&format!("{b}PIPELINE compute p\nATTACH s\nBIND BUFFER a AS texture DESCRIPTOR_SET 0 BINDING 0\nEND\n")).2, "unknown buffer type");
        assert_eq!(
            syntax_err("PIPELINE compute p\nATTACH s SPECIALIZE 1 AS int64 3\nEND\n").2,
            "specialization type must be uint32, int32 or float"
        );
        assert_eq!(
            syntax_err("PIPELINE compute p\nATTACH s\nSUBGROUP s\nREQUIRED_SIZE 8\nEND\nEND\n").2,
            "needs DEVICE_FEATURE SubgroupSizeControl.subgroupSizeControl"
        );
        assert_eq!(
            syntax_err("DEVICE_FEATURE SubgroupSizeControl.subgroupSizeControl\nPIPELINE compute p\nATTACH s\nSUBGROUP s\nREQUIRED_SIZE 12\nEND\nEND\n").2,
            "REQUIRED_SIZE must be a power of two, MIN or MAX"
        );
        assert_eq!(
            syntax_err("PIPELINE compute p\nATTACH s\n").2,
            "PIPELINE without END"
        );
        assert!(unsupported("PIPELINE graphics g\nEND\n").contains("graphics"));
    }

    #[test]
    fn run_copy_repeat() {
        let s = ok("BUFFER a DATA_TYPE float SIZE 4 FILL 0\nBUFFER b DATA_TYPE float SIZE 4 FILL 0\n\
                    PIPELINE compute p\nATTACH s\nBIND BUFFER a AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\n\
                    REPEAT 3\nRUN p 0x10 1 1\nCOPY a TO b\nEXPECT b IDX 0 EQ 1.0\nEND\nRUN TIMED_EXECUTION p 1 2 3\n");
        let Command::Repeat { count, body } = &s.stmts[4].cmd else {
            panic!()
        };
        assert_eq!((*count, body.len()), (3, 3));
        assert_eq!(
            body[0].cmd,
            Command::Run {
                pipeline: "p".into(),
                groups: [16, 1, 1],
                timed: false
            }
        );
        assert_eq!(
            *last(&s),
            Command::Run {
                pipeline: "p".into(),
                groups: [1, 2, 3],
                timed: true
            }
        );
        round_trip(&s);
    }

    #[test]
    fn run_copy_repeat_errors() {
        let b = "BUFFER a DATA_TYPE float SIZE 4 FILL 0\nBUFFER i DATA_TYPE int32 SIZE 4 FILL 0\nPIPELINE compute p\nATTACH s\nEND\n";
        assert_eq!(
            syntax_err(&format!("{b}RUN q 1 1 1\n")).2,
            "unknown pipeline"
        );
        assert_eq!(
            syntax_err(&format!("{b}RUN p 1 1\n")).2,
            "expected group count z (a non-negative integer)"
        );
        assert_eq!(
            syntax_err(&format!("{b}RUN p 1 1 1 1\n")).2,
            "extra token, expected end of line"
        );
        assert_eq!(
            syntax_err(&format!("{b}COPY a TO i\n")).2,
            "COPY between different types (float and int32)"
        );
        assert_eq!(syntax_err(&format!("{b}COPY a INTO a\n")).2, "expected TO");
        assert_eq!(
            syntax_err(&format!("{b}REPEAT 2\nRUN p 1 1 1\n")).2,
            "REPEAT without END"
        );
        assert_eq!(
            syntax_err(&format!(
                "{b}REPEAT 2\nBUFFER z DATA_TYPE int32 SIZE 1 FILL 0\nEND\n"
            ))
            .2,
            "not allowed inside REPEAT"
        );
        assert!(
            unsupported(&format!("{b}RUN p DRAW_RECT POS 0 0 SIZE 1 1\n")).contains("DRAW_RECT")
        );
    }

    #[test]
    fn expect_forms() {
        let s = ok(
            "BUFFER a DATA_TYPE float SIZE 4 FILL 0\nBUFFER b DATA_TYPE float SIZE 4 FILL 0\n\
                    BUFFER i DATA_TYPE int8 SIZE 4 FILL 0\n\
                    EXPECT a IDX 4 TOLERANCE 0.1 2% EQ 1.0 2 nan\nEXPECT i IDX 0 GE -1 0x7f\n\
                    EXPECT a EQ_BUFFER b\nEXPECT a RMSE_BUFFER b TOLERANCE 0.5\n",
        );
        let Command::Expect(Expect::Values {
            offset,
            tolerances,
            cmp,
            values,
            ..
        }) = &s.stmts[4].cmd
        else {
            panic!()
        };
        assert_eq!(*offset, 4);
        assert_eq!(
            tolerances,
            &vec![
                Tolerance {
                    value: 0.1,
                    percent: false
                },
                Tolerance {
                    value: 2.0,
                    percent: true
                }
            ]
        );
        assert_eq!(*cmp, Comparator::Eq);
        assert_eq!(values.len(), 3);
        let Command::Expect(Expect::Values { cmp, values, .. }) = &s.stmts[5].cmd else {
            panic!()
        };
        assert_eq!(
            (*cmp, values.clone()),
            (Comparator::Ge, vec![Value::Int(-1), Value::Int(127)])
        );
        assert_eq!(
            s.stmts[7].cmd,
            Command::Expect(Expect::Rmse {
                a: "a".into(),
                b: "b".into(),
                tolerance: 0.5
            })
        );
        let _ = &s.stmts[6];
        round_trip(&s);
    }

    #[test]
    fn expect_errors() {
        let b = "BUFFER a DATA_TYPE float SIZE 4 FILL 0\nBUFFER i DATA_TYPE int32 SIZE 4 FILL 0\n";
        assert_eq!(
            syntax_err(&format!("{b}EXPECT a IDX 0 TOLERANCE 1 LT 2\n")).2,
            "TOLERANCE only applies to EQ"
        );
        assert_eq!(
            syntax_err(&format!("{b}EXPECT a IDX 0 TOLERANCE 1 1 1 1 1 EQ 2\n")).2,
            "TOLERANCE takes 1 to 4 values"
        );
        assert_eq!(
            syntax_err(&format!("{b}EXPECT a IDX 0 EQX 2\n")).2,
            "expected a comparator (EQ NE LT LE GT GE)"
        );
        assert_eq!(
            syntax_err(&format!("{b}EXPECT a IDX 0 EQ\n")).2,
            "EXPECT needs at least one value"
        );
        assert_eq!(
            syntax_err(&format!("{b}EXPECT i IDX 0 EQ 1.5\n")).2,
            "a float value for int32 data"
        );
        assert_eq!(
            syntax_err(&format!("{b}EXPECT a EQ_BUFFER i\n")).2,
            "buffers have different types (float and int32)"
        );
        assert_eq!(
            syntax_err(&format!("{b}EXPECT a RMSE_BUFFER a\n")).2,
            "expected TOLERANCE"
        );
        assert_eq!(
            syntax_err(&format!("{b}EXPECT q IDX 0 EQ 1\n")).2,
            "unknown buffer"
        );
        assert!(
            unsupported(&format!("{b}EXPECT a IDX 0 0 SIZE 1 1 EQ_RGBA 1 2 3 4\n"))
                .contains("image probes")
        );
    }

    #[test]
    fn requirements_and_engine_data() {
        let s = ok("DEVICE_FEATURE shaderFloat64\nDEVICE_FEATURE Float16Int8Features.shaderFloat16\n\
                    DEVICE_EXTENSION VK_KHR_shader_float16_int8\nINSTANCE_EXTENSION VK_KHR_get_physical_device_properties2\n\
                    DEVICE_PROPERTY FloatControlsProperties.shaderDenormPreserveFloat16\n\
                    SET ENGINE_DATA fence_timeout_ms 0x100\n");
        assert_eq!(
            s.features().collect::<Vec<_>>(),
            vec!["shaderFloat64", "Float16Int8Features.shaderFloat16"]
        );
        assert_eq!(s.device_extensions().count(), 1);
        assert_eq!(
            s.properties().collect::<Vec<_>>(),
            vec!["FloatControlsProperties.shaderDenormPreserveFloat16"]
        );
        assert_eq!(s.instance_extensions().count(), 1);
        assert_eq!(*last(&s), Command::FenceTimeout(256));
        round_trip(&s);
        assert_eq!(
            syntax_err("SET ENGINE_DATA timeout 5\n").2,
            "unknown engine data variable"
        );
        assert_eq!(syntax_err("DEVICE_FEATURE\n").2, "expected feature name");
        assert_eq!(
            syntax_err("DEVICE_PROPERTY denorms\n").2,
            "property names are Struct.member"
        );
        assert_eq!(syntax_err("FROB x\n").2, "unknown command");
    }

    #[test]
    fn ferrite_only_header() {
        let s = parse("f.amber", "#!amber\n# ferrite-only: 64 KiB of shared memory\nSET ENGINE_DATA fence_timeout_ms 5\n").expect("parse");
        assert_eq!(s.ferrite_only.as_deref(), Some("64 KiB of shared memory"));
    }
}
