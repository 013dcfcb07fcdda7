//! A normalized view of one instruction, computed once and shared by every rule check:
//! operands as (type, location, byte sub-register, region), the execution type, and the
//! conversion / mixed-float classification the PRM's restrictions are phrased in.

use super::Platform;
use crate::model::*;

/// Where an operand lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Loc {
    Grf(u8),
    Arf(ArfReg),
    /// Register-indirect (`g[a0.x + imm]`).
    Indirect,
    Imm,
}

/// One source operand.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SrcV {
    pub ty: Type,
    pub loc: Loc,
    /// Byte offset inside the register (direct addressing; 0 otherwise).
    pub subnr: u32,
    /// Region in elements (Align16: `<vstride;4,1>`; 3-src: `<4,4,1>` or `<0,1,0>`).
    pub region: Region,
    pub negate: bool,
    pub abs: bool,
    /// 3-src RepCtrl (scalar replicate).
    pub rep_ctrl: bool,
}

impl SrcV {
    pub fn is_imm(&self) -> bool {
        self.loc == Loc::Imm
    }
    pub fn is_null(&self) -> bool {
        matches!(self.loc, Loc::Arf(a) if a.kind == ArfKind::Null)
    }
    pub fn is_acc(&self) -> bool {
        matches!(self.loc, Loc::Arf(a) if a.kind == ArfKind::Acc)
    }
    pub fn is_arf_not_null(&self) -> bool {
        matches!(self.loc, Loc::Arf(a) if a.kind != ArfKind::Null)
    }
    pub fn is_indirect(&self) -> bool {
        self.loc == Loc::Indirect
    }
    pub fn is_scalar(&self) -> bool {
        self.region.vstride == 0 && self.region.width == 1 && self.region.hstride == 0
    }
    /// Direct GRF number, if any.
    pub fn grf(&self) -> Option<u8> {
        match self.loc {
            Loc::Grf(n) => Some(n),
            _ => None,
        }
    }
}

/// The destination operand.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DstV {
    pub ty: Type,
    pub loc: Loc,
    pub subnr: u32,
    pub hstride: u32,
}

impl DstV {
    pub fn is_null(&self) -> bool {
        matches!(self.loc, Loc::Arf(a) if a.kind == ArfKind::Null)
    }
    pub fn is_arf_not_null(&self) -> bool {
        matches!(self.loc, Loc::Arf(a) if a.kind != ArfKind::Null)
    }
    pub fn is_direct(&self) -> bool {
        !matches!(self.loc, Loc::Indirect)
    }
    pub fn is_indirect(&self) -> bool {
        matches!(self.loc, Loc::Indirect)
    }
}

/// Which family of restrictions an instruction is subject to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Align1/Align16 ALU and MATH: dst + 1 or 2 sources with regions.
    Alu,
    /// MAD LRP BFE BFI2 CSEL MADM.
    ThreeSrc,
    /// SEND / SENDC.
    Send,
    /// SENDS / SENDSC.
    SplitSend,
    /// IF ELSE ENDIF WHILE BREAK CONT HALT BRD BRC GOTO.
    Branch,
    /// JMPI CALL CALLA RET WAIT NOP ILLEGAL: no operand rules.
    Other,
}

/// Program context for branch rules.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProgPos<'a> {
    /// Byte offset of this instruction.
    pub offset: usize,
    /// Byte offsets of every instruction, ascending.
    pub offsets: &'a [usize],
    /// Size of the program in bytes (one past the last instruction).
    pub end: usize,
}

/// Everything a rule needs about one instruction.
pub(crate) struct Ctx<'a> {
    pub inst: &'a Instruction,
    pub platform: Platform,
    pub shape: Shape,
    pub exec: u32,
    pub dst: Option<DstV>,
    pub srcs: [Option<SrcV>; 3],
    pub nsrc: usize,
    pub prog: Option<ProgPos<'a>>,
    /// Cached [`Ctx::exec_type`], [`Ctx::is_mixed_float`], [`Ctx::is_64bit_context`].
    exec_type: Option<Type>,
    mixed: bool,
    ctx64: bool,
}

