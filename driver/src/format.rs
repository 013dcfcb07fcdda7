//! The one VkFormat table: each Vulkan format Ferrite knows, the Gen9 surface format that
//! holds it (from the shared surface-format table, `ferrite_isa::surface_format`), and the
//! format features it earns. vkGetPhysicalDeviceFormatProperties(2),
//! vkGetPhysicalDeviceImageFormatProperties(2), vkCreateImage/ImageView/BufferView and the
//! descriptor surface states all answer from here, so they cannot disagree.
//!
//! Features are reported only where a test exercises them (docs/images.md, "Format table"):
//! today that is storage images and storage texel buffers of the formats the typed surface
//! messages read and write natively (and image atomics where they exist: R32_UINT/SINT).

use ash::vk;
use ferrite_isa::surface_format::{StorageAccess, SurfaceFormat};

use crate::error::{DriverError, Result};

/// VkFormat -> Gen9 surface format.
const FORMATS: &[(vk::Format, SurfaceFormat)] = {
    use vk::Format as V;
    use SurfaceFormat as S;
    &[
        (V::R8_UNORM, S::R8_UNORM),
        (V::R8_SNORM, S::R8_SNORM),
        (V::R8_UINT, S::R8_UINT),
        (V::R8_SINT, S::R8_SINT),
        (V::R8G8_UNORM, S::R8G8_UNORM),
        (V::R8G8_SNORM, S::R8G8_SNORM),
        (V::R8G8_UINT, S::R8G8_UINT),
        (V::R8G8_SINT, S::R8G8_SINT),
        (V::R8G8B8A8_UNORM, S::R8G8B8A8_UNORM),
        (V::R8G8B8A8_SNORM, S::R8G8B8A8_SNORM),
        (V::R8G8B8A8_UINT, S::R8G8B8A8_UINT),
        (V::R8G8B8A8_SINT, S::R8G8B8A8_SINT),
        (V::R8G8B8A8_SRGB, S::R8G8B8A8_UNORM_SRGB),
        (V::B8G8R8A8_UNORM, S::B8G8R8A8_UNORM),
        (V::B8G8R8A8_SRGB, S::B8G8R8A8_UNORM_SRGB),
        (V::A2B10G10R10_UNORM_PACK32, S::R10G10B10A2_UNORM),
        (V::A2B10G10R10_UINT_PACK32, S::R10G10B10A2_UINT),
        (V::A2R10G10B10_UNORM_PACK32, S::B10G10R10A2_UNORM),
        (V::B10G11R11_UFLOAT_PACK32, S::R11G11B10_FLOAT),
        (V::E5B9G9R9_UFLOAT_PACK32, S::R9G9B9E5_SHAREDEXP),
        (V::R5G6B5_UNORM_PACK16, S::B5G6R5_UNORM),
        (V::A1R5G5B5_UNORM_PACK16, S::B5G5R5A1_UNORM),
        (V::R16_UNORM, S::R16_UNORM),
        (V::R16_SNORM, S::R16_SNORM),
        (V::R16_UINT, S::R16_UINT),
        (V::R16_SINT, S::R16_SINT),
        (V::R16_SFLOAT, S::R16_FLOAT),
        (V::R16G16_UNORM, S::R16G16_UNORM),
        (V::R16G16_SNORM, S::R16G16_SNORM),
        (V::R16G16_UINT, S::R16G16_UINT),
        (V::R16G16_SINT, S::R16G16_SINT),
        (V::R16G16_SFLOAT, S::R16G16_FLOAT),
        (V::R16G16B16A16_UNORM, S::R16G16B16A16_UNORM),
        (V::R16G16B16A16_SNORM, S::R16G16B16A16_SNORM),
        (V::R16G16B16A16_UINT, S::R16G16B16A16_UINT),
        (V::R16G16B16A16_SINT, S::R16G16B16A16_SINT),
        (V::R16G16B16A16_SFLOAT, S::R16G16B16A16_FLOAT),
        (V::R32_UINT, S::R32_UINT),
        (V::R32_SINT, S::R32_SINT),
        (V::R32_SFLOAT, S::R32_FLOAT),
        (V::R32G32_UINT, S::R32G32_UINT),
        (V::R32G32_SINT, S::R32G32_SINT),
        (V::R32G32_SFLOAT, S::R32G32_FLOAT),
        (V::R32G32B32_UINT, S::R32G32B32_UINT),
        (V::R32G32B32_SINT, S::R32G32B32_SINT),
        (V::R32G32B32_SFLOAT, S::R32G32B32_FLOAT),
        (V::R32G32B32A32_UINT, S::R32G32B32A32_UINT),
        (V::R32G32B32A32_SINT, S::R32G32B32A32_SINT),
        (V::R32G32B32A32_SFLOAT, S::R32G32B32A32_FLOAT),
    ]
};

