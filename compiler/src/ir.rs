//! Ferrite IR: SSA with structured control flow.
//!
//! * Every value is defined once and has a [`Type`]: a kind (int, float, bool), an explicit
//!   bit size (1 for booleans before lowering, 8/16/32/64) and a component count (1..=4;
//!   vectors live until scalarization, after which only memory ops and `vec` feeding them
//!   keep vectors).
//! * Control flow is a tree: a [`Block`] is a list of [`Node`]s; `if` and `loop` nest.
//!   Values flow out of structure only through explicit edges: an `if` arm ends with
//!   `yield` values that become the `if`'s results; a `loop` has header parameters
//!   (initial values, then the arguments of each `continue`) and results (the arguments of
//!   each `break`). A value is visible in its own block after its definition and in blocks
//!   nested there (scoping replaces dominance). Out-of-SSA in a back end is therefore a set
//!   of parallel copies at each `yield` / `break` / `continue`.
//! * Memory is explicit: `load`/`store`/`atomic` name an address space and a byte offset.
//!   Function-local scalar and vector variables (`var $N`) exist only until vars-to-SSA.

use std::fmt;

mod alu;
mod float_mode;
mod subgroup;
pub use alu::{AluClass, AluInfo, AluOp, Domain, Sign, SpirvAlu};
pub use float_mode::{Denorm, FloatControls, FloatMode, Rounding, FLOAT_WIDTHS};
pub use subgroup::{eval_subgroup, RedOp, SubgroupOp};

/// An SSA value, printed `%N`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Value(pub u32);

/// A function-local variable (before vars-to-SSA), printed `$N`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Var(pub u32);

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Kind {
    Int,
    Float,
    Bool,
}

/// A value type: kind, bit size of one component and component count.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Type {
    pub kind: Kind,
    pub bits: u8,
    pub comps: u8,
}

impl Type {
    pub const B1: Type = Type::scalar(Kind::Bool, 1);
    pub const I32: Type = Type::scalar(Kind::Int, 32);
    pub const F32: Type = Type::scalar(Kind::Float, 32);

    pub const fn scalar(kind: Kind, bits: u8) -> Type {
        Type {
            kind,
            bits,
            comps: 1,
        }
    }
    pub const fn int(bits: u8) -> Type {
        Type::scalar(Kind::Int, bits)
    }
    pub const fn float(bits: u8) -> Type {
        Type::scalar(Kind::Float, bits)
    }
    pub const fn bool(bits: u8) -> Type {
        Type::scalar(Kind::Bool, bits)
    }
    pub const fn vec(self, comps: u8) -> Type {
        Type { comps, ..self }
    }
    pub const fn scalar_type(self) -> Type {
        Type { comps: 1, ..self }
    }
    pub fn is_bool(self) -> bool {
        self.kind == Kind::Bool
    }
    pub fn is_float(self) -> bool {
        self.kind == Kind::Float
    }
    /// Bytes one component occupies in memory (booleans have no memory form; 1-bit counts 1).
    pub fn comp_bytes(self) -> u32 {
        (u32::from(self.bits)).div_ceil(8)
    }
    pub fn bytes(self) -> u32 {
        self.comp_bytes() * u32::from(self.comps)
    }
    /// Mask of the meaningful bits of one component.
    pub fn mask(self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let k = match self.kind {
            Kind::Int => 'i',
            Kind::Float => 'f',
            Kind::Bool => 'b',
        };
        write!(f, "{}{}", k, self.bits)?;
        if self.comps != 1 {
            write!(f, "x{}", self.comps)?;
        }
        Ok(())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "${}", self.0)
    }
}

/// Memory address spaces. Buffers are named by binding-table index.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Space {
    Ssbo(u32),
    Ubo(u32),
    /// A storage buffer of a descriptor array chosen at run time.
    SsboArray(BufIndex),
    /// A uniform buffer of a descriptor array chosen at run time.
    UboArray(BufIndex),
    Push,
    Shared,
    /// Per-invocation private memory (dynamically indexed local arrays; scratch in a back end).
    Local,
    /// Global memory through a 64-bit address (`PhysicalStorageBuffer` pointers): the byte
    /// address is the `i64` base value plus the sign-extended `i32` offset of the op. The
    /// base is a source of the op (after the offset and data), as a descriptor index is.
    Global(Value),
}

/// Element `index` (an `i32` value) of a descriptor array of buffers whose `count`
/// elements sit at consecutive binding-table entries from `base` (the dispatch contract).
/// An index outside `0..count` is clamped to the last element, so a shader never reaches a
/// binding-table entry of another descriptor. `nonuniform`: the index may differ between
/// the invocations of a subgroup (SPIR-V `NonUniform`); otherwise it is dynamically uniform.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct BufIndex {
    pub base: u32,
    pub count: u32,
    pub index: Value,
    pub nonuniform: bool,
}

impl BufIndex {
    /// `name[B+%V<N]`, `name.nu[...]` for a non-uniform index (the array element an
    /// `ssbo`, `ubo`, `img` or `smp` reference names).
    fn fmt_named(&self, f: &mut fmt::Formatter, name: &str) -> fmt::Result {
        write!(
            f,
            "{name}{}[{}+{}<{}]",
            if self.nonuniform { ".nu" } else { "" },
            self.base,
            self.index,
            self.count
        )
    }
}

/// The descriptor an image op reads: the image (or texel buffer) at binding-table index
/// `bti`, or, when `index` is set, the element of an image array chosen at run time (its
/// `base` is `bti`). A sampler message may also take its sampler from a sampler array at
/// run time (`sampler`, whose `base` is the op's sampler index). The index values are
/// sources of the op, after its own (image index first).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ImgRef {
    pub bti: u32,
    pub index: Option<BufIndex>,
    pub sampler: Option<BufIndex>,
}

impl ImgRef {
    /// A fixed binding-table entry.
    pub fn fixed(bti: u32) -> Self {
        ImgRef {
            bti,
            index: None,
            sampler: None,
        }
    }

    /// The run-time index values (image first, then sampler).
    pub fn indices(&self) -> impl Iterator<Item = Value> {
        self.index
            .map(|x| x.index)
            .into_iter()
            .chain(self.sampler.map(|x| x.index))
    }

