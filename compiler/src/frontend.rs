//! SPIR-V front end: words -> Ferrite IR for one GLCompute entry point.
//!
//! Structure: SPIR-V's structured CFG (OpSelectionMerge / OpLoopMerge) is walked region by
//! region into `if` / `loop` trees. Every SPIR-V value used outside the block that defines
//! it, and every OpPhi, goes through a function-local variable (stored on the defining
//! block / on the CFG edge, loaded at the use); vars-to-SSA then rebuilds SSA with explicit
//! loop parameters and `if` results. Function calls are inlined here (SPIR-V passes
//! pointers to functions, which the IR has no type for): a callee body sits in a one-trip
//! `loop` whose `break` is its return. A continue construct is emitted at every branch to
//! it. OpSwitch becomes a one-trip `loop` of guarded cases with a fall-through flag.
//! Exits that cross more than one IR loop (a `continue` inside a `switch`, a `return`
//! inside a loop of an inlined call) store a code in an escape variable and `break`;
//! the enclosing level tests the code after the loop.
//!
//! IO is lowered here as access chains are translated: a pointer into a buffer, push
//! constants, shared or local memory is (space, byte offset, known alignment), with
//! offsets, array strides and matrix strides taken from the SPIR-V decorations (so
//! std140, std430 and scalar block layouts all come out right), and natural std430-like
//! layouts for storage without explicit layout (Workgroup, dynamically indexed Function
//! arrays). Function variables indexed only by constants become trees of IR variables.

use crate::ir::{
    self, AluOp, AtomicOp, Block, Function, Instr, Kind, Node, Op, Scope, Space, SysVal, Type,
    Value, Var,
};
use crate::{BindingKind, BindingSlot, BindingUse, Target};
use rspirv::dr::{self, Operand};
use rspirv::spirv;
use spirv::{BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel, StorageClass};
use std::collections::{HashMap, HashSet};

#[derive(Debug, thiserror::Error, PartialEq, Clone)]
pub enum FrontendError {
    #[error("SPIR-V parse error: {0}")]
    Parse(String),
    #[error("invalid SPIR-V: {0}")]
    Invalid(String),
    #[error("unsupported SPIR-V capability {0}")]
    UnsupportedCapability(String),
    #[error("unsupported SPIR-V extension {0}")]
    UnsupportedExtension(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("no GLCompute entry point named '{0}'")]
    NoEntryPoint(String),
    #[error("no binding-table slot for descriptor set {set} binding {binding}")]
    NoBinding { set: u32, binding: u32 },
}

type Res<T> = Result<T, FrontendError>;

fn invalid<T>(msg: impl Into<String>) -> Res<T> {
    Err(FrontendError::Invalid(msg.into()))
}
fn unsupported<T>(msg: impl Into<String>) -> Res<T> {
    Err(FrontendError::Unsupported(msg.into()))
}

/// What the front end needs besides the words.
pub struct FrontendInput<'a> {
    pub words: &'a [u32],
    pub entry: &'a str,
    /// (SpecId, value bytes, little endian).
    pub specialization: &'a [(u32, Vec<u8>)],
    /// Descriptor slots; when empty, bindings get consecutive indices in (set, binding) order.
    pub bindings: &'a [BindingSlot],
    pub target: &'a Target,
}

pub struct FrontendOutput {
    pub shader: ir::Shader,
    pub bindings: Vec<BindingUse>,
    /// SPIR-V version of the module, (major << 16) | (minor << 8).
    pub spirv_version: u32,
}

// ---------------------------------------------------------------------------------------
// Types and layouts

#[derive(Clone, Debug, PartialEq)]
enum SType {
    Void,
    Bool,
    Int(u8),
    Float(u8),
    Vector(u32, u8),
    Matrix(u32, u8),
    Array(u32, u32),
    RuntimeArray(u32),
    Struct(Vec<u32>),
    Pointer(StorageClass, u32),
    Function,
    Other(&'static str),
}

#[derive(Clone, Copy, Debug, Default)]
struct MemberDeco {
    offset: Option<u32>,
    matrix_stride: Option<u32>,
    row_major: bool,
    builtin: Option<BuiltIn>,
}

use crate::specconst::Const;

/// A matrix stride and majorness carried by a pointer into a matrix (or array of them).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MatLayout {
    stride: Option<u32>,
    row_major: bool,
}

#[derive(Clone, Debug)]
pub(crate) enum VarTree {
    Leaf(Var),
    Comp(Vec<VarTree>),
}

#[derive(Clone, Debug)]
pub(crate) enum Ptr {
    Mem {
        space: Space,
        dyn_off: Option<Value>,
        konst: u32,
        align: u32,
        ty: u32,
        mat: MatLayout,
        /// Component stride of a vector that is a column of a row-major matrix.
        comp_stride: Option<u32>,
    },
    Var {
        tree: VarTree,
        ty: u32,
    },
    /// One component of a vector held in an IR variable.
    VarComp {
        var: Var,
        comp: Result<u8, Value>,
    },
    Builtin {
        b: BuiltIn,
        comp: Option<Result<u8, Value>>,
        ty: u32,
    },
}

#[derive(Clone, Debug)]
pub(crate) enum FVal {
    V(Value),
    C(Vec<FVal>),
    P(Box<Ptr>),
}

impl FVal {
    fn v(&self) -> Res<Value> {
        match self {
            FVal::V(v) => Ok(*v),
            _ => invalid("expected a scalar or vector value"),
        }
    }
    fn comps(&self) -> Res<&[FVal]> {
        match self {
            FVal::C(c) => Ok(c),
            _ => invalid("expected a composite value"),
        }
    }
}

/// How a demoted SPIR-V id is kept across blocks.
#[derive(Clone, Debug)]
enum Demoted {
    Val(VarTree),
    /// A pointer whose dynamic offset / component lives in a variable.
    Ptr(Box<Ptr>, Option<Var>),
}

const RETURN: u32 = u32::MAX;

#[derive(Clone, Debug)]
enum FrameKind {
    Loop {
        header: u32,
        merge: u32,
        cont: u32,
    },
    Switch {
        merge: u32,
        cases: Vec<u32>,
        ft: Var,
    },
    Func,
}

#[derive(Clone, Debug)]
struct Frame {
    kind: FrameKind,
    esc: Option<Var>,
    escapes: Vec<u32>,
}

struct SpvFunc {
    params: Vec<u32>,
    blocks: Vec<u32>,
}

struct SpvBlock {
    insts: Vec<dr::Instruction>,
}

/// Limit on emitted nodes so malformed or adversarial input cannot make emission explode.
const MAX_EMIT: usize = 1 << 20;
/// Limits on structuring recursion and on blocks visited.
const MAX_DEPTH: usize = 64;
const MAX_STEPS: usize = 1 << 18;

pub(crate) struct Fe<'a> {
    input: &'a FrontendInput<'a>,
    types: HashMap<u32, SType>,
    names_ok: HashSet<u32>,
    decos: HashMap<u32, Vec<(Decoration, Vec<u32>)>>,
    member_decos: HashMap<(u32, u32), MemberDeco>,
    consts: HashMap<u32, (u32, Const)>,
    globals: HashMap<u32, (StorageClass, u32)>,
    global_ptrs: HashMap<u32, Ptr>,
    ext_glsl: HashSet<u32>,
    funcs: HashMap<u32, SpvFunc>,
    blocks: HashMap<u32, SpvBlock>,
    block_order: HashMap<u32, usize>,
    def_block: HashMap<u32, u32>,
    demote: HashSet<u32>,
    dyn_roots: HashSet<u32>,
    result_types: HashMap<u32, u32>,
    // Emission state
    f: Function,
    stack: Vec<Block>,
    vals: HashMap<u32, FVal>,
    demoted: HashMap<u32, Demoted>,
    phi_vars: HashMap<u32, VarTree>,
    frames: Vec<Frame>,
    ret_vars: Vec<Option<VarTree>>,
    param_vals: Vec<HashMap<u32, FVal>>,
    call_depth: usize,
    emitted: usize,
    depth: usize,
    steps: usize,
    shared_size: u32,
    local_size_mem: u32,
    push_size: u32,
    bindings: Vec<BindingUse>,
    local_size: [u32; 3],
}

fn lit(o: &Operand) -> Res<u32> {
    match o {
        Operand::LiteralBit32(v) => Ok(*v),
        Operand::LiteralExtInstInteger(v) => Ok(*v),
        _ => invalid(format!("expected a literal, found {o:?}")),
    }
}
fn idref(o: &Operand) -> Res<u32> {
    match o {
        Operand::IdRef(v) | Operand::IdScope(v) | Operand::IdMemorySemantics(v) => Ok(*v),
        _ => invalid(format!("expected an id, found {o:?}")),
    }
}
fn op_id(i: &dr::Instruction, n: usize) -> Res<u32> {
    i.operands
        .get(n)
        .ok_or_else(|| FrontendError::Invalid(format!("{:?} lacks operand {n}", i.class.opcode)))
        .and_then(idref)
}
fn op_lit(i: &dr::Instruction, n: usize) -> Res<u32> {
    i.operands
        .get(n)
        .ok_or_else(|| FrontendError::Invalid(format!("{:?} lacks operand {n}", i.class.opcode)))
        .and_then(lit)
}
fn rid(i: &dr::Instruction) -> Res<u32> {
    i.result_id
        .ok_or_else(|| FrontendError::Invalid(format!("{:?} without result id", i.class.opcode)))
}
fn rty(i: &dr::Instruction) -> Res<u32> {
    i.result_type
        .ok_or_else(|| FrontendError::Invalid(format!("{:?} without result type", i.class.opcode)))
}

fn pow2_div(x: u32) -> u32 {
    if x == 0 {
        1 << 16
    } else {
        1 << x.trailing_zeros().min(16)
    }
}