/// The Gen9 surface format of `format`, if Ferrite knows it.
pub fn surface_format(format: vk::Format) -> Option<SurfaceFormat> {
    FORMATS.iter().find(|f| f.0 == format).map(|f| f.1)
}

/// The storage formats a shader can name without the StorageImageExtendedFormats
/// capability (SPIR-V's Image Format enumerants of the Shader capability).
const BASE_STORAGE: &[vk::Format] = &[
    vk::Format::R32G32B32A32_SFLOAT,
    vk::Format::R16G16B16A16_SFLOAT,
    vk::Format::R32_SFLOAT,
    vk::Format::R8G8B8A8_UNORM,
    vk::Format::R8G8B8A8_SNORM,
    vk::Format::R32G32B32A32_SINT,
    vk::Format::R16G16B16A16_SINT,
    vk::Format::R8G8B8A8_SINT,
    vk::Format::R32_SINT,
    vk::Format::R32G32B32A32_UINT,
    vk::Format::R16G16B16A16_UINT,
    vk::Format::R8G8B8A8_UINT,
    vk::Format::R32_UINT,
];

/// True when storage images / storage texel buffers of `format` work and are tested: the
/// typed messages read and write the format itself, and a shader can name it without
/// shaderStorageImageExtendedFormats (not reported: the extended set includes formats the
/// table lowers to a UINT format, whose unpacking the compiler does not do yet).
pub fn storage_ok(format: vk::Format) -> bool {
    BASE_STORAGE.contains(&format)
        && surface_format(format).is_some_and(ferrite_compiler::storage_format_supported)
}

/// The surface format a storage view of `format` uses: the format itself, or the UINT
/// format the compiler reads and writes a lowered format through (the shared table's
/// `storage_surface_format`; a view without storage access keeps its own format).
pub fn storage_surface_format(hw: SurfaceFormat) -> SurfaceFormat {
    hw.storage_surface_format().unwrap_or(hw)
}

/// True when image atomics on `format` work (typed atomics on the format itself).
pub fn atomic_ok(format: vk::Format) -> bool {
    storage_ok(format) && surface_format(format).is_some_and(|s| s.info().typed_atomic)
}

/// Image format features (the same for LINEAR and OPTIMAL tiling: the typed messages and
/// the layout module handle both).
pub fn image_features(format: vk::Format) -> vk::FormatFeatureFlags {
    let mut f = vk::FormatFeatureFlags::empty();
    if storage_ok(format) {
        f |= vk::FormatFeatureFlags::STORAGE_IMAGE;
    }
    if atomic_ok(format) {
        f |= vk::FormatFeatureFlags::STORAGE_IMAGE_ATOMIC;
    }
    if transfer_ok(format) {
        f |= vk::FormatFeatureFlags::TRANSFER_SRC | vk::FormatFeatureFlags::TRANSFER_DST;
    }
    if SAMPLED.contains(&format) {
        f |= vk::FormatFeatureFlags::SAMPLED_IMAGE
            | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR;
    }
    if blit_src_ok(format) {
        f |= vk::FormatFeatureFlags::BLIT_SRC;
    }
    if blit_dst_ok(format) {
        f |= vk::FormatFeatureFlags::BLIT_DST;
    }
    f
}

