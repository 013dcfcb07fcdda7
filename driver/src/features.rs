//! The feature rows: one list of every feature member the driver answers, by its Vulkan name,
//! with whether it works on a device entry. `vkGetPhysicalDeviceFeatures2`, the check of
//! `vkCreateDevice` and the apiVersion decision (`api_version`) all read the same rows, so an
//! extension structure and `VkPhysicalDeviceVulkan11/12/13Features` can never disagree.
//!
//! A feature is added by giving it a row in [`rows`] (switched on by the change that makes it
//! work) and, if its structure is new, its members in [`MEMBERS`].

use std::mem::offset_of;
use std::sync::OnceLock;

use ash::vk;
use kernel_iface::DeviceInfo;

/// Where a feature's Bool32 lives: (Vulkan member name, structure type, byte offset).
pub type Member = (&'static str, vk::StructureType, usize);

/// `STYPE => Type { member: "name", ... }` gives the rows of one structure;
/// `STYPE => Type, STYPE2 => Type2 { ... }` gives the same members' rows for each of the
/// structures (members that a core structure restates from an extension's).
macro_rules! members {
    (@rows [$($row:tt)*]) => { &[$($row)*] };
    (@rows [$($row:tt)*] $sty:ident => $ty:ident, $($more:ident => $mty:ident),+ { $($fields:tt)* } $($rest:tt)*) => {
        members!(@rows [$($row)*] $sty => $ty { $($fields)* } $($more => $mty),+ { $($fields)* } $($rest)*)
    };
    (@rows [$($row:tt)*] $sty:ident => $ty:ident { $( $field:ident : $name:literal ),* $(,)? } $($rest:tt)*) => {
        members!(@rows [$($row)* $( ($name, vk::StructureType::$sty, offset_of!(vk::$ty<'static>, $field)), )*] $($rest)*)
    };
    ($($body:tt)*) => { members!(@rows [] $($body)*) };
}

/// Every feature member of every structure the driver fills or checks. The core structures
/// are listed whole, so a request of any of their members is checked against the rows.
pub const MEMBERS: &[Member] = members! {
    PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES => PhysicalDeviceShaderFloat16Int8Features {
        shader_float16: "shaderFloat16",
        shader_int8: "shaderInt8",
    }
    PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES => PhysicalDevice8BitStorageFeatures {
        storage_buffer8_bit_access: "storageBuffer8BitAccess",
        uniform_and_storage_buffer8_bit_access: "uniformAndStorageBuffer8BitAccess",
        storage_push_constant8: "storagePushConstant8",
    }
    PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES => PhysicalDevice16BitStorageFeatures {
        storage_buffer16_bit_access: "storageBuffer16BitAccess",
        uniform_and_storage_buffer16_bit_access: "uniformAndStorageBuffer16BitAccess",
        storage_push_constant16: "storagePushConstant16",
        storage_input_output16: "storageInputOutput16",
    }
    PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES => PhysicalDeviceTimelineSemaphoreFeatures {
        timeline_semaphore: "timelineSemaphore",
    }
    PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES => PhysicalDeviceSynchronization2Features {
        synchronization2: "synchronization2",
    }
    PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES => PhysicalDeviceHostQueryResetFeatures {
        host_query_reset: "hostQueryReset",
    }
    PHYSICAL_DEVICE_PRIVATE_DATA_FEATURES => PhysicalDevicePrivateDataFeatures {
        private_data: "privateData",
    }
    PHYSICAL_DEVICE_PIPELINE_CREATION_CACHE_CONTROL_FEATURES => PhysicalDevicePipelineCreationCacheControlFeatures {
        pipeline_creation_cache_control: "pipelineCreationCacheControl",
    }
    PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR => PhysicalDevicePipelineExecutablePropertiesFeaturesKHR {
        pipeline_executable_info: "pipelineExecutableInfo",
    }
    PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT => PhysicalDeviceRobustness2FeaturesEXT {
        robust_buffer_access2: "robustBufferAccess2",
        robust_image_access2: "robustImageAccess2",
        null_descriptor: "nullDescriptor",
    }
    PHYSICAL_DEVICE_INLINE_UNIFORM_BLOCK_FEATURES => PhysicalDeviceInlineUniformBlockFeatures {
        inline_uniform_block: "inlineUniformBlock",
        descriptor_binding_inline_uniform_block_update_after_bind: "descriptorBindingInlineUniformBlockUpdateAfterBind",
    }
    PHYSICAL_DEVICE_IMAGE_ROBUSTNESS_FEATURES => PhysicalDeviceImageRobustnessFeatures {
        robust_image_access: "robustImageAccess",
    }
    PHYSICAL_DEVICE_SHADER_SUBGROUP_EXTENDED_TYPES_FEATURES => PhysicalDeviceShaderSubgroupExtendedTypesFeatures {
        shader_subgroup_extended_types: "shaderSubgroupExtendedTypes",
    }
    PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES => PhysicalDeviceSubgroupSizeControlFeatures {
        subgroup_size_control: "subgroupSizeControl",
        compute_full_subgroups: "computeFullSubgroups",
    }
    PHYSICAL_DEVICE_SHADER_SUBGROUP_UNIFORM_CONTROL_FLOW_FEATURES_KHR => PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR {
        shader_subgroup_uniform_control_flow: "shaderSubgroupUniformControlFlow",
    }
    PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES => PhysicalDeviceBufferDeviceAddressFeatures {
        buffer_device_address: "bufferDeviceAddress",
        buffer_device_address_capture_replay: "bufferDeviceAddressCaptureReplay",
        buffer_device_address_multi_device: "bufferDeviceAddressMultiDevice",
    }
    PHYSICAL_DEVICE_UNIFORM_BUFFER_STANDARD_LAYOUT_FEATURES => PhysicalDeviceUniformBufferStandardLayoutFeatures {
        uniform_buffer_standard_layout: "uniformBufferStandardLayout",
    }
    PHYSICAL_DEVICE_SCALAR_BLOCK_LAYOUT_FEATURES => PhysicalDeviceScalarBlockLayoutFeatures {
        scalar_block_layout: "scalarBlockLayout",
    }
    PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES => PhysicalDeviceShaderAtomicInt64Features {
        shader_buffer_int64_atomics: "shaderBufferInt64Atomics",
        shader_shared_int64_atomics: "shaderSharedInt64Atomics",
    }
    PHYSICAL_DEVICE_ZERO_INITIALIZE_WORKGROUP_MEMORY_FEATURES => PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures {
        shader_zero_initialize_workgroup_memory: "shaderZeroInitializeWorkgroupMemory",
    }
    PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES => PhysicalDeviceMaintenance4Features {
        maintenance4: "maintenance4",
    }
    PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES => PhysicalDeviceShaderIntegerDotProductFeatures {
        shader_integer_dot_product: "shaderIntegerDotProduct",
    }
    PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES => PhysicalDeviceVulkanMemoryModelFeatures {
        vulkan_memory_model: "vulkanMemoryModel",
        vulkan_memory_model_device_scope: "vulkanMemoryModelDeviceScope",
        vulkan_memory_model_availability_visibility_chains: "vulkanMemoryModelAvailabilityVisibilityChains",
    }
    PHYSICAL_DEVICE_VULKAN_1_1_FEATURES => PhysicalDeviceVulkan11Features {
        storage_buffer16_bit_access: "storageBuffer16BitAccess",
        uniform_and_storage_buffer16_bit_access: "uniformAndStorageBuffer16BitAccess",
        storage_push_constant16: "storagePushConstant16",
        storage_input_output16: "storageInputOutput16",
        multiview: "multiview",
        multiview_geometry_shader: "multiviewGeometryShader",
        multiview_tessellation_shader: "multiviewTessellationShader",
        variable_pointers_storage_buffer: "variablePointersStorageBuffer",
        variable_pointers: "variablePointers",
        protected_memory: "protectedMemory",
        sampler_ycbcr_conversion: "samplerYcbcrConversion",
        shader_draw_parameters: "shaderDrawParameters",
    }
    PHYSICAL_DEVICE_VULKAN_1_2_FEATURES => PhysicalDeviceVulkan12Features {
        sampler_mirror_clamp_to_edge: "samplerMirrorClampToEdge",
        draw_indirect_count: "drawIndirectCount",
        storage_buffer8_bit_access: "storageBuffer8BitAccess",
        uniform_and_storage_buffer8_bit_access: "uniformAndStorageBuffer8BitAccess",
        storage_push_constant8: "storagePushConstant8",
        shader_buffer_int64_atomics: "shaderBufferInt64Atomics",
        shader_shared_int64_atomics: "shaderSharedInt64Atomics",
        shader_float16: "shaderFloat16",
        shader_int8: "shaderInt8",
        descriptor_indexing: "descriptorIndexing",
    }
    PHYSICAL_DEVICE_DESCRIPTOR_INDEXING_FEATURES => PhysicalDeviceDescriptorIndexingFeatures,
    PHYSICAL_DEVICE_VULKAN_1_2_FEATURES => PhysicalDeviceVulkan12Features {
        shader_input_attachment_array_dynamic_indexing: "shaderInputAttachmentArrayDynamicIndexing",
        shader_uniform_texel_buffer_array_dynamic_indexing: "shaderUniformTexelBufferArrayDynamicIndexing",
        shader_storage_texel_buffer_array_dynamic_indexing: "shaderStorageTexelBufferArrayDynamicIndexing",
        shader_uniform_buffer_array_non_uniform_indexing: "shaderUniformBufferArrayNonUniformIndexing",
        shader_sampled_image_array_non_uniform_indexing: "shaderSampledImageArrayNonUniformIndexing",
        shader_storage_buffer_array_non_uniform_indexing: "shaderStorageBufferArrayNonUniformIndexing",
        shader_storage_image_array_non_uniform_indexing: "shaderStorageImageArrayNonUniformIndexing",
        shader_input_attachment_array_non_uniform_indexing: "shaderInputAttachmentArrayNonUniformIndexing",
        shader_uniform_texel_buffer_array_non_uniform_indexing: "shaderUniformTexelBufferArrayNonUniformIndexing",
        shader_storage_texel_buffer_array_non_uniform_indexing: "shaderStorageTexelBufferArrayNonUniformIndexing",
        descriptor_binding_uniform_buffer_update_after_bind: "descriptorBindingUniformBufferUpdateAfterBind",
        descriptor_binding_sampled_image_update_after_bind: "descriptorBindingSampledImageUpdateAfterBind",
        descriptor_binding_storage_image_update_after_bind: "descriptorBindingStorageImageUpdateAfterBind",
        descriptor_binding_storage_buffer_update_after_bind: "descriptorBindingStorageBufferUpdateAfterBind",
        descriptor_binding_uniform_texel_buffer_update_after_bind: "descriptorBindingUniformTexelBufferUpdateAfterBind",
        descriptor_binding_storage_texel_buffer_update_after_bind: "descriptorBindingStorageTexelBufferUpdateAfterBind",
        descriptor_binding_update_unused_while_pending: "descriptorBindingUpdateUnusedWhilePending",
        descriptor_binding_partially_bound: "descriptorBindingPartiallyBound",
        descriptor_binding_variable_descriptor_count: "descriptorBindingVariableDescriptorCount",
        runtime_descriptor_array: "runtimeDescriptorArray",
    }
    PHYSICAL_DEVICE_VULKAN_1_2_FEATURES => PhysicalDeviceVulkan12Features {
        sampler_filter_minmax: "samplerFilterMinmax",
        scalar_block_layout: "scalarBlockLayout",
        imageless_framebuffer: "imagelessFramebuffer",
        uniform_buffer_standard_layout: "uniformBufferStandardLayout",
        shader_subgroup_extended_types: "shaderSubgroupExtendedTypes",
        separate_depth_stencil_layouts: "separateDepthStencilLayouts",
        host_query_reset: "hostQueryReset",
        timeline_semaphore: "timelineSemaphore",
        buffer_device_address: "bufferDeviceAddress",
        buffer_device_address_capture_replay: "bufferDeviceAddressCaptureReplay",
        buffer_device_address_multi_device: "bufferDeviceAddressMultiDevice",
        vulkan_memory_model: "vulkanMemoryModel",
        vulkan_memory_model_device_scope: "vulkanMemoryModelDeviceScope",
        vulkan_memory_model_availability_visibility_chains: "vulkanMemoryModelAvailabilityVisibilityChains",
        shader_output_viewport_index: "shaderOutputViewportIndex",
        shader_output_layer: "shaderOutputLayer",
        subgroup_broadcast_dynamic_id: "subgroupBroadcastDynamicId",
    }
    PHYSICAL_DEVICE_VULKAN_1_3_FEATURES => PhysicalDeviceVulkan13Features {
        robust_image_access: "robustImageAccess",
        inline_uniform_block: "inlineUniformBlock",
        descriptor_binding_inline_uniform_block_update_after_bind: "descriptorBindingInlineUniformBlockUpdateAfterBind",
        pipeline_creation_cache_control: "pipelineCreationCacheControl",
        private_data: "privateData",
        shader_demote_to_helper_invocation: "shaderDemoteToHelperInvocation",
        shader_terminate_invocation: "shaderTerminateInvocation",
        subgroup_size_control: "subgroupSizeControl",
        compute_full_subgroups: "computeFullSubgroups",
        synchronization2: "synchronization2",
        texture_compression_astc_hdr: "textureCompressionASTC_HDR",
        shader_zero_initialize_workgroup_memory: "shaderZeroInitializeWorkgroupMemory",
        dynamic_rendering: "dynamicRendering",
        shader_integer_dot_product: "shaderIntegerDotProduct",
        maintenance4: "maintenance4",
    }
};

/// Features of `VkPhysicalDeviceFeatures` under their Vulkan names, from the driver's 1.0
/// structure (`physical::supported_features`).
fn core10_rows(info: &DeviceInfo) -> Vec<(&'static str, bool)> {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        crate::physical::feature_list(&vk::PhysicalDeviceFeatures::default())
            .into_iter()
            .map(|(snake, _)| &*vulkan_name(snake).leak())
            .collect()
    });
    crate::physical::feature_list(&crate::physical::supported_features(info))
        .into_iter()
        .zip(names)
        .map(|((_, on), name)| (*name, on))
        .collect()
}

/// `shader_float64` -> `shaderFloat64`, `sparse_residency_image2_d` -> `sparseResidencyImage2D`.
fn vulkan_name(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The features of the extension and core 1.1–1.3 structures that work on `info`, by Vulkan
/// name. A member of [`MEMBERS`] without a row is unsupported. Each row says what makes it
/// true; rows are switched on by the change that makes the feature work.
pub fn extension_rows(_info: &DeviceInfo) -> Vec<(&'static str, bool)> {
    vec![
        // 8/16-bit types: the compiler's lower_narrow pass, byte scattered messages and CURBE
        // reads (storage covers storage buffers, uniform buffers and push constants); 16-bit
        // shader inputs/outputs do not exist in compute.
        ("shaderFloat16", true),
        ("shaderInt8", true),
        ("storageBuffer8BitAccess", true),
        ("uniformAndStorageBuffer8BitAccess", true),
        ("storagePushConstant8", true),
        ("storageBuffer16BitAccess", true),
        ("uniformAndStorageBuffer16BitAccess", true),
        ("storagePushConstant16", true),
        ("storageInputOutput16", false),
        // Syncobj timelines (sync.rs) and the synchronization2 commands (cmd.rs, queue.rs).
        ("timelineSemaphore", true),
        ("synchronization2", true),
        // VK_KHR_pipeline_executable_properties (pipeline.rs).
        ("pipelineExecutableInfo", true),
        // vkResetQueryPool clears availability from the CPU (query.rs).
        ("hostQueryReset", true),
        // Private data slots (private_data.rs).
        ("privateData", true),
        // FAIL_ON_PIPELINE_COMPILE_REQUIRED / EARLY_RETURN_ON_FAILURE (pipeline.rs); the
        // cache is internally locked, so EXTERNALLY_SYNCHRONIZED caches need nothing.
        ("pipelineCreationCacheControl", true),
        // OpGroupNonUniformBroadcast with a dynamically uniform id (SPIR-V 1.5): the back end
        // picks the lane with a compare per channel (tests/tests/subgroup_sim.rs,
        // broadcast_with_a_dynamically_uniform_id_matches_cpu).
        ("subgroupBroadcastDynamicId", true),
        // NonUniform indices into arrays of sampled images, samplers and storage images: a
        // loop over the distinct indices of the active invocations (docs/images.md, "Arrays
        // of images indexed at run time"; tests/amber/img_*_nonuniform.amber).
        ("shaderSampledImageArrayNonUniformIndexing", true),
        ("shaderStorageImageArrayNonUniformIndexing", true),
        // Subgroup operations on 8/16-bit integers and fp16 (and, with shaderInt64 and
        // shaderFloat64, on 64-bit types): widened to dwords or on qword temporaries in the
        // back end (docs/subgroups.md; tests/tests/subgroup_types_sim.rs).
        ("shaderSubgroupExtendedTypes", true),
        // VK_EXT_subgroup_size_control: a required size 8, 16 or 32 is the SIMD width the
        // kernel is compiled at; full subgroups hold at every width once the group's x size is
        // a multiple of it (pipeline::subgroup_width; tests/tests/subgroup_size_control.rs).
        ("subgroupSizeControl", true),
        // VK_KHR_shader_subgroup_uniform_control_flow: a subgroup is an EU thread, and the
        // back end keeps SPIR-V's structured control flow (if/else/endif, loops), so the
        // invocations of a subgroup that enter a construct together are together again at its
        // merge; no pass moves a subgroup operation (tests/amber/cts, the conformance suite's
        // subgroup_uniform_control_flow files).
        ("shaderSubgroupUniformControlFlow", true),
        ("computeFullSubgroups", true),
        // VK_EXT_robustness2: the data port returns 0 for loads past the descriptor range and
        // drops stores and atomics there, at dword granularity (tests/tests/robust_access.rs).
        // Not yet: robustImageAccess2 (alpha outside an image without alpha may read 0,
        // docs/images.md), and nullDescriptor (descriptor writes do not take a null buffer
        // yet).
        ("robustBufferAccess2", true),
        // VK_EXT_image_robustness: typed surface messages and the sampler's ld check every
        // texel against the view's extent in the surface state (width, height, depth or
        // layers of the level), read 0 outside and drop writes and atomics there, which is
        // what robustImageAccess asks; docs/images.md, "Out-of-bounds image access";
        // tests/amber/img_robust_*.amber.
        ("robustImageAccess", true),
        // VK_EXT_inline_uniform_block: a set's blocks live in a GEM object of the set, each
        // block's slot a uniform-buffer descriptor over its bytes (inline_uniform.rs;
        // tests/tests/inline_uniform.rs). Update-after-bind: a write copies bytes into that
        // object on the host and the batch only names the object, so a submission reads the
        // bytes the block holds when it runs (tests/tests/descriptor_inline_update_after_bind.rs).
        ("inlineUniformBlock", true),
        ("descriptorBindingInlineUniformBlockUpdateAfterBind", true),
        // PhysicalStorageBuffer pointers through A64 messages; memory allocated with
        // DEVICE_ADDRESS is resident in every submission (tests/tests/buffer_address.rs).
        // No capture/replay (addresses come from the VA allocator, not from a request) and a
        // single device.
        ("bufferDeviceAddress", true),
        ("bufferDeviceAddressCaptureReplay", false),
        ("bufferDeviceAddressMultiDevice", false),
        // Block layouts: the front end takes every member's Offset, ArrayStride and
        // MatrixStride from the decorations, and the data port reads dword-aligned
        // components (8/16-bit ones with byte scattered messages), so std430 uniform blocks
        // and scalar-aligned members need nothing else (tests/tests/block_layout.rs).
        ("uniformBufferStandardLayout", true),
        ("scalarBlockLayout", true),
        // 64-bit atomics on storage buffers and through pointers: A64 atomics with 64-bit
        // data (docs/descriptors.md, "64-bit atomics"; tests/tests/buffer_address.rs). Shared
        // memory has no 64-bit atomic message on Gen9 (anv reports false too).
        ("shaderBufferInt64Atomics", true),
        ("shaderSharedInt64Atomics", false),
        // VK_KHR_maintenance4: the create-info memory-requirement queries (requirements.rs),
        // maxBufferSize, LocalSizeId (the front end reads its constant ids), pipeline layouts
        // that may be destroyed once used (pipelines and bound sets hold what they need),
        // requirements that do not depend on usage (tests/tests/maintenance4.rs).
        ("maintenance4", true),
        // VK_KHR_zero_initialize_workgroup_memory: a kernel with a null-initialized Workgroup
        // variable first zeroes its SLM range cooperatively, then a workgroup barrier
        // (compiler/src/frontend/shared_init.rs; tests/tests/zero_init_workgroup.rs).
        ("shaderZeroInitializeWorkgroupMemory", true),
        // VK_KHR_sampler_mirror_clamp_to_edge: the sampler's TCM_MIRROR_ONCE mode
        // (tests/amber/img_sample_2d_*_mirrored_clamp_to_edge.amber).
        ("samplerMirrorClampToEdge", true),
        // Integer dot products on packed bytes and 8/16/32/64-bit vectors: multiply-adds and
        // saturating adds in the compiler (compiler/src/frontend/dot.rs;
        // tests/tests/integer_dot_sim.rs). None is "accelerated" (physical.rs).
        ("shaderIntegerDotProduct", true),
        // The Vulkan memory model: availability/visibility operations and acquire/release
        // semantics on loads, stores, atomics and barriers become data-port fences with
        // commit, which order buffer, image and shared-memory accesses at every scope up to
        // the device (one L3 serves every EU); docs/memory-model.md,
        // tests/tests/memory_model_sim.rs. Availability/visibility chains with more than one
        // element are not claimed (anv claims them): every fence here makes writes available
        // at device scope, which should satisfy a chain, but nothing tests it yet.
        ("vulkanMemoryModel", true),
        ("vulkanMemoryModelDeviceScope", true),
        ("vulkanMemoryModelAvailabilityVisibilityChains", false),
        // Descriptor indexing (docs/descriptors.md, "Descriptor indexing"). Runtime arrays
        // take the set layout's count (BindingSlot::count); a descriptor never written reads
        // as a NULL surface (or a zero table entry), so partially bound bindings need
        // nothing; a variable count only shortens the last binding of a set. NonUniform
        // buffer indices: a loop over the distinct indices in the binding table, per-lane
        // addresses in the descriptor table. descriptorIndexing (VK_EXT_descriptor_indexing)
        // is on because every feature vk.xml requires with it is
        // (api_version::DESCRIPTOR_INDEXING_REQUIRES; the test below checks them), as is the
        // 1.3 requirement descriptorBindingInlineUniformBlockUpdateAfterBind.
        ("descriptorIndexing", true),
        ("runtimeDescriptorArray", true),
        ("descriptorBindingPartiallyBound", true),
        ("descriptorBindingVariableDescriptorCount", true),
        ("shaderStorageBufferArrayNonUniformIndexing", true),
        ("shaderUniformBufferArrayNonUniformIndexing", true),
        // Arrays of uniform and storage texel buffers: images of Dim Buffer, so a run-time
        // index takes the image-array path (a0 descriptor; a loop over the distinct indices
        // for NonUniform ones): tests/tests/descriptor_indexing.rs,
        // texel_buffer_runtime_arrays_partially_bound_variable_count, and
        // tests/amber/desc_texel_*.amber, desc_runtime_texel_*.amber.
        ("shaderUniformTexelBufferArrayDynamicIndexing", true),
        ("shaderStorageTexelBufferArrayDynamicIndexing", true),
        ("shaderUniformTexelBufferArrayNonUniformIndexing", true),
        ("shaderStorageTexelBufferArrayNonUniformIndexing", true),
        // Update-after-bind: a command buffer's batch is built from its command list when it
        // is submitted, reading every descriptor as the set holds it then, and built again
        // when a set it read was written since (cmd.rs; tests/tests/update_after_bind.rs).
        // Bindings the kernel does not read are never looked at, so writing them while the
        // command buffer is pending changes nothing it runs.
        ("descriptorBindingUniformBufferUpdateAfterBind", true),
        ("descriptorBindingStorageBufferUpdateAfterBind", true),
        ("descriptorBindingSampledImageUpdateAfterBind", true),
        ("descriptorBindingStorageImageUpdateAfterBind", true),
        ("descriptorBindingUniformTexelBufferUpdateAfterBind", true),
        ("descriptorBindingStorageTexelBufferUpdateAfterBind", true),
        ("descriptorBindingUpdateUnusedWhilePending", true),
    ]
}

/// Every feature row: `VkPhysicalDeviceFeatures` and the extension/core structures.
pub fn rows(info: &DeviceInfo) -> Vec<(&'static str, bool)> {
    let mut rows = core10_rows(info);
    rows.extend(extension_rows(info));
    rows
}

/// Whether the feature named `name` works (false for a name without a row).
pub fn supported(rows: &[(&'static str, bool)], name: &str) -> bool {
    rows.iter().any(|&(n, on)| n == name && on)
}

/// The Bool32 of member `m` in the structure at `base`.
///
/// # Safety
/// `base` must point to a live, writable structure of the type `m.1` names.
unsafe fn bool_at<'a>(base: *mut vk::BaseOutStructure<'static>, m: &Member) -> &'a mut vk::Bool32 {
    // SAFETY: caller contract; `m.2` is a Bool32 member's offset in that type.
    unsafe { &mut *base.cast::<u8>().add(m.2).cast::<vk::Bool32>() }
}

/// Visits every known feature member in a pNext chain.
///
/// # Safety
/// `p_next` must be null or a valid chain of Vulkan structures.
unsafe fn for_each_member(
    p_next: *mut std::ffi::c_void,
    f: &mut dyn FnMut(&'static str, &mut vk::Bool32),
) {
    let mut p = p_next.cast::<vk::BaseOutStructure<'static>>();
    while !p.is_null() {
        // SAFETY: every chain element starts with sType/pNext (caller contract).
        let (ty, next) = unsafe { ((*p).s_type, (*p).p_next) };
        for m in MEMBERS.iter().filter(|m| m.1 == ty) {
            // SAFETY: the structure's sType is `ty`, so it is the type the member row names.
            f(m.0, unsafe { bool_at(p, m) });
        }
        p = next;
    }
}

/// Writes every known feature member of a `vkGetPhysicalDeviceFeatures2` chain from the rows.
///
/// # Safety
/// `p_next` must be null or a valid chain of writable Vulkan structures.
pub unsafe fn fill_chain(p_next: *mut std::ffi::c_void, info: &DeviceInfo) {
    let rows = rows(info);
    // SAFETY: forwarded caller contract.
    unsafe { for_each_member(p_next, &mut |name, b| *b = supported(&rows, name).into()) };
}

/// Names of the features requested in a device-creation chain that do not work.
///
/// # Safety
/// `p_next` must be null or a valid chain of Vulkan structures.
pub unsafe fn unsupported_in_chain(
    p_next: *const std::ffi::c_void,
    info: &DeviceInfo,
) -> Vec<&'static str> {
    let rows = rows(info);
    let mut out = Vec::new();
    // SAFETY: forwarded caller contract; the visitor only reads.
    unsafe {
        for_each_member(p_next.cast_mut(), &mut |name, b| {
            if *b != vk::FALSE && !supported(&rows, name) && !out.contains(&name) {
                out.push(name);
            }
        })
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_iface::lookup_pci_id;

    #[test]
    fn every_row_names_a_known_member() {
        let info = lookup_pci_id(0x1912).unwrap();
        for (name, _) in extension_rows(info) {
            assert!(
                MEMBERS.iter().any(|m| m.0 == name),
                "row {name} has no member"
            );
        }
        let core: Vec<_> = core10_rows(info).into_iter().map(|r| r.0).collect();
        assert!(core.contains(&"shaderFloat64"));
        assert!(core.contains(&"sparseResidencyImage2D"));
    }

    #[test]
    fn extension_and_core_structures_answer_alike() {
        let info = lookup_pci_id(0x1912).unwrap();
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default();
        let mut f16 = vk::PhysicalDeviceShaderFloat16Int8Features::default();
        s16.p_next = (&mut f16 as *mut vk::PhysicalDeviceShaderFloat16Int8Features).cast();
        v11.p_next = (&mut s16 as *mut vk::PhysicalDevice16BitStorageFeatures).cast();
        v12.p_next = (&mut v11 as *mut vk::PhysicalDeviceVulkan11Features).cast();
        // SAFETY: a valid chain of live structures.
        unsafe {
            fill_chain(
                (&mut v12 as *mut vk::PhysicalDeviceVulkan12Features).cast(),
                info,
            )
        };
        assert_eq!(v12.shader_float16, f16.shader_float16);
        assert_eq!(
            v11.storage_buffer16_bit_access,
            s16.storage_buffer16_bit_access
        );
        assert_eq!(v11.storage_input_output16, vk::FALSE);
        assert_eq!(v12.timeline_semaphore, vk::TRUE);
        assert_eq!(v12.buffer_device_address, vk::TRUE);
        assert_eq!(v12.buffer_device_address_capture_replay, vk::FALSE);
    }

    #[test]
    fn descriptor_indexing_brings_every_feature_it_requires() {
        let info = lookup_pci_id(0x1912).unwrap();
        let rows = rows(info);
        assert!(supported(&rows, "descriptorIndexing"));
        for f in crate::api_version::DESCRIPTOR_INDEXING_REQUIRES
            .into_iter()
            .chain(["descriptorBindingInlineUniformBlockUpdateAfterBind"])
        {
            assert!(
                supported(&rows, f),
                "{f} is required with descriptorIndexing"
            );
        }
    }

    #[test]
    fn unsupported_requests_are_named_once() {
        let info = lookup_pci_id(0x1912).unwrap();
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default().storage_input_output16(true);
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default().dynamic_rendering(true);
        v13.p_next = (&mut v11 as *mut vk::PhysicalDeviceVulkan11Features).cast();
        let mut s16 = vk::PhysicalDevice16BitStorageFeatures::default()
            .storage_buffer16_bit_access(true)
            .storage_input_output16(true);
        s16.p_next = (&mut v13 as *mut vk::PhysicalDeviceVulkan13Features).cast();
        let chain = (&s16 as *const vk::PhysicalDevice16BitStorageFeatures).cast();
        // SAFETY: a valid three-element chain of live structures.
        let missing = unsafe { unsupported_in_chain(chain, info) };
        assert_eq!(missing, vec!["storageInputOutput16", "dynamicRendering"]);
    }
}