    /// True when a run-time index may differ between invocations of a subgroup.
    pub fn nonuniform(&self) -> bool {
        self.index.is_some_and(|x| x.nonuniform) || self.sampler.is_some_and(|x| x.nonuniform)
    }
}

/// `img[B]`, `img[B+%V<N]` (`img.nu[...]` for a non-uniform index), then ` smp[S+%V<N]`
/// when the sampler is chosen at run time.
impl fmt::Display for ImgRef {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.index {
            Some(x) => x.fmt_named(f, "img")?,
            None => write!(f, "img[{}]", self.bti)?,
        }
        if let Some(x) = &self.sampler {
            write!(f, " ")?;
            x.fmt_named(f, "smp")?;
        }
        Ok(())
    }
}

impl Space {
    /// The value this space reads, if any (a source of the op): the run-time descriptor
    /// index of an array element, or the 64-bit base address of global memory.
    pub fn index(&self) -> Option<Value> {
        match self {
            Space::SsboArray(x) | Space::UboArray(x) => Some(x.index),
            Space::Global(base) => Some(*base),
            Space::Ssbo(_) | Space::Ubo(_) | Space::Push | Space::Shared | Space::Local => None,
        }
    }
    pub fn index_mut(&mut self) -> Option<&mut Value> {
        match self {
            Space::SsboArray(x) | Space::UboArray(x) => Some(&mut x.index),
            Space::Global(base) => Some(base),
            Space::Ssbo(_) | Space::Ubo(_) | Space::Push | Space::Shared | Space::Local => None,
        }
    }
    /// The descriptor array of a buffer chosen at run time; None for a fixed buffer and
    /// every other space.
    pub fn array(&self) -> Option<BufIndex> {
        match self {
            Space::SsboArray(x) | Space::UboArray(x) => Some(*x),
            Space::Ssbo(_)
            | Space::Ubo(_)
            | Space::Push
            | Space::Shared
            | Space::Local
            | Space::Global(_) => None,
        }
    }
    /// The fixed buffer at binding-table entry `entry` of this space's descriptor array (a
    /// storage buffer for a storage-buffer array, a uniform buffer for a uniform-buffer
    /// array); a space that is not an array is itself.
    pub fn element(self, entry: u32) -> Space {
        match self {
            Space::SsboArray(_) => Space::Ssbo(entry),
            Space::UboArray(_) => Space::Ubo(entry),
            other => other,
        }
    }
    /// Storage buffers, fixed or indexed.
    pub fn is_ssbo(&self) -> bool {
        matches!(self, Space::Ssbo(_) | Space::SsboArray(_))
    }
    /// Storage or uniform buffers, fixed or indexed.
    pub fn is_buffer(&self) -> bool {
        matches!(
            self,
            Space::Ssbo(_) | Space::Ubo(_) | Space::SsboArray(_) | Space::UboArray(_)
        )
    }
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Space::Ssbo(b) => write!(f, "ssbo[{b}]"),
            Space::Ubo(b) => write!(f, "ubo[{b}]"),
            Space::SsboArray(x) => x.fmt_named(f, "ssbo"),
            Space::UboArray(x) => x.fmt_named(f, "ubo"),
            Space::Push => write!(f, "push"),
            Space::Shared => write!(f, "shared"),
            Space::Local => write!(f, "local"),
            Space::Global(base) => write!(f, "global[{base}]"),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AtomicOp {
    Add,
    Sub,
    Smin,
    Umin,
    Smax,
    Umax,
    And,
    Or,
    Xor,
    Xchg,
    CmpXchg,
    Inc,
    Dec,
    Load,
}

impl AtomicOp {
    pub const ALL: &'static [AtomicOp] = &[
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Smin,
        AtomicOp::Umin,
        AtomicOp::Smax,
        AtomicOp::Umax,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Xchg,
        AtomicOp::CmpXchg,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::Load,
    ];
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "add",
            AtomicOp::Sub => "sub",
            AtomicOp::Smin => "smin",
            AtomicOp::Umin => "umin",
            AtomicOp::Smax => "smax",
            AtomicOp::Umax => "umax",
            AtomicOp::And => "and",
            AtomicOp::Or => "or",
            AtomicOp::Xor => "xor",
            AtomicOp::Xchg => "xchg",
            AtomicOp::CmpXchg => "cmpxchg",
            AtomicOp::Inc => "inc",
            AtomicOp::Dec => "dec",
            AtomicOp::Load => "load",
        }
    }
    /// Number of data operands (besides the offset).
    pub fn num_data(self) -> usize {
        match self {
            AtomicOp::CmpXchg => 2,
            AtomicOp::Inc | AtomicOp::Dec | AtomicOp::Load => 0,
            _ => 1,
        }
    }
}

/// An access to a storage image or texel buffer through the typed surface messages.
/// Coordinates are integer texel coordinates (x, then y, then z or the array layer), one
/// 32-bit component each; loaded texels are 4-component 32-bit vectors as SPIR-V has them, a
/// stored texel has the channels of the format written (1 to 4 32-bit components).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ImageOp {
    /// `OpImageRead`: srcs [coords]; the result is the texel.
    Load,
    /// `OpImageWrite`: srcs [coords, texel].
    Store,
    /// An atomic on a one-channel 32-bit texel: srcs [coords, data...] (`AtomicOp::num_data`).
    Atomic(AtomicOp),
    /// `OpImageFetch` on a sampled image (the sampler's `ld`): srcs [coords, lod (i32)];
    /// the result is the texel (0 outside the level).
    Fetch,
    /// `OpImageSampleExplicitLod ... Lod` (`sample_l`) with the sampler whose table index is
    /// `sampler`: srcs [coords (1-4 f32: u, v, r, then the array layer or cube index), lod (f32)].
    /// `offset`: a constant texel offset (ConstOffset), U, V, R.
    SampleLod { sampler: u32, offset: [i8; 3] },
    /// `OpImageSampleExplicitLod ... Grad` (`sample_d`): srcs [coords (1-3 f32: u, v, r,
    /// then the array layer), d/dx (1-3 f32), d/dy (1-3 f32)], one derivative per spatial
    /// coordinate; the sampler computes the LOD from them. `offset` as for `SampleLod`.
    SampleGrad { sampler: u32, offset: [i8; 3] },
    /// `OpImageGather` (`gather4`) of component `comp` with the sampler whose table index is
    /// `sampler`: srcs [coords (2-4 f32)]; the result is the component of the four texels of
    /// the bilinear footprint at level 0, in the order (i0, j1), (i1, j1), (i1, j0), (i0, j0).
    Gather {
        sampler: u32,
        comp: u32,
        offset: [i8; 3],
    },
    /// `OpImageGather` with per-lane texel offsets (`gather4_po`): srcs [coords (2-3 f32),
    /// offsets (i32x2: U, V, each -32..31)]. The `Offset` operand (not a constant), and
    /// constant offsets beyond the header's -8..7.
    GatherOffset { sampler: u32, comp: u32 },
    /// `OpImageQuerySizeLod` / `OpImageQueryLevels` (`resinfo`): srcs [lod (i32)]; the
    /// result is (width, height, depth or layers, level count) of that level.
    Size,
}