/// True when vkCmdBlitImage can read images of `format`: the blit kernel samples the
/// source in its own format, so the sampler must read it, and the image needs
/// TRANSFER_SRC usage (tests/tests/image_blit.rs). Linear blits also need
/// SAMPLED_IMAGE_FILTER_LINEAR, which the spec checks separately.
pub fn blit_src_ok(format: vk::Format) -> bool {
    transfer_ok(format) && surface_format(format).is_some_and(|s| s.info().sample)
}

/// True when vkCmdBlitImage can write images of `format`: the blit kernel writes with a
/// typed message in the destination's own format (which converts from the sampler's
/// values), so the format must be natively typed-writable (not sRGB, shared exponent or
/// 4-4-4-4 with alpha first), and the image needs TRANSFER_DST usage.
pub fn blit_dst_ok(format: vk::Format) -> bool {
    transfer_ok(format) && surface_format(format).is_some_and(|s| s.info().typed_write)
}

/// True when the transfer commands (copies to, from and between images, clears) work on
/// images of `format`: the meta kernels move texels of 1, 2, 4, 8 or 16 bytes as UINT
/// texels of that size (tests/tests/image_transfer.rs); the 96-bit formats have no typed
/// format to move them with.
pub fn transfer_ok(format: vk::Format) -> bool {
    surface_format(format).is_some_and(|s| crate::meta::uint_format(s.bytes_per_texel()).is_some())
}

/// Formats reported as SAMPLED_IMAGE (with linear filtering): the ones
/// tests/tests/image_sampled.rs compares with lavapipe.
const SAMPLED: &[vk::Format] = &[
    vk::Format::R32G32B32A32_SFLOAT,
    vk::Format::R8G8B8A8_UNORM,
    vk::Format::R32_SFLOAT,
    vk::Format::R8_UNORM,
    vk::Format::R8G8_UNORM,
    vk::Format::B8G8R8A8_UNORM,
    vk::Format::A2B10G10R10_UNORM_PACK32,
    vk::Format::R16G16B16A16_UNORM,
    vk::Format::R8G8B8A8_SNORM,
    vk::Format::R8G8_SNORM,
    vk::Format::R16G16B16A16_SNORM,
    vk::Format::R8G8B8A8_SRGB,
    vk::Format::B8G8R8A8_SRGB,
    vk::Format::R16_UNORM,
    vk::Format::R16G16_UNORM,
    // The sampler decodes the 11/11/10-bit unsigned floats (storage would need the extended
    // storage formats: docs/images.md).
    vk::Format::B10G11R11_UFLOAT_PACK32,
];

/// Buffer (texel buffer) format features: storage texel buffers of the natively accessed
/// formats (the lowering works the same way for texel buffers but is tested on images only,
/// so lowered formats are not reported here).
pub fn buffer_features(format: vk::Format) -> vk::FormatFeatureFlags {
    let mut f = vk::FormatFeatureFlags::empty();
    let native = surface_format(format).is_some_and(|s| s.info().storage == StorageAccess::Native);
    if storage_ok(format) && native {
        f |= vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER;
    }
    if atomic_ok(format) {
        f |= vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER_ATOMIC;
    }
    if UNIFORM_TEXEL.contains(&format) {
        f |= vk::FormatFeatureFlags::UNIFORM_TEXEL_BUFFER;
    }
    f
}

/// Formats reported as UNIFORM_TEXEL_BUFFER (read with the sampler's `ld` in their own
/// format): the ones tests/tests/texel_buffers.rs compares with lavapipe.
const UNIFORM_TEXEL: &[vk::Format] = &[
    vk::Format::R32G32B32A32_SFLOAT,
    vk::Format::R32_SFLOAT,
    vk::Format::R16G16B16A16_SFLOAT,
    vk::Format::R8G8B8A8_UNORM,
    vk::Format::R8G8B8A8_SNORM,
    vk::Format::A2B10G10R10_UNORM_PACK32,
    vk::Format::B10G11R11_UFLOAT_PACK32,
    vk::Format::R32_UINT,
    vk::Format::R32G32B32A32_UINT,
    vk::Format::R8G8B8A8_UINT,
    vk::Format::R16G16_SINT,
];

