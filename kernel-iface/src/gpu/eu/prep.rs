//! Pre-decoding: each [`Instruction`] of a kernel becomes an [`Op`] once, with every
//! direct operand's per-lane byte offsets into the register space computed ahead of time,
//! immediates expanded per lane, branch targets resolved to instruction indices and the
//! execution domain chosen. The interpreter then only loops over lanes.

use ferrite_isa::{
    AccessMode, Addr, ArfKind, ArfReg, CondMod, Dst, Dst3, ExDesc, Imm, Instruction, MathFunction,
    Opcode, Operands, PredCtrl, Reg, RegFile, RegSrc, SendDesc, SendsReg, Src, Src3, Type,
};

use super::regs::*;

/// Execution domain: the type class the computation happens in (docs/gen9.md 8.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dom {
    /// 32-bit float (F, HF, VF sources).
    F,
    /// 64-bit float (any DF operand).
    Df,
    /// Integers, held exactly in i128.
    I,
}

/// ALU operation (every Gen9 ALU opcode meaningful for compute, plus MATH).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AluOp {
    Mov,
    Sel,
    Not,
    And,
    Or,
    Xor,
    Shr,
    Shl,
    Asr,
    Cmp,
    Cmpn,
    Csel,
    Bfrev,
    Bfe,
    Bfi1,
    Bfi2,
    Add,
    Mul,
    Avg,
    Frc,
    Rndu,
    Rndd,
    Rnde,
    Rndz,
    Mac,
    Mach,
    Lzd,
    Fbh,
    Fbl,
    Cbit,
    Addc,
    Subb,
    Dp4,
    Dph,
    Dp3,
    Dp2,
    Line,
    Mad,
    Lrp,
    Madm,
    Math(MathFunction),
}

/// Register-indirect addressing of an Align1 operand (docs/gen9.md 1.2): byte address =
/// a0.`a0_word` + `imm`; for VxH every `width` lanes use the next a0 word.
#[derive(Clone, Copy, Debug)]
pub struct Indirect {
    pub a0_word: u8,
    pub imm: i16,
    pub vxh: bool,
    pub vstride: u8,
    pub width: u8,
    pub hstride: u8,
}

/// A pre-decoded source.
#[derive(Clone, Debug)]
pub struct SrcDesc {
    /// Type values are loaded as (vector immediates are expanded to W/UW/F).
    pub ty: Type,
    pub neg: bool,
    pub abs: bool,
    /// Immediate lanes (lane k uses `imm[k % imm_n]`), raw bits.
    pub imm: Option<([u64; 8], u8)>,
    pub ind: Option<Indirect>,
    /// Absolute byte offsets in the register space of each lane (direct operands).
    pub off: [u16; 32],
    /// True if lane offsets are `base + k * size` (packed) — fast paths.
    pub packed: bool,
    /// True if every lane reads the same element.
    pub scalar: bool,
}

/// A pre-decoded destination.
#[derive(Clone, Debug)]
pub struct DstDesc {
    pub ty: Type,
    pub null: bool,
    pub ind: Option<Indirect>,
    pub off: [u16; 32],
    /// Align16 write mask (lane k writes iff bit k%4); 0xF in Align1.
    pub wmask: u8,
    pub packed: bool,
    /// Writes the IP register (a jump).
    pub is_ip: bool,
}

/// Predication, resolved.
#[derive(Clone, Copy, Debug)]
pub struct Pred {
    pub ctrl: PredCtrl,
    pub inverse: bool,
}

/// A pre-decoded ALU instruction.
#[derive(Clone, Debug)]
pub struct Alu {
    pub op: AluOp,
    pub dom: Dom,
    pub dst: DstDesc,
    pub src: Vec<SrcDesc>,
    pub sat: bool,
    pub cmod: CondMod,
    pub acc_wr: bool,
    /// Align16 (dp*, swizzled 3-src) — affects nothing beyond offsets and write masks.
    pub align16: bool,
    /// Same-type MOV without modifiers or saturation: a raw copy (no denormal flushing).
    pub raw_mov: bool,
    /// Reads ce0/ip/tm0/mask: refresh them first.
    pub reads_live_arf: bool,
    /// The fast path that executes this instruction, if one does (decided once, here).
    pub fast: Option<super::fast::Class>,
}

