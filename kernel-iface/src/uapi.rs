//! The i915 and DRM-core uAPI as `repr(C)` Rust types, constants and ioctl request numbers.
//!
//! Layouts follow `include/uapi/drm/i915_drm.h` and `include/uapi/drm/drm.h` (as shipped by
//! libdrm in `/usr/include/libdrm`); the test `c_probe` compiles a C program against those
//! headers and checks every size, field offset and request number below.
//!
//! Pointers that the kernel reads are `u64` user addresses, as in the headers. The two
//! structs whose headers use real C pointers (`drm_i915_getparam`, `drm_version`) are written
//! with pointer-sized integers; this crate only supports 64-bit targets.

#![allow(non_camel_case_types, non_snake_case)]

#[cfg(not(target_pointer_width = "64"))]
compile_error!("ferrite-kernel-iface supports 64-bit targets only (the uAPI layouts assume LP64)");

// ---------------------------------------------------------------------------------------------
// Request number encoding (asm-generic/ioctl.h, used by x86-64 and aarch64).

const IOC_NRBITS: u64 = 8;
const IOC_TYPEBITS: u64 = 8;
const IOC_SIZEBITS: u64 = 14;
const IOC_NRSHIFT: u64 = 0;
const IOC_TYPESHIFT: u64 = IOC_NRSHIFT + IOC_NRBITS;
const IOC_SIZESHIFT: u64 = IOC_TYPESHIFT + IOC_TYPEBITS;
const IOC_DIRSHIFT: u64 = IOC_SIZESHIFT + IOC_SIZEBITS;
const IOC_WRITE: u64 = 1;
const IOC_READ: u64 = 2;

/// `DRM_IOCTL_BASE`
pub const DRM_IOCTL_BASE: u64 = b'd' as u64;
/// First driver-private ioctl number.
pub const DRM_COMMAND_BASE: u64 = 0x40;

const fn ioc(dir: u64, nr: u64, size: usize) -> u64 {
    (dir << IOC_DIRSHIFT)
        | ((size as u64) << IOC_SIZESHIFT)
        | (DRM_IOCTL_BASE << IOC_TYPESHIFT)
        | (nr << IOC_NRSHIFT)
}
/// `DRM_IOW(nr, T)`: userspace writes, the kernel only reads.
pub const fn drm_iow<T>(nr: u64) -> u64 {
    ioc(IOC_WRITE, nr, std::mem::size_of::<T>())
}
/// `DRM_IOWR(nr, T)`: the kernel reads the struct and writes it back.
pub const fn drm_iowr<T>(nr: u64) -> u64 {
    ioc(IOC_READ | IOC_WRITE, nr, std::mem::size_of::<T>())
}
/// Size of the argument encoded in a request number.
pub const fn ioc_size(request: u64) -> usize {
    ((request >> IOC_SIZESHIFT) & ((1 << IOC_SIZEBITS) - 1)) as usize
}
/// Whether the kernel copies the argument back to userspace (`_IOC_READ`).
pub const fn ioc_is_read(request: u64) -> bool {
    (request >> IOC_DIRSHIFT) & IOC_READ != 0
}

/// Ties an argument struct to its ioctl request number.
///
/// # Safety
/// `REQUEST` must be the request whose argument type is exactly `Self` (the encoded size
/// must be `size_of::<Self>()`), so that the kernel (or the simulated kernel) reads and writes
/// only memory that belongs to `Self`.
pub unsafe trait Ioctl: Sized {
    /// The ioctl request number.
    const REQUEST: u64;
    /// The uAPI name, for error messages and logs.
    const NAME: &'static str;
}

macro_rules! ioctl {
    ($ty:ty, $name:ident, $req:expr) => {
        #[doc = concat!("`", stringify!($name), "`")]
        pub const $name: u64 = $req;
        // SAFETY: the request is built from `size_of::<$ty>()`, and the C probe test checks
        // that it equals the header's definition.
        unsafe impl Ioctl for $ty {
            const REQUEST: u64 = $name;
            const NAME: &'static str = stringify!($name);
        }
    };
}

