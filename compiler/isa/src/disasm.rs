//! Disassembler: Mesa's assembly syntax (docs/gen9.md 1.10; the syntax of Mesa's
//! `src/intel/compiler/tests/gen9/*.asm`).
//!
//! Message descriptors are printed in Mesa's form for the compute shared functions
//! (data cache 0/1, constant cache, gateway, thread spawner, pixel interpolator). URB,
//! sampler and render-target messages print their descriptor fields generically
//! (`desc 0x...`), which the assembler reads back to the same bytes.

use crate::model::*;
use std::collections::BTreeMap;
use std::fmt::{self, Write};

/// A text line being built, with Mesa's column padding.
struct Line {
    s: String,
    line_start: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            s: String::new(),
            line_start: 0,
        }
    }
    fn push(&mut self, t: &str) {
        self.s.push_str(t);
    }
    /// Pads with spaces up to column `c` (at least one space), as Mesa's `pad`.
    fn pad(&mut self, c: usize) {
        loop {
            self.s.push(' ');
            if self.s.len() - self.line_start >= c {
                break;
            }
        }
    }
    fn newline(&mut self) {
        self.s.push('\n');
        self.line_start = self.s.len();
    }
}

/// Formats `v` like C's `printf("%g")` (6 significant digits, shortest form).
pub fn fmt_g(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let exp = format!("{:.5e}", v);
    let (mant, e) = exp.split_once('e').unwrap_or((&exp, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&e) {
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", strip(mant), sign, e.abs())
    } else {
        let prec = (5 - e).max(0) as usize;
        strip(&format!("{:.*}", prec, v))
    }
}

fn half_to_f32(h: u16) -> f32 {
    let s = (h >> 15) as u32;
    let e = ((h >> 10) & 0x1F) as i32;
    let m = (h & 0x3FF) as f32;
    let v = if e == 0 {
        m * 2f32.powi(-24)
    } else if e == 31 {
        if m == 0.0 {
            f32::INFINITY
        } else {
            f32::NAN
        }
    } else {
        (1.0 + m / 1024.0) * 2f32.powi(e - 15)
    };
    if s != 0 {
        -v
    } else {
        v
    }
}

impl fmt::Display for Imm {
    /// Mesa's immediate syntax, including the `/* value */` comments for float types.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let u = self.bits as u32;
        match self.ty {
            Type::UQ => write!(f, "0x{:016x}UQ", self.bits),
            Type::Q => write!(f, "0x{:016x}Q", self.bits),
            Type::UD => write!(f, "0x{u:08x}UD"),
            Type::D => write!(f, "{}D", u as i32),
            Type::UW => write!(f, "0x{:04x}UW", u as u16),
            Type::W => write!(f, "{}W", u as u16 as i16),
            Type::UV => write!(f, "0x{u:08x}UV"),
            Type::V => write!(f, "0x{u:08x}V"),
            Type::VF => write!(
                f,
                "0x{u:x}VF /* [{}F, {}F, {}F, {}F]VF */",
                fmt_g(vf_to_f32(u as u8) as f64),
                fmt_g(vf_to_f32((u >> 8) as u8) as f64),
                fmt_g(vf_to_f32((u >> 16) as u8) as f64),
                fmt_g(vf_to_f32((u >> 24) as u8) as f64)
            ),
            Type::F => write!(f, "0x{u:x}F /* {}F */", fmt_g(f32::from_bits(u) as f64)),
            Type::DF => {
                write!(
                    f,
                    "0x{:016x}DF /* {}DF */",
                    self.bits,
                    fmt_g(f64::from_bits(self.bits))
                )
            }
            Type::HF => {
                write!(
                    f,
                    "0x{:04x}HF /* {}HF */",
                    u as u16,
                    fmt_g(half_to_f32(u as u16) as f64)
                )
            }
            Type::UB | Type::B => write!(f, "*** invalid immediate type {}", self.ty),
        }
    }
}

/// `.N` sub-register suffix in elements of `ty`, as Mesa prints it.
fn subreg_suffix(subnr_bytes: u32, ty: Type) -> String {
    if subnr_bytes == 0 {
        String::new()
    } else {
        format!(".{}", subnr_bytes / ty.size())
    }
}

