//! VkPhysicalDevice: what the device is and what Ferrite offers on it.
//!
//! Everything here is derived from kernel-iface's device-info row; nothing is advertised before
//! it works (of the core features: robustBufferAccess, shaderFloat64/Int64/Int16; timestamps:
//! 36 valid bits on the queue).

use std::sync::Arc;

use ash::vk;
use kernel_iface::{DeviceInfo, DrmDevice};

use crate::entry::DEVICE_EXTENSIONS;
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::handles;

/// Intel's PCI vendor id.
pub const VENDOR_ID_INTEL: u32 = 0x8086;

/// One device the driver can use, shared by its VkPhysicalDevice and every VkDevice made on it.
pub struct Adapter {
    pub drm: Arc<DrmDevice>,
    pub info: &'static DeviceInfo,
    pub heap_size: u64,
}

impl Adapter {
    pub fn new(drm: Arc<DrmDevice>) -> Adapter {
        let info = drm.info();
        Adapter {
            heap_size: heap_size(info),
            drm,
            info,
        }
    }

    pub fn is_simulated(&self) -> bool {
        self.drm.is_simulated()
    }

    /// "Intel(R) HD Graphics 520 (SKL GT2)", plus " [simulated]" on the simulated device.
    pub fn device_name(&self) -> String {
        let sim = if self.is_simulated() {
            " [simulated]"
        } else {
            ""
        };
        format!("{} ({}){sim}", self.info.marketing_name, self.info.name)
    }

    pub fn properties(&self) -> vk::PhysicalDeviceProperties {
        vk::PhysicalDeviceProperties {
            api_version: crate::api_version::device_version(self.info),
            driver_version: driver_version(),
            vendor_id: VENDOR_ID_INTEL,
            device_id: u32::from(self.info.pci_id),
            device_type: vk::PhysicalDeviceType::INTEGRATED_GPU,
            device_name: ffi::name_array(&self.device_name()),
            pipeline_cache_uuid: pipeline_cache_uuid(self.info.pci_id),
            limits: limits(self.info),
            sparse_properties: vk::PhysicalDeviceSparseProperties::default(),
        }
    }

    pub fn memory_properties(&self) -> vk::PhysicalDeviceMemoryProperties {
        let mut props = vk::PhysicalDeviceMemoryProperties {
            memory_heap_count: 1,
            ..Default::default()
        };
        props.memory_heaps[0] = vk::MemoryHeap {
            size: self.heap_size,
            flags: vk::MemoryHeapFlags::DEVICE_LOCAL,
        };
        let types = memory_types(self.info);
        props.memory_type_count = types.len() as u32;
        for (slot, flags) in props.memory_types.iter_mut().zip(types) {
            *slot = vk::MemoryType {
                property_flags: flags,
                heap_index: 0,
            };
        }
        props
    }

    pub fn queue_families(&self) -> [vk::QueueFamilyProperties; 1] {
        [vk::QueueFamilyProperties {
            queue_flags: vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER,
            queue_count: 1,
            // Timestamps are not implemented yet: 0 valid bits says so.
            // The command streamer's TIMESTAMP register (PIPE_CONTROL post-sync write) has 36 bits.
            timestamp_valid_bits: 36,
            min_image_transfer_granularity: vk::Extent3D {
                width: 1,
                height: 1,
                depth: 1,
            },
        }]
    }
}

/// The memory types: UMA, all in the one heap. On LLC parts a CPU mapping is write-back and
/// snooped by the GPU, so a HOST_CACHED type is honest there; the plain coherent type comes
/// first (the spec orders types whose flags are a subset of another's before it).
pub fn memory_types(info: &DeviceInfo) -> Vec<vk::MemoryPropertyFlags> {
    let base = vk::MemoryPropertyFlags::DEVICE_LOCAL
        | vk::MemoryPropertyFlags::HOST_VISIBLE
        | vk::MemoryPropertyFlags::HOST_COHERENT;
    let mut types = vec![base];
    if info.has_llc {
        types.push(base | vk::MemoryPropertyFlags::HOST_CACHED);
    }
    types
}

/// Memory the device may use: three quarters of system RAM (the rest stays for the system),
/// capped by the GPU address space.
fn heap_size(info: &DeviceInfo) -> u64 {
    static RAM: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    (*RAM.get_or_init(system_ram) / 4 * 3).min(info.aperture_size)
}

/// System RAM from /proc/meminfo (read once per process).
fn system_ram() -> u64 {
    let ram = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    });
    let ram = ram.unwrap_or_else(|| {
        log::warn!("cannot read MemTotal from /proc/meminfo; assuming 4 GiB of RAM");
        4 << 30
    });
    ram
}

/// The driver version in Vulkan's encoding, from the crate version.
pub fn driver_version() -> u32 {
    let part = |s: &str| s.parse::<u32>().unwrap_or(0);
    vk::make_api_version(
        0,
        part(env!("CARGO_PKG_VERSION_MAJOR")),
        part(env!("CARGO_PKG_VERSION_MINOR")),
        part(env!("CARGO_PKG_VERSION_PATCH")),
    )
}

