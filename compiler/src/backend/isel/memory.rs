//! Selection of memory addressing: surfaces, addresses, buffer sizes, 64-bit atomics and
//! push-constant loads.

use super::*;

impl Isel<'_> {
    pub(super) fn surface(&self, s: Space) -> Res<Surface> {
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
    pub(super) fn address(&mut self, space: Space, offset: ir::Value) -> Res<Opnd> {
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
    pub(super) fn indexed_buffer_size(&mut self, d: ir::Value, x: ir::BufIndex) -> Res<()> {
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
    pub(in crate::backend) fn instr_on_surface(&mut self, i: &ir::Instr, surf: Surface) -> Res<()> {
        self.indexed_surface = Some(surf);
        let r = self.instr(i);
        self.indexed_surface = None;
        r
    }

    /// A 64-bit atomic at the 64-bit addresses `addr`: the A64 untyped atomic with 64-bit
    /// data (docs/gen9.md 4.2). An atomic load is an OR with 0 that returns the old value,
    /// so it reads the qword in one access as the atomic does.
    pub(super) fn atomic64(
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
    /// accesses are), so the index need not be uniform; an index in a scalar register picks
    /// it once per thread, in `mov(1)`s.
    pub(super) fn buffer_atomic64(
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
        // Base address (UQ) and size (UD) of each channel's buffer; one scalar pair when the
        // index is one value for the thread (in a scalar register) or there is none.
        let uniform = idx.is_none_or(|i| i.is_scalar());
        let (mut base, mut size) = {
            let mut full = self.b();
            let (exec, group, we_all) = match uniform {
                true => (1, 0, true),
                false => (full.exec, full.group, full.we_all),
            };
            let mut b = full.at(exec, group, we_all);
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
            (base, size)
        };
        if uniform {
            (base, size) = (base.scalar(), size.scalar());
        }
        let mut b = self.b();
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

    /// A push-constant load at a run-time offset, of a type [`push_gathers`] accepts: a
    /// gather per component from the CURBE registers ([`Lanes::Table`] over the push
    /// registers' dwords: `a0` addresses and one VxH indirect `mov` per 16 channels), as brw
    /// reads pushed uniforms at run-time offsets (`MOV_INDIRECT`), instead of a message to
    /// the push-constant surface. The offset is a multiple of 4 (32-bit data); an offset past
    /// the push registers reads their last dword (undefined in Vulkan).
    pub(super) fn push_gather(&mut self, d: ir::Value, offset: ir::Value) -> Res<()> {
        let t = self.func.ty(d);
        self.def_reg(d)?;
        let dwords = u32::from(self.layout.push_regs) * 8;
        let idx = self.word_index(offset)?;
        let w = self.w;
        for c in 0..u32::from(t.comps) {
            if c >= dwords {
                return Err(unsupported("push-constant vector beyond the push range"));
            }
            let dst = self.dst_comp(d, c as usize).retype(Type::UD);
            // Component c reads the table from dword c on.
            self.b().inst(
                LOp::Shuffle {
                    width: w,
                    lanes: Lanes::Table {
                        count: (dwords - c) as u8,
                        shift: 2,
                        own: false,
                    },
                },
                dst,
                vec![Opnd::g(1, 4 * c, Type::UD, 1), idx],
            );
        }
        Ok(())
    }

    /// A push-constant load at a constant offset: moves from the CURBE registers.
    pub(super) fn push_load(&mut self, d: ir::Value, offset: ir::Value) -> Res<()> {
        let t = self.func.ty(d);
        let off = match self.vals[offset.0 as usize] {
            Some(Val::Imm(ref b)) => b[0] as u32,
            _ => {
                return Err(BackendError::Internal(
                    "push-constant load from the CURBE at a dynamic offset".into(),
                ))
            }
        };
        let ty = hw_ty(t)?;
        let size = t.comp_bytes();
        if !self.no_uniform && !wide::is_wide(t) && !narrow::is_narrow(t) {
            // Read in place by every channel as a scalar region (the payload registers are
            // never written by the kernel): no copy.
            let end = off + size * t.comps as u32;
            if end > 32 * self.layout.push_regs as u32 {
                return Err(unsupported(format!(
                    "push constant byte {} beyond push range",
                    end - size
                )));
            }
            let o = Opnd::g(1, off, ty, 0);
            self.vals[d.0 as usize] = Some(Val::Reg(o, size));
            return Ok(());
        }
        let dst = self.def_reg(d)?;
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
}

/// Whether a push-constant load of type `t` at a run-time offset gathers from the CURBE
/// registers ([`Isel::push_gather`]): 32-bit scalars and vectors. 8/16- and 64-bit ones
/// read the push-constant surface.
pub(in crate::backend) fn push_gathers(t: ir::Type) -> bool {
    t.bits == 32 && matches!(t.kind, ir::Kind::Int | ir::Kind::Float) && t.comps <= 4
}
