//! The back end's low-level IR ("LIR"): EU instructions over virtual registers, with
//! logical instructions for messages and structured control flow, and the [`Builder`]
//! through which all of it is emitted.
//!
//! A virtual register is a byte array whose size is type size x stride x width; an
//! operand names a register, a byte offset in it, a type and a stride (0 = scalar region),
//! and a source may read rows of channels instead ([`Rows`], a two-dimensional region).
//! Every instruction carries its exec size, first channel and `WE_all` explicitly.

use ferrite_isa::sampler_msg::SamplerMsgType;
use ferrite_isa::{ArfKind, ArfReg, CondMod, MathFunction, Opcode, Sfid, Type};
use std::fmt;

/// Where an operand lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// Virtual register (index into [`Program::vregs`]).
    V(u32),
    /// Fixed GRF (payload registers g0.., the EOT copy).
    G(u8),
    Null,
    /// Immediate bits (32-bit types use the low 32).
    Imm(u64),
    /// An architecture register (docs/gen9.md 2.10): `ce0` read as a source, the flag
    /// register `f0` (see [`Opnd::flag`]) written by a `mov` and read as a source. Not
    /// allocated; the ISA validator says how each may be used.
    Arf(ArfReg),
}

/// The rows of a two-dimensional source region `<vstride; width, stride>` (docs/gen9.md
/// 2.8): channel i reads the element (i / width) x vstride + (i % width) x stride, so
/// `<c; c, 0>` gives each row of c channels one element (brw's read of a cluster's
/// result). Sources only; the destination's region is its stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rows {
    /// Elements from the start of one row to the next.
    pub vstride: u8,
    /// Channels per row (a power of two up to 16).
    pub width: u8,
}

/// An operand: base, byte offset, type, stride in elements (0 = scalar <0,1,0>), modifiers.
/// With `rows` the stride is the horizontal stride inside a row; without, the region is
/// one-dimensional.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Opnd {
    pub base: Base,
    pub off: u32,
    pub ty: Type,
    pub stride: u8,
    pub rows: Option<Rows>,
    pub neg: bool,
    pub abs: bool,
}

