//! The typed instruction model: one value per hardware field, nothing inferred.
//!
//! Every field names the section of `docs/gen9.md` that defines it (`F1.1` = section 1.1,
//! whose layouts were checked against Mesa 25.0.7's `brw_eu_inst.h`). The model is
//! *exact*: `decode(encode(i)) == i` and `encode(decode(bytes)) == bytes` for every
//! instruction the decoder accepts; encodings the model cannot represent (reserved bits set,
//! invalid enumerations) are decode errors, never silently dropped bits.

use std::fmt;

/// Hardware generation. Per-generation differences are data in the tables of this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gen {
    /// Broadwell (gfx8). Only the data that is cheap to carry: same native layout and
    /// compaction tables as Gen9, no split sends.
    Gen8,
    /// Skylake / Kaby Lake / Coffee Lake (gfx9).
    Gen9,
}

impl Gen {
    /// `Gen` from the number used on command lines (`--gen 9`).
    pub fn from_number(n: u32) -> Option<Gen> {
        match n {
            8 => Some(Gen::Gen8),
            9 => Some(Gen::Gen9),
            _ => None,
        }
    }
    pub fn number(self) -> u32 {
        match self {
            Gen::Gen8 => 8,
            Gen::Gen9 => 9,
        }
    }
}

impl fmt::Display for Gen {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "gen{}", self.number())
    }
}

// ---------------------------------------------------------------------------------------
// Opcodes (F2.1)
// ---------------------------------------------------------------------------------------

/// Which native layout an opcode uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Align1/Align16 dst + two source slots (ALU, MATH, WAIT, NOP, JMPI, CALL, RET ...).
    Basic,
    /// Three-source Align16 form (F1.5).
    ThreeSrc,
    /// SEND/SENDC (F1.6).
    Send,
    /// SENDS/SENDSC (F1.7).
    SplitSend,
    /// Structured branches carrying JIP/UIP (F1.9).
    Branch,
}

macro_rules! opcodes {
    ($( $v:ident = $hw:expr, $name:expr, $nsrc:expr, $fmt:ident, [$($g:ident),*]; )*) => {
        /// EU opcodes valid on Gen8/Gen9 (F2.1; Mesa `brw_eu.c` opcode_descs).
        /// `do` is not an encoded instruction on Gen6+ and is therefore absent.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode { $($v),* }

        /// One row of the opcode table: hardware number, mnemonic, number of sources
        /// (MATH: the maximum, see [`MathFunction::num_srcs`]), layout, generations.
        pub struct OpcodeInfo {
            pub op: Opcode,
            pub hw: u8,
            pub name: &'static str,
            pub num_srcs: u8,
            pub format: Format,
            pub gens: &'static [Gen],
        }

        /// The opcode table. Hardware numbers are F2.1.
        pub const OPCODES: &[OpcodeInfo] = &[
            $(OpcodeInfo { op: Opcode::$v, hw: $hw, name: $name, num_srcs: $nsrc,
                           format: Format::$fmt, gens: &[$(Gen::$g),*] }),*
        ];
    };
}

opcodes! {
    Illegal = 0x00, "illegal", 0, Basic, [Gen8, Gen9];
    Mov = 0x01, "mov", 1, Basic, [Gen8, Gen9];
    Sel = 0x02, "sel", 2, Basic, [Gen8, Gen9];
    Movi = 0x03, "movi", 2, Basic, [Gen8, Gen9];
    Not = 0x04, "not", 1, Basic, [Gen8, Gen9];
    And = 0x05, "and", 2, Basic, [Gen8, Gen9];
    Or = 0x06, "or", 2, Basic, [Gen8, Gen9];
    Xor = 0x07, "xor", 2, Basic, [Gen8, Gen9];
    Shr = 0x08, "shr", 2, Basic, [Gen8, Gen9];
    Shl = 0x09, "shl", 2, Basic, [Gen8, Gen9];
    Smov = 0x0A, "smov", 2, Basic, [Gen8, Gen9];
    Asr = 0x0C, "asr", 2, Basic, [Gen8, Gen9];
    Cmp = 0x10, "cmp", 2, Basic, [Gen8, Gen9];
    Cmpn = 0x11, "cmpn", 2, Basic, [Gen8, Gen9];
    Csel = 0x12, "csel", 3, ThreeSrc, [Gen8, Gen9];
    Bfrev = 0x17, "bfrev", 1, Basic, [Gen8, Gen9];
    Bfe = 0x18, "bfe", 3, ThreeSrc, [Gen8, Gen9];
    Bfi1 = 0x19, "bfi1", 2, Basic, [Gen8, Gen9];
    Bfi2 = 0x1A, "bfi2", 3, ThreeSrc, [Gen8, Gen9];
    Jmpi = 0x20, "jmpi", 2, Basic, [Gen8, Gen9];
    Brd = 0x21, "brd", 0, Branch, [Gen8, Gen9];
    If = 0x22, "if", 0, Branch, [Gen8, Gen9];
    Brc = 0x23, "brc", 0, Branch, [Gen8, Gen9];
    Else = 0x24, "else", 0, Branch, [Gen8, Gen9];
    Endif = 0x25, "endif", 0, Branch, [Gen8, Gen9];
    While = 0x27, "while", 0, Branch, [Gen8, Gen9];
    Break = 0x28, "break", 0, Branch, [Gen8, Gen9];
    Cont = 0x29, "cont", 0, Branch, [Gen8, Gen9];
    Halt = 0x2A, "halt", 0, Branch, [Gen8, Gen9];
    Calla = 0x2B, "calla", 2, Basic, [Gen8, Gen9];
    Call = 0x2C, "call", 2, Basic, [Gen8, Gen9];
    Ret = 0x2D, "ret", 2, Basic, [Gen8, Gen9];
    Goto = 0x2E, "goto", 0, Branch, [Gen8, Gen9];
    Wait = 0x30, "wait", 0, Basic, [Gen8, Gen9];
    Send = 0x31, "send", 1, Send, [Gen8, Gen9];
    Sendc = 0x32, "sendc", 1, Send, [Gen8, Gen9];
    Sends = 0x33, "sends", 2, SplitSend, [Gen9];
    Sendsc = 0x34, "sendsc", 2, SplitSend, [Gen9];
    Math = 0x38, "math", 2, Basic, [Gen8, Gen9];
    Add = 0x40, "add", 2, Basic, [Gen8, Gen9];
    Mul = 0x41, "mul", 2, Basic, [Gen8, Gen9];
    Avg = 0x42, "avg", 2, Basic, [Gen8, Gen9];
    Frc = 0x43, "frc", 1, Basic, [Gen8, Gen9];
    Rndu = 0x44, "rndu", 1, Basic, [Gen8, Gen9];
    Rndd = 0x45, "rndd", 1, Basic, [Gen8, Gen9];
    Rnde = 0x46, "rnde", 1, Basic, [Gen8, Gen9];
    Rndz = 0x47, "rndz", 1, Basic, [Gen8, Gen9];
    Mac = 0x48, "mac", 2, Basic, [Gen8, Gen9];
    Mach = 0x49, "mach", 2, Basic, [Gen8, Gen9];
    Lzd = 0x4A, "lzd", 1, Basic, [Gen8, Gen9];
    Fbh = 0x4B, "fbh", 1, Basic, [Gen8, Gen9];
    Fbl = 0x4C, "fbl", 1, Basic, [Gen8, Gen9];
    Cbit = 0x4D, "cbit", 1, Basic, [Gen8, Gen9];
    Addc = 0x4E, "addc", 2, Basic, [Gen8, Gen9];
    Subb = 0x4F, "subb", 2, Basic, [Gen8, Gen9];
    Dp4 = 0x54, "dp4", 2, Basic, [Gen8, Gen9];
    Dph = 0x55, "dph", 2, Basic, [Gen8, Gen9];
    Dp3 = 0x56, "dp3", 2, Basic, [Gen8, Gen9];
    Dp2 = 0x57, "dp2", 2, Basic, [Gen8, Gen9];
    Line = 0x59, "line", 2, Basic, [Gen8, Gen9];
    Pln = 0x5A, "pln", 2, Basic, [Gen8, Gen9];
    Mad = 0x5B, "mad", 3, ThreeSrc, [Gen8, Gen9];
    Lrp = 0x5C, "lrp", 3, ThreeSrc, [Gen8, Gen9];
    Madm = 0x5D, "madm", 3, ThreeSrc, [Gen8, Gen9];
    Nop = 0x7E, "nop", 0, Basic, [Gen8, Gen9];
}

