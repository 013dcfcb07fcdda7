//! VkImage, VkImageView and VkBufferView: image layouts from the shared Gen9 layout module
//! (`kernel_iface::image`), and the RENDER_SURFACE_STATE of each view (storage images and
//! storage texel buffers, read and written with typed surface messages). What each
//! surface-state field means: docs/images.md.

use std::sync::Arc;

use ash::vk;
use ash::vk::Handle;
use ferrite_isa::surface_format::SurfaceFormat;
use kernel_iface::genxml::{RenderSurfaceState, SURFTYPE_BUFFER};
use kernel_iface::image::{ImageDesc, ImageDim, ImageLayout, Tiling};

use crate::device::{dev, Device};
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::format;
use crate::memory::{BindingSlot, Memory};
use crate::physical::memory_types;

/// RENDER_SURFACE_STATE SurfaceType values of images.
const SURFTYPE_1D: u64 = 0;
const SURFTYPE_2D: u64 = 1;
const SURFTYPE_3D: u64 = 2;
const SURFTYPE_CUBE: u64 = 3;
/// Shader channel selects: identity (R, G, B, A).
const SCS_RED: u64 = 4;
const SCS_GREEN: u64 = 5;
const SCS_BLUE: u64 = 6;
const SCS_ALPHA: u64 = 7;
/// MOCS index anv uses for every surface on Gen9 (docs/gen9.md 6.2).
const MOCS: u64 = 4;

pub struct Image {
    pub format: vk::Format,
    pub hw: SurfaceFormat,
    pub ty: vk::ImageType,
    pub flags: vk::ImageCreateFlags,
    pub layout: ImageLayout,
    pub binding: BindingSlot,
}

impl Image {
    pub(crate) fn new(info: &vk::ImageCreateInfo<'_>) -> Result<Image> {
        let refuse = |why: String| {
            log::warn!("vkCreateImage: {why}");
            DriverError::FormatNotSupported
        };
        if info.samples != vk::SampleCountFlags::TYPE_1 {
            return Err(refuse("multisampled images are not supported".into()));
        }
        let props = format::image_format_properties(
            info.format,
            info.image_type,
            info.tiling,
            info.usage,
            info.flags,
        )
        .map_err(|_| {
            refuse(format!(
                "{:?} {:?} {:?} usage {:?} flags {:?} is not supported",
                info.format, info.image_type, info.tiling, info.usage, info.flags
            ))
        })?;
        let e = info.extent;
        let m = props.max_extent;
        if e.width == 0
            || e.height == 0
            || e.depth == 0
            || e.width > m.width
            || e.height > m.height
            || e.depth > m.depth
            || info.mip_levels == 0
            || info.mip_levels > props.max_mip_levels
            || info.array_layers == 0
            || info.array_layers > props.max_array_layers
        {
            return Err(DriverError::InvalidArgument(format!(
                "image extent {}x{}x{}, {} levels, {} layers exceed the format's limits",
                e.width, e.height, e.depth, info.mip_levels, info.array_layers
            )));
        }
        let hw = format::surface_format(info.format).ok_or(DriverError::FormatNotSupported)?;
        let dim = match info.image_type {
            vk::ImageType::TYPE_1D => ImageDim::D1,
            vk::ImageType::TYPE_3D => ImageDim::D3,
            _ => ImageDim::D2,
        };
        let tiling = if info.tiling == vk::ImageTiling::LINEAR {
            Tiling::Linear
        } else {
            // OPTIMAL is the hardware's Y-major tiling.
            Tiling::TileY
        };
        let layout = ImageLayout::new(&ImageDesc {
            dim,
            format: hw,
            extent: [e.width, e.height, e.depth],
            levels: info.mip_levels,
            layers: info.array_layers,
            tiling,
        })
        .map_err(|e| refuse(e.to_string()))?;
        Ok(Image {
            format: info.format,
            hw,
            ty: info.image_type,
            flags: info.flags,
            layout,
            binding: BindingSlot::default(),
        })
    }

    pub fn requirements(&self, device: &Device) -> vk::MemoryRequirements {
        vk::MemoryRequirements {
            size: self.layout.size,
            alignment: self.layout.alignment,
            memory_type_bits: (1u32 << memory_types(device.adapter.info).len()) - 1,
        }
    }

    fn bind(&self, device: &Device, memory: vk::DeviceMemory, offset: u64) -> Result<()> {
        let req = self.requirements(device);
        self.binding.bind(device, req, memory, offset, "image")
    }

