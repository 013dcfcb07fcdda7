//! Module level: capabilities, extensions, the entry point and its execution modes, the
//! function and block tables, the analyses that run before emission, and the global
//! variables of the entry point's interface (buffers, push constants, shared memory,
//! built-ins, private variables).

use super::constants::Const;
use super::memory::{MatLayout, Ptr};
use super::types::SType;
use super::{
    idref, invalid, op_id, op_lit, pow2_div, rid, rty, unsupported, Fe, FrontendError, Res,
    StorageDecl,
};
use crate::hash::{HashMap, HashSet};
use crate::ir::{self, Space};
use crate::{BindingKind, BindingUse, Target};
use rspirv::dr::{self, Operand};
use rspirv::spirv;
use spirv::{BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel, StorageClass};

pub(super) struct SpvFunc {
    pub(super) params: Vec<u32>,
    pub(super) blocks: Vec<u32>,
}

pub(super) struct SpvBlock {
    pub(super) insts: Vec<dr::Instruction>,
}

/// Capabilities a GLCompute shader may declare that need nothing beyond the 32-bit core.
pub(super) fn capability_ok(c: Capability, t: &Target) -> bool {
    use Capability as C;
    match c {
        C::Shader
        | C::Matrix
        | C::VariablePointersStorageBuffer
        | C::StorageBuffer16BitAccess
        | C::VulkanMemoryModel
        | C::VulkanMemoryModelDeviceScope => true,
        // Storage images and texel buffers on typed surface messages (frontend/image.rs);
        // the surface format comes from the descriptor.
        C::Image1D | C::ImageBuffer | C::StorageImageExtendedFormats => true,
        // Uniform texel buffers: `ld` on a formatted buffer surface (frontend/image.rs).
        C::SampledBuffer => true,
        // 1-D sampled images: the sampler takes U alone (frontend/image.rs).
        C::Sampled1D => true,
        // Cube arrays: the sampler takes the cube index in AI (frontend/image.rs).
        C::SampledCubeArray => true,
        // Run-time indices into arrays of buffers (docs/descriptors.md).
        C::UniformBufferArrayDynamicIndexing
        | C::StorageBufferArrayDynamicIndexing
        | C::ShaderNonUniform
        | C::UniformBufferArrayNonUniformIndexing
        | C::StorageBufferArrayNonUniformIndexing => true,
        // Arrays of buffers sized by the set layout (runtimeDescriptorArray): the pipeline
        // layout gives the count (`BindingSlot::count`).
        C::RuntimeDescriptorArray => true,
        // Run-time indices into arrays of images, samplers and combined image samplers
        // (docs/images.md, "Arrays of images indexed at run time").
        C::SampledImageArrayDynamicIndexing
        | C::StorageImageArrayDynamicIndexing
        | C::SampledImageArrayNonUniformIndexing
        | C::StorageImageArrayNonUniformIndexing => true,
        // Texel buffers are images of Dim Buffer: arrays of them take the same paths.
        C::UniformTexelBufferArrayDynamicIndexing
        | C::StorageTexelBufferArrayDynamicIndexing
        | C::UniformTexelBufferArrayNonUniformIndexing
        | C::StorageTexelBufferArrayNonUniformIndexing => true,
        // Size and level queries of sampled images (resinfo).
        C::ImageQuery => true,
        // Offset and ConstOffsets on gathers (gather4_po; docs/images.md, "Gather offsets").
        C::ImageGatherExtended => true,
        C::GroupNonUniform
        | C::GroupNonUniformVote
        | C::GroupNonUniformBallot
        | C::GroupNonUniformArithmetic
        | C::GroupNonUniformShuffle
        | C::GroupNonUniformShuffleRelative
        | C::GroupNonUniformQuad
        | C::GroupNonUniformClustered => t.subgroup_ops,
        // Targets without DF hardware get the soft_fp64 lowering.
        C::Float64 => true,
        C::Int64 | C::Int64Atomics => t.has_int64,
        // PhysicalStorageBuffer pointers are 64-bit addresses (A64 messages).
        C::PhysicalStorageBufferAddresses => t.has_int64,
        C::Float16 => t.has_fp16,
        C::Int16 => t.has_int16,
        C::Int8 => t.has_int8,
        // Integer dot products become multiply-adds (frontend/dot.rs); 8-bit vector operands
        // also declare Int8.
        C::DotProduct | C::DotProductInputAll | C::DotProductInput4x8BitPacked => true,
        // SPIR-V 1.6: the Uniform / UniformId decorations promise uniformity and need
        // nothing (the back end decides uniformity itself).
        C::UniformDecoration => true,
        C::DotProductInput4x8Bit => t.has_int8,
        // 8/16-bit loads/stores: byte scattered messages in the back end.
        C::StorageBuffer8BitAccess
        | C::UniformAndStorageBuffer8BitAccess
        | C::StoragePushConstant8 => t.has_int8,
        C::UniformAndStorageBuffer16BitAccess | C::StoragePushConstant16 => true,
        // Float controls: which widths and modes a target honours is checked per mode
        // against `float_controls::support` once the modes are known.
        C::DenormPreserve
        | C::DenormFlushToZero
        | C::SignedZeroInfNanPreserve
        | C::RoundingModeRTE
        | C::RoundingModeRTZ => true,
        _ => false,
    }
}

pub(super) fn extension_ok(e: &str) -> bool {
    matches!(
        e,
        "SPV_KHR_storage_buffer_storage_class"
            | "SPV_KHR_variable_pointers"
            | "SPV_KHR_vulkan_memory_model"
            | "SPV_KHR_16bit_storage"
            | "SPV_KHR_8bit_storage"
            | "SPV_KHR_shader_draw_parameters"
            | "SPV_KHR_non_semantic_info"
            | "SPV_EXT_descriptor_indexing"
            | "SPV_GOOGLE_decorate_string"
            | "SPV_GOOGLE_hlsl_functionality1"
            | "SPV_GOOGLE_user_type"
            | "SPV_KHR_terminate_invocation"
            | "SPV_KHR_float_controls"
            // Its only addition is the SubgroupUniformControlFlowKHR execution mode, a promise
            // that needs nothing here: subgroups are EU threads whose structured control flow
            // reconverges at every merge (docs/subgroups.md).
            | "SPV_KHR_subgroup_uniform_control_flow"
            | "SPV_KHR_physical_storage_buffer"
            | "SPV_KHR_integer_dot_product"
            | "SPV_EXT_physical_storage_buffer"
    )
}

