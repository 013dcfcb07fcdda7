//! Reference interpreter for Ferrite IR. It runs a whole workgroup in lockstep, one lane per
//! invocation, with per-lane execution masks through structured control flow (as the EU
//! does), so barriers are trivially satisfied and divergent control flow is exercised.
//! Used to test the front end and every pass end to end without a back end.

use crate::eval::eval_alu_vec;
use crate::ir::*;
use std::collections::HashMap;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InterpError {
    #[error("out-of-bounds {space} access at byte {offset} (+{size}) of {len}")]
    OutOfBounds {
        space: String,
        offset: u64,
        size: u32,
        len: usize,
    },
    #[error("buffer {0} is not bound")]
    Unbound(String),
    #[error("loop ran more than {0} iterations")]
    Runaway(u64),
    #[error("value {0} read before it was written")]
    Uninit(Value),
    #[error("the interpreter does not model {0}")]
    Unsupported(String),
}

/// Buffers the shader reads and writes, by binding-table index.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    pub ssbo: HashMap<u32, Vec<u8>>,
    pub ubo: HashMap<u32, Vec<u8>>,
    pub push: Vec<u8>,
}

enum Ctx {
    If {
        results: Vec<Value>,
        yielded: Vec<bool>,
    },
    Loop {
        results: Vec<Value>,
        /// Per parameter: the next iteration's value per lane (comps interleaved).
        pending: Vec<Vec<u64>>,
        broke: Vec<bool>,
        cont: Vec<bool>,
    },
}

struct Group<'a> {
    shader: &'a Shader,
    mem: &'a mut Memory,
    lanes: usize,
    vals: Vec<Vec<u64>>,
    vars: Vec<Vec<u64>>,
    shared: Vec<u8>,
    local: Vec<Vec<u8>>,
    ctx: Vec<Ctx>,
    wg_id: [u32; 3],
    num_groups: [u32; 3],
    subgroup_size: u32,
    steps: u64,
    max_steps: u64,
}

/// Most loop iterations one workgroup may run before the interpreter reports a runaway.
const MAX_STEPS: u64 = 1 << 24;

