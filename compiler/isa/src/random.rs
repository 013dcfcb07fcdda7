//! Random *valid* instructions, for property tests, fuzz seeds, benchmarks and the
//! cross-check against Mesa's tools (`ferrite-isa-gen`).
//!
//! "Valid" here means: encodable, and written the way the assembler writes them, so that
//! encode -> decode -> disassemble -> assemble gives the same bits. It does not mean the
//! PRM's region rules hold (that is the validator's job): fields take every value the
//! encoding and the text syntax can carry.

use crate::model::*;

/// SplitMix64: tiny, deterministic, good enough for test-case generation.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const ARFS: [ArfReg; 12] = [
    ArfReg::NULL,
    ArfReg::A0,
    ArfReg::new(ArfKind::Acc, 0),
    ArfReg::new(ArfKind::Acc, 1),
    ArfReg::new(ArfKind::Flag, 0),
    ArfReg::new(ArfKind::Flag, 1),
    ArfReg::new(ArfKind::ChannelEnable, 0),
    ArfReg::new(ArfKind::State, 0),
    ArfReg::new(ArfKind::Control, 0),
    ArfReg::new(ArfKind::Notification, 0),
    ArfReg::new(ArfKind::Tdr, 0),
    ArfReg::new(ArfKind::Timestamp, 0),
];

fn reg(r: &mut Rng) -> Reg {
    if r.chance(4, 5) {
        Reg::Grf(r.below(128) as u8)
    } else {
        Reg::Arf(r.pick(&ARFS))
    }
}

/// Sub-register in bytes, a multiple of the type size (the text counts elements).
fn subnr(r: &mut Rng, ty: Type) -> u8 {
    let n = 32 / ty.size() as u64;
    (r.below(n) as u32 * ty.size()) as u8
}

fn region(r: &mut Rng) -> Region {
    if r.chance(1, 3) {
        return r.pick(&[
            Region::SCALAR,
            Region::new(8, 8, 1),
            Region::new(4, 4, 1),
            Region::new(16, 8, 2),
        ]);
    }
    let v = r.pick(&[0, 1, 2, 4, 8, 16, 32, Region::VXH]);
    Region::new(v, r.pick(&[1, 2, 4, 8, 16]), r.pick(&[0, 1, 2, 4]))
}

fn imm(r: &mut Rng, ty: Type) -> Imm {
    let v = r.next_u64();
    let small = r.chance(1, 2);
    match ty {
        Type::UW => Imm::uw(if small { v as u16 & 0x7 } else { v as u16 }),
        Type::W => Imm::w(if small { (v as i16) % 8 } else { v as i16 }),
        Type::HF => Imm::hf(v as u16),
        Type::UD => Imm::ud(if small { v as u32 & 0xFFF } else { v as u32 }),
        Type::D => Imm::d(if small { (v as i32) % 2048 } else { v as i32 }),
        Type::F => Imm::f(if small {
            r.pick(&[0.0, 1.0, -1.0, 0.5, 6.0])
        } else {
            f32::from_bits(v as u32)
        }),
        Type::V => Imm::v(v as u32),
        Type::UV => Imm::uv(v as u32),
        Type::VF => Imm::vf(v as u32),
        Type::UQ => Imm::uq(v),
        Type::Q => Imm::q(v as i64),
        Type::DF => Imm::df(f64::from_bits(v)),
        Type::UB | Type::B => Imm::ud(0),
    }
}

/// An Align1 operand's address: one in ten indirect (GRF, the address sub-register from
/// `indirect_subnr`), else a direct register of type `ty`.
fn addr_a1(r: &mut Rng, ty: Type, indirect_subnr: impl FnOnce(&mut Rng) -> u8) -> Addr {
    if r.chance(1, 10) {
        Addr::Indirect {
            file: RegFile::Grf,
            addr_subnr: indirect_subnr(r),
            imm: r.below(1024) as i16 - 512,
        }
    } else {
        Addr::Direct {
            reg: reg(r),
            subnr: subnr(r, ty),
        }
    }
}

fn dst_a1(r: &mut Rng) -> Dst {
    let ty = r.pick(Type::register_types());
    // Mesa prints a destination's address sub-register in elements.
    let addr = addr_a1(r, ty, |r| {
        (r.below(16 / ty.size().min(16) as u64) as u32 * ty.size()) as u8
    });
    Dst {
        addr,
        ty,
        hstride: r.pick(&[1, 1, 1, 2, 4]),
        writemask: WriteMask::XYZW,
    }
}

