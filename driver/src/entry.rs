//! The loader–ICD interface and the entry-point table: the one place that lists what Ferrite
//! implements. A name not in [`ENTRY_POINTS`] resolves to NULL.

use std::ffi::c_char;
use std::sync::atomic::{AtomicU32, Ordering};

use ash::vk;

use crate::{
    cmd, descriptor, device, ffi, group, image, instance, memory, physical, pipeline, private_data,
    query, queue, refuse, requirements, sampler, sync,
};

/// Which dispatch level an entry point belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Queried with a NULL instance (vkCreateInstance and friends).
    Global,
    /// Takes a VkInstance.
    Instance,
    /// Takes a VkPhysicalDevice (what vk_icdGetPhysicalDeviceProcAddr answers).
    PhysicalDevice,
    /// Takes a VkDevice, VkQueue or VkCommandBuffer (what vkGetDeviceProcAddr answers).
    Device,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct EntryInfo {
    pub name: &'static str,
    pub scope: Scope,
    /// The extension that provides it, or None for core 1.0.
    pub extension: Option<&'static str>,
    /// False for core 1.0 commands that exist only to refuse: they log "not implemented yet"
    /// and return VK_ERROR_FEATURE_NOT_PRESENT (or, for destroys, accept VK_NULL_HANDLE), so an
    /// application calling them through the loader gets an error instead of a NULL call.
    pub implemented: bool,
}

pub const KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2: &str = "VK_KHR_get_physical_device_properties2";
pub const KHR_GET_MEMORY_REQUIREMENTS_2: &str = "VK_KHR_get_memory_requirements2";
pub const KHR_BIND_MEMORY_2: &str = "VK_KHR_bind_memory2";
pub const KHR_STORAGE_BUFFER_STORAGE_CLASS: &str = "VK_KHR_storage_buffer_storage_class";
pub const KHR_16BIT_STORAGE: &str = "VK_KHR_16bit_storage";
pub const KHR_8BIT_STORAGE: &str = "VK_KHR_8bit_storage";
pub const KHR_SHADER_FLOAT16_INT8: &str = "VK_KHR_shader_float16_int8";
pub const KHR_TIMELINE_SEMAPHORE: &str = "VK_KHR_timeline_semaphore";
pub const KHR_SYNCHRONIZATION_2: &str = "VK_KHR_synchronization2";
pub const KHR_DEVICE_GROUP_CREATION: &str = "VK_KHR_device_group_creation";
pub const KHR_DEVICE_GROUP: &str = "VK_KHR_device_group";
pub const KHR_MAINTENANCE_1: &str = "VK_KHR_maintenance1";
pub const KHR_SAMPLER_MIRROR_CLAMP_TO_EDGE: &str = "VK_KHR_sampler_mirror_clamp_to_edge";
pub const KHR_PIPELINE_EXECUTABLE_PROPERTIES: &str = "VK_KHR_pipeline_executable_properties";
pub const KHR_SHADER_FLOAT_CONTROLS: &str = "VK_KHR_shader_float_controls";
pub const EXT_ROBUSTNESS_2: &str = "VK_EXT_robustness2";
pub const EXT_IMAGE_ROBUSTNESS: &str = "VK_EXT_image_robustness";
pub const EXT_INLINE_UNIFORM_BLOCK: &str = "VK_EXT_inline_uniform_block";
pub const EXT_DESCRIPTOR_INDEXING: &str = "VK_EXT_descriptor_indexing";
pub const EXT_HOST_QUERY_RESET: &str = "VK_EXT_host_query_reset";
pub const EXT_PRIVATE_DATA: &str = "VK_EXT_private_data";
pub const KHR_DRIVER_PROPERTIES: &str = "VK_KHR_driver_properties";
pub const KHR_DEDICATED_ALLOCATION: &str = "VK_KHR_dedicated_allocation";
pub const EXT_PIPELINE_CREATION_CACHE_CONTROL: &str = "VK_EXT_pipeline_creation_cache_control";
pub const EXT_PIPELINE_CREATION_FEEDBACK: &str = "VK_EXT_pipeline_creation_feedback";
pub const KHR_SHADER_SUBGROUP_EXTENDED_TYPES: &str = "VK_KHR_shader_subgroup_extended_types";
pub const EXT_SUBGROUP_SIZE_CONTROL: &str = "VK_EXT_subgroup_size_control";
pub const KHR_SHADER_SUBGROUP_UNIFORM_CONTROL_FLOW: &str =
    "VK_KHR_shader_subgroup_uniform_control_flow";

/// Pseudo-extension names for commands promoted to core: such a row's command is answered by
/// vkGetDeviceProcAddr only when the device's apiVersion is at least that version
/// ([`version_allows`]); the extension's own name (a `…KHR` row) stays with the extension.
pub const VERSION_1_1: &str = "VK_VERSION_1_1";
pub const VERSION_1_2: &str = "VK_VERSION_1_2";
pub const VERSION_1_3: &str = "VK_VERSION_1_3";

/// Whether `ext` is a core-version pseudo-extension that `api_version` includes.
pub fn version_allows(ext: &str, api_version: u32) -> bool {
    let needed = match ext {
        VERSION_1_1 => vk::API_VERSION_1_1,
        VERSION_1_2 => vk::API_VERSION_1_2,
        VERSION_1_3 => vk::API_VERSION_1_3,
        _ => return false,
    };
    api_version >= needed
}
pub const KHR_DESCRIPTOR_UPDATE_TEMPLATE: &str = "VK_KHR_descriptor_update_template";
pub const KHR_PUSH_DESCRIPTOR: &str = "VK_KHR_push_descriptor";
pub const KHR_MAINTENANCE_3: &str = "VK_KHR_maintenance3";
pub const KHR_MAINTENANCE_4: &str = "VK_KHR_maintenance4";
pub const KHR_ZERO_INITIALIZE_WORKGROUP_MEMORY: &str = "VK_KHR_zero_initialize_workgroup_memory";
pub const KHR_BUFFER_DEVICE_ADDRESS: &str = "VK_KHR_buffer_device_address";
pub const KHR_UNIFORM_BUFFER_STANDARD_LAYOUT: &str = "VK_KHR_uniform_buffer_standard_layout";
pub const EXT_SCALAR_BLOCK_LAYOUT: &str = "VK_EXT_scalar_block_layout";
pub const KHR_SHADER_ATOMIC_INT64: &str = "VK_KHR_shader_atomic_int64";
pub const KHR_SHADER_INTEGER_DOT_PRODUCT: &str = "VK_KHR_shader_integer_dot_product";
pub const KHR_VULKAN_MEMORY_MODEL: &str = "VK_KHR_vulkan_memory_model";

