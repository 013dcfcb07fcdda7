//! Parser for the textual IR that `Display` prints, so pass tests read `input -> expected`.

use crate::hash::HashSet;
use crate::ir::*;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("IR parse error on line {line}: {msg}")]
pub struct ParseError {
    pub line: usize,
    pub msg: String,
}

struct Parser<'a> {
    lines: Vec<(usize, &'a str)>,
    pos: usize,
    func: Function,
    defined: HashSet<u32>,
    used: Vec<(usize, u32)>,
}

fn tokenize(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            ',' | '(' | ')' | '{' | '}' | '=' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(c.to_string());
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

pub fn parse_type(s: &str) -> Option<Type> {
    let (base, comps) = match s.split_once('x') {
        Some((b, c)) => (b, c.parse::<u8>().ok()?),
        None => (s, 1),
    };
    let kind = match base.chars().next()? {
        'i' => Kind::Int,
        'f' => Kind::Float,
        'b' => Kind::Bool,
        _ => return None,
    };
    let bits: u8 = base[1..].parse().ok()?;
    let ok_bits = match kind {
        Kind::Bool => matches!(bits, 1 | 8 | 16 | 32 | 64),
        Kind::Int => matches!(bits, 8 | 16 | 32 | 64),
        Kind::Float => matches!(bits, 16 | 32 | 64),
    };
    if !ok_bits || !(1..=4).contains(&comps) {
        return None;
    }
    Some(Type { kind, bits, comps })
}

fn parse_const(ty: Type, s: &str) -> Option<u64> {
    let bits = if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()?
    } else {
        match ty.kind {
            Kind::Bool => match s {
                "true" => 1,
                "false" => 0,
                _ => return None,
            },
            Kind::Int => {
                if let Some(n) = s.strip_prefix('-') {
                    (n.parse::<u64>().ok()?).wrapping_neg()
                } else {
                    s.parse::<u64>().ok()?
                }
            }
            Kind::Float => match ty.bits {
                32 => u64::from(s.parse::<f32>().ok()?.to_bits()),
                64 => s.parse::<f64>().ok()?.to_bits(),
                _ => return None,
            },
        }
    };
    Some(if ty.kind == Kind::Bool && ty.bits > 1 && bits != 0 {
        ty.mask()
    } else {
        bits & ty.mask()
    })
}

/// `NAME[B]`, or `NAME[B+%V<N]` (`NAME.nu[...]` for a non-uniform index): B and the
/// run-time index, if any (the image and sampler of an `image_*` op).
fn parse_desc(s: &str, name: &str) -> Option<(u32, Option<BufIndex>)> {
    let (n, rest) = s.split_once('[')?;
    let inner = rest.strip_suffix(']')?;
    let nonuniform = match n.strip_suffix(".nu") {
        Some(x) if x == name => true,
        None if n == name => false,
        _ => return None,
    };
    match inner.split_once("+%") {
        Some((base, rest)) => {
            let (v, count) = rest.split_once('<')?;
            let base = base.parse().ok()?;
            let x = BufIndex {
                base,
                count: count.parse().ok()?,
                index: Value(v.parse().ok().filter(|n| *n <= 1_000_000)?),
                nonuniform,
            };
            Some((base, Some(x)))
        }
        None if !nonuniform => Some((inner.parse().ok()?, None)),
        None => None,
    }
}

fn parse_space(s: &str) -> Option<Space> {
    match s {
        "push" => return Some(Space::Push),
        "shared" => return Some(Space::Shared),
        "local" => return Some(Space::Local),
        _ => {}
    }
    let (name, rest) = s.split_once('[')?;
    let inner = rest.strip_suffix(']')?;
    // `global[%V]`: 64-bit base address.
    if name == "global" {
        let v = inner.strip_prefix('%')?;
        return Some(Space::Global(Value(
            v.parse().ok().filter(|n| *n <= 1_000_000)?,
        )));
    }
    // `ssbo[B+%V<N]` (or `ssbo.nu[...]` for a non-uniform index): descriptor array element.
    if let Some((base, rest)) = inner.split_once("+%") {
        let (v, count) = rest.split_once('<')?;
        let (name, nonuniform) = match name.strip_suffix(".nu") {
            Some(n) => (n, true),
            None => (name, false),
        };
        let x = BufIndex {
            base: base.parse().ok()?,
            count: count.parse().ok()?,
            index: Value(v.parse().ok().filter(|n| *n <= 1_000_000)?),
            nonuniform,
        };
        return match name {
            "ssbo" => Some(Space::SsboArray(x)),
            "ubo" => Some(Space::UboArray(x)),
            _ => None,
        };
    }
    let idx: u32 = inner.parse().ok()?;
    match name {
        "ssbo" => Some(Space::Ssbo(idx)),
        "ubo" => Some(Space::Ubo(idx)),
        _ => None,
    }
}