fn src_a1(r: &mut Rng) -> RegSrc {
    let ty = r.pick(Type::register_types());
    let addr = addr_a1(r, ty, |r| r.below(16) as u8);
    RegSrc {
        addr,
        ty,
        region: region(r),
        swizzle: Swizzle::XYZW,
        negate: r.chance(1, 4),
        abs: r.chance(1, 5),
    }
}

fn swizzle(r: &mut Rng) -> Swizzle {
    if r.chance(1, 2) {
        Swizzle::XYZW
    } else {
        Swizzle([
            r.below(4) as u8,
            r.below(4) as u8,
            r.below(4) as u8,
            r.below(4) as u8,
        ])
    }
}

/// An Align16 operand's type and address: a direct register, at sub-register 0 or 16.
fn typed_addr_a16(r: &mut Rng) -> (Type, Addr) {
    let ty = r.pick(Type::register_types());
    let subnr = if r.chance(1, 4) { 16 } else { 0 };
    (ty, Addr::Direct { reg: reg(r), subnr })
}

fn dst_a16(r: &mut Rng) -> Dst {
    let (ty, addr) = typed_addr_a16(r);
    Dst {
        addr,
        ty,
        hstride: 1,
        writemask: WriteMask(r.below(16) as u8),
    }
}

fn src_a16(r: &mut Rng) -> RegSrc {
    let (ty, addr) = typed_addr_a16(r);
    RegSrc {
        addr,
        ty,
        region: Region::new(r.pick(&[0, 2, 4]), 4, 1),
        swizzle: swizzle(r),
        negate: r.chance(1, 4),
        abs: r.chance(1, 5),
    }
}

fn header(r: &mut Rng, i: &mut Instruction) {
    let e = r.pick(&[1u32, 2, 4, 8, 8, 16, 16, 32]);
    i.exec_size = ExecSize::new(e).unwrap_or(ExecSize::S8);
    // Any quarter/nibble: the text keeps them all (nN, nQ, 1H/2H).
    i.group = ChannelGroup {
        qtr: r.below(4) as u8,
        nib: r.chance(1, 8),
    };
    i.we_all = r.chance(1, 4);
    i.dep_ctrl = DepCtrl {
        no_dd_clear: r.chance(1, 8),
        no_dd_check: r.chance(1, 8),
    };
    i.thread_ctrl = r.pick(&[
        ThreadCtrl::Normal,
        ThreadCtrl::Normal,
        ThreadCtrl::Atomic,
        ThreadCtrl::Switch,
    ]);
    i.flag = FlagReg {
        nr: r.below(2) as u8,
        subnr: r.below(2) as u8,
    };
    if r.chance(1, 3) {
        let ctrls: &[PredCtrl] = match i.access_mode {
            AccessMode::Align1 => &[
                PredCtrl::Normal,
                PredCtrl::Normal,
                PredCtrl::AnyV,
                PredCtrl::All4h,
                PredCtrl::Any16h,
                PredCtrl::All32h,
            ],
            AccessMode::Align16 => &[PredCtrl::Normal, PredCtrl::X, PredCtrl::W, PredCtrl::Any4h],
        };
        i.predicate = Some(Predicate {
            ctrl: r.pick(ctrls),
            inverse: r.chance(1, 2),
        });
    }
    i.debug = r.chance(1, 16);
    if i.opcode.has_branch_ctrl() {
        i.branch_ctrl = r.chance(1, 4);
    } else {
        i.acc_wr_en = r.chance(1, 6);
    }
}

fn cond_mod(r: &mut Rng) -> CondMod {
    if r.chance(2, 3) {
        CondMod::None
    } else {
        CondMod::from_hw(r.below(10) as u32).unwrap_or(CondMod::None)
    }
}

const BASIC_OPS: [Opcode; 44] = [
    Opcode::Mov,
    Opcode::Sel,
    Opcode::Movi,
    Opcode::Not,
    Opcode::And,
    Opcode::Or,
    Opcode::Xor,
    Opcode::Shr,
    Opcode::Shl,
    Opcode::Smov,
    Opcode::Asr,
    Opcode::Cmp,
    Opcode::Cmpn,
    Opcode::Bfrev,
    Opcode::Bfi1,
    Opcode::Add,
    Opcode::Mul,
    Opcode::Avg,
    Opcode::Frc,
    Opcode::Rndu,
    Opcode::Rndd,
    Opcode::Rnde,
    Opcode::Rndz,
    Opcode::Mac,
    Opcode::Mach,
    Opcode::Lzd,
    Opcode::Fbh,
    Opcode::Fbl,
    Opcode::Cbit,
    Opcode::Addc,
    Opcode::Subb,
    Opcode::Dp4,
    Opcode::Dph,
    Opcode::Dp3,
    Opcode::Dp2,
    Opcode::Line,
    Opcode::Pln,
    Opcode::Math,
    Opcode::Call,
    Opcode::Calla,
    Opcode::Ret,
    Opcode::Jmpi,
    Opcode::Wait,
    Opcode::Nop,
];

