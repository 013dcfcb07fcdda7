//! Handles.
//!
//! Dispatchable handles (VkInstance, VkPhysicalDevice, VkDevice, VkQueue) point at a
//! [`Dispatchable`]: the loader's slot first, then the object. The loader overwrites the slot with
//! its dispatch table, so the driver never reads it after creation.
//!
//! Non-dispatchable handles are ids into a [`Registry`]: looking one up is safe, a stale or
//! foreign id is an error instead of undefined behaviour. Ids are unique across the process
//! (validation layers key their object tracking by handle value).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::error::{DriverError, Result};

/// `ICD_LOADER_MAGIC` from vk_icd.h: what the loader expects in the first word of a fresh
/// dispatchable object.
pub const ICD_LOADER_MAGIC: usize = 0x01CD_C0DE;

#[repr(C)]
pub struct Dispatchable<T> {
    /// Written by the loader behind our back (its dispatch table pointer); atomic so that the
    /// foreign write through a shared pointer is not a data race on a plain field.
    loader_slot: AtomicUsize,
    pub obj: T,
}

impl<T> Dispatchable<T> {
    pub fn new(obj: T) -> Box<Self> {
        Box::new(Self::inline(obj))
    }

    /// For objects the driver keeps inside another one (physical devices).
    pub fn inline(obj: T) -> Self {
        Dispatchable {
            loader_slot: AtomicUsize::new(ICD_LOADER_MAGIC),
            obj,
        }
    }

    /// Whether the loader slot still holds the magic (true until the loader patches it).
    pub fn has_magic(&self) -> bool {
        self.loader_slot.load(Ordering::Relaxed) == ICD_LOADER_MAGIC
    }
}

/// Turns a boxed object into its raw handle pointer; ownership passes to the application.
pub fn into_raw<T>(b: Box<Dispatchable<T>>) -> *mut u8 {
    Box::into_raw(b).cast()
}

/// Hands a new dispatchable object to the application through its output pointer
/// (vkCreateInstance, vkCreateDevice); when that write fails the object is taken back and
/// dropped, so nothing is left behind.
///
/// # Safety
/// `p_out` must be null or valid for writes, as the spec requires of output handles.
pub unsafe fn hand_out<T, H: ash::vk::Handle>(
    b: Box<Dispatchable<T>>,
    p_out: *mut H,
    what: &'static str,
) -> Result<()> {
    let raw = into_raw(b);
    // SAFETY: the caller's contract on `p_out`.
    if let Err(e) = unsafe { crate::ffi::write(p_out, H::from_raw(raw as u64), what) } {
        // SAFETY: raw was made just above and never handed out.
        drop(unsafe { take::<T>(raw) });
        return Err(e);
    }
    Ok(())
}

/// The handle of an object that stays owned by the driver (physical devices, queues).
pub fn as_raw<T>(d: &Dispatchable<T>) -> *mut u8 {
    (d as *const Dispatchable<T>).cast_mut().cast()
}

/// Borrows the object behind a dispatchable handle.
///
/// # Safety
/// `h` must be null or a handle made by [`into_raw`] for a `Dispatchable<T>` still alive for `'a`.
pub unsafe fn borrow<'a, T>(h: *mut u8, kind: &'static str) -> Result<&'a T> {
    let p = h.cast::<Dispatchable<T>>();
    // A match, not `ok_or`: the error is built (and dropped) only when it is one.
    // SAFETY: by the caller's contract p is null or a live Dispatchable<T>.
    match unsafe { p.as_ref() } {
        Some(d) => Ok(&d.obj),
        None => Err(DriverError::InvalidHandle { kind, value: 0 }),
    }
}

