//! The ALU op table: every [`AluOp`] with its properties, in one place.
//!
//! One row per op gives its printed name, source count, operand class, the kinds its
//! sources and result may have, how it reads integers (signed, unsigned or as bits),
//! whether its two sources commute, for comparisons the inverse and the swapped-operand
//! form, and the SPIR-V opcodes that map onto it one to one. Passes, the validator, the
//! back end and the front end ask the table instead of keeping lists of their own; the
//! op's semantics live in `eval.rs` (constant folding and the IR interpreter both use them).
//!
//! Adding an op: add its row to the `alu_ops!` invocation below, then its arm in
//! `eval::eval_alu` (rustc reports the missing arm) and in the back ends' instruction
//! selection. `docs/architecture.md`, "The ALU op table", walks through an example.

use super::{Kind, Type};
use rspirv::spirv::Op as SpvOp;

/// How an ALU op relates its source and destination types.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AluClass {
    /// Sources and destination have the same type.
    Same,
    /// A comparison: sources share a type, destination is a boolean.
    Compare,
    /// A conversion: one source; its kind and the destination's are the row's domains.
    Convert,
    /// `bcsel`: a boolean condition, then two sources of the destination's type.
    Select,
    /// Shifts and bitfield ops whose extra sources (shift count, offset, bits) are 32-bit ints.
    Shift,
    /// A float-to-bool test (`isnan`, `isinf`).
    Test,
}

/// The value kinds an operand may have.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Domain {
    Int,
    Float,
    Bool,
    /// Integers or booleans: the bitwise ops and equality (booleans use the integer ops).
    Bits,
    /// Integers or floats (`bitcast`).
    Num,
    /// Any kind (`mov`, the values `bcsel` picks from).
    Any,
}

impl Domain {
    /// Whether a value of kind `k` belongs to the domain.
    pub fn admits(self, k: Kind) -> bool {
        match self {
            Domain::Int => k == Kind::Int,
            Domain::Float => k == Kind::Float,
            Domain::Bool => k == Kind::Bool,
            Domain::Bits => k != Kind::Float,
            Domain::Num => k != Kind::Bool,
            Domain::Any => true,
        }
    }
}

/// How an op interprets integer operands (its integer sources, and for a conversion to an
/// integer its result).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sign {
    /// Two's-complement signed (`idiv`, `ilt`, `ishr`, `i2f`, `f2i`, ...).
    Signed,
    /// Unsigned (`udiv`, `ult`, `ushr`, `u2f`, `f2u`, ...).
    Unsigned,
    /// The result's bits do not depend on it (`iadd`, `iand`, ...), or no integers.
    Bits,
}

/// The properties of one ALU op (one row of the table).
#[derive(Clone, Copy, Debug)]
pub struct AluInfo {
    pub name: &'static str,
    pub num_srcs: usize,
    pub class: AluClass,
    /// Kinds of the sources the class relates (all sources of `Same`, both of `Compare`,
    /// the first of `Shift`, the only one of `Convert` and `Test`, the picked values of
    /// `Select`).
    pub src: Domain,
    /// Kinds of the result.
    pub dst: Domain,
    pub sign: Sign,
    /// The two sources may be swapped.
    pub commutative: bool,
    /// For a comparison: the comparison that is true exactly when this one is false
    /// (NaN-correct: the inverse of an ordered float comparison is unordered).
    pub inverse: Option<AluOp>,
    /// For a comparison: the comparison giving the same result on swapped sources
    /// (`a < b` is `b > a`); `None` when the IR has no such op (`ilt` has no `igt`).
    pub swapped: Option<AluOp>,
    /// SPIR-V opcodes computing exactly this op on the same operands in the same order.
    pub spirv: &'static [SpvOp],
    /// SPIR-V opcodes computing this op on their two operands swapped
    /// (`OpSGreaterThan a b` is `ilt b a`).
    pub spirv_swapped: &'static [SpvOp],
}

/// A row's starting point: name, source count, class and domains; the builder methods
/// below add the rest.
const fn op(
    name: &'static str,
    num_srcs: usize,
    class: AluClass,
    src: Domain,
    dst: Domain,
) -> AluInfo {
    AluInfo {
        name,
        num_srcs,
        class,
        src,
        dst,
        sign: Sign::Bits,
        commutative: false,
        inverse: None,
        swapped: None,
        spirv: &[],
        spirv_swapped: &[],
    }
}

