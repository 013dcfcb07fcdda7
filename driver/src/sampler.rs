//! VkSampler: SAMPLER_STATE and SAMPLER_BORDER_COLOR_STATE built once at creation from the
//! create info (docs/images.md "Samplers"); a dispatch copies them into its sampler table.

use ash::vk;
use kernel_iface::genxml::{SamplerBorderColorState, SamplerState};

use crate::device::Device;
use crate::error::{DriverError, Result};
use crate::ffi;

/// MAPFILTER_* of SAMPLER_STATE's Min/Mag Mode Filter.
const MAPFILTER_NEAREST: u64 = 0;
const MAPFILTER_LINEAR: u64 = 1;
/// MIPFILTER_* of SAMPLER_STATE's Mip Mode Filter.
const MIPFILTER_NEAREST: u64 = 1;
const MIPFILTER_LINEAR: u64 = 3;
/// TCM_* texture coordinate modes.
const TCM_WRAP: u64 = 0;
const TCM_MIRROR: u64 = 1;
const TCM_CLAMP: u64 = 2;
const TCM_CLAMP_BORDER: u64 = 4;
const TCM_MIRROR_ONCE: u64 = 5;
/// LOD Pre-Clamp Mode: the OpenGL/Vulkan rule (clamp the computed LOD before the mip
/// selection).
const CLAMP_MODE_OGL: u64 = 2;
/// SAMPLER_STATE Cube Surface Control Mode: OVERRIDE (TCM_CUBE on cube surfaces).
const CUBECTRLMODE_OVERRIDE: u64 = 1;
/// Min/Max LOD are U4.8: the largest level index is 14 (15 levels).
const MAX_LOD: f32 = 14.0;

/// The two hardware structures of one sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampler {
    /// SAMPLER_STATE with Border Color Pointer 0: the dispatch fills in where it put
    /// [`Sampler::border`] (relative to Dynamic State Base, 64-byte aligned).
    pub state: [u32; 4],
    pub border: [u32; 4],
}

fn filter(f: vk::Filter) -> Result<u64> {
    match f {
        vk::Filter::NEAREST => Ok(MAPFILTER_NEAREST),
        vk::Filter::LINEAR => Ok(MAPFILTER_LINEAR),
        f => Err(DriverError::InvalidArgument(format!(
            "sampler filter {f:?} (cubic filtering is not supported)"
        ))),
    }
}

fn address(m: vk::SamplerAddressMode) -> Result<u64> {
    Ok(match m {
        vk::SamplerAddressMode::REPEAT => TCM_WRAP,
        vk::SamplerAddressMode::MIRRORED_REPEAT => TCM_MIRROR,
        vk::SamplerAddressMode::CLAMP_TO_EDGE => TCM_CLAMP,
        vk::SamplerAddressMode::CLAMP_TO_BORDER => TCM_CLAMP_BORDER,
        vk::SamplerAddressMode::MIRROR_CLAMP_TO_EDGE => TCM_MIRROR_ONCE,
        m => {
            return Err(DriverError::InvalidArgument(format!(
                "sampler address mode {m:?}"
            )))
        }
    })
}

/// The border colour's dwords: float colours as f32 bits, integer ones as integers (the
/// state holds one set of dwords; the sampler reads them as the surface format's type).
fn border(c: vk::BorderColor) -> Result<[u32; 4]> {
    let one = 1.0f32.to_bits();
    Ok(match c {
        vk::BorderColor::FLOAT_TRANSPARENT_BLACK | vk::BorderColor::INT_TRANSPARENT_BLACK => [0; 4],
        vk::BorderColor::FLOAT_OPAQUE_BLACK => [0, 0, 0, one],
        vk::BorderColor::INT_OPAQUE_BLACK => [0, 0, 0, 1],
        vk::BorderColor::FLOAT_OPAQUE_WHITE => [one; 4],
        vk::BorderColor::INT_OPAQUE_WHITE => [1; 4],
        c => {
            return Err(DriverError::NotImplemented(if c.as_raw() > 5 {
                "custom sampler border colours (VK_EXT_custom_border_color)"
            } else {
                "sampler border colour"
            }))
        }
    })
}

/// Unsigned 4.8 fixed point, clamped to the levels that exist.
fn u4_8(v: f32) -> u64 {
    (v.clamp(0.0, MAX_LOD) * 256.0).round() as u64
}