fn parse_scope(s: &str) -> Option<Scope> {
    Scope::ALL.iter().copied().find(|x| x.name() == s)
}

impl<'a> Parser<'a> {
    fn err<T>(&self, line: usize, msg: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            line,
            msg: msg.into(),
        })
    }

    fn value(&mut self, line: usize, tok: &str) -> Result<Value, ParseError> {
        let n = numbered(line, tok, '%', "a value")?;
        if n > 1_000_000 {
            return self.err(line, "value number too large");
        }
        self.used.push((line, n));
        Ok(Value(n))
    }

    fn var(&mut self, line: usize, tok: &str) -> Result<Var, ParseError> {
        let n = numbered(line, tok, '$', "a variable")?;
        if (n as usize) >= self.func.vars.len() {
            return self.err(line, format!("undeclared variable ${n}"));
        }
        Ok(Var(n))
    }

    fn define(&mut self, line: usize, tok: &str) -> Result<Value, ParseError> {
        let (v, t) = tok.split_once(':').ok_or_else(|| ParseError {
            line,
            msg: format!("expected %N:type, found '{tok}'"),
        })?;
        let ty = parse_type(t).ok_or_else(|| ParseError {
            line,
            msg: format!("bad type '{t}'"),
        })?;
        let n = v
            .strip_prefix('%')
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| *n <= 1_000_000)
            .ok_or_else(|| ParseError {
                line,
                msg: format!("bad value '{v}'"),
            })?;
        if !self.defined.insert(n) {
            return self.err(line, format!("%{n} defined twice"));
        }
        if self.func.values.len() <= n as usize {
            self.func.values.resize(n as usize + 1, Type::I32);
        }
        self.func.values[n as usize] = ty;
        Ok(Value(n))
    }

    /// Splits `a, b, c` (tokens with commas) into items.
    fn items(toks: &[String]) -> Vec<&str> {
        toks.iter()
            .map(|s| s.as_str())
            .filter(|s| *s != ",")
            .collect()
    }

    fn values(&mut self, line: usize, toks: &[String]) -> Result<Vec<Value>, ParseError> {
        Self::items(toks)
            .into_iter()
            .map(|t| self.value(line, t))
            .collect()
    }

    fn block(&mut self, top: bool) -> Result<Block, ParseError> {
        let mut out = Vec::new();
        while self.pos < self.lines.len() {
            let (ln, text) = self.lines[self.pos];
            let toks = tokenize(text);
            if toks.is_empty() {
                self.pos += 1;
                continue;
            }
            if toks[0] == "}" {
                if top {
                    return self.err(ln, "unbalanced '}'");
                }
                return Ok(out);
            }
            self.pos += 1;
            out.push(self.node(ln, &toks)?);
        }
        if !top {
            let ln = self.lines.last().map(|l| l.0).unwrap_or(0);
            return self.err(ln, "missing '}'");
        }
        Ok(out)
    }

    fn node(&mut self, ln: usize, toks: &[String]) -> Result<Node, ParseError> {
        // Definitions before '='.
        let (defs, rest): (Vec<String>, &[String]) = match toks.iter().position(|t| t == "=") {
            Some(p) if toks[0].starts_with('%') && !toks[..p].iter().any(|t| t == "(") => {
                (toks[..p].to_vec(), &toks[p + 1..])
            }
            _ => (vec![], toks),
        };
        if rest.is_empty() {
            return self.err(ln, "missing operation");
        }
        let kw = rest[0].as_str();
        match kw {
            "if" | "loop" => {
                let mut dvals = Vec::new();
                for d in Self::items(&defs) {
                    dvals.push(self.define(ln, d)?);
                }
                if rest.last().map(|s| s.as_str()) != Some("{") {
                    return self.err(ln, "expected '{' at end of line");
                }
                if kw == "if" {
                    if rest.len() != 3 {
                        return self.err(ln, "expected 'if %c {'");
                    }
                    let cond = self.value(ln, &rest[1])?;
                    let then_ = self.block(false)?;
                    let (cl, close) = self.lines[self.pos];
                    self.pos += 1;
                    let ct = tokenize(close);
                    let else_ = if ct.len() >= 3 && ct[1] == "else" && ct[2] == "{" {
                        let e = self.block(false)?;
                        self.pos += 1;
                        e
                    } else if ct.len() == 1 {
                        vec![]
                    } else {
                        return self.err(cl, "expected '}' or '} else {'");
                    };
                    Ok(Node::If(Box::new(If {
                        cond,
                        then_,
                        else_,
                        results: dvals,
                    })))
                } else {
                    let inner = &rest[1..rest.len() - 1];
                    let mut params = Vec::new();
                    if !inner.is_empty() {
                        if inner[0] != "(" || inner.last().map(|s| s.as_str()) != Some(")") {
                            return self.err(ln, "expected 'loop (%p:T = %v, ...) {'");
                        }
                        let body = &inner[1..inner.len() - 1];
                        for part in body.split(|t| t == ",") {
                            if part.len() != 3 || part[1] != "=" {
                                return self.err(ln, "expected '%p:T = %v' in loop parameters");
                            }
                            let init = self.value(ln, &part[2])?;
                            let p = self.define(ln, &part[0])?;
                            params.push((p, init));
                        }
                    }
                    let body = self.block(false)?;
                    self.pos += 1;
                    Ok(Node::Loop(Box::new(Loop {
                        params,
                        body,
                        results: dvals,
                    })))
                }
            }
            "break" | "continue" | "yield" => {
                if !defs.is_empty() {
                    return self.err(ln, "jumps define nothing");
                }
                let v = self.values(ln, &rest[1..])?;
                Ok(match kw {
                    "break" => Node::Break(v),
                    "continue" => Node::Continue(v),
                    _ => Node::Yield(v),
                })
            }
            _ => {
                let dst = match defs.len() {
                    0 => None,
                    1 => Some(self.define(ln, &defs[0])?),
                    _ => return self.err(ln, "instructions define at most one value"),
                };
                let exact = rest.first().is_some_and(|t| t == "exact");
                let rest = if exact { &rest[1..] } else { rest };
                let op = self.op(ln, dst, rest)?;
                // A run-time descriptor index inside an address space is a use too.
                let space = match &op {
                    Op::Load { space, .. }
                    | Op::Store { space, .. }
                    | Op::Atomic { space, .. }
                    | Op::BufferSize(space) => space.index(),
                    _ => None,
                };
                if let Some(v) = space {
                    self.used.push((ln, v.0));
                }
                Ok(Node::Instr(Instr { dst, op, exact }))
            }
        }
    }

    fn op(&mut self, ln: usize, dst: Option<Value>, toks: &[String]) -> Result<Op, ParseError> {
        let kw = toks[0].as_str();
        let args = &toks[1..];
        let items: Vec<String> = Self::items(args).into_iter().map(String::from).collect();
        let need_dst = |p: &Self| -> Result<Type, ParseError> {
            match dst {
                Some(d) => Ok(p.func.ty(d)),
                None => p.err(ln, format!("'{kw}' needs a destination")),
            }
        };
        let num = |s: &str| -> Result<u32, ParseError> {
            s.parse::<u32>().map_err(|_| ParseError {
                line: ln,
                msg: format!("expected a number, found '{s}'"),
            })
        };
        let align_of = |items: &[String], at: usize| -> Result<u32, ParseError> {
            if items.len() != at + 2 || items[at] != "align" {
                return Err(ParseError {
                    line: ln,
                    msg: "expected 'align N' at the end".into(),
                });
            }
            num(&items[at + 1])
        };
        let space_of = |s: &str| {
            parse_space(s).ok_or_else(|| ParseError {
                line: ln,
                msg: format!("bad address space '{s}'"),
            })
        };
        if let Some(op) = AluOp::from_name(kw) {
            let srcs = self.values(ln, args)?;
            need_dst(self)?;
            return Ok(Op::Alu(op, srcs));
        }
        if let Some(op) = crate::ir::SubgroupOp::all()
            .into_iter()
            .find(|o| o.to_string() == kw)
        {
            let srcs = self.values(ln, args)?;
            need_dst(self)?;
            if srcs.len() != op.num_srcs() {
                return self.err(ln, format!("'{kw}' takes {} operands", op.num_srcs()));
            }
            return Ok(Op::Subgroup(op, srcs));
        }
        if let Some(name) = kw.strip_prefix("image_") {
            // image_load / image_store / image_atomic_OP img[BTI] %coord, data...
            let op = match name {
                "load" => ImageOp::Load,
                "store" => ImageOp::Store,
                "fetch" => ImageOp::Fetch,
                "size" => ImageOp::Size,
                _ if name.starts_with("gather_po.s") => {
                    let bad = || ParseError {
                        line: ln,
                        msg: format!("bad sampler or component in '{kw}'"),
                    };
                    let (s, c) = name["gather_po.s".len()..]
                        .split_once(".c")
                        .ok_or_else(bad)?;
                    ImageOp::GatherOffset {
                        sampler: s.parse().map_err(|_| bad())?,
                        comp: c.parse().map_err(|_| bad())?,
                    }
                }
                _ if name.starts_with("gather.s") => {
                    let bad = || ParseError {
                        line: ln,
                        msg: format!("bad sampler, component or offset in '{kw}'"),
                    };
                    let (rest, offset) =
                        crate::ir::split_offset(&name["gather.s".len()..]).ok_or_else(bad)?;
                    let (s, c) = rest.split_once(".c").ok_or_else(bad)?;
                    ImageOp::Gather {
                        sampler: s.parse().map_err(|_| bad())?,
                        comp: c.parse().map_err(|_| bad())?,
                        offset,
                    }
                }
                _ if name.starts_with("sample_l.s") || name.starts_with("sample_d.s") => {
                    let bad = || ParseError {
                        line: ln,
                        msg: format!("bad sampler index or offset in '{kw}'"),
                    };
                    let (s, offset) =
                        crate::ir::split_offset(&name["sample_l.s".len()..]).ok_or_else(bad)?;
                    let sampler = s.parse().map_err(|_| bad())?;
                    if name.starts_with("sample_d") {
                        ImageOp::SampleGrad { sampler, offset }
                    } else {
                        ImageOp::SampleLod { sampler, offset }
                    }
                }
                _ => ImageOp::Atomic(
                    name.strip_prefix("atomic_")
                        .and_then(|n| AtomicOp::ALL.iter().copied().find(|o| o.name() == n))
                        .ok_or_else(|| ParseError {
                            line: ln,
                            msg: format!("unknown image op '{kw}'"),
                        })?,
                ),
            };
            let (bti, index) = items
                .first()
                .and_then(|s| parse_desc(s, "img"))
                .ok_or_else(|| ParseError {
                    line: ln,
                    msg: "expected 'img[BTI]' or 'img[BTI+%V<N]'".into(),
                })?;
            let mut rest = &items[1..];
            let mut sampler = None;
            if let Some((_, x)) = rest.first().and_then(|s| parse_desc(s, "smp")) {
                sampler = x;
                rest = &rest[1..];
            }
            let mut srcs = Vec::new();
            for d in rest {
                srcs.push(self.value(ln, d)?);
            }
            let r = ImgRef {
                bti,
                index,
                sampler,
            };
            return Ok(Op::Image(op, r, srcs));
        }
        if let Some(name) = kw.strip_prefix("atomic_") {
            let op = AtomicOp::ALL
                .iter()
                .copied()
                .find(|o| o.name() == name)
                .ok_or_else(|| ParseError {
                    line: ln,
                    msg: format!("unknown atomic '{name}'"),
                })?;
            if items.len() < 2 {
                return self.err(ln, "expected 'atomic_op SPACE %off, data...'");
            }
            let space = space_of(&items[0])?;
            let offset = self.value(ln, &items[1])?;
            let mut data = Vec::new();
            for d in &items[2..] {
                data.push(self.value(ln, d)?);
            }
            return Ok(Op::Atomic {
                op,
                space,
                offset,
                data,
            });
        }
        Ok(match kw {
            "const" => {
                let ty = need_dst(self)?;
                let mut c = Vec::new();
                for s in &items {
                    c.push(parse_const(ty, s).ok_or_else(|| ParseError {
                        line: ln,
                        msg: format!("bad {ty} constant '{s}'"),
                    })?);
                }
                Op::Const(c)
            }
            "vec" => {
                need_dst(self)?;
                Op::Vec(self.values(ln, args)?)
            }
            "extract" | "insert" | "swizzle" => {
                need_dst(self)?;
                match (kw, items.len()) {
                    ("extract", 2) => {
                        Op::Extract(self.value(ln, &items[0])?, num(&items[1])? as u8)
                    }
                    ("insert", 3) => Op::Insert(
                        self.value(ln, &items[0])?,
                        self.value(ln, &items[1])?,
                        num(&items[2])? as u8,
                    ),
                    ("swizzle", n) if n >= 2 => {
                        let v = self.value(ln, &items[0])?;
                        let mut c = Vec::new();
                        for s in &items[1..] {
                            c.push(num(s)? as u8);
                        }
                        Op::Swizzle(v, c)
                    }
                    _ => return self.err(ln, format!("wrong operands for '{kw}'")),
                }
            }
            "load_var" if items.len() == 1 => {
                need_dst(self)?;
                Op::LoadVar(self.var(ln, &items[0])?)
            }
            "store_var" if items.len() == 2 => {
                Op::StoreVar(self.var(ln, &items[0])?, self.value(ln, &items[1])?)
            }
            "load" if items.len() == 4 => {
                need_dst(self)?;
                Op::Load {
                    space: space_of(&items[0])?,
                    offset: self.value(ln, &items[1])?,
                    align: align_of(&items, 2)?,
                }
            }
            "store" if items.len() == 5 => Op::Store {
                space: space_of(&items[0])?,
                offset: self.value(ln, &items[1])?,
                value: self.value(ln, &items[2])?,
                align: align_of(&items, 3)?,
            },
            "sysval" if items.len() == 1 => {
                need_dst(self)?;
                let s = SysVal::ALL
                    .iter()
                    .copied()
                    .find(|s| s.name() == items[0])
                    .ok_or_else(|| ParseError {
                        line: ln,
                        msg: format!("unknown sysval '{}'", items[0]),
                    })?;
                Op::SysVal(s)
            }
            "buffer_size" if items.len() == 1 => {
                need_dst(self)?;
                Op::BufferSize(space_of(&items[0])?)
            }
            "control_barrier" | "memory_barrier" => {
                let (exec, rest) = if kw == "control_barrier" {
                    if items.is_empty() {
                        return self.err(ln, "missing scope");
                    }
                    (parse_scope(&items[0]), &items[1..])
                } else {
                    (None, &items[..])
                };
                if rest.len() != 2 || (kw == "control_barrier" && exec.is_none()) {
                    return self.err(ln, "expected 'scope SCOPE 0xSEMANTICS'");
                }
                let mem = parse_scope(&rest[0]).ok_or_else(|| ParseError {
                    line: ln,
                    msg: format!("bad scope '{}'", rest[0]),
                })?;
                let semantics = rest[1]
                    .strip_prefix("0x")
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .ok_or_else(|| ParseError {
                        line: ln,
                        msg: "bad semantics".into(),
                    })?;
                Op::Barrier {
                    exec,
                    mem,
                    semantics,
                }
            }
            _ => return self.err(ln, format!("unknown or malformed operation '{kw}'")),
        })
    }
}