/// Hardware opcode number -> table index, for O(1) decoding.
static OPCODE_BY_HW: [u8; 128] = {
    let mut t = [u8::MAX; 128];
    let mut i = 0;
    while i < OPCODES.len() {
        t[OPCODES[i].hw as usize] = i as u8;
        i += 1;
    }
    t
};

impl Opcode {
    pub fn info(self) -> &'static OpcodeInfo {
        // The table is declared in enum order, so the discriminant is the index.
        &OPCODES[self as usize]
    }
    pub fn hw(self) -> u8 {
        self.info().hw
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    pub fn format(self) -> Format {
        self.info().format
    }
    /// Number of sources the instruction reads (MATH: 2; see [`MathFunction::num_srcs`]).
    pub fn num_srcs(self) -> u8 {
        self.info().num_srcs
    }
    pub fn is_valid_on(self, gen: Gen) -> bool {
        self.info().gens.contains(&gen)
    }
    /// Opcode from its 7-bit hardware number, if it is valid on `gen`.
    pub fn from_hw(hw: u8, gen: Gen) -> Option<Opcode> {
        let idx = *OPCODE_BY_HW.get(hw as usize)?;
        let info = OPCODES.get(idx as usize)?;
        info.gens.contains(&gen).then_some(info.op)
    }
    pub fn from_name(name: &str) -> Option<Opcode> {
        OPCODES.iter().find(|o| o.name == name).map(|o| o.op)
    }
    /// Branches whose bits 95:64 hold a UIP (F1.9). ENDIF, WHILE and BRD only have JIP.
    pub fn has_uip(self) -> bool {
        matches!(
            self,
            Opcode::If
                | Opcode::Else
                | Opcode::Break
                | Opcode::Cont
                | Opcode::Halt
                | Opcode::Brc
                | Opcode::Goto
        )
    }
    /// Bit 28 is BranchCtrl (not AccWrEnable) for these (Mesa `brw_has_branch_ctrl`).
    pub fn has_branch_ctrl(self) -> bool {
        matches!(
            self,
            Opcode::If | Opcode::Else | Opcode::Goto | Opcode::Brc | Opcode::Brd
        )
    }
    pub fn is_send(self) -> bool {
        matches!(
            self,
            Opcode::Send | Opcode::Sendc | Opcode::Sends | Opcode::Sendsc
        )
    }
    /// AND/OR/XOR/NOT: source negate means bitwise NOT, printed `~` (F1.2).
    pub fn is_logic(self) -> bool {
        matches!(self, Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Not)
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

// ---------------------------------------------------------------------------------------
// Register files and types (F2.2, F2.3)
// ---------------------------------------------------------------------------------------

/// Register file field of an operand (F2.2). Value 2 (old MRF) is invalid on Gen8+.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegFile {
    Arf = 0,
    Grf = 1,
    Imm = 3,
}

impl RegFile {
    pub fn from_hw(v: u32) -> Option<RegFile> {
        match v {
            0 => Some(RegFile::Arf),
            1 => Some(RegFile::Grf),
            3 => Some(RegFile::Imm),
            _ => None,
        }
    }
}

impl fmt::Display for RegFile {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            RegFile::Arf => "ARF",
            RegFile::Grf => "GRF",
            RegFile::Imm => "IMM",
        })
    }
}

/// Data types (F2.3). V, UV and VF exist only as immediates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    UB,
    B,
    UW,
    W,
    UD,
    D,
    UQ,
    Q,
    HF,
    F,
    DF,
    /// Packed 8 x 4-bit signed integer vector immediate.
    V,
    /// Packed 8 x 4-bit unsigned integer vector immediate.
    UV,
    /// Packed 4 x 8-bit restricted float vector immediate.
    VF,
}

/// One row of the type table.
pub struct TypeInfo {
    pub ty: Type,
    pub name: &'static str,
    /// Element size in bytes (V/UV: 2, they execute as words; VF: 4).
    pub size: u8,
    /// Register-operand encoding per generation (index = [`Gen`] as usize). F2.3.
    pub reg_hw: [Option<u8>; 2],
    /// Immediate-operand encoding per generation. F2.3.
    pub imm_hw: [Option<u8>; 2],
    /// Three-source type field encoding per generation. F2.3 / F1.5.
    pub three_src_hw: [Option<u8>; 2],
}

const fn both(v: u8) -> [Option<u8>; 2] {
    [Some(v), Some(v)]
}
const NONE2: [Option<u8>; 2] = [None, None];

/// The type table (Mesa `brw_reg_type.c`; Gen8 uses the same encodings as Gen9).
pub const TYPES: &[TypeInfo] = &[
    TypeInfo {
        ty: Type::UB,
        name: "UB",
        size: 1,
        reg_hw: both(4),
        imm_hw: NONE2,
        three_src_hw: NONE2,
    },
    TypeInfo {
        ty: Type::B,
        name: "B",
        size: 1,
        reg_hw: both(5),
        imm_hw: NONE2,
        three_src_hw: NONE2,
    },
    TypeInfo {
        ty: Type::UW,
        name: "UW",
        size: 2,
        reg_hw: both(2),
        imm_hw: both(2),
        three_src_hw: NONE2,
    },
    TypeInfo {
        ty: Type::W,
        name: "W",
        size: 2,
        reg_hw: both(3),
        imm_hw: both(3),
        three_src_hw: NONE2,
    },
    TypeInfo {
        ty: Type::UD,
        name: "UD",
        size: 4,
        reg_hw: both(0),
        imm_hw: both(0),
        three_src_hw: both(2),
    },
    TypeInfo {
        ty: Type::D,
        name: "D",
        size: 4,
        reg_hw: both(1),
        imm_hw: both(1),
        three_src_hw: both(1),
    },
    TypeInfo {
        ty: Type::UQ,
        name: "UQ",
        size: 8,
        reg_hw: both(8),
        imm_hw: both(8),
        three_src_hw: NONE2,
    },
    TypeInfo {
        ty: Type::Q,
        name: "Q",
        size: 8,
        reg_hw: both(9),
        imm_hw: both(9),
        three_src_hw: NONE2,
    },
    TypeInfo {
        ty: Type::HF,
        name: "HF",
        size: 2,
        reg_hw: both(10),
        imm_hw: both(11),
        three_src_hw: both(4),
    },
    TypeInfo {
        ty: Type::F,
        name: "F",
        size: 4,
        reg_hw: both(7),
        imm_hw: both(7),
        three_src_hw: both(0),
    },
    TypeInfo {
        ty: Type::DF,
        name: "DF",
        size: 8,
        reg_hw: both(6),
        imm_hw: both(10),
        three_src_hw: both(3),
    },
    TypeInfo {
        ty: Type::V,
        name: "V",
        size: 2,
        reg_hw: NONE2,
        imm_hw: both(6),
        three_src_hw: NONE2,
    },
    TypeInfo {
        ty: Type::UV,
        name: "UV",
        size: 2,
        reg_hw: NONE2,
        imm_hw: both(4),
        three_src_hw: NONE2,
    },
    TypeInfo {
        ty: Type::VF,
        name: "VF",
        size: 4,
        reg_hw: NONE2,
        imm_hw: both(5),
        three_src_hw: NONE2,
    },
];