/// An Align16 operand's sub-register, `.N` in elements of `ty`: the register's second half
/// (byte 16) or none.
fn align16_suffix(subnr: u8, ty: Type) -> String {
    if subnr != 0 {
        format!(".{}", 16 / ty.size())
    } else {
        String::new()
    }
}

/// `g[a0.s off]`. Mesa divides the address sub-register by the type size for a
/// destination but not for a source (`unit` = 1 for sources).
fn indirect_text(addr_subnr: u8, imm: i16, unit: u32) -> String {
    let mut s = String::from("g[a0");
    if addr_subnr != 0 {
        let _ = write!(s, ".{}", addr_subnr as u32 / unit.max(1));
    }
    if imm != 0 {
        let _ = write!(s, " {imm}");
    }
    s.push(']');
    s
}

/// An Align1 operand's register: the register with its sub-register in elements of `ty`, or
/// the indirect `g[a0.s off]` (`unit` as for [`indirect_text`]).
fn align1_reg(addr: Addr, ty: Type, unit: u32) -> String {
    match addr {
        Addr::Direct { reg, subnr } => format!("{reg}{}", subreg_suffix(subnr as u32, ty)),
        Addr::Indirect {
            addr_subnr, imm, ..
        } => indirect_text(addr_subnr, imm, unit),
    }
}

/// Formats a destination in `mode`.
pub fn format_dst(d: &Dst, mode: AccessMode) -> String {
    let mut s = String::new();
    match (mode, d.addr) {
        (AccessMode::Align1, addr) => {
            let reg = align1_reg(addr, d.ty, d.ty.size());
            let _ = write!(s, "{reg}<{}>{}", d.hstride, d.ty);
        }
        (AccessMode::Align16, Addr::Direct { reg, subnr }) => {
            let sub = align16_suffix(subnr, d.ty);
            let _ = write!(s, "{reg}{sub}<1>{}{}", d.writemask, d.ty);
        }
        (AccessMode::Align16, Addr::Indirect { .. }) => {
            s.push_str("Indirect align16 address mode not supported");
        }
    }
    s
}

impl fmt::Display for Dst {
    /// Align1 form; use [`format_dst`] for Align16.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&format_dst(self, AccessMode::Align1))
    }
}

/// Formats a source operand in `mode`; `logic` selects `~` for negate.
pub fn format_src(src: &Src, mode: AccessMode, logic: bool) -> String {
    let r = match src {
        Src::Imm(i) => return i.to_string(),
        Src::Unused { .. } => return "(unused)".to_string(),
        Src::Reg(r) => r,
    };
    let mut s = String::new();
    if r.negate {
        s.push(if logic { '~' } else { '-' });
    }
    if r.abs {
        s.push_str("(abs)");
    }
    match (mode, r.addr) {
        (AccessMode::Align16, Addr::Direct { reg, subnr }) => {
            let sub = align16_suffix(subnr, r.ty);
            let v = if r.region.vstride == Region::VXH {
                "VxH".to_string()
            } else {
                r.region.vstride.to_string()
            };
            let _ = write!(s, "{reg}{sub}<{v}>{}{}", r.swizzle, r.ty);
        }
        // Align1, and an indirect source in either mode.
        (_, addr) => {
            let _ = write!(s, "{}{}{}", align1_reg(addr, r.ty, 1), r.region, r.ty);
        }
    }
    s
}

impl fmt::Display for RegSrc {
    /// Align1 form; use [`format_src`] for Align16 or logic ops.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&format_src(&Src::Reg(*self), AccessMode::Align1, false))
    }
}

impl fmt::Display for Src {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&format_src(self, AccessMode::Align1, false))
    }
}

/// `gN`, or `gN.S` for a non-zero element sub-register `S` (three-source operands).
fn write_grf(f: &mut fmt::Formatter, nr: u8, sub: u32) -> fmt::Result {
    write!(f, "g{nr}")?;
    if sub != 0 {
        write!(f, ".{sub}")?;
    }
    Ok(())
}

