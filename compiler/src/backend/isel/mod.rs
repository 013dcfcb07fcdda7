//! Instruction selection: Ferrite IR -> LIR at one SIMD width.
//!
//! Assumes what the middle passes produce (see the module docs of `backend`): 32-bit
//! integers and floats, booleans of any size held as 32-bit 0 / ~0, IO lowered to byte
//! offsets. Vectors are accepted everywhere (component c of a value lives `c x W x 4`
//! bytes into its register), so scalarization is not required.

use super::lir::*;
use super::subgroup::{self, LaneFn};
use super::{descriptor, narrow, wide, BackendError};
use crate::hash::HashMap;
use crate::hw::HwFacts;
use crate::ir::{self, AluOp, AtomicOp, ImageOp, Kind, Node, Op, Space, SysVal};
use crate::kernel::CurbeLayout;
use ferrite_isa::{CondMod, MathFunction, Opcode, Type};

mod alu;
mod image;
mod memory;
mod private;
pub(super) use memory::push_gathers;
mod sysval;

/// The `cmp` of an ordered comparison op (and `Fneu`, the unordered `!=`, which `.nz`
/// gives as it is: a NaN compares not-equal): the operand type out of `tys`, the operand
/// size's signed, unsigned and float hardware types (W/UW/HF, D/UD/F, Q/UQ/DF), and the
/// condition. `None` for ops that are no single `cmp`.
pub(in crate::backend) fn compare(op: AluOp, tys: [Type; 3]) -> Option<(Type, CondMod)> {
    use AluOp::*;
    let [sint, uint, float] = tys;
    Some(match op {
        Ieq => (sint, CondMod::Z),
        Ine => (sint, CondMod::Nz),
        Ilt => (sint, CondMod::L),
        Ige => (sint, CondMod::Ge),
        Ult => (uint, CondMod::L),
        Uge => (uint, CondMod::Ge),
        Feq => (float, CondMod::Z),
        Flt => (float, CondMod::L),
        Fle => (float, CondMod::Le),
        Fgt => (float, CondMod::G),
        Fge => (float, CondMod::Ge),
        Fneu => (float, CondMod::Nz),
        _ => return None,
    })
}

#[derive(Clone, Debug)]
enum Val {
    Imm(Vec<u64>),
    /// Component 0 and the distance in bytes between components.
    Reg(Opnd, u32),
}

pub struct Isel<'a> {
    pub prog: Program,
    pub w: u8,
    pub layout: &'a CurbeLayout,
    pub hw: &'a HwFacts,
    pub local_size: [u32; 3],
    /// Bytes of private (`local`) memory per invocation.
    pub local_mem_size: u32,
    pub(super) func: &'a ir::Function,
    vals: Vec<Option<Val>>,
    /// Results and parameters of the enclosing loops (for `break` / `continue`).
    loops: Vec<(Vec<ir::Value>, Vec<ir::Value>)>,
    /// The lane numbers 0..W (dwords), computed where first needed and reused while that
    /// point dominates (see `block`).
    lane: Option<Opnd>,
    /// The lanes' byte offsets `c * 4` and `c * 8` (UW), scoped like `lane` (see
    /// [`Isel::lane_bytes`]).
    lane_bytes: [Option<Opnd>; 2],
    /// Binding-table indices of descriptor-array elements by (index value, count, base),
    /// scoped like `lane` (see `descriptor::uniform_index`).
    pub(super) desc_index: HashMap<(ir::Value, u32, u32), Opnd>,
    /// What the f64 divisions by one divisor operand share (`wide::recip`), scoped like
    /// `lane`.
    recips: HashMap<Opnd, wide::Recip>,
    /// The full-width DF 1.0 the reciprocals' Newton steps read, scoped like `lane`.
    df_one: Option<Opnd>,
    /// What f64 sqrt and inversesqrt of one operand share (`wide::root`), scoped like
    /// `lane`.
    roots: HashMap<Opnd, wide::Root>,
    pub uses_barrier: bool,
    /// The surface a descriptor-array access is being selected for (see `descriptor`).
    indexed_surface: Option<Surface>,
    /// The A64 address of a buffer access past the binding table being selected (see
    /// `descriptor::table_access`).
    pub(super) table_address: Option<Opnd>,
    /// Set while a uniform instruction is selected (see `uniform_alu`): the builder emits
    /// at exec size 1 with `WE_all`.
    scalar: bool,
    /// Select uniform values per channel like any other (see `BackendOptions::no_uniform`).
    pub no_uniform: bool,
    /// The `SubgroupSize` the shader sees: the SIMD width, or the reported size when the
    /// stage treats it as an API constant (see `SubgroupWidth::Reported`).
    pub subgroup_size: u32,
    /// Per value: every use is an ALU source (see `uniform_alu`).
    alu_uses_only: Vec<bool>,
    /// Per value: something reads it (an atomic's unused result is not returned).
    used: Vec<bool>,
    /// The operand of each 32-bit `fneg` (folded into `ffma` sources, see `alu_src`).
    fneg_of: HashMap<ir::Value, ir::Value>,
    /// 64-bit integers built from dwords and read as dwords (see `dword_pairs`).
    dwords: DwordPairs,
    /// Components of 8/16-bit loads that sit inside a loaded dword, by (value, component):
    /// the region that reads the byte or word in place (see `narrow::narrow_load`).
    pub(super) narrow_parts: HashMap<(ir::Value, usize), Opnd>,
    /// Widened 8/16-bit integers (see `widenings`).
    pub(super) widened: HashMap<ir::Value, (ir::Value, bool)>,
    /// Shifts by whole bytes (see `byte_shifts`).
    pub(super) byte_shifts: HashMap<ir::Value, (ir::Value, u32)>,
    /// The sources of each 64-bit `vec` (read in place by 64-bit stores, see `wide_vecs`).
    wide_vec_srcs: HashMap<ir::Value, Vec<ir::Value>>,
    /// The sources of each 32-bit `vec` an image op reads (see `image::image_vecs`).
    image_vec_srcs: HashMap<ir::Value, Vec<ir::Value>>,
    /// `if`s and loops around the instruction being selected: at 0 every dispatched
    /// channel is live (see `subgroup::sg_first_lane`).
    pub(super) cf_depth: u32,
    /// Shuffle indices that are a function of the channel number (`subgroup::lane_fns`).
    pub(super) lane_fns: HashMap<ir::Value, LaneFn>,
    /// The rows of private memory kept in registers (`private::register_rows`), None to
    /// keep it in scratch; set by [`Isel::new`], cleared to keep scratch.
    pub private_rows: Option<u32>,
    /// The register array of private memory (`private`), made by [`Isel::run`].
    private_regs: Option<private::RegArray>,
    /// Word indices of table offsets and the `vec`s stored to private memory
    /// (`private::table_indices`).
    table_indices: private::TableIndices,
}

