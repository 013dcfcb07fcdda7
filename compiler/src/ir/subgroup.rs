//! Subgroup (`GroupNonUniform*`) operations of the IR.
//!
//! A subgroup is the set of invocations one EU thread runs: its size is the SIMD width of
//! the compiled variant. Every operation reads only the *active* invocations of the
//! subgroup (those whose control flow reaches the instruction), so no pass may move one
//! across control flow, merge two of them, or remove one whose result is read: the IR
//! treats them as having side effects.

use super::{AluOp, Type};
use std::fmt;

/// The combining operation of a reduction or scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RedOp {
    Iadd,
    Fadd,
    Imul,
    Fmul,
    Imin,
    Umin,
    Fmin,
    Imax,
    Umax,
    Fmax,
    And,
    Or,
    Xor,
}

impl RedOp {
    pub const ALL: [RedOp; 13] = [
        RedOp::Iadd,
        RedOp::Fadd,
        RedOp::Imul,
        RedOp::Fmul,
        RedOp::Imin,
        RedOp::Umin,
        RedOp::Fmin,
        RedOp::Imax,
        RedOp::Umax,
        RedOp::Fmax,
        RedOp::And,
        RedOp::Or,
        RedOp::Xor,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RedOp::Iadd => "iadd",
            RedOp::Fadd => "fadd",
            RedOp::Imul => "imul",
            RedOp::Fmul => "fmul",
            RedOp::Imin => "imin",
            RedOp::Umin => "umin",
            RedOp::Fmin => "fmin",
            RedOp::Imax => "imax",
            RedOp::Umax => "umax",
            RedOp::Fmax => "fmax",
            RedOp::And => "and",
            RedOp::Or => "or",
            RedOp::Xor => "xor",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, RedOp::Fadd | RedOp::Fmul | RedOp::Fmin | RedOp::Fmax)
    }

    /// The ALU operation that combines two values.
    pub fn alu(self) -> AluOp {
        match self {
            RedOp::Iadd => AluOp::Iadd,
            RedOp::Fadd => AluOp::Fadd,
            RedOp::Imul => AluOp::Imul,
            RedOp::Fmul => AluOp::Fmul,
            RedOp::Imin => AluOp::Imin,
            RedOp::Umin => AluOp::Umin,
            RedOp::Fmin => AluOp::Fmin,
            RedOp::Imax => AluOp::Imax,
            RedOp::Umax => AluOp::Umax,
            RedOp::Fmax => AluOp::Fmax,
            RedOp::And => AluOp::Iand,
            RedOp::Or => AluOp::Ior,
            RedOp::Xor => AluOp::Ixor,
        }
    }

    /// The identity of the operation on scalars of type `t`, as bits: what an inactive
    /// invocation contributes. Booleans are 0 or all ones of their size.
    pub fn identity(self, t: Type) -> u64 {
        let m = t.mask();
        let float = |h: u16, f: f32, d: f64| match t.bits {
            16 => u64::from(h),
            32 => u64::from(f.to_bits()),
            _ => d.to_bits(),
        };
        match self {
            RedOp::Iadd | RedOp::Or | RedOp::Xor | RedOp::Umax => 0,
            // -0.0: x + -0.0 == x for every x, -0.0 included.
            RedOp::Fadd => float(0x8000, -0.0, -0.0),
            RedOp::Imul => 1,
            RedOp::Fmul => float(0x3C00, 1.0, 1.0),
            RedOp::Imin => m >> 1,
            RedOp::Umin | RedOp::And => m,
            RedOp::Fmin => float(0x7C00, f32::INFINITY, f64::INFINITY),
            RedOp::Imax => (m >> 1) + 1,
            RedOp::Fmax => float(0xFC00, f32::NEG_INFINITY, f64::NEG_INFINITY),
        }
    }

    /// Combines two scalars of type `t` (the CPU semantics the interpreter uses: the ALU
    /// operation's own).
    pub fn apply(self, t: Type, a: u64, b: u64) -> u64 {
        crate::eval::eval_alu(self.alu(), t, &[t, t], &[a, b]) & t.mask()
    }
}

/// One subgroup operation; sources are listed per variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubgroupOp {
    /// `bool`: true in the lowest-numbered active invocation. No sources.
    Elect,
    /// `bool`: the source is true in every active invocation. [bool]
    All,
    /// `bool`: the source is true in some active invocation. [bool]
    Any,
    /// `bool`: the source has the same value in every active invocation. [value]
    AllEqual,
    /// `u32x4`: bit i of the mask is set if invocation i is active and its source true.
    /// [bool]
    Ballot,
    /// The source's value in the invocation given by the second (dynamically uniform)
    /// source. [value, id]
    Broadcast,
    /// The source's value in the lowest-numbered active invocation. [value]
    BroadcastFirst,
    /// The source's value in the invocation given by the second source, which may differ
    /// per invocation (undefined when that invocation is inactive). The front end builds
    /// shuffle xor / up / down and the quad operations on it. [value, id]
    Shuffle,
    /// The operation over the source of every active invocation. [value]
    Reduce(RedOp),
    /// The operation over the active invocations of this one's cluster: the invocations
    /// numbered `k * size .. (k + 1) * size`, `size` a power of two. [value]
    ClusteredReduce(RedOp, u8),
    /// The operation over the active invocations numbered up to this one. [value]
    InclusiveScan(RedOp),
    /// The operation over the active invocations numbered below this one (the identity
    /// in the first). [value]
    ExclusiveScan(RedOp),
}

