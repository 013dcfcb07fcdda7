//! Assembler for Mesa's syntax (the syntax [`crate::disasm`] prints).
//!
//! Statements: `LABEL:` definitions and instructions ending in `;`. Branch targets are
//! labels or signed byte offsets. SEND/SENDS take their descriptor(s) as hex (or `a0`),
//! then the shared-function name, then `MsgDesc: ...` text, which is a comment for the
//! assembler. `{ compacted }` asks for the 8-byte form (an error if it does not exist).
//! Mesa's encoding conventions for operands the text leaves out (src1 of 1-source ops,
//! branch operand fields) are applied, so that Mesa's vectors assemble bit-exactly.

use crate::compact::compact_u128;
use crate::error::{IsaError, Result};
use crate::model::*;
use std::collections::HashMap;

/// One parsed statement of a program.
#[derive(Clone, Debug, PartialEq)]
pub struct AsmInst {
    pub inst: Instruction,
    pub compacted: bool,
    /// Line and column of the instruction's first character.
    pub line: usize,
    pub col: usize,
}

struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
    line: usize,
    line_start: usize,
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'a> Cursor<'a> {
    fn err(&self, msg: impl Into<String>) -> IsaError {
        IsaError::Asm {
            line: self.line,
            col: self.pos - self.line_start + 1,
            msg: msg.into(),
        }
    }
    fn err_at(&self, (line, col): (usize, usize), msg: impl Into<String>) -> IsaError {
        IsaError::Asm {
            line,
            col,
            msg: msg.into(),
        }
    }
    fn here(&self) -> (usize, usize) {
        (self.line, self.pos - self.line_start + 1)
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }
    fn peek_at(&self, k: usize) -> Option<u8> {
        self.s.get(self.pos + k).copied()
    }
    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
            self.line_start = self.pos;
        }
        Some(c)
    }
    /// Skips white space and comments (`/* */`, `//`, `#`).
    fn ws(&mut self) -> Result<()> {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_whitespace() => {
                    self.bump();
                }
                Some(b'/') if self.peek_at(1) == Some(b'*') => {
                    let at = self.here();
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            None => return Err(self.err_at(at, "unterminated comment")),
                            Some(b'*') if self.peek() == Some(b'/') => {
                                self.bump();
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                Some(b'/') if self.peek_at(1) == Some(b'/') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.bump();
                    }
                }
                Some(b'#') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.bump();
                    }
                }
                _ => return Ok(()),
            }
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(format!("expected '{}'", c as char)))
        }
    }
    fn ident(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(is_ident) {
            self.bump();
        }
        std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("")
    }
    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(&f) {
            self.bump();
        }
        std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("")
    }
    fn number(&mut self) -> Result<i64> {
        let at = self.here();
        let neg = self.eat(b'-');
        let digits = self.take_while(|c| c.is_ascii_digit());
        let v: i64 = digits
            .parse()
            .map_err(|_| self.err_at(at, "expected a number"))?;
        Ok(if neg { -v } else { v })
    }
    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }
}

/// A syntactic operand, interpreted once the access mode is known.
#[derive(Clone, Debug, Default)]
struct POperand {
    negate: bool,
    abs: bool,
    /// `Some` for registers.
    reg: Option<PReg>,
    /// Sub-register in elements.
    sub: Option<u32>,
    region: Vec<u8>,
    swz: Option<String>,
    ty: Option<Type>,
    imm: Option<Imm>,
    at: (usize, usize),
}

#[derive(Clone, Copy, Debug)]
enum PReg {
    Direct(Reg),
    /// `g[a0.s off]`
    Indirect {
        addr_subnr: u8,
        imm: i16,
    },
}

const IMM_SUFFIXES: [(&str, Type); 14] = [
    ("UD", Type::UD),
    ("UW", Type::UW),
    ("UV", Type::UV),
    ("VF", Type::VF),
    ("DF", Type::DF),
    ("HF", Type::HF),
    ("UQ", Type::UQ),
    ("UB", Type::UB),
    ("D", Type::D),
    ("W", Type::W),
    ("V", Type::V),
    ("F", Type::F),
    ("Q", Type::Q),
    ("B", Type::B),
];

/// Builds an immediate from its text value, replicating 16-bit values as Mesa does.
fn make_imm(ty: Type, v: u64) -> Option<Imm> {
    let fits = |bits: u32| bits == 64 || v >> bits == 0;
    Some(match ty {
        Type::UW | Type::W | Type::HF => {
            if !fits(16) {
                return None;
            }
            Imm {
                ty,
                bits: (v << 16) | v,
            }
        }
        Type::UD | Type::D | Type::F | Type::V | Type::UV | Type::VF => {
            if !fits(32) {
                return None;
            }
            Imm { ty, bits: v }
        }
        Type::UQ | Type::Q | Type::DF => Imm { ty, bits: v },
        Type::UB | Type::B => return None,
    })
}

