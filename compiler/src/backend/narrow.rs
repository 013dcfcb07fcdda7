//! 8- and 16-bit values in the back end.
//!
//! Representation: an 8/16-bit IR value occupies one dword slot per lane, exactly like a
//! 32-bit value (component c at `c x W x 4` bytes); its bits are the low byte / word of
//! the slot, and the bits above are unspecified. The operand names it with the narrow
//! hardware type (B/UB, W/UW, HF) and a stride of 4 / 2 elements, so every region the
//! back end emits for it keeps the PRM's rule that a destination narrower than the
//! execution type is strided to the execution type's size (docs/gen9.md 8.2: "byte
//! destinations need stride 2" is met with stride 4; conversions to HF write stride 2).
//!
//! The middle end (`passes::lower_narrow`) computes most 8/16-bit arithmetic in 32 bits;
//! what reaches the back end for these types is: the native 16-bit ops (`native16`, the
//! list in the target's `HwFacts::native16`: W/UW integer add/mul/min/max/logic/shifts/
//! compares, HF add/mul/min/max/compares, all with stride-2 operands, so the execution type
//! equals the destination type and no region rule needs more, and `i2b` of W), constants, loads and stores, moves/copies (vec, extract, phis), bitcasts
//! between equal sizes, `bcsel`, and the conversions between 8/16-bit and 32-bit types
//! (`i2i`, `u2u`, `f2f`). Truncation is a dword copy (the low bits are the result);
//! widening reads the narrow type through a strided region (`mov D <- W<16;8,2>`
//! sign-extends, `UD <- UW` zero-extends, `F <- HF<16;8,2>` converts), and F -> HF is
//! `mov HF<2> <- F`, rounding to nearest even.
//!
//! 16-bit booleans (of 8/16-bit compares, `passes::lower_bools`) are words 0 / 0xFFFF in
//! the same dword slots: `if`/`bcsel` test them as W (`Builder::flag_from`), logic ops are
//! UW ops, `b2b` to 32/64 bits sign-extends (`mov D <- W`), `b2b` to 16 bits keeps the low
//! word, `b2i`/`b2f` negate the sign-extended word into the destination type.
//!
//! Parts read in place: a value's slot is not the only region that holds it. Component k
//! of a packed 8/16-bit load is byte or word k of a loaded dword, and the truncation of a
//! 32-bit value shifted right by whole bytes (unpack8/unpack16) is a byte or word of that
//! value's dword; `Isel::narrow_parts` records such a region (`<32;8,4>:B` / `<16;8,2>:W`
//! from byte k, as brw reads them). Readers that take the narrow type at the slot stride
//! (widening conversions, the native 16-bit ops: [`Isel::reads_in_place`]) read it there,
//! so the shift that would move it into its own slot has no reader; readers of the whole
//! slot (copies, selects, stores, truncations) still read the slot. A 32-bit multiply of
//! two widened 8/16-bit integers reads both narrow values the same way ([`Isel::widened_mul`]).
//!
//! A packed representation (16 lanes of HF per register, stride 1) would halve the
//! registers and allow MAD in HF, but every load/store/phi/copy and conversion here assumes
//! dword slots; it is not done.
//!
//! Memory: 8/16-bit loads and stores are byte scattered messages (data cache 0, message
//! types 0x04 read / 0x0C write, docs/gen9.md 4.1), one dword per lane in the payload and in
//! the response, or untyped messages for vectors of whole dwords ([`packed`]); a store writes
//! only its own 1, 2 or 4 bytes, so neighbouring bytes written by other invocations are never
//! touched (no read-modify-write).

use super::isel::Isel;
use super::lir::*;
use super::BackendError;
use crate::ir::{self, AluOp, Kind};
use ferrite_isa::{CondMod, Opcode, Type};

type Res<T> = Result<T, BackendError>;

/// True for the IR types this module handles (8/16-bit integers and 16-bit floats).
pub fn is_narrow(t: ir::Type) -> bool {
    matches!(
        (t.kind, t.bits),
        (Kind::Int, 8 | 16) | (Kind::Float, 16) | (Kind::Bool, 16)
    )
}

