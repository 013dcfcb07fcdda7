//! The Gen9 image layout: where every texel of every mip level and array layer (or 3-D
//! slice) of an image lives, for LINEAR and Y-major tiled (legacy TILEY) surfaces.
//!
//! The rules (docs/images.md, "Layout"):
//! * Units: elements (texels) horizontally, rows vertically. Mip level `l` has extent
//!   `max(1, w >> l)` (and so on for height and depth).
//! * 2-D and 3-D images (and tiled 1-D ones) use the "2-D" mip layout: level 0 at (0, 0),
//!   level 1 below it at (0, h0), level 2 right of level 1 at (w1, h0), each further level
//!   below the previous one from level 2 on. Every level's width is padded to the horizontal
//!   alignment (4 elements), its height to the vertical alignment (4 rows). The padded
//!   height of that picture is QPitch: array layer `a` (or 3-D slice `z` of any level) sits
//!   `a * QPitch` rows lower. Tiled 3-D images round QPitch up to the tile height (32 rows).
//! * Linear 1-D images use the Gen9 1-D layout: the levels side by side in one row, each
//!   padded to 64 elements; array layer `a` is row `a`; QPitch counts elements (the row).
//! * LINEAR: byte = row * pitch + x * bytes_per_element, pitch = width in bytes.
//! * TILEY: 4 KB tiles of 128 bytes x 32 rows, row-major over the surface; the pitch is a
//!   multiple of 128 and the rows a multiple of 32. Inside a tile the bytes run in columns
//!   16 bytes wide: byte (bx, by) of the tile is at `(bx / 16) * 512 + by * 16 + bx % 16`.

use crate::KernelError;
use ferrite_isa::surface_format::SurfaceFormat;

/// Y-major tile: 128 bytes x 32 rows = 4 KB.
pub const TILE_Y_WIDTH: u64 = 128;
pub const TILE_Y_HEIGHT: u64 = 32;
pub const TILE_SIZE: u64 = 4096;
/// Alignment of the element grid for 2-D/3-D images (HALIGN_4, VALIGN_4) and of 1-D levels.
pub const HALIGN: u32 = 4;
pub const VALIGN: u32 = 4;
pub const HALIGN_1D: u32 = 64;
/// Gen9 limits of RENDER_SURFACE_STATE: width/height 14 bits, depth/layers 11 bits,
/// pitch 18 bits.
pub const MAX_EXTENT_2D: u32 = 16384;
pub const MAX_EXTENT_3D: u32 = 2048;
pub const MAX_LAYERS: u32 = 2048;
pub const MAX_PITCH: u64 = 1 << 18;

/// Dimensionality of an image (a cube is a 2-D array with layers in multiples of 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageDim {
    D1,
    D2,
    D3,
}

/// Tiling of an image's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tiling {
    Linear,
    /// Legacy Y-major tiling (RENDER_SURFACE_STATE TileMode YMAJOR).
    TileY,
}

impl Tiling {
    /// The RENDER_SURFACE_STATE TileMode value.
    pub fn tile_mode(self) -> u64 {
        match self {
            Tiling::Linear => 0,
            Tiling::TileY => 3,
        }
    }

    pub fn from_tile_mode(mode: u64) -> Option<Tiling> {
        match mode {
            0 => Some(Tiling::Linear),
            3 => Some(Tiling::TileY),
            _ => None,
        }
    }
}

/// What the application asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageDesc {
    pub dim: ImageDim,
    pub format: SurfaceFormat,
    /// Width, height, depth of level 0 in texels (unused dimensions 1).
    pub extent: [u32; 3],
    pub levels: u32,
    pub layers: u32,
    pub tiling: Tiling,
}

/// The RENDER_SURFACE_STATE values that describe the layout (the view-dependent fields —
/// surface type, base level, level count, first layer — are the driver's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurfaceStateFields {
    /// Width/Height/Depth fields (value - 1). Depth: 3-D depth - 1 or layers - 1.
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    /// SurfacePitch (bytes - 1).
    pub surface_pitch: u64,
    /// SurfaceQPitch (QPitch >> 2).
    pub surface_qpitch: u64,
    /// HALIGN/VALIGN codes (1 = 4).
    pub halign: u64,
    pub valign: u64,
    pub tile_mode: u64,
}