/// Takes ownership back from a dispatchable handle (destroy).
///
/// # Safety
/// `h` must be null or a handle made by [`into_raw`] for a `Dispatchable<T>` not yet taken back,
/// and no other reference to it may be in use.
pub unsafe fn take<T>(h: *mut u8) -> Option<Box<Dispatchable<T>>> {
    if h.is_null() {
        return None;
    }
    // SAFETY: by the caller's contract this is the pointer Box::into_raw returned.
    Some(unsafe { Box::from_raw(h.cast::<Dispatchable<T>>()) })
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Non-dispatchable objects of one kind, by id.
pub struct Registry<T> {
    kind: &'static str,
    /// Ids are sequential and made here, so the Fx hash suits them (a look-up is on every
    /// submission's path).
    map: Mutex<FxHashMap<u64, Arc<T>>>,
}

impl<T> Registry<T> {
    fn invalid(&self, id: u64) -> DriverError {
        DriverError::InvalidHandle {
            kind: self.kind,
            value: id,
        }
    }

    pub fn new(kind: &'static str) -> Self {
        Registry {
            kind,
            map: Mutex::new(FxHashMap::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<u64, Arc<T>>> {
        // A panic while holding the lock cannot leave the map half-updated (single insert/remove).
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn insert(&self, obj: T) -> u64 {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, Arc::new(obj));
        id
    }

    /// Inserts an object and writes its handle through the application's output pointer; when
    /// that pointer is null the object is removed again, so nothing is left behind.
    ///
    /// # Safety
    /// `p_out` must be null or valid for writes, as the spec requires of output handles.
    pub unsafe fn publish<H: ash::vk::Handle>(
        &self,
        obj: T,
        p_out: *mut H,
        what: &'static str,
    ) -> Result<ash::vk::Result> {
        let id = self.insert(obj);
        // SAFETY: the caller's contract on `p_out`.
        if let Err(e) = unsafe { crate::ffi::write(p_out, H::from_raw(id), what) } {
            self.remove(id)?;
            return Err(e);
        }
        Ok(ash::vk::Result::SUCCESS)
    }

    pub fn get(&self, id: u64) -> Result<Arc<T>> {
        // A match, not `ok_or`: the error is built (and dropped) only when it is one.
        match self.lock().get(&id) {
            Some(o) => Ok(o.clone()),
            None => Err(self.invalid(id)),
        }
    }

    /// Removes an object; destroying `VK_NULL_HANDLE` is allowed and removes nothing.
    pub fn remove(&self, id: u64) -> Result<Option<Arc<T>>> {
        if id == 0 {
            return Ok(None);
        }
        match self.lock().remove(&id) {
            Some(o) => Ok(Some(o)),
            None => Err(self.invalid(id)),
        }
    }

    /// Every live object (a snapshot).
    pub fn values(&self) -> Vec<Arc<T>> {
        self.lock().values().cloned().collect()
    }

    /// Calls `f` on every live object, under the registry's lock (no snapshot allocated).
    pub fn for_each(&self, mut f: impl FnMut(&T)) {
        for v in self.lock().values() {
            f(v);
        }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the registry (device destruction), returning how many objects were still alive.
    pub fn drain(&self) -> usize {
        let objs: Vec<_> = self.lock().drain().collect();
        objs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_ids_unique_and_stale_ids_rejected() {
        let r = Registry::new("thing");
        let a = r.insert(1u32);
        let b = r.insert(2u32);
        assert_ne!(a, b);
        assert_eq!(*r.get(b).unwrap(), 2);
        assert!(r.remove(a).unwrap().is_some());
        assert!(r.get(a).is_err());
        assert!(r.remove(a).is_err());
        assert!(r.remove(0).unwrap().is_none());
        assert_eq!(r.drain(), 1);
        assert!(r.is_empty());
    }

    #[test]
    fn dispatchable_starts_with_loader_magic() {
        let d = Dispatchable::new(7u64);
        assert!(d.has_magic());
        let raw = into_raw(d);
        // SAFETY: raw came from into_raw just above; its first word is the loader slot.
        let first = unsafe { raw.cast::<usize>().read() };
        assert_eq!(first, ICD_LOADER_MAGIC);
        // SAFETY: raw is live and of this type.
        assert_eq!(*unsafe { borrow::<u64>(raw, "test") }.unwrap(), 7);
        // SAFETY: taken back exactly once.
        drop(unsafe { take::<u64>(raw) });
    }
}
