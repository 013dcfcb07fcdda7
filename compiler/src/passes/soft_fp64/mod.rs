//! Software fp64: rewrites every 64-bit float value and operation into 32-bit integer code,
//! so a target without DF hardware (`Target.has_fp64 == false`) can still offer
//! `shaderFloat64`, and `FERRITE_DEBUG=soft64` can force the same code on Gen9.
//!
//! # Representation
//! An `f64` component becomes two `i32` words, low word first (the memory order), so an
//! `f64xN` value is `2N` scalar `i32` values. The pass runs after `scalarize`, where every
//! ALU op is scalar and vectors remain only in `const`, `vec`, `extract`, `load`, `store`
//! and on structure edges; it rewrites those too: a vector `load`/`store` becomes `i32x4`
//! (or shorter) pieces 16 bytes apart, `if` results, `loop` parameters and results, and
//! the `yield`/`break`/`continue` arguments carry the words. After the pass no value of an
//! `f64` type remains (their old numbers are retyped `i32` and left undefined).
//!
//! # Semantics (what the interpreter's `eval` defines, bit for bit)
//! * `fadd`/`fsub`/`fmul`/`fdiv`/`fsqrt`/`ffma`: correctly rounded, round to nearest even,
//!   denormals preserved (inputs and results), overflow to infinity.
//! * `frcp` = `fdiv 1.0, x` and `frsq` = `fdiv 1.0, fsqrt x` (two roundings, exactly as
//!   `eval` computes them); `ffract` = `x - floor(x)`; `ldexp` is correctly rounded
//!   (denormal results too; `eval` scales in two products, the first exact); `frexp`
//!   normalizes denormal inputs.
//! * Any NaN an arithmetic op produces is the canonical quiet NaN `0x7ff8000000000000`
//!   (payloads do not propagate); `fneg`/`fabs`/`bcsel`/moves keep the bits;
//!   `ftrunc`/`ffloor`/`fceil`/`fround_even`/`fsign`/`frexp_sig` return a NaN input itself.
//! * `fmin`/`fmax` follow GLSL.std.450 NMin/NMax (a NaN operand yields the other operand)
//!   and order -0 below +0.
//! * `f2i`/`f2u`: round toward zero, saturating to the destination's range, NaN to 0
//!   (the Gen conversion rule `eval` models); `f2f` to f32/f16 rounds to nearest even with
//!   denormal results; f32/f16 to f64 is exact.
//! * `fexp2`/`flog2`/`fsin`/`fcos`/`fpow` have no 64-bit form in SPIR-V for Vulkan
//!   (GLSL.std.450 limits them to 16/32-bit floats); should one appear it is computed in f32
//!   and converted back.
//!
//! Multi-bit loops (`fdiv`, `fsqrt`: one quotient/root bit per iteration, 55 iterations)
//! keep the code small; every other op is straight-line code with `bcsel`, no branches.

use crate::builder::Builder;
use crate::hash::HashMap;
use crate::ir::*;

const SIGN: u32 = 0x8000_0000;
const EXP_INF: u32 = 0x7ff0_0000;
const QNAN_HI: u32 = 0x7ff8_0000;

fn is_f64(t: Type) -> bool {
    t.kind == Kind::Float && t.bits == 64
}

/// A 64-bit quantity as two 32-bit words.
#[derive(Clone, Copy, Debug)]
struct Words64 {
    hi: Value,
    lo: Value,
}

impl Words64 {
    /// The pair `w[i]` (high word), `w[i + 1]` (low word): loop state and loop results
    /// carry 64-bit quantities as consecutive words in that order.
    fn pair_at(w: &[Value], i: usize) -> Self {
        Words64 {
            hi: w[i],
            lo: w[i + 1],
        }
    }
}

/// The IR builder with the helpers soft fp64 emits its 32-bit integer code with (word
/// arithmetic, 64-bit quantities as two words, and the f64 operations themselves).
struct SoftBuilder<'a> {
    b: Builder<'a>,
}

/// The soft fp64 helpers extend the one builder: its own methods (`emit`, `alu`,
/// `new_value`, ...) are reached through the SoftBuilder.
impl<'a> std::ops::Deref for SoftBuilder<'a> {
    type Target = Builder<'a>;
    fn deref(&self) -> &Builder<'a> {
        &self.b
    }
}

impl<'a> std::ops::DerefMut for SoftBuilder<'a> {
    fn deref_mut(&mut self) -> &mut Builder<'a> {
        &mut self.b
    }
}

mod arith;
mod lower;
#[cfg(test)]
mod tests;

use lower::Lower;

/// Why an f64 construct has no software lowering.
type LowerResult<T> = Result<T, String>;

/// Replaces every f64 value and operation by 32-bit integer code (see the module comment).
/// Returns true if the function had any f64 value; an error (and the function unchanged)
/// for a construct with no lowering, such as an f64 atomic.
pub fn soft_fp64(f: &mut Function) -> Result<bool, String> {
    let mut any = false;
    f.for_each_node(&mut |n| match n {
        Node::Instr(i) => {
            any |= i.dst.is_some_and(|d| is_f64(f.values[d.0 as usize]))
                || i.op.srcs().iter().any(|s| is_f64(f.values[s.0 as usize]))
        }
        Node::If(i) => any |= i.results.iter().any(|r| is_f64(f.values[r.0 as usize])),
        Node::Loop(l) => any |= l.params.iter().any(|p| is_f64(f.values[p.0 .0 as usize])),
        _ => {}
    });
    if !any {
        return Ok(false);
    }
    // Lowered from copies: on an error the function is left as it was.
    let mut l = Lower {
        vals: f.values.clone(),
        map: HashMap::default(),
        defs: HashMap::default(),
        int_words: HashMap::default(),
    };
    let body = f.body.clone();
    f.body = l.block(body)?;
    // The replaced values are no longer defined or used; give them a harmless type.
    for t in &mut l.vals {
        if is_f64(*t) {
            *t = Type::I32.vec(t.comps);
        }
    }
    f.values = l.vals;
    Ok(true)
}