impl AluInfo {
    const fn signed(self) -> AluInfo {
        AluInfo {
            sign: Sign::Signed,
            ..self
        }
    }
    const fn unsigned(self) -> AluInfo {
        AluInfo {
            sign: Sign::Unsigned,
            ..self
        }
    }
    const fn commutative(self) -> AluInfo {
        AluInfo {
            commutative: true,
            ..self
        }
    }
    /// A comparison's inverse and swapped-operand form.
    const fn cmp(self, inverse: AluOp, swapped: Option<AluOp>) -> AluInfo {
        AluInfo {
            inverse: Some(inverse),
            swapped,
            ..self
        }
    }
    const fn spirv(self, ops: &'static [SpvOp]) -> AluInfo {
        AluInfo { spirv: ops, ..self }
    }
    const fn spirv_swapped(self, ops: &'static [SpvOp]) -> AluInfo {
        AluInfo {
            spirv_swapped: ops,
            ..self
        }
    }
}

macro_rules! alu_ops {
    ($( $variant:ident => $info:expr, )*) => {
        /// ALU operations. Integer ops do not carry signedness in the type: the op says it
        /// (`idiv` vs `udiv`). Booleans use the integer bitwise ops (`iand`, `ior`, `ixor`,
        /// `inot`, `ieq`, `ine`). Properties come from the table in this module.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        pub enum AluOp { $( $variant, )* }

        /// The table, indexed by `AluOp as usize` (the rows and the enum come from the same
        /// list, so they cannot disagree).
        const TABLE: &[AluInfo] = &[ $( $info, )* ];

        impl AluOp {
            pub const ALL: &'static [AluOp] = &[ $( AluOp::$variant, )* ];
        }
    };
}

use AluClass::{Compare, Convert, Same, Select, Shift, Test};
use Domain::{Any, Bits, Bool, Float, Int, Num};