/// Checks that every instruction's word count is non-zero and stays inside the module.
pub(super) fn check_framing(words: &[u32]) -> Res<()> {
    let mut at = 5;
    while at < words.len() {
        let wc = (words[at] >> 16) as usize;
        if wc == 0 || at + wc > words.len() {
            return Err(FrontendError::Parse(format!(
                "instruction at word {at} has word count {wc}, past the end of the module ({} words)",
                words.len()
            )));
        }
        at += wc;
    }
    Ok(())
}

/// Refuses a capability the SPIR-V grammar we decode with does not know, before decoding: the
/// decoder would stop at its operand with a parse error ("unknown value 6912 for operand kind
/// Capability"), which reads like a malformed module, while the module is valid and declares
/// a capability newer than the grammar (llama.cpp's `*_dot2*` shaders declare 6912,
/// DotProductFloat16AccFloat32VALVE, from VK_VALVE_shader_mixed_float_dot_product). Ferrite
/// cannot support a capability it cannot name, so this is the same refusal as for a known one.
pub(super) fn check_capability_words(words: &[u32]) -> Res<()> {
    const OP_CAPABILITY: u32 = 17;
    let mut at = 5;
    while at < words.len() {
        let wc = (words[at] >> 16) as usize;
        if words[at] & 0xffff == OP_CAPABILITY && wc == 2 {
            let value = words[at + 1];
            if Capability::from_u32(value).is_none() {
                return Err(FrontendError::UnsupportedCapability(format!(
                    "{value} (not in the SPIR-V grammar this front end reads)"
                )));
            }
        }
        at += wc.max(1);
    }
    Ok(())
}