/// `.o<u>_<v>_<r>` for a nonzero constant texel offset, nothing otherwise (one token: the
/// IR text splits operands at commas).
fn offset_suffix(o: [i8; 3]) -> String {
    if o == [0; 3] {
        String::new()
    } else {
        format!(".o{}_{}_{}", o[0], o[1], o[2])
    }
}

/// Splits `rest` of an image op name into its body and constant offset (`.o<u>_<v>_<r>`).
pub fn split_offset(rest: &str) -> Option<(&str, [i8; 3])> {
    match rest.split_once(".o") {
        None => Some((rest, [0; 3])),
        Some((body, o)) => {
            let v: Vec<i8> = o
                .split('_')
                .map(|x| x.parse().ok())
                .collect::<Option<_>>()?;
            (v.len() == 3).then(|| (body, [v[0], v[1], v[2]]))
        }
    }
}

impl ImageOp {
    pub fn name(self) -> String {
        match self {
            ImageOp::Load => "image_load".into(),
            ImageOp::Store => "image_store".into(),
            ImageOp::Atomic(a) => format!("image_atomic_{}", a.name()),
            ImageOp::Fetch => "image_fetch".into(),
            ImageOp::SampleLod { sampler, offset } => {
                format!("image_sample_l.s{sampler}{}", offset_suffix(offset))
            }
            ImageOp::SampleGrad { sampler, offset } => {
                format!("image_sample_d.s{sampler}{}", offset_suffix(offset))
            }
            ImageOp::Gather {
                sampler,
                comp,
                offset,
            } => format!("image_gather.s{sampler}.c{comp}{}", offset_suffix(offset)),
            ImageOp::GatherOffset { sampler, comp } => {
                format!("image_gather_po.s{sampler}.c{comp}")
            }
            ImageOp::Size => "image_size".into(),
        }
    }

    /// True for the ops that only read (no effect besides their result).
    pub fn is_read(self) -> bool {
        matches!(
            self,
            ImageOp::Load
                | ImageOp::Fetch
                | ImageOp::SampleLod { .. }
                | ImageOp::SampleGrad { .. }
                | ImageOp::Gather { .. }
                | ImageOp::GatherOffset { .. }
                | ImageOp::Size
        )
    }
}

/// Built-in inputs of a compute invocation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SysVal {
    GlobalInvocationId,
    LocalInvocationId,
    LocalInvocationIndex,
    WorkgroupId,
    NumWorkgroups,
    SubgroupSize,
    SubgroupId,
    SubgroupInvocation,
    NumSubgroups,
}

impl SysVal {
    pub const ALL: &'static [SysVal] = &[
        SysVal::GlobalInvocationId,
        SysVal::LocalInvocationId,
        SysVal::LocalInvocationIndex,
        SysVal::WorkgroupId,
        SysVal::NumWorkgroups,
        SysVal::SubgroupSize,
        SysVal::SubgroupId,
        SysVal::SubgroupInvocation,
        SysVal::NumSubgroups,
    ];
    pub fn name(self) -> &'static str {
        match self {
            SysVal::GlobalInvocationId => "global_invocation_id",
            SysVal::LocalInvocationId => "local_invocation_id",
            SysVal::LocalInvocationIndex => "local_invocation_index",
            SysVal::WorkgroupId => "workgroup_id",
            SysVal::NumWorkgroups => "num_workgroups",
            SysVal::SubgroupSize => "subgroup_size",
            SysVal::SubgroupId => "subgroup_id",
            SysVal::SubgroupInvocation => "subgroup_invocation",
            SysVal::NumSubgroups => "num_subgroups",
        }
    }
    pub fn ty(self) -> Type {
        match self {
            SysVal::GlobalInvocationId
            | SysVal::LocalInvocationId
            | SysVal::WorkgroupId
            | SysVal::NumWorkgroups => Type::I32.vec(3),
            _ => Type::I32,
        }
    }
}

/// Memory scopes of barriers, as SPIR-V names them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Scope {
    None,
    Invocation,
    Subgroup,
    Workgroup,
    Device,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::None => "none",
            Scope::Invocation => "invocation",
            Scope::Subgroup => "subgroup",
            Scope::Workgroup => "workgroup",
            Scope::Device => "device",
        }
    }
    pub const ALL: &'static [Scope] = &[
        Scope::None,
        Scope::Invocation,
        Scope::Subgroup,
        Scope::Workgroup,
        Scope::Device,
    ];
}

/// One operation. Sources are always SSA values (constants are `const` instructions; a
/// back end folds them into immediates).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Op {
    /// Per-component raw bits (masked to the type's bit size).
    Const(Vec<u64>),
    Alu(AluOp, Vec<Value>),
    /// Build a vector from scalar components.
    Vec(Vec<Value>),
    Extract(Value, u8),
    Insert(Value, Value, u8),
    Swizzle(Value, Vec<u8>),
    LoadVar(Var),
    StoreVar(Var, Value),
    /// Load of the destination's type at a byte offset; `align` is the known alignment of
    /// the offset in bytes.
    Load {
        space: Space,
        offset: Value,
        align: u32,
    },
    Store {
        space: Space,
        offset: Value,
        value: Value,
        align: u32,
    },
    Atomic {
        op: AtomicOp,
        space: Space,
        offset: Value,
        data: Vec<Value>,
    },
    SysVal(SysVal),
    /// Size in bytes of a bound buffer (for `OpArrayLength`).
    BufferSize(Space),
    /// `OpControlBarrier` (exec = Some) or `OpMemoryBarrier` (exec = None). `semantics`
    /// holds the SPIR-V memory-semantics bits.
    Barrier {
        exec: Option<Scope>,
        mem: Scope,
        semantics: u32,
    },
    /// A `GroupNonUniform*` operation over the active invocations of the subgroup (see
    /// [`SubgroupOp`] for its sources).
    Subgroup(SubgroupOp, Vec<Value>),
    /// A typed access to the image or texel buffer `.1` names (see [`ImageOp`] for the
    /// sources; run-time descriptor indices follow them).
    Image(ImageOp, ImgRef, Vec<Value>),
}