impl fmt::Display for Dst3 {
    /// Mesa prints the DWord-index field divided by the type size (F1.5 quirk); we print
    /// the byte offset in elements so that the assembler round-trips it.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write_grf(f, self.nr, self.subnr_dw as u32 * 4 / self.ty.size())?;
        write!(f, "<1>{}{}", self.writemask, self.ty)
    }
}

impl fmt::Display for Src3 {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.negate {
            f.write_str("-")?;
        }
        if self.abs {
            f.write_str("(abs)")?;
        }
        let sub = self.subnr as u32 / self.ty.size();
        if self.rep_ctrl {
            // A replicated scalar's swizzle is zero in Mesa's encoding and then not printed;
            // any other value is printed in full (`.xyzw` too), so that the text keeps it.
            write!(f, "g{}.{sub}<0,1,0>", self.nr)?;
            if self.swizzle == Swizzle::XYZW {
                f.write_str(".xyzw")?;
            } else if self.swizzle != Swizzle([0; 4]) {
                write!(f, "{}", self.swizzle)?;
            }
            write!(f, "{}", self.ty)
        } else {
            write_grf(f, self.nr, sub)?;
            write!(f, "<4,4,1>{}{}", self.swizzle, self.ty)
        }
    }
}

impl fmt::Display for SendsReg {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.file {
            RegFile::Grf => write!(f, "g{}", self.nr)?,
            _ => match ArfReg::from_nr(self.nr) {
                Some(a) => write!(f, "{a}")?,
                None => write!(f, "ARF{}", self.nr)?,
            },
        }
        if self.subnr16 != 0 {
            f.write_str(".1")?;
        }
        f.write_str("UD")
    }
}

impl fmt::Display for Predicate {
    /// Without the flag register, which lives in [`Instruction::flag`].
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{}{}",
            if self.inverse { '-' } else { '+' },
            self.ctrl.suffix()
        )
    }
}

impl fmt::Display for PredCtrl {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            PredCtrl::Normal => "normal",
            other => other.suffix().trim_start_matches('.'),
        })
    }
}

impl fmt::Display for ThreadCtrl {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            ThreadCtrl::Normal => "",
            ThreadCtrl::Atomic => "atomic",
            ThreadCtrl::Switch => "switch",
        })
    }
}

impl fmt::Display for DepCtrl {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match (self.no_dd_clear, self.no_dd_check) {
            (false, false) => "",
            (true, false) => "NoDDClr",
            (false, true) => "NoDDChk",
            (true, true) => "NoDDClr,NoDDChk",
        })
    }
}

impl fmt::Display for ChannelGroup {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "qtr{}{}", self.qtr, if self.nib { " nib1" } else { "" })
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            Addr::Direct { reg, subnr } => write!(f, "{reg}+{subnr}B"),
            Addr::Indirect {
                addr_subnr, imm, ..
            } => write!(f, "g[a0.{addr_subnr} {imm}]"),
        }
    }
}

impl fmt::Display for SendDesc {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            SendDesc::Imm(d) => write!(f, "0x{d:08x}"),
            SendDesc::A0 { subnr } => write!(f, "a0.{subnr}<0>UD"),
        }
    }
}

impl fmt::Display for ExDesc {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ExDesc::Imm(d) => write!(f, "0x{d:08x}"),
            ExDesc::A0 { subnr_dw } => write!(f, "a0.{subnr_dw}<0>UD"),
        }
    }
}

impl fmt::Display for Operands {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Operands::Basic {
                dst, src0, src1, ..
            } => write!(f, "{dst} {src0} {src1}"),
            Operands::ThreeSrc { dst, src, .. } => {
                write!(f, "{dst} {} {} {}", src[0], src[1], src[2])
            }
            Operands::Send {
                dst, src0, desc, ..
            } => write!(f, "{dst} {src0} {desc}"),
            Operands::SplitSend {
                dst,
                src0,
                src1,
                desc,
                ex_desc,
                ..
            } => {
                write!(f, "{dst} {src0} {src1} {desc} {ex_desc}")
            }
            Operands::Branch { jip, uip, .. } => write!(f, "JIP: {jip} UIP: {uip}"),
        }
    }
}