/// A random 2-source-layout instruction (ALU, MATH, WAIT, NOP, JMPI, CALL ...).
pub fn basic(r: &mut Rng) -> Instruction {
    let op = r.pick(&BASIC_OPS);
    if op == Opcode::Nop {
        // NOP prints no options: everything default.
        return Instruction::new(op, ExecSize::S1, Operands::nop());
    }
    let align16 = op != Opcode::Jmpi && op != Opcode::Wait && r.chance(1, 6);
    let mut i = Instruction::new(op, ExecSize::S8, Operands::nop());
    i.access_mode = if align16 {
        AccessMode::Align16
    } else {
        AccessMode::Align1
    };
    header(r, &mut i);
    i.saturate = r.chance(1, 6);
    let (dst, mut src0, mut src1) = if align16 {
        (dst_a16(r), Src::Reg(src_a16(r)), Src::Reg(src_a16(r)))
    } else {
        (dst_a1(r), Src::Reg(src_a1(r)), Src::Reg(src_a1(r)))
    };
    let mut dst = dst;
    let mut cm = cond_mod(r);
    let mut math_fn = None;
    match op {
        Opcode::Math => {
            cm = CondMod::None;
            math_fn = Some(
                MathFunction::from_hw(r.pick(&[1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15]))
                    .unwrap_or(MathFunction::Inv),
            );
            if !align16 && r.chance(1, 4) {
                let t = r.pick(&[Type::UD, Type::D, Type::F]);
                src1 = Src::Imm(imm(r, t));
            }
        }
        Opcode::Jmpi => {
            dst = Dst::new(Addr::arf(ArfReg::IP, 0), Type::UD);
            src0 = Src::Reg(RegSrc::new(
                Addr::arf(ArfReg::IP, 0),
                Type::UD,
                Region::ZERO,
            ));
            if r.chance(1, 2) {
                src1 = Src::Imm(Imm::d(r.below(64) as i32 * 16 - 512));
            }
        }
        Opcode::Wait => {
            dst = Dst::new(
                Addr::arf(ArfReg::new(ArfKind::Notification, 0), r.below(3) as u8 * 4),
                Type::UD,
            );
            src0 = Src::Reg(RegSrc::new(dst.addr, dst.ty, Region::SCALAR));
            src1 = Src::Reg(RegSrc::new(Addr::null(), Type::F, Region::new(8, 8, 1)));
        }
        _ if op.num_srcs() == 1 => {
            if !align16 && r.chance(1, 3) {
                let t = r.pick(Type::immediate_types());
                src0 = Src::Imm(imm(r, t));
                src1 = if t.is_64bit() {
                    Src::zero()
                } else {
                    Src::unused_for_imm(t)
                };
            } else {
                src1 = Src::zero_for(i.access_mode);
            }
        }
        _ => {
            if r.chance(1, 3) {
                let t = r.pick(Type::immediate_types());
                if !t.is_64bit() {
                    src1 = Src::Imm(imm(r, t));
                }
            }
        }
    }
    if matches!(op, Opcode::Sel | Opcode::Csel | Opcode::If | Opcode::While)
        && cm != CondMod::None
        && i.predicate.is_none()
    {
        i.flag = FlagReg::default();
    }
    if cm == CondMod::None && i.predicate.is_none() {
        i.flag = FlagReg::default();
    }
    i.operands = Operands::Basic {
        cond_mod: cm,
        math_fn,
        dst,
        src0,
        src1,
    };
    i
}

const THREE_OPS: [Opcode; 6] = [
    Opcode::Mad,
    Opcode::Lrp,
    Opcode::Bfe,
    Opcode::Bfi2,
    Opcode::Csel,
    Opcode::Madm,
];

