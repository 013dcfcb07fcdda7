//! The Gen9 surface formats Vulkan compute needs, as one table shared by the driver (format
//! properties, RENDER_SURFACE_STATE), the compiler (storage-image lowering) and the simulated
//! GPU (typed messages and the sampler), plus a texel codec.
//!
//! Each [`SurfaceFormat`] is the hardware's SURFACE_FORMAT number (RENDER_SURFACE_STATE
//! DW0 bits 27:18; the numbering is Mesa's `isl_format`). [`SurfaceFormat::info`] gives its
//! [`FormatInfo`]: size, channel layout, what the Gen9 sampler and the typed data-port
//! messages can do with it, and — for storage images the typed messages cannot read — the
//! [`StorageAccess::Lowered`] format the shader reads and writes instead (docs/images.md,
//! "Format table").
//!
//! Values in registers ("register bits", `[u32; 4]` in R, G, B, A order) are what the sampler
//! returns and typed messages carry: `f32` bits for UNORM/SNORM/sRGB/FLOAT formats, the
//! integer for UINT/SINT formats. Missing channels read as 0 (G, B) and 1 (A; 1.0 for
//! float-class formats). Conversions follow the Vulkan spec's "Fixed-Point Data
//! Conversions" and "Floating Point Computation" rules: UNORM `c / (2^b - 1)`, SNORM
//! `max(c / (2^(b-1) - 1), -1)`, sRGB with the spec's transfer function, 16/11/10-bit
//! floats and the shared-exponent format with round-to-nearest-even.

use std::fmt;

/// How one channel's bits are interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelKind {
    Unorm,
    Snorm,
    Uint,
    Sint,
    /// IEEE-style float: 32 (f32), 16 (f16), 11 or 10 bits (unsigned, 5-bit exponent).
    Float,
    /// UNORM storage with the sRGB transfer function (colour channels only; alpha is UNORM).
    Srgb,
    /// A mantissa of the shared-exponent format (R9G9B9E5); the exponent channel is `Exponent`.
    SharedMantissa,
    /// The 5-bit shared exponent of R9G9B9E5.
    Exponent,
}

/// What a texel of the format reads as in registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NumericClass {
    /// UNORM, SNORM, sRGB and float formats: f32 values.
    Float,
    Uint,
    Sint,
}

/// One channel stored in a texel: its component (0 = R, 1 = G, 2 = B, 3 = A, 4 = the
/// shared exponent), its width and its kind. [`FormatInfo::channels`] lists them from the
/// lowest bits of the texel upward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Channel {
    pub comp: u8,
    pub bits: u8,
    pub kind: ChannelKind,
}

/// How a storage image of this format is accessed with typed surface messages on Gen9.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageAccess {
    /// Typed read and write work on the format itself (the data port converts).
    Native,
    /// The typed messages cannot read the format. The surface state of the storage image
    /// uses `via` (a UINT format of the same size per texel) for both reads and writes;
    /// the shader receives the texel's raw bits (lowest bits in the first dword; `via`
    /// R32G32_UINT gives two dwords, R16_UINT/R8_UINT the low bits of one dword), unpacks
    /// each [`Channel`] at its bit offset and converts it by its kind (and packs the other
    /// way for writes). [`SurfaceFormat::decode`]/[`SurfaceFormat::encode`] are the
    /// reference for those conversions.
    Lowered { via: SurfaceFormat },
    /// Not usable as a storage image on Gen9.
    Unsupported,
}

/// Everything the driver, compiler and simulator need to know about one surface format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatInfo {
    pub format: SurfaceFormat,
    /// Bits per element (texel).
    pub bpe: u32,
    /// Stored channels from the lowest bits upward.
    pub channels: &'static [Channel],
    /// The Gen9 sampler can read (ld, sample, gather4) the format.
    pub sample: bool,
    /// The Gen9 sampler can filter it linearly.
    pub filter: bool,
    /// Typed surface read / write / atomic messages accept the format natively.
    pub typed_read: bool,
    pub typed_write: bool,
    pub typed_atomic: bool,
    /// How storage images of the format are accessed.
    pub storage: StorageAccess,
}

macro_rules! formats {
    ($( $name:ident = $num:literal, $bpe:literal, [$($ch:expr),*], sample $s:literal,
        filter $f:literal, typed $tr:literal $tw:literal $ta:literal, $st:expr; )*) => {
        /// A Gen9 SURFACE_FORMAT value (the subset Vulkan compute needs). `as u32` gives the
        /// hardware number.
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        pub enum SurfaceFormat { $($name = $num,)* }

        /// Every format of the table, in hardware-number order.
        pub const ALL_FORMATS: &[SurfaceFormat] = &[$(SurfaceFormat::$name,)*];

        static INFOS: &[FormatInfo] = &[$(FormatInfo {
            format: SurfaceFormat::$name,
            bpe: $bpe,
            channels: &[$($ch),*],
            sample: $s,
            filter: $f,
            typed_read: $tr,
            typed_write: $tw,
            typed_atomic: $ta,
            storage: $st,
        },)*];

        impl SurfaceFormat {
            /// The format with hardware number `n`, if it is in the table.
            pub fn from_hw(n: u32) -> Option<SurfaceFormat> {
                match n { $($num => Some(SurfaceFormat::$name),)* _ => None }
            }

            /// The format's name as the PRM spells it (e.g. `R8G8B8A8_UNORM`).
            pub fn name(self) -> &'static str {
                match self { $(SurfaceFormat::$name => stringify!($name),)* }
            }
        }
    };
}

