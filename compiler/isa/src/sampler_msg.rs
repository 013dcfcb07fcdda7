//! Gen9 sampler messages (shared function 2): descriptor fields, message types, the order of
//! payload parameters, the optional header and the response layout. One place for the
//! compiler (which encodes) and the simulated sampler (which decodes).
//!
//! A sampler SEND carries, in this order: an optional header GRF (descriptor bit 19), then
//! one "parameter" per slot of [`payload_params`], each `SIMD / 8` GRFs of 32-bit values
//! (lane i at dword i), floats or integers as [`Param::is_integer`] says. Parameters at the
//! end may be left out (the message length says how many were sent); missing ones read as
//! 0. The response is one block of `SIMD / 8` GRFs per returned channel, R, G, B, A in that
//! order, skipping the channels the header's write mask disables (without a header all four
//! are returned). Values are f32 for float-class surface formats, u32/i32 for integer ones
//! (the resinfo/sampleinfo messages return integers).
//!
//! Coordinates fill the slots U, V, R, AI in the order of the surface's dimensions: a 1-D
//! array passes the layer in V, a 2-D array in R, a cube array the cube index in AI (U, V, R
//! being the direction vector). `ld` on Gen9 takes integers in the order U, V, LOD, R.

use std::fmt;

/// SEND shared-function id of the sampler.
pub const SFID_SAMPLER: u8 = 2;

/// Message types (descriptor bits 16:12) the Gen9 sampler implements and Ferrite uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum SamplerMsgType {
    /// Sample with an implicit LOD (not usable in compute: no derivatives).
    Sample = 0,
    /// Sample with an explicit LOD (`OpImageSampleExplicitLod ... Lod`).
    SampleL = 2,
    /// Sample with explicit derivatives (`OpImageSampleExplicitLod ... Grad`): the sampler
    /// computes the LOD from them. SIMD8 only on Gen9 (Mesa's brw lowers it to SIMD8 too).
    SampleD = 4,
    /// Load one texel at integer coordinates and LOD.
    Ld = 7,
    /// Gather one component of the 2x2 footprint of bilinear filtering at LOD 0.
    Gather4 = 8,
    /// The LOD the sampler would compute (implicit-derivative forms; not used by compute).
    Lod = 9,
    /// Surface size of a mip level, and the level count.
    Resinfo = 10,
    /// Sample count and sample-position information.
    Sampleinfo = 11,
    /// gather4 with per-lane programmable offsets.
    Gather4Po = 17,
    /// sample_l with LOD 0 (no LOD parameter).
    SampleLz = 24,
    /// ld with LOD 0 (no LOD parameter).
    LdLz = 26,
}

impl SamplerMsgType {
    pub fn from_hw(v: u32) -> Option<Self> {
        use SamplerMsgType::*;
        Some(match v {
            0 => Sample,
            2 => SampleL,
            4 => SampleD,
            7 => Ld,
            8 => Gather4,
            9 => Lod,
            10 => Resinfo,
            11 => Sampleinfo,
            17 => Gather4Po,
            24 => SampleLz,
            26 => LdLz,
            _ => return None,
        })
    }

    /// The name Mesa's disassembler prints.
    pub fn name(self) -> &'static str {
        use SamplerMsgType::*;
        match self {
            Sample => "sample",
            SampleL => "sample_l",
            SampleD => "sample_d",
            Ld => "ld",
            Gather4 => "gather4",
            Lod => "lod",
            Resinfo => "resinfo",
            Sampleinfo => "sampleinfo",
            Gather4Po => "gather4_po",
            SampleLz => "sample_lz",
            LdLz => "ld_lz",
        }
    }

    /// The message needs a header (gather4 selects its component there).
    pub fn needs_header(self) -> bool {
        matches!(self, SamplerMsgType::Gather4 | SamplerMsgType::Gather4Po)
    }
}

impl fmt::Display for SamplerMsgType {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// SIMD mode (descriptor bits 18:17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SamplerSimd {
    Simd8 = 1,
    Simd16 = 2,
}

impl SamplerSimd {
    pub fn width(self) -> u32 {
        match self {
            SamplerSimd::Simd8 => 8,
            SamplerSimd::Simd16 => 16,
        }
    }

    /// GRFs per parameter and per returned channel.
    pub fn regs_per_param(self) -> u32 {
        self.width() / 8
    }
}

/// One payload parameter slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    U,
    V,
    R,
    /// Array index of a cube array.
    Ai,
    Lod,
    /// Per-lane gather4_po offsets (signed integers).
    OffU,
    OffV,
    /// sample_d's derivatives of U, V, R along the window's x and y.
    DuDx,
    DuDy,
    DvDx,
    DvDy,
    DrDx,
    DrDy,
}