impl SubgroupOp {
    /// Number of sources.
    pub fn num_srcs(self) -> usize {
        match self {
            SubgroupOp::Elect => 0,
            SubgroupOp::Broadcast | SubgroupOp::Shuffle => 2,
            _ => 1,
        }
    }

    /// Every operation, for parsing and tests.
    pub fn all() -> Vec<SubgroupOp> {
        let mut v = vec![
            SubgroupOp::Elect,
            SubgroupOp::All,
            SubgroupOp::Any,
            SubgroupOp::AllEqual,
            SubgroupOp::Ballot,
            SubgroupOp::Broadcast,
            SubgroupOp::BroadcastFirst,
            SubgroupOp::Shuffle,
        ];
        for r in RedOp::ALL {
            v.push(SubgroupOp::Reduce(r));
            v.push(SubgroupOp::InclusiveScan(r));
            v.push(SubgroupOp::ExclusiveScan(r));
            for k in 0..8 {
                v.push(SubgroupOp::ClusteredReduce(r, 1 << k));
            }
        }
        v
    }
}

impl fmt::Display for SubgroupOp {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            SubgroupOp::Elect => write!(f, "subgroup_elect"),
            SubgroupOp::All => write!(f, "subgroup_all"),
            SubgroupOp::Any => write!(f, "subgroup_any"),
            SubgroupOp::AllEqual => write!(f, "subgroup_all_equal"),
            SubgroupOp::Ballot => write!(f, "subgroup_ballot"),
            SubgroupOp::Broadcast => write!(f, "subgroup_broadcast"),
            SubgroupOp::BroadcastFirst => write!(f, "subgroup_broadcast_first"),
            SubgroupOp::Shuffle => write!(f, "subgroup_shuffle"),
            SubgroupOp::Reduce(r) => write!(f, "subgroup_reduce.{}", r.name()),
            SubgroupOp::ClusteredReduce(r, n) => {
                write!(f, "subgroup_clustered_reduce.{}.{n}", r.name())
            }
            SubgroupOp::InclusiveScan(r) => write!(f, "subgroup_inclusive_scan.{}", r.name()),
            SubgroupOp::ExclusiveScan(r) => write!(f, "subgroup_exclusive_scan.{}", r.name()),
        }
    }
}