impl Opnd {
    /// An operand of `base` at byte offset `off` with a one-dimensional region of `stride`
    /// (0: a scalar), no rows and no source modifiers: what every constructor below builds.
    fn plain(base: Base, off: u32, ty: Type, stride: u8) -> Opnd {
        Opnd {
            base,
            off,
            ty,
            stride,
            rows: None,
            neg: false,
            abs: false,
        }
    }
    pub fn v(id: u32, ty: Type) -> Opnd {
        Opnd::plain(Base::V(id), 0, ty, 1)
    }
    pub fn g(nr: u8, sub_bytes: u32, ty: Type, stride: u8) -> Opnd {
        Opnd::plain(Base::G(nr), sub_bytes, ty, stride)
    }
    pub fn null(ty: Type) -> Opnd {
        Opnd::plain(Base::Null, 0, ty, 1)
    }
    pub fn imm(ty: Type, bits: u64) -> Opnd {
        Opnd::plain(Base::Imm(bits), 0, ty, 0)
    }
    /// The channel-enable register `ce0` (`mask0`) as a UD scalar source (docs/gen9.md
    /// 2.10.1): read it only at exec size 1 with `WE_all` in channel group 0.
    pub fn ce0() -> Opnd {
        Opnd::plain(
            Base::Arf(ArfReg::new(ArfKind::ChannelEnable, 0)),
            0,
            Type::UD,
            0,
        )
    }
    /// The flag register `f0` as a scalar operand: as UD its 32 bits (one per channel, SIMD32
    /// included; a SIMD16 instruction of channel group 16 uses bits 16-31), as UW `f0.0`.
    /// A `mov` to it (exec size 1, `WE_all`) sets every bit; an instruction with a
    /// conditional modifier then writes only its enabled channels' bits (docs/gen9.md).
    pub fn flag(ty: Type) -> Opnd {
        Opnd::plain(Base::Arf(ArfReg::new(ArfKind::Flag, 0)), 0, ty, 0)
    }
    /// Whether the operand is (part of) a flag register.
    pub fn is_flag(&self) -> bool {
        matches!(self.base, Base::Arf(a) if a.kind == ArfKind::Flag)
    }
    pub fn ud(v: u32) -> Opnd {
        Opnd::imm(Type::UD, v as u64)
    }
    pub fn d(v: i32) -> Opnd {
        Opnd::imm(Type::D, v as u32 as u64)
    }
    pub fn is_imm(&self) -> bool {
        matches!(self.base, Base::Imm(_))
    }
    pub fn vreg(&self) -> Option<u32> {
        match self.base {
            Base::V(v) => Some(v),
            _ => None,
        }
    }
    pub fn retype(mut self, ty: Type) -> Opnd {
        self.ty = ty;
        self
    }
    pub fn offset(mut self, bytes: u32) -> Opnd {
        self.off += bytes;
        self
    }
    pub fn scalar(mut self) -> Opnd {
        self.stride = 0;
        self.rows = None;
        self
    }
    /// The two-dimensional region `<vstride; width, stride>` of this operand's elements
    /// (the stride is kept as the horizontal stride).
    pub fn with_rows(mut self, vstride: u8, width: u8) -> Opnd {
        self.rows = Some(Rows { vstride, width });
        self
    }
    /// Whether every channel reads the one element at `off` (`<0;1,0>`).
    pub fn is_scalar(&self) -> bool {
        self.stride == 0 && self.rows.is_none()
    }
    /// The byte distance of channel `lane`'s element from `off`.
    pub fn elem_offset(&self, lane: u32) -> u32 {
        let size = self.ty.size();
        match self.rows {
            _ if self.is_imm() || self.base == Base::Null => 0,
            None => lane * self.stride as u32 * size,
            Some(r) => {
                let w = u32::from(r.width);
                ((lane / w) * u32::from(r.vstride) + (lane % w) * self.stride as u32) * size
            }
        }
    }
    /// Bytes of the register the operand's channels read per channel, at most (what limits
    /// an instruction's width to two GRFs an operand).
    pub fn bytes_per_lane(&self) -> u32 {
        let size = self.ty.size();
        let along = self.stride as u32 * size;
        match self.rows {
            None => along,
            Some(r) => along.max((u32::from(r.vstride) * size).div_ceil(u32::from(r.width))),
        }
    }
    /// The region at `exec` channels: rows as wide as the instruction (or wider) are one
    /// row, the one-dimensional region of the stride (docs/gen9.md 8.3: execution size >=
    /// width).
    pub fn at_exec(mut self, exec: u32) -> Opnd {
        if self.rows.is_some_and(|r| u32::from(r.width) >= exec) {
            self.rows = None;
        }
        self
    }
    pub fn negate(mut self) -> Opnd {
        self.neg = !self.neg;
        self
    }
    pub fn absolute(mut self) -> Opnd {
        self.abs = true;
        self.neg = false;
        self
    }
    /// Bytes the operand covers at `exec` channels.
    pub fn span(&self, exec: u32) -> u32 {
        let size = self.ty.size();
        match self.rows {
            None if self.stride == 0 => size,
            None => (exec - 1) * self.stride as u32 * size + size,
            // Rows start further along as they go, so the last row ends furthest.
            Some(r) => {
                let w = u32::from(r.width);
                let last = (exec.div_ceil(w) - 1) * u32::from(r.vstride)
                    + (exec.min(w) - 1) * self.stride as u32;
                last * size + size
            }
        }
    }
    /// The operand of channel `lane` (for splitting): keeps type, stride, modifiers. A
    /// two-dimensional region split inside a row (`lane` not a multiple of the width) is
    /// one-dimensional from there on: pieces are powers of two at a multiple of their size,
    /// so such a piece lies in that one row.
    pub fn lane_offset(&self, lane: u32) -> Opnd {
        if self.is_scalar() || self.is_imm() || self.base == Base::Null {
            return *self;
        }
        let mut o = self.offset(self.elem_offset(lane));
        if o.rows
            .is_some_and(|r| !lane.is_multiple_of(u32::from(r.width)))
        {
            o.rows = None;
        }
        o
    }
}