/// IEEE half from f32, round to nearest even (for `1.5HF` literals).
fn f32_to_half(v: f32) -> u16 {
    let b = v.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xFF) as i32;
    let man = b & 0x7F_FFFF;
    if exp == 0xFF {
        return sign | 0x7C00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7C00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let r = if rem > mid || (rem == mid && half & 1 == 1) {
            half + 1
        } else {
            half
        };
        return sign | r as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1FFF;
    let r = if rem > 0x1000 || (rem == 0x1000 && half & 1 == 1) {
        half + 1
    } else {
        half
    };
    sign | r as u16
}

fn parse_immediate(c: &mut Cursor) -> Result<Imm> {
    let at = c.here();
    let neg = c.eat(b'-');
    if c.peek() == Some(b'0') && matches!(c.peek_at(1), Some(b'x') | Some(b'X')) {
        c.bump();
        c.bump();
        let run = c.take_while(|ch| ch.is_ascii_alphanumeric());
        for (suf, ty) in IMM_SUFFIXES {
            if let Some(digits) = run.strip_suffix(suf) {
                if digits.is_empty()
                    || !digits.bytes().all(|b| b.is_ascii_hexdigit())
                    || digits.len() > 16
                {
                    continue;
                }
                let v =
                    u64::from_str_radix(digits, 16).map_err(|_| c.err_at(at, "bad hex number"))?;
                let v = if neg { v.wrapping_neg() } else { v };
                let v = match ty {
                    Type::UW | Type::W | Type::HF => v & 0xFFFF,
                    Type::UD | Type::D | Type::F | Type::V | Type::UV | Type::VF if neg => {
                        v & 0xFFFF_FFFF
                    }
                    _ => v,
                };
                if let Some(imm) = make_imm(ty, v) {
                    return Ok(imm);
                }
            }
        }
        return Err(c.err_at(at, format!("bad immediate '0x{run}'")));
    }
    let digits = c.take_while(|ch| ch.is_ascii_digit());
    if digits.is_empty() {
        return Err(c.err_at(at, "expected an operand"));
    }
    // Decimal float literal (`1.5F`, `2F`, `-0.25DF`, `1e-3F`): a value, not raw bits.
    let save = (c.pos, c.line, c.line_start);
    let mut frac = String::new();
    if c.peek() == Some(b'.') && c.peek_at(1).is_some_and(|d| d.is_ascii_digit()) {
        c.bump();
        frac = format!(".{}", c.take_while(|ch| ch.is_ascii_digit()));
    }
    if c.peek() == Some(b'e')
        && c.peek_at(1)
            .is_some_and(|d| d.is_ascii_digit() || d == b'-' || d == b'+')
    {
        c.bump();
        let sign = if c.peek() == Some(b'-') || c.peek() == Some(b'+') {
            c.bump().map_or("", |b| if b == b'-' { "-" } else { "" })
        } else {
            ""
        };
        frac.push_str(&format!(
            "e{sign}{}",
            c.take_while(|ch| ch.is_ascii_digit())
        ));
    }
    let suffix = c.take_while(|ch| ch.is_ascii_uppercase());
    if matches!(suffix, "F" | "DF" | "HF") {
        let text = format!("{}{digits}{frac}", if neg { "-" } else { "" });
        let v: f64 = text
            .parse()
            .map_err(|_| c.err_at(at, format!("bad float '{text}'")))?;
        return Ok(match suffix {
            "F" => Imm::f(v as f32),
            "DF" => Imm::df(v),
            _ => Imm::hf(f32_to_half(v as f32)),
        });
    }
    if !frac.is_empty() {
        (c.pos, c.line, c.line_start) = save;
        return Err(c.err_at(at, "fraction on an integer immediate"));
    }
    let ty = Type::from_name(suffix)
        .ok_or_else(|| c.err_at(at, format!("bad immediate type '{suffix}'")))?;
    let mag: u64 = digits
        .parse()
        .map_err(|_| c.err_at(at, "number too large"))?;
    let v = if neg {
        (mag as i64).wrapping_neg() as u64
    } else {
        mag
    };
    let v = match ty {
        Type::W | Type::UW | Type::HF => v & 0xFFFF,
        Type::D | Type::UD | Type::F | Type::V | Type::UV | Type::VF => {
            if (v as i64) < i32::MIN as i64 && neg || (!neg && v > u32::MAX as u64) {
                return Err(c.err_at(at, "immediate out of range"));
            }
            v & 0xFFFF_FFFF
        }
        _ => v,
    };
    make_imm(ty, v).ok_or_else(|| c.err_at(at, format!("immediate not representable as {ty}")))
}