const AOP: [&str; 16] = [
    "", "and", "or", "xor", "mov", "inc", "dec", "add", "sub", "revsub", "imax", "imin", "umax",
    "umin", "cmpwr", "predec",
];
const AOP_FLOAT: [&str; 5] = ["", "fmax", "fmin", "fcmpwr", "fadd"];
const OWORD_BLOCK: [&str; 8] = ["1-low", "1-high", "2", "4", "8", "", "", ""];

fn sampler_msg_name(t: u32) -> Option<&'static str> {
    Some(match t {
        0 => "sample",
        1 => "sample_b",
        2 => "sample_l",
        3 => "sample_c",
        4 => "sample_d",
        5 => "sample_b_c",
        6 => "sample_l_c",
        7 => "ld",
        8 => "gather4",
        9 => "lod",
        10 => "resinfo",
        11 => "sampleinfo",
        16 => "gather4_c",
        17 => "gather4_po",
        18 => "gather4_po_c",
        20 => "sample_d_c",
        24 => "sample_lz",
        25 => "sample_c_lz",
        26 => "ld_lz",
        28 => "ld2dms_w",
        29 => "ld_mcs",
        30 => "ld2dms",
        31 => "ld2dss",
        _ => return None,
    })
}

fn dc0_msg_name(t: u32) -> Option<&'static str> {
    Some(match t {
        0x00 => "DC OWORD block read",
        0x01 => "DC unaligned OWORD block read",
        0x02 => "DC OWORD dual block read",
        0x03 => "DC DWORD scattered read",
        0x04 => "DC byte scattered read",
        0x05 => "DC untyped surface read",
        0x06 => "DC untyped atomic",
        0x07 => "DC mfence",
        0x08 => "DC OWORD block write",
        0x0A => "DC OWORD dual block write",
        0x0B => "DC DWORD scatterd write",
        0x0C => "DC byte scattered write",
        0x0D => "DC untyped surface write",
        _ => return None,
    })
}

fn dc1_msg_name(t: u32) -> Option<&'static str> {
    Some(match t {
        0x01 => "untyped surface read",
        0x02 => "DC untyped atomic op",
        0x03 => "DC untyped 4x2 atomic op",
        0x04 => "DC media block read",
        0x05 => "DC typed surface read",
        0x06 => "DC typed atomic",
        0x07 => "DC typed 4x2 atomic op",
        0x09 => "DC untyped surface write",
        0x0A => "DC media block write",
        0x0B => "DC atomic counter op",
        0x0C => "DC 4x2 atomic counter op",
        0x0D => "DC typed surface write",
        0x10 => "DC A64 scattered read",
        0x11 => "DC A64 untyped surface read",
        0x12 => "DC A64 untyped atomic op",
        0x14 => "DC A64 oword block read",
        0x15 => "DC A64 oword block write",
        0x19 => "DC A64 untyped surface write",
        0x1A => "DC A64 scattered write",
        0x1B => "DC untyped atomic float op",
        0x1D => "DC A64 untyped atomic float op",
        _ => return None,
    })
}