impl Fe<'_> {
    /// Records one float-controls execution mode (`width` is its target-width operand).
    /// Contradicting modes for one width, and rounding modes that differ between widths
    /// (cr0 has one rounding field: roundingModeIndependence is NONE), are errors.
    pub(super) fn float_mode(&mut self, m: ExecutionMode, width: u32) -> Res<()> {
        let fc = &mut self.f.float_controls;
        let Some(mode) = u8::try_from(width).ok().and_then(|w| fc.mode_mut(w)) else {
            return unsupported(format!("execution mode {m:?} for a {width}-bit float"));
        };
        let clash = |what: &str| {
            Err(FrontendError::Unsupported(format!(
                "execution modes {what} for {width}-bit floats"
            )))
        };
        match m {
            ExecutionMode::DenormPreserve | ExecutionMode::DenormFlushToZero => {
                let d = if m == ExecutionMode::DenormPreserve {
                    ir::Denorm::Preserve
                } else {
                    ir::Denorm::FlushToZero
                };
                if !set_once(&mut mode.denorm, d) {
                    return clash("DenormPreserve and DenormFlushToZero together");
                }
            }
            ExecutionMode::RoundingModeRTE | ExecutionMode::RoundingModeRTZ => {
                let r = if m == ExecutionMode::RoundingModeRTE {
                    ir::Rounding::Rte
                } else {
                    ir::Rounding::Rtz
                };
                if !set_once(&mut mode.rounding, r) {
                    return clash("RoundingModeRTE and RoundingModeRTZ together");
                }
                let other = fc
                    .modes
                    .iter()
                    .any(|o| o.rounding != ir::Rounding::Any && o.rounding != r);
                if other {
                    return unsupported(
                        "different rounding modes for different float widths (one rounding \
                         mode per kernel: roundingModeIndependence is NONE)",
                    );
                }
            }
            _ => mode.signed_zero_inf_nan = true,
        }
        Ok(())
    }

    pub(super) fn module(&mut self, m: &mut dr::Module) -> Res<()> {
        for c in &m.capabilities {
            match c.operands.first() {
                Some(Operand::Capability(cap)) => {
                    if !capability_ok(*cap, self.input.target) {
                        return Err(FrontendError::UnsupportedCapability(format!("{cap:?}")));
                    }
                }
                _ => return invalid("OpCapability without capability"),
            }
        }
        for e in &m.extensions {
            match e.operands.first() {
                Some(Operand::LiteralString(s)) => {
                    if !extension_ok(s) {
                        return Err(FrontendError::UnsupportedExtension(s.clone()));
                    }
                }
                _ => return invalid("OpExtension without name"),
            }
        }
        for e in &m.ext_inst_imports {
            match e.operands.first() {
                Some(Operand::LiteralString(s)) if s == "GLSL.std.450" => {
                    self.decl.ext_glsl.insert(rid(e)?);
                }
                Some(Operand::LiteralString(s)) if s.starts_with("NonSemantic.") => {}
                Some(Operand::LiteralString(s)) => {
                    return unsupported(format!("extended instruction set {s}"));
                }
                _ => return invalid("OpExtInstImport without name"),
            }
        }
        if let Some(mm) = &m.memory_model {
            if let Some(Operand::AddressingModel(a)) = mm.operands.first() {
                // PhysicalStorageBuffer64: 64-bit addresses through A64 messages.
                let physical = *a == spirv::AddressingModel::PhysicalStorageBuffer64
                    && self.input.target.has_int64;
                if *a != spirv::AddressingModel::Logical && !physical {
                    return unsupported(format!("addressing model {a:?}"));
                }
            }
        }
        // Entry point
        let mut entry = None;
        for ep in &m.entry_points {
            if let (
                Some(Operand::ExecutionModel(em)),
                Some(Operand::IdRef(fid)),
                Some(Operand::LiteralString(name)),
            ) = (ep.operands.first(), ep.operands.get(1), ep.operands.get(2))
            {
                if *em == ExecutionModel::GLCompute && name == self.input.entry {
                    entry = Some(*fid);
                }
            }
        }
        let entry =
            entry.ok_or_else(|| FrontendError::NoEntryPoint(self.input.entry.to_string()))?;
        // Volatile memory anywhere in the module: a decoration, or a memory-access operand.
        self.f.volatile_memory = m.annotations.iter().any(|a| {
            a.operands
                .iter()
                .any(|o| matches!(o, Operand::Decoration(Decoration::Volatile)))
        }) || m
            .functions
            .iter()
            .flat_map(|f| &f.blocks)
            .flat_map(|b| &b.instructions)
            .flat_map(|i| &i.operands)
            .any(|o| {
                matches!(o, Operand::MemoryAccess(ma) if ma.contains(spirv::MemoryAccess::VOLATILE))
            });
        // Decorations
        for a in &m.annotations {
            match a.class.opcode {
                spirv::Op::Decorate | spirv::Op::DecorateId | spirv::Op::DecorateString => {
                    let target = op_id(a, 0)?;
                    let Some(Operand::Decoration(d)) = a.operands.get(1) else {
                        return invalid("OpDecorate without decoration");
                    };
                    let args: Vec<u32> = a.operands[2..]
                        .iter()
                        .map(|o| match o {
                            Operand::LiteralBit32(v) => *v,
                            Operand::IdRef(v) => *v,
                            Operand::BuiltIn(b) => *b as u32,
                            _ => 0,
                        })
                        .collect();
                    self.decl.decos.entry(target).or_default().push((*d, args));
                }
                spirv::Op::MemberDecorate | spirv::Op::MemberDecorateString => {
                    let target = op_id(a, 0)?;
                    let member = op_lit(a, 1)?;
                    let Some(Operand::Decoration(d)) = a.operands.get(2) else {
                        return invalid("OpMemberDecorate without decoration");
                    };
                    let md = self.decl.member_decos.entry((target, member)).or_default();
                    match d {
                        Decoration::Offset => md.offset = Some(op_lit(a, 3)?),
                        Decoration::MatrixStride => md.matrix_stride = Some(op_lit(a, 3)?),
                        Decoration::RowMajor => md.row_major = true,
                        Decoration::NonWritable => md.non_writable = true,
                        Decoration::BuiltIn => {
                            if let Some(Operand::BuiltIn(b)) = a.operands.get(3) {
                                md.builtin = Some(*b);
                            }
                        }
                        _ => {}
                    }
                }
                spirv::Op::DecorationGroup
                | spirv::Op::GroupDecorate
                | spirv::Op::GroupMemberDecorate => {
                    return unsupported("decoration groups");
                }
                _ => {}
            }
        }
        // Types, constants, globals
        for i in &m.types_global_values {
            self.global(i)?;
        }
        // Execution modes
        let mut local_size_set = false;
        for em in &m.execution_modes {
            if op_id(em, 0)? != entry {
                continue;
            }
            match em.operands.get(1) {
                Some(Operand::ExecutionMode(ExecutionMode::LocalSize)) => {
                    self.iface.local_size = [op_lit(em, 2)?, op_lit(em, 3)?, op_lit(em, 4)?];
                    local_size_set = true;
                }
                Some(Operand::ExecutionMode(ExecutionMode::LocalSizeId)) => {
                    for k in 0..3 {
                        let id = match em.operands.get(2 + k) {
                            Some(Operand::IdRef(v)) => *v,
                            Some(Operand::LiteralBit32(v)) => *v,
                            _ => return invalid("LocalSizeId operand"),
                        };
                        self.iface.local_size[k] = self.const_u32(id)?;
                    }
                    local_size_set = true;
                }
                Some(Operand::ExecutionMode(
                    m @ (ExecutionMode::DenormPreserve
                    | ExecutionMode::DenormFlushToZero
                    | ExecutionMode::SignedZeroInfNanPreserve
                    | ExecutionMode::RoundingModeRTE
                    | ExecutionMode::RoundingModeRTZ),
                )) => {
                    let width = op_lit(em, 2)?;
                    self.float_mode(*m, width)?;
                }
                _ => {}
            }
        }
        // A constant decorated WorkgroupSize overrides the execution mode.
        let ws: Vec<u32> = self
            .decl
            .decos
            .iter()
            .filter(|(_, d)| {
                d.iter().any(|(k, a)| {
                    *k == Decoration::BuiltIn && a.first() == Some(&(BuiltIn::WorkgroupSize as u32))
                })
            })
            .map(|(id, _)| *id)
            .collect();
        for id in ws {
            if let Some((_, Const::Comp(c))) = self.decl.consts.get(&id) {
                if c.len() == 3 {
                    for k in 0..3 {
                        if let Const::Scalar(v) = c[k] {
                            self.iface.local_size[k] = v as u32;
                        }
                    }
                    local_size_set = true;
                }
            }
        }
        if !local_size_set {
            return invalid("entry point has no LocalSize");
        }
        // Three u32 factors can overflow u64: None counts as too many.
        let n = self
            .iface
            .local_size
            .iter()
            .try_fold(1u64, |n, x| n.checked_mul(u64::from(*x)));
        if n.is_none_or(|n| n == 0 || n > u64::from(self.input.target.max_workgroup_invocations)) {
            return unsupported(format!(
                "workgroup size {}x{}x{} (limit {} invocations)",
                self.iface.local_size[0],
                self.iface.local_size[1],
                self.iface.local_size[2],
                self.input.target.max_workgroup_invocations
            ));
        }
        // Functions
        for (fi, func) in m.functions.iter_mut().enumerate() {
            let def = func
                .def
                .as_ref()
                .ok_or_else(|| FrontendError::Invalid("function without OpFunction".into()))?;
            let fid = rid(def)?;
            let mut params = Vec::new();
            for p in &func.parameters {
                let id = rid(p)?;
                params.push(id);
                self.decl.result_types.insert(id, rty(p)?);
            }
            let mut blocks = Vec::new();
            for (bi, b) in func.blocks.iter_mut().enumerate() {
                let label = rid(b
                    .label
                    .as_ref()
                    .ok_or_else(|| FrontendError::Invalid("block without label".into()))?)?;
                if self.code.blocks.contains_key(&label) {
                    return invalid(format!("label %{label} defined twice"));
                }
                if b.instructions.is_empty() {
                    return invalid(format!("block %{label} has no terminator"));
                }
                for i in &b.instructions {
                    if let Some(r) = i.result_id {
                        if self.code.def_block.insert(r, label).is_some() {
                            return invalid(format!("%{r} defined twice"));
                        }
                        if let Some(t) = i.result_type {
                            self.decl.result_types.insert(r, t);
                        }
                    }
                }
                self.code.block_order.insert(label, fi * 1_000_000 + bi);
                blocks.push(label);
                // Moved, not cloned: the module's own copy of the code is not read again,
                // and keeping both alive doubled the front end's peak memory.
                self.code.blocks.insert(
                    label,
                    SpvBlock {
                        insts: std::mem::take(&mut b.instructions),
                    },
                );
            }
            if self
                .code
                .funcs
                .insert(fid, SpvFunc { params, blocks })
                .is_some()
            {
                return invalid(format!("function %{fid} defined twice"));
            }
        }
        self.find_demotions()?;
        self.find_dynamic_roots()?;
        // Emit: private variables, then the entry function inlined at top level.
        self.init_private_vars(m)?;
        self.zero_shared_memory(m)?;
        self.inline_call(entry, &[], None)?;
        if self.stack.len() != 1 {
            return invalid("unbalanced structure");
        }
        self.f.body = self.stack.pop().unwrap();
        Ok(())
    }

    pub(super) fn deco(&self, id: u32, d: Decoration) -> Option<&Vec<u32>> {
        self.decl
            .decos
            .get(&id)?
            .iter()
            .find(|(k, _)| *k == d)
            .map(|(_, a)| a)
    }

    pub(super) fn global(&mut self, i: &dr::Instruction) -> Res<()> {
        use spirv::Op as O;
        let op = i.class.opcode;
        match op {
            O::TypeVoid
            | O::TypeBool
            | O::TypeInt
            | O::TypeFloat
            | O::TypeVector
            | O::TypeMatrix
            | O::TypeArray
            | O::TypeRuntimeArray
            | O::TypeStruct
            | O::TypePointer
            | O::TypeForwardPointer
            | O::TypeFunction
            | O::TypeImage
            | O::TypeSampler
            | O::TypeSampledImage => self.declare_type(i)?,
            O::ConstantTrue
            | O::ConstantFalse
            | O::SpecConstantTrue
            | O::SpecConstantFalse
            | O::Constant
            | O::SpecConstant
            | O::ConstantComposite
            | O::SpecConstantComposite
            | O::ConstantNull
            | O::SpecConstantOp
            | O::Undef => self.declare_const(i)?,
            O::Variable => {
                let id = rid(i)?;
                let t = rty(i)?;
                let Some(Operand::StorageClass(sc)) = i.operands.first() else {
                    return invalid("variable without storage class");
                };
                let Some(SType::Pointer(_, pointee)) = self.decl.types.get(&t).cloned() else {
                    return invalid("variable type is not a pointer");
                };
                self.decl.result_types.insert(id, t);
                self.decl.globals.insert(id, (*sc, pointee));
                self.global_var(id, *sc, pointee)?;
            }
            O::String | O::Line | O::NoLine | O::ExtInst => {}
            _ => return unsupported(format!("global instruction {op:?}")),
        }
        Ok(())
    }

    /// The element count of a descriptor array (an array of Block/BufferBlock structs), or
    /// 1 for a single buffer. A runtime array (`OpTypeRuntimeArray` of blocks,
    /// runtimeDescriptorArray) has the descriptor count of variable `id`'s binding in the
    /// set layout.
    pub(super) fn descriptor_count(&self, id: u32, pointee: u32) -> Res<u32> {
        match self.stype(pointee)? {
            SType::Array(e, n) if self.is_block(e) => Ok(n),
            SType::RuntimeArray(e) if self.is_block(e) => self.layout_count(id),
            _ => Ok(1),
        }
    }

    /// The descriptor count the pipeline layout gives variable `id`'s binding: what sizes a
    /// runtime descriptor array. Without a layout (the compiler's own tests) there is none.
    pub(super) fn layout_count(&self, id: u32) -> Res<u32> {
        let (set, binding) = self.set_binding(id)?;
        match self
            .input
            .bindings
            .iter()
            .find(|b| b.set == set && b.binding == binding)
        {
            Some(b) if b.count > 0 => Ok(b.count),
            Some(_) => invalid(format!(
                "runtime descriptor array at set {set} binding {binding} has no descriptors"
            )),
            None if self.input.bindings.is_empty() => unsupported(
                "a runtime descriptor array needs the pipeline layout's descriptor count",
            ),
            None => Err(FrontendError::NoBinding { set, binding }),
        }
    }

    /// The (DescriptorSet, Binding) decorations of variable `id` (set 0 when absent).
    fn set_binding(&self, id: u32) -> Res<(u32, u32)> {
        let set = self
            .deco(id, Decoration::DescriptorSet)
            .and_then(|a| a.first().copied())
            .unwrap_or(0);
        let binding = self
            .deco(id, Decoration::Binding)
            .and_then(|a| a.first().copied())
            .ok_or_else(|| {
                FrontendError::Invalid(format!("buffer variable %{id} has no Binding"))
            })?;
        Ok((set, binding))
    }

    pub(super) fn is_block(&self, t: u32) -> bool {
        matches!(self.stype(t), Ok(SType::Struct(_)))
            && (self.deco(t, Decoration::Block).is_some()
                || self.deco(t, Decoration::BufferBlock).is_some())
    }

    pub(super) fn binding_for(&mut self, id: u32, kind: BindingKind, count: u32) -> Res<Space> {
        let bti = self.binding_bti(id, kind, count)?;
        Ok(match kind {
            BindingKind::Uniform => Space::Ubo(bti),
            BindingKind::Storage
            | BindingKind::StorageImage
            | BindingKind::StorageImageWriteOnly
            | BindingKind::Sampled => Space::Ssbo(bti),
        })
    }

    /// The binding-table index of the descriptor variable `id` (the first of `count`
    /// consecutive entries for an array), recording its use.
    pub(super) fn binding_bti(&mut self, id: u32, kind: BindingKind, count: u32) -> Res<u32> {
        let (set, binding) = self.set_binding(id)?;
        let bti = if self.input.bindings.is_empty() {
            match self
                .iface
                .bindings
                .iter()
                .find(|b| b.set == set && b.binding == binding)
            {
                Some(b) => b.bti,
                None => self
                    .iface
                    .bindings
                    .iter()
                    .map(|b| b.bti + 1)
                    .max()
                    .unwrap_or(0),
            }
        } else {
            self.input
                .bindings
                .iter()
                .find(|b| b.set == set && b.binding == binding)
                .map(|b| b.bti)
                .ok_or(FrontendError::NoBinding { set, binding })?
        };
        // Variables aliasing one binding: the entry is written in the view's own format
        // only when every one of them is write-only.
        if kind != BindingKind::StorageImageWriteOnly {
            for b in &mut self.iface.bindings {
                if b.set == set
                    && b.binding == binding
                    && b.kind == BindingKind::StorageImageWriteOnly
                {
                    b.kind = BindingKind::StorageImage;
                }
            }
        }
        let kind = if kind == BindingKind::StorageImageWriteOnly
            && self
                .iface
                .bindings
                .iter()
                .any(|b| b.set == set && b.binding == binding && b.kind != kind)
        {
            BindingKind::StorageImage
        } else {
            kind
        };
        if !self
            .iface
            .bindings
            .iter()
            .any(|b| b.set == set && b.binding == binding)
        {
            // A descriptor array takes `count` consecutive entries (the dispatch contract).
            for k in 0..count {
                self.iface.bindings.push(BindingUse {
                    set,
                    binding,
                    bti: bti + k,
                    kind,
                });
            }
        }
        Ok(bti)
    }

    /// Remembers the element count of a runtime descriptor array by its first binding-table
    /// index, where access chains into it look it up.
    fn note_runtime_count(&mut self, pointee: u32, space: Space, n: u32) {
        if let (Ok(SType::RuntimeArray(_)), Space::Ssbo(b) | Space::Ubo(b)) =
            (self.stype(pointee), space)
        {
            self.iface.runtime_counts.insert(b, n);
        }
    }

    /// Records what the storage-buffer variable `id` (bound at `space`, `n` descriptors)
    /// promises: whether it is `NonWritable` (the variable, or every member of its block;
    /// SPIR-V: NonWritable "indicates the memory holding the variable is not writable") and
    /// whether it is `Aliased` (`readonly_buffers`).
    fn note_storage_decl(&mut self, id: u32, pointee: u32, space: Space, n: u32) -> Res<()> {
        let Space::Ssbo(first) = space else {
            return Ok(());
        };
        let block = match self.stype(pointee)? {
            SType::Array(e, _) | SType::RuntimeArray(e) => e,
            _ => pointee,
        };
        let members = match self.stype(block)? {
            SType::Struct(m) => m.len() as u32,
            _ => 0,
        };
        let ro = self.deco(id, Decoration::NonWritable).is_some()
            || (members > 0
                && (0..members).all(|k| {
                    self.decl
                        .member_decos
                        .get(&(block, k))
                        .is_some_and(|d| d.non_writable)
                }));
        let aliased = self.deco(id, Decoration::Aliased).is_some();
        for b in first..first + n.max(1) {
            let d = self.iface.storage.entry(b).or_insert(StorageDecl {
                non_writable: true,
                aliased: false,
            });
            d.non_writable &= ro;
            d.aliased |= aliased;
        }
        Ok(())
    }

    pub(super) fn global_var(&mut self, id: u32, sc: StorageClass, pointee: u32) -> Res<()> {
        let mem = |space, ty| Ptr::Mem {
            space,
            dyn_off: None,
            konst: 0,
            align: 16,
            ty,
            mat: MatLayout::default(),
            comp_stride: None,
        };
        let ptr = match sc {
            StorageClass::StorageBuffer => {
                let n = self.descriptor_count(id, pointee)?;
                let space = self.binding_for(id, BindingKind::Storage, n)?;
                self.note_runtime_count(pointee, space, n);
                self.note_storage_decl(id, pointee, space, n)?;
                mem(space, pointee)
            }
            StorageClass::Uniform => {
                let n = self.descriptor_count(id, pointee)?;
                let block = match self.stype(pointee)? {
                    SType::Array(e, _) | SType::RuntimeArray(e) if self.is_block(e) => e,
                    _ => pointee,
                };
                let buffer_block = self.deco(block, Decoration::BufferBlock).is_some();
                let kind = if buffer_block {
                    BindingKind::Storage
                } else {
                    BindingKind::Uniform
                };
                let space = self.binding_for(id, kind, n)?;
                self.note_runtime_count(pointee, space, n);
                if buffer_block {
                    self.note_storage_decl(id, pointee, space, n)?;
                }
                mem(space, pointee)
            }
            StorageClass::PushConstant => {
                let (s, _) = self.natural(pointee, 0)?;
                self.iface.push_size = self.iface.push_size.max(s);
                mem(Space::Push, pointee)
            }
            StorageClass::Workgroup => {
                let (s, a) = self.natural(pointee, 0)?;
                let off = self.iface.shared_size.next_multiple_of(a.max(4));
                self.iface.shared_size = off
                    .checked_add(s)
                    .filter(|x| *x <= self.input.target.max_shared_size)
                    .ok_or_else(|| {
                        FrontendError::Unsupported(
                            "shared memory larger than the device allows".into(),
                        )
                    })?;
                Ptr::Mem {
                    space: Space::Shared,
                    dyn_off: None,
                    konst: off,
                    align: pow2_div(off).min(16),
                    ty: pointee,
                    mat: MatLayout::default(),
                    comp_stride: None,
                }
            }
            StorageClass::Input => {
                let b = self
                    .deco(id, Decoration::BuiltIn)
                    .and_then(|a| a.first().copied())
                    .and_then(BuiltIn::from_u32)
                    .ok_or_else(|| {
                        FrontendError::Unsupported(format!(
                            "Input variable %{id} that is not a built-in"
                        ))
                    })?;
                Ptr::Builtin {
                    b,
                    comp: None,
                    ty: pointee,
                }
            }
            StorageClass::UniformConstant => {
                let (img, count) = match self.stype(pointee)? {
                    SType::Array(e, n) => (e, n),
                    // A runtime array of images, texel buffers or samplers
                    // (runtimeDescriptorArray): sized by the pipeline layout, as for buffers.
                    SType::RuntimeArray(e) => (e, self.layout_count(id)?),
                    _ => (pointee, 1),
                };
                let kind = match self.stype(img)? {
                    SType::Image(t) if t.multisampled => return unsupported("multisampled images"),
                    SType::Image(t) if t.sampled == 2 => {
                        let write_only = self.deco(id, Decoration::NonReadable).is_some();
                        if write_only && super::image::reads_lowered(&t) {
                            BindingKind::StorageImageWriteOnly
                        } else {
                            BindingKind::StorageImage
                        }
                    }
                    SType::Image(t) if t.sampled == 1 => BindingKind::Sampled,
                    SType::Sampler | SType::SampledImage(_) => BindingKind::Sampled,
                    _ => return unsupported("images whose use (sampled or storage) is unknown"),
                };
                let bti = self.binding_bti(id, kind, count)?;
                Ptr::Image {
                    bti,
                    count,
                    ty: img,
                    index: None,
                }
            }
            StorageClass::Private => return Ok(()), // handled in init_private_vars
            StorageClass::Output => return Ok(()),
            other => return unsupported(format!("storage class {other:?}")),
        };
        self.iface.global_ptrs.insert(id, ptr);
        Ok(())
    }

    pub(super) fn init_private_vars(&mut self, m: &dr::Module) -> Res<()> {
        for i in &m.types_global_values {
            if i.class.opcode != spirv::Op::Variable {
                continue;
            }
            let id = rid(i)?;
            if let Some((StorageClass::Private, pointee)) = self.decl.globals.get(&id).copied() {
                let init = i.operands.get(1).map(idref).transpose()?;
                let p = self.alloc_var(id, pointee)?;
                self.init_var(&p, pointee, init)?;
                self.iface.global_ptrs.insert(id, p);
            }
        }
        Ok(())
    }

    pub(super) fn find_demotions(&mut self) -> Res<()> {
        let mut demote = HashSet::default();
        for (label, b) in &self.code.blocks {
            for i in &b.insts {
                if i.class.opcode == spirv::Op::Phi {
                    for pair in i.operands.chunks(2) {
                        if let [Operand::IdRef(v), Operand::IdRef(p)] = pair {
                            if self.code.def_block.get(v).is_some_and(|d| d != p) {
                                demote.insert(*v);
                            }
                        }
                    }
                    continue;
                }
                for o in &i.operands {
                    if let Operand::IdRef(v) = o {
                        if self.code.def_block.get(v).is_some_and(|d| d != label) {
                            demote.insert(*v);
                        }
                    }
                }
            }
        }
        self.code.demote = demote;
        Ok(())
    }

    /// Function variables reached by an access chain with a non-constant index into
    /// something other than a vector go to local memory instead of IR variables.
    pub(super) fn find_dynamic_roots(&mut self) -> Res<()> {
        let mut parent: HashMap<u32, Vec<u32>> = HashMap::default();
        let mut dynamic = Vec::new();
        for b in self.code.blocks.values() {
            for i in &b.insts {
                match i.class.opcode {
                    spirv::Op::AccessChain | spirv::Op::InBoundsAccessChain => {
                        let r = rid(i)?;
                        let base = op_id(i, 0)?;
                        parent.entry(r).or_default().push(base);
                        let mut t = match self
                            .decl
                            .result_types
                            .get(&base)
                            .and_then(|t| self.decl.types.get(t))
                        {
                            Some(SType::Pointer(_, p)) => *p,
                            _ => match self.decl.globals.get(&base) {
                                Some((_, p)) => *p,
                                None => continue,
                            },
                        };
                        for k in 1..i.operands.len() {
                            let idx = op_id(i, k)?;
                            let is_const = self.decl.consts.contains_key(&idx);
                            match self.decl.types.get(&t).cloned() {
                                Some(SType::Struct(m)) => {
                                    let Ok(c) = self.const_u32(idx) else { break };
                                    match m.get(c as usize) {
                                        Some(x) => t = *x,
                                        None => break,
                                    }
                                }
                                Some(SType::Vector(e, _)) => t = e,
                                Some(
                                    SType::Array(e, _)
                                    | SType::RuntimeArray(e)
                                    | SType::Matrix(e, _),
                                ) => {
                                    if !is_const {
                                        dynamic.push(r);
                                    }
                                    t = e;
                                }
                                _ => break,
                            }
                        }
                    }
                    spirv::Op::FunctionCall => {
                        let callee = op_id(i, 0)?;
                        if let Some(f) = self.code.funcs.get(&callee) {
                            for (k, p) in f.params.iter().enumerate() {
                                if let Ok(a) = op_id(i, k + 1) {
                                    parent.entry(*p).or_default().push(a);
                                }
                            }
                        }
                    }
                    spirv::Op::CopyObject => {
                        parent.entry(rid(i)?).or_default().push(op_id(i, 0)?);
                    }
                    _ => {}
                }
            }
        }
        let mut seen = HashSet::default();
        while let Some(x) = dynamic.pop() {
            if !seen.insert(x) {
                continue;
            }
            self.code.dyn_roots.insert(x);
            if let Some(ps) = parent.get(&x) {
                dynamic.extend(ps.iter().copied());
            }
        }
        Ok(())
    }
}