fn parse_operand(c: &mut Cursor) -> Result<POperand> {
    c.ws()?;
    let mut p = POperand {
        at: c.here(),
        ..Default::default()
    };
    loop {
        let minus = c.peek() == Some(b'-') && !c.peek_at(1).is_some_and(|d| d.is_ascii_digit());
        if minus || c.peek() == Some(b'~') {
            c.bump();
            p.negate = true;
        } else if c.s[c.pos..].starts_with(b"(abs)") {
            for _ in 0..5 {
                c.bump();
            }
            p.abs = true;
        } else {
            break;
        }
    }
    match c.peek() {
        Some(ch) if ch.is_ascii_digit() || ch == b'-' => {
            if p.negate || p.abs {
                return Err(c.err("source modifier on an immediate"));
            }
            p.imm = Some(parse_immediate(c)?);
            return Ok(p);
        }
        Some(ch) if ch.is_ascii_lowercase() => {}
        _ => return Err(c.err("expected an operand")),
    }
    // Register name: lowercase letters, then digits.
    let letters = c.take_while(|ch| ch.is_ascii_lowercase());
    if letters == "g" && c.peek() == Some(b'[') {
        c.bump();
        c.ws()?;
        let name = c.take_while(|ch| ch.is_ascii_alphanumeric());
        if name != "a0" {
            return Err(c.err("expected a0 in an indirect operand"));
        }
        let mut addr_subnr = 0;
        if c.eat(b'.') {
            addr_subnr = c.number()? as u8;
        }
        c.ws()?;
        let mut imm = 0i64;
        if c.peek() != Some(b']') {
            imm = c.number()?;
        }
        c.ws()?;
        c.expect(b']')?;
        p.reg = Some(PReg::Indirect {
            addr_subnr,
            imm: imm as i16,
        });
    } else {
        let digits = c.take_while(|ch| ch.is_ascii_digit());
        let reg = if letters == "g" || letters == "r" {
            let n: u32 = digits
                .parse()
                .map_err(|_| c.err_at(p.at, "bad GRF number"))?;
            if n > 255 {
                return Err(c.err_at(p.at, "GRF number > 255"));
            }
            Reg::Grf(n as u8)
        } else {
            let name = format!("{letters}{digits}");
            let a = ArfReg::from_name(&name)
                .ok_or_else(|| c.err_at(p.at, format!("unknown register '{name}'")))?;
            Reg::Arf(a)
        };
        p.reg = Some(PReg::Direct(reg));
    }
    if c.peek() == Some(b'.') && c.peek_at(1).is_some_and(|d| d.is_ascii_digit()) {
        c.bump();
        let at = c.here();
        let n = c.number()?;
        if !(0..32).contains(&n) {
            return Err(c.err_at(at, "sub-register out of range"));
        }
        p.sub = Some(n as u32);
    }
    if c.eat(b'<') {
        loop {
            c.ws()?;
            if c.s[c.pos..].starts_with(b"VxH") || c.s[c.pos..].starts_with(b"Vx1") {
                for _ in 0..3 {
                    c.bump();
                }
                p.region.push(Region::VXH);
            } else {
                let n = c.number()?;
                if !(0..=32).contains(&n) {
                    return Err(c.err("region value out of range"));
                }
                p.region.push(n as u8);
            }
            c.ws()?;
            if c.eat(b'>') {
                break;
            }
            if !c.eat(b',') && !c.eat(b';') {
                return Err(c.err("expected ',' or '>' in region"));
            }
        }
    }
    if c.peek() == Some(b'.') {
        c.bump();
        let s = c.take_while(|ch| matches!(ch, b'x' | b'y' | b'z' | b'w'));
        p.swz = Some(s.to_string());
    }
    let tname = c.take_while(|ch| ch.is_ascii_uppercase());
    if !tname.is_empty() {
        p.ty =
            Some(Type::from_name(tname).ok_or_else(|| c.err(format!("unknown type '{tname}'")))?);
    }
    Ok(p)
}

fn need_ty(p: &POperand) -> Result<Type> {
    p.ty.ok_or(IsaError::Asm {
        line: p.at.0,
        col: p.at.1,
        msg: "operand without a type".into(),
    })
}

fn perr(p: &POperand, msg: impl Into<String>) -> IsaError {
    IsaError::Asm {
        line: p.at.0,
        col: p.at.1,
        msg: msg.into(),
    }
}

/// The register an operand names. `indirect_unit` is the unit, in bytes, in which the listing
/// writes an indirect operand's a0 sub-register: the element size for a destination, bytes
/// for a source (as the disassembler prints them).
fn operand_addr(p: &POperand, ty: Type, mode: AccessMode, indirect_unit: u32) -> Result<Addr> {
    Ok(match p.reg.ok_or_else(|| perr(p, "expected a register"))? {
        PReg::Direct(reg) => {
            let subnr = match mode {
                AccessMode::Align1 => sub_bytes(p, ty)?,
                AccessMode::Align16 => {
                    if p.sub.unwrap_or(0) != 0 {
                        16
                    } else {
                        0
                    }
                }
            };
            Addr::Direct { reg, subnr }
        }
        PReg::Indirect { addr_subnr, imm } => Addr::Indirect {
            file: RegFile::Grf,
            addr_subnr: (addr_subnr as u32 * indirect_unit) as u8,
            imm,
        },
    })
}

fn sub_bytes(p: &POperand, ty: Type) -> Result<u8> {
    let b = p.sub.unwrap_or(0) * ty.size();
    u8::try_from(b)
        .ok()
        .filter(|&b| b < 32)
        .ok_or_else(|| perr(p, "sub-register out of range"))
}