/// The text after `MsgDesc:` (without the lengths), for an immediate descriptor.
/// Returns `None` for shared functions printed generically.
fn msg_desc_text(sfid: Sfid, desc: u32) -> Option<String> {
    let bti = desc & 0xFF;
    let ctrl = (desc >> 8) & 0x3F;
    let ty = (desc >> 14) & 0x1F;
    Some(match sfid {
        Sfid::DpConst | Sfid::DpSampler => format!(" ({bti}, {ctrl}, {ty}, 0)"),
        Sfid::DpDc0 => {
            let name = dc0_msg_name(ty)?;
            let rest = match ty {
                0x06 => AOP[(ctrl & 0xF) as usize].to_string(),
                _ => ctrl.to_string(),
            };
            format!(" ( {name}, {bti}, {rest})")
        }
        Sfid::DpDc1 => {
            let name = dc1_msg_name(ty)?;
            let rest = match ty {
                0x02 | 0x06 | 0x0B => format!(
                    "SIMD{}, {}",
                    if ctrl & 0x10 != 0 { 8 } else { 16 },
                    AOP[(ctrl & 0xF) as usize]
                ),
                0x03 | 0x07 | 0x0C | 0x12 => AOP[(ctrl & 0xF) as usize].to_string(),
                0x01 | 0x09 | 0x05 | 0x0D | 0x19 | 0x11 => {
                    let simd = ["4x2", "16", "8"].get((ctrl >> 4) as usize)?;
                    format!("SIMD{simd}, Mask = 0x{:x}", ctrl & 0xF)
                }
                0x1B | 0x1D => format!(
                    "SIMD{}, {}",
                    if ctrl & 0x10 != 0 { 8 } else { 16 },
                    AOP_FLOAT.get((ctrl & 0xF) as usize)?
                ),
                0x14 | 0x15 => format!(
                    "owords = {}, aligned = {}",
                    OWORD_BLOCK[(ctrl & 7) as usize],
                    (ctrl >> 3) & 3
                ),
                _ => format!("0x{ctrl:x}"),
            };
            format!(" ( {name}, Surface = {bti}, {rest})")
        }
        Sfid::PixelInterp => {
            let names = [
                "per_message_offset",
                "sample_position",
                "centroid",
                "per_slot_offset",
            ];
            format!(
                " ({}, {}, 0x{:02x})",
                if desc & (1 << 14) != 0 {
                    "linear"
                } else {
                    "persp"
                },
                names[((desc >> 12) & 3) as usize],
                desc & 0xFF
            )
        }
        Sfid::ThreadSpawner => String::new(),
        Sfid::Gateway => {
            let names = [
                "open",
                "close",
                "forward msg",
                "get timestamp",
                "barrier msg",
                "update state",
                "mmio read/write",
                "",
            ];
            format!(" ({})", names[(desc & 7) as usize])
        }
        Sfid::Sampler => {
            let name = sampler_msg_name((desc >> 12) & 0x1F)?;
            // SIMD mode is desc 18:17 with desc 29 as its third bit (Mesa's brw decoder prints
            // modes 5 and 6 as SIMD8H/SIMD16H for any generation).
            let mode = ((desc >> 17) & 3) | (((desc >> 29) & 1) << 2);
            let simd = match mode {
                0 => "SIMD4x2".to_string(),
                1 => "SIMD8".to_string(),
                2 => "SIMD16".to_string(),
                3 => "SIMD32/64".to_string(),
                5 => "SIMD8H".to_string(),
                6 => "SIMD16H".to_string(),
                m => format!("SIMD-mode{m}"),
            };
            let hp = if desc & (1 << 30) != 0 { " HP" } else { "" };
            format!(
                " {name} {simd}{hp} Surface = {bti} Sampler = {}",
                (desc >> 8) & 0xF
            )
        }
        Sfid::Urb => {
            let opcode = desc & 0xF;
            let name = match opcode {
                4 => "atomic mov",
                5 => "atomic inc",
                6 => "atomic add",
                7 => "SIMD8 write",
                8 => "SIMD8 read",
                _ => return None,
            };
            let mut t = format!(" {} {name}", (desc >> 4) & 0x7FF);
            if desc & (1 << 17) != 0 {
                t.push_str(" per-slot");
            }
            if matches!(opcode, 7 | 8) {
                if desc & (1 << 15) != 0 {
                    t.push_str(" masked");
                }
            } else if desc & (1 << 15) != 0 {
                t.push_str(" interleave");
            }
            t
        }
        Sfid::DpRender => {
            let rt_type = (desc >> 14) & 0xF;
            let mut t = match rt_type {
                12 => {
                    let sub = [
                        "SIMD16",
                        "SIMD16/RepData",
                        "SIMD8/DualSrcLow",
                        "SIMD8/DualSrcHigh",
                        "SIMD8",
                        "SIMD8/ImageWrite",
                        "",
                        "SIMD16/RepData-111",
                    ][((desc >> 8) & 7) as usize];
                    if sub.is_empty() {
                        return None;
                    }
                    let mut t = format!(" RT write {sub}");
                    if desc & (1 << 11) != 0 {
                        t.push_str(" Hi");
                    }
                    if desc & (1 << 12) != 0 {
                        t.push_str(" LastRT");
                    }
                    t
                }
                // Mesa prints the message control with "0x%u" (decimal digits after 0x).
                13 => format!(" RT read MsgCtrl = 0x{ctrl}"),
                _ => return None,
            };
            t.push_str(&format!(" Surface = {bti}"));
            t
        }
        Sfid::Null | Sfid::Vme | Sfid::Cre => return None,
    })
}

