//! VkDevice: a logical device on one adapter, owning its queue and its objects.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ash::vk;

use crate::bo::VaAllocator;
use crate::cmd::CommandPool;
use crate::descriptor::{DescriptorPool, DescriptorSet, SetLayout};
use crate::entry::DEVICE_EXTENSIONS;
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::handles::{self, Dispatchable, Registry};
use crate::image::{BufferView, Image, ImageView};
use crate::memory::{Buffer, Memory};
use crate::physical::{self, Adapter, PhysicalDevice};
use crate::pipeline::{Pipeline, PipelineCache, PipelineLayout, ShaderModule};
use crate::query::{Event, QueryPool};
use crate::queue::Queue;
use crate::sync::{Fence, Semaphore};

/// What a device's children share (command buffers keep it alive past their recording).
pub struct Core {
    pub adapter: Arc<Adapter>,
    pub va: Arc<VaAllocator>,
    pub memories: Registry<Memory>,
    pub buffers: Registry<Buffer>,
    pub images: Registry<Image>,
    pub image_views: Registry<ImageView>,
    pub buffer_views: Registry<BufferView>,
    pub samplers: Registry<crate::sampler::Sampler>,
    pub fences: Arc<Registry<Fence>>,
    pub semaphores: Arc<Registry<Semaphore>>,
    pub shader_modules: Registry<ShaderModule>,
    pub set_layouts: Registry<SetLayout>,
    pub pipeline_layouts: Registry<PipelineLayout>,
    pub pipelines: Registry<Pipeline>,
    pub pipeline_caches: Registry<PipelineCache>,
    pub descriptor_pools: Registry<DescriptorPool>,
    pub descriptor_sets: Registry<DescriptorSet>,
    pub update_templates: Registry<crate::descriptor::UpdateTemplate>,
    pub command_pools: Registry<CommandPool>,
    pub events: Registry<Event>,
    pub query_pools: Registry<QueryPool>,
    pub private_data: crate::private_data::Store,
    /// The transfer commands' internal kernels, compiled on first use.
    pub meta: crate::meta::MetaKernels,
    /// Set once a submission of this device hung: every later wait and submit reports
    /// VK_ERROR_DEVICE_LOST.
    pub lost: AtomicBool,
}

impl Core {
    pub fn check_lost(&self) -> Result<()> {
        if self.lost.load(Ordering::Acquire) {
            Err(DriverError::DeviceLost("an earlier submission hung".into()))
        } else {
            Ok(())
        }
    }
}

pub struct Device {
    pub core: Arc<Core>,
    enabled_extensions: Vec<String>,
    queue: Box<Dispatchable<Queue>>,
}