/// The operand of every 32-bit float `fneg`.
fn fnegs(f: &ir::Function) -> HashMap<ir::Value, ir::Value> {
    let mut m = HashMap::default();
    f.for_each_node(&mut |n| {
        if let Node::Instr(ir::Instr {
            dst: Some(d),
            op: Op::Alu(AluOp::Fneg, s),
            ..
        }) = n
        {
            if f.ty(*d) == ir::Type::F32 {
                m.insert(*d, s[0]);
            }
        }
    });
    m
}

/// The sources of every 64-bit `vec`. A 64-bit store's message payload holds each component's
/// low dwords and then its high dwords (`wide::store64`), not the register layout of a
/// vector, so the store reads the components from the `vec`'s sources: one copy into the
/// payload instead of a copy into the vector and another into the payload (the vector's
/// copies have no reader left and the LIR's dead-code elimination removes them).
fn wide_vecs(f: &ir::Function) -> HashMap<ir::Value, Vec<ir::Value>> {
    vec_sources(f, |d| wide::is_wide(f.ty(d)))
}

/// The sources of each `vec` whose result `keep` accepts: the components a message payload
/// can take straight from them (see `wide_vecs` and `image::image_vecs`).
pub(super) fn vec_sources(
    f: &ir::Function,
    keep: impl Fn(ir::Value) -> bool,
) -> HashMap<ir::Value, Vec<ir::Value>> {
    let mut m = HashMap::default();
    f.for_each_node(&mut |n| {
        if let Node::Instr(ir::Instr {
            dst: Some(d),
            op: Op::Vec(s),
            ..
        }) = n
        {
            if keep(*d) {
                m.insert(*d, s.clone());
            }
        }
    });
    m
}

/// 64-bit integers as dword pairs: the words `(lo, hi)` of each one built from two 32-bit
/// ones (`ir::packed_words`, the shape of pack64 and packDouble2x32), selected as a dword
/// move into each half instead of two widening moves, a 64-bit shift and a 64-bit `or`;
/// and the operand of each `ushr` by 32, whose 32-bit narrowing (unpack's high word) is
/// that operand's high dword. The 64-bit instructions then have no reader (the LIR's
/// dead-code elimination removes them).
fn dword_pairs(f: &ir::Function) -> DwordPairs {
    let mut defs = HashMap::default();
    f.for_each_node(&mut |n| {
        if let Node::Instr(ir::Instr {
            dst: Some(d),
            op:
                op @ (Op::Const(_)
                | Op::Alu(AluOp::Ior | AluOp::Ishl | AluOp::Ushr | AluOp::U2u, _)),
            ..
        }) = n
        {
            defs.insert(*d, op.clone());
        }
    });
    let wide = |x: ir::Value| f.ty(x) == ir::Type::int(64);
    let packs = defs
        .keys()
        .filter(|x| wide(**x))
        .filter_map(|&x| Some((x, ir::packed_words(x, |v| defs.get(&v), |v| f.ty(v))?)))
        .collect();
    let highs = defs
        .iter()
        .filter_map(|(&d, op)| match op {
            Op::Alu(AluOp::Ushr, s)
                if wide(d) && defs.get(&s[1]).and_then(Op::const_splat) == Some(32) =>
            {
                Some((d, s[0]))
            }
            _ => None,
        })
        .collect();
    DwordPairs { packs, highs }
}

/// The 32-bit `ushr`/`ishr` of a value by a constant multiple of 8 below 32: (operand, byte
/// offset). Narrowed to 8 or 16 bits (unpack8/unpack16, `bitcast_regroup`), such a shift
/// is byte or word k of its operand's dwords (see `narrow_parts`).
fn byte_shifts(f: &ir::Function) -> HashMap<ir::Value, (ir::Value, u32)> {
    let mut consts = HashMap::default();
    let mut shifts = Vec::new();
    f.for_each_node(&mut |n| match n {
        Node::Instr(ir::Instr {
            dst: Some(d),
            op: op @ Op::Const(_),
            ..
        }) => {
            consts.insert(*d, op.const_splat());
        }
        Node::Instr(ir::Instr {
            dst: Some(d),
            op: Op::Alu(AluOp::Ushr | AluOp::Ishr, s),
            ..
        }) if f.ty(*d) == ir::Type::I32 => shifts.push((*d, s[0], s[1])),
        _ => {}
    });
    shifts
        .into_iter()
        .filter_map(|(d, x, c)| match consts.get(&c).copied().flatten() {
            Some(k) if k % 8 == 0 && k < 32 => Some((d, (x, k as u32 / 8))),
            _ => None,
        })
        .collect()
}

/// The 8/16-bit integer each 32-bit `i2i` (true) or `u2u` (false) widens, by its result
/// (also through a 32-bit integer `bitcast`, GLSL's `int(uint)`). A 32-bit multiply of two
/// such values reads them in place (see `narrow::widened_mul`).
fn widenings(f: &ir::Function) -> HashMap<ir::Value, (ir::Value, bool)> {
    let mut m = HashMap::default();
    let int32 = |t: ir::Type| t.kind == Kind::Int && t.bits == 32;
    f.for_each_node(&mut |n| match n {
        Node::Instr(ir::Instr {
            dst: Some(d),
            op: Op::Alu(op @ (AluOp::I2i | AluOp::U2u), s),
            ..
        }) => {
            let st = f.ty(s[0]);
            if int32(f.ty(*d)) && st.kind == Kind::Int && st.bits <= 16 {
                m.insert(*d, (s[0], *op == AluOp::I2i));
            }
        }
        // Definitions come before their uses in program order.
        Node::Instr(ir::Instr {
            dst: Some(d),
            op: Op::Alu(AluOp::Bitcast, s),
            ..
        }) if int32(f.ty(*d)) && f.ty(*d) == f.ty(s[0]) => {
            if let Some(&w) = m.get(&s[0]) {
                m.insert(*d, w);
            }
        }
        _ => {}
    });
    m
}