/// Sets a float-control mode a module may state once per width: an unset mode (`Default`,
/// the `Any` variant) takes `new`; false when a different mode is already set.
fn set_once<T: Copy + Default + PartialEq>(slot: &mut T, new: T) -> bool {
    if *slot != T::default() && *slot != new {
        return false;
    }
    *slot = new;
    true
}

#[cfg(test)]
mod tests {
    use super::super::testing::{check_err, check_ir};
    use super::super::FrontendError;
    use super::capability_ok;
    use crate::Target;
    use rspirv::spirv::Capability;

    /// A driver that does not advertise subgroup operations gets shaders declaring them
    /// refused; the compiler's own target takes them.
    #[test]
    fn subgroup_capabilities_need_a_target_with_subgroup_ops() {
        let subgroup = [
            Capability::GroupNonUniform,
            Capability::GroupNonUniformVote,
            Capability::GroupNonUniformBallot,
            Capability::GroupNonUniformArithmetic,
            Capability::GroupNonUniformShuffle,
            Capability::GroupNonUniformShuffleRelative,
            Capability::GroupNonUniformQuad,
            Capability::GroupNonUniformClustered,
        ];
        let mut t = Target::gen9();
        for c in subgroup {
            assert!(capability_ok(c, &t), "{c:?} with subgroup ops");
        }
        t.subgroup_ops = false;
        for c in subgroup {
            assert!(!capability_ok(c, &t), "{c:?} without subgroup ops");
        }
        assert!(capability_ok(Capability::Shader, &t));
    }

