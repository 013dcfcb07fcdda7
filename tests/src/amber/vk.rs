//! The Vulkan side of the runner: one instance + device per script (so each script gets
//! exactly the features and extensions it asks for), host-visible buffers and images,
//! samplers, compute pipelines with their descriptor sets, and synchronous dispatch.
//!
//! The device is the first physical device the loader exposes, so `VK_DRIVER_FILES`
//! chooses the driver.

use super::ast::{self, AddressMode, BorderColor, Filter, ImageDim};
use super::AmberError;
use ash::vk;
use std::ffi::{CStr, CString};
use std::time::{Duration, Instant};

fn vkerr(what: &'static str) -> impl Fn(vk::Result) -> AmberError {
    move |r| AmberError::Vulkan(what, r)
}

macro_rules! core_features {
    ($($camel:ident => $snake:ident),* $(,)?) => {
        /// A `VkPhysicalDeviceFeatures` member by its Vulkan (Amber) name.
        fn core_feature<'a>(f: &'a mut vk::PhysicalDeviceFeatures, name: &str) -> Option<&'a mut vk::Bool32> {
            match name {
                $(stringify!($camel) => Some(&mut f.$snake),)*
                _ => None,
            }
        }
    };
}

core_features! {
    robustBufferAccess => robust_buffer_access, fullDrawIndexUint32 => full_draw_index_uint32,
    imageCubeArray => image_cube_array, independentBlend => independent_blend,
    geometryShader => geometry_shader, tessellationShader => tessellation_shader,
    sampleRateShading => sample_rate_shading, dualSrcBlend => dual_src_blend, logicOp => logic_op,
    multiDrawIndirect => multi_draw_indirect, drawIndirectFirstInstance => draw_indirect_first_instance,
    depthClamp => depth_clamp, depthBiasClamp => depth_bias_clamp, fillModeNonSolid => fill_mode_non_solid,
    depthBounds => depth_bounds, wideLines => wide_lines, largePoints => large_points, alphaToOne => alpha_to_one,
    multiViewport => multi_viewport, samplerAnisotropy => sampler_anisotropy,
    textureCompressionETC2 => texture_compression_etc2, textureCompressionASTC_LDR => texture_compression_astc_ldr,
    textureCompressionBC => texture_compression_bc, occlusionQueryPrecise => occlusion_query_precise,
    pipelineStatisticsQuery => pipeline_statistics_query,
    vertexPipelineStoresAndAtomics => vertex_pipeline_stores_and_atomics,
    fragmentStoresAndAtomics => fragment_stores_and_atomics,
    shaderTessellationAndGeometryPointSize => shader_tessellation_and_geometry_point_size,
    shaderImageGatherExtended => shader_image_gather_extended,
    shaderStorageImageExtendedFormats => shader_storage_image_extended_formats,
    shaderStorageImageMultisample => shader_storage_image_multisample,
    shaderStorageImageReadWithoutFormat => shader_storage_image_read_without_format,
    shaderStorageImageWriteWithoutFormat => shader_storage_image_write_without_format,
    shaderUniformBufferArrayDynamicIndexing => shader_uniform_buffer_array_dynamic_indexing,
    shaderSampledImageArrayDynamicIndexing => shader_sampled_image_array_dynamic_indexing,
    shaderStorageBufferArrayDynamicIndexing => shader_storage_buffer_array_dynamic_indexing,
    shaderStorageImageArrayDynamicIndexing => shader_storage_image_array_dynamic_indexing,
    shaderClipDistance => shader_clip_distance, shaderCullDistance => shader_cull_distance,
    shaderFloat64 => shader_float64, shaderInt64 => shader_int64, shaderInt16 => shader_int16,
    shaderResourceResidency => shader_resource_residency, shaderResourceMinLod => shader_resource_min_lod,
    sparseBinding => sparse_binding, sparseResidencyBuffer => sparse_residency_buffer,
    sparseResidencyImage2D => sparse_residency_image2_d, sparseResidencyImage3D => sparse_residency_image3_d,
    sparseResidency2Samples => sparse_residency2_samples, sparseResidency4Samples => sparse_residency4_samples,
    sparseResidency8Samples => sparse_residency8_samples, sparseResidency16Samples => sparse_residency16_samples,
    sparseResidencyAliased => sparse_residency_aliased, variableMultisampleRate => variable_multisample_rate,
    inheritedQueries => inherited_queries,
}

/// Extension feature structs Amber names as `Struct.member`, with the extension that
/// provides each and the Vulkan 1.x minor version that made it core.
const EXT_STRUCTS: [(&str, &CStr, u32); 13] = [
    ("VariablePointerFeatures", c"VK_KHR_variable_pointers", 1),
    ("Float16Int8Features", c"VK_KHR_shader_float16_int8", 2),
    ("Storage8BitFeatures", c"VK_KHR_8bit_storage", 2),
    ("Storage16BitFeatures", c"VK_KHR_16bit_storage", 1),
    ("SubgroupSizeControl", c"VK_EXT_subgroup_size_control", 3),
    (
        "ZeroInitializeWorkgroupMemoryFeatures",
        c"VK_KHR_zero_initialize_workgroup_memory",
        3,
    ),
    (
        "VulkanMemoryModelFeatures",
        c"VK_KHR_vulkan_memory_model",
        2,
    ),
    (
        "BufferDeviceAddressFeatures",
        c"VK_KHR_buffer_device_address",
        2,
    ),
    // Not in Amber's list; 64-bit atomics need it.
    (
        "ShaderAtomicInt64Features",
        c"VK_KHR_shader_atomic_int64",
        2,
    ),
    // Not in Amber's list either; runtime descriptor arrays and NonUniform indices need it.
    (
        "DescriptorIndexingFeatures",
        c"VK_EXT_descriptor_indexing",
        2,
    ),
    // Not in Amber's list either: reading and writing images and texel buffers out of bounds
    // is defined only with these (robustImageAccess is core in 1.3; robustness2 never is).
    ("ImageRobustnessFeatures", c"VK_EXT_image_robustness", 3),
    ("Robustness2Features", c"VK_EXT_robustness2", u32::MAX),
    // Not in Amber's list either: subgroup operations on 8/16/64-bit integers and fp16 are
    // allowed only with this feature enabled.
    (
        "ShaderSubgroupExtendedTypesFeatures",
        c"VK_KHR_shader_subgroup_extended_types",
        2,
    ),
];

#[derive(Default)]
struct ExtFeatures {
    vp: vk::PhysicalDeviceVariablePointersFeatures<'static>,
    f16i8: vk::PhysicalDeviceShaderFloat16Int8Features<'static>,
    s8: vk::PhysicalDevice8BitStorageFeatures<'static>,
    s16: vk::PhysicalDevice16BitStorageFeatures<'static>,
    sgsc: vk::PhysicalDeviceSubgroupSizeControlFeatures<'static>,
    zi: vk::PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures<'static>,
    mm: vk::PhysicalDeviceVulkanMemoryModelFeatures<'static>,
    bda: vk::PhysicalDeviceBufferDeviceAddressFeatures<'static>,
    a64: vk::PhysicalDeviceShaderAtomicInt64Features<'static>,
    di: vk::PhysicalDeviceDescriptorIndexingFeatures<'static>,
    ir: vk::PhysicalDeviceImageRobustnessFeatures<'static>,
    r2: vk::PhysicalDeviceRobustness2FeaturesEXT<'static>,
    set: vk::PhysicalDeviceShaderSubgroupExtendedTypesFeatures<'static>,
}

