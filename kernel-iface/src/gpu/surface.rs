//! An image surface as the data port's typed messages and the sampler see it: a
//! RENDER_SURFACE_STATE of type 1D/2D/3D/CUBE decoded into the layout of the image
//! (kernel-iface/src/image) plus the view fields. What the fields mean: docs/images.md,
//! "Layout".

use crate::genxml::RenderSurfaceState;
use crate::gpu::memory::GpuMemory;
use crate::image::{ImageDim, ImageLayout, Tiling};
use ferrite_isa::surface_format::SurfaceFormat;

/// RENDER_SURFACE_STATE SurfaceType values of images.
pub const SURFTYPE_1D: u64 = 0;
pub const SURFTYPE_2D: u64 = 1;
pub const SURFTYPE_3D: u64 = 2;
pub const SURFTYPE_CUBE: u64 = 3;

/// Shader channel select values (RENDER_SURFACE_STATE, SCS_*).
pub const SCS_ZERO: u8 = 0;
pub const SCS_ONE: u8 = 1;
pub const SCS_RED: u8 = 4;
pub const SCS_ALPHA: u8 = 7;

/// The kind of image surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    D1,
    D2,
    D3,
    Cube,
}

/// A decoded image surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSurface {
    pub base: u64,
    pub kind: ImageKind,
    /// SurfaceArray.
    pub arrayed: bool,
    pub format: SurfaceFormat,
    /// The layout of everything the surface state can reach.
    pub layout: ImageLayout,
    /// SurfaceMinLOD: the sampler's LOD 0.
    pub min_lod: u32,
    /// MIPCount/LOD: for the sampler the level count - 1, for typed messages the level.
    pub mip_count_lod: u32,
    /// MinimumArrayElement: the view's first layer.
    pub first_layer: u32,
    /// Layers of the view (cube: faces, 6 per cube); 1 for 3-D and non-arrayed surfaces.
    pub layers: u32,
    /// Shader channel selects for R, G, B, A (SCS_* values).
    pub channel_select: [u8; 4],
}

impl ImageSurface {
    /// Decodes an image surface state (types 1D, 2D, 3D, CUBE).
    pub fn decode(ss: &RenderSurfaceState) -> Result<ImageSurface, String> {
        let kind = match ss.surface_type {
            SURFTYPE_1D => ImageKind::D1,
            SURFTYPE_2D => ImageKind::D2,
            SURFTYPE_3D => ImageKind::D3,
            SURFTYPE_CUBE => ImageKind::Cube,
            t => return Err(format!("surface type {t} is not an image")),
        };
        let format = SurfaceFormat::from_hw(ss.surface_format as u32).ok_or_else(|| {
            format!(
                "surface format {} is not in the format table",
                ss.surface_format
            )
        })?;
        let tiling = Tiling::from_tile_mode(ss.tile_mode).ok_or_else(|| {
            format!(
                "tile mode {} is not supported (LINEAR or YMAJOR)",
                ss.tile_mode
            )
        })?;
        let one_d_layout = kind == ImageKind::D1 && tiling == Tiling::Linear;
        // The 1-D layout ignores the alignment fields.
        if (ss.surface_horizontal_alignment != 1 || ss.surface_vertical_alignment != 1)
            && !one_d_layout
        {
            return Err(format!(
                "image alignment codes HALIGN {} VALIGN {}: only HALIGN_4/VALIGN_4 are modelled",
                ss.surface_horizontal_alignment, ss.surface_vertical_alignment
            ));
        }
        if ss.number_of_multisamples != 0 {
            return Err("multisampled surfaces are not supported".into());
        }
        let depth = ss.depth as u32 + 1;
        let first_layer = ss.minimum_array_element as u32;
        let (dim, extent, layers) = match kind {
            ImageKind::D1 => (ImageDim::D1, [ss.width as u32 + 1, 1, 1], depth),
            ImageKind::D2 => (
                ImageDim::D2,
                [ss.width as u32 + 1, ss.height as u32 + 1, 1],
                depth,
            ),
            ImageKind::Cube => (
                ImageDim::D2,
                [ss.width as u32 + 1, ss.height as u32 + 1, 1],
                6 * depth,
            ),
            ImageKind::D3 => (
                ImageDim::D3,
                [ss.width as u32 + 1, ss.height as u32 + 1, depth],
                1,
            ),
        };
        let layers = if kind != ImageKind::D3 && !ss.surface_array && kind != ImageKind::Cube {
            1
        } else {
            layers
        };
        let min_lod = ss.surface_min_lod as u32;
        let mip_count_lod = ss.mip_count_lod as u32;
        // Levels the state can reach: the sampler's min LOD + count, or the typed LOD.
        let levels = (min_lod + mip_count_lod + 1).max(mip_count_lod + 1).min(15);
        // QPitch in rows (the 1-D layout: in elements), stored divided by 4.
        let qpitch = (ss.surface_qpitch << 2) as u32;
        let bpe = format.bytes_per_texel();
        let row_pitch = if one_d_layout {
            qpitch as u64 * bpe as u64
        } else {
            ss.surface_pitch + 1
        };
        let layout = ImageLayout::from_parts(
            dim,
            bpe,
            extent,
            levels,
            first_layer + layers,
            tiling,
            row_pitch,
            qpitch,
        );
        let scs = |v: u64| v as u8;
        Ok(ImageSurface {
            base: ss.surface_base_address,
            kind,
            arrayed: ss.surface_array,
            format,
            layout,
            min_lod,
            mip_count_lod,
            first_layer,
            layers,
            channel_select: [
                scs(ss.shader_channel_select_red),
                scs(ss.shader_channel_select_green),
                scs(ss.shader_channel_select_blue),
                scs(ss.shader_channel_select_alpha),
            ],
        })
    }

    /// Extent of absolute level `level`: width, height, and depth (3-D) or view layers.
    pub fn level_extent(&self, level: u32) -> [u32; 3] {
        let e = self.layout.level_extent(level);
        match self.kind {
            ImageKind::D3 => e,
            _ => [e[0], e[1], self.layers],
        }
    }

    /// GPU address of texel (x, y) of view layer / 3-D slice `z` at absolute level `level`,
    /// or None when outside the surface.
    pub fn texel_address(&self, x: u32, y: u32, z: u32, level: u32) -> Option<u64> {
        let e = self.level_extent(level);
        if level >= self.layout.levels || x >= e[0] || y >= e[1] || z >= e[2] {
            return None;
        }
        let slice = if self.kind == ImageKind::D3 {
            z
        } else {
            self.first_layer + z
        };
        Some(self.base + self.layout.texel_address(x, y, slice, level))
    }

    /// Reads and decodes one texel (register bits, R G B A), None when outside.
    pub fn load(
        &self,
        mem: &GpuMemory,
        x: u32,
        y: u32,
        z: u32,
        level: u32,
    ) -> Result<Option<[u32; 4]>, String> {
        let Some(a) = self.texel_address(x, y, z, level) else {
            return Ok(None);
        };
        let mut raw = [0u8; 16];
        let n = self.format.bytes_per_texel() as usize;
        mem.read(a, &mut raw[..n]).map_err(|e| e.to_string())?;
        Ok(Some(self.format.decode(&raw)))
    }

    /// Applies the shader channel selects to decoded register bits.
    pub fn swizzle(&self, v: [u32; 4]) -> [u32; 4] {
        let one = self.format.missing_component(3);
        self.channel_select.map(|s| match s {
            SCS_ZERO => 0,
            SCS_ONE => one,
            SCS_RED..=SCS_ALPHA => v[(s - SCS_RED) as usize],
            _ => 0,
        })
    }
}