/// Shared functions whose descriptor we always print generically (`desc 0x...`); others
/// fall back to it for message types Mesa has no name for.
pub fn sfid_prints_generically(sfid: Sfid) -> bool {
    matches!(sfid, Sfid::Null | Sfid::Vme | Sfid::Cre)
}

/// Formats one instruction. `label` maps a branch offset (relative to this instruction)
/// to a label name; without it offsets print as numbers. `compacted` adds `compacted`.
pub fn format_instruction(
    inst: &Instruction,
    label: Option<&dyn Fn(i32) -> String>,
    compacted: bool,
) -> String {
    let mut l = Line::new();
    let op = inst.opcode;
    let mode = inst.access_mode;
    if let Some(p) = inst.predicate {
        let _ = write!(
            l.s,
            "({}{}{}) ",
            if p.inverse { '-' } else { '+' },
            inst.flag,
            p.ctrl.suffix()
        );
    }
    l.push(op.name());
    if !op.is_send() && inst.saturate {
        l.push(".sat");
    }
    if inst.debug {
        l.push(".breakpoint");
    }
    match &inst.operands {
        Operands::Basic {
            math_fn: Some(m), ..
        } if op == Opcode::Math => {
            l.push(" ");
            l.push(m.name());
        }
        Operands::Basic { cond_mod, .. } | Operands::ThreeSrc { cond_mod, .. } => {
            l.push(cond_mod.suffix());
            if *cond_mod != CondMod::None
                && !matches!(op, Opcode::Sel | Opcode::Csel | Opcode::If | Opcode::While)
            {
                let _ = write!(l.s, ".{}", inst.flag);
            }
        }
        _ => {}
    }
    if op != Opcode::Nop || inst.exec_size != ExecSize::S1 {
        let _ = write!(l.s, "({})", inst.exec_size);
    }
    let lab = |off: i32| -> String {
        match label {
            Some(f) => f(off),
            None => off.to_string(),
        }
    };
    let logic = op.is_logic();
    match &inst.operands {
        Operands::Branch { jip, uip, .. } => {
            l.pad(16);
            l.push("JIP: ");
            l.push(&lab(*jip));
            if op.has_uip() {
                l.pad(38);
                l.push("UIP: ");
                l.push(&lab(*uip));
            }
        }
        Operands::Basic {
            dst,
            src0,
            src1,
            math_fn,
            ..
        } => {
            if op == Opcode::Jmpi {
                l.pad(16);
                l.push(&format_src(src1, mode, logic));
            } else if op != Opcode::Nop || !nop_operands_zero(inst) {
                // (A NOP with non-zero operand fields, e.g. the compacted padding NOP,
                // prints them as a 2-source instruction so the text keeps every bit.)
                let nsrc = match math_fn {
                    Some(_) => 2,
                    None if op == Opcode::Nop => 2,
                    None => op.num_srcs(),
                };
                if op != Opcode::Illegal {
                    l.pad(16);
                    l.push(&format_dst(dst, mode));
                }
                if nsrc > 0 {
                    l.pad(32);
                    l.push(&format_src(src0, mode, logic));
                }
                if nsrc > 1 {
                    l.pad(48);
                    l.push(&format_src(src1, mode, logic));
                }
            }
        }
        Operands::ThreeSrc { dst, src, .. } => {
            l.pad(16);
            l.push(&dst.to_string());
            l.pad(32);
            l.push(&src[0].to_string());
            l.pad(48);
            l.push(&src[1].to_string());
            l.pad(64);
            l.push(&src[2].to_string());
        }
        Operands::Send {
            sfid,
            dst,
            src0,
            desc,
            ..
        } => {
            l.pad(16);
            l.push(&format_dst(dst, mode));
            l.pad(32);
            l.push(&format_src(&Src::Reg(*src0), mode, false));
            l.pad(48);
            let raw_hi = match desc {
                SendDesc::Imm(d) => *d | ((inst_eot(inst) as u32) << 31),
                SendDesc::A0 { subnr } => {
                    l.push(&format!(
                        "a0{}<0,1,0>UD",
                        subreg_suffix(*subnr as u32, Type::UD)
                    ));
                    l.pad(64);
                    (0x10 << 5) | *subnr as u32 | ((inst_eot(inst) as u32) << 31)
                }
            };
            let _ = write!(l.s, "0x{raw_hi:08x}");
            msg_desc_line(&mut l, *sfid, desc.imm(), None);
        }
        Operands::SplitSend {
            sfid,
            dst,
            src0,
            src1,
            desc,
            ex_desc,
            ..
        } => {
            l.pad(16);
            l.push(&dst.to_string());
            l.pad(32);
            l.push(&src0.to_string());
            l.pad(48);
            l.push(&src1.to_string());
            l.pad(64);
            l.push(&match desc {
                SendDesc::Imm(d) => format!("0x{d:08x}"),
                SendDesc::A0 { subnr } => a0_desc_text(*subnr as u32),
            });
            l.pad(80);
            l.push(&match ex_desc {
                ExDesc::Imm(x) => format!("0x{x:08x}"),
                ExDesc::A0 { subnr_dw } => a0_desc_text(*subnr_dw as u32 * 4),
            });
            msg_desc_line(&mut l, *sfid, desc.imm(), ex_desc.ex_mlen());
        }
    }
    l.pad(64);
    if op != Opcode::Nop || compacted || !nop_is_plain(inst) {
        l.push("{ ");
        let mut opts: Vec<String> = vec![mode.to_string()];
        if inst.we_all {
            opts.push("WE_all".into());
        }
        let dd = inst.dep_ctrl.to_string();
        if !dd.is_empty() {
            opts.push(dd);
        }
        let e = inst.exec_size.channels();
        let q = inst.group.qtr as u32;
        if e < 8 || inst.group.nib {
            opts.push(format!("{}N", q * 2 + inst.group.nib as u32 + 1));
        } else if e == 8 || (e == 16 && q % 2 == 1) || (e == 32 && q != 0) {
            // Mesa prints 1H for quarter 1 at SIMD16 and nothing at SIMD32, losing the
            // field; we print the quarter so that the text keeps every bit.
            opts.push(format!("{}Q", q + 1));
        } else if e == 16 {
            opts.push(if q < 2 { "1H".into() } else { "2H".into() });
        }
        if compacted {
            opts.push("compacted".into());
        }
        let tc = inst.thread_ctrl.to_string();
        if !tc.is_empty() {
            opts.push(tc);
        }
        if op.has_branch_ctrl() {
            if inst.branch_ctrl {
                opts.push("BranchCtrl".into());
            }
        } else if inst.acc_wr_en {
            opts.push("AccWrEnable".into());
        }
        if inst_eot(inst) {
            opts.push("EOT".into());
        }
        l.push(&opts.join(" "));
        l.push(" }");
    }
    l.push(";");
    l.s
}

