//! Subgroup (`GroupNonUniform*`) operations of the IR.
//!
//! A subgroup is the set of invocations one EU thread runs: its size is the SIMD width of
//! the compiled variant. Every operation reads only the *active* invocations of the
//! subgroup (those whose control flow reaches the instruction), so no pass may move one
//! across control flow, merge two of them, or remove one whose result is read: the IR
//! treats them as having side effects.

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

    /// The identity of the operation on 32-bit values, as bits: what an inactive
    /// invocation contributes.
    pub fn identity32(self) -> u32 {
        match self {
            RedOp::Iadd | RedOp::Or | RedOp::Xor | RedOp::Umax => 0,
            RedOp::Fadd => 0x8000_0000, // -0.0: x + -0.0 == x for every x, -0.0 included
            RedOp::Imul => 1,
            RedOp::Fmul => 1.0f32.to_bits(),
            RedOp::Imin => i32::MAX as u32,
            RedOp::Umin | RedOp::And => u32::MAX,
            RedOp::Fmin => f32::INFINITY.to_bits(),
            RedOp::Imax => i32::MIN as u32,
            RedOp::Fmax => f32::NEG_INFINITY.to_bits(),
        }
    }

    /// Combines two 32-bit values (the CPU semantics the interpreter uses).
    pub fn apply32(self, a: u32, b: u32) -> u32 {
        let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
        match self {
            RedOp::Iadd => a.wrapping_add(b),
            RedOp::Fadd => (fa + fb).to_bits(),
            RedOp::Imul => a.wrapping_mul(b),
            RedOp::Fmul => (fa * fb).to_bits(),
            RedOp::Imin => (a as i32).min(b as i32) as u32,
            RedOp::Umin => a.min(b),
            RedOp::Fmin => fa.min(fb).to_bits(),
            RedOp::Imax => (a as i32).max(b as i32) as u32,
            RedOp::Umax => a.max(b),
            RedOp::Fmax => fa.max(fb).to_bits(),
            RedOp::And => a & b,
            RedOp::Or => a | b,
            RedOp::Xor => a ^ b,
        }
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

/// The subgroup semantics over one subgroup, for the interpreter: `vals[i]` is the first
/// component of invocation i's sources (None when inactive); returns the result of each
/// active invocation. 32-bit values and booleans (0 / 1) only.
pub fn eval_subgroup(op: SubgroupOp, srcs: &[Vec<Option<u64>>]) -> Vec<Option<Vec<u64>>> {
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
            let r = act.iter().all(|&i| x(i) == x(first.unwrap_or(0)));
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
            let v = act
                .iter()
                .fold(r.identity32(), |a, &i| r.apply32(a, x(i) as u32));
            per_lane(&|_| vec![u64::from(v)])
        }
        SubgroupOp::ClusteredReduce(r, size) => per_lane(&|i| {
            let c = i / usize::from(size.max(1));
            let v = act
                .iter()
                .filter(|&&j| j / usize::from(size.max(1)) == c)
                .fold(r.identity32(), |a, &j| r.apply32(a, x(j) as u32));
            vec![u64::from(v)]
        }),
        SubgroupOp::InclusiveScan(r) | SubgroupOp::ExclusiveScan(r) => {
            let incl = matches!(op, SubgroupOp::InclusiveScan(_));
            per_lane(&|i| {
                let v = act
                    .iter()
                    .filter(|&&j| j < i || (incl && j == i))
                    .fold(r.identity32(), |a, &j| r.apply32(a, x(j) as u32));
                vec![u64::from(v)]
            })
        }
    }
}