impl std::ops::Deref for Device {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

/// The device behind a `VkDevice` handle, for the entry points.
///
/// # Safety
/// `device` must be null or a live device.
pub(crate) unsafe fn dev<'a>(device: vk::Device) -> Result<&'a Device> {
    // SAFETY: forwarded caller contract.
    unsafe { Device::from_handle(device) }
}

/// Defines the `vkCreate*` entry points of objects that live in one of the device's
/// registries: each reads the create info, makes the object with `$make` (a
/// `Fn(&Device, &vk::$info) -> Result<T>`; pointers inside the create info are valid per the
/// spec) and publishes it in the registry, writing its handle to the output pointer (named
/// `$out` in errors) or dropping the object if that fails, all inside [`ffi::result`] (no panic
/// crosses the FFI edge). The allocator is not used: objects live in the registry.
macro_rules! registry_creates {
    ($($f:ident, $name:literal, $info:ident => $registry:ident, $handle:ident, $out:literal, $make:expr;)*) => {$(
        pub(crate) unsafe extern "system" fn $f(
            device: ::ash::vk::Device,
            p_info: *const ::ash::vk::$info<'_>,
            _p_allocator: *const ::ash::vk::AllocationCallbacks<'_>,
            p_out: *mut ::ash::vk::$handle,
        ) -> ::ash::vk::Result {
            crate::ffi::result($name, || {
                // SAFETY: a live device and a valid create info per the spec.
                let (d, info) = unsafe {
                    (crate::device::dev(device)?, crate::ffi::read(p_info, "pCreateInfo")?)
                };
                let object = $make(d, info)?;
                // SAFETY: a valid output pointer per the spec.
                unsafe { d.$registry.publish(object, p_out, $out) }
            })
        }
    )*};
}
pub(crate) use registry_creates;

/// Defines the `vkDestroy*` entry points of objects that live in one of the device's
/// registries and need nothing done when they go: each removes the handle from its registry
/// inside [`ffi::void`] (no panic crosses the FFI edge). `VK_NULL_HANDLE` is accepted and removes
/// nothing; a stale or foreign handle is logged as invalid. The allocator is not used: objects
/// live in the registry, never in application memory.
macro_rules! registry_destroys {
    ($($f:ident, $name:literal, $handle:ty => $registry:ident;)*) => {$(
        pub(crate) unsafe extern "system" fn $f(
            device: ::ash::vk::Device,
            handle: $handle,
            _p_allocator: *const ::ash::vk::AllocationCallbacks<'_>,
        ) {
            crate::ffi::void($name, || {
                // SAFETY: a live device per the spec.
                unsafe { crate::device::dev(device) }?
                    .$registry
                    .remove(::ash::vk::Handle::as_raw(handle))?;
                Ok(())
            })
        }
    )*};
}
pub(crate) use registry_destroys;

/// Defines `vkGet*MemoryRequirements`, `vkBind*Memory` and `vkBind*Memory2` of objects that
/// live in one of the device's registries and are bound to memory through their
/// `requirements(device)` and `bind(device, memory, offset)`: the first two take one object,
/// the third `count` objects, each named by the member `$member` of its `$info` structure,
/// stopping at the first error; all inside [`ffi::void`] or [`ffi::result`] (no panic crosses
/// the FFI edge).
macro_rules! registry_binds {
    ($($req:ident, $req_name:literal;
       $f:ident, $name:literal, $handle:ty;
       $f2:ident, $name2:literal, $info:ident.$member:ident => $registry:ident;)*) => {$(
        pub(crate) unsafe extern "system" fn $req(
            device: ::ash::vk::Device,
            object: $handle,
            p_req: *mut ::ash::vk::MemoryRequirements,
        ) {
            crate::ffi::void($req_name, || {
                // SAFETY: a live device per the spec.
                let d = unsafe { crate::device::dev(device) }?;
                let req = d.$registry.get(::ash::vk::Handle::as_raw(object))?.requirements(d);
                // SAFETY: valid output pointer per the spec.
                unsafe { crate::ffi::write(p_req, req, "pMemoryRequirements") }
            })
        }

        pub(crate) unsafe extern "system" fn $f(
            device: ::ash::vk::Device,
            object: $handle,
            memory: ::ash::vk::DeviceMemory,
            offset: u64,
        ) -> ::ash::vk::Result {
            crate::ffi::result($name, || {
                // SAFETY: a live device per the spec.
                let d = unsafe { crate::device::dev(device) }?;
                d.$registry
                    .get(::ash::vk::Handle::as_raw(object))?
                    .bind(d, memory, offset)?;
                Ok(::ash::vk::Result::SUCCESS)
            })
        }

        pub(crate) unsafe extern "system" fn $f2(
            device: ::ash::vk::Device,
            count: u32,
            p_infos: *const ::ash::vk::$info<'_>,
        ) -> ::ash::vk::Result {
            crate::ffi::result($name2, || {
                // SAFETY: a live device and `count` valid structures per the spec.
                let (d, infos) = unsafe {
                    (crate::device::dev(device)?, crate::ffi::slice(p_infos, count, "pBindInfos")?)
                };
                for i in infos {
                    d.$registry
                        .get(::ash::vk::Handle::as_raw(i.$member))?
                        .bind(d, i.memory, i.memory_offset)?;
                }
                Ok(::ash::vk::Result::SUCCESS)
            })
        }
    )*};
}
pub(crate) use registry_binds;

impl Device {
    /// # Safety
    /// `h` must be null or a device made by vkCreateDevice and not yet destroyed.
    pub unsafe fn from_handle<'a>(h: vk::Device) -> Result<&'a Device> {
        use ash::vk::Handle;
        // SAFETY: forwarded caller contract.
        unsafe { handles::borrow(h.as_raw() as *mut u8, "VkDevice") }
    }