/// Instance extensions Ferrite implements, with their spec versions.
pub const INSTANCE_EXTENSIONS: &[(&str, u32)] = &[
    (KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2, 2),
    (KHR_DEVICE_GROUP_CREATION, 1),
];
/// Device extensions Ferrite implements, with their spec versions.
pub const DEVICE_EXTENSIONS: &[(&str, u32)] = &[
    (KHR_GET_MEMORY_REQUIREMENTS_2, 1),
    (KHR_BIND_MEMORY_2, 1),
    // 8/16-bit types (issue 7): the compiler's lower_narrow pass and byte scattered messages;
    // tested by tests/tests/narrow_sim.rs and the Amber corpus's int8/int16/float16 files.
    (KHR_STORAGE_BUFFER_STORAGE_CLASS, 1),
    (KHR_16BIT_STORAGE, 1),
    (KHR_8BIT_STORAGE, 1),
    (KHR_SHADER_FLOAT16_INT8, 1),
    // cr0 rounding/denormal modes at kernel start (docs/float-controls.md); tested by
    // tests/tests/float_controls_sim.rs and tests/tests/float_controls.rs.
    (KHR_SHADER_FLOAT_CONTROLS, 4),
    (KHR_TIMELINE_SEMAPHORE, 2),
    (KHR_SYNCHRONIZATION_2, 1),
    (KHR_DEVICE_GROUP, 4),
    (KHR_MAINTENANCE_1, 2),
    (KHR_PIPELINE_EXECUTABLE_PROPERTIES, 1),
    // robustBufferAccess2 only: the data port's dword-granular bounds checks against the
    // descriptor range (docs/kernel.md, "Robust buffer access"; tests/tests/robust_access.rs).
    (EXT_ROBUSTNESS_2, 1),
    // robustImageAccess: the surface state's bounds checks (docs/images.md, "Out-of-bounds
    // image access"; tests/amber/img_robust_*.amber).
    (EXT_IMAGE_ROBUSTNESS, 1),
    // Inline uniform blocks (driver/src/inline_uniform.rs; tests/tests/inline_uniform.rs).
    (EXT_INLINE_UNIFORM_BLOCK, 1),
    // Runtime arrays, NonUniform indices, update-after-bind, partially bound and variable
    // counts (docs/descriptors.md, "Descriptor indexing"; every feature vk.xml requires with
    // descriptorIndexing is on: features.rs); tests/tests/descriptor_indexing.rs,
    // update_after_bind.rs, descriptor_inline_update_after_bind.rs, tests/amber/desc_*.amber.
    (EXT_DESCRIPTOR_INDEXING, 2),
    // vkResetQueryPool from the host (query.rs); tests/tests/core_commands.rs.
    (EXT_HOST_QUERY_RESET, 1),
    // Private data slots (private_data.rs); tests/tests/core_commands.rs.
    (EXT_PRIVATE_DATA, 1),
    // VkPhysicalDeviceDriverProperties (physical.rs); tests/tests/core_commands.rs.
    (KHR_DRIVER_PROPERTIES, 1),
    // Pipeline-creation flags and feedback (pipeline.rs); tests/tests/core_commands.rs.
    (EXT_PIPELINE_CREATION_CACHE_CONTROL, 3),
    (EXT_PIPELINE_CREATION_FEEDBACK, 1),
    // VkMemoryDedicatedRequirements answered (never preferred); a VkMemoryDedicatedAllocateInfo
    // is a hint the allocator may ignore. tests/tests/core_commands.rs.
    (KHR_DEDICATED_ALLOCATION, 3),
    // Descriptor writes through templates and push descriptor sets (driver/src/descriptor.rs,
    // docs/descriptors.md); tested by tests/tests/descriptor_updates.rs.
    (KHR_DESCRIPTOR_UPDATE_TEMPLATE, 1),
    (KHR_PUSH_DESCRIPTOR, 2),
    (KHR_MAINTENANCE_3, 1),
    // Create-info memory requirements, maxBufferSize, LocalSizeId (requirements.rs,
    // docs/api-version.md); tests/tests/maintenance4.rs.
    (KHR_MAINTENANCE_4, 2),
    // Null-initialized Workgroup variables zeroed by a kernel prologue
    // (compiler/src/frontend/shared_init.rs); tests/tests/zero_init_workgroup.rs.
    (KHR_ZERO_INITIALIZE_WORKGROUP_MEMORY, 1),
    // Subgroup operations on 8/16-bit and fp16 values (docs/subgroups.md);
    // tests/tests/subgroup_types_sim.rs.
    (KHR_SHADER_SUBGROUP_EXTENDED_TYPES, 1),
    // Required subgroup sizes 8/16/32 and full subgroups (pipeline::subgroup_width);
    // tests/tests/subgroup_size_control.rs.
    (EXT_SUBGROUP_SIZE_CONTROL, 2),
    // MIRROR_CLAMP_TO_EDGE is the sampler's TCM_MIRROR_ONCE (sampler.rs); the
    // img_sample_2d_*_mirrored_clamp_to_edge Amber files compare it with lavapipe.
    (KHR_SAMPLER_MIRROR_CLAMP_TO_EDGE, 3),
    // Structured control flow reconverges at every merge (features.rs); tests/amber/cts.
    (KHR_SHADER_SUBGROUP_UNIFORM_CONTROL_FLOW, 1),
    // PhysicalStorageBuffer pointers on A64 messages (docs/descriptors.md, "Buffer device
    // address"); tests/tests/buffer_address.rs.
    (KHR_BUFFER_DEVICE_ADDRESS, 1),
    // Layouts from the SPIR-V decorations (docs/descriptors.md, "Block layouts");
    // tests/tests/block_layout.rs.
    (KHR_UNIFORM_BUFFER_STANDARD_LAYOUT, 1),
    (EXT_SCALAR_BLOCK_LAYOUT, 1),
    // 64-bit buffer atomics as A64 messages (docs/descriptors.md); tests/tests/buffer_address.rs.
    (KHR_SHADER_ATOMIC_INT64, 1),
    // OpSDot/OpUDot/OpSUDot and the AccSat forms as multiply-adds (compiler/src/frontend/dot.rs;
    // no "accelerated" property: Gen9 has no DP4A); tests/tests/integer_dot_sim.rs.
    (KHR_SHADER_INTEGER_DOT_PRODUCT, 1),
    // Availability, visibility and acquire/release as data-port fences (docs/memory-model.md);
    // tests/tests/memory_model_sim.rs.
    (KHR_VULKAN_MEMORY_MODEL, 3),
];

