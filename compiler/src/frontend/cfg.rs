//! Structured control flow: inlined calls, regions of selection and loop constructs,
//! branches to loop and switch targets, escapes that cross several IR loops, and OpSwitch.

use super::types::SType;
use super::values::FVal;
use super::{invalid, op_id, unsupported, Fe, FrontendError, Res, MAX_DEPTH, MAX_STEPS};
use crate::ir::{self, AluOp, Kind, Node, Op, Type, Value, Var};
use rspirv::dr::{self, Operand};
use rspirv::spirv;

pub(super) const RETURN: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub(super) enum FrameKind {
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
pub(super) struct Frame {
    pub(super) kind: FrameKind,
    pub(super) esc: Option<Var>,
    pub(super) escapes: Vec<u32>,
}

impl Fe<'_> {
    pub(super) fn inline_call(
        &mut self,
        fid: u32,
        args: &[FVal],
        ret_ty: Option<u32>,
    ) -> Res<Option<FVal>> {
        if self.flow.call_depth > 64 {
            return unsupported("function calls nested more than 64 deep (recursion?)");
        }
        let (params, entry_block) = {
            let f = self
                .code
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
        self.flow
            .param_vals
            .push(params.iter().copied().zip(args.iter().cloned()).collect());
        let ret_tree = match ret_ty {
            Some(t) if !matches!(self.decl.types.get(&t), Some(SType::Void)) => {
                Some(self.type_tree(t, 0)?)
            }
            _ => None,
        };
        self.flow.ret_vars.push(ret_tree.clone());
        self.flow.call_depth += 1;
        // Function-scope variables are declared in the first block.
        self.in_loop_frame(FrameKind::Func, |this| this.region(entry_block, None, None))?;
        self.flow.call_depth -= 1;
        self.flow.ret_vars.pop();
        self.flow.param_vals.pop();
        match ret_tree {
            Some(t) => Ok(Some(self.load_tree(&t)?)),
            None => Ok(None),
        }
    }

    /// Emits a one-trip or real loop for a frame; `body` emits the frame's contents. Then
    /// dispatches the escapes that crossed it.
    pub(super) fn in_loop_frame(
        &mut self,
        kind: FrameKind,
        body: impl FnOnce(&mut Self) -> Res<()>,
    ) -> Res<()> {
        self.flow.frames.push(Frame {
            kind,
            esc: None,
            escapes: vec![],
        });
        let blk = self.in_block(|this| {
            body(this)?;
            // A frame whose body falls off its end leaves the one-trip loop.
            this.push(Node::Break(vec![]))
        });
        let frame = self.flow.frames.pop().unwrap();
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

    pub(super) fn is_frame_target(&self, b: u32) -> bool {
        self.flow.frames.iter().any(|f| match &f.kind {
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
    pub(super) fn jump(&mut self, target: u32) -> Res<()> {
        let n = self.flow.frames.len();
        // Find the frame the target belongs to.
        let mut found = None;
        for k in (0..n).rev() {
            let hit = match &self.flow.frames[k].kind {
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
            let fr = self.flow.frames.last_mut().unwrap();
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
                    self.flow.frames.last_mut().unwrap().esc = Some(e);
                    e
                }
            };
            let c = self.i32c(code)?;
            self.emit_void(Op::StoreVar(esc, c))?;
            return self.push(Node::Break(vec![]));
        }
        match self.flow.frames[k].kind.clone() {
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

    pub(super) fn continue_construct(&mut self, cont: u32, header: u32) -> Res<()> {
        // While emitting the continue construct, a branch to the continue target itself is
        // impossible; mark the frame so region() treats `cont` as a normal block.
        let k = self.flow.frames.len() - 1;
        let saved = self.flow.frames[k].kind.clone();
        if let FrameKind::Loop { merge, .. } = saved {
            self.flow.frames[k].kind = FrameKind::Loop {
                header,
                merge,
                cont: header,
            };
        }
        let r = self.region(cont, None, None);
        self.flow.frames[k].kind = saved;
        r
    }

    /// Phi stores for the CFG edge `from -> to`.
    pub(super) fn take_edge(&mut self, from: u32, to: u32) -> Res<()> {
        let Some(b) = self.code.blocks.get(&to) else {
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

    pub(super) fn merge_of(&self, b: u32) -> Res<Option<(spirv::Op, u32, Option<u32>)>> {
        let insts = &self
            .code
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
    pub(super) fn region(&mut self, start: u32, end: Option<u32>, from: Option<u32>) -> Res<()> {
        self.region_ex(start, end, from, false)
    }

    pub(super) fn region_ex(
        &mut self,
        start: u32,
        end: Option<u32>,
        from: Option<u32>,
        entry: bool,
    ) -> Res<()> {
        // Malformed (unstructured or cyclic) control flow could recurse or loop without
        // bound; structured shaders stay far below both limits.
        if self.flow.depth > MAX_DEPTH {
            return unsupported("control flow nested too deep (or not structured)");
        }
        self.flow.depth += 1;
        let r = self.region_inner(start, end, from, entry);
        self.flow.depth -= 1;
        r
    }

    pub(super) fn region_inner(
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
            self.flow.steps += 1;
            if self.flow.steps > MAX_STEPS {
                return unsupported("control flow too large to structure (or not structured)");
            }
            if !self.code.blocks.contains_key(&block) {
                return invalid(format!(
                    "branch to %{block}, which is not a block of this function"
                ));
            }
            if !(first && entry) && self.is_frame_target(block) {
                return self.jump(block);
            }
            first = false;
            if let Some((spirv::Op::LoopMerge, merge, Some(cont))) = self.merge_of(block)? {
                if !self.code.blocks.contains_key(&merge) || !self.code.blocks.contains_key(&cont) {
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
    pub(super) fn block_body(&mut self, b: u32) -> Res<Option<u32>> {
        let insts = self
            .code
            .blocks
            .get(&b)
            .ok_or_else(|| FrontendError::Invalid(format!("%{b} is not a block")))?
            .insts
            .clone();
        let (term, body) = insts
            .split_last()
            .ok_or_else(|| FrontendError::Invalid("empty block".into()))?;
        for i in body {
            self.no_contraction = i.result_id.is_some_and(|r| {
                self.deco(r, rspirv::spirv::Decoration::NoContraction)
                    .is_some()
            });
            let r = self.instruction(i, b);
            self.no_contraction = false;
            r?;
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
                let Some(Some(tree)) = self.flow.ret_vars.last().cloned() else {
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
    pub(super) fn edge_to_end(&mut self, _start: u32, _m: u32, _from: u32) -> Res<()> {
        Ok(())
    }

    pub(super) fn switch(&mut self, term: &dr::Instruction, b: u32) -> Res<Option<u32>> {
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
        targets.sort_by_key(|t| self.code.block_order.get(t).copied().unwrap_or(usize::MAX));
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
                        .code
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

    pub(super) fn case_region(&mut self, start: u32) -> Res<()> {
        // A branch to another case target is a fall-through (jump() sets the flag).
        self.region_ex(start, None, None, true)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::check_ir;

    /// OpSelectionMerge + OpBranchConditional become an `if`/`else`; the phi at the merge
    /// becomes a variable stored on each edge.
    #[test]
    fn selection_with_phi_becomes_if_else_and_variable() {
        check_ir(
            "selection_with_phi_becomes_if_else_and_variable",
            "
            OpDecorate %gid BuiltIn GlobalInvocationId
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %c0 = OpConstant %u32 0
            %c5 = OpConstant %u32 5
            %c9 = OpConstant %u32 9
            %ptr_f = OpTypePointer Function %u32
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_f Function
            %id = OpLoad %v3u32 %gid
            %i = OpCompositeExtract %u32 %id 0
            %c = OpIEqual %bool %i %c0
            OpSelectionMerge %merge None
            OpBranchConditional %c %then %else
            %then = OpLabel
            OpBranch %merge
            %else = OpLabel
            OpBranch %merge
            %merge = OpLabel
            %r = OpPhi %u32 %c5 %then %c9 %else
            OpStore %x %r
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
                    %3:i32 = const 0
                    %4:b1 = ieq %2, %3
                    if %4 {
                        %5:i32 = const 5
                        store_var $1, %5
                    } else {
                        %6:i32 = const 9
                        store_var $1, %6
                    }
                    %7:i32 = load_var $1
                    store_var $0, %7
                    break
                }
            }
            ",
        );
    }

    /// OpLoopMerge becomes a `loop` whose exit is a `break`; the continue construct is
    /// emitted at the branch to it.
    #[test]
    fn structured_loop_becomes_loop_with_break() {
        check_ir(
            "structured_loop_becomes_loop_with_break",
            "
            %c0 = OpConstant %u32 0
            %c1 = OpConstant %u32 1
            %c4 = OpConstant %u32 4
            %ptr_f = OpTypePointer Function %u32
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %n = OpVariable %ptr_f Function %c0
            OpBranch %header
            %header = OpLabel
            OpLoopMerge %merge %cont None
            OpBranch %body
            %body = OpLabel
            %v = OpLoad %u32 %n
            %c = OpULessThan %bool %v %c4
            OpBranchConditional %c %cont %merge
            %cont = OpLabel
            %w = OpIAdd %u32 %v %c1
            OpStore %n %w
            OpBranch %header
            %merge = OpLabel
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
                    loop {
                        %1:i32 = load_var $0
                        store_var $1, %1
                        %2:i32 = const 4
                        %3:b1 = ult %1, %2
                        if %3 {
                            %4:i32 = load_var $1
                            %5:i32 = const 1
                            %6:i32 = iadd %4, %5
                            store_var $0, %6
                            continue
                        } else {
                            break
                        }
                        break
                    }
                    break
                }
            }
            ",
        );
    }

    /// OpSwitch becomes a one-trip `loop` of guarded cases.
    #[test]
    fn switch_becomes_one_trip_loop_of_guarded_cases() {
        check_ir(
            "switch_becomes_one_trip_loop_of_guarded_cases",
            "
            OpDecorate %gid BuiltIn GlobalInvocationId
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %c1 = OpConstant %u32 1
            %c2 = OpConstant %u32 2
            %ptr_f = OpTypePointer Function %u32
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_f Function
            %id = OpLoad %v3u32 %gid
            %i = OpCompositeExtract %u32 %id 0
            OpSelectionMerge %merge None
            OpSwitch %i %default 3 %case3
            %case3 = OpLabel
            OpStore %x %c1
            OpBranch %merge
            %default = OpLabel
            OpStore %x %c2
            OpBranch %merge
            %merge = OpLabel
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:i32
                var $1:b1
                loop {
                    %0:i32 = const 0
                    store_var $0, %0
                    %1:i32x3 = sysval global_invocation_id
                    %2:i32 = extract %1, 0
                    %3:b1 = const false
                    store_var $1, %3
                    loop {
                        %4:i32 = const 3
                        %5:b1 = ieq %2, %4
                        %6:b1 = load_var $1
                        %7:b1 = ior %6, %5
                        if %7 {
                            %8:b1 = const false
                            store_var $1, %8
                            %9:i32 = const 1
                            store_var $0, %9
                            break
                        }
                        %10:i32 = const 3
                        %11:b1 = ieq %2, %10
                        %12:b1 = inot %11
                        %13:b1 = load_var $1
                        %14:b1 = ior %13, %12
                        if %14 {
                            %15:b1 = const false
                            store_var $1, %15
                            %16:i32 = const 2
                            store_var $0, %16
                            break
                        }
                        break
                    }
                    break
                }
            }
            ",
        );
    }

    /// A called function is inlined in a one-trip `loop` whose `break` is its return.
    #[test]
    fn function_call_is_inlined() {
        check_ir(
            "function_call_is_inlined",
            "
            %fn_u32 = OpTypeFunction %u32 %u32
            %c1 = OpConstant %u32 1
            %ptr_f = OpTypePointer Function %u32
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_f Function
            %r = OpFunctionCall %u32 %inc %c1
            OpStore %x %r
            OpReturn
            OpFunctionEnd
            %inc = OpFunction %u32 None %fn_u32
            %a = OpFunctionParameter %u32
            %inc_entry = OpLabel
            %b = OpIAdd %u32 %a %c1
            OpReturnValue %b
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
                    %1:i32 = const 1
                    loop {
                        %2:i32 = const 1
                        %3:i32 = iadd %1, %2
                        store_var $1, %3
                        break
                    }
                    %4:i32 = load_var $1
                    store_var $0, %4
                    break
                }
            }
            ",
        );
    }
}