impl Sampler {
    /// Packs the create info's fields (the pNext chain is checked by the caller).
    pub fn new(info: &vk::SamplerCreateInfo<'_>) -> Result<Sampler> {
        if !info.flags.is_empty() {
            return Err(DriverError::NotImplemented(
                "sampler create flags (subsampled, descriptor buffer, non-seamless cube)",
            ));
        }
        if info.anisotropy_enable != vk::FALSE {
            return Err(DriverError::FeatureNotPresent(
                "samplerAnisotropy (anisotropic filtering is not implemented)".into(),
            ));
        }
        if info.compare_enable != vk::FALSE {
            return Err(DriverError::NotImplemented(
                "depth-compare samplers (no depth formats exist)",
            ));
        }
        let limit = crate::physical::MAX_SAMPLER_LOD_BIAS;
        if !(-limit..=limit).contains(&info.mip_lod_bias) {
            return Err(DriverError::InvalidArgument(format!(
                "mipLodBias {} outside maxSamplerLodBias {limit}",
                info.mip_lod_bias
            )));
        }
        if info.min_lod.is_nan() || info.max_lod.is_nan() || info.min_lod > info.max_lod {
            return Err(DriverError::InvalidArgument(format!(
                "minLod {} / maxLod {}",
                info.min_lod, info.max_lod
            )));
        }
        let unnormalized = info.unnormalized_coordinates != vk::FALSE;
        if unnormalized
            && (info.min_filter != info.mag_filter
                || info.mipmap_mode != vk::SamplerMipmapMode::NEAREST
                || info.min_lod != 0.0
                || info.max_lod != 0.0
                || ![info.address_mode_u, info.address_mode_v].iter().all(|m| {
                    matches!(
                        *m,
                        vk::SamplerAddressMode::CLAMP_TO_EDGE
                            | vk::SamplerAddressMode::CLAMP_TO_BORDER
                    )
                }))
        {
            return Err(DriverError::InvalidArgument(
                "unnormalizedCoordinates needs equal min/mag filters, NEAREST mipmaps, LOD 0 \
                 and clamping address modes"
                    .into(),
            ));
        }
        let min = filter(info.min_filter)?;
        let mag = filter(info.mag_filter)?;
        let mip = match info.mipmap_mode {
            vk::SamplerMipmapMode::NEAREST => MIPFILTER_NEAREST,
            vk::SamplerMipmapMode::LINEAR => MIPFILTER_LINEAR,
            m => {
                return Err(DriverError::InvalidArgument(format!(
                    "sampler mipmap mode {m:?}"
                )))
            }
        };
        // Texture LOD Bias is S4.8 in 13 bits: -16 to 16 - 1/256 (16 itself would wrap to -16).
        let bias = ((info.mip_lod_bias * 256.0).round() as i32).clamp(-4096, 4095) as u64 & 0x1FFF;
        // Rounding of the sample position is enabled for linear filters (as anv does).
        let round_min = min == MAPFILTER_LINEAR;
        let round_mag = mag == MAPFILTER_LINEAR;
        let s = SamplerState {
            min_mode_filter: min,
            mag_mode_filter: mag,
            mip_mode_filter: mip,
            lod_preclamp_mode: CLAMP_MODE_OGL,
            texture_lod_bias: bias,
            min_lod: u4_8(info.min_lod),
            max_lod: u4_8(info.max_lod),
            tcx_address_control_mode: address(info.address_mode_u)?,
            tcy_address_control_mode: address(info.address_mode_v)?,
            tcz_address_control_mode: address(info.address_mode_w)?,
            // Cube maps are seamless in Vulkan: OVERRIDE makes the sampler use TCM_CUBE on
            // cube surfaces whatever the address modes say (as anv does).
            cube_surface_control_mode: CUBECTRLMODE_OVERRIDE,
            non_normalized_coordinate_enable: unnormalized,
            r_address_min_filter_rounding_enable: round_min,
            r_address_mag_filter_rounding_enable: round_mag,
            v_address_min_filter_rounding_enable: round_min,
            v_address_mag_filter_rounding_enable: round_mag,
            u_address_min_filter_rounding_enable: round_min,
            u_address_mag_filter_rounding_enable: round_mag,
            ..Default::default()
        };
        let b = border(info.border_color)?;
        let bc = SamplerBorderColorState {
            border_color_32bit_red: u64::from(b[0]),
            border_color_32bit_green: u64::from(b[1]),
            border_color_32bit_blue: u64::from(b[2]),
            border_color_32bit_alpha: u64::from(b[3]),
            ..Default::default()
        };
        let mut state = [0u32; 4];
        s.pack(&mut state);
        let mut border = [0u32; 4];
        bc.pack(&mut border);
        Ok(Sampler { state, border })
    }

    /// SAMPLER_STATE with its Border Color Pointer set to `border_offset` (relative to
    /// Dynamic State Base, 64-byte aligned).
    pub fn state_with_border(&self, border_offset: u64) -> [u32; 4] {
        let mut s = SamplerState::unpack(&self.state);
        s.border_color_pointer = border_offset;
        let mut dw = [0u32; 4];
        s.pack(&mut dw);
        dw
    }
}

crate::device::registry_creates! {
    create_sampler, "vkCreateSampler", SamplerCreateInfo => samplers, Sampler, "pSampler", new_sampler;
}