impl Group<'_> {
    fn comps(&self, v: Value) -> usize {
        usize::from(self.shader.func.ty(v).comps)
    }

    fn get(&self, v: Value, lane: usize) -> Result<&[u64], InterpError> {
        let n = self.comps(v);
        let s = &self.vals[v.0 as usize];
        if s.is_empty() {
            return Err(InterpError::Uninit(v));
        }
        Ok(&s[lane * n..lane * n + n])
    }

    fn set(&mut self, v: Value, lane: usize, data: &[u64]) {
        let n = self.comps(v);
        let lanes = self.lanes;
        let s = &mut self.vals[v.0 as usize];
        if s.is_empty() {
            s.resize(lanes * n, 0);
        }
        s[lane * n..lane * n + n].copy_from_slice(data);
    }

    fn buffer(&mut self, space: Space, lane: usize) -> Result<&mut Vec<u8>, InterpError> {
        // A descriptor array element: the lane's index, clamped to the array (as the
        // back end does).
        let element = |g: &Self, x: &BufIndex| -> Result<u32, InterpError> {
            let i = g.get(x.index, lane)?[0] as u32;
            Ok(x.base + i.min(x.count.saturating_sub(1)))
        };
        let space = match space.array() {
            Some(x) => space.element(element(self, &x)?),
            None => space,
        };
        Ok(match space {
            Space::Ssbo(b) => self
                .mem
                .ssbo
                .get_mut(&b)
                .ok_or_else(|| InterpError::Unbound(space.to_string()))?,
            Space::Ubo(b) => self
                .mem
                .ubo
                .get_mut(&b)
                .ok_or_else(|| InterpError::Unbound(space.to_string()))?,
            Space::Push => &mut self.mem.push,
            Space::Shared => &mut self.shared,
            Space::Local => &mut self.local[lane],
            // The interpreter models bound buffers only, not a 64-bit address space.
            Space::SsboArray(_) | Space::UboArray(_) | Space::Global(_) => {
                return Err(InterpError::Unbound(space.to_string()))
            }
        })
    }

    /// The `ty.bytes()` bytes at `off` in the buffer behind `space`, or an out-of-bounds error.
    fn mem_bytes(
        &mut self,
        space: Space,
        lane: usize,
        off: u64,
        ty: Type,
    ) -> Result<&mut [u8], InterpError> {
        let size = ty.bytes();
        let buf = self.buffer(space, lane)?;
        let len = buf.len();
        if off + u64::from(size) > len as u64 {
            return Err(InterpError::OutOfBounds {
                space: space.to_string(),
                offset: off,
                size,
                len,
            });
        }
        Ok(&mut buf[off as usize..off as usize + size as usize])
    }

    fn mem_read(
        &mut self,
        space: Space,
        lane: usize,
        off: u64,
        ty: Type,
    ) -> Result<Vec<u64>, InterpError> {
        let cb = ty.comp_bytes() as usize;
        let bytes = self.mem_bytes(space, lane, off, ty)?;
        Ok((0..usize::from(ty.comps))
            .map(|c| {
                let mut b = [0u8; 8];
                b[..cb].copy_from_slice(&bytes[c * cb..c * cb + cb]);
                u64::from_le_bytes(b) & ty.mask()
            })
            .collect())
    }

    fn mem_write(
        &mut self,
        space: Space,
        lane: usize,
        off: u64,
        ty: Type,
        data: &[u64],
    ) -> Result<(), InterpError> {
        let cb = ty.comp_bytes() as usize;
        let bytes = self.mem_bytes(space, lane, off, ty)?;
        for (c, d) in data.iter().enumerate() {
            bytes[c * cb..c * cb + cb].copy_from_slice(&d.to_le_bytes()[..cb]);
        }
        Ok(())
    }

    fn sysval(&self, s: SysVal, lane: usize) -> Vec<u64> {
        let ls = self.shader.local_size;
        let l = lane as u32;
        let lid = [l % ls[0], (l / ls[0]) % ls[1], l / (ls[0] * ls[1])];
        let sg = self.subgroup_size.max(1);
        let v: Vec<u32> = match s {
            SysVal::GlobalInvocationId => (0..3).map(|i| self.wg_id[i] * ls[i] + lid[i]).collect(),
            SysVal::LocalInvocationId => lid.to_vec(),
            SysVal::LocalInvocationIndex => vec![l],
            SysVal::WorkgroupId => self.wg_id.to_vec(),
            SysVal::NumWorkgroups => self.num_groups.to_vec(),
            SysVal::SubgroupSize => vec![sg],
            SysVal::SubgroupId => vec![l / sg],
            SysVal::SubgroupInvocation => vec![l % sg],
            SysVal::NumSubgroups => vec![(self.lanes as u32).div_ceil(sg)],
        };
        v.into_iter().map(u64::from).collect()
    }

    /// A subgroup operation: the workgroup's invocations in subgroups of `subgroup_size`
    /// consecutive local indices, each evaluated over its active invocations.
    fn subgroup(
        &mut self,
        op: SubgroupOp,
        srcs: &[Value],
        dst: Option<Value>,
        active: &[bool],
    ) -> Result<(), InterpError> {
        let sg = self.subgroup_size.max(1) as usize;
        let Some(d) = dst else { return Ok(()) };
        let dt = self.shader.func.ty(d);
        for base in (0..self.lanes).step_by(sg) {
            let end = (base + sg).min(self.lanes);
            let mut cols = Vec::new();
            for s in srcs {
                let mut col = Vec::new();
                for lane in base..end {
                    col.push(if active[lane] {
                        Some(self.get(*s, lane)?[0])
                    } else {
                        None
                    });
                }
                cols.push(col);
            }
            if cols.is_empty() {
                cols.push((base..end).map(|l| active[l].then_some(0)).collect());
            }
            let t = srcs
                .first()
                .map_or(Type::I32, |&s| self.shader.func.ty(s).scalar_type());
            let out = eval_subgroup(op, t, &cols);
            for (k, r) in out.into_iter().enumerate() {
                if let Some(mut r) = r {
                    if dt.is_bool() {
                        r = r
                            .iter()
                            .map(|&b| if b != 0 { dt.mask() } else { 0 })
                            .collect();
                    }
                    self.set(d, base + k, &r);
                }
            }
        }
        Ok(())
    }

    fn instr(&mut self, i: &Instr, active: &[bool]) -> Result<(), InterpError> {
        if let Op::Subgroup(op, srcs) = &i.op {
            return self.subgroup(*op, srcs, i.dst, active);
        }
        if let Op::Image(..) = &i.op {
            return Err(InterpError::Unsupported("image access".into()));
        }
        let f = &self.shader.func;
        let dt = i.dst.map(|d| f.ty(d));
        for lane in 0..self.lanes {
            if !active[lane] {
                continue;
            }
            let out: Option<Vec<u64>> = match &i.op {
                Op::Image(..) => return Err(InterpError::Unsupported("image access".into())),
                Op::Const(c) => Some(c.clone()),
                Op::Alu(op, srcs) => {
                    let tys: Vec<Type> = srcs.iter().map(|s| f.ty(*s)).collect();
                    let mut vals = Vec::new();
                    for s in srcs {
                        vals.push(self.get(*s, lane)?);
                    }
                    Some(eval_alu_vec(*op, dt.unwrap(), &tys, &vals))
                }
                Op::Vec(srcs) => {
                    let mut v = Vec::new();
                    for s in srcs {
                        v.extend_from_slice(self.get(*s, lane)?);
                    }
                    Some(v)
                }
                Op::Extract(v, c) => Some(vec![self.get(*v, lane)?[usize::from(*c)]]),
                Op::Insert(v, s, c) => {
                    let mut x = self.get(*v, lane)?.to_vec();
                    x[usize::from(*c)] = self.get(*s, lane)?[0];
                    Some(x)
                }
                Op::Swizzle(v, c) => {
                    let x = self.get(*v, lane)?;
                    Some(c.iter().map(|k| x[usize::from(*k)]).collect())
                }
                Op::LoadVar(v) => {
                    let n = usize::from(f.vars[v.0 as usize].comps);
                    Some(self.vars[v.0 as usize][lane * n..lane * n + n].to_vec())
                }
                Op::StoreVar(v, x) => {
                    let n = usize::from(f.vars[v.0 as usize].comps);
                    let d = self.get(*x, lane)?.to_vec();
                    self.vars[v.0 as usize][lane * n..lane * n + n].copy_from_slice(&d);
                    None
                }
                Op::Load { space, offset, .. } => {
                    let off = self.get(*offset, lane)?[0];
                    Some(self.mem_read(*space, lane, off, dt.unwrap())?)
                }
                Op::Store {
                    space,
                    offset,
                    value,
                    ..
                } => {
                    let off = self.get(*offset, lane)?[0];
                    let d = self.get(*value, lane)?.to_vec();
                    let ty = f.ty(*value);
                    self.mem_write(*space, lane, off, ty, &d)?;
                    None
                }
                Op::Atomic {
                    op,
                    space,
                    offset,
                    data,
                } => {
                    let ty = dt.unwrap_or(Type::I32);
                    let off = self.get(*offset, lane)?[0];
                    let old = self.mem_read(*space, lane, off, ty)?[0];
                    let d: Vec<u64> = data
                        .iter()
                        .map(|x| self.get(*x, lane).map(|v| v[0]))
                        .collect::<Result<_, _>>()?;
                    let m = ty.mask();
                    let sx = |x: u64| sign_extend(x, ty.bits);
                    let new = match op {
                        AtomicOp::Add => old.wrapping_add(d[0]),
                        AtomicOp::Sub => old.wrapping_sub(d[0]),
                        AtomicOp::Smin => sx(old).min(sx(d[0])) as u64,
                        AtomicOp::Smax => sx(old).max(sx(d[0])) as u64,
                        AtomicOp::Umin => old.min(d[0]),
                        AtomicOp::Umax => old.max(d[0]),
                        AtomicOp::And => old & d[0],
                        AtomicOp::Or => old | d[0],
                        AtomicOp::Xor => old ^ d[0],
                        AtomicOp::Xchg => d[0],
                        // data[0] is the value to write, data[1] the comparator.
                        AtomicOp::CmpXchg => {
                            if old == d[1] {
                                d[0]
                            } else {
                                old
                            }
                        }
                        AtomicOp::Inc => old.wrapping_add(1),
                        AtomicOp::Dec => old.wrapping_sub(1),
                        AtomicOp::Load => old,
                    } & m;
                    self.mem_write(*space, lane, off, ty, &[new])?;
                    Some(vec![old])
                }
                Op::SysVal(s) => Some(self.sysval(*s, lane)),
                Op::BufferSize(space) => {
                    Some(vec![self.buffer(*space, lane)?.len() as u64 & 0xffff_ffff])
                }
                Op::Barrier { .. } => None,
                Op::Subgroup(..) => unreachable!("handled by Group::subgroup"),
            };
            if let (Some(d), Some(v)) = (i.dst, out) {
                self.set(d, lane, &v);
            }
        }
        Ok(())
    }

    fn copy_lanes(
        &mut self,
        from: &[Value],
        to: &[Value],
        active: &[bool],
    ) -> Result<(), InterpError> {
        for lane in 0..self.lanes {
            if active[lane] {
                let data: Vec<Vec<u64>> = from
                    .iter()
                    .map(|v| self.get(*v, lane).map(|x| x.to_vec()))
                    .collect::<Result<_, _>>()?;
                for (t, d) in to.iter().zip(data) {
                    self.set(*t, lane, &d);
                }
            }
        }
        Ok(())
    }

    fn block(&mut self, b: &[Node], active: &mut Vec<bool>) -> Result<(), InterpError> {
        for n in b {
            if !active.iter().any(|x| *x) {
                return Ok(());
            }
            match n {
                Node::Instr(i) => self.instr(i, active)?,
                Node::If(i) => {
                    let mut then_m = vec![false; self.lanes];
                    let mut else_m = vec![false; self.lanes];
                    for lane in 0..self.lanes {
                        if active[lane] {
                            let c = self.get(i.cond, lane)?[0] != 0;
                            then_m[lane] = c;
                            else_m[lane] = !c;
                        }
                    }
                    let mut out = vec![false; self.lanes];
                    for (arm, mut m) in [(&i.then_, then_m), (&i.else_, else_m)] {
                        self.ctx.push(Ctx::If {
                            results: i.results.clone(),
                            yielded: vec![false; self.lanes],
                        });
                        self.block(arm, &mut m)?;
                        let Some(Ctx::If { yielded, .. }) = self.ctx.pop() else {
                            unreachable!()
                        };
                        for lane in 0..self.lanes {
                            out[lane] |= m[lane] || yielded[lane];
                        }
                    }
                    *active = out;
                }
                Node::Loop(l) => {
                    let params: Vec<Value> = l.params.iter().map(|p| p.0).collect();
                    let inits: Vec<Value> = l.params.iter().map(|p| p.1).collect();
                    self.copy_lanes(&inits, &params, active)?;
                    let mut running = active.clone();
                    let mut broke_all = vec![false; self.lanes];
                    while running.iter().any(|x| *x) {
                        self.steps += 1;
                        if self.steps > self.max_steps {
                            return Err(InterpError::Runaway(self.max_steps));
                        }
                        self.ctx.push(Ctx::Loop {
                            results: l.results.clone(),
                            pending: params
                                .iter()
                                .map(|p| vec![0; self.lanes * self.comps(*p)])
                                .collect(),
                            broke: vec![false; self.lanes],
                            cont: vec![false; self.lanes],
                        });
                        let mut m = running.clone();
                        self.block(&l.body, &mut m)?;
                        let Some(Ctx::Loop {
                            pending,
                            broke,
                            cont,
                            ..
                        }) = self.ctx.pop()
                        else {
                            unreachable!()
                        };
                        for lane in 0..self.lanes {
                            broke_all[lane] |= broke[lane];
                            running[lane] = cont[lane] || m[lane];
                            if cont[lane] {
                                for (k, p) in params.iter().enumerate() {
                                    let n = self.comps(*p);
                                    let d = pending[k][lane * n..lane * n + n].to_vec();
                                    self.set(*p, lane, &d);
                                }
                            }
                        }
                    }
                    *active = broke_all;
                }
                Node::Break(v) | Node::Continue(v) => {
                    let is_break = matches!(n, Node::Break(_));
                    let lanes = self.lanes;
                    let data: Vec<Vec<Option<Vec<u64>>>> = v
                        .iter()
                        .map(|x| {
                            (0..lanes)
                                .map(|l| {
                                    if active[l] {
                                        self.get(*x, l).map(|d| Some(d.to_vec()))
                                    } else {
                                        Ok(None)
                                    }
                                })
                                .collect::<Result<_, _>>()
                        })
                        .collect::<Result<_, _>>()?;
                    let idx = self
                        .ctx
                        .iter()
                        .rposition(|c| matches!(c, Ctx::Loop { .. }))
                        .expect("validated: jump inside loop");
                    let mut writes = Vec::new();
                    if let Ctx::Loop {
                        results,
                        pending,
                        broke,
                        cont,
                    } = &mut self.ctx[idx]
                    {
                        for lane in 0..lanes {
                            if !active[lane] {
                                continue;
                            }
                            if is_break {
                                broke[lane] = true;
                                for (k, r) in results.iter().enumerate() {
                                    writes.push((*r, lane, data[k][lane].clone().unwrap()));
                                }
                            } else {
                                cont[lane] = true;
                                for (k, p) in pending.iter_mut().enumerate() {
                                    let d = data[k][lane].as_ref().unwrap();
                                    let n = d.len();
                                    p[lane * n..lane * n + n].copy_from_slice(d);
                                }
                            }
                        }
                    }
                    for (r, lane, d) in writes {
                        self.set(r, lane, &d);
                    }
                    active.iter_mut().for_each(|x| *x = false);
                }
                Node::Yield(v) => {
                    let results = match self.ctx.last() {
                        Some(Ctx::If { results, .. }) => results.clone(),
                        _ => unreachable!("validated: yield in if arm"),
                    };
                    self.copy_lanes(v, &results, active)?;
                    if let Some(Ctx::If { yielded, .. }) = self.ctx.last_mut() {
                        for lane in 0..active.len() {
                            yielded[lane] |= active[lane];
                        }
                    }
                    active.iter_mut().for_each(|x| *x = false);
                }
            }
        }
        Ok(())
    }
}