/// A message send.
#[derive(Clone, Debug)]
pub struct SendOp {
    pub sfid: u8,
    pub eot: bool,
    /// First payload GRF, and a second part for split sends.
    pub src0: u8,
    pub src1: Option<u8>,
    pub dst: Option<u8>,
    pub desc: SendDesc,
    pub ex_desc: ExDescSrc,
}

#[derive(Clone, Copy, Debug)]
pub enum ExDescSrc {
    Imm(u32),
    A0Dword(u8),
}

/// What an instruction does.
#[derive(Clone, Debug)]
pub enum Kind {
    Alu(Box<Alu>),
    Send(Box<SendOp>),
    If { jip: Target, uip: Target },
    Else { jip: Target, uip: Target },
    Endif { jip: Target },
    While { jip: Target },
    Break { jip: Target, uip: Target },
    Cont { jip: Target, uip: Target },
    Halt { jip: Target, uip: Target },
    Jmpi { src: Box<SrcDesc> },
    Nop,
    Wait,
    Illegal(String),
}

/// A branch target as an instruction index (`Err` = the offset hits no instruction).
pub type Target = Result<u32, i64>;

/// One pre-decoded instruction.
#[derive(Clone, Debug)]
pub struct Op {
    pub kind: Kind,
    pub exec: u32,
    pub first: u32,
    pub we_all: bool,
    pub pred: Option<Pred>,
    /// Bit index of the instruction's flag sub-register in the 64-bit f0:f1 space.
    pub flag_base: u32,
    /// Some channel may be waiting to resume exactly here.
    pub join: bool,
}

pub fn ones(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

struct Ctx<'a> {
    /// Byte offset of each instruction, for resolving branches.
    offsets: &'a [u32],
    /// Byte offset just past the last instruction (a branch may target it).
    end: u32,
    pc: usize,
}

impl Ctx<'_> {
    fn target(&self, rel: i64) -> Target {
        let t = self.offsets[self.pc] as i64 + rel;
        match self.offsets.binary_search_by_key(&t, |&o| o as i64) {
            Ok(i) => Ok(i as u32),
            Err(_) if t == self.end as i64 => Ok(self.offsets.len() as u32),
            Err(_) => Err(t),
        }
    }
}

/// Base offset in the register space of an ARF register, with its size in bytes.
fn arf_base(a: ArfReg) -> Result<(usize, usize), String> {
    let i = a.index as usize;
    let r = match a.kind {
        ArfKind::Null => (NULL_OFF, 64),
        ArfKind::Address if i == 0 => (A0_OFF, 32),
        ArfKind::Acc if i < 10 => (ACC_OFF + i * 32, (10 - i) * 32),
        ArfKind::Flag if i < 2 => (F_OFF + i * 4, (2 - i) * 4),
        ArfKind::ChannelEnable if i == 0 => (CE_OFF, 4),
        ArfKind::State if i == 0 => (SR_OFF, 16),
        ArfKind::Control if i == 0 => (CR_OFF, 12),
        ArfKind::Notification if i == 0 => (N_OFF, 12),
        ArfKind::Ip => (IP_OFF, 4),
        ArfKind::Tdr if i == 0 => (TDR_OFF, 8),
        ArfKind::Timestamp if i == 0 => (TM_OFF, 20),
        ArfKind::MaskStack | ArfKind::MaskStackDepth if i == 0 => (MS_OFF, 32),
        _ => return Err(format!("ARF register {a} does not exist on Gen9")),
    };
    Ok(r)
}

fn live_arf(a: ArfReg) -> bool {
    matches!(
        a.kind,
        ArfKind::ChannelEnable | ArfKind::Ip | ArfKind::Timestamp
    )
}