pub fn properties(format: vk::Format) -> vk::FormatProperties {
    let img = image_features(format);
    vk::FormatProperties {
        linear_tiling_features: img,
        optimal_tiling_features: img,
        buffer_features: buffer_features(format),
    }
}

/// The usages Ferrite can honour for an image of `format` (all must be earned by a feature).
fn usage_ok(format: vk::Format, usage: vk::ImageUsageFlags) -> bool {
    let f = image_features(format);
    let need = |u: vk::ImageUsageFlags, feat: vk::FormatFeatureFlags| {
        !usage.intersects(u) || f.contains(feat)
    };
    let supported = vk::ImageUsageFlags::STORAGE
        | vk::ImageUsageFlags::SAMPLED
        | vk::ImageUsageFlags::TRANSFER_SRC
        | vk::ImageUsageFlags::TRANSFER_DST;
    (usage & !supported).is_empty()
        && need(
            vk::ImageUsageFlags::TRANSFER_SRC,
            vk::FormatFeatureFlags::TRANSFER_SRC,
        )
        && need(
            vk::ImageUsageFlags::TRANSFER_DST,
            vk::FormatFeatureFlags::TRANSFER_DST,
        )
        && !usage.is_empty()
        && need(
            vk::ImageUsageFlags::STORAGE,
            vk::FormatFeatureFlags::STORAGE_IMAGE,
        )
        && need(
            vk::ImageUsageFlags::SAMPLED,
            vk::FormatFeatureFlags::SAMPLED_IMAGE,
        )
}