    /// A storage buffer no store names is read-only (`readonly_buffers`) unless it is
    /// `Aliased`, or a physical pointer is written (it may point into any buffer).
    #[test]
    fn unwritten_storage_buffers_not_aliased_are_read_only() {
        use super::super::testing::translate_snippet;
        let test = "unwritten_storage_buffers_not_aliased_are_read_only";
        let snippet = |extra_caps: &str, extra_code: &str| {
            format!(
                "
                {extra_caps}
                OpExtension \"SPV_KHR_storage_buffer_storage_class\"
                OpDecorate %B Block
                OpMemberDecorate %B 0 Offset 0
                OpDecorate %in DescriptorSet 0
                OpDecorate %in Binding 0
                OpDecorate %al DescriptorSet 0
                OpDecorate %al Binding 1
                OpDecorate %al Aliased
                OpDecorate %out DescriptorSet 0
                OpDecorate %out Binding 2
                %u64 = OpTypeInt 64 0
                %B = OpTypeStruct %f32
                %pB = OpTypePointer StorageBuffer %B
                %pf = OpTypePointer StorageBuffer %f32
                %gf = OpTypePointer PhysicalStorageBuffer %f32
                %in = OpVariable %pB StorageBuffer
                %al = OpVariable %pB StorageBuffer
                %out = OpVariable %pB StorageBuffer
                %c0 = OpConstant %i32 0
                %addr = OpConstant %u64 4096
                %main = OpFunction %void None %fn_void
                %entry = OpLabel
                %p0 = OpAccessChain %pf %in %c0
                %p1 = OpAccessChain %pf %al %c0
                %p2 = OpAccessChain %pf %out %c0
                %a = OpLoad %f32 %p0
                %b = OpLoad %f32 %p1
                %s = OpFAdd %f32 %a %b
                OpStore %p2 %s
                {extra_code}
                OpReturn
                OpFunctionEnd
                "
            )
        };
        let readonly = |text: &str| {
            let ir = translate_snippet(test, text, &[])?.unwrap();
            Some(
                ir.lines()
                    .find_map(|l| l.trim().strip_prefix("readonly_buffers "))
                    .unwrap_or("")
                    .to_string(),
            )
        };
        let caps = "OpCapability Int64\nOpCapability PhysicalStorageBufferAddresses\n\
                    OpExtension \"SPV_KHR_physical_storage_buffer\"";
        let Some(plain) = readonly(&snippet(caps, "")) else {
            return;
        };
        assert_eq!(plain, "0", "binding 0 only: 1 is Aliased, 2 is written");
        let global = "%g = OpConvertUToPtr %gf %addr\nOpStore %g %s Aligned 4";
        assert_eq!(readonly(&snippet(caps, global)).unwrap(), "");
    }