fn check_off(v: usize) -> Result<u16, String> {
    if v + 8 <= REGS_SIZE {
        Ok(v as u16)
    } else {
        Err(format!("operand byte offset {v} outside the register file"))
    }
}

/// Expands an immediate to per-lane raw values and the type they load as.
fn expand_imm(i: Imm) -> ([u64; 8], u8, Type) {
    let mut v = [0u64; 8];
    match i.ty {
        Type::V | Type::UV => {
            for (k, e) in v.iter_mut().enumerate() {
                let n = (i.bits >> (4 * k)) & 0xF;
                *e = if i.ty == Type::V && n & 8 != 0 {
                    (n | 0xFFF0) & 0xFFFF
                } else {
                    n
                };
            }
            (v, 8, if i.ty == Type::V { Type::W } else { Type::UW })
        }
        Type::VF => {
            for (k, e) in v.iter_mut().take(4).enumerate() {
                *e = ferrite_isa::vf_to_f32((i.bits >> (8 * k)) as u8).to_bits() as u64;
            }
            (v, 4, Type::F)
        }
        Type::UW | Type::W | Type::HF => {
            v[0] = i.bits & 0xFFFF;
            (v, 1, i.ty)
        }
        t if t.is_64bit() => {
            v[0] = i.bits;
            (v, 1, t)
        }
        t => {
            v[0] = i.bits & 0xFFFF_FFFF;
            (v, 1, t)
        }
    }
}

fn src_desc(s: &Src, mode: AccessMode, exec: u32, live: &mut bool) -> Result<SrcDesc, String> {
    match s {
        Src::Imm(i) => {
            let (v, n, ty) = expand_imm(*i);
            Ok(SrcDesc {
                ty,
                neg: false,
                abs: false,
                imm: Some((v, n)),
                ind: None,
                off: [0; 32],
                packed: false,
                scalar: n == 1,
            })
        }
        Src::Reg(r) => reg_src_desc(r, mode, exec, live),
        Src::Unused { .. } => Err("instruction reads a source slot that holds no operand".into()),
    }
}

fn reg_src_desc(
    r: &RegSrc,
    mode: AccessMode,
    exec: u32,
    live: &mut bool,
) -> Result<SrcDesc, String> {
    let sz = r.ty.size() as usize;
    if r.ty.is_vector_imm() {
        return Err(format!("register operand of immediate-only type {}", r.ty));
    }
    let mut d = SrcDesc {
        ty: r.ty,
        neg: r.negate,
        abs: r.abs,
        imm: None,
        ind: None,
        off: [0; 32],
        packed: false,
        scalar: false,
    };
    let (base, limit) = match r.addr {
        Addr::Direct { reg, subnr } => match reg {
            Reg::Grf(n) => (n as usize * 32 + subnr as usize, GRF_SIZE),
            Reg::Arf(a) => {
                *live |= live_arf(a);
                let (b, len) = arf_base(a)?;
                (b + subnr as usize, b + len.max(64))
            }
        },
        Addr::Indirect {
            file,
            addr_subnr,
            imm,
        } => {
            if file != RegFile::Grf {
                return Err("indirect addressing of a non-GRF file".into());
            }
            if mode == AccessMode::Align16 {
                return Err("Align16 indirect addressing is not supported".into());
            }
            let rg = r.region;
            d.ind = Some(Indirect {
                a0_word: addr_subnr,
                imm,
                vxh: rg.vstride == ferrite_isa::Region::VXH,
                vstride: if rg.vstride == ferrite_isa::Region::VXH {
                    0
                } else {
                    rg.vstride
                },
                width: rg.width.max(1),
                hstride: rg.hstride,
            });
            return Ok(d);
        }
    };
    let _ = limit;
    let rg = r.region;
    for k in 0..exec as usize {
        let o = match mode {
            AccessMode::Align1 => {
                if rg.vstride == ferrite_isa::Region::VXH {
                    return Err("VxH region on a direct operand".into());
                }
                let w = rg.width.max(1) as usize;
                base + ((k / w) * rg.vstride as usize + (k % w) * rg.hstride as usize) * sz
            }
            AccessMode::Align16 => {
                let comp = r.swizzle.0[k % 4] as usize & 3;
                base + (k / 4) * rg.vstride as usize * sz + comp * sz
            }
        };
        d.off[k] = check_off(o)?;
    }
    d.packed = (0..exec as usize).all(|k| d.off[k] as usize == base + k * sz);
    d.scalar = (0..exec as usize).all(|k| d.off[k] as usize == base);
    Ok(d)
}