const fn type_by_hw(imm: bool) -> [[Option<Type>; 16]; 2] {
    let mut t = [[None; 16]; 2];
    let mut g = 0;
    while g < 2 {
        let mut i = 0;
        while i < TYPES.len() {
            let e = if imm {
                TYPES[i].imm_hw[g]
            } else {
                TYPES[i].reg_hw[g]
            };
            if let Some(v) = e {
                t[g][v as usize] = Some(TYPES[i].ty);
            }
            i += 1;
        }
        g += 1;
    }
    t
}

static TYPE_BY_REG_HW: [[Option<Type>; 16]; 2] = type_by_hw(false);
static TYPE_BY_IMM_HW: [[Option<Type>; 16]; 2] = type_by_hw(true);

/// The types with a register (`imm` false) or an immediate (`imm` true) encoding on some
/// generation, in the order of [`TYPES`], and how many there are.
const fn operand_types(imm: bool) -> ([Type; TYPES.len()], usize) {
    let mut out = [Type::UB; TYPES.len()];
    let (mut i, mut n) = (0, 0);
    while i < TYPES.len() {
        let hw = if imm {
            TYPES[i].imm_hw
        } else {
            TYPES[i].reg_hw
        };
        if hw[0].is_some() || hw[1].is_some() {
            out[n] = TYPES[i].ty;
            n += 1;
        }
        i += 1;
    }
    (out, n)
}

static REG_TYPES: ([Type; TYPES.len()], usize) = operand_types(false);
static IMM_TYPES: ([Type; TYPES.len()], usize) = operand_types(true);

impl Type {
    pub fn info(self) -> &'static TypeInfo {
        &TYPES[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    /// Size of one element in bytes.
    pub fn size(self) -> u32 {
        self.info().size as u32
    }
    pub fn is_float(self) -> bool {
        matches!(self, Type::HF | Type::F | Type::DF | Type::VF)
    }
    pub fn is_signed_int(self) -> bool {
        matches!(self, Type::B | Type::W | Type::D | Type::Q | Type::V)
    }
    pub fn is_vector_imm(self) -> bool {
        matches!(self, Type::V | Type::UV | Type::VF)
    }
    /// 64-bit immediates occupy bits 127:64 (F1.4).
    pub fn is_64bit(self) -> bool {
        self.size() == 8
    }
    pub fn reg_hw(self, gen: Gen) -> Option<u8> {
        self.info().reg_hw[gen as usize]
    }
    pub fn imm_hw(self, gen: Gen) -> Option<u8> {
        self.info().imm_hw[gen as usize]
    }
    pub fn three_src_hw(self, gen: Gen) -> Option<u8> {
        self.info().three_src_hw[gen as usize]
    }
    /// Type encoded as `hw` in an operand of file `file` (O(1): tables built from
    /// [`TYPES`] at compile time).
    pub fn from_hw(file: RegFile, hw: u32, gen: Gen) -> Option<Type> {
        let t = if file == RegFile::Imm {
            &TYPE_BY_IMM_HW
        } else {
            &TYPE_BY_REG_HW
        };
        t[gen as usize].get(hw as usize).copied().flatten()
    }
    pub fn from_three_src_hw(hw: u32, gen: Gen) -> Option<Type> {
        TYPES
            .iter()
            .find(|t| t.three_src_hw[gen as usize] == Some(hw as u8))
            .map(|t| t.ty)
    }
    pub fn from_name(s: &str) -> Option<Type> {
        TYPES.iter().find(|t| t.name == s).map(|t| t.ty)
    }
    /// The types a register operand can have (on some generation), in table order.
    pub fn register_types() -> &'static [Type] {
        &REG_TYPES.0[..REG_TYPES.1]
    }
    /// The types an immediate can have (on some generation), in table order.
    pub fn immediate_types() -> &'static [Type] {
        &IMM_TYPES.0[..IMM_TYPES.1]
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

// ---------------------------------------------------------------------------------------
// Regions, swizzles, write masks (F1.2, F1.3, F2.8)
// ---------------------------------------------------------------------------------------

/// Source region `<vstride;width,hstride>` in elements (F2.8).
/// `vstride` is one of 0,1,2,4,8,16,32 or [`Region::VXH`] (encoding 15, 1-D indirect);
/// `width` one of 1,2,4,8,16; `hstride` one of 0,1,2,4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    pub vstride: u8,
    pub width: u8,
    pub hstride: u8,
}

impl Region {
    /// Marker for vertical-stride encoding 15 (`VxH` / `Vx1`).
    pub const VXH: u8 = 0xFF;
    pub const fn new(vstride: u8, width: u8, hstride: u8) -> Region {
        Region {
            vstride,
            width,
            hstride,
        }
    }
    /// `<0,1,0>`: one scalar broadcast to all channels.
    pub const SCALAR: Region = Region::new(0, 1, 0);
    /// The region an all-zero field encodes (same as SCALAR).
    pub const ZERO: Region = Region::SCALAR;

    pub fn vstride_hw(v: u8) -> Option<u32> {
        Some(match v {
            0 => 0,
            1 => 1,
            2 => 2,
            4 => 3,
            8 => 4,
            16 => 5,
            32 => 6,
            Region::VXH => 15,
            _ => return None,
        })
    }
    pub fn vstride_from_hw(e: u32) -> Option<u8> {
        Some(match e {
            0 => 0,
            1..=6 => 1 << (e - 1),
            15 => Region::VXH,
            _ => return None,
        })
    }
    pub fn width_hw(w: u8) -> Option<u32> {
        Some(match w {
            1 => 0,
            2 => 1,
            4 => 2,
            8 => 3,
            16 => 4,
            _ => return None,
        })
    }
    pub fn width_from_hw(e: u32) -> Option<u8> {
        (e <= 4).then(|| 1 << e)
    }
    pub fn hstride_hw(h: u8) -> Option<u32> {
        Some(match h {
            0 => 0,
            1 => 1,
            2 => 2,
            4 => 3,
            _ => return None,
        })
    }
    pub fn hstride_from_hw(e: u32) -> u8 {
        [0, 1, 2, 4][(e & 3) as usize]
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.vstride == Region::VXH {
            write!(f, "<VxH,{},{}>", self.width, self.hstride)
        } else {
            write!(f, "<{},{},{}>", self.vstride, self.width, self.hstride)
        }
    }
}

/// Align16 source swizzle: component selected for x, y, z, w (0=x .. 3=w). F1.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle(pub [u8; 4]);

impl Swizzle {
    pub const XYZW: Swizzle = Swizzle([0, 1, 2, 3]);
    /// The 8-bit packed form used by 3-source instructions (x in bits 1:0).
    pub fn packed(self) -> u32 {
        (0..4).map(|i| ((self.0[i] & 3) as u32) << (2 * i)).sum()
    }
    pub fn from_packed(v: u32) -> Swizzle {
        Swizzle([
            (v & 3) as u8,
            ((v >> 2) & 3) as u8,
            ((v >> 4) & 3) as u8,
            ((v >> 6) & 3) as u8,
        ])
    }
}

impl Default for Swizzle {
    fn default() -> Self {
        Swizzle::XYZW
    }
}

impl fmt::Display for Swizzle {
    /// Mesa's form: nothing for `.xyzw`, one letter when all four agree, else four letters.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        const C: [char; 4] = ['x', 'y', 'z', 'w'];
        if *self == Swizzle::XYZW {
            return Ok(());
        }
        f.write_str(".")?;
        let s = self.0;
        if s.iter().all(|&c| c == s[0]) {
            write!(f, "{}", C[s[0] as usize & 3])
        } else {
            for c in s {
                write!(f, "{}", C[c as usize & 3])?;
            }
            Ok(())
        }
    }
}