/// The object vkCreateSampler makes of its create info.
fn new_sampler(_d: &Device, info: &vk::SamplerCreateInfo<'_>) -> Result<Sampler> {
    // SAFETY: the create info's chain is valid per the spec.
    if let Some(p) = unsafe {
        ffi::find_in_chain(
            info.p_next,
            vk::StructureType::SAMPLER_REDUCTION_MODE_CREATE_INFO,
        )
    } {
        // SAFETY: the chain element has the type its sType names.
        let r = unsafe { &*(p as *const vk::SamplerReductionModeCreateInfo<'_>) };
        if r.reduction_mode != vk::SamplerReductionMode::WEIGHTED_AVERAGE {
            return Err(DriverError::NotImplemented("sampler min/max reduction"));
        }
    }
    // SAFETY: as above.
    if unsafe {
        ffi::find_in_chain(
            info.p_next,
            vk::StructureType::SAMPLER_YCBCR_CONVERSION_INFO,
        )
    }
    .is_some()
    {
        return Err(DriverError::NotImplemented("sampler Y'CbCr conversion"));
    }
    Sampler::new(info)
}

crate::device::registry_destroys! {
    destroy_sampler, "vkDestroySampler", vk::Sampler => samplers;
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_iface::gpu::sampler::{AddressMode, MipFilter, SamplerParams};

    fn decode(s: &Sampler) -> SamplerParams {
        SamplerParams::decode(&s.state_with_border(0x40), &s.border).unwrap()
    }

    /// The packed state read back by the simulator's decoder (an independent reader of the
    /// same genxml layout).
    #[test]
    fn create_info_fields_reach_the_sampler_state() {
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::LINEAR)
            .min_filter(vk::Filter::NEAREST)
            .mipmap_mode(vk::SamplerMipmapMode::LINEAR)
            .address_mode_u(vk::SamplerAddressMode::REPEAT)
            .address_mode_v(vk::SamplerAddressMode::MIRRORED_REPEAT)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .mip_lod_bias(-1.5)
            .min_lod(0.25)
            .max_lod(3.5)
            .border_color(vk::BorderColor::FLOAT_OPAQUE_WHITE);
        let s = Sampler::new(&info).unwrap();
        let p = decode(&s);
        assert!(p.mag_linear && !p.min_linear);
        assert_eq!(p.mip, MipFilter::Linear);
        assert_eq!(
            p.address,
            [
                AddressMode::Wrap,
                AddressMode::Mirror,
                AddressMode::ClampBorder
            ]
        );
        assert_eq!((p.lod_bias, p.min_lod, p.max_lod), (-1.5, 0.25, 3.5));
        assert!(!p.unnormalized);
        assert_eq!(p.border, [1.0f32.to_bits(); 4]);
        assert_eq!(SamplerState::unpack(&s.state).border_color_pointer, 0);
        assert_eq!(
            SamplerState::unpack(&s.state_with_border(0x1C0)).border_color_pointer,
            0x1C0
        );
    }

    #[test]
    fn unnormalized_and_integer_border() {
        let info = vk::SamplerCreateInfo::default()
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_BORDER)
            .address_mode_w(vk::SamplerAddressMode::MIRROR_CLAMP_TO_EDGE)
            .unnormalized_coordinates(true)
            .border_color(vk::BorderColor::INT_OPAQUE_BLACK);
        let p = decode(&Sampler::new(&info).unwrap());
        assert!(p.unnormalized && !p.mag_linear && !p.min_linear);
        assert_eq!(p.mip, MipFilter::Nearest);
        assert_eq!(p.address[2], AddressMode::MirrorOnce);
        assert_eq!(p.border, [0, 0, 0, 1]);
    }

    #[test]
    fn unsupported_fields_are_refused() {
        let base = vk::SamplerCreateInfo::default();
        assert!(Sampler::new(&base.anisotropy_enable(true).max_anisotropy(4.0)).is_err());
        assert!(Sampler::new(&base.compare_enable(true)).is_err());
        assert!(Sampler::new(&base.mip_lod_bias(100.0)).is_err());
        assert!(Sampler::new(&base.mip_lod_bias(16.5)).is_err());
        // maxSamplerLodBias itself: the largest S4.8 code, not the wrapped -16.
        let p = decode(&Sampler::new(&base.mip_lod_bias(16.0)).unwrap());
        assert_eq!(p.lod_bias, 16.0 - 1.0 / 256.0);
        let p = decode(&Sampler::new(&base.mip_lod_bias(-16.0)).unwrap());
        assert_eq!(p.lod_bias, -16.0);
        assert!(Sampler::new(&base.min_lod(2.0).max_lod(1.0)).is_err());
        assert!(Sampler::new(&base.border_color(vk::BorderColor::FLOAT_CUSTOM_EXT)).is_err());
        assert!(Sampler::new(&base.min_filter(vk::Filter::CUBIC_EXT)).is_err());
        // Unnormalized coordinates with a repeating address mode or mip levels.
        assert!(Sampler::new(&base.unnormalized_coordinates(true)).is_err());
        let clamp = base
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .unnormalized_coordinates(true);
        assert!(Sampler::new(&clamp).is_ok());
        assert!(Sampler::new(&clamp.max_lod(1.0)).is_err());
        // LODs beyond the 15 levels clamp to the last one.
        let p = decode(&Sampler::new(&base.max_lod(vk::LOD_CLAMP_NONE)).unwrap());
        assert_eq!(p.max_lod, 14.0);
    }
}