impl fmt::Display for Opnd {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.neg {
            write!(f, "-")?;
        }
        if self.abs {
            write!(f, "(abs)")?;
        }
        match self.base {
            Base::V(v) => write!(f, "v{v}+{}", self.off)?,
            Base::G(g) => write!(f, "g{g}+{}", self.off)?,
            Base::Null => write!(f, "null")?,
            Base::Arf(a) => write!(f, "{a}+{}", self.off)?,
            Base::Imm(b) => return write!(f, "0x{b:x}:{}", self.ty),
        }
        match self.rows {
            Some(r) => write!(f, "<{};{},{}>:{}", r.vstride, r.width, self.stride, self.ty),
            None => write!(f, "<{}>:{}", self.stride, self.ty),
        }
    }
}

/// Memory spaces of logical data-port messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Surface {
    /// Binding-table index (0..=251), or 254 for shared local memory.
    Bti(u8),
    /// A binding-table index computed at run time: the instruction's last source, a scalar
    /// UD (the same in every channel). The lowered SEND takes its descriptor from `a0`.
    Indirect,
    /// Global memory through 64-bit addresses (the A64 messages, docs/gen9.md 4.1): the
    /// address source holds one UQ per lane instead of a UD offset.
    A64,
}

impl Surface {
    /// The binding-table index field of the descriptor (0 for an indirect surface, whose
    /// index is added at run time; 253, stateless non-coherent, for A64 messages).
    pub fn bti(self) -> u8 {
        match self {
            Surface::Bti(b) => b,
            Surface::Indirect => 0,
            Surface::A64 => crate::hw::GEN9.bti_scratch,
        }
    }

    /// The type of one lane's address: UQ for A64 messages, UD offsets otherwise.
    pub fn addr_type(self) -> Type {
        match self {
            Surface::A64 => Type::UQ,
            Surface::Bti(_) | Surface::Indirect => Type::UD,
        }
    }
}

impl Builder<'_> {
    /// The address `off` bytes past `addr` (a lane's address on `surf`): a UD add for
    /// surface offsets, a UQ add for 64-bit addresses.
    pub fn addr_add(&mut self, surf: Surface, addr: Opnd, off: u32) -> Opnd {
        let ty = surf.addr_type();
        if off == 0 {
            return addr.retype(ty);
        }
        let a = self.vreg(ty, 1);
        // A 64-bit immediate is legal only as a MOV source; legalization moves it into a
        // register, which is still right for the add.
        let k = if ty == Type::UQ {
            Opnd::imm(Type::UQ, u64::from(off))
        } else {
            Opnd::ud(off)
        };
        self.alu2(Opcode::Add, a, addr.retype(ty), k);
        a
    }
}

/// The channel each channel `c` of a [`LOp::Shuffle`] reads. In the lane-relative forms
/// srcs[1] holds `c * element size` per channel (UW, `WE_all`-written, so the addresses of
/// disabled channels are computed from their channel numbers, not from stale indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lanes {
    /// `srcs[1][c]` (a UD per channel) modulo the width.
    Index,
    /// `c ^ k`, with `k` below the width.
    Xor(u8),
    /// `c + k` (`k` negative for a shuffle up); past either end of the subgroup the channel
    /// read is unspecified (a channel of the value modulo the width, or another register).
    Add(i8),
    /// Element `min(srcs[1][c], count - 1)` of a table in registers at srcs[0] whose
    /// elements are `1 << shift` bytes apart. With `own` every element is a row of one
    /// element per channel and channel `c` reads its own (srcs[2] holds `c * element size`,
    /// UW, `WE_all`-written): a private array in registers (`isel::private`). Without, every
    /// channel reads from the one table: push constants at run-time offsets. The index is
    /// read as its low word and clamped, so that a disabled channel's stale index (or an
    /// index past the table, undefined in SPIR-V) still addresses an element of the table.
    Table { count: u8, shift: u8, own: bool },
}

