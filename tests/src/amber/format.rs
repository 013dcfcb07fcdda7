//! Amber's image formats (`docs/amber_script.md`, "Image Formats"): the names a script may
//! give as `FORMAT` or as a `DATA_TYPE`, and how their texels are laid out for DATA, FILL,
//! SERIES_FROM and EXPECT.
//!
//! Amber writes a texel component by component in the format's memory order (`B8G8R8A8`
//! takes B first), each component as an integer of its width (UNORM, SNORM, sRGB and the
//! scaled modes take the raw integer, not a normalized float) or as a float for SFLOAT. So a
//! non-packed format with N equal-width components is laid out exactly like an Amber
//! `vecN<type>` of that width, which is how the runner stores it. Packed formats
//! (`..._PACK16`/`_PACK32`) are one texel word; they are accepted only where a script never
//! gives component values for them (FILL 0, or no initializer), because Amber splits its
//! values into bit fields the component layout here does not model.

use super::ast::{DataType, Scalar};
use ash::vk;

/// One image format: its Vulkan value and the component layout of one texel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImageFormat {
    pub name: &'static str,
    pub vk: vk::Format,
    /// The equivalent Amber data type (components in memory order). For a packed format: a
    /// `uint16`/`uint32` holding the whole texel.
    pub ty: DataType,
    pub packed: bool,
}

impl ImageFormat {
    /// Bytes per texel.
    pub fn texel_size(&self) -> u32 {
        self.ty.scalar.size() * self.ty.rows
    }
}

macro_rules! formats {
    ($( $name:ident : $scalar:ident x $n:literal $(, $packed:ident)? ; )*) => {
        const FORMATS: &[(&str, vk::Format, Scalar, u32, bool)] = &[
            $( (stringify!($name), vk::Format::$name, Scalar::$scalar, $n, formats!(@p $($packed)?)), )*
        ];
    };
    (@p) => { false };
    (@p packed) => { true };
}

formats! {
    R8_UNORM: U8 x 1; R8_SNORM: I8 x 1; R8_UINT: U8 x 1; R8_SINT: I8 x 1; R8_SRGB: U8 x 1;
    R8G8_UNORM: U8 x 2; R8G8_SNORM: I8 x 2; R8G8_UINT: U8 x 2; R8G8_SINT: I8 x 2;
    R8G8B8A8_UNORM: U8 x 4; R8G8B8A8_SNORM: I8 x 4; R8G8B8A8_UINT: U8 x 4;
    R8G8B8A8_SINT: I8 x 4; R8G8B8A8_SRGB: U8 x 4;
    B8G8R8A8_UNORM: U8 x 4; B8G8R8A8_SNORM: I8 x 4; B8G8R8A8_UINT: U8 x 4;
    B8G8R8A8_SINT: I8 x 4; B8G8R8A8_SRGB: U8 x 4;
    R16_UNORM: U16 x 1; R16_SNORM: I16 x 1; R16_UINT: U16 x 1; R16_SINT: I16 x 1;
    R16_SFLOAT: F16 x 1;
    R16G16_UNORM: U16 x 2; R16G16_SNORM: I16 x 2; R16G16_UINT: U16 x 2; R16G16_SINT: I16 x 2;
    R16G16_SFLOAT: F16 x 2;
    R16G16B16A16_UNORM: U16 x 4; R16G16B16A16_SNORM: I16 x 4; R16G16B16A16_UINT: U16 x 4;
    R16G16B16A16_SINT: I16 x 4; R16G16B16A16_SFLOAT: F16 x 4;
    R32_UINT: U32 x 1; R32_SINT: I32 x 1; R32_SFLOAT: F32 x 1;
    R32G32_UINT: U32 x 2; R32G32_SINT: I32 x 2; R32G32_SFLOAT: F32 x 2;
    R32G32B32A32_UINT: U32 x 4; R32G32B32A32_SINT: I32 x 4; R32G32B32A32_SFLOAT: F32 x 4;
    A8B8G8R8_UNORM_PACK32: U32 x 1, packed; A8B8G8R8_SNORM_PACK32: U32 x 1, packed;
    A8B8G8R8_UINT_PACK32: U32 x 1, packed; A8B8G8R8_SINT_PACK32: U32 x 1, packed;
    A2B10G10R10_UNORM_PACK32: U32 x 1, packed; A2B10G10R10_UINT_PACK32: U32 x 1, packed;
    B10G11R11_UFLOAT_PACK32: U32 x 1, packed; E5B9G9R9_UFLOAT_PACK32: U32 x 1, packed;
    R5G6B5_UNORM_PACK16: U16 x 1, packed; B4G4R4A4_UNORM_PACK16: U16 x 1, packed;
}