/// Mesa prints a NOP without options; we add them when the NOP is compacted or has
/// non-default header bits, so that the text keeps every bit.
fn nop_is_plain(inst: &Instruction) -> bool {
    let plain = Instruction::new(Opcode::Nop, ExecSize::S1, inst.operands);
    *inst == plain
}

fn nop_operands_zero(inst: &Instruction) -> bool {
    inst.operands == Operands::nop()
}

/// A SENDS descriptor held in a0, in the listing: `a0.N<0>UD` for the sub-register at
/// byte `b` (N in dwords, omitted when 0).
fn a0_desc_text(b: u32) -> String {
    format!("a0{}<0>UD", subreg_suffix(b, Type::UD))
}

fn inst_eot(inst: &Instruction) -> bool {
    match inst.operands {
        Operands::Send { eot, .. } | Operands::SplitSend { eot, .. } => eot,
        _ => false,
    }
}

fn msg_desc_line(l: &mut Line, sfid: Sfid, desc: Option<u32>, ex_mlen: Option<u32>) {
    l.newline();
    l.pad(16);
    l.push("            ");
    l.push(sfid.name());
    l.push(" MsgDesc:");
    match desc {
        None => l.push(" indirect"),
        Some(d) => match msg_desc_text(sfid, d) {
            Some(t) => l.push(&t),
            None => {
                let _ = write!(l.s, " desc 0x{:05x}", d & 0x7FFFF);
            }
        },
    }
    if let Some(d) = desc {
        let _ = write!(l.s, " mlen {}", (d >> 25) & 0xF);
    }
    if let Some(x) = ex_mlen {
        let _ = write!(l.s, " ex_mlen {x}");
    }
    if let Some(d) = desc {
        let _ = write!(l.s, " rlen {}", (d >> 20) & 0x1F);
    }
}