    /// The surface state the meta kernels (crate::meta) access level `level` of every layer
    /// through: typed messages in the UINT format of the texel size (`format`), absolute
    /// layer coordinates (MinimumArrayElement 0), with the memory it points into.
    pub fn transfer_surface(
        &self,
        level: u32,
        format: SurfaceFormat,
    ) -> Result<(Arc<Memory>, Vec<u32>)> {
        if level >= self.layout.levels {
            return Err(DriverError::InvalidArgument(format!(
                "mip level {level} of an image with {}",
                self.layout.levels
            )));
        }
        let (memory, offset) = self.resolve()?;
        let layers = u64::from(self.layout.layers) - 1;
        let (surface_type, arrayed, depth) = match self.ty {
            vk::ImageType::TYPE_1D => (SURFTYPE_1D, true, layers),
            vk::ImageType::TYPE_3D => {
                (SURFTYPE_3D, false, self.layout.surface_state_fields().depth)
            }
            _ => (SURFTYPE_2D, true, layers),
        };
        let ss = image_surface(
            &self.layout,
            memory.va + offset,
            SurfaceParams {
                surface_type,
                arrayed,
                format,
                first_layer: 0,
                depth,
                level,
            },
        );
        Ok((memory, ss.to_dwords()))
    }

    /// The sampled surface a blit reads (crate::meta, `Source::Blit`): one level and one
    /// layer of the image in its own format, non-arrayed, so the sampler's LOD 0 is `level`
    /// (SurfaceMinLOD) and the layer is MinimumArrayElement; a 3-D image keeps its depth.
    pub fn blit_source_surface(&self, level: u32, layer: u32) -> Result<(Arc<Memory>, Vec<u32>)> {
        if level >= self.layout.levels || layer >= self.layout.layers {
            return Err(DriverError::InvalidArgument(format!(
                "blit source level {level} layer {layer} of an image with {} levels and {} layers",
                self.layout.levels, self.layout.layers
            )));
        }
        let (memory, offset) = self.resolve()?;
        let (surface_type, depth) = match self.ty {
            vk::ImageType::TYPE_1D => (SURFTYPE_1D, 0),
            vk::ImageType::TYPE_3D => (SURFTYPE_3D, self.layout.surface_state_fields().depth),
            _ => (SURFTYPE_2D, 0),
        };
        let ss = RenderSurfaceState {
            mip_count_lod: 0,
            surface_min_lod: u64::from(level),
            ..image_surface(
                &self.layout,
                memory.va + offset,
                SurfaceParams {
                    surface_type,
                    arrayed: false,
                    format: self.hw,
                    first_layer: layer,
                    depth,
                    level,
                },
            )
        };
        Ok((memory, ss.to_dwords()))
    }

    /// The memory and the byte offset in it where the image starts.
    pub fn resolve(&self) -> Result<(Arc<Memory>, u64)> {
        self.binding.resolve("image")
    }
}

/// A surface state ready for the binding table, with the memory it points into.
#[derive(Clone)]
pub struct ViewSurface {
    pub memory: Arc<Memory>,
    /// Byte offset of the surface in the memory object, and the bytes it covers.
    pub offset: u64,
    pub size: u64,
    pub state: Arc<[u32]>,
}

pub struct ImageView {
    /// The storage-image surface (typed messages): one level, the view's layers.
    pub storage: ViewSurface,
    /// The storage surface in the view's own format when `storage` holds a lowered one: what
    /// kernels that only write the image use (`BindingKind::StorageImageWriteOnly`; typed
    /// writes convert every storage format natively).
    pub storage_write: Option<ViewSurface>,
    /// The sampled-image surface (sampler messages): the view's levels and layers.
    pub sampled: ViewSurface,
}

fn remaining(total: u32, base: u32, count: u32) -> Result<u32> {
    let n = if count == vk::REMAINING_MIP_LEVELS {
        total.checked_sub(base)
    } else {
        Some(count).filter(|c| base.checked_add(*c).is_some_and(|e| e <= total))
    };
    n.filter(|n| *n > 0).ok_or_else(|| {
        DriverError::InvalidArgument(format!(
            "subresource range {base}+{count} outside the image's {total}"
        ))
    })
}