/// Declares a `repr(transparent)` wrapper for a struct that several ioctls share, so that each
/// request still has exactly one argument type.
macro_rules! shared_arg {
    ($(#[$m:meta])* $wrapper:ident($inner:ty)) => {
        $(#[$m])*
        #[repr(transparent)]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $wrapper(pub $inner);
    };
}

// ---------------------------------------------------------------------------------------------
// DRM core

/// `struct drm_version` (pointers as user addresses).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_version {
    pub version_major: i32,
    pub version_minor: i32,
    pub version_patchlevel: i32,
    pub name_len: u64,
    pub name: u64,
    pub date_len: u64,
    pub date: u64,
    pub desc_len: u64,
    pub desc: u64,
}

/// `struct drm_gem_close`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_gem_close {
    pub handle: u32,
    pub pad: u32,
}

/// `struct drm_get_cap`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_get_cap {
    pub capability: u64,
    pub value: u64,
}
pub const DRM_CAP_SYNCOBJ: u64 = 0x13;
pub const DRM_CAP_SYNCOBJ_TIMELINE: u64 = 0x14;

/// `struct drm_syncobj_create`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_syncobj_create {
    pub handle: u32,
    pub flags: u32,
}
pub const DRM_SYNCOBJ_CREATE_SIGNALED: u32 = 1 << 0;

/// `struct drm_syncobj_destroy`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_syncobj_destroy {
    pub handle: u32,
    pub pad: u32,
}

/// `struct drm_syncobj_transfer`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_syncobj_transfer {
    pub src_handle: u32,
    pub dst_handle: u32,
    pub src_point: u64,
    pub dst_point: u64,
    pub flags: u32,
    pub pad: u32,
}

pub const DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL: u32 = 1 << 0;
pub const DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT: u32 = 1 << 1;
pub const DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE: u32 = 1 << 2;

/// `struct drm_syncobj_wait`; `timeout_nsec` is absolute CLOCK_MONOTONIC.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_syncobj_wait {
    pub handles: u64,
    pub timeout_nsec: i64,
    pub count_handles: u32,
    pub flags: u32,
    pub first_signaled: u32,
    pub pad: u32,
}

/// `struct drm_syncobj_timeline_wait`; `timeout_nsec` is absolute CLOCK_MONOTONIC.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_syncobj_timeline_wait {
    pub handles: u64,
    pub points: u64,
    pub timeout_nsec: i64,
    pub count_handles: u32,
    pub flags: u32,
    pub first_signaled: u32,
    pub pad: u32,
}

/// `struct drm_syncobj_array`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_syncobj_array {
    pub handles: u64,
    pub count_handles: u32,
    pub pad: u32,
}

pub const DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED: u32 = 1 << 0;

/// `struct drm_syncobj_timeline_array`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_syncobj_timeline_array {
    pub handles: u64,
    pub points: u64,
    pub count_handles: u32,
    pub flags: u32,
}

shared_arg!(
    /// Argument of `DRM_IOCTL_SYNCOBJ_RESET`.
    SyncobjReset(drm_syncobj_array)
);
shared_arg!(
    /// Argument of `DRM_IOCTL_SYNCOBJ_SIGNAL`.
    SyncobjSignal(drm_syncobj_array)
);
shared_arg!(
    /// Argument of `DRM_IOCTL_SYNCOBJ_QUERY`.
    SyncobjQuery(drm_syncobj_timeline_array)
);
shared_arg!(
    /// Argument of `DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL`.
    SyncobjTimelineSignal(drm_syncobj_timeline_array)
);

ioctl!(
    drm_version,
    DRM_IOCTL_VERSION,
    drm_iowr::<drm_version>(0x00)
);
ioctl!(
    drm_get_cap,
    DRM_IOCTL_GET_CAP,
    drm_iowr::<drm_get_cap>(0x0C)
);
ioctl!(
    drm_gem_close,
    DRM_IOCTL_GEM_CLOSE,
    drm_iow::<drm_gem_close>(0x09)
);
ioctl!(
    drm_syncobj_create,
    DRM_IOCTL_SYNCOBJ_CREATE,
    drm_iowr::<drm_syncobj_create>(0xBF)
);
ioctl!(
    drm_syncobj_destroy,
    DRM_IOCTL_SYNCOBJ_DESTROY,
    drm_iowr::<drm_syncobj_destroy>(0xC0)
);
ioctl!(
    drm_syncobj_wait,
    DRM_IOCTL_SYNCOBJ_WAIT,
    drm_iowr::<drm_syncobj_wait>(0xC3)
);
ioctl!(
    SyncobjReset,
    DRM_IOCTL_SYNCOBJ_RESET,
    drm_iowr::<drm_syncobj_array>(0xC4)
);
ioctl!(
    SyncobjSignal,
    DRM_IOCTL_SYNCOBJ_SIGNAL,
    drm_iowr::<drm_syncobj_array>(0xC5)
);
ioctl!(
    drm_syncobj_timeline_wait,
    DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT,
    drm_iowr::<drm_syncobj_timeline_wait>(0xCA)
);
ioctl!(
    SyncobjQuery,
    DRM_IOCTL_SYNCOBJ_QUERY,
    drm_iowr::<drm_syncobj_timeline_array>(0xCB)
);
ioctl!(
    drm_syncobj_transfer,
    DRM_IOCTL_SYNCOBJ_TRANSFER,
    drm_iowr::<drm_syncobj_transfer>(0xCC)
);
ioctl!(
    SyncobjTimelineSignal,
    DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
    drm_iowr::<drm_syncobj_timeline_array>(0xCD)
);