/// The storage-class bits of SPIR-V memory semantics (`UniformMemory` 0x40 to
/// `OutputMemory` 0x1000), which `Op::Barrier`'s `semantics` keeps.
pub const SEMANTICS_STORAGE_CLASSES: u32 = 0x1FC0;
/// `SubgroupMemory` of SPIR-V memory semantics.
pub const SEMANTICS_SUBGROUP_MEMORY: u32 = 0x80;
/// `WorkgroupMemory` of SPIR-V memory semantics.
pub const SEMANTICS_WORKGROUP_MEMORY: u32 = 0x100;

/// An op's ordering properties ([`Op::has_side_effects`], [`Op::reads_memory`]).
struct Effects {
    side_effects: bool,
    reads_memory: bool,
}

impl Op {
    /// Source values in order.
    pub fn srcs(&self) -> Vec<Value> {
        self.srcs_iter().collect()
    }

    /// Source values in order, without allocating (the passes visit every instruction's
    /// sources several times per compile).
    pub fn srcs_iter(&self) -> impl Iterator<Item = Value> + '_ {
        let none = [None, None];
        let (pre, mid, post): (_, &[Value], _) = match self {
            Op::Const(_) | Op::LoadVar(_) | Op::SysVal(_) => (none, &[], none),
            Op::Barrier { .. } => (none, &[], none),
            Op::Alu(_, s) | Op::Vec(s) | Op::Subgroup(_, s) => (none, s, none),
            Op::Image(_, r, s) => (
                none,
                s,
                [r.index.map(|x| x.index), r.sampler.map(|x| x.index)],
            ),
            Op::Extract(v, _) | Op::Swizzle(v, _) => ([Some(*v), None], &[], none),
            Op::Insert(v, s, _) => ([Some(*v), Some(*s)], &[], none),
            Op::StoreVar(_, v) => ([Some(*v), None], &[], none),
            // A run-time descriptor index comes last.
            Op::BufferSize(space) => (none, &[], [space.index(), None]),
            Op::Load { offset, space, .. } => ([Some(*offset), None], &[], [space.index(), None]),
            Op::Store {
                offset,
                value,
                space,
                ..
            } => ([Some(*offset), Some(*value)], &[], [space.index(), None]),
            Op::Atomic {
                offset,
                data,
                space,
                ..
            } => ([Some(*offset), None], data, [space.index(), None]),
        };
        let mid = mid.iter().copied();
        pre.into_iter()
            .flatten()
            .chain(mid)
            .chain(post.into_iter().flatten())
    }

    /// Mutable access to every source value, in the order of [`Op::srcs`].
    pub fn srcs_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        let (pre, mid, post): (_, &mut [Value], _) = match self {
            Op::Const(_) | Op::LoadVar(_) | Op::SysVal(_) => ([None, None], &mut [], [None, None]),
            Op::Barrier { .. } => ([None, None], &mut [], [None, None]),
            Op::Alu(_, s) | Op::Vec(s) | Op::Subgroup(_, s) => ([None, None], s, [None, None]),
            Op::Image(_, r, s) => {
                let ImgRef { index, sampler, .. } = r;
                let post = [
                    index.as_mut().map(|x| &mut x.index),
                    sampler.as_mut().map(|x| &mut x.index),
                ];
                ([None, None], s, post)
            }
            Op::Extract(v, _) | Op::Swizzle(v, _) => ([Some(v), None], &mut [], [None, None]),
            Op::Insert(v, s, _) => ([Some(v), Some(s)], &mut [], [None, None]),
            Op::StoreVar(_, v) => ([Some(v), None], &mut [], [None, None]),
            Op::BufferSize(space) => ([None, None], &mut [], [space.index_mut(), None]),
            Op::Load { offset, space, .. } => {
                ([Some(offset), None], &mut [], [space.index_mut(), None])
            }
            Op::Store {
                offset,
                value,
                space,
                ..
            } => (
                [Some(offset), Some(value)],
                &mut [],
                [space.index_mut(), None],
            ),
            Op::Atomic {
                offset,
                data,
                space,
                ..
            } => ([Some(offset), None], data, [space.index_mut(), None]),
        };
        pre.into_iter()
            .flatten()
            .chain(mid.iter_mut())
            .chain(post.into_iter().flatten())
    }

    /// How the op orders with other instructions besides through its result: one
    /// exhaustive table, so that a new op states both properties at once.
    fn effects(&self) -> Effects {
        const PURE: Effects = Effects {
            side_effects: false,
            reads_memory: false,
        };
        const READS: Effects = Effects {
            side_effects: false,
            reads_memory: true,
        };
        const WRITES: Effects = Effects {
            side_effects: true,
            reads_memory: false,
        };
        match self {
            Op::Const(_)
            | Op::Alu(..)
            | Op::Vec(_)
            | Op::Extract(..)
            | Op::Insert(..)
            | Op::Swizzle(..)
            | Op::SysVal(_)
            | Op::BufferSize(_) => PURE,
            Op::LoadVar(_) | Op::Load { .. } => READS,
            // A subgroup operation depends on which invocations are active where it
            // stands: it must not be moved, merged or speculated.
            Op::Store { .. } | Op::StoreVar(..) | Op::Barrier { .. } | Op::Subgroup(..) => WRITES,
            Op::Atomic { .. } => Effects {
                side_effects: true,
                reads_memory: true,
            },
            Op::Image(op, ..) => Effects {
                side_effects: !op.is_read(),
                reads_memory: *op != ImageOp::Store,
            },
        }
    }

    /// True if the op has an effect besides its result (it must not be removed or moved
    /// across other effects).
    pub fn has_side_effects(&self) -> bool {
        self.effects().side_effects
    }

    /// True if the op reads memory that other instructions may write (not CSE-able across
    /// stores/barriers).
    pub fn reads_memory(&self) -> bool {
        self.effects().reads_memory
    }

    /// True for logical sends in a back end (memory messages).
    pub fn is_memory(&self) -> bool {
        matches!(
            self,
            Op::Load { .. }
                | Op::Store { .. }
                | Op::Atomic { .. }
                | Op::Barrier { .. }
                | Op::Image(..)
        )
    }
}