impl ImageView {
    fn new(d: &Device, info: &vk::ImageViewCreateInfo<'_>) -> Result<ImageView> {
        let image = d.images.get(info.image.as_raw())?;
        let r = info.subresource_range;
        if r.aspect_mask != vk::ImageAspectFlags::COLOR {
            return Err(DriverError::InvalidArgument(format!(
                "image view aspect {:?} (only COLOR images exist)",
                r.aspect_mask
            )));
        }
        // Every level of the range must exist even though a storage view reads only the first.
        let levels = remaining(image.layout.levels, r.base_mip_level, r.level_count)?;
        let total_layers = if image.ty == vk::ImageType::TYPE_3D {
            1
        } else {
            image.layout.layers
        };
        let layers = remaining(total_layers, r.base_array_layer, r.layer_count)?;
        let hw = format::surface_format(info.format).ok_or(DriverError::FormatNotSupported)?;
        if info.format != image.format
            && (!image.flags.contains(vk::ImageCreateFlags::MUTABLE_FORMAT)
                || hw.bytes_per_texel() != image.hw.bytes_per_texel())
        {
            return Err(DriverError::InvalidArgument(format!(
                "view format {:?} is not compatible with image format {:?}",
                info.format, image.format
            )));
        }
        let ok_type = match (image.ty, info.view_type) {
            (
                vk::ImageType::TYPE_1D,
                vk::ImageViewType::TYPE_1D | vk::ImageViewType::TYPE_1D_ARRAY,
            ) => true,
            (
                vk::ImageType::TYPE_2D,
                vk::ImageViewType::TYPE_2D | vk::ImageViewType::TYPE_2D_ARRAY,
            ) => true,
            (vk::ImageType::TYPE_2D, vk::ImageViewType::CUBE | vk::ImageViewType::CUBE_ARRAY) => {
                image.flags.contains(vk::ImageCreateFlags::CUBE_COMPATIBLE)
            }
            (vk::ImageType::TYPE_3D, vk::ImageViewType::TYPE_3D) => true,
            _ => false,
        };
        if !ok_type {
            return Err(DriverError::InvalidArgument(format!(
                "view type {:?} of a {:?} image",
                info.view_type, image.ty
            )));
        }
        let (memory, offset) = image.resolve()?;
        let l = &image.layout;
        let f = l.surface_state_fields();
        // A storage view: typed messages see one level (MIPCount/LOD), the view's layers
        // from MinimumArrayElement (Depth counts them); cube views are 2-D arrays of faces.
        let (surface_type, arrayed) = match info.view_type {
            vk::ImageViewType::TYPE_1D => (SURFTYPE_1D, false),
            vk::ImageViewType::TYPE_1D_ARRAY => (SURFTYPE_1D, true),
            vk::ImageViewType::TYPE_3D => (SURFTYPE_3D, false),
            vk::ImageViewType::TYPE_2D => (SURFTYPE_2D, false),
            _ => (SURFTYPE_2D, true),
        };
        let depth = if surface_type == SURFTYPE_3D {
            f.depth
        } else {
            u64::from(layers) - 1
        };
        // SurfaceMinLOD = the level too: typed messages ignore it (they access MIPCount/LOD),
        // and imageSize's `resinfo` at LOD 0 then answers the view's level.
        let ss = RenderSurfaceState {
            surface_min_lod: u64::from(r.base_mip_level),
            ..image_surface(
                &image.layout,
                memory.va + offset,
                SurfaceParams {
                    surface_type,
                    arrayed,
                    format: format::storage_surface_format(hw),
                    first_layer: r.base_array_layer,
                    depth,
                    level: r.base_mip_level,
                },
            )
        };
        // A sampled view: the format itself (the sampler converts), every level of the range
        // (SurfaceMinLOD = the base level, MIPCount = the level count - 1).
        let sampled = RenderSurfaceState {
            surface_format: hw as u64,
            mip_count_lod: u64::from(levels - 1),
            surface_min_lod: u64::from(r.base_mip_level),
            ..ss
        };
        // A sampled cube view is SURFTYPE_CUBE, so that the sampler selects the face from
        // the direction (and filters across face edges): Depth counts cubes, not faces, and
        // every face is enabled, as the PRM's RENDER_SURFACE_STATE describes for cubes.
        let cube = matches!(
            info.view_type,
            vk::ImageViewType::CUBE | vk::ImageViewType::CUBE_ARRAY
        );
        let sampled = if cube {
            if layers % 6 != 0 {
                return Err(DriverError::InvalidArgument(format!(
                    "cube view of {layers} layers (not a multiple of 6)"
                )));
            }
            RenderSurfaceState {
                surface_type: SURFTYPE_CUBE,
                depth: u64::from(layers / 6 - 1),
                render_target_view_extent: u64::from(layers / 6 - 1),
                cube_face_enable_positive_x: true,
                cube_face_enable_negative_x: true,
                cube_face_enable_positive_y: true,
                cube_face_enable_negative_y: true,
                cube_face_enable_positive_z: true,
                cube_face_enable_negative_z: true,
                ..sampled
            }
        } else {
            sampled
        };
        let surface = |state: RenderSurfaceState| ViewSurface {
            memory: memory.clone(),
            offset,
            size: l.size,
            state: state.to_dwords().into(),
        };
        let own = (ss.surface_format != hw as u64).then_some(RenderSurfaceState {
            surface_format: hw as u64,
            ..ss
        });
        Ok(ImageView {
            storage: surface(ss),
            storage_write: own.map(surface),
            sampled: surface(sampled),
        })
    }
}