/// Align16 destination write mask: bit 0 = x .. bit 3 = w. F1.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WriteMask(pub u8);

impl WriteMask {
    pub const XYZW: WriteMask = WriteMask(0xF);
}

impl Default for WriteMask {
    fn default() -> Self {
        WriteMask::XYZW
    }
}

impl fmt::Display for WriteMask {
    /// Mesa's form: nothing for `.xyzw`, `.` for an empty mask, else the letters.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.0 & 0xF == 0xF {
            return Ok(());
        }
        f.write_str(".")?;
        for (i, c) in ['x', 'y', 'z', 'w'].iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Architecture registers (F2.10)
// ---------------------------------------------------------------------------------------

/// Architecture register file entries: the high nibble of the ARF register number selects
/// the kind, the low nibble the index (`acc1` = 0x21). F2.10.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArfKind {
    Null = 0x0,
    /// Address register a0.
    Address = 0x1,
    /// Accumulators acc0..acc9 (acc2.. are Mesa's `mme` registers).
    Acc = 0x2,
    /// Flag registers f0, f1.
    Flag = 0x3,
    /// Channel enable (`ce0`, printed `mask0`).
    ChannelEnable = 0x4,
    /// Mask stack (no Gen9 use in Mesa; decoded for completeness).
    MaskStack = 0x5,
    /// Mask stack depth (no Gen9 use in Mesa).
    MaskStackDepth = 0x6,
    /// State register sr0.
    State = 0x7,
    /// Control register cr0.
    Control = 0x8,
    /// Notification count n0.
    Notification = 0x9,
    /// Instruction pointer.
    Ip = 0xA,
    /// Thread dependency register tdr0.
    Tdr = 0xB,
    /// Timestamp tm0.
    Timestamp = 0xC,
}

/// An ARF register: kind plus index, e.g. `acc1`, `f1`, `n0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArfReg {
    pub kind: ArfKind,
    pub index: u8,
}

const ARF_KINDS: [(ArfKind, &str); 13] = [
    (ArfKind::Null, "null"),
    (ArfKind::Address, "a"),
    (ArfKind::Acc, "acc"),
    (ArfKind::Flag, "f"),
    (ArfKind::ChannelEnable, "mask"),
    (ArfKind::MaskStack, "ms"),
    (ArfKind::MaskStackDepth, "msd"),
    (ArfKind::State, "sr"),
    (ArfKind::Control, "cr"),
    (ArfKind::Notification, "n"),
    (ArfKind::Ip, "ip"),
    (ArfKind::Tdr, "tdr"),
    (ArfKind::Timestamp, "tm"),
];

impl ArfReg {
    pub const NULL: ArfReg = ArfReg {
        kind: ArfKind::Null,
        index: 0,
    };
    pub const A0: ArfReg = ArfReg {
        kind: ArfKind::Address,
        index: 0,
    };
    pub const IP: ArfReg = ArfReg {
        kind: ArfKind::Ip,
        index: 0,
    };
    pub const fn new(kind: ArfKind, index: u8) -> ArfReg {
        ArfReg { kind, index }
    }
    /// The 8-bit register number field.
    pub fn nr(self) -> u8 {
        ((self.kind as u8) << 4) | (self.index & 0xF)
    }
    pub fn from_nr(nr: u8) -> Option<ArfReg> {
        let (kind, _) = *ARF_KINDS.get((nr >> 4) as usize)?;
        Some(ArfReg {
            kind,
            index: nr & 0xF,
        })
    }
    /// Mesa's name prefix (`mask` for ce, `a` for a0 ...).
    pub fn prefix(self) -> &'static str {
        ARF_KINDS[self.kind as usize].1
    }
    /// Parse `null`, `a0`, `acc0`, `f1`, `mask0`, `ce0`, `sr0`, `cr0`, `n0`, `ip`, `tdr0`, `tm0`.
    pub fn from_name(s: &str) -> Option<ArfReg> {
        match s {
            "null" => return Some(ArfReg::NULL),
            "ip" => return Some(ArfReg::IP),
            _ => {}
        }
        let split = s.find(|c: char| c.is_ascii_digit())?;
        let (p, n) = s.split_at(split);
        let index: u8 = n.parse().ok().filter(|&i| i < 16)?;
        let p = if p == "ce" { "mask" } else { p };
        let (kind, _) = ARF_KINDS
            .iter()
            .find(|(k, name)| *name == p && !matches!(k, ArfKind::Null | ArfKind::Ip))?;
        Some(ArfReg { kind: *kind, index })
    }
}

impl fmt::Display for ArfReg {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.kind {
            ArfKind::Null => f.write_str("null"),
            ArfKind::Ip => f.write_str("ip"),
            _ => write!(f, "{}{}", self.prefix(), self.index),
        }
    }
}

/// A directly addressed register: a GRF number or an ARF register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reg {
    Grf(u8),
    Arf(ArfReg),
}

impl Reg {
    pub fn file(self) -> RegFile {
        match self {
            Reg::Grf(_) => RegFile::Grf,
            Reg::Arf(_) => RegFile::Arf,
        }
    }
    pub fn nr(self) -> u8 {
        match self {
            Reg::Grf(n) => n,
            Reg::Arf(a) => a.nr(),
        }
    }
    pub fn is_null(self) -> bool {
        matches!(self, Reg::Arf(a) if a.kind == ArfKind::Null)
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Reg::Grf(n) => write!(f, "g{n}"),
            Reg::Arf(a) => write!(f, "{a}"),
        }
    }
}

/// How an operand names its register (F1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Addr {
    /// Direct: register plus sub-register offset in **bytes** (Align16: 0 or 16).
    Direct { reg: Reg, subnr: u8 },
    /// Register-indirect: byte address = a0.`addr_subnr` + `imm` (10-bit signed).
    /// `file` is the operand's register-file field (GRF in practice).
    /// `addr_subnr` is the raw 4-bit address-subregister field (its unit is unverified; F1.2).
    Indirect {
        file: RegFile,
        addr_subnr: u8,
        imm: i16,
    },
}

impl Addr {
    pub fn grf(nr: u8) -> Addr {
        Addr::Direct {
            reg: Reg::Grf(nr),
            subnr: 0,
        }
    }
    pub fn null() -> Addr {
        Addr::Direct {
            reg: Reg::Arf(ArfReg::NULL),
            subnr: 0,
        }
    }
    pub fn arf(a: ArfReg, subnr: u8) -> Addr {
        Addr::Direct {
            reg: Reg::Arf(a),
            subnr,
        }
    }
    pub fn file(self) -> RegFile {
        match self {
            Addr::Direct { reg, .. } => reg.file(),
            Addr::Indirect { file, .. } => file,
        }
    }
    pub fn is_null(self) -> bool {
        matches!(self, Addr::Direct { reg, .. } if reg.is_null())
    }
}

// ---------------------------------------------------------------------------------------
// Operands
// ---------------------------------------------------------------------------------------

/// Destination operand (F1.2 Align1, F1.3 Align16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dst {
    pub addr: Addr,
    pub ty: Type,
    /// Horizontal stride in elements: 0 (encoding 0, reserved except all-zero fields), 1, 2, 4.
    pub hstride: u8,
    /// Align16 write mask; must be [`WriteMask::XYZW`] in Align1 (the bits hold the subreg).
    pub writemask: WriteMask,
}

