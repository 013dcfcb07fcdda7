//! Float controls: the SPV_KHR_float_controls execution modes of a function (denormal
//! handling and rounding asked of each float width), part of [`super::Function`].

use std::fmt;

/// Denormal handling asked of one float width.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Denorm {
    /// No mode: the implementation may flush or keep.
    #[default]
    Any,
    /// `DenormPreserve`.
    Preserve,
    /// `DenormFlushToZero`.
    FlushToZero,
}

/// Rounding asked of one float width.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Rounding {
    /// No mode: round to nearest even or toward zero, the implementation's choice.
    #[default]
    Any,
    /// `RoundingModeRTE`.
    Rte,
    /// `RoundingModeRTZ`.
    Rtz,
}

/// The modes of one float width.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct FloatMode {
    pub denorm: Denorm,
    pub rounding: Rounding,
    /// `SignedZeroInfNanPreserve`: no transformation may assume away -0, inf or NaN.
    pub signed_zero_inf_nan: bool,
}

/// Float execution modes per width: `[fp16, fp32, fp64]`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct FloatControls {
    pub modes: [FloatMode; 3],
}

/// The widths [`FloatControls::modes`] is indexed by.
pub const FLOAT_WIDTHS: [u8; 3] = [16, 32, 64];

impl FloatControls {
    /// Index into `modes` of a float bit size (None for other sizes).
    pub fn index(bits: u8) -> Option<usize> {
        FLOAT_WIDTHS.iter().position(|w| *w == bits)
    }
    /// The modes of width `bits` (defaults for a size that is not a float width).
    pub fn mode(&self, bits: u8) -> FloatMode {
        Self::index(bits).map(|i| self.modes[i]).unwrap_or_default()
    }
    pub fn mode_mut(&mut self, bits: u8) -> Option<&mut FloatMode> {
        Self::index(bits).map(|i| &mut self.modes[i])
    }
    pub fn is_default(&self) -> bool {
        *self == FloatControls::default()
    }
    /// Some width asks for round toward zero (the hardware has one rounding field, so
    /// every float result of the kernel is then rounded toward zero).
    pub fn any_rtz(&self) -> bool {
        self.modes.iter().any(|m| m.rounding == Rounding::Rtz)
    }
    /// Whether folding a float operation of width `bits` at compile time (round to
    /// nearest even, denormals kept, as `eval` does) could differ from the kernel.
    pub fn folding_unsafe(&self, bits: u8) -> bool {
        self.any_rtz() || self.mode(bits).denorm == Denorm::FlushToZero
    }
}

impl fmt::Display for FloatControls {
    /// `f16:denorm_preserve f32:rtz f64:signed_zero_inf_nan ...` (nothing for defaults).
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let mut first = true;
        let mut put = |f: &mut fmt::Formatter, w: u8, what: &str| {
            let sep = if first { "" } else { " " };
            first = false;
            write!(f, "{sep}f{w}:{what}")
        };
        for (m, w) in self.modes.iter().zip(FLOAT_WIDTHS) {
            match m.denorm {
                Denorm::Any => {}
                Denorm::Preserve => put(f, w, "denorm_preserve")?,
                Denorm::FlushToZero => put(f, w, "denorm_flush_to_zero")?,
            }
            match m.rounding {
                Rounding::Any => {}
                Rounding::Rte => put(f, w, "rte")?,
                Rounding::Rtz => put(f, w, "rtz")?,
            }
            if m.signed_zero_inf_nan {
                put(f, w, "signed_zero_inf_nan_preserve")?;
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for FloatControls {
    type Err = String;
    /// Parses what [`fmt::Display`] prints.
    fn from_str(s: &str) -> Result<FloatControls, String> {
        let mut fc = FloatControls::default();
        for tok in s.split_whitespace() {
            let (w, what) = tok
                .strip_prefix('f')
                .and_then(|t| t.split_once(':'))
                .ok_or_else(|| format!("bad float control '{tok}'"))?;
            let m = w
                .parse::<u8>()
                .ok()
                .and_then(|w| fc.mode_mut(w))
                .ok_or_else(|| format!("bad float width in '{tok}'"))?;
            match what {
                "denorm_preserve" => m.denorm = Denorm::Preserve,
                "denorm_flush_to_zero" => m.denorm = Denorm::FlushToZero,
                "rte" => m.rounding = Rounding::Rte,
                "rtz" => m.rounding = Rounding::Rtz,
                "signed_zero_inf_nan_preserve" => m.signed_zero_inf_nan = true,
                _ => return Err(format!("unknown float control '{tok}'")),
            }
        }
        Ok(fc)
    }
}
