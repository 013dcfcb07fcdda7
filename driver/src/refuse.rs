//! Core 1.0 commands Ferrite does not implement yet. The loader's dispatch table must not hold
//! NULL for a core command an application may call, so each one answers: creations log "not
//! implemented yet" and return VK_ERROR_FEATURE_NOT_PRESENT, destroys accept VK_NULL_HANDLE
//! (always valid) and report anything else as an invalid handle (no such object can exist).
//! Each row leaves this file when its real implementation lands.

use ash::vk;
use ash::vk::Handle;

use crate::error::DriverError;
use crate::ffi;

macro_rules! refuse_create {
    ($($f:ident, $name:literal, $info:ty, $out:ty;)*) => {$(
        pub(crate) unsafe extern "system" fn $f(
            _device: vk::Device,
            _p_info: *const $info,
            _p_allocator: *const vk::AllocationCallbacks<'_>,
            _p_out: *mut $out,
        ) -> vk::Result {
            ffi::result($name, || Err(DriverError::NotImplemented($name)))
        }
    )*};
}

macro_rules! refuse_destroy {
    ($($f:ident, $name:literal, $handle:ty;)*) => {$(
        pub(crate) unsafe extern "system" fn $f(
            _device: vk::Device,
            handle: $handle,
            _p_allocator: *const vk::AllocationCallbacks<'_>,
        ) {
            ffi::void($name, || {
                if handle.is_null() {
                    Ok(())
                } else {
                    Err(DriverError::InvalidHandle { kind: stringify!($handle), value: handle.as_raw() })
                }
            })
        }
    )*};
}

refuse_create! {
    create_framebuffer, "vkCreateFramebuffer", vk::FramebufferCreateInfo<'_>, vk::Framebuffer;
    create_render_pass, "vkCreateRenderPass", vk::RenderPassCreateInfo<'_>, vk::RenderPass;
    create_sampler_ycbcr_conversion, "vkCreateSamplerYcbcrConversion",
        vk::SamplerYcbcrConversionCreateInfo<'_>, vk::SamplerYcbcrConversion;
}

refuse_destroy! {
    destroy_framebuffer, "vkDestroyFramebuffer", vk::Framebuffer;
    destroy_render_pass, "vkDestroyRenderPass", vk::RenderPass;
    destroy_sampler_ycbcr_conversion, "vkDestroySamplerYcbcrConversion", vk::SamplerYcbcrConversion;
}

/// Core 1.1: no image is sparse, so none has sparse requirements.
pub(crate) unsafe extern "system" fn get_image_sparse_memory_requirements2(
    _device: vk::Device,
    _p_info: *const vk::ImageSparseMemoryRequirementsInfo2<'_>,
    p_count: *mut u32,
    _p_reqs: *mut vk::SparseImageMemoryRequirements2<'_>,
) {
    ffi::void("vkGetImageSparseMemoryRequirements2", || {
        // SAFETY: valid count pointer per the spec; no sparse image exists, so none is listed.
        unsafe { ffi::write(p_count, 0, "pSparseMemoryRequirementCount") }
    })
}

macro_rules! refuse_pipelines {
    ($($f:ident, $name:literal, $info:ty;)*) => {$(
        pub(crate) unsafe extern "system" fn $f(
            _device: vk::Device,
            _cache: vk::PipelineCache,
            count: u32,
            _p_infos: *const $info,
            _p_allocator: *const vk::AllocationCallbacks<'_>,
            p_pipelines: *mut vk::Pipeline,
        ) -> vk::Result {
            ffi::result($name, || {
                // On failure every element of pPipelines must be VK_NULL_HANDLE.
                for i in 0..count as usize {
                    // SAFETY: pPipelines holds `count` writable elements per the spec.
                    unsafe { ffi::write(p_pipelines.wrapping_add(i), vk::Pipeline::null(), "pPipelines") }?;
                }
                Err(DriverError::NotImplemented($name))
            })
        }
    )*};
}

refuse_pipelines! {
    create_graphics_pipelines, "vkCreateGraphicsPipelines", vk::GraphicsPipelineCreateInfo<'_>;
}

/// Sparse binding is an unsupported feature.
pub(crate) unsafe extern "system" fn queue_bind_sparse(
    _queue: vk::Queue,
    _count: u32,
    _p_info: *const vk::BindSparseInfo<'_>,
    _fence: vk::Fence,
) -> vk::Result {
    ffi::result("vkQueueBindSparse", || {
        Err(DriverError::NotImplemented("vkQueueBindSparse"))
    })
}
