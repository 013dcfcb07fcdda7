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
    create_semaphore, "vkCreateSemaphore", vk::SemaphoreCreateInfo<'_>, vk::Semaphore;
    create_event, "vkCreateEvent", vk::EventCreateInfo<'_>, vk::Event;
    create_query_pool, "vkCreateQueryPool", vk::QueryPoolCreateInfo<'_>, vk::QueryPool;
    create_buffer_view, "vkCreateBufferView", vk::BufferViewCreateInfo<'_>, vk::BufferView;
    create_image, "vkCreateImage", vk::ImageCreateInfo<'_>, vk::Image;
    create_image_view, "vkCreateImageView", vk::ImageViewCreateInfo<'_>, vk::ImageView;
    create_shader_module, "vkCreateShaderModule", vk::ShaderModuleCreateInfo<'_>, vk::ShaderModule;
    create_pipeline_cache, "vkCreatePipelineCache", vk::PipelineCacheCreateInfo<'_>, vk::PipelineCache;
    create_pipeline_layout, "vkCreatePipelineLayout", vk::PipelineLayoutCreateInfo<'_>, vk::PipelineLayout;
    create_sampler, "vkCreateSampler", vk::SamplerCreateInfo<'_>, vk::Sampler;
    create_descriptor_set_layout, "vkCreateDescriptorSetLayout", vk::DescriptorSetLayoutCreateInfo<'_>, vk::DescriptorSetLayout;
    create_descriptor_pool, "vkCreateDescriptorPool", vk::DescriptorPoolCreateInfo<'_>, vk::DescriptorPool;
    create_framebuffer, "vkCreateFramebuffer", vk::FramebufferCreateInfo<'_>, vk::Framebuffer;
    create_render_pass, "vkCreateRenderPass", vk::RenderPassCreateInfo<'_>, vk::RenderPass;
    create_command_pool, "vkCreateCommandPool", vk::CommandPoolCreateInfo<'_>, vk::CommandPool;
}

refuse_destroy! {
    destroy_semaphore, "vkDestroySemaphore", vk::Semaphore;
    destroy_event, "vkDestroyEvent", vk::Event;
    destroy_query_pool, "vkDestroyQueryPool", vk::QueryPool;
    destroy_buffer_view, "vkDestroyBufferView", vk::BufferView;
    destroy_image, "vkDestroyImage", vk::Image;
    destroy_image_view, "vkDestroyImageView", vk::ImageView;
    destroy_shader_module, "vkDestroyShaderModule", vk::ShaderModule;
    destroy_pipeline_cache, "vkDestroyPipelineCache", vk::PipelineCache;
    destroy_pipeline_layout, "vkDestroyPipelineLayout", vk::PipelineLayout;
    destroy_sampler, "vkDestroySampler", vk::Sampler;
    destroy_descriptor_set_layout, "vkDestroyDescriptorSetLayout", vk::DescriptorSetLayout;
    destroy_descriptor_pool, "vkDestroyDescriptorPool", vk::DescriptorPool;
    destroy_framebuffer, "vkDestroyFramebuffer", vk::Framebuffer;
    destroy_render_pass, "vkDestroyRenderPass", vk::RenderPass;
    destroy_command_pool, "vkDestroyCommandPool", vk::CommandPool;
    destroy_pipeline, "vkDestroyPipeline", vk::Pipeline;
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
    create_compute_pipelines, "vkCreateComputePipelines", vk::ComputePipelineCreateInfo<'_>;
}

pub(crate) unsafe extern "system" fn allocate_command_buffers(
    _device: vk::Device,
    _p_info: *const vk::CommandBufferAllocateInfo<'_>,
    _p_out: *mut vk::CommandBuffer,
) -> vk::Result {
    ffi::result("vkAllocateCommandBuffers", || {
        Err(DriverError::NotImplemented("vkAllocateCommandBuffers"))
    })
}

pub(crate) unsafe extern "system" fn allocate_descriptor_sets(
    _device: vk::Device,
    _p_info: *const vk::DescriptorSetAllocateInfo<'_>,
    _p_out: *mut vk::DescriptorSet,
) -> vk::Result {
    ffi::result("vkAllocateDescriptorSets", || {
        Err(DriverError::NotImplemented("vkAllocateDescriptorSets"))
    })
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