/// A computed layout. Every field the simulator needs is explicit, so a layout can also be
/// rebuilt from a surface state ([`ImageLayout::from_parts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLayout {
    pub dim: ImageDim,
    /// Bytes per element.
    pub bpe: u32,
    pub extent: [u32; 3],
    pub levels: u32,
    pub layers: u32,
    pub tiling: Tiling,
    /// Element alignment of each level (horizontal, vertical).
    pub halign: u32,
    pub valign: u32,
    /// Bytes from one row to the next.
    pub row_pitch: u64,
    /// Rows from one array layer / 3-D slice to the next (the 1-D layout: elements).
    pub qpitch: u32,
    /// Total bytes and the required base alignment.
    pub size: u64,
    pub alignment: u64,
}

fn minify(v: u32, l: u32) -> u32 {
    (v >> l).max(1)
}

fn align(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

impl ImageLayout {
    /// Computes the layout of `desc`, or why Gen9 cannot hold it.
    pub fn new(desc: &ImageDesc) -> Result<ImageLayout, KernelError> {
        let bad = |m: String| Err(KernelError::InvalidImage(m));
        let [w, h, d] = desc.extent;
        let info = desc.format.info();
        if w == 0 || h == 0 || d == 0 || desc.levels == 0 || desc.layers == 0 {
            return bad(format!("empty image {:?}", desc));
        }
        let (max_w, max_h, max_d) = match desc.dim {
            ImageDim::D1 => (MAX_EXTENT_2D, 1, 1),
            ImageDim::D2 => (MAX_EXTENT_2D, MAX_EXTENT_2D, 1),
            ImageDim::D3 => (MAX_EXTENT_3D, MAX_EXTENT_3D, MAX_EXTENT_3D),
        };
        if w > max_w || h > max_h || d > max_d || desc.layers > MAX_LAYERS {
            return bad(format!(
                "{:?} extent {:?} x {} layers exceeds the Gen9 limits",
                desc.dim, desc.extent, desc.layers
            ));
        }
        if desc.dim == ImageDim::D3 && desc.layers != 1 {
            return bad("3-D images have one layer".into());
        }
        let max_levels = 32 - w.max(h).max(d).leading_zeros();
        if desc.levels > max_levels || desc.levels > 15 {
            return bad(format!(
                "{} mip levels for extent {:?}",
                desc.levels, desc.extent
            ));
        }
        if !info.bpe.is_multiple_of(8) {
            return bad(format!("format {} is not byte-sized", desc.format));
        }
        let bpe = info.bpe / 8;
        let one_d = desc.dim == ImageDim::D1 && desc.tiling == Tiling::Linear;
        let (halign, valign) = if one_d {
            (HALIGN_1D, 1)
        } else {
            (HALIGN, VALIGN)
        };
        // Width of the element grid and height of one slice of the mip tree.
        let (grid_w, slice_h) = if one_d {
            let w: u64 = (0..desc.levels)
                .map(|l| align(minify(w, l) as u64, halign as u64))
                .sum();
            (w, 1)
        } else {
            Self::tree_2d(desc.extent, desc.levels, halign, valign)
        };
        let slices = match desc.dim {
            ImageDim::D3 => d,
            _ => desc.layers,
        } as u64;
        let mut qpitch = slice_h;
        if desc.dim == ImageDim::D3 && desc.tiling == Tiling::TileY {
            qpitch = align(qpitch, TILE_Y_HEIGHT);
        }
        let rows = if one_d {
            slices
        } else {
            qpitch * (slices - 1) + slice_h
        };
        let (row_pitch, rows, alignment) = match desc.tiling {
            Tiling::Linear => (grid_w * bpe as u64, rows, 64),
            Tiling::TileY => (
                align(grid_w * bpe as u64, TILE_Y_WIDTH),
                align(rows, TILE_Y_HEIGHT),
                TILE_SIZE,
            ),
        };
        if row_pitch > MAX_PITCH && !one_d {
            return bad(format!("row pitch {row_pitch} exceeds the Gen9 limit"));
        }
        let qpitch = if one_d {
            (row_pitch / bpe as u64) as u32
        } else {
            qpitch as u32
        };
        Ok(ImageLayout {
            dim: desc.dim,
            bpe,
            extent: desc.extent,
            levels: desc.levels,
            layers: desc.layers,
            tiling: desc.tiling,
            halign,
            valign,
            row_pitch,
            qpitch,
            size: align(row_pitch * rows, alignment),
            alignment,
        })
    }

    /// The 2-D mip tree of one slice: (width in elements, height in rows).
    fn tree_2d(extent: [u32; 3], levels: u32, halign: u32, valign: u32) -> (u64, u64) {
        let aw = |l: u32| align(minify(extent[0], l) as u64, halign as u64);
        let ah = |l: u32| align(minify(extent[1], l) as u64, valign as u64);
        let mut bottom_w = 0;
        let (mut left_h, mut right_h) = (0, 0);
        for l in 1..levels {
            match l {
                1 => {
                    bottom_w = aw(1);
                    left_h = ah(1);
                }
                2 => {
                    bottom_w += aw(2);
                    right_h = ah(2);
                }
                _ => right_h += ah(l),
            }
        }
        (aw(0).max(bottom_w), ah(0) + left_h.max(right_h))
    }

    /// A layout from explicit values (as a RENDER_SURFACE_STATE gives them); `size` is
    /// what the addressing can reach.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        dim: ImageDim,
        bpe: u32,
        extent: [u32; 3],
        levels: u32,
        layers: u32,
        tiling: Tiling,
        row_pitch: u64,
        qpitch: u32,
    ) -> ImageLayout {
        let one_d = dim == ImageDim::D1 && tiling == Tiling::Linear;
        let (halign, valign) = if one_d {
            (HALIGN_1D, 1)
        } else {
            (HALIGN, VALIGN)
        };
        let mut l = ImageLayout {
            dim,
            bpe,
            extent,
            levels,
            layers,
            tiling,
            halign,
            valign,
            row_pitch,
            qpitch,
            size: 0,
            alignment: match tiling {
                Tiling::Linear => 64,
                Tiling::TileY => TILE_SIZE,
            },
        };
        let slices = if dim == ImageDim::D3 {
            extent[2]
        } else {
            layers
        };
        let (_, slice_h) = Self::tree_2d(extent, levels, halign, valign);
        let rows = if one_d {
            slices as u64
        } else {
            qpitch as u64 * (slices as u64 - 1) + slice_h
        };
        l.size = match tiling {
            Tiling::Linear => row_pitch * rows,
            Tiling::TileY => row_pitch * align(rows, TILE_Y_HEIGHT),
        };
        l
    }

    /// Extent of mip level `level` (width, height, depth; depth is 1 except for 3-D).
    pub fn level_extent(&self, level: u32) -> [u32; 3] {
        [
            minify(self.extent[0], level),
            minify(self.extent[1], level),
            minify(self.extent[2], level),
        ]
    }

    /// Position of level `level`'s first texel in the element grid (x in elements, y in rows).
    pub fn level_origin(&self, level: u32) -> (u64, u64) {
        if self.is_1d_layout() {
            let x = (0..level)
                .map(|l| align(minify(self.extent[0], l) as u64, self.halign as u64))
                .sum();
            return (x, 0);
        }
        let (mut x, mut y) = (0u64, 0u64);
        for l in 0..level {
            if l == 1 {
                x += align(minify(self.extent[0], l) as u64, self.halign as u64);
            } else {
                y += align(minify(self.extent[1], l) as u64, self.valign as u64);
            }
        }
        (x, y)
    }

    fn is_1d_layout(&self) -> bool {
        self.dim == ImageDim::D1 && self.tiling == Tiling::Linear
    }

    /// Byte offset (from the image base) of texel (x, y) of array layer / 3-D slice `z` of
    /// mip level `level`; the caller keeps the coordinates inside the level.
    pub fn texel_address(&self, x: u32, y: u32, z: u32, level: u32) -> u64 {
        let (ox, oy) = self.level_origin(level);
        let (ex, ey) = if self.is_1d_layout() {
            (ox + x as u64, z as u64)
        } else {
            (ox + x as u64, oy + y as u64 + z as u64 * self.qpitch as u64)
        };
        self.element_address(ex, ey)
    }

    /// Byte offset of element-grid position (x elements, y rows).
    pub fn element_address(&self, x: u64, y: u64) -> u64 {
        let bx = x * self.bpe as u64;
        match self.tiling {
            Tiling::Linear => y * self.row_pitch + bx,
            Tiling::TileY => {
                let tiles_per_row = self.row_pitch / TILE_Y_WIDTH;
                let tile = (y / TILE_Y_HEIGHT) * tiles_per_row + bx / TILE_Y_WIDTH;
                let (tx, ty) = (bx % TILE_Y_WIDTH, y % TILE_Y_HEIGHT);
                tile * TILE_SIZE + (tx / 16) * 512 + ty * 16 + tx % 16
            }
        }
    }

    /// Whether (x, y, z) is inside level `level` (z: layer or 3-D slice).
    pub fn contains(&self, x: u32, y: u32, z: u32, level: u32) -> bool {
        let e = self.level_extent(level);
        let zmax = if self.dim == ImageDim::D3 {
            e[2]
        } else {
            self.layers
        };
        level < self.levels && x < e[0] && y < e[1] && z < zmax
    }

    /// The layout part of RENDER_SURFACE_STATE.
    pub fn surface_state_fields(&self) -> SurfaceStateFields {
        let code = |a: u32| match a {
            8 => 2,
            16 => 3,
            // 4, and the 1-D layout whose alignment fields the hardware ignores.
            _ => 1,
        };
        SurfaceStateFields {
            width: self.extent[0] as u64 - 1,
            height: self.extent[1] as u64 - 1,
            depth: if self.dim == ImageDim::D3 {
                self.extent[2]
            } else {
                self.layers
            } as u64
                - 1,
            surface_pitch: self.row_pitch - 1,
            surface_qpitch: (self.qpitch >> 2) as u64,
            halign: code(self.halign),
            valign: code(self.valign),
            tile_mode: self.tiling.tile_mode(),
        }
    }

    /// vkGetImageSubresourceLayout for a LINEAR image: (offset, size, row pitch, array
    /// pitch, depth pitch) of `level`/`layer`. Tiled images have no linear rows to report.
    pub fn subresource_layout(&self, level: u32, layer: u32) -> Option<[u64; 5]> {
        if self.tiling != Tiling::Linear {
            return None;
        }
        let e = self.level_extent(level);
        let slice_bytes = if self.is_1d_layout() {
            self.row_pitch
        } else {
            self.qpitch as u64 * self.row_pitch
        };
        let offset = self.texel_address(0, 0, layer, level);
        let depth = if self.dim == ImageDim::D3 { e[2] } else { 1 } as u64;
        let size = if self.is_1d_layout() {
            e[0] as u64 * self.bpe as u64
        } else {
            (depth - 1) * slice_bytes
                + (e[1] as u64 - 1) * self.row_pitch
                + e[0] as u64 * self.bpe as u64
        };
        Some([offset, size, self.row_pitch, slice_bytes, slice_bytes])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn desc(
        dim: ImageDim,
        extent: [u32; 3],
        levels: u32,
        layers: u32,
        tiling: Tiling,
    ) -> ImageDesc {
        ImageDesc {
            dim,
            format: SurfaceFormat::R8G8B8A8_UNORM,
            extent,
            levels,
            layers,
            tiling,
        }
    }

    #[test]
    fn mip_tree_puts_level_2_right_of_level_1() {
        // 16x16 RGBA8, 5 levels: 16 / 8 / 4 / 4(2) / 4(1) rows after VALIGN 4.
        let l = ImageLayout::new(&desc(ImageDim::D2, [16, 16, 1], 5, 1, Tiling::Linear)).unwrap();
        assert_eq!(l.level_origin(0), (0, 0));
        assert_eq!(l.level_origin(1), (0, 16));
        assert_eq!(l.level_origin(2), (8, 16));
        assert_eq!(l.level_origin(3), (8, 20));
        assert_eq!(l.level_origin(4), (8, 24));
        // Width max(16, 8 + 4) = 16; height 16 + max(8, 4 + 4 + 4) = 28.
        assert_eq!(l.row_pitch, 64);
        assert_eq!(l.qpitch, 28);
        assert_eq!(l.size, 64 * 28);
        // A wide level 1 + level 2 widens the tree: 5x2 -> 3 + 1 padded to 4 + 4 = 8 > 8.
        let l = ImageLayout::new(&desc(ImageDim::D2, [5, 2, 1], 3, 1, Tiling::Linear)).unwrap();
        assert_eq!(l.row_pitch / 4, 8);
    }

    #[test]
    fn arrays_are_qpitch_apart_and_tiled_sizes_are_whole_tiles() {
        let l = ImageLayout::new(&desc(ImageDim::D2, [10, 6, 1], 1, 3, Tiling::TileY)).unwrap();
        assert_eq!(l.qpitch, 8, "6 rows padded to VALIGN 4");
        assert_eq!(l.row_pitch, 128);
        assert_eq!(l.size, 4096, "24 rows fit one tile row");
        assert_eq!(l.texel_address(0, 0, 1, 0), l.element_address(0, 8));
        let f = l.surface_state_fields();
        assert_eq!(
            (f.surface_qpitch, f.depth, f.tile_mode, f.surface_pitch),
            (2, 2, 3, 127)
        );
    }

    #[test]
    fn tile_y_swizzles_16_byte_columns() {
        let l = ImageLayout::new(&desc(ImageDim::D2, [64, 64, 1], 1, 1, Tiling::TileY)).unwrap();
        assert_eq!(l.row_pitch, 256);
        // RGBA8: 4 texels per 16-byte column, 32 rows per column.
        assert_eq!(l.texel_address(0, 0, 0, 0), 0);
        assert_eq!(l.texel_address(3, 0, 0, 0), 12);
        assert_eq!(l.texel_address(0, 1, 0, 0), 16);
        assert_eq!(l.texel_address(4, 0, 0, 0), 512);
        assert_eq!(l.texel_address(0, 31, 0, 0), 31 * 16);
        assert_eq!(l.texel_address(32, 0, 0, 0), 4096, "second tile of the row");
        assert_eq!(
            l.texel_address(0, 32, 0, 0),
            2 * 4096,
            "first tile of the next row"
        );
    }

    #[test]
    fn one_d_linear_levels_sit_side_by_side() {
        let l = ImageLayout::new(&desc(ImageDim::D1, [100, 1, 1], 3, 2, Tiling::Linear)).unwrap();
        assert_eq!(l.level_origin(1), (128, 0));
        assert_eq!(l.level_origin(2), (192, 0));
        assert_eq!(l.qpitch, 256, "elements between layers");
        assert_eq!(l.texel_address(5, 0, 1, 2), (256 + 192 + 5) * 4);
    }

    #[test]
    fn three_d_slices_of_every_level_use_qpitch() {
        let l = ImageLayout::new(&desc(ImageDim::D3, [8, 8, 4], 2, 1, Tiling::TileY)).unwrap();
        assert_eq!(l.qpitch, 32, "tiled 3-D QPitch is a whole tile row");
        assert_eq!(l.texel_address(0, 0, 1, 1), l.element_address(0, 8 + 32));
        assert!(l.contains(3, 3, 1, 1));
        assert!(!l.contains(0, 0, 2, 1), "level 1 has 2 slices");
    }

    /// Every texel of a set of small images maps to a distinct address inside the image.
    #[test]
    fn every_texel_has_a_unique_in_bounds_address() {
        use ImageDim::*;
        let cases = [
            (D1, [17, 1, 1], 5, 3),
            (D2, [13, 7, 1], 4, 2),
            (D2, [1, 33, 1], 6, 1),
            (D2, [40, 3, 1], 6, 6),
            (D3, [9, 5, 7], 4, 1),
        ];
        for fmt in [
            SurfaceFormat::R8_UINT,
            SurfaceFormat::R16G16B16A16_FLOAT,
            SurfaceFormat::R32G32B32A32_UINT,
        ] {
            for tiling in [Tiling::Linear, Tiling::TileY] {
                for &(dim, extent, levels, layers) in &cases {
                    let d = ImageDesc {
                        dim,
                        format: fmt,
                        extent,
                        levels,
                        layers,
                        tiling,
                    };
                    let l = ImageLayout::new(&d).unwrap();
                    let mut seen = HashSet::new();
                    for level in 0..levels {
                        let e = l.level_extent(level);
                        let zs = if dim == D3 { e[2] } else { layers };
                        for z in 0..zs {
                            for y in 0..e[1] {
                                for x in 0..e[0] {
                                    let a = l.texel_address(x, y, z, level);
                                    assert!(
                                        a + l.bpe as u64 <= l.size,
                                        "{d:?}: ({x},{y},{z}) L{level} at {a} beyond {}",
                                        l.size
                                    );
                                    assert_eq!(a % l.bpe as u64, 0);
                                    assert!(
                                        seen.insert(a),
                                        "{d:?}: ({x},{y},{z}) L{level} collides at {a}"
                                    );
                                }
                            }
                        }
                    }
                    assert_eq!(l.size % l.alignment, 0);
                    let f = l.surface_state_fields();
                    let back = ImageLayout::from_parts(
                        dim,
                        l.bpe,
                        extent,
                        levels,
                        layers,
                        tiling,
                        f.surface_pitch + 1,
                        if dim == D1 && tiling == Tiling::Linear {
                            l.qpitch
                        } else {
                            (f.surface_qpitch << 2) as u32
                        },
                    );
                    assert_eq!(
                        back.texel_address(0, 0, layers - 1, levels - 1),
                        l.texel_address(0, 0, layers - 1, levels - 1)
                    );
                    assert!(back.size <= l.size);
                }
            }
        }
    }

    #[test]
    fn linear_subresource_layout_reports_rows() {
        let l = ImageLayout::new(&desc(ImageDim::D2, [10, 4, 1], 2, 2, Tiling::Linear)).unwrap();
        let [off, size, row, array, _] = l.subresource_layout(0, 1).unwrap();
        assert_eq!(row, 48, "10 texels padded to HALIGN 4");
        assert_eq!(array, l.qpitch as u64 * 48);
        assert_eq!(off, array);
        assert_eq!(size, 3 * 48 + 40);
        assert!(
            ImageLayout::new(&desc(ImageDim::D2, [10, 4, 1], 1, 1, Tiling::TileY))
                .unwrap()
                .subresource_layout(0, 0)
                .is_none()
        );
    }

    #[test]
    fn out_of_range_images_are_refused() {
        assert!(ImageLayout::new(&desc(ImageDim::D2, [16385, 1, 1], 1, 1, Tiling::TileY)).is_err());
        assert!(ImageLayout::new(&desc(ImageDim::D2, [4, 4, 1], 4, 1, Tiling::TileY)).is_err());
        assert!(ImageLayout::new(&desc(ImageDim::D3, [4, 4, 4], 1, 2, Tiling::TileY)).is_err());
        assert!(ImageLayout::new(&desc(ImageDim::D2, [0, 4, 1], 1, 1, Tiling::TileY)).is_err());
    }
}