impl Dst {
    pub fn new(addr: Addr, ty: Type) -> Dst {
        Dst {
            addr,
            ty,
            hstride: 1,
            writemask: WriteMask::XYZW,
        }
    }
    pub fn grf(nr: u8, ty: Type) -> Dst {
        Dst::new(Addr::grf(nr), ty)
    }
    pub fn null(ty: Type) -> Dst {
        Dst::new(Addr::null(), ty)
    }
    /// The all-zero destination field (`null:UD`, stride 0), as in 1-source and NOP encodings.
    pub fn zero() -> Dst {
        Dst {
            addr: Addr::null(),
            ty: Type::UD,
            hstride: 0,
            writemask: WriteMask::XYZW,
        }
    }
    pub fn with_hstride(mut self, h: u8) -> Dst {
        self.hstride = h;
        self
    }
    pub fn with_subnr(mut self, subnr: u8) -> Dst {
        if let Addr::Direct { subnr: s, .. } = &mut self.addr {
            *s = subnr;
        }
        self
    }
}

/// A register source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegSrc {
    pub addr: Addr,
    pub ty: Type,
    /// Align1: full region. Align16: only `vstride` is encoded; width/hstride are kept as
    /// `4`/`1` (the implicit Align16 region) by the decoder.
    pub region: Region,
    /// Align16 swizzle; must be [`Swizzle::XYZW`] in Align1.
    pub swizzle: Swizzle,
    pub negate: bool,
    pub abs: bool,
}

impl RegSrc {
    pub fn new(addr: Addr, ty: Type, region: Region) -> RegSrc {
        RegSrc {
            addr,
            ty,
            region,
            swizzle: Swizzle::XYZW,
            negate: false,
            abs: false,
        }
    }
    pub fn grf(nr: u8, subnr: u8, ty: Type, region: Region) -> RegSrc {
        RegSrc::new(
            Addr::Direct {
                reg: Reg::Grf(nr),
                subnr,
            },
            ty,
            region,
        )
    }
    /// A GRF source addressed through `a0.0` (`g[a0.0]`), no immediate offset.
    pub fn indirect(ty: Type, region: Region) -> RegSrc {
        RegSrc::new(
            Addr::Indirect {
                file: RegFile::Grf,
                addr_subnr: 0,
                imm: 0,
            },
            ty,
            region,
        )
    }
    /// The all-zero source field (`null:UD <0,1,0>`).
    pub fn zero() -> RegSrc {
        RegSrc::new(Addr::null(), Type::UD, Region::ZERO)
    }
}

/// An immediate: its type and the raw field bits. 32-bit types use the low 32 bits,
/// 64-bit types all 64 (F1.4). 16-bit immediates are kept as the full 32-bit field
/// (Mesa replicates the value into both halves: `1UW` is `0x0001_0001`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Imm {
    pub ty: Type,
    pub bits: u64,
}

impl Imm {
    pub fn ud(v: u32) -> Imm {
        Imm {
            ty: Type::UD,
            bits: v as u64,
        }
    }
    pub fn d(v: i32) -> Imm {
        Imm {
            ty: Type::D,
            bits: v as u32 as u64,
        }
    }
    pub fn uw(v: u16) -> Imm {
        Imm {
            ty: Type::UW,
            bits: ((v as u64) << 16) | v as u64,
        }
    }
    pub fn w(v: i16) -> Imm {
        Imm::uw(v as u16).retyped(Type::W)
    }
    pub fn hf(bits: u16) -> Imm {
        Imm::uw(bits).retyped(Type::HF)
    }
    pub fn f(v: f32) -> Imm {
        Imm {
            ty: Type::F,
            bits: v.to_bits() as u64,
        }
    }
    pub fn df(v: f64) -> Imm {
        Imm {
            ty: Type::DF,
            bits: v.to_bits(),
        }
    }
    pub fn uq(v: u64) -> Imm {
        Imm {
            ty: Type::UQ,
            bits: v,
        }
    }
    pub fn q(v: i64) -> Imm {
        Imm {
            ty: Type::Q,
            bits: v as u64,
        }
    }
    pub fn v(packed: u32) -> Imm {
        Imm {
            ty: Type::V,
            bits: packed as u64,
        }
    }
    pub fn uv(packed: u32) -> Imm {
        Imm {
            ty: Type::UV,
            bits: packed as u64,
        }
    }
    pub fn vf(packed: u32) -> Imm {
        Imm {
            ty: Type::VF,
            bits: packed as u64,
        }
    }
    pub fn retyped(self, ty: Type) -> Imm {
        Imm {
            ty,
            bits: self.bits,
        }
    }
    /// The value as the low 32 bits of the field.
    pub fn u32(self) -> u32 {
        self.bits as u32
    }
}

/// Decode one VF element (sign bit 7, exponent 6:4 bias 3, mantissa 3:0; F1.4).
pub fn vf_to_f32(b: u8) -> f32 {
    let e = ((b >> 4) & 7) as i32;
    let m = (b & 0xF) as f32;
    let mag = if e == 0 && b & 0x7F == 0 {
        0.0
    } else {
        (1.0 + m / 16.0) * 2f32.powi(e - 3)
    };
    if b & 0x80 != 0 {
        -mag
    } else {
        mag
    }
}

/// A source operand: a register region or an immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Src {
    Reg(RegSrc),
    Imm(Imm),
    /// The unused src1 slot of a 1-source instruction whose src0 is a 32-bit immediate:
    /// the value overlays src1's register fields, only the file and the raw 4-bit type
    /// field remain (Mesa copies the immediate's type code there, e.g. 6 for `V`,
    /// which as a register type would read DF; F1.9).
    Unused {
        file: RegFile,
        ty_hw: u8,
    },
}

impl Src {
    pub fn ty(&self) -> Type {
        match self {
            Src::Reg(r) => r.ty,
            Src::Imm(i) => i.ty,
            Src::Unused { file, ty_hw } => {
                Type::from_hw(*file, *ty_hw as u32, Gen::Gen9).unwrap_or(Type::UD)
            }
        }
    }
    pub fn file(&self) -> RegFile {
        match self {
            Src::Reg(r) => r.addr.file(),
            Src::Imm(_) => RegFile::Imm,
            Src::Unused { file, .. } => *file,
        }
    }
    pub fn as_reg(&self) -> Option<&RegSrc> {
        match self {
            Src::Reg(r) => Some(r),
            Src::Imm(_) | Src::Unused { .. } => None,
        }
    }
    /// Mesa's src1 for a 1-source instruction with a 32-bit immediate src0 (ARF file,
    /// the immediate's type code; identical on Gen8 and Gen9).
    pub fn unused_for_imm(imm_ty: Type) -> Src {
        Src::Unused {
            file: RegFile::Arf,
            ty_hw: imm_ty.imm_hw(Gen::Gen9).unwrap_or(0),
        }
    }
    pub fn zero() -> Src {
        Src::Reg(RegSrc::zero())
    }
    /// The all-zero source field as the decoder reads it in `mode` (Align16: swizzle
    /// `.xxxx`, implicit width 4 / hstride 1). What Mesa leaves in an unused slot.
    pub fn zero_for(mode: AccessMode) -> Src {
        match mode {
            AccessMode::Align1 => Src::zero(),
            AccessMode::Align16 => Src::Reg(RegSrc {
                region: Region::new(0, 4, 1),
                swizzle: Swizzle([0; 4]),
                ..RegSrc::zero()
            }),
        }
    }
}

/// Three-source destination (F1.5): always GRF, Align16.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dst3 {
    pub nr: u8,
    /// Sub-register as a DWord index (bits 55:53).
    pub subnr_dw: u8,
    pub writemask: WriteMask,
    pub ty: Type,
}