fn src_from_model(s: &Src) -> SrcV {
    match s {
        Src::Reg(r) => reg_src(r),
        // An unused source sits only in the src1 slot of 1-source instructions, which no rule
        // reads.
        Src::Imm(_) | Src::Unused { .. } => SrcV {
            ty: s.ty(),
            loc: Loc::Imm,
            subnr: 0,
            region: Region::SCALAR,
            negate: false,
            abs: false,
            rep_ctrl: false,
        },
    }
}

/// Where an operand's address points, with its sub-register byte offset (0 when indirect).
fn location(addr: &Addr) -> (Loc, u32) {
    match *addr {
        Addr::Direct {
            reg: Reg::Grf(n),
            subnr,
        } => (Loc::Grf(n), subnr as u32),
        Addr::Direct {
            reg: Reg::Arf(a),
            subnr,
        } => (Loc::Arf(a), subnr as u32),
        Addr::Indirect { .. } => (Loc::Indirect, 0),
    }
}

fn reg_src(r: &RegSrc) -> SrcV {
    let (loc, subnr) = location(&r.addr);
    SrcV {
        ty: r.ty,
        loc,
        subnr,
        region: r.region,
        negate: r.negate,
        abs: r.abs,
        rep_ctrl: false,
    }
}

fn dst_from_model(d: &Dst) -> DstV {
    let (loc, subnr) = location(&d.addr);
    DstV {
        ty: d.ty,
        loc,
        subnr,
        hstride: d.hstride as u32,
    }
}

