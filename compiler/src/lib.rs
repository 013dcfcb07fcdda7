//! Ferrite's shader compiler: SPIR-V -> Ferrite IR -> passes -> EU backend -> Gen binary.

// Per-lane loops index several parallel arrays; an iterator chain would read worse.
#![allow(clippy::needless_range_loop)]

pub mod backend;
pub mod builder;
pub mod eval;
pub mod float_controls;
pub mod frontend;
pub mod hash;
pub mod hw;
pub mod interp;
pub mod ir;
pub mod kernel;
pub mod parse;
pub mod passes;
pub mod specconst;
pub mod testing;
pub mod validate;

use std::fmt;

/// What the compiler may assume about the GPU; built by the driver from its device table.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// SIMD widths the back end may choose from.
    pub simd_widths: Vec<u32>,
    pub has_fp64: bool,
    pub has_int64: bool,
    pub has_fp16: bool,
    pub has_int16: bool,
    pub has_int8: bool,
    /// Highest SPIR-V version accepted, as (major << 16) | (minor << 8).
    pub max_spirv_version: u32,
    /// Bytes of shared local memory one workgroup may use.
    pub max_shared_size: u32,
    /// Most invocations in one workgroup.
    pub max_workgroup_invocations: u32,
    /// The hardware facts of the generation (and the device's thread limit).
    pub hw: hw::HwFacts,
    /// GroupNonUniform* capabilities are accepted. The compiler implements them; a driver
    /// sets this only when it advertises subgroup operations (they need Vulkan 1.1).
    pub subgroup_ops: bool,
}

impl Target {
    /// A Gen9 GT2 as the simulated device exposes it.
    pub fn gen9() -> Target {
        Target {
            simd_widths: hw::GEN9.simd_widths.to_vec(),
            has_fp64: true,
            has_int64: true,
            has_fp16: true,
            has_int16: true,
            has_int8: true,
            max_spirv_version: 0x0001_0600,
            max_shared_size: 64 * 1024,
            max_workgroup_invocations: 1024,
            hw: hw::GEN9,
            subgroup_ops: true,
        }
    }
}

/// Where a descriptor (set, binding) sits in the binding table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindingSlot {
    pub set: u32,
    pub binding: u32,
    pub bti: u32,
    /// The binding's descriptor count in the set layout: the element count of a runtime
    /// descriptor array (`OpTypeRuntimeArray` of blocks), which the SPIR-V does not give.
    /// Arrays of fixed size take their size from the SPIR-V type.
    pub count: u32,
}

/// The kind of resource a binding-table entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    Storage,
    Uniform,
    /// A storage image or storage texel buffer (typed surface messages).
    StorageImage,
    /// A storage image the kernel only writes (`NonReadable`) whose format the typed reads
    /// cannot access (`StorageAccess::Lowered`): its entry must hold a surface state in the
    /// view's own format, whose typed writes convert the texels (docs/images.md, "Write-only
    /// storage images").
    StorageImageWriteOnly,
    /// A sampled image, sampler or combined image sampler (sampler messages; the sampler's
    /// binding-table index is also its sampler-table index).
    Sampled,
}

/// A binding-table entry the kernel uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindingUse {
    pub set: u32,
    pub binding: u32,
    pub bti: u32,
    pub kind: BindingKind,
}

impl fmt::Display for BindingUse {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "set {} binding {} -> bti {} ({:?})",
            self.set, self.binding, self.bti, self.kind
        )
    }
}

pub mod pipeline;
pub use frontend::image::storage_format_supported;
pub use frontend::FrontendError;
pub use kernel::{CurbeLayout, Kernel, Statistics};
pub use pipeline::{compile, CompileError, CompileOptions, DebugFlags, PassTimes};