macro_rules! entry_points {
    (@implemented) => { true };
    (@implemented refuse) => { false };
    ($( $scope:ident $ext:expr $(, $status:ident)? => $name:literal : $f:path ;)*) => {
        /// Every entry point Ferrite answers (see `EntryInfo::implemented`).
        pub const ENTRY_POINTS: &[EntryInfo] = &[
            $( EntryInfo {
                name: $name,
                scope: Scope::$scope,
                extension: $ext,
                implemented: entry_points!(@implemented $($status)?),
            }, )*
        ];

        /// The function behind each name as the table writes it (`module::function`), for the
        /// FFI audit test.
        #[cfg(test)]
        const ENTRY_FUNCTIONS: &[(&str, &str)] = &[ $( ($name, stringify!($f)), )* ];

        fn address(name: &str) -> *const () {
            match name {
                $( $name => $f as *const (), )*
                _ => std::ptr::null(),
            }
        }
    };
}

const CORE: Option<&str> = None;
const PDP2: Option<&str> = Some(KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2);
const GMR2: Option<&str> = Some(KHR_GET_MEMORY_REQUIREMENTS_2);
const BM2: Option<&str> = Some(KHR_BIND_MEMORY_2);
const TLS: Option<&str> = Some(KHR_TIMELINE_SEMAPHORE);
const SYNC2: Option<&str> = Some(KHR_SYNCHRONIZATION_2);
const DGC: Option<&str> = Some(KHR_DEVICE_GROUP_CREATION);
const DG: Option<&str> = Some(KHR_DEVICE_GROUP);
const DUT: Option<&str> = Some(KHR_DESCRIPTOR_UPDATE_TEMPLATE);
const PUSH: Option<&str> = Some(KHR_PUSH_DESCRIPTOR);
const M3: Option<&str> = Some(KHR_MAINTENANCE_3);
const M1: Option<&str> = Some(KHR_MAINTENANCE_1);
const M4: Option<&str> = Some(KHR_MAINTENANCE_4);
const PEP: Option<&str> = Some(KHR_PIPELINE_EXECUTABLE_PROPERTIES);
const HQR: Option<&str> = Some(EXT_HOST_QUERY_RESET);
const PD: Option<&str> = Some(EXT_PRIVATE_DATA);
const BDA: Option<&str> = Some(KHR_BUFFER_DEVICE_ADDRESS);
const V11: Option<&str> = Some(VERSION_1_1);
const V12: Option<&str> = Some(VERSION_1_2);
const V13: Option<&str> = Some(VERSION_1_3);

