//! Instruction selection: Ferrite IR -> LIR at one SIMD width.
//!
//! Assumes what the middle passes produce (see the module docs of `backend`): 32-bit
//! integers and floats, booleans of any size held as 32-bit 0 / ~0, IO lowered to byte
//! offsets. Vectors are accepted everywhere (component c of a value lives `c x W x 4`
//! bytes into its register), so scalarization is not required.

use super::lir::*;
use super::{descriptor, narrow, wide, BackendError};
use crate::hw::HwFacts;
use crate::ir::{self, AluOp, AtomicOp, ImageOp, Kind, Node, Op, Space, SysVal};
use crate::kernel::CurbeLayout;
use ferrite_isa::{CondMod, MathFunction, Opcode, Type};

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
    lane: Option<Opnd>,
    pub uses_barrier: bool,
    /// The surface a descriptor-array access is being selected for (see `descriptor`).
    indexed_surface: Option<Surface>,
    /// The A64 address of a buffer access past the binding table being selected (see
    /// `descriptor::table_access`).
    pub(super) table_address: Option<Opnd>,
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
            local_mem_size: shader.local_mem_size.next_multiple_of(4),
            func: &shader.func,
            vals: vec![None; shader.func.values.len()],
            loops: Vec::new(),
            lane: None,
            uses_barrier: false,
            indexed_surface: None,
            table_address: None,
        }
    }

    pub(super) fn b(&mut self) -> Builder<'_> {
        Builder::new(&mut self.prog, self.w)
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

    pub(super) fn dst_comp(&self, v: ir::Value, c: usize) -> Opnd {
        match &self.vals[v.0 as usize] {
            Some(Val::Reg(r, s)) => r.offset(s * c as u32),
            _ => unreachable!("destination defined by def_reg"),
        }
    }

    pub fn run(&mut self) -> Res<()> {
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
                    self.arm(&i.then_, &i.results)?;
                    if !i.else_.is_empty() {
                        self.b().control(LOp::Else);
                        self.arm(&i.else_, &i.results)?;
                    }
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
                    self.loops.push((l.results.clone(), pvals));
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

    pub(super) fn lane(&mut self) -> Opnd {
        if let Some(l) = self.lane {
            return l;
        }
        let w = self.w;
        let mut b = self.b();
        let lane = b.vreg(Type::D, 1);
        // Lane numbers as words (a V immediate needs a word destination), then dwords.
        let uw = b.vreg(Type::UW, 1);
        b.at(8, 0, true).mov(uw, Opnd::imm(Type::V, 0x7654_3210));
        if w >= 16 {
            b.at(8, 0, true)
                .alu2(Opcode::Add, uw.offset(16), uw, Opnd::imm(Type::UW, 8));
        }
        if w == 32 {
            b.at(16, 0, true)
                .alu2(Opcode::Add, uw.offset(32), uw, Opnd::imm(Type::UW, 16));
        }
        b.at(w, 0, true).mov(lane, uw);
        self.lane = Some(lane);
        lane
    }

    /// The subgroup id: the last dword of the per-thread CURBE register.
    fn subgroup_id(&self) -> Opnd {
        let byte = 4 * CurbeLayout::SUBGROUP_ID_DWORD;
        Opnd::g(self.layout.per_thread_reg(), byte, Type::D, 0)
    }

    fn sysval(&mut self, s: SysVal, dst: ir::Value) -> Res<()> {
        let w = self.w as u32;
        let drv = self.layout.driver_reg();
        let sgid = self.subgroup_id();
        let [sx, sy, sz] = self.local_size;
        match s {
            SysVal::SubgroupSize => {
                self.vals[dst.0 as usize] = Some(Val::Imm(vec![w as u64]));
                return Ok(());
            }
            SysVal::NumSubgroups => {
                let t = (sx * sy * sz).div_ceil(w);
                self.vals[dst.0 as usize] = Some(Val::Imm(vec![t as u64]));
                return Ok(());
            }
            _ => {}
        }
        let d = self.def_reg(dst)?;
        let st = 4 * w;
        match s {
            SysVal::SubgroupId => {
                self.b().mov(d, sgid);
            }
            SysVal::SubgroupInvocation => {
                let l = self.lane();
                self.b().mov(d, l);
            }
            SysVal::NumWorkgroups => {
                const NUM: u32 = CurbeLayout::NUM_WORKGROUPS_DWORD;
                for c in 0..3 {
                    self.b()
                        .mov(d.offset(c * st), Opnd::g(drv, 4 * (NUM + c), Type::D, 0));
                }
            }
            SysVal::WorkgroupId => self.workgroup_id(d)?,
            SysVal::LocalInvocationIndex => self.local_index(d),
            SysVal::LocalInvocationId => self.local_id(d),
            SysVal::GlobalInvocationId => {
                let wg = self.b().vreg(Type::D, 3);
                self.workgroup_id(wg)?;
                let lid = self.b().vreg(Type::D, 3);
                self.local_id(lid);
                let ls = self.local_size;
                for c in 0..3u32 {
                    let mut b = self.b();
                    b.alu2(
                        Opcode::Mul,
                        d.offset(c * st),
                        wg.offset(c * st),
                        Opnd::d(ls[c as usize] as i32),
                    );
                    b.alu2(
                        Opcode::Add,
                        d.offset(c * st),
                        d.offset(c * st),
                        lid.offset(c * st),
                    );
                }
            }
            SysVal::SubgroupSize | SysVal::NumSubgroups => unreachable!(),
        }
        Ok(())
    }

    fn workgroup_id(&mut self, d: Opnd) -> Res<()> {
        let st = 4 * self.w as u32;
        let drv = self.layout.driver_reg();
        for (c, dw) in [1u32, 6, 7].into_iter().enumerate() {
            let c = c as u32;
            self.b().alu2(
                Opcode::Add,
                d.offset(c * st),
                Opnd::g(0, 4 * dw, Type::D, 0),
                Opnd::g(drv, 4 * (CurbeLayout::BASE_WORKGROUP_DWORD + c), Type::D, 0),
            );
        }
        Ok(())
    }

    fn local_index(&mut self, d: Opnd) {
        let w = self.w as u32;
        let sgid = self.subgroup_id();
        let lane = self.lane();
        let mut b = self.b();
        b.alu2(Opcode::Shl, d, sgid, Opnd::d(w.trailing_zeros() as i32));
        b.alu2(Opcode::Add, d, d, lane);
    }

    fn local_id(&mut self, d: Opnd) {
        let st = 4 * self.w as u32;
        let [sx, sy, _] = self.local_size;
        let idx = self.b().vreg(Type::D, 1);
        self.local_index(idx);
        let (x, y, z) = (d, d.offset(st), d.offset(2 * st));
        // x = idx mod sx, y = (idx / sx) mod sy, z = idx / (sx*sy)
        self.udivmod(Some(x), None, idx, sx);
        let q = self.b().vreg(Type::D, 1);
        self.udivmod(None, Some(q), idx, sx);
        self.udivmod(Some(y), None, q, sy);
        self.udivmod(None, Some(z), idx, sx * sy);
    }

    /// Unsigned remainder / quotient by a constant.
    fn udivmod(&mut self, rem: Option<Opnd>, quot: Option<Opnd>, a: Opnd, k: u32) {
        let mut b = self.b();
        let (a, k) = (a.retype(Type::UD), k.max(1));
        if k.is_power_of_two() {
            if let Some(r) = rem {
                b.alu2(Opcode::And, r.retype(Type::UD), a, Opnd::ud(k - 1));
            }
            if let Some(q) = quot {
                b.alu2(
                    Opcode::Shr,
                    q.retype(Type::UD),
                    a,
                    Opnd::ud(k.trailing_zeros()),
                );
            }
        } else {
            if let Some(r) = rem {
                b.math(
                    MathFunction::IntMod,
                    r.retype(Type::UD),
                    vec![a, Opnd::ud(k)],
                );
            }
            if let Some(q) = quot {
                b.math(
                    MathFunction::IntDiv,
                    q.retype(Type::UD),
                    vec![a, Opnd::ud(k)],
                );
            }
        }
    }

    fn surface(&self, s: Space) -> Res<Surface> {
        if self.table_address.is_some() {
            return Ok(Surface::A64);
        }
        match s {
            Space::Ssbo(b) | Space::Ubo(b) if b <= self.hw.max_buffer_bti => {
                Ok(Surface::Bti(b as u8))
            }
            // Push constants at dynamic offsets (docs/dispatch-contract.md).
            Space::Push => match self.layout.push_bti {
                Some(b) if b <= self.hw.max_buffer_bti => Ok(Surface::Bti(b as u8)),
                _ => Err(BackendError::Internal(
                    "dynamic push-constant load without a push surface".into(),
                )),
            },
            Space::SsboArray(_) | Space::UboArray(_) => self.indexed_surface.ok_or_else(|| {
                BackendError::Internal(format!("{s} outside a descriptor-array access"))
            }),
            Space::Shared => Ok(Surface::Bti(self.hw.bti_slm)),
            // Private memory lives in the thread's scratch, addressed statelessly.
            Space::Local => Ok(Surface::Bti(self.hw.bti_stateless)),
            // PhysicalStorageBuffer memory: A64 messages on 64-bit addresses.
            Space::Global(_) => Ok(Surface::A64),
            other => Err(unsupported(format!("memory access to {other}"))),
        }
    }

    /// The byte address of a memory access: the offset itself, or for `local` memory the
    /// lane's private block in scratch: (R0.5 & ~0x3FF) + lane * local_size + offset
    /// (General-State-relative, as stateless A32 messages take it).
    fn address(&mut self, space: Space, offset: ir::Value) -> Res<Opnd> {
        if let Some(a) = self.table_address {
            return Ok(a);
        }
        if let Space::Global(base) = space {
            // base + sext(offset), one UQ per lane (the A64 messages' address).
            let base = self.comp(base, 0)?;
            if matches!(&self.vals[offset.0 as usize], Some(Val::Imm(k)) if k.first() == Some(&0)) {
                return Ok(base.retype(Type::UQ));
            }
            let off = self.comp(offset, 0)?;
            let mut b = self.b();
            let a = b.vreg(Type::Q, 1);
            b.mov(a, off.retype(Type::D));
            b.alu2(Opcode::Add, a, a, base.retype(Type::Q));
            return Ok(a.retype(Type::UQ));
        }
        if space != Space::Local {
            return self.comp_reg(offset, 0);
        }
        let size = self.local_mem_size;
        let off = self.comp(offset, 0)?;
        let lane = self.lane();
        let mut b = self.b();
        let a = b.vreg(Type::UD, 1);
        b.alu2(Opcode::Mul, a, lane.retype(Type::UD), Opnd::ud(size));
        b.alu2(Opcode::Add, a, a, off.retype(Type::UD));
        let base = b.vreg(Type::UD, 1);
        b.alu2(
            Opcode::And,
            base,
            Opnd::g(0, 20, Type::UD, 0),
            Opnd::ud(0xFFFF_FC00),
        );
        b.alu2(Opcode::Add, a, a, base);
        Ok(a)
    }

    /// The size dword of element `x.index` (clamped) of a descriptor array, per channel: a
    /// select over the array's size dwords, so the index need not be uniform.
    fn indexed_buffer_size(&mut self, d: ir::Value, x: ir::BufIndex) -> Res<()> {
        let size = |this: &Self, k: u32| -> Res<Opnd> {
            let (reg, byte) = this.layout.size_slot(x.base + k).ok_or_else(|| {
                BackendError::Internal(format!("no size dword for bti {}", x.base + k))
            })?;
            Ok(Opnd::g(reg, byte, Type::UD, 0))
        };
        let idx = self.comp(x.index, 0)?;
        let first = size(self, 0)?;
        let rest = (1..x.count)
            .map(|k| size(self, k))
            .collect::<Res<Vec<_>>>()?;
        let dst = self.def_reg(d)?.retype(Type::UD);
        let mut b = self.b();
        b.mov(dst, first);
        for (k, s) in rest.into_iter().enumerate() {
            let k = k as u32 + 1;
            // Indices past the array read the last element's size, as accesses do.
            let cm = if k + 1 == x.count {
                CondMod::Ge
            } else {
                CondMod::Z
            };
            b.cmp(cm, Opnd::null(Type::UD), idx.retype(Type::UD), Opnd::ud(k));
            b.mov(dst, s).pred = Some(Pred {
                flag_sub: 0,
                inverse: false,
            });
        }
        Ok(())
    }

    /// Selects `i`, whose descriptor-array space is reached through `surf`.
    pub(super) fn instr_on_surface(&mut self, i: &ir::Instr, surf: Surface) -> Res<()> {
        self.indexed_surface = Some(surf);
        let r = self.instr(i);
        self.indexed_surface = None;
        r
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
                self.def_reg(d)?;
                for c in 0..dt.comps as usize {
                    let s: Vec<Opnd> = srcs
                        .iter()
                        .map(|v| {
                            let n = self.func.ty(*v).comps as usize;
                            self.comp(*v, if n == 1 { 0 } else { c })
                        })
                        .collect::<Res<_>>()?;
                    let dst = self.dst_comp(d, c);
                    if *op == AluOp::Bcsel && narrow::is_narrow(dt) {
                        self.narrow_bcsel(dst, &s);
                    } else if (narrow::is_narrow(st) && wide::is_wide(dt))
                        || (wide::is_wide(st) && narrow::is_narrow(dt))
                    {
                        self.narrow_wide_convert(*op, dst, s[0], st, dt)?;
                    } else if narrow::is_narrow(dt) || narrow::is_narrow(st) {
                        self.narrow_alu(*op, dst, &s, st, dt)?;
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
                    }
                }
            }
            Op::Insert(v, s, c) => {
                let d = i.dst.expect("insert has a destination");
                self.def_reg(d)?;
                for k in 0..self.func.ty(d).comps as usize {
                    let o = narrow::slot(if k == *c as usize {
                        self.comp(*s, 0)?
                    } else {
                        self.comp(*v, k)?
                    });
                    let dst = narrow::slot(self.dst_comp(d, k)).retype(o.ty);
                    self.b().mov(dst, o);
                }
            }
            Op::Swizzle(v, sw) => {
                let d = i.dst.expect("swizzle has a destination");
                self.def_reg(d)?;
                for (k, c) in sw.iter().enumerate() {
                    let o = narrow::slot(self.comp(*v, *c as usize)?);
                    let dst = narrow::slot(self.dst_comp(d, k)).retype(o.ty);
                    self.b().mov(dst, o);
                }
            }
            Op::LoadVar(_) | Op::StoreVar(..) => {
                return Err(unsupported("function variables (run vars-to-SSA first)"))
            }
            Op::Load { space, offset, .. } => {
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
                    return self.narrow_load(surf, addr, dst, t);
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
                ..
            } => {
                let t = self.func.ty(*value);
                hw_ty(t)?;
                let surf = self.surface(*space)?;
                let addr = self.address(*space, *offset)?;
                if wide::is_wide(t) {
                    let src: Vec<Opnd> = (0..t.comps as usize)
                        .map(|c| self.comp(*value, c))
                        .collect::<Res<_>>()?;
                    let mut b = self.b();
                    wide::store64(&mut b, surf, addr.retype(surf.addr_type()), &src);
                    return Ok(());
                }
                if narrow::is_narrow(t) {
                    let comps = (0..t.comps as usize)
                        .map(|c| self.comp(*value, c))
                        .collect::<Res<Vec<_>>>()?;
                    return self.narrow_store(surf, addr, comps, t);
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
                if qword
                    && self.table_address.is_none()
                    && matches!(space, Space::Ssbo(_) | Space::SsboArray(_))
                {
                    return self.buffer_atomic64(i.dst, *op, *space, *offset, data);
                }
                let surf = self.surface(*space)?;
                if qword && surf != Surface::A64 {
                    // Gen9 has 64-bit atomics only among the A64 messages.
                    return Err(unsupported(format!("64-bit atomics on {space}")));
                }
                let addr = self.address(*space, *offset)?;
                if qword {
                    return self.atomic64(i.dst, *op, addr, data, None);
                }
                let dst = match i.dst {
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
                for v in &order {
                    srcs.push(self.comp_reg(*v, 0)?.retype(Type::UD));
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
            Op::Image(op, bti, srcs) => self.image(i.dst, *op, *bti, srcs)?,
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
                if *semantics != 0 || exec.is_none() {
                    let mut b = self.b();
                    let t = b.vreg(Type::UD, 1);
                    b.at(8, 0, true)
                        .inst(LOp::Fence, t, vec![Opnd::g(0, 0, Type::UD, 1)]);
                }
                if exec.is_some_and(|e| e == ir::Scope::Workgroup) {
                    self.uses_barrier = true;
                    self.b()
                        .at(8, 0, true)
                        .inst(LOp::Barrier, Opnd::null(Type::UD), vec![]);
                }
            }
        }
        Ok(())
    }

    /// A 64-bit atomic at the 64-bit addresses `addr`: the A64 untyped atomic with 64-bit
    /// data (docs/gen9.md 4.2). An atomic load is an OR with 0 that returns the old value,
    /// so it reads the qword in one access as the atomic does.
    fn atomic64(
        &mut self,
        d: Option<ir::Value>,
        op: AtomicOp,
        addr: Opnd,
        data: &[ir::Value],
        guard: Option<Pred>,
    ) -> Res<()> {
        let dst = match d {
            Some(d) => self.def_reg(d)?.retype(Type::UQ),
            None => Opnd::null(Type::UQ),
        };
        // A guarded atomic (a storage-buffer access, bounds-checked in the shader) returns 0
        // in the channels the guard turns off: the old value lands in a temporary and is
        // copied under the same predicate.
        let (ret, dst) = match (guard, dst.base) {
            (Some(_), Base::Null) | (None, _) => (None, dst),
            (Some(_), _) => {
                let mut b = self.b();
                b.mov(dst, Opnd::imm(Type::UQ, 0));
                (Some(dst), b.vreg(Type::UQ, 1))
            }
        };
        let (hw_op, order) = match op {
            AtomicOp::Load => (2, vec![]),
            // Hardware order for CMPWR: (compare, new); the IR has (new, compare).
            AtomicOp::CmpXchg => (atomic_hw_op(op)?, vec![data[1], data[0]]),
            _ => (atomic_hw_op(op)?, data.to_vec()),
        };
        let mut srcs = vec![addr.retype(Type::UQ)];
        for v in &order {
            srcs.push(self.comp(*v, 0)?.retype(Type::UQ));
        }
        if op == AtomicOp::Load {
            srcs.push(Opnd::imm(Type::UQ, 0));
        }
        let ndata = srcs.len() as u8 - 1;
        self.b()
            .inst(
                LOp::UntypedAtomic {
                    surf: Surface::A64,
                    hw_op,
                    ndata,
                    qword: true,
                },
                dst,
                srcs,
            )
            .pred = guard;
        if let Some(r) = ret {
            self.b().mov(r, dst).pred = guard;
        }
        Ok(())
    }

    /// A 64-bit atomic on a storage buffer: Gen9 has no 64-bit atomic on a binding-table
    /// surface, so it is an A64 atomic at the bound range's GPU address (from the CURBE,
    /// docs/dispatch-contract.md) plus the offset. The data port does not bounds-check A64
    /// messages, so the shader does: a channel whose 8 bytes do not lie inside the bound
    /// range does nothing and returns 0, as a surface atomic outside its surface would. A
    /// descriptor-array element is chosen per channel (clamped to the array as surface
    /// accesses are), so the index need not be uniform.
    fn buffer_atomic64(
        &mut self,
        d: Option<ir::Value>,
        op: AtomicOp,
        space: Space,
        offset: ir::Value,
        data: &[ir::Value],
    ) -> Res<()> {
        let (first, count, index) = match space {
            Space::Ssbo(b) => (b, 1, None),
            Space::SsboArray(x) => (x.base, x.count, Some(x.index)),
            _ => return Err(BackendError::Internal(format!("64-bit atomic on {space}"))),
        };
        let slots = |this: &Self, k: u32| -> Res<(Opnd, Opnd, Opnd)> {
            let bti = first + k;
            let missing = || BackendError::Internal(format!("no address of bti {bti}"));
            let [(rl, bl), (rh, bh)] = this.layout.address_slots(bti).ok_or_else(missing)?;
            let (rs, bs) = this.layout.size_slot(bti).ok_or_else(missing)?;
            Ok((
                Opnd::g(rl, bl, Type::UD, 0),
                Opnd::g(rh, bh, Type::UD, 0),
                Opnd::g(rs, bs, Type::UD, 0),
            ))
        };
        let idx = match index {
            Some(v) => Some(self.comp(v, 0)?),
            None => None,
        };
        let first_slots = slots(self, 0)?;
        let rest = (1..count)
            .map(|k| slots(self, k))
            .collect::<Res<Vec<_>>>()?;
        let off = self.comp(offset, 0)?;
        let p = Some(Pred {
            flag_sub: 0,
            inverse: false,
        });
        let mut b = self.b();
        // Base address (UQ) and size (UD) of each channel's buffer.
        let base = b.vreg(Type::UQ, 1);
        let size = b.vreg(Type::UD, 1);
        let (lo, hi, sz) = first_slots;
        b.mov(wide::lo(base), lo);
        b.mov(wide::hi(base), hi);
        b.mov(size, sz);
        if let Some(idx) = idx {
            for (k, (lo, hi, sz)) in rest.into_iter().enumerate() {
                let k = k as u32 + 1;
                // Indices past the array use the last element, as surface accesses do.
                let cm = if k + 1 == count {
                    CondMod::Ge
                } else {
                    CondMod::Z
                };
                b.cmp(cm, Opnd::null(Type::UD), idx.retype(Type::UD), Opnd::ud(k));
                b.mov(wide::lo(base), lo).pred = p;
                b.mov(wide::hi(base), hi).pred = p;
                b.mov(size, sz).pred = p;
            }
        }
        // In bounds: offset + 8 <= size, computed in 64 bits so no offset wraps around.
        let end = b.vreg(Type::UQ, 1);
        b.mov(end, off.retype(Type::UD));
        let addr = b.vreg(Type::UQ, 1);
        b.alu2(Opcode::Add, addr, base, end);
        b.alu2(Opcode::Add, end, end, Opnd::imm(Type::UQ, 8));
        let size64 = b.vreg(Type::UQ, 1);
        b.mov(size64, size);
        b.cmp(CondMod::Le, Opnd::null(Type::UQ), end, size64);
        self.atomic64(d, op, addr, data, p)
    }

    /// A conversion between an 8/16-bit and a 64-bit type goes through the 32-bit type of
    /// the narrow side's kind (Gen9 has no direct B/UB or HF <-> 64-bit conversion,
    /// docs/gen9.md 8.2.4). fp16 <-> fp64 thus rounds twice, as Mesa's lowering does.
    fn narrow_wide_convert(
        &mut self,
        op: AluOp,
        d: Opnd,
        s: Opnd,
        st: ir::Type,
        dt: ir::Type,
    ) -> Res<()> {
        use AluOp::*;
        if !matches!(op, I2i | U2u | I2f | U2f | F2i | F2u | F2f | B2i | B2f) {
            return Err(unsupported(format!("{} from {st} to {dt}", op.name())));
        }
        let same_kind = |t: ir::Type, signed: bool| -> AluOp {
            match (t.kind, signed) {
                (Kind::Float, _) => F2f,
                (Kind::Bool, _) => B2b,
                (_, true) => I2i,
                _ => U2u,
            }
        };
        let signed_src = op.signed_srcs();
        let signed_dst = op.signed_dst();
        if narrow::is_narrow(st) {
            let mid = ir::Type { bits: 32, ..st };
            let t = self.b().vreg(hw_ty(mid)?, 1);
            self.narrow_alu(same_kind(st, signed_src), t, &[s], st, mid)?;
            let mut b = self.b();
            wide::alu64(&mut b, op, d, &[t], mid, dt)
        } else {
            let mid = ir::Type { bits: 32, ..dt };
            let t = self.b().vreg(hw_ty(mid)?, 1);
            let mut b = self.b();
            wide::alu64(&mut b, op, t, &[s], st, mid)?;
            self.narrow_alu(same_kind(dt, signed_dst), d, &[t], mid, dt)
        }
    }

    /// A push-constant load at a constant offset: moves from the CURBE registers.
    /// A typed image access: the coordinates (and data) go to registers with one block per
    /// component, `4 * w` bytes apart, and stay a logical message until `lower_sends`.
    fn image(
        &mut self,
        dst: Option<ir::Value>,
        op: ImageOp,
        bti: u32,
        srcs: &[ir::Value],
    ) -> Res<()> {
        if bti > self.hw.max_buffer_bti {
            return Err(BackendError::Internal(format!("image at bti {bti}")));
        }
        if op.is_read() && op != ImageOp::Load {
            return self.sample(dst, op, bti, srcs);
        }
        let surf = Surface::Bti(bti as u8);
        let w = self.w;
        let stride = 4 * w as u32;
        let block = |s: &mut Self, v: ir::Value| -> Res<Opnd> {
            let n = s.func.ty(v).comps as u32;
            let r = s.b().vreg(Type::UD, n);
            for c in 0..n {
                let o = s.comp(v, c as usize)?;
                s.b().mov(r.offset(c * stride), o.retype(Type::UD));
            }
            Ok(r)
        };
        let coords = self.func.ty(srcs[0]).comps;
        let coord = block(self, srcs[0])?;
        match op {
            ImageOp::Fetch | ImageOp::SampleLod { .. } | ImageOp::Gather { .. } | ImageOp::Size => {
                return Err(BackendError::Internal(format!(
                    "{} as a typed message",
                    op.name()
                )))
            }
            ImageOp::Load => {
                let d = dst.ok_or_else(|| BackendError::Internal("image_load result".into()))?;
                let r = self.def_reg(d)?;
                self.b().inst(
                    LOp::TypedRead {
                        surf,
                        coords,
                        comp_stride: stride,
                    },
                    r.retype(Type::UD),
                    vec![coord],
                );
            }
            ImageOp::Store => {
                let data = block(self, srcs[1])?;
                self.b().inst(
                    LOp::TypedWrite {
                        surf,
                        coords,
                        comp_stride: stride,
                    },
                    Opnd::null(Type::UD),
                    vec![coord, data],
                );
            }
            ImageOp::Atomic(a) => {
                let r = match dst {
                    Some(d) => self.def_reg(d)?.retype(Type::UD),
                    None => Opnd::null(Type::UD),
                };
                if a == AtomicOp::Load {
                    // A texel read: the typed read returns all four channels; keep X.
                    let t = self.b().vreg(Type::UD, 4);
                    self.b().inst(
                        LOp::TypedRead {
                            surf,
                            coords,
                            comp_stride: stride,
                        },
                        t,
                        vec![coord],
                    );
                    if r.base != Base::Null {
                        self.b().mov(r, t);
                    }
                    return Ok(());
                }
                // Hardware order for CMPWR: (compare, new); the IR has (new, compare).
                let data: Vec<ir::Value> = if a == AtomicOp::CmpXchg {
                    vec![srcs[2], srcs[1]]
                } else {
                    srcs[1..].to_vec()
                };
                let mut ops = vec![coord];
                for v in &data {
                    ops.push(self.comp_reg(*v, 0)?.retype(Type::UD));
                }
                self.b().inst(
                    LOp::TypedAtomic {
                        surf,
                        coords,
                        comp_stride: stride,
                        hw_op: atomic_hw_op(a)?,
                        ndata: data.len() as u8,
                    },
                    r,
                    ops,
                );
            }
        }
        Ok(())
    }

    /// A sampler message: the parameters of `payload_params` (coordinates, level; missing
    /// ones in the middle 0, trailing ones left out), one block each, stay a logical message
    /// until `lower_sends`.
    fn sample(
        &mut self,
        dst: Option<ir::Value>,
        op: ImageOp,
        bti: u32,
        srcs: &[ir::Value],
    ) -> Res<()> {
        use ferrite_isa::sampler_msg::{payload_params, Param, SamplerHeader, SamplerMsgType as M};
        let mut header = None;
        let (msg, sampler, coords, lod) = match op {
            ImageOp::Fetch => (M::Ld, 0, Some(srcs[0]), Some(srcs[1])),
            ImageOp::SampleLod { sampler, offset } => {
                // Constant texel offsets live in the message header.
                if offset != [0; 3] {
                    let h = SamplerHeader {
                        offsets: offset,
                        ..SamplerHeader::default()
                    };
                    header = Some(h.to_dw2());
                }
                (M::SampleL, sampler, Some(srcs[0]), Some(srcs[1]))
            }
            ImageOp::Gather {
                sampler,
                comp,
                offset,
            } => {
                // gather4 takes its component (and any offset) from the message header.
                let h = SamplerHeader {
                    gather_component: comp as u8,
                    offsets: offset,
                    ..SamplerHeader::default()
                };
                header = Some(h.to_dw2());
                (M::Gather4, sampler, Some(srcs[0]), None)
            }
            ImageOp::Size => (M::Resinfo, 0, None, Some(srcs[0])),
            _ => {
                return Err(BackendError::Internal(format!(
                    "{} as a sampler message",
                    op.name()
                )))
            }
        };
        if sampler > 15 {
            // Needs a message header with an offset sampler-state pointer.
            return Err(unsupported(format!("sampler index {sampler} (above 15)")));
        }
        let n_coords = coords.map_or(0, |c| self.func.ty(c).comps as u32);
        let mut vals = Vec::new();
        for p in payload_params(msg) {
            let coord = |c: u32| (c < n_coords).then_some(c);
            vals.push(match p {
                Param::U => coord(0).map(|c| (coords.unwrap(), c)),
                Param::V => coord(1).map(|c| (coords.unwrap(), c)),
                Param::R => coord(2).map(|c| (coords.unwrap(), c)),
                Param::Lod => lod.map(|l| (l, 0)),
                _ => None,
            });
        }
        let n = vals.iter().rposition(|v| v.is_some()).map_or(0, |i| i + 1);
        let stride = 4 * self.w as u32;
        let r = self.b().vreg(Type::UD, n.max(1) as u32);
        for (k, v) in vals.iter().take(n).enumerate() {
            let src = match v {
                Some((val, c)) => self.comp(*val, *c as usize)?.retype(Type::UD),
                None => Opnd::ud(0),
            };
            self.b().mov(r.offset(k as u32 * stride), src);
        }
        let d = dst.ok_or_else(|| BackendError::Internal("sampler message result".into()))?;
        let d = self.def_reg(d)?.retype(Type::UD);
        self.b().inst(
            LOp::Sample {
                bti: bti as u8,
                sampler: sampler as u8,
                msg,
                params: n as u8,
                comp_stride: stride,
                header,
            },
            d,
            vec![r],
        );
        Ok(())
    }

    fn push_load(&mut self, d: ir::Value, offset: ir::Value) -> Res<()> {
        let t = self.func.ty(d);
        let off = match self.vals[offset.0 as usize] {
            Some(Val::Imm(ref b)) => b[0] as u32,
            _ => {
                return Err(BackendError::Internal(
                    "push-constant load from the CURBE at a dynamic offset".into(),
                ))
            }
        };
        let dst = self.def_reg(d)?;
        let ty = hw_ty(t)?;
        let w = self.w as u32;
        if wide::is_wide(t) {
            // Two scalar dword moves per component (std430 puts doubles 8-byte aligned).
            for c in 0..t.comps as u32 {
                let byte = off + 8 * c;
                if byte + 8 > 32 * self.layout.push_regs as u32 {
                    return Err(unsupported(format!(
                        "push constant byte {byte} beyond push range"
                    )));
                }
                let o = dst.offset(c * 8 * w);
                for (h, part) in [(0u32, wide::lo(o)), (4, wide::hi(o))] {
                    let at = byte + h;
                    self.b()
                        .mov(part, Opnd::g(1 + (at / 32) as u8, at % 32, Type::UD, 0));
                }
            }
            return Ok(());
        }
        let size = t.comp_bytes();
        for c in 0..t.comps as u32 {
            let byte = off + size * c;
            if byte + size > 32 * self.layout.push_regs as u32 {
                return Err(unsupported(format!(
                    "push constant byte {byte} beyond push range"
                )));
            }
            if narrow::is_narrow(t) {
                let d = dst.offset(c * 4 * w);
                self.narrow_push(d, 1 + (byte / 32) as u8, byte % 32, t);
                continue;
            }
            self.b().mov(
                dst.offset(c * 4 * w).retype(ty),
                Opnd::g(1 + (byte / 32) as u8, byte % 32, ty, 0),
            );
        }
        Ok(())
    }

    pub(super) fn alu(
        &mut self,
        op: AluOp,
        d: Opnd,
        s: &[Opnd],
        st: ir::Type,
        dt: ir::Type,
    ) -> Res<()> {
        use AluOp::*;
        use Opcode as O;
        let mut b = self.b();
        let f = |o: Opnd| o.retype(Type::F);
        let i = |o: Opnd| o.retype(Type::D);
        let u = |o: Opnd| o.retype(Type::UD);
        let _ = dt;
        match op {
            Mov | B2b | I2i | U2u | F2f => {
                b.mov(d.retype(s[0].ty), s[0]);
            }
            Bitcast => {
                b.mov(u(d), u(s[0]));
            }
            Iadd | Isub | Imul => {
                add_sub_mul(&mut b, op, d, s, Type::D);
            }
            Idiv => {
                b.math(MathFunction::IntDiv, i(d), vec![i(s[0]), i(s[1])]);
            }
            Udiv => {
                b.math(MathFunction::IntDiv, u(d), vec![u(s[0]), u(s[1])]);
            }
            Irem => {
                b.math(MathFunction::IntMod, i(d), vec![i(s[0]), i(s[1])]);
            }
            Umod => {
                b.math(MathFunction::IntMod, u(d), vec![u(s[0]), u(s[1])]);
            }
            Imod => {
                // r = rem(a, b); if r != 0 && sign(r) != sign(b) then r += b.
                b.math(MathFunction::IntMod, i(d), vec![i(s[0]), i(s[1])]);
                let t = b.vreg(Type::D, 1);
                b.alu2(O::Xor, t, i(d), i(s[1]));
                let n = b.vreg(Type::D, 1);
                b.cmp(CondMod::L, n, t, Opnd::d(0));
                let z = b.vreg(Type::D, 1);
                b.cmp(CondMod::Nz, z, i(d), Opnd::d(0));
                b.alu2(O::And, n, n, z).cmod = CondMod::Nz;
                b.alu2(O::Add, i(d), i(d), i(s[1])).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
            Ineg => {
                b.mov(i(d), i(s[0]).negate());
            }
            Iabs => {
                b.mov(i(d), i(s[0]).absolute());
            }
            Isign => {
                let p = b.vreg(Type::D, 1);
                b.cmp(CondMod::G, p, i(s[0]), Opnd::d(0));
                let n = b.vreg(Type::D, 1);
                b.cmp(CondMod::L, n, i(s[0]), Opnd::d(0));
                b.alu2(O::Add, i(d), n, p.negate());
            }
            Imin | Imax | Umin | Umax | Fmin | Fmax => {
                min_max(&mut b, op, d, s, [Type::D, Type::UD, Type::F]);
            }
            Iand | Ior | Ixor | Inot => {
                logic(&mut b, op, d, s, Type::UD);
            }
            Ishl => {
                b.alu2(O::Shl, u(d), u(s[0]), u(s[1]));
            }
            Ishr => {
                b.alu2(O::Asr, i(d), i(s[0]), u(s[1]));
            }
            Ushr => {
                b.alu2(O::Shr, u(d), u(s[0]), u(s[1]));
            }
            BitfieldReverse => {
                b.alu1(O::Bfrev, u(d), u(s[0]));
            }
            BitCount => {
                b.alu1(O::Cbit, u(d), u(s[0]));
            }
            FindLsb => {
                b.alu1(O::Fbl, u(d), u(s[0]));
            }
            UfindMsb | IfindMsb => {
                let t = b.vreg(Type::UD, 1);
                let src = if op == IfindMsb { i(s[0]) } else { u(s[0]) };
                b.alu1(O::Fbh, t, src);
                b.cmp(CondMod::Z, Opnd::null(Type::D), i(t), Opnd::d(-1));
                b.alu2(O::Add, i(d), i(t).negate(), Opnd::d(31));
                b.mov(i(d), Opnd::d(-1)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
            Fadd | Fsub | Fmul => {
                add_sub_mul(&mut b, op, d, s, Type::F);
            }
            Fdiv => {
                let t = b.vreg(Type::F, 1);
                b.math(MathFunction::Inv, t, vec![f(s[1])]);
                b.alu2(O::Mul, f(d), f(s[0]), t);
            }
            Fmod | Frem => {
                // x - y * floor(x / y)   (frem: trunc)
                let t = b.vreg(Type::F, 1);
                b.math(MathFunction::Inv, t, vec![f(s[1])]);
                b.alu2(O::Mul, t, f(s[0]), t);
                b.alu1(if op == Fmod { O::Rndd } else { O::Rndz }, t, t);
                b.alu2(O::Mul, t, t, f(s[1]));
                b.alu2(O::Add, f(d), f(s[0]), t.negate());
            }
            Fneg => {
                b.mov(f(d), f(s[0]).negate());
            }
            Fabs => {
                b.mov(f(d), f(s[0]).absolute());
            }
            Fsign => {
                let t = b.vreg(Type::UD, 1);
                b.cmp(
                    CondMod::Nz,
                    Opnd::null(Type::F),
                    f(s[0]),
                    Opnd::imm(Type::F, 0),
                );
                b.alu2(O::And, t, u(s[0]), Opnd::ud(0x8000_0000));
                b.alu2(O::Or, t, t, Opnd::ud(0x3f80_0000)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
                b.mov(u(d), t);
            }
            Ffma => {
                // MAD: dst = src0 + src1 * src2 (3-source, Align16 on Gen9; legalize moves
                // immediates and strided operands to registers).
                b.inst(LOp::Alu(O::Mad), f(d), vec![f(s[2]), f(s[0]), f(s[1])]);
            }
            Ffloor => {
                b.alu1(O::Rndd, f(d), f(s[0]));
            }
            Fceil => {
                let t = b.vreg(Type::F, 1);
                b.alu1(O::Rndd, t, f(s[0]).negate());
                b.mov(f(d), t.negate());
            }
            Ftrunc => {
                b.alu1(O::Rndz, f(d), f(s[0]));
            }
            FroundEven => {
                b.alu1(O::Rnde, f(d), f(s[0]));
            }
            Ffract => {
                b.alu1(O::Frc, f(d), f(s[0]));
            }
            Fsqrt | Frsq | Frcp | Fexp2 | Flog2 | Fsin | Fcos => {
                let m = match op {
                    Fsqrt => MathFunction::Sqrt,
                    Frsq => MathFunction::Rsq,
                    Frcp => MathFunction::Inv,
                    Fexp2 => MathFunction::Exp,
                    Flog2 => MathFunction::Log,
                    Fsin => MathFunction::Sin,
                    _ => MathFunction::Cos,
                };
                b.math(m, f(d), vec![f(s[0])]);
            }
            Fpow => {
                b.math(MathFunction::Pow, f(d), vec![f(s[0]), f(s[1])]);
            }
            I2f => {
                b.mov(f(d), i(s[0]));
            }
            U2f => {
                b.mov(f(d), u(s[0]));
            }
            F2i => {
                b.mov(i(d), f(s[0]));
            }
            F2u => {
                b.mov(u(d), f(s[0]));
            }
            B2i => {
                b.mov(i(d), i(s[0]).negate());
            }
            B2f => {
                b.alu2(O::And, u(d), u(s[0]), Opnd::ud(0x3f80_0000));
            }
            I2b => {
                let ty = hw_ty(st)?;
                b.cmp(CondMod::Nz, d.retype(ty), s[0].retype(ty), Opnd::imm(ty, 0));
            }
            Ieq | Ine | Ilt | Ige | Ult | Uge | Feq | Flt | Fle | Fgt | Fge | Fneu => {
                let (ty, cm) = match op {
                    Ieq => (Type::D, CondMod::Z),
                    Ine => (Type::D, CondMod::Nz),
                    Ilt => (Type::D, CondMod::L),
                    Ige => (Type::D, CondMod::Ge),
                    Ult => (Type::UD, CondMod::L),
                    Uge => (Type::UD, CondMod::Ge),
                    Feq => (Type::F, CondMod::Z),
                    Flt => (Type::F, CondMod::L),
                    Fle => (Type::F, CondMod::Le),
                    Fgt => (Type::F, CondMod::G),
                    Fge => (Type::F, CondMod::Ge),
                    _ => (Type::F, CondMod::Nz),
                };
                b.cmp(cm, d.retype(ty), s[0].retype(ty), s[1].retype(ty));
            }
            Fequ | Fltu | Fleu | Fgtu | Fgeu => {
                // Unordered = not(ordered opposite).
                let cm = match op {
                    Fequ => CondMod::Nz,
                    Fltu => CondMod::Ge,
                    Fleu => CondMod::G,
                    Fgtu => CondMod::Le,
                    _ => CondMod::L,
                };
                let t = b.vreg(Type::F, 1);
                if op == Fequ {
                    // fequ = !(a < b) && !(a > b)
                    let t2 = b.vreg(Type::F, 1);
                    b.cmp(CondMod::L, t, f(s[0]), f(s[1]));
                    b.cmp(CondMod::G, t2, f(s[0]), f(s[1]));
                    b.alu2(O::Or, u(t), u(t), u(t2));
                } else {
                    b.cmp(cm, t, f(s[0]), f(s[1]));
                }
                b.alu1(O::Not, u(d), u(t));
            }
            Fne => {
                // ordered !=: a != b and neither is NaN.
                let t = b.vreg(Type::F, 1);
                let t2 = b.vreg(Type::F, 1);
                b.cmp(CondMod::L, t, f(s[0]), f(s[1]));
                b.cmp(CondMod::G, t2, f(s[0]), f(s[1]));
                b.alu2(O::Or, u(d), u(t), u(t2));
            }
            IsNan => {
                b.cmp(CondMod::Nz, f(d), f(s[0]), f(s[0]));
            }
            IsInf => {
                b.cmp(
                    CondMod::Z,
                    f(d),
                    f(s[0]).absolute(),
                    Opnd::imm(Type::F, f32::INFINITY.to_bits() as u64),
                );
            }
            Bcsel => {
                b.flag_from(s[0]);
                let ty = s[1].ty;
                b.alu2(O::Sel, d.retype(ty), s[1], s[2].retype(ty)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
            UbitfieldExtract | IbitfieldExtract => {
                // (v << (32 - off - bits)) >> (32 - bits), 0 when bits == 0.
                let sh = b.vreg(Type::D, 1);
                b.alu2(O::Add, sh, i(s[1]).negate(), i(s[2]).negate());
                b.alu2(O::Add, sh, sh, Opnd::d(32));
                let t = b.vreg(Type::UD, 1);
                b.alu2(O::Shl, t, u(s[0]), u(sh));
                let sh2 = b.vreg(Type::D, 1);
                b.alu2(O::Add, sh2, i(s[2]).negate(), Opnd::d(32));
                if op == UbitfieldExtract {
                    b.alu2(O::Shr, u(d), t, u(sh2));
                } else {
                    b.alu2(O::Asr, i(d), i(t), u(sh2));
                }
                b.cmp(CondMod::Z, Opnd::null(Type::D), i(s[2]), Opnd::d(0));
                b.mov(i(d), Opnd::d(0)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
            BitfieldInsert => {
                // m = ((1 << bits) - 1) << off (all ones when bits == 32);
                // r = (base & ~m) | ((insert << off) & m).
                let m = b.vreg(Type::UD, 1);
                b.alu2(O::Shl, m, Opnd::ud(1), u(s[3]));
                b.alu2(O::Add, i(m), i(m), Opnd::d(-1));
                b.cmp(CondMod::Ge, Opnd::null(Type::D), i(s[3]), Opnd::d(32));
                b.mov(m, Opnd::ud(0xFFFF_FFFF)).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
                b.alu2(O::Shl, m, m, u(s[2]));
                let t = b.vreg(Type::UD, 1);
                b.alu2(O::Shl, t, u(s[1]), u(s[2]));
                b.alu2(O::And, t, t, m);
                let keep = b.vreg(Type::UD, 1);
                b.alu1(O::Not, keep, m);
                b.alu2(O::And, keep, keep, u(s[0]));
                b.alu2(O::Or, u(d), keep, t);
            }
            Ldexp => {
                // x * 2^e as (x * 2^e1) * 2^e2 with e clamped to [-252, 254] and split into
                // e1 = e >> 1 and e2 = e - e1, both in [-126, 127] so each power of two is a
                // normal float: a single power clamped to the normal range would give a
                // finite x * 2^127 for e = 128. The halves have e's sign, so the first
                // product overflows or underflows only when the result does. With f32
                // denormals preserved (float controls) a denormal x with e > 254 - 149 is
                // not scaled far enough, and a denormal result may round twice.
                let e = b.vreg(Type::D, 1);
                b.alu2(O::Sel, e, i(s[1]), Opnd::d(-252)).cmod = CondMod::Ge;
                b.alu2(O::Sel, e, e, Opnd::d(254)).cmod = CondMod::L;
                let e1 = b.vreg(Type::D, 1);
                b.alu2(O::Asr, e1, e, Opnd::d(1));
                let e2 = b.vreg(Type::D, 1);
                b.alu2(O::Add, e2, e, e1.negate());
                let t = b.vreg(Type::F, 1);
                for (k, src, dst) in [(e1, f(s[0]), t), (e2, t, f(d))] {
                    let p = b.vreg(Type::D, 1);
                    b.alu2(O::Add, p, k, Opnd::d(127));
                    b.alu2(O::Shl, u(p), u(p), Opnd::ud(23));
                    b.alu2(O::Mul, dst, src, f(p));
                }
            }
            UmulHigh | ImulHigh => {
                // 32x32 -> high 32 from 16-bit halves (every partial product fits in 32
                // bits); the signed form subtracts the sign corrections.
                let half = |b: &mut Builder, x: Opnd, hi: bool| {
                    let t = b.vreg(Type::UD, 1);
                    if hi {
                        b.alu2(O::Shr, t, u(x), Opnd::ud(16));
                    } else {
                        b.alu2(O::And, t, u(x), Opnd::ud(0xFFFF));
                    }
                    t
                };
                let (al, ah) = (half(&mut b, s[0], false), half(&mut b, s[0], true));
                let (bl, bh) = (half(&mut b, s[1], false), half(&mut b, s[1], true));
                let ll = b.vreg(Type::UD, 1);
                b.alu2(O::Mul, ll, al, bl);
                let lh = b.vreg(Type::UD, 1);
                b.alu2(O::Mul, lh, al, bh);
                let hl = b.vreg(Type::UD, 1);
                b.alu2(O::Mul, hl, ah, bl);
                let hh = b.vreg(Type::UD, 1);
                b.alu2(O::Mul, hh, ah, bh);
                // mid = (ll >> 16) + (lh & 0xFFFF) + (hl & 0xFFFF)
                let mid = b.vreg(Type::UD, 1);
                b.alu2(O::Shr, mid, ll, Opnd::ud(16));
                let t = b.vreg(Type::UD, 1);
                b.alu2(O::And, t, lh, Opnd::ud(0xFFFF));
                b.alu2(O::Add, mid, mid, t);
                b.alu2(O::And, t, hl, Opnd::ud(0xFFFF));
                b.alu2(O::Add, mid, mid, t);
                // hi = hh + (lh >> 16) + (hl >> 16) + (mid >> 16)
                b.alu2(O::Shr, lh, lh, Opnd::ud(16));
                b.alu2(O::Shr, hl, hl, Opnd::ud(16));
                b.alu2(O::Shr, mid, mid, Opnd::ud(16));
                b.alu2(O::Add, hh, hh, lh);
                b.alu2(O::Add, hh, hh, hl);
                if op == UmulHigh {
                    b.alu2(O::Add, u(d), hh, mid);
                } else {
                    b.alu2(O::Add, hh, hh, mid);
                    let c = b.vreg(Type::D, 1);
                    b.alu2(O::Asr, c, i(s[0]), Opnd::d(31));
                    b.alu2(O::And, c, c, i(s[1]));
                    b.alu2(O::Add, i(hh), i(hh), c.negate());
                    b.alu2(O::Asr, c, i(s[1]), Opnd::d(31));
                    b.alu2(O::And, c, c, i(s[0]));
                    b.alu2(O::Add, i(d), i(hh), c.negate());
                }
            }
            FrexpSig | FrexpExp => {
                // Normal x: significand in [0.5, 1) keeps the sign, exponent = biased - 126;
                // zero gives (0, 0). Denormals are flushed by the hardware.
                let zero = b.vreg(Type::D, 1);
                b.cmp(CondMod::Z, zero, f(s[0]), Opnd::imm(Type::F, 0));
                let t = b.vreg(Type::UD, 1);
                if op == FrexpSig {
                    b.alu2(O::And, t, u(s[0]), Opnd::ud(0x807F_FFFF));
                    b.alu2(O::Or, t, t, Opnd::ud(0x3F00_0000));
                } else {
                    b.alu2(O::Shr, t, u(s[0]), Opnd::ud(23));
                    b.alu2(O::And, t, t, Opnd::ud(0xFF));
                    b.alu2(O::Add, i(t), i(t), Opnd::d(-126));
                }
                b.flag_from(zero);
                let z = if op == FrexpSig { u(s[0]) } else { Opnd::ud(0) };
                b.alu2(O::Sel, u(d), z, t).pred = Some(Pred {
                    flag_sub: 0,
                    inverse: false,
                });
            }
        }
        Ok(())
    }
}

/// The data port's atomic operation code (docs/gen9.md 4.2) of an IR atomic; `Load` has
/// none (it is a plain read).
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
