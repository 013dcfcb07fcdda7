//! Descriptor-indexing properties (VkPhysicalDeviceDescriptorIndexingProperties and the same
//! members of VkPhysicalDeviceVulkan12Properties), from one function so the two structures
//! cannot disagree. docs/limits.md lists each value, where it comes from and anv's beside it.

use ash::vk;

/// Whether update-after-bind works: it does, because a command buffer's batch is built when it
/// is submitted, reading each set as it holds it then (cmd.rs). It decides
/// robustBufferAccessUpdateAfterBind only: the `*UpdateAfterBind*` count limits count the
/// descriptors of every set, with or without UPDATE_AFTER_BIND_POOL (the spec's definition),
/// so they equal the ordinary limits (a pipeline layout is checked against both).
pub const UPDATE_AFTER_BIND: bool = true;

/// Binding-table entries go first to images, texel buffers and samplers (a SAMPLER descriptor
/// takes one too: its sampler index is its binding-table index, docs/dispatch-contract.md), at
/// most `pipeline::MAX_BTI` (251) of them in a pipeline layout. The per-type limits split those
/// entries so that a layout at every limit at once still fits the table; with one stage the
/// per-set limits are the per-stage ones. Samplers and sampled images keep the spec's per-set
/// minimum of 96 (uniform texel buffers count as sampled images), storage images (and storage
/// texel buffers) take the rest: 59.
pub const MAX_SAMPLERS: u32 = 96;
/// maxPerStageDescriptorSampledImages / maxDescriptorSetSampledImages: see [`MAX_SAMPLERS`].
pub const MAX_SAMPLED_IMAGES: u32 = 96;
/// maxPerStageDescriptorStorageImages / maxDescriptorSetStorageImages: see [`MAX_SAMPLERS`].
pub const MAX_STORAGE_IMAGES: u32 = crate::pipeline::MAX_BTI - MAX_SAMPLERS - MAX_SAMPLED_IMAGES;

/// maxSamplerAllocationCount: a sampler is driver memory (its SAMPLER_STATE is written into
/// each dispatch's state), so nothing in the hardware bounds the count; anv's value.
pub const MAX_SAMPLER_ALLOCATION_COUNT: u32 = 65536;

/// minTexelBufferOffsetAlignment and the 1.3 texel-buffer offset alignments: a texel-buffer
/// view is a typed SURFTYPE_BUFFER surface whose base address is the view's; the largest
/// element (R32G32B32A32) is 16 bytes, and a base aligned to 16 is aligned to every format's
/// element, as the surface state asks (docs/limits.md). anv's value.
pub const TEXEL_BUFFER_OFFSET_ALIGNMENT: u64 = 16;

/// minStorageBufferOffsetAlignment: a storage-buffer descriptor is a RAW surface (byte
/// addressed, bounds checked against the dword-rounded size) or a descriptor-table entry read
/// with A64 messages, and both take any dword-aligned base; anv's value (docs/limits.md).
pub const STORAGE_BUFFER_OFFSET_ALIGNMENT: u64 = 4;

/// `out.m = v.m` for each member `m`: for two Vulkan structures that share members.
macro_rules! copy_members {
    ($out:ident <- $v:ident: $($m:ident),* $(,)?) => { $( $out.$m = $v.$m; )* };
}