/// The low word of a 32-bit operand (a shift count) as UW: same bytes, twice the stride.
fn low_word(o: Opnd) -> Opnd {
    match o.base {
        Base::Imm(bits) => Opnd::imm(Type::UW, bits & 0xFFFF),
        _ => {
            let mut w = o.retype(Type::UW);
            w.stride *= (o.ty.size() / 2) as u8;
            w
        }
    }
}

fn pred() -> Option<Pred> {
    Some(Pred {
        flag_sub: 0,
        inverse: false,
    })
}

/// The dword-slot view of a narrow operand (UD, stride 1; immediates as UD with their
/// bits), or the operand itself when it is 32-bit or wider.
pub fn slot(o: Opnd) -> Opnd {
    if o.ty.size() >= 4 {
        return o;
    }
    match o.base {
        Base::Imm(bits) => Opnd::imm(Type::UD, bits & mask(o.ty)),
        _ => {
            let mut s = o.retype(Type::UD);
            if s.stride != 0 {
                s.stride = 1;
            }
            s
        }
    }
}

fn mask(t: Type) -> u64 {
    match t.size() {
        1 => 0xFF,
        2 => 0xFFFF,
        _ => 0xFFFF_FFFF,
    }
}

/// Elements of `t` per dword slot: the stride of a narrow operand.
pub fn slot_stride(t: Type) -> u8 {
    (4 / t.size().clamp(1, 4)) as u8
}

/// How an 8/16-bit vector load or store is one message per lane instead of one per
/// component.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Packed {
    /// An untyped message of this many dwords (1 to 4): a vector of whole dwords at a
    /// dword-aligned offset.
    Untyped(u32),
    /// One byte scattered message of `1 << size_log2` bytes (2 or 4), the vector's bytes in
    /// the low bytes of each lane's payload dword.
    Scattered(u8),
}

/// The message of an 8/16-bit vector load or store of type `t` at an offset aligned to
/// `align` bytes, or None (a scalar, or a vector of another size: one byte scattered
/// message per component). A vector of whole dwords (4 to 16 bytes) at a dword-aligned
/// offset is an untyped message; a vector of 2 or 4 bytes at any other offset is one word
/// or dword byte scattered message. Such an access may cross a dword boundary; binding-table
/// surfaces are bounds-checked per dword (docs/gen9.md 6.3), so each byte is read or
/// written exactly when its own dword is inside the surface, as a byte access would be.
pub fn packed(t: ir::Type, align: u32) -> Option<Packed> {
    let total = t.comp_bytes() * t.comps as u32;
    if t.comps < 2 {
        return None;
    }
    if align >= 4 && total.is_multiple_of(4) && (1..=4).contains(&(total / 4)) {
        return Some(Packed::Untyped(total / 4));
    }
    match total {
        2 => Some(Packed::Scattered(1)),
        4 => Some(Packed::Scattered(2)),
        _ => None,
    }
}

/// The message of a packed 8/16-bit access ([`packed`]) at SIMD `w`: a read, or a `write`.
fn packed_message(surf: Surface, p: Packed, w: u32, write: bool) -> LOp {
    match (p, write) {
        (Packed::Scattered(size_log2), false) => LOp::ByteScatteredRead { surf, size_log2 },
        (Packed::Scattered(size_log2), true) => LOp::ByteScatteredWrite { surf, size_log2 },
        (Packed::Untyped(dwords), false) => LOp::UntypedRead {
            surf,
            comps: dwords as u8,
            comp_stride: 4 * w,
        },
        (Packed::Untyped(dwords), true) => LOp::UntypedWrite {
            surf,
            comps: dwords as u8,
            comp_stride: 4 * w,
        },
    }
}

/// The signed or unsigned view of an integer hardware type.
pub(in crate::backend) fn int_view(t: Type, signed: bool) -> Type {
    match (t.size(), signed) {
        (1, true) => Type::B,
        (1, false) => Type::UB,
        (2, true) => Type::W,
        (2, false) => Type::UW,
        (_, true) => Type::D,
        (_, false) => Type::UD,
    }
}

fn sext(bits: u64, size: u32) -> u64 {
    ir::sign_extend(bits, (size * 8) as u8) as u64
}

