//! SPIR-V values in the IR: the emission helpers, front-end values (scalars and vectors,
//! composites, pointers), and ids that live across blocks (demoted to IR variables).

use super::memory::Ptr;
use super::types::SType;
use super::{invalid, unsupported, Fe, FrontendError, Res, MAX_EMIT};
use crate::builder::Builder;
use crate::ir::{AluOp, Block, Kind, Node, Op, Type, Value, Var};
use rspirv::spirv;

#[derive(Clone, Debug)]
pub(super) enum VarTree {
    Leaf(Var),
    Comp(Vec<VarTree>),
}

#[derive(Clone, Debug)]
pub(super) enum FVal {
    V(Value),
    C(Vec<FVal>),
    P(Box<Ptr>),
}

impl FVal {
    pub(super) fn v(&self) -> Res<Value> {
        match self {
            FVal::V(v) => Ok(*v),
            _ => invalid("expected a scalar or vector value"),
        }
    }
    pub(super) fn comps(&self) -> Res<&[FVal]> {
        match self {
            FVal::C(c) => Ok(c),
            _ => invalid("expected a composite value"),
        }
    }
    /// The columns of a matrix value.
    pub(super) fn cols(&self) -> Res<Vec<Value>> {
        self.comps()?.iter().map(|c| c.v()).collect()
    }
    /// A pointer operand (e.g. the out-parameter of GLSL.std.450 modf / frexp).
    pub(super) fn ptr(&self) -> Res<Ptr> {
        match self {
            FVal::P(p) => Ok((**p).clone()),
            _ => invalid("expected a pointer operand"),
        }
    }
}

/// How a demoted SPIR-V id is kept across blocks.
#[derive(Clone, Debug)]
pub(super) enum Demoted {
    Val(VarTree),
    /// A pointer whose dynamic offset / component lives in a variable.
    Ptr(Box<Ptr>, Option<Var>),
}