/// Three-source source (F1.5): always GRF; region `<4,4,1>`+swizzle or `<0,1,0>` (RepCtrl).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Src3 {
    pub nr: u8,
    /// Byte offset = DWord index * 4 + word bit * 2 (0..=30, even).
    pub subnr: u8,
    pub swizzle: Swizzle,
    /// Replicate one scalar (`<0,1,0>`).
    pub rep_ctrl: bool,
    pub negate: bool,
    pub abs: bool,
    pub ty: Type,
}

impl Src3 {
    pub fn grf(nr: u8, ty: Type) -> Src3 {
        Src3 {
            nr,
            subnr: 0,
            swizzle: Swizzle::XYZW,
            rep_ctrl: false,
            negate: false,
            abs: false,
            ty,
        }
    }
    pub fn scalar(nr: u8, subnr: u8, ty: Type) -> Src3 {
        Src3 {
            rep_ctrl: true,
            subnr,
            ..Src3::grf(nr, ty)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Control enumerations
// ---------------------------------------------------------------------------------------

/// Access mode, bit 8 (F2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AccessMode {
    #[default]
    Align1 = 0,
    Align16 = 1,
}

impl fmt::Display for AccessMode {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            AccessMode::Align1 => "align1",
            AccessMode::Align16 => "align16",
        })
    }
}

/// Execution size: number of channels, encoded 0..5 in bits 23:21 (F2.6). Explicit,
/// never inferred from a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExecSize(u8);

impl ExecSize {
    pub const S1: ExecSize = ExecSize(1);
    pub const S2: ExecSize = ExecSize(2);
    pub const S4: ExecSize = ExecSize(4);
    pub const S8: ExecSize = ExecSize(8);
    pub const S16: ExecSize = ExecSize(16);
    pub const S32: ExecSize = ExecSize(32);
    pub fn new(channels: u32) -> Option<ExecSize> {
        matches!(channels, 1 | 2 | 4 | 8 | 16 | 32).then_some(ExecSize(channels as u8))
    }
    pub fn channels(self) -> u32 {
        self.0 as u32
    }
    pub fn hw(self) -> u32 {
        self.0.trailing_zeros()
    }
    pub fn from_hw(e: u32) -> Option<ExecSize> {
        (e <= 5).then(|| ExecSize(1 << e))
    }
}

impl fmt::Display for ExecSize {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Channel group: quarter control (bits 13:12) and nibble control (bit 11). F2.7.
/// First channel = `qtr * 8 + nib * 4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ChannelGroup {
    pub qtr: u8,
    pub nib: bool,
}

impl ChannelGroup {
    pub fn first_channel(self) -> u32 {
        self.qtr as u32 * 8 + self.nib as u32 * 4
    }
    /// Mesa's text for this group at `exec` channels: `1Q`..`4Q`, `1H`/`2H`, `1N`..`8N`;
    /// `None` for exec 32 (nothing printed) and for combinations Mesa prints as `NQ`.
    pub fn mesa_name(self, exec: ExecSize) -> Option<String> {
        let q = self.qtr as u32;
        match exec.channels() {
            32 => None,
            16 => Some(format!("{}H", q / 2 + 1)),
            8 => Some(format!("{}Q", q + 1)),
            _ => Some(format!("{}N", q * 2 + self.nib as u32 + 1)),
        }
    }
}

/// Thread control, bits 15:14 (F2.9). Encoding 3 is invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ThreadCtrl {
    #[default]
    Normal = 0,
    Atomic = 1,
    Switch = 2,
}

/// Dependency-check hints, bits 9 (NoDDClr) and 10 (NoDDChk). F1.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DepCtrl {
    pub no_dd_clear: bool,
    pub no_dd_check: bool,
}

/// Predicate control (bits 19:16; F2.5). The numeric code depends on the access mode:
/// `AnyV`..`All32h` are Align1 only, `X`..`W` Align16 only; `Any4h`/`All4h` are 6/7 in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PredCtrl {
    Normal,
    AnyV,
    AllV,
    Any2h,
    All2h,
    Any4h,
    All4h,
    Any8h,
    All8h,
    Any16h,
    All16h,
    Any32h,
    All32h,
    X,
    Y,
    Z,
    W,
}

const PRED_ALIGN1: [(PredCtrl, &str); 13] = [
    (PredCtrl::Normal, ""),
    (PredCtrl::AnyV, ".anyv"),
    (PredCtrl::AllV, ".allv"),
    (PredCtrl::Any2h, ".any2h"),
    (PredCtrl::All2h, ".all2h"),
    (PredCtrl::Any4h, ".any4h"),
    (PredCtrl::All4h, ".all4h"),
    (PredCtrl::Any8h, ".any8h"),
    (PredCtrl::All8h, ".all8h"),
    (PredCtrl::Any16h, ".any16h"),
    (PredCtrl::All16h, ".all16h"),
    (PredCtrl::Any32h, ".any32h"),
    (PredCtrl::All32h, ".all32h"),
];
const PRED_ALIGN16: [(PredCtrl, &str); 7] = [
    (PredCtrl::Normal, ""),
    (PredCtrl::X, ".x"),
    (PredCtrl::Y, ".y"),
    (PredCtrl::Z, ".z"),
    (PredCtrl::W, ".w"),
    (PredCtrl::Any4h, ".any4h"),
    (PredCtrl::All4h, ".all4h"),
];

impl PredCtrl {
    fn table(mode: AccessMode) -> &'static [(PredCtrl, &'static str)] {
        match mode {
            AccessMode::Align1 => &PRED_ALIGN1,
            AccessMode::Align16 => &PRED_ALIGN16,
        }
    }
    /// Hardware code (1..) in `mode`, or `None` if the control does not exist there.
    pub fn hw(self, mode: AccessMode) -> Option<u32> {
        Self::table(mode)
            .iter()
            .position(|(p, _)| *p == self)
            .map(|i| i as u32 + 1)
    }
    pub fn from_hw(code: u32, mode: AccessMode) -> Option<PredCtrl> {
        Self::table(mode)
            .get((code as usize).checked_sub(1)?)
            .map(|(p, _)| *p)
    }
    /// Text suffix (`.any4h`; empty for normal).
    pub fn suffix(self) -> &'static str {
        PRED_ALIGN1
            .iter()
            .chain(PRED_ALIGN16.iter())
            .find(|(p, _)| *p == self)
            .map_or("", |(_, s)| s)
    }
    pub fn from_suffix(s: &str, mode: AccessMode) -> Option<PredCtrl> {
        Self::table(mode)
            .iter()
            .find(|(_, n)| *n == s)
            .map(|(p, _)| *p)
    }
}

/// Flag register f0.0 f0.1 f1.0 f1.1 (bits 33 = register, 32 = sub-register). F1.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FlagReg {
    pub nr: u8,
    pub subnr: u8,
}

impl fmt::Display for FlagReg {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "f{}.{}", self.nr, self.subnr)
    }
}

/// Predication: control + inversion; the flag register is [`Instruction::flag`]. F1.1, F2.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Predicate {
    pub ctrl: PredCtrl,
    pub inverse: bool,
}

/// Conditional modifier (bits 27:24 of ALU instructions; F2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CondMod {
    #[default]
    None = 0,
    Z = 1,
    Nz = 2,
    G = 3,
    Ge = 4,
    L = 5,
    Le = 6,
    /// Gen<=5 "round", reserved on Gen8+ but representable.
    R = 7,
    O = 8,
    U = 9,
}

const CMOD_NAMES: [&str; 10] = ["", ".z", ".nz", ".g", ".ge", ".l", ".le", ".r", ".o", ".u"];
const CMODS: [CondMod; 10] = [
    CondMod::None,
    CondMod::Z,
    CondMod::Nz,
    CondMod::G,
    CondMod::Ge,
    CondMod::L,
    CondMod::Le,
    CondMod::R,
    CondMod::O,
    CondMod::U,
];