/// See `dword_pairs`.
#[derive(Default)]
pub(super) struct DwordPairs {
    packs: HashMap<ir::Value, (ir::Value, ir::Value)>,
    highs: HashMap<ir::Value, ir::Value>,
}

/// Per value, whether it is used, and only as a source of ALU instructions. A uniform value
/// that feeds a message (store data, an address) or a loop/if edge would need a broadcast
/// `mov` there, costing what computing it once per thread saves.
fn alu_uses_only(f: &ir::Function) -> Vec<bool> {
    let all = f.use_counts();
    let mut alu = vec![0u32; all.len()];
    f.for_each_node(&mut |n| {
        if let Node::Instr(ir::Instr {
            op: Op::Alu(_, srcs),
            ..
        }) = n
        {
            for s in srcs {
                alu[s.0 as usize] += 1;
            }
        }
    });
    all.iter()
        .zip(&alu)
        .map(|(a, b)| *a > 0 && a == b)
        .collect()
}

type Res<T> = Result<T, BackendError>;

/// `imin`/`imax`/`umin`/`umax`/`fmin`/`fmax` as `sel` with a conditional modifier, shared by
/// the 16-, 32- and 64-bit selection: `tys` are the operand size's signed, unsigned and
/// float hardware types (W/UW/HF, D/UD/F, Q/UQ/DF).
pub(super) fn min_max(b: &mut Builder, op: AluOp, d: Opnd, s: &[Opnd], tys: [Type; 3]) {
    use AluOp::*;
    let ty = match op {
        Imin | Imax => tys[0],
        Umin | Umax => tys[1],
        _ => tys[2],
    };
    let cm = if matches!(op, Imin | Umin | Fmin) {
        CondMod::L
    } else {
        CondMod::Ge
    };
    b.alu2(Opcode::Sel, d.retype(ty), s[0].retype(ty), s[1].retype(ty))
        .cmod = cm;
}

/// `ineg`/`iabs`/`fneg`/`fabs` as a `mov` with a source modifier, shared by the 16-, 32- and
/// 64-bit selection: `tys` are the operand size's signed and float hardware types.
pub(super) fn neg_abs(b: &mut Builder, op: AluOp, d: Opnd, s: &[Opnd], tys: [Type; 2]) {
    use AluOp::*;
    let t = if matches!(op, Fneg | Fabs) {
        tys[1]
    } else {
        tys[0]
    };
    let x = s[0].retype(t);
    let x = if matches!(op, Ineg | Fneg) {
        x.negate()
    } else {
        x.absolute()
    };
    b.mov(d.retype(t), x);
}

/// `iadd`/`isub`/`imul`/`fadd`/`fsub`/`fmul` on the hardware type `t`: `add` (of the
/// negated second source for a subtraction) or `mul`, shared by the 16-, 32- and 64-bit
/// selection.
pub(super) fn add_sub_mul(b: &mut Builder, op: AluOp, d: Opnd, s: &[Opnd], t: Type) {
    use AluOp::*;
    let y = if matches!(op, Isub | Fsub) {
        s[1].retype(t).negate()
    } else {
        s[1].retype(t)
    };
    let o = if matches!(op, Imul | Fmul) {
        Opcode::Mul
    } else {
        Opcode::Add
    };
    b.alu2(o, d.retype(t), s[0].retype(t), y);
}

/// `iand`/`ior`/`ixor`/`inot` on the unsigned hardware type `u` of the operand size, shared
/// by the 16-, 32- and 64-bit selection.
pub(super) fn logic(b: &mut Builder, op: AluOp, d: Opnd, s: &[Opnd], u: Type) {
    let o = match op {
        AluOp::Iand => Opcode::And,
        AluOp::Ior => Opcode::Or,
        AluOp::Ixor => Opcode::Xor,
        _ => {
            b.alu1(Opcode::Not, d.retype(u), s[0].retype(u));
            return;
        }
    };
    b.alu2(o, d.retype(u), s[0].retype(u), s[1].retype(u));
}

fn unsupported(what: impl Into<String>) -> BackendError {
    BackendError::Unsupported(what.into())
}

/// The hardware type of an IR type's components.
pub fn hw_ty(t: ir::Type) -> Res<Type> {
    match (t.kind, t.bits) {
        (Kind::Int, 32) => Ok(Type::D),
        (Kind::Float, 32) => Ok(Type::F),
        (Kind::Int, 64) => Ok(Type::Q),
        (Kind::Float, 64) => Ok(Type::DF),
        // Booleans are 32-bit 0 / ~0 in the back end, also those of 64-bit comparisons
        // (see `wide`); 16-bit booleans (of 8/16-bit comparisons) are 0 / 0xFFFF words in
        // a dword slot, like the other 16-bit values (see `narrow`).
        (Kind::Bool, 1) | (Kind::Bool, 32) | (Kind::Bool, 64) => Ok(Type::D),
        (Kind::Bool, 16) => Ok(Type::W),
        (Kind::Int, 16) => Ok(Type::W),
        (Kind::Int, 8) => Ok(Type::B),
        (Kind::Float, 16) => Ok(Type::HF),
        _ => Err(unsupported(format!("type {t} in the back end"))),
    }
}

