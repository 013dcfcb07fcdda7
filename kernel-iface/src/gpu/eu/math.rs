//! The extended math unit (MATH opcode, docs/gen9.md 2.11).
//!
//! Single-precision functions are evaluated in f64 and rounded to nearest, which is at
//! least as precise as the PRM's documented precision (tests check against that, not bit
//! for bit). Denormal inputs and results follow the fp32 denormal mode.
//! Gen9 has no DF transcendentals: for DF only INVM and RSQRTM exist (the building blocks
//! of the Newton-Raphson macro sequences with MADM); they return the correctly rounded
//! 1/x and 1/sqrt(x) here, which is what a completed macro sequence computes.

use ferrite_isa::MathFunction;

use super::fp::flush_f32;

/// One single-precision math lane.
pub fn f32_op(m: MathFunction, x: f32, y: f32, denorm: bool) -> Result<f32, String> {
    let x = flush_f32(x, denorm) as f64;
    let y = flush_f32(y, denorm) as f64;
    let r = match m {
        MathFunction::Inv => 1.0 / x,
        MathFunction::Log => x.log2(),
        MathFunction::Exp => x.exp2(),
        MathFunction::Sqrt => x.sqrt(),
        MathFunction::Rsq => 1.0 / x.sqrt(),
        MathFunction::Sin => x.sin(),
        MathFunction::Cos => x.cos(),
        MathFunction::Fdiv => x / y,
        MathFunction::Pow => {
            // pow(x, y) = exp2(y * log2(x)): undefined (NaN) for x < 0.
            if x < 0.0 {
                f64::NAN
            } else {
                x.powf(y)
            }
        }
        MathFunction::Invm | MathFunction::Rsqrtm => {
            return Err("invm/rsqrtm take DF operands".into())
        }
        MathFunction::IntDiv | MathFunction::IntMod | MathFunction::IntDivMod => {
            return Err("integer division takes integer operands".into())
        }
    };
    Ok(flush_f32(r as f32, denorm))
}

/// One double-precision math lane (Gen9: only INVM and RSQRTM).
pub fn f64_op(m: MathFunction, x: f64, _y: f64) -> Result<f64, String> {
    match m {
        MathFunction::Invm => Ok(1.0 / x),
        MathFunction::Rsqrtm => Ok(1.0 / x.sqrt()),
        other => Err(format!("{} has no DF form on Gen9", other.name())),
    }
}

/// Integer division of 32-bit values: (quotient, remainder), truncating toward zero.
/// Division by zero (undefined by the PRM for compute use) gives quotient all ones and
/// remainder = dividend; INT_MIN / -1 wraps to INT_MIN with remainder 0.
pub fn int_div(a: i128, b: i128, signed: bool) -> (i128, i128) {
    if signed {
        let (a, b) = (a as i32, b as i32);
        if b == 0 {
            return (-1, a as i128);
        }
        (a.wrapping_div(b) as i128, a.wrapping_rem(b) as i128)
    } else {
        let (a, b) = (a as u32, b as u32);
        if b == 0 {
            return (u32::MAX as i128, a as i128);
        }
        ((a / b) as i128, (a % b) as i128)
    }
}