impl CondMod {
    pub fn from_hw(v: u32) -> Option<CondMod> {
        CMODS.get(v as usize).copied()
    }
    /// Text suffix (`.nz`), empty for none.
    pub fn suffix(self) -> &'static str {
        CMOD_NAMES[self as usize]
    }
    /// Accepts Mesa's names and the aliases `.e`/`.ne`.
    pub fn from_suffix(s: &str) -> Option<CondMod> {
        match s {
            ".e" => return Some(CondMod::Z),
            ".ne" => return Some(CondMod::Nz),
            _ => {}
        }
        CMOD_NAMES.iter().position(|n| *n == s).map(|i| CMODS[i])
    }
}

impl fmt::Display for CondMod {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.suffix())
    }
}

/// MATH function (bits 27:24 of MATH; F2.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFunction {
    Inv = 1,
    Log = 2,
    Exp = 3,
    Sqrt = 4,
    Rsq = 5,
    Sin = 6,
    Cos = 7,
    Fdiv = 9,
    Pow = 10,
    IntDivMod = 11,
    IntDiv = 12,
    IntMod = 13,
    Invm = 14,
    Rsqrtm = 15,
}

const MATH_FNS: [(MathFunction, &str); 14] = [
    (MathFunction::Inv, "inv"),
    (MathFunction::Log, "log"),
    (MathFunction::Exp, "exp"),
    (MathFunction::Sqrt, "sqrt"),
    (MathFunction::Rsq, "rsq"),
    (MathFunction::Sin, "sin"),
    (MathFunction::Cos, "cos"),
    (MathFunction::Fdiv, "fdiv"),
    (MathFunction::Pow, "pow"),
    (MathFunction::IntDivMod, "intdivmod"),
    (MathFunction::IntDiv, "intdiv"),
    (MathFunction::IntMod, "intmod"),
    (MathFunction::Invm, "invm"),
    (MathFunction::Rsqrtm, "rsqrtm"),
];

impl MathFunction {
    pub fn from_hw(v: u32) -> Option<MathFunction> {
        MATH_FNS
            .iter()
            .find(|(m, _)| *m as u32 == v)
            .map(|(m, _)| *m)
    }
    pub fn name(self) -> &'static str {
        MATH_FNS
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("?", |(_, n)| n)
    }
    pub fn from_name(s: &str) -> Option<MathFunction> {
        MATH_FNS.iter().find(|(_, n)| *n == s).map(|(m, _)| *m)
    }
    /// Sources read: 1 for inv..cos, invm, rsqrtm; 2 for fdiv, pow and the integer divisions.
    pub fn num_srcs(self) -> u8 {
        match self {
            MathFunction::Fdiv
            | MathFunction::Pow
            | MathFunction::IntDivMod
            | MathFunction::IntDiv
            | MathFunction::IntMod => 2,
            _ => 1,
        }
    }
}

impl fmt::Display for MathFunction {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Shared-function ID of a message (bits 27:24 of SEND*; F2.12). Text names are Mesa's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sfid {
    Null = 0,
    Sampler = 2,
    Gateway = 3,
    DpSampler = 4,
    DpRender = 5,
    Urb = 6,
    ThreadSpawner = 7,
    Vme = 8,
    DpConst = 9,
    /// Data cache 0 (`data`): scattered, OWord block, fence, scratch.
    DpDc0 = 10,
    PixelInterp = 11,
    /// Data cache 1 (`dp data 1`): untyped/typed surface and atomics, A64.
    DpDc1 = 12,
    Cre = 13,
}

const SFIDS: [(Sfid, &str); 13] = [
    (Sfid::Null, "null"),
    (Sfid::Sampler, "sampler"),
    (Sfid::Gateway, "gateway"),
    (Sfid::DpSampler, "dp_sampler"),
    (Sfid::DpRender, "render"),
    (Sfid::Urb, "urb"),
    (Sfid::ThreadSpawner, "thread_spawner"),
    (Sfid::Vme, "vme"),
    (Sfid::DpConst, "const"),
    (Sfid::DpDc0, "data"),
    (Sfid::PixelInterp, "pixel interp"),
    (Sfid::DpDc1, "dp data 1"),
    (Sfid::Cre, "cre"),
];

impl Sfid {
    pub fn from_hw(v: u32) -> Option<Sfid> {
        SFIDS.iter().find(|(s, _)| *s as u32 == v).map(|(s, _)| *s)
    }
    pub fn name(self) -> &'static str {
        SFIDS
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("?", |(_, n)| n)
    }
    /// All (SFID, text name) pairs, for parsers.
    pub fn all() -> &'static [(Sfid, &'static str)] {
        &SFIDS
    }
}

impl fmt::Display for Sfid {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Message descriptor source (F1.6, F1.7, F1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendDesc {
    /// Immediate 31-bit descriptor (bits 126:96).
    Imm(u32),
    /// Descriptor taken from `a0.<subnr>` at run time (sub-register in bytes).
    A0 { subnr: u8 },
}

impl SendDesc {
    pub fn imm(self) -> Option<u32> {
        match self {
            SendDesc::Imm(d) => Some(d),
            SendDesc::A0 { .. } => None,
        }
    }
}

/// Fields of an immediate message descriptor (F1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescFields {
    pub mlen: u32,
    pub rlen: u32,
    pub header: bool,
    pub function_control: u32,
}

impl DescFields {
    pub fn from_desc(d: u32) -> DescFields {
        DescFields {
            mlen: (d >> 25) & 0xF,
            rlen: (d >> 20) & 0x1F,
            header: d & (1 << 19) != 0,
            function_control: d & 0x7FFFF,
        }
    }
}

/// Extended descriptor of a split send (F1.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExDesc {
    /// Immediate: bits 31:16 and 9:6 (ex_mlen) are stored; the rest must be zero.
    Imm(u32),
    /// From `a0.<dword index>` (bits 82:80).
    A0 { subnr_dw: u8 },
}

impl ExDesc {
    /// The immediate bits an encoding can carry.
    pub const IMM_MASK: u32 = 0xFFFF_03C0;
    /// `ex_mlen` (GRFs of the second payload) of an immediate extended descriptor.
    pub fn ex_mlen(self) -> Option<u32> {
        match self {
            ExDesc::Imm(v) => Some((v >> 6) & 0xF),
            ExDesc::A0 { .. } => None,
        }
    }
}

/// Register of a split-send operand: GRF, or ARF (null). Sub-register in 16-byte units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SendsReg {
    pub file: RegFile,
    pub nr: u8,
    /// Sub-register in units of 16 bytes (one bit: 0 or 1).
    pub subnr16: u8,
}

impl SendsReg {
    pub fn grf(nr: u8) -> SendsReg {
        SendsReg {
            file: RegFile::Grf,
            nr,
            subnr16: 0,
        }
    }
    pub fn null() -> SendsReg {
        SendsReg {
            file: RegFile::Arf,
            nr: 0,
            subnr16: 0,
        }
    }
    pub fn is_null(self) -> bool {
        self.file == RegFile::Arf && self.nr == 0
    }
}

// ---------------------------------------------------------------------------------------
// Instruction
// ---------------------------------------------------------------------------------------

