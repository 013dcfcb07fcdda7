//! The loader–ICD interface and the entry-point table: the one place that lists what Ferrite
//! implements. A name not in [`ENTRY_POINTS`] resolves to NULL.

use std::ffi::c_char;
use std::sync::atomic::{AtomicU32, Ordering};

use ash::vk;

use crate::{
    cmd, descriptor, device, ffi, group, instance, memory, physical, pipeline, query, queue,
    refuse, sync,
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
pub const KHR_PIPELINE_EXECUTABLE_PROPERTIES: &str = "VK_KHR_pipeline_executable_properties";
pub const KHR_SHADER_FLOAT_CONTROLS: &str = "VK_KHR_shader_float_controls";

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
const M1: Option<&str> = Some(KHR_MAINTENANCE_1);
const PEP: Option<&str> = Some(KHR_PIPELINE_EXECUTABLE_PROPERTIES);

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
    Device CORE => "vkCmdExecuteCommands": cmd::cmd_execute_commands;
    Device CORE => "vkCmdWriteTimestamp": cmd::cmd_write_timestamp;
    Device CORE => "vkCmdResetQueryPool": cmd::cmd_reset_query_pool;
    Device CORE => "vkCmdSetEvent": cmd::cmd_set_event;
    Device CORE => "vkCmdResetEvent": cmd::cmd_reset_event;
    Device CORE => "vkCmdWaitEvents": cmd::cmd_wait_events;
    Instance DGC => "vkEnumeratePhysicalDeviceGroupsKHR": group::enumerate_physical_device_groups;
    Device TLS => "vkGetSemaphoreCounterValueKHR": sync::get_semaphore_counter_value;
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
    // Core 1.0 commands not implemented yet: they refuse with an error (see EntryInfo).
    Device CORE, refuse => "vkCreateBufferView": refuse::create_buffer_view;
    Device CORE, refuse => "vkCreateImage": refuse::create_image;
    Device CORE, refuse => "vkCreateImageView": refuse::create_image_view;
    Device CORE, refuse => "vkCreateSampler": refuse::create_sampler;
    Device CORE, refuse => "vkCreateFramebuffer": refuse::create_framebuffer;
    Device CORE, refuse => "vkCreateRenderPass": refuse::create_render_pass;
    Device CORE, refuse => "vkCreateGraphicsPipelines": refuse::create_graphics_pipelines;
    Device CORE, refuse => "vkQueueBindSparse": refuse::queue_bind_sparse;
    Device CORE, refuse => "vkDestroyBufferView": refuse::destroy_buffer_view;
    Device CORE, refuse => "vkDestroyImage": refuse::destroy_image;
    Device CORE, refuse => "vkDestroyImageView": refuse::destroy_image_view;
    Device CORE, refuse => "vkDestroySampler": refuse::destroy_sampler;
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
            Ok(lookup(name, |e| {
                e.scope == Scope::Device && e.extension.is_none_or(|ext| dev.extension_enabled(ext))
            }))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
            if let Some(ext) = a.extension {
                let known = INSTANCE_EXTENSIONS
                    .iter()
                    .chain(DEVICE_EXTENSIONS)
                    .any(|(n, _)| *n == ext);
                assert!(known, "{} names unadvertised extension {ext}", a.name);
            }
        }
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