// ---------------------------------------------------------------------------------------------
// i915: ioctl numbers (offsets from DRM_COMMAND_BASE)

pub const DRM_I915_GETPARAM: u64 = 0x06;
pub const DRM_I915_GEM_CREATE: u64 = 0x1b;
pub const DRM_I915_GEM_SET_DOMAIN: u64 = 0x1f;
pub const DRM_I915_GEM_MMAP_GTT: u64 = 0x24;
pub const DRM_I915_GEM_EXECBUFFER2: u64 = 0x29;
pub const DRM_I915_GEM_WAIT: u64 = 0x2c;
pub const DRM_I915_GEM_CONTEXT_CREATE: u64 = 0x2d;
pub const DRM_I915_GEM_CONTEXT_DESTROY: u64 = 0x2e;
pub const DRM_I915_GET_RESET_STATS: u64 = 0x32;
pub const DRM_I915_GEM_CONTEXT_GETPARAM: u64 = 0x34;
pub const DRM_I915_GEM_CONTEXT_SETPARAM: u64 = 0x35;
pub const DRM_I915_QUERY: u64 = 0x39;
pub const DRM_I915_GEM_CREATE_EXT: u64 = 0x3c;

/// `struct i915_user_extension`: the head of every extension in a chain.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct i915_user_extension {
    pub next_extension: u64,
    pub name: u32,
    pub flags: u32,
    pub rsvd: [u32; 4],
}

/// `struct i915_engine_class_instance`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct i915_engine_class_instance {
    pub engine_class: u16,
    pub engine_instance: u16,
}
pub const I915_ENGINE_CLASS_RENDER: u16 = 0;
pub const I915_ENGINE_CLASS_COPY: u16 = 1;
pub const I915_ENGINE_CLASS_VIDEO: u16 = 2;
pub const I915_ENGINE_CLASS_VIDEO_ENHANCE: u16 = 3;
pub const I915_ENGINE_CLASS_COMPUTE: u16 = 4;

// GETPARAM
pub const I915_PARAM_CHIPSET_ID: i32 = 4;
pub const I915_PARAM_HAS_EXECBUF2: i32 = 9;
pub const I915_PARAM_HAS_LLC: i32 = 17;
pub const I915_PARAM_HAS_WAIT_TIMEOUT: i32 = 19;
pub const I915_PARAM_HAS_EXEC_NO_RELOC: i32 = 25;
pub const I915_PARAM_HAS_EXEC_HANDLE_LUT: i32 = 26;
pub const I915_PARAM_MMAP_VERSION: i32 = 30;
pub const I915_PARAM_REVISION: i32 = 32;
pub const I915_PARAM_SUBSLICE_TOTAL: i32 = 33;
pub const I915_PARAM_EU_TOTAL: i32 = 34;
pub const I915_PARAM_HAS_GPU_RESET: i32 = 35;
pub const I915_PARAM_HAS_EXEC_SOFTPIN: i32 = 37;
pub const I915_PARAM_MMAP_GTT_VERSION: i32 = 40;
pub const I915_PARAM_HAS_SCHEDULER: i32 = 41;
pub const I915_PARAM_HAS_EXEC_ASYNC: i32 = 43;
pub const I915_PARAM_HAS_EXEC_FENCE: i32 = 44;
pub const I915_PARAM_HAS_EXEC_CAPTURE: i32 = 45;
pub const I915_PARAM_SLICE_MASK: i32 = 46;
pub const I915_PARAM_SUBSLICE_MASK: i32 = 47;
pub const I915_PARAM_HAS_EXEC_BATCH_FIRST: i32 = 48;
pub const I915_PARAM_HAS_EXEC_FENCE_ARRAY: i32 = 49;
pub const I915_PARAM_HAS_CONTEXT_ISOLATION: i32 = 50;
pub const I915_PARAM_CS_TIMESTAMP_FREQUENCY: i32 = 51;
pub const I915_PARAM_MMAP_GTT_COHERENT: i32 = 52;
pub const I915_PARAM_HAS_EXEC_SUBMIT_FENCE: i32 = 53;
pub const I915_PARAM_HAS_EXEC_TIMELINE_FENCES: i32 = 55;