fn dst_desc(dst: &Dst, mode: AccessMode, exec: u32, live: &mut bool) -> Result<DstDesc, String> {
    let sz = dst.ty.size() as usize;
    let mut d = DstDesc {
        ty: dst.ty,
        null: dst.addr.is_null(),
        ind: None,
        off: [0; 32],
        wmask: 0xF,
        packed: false,
        is_ip: false,
    };
    if dst.ty.is_vector_imm() {
        return Err(format!("destination of immediate-only type {}", dst.ty));
    }
    let base = match dst.addr {
        Addr::Direct { reg, subnr } => match reg {
            Reg::Grf(n) => n as usize * 32 + subnr as usize,
            Reg::Arf(a) => {
                if a.kind == ArfKind::Ip {
                    d.is_ip = true;
                }
                if matches!(
                    a.kind,
                    ArfKind::ChannelEnable | ArfKind::Timestamp | ArfKind::Ip
                ) {
                    *live = true;
                }
                arf_base(a)?.0 + subnr as usize
            }
        },
        Addr::Indirect {
            file,
            addr_subnr,
            imm,
        } => {
            if file != RegFile::Grf || mode == AccessMode::Align16 {
                return Err("unsupported indirect destination".into());
            }
            d.ind = Some(Indirect {
                a0_word: addr_subnr,
                imm,
                vxh: false,
                vstride: 0,
                width: 1,
                hstride: dst.hstride.max(1),
            });
            return Ok(d);
        }
    };
    let hs = match mode {
        AccessMode::Align1 => dst.hstride.max(1) as usize,
        AccessMode::Align16 => {
            d.wmask = dst.writemask.0 & 0xF;
            1
        }
    };
    for k in 0..exec as usize {
        d.off[k] = check_off(base + k * hs * sz)?;
    }
    d.packed = hs == 1;
    Ok(d)
}

fn dst3_desc(dst: &Dst3, exec: u32) -> Result<DstDesc, String> {
    let sz = dst.ty.size() as usize;
    let base = dst.nr as usize * 32 + dst.subnr_dw as usize * 4;
    let mut d = DstDesc {
        ty: dst.ty,
        null: false,
        ind: None,
        off: [0; 32],
        wmask: dst.writemask.0 & 0xF,
        packed: true,
        is_ip: false,
    };
    for k in 0..exec as usize {
        d.off[k] = check_off(base + k * sz)?;
    }
    Ok(d)
}

fn src3_desc(s: &Src3, exec: u32) -> Result<SrcDesc, String> {
    let sz = s.ty.size() as usize;
    let base = s.nr as usize * 32 + s.subnr as usize;
    let mut d = SrcDesc {
        ty: s.ty,
        neg: s.negate,
        abs: s.abs,
        imm: None,
        ind: None,
        off: [0; 32],
        packed: false,
        scalar: s.rep_ctrl,
    };
    for k in 0..exec as usize {
        let o = if s.rep_ctrl {
            base
        } else {
            base + (k / 4) * 4 * sz + (s.swizzle.0[k % 4] as usize & 3) * sz
        };
        d.off[k] = check_off(o)?;
    }
    d.packed = !s.rep_ctrl && (0..exec as usize).all(|k| d.off[k] as usize == base + k * sz);
    Ok(d)
}