    /// The functions' instructions are moved out of the parsed module, not copied: during
    /// the translation the module's code is held once (copying it doubled the front end's
    /// peak memory, its largest). The translation is the same as through `translate`.
    #[test]
    fn translation_moves_the_code_out_of_the_parsed_module() {
        use super::super::testing::{module_text, spirv_as};
        let test = "translation_moves_the_code_out_of_the_parsed_module";
        let snippet = "
            %c1 = OpConstant %f32 1
            %ptr_f = OpTypePointer Function %f32
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_f Function
            %a = OpFAdd %f32 %c1 %c1
            OpBranch %next
            %next = OpLabel
            %b = OpFMul %f32 %a %a
            OpStore %x %b
            OpReturn
            OpFunctionEnd
        ";
        let Some(words) = spirv_as(test, &module_text(snippet)) else {
            return;
        };
        let target = Target::gen9();
        let input = super::super::FrontendInput {
            words: &words,
            entry: "main",
            specialization: &[],
            bindings: &[],
            target: &target,
        };
        let mut module = crate::specconst::load_words(&words).unwrap();
        let code: usize = module
            .functions
            .iter()
            .flat_map(|f| &f.blocks)
            .map(|b| b.instructions.len())
            .sum();
        assert_eq!(code, 6, "the snippet's two blocks (labels apart)");
        let out = super::super::translate_module(&input, &mut module, words[1]).unwrap();
        for f in &module.functions {
            assert_eq!(f.blocks.len(), 2, "the blocks stay, with their labels");
            for b in &f.blocks {
                assert!(b.label.is_some());
                assert!(
                    b.instructions.is_empty(),
                    "block {:?} still holds {} instructions after the translation",
                    b.label.as_ref().and_then(|l| l.result_id),
                    b.instructions.len()
                );
            }
        }
        let direct = super::super::translate(&input).unwrap();
        assert_eq!(out.shader.to_string(), direct.shader.to_string());
    }