impl<'a> Isel<'a> {
    pub fn new(
        shader: &'a ir::Shader,
        w: u8,
        layout: &'a CurbeLayout,
        hw: &'a HwFacts,
    ) -> Isel<'a> {
        Isel {
            prog: Program::default(),
            w,
            layout,
            hw,
            local_size: shader.local_size,
            local_mem_size: shader.func.local_mem_size.next_multiple_of(4),
            func: &shader.func,
            vals: vec![None; shader.func.values.len()],
            loops: Vec::new(),
            lane: None,
            lane_bytes: [None; 2],
            uses_barrier: false,
            indexed_surface: None,
            desc_index: HashMap::default(),
            recips: HashMap::default(),
            df_one: None,
            roots: HashMap::default(),
            table_address: None,
            scalar: false,
            no_uniform: false,
            subgroup_size: u32::from(w),
            alu_uses_only: alu_uses_only(&shader.func),
            used: shader.func.use_counts().iter().map(|c| *c > 0).collect(),
            fneg_of: fnegs(&shader.func),
            dwords: dword_pairs(&shader.func),
            narrow_parts: HashMap::default(),
            byte_shifts: byte_shifts(&shader.func),
            widened: widenings(&shader.func),
            wide_vec_srcs: wide_vecs(&shader.func),
            image_vec_srcs: image::image_vecs(&shader.func),
            cf_depth: 0,
            lane_fns: subgroup::lane_fns(&shader.func),
            private_rows: private::register_rows(&shader.func, u32::from(w), hw),
            private_regs: None,
            table_indices: private::table_indices(&shader.func),
        }
    }

    pub(super) fn b(&mut self) -> Builder<'_> {
        let mut b = Builder::new(&mut self.prog, if self.scalar { 1 } else { self.w });
        b.we_all = self.scalar;
        b
    }

    /// Defines `v` as a uniform value: one copy per thread (a GRF whatever the SIMD width),
    /// read by every channel as a scalar region `<0;1,0>`. Whatever writes it must run at
    /// exec size 1 with `WE_all`, so that channel 0 holds the value even where channel 0 is
    /// disabled by control flow.
    pub(super) fn def_scalar(&mut self, v: ir::Value) -> Res<Opnd> {
        let t = self.func.ty(v);
        let ty = hw_ty(t)?;
        let r = Builder::new(&mut self.prog, 1)
            .vreg(ty, t.comps as u32)
            .scalar();
        self.vals[v.0 as usize] = Some(Val::Reg(r, ty.size()));
        Ok(r)
    }

    /// Component `c` of source `v` of an `op`. An `ffma` reads the operand of an `fneg` with
    /// the negate source modifier instead of the `fneg`'s result (the middle end's `fuse_mad`
    /// creates such `fneg`s for `a * b - c`); the `fneg` then has no reader and the LIR's
    /// dead-code elimination removes it.
    fn alu_src(&mut self, op: AluOp, v: ir::Value, c: usize) -> Res<Opnd> {
        if op == AluOp::Ffma {
            if let Some(&x) = self.fneg_of.get(&v) {
                let o = self.comp(x, c)?;
                if !o.is_imm() {
                    return Ok(o.negate());
                }
            }
        }
        self.comp(v, c)
    }

    /// Whether the ALU instruction `op srcs -> d` computes a uniform value that is best
    /// computed once per thread: one read only by ALU instructions (see `alu_uses_only`), a
    /// 32-bit scalar (not an 8/16- or 64-bit type, whose
    /// selection has its own region rules) whose sources are all uniform already, i.e.
    /// immediates or scalar regions (push constants, workgroup ids, the driver register, or
    /// earlier uniform results). The sources being scalar regions written with `WE_all`
    /// (or payload) is what makes channel 0 valid; the IR's uniformity alone would not be
    /// enough, as a per-channel register written under a mask may hold garbage in channel 0.
    fn uniform_alu(&mut self, d: ir::Value, srcs: &[ir::Value]) -> Res<bool> {
        let plain = |t: ir::Type| !narrow::is_narrow(t) && !wide::is_wide(t) && t.comps == 1;
        if !self.alu_uses_only[d.0 as usize]
            || !plain(self.func.ty(d))
            || !srcs.iter().all(|v| plain(self.func.ty(*v)))
        {
            return Ok(false);
        }
        for v in srcs {
            let o = self.comp(*v, 0)?;
            if !(o.is_imm() || o.stride == 0) {
                return Ok(false);
            }
        }
        Ok(!srcs.is_empty())
    }

    pub(super) fn comp(&mut self, v: ir::Value, c: usize) -> Res<Opnd> {
        let ty = hw_ty(self.func.ty(v))?;
        match self.vals.get(v.0 as usize).cloned().flatten() {
            Some(Val::Imm(bits)) => {
                let b = bits.get(c).or(bits.first()).copied().unwrap_or(0);
                let b = if self.func.ty(v).is_bool() && b & 1 != 0 {
                    0xFFFF_FFFF
                } else if ty.size() == 8 {
                    b
                } else {
                    b & 0xFFFF_FFFF
                };
                Ok(Opnd::imm(ty, b))
            }
            Some(Val::Reg(r, stride)) => {
                let mut o = r.offset(stride * c as u32).retype(ty);
                if narrow::is_narrow(self.func.ty(v)) && o.stride != 0 {
                    o.stride = narrow::slot_stride(ty);
                }
                Ok(o)
            }
            None => Err(BackendError::Internal(format!(
                "{v} used before definition"
            ))),
        }
    }

    /// Component `c` of `v` in a register (immediates are copied).
    pub(super) fn comp_reg(&mut self, v: ir::Value, c: usize) -> Res<Opnd> {
        let o = self.comp(v, c)?;
        if o.is_imm() {
            let mut b = self.b();
            let t = b.vreg(o.ty, 1);
            b.mov(t, o);
            Ok(t)
        } else {
            Ok(o)
        }
    }

    pub(super) fn def_reg(&mut self, v: ir::Value) -> Res<Opnd> {
        let t = self.func.ty(v);
        let ty = hw_ty(t)?;
        let w = self.w;
        let r = if narrow::is_narrow(t) {
            // 8/16-bit values take a dword slot per lane (see `narrow`).
            let mut r = self.b().vreg(Type::UD, t.comps as u32).retype(ty);
            r.stride = narrow::slot_stride(ty);
            r
        } else {
            self.b().vreg(ty, t.comps as u32)
        };
        // 64-bit values take a qword per lane (see `wide`).
        let slot = if wide::is_wide(t) { 8 } else { 4 };
        self.vals[v.0 as usize] = Some(Val::Reg(r, slot * w as u32));
        Ok(r)
    }

    /// The destination of `i` when something reads it: an atomic's unused result is not
    /// asked for, so it has no register.
    pub(super) fn read_dst(&self, i: &ir::Instr) -> Option<ir::Value> {
        i.dst.filter(|d| self.used[d.0 as usize])
    }

    pub(super) fn dst_comp(&self, v: ir::Value, c: usize) -> Opnd {
        match &self.vals[v.0 as usize] {
            Some(Val::Reg(r, s)) => r.offset(s * c as u32),
            _ => unreachable!("destination defined by def_reg"),
        }
    }

    pub fn run(&mut self) -> Res<()> {
        if let Some(rows) = self.private_rows {
            self.private_regs = Some(self.reg_array(rows));
        }
        let body = self.func.body.clone();
        self.block(&body)?;
        let mut b = self.b();
        b.we_all = true;
        b.inst(
            LOp::Eot,
            Opnd::null(Type::UD),
            vec![Opnd::g(0, 0, Type::UD, 1)],
        );
        Ok(())
    }

    fn block(&mut self, blk: &[Node]) -> Res<()> {
        for n in blk {
            match n {
                Node::Instr(i) => self.instr(i)?,
                Node::If(i) => {
                    for r in &i.results {
                        self.def_reg(*r)?;
                    }
                    let c = self.comp(i.cond, 0)?;
                    let mut b = self.b();
                    b.flag_from(c);
                    b.control(LOp::If).pred = Some(Pred {
                        flag_sub: 0,
                        inverse: false,
                    });
                    // Values cached for the whole program (the lane numbers) that an arm
                    // computes exist only in that arm: a thread whose channels all skip it
                    // jumps over it.
                    let saved = self.scoped();
                    self.cf_depth += 1;
                    self.arm(&i.then_, &i.results)?;
                    self.restore_scoped(saved.clone());
                    if !i.else_.is_empty() {
                        self.b().control(LOp::Else);
                        self.arm(&i.else_, &i.results)?;
                        self.restore_scoped(saved);
                    }
                    self.cf_depth -= 1;
                    self.b().control(LOp::Endif);
                }
                Node::Loop(l) => {
                    for (p, _) in &l.params {
                        self.def_reg(*p)?;
                    }
                    for r in &l.results {
                        self.def_reg(*r)?;
                    }
                    let inits: Vec<ir::Value> = l.params.iter().map(|p| p.1).collect();
                    let pvals: Vec<ir::Value> = l.params.iter().map(|p| p.0).collect();
                    self.copies(&pvals, &inits)?;
                    self.b().control(LOp::Do);
                    // As for an if's arms: the body may break before it computes them.
                    let saved = self.scoped();
                    self.loops.push((l.results.clone(), pvals));
                    self.cf_depth += 1;
                    // A trailing `continue` needs only its copies: WHILE follows.
                    match l.body.split_last() {
                        Some((Node::Continue(args), head)) => {
                            self.block(head)?;
                            let ps = self.loops.last().map(|x| x.1.clone()).unwrap_or_default();
                            self.copies(&ps, args)?;
                        }
                        _ => self.block(&l.body)?,
                    }
                    self.loops.pop();
                    self.cf_depth -= 1;
                    self.restore_scoped(saved);
                    self.b().control(LOp::While);
                }
                Node::Break(args) => {
                    let rs = self.loops.last().map(|x| x.0.clone()).unwrap_or_default();
                    self.copies(&rs, args)?;
                    self.b().control(LOp::Break);
                }
                Node::Continue(args) => {
                    let ps = self.loops.last().map(|x| x.1.clone()).unwrap_or_default();
                    self.copies(&ps, args)?;
                    self.b().control(LOp::Cont);
                }
                Node::Yield(_) => {}
            }
        }
        Ok(())
    }

    fn arm(&mut self, blk: &[Node], results: &[ir::Value]) -> Res<()> {
        self.block(blk)?;
        if let Some(Node::Yield(vals)) = blk.last() {
            self.copies(results, vals)?;
        }
        Ok(())
    }

    /// Parallel copy `dsts[i] <- srcs[i]` (through temporaries when a source is a target).
    fn copies(&mut self, dsts: &[ir::Value], srcs: &[ir::Value]) -> Res<()> {
        let mut pending = Vec::new();
        let overlap = srcs.iter().any(|s| dsts.contains(s));
        for (d, s) in dsts.iter().zip(srcs) {
            let comps = self.func.ty(*d).comps as usize;
            for c in 0..comps {
                let src = narrow::slot(self.comp(*s, c)?);
                let dst = narrow::slot(self.dst_comp(*d, c)).retype(src.ty);
                if overlap {
                    let mut b = self.b();
                    let t = b.vreg(src.ty, 1);
                    b.mov(t, src);
                    pending.push((dst, t));
                } else {
                    self.b().mov(dst, src);
                }
            }
        }
        for (d, t) in pending {
            self.b().mov(d, t);
        }
        Ok(())
    }

    /// The values cached while their definition dominates (`lane`, `lane_bytes`,
    /// `desc_index`, `recips`, `df_one`, `roots`), saved on entering an `if` arm or a loop
    /// body and put back after it: an arm or body may be skipped or left early, so what it
    /// computed does not exist after it.
    fn scoped(&self) -> Scoped {
        Scoped {
            lane: self.lane,
            lane_bytes: self.lane_bytes,
            desc_index: self.desc_index.clone(),
            recips: self.recips.clone(),
            df_one: self.df_one,
            roots: self.roots.clone(),
        }
    }

    fn restore_scoped(&mut self, s: Scoped) {
        self.lane = s.lane;
        self.lane_bytes = s.lane_bytes;
        self.desc_index = s.desc_index;
        self.recips = s.recips;
        self.df_one = s.df_one;
        self.roots = s.roots;
    }

    /// f64 `fdiv` / `frcp`: the divisor's reciprocal (`wide::recip`) is computed once per
    /// divisor operand and shared by `1 / y` and every `x / y` it dominates.
    fn div64(&mut self, op: AluOp, d: Opnd, s: &[Opnd]) {
        let y = s[s.len() - 1].retype(Type::DF);
        let r = match self.recips.get(&y) {
            Some(r) => *r,
            None => {
                let mut one = self.df_one;
                let fc = &self.func.float_controls;
                let nearest_denormals =
                    !fc.any_rtz() && fc.mode(64).denorm != ir::Denorm::FlushToZero;
                let r = wide::recip(&mut self.b(), y, &mut one, nearest_denormals);
                self.df_one = one;
                self.recips.insert(y, r);
                r
            }
        };
        let mut b = self.b();
        if op == AluOp::Fdiv {
            wide::quotient(&mut b, d, s[0].retype(Type::DF), &r);
        } else {
            wide::reciprocal(&mut b, d, &r);
        }
    }

    /// f64 `sqrt` / `inversesqrt`: the operand's reduction and refined inverse square root
    /// (`wide::root`) are computed once per operand and shared by both where they dominate.
    fn root64(&mut self, op: AluOp, d: Opnd, s: &[Opnd]) {
        let x = s[0].retype(Type::DF);
        let rt = match self.roots.get(&x) {
            Some(rt) => *rt,
            None => {
                let rt = wide::root(&mut self.b(), x);
                self.roots.insert(x, rt);
                rt
            }
        };
        wide::sqrt(&mut self.b(), d, &rt, op == AluOp::Frsq);
    }

    /// Selects `i` at the A64 address `table_address` holds (`descriptor::table_access`).
    pub(super) fn instr_at_table_address(&mut self, i: &ir::Instr) -> Res<()> {
        self.instr(i)
    }

    fn instr(&mut self, i: &ir::Instr) -> Res<()> {
        let w = self.w as u32;
        if self.table_address.is_none() && descriptor::table_access(&i.op, self.hw).is_some() {
            return self.table_access(i);
        }
        // A 64-bit atomic on a descriptor-array element needs no uniform index: it is an A64
        // message on a per-channel address (`buffer_atomic64`).
        let wide_atomic = atomic64_buffers(self.func, i).is_some();
        if self.indexed_surface.is_none() && self.table_address.is_none() && !wide_atomic {
            if let Some(x) = descriptor::indexed_space(&i.op) {
                return self.indexed_access(i, x);
            }
        }
        match &i.op {
            Op::Const(bits) => {
                let d = i.dst.expect("const has a destination");
                self.vals[d.0 as usize] = Some(Val::Imm(bits.clone()));
            }
            Op::Alu(op, srcs) => {
                let d = i.dst.expect("alu has a destination");
                let dt = self.func.ty(d);
                // A select's operand type is its values' (the condition is any boolean).
                let st = self.func.ty(srcs[if *op == AluOp::Bcsel { 1 } else { 0 }]);
                if !self.no_uniform && self.uniform_alu(d, srcs)? {
                    self.def_scalar(d)?;
                    self.scalar = true;
                    let s: Vec<Opnd> = srcs
                        .iter()
                        .map(|v| self.alu_src(*op, *v, 0))
                        .collect::<Res<_>>()?;
                    let dst = self.dst_comp(d, 0);
                    let r = self.alu(*op, dst, &s, st, dt);
                    self.scalar = false;
                    return r;
                }
                self.def_reg(d)?;
                let in_place = self.reads_in_place(*op, st, dt);
                for c in 0..dt.comps as usize {
                    let s: Vec<Opnd> = srcs
                        .iter()
                        .map(|v| {
                            let n = self.func.ty(*v).comps as usize;
                            let k = if n == 1 { 0 } else { c };
                            match self.narrow_parts.get(&(*v, k)) {
                                Some(p) if in_place => Ok(*p),
                                _ => self.alu_src(*op, *v, k),
                            }
                        })
                        .collect::<Res<_>>()?;
                    let dst = self.dst_comp(d, c);
                    if *op == AluOp::Imul && self.widened_mul(dst, srcs, c)? {
                        continue;
                    }
                    if *op == AluOp::Bcsel && narrow::is_narrow(dt) {
                        self.narrow_bcsel(dst, &s);
                    } else if (narrow::is_narrow(st) && wide::is_wide(dt))
                        || (wide::is_wide(st) && narrow::is_narrow(dt))
                    {
                        self.narrow_wide_convert(*op, dst, s[0], st, dt)?;
                    } else if narrow::is_narrow(dt) || narrow::is_narrow(st) {
                        self.narrow_alu(*op, dst, &s, st, dt)?;
                        if matches!(op, AluOp::I2i | AluOp::U2u) && st == ir::Type::I32 {
                            self.truncated_part(d, srcs[0], dt)?;
                        }
                    } else if let Some(&(lo, hi)) = self.dwords.packs.get(&d) {
                        let (l, h) = (self.comp(lo, 0)?, self.comp(hi, 0)?);
                        let mut b = self.b();
                        b.mov(wide::lo(dst), l.retype(Type::UD));
                        b.mov(wide::hi(dst), h.retype(Type::UD));
                    } else if let (Some(&x), AluOp::U2u | AluOp::I2i, 32) =
                        (self.dwords.highs.get(&srcs[0]), op, dt.bits)
                    {
                        let h = wide::hi(self.comp(x, 0)?);
                        self.b().mov(dst.retype(Type::UD), h);
                    } else if matches!(op, AluOp::Fdiv | AluOp::Frcp) && wide::is_wide(dt) {
                        self.div64(*op, dst, &s);
                    } else if matches!(op, AluOp::Fsqrt | AluOp::Frsq) && wide::is_wide(dt) {
                        self.root64(*op, dst, &s);
                    } else if wide::is_wide(st) || wide::is_wide(dt) {
                        let mut b = self.b();
                        wide::alu64(&mut b, *op, dst, &s, st, dt)?;
                    } else {
                        self.alu(*op, dst, &s, st, dt)?;
                    }
                }
            }
            Op::Vec(srcs) => {
                let d = i.dst.expect("vec has a destination");
                self.def_reg(d)?;
                for (c, s) in srcs.iter().enumerate() {
                    let o = narrow::slot(self.comp(*s, 0)?);
                    let dst = narrow::slot(self.dst_comp(d, c)).retype(o.ty);
                    self.b().mov(dst, o);
                    self.copy_part((*s, 0), (d, c));
                }
            }
            Op::Extract(v, c) => {
                let d = i.dst.expect("extract has a destination");
                match self.vals[v.0 as usize].clone() {
                    Some(Val::Imm(bits)) => {
                        let b = bits.get(*c as usize).copied().unwrap_or(0);
                        self.vals[d.0 as usize] = Some(Val::Imm(vec![b]));
                    }
                    _ => {
                        let o = self.comp(*v, *c as usize)?;
                        self.vals[d.0 as usize] = Some(Val::Reg(o, o.ty.size() * w));
                        self.copy_part((*v, *c as usize), (d, 0));
                    }
                }
            }
            Op::Insert(v, s, c) => {
                let d = i.dst.expect("insert has a destination");
                self.def_reg(d)?;
                for k in 0..self.func.ty(d).comps as usize {
                    let from = if k == *c as usize { (*s, 0) } else { (*v, k) };
                    let o = narrow::slot(self.comp(from.0, from.1)?);
                    let dst = narrow::slot(self.dst_comp(d, k)).retype(o.ty);
                    self.b().mov(dst, o);
                    self.copy_part(from, (d, k));
                }
            }
            Op::Swizzle(v, sw) => {
                let d = i.dst.expect("swizzle has a destination");
                self.def_reg(d)?;
                for (k, c) in sw.iter().enumerate() {
                    let o = narrow::slot(self.comp(*v, *c as usize)?);
                    let dst = narrow::slot(self.dst_comp(d, k)).retype(o.ty);
                    self.b().mov(dst, o);
                    self.copy_part((*v, *c as usize), (d, k));
                }
            }
            Op::LoadVar(_) | Op::StoreVar(..) => {
                return Err(unsupported("function variables (run vars-to-SSA first)"))
            }
            Op::Load {
                space,
                offset,
                align,
            } => {
                let d = i.dst.expect("load has a destination");
                let t = self.func.ty(d);
                hw_ty(t)?;
                // Push constants at constant offsets come from the CURBE registers; at dynamic
                // offsets from the push-constant surface like any buffer.
                if *space == Space::Push
                    && matches!(self.vals[offset.0 as usize], Some(Val::Imm(_)))
                {
                    return self.push_load(d, *offset);
                }
                if *space == Space::Push && memory::push_gathers(t) {
                    return self.push_gather(d, *offset);
                }
                if *space == Space::Local && self.private_regs.is_some() {
                    return self.private_load(d, *offset);
                }
                let surf = self.surface(*space)?;
                let addr = self.address(*space, *offset)?;
                let dst = self.def_reg(d)?;
                if wide::is_wide(t) {
                    let mut b = self.b();
                    wide::load64(
                        &mut b,
                        surf,
                        addr.retype(surf.addr_type()),
                        dst,
                        t.comps as u32,
                        8 * w,
                    );
                    return Ok(());
                }
                if narrow::is_narrow(t) {
                    return self.narrow_load(d, surf, addr, dst, t, *align);
                }
                self.b().inst(
                    LOp::UntypedRead {
                        surf,
                        comps: t.comps,
                        comp_stride: 4 * w,
                    },
                    dst.retype(Type::UD),
                    vec![addr.retype(surf.addr_type())],
                );
            }
            Op::Store {
                space,
                offset,
                value,
                align,
            } => {
                let t = self.func.ty(*value);
                hw_ty(t)?;
                if *space == Space::Local && self.private_regs.is_some() {
                    return self.private_store(*offset, *value, *align);
                }
                let surf = self.surface(*space)?;
                let addr = self.address(*space, *offset)?;
                if wide::is_wide(t) {
                    // A `vec`'s sources are its components (see `wide_vecs`).
                    let src: Vec<Opnd> = match self.wide_vec_srcs.get(value).cloned() {
                        Some(parts) => {
                            parts.iter().map(|p| self.comp(*p, 0)).collect::<Res<_>>()?
                        }
                        None => (0..t.comps as usize)
                            .map(|c| self.comp(*value, c))
                            .collect::<Res<_>>()?,
                    };
                    let mut b = self.b();
                    wide::store64(&mut b, surf, addr.retype(surf.addr_type()), &src);
                    return Ok(());
                }
                if narrow::is_narrow(t) {
                    let comps = (0..t.comps as usize)
                        .map(|c| self.comp(*value, c))
                        .collect::<Res<Vec<_>>>()?;
                    return self.narrow_store(surf, addr, comps, t, *align);
                }
                // Data must be one register holding all components.
                let data = match self.vals[value.0 as usize].clone() {
                    Some(Val::Reg(r, s)) if s == 4 * w => r,
                    _ => {
                        let mut b = self.b();
                        let r = b.vreg(Type::UD, t.comps as u32);
                        for c in 0..t.comps as usize {
                            let o = self.comp(*value, c)?;
                            self.b().mov(r.offset(c as u32 * 4 * w).retype(o.ty), o);
                        }
                        r
                    }
                };
                self.b().inst(
                    LOp::UntypedWrite {
                        surf,
                        comps: t.comps,
                        comp_stride: 4 * w,
                    },
                    Opnd::null(Type::UD),
                    vec![addr.retype(surf.addr_type()), data.retype(Type::UD)],
                );
            }
            Op::Atomic {
                op,
                space,
                offset,
                data,
            } => {
                let qword = data.iter().any(|v| wide::is_wide(self.func.ty(*v)))
                    || i.dst.is_some_and(|d| wide::is_wide(self.func.ty(d)));
                // A result nobody reads is not asked for: the message returns nothing
                // (`rlen` 0), as brw sends an atomic whose result is unused.
                let ret = self.read_dst(i);
                if qword
                    && self.table_address.is_none()
                    && matches!(space, Space::Ssbo(_) | Space::SsboArray(_))
                {
                    return self.buffer_atomic64(ret, *op, *space, *offset, data);
                }
                let surf = self.surface(*space)?;
                if qword && surf != Surface::A64 {
                    // Gen9 has 64-bit atomics only among the A64 messages.
                    return Err(unsupported(format!("64-bit atomics on {space}")));
                }
                let addr = self.address(*space, *offset)?;
                if qword {
                    return self.atomic64(ret, *op, addr, data, None);
                }
                let dst = match ret {
                    Some(d) => self.def_reg(d)?.retype(Type::UD),
                    None => Opnd::null(Type::UD),
                };
                if *op == AtomicOp::Load {
                    let dst = if dst.base == Base::Null {
                        self.b().vreg(Type::UD, 1)
                    } else {
                        dst
                    };
                    self.b().inst(
                        LOp::UntypedRead {
                            surf,
                            comps: 1,
                            comp_stride: 4 * w,
                        },
                        dst,
                        vec![addr.retype(surf.addr_type())],
                    );
                    return Ok(());
                }
                let hw_op = atomic_hw_op(*op)?;
                // Hardware order for CMPWR: (compare, new); the IR has (new, compare).
                let order: Vec<ir::Value> = if *op == AtomicOp::CmpXchg {
                    vec![data[1], data[0]]
                } else {
                    data.clone()
                };
                let mut srcs = vec![addr.retype(surf.addr_type())];
                // Constant data is written into the payload by lowering's copy: no register
                // of its own first.
                for v in &order {
                    srcs.push(self.comp(*v, 0)?.retype(Type::UD));
                }
                self.b().inst(
                    LOp::UntypedAtomic {
                        surf,
                        hw_op,
                        ndata: order.len() as u8,
                        qword: false,
                    },
                    dst,
                    srcs,
                );
            }
            Op::Image(op, r, srcs) => self.image(i.dst, *op, *r, srcs)?,
            Op::Subgroup(op, srcs) => {
                let d = i.dst.expect("subgroup operation has a destination");
                self.subgroup(*op, srcs, d)?;
            }
            Op::SysVal(s) => {
                let d = i.dst.expect("sysval has a destination");
                self.sysval(*s, d)?;
            }
            Op::BufferSize(Space::SsboArray(x) | Space::UboArray(x)) => {
                let d = i.dst.expect("buffer_size has a destination");
                self.indexed_buffer_size(d, *x)?;
            }
            Op::BufferSize(s) => {
                let d = i.dst.expect("buffer_size has a destination");
                let (Space::Ssbo(b) | Space::Ubo(b)) = *s else {
                    return Err(unsupported(format!("buffer_size {s}")));
                };
                let (reg, byte) = self
                    .layout
                    .size_slot(b)
                    .ok_or_else(|| BackendError::Internal(format!("no size dword for bti {b}")))?;
                let dst = self.def_reg(d)?;
                self.b()
                    .mov(dst.retype(Type::UD), Opnd::g(reg, byte, Type::UD, 0));
            }
            Op::Barrier {
                exec, semantics, ..
            } => {
                // A workgroup that fits in one thread runs as channels of that thread: a
                // workgroup barrier (in uniform control flow, as SPIR-V requires) needs no
                // gateway message, and the data port handles one thread's messages in
                // order, so a fence for workgroup (shared) memory alone is not needed
                // either; the scheduler keeps messages in program order. Mesa's brw drops
                // both in the same case.
                let one_thread = self.one_thread();
                let classes = semantics & ir::SEMANTICS_STORAGE_CLASSES;
                let workgroup_memory_only = classes != 0
                    && classes & !(ir::SEMANTICS_SUBGROUP_MEMORY | ir::SEMANTICS_WORKGROUP_MEMORY)
                        == 0;
                let fence =
                    (*semantics != 0 || exec.is_none()) && !(one_thread && workgroup_memory_only);
                if fence {
                    let mut b = self.b();
                    let t = b.vreg(Type::UD, 1);
                    b.at(8, 0, true)
                        .inst(LOp::Fence, t, vec![Opnd::g(0, 0, Type::UD, 1)]);
                }
                if exec.is_some_and(|e| e == ir::Scope::Workgroup) && !one_thread {
                    self.uses_barrier = true;
                    self.b()
                        .at(8, 0, true)
                        .inst(LOp::Barrier, Opnd::null(Type::UD), vec![]);
                }
            }
        }
        Ok(())
    }
}