/// Operations. `Logical*` ones are lowered to payload + SEND by `lower::lower_sends`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LOp {
    Alu(Opcode),
    Math(MathFunction),
    /// srcs: [address]; dst: first component; `comp_stride` bytes between components.
    UntypedRead {
        surf: Surface,
        comps: u8,
        comp_stride: u32,
    },
    /// srcs: [address, data]; data components `comp_stride` bytes apart.
    UntypedWrite {
        surf: Surface,
        comps: u8,
        comp_stride: u32,
    },
    /// srcs: [address, data0, (data1)]; `hw_op` per docs/gen9.md 4.2; dst null = no return.
    /// `qword`: 64-bit data and result (A64 only), one UQ per lane.
    UntypedAtomic {
        surf: Surface,
        hw_op: u8,
        ndata: u8,
        qword: bool,
    },
    /// Typed surface read (data cache 1, SIMD8): srcs: [coordinates, `coords` blocks
    /// `comp_stride` bytes apart]; dst: the first `comps` channels (1-4: R, RG, RGB, RGBA),
    /// `comp_stride` bytes apart.
    TypedRead {
        surf: Surface,
        coords: u8,
        comp_stride: u32,
        comps: u8,
    },
    /// Typed surface write: srcs: [coordinates, data (the first `comps` channels)], blocks
    /// `comp_stride` bytes apart. Channels past `comps` are not written.
    TypedWrite {
        surf: Surface,
        coords: u8,
        comp_stride: u32,
        comps: u8,
    },
    /// Typed atomic: srcs: [coordinates, data0, (data1)]; `hw_op` per docs/gen9.md 4.2;
    /// dst null = no return.
    TypedAtomic {
        surf: Surface,
        coords: u8,
        comp_stride: u32,
        hw_op: u8,
        ndata: u8,
    },
    /// Sampler message (shared function 2, SIMD8 or SIMD16): srcs: [the `params`
    /// parameters of `msg` in `payload_params` order, blocks `comp_stride` bytes apart];
    /// dst: R, G, B, A, `comp_stride` bytes apart. `header`: the message needs a header,
    /// a copy of R0 with this dword 2 (`SamplerHeader`). A sampler index above 15 always
    /// gets a header (its dword 3 points at the sampler's block of 16 states). `indirect`:
    /// `bti` and `sampler` are replaced at run time by the last source, a scalar UD
    /// selector (binding-table index | sampler index << 8); `sampler` is then the highest
    /// sampler index the selector can hold (a header when it is 16 or more).
    Sample {
        bti: u8,
        sampler: u8,
        msg: SamplerMsgType,
        params: u8,
        comp_stride: u32,
        header: Option<u32>,
        indirect: bool,
    },
    /// Byte scattered read of `1 << size_log2` bytes per lane (data cache 0): srcs:
    /// [address]; dst: one dword per lane, the bytes zero-extended.
    ByteScatteredRead {
        surf: Surface,
        size_log2: u8,
    },
    /// Byte scattered write: srcs: [address, data (one dword per lane, low bytes used)].
    ByteScatteredWrite {
        surf: Surface,
        size_log2: u8,
    },
    /// Memory fence (DC0, commit); dst receives the commit.
    Fence,
    /// Workgroup barrier (gateway message + wait).
    Barrier,
    /// End of thread.
    Eot,
    /// Scratch fill: dst (whole GRFs) from scratch byte offset `offset`.
    ScratchRead {
        offset: u32,
        regs: u8,
    },
    /// Scratch spill: srcs[0] (whole GRFs) to scratch at `offset`.
    ScratchWrite {
        offset: u32,
        regs: u8,
    },
    /// A lowered message: srcs[0] payload (mlen GRFs), srcs[1] optional split payload.
    /// `indirect`: the last source is a scalar UD added to `desc` in `a0.0` at run time
    /// (a binding-table index), and the SEND reads its descriptor from there.
    Send {
        sfid: Sfid,
        indirect: bool,
        desc: u32,
        ex_desc: u32,
        mlen: u8,
        ex_mlen: u8,
        rlen: u8,
        eot: bool,
    },
    /// `wait n0` after a barrier message.
    Wait,
    /// Register-indirect gather across channels (brw's `SHUFFLE`): channel `c` of `dst`
    /// receives the element of srcs[0] in the channel `lanes` names (with [`Lanes::Index`]
    /// `srcs[1][c] & (width - 1)`). srcs[0] is the whole per-channel value (stride 1, dword
    /// or qword elements), srcs[1] a UD index per channel or, for the lane-relative forms,
    /// the channels' byte offsets; the instruction is never split. Emitted as `a0` address
    /// computations and one VxH indirect `mov` per 16 channels (8 for qwords), see
    /// `emit::shuffle`. With a scalar index (brw's `BROADCAST`, stride 0) every channel
    /// receives the one element `srcs[1]`, which must then be below `width` (it is not
    /// reduced): one `a0` address and a scalar indirect `mov` per 16 channels.
    Shuffle {
        /// The subgroup width: indices are taken modulo it.
        width: u8,
        lanes: Lanes,
    },
    /// Loop start marker (emits nothing).
    Do,
    If,
    Else,
    Endif,
    While,
    Break,
    Cont,
}