    /// A capability newer than the decoder's grammar is refused by number, not reported as a
    /// parse error (llama.cpp's dot2 shaders declare 6912).
    #[test]
    fn capability_unknown_to_the_grammar_is_unsupported_not_a_parse_error() {
        let module = |cap: u32| {
            vec![
                rspirv::spirv::MAGIC_NUMBER,
                0x0001_0000,
                0,
                1,
                0,
                (2 << 16) | 17, // OpCapability Shader
                1,
                (2 << 16) | 17, // OpCapability <cap>
                cap,
                (3 << 16) | 14, // OpMemoryModel Logical GLSL450
                0,
                1,
            ]
        };
        let target = Target::gen9();
        let translate = |words: &[u32]| {
            super::super::translate(&super::super::FrontendInput {
                words,
                entry: "main",
                specialization: &[],
                bindings: &[],
                target: &target,
            })
            .err()
        };
        assert_eq!(
            translate(&module(6912)),
            Some(FrontendError::UnsupportedCapability(
                "6912 (not in the SPIR-V grammar this front end reads)".into()
            ))
        );
        // A capability the grammar knows still reaches the per-capability check by name.
        let known = translate(&module(Capability::Geometry as u32));
        assert_eq!(
            known,
            Some(FrontendError::UnsupportedCapability("Geometry".into()))
        );
    }