/// A random three-source instruction.
pub fn three_src(r: &mut Rng) -> Instruction {
    let op = r.pick(&THREE_OPS);
    let st = r.pick(&[Type::F, Type::F, Type::D, Type::UD, Type::DF, Type::HF]);
    let ty_for = |r: &mut Rng| {
        if matches!(st, Type::F | Type::HF) {
            r.pick(&[Type::F, Type::HF])
        } else {
            st
        }
    };
    let mk = |r: &mut Rng, ty: Type| {
        let rep = r.chance(1, 4);
        let sub = (r.below(32 / ty.size() as u64) as u32 * ty.size()) as u8;
        Src3 {
            nr: r.below(128) as u8,
            subnr: sub,
            swizzle: if rep { Swizzle([0; 4]) } else { swizzle(r) },
            rep_ctrl: rep,
            negate: r.chance(1, 4),
            abs: r.chance(1, 5),
            ty,
        }
    };
    let s0 = mk(r, st);
    let t1 = ty_for(r);
    let s1 = mk(r, t1);
    let t2 = ty_for(r);
    let s2 = mk(r, t2);
    let dty = r.pick(&[Type::F, Type::D, Type::UD, Type::DF, Type::HF]);
    let dst = Dst3 {
        nr: r.below(128) as u8,
        // The text counts elements: keep the DWord index a whole number of elements.
        subnr_dw: (r.below(8) as u32 / (dty.size() / 4).max(1) * (dty.size() / 4).max(1)) as u8,
        writemask: WriteMask(r.below(16) as u8),
        ty: dty,
    };
    let mut i = Instruction::new(
        op,
        ExecSize::S8,
        Operands::ThreeSrc {
            cond_mod: CondMod::None,
            dst,
            src: [s0, s1, s2],
        },
    );
    header(r, &mut i);
    i.saturate = r.chance(1, 6);
    let cm = cond_mod(r);
    if cm == CondMod::None && i.predicate.is_none() || op == Opcode::Csel && i.predicate.is_none() {
        i.flag = FlagReg::default();
    }
    i.operands = Operands::ThreeSrc {
        cond_mod: cm,
        dst,
        src: [s0, s1, s2],
    };
    i
}

const SFIDS: [Sfid; 10] = [
    Sfid::DpDc1,
    Sfid::DpDc1,
    Sfid::DpDc0,
    Sfid::DpConst,
    Sfid::Gateway,
    Sfid::ThreadSpawner,
    Sfid::PixelInterp,
    Sfid::Sampler,
    Sfid::Urb,
    Sfid::DpRender,
];

/// A random SEND/SENDC/SENDS/SENDSC.
pub fn send(r: &mut Rng, gen: Gen) -> Instruction {
    let split = gen == Gen::Gen9 && r.chance(1, 2);
    let op = match (split, r.chance(1, 4)) {
        (false, false) => Opcode::Send,
        (false, true) => Opcode::Sendc,
        (true, false) => Opcode::Sends,
        (true, true) => Opcode::Sendsc,
    };
    let sfid = r.pick(&SFIDS);
    let eot = r.chance(1, 8);
    let desc = if r.chance(1, 10) {
        SendDesc::A0 {
            subnr: if split { 0 } else { r.below(8) as u8 * 4 },
        }
    } else {
        SendDesc::Imm(r.next_u64() as u32 & 0x7FFF_FFFF)
    };
    let operands = if split {
        let g = |r: &mut Rng, null_ok: bool| {
            if null_ok && r.chance(1, 3) {
                SendsReg::null()
            } else {
                SendsReg {
                    file: RegFile::Grf,
                    nr: r.below(128) as u8,
                    subnr16: r.below(2) as u8,
                }
            }
        };
        let dst = g(r, true);
        let src0 = g(r, false);
        let mut src1 = g(r, true);
        src1.subnr16 = 0;
        let ex_desc = if r.chance(1, 10) {
            ExDesc::A0 {
                subnr_dw: r.below(8) as u8,
            }
        } else {
            ExDesc::Imm(r.next_u64() as u32 & ExDesc::IMM_MASK)
        };
        Operands::SplitSend {
            sfid,
            eot,
            dst,
            src0,
            src1,
            desc,
            ex_desc,
        }
    } else {
        let mut dst = dst_a1(r);
        if let Addr::Indirect { .. } = dst.addr {
            dst.addr = Addr::grf(r.below(128) as u8);
        }
        let mut src0 = src_a1(r);
        src0.addr = Addr::Direct {
            reg: Reg::Grf(r.below(128) as u8),
            subnr: subnr(r, src0.ty),
        };
        Operands::Send {
            sfid,
            eot,
            dst,
            src0,
            desc,
            ex_desc_31_28: 0,
        }
    };
    let mut i = Instruction::new(op, ExecSize::S8, operands);
    header(r, &mut i);
    if i.predicate.is_none() {
        i.flag = FlagReg::default();
    }
    i
}

const BRANCH_OPS: [Opcode; 10] = [
    Opcode::If,
    Opcode::Else,
    Opcode::Endif,
    Opcode::While,
    Opcode::Break,
    Opcode::Cont,
    Opcode::Halt,
    Opcode::Brd,
    Opcode::Brc,
    Opcode::Goto,
];