fn alu_op(op: Opcode, math: Option<MathFunction>) -> Option<AluOp> {
    Some(match op {
        Opcode::Mov => AluOp::Mov,
        Opcode::Sel => AluOp::Sel,
        Opcode::Not => AluOp::Not,
        Opcode::And => AluOp::And,
        Opcode::Or => AluOp::Or,
        Opcode::Xor => AluOp::Xor,
        Opcode::Shr => AluOp::Shr,
        Opcode::Shl => AluOp::Shl,
        Opcode::Asr => AluOp::Asr,
        Opcode::Cmp => AluOp::Cmp,
        Opcode::Cmpn => AluOp::Cmpn,
        Opcode::Csel => AluOp::Csel,
        Opcode::Bfrev => AluOp::Bfrev,
        Opcode::Bfe => AluOp::Bfe,
        Opcode::Bfi1 => AluOp::Bfi1,
        Opcode::Bfi2 => AluOp::Bfi2,
        Opcode::Add => AluOp::Add,
        Opcode::Mul => AluOp::Mul,
        Opcode::Avg => AluOp::Avg,
        Opcode::Frc => AluOp::Frc,
        Opcode::Rndu => AluOp::Rndu,
        Opcode::Rndd => AluOp::Rndd,
        Opcode::Rnde => AluOp::Rnde,
        Opcode::Rndz => AluOp::Rndz,
        Opcode::Mac => AluOp::Mac,
        Opcode::Mach => AluOp::Mach,
        Opcode::Lzd => AluOp::Lzd,
        Opcode::Fbh => AluOp::Fbh,
        Opcode::Fbl => AluOp::Fbl,
        Opcode::Cbit => AluOp::Cbit,
        Opcode::Addc => AluOp::Addc,
        Opcode::Subb => AluOp::Subb,
        Opcode::Dp4 => AluOp::Dp4,
        Opcode::Dph => AluOp::Dph,
        Opcode::Dp3 => AluOp::Dp3,
        Opcode::Dp2 => AluOp::Dp2,
        Opcode::Line => AluOp::Line,
        Opcode::Mad => AluOp::Mad,
        Opcode::Lrp => AluOp::Lrp,
        Opcode::Madm => AluOp::Madm,
        Opcode::Math => AluOp::Math(math?),
        _ => return None,
    })
}

fn num_srcs(op: AluOp) -> usize {
    match op {
        AluOp::Mov
        | AluOp::Not
        | AluOp::Bfrev
        | AluOp::Frc
        | AluOp::Rndu
        | AluOp::Rndd
        | AluOp::Rnde
        | AluOp::Rndz
        | AluOp::Lzd
        | AluOp::Fbh
        | AluOp::Fbl
        | AluOp::Cbit => 1,
        AluOp::Csel | AluOp::Bfe | AluOp::Bfi2 | AluOp::Mad | AluOp::Lrp | AluOp::Madm => 3,
        AluOp::Math(m) => m.num_srcs() as usize,
        _ => 2,
    }
}

/// Execution domain (docs/gen9.md 8.1): DF if any operand is DF; F if any source is a float
/// (or the op is float-only math); otherwise integer.
fn domain(op: AluOp, srcs: &[SrcDesc], dst: Type) -> Dom {
    if let AluOp::Math(m) = op {
        return match m {
            MathFunction::IntDiv | MathFunction::IntMod | MathFunction::IntDivMod => Dom::I,
            MathFunction::Invm | MathFunction::Rsqrtm => Dom::Df,
            _ if srcs.iter().any(|s| s.ty == Type::DF) || dst == Type::DF => Dom::Df,
            _ => Dom::F,
        };
    }
    if srcs.iter().any(|s| s.ty == Type::DF) {
        return Dom::Df;
    }
    if srcs.iter().any(|s| s.ty.is_float()) {
        return Dom::F;
    }
    // Integer sources: a DF destination (e.g. `mov DF D`) still executes as integer.
    let _ = dst;
    Dom::I
}

