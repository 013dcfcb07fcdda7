//! VkInstance and physical-device enumeration (`FERRITE_DEVICE`).

use std::ffi::c_char;
use std::sync::{Arc, OnceLock};

use ash::vk;
use kernel_iface::{parse_device_selection, DeviceSelection, DrmDevice};

use crate::debug::{self, Flag};
use crate::entry::{self, INSTANCE_EXTENSIONS};
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::handles::{self, Dispatchable};
use crate::physical::{Adapter, PhysicalDevice};

/// The Vulkan version Ferrite implements completely. Claims rise with the code (docs/architecture.md, "Contracts").
pub fn api_version() -> u32 {
    crate::api_version::driver_version()
}

pub struct Instance {
    enabled_extensions: Vec<String>,
    /// Never grows after initialisation, so the handles (addresses of the elements) stay valid.
    physical_devices: OnceLock<Vec<Dispatchable<PhysicalDevice>>>,
}

impl Instance {
    /// # Safety
    /// `h` must be null or an instance made by vkCreateInstance and not yet destroyed.
    pub unsafe fn from_handle<'a>(h: vk::Instance) -> Result<&'a Instance> {
        use ash::vk::Handle;
        // SAFETY: forwarded caller contract.
        unsafe { handles::borrow(h.as_raw() as *mut u8, "VkInstance") }
    }

    pub fn extension_enabled(&self, name: &str) -> bool {
        self.enabled_extensions.iter().any(|e| e == name)
    }

    /// The physical devices, found once per instance.
    pub fn physical_devices(&self) -> &[Dispatchable<PhysicalDevice>] {
        self.physical_devices.get_or_init(|| {
            find_adapters()
                .into_iter()
                .map(|a| {
                    Dispatchable::inline(PhysicalDevice {
                        adapter: Arc::new(a),
                    })
                })
                .collect()
        })
    }

    /// The handles of [`Instance::physical_devices`], in the same order.
    pub fn physical_device_handles(&self) -> Vec<vk::PhysicalDevice> {
        use ash::vk::Handle;
        self.physical_devices()
            .iter()
            .map(|pd| vk::PhysicalDevice::from_raw(handles::as_raw(pd) as u64))
            .collect()
    }
}

/// Applies `FERRITE_DEVICE` (docs/architecture.md, "Contracts"): unset = real i915 render nodes only,
/// `sim[:<platform>|:0x<id>]` = one simulated device, anything else = no device and an error line.
fn find_adapters() -> Vec<Adapter> {
    let value = std::env::var("FERRITE_DEVICE").ok();
    let verbose = debug::enabled(Flag::Enum);
    match parse_device_selection(value.as_deref()) {
        Err(e) => {
            log::error!("{e}; exposing no device");
            Vec::new()
        }
        Ok(DeviceSelection::Sim(info)) => match DrmDevice::open_sim(info) {
            Ok(drm) => {
                if verbose {
                    log::info!(
                        "FERRITE_DEVICE: simulated {} (0x{:04x})",
                        info.name,
                        info.pci_id
                    );
                }
                vec![Adapter::new(Arc::new(drm))]
            }
            Err(e) => {
                log::error!("cannot open the simulated {}: {e}", info.name);
                Vec::new()
            }
        },
        Ok(DeviceSelection::RealOnly) => {
            let mut adapters = Vec::new();
            for node in DrmDevice::enumerate_render_nodes() {
                match DrmDevice::open_render_node(&node) {
                    Ok(drm) if drm.info().supported => {
                        if verbose {
                            log::info!("render node {node:?}: {}", drm.info().name);
                        }
                        adapters.push(Adapter::new(Arc::new(drm)));
                    }
                    Ok(drm) => log::warn!(
                        "render node {node:?}: {} is not supported by Ferrite yet",
                        drm.info().name
                    ),
                    Err(e) => log::warn!("render node {node:?}: {e}"),
                }
            }
            if verbose && adapters.is_empty() {
                log::info!(
                    "no i915 render node found (set FERRITE_DEVICE=sim for the simulated GPU)"
                );
            }
            adapters
        }
    }
}