entry_points! {
    Global CORE => "vk_icdNegotiateLoaderICDInterfaceVersion": vk_icdNegotiateLoaderICDInterfaceVersion;
    Global CORE => "vk_icdGetPhysicalDeviceProcAddr": vk_icdGetPhysicalDeviceProcAddr;
    Global CORE => "vkGetInstanceProcAddr": vk_icdGetInstanceProcAddr;
    Global CORE => "vkCreateInstance": instance::create_instance;
    Global CORE => "vkEnumerateInstanceExtensionProperties": instance::enumerate_instance_extension_properties;
    Global CORE => "vkEnumerateInstanceLayerProperties": instance::enumerate_instance_layer_properties;
    Global CORE => "vkEnumerateInstanceVersion": instance::enumerate_instance_version;
    Instance CORE => "vkDestroyInstance": instance::destroy_instance;
    Instance CORE => "vkEnumeratePhysicalDevices": instance::enumerate_physical_devices;
    PhysicalDevice CORE => "vkGetPhysicalDeviceProperties": physical::get_properties;
    PhysicalDevice CORE => "vkGetPhysicalDeviceFeatures": physical::get_features;
    PhysicalDevice CORE => "vkGetPhysicalDeviceQueueFamilyProperties": physical::get_queue_family_properties;
    PhysicalDevice CORE => "vkGetPhysicalDeviceMemoryProperties": physical::get_memory_properties;
    PhysicalDevice CORE => "vkGetPhysicalDeviceFormatProperties": physical::get_format_properties;
    PhysicalDevice CORE => "vkGetPhysicalDeviceImageFormatProperties": physical::get_image_format_properties;
    PhysicalDevice CORE => "vkGetPhysicalDeviceSparseImageFormatProperties": physical::get_sparse_image_format_properties;
    PhysicalDevice CORE => "vkEnumerateDeviceExtensionProperties": physical::enumerate_device_extension_properties;
    PhysicalDevice CORE => "vkEnumerateDeviceLayerProperties": physical::enumerate_device_layer_properties;
    PhysicalDevice CORE => "vkCreateDevice": device::create_device;
    PhysicalDevice PDP2 => "vkGetPhysicalDeviceProperties2KHR": physical::get_properties2;
    PhysicalDevice PDP2 => "vkGetPhysicalDeviceFeatures2KHR": physical::get_features2;
    PhysicalDevice PDP2 => "vkGetPhysicalDeviceQueueFamilyProperties2KHR": physical::get_queue_family_properties2;
    PhysicalDevice PDP2 => "vkGetPhysicalDeviceMemoryProperties2KHR": physical::get_memory_properties2;
    PhysicalDevice PDP2 => "vkGetPhysicalDeviceFormatProperties2KHR": physical::get_format_properties2;
    PhysicalDevice PDP2 => "vkGetPhysicalDeviceImageFormatProperties2KHR": physical::get_image_format_properties2;
    PhysicalDevice PDP2 => "vkGetPhysicalDeviceSparseImageFormatProperties2KHR": physical::get_sparse_image_format_properties2;
    Device CORE => "vkGetDeviceProcAddr": get_device_proc_addr;
    Device CORE => "vkDestroyDevice": device::destroy_device;
    Device CORE => "vkDeviceWaitIdle": device::device_wait_idle;
    Device CORE => "vkGetDeviceQueue": queue::get_device_queue;
    Device CORE => "vkQueueSubmit": queue::queue_submit;
    Device CORE => "vkQueueWaitIdle": queue::queue_wait_idle;
    Device CORE => "vkAllocateMemory": memory::allocate_memory;
    Device CORE => "vkFreeMemory": memory::free_memory;
    Device CORE => "vkMapMemory": memory::map_memory;
    Device CORE => "vkUnmapMemory": memory::unmap_memory;
    Device CORE => "vkFlushMappedMemoryRanges": memory::flush_mapped_memory_ranges;
    Device CORE => "vkInvalidateMappedMemoryRanges": memory::invalidate_mapped_memory_ranges;
    Device CORE => "vkGetDeviceMemoryCommitment": memory::get_device_memory_commitment;
    Device CORE => "vkCreateBuffer": memory::create_buffer;
    Device CORE => "vkDestroyBuffer": memory::destroy_buffer;
    Device CORE => "vkGetBufferMemoryRequirements": memory::get_buffer_memory_requirements;
    Device CORE => "vkBindBufferMemory": memory::bind_buffer_memory;
    Device GMR2 => "vkGetBufferMemoryRequirements2KHR": memory::get_buffer_memory_requirements2;
    Device BM2 => "vkBindBufferMemory2KHR": memory::bind_buffer_memory2;
    Device CORE => "vkCreateFence": sync::create_fence;
    Device CORE => "vkDestroyFence": sync::destroy_fence;
    Device CORE => "vkResetFences": sync::reset_fences;
    Device CORE => "vkGetFenceStatus": sync::get_fence_status;
    Device CORE => "vkWaitForFences": sync::wait_for_fences;
    Device CORE => "vkCreateSemaphore": sync::create_semaphore;
    Device CORE => "vkDestroySemaphore": sync::destroy_semaphore;
    Device CORE => "vkCreateEvent": query::create_event;
    Device CORE => "vkDestroyEvent": query::destroy_event;
    Device CORE => "vkGetEventStatus": query::get_event_status;
    Device CORE => "vkSetEvent": query::set_event;
    Device CORE => "vkResetEvent": query::reset_event;
    Device CORE => "vkCreateQueryPool": query::create_query_pool;
    Device CORE => "vkDestroyQueryPool": query::destroy_query_pool;
    Device CORE => "vkGetQueryPoolResults": query::get_query_pool_results;
    Device CORE => "vkCreateShaderModule": pipeline::create_shader_module;
    Device CORE => "vkDestroyShaderModule": pipeline::destroy_shader_module;
    Device CORE => "vkCreatePipelineCache": pipeline::create_pipeline_cache;
    Device CORE => "vkDestroyPipelineCache": pipeline::destroy_pipeline_cache;
    Device CORE => "vkGetPipelineCacheData": pipeline::get_pipeline_cache_data;
    Device CORE => "vkMergePipelineCaches": pipeline::merge_pipeline_caches;
    Device CORE => "vkCreatePipelineLayout": pipeline::create_pipeline_layout;
    Device CORE => "vkDestroyPipelineLayout": pipeline::destroy_pipeline_layout;
    Device CORE => "vkCreateComputePipelines": pipeline::create_compute_pipelines;
    Device CORE => "vkDestroyPipeline": pipeline::destroy_pipeline;
    Device PEP => "vkGetPipelineExecutablePropertiesKHR": pipeline::get_pipeline_executable_properties;
    Device PEP => "vkGetPipelineExecutableStatisticsKHR": pipeline::get_pipeline_executable_statistics;
    Device PEP => "vkGetPipelineExecutableInternalRepresentationsKHR": pipeline::get_pipeline_executable_internal_representations;
    Device CORE => "vkCreateDescriptorSetLayout": descriptor::create_descriptor_set_layout;
    Device CORE => "vkDestroyDescriptorSetLayout": descriptor::destroy_descriptor_set_layout;
    Device CORE => "vkCreateDescriptorPool": descriptor::create_descriptor_pool;
    Device CORE => "vkDestroyDescriptorPool": descriptor::destroy_descriptor_pool;
    Device CORE => "vkResetDescriptorPool": descriptor::reset_descriptor_pool;
    Device CORE => "vkAllocateDescriptorSets": descriptor::allocate_descriptor_sets;
    Device CORE => "vkFreeDescriptorSets": descriptor::free_descriptor_sets;
    Device CORE => "vkUpdateDescriptorSets": descriptor::update_descriptor_sets;
    Device CORE => "vkCreateCommandPool": cmd::create_command_pool;
    Device CORE => "vkDestroyCommandPool": cmd::destroy_command_pool;
    Device CORE => "vkResetCommandPool": cmd::reset_command_pool;
    Device CORE => "vkAllocateCommandBuffers": cmd::allocate_command_buffers;
    Device CORE => "vkFreeCommandBuffers": cmd::free_command_buffers;
    Device CORE => "vkBeginCommandBuffer": cmd::begin_command_buffer;
    Device CORE => "vkEndCommandBuffer": cmd::end_command_buffer;
    Device CORE => "vkResetCommandBuffer": cmd::reset_command_buffer;
    Device CORE => "vkCmdBindPipeline": cmd::cmd_bind_pipeline;
    Device CORE => "vkCmdBindDescriptorSets": cmd::cmd_bind_descriptor_sets;
    Device CORE => "vkCmdPushConstants": cmd::cmd_push_constants;
    Device CORE => "vkCmdDispatch": cmd::cmd_dispatch;
    Device CORE => "vkCmdDispatchIndirect": cmd::cmd_dispatch_indirect;
    Device CORE => "vkCmdPipelineBarrier": cmd::cmd_pipeline_barrier;
    Device CORE => "vkCmdFillBuffer": cmd::cmd_fill_buffer;
    Device CORE => "vkCmdUpdateBuffer": cmd::cmd_update_buffer;
    Device CORE => "vkCmdCopyBuffer": cmd::cmd_copy_buffer;
    Device CORE => "vkCmdCopyBufferToImage": cmd::cmd_copy_buffer_to_image;
    Device CORE => "vkCmdCopyImageToBuffer": cmd::cmd_copy_image_to_buffer;
    Device CORE => "vkCmdCopyImage": cmd::cmd_copy_image;
    Device CORE => "vkCmdClearColorImage": cmd::cmd_clear_color_image;
    Device CORE => "vkCmdBlitImage": cmd::cmd_blit_image;
    Device CORE => "vkCmdExecuteCommands": cmd::cmd_execute_commands;
    Device CORE => "vkCmdWriteTimestamp": cmd::cmd_write_timestamp;
    Device CORE => "vkCmdResetQueryPool": cmd::cmd_reset_query_pool;
    Device CORE => "vkCmdSetEvent": cmd::cmd_set_event;
    Device CORE => "vkCmdResetEvent": cmd::cmd_reset_event;
    Device CORE => "vkCmdWaitEvents": cmd::cmd_wait_events;
    Instance DGC => "vkEnumeratePhysicalDeviceGroupsKHR": group::enumerate_physical_device_groups;
    Device TLS => "vkGetSemaphoreCounterValueKHR": sync::get_semaphore_counter_value;
    Device DUT => "vkCreateDescriptorUpdateTemplateKHR": descriptor::create_descriptor_update_template;
    Device DUT => "vkDestroyDescriptorUpdateTemplateKHR": descriptor::destroy_descriptor_update_template;
    Device DUT => "vkUpdateDescriptorSetWithTemplateKHR": descriptor::update_descriptor_set_with_template;
    Device PUSH => "vkCmdPushDescriptorSetKHR": cmd::cmd_push_descriptor_set;
    Device PUSH => "vkCmdPushDescriptorSetWithTemplateKHR": cmd::cmd_push_descriptor_set_with_template;
    Device M3 => "vkGetDescriptorSetLayoutSupportKHR": descriptor::get_descriptor_set_layout_support;
    Device TLS => "vkWaitSemaphoresKHR": sync::wait_semaphores;
    Device TLS => "vkSignalSemaphoreKHR": sync::signal_semaphore;
    Device SYNC2 => "vkQueueSubmit2KHR": queue::queue_submit2;
    Device SYNC2 => "vkCmdPipelineBarrier2KHR": cmd::cmd_pipeline_barrier2;
    Device SYNC2 => "vkCmdWriteTimestamp2KHR": cmd::cmd_write_timestamp2;
    Device SYNC2 => "vkCmdSetEvent2KHR": cmd::cmd_set_event2;
    Device SYNC2 => "vkCmdResetEvent2KHR": cmd::cmd_reset_event2;
    Device SYNC2 => "vkCmdWaitEvents2KHR": cmd::cmd_wait_events2;
    Device DG => "vkGetDeviceGroupPeerMemoryFeaturesKHR": group::get_device_group_peer_memory_features;
    Device DG => "vkCmdSetDeviceMaskKHR": group::cmd_set_device_mask;
    Device DG => "vkCmdDispatchBaseKHR": cmd::cmd_dispatch_base;
    Device M1 => "vkTrimCommandPoolKHR": cmd::trim_command_pool;
    Device HQR => "vkResetQueryPoolEXT": query::reset_query_pool;
    Device PD => "vkCreatePrivateDataSlotEXT": private_data::create_private_data_slot;
    Device PD => "vkDestroyPrivateDataSlotEXT": private_data::destroy_private_data_slot;
    Device PD => "vkSetPrivateDataEXT": private_data::set_private_data;
    Device PD => "vkGetPrivateDataEXT": private_data::get_private_data;
    Device BDA => "vkGetBufferDeviceAddressKHR": memory::get_buffer_device_address;
    Device BDA => "vkGetBufferOpaqueCaptureAddressKHR": memory::get_buffer_opaque_capture_address;
    Device BDA => "vkGetDeviceMemoryOpaqueCaptureAddressKHR": memory::get_device_memory_opaque_capture_address;
    // Core 1.1-1.3 names (answered by vkGetDeviceProcAddr from that apiVersion on).
    Instance V11 => "vkEnumeratePhysicalDeviceGroups": group::enumerate_physical_device_groups;
    PhysicalDevice V11 => "vkGetPhysicalDeviceProperties2": physical::get_properties2;
    PhysicalDevice V11 => "vkGetPhysicalDeviceFeatures2": physical::get_features2;
    PhysicalDevice V11 => "vkGetPhysicalDeviceQueueFamilyProperties2": physical::get_queue_family_properties2;
    PhysicalDevice V11 => "vkGetPhysicalDeviceMemoryProperties2": physical::get_memory_properties2;
    PhysicalDevice V11 => "vkGetPhysicalDeviceFormatProperties2": physical::get_format_properties2;
    PhysicalDevice V11 => "vkGetPhysicalDeviceImageFormatProperties2": physical::get_image_format_properties2;
    PhysicalDevice V11 => "vkGetPhysicalDeviceSparseImageFormatProperties2": physical::get_sparse_image_format_properties2;
    PhysicalDevice V11 => "vkGetPhysicalDeviceExternalBufferProperties": physical::get_external_buffer_properties;
    PhysicalDevice V11 => "vkGetPhysicalDeviceExternalFenceProperties": physical::get_external_fence_properties;
    PhysicalDevice V11 => "vkGetPhysicalDeviceExternalSemaphoreProperties": physical::get_external_semaphore_properties;
    PhysicalDevice V13 => "vkGetPhysicalDeviceToolProperties": physical::get_tool_properties;
    Device V11 => "vkGetBufferMemoryRequirements2": memory::get_buffer_memory_requirements2;
    Device V11 => "vkBindBufferMemory2": memory::bind_buffer_memory2;
    Device V11 => "vkGetDeviceGroupPeerMemoryFeatures": group::get_device_group_peer_memory_features;
    Device V11 => "vkCmdSetDeviceMask": group::cmd_set_device_mask;
    Device V11 => "vkCmdDispatchBase": cmd::cmd_dispatch_base;
    Device V11 => "vkTrimCommandPool": cmd::trim_command_pool;
    Device V11 => "vkGetDeviceQueue2": queue::get_device_queue2;
    Device V11 => "vkCreateDescriptorUpdateTemplate": descriptor::create_descriptor_update_template;
    Device V11 => "vkDestroyDescriptorUpdateTemplate": descriptor::destroy_descriptor_update_template;
    Device V11 => "vkUpdateDescriptorSetWithTemplate": descriptor::update_descriptor_set_with_template;
    Device V11 => "vkGetDescriptorSetLayoutSupport": descriptor::get_descriptor_set_layout_support;
    Device V12 => "vkResetQueryPool": query::reset_query_pool;
    Device V12 => "vkGetSemaphoreCounterValue": sync::get_semaphore_counter_value;
    Device V12 => "vkWaitSemaphores": sync::wait_semaphores;
    Device V12 => "vkSignalSemaphore": sync::signal_semaphore;
    Device V12 => "vkGetBufferDeviceAddress": memory::get_buffer_device_address;
    Device V12 => "vkGetBufferOpaqueCaptureAddress": memory::get_buffer_opaque_capture_address;
    Device V12 => "vkGetDeviceMemoryOpaqueCaptureAddress": memory::get_device_memory_opaque_capture_address;
    Device V13 => "vkCreatePrivateDataSlot": private_data::create_private_data_slot;
    Device V13 => "vkDestroyPrivateDataSlot": private_data::destroy_private_data_slot;
    Device V13 => "vkSetPrivateData": private_data::set_private_data;
    Device V13 => "vkGetPrivateData": private_data::get_private_data;
    Device V13 => "vkQueueSubmit2": queue::queue_submit2;
    Device V13 => "vkCmdPipelineBarrier2": cmd::cmd_pipeline_barrier2;
    Device V13 => "vkCmdWriteTimestamp2": cmd::cmd_write_timestamp2;
    Device V13 => "vkCmdSetEvent2": cmd::cmd_set_event2;
    Device V13 => "vkCmdResetEvent2": cmd::cmd_reset_event2;
    Device V13 => "vkCmdWaitEvents2": cmd::cmd_wait_events2;
    Device V13 => "vkCmdCopyBuffer2": cmd::cmd_copy_buffer2;
    Device V13 => "vkCmdCopyBufferToImage2": cmd::cmd_copy_buffer_to_image2;
    Device V13 => "vkCmdCopyImageToBuffer2": cmd::cmd_copy_image_to_buffer2;
    Device V13 => "vkCmdCopyImage2": cmd::cmd_copy_image2;
    Device M4 => "vkGetDeviceBufferMemoryRequirementsKHR": requirements::get_device_buffer_memory_requirements;
    Device M4 => "vkGetDeviceImageMemoryRequirementsKHR": requirements::get_device_image_memory_requirements;
    Device M4 => "vkGetDeviceImageSparseMemoryRequirementsKHR": requirements::get_device_image_sparse_memory_requirements;
    Device V13 => "vkGetDeviceBufferMemoryRequirements": requirements::get_device_buffer_memory_requirements;
    Device V13 => "vkGetDeviceImageMemoryRequirements": requirements::get_device_image_memory_requirements;
    Device V13 => "vkGetDeviceImageSparseMemoryRequirements": requirements::get_device_image_sparse_memory_requirements;
    Device V13 => "vkCmdBlitImage2": cmd::cmd_blit_image2;
    Device V11 => "vkBindImageMemory2": image::bind_image_memory2;
    Device V11 => "vkGetImageMemoryRequirements2": image::get_image_memory_requirements2;
    Device V11 => "vkGetImageSparseMemoryRequirements2": refuse::get_image_sparse_memory_requirements2;
    // Core 1.1 commands on objects that cannot exist (Y'CbCr conversions: samplerYcbcrConversion
    // is false): they refuse (see EntryInfo).
    Device V11, refuse => "vkCreateSamplerYcbcrConversion": refuse::create_sampler_ycbcr_conversion;
    Device V11, refuse => "vkDestroySamplerYcbcrConversion": refuse::destroy_sampler_ycbcr_conversion;
    // Core 1.0 commands not implemented yet: they refuse with an error (see EntryInfo).
    Device CORE => "vkCreateBufferView": image::create_buffer_view;
    Device CORE => "vkCreateImage": image::create_image;
    Device CORE => "vkCreateImageView": image::create_image_view;
    Device CORE => "vkGetImageMemoryRequirements": image::get_image_memory_requirements;
    Device GMR2 => "vkGetImageMemoryRequirements2KHR": image::get_image_memory_requirements2;
    Device CORE => "vkGetImageSparseMemoryRequirements": image::get_image_sparse_memory_requirements;
    Device CORE => "vkBindImageMemory": image::bind_image_memory;
    Device BM2 => "vkBindImageMemory2KHR": image::bind_image_memory2;
    Device CORE => "vkGetImageSubresourceLayout": image::get_image_subresource_layout;
    Device CORE => "vkCreateSampler": sampler::create_sampler;
    Device CORE, refuse => "vkCreateFramebuffer": refuse::create_framebuffer;
    Device CORE, refuse => "vkCreateRenderPass": refuse::create_render_pass;
    Device CORE, refuse => "vkCreateGraphicsPipelines": refuse::create_graphics_pipelines;
    Device CORE, refuse => "vkQueueBindSparse": refuse::queue_bind_sparse;
    Device CORE => "vkDestroyBufferView": image::destroy_buffer_view;
    Device CORE => "vkDestroyImage": image::destroy_image;
    Device CORE => "vkDestroyImageView": image::destroy_image_view;
    Device CORE => "vkDestroySampler": sampler::destroy_sampler;
    Device CORE, refuse => "vkDestroyFramebuffer": refuse::destroy_framebuffer;
    Device CORE, refuse => "vkDestroyRenderPass": refuse::destroy_render_pass;
}

