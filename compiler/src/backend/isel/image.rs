//! Selection of typed image accesses and sampler messages.

use super::*;
use crate::ir::{BufIndex, ImgRef};

/// A run-time selector of an image op: `reg`, a scalar UD (binding-table index | sampler
/// index << 8), replaces the op's binding-table and sampler indices; `max_sampler` is the
/// highest sampler index it can hold (0 for ops without a sampler). Only a sampler index
/// of 16 or more needs the message header's sampler-state pointer (see `lower_sends`).
#[derive(Clone, Copy)]
struct Selector {
    reg: Opnd,
    max_sampler: u32,
}

impl Isel<'_> {
    /// An image op on a fixed descriptor, or on array elements chosen at run time (see
    /// [`Isel::indexed_image`]).
    pub(super) fn image(
        &mut self,
        dst: Option<ir::Value>,
        op: ImageOp,
        r: ImgRef,
        srcs: &[ir::Value],
    ) -> Res<()> {
        let last = r.bti + r.index.map_or(1, |x| x.count) - 1;
        if last > self.hw.max_buffer_bti {
            return Err(BackendError::Internal(format!("image at bti {last}")));
        }
        if r.index.is_some() || r.sampler.is_some() {
            return self.indexed_image(dst, op, r, srcs);
        }
        self.image_at(dst, op, r.bti, None, srcs)
    }

    /// Element `index` of an image array and (for sampler messages) of a sampler array,
    /// chosen at run time, as [`Isel::indexed_access`] does for buffers: each index is
    /// clamped to its array, the pair becomes one key per channel (image index in bits
    /// 15:0, sampler index in 31:16), and the message runs with the minimum key over the
    /// active channels, given to the SEND through `a0` (binding-table index in bits 7:0,
    /// sampler index in 15:8 of the selector). A dynamically uniform pair is the same in
    /// every channel, so once is enough; a `NonUniform` one loops over the distinct keys
    /// (each iteration serves the channels holding the minimum and lets them leave), as
    /// brw does for non-uniform surface and sampler indices.
    fn indexed_image(
        &mut self,
        dst: Option<ir::Value>,
        op: ImageOp,
        r: ImgRef,
        srcs: &[ir::Value],
    ) -> Res<()> {
        let sampler_base = match op {
            ImageOp::SampleLod { sampler, .. }
            | ImageOp::SampleGrad { sampler, .. }
            | ImageOp::Gather { sampler, .. }
            | ImageOp::GatherOffset { sampler, .. } => Some(sampler),
            _ => None,
        };
        // A combined image sampler indexes both with one value.
        let combined = r.index.is_some() && r.sampler == r.index;
        let sampler_index = if combined || sampler_base.is_none() {
            None
        } else {
            r.sampler
        };
        // The highest sampler index the selector can hold: the clamp keeps each index in
        // its array; a combined descriptor's sampler index is its binding-table index.
        let max_sampler = match (sampler_base, r.index, sampler_index) {
            (None, ..) => 0,
            (Some(_), Some(x), _) if combined => r.bti + x.count - 1,
            (Some(sb), _, Some(x)) => sb + x.count - 1,
            (Some(sb), ..) => sb,
        };
        let nonuniform = r.nonuniform();
        if !nonuniform {
            let reg = self.uniform_selector(r, sampler_base, sampler_index, combined)?;
            let sel = Selector { reg, max_sampler };
            return self.image_at(dst, op, r.bti, Some(sel), srcs);
        }
        let img = r.index.map(|x| self.clamped_index(x)).transpose()?;
        let smp = sampler_index.map(|x| self.clamped_index(x)).transpose()?;
        let key = match (img, smp) {
            (Some(i), None) => i,
            (None, Some(s)) => {
                let mut b = self.b();
                let k = b.vreg(Type::UD, 1);
                b.alu2(Opcode::Shl, k, s, Opnd::ud(16));
                k
            }
            (Some(i), Some(s)) => {
                let mut b = self.b();
                let k = b.vreg(Type::UD, 1);
                b.alu2(Opcode::Shl, k, s, Opnd::ud(16));
                b.alu2(Opcode::Or, k, k, i);
                k
            }
            (None, None) => {
                return Err(BackendError::Internal(
                    "indexed image op without an index".into(),
                ))
            }
        };
        let m = self.nonuniform_loop_head(key);
        // The selector: binding-table index | sampler index << 8, as one scalar. The image
        // index is the key itself when the key holds no sampler index (no `and`), and the
        // binding-table index when the array starts at entry 0 (no `add`).
        let mut b = self.b();
        let mut s1 = b.at(1, 0, true);
        let bti = match img {
            Some(_) if smp.is_none() && r.bti == 0 => m,
            Some(_) => {
                let bti = s1.vreg(Type::UD, 1).scalar();
                if smp.is_some() {
                    s1.alu2(Opcode::And, bti, m, Opnd::ud(0xFFFF));
                    if r.bti != 0 {
                        s1.alu2(Opcode::Add, bti, bti, Opnd::ud(r.bti));
                    }
                } else {
                    s1.alu2(Opcode::Add, bti, m, Opnd::ud(r.bti));
                }
                bti
            }
            None => {
                let bti = s1.vreg(Type::UD, 1).scalar();
                s1.mov(bti, Opnd::ud(r.bti));
                bti
            }
        };
        let sel = match sampler_base {
            None => bti,
            Some(sb) => {
                let sel = s1.vreg(Type::UD, 1).scalar();
                let smp_t = s1.vreg(Type::UD, 1).scalar();
                if combined {
                    // The sampler-table index of a combined descriptor is its BTI.
                    s1.mov(smp_t, bti);
                } else if smp.is_some() {
                    s1.alu2(Opcode::Shr, smp_t, m, Opnd::ud(16));
                    s1.alu2(Opcode::Add, smp_t, smp_t, Opnd::ud(sb));
                } else {
                    s1.mov(smp_t, Opnd::ud(sb));
                }
                s1.alu2(Opcode::Shl, smp_t, smp_t, Opnd::ud(8));
                s1.alu2(Opcode::Or, sel, bti, smp_t);
                sel
            }
        };
        self.nonuniform_if(key, m);
        let sel = Selector {
            reg: sel,
            max_sampler,
        };
        self.image_at(dst, op, r.bti, Some(sel), srcs)?;
        self.nonuniform_loop_end();
        Ok(())
    }

    /// The selector (binding-table index | sampler index << 8, a scalar UD) of an image op
    /// whose run-time indices are dynamically uniform: each index once per value where it
    /// dominates ([`Isel::uniform_index`]), and no instruction for the parts that are
    /// constants.
    fn uniform_selector(
        &mut self,
        r: ImgRef,
        sampler_base: Option<u32>,
        sampler_index: Option<BufIndex>,
        combined: bool,
    ) -> Res<Opnd> {
        let bti = match r.index {
            Some(x) => Some(self.uniform_index(x)?),
            None => None,
        };
        let Some(sb) = sampler_base else {
            return bti
                .ok_or_else(|| BackendError::Internal("indexed image op without an index".into()));
        };
        let smp = match (combined, sampler_index) {
            (true, _) => bti,
            (false, Some(x)) => Some(self.uniform_index(x)?),
            (false, None) => None,
        };
        let mut b = self.b();
        let mut s1 = b.at(1, 0, true);
        let sel = s1.vreg(Type::UD, 1).scalar();
        match (bti, smp) {
            (Some(i), Some(s)) => {
                s1.alu2(Opcode::Shl, sel, s, Opnd::ud(8));
                s1.alu2(Opcode::Or, sel, sel, i);
            }
            (Some(i), None) => {
                s1.alu2(Opcode::Or, sel, i, Opnd::ud(sb << 8));
            }
            (None, Some(s)) => {
                s1.alu2(Opcode::Shl, sel, s, Opnd::ud(8));
                s1.alu2(Opcode::Or, sel, sel, Opnd::ud(r.bti));
            }
            (None, None) => {
                return Err(BackendError::Internal(
                    "indexed image op without an index".into(),
                ))
            }
        }
        Ok(sel)
    }

    /// A typed image access: the coordinates (and data) go to registers with one block per
    /// component, `4 * w` bytes apart, and stay a logical message until `lower_sends`.
    /// `sel`: a run-time selector (scalar UD: binding-table index | sampler index << 8)
    /// that replaces `bti` and the op's sampler; the message then takes it as its last
    /// source.
    fn image_at(
        &mut self,
        dst: Option<ir::Value>,
        op: ImageOp,
        bti: u32,
        sel: Option<Selector>,
        srcs: &[ir::Value],
    ) -> Res<()> {
        if op.is_read() && op != ImageOp::Load {
            return self.sample(dst, op, bti, sel, srcs);
        }
        let start = self.prog.insts.len();
        self.typed(dst, op, bti, sel.is_some(), srcs)?;
        if let Some(sel) = sel {
            for inst in &mut self.prog.insts[start..] {
                if inst.op.surface() == Some(Surface::Indirect) {
                    inst.srcs.push(sel.reg);
                }
            }
        }
        Ok(())
    }

    fn typed(
        &mut self,
        dst: Option<ir::Value>,
        op: ImageOp,
        bti: u32,
        indirect: bool,
        srcs: &[ir::Value],
    ) -> Res<()> {
        let surf = if indirect {
            Surface::Indirect
        } else {
            Surface::Bti(bti as u8)
        };
        let stride = 4 * self.w as u32;
        let block = |s: &mut Self, v: ir::Value| -> Res<Opnd> {
            let n = s.func.ty(v).comps as u32;
            let parts: Vec<_> = (0..n).map(|c| Some((v, c))).collect();
            s.payload_of(&parts)
        };
        let coords = self.func.ty(srcs[0]).comps;
        let coord = block(self, srcs[0])?;
        match op {
            ImageOp::Fetch
            | ImageOp::SampleLod { .. }
            | ImageOp::SampleGrad { .. }
            | ImageOp::Gather { .. }
            | ImageOp::GatherOffset { .. }
            | ImageOp::Size => {
                return Err(BackendError::Internal(format!(
                    "{} as a typed message",
                    op.name()
                )))
            }
            ImageOp::Load => {
                let d = dst.ok_or_else(|| BackendError::Internal("image_load result".into()))?;
                let r = self.def_reg(d)?;
                let comps = used_comps(self.func, d);
                self.b().inst(
                    LOp::TypedRead {
                        surf,
                        coords,
                        comp_stride: stride,
                        comps,
                    },
                    r.retype(Type::UD),
                    vec![coord],
                );
            }
            ImageOp::Store => {
                let comps = self.func.ty(srcs[1]).comps;
                let data = block(self, srcs[1])?;
                self.b().inst(
                    LOp::TypedWrite {
                        surf,
                        coords,
                        comp_stride: stride,
                        comps,
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
                    // A texel read of the one channel (R).
                    let t = if r.base == Base::Null {
                        self.b().vreg(Type::UD, 1)
                    } else {
                        r
                    };
                    self.b().inst(
                        LOp::TypedRead {
                            surf,
                            coords,
                            comp_stride: stride,
                            comps: 1,
                        },
                        t,
                        vec![coord],
                    );
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
        sel: Option<Selector>,
        srcs: &[ir::Value],
    ) -> Res<()> {
        use ferrite_isa::sampler_msg::{payload_params, Param, SamplerHeader, SamplerMsgType as M};
        let mut header = None;
        let mut grads = None;
        let mut offsets = None;
        // Constant texel offsets of samples live in the message header.
        let offset_header = |offset: [i8; 3]| {
            (offset != [0; 3]).then(|| {
                SamplerHeader {
                    offsets: offset,
                    ..SamplerHeader::default()
                }
                .to_dw2()
            })
        };
        let (msg, sampler, coords, lod) = match op {
            // A level known to be 0 takes the `_lz` message, one parameter shorter (brw
            // does the same on Gen9): ld_lz and sample_lz read level 0 as ld and sample_l
            // do with a level of 0, LOD bias and clamps included.
            ImageOp::Fetch if self.is_zero(srcs[1]) => (M::LdLz, 0, Some(srcs[0]), None),
            ImageOp::Fetch => (M::Ld, 0, Some(srcs[0]), Some(srcs[1])),
            ImageOp::SampleLod { sampler, offset } => {
                header = offset_header(offset);
                if self.is_zero(srcs[1]) {
                    (M::SampleLz, sampler, Some(srcs[0]), None)
                } else {
                    (M::SampleL, sampler, Some(srcs[0]), Some(srcs[1]))
                }
            }
            ImageOp::SampleGrad { sampler, offset } => {
                header = offset_header(offset);
                grads = Some((srcs[1], srcs[2]));
                (M::SampleD, sampler, Some(srcs[0]), None)
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
            ImageOp::GatherOffset { sampler, comp } => {
                // gather4_po: the component in the header, the offsets per lane.
                let h = SamplerHeader {
                    gather_component: comp as u8,
                    ..SamplerHeader::default()
                };
                header = Some(h.to_dw2());
                offsets = Some(srcs[1]);
                (M::Gather4Po, sampler, Some(srcs[0]), None)
            }
            ImageOp::Size => (M::Resinfo, 0, None, Some(srcs[0])),
            _ => {
                return Err(BackendError::Internal(format!(
                    "{} as a sampler message",
                    op.name()
                )))
            }
        };
        // A run-time selector replaces the sampler index; the message keeps the highest one
        // it can hold (whether it needs the header's sampler-state pointer).
        let sampler = sel.map_or(sampler, |s| s.max_sampler);
        if sampler > 255 {
            return Err(BackendError::Internal(format!("sampler index {sampler}")));
        }
        let n_coords = coords.map_or(0, |c| self.func.ty(c).comps as u32);
        let n_grads = grads.map_or(0, |(x, _)| self.func.ty(x).comps as u32);
        let mut vals = Vec::new();
        for p in payload_params(msg) {
            let coord = |c: u32| (c < n_coords).then_some(c);
            // Derivative `c` along x (`y` false) or y; missing ones are 0.
            let grad = |c: u32, y: bool| {
                grads
                    .filter(|_| c < n_grads)
                    .map(|(dx, dy)| (if y { dy } else { dx }, c))
            };
            vals.push(match p {
                Param::U => coord(0).map(|c| (coords.unwrap(), c)),
                Param::V => coord(1).map(|c| (coords.unwrap(), c)),
                Param::R => coord(2).map(|c| (coords.unwrap(), c)),
                Param::Ai => coord(3).map(|c| (coords.unwrap(), c)),
                Param::Lod => lod.map(|l| (l, 0)),
                Param::DuDx => grad(0, false),
                Param::DuDy => grad(0, true),
                Param::DvDx => grad(1, false),
                Param::DvDy => grad(1, true),
                Param::DrDx => grad(2, false),
                Param::DrDy => grad(2, true),
                Param::OffU => offsets.map(|o| (o, 0)),
                Param::OffV => offsets.map(|o| (o, 1)),
            });
        }
        let n = vals.iter().rposition(|v| v.is_some()).map_or(0, |i| i + 1);
        let stride = 4 * self.w as u32;
        let r = if n == 0 {
            let r = self.b().vreg(Type::UD, 1);
            self.b().mov(r, Opnd::ud(0));
            r
        } else {
            self.payload_of(&vals[..n])?
        };
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
                indirect: sel.is_some(),
            },
            d,
            std::iter::once(r).chain(sel.map(|s| s.reg)).collect(),
        );
        Ok(())
    }
}

impl Isel<'_> {
    /// Whether `v` is a constant 0 (or -0.0) in every component.
    fn is_zero(&self, v: ir::Value) -> bool {
        let sign = if self.func.ty(v).is_float() {
            0x7FFF_FFFF
        } else {
            u64::MAX
        };
        matches!(&self.vals[v.0 as usize], Some(Val::Imm(b)) if b.iter().all(|x| x & sign == 0))
    }

    /// A message payload of one block per part (a component of a value; `None` is 0):
    /// the value's own register when the parts are its leading components in order and it
    /// already is one block per component (`lower_sends` copies what its message cannot
    /// read in place), otherwise a new register with one `mov` per block. A component of
    /// an image op's `vec` is read from the `vec`'s source, so the `vec`'s own copies lose
    /// their last reader and the LIR's dead-code elimination removes them.
    fn payload_of(&mut self, parts: &[Option<(ir::Value, u32)>]) -> Res<Opnd> {
        let stride = 4 * self.w as u32;
        if let Some(Some((v, _))) = parts.first() {
            let in_order = parts
                .iter()
                .enumerate()
                .all(|(k, p)| *p == Some((*v, k as u32)));
            let t = self.func.ty(*v);
            if in_order && t.bits == 32 && !narrow::is_narrow(t) {
                if let Some(Val::Reg(r, s)) = &self.vals[v.0 as usize] {
                    if *s == stride && r.stride == 1 && r.rows.is_none() {
                        return Ok(r.retype(Type::UD));
                    }
                }
            }
        }
        let r = self.b().vreg(Type::UD, parts.len() as u32);
        for (k, p) in parts.iter().enumerate() {
            let src = match *p {
                Some((v, c)) => match self.image_vec_srcs.get(&v).map(|s| s[c as usize]) {
                    Some(part) => self.comp(part, 0)?,
                    None => self.comp(v, c as usize)?,
                },
                None => Opnd::ud(0),
            };
            self.b()
                .mov(r.offset(k as u32 * stride), src.retype(Type::UD));
        }
        Ok(r)
    }
}

/// The sources of each 32-bit `vec` that an image op reads (coordinates, texels): the
/// payload takes the components from them (see [`Isel::payload_of`]).
pub(super) fn image_vecs(f: &ir::Function) -> HashMap<ir::Value, Vec<ir::Value>> {
    let mut read = crate::hash::HashSet::default();
    f.for_each_node(&mut |n| {
        if let Node::Instr(ir::Instr {
            op: Op::Image(_, _, srcs),
            ..
        }) = n
        {
            read.extend(srcs.iter().copied());
        }
    });
    super::vec_sources(f, |d| {
        let t = f.ty(d);
        read.contains(&d) && t.bits == 32 && !narrow::is_narrow(t)
    })
}

/// How many leading components of the vector `v` the program reads (1-4): one more than the
/// highest component extracted, or all of them when `v` is used whole (a copy, a loop or
/// `if` edge, a store). A typed read returns only those channels (fewer response registers,
/// as brw reads only the channels of a one-channel format).
fn used_comps(f: &ir::Function, v: ir::Value) -> u8 {
    let all = f.ty(v).comps;
    let mut n = 1u8;
    f.for_each_node(&mut |node| {
        let whole = match node {
            Node::Instr(i) => match &i.op {
                Op::Extract(x, k) if *x == v => {
                    n = n.max(*k + 1);
                    false
                }
                op => op.srcs().contains(&v),
            },
            Node::If(i) => i.cond == v,
            Node::Loop(l) => l.params.iter().any(|p| p.1 == v),
            Node::Break(a) | Node::Continue(a) | Node::Yield(a) => a.contains(&v),
        };
        if whole {
            n = all;
        }
    });
    n.min(all).max(1)
}

#[cfg(test)]
mod tests {
    use crate::backend::{compile, BackendOptions};
    use crate::parse::parse_shader;

    fn opts(simd: u32) -> BackendOptions {
        BackendOptions::gen9_at(simd)
    }

    /// Invocation i samples element `i % 3` of an image array at BTIs 2..4 with element
    /// `i % 2` of a sampler array at 5..6 (`nu`: a NonUniform pair), fetches from the same
    /// image array and stores to the storage image array at 7..9.
    fn shader(nu: bool) -> String {
        let nu = if nu { ".nu" } else { "" };
        format!(
            "shader local_size 16 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 3
            %2:i32 = umod %0, %1
            %3:i32 = const 2
            %4:i32 = umod %0, %3
            %5:f32x2 = const 0.5, 0.5
            %6:f32 = const 0.0
            %7:f32x4 = image_sample_l.s5 img{nu}[2+%2<3] smp{nu}[5+%4<2] %5, %6
            %8:i32x2 = const 1, 1
            %9:i32 = const 0
            %10:f32x4 = image_fetch img{nu}[2+%2<3] %8, %9
            %11:f32x4 = fadd %7, %10
            image_store img{nu}[7+%2<3] %8, %11"
        )
    }

    /// The messages take their descriptors from a0; every element of both arrays is in the
    /// kernel's binding table; a NonUniform index adds one loop per message.
    #[test]
    fn indexed_image_messages_use_a0_and_nonuniform_loops() {
        for simd in [8u32, 16, 32] {
            for nu in [false, true] {
                let s = parse_shader(&shader(nu)).unwrap();
                let text = s.func.to_string();
                assert_eq!(
                    crate::parse::parse_function(&text).unwrap().to_string(),
                    text
                );
                let k = compile(&s, &opts(simd)).unwrap();
                let a0_sends = k
                    .asm
                    .lines()
                    .filter(|l| l.contains("send") && l.contains(" a0<"))
                    .count();
                let pieces = if simd == 32 { 2 } else { 1 };
                assert!(a0_sends >= 3 * pieces, "SIMD{simd} nu={nu}:\n{}", k.asm);
                let whiles = k.asm.lines().filter(|l| l.contains("while")).count();
                assert_eq!(
                    whiles,
                    3 * usize::from(nu),
                    "SIMD{simd} nu={nu}:\n{}",
                    k.asm
                );
                for b in 2..=9 {
                    assert!(k.btis.contains(&b), "SIMD{simd}: bti {b} in {:?}", k.btis);
                }
            }
        }
    }

    /// A typed read whose result is used only through component 0 returns the R channel
    /// alone (channel mask 0xe, one response register per 8 channels); a one-component
    /// texel is written with one data register; a texel read whole keeps all four.
    #[test]
    fn typed_messages_carry_only_the_channels_used() {
        let s = parse_shader(
            "shader local_size 16 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32x4 = image_load img[1] %0
            %2:i32 = extract %1, 0
            image_store img[2] %0, %2
            %3:i32x4 = image_load img[3] %0
            image_store img[4] %0, %3",
        )
        .unwrap();
        for simd in [8u32, 16, 32] {
            let k = compile(&s, &opts(simd)).unwrap();
            let sends: Vec<&str> = k.asm.lines().filter(|l| l.contains("typed")).collect();
            let one = |what: &str, len: &str| {
                sends
                    .iter()
                    .filter(|l| l.contains(what) && l.contains("Mask = 0xe") && l.contains(len))
                    .count()
            };
            let four = |what: &str, len: &str| {
                sends
                    .iter()
                    .filter(|l| l.contains(what) && l.contains("Mask = 0x0") && l.contains(len))
                    .count()
            };
            let pieces = (simd / 8) as usize;
            assert_eq!(
                one("surface read", "rlen 1"),
                pieces,
                "SIMD{simd}:\n{}",
                k.asm
            );
            assert_eq!(
                one("surface write", "ex_mlen 1"),
                pieces,
                "SIMD{simd}:\n{}",
                k.asm
            );
            assert_eq!(
                four("surface read", "rlen 4"),
                pieces,
                "SIMD{simd}:\n{}",
                k.asm
            );
            assert_eq!(
                four("surface write", "ex_mlen 4"),
                pieces,
                "SIMD{simd}:\n{}",
                k.asm
            );
        }
    }

    /// A run-time selector whose sampler index stays below 16 (`ld` and `resinfo` use
    /// none; a combined array at entries 2..4) needs no message header and no `and` of the
    /// selector before `a0`; one that may reach 16 (a combined array at 14..17) keeps the
    /// header and its sampler-state pointer. An `ld` loop over an array at entry 0 takes
    /// the minimum key as its binding-table index (no `and 0xffff`, no `add`).
    #[test]
    fn run_time_selector_takes_a_header_only_for_high_sampler_indices() {
        let src = |first: u32| {
            format!(
                "shader local_size 16 1 1 shared 0 local 0 push 0
                %0:i32 = sysval local_invocation_index
                %1:i32 = const 3
                %2:i32 = umod %0, %1
                %3:i32 = const 0
                %4:f32x4 = image_fetch img.nu[0+%2<3] %0, %3
                %5:i32x4 = image_size img.nu[0+%2<3] %3
                %6:f32x2 = const 0.5, 0.5
                %7:f32 = const 0.0
                %8:f32x4 = image_sample_l.s{first} img.nu[{first}+%2<4] smp.nu[{first}+%2<4] %6, %7
                %9:f32 = extract %4, 0
                %10:i32 = extract %5, 0
                %11:f32 = extract %8, 0
                %12:f32 = i2f %10
                %13:f32 = fadd %9, %11
                %14:f32 = fadd %13, %12
                store ssbo[20] %3, %14 align 4"
            )
        };
        for simd in [8u32, 16, 32] {
            let low = compile(&parse_shader(&src(2)).unwrap(), &opts(simd)).unwrap();
            assert!(!low.asm.contains("g0.3<0,1,0>"), "SIMD{simd}:\n{}", low.asm);
            assert!(
                !low.asm.contains("0x00000fffUD"),
                "SIMD{simd}:\n{}",
                low.asm
            );
            assert!(
                !low.asm.contains("0x0000ffffUD"),
                "SIMD{simd}:\n{}",
                low.asm
            );
            assert_eq!(
                low.asm.lines().filter(|l| l.contains("while")).count(),
                3,
                "SIMD{simd}:\n{}",
                low.asm
            );
            let high = compile(&parse_shader(&src(14)).unwrap(), &opts(simd)).unwrap();
            assert!(
                high.asm.contains("g0.3<0,1,0>"),
                "SIMD{simd}:\n{}",
                high.asm
            );
            assert!(
                high.asm.contains("0x00000fffUD"),
                "SIMD{simd}:\n{}",
                high.asm
            );
        }
    }

    /// A fetch and a sample at a constant level 0 send `ld_lz` (U alone: mlen 1 per 8
    /// channels) and `sample_lz` (U, V: mlen 2), one parameter shorter than `ld` / `sample_l`
    /// with a 0 parameter.
    #[test]
    fn level_zero_takes_the_lz_messages() {
        let s = parse_shader(
            "shader local_size 8 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:f32x4 = image_fetch img[1] %0, %1
            %3:f32x2 = const 0.5, 0.5
            %4:f32 = const 0.0
            %5:f32x4 = image_sample_l.s2 img[2] %3, %4
            %6:f32x4 = fadd %2, %5
            image_store img[3] %0, %6",
        )
        .unwrap();
        for simd in [8u32, 16, 32] {
            let k = compile(&s, &opts(simd)).unwrap();
            let regs = if simd == 8 { 1 } else { 2 };
            let msgs: Vec<&str> = k.asm.lines().filter(|l| l.contains("sampler")).collect();
            let pieces = if simd == 32 { 2 } else { 1 };
            let count = |what: &str, mlen: u32| {
                msgs.iter()
                    .filter(|l| l.contains(what) && l.contains(&format!("mlen {mlen} ")))
                    .count()
            };
            assert_eq!(count("ld_lz", regs), pieces, "SIMD{simd}:\n{}", k.asm);
            assert_eq!(
                count("sample_lz", 2 * regs),
                pieces,
                "SIMD{simd}:\n{}",
                k.asm
            );
            assert!(
                !msgs
                    .iter()
                    .any(|l| l.contains("ld ") || l.contains("sample_l ")),
                "SIMD{simd}:\n{}",
                k.asm
            );
        }
    }

    /// The payload of a typed write takes a `vec`'s components from its sources, and each
    /// product is then computed into its part of the payload (`coalesce_copies`): no `mov`
    /// (session 14: four copies into the payload; before it eight, into the vector and then
    /// the payload); the coordinate, one block already, is sent in place.
    #[test]
    fn typed_write_copies_vec_components_once() {
        let s = parse_shader(
            "shader local_size 8 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:f32x4 = image_load img[0] %0
            %2:f32 = const 0.5
            %3:f32 = extract %1, 0
            %4:f32 = fmul %3, %2
            %5:f32 = extract %1, 1
            %6:f32 = fmul %5, %2
            %7:f32 = extract %1, 2
            %8:f32 = fmul %7, %2
            %9:f32 = extract %1, 3
            %10:f32 = fmul %9, %2
            %11:f32x4 = vec %4, %6, %8, %10
            image_store img[1] %0, %11",
        )
        .unwrap();
        let k = compile(&s, &opts(8)).unwrap();
        let movs = |asm: &str| {
            asm.lines()
                .filter(|l| l.contains(" mov(8)") && !l.contains("WE_all"))
                .count()
        };
        assert_eq!(movs(&k.asm), 0, "{}", k.asm);
    }

    /// A sampler index of 16 or more sends a header whose dword 3 is r0.3 moved on by the
    /// index's block of 16 sampler states (16 * 16 bytes each); the descriptor keeps
    /// index % 16.
    #[test]
    fn high_sampler_index_offsets_the_header_sampler_pointer() {
        let s = parse_shader(
            "shader local_size 8 1 1 shared 0 local 0 push 0
            %0:f32x2 = const 0.5, 0.5
            %1:f32 = const 0.0
            %2:f32x4 = image_sample_l.s37 img[1] %0, %1
            %3:i32 = const 0
            %4:f32 = extract %2, 0
            store ssbo[0] %3, %4 align 4",
        )
        .unwrap();
        let k = compile(&s, &opts(8)).unwrap();
        // 37 = block 2 (512 bytes on) + index 5.
        assert!(
            k.asm.lines().any(|l| l.contains("add(1)")
                && l.contains("g0.3<0,1,0>UD")
                && l.contains("0x00000200UD")),
            "{}",
            k.asm
        );
        assert!(k.btis.contains(&37), "{:?}", k.btis);
    }
}
