//! Hardware facts the back end relies on, as one value per generation ([`HwFacts`]), handed
//! to it through [`crate::Target::hw`]. docs/dispatch-contract.md ("Hardware facts the back
//! end uses") says where each number comes from.

use crate::ir::{AluOp, Kind, Type};
use ferrite_isa::Gen;

/// Facts of one GPU generation (and, for the per-device ones, of one device: the driver
/// overrides them from its device table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HwFacts {
    /// The ISA generation the back end encodes for.
    pub gen: Gen,
    /// General registers per EU thread, 32 bytes each (g0 .. g(grf_count - 1)).
    pub grf_count: u8,
    /// The register the end-of-thread message's payload (a copy of R0) goes in: the last
    /// GRF, inside the range g112-g127 an EOT payload must come from.
    pub eot_payload_grf: u8,
    /// Highest binding-table index a buffer may use; the indices above it are the data
    /// port's special surfaces.
    pub max_buffer_bti: u32,
    /// Stateless surface relative to General State Base: spill and fill OWord blocks.
    pub bti_scratch: u8,
    /// Shared local memory surface.
    pub bti_slm: u8,
    /// Stateless surface (flat A32 addresses): private memory in scratch.
    pub bti_stateless: u8,
    /// Most hardware threads one workgroup may use (per device; the generation's usual
    /// value here).
    pub max_threads_per_group: u32,
    /// SIMD widths a compute kernel may be dispatched at.
    pub simd_widths: &'static [u32],
    /// The subgroup size the driver reports (VkPhysicalDeviceSubgroupProperties::subgroupSize):
    /// without subgroup size control, a shader of SPIR-V below 1.6 must see `SubgroupSize`
    /// equal to it (Vulkan spec, "SubgroupSize" built-in), at whatever width it runs (the
    /// channels past the width are inactive invocations; docs/subgroups.md). The widest width,
    /// as anv reports, so that a narrower kernel's subgroup holds all of its channels.
    pub subgroup_size: u32,
    /// The widest exec size of each kind of instruction (the back end's SIMD-width lowering
    /// splits wider ones); kinds not listed allow 32.
    pub width_limits: &'static [(WidthClass, u8)],
    /// The ALU ops computed natively on 16-bit operands, per kind of the first source: W/UW
    /// or HF in the back end's dword-slot representation (`backend::narrow`). The middle end
    /// (`passes::lower_narrow`) keeps exactly these 16-bit and promotes every other one to
    /// 32 bits; the back end emits these and refuses any other 16-bit ALU op outside the
    /// conversions. The `Bool` entry is for 16-bit booleans (`passes::lower_bools` gives
    /// compares of 8/16-bit values 16-bit results): their logic ops and `ieq`/`ine`.
    pub native16: &'static [(Kind, &'static [AluOp])],
}

/// Kinds of instruction with their own SIMD-width limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WidthClass {
    /// ALU instructions (further limited to two GRFs per operand by the back end).
    Alu32,
    /// Float math-unit functions.
    MathFloat,
    /// Integer division and remainder on the math unit.
    MathIntDiv,
    /// Untyped surface read/write/atomic and byte scattered messages.
    Untyped,
    /// A64 untyped atomics (SIMD8 only on Gen9).
    A64Atomic,
    /// Typed surface read/write/atomic messages.
    Typed,
    /// Sampler messages (SIMD8 and SIMD16 modes).
    Sampler,
    /// sample_d (explicit derivatives): up to 10 parameters, SIMD8 only.
    SamplerDerivs,
    /// Everything else.
    Unlimited,
}