pub const I915_SCHEDULER_CAP_ENABLED: i32 = 1 << 0;
pub const I915_SCHEDULER_CAP_PRIORITY: i32 = 1 << 1;

/// `struct drm_i915_getparam` (`value` is an `int *` user address).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_getparam {
    pub param: i32,
    pub value: u64,
}
ioctl!(
    drm_i915_getparam,
    DRM_IOCTL_I915_GETPARAM,
    drm_iowr::<drm_i915_getparam>(DRM_COMMAND_BASE + DRM_I915_GETPARAM)
);

/// `struct drm_i915_gem_create`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_create {
    pub size: u64,
    pub handle: u32,
    pub pad: u32,
}
ioctl!(
    drm_i915_gem_create,
    DRM_IOCTL_I915_GEM_CREATE,
    drm_iowr::<drm_i915_gem_create>(DRM_COMMAND_BASE + DRM_I915_GEM_CREATE)
);

pub const I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS: u32 = 1 << 0;
pub const I915_GEM_CREATE_EXT_MEMORY_REGIONS: u32 = 0;
pub const I915_GEM_CREATE_EXT_PROTECTED_CONTENT: u32 = 1;

/// `struct drm_i915_gem_create_ext`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_create_ext {
    pub size: u64,
    pub handle: u32,
    pub flags: u32,
    pub extensions: u64,
}
ioctl!(
    drm_i915_gem_create_ext,
    DRM_IOCTL_I915_GEM_CREATE_EXT,
    drm_iowr::<drm_i915_gem_create_ext>(DRM_COMMAND_BASE + DRM_I915_GEM_CREATE_EXT)
);

pub const I915_MMAP_OFFSET_GTT: u64 = 0;
pub const I915_MMAP_OFFSET_WC: u64 = 1;
pub const I915_MMAP_OFFSET_WB: u64 = 2;
pub const I915_MMAP_OFFSET_UC: u64 = 3;
pub const I915_MMAP_OFFSET_FIXED: u64 = 4;

/// `struct drm_i915_gem_mmap_offset`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_mmap_offset {
    pub handle: u32,
    pub pad: u32,
    pub offset: u64,
    pub flags: u64,
    pub extensions: u64,
}
ioctl!(
    drm_i915_gem_mmap_offset,
    DRM_IOCTL_I915_GEM_MMAP_OFFSET,
    drm_iowr::<drm_i915_gem_mmap_offset>(DRM_COMMAND_BASE + DRM_I915_GEM_MMAP_GTT)
);

pub const I915_GEM_DOMAIN_CPU: u32 = 0x01;
pub const I915_GEM_DOMAIN_RENDER: u32 = 0x02;
pub const I915_GEM_DOMAIN_SAMPLER: u32 = 0x04;
pub const I915_GEM_DOMAIN_COMMAND: u32 = 0x08;
pub const I915_GEM_DOMAIN_INSTRUCTION: u32 = 0x10;
pub const I915_GEM_DOMAIN_VERTEX: u32 = 0x20;
pub const I915_GEM_DOMAIN_GTT: u32 = 0x40;
pub const I915_GEM_DOMAIN_WC: u32 = 0x80;

/// `struct drm_i915_gem_set_domain`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_set_domain {
    pub handle: u32,
    pub read_domains: u32,
    pub write_domain: u32,
}
ioctl!(
    drm_i915_gem_set_domain,
    DRM_IOCTL_I915_GEM_SET_DOMAIN,
    drm_iow::<drm_i915_gem_set_domain>(DRM_COMMAND_BASE + DRM_I915_GEM_SET_DOMAIN)
);