/// Looks a name up in the table for the given set of allowed scopes.
pub fn lookup(name: &str, allowed: impl Fn(&EntryInfo) -> bool) -> *const () {
    match ENTRY_POINTS.iter().find(|e| e.name == name) {
        Some(e) if allowed(e) => address(name),
        _ => std::ptr::null(),
    }
}

/// The highest loader interface version Ferrite speaks. 6 adds vk_icdEnumerateAdapterPhysicalDevices
/// (Windows only), 7 only relaxes how the vk_icd* functions are found; 5 is the last that changes
/// behaviour on Linux and is what we implement.
pub const MAX_LOADER_INTERFACE_VERSION: u32 = 5;
/// Versions below 2 have no negotiation; interface version 0 is incompatible with later ones.
pub const MIN_LOADER_INTERFACE_VERSION: u32 = 2;

/// Interface version agreed with the loader; 1 until negotiated (a loader that never
/// negotiates speaks version 1).
static NEGOTIATED: AtomicU32 = AtomicU32::new(1);

pub fn negotiated_interface_version() -> u32 {
    NEGOTIATED.load(Ordering::Relaxed)
}

fn read_name<'a>(p_name: *const c_char) -> crate::error::Result<&'a str> {
    // SAFETY: the loader passes a NUL-terminated function name (or null, rejected by cstr).
    unsafe { ffi::cstr(p_name, "pName") }
}