#[derive(Clone, PartialEq, Debug)]
pub struct Instr {
    pub dst: Option<Value>,
    pub op: Op,
    /// SPIR-V `NoContraction`: the result must be computed as written; in particular it
    /// may not be fused with other operations (a multiply into a multiply-add). Printed as
    /// `exact` before the op.
    pub exact: bool,
}

impl Instr {
    /// An instruction without `exact`.
    pub fn new(dst: Option<Value>, op: Op) -> Instr {
        Instr {
            dst,
            op,
            exact: false,
        }
    }
}

#[derive(Clone, PartialEq, Debug)]
pub struct If {
    pub cond: Value,
    pub then_: Block,
    pub else_: Block,
    /// Values each falling-through arm yields.
    pub results: Vec<Value>,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Loop {
    /// Header parameters: (parameter, initial value).
    pub params: Vec<(Value, Value)>,
    pub body: Block,
    /// Values defined by the arguments of `break`.
    pub results: Vec<Value>,
}

#[derive(Clone, PartialEq, Debug)]
pub enum Node {
    Instr(Instr),
    If(Box<If>),
    Loop(Box<Loop>),
    /// Leave the innermost loop; the arguments become the loop's results.
    Break(Vec<Value>),
    /// Go to the next iteration of the innermost loop; the arguments become its parameters.
    /// A loop body that falls off its end continues with no arguments (legal only for a
    /// loop without parameters).
    Continue(Vec<Value>),
    /// End of an `if` arm carrying the `if`'s results.
    Yield(Vec<Value>),
}

impl Node {
    /// True if control never falls through past this node.
    pub fn is_jump(&self) -> bool {
        matches!(self, Node::Break(_) | Node::Continue(_) | Node::Yield(_))
    }
}

pub type Block = Vec<Node>;

/// One function (the entry point after inlining).
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Function {
    pub name: String,
    pub body: Block,
    /// Type of each value, indexed by `Value.0`.
    pub values: Vec<Type>,
    /// Type of each variable, indexed by `Var.0`.
    pub vars: Vec<Type>,
    /// Float execution modes of the entry point (default: none asked for).
    pub float_controls: FloatControls,
    /// The module marks some memory `Volatile` (a decoration or a memory-access operand):
    /// loads of writable memory must then each be performed, so they are not merged
    /// (`passes::opt_load_cse`). Printed as a `volatile_memory` line.
    pub volatile_memory: bool,
    /// Binding-table indices of the storage buffers the module declares `NonWritable` (every
    /// variable bound there, or every member of its block): no one writes their memory
    /// while the shader runs, so their loads are read-only memory to the passes
    /// (`passes::loads`), as uniform-buffer loads are. Empty when `volatile_memory`.
    /// Printed as a `readonly_buffers` line.
    pub readonly_buffers: Vec<u32>,
    /// Bytes of per-invocation private memory (`Space::Local`; scratch in the back end): the
    /// function's, so a pass that removes its accesses can also give it up. Printed in the
    /// shader's header line.
    pub local_mem_size: u32,
}

impl Function {
    pub fn new(name: &str) -> Function {
        Function {
            name: name.to_string(),
            ..Default::default()
        }
    }
    pub fn new_value(&mut self, ty: Type) -> Value {
        self.values.push(ty);
        Value(self.values.len() as u32 - 1)
    }
    pub fn new_var(&mut self, ty: Type) -> Var {
        self.vars.push(ty);
        Var(self.vars.len() as u32 - 1)
    }
    pub fn ty(&self, v: Value) -> Type {
        self.values[v.0 as usize]
    }

    /// Visits every node, depth first, in program order.
    pub fn for_each_node(&self, f: &mut dyn FnMut(&Node)) {
        fn walk(b: &Block, f: &mut dyn FnMut(&Node)) {
            for n in b {
                f(n);
                match n {
                    Node::If(i) => {
                        walk(&i.then_, f);
                        walk(&i.else_, f);
                    }
                    Node::Loop(l) => walk(&l.body, f),
                    _ => {}
                }
            }
        }
        walk(&self.body, f)
    }

    /// Visits every instruction mutably.
    pub fn for_each_instr_mut(&mut self, f: &mut dyn FnMut(&mut Instr)) {
        fn walk(b: &mut Block, f: &mut dyn FnMut(&mut Instr)) {
            for n in b {
                match n {
                    Node::Instr(i) => f(i),
                    Node::If(i) => {
                        walk(&mut i.then_, f);
                        walk(&mut i.else_, f);
                    }
                    Node::Loop(l) => walk(&mut l.body, f),
                    _ => {}
                }
            }
        }
        walk(&mut self.body, f)
    }

    /// Replaces every use of values by `map` (uses in instructions, conditions, edges).
    pub fn rewrite_uses(&mut self, map: &dyn Fn(Value) -> Value) {
        rewrite_uses_in(&mut self.body, map)
    }

