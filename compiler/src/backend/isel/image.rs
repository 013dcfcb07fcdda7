//! Selection of typed image accesses and sampler messages.

use super::*;

impl Isel<'_> {
    /// A typed image access: the coordinates (and data) go to registers with one block per
    /// component, `4 * w` bytes apart, and stay a logical message until `lower_sends`.
    pub(super) fn image(
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
    pub(super) fn sample(
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
                Param::Ai => coord(3).map(|c| (coords.unwrap(), c)),
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
}