/// Stable for one driver build and device id; different builds (their compiler may emit
/// different code) or devices never share a pipeline cache.
pub fn pipeline_cache_uuid(pci_id: u16) -> [u8; vk::UUID_SIZE] {
    let fnv = |seed: u64| {
        let mut h = seed;
        for b in env!("FERRITE_BUILD_HASH")
            .bytes()
            .chain(env!("CARGO_PKG_VERSION").bytes())
            .chain(pci_id.to_le_bytes())
        {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    };
    let mut uuid = [0u8; vk::UUID_SIZE];
    uuid[..8].copy_from_slice(&fnv(0xcbf2_9ce4_8422_2325).to_le_bytes());
    uuid[8..].copy_from_slice(&fnv(0x8422_2325_cbf2_9ce4).to_le_bytes());
    uuid
}

/// Descriptor sets a pipeline layout may hold. Sets are flattened into one binding table
/// (docs/dispatch-contract.md), so the hardware sets no bound of its own; 32 is anv's value.
pub const MAX_BOUND_DESCRIPTOR_SETS: u32 = 32;

/// maxSamplerLodBias: anv's 16. SAMPLER_STATE's Texture LOD Bias is S4.8, -16..16 - 1/256;
/// a bias of 16 is stored as the largest code (within the spec's mipmap precision).
pub const MAX_SAMPLER_LOD_BIAS: f32 = 16.0;

/// Buffer descriptors one compute stage (and so one pipeline layout, and one set) may hold:
/// the first ones take binding-table entries, the rest are reached through the descriptor
/// table with A64 messages (docs/descriptors.md, "Buffers past the binding table").
pub const MAX_BUFFER_DESCRIPTORS: u32 = crate::pipeline::MAX_DESCRIPTORS;
/// Memory objects that may exist at once (maxMemoryAllocationCount). Each is one GEM object,
/// and i915 hands out GEM handles as positive `int`s (1 .. 2^31 - 1); the simulated kernel's
/// counter is wider, and the 48-bit GPU address space holds 2^36 pages, so the handle range
/// is the bound. anv reports 2^32 - 1 without such a bound (docs/limits.md).
pub const MAX_MEMORY_ALLOCATION_COUNT: u32 = i32::MAX as u32;
/// Dynamic buffers of one set layout (maxDescriptorSet*BuffersDynamic): the binding table's
/// count, as before buffers could live past it; far above anv's 16 (docs/limits.md).
pub const MAX_DYNAMIC_BUFFERS: u32 = crate::pipeline::MAX_BTI;
/// Descriptors one set layout may hold (maxPerSetDescriptors). A set is the driver's own
/// memory; what one compute stage reaches is checked at pipeline-layout creation over all of
/// the layout's sets (`PipelineLayout::new`): as many buffers, and the binding table's
/// entries for images, texel buffers and samplers.
pub const MAX_PER_SET_DESCRIPTORS: u32 = crate::pipeline::MAX_DESCRIPTORS;
/// Typed buffer surfaces address at most 2^27 elements (Width/Height/Depth: 7 + 14 + 6 bits).
pub const MAX_TEXEL_BUFFER_ELEMENTS: u32 = 1 << 27;

/// minTexelBufferOffsetAlignment, and the 1.3 texel-buffer offset alignments.
pub const TEXEL_BUFFER_OFFSET_ALIGNMENT: u64 = crate::limits::TEXEL_BUFFER_OFFSET_ALIGNMENT;

/// Largest range of a uniform or storage buffer descriptor (`HwFacts::max_buffer_range`).
pub const MAX_BUFFER_RANGE: u32 = ferrite_compiler::hw::GEN9.max_buffer_range();

/// maxBufferSize (VK_KHR_maintenance4, Vulkan 1.3): the largest VkBuffer vkCreateBuffer makes.
/// Every byte of such a buffer is reachable: a descriptor's surface state has a 64-bit base
/// address (any offset, ranges up to [`MAX_BUFFER_RANGE`]), device addresses are 48-bit A64
/// addresses, and transfers go in chunks. 2^32 is also the element count a RAW surface's
/// Width/Height/Depth fields hold, the value anv reports on Gen9 (docs/limits.md).
pub const MAX_BUFFER_SIZE: u64 = 1 << 32;

/// Limits. Compute limits come from the device row (Gen9: 56 hardware threads per work group,
/// up to SIMD32 each, 64 KiB SLM); descriptor counts and buffer ranges from the binding-table
/// addressing (docs/limits.md); the rest are the spec's required minimums for what a
/// compute-only 1.0 device must still report, so nothing is claimed beyond what is built.
pub fn limits(info: &DeviceInfo) -> vk::PhysicalDeviceLimits {
    // The widest dispatch the compiler plans (SIMD32) times the group's thread budget, capped
    // at 1024 as Mesa's anv does for Gen9.
    let max_invocations = (info.max_threads_per_group * 32).min(1024);
    let samples = vk::SampleCountFlags::TYPE_1 | vk::SampleCountFlags::TYPE_4;
    vk::PhysicalDeviceLimits {
        // The RENDER_SURFACE_STATE fields' widths, as anv reports on Gen9 (the layout
        // module's limits); tests/tests/image_limits.rs uses each at its limit.
        max_image_dimension1_d: kernel_iface::image::layout::MAX_EXTENT_2D,
        max_image_dimension2_d: kernel_iface::image::layout::MAX_EXTENT_2D,
        max_image_dimension3_d: kernel_iface::image::layout::MAX_EXTENT_3D,
        max_image_dimension_cube: kernel_iface::image::layout::MAX_EXTENT_2D,
        max_image_array_layers: kernel_iface::image::layout::MAX_LAYERS,
        max_texel_buffer_elements: MAX_TEXEL_BUFFER_ELEMENTS,
        max_uniform_buffer_range: MAX_BUFFER_RANGE,
        max_storage_buffer_range: MAX_BUFFER_RANGE,
        max_push_constants_size: 128,
        max_memory_allocation_count: MAX_MEMORY_ALLOCATION_COUNT,
        max_sampler_allocation_count: crate::limits::MAX_SAMPLER_ALLOCATION_COUNT,
        buffer_image_granularity: 1,
        sparse_address_space_size: 0,
        max_bound_descriptor_sets: MAX_BOUND_DESCRIPTOR_SETS,
        max_per_stage_descriptor_samplers: crate::limits::MAX_SAMPLERS,
        max_per_stage_descriptor_uniform_buffers: MAX_BUFFER_DESCRIPTORS,
        max_per_stage_descriptor_storage_buffers: MAX_BUFFER_DESCRIPTORS,
        max_per_stage_descriptor_sampled_images: crate::limits::MAX_SAMPLED_IMAGES,
        max_per_stage_descriptor_storage_images: crate::limits::MAX_STORAGE_IMAGES,
        max_per_stage_descriptor_input_attachments: 4,
        max_per_stage_resources: MAX_BUFFER_DESCRIPTORS,
        max_descriptor_set_samplers: crate::limits::MAX_SAMPLERS,
        max_descriptor_set_uniform_buffers: MAX_BUFFER_DESCRIPTORS,
        max_descriptor_set_uniform_buffers_dynamic: MAX_DYNAMIC_BUFFERS,
        max_descriptor_set_storage_buffers: MAX_BUFFER_DESCRIPTORS,
        max_descriptor_set_storage_buffers_dynamic: MAX_DYNAMIC_BUFFERS,
        max_descriptor_set_sampled_images: crate::limits::MAX_SAMPLED_IMAGES,
        max_descriptor_set_storage_images: crate::limits::MAX_STORAGE_IMAGES,
        max_descriptor_set_input_attachments: 4,
        max_vertex_input_attributes: 16,
        max_vertex_input_bindings: 16,
        max_vertex_input_attribute_offset: 2047,
        max_vertex_input_binding_stride: 2048,
        max_vertex_output_components: 64,
        // Tessellation and geometry shaders are unsupported features: their limits may be 0.
        max_tessellation_generation_level: 0,
        max_tessellation_patch_size: 0,
        max_tessellation_control_per_vertex_input_components: 0,
        max_tessellation_control_per_vertex_output_components: 0,
        max_tessellation_control_per_patch_output_components: 0,
        max_tessellation_control_total_output_components: 0,
        max_tessellation_evaluation_input_components: 0,
        max_tessellation_evaluation_output_components: 0,
        max_geometry_shader_invocations: 0,
        max_geometry_input_components: 0,
        max_geometry_output_components: 0,
        max_geometry_output_vertices: 0,
        max_geometry_total_output_components: 0,
        max_fragment_input_components: 64,
        max_fragment_output_attachments: 4,
        max_fragment_dual_src_attachments: 0,
        max_fragment_combined_output_resources: 4,
        max_compute_shared_memory_size: info.slm_size_per_group,
        max_compute_work_group_count: [65535; 3],
        max_compute_work_group_invocations: max_invocations,
        // Local ids come from the thread's subgroup id and lane (docs/dispatch-contract.md,
        // "Built-ins"), which no dimension bounds: each may take the whole group, as on anv.
        max_compute_work_group_size: [max_invocations; 3],
        sub_pixel_precision_bits: 4,
        sub_texel_precision_bits: 4,
        mipmap_precision_bits: 4,
        max_draw_indexed_index_value: (1 << 24) - 1,
        max_draw_indirect_count: 1,
        max_sampler_lod_bias: MAX_SAMPLER_LOD_BIAS,
        max_sampler_anisotropy: 1.0,
        max_viewports: 1,
        max_viewport_dimensions: [4096, 4096],
        viewport_bounds_range: [-8192.0, 8191.0],
        viewport_sub_pixel_bits: 0,
        // GEM mappings are page aligned.
        min_memory_map_alignment: 4096,
        min_texel_buffer_offset_alignment: TEXEL_BUFFER_OFFSET_ALIGNMENT,
        min_uniform_buffer_offset_alignment: 64,
        min_storage_buffer_offset_alignment: crate::limits::STORAGE_BUFFER_OFFSET_ALIGNMENT,
        min_texel_offset: -8,
        max_texel_offset: 7,
        // gather4_po's offsets are 6-bit signed (as anv reports); samples keep the header's
        // 4-bit -8..7.
        min_texel_gather_offset: -32,
        max_texel_gather_offset: 31,
        min_interpolation_offset: -0.5,
        max_interpolation_offset: 0.4375,
        sub_pixel_interpolation_offset_bits: 4,
        max_framebuffer_width: 4096,
        max_framebuffer_height: 4096,
        max_framebuffer_layers: 256,
        framebuffer_color_sample_counts: samples,
        framebuffer_depth_sample_counts: samples,
        framebuffer_stencil_sample_counts: samples,
        framebuffer_no_attachments_sample_counts: samples,
        max_color_attachments: 4,
        sampled_image_color_sample_counts: samples,
        sampled_image_integer_sample_counts: vk::SampleCountFlags::TYPE_1,
        sampled_image_depth_sample_counts: samples,
        sampled_image_stencil_sample_counts: samples,
        storage_image_sample_counts: vk::SampleCountFlags::TYPE_1,
        max_sample_mask_words: 1,
        timestamp_compute_and_graphics: vk::FALSE,
        timestamp_period: 1e9 / info.timestamp_frequency_hz as f32,
        max_clip_distances: 8,
        max_cull_distances: 8,
        max_combined_clip_and_cull_distances: 8,
        discrete_queue_priorities: 2,
        point_size_range: [1.0, 1.0],
        line_width_range: [1.0, 1.0],
        point_size_granularity: 0.0,
        line_width_granularity: 0.0,
        strict_lines: vk::FALSE,
        standard_sample_locations: vk::FALSE,
        optimal_buffer_copy_offset_alignment: 64,
        optimal_buffer_copy_row_pitch_alignment: 64,
        non_coherent_atom_size: 64,
    }
}

/// Lists every `VkPhysicalDeviceFeatures` member once, so support and requests are compared
/// by name and a refused request names the feature.
macro_rules! feature_names {
    ($($f:ident),* $(,)?) => {
        pub(crate) fn feature_list(f: &vk::PhysicalDeviceFeatures) -> Vec<(&'static str, bool)> {
            vec![$((stringify!($f), f.$f != vk::FALSE)),*]
        }
    };
}

feature_names!(
    robust_buffer_access,
    full_draw_index_uint32,
    image_cube_array,
    independent_blend,
    geometry_shader,
    tessellation_shader,
    sample_rate_shading,
    dual_src_blend,
    logic_op,
    multi_draw_indirect,
    draw_indirect_first_instance,
    depth_clamp,
    depth_bias_clamp,
    fill_mode_non_solid,
    depth_bounds,
    wide_lines,
    large_points,
    alpha_to_one,
    multi_viewport,
    sampler_anisotropy,
    texture_compression_etc2,
    texture_compression_astc_ldr,
    texture_compression_bc,
    occlusion_query_precise,
    pipeline_statistics_query,
    vertex_pipeline_stores_and_atomics,
    fragment_stores_and_atomics,
    shader_tessellation_and_geometry_point_size,
    shader_image_gather_extended,
    shader_storage_image_extended_formats,
    shader_storage_image_multisample,
    shader_storage_image_read_without_format,
    shader_storage_image_write_without_format,
    shader_uniform_buffer_array_dynamic_indexing,
    shader_sampled_image_array_dynamic_indexing,
    shader_storage_buffer_array_dynamic_indexing,
    shader_storage_image_array_dynamic_indexing,
    shader_clip_distance,
    shader_cull_distance,
    shader_float64,
    shader_int64,
    shader_int16,
    shader_resource_residency,
    shader_resource_min_lod,
    sparse_binding,
    sparse_residency_buffer,
    sparse_residency_image2_d,
    sparse_residency_image3_d,
    sparse_residency2_samples,
    sparse_residency4_samples,
    sparse_residency8_samples,
    sparse_residency16_samples,
    sparse_residency_aliased,
    variable_multisample_rate,
    inherited_queries,
);

/// Features that work today. Each is switched on by the change that makes it work.
/// * shaderFloat64 / shaderInt64: native DF and Q/UQ code from the Gen9 back end
///   (compiler `backend::wide`, tests/tests/backend_wide.rs and the 64-bit Amber files),
///   on device entries whose hardware has them (64-bit atomics are not offered).
pub fn supported_features(info: &DeviceInfo) -> vk::PhysicalDeviceFeatures {
    vk::PhysicalDeviceFeatures {
        // Every buffer access of a shader goes through a binding-table surface the driver sizes
        // to the descriptor's range, and the data port bounds-checks those at dword
        // granularity (reads outside return 0, writes and atomics outside are dropped):
        // docs/kernel.md, "Robust buffer access"; tests/tests/robust_access.rs.
        robust_buffer_access: vk::TRUE,
        shader_float64: vk::Bool32::from(info.has_fp64),
        shader_int64: vk::Bool32::from(info.has_int64),
        // 16-bit integer arithmetic: computed in 32 bits by the compiler's lower_narrow.
        shader_int16: vk::TRUE,
        // Run-time indices into arrays of buffers: the binding-table index goes to the SEND
        // through a0 (docs/descriptors.md); tests/tests/descriptor_sim.rs and the
        // tests/amber/desc_*.amber files.
        shader_storage_buffer_array_dynamic_indexing: vk::TRUE,
        shader_uniform_buffer_array_dynamic_indexing: vk::TRUE,
        // Run-time indices into arrays of sampled images, samplers, combined image samplers and
        // storage images: the binding-table and sampler indices go to the SEND through a0, a
        // sampler-state block through the message header (docs/images.md, "Arrays of images
        // indexed at run time"); tests/amber/img_*_array_* and img_sampler_index_high*.
        shader_sampled_image_array_dynamic_indexing: vk::TRUE,
        shader_storage_image_array_dynamic_indexing: vk::TRUE,
        // Cube-array views are SURFTYPE_CUBE surfaces whose cube index the sampler takes
        // (docs/images.md); tests/tests/image_sampled_layers.rs.
        image_cube_array: vk::TRUE,
        // Gathers with run-time offsets (Offset), four constant offsets (ConstOffsets, one
        // gather per texel) and constant offsets beyond the header's -8..7: gather4_po's
        // per-lane 6-bit offsets (docs/images.md, "Gather offsets");
        // tests/tests/image_gather_offsets.rs.
        shader_image_gather_extended: vk::TRUE,
        ..Default::default()
    }
}

/// Names of requested features the device does not support.
pub fn unsupported_features(
    requested: &vk::PhysicalDeviceFeatures,
    supported: &vk::PhysicalDeviceFeatures,
) -> Vec<&'static str> {
    feature_list(requested)
        .into_iter()
        .zip(feature_list(supported))
        .filter(|((_, req), (_, sup))| *req && !*sup)
        .map(|((name, _), _)| name)
        .collect()
}