/// Writes the descriptor-indexing members of `VkPhysicalDeviceVulkan12Properties` (the
/// extension structure copies them) from the device's ordinary limits `l`.
pub fn descriptor_indexing(
    p: &mut vk::PhysicalDeviceVulkan12Properties<'_>,
    l: &vk::PhysicalDeviceLimits,
) {
    // Every descriptor of every pool: the per-set bound times the sets a layout binds is
    // far past u32; a pool is driver memory, so the count is u32's.
    p.max_update_after_bind_descriptors_in_all_pools = u32::MAX;
    // NonUniform indices into buffers in the binding table take a loop over the distinct
    // indices of the subgroup (a message names one binding-table entry); only buffers past
    // the binding table (A64 messages, per-lane addresses) would be native, so neither
    // buffer kind is. Images, samplers and input attachments are not NonUniform-indexable.
    p.shader_uniform_buffer_array_non_uniform_indexing_native = vk::FALSE;
    p.shader_storage_buffer_array_non_uniform_indexing_native = vk::FALSE;
    p.shader_sampled_image_array_non_uniform_indexing_native = vk::FALSE;
    p.shader_storage_image_array_non_uniform_indexing_native = vk::FALSE;
    p.shader_input_attachment_array_non_uniform_indexing_native = vk::FALSE;
    // Bounds checks do not depend on when a descriptor was written, so robustBufferAccess
    // will hold for update-after-bind bindings as for the others.
    p.robust_buffer_access_update_after_bind = vk::Bool32::from(UPDATE_AFTER_BIND);
    // No implicit LOD in compute.
    p.quad_divergent_implicit_lod = vk::FALSE;
    p.max_per_stage_descriptor_update_after_bind_samplers = l.max_per_stage_descriptor_samplers;
    p.max_per_stage_descriptor_update_after_bind_uniform_buffers =
        l.max_per_stage_descriptor_uniform_buffers;
    p.max_per_stage_descriptor_update_after_bind_storage_buffers =
        l.max_per_stage_descriptor_storage_buffers;
    p.max_per_stage_descriptor_update_after_bind_sampled_images =
        l.max_per_stage_descriptor_sampled_images;
    p.max_per_stage_descriptor_update_after_bind_storage_images =
        l.max_per_stage_descriptor_storage_images;
    p.max_per_stage_descriptor_update_after_bind_input_attachments =
        l.max_per_stage_descriptor_input_attachments;
    p.max_per_stage_update_after_bind_resources = l.max_per_stage_resources;
    p.max_descriptor_set_update_after_bind_samplers = l.max_descriptor_set_samplers;
    p.max_descriptor_set_update_after_bind_uniform_buffers = l.max_descriptor_set_uniform_buffers;
    p.max_descriptor_set_update_after_bind_uniform_buffers_dynamic =
        l.max_descriptor_set_uniform_buffers_dynamic;
    p.max_descriptor_set_update_after_bind_storage_buffers = l.max_descriptor_set_storage_buffers;
    p.max_descriptor_set_update_after_bind_storage_buffers_dynamic =
        l.max_descriptor_set_storage_buffers_dynamic;
    p.max_descriptor_set_update_after_bind_sampled_images = l.max_descriptor_set_sampled_images;
    p.max_descriptor_set_update_after_bind_storage_images = l.max_descriptor_set_storage_images;
    p.max_descriptor_set_update_after_bind_input_attachments =
        l.max_descriptor_set_input_attachments;
}

/// VkPhysicalDeviceDescriptorIndexingProperties: the Vulkan 1.2 structure's members.
pub fn fill_descriptor_indexing_properties(
    out: &mut vk::PhysicalDeviceDescriptorIndexingProperties<'_>,
    l: &vk::PhysicalDeviceLimits,
) {
    let mut v = vk::PhysicalDeviceVulkan12Properties::default();
    descriptor_indexing(&mut v, l);
    // The two structures name these members alike.
    copy_members!(out <- v:
        max_update_after_bind_descriptors_in_all_pools,
        shader_uniform_buffer_array_non_uniform_indexing_native,
        shader_sampled_image_array_non_uniform_indexing_native,
        shader_storage_buffer_array_non_uniform_indexing_native,
        shader_storage_image_array_non_uniform_indexing_native,
        shader_input_attachment_array_non_uniform_indexing_native,
        robust_buffer_access_update_after_bind,
        quad_divergent_implicit_lod,
        max_per_stage_descriptor_update_after_bind_samplers,
        max_per_stage_descriptor_update_after_bind_uniform_buffers,
        max_per_stage_descriptor_update_after_bind_storage_buffers,
        max_per_stage_descriptor_update_after_bind_sampled_images,
        max_per_stage_descriptor_update_after_bind_storage_images,
        max_per_stage_descriptor_update_after_bind_input_attachments,
        max_per_stage_update_after_bind_resources,
        max_descriptor_set_update_after_bind_samplers,
        max_descriptor_set_update_after_bind_uniform_buffers,
        max_descriptor_set_update_after_bind_uniform_buffers_dynamic,
        max_descriptor_set_update_after_bind_storage_buffers,
        max_descriptor_set_update_after_bind_storage_buffers_dynamic,
        max_descriptor_set_update_after_bind_sampled_images,
        max_descriptor_set_update_after_bind_storage_images,
        max_descriptor_set_update_after_bind_input_attachments,
    );
}