fn prep_alu(inst: &Instruction, op: AluOp) -> Result<Alu, String> {
    let exec = inst.exec_size.channels();
    let mut live = false;
    let (dst, srcs, cmod) = match &inst.operands {
        Operands::Basic {
            cond_mod,
            dst,
            src0,
            src1,
            ..
        } => {
            let n = num_srcs(op);
            let mut v = vec![src_desc(src0, inst.access_mode, exec, &mut live)?];
            if n >= 2 {
                v.push(src_desc(src1, inst.access_mode, exec, &mut live)?);
            }
            (
                dst_desc(dst, inst.access_mode, exec, &mut live)?,
                v,
                *cond_mod,
            )
        }
        Operands::ThreeSrc { cond_mod, dst, src } => (
            dst3_desc(dst, exec)?,
            src.iter()
                .map(|s| src3_desc(s, exec))
                .collect::<Result<Vec<_>, _>>()?,
            *cond_mod,
        ),
        _ => return Err("ALU opcode with a non-ALU operand layout".into()),
    };
    if matches!(op, AluOp::Dp4 | AluOp::Dph | AluOp::Dp3 | AluOp::Dp2) && !exec.is_multiple_of(4) {
        return Err(format!(
            "{} needs an execution size multiple of 4",
            inst.opcode
        ));
    }
    let dom = domain(op, &srcs, dst.ty);
    let raw_mov =
        op == AluOp::Mov && !inst.saturate && srcs[0].ty == dst.ty && !srcs[0].neg && !srcs[0].abs;
    let mut alu = Alu {
        op,
        dom,
        dst,
        src: srcs,
        sat: inst.saturate,
        cmod,
        acc_wr: inst.acc_wr_en,
        align16: inst.access_mode == AccessMode::Align16,
        raw_mov,
        reads_live_arf: live,
        fast: None,
    };
    alu.fast = super::fast::classify(&alu);
    Ok(alu)
}

fn sends_reg(r: SendsReg) -> Option<u8> {
    (r.file == RegFile::Grf).then_some(r.nr)
}