/// # Safety
/// Called by the Vulkan loader: `p_supported_version` points to a valid u32.
#[no_mangle]
pub unsafe extern "system" fn vk_icdNegotiateLoaderICDInterfaceVersion(
    p_supported_version: *mut u32,
) -> vk::Result {
    ffi::result("vk_icdNegotiateLoaderICDInterfaceVersion", || {
        // SAFETY: the loader passes a valid pointer (null is rejected by read).
        let loader_max =
            *unsafe { ffi::read(p_supported_version.cast_const(), "pSupportedVersion") }?;
        if loader_max < MIN_LOADER_INTERFACE_VERSION {
            return Ok(vk::Result::ERROR_INCOMPATIBLE_DRIVER);
        }
        let version = loader_max.min(MAX_LOADER_INTERFACE_VERSION);
        NEGOTIATED.store(version, Ordering::Relaxed);
        log::debug!("loader interface version {version} (loader offers up to {loader_max})");
        // SAFETY: same pointer as above, valid for writes.
        unsafe { ffi::write(p_supported_version, version, "pSupportedVersion") }?;
        Ok(vk::Result::SUCCESS)
    })
}

/// # Safety
/// Called by the Vulkan loader with a valid (or null) instance and a NUL-terminated name.
#[no_mangle]
pub unsafe extern "system" fn vk_icdGetInstanceProcAddr(
    instance: vk::Instance,
    p_name: *const c_char,
) -> *const () {
    ffi::run(
        "vkGetInstanceProcAddr",
        |_| std::ptr::null(),
        || {
            let name = read_name(p_name)?;
            if instance == vk::Instance::null() {
                return Ok(lookup(name, |e| e.scope == Scope::Global));
            }
            // SAFETY: the loader passes an instance this driver created.
            let inst = unsafe { instance::Instance::from_handle(instance) }?;
            // Instance-extension functions only when enabled; device-extension functions are
            // answered when available (the spec's vkGetInstanceProcAddr table).
            let is_instance_ext = |ext: &str| INSTANCE_EXTENSIONS.iter().any(|(n, _)| *n == ext);
            Ok(lookup(name, |e| {
                e.extension
                    .is_none_or(|ext| !is_instance_ext(ext) || inst.extension_enabled(ext))
            }))
        },
    )
}

