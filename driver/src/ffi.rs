//! The FFI edge: the one wrapper every entry point goes through, and the helpers that turn the
//! raw pointers Vulkan passes into references. `unsafe` in the driver lives here and in the
//! entry-point bodies that call these helpers.

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use ash::vk;

use crate::debug::{self, Flag};
use crate::error::{DriverError, Result};

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// Runs an entry point body: catches panics, logs errors with the entry point's name, and
/// returns what the caller must see (`on_error` builds it from the error).
pub fn run<T>(
    name: &'static str,
    on_error: impl FnOnce(&DriverError) -> T,
    body: impl FnOnce() -> Result<T>,
) -> T {
    debug::init();
    if debug::enabled(Flag::Api) {
        log::info!("{name}");
    }
    let outcome = catch_unwind(AssertUnwindSafe(body))
        .unwrap_or_else(|payload| Err(DriverError::Panic(panic_message(payload.as_ref()))));
    match outcome {
        Ok(value) => value,
        Err(e) => {
            log::log!(e.log_level(), "{name}: {e}");
            on_error(&e)
        }
    }
}

/// For entry points returning `VkResult`.
pub fn result(name: &'static str, body: impl FnOnce() -> Result<vk::Result>) -> vk::Result {
    run(name, |e| e.result_in(name), body)
}

/// For entry points returning nothing: errors are logged, the application sees nothing.
pub fn void(name: &'static str, body: impl FnOnce() -> Result<()>) {
    run(name, |_| (), body)
}

/// Reads `*p` where Vulkan guarantees a valid pointer (checked for null).
///
/// # Safety
/// `p` must be null or point to a valid, initialised `T` that outlives `'a`.
pub unsafe fn read<'a, T>(p: *const T, what: &'static str) -> Result<&'a T> {
    // SAFETY: the caller guarantees p is null or valid for 'a.
    unsafe { p.as_ref() }.ok_or(DriverError::NullPointer(what))
}

/// Reads an optional `*p` (null allowed).
///
/// # Safety
/// `p` must be null or point to a valid, initialised `T` that outlives `'a`.
pub unsafe fn read_opt<'a, T>(p: *const T) -> Option<&'a T> {
    // SAFETY: the caller guarantees p is null or valid for 'a.
    unsafe { p.as_ref() }
}

/// A slice `(p, count)`; a null `p` is allowed only with `count == 0`.
///
/// # Safety
/// `p` must point to `count` valid `T`s that outlive `'a` (or be null with `count == 0`).
pub unsafe fn slice<'a, T>(p: *const T, count: u32, what: &'static str) -> Result<&'a [T]> {
    if count == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(DriverError::NullPointer(what));
    }
    // SAFETY: p is non-null and the caller guarantees count valid elements.
    Ok(unsafe { std::slice::from_raw_parts(p, count as usize) })
}

/// Writes `value` to the output pointer `p`.
///
/// # Safety
/// `p` must be null or valid for writing a `T`.
pub unsafe fn write<T>(p: *mut T, value: T, what: &'static str) -> Result<()> {
    if p.is_null() {
        return Err(DriverError::NullPointer(what));
    }
    // SAFETY: non-null and valid for writes by the caller's contract; T needs no drop of the old
    // value because Vulkan output structs are plain data.
    unsafe { p.write(value) };
    Ok(())
}

/// A NUL-terminated string from Vulkan.
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string that outlives `'a`.
pub unsafe fn cstr<'a>(p: *const c_char, what: &'static str) -> Result<&'a str> {
    if p.is_null() {
        return Err(DriverError::NullPointer(what));
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map_err(|_| DriverError::InvalidArgument(format!("{what} is not UTF-8")))
}

/// The extension names of a create info (`ppEnabledExtensionNames`, `count` of them), each
/// one of `supported` (else `ExtensionNotPresent`): what vkCreateInstance and vkCreateDevice
/// enable.
///
/// # Safety
/// `names` must hold `count` NUL-terminated strings (or `count` be 0).
pub unsafe fn enabled_extensions(
    names: *const *const c_char,
    count: u32,
    supported: &[(&str, u32)],
) -> Result<Vec<String>> {
    // SAFETY: forwarded caller contract.
    let names = unsafe { slice(names, count, "ppEnabledExtensionNames") }?;
    let mut enabled = Vec::with_capacity(names.len());
    for &p in names {
        // SAFETY: each element is a NUL-terminated string by the caller's contract.
        let name = unsafe { cstr(p, "extension name") }?;
        if !supported.iter().any(|(n, _)| *n == name) {
            return Err(DriverError::ExtensionNotPresent(name.to_string()));
        }
        enabled.push(name.to_string());
    }
    Ok(enabled)
}