pub struct PhysicalDevice {
    pub adapter: Arc<Adapter>,
}

impl PhysicalDevice {
    /// # Safety
    /// `h` must be null or a physical device of a live instance.
    pub unsafe fn from_handle<'a>(h: vk::PhysicalDevice) -> Result<&'a PhysicalDevice> {
        use ash::vk::Handle;
        // SAFETY: forwarded caller contract.
        unsafe { handles::borrow(h.as_raw() as *mut u8, "VkPhysicalDevice") }
    }
}

/// # Safety
/// `pd` must be a live physical device.
unsafe fn adapter<'a>(pd: vk::PhysicalDevice) -> Result<&'a Adapter> {
    // SAFETY: forwarded caller contract.
    Ok(&unsafe { PhysicalDevice::from_handle(pd) }?.adapter)
}

pub(crate) unsafe extern "system" fn get_properties(
    pd: vk::PhysicalDevice,
    p_properties: *mut vk::PhysicalDeviceProperties,
) {
    ffi::void("vkGetPhysicalDeviceProperties", || {
        // SAFETY: valid handle and output pointer per the spec.
        unsafe { ffi::write(p_properties, adapter(pd)?.properties(), "pProperties") }
    })
}

pub(crate) unsafe extern "system" fn get_properties2(
    pd: vk::PhysicalDevice,
    p_properties: *mut vk::PhysicalDeviceProperties2<'_>,
) {
    ffi::void("vkGetPhysicalDeviceProperties2KHR", || {
        // SAFETY: valid handle per the spec.
        let adapter = unsafe { adapter(pd) }?;
        let props = adapter.properties();
        // SAFETY: valid output structure per the spec; `properties` and the extension
        // structures we know in its chain are written, sType/pNext are left alone.
        let out =
            unsafe { p_properties.as_mut() }.ok_or(DriverError::NullPointer("pProperties"))?;
        out.properties = props;
        // SAFETY: a valid output chain per the spec.
        unsafe { fill_extension_properties(out.p_next, adapter) };
        Ok(())
    })
}