impl ExtFeatures {
    fn member(&mut self, s: usize, m: &str) -> Option<&mut vk::Bool32> {
        Some(match (s, m) {
            (0, "variablePointers") => &mut self.vp.variable_pointers,
            (0, "variablePointersStorageBuffer") => &mut self.vp.variable_pointers_storage_buffer,
            (1, "shaderFloat16") => &mut self.f16i8.shader_float16,
            (1, "shaderInt8") => &mut self.f16i8.shader_int8,
            (2, "storageBuffer8BitAccess") => &mut self.s8.storage_buffer8_bit_access,
            (2, "uniformAndStorageBuffer8BitAccess") => {
                &mut self.s8.uniform_and_storage_buffer8_bit_access
            }
            (2, "storagePushConstant8") => &mut self.s8.storage_push_constant8,
            (3, "storageBuffer16BitAccess") => &mut self.s16.storage_buffer16_bit_access,
            (3, "uniformAndStorageBuffer16BitAccess") => {
                &mut self.s16.uniform_and_storage_buffer16_bit_access
            }
            (3, "storagePushConstant16") => &mut self.s16.storage_push_constant16,
            (3, "storageInputOutput16") => &mut self.s16.storage_input_output16,
            (4, "subgroupSizeControl") => &mut self.sgsc.subgroup_size_control,
            (4, "computeFullSubgroups") => &mut self.sgsc.compute_full_subgroups,
            (5, "shaderZeroInitializeWorkgroupMemory") => {
                &mut self.zi.shader_zero_initialize_workgroup_memory
            }
            (6, "vulkanMemoryModel") => &mut self.mm.vulkan_memory_model,
            (6, "vulkanMemoryModelDeviceScope") => &mut self.mm.vulkan_memory_model_device_scope,
            (7, "bufferDeviceAddress") => &mut self.bda.buffer_device_address,
            (8, "shaderBufferInt64Atomics") => &mut self.a64.shader_buffer_int64_atomics,
            (8, "shaderSharedInt64Atomics") => &mut self.a64.shader_shared_int64_atomics,
            (9, "runtimeDescriptorArray") => &mut self.di.runtime_descriptor_array,
            (9, "descriptorBindingPartiallyBound") => {
                &mut self.di.descriptor_binding_partially_bound
            }
            (9, "descriptorBindingVariableDescriptorCount") => {
                &mut self.di.descriptor_binding_variable_descriptor_count
            }
            (9, "shaderStorageBufferArrayNonUniformIndexing") => {
                &mut self.di.shader_storage_buffer_array_non_uniform_indexing
            }
            (9, "shaderUniformBufferArrayNonUniformIndexing") => {
                &mut self.di.shader_uniform_buffer_array_non_uniform_indexing
            }
            (9, "shaderStorageTexelBufferArrayDynamicIndexing") => {
                &mut self.di.shader_storage_texel_buffer_array_dynamic_indexing
            }
            (9, "shaderUniformTexelBufferArrayDynamicIndexing") => {
                &mut self.di.shader_uniform_texel_buffer_array_dynamic_indexing
            }
            (9, "shaderStorageTexelBufferArrayNonUniformIndexing") => {
                &mut self
                    .di
                    .shader_storage_texel_buffer_array_non_uniform_indexing
            }
            (9, "shaderUniformTexelBufferArrayNonUniformIndexing") => {
                &mut self
                    .di
                    .shader_uniform_texel_buffer_array_non_uniform_indexing
            }
            (9, "shaderSampledImageArrayNonUniformIndexing") => {
                &mut self.di.shader_sampled_image_array_non_uniform_indexing
            }
            (9, "shaderStorageImageArrayNonUniformIndexing") => {
                &mut self.di.shader_storage_image_array_non_uniform_indexing
            }
            (10, "robustImageAccess") => &mut self.ir.robust_image_access,
            (11, "robustBufferAccess2") => &mut self.r2.robust_buffer_access2,
            (11, "robustImageAccess2") => &mut self.r2.robust_image_access2,
            (11, "nullDescriptor") => &mut self.r2.null_descriptor,
            (12, "shaderSubgroupExtendedTypes") => &mut self.set.shader_subgroup_extended_types,
            _ => return None,
        })
    }

    /// Chains the structs selected by `on` behind `f2`.
    fn chain<'a>(
        &'a mut self,
        mut f2: vk::PhysicalDeviceFeatures2<'a>,
        on: &[bool; 13],
    ) -> vk::PhysicalDeviceFeatures2<'a> {
        if on[0] {
            f2 = f2.push_next(&mut self.vp);
        }
        if on[1] {
            f2 = f2.push_next(&mut self.f16i8);
        }
        if on[2] {
            f2 = f2.push_next(&mut self.s8);
        }
        if on[3] {
            f2 = f2.push_next(&mut self.s16);
        }
        if on[4] {
            f2 = f2.push_next(&mut self.sgsc);
        }
        if on[5] {
            f2 = f2.push_next(&mut self.zi);
        }
        if on[6] {
            f2 = f2.push_next(&mut self.mm);
        }
        if on[7] {
            f2 = f2.push_next(&mut self.bda);
        }
        if on[8] {
            f2 = f2.push_next(&mut self.a64);
        }
        if on[9] {
            f2 = f2.push_next(&mut self.di);
        }
        if on[10] {
            f2 = f2.push_next(&mut self.ir);
        }
        if on[11] {
            f2 = f2.push_next(&mut self.r2);
        }
        if on[12] {
            f2 = f2.push_next(&mut self.set);
        }
        f2
    }
}

/// What a script asks of the device.
#[derive(Default, Debug)]
pub struct Requirements {
    pub features: Vec<String>,
    /// `DEVICE_PROPERTY` names (boolean properties that must be true).
    pub properties: Vec<String>,
    pub device_extensions: Vec<String>,
    pub instance_extensions: Vec<String>,
}

/// Subgroup size facts of the device.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubgroupInfo {
    pub size: u32,
    pub min: u32,
    pub max: u32,
    pub required_stages_compute: bool,
    pub supported_ops: vk::SubgroupFeatureFlags,
    pub supported_stages: vk::ShaderStageFlags,
}

pub enum Opened {
    Ready(Box<Gpu>),
    Skip(String),
}

struct Buf {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    ptr: *mut u8,
    len: usize,
}

struct Pipe {
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    pool: vk::DescriptorPool,
    sets: Vec<vk::DescriptorSet>,
    dynamic_offsets: Vec<u32>,
    push_size: u32,
    buffer_views: Vec<vk::BufferView>,
}

/// One image of a script. By default it is OPTIMAL (the device's tiled layout) and the
/// host's texels go in and out through a staging buffer with vkCmdCopyBufferToImage /
/// vkCmdCopyImageToBuffer; with `FERRITE_AMBER_LINEAR_IMAGES` set (or when the device cannot
/// make the OPTIMAL image with transfer usages) it is LINEAR in host-visible memory and the
/// host writes and reads its texels through the mapping. `write_image` and `read_image` are
/// the only functions that know which.
struct Img {
    image: vk::Image,
    memory: vk::DeviceMemory,
    /// LINEAR: the mapping of the image memory (null for OPTIMAL images).
    ptr: *mut u8,
    /// OPTIMAL: the staging buffer (index into the buffers) holding every level tightly
    /// packed, level after level.
    staging: Option<usize>,
    spec: ImageSpec,
    /// False until the first dispatch moves it from PREINITIALIZED to GENERAL.
    general: bool,
    /// Views by first mip level (each shows the levels from there to the last).
    views: Vec<(u32, vk::ImageView)>,
}

/// What an image is made of: its format, shape, levels and the usages its binds need.
#[derive(Clone, Copy, Debug)]
pub struct ImageSpec {
    pub format: vk::Format,
    pub dim: ImageDim,
    pub extent: [u32; 3],
    pub levels: u32,
    pub texel_size: u32,
    pub usage: vk::ImageUsageFlags,
}

impl ImageSpec {
    fn level_extent(&self, l: u32) -> [u32; 3] {
        self.extent.map(|e| (e >> l).max(1))
    }
}

/// One descriptor of a binding.
#[derive(Clone, Copy, Debug)]
pub enum Resource {
    /// A buffer with (offset, range).
    Buffer(usize, u64, u64),
    /// A texel buffer view of a whole buffer in a format.
    TexelBuffer(usize, vk::Format),
    /// An image seen from `base_level`, with the sampler of a combined image sampler.
    Image {
        image: usize,
        base_level: u32,
        sampler: Option<usize>,
    },
    Sampler(usize),
}

/// One descriptor binding of a pipeline.
pub struct BindingDesc {
    pub set: u32,
    pub binding: u32,
    pub ty: vk::DescriptorType,
    pub resources: Vec<Resource>,
    pub dynamic_offsets: Vec<u32>,
}

pub struct PipelineDesc<'a> {
    pub spirv: &'a [u32],
    pub entry: &'a str,
    pub specs: Vec<(u32, u32)>,
    pub bindings: Vec<BindingDesc>,
    pub push_size: u32,
    pub full_subgroups: bool,
    pub varying_size: bool,
    pub required_size: Option<u32>,
}

pub struct Gpu {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    cmd_pool: vk::CommandPool,
    fence: vk::Fence,
    mem_type: u32,
    physical: vk::PhysicalDevice,
    pub name: String,
    pub api_version: u32,
    pub limits: vk::PhysicalDeviceLimits,
    pub subgroup: SubgroupInfo,
    buffers: Vec<Buf>,
    images: Vec<Img>,
    samplers: Vec<vk::Sampler>,
    pipes: Vec<Pipe>,
    /// Time spent in vkCreateComputePipelines (and shader modules).
    pub pipeline_time: Duration,
    /// False after a fence timeout: the device may still be busy and is not reused.
    healthy: bool,
}

fn cstrs(v: &[CString]) -> Vec<*const std::ffi::c_char> {
    v.iter().map(|s| s.as_ptr()).collect()
}