/// One decoded instruction of a program, for program-level disassembly.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramInst {
    /// Byte offset in the program.
    pub offset: usize,
    pub inst: Instruction,
    pub compacted: bool,
}

/// Disassembles a decoded program with `LABELn:` lines at branch targets (numbered in
/// address order, as Mesa does).
pub fn format_program(insts: &[ProgramInst]) -> String {
    let end = insts
        .last()
        .map_or(0, |p| p.offset + if p.compacted { 8 } else { 16 });
    let starts: std::collections::BTreeSet<usize> = insts
        .iter()
        .map(|p| p.offset)
        .chain(std::iter::once(end))
        .collect();
    // Labels are numbered in order of first reference (JIP before UIP), as Mesa does.
    let mut targets: BTreeMap<usize, usize> = BTreeMap::new();
    for p in insts {
        if let Some((jip, uip)) = p.inst.branch_offsets() {
            for off in std::iter::once(jip).chain(uip) {
                let t = p.offset as i64 + off as i64;
                if t >= 0 && starts.contains(&(t as usize)) {
                    let next = targets.len();
                    targets.entry(t as usize).or_insert(next);
                }
            }
        }
    }
    let mut out = String::new();
    for p in insts {
        if let Some(n) = targets.get(&p.offset) {
            let _ = writeln!(out, "LABEL{n}:");
        }
        let base = p.offset as i64;
        let lab = |off: i32| -> String {
            let t = base + off as i64;
            match (t >= 0).then(|| targets.get(&(t as usize))).flatten() {
                Some(n) => format!("LABEL{n}"),
                None => off.to_string(),
            }
        };
        out.push_str(&format_instruction(&p.inst, Some(&lab), p.compacted));
        out.push('\n');
    }
    if let Some(n) = targets.get(&end) {
        let _ = writeln!(out, "LABEL{n}:");
    }
    out
}

impl fmt::Display for DescFields {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "mlen {} rlen {}{} fc 0x{:05x}",
            self.mlen,
            self.rlen,
            if self.header { " header" } else { "" },
            self.function_control
        )
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Format::Basic => "basic",
            Format::ThreeSrc => "3-src",
            Format::Send => "send",
            Format::SplitSend => "split-send",
            Format::Branch => "branch",
        })
    }
}

impl fmt::Display for ArfKind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(ArfReg::new(*self, 0).prefix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fmt_g_matches_printf() {
        assert_eq!(fmt_g(1.0), "1");
        assert_eq!(fmt_g(-1.0), "-1");
        assert_eq!(fmt_g(6.0), "6");
        assert_eq!(fmt_g(0.5), "0.5");
        assert_eq!(fmt_g(1e10), "1e+10");
        assert_eq!(fmt_g(0.0001), "0.0001");
        assert_eq!(fmt_g(0.00001), "1e-05");
        assert_eq!(fmt_g(123456.0), "123456");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
        assert_eq!(fmt_g(0.1), "0.1");
    }
}