    pub fn extension_enabled(&self, name: &str) -> bool {
        self.enabled_extensions.iter().any(|e| e == name)
    }

    pub fn queue(&self) -> &Dispatchable<Queue> {
        &self.queue
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // Objects the application did not destroy are freed with the device (their kernel
        // handles are closed by their own Drop); the spec calls this an application error.
        let leaked = [
            ("VkCommandPool", self.command_pools.drain()),
            ("VkDescriptorSet", self.descriptor_sets.drain()),
            ("VkDescriptorPool", self.descriptor_pools.drain()),
            ("VkPipeline", self.pipelines.drain()),
            ("VkPipelineCache", self.pipeline_caches.drain()),
            ("VkPipelineLayout", self.pipeline_layouts.drain()),
            ("VkDescriptorSetLayout", self.set_layouts.drain()),
            ("VkShaderModule", self.shader_modules.drain()),
            ("VkQueryPool", self.query_pools.drain()),
            ("VkEvent", self.events.drain()),
            ("VkSemaphore", self.semaphores.drain()),
            ("VkBuffer", self.buffers.drain()),
            ("VkDeviceMemory", self.memories.drain()),
            ("VkFence", self.fences.drain()),
        ];
        for (kind, n) in leaked {
            if n > 0 {
                log::warn!("vkDestroyDevice: {n} {kind} object(s) still alive; freeing them");
            }
        }
    }
}

/// Checks a VkDeviceCreateInfo against what the adapter offers.
fn check_create_info(adapter: &Adapter, info: &vk::DeviceCreateInfo<'_>) -> Result<Vec<String>> {
    // SAFETY: pQueueCreateInfos holds queueCreateInfoCount valid structures per the spec.
    let queues = unsafe {
        ffi::slice(
            info.p_queue_create_infos,
            info.queue_create_info_count,
            "pQueueCreateInfos",
        )
    }?;
    let families = adapter.queue_families();
    for q in queues {
        let fam = families.get(q.queue_family_index as usize).ok_or_else(|| {
            DriverError::InvalidArgument(format!(
                "queue family {} does not exist",
                q.queue_family_index
            ))
        })?;
        if q.queue_count == 0 || q.queue_count > fam.queue_count {
            return Err(DriverError::InvalidArgument(format!(
                "{} queues requested of family {}",
                q.queue_count, q.queue_family_index
            )));
        }
    }
    // SAFETY: ppEnabledExtensionNames holds enabledExtensionCount strings per the spec.
    let enabled = unsafe {
        ffi::enabled_extensions(
            info.pp_enabled_extension_names,
            info.enabled_extension_count,
            DEVICE_EXTENSIONS,
        )
    }?;
    // Features come either in pEnabledFeatures or in a chained VkPhysicalDeviceFeatures2.
    // SAFETY: pEnabledFeatures is null or valid; the pNext chain is valid per the spec.
    let requested = match unsafe { ffi::read_opt(info.p_enabled_features) } {
        Some(f) => Some(*f),
        None => unsafe {
            ffi::find_in_chain(info.p_next, vk::StructureType::PHYSICAL_DEVICE_FEATURES_2)
        }
        // SAFETY: a structure whose sType is PHYSICAL_DEVICE_FEATURES_2 is one.
        .map(|p| unsafe { (*p.cast::<vk::PhysicalDeviceFeatures2<'_>>()).features }),
    };
    if let Some(requested) = requested {
        let missing =
            physical::unsupported_features(&requested, &physical::supported_features(adapter.info));
        if !missing.is_empty() {
            return Err(DriverError::FeatureNotPresent(missing.join(", ")));
        }
    }
    // SAFETY: the pNext chain is valid per the spec.
    let missing = unsafe { crate::features::unsupported_in_chain(info.p_next, adapter.info) };
    if !missing.is_empty() {
        return Err(DriverError::FeatureNotPresent(missing.join(", ")));
    }
    Ok(enabled)
}

pub(crate) unsafe extern "system" fn create_device(
    pd: vk::PhysicalDevice,
    p_create_info: *const vk::DeviceCreateInfo<'_>,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
    p_device: *mut vk::Device,
) -> vk::Result {
    ffi::result("vkCreateDevice", || {
        // SAFETY: valid handle and create info per the spec.
        let adapter = unsafe { PhysicalDevice::from_handle(pd) }?.adapter.clone();
        // SAFETY: as above.
        let info = unsafe { ffi::read(p_create_info, "pCreateInfo") }?;
        let enabled_extensions = check_create_info(&adapter, info)?;
        let core = Arc::new(Core {
            adapter: adapter.clone(),
            va: Arc::new(VaAllocator::default()),
            memories: Registry::new("VkDeviceMemory"),
            buffers: Registry::new("VkBuffer"),
            images: Registry::new("VkImage"),
            image_views: Registry::new("VkImageView"),
            buffer_views: Registry::new("VkBufferView"),
            samplers: Registry::new("VkSampler"),
            fences: Arc::new(Registry::new("VkFence")),
            semaphores: Arc::new(Registry::new("VkSemaphore")),
            shader_modules: Registry::new("VkShaderModule"),
            set_layouts: Registry::new("VkDescriptorSetLayout"),
            pipeline_layouts: Registry::new("VkPipelineLayout"),
            pipelines: Registry::new("VkPipeline"),
            pipeline_caches: Registry::new("VkPipelineCache"),
            descriptor_pools: Registry::new("VkDescriptorPool"),
            descriptor_sets: Registry::new("VkDescriptorSet"),
            update_templates: Registry::new("VkDescriptorUpdateTemplate"),
            command_pools: Registry::new("VkCommandPool"),
            events: Registry::new("VkEvent"),
            query_pools: Registry::new("VkQueryPool"),
            private_data: Default::default(),
            meta: Default::default(),
            lost: AtomicBool::new(false),
        });
        let queue = Dispatchable::new(Queue::new(core.clone())?);
        let device = Dispatchable::new(Device {
            core,
            enabled_extensions,
            queue,
        });
        // SAFETY: valid output pointer per the spec.
        unsafe { handles::hand_out(device, p_device, "pDevice") }?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_device(
    device: vk::Device,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    ffi::void("vkDestroyDevice", || {
        use ash::vk::Handle;
        // SAFETY: the application passes a device it created (or null) and no longer uses it.
        if let Some(dev) = unsafe { handles::take::<Device>(device.as_raw() as *mut u8) } {
            // Nothing can signal what deferred submissions wait for any more.
            dev.obj.queue.obj.abandon_deferred();
            // A lost device has nothing left to wait for; destruction still succeeds.
            if let Err(e) = dev.obj.queue.obj.wait_idle() {
                log::warn!("vkDestroyDevice: {e}");
            }
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn device_wait_idle(device: vk::Device) -> vk::Result {
    ffi::result("vkDeviceWaitIdle", || {
        // SAFETY: a live device per the spec.
        let dev = unsafe { Device::from_handle(device) }?;
        dev.queue.obj.wait_idle()?;
        Ok(vk::Result::SUCCESS)
    })
}