const fn ch(comp: u8, bits: u8, kind: ChannelKind) -> Channel {
    Channel { comp, bits, kind }
}

use ChannelKind::{Exponent as E, Float as F, SharedMantissa as M, Sint as S, Snorm as SN};
use ChannelKind::{Srgb as SR, Uint as U, Unorm as UN};
use StorageAccess::{Lowered, Native, Unsupported as NoStorage};

const R: u8 = 0;
const G: u8 = 1;
const B: u8 = 2;
const A: u8 = 3;

// Sampler, filter and typed read/write/atomic columns: the PRM's surface-format support
// table for Gen9 (Mesa's isl records the same table). Storage lowering: the PRM's typed-read
// list (docs/images.md, "Format table").
formats! {
    R32G32B32A32_FLOAT = 0, 128, [ch(R,32,F), ch(G,32,F), ch(B,32,F), ch(A,32,F)],
        sample true, filter true, typed true true false, Native;
    R32G32B32A32_SINT = 1, 128, [ch(R,32,S), ch(G,32,S), ch(B,32,S), ch(A,32,S)],
        sample true, filter false, typed true true false, Native;
    R32G32B32A32_UINT = 2, 128, [ch(R,32,U), ch(G,32,U), ch(B,32,U), ch(A,32,U)],
        sample true, filter false, typed true true false, Native;
    R32G32B32_FLOAT = 64, 96, [ch(R,32,F), ch(G,32,F), ch(B,32,F)],
        sample true, filter true, typed false false false, NoStorage;
    R32G32B32_SINT = 65, 96, [ch(R,32,S), ch(G,32,S), ch(B,32,S)],
        sample true, filter false, typed false false false, NoStorage;
    R32G32B32_UINT = 66, 96, [ch(R,32,U), ch(G,32,U), ch(B,32,U)],
        sample true, filter false, typed false false false, NoStorage;
    R16G16B16A16_UNORM = 128, 64, [ch(R,16,UN), ch(G,16,UN), ch(B,16,UN), ch(A,16,UN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R32G32_UINT };
    R16G16B16A16_SNORM = 129, 64, [ch(R,16,SN), ch(G,16,SN), ch(B,16,SN), ch(A,16,SN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R32G32_UINT };
    R16G16B16A16_SINT = 130, 64, [ch(R,16,S), ch(G,16,S), ch(B,16,S), ch(A,16,S)],
        sample true, filter false, typed true true false, Native;
    R16G16B16A16_UINT = 131, 64, [ch(R,16,U), ch(G,16,U), ch(B,16,U), ch(A,16,U)],
        sample true, filter false, typed true true false, Native;
    R16G16B16A16_FLOAT = 132, 64, [ch(R,16,F), ch(G,16,F), ch(B,16,F), ch(A,16,F)],
        sample true, filter true, typed true true false, Native;
    R32G32_FLOAT = 133, 64, [ch(R,32,F), ch(G,32,F)],
        sample true, filter true, typed true true false, Native;
    R32G32_SINT = 134, 64, [ch(R,32,S), ch(G,32,S)],
        sample true, filter false, typed true true false, Native;
    R32G32_UINT = 135, 64, [ch(R,32,U), ch(G,32,U)],
        sample true, filter false, typed true true false, Native;
    B8G8R8A8_UNORM = 192, 32, [ch(B,8,UN), ch(G,8,UN), ch(R,8,UN), ch(A,8,UN)],
        sample true, filter true, typed false true false, NoStorage;
    B8G8R8A8_UNORM_SRGB = 193, 32, [ch(B,8,SR), ch(G,8,SR), ch(R,8,SR), ch(A,8,UN)],
        sample true, filter true, typed false false false, NoStorage;
    R10G10B10A2_UNORM = 194, 32, [ch(R,10,UN), ch(G,10,UN), ch(B,10,UN), ch(A,2,UN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R32_UINT };
    R10G10B10A2_UINT = 196, 32, [ch(R,10,U), ch(G,10,U), ch(B,10,U), ch(A,2,U)],
        sample true, filter false, typed false true false,
        Lowered { via: SurfaceFormat::R32_UINT };
    R8G8B8A8_UNORM = 199, 32, [ch(R,8,UN), ch(G,8,UN), ch(B,8,UN), ch(A,8,UN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R32_UINT };
    R8G8B8A8_UNORM_SRGB = 200, 32, [ch(R,8,SR), ch(G,8,SR), ch(B,8,SR), ch(A,8,UN)],
        sample true, filter true, typed false false false, NoStorage;
    R8G8B8A8_SNORM = 201, 32, [ch(R,8,SN), ch(G,8,SN), ch(B,8,SN), ch(A,8,SN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R32_UINT };
    R8G8B8A8_SINT = 202, 32, [ch(R,8,S), ch(G,8,S), ch(B,8,S), ch(A,8,S)],
        sample true, filter false, typed true true false, Native;
    R8G8B8A8_UINT = 203, 32, [ch(R,8,U), ch(G,8,U), ch(B,8,U), ch(A,8,U)],
        sample true, filter false, typed true true false, Native;
    R16G16_UNORM = 204, 32, [ch(R,16,UN), ch(G,16,UN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R32_UINT };
    R16G16_SNORM = 205, 32, [ch(R,16,SN), ch(G,16,SN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R32_UINT };
    R16G16_SINT = 206, 32, [ch(R,16,S), ch(G,16,S)],
        sample true, filter false, typed true true false, Native;
    R16G16_UINT = 207, 32, [ch(R,16,U), ch(G,16,U)],
        sample true, filter false, typed true true false, Native;
    R16G16_FLOAT = 208, 32, [ch(R,16,F), ch(G,16,F)],
        sample true, filter true, typed true true false, Native;
    B10G10R10A2_UNORM = 209, 32, [ch(B,10,UN), ch(G,10,UN), ch(R,10,UN), ch(A,2,UN)],
        sample true, filter true, typed false true false, NoStorage;
    B10G10R10A2_UNORM_SRGB = 210, 32, [ch(B,10,SR), ch(G,10,SR), ch(R,10,SR), ch(A,2,UN)],
        sample true, filter true, typed false false false, NoStorage;
    R11G11B10_FLOAT = 211, 32, [ch(R,11,F), ch(G,11,F), ch(B,10,F)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R32_UINT };
    R32_SINT = 214, 32, [ch(R,32,S)],
        sample true, filter false, typed true true true, Native;
    R32_UINT = 215, 32, [ch(R,32,U)],
        sample true, filter false, typed true true true, Native;
    R32_FLOAT = 216, 32, [ch(R,32,F)],
        sample true, filter true, typed true true false, Native;
    R9G9B9E5_SHAREDEXP = 237, 32, [ch(R,9,M), ch(G,9,M), ch(B,9,M), ch(4,5,E)],
        sample true, filter true, typed false false false, NoStorage;
    B5G6R5_UNORM = 256, 16, [ch(B,5,UN), ch(G,6,UN), ch(R,5,UN)],
        sample true, filter true, typed false true false, NoStorage;
    B5G5R5A1_UNORM = 258, 16, [ch(B,5,UN), ch(G,5,UN), ch(R,5,UN), ch(A,1,UN)],
        sample true, filter true, typed false true false, NoStorage;
    B4G4R4A4_UNORM = 260, 16, [ch(B,4,UN), ch(G,4,UN), ch(R,4,UN), ch(A,4,UN)],
        sample true, filter true, typed false true false, NoStorage;
    R8G8_UNORM = 262, 16, [ch(R,8,UN), ch(G,8,UN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R16_UINT };
    R8G8_SNORM = 263, 16, [ch(R,8,SN), ch(G,8,SN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R16_UINT };
    R8G8_SINT = 264, 16, [ch(R,8,S), ch(G,8,S)],
        sample true, filter false, typed true true false, Native;
    R8G8_UINT = 265, 16, [ch(R,8,U), ch(G,8,U)],
        sample true, filter false, typed true true false, Native;
    R16_UNORM = 266, 16, [ch(R,16,UN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R16_UINT };
    R16_SNORM = 267, 16, [ch(R,16,SN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R16_UINT };
    R16_SINT = 268, 16, [ch(R,16,S)],
        sample true, filter false, typed true true false, Native;
    R16_UINT = 269, 16, [ch(R,16,U)],
        sample true, filter false, typed true true false, Native;
    R16_FLOAT = 270, 16, [ch(R,16,F)],
        sample true, filter true, typed true true false, Native;
    A4B4G4R4_UNORM = 293, 16, [ch(A,4,UN), ch(B,4,UN), ch(G,4,UN), ch(R,4,UN)],
        sample true, filter true, typed false false false, NoStorage;
    R8_UNORM = 320, 8, [ch(R,8,UN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R8_UINT };
    R8_SNORM = 321, 8, [ch(R,8,SN)],
        sample true, filter true, typed false true false,
        Lowered { via: SurfaceFormat::R8_UINT };
    R8_SINT = 322, 8, [ch(R,8,S)],
        sample true, filter false, typed true true false, Native;
    R8_UINT = 323, 8, [ch(R,8,U)],
        sample true, filter false, typed true true false, Native;
}

impl fmt::Display for SurfaceFormat {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl SurfaceFormat {
    /// The format's table entry.
    pub fn info(self) -> &'static FormatInfo {
        // The table is in hardware-number order, like ALL_FORMATS.
        let i = ALL_FORMATS.partition_point(|f| *f < self);
        &INFOS[i]
    }

    /// Bytes per texel.
    pub fn bytes_per_texel(self) -> u32 {
        self.info().bpe / 8
    }

    /// What the format's texels read as in registers.
    pub fn numeric_class(self) -> NumericClass {
        match self.info().channels[0].kind {
            ChannelKind::Uint => NumericClass::Uint,
            ChannelKind::Sint => NumericClass::Sint,
            _ => NumericClass::Float,
        }
    }

    /// The format a storage image of this format is bound with (RENDER_SURFACE_STATE
    /// SurfaceFormat for typed messages): itself when typed reads and writes are native,
    /// the lowering's UINT format when lowered, None when Gen9 has no storage access.
    pub fn storage_surface_format(self) -> Option<SurfaceFormat> {
        match self.info().storage {
            StorageAccess::Native => Some(self),
            StorageAccess::Lowered { via } => Some(via),
            StorageAccess::Unsupported => None,
        }
    }

    /// Number of channels (dwords per lane) a typed read of this format returns with data
    /// (components beyond it read as 0 / 1): 1 for R formats, 2 for RG, 4 for RGBA.
    pub fn typed_channels(self) -> u32 {
        let i = self.info();
        i.channels
            .iter()
            .map(|c| c.comp as u32 + 1)
            .max()
            .unwrap_or(1)
            .min(4)
    }

    /// Whether component `comp` (0 = R .. 3 = A) is stored.
    pub fn has_component(self, comp: u8) -> bool {
        (self.is_shared_exponent() && comp < 3)
            || self.info().channels.iter().any(|c| c.comp == comp)
    }

    fn is_shared_exponent(self) -> bool {
        self == SurfaceFormat::R9G9B9E5_SHAREDEXP
    }

    /// The channels with their bit offsets in the texel: `(offset, channel)`, lowest first.
    pub fn channel_fields(self) -> impl Iterator<Item = (u32, Channel)> {
        let mut off = 0u32;
        self.info().channels.iter().map(move |c| {
            let o = off;
            off += c.bits as u32;
            (o, *c)
        })
    }

    /// The register bits of a component the format does not store (0, 0, 0, 1).
    pub fn missing_component(self, comp: usize) -> u32 {
        match (comp, self.numeric_class()) {
            (3, NumericClass::Float) => 1.0f32.to_bits(),
            (3, _) => 1,
            _ => 0,
        }
    }

    /// Decodes one texel (the first [`bytes_per_texel`](Self::bytes_per_texel) bytes of
    /// `bytes`, little-endian) to register bits in R, G, B, A order.
    pub fn decode(self, bytes: &[u8]) -> [u32; 4] {
        let n = self.bytes_per_texel() as usize;
        let mut raw = [0u8; 16];
        raw[..n].copy_from_slice(&bytes[..n]);
        let word = u128::from_le_bytes(raw);
        let mut out = [0u32; 4];
        for (c, o) in out.iter_mut().enumerate() {
            *o = self.missing_component(c);
        }
        if self.is_shared_exponent() {
            let e = ((word >> 27) & 0x1F) as i32;
            for (c, o) in out.iter_mut().take(3).enumerate() {
                let m = ((word >> (9 * c)) & 0x1FF) as f32;
                *o = (m * 2f32.powi(e - 15 - 9)).to_bits();
            }
            return out;
        }
        for (off, c) in self.channel_fields() {
            let v = ((word >> off) as u64 & mask(c.bits)) as u32;
            out[c.comp as usize] = decode_channel(v, c.bits as u32, c.kind);
        }
        out
    }

    /// Encodes register bits (R, G, B, A; f32 bits for float-class formats) into one texel,
    /// written to the first [`bytes_per_texel`](Self::bytes_per_texel) bytes of `out`.
    /// Integer values out of the channel's range are clamped to it; floats are converted
    /// as the Vulkan spec's conversion rules say (clamped for UNORM/SNORM, rounded to
    /// nearest even for narrow floats).
    pub fn encode(self, rgba: [u32; 4], out: &mut [u8]) {
        let n = self.bytes_per_texel() as usize;
        let word: u128 = if self.is_shared_exponent() {
            let rgb = [0, 1, 2].map(|c| f32::from_bits(rgba[c]));
            encode_rgb9e5(rgb) as u128
        } else {
            let mut w = 0u128;
            for (off, c) in self.channel_fields() {
                let v = encode_channel(rgba[c.comp as usize], c.bits as u32, c.kind);
                w |= ((v as u64 & mask(c.bits)) as u128) << off;
            }
            w
        };
        out[..n].copy_from_slice(&word.to_le_bytes()[..n]);
    }
}

fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// One stored channel value to register bits.
pub fn decode_channel(v: u32, bits: u32, kind: ChannelKind) -> u32 {
    match kind {
        ChannelKind::Uint => v,
        ChannelKind::Sint => ((v << (32 - bits)) as i32 >> (32 - bits)) as u32,
        ChannelKind::Unorm => unorm_to_f32(v, bits).to_bits(),
        ChannelKind::Snorm => {
            let s = (v << (32 - bits)) as i32 >> (32 - bits);
            let max = ((1u64 << (bits - 1)) - 1) as f64;
            ((s as f64 / max).max(-1.0) as f32).to_bits()
        }
        ChannelKind::Srgb => srgb_to_linear(unorm_to_f32(v, bits)).to_bits(),
        ChannelKind::Float => match bits {
            32 => v,
            16 => f16_to_f32(v as u16).to_bits(),
            11 | 10 => small_float_to_f32(v, bits - 5).to_bits(),
            _ => 0,
        },
        // Handled per texel (the exponent is shared).
        ChannelKind::SharedMantissa | ChannelKind::Exponent => v,
    }
}

/// Register bits to one stored channel value (the low `bits` bits of the result).
pub fn encode_channel(v: u32, bits: u32, kind: ChannelKind) -> u32 {
    let max = mask(bits as u8) as u32;
    match kind {
        ChannelKind::Uint => v.min(max),
        ChannelKind::Sint => {
            let lo = -(1i64 << (bits - 1));
            let hi = (1i64 << (bits - 1)) - 1;
            ((v as i32 as i64).clamp(lo, hi) as u32) & max
        }
        ChannelKind::Unorm => f32_to_unorm(f32::from_bits(v), bits),
        ChannelKind::Srgb => f32_to_unorm(linear_to_srgb(f32::from_bits(v)), bits),
        ChannelKind::Snorm => {
            let f = f32::from_bits(v);
            let f = if f.is_nan() { 0.0 } else { f.clamp(-1.0, 1.0) };
            let m = ((1u64 << (bits - 1)) - 1) as f64;
            ((f as f64 * m).round_ties_even() as i32 as u32) & max
        }
        ChannelKind::Float => match bits {
            32 => v,
            16 => f32_to_f16(f32::from_bits(v)) as u32,
            11 | 10 => f32_to_small_float(f32::from_bits(v), bits - 5),
            _ => 0,
        },
        ChannelKind::SharedMantissa | ChannelKind::Exponent => v & max,
    }
}

/// UNORM `c / (2^bits - 1)`.
pub fn unorm_to_f32(c: u32, bits: u32) -> f32 {
    (c as f64 / mask(bits as u8) as f64) as f32
}

/// The spec's float-to-UNORM conversion: clamp to [0, 1] (NaN to 0), scale, round to the
/// nearest integer (ties to even).
pub fn f32_to_unorm(f: f32, bits: u32) -> u32 {
    let f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
    (f as f64 * mask(bits as u8) as f64).round_ties_even() as u32
}

/// The sRGB EOTF (Vulkan spec, "sRGB transfer functions"): stored value to linear.
pub fn srgb_to_linear(c: f32) -> f32 {
    let c = c as f64;
    (if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }) as f32
}

/// The inverse: linear to the stored sRGB value (clamped to [0, 1]).
pub fn linear_to_srgb(l: f32) -> f32 {
    let l = if l.is_nan() {
        0.0
    } else {
        l.clamp(0.0, 1.0) as f64
    };
    (if l <= 0.0031308 {
        l * 12.92
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    }) as f32
}

/// IEEE binary16 to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let v = small_float_to_f32(u32::from(h & 0x7FFF), 10);
    sign * v
}

/// f32 to IEEE binary16, rounding to nearest even; overflow gives infinity, NaN stays NaN.
pub fn f32_to_f16(f: f32) -> u16 {
    let sign = ((f.to_bits() >> 16) & 0x8000) as u16;
    if f.is_nan() {
        return 0x7E00;
    }
    sign | f32_to_small_float(f.abs(), 10) as u16
}

/// An unsigned float with a 5-bit exponent (bias 15) and `mant` mantissa bits: the
/// encoding of f16 magnitudes (10), the 11-bit (6) and 10-bit (5) floats.
pub fn small_float_to_f32(v: u32, mant: u32) -> f32 {
    let e = (v >> mant) & 0x1F;
    let m = v & ((1 << mant) - 1);
    let scale = (1u32 << mant) as f32;
    match e {
        0 => m as f32 / scale * 2f32.powi(-14),
        31 if m == 0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + m as f32 / scale) * 2f32.powi(e as i32 - 15),
    }
}

/// f32 to the unsigned 5-bit-exponent float with `mant` mantissa bits, round to nearest
/// even. Negative values (and -0) give 0 (the 11/10-bit formats have no sign); values
/// beyond the largest finite one round to infinity; NaN gives a NaN.
pub fn f32_to_small_float(f: f32, mant: u32) -> u32 {
    let inf = 0x1F << mant;
    if f.is_nan() {
        return inf | (1 << (mant - 1));
    }
    if f <= 0.0 {
        return 0;
    }
    if f.is_infinite() {
        return inf;
    }
    // Work on the exact value as an integer multiple of the target's quantum at this
    // magnitude: quantum = 2^(max(exp, -14) - mant).
    // The binary exponent straight from the bits (f32 denormals are far below -14).
    let exp = ((f.to_bits() >> 23) & 0xFF) as i32 - 127;
    let exp = exp.max(-14);
    let quantum_log2 = exp - mant as i32;
    // f / quantum is exact in f64 (f32 has 24 mantissa bits).
    let q = (f as f64) * 2f64.powi(-quantum_log2);
    let n = q.round_ties_even() as u64;
    // n is in [2^mant, 2^(mant+1)] for normals, [0, 2^mant] for denormals.
    let (mut e, mut m) = if exp == -14 && n < (1 << mant) {
        (0u32, n as u32)
    } else {
        ((exp + 15) as u32, (n - (1 << mant)) as u32)
    };
    if m == 1 << mant {
        e += 1;
        m = 0;
    }
    if e >= 31 {
        return inf;
    }
    (e << mant) | m
}

/// The shared-exponent encoding the Vulkan spec gives for E5B9G9R9 (N = 9 mantissa bits,
/// B = 15, Emax = 31): clamp, shared exponent from the largest channel, round to nearest.
pub fn encode_rgb9e5(rgb: [f32; 3]) -> u32 {
    const N: i32 = 9;
    const BIAS: i32 = 15;
    let sharedexp_max = ((1 << N) - 1) as f64 / (1 << N) as f64 * 2f64.powi(31 - BIAS);
    let c: [f64; 3] = rgb.map(|v| {
        if v.is_nan() {
            0.0
        } else {
            (v as f64).clamp(0.0, sharedexp_max)
        }
    });
    let maxc = c[0].max(c[1]).max(c[2]);
    let exp_p = if maxc > 0.0 {
        (maxc.log2().floor() as i32).max(-BIAS - 1) + 1 + BIAS
    } else {
        0
    };
    let exp_p = exp_p.max(0);
    let maxs = (maxc / 2f64.powi(exp_p - BIAS - N) + 0.5).floor() as i64;
    let exp_s = if maxs == 1 << N { exp_p + 1 } else { exp_p };
    let mut word = (exp_s as u32) << 27;
    for (i, v) in c.iter().enumerate() {
        let s = (v / 2f64.powi(exp_s - BIAS - N) + 0.5).floor() as u32;
        word |= s.min(511) << (9 * i);
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f32) -> u32 {
        v.to_bits()
    }

    fn roundtrip(fmt: SurfaceFormat, rgba: [u32; 4]) -> [u32; 4] {
        let mut b = [0u8; 16];
        fmt.encode(rgba, &mut b);
        fmt.decode(&b)
    }

    #[test]
    fn table_is_sorted_and_consistent() {
        for w in ALL_FORMATS.windows(2) {
            assert!(w[0] < w[1], "{} before {}", w[0], w[1]);
        }
        for &fmt in ALL_FORMATS {
            let i = fmt.info();
            assert_eq!(i.format, fmt);
            assert_eq!(SurfaceFormat::from_hw(fmt as u32), Some(fmt));
            let bits: u32 = i.channels.iter().map(|c| c.bits as u32).sum();
            assert_eq!(bits, i.bpe, "{fmt}: channel bits");
            if i.filter {
                assert!(i.sample, "{fmt} filters but does not sample");
                assert_eq!(fmt.numeric_class(), NumericClass::Float, "{fmt}");
            }
            match i.storage {
                StorageAccess::Native => assert!(i.typed_read && i.typed_write, "{fmt}"),
                StorageAccess::Lowered { via } => {
                    assert!(!i.typed_read, "{fmt} is readable; no lowering needed");
                    let v = via.info();
                    assert!(v.typed_read && v.typed_write, "{fmt} lowered to {via}");
                    assert_eq!(v.bpe, i.bpe, "{fmt} lowered to {via} of another size");
                    assert_eq!(via.numeric_class(), NumericClass::Uint);
                }
                StorageAccess::Unsupported => {}
            }
            if i.typed_atomic {
                assert_eq!(i.bpe, 32, "{fmt}");
            }
        }
        assert_eq!(SurfaceFormat::from_hw(511), None);
        assert_eq!(SurfaceFormat::R8G8B8A8_UNORM as u32, 199);
        assert_eq!(SurfaceFormat::R11G11B10_FLOAT as u32, 211);
    }

    #[test]
    fn unorm_and_snorm_follow_the_spec() {
        use SurfaceFormat::*;
        assert_eq!(
            roundtrip(R8_UNORM, [f(1.0), 0, 0, 0]),
            [f(1.0), 0, 0, f(1.0)]
        );
        assert_eq!(
            roundtrip(R8_UNORM, [f(0.5), 0, 0, 0])[0],
            f(128.0 / 255.0),
            "0.5 * 255 = 127.5 rounds to even 128"
        );
        assert_eq!(roundtrip(R8_UNORM, [f(-3.0), 0, 0, 0])[0], f(0.0));
        assert_eq!(roundtrip(R8_UNORM, [f(f32::NAN), 0, 0, 0])[0], f(0.0));
        // SNORM: -128 and -127 both decode to -1.0; 1.0 encodes as 127.
        assert_eq!(R8_SNORM.decode(&[0x80])[0], f(-1.0));
        assert_eq!(R8_SNORM.decode(&[0x81])[0], f(-1.0));
        assert_eq!(R8_SNORM.decode(&[0x7F])[0], f(1.0));
        let mut b = [0u8; 4];
        R8_SNORM.encode([f(-2.0), 0, 0, 0], &mut b);
        assert_eq!(b[0], 0x81);
        R16G16_SNORM.encode([f(0.5), f(-0.5), 0, 0], &mut b);
        assert_eq!(
            u32::from_le_bytes(b),
            (16384 & 0xFFFF) | ((-16384i32 as u32) << 16)
        );
        // Every 8-bit UNORM/SNORM code survives decode + encode.
        for v in 0..=255u8 {
            for fmt in [R8_UNORM, R8_SNORM] {
                let d = fmt.decode(&[v]);
                let mut out = [0u8];
                fmt.encode(d, &mut out);
                let expect = if fmt == R8_SNORM && v == 0x80 {
                    0x81
                } else {
                    v
                };
                assert_eq!(out[0], expect, "{fmt} code {v:#x}");
            }
        }
    }

    #[test]
    fn integer_channels_sign_extend_and_clamp() {
        use SurfaceFormat::*;
        assert_eq!(
            R8G8_SINT.decode(&[0xFF, 0x80])[..2],
            [u32::MAX, -128i32 as u32]
        );
        assert_eq!(
            R8G8_SINT.decode(&[0, 0])[3],
            1,
            "missing alpha of an int format"
        );
        assert_eq!(roundtrip(R16_UINT, [70000, 0, 0, 0])[0], 65535);
        assert_eq!(
            roundtrip(R16_SINT, [-70000i32 as u32, 0, 0, 0])[0],
            -32768i32 as u32
        );
        assert_eq!(
            roundtrip(R10G10B10A2_UINT, [1023, 5, 1024, 3]),
            [1023, 5, 1023, 3]
        );
        assert_eq!(roundtrip(R32G32B32A32_SINT, [1, 2, 3, 4]), [1, 2, 3, 4]);
    }

    #[test]
    fn packed_formats_put_channels_where_the_name_says() {
        use SurfaceFormat::*;
        let mut b = [0u8; 4];
        B5G6R5_UNORM.encode([f(1.0), 0, 0, 0], &mut b);
        assert_eq!(
            u16::from_le_bytes([b[0], b[1]]),
            0xF800,
            "R in the top 5 bits"
        );
        B8G8R8A8_UNORM.encode([f(1.0), 0, 0, f(0.0)], &mut b);
        assert_eq!(b, [0, 0, 0xFF, 0]);
        R10G10B10A2_UNORM.encode([0, 0, 0, f(1.0)], &mut b);
        assert_eq!(u32::from_le_bytes(b), 0xC000_0000);
        A4B4G4R4_UNORM.encode([f(1.0), 0, 0, 0], &mut b);
        assert_eq!(u16::from_le_bytes([b[0], b[1]]), 0xF000);
        assert_eq!(
            B5G6R5_UNORM.decode(&[0x1F, 0])[..3],
            [f(0.0), f(0.0), f(1.0)],
            "B in the low bits"
        );
    }

    #[test]
    fn srgb_uses_the_transfer_function() {
        use SurfaceFormat::*;
        // Stored 0xBC = 188: linear ((188/255 + 0.055)/1.055)^2.4 ~= 0.5029.
        let d = R8G8B8A8_UNORM_SRGB.decode(&[188, 0, 255, 128]);
        assert!(
            (f32::from_bits(d[0]) - 0.50289).abs() < 1e-4,
            "{}",
            f32::from_bits(d[0])
        );
        assert_eq!(d[2], f(1.0));
        assert_eq!(d[3], f(128.0 / 255.0), "alpha is linear");
        for v in 0..=255u8 {
            let d = R8G8B8A8_UNORM_SRGB.decode(&[v, v, v, v]);
            let mut out = [0u8; 4];
            R8G8B8A8_UNORM_SRGB.encode(d, &mut out);
            assert_eq!(out, [v; 4], "sRGB code {v}");
        }
    }

    #[test]
    fn half_floats_round_to_nearest_even() {
        assert_eq!(f32_to_f16(1.0), 0x3C00);
        assert_eq!(f32_to_f16(-2.0), 0xC000);
        assert_eq!(f32_to_f16(65504.0), 0x7BFF);
        assert_eq!(
            f32_to_f16(65520.0),
            0x7C00,
            "halfway above max rounds to inf"
        );
        assert_eq!(
            f32_to_f16(1.0 + 2f32.powi(-11)),
            0x3C00,
            "tie to even (down)"
        );
        assert_eq!(
            f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)),
            0x3C02,
            "tie to even (up)"
        );
        assert_eq!(f32_to_f16(2f32.powi(-24)), 0x0001, "smallest denormal");
        assert_eq!(f32_to_f16(2f32.powi(-26)), 0x0000);
        assert_eq!(f32_to_f16(-0.0), 0x8000);
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
        for h in 0..=0xFFFFu16 {
            let v = f16_to_f32(h);
            if !v.is_nan() {
                assert_eq!(f32_to_f16(v), h, "f16 {h:#06x}");
            }
        }
    }

    #[test]
    fn r11g11b10_has_no_sign_and_rounds() {
        use SurfaceFormat::R11G11B10_FLOAT as F11;
        let d = roundtrip(F11, [f(1.0), f(-5.0), f(64512.0), 0]);
        assert_eq!(
            d,
            [f(1.0), f(0.0), f(64512.0), f(1.0)],
            "10-bit max finite 64512"
        );
        let mut b = [0u8; 4];
        F11.encode([f(1.0), 0, 0, 0], &mut b);
        assert_eq!(
            u32::from_le_bytes(b),
            15 << 6,
            "1.0 = exponent 15, mantissa 0"
        );
        // 11-bit max finite 65024; above the halfway point to 2^16 rounds to infinity.
        assert_eq!(f32_to_small_float(65024.0, 6), 0x7BF);
        assert_eq!(f32_to_small_float(1e9, 6), 0x7C0);
        assert!(small_float_to_f32(f32_to_small_float(f32::NAN, 5), 5).is_nan());
        for v in 0..0x7C0u32 {
            assert_eq!(
                f32_to_small_float(small_float_to_f32(v, 6), 6),
                v,
                "f11 {v:#x}"
            );
        }
        for v in 0..0x3E0u32 {
            assert_eq!(
                f32_to_small_float(small_float_to_f32(v, 5), 5),
                v,
                "f10 {v:#x}"
            );
        }
    }

    #[test]
    fn shared_exponent_follows_the_spec_algorithm() {
        use SurfaceFormat::R9G9B9E5_SHAREDEXP as E;
        assert_eq!(
            roundtrip(E, [f(1.0), f(0.5), f(0.0), 0]),
            [f(1.0), f(0.5), 0, f(1.0)]
        );
        // 1.0: exp_shared = 16, mantissa 256 -> 256 * 2^(16-15-9) = 1.
        assert_eq!(encode_rgb9e5([1.0, 0.0, 0.0]), (16 << 27) | 256);
        // The largest value and clamping of larger and negative values.
        let max = 511.0 / 512.0 * 65536.0;
        assert_eq!(
            roundtrip(E, [f(1e10), f(-1.0), f(max), 0])[..3],
            [f(max), 0, f(max)]
        );
        // Small channels lose precision against the largest one.
        let d = roundtrip(E, [f(100.0), f(0.01), 0, 0]);
        assert_eq!(
            d[1], 0,
            "0.01 is below the quantum 2^-2 of a 100-based exponent"
        );
    }

    #[test]
    fn lowering_targets_are_the_typed_uint_formats() {
        use SurfaceFormat::*;
        let via = |f: SurfaceFormat| match f.info().storage {
            StorageAccess::Lowered { via } => Some(via),
            _ => None,
        };
        assert_eq!(via(R8G8B8A8_UNORM), Some(R32_UINT));
        assert_eq!(via(R16G16B16A16_SNORM), Some(R32G32_UINT));
        assert_eq!(via(R8G8_UNORM), Some(R16_UINT));
        assert_eq!(via(R8_SNORM), Some(R8_UINT));
        assert_eq!(via(R11G11B10_FLOAT), Some(R32_UINT));
        assert_eq!(via(R32_FLOAT), None);
        assert_eq!(R32_FLOAT.info().storage, StorageAccess::Native);
        assert_eq!(
            R8G8B8A8_UNORM_SRGB.info().storage,
            StorageAccess::Unsupported
        );
        // Channel offsets the shader unpacks with.
        let offs: Vec<(u32, u8)> = R10G10B10A2_UNORM
            .channel_fields()
            .map(|(o, c)| (o, c.bits))
            .collect();
        assert_eq!(offs, [(0, 10), (10, 10), (20, 10), (30, 2)]);
    }
}