fn swizzle_of(p: &POperand) -> Result<Swizzle> {
    let Some(s) = &p.swz else {
        return Ok(Swizzle::XYZW);
    };
    let idx = |ch: u8| match ch {
        b'x' => 0,
        b'y' => 1,
        b'z' => 2,
        _ => 3,
    };
    let b = s.as_bytes();
    match b.len() {
        1 => Ok(Swizzle([idx(b[0]); 4])),
        4 => Ok(Swizzle([idx(b[0]), idx(b[1]), idx(b[2]), idx(b[3])])),
        _ => Err(perr(p, format!("bad swizzle '.{s}'"))),
    }
}

fn writemask_of(p: &POperand) -> Result<WriteMask> {
    let Some(s) = &p.swz else {
        return Ok(WriteMask::XYZW);
    };
    let mut m = 0;
    for ch in s.bytes() {
        m |= match ch {
            b'x' => 1,
            b'y' => 2,
            b'z' => 4,
            _ => 8,
        };
    }
    Ok(WriteMask(m))
}

fn build_dst(p: &POperand, mode: AccessMode) -> Result<Dst> {
    if p.imm.is_some() || p.negate || p.abs {
        return Err(perr(p, "bad destination"));
    }
    let ty = need_ty(p)?;
    let hstride = match p.region.as_slice() {
        [h] => *h,
        [] => 1,
        _ => return Err(perr(p, "destination region must be <h>")),
    };
    if Region::hstride_hw(hstride).is_none() {
        return Err(perr(p, "bad destination stride"));
    }
    // In Align16 the destination's horizontal stride must be 1 (docs/gen9.md §2.8 Regions, rule 10);
    // the disassembler prints every Align16 destination as <1>.
    if mode == AccessMode::Align16 && hstride != 1 {
        return Err(perr(p, "an Align16 destination's stride must be <1>"));
    }
    let addr = operand_addr(p, ty, mode, ty.size())?;
    let writemask = if mode == AccessMode::Align16 {
        writemask_of(p)?
    } else {
        WriteMask::XYZW
    };
    Ok(Dst {
        addr,
        ty,
        hstride,
        writemask,
    })
}

fn build_src(p: &POperand, mode: AccessMode) -> Result<Src> {
    if let Some(imm) = p.imm {
        return Ok(Src::Imm(imm));
    }
    let ty = need_ty(p)?;
    let region = match (mode, p.region.as_slice()) {
        (AccessMode::Align1, [v, w, h]) => Region::new(*v, *w, *h),
        (AccessMode::Align16, [v]) => Region::new(*v, 4, 1),
        (AccessMode::Align16, [v, _, _]) => Region::new(*v, 4, 1),
        _ => return Err(perr(p, format!("bad region for {mode}"))),
    };
    if Region::vstride_hw(region.vstride).is_none()
        || Region::width_hw(region.width).is_none()
        || Region::hstride_hw(region.hstride).is_none()
    {
        return Err(perr(p, format!("invalid region {region}")));
    }
    let addr = operand_addr(p, ty, mode, 1)?;
    let swizzle = if mode == AccessMode::Align16 {
        swizzle_of(p)?
    } else {
        Swizzle::XYZW
    };
    Ok(Src::Reg(RegSrc {
        addr,
        ty,
        region,
        swizzle,
        negate: p.negate,
        abs: p.abs,
    }))
}

fn grf_of(p: &POperand) -> Result<u8> {
    match p.reg {
        Some(PReg::Direct(Reg::Grf(n))) => Ok(n),
        _ => Err(perr(p, "expected a GRF")),
    }
}

fn build_dst3(p: &POperand) -> Result<Dst3> {
    let ty = need_ty(p)?;
    let sub = p.sub.unwrap_or(0) * ty.size();
    if sub & 3 != 0 || sub >= 32 {
        return Err(perr(
            p,
            "3-src destination sub-register must be DWord aligned",
        ));
    }
    Ok(Dst3 {
        nr: grf_of(p)?,
        subnr_dw: (sub / 4) as u8,
        writemask: writemask_of(p)?,
        ty,
    })
}

fn build_src3(p: &POperand) -> Result<Src3> {
    if p.imm.is_some() {
        return Err(perr(p, "3-source instructions take no immediates"));
    }
    let ty = need_ty(p)?;
    let rep_ctrl = match p.region.as_slice() {
        [0, 1, 0] => true,
        [4, 4, 1] | [] => false,
        _ => return Err(perr(p, "3-src region must be <4,4,1> or <0,1,0>")),
    };
    let sub = p.sub.unwrap_or(0) * ty.size();
    if sub & 1 != 0 || sub >= 32 {
        return Err(perr(p, "bad 3-src sub-register"));
    }
    Ok(Src3 {
        nr: grf_of(p)?,
        subnr: sub as u8,
        // Mesa leaves the swizzle field zero on a replicated scalar; a swizzle written after
        // `<0,1,0>` is kept (the disassembler prints any other value).
        swizzle: if rep_ctrl && p.swz.is_none() {
            Swizzle([0; 4])
        } else {
            swizzle_of(p)?
        },
        rep_ctrl,
        negate: p.negate,
        abs: p.abs,
        ty,
    })
}