fn names(props: &[vk::ExtensionProperties]) -> Vec<String> {
    props
        .iter()
        .map(|p| {
            p.extension_name_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect()
}

/// Loads the system Vulkan loader.
pub fn load_entry() -> Result<ash::Entry, AmberError> {
    // SAFETY: loads libvulkan through ash's loader; the library's initialisation has no
    // preconditions on our side.
    unsafe { ash::Entry::load() }.map_err(|e| AmberError::Loader(e.to_string()))
}

impl Gpu {
    /// Creates an instance and a device on the first physical device with what `req` asks;
    /// `Skip` when the device lacks any of it.
    pub fn open(entry: ash::Entry, req: &Requirements) -> Result<Opened, AmberError> {
        // SAFETY: plain Vulkan calls on the loaded entry with valid, local create infos.
        unsafe {
            let loader_version = entry
                .try_enumerate_instance_version()
                .ok()
                .flatten()
                .unwrap_or(vk::API_VERSION_1_0);
            let api = loader_version.min(vk::API_VERSION_1_3);
            let inst_ext_props = entry
                .enumerate_instance_extension_properties(None)
                .map_err(vkerr("vkEnumerateInstanceExtensionProperties"))?;
            let inst_avail = names(&inst_ext_props);
            let mut inst_exts: Vec<String> = Vec::new();
            for e in &req.instance_extensions {
                if !inst_avail.contains(e) {
                    return Ok(Opened::Skip(format!(
                        "instance extension {e} not supported"
                    )));
                }
                inst_exts.push(e.clone());
            }
            let gpdp2 = "VK_KHR_get_physical_device_properties2".to_string();
            // Also with a 1.1+ instance: a 1.0 device's extension feature structures reach the
            // driver only through the KHR entry point, which the loader calls when the
            // extension is enabled (otherwise it emulates the call and drops the chain).
            if inst_avail.contains(&gpdp2) && !inst_exts.contains(&gpdp2) {
                inst_exts.push(gpdp2.clone());
            }
            let inst_c: Vec<CString> = inst_exts
                .iter()
                .map(|s| CString::new(s.as_str()).unwrap_or_default())
                .collect();
            let inst_p = cstrs(&inst_c);
            let app = vk::ApplicationInfo::default()
                .application_name(c"ferrite-amber")
                .api_version(api);
            let ici = vk::InstanceCreateInfo::default()
                .application_info(&app)
                .enabled_extension_names(&inst_p);
            let instance = entry
                .create_instance(&ici, None)
                .map_err(vkerr("vkCreateInstance"))?;
            match Self::open_device(&entry, &instance, api, inst_exts.contains(&gpdp2), req) {
                Ok(Ok(parts)) => {
                    let (device, queue, qfi, mem_type, name, api_version, limits, subgroup) = parts;
                    let cpi = vk::CommandPoolCreateInfo::default()
                        .queue_family_index(qfi)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
                    let cmd_pool = device
                        .create_command_pool(&cpi, None)
                        .map_err(vkerr("vkCreateCommandPool"))?;
                    let fence = device
                        .create_fence(&vk::FenceCreateInfo::default(), None)
                        .map_err(vkerr("vkCreateFence"))?;
                    // open_device used the first physical device; so does everything else.
                    let physical = instance
                        .enumerate_physical_devices()
                        .map_err(vkerr("vkEnumeratePhysicalDevices"))?[0];
                    Ok(Opened::Ready(Box::new(Gpu {
                        _entry: entry,
                        instance,
                        device,
                        queue,
                        cmd_pool,
                        fence,
                        mem_type,
                        physical,
                        name,
                        api_version,
                        limits,
                        subgroup,
                        buffers: Vec::new(),
                        images: Vec::new(),
                        samplers: Vec::new(),
                        pipes: Vec::new(),
                        pipeline_time: Duration::ZERO,
                        healthy: true,
                    })))
                }
                Ok(Err(skip)) => {
                    instance.destroy_instance(None);
                    Ok(Opened::Skip(skip))
                }
                Err(e) => {
                    instance.destroy_instance(None);
                    Err(e)
                }
            }
        }
    }

    #[allow(clippy::type_complexity)]
    unsafe fn open_device(
        entry: &ash::Entry,
        instance: &ash::Instance,
        api: u32,
        has_gpdp2: bool,
        req: &Requirements,
    ) -> Result<
        Result<
            (
                ash::Device,
                vk::Queue,
                u32,
                u32,
                String,
                u32,
                vk::PhysicalDeviceLimits,
                SubgroupInfo,
            ),
            String,
        >,
        AmberError,
    > {
        let _ = entry;
        let pds = instance
            .enumerate_physical_devices()
            .map_err(vkerr("vkEnumeratePhysicalDevices"))?;
        let Some(&pd) = pds.first() else {
            return Err(AmberError::NoDevice);
        };
        let props = instance.get_physical_device_properties(pd);
        let name = props
            .device_name_as_c_str()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dev_api = props.api_version.min(api);
        let minor = vk::api_version_minor(dev_api);
        let has_props2 = minor >= 1 || has_gpdp2;
        let dev_ext_props = instance
            .enumerate_device_extension_properties(pd)
            .map_err(vkerr("vkEnumerateDeviceExtensionProperties"))?;
        let dev_avail = names(&dev_ext_props);
        let mut dev_exts: Vec<String> = Vec::new();
        for e in &req.device_extensions {
            if !dev_avail.contains(e) {
                return Ok(Err(format!("device extension {e} not supported")));
            }
            if !dev_exts.contains(e) {
                dev_exts.push(e.clone());
            }
        }
        // Which extension structs the device can report.
        let mut avail = [false; 13];
        for (i, (_, ext, core)) in EXT_STRUCTS.iter().enumerate() {
            avail[i] = has_props2
                && (minor >= *core || dev_avail.iter().any(|a| a.as_bytes() == ext.to_bytes()));
        }
        let core_have = instance.get_physical_device_features(pd);
        let mut ext_have = ExtFeatures::default();
        if has_props2 && avail.iter().any(|&a| a) {
            let f2 = ext_have.chain(vk::PhysicalDeviceFeatures2::default(), &avail);
            let mut f2 = f2;
            if minor >= 1 {
                instance.get_physical_device_features2(pd, &mut f2);
            } else {
                let gp = ash::khr::get_physical_device_properties2::Instance::new(entry, instance);
                gp.get_physical_device_features2(pd, &mut f2);
            }
        }
        // Subgroup properties (1.1) and subgroup size control properties.
        let mut subgroup = SubgroupInfo::default();
        if minor >= 1 {
            let mut sp = vk::PhysicalDeviceSubgroupProperties::default();
            let mut scp = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
            let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut sp);
            if avail[4] {
                p2 = p2.push_next(&mut scp);
            }
            instance.get_physical_device_properties2(pd, &mut p2);
            subgroup.size = sp.subgroup_size;
            subgroup.supported_ops = sp.supported_operations;
            subgroup.supported_stages = sp.supported_stages;
            if avail[4] {
                subgroup.min = scp.min_subgroup_size;
                subgroup.max = scp.max_subgroup_size;
                subgroup.required_stages_compute = scp
                    .required_subgroup_size_stages
                    .contains(vk::ShaderStageFlags::COMPUTE);
            }
        }
        // DEVICE_PROPERTY: boolean float-controls properties (Vulkan 1.2 or
        // VK_KHR_shader_float_controls).
        if !req.properties.is_empty() {
            let has_fc = minor >= 2
                || dev_avail
                    .iter()
                    .any(|e| e == "VK_KHR_shader_float_controls");
            let mut fc = vk::PhysicalDeviceFloatControlsProperties::default();
            if has_fc && minor >= 1 {
                let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut fc);
                instance.get_physical_device_properties2(pd, &mut p2);
            }
            for p in &req.properties {
                let Some(member) = p.strip_prefix("FloatControlsProperties.") else {
                    return Err(AmberError::UnknownProperty(p.clone()));
                };
                let v = match member {
                    "shaderSignedZeroInfNanPreserveFloat16" => {
                        fc.shader_signed_zero_inf_nan_preserve_float16
                    }
                    "shaderSignedZeroInfNanPreserveFloat32" => {
                        fc.shader_signed_zero_inf_nan_preserve_float32
                    }
                    "shaderSignedZeroInfNanPreserveFloat64" => {
                        fc.shader_signed_zero_inf_nan_preserve_float64
                    }
                    "shaderDenormPreserveFloat16" => fc.shader_denorm_preserve_float16,
                    "shaderDenormPreserveFloat32" => fc.shader_denorm_preserve_float32,
                    "shaderDenormPreserveFloat64" => fc.shader_denorm_preserve_float64,
                    "shaderDenormFlushToZeroFloat16" => fc.shader_denorm_flush_to_zero_float16,
                    "shaderDenormFlushToZeroFloat32" => fc.shader_denorm_flush_to_zero_float32,
                    "shaderDenormFlushToZeroFloat64" => fc.shader_denorm_flush_to_zero_float64,
                    "shaderRoundingModeRTEFloat16" => fc.shader_rounding_mode_rte_float16,
                    "shaderRoundingModeRTEFloat32" => fc.shader_rounding_mode_rte_float32,
                    "shaderRoundingModeRTEFloat64" => fc.shader_rounding_mode_rte_float64,
                    "shaderRoundingModeRTZFloat16" => fc.shader_rounding_mode_rtz_float16,
                    "shaderRoundingModeRTZFloat32" => fc.shader_rounding_mode_rtz_float32,
                    "shaderRoundingModeRTZFloat64" => fc.shader_rounding_mode_rtz_float64,
                    _ => return Err(AmberError::UnknownProperty(p.clone())),
                };
                if v != vk::TRUE {
                    return Ok(Err(format!("device property {p} is not supported")));
                }
            }
        }
        let mut core_on = vk::PhysicalDeviceFeatures::default();
        let mut ext_on = ExtFeatures::default();
        let mut used = [false; 13];
        let mut core_have_m = core_have;
        for f in &req.features {
            if let Some((st, member)) = f.split_once('.') {
                if st == "SubgroupSupportedOperations" || st == "SubgroupSupportedStages" {
                    let ok = if st == "SubgroupSupportedOperations" {
                        let bit = match member {
                            "basic" => vk::SubgroupFeatureFlags::BASIC,
                            "vote" => vk::SubgroupFeatureFlags::VOTE,
                            "arithmetic" => vk::SubgroupFeatureFlags::ARITHMETIC,
                            "ballot" => vk::SubgroupFeatureFlags::BALLOT,
                            "shuffle" => vk::SubgroupFeatureFlags::SHUFFLE,
                            "shuffleRelative" => vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE,
                            "clustered" => vk::SubgroupFeatureFlags::CLUSTERED,
                            "quad" => vk::SubgroupFeatureFlags::QUAD,
                            _ => return Err(AmberError::UnknownFeature(f.clone())),
                        };
                        subgroup.supported_ops.contains(bit)
                    } else {
                        let bit = match member {
                            "compute" => vk::ShaderStageFlags::COMPUTE,
                            "vertex" => vk::ShaderStageFlags::VERTEX,
                            "fragment" => vk::ShaderStageFlags::FRAGMENT,
                            "geometry" => vk::ShaderStageFlags::GEOMETRY,
                            "tessellationControl" => vk::ShaderStageFlags::TESSELLATION_CONTROL,
                            "tessellationEvaluation" => {
                                vk::ShaderStageFlags::TESSELLATION_EVALUATION
                            }
                            _ => return Err(AmberError::UnknownFeature(f.clone())),
                        };
                        subgroup.supported_stages.contains(bit)
                    };
                    if !ok {
                        return Ok(Err(format!("device feature {f} not supported")));
                    }
                    continue;
                }
                let Some(si) = EXT_STRUCTS.iter().position(|(n, _, _)| *n == st) else {
                    return Err(AmberError::UnknownFeature(f.clone()));
                };
                let have = ext_have.member(si, member).map(|b| *b == vk::TRUE);
                match have {
                    None => return Err(AmberError::UnknownFeature(f.clone())),
                    Some(false) => return Ok(Err(format!("device feature {f} not supported"))),
                    Some(true) => {}
                }
                if let Some(b) = ext_on.member(si, member) {
                    *b = vk::TRUE;
                }
                used[si] = true;
                let (_, ext, core) = EXT_STRUCTS[si];
                let ext = ext.to_string_lossy().into_owned();
                if minor < core && !dev_exts.contains(&ext) {
                    dev_exts.push(ext);
                }
            } else {
                match core_feature(&mut core_have_m, f) {
                    None => return Err(AmberError::UnknownFeature(f.clone())),
                    Some(b) if *b != vk::TRUE => {
                        return Ok(Err(format!("device feature {f} not supported")))
                    }
                    Some(_) => {}
                }
                if let Some(b) = core_feature(&mut core_on, f) {
                    *b = vk::TRUE;
                }
            }
        }
        // Subgroup size control before 1.3 is an extension.
        if used[4] && minor < 3 {
            let e = "VK_EXT_subgroup_size_control".to_string();
            if !dev_exts.contains(&e) {
                dev_exts.push(e);
            }
        }
        let qfs = instance.get_physical_device_queue_family_properties(pd);
        let Some(qfi) = qfs
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
        else {
            return Ok(Err("no compute queue".into()));
        };
        let qfi = qfi as u32;
        let prio = [1.0f32];
        let qci = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(qfi)
            .queue_priorities(&prio)];
        let dev_c: Vec<CString> = dev_exts
            .iter()
            .map(|s| CString::new(s.as_str()).unwrap_or_default())
            .collect();
        let dev_p = cstrs(&dev_c);
        let mut f2 = vk::PhysicalDeviceFeatures2::default().features(core_on);
        let mut dci = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qci)
            .enabled_extension_names(&dev_p);
        if has_props2 {
            f2 = ext_on.chain(f2, &used);
            dci = dci.push_next(&mut f2);
        } else {
            dci = dci.enabled_features(&core_on);
        }
        let device =
            crate::icd::create_device(instance, pd, &dci).map_err(vkerr("vkCreateDevice"))?;
        let queue = device.get_device_queue(qfi, 0);
        let mp = instance.get_physical_device_memory_properties(pd);
        let want = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let Some(mem_type) = (0..mp.memory_type_count)
            .find(|&i| mp.memory_types[i as usize].property_flags.contains(want))
        else {
            crate::icd::destroy_device(&device);
            return Ok(Err("no host-visible coherent memory".into()));
        };
        Ok(Ok((
            device,
            queue,
            qfi,
            mem_type,
            name,
            dev_api,
            props.limits,
            subgroup,
        )))
    }

    /// Allocates `size` bytes of memory type `mem_type`.
    ///
    /// # Safety
    /// The device is alive; the caller frees the memory (or records it for reset/Drop).
    unsafe fn allocate(&self, size: u64, mem_type: u32) -> Result<vk::DeviceMemory, AmberError> {
        let mai = vk::MemoryAllocateInfo::default()
            .allocation_size(size)
            .memory_type_index(mem_type);
        // SAFETY: the caller's contract; a valid allocate info.
        unsafe { self.device.allocate_memory(&mai, None) }
            .map_err(|e| AmberError::Vulkan("vkAllocateMemory", e))
    }

    /// Maps the whole of host-visible `memory` and zeroes its first `size` bytes.
    ///
    /// # Safety
    /// `memory` is alive, not mapped, at least `size` bytes long and not in use by the GPU.
    unsafe fn map_zeroed(
        &self,
        memory: vk::DeviceMemory,
        size: u64,
    ) -> Result<*mut u8, AmberError> {
        // SAFETY: the caller's contract.
        unsafe {
            let ptr = self
                .device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .map_err(vkerr("vkMapMemory"))? as *mut u8;
            std::ptr::write_bytes(ptr, 0, size as usize);
            Ok(ptr)
        }
    }

    /// Creates a host-visible storage/uniform buffer of `len` bytes; returns its index.
    pub fn create_buffer(&mut self, len: usize) -> Result<usize, AmberError> {
        // Exact size: a WHOLE_SIZE descriptor must see exactly the script's buffer (length()).
        let size = len.max(1) as u64;
        // SAFETY: valid create infos; memory is bound once and mapped for the buffer's life.
        unsafe {
            let bci = vk::BufferCreateInfo::default().size(size).usage(
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::UNIFORM_BUFFER
                    | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER
                    | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST,
            );
            let buffer = self
                .device
                .create_buffer(&bci, None)
                .map_err(vkerr("vkCreateBuffer"))?;
            let mr = self.device.get_buffer_memory_requirements(buffer);
            if mr.memory_type_bits & (1 << self.mem_type) == 0 {
                self.device.destroy_buffer(buffer, None);
                return Err(AmberError::Setup(
                    "buffer cannot live in host-visible memory".into(),
                ));
            }
            let memory = self
                .allocate(mr.size, self.mem_type)
                .inspect_err(|_| self.device.destroy_buffer(buffer, None))?;
            self.buffers.push(Buf {
                buffer,
                memory,
                ptr: std::ptr::null_mut(),
                len,
            });
            self.device
                .bind_buffer_memory(buffer, memory, 0)
                .map_err(vkerr("vkBindBufferMemory"))?;
            let ptr = self.map_zeroed(memory, size)?;
            self.buffers.last_mut().expect("just pushed").ptr = ptr;
        }
        Ok(self.buffers.len() - 1)
    }

    /// Copies host bytes into buffer `id` (at most its length).
    pub fn upload(&self, id: usize, data: &[u8]) {
        let b = &self.buffers[id];
        let n = data.len().min(b.len);
        // SAFETY: `ptr` maps at least `len` bytes of coherent memory, and no GPU work is
        // pending (every dispatch waits for its fence).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), b.ptr, n) };
    }

    /// Copies buffer `id` into host bytes (at most its length).
    pub fn download(&self, id: usize, data: &mut [u8]) {
        let b = &self.buffers[id];
        let n = data.len().min(b.len);
        // SAFETY: as in `upload`; the dispatch's fence was waited on and a barrier made
        // shader writes visible to the host.
        unsafe { std::ptr::copy_nonoverlapping(b.ptr, data.as_mut_ptr(), n) };
    }

    /// Creates an image (OPTIMAL with a staging buffer, or LINEAR when asked for or when
    /// OPTIMAL is not possible: see [`Img`]); `Ok(Err(reason))` when the device can make
    /// neither (the format, usage or shape is not supported).
    pub fn create_image(&mut self, spec: &ImageSpec) -> Result<Result<usize, String>, AmberError> {
        if std::env::var_os("FERRITE_AMBER_LINEAR_IMAGES").is_none() {
            let transfer = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
            let optimal = ImageSpec {
                usage: spec.usage | transfer,
                ..*spec
            };
            if let Ok(id) = self.make_image(&optimal, vk::ImageTiling::OPTIMAL)? {
                let bytes: u64 = (0..spec.levels)
                    .map(|l| {
                        let [w, h, d] = spec.level_extent(l);
                        u64::from(w * h * d * spec.texel_size)
                    })
                    .sum();
                let staging = self.create_buffer(bytes as usize)?;
                self.images[id].staging = Some(staging);
                // Zeroed like a new LINEAR image (the staging buffer starts zeroed).
                self.write_image(id, 0, &[])?;
                return Ok(Ok(id));
            }
        }
        self.make_image(spec, vk::ImageTiling::LINEAR)
    }

    fn make_image(
        &mut self,
        spec: &ImageSpec,
        tiling: vk::ImageTiling,
    ) -> Result<Result<usize, String>, AmberError> {
        let ty = match spec.dim {
            ImageDim::D1 => vk::ImageType::TYPE_1D,
            ImageDim::D2 => vk::ImageType::TYPE_2D,
            ImageDim::D3 => vk::ImageType::TYPE_3D,
        };
        let linear = tiling == vk::ImageTiling::LINEAR;
        // SAFETY: queries and object creation with valid, local infos; every object made
        // here is recorded in `self.images` (or destroyed on error) and destroyed in reset/Drop.
        unsafe {
            let props = match self.instance.get_physical_device_image_format_properties(
                self.physical,
                spec.format,
                ty,
                tiling,
                spec.usage,
                vk::ImageCreateFlags::empty(),
            ) {
                Ok(p) => p,
                Err(e) => {
                    return Ok(Err(format!(
                        "the device has no {tiling:?} {:?} {ty:?} image with usage {:?} ({e})",
                        spec.format, spec.usage
                    )))
                }
            };
            let e = props.max_extent;
            if spec.levels > props.max_mip_levels
                || spec.extent[0] > e.width
                || spec.extent[1] > e.height
                || spec.extent[2] > e.depth
            {
                return Ok(Err(format!(
                    "{tiling:?} {:?} images allow {} levels of at most {}x{}x{} texels",
                    spec.format, props.max_mip_levels, e.width, e.height, e.depth
                )));
            }
            let ci = vk::ImageCreateInfo::default()
                .image_type(ty)
                .format(spec.format)
                .extent(vk::Extent3D {
                    width: spec.extent[0],
                    height: spec.extent[1],
                    depth: spec.extent[2],
                })
                .mip_levels(spec.levels)
                .array_layers(1)
                .samples(vk::SampleCountFlags::TYPE_1)
                .tiling(tiling)
                .usage(spec.usage)
                .sharing_mode(vk::SharingMode::EXCLUSIVE)
                .initial_layout(vk::ImageLayout::PREINITIALIZED);
            let image = self
                .device
                .create_image(&ci, None)
                .map_err(vkerr("vkCreateImage"))?;
            let mr = self.device.get_image_memory_requirements(image);
            let mp = self
                .instance
                .get_physical_device_memory_properties(self.physical);
            let want =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let Some(mem_type) = (0..mp.memory_type_count).find(|&i| {
                mr.memory_type_bits & (1 << i) != 0
                    && mp.memory_types[i as usize].property_flags.contains(want)
            }) else {
                self.device.destroy_image(image, None);
                return Ok(Err(
                    "LINEAR images cannot live in host-visible memory".into()
                ));
            };
            let memory = self
                .allocate(mr.size, mem_type)
                .inspect_err(|_| self.device.destroy_image(image, None))?;
            self.images.push(Img {
                image,
                memory,
                ptr: std::ptr::null_mut(),
                staging: None,
                spec: *spec,
                general: false,
                views: Vec::new(),
            });
            self.device
                .bind_image_memory(image, memory, 0)
                .map_err(vkerr("vkBindImageMemory"))?;
            if !linear {
                return Ok(Ok(self.images.len() - 1));
            }
            let ptr = self.map_zeroed(memory, mr.size)?;
            self.images.last_mut().expect("just pushed").ptr = ptr;
        }
        Ok(Ok(self.images.len() - 1))
    }

    /// Where each row of each level of a LINEAR image lives: calls `f(level, z, y, byte
    /// offset in the memory, byte offset in Amber's tightly packed data)` for the levels
    /// `base..` with Amber's placement: every level starts at the data's first byte.
    fn for_each_row(&self, id: usize, base: u32, mut f: impl FnMut(u64, usize, usize)) {
        let img = &self.images[id];
        let s = img.spec;
        for l in base..s.levels {
            let [w, h, d] = s.level_extent(l);
            let sub = vk::ImageSubresource {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: l,
                array_layer: 0,
            };
            // SAFETY: a query on a live LINEAR image of this device.
            let lay = unsafe { self.device.get_image_subresource_layout(img.image, sub) };
            let row = (w * s.texel_size) as usize;
            for z in 0..d as u64 {
                for y in 0..h as u64 {
                    let mem = lay.offset + z * lay.depth_pitch + y * lay.row_pitch;
                    let host = ((z * h as u64 + y) * row as u64) as usize;
                    f(mem, host, row);
                }
            }
        }
    }

    /// The byte offset of each level in an OPTIMAL image's staging buffer, and its size.
    fn staging_levels(spec: &ImageSpec) -> Vec<(u64, usize)> {
        let mut at = 0u64;
        (0..spec.levels)
            .map(|l| {
                let [w, h, d] = spec.level_extent(l);
                let n = (w * h * d * spec.texel_size) as usize;
                at += n as u64;
                (at - n as u64, n)
            })
            .collect()
    }

    /// Records `f` into a one-time command buffer, submits it and waits (60 s at most).
    unsafe fn submit_once(
        &mut self,
        f: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> Result<(), AmberError> {
        let dev = &self.device;
        // SAFETY: the caller's contract; the command buffer is ours and freed after the wait.
        unsafe {
            let ai = vk::CommandBufferAllocateInfo::default()
                .command_pool(self.cmd_pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            let cb = dev
                .allocate_command_buffers(&ai)
                .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
            let bi = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            dev.begin_command_buffer(cb, &bi)
                .map_err(vkerr("vkBeginCommandBuffer"))?;
            f(dev, cb);
            dev.end_command_buffer(cb)
                .map_err(vkerr("vkEndCommandBuffer"))?;
            let cbs = [cb];
            let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
            dev.reset_fences(&[self.fence])
                .map_err(vkerr("vkResetFences"))?;
            dev.queue_submit(self.queue, &submit, self.fence)
                .map_err(vkerr("vkQueueSubmit"))?;
            match dev.wait_for_fences(&[self.fence], true, 60_000_000_000) {
                Ok(()) => {
                    dev.free_command_buffers(self.cmd_pool, &[cb]);
                    Ok(())
                }
                Err(vk::Result::TIMEOUT) => {
                    self.healthy = false;
                    Err(AmberError::FenceTimeout(60_000))
                }
                Err(e) => Err(AmberError::Vulkan("vkWaitForFences", e)),
            }
        }
    }

    /// Copies levels `base..` between an OPTIMAL image and its staging buffer (`to_image`:
    /// buffer to image), leaving the image in GENERAL for the shaders.
    fn staging_copy(&mut self, id: usize, base: u32, to_image: bool) -> Result<(), AmberError> {
        let img = &self.images[id];
        let staging = self.buffers[img.staging.expect("OPTIMAL image")].buffer;
        let (image, spec) = (img.image, img.spec);
        let old = if img.general {
            vk::ImageLayout::GENERAL
        } else {
            vk::ImageLayout::PREINITIALIZED
        };
        let regions: Vec<vk::BufferImageCopy> = Self::staging_levels(&spec)
            .into_iter()
            .enumerate()
            .skip(base as usize)
            .map(|(l, (at, _))| {
                let [w, h, d] = spec.level_extent(l as u32);
                vk::BufferImageCopy {
                    buffer_offset: at,
                    buffer_row_length: 0,
                    buffer_image_height: 0,
                    image_subresource: vk::ImageSubresourceLayers {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        mip_level: l as u32,
                        base_array_layer: 0,
                        layer_count: 1,
                    },
                    image_offset: vk::Offset3D::default(),
                    image_extent: vk::Extent3D {
                        width: w,
                        height: h,
                        depth: d,
                    },
                }
            })
            .collect();
        let transfer = if to_image {
            vk::ImageLayout::TRANSFER_DST_OPTIMAL
        } else {
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL
        };
        let barrier = |from, to, src, dst| {
            [vk::ImageMemoryBarrier::default()
                .src_access_mask(src)
                .dst_access_mask(dst)
                .old_layout(from)
                .new_layout(to)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image)
                .subresource_range(vk::ImageSubresourceRange {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    base_mip_level: 0,
                    level_count: vk::REMAINING_MIP_LEVELS,
                    base_array_layer: 0,
                    layer_count: 1,
                })]
        };
        let any = vk::AccessFlags::SHADER_READ
            | vk::AccessFlags::SHADER_WRITE
            | vk::AccessFlags::TRANSFER_READ
            | vk::AccessFlags::TRANSFER_WRITE
            | vk::AccessFlags::HOST_READ
            | vk::AccessFlags::HOST_WRITE;
        let stages = vk::PipelineStageFlags::COMPUTE_SHADER
            | vk::PipelineStageFlags::TRANSFER
            | vk::PipelineStageFlags::HOST;
        // SAFETY: live objects of this device; the submission is waited for.
        unsafe {
            self.submit_once(|d, cb| {
                let host = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::HOST_WRITE)
                    .dst_access_mask(vk::AccessFlags::TRANSFER_READ)];
                d.cmd_pipeline_barrier(
                    cb,
                    stages,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::DependencyFlags::empty(),
                    &host,
                    &[],
                    &barrier(old, transfer, any, any),
                );
                if to_image {
                    d.cmd_copy_buffer_to_image(cb, staging, image, transfer, &regions);
                } else {
                    d.cmd_copy_image_to_buffer(cb, image, transfer, staging, &regions);
                }
                let host = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                    .dst_access_mask(vk::AccessFlags::HOST_READ)];
                d.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::TRANSFER,
                    stages,
                    vk::DependencyFlags::empty(),
                    &host,
                    &[],
                    &barrier(transfer, vk::ImageLayout::GENERAL, any, any),
                );
            })?;
        }
        self.images[id].general = true;
        Ok(())
    }

    /// Writes Amber's texel data into levels `base..` of image `id` (each level takes the
    /// data from its start, as Amber's buffer-to-image copies do).
    pub fn write_image(&mut self, id: usize, base: u32, data: &[u8]) -> Result<(), AmberError> {
        if let Some(staging) = self.images[id].staging {
            let spec = self.images[id].spec;
            let ptr = self.buffers[staging].ptr;
            for (l, (at, n)) in Self::staging_levels(&spec).into_iter().enumerate() {
                if (l as u32) < base {
                    continue;
                }
                let m = n.min(data.len());
                // SAFETY: the staging buffer maps every level's bytes; no GPU work is pending.
                // Bytes beyond the data keep what the level held (as LINEAR rows do).
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.add(at as usize), m) };
            }
            return self.staging_copy(id, base, true);
        }
        self.write_linear(id, base, data);
        Ok(())
    }

    fn write_linear(&self, id: usize, base: u32, data: &[u8]) {
        let ptr = self.images[id].ptr;
        self.for_each_row(id, base, |mem, host, row| {
            if host < data.len() {
                let n = row.min(data.len() - host);
                // SAFETY: `ptr` maps the whole image memory and the subresource layout
                // places this row inside it; no GPU work is pending.
                unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr().add(host), ptr.add(mem as usize), n)
                };
            }
        });
    }

    /// Reads levels `base..` of image `id` into Amber's texel data, each from the data's
    /// start (so a later level overwrites the start of an earlier one, as Amber's
    /// image-to-buffer copies do).
    pub fn read_image(&mut self, id: usize, base: u32, data: &mut [u8]) -> Result<(), AmberError> {
        if let Some(staging) = self.images[id].staging {
            self.staging_copy(id, base, false)?;
            let spec = self.images[id].spec;
            let ptr = self.buffers[staging].ptr;
            for (l, (at, n)) in Self::staging_levels(&spec).into_iter().enumerate() {
                if (l as u32) < base {
                    continue;
                }
                let m = n.min(data.len());
                // SAFETY: as in `write_image`; the copy's fence was waited on.
                unsafe {
                    std::ptr::copy_nonoverlapping(ptr.add(at as usize), data.as_mut_ptr(), m)
                };
            }
            return Ok(());
        }
        self.read_linear(id, base, data);
        Ok(())
    }

    fn read_linear(&self, id: usize, base: u32, data: &mut [u8]) {
        let ptr = self.images[id].ptr;
        self.for_each_row(id, base, |mem, host, row| {
            if host < data.len() {
                let n = row.min(data.len() - host);
                // SAFETY: as in `write_image`; the dispatch's fence was waited on and a
                // barrier made shader writes visible to the host.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        ptr.add(mem as usize),
                        data.as_mut_ptr().add(host),
                        n,
                    )
                };
            }
        });
    }

    /// The view of image `id` from level `base` to the last (made once per level).
    unsafe fn image_view(&mut self, id: usize, base: u32) -> Result<vk::ImageView, AmberError> {
        let img = &self.images[id];
        if let Some(&(_, v)) = img.views.iter().find(|(b, _)| *b == base) {
            return Ok(v);
        }
        let vt = match img.spec.dim {
            ImageDim::D1 => vk::ImageViewType::TYPE_1D,
            ImageDim::D2 => vk::ImageViewType::TYPE_2D,
            ImageDim::D3 => vk::ImageViewType::TYPE_3D,
        };
        let ci = vk::ImageViewCreateInfo::default()
            .image(img.image)
            .view_type(vt)
            .format(img.spec.format)
            .subresource_range(vk::ImageSubresourceRange {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                base_mip_level: base,
                level_count: vk::REMAINING_MIP_LEVELS,
                base_array_layer: 0,
                layer_count: 1,
            });
        let v = self
            .device
            .create_image_view(&ci, None)
            .map_err(vkerr("vkCreateImageView"))?;
        self.images[id].views.push((base, v));
        Ok(v)
    }

    /// Creates a sampler as Amber does (mipmap mode nearest, no anisotropy, no compare).
    pub fn create_sampler(&mut self, s: &ast::Sampler) -> Result<usize, AmberError> {
        let filter = |f: Filter| match f {
            Filter::Nearest => vk::Filter::NEAREST,
            Filter::Linear => vk::Filter::LINEAR,
        };
        let mode = |m: AddressMode| match m {
            AddressMode::Repeat => vk::SamplerAddressMode::REPEAT,
            AddressMode::MirroredRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
            AddressMode::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
            AddressMode::ClampToBorder => vk::SamplerAddressMode::CLAMP_TO_BORDER,
            AddressMode::MirroredClampToEdge => vk::SamplerAddressMode::MIRROR_CLAMP_TO_EDGE,
        };
        let border = match s.border {
            BorderColor::FloatTransparentBlack => vk::BorderColor::FLOAT_TRANSPARENT_BLACK,
            BorderColor::IntTransparentBlack => vk::BorderColor::INT_TRANSPARENT_BLACK,
            BorderColor::FloatOpaqueBlack => vk::BorderColor::FLOAT_OPAQUE_BLACK,
            BorderColor::IntOpaqueBlack => vk::BorderColor::INT_OPAQUE_BLACK,
            BorderColor::FloatOpaqueWhite => vk::BorderColor::FLOAT_OPAQUE_WHITE,
            BorderColor::IntOpaqueWhite => vk::BorderColor::INT_OPAQUE_WHITE,
        };
        let ci = vk::SamplerCreateInfo::default()
            .mag_filter(filter(s.mag_filter))
            .min_filter(filter(s.min_filter))
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(mode(s.address[0]))
            .address_mode_v(mode(s.address[1]))
            .address_mode_w(mode(s.address[2]))
            .border_color(border)
            .min_lod(s.min_lod as f32)
            .max_lod(s.max_lod as f32)
            .unnormalized_coordinates(!s.normalized);
        // SAFETY: a valid create info; the sampler is destroyed in reset/Drop.
        let smp =
            unsafe { self.device.create_sampler(&ci, None) }.map_err(vkerr("vkCreateSampler"))?;
        self.samplers.push(smp);
        Ok(self.samplers.len() - 1)
    }

    pub fn create_pipeline(&mut self, d: &PipelineDesc) -> Result<usize, AmberError> {
        let start = Instant::now();
        // SAFETY: Vulkan object creation with valid, local create infos; every object made
        // here is recorded in `self.pipes` (or destroyed on error) and destroyed in Drop.
        let r = unsafe { self.create_pipeline_inner(d) };
        self.pipeline_time += start.elapsed();
        r
    }

    unsafe fn create_pipeline_inner(&mut self, d: &PipelineDesc) -> Result<usize, AmberError> {
        let dev = &self.device;
        let n_sets = d.bindings.iter().map(|b| b.set + 1).max().unwrap_or(0);
        let mut pipe = Pipe {
            pipeline: vk::Pipeline::null(),
            layout: vk::PipelineLayout::null(),
            set_layouts: Vec::new(),
            pool: vk::DescriptorPool::null(),
            sets: Vec::new(),
            dynamic_offsets: Vec::new(),
            push_size: d.push_size,
            buffer_views: Vec::new(),
        };
        let mut pool_sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
        for s in 0..n_sets {
            let mut bs: Vec<&BindingDesc> = d.bindings.iter().filter(|b| b.set == s).collect();
            bs.sort_by_key(|b| b.binding);
            let lb: Vec<vk::DescriptorSetLayoutBinding> = bs
                .iter()
                .map(|b| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(b.binding)
                        .descriptor_type(b.ty)
                        .descriptor_count(b.resources.len() as u32)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            for b in &bs {
                pool_sizes.push(vk::DescriptorPoolSize {
                    ty: b.ty,
                    descriptor_count: b.resources.len() as u32,
                });
                pipe.dynamic_offsets.extend_from_slice(&b.dynamic_offsets);
            }
            let ci = vk::DescriptorSetLayoutCreateInfo::default().bindings(&lb);
            match dev.create_descriptor_set_layout(&ci, None) {
                Ok(l) => pipe.set_layouts.push(l),
                Err(e) => {
                    self.destroy_pipe(&pipe);
                    return Err(AmberError::Vulkan("vkCreateDescriptorSetLayout", e));
                }
            }
        }
        let pcr = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: d.push_size,
        }];
        let mut plci = vk::PipelineLayoutCreateInfo::default().set_layouts(&pipe.set_layouts);
        if d.push_size > 0 {
            plci = plci.push_constant_ranges(&pcr);
        }
        match dev.create_pipeline_layout(&plci, None) {
            Ok(l) => pipe.layout = l,
            Err(e) => {
                self.destroy_pipe(&pipe);
                return Err(AmberError::Vulkan("vkCreatePipelineLayout", e));
            }
        }
        if n_sets > 0 {
            if pool_sizes.is_empty() {
                pool_sizes.push(vk::DescriptorPoolSize {
                    ty: vk::DescriptorType::STORAGE_BUFFER,
                    descriptor_count: 1,
                });
            }
            let pci = vk::DescriptorPoolCreateInfo::default()
                .max_sets(n_sets)
                .pool_sizes(&pool_sizes);
            match dev.create_descriptor_pool(&pci, None) {
                Ok(p) => pipe.pool = p,
                Err(e) => {
                    self.destroy_pipe(&pipe);
                    return Err(AmberError::Vulkan("vkCreateDescriptorPool", e));
                }
            }
            let ai = vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(pipe.pool)
                .set_layouts(&pipe.set_layouts);
            match dev.allocate_descriptor_sets(&ai) {
                Ok(s) => pipe.sets = s,
                Err(e) => {
                    self.destroy_pipe(&pipe);
                    return Err(AmberError::Vulkan("vkAllocateDescriptorSets", e));
                }
            }
            let mut infos = Vec::new();
            for b in &d.bindings {
                match self.descriptor_infos(b, &mut pipe) {
                    Ok(i) => infos.push(i),
                    Err(e) => {
                        self.destroy_pipe(&pipe);
                        return Err(e);
                    }
                }
            }
            let writes: Vec<vk::WriteDescriptorSet> = d
                .bindings
                .iter()
                .zip(&infos)
                .map(|(b, (bufs, imgs, views))| {
                    let w = vk::WriteDescriptorSet::default()
                        .dst_set(pipe.sets[b.set as usize])
                        .dst_binding(b.binding)
                        .descriptor_type(b.ty);
                    if !imgs.is_empty() {
                        w.image_info(imgs)
                    } else if !views.is_empty() {
                        w.texel_buffer_view(views)
                    } else {
                        w.buffer_info(bufs)
                    }
                })
                .collect();
            let dev = &self.device;
            dev.update_descriptor_sets(&writes, &[]);
        }
        let dev = &self.device;
        let smci = vk::ShaderModuleCreateInfo::default().code(d.spirv);
        let module = match dev.create_shader_module(&smci, None) {
            Ok(m) => m,
            Err(e) => {
                self.destroy_pipe(&pipe);
                return Err(AmberError::Vulkan("vkCreateShaderModule", e));
            }
        };
        let entry = CString::new(d.entry).unwrap_or_default();
        let map: Vec<vk::SpecializationMapEntry> = d
            .specs
            .iter()
            .enumerate()
            .map(|(i, (id, _))| vk::SpecializationMapEntry {
                constant_id: *id,
                offset: 4 * i as u32,
                size: 4,
            })
            .collect();
        let data: Vec<u8> = d.specs.iter().flat_map(|(_, v)| v.to_le_bytes()).collect();
        let si = vk::SpecializationInfo::default()
            .map_entries(&map)
            .data(&data);
        let mut flags = vk::PipelineShaderStageCreateFlags::empty();
        if d.full_subgroups {
            flags |= vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS;
        }
        if d.varying_size {
            flags |= vk::PipelineShaderStageCreateFlags::ALLOW_VARYING_SUBGROUP_SIZE;
        }
        let mut req = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
            .required_subgroup_size(d.required_size.unwrap_or(0));
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&entry)
            .flags(flags);
        if !d.specs.is_empty() {
            stage = stage.specialization_info(&si);
        }
        if d.required_size.is_some() {
            stage = stage.push_next(&mut req);
        }
        let ci = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(pipe.layout)];
        let r = dev.create_compute_pipelines(vk::PipelineCache::null(), &ci, None);
        dev.destroy_shader_module(module, None);
        match r {
            Ok(p) => pipe.pipeline = p[0],
            Err((_, e)) => {
                self.destroy_pipe(&pipe);
                return Err(AmberError::Vulkan("vkCreateComputePipelines", e));
            }
        }
        self.pipes.push(pipe);
        Ok(self.pipes.len() - 1)
    }

    /// The descriptor infos of one binding (the one list its type uses is non-empty); buffer
    /// views made here are recorded in the pipe.
    #[allow(clippy::type_complexity)]
    unsafe fn descriptor_infos(
        &mut self,
        b: &BindingDesc,
        pipe: &mut Pipe,
    ) -> Result<
        (
            Vec<vk::DescriptorBufferInfo>,
            Vec<vk::DescriptorImageInfo>,
            Vec<vk::BufferView>,
        ),
        AmberError,
    > {
        let (mut bufs, mut imgs, mut views) = (Vec::new(), Vec::new(), Vec::new());
        for r in &b.resources {
            match *r {
                Resource::Buffer(id, offset, range) => bufs.push(vk::DescriptorBufferInfo {
                    buffer: self.buffers[id].buffer,
                    offset,
                    range,
                }),
                Resource::TexelBuffer(id, format) => {
                    let ci = vk::BufferViewCreateInfo::default()
                        .buffer(self.buffers[id].buffer)
                        .format(format)
                        .offset(0)
                        .range(vk::WHOLE_SIZE);
                    let v = self
                        .device
                        .create_buffer_view(&ci, None)
                        .map_err(vkerr("vkCreateBufferView"))?;
                    pipe.buffer_views.push(v);
                    views.push(v);
                }
                Resource::Image {
                    image,
                    base_level,
                    sampler,
                } => imgs.push(vk::DescriptorImageInfo {
                    sampler: sampler.map_or(vk::Sampler::null(), |s| self.samplers[s]),
                    image_view: self.image_view(image, base_level)?,
                    image_layout: vk::ImageLayout::GENERAL,
                }),
                Resource::Sampler(s) => imgs.push(vk::DescriptorImageInfo {
                    sampler: self.samplers[s],
                    image_view: vk::ImageView::null(),
                    image_layout: vk::ImageLayout::UNDEFINED,
                }),
            }
        }
        Ok((bufs, imgs, views))
    }

    unsafe fn destroy_pipe(&self, p: &Pipe) {
        let dev = &self.device;
        for v in &p.buffer_views {
            dev.destroy_buffer_view(*v, None);
        }
        if p.pipeline != vk::Pipeline::null() {
            dev.destroy_pipeline(p.pipeline, None);
        }
        if p.pool != vk::DescriptorPool::null() {
            dev.destroy_descriptor_pool(p.pool, None);
        }
        if p.layout != vk::PipelineLayout::null() {
            dev.destroy_pipeline_layout(p.layout, None);
        }
        for l in &p.set_layouts {
            dev.destroy_descriptor_set_layout(*l, None);
        }
    }

    /// Records and runs one dispatch, waiting for it up to `timeout_ms`.
    pub fn dispatch(
        &mut self,
        pipe: usize,
        groups: [u32; 3],
        push: &[u8],
        timeout_ms: u32,
    ) -> Result<(), AmberError> {
        let p = &self.pipes[pipe];
        let dev = &self.device;
        // SAFETY: records into a freshly allocated command buffer from our pool, submits it
        // with our fence, waits, and frees it; all handles are live objects of this device.
        unsafe {
            let ai = vk::CommandBufferAllocateInfo::default()
                .command_pool(self.cmd_pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            let cb = dev
                .allocate_command_buffers(&ai)
                .map_err(vkerr("vkAllocateCommandBuffers"))?[0];
            let result = (|| {
                let bi = vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
                dev.begin_command_buffer(cb, &bi)
                    .map_err(vkerr("vkBeginCommandBuffer"))?;
                let host_to_shader = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::HOST_WRITE)
                    .dst_access_mask(
                        vk::AccessFlags::SHADER_READ
                            | vk::AccessFlags::SHADER_WRITE
                            | vk::AccessFlags::UNIFORM_READ,
                    )];
                // Images leave PREINITIALIZED (which keeps the host's writes) for GENERAL,
                // where shaders and the host may both access a LINEAR image.
                let to_general: Vec<vk::ImageMemoryBarrier> = self
                    .images
                    .iter()
                    .filter(|i| !i.general)
                    .map(|i| {
                        vk::ImageMemoryBarrier::default()
                            .src_access_mask(vk::AccessFlags::HOST_WRITE)
                            .dst_access_mask(
                                vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                            )
                            .old_layout(vk::ImageLayout::PREINITIALIZED)
                            .new_layout(vk::ImageLayout::GENERAL)
                            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                            .image(i.image)
                            .subresource_range(vk::ImageSubresourceRange {
                                aspect_mask: vk::ImageAspectFlags::COLOR,
                                base_mip_level: 0,
                                level_count: vk::REMAINING_MIP_LEVELS,
                                base_array_layer: 0,
                                layer_count: 1,
                            })
                    })
                    .collect();
                dev.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::HOST,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::DependencyFlags::empty(),
                    &host_to_shader,
                    &[],
                    &to_general,
                );
                dev.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, p.pipeline);
                if !p.sets.is_empty() {
                    dev.cmd_bind_descriptor_sets(
                        cb,
                        vk::PipelineBindPoint::COMPUTE,
                        p.layout,
                        0,
                        &p.sets,
                        &p.dynamic_offsets,
                    );
                }
                if p.push_size > 0 {
                    let mut data = push.to_vec();
                    data.resize(p.push_size as usize, 0);
                    dev.cmd_push_constants(cb, p.layout, vk::ShaderStageFlags::COMPUTE, 0, &data);
                }
                dev.cmd_dispatch(cb, groups[0], groups[1], groups[2]);
                let to_host = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                    .dst_access_mask(vk::AccessFlags::HOST_READ)];
                dev.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::HOST,
                    vk::DependencyFlags::empty(),
                    &to_host,
                    &[],
                    &[],
                );
                dev.end_command_buffer(cb)
                    .map_err(vkerr("vkEndCommandBuffer"))?;
                let cbs = [cb];
                let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
                dev.reset_fences(&[self.fence])
                    .map_err(vkerr("vkResetFences"))?;
                dev.queue_submit(self.queue, &submit, self.fence)
                    .map_err(vkerr("vkQueueSubmit"))?;
                match dev.wait_for_fences(&[self.fence], true, timeout_ms as u64 * 1_000_000) {
                    Ok(()) => Ok(()),
                    Err(vk::Result::TIMEOUT) => Err(AmberError::FenceTimeout(timeout_ms)),
                    Err(e) => Err(AmberError::Vulkan("vkWaitForFences", e)),
                }
            })();
            if result.is_ok() {
                for i in &mut self.images {
                    i.general = true;
                }
            }
            if matches!(result, Err(AmberError::FenceTimeout(_))) {
                self.healthy = false;
            } else {
                dev.free_command_buffers(self.cmd_pool, &[cb]);
            }
            result
        }
    }

    /// Destroys the script's buffers and pipelines so the device can serve the next script
    /// with the same requirements. Returns false (keep nothing) after a fence timeout or
    /// when the device cannot be idled.
    pub fn reset(&mut self) -> bool {
        if !self.healthy {
            return false;
        }
        // SAFETY: the device is idle (checked) before its objects are destroyed; the
        // handles are ours and dropped from the lists right after.
        unsafe {
            if self.device.device_wait_idle().is_err() {
                return false;
            }
            for p in &self.pipes {
                self.destroy_pipe(p);
            }
            self.destroy_images_and_samplers();
            for b in &self.buffers {
                self.device.destroy_buffer(b.buffer, None);
                self.device.free_memory(b.memory, None);
            }
            if self
                .device
                .reset_command_pool(self.cmd_pool, vk::CommandPoolResetFlags::empty())
                .is_err()
            {
                return false;
            }
        }
        self.pipes.clear();
        self.buffers.clear();
        self.images.clear();
        self.samplers.clear();
        self.pipeline_time = Duration::ZERO;
        true
    }
}