/// A random branch with Mesa's operand conventions and the given offsets.
pub fn branch_with(r: &mut Rng, op: Opcode, jip: i32, uip: i32) -> Instruction {
    let uip = if op.has_uip() { uip } else { 1 << 27 };
    let mut i = Instruction::new(op, ExecSize::S8, Operands::branch(op, jip, uip));
    header(r, &mut i);
    i.thread_ctrl = ThreadCtrl::Normal;
    if i.predicate.is_none() {
        i.flag = FlagReg::default();
    }
    i
}

/// A random branch with random offsets (multiples of 8).
pub fn branch(r: &mut Rng) -> Instruction {
    let op = r.pick(&BRANCH_OPS);
    let jip = (r.below(512) as i32 - 256) * 8;
    let uip = (r.below(512) as i32 - 256) * 8;
    branch_with(r, op, jip, uip)
}

/// Any random valid instruction for `gen`.
pub fn instruction(r: &mut Rng, gen: Gen) -> Instruction {
    match r.below(10) {
        0..=4 => basic(r),
        5 | 6 => three_src(r),
        7 | 8 => send(r, gen),
        _ => branch(r),
    }
}

/// A random native Align1 ALU instruction with direct GRF operands and the common types
/// and regions — the subset other disassemblers agree on.
pub fn simple_alu(r: &mut Rng) -> Instruction {
    let op = r.pick(&[
        Opcode::Mov,
        Opcode::Add,
        Opcode::Mul,
        Opcode::And,
        Opcode::Or,
        Opcode::Xor,
        Opcode::Sel,
        Opcode::Shl,
        Opcode::Shr,
        Opcode::Not,
        Opcode::Frc,
        Opcode::Rndd,
    ]);
    let ty = r.pick(&[Type::F, Type::D, Type::UD, Type::W, Type::UW]);
    let exec = r.pick(&[ExecSize::S1, ExecSize::S8, ExecSize::S16]);
    let dst = Dst::grf(r.below(128) as u8, ty).with_subnr(if exec == ExecSize::S1 {
        subnr(r, ty)
    } else {
        0
    });
    let s = |r: &mut Rng| {
        let reg = if exec == ExecSize::S1 {
            Region::SCALAR
        } else {
            r.pick(&[Region::SCALAR, Region::new(8, 8, 1)])
        };
        let sub = if reg == Region::SCALAR {
            subnr(r, ty)
        } else {
            0
        };
        Src::Reg(RegSrc::grf(r.below(128) as u8, sub, ty, reg))
    };
    let s0 = s(r);
    let mut i = if op.num_srcs() == 1 {
        Instruction::alu1(op, exec, dst, s0)
    } else {
        let s1 = if r.chance(1, 3) {
            let v = r.below(100);
            Src::Imm(match ty {
                Type::W => Imm::w(v as i16),
                Type::UW => Imm::uw(v as u16),
                Type::UD => Imm::ud(v as u32),
                Type::F => Imm::f(v as f32),
                _ => Imm::d(v as i32),
            })
        } else {
            s(r)
        };
        Instruction::alu2(op, exec, dst, s0, s1)
    };
    i.group = ChannelGroup { qtr: 0, nib: false };
    if op == Opcode::Sel {
        i.predicate = Some(Predicate {
            ctrl: PredCtrl::Normal,
            inverse: r.chance(1, 2),
        });
    }
    i
}

/// A random instruction that has a compact form: built from random compaction-table
/// indices and register numbers, uncompacted and decoded (retried until it decodes).
pub fn compactable(r: &mut Rng, gen: Gen) -> Instruction {
    loop {
        let ops: Vec<u8> = OPCODES
            .iter()
            .filter(|o| o.op.is_valid_on(gen) && !o.op.is_send())
            .map(|o| o.hw)
            .collect();
        let op = r.pick(&ops) as u64;
        let mut c = (r.next_u64() & !0x7F) | op | (1 << 29);
        let three = Opcode::from_hw(op as u8, gen).is_some_and(|o| o.format() == Format::ThreeSrc);
        if three {
            c &= !((1 << 7) | (0x1FF << 19) | (0x1FF << 34));
        } else {
            c &= !(1 << 28);
        }
        let Ok(w) = crate::compact::uncompact_u64(c, gen, 0) else {
            continue;
        };
        if crate::compact::compact_u128(w, gen).is_none() {
            continue;
        }
        if let Ok(i) = crate::codec::decode_native(w, gen, 0) {
            return i;
        }
    }
}