impl Param {
    /// Whether the slot carries an integer for `msg` (ld's coordinates and LOD, resinfo's
    /// LOD, gather4_po's offsets); otherwise an f32.
    pub fn is_integer(self, msg: SamplerMsgType) -> bool {
        match self {
            Param::OffU | Param::OffV => true,
            _ => matches!(
                msg,
                SamplerMsgType::Ld | SamplerMsgType::LdLz | SamplerMsgType::Resinfo
            ),
        }
    }
}

/// The payload parameter order of `msg` (after the header, if any). Trailing parameters
/// may be omitted.
pub fn payload_params(msg: SamplerMsgType) -> &'static [Param] {
    use Param::*;
    use SamplerMsgType as M;
    match msg {
        M::SampleL => &[Lod, U, V, R, Ai],
        // Each coordinate is followed by its two derivatives; the array index of a cube
        // array has none (the order Mesa's brw builds for sample_d on Gen7+).
        M::SampleD => &[U, DuDx, DuDy, V, DvDx, DvDy, R, DrDx, DrDy, Ai],
        M::Sample | M::SampleLz | M::Gather4 | M::Lod => &[U, V, R, Ai],
        M::Ld => &[U, V, Lod, R],
        M::LdLz => &[U, V, R],
        M::Resinfo => &[Lod],
        M::Sampleinfo => &[],
        M::Gather4Po => &[U, V, OffU, OffV, R],
    }
}

/// The fields of a sampler SEND descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplerDesc {
    /// Binding-table index of the surface (bits 7:0).
    pub bti: u8,
    /// Sampler index in the sampler-state table (bits 11:8, 0..=15).
    pub sampler: u8,
    pub msg: SamplerMsgType,
    pub simd: SamplerSimd,
    /// Header present (bit 19).
    pub header: bool,
    /// Message and response lengths in GRFs (bits 28:25, 24:20).
    pub mlen: u32,
    pub rlen: u32,
}

impl SamplerDesc {
    /// A descriptor for `params` parameters and `channels` returned channels, with the
    /// lengths filled in.
    pub fn new(
        bti: u8,
        sampler: u8,
        msg: SamplerMsgType,
        simd: SamplerSimd,
        header: bool,
        params: u32,
        channels: u32,
    ) -> Self {
        let r = simd.regs_per_param();
        SamplerDesc {
            bti,
            sampler,
            msg,
            simd,
            header,
            mlen: header as u32 + params * r,
            rlen: channels * r,
        }
    }

    /// The 32-bit descriptor. Bit 30 (16-bit return format) stays 0: 32-bit returns.
    pub fn encode(&self) -> u32 {
        (self.bti as u32)
            | ((self.sampler as u32 & 0xF) << 8)
            | ((self.msg as u32) << 12)
            | ((self.simd as u32) << 17)
            | ((self.header as u32) << 19)
            | ((self.rlen & 0x1F) << 20)
            | ((self.mlen & 0xF) << 25)
    }

    pub fn decode(desc: u32) -> Result<Self, String> {
        let ty = (desc >> 12) & 0x1F;
        let msg = SamplerMsgType::from_hw(ty)
            .ok_or_else(|| format!("sampler message type {ty} is not implemented"))?;
        let simd = match ((desc >> 17) & 3) | (((desc >> 29) & 1) << 2) {
            1 => SamplerSimd::Simd8,
            2 => SamplerSimd::Simd16,
            m => return Err(format!("sampler SIMD mode {m} is not implemented")),
        };
        if desc & (1 << 30) != 0 {
            return Err("sampler 16-bit return format is not implemented".into());
        }
        Ok(SamplerDesc {
            bti: desc as u8,
            sampler: ((desc >> 8) & 0xF) as u8,
            msg,
            simd,
            header: desc & (1 << 19) != 0,
            mlen: (desc >> 25) & 0xF,
            rlen: (desc >> 20) & 0x1F,
        })
    }

    /// Number of parameters the message carries.
    pub fn params(&self) -> u32 {
        (self.mlen - self.header as u32) / self.simd.regs_per_param()
    }
}

impl fmt::Display for SamplerDesc {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{} SIMD{} surface {} sampler {}",
            self.msg,
            self.simd.width(),
            self.bti,
            self.sampler
        )
    }
}