fn sends_reg(p: &POperand) -> Result<SendsReg> {
    let sub = p.sub.unwrap_or(0);
    if sub > 1 {
        return Err(perr(p, "split-send sub-register must be .0 or .1"));
    }
    match p.reg {
        Some(PReg::Direct(Reg::Grf(n))) => Ok(SendsReg {
            file: RegFile::Grf,
            nr: n,
            subnr16: sub as u8,
        }),
        Some(PReg::Direct(Reg::Arf(a))) => Ok(SendsReg {
            file: RegFile::Arf,
            nr: a.nr(),
            subnr16: sub as u8,
        }),
        _ => Err(perr(p, "expected a register")),
    }
}

/// A branch target: a label (resolved later) or a byte offset.
#[derive(Clone, Debug)]
enum Target {
    Label(String, (usize, usize)),
    Offset(i32),
}

struct Pending {
    inst: Instruction,
    compacted: bool,
    jip: Option<Target>,
    uip: Option<Target>,
    at: (usize, usize),
}

fn parse_target(c: &mut Cursor) -> Result<Target> {
    c.ws()?;
    let at = c.here();
    if c.peek().is_some_and(|ch| ch.is_ascii_digit() || ch == b'-') {
        Ok(Target::Offset(c.number()? as i32))
    } else {
        let name = c.ident();
        if name.is_empty() {
            return Err(c.err("expected a label or offset"));
        }
        Ok(Target::Label(name.to_string(), at))
    }
}

fn parse_hex_u32(c: &mut Cursor) -> Result<u32> {
    c.ws()?;
    let at = c.here();
    if !(c.eat(b'0') && (c.eat(b'x') || c.eat(b'X'))) {
        return Err(c.err_at(at, "expected a hex descriptor"));
    }
    let d = c.take_while(|ch| ch.is_ascii_hexdigit());
    u32::from_str_radix(d, 16).map_err(|_| c.err_at(at, "bad hex descriptor"))
}

/// Parses `a0[.N]<...>UD` (descriptor in a0); returns the sub-register number.
fn parse_a0(c: &mut Cursor) -> Result<Option<u8>> {
    c.ws()?;
    if !c.s[c.pos..].starts_with(b"a0") {
        return Ok(None);
    }
    let p = parse_operand(c)?;
    match p.reg {
        Some(PReg::Direct(Reg::Arf(a))) if a == ArfReg::A0 => {
            // SEND prints a0 as a UD source (sub-register in dwords); SENDS prints the
            // raw field with a `<0>UD` suffix, which this function's callers scale.
            Ok(Some(p.sub.unwrap_or(0) as u8))
        }
        _ => Err(perr(&p, "expected a0")),
    }
}

fn parse_sfid(c: &mut Cursor) -> Result<Sfid> {
    c.ws()?;
    let at = c.here();
    let rest = &c.s[c.pos..];
    let mut best: Option<(Sfid, usize)> = None;
    for (sfid, name) in Sfid::all() {
        let n = name.as_bytes();
        if rest.starts_with(n)
            && !rest.get(n.len()).is_some_and(|&ch| is_ident(ch))
            && best.is_none_or(|(_, l)| n.len() > l)
        {
            best = Some((*sfid, n.len()));
        }
    }
    let (sfid, len) = best.ok_or_else(|| c.err_at(at, "expected a shared-function name"))?;
    for _ in 0..len {
        c.bump();
    }
    c.ws()?;
    if c.s[c.pos..].starts_with(b"MsgDesc:") {
        // Human-readable description: everything up to the options or ';'.
        while !matches!(c.peek(), None | Some(b'{') | Some(b';')) {
            c.bump();
        }
    }
    Ok(sfid)
}

#[derive(Default)]
struct Options {
    mode: AccessMode,
    we_all: bool,
    dep: DepCtrl,
    group: Option<ChannelGroup>,
    compacted: bool,
    thread: ThreadCtrl,
    acc_wr: bool,
    branch_ctrl: bool,
    eot: bool,
    breakpoint: bool,
}

fn parse_options(c: &mut Cursor) -> Result<Options> {
    let mut o = Options::default();
    c.ws()?;
    if !c.eat(b'{') {
        return Ok(o);
    }
    loop {
        c.ws()?;
        if c.eat(b'}') {
            break;
        }
        if c.eat(b',') {
            continue;
        }
        let at = c.here();
        let w = c.ident();
        match w {
            "align1" => o.mode = AccessMode::Align1,
            "align16" => o.mode = AccessMode::Align16,
            "WE_all" => o.we_all = true,
            "NoDDClr" => o.dep.no_dd_clear = true,
            "NoDDChk" => o.dep.no_dd_check = true,
            "compacted" => o.compacted = true,
            "atomic" => o.thread = ThreadCtrl::Atomic,
            "switch" => o.thread = ThreadCtrl::Switch,
            "AccWrEnable" => o.acc_wr = true,
            "BranchCtrl" => o.branch_ctrl = true,
            "EOT" => o.eot = true,
            "Breakpoint" | "breakpoint" => o.breakpoint = true,
            "1H" => o.group = Some(ChannelGroup { qtr: 0, nib: false }),
            "2H" => o.group = Some(ChannelGroup { qtr: 2, nib: false }),
            _ => {
                let b = w.as_bytes();
                let g = if b.len() == 2 && b[0].is_ascii_digit() {
                    let n = (b[0] - b'0') as u32;
                    match b[1] {
                        b'Q' if (1..=4).contains(&n) => Some(ChannelGroup {
                            qtr: (n - 1) as u8,
                            nib: false,
                        }),
                        b'N' if (1..=8).contains(&n) => Some(ChannelGroup {
                            qtr: ((n - 1) / 2) as u8,
                            nib: (n - 1) % 2 == 1,
                        }),
                        _ => None,
                    }
                } else {
                    None
                };
                match g {
                    Some(g) => o.group = Some(g),
                    None => return Err(c.err_at(at, format!("unknown option '{w}'"))),
                }
            }
        }
    }
    Ok(o)
}