    #[test]
    fn workgroup_size_constant_overrides_local_size() {
        check_ir(
            "workgroup_size_constant_overrides_local_size",
            "
            OpDecorate %wgs BuiltIn WorkgroupSize
            %c4 = OpConstant %u32 4
            %c2 = OpConstant %u32 2
            %c1 = OpConstant %u32 1
            %wgs = OpConstantComposite %v3u32 %c4 %c2 %c1
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 4 2 1 shared 0 local 0 push 0
            fn main {
                loop {
                    break
                }
            }
            ",
        );
    }

    #[test]
    fn storage_buffer_and_push_constant_get_slots_and_size() {
        check_ir(
            "storage_buffer_and_push_constant_get_slots_and_size",
            "
            OpDecorate %buf DescriptorSet 0
            OpDecorate %buf Binding 3
            OpDecorate %Buf BufferBlock
            OpMemberDecorate %Buf 0 Offset 0
            OpDecorate %Push Block
            OpMemberDecorate %Push 0 Offset 0
            OpMemberDecorate %Push 1 Offset 4
            %Buf = OpTypeStruct %u32
            %ptr_buf = OpTypePointer Uniform %Buf
            %ptr_u32 = OpTypePointer Uniform %u32
            %buf = OpVariable %ptr_buf Uniform
            %Push = OpTypeStruct %u32 %u32
            %ptr_push = OpTypePointer PushConstant %Push
            %ptr_push_u32 = OpTypePointer PushConstant %u32
            %push = OpVariable %ptr_push PushConstant
            %c0 = OpConstant %i32 0
            %c1 = OpConstant %i32 1
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %pp = OpAccessChain %ptr_push_u32 %push %c1
            %x = OpLoad %u32 %pp
            %pb = OpAccessChain %ptr_u32 %buf %c0
            OpStore %pb %x
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 8
            fn main {
                loop {
                    %0:i32 = const 4
                    %1:i32 = load push %0 align 4
                    %2:i32 = const 0
                    store ssbo[0] %2, %1 align 16
                    break
                }
            }
            ",
        );
    }

    #[test]
    fn buffer_without_binding_is_rejected() {
        check_err(
            "buffer_without_binding_is_rejected",
            "
            OpDecorate %Buf BufferBlock
            OpMemberDecorate %Buf 0 Offset 0
            %Buf = OpTypeStruct %u32
            %ptr_buf = OpTypePointer Uniform %Buf
            %buf = OpVariable %ptr_buf Uniform
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            OpReturn
            OpFunctionEnd
            ",
            "has no Binding",
        );
    }

    /// Arrays of texel buffers take the image-array path, so their four indexing capabilities
    /// are accepted on every target.
    #[test]
    fn texel_buffer_array_capabilities_are_accepted() {
        let t = Target::gen9();
        for c in [
            Capability::UniformTexelBufferArrayDynamicIndexing,
            Capability::StorageTexelBufferArrayDynamicIndexing,
            Capability::UniformTexelBufferArrayNonUniformIndexing,
            Capability::StorageTexelBufferArrayNonUniformIndexing,
        ] {
            assert!(capability_ok(c, &t), "{c:?}");
        }
    }

    /// A runtime array of texel buffers (UniformConstant) is sized by the pipeline layout like
    /// a runtime array of buffers: without a layout (these tests pass none) it is refused for
    /// that reason, not as an image of unknown use.
    #[test]
    fn runtime_texel_buffer_array_takes_the_layout_count() {
        check_err(
            "runtime_texel_buffer_array_takes_the_layout_count",
            "
            OpCapability SampledBuffer
            OpCapability RuntimeDescriptorArray
            OpExtension \"SPV_EXT_descriptor_indexing\"
            OpDecorate %tb DescriptorSet 0
            OpDecorate %tb Binding 0
            %img = OpTypeImage %u32 Buffer 0 0 0 1 R32ui
            %arr = OpTypeRuntimeArray %img
            %ptr_arr = OpTypePointer UniformConstant %arr
            %tb = OpVariable %ptr_arr UniformConstant
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            OpReturn
            OpFunctionEnd
            ",
            "a runtime descriptor array needs the pipeline layout's descriptor count",
        );
    }

    #[test]
    fn kernel_capability_is_rejected() {
        check_err(
            "kernel_capability_is_rejected",
            "
            OpCapability Kernel
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            OpReturn
            OpFunctionEnd
            ",
            "unsupported SPIR-V capability Kernel",
        );
    }
}