/// Walks a writable pNext chain, calling `f` with each structure's sType and pointer.
///
/// # Safety
/// `p_next` must be null or the head of a valid chain of writable Vulkan structures.
unsafe fn for_each_out(
    p_next: *mut std::ffi::c_void,
    mut f: impl FnMut(vk::StructureType, *mut vk::BaseOutStructure<'static>),
) {
    let mut p = p_next.cast::<vk::BaseOutStructure<'static>>();
    while !p.is_null() {
        // SAFETY: every chain element starts with sType/pNext per the spec.
        let (ty, next) = unsafe { ((*p).s_type, (*p).p_next) };
        f(ty, p);
        p = next;
    }
}

/// Properties of the device extensions in a vkGetPhysicalDeviceProperties2 chain.
///
/// # Safety
/// As [`for_each_out`].
unsafe fn fill_extension_properties(p_next: *mut std::ffi::c_void, adapter: &Adapter) {
    use vk::StructureType as S;
    let fc = float_controls_properties(adapter.info);
    // SAFETY: forwarded; each structure is cast to the type its sType names.
    unsafe {
        for_each_out(p_next, |ty, p| match ty {
            S::PHYSICAL_DEVICE_ROBUSTNESS_2_PROPERTIES_EXT => {
                let out = &mut *p.cast::<vk::PhysicalDeviceRobustness2PropertiesEXT<'_>>();
                // Bounds are checked per dword: a range is effectively rounded up to 4 bytes.
                out.robust_storage_buffer_access_size_alignment = 4;
                out.robust_uniform_buffer_access_size_alignment = 4;
            }
            S::PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_PROPERTIES => {
                (*p.cast::<vk::PhysicalDeviceTimelineSemaphoreProperties<'_>>())
                    .max_timeline_semaphore_value_difference = MAX_TIMELINE_DIFFERENCE;
            }
            S::PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES => {
                let out = &mut *p.cast::<vk::PhysicalDeviceFloatControlsProperties<'_>>();
                *out = vk::PhysicalDeviceFloatControlsProperties {
                    p_next: out.p_next,
                    ..fc
                };
            }
            S::PHYSICAL_DEVICE_SUBGROUP_PROPERTIES => {
                let out = &mut *p.cast::<vk::PhysicalDeviceSubgroupProperties<'_>>();
                let v11 = vulkan11_properties(adapter, std::ptr::null_mut());
                out.subgroup_size = v11.subgroup_size;
                out.supported_stages = v11.subgroup_supported_stages;
                out.supported_operations = v11.subgroup_supported_operations;
                out.quad_operations_in_all_stages = v11.subgroup_quad_operations_in_all_stages;
            }
            S::PHYSICAL_DEVICE_DRIVER_PROPERTIES => {
                let out = &mut *p.cast::<vk::PhysicalDeviceDriverProperties<'_>>();
                let v12 = vulkan12_properties(&fc, std::ptr::null_mut());
                out.driver_id = v12.driver_id;
                out.driver_name = v12.driver_name;
                out.driver_info = v12.driver_info;
                out.conformance_version = v12.conformance_version;
            }
            S::PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR => {
                // A push set is an ordinary set of the layout: the binding table bounds it.
                (*p.cast::<vk::PhysicalDevicePushDescriptorPropertiesKHR<'_>>())
                    .max_push_descriptors = crate::pipeline::MAX_BTI;
            }
            // The Vulkan 1.1 structures that VkPhysicalDeviceVulkan11Properties gathers answer
            // with its values (identifiers, multiview, point clipping, protected memory).
            S::PHYSICAL_DEVICE_ID_PROPERTIES => {
                let v = vulkan11_properties(adapter, std::ptr::null_mut());
                let out = &mut *p.cast::<vk::PhysicalDeviceIDProperties<'_>>();
                out.device_uuid = v.device_uuid;
                out.driver_uuid = v.driver_uuid;
                out.device_luid = v.device_luid;
                out.device_node_mask = v.device_node_mask;
                out.device_luid_valid = v.device_luid_valid;
            }
            S::PHYSICAL_DEVICE_MULTIVIEW_PROPERTIES => {
                let v = vulkan11_properties(adapter, std::ptr::null_mut());
                let out = &mut *p.cast::<vk::PhysicalDeviceMultiviewProperties<'_>>();
                out.max_multiview_view_count = v.max_multiview_view_count;
                out.max_multiview_instance_index = v.max_multiview_instance_index;
            }
            S::PHYSICAL_DEVICE_POINT_CLIPPING_PROPERTIES => {
                let v = vulkan11_properties(adapter, std::ptr::null_mut());
                (*p.cast::<vk::PhysicalDevicePointClippingProperties<'_>>())
                    .point_clipping_behavior = v.point_clipping_behavior;
            }
            S::PHYSICAL_DEVICE_PROTECTED_MEMORY_PROPERTIES => {
                let v = vulkan11_properties(adapter, std::ptr::null_mut());
                (*p.cast::<vk::PhysicalDeviceProtectedMemoryProperties<'_>>()).protected_no_fault =
                    v.protected_no_fault;
            }
            S::PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES => {
                // The same values as VkPhysicalDeviceVulkan11Properties.
                let v = vulkan11_properties(adapter, std::ptr::null_mut());
                let out = &mut *p.cast::<vk::PhysicalDeviceMaintenance3Properties<'_>>();
                out.max_per_set_descriptors = v.max_per_set_descriptors;
                out.max_memory_allocation_size = v.max_memory_allocation_size;
            }
            S::PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES => {
                let out = &mut *p.cast::<vk::PhysicalDeviceVulkan11Properties<'_>>();
                *out = vulkan11_properties(adapter, out.p_next);
            }
            S::PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES => {
                let out = &mut *p.cast::<vk::PhysicalDeviceSubgroupSizeControlProperties<'_>>();
                let v13 = vulkan13_properties(adapter.info, std::ptr::null_mut());
                out.min_subgroup_size = v13.min_subgroup_size;
                out.max_subgroup_size = v13.max_subgroup_size;
                out.max_compute_workgroup_subgroups = v13.max_compute_workgroup_subgroups;
                out.required_subgroup_size_stages = v13.required_subgroup_size_stages;
            }
            S::PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES => {
                (*p.cast::<vk::PhysicalDeviceMaintenance4Properties<'_>>()).max_buffer_size =
                    version_props(adapter.info).max_buffer_size;
            }
            S::PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES => {
                // Every member false: no integer dot product is faster than the multiply-adds
                // an application could write (Gen9 has no DP4A; anv on Skylake reports the same).
                let out = &mut *p.cast::<vk::PhysicalDeviceShaderIntegerDotProductProperties<'_>>();
                *out = vk::PhysicalDeviceShaderIntegerDotProductProperties {
                    p_next: out.p_next,
                    ..Default::default()
                };
            }
            S::PHYSICAL_DEVICE_INLINE_UNIFORM_BLOCK_PROPERTIES => {
                let out = &mut *p.cast::<vk::PhysicalDeviceInlineUniformBlockProperties<'_>>();
                *out = vk::PhysicalDeviceInlineUniformBlockProperties {
                    p_next: out.p_next,
                    ..inline_uniform_properties()
                };
            }
            S::PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES => {
                let out = &mut *p.cast::<vk::PhysicalDeviceVulkan13Properties<'_>>();
                *out = vulkan13_properties(adapter.info, out.p_next);
            }
            S::PHYSICAL_DEVICE_DESCRIPTOR_INDEXING_PROPERTIES => {
                crate::limits::fill_descriptor_indexing_properties(
                    &mut *p.cast::<vk::PhysicalDeviceDescriptorIndexingProperties<'_>>(),
                    &limits(adapter.info),
                );
            }
            S::PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES => {
                let out = &mut *p.cast::<vk::PhysicalDeviceVulkan12Properties<'_>>();
                *out = vulkan12_properties(&fc, out.p_next);
                crate::limits::descriptor_indexing(out, &limits(adapter.info));
            }
            _ => {}
        })
    }
}

/// Syncobj timeline points are 64-bit and may jump by any amount.
const MAX_TIMELINE_DIFFERENCE: u64 = u64::MAX;

/// VkPhysicalDeviceFloatControlsProperties from the compiler's one table of what each mode
/// can be honoured on this device entry's path (native DF or software fp64, as
/// `FERRITE_DEBUG=soft64` and the entry's `has_fp64` select): see
/// `ferrite_compiler::float_controls` and docs/float-controls.md.
pub fn float_controls_properties(
    info: &DeviceInfo,
) -> vk::PhysicalDeviceFloatControlsProperties<'static> {
    let target = crate::pipeline::target(info);
    let soft =
        ferrite_compiler::pipeline::uses_soft_fp64(&target, &crate::pipeline::compiler_debug());
    let s = ferrite_compiler::float_controls::support(&target, soft);
    let ind = |all: bool| {
        if all {
            vk::ShaderFloatControlsIndependence::ALL
        } else {
            vk::ShaderFloatControlsIndependence::NONE
        }
    };
    let b = vk::Bool32::from;
    vk::PhysicalDeviceFloatControlsProperties {
        denorm_behavior_independence: ind(s.denorm_independent),
        rounding_mode_independence: ind(s.rounding_independent),
        shader_signed_zero_inf_nan_preserve_float16: b(s.signed_zero_inf_nan_preserve[0]),
        shader_signed_zero_inf_nan_preserve_float32: b(s.signed_zero_inf_nan_preserve[1]),
        shader_signed_zero_inf_nan_preserve_float64: b(s.signed_zero_inf_nan_preserve[2]),
        shader_denorm_preserve_float16: b(s.denorm_preserve[0]),
        shader_denorm_preserve_float32: b(s.denorm_preserve[1]),
        shader_denorm_preserve_float64: b(s.denorm_preserve[2]),
        shader_denorm_flush_to_zero_float16: b(s.denorm_flush_to_zero[0]),
        shader_denorm_flush_to_zero_float32: b(s.denorm_flush_to_zero[1]),
        shader_denorm_flush_to_zero_float64: b(s.denorm_flush_to_zero[2]),
        shader_rounding_mode_rte_float16: b(s.rounding_rte[0]),
        shader_rounding_mode_rte_float32: b(s.rounding_rte[1]),
        shader_rounding_mode_rte_float64: b(s.rounding_rte[2]),
        shader_rounding_mode_rtz_float16: b(s.rounding_rtz[0]),
        shader_rounding_mode_rtz_float32: b(s.rounding_rtz[1]),
        shader_rounding_mode_rtz_float64: b(s.rounding_rtz[2]),
        ..Default::default()
    }
}

/// What the compiler's subgroup path implements (docs/subgroups.md): every operation
/// category on 32-bit types, in the compute stage (the only one), quads included.
pub fn subgroup_capability() -> (vk::ShaderStageFlags, vk::SubgroupFeatureFlags) {
    use vk::SubgroupFeatureFlags as F;
    (
        vk::ShaderStageFlags::COMPUTE,
        F::BASIC
            | F::VOTE
            | F::ARITHMETIC
            | F::BALLOT
            | F::SHUFFLE
            | F::SHUFFLE_RELATIVE
            | F::CLUSTERED
            | F::QUAD,
    )
}

/// The properties and limits the apiVersion decision checks, as the property structures
/// report them (one source for both). Subgroup stages and operations are the compiler's
/// capability here; the structures report them only on a device of 1.1 or later
/// ([`reported_subgroups`]), where shaders using them are accepted.
pub fn version_props(info: &DeviceInfo) -> crate::api_version::Props {
    let (stages, ops) = subgroup_capability();
    crate::api_version::Props {
        max_per_set_descriptors: MAX_PER_SET_DESCRIPTORS,
        max_memory_allocation_size: heap_size(info),
        // The widest dispatch: a kernel's gl_SubgroupSize is the SIMD width it was compiled for.
        subgroup_size: ferrite_compiler::hw::GEN9.subgroup_size,
        subgroup_stages: stages,
        subgroup_operations: ops,
        max_timeline_semaphore_value_difference: MAX_TIMELINE_DIFFERENCE,
        // A subgroup is one EU thread at the SIMD width the compiler chose for the kernel.
        min_subgroup_size: *GEN9_SIMD_WIDTHS.iter().min().unwrap_or(&8),
        max_subgroup_size: *GEN9_SIMD_WIDTHS.iter().max().unwrap_or(&32),
        // One thread per subgroup: a workgroup has at most the device's threads per group.
        max_compute_workgroup_subgroups: info.max_threads_per_group,
        max_buffer_size: MAX_BUFFER_SIZE,
        max_inline_uniform_block_size: crate::inline_uniform::MAX_INLINE_UNIFORM_BLOCK_SIZE,
        max_inline_uniform_total_size: crate::inline_uniform::MAX_INLINE_UNIFORM_TOTAL_SIZE,
    }
}

/// The SIMD widths the back end may choose (`HwFacts::simd_widths`).
const GEN9_SIMD_WIDTHS: &[u32] = ferrite_compiler::hw::GEN9.simd_widths;

/// VkPhysicalDeviceVulkan13Properties for an application that chains it: the subgroup sizes
/// (`requiredSubgroupSizeStages` is the compute stage wherever subgroups are reported: a
/// required size picks the SIMD width, `pipeline::subgroup_width`), maxBufferSize, the
/// inline-uniform-block limits ([`inline_uniform_properties`]); the integer dot products are
/// offered but none is "accelerated" (every such member false: Gen9 has no DP4A, and the
/// multiply-adds are what an application would write itself).
fn vulkan13_properties(
    info: &DeviceInfo,
    p_next: *mut std::ffi::c_void,
) -> vk::PhysicalDeviceVulkan13Properties<'static> {
    let p = version_props(info);
    let iub = inline_uniform_properties();
    let (stages, _) = reported_subgroups(info);
    vk::PhysicalDeviceVulkan13Properties {
        p_next,
        min_subgroup_size: p.min_subgroup_size,
        max_subgroup_size: p.max_subgroup_size,
        max_compute_workgroup_subgroups: p.max_compute_workgroup_subgroups,
        required_subgroup_size_stages: stages,
        max_buffer_size: p.max_buffer_size,
        // The spec requires powers of two here; a texel-buffer view at any multiple of
        // minTexelBufferOffsetAlignment works for every format, so that is the alignment
        // (not per single texel: such views are not tested at smaller offsets).
        storage_texel_buffer_offset_alignment_bytes: TEXEL_BUFFER_OFFSET_ALIGNMENT,
        uniform_texel_buffer_offset_alignment_bytes: TEXEL_BUFFER_OFFSET_ALIGNMENT,
        max_inline_uniform_block_size: iub.max_inline_uniform_block_size,
        max_per_stage_descriptor_inline_uniform_blocks: iub
            .max_per_stage_descriptor_inline_uniform_blocks,
        max_per_stage_descriptor_update_after_bind_inline_uniform_blocks: iub
            .max_per_stage_descriptor_update_after_bind_inline_uniform_blocks,
        max_descriptor_set_inline_uniform_blocks: iub.max_descriptor_set_inline_uniform_blocks,
        max_descriptor_set_update_after_bind_inline_uniform_blocks: iub
            .max_descriptor_set_update_after_bind_inline_uniform_blocks,
        max_inline_uniform_total_size: p.max_inline_uniform_total_size,
        ..Default::default()
    }
}

/// VkPhysicalDeviceInlineUniformBlockProperties (and its members of
/// VkPhysicalDeviceVulkan13Properties): anv's values on Gen9 (docs/limits.md). The
/// update-after-bind counts equal the others, as anv's: the limits table lets them be anything
/// while descriptorBindingInlineUniformBlockUpdateAfterBind is not offered, and the validation
/// layer Debian ships checks every pipeline layout against them, update-after-bind or not.
fn inline_uniform_properties() -> vk::PhysicalDeviceInlineUniformBlockProperties<'static> {
    use crate::inline_uniform::{MAX_INLINE_UNIFORM_BLOCKS, MAX_INLINE_UNIFORM_BLOCK_SIZE};
    vk::PhysicalDeviceInlineUniformBlockProperties {
        max_inline_uniform_block_size: MAX_INLINE_UNIFORM_BLOCK_SIZE,
        max_per_stage_descriptor_inline_uniform_blocks: MAX_INLINE_UNIFORM_BLOCKS,
        max_per_stage_descriptor_update_after_bind_inline_uniform_blocks: MAX_INLINE_UNIFORM_BLOCKS,
        max_descriptor_set_inline_uniform_blocks: MAX_INLINE_UNIFORM_BLOCKS,
        max_descriptor_set_update_after_bind_inline_uniform_blocks: MAX_INLINE_UNIFORM_BLOCKS,
        ..Default::default()
    }
}

/// Subgroup stages and operations as reported: the capability on a 1.1+ device, nothing on a
/// 1.0 one (shaders with GroupNonUniform capabilities are refused there, see
/// `pipeline::target`).
pub fn reported_subgroups(info: &DeviceInfo) -> (vk::ShaderStageFlags, vk::SubgroupFeatureFlags) {
    if crate::api_version::device_version(info) >= vk::API_VERSION_1_1 {
        subgroup_capability()
    } else {
        Default::default()
    }
}

/// VkPhysicalDeviceVulkan11Properties: identifiers, limits and the subgroup properties; no
/// multiview or protected memory is claimed.
fn vulkan11_properties(
    adapter: &Adapter,
    p_next: *mut std::ffi::c_void,
) -> vk::PhysicalDeviceVulkan11Properties<'static> {
    let p = version_props(adapter.info);
    let (stages, ops) = reported_subgroups(adapter.info);
    vk::PhysicalDeviceVulkan11Properties {
        p_next,
        device_uuid: pipeline_cache_uuid(adapter.info.pci_id),
        driver_uuid: pipeline_cache_uuid(0),
        subgroup_size: p.subgroup_size,
        subgroup_supported_stages: stages,
        subgroup_supported_operations: ops,
        subgroup_quad_operations_in_all_stages: vk::Bool32::from(!ops.is_empty()),
        point_clipping_behavior: vk::PointClippingBehavior::ALL_CLIP_PLANES,
        max_per_set_descriptors: p.max_per_set_descriptors,
        max_memory_allocation_size: adapter.heap_size,
        ..Default::default()
    }
}

/// VkPhysicalDeviceVulkan12Properties for an application that chains it: the driver's
/// name, the float-controls properties and the timeline limit. `driverID` stays 0:
/// Ferrite has no registered VkDriverId; no conformance is claimed (0.0.0.0).
fn vulkan12_properties(
    fc: &vk::PhysicalDeviceFloatControlsProperties<'_>,
    p_next: *mut std::ffi::c_void,
) -> vk::PhysicalDeviceVulkan12Properties<'static> {
    let info = format!(
        "Ferrite {} (Rust Vulkan driver for Intel Gen9)",
        env!("CARGO_PKG_VERSION")
    );
    vk::PhysicalDeviceVulkan12Properties {
        p_next,
        driver_name: ffi::name_array::<{ vk::MAX_DRIVER_NAME_SIZE }>("Ferrite"),
        driver_info: ffi::name_array::<{ vk::MAX_DRIVER_INFO_SIZE }>(&info),
        denorm_behavior_independence: fc.denorm_behavior_independence,
        rounding_mode_independence: fc.rounding_mode_independence,
        shader_signed_zero_inf_nan_preserve_float16: fc.shader_signed_zero_inf_nan_preserve_float16,
        shader_signed_zero_inf_nan_preserve_float32: fc.shader_signed_zero_inf_nan_preserve_float32,
        shader_signed_zero_inf_nan_preserve_float64: fc.shader_signed_zero_inf_nan_preserve_float64,
        shader_denorm_preserve_float16: fc.shader_denorm_preserve_float16,
        shader_denorm_preserve_float32: fc.shader_denorm_preserve_float32,
        shader_denorm_preserve_float64: fc.shader_denorm_preserve_float64,
        shader_denorm_flush_to_zero_float16: fc.shader_denorm_flush_to_zero_float16,
        shader_denorm_flush_to_zero_float32: fc.shader_denorm_flush_to_zero_float32,
        shader_denorm_flush_to_zero_float64: fc.shader_denorm_flush_to_zero_float64,
        shader_rounding_mode_rte_float16: fc.shader_rounding_mode_rte_float16,
        shader_rounding_mode_rte_float32: fc.shader_rounding_mode_rte_float32,
        shader_rounding_mode_rte_float64: fc.shader_rounding_mode_rte_float64,
        shader_rounding_mode_rtz_float16: fc.shader_rounding_mode_rtz_float16,
        shader_rounding_mode_rtz_float32: fc.shader_rounding_mode_rtz_float32,
        shader_rounding_mode_rtz_float64: fc.shader_rounding_mode_rtz_float64,
        max_timeline_semaphore_value_difference: MAX_TIMELINE_DIFFERENCE,
        // The spec's required minimum (no graphics: nothing renders to an attachment).
        framebuffer_integer_color_sample_counts: vk::SampleCountFlags::TYPE_1,
        ..Default::default()
    }
}

pub(crate) unsafe extern "system" fn get_features(
    pd: vk::PhysicalDevice,
    p_features: *mut vk::PhysicalDeviceFeatures,
) {
    ffi::void("vkGetPhysicalDeviceFeatures", || {
        // SAFETY: valid handle and output pointer per the spec.
        unsafe {
            ffi::write(
                p_features,
                supported_features(adapter(pd)?.info),
                "pFeatures",
            )
        }
    })
}

pub(crate) unsafe extern "system" fn get_features2(
    pd: vk::PhysicalDevice,
    p_features: *mut vk::PhysicalDeviceFeatures2<'_>,
) {
    ffi::void("vkGetPhysicalDeviceFeatures2KHR", || {
        // SAFETY: valid handle per the spec.
        let features = supported_features(unsafe { adapter(pd) }?.info);
        // SAFETY: valid output structure per the spec; `features` and the extension structures
        // we know in its chain are written.
        let out = unsafe { p_features.as_mut() }.ok_or(DriverError::NullPointer("pFeatures"))?;
        out.features = features;
        // SAFETY: valid handle per the spec.
        let info = unsafe { adapter(pd) }?.info;
        // SAFETY: a valid output chain per the spec; every known feature member is written
        // from the feature rows.
        unsafe { crate::features::fill_chain(out.p_next, info) };
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_queue_family_properties(
    pd: vk::PhysicalDevice,
    p_count: *mut u32,
    p_props: *mut vk::QueueFamilyProperties,
) {
    ffi::void("vkGetPhysicalDeviceQueueFamilyProperties", || {
        // SAFETY: valid handle and two-call idiom pointers per the spec.
        unsafe { ffi::fill_array(p_count, p_props, &adapter(pd)?.queue_families()) }.map(|_| ())
    })
}

pub(crate) unsafe extern "system" fn get_queue_family_properties2(
    pd: vk::PhysicalDevice,
    p_count: *mut u32,
    p_props: *mut vk::QueueFamilyProperties2<'_>,
) {
    ffi::void("vkGetPhysicalDeviceQueueFamilyProperties2KHR", || {
        // SAFETY: valid handle per the spec.
        let families = unsafe { adapter(pd) }?.queue_families();
        if p_count.is_null() {
            return Err(DriverError::NullPointer("pQueueFamilyPropertyCount"));
        }
        if p_props.is_null() {
            // SAFETY: non-null count pointer, valid per the spec.
            unsafe { p_count.write(families.len() as u32) };
            return Ok(());
        }
        // SAFETY: as above.
        let n = unsafe { p_count.read() }.min(families.len() as u32) as usize;
        for (i, fam) in families.iter().take(n).enumerate() {
            // SAFETY: the application provides *p_count structures; only the core member is written.
            unsafe { (*p_props.add(i)).queue_family_properties = *fam };
        }
        // SAFETY: as above.
        unsafe { p_count.write(n as u32) };
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn get_memory_properties(
    pd: vk::PhysicalDevice,
    p_props: *mut vk::PhysicalDeviceMemoryProperties,
) {
    ffi::void("vkGetPhysicalDeviceMemoryProperties", || {
        // SAFETY: valid handle and output pointer per the spec.
        unsafe {
            ffi::write(
                p_props,
                adapter(pd)?.memory_properties(),
                "pMemoryProperties",
            )
        }
    })
}

pub(crate) unsafe extern "system" fn get_memory_properties2(
    pd: vk::PhysicalDevice,
    p_props: *mut vk::PhysicalDeviceMemoryProperties2<'_>,
) {
    ffi::void("vkGetPhysicalDeviceMemoryProperties2KHR", || {
        // SAFETY: valid handle per the spec.
        let props = unsafe { adapter(pd) }?.memory_properties();
        // SAFETY: valid output structure; only the core member is written.
        let out =
            unsafe { p_props.as_mut() }.ok_or(DriverError::NullPointer("pMemoryProperties"))?;
        out.memory_properties = props;
        Ok(())
    })
}

/// No format has any feature yet (no images, texel buffers or vertex input are implemented).
pub(crate) unsafe extern "system" fn get_format_properties(
    pd: vk::PhysicalDevice,
    format: vk::Format,
    p_props: *mut vk::FormatProperties,
) {
    ffi::void("vkGetPhysicalDeviceFormatProperties", || {
        // SAFETY: valid handle per the spec.
        unsafe { adapter(pd) }?;
        // SAFETY: valid output pointer per the spec.
        unsafe {
            ffi::write(
                p_props,
                crate::format::properties(format),
                "pFormatProperties",
            )
        }
    })
}

pub(crate) unsafe extern "system" fn get_format_properties2(
    pd: vk::PhysicalDevice,
    format: vk::Format,
    p_props: *mut vk::FormatProperties2<'_>,
) {
    ffi::void("vkGetPhysicalDeviceFormatProperties2KHR", || {
        // SAFETY: valid handle per the spec.
        unsafe { adapter(pd) }?;
        // SAFETY: valid output structure; only the core member is written.
        let out =
            unsafe { p_props.as_mut() }.ok_or(DriverError::NullPointer("pFormatProperties"))?;
        out.format_properties = crate::format::properties(format);
        Ok(())
    })
}

/// Answers from the format table (`format::image_format_properties`).
pub(crate) unsafe extern "system" fn get_image_format_properties(
    pd: vk::PhysicalDevice,
    format: vk::Format,
    ty: vk::ImageType,
    tiling: vk::ImageTiling,
    usage: vk::ImageUsageFlags,
    flags: vk::ImageCreateFlags,
    p_props: *mut vk::ImageFormatProperties,
) -> vk::Result {
    ffi::result("vkGetPhysicalDeviceImageFormatProperties", || {
        // SAFETY: valid handle per the spec.
        unsafe { adapter(pd) }?;
        let r = crate::format::image_format_properties(format, ty, tiling, usage, flags);
        // SAFETY: valid output pointer; the spec wants it zeroed on VK_ERROR_FORMAT_NOT_SUPPORTED.
        unsafe {
            ffi::write(
                p_props,
                r.as_ref().copied().unwrap_or_default(),
                "pImageFormatProperties",
            )
        }?;
        r.map(|_| vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn get_image_format_properties2(
    pd: vk::PhysicalDevice,
    p_info: *const vk::PhysicalDeviceImageFormatInfo2<'_>,
    p_props: *mut vk::ImageFormatProperties2<'_>,
) -> vk::Result {
    ffi::result("vkGetPhysicalDeviceImageFormatProperties2KHR", || {
        // SAFETY: valid handle and info per the spec.
        let info = unsafe {
            adapter(pd)?;
            ffi::read(p_info, "pImageFormatInfo")?
        };
        // Chained structures (external memory, image view info, ...) ask about features
        // Ferrite does not offer; none is accepted.
        if !info.p_next.is_null() {
            return Err(DriverError::FormatNotSupported);
        }
        let r = crate::format::image_format_properties(
            info.format,
            info.ty,
            info.tiling,
            info.usage,
            info.flags,
        );
        // SAFETY: valid output structure; only the core member is written.
        if let Some(out) = unsafe { p_props.as_mut() } {
            out.image_format_properties = r.as_ref().copied().unwrap_or_default();
        }
        r.map(|_| vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn get_sparse_image_format_properties(
    pd: vk::PhysicalDevice,
    _format: vk::Format,
    _ty: vk::ImageType,
    _samples: vk::SampleCountFlags,
    _usage: vk::ImageUsageFlags,
    _tiling: vk::ImageTiling,
    p_count: *mut u32,
    p_props: *mut vk::SparseImageFormatProperties,
) {
    ffi::void("vkGetPhysicalDeviceSparseImageFormatProperties", || {
        // SAFETY: valid handle and two-call idiom pointers per the spec.
        unsafe { adapter(pd) }?;
        // SAFETY: as above.
        unsafe { ffi::fill_array::<vk::SparseImageFormatProperties>(p_count, p_props, &[]) }
            .map(|_| ())
    })
}

pub(crate) unsafe extern "system" fn get_sparse_image_format_properties2(
    pd: vk::PhysicalDevice,
    _info: *const vk::PhysicalDeviceSparseImageFormatInfo2<'_>,
    p_count: *mut u32,
    _p_props: *mut vk::SparseImageFormatProperties2<'_>,
) {
    ffi::void("vkGetPhysicalDeviceSparseImageFormatProperties2KHR", || {
        // SAFETY: valid handle per the spec.
        unsafe { adapter(pd) }?;
        // SAFETY: valid count pointer per the spec; no sparse formats, so nothing else is written.
        unsafe { ffi::write(p_count, 0, "pPropertyCount") }
    })
}

/// vkGetPhysicalDeviceToolProperties: Ferrite has no built-in tools (layers report their own).
pub(crate) unsafe extern "system" fn get_tool_properties(
    pd: vk::PhysicalDevice,
    p_count: *mut u32,
    p_props: *mut vk::PhysicalDeviceToolProperties<'_>,
) -> vk::Result {
    ffi::result("vkGetPhysicalDeviceToolProperties", || {
        // SAFETY: valid handle per the spec.
        unsafe { adapter(pd) }?;
        let _ = p_props;
        // SAFETY: valid count pointer per the spec; with no tools nothing else is written.
        unsafe { ffi::write(p_count, 0, "pToolCount") }?;
        Ok(vk::Result::SUCCESS)
    })
}

/// vkGetPhysicalDeviceExternalBufferProperties: no external memory handle type is supported
/// yet (GEM handles as opaque/dma-buf FDs are not exported), so every answer is empty: not
/// exportable, not importable, compatible with nothing.
pub(crate) unsafe extern "system" fn get_external_buffer_properties(
    pd: vk::PhysicalDevice,
    _p_info: *const vk::PhysicalDeviceExternalBufferInfo<'_>,
    p_props: *mut vk::ExternalBufferProperties<'_>,
) {
    ffi::void("vkGetPhysicalDeviceExternalBufferProperties", || {
        // SAFETY: valid handle per the spec.
        unsafe { adapter(pd) }?;
        // SAFETY: valid output structure; only the core member is written.
        let out = unsafe { p_props.as_mut() }
            .ok_or(DriverError::NullPointer("pExternalBufferProperties"))?;
        out.external_memory_properties = vk::ExternalMemoryProperties::default();
        Ok(())
    })
}

/// Defines vkGetPhysicalDeviceExternalFenceProperties and
/// vkGetPhysicalDeviceExternalSemaphoreProperties: no external fence or semaphore handle type
/// yet, so every answer is empty (not exportable, not importable, compatible with nothing).
macro_rules! no_external_handle_types {
    ($($f:ident, $name:literal, $info:ident, $props:ident, $out:literal, $features:ident;)*) => {$(
        pub(crate) unsafe extern "system" fn $f(
            pd: vk::PhysicalDevice,
            _p_info: *const vk::$info<'_>,
            p_props: *mut vk::$props<'_>,
        ) {
            ffi::void($name, || {
                // SAFETY: valid handle per the spec.
                unsafe { adapter(pd) }?;
                // SAFETY: valid output structure; only its members (not sType/pNext) are written.
                let out = unsafe { p_props.as_mut() }.ok_or(DriverError::NullPointer($out))?;
                out.export_from_imported_handle_types = Default::default();
                out.compatible_handle_types = Default::default();
                out.$features = Default::default();
                Ok(())
            })
        }
    )*};
}

no_external_handle_types! {
    get_external_fence_properties, "vkGetPhysicalDeviceExternalFenceProperties",
        PhysicalDeviceExternalFenceInfo, ExternalFenceProperties, "pExternalFenceProperties",
        external_fence_features;
    get_external_semaphore_properties, "vkGetPhysicalDeviceExternalSemaphoreProperties",
        PhysicalDeviceExternalSemaphoreInfo, ExternalSemaphoreProperties,
        "pExternalSemaphoreProperties", external_semaphore_features;
}

pub(crate) unsafe extern "system" fn enumerate_device_extension_properties(
    pd: vk::PhysicalDevice,
    p_layer_name: *const std::ffi::c_char,
    p_count: *mut u32,
    p_props: *mut vk::ExtensionProperties,
) -> vk::Result {
    ffi::result("vkEnumerateDeviceExtensionProperties", || {
        // SAFETY: valid handle per the spec.
        unsafe { adapter(pd) }?;
        // SAFETY: two-call idiom pointers per the spec.
        unsafe { ffi::fill_extension_properties(p_layer_name, DEVICE_EXTENSIONS, p_count, p_props) }
    })
}

pub(crate) unsafe extern "system" fn enumerate_device_layer_properties(
    pd: vk::PhysicalDevice,
    p_count: *mut u32,
    p_props: *mut vk::LayerProperties,
) -> vk::Result {
    ffi::result("vkEnumerateDeviceLayerProperties", || {
        // SAFETY: valid handle per the spec.
        unsafe { adapter(pd) }?;
        // SAFETY: two-call idiom pointers per the spec.
        unsafe { ffi::fill_array::<vk::LayerProperties>(p_count, p_props, &[]) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_iface::lookup_pci_id;

    #[test]
    fn version_properties_meet_the_spec_minimums() {
        let info = lookup_pci_id(0x1912).unwrap();
        let v13 = vulkan13_properties(info, std::ptr::null_mut());
        for a in [
            v13.storage_texel_buffer_offset_alignment_bytes,
            v13.uniform_texel_buffer_offset_alignment_bytes,
        ] {
            assert!(a.is_power_of_two(), "{a}");
            assert_eq!(a, limits(info).min_texel_buffer_offset_alignment);
        }
        let v12 = vulkan12_properties(&float_controls_properties(info), std::ptr::null_mut());
        assert!(v12
            .framebuffer_integer_color_sample_counts
            .contains(vk::SampleCountFlags::TYPE_1));
    }

    #[test]
    fn skl_gt2_compute_limits_follow_the_device_row() {
        let info = lookup_pci_id(0x1912).unwrap();
        let l = limits(info);
        assert_eq!(l.max_compute_work_group_invocations, 1024);
        assert_eq!(l.max_compute_shared_memory_size, 64 * 1024);
        assert!((l.timestamp_period - 83.333_33).abs() < 0.01);
    }

    #[test]
    fn subgroup_sizes_are_the_simd_widths_and_a_thread_per_subgroup() {
        let info = lookup_pci_id(0x1912).unwrap();
        let p = vulkan13_properties(info, std::ptr::null_mut());
        assert_eq!((p.min_subgroup_size, p.max_subgroup_size), (8, 32));
        assert_eq!(
            p.max_compute_workgroup_subgroups,
            info.max_threads_per_group
        );
        assert_eq!(
            p.required_subgroup_size_stages,
            vk::ShaderStageFlags::COMPUTE
        );
        assert_eq!(p.integer_dot_product8_bit_unsigned_accelerated, vk::FALSE);
        let v = version_props(info);
        assert!(v.min_subgroup_size <= v.subgroup_size && v.subgroup_size <= v.max_subgroup_size);
    }

    #[test]
    fn pipeline_cache_uuid_is_stable_and_per_device() {
        assert_eq!(pipeline_cache_uuid(0x1912), pipeline_cache_uuid(0x1912));
        assert_ne!(pipeline_cache_uuid(0x1912), pipeline_cache_uuid(0x5912));
    }

    #[test]
    fn sixty_four_bit_features_follow_the_device_table() {
        let skl = supported_features(lookup_pci_id(0x1912).unwrap());
        assert_eq!(skl.shader_float64, vk::TRUE);
        assert_eq!(skl.shader_int64, vk::TRUE);
        let mut no64 = *lookup_pci_id(0x1912).unwrap();
        no64.has_fp64 = false;
        no64.has_int64 = false;
        let f = supported_features(&no64);
        assert_eq!((f.shader_float64, f.shader_int64), (vk::FALSE, vk::FALSE));
    }

    #[test]
    fn requested_features_are_checked_by_name() {
        let req = vk::PhysicalDeviceFeatures {
            shader_float64: vk::TRUE,
            robust_buffer_access: vk::TRUE,
            ..Default::default()
        };
        let sup = vk::PhysicalDeviceFeatures {
            robust_buffer_access: vk::TRUE,
            ..Default::default()
        };
        assert_eq!(unsupported_features(&req, &sup), vec!["shader_float64"]);
        assert!(unsupported_features(&vk::PhysicalDeviceFeatures::default(), &sup).is_empty());
    }

    #[test]
    fn memory_types_subset_ordering_and_cached_only_with_llc() {
        let mut info = *lookup_pci_id(0x1912).unwrap();
        let types = memory_types(&info);
        assert_eq!(types.len(), 2);
        assert!(types[1].contains(types[0]));
        info.has_llc = false;
        assert!(memory_types(&info)
            .iter()
            .all(|t| !t.contains(vk::MemoryPropertyFlags::HOST_CACHED)));
    }
}