impl Fe<'_> {
    /// The IR builder at the current insertion point (the innermost open block).
    fn builder(&mut self) -> Builder<'_> {
        Builder::new(&mut self.f.values, self.stack.last_mut().unwrap())
    }

    /// Counts one emitted node against `MAX_EMIT`.
    fn count_emitted(&mut self) -> Res<()> {
        self.emitted += 1;
        if self.emitted > MAX_EMIT {
            return unsupported("shader too large after inlining");
        }
        Ok(())
    }

    pub(super) fn push(&mut self, n: Node) -> Res<()> {
        self.count_emitted()?;
        self.builder().push(n);
        Ok(())
    }

    pub(super) fn emit(&mut self, ty: Type, op: Op) -> Res<Value> {
        self.count_emitted()?;
        let v = self.builder().emit(ty, op);
        self.mark_exact();
        Ok(v)
    }

    /// Marks the instruction just emitted `exact` when the SPIR-V instruction being
    /// translated is decorated `NoContraction`.
    fn mark_exact(&mut self) {
        if self.no_contraction {
            if let Some(Node::Instr(i)) = self.builder().last_mut() {
                i.exact = true;
            }
        }
    }

    pub(super) fn emit_void(&mut self, op: Op) -> Res<()> {
        self.count_emitted()?;
        self.builder().emit_void(op);
        Ok(())
    }

    pub(super) fn alu(&mut self, op: AluOp, ty: Type, srcs: &[Value]) -> Res<Value> {
        self.count_emitted()?;
        let v = self.builder().alu(op, ty, srcs);
        self.mark_exact();
        Ok(v)
    }

    pub(super) fn konst(&mut self, ty: Type, bits: u64) -> Res<Value> {
        self.count_emitted()?;
        Ok(self.builder().konst(ty, bits))
    }

    pub(super) fn fconst(&mut self, ty: Type, v: f64) -> Res<Value> {
        self.count_emitted()?;
        Ok(self.builder().fconst(ty, v))
    }

    pub(super) fn i32c(&mut self, v: u32) -> Res<Value> {
        self.konst(Type::I32, u64::from(v))
    }

    pub(super) fn ty(&self, v: Value) -> Type {
        self.f.ty(v)
    }

    pub(super) fn extract(&mut self, v: Value, c: u8) -> Res<Value> {
        if self.ty(v).comps == 1 {
            return Ok(v);
        }
        self.count_emitted()?;
        Ok(self.builder().extract(v, c))
    }

    /// OpBitcast between vectors of different component counts (same total bits): the
    /// components as integers, split into pieces of the narrower width (low bits first, as
    /// SPIR-V orders them) and regrouped with shifts and ors. 64-bit values go through
    /// their two 32-bit words in the shapes of packDouble2x32/unpackDouble2x32, which soft
    /// fp64 takes apart without 64-bit integer operations.
    pub(super) fn bitcast_regroup(&mut self, x: Value, t: Type) -> Res<Value> {
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
    pub(super) fn split_bits(&mut self, v: Value, unit: u8) -> Res<Vec<Value>> {
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
    pub(super) fn join_bits(&mut self, pieces: &[Value], bits: u8) -> Res<Value> {
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

    pub(super) fn splat(&mut self, v: Value, n: u8) -> Res<Value> {
        if n == 1 || self.ty(v).comps == n {
            return Ok(v);
        }
        let t = self.ty(v);
        self.emit(t.vec(n), Op::Vec(vec![v; usize::from(n)]))
    }

    pub(super) fn in_block(&mut self, f: impl FnOnce(&mut Self) -> Res<()>) -> Res<Block> {
        self.stack.push(vec![]);
        let r = f(self);
        let b = self.stack.pop().unwrap();
        r.map(|_| b)
    }

    /// The value of a SPIR-V id as seen from `use_block`.
    pub(super) fn get(&mut self, id: u32, use_block: u32) -> Res<FVal> {
        if let Some((t, c)) = self.decl.consts.get(&id).cloned() {
            return self.const_fval(t, &c, 0);
        }
        if let Some(p) = self.iface.global_ptrs.get(&id) {
            return Ok(FVal::P(Box::new(p.clone())));
        }
        if let Some(p) = self.flow.param_vals.last().and_then(|m| m.get(&id)) {
            return Ok(p.clone());
        }
        let db = self.code.def_block.get(&id).copied();
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
                        Ptr::Var { .. }
                        | Ptr::Image { .. }
                        | Ptr::Sampled { .. }
                        | Ptr::Texel { .. } => {}
                    }
                }
                Ok(FVal::P(Box::new(p)))
            }
            None => invalid(format!("%{id} used in a block it does not dominate")),
        }
    }

    pub(super) fn getv(&mut self, id: u32, blk: u32) -> Res<Value> {
        self.get(id, blk)?.v()
    }

    pub(super) fn type_tree(&mut self, t: u32, depth: u32) -> Res<VarTree> {
        if depth > 32 {
            return invalid("type nested too deep");
        }
        Ok(match self.stype(t)? {
            SType::Bool
            | SType::Int(_)
            | SType::Float(_)
            | SType::Vector(..)
            | SType::Pointer(spirv::StorageClass::PhysicalStorageBuffer, _) => {
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

    pub(super) fn load_tree(&mut self, t: &VarTree) -> Res<FVal> {
        Ok(match t {
            VarTree::Leaf(v) => {
                let ty = self.f.vars[v.0 as usize];
                FVal::V(self.emit(ty, Op::LoadVar(*v))?)
            }
            VarTree::Comp(c) => FVal::C(c.iter().map(|x| self.load_tree(x)).collect::<Res<_>>()?),
        })
    }

    pub(super) fn store_tree(&mut self, t: &VarTree, v: &FVal) -> Res<()> {
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
    pub(super) fn define(&mut self, id: u32, v: FVal) -> Res<()> {
        if self.code.demote.contains(&id) {
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
                        Ptr::Var { .. } | Ptr::Image { .. } | Ptr::Sampled { .. } => None,
                        Ptr::Texel { .. } => {
                            return unsupported("an image texel pointer used in another block")
                        }
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
                    let tree =
                        match self.demoted.get(&id) {
                            Some(Demoted::Val(t)) => t.clone(),
                            _ => {
                                let t =
                                    self.decl.result_types.get(&id).copied().ok_or_else(|| {
                                        FrontendError::Invalid("untyped id".into())
                                    })?;
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::check_ir;

    /// A value defined in one block and used in another goes through a function variable
    /// (stored where it is defined, loaded where it is used).
    #[test]
    fn value_used_in_another_block_is_demoted_to_a_variable() {
        check_ir(
            "value_used_in_another_block_is_demoted_to_a_variable",
            "
            OpDecorate %gid BuiltIn GlobalInvocationId
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %ptr_f = OpTypePointer Function %u32
            %c1 = OpConstant %u32 1
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_f Function
            %id = OpLoad %v3u32 %gid
            %id0 = OpCompositeExtract %u32 %id 0
            %y = OpIAdd %u32 %id0 %c1
            OpBranch %next
            %next = OpLabel
            OpStore %x %y
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:i32
                var $1:i32
                loop {
                    %0:i32 = const 0
                    store_var $0, %0
                    %1:i32x3 = sysval global_invocation_id
                    %2:i32 = extract %1, 0
                    %3:i32 = const 1
                    %4:i32 = iadd %2, %3
                    store_var $1, %4
                    %5:i32 = load_var $1
                    store_var $0, %5
                    break
                }
            }
            ",
        );
    }

    /// OpBitcast between a double and two 32-bit words goes through a 64-bit integer, in the
    /// shape of packDouble2x32 (low word first).
    #[test]
    fn bitcast_of_two_words_to_double_regroups_them() {
        check_ir(
            "bitcast_of_two_words_to_double_regroups_them",
            "
            OpCapability Float64
            OpDecorate %gid BuiltIn GlobalInvocationId
            %f64 = OpTypeFloat 64
            %v2u32 = OpTypeVector %u32 2
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %ptr_d = OpTypePointer Function %f64
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_d Function
            %id = OpLoad %v3u32 %gid
            %w = OpVectorShuffle %v2u32 %id %id 0 1
            %d = OpBitcast %f64 %w
            OpStore %x %d
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:f64
                loop {
                    %0:f64 = const 0.0
                    store_var $0, %0
                    %1:i32x3 = sysval global_invocation_id
                    %2:i32 = extract %1, 0
                    %3:i32 = extract %1, 1
                    %4:i32x2 = vec %2, %3
                    %5:i32 = extract %4, 0
                    %6:i32 = extract %4, 1
                    %7:i64 = u2u %5
                    %8:i64 = u2u %6
                    %9:i32 = const 32
                    %10:i64 = ishl %8, %9
                    %11:i64 = ior %7, %10
                    %12:f64 = bitcast %11
                    store_var $0, %12
                    break
                }
            }
            ",
        );
    }
}