/// How the passes after instruction selection treat an op: stated for every op in one
/// exhaustive match ([`LOp::class`]), so that a new op is classified once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    /// Register work: ALU, math, shuffles.
    Compute,
    /// Structured control flow.
    Control,
    /// A message to a shared function, or the wait after a barrier message.
    Message(MsgClass),
}

/// What the passes need to know of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgClass {
    /// A logical message, lowered to a SEND later (not a lowered SEND, not a wait).
    pub logical: bool,
    /// The surface of a logical data-port message.
    pub surface: Option<Surface>,
    /// The message only reads memory: such messages may be reordered among themselves
    /// (neither sees the other's effect).
    pub pure_read: bool,
}

impl LOp {
    /// The op's class. Logical messages are classified by kind; lowered SENDs by shared
    /// function and message type (bits 18:14 of the descriptor).
    pub fn class(&self) -> OpClass {
        let logical = |surface, pure_read| {
            OpClass::Message(MsgClass {
                logical: true,
                surface,
                pure_read,
            })
        };
        match *self {
            LOp::Alu(_) | LOp::Math(_) | LOp::Shuffle { .. } => OpClass::Compute,
            LOp::Do | LOp::If | LOp::Else | LOp::Endif | LOp::While | LOp::Break | LOp::Cont => {
                OpClass::Control
            }
            LOp::UntypedRead { surf, .. }
            | LOp::TypedRead { surf, .. }
            | LOp::ByteScatteredRead { surf, .. } => logical(Some(surf), true),
            LOp::UntypedWrite { surf, .. }
            | LOp::UntypedAtomic { surf, .. }
            | LOp::ByteScatteredWrite { surf, .. }
            | LOp::TypedWrite { surf, .. }
            | LOp::TypedAtomic { surf, .. } => logical(Some(surf), false),
            // Sampler messages name a fixed binding-table index (no descriptor indexing yet).
            LOp::Sample { .. } | LOp::ScratchRead { .. } => logical(None, true),
            LOp::Fence | LOp::Barrier | LOp::Eot | LOp::ScratchWrite { .. } => logical(None, false),
            LOp::Send {
                sfid,
                desc,
                rlen,
                eot,
                ..
            } => {
                let ty = (desc >> 14) & 0x1F;
                let pure_read = rlen > 0
                    && !eot
                    && match sfid {
                        Sfid::Sampler | Sfid::DpSampler | Sfid::DpConst => true,
                        // OWord block, unaligned and dual block, dword and byte scattered,
                        // untyped surface read.
                        Sfid::DpDc0 => ty <= 0x05,
                        // Untyped surface read, media block read, typed surface read, A64
                        // scattered, untyped surface and block read.
                        Sfid::DpDc1 => matches!(ty, 0x01 | 0x04 | 0x05 | 0x10 | 0x11 | 0x14),
                        Sfid::Null
                        | Sfid::Gateway
                        | Sfid::DpRender
                        | Sfid::Urb
                        | Sfid::ThreadSpawner
                        | Sfid::Vme
                        | Sfid::PixelInterp
                        | Sfid::Cre => false,
                    };
                OpClass::Message(MsgClass {
                    logical: false,
                    surface: None,
                    pure_read,
                })
            }
            LOp::Wait => OpClass::Message(MsgClass {
                logical: false,
                surface: None,
                pure_read: false,
            }),
        }
    }
    pub fn is_control(&self) -> bool {
        self.class() == OpClass::Control
    }
    /// ALU and math instructions address each operand as a region: they touch exactly the
    /// bytes it covers. Messages, gathers and control take their registers whole.
    pub fn has_regioned_operands(&self) -> bool {
        matches!(self, LOp::Alu(_) | LOp::Math(_))
    }
    pub fn is_message(&self) -> bool {
        matches!(self.class(), OpClass::Message(_))
    }
    pub fn is_logical(&self) -> bool {
        matches!(self.class(), OpClass::Message(m) if m.logical)
    }
    /// The surface of a logical data-port message.
    pub fn surface(&self) -> Option<Surface> {
        match self.class() {
            OpClass::Message(m) => m.surface,
            OpClass::Compute | OpClass::Control => None,
        }
    }
    /// Whether a message only reads memory (see [`MsgClass::pure_read`]).
    pub fn is_pure_read(&self) -> bool {
        matches!(self.class(), OpClass::Message(m) if m.pure_read)
    }
}