alu_ops! {
    Mov => op("mov", 1, Same, Any, Any),
    Iadd => op("iadd", 2, Same, Int, Int).commutative().spirv(&[SpvOp::IAdd]),
    Isub => op("isub", 2, Same, Int, Int).spirv(&[SpvOp::ISub]),
    Imul => op("imul", 2, Same, Int, Int).commutative().spirv(&[SpvOp::IMul]),
    ImulHigh => op("imul_high", 2, Same, Int, Int).signed().commutative(),
    UmulHigh => op("umul_high", 2, Same, Int, Int).unsigned().commutative(),
    Idiv => op("idiv", 2, Same, Int, Int).signed().spirv(&[SpvOp::SDiv]),
    Udiv => op("udiv", 2, Same, Int, Int).unsigned().spirv(&[SpvOp::UDiv]),
    Irem => op("irem", 2, Same, Int, Int).signed().spirv(&[SpvOp::SRem]),
    Imod => op("imod", 2, Same, Int, Int).signed().spirv(&[SpvOp::SMod]),
    Umod => op("umod", 2, Same, Int, Int).unsigned().spirv(&[SpvOp::UMod]),
    // Saturating additions (the accumulation of OpSDotAccSat / OpUDotAccSat): the exact sum
    // clamped to the type's signed or unsigned range.
    IaddSat => op("iadd_sat", 2, Same, Int, Int).signed().commutative(),
    UaddSat => op("uadd_sat", 2, Same, Int, Int).unsigned().commutative(),
    Ineg => op("ineg", 1, Same, Int, Int),
    Iabs => op("iabs", 1, Same, Int, Int).signed(),
    Isign => op("isign", 1, Same, Int, Int).signed(),
    Imin => op("imin", 2, Same, Int, Int).signed().commutative(),
    Imax => op("imax", 2, Same, Int, Int).signed().commutative(),
    Umin => op("umin", 2, Same, Int, Int).unsigned().commutative(),
    Umax => op("umax", 2, Same, Int, Int).unsigned().commutative(),
    Iand => op("iand", 2, Same, Bits, Bits)
        .commutative()
        .spirv(&[SpvOp::BitwiseAnd, SpvOp::LogicalAnd]),
    Ior => op("ior", 2, Same, Bits, Bits)
        .commutative()
        .spirv(&[SpvOp::BitwiseOr, SpvOp::LogicalOr]),
    Ixor => op("ixor", 2, Same, Bits, Bits).commutative().spirv(&[SpvOp::BitwiseXor]),
    Inot => op("inot", 1, Same, Bits, Bits),
    Ishl => op("ishl", 2, Shift, Int, Int).spirv(&[SpvOp::ShiftLeftLogical]),
    Ishr => op("ishr", 2, Shift, Int, Int).signed().spirv(&[SpvOp::ShiftRightArithmetic]),
    Ushr => op("ushr", 2, Shift, Int, Int).unsigned().spirv(&[SpvOp::ShiftRightLogical]),
    BitfieldInsert => op("bitfield_insert", 4, Shift, Int, Int).spirv(&[SpvOp::BitFieldInsert]),
    IbitfieldExtract => op("ibitfield_extract", 3, Shift, Int, Int)
        .signed()
        .spirv(&[SpvOp::BitFieldSExtract]),
    UbitfieldExtract => op("ubitfield_extract", 3, Shift, Int, Int)
        .unsigned()
        .spirv(&[SpvOp::BitFieldUExtract]),
    BitfieldReverse => op("bitfield_reverse", 1, Same, Int, Int).spirv(&[SpvOp::BitReverse]),
    BitCount => op("bit_count", 1, Same, Int, Int).spirv(&[SpvOp::BitCount]),
    FindLsb => op("find_lsb", 1, Same, Int, Int),
    UfindMsb => op("ufind_msb", 1, Same, Int, Int).unsigned(),
    IfindMsb => op("ifind_msb", 1, Same, Int, Int).signed(),
    Fadd => op("fadd", 2, Same, Float, Float).commutative().spirv(&[SpvOp::FAdd]),
    Fsub => op("fsub", 2, Same, Float, Float).spirv(&[SpvOp::FSub]),
    Fmul => op("fmul", 2, Same, Float, Float).commutative().spirv(&[SpvOp::FMul]),
    Fdiv => op("fdiv", 2, Same, Float, Float).spirv(&[SpvOp::FDiv]),
    Fmod => op("fmod", 2, Same, Float, Float).spirv(&[SpvOp::FMod]),
    Frem => op("frem", 2, Same, Float, Float).spirv(&[SpvOp::FRem]),
    Fneg => op("fneg", 1, Same, Float, Float),
    Fabs => op("fabs", 1, Same, Float, Float),
    Fsign => op("fsign", 1, Same, Float, Float),
    Fmin => op("fmin", 2, Same, Float, Float).commutative(),
    Fmax => op("fmax", 2, Same, Float, Float).commutative(),
    Ffma => op("ffma", 3, Same, Float, Float),
    Ffloor => op("ffloor", 1, Same, Float, Float),
    Fceil => op("fceil", 1, Same, Float, Float),
    Ftrunc => op("ftrunc", 1, Same, Float, Float),
    FroundEven => op("fround_even", 1, Same, Float, Float),
    Ffract => op("ffract", 1, Same, Float, Float),
    Fsqrt => op("fsqrt", 1, Same, Float, Float),
    Frsq => op("frsq", 1, Same, Float, Float),
    Frcp => op("frcp", 1, Same, Float, Float),
    Fexp2 => op("fexp2", 1, Same, Float, Float),
    Flog2 => op("flog2", 1, Same, Float, Float),
    Fsin => op("fsin", 1, Same, Float, Float),
    Fcos => op("fcos", 1, Same, Float, Float),
    Fpow => op("fpow", 2, Same, Float, Float),
    // The exponent (second source) is a signed 32-bit integer.
    Ldexp => op("ldexp", 2, Shift, Float, Float).signed(),
    FrexpSig => op("frexp_sig", 1, Same, Float, Float),
    FrexpExp => op("frexp_exp", 1, Convert, Float, Int),
    I2f => op("i2f", 1, Convert, Int, Float).signed().spirv(&[SpvOp::ConvertSToF]),
    U2f => op("u2f", 1, Convert, Int, Float).unsigned().spirv(&[SpvOp::ConvertUToF]),
    F2i => op("f2i", 1, Convert, Float, Int).signed().spirv(&[SpvOp::ConvertFToS]),
    F2u => op("f2u", 1, Convert, Float, Int).unsigned().spirv(&[SpvOp::ConvertFToU]),
    I2i => op("i2i", 1, Convert, Int, Int).signed().spirv(&[SpvOp::SConvert]),
    U2u => op("u2u", 1, Convert, Int, Int).unsigned().spirv(&[SpvOp::UConvert]),
    F2f => op("f2f", 1, Convert, Float, Float).spirv(&[SpvOp::FConvert]),
    B2i => op("b2i", 1, Convert, Bool, Int),
    B2f => op("b2f", 1, Convert, Bool, Float),
    I2b => op("i2b", 1, Convert, Int, Bool),
    B2b => op("b2b", 1, Convert, Bool, Bool),
    // Also needs equal bit sizes (`types_fit`).
    Bitcast => op("bitcast", 1, Convert, Num, Num),
    Ieq => op("ieq", 2, Compare, Bits, Bool)
        .commutative()
        .cmp(AluOp::Ine, Some(AluOp::Ieq))
        .spirv(&[SpvOp::IEqual, SpvOp::LogicalEqual]),
    Ine => op("ine", 2, Compare, Bits, Bool)
        .commutative()
        .cmp(AluOp::Ieq, Some(AluOp::Ine))
        .spirv(&[SpvOp::INotEqual, SpvOp::LogicalNotEqual]),
    Ilt => op("ilt", 2, Compare, Int, Bool)
        .signed()
        .cmp(AluOp::Ige, None)
        .spirv(&[SpvOp::SLessThan])
        .spirv_swapped(&[SpvOp::SGreaterThan]),
    Ige => op("ige", 2, Compare, Int, Bool)
        .signed()
        .cmp(AluOp::Ilt, None)
        .spirv(&[SpvOp::SGreaterThanEqual])
        .spirv_swapped(&[SpvOp::SLessThanEqual]),
    Ult => op("ult", 2, Compare, Int, Bool)
        .unsigned()
        .cmp(AluOp::Uge, None)
        .spirv(&[SpvOp::ULessThan])
        .spirv_swapped(&[SpvOp::UGreaterThan]),
    Uge => op("uge", 2, Compare, Int, Bool)
        .unsigned()
        .cmp(AluOp::Ult, None)
        .spirv(&[SpvOp::UGreaterThanEqual])
        .spirv_swapped(&[SpvOp::ULessThanEqual]),
    Feq => op("feq", 2, Compare, Float, Bool)
        .commutative()
        .cmp(AluOp::Fneu, Some(AluOp::Feq))
        .spirv(&[SpvOp::FOrdEqual]),
    Fne => op("fne", 2, Compare, Float, Bool)
        .commutative()
        .cmp(AluOp::Fequ, Some(AluOp::Fne))
        .spirv(&[SpvOp::FOrdNotEqual]),
    Flt => op("flt", 2, Compare, Float, Bool)
        .cmp(AluOp::Fgeu, Some(AluOp::Fgt))
        .spirv(&[SpvOp::FOrdLessThan]),
    Fle => op("fle", 2, Compare, Float, Bool)
        .cmp(AluOp::Fgtu, Some(AluOp::Fge))
        .spirv(&[SpvOp::FOrdLessThanEqual]),
    Fgt => op("fgt", 2, Compare, Float, Bool)
        .cmp(AluOp::Fleu, Some(AluOp::Flt))
        .spirv(&[SpvOp::FOrdGreaterThan]),
    Fge => op("fge", 2, Compare, Float, Bool)
        .cmp(AluOp::Fltu, Some(AluOp::Fle))
        .spirv(&[SpvOp::FOrdGreaterThanEqual]),
    Fequ => op("fequ", 2, Compare, Float, Bool)
        .commutative()
        .cmp(AluOp::Fne, Some(AluOp::Fequ))
        .spirv(&[SpvOp::FUnordEqual]),
    Fneu => op("fneu", 2, Compare, Float, Bool)
        .commutative()
        .cmp(AluOp::Feq, Some(AluOp::Fneu))
        .spirv(&[SpvOp::FUnordNotEqual]),
    Fltu => op("fltu", 2, Compare, Float, Bool)
        .cmp(AluOp::Fge, Some(AluOp::Fgtu))
        .spirv(&[SpvOp::FUnordLessThan]),
    Fleu => op("fleu", 2, Compare, Float, Bool)
        .cmp(AluOp::Fgt, Some(AluOp::Fgeu))
        .spirv(&[SpvOp::FUnordLessThanEqual]),
    Fgtu => op("fgtu", 2, Compare, Float, Bool)
        .cmp(AluOp::Fle, Some(AluOp::Fltu))
        .spirv(&[SpvOp::FUnordGreaterThan]),
    Fgeu => op("fgeu", 2, Compare, Float, Bool)
        .cmp(AluOp::Flt, Some(AluOp::Fleu))
        .spirv(&[SpvOp::FUnordGreaterThanEqual]),
    IsNan => op("isnan", 1, Test, Float, Bool).spirv(&[SpvOp::IsNan]),
    IsInf => op("isinf", 1, Test, Float, Bool).spirv(&[SpvOp::IsInf]),
    Bcsel => op("bcsel", 3, Select, Any, Any),
}