/// The format called `name`, if Amber knows it and the runner can lay it out.
pub fn lookup(name: &str) -> Option<ImageFormat> {
    FORMATS
        .iter()
        .find(|f| f.0 == name)
        .map(|&(name, vk, scalar, rows, packed)| ImageFormat {
            name,
            vk,
            ty: DataType {
                scalar,
                rows,
                cols: 1,
                array: false,
            },
            packed,
        })
}

/// True for names that look like an image format (so the parser can say "unsupported format"
/// rather than "unknown data type").
pub fn looks_like_format(name: &str) -> bool {
    name.contains('_') && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

/// The format Amber gives an `IMAGE ... DATA_TYPE` image: the 32/16/8-bit R, RG or RGBA
/// format of the type's components (UINT, SINT or SFLOAT).
pub fn for_data_type(ty: &DataType) -> Option<ImageFormat> {
    if ty.cols != 1 || ty.rows == 3 {
        return None;
    }
    let bits = ty.scalar.size() * 8;
    let mode = match ty.scalar {
        Scalar::F16 | Scalar::F32 => "SFLOAT",
        s if s.is_signed_int() => "SINT",
        Scalar::U8 | Scalar::U16 | Scalar::U32 => "UINT",
        _ => return None,
    };
    let chans = ["R", "G", "B", "A"];
    let name: String = match ty.rows {
        1 => format!("R{bits}"),
        2 => format!("R{bits}G{bits}"),
        _ => chans.iter().map(|c| format!("{c}{bits}")).collect(),
    };
    lookup(&format!("{name}_{mode}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_map_to_component_layouts() {
        let f = lookup("R8G8B8A8_UNORM").expect("known");
        assert_eq!(f.vk, vk::Format::R8G8B8A8_UNORM);
        assert_eq!((f.ty.scalar, f.ty.rows, f.texel_size()), (Scalar::U8, 4, 4));
        let f = lookup("R16G16_SFLOAT").expect("known");
        assert_eq!(
            (f.ty.scalar, f.ty.rows, f.texel_size()),
            (Scalar::F16, 2, 4)
        );
        let f = lookup("B10G11R11_UFLOAT_PACK32").expect("known");
        assert!(f.packed);
        assert_eq!(f.texel_size(), 4);
        assert!(lookup("R8G8B8_UNORM").is_none());
        assert!(looks_like_format("R8G8B8_UNORM"));
        assert!(!looks_like_format("vec4<float>"));
    }

    #[test]
    fn data_types_pick_amber_formats() {
        let t = |scalar, rows| DataType {
            scalar,
            rows,
            cols: 1,
            array: false,
        };
        assert_eq!(
            for_data_type(&t(Scalar::I32, 4)).map(|f| f.vk),
            Some(vk::Format::R32G32B32A32_SINT)
        );
        assert_eq!(
            for_data_type(&t(Scalar::F32, 1)).map(|f| f.vk),
            Some(vk::Format::R32_SFLOAT)
        );
        assert_eq!(
            for_data_type(&t(Scalar::U8, 2)).map(|f| f.vk),
            Some(vk::Format::R8G8_UINT)
        );
        assert_eq!(for_data_type(&t(Scalar::F32, 3)), None);
    }
}