    /// Counts uses of every value.
    pub fn use_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.values.len()];
        self.for_each_node(&mut |n| match n {
            Node::Instr(i) => {
                for s in i.op.srcs_iter() {
                    counts[s.0 as usize] += 1;
                }
            }
            Node::If(i) => counts[i.cond.0 as usize] += 1,
            Node::Loop(l) => {
                for p in &l.params {
                    counts[p.1 .0 as usize] += 1;
                }
            }
            Node::Break(v) | Node::Continue(v) | Node::Yield(v) => {
                for x in v {
                    counts[x.0 as usize] += 1;
                }
            }
        });
        counts
    }

    /// Renames values and variables in order of definition (for comparing dumps).
    pub fn renumber(&mut self) {
        let mut map = vec![u32::MAX; self.values.len()];
        let mut types = Vec::new();
        fn def(map: &mut [u32], types: &mut Vec<Type>, old: &[Type], v: Value) {
            if map[v.0 as usize] == u32::MAX {
                map[v.0 as usize] = types.len() as u32;
                types.push(old[v.0 as usize]);
            }
        }
        let old = self.values.clone();
        let mut var_map = vec![u32::MAX; self.vars.len()];
        let mut var_types = Vec::new();
        self.for_each_node(&mut |n| match n {
            Node::Instr(i) => {
                if let Some(d) = i.dst {
                    def(&mut map, &mut types, &old, d);
                }
                if let Op::LoadVar(v) | Op::StoreVar(v, _) = &i.op {
                    if var_map[v.0 as usize] == u32::MAX {
                        var_map[v.0 as usize] = var_types.len() as u32;
                        var_types.push(self.vars[v.0 as usize]);
                    }
                }
            }
            Node::If(i) => {
                for r in &i.results {
                    def(&mut map, &mut types, &old, *r);
                }
            }
            Node::Loop(l) => {
                for r in &l.results {
                    def(&mut map, &mut types, &old, *r);
                }
                for p in &l.params {
                    def(&mut map, &mut types, &old, p.0);
                }
            }
            _ => {}
        });
        // Values never defined (invalid IR) keep a fresh number so printing still works.
        for (i, m) in map.iter_mut().enumerate() {
            if *m == u32::MAX {
                *m = types.len() as u32;
                types.push(old[i]);
            }
        }
        for (i, m) in var_map.iter_mut().enumerate() {
            if *m == u32::MAX {
                *m = var_types.len() as u32;
                var_types.push(self.vars[i]);
            }
        }
        let m = |v: Value| Value(map[v.0 as usize]);
        self.rewrite_uses(&m);
        fn rename_defs(b: &mut Block, map: &[u32], var_map: &[u32]) {
            for n in b {
                match n {
                    Node::Instr(i) => {
                        if let Some(d) = &mut i.dst {
                            *d = Value(map[d.0 as usize]);
                        }
                        if let Op::LoadVar(v) | Op::StoreVar(v, _) = &mut i.op {
                            *v = Var(var_map[v.0 as usize]);
                        }
                    }
                    Node::If(i) => {
                        for r in &mut i.results {
                            *r = Value(map[r.0 as usize]);
                        }
                        rename_defs(&mut i.then_, map, var_map);
                        rename_defs(&mut i.else_, map, var_map);
                    }
                    Node::Loop(l) => {
                        for r in &mut l.results {
                            *r = Value(map[r.0 as usize]);
                        }
                        for p in &mut l.params {
                            p.0 = Value(map[p.0 .0 as usize]);
                        }
                        rename_defs(&mut l.body, map, var_map);
                    }
                    _ => {}
                }
            }
        }
        rename_defs(&mut self.body, &map, &var_map);
        self.values = types;
        self.vars = var_types;
    }

    /// Number of instructions (not counting structure).
    pub fn instr_count(&self) -> usize {
        let mut n = 0;
        self.for_each_node(&mut |x| {
            if matches!(x, Node::Instr(_)) {
                n += 1
            }
        });
        n
    }
}

/// Replaces every use of values in `b` and the blocks nested in it by `map` (uses in
/// instructions, conditions, edges).
pub fn rewrite_uses_in(b: &mut Block, map: &dyn Fn(Value) -> Value) {
    for n in b {
        match n {
            Node::Instr(i) => {
                for s in i.op.srcs_mut() {
                    *s = map(*s);
                }
            }
            Node::If(i) => {
                i.cond = map(i.cond);
                rewrite_uses_in(&mut i.then_, map);
                rewrite_uses_in(&mut i.else_, map);
            }
            Node::Loop(l) => {
                for p in &mut l.params {
                    p.1 = map(p.1);
                }
                rewrite_uses_in(&mut l.body, map);
            }
            Node::Break(v) | Node::Continue(v) | Node::Yield(v) => {
                for x in v {
                    *x = map(*x);
                }
            }
        }
    }
}

/// The constants of a function: every value a `const` instruction defines, with its
/// components. Passes that read constant operands collect them with
/// [`Function::consts`] and ask here.
///
/// Stored flat, as a table indexed by value number (the start of the value's components in
/// `comps` plus one, 0 for a non-constant) and one array of components: two allocations for
/// the whole function instead of a hash entry and a `Vec` per constant, and a lookup is
/// one index. The table grows to the largest constant value recorded.
#[derive(Clone, Debug, Default)]
pub struct Consts {
    /// Per value number: 0, or 1 + the index in `comps` of the value's length word.
    at: Vec<u32>,
    /// For each constant, its component count followed by its components.
    comps: Vec<u64>,
}

impl Consts {
    /// The components of a constant value.
    pub fn get(&self, v: Value) -> Option<&[u64]> {
        let at = *self.at.get(v.0 as usize)? as usize;
        if at == 0 {
            return None;
        }
        let len = self.comps[at - 1] as usize;
        Some(&self.comps[at..at + len])
    }
    pub fn contains(&self, v: Value) -> bool {
        self.at.get(v.0 as usize).is_some_and(|a| *a != 0)
    }
    /// The component every component of a constant value shares (a scalar, or a vector
    /// with all components equal).
    pub fn splat(&self, v: Value) -> Option<u64> {
        self.get(v).and_then(splat)
    }
    /// Records a value found to be constant (by folding). A value recorded again takes
    /// the new components (the old ones stay unused in the array).
    pub fn insert(&mut self, v: Value, c: Vec<u64>) {
        self.insert_slice(v, &c);
    }

    fn insert_slice(&mut self, v: Value, c: &[u64]) {
        let i = v.0 as usize;
        if i >= self.at.len() {
            self.at.resize(i + 1, 0);
        }
        self.comps.push(c.len() as u64);
        self.at[i] = self.comps.len() as u32;
        self.comps.extend_from_slice(c);
    }

    /// Bytes the table and the component array have reserved (pinned by a test: they grow
    /// with the number of values and constants, not with a per-constant allocation).
    pub fn heap_bytes(&self) -> usize {
        self.at.capacity() * std::mem::size_of::<u32>()
            + self.comps.capacity() * std::mem::size_of::<u64>()
    }
}