/// Parses a function: either `fn name { ... }` or a bare list of nodes (for tests). Variables
/// are declared with `var $N:T` lines at the top.
pub fn parse_function(text: &str) -> Result<Function, ParseError> {
    let mut lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let mut name = "main".to_string();
    if let Some((_, first)) = lines.first() {
        if let Some(rest) = first.strip_prefix("fn ") {
            name = rest.trim_end_matches('{').trim().to_string();
            match lines.last() {
                Some((_, "}")) => {}
                Some((ln, _)) => {
                    return Err(ParseError {
                        line: *ln,
                        msg: "missing closing '}' of fn".into(),
                    })
                }
                None => unreachable!(),
            }
            lines.remove(0);
            lines.pop();
        }
    }
    let mut p = Parser {
        lines,
        pos: 0,
        func: Function::new(&name),
        defined: HashSet::default(),
        used: Vec::new(),
    };
    if let Some(&(ln, l)) = p.lines.first() {
        if let Some(rest) = l.strip_prefix("float_controls ") {
            p.func.float_controls = rest.parse().map_err(|msg| ParseError { line: ln, msg })?;
            p.pos += 1;
        }
    }
    if p.lines
        .get(p.pos)
        .is_some_and(|&(_, l)| l == "volatile_memory")
    {
        p.func.volatile_memory = true;
        p.pos += 1;
    }
    if let Some(&(ln, l)) = p.lines.get(p.pos) {
        if let Some(rest) = l.strip_prefix("readonly_buffers ") {
            p.func.readonly_buffers = rest
                .split_whitespace()
                .map(|b| {
                    b.parse().map_err(|_| ParseError {
                        line: ln,
                        msg: format!("bad binding-table index '{b}'"),
                    })
                })
                .collect::<Result<_, _>>()?;
            p.pos += 1;
        }
    }
    while p.pos < p.lines.len() {
        let (ln, l) = p.lines[p.pos];
        let Some(decl) = l.strip_prefix("var ") else {
            break;
        };
        let (v, t) = decl.split_once(':').ok_or_else(|| ParseError {
            line: ln,
            msg: "expected 'var $N:T'".into(),
        })?;
        let n: u32 = v
            .trim()
            .strip_prefix('$')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| ParseError {
                line: ln,
                msg: "bad variable".into(),
            })?;
        if n as usize != p.func.vars.len() {
            return p.err(ln, "variables must be declared in order $0, $1, ...");
        }
        let ty = parse_type(t.trim()).ok_or_else(|| ParseError {
            line: ln,
            msg: "bad type".into(),
        })?;
        p.func.vars.push(ty);
        p.pos += 1;
    }
    let body = p.block(true)?;
    for (ln, v) in &p.used {
        if !p.defined.contains(v) {
            return p.err(*ln, format!("use of undefined value %{v}"));
        }
    }
    p.func.body = body;
    Ok(p.func)
}

