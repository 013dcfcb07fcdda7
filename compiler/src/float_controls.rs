//! What the float-controls execution modes (SPV_KHR_float_controls,
//! VK_KHR_shader_float_controls) can be honoured on a target: one table, read by the
//! compiler to reject a mode it cannot honour and by the driver to fill
//! `VkPhysicalDeviceFloatControlsProperties`.
//!
//! How each mode is honoured (docs/float-controls.md has the whole picture):
//! * cr0.0 is written at kernel start (docs/gen9.md 2.10): bits 5:4 rounding (one field for
//!   every width, hence rounding-mode independence NONE), bits 10/7/6 keep fp16/fp32/fp64
//!   denormals (one bit per width, hence denormal independence ALL).
//! * fp16 is computed in f32 and every result is rounded back with `mov HF <- F`, which
//!   rounds in cr0's mode and flushes or keeps an fp16 denormal result per bit 10. The f32
//!   intermediates never hold an f32 denormal (the smallest fp16 denormal is 2^-24, a
//!   product of two is at least 2^-48), so the fp32 bit cannot disturb fp16 values;
//!   round-toward-zero twice (f32, then fp16) is round-toward-zero once.
//! * fp64 on DF hardware: DF add/mul/mad/conversions follow cr0 (rounding and bit 6); the
//!   DF lowerings do not depend on the rounding mode (roundEven rounds the bits with
//!   integer operations). Software fp64 (`passes::soft_fp64`) is integer code that always
//!   rounds to nearest even and keeps denormals: there RTZ and flush-to-zero for 64-bit
//!   are not offered.
//! * SignedZeroInfNanPreserve: no pass rewrites a float expression in a way that loses
//!   -0, infinities or NaN (x*1 -> x, x+(-0) -> x and x-(+0) -> x are exact), for every width.

use crate::ir::{Denorm, FloatControls, Rounding, FLOAT_WIDTHS};
use crate::Target;

/// Per width `[fp16, fp32, fp64]`: whether the mode can be honoured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Support {
    pub denorm_preserve: [bool; 3],
    pub denorm_flush_to_zero: [bool; 3],
    pub rounding_rte: [bool; 3],
    pub rounding_rtz: [bool; 3],
    pub signed_zero_inf_nan_preserve: [bool; 3],
    /// Denormal modes may differ per width (cr0 has one bit per width).
    pub denorm_independent: bool,
    /// Rounding modes may differ per width (false: cr0 has one rounding field).
    pub rounding_independent: bool,
}

/// The modes `target` honours; `soft_fp64`: doubles go through the software lowering.
pub fn support(target: &Target, soft_fp64: bool) -> Support {
    let f16 = target.has_fp16;
    let df = !soft_fp64;
    Support {
        denorm_preserve: [f16, true, true],
        denorm_flush_to_zero: [f16, true, df],
        rounding_rte: [f16, true, true],
        rounding_rtz: [f16, true, df],
        signed_zero_inf_nan_preserve: [f16, true, true],
        denorm_independent: true,
        rounding_independent: false,
    }
}

/// Err names the first mode of `fc` that `s` cannot honour.
pub fn check(fc: &FloatControls, s: &Support) -> Result<(), String> {
    let rounding: Vec<Rounding> = fc
        .modes
        .iter()
        .map(|m| m.rounding)
        .filter(|r| *r != Rounding::Any)
        .collect();
    if !s.rounding_independent && rounding.windows(2).any(|w| w[0] != w[1]) {
        return Err("different rounding modes for different float widths".into());
    }
    for (i, (m, w)) in fc.modes.iter().zip(FLOAT_WIDTHS).enumerate() {
        let no = |what: &str| Err(format!("{what} for {w}-bit floats is not supported here"));
        match m.denorm {
            Denorm::Preserve if !s.denorm_preserve[i] => return no("DenormPreserve"),
            Denorm::FlushToZero if !s.denorm_flush_to_zero[i] => return no("DenormFlushToZero"),
            _ => {}
        }
        match m.rounding {
            Rounding::Rte if !s.rounding_rte[i] => return no("RoundingModeRTE"),
            Rounding::Rtz if !s.rounding_rtz[i] => return no("RoundingModeRTZ"),
            _ => {}
        }
        if m.signed_zero_inf_nan && !s.signed_zero_inf_nan_preserve[i] {
            return no("SignedZeroInfNanPreserve");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_fp64_offers_no_rtz_or_flush_for_doubles() {
        let native = support(&Target::gen9(), false);
        let soft = support(&Target::gen9(), true);
        let fc: FloatControls = "f64:rtz".parse().unwrap();
        assert!(check(&fc, &native).is_ok());
        assert!(check(&fc, &soft).unwrap_err().contains("RoundingModeRTZ"));
        let fc: FloatControls = "f64:denorm_flush_to_zero f32:denorm_preserve"
            .parse()
            .unwrap();
        assert!(check(&fc, &native).is_ok());
        assert!(check(&fc, &soft).is_err());
        let fc: FloatControls = "f64:denorm_preserve f64:rte".parse().unwrap();
        assert!(check(&fc, &soft).is_ok());
    }

    #[test]
    fn rounding_modes_must_agree_across_widths() {
        let s = support(&Target::gen9(), false);
        let fc: FloatControls = "f16:rtz f32:rtz".parse().unwrap();
        assert!(check(&fc, &s).is_ok());
        let fc: FloatControls = "f16:rtz f32:rte".parse().unwrap();
        assert!(check(&fc, &s).is_err());
    }

    #[test]
    fn fp16_modes_need_fp16() {
        let mut t = Target::gen9();
        t.has_fp16 = false;
        let fc: FloatControls = "f16:denorm_preserve".parse().unwrap();
        assert!(check(&fc, &support(&t, false)).is_err());
        assert!(check(&fc, &support(&Target::gen9(), false)).is_ok());
    }
}