// Exec objects
pub const EXEC_OBJECT_NEEDS_FENCE: u64 = 1 << 0;
pub const EXEC_OBJECT_NEEDS_GTT: u64 = 1 << 1;
pub const EXEC_OBJECT_WRITE: u64 = 1 << 2;
pub const EXEC_OBJECT_SUPPORTS_48B_ADDRESS: u64 = 1 << 3;
pub const EXEC_OBJECT_PINNED: u64 = 1 << 4;
pub const EXEC_OBJECT_PAD_TO_SIZE: u64 = 1 << 5;
pub const EXEC_OBJECT_ASYNC: u64 = 1 << 6;
pub const EXEC_OBJECT_CAPTURE: u64 = 1 << 7;
/// `__EXEC_OBJECT_UNKNOWN_FLAGS`
pub const EXEC_OBJECT_UNKNOWN_FLAGS: u64 = (EXEC_OBJECT_CAPTURE << 1).wrapping_neg();

/// `struct drm_i915_gem_relocation_entry`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_relocation_entry {
    pub target_handle: u32,
    pub delta: u32,
    pub offset: u64,
    pub presumed_offset: u64,
    pub read_domains: u32,
    pub write_domain: u32,
}

/// `struct drm_i915_gem_exec_object2` (`rsvd1` is the union with `pad_to_size`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_exec_object2 {
    pub handle: u32,
    pub relocation_count: u32,
    pub relocs_ptr: u64,
    pub alignment: u64,
    pub offset: u64,
    pub flags: u64,
    pub rsvd1: u64,
    pub rsvd2: u64,
}

pub const I915_EXEC_FENCE_WAIT: u32 = 1 << 0;
pub const I915_EXEC_FENCE_SIGNAL: u32 = 1 << 1;
/// `__I915_EXEC_FENCE_UNKNOWN_FLAGS`
pub const I915_EXEC_FENCE_UNKNOWN_FLAGS: u32 = (I915_EXEC_FENCE_SIGNAL << 1).wrapping_neg();

/// `struct drm_i915_gem_exec_fence`: one entry of an `I915_EXEC_FENCE_ARRAY` or of the
/// timeline-fences extension; `handle` is a syncobj.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_exec_fence {
    pub handle: u32,
    pub flags: u32,
}

pub const DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES: u32 = 0;

/// `struct drm_i915_gem_execbuffer_ext_timeline_fences`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_execbuffer_ext_timeline_fences {
    pub base: i915_user_extension,
    pub fence_count: u64,
    pub handles_ptr: u64,
    pub values_ptr: u64,
}

pub const I915_EXEC_RING_MASK: u64 = 0x3f;
pub const I915_EXEC_DEFAULT: u64 = 0;
pub const I915_EXEC_RENDER: u64 = 1;
pub const I915_EXEC_BSD: u64 = 2;
pub const I915_EXEC_BLT: u64 = 3;
pub const I915_EXEC_VEBOX: u64 = 4;
pub const I915_EXEC_CONSTANTS_MASK: u64 = 3 << 6;
pub const I915_EXEC_GEN7_SOL_RESET: u64 = 1 << 8;
pub const I915_EXEC_SECURE: u64 = 1 << 9;
pub const I915_EXEC_IS_PINNED: u64 = 1 << 10;
pub const I915_EXEC_NO_RELOC: u64 = 1 << 11;
pub const I915_EXEC_HANDLE_LUT: u64 = 1 << 12;
pub const I915_EXEC_BSD_SHIFT: u64 = 13;
pub const I915_EXEC_BSD_MASK: u64 = 3 << I915_EXEC_BSD_SHIFT;
pub const I915_EXEC_RESOURCE_STREAMER: u64 = 1 << 15;
pub const I915_EXEC_FENCE_IN: u64 = 1 << 16;
pub const I915_EXEC_FENCE_OUT: u64 = 1 << 17;
pub const I915_EXEC_BATCH_FIRST: u64 = 1 << 18;
pub const I915_EXEC_FENCE_ARRAY: u64 = 1 << 19;
pub const I915_EXEC_FENCE_SUBMIT: u64 = 1 << 20;
pub const I915_EXEC_USE_EXTENSIONS: u64 = 1 << 21;
/// `__I915_EXEC_UNKNOWN_FLAGS`
pub const I915_EXEC_UNKNOWN_FLAGS: u64 = (I915_EXEC_USE_EXTENSIONS << 1).wrapping_neg();
pub const I915_EXEC_CONTEXT_ID_MASK: u64 = 0xffff_ffff;

