//! Selection of system values: lane and subgroup ids, workgroup and local ids.

use super::*;

impl Isel<'_> {
    pub(in crate::backend) fn lane(&mut self) -> Opnd {
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

    /// Each lane's byte offset `c * es` in a register of one `es`-byte element per lane
    /// (`es` 4 or 8), as UW words: one `shl` (`WE_all`) of the lane numbers' low words,
    /// computed where first needed and reused like them. A lane-relative shuffle builds its
    /// `a0` addresses from it (`LOp::Shuffle`).
    pub(in crate::backend) fn lane_bytes(&mut self, es: u32) -> Opnd {
        let k = usize::from(es == 8);
        if let Some(l) = self.lane_bytes[k] {
            return l;
        }
        let lane = self.lane();
        let w = self.w;
        let mut b = self.b();
        let t = b.vreg(Type::UW, 1);
        // The dword lane numbers' low words: a UW region of stride 2.
        let lo = Opnd {
            stride: 2,
            ..lane.retype(Type::UW)
        };
        b.at(w, 0, true).alu2(
            Opcode::Shl,
            t,
            lo,
            Opnd::imm(Type::UW, u64::from(es.trailing_zeros())),
        );
        self.lane_bytes[k] = Some(t);
        t
    }

    /// The subgroup id: the last dword of the per-thread CURBE register.
    pub(super) fn subgroup_id(&self) -> Opnd {
        let byte = 4 * CurbeLayout::SUBGROUP_ID_DWORD;
        Opnd::g(self.layout.per_thread_reg(), byte, Type::D, 0)
    }

    pub(super) fn sysval(&mut self, s: SysVal, dst: ir::Value) -> Res<()> {
        let w = self.w as u32;
        let drv = self.layout.driver_reg();
        let sgid = self.subgroup_id();
        let [sx, sy, sz] = self.local_size;
        match s {
            SysVal::SubgroupSize => {
                let n = self.subgroup_size;
                self.vals[dst.0 as usize] = Some(Val::Imm(vec![n as u64]));
                return Ok(());
            }
            SysVal::NumSubgroups => {
                // Hardware threads, whatever `SubgroupSize` reads (brw counts them the same).
                let t = (sx * sy * sz).div_ceil(w);
                self.vals[dst.0 as usize] = Some(Val::Imm(vec![t as u64]));
                return Ok(());
            }
            SysVal::SubgroupId if self.one_thread() => {
                self.vals[dst.0 as usize] = Some(Val::Imm(vec![0]));
                return Ok(());
            }
            // The lane numbers are never written again: read in place, no copy.
            SysVal::SubgroupInvocation => {
                let l = self.lane();
                self.vals[dst.0 as usize] = Some(Val::Reg(l, 4 * w));
                return Ok(());
            }
            SysVal::LocalInvocationIndex if self.one_thread() => {
                let l = self.lane();
                self.vals[dst.0 as usize] = Some(Val::Reg(l, 4 * w));
                return Ok(());
            }
            _ => {}
        }
        // Uniform system values are read from the payload as scalar regions, or computed
        // once per thread (see `def_scalar`).
        if !self.no_uniform {
            match s {
                SysVal::SubgroupId => {
                    self.vals[dst.0 as usize] = Some(Val::Reg(sgid, 4));
                    return Ok(());
                }
                SysVal::NumWorkgroups => {
                    let num = Opnd::g(drv, 4 * CurbeLayout::NUM_WORKGROUPS_DWORD, Type::D, 0);
                    self.vals[dst.0 as usize] = Some(Val::Reg(num, 4));
                    return Ok(());
                }
                SysVal::WorkgroupId => {
                    // A GRF per component, so that the LIR's dead-code elimination (per
                    // GRF) removes the unused ones.
                    let r = Builder::new(&mut self.prog, 1).vreg(Type::D, 24).scalar();
                    self.vals[dst.0 as usize] = Some(Val::Reg(r, 32));
                    self.scalar = true;
                    for c in 0..3 {
                        self.workgroup_id_comp(c, r.offset(32 * c));
                    }
                    self.scalar = false;
                    return Ok(());
                }
                _ => {}
            }
        }
        let d = self.def_reg(dst)?;
        let st = 4 * w;
        match s {
            SysVal::SubgroupId => {
                self.b().mov(d, sgid);
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
                // The workgroup id once per thread (components 4 bytes apart), or per
                // channel (`4 * w` bytes apart).
                let (wg, wst) = if self.no_uniform {
                    let wg = self.b().vreg(Type::D, 3);
                    self.workgroup_id(wg)?;
                    (wg, st)
                } else {
                    let wg = Builder::new(&mut self.prog, 1).vreg(Type::D, 24).scalar();
                    self.scalar = true;
                    for c in 0..3 {
                        self.workgroup_id_comp(c, wg.offset(32 * c));
                    }
                    self.scalar = false;
                    (wg, 32)
                };
                let lid = self.b().vreg(Type::D, 3);
                self.local_id(lid);
                let ls = self.local_size;
                for c in 0..3u32 {
                    let mut b = self.b();
                    if ls[c as usize] == 1 {
                        // One invocation along c: the local id is 0, the global id the
                        // workgroup's.
                        b.mov(d.offset(c * st), wg.offset(c * wst));
                        continue;
                    }
                    b.alu2(
                        Opcode::Mul,
                        d.offset(c * st),
                        wg.offset(c * wst),
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
            SysVal::SubgroupSize | SysVal::NumSubgroups | SysVal::SubgroupInvocation => {
                unreachable!()
            }
        }
        Ok(())
    }

    pub(super) fn workgroup_id(&mut self, d: Opnd) -> Res<()> {
        let st = 4 * self.w as u32;
        for c in 0..3 {
            self.workgroup_id_comp(c, d.offset(c * st));
        }
        Ok(())
    }

    /// Component `c` of the workgroup id into `d`: R0's group id plus the dispatch's base
    /// workgroup from the driver register.
    fn workgroup_id_comp(&mut self, c: u32, d: Opnd) {
        let drv = self.layout.driver_reg();
        let dw = [1u32, 6, 7][c as usize];
        self.b().alu2(
            Opcode::Add,
            d,
            Opnd::g(0, 4 * dw, Type::D, 0),
            Opnd::g(drv, 4 * (CurbeLayout::BASE_WORKGROUP_DWORD + c), Type::D, 0),
        );
    }

    /// The workgroup is one hardware thread: its subgroup id is 0 and the local index the
    /// lane number (the channels past the workgroup are not dispatched).
    pub(super) fn one_thread(&self) -> bool {
        let [sx, sy, sz] = self.local_size;
        sx * sy * sz <= self.w as u32
    }

    pub(super) fn local_index(&mut self, d: Opnd) {
        let w = self.w as u32;
        let sgid = self.subgroup_id();
        let lane = self.lane();
        let one = self.one_thread();
        let mut b = self.b();
        if one {
            b.mov(d, lane);
            return;
        }
        b.alu2(Opcode::Shl, d, sgid, Opnd::d(w.trailing_zeros() as i32));
        b.alu2(Opcode::Add, d, d, lane);
    }

    pub(super) fn local_id(&mut self, d: Opnd) {
        let st = 4 * self.w as u32;
        let [sx, sy, sz] = self.local_size;
        let (x, y, z) = (d, d.offset(st), d.offset(2 * st));
        if sy * sz == 1 {
            // idx < sx: x is the local index itself, y and z are 0.
            self.local_index(x);
            let mut b = self.b();
            b.mov(y.retype(Type::UD), Opnd::ud(0));
            b.mov(z.retype(Type::UD), Opnd::ud(0));
            return;
        }
        let idx = if self.one_thread() {
            self.lane()
        } else {
            let idx = self.b().vreg(Type::D, 1);
            self.local_index(idx);
            idx
        };
        // x = idx mod sx, y = (idx / sx) mod sy, z = idx / (sx*sy); where sz is 1,
        // idx / sx < sy needs no modulo.
        self.udivmod(Some(x), None, idx, sx);
        if sz == 1 {
            self.udivmod(None, Some(y), idx, sx);
            let mut b = self.b();
            b.mov(z.retype(Type::UD), Opnd::ud(0));
            return;
        }
        let q = self.b().vreg(Type::D, 1);
        self.udivmod(None, Some(q), idx, sx);
        self.udivmod(Some(y), None, q, sy);
        self.udivmod(None, Some(z), idx, sx * sy);
    }

    /// Unsigned remainder / quotient by a constant.
    pub(super) fn udivmod(&mut self, rem: Option<Opnd>, quot: Option<Opnd>, a: Opnd, k: u32) {
        let mut b = self.b();
        let (a, k) = (a.retype(Type::UD), k.max(1));
        if k == 1 {
            // x mod 1 = 0, x / 1 = x: no `and x, 0` / `shr x, 0` for a size of one.
            if let Some(r) = rem {
                b.mov(r.retype(Type::UD), Opnd::ud(0));
            }
            if let Some(q) = quot {
                b.mov(q.retype(Type::UD), a);
            }
        } else if k.is_power_of_two() {
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
}

#[cfg(test)]
mod tests {
    use crate::backend::{compile, BackendOptions};
    use crate::parse::parse_shader;

    /// Along a workgroup dimension of one invocation the local id is 0 and the global id
    /// the workgroup's: no `and x, 0`, `shr x, 0` or multiply by 1 is emitted for it.
    #[test]
    fn dimensions_of_one_invocation_take_the_workgroup_id() {
        let s = parse_shader(
            "shader local_size 1 1 1 shared 0 local 0 push 0
            %0:i32x3 = sysval global_invocation_id
            %1:i32 = extract %0, 0
            %2:i32 = extract %0, 1
            %3:i32 = extract %0, 2
            %4:i32 = iadd %1, %2
            %5:i32 = iadd %4, %3
            %6:i32 = const 4
            %7:i32 = imul %1, %6
            store ssbo[0] %7, %5 align 4",
        )
        .unwrap();
        for simd in [8u32, 16, 32] {
            let k = compile(&s, &BackendOptions::gen9_at(simd)).unwrap();
            let ctx = format!("SIMD{simd}:\n{}", k.asm);
            for bad in ["0x00000000UD    {", "  1D    "] {
                let n = k
                    .asm
                    .lines()
                    .filter(|l| {
                        (l.contains("and(") || l.contains("shr(") || l.contains("mul("))
                            && l.contains(bad)
                    })
                    .count();
                assert_eq!(n, 0, "`{bad}`: {ctx}");
            }
        }
    }

    fn asm_of(text: &str, simd: u32) -> String {
        let s = parse_shader(text).unwrap();
        compile(&s, &BackendOptions::gen9_at(simd)).unwrap().asm
    }

    /// A workgroup of one thread: the local index is the lane number, without the
    /// subgroup id's `shl` and `add` that a larger workgroup needs.
    #[test]
    fn one_thread_workgroup_reads_the_lane_number() {
        let text = |n: u32| {
            format!(
                "shader local_size {n} 1 1 shared 0 local 0 push 0
                %0:i32 = sysval local_invocation_index
                %1:i32 = sysval subgroup_id
                %2:i32 = iadd %0, %1
                %3:i32 = const 4
                %4:i32 = imul %0, %3
                store ssbo[0] %4, %2 align 4"
            )
        };
        for simd in [8u32, 16, 32] {
            let count = |n| {
                asm_of(&text(n), simd)
                    .lines()
                    .filter(|l| l.contains("add(") || l.contains("shl("))
                    .count()
            };
            // One thread: the lanes' `add`s (none at SIMD8) and the address `shl`; the
            // larger workgroup adds `shl` and `add` of the subgroup id.
            let (one, many) = (count(simd), count(4 * simd));
            assert!(one + 2 <= many, "SIMD{simd}: {one} vs {many}");
        }
    }

    /// A one-dimensional workgroup's local id x is its local index: no `and` (modulo).
    #[test]
    fn one_dimensional_local_id_is_the_local_index() {
        let a = asm_of(
            "shader local_size 64 1 1 shared 0 local 0 push 0
            %0:i32x3 = sysval local_invocation_id
            %1:i32 = extract %0, 0
            %2:i32 = extract %0, 1
            %3:i32 = iadd %1, %2
            %4:i32 = const 4
            %5:i32 = imul %1, %4
            store ssbo[0] %5, %3 align 4",
            16,
        );
        assert!(!a.lines().any(|l| l.contains("and(")), "{a}");
    }
}