/// Loader interface 5: from then on the loader (not the driver) deals with applications asking
/// for more than a 1.0 driver offers; an older loader expects a 1.0 driver to refuse any
/// apiVersion above 1.0 with VK_ERROR_INCOMPATIBLE_DRIVER (the Vulkan 1.0 rule).
fn check_api_version(interface_version: u32, requested: u32, driver: u32) -> Result<()> {
    if interface_version < 5 && requested > vk::API_VERSION_1_0 && driver == vk::API_VERSION_1_0 {
        return Err(DriverError::IncompatibleDriver(format!(
            "apiVersion {}.{} requested of a Vulkan 1.0 driver through loader interface {interface_version}",
            vk::api_version_major(requested),
            vk::api_version_minor(requested),
        )));
    }
    Ok(())
}

pub(crate) unsafe extern "system" fn create_instance(
    p_create_info: *const vk::InstanceCreateInfo<'_>,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
    p_instance: *mut vk::Instance,
) -> vk::Result {
    ffi::result("vkCreateInstance", || {
        // SAFETY: the application passes a valid create-info structure.
        let info = unsafe { ffi::read(p_create_info, "pCreateInfo") }?;
        // SAFETY: pApplicationInfo is null or valid per the spec.
        let requested =
            unsafe { ffi::read_opt(info.p_application_info) }.map_or(0, |a| a.api_version);
        check_api_version(
            entry::negotiated_interface_version(),
            requested,
            api_version(),
        )?;
        // SAFETY: ppEnabledExtensionNames holds enabledExtensionCount valid strings.
        let enabled_extensions = unsafe {
            ffi::enabled_extensions(
                info.pp_enabled_extension_names,
                info.enabled_extension_count,
                INSTANCE_EXTENSIONS,
            )
        }?;
        let instance = Dispatchable::new(Instance {
            enabled_extensions,
            physical_devices: OnceLock::new(),
        });
        // SAFETY: pInstance is a valid output pointer.
        unsafe { handles::hand_out(instance, p_instance, "pInstance") }?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    ffi::void("vkDestroyInstance", || {
        use ash::vk::Handle;
        // SAFETY: the application passes an instance it created (or null) and no longer uses it.
        drop(unsafe { handles::take::<Instance>(instance.as_raw() as *mut u8) });
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn enumerate_instance_extension_properties(
    p_layer_name: *const c_char,
    p_count: *mut u32,
    p_properties: *mut vk::ExtensionProperties,
) -> vk::Result {
    ffi::result("vkEnumerateInstanceExtensionProperties", || {
        // SAFETY: count/array pointers follow the two-call idiom contract.
        unsafe {
            ffi::fill_extension_properties(p_layer_name, INSTANCE_EXTENSIONS, p_count, p_properties)
        }
    })
}

pub(crate) unsafe extern "system" fn enumerate_instance_layer_properties(
    p_count: *mut u32,
    p_properties: *mut vk::LayerProperties,
) -> vk::Result {
    ffi::result("vkEnumerateInstanceLayerProperties", || {
        // SAFETY: count/array pointers follow the two-call idiom contract.
        unsafe { ffi::fill_array::<vk::LayerProperties>(p_count, p_properties, &[]) }
    })
}

pub(crate) unsafe extern "system" fn enumerate_instance_version(
    p_api_version: *mut u32,
) -> vk::Result {
    ffi::result("vkEnumerateInstanceVersion", || {
        // SAFETY: valid output pointer per the spec.
        unsafe { ffi::write(p_api_version, api_version(), "pApiVersion") }?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn enumerate_physical_devices(
    instance: vk::Instance,
    p_count: *mut u32,
    p_devices: *mut vk::PhysicalDevice,
) -> vk::Result {
    ffi::result("vkEnumeratePhysicalDevices", || {
        // SAFETY: a live instance per the spec.
        let inst = unsafe { Instance::from_handle(instance) }?;
        let handles = inst.physical_device_handles();
        // SAFETY: count/array pointers follow the two-call idiom contract.
        unsafe { ffi::fill_array(p_count, p_devices, &handles) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_version_above_1_0_needs_loader_interface_5() {
        let v10 = vk::API_VERSION_1_0;
        assert!(check_api_version(4, vk::API_VERSION_1_1, v10).is_err());
        assert!(check_api_version(4, v10, v10).is_ok());
        assert!(check_api_version(4, 0, v10).is_ok());
        assert!(check_api_version(5, vk::API_VERSION_1_3, v10).is_ok());
        // A 1.1 driver takes any apiVersion, whatever the loader.
        assert!(check_api_version(4, vk::API_VERSION_1_3, vk::API_VERSION_1_1).is_ok());
    }
}