/// Predication on a flag sub-register (f0.0 unless stated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pred {
    pub flag_sub: u8,
    pub inverse: bool,
}

/// One LIR instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct LInst {
    pub op: LOp,
    /// Exec size (channels), explicit: never inferred from a register.
    pub exec: u8,
    /// First channel of the instruction's channel group (0, 8, 16, 24).
    pub group: u8,
    pub we_all: bool,
    pub pred: Option<Pred>,
    pub cmod: CondMod,
    /// Flag sub-register written by `cmod` / read by `pred` (f0.x).
    pub flag_sub: u8,
    pub sat: bool,
    pub dst: Opnd,
    pub srcs: Vec<Opnd>,
}

impl LInst {
    /// For a SEND, the GRFs source `k` spans: `mlen` for the payload, `ex_mlen` for the
    /// split payload; for the table a [`Lanes::Table`] gather reads, all of it. None for
    /// the run-time index of an indirect SEND (a scalar) and for the sources of other
    /// instructions (their regions say what they read).
    pub fn message_src_regs(&self, k: usize) -> Option<u32> {
        match self.op {
            LOp::Shuffle {
                lanes: Lanes::Table { count, shift, .. },
                ..
            } if k == 0 => {
                let end = self.srcs[0].off % 32 + (u32::from(count) << shift);
                Some(end.div_ceil(32))
            }
            LOp::Send {
                mlen,
                ex_mlen,
                indirect,
                ..
            } => {
                if indirect && k + 1 == self.srcs.len() {
                    None
                } else if k == 0 {
                    Some(u32::from(mlen))
                } else {
                    Some(u32::from(ex_mlen))
                }
            }
            _ => None,
        }
    }
    /// A conditional modifier, or the flag register as the destination.
    pub fn writes_flag(&self) -> bool {
        self.cmod != CondMod::None || self.dst.is_flag()
    }
    /// A predicate, or the flag register as a source.
    pub fn reads_flag(&self) -> bool {
        self.pred.is_some() || self.srcs.iter().any(Opnd::is_flag)
    }
}

impl fmt::Display for LInst {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if let Some(p) = self.pred {
            write!(
                f,
                "({}f0.{}) ",
                if p.inverse { "-" } else { "+" },
                p.flag_sub
            )?;
        }
        match self.op {
            LOp::Alu(o) => write!(f, "{}", o.name())?,
            LOp::Math(m) => write!(f, "math.{}", m.name())?,
            op => write!(f, "{op:?}")?,
        }
        if self.cmod != CondMod::None {
            write!(f, "{}.f0.{}", self.cmod.suffix(), self.flag_sub)?;
        }
        if self.sat {
            write!(f, ".sat")?;
        }
        write!(f, "({}@{})", self.exec, self.group)?;
        if self.we_all {
            write!(f, " WE_all")?;
        }
        write!(f, " {}", self.dst)?;
        for s in &self.srcs {
            write!(f, ", {s}")?;
        }
        Ok(())
    }
}