/// vkGetPhysicalDeviceImageFormatProperties: the limits of one combination, or
/// VK_ERROR_FORMAT_NOT_SUPPORTED.
pub fn image_format_properties(
    format: vk::Format,
    ty: vk::ImageType,
    tiling: vk::ImageTiling,
    usage: vk::ImageUsageFlags,
    flags: vk::ImageCreateFlags,
) -> Result<vk::ImageFormatProperties> {
    use kernel_iface::image::layout::{MAX_EXTENT_2D, MAX_EXTENT_3D, MAX_LAYERS};
    if surface_format(format).is_none() || !usage_ok(format, usage) {
        return Err(DriverError::FormatNotSupported);
    }
    if !matches!(tiling, vk::ImageTiling::LINEAR | vk::ImageTiling::OPTIMAL) {
        return Err(DriverError::FormatNotSupported);
    }
    let known = vk::ImageCreateFlags::MUTABLE_FORMAT | vk::ImageCreateFlags::CUBE_COMPATIBLE;
    if !(flags & !known).is_empty() {
        return Err(DriverError::FormatNotSupported);
    }
    if flags.contains(vk::ImageCreateFlags::CUBE_COMPATIBLE) && ty != vk::ImageType::TYPE_2D {
        return Err(DriverError::FormatNotSupported);
    }
    let (extent, layers) = match ty {
        vk::ImageType::TYPE_1D => ([MAX_EXTENT_2D, 1, 1], MAX_LAYERS),
        vk::ImageType::TYPE_2D => ([MAX_EXTENT_2D, MAX_EXTENT_2D, 1], MAX_LAYERS),
        vk::ImageType::TYPE_3D => ([MAX_EXTENT_3D; 3], 1),
        _ => return Err(DriverError::FormatNotSupported),
    };
    let levels = 32 - extent.iter().max().copied().unwrap_or(1).leading_zeros();
    Ok(vk::ImageFormatProperties {
        max_extent: vk::Extent3D {
            width: extent[0],
            height: extent[1],
            depth: extent[2],
        },
        max_mip_levels: levels.min(15),
        max_array_layers: layers,
        sample_counts: vk::SampleCountFlags::TYPE_1,
        // The largest size the binding's u32 pitch and the 48-bit address space allow.
        max_resource_size: 1 << 31,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_format_is_distinct_and_known_to_the_surface_table() {
        for (i, (v, s)) in FORMATS.iter().enumerate() {
            assert!(
                FORMATS[i + 1..].iter().all(|f| f.0 != *v),
                "{v:?} listed twice"
            );
            assert_eq!(SurfaceFormat::from_hw(*s as u32), Some(*s));
        }
    }

    #[test]
    fn storage_features_follow_the_typed_message_table() {
        assert!(image_features(vk::Format::R32_UINT).contains(
            vk::FormatFeatureFlags::STORAGE_IMAGE | vk::FormatFeatureFlags::STORAGE_IMAGE_ATOMIC
        ));
        // Blits: the sampler reads the source and a typed write converts into the
        // destination, so every transferable format the sampler reads is a blit source and
        // every natively typed-writable one a blit destination.
        let transfer = vk::FormatFeatureFlags::TRANSFER_SRC
            | vk::FormatFeatureFlags::TRANSFER_DST
            | vk::FormatFeatureFlags::BLIT_SRC
            | vk::FormatFeatureFlags::BLIT_DST;
        assert_eq!(
            image_features(vk::Format::R8G8B8A8_SRGB),
            vk::FormatFeatureFlags::TRANSFER_SRC
                | vk::FormatFeatureFlags::TRANSFER_DST
                | vk::FormatFeatureFlags::BLIT_SRC
                | vk::FormatFeatureFlags::SAMPLED_IMAGE
                | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR
        );
        assert_eq!(
            image_features(vk::Format::R32_SFLOAT),
            vk::FormatFeatureFlags::STORAGE_IMAGE
                | vk::FormatFeatureFlags::SAMPLED_IMAGE
                | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR
                | transfer
        );
        // Lowered through R32_UINT: reported (the compiler unpacks it); packed floats and
        // the extended formats are not.
        // ... and sampled with linear filtering (tested against lavapipe).
        assert_eq!(
            image_features(vk::Format::R8G8B8A8_UNORM),
            vk::FormatFeatureFlags::STORAGE_IMAGE
                | vk::FormatFeatureFlags::SAMPLED_IMAGE
                | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR
                | transfer
        );
        // Sampled and filtered (compared with lavapipe), no storage (an extended format).
        assert_eq!(
            image_features(vk::Format::B10G11R11_UFLOAT_PACK32),
            vk::FormatFeatureFlags::SAMPLED_IMAGE
                | vk::FormatFeatureFlags::SAMPLED_IMAGE_FILTER_LINEAR
                | transfer
        );
        // Transfers only: the meta kernels move any 1/2/4/8/16-byte texel.
        assert_eq!(image_features(vk::Format::R16G16_SINT), transfer);
        assert!(image_features(vk::Format::R32G32B32_SFLOAT).is_empty());
        assert!(image_features(vk::Format::D32_SFLOAT).is_empty());
    }

    #[test]
    fn unsupported_combinations_are_refused() {
        let st = vk::ImageUsageFlags::STORAGE;
        let ok = |f, t, u, fl| image_format_properties(f, vk::ImageType::TYPE_2D, t, u, fl).is_ok();
        let none = vk::ImageCreateFlags::empty();
        assert!(ok(vk::Format::R32_UINT, vk::ImageTiling::OPTIMAL, st, none));
        assert!(ok(vk::Format::R32_UINT, vk::ImageTiling::LINEAR, st, none));
        let sampled = vk::ImageUsageFlags::SAMPLED;
        assert!(ok(
            vk::Format::R8G8B8A8_UNORM,
            vk::ImageTiling::LINEAR,
            sampled,
            none
        ));
        assert!(!ok(
            vk::Format::R32_UINT,
            vk::ImageTiling::LINEAR,
            sampled,
            none
        ));
        assert!(!ok(
            vk::Format::R8G8B8A8_SRGB,
            vk::ImageTiling::OPTIMAL,
            st,
            none
        ));
        assert!(!ok(
            vk::Format::R32_UINT,
            vk::ImageTiling::OPTIMAL,
            vk::ImageUsageFlags::COLOR_ATTACHMENT,
            none
        ));
        assert!(!ok(
            vk::Format::R32_UINT,
            vk::ImageTiling::OPTIMAL,
            st,
            vk::ImageCreateFlags::SPARSE_BINDING
        ));
        assert!(!ok(
            vk::Format::UNDEFINED,
            vk::ImageTiling::OPTIMAL,
            st,
            none
        ));
    }
}