/// A SPIR-V opcode's ALU op, as [`AluOp::from_spirv`] finds it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SpirvAlu {
    pub op: AluOp,
    /// The SPIR-V operands go to the op in reverse order.
    pub swapped: bool,
}

impl AluOp {
    /// The op's row of the table.
    pub fn info(self) -> &'static AluInfo {
        &TABLE[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    pub fn num_srcs(self) -> usize {
        self.info().num_srcs
    }
    pub fn class(self) -> AluClass {
        self.info().class
    }
    pub fn from_name(s: &str) -> Option<AluOp> {
        AluOp::ALL.iter().copied().find(|o| o.name() == s)
    }
    /// True for ops that compute on floats (their sources are floats).
    pub fn is_float_op(self) -> bool {
        self.info().src == Domain::Float
    }
    /// True for ops whose two sources may be swapped.
    pub fn is_commutative(self) -> bool {
        self.info().commutative
    }
    pub fn sign(self) -> Sign {
        self.info().sign
    }
    /// The op reads its integer sources as signed (sign-extends them when widening).
    pub fn signed_srcs(self) -> bool {
        self.sign() == Sign::Signed && self.info().src == Domain::Int
    }
    /// A conversion whose integer result is signed (narrowed with sign extension).
    pub fn signed_dst(self) -> bool {
        self.sign() == Sign::Signed && self.info().dst == Domain::Int
    }
    /// For a comparison, the comparison true exactly when this one is false.
    pub fn inverse(self) -> Option<AluOp> {
        self.info().inverse
    }
    /// For a comparison, the comparison of the swapped sources.
    pub fn swapped(self) -> Option<AluOp> {
        self.info().swapped
    }
    /// The ALU op a SPIR-V opcode maps onto one to one, if any.
    pub fn from_spirv(op: SpvOp) -> Option<SpirvAlu> {
        AluOp::ALL.iter().find_map(|a| {
            let i = a.info();
            if i.spirv.contains(&op) {
                Some(SpirvAlu {
                    op: *a,
                    swapped: false,
                })
            } else if i.spirv_swapped.contains(&op) {
                Some(SpirvAlu {
                    op: *a,
                    swapped: true,
                })
            } else {
                None
            }
        })
    }

    /// Whether a destination of type `dst` and sources of types `srcs` fit the op (the
    /// source count, the class's shape and the row's domains).
    pub fn types_fit(self, dst: Type, srcs: &[Type]) -> bool {
        let i = self.info();
        if srcs.len() != i.num_srcs {
            return false;
        }
        let t = dst;
        match i.class {
            AluClass::Same => srcs.iter().all(|s| *s == t) && i.src.admits(t.kind),
            AluClass::Compare => {
                srcs[0] == srcs[1]
                    && i.dst.admits(t.kind)
                    && t.comps == srcs[0].comps
                    && i.src.admits(srcs[0].kind)
            }
            AluClass::Convert => {
                let s = srcs[0];
                s.comps == t.comps
                    && i.src.admits(s.kind)
                    && i.dst.admits(t.kind)
                    // A bitcast keeps every bit, so the sizes agree.
                    && (self != AluOp::Bitcast || s.bits == t.bits)
            }
            AluClass::Select => {
                srcs[0].is_bool()
                    && (srcs[0].comps == t.comps || srcs[0].comps == 1)
                    && srcs[1] == t
                    && srcs[2] == t
            }
            AluClass::Shift => {
                srcs[0] == t
                    && i.src.admits(t.kind)
                    && srcs[1..]
                        .iter()
                        .all(|s| s.kind == Kind::Int && s.bits == 32 && s.comps == t.comps)
            }
            AluClass::Test => {
                i.src.admits(srcs[0].kind) && i.dst.admits(t.kind) && t.comps == srcs[0].comps
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_alu;

    #[test]
    fn names_are_unique_and_parse_back() {
        for op in AluOp::ALL {
            assert_eq!(AluOp::from_name(op.name()), Some(*op), "{op:?}");
        }
        assert_eq!(TABLE.len(), AluOp::ALL.len());
    }

    #[test]
    fn each_spirv_opcode_maps_to_one_op() {
        for a in AluOp::ALL {
            let i = a.info();
            for (list, swapped) in [(i.spirv, false), (i.spirv_swapped, true)] {
                for s in list {
                    let owners = AluOp::ALL
                        .iter()
                        .filter(|b| {
                            b.info().spirv.contains(s) || b.info().spirv_swapped.contains(s)
                        })
                        .count();
                    assert_eq!(owners, 1, "{s:?} is listed by {owners} ops");
                    assert_eq!(AluOp::from_spirv(*s), Some(SpirvAlu { op: *a, swapped }));
                }
            }
            if !i.spirv_swapped.is_empty() {
                assert_eq!(i.num_srcs, 2, "{a:?} swaps two operands");
            }
        }
        assert_eq!(AluOp::from_spirv(SpvOp::Nop), None);
    }

    #[test]
    fn compare_properties_are_consistent() {
        for a in AluOp::ALL {
            let i = a.info();
            let is_cmp = i.class == AluClass::Compare;
            assert_eq!(
                i.inverse.is_some(),
                is_cmp,
                "{a:?}: inverse only on compares"
            );
            if let Some(inv) = i.inverse {
                assert_eq!(inv.inverse(), Some(*a), "{a:?}: inverse of the inverse");
                assert_eq!(
                    inv.info().src,
                    i.src,
                    "{a:?}: inverse compares the same kinds"
                );
            }
            if let Some(sw) = i.swapped {
                assert!(is_cmp, "{a:?}");
                assert_eq!(sw.swapped(), Some(*a), "{a:?}: swapped twice");
                assert_eq!(sw == *a, i.commutative, "{a:?}: commutes iff its own swap");
            }
            if i.commutative {
                assert_eq!(i.num_srcs, 2, "{a:?}");
            }
        }
    }

    /// Sample operands: zero, one, -1, the extremes and a few ordinary values; for floats
    /// also infinities, NaN and signed zero.
    fn samples(t: Type) -> Vec<u64> {
        match t.kind {
            Kind::Float => [
                0.0f32,
                -0.0,
                1.0,
                -2.5,
                3.25,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
            ]
            .iter()
            .map(|f| u64::from(f.to_bits()))
            .collect(),
            _ => [
                0u64,
                1,
                2,
                7,
                0x7fff_ffff,
                0x8000_0000,
                0xffff_fffe,
                0xffff_ffff,
            ]
            .to_vec(),
        }
    }

    /// The table's properties agree with the ops' semantics (`eval`).
    #[test]
    fn properties_agree_with_the_semantics() {
        for a in AluOp::ALL {
            let i = a.info();
            if i.num_srcs != 2 || !matches!(i.class, AluClass::Same | AluClass::Compare) {
                continue;
            }
            let st = match i.src {
                Domain::Float => Type::F32,
                _ => Type::I32,
            };
            let dt = if i.class == AluClass::Compare {
                Type::B1
            } else {
                st
            };
            let v = samples(st);
            for x in &v {
                for y in &v {
                    let r = eval_alu(*a, dt, &[st, st], &[*x, *y]);
                    if i.commutative {
                        let s = eval_alu(*a, dt, &[st, st], &[*y, *x]);
                        // Float results agree as values (fmin/fmax may return either zero
                        // of -0 and +0, and either NaN).
                        let (fr, fs) = (f32::from_bits(r as u32), f32::from_bits(s as u32));
                        let same =
                            r == s || dt.is_float() && (fr == fs || fr.is_nan() && fs.is_nan());
                        assert!(same, "{a:?} {x:#x} {y:#x} does not commute: {r:#x} {s:#x}");
                    }
                    if let Some(inv) = i.inverse {
                        let n = eval_alu(inv, dt, &[st, st], &[*x, *y]);
                        assert_eq!(
                            n,
                            r ^ 1,
                            "{inv:?} is not the inverse of {a:?} on {x:#x} {y:#x}"
                        );
                    }
                    if let Some(sw) = i.swapped {
                        let s = eval_alu(sw, dt, &[st, st], &[*y, *x]);
                        assert_eq!(s, r, "{sw:?} is not {a:?} swapped on {x:#x} {y:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn signed_ops_differ_from_their_unsigned_reading() {
        // -1 against 2: every signed compare/min/max/division reads -1 as negative.
        let t = Type::I32;
        let m1 = 0xffff_ffffu64;
        for (s, u) in [
            (AluOp::Ilt, AluOp::Ult),
            (AluOp::Ige, AluOp::Uge),
            (AluOp::Imin, AluOp::Umin),
            (AluOp::Imax, AluOp::Umax),
            (AluOp::Idiv, AluOp::Udiv),
            (AluOp::ImulHigh, AluOp::UmulHigh),
        ] {
            assert_eq!(s.sign(), Sign::Signed, "{s:?}");
            assert_eq!(u.sign(), Sign::Unsigned, "{u:?}");
            let dt = if s.class() == AluClass::Compare {
                Type::B1
            } else {
                t
            };
            assert_ne!(
                eval_alu(s, dt, &[t, t], &[m1, 2]),
                eval_alu(u, dt, &[t, t], &[m1, 2]),
                "{s:?} vs {u:?}"
            );
        }
    }

    #[test]
    fn types_fit_follows_the_domains() {
        let (i, f, b) = (Type::I32, Type::F32, Type::B1);
        assert!(AluOp::Iadd.types_fit(i, &[i, i]));
        assert!(!AluOp::Iadd.types_fit(f, &[f, f]));
        assert!(AluOp::Fadd.types_fit(f, &[f, f]));
        assert!(AluOp::Iand.types_fit(b, &[b, b]));
        assert!(!AluOp::Iand.types_fit(f, &[f, f]));
        assert!(AluOp::Ieq.types_fit(b, &[b, b]));
        assert!(AluOp::Flt.types_fit(b, &[f, f]));
        assert!(!AluOp::Flt.types_fit(b, &[i, i]));
        assert!(AluOp::I2f.types_fit(f, &[i]));
        assert!(!AluOp::I2f.types_fit(i, &[f]));
        assert!(AluOp::Bitcast.types_fit(f, &[i]));
        assert!(!AluOp::Bitcast.types_fit(Type::float(64), &[i]));
        assert!(AluOp::Ldexp.types_fit(f, &[f, i]));
        assert!(!AluOp::Ishl.types_fit(i, &[i, Type::int(16)]));
        assert!(AluOp::Bcsel.types_fit(f, &[b, f, f]));
        assert!(AluOp::IsNan.types_fit(b, &[f]));
        assert!(!AluOp::Iadd.types_fit(i, &[i]));
    }

    /// The SPIR-V opcodes the front end maps onto ALU ops one to one (with the ordering
    /// compares it maps by swapping operands), and the signedness it reads from them: the
    /// table gives exactly these, so `from_spirv` can replace the front end's own list.
    #[test]
    fn spirv_mapping_matches_the_front_ends() {
        let expect = [
            (SpvOp::IAdd, AluOp::Iadd, false),
            (SpvOp::ISub, AluOp::Isub, false),
            (SpvOp::IMul, AluOp::Imul, false),
            (SpvOp::FAdd, AluOp::Fadd, false),
            (SpvOp::FSub, AluOp::Fsub, false),
            (SpvOp::FMul, AluOp::Fmul, false),
            (SpvOp::FDiv, AluOp::Fdiv, false),
            (SpvOp::FRem, AluOp::Frem, false),
            (SpvOp::FMod, AluOp::Fmod, false),
            (SpvOp::UDiv, AluOp::Udiv, false),
            (SpvOp::SDiv, AluOp::Idiv, false),
            (SpvOp::UMod, AluOp::Umod, false),
            (SpvOp::SRem, AluOp::Irem, false),
            (SpvOp::SMod, AluOp::Imod, false),
            (SpvOp::ShiftLeftLogical, AluOp::Ishl, false),
            (SpvOp::ShiftRightLogical, AluOp::Ushr, false),
            (SpvOp::ShiftRightArithmetic, AluOp::Ishr, false),
            (SpvOp::BitwiseAnd, AluOp::Iand, false),
            (SpvOp::BitwiseOr, AluOp::Ior, false),
            (SpvOp::BitwiseXor, AluOp::Ixor, false),
            (SpvOp::BitFieldInsert, AluOp::BitfieldInsert, false),
            (SpvOp::BitFieldSExtract, AluOp::IbitfieldExtract, false),
            (SpvOp::BitFieldUExtract, AluOp::UbitfieldExtract, false),
            (SpvOp::BitReverse, AluOp::BitfieldReverse, false),
            (SpvOp::BitCount, AluOp::BitCount, false),
            (SpvOp::LogicalAnd, AluOp::Iand, false),
            (SpvOp::LogicalOr, AluOp::Ior, false),
            (SpvOp::LogicalEqual, AluOp::Ieq, false),
            (SpvOp::LogicalNotEqual, AluOp::Ine, false),
            (SpvOp::IEqual, AluOp::Ieq, false),
            (SpvOp::INotEqual, AluOp::Ine, false),
            (SpvOp::SLessThan, AluOp::Ilt, false),
            (SpvOp::SGreaterThanEqual, AluOp::Ige, false),
            (SpvOp::ULessThan, AluOp::Ult, false),
            (SpvOp::UGreaterThanEqual, AluOp::Uge, false),
            (SpvOp::FOrdEqual, AluOp::Feq, false),
            (SpvOp::FOrdNotEqual, AluOp::Fne, false),
            (SpvOp::FOrdLessThan, AluOp::Flt, false),
            (SpvOp::FOrdLessThanEqual, AluOp::Fle, false),
            (SpvOp::FOrdGreaterThan, AluOp::Fgt, false),
            (SpvOp::FOrdGreaterThanEqual, AluOp::Fge, false),
            (SpvOp::FUnordEqual, AluOp::Fequ, false),
            (SpvOp::FUnordNotEqual, AluOp::Fneu, false),
            (SpvOp::FUnordLessThan, AluOp::Fltu, false),
            (SpvOp::FUnordLessThanEqual, AluOp::Fleu, false),
            (SpvOp::FUnordGreaterThan, AluOp::Fgtu, false),
            (SpvOp::FUnordGreaterThanEqual, AluOp::Fgeu, false),
            (SpvOp::IsNan, AluOp::IsNan, false),
            (SpvOp::IsInf, AluOp::IsInf, false),
            (SpvOp::ConvertFToU, AluOp::F2u, false),
            (SpvOp::ConvertFToS, AluOp::F2i, false),
            (SpvOp::ConvertSToF, AluOp::I2f, false),
            (SpvOp::ConvertUToF, AluOp::U2f, false),
            (SpvOp::UConvert, AluOp::U2u, false),
            (SpvOp::SConvert, AluOp::I2i, false),
            (SpvOp::FConvert, AluOp::F2f, false),
            (SpvOp::SGreaterThan, AluOp::Ilt, true),
            (SpvOp::SLessThanEqual, AluOp::Ige, true),
            (SpvOp::UGreaterThan, AluOp::Ult, true),
            (SpvOp::ULessThanEqual, AluOp::Uge, true),
        ];
        for (s, op, swapped) in expect {
            assert_eq!(
                AluOp::from_spirv(s),
                Some(SpirvAlu { op, swapped }),
                "{s:?}"
            );
        }
        let listed: usize = AluOp::ALL
            .iter()
            .map(|a| a.info().spirv.len() + a.info().spirv_swapped.len())
            .sum();
        assert_eq!(
            listed,
            expect.len(),
            "the table lists SPIR-V opcodes the front end does not"
        );
        // The front end's signed flag: the ops whose SPIR-V opcode reads signed integers.
        for (s, op, _) in expect.iter().filter(|e| !e.2) {
            let signed = matches!(
                s,
                SpvOp::SDiv
                    | SpvOp::SRem
                    | SpvOp::SMod
                    | SpvOp::ShiftRightArithmetic
                    | SpvOp::BitFieldSExtract
                    | SpvOp::SLessThan
                    | SpvOp::SGreaterThanEqual
                    | SpvOp::ConvertFToS
                    | SpvOp::ConvertSToF
                    | SpvOp::SConvert
            );
            assert_eq!(op.sign() == Sign::Signed, signed, "{s:?}");
        }
    }
}