/// A virtual register: size in bytes (a whole number of GRFs when allocated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VRegInfo {
    pub bytes: u32,
}

impl VRegInfo {
    pub fn regs(&self) -> u32 {
        self.bytes.div_ceil(32).max(1)
    }
}

/// A whole kernel in LIR: linear instructions with structured control markers.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub insts: Vec<LInst>,
    pub vregs: Vec<VRegInfo>,
}

impl Program {
    pub fn new_vreg(&mut self, bytes: u32) -> u32 {
        self.vregs.push(VRegInfo { bytes });
        self.vregs.len() as u32 - 1
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let mut depth = 0usize;
        for (k, i) in self.insts.iter().enumerate() {
            if matches!(i.op, LOp::Else | LOp::Endif | LOp::While) {
                depth = depth.saturating_sub(1);
            }
            writeln!(f, "{k:4}: {}{i}", "  ".repeat(depth))?;
            if matches!(i.op, LOp::Do | LOp::If | LOp::Else) {
                depth += 1;
            }
        }
        Ok(())
    }
}

/// The one way EU code is emitted: knows the exec size, channel group and `WE_all` of
/// what it emits, and allocates virtual registers sized type size x stride x width.
pub struct Builder<'p> {
    pub prog: &'p mut Program,
    pub exec: u8,
    pub group: u8,
    pub we_all: bool,
    /// Instructions are inserted here (None = append).
    pub cursor: Option<usize>,
}

impl<'p> Builder<'p> {
    pub fn new(prog: &'p mut Program, exec: u8) -> Builder<'p> {
        Builder {
            prog,
            exec,
            group: 0,
            we_all: false,
            cursor: None,
        }
    }

    /// A builder for `exec` channels starting at `group`, optionally ignoring the mask.
    pub fn at(&mut self, exec: u8, group: u8, we_all: bool) -> Builder<'_> {
        Builder {
            prog: self.prog,
            exec,
            group,
            we_all,
            cursor: self.cursor,
        }
    }

    /// `o` copied into a register of its own at this builder's width and read back with
    /// `o`'s negate and absolute-value modifiers (the copy moves the plain value): for a
    /// source the instruction cannot take as it is (an immediate, a region).
    pub fn copy_to_reg(&mut self, o: Opnd) -> Opnd {
        let t = self.vreg(o.ty, 1);
        self.mov(
            t,
            Opnd {
                neg: false,
                abs: false,
                ..o
            },
        );
        Opnd {
            neg: o.neg,
            abs: o.abs,
            ..t
        }
    }

    /// `o` moved once (exec size 1, `WE_all`) into a register of its own and read as a
    /// scalar region, with `o`'s modifiers: a 64-bit immediate is encodable only as a MOV's
    /// source (docs/gen9.md 1.4), and a full-width move would take one instruction per
    /// SIMD8 piece of a 64-bit value.
    pub fn scalar_copy(&mut self, o: Opnd) -> Opnd {
        self.at(1, 0, true).copy_to_reg(o).scalar()
    }

    /// A virtual register holding `comps` components of `ty` at this exec size, stride 1.
    pub fn vreg(&mut self, ty: Type, comps: u32) -> Opnd {
        let bytes = (ty.size() * self.exec as u32 * comps).next_multiple_of(32);
        let id = self.prog.new_vreg(bytes);
        Opnd::v(id, ty)
    }

    pub fn push(&mut self, inst: LInst) -> usize {
        match &mut self.cursor {
            Some(c) => {
                let at = *c;
                self.prog.insts.insert(at, inst);
                *c += 1;
                at
            }
            None => {
                self.prog.insts.push(inst);
                self.prog.insts.len() - 1
            }
        }
    }