/// `struct drm_i915_gem_execbuffer2`. `rsvd1` carries the context id; with
/// `I915_EXEC_FENCE_ARRAY`, `cliprects_ptr`/`num_cliprects` carry the fence array; with
/// `I915_EXEC_USE_EXTENSIONS`, `cliprects_ptr` carries the extension chain.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_execbuffer2 {
    pub buffers_ptr: u64,
    pub buffer_count: u32,
    pub batch_start_offset: u32,
    pub batch_len: u32,
    pub DR1: u32,
    pub DR4: u32,
    pub num_cliprects: u32,
    pub cliprects_ptr: u64,
    pub flags: u64,
    pub rsvd1: u64,
    pub rsvd2: u64,
}
ioctl!(
    drm_i915_gem_execbuffer2,
    DRM_IOCTL_I915_GEM_EXECBUFFER2,
    drm_iow::<drm_i915_gem_execbuffer2>(DRM_COMMAND_BASE + DRM_I915_GEM_EXECBUFFER2)
);
shared_arg!(
    /// Argument of `DRM_IOCTL_I915_GEM_EXECBUFFER2_WR` (the kernel writes `rsvd2` back, e.g.
    /// for `I915_EXEC_FENCE_OUT`).
    Execbuffer2Wr(drm_i915_gem_execbuffer2)
);
ioctl!(
    Execbuffer2Wr,
    DRM_IOCTL_I915_GEM_EXECBUFFER2_WR,
    drm_iowr::<drm_i915_gem_execbuffer2>(DRM_COMMAND_BASE + DRM_I915_GEM_EXECBUFFER2)
);

/// `struct drm_i915_gem_wait`; `timeout_ns` is relative, negative waits forever, and the
/// kernel writes back the time left.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_wait {
    pub bo_handle: u32,
    pub flags: u32,
    pub timeout_ns: i64,
}
ioctl!(
    drm_i915_gem_wait,
    DRM_IOCTL_I915_GEM_WAIT,
    drm_iowr::<drm_i915_gem_wait>(DRM_COMMAND_BASE + DRM_I915_GEM_WAIT)
);

/// `struct drm_i915_gem_context_create`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_context_create {
    pub ctx_id: u32,
    pub pad: u32,
}
ioctl!(
    drm_i915_gem_context_create,
    DRM_IOCTL_I915_GEM_CONTEXT_CREATE,
    drm_iowr::<drm_i915_gem_context_create>(DRM_COMMAND_BASE + DRM_I915_GEM_CONTEXT_CREATE)
);

pub const I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS: u32 = 1 << 0;
pub const I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE: u32 = 1 << 1;
/// `I915_CONTEXT_CREATE_FLAGS_UNKNOWN`
pub const I915_CONTEXT_CREATE_FLAGS_UNKNOWN: u32 =
    (I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE << 1).wrapping_neg();
pub const I915_CONTEXT_CREATE_EXT_SETPARAM: u32 = 0;
pub const I915_CONTEXT_CREATE_EXT_CLONE: u32 = 1;

/// `struct drm_i915_gem_context_create_ext`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_context_create_ext {
    pub ctx_id: u32,
    pub flags: u32,
    pub extensions: u64,
}
ioctl!(
    drm_i915_gem_context_create_ext,
    DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT,
    drm_iowr::<drm_i915_gem_context_create_ext>(DRM_COMMAND_BASE + DRM_I915_GEM_CONTEXT_CREATE)
);

pub const I915_CONTEXT_PARAM_BAN_PERIOD: u64 = 0x1;
pub const I915_CONTEXT_PARAM_NO_ZEROMAP: u64 = 0x2;
pub const I915_CONTEXT_PARAM_GTT_SIZE: u64 = 0x3;
pub const I915_CONTEXT_PARAM_NO_ERROR_CAPTURE: u64 = 0x4;
pub const I915_CONTEXT_PARAM_BANNABLE: u64 = 0x5;
pub const I915_CONTEXT_PARAM_PRIORITY: u64 = 0x6;
pub const I915_CONTEXT_MAX_USER_PRIORITY: i64 = 1023;
pub const I915_CONTEXT_DEFAULT_PRIORITY: i64 = 0;
pub const I915_CONTEXT_MIN_USER_PRIORITY: i64 = -1023;
pub const I915_CONTEXT_PARAM_SSEU: u64 = 0x7;
pub const I915_CONTEXT_PARAM_RECOVERABLE: u64 = 0x8;
pub const I915_CONTEXT_PARAM_VM: u64 = 0x9;
pub const I915_CONTEXT_PARAM_ENGINES: u64 = 0xa;
pub const I915_CONTEXT_PARAM_PERSISTENCE: u64 = 0xb;