/// Runs `num_groups` workgroups of the shader in order, each in lockstep.
pub fn run(
    shader: &Shader,
    num_groups: [u32; 3],
    subgroup_size: u32,
    mem: &mut Memory,
) -> Result<(), InterpError> {
    run_limited(shader, num_groups, subgroup_size, mem, MAX_STEPS)
}

/// [`run`] with a bound on loop iterations per workgroup.
pub fn run_limited(
    shader: &Shader,
    num_groups: [u32; 3],
    subgroup_size: u32,
    mem: &mut Memory,
    max_steps: u64,
) -> Result<(), InterpError> {
    let lanes = (shader.local_size.iter().product::<u32>()) as usize;
    for z in 0..num_groups[2] {
        for y in 0..num_groups[1] {
            for x in 0..num_groups[0] {
                let f = &shader.func;
                let mut g = Group {
                    shader,
                    lanes,
                    vals: vec![Vec::new(); f.values.len()],
                    vars: f
                        .vars
                        .iter()
                        .map(|t| vec![0; lanes * usize::from(t.comps)])
                        .collect(),
                    shared: vec![0; shader.shared_size as usize],
                    local: vec![vec![0; shader.func.local_mem_size as usize]; lanes],
                    ctx: Vec::new(),
                    wg_id: [x, y, z],
                    num_groups,
                    subgroup_size,
                    steps: 0,
                    max_steps,
                    mem,
                };
                let mut active = vec![true; lanes];
                g.block(&f.body, &mut active)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_shader;

    #[test]
    fn subgroup_ops_see_only_active_invocations_of_their_subgroup() {
        // Subgroups of 4 over 8 invocations; the odd ones take the branch.
        let s = parse_shader(
            "shader local_size 8 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 1
            %2:i32 = iand %0, %1
            %3:b1 = ine %2, %1
            %4:i32 = const 16
            %5:i32 = imul %0, %4
            if %3 {
            } else {
                %6:i32 = subgroup_reduce.iadd %0
                %7:i32 = subgroup_exclusive_scan.iadd %0
                %8:b1 = subgroup_elect
                %9:i32 = b2i %8
                %10:i32 = subgroup_broadcast_first %0
                store ssbo[0] %5, %6 align 4
                %11:i32 = const 4
                %12:i32 = iadd %5, %11
                store ssbo[0] %12, %7 align 4
                %13:i32 = const 8
                %14:i32 = iadd %5, %13
                store ssbo[0] %14, %9 align 4
                %15:i32 = const 12
                %16:i32 = iadd %5, %15
                store ssbo[0] %16, %10 align 4
            }",
        )
        .unwrap();
        crate::validate::validate(&s.func).unwrap();
        let mut mem = Memory::default();
        mem.ssbo.insert(0, vec![0; 128]);
        run(&s, [1, 1, 1], 4, &mut mem).unwrap();
        let out: Vec<u32> = mem.ssbo[&0]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        // Active: 1, 3 in the first subgroup; 5, 7 in the second.
        let want = [
            [0, 0, 0, 0],
            [4, 0, 1, 1],
            [0, 0, 0, 0],
            [4, 1, 0, 1],
            [0, 0, 0, 0],
            [12, 0, 1, 5],
            [0, 0, 0, 0],
            [12, 5, 0, 5],
        ];
        assert_eq!(out, want.concat());
    }

    #[test]
    fn divergent_loop_with_break_and_continue() {
        // out[i] = sum of j in 0..i skipping j == 2, stopping when j reaches 6
        let s = parse_shader(
            "shader local_size 8 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:i32 = const 1
            %3:i32 = const 2
            %4:i32 = const 6
            %5:i32 = loop (%6:i32 = %1, %7:i32 = %1) {
                %8:b1 = ige %6, %0
                %9:b1 = ieq %6, %4
                %10:b1 = ior %8, %9
                if %10 {
                    break %7
                }
                %11:i32 = iadd %6, %2
                %12:b1 = ieq %6, %3
                if %12 {
                    continue %11, %7
                }
                %13:i32 = iadd %7, %6
                continue %11, %13
            }
            %14:i32 = const 4
            %15:i32 = imul %0, %14
            store ssbo[0] %15, %5 align 4",
        )
        .unwrap();
        crate::validate::validate(&s.func).unwrap();
        let mut mem = Memory::default();
        mem.ssbo.insert(0, vec![0; 32]);
        run(&s, [1, 1, 1], 8, &mut mem).unwrap();
        let out: Vec<u32> = mem.ssbo[&0]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let expect: Vec<u32> = (0..8u32)
            .map(|i| (0..i.min(6)).filter(|j| *j != 2).sum())
            .collect();
        assert_eq!(out, expect);
    }

    #[test]
    fn out_of_bounds_is_an_error() {
        let s = parse_shader("%0:i32 = const 8\n%1:i32 = load ssbo[0] %0 align 4").unwrap();
        let mut mem = Memory::default();
        mem.ssbo.insert(0, vec![0; 8]);
        assert!(matches!(
            run(&s, [1, 1, 1], 8, &mut mem),
            Err(InterpError::OutOfBounds { .. })
        ));
    }

    #[test]
    fn runaway_loop_is_reported() {
        let s = parse_shader("loop {\n}").unwrap();
        let mut mem = Memory::default();
        assert_eq!(
            run_limited(&s, [1, 1, 1], 8, &mut mem, 1000),
            Err(InterpError::Runaway(1000))
        );
    }
}
