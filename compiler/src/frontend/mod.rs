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
//!
//! Files, by SPIR-V concern: `module` (capabilities, entry point, execution modes, function
//! tables, pre-emission analyses, interface variables), `types`, `constants` (with
//! specialisation), `values` (emission helpers and front-end values), `memory` (variables,
//! loads, stores, access chains), `cfg` (structured control flow and inlining),
//! `instructions`, `alu` and `glsl` (GLSL.std.450).

mod alu;
mod cfg;
mod constants;
mod dot;
mod glsl;
pub(crate) mod image;
mod instructions;
mod memmodel;
mod memory;
mod module;
mod sampled;
mod shared_init;
mod subgroup;
mod types;
mod values;

#[cfg(test)]
mod testing;

use crate::hash::{HashMap, HashSet};
use crate::ir::{self, Block, Function};
use crate::{BindingSlot, BindingUse, Target};
use cfg::Frame;
use constants::Const;
use memory::Ptr;
use module::{check_capability_words, check_framing, SpvBlock, SpvFunc};
use rspirv::dr::{self, Operand};
use rspirv::spirv;
use spirv::{Decoration, StorageClass};
use types::{MemberDeco, SType};
use values::{Demoted, FVal, VarTree};

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

/// Limit on emitted nodes so malformed or adversarial input cannot make emission explode.
const MAX_EMIT: usize = 1 << 20;
/// Limits on structuring recursion and on blocks visited.
const MAX_DEPTH: usize = 64;
const MAX_STEPS: usize = 1 << 18;

/// The translation state of one module.
pub(crate) struct Fe<'a> {
    input: &'a FrontendInput<'a>,
    decl: Decls,
    code: Code,
    iface: Interface,
    flow: Flow,
    // Emission state
    f: Function,
    stack: Vec<Block>,
    /// Nodes emitted so far (bounded by `MAX_EMIT`).
    emitted: usize,
    /// The SPIR-V instruction being translated is decorated `NoContraction`: every IR
    /// instruction it becomes is `exact`.
    no_contraction: bool,
    vals: HashMap<u32, FVal>,
    demoted: HashMap<u32, Demoted>,
    phi_vars: HashMap<u32, VarTree>,
}

/// What the module declares: types, decorations, constants and global variables
/// (filled by `module`, `types` and `constants` before any code is emitted).
#[derive(Default)]
struct Decls {
    types: HashMap<u32, SType>,
    decos: HashMap<u32, Vec<(Decoration, Vec<u32>)>>,
    member_decos: HashMap<(u32, u32), MemberDeco>,
    consts: HashMap<u32, (u32, Const)>,
    globals: HashMap<u32, (StorageClass, u32)>,
    /// The result type of every id that has one.
    result_types: HashMap<u32, u32>,
    /// The ids of GLSL.std.450 imports.
    ext_glsl: HashSet<u32>,
}

/// The module's functions and blocks, and what the analyses before emission found.
#[derive(Default)]
struct Code {
    funcs: HashMap<u32, SpvFunc>,
    blocks: HashMap<u32, SpvBlock>,
    block_order: HashMap<u32, usize>,
    /// The block that defines each id.
    def_block: HashMap<u32, u32>,
    /// Ids used outside their block: kept in IR variables.
    demote: HashSet<u32>,
    /// Function variables reached by a dynamic index: kept in local memory.
    dyn_roots: HashSet<u32>,
}

/// The entry point's interface: global pointers, binding-table slots and the sizes the
/// kernel needs (push constants, shared and local memory, workgroup size).
struct Interface {
    global_ptrs: HashMap<u32, Ptr>,
    bindings: Vec<BindingUse>,
    /// First binding-table index -> element count of each runtime descriptor array (its
    /// size is the set layout's, not the SPIR-V type's).
    runtime_counts: HashMap<u32, u32>,
    /// Storage-buffer binding-table index -> what its variables' decorations promise
    /// (`ir::Function::readonly_buffers`).
    storage: HashMap<u32, StorageDecl>,
    push_size: u32,
    shared_size: u32,
    local_size_mem: u32,
    local_size: [u32; 3],
}