/// Parses a shader: an optional `shader local_size X Y Z shared N local N push N` line, then
/// a function.
pub fn parse_shader(text: &str) -> Result<Shader, ParseError> {
    let mut local_size = [1, 1, 1];
    let (mut shared_size, mut local_mem_size, mut push_size) = (0, 0, 0);
    let mut body = text;
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    if let Some(first) = first.filter(|l| l.starts_with("shader ")) {
        let t: Vec<&str> = first.split_whitespace().collect();
        let bad = || ParseError {
            line: 1,
            msg: "expected 'shader local_size X Y Z shared N local N push N'".into(),
        };
        if t.len() != 11 || t[1] != "local_size" || t[5] != "shared" || t[7] != "local" {
            return Err(bad());
        }
        let n = |s: &str| s.parse::<u32>().map_err(|_| bad());
        local_size = [n(t[2])?, n(t[3])?, n(t[4])?];
        shared_size = n(t[6])?;
        local_mem_size = n(t[8])?;
        push_size = n(t[10])?;
        let idx = text.find(first).unwrap_or(0) + first.len();
        body = &text[idx..];
    }
    let mut func = parse_function(body)?;
    func.local_mem_size = local_mem_size;
    Ok(Shader {
        func,
        local_size,
        shared_size,
        push_size,
    })
}