/// The component all of `c` shares, if the components are equal.
pub fn splat(c: &[u64]) -> Option<u64> {
    let first = *c.first()?;
    c.iter().all(|x| *x == first).then_some(first)
}

/// The two 32-bit words `(lo, hi)` of a scalar 64-bit integer built as packDouble2x32 and
/// the front end's bitcasts build it: `ior(u2u lo, ishl(u2u hi, 32))` in either operand
/// order, `lo` and `hi` of type i32. `def` gives the defining op of a value where known.
pub fn packed_words<'a>(
    x: Value,
    def: impl Fn(Value) -> Option<&'a Op>,
    ty: impl Fn(Value) -> Type,
) -> Option<(Value, Value)> {
    let Some(Op::Alu(AluOp::Ior, s)) = def(x) else {
        return None;
    };
    let widened = |v: Value| match def(v) {
        Some(Op::Alu(AluOp::U2u, w)) if ty(w[0]) == Type::I32 => Some(w[0]),
        _ => None,
    };
    let shifted = |v: Value| match def(v) {
        Some(Op::Alu(AluOp::Ishl, w)) if def(w[1]).and_then(Op::const_splat) == Some(32) => {
            widened(w[0])
        }
        _ => None,
    };
    let (a, b) = (s[0], s[1]);
    match (widened(a), shifted(b), widened(b), shifted(a)) {
        (Some(lo), Some(hi), ..) | (.., Some(lo), Some(hi)) => Some((lo, hi)),
        _ => None,
    }
}

impl Op {
    /// For a `const`, the component all its components share (see [`splat`]).
    pub fn const_splat(&self) -> Option<u64> {
        match self {
            Op::Const(c) => splat(c),
            _ => None,
        }
    }
}

impl Function {
    /// Collects the values `const` instructions define.
    pub fn consts(&self) -> Consts {
        let mut m = Consts {
            at: vec![0; self.values.len()],
            comps: Vec::new(),
        };
        self.for_each_node(&mut |n| {
            if let Node::Instr(Instr {
                dst: Some(d),
                op: Op::Const(c),
                ..
            }) = n
            {
                m.insert_slice(*d, c);
            }
        });
        m
    }
}

/// A compute shader: the entry function plus what dispatch needs.
#[derive(Clone, PartialEq, Debug)]
pub struct Shader {
    pub func: Function,
    pub local_size: [u32; 3],
    /// Bytes of workgroup-shared memory.
    pub shared_size: u32,
    /// Bytes of push-constant data read.
    pub push_size: u32,
}

// ---------------------------------------------------------------------------------------
// Printing

/// Formats a constant component for a type.
pub fn fmt_const(ty: Type, bits: u64) -> String {
    match ty.kind {
        Kind::Bool => {
            if bits & 1 != 0 {
                "true".into()
            } else {
                "false".into()
            }
        }
        Kind::Int => {
            // Print as signed when that is shorter to read (small negative numbers).
            let sext = sign_extend(bits, ty.bits);
            if sext < 0 && sext > -65536 {
                format!("{sext}")
            } else {
                format!("{}", bits & ty.mask())
            }
        }
        Kind::Float => {
            let s = match ty.bits {
                32 => {
                    let f = f32::from_bits(bits as u32);
                    if f.is_nan() {
                        return format!("0x{:08x}", bits as u32);
                    }
                    format!("{f:?}")
                }
                64 => {
                    let f = f64::from_bits(bits);
                    if f.is_nan() {
                        return format!("0x{bits:016x}");
                    }
                    format!("{f:?}")
                }
                _ => return format!("0x{:x}", bits & ty.mask()),
            };
            s
        }
    }
}

pub fn sign_extend(bits: u64, size: u8) -> i64 {
    if size >= 64 {
        bits as i64
    } else {
        let shift = 64 - u32::from(size);
        ((bits << shift) as i64) >> shift
    }
}

pub struct InstrDisplay<'a> {
    pub func: &'a Function,
    pub instr: &'a Instr,
}

impl fmt::Display for InstrDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let i = self.instr;
        if let Some(d) = i.dst {
            write!(f, "{}:{} = ", d, self.func.ty(d))?;
        }
        if i.exact {
            write!(f, "exact ")?;
        }
        let list = |v: &[Value]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match &i.op {
            Op::Const(c) => {
                let ty = i.dst.map(|d| self.func.ty(d)).unwrap_or(Type::I32);
                let s: Vec<String> = c.iter().map(|b| fmt_const(ty, *b)).collect();
                write!(f, "const {}", s.join(", "))
            }
            Op::Alu(op, s) => write!(f, "{} {}", op.name(), list(s)),
            Op::Vec(s) => write!(f, "vec {}", list(s)),
            Op::Extract(v, c) => write!(f, "extract {v}, {c}"),
            Op::Insert(v, s, c) => write!(f, "insert {v}, {s}, {c}"),
            Op::Swizzle(v, c) => {
                let s: Vec<String> = c.iter().map(|x| x.to_string()).collect();
                write!(f, "swizzle {v}, {}", s.join(" "))
            }
            Op::LoadVar(v) => write!(f, "load_var {v}"),
            Op::StoreVar(v, x) => write!(f, "store_var {v}, {x}"),
            Op::Load {
                space,
                offset,
                align,
            } => write!(f, "load {space} {offset} align {align}"),
            Op::Store {
                space,
                offset,
                value,
                align,
            } => write!(f, "store {space} {offset}, {value} align {align}"),
            Op::Atomic {
                op,
                space,
                offset,
                data,
            } => {
                write!(f, "atomic_{} {space} {offset}", op.name())?;
                for d in data {
                    write!(f, ", {d}")?;
                }
                Ok(())
            }
            Op::SysVal(s) => write!(f, "sysval {}", s.name()),
            Op::BufferSize(s) => write!(f, "buffer_size {s}"),
            Op::Barrier {
                exec,
                mem,
                semantics,
            } => {
                match exec {
                    Some(e) => write!(f, "control_barrier {}", e.name())?,
                    None => write!(f, "memory_barrier")?,
                }
                write!(f, " {} 0x{semantics:x}", mem.name())
            }
            Op::Subgroup(op, s) => {
                write!(f, "{op}")?;
                if !s.is_empty() {
                    write!(f, " {}", list(s))?;
                }
                Ok(())
            }
            Op::Image(op, r, s) => write!(f, "{} {r} {}", op.name(), list(s)),
        }
    }
}