/// The subgroup semantics over one subgroup, for the interpreter: `srcs[k][i]` is the first
/// component of invocation i's source k (None when inactive), `t` the scalar type of source
/// 0 (booleans 0 / 1); returns the result of each active invocation.
pub fn eval_subgroup(op: SubgroupOp, t: Type, srcs: &[Vec<Option<u64>>]) -> Vec<Option<Vec<u64>>> {
    let n = srcs.first().map_or(0, |s| s.len());
    let active = |i: usize| srcs.first().is_none_or(|s| s[i].is_some());
    let act: Vec<usize> = (0..n).filter(|&i| active(i)).collect();
    let x = |i: usize| srcs[0][i].unwrap_or(0);
    let first = act.first().copied();
    let per_lane = |f: &dyn Fn(usize) -> Vec<u64>| -> Vec<Option<Vec<u64>>> {
        (0..n).map(|i| active(i).then(|| f(i))).collect()
    };
    match op {
        SubgroupOp::Elect => per_lane(&|i| vec![u64::from(Some(i) == first)]),
        SubgroupOp::All => {
            let r = act.iter().all(|&i| x(i) != 0);
            per_lane(&|_| vec![u64::from(r)])
        }
        SubgroupOp::Any => {
            let r = act.iter().any(|&i| x(i) != 0);
            per_lane(&|_| vec![u64::from(r)])
        }
        SubgroupOp::AllEqual => {
            // Floats by value (-0.0 equals 0.0, a NaN nothing), other types by bits.
            let eq = |a: u64, b: u64| {
                if t.kind == crate::ir::Kind::Float {
                    crate::eval::eval_alu(AluOp::Feq, Type::B1, &[t, t], &[a, b]) != 0
                } else {
                    a == b
                }
            };
            let r = act.iter().all(|&i| eq(x(i), x(first.unwrap_or(0))));
            per_lane(&|_| vec![u64::from(r)])
        }
        SubgroupOp::Ballot => {
            let mut m = [0u64; 4];
            for &i in &act {
                if x(i) != 0 {
                    m[i / 32] |= 1 << (i % 32);
                }
            }
            per_lane(&|_| m.to_vec())
        }
        SubgroupOp::Broadcast | SubgroupOp::Shuffle => per_lane(&|i| {
            let id = srcs[1][i].unwrap_or(0) as usize;
            vec![srcs[0].get(id).copied().flatten().unwrap_or(0)]
        }),
        SubgroupOp::BroadcastFirst => per_lane(&|_| vec![first.map_or(0, x)]),
        SubgroupOp::Reduce(r) => {
            let v = act.iter().fold(r.identity(t), |a, &i| r.apply(t, a, x(i)));
            per_lane(&|_| vec![v])
        }
        SubgroupOp::ClusteredReduce(r, size) => per_lane(&|i| {
            let c = i / usize::from(size.max(1));
            let v = act
                .iter()
                .filter(|&&j| j / usize::from(size.max(1)) == c)
                .fold(r.identity(t), |a, &j| r.apply(t, a, x(j)));
            vec![v]
        }),
        SubgroupOp::InclusiveScan(r) | SubgroupOp::ExclusiveScan(r) => {
            let incl = matches!(op, SubgroupOp::InclusiveScan(_));
            per_lane(&|i| {
                let v = act
                    .iter()
                    .filter(|&&j| j < i || (incl && j == i))
                    .fold(r.identity(t), |a, &j| r.apply(t, a, x(j)));
                vec![v]
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One subgroup of four: invocations 0, 1 and 3 active.
    fn col(vals: [u64; 4]) -> Vec<Option<u64>> {
        vec![Some(vals[0]), Some(vals[1]), None, Some(vals[3])]
    }

    #[test]
    fn identities_are_those_of_the_operand_type() {
        let i8t = Type::int(8);
        assert_eq!(RedOp::Imax.identity(i8t), 0x80);
        assert_eq!(RedOp::Imin.identity(i8t), 0x7F);
        assert_eq!(RedOp::Umin.identity(Type::int(16)), 0xFFFF);
        assert_eq!(RedOp::Imin.identity(Type::int(64)), i64::MAX as u64);
        assert_eq!(RedOp::Fmin.identity(Type::float(16)), 0x7C00);
        assert_eq!(RedOp::Fadd.identity(Type::float(64)), (-0.0f64).to_bits());
        assert_eq!(
            RedOp::Fmax.identity(Type::F32),
            f32::NEG_INFINITY.to_bits() as u64
        );
        assert_eq!(RedOp::And.identity(Type::B1), 1);
    }

    #[test]
    fn narrow_integer_reductions_wrap_and_compare_signed() {
        let t = Type::int(8);
        // -128, 100, (inactive), 100: the sum wraps to 72, the signed max is 100, the
        // unsigned max is 0x80.
        let c = col([0x80, 100, 0, 100]);
        let at0 = |op| {
            eval_subgroup(op, t, std::slice::from_ref(&c))[0]
                .clone()
                .unwrap()[0]
        };
        assert_eq!(at0(SubgroupOp::Reduce(RedOp::Iadd)), 72);
        assert_eq!(at0(SubgroupOp::Reduce(RedOp::Imax)), 100);
        assert_eq!(at0(SubgroupOp::Reduce(RedOp::Umax)), 0x80);
        assert_eq!(at0(SubgroupOp::Reduce(RedOp::Imin)), 0x80);
        // The first invocation's exclusive max is the type's own identity.
        assert_eq!(at0(SubgroupOp::ExclusiveScan(RedOp::Imax)), 0x80);
    }

    #[test]
    fn all_equal_compares_floats_by_value_and_integers_by_bits() {
        let all_equal = |t: Type, c: Vec<Option<u64>>| {
            eval_subgroup(SubgroupOp::AllEqual, t, &[c])[0]
                .clone()
                .unwrap()[0]
        };
        let (pz, nz) = (0.0f32.to_bits() as u64, (-0.0f32).to_bits() as u64);
        assert_eq!(all_equal(Type::F32, col([pz, nz, 0, pz])), 1);
        let nan = f64::NAN.to_bits();
        assert_eq!(all_equal(Type::float(64), col([nan, nan, 0, nan])), 0);
        // fp16: 0x8000 is -0.0.
        assert_eq!(all_equal(Type::float(16), col([0, 0x8000, 0, 0])), 1);
        // The same bits as integers differ.
        assert_eq!(all_equal(Type::I32, col([pz, nz, 0, pz])), 0);
        // An inactive invocation's value does not count.
        assert_eq!(all_equal(Type::I32, col([5, 5, 9, 5])), 1);
    }

    #[test]
    fn sixty_four_bit_and_half_float_scans_use_the_whole_type() {
        let t = Type::int(64);
        let c = col([1 << 40, u64::MAX, 0, 3]);
        let r = eval_subgroup(SubgroupOp::InclusiveScan(RedOp::Iadd), t, &[c]);
        assert_eq!(r[1].as_ref().unwrap()[0], (1 << 40) - 1);
        assert_eq!(r[3].as_ref().unwrap()[0], (1 << 40) + 2);
        assert!(r[2].is_none());
        // fp16: 1.5 + 2.0 + (inactive) + -0.5 = 3.0 (0x4200).
        let h = Type::float(16);
        let c = col([0x3E00, 0x4000, 0x7C00, 0xB800]);
        let r = eval_subgroup(SubgroupOp::Reduce(RedOp::Fadd), h, &[c]);
        assert_eq!(r[0].as_ref().unwrap()[0], 0x4200);
    }
}