    pub fn inst(&mut self, op: LOp, dst: Opnd, srcs: Vec<Opnd>) -> &mut LInst {
        let i = LInst {
            op,
            exec: self.exec,
            group: self.group,
            we_all: self.we_all,
            pred: None,
            cmod: CondMod::None,
            flag_sub: 0,
            sat: false,
            dst,
            srcs,
        };
        let at = self.push(i);
        &mut self.prog.insts[at]
    }

    pub fn alu1(&mut self, op: Opcode, dst: Opnd, a: Opnd) -> &mut LInst {
        self.inst(LOp::Alu(op), dst, vec![a])
    }
    pub fn alu2(&mut self, op: Opcode, dst: Opnd, a: Opnd, b: Opnd) -> &mut LInst {
        self.inst(LOp::Alu(op), dst, vec![a, b])
    }
    pub fn mov(&mut self, dst: Opnd, a: Opnd) -> &mut LInst {
        self.alu1(Opcode::Mov, dst, a)
    }
    pub fn cmp(&mut self, cmod: CondMod, dst: Opnd, a: Opnd, b: Opnd) -> &mut LInst {
        let i = self.alu2(Opcode::Cmp, dst, a, b);
        i.cmod = cmod;
        i
    }
    pub fn math(&mut self, f: MathFunction, dst: Opnd, srcs: Vec<Opnd>) -> &mut LInst {
        self.inst(LOp::Math(f), dst, srcs)
    }
    /// Sets f0.0 from `cond != 0` (a 32-bit or a 16-bit boolean).
    pub fn flag_from(&mut self, cond: Opnd) {
        // A 16-bit boolean (a W in a dword slot) is tested as a word.
        let ty = if cond.ty.size() == 2 {
            Type::W
        } else {
            Type::D
        };
        let i = self.mov(Opnd::null(ty), cond.retype(ty));
        i.cmod = CondMod::Nz;
    }
    pub fn control(&mut self, op: LOp) -> &mut LInst {
        self.inst(op, Opnd::null(Type::D), vec![])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `<4;4,0>` from element 3 of a dword register: each row of four channels reads the
    /// last element of its block of four, in the LIR text and in what it covers.
    #[test]
    fn rows_region_reads_one_element_per_row() {
        let o = Opnd::v(5, Type::UD).offset(12).scalar().with_rows(4, 4);
        assert_eq!(o.to_string(), "v5+12<4;4,0>:UD");
        let lanes: Vec<u32> = (0..16).map(|l| (o.off + o.elem_offset(l)) / 4).collect();
        assert_eq!(
            lanes,
            [3, 3, 3, 3, 7, 7, 7, 7, 11, 11, 11, 11, 15, 15, 15, 15]
        );
        // From element 3 to the end of element 15.
        assert_eq!(o.span(16), 52);
        assert_eq!(o.span(8), 20);
        assert_eq!(o.bytes_per_lane(), 4);
        assert!(!o.is_scalar());
    }

    /// Splitting keeps the rows at a row boundary; a piece inside one row reads one
    /// element (the one-dimensional region of the horizontal stride, here a scalar), as
    /// does a region whose rows are as wide as the instruction.
    #[test]
    fn rows_region_splits_and_narrows() {
        let o = Opnd::v(1, Type::UQ).offset(8).scalar().with_rows(2, 2);
        assert_eq!(o.lane_offset(8).to_string(), "v1+72<2;2,0>:UQ");
        let w = Opnd::v(1, Type::UD).offset(60).scalar().with_rows(16, 16);
        assert_eq!(w.lane_offset(16).to_string(), "v1+124<16;16,0>:UD");
        assert_eq!(w.lane_offset(8).to_string(), "v1+60<0>:UD");
        assert!(w.at_exec(16).is_scalar());
        assert!(w.at_exec(8).is_scalar());
        assert_eq!(w.at_exec(32), w);
        // A row of two strided elements split after its first channel.
        let s = Opnd {
            stride: 2,
            ..Opnd::v(2, Type::UD).with_rows(8, 2)
        };
        assert_eq!(s.lane_offset(1).to_string(), "v2+8<2>:UD");
        assert_eq!(s.lane_offset(2).to_string(), "v2+32<8;2,2>:UD");
    }
}