/// Capabilities a GLCompute shader may declare that need nothing beyond the 32-bit core.
fn capability_ok(c: Capability, t: &Target) -> bool {
    use Capability as C;
    match c {
        C::Shader
        | C::Matrix
        | C::VariablePointersStorageBuffer
        | C::StorageBuffer16BitAccess
        | C::VulkanMemoryModel
        | C::VulkanMemoryModelDeviceScope
        | C::GroupNonUniform => true,
        // Targets without DF hardware get the soft_fp64 lowering.
        C::Float64 => true,
        C::Int64 | C::Int64Atomics => t.has_int64,
        C::Float16 => t.has_fp16,
        C::Int16 => t.has_int16,
        C::Int8 => t.has_int8,
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

fn extension_ok(e: &str) -> bool {
    matches!(
        e,
        "SPV_KHR_storage_buffer_storage_class"
            | "SPV_KHR_variable_pointers"
            | "SPV_KHR_vulkan_memory_model"
            | "SPV_KHR_16bit_storage"
            | "SPV_KHR_8bit_storage"
            | "SPV_KHR_shader_draw_parameters"
            | "SPV_KHR_non_semantic_info"
            | "SPV_GOOGLE_decorate_string"
            | "SPV_GOOGLE_hlsl_functionality1"
            | "SPV_GOOGLE_user_type"
            | "SPV_KHR_terminate_invocation"
            | "SPV_KHR_float_controls"
    )
}

/// Translates the entry point of a SPIR-V module.
pub fn translate(input: &FrontendInput) -> Res<FrontendOutput> {
    if input.words.len() < 5 || input.words[0] != spirv::MAGIC_NUMBER {
        return Err(FrontendError::Parse(
            "not a SPIR-V module (bad magic or too short)".into(),
        ));
    }
    let version = input.words[1];
    if version > input.target.max_spirv_version
        || version < 0x0001_0000
        || version & 0xff00_00ff != 0
    {
        return Err(FrontendError::Unsupported(format!(
            "SPIR-V version {}.{}",
            (version >> 16) & 0xff,
            (version >> 8) & 0xff
        )));
    }
    check_framing(input.words)?;
    // rspirv 0.12's decoder can panic on some malformed operand lists; the framing check
    // above removes the cases we know, and a panic that still happens becomes an error.
    let module = std::panic::catch_unwind(|| crate::specconst::load_words(input.words))
        .map_err(|_| FrontendError::Parse("malformed instruction operands".into()))?
        .map_err(|e| FrontendError::Parse(e.to_string()))?;
    let mut fe = Fe {
        input,
        types: HashMap::new(),
        names_ok: HashSet::new(),
        decos: HashMap::new(),
        member_decos: HashMap::new(),
        consts: HashMap::new(),
        globals: HashMap::new(),
        global_ptrs: HashMap::new(),
        ext_glsl: HashSet::new(),
        funcs: HashMap::new(),
        blocks: HashMap::new(),
        block_order: HashMap::new(),
        def_block: HashMap::new(),
        demote: HashSet::new(),
        dyn_roots: HashSet::new(),
        result_types: HashMap::new(),
        f: Function::new(input.entry),
        stack: vec![vec![]],
        vals: HashMap::new(),
        demoted: HashMap::new(),
        phi_vars: HashMap::new(),
        frames: vec![],
        ret_vars: vec![],
        param_vals: vec![],
        call_depth: 0,
        emitted: 0,
        depth: 0,
        steps: 0,
        shared_size: 0,
        local_size_mem: 0,
        push_size: 0,
        bindings: vec![],
        local_size: [1, 1, 1],
    };
    let _ = &fe.names_ok;
    fe.module(&module)?;
    Ok(FrontendOutput {
        shader: ir::Shader {
            func: fe.f,
            local_size: fe.local_size,
            shared_size: fe.shared_size,
            local_mem_size: fe.local_size_mem,
            push_size: fe.push_size,
        },
        bindings: fe.bindings,
        spirv_version: version,
    })
}

/// Checks that every instruction's word count is non-zero and stays inside the module.
fn check_framing(words: &[u32]) -> Res<()> {
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

impl Fe<'_> {
    // ---------------------------------------------------------------- module level

    /// Records one float-controls execution mode (`width` is its target-width operand).
    /// Contradicting modes for one width, and rounding modes that differ between widths
    /// (cr0 has one rounding field: roundingModeIndependence is NONE), are errors.
    fn float_mode(&mut self, m: ExecutionMode, width: u32) -> Res<()> {
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
                if mode.denorm != ir::Denorm::Any && mode.denorm != d {
                    return clash("DenormPreserve and DenormFlushToZero together");
                }
                mode.denorm = d;
            }
            ExecutionMode::RoundingModeRTE | ExecutionMode::RoundingModeRTZ => {
                let r = if m == ExecutionMode::RoundingModeRTE {
                    ir::Rounding::Rte
                } else {
                    ir::Rounding::Rtz
                };
                if mode.rounding != ir::Rounding::Any && mode.rounding != r {
                    return clash("RoundingModeRTE and RoundingModeRTZ together");
                }
                mode.rounding = r;
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

    fn module(&mut self, m: &dr::Module) -> Res<()> {
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
                    self.ext_glsl.insert(rid(e)?);
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
                if *a != spirv::AddressingModel::Logical {
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
                    self.decos.entry(target).or_default().push((*d, args));
                }
                spirv::Op::MemberDecorate | spirv::Op::MemberDecorateString => {
                    let target = op_id(a, 0)?;
                    let member = op_lit(a, 1)?;
                    let Some(Operand::Decoration(d)) = a.operands.get(2) else {
                        return invalid("OpMemberDecorate without decoration");
                    };
                    let md = self.member_decos.entry((target, member)).or_default();
                    match d {
                        Decoration::Offset => md.offset = Some(op_lit(a, 3)?),
                        Decoration::MatrixStride => md.matrix_stride = Some(op_lit(a, 3)?),
                        Decoration::RowMajor => md.row_major = true,
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
                    self.local_size = [op_lit(em, 2)?, op_lit(em, 3)?, op_lit(em, 4)?];
                    local_size_set = true;
                }
                Some(Operand::ExecutionMode(ExecutionMode::LocalSizeId)) => {
                    for k in 0..3 {
                        let id = match em.operands.get(2 + k) {
                            Some(Operand::IdRef(v)) => *v,
                            Some(Operand::LiteralBit32(v)) => *v,
                            _ => return invalid("LocalSizeId operand"),
                        };
                        self.local_size[k] = self.const_u32(id)?;
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
            if let Some((_, Const::Comp(c))) = self.consts.get(&id) {
                if c.len() == 3 {
                    for k in 0..3 {
                        if let Const::Scalar(v) = c[k] {
                            self.local_size[k] = v as u32;
                        }
                    }
                    local_size_set = true;
                }
            }
        }
        if !local_size_set {
            return invalid("entry point has no LocalSize");
        }
        let n: u64 = self.local_size.iter().map(|x| u64::from(*x)).product();
        if n == 0 || n > u64::from(self.input.target.max_workgroup_invocations) {
            return unsupported(format!(
                "workgroup size {}x{}x{} (limit {} invocations)",
                self.local_size[0],
                self.local_size[1],
                self.local_size[2],
                self.input.target.max_workgroup_invocations
            ));
        }
        // Functions
        for (fi, func) in m.functions.iter().enumerate() {
            let def = func
                .def
                .as_ref()
                .ok_or_else(|| FrontendError::Invalid("function without OpFunction".into()))?;
            let fid = rid(def)?;
            let mut params = Vec::new();
            for p in &func.parameters {
                let id = rid(p)?;
                params.push(id);
                self.result_types.insert(id, rty(p)?);
            }
            let mut blocks = Vec::new();
            for (bi, b) in func.blocks.iter().enumerate() {
                let label = rid(b
                    .label
                    .as_ref()
                    .ok_or_else(|| FrontendError::Invalid("block without label".into()))?)?;
                if self.blocks.contains_key(&label) {
                    return invalid(format!("label %{label} defined twice"));
                }
                if b.instructions.is_empty() {
                    return invalid(format!("block %{label} has no terminator"));
                }
                for i in &b.instructions {
                    if let Some(r) = i.result_id {
                        if self.def_block.insert(r, label).is_some() {
                            return invalid(format!("%{r} defined twice"));
                        }
                        if let Some(t) = i.result_type {
                            self.result_types.insert(r, t);
                        }
                    }
                }
                self.block_order.insert(label, fi * 1_000_000 + bi);
                blocks.push(label);
                self.blocks.insert(
                    label,
                    SpvBlock {
                        insts: b.instructions.clone(),
                    },
                );
            }
            if self.funcs.insert(fid, SpvFunc { params, blocks }).is_some() {
                return invalid(format!("function %{fid} defined twice"));
            }
        }
        self.find_demotions()?;
        self.find_dynamic_roots()?;
        // Emit: private variables, then the entry function inlined at top level.
        self.init_private_vars(m)?;
        self.inline_call(entry, &[], None)?;
        if self.stack.len() != 1 {
            return invalid("unbalanced structure");
        }
        self.f.body = self.stack.pop().unwrap();
        Ok(())
    }

    fn deco(&self, id: u32, d: Decoration) -> Option<&Vec<u32>> {
        self.decos
            .get(&id)?
            .iter()
            .find(|(k, _)| *k == d)
            .map(|(_, a)| a)
    }

    fn global(&mut self, i: &dr::Instruction) -> Res<()> {
        use spirv::Op as O;
        let op = i.class.opcode;
        match op {
            O::TypeVoid => self.add_type(i, SType::Void)?,
            O::TypeBool => self.add_type(i, SType::Bool)?,
            O::TypeInt => {
                let w = op_lit(i, 0)?;
                match w {
                    8 | 16 | 32 | 64 => self.add_type(i, SType::Int(w as u8))?,
                    _ => return unsupported(format!("{w}-bit integers")),
                }
            }
            O::TypeFloat => {
                let w = op_lit(i, 0)?;
                match w {
                    16 | 32 | 64 => self.add_type(i, SType::Float(w as u8))?,
                    _ => return unsupported(format!("{w}-bit floats")),
                }
            }
            O::TypeVector => {
                let (e, n) = (op_id(i, 0)?, op_lit(i, 1)?);
                if !(2..=4).contains(&n) {
                    return unsupported(format!("vectors of {n} components"));
                }
                match self.types.get(&e) {
                    Some(SType::Bool | SType::Int(_) | SType::Float(_)) => {}
                    _ => return invalid("vector of non-scalar"),
                }
                self.add_type(i, SType::Vector(e, n as u8))?
            }
            O::TypeMatrix => {
                let (c, n) = (op_id(i, 0)?, op_lit(i, 1)?);
                if !(2..=4).contains(&n) || !matches!(self.types.get(&c), Some(SType::Vector(..))) {
                    return invalid("bad matrix type");
                }
                self.add_type(i, SType::Matrix(c, n as u8))?
            }
            O::TypeArray => {
                let e = op_id(i, 0)?;
                self.check_type(e)?;
                let len = self.const_u32(op_id(i, 1)?)?;
                if len == 0 || len > 1 << 24 {
                    return invalid(format!("array length {len}"));
                }
                self.add_type(i, SType::Array(e, len))?
            }
            O::TypeRuntimeArray => {
                let e = op_id(i, 0)?;
                self.check_type(e)?;
                self.add_type(i, SType::RuntimeArray(e))?
            }
            O::TypeStruct => {
                let mut m = Vec::new();
                for k in 0..i.operands.len() {
                    let t = op_id(i, k)?;
                    self.check_type(t)?;
                    m.push(t);
                }
                self.add_type(i, SType::Struct(m))?
            }
            O::TypePointer => {
                let Some(Operand::StorageClass(sc)) = i.operands.first() else {
                    return invalid("pointer without storage class");
                };
                self.add_type(i, SType::Pointer(*sc, op_id(i, 1)?))?
            }
            O::TypeForwardPointer => return unsupported("forward pointers"),
            O::TypeFunction => self.add_type(i, SType::Function)?,
            O::TypeImage | O::TypeSampler | O::TypeSampledImage => {
                self.add_type(i, SType::Other("image/sampler"))?
            }
            O::ConstantTrue | O::ConstantFalse | O::SpecConstantTrue | O::SpecConstantFalse => {
                let t = rty(i)?;
                let mut v = matches!(op, O::ConstantTrue | O::SpecConstantTrue);
                if matches!(op, O::SpecConstantTrue | O::SpecConstantFalse) {
                    if let Some(bytes) = self.spec_value(rid(i)?) {
                        v = bytes.iter().any(|b| *b != 0);
                    }
                }
                self.add_const(i, t, Const::Scalar(u64::from(v)))?
            }
            O::Constant | O::SpecConstant => {
                let t = rty(i)?;
                let mut bits = 0u64;
                for (k, o) in i.operands.iter().enumerate() {
                    let w = match o {
                        Operand::LiteralBit32(v) => u64::from(*v),
                        Operand::LiteralBit64(v) => *v,
                        _ => return invalid("constant literal"),
                    };
                    if matches!(o, Operand::LiteralBit64(_)) {
                        bits = w;
                    } else {
                        bits |= w << (32 * k.min(1));
                    }
                }
                let sty = self.scalar_ir_type(t)?;
                if op == O::SpecConstant {
                    if let Some(bytes) = self.spec_value(rid(i)?) {
                        let mut b = [0u8; 8];
                        let n = bytes.len().min(8);
                        b[..n].copy_from_slice(&bytes[..n]);
                        bits = u64::from_le_bytes(b);
                    }
                }
                self.add_const(i, t, Const::Scalar(bits & sty.mask()))?
            }
            O::ConstantComposite | O::SpecConstantComposite => {
                let t = rty(i)?;
                let mut c = Vec::new();
                for k in 0..i.operands.len() {
                    let id = op_id(i, k)?;
                    c.push(
                        self.consts
                            .get(&id)
                            .ok_or_else(|| {
                                FrontendError::Invalid(format!("%{id} is not a constant"))
                            })?
                            .1
                            .clone(),
                    );
                }
                self.add_const(i, t, Const::Comp(c))?
            }
            O::ConstantNull => {
                let t = rty(i)?;
                let c = self.null_const(t, 0)?;
                self.add_const(i, t, c)?
            }
            O::SpecConstantOp => {
                let t = rty(i)?;
                let c = self.spec_op(i, t)?;
                self.add_const(i, t, c)?
            }
            O::Undef => {
                let t = rty(i)?;
                let c = self.null_const(t, 0)?;
                self.add_const(i, t, c)?
            }
            O::Variable => {
                let id = rid(i)?;
                let t = rty(i)?;
                let Some(Operand::StorageClass(sc)) = i.operands.first() else {
                    return invalid("variable without storage class");
                };
                let Some(SType::Pointer(_, pointee)) = self.types.get(&t).cloned() else {
                    return invalid("variable type is not a pointer");
                };
                self.result_types.insert(id, t);
                self.globals.insert(id, (*sc, pointee));
                self.global_var(id, *sc, pointee)?;
            }
            O::String | O::Line | O::NoLine | O::ExtInst => {}
            _ => return unsupported(format!("global instruction {op:?}")),
        }
        Ok(())
    }

    fn spec_value(&self, id: u32) -> Option<&[u8]> {
        let sid = *self.deco(id, Decoration::SpecId)?.first()?;
        self.input
            .specialization
            .iter()
            .find(|(k, _)| *k == sid)
            .map(|(_, v)| v.as_slice())
    }

    fn check_type(&self, t: u32) -> Res<()> {
        match self.types.get(&t) {
            Some(SType::Void | SType::Function | SType::Pointer(..)) | None => {
                invalid(format!("%{t} is not a data type"))
            }
            _ => Ok(()),
        }
    }

    fn add_type(&mut self, i: &dr::Instruction, t: SType) -> Res<()> {
        let id = rid(i)?;
        if self.types.insert(id, t).is_some() {
            return invalid(format!("type %{id} defined twice"));
        }
        Ok(())
    }

    fn add_const(&mut self, i: &dr::Instruction, t: u32, c: Const) -> Res<()> {
        let id = rid(i)?;
        self.check_type(t)?;
        self.check_const_shape(t, &c, 0)?;
        self.result_types.insert(id, t);
        self.consts.insert(id, (t, c));
        Ok(())
    }

    fn check_const_shape(&self, t: u32, c: &Const, depth: u32) -> Res<()> {
        if depth > 16 {
            return invalid("constant nested too deep");
        }
        let ok = match (self.types.get(&t), c) {
            (Some(SType::Bool | SType::Int(_) | SType::Float(_)), Const::Scalar(_)) => true,
            (Some(SType::Vector(e, n)), Const::Comp(v)) => {
                v.len() == usize::from(*n)
                    && v.iter()
                        .all(|x| self.check_const_shape(*e, x, depth + 1).is_ok())
            }
            (Some(SType::Matrix(e, n)), Const::Comp(v)) => {
                v.len() == usize::from(*n)
                    && v.iter()
                        .all(|x| self.check_const_shape(*e, x, depth + 1).is_ok())
            }
            (Some(SType::Array(e, n)), Const::Comp(v)) => {
                v.len() == *n as usize
                    && v.iter()
                        .all(|x| self.check_const_shape(*e, x, depth + 1).is_ok())
            }
            (Some(SType::Struct(m)), Const::Comp(v)) => {
                v.len() == m.len()
                    && v.iter()
                        .zip(m)
                        .all(|(x, t)| self.check_const_shape(*t, x, depth + 1).is_ok())
            }
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            invalid(format!("constant does not match its type %{t}"))
        }
    }

    fn null_const(&self, t: u32, depth: u32) -> Res<Const> {
        if depth > 16 {
            return invalid("type nested too deep");
        }
        Ok(match self.types.get(&t) {
            Some(SType::Bool | SType::Int(_) | SType::Float(_)) => Const::Scalar(0),
            Some(SType::Vector(e, n)) | Some(SType::Matrix(e, n)) => {
                Const::Comp(vec![self.null_const(*e, depth + 1)?; usize::from(*n)])
            }
            Some(SType::Array(e, n)) => {
                if *n > 4096 {
                    return unsupported("null constant of a large array");
                }
                Const::Comp(vec![self.null_const(*e, depth + 1)?; *n as usize])
            }
            Some(SType::Struct(m)) => Const::Comp(
                m.iter()
                    .map(|x| self.null_const(*x, depth + 1))
                    .collect::<Res<_>>()?,
            ),
            _ => return invalid(format!("no null value for type %{t}")),
        })
    }

    fn const_u32(&self, id: u32) -> Res<u32> {
        match self.consts.get(&id) {
            Some((_, Const::Scalar(v))) => Ok(*v as u32),
            _ => invalid(format!("%{id} is not a scalar constant")),
        }
    }

    fn spec_op(&self, i: &dr::Instruction, t: u32) -> Res<Const> {
        let Some(Operand::LiteralSpecConstantOpInteger(op)) = i.operands.first() else {
            return invalid("OpSpecConstantOp without opcode");
        };
        let mut args = Vec::new();
        for o in &i.operands[1..] {
            args.push(match o {
                Operand::IdRef(id) => {
                    let (ct, c) = self.consts.get(id).cloned().ok_or_else(|| {
                        FrontendError::Invalid(format!("%{id} is not a constant"))
                    })?;
                    crate::specconst::Arg::Value(c, self.ir_type(ct).ok())
                }
                Operand::LiteralBit32(v) => crate::specconst::Arg::Literal(*v),
                _ => return invalid("OpSpecConstantOp operand"),
            });
        }
        crate::specconst::eval_spec_op(*op, self.ir_type(t).ok(), &args)
    }

    // ---------------------------------------------------------------- types

    fn scalar_ir_type(&self, t: u32) -> Res<Type> {
        Ok(match self.types.get(&t) {
            Some(SType::Bool) => Type::B1,
            Some(SType::Int(b)) => Type::int(*b),
            Some(SType::Float(b)) => Type::float(*b),
            _ => return invalid(format!("%{t} is not a scalar type")),
        })
    }

    /// IR type of a scalar or vector SPIR-V type.
    fn ir_type(&self, t: u32) -> Res<Type> {
        match self.types.get(&t) {
            Some(SType::Vector(e, n)) => Ok(self.scalar_ir_type(*e)?.vec(*n)),
            _ => self.scalar_ir_type(t),
        }
    }

    fn stype(&self, t: u32) -> Res<SType> {
        self.types
            .get(&t)
            .cloned()
            .ok_or_else(|| FrontendError::Invalid(format!("%{t} is not a type")))
    }

    /// Natural (std430-like) size and alignment of a type for storage without explicit layout.
    fn natural(&self, t: u32, depth: u32) -> Res<(u32, u32)> {
        if depth > 32 {
            return invalid("type nested too deep");
        }
        Ok(match self.stype(t)? {
            SType::Bool => (4, 4),
            SType::Int(b) | SType::Float(b) => (u32::from(b) / 8, u32::from(b) / 8),
            SType::Vector(e, n) => {
                let (s, _) = self.natural(e, depth + 1)?;
                let a = s * if n == 3 { 4 } else { u32::from(n) };
                (s * u32::from(n), a)
            }
            SType::Matrix(c, n) => {
                let (_, a) = self.natural(c, depth + 1)?;
                (a * u32::from(n), a)
            }
            SType::Array(e, n) => {
                let (s, a) = self.natural(e, depth + 1)?;
                let stride = self.array_stride(t).unwrap_or(s.next_multiple_of(a));
                (
                    stride
                        .checked_mul(n)
                        .ok_or_else(|| FrontendError::Invalid("type too large".into()))?,
                    a,
                )
            }
            SType::RuntimeArray(e) => {
                let (_, a) = self.natural(e, depth + 1)?;
                (0, a)
            }
            SType::Struct(m) => {
                let mut off = 0u32;
                let mut al = 1;
                for (k, mt) in m.iter().enumerate() {
                    let (s, a) = self.natural(*mt, depth + 1)?;
                    al = al.max(a);
                    off = match self.member_decos.get(&(t, k as u32)).and_then(|d| d.offset) {
                        Some(o) => o,
                        None => off.next_multiple_of(a),
                    };
                    off = off
                        .checked_add(s)
                        .ok_or_else(|| FrontendError::Invalid("type too large".into()))?;
                }
                (off.next_multiple_of(al), al)
            }
            _ => return invalid(format!("%{t} has no memory layout")),
        })
    }

    fn array_stride(&self, t: u32) -> Option<u32> {
        self.deco(t, Decoration::ArrayStride)
            .and_then(|a| a.first().copied())
    }

    fn member_offset(&self, st: u32, k: u32) -> Res<u32> {
        if let Some(o) = self.member_decos.get(&(st, k)).and_then(|d| d.offset) {
            return Ok(o);
        }
        let SType::Struct(m) = self.stype(st)? else {
            return invalid("not a struct");
        };
        let mut off = 0u32;
        for (i, mt) in m.iter().enumerate() {
            let (s, a) = self.natural(*mt, 0)?;
            off = self
                .member_decos
                .get(&(st, i as u32))
                .and_then(|d| d.offset)
                .unwrap_or(off.next_multiple_of(a));
            if i as u32 == k {
                return Ok(off);
            }
            off += s;
        }
        invalid("member index out of range")
    }

    // ---------------------------------------------------------------- globals

    /// The element count of a descriptor array (an array of Block/BufferBlock structs), or
    /// 1 for a single buffer.
    fn descriptor_count(&self, pointee: u32) -> Res<u32> {
        if let SType::Array(e, n) = self.stype(pointee)? {
            if self.is_block(e) {
                return Ok(n);
            }
        }
        Ok(1)
    }

    fn is_block(&self, t: u32) -> bool {
        matches!(self.stype(t), Ok(SType::Struct(_)))
            && (self.deco(t, Decoration::Block).is_some()
                || self.deco(t, Decoration::BufferBlock).is_some())
    }

    fn binding_for(&mut self, id: u32, kind: BindingKind, count: u32) -> Res<Space> {
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
        let bti = if self.input.bindings.is_empty() {
            match self
                .bindings
                .iter()
                .find(|b| b.set == set && b.binding == binding)
            {
                Some(b) => b.bti,
                None => self.bindings.iter().map(|b| b.bti + 1).max().unwrap_or(0),
            }
        } else {
            self.input
                .bindings
                .iter()
                .find(|b| b.set == set && b.binding == binding)
                .map(|b| b.bti)
                .ok_or(FrontendError::NoBinding { set, binding })?
        };
        if !self
            .bindings
            .iter()
            .any(|b| b.set == set && b.binding == binding)
        {
            // A descriptor array takes `count` consecutive entries (the dispatch contract).
            for k in 0..count {
                self.bindings.push(BindingUse {
                    set,
                    binding,
                    bti: bti + k,
                    kind,
                });
            }
        }
        Ok(match kind {
            BindingKind::Storage => Space::Ssbo(bti),
            BindingKind::Uniform => Space::Ubo(bti),
        })
    }

    fn global_var(&mut self, id: u32, sc: StorageClass, pointee: u32) -> Res<()> {
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
                let n = self.descriptor_count(pointee)?;
                mem(self.binding_for(id, BindingKind::Storage, n)?, pointee)
            }
            StorageClass::Uniform => {
                let n = self.descriptor_count(pointee)?;
                let block = match self.stype(pointee)? {
                    SType::Array(e, _) if self.is_block(e) => e,
                    _ => pointee,
                };
                let buffer_block = self.deco(block, Decoration::BufferBlock).is_some();
                let kind = if buffer_block {
                    BindingKind::Storage
                } else {
                    BindingKind::Uniform
                };
                mem(self.binding_for(id, kind, n)?, pointee)
            }
            StorageClass::PushConstant => {
                let (s, _) = self.natural(pointee, 0)?;
                self.push_size = self.push_size.max(s);
                mem(Space::Push, pointee)
            }
            StorageClass::Workgroup => {
                let (s, a) = self.natural(pointee, 0)?;
                let off = self.shared_size.next_multiple_of(a.max(4));
                self.shared_size = off
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
            StorageClass::Private => return Ok(()), // handled in init_private_vars
            StorageClass::Output => return Ok(()),
            other => return unsupported(format!("storage class {other:?}")),
        };
        self.global_ptrs.insert(id, ptr);
        Ok(())
    }

    fn init_private_vars(&mut self, m: &dr::Module) -> Res<()> {
        for i in &m.types_global_values {
            if i.class.opcode != spirv::Op::Variable {
                continue;
            }
            let id = rid(i)?;
            if let Some((StorageClass::Private, pointee)) = self.globals.get(&id).copied() {
                let init = i.operands.get(1).map(idref).transpose()?;
                let p = self.alloc_var(id, pointee)?;
                self.init_var(&p, pointee, init)?;
                self.global_ptrs.insert(id, p);
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- analysis

    fn find_demotions(&mut self) -> Res<()> {
        let mut demote = HashSet::new();
        for (label, b) in &self.blocks {
            for i in &b.insts {
                if i.class.opcode == spirv::Op::Phi {
                    for pair in i.operands.chunks(2) {
                        if let [Operand::IdRef(v), Operand::IdRef(p)] = pair {
                            if self.def_block.get(v).is_some_and(|d| d != p) {
                                demote.insert(*v);
                            }
                        }
                    }
                    continue;
                }
                for o in &i.operands {
                    if let Operand::IdRef(v) = o {
                        if self.def_block.get(v).is_some_and(|d| d != label) {
                            demote.insert(*v);
                        }
                    }
                }
            }
        }
        self.demote = demote;
        Ok(())
    }

    /// Function variables reached by an access chain with a non-constant index into
    /// something other than a vector go to local memory instead of IR variables.
    fn find_dynamic_roots(&mut self) -> Res<()> {
        let mut parent: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut dynamic = Vec::new();
        for b in self.blocks.values() {
            for i in &b.insts {
                match i.class.opcode {
                    spirv::Op::AccessChain | spirv::Op::InBoundsAccessChain => {
                        let r = rid(i)?;
                        let base = op_id(i, 0)?;
                        parent.entry(r).or_default().push(base);
                        let mut t =
                            match self.result_types.get(&base).and_then(|t| self.types.get(t)) {
                                Some(SType::Pointer(_, p)) => *p,
                                _ => match self.globals.get(&base) {
                                    Some((_, p)) => *p,
                                    None => continue,
                                },
                            };
                        for k in 1..i.operands.len() {
                            let idx = op_id(i, k)?;
                            let is_const = self.consts.contains_key(&idx);
                            match self.types.get(&t).cloned() {
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
                        if let Some(f) = self.funcs.get(&callee) {
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
        let mut seen = HashSet::new();
        while let Some(x) = dynamic.pop() {
            if !seen.insert(x) {
                continue;
            }
            self.dyn_roots.insert(x);
            if let Some(ps) = parent.get(&x) {
                dynamic.extend(ps.iter().copied());
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- emission helpers

    fn push(&mut self, n: Node) -> Res<()> {
        self.emitted += 1;
        if self.emitted > MAX_EMIT {
            return unsupported("shader too large after inlining");
        }
        self.stack.last_mut().unwrap().push(n);
        Ok(())
    }

    fn emit(&mut self, ty: Type, op: Op) -> Res<Value> {
        let d = self.f.new_value(ty);
        self.push(Node::Instr(Instr { dst: Some(d), op }))?;
        Ok(d)
    }

    fn emit_void(&mut self, op: Op) -> Res<()> {
        self.push(Node::Instr(Instr { dst: None, op }))
    }

    fn alu(&mut self, op: AluOp, ty: Type, srcs: &[Value]) -> Res<Value> {
        self.emit(ty, Op::Alu(op, srcs.to_vec()))
    }

    fn konst(&mut self, ty: Type, bits: u64) -> Res<Value> {
        let b = if ty.is_bool() && bits != 0 {
            ty.mask()
        } else {
            bits & ty.mask()
        };
        self.emit(ty, Op::Const(vec![b; usize::from(ty.comps)]))
    }

    fn fconst(&mut self, ty: Type, v: f64) -> Res<Value> {
        let bits = match ty.bits {
            16 => u64::from(half::f16::from_f64(v).to_bits()),
            32 => u64::from((v as f32).to_bits()),
            _ => v.to_bits(),
        };
        self.konst(ty, bits)
    }

    fn i32c(&mut self, v: u32) -> Res<Value> {
        self.konst(Type::I32, u64::from(v))
    }

    fn ty(&self, v: Value) -> Type {
        self.f.ty(v)
    }

    fn extract(&mut self, v: Value, c: u8) -> Res<Value> {
        let t = self.ty(v);
        if t.comps == 1 {
            return Ok(v);
        }
        self.emit(t.scalar_type(), Op::Extract(v, c))
    }

    /// OpBitcast between vectors of different component counts (same total bits): the
    /// components as integers, split into pieces of the narrower width (low bits first, as
    /// SPIR-V orders them) and regrouped with shifts and ors. 64-bit values go through
    /// their two 32-bit words in the shapes of packDouble2x32/unpackDouble2x32, which soft
    /// fp64 takes apart without 64-bit integer operations.
    fn bitcast_regroup(&mut self, x: Value, t: Type) -> Res<Value> {
        let st = self.ty(x);
        let unit = st.bits.min(t.bits);
        let mut pieces = Vec::new();
        for c in 0..st.comps {
            let mut e = self.extract(x, c)?;
            if st.kind != Kind::Int {
                e = self.alu(AluOp::Bitcast, Type::int(st.bits), &[e])?;
            }
            pieces.extend(self.split_bits(e, unit)?);
        }
        let per = usize::from(t.bits / unit);
        let mut comps = Vec::new();
        for group in pieces.chunks(per) {
            let mut w = self.join_bits(group, t.bits)?;
            if t.kind != Kind::Int {
                w = self.alu(AluOp::Bitcast, t.scalar_type(), &[w])?;
            }
            comps.push(w);
        }
        if comps.len() == 1 {
            return Ok(comps[0]);
        }
        self.emit(t, Op::Vec(comps))
    }

    /// An integer scalar as pieces of `unit` bits, lowest first.
    fn split_bits(&mut self, v: Value, unit: u8) -> Res<Vec<Value>> {
        let bits = self.ty(v).bits;
        if bits == unit {
            return Ok(vec![v]);
        }
        if bits == 64 {
            let lo = self.alu(AluOp::U2u, Type::I32, &[v])?;
            let sh = self.i32c(32)?;
            let h = self.alu(AluOp::Ushr, Type::int(64), &[v, sh])?;
            let hi = self.alu(AluOp::U2u, Type::I32, &[h])?;
            let mut out = self.split_bits(lo, unit)?;
            out.extend(self.split_bits(hi, unit)?);
            return Ok(out);
        }
        let w = if bits < 32 {
            self.alu(AluOp::U2u, Type::I32, &[v])?
        } else {
            v
        };
        let mut out = Vec::new();
        for p in 0..bits / unit {
            let s = if p == 0 {
                w
            } else {
                let sh = self.i32c(u32::from(p * unit))?;
                self.alu(AluOp::Ushr, Type::I32, &[w, sh])?
            };
            out.push(self.alu(AluOp::U2u, Type::int(unit), &[s])?);
        }
        Ok(out)
    }

    /// Integer pieces of equal width, lowest first, joined into one integer of `bits`.
    fn join_bits(&mut self, pieces: &[Value], bits: u8) -> Res<Value> {
        let unit = self.ty(pieces[0]).bits;
        if unit == bits {
            return Ok(pieces[0]);
        }
        if bits == 64 {
            let (lo, hi) = pieces.split_at(pieces.len() / 2);
            let lo = self.join_bits(lo, 32)?;
            let hi = self.join_bits(hi, 32)?;
            let lo = self.alu(AluOp::U2u, Type::int(64), &[lo])?;
            let hi = self.alu(AluOp::U2u, Type::int(64), &[hi])?;
            let sh = self.i32c(32)?;
            let hi = self.alu(AluOp::Ishl, Type::int(64), &[hi, sh])?;
            return self.alu(AluOp::Ior, Type::int(64), &[lo, hi]);
        }
        let mut acc = self.alu(AluOp::U2u, Type::I32, &[pieces[0]])?;
        for (p, &v) in pieces.iter().enumerate().skip(1) {
            let w = self.alu(AluOp::U2u, Type::I32, &[v])?;
            let sh = self.i32c(u32::from(unit) * p as u32)?;
            let w = self.alu(AluOp::Ishl, Type::I32, &[w, sh])?;
            acc = self.alu(AluOp::Ior, Type::I32, &[acc, w])?;
        }
        if bits < 32 {
            acc = self.alu(AluOp::U2u, Type::int(bits), &[acc])?;
        }
        Ok(acc)
    }

    fn splat(&mut self, v: Value, n: u8) -> Res<Value> {
        if n == 1 || self.ty(v).comps == n {
            return Ok(v);
        }
        let t = self.ty(v);
        self.emit(t.vec(n), Op::Vec(vec![v; usize::from(n)]))
    }

    fn in_block(&mut self, f: impl FnOnce(&mut Self) -> Res<()>) -> Res<Block> {
        self.stack.push(vec![]);
        let r = f(self);
        let b = self.stack.pop().unwrap();
        r.map(|_| b)
    }

    // ---------------------------------------------------------------- values

    fn const_fval(&mut self, t: u32, c: &Const, depth: u32) -> Res<FVal> {
        if depth > 32 {
            return invalid("constant nested too deep");
        }
        match (self.stype(t)?, c) {
            (SType::Bool | SType::Int(_) | SType::Float(_), Const::Scalar(v)) => {
                let ty = self.scalar_ir_type(t)?;
                Ok(FVal::V(self.konst(ty, *v)?))
            }
            (SType::Vector(e, _), Const::Comp(v)) => {
                let ty = self.ir_type(t)?;
                let _ = e;
                let bits: Vec<u64> = v
                    .iter()
                    .map(|x| match x {
                        Const::Scalar(s) => {
                            if ty.is_bool() && *s != 0 {
                                ty.mask()
                            } else {
                                s & ty.mask()
                            }
                        }
                        Const::Comp(_) => 0,
                    })
                    .collect();
                Ok(FVal::V(self.emit(ty, Op::Const(bits))?))
            }
            (SType::Matrix(e, _) | SType::Array(e, _), Const::Comp(v)) => Ok(FVal::C(
                v.iter()
                    .map(|x| self.const_fval(e, x, depth + 1))
                    .collect::<Res<_>>()?,
            )),
            (SType::Struct(m), Const::Comp(v)) => Ok(FVal::C(
                m.iter()
                    .zip(v)
                    .map(|(mt, x)| self.const_fval(*mt, x, depth + 1))
                    .collect::<Res<_>>()?,
            )),
            _ => invalid(format!("constant shape does not match type %{t}")),
        }
    }

    /// The value of a SPIR-V id as seen from `use_block`.
    fn get(&mut self, id: u32, use_block: u32) -> Res<FVal> {
        if let Some((t, c)) = self.consts.get(&id).cloned() {
            return self.const_fval(t, &c, 0);
        }
        if let Some(p) = self.global_ptrs.get(&id) {
            return Ok(FVal::P(Box::new(p.clone())));
        }
        if let Some(p) = self.param_vals.last().and_then(|m| m.get(&id)) {
            return Ok(p.clone());
        }
        let db = self.def_block.get(&id).copied();
        if db == Some(use_block) || db.is_none() {
            return self
                .vals
                .get(&id)
                .cloned()
                .ok_or_else(|| FrontendError::Invalid(format!("%{id} used before it is defined")));
        }
        match self.demoted.get(&id).cloned() {
            Some(Demoted::Val(tree)) => self.load_tree(&tree),
            Some(Demoted::Ptr(p, var)) => {
                let mut p = *p;
                if let Some(var) = var {
                    let v = self.emit(Type::I32, Op::LoadVar(var))?;
                    match &mut p {
                        Ptr::Mem { dyn_off, .. } => *dyn_off = Some(v),
                        Ptr::VarComp { comp, .. } => *comp = Err(v),
                        Ptr::Builtin { comp, .. } => *comp = Some(Err(v)),
                        Ptr::Var { .. } => {}
                    }
                }
                Ok(FVal::P(Box::new(p)))
            }
            None => invalid(format!("%{id} used in a block it does not dominate")),
        }
    }

    fn getv(&mut self, id: u32, blk: u32) -> Res<Value> {
        self.get(id, blk)?.v()
    }

    fn type_tree(&mut self, t: u32, depth: u32) -> Res<VarTree> {
        if depth > 32 {
            return invalid("type nested too deep");
        }
        Ok(match self.stype(t)? {
            SType::Bool | SType::Int(_) | SType::Float(_) | SType::Vector(..) => {
                let ty = self.ir_type(t)?;
                VarTree::Leaf(self.f.new_var(ty))
            }
            SType::Matrix(e, n) => VarTree::Comp(
                (0..n)
                    .map(|_| self.type_tree(e, depth + 1))
                    .collect::<Res<_>>()?,
            ),
            SType::Array(e, n) => {
                if n > 256 {
                    return unsupported(
                        "a constant-indexed function array of more than 256 elements",
                    );
                }
                VarTree::Comp(
                    (0..n)
                        .map(|_| self.type_tree(e, depth + 1))
                        .collect::<Res<_>>()?,
                )
            }
            SType::Struct(m) => VarTree::Comp(
                m.iter()
                    .map(|x| self.type_tree(*x, depth + 1))
                    .collect::<Res<_>>()?,
            ),
            _ => {
                return unsupported(format!(
                    "a variable of type %{t} (pointer, runtime array or opaque)"
                ))
            }
        })
    }

    fn load_tree(&mut self, t: &VarTree) -> Res<FVal> {
        Ok(match t {
            VarTree::Leaf(v) => {
                let ty = self.f.vars[v.0 as usize];
                FVal::V(self.emit(ty, Op::LoadVar(*v))?)
            }
            VarTree::Comp(c) => FVal::C(c.iter().map(|x| self.load_tree(x)).collect::<Res<_>>()?),
        })
    }

    fn store_tree(&mut self, t: &VarTree, v: &FVal) -> Res<()> {
        match (t, v) {
            (VarTree::Leaf(var), FVal::V(x)) => {
                if self.f.vars[var.0 as usize] != self.ty(*x) {
                    return invalid("stored value type does not match the variable");
                }
                self.emit_void(Op::StoreVar(*var, *x))
            }
            (VarTree::Comp(c), FVal::C(x)) if c.len() == x.len() => {
                for (a, b) in c.iter().zip(x) {
                    self.store_tree(a, b)?;
                }
                Ok(())
            }
            _ => invalid("stored value shape does not match the variable"),
        }
    }

    /// Records the value of an id; stores it for other blocks when it is demoted.
    fn define(&mut self, id: u32, v: FVal) -> Res<()> {
        if self.demote.contains(&id) {
            match &v {
                FVal::P(p) => {
                    let mut p2 = (**p).clone();
                    let dynv = match &mut p2 {
                        Ptr::Mem { dyn_off, .. } => dyn_off.take(),
                        Ptr::VarComp { comp, .. } => match comp {
                            Err(v) => {
                                let v = *v;
                                *comp = Ok(0);
                                Some(v)
                            }
                            Ok(_) => None,
                        },
                        Ptr::Builtin { comp, .. } => match comp {
                            Some(Err(v)) => {
                                let v = *v;
                                *comp = Some(Ok(0));
                                Some(v)
                            }
                            _ => None,
                        },
                        Ptr::Var { .. } => None,
                    };
                    let var = match dynv {
                        Some(d) => {
                            let var = self.f.new_var(Type::I32);
                            self.emit_void(Op::StoreVar(var, d))?;
                            Some(var)
                        }
                        None => None,
                    };
                    self.demoted.insert(id, Demoted::Ptr(Box::new(p2), var));
                }
                _ => {
                    let tree = match self.demoted.get(&id) {
                        Some(Demoted::Val(t)) => t.clone(),
                        _ => {
                            let t = self
                                .result_types
                                .get(&id)
                                .copied()
                                .ok_or_else(|| FrontendError::Invalid("untyped id".into()))?;
                            let tree = self.type_tree(t, 0)?;
                            self.demoted.insert(id, Demoted::Val(tree.clone()));
                            tree
                        }
                    };
                    self.store_tree(&tree, &v)?;
                }
            }
        }
        self.vals.insert(id, v);
        Ok(())
    }

    // ---------------------------------------------------------------- variables and memory

    fn alloc_var(&mut self, id: u32, pointee: u32) -> Res<Ptr> {
        if self.dyn_roots.contains(&id) {
            let (s, a) = self.natural(pointee, 0)?;
            let off = self.local_size_mem.next_multiple_of(a.max(4));
            self.local_size_mem =
                off.checked_add(s)
                    .filter(|x| *x <= 1 << 20)
                    .ok_or_else(|| {
                        FrontendError::Unsupported("function memory larger than 1 MiB".into())
                    })?;
            Ok(Ptr::Mem {
                space: Space::Local,
                dyn_off: None,
                konst: off,
                align: pow2_div(off).min(16),
                ty: pointee,
                mat: MatLayout::default(),
                comp_stride: None,
            })
        } else {
            Ok(Ptr::Var {
                tree: self.type_tree(pointee, 0)?,
                ty: pointee,
            })
        }
    }

    /// Stores the initializer, or zero (variables start zeroed so vars-to-SSA never reads an
    /// undefined value).
    fn init_var(&mut self, p: &Ptr, pointee: u32, init: Option<u32>) -> Res<()> {
        let v = match init {
            Some(i) => self.get(i, u32::MAX)?,
            None => {
                if matches!(p, Ptr::Mem { .. }) {
                    return Ok(());
                }
                let c = self.null_const(pointee, 0)?;
                self.const_fval(pointee, &c, 0)?
            }
        };
        self.store_ptr(p, &v)
    }

    fn offset_value(&mut self, dyn_off: Option<Value>, konst: u32) -> Res<Value> {
        match dyn_off {
            None => self.i32c(konst),
            Some(d) if konst == 0 => Ok(d),
            Some(d) => {
                let k = self.i32c(konst)?;
                self.alu(AluOp::Iadd, Type::I32, &[d, k])
            }
        }
    }

    fn add_dyn(&mut self, dyn_off: Option<Value>, idx: Value, stride: u32) -> Res<Value> {
        let idx = self.as_i32(idx)?;
        let s = self.i32c(stride)?;
        let m = self.alu(AluOp::Imul, Type::I32, &[idx, s])?;
        match dyn_off {
            None => Ok(m),
            Some(d) => self.alu(AluOp::Iadd, Type::I32, &[d, m]),
        }
    }

    fn as_i32(&mut self, v: Value) -> Res<Value> {
        let t = self.ty(v);
        if t.kind != Kind::Int || t.comps != 1 {
            return invalid("index is not a scalar integer");
        }
        if t.bits == 32 {
            Ok(v)
        } else {
            self.alu(AluOp::I2i, Type::I32, &[v])
        }
    }

    fn load_ptr(&mut self, p: &Ptr) -> Res<FVal> {
        match p {
            Ptr::Var { tree, .. } => self.load_tree(tree),
            Ptr::VarComp { var, comp, .. } => {
                let ty = self.f.vars[var.0 as usize];
                let v = self.emit(ty, Op::LoadVar(*var))?;
                match comp {
                    Ok(c) => Ok(FVal::V(self.extract(v, *c)?)),
                    Err(i) => Ok(FVal::V(self.dyn_extract(v, *i)?)),
                }
            }
            Ptr::Builtin { b, comp, .. } => {
                let v = self.builtin(*b)?;
                match comp {
                    None => Ok(v),
                    Some(Ok(c)) => Ok(FVal::V(self.extract(v.v()?, *c)?)),
                    Some(Err(i)) => {
                        let v = v.v()?;
                        Ok(FVal::V(self.dyn_extract(v, *i)?))
                    }
                }
            }
            Ptr::Mem {
                space,
                dyn_off,
                konst,
                align,
                ty,
                mat,
                comp_stride,
            } => self.load_mem(*space, *dyn_off, *konst, *align, *ty, *mat, *comp_stride, 0),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn load_mem(
        &mut self,
        space: Space,
        dyn_off: Option<Value>,
        konst: u32,
        align: u32,
        ty: u32,
        mat: MatLayout,
        comp_stride: Option<u32>,
        depth: u32,
    ) -> Res<FVal> {
        if depth > 32 {
            return invalid("type nested too deep");
        }
        let al = |k: u32| align.min(pow2_div(k));
        match self.stype(ty)? {
            SType::Bool => {
                let off = self.offset_value(dyn_off, konst)?;
                let v = self.emit(
                    Type::I32,
                    Op::Load {
                        space,
                        offset: off,
                        align: al(konst),
                    },
                )?;
                let z = self.i32c(0)?;
                Ok(FVal::V(self.alu(AluOp::Ine, Type::B1, &[v, z])?))
            }
            SType::Int(_) | SType::Float(_) => {
                let t = self.ir_type(ty)?;
                let off = self.offset_value(dyn_off, konst)?;
                Ok(FVal::V(self.emit(
                    t,
                    Op::Load {
                        space,
                        offset: off,
                        align: al(konst),
                    },
                )?))
            }
            SType::Vector(e, n) => {
                let et = self.scalar_ir_type(e)?;
                if et.is_bool() || comp_stride.is_some_and(|s| s != et.comp_bytes()) {
                    let stride = comp_stride.unwrap_or(4);
                    let mut c = Vec::new();
                    for k in 0..u32::from(n) {
                        c.push(
                            self.load_mem(
                                space,
                                dyn_off,
                                konst + k * stride,
                                align,
                                e,
                                mat,
                                None,
                                depth + 1,
                            )?
                            .v()?,
                        );
                    }
                    return Ok(FVal::V(self.emit(et.vec(n), Op::Vec(c))?));
                }
                let off = self.offset_value(dyn_off, konst)?;
                Ok(FVal::V(self.emit(
                    et.vec(n),
                    Op::Load {
                        space,
                        offset: off,
                        align: al(konst),
                    },
                )?))
            }
            SType::Matrix(c, n) => {
                let (cs, ca) = self.natural(c, depth + 1)?;
                let _ = cs;
                let stride = mat.stride.unwrap_or(ca);
                let SType::Vector(e, _) = self.stype(c)? else {
                    return invalid("matrix column");
                };
                let esz = self.scalar_ir_type(e)?.comp_bytes();
                let mut cols = Vec::new();
                for k in 0..u32::from(n) {
                    cols.push(if mat.row_major {
                        self.load_mem(
                            space,
                            dyn_off,
                            konst + k * esz,
                            align,
                            c,
                            MatLayout::default(),
                            Some(stride),
                            depth + 1,
                        )?
                    } else {
                        self.load_mem(
                            space,
                            dyn_off,
                            konst + k * stride,
                            align,
                            c,
                            MatLayout::default(),
                            None,
                            depth + 1,
                        )?
                    });
                }
                Ok(FVal::C(cols))
            }
            SType::Array(e, n) => {
                let stride = self.elem_stride(ty, e)?;
                if n > 4096 {
                    return unsupported("loading a whole array of more than 4096 elements");
                }
                let mut v = Vec::new();
                for k in 0..n {
                    v.push(self.load_mem(
                        space,
                        dyn_off,
                        konst + k * stride,
                        align,
                        e,
                        mat,
                        None,
                        depth + 1,
                    )?);
                }
                Ok(FVal::C(v))
            }
            SType::Struct(m) => {
                let mut v = Vec::new();
                for (k, mt) in m.iter().enumerate() {
                    let off = self.member_offset(ty, k as u32)?;
                    let md = self
                        .member_decos
                        .get(&(ty, k as u32))
                        .copied()
                        .unwrap_or_default();
                    let ml = MatLayout {
                        stride: md.matrix_stride,
                        row_major: md.row_major,
                    };
                    v.push(self.load_mem(
                        space,
                        dyn_off,
                        konst + off,
                        align,
                        *mt,
                        ml,
                        None,
                        depth + 1,
                    )?);
                }
                Ok(FVal::C(v))
            }
            SType::RuntimeArray(_) => unsupported("loading a whole runtime array"),
            _ => invalid("load of a non-data type"),
        }
    }

    fn elem_stride(&self, arr: u32, elem: u32) -> Res<u32> {
        match self.array_stride(arr) {
            Some(s) => Ok(s),
            None => {
                let (s, a) = self.natural(elem, 0)?;
                Ok(s.next_multiple_of(a))
            }
        }
    }

    fn store_ptr(&mut self, p: &Ptr, v: &FVal) -> Res<()> {
        match p {
            Ptr::Var { tree, .. } => self.store_tree(tree, v),
            Ptr::VarComp { var, comp, .. } => {
                let ty = self.f.vars[var.0 as usize];
                let old = self.emit(ty, Op::LoadVar(*var))?;
                let x = v.v()?;
                if self.ty(x) != ty.scalar_type() {
                    return invalid("component store type");
                }
                let new = match comp {
                    Ok(c) if *c < ty.comps => self.emit(ty, Op::Insert(old, x, *c))?,
                    Ok(_) => return invalid("component index out of range"),
                    Err(i) => self.dyn_insert(old, x, *i)?,
                };
                self.emit_void(Op::StoreVar(*var, new))
            }
            Ptr::Builtin { .. } => invalid("store to an input built-in"),
            Ptr::Mem {
                space,
                dyn_off,
                konst,
                align,
                ty,
                mat,
                comp_stride,
            } => {
                if matches!(space, Space::Ubo(_) | Space::Push) {
                    return invalid("store to read-only memory");
                }
                self.store_mem(
                    *space,
                    *dyn_off,
                    *konst,
                    *align,
                    *ty,
                    *mat,
                    *comp_stride,
                    v,
                    0,
                )
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn store_mem(
        &mut self,
        space: Space,
        dyn_off: Option<Value>,
        konst: u32,
        align: u32,
        ty: u32,
        mat: MatLayout,
        comp_stride: Option<u32>,
        v: &FVal,
        depth: u32,
    ) -> Res<()> {
        if depth > 32 {
            return invalid("type nested too deep");
        }
        let al = |k: u32| align.min(pow2_div(k));
        match self.stype(ty)? {
            SType::Bool => {
                let x = v.v()?;
                let x = self.alu(AluOp::B2i, Type::I32, &[x])?;
                let off = self.offset_value(dyn_off, konst)?;
                self.emit_void(Op::Store {
                    space,
                    offset: off,
                    value: x,
                    align: al(konst),
                })
            }
            SType::Int(_) | SType::Float(_) => {
                let x = v.v()?;
                if self.ty(x) != self.ir_type(ty)? {
                    return invalid("stored value type");
                }
                let off = self.offset_value(dyn_off, konst)?;
                self.emit_void(Op::Store {
                    space,
                    offset: off,
                    value: x,
                    align: al(konst),
                })
            }
            SType::Vector(e, n) => {
                let x = v.v()?;
                let et = self.scalar_ir_type(e)?;
                if self.ty(x) != et.vec(n) {
                    return invalid("stored vector type");
                }
                if et.is_bool() || comp_stride.is_some_and(|s| s != et.comp_bytes()) {
                    let stride = comp_stride.unwrap_or(4);
                    for k in 0..n {
                        let c = self.extract(x, k)?;
                        self.store_mem(
                            space,
                            dyn_off,
                            konst + u32::from(k) * stride,
                            align,
                            e,
                            mat,
                            None,
                            &FVal::V(c),
                            depth + 1,
                        )?;
                    }
                    return Ok(());
                }
                let off = self.offset_value(dyn_off, konst)?;
                self.emit_void(Op::Store {
                    space,
                    offset: off,
                    value: x,
                    align: al(konst),
                })
            }
            SType::Matrix(c, n) => {
                let cols = v.comps()?.to_vec();
                if cols.len() != usize::from(n) {
                    return invalid("matrix shape");
                }
                let (_, ca) = self.natural(c, depth + 1)?;
                let stride = mat.stride.unwrap_or(ca);
                let SType::Vector(e, _) = self.stype(c)? else {
                    return invalid("matrix column");
                };
                let esz = self.scalar_ir_type(e)?.comp_bytes();
                for (k, col) in cols.iter().enumerate() {
                    let k = k as u32;
                    if mat.row_major {
                        self.store_mem(
                            space,
                            dyn_off,
                            konst + k * esz,
                            align,
                            c,
                            MatLayout::default(),
                            Some(stride),
                            col,
                            depth + 1,
                        )?;
                    } else {
                        self.store_mem(
                            space,
                            dyn_off,
                            konst + k * stride,
                            align,
                            c,
                            MatLayout::default(),
                            None,
                            col,
                            depth + 1,
                        )?;
                    }
                }
                Ok(())
            }
            SType::Array(e, n) => {
                let els = v.comps()?.to_vec();
                if els.len() != n as usize {
                    return invalid("array shape");
                }
                let stride = self.elem_stride(ty, e)?;
                for (k, x) in els.iter().enumerate() {
                    self.store_mem(
                        space,
                        dyn_off,
                        konst + k as u32 * stride,
                        align,
                        e,
                        mat,
                        None,
                        x,
                        depth + 1,
                    )?;
                }
                Ok(())
            }
            SType::Struct(m) => {
                let els = v.comps()?.to_vec();
                if els.len() != m.len() {
                    return invalid("struct shape");
                }
                for (k, mt) in m.iter().enumerate() {
                    let off = self.member_offset(ty, k as u32)?;
                    let md = self
                        .member_decos
                        .get(&(ty, k as u32))
                        .copied()
                        .unwrap_or_default();
                    let ml = MatLayout {
                        stride: md.matrix_stride,
                        row_major: md.row_major,
                    };
                    self.store_mem(
                        space,
                        dyn_off,
                        konst + off,
                        align,
                        *mt,
                        ml,
                        None,
                        &els[k],
                        depth + 1,
                    )?;
                }
                Ok(())
            }
            _ => invalid("store of a non-data type"),
        }
    }

    fn dyn_extract(&mut self, v: Value, idx: Value) -> Res<Value> {
        let t = self.ty(v);
        let idx = self.as_i32(idx)?;
        let mut r = self.extract(v, 0)?;
        for k in 1..t.comps {
            let c = self.extract(v, k)?;
            let kk = self.i32c(u32::from(k))?;
            let eq = self.alu(AluOp::Ieq, Type::B1, &[idx, kk])?;
            r = self.alu(AluOp::Bcsel, t.scalar_type(), &[eq, c, r])?;
        }
        Ok(r)
    }

    fn dyn_insert(&mut self, v: Value, x: Value, idx: Value) -> Res<Value> {
        let t = self.ty(v);
        let idx = self.as_i32(idx)?;
        let mut comps = Vec::new();
        for k in 0..t.comps {
            let c = self.extract(v, k)?;
            let kk = self.i32c(u32::from(k))?;
            let eq = self.alu(AluOp::Ieq, Type::B1, &[idx, kk])?;
            comps.push(self.alu(AluOp::Bcsel, t.scalar_type(), &[eq, x, c])?);
        }
        self.emit(t, Op::Vec(comps))
    }

    fn builtin(&mut self, b: BuiltIn) -> Res<FVal> {
        let sv = match b {
            BuiltIn::GlobalInvocationId => SysVal::GlobalInvocationId,
            BuiltIn::LocalInvocationId => SysVal::LocalInvocationId,
            BuiltIn::LocalInvocationIndex => SysVal::LocalInvocationIndex,
            BuiltIn::WorkgroupId => SysVal::WorkgroupId,
            BuiltIn::NumWorkgroups => SysVal::NumWorkgroups,
            BuiltIn::SubgroupSize => SysVal::SubgroupSize,
            BuiltIn::SubgroupId => SysVal::SubgroupId,
            BuiltIn::SubgroupLocalInvocationId => SysVal::SubgroupInvocation,
            BuiltIn::NumSubgroups => SysVal::NumSubgroups,
            BuiltIn::WorkgroupSize => {
                let ls = self.local_size;
                let v = self.emit(
                    Type::I32.vec(3),
                    Op::Const(ls.iter().map(|x| u64::from(*x)).collect()),
                )?;
                return Ok(FVal::V(v));
            }
            other => return unsupported(format!("built-in {other:?} in a compute shader")),
        };
        Ok(FVal::V(self.emit(sv.ty(), Op::SysVal(sv))?))
    }

    fn access_chain(&mut self, base: Ptr, idx: &[u32], blk: u32) -> Res<Ptr> {
        let mut p = base;
        for &id in idx {
            let c = self.consts.get(&id).and_then(|(_, c)| {
                if let Const::Scalar(v) = c {
                    Some(*v as u32)
                } else {
                    None
                }
            });
            let dynv = if c.is_none() {
                Some(self.getv(id, blk)?)
            } else {
                None
            };
            p = match p {
                Ptr::Mem {
                    space,
                    dyn_off,
                    konst,
                    align,
                    ty,
                    mat,
                    comp_stride,
                } => {
                    let mut np = Ptr::Mem {
                        space,
                        dyn_off,
                        konst,
                        align,
                        ty,
                        mat,
                        comp_stride: None,
                    };
                    let Ptr::Mem {
                        dyn_off: d,
                        konst: k,
                        align: a,
                        ty: t,
                        mat: m,
                        comp_stride: cs,
                        ..
                    } = &mut np
                    else {
                        unreachable!()
                    };
                    let mut step = |this: &mut Self, stride: u32, nt: u32| -> Res<()> {
                        match (c, dynv) {
                            (Some(c), _) => {
                                *k = k
                                    .checked_add(c.checked_mul(stride).ok_or_else(|| {
                                        FrontendError::Invalid("offset overflow".into())
                                    })?)
                                    .ok_or_else(|| {
                                        FrontendError::Invalid("offset overflow".into())
                                    })?;
                            }
                            (None, Some(v)) => {
                                *d = Some(this.add_dyn(*d, v, stride)?);
                                *a = (*a).min(pow2_div(stride));
                            }
                            _ => unreachable!(),
                        }
                        *t = nt;
                        Ok(())
                    };
                    let desc_array = match self.stype(ty)? {
                        SType::Array(e, n) if self.is_block(e) => Some((e, n)),
                        _ => None,
                    };
                    if let Some((e, n)) = desc_array {
                        // An array of blocks is a descriptor array: element k is its own
                        // buffer at binding-table entry first + k.
                        let Some(c) = c else {
                            return unsupported(
                                "dynamically indexed descriptor arrays \
                                 (shaderStorageBufferArrayDynamicIndexing)",
                            );
                        };
                        if c >= n {
                            return invalid("descriptor array index out of range");
                        }
                        let space = match space {
                            Space::Ssbo(b) => Space::Ssbo(b + c),
                            Space::Ubo(b) => Space::Ubo(b + c),
                            _ => return invalid("array of blocks outside a buffer"),
                        };
                        p = Ptr::Mem {
                            space,
                            dyn_off,
                            konst,
                            align,
                            ty: e,
                            mat,
                            comp_stride: None,
                        };
                        continue;
                    }
                    match self.stype(ty)? {
                        SType::Struct(members) => {
                            let Some(c) = c else {
                                return invalid("struct index must be constant");
                            };
                            let nt = *members.get(c as usize).ok_or_else(|| {
                                FrontendError::Invalid("member index out of range".into())
                            })?;
                            let off = self.member_offset(ty, c)?;
                            let md = self.member_decos.get(&(ty, c)).copied().unwrap_or_default();
                            *k = k
                                .checked_add(off)
                                .ok_or_else(|| FrontendError::Invalid("offset overflow".into()))?;
                            *t = nt;
                            *m = MatLayout {
                                stride: md.matrix_stride,
                                row_major: md.row_major,
                            };
                        }
                        SType::Array(e, _) | SType::RuntimeArray(e) => {
                            let stride = self.elem_stride(ty, e)?;
                            step(self, stride, e)?;
                        }
                        SType::Matrix(col, _) => {
                            let (_, ca) = self.natural(col, 0)?;
                            let stride = mat.stride.unwrap_or(ca);
                            let SType::Vector(e, _) = self.stype(col)? else {
                                return invalid("matrix column");
                            };
                            let esz = self.scalar_ir_type(e)?.comp_bytes();
                            if mat.row_major {
                                step(self, esz, col)?;
                                *cs = Some(stride);
                            } else {
                                step(self, stride, col)?;
                            }
                            *m = MatLayout::default();
                        }
                        SType::Vector(e, _) => {
                            let esz = self.natural(e, 0)?.0;
                            step(self, comp_stride.unwrap_or(esz), e)?;
                        }
                        _ => return invalid("access chain into a scalar"),
                    }
                    np
                }
                Ptr::Var { tree, ty } => match (self.stype(ty)?, tree) {
                    (SType::Struct(m), VarTree::Comp(t)) => {
                        let c = c.ok_or_else(|| {
                            FrontendError::Invalid("struct index must be constant".into())
                        })? as usize;
                        Ptr::Var {
                            tree: t.get(c).cloned().ok_or_else(|| {
                                FrontendError::Invalid("index out of range".into())
                            })?,
                            ty: *m
                                .get(c)
                                .ok_or_else(|| FrontendError::Invalid("index".into()))?,
                        }
                    }
                    (SType::Array(e, _) | SType::Matrix(e, _), VarTree::Comp(t)) => {
                        let Some(c) = c else {
                            return unsupported(
                                "dynamic index into a function variable that was not demoted",
                            );
                        };
                        // Out-of-range constant indices are undefined; clamp to stay safe.
                        let c = (c as usize).min(t.len() - 1);
                        Ptr::Var {
                            tree: t[c].clone(),
                            ty: e,
                        }
                    }
                    (SType::Vector(_, n), VarTree::Leaf(var)) => {
                        let comp = match (c, dynv) {
                            (Some(c), _) => Ok((c as u8).min(n - 1)),
                            (None, Some(v)) => Err(v),
                            _ => unreachable!(),
                        };
                        Ptr::VarComp { var, comp }
                    }
                    _ => return invalid("access chain does not match the variable type"),
                },
                Ptr::Builtin { b, comp: None, ty } => match self.stype(ty)? {
                    SType::Vector(e, n) => Ptr::Builtin {
                        b,
                        comp: Some(match (c, dynv) {
                            (Some(c), _) => Ok((c as u8).min(n - 1)),
                            (None, Some(v)) => Err(v),
                            _ => unreachable!(),
                        }),
                        ty: e,
                    },
                    _ => return invalid("access chain into a scalar built-in"),
                },
                Ptr::VarComp { .. } | Ptr::Builtin { .. } => {
                    return invalid("access chain into a scalar")
                }
            };
        }
        Ok(p)
    }

    fn ptr_of(&mut self, id: u32, blk: u32) -> Res<Ptr> {
        match self.get(id, blk)? {
            FVal::P(p) => Ok(*p),
            _ => invalid(format!("%{id} is not a pointer")),
        }
    }

    // ---------------------------------------------------------------- control flow

    fn inline_call(&mut self, fid: u32, args: &[FVal], ret_ty: Option<u32>) -> Res<Option<FVal>> {
        if self.call_depth > 64 {
            return unsupported("function calls nested more than 64 deep (recursion?)");
        }
        let (params, entry_block) = {
            let f = self
                .funcs
                .get(&fid)
                .ok_or_else(|| FrontendError::Invalid(format!("%{fid} is not a function")))?;
            (
                f.params.clone(),
                *f.blocks
                    .first()
                    .ok_or_else(|| FrontendError::Invalid("function without blocks".into()))?,
            )
        };
        if params.len() != args.len() {
            return invalid("wrong number of call arguments");
        }
        self.param_vals
            .push(params.iter().copied().zip(args.iter().cloned()).collect());
        let ret_tree = match ret_ty {
            Some(t) if !matches!(self.types.get(&t), Some(SType::Void)) => {
                Some(self.type_tree(t, 0)?)
            }
            _ => None,
        };
        self.ret_vars.push(ret_tree.clone());
        self.call_depth += 1;
        // Function-scope variables are declared in the first block.
        self.in_loop_frame(FrameKind::Func, |this| this.region(entry_block, None, None))?;
        self.call_depth -= 1;
        self.ret_vars.pop();
        self.param_vals.pop();
        match ret_tree {
            Some(t) => Ok(Some(self.load_tree(&t)?)),
            None => Ok(None),
        }
    }

    /// Emits a one-trip or real loop for a frame; `body` emits the frame's contents. Then
    /// dispatches the escapes that crossed it.
    fn in_loop_frame(
        &mut self,
        kind: FrameKind,
        body: impl FnOnce(&mut Self) -> Res<()>,
    ) -> Res<()> {
        self.frames.push(Frame {
            kind,
            esc: None,
            escapes: vec![],
        });
        let blk = self.in_block(|this| {
            body(this)?;
            // A frame whose body falls off its end leaves the one-trip loop.
            this.push(Node::Break(vec![]))
        });
        let frame = self.frames.pop().unwrap();
        let mut blk = blk?;
        // A body ending in a jump already has its exit; drop the unreachable break we added.
        if blk.len() >= 2 && blk[blk.len() - 2].is_jump() {
            blk.pop();
        }
        if let Some(esc) = frame.esc {
            let z = self.i32c(0)?;
            self.emit_void(Op::StoreVar(esc, z))?;
        }
        self.push(Node::Loop(Box::new(ir::Loop {
            params: vec![],
            body: blk,
            results: vec![],
        })))?;
        if let Some(esc) = frame.esc {
            for (k, target) in frame.escapes.iter().enumerate() {
                let code = self.i32c(k as u32 + 1)?;
                let cur = self.emit(Type::I32, Op::LoadVar(esc))?;
                let eq = self.alu(AluOp::Ieq, Type::B1, &[cur, code])?;
                let t = *target;
                let then_ = self.in_block(|this| this.jump(t))?;
                self.push(Node::If(Box::new(ir::If {
                    cond: eq,
                    then_,
                    else_: vec![],
                    results: vec![],
                })))?;
            }
        }
        Ok(())
    }

    fn is_frame_target(&self, b: u32) -> bool {
        self.frames.iter().any(|f| match &f.kind {
            FrameKind::Loop {
                header,
                merge,
                cont,
            } => b == *header || b == *merge || b == *cont,
            FrameKind::Switch { merge, cases, .. } => b == *merge || cases.contains(&b),
            FrameKind::Func => false,
        })
    }

    /// Emits a jump to a frame target (break, continue, continue construct, switch exit,
    /// fall-through, return), escaping through inner frames when needed.
    fn jump(&mut self, target: u32) -> Res<()> {
        let n = self.frames.len();
        // Find the frame the target belongs to.
        let mut found = None;
        for k in (0..n).rev() {
            let hit = match &self.frames[k].kind {
                FrameKind::Loop {
                    header,
                    merge,
                    cont,
                } => target == *header || target == *merge || target == *cont,
                FrameKind::Switch { merge, cases, .. } => {
                    target == *merge || (k == n - 1 && cases.contains(&target))
                }
                FrameKind::Func => target == RETURN,
            };
            if hit {
                found = Some(k);
                break;
            }
        }
        let Some(k) = found else {
            return invalid(format!("branch to %{target} leaves no enclosing construct"));
        };
        if k != n - 1 {
            // Escape the innermost frame; its parent level re-dispatches.
            let fr = self.frames.last_mut().unwrap();
            let code = match fr.escapes.iter().position(|t| *t == target) {
                Some(p) => p as u32 + 1,
                None => {
                    fr.escapes.push(target);
                    fr.escapes.len() as u32
                }
            };
            let esc = match fr.esc {
                Some(e) => e,
                None => {
                    let e = self.f.new_var(Type::I32);
                    self.frames.last_mut().unwrap().esc = Some(e);
                    e
                }
            };
            let c = self.i32c(code)?;
            self.emit_void(Op::StoreVar(esc, c))?;
            return self.push(Node::Break(vec![]));
        }
        match self.frames[k].kind.clone() {
            FrameKind::Loop {
                header,
                merge,
                cont,
            } => {
                if target == merge {
                    self.push(Node::Break(vec![]))
                } else if target == header {
                    self.push(Node::Continue(vec![]))
                } else {
                    // The continue construct, emitted here; it ends with the back edge.
                    let _ = cont;
                    self.continue_construct(target, header)
                }
            }
            FrameKind::Switch { merge, ft, .. } => {
                if target == merge {
                    self.push(Node::Break(vec![]))
                } else {
                    let t = self.konst(Type::B1, 1)?;
                    self.emit_void(Op::StoreVar(ft, t))
                }
            }
            FrameKind::Func => self.push(Node::Break(vec![])),
        }
    }

    fn continue_construct(&mut self, cont: u32, header: u32) -> Res<()> {
        // While emitting the continue construct, a branch to the continue target itself is
        // impossible; mark the frame so region() treats `cont` as a normal block.
        let k = self.frames.len() - 1;
        let saved = self.frames[k].kind.clone();
        if let FrameKind::Loop { merge, .. } = saved {
            self.frames[k].kind = FrameKind::Loop {
                header,
                merge,
                cont: header,
            };
        }
        let r = self.region(cont, None, None);
        self.frames[k].kind = saved;
        r
    }

    /// Phi stores for the CFG edge `from -> to`.
    fn take_edge(&mut self, from: u32, to: u32) -> Res<()> {
        let Some(b) = self.blocks.get(&to) else {
            return Ok(());
        };
        let phis: Vec<(u32, u32, u32)> = b
            .insts
            .iter()
            .filter(|i| i.class.opcode == spirv::Op::Phi)
            .filter_map(|i| {
                let r = i.result_id?;
                let t = i.result_type?;
                i.operands.chunks(2).find_map(|p| match p {
                    [Operand::IdRef(v), Operand::IdRef(pb)] if *pb == from => Some((r, t, *v)),
                    _ => None,
                })
            })
            .collect();
        let mut vals = Vec::new();
        for (r, t, v) in &phis {
            vals.push((*r, *t, self.get(*v, from)?));
        }
        for (r, t, v) in vals {
            if matches!(v, FVal::P(_)) {
                return unsupported("OpPhi of pointers (variable pointers)");
            }
            let tree = match self.phi_vars.get(&r) {
                Some(t) => t.clone(),
                None => {
                    let tree = self.type_tree(t, 0)?;
                    self.phi_vars.insert(r, tree.clone());
                    tree
                }
            };
            self.store_tree(&tree, &v)?;
        }
        Ok(())
    }

    fn merge_of(&self, b: u32) -> Res<Option<(spirv::Op, u32, Option<u32>)>> {
        let insts = &self
            .blocks
            .get(&b)
            .ok_or_else(|| FrontendError::Invalid(format!("%{b} is not a block")))?
            .insts;
        if insts.len() < 2 {
            return Ok(None);
        }
        let m = &insts[insts.len() - 2];
        Ok(match m.class.opcode {
            spirv::Op::SelectionMerge => Some((spirv::Op::SelectionMerge, op_id(m, 0)?, None)),
            spirv::Op::LoopMerge => Some((spirv::Op::LoopMerge, op_id(m, 0)?, Some(op_id(m, 1)?))),
            _ => None,
        })
    }

    /// Emits the region starting at `start` until it reaches `end` or ends in a jump.
    /// With `entry`, the first block is entered even if it is a frame target (a case).
    fn region(&mut self, start: u32, end: Option<u32>, from: Option<u32>) -> Res<()> {
        self.region_ex(start, end, from, false)
    }

    fn region_ex(
        &mut self,
        start: u32,
        end: Option<u32>,
        from: Option<u32>,
        entry: bool,
    ) -> Res<()> {
        // Malformed (unstructured or cyclic) control flow could recurse or loop without
        // bound; structured shaders stay far below both limits.
        if self.depth > MAX_DEPTH {
            return unsupported("control flow nested too deep (or not structured)");
        }
        self.depth += 1;
        let r = self.region_inner(start, end, from, entry);
        self.depth -= 1;
        r
    }

    fn region_inner(
        &mut self,
        start: u32,
        end: Option<u32>,
        from: Option<u32>,
        entry: bool,
    ) -> Res<()> {
        if let Some(f) = from {
            self.take_edge(f, start)?;
        }
        let mut block = start;
        let mut first = true;
        loop {
            if Some(block) == end {
                return Ok(());
            }
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return unsupported("control flow too large to structure (or not structured)");
            }
            if !self.blocks.contains_key(&block) {
                return invalid(format!(
                    "branch to %{block}, which is not a block of this function"
                ));
            }
            if !(first && entry) && self.is_frame_target(block) {
                return self.jump(block);
            }
            first = false;
            if let Some((spirv::Op::LoopMerge, merge, Some(cont))) = self.merge_of(block)? {
                if !self.blocks.contains_key(&merge) || !self.blocks.contains_key(&cont) {
                    return invalid("loop merge or continue target is not a block");
                }
                let hdr = block;
                self.in_loop_frame(
                    FrameKind::Loop {
                        header: hdr,
                        merge,
                        cont,
                    },
                    |this| {
                        if let Some(next) = this.block_body(hdr)? {
                            this.region(next, None, None)?;
                        }
                        Ok(())
                    },
                )?;
                block = merge;
                continue;
            }
            match self.block_body(block)? {
                Some(next) => block = next,
                None => return Ok(()),
            }
        }
    }

    /// Emits a block's instructions and terminator. Returns the block where the region
    /// continues, or None if it ended in a jump.
    fn block_body(&mut self, b: u32) -> Res<Option<u32>> {
        let insts = self
            .blocks
            .get(&b)
            .ok_or_else(|| FrontendError::Invalid(format!("%{b} is not a block")))?
            .insts
            .clone();
        let (term, body) = insts
            .split_last()
            .ok_or_else(|| FrontendError::Invalid("empty block".into()))?;
        for i in body {
            self.instruction(i, b)?;
        }
        use spirv::Op as O;
        match term.class.opcode {
            O::Branch => {
                let t = op_id(term, 0)?;
                self.take_edge(b, t)?;
                Ok(Some(t))
            }
            O::BranchConditional => {
                let c = self.getv(op_id(term, 0)?, b)?;
                if !self.ty(c).is_bool() || self.ty(c).comps != 1 {
                    return invalid("branch condition is not a boolean");
                }
                let (t, f) = (op_id(term, 1)?, op_id(term, 2)?);
                let merge = match self.merge_of(b)? {
                    Some((O::SelectionMerge, m, _)) => Some(m),
                    _ => None,
                };
                if let Some(m) = merge {
                    let then_ = self.in_block(|this| {
                        this.region(t, Some(m), Some(b))
                            .and_then(|_| this.edge_to_end(t, m, b))
                    })?;
                    let else_ = self.in_block(|this| {
                        this.region(f, Some(m), Some(b))
                            .and_then(|_| this.edge_to_end(f, m, b))
                    })?;
                    self.push(Node::If(Box::new(ir::If {
                        cond: c,
                        then_,
                        else_,
                        results: vec![],
                    })))?;
                    return Ok(Some(m));
                }
                let tj = self.is_frame_target(t);
                let fj = self.is_frame_target(f);
                if t == f {
                    self.take_edge(b, t)?;
                    return Ok(Some(t));
                }
                match (tj, fj) {
                    (true, true) => {
                        let then_ = self.in_block(|this| {
                            this.take_edge(b, t)?;
                            this.jump(t)
                        })?;
                        let else_ = self.in_block(|this| {
                            this.take_edge(b, f)?;
                            this.jump(f)
                        })?;
                        self.push(Node::If(Box::new(ir::If {
                            cond: c,
                            then_,
                            else_,
                            results: vec![],
                        })))?;
                        Ok(None)
                    }
                    (true, false) | (false, true) => {
                        let (j, n) = if tj { (t, f) } else { (f, t) };
                        let arm = self.in_block(|this| {
                            this.take_edge(b, j)?;
                            this.jump(j)
                        })?;
                        let (then_, else_) = if tj { (arm, vec![]) } else { (vec![], arm) };
                        self.push(Node::If(Box::new(ir::If {
                            cond: c,
                            then_,
                            else_,
                            results: vec![],
                        })))?;
                        self.take_edge(b, n)?;
                        Ok(Some(n))
                    }
                    (false, false) => {
                        invalid(format!("conditional branch in %{b} without a merge"))
                    }
                }
            }
            O::Switch => self.switch(term, b),
            O::Return => {
                self.jump(RETURN)?;
                Ok(None)
            }
            O::ReturnValue => {
                let v = self.get(op_id(term, 0)?, b)?;
                let Some(Some(tree)) = self.ret_vars.last().cloned() else {
                    return invalid("OpReturnValue in a void function");
                };
                self.store_tree(&tree, &v)?;
                self.jump(RETURN)?;
                Ok(None)
            }
            O::Unreachable => Ok(None),
            O::Kill | O::TerminateInvocation | O::DemoteToHelperInvocation => {
                unsupported(format!("{:?} in a compute shader", term.class.opcode))
            }
            other => invalid(format!("block %{b} ends with {other:?}, not a terminator")),
        }
    }

    /// When an arm's target is the merge itself, its edge stores are taken by region();
    /// nothing else is needed.
    fn edge_to_end(&mut self, _start: u32, _m: u32, _from: u32) -> Res<()> {
        Ok(())
    }

    fn switch(&mut self, term: &dr::Instruction, b: u32) -> Res<Option<u32>> {
        let sel = self.getv(op_id(term, 0)?, b)?;
        let st = self.ty(sel);
        if st.kind != Kind::Int || st.comps != 1 {
            return invalid("switch selector is not an integer scalar");
        }
        let default = op_id(term, 1)?;
        let mut cases: Vec<(u64, u32)> = Vec::new();
        let mut k = 2;
        while k < term.operands.len() {
            let v = match &term.operands[k] {
                Operand::LiteralBit32(v) => u64::from(*v),
                Operand::LiteralBit64(v) => *v,
                _ => return invalid("switch literal"),
            };
            let t = op_id(term, k + 1)?;
            cases.push((v & st.mask(), t));
            k += 2;
        }
        let merge = match self.merge_of(b)? {
            Some((spirv::Op::SelectionMerge, m, _)) => m,
            _ => return invalid("OpSwitch without OpSelectionMerge"),
        };
        let mut targets: Vec<u32> = cases
            .iter()
            .map(|c| c.1)
            .chain(std::iter::once(default))
            .filter(|t| *t != merge)
            .collect();
        targets.sort_by_key(|t| self.block_order.get(t).copied().unwrap_or(usize::MAX));
        targets.dedup();
        let ft = self.f.new_var(Type::B1);
        let fal = self.konst(Type::B1, 0)?;
        self.emit_void(Op::StoreVar(ft, fal))?;
        // Edge stores for every case edge happen up front: they are taken from `b`.
        let all_cases = targets.clone();
        let kind = FrameKind::Switch {
            merge,
            cases: all_cases.clone(),
            ft,
        };
        self.in_loop_frame(kind, |this| {
            if default == merge {
                // Falls to merge unless some case matches; handled by the loop's final break.
            }
            for t in &all_cases {
                let t = *t;
                let mut cond: Option<Value> = None;
                let is_default = t == default;
                let lits: Vec<u64> = cases.iter().filter(|c| c.1 == t).map(|c| c.0).collect();
                for l in lits {
                    let lc = this.konst(st, l)?;
                    let eq = this.alu(AluOp::Ieq, Type::B1, &[sel, lc])?;
                    cond = Some(match cond {
                        Some(c) => this.alu(AluOp::Ior, Type::B1, &[c, eq])?,
                        None => eq,
                    });
                }
                if is_default {
                    let mut any: Option<Value> = None;
                    for (l, _) in &cases {
                        let lc = this.konst(st, *l)?;
                        let eq = this.alu(AluOp::Ieq, Type::B1, &[sel, lc])?;
                        any = Some(match any {
                            Some(c) => this.alu(AluOp::Ior, Type::B1, &[c, eq])?,
                            None => eq,
                        });
                    }
                    let nd = match any {
                        Some(a) => this.alu(AluOp::Inot, Type::B1, &[a])?,
                        None => this.konst(Type::B1, 1)?,
                    };
                    cond = Some(match cond {
                        Some(c) => this.alu(AluOp::Ior, Type::B1, &[c, nd])?,
                        None => nd,
                    });
                }
                let cond = match cond {
                    Some(c) => c,
                    None => this.konst(Type::B1, 0)?,
                };
                let f = this.emit(Type::B1, Op::LoadVar(ft))?;
                let go = this.alu(AluOp::Ior, Type::B1, &[f, cond])?;
                let arm = this.in_block(|this| {
                    let fal = this.konst(Type::B1, 0)?;
                    this.emit_void(Op::StoreVar(ft, fal))?;
                    // The edge from the switch block; a fall-through edge was taken at its source.
                    let has_phi = this
                        .blocks
                        .get(&t)
                        .ok_or_else(|| {
                            FrontendError::Invalid(format!("switch target %{t} is not a block"))
                        })?
                        .insts
                        .iter()
                        .any(|i| i.class.opcode == spirv::Op::Phi);
                    if has_phi {
                        let nf = this.alu(AluOp::Inot, Type::B1, &[f])?;
                        let e = this.in_block(|this| this.take_edge(b, t))?;
                        this.push(Node::If(Box::new(ir::If {
                            cond: nf,
                            then_: e,
                            else_: vec![],
                            results: vec![],
                        })))?;
                    }
                    this.case_region(t)
                })?;
                this.push(Node::If(Box::new(ir::If {
                    cond: go,
                    then_: arm,
                    else_: vec![],
                    results: vec![],
                })))?;
            }
            // Reaching the end without a break: the default was the merge (or fall-through
            // from the last case into the merge).
            this.take_edge(b, merge)?;
            Ok(())
        })?;
        Ok(Some(merge))
    }

    fn case_region(&mut self, start: u32) -> Res<()> {
        // A branch to another case target is a fall-through (jump() sets the flag).
        self.region_ex(start, None, None, true)
    }

    // ---------------------------------------------------------------- instructions

    fn instruction(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        use spirv::Op as O;
        let op = i.class.opcode;
        match op {
            O::Nop
            | O::Line
            | O::NoLine
            | O::SelectionMerge
            | O::LoopMerge
            | O::Name
            | O::ExecutionMode => {}
            O::Phi => {
                let r = rid(i)?;
                let t = rty(i)?;
                let tree = match self.phi_vars.get(&r) {
                    Some(t) => t.clone(),
                    None => {
                        let tree = self.type_tree(t, 0)?;
                        self.phi_vars.insert(r, tree.clone());
                        tree
                    }
                };
                let v = self.load_tree(&tree)?;
                self.define(r, v)?;
            }
            O::Variable => {
                let r = rid(i)?;
                let Some(SType::Pointer(_, pointee)) = self.types.get(&rty(i)?).cloned() else {
                    return invalid("variable type");
                };
                let p = self.alloc_var(r, pointee)?;
                let init = i.operands.get(1).map(idref).transpose()?;
                self.init_var(&p, pointee, init)?;
                self.define(r, FVal::P(Box::new(p)))?;
            }
            O::Load => {
                let p = self.ptr_of(op_id(i, 0)?, b)?;
                let v = self.load_ptr(&p)?;
                self.define(rid(i)?, v)?;
            }
            O::Store => {
                let p = self.ptr_of(op_id(i, 0)?, b)?;
                let v = self.get(op_id(i, 1)?, b)?;
                self.store_ptr(&p, &v)?;
            }
            O::CopyMemory => {
                let dst = self.ptr_of(op_id(i, 0)?, b)?;
                let src = self.ptr_of(op_id(i, 1)?, b)?;
                let v = self.load_ptr(&src)?;
                self.store_ptr(&dst, &v)?;
            }
            O::AccessChain | O::InBoundsAccessChain => {
                let base = self.ptr_of(op_id(i, 0)?, b)?;
                let idx: Vec<u32> = (1..i.operands.len())
                    .map(|k| op_id(i, k))
                    .collect::<Res<_>>()?;
                let p = self.access_chain(base, &idx, b)?;
                self.define(rid(i)?, FVal::P(Box::new(p)))?;
            }
            O::PtrAccessChain | O::InBoundsPtrAccessChain => return unsupported(format!("{op:?}")),
            O::ArrayLength => {
                let p = self.ptr_of(op_id(i, 0)?, b)?;
                let member = op_lit(i, 1)?;
                let Ptr::Mem {
                    space,
                    konst,
                    ty,
                    dyn_off: None,
                    ..
                } = p
                else {
                    return invalid("OpArrayLength of a non-buffer pointer");
                };
                let SType::Struct(m) = self.stype(ty)? else {
                    return invalid("OpArrayLength of a non-struct");
                };
                let Some(SType::RuntimeArray(e)) =
                    m.get(member as usize).map(|t| self.stype(*t)).transpose()?
                else {
                    return invalid("OpArrayLength member is not a runtime array");
                };
                let arr = m[member as usize];
                let off = konst + self.member_offset(ty, member)?;
                let stride = self.elem_stride(arr, e)?.max(1);
                // length = (size - offset) / stride, floored; a range smaller than the
                // offset has length 0 (unsigned: sizes may exceed i32::MAX).
                let size = self.emit(Type::I32, Op::BufferSize(space))?;
                let o = self.i32c(off)?;
                let at_least = self.alu(AluOp::Umax, Type::I32, &[size, o])?;
                let avail = self.alu(AluOp::Isub, Type::I32, &[at_least, o])?;
                let s = self.i32c(stride)?;
                let n = self.alu(AluOp::Udiv, Type::I32, &[avail, s])?;
                self.define(rid(i)?, FVal::V(n))?;
            }
            O::FunctionCall => {
                let callee = op_id(i, 0)?;
                let mut args = Vec::new();
                for k in 1..i.operands.len() {
                    args.push(self.get(op_id(i, k)?, b)?);
                }
                let saved = std::mem::take(&mut self.vals);
                let r = self.inline_call(callee, &args, Some(rty(i)?));
                self.vals = saved;
                if let Some(v) = r? {
                    self.define(rid(i)?, v)?;
                }
            }
            O::ControlBarrier => {
                let exec = self.scope(op_id(i, 0)?)?;
                let mem = self.scope(op_id(i, 1)?)?;
                let semantics = self.const_u32(op_id(i, 2)?)?;
                self.emit_void(Op::Barrier {
                    exec: Some(exec),
                    mem,
                    semantics,
                })?;
            }
            O::MemoryBarrier => {
                let mem = self.scope(op_id(i, 0)?)?;
                let semantics = self.const_u32(op_id(i, 1)?)?;
                self.emit_void(Op::Barrier {
                    exec: None,
                    mem,
                    semantics,
                })?;
            }
            O::AtomicLoad
            | O::AtomicStore
            | O::AtomicExchange
            | O::AtomicCompareExchange
            | O::AtomicIIncrement
            | O::AtomicIDecrement
            | O::AtomicIAdd
            | O::AtomicISub
            | O::AtomicSMin
            | O::AtomicUMin
            | O::AtomicSMax
            | O::AtomicUMax
            | O::AtomicAnd
            | O::AtomicOr
            | O::AtomicXor => self.atomic(i, b)?,
            O::ExtInst => {
                let set = op_id(i, 0)?;
                if !self.ext_glsl.contains(&set) {
                    // NonSemantic instructions carry no meaning.
                    return Ok(());
                }
                let n = op_lit(i, 1)?;
                let mut args = Vec::new();
                for k in 2..i.operands.len() {
                    args.push(self.get(op_id(i, k)?, b)?);
                }
                let v = crate::glsl::glsl_std_450(self, n, rty(i)?, &args)?;
                self.define(rid(i)?, v)?;
            }
            _ => {
                let v = self.alu_instruction(i, b)?;
                self.define(rid(i)?, v)?;
            }
        }
        Ok(())
    }

    fn scope(&self, id: u32) -> Res<Scope> {
        Ok(match spirv::Scope::from_u32(self.const_u32(id)?) {
            Some(spirv::Scope::Invocation) => Scope::Invocation,
            Some(spirv::Scope::Subgroup) => Scope::Subgroup,
            Some(spirv::Scope::Workgroup) => Scope::Workgroup,
            Some(spirv::Scope::Device | spirv::Scope::CrossDevice | spirv::Scope::QueueFamily) => {
                Scope::Device
            }
            _ => return invalid("bad scope"),
        })
    }

    fn atomic(&mut self, i: &dr::Instruction, b: u32) -> Res<()> {
        use spirv::Op as O;
        let p = self.ptr_of(op_id(i, 0)?, b)?;
        let (space, offset, ty) = match p {
            Ptr::Mem {
                space: space @ (Space::Ssbo(_) | Space::Shared),
                dyn_off,
                konst,
                ty,
                ..
            } => (space, self.offset_value(dyn_off, konst)?, ty),
            Ptr::Var { .. }
            | Ptr::VarComp { .. }
            | Ptr::Mem {
                space: Space::Local,
                ..
            } => {
                // Atomics on function memory are plain read-modify-writes.
                return self.atomic_private(i, p, b);
            }
            _ => {
                return unsupported(
                    "atomics on memory other than storage buffers and shared memory",
                )
            }
        };
        let t = self.ir_type(ty)?;
        if t.kind != Kind::Int || t.comps != 1 {
            return unsupported("atomics on non-integer types");
        }
        let (aop, data): (AtomicOp, Vec<usize>) = match i.class.opcode {
            O::AtomicLoad => (AtomicOp::Load, vec![]),
            O::AtomicStore => (AtomicOp::Xchg, vec![3]),
            O::AtomicExchange => (AtomicOp::Xchg, vec![3]),
            // Operands: Pointer, Scope, Equal semantics, Unequal semantics, Value, Comparator.
            O::AtomicCompareExchange => (AtomicOp::CmpXchg, vec![4, 5]),
            O::AtomicIIncrement => (AtomicOp::Inc, vec![]),
            O::AtomicIDecrement => (AtomicOp::Dec, vec![]),
            O::AtomicIAdd => (AtomicOp::Add, vec![3]),
            O::AtomicISub => (AtomicOp::Sub, vec![3]),
            O::AtomicSMin => (AtomicOp::Smin, vec![3]),
            O::AtomicUMin => (AtomicOp::Umin, vec![3]),
            O::AtomicSMax => (AtomicOp::Smax, vec![3]),
            O::AtomicUMax => (AtomicOp::Umax, vec![3]),
            O::AtomicAnd => (AtomicOp::And, vec![3]),
            O::AtomicOr => (AtomicOp::Or, vec![3]),
            O::AtomicXor => (AtomicOp::Xor, vec![3]),
            _ => unreachable!(),
        };
        let store = i.class.opcode == O::AtomicStore;
        let mut dv = Vec::new();
        for k in data {
            // AtomicStore has no result, so its value is operand 3 as well.
            let v = self.getv(op_id(i, k)?, b)?;
            if self.ty(v) != t {
                return invalid("atomic operand type");
            }
            dv.push(v);
        }
        let op = Op::Atomic {
            op: aop,
            space,
            offset,
            data: dv,
        };
        if store {
            self.emit_void(op)?;
        } else {
            let r = self.emit(t, op)?;
            self.define(rid(i)?, FVal::V(r))?;
        }
        Ok(())
    }

    fn atomic_private(&mut self, i: &dr::Instruction, p: Ptr, b: u32) -> Res<()> {
        use spirv::Op as O;
        let old = self.load_ptr(&p)?.v()?;
        let t = self.ty(old);
        let arg = |this: &mut Self, k| this.getv(op_id(i, k)?, b);
        let new = match i.class.opcode {
            O::AtomicLoad => None,
            O::AtomicStore | O::AtomicExchange => Some(arg(self, 3)?),
            O::AtomicCompareExchange => {
                let (v, cmp) = (arg(self, 4)?, arg(self, 5)?);
                let eq = self.alu(AluOp::Ieq, Type::B1, &[old, cmp])?;
                Some(self.alu(AluOp::Bcsel, t, &[eq, v, old])?)
            }
            O::AtomicIIncrement | O::AtomicIDecrement => {
                let one = self.konst(t, 1)?;
                let op = if i.class.opcode == O::AtomicIIncrement {
                    AluOp::Iadd
                } else {
                    AluOp::Isub
                };
                Some(self.alu(op, t, &[old, one])?)
            }
            o => {
                let v = arg(self, 3)?;
                let op = match o {
                    O::AtomicIAdd => AluOp::Iadd,
                    O::AtomicISub => AluOp::Isub,
                    O::AtomicSMin => AluOp::Imin,
                    O::AtomicUMin => AluOp::Umin,
                    O::AtomicSMax => AluOp::Imax,
                    O::AtomicUMax => AluOp::Umax,
                    O::AtomicAnd => AluOp::Iand,
                    O::AtomicOr => AluOp::Ior,
                    _ => AluOp::Ixor,
                };
                Some(self.alu(op, t, &[old, v])?)
            }
        };
        if let Some(n) = new {
            self.store_ptr(&p, &FVal::V(n))?;
        }
        if i.class.opcode != O::AtomicStore {
            self.define(rid(i)?, FVal::V(old))?;
        }
        Ok(())
    }

    /// Applies a scalar/vector op component-wise through matrices and other composites.
    fn map_alu(&mut self, op: AluOp, rt: u32, args: &[FVal]) -> Res<FVal> {
        match self.stype(rt)? {
            st @ (SType::Matrix(..) | SType::Array(..)) => {
                let (col, n) = match st {
                    SType::Matrix(c, n) => (c, u32::from(n)),
                    SType::Array(c, n) => (c, n),
                    _ => unreachable!(),
                };
                if n > 64 {
                    return unsupported("arithmetic on large arrays");
                }
                let mut cols = Vec::new();
                for k in 0..n as usize {
                    let a: Vec<FVal> = args
                        .iter()
                        .map(|x| {
                            x.comps().and_then(|c| {
                                c.get(k)
                                    .cloned()
                                    .ok_or_else(|| FrontendError::Invalid("shape".into()))
                            })
                        })
                        .collect::<Res<_>>()?;
                    cols.push(self.map_alu(op, col, &a)?);
                }
                Ok(FVal::C(cols))
            }
            _ => {
                let t = self.ir_type(rt)?;
                let srcs: Vec<Value> = args.iter().map(|a| a.v()).collect::<Res<_>>()?;
                Ok(FVal::V(self.alu_checked(op, t, &srcs)?))
            }
        }
    }

    /// Emits an ALU op after checking operand types (invalid SPIR-V must not reach the IR).
    pub(crate) fn alu_checked(&mut self, op: AluOp, t: Type, srcs: &[Value]) -> Res<Value> {
        let tys: Vec<Type> = srcs.iter().map(|s| self.ty(*s)).collect();
        let f = &self.f;
        let instr = Instr {
            dst: None,
            op: Op::Alu(op, srcs.to_vec()),
        };
        let _ = f;
        let _ = instr;
        let ok = srcs.len() == op.num_srcs()
            && match op.class() {
                ir::AluClass::Same => {
                    tys.iter().all(|x| *x == t)
                        && (t.is_float() == op.is_float_op()
                            || matches!(
                                op,
                                AluOp::Mov | AluOp::Iand | AluOp::Ior | AluOp::Ixor | AluOp::Inot
                            ) && !t.is_float())
                }
                ir::AluClass::Compare => {
                    tys[0] == tys[1]
                        && t.is_bool()
                        && t.comps == tys[0].comps
                        && (tys[0].is_float() == op.is_float_op())
                }
                ir::AluClass::Convert => tys[0].comps == t.comps,
                ir::AluClass::Select => {
                    tys[0].is_bool()
                        && (tys[0].comps == t.comps || tys[0].comps == 1)
                        && tys[1] == t
                        && tys[2] == t
                }
                ir::AluClass::Shift => {
                    tys[0] == t
                        && tys[1..]
                            .iter()
                            .all(|x| x.kind == Kind::Int && x.comps == t.comps)
                }
                ir::AluClass::Test => tys[0].is_float() && t.is_bool() && t.comps == tys[0].comps,
            };
        if !ok {
            return invalid(format!("operand types of {} do not match", op.name()));
        }
        // Shift counts and bitfield operands are 32-bit in the IR.
        let mut srcs = srcs.to_vec();
        if op.class() == ir::AluClass::Shift {
            for s in &mut srcs[1..] {
                let st = self.ty(*s);
                if st.bits != 32 {
                    *s = self.alu(AluOp::U2u, Type::I32.vec(st.comps), &[*s])?;
                }
            }
        }
        self.alu(op, t, &srcs)
    }

    fn alu_instruction(&mut self, i: &dr::Instruction, b: u32) -> Res<FVal> {
        use spirv::Op as O;
        let op = i.class.opcode;
        let rt = rty(i)?;
        let mut args = Vec::new();
        let arg_ids: Vec<u32> = i
            .operands
            .iter()
            .filter_map(|o| {
                if let Operand::IdRef(v) = o {
                    Some(*v)
                } else {
                    None
                }
            })
            .collect();
        match op {
            O::CompositeExtract | O::CompositeInsert | O::VectorShuffle => {}
            _ => {
                for id in &arg_ids {
                    args.push(self.get(*id, b)?);
                }
            }
        }
        let swapped = match op {
            O::SGreaterThan => Some(AluOp::Ilt),
            O::SLessThanEqual => Some(AluOp::Ige),
            O::UGreaterThan => Some(AluOp::Ult),
            O::ULessThanEqual => Some(AluOp::Uge),
            _ => None,
        };
        if let Some(alu) = swapped {
            if args.len() != 2 {
                return invalid(format!("{op:?} operand count"));
            }
            return self.map_alu(alu, rt, &[args[1].clone(), args[0].clone()]);
        }
        if let Some((alu, n, _)) = spirv_alu(op) {
            if args.len() != n {
                return invalid(format!("{op:?} operand count"));
            }
            if matches!(op, O::SConvert | O::UConvert | O::FConvert)
                && self.ir_type(rt)?.bits == self.ty(args[0].v()?).bits
            {
                return invalid(format!("{op:?} to the same width"));
            }
            return self.map_alu(alu, rt, &args);
        }
        let v = |k: usize, a: &[FVal]| {
            a.get(k)
                .ok_or_else(|| FrontendError::Invalid(format!("{op:?} operand")))
                .and_then(|x| x.v())
        };
        Ok(match op {
            O::Undef => {
                let c = self.null_const(rt, 0)?;
                self.const_fval(rt, &c, 0)?
            }
            O::CopyObject | O::CopyLogical => args
                .first()
                .cloned()
                .ok_or_else(|| FrontendError::Invalid("copy".into()))?,
            O::Bitcast => {
                let x = v(0, &args)?;
                let t = self.ir_type(rt)?;
                let st = self.ty(x);
                if st.bits as u32 * st.comps as u32 != t.bits as u32 * t.comps as u32
                    || st.is_bool()
                    || t.is_bool()
                {
                    return invalid("OpBitcast between sizes that differ");
                }
                if st.comps == t.comps {
                    FVal::V(self.alu(AluOp::Bitcast, t, &[x])?)
                } else {
                    FVal::V(self.bitcast_regroup(x, t)?)
                }
            }
            O::QuantizeToF16 => {
                let x = v(0, &args)?;
                let t = self.ty(x);
                let h = self.alu(AluOp::F2f, Type::float(16).vec(t.comps), &[x])?;
                FVal::V(self.alu(AluOp::F2f, t, &[h])?)
            }
            O::SNegate => {
                FVal::V(self.alu_checked(AluOp::Ineg, self.ir_type(rt)?, &[v(0, &args)?])?)
            }
            O::FNegate => self.map_alu(AluOp::Fneg, rt, &args)?,
            O::Not => FVal::V(self.alu_checked(AluOp::Inot, self.ir_type(rt)?, &[v(0, &args)?])?),
            O::LogicalNot => {
                FVal::V(self.alu_checked(AluOp::Inot, self.ir_type(rt)?, &[v(0, &args)?])?)
            }
            O::Select => {
                let t = self.ir_type(rt).ok();
                let c = v(0, &args)?;
                match t {
                    Some(t) => FVal::V(self.alu_checked(
                        AluOp::Bcsel,
                        t,
                        &[c, v(1, &args)?, v(2, &args)?],
                    )?),
                    None => {
                        // Select of composites with a scalar condition.
                        if self.ty(c).comps != 1 {
                            return invalid("OpSelect of composites needs a scalar condition");
                        }
                        self.select_tree(c, &args[1], &args[2])?
                    }
                }
            }
            O::IAddCarry | O::ISubBorrow | O::UMulExtended | O::SMulExtended => {
                let (a, bb) = (v(0, &args)?, v(1, &args)?);
                let t = self.ty(a);
                let (lo, hi) = match op {
                    O::IAddCarry => {
                        let s = self.alu_checked(AluOp::Iadd, t, &[a, bb])?;
                        let c = self.alu(AluOp::Ult, Type::B1.vec(t.comps), &[s, a])?;
                        (s, self.alu(AluOp::B2i, t, &[c])?)
                    }
                    O::ISubBorrow => {
                        let s = self.alu_checked(AluOp::Isub, t, &[a, bb])?;
                        let c = self.alu(AluOp::Ult, Type::B1.vec(t.comps), &[a, bb])?;
                        (s, self.alu(AluOp::B2i, t, &[c])?)
                    }
                    O::UMulExtended => (
                        self.alu_checked(AluOp::Imul, t, &[a, bb])?,
                        self.alu_checked(AluOp::UmulHigh, t, &[a, bb])?,
                    ),
                    _ => (
                        self.alu_checked(AluOp::Imul, t, &[a, bb])?,
                        self.alu_checked(AluOp::ImulHigh, t, &[a, bb])?,
                    ),
                };
                FVal::C(vec![FVal::V(lo), FVal::V(hi)])
            }
            O::Any | O::All => {
                let x = v(0, &args)?;
                let t = self.ty(x);
                let mut r = self.extract(x, 0)?;
                for k in 1..t.comps {
                    let c = self.extract(x, k)?;
                    r = self.alu(
                        if op == O::Any {
                            AluOp::Ior
                        } else {
                            AluOp::Iand
                        },
                        Type::B1,
                        &[r, c],
                    )?;
                }
                FVal::V(r)
            }
            O::Dot => {
                let (a, bb) = (v(0, &args)?, v(1, &args)?);
                FVal::V(self.dot(a, bb)?)
            }
            O::VectorTimesScalar => {
                let (a, s) = (v(0, &args)?, v(1, &args)?);
                let n = self.ty(a).comps;
                let s = self.splat(s, n)?;
                FVal::V(self.alu_checked(AluOp::Fmul, self.ty(a), &[a, s])?)
            }
            O::MatrixTimesScalar => {
                let cols = args[0].comps()?.to_vec();
                let s = v(1, &args)?;
                let mut out = Vec::new();
                for c in cols {
                    let c = c.v()?;
                    let n = self.ty(c).comps;
                    let sv = self.splat(s, n)?;
                    out.push(FVal::V(self.alu_checked(
                        AluOp::Fmul,
                        self.ty(c),
                        &[c, sv],
                    )?));
                }
                FVal::C(out)
            }
            O::MatrixTimesVector => {
                let cols = args[0].comps()?.to_vec();
                let x = v(1, &args)?;
                FVal::V(self.mat_vec(&cols, x)?)
            }
            O::VectorTimesMatrix => {
                let x = v(0, &args)?;
                let cols = args[1].comps()?.to_vec();
                let mut out = Vec::new();
                for c in cols {
                    out.push(self.dot(x, c.v()?)?);
                }
                let t = self.ty(out[0]);
                FVal::V(self.emit(t.vec(out.len() as u8), Op::Vec(out))?)
            }
            O::MatrixTimesMatrix => {
                let a = args[0].comps()?.to_vec();
                let bc = args[1].comps()?.to_vec();
                let mut out = Vec::new();
                for c in bc {
                    out.push(FVal::V(self.mat_vec(&a, c.v()?)?));
                }
                FVal::C(out)
            }
            O::OuterProduct => {
                let (a, bb) = (v(0, &args)?, v(1, &args)?);
                let n = self.ty(bb).comps;
                let mut out = Vec::new();
                for k in 0..n {
                    let s = self.extract(bb, k)?;
                    let s = self.splat(s, self.ty(a).comps)?;
                    out.push(FVal::V(self.alu_checked(
                        AluOp::Fmul,
                        self.ty(a),
                        &[a, s],
                    )?));
                }
                FVal::C(out)
            }
            O::Transpose => {
                let cols: Vec<Value> =
                    args[0].comps()?.iter().map(|c| c.v()).collect::<Res<_>>()?;
                FVal::C(self.transpose(&cols)?.into_iter().map(FVal::V).collect())
            }
            O::CompositeConstruct => {
                let ids = arg_ids.clone();
                let mut parts = Vec::new();
                for id in ids {
                    parts.push(self.get(id, b)?);
                }
                match self.stype(rt)? {
                    SType::Vector(..) => {
                        let t = self.ir_type(rt)?;
                        let vs: Vec<Value> = parts.iter().map(|p| p.v()).collect::<Res<_>>()?;
                        let mut comps = Vec::new();
                        for x in vs {
                            let xt = self.ty(x);
                            if xt.scalar_type() != t.scalar_type() {
                                return invalid("vector construct component type");
                            }
                            for k in 0..xt.comps {
                                comps.push(self.extract(x, k)?);
                            }
                        }
                        if comps.len() != usize::from(t.comps) {
                            return invalid("vector construct size");
                        }
                        FVal::V(self.emit(t, Op::Vec(comps))?)
                    }
                    _ => FVal::C(parts),
                }
            }
            O::CompositeExtract => {
                let mut x = self.get(arg_ids[0], b)?;
                let lits: Vec<u32> = i.operands[1..].iter().map(lit).collect::<Res<_>>()?;
                for l in lits {
                    x = match x {
                        FVal::C(c) => c
                            .get(l as usize)
                            .cloned()
                            .ok_or_else(|| FrontendError::Invalid("extract index".into()))?,
                        FVal::V(v) => {
                            if l >= u32::from(self.ty(v).comps) {
                                return invalid("extract index");
                            }
                            FVal::V(self.extract(v, l as u8)?)
                        }
                        FVal::P(_) => return invalid("extract from pointer"),
                    };
                }
                x
            }
            O::CompositeInsert => {
                let obj = self.get(op_id(i, 0)?, b)?;
                let comp = self.get(op_id(i, 1)?, b)?;
                let lits: Vec<u32> = i.operands[2..].iter().map(lit).collect::<Res<_>>()?;
                self.insert_path(comp, obj, &lits)?
            }
            O::VectorShuffle => {
                let a = self.getv(op_id(i, 0)?, b)?;
                let bb = self.getv(op_id(i, 1)?, b)?;
                let (ta, tb) = (self.ty(a), self.ty(bb));
                let t = self.ir_type(rt)?;
                if ta.scalar_type() != t.scalar_type() || tb.scalar_type() != t.scalar_type() {
                    return invalid("shuffle types");
                }
                let lits: Vec<u32> = i.operands[2..].iter().map(lit).collect::<Res<_>>()?;
                if lits.len() != usize::from(t.comps) {
                    return invalid("shuffle size");
                }
                let mut comps = Vec::new();
                for l in lits {
                    let c = if l == u32::MAX {
                        self.konst(t.scalar_type(), 0)?
                    } else if l < u32::from(ta.comps) {
                        self.extract(a, l as u8)?
                    } else if l < u32::from(ta.comps + tb.comps) {
                        self.extract(bb, (l - u32::from(ta.comps)) as u8)?
                    } else {
                        return invalid("shuffle index");
                    };
                    comps.push(c);
                }
                FVal::V(self.emit(t, Op::Vec(comps))?)
            }
            O::VectorExtractDynamic => {
                let (x, idx) = (v(0, &args)?, v(1, &args)?);
                FVal::V(self.dyn_extract(x, idx)?)
            }
            O::VectorInsertDynamic => {
                let (x, c, idx) = (v(0, &args)?, v(1, &args)?, v(2, &args)?);
                FVal::V(self.dyn_insert(x, c, idx)?)
            }
            O::GroupNonUniformElect
            | O::GroupNonUniformBroadcast
            | O::GroupNonUniformBallot
            | O::GroupNonUniformIAdd => return unsupported(format!("subgroup operation {op:?}")),
            other => return unsupported(format!("SPIR-V instruction {other:?}")),
        })
    }

    fn select_tree(&mut self, c: Value, a: &FVal, bb: &FVal) -> Res<FVal> {
        match (a, bb) {
            (FVal::V(x), FVal::V(y)) => {
                let t = self.ty(*x);
                Ok(FVal::V(self.alu_checked(AluOp::Bcsel, t, &[c, *x, *y])?))
            }
            (FVal::C(x), FVal::C(y)) if x.len() == y.len() => Ok(FVal::C(
                x.iter()
                    .zip(y)
                    .map(|(p, q)| self.select_tree(c, p, q))
                    .collect::<Res<_>>()?,
            )),
            _ => invalid("select operands differ in shape"),
        }
    }

    fn insert_path(&mut self, comp: FVal, obj: FVal, path: &[u32]) -> Res<FVal> {
        let Some((&first, rest)) = path.split_first() else {
            return Ok(comp);
        };
        match obj {
            FVal::C(mut c) => {
                let k = first as usize;
                let old = c
                    .get(k)
                    .cloned()
                    .ok_or_else(|| FrontendError::Invalid("insert index".into()))?;
                c[k] = self.insert_path(comp, old, rest)?;
                Ok(FVal::C(c))
            }
            FVal::V(v) => {
                if !rest.is_empty() || first >= u32::from(self.ty(v).comps) {
                    return invalid("insert index");
                }
                let s = comp.v()?;
                let t = self.ty(v);
                if self.ty(s) != t.scalar_type() {
                    return invalid("insert type");
                }
                Ok(FVal::V(self.emit(t, Op::Insert(v, s, first as u8))?))
            }
            FVal::P(_) => invalid("insert into pointer"),
        }
    }

    pub(crate) fn dot(&mut self, a: Value, b: Value) -> Res<Value> {
        let t = self.ty(a);
        if t != self.ty(b) || !t.is_float() {
            return invalid("dot operand types");
        }
        let st = t.scalar_type();
        let m = self.alu(AluOp::Fmul, t, &[a, b])?;
        let mut r = self.extract(m, 0)?;
        for k in 1..t.comps {
            let c = self.extract(m, k)?;
            r = self.alu(AluOp::Fadd, st, &[r, c])?;
        }
        Ok(r)
    }

    fn mat_vec(&mut self, cols: &[FVal], x: Value) -> Res<Value> {
        let xt = self.ty(x);
        if usize::from(xt.comps) != cols.len() {
            return invalid("matrix times vector shape");
        }
        let mut acc: Option<Value> = None;
        for (k, c) in cols.iter().enumerate() {
            let c = c.v()?;
            let ct = self.ty(c);
            let s = self.extract(x, k as u8)?;
            let s = self.splat(s, ct.comps)?;
            let p = self.alu_checked(AluOp::Fmul, ct, &[c, s])?;
            acc = Some(match acc {
                Some(a) => self.alu_checked(AluOp::Fadd, ct, &[a, p])?,
                None => p,
            });
        }
        acc.ok_or_else(|| FrontendError::Invalid("empty matrix".into()))
    }

    pub(crate) fn transpose(&mut self, cols: &[Value]) -> Res<Vec<Value>> {
        let rows = self.ty(cols[0]).comps;
        let st = self.ty(cols[0]).scalar_type();
        let mut out = Vec::new();
        for r in 0..rows {
            let mut comps = Vec::new();
            for c in cols {
                comps.push(self.extract(*c, r)?);
            }
            out.push(self.emit(st.vec(cols.len() as u8), Op::Vec(comps))?);
        }
        Ok(out)
    }

    // Helpers for glsl.rs
    pub(crate) fn e_alu(&mut self, op: AluOp, t: Type, s: &[Value]) -> Res<Value> {
        self.alu_checked(op, t, s)
    }
    pub(crate) fn e_fconst(&mut self, t: Type, v: f64) -> Res<Value> {
        self.fconst(t, v)
    }
    pub(crate) fn e_konst(&mut self, t: Type, v: u64) -> Res<Value> {
        self.konst(t, v)
    }
    pub(crate) fn e_ty(&self, v: Value) -> Type {
        self.ty(v)
    }
    pub(crate) fn e_extract(&mut self, v: Value, c: u8) -> Res<Value> {
        self.extract(v, c)
    }
    pub(crate) fn e_vec(&mut self, t: Type, c: Vec<Value>) -> Res<Value> {
        self.emit(t, Op::Vec(c))
    }
    pub(crate) fn e_ir_type(&self, t: u32) -> Res<Type> {
        self.ir_type(t)
    }
    pub(crate) fn e_is_struct(&self, t: u32) -> bool {
        matches!(self.types.get(&t), Some(SType::Struct(_)))
    }
    pub(crate) fn e_splat(&mut self, v: Value, n: u8) -> Res<Value> {
        self.splat(v, n)
    }
    pub(crate) fn e_store_fval_ptr(&mut self, p: &FValPtr, v: Value) -> Res<()> {
        self.store_ptr(&p.0, &FVal::V(v))
    }
}

/// A pointer operand handed to GLSL.std.450 (modf / frexp out-parameters).
pub(crate) struct FValPtr(Ptr);

pub(crate) fn fval_v(v: &FVal) -> Res<Value> {
    v.v()
}
pub(crate) fn fval_ptr(v: &FVal) -> Res<FValPtr> {
    match v {
        FVal::P(p) => Ok(FValPtr((**p).clone())),
        _ => invalid("expected a pointer operand"),
    }
}
pub(crate) fn fval_cols(v: &FVal) -> Res<Vec<Value>> {
    v.comps()?.iter().map(|c| c.v()).collect()
}
pub(crate) fn fval_of(v: Value) -> FVal {
    FVal::V(v)
}
pub(crate) fn fval_comp(v: Vec<FVal>) -> FVal {
    FVal::C(v)
}

/// SPIR-V ops that map one-to-one onto an ALU op: (op, operand count, signed).
fn spirv_alu(op: spirv::Op) -> Option<(AluOp, usize, bool)> {
    use spirv::Op as O;
    use AluOp as A;
    Some(match op {
        O::IAdd => (A::Iadd, 2, false),
        O::ISub => (A::Isub, 2, false),
        O::IMul => (A::Imul, 2, false),
        O::FAdd => (A::Fadd, 2, false),
        O::FSub => (A::Fsub, 2, false),
        O::FMul => (A::Fmul, 2, false),
        O::FDiv => (A::Fdiv, 2, false),
        O::FRem => (A::Frem, 2, false),
        O::FMod => (A::Fmod, 2, false),
        O::UDiv => (A::Udiv, 2, false),
        O::SDiv => (A::Idiv, 2, true),
        O::UMod => (A::Umod, 2, false),
        O::SRem => (A::Irem, 2, true),
        O::SMod => (A::Imod, 2, true),
        O::ShiftLeftLogical => (A::Ishl, 2, false),
        O::ShiftRightLogical => (A::Ushr, 2, false),
        O::ShiftRightArithmetic => (A::Ishr, 2, true),
        O::BitwiseAnd => (A::Iand, 2, false),
        O::BitwiseOr => (A::Ior, 2, false),
        O::BitwiseXor => (A::Ixor, 2, false),
        O::BitFieldInsert => (A::BitfieldInsert, 4, false),
        O::BitFieldSExtract => (A::IbitfieldExtract, 3, true),
        O::BitFieldUExtract => (A::UbitfieldExtract, 3, false),
        O::BitReverse => (A::BitfieldReverse, 1, false),
        O::BitCount => (A::BitCount, 1, false),
        O::LogicalAnd => (A::Iand, 2, false),
        O::LogicalOr => (A::Ior, 2, false),
        O::LogicalEqual => (A::Ieq, 2, false),
        O::LogicalNotEqual => (A::Ine, 2, false),
        O::IEqual => (A::Ieq, 2, false),
        O::INotEqual => (A::Ine, 2, false),
        O::SLessThan => (A::Ilt, 2, true),
        O::SGreaterThanEqual => (A::Ige, 2, true),
        O::ULessThan => (A::Ult, 2, false),
        O::UGreaterThanEqual => (A::Uge, 2, false),
        O::FOrdEqual => (A::Feq, 2, false),
        O::FOrdNotEqual => (A::Fne, 2, false),
        O::FOrdLessThan => (A::Flt, 2, false),
        O::FOrdLessThanEqual => (A::Fle, 2, false),
        O::FOrdGreaterThan => (A::Fgt, 2, false),
        O::FOrdGreaterThanEqual => (A::Fge, 2, false),
        O::FUnordEqual => (A::Fequ, 2, false),
        O::FUnordNotEqual => (A::Fneu, 2, false),
        O::FUnordLessThan => (A::Fltu, 2, false),
        O::FUnordLessThanEqual => (A::Fleu, 2, false),
        O::FUnordGreaterThan => (A::Fgtu, 2, false),
        O::FUnordGreaterThanEqual => (A::Fgeu, 2, false),
        O::IsNan => (A::IsNan, 1, false),
        O::IsInf => (A::IsInf, 1, false),
        O::ConvertFToU => (A::F2u, 1, false),
        O::ConvertFToS => (A::F2i, 1, true),
        O::ConvertSToF => (A::I2f, 1, true),
        O::ConvertUToF => (A::U2f, 1, false),
        O::UConvert => (A::U2u, 1, false),
        O::SConvert => (A::I2i, 1, true),
        O::FConvert => (A::F2f, 1, false),
        _ => return None,
    })
}