impl<'a> Ctx<'a> {
    pub fn new(inst: &'a Instruction, platform: Platform, prog: Option<ProgPos<'a>>) -> Ctx<'a> {
        let mut c = Ctx {
            inst,
            platform,
            shape: Shape::Other,
            exec: inst.exec_size.channels(),
            dst: None,
            srcs: [None; 3],
            nsrc: 0,
            prog,
            exec_type: None,
            mixed: false,
            ctx64: false,
        };
        match &inst.operands {
            Operands::Basic {
                math_fn,
                dst,
                src0,
                src1,
                ..
            } => {
                if matches!(
                    inst.opcode,
                    Opcode::Jmpi
                        | Opcode::Call
                        | Opcode::Calla
                        | Opcode::Ret
                        | Opcode::Wait
                        | Opcode::Nop
                        | Opcode::Illegal
                ) {
                    return c;
                }
                c.shape = Shape::Alu;
                c.nsrc = match (inst.opcode, math_fn) {
                    (Opcode::Math, Some(f)) => f.num_srcs() as usize,
                    _ => inst.opcode.num_srcs().min(2) as usize,
                };
                c.dst = Some(dst_from_model(dst));
                c.srcs[0] = Some(src_from_model(src0));
                if c.nsrc > 1 {
                    c.srcs[1] = Some(src_from_model(src1));
                }
            }
            Operands::ThreeSrc { dst, src, .. } => {
                c.shape = Shape::ThreeSrc;
                c.nsrc = 3;
                c.dst = Some(DstV {
                    ty: dst.ty,
                    loc: Loc::Grf(dst.nr),
                    subnr: dst.subnr_dw as u32 * 4,
                    hstride: 1,
                });
                for (i, s) in src.iter().enumerate() {
                    c.srcs[i] = Some(SrcV {
                        ty: s.ty,
                        loc: Loc::Grf(s.nr),
                        subnr: s.subnr as u32,
                        region: if s.rep_ctrl {
                            Region::SCALAR
                        } else {
                            Region::new(4, 4, 1)
                        },
                        negate: s.negate,
                        abs: s.abs,
                        rep_ctrl: s.rep_ctrl,
                    });
                }
            }
            Operands::Send { dst, src0, .. } => {
                c.shape = Shape::Send;
                c.nsrc = 1;
                c.dst = Some(dst_from_model(dst));
                c.srcs[0] = Some(reg_src(src0));
            }
            Operands::SplitSend { .. } => c.shape = Shape::SplitSend,
            Operands::Branch { .. } => c.shape = Shape::Branch,
        }
        c.exec_type = c.compute_exec_type();
        c.mixed = c.compute_mixed_float();
        c.ctx64 = c.compute_64bit_context();
        c
    }

    /// The sources the instruction reads.
    pub fn sources(&self) -> impl Iterator<Item = (usize, &SrcV)> {
        self.srcs[..self.nsrc]
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
    }

    pub fn src(&self, i: usize) -> Option<&SrcV> {
        if i < self.nsrc {
            self.srcs[i].as_ref()
        } else {
            None
        }
    }

    pub fn align16(&self) -> bool {
        self.inst.access_mode == AccessMode::Align16
    }

    pub fn gen(&self) -> Gen {
        self.platform.gen()
    }

    /// Execution data type (see [`super::execution_type`]); `None` without sources.
    pub fn exec_type(&self) -> Option<Type> {
        self.exec_type
    }

    fn compute_exec_type(&self) -> Option<Type> {
        let dst = self.dst?.ty;
        let s0 = self.src(0)?.ty;
        Some(super::execution_type(dst, s0, self.src(1).map(|s| s.ty)))
    }

    /// F and HF mixed among the destination and the sources (PRM "mixed mode").
    pub fn is_mixed_float(&self) -> bool {
        self.mixed
    }

    fn compute_mixed_float(&self) -> bool {
        let Some(d) = self.dst else { return false };
        if !matches!(self.shape, Shape::Alu) {
            return false;
        }
        let mut has_f = d.ty == Type::F;
        let mut has_hf = d.ty == Type::HF;
        for (_, s) in self.sources() {
            has_f |= s.ty == Type::F;
            has_hf |= s.ty == Type::HF;
        }
        has_f && has_hf
    }

    /// Raw move: MOV, no saturate, no source modifier, same type up to signedness,
    /// not a vector immediate.
    pub fn is_raw_mov(&self) -> bool {
        let (Some(d), Some(s)) = (self.dst, self.src(0)) else {
            return false;
        };
        self.inst.opcode == Opcode::Mov
            && !self.inst.saturate
            && !s.negate
            && !s.abs
            && !s.ty.is_vector_imm()
            && signless(d.ty) == signless(s.ty)
    }

    /// Integer D/UD x D/UD multiply (the PRM groups it with 64-bit operations).
    pub fn is_dword_int_mul(&self) -> bool {
        self.inst.opcode == Opcode::Mul
            && matches!(self.src(0).map(|s| s.ty), Some(Type::D | Type::UD))
            && matches!(self.src(1).map(|s| s.ty), Some(Type::D | Type::UD))
    }

    /// "Source or destination datatype is 64b or operation is integer DWord multiply"
    /// (dst 8 bytes, execution type 8 bytes, or D x D MUL).
    pub fn is_64bit_context(&self) -> bool {
        self.ctx64
    }

    fn compute_64bit_context(&self) -> bool {
        let Some(d) = self.dst else { return false };
        d.ty.size() == 8
            || self.exec_type().is_some_and(|t| t.size() == 8)
            || self.is_dword_int_mul()
    }

    /// Reads the accumulator, explicitly or implicitly (MAC, MACH).
    pub fn reads_acc(&self) -> bool {
        matches!(self.inst.opcode, Opcode::Mac | Opcode::Mach)
            || self.sources().any(|(_, s)| s.is_acc())
    }
}

/// Type with signedness dropped (UB~B, UW~W, UD~D, UQ~Q).
pub(crate) fn signless(t: Type) -> Type {
    match t {
        Type::UB => Type::B,
        Type::UW => Type::W,
        Type::UD => Type::D,
        Type::UQ => Type::Q,
        other => other,
    }
}

pub(crate) fn is_int(t: Type) -> bool {
    !t.is_float()
}

pub(crate) fn is_byte(t: Type) -> bool {
    matches!(t, Type::B | Type::UB)
}