/// The operands of an instruction, one variant per native layout ([`Format`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operands {
    /// Dst + two source slots (F1.2/F1.3). Every slot is explicit, including unused ones:
    /// a 1-source op carries the encoding's src1 field (Mesa: all zero = `null:UD <0,1,0>`,
    /// or [`Src::Unused`] when src0 is a 32-bit immediate, whose value then overlays src1's
    /// register fields). With a 64-bit src0 immediate `src1` must be
    /// [`Src::zero`], as its bits belong to the value. At most one immediate, in the last
    /// source slot that is used.
    Basic {
        /// Conditional modifier (ALU) — `CondMod::None` for MATH, which uses `math_fn`.
        cond_mod: CondMod,
        /// MATH function (only for MATH).
        math_fn: Option<MathFunction>,
        dst: Dst,
        src0: Src,
        src1: Src,
    },
    /// Three-source Align16 (F1.5). Source types: src0's type is the shared field; when it
    /// is F or HF, src1/src2 may each be F or HF, else they must equal src0's type.
    ThreeSrc {
        cond_mod: CondMod,
        dst: Dst3,
        src: [Src3; 3],
    },
    /// SEND/SENDC (F1.6). `src0`'s region and sub-register fields double as ExDesc[27:16]
    /// and `ex_desc_31_28` is the src1 type field; see [`Instruction::send_ex_desc`].
    Send {
        sfid: Sfid,
        eot: bool,
        dst: Dst,
        src0: RegSrc,
        desc: SendDesc,
        ex_desc_31_28: u8,
    },
    /// SENDS/SENDSC (F1.7).
    SplitSend {
        sfid: Sfid,
        eot: bool,
        dst: SendsReg,
        src0: SendsReg,
        src1: SendsReg,
        desc: SendDesc,
        ex_desc: ExDesc,
    },
    /// IF ELSE ENDIF WHILE BREAK CONT HALT BRD BRC GOTO (F1.9).
    Branch {
        /// Destination fields (Mesa: `null:D<1>`; CONT `ip:UD<1>`; ENDIF all zero).
        dst: Dst,
        /// File/type fields of src0 (Mesa: IMM:D; the value bits hold JIP).
        src0_file: RegFile,
        src0_ty: Type,
        /// Jump target, signed byte offset from this instruction (bits 127:96).
        jip: i32,
        /// Bits 95:64. For [`Opcode::has_uip`] opcodes the UIP offset; for ENDIF/WHILE/BRD
        /// not an offset: Mesa leaves src1's file/type there (`0x0800_0000` = ARF:D). Kept
        /// verbatim so the round trip stays bit-exact.
        uip: i32,
    },
}

impl Operands {
    /// A NOP's operands: every field zero (what Mesa writes, and the plain NOP's listing).
    pub fn nop() -> Operands {
        Operands::Basic {
            cond_mod: CondMod::None,
            math_fn: None,
            dst: Dst::zero(),
            src0: Src::zero(),
            src1: Src::zero(),
        }
    }

    /// A branch's operands in Mesa's conventions: ENDIF's destination field all zero, CONT's
    /// `ip:UD`, the others' `null:D`; src0 an immediate `D` whose value bits hold `jip`.
    pub fn branch(op: Opcode, jip: i32, uip: i32) -> Operands {
        let dst = match op {
            Opcode::Endif => Dst::zero(),
            Opcode::Cont => Dst::new(Addr::arf(ArfReg::IP, 0), Type::UD),
            _ => Dst::null(Type::D),
        };
        Operands::Branch {
            dst,
            src0_file: RegFile::Imm,
            src0_ty: Type::D,
            jip,
            uip,
        }
    }
}

/// One EU instruction. Header fields are F1.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instruction {
    pub opcode: Opcode,
    /// Bit 8.
    pub access_mode: AccessMode,
    /// Bits 23:21.
    pub exec_size: ExecSize,
    /// Bits 13:11.
    pub group: ChannelGroup,
    /// Bit 34: `WE_all` (ignore the execution mask; predication still applies).
    pub we_all: bool,
    /// Bits 10:9.
    pub dep_ctrl: DepCtrl,
    /// Bits 15:14.
    pub thread_ctrl: ThreadCtrl,
    /// Bits 19:16 and 20.
    pub predicate: Option<Predicate>,
    /// Bits 33:32: used by the predicate and by the conditional modifier.
    pub flag: FlagReg,
    /// Bit 31.
    pub saturate: bool,
    /// Bit 28 on non-branch opcodes: AccWrEnable.
    pub acc_wr_en: bool,
    /// Bit 28 on [`Opcode::has_branch_ctrl`] opcodes: BranchCtrl.
    pub branch_ctrl: bool,
    /// Bit 30: breakpoint.
    pub debug: bool,
    pub operands: Operands,
}

impl Instruction {
    /// An instruction with default header fields (Align1, no predicate, f0.0, group 0).
    pub fn new(opcode: Opcode, exec_size: ExecSize, operands: Operands) -> Instruction {
        let access_mode = match operands {
            Operands::ThreeSrc { .. } => AccessMode::Align16,
            _ => AccessMode::Align1,
        };
        Instruction {
            opcode,
            access_mode,
            exec_size,
            group: ChannelGroup::default(),
            we_all: false,
            dep_ctrl: DepCtrl::default(),
            thread_ctrl: ThreadCtrl::Normal,
            predicate: None,
            flag: FlagReg::default(),
            saturate: false,
            acc_wr_en: false,
            branch_ctrl: false,
            debug: false,
            operands,
        }
    }

    /// A 2-source ALU instruction.
    pub fn alu2(
        opcode: Opcode,
        exec_size: ExecSize,
        dst: Dst,
        src0: Src,
        src1: Src,
    ) -> Instruction {
        Instruction::new(
            opcode,
            exec_size,
            Operands::Basic {
                cond_mod: CondMod::None,
                math_fn: None,
                dst,
                src0,
                src1,
            },
        )
    }

    /// A 1-source ALU instruction with Mesa's src1 convention (F1.10).
    pub fn alu1(opcode: Opcode, exec_size: ExecSize, dst: Dst, src0: Src) -> Instruction {
        let src1 = match src0 {
            Src::Imm(i) if !i.ty.is_64bit() => Src::unused_for_imm(i.ty),
            _ => Src::zero(),
        };
        Instruction::alu2(opcode, exec_size, dst, src0, src1)
    }

    /// SEND/SENDC's full extended descriptor as the hardware sees it (F1.6).
    pub fn send_ex_desc(&self) -> Option<u32> {
        match &self.operands {
            Operands::Send {
                sfid,
                eot,
                src0,
                ex_desc_31_28,
                ..
            } => {
                let sub = match src0.addr {
                    Addr::Direct { subnr, .. } => subnr as u32 & 0xF,
                    Addr::Indirect { .. } => 0,
                };
                let v = Region::vstride_hw(src0.region.vstride).unwrap_or(0);
                let w = Region::width_hw(src0.region.width).unwrap_or(0);
                let h = Region::hstride_hw(src0.region.hstride).unwrap_or(0);
                Some(
                    ((*ex_desc_31_28 as u32 & 0xF) << 28)
                        | (v << 24)
                        | (((w << 2) | h) << 20)
                        | (sub << 16)
                        | ((*eot as u32) << 5)
                        | *sfid as u32,
                )
            }
            Operands::SplitSend {
                sfid,
                eot,
                ex_desc: ExDesc::Imm(x),
                ..
            } => Some(x | ((*eot as u32) << 5) | *sfid as u32),
            _ => None,
        }
    }

    /// Conditional modifier of ALU forms (`None` elsewhere).
    pub fn cond_mod(&self) -> CondMod {
        match self.operands {
            Operands::Basic { cond_mod, .. } | Operands::ThreeSrc { cond_mod, .. } => cond_mod,
            _ => CondMod::None,
        }
    }

    /// JIP/UIP of a branch, as signed byte offsets (UIP only if the opcode has one).
    pub fn branch_offsets(&self) -> Option<(i32, Option<i32>)> {
        match self.operands {
            Operands::Branch { jip, uip, .. } => Some((jip, self.opcode.has_uip().then_some(uip))),
            _ => None,
        }
    }
}

impl fmt::Display for Instruction {
    /// Mesa's assembly syntax (see [`crate::disasm`]).
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&crate::disasm::format_instruction(self, None, false))
    }
}