impl Gpu {
    /// Destroys the images (with their views) and samplers; the device must be idle.
    unsafe fn destroy_images_and_samplers(&self) {
        for i in &self.images {
            for (_, v) in &i.views {
                self.device.destroy_image_view(*v, None);
            }
            self.device.destroy_image(i.image, None);
            self.device.free_memory(i.memory, None);
        }
        for s in &self.samplers {
            self.device.destroy_sampler(*s, None);
        }
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: destroys every object this Gpu created, children before parents, after the
        // device is idle.
        unsafe {
            let _ = self.device.device_wait_idle();
            for p in &self.pipes {
                self.destroy_pipe(p);
            }
            self.destroy_images_and_samplers();
            for b in &self.buffers {
                self.device.destroy_buffer(b.buffer, None);
                self.device.free_memory(b.memory, None);
            }
            self.device.destroy_fence(self.fence, None);
            self.device.destroy_command_pool(self.cmd_pool, None);
            crate::icd::destroy_device(&self.device);
            self.instance.destroy_instance(None);
        }
    }
}

/// Name and API version of the first physical device, for the header line.
pub fn describe_first_device(entry: &ash::Entry) -> Result<String, AmberError> {
    // SAFETY: a throw-away instance with no extensions, destroyed before returning.
    unsafe {
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_0);
        let ici = vk::InstanceCreateInfo::default().application_info(&app);
        let instance = entry
            .create_instance(&ici, None)
            .map_err(vkerr("vkCreateInstance"))?;
        let r = match instance.enumerate_physical_devices() {
            Ok(pds) if !pds.is_empty() => {
                let p = instance.get_physical_device_properties(pds[0]);
                let name = p
                    .device_name_as_c_str()
                    .map(|c| c.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Ok(format!(
                    "{name} (Vulkan {}.{}.{}, driver {:#x}, {} device(s))",
                    vk::api_version_major(p.api_version),
                    vk::api_version_minor(p.api_version),
                    vk::api_version_patch(p.api_version),
                    p.driver_version,
                    pds.len()
                ))
            }
            Ok(_) => Err(AmberError::NoDevice),
            Err(e) => Err(AmberError::Vulkan("vkEnumeratePhysicalDevices", e)),
        };
        instance.destroy_instance(None);
        r
    }
}