fn parse_flag(c: &mut Cursor) -> Result<FlagReg> {
    let at = c.here();
    if !c.eat(b'f') {
        return Err(c.err("expected a flag register"));
    }
    let nr = c.number()?;
    c.expect(b'.')?;
    let subnr = c.number()?;
    if !(0..=1).contains(&nr) || !(0..=1).contains(&subnr) {
        return Err(c.err_at(at, "flag register must be f0.0..f1.1"));
    }
    Ok(FlagReg {
        nr: nr as u8,
        subnr: subnr as u8,
    })
}

fn parse_instruction(c: &mut Cursor, gen: Gen) -> Result<Pending> {
    let at = c.here();
    // Predicate.
    let mut pred: Option<(bool, FlagReg, String, (usize, usize))> = None;
    if c.eat(b'(') {
        c.ws()?;
        let inverse = if c.eat(b'-') {
            true
        } else {
            c.eat(b'+');
            false
        };
        let flag = parse_flag(c)?;
        let pat = c.here();
        let mut suffix = String::new();
        if c.eat(b'.') {
            suffix = format!(".{}", c.ident());
        }
        c.ws()?;
        c.expect(b')')?;
        pred = Some((inverse, flag, suffix, pat));
        c.ws()?;
    }
    let op_at = c.here();
    let name = c.ident();
    let opcode = Opcode::from_name(name)
        .ok_or_else(|| c.err_at(op_at, format!("unknown opcode '{name}'")))?;
    if !opcode.is_valid_on(gen) {
        return Err(c.err_at(op_at, format!("opcode '{name}' is not valid on {gen}")));
    }
    let mut saturate = false;
    let mut debug = false;
    let mut cond_mod = CondMod::None;
    let mut cmod_flag: Option<FlagReg> = None;
    while c.peek() == Some(b'.') {
        let dot_at = c.here();
        c.bump();
        if c.peek() == Some(b'f') && c.peek_at(1).is_some_and(|d| d.is_ascii_digit()) {
            cmod_flag = Some(parse_flag(c)?);
            continue;
        }
        let w = c.ident();
        match w {
            "sat" => saturate = true,
            "breakpoint" => debug = true,
            _ => {
                cond_mod = CondMod::from_suffix(&format!(".{w}"))
                    .ok_or_else(|| c.err_at(dot_at, format!("unknown modifier '.{w}'")))?
            }
        }
    }
    let mut math_fn = None;
    if opcode == Opcode::Math {
        c.ws()?;
        let fat = c.here();
        let f = c.ident();
        math_fn = Some(
            MathFunction::from_name(f)
                .ok_or_else(|| c.err_at(fat, format!("unknown math function '{f}'")))?,
        );
    }
    let mut exec = ExecSize::S1;
    c.ws()?;
    if c.peek() == Some(b'(') {
        c.bump();
        let eat = c.here();
        let n = c.number()?;
        exec = ExecSize::new(n as u32)
            .ok_or_else(|| c.err_at(eat, format!("bad execution size {n}")))?;
        c.expect(b')')?;
    } else if opcode != Opcode::Nop {
        return Err(c.err("expected '(exec size)'"));
    }

    // Operands (syntax only; interpreted once the options give the access mode).
    let mut ops: Vec<POperand> = Vec::new();
    let mut jip = None;
    let mut uip = None;
    let mut send_desc: Option<SendDesc> = None;
    let mut ex_desc: Option<ExDesc> = None;
    let mut sfid = None;
    let mut raw_eot = false;
    match opcode.format() {
        Format::Branch => {
            c.ws()?;
            if !c.s[c.pos..].starts_with(b"JIP:") {
                return Err(c.err("expected 'JIP:'"));
            }
            c.pos += 4;
            jip = Some(parse_target(c)?);
            if opcode.has_uip() {
                c.ws()?;
                if !c.s[c.pos..].starts_with(b"UIP:") {
                    return Err(c.err("expected 'UIP:'"));
                }
                c.pos += 4;
                uip = Some(parse_target(c)?);
            }
        }
        Format::Basic => {
            c.ws()?;
            let bare_nop = opcode == Opcode::Nop && matches!(c.peek(), Some(b'{') | Some(b';'));
            let n = match opcode {
                Opcode::Nop if !bare_nop => 3,
                Opcode::Nop | Opcode::Illegal => 0,
                Opcode::Jmpi => 1,
                Opcode::Math => 3,
                _ => 1 + opcode.num_srcs() as usize,
            };
            for _ in 0..n {
                ops.push(parse_operand(c)?);
            }
        }
        Format::ThreeSrc => {
            for _ in 0..4 {
                ops.push(parse_operand(c)?);
            }
        }
        Format::Send => {
            ops.push(parse_operand(c)?);
            ops.push(parse_operand(c)?);
            if let Some(sub) = parse_a0(c)? {
                send_desc = Some(SendDesc::A0 { subnr: sub * 4 });
                parse_hex_u32(c)?;
            } else {
                let raw = parse_hex_u32(c)?;
                send_desc = Some(SendDesc::Imm(raw & 0x7FFF_FFFF));
                raw_eot = raw >> 31 != 0;
            }
            sfid = Some(parse_sfid(c)?);
        }
        Format::SplitSend => {
            for _ in 0..3 {
                ops.push(parse_operand(c)?);
            }
            send_desc = Some(match parse_a0(c)? {
                Some(sub) => SendDesc::A0 { subnr: sub },
                None => SendDesc::Imm(parse_hex_u32(c)?),
            });
            ex_desc = Some(match parse_a0(c)? {
                Some(sub) => ExDesc::A0 { subnr_dw: sub },
                None => ExDesc::Imm(parse_hex_u32(c)?),
            });
            sfid = Some(parse_sfid(c)?);
        }
    }
    let o = parse_options(c)?;
    c.ws()?;
    c.expect(b';')?;

    let mode = o.mode;
    let mut flag = FlagReg::default();
    let predicate = match &pred {
        Some((inverse, f, suffix, pat)) => {
            flag = *f;
            let ctrl = PredCtrl::from_suffix(suffix, mode).ok_or_else(|| {
                c.err_at(
                    *pat,
                    format!("predicate control '{suffix}' not valid in {mode}"),
                )
            })?;
            Some(Predicate {
                ctrl,
                inverse: *inverse,
            })
        }
        None => None,
    };
    if let Some(f) = cmod_flag {
        if pred.is_some() && f != flag {
            return Err(c.err_at(
                op_at,
                "predicate and conditional modifier use different flag registers",
            ));
        }
        flag = f;
    }
    let group = o.group.unwrap_or_default();
    let operands = match opcode.format() {
        Format::Branch => {
            // Mesa's operand conventions (F1.9).
            let dst = match opcode {
                Opcode::Endif => Dst::zero(),
                Opcode::Cont => Dst {
                    ty: Type::UD,
                    ..Dst::new(Addr::arf(ArfReg::IP, 0), Type::UD)
                },
                _ => Dst::null(Type::D),
            };
            let uip_default = if opcode.has_uip() {
                0
            } else {
                (Type::D.reg_hw(gen).unwrap_or(1) as i32) << 27
            };
            Operands::Branch {
                dst,
                src0_file: RegFile::Imm,
                src0_ty: Type::D,
                jip: 0,
                uip: uip_default,
            }
        }
        Format::Basic => match opcode {
            Opcode::Nop | Opcode::Illegal if ops.is_empty() => Operands::Basic {
                cond_mod,
                math_fn: None,
                dst: Dst::zero(),
                src0: Src::zero(),
                src1: Src::zero(),
            },
            Opcode::Jmpi => {
                let ip_src = RegSrc::new(Addr::arf(ArfReg::IP, 0), Type::UD, Region::ZERO);
                let dst = Dst::new(Addr::arf(ArfReg::IP, 0), Type::UD);
                Operands::Basic {
                    cond_mod,
                    math_fn: None,
                    dst,
                    src0: Src::Reg(ip_src),
                    src1: build_src(&ops[0], mode)?,
                }
            }
            Opcode::Wait => {
                // Mesa: src0 = the notification register itself <0,1,0>, src1 = null:F <8,8,1>.
                let dst = build_dst(&ops[0], mode)?;
                let src0 = Src::Reg(RegSrc::new(dst.addr, dst.ty, Region::SCALAR));
                let src1 = Src::Reg(RegSrc::new(Addr::null(), Type::F, Region::new(8, 8, 1)));
                Operands::Basic {
                    cond_mod,
                    math_fn: None,
                    dst,
                    src0,
                    src1,
                }
            }
            _ => {
                let dst = build_dst(&ops[0], mode)?;
                let src0 = build_src(&ops[1], mode)?;
                let src1 = if ops.len() > 2 {
                    build_src(&ops[2], mode)?
                } else {
                    match src0 {
                        Src::Imm(i) if !i.ty.is_64bit() => Src::unused_for_imm(i.ty),
                        _ => Src::zero_for(mode),
                    }
                };
                Operands::Basic {
                    cond_mod,
                    math_fn,
                    dst,
                    src0,
                    src1,
                }
            }
        },
        Format::ThreeSrc => Operands::ThreeSrc {
            cond_mod,
            dst: build_dst3(&ops[0])?,
            src: [
                build_src3(&ops[1])?,
                build_src3(&ops[2])?,
                build_src3(&ops[3])?,
            ],
        },
        Format::Send => {
            let dst = build_dst(&ops[0], mode)?;
            let Src::Reg(src0) = build_src(&ops[1], mode)? else {
                return Err(perr(&ops[1], "SEND payload must be a register"));
            };
            if raw_eot != o.eot && matches!(send_desc, Some(SendDesc::Imm(_))) {
                return Err(c.err_at(
                    op_at,
                    "descriptor bit 31 (EOT) disagrees with the EOT option",
                ));
            }
            Operands::Send {
                sfid: sfid.unwrap_or(Sfid::Null),
                eot: o.eot,
                dst,
                src0,
                desc: send_desc.unwrap_or(SendDesc::Imm(0)),
                ex_desc_31_28: 0,
            }
        }
        Format::SplitSend => Operands::SplitSend {
            sfid: sfid.unwrap_or(Sfid::Null),
            eot: o.eot,
            dst: sends_reg(&ops[0])?,
            src0: sends_reg(&ops[1])?,
            src1: sends_reg(&ops[2])?,
            desc: send_desc.unwrap_or(SendDesc::Imm(0)),
            ex_desc: ex_desc.unwrap_or(ExDesc::Imm(0)),
        },
    };
    let inst = Instruction {
        opcode,
        access_mode: mode,
        exec_size: exec,
        group,
        we_all: o.we_all,
        dep_ctrl: o.dep,
        thread_ctrl: o.thread,
        predicate,
        flag,
        saturate,
        acc_wr_en: o.acc_wr,
        branch_ctrl: o.branch_ctrl,
        debug: debug || o.breakpoint,
        operands,
    };
    if o.branch_ctrl && !opcode.has_branch_ctrl() {
        return Err(c.err_at(at, "BranchCtrl on an opcode without branch control"));
    }
    if o.acc_wr && opcode.has_branch_ctrl() {
        return Err(c.err_at(at, "AccWrEnable on a branch"));
    }
    Ok(Pending {
        inst,
        compacted: o.compacted,
        jip,
        uip,
        at,
    })
}