/// The number after `sigil` in `tok` (`%3`, `$0`); `what` names the expected token in the
/// error.
fn numbered(line: usize, tok: &str, sigil: char, what: &str) -> Result<u32, ParseError> {
    tok.strip_prefix(sigil)
        .and_then(|n| n.parse::<u32>().ok())
        .ok_or_else(|| ParseError {
            line,
            msg: format!("expected {what}, found '{tok}'"),
        })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_controls_print_and_parse_back() {
        let text = "fn main {
    float_controls f16:denorm_preserve f16:rtz f32:denorm_flush_to_zero f64:signed_zero_inf_nan_preserve
    %0:i32 = const 0
    %1:f32 = load ssbo[0] %0 align 4
    store ssbo[0] %0, %1 align 4
}
";
        let f = parse_function(text).unwrap();
        let m = f.float_controls.mode(16);
        assert_eq!((m.denorm, m.rounding), (Denorm::Preserve, Rounding::Rtz));
        assert_eq!(f.float_controls.mode(32).denorm, Denorm::FlushToZero);
        assert!(f.float_controls.mode(64).signed_zero_inf_nan);
        assert_eq!(f.to_string(), text);
        assert!(parse_function("fn main {\n    float_controls f24:rtz\n}\n").is_err());
    }

    const SAMPLE: &str = "fn main {
    var $0:i32
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 4
    %3:i32 = imul %1, %2
    %4:f32 = load ssbo[1] %3 align 4
    %5:f32 = const 1.5
    %6:b1 = flt %4, %5
    %7:f32 = if %6 {
        %8:f32 = fadd %4, %5
        yield %8
    } else {
        yield %4
    }
    %9:i32 = const 0
    %10:i32 = loop (%11:i32 = %9) {
        %12:b1 = ige %11, %2
        if %12 {
            break %11
        }
        store_var $0, %11
        %13:i32 = const 1
        %14:i32 = iadd %11, %13
        continue %14
    }
    %15:i32 = load_var $0
    store ssbo[1] %3, %7 align 4
    %16:i32 = atomic_cmpxchg shared %15, %1, %2
    control_barrier workgroup workgroup 0x108
    memory_barrier device 0x48
}
";

    #[test]
    fn print_parse_round_trip() {
        let f = parse_function(SAMPLE).unwrap();
        assert_eq!(f.to_string(), SAMPLE);
    }

    #[test]
    fn every_subgroup_op_prints_and_parses() {
        for op in crate::ir::SubgroupOp::all() {
            let (ty, srcs) = match op.num_srcs() {
                0 => ("b1", String::new()),
                1 => ("i32", " %0".to_string()),
                _ => ("i32", " %0, %0".to_string()),
            };
            let text = format!("fn main {{\n    %0:i32 = const 1\n    %1:{ty} = {op}{srcs}\n}}\n");
            let f = parse_function(&text).unwrap_or_else(|e| panic!("{op}: {e}"));
            assert_eq!(f.to_string(), text);
        }
        assert!(parse_function("%0:i32 = const 1\n%1:i32 = subgroup_reduce.iadd %0, %0").is_err());
    }

    #[test]
    fn parse_rejects_undefined_value() {
        let e = parse_function("%1:i32 = iadd %0, %0").unwrap_err();
        assert!(e.msg.contains("undefined"), "{e}");
    }

    #[test]
    fn parse_rejects_bad_type_and_double_def() {
        assert!(parse_function("%0:i7 = const 1").is_err());
        assert!(parse_function("%0:i32 = const 1\n%0:i32 = const 2").is_err());
        assert!(parse_function("%0:i32 = frob 1").is_err());
        assert!(parse_function("%0:b1 = const 1\nif %0 {\n").is_err());
    }

    #[test]
    fn constants_print_and_parse() {
        for (ty, s) in [
            (Type::F32, "-0.0"),
            (Type::F32, "inf"),
            (Type::F32, "0x7fc00001"),
            (Type::I32, "-5"),
            (Type::I32, "4294901760"),
            (Type::bool(32), "true"),
            (Type::float(64), "0.1"),
        ] {
            let bits = parse_const(ty, s).unwrap();
            assert_eq!(fmt_const(ty, bits), s, "{ty}");
        }
    }

    #[test]
    fn shader_header_round_trips() {
        let text = "shader local_size 8 4 1 shared 64 local 0 push 16\nfn main {\n}\n";
        let s = parse_shader(text).unwrap();
        assert_eq!(s.local_size, [8, 4, 1]);
        assert_eq!(s.to_string(), text);
    }
}