impl Isel<'_> {
    /// An ALU op with an 8/16-bit operand: the moves, copies and conversions listed in the
    /// module docs. Anything else means the middle end did not run `lower_narrow`.
    pub(super) fn narrow_alu(
        &mut self,
        op: AluOp,
        d: Opnd,
        s: &[Opnd],
        st: ir::Type,
        dt: ir::Type,
    ) -> Res<()> {
        use AluOp::*;
        if self.native16(op, d, s, st)? {
            return Ok(());
        }
        let mut b = self.b();
        let (ss, ds) = (st.bits as u32 / 8, dt.bits as u32 / 8);
        match op {
            // 16-bit booleans are 0 / 0xFFFF words: widening sign-extends (to a 32-bit or
            // 64-bit boolean, both dwords in the back end), narrowing keeps the low word.
            B2b if ss == 2 && ds > 2 => {
                b.mov(d.retype(Type::D), s[0].retype(Type::W));
            }
            B2b => {
                b.mov(slot(d).retype(Type::UD), slot(s[0]).retype(Type::UD));
            }
            B2i | B2f if ss == 2 => {
                // -(0 or -1), converted to the destination type.
                let ty = if op == B2f {
                    if ds == 2 {
                        Type::HF
                    } else {
                        Type::F
                    }
                } else if ds == 2 {
                    Type::W
                } else {
                    Type::D
                };
                b.mov(d.retype(ty), s[0].retype(Type::W).negate());
            }
            // Same size: the slot is the value.
            Mov | Bitcast if ss == ds && ss <= 4 => {
                b.mov(slot(d).retype(Type::UD), slot(s[0]).retype(Type::UD));
            }
            I2i | U2u if ss <= 4 && ds <= 4 => {
                let signed = op == I2i;
                if ds <= ss {
                    // Truncation (or same size): the low bits already are the result.
                    b.mov(slot(d).retype(Type::UD), slot(s[0]).retype(Type::UD));
                } else if let Base::Imm(bits) = s[0].base {
                    let v = bits & mask(s[0].ty);
                    let v = if signed { sext(v, ss) } else { v };
                    b.mov(
                        slot(d).retype(Type::UD),
                        Opnd::imm(Type::UD, v & 0xFFFF_FFFF),
                    );
                } else {
                    // Widening: read the narrow view; the dword result's low bits are the
                    // wider narrow value too.
                    let src = s[0].retype(int_view(s[0].ty, signed));
                    b.mov(slot(d).retype(int_view(Type::UD, signed)), src);
                }
            }
            F2f if (ss, ds) == (2, 4) => {
                if let Base::Imm(bits) = s[0].base {
                    let f = half::f16::from_bits(bits as u16).to_f32();
                    b.mov(d.retype(Type::F), Opnd::imm(Type::F, f.to_bits() as u64));
                } else {
                    b.mov(d.retype(Type::F), s[0].retype(Type::HF));
                }
            }
            F2f if (ss, ds) == (4, 2) => {
                let mut dst = d.retype(Type::HF);
                dst.stride = 2;
                let src = s[0].retype(Type::F);
                b.mov(dst, src);
            }
            F2f if (ss, ds) == (2, 2) => {
                b.mov(slot(d).retype(Type::UD), slot(s[0]).retype(Type::UD));
            }
            _ => {
                return Err(BackendError::Internal(format!(
                    "{} {st} -> {dt}: not a native 16-bit op of the target (HwFacts::native16) \
                     nor a conversion; lower_narrow computes such 8/16-bit arithmetic in 32 bits",
                    op.name()
                )))
            }
        }
        Ok(())
    }

    /// Whether `op` (sources of type `st`, result of type `dt`) reads its 8/16-bit sources
    /// through their narrow type at the slot stride rather than as dword slots: the
    /// widening conversions, 16-bit booleans read as words, and the native 16-bit ops. Such
    /// a source may be any region of that type and stride, e.g. byte or word k of a loaded
    /// dword (`narrow_parts`), which the bits above a slot's value being unspecified would
    /// not allow for a slot read.
    pub(super) fn reads_in_place(&self, op: AluOp, st: ir::Type, dt: ir::Type) -> bool {
        use AluOp::*;
        let (ss, ds) = (st.bits, dt.bits);
        if !is_narrow(st) {
            return false;
        }
        match op {
            I2i | U2u | F2f => ds > ss,
            B2b => ss == 16 && ds > 16,
            B2i | B2f => ss == 16,
            I2b => ss == 16,
            _ => self.hw.is_native16(op, st),
        }
    }

    /// Component `c` of a 32-bit `imul` of two widened 8/16-bit integers (`i2i`/`u2u`,
    /// `widened`) as one `mul` of the narrow values, read as B/UB/W/UW (sign- or
    /// zero-extended by the type, as the widening does) from their slots or from their
    /// place in a register (`narrow_parts`); the widening moves then have no reader. Byte
    /// and word sources execute as words (docs/gen9.md 8.1), and the multiplier's product
    /// of two words is exact in 32 bits (|x| <= 2^16 each), so it is the 32-bit product of
    /// the widened values; a D destination (UD when both are unsigned) keeps all 32 bits.
    /// Returns false (nothing emitted) when a source is not such a widening.
    pub(super) fn widened_mul(&mut self, d: Opnd, srcs: &[ir::Value], c: usize) -> Res<bool> {
        let mut s = Vec::new();
        for v in srcs {
            let Some(&(x, signed)) = self.widened.get(v) else {
                return Ok(false);
            };
            let k = if self.func.ty(x).comps == 1 { 0 } else { c };
            let o = match self.narrow_parts.get(&(x, k)) {
                Some(p) => *p,
                None => self.comp(x, k)?,
            };
            if o.is_imm() || o.rows.is_some() {
                return Ok(false);
            }
            s.push((o.retype(int_view(o.ty, signed)), signed));
        }
        let dt = if s.iter().any(|(_, signed)| *signed) {
            Type::D
        } else {
            Type::UD
        };
        self.b().alu2(Opcode::Mul, d.retype(dt), s[0].0, s[1].0);
        Ok(true)
    }

    /// A copy of component `from` into `to` (`vec`, `extract`, `insert`, `swizzle`) copies
    /// its place in a register too: readers that take it in place read the original.
    pub(super) fn copy_part(&mut self, from: (ir::Value, usize), to: (ir::Value, usize)) {
        if let Some(&p) = self.narrow_parts.get(&from) {
            self.narrow_parts.insert(to, p);
        }
    }

    /// `d`, the 32-bit `x` truncated to the 8/16-bit `dt`, is byte or word k of a register
    /// when `x` is one, or a shift of one by whole bytes that keeps the part inside its
    /// dword (`byte_shifts`, unpack8/unpack16's pieces): recorded in `narrow_parts` for
    /// the readers that take it in place, as a loaded component is (`narrow_load`).
    pub(super) fn truncated_part(&mut self, d: ir::Value, x: ir::Value, dt: ir::Type) -> Res<()> {
        let (x, k) = self.byte_shifts.get(&x).copied().unwrap_or((x, 0));
        let size = dt.bits as u32 / 8;
        if dt.comps != 1 || !k.is_multiple_of(size) || k + size > 4 {
            return Ok(());
        }
        let o = self.comp(x, 0)?;
        if o.is_imm() || o.rows.is_some() || o.ty.size() != 4 {
            return Ok(());
        }
        let t = super::isel::hw_ty(dt)?;
        let mut part = o.offset(k).retype(t);
        if part.stride != 0 {
            part.stride = slot_stride(t);
        }
        self.narrow_parts.insert((d, 0), part);
        Ok(())
    }

    /// The 16-bit operations computed natively (the target's `HwFacts::native16`, which
    /// `passes::lower_narrow` keeps 16-bit), and `i2b` of a 16-bit integer, on W/UW or HF
    /// in the dword-slot representation: every operand and the destination are stride 2
    /// (one dword per lane), the execution type is the 16-bit type, so the destination
    /// needs no further alignment (docs/gen9.md 8.2.6 does not apply); immediates are
    /// replicated words. Comparisons write 0 / 0xFFFF words: 16-bit booleans. Returns
    /// false for an op the facts do not list (`narrow_alu` handles the conversions and
    /// refuses the rest); a listed op without an emission here is an internal error.
    fn native16(&mut self, op: AluOp, d: Opnd, s: &[Opnd], st: ir::Type) -> Res<bool> {
        use AluOp::*;
        use Opcode as O;
        if st.bits != 16 {
            return Ok(false);
        }
        let float = st.kind == Kind::Float;
        if !(self.hw.is_native16(op, st) || op == I2b && !float) {
            return Ok(false);
        }
        let (w, uw, hf) = (Type::W, Type::UW, Type::HF);
        let mut b = self.b();
        let x = |k: usize, t: Type| s[k].retype(t);
        match op {
            Iadd | Isub | Imul | Fadd | Fsub | Fmul
                if matches!(op, Fadd | Fsub | Fmul) == float =>
            {
                super::isel::add_sub_mul(&mut b, op, d, s, if float { hf } else { w });
            }
            Ineg | Iabs | Fneg | Fabs if matches!(op, Fneg | Fabs) == float => {
                super::isel::neg_abs(&mut b, op, d, s, [w, hf]);
            }
            Imin | Imax | Umin | Umax | Fmin | Fmax if matches!(op, Fmin | Fmax) == float => {
                super::isel::min_max(&mut b, op, d, s, [w, uw, hf]);
            }
            Iand | Ior | Ixor | Inot => {
                super::isel::logic(&mut b, op, d, s, uw);
            }
            Ishl | Ishr | Ushr if !float => {
                // The count (32-bit, already reduced modulo 16) is read as its low word.
                let (o, t) = match op {
                    Ishl => (O::Shl, uw),
                    Ishr => (O::Asr, w),
                    _ => (O::Shr, uw),
                };
                b.alu2(o, d.retype(t), x(0, t), low_word(s[1]));
            }
            Ieq | Ine | Ilt | Ige | Ult | Uge | Feq | Fneu | Flt | Fle | Fgt | Fge
                if matches!(op, Feq | Fneu | Flt | Fle | Fgt | Fge) == float =>
            {
                let (t, cm) =
                    super::isel::compare(op, [w, uw, hf]).expect("a single-cmp comparison");
                b.cmp(cm, d.retype(t), x(0, t), x(1, t));
            }
            I2b if !float => {
                b.cmp(CondMod::Nz, d.retype(w), x(0, w), Opnd::imm(w, 0));
            }
            IsNan if float => {
                b.cmp(CondMod::Nz, d.retype(hf), x(0, hf), x(0, hf));
            }
            _ => {
                return Err(BackendError::Internal(format!(
                    "{} on {st} is a native 16-bit op of the target (HwFacts::native16) \
                     without an emission",
                    op.name()
                )))
            }
        }
        Ok(true)
    }

    /// `bcsel` of 8/16-bit values: a select of the dword slots.
    pub(super) fn narrow_bcsel(&mut self, d: Opnd, s: &[Opnd]) {
        let mut b = self.b();
        b.flag_from(s[0]);
        b.alu2(
            Opcode::Sel,
            slot(d).retype(Type::UD),
            slot(s[1]).retype(Type::UD),
            slot(s[2]).retype(Type::UD),
        )
        .pred = pred();
    }

    /// An 8/16-bit load from a buffer, shared or private memory. A vector whose bytes fill
    /// whole dwords at a dword-aligned offset (`i8vec4`, `f16vec2`, `i8x16`, ...) is one
    /// untyped read of those dwords, each component then shifted down into its slot (the
    /// bits above a slot's value are unspecified, see the module doc); a vector of 2 or 4
    /// bytes at another offset is one word or dword byte scattered read, split the same way
    /// ([`packed`]); anything else is one byte scattered read per component, each lane's
    /// bytes zero-extended into its dword slot. The packed forms also record each
    /// component's place in the loaded dwords (`narrow_parts`: byte or word k of the
    /// dword, a region `<32;8,4>:B` or `<16;8,2>:W` from byte k, as brw reads them):
    /// widening conversions and native 16-bit ops read that region directly
    /// ([`Isel::reads_in_place`]), and a shift nothing else reads is dead code.
    pub(super) fn narrow_load(
        &mut self,
        v: ir::Value,
        surf: Surface,
        addr: Opnd,
        dst: Opnd,
        t: ir::Type,
        align: u32,
    ) -> Res<()> {
        let w = self.w as u32;
        let bytes = t.comp_bytes();
        if let Some(p) = packed(t, align) {
            let dwords = match p {
                Packed::Untyped(n) => n,
                Packed::Scattered(_) => 1,
            };
            let mut b = self.b();
            let data = b.vreg(Type::UD, dwords);
            let op = packed_message(surf, p, w, false);
            b.inst(op, data, vec![addr.retype(surf.addr_type())]);
            let mut parts = Vec::new();
            for c in 0..t.comps as u32 {
                let byte = c * bytes;
                let src = data.offset(byte / 4 * 4 * w);
                let d = slot(dst).offset(c * 4 * w).retype(Type::UD);
                match byte % 4 {
                    0 => b.mov(d, src),
                    k => b.alu2(Opcode::Shr, d, src, Opnd::ud(8 * k)),
                };
                let mut part = src.offset(byte % 4).retype(dst.ty);
                part.stride = slot_stride(dst.ty);
                parts.push(((v, c as usize), part));
            }
            self.narrow_parts.extend(parts);
            return Ok(());
        }
        for c in 0..t.comps as u32 {
            let a = self.component_address(surf, addr, c * bytes);
            self.b().inst(
                LOp::ByteScatteredRead {
                    surf,
                    size_log2: bytes.trailing_zeros() as u8,
                },
                slot(dst).offset(c * 4 * w).retype(Type::UD),
                vec![a],
            );
        }
        Ok(())
    }

    /// An 8/16-bit store: a vector that fills whole dwords at a dword-aligned offset is
    /// packed into those dwords (a byte or word move per component into its place) and
    /// written with one untyped write, which writes exactly the vector's bytes; a vector of
    /// 2 or 4 bytes at another offset is packed into the low bytes of one dword and written
    /// with one word or dword byte scattered write ([`packed`]); anything else is one byte
    /// scattered write per component. Each writes only its own bytes, so neighbouring bytes
    /// written by other invocations are never touched.
    pub(super) fn narrow_store(
        &mut self,
        surf: Surface,
        addr: Opnd,
        comps: Vec<Opnd>,
        t: ir::Type,
        align: u32,
    ) -> Res<()> {
        let bytes = t.comp_bytes();
        if let Some(p) = packed(t, align) {
            let dwords = match p {
                Packed::Untyped(n) => n,
                Packed::Scattered(_) => 1,
            };
            let w = self.w as u32;
            let part = if bytes == 1 { Type::UB } else { Type::UW };
            let mut b = self.b();
            let data = b.vreg(Type::UD, dwords);
            for (c, o) in comps.into_iter().enumerate() {
                let byte = c as u32 * bytes;
                let mut d = data.offset(byte / 4 * 4 * w + byte % 4).retype(part);
                d.stride = slot_stride(part);
                let src = match o.base {
                    // Gen9 has no byte immediates: a word immediate into the byte.
                    Base::Imm(bits) => Opnd::imm(Type::UW, bits & mask(o.ty)),
                    _ => {
                        let mut s = slot(o).retype(part);
                        if s.stride != 0 {
                            s.stride = slot_stride(part);
                        }
                        s
                    }
                };
                b.mov(d, src);
            }
            let op = packed_message(surf, p, w, true);
            b.inst(
                op,
                Opnd::null(Type::UD),
                vec![addr.retype(surf.addr_type()), data],
            );
            return Ok(());
        }
        for (c, o) in comps.into_iter().enumerate() {
            let a = self.component_address(surf, addr, c as u32 * bytes);
            let mut b = self.b();
            let data = b.vreg(Type::UD, 1);
            b.mov(data, slot(o).retype(Type::UD));
            b.inst(
                LOp::ByteScatteredWrite {
                    surf,
                    size_log2: bytes.trailing_zeros() as u8,
                },
                Opnd::null(Type::UD),
                vec![a, data],
            );
        }
        Ok(())
    }

    fn component_address(&mut self, surf: Surface, addr: Opnd, off: u32) -> Opnd {
        self.b().addr_add(surf, addr, off)
    }

    /// An 8/16-bit push-constant component at byte `byte` of the CURBE (a scalar region),
    /// zero-extended into the destination's slot.
    pub(super) fn narrow_push(&mut self, dst: Opnd, reg: u8, sub: u32, t: ir::Type) {
        let ty = if t.bits == 8 { Type::UB } else { Type::UW };
        self.b()
            .mov(slot(dst).retype(Type::UD), Opnd::g(reg, sub, ty, 0));
    }
}