/// Gen9 (Skylake, Kaby Lake, Coffee Lake; GT2 values for the per-device ones).
pub const GEN9: HwFacts = HwFacts {
    gen: Gen::Gen9,
    grf_count: 128,
    eot_payload_grf: 127,
    max_buffer_bti: 251,
    bti_scratch: 253,
    bti_slm: 254,
    bti_stateless: 255,
    max_threads_per_group: 56,
    simd_widths: &[8, 16, 32],
    subgroup_size: 32,
    // ALU and float math: an operand may span at most 2 GRFs, so 16 channels of 32-bit
    // data; integer division on the math unit: SIMD8 only; untyped surface and byte
    // scattered messages exist as SIMD8 and SIMD16 (SIMD32 kernels send two halves); typed
    // surface messages only as SIMD8 (a slot group picks channels 0-7 or 8-15); sampler
    // messages as SIMD8 and SIMD16 (SIMD32 kernels send two halves).
    width_limits: &[
        (WidthClass::Alu32, 16),
        (WidthClass::MathFloat, 16),
        (WidthClass::MathIntDiv, 8),
        (WidthClass::Untyped, 16),
        (WidthClass::A64Atomic, 8),
        (WidthClass::Typed, 8),
        (WidthClass::Sampler, 16),
        // sample_d is SIMD8 only: a SIMD16 one would exceed the sampler's 11-GRF message
        // for 2-D coordinates already (Mesa's brw sends it as SIMD8 on Gen9 as well).
        (WidthClass::SamplerDerivs, 8),
        (WidthClass::Unlimited, 32),
    ],
    // Integer add, sub, mul (low half), neg, abs, min/max, logic, shifts and compares on
    // W/UW; HF add, sub, mul, neg, abs, min/max, the ordered compares, `fneu` and `isnan`.
    // HF arithmetic rounds once from the exact result like the promoted form does, so both
    // give the same bits; fma is not here because MAD is a 3-source Align16 instruction,
    // which needs packed operands.
    native16: &[
        (
            Kind::Int,
            &[
                AluOp::Iadd,
                AluOp::Isub,
                AluOp::Imul,
                AluOp::Ineg,
                AluOp::Iabs,
                AluOp::Imin,
                AluOp::Imax,
                AluOp::Umin,
                AluOp::Umax,
                AluOp::Iand,
                AluOp::Ior,
                AluOp::Ixor,
                AluOp::Inot,
                AluOp::Ishl,
                AluOp::Ishr,
                AluOp::Ushr,
                AluOp::Ieq,
                AluOp::Ine,
                AluOp::Ilt,
                AluOp::Ige,
                AluOp::Ult,
                AluOp::Uge,
            ],
        ),
        (
            Kind::Float,
            &[
                AluOp::Fadd,
                AluOp::Fsub,
                AluOp::Fmul,
                AluOp::Fneg,
                AluOp::Fabs,
                AluOp::Fmin,
                AluOp::Fmax,
                AluOp::Feq,
                AluOp::Fneu,
                AluOp::Flt,
                AluOp::Fle,
                AluOp::Fgt,
                AluOp::Fge,
                AluOp::IsNan,
            ],
        ),
        (
            Kind::Bool,
            &[
                AluOp::Iand,
                AluOp::Ior,
                AluOp::Ixor,
                AluOp::Inot,
                AluOp::Ieq,
                AluOp::Ine,
            ],
        ),
    ],
};

impl HwFacts {
    /// Binding-table entries descriptors of one pipeline layout may take (BTIs
    /// 0 .. max_buffer_bti - 1): the push-constant surface takes the entry after the
    /// highest descriptor the kernel uses, which must still be at most `max_buffer_bti`
    /// (docs/dispatch-contract.md). The driver's descriptor limits derive from this.
    pub const fn max_descriptor_btis(&self) -> u32 {
        self.max_buffer_bti
    }

    /// Largest byte range of one buffer descriptor. RENDER_SURFACE_STATE's
    /// Width/Height/Depth (7 + 14 + 11 bits) hold up to 2^32 RAW elements, and the CURBE's
    /// size dword is 32 bits; Ferrite stays at 2^30 so every byte offset fits a positive
    /// 32-bit signed integer (GLSL indices are `int`). docs/limits.md.
    pub const fn max_buffer_range(&self) -> u32 {
        1 << 30
    }

    /// The widest exec size of an instruction of kind `c`.
    pub fn width_limit(&self, c: WidthClass) -> u8 {
        self.width_limits
            .iter()
            .find(|(k, _)| *k == c)
            .map_or(32, |(_, w)| *w)
    }

    /// Whether `op` with a first source of type `st` is computed natively in 16 bits
    /// ([`HwFacts::native16`]); false for any other bit size.
    pub fn is_native16(&self, op: AluOp, st: Type) -> bool {
        st.bits == 16
            && self
                .native16
                .iter()
                .any(|(k, ops)| *k == st.kind && ops.contains(&op))
    }

    /// One past the last GRF the register allocator may hand out: the EOT payload register
    /// and the ones after it are reserved.
    pub fn allocatable_end(&self) -> u8 {
        self.eot_payload_grf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gen9_special_surfaces_sit_above_the_buffer_range() {
        let h = GEN9;
        assert!(h.max_buffer_bti < u32::from(h.bti_scratch));
        assert!(h.bti_scratch < h.bti_slm && h.bti_slm < h.bti_stateless);
        // The EOT payload must come from g112-g127.
        assert!((112..h.grf_count).contains(&h.eot_payload_grf));
    }
}