fn write_defs(f: &mut fmt::Formatter, func: &Function, vals: &[Value]) -> fmt::Result {
    for (k, v) in vals.iter().enumerate() {
        if k > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{}:{}", v, func.ty(*v))?;
    }
    if !vals.is_empty() {
        write!(f, " = ")?;
    }
    Ok(())
}

fn write_args(f: &mut fmt::Formatter, kw: &str, vals: &[Value]) -> fmt::Result {
    write!(f, "{kw}")?;
    for (k, v) in vals.iter().enumerate() {
        write!(f, "{}{}", if k == 0 { " " } else { ", " }, v)?;
    }
    writeln!(f)
}

fn write_block(f: &mut fmt::Formatter, func: &Function, b: &Block, depth: usize) -> fmt::Result {
    let pad = "    ".repeat(depth);
    for n in b {
        write!(f, "{pad}")?;
        match n {
            Node::Instr(i) => writeln!(f, "{}", InstrDisplay { func, instr: i })?,
            Node::If(i) => {
                write_defs(f, func, &i.results)?;
                writeln!(f, "if {} {{", i.cond)?;
                write_block(f, func, &i.then_, depth + 1)?;
                if i.else_.is_empty() {
                    writeln!(f, "{pad}}}")?;
                } else {
                    writeln!(f, "{pad}}} else {{")?;
                    write_block(f, func, &i.else_, depth + 1)?;
                    writeln!(f, "{pad}}}")?;
                }
            }
            Node::Loop(l) => {
                write_defs(f, func, &l.results)?;
                write!(f, "loop")?;
                if !l.params.is_empty() {
                    write!(f, " (")?;
                    for (k, (p, init)) in l.params.iter().enumerate() {
                        if k > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{}:{} = {}", p, func.ty(*p), init)?;
                    }
                    write!(f, ")")?;
                }
                writeln!(f, " {{")?;
                write_block(f, func, &l.body, depth + 1)?;
                writeln!(f, "{pad}}}")?;
            }
            Node::Break(v) => write_args(f, "break", v)?,
            Node::Continue(v) => write_args(f, "continue", v)?,
            Node::Yield(v) => write_args(f, "yield", v)?,
        }
    }
    Ok(())
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(f, "fn {} {{", self.name)?;
        if !self.float_controls.is_default() {
            writeln!(f, "    float_controls {}", self.float_controls)?;
        }
        if self.volatile_memory {
            writeln!(f, "    volatile_memory")?;
        }
        if !self.readonly_buffers.is_empty() {
            write!(f, "    readonly_buffers")?;
            for b in &self.readonly_buffers {
                write!(f, " {b}")?;
            }
            writeln!(f)?;
        }
        for (k, t) in self.vars.iter().enumerate() {
            writeln!(f, "    var ${k}:{t}")?;
        }
        write_block(f, self, &self.body, 1)?;
        writeln!(f, "}}")
    }
}

impl fmt::Display for Shader {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            f,
            "shader local_size {} {} {} shared {} local {} push {}",
            self.local_size[0],
            self.local_size[1],
            self.local_size[2],
            self.shared_size,
            self.func.local_mem_size,
            self.push_size
        )?;
        write!(f, "{}", self.func)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consts_collects_constants_at_any_depth() {
        let s = crate::parse::parse_shader(
            "shader local_size 1 1 1 shared 0 local 0 push 0
            %0:i32 = const 4
            %1:i32x2 = const 3, 5
            %2:b1 = const true
            %3:i32 = sysval local_invocation_index
            if %2 {
                %4:i32x2 = const 7, 7
                store ssbo[0] %0, %4 align 4
            }
            store ssbo[0] %3, %1 align 4",
        )
        .unwrap();
        let c = s.func.consts();
        assert_eq!(c.get(Value(0)), Some(&[4u64][..]));
        assert_eq!(c.get(Value(1)), Some(&[3u64, 5][..]));
        assert_eq!(c.splat(Value(1)), None, "components differ");
        assert_eq!(c.splat(Value(2)), Some(1));
        assert!(!c.contains(Value(3)), "a sysval is not a constant");
        assert_eq!(c.splat(Value(4)), Some(7), "defined inside the if");
    }

    #[test]
    fn consts_are_stored_flat_and_a_value_recorded_again_takes_the_new_components() {
        // 1,000 constants of 1-4 components among 3,000 values: the storage is one table
        // entry per value and the components plus one length word per constant (at most
        // twice that with the arrays' growth), not an allocation per constant.
        let mut f = Function::new("main");
        let mut comps = 0;
        for i in 0..3000u32 {
            let n = (i % 4) as u8 + 1;
            let v = f.new_value(Type::int(32).vec(n));
            if i % 3 == 0 {
                comps += n as usize + 1;
                f.body.push(Node::Instr(Instr::new(
                    Some(v),
                    Op::Const((0..u64::from(n)).map(|k| u64::from(i) + k).collect()),
                )));
            }
        }
        let mut c = f.consts();
        for i in 0..3000u32 {
            let n = u64::from(i % 4) + 1;
            let want: Vec<u64> = (0..n).map(|k| u64::from(i) + k).collect();
            let got = c.get(Value(i));
            assert_eq!(got, (i % 3 == 0).then_some(&want[..]), "value %{i}");
        }
        let bound = 2 * (3000 * 4 + comps * 8);
        assert!(
            c.heap_bytes() <= bound,
            "{} bytes for 1,000 constants (bound {bound})",
            c.heap_bytes()
        );
        c.insert(Value(3), vec![9, 9]);
        assert_eq!(c.get(Value(3)), Some(&[9u64, 9][..]));
        assert_eq!(c.splat(Value(3)), Some(9));
        c.insert(Value(5000), vec![1]);
        assert_eq!(
            c.get(Value(5000)),
            Some(&[1u64][..]),
            "past the table: it grows"
        );
        assert!(!c.contains(Value(4999)));
    }
}