/// `struct drm_i915_gem_context_param`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_context_param {
    pub ctx_id: u32,
    pub size: u32,
    pub param: u64,
    pub value: u64,
}
ioctl!(
    drm_i915_gem_context_param,
    DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM,
    drm_iowr::<drm_i915_gem_context_param>(DRM_COMMAND_BASE + DRM_I915_GEM_CONTEXT_GETPARAM)
);
shared_arg!(
    /// Argument of `DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM` (the getparam request belongs to the
    /// bare struct).
    ContextSetParam(drm_i915_gem_context_param)
);
ioctl!(
    ContextSetParam,
    DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM,
    drm_iowr::<drm_i915_gem_context_param>(DRM_COMMAND_BASE + DRM_I915_GEM_CONTEXT_SETPARAM)
);

/// `struct drm_i915_gem_context_create_ext_setparam`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_context_create_ext_setparam {
    pub base: i915_user_extension,
    pub param: drm_i915_gem_context_param,
}

/// `struct drm_i915_gem_context_destroy`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_gem_context_destroy {
    pub ctx_id: u32,
    pub pad: u32,
}
ioctl!(
    drm_i915_gem_context_destroy,
    DRM_IOCTL_I915_GEM_CONTEXT_DESTROY,
    drm_iow::<drm_i915_gem_context_destroy>(DRM_COMMAND_BASE + DRM_I915_GEM_CONTEXT_DESTROY)
);

/// `struct drm_i915_reset_stats`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_reset_stats {
    pub ctx_id: u32,
    pub flags: u32,
    pub reset_count: u32,
    pub batch_active: u32,
    pub batch_pending: u32,
    pub pad: u32,
}
ioctl!(
    drm_i915_reset_stats,
    DRM_IOCTL_I915_GET_RESET_STATS,
    drm_iowr::<drm_i915_reset_stats>(DRM_COMMAND_BASE + DRM_I915_GET_RESET_STATS)
);

// QUERY
pub const DRM_I915_QUERY_TOPOLOGY_INFO: u64 = 1;
pub const DRM_I915_QUERY_ENGINE_INFO: u64 = 2;
pub const DRM_I915_QUERY_PERF_CONFIG: u64 = 3;
pub const DRM_I915_QUERY_MEMORY_REGIONS: u64 = 4;

/// `struct drm_i915_query_item`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_query_item {
    pub query_id: u64,
    pub length: i32,
    pub flags: u32,
    pub data_ptr: u64,
}

/// `struct drm_i915_query`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_query {
    pub num_items: u32,
    pub flags: u32,
    pub items_ptr: u64,
}
ioctl!(
    drm_i915_query,
    DRM_IOCTL_I915_QUERY,
    drm_iowr::<drm_i915_query>(DRM_COMMAND_BASE + DRM_I915_QUERY)
);

/// `struct drm_i915_query_topology_info` without its flexible `data[]` tail: the slice mask,
/// then the subslice masks at `subslice_offset`, then the EU masks at `eu_offset`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_query_topology_info {
    pub flags: u16,
    pub max_slices: u16,
    pub max_subslices: u16,
    pub max_eus_per_subslice: u16,
    pub subslice_offset: u16,
    pub subslice_stride: u16,
    pub eu_offset: u16,
    pub eu_stride: u16,
}

/// `struct drm_i915_engine_info`
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_engine_info {
    pub engine: i915_engine_class_instance,
    pub rsvd0: u32,
    pub flags: u64,
    pub capabilities: u64,
    pub logical_instance: u16,
    pub rsvd1: [u16; 3],
    pub rsvd2: [u64; 3],
}