/// Answers only physical-device-level functions, so the loader can route extension functions
/// it does not know itself.
///
/// # Safety
/// Called by the Vulkan loader with a NUL-terminated name.
#[no_mangle]
pub unsafe extern "system" fn vk_icdGetPhysicalDeviceProcAddr(
    _instance: vk::Instance,
    p_name: *const c_char,
) -> *const () {
    ffi::run(
        "vk_icdGetPhysicalDeviceProcAddr",
        |_| std::ptr::null(),
        || {
            Ok(lookup(read_name(p_name)?, |e| {
                e.scope == Scope::PhysicalDevice
            }))
        },
    )
}

/// What vkGetDeviceProcAddr answers: device-level rows, an extension's only when the device
/// enabled it, a newer core version's only when the device's apiVersion includes it.
fn device_visible(e: &EntryInfo, enabled: impl Fn(&str) -> bool, api_version: u32) -> bool {
    e.scope == Scope::Device
        && e.extension
            .is_none_or(|ext| enabled(ext) || version_allows(ext, api_version))
}

/// Device functions only; an extension's functions only if the device enabled it.
unsafe extern "system" fn get_device_proc_addr(
    device: vk::Device,
    p_name: *const c_char,
) -> *const () {
    ffi::run(
        "vkGetDeviceProcAddr",
        |_| std::ptr::null(),
        || {
            let name = read_name(p_name)?;
            // SAFETY: the application passes a device created by vkCreateDevice.
            let dev = unsafe { device::Device::from_handle(device) }?;
            let version = crate::api_version::device_version(dev.core.adapter.info);
            Ok(lookup(name, |e| {
                device_visible(e, |ext| dev.extension_enabled(ext), version)
            }))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_names_of_newer_versions_follow_the_device_version() {
        let row = |name: &str| ENTRY_POINTS.iter().find(|e| e.name == name).unwrap();
        let none = |_: &str| false;
        for (name, since) in [
            ("vkGetDeviceQueue2", vk::API_VERSION_1_1),
            ("vkResetQueryPool", vk::API_VERSION_1_2),
            ("vkCreatePrivateDataSlot", vk::API_VERSION_1_3),
            ("vkCmdCopyBuffer2", vk::API_VERSION_1_3),
        ] {
            assert!(
                !device_visible(row(name), none, vk::API_VERSION_1_0),
                "{name}"
            );
            assert!(device_visible(row(name), none, since), "{name}");
        }
        // An extension's own name needs the extension, whatever the version.
        let ext = row("vkResetQueryPoolEXT");
        assert!(!device_visible(ext, none, vk::API_VERSION_1_3));
        assert!(device_visible(
            ext,
            |e| e == EXT_HOST_QUERY_RESET,
            vk::API_VERSION_1_0
        ));
        assert!(device_visible(
            row("vkCmdDispatch"),
            none,
            vk::API_VERSION_1_0
        ));
    }

    #[test]
    fn every_listed_entry_point_resolves_and_unknown_names_do_not() {
        for e in ENTRY_POINTS {
            assert!(!address(e.name).is_null(), "{} has no address", e.name);
        }
        assert!(address("vkCmdDraw").is_null());
        assert!(address("vkNotAFunction").is_null());
    }

    #[test]
    fn names_are_unique_and_extension_functions_name_a_listed_extension() {
        for (i, a) in ENTRY_POINTS.iter().enumerate() {
            assert!(
                ENTRY_POINTS[i + 1..].iter().all(|b| b.name != a.name),
                "duplicate {}",
                a.name
            );
            if let Some(ext) = a.extension.filter(|e| !e.starts_with("VK_VERSION_")) {
                let known = INSTANCE_EXTENSIONS
                    .iter()
                    .chain(DEVICE_EXTENSIONS)
                    .any(|(n, _)| *n == ext);
                assert!(known, "{} names unadvertised extension {ext}", a.name);
            }
        }
    }

    /// The driver's sources: file stem -> text.
    fn driver_sources() -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut out = Vec::new();
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
                    out.push((stem, std::fs::read_to_string(&p).unwrap()));
                }
            }
        }
        out
    }

    /// The index of the bracket that closes the one at `open` (`{}` or `()`), string literals
    /// and line comments skipped.
    fn closing(s: &str, open: usize) -> usize {
        let b = s.as_bytes();
        let (o, c) = (b[open], if b[open] == b'{' { b'}' } else { b')' });
        let (mut depth, mut i) = (0usize, open);
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i += 1;
                    while b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'/' if b[i + 1] == b'/' => {
                    while b[i] != b'\n' {
                        i += 1;
                    }
                }
                // Character literals ('x', '\n'); a lifetime ('a) has no closing quote.
                b'\'' if b[i + 1] == b'\\' => i += 3,
                b'\'' if b[i + 2] == b'\'' => i += 2,
                x if x == o => depth += 1,
                x if x == c => {
                    depth -= 1;
                    if depth == 0 {
                        return i;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        panic!("unbalanced bracket at {open}");
    }

    /// A function of the driver's source.
    struct SrcFn {
        stem: String,
        /// `$f` for functions written inside a `macro_rules!` body.
        name: String,
        is_extern: bool,
        /// The body without its braces, comment lines removed.
        body: String,
    }

    fn driver_functions() -> Vec<SrcFn> {
        let mut out = Vec::new();
        for (stem, text) in driver_sources() {
            let mut at = 0;
            while let Some(k) = text[at..].find("fn ") {
                let start = at + k;
                at = start + 3;
                let prev = text[..start].chars().next_back();
                if prev.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let name: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                    .collect();
                // The signature ends at the first `{` or `;` after the name.
                let Some(end) = text[at..].find(['{', ';']).map(|e| at + e) else {
                    continue;
                };
                if name.is_empty() || text.as_bytes()[end] == b';' {
                    continue;
                }
                let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
                let body: Vec<&str> = text[end + 1..closing(&text, end)]
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect();
                out.push(SrcFn {
                    stem: stem.clone(),
                    name,
                    is_extern: text[line_start..start].contains("extern \"system\""),
                    body: body.join("\n"),
                });
            }
        }
        out
    }

    /// The callee when the whole body is one call (`ffi::void(..)`, `record(..)`, or either
    /// inside an `unsafe { .. }` block), else None.
    fn sole_call(body: &str) -> Option<String> {
        let mut t = body.trim();
        if let Some(rest) = t.strip_prefix("unsafe {") {
            t = rest.strip_suffix('}')?.trim();
        }
        let callee: String = t
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let open = callee.len();
        if callee.is_empty() || t.as_bytes().get(open) != Some(&b'(') {
            return None;
        }
        let rest = t[closing(t, open) + 1..].trim();
        (rest.is_empty() || rest == ";").then_some(callee)
    }

    /// The FFI audit: every `extern "system"` function of the driver (the entry points of the
    /// table, the `vk_icd*` exports, those that macros write) is, as its whole body, one call of
    /// `ffi::result`/`ffi::void`/`ffi::run` (which catch panics) or of a function that is (the
    /// command-buffer `record` helper, another entry point it forwards to): no statement runs
    /// outside `catch_unwind`, so no panic crosses into the loader.
    #[test]
    fn every_entry_point_runs_inside_the_panic_catching_wrapper() {
        let fns = driver_functions();
        let wrappers = ["ffi::result", "ffi::void", "ffi::run"];
        let mut wrapped = vec![false; fns.len()];
        loop {
            let mut changed = false;
            for (i, f) in fns.iter().enumerate() {
                if wrapped[i] {
                    continue;
                }
                let Some(callee) = sole_call(&f.body) else {
                    continue;
                };
                // Macro templates name the wrappers by their full path.
                let callee = callee
                    .strip_prefix("crate::")
                    .unwrap_or(&callee)
                    .to_string();
                let local = callee.rsplit("::").next().unwrap_or("");
                let ok = wrappers.contains(&callee.as_str())
                    || fns.iter().zip(&wrapped).any(|(g, &w)| {
                        w && g.name == local && (g.stem == f.stem || callee.contains("::"))
                    });
                if ok {
                    wrapped[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut unwrapped: Vec<String> = fns
            .iter()
            .zip(&wrapped)
            .filter(|(f, &w)| f.is_extern && !w)
            .map(|(f, _)| format!("{}::{}", f.stem, f.name))
            .collect();
        let all_wrapped = |stem: &str, name: &str| {
            let mut it = fns
                .iter()
                .zip(&wrapped)
                .filter(|(f, _)| f.stem == stem && f.name == name);
            let first = it.next();
            first.is_some_and(|(_, &w)| w) && it.all(|(_, &w)| w)
        };
        // Each table entry names a wrapped function; one a macro writes (`$f`) is wrapped when
        // every macro template of the driver is and an invocation in its file lists it.
        let templates_wrapped = fns
            .iter()
            .zip(&wrapped)
            .filter(|(f, _)| f.name == "$f")
            .all(|(_, &w)| w);
        let sources = driver_sources();
        for (vk_name, path) in ENTRY_FUNCTIONS {
            let path = path.replace(' ', "");
            let (stem, name) = path.rsplit_once("::").unwrap_or(("entry", &path));
            // A core entry point promoted from an extension may be listed under the
            // extension's name (the one it logs), and the extension's alias under the core
            // name.
            let listed = format!("{name}, \"{vk_name}\"");
            let listed_khr = format!("{name}, \"{vk_name}KHR\"");
            let listed_core = vk_name
                .strip_suffix("KHR")
                .map(|core| format!("{name}, \"{core}\""));
            let by_macro = templates_wrapped
                && sources.iter().any(|(s, t)| {
                    s == stem
                        && (t.contains(&listed)
                            || t.contains(&listed_khr)
                            || listed_core.as_ref().is_some_and(|l| t.contains(l)))
                });
            if !all_wrapped(stem, name) && !by_macro {
                unwrapped.push(format!("{vk_name} ({path})"));
            }
        }
        assert!(
            unwrapped.is_empty(),
            "not wholly inside ffi::result/void/run:\n{}",
            unwrapped.join("\n")
        );
        assert_eq!(ENTRY_FUNCTIONS.len(), ENTRY_POINTS.len());
        // A parser that found nothing would pass vacuously: the table alone has over 100.
        let externs = fns.iter().filter(|f| f.is_extern).count();
        assert!(
            externs > 100,
            "only {externs} extern \"system\" functions found"
        );
    }

    #[test]
    fn null_instance_sees_only_global_functions() {
        assert!(!lookup("vkCreateInstance", |e| e.scope == Scope::Global).is_null());
        assert!(lookup("vkCreateDevice", |e| e.scope == Scope::Global).is_null());
    }

    #[test]
    fn negotiation_caps_at_five_and_rejects_old_loaders() {
        let mut v = 7u32;
        // SAFETY: v is a valid u32.
        assert_eq!(
            unsafe { vk_icdNegotiateLoaderICDInterfaceVersion(&mut v) },
            vk::Result::SUCCESS
        );
        assert_eq!(v, 5);
        let mut v = 1u32;
        // SAFETY: v is a valid u32.
        let r = unsafe { vk_icdNegotiateLoaderICDInterfaceVersion(&mut v) };
        assert_eq!(r, vk::Result::ERROR_INCOMPATIBLE_DRIVER);
    }
}
