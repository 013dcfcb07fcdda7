//! Private data slots (VK_EXT_private_data, core 1.3): a u64 an application attaches to any
//! object of the device, per slot. The driver keeps them in one map per device, keyed by slot,
//! object type and handle; destroying a slot forgets its values.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use ash::vk;
use ash::vk::Handle;

use crate::device::dev;
use crate::error::{DriverError, Result};
use crate::ffi;

/// The values of one device's slots.
#[derive(Default)]
pub struct Store {
    next_slot: AtomicU64,
    values: Mutex<HashMap<(u64, i32, u64), u64>>,
    slots: Mutex<Vec<u64>>,
}

impl Store {
    fn create(&self) -> u64 {
        // Slot handles start at 1: VK_NULL_HANDLE is never a slot.
        let slot = self.next_slot.fetch_add(1, Ordering::Relaxed) + 1;
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(slot);
        slot
    }

    fn destroy(&self, slot: u64) {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&s| s != slot);
        self.values
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k, _| k.0 != slot);
    }

    fn check(&self, slot: u64) -> Result<()> {
        if self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&slot)
        {
            Ok(())
        } else {
            Err(DriverError::InvalidHandle {
                kind: "VkPrivateDataSlot",
                value: slot,
            })
        }
    }

    pub fn set(&self, ty: vk::ObjectType, handle: u64, slot: u64, value: u64) -> Result<()> {
        self.check(slot)?;
        self.values
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((slot, ty.as_raw(), handle), value);
        Ok(())
    }

    /// The value stored, or 0 when none was (the spec's answer for an unset pair).
    pub fn get(&self, ty: vk::ObjectType, handle: u64, slot: u64) -> u64 {
        self.values
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(slot, ty.as_raw(), handle))
            .copied()
            .unwrap_or(0)
    }
}

pub(crate) unsafe extern "system" fn create_private_data_slot(
    device: vk::Device,
    _p_info: *const vk::PrivateDataSlotCreateInfo<'_>,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
    p_slot: *mut vk::PrivateDataSlot,
) -> vk::Result {
    ffi::result("vkCreatePrivateDataSlot", || {
        // SAFETY: a live device per the spec.
        let slot = unsafe { dev(device) }?.core.private_data.create();
        // SAFETY: valid output pointer per the spec.
        unsafe {
            ffi::write(
                p_slot,
                vk::PrivateDataSlot::from_raw(slot),
                "pPrivateDataSlot",
            )
        }?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn destroy_private_data_slot(
    device: vk::Device,
    slot: vk::PrivateDataSlot,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    ffi::void("vkDestroyPrivateDataSlot", || {
        // SAFETY: a live device per the spec.
        unsafe { dev(device) }?
            .core
            .private_data
            .destroy(slot.as_raw());
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn set_private_data(
    device: vk::Device,
    ty: vk::ObjectType,
    handle: u64,
    slot: vk::PrivateDataSlot,
    data: u64,
) -> vk::Result {
    ffi::result("vkSetPrivateData", || {
        // SAFETY: a live device per the spec.
        unsafe { dev(device) }?
            .core
            .private_data
            .set(ty, handle, slot.as_raw(), data)?;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn get_private_data(
    device: vk::Device,
    ty: vk::ObjectType,
    handle: u64,
    slot: vk::PrivateDataSlot,
    p_data: *mut u64,
) {
    ffi::void("vkGetPrivateData", || {
        // SAFETY: a live device per the spec.
        let v = unsafe { dev(device) }?
            .core
            .private_data
            .get(ty, handle, slot.as_raw());
        // SAFETY: valid output pointer per the spec.
        unsafe { ffi::write(p_data, v, "pData") }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_per_slot_and_object_and_forgotten_with_the_slot() {
        let s = Store::default();
        let (a, b) = (s.create(), s.create());
        assert_ne!(a, b);
        s.set(vk::ObjectType::BUFFER, 7, a, 11).unwrap();
        s.set(vk::ObjectType::BUFFER, 7, b, 22).unwrap();
        s.set(vk::ObjectType::FENCE, 7, a, 33).unwrap();
        assert_eq!(s.get(vk::ObjectType::BUFFER, 7, a), 11);
        assert_eq!(s.get(vk::ObjectType::BUFFER, 7, b), 22);
        assert_eq!(s.get(vk::ObjectType::FENCE, 7, a), 33);
        assert_eq!(s.get(vk::ObjectType::BUFFER, 8, a), 0);
        s.destroy(a);
        assert_eq!(s.get(vk::ObjectType::BUFFER, 7, a), 0);
        assert!(s.set(vk::ObjectType::BUFFER, 7, a, 1).is_err());
        assert_eq!(s.get(vk::ObjectType::BUFFER, 7, b), 22);
    }
}