/// The storage buffers (first binding-table index, element count) a 64-bit atomic on a
/// storage buffer or a descriptor array of them reaches, as binding-table indices; None for
/// any other instruction. Such atomics go through A64 messages at addresses the CURBE
/// carries.
pub(super) fn atomic64_buffers(f: &ir::Function, i: &ir::Instr) -> Option<Vec<u32>> {
    let Op::Atomic { space, data, .. } = &i.op else {
        return None;
    };
    let wide = data.iter().any(|v| wide::is_wide(f.ty(*v)))
        || i.dst.is_some_and(|d| wide::is_wide(f.ty(d)));
    match space {
        Space::Ssbo(b) if wide => Some(vec![*b]),
        Space::SsboArray(x) if wide => Some((x.base..x.base + x.count).collect()),
        _ => None,
    }
}

/// The data port's atomic operation code (docs/gen9.md 4.2) of an IR atomic; `Load` has
/// none (it is a plain read).
fn atomic_hw_op(op: AtomicOp) -> Res<u8> {
    Ok(match op {
        AtomicOp::And => 1,
        AtomicOp::Or => 2,
        AtomicOp::Xor => 3,
        AtomicOp::Xchg => 4,
        AtomicOp::Inc => 5,
        AtomicOp::Dec => 6,
        AtomicOp::Add => 7,
        AtomicOp::Sub => 8,
        AtomicOp::Smax => 10,
        AtomicOp::Smin => 11,
        AtomicOp::Umax => 12,
        AtomicOp::Umin => 13,
        AtomicOp::CmpXchg => 14,
        AtomicOp::Load => {
            return Err(BackendError::Internal(
                "an atomic load has no data-port operation".into(),
            ))
        }
    })
}
/// The caches of [`Isel`] scoped by control flow ([`Isel::scoped`]).
#[derive(Clone)]
struct Scoped {
    lane: Option<Opnd>,
    lane_bytes: [Option<Opnd>; 2],
    desc_index: HashMap<(ir::Value, u32, u32), Opnd>,
    recips: HashMap<Opnd, wide::Recip>,
    df_one: Option<Opnd>,
    roots: HashMap<Opnd, wide::Root>,
}