/// The Vulkan "two-call" idiom: with a null `p_items` store the count, otherwise copy up to
/// `*p_count` items, store how many were written and return `VK_INCOMPLETE` if that was not all.
///
/// # Safety
/// `p_count` must be valid for reads and writes; `p_items` null or valid for `*p_count` writes.
pub unsafe fn fill_array<T: Clone>(
    p_count: *mut u32,
    p_items: *mut T,
    items: &[T],
) -> Result<vk::Result> {
    if p_count.is_null() {
        return Err(DriverError::NullPointer("pCount"));
    }
    let total = u32::try_from(items.len())
        .map_err(|_| DriverError::InvalidArgument("too many items".into()))?;
    if p_items.is_null() {
        // SAFETY: p_count is non-null and valid by the caller's contract.
        unsafe { p_count.write(total) };
        return Ok(vk::Result::SUCCESS);
    }
    // SAFETY: p_count is non-null and valid by the caller's contract.
    let capacity = unsafe { p_count.read() };
    let n = capacity.min(total);
    for (i, item) in items.iter().take(n as usize).enumerate() {
        // SAFETY: i < capacity, and p_items holds capacity writable elements.
        unsafe { p_items.add(i).write(item.clone()) };
    }
    // SAFETY: as above.
    unsafe { p_count.write(n) };
    Ok(if n < total {
        vk::Result::INCOMPLETE
    } else {
        vk::Result::SUCCESS
    })
}

/// vkEnumerateInstanceExtensionProperties / vkEnumerateDeviceExtensionProperties: the
/// `supported` (name, spec version) table through the two-call idiom; a named layer has no
/// extensions of ours (`VK_ERROR_LAYER_NOT_PRESENT`).
///
/// # Safety
/// As [`fill_array`]; `p_layer_name` is only compared with null.
pub unsafe fn fill_extension_properties(
    p_layer_name: *const c_char,
    supported: &[(&str, u32)],
    p_count: *mut u32,
    p_props: *mut vk::ExtensionProperties,
) -> Result<vk::Result> {
    if !p_layer_name.is_null() {
        return Ok(vk::Result::ERROR_LAYER_NOT_PRESENT);
    }
    let props: Vec<_> = supported
        .iter()
        .map(|(name, spec_version)| vk::ExtensionProperties {
            extension_name: name_array(name),
            spec_version: *spec_version,
        })
        .collect();
    // SAFETY: forwarded caller contract.
    unsafe { fill_array(p_count, p_props, &props) }
}

/// Walks a `pNext` chain looking for a structure of type `ty`.
///
/// # Safety
/// `p_next` must be null or the head of a valid Vulkan structure chain.
pub unsafe fn find_in_chain(
    p_next: *const std::ffi::c_void,
    ty: vk::StructureType,
) -> Option<*const vk::BaseInStructure<'static>> {
    let mut p = p_next as *const vk::BaseInStructure<'static>;
    while !p.is_null() {
        // SAFETY: every chain element starts with sType/pNext (BaseInStructure) per the spec.
        let base = unsafe { &*p };
        if base.s_type == ty {
            return Some(p);
        }
        p = base.p_next;
    }
    None
}

/// Copies `s` into a fixed-size, NUL-terminated Vulkan name array (truncating if needed).
pub fn name_array<const N: usize>(s: &str) -> [c_char; N] {
    let mut out = [0 as c_char; N];
    for (o, b) in out.iter_mut().zip(s.bytes().take(N - 1)) {
        *o = b as c_char;
    }
    out
}

#[cfg(test)]
fn name_str(chars: &[c_char]) -> String {
    chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8 as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors_not_unwinds() {
        let r = result("vkTest", || panic!("boom"));
        assert_eq!(r, vk::Result::ERROR_UNKNOWN);
        let r = result("vkQueueSubmit", || panic!("boom"));
        assert_eq!(r, vk::Result::ERROR_DEVICE_LOST);
    }

    #[test]
    fn fill_array_two_call_idiom_and_incomplete() {
        let items = [1u32, 2, 3];
        let mut count = 0u32;
        // SAFETY: count is a valid u32, items pointer null.
        let r = unsafe { fill_array(&mut count, std::ptr::null_mut(), &items) }.unwrap();
        assert_eq!((r, count), (vk::Result::SUCCESS, 3));
        let mut out = [0u32; 2];
        count = 2;
        // SAFETY: out holds `count` elements.
        let r = unsafe { fill_array(&mut count, out.as_mut_ptr(), &items) }.unwrap();
        assert_eq!((r, count, out), (vk::Result::INCOMPLETE, 2, [1, 2]));
    }

    #[test]
    fn name_array_round_trips_and_terminates() {
        let a: [c_char; 8] = name_array("abcdefghij");
        assert_eq!(name_str(&a), "abcdefg");
        assert_eq!(a[7], 0);
    }
}