/// Parses a program into instructions with resolved branch offsets (real byte distances,
/// honouring `{ compacted }` sizes).
pub fn parse_program(text: &str, gen: Gen) -> Result<Vec<AsmInst>> {
    let mut c = Cursor {
        s: text.as_bytes(),
        pos: 0,
        line: 1,
        line_start: 0,
    };
    let mut pending: Vec<Pending> = Vec::new();
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut offset = 0usize;
    loop {
        c.ws()?;
        if c.at_end() {
            break;
        }
        // Label definition?
        let save = (c.pos, c.line, c.line_start);
        let at = c.here();
        let id = c.ident();
        if !id.is_empty() && c.peek() == Some(b':') && Opcode::from_name(id).is_none() {
            c.bump();
            if labels.insert(id.to_string(), offset).is_some() {
                return Err(c.err_at(at, format!("label '{id}' defined twice")));
            }
            continue;
        }
        (c.pos, c.line, c.line_start) = save;
        let p = parse_instruction(&mut c, gen)?;
        offset += if p.compacted { 8 } else { 16 };
        pending.push(p);
    }
    let mut out = Vec::with_capacity(pending.len());
    let mut off = 0usize;
    for mut p in pending {
        let resolve =
            |t: &Target| -> Result<i32> {
                match t {
                    Target::Offset(o) => Ok(*o),
                    Target::Label(name, at) => labels
                        .get(name)
                        .map(|&l| l as i32 - off as i32)
                        .ok_or(IsaError::Asm {
                            line: at.0,
                            col: at.1,
                            msg: format!("undefined label '{name}'"),
                        }),
                }
            };
        if let Operands::Branch { jip, uip, .. } = &mut p.inst.operands {
            if let Some(t) = &p.jip {
                *jip = resolve(t)?;
            }
            if let Some(t) = &p.uip {
                *uip = resolve(t)?;
            }
        }
        off += if p.compacted { 8 } else { 16 };
        out.push(AsmInst {
            inst: p.inst,
            compacted: p.compacted,
            line: p.at.0,
            col: p.at.1,
        });
    }
    Ok(out)
}

/// Assembles Mesa-syntax text to raw little-endian instruction bytes; each instruction is
/// native unless it says `{ compacted }`.
pub fn assemble(text: &str, gen: Gen) -> Result<Vec<u8>> {
    let insts = parse_program(text, gen)?;
    let mut out = Vec::with_capacity(insts.len() * 16);
    for a in &insts {
        let w = crate::codec::encode_u128(&a.inst, gen).map_err(|e| IsaError::Asm {
            line: a.line,
            col: a.col,
            msg: e.to_string(),
        })?;
        if a.compacted {
            // The text of a compacted instruction may show Mesa's pre-compaction retyping
            // only partly (src1's type code is not printed): retry with it.
            let retyped = crate::codec::encode_u128(&crate::compact::precompact(&a.inst), gen).ok();
            let c = compact_u128(w, gen)
                .or_else(|| retyped.and_then(|r| compact_u128(r, gen)))
                .ok_or(IsaError::Asm {
                    line: a.line,
                    col: a.col,
                    msg: "instruction has no compact form".into(),
                })?;
            out.extend_from_slice(&c.to_le_bytes());
        } else {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    Ok(out)
}
