//! Zero-initialized workgroup memory (VK_KHR_zero_initialize_workgroup_memory, core in
//! Vulkan 1.3): a `Workgroup` variable may carry an `OpConstantNull` initializer. Shared local
//! memory starts with whatever an earlier group left there, so when any such variable exists
//! the kernel first zeroes the whole SLM range the shader uses, cooperatively: invocation `i`
//! of the group stores zero dwords at byte offsets `4 * (i + k * n)` for `k = 0, 1, ...` while
//! they lie below the end (`n` = the workgroup's invocation count, so a size that does not
//! divide the range leaves a partial last round), then a workgroup barrier makes the zeroes
//! visible before the shader's own first access. Variables without an initializer have
//! undefined contents, so zeroing them too is allowed and keeps the loop to one range.

use super::{unsupported, Fe, Res};
use crate::ir::{self, AluOp, Node, Op, Scope, Space, SysVal, Type};
use crate::specconst::Const;
use rspirv::dr;
use rspirv::spirv::{self, StorageClass};

/// SPIR-V memory semantics of the barrier after the zeroing: AcquireRelease | WorkgroupMemory.
const ACQ_REL_WORKGROUP: u32 = 0x8 | 0x100;

fn is_zero(c: &Const) -> bool {
    match c {
        Const::Scalar(v) => *v == 0,
        Const::Comp(m) => m.iter().all(is_zero),
    }
}

impl Fe<'_> {
    /// Whether a `Workgroup` variable of `m` has an initializer; refuses one that is not zero
    /// (the extension allows only `OpConstantNull`).
    fn shared_initializers(&self, m: &dr::Module) -> Res<bool> {
        let mut any = false;
        for i in &m.types_global_values {
            if i.class.opcode != spirv::Op::Variable {
                continue;
            }
            let Some(id) = i.result_id else { continue };
            if !matches!(
                self.decl.globals.get(&id),
                Some((StorageClass::Workgroup, _))
            ) {
                continue;
            }
            let Some(dr::Operand::IdRef(init)) = i.operands.get(1) else {
                continue;
            };
            match self.decl.consts.get(init) {
                Some((_, c)) if is_zero(c) => any = true,
                _ => {
                    return unsupported(format!(
                        "Workgroup variable %{id} with an initializer other than OpConstantNull"
                    ))
                }
            }
        }
        Ok(any)
    }

    /// Emits the zeroing prologue when a `Workgroup` variable has a null initializer.
    pub(super) fn zero_shared_memory(&mut self, m: &dr::Module) -> Res<()> {
        if !self.shared_initializers(m)? || self.iface.shared_size == 0 {
            return Ok(());
        }
        // Dword stores: the range is rounded up to whole dwords (within the SLM allocation,
        // which the hardware grants in kilobytes).
        let end = self.iface.shared_size.next_multiple_of(4);
        self.iface.shared_size = end;
        let n: u32 = self.iface.local_size.iter().product();
        let index = self.emit(Type::I32, Op::SysVal(SysVal::LocalInvocationIndex))?;
        let four = self.i32c(4)?;
        let first = self.alu(AluOp::Imul, Type::I32, &[index, four])?;
        let var = self.f.new_var(Type::I32);
        self.emit_void(Op::StoreVar(var, first))?;
        let body = self.in_block(|this| {
            let off = this.emit(Type::I32, Op::LoadVar(var))?;
            let limit = this.i32c(end)?;
            let done = this.alu(AluOp::Uge, Type::B1, &[off, limit])?;
            let leave = this.in_block(|t| t.push(Node::Break(vec![])))?;
            this.push(Node::If(Box::new(ir::If {
                cond: done,
                then_: leave,
                else_: vec![],
                results: vec![],
            })))?;
            let zero = this.i32c(0)?;
            this.emit_void(Op::Store {
                space: Space::Shared,
                offset: off,
                value: zero,
                align: 4,
            })?;
            let step = this.i32c(4 * n)?;
            let next = this.alu(AluOp::Iadd, Type::I32, &[off, step])?;
            this.emit_void(Op::StoreVar(var, next))?;
            this.push(Node::Continue(vec![]))
        })?;
        self.push(Node::Loop(Box::new(ir::Loop {
            params: vec![],
            body,
            results: vec![],
        })))?;
        self.emit_void(Op::Barrier {
            exec: Some(Scope::Workgroup),
            mem: Scope::Workgroup,
            semantics: ACQ_REL_WORKGROUP,
        })
    }
}