/// The fields every surface state Ferrite builds over memory shares: the surface at `address`,
/// anv's MOCS and the identity channel selects.
fn identity_at(address: u64) -> RenderSurfaceState {
    RenderSurfaceState {
        mocs: MOCS,
        shader_channel_select_red: SCS_RED,
        shader_channel_select_green: SCS_GREEN,
        shader_channel_select_blue: SCS_BLUE,
        shader_channel_select_alpha: SCS_ALPHA,
        surface_base_address: address,
        ..Default::default()
    }
}

/// What a surface state over an image chooses: its type, arrayness, format, first layer,
/// Depth field and the level typed messages access (MIPCount/LOD).
pub struct SurfaceParams {
    pub surface_type: u64,
    pub arrayed: bool,
    pub format: SurfaceFormat,
    pub first_layer: u32,
    pub depth: u64,
    pub level: u32,
}

/// A typed-message RENDER_SURFACE_STATE over an image at `address` laid out as `l`
/// (identity channel selects; the layout fields from the layout module).
pub fn image_surface(l: &ImageLayout, address: u64, p: SurfaceParams) -> RenderSurfaceState {
    let f = l.surface_state_fields();
    RenderSurfaceState {
        surface_type: p.surface_type,
        surface_array: p.arrayed,
        surface_format: p.format as u64,
        surface_horizontal_alignment: f.halign,
        surface_vertical_alignment: f.valign,
        tile_mode: f.tile_mode,
        width: f.width,
        height: f.height,
        depth: p.depth,
        surface_pitch: f.surface_pitch,
        surface_qpitch: f.surface_qpitch,
        minimum_array_element: u64::from(p.first_layer),
        render_target_view_extent: p.depth,
        mip_count_lod: u64::from(p.level),
        surface_min_lod: 0,
        ..identity_at(address)
    }
}

/// A formatted SURFTYPE_BUFFER state of `n` (> 0) elements of `format` at `address`:
/// Width/Height/Depth hold the element count - 1 (7 + 14 + 6 bits), SurfacePitch the element
/// size - 1.
pub fn typed_buffer_surface(address: u64, n: u64, format: SurfaceFormat) -> RenderSurfaceState {
    let last = n - 1;
    RenderSurfaceState {
        surface_type: SURFTYPE_BUFFER,
        surface_format: format as u64,
        surface_vertical_alignment: 1,
        surface_horizontal_alignment: 1,
        width: last & 0x7F,
        height: (last >> 7) & 0x3FFF,
        depth: (last >> 21) & 0x3F,
        surface_pitch: u64::from(format.bytes_per_texel()) - 1,
        ..identity_at(address)
    }
}

pub struct BufferView {
    /// The storage texel buffer surface (typed messages, possibly the lowered format).
    pub surface: ViewSurface,
    /// Whether `surface` holds a lowered format: write-only kernels then take `sampled`,
    /// the same buffer in the view's own format (see `ImageView::storage_write`).
    pub lowered: bool,
    /// The uniform texel buffer surface (sampler `ld`): the view's own format.
    pub sampled: ViewSurface,
}