/// `struct drm_i915_query_engine_info` without its flexible `engines[]` tail.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct drm_i915_query_engine_info {
    pub num_engines: u32,
    pub rsvd: [u32; 3],
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request numbers of the uAPI headers on x86-64/aarch64 (`_IOC` of asm-generic: dir
    /// in bits 30-31, argument size in 16-29, 'd' in 8-15, the number in 0-7), as numbers, so
    /// that a wrong struct size shows even where tests/uapi_layout.rs cannot compile its C
    /// probe.
    #[test]
    fn request_numbers_are_the_headers() {
        let want: [(&str, u64, u64); 27] = [
            ("DRM_IOCTL_VERSION", DRM_IOCTL_VERSION, 0xc040_6400),
            ("DRM_IOCTL_GEM_CLOSE", DRM_IOCTL_GEM_CLOSE, 0x4008_6409),
            ("DRM_IOCTL_GET_CAP", DRM_IOCTL_GET_CAP, 0xc010_640c),
            (
                "DRM_IOCTL_SYNCOBJ_CREATE",
                DRM_IOCTL_SYNCOBJ_CREATE,
                0xc008_64bf,
            ),
            (
                "DRM_IOCTL_SYNCOBJ_DESTROY",
                DRM_IOCTL_SYNCOBJ_DESTROY,
                0xc008_64c0,
            ),
            (
                "DRM_IOCTL_SYNCOBJ_WAIT",
                DRM_IOCTL_SYNCOBJ_WAIT,
                0xc020_64c3,
            ),
            (
                "DRM_IOCTL_SYNCOBJ_RESET",
                DRM_IOCTL_SYNCOBJ_RESET,
                0xc010_64c4,
            ),
            (
                "DRM_IOCTL_SYNCOBJ_SIGNAL",
                DRM_IOCTL_SYNCOBJ_SIGNAL,
                0xc010_64c5,
            ),
            (
                "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT",
                DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT,
                0xc028_64ca,
            ),
            (
                "DRM_IOCTL_SYNCOBJ_QUERY",
                DRM_IOCTL_SYNCOBJ_QUERY,
                0xc018_64cb,
            ),
            (
                "DRM_IOCTL_SYNCOBJ_TRANSFER",
                DRM_IOCTL_SYNCOBJ_TRANSFER,
                0xc020_64cc,
            ),
            (
                "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL",
                DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
                0xc018_64cd,
            ),
            (
                "DRM_IOCTL_I915_GETPARAM",
                DRM_IOCTL_I915_GETPARAM,
                0xc010_6446,
            ),
            (
                "DRM_IOCTL_I915_GEM_CREATE",
                DRM_IOCTL_I915_GEM_CREATE,
                0xc010_645b,
            ),
            (
                "DRM_IOCTL_I915_GEM_CREATE_EXT",
                DRM_IOCTL_I915_GEM_CREATE_EXT,
                0xc018_647c,
            ),
            (
                "DRM_IOCTL_I915_GEM_MMAP_OFFSET",
                DRM_IOCTL_I915_GEM_MMAP_OFFSET,
                0xc020_6464,
            ),
            (
                "DRM_IOCTL_I915_GEM_SET_DOMAIN",
                DRM_IOCTL_I915_GEM_SET_DOMAIN,
                0x400c_645f,
            ),
            (
                "DRM_IOCTL_I915_GEM_EXECBUFFER2",
                DRM_IOCTL_I915_GEM_EXECBUFFER2,
                0x4040_6469,
            ),
            (
                "DRM_IOCTL_I915_GEM_EXECBUFFER2_WR",
                DRM_IOCTL_I915_GEM_EXECBUFFER2_WR,
                0xc040_6469,
            ),
            (
                "DRM_IOCTL_I915_GEM_WAIT",
                DRM_IOCTL_I915_GEM_WAIT,
                0xc010_646c,
            ),
            (
                "DRM_IOCTL_I915_GEM_CONTEXT_CREATE",
                DRM_IOCTL_I915_GEM_CONTEXT_CREATE,
                0xc008_646d,
            ),
            (
                "DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT",
                DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT,
                0xc010_646d,
            ),
            (
                "DRM_IOCTL_I915_GEM_CONTEXT_DESTROY",
                DRM_IOCTL_I915_GEM_CONTEXT_DESTROY,
                0x4008_646e,
            ),
            (
                "DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM",
                DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM,
                0xc018_6474,
            ),
            (
                "DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM",
                DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM,
                0xc018_6475,
            ),
            (
                "DRM_IOCTL_I915_GET_RESET_STATS",
                DRM_IOCTL_I915_GET_RESET_STATS,
                0xc018_6472,
            ),
            ("DRM_IOCTL_I915_QUERY", DRM_IOCTL_I915_QUERY, 0xc010_6479),
        ];
        for (name, got, want) in want {
            assert_eq!(got, want, "{name}: {got:#x} != {want:#x}");
        }
    }
}