/// Structured control flow and inlining state (`cfg`).
#[derive(Default)]
struct Flow {
    frames: Vec<Frame>,
    ret_vars: Vec<Option<VarTree>>,
    param_vals: Vec<HashMap<u32, FVal>>,
    call_depth: usize,
    depth: usize,
    steps: usize,
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
    check_capability_words(input.words)?;
    // rspirv 0.12's decoder can panic on some malformed operand lists; the framing check
    // above removes the cases we know, and a panic that still happens becomes an error.
    let mut module = std::panic::catch_unwind(|| crate::specconst::load_words(input.words))
        .map_err(|_| FrontendError::Parse("malformed instruction operands".into()))?
        .map_err(|e| FrontendError::Parse(e.to_string()))?;
    translate_module(input, &mut module, version)
}

/// What the variables bound at one storage-buffer binding-table entry are decorated with.
#[derive(Clone, Copy, Debug)]
struct StorageDecl {
    /// Every one is `NonWritable` (or every member of its block).
    non_writable: bool,
    /// Some one is `Aliased`.
    aliased: bool,
}

/// The storage-buffer entries whose memory no invocation of `f` writes: those whose every
/// variable is `NonWritable`, and those whose variables are not `Aliased` and which no store
/// or atomic of `f` names. SPIR-V: a memory object declaration not decorated `Aliased` may be
/// assumed not to alias another one, so only its own variables (and physical pointers, which
/// may point anywhere) can write its memory; Mesa's `nir_opt_access` infers its
/// `ACCESS_NON_WRITEABLE` by the same rule. Image writes do not count: an image is another
/// memory object declaration.
fn readonly_buffers(storage: &HashMap<u32, StorageDecl>, f: &Function) -> Vec<u32> {
    let mut written = HashSet::default();
    let mut global_write = false;
    f.for_each_node(&mut |n| {
        let ir::Node::Instr(i) = n else { return };
        let (ir::Op::Store { space, .. } | ir::Op::Atomic { space, .. }) = &i.op else {
            return;
        };
        match *space {
            ir::Space::Ssbo(b) => {
                written.insert(b);
            }
            ir::Space::SsboArray(x) => written.extend(x.base..x.base + x.count),
            ir::Space::Global(_) => global_write = true,
            _ => {}
        }
    });
    let mut ro: Vec<u32> = (storage.iter())
        .filter(|(b, d)| d.non_writable || !(d.aliased || global_write || written.contains(*b)))
        .map(|(b, _)| *b)
        .collect();
    ro.sort_unstable();
    ro
}

/// Translates a parsed module. The functions' instructions are moved out of `module` into
/// the translation's block table (`module` keeps its declarations), so the code is held
/// once during the translation, not twice.
fn translate_module(
    input: &FrontendInput,
    module: &mut dr::Module,
    version: u32,
) -> Res<FrontendOutput> {
    let mut fe = Fe {
        input,
        decl: Decls::default(),
        code: Code::default(),
        iface: Interface {
            global_ptrs: HashMap::default(),
            bindings: vec![],
            runtime_counts: HashMap::default(),
            storage: HashMap::default(),
            push_size: 0,
            shared_size: 0,
            local_size_mem: 0,
            local_size: [1, 1, 1],
        },
        flow: Flow::default(),
        f: Function::new(input.entry),
        stack: vec![vec![]],
        emitted: 0,
        no_contraction: false,
        vals: HashMap::default(),
        demoted: HashMap::default(),
        phi_vars: HashMap::default(),
    };
    fe.module(module)?;
    fe.f.local_mem_size = fe.iface.local_size_mem;
    if !fe.f.volatile_memory {
        fe.f.readonly_buffers = readonly_buffers(&fe.iface.storage, &fe.f);
    }
    Ok(FrontendOutput {
        shader: ir::Shader {
            func: fe.f,
            local_size: fe.iface.local_size,
            shared_size: fe.iface.shared_size,
            push_size: fe.iface.push_size,
        },
        bindings: fe.iface.bindings,
        spirv_version: version,
    })
}