impl BufferView {
    fn new(d: &Device, info: &vk::BufferViewCreateInfo<'_>) -> Result<BufferView> {
        let buf = d.buffers.get(info.buffer.as_raw())?;
        let hw = format::surface_format(info.format)
            .filter(|_| !format::buffer_features(info.format).is_empty())
            .ok_or_else(|| {
                log::warn!(
                    "vkCreateBufferView: format {:?} has no buffer features",
                    info.format
                );
                DriverError::FormatNotSupported
            })?;
        let (memory, base, range) = buf.resolve_range(info.offset, info.range, "buffer view")?;
        let bpe = u64::from(hw.bytes_per_texel());
        let n = range / bpe;
        if n > crate::physical::MAX_TEXEL_BUFFER_ELEMENTS as u64 {
            return Err(DriverError::InvalidArgument(format!(
                "{n} texels exceed maxTexelBufferElements"
            )));
        }
        let offset = base + info.offset;
        // SURFTYPE_BUFFER with a format: Width/Height/Depth hold the element count - 1
        // (7 + 14 + 6 bits), SurfacePitch the element size - 1.
        let state = |format: SurfaceFormat| -> Arc<[u32]> {
            let ss = if n == 0 {
                RenderSurfaceState {
                    surface_type: kernel_iface::genxml::SURFTYPE_NULL,
                    surface_format: hw as u64,
                    ..Default::default()
                }
            } else {
                typed_buffer_surface(memory.va + offset, n, format)
            };
            ss.to_dwords().into()
        };
        let surface = |state| ViewSurface {
            memory: memory.clone(),
            offset,
            size: n * bpe,
            state,
        };
        Ok(BufferView {
            surface: surface(state(format::storage_surface_format(hw))),
            lowered: format::storage_surface_format(hw) != hw,
            sampled: surface(state(hw)),
        })
    }
}

crate::device::registry_creates! {
    create_image, "vkCreateImage", ImageCreateInfo => images, Image, "pImage", |_, info| Image::new(info);
}

crate::device::registry_destroys! {
    destroy_image, "vkDestroyImage", vk::Image => images;
}

crate::memory::requirements2_entries! {
    get_image_memory_requirements2, "vkGetImageMemoryRequirements2KHR",
        ImageMemoryRequirementsInfo2, |d, info| d.images.get(info.image.as_raw())?.requirements(d);
}

pub(crate) unsafe extern "system" fn get_image_sparse_memory_requirements(
    _device: vk::Device,
    _image: vk::Image,
    p_count: *mut u32,
    _p_req: *mut vk::SparseImageMemoryRequirements,
) {
    ffi::void("vkGetImageSparseMemoryRequirements", || {
        // SAFETY: valid count pointer per the spec; no image is sparse.
        unsafe { ffi::write(p_count, 0, "pSparseMemoryRequirementCount") }
    })
}

crate::device::registry_binds! {
    get_image_memory_requirements, "vkGetImageMemoryRequirements";
    bind_image_memory, "vkBindImageMemory", vk::Image;
    bind_image_memory2, "vkBindImageMemory2KHR", BindImageMemoryInfo.image => images;
}

pub(crate) unsafe extern "system" fn get_image_subresource_layout(
    device: vk::Device,
    image: vk::Image,
    p_sub: *const vk::ImageSubresource,
    p_layout: *mut vk::SubresourceLayout,
) {
    ffi::void("vkGetImageSubresourceLayout", || {
        // SAFETY: live device and valid subresource per the spec.
        let (d, sub) = unsafe { (dev(device)?, ffi::read(p_sub, "pSubresource")?) };
        let img = d.images.get(image.as_raw())?;
        let [offset, size, row_pitch, array_pitch, depth_pitch] = img
            .layout
            .subresource_layout(sub.mip_level, sub.array_layer)
            .ok_or_else(|| {
                DriverError::InvalidArgument(
                    "vkGetImageSubresourceLayout of an OPTIMAL (tiled) image".into(),
                )
            })?;
        let out = vk::SubresourceLayout {
            offset,
            size,
            row_pitch,
            array_pitch,
            depth_pitch,
        };
        // SAFETY: valid output pointer per the spec.
        unsafe { ffi::write(p_layout, out, "pLayout") }
    })
}

crate::device::registry_creates! {
    create_image_view, "vkCreateImageView", ImageViewCreateInfo => image_views, ImageView, "pView", ImageView::new;
}

crate::device::registry_destroys! {
    destroy_image_view, "vkDestroyImageView", vk::ImageView => image_views;
}

crate::device::registry_creates! {
    create_buffer_view, "vkCreateBufferView", BufferViewCreateInfo => buffer_views, BufferView, "pView", BufferView::new;
}

crate::device::registry_destroys! {
    destroy_buffer_view, "vkDestroyBufferView", vk::BufferView => buffer_views;
}