/// The message-specific dword 2 of the sampler header (the other header dwords are a copy
/// of R0; dword 3 holds the sampler-state pointer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SamplerHeader {
    /// Constant texel offsets U, V, R (each -8..=7), bits 11:8, 7:4, 3:0.
    pub offsets: [i8; 3],
    /// Response channels NOT written/returned: bit 0 = R .. bit 3 = A (bits 15:12).
    pub channel_disable: u8,
    /// gather4's source component 0 = R .. 3 = A (bits 17:16).
    pub gather_component: u8,
}

impl SamplerHeader {
    pub fn to_dw2(&self) -> u32 {
        let o = |i: usize, shift: u32| ((self.offsets[i] as u32) & 0xF) << shift;
        o(0, 8)
            | o(1, 4)
            | o(2, 0)
            | ((self.channel_disable as u32 & 0xF) << 12)
            | ((self.gather_component as u32 & 3) << 16)
    }

    pub fn from_dw2(dw2: u32) -> Self {
        let o = |shift: u32| ((((dw2 >> shift) & 0xF) as i8) << 4) >> 4;
        SamplerHeader {
            offsets: [o(8), o(4), o(0)],
            channel_disable: ((dw2 >> 12) & 0xF) as u8,
            gather_component: ((dw2 >> 16) & 3) as u8,
        }
    }

    /// The returned channels, in response order.
    pub fn returned_channels(&self) -> impl Iterator<Item = usize> + '_ {
        (0..4).filter(move |c| self.channel_disable & (1 << c) == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_round_trips_and_matches_mesa_field_positions() {
        // sample_l SIMD16, BTI 3, sampler 1, no header, lod + u + v: mlen 6, rlen 8.
        let d = SamplerDesc::new(
            3,
            1,
            SamplerMsgType::SampleL,
            SamplerSimd::Simd16,
            false,
            3,
            4,
        );
        assert_eq!((d.mlen, d.rlen), (6, 8));
        let e = d.encode();
        assert_eq!(e & 0xFF, 3);
        assert_eq!((e >> 8) & 0xF, 1);
        assert_eq!((e >> 12) & 0x1F, 2);
        assert_eq!((e >> 17) & 3, 2);
        assert_eq!(e >> 25, 6);
        assert_eq!(SamplerDesc::decode(e), Ok(d));
        assert_eq!(d.params(), 3);
        // An ld SIMD8 with a header: mlen 1 + 3.
        let d = SamplerDesc::new(0, 0, SamplerMsgType::Ld, SamplerSimd::Simd8, true, 3, 4);
        assert_eq!(SamplerDesc::decode(d.encode()), Ok(d));
        assert_eq!(d.params(), 3);
        assert!(
            SamplerDesc::decode(5 << 12 | 1 << 17).is_err(),
            "sample_b_c is not implemented"
        );
        assert!(SamplerDesc::decode(1 << 30 | 2 << 12 | 1 << 17).is_err());
    }

    #[test]
    fn header_packs_offsets_mask_and_gather_component() {
        let h = SamplerHeader {
            offsets: [-8, 7, -1],
            channel_disable: 0b1010,
            gather_component: 3,
        };
        let dw = h.to_dw2();
        assert_eq!(
            dw,
            (0x8 << 8) | (0x7 << 4) | 0xF | (0b1010 << 12) | (3 << 16)
        );
        assert_eq!(SamplerHeader::from_dw2(dw), h);
        assert_eq!(h.returned_channels().collect::<Vec<_>>(), [0, 2]);
    }

    #[test]
    fn parameter_orders_follow_the_gen9_layouts() {
        use Param::*;
        assert_eq!(payload_params(SamplerMsgType::SampleL)[0], Lod);
        assert_eq!(payload_params(SamplerMsgType::Ld), &[U, V, Lod, R]);
        assert!(Lod.is_integer(SamplerMsgType::Ld));
        assert!(!Lod.is_integer(SamplerMsgType::SampleL));
        assert!(U.is_integer(SamplerMsgType::LdLz));
        assert!(OffU.is_integer(SamplerMsgType::Gather4Po));
        assert_eq!(
            payload_params(SamplerMsgType::SampleD)[..7],
            [U, DuDx, DuDy, V, DvDx, DvDy, R]
        );
        assert!(!DuDy.is_integer(SamplerMsgType::SampleD));
        // Message type 4 (Mesa's SAMPLE_DERIVS); 3 is sample_c, the compare form.
        assert_eq!(SamplerMsgType::SampleD as u32, 4);
        assert_eq!(SamplerMsgType::from_hw(4), Some(SamplerMsgType::SampleD));
        assert_eq!(SamplerMsgType::from_hw(3), None);
    }
}