fn prep_kind(inst: &Instruction, ctx: &Ctx) -> Result<Kind, String> {
    // A branch kind made of the instruction's JIP and UIP as targets.
    let branch = |kind: fn(Target, Target) -> Kind| -> Kind {
        let (j, u) = inst.branch_offsets().unwrap_or((0, None));
        kind(ctx.target(j as i64), ctx.target(u.unwrap_or(0) as i64))
    };
    Ok(match inst.opcode {
        Opcode::Nop => Kind::Nop,
        Opcode::Wait => Kind::Wait,
        Opcode::If => branch(|jip, uip| Kind::If { jip, uip }),
        Opcode::Else => branch(|jip, uip| Kind::Else { jip, uip }),
        Opcode::Endif => branch(|jip, _| Kind::Endif { jip }),
        Opcode::While => branch(|jip, _| Kind::While { jip }),
        Opcode::Break => branch(|jip, uip| Kind::Break { jip, uip }),
        Opcode::Cont => branch(|jip, uip| Kind::Cont { jip, uip }),
        Opcode::Halt => branch(|jip, uip| Kind::Halt { jip, uip }),
        Opcode::Jmpi => match &inst.operands {
            Operands::Basic { src1, .. } => {
                let mut live = false;
                Kind::Jmpi {
                    src: Box::new(src_desc(src1, AccessMode::Align1, 1, &mut live)?),
                }
            }
            _ => return Err("jmpi without a source".into()),
        },
        Opcode::Send | Opcode::Sendc => match &inst.operands {
            Operands::Send {
                sfid,
                eot,
                dst,
                src0,
                desc,
                ..
            } => {
                let src0 = match src0.addr {
                    Addr::Direct {
                        reg: Reg::Grf(n), ..
                    } => n,
                    _ => return Err("SEND payload is not a direct GRF".into()),
                };
                let dst = match dst.addr {
                    Addr::Direct {
                        reg: Reg::Grf(n), ..
                    } => Some(n),
                    Addr::Direct { reg, .. } if reg.is_null() => None,
                    _ => return Err("SEND destination is not a GRF or null".into()),
                };
                Kind::Send(Box::new(SendOp {
                    sfid: *sfid as u8,
                    eot: *eot,
                    src0,
                    src1: None,
                    dst,
                    desc: *desc,
                    ex_desc: ExDescSrc::Imm(inst.send_ex_desc().unwrap_or(0)),
                }))
            }
            _ => return Err("SEND with a non-send layout".into()),
        },
        Opcode::Sends | Opcode::Sendsc => match &inst.operands {
            Operands::SplitSend {
                sfid,
                eot,
                dst,
                src0,
                src1,
                desc,
                ex_desc,
            } => Kind::Send(Box::new(SendOp {
                sfid: *sfid as u8,
                eot: *eot,
                src0: src0.nr,
                src1: sends_reg(*src1),
                dst: sends_reg(*dst),
                desc: *desc,
                ex_desc: match ex_desc {
                    ExDesc::Imm(_) => ExDescSrc::Imm(inst.send_ex_desc().unwrap_or(0)),
                    ExDesc::A0 { subnr_dw } => ExDescSrc::A0Dword(*subnr_dw),
                },
            })),
            _ => return Err("SENDS with a non-split-send layout".into()),
        },
        Opcode::Movi | Opcode::Smov => {
            return Err(format!("{} is not supported by the simulator", inst.opcode))
        }
        other => {
            let math = match &inst.operands {
                Operands::Basic { math_fn, .. } => *math_fn,
                _ => None,
            };
            match alu_op(other, math) {
                Some(a) => Kind::Alu(Box::new(prep_alu(inst, a)?)),
                None => return Err(format!("{other} is not executable on a compute EU")),
            }
        }
    })
}

/// Pre-decodes a whole program. `offsets[i]` is the byte offset of `insts[i]`, `end` the
/// offset just past the last one.
pub fn prepare(insts: &[Instruction], offsets: &[u32], end: u32) -> Vec<Op> {
    let mut ops: Vec<Op> = insts
        .iter()
        .enumerate()
        .map(|(pc, inst)| {
            let ctx = Ctx { offsets, end, pc };
            let exec = inst.exec_size.channels();
            let first = inst.group.first_channel();
            let kind = if first + exec > 32 {
                Kind::Illegal(format!(
                    "channels {first}..{} exceed the 32 channels of a thread",
                    first + exec
                ))
            } else {
                prep_kind(inst, &ctx).unwrap_or_else(Kind::Illegal)
            };
            Op {
                kind,
                exec,
                first,
                we_all: inst.we_all,
                pred: inst.predicate.map(|p| Pred {
                    ctrl: p.ctrl,
                    inverse: p.inverse,
                }),
                flag_base: inst.flag.nr as u32 * 32 + inst.flag.subnr as u32 * 16,
                join: false,
            }
        })
        .collect();
    // Join points: every place a channel may be told to wait for.
    let mut joins = vec![false; ops.len() + 1];
    let mut mark = |t: &Target| {
        if let Ok(i) = t {
            if let Some(j) = joins.get_mut(*i as usize) {
                *j = true;
            }
        }
    };
    for (i, op) in ops.iter().enumerate() {
        match &op.kind {
            Kind::If { jip, .. } => mark(jip),
            Kind::Else { jip, uip } => {
                mark(jip);
                mark(uip)
            }
            Kind::While { .. } => mark(&Ok(i as u32 + 1)),
            Kind::Break { uip, .. } => mark(&uip.map(|u| u + 1)),
            Kind::Cont { uip, .. } | Kind::Halt { uip, .. } => mark(uip),
            _ => {}
        }
    }
    for (op, j) in ops.iter_mut().zip(joins) {
        op.join = j;
    }
    ops
}
