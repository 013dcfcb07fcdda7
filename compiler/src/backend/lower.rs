//! LIR lowering passes: SIMD-width lowering (the one place applying the per-generation
//! width limits, `hw::HwFacts::width_limits`), logical sends to payload + SEND (one pass),
//! regioning legalization.

use super::lir::*;
use crate::hw::GEN9;
use ferrite_isa::sampler_msg::{SamplerDesc, SamplerSimd};
use ferrite_isa::{CondMod, MathFunction, Opcode, Sfid, Type};

pub use crate::hw::WidthClass;

pub fn width_class(i: &LInst) -> WidthClass {
    match i.op {
        LOp::Alu(_) => WidthClass::Alu32,
        LOp::Math(MathFunction::IntDiv | MathFunction::IntMod | MathFunction::IntDivMod) => {
            WidthClass::MathIntDiv
        }
        LOp::Math(_) => WidthClass::MathFloat,
        // Gen9's A64 untyped atomics are SIMD8 only.
        LOp::UntypedAtomic {
            surf: Surface::A64, ..
        } => WidthClass::A64Atomic,
        LOp::UntypedRead { .. }
        | LOp::UntypedWrite { .. }
        | LOp::UntypedAtomic { .. }
        | LOp::ByteScatteredRead { .. }
        | LOp::ByteScatteredWrite { .. } => WidthClass::Untyped,
        LOp::TypedRead { .. } | LOp::TypedWrite { .. } | LOp::TypedAtomic { .. } => {
            WidthClass::Typed
        }
        LOp::Sample {
            msg: ferrite_isa::sampler_msg::SamplerMsgType::SampleD,
            ..
        } => WidthClass::SamplerDerivs,
        LOp::Sample { .. } => WidthClass::Sampler,
        _ => WidthClass::Unlimited,
    }
}

pub fn max_width(i: &LInst) -> u8 {
    let c = width_class(i);
    let mut w = GEN9.width_limit(c);
    if c == WidthClass::Alu32 || c == WidthClass::MathFloat {
        // 64 bytes per operand.
        let size = std::iter::once(&i.dst)
            .chain(i.srcs.iter())
            .map(|o| o.bytes_per_lane())
            .filter(|&b| b != 0)
            .max()
            .unwrap_or(4);
        w = w.min((64 / size.max(1)) as u8).max(1);
    }
    w
}

/// Splits every instruction wider than its limit into pieces of the limit. Each piece
/// keeps each operand's type, stride and sub-register offset (advanced by the lanes it
/// skips); scalar operands and immediates are shared.
pub fn lower_simd_width(prog: &mut Program) {
    let old = std::mem::take(&mut prog.insts);
    for i in old {
        let max = max_width(&i);
        if i.exec <= max || i.op.is_control() {
            prog.insts.push(i);
            continue;
        }
        if cfg!(debug_assertions) {
            if let Some(e) = split_overlap(&i, max) {
                panic!("SIMD-width lowering of `{i}` at width {max}: {e}");
            }
        }
        let mut k = 0u32;
        while k < i.exec as u32 {
            let mut p = i.clone();
            p.exec = max;
            p.group = i.group + k as u8;
            p.dst = i.dst.lane_offset(k);
            for s in &mut p.srcs {
                *s = s.lane_offset(k);
            }
            prog.insts.push(p);
            k += max as u32;
        }
    }
}

/// A virtual register (None: the fixed GRFs) and byte ranges [start, end) in it.
type Footprint = (Option<u32>, Vec<(u32, u32)>);

/// The register an operand lives in and the byte ranges its `exec` channels cover there
/// (fixed GRFs as absolute bytes); None for immediates and null.
fn footprint(o: &Opnd, exec: u32) -> Option<Footprint> {
    let (reg, base) = match o.base {
        Base::V(v) => (Some(v), 0),
        Base::G(g) => (None, 32 * g as u32),
        Base::Null | Base::Imm(_) | Base::Arf(_) => return None,
    };
    let size = o.ty.size();
    let lanes = if o.is_scalar() { 1 } else { exec };
    let ranges = (0..lanes)
        .map(|l| {
            let at = base + o.off + o.elem_offset(l);
            (at, at + size)
        })
        .collect();
    Some((reg, ranges))
}

/// Splitting works in place: piece k of an instruction runs before piece k+1 and each
/// reads its sources when it runs. That is only correct if no piece writes bytes a later
/// piece still reads, which holds when a source that shares the destination's register
/// has the destination's layout (same bytes per channel) and fails when the layouts
/// differ (e.g. an in-place F -> DF conversion: piece 0's 64-bit results overwrite the
/// 32-bit sources of piece 1, or a scalar source overwritten by piece 0). Returns the
/// first such overlap.
pub fn split_overlap(i: &LInst, max: u8) -> Option<String> {
    let max = max as u32;
    let pieces = (i.exec as u32).div_ceil(max);
    for j in 0..pieces {
        let Some((dreg, dbytes)) = footprint(&i.dst.lane_offset(j * max), max) else {
            continue;
        };
        for l in j + 1..pieces {
            for (k, s) in i.srcs.iter().enumerate() {
                let Some((sreg, sbytes)) = footprint(&s.lane_offset(l * max), max) else {
                    continue;
                };
                let hit = dreg == sreg
                    && dbytes
                        .iter()
                        .any(|d| sbytes.iter().any(|s| d.0 < s.1 && s.0 < d.1));
                if hit {
                    return Some(format!(
                        "piece {j} writes {} where piece {l} reads src{k} {}",
                        i.dst.lane_offset(j * max),
                        s.lane_offset(l * max)
                    ));
                }
            }
        }
    }
    None
}

fn desc(mlen: u32, rlen: u32, header: bool, fc: u32) -> u32 {
    (mlen << 25) | (rlen << 20) | ((header as u32) << 19) | fc
}

/// True if the `comps` blocks of `o` (each `exec` dwords, `stride` bytes apart) are one
/// GRF-aligned contiguous register range.
fn contiguous(o: &Opnd, exec: u8, comps: u8, stride: u32) -> bool {
    matches!(o.base, Base::V(_) | Base::G(_))
        && o.stride == 1
        && o.rows.is_none()
        && o.ty.size() == 4
        && o.off.is_multiple_of(32)
        && (comps <= 1 || stride == 4 * exec as u32)
}

/// Makes `o` a contiguous payload of `comps` blocks (copying when it is not one).
fn payload(b: &mut Builder, o: Opnd, comps: u8, stride: u32) -> Opnd {
    if contiguous(&o, b.exec, comps, stride) {
        return o;
    }
    let exec = b.exec as u32;
    let t = b.vreg(Type::UD, comps as u32);
    for c in 0..comps as u32 {
        let src = o.offset(if o.stride == 0 { 0 } else { c * stride });
        b.mov(t.offset(c * 4 * exec), src.retype(Type::UD));
    }
    t
}

/// The address payload of a message on `surf` and its length in GRFs: one UD offset per
/// lane, or one UQ address per lane for A64 messages (two GRFs per eight lanes).
fn addr_payload(b: &mut Builder, o: Opnd, surf: Surface) -> (Opnd, u32) {
    if surf != Surface::A64 {
        return (payload(b, o, 1, 0), regs(b.exec));
    }
    let ok = matches!(o.base, Base::V(_) | Base::G(_))
        && o.stride == 1
        && o.rows.is_none()
        && o.ty.size() == 8
        && o.off.is_multiple_of(32);
    let a = if ok {
        o
    } else {
        let t = b.vreg(Type::UQ, 1);
        b.mov(t, o.retype(Type::UQ));
        t
    };
    (a.retype(Type::UD), 2 * regs(b.exec))
}

/// Function control of a typed surface read/write (message type `ty`): channel disable
/// mask `mask` (bit 0 = X), and the slot group of the SIMD8 channel group starting at
/// `group` (1 = channels 0-7, 2 = channels 8-15, as Mesa picks it for Gen8+).
fn typed_fc(ty: u32, group: u8, mask: u32) -> u32 {
    let slot_group = 1 + (group as u32 / 8) % 2;
    (ty << 14) | ((mask | (slot_group << 4)) << 8)
}

/// The channel-disable mask of a typed or untyped surface message that reads or writes the
/// first `comps` channels (R, RG, RGB, RGBA): bit k set = channel k off.
fn channel_mask(comps: u8) -> u32 {
    0xF & !((1u32 << comps.clamp(1, 4)) - 1)
}

fn regs(exec: u8) -> u32 {
    (exec as u32).div_ceil(8)
}

/// The scratch surface of the spill and fill messages.
const SCRATCH_BTI: u32 = GEN9.bti_scratch as u32;

/// Lowers every logical message to its payload and SEND/SENDS in one pass.
pub fn lower_sends(prog: &mut Program) {
    let old = std::mem::take(&mut prog.insts);
    for i in old {
        if !i.op.is_logical() {
            prog.insts.push(i);
            continue;
        }
        let mut b = Builder::new(prog, i.exec);
        b.group = i.group;
        b.we_all = i.we_all;
        let bl = regs(i.exec);
        let simd_bits = |exec: u8| if exec == 16 { 1u32 << 4 } else { 2 << 4 };
        let pred = i.pred;
        // A run-time binding-table index (the logical message's last source) goes with the
        // SEND, which adds it to its descriptor in a0.
        let bti_src = (i.op.surface() == Some(Surface::Indirect)).then(|| i.srcs[i.srcs.len() - 1]);
        let send = |b: &mut Builder, mut op: LOp, dst: Opnd, mut srcs: Vec<Opnd>| {
            if let (Some(x), LOp::Send { indirect, .. }) = (bti_src, &mut op) {
                *indirect = true;
                srcs.push(x);
            }
            let s = b.inst(op, dst, srcs);
            s.pred = pred;
        };
        match i.op {
            LOp::UntypedRead {
                surf,
                comps,
                comp_stride,
            } => {
                let (addr, al) = addr_payload(&mut b, i.srcs[0], surf);
                let direct = contiguous(&i.dst, i.exec, comps, comp_stride);
                let dst = if direct {
                    i.dst
                } else {
                    b.vreg(Type::UD, comps as u32)
                };
                let mask = !((1u32 << comps) - 1) & 0xF;
                let ty = if surf == Surface::A64 { 0x11 } else { 0x01 };
                let fc = (ty << 14) | ((mask | simd_bits(i.exec)) << 8) | surf.bti() as u32;
                let rlen = comps as u32 * bl;
                send(
                    &mut b,
                    LOp::Send {
                        indirect: false,
                        sfid: Sfid::DpDc1,
                        desc: desc(al, rlen, false, fc),
                        ex_desc: 0,
                        mlen: al as u8,
                        ex_mlen: 0,
                        rlen: rlen as u8,
                        eot: false,
                    },
                    dst.retype(Type::UD),
                    vec![addr],
                );
                if !direct {
                    for c in 0..comps as u32 {
                        b.mov(
                            i.dst.offset(c * comp_stride).retype(Type::UD),
                            dst.offset(c * 4 * i.exec as u32),
                        );
                    }
                }
            }
            LOp::UntypedWrite {
                surf,
                comps,
                comp_stride,
            } => {
                let (addr, al) = addr_payload(&mut b, i.srcs[0], surf);
                let data = payload(&mut b, i.srcs[1], comps, comp_stride);
                let mask = !((1u32 << comps) - 1) & 0xF;
                let ty = if surf == Surface::A64 { 0x19 } else { 0x09 };
                let fc = (ty << 14) | ((mask | simd_bits(i.exec)) << 8) | surf.bti() as u32;
                let ex_mlen = comps as u32 * bl;
                send(
                    &mut b,
                    LOp::Send {
                        indirect: false,
                        sfid: Sfid::DpDc1,
                        desc: desc(al, 0, false, fc),
                        ex_desc: ex_mlen << 6,
                        mlen: al as u8,
                        ex_mlen: ex_mlen as u8,
                        rlen: 0,
                        eot: false,
                    },
                    Opnd::null(Type::UD),
                    vec![addr, data],
                );
            }
            LOp::UntypedAtomic {
                surf,
                hw_op,
                ndata,
                qword,
            } => {
                let (addr, al) = addr_payload(&mut b, i.srcs[0], surf);
                let ret = i.dst.base != Base::Null;
                // One dword per lane, or one qword (64-bit A64 atomics).
                let dty = if qword { Type::UQ } else { Type::UD };
                let db = if qword { 2 * bl } else { bl };
                let mut srcs = vec![addr];
                if ndata > 0 {
                    let d = b.vreg(dty, ndata as u32);
                    for k in 0..ndata as u32 {
                        b.mov(
                            d.offset(k * dty.size() * i.exec as u32),
                            i.srcs[1 + k as usize].retype(dty),
                        );
                    }
                    srcs.push(d);
                }
                let direct = !ret
                    || if qword {
                        i.dst.stride == 1
                            && i.dst.ty.size() == 8
                            && i.dst.off.is_multiple_of(32)
                            && matches!(i.dst.base, Base::V(_) | Base::G(_))
                    } else {
                        contiguous(&i.dst, i.exec, 1, 0)
                    };
                let dst = if direct { i.dst } else { b.vreg(dty, 1) };
                // Message control bit 4: SIMD8 for surface atomics, 64-bit data for A64
                // ones (which are SIMD8 only, docs/gen9.md 4.1).
                let (ty, bit4) = if surf == Surface::A64 {
                    (0x12, qword)
                } else {
                    (0x02, i.exec == 8)
                };
                let fc = (ty << 14)
                    | ((hw_op as u32 | (u32::from(bit4) << 4) | ((ret as u32) << 5)) << 8)
                    | surf.bti() as u32;
                let rlen = if ret { db } else { 0 };
                let ex_mlen = ndata as u32 * db;
                send(
                    &mut b,
                    LOp::Send {
                        indirect: false,
                        sfid: Sfid::DpDc1,
                        desc: desc(al, rlen, false, fc),
                        ex_desc: ex_mlen << 6,
                        mlen: al as u8,
                        ex_mlen: ex_mlen as u8,
                        rlen: rlen as u8,
                        eot: false,
                    },
                    dst.retype(Type::UD),
                    srcs,
                );
                if !direct {
                    b.mov(i.dst.retype(dty), dst.retype(dty));
                }
            }
            LOp::Sample {
                bti,
                sampler,
                msg,
                params,
                comp_stride,
                header,
                indirect,
            } => {
                let c = payload(&mut b, i.srcs[0], params, comp_stride);
                let direct = contiguous(&i.dst, i.exec, 4, comp_stride);
                let dst = if direct { i.dst } else { b.vreg(Type::UD, 4) };
                let simd = if i.exec <= 8 {
                    SamplerSimd::Simd8
                } else {
                    SamplerSimd::Simd16
                };
                // The descriptor's sampler index has 4 bits. A higher index (or a run-time
                // one that may be higher) takes a header whose dword 3, the sampler-state pointer,
                // is R0.3's (the IDD's SamplerStatePointer, which the hardware loads there)
                // moved on by the index's block of 16 states of 16 bytes; the descriptor
                // keeps the index within the block. Mesa's brw does the same.
                // With `indirect`, `sampler` is the highest index the selector can hold: below
                // 16 (always for `ld` and `resinfo`, which use no sampler) no header, as brw.
                let high = sampler >= 16;
                let header = match (header, high) {
                    (None, true) => Some(0),
                    (h, _) => h,
                };
                let desc_sampler = if indirect { 0 } else { sampler & 0xF };
                let desc_bti = if indirect { 0 } else { bti };
                let mut d = SamplerDesc::new(
                    desc_bti,
                    desc_sampler,
                    msg,
                    simd,
                    header.is_some(),
                    params as u32,
                    4,
                );
                let sel = indirect.then(|| i.srcs[i.srcs.len() - 1]);
                let (mut srcs, ex_mlen) = match header {
                    None => (vec![c], 0),
                    Some(dw2) => {
                        // The header (a copy of R0, as Mesa builds it, with the message's
                        // dword 2) goes first; the parameters follow as the second part of
                        // a split send.
                        let mut b8 = b.at(8, 0, true);
                        let h = b8.vreg(Type::UD, 1);
                        b8.mov(h, Opnd::g(0, 0, Type::UD, 1));
                        let mut b1 = b8.at(1, 0, true);
                        b1.mov(h.offset(8).scalar(), Opnd::ud(dw2));
                        let r0_3 = Opnd::g(0, 12, Type::UD, 0);
                        let dw3 = h.offset(12).scalar();
                        match sel {
                            // Selector bits 15:12 are the sampler's block: (s & 0xF0) * 16.
                            Some(sel) if high => {
                                let t = b1.vreg(Type::UD, 1).scalar();
                                b1.alu2(Opcode::And, t, sel.scalar(), Opnd::ud(0xF000));
                                b1.alu2(Opcode::Shr, t, t, Opnd::ud(4));
                                b1.alu2(Opcode::Add, dw3, r0_3, t);
                            }
                            None if high => {
                                let block = u32::from(sampler & 0xF0) * 16;
                                b1.alu2(Opcode::Add, dw3, r0_3, Opnd::ud(block));
                            }
                            _ => {}
                        }
                        let ex = d.mlen - 1;
                        d.mlen = 1;
                        (vec![h, c], ex)
                    }
                };
                if let Some(sel) = sel {
                    // The descriptor's binding-table index and sampler index within the
                    // block (bits 11:0), ORed into the descriptor in a0.
                    // Below 16 the sampler index is within the block: the selector is
                    // already that (binding-table index < 256 | sampler index < 16 << 8).
                    if high {
                        let mut b1 = b.at(1, 0, true);
                        let t = b1.vreg(Type::UD, 1).scalar();
                        b1.alu2(Opcode::And, t, sel.scalar(), Opnd::ud(0x0FFF));
                        srcs.push(t);
                    } else {
                        srcs.push(sel.scalar());
                    }
                }
                let s = b.inst(
                    LOp::Send {
                        sfid: Sfid::Sampler,
                        desc: d.encode(),
                        ex_desc: ex_mlen << 6,
                        mlen: d.mlen as u8,
                        ex_mlen: ex_mlen as u8,
                        rlen: d.rlen as u8,
                        eot: false,
                        indirect,
                    },
                    dst.retype(Type::UD),
                    srcs,
                );
                s.pred = pred;
                if !direct {
                    let block = 32 * regs(i.exec);
                    for k in 0..4 {
                        b.mov(
                            i.dst.offset(k * comp_stride).retype(Type::UD),
                            dst.offset(k * block),
                        );
                    }
                }
            }
            LOp::TypedRead {
                surf,
                coords,
                comp_stride,
                comps,
            } => {
                let c = payload(&mut b, i.srcs[0], coords, comp_stride);
                let n = comps as u32;
                let direct = contiguous(&i.dst, i.exec, comps, comp_stride);
                let dst = if direct { i.dst } else { b.vreg(Type::UD, n) };
                let fc = typed_fc(0x05, i.group, channel_mask(comps));
                send(
                    &mut b,
                    LOp::Send {
                        sfid: Sfid::DpDc1,
                        desc: desc(coords as u32, n, false, fc | surf.bti() as u32),
                        ex_desc: 0,
                        mlen: coords,
                        ex_mlen: 0,
                        rlen: comps,
                        eot: false,
                        indirect: false,
                    },
                    dst.retype(Type::UD),
                    vec![c],
                );
                if !direct {
                    for k in 0..n {
                        b.mov(
                            i.dst.offset(k * comp_stride).retype(Type::UD),
                            dst.offset(k * 32),
                        );
                    }
                }
            }
            LOp::TypedWrite {
                surf,
                coords,
                comp_stride,
                comps,
            } => {
                let c = payload(&mut b, i.srcs[0], coords, comp_stride);
                let data = payload(&mut b, i.srcs[1], comps, comp_stride);
                let fc = typed_fc(0x0D, i.group, channel_mask(comps));
                send(
                    &mut b,
                    LOp::Send {
                        sfid: Sfid::DpDc1,
                        desc: desc(coords as u32, 0, false, fc | surf.bti() as u32),
                        ex_desc: (comps as u32) << 6,
                        mlen: coords,
                        ex_mlen: comps,
                        rlen: 0,
                        eot: false,
                        indirect: false,
                    },
                    Opnd::null(Type::UD),
                    vec![c, data],
                );
            }
            LOp::TypedAtomic {
                surf,
                coords,
                comp_stride,
                hw_op,
                ndata,
            } => {
                let c = payload(&mut b, i.srcs[0], coords, comp_stride);
                let ret = i.dst.base != Base::Null;
                let mut srcs = vec![c];
                if ndata > 0 {
                    let d = b.vreg(Type::UD, ndata as u32);
                    for k in 0..ndata as u32 {
                        b.mov(d.offset(k * 32), i.srcs[1 + k as usize].retype(Type::UD));
                    }
                    srcs.push(d);
                }
                let direct = !ret || contiguous(&i.dst, i.exec, 1, 0);
                let dst = if direct { i.dst } else { b.vreg(Type::UD, 1) };
                // Message control: 3:0 operation, 4 slot group (channels 8-15), 5 return.
                let mc = hw_op as u32 | (((i.group as u32 / 8) % 2) << 4) | ((ret as u32) << 5);
                let fc = (0x06 << 14) | (mc << 8) | surf.bti() as u32;
                send(
                    &mut b,
                    LOp::Send {
                        sfid: Sfid::DpDc1,
                        desc: desc(coords as u32, ret as u32, false, fc),
                        ex_desc: (ndata as u32) << 6,
                        mlen: coords,
                        ex_mlen: ndata,
                        rlen: ret as u8,
                        eot: false,
                        indirect: false,
                    },
                    dst.retype(Type::UD),
                    srcs,
                );
                if !direct {
                    b.mov(i.dst.retype(Type::UD), dst);
                }
            }
            LOp::ByteScatteredRead { surf, size_log2 } => {
                let (addr, _) = addr_payload(&mut b, i.srcs[0], surf);
                let direct = contiguous(&i.dst, i.exec, 1, 0);
                let dst = if direct { i.dst } else { b.vreg(Type::UD, 1) };
                send(
                    &mut b,
                    byte_scattered(false, surf, size_log2, i.exec),
                    dst.retype(Type::UD),
                    vec![addr],
                );
                if !direct {
                    b.mov(i.dst.retype(Type::UD), dst);
                }
            }
            LOp::ByteScatteredWrite { surf, size_log2 } => {
                let (addr, _) = addr_payload(&mut b, i.srcs[0], surf);
                let data = payload(&mut b, i.srcs[1], 1, 0);
                send(
                    &mut b,
                    byte_scattered(true, surf, size_log2, i.exec),
                    Opnd::null(Type::UD),
                    vec![addr, data],
                );
            }
            LOp::Fence => {
                let mut b8 = b.at(8, 0, true);
                let hdr = b8.vreg(Type::UD, 1);
                b8.mov(hdr, Opnd::g(0, 0, Type::UD, 1));
                let fc = (0x07 << 14) | (1 << 13);
                b8.inst(
                    LOp::Send {
                        indirect: false,
                        sfid: Sfid::DpDc0,
                        desc: desc(1, 1, true, fc),
                        ex_desc: 0,
                        mlen: 1,
                        ex_mlen: 0,
                        rlen: 1,
                        eot: false,
                    },
                    i.dst.retype(Type::UD),
                    vec![hdr],
                );
                // Wait for the commit before anything that follows.
                b8.mov(Opnd::null(Type::UD), i.dst.retype(Type::UD));
            }
            LOp::Barrier => {
                let mut b8 = b.at(8, 0, true);
                let p = b8.vreg(Type::UD, 1);
                b8.mov(p, Opnd::ud(0));
                b8.at(1, 0, true).alu2(
                    Opcode::And,
                    p.offset(8).scalar(),
                    Opnd::g(0, 8, Type::UD, 0),
                    Opnd::ud(0x8F00_0000),
                );
                b8.inst(
                    LOp::Send {
                        indirect: false,
                        sfid: Sfid::Gateway,
                        desc: 0x0200_0004,
                        ex_desc: 0,
                        mlen: 1,
                        ex_mlen: 0,
                        rlen: 0,
                        eot: false,
                    },
                    Opnd::null(Type::UD),
                    vec![p],
                );
                b8.at(1, 0, true)
                    .inst(LOp::Wait, Opnd::null(Type::UD), vec![]);
            }
            LOp::Eot => {
                let mut b8 = b.at(8, 0, true);
                let p = Opnd::g(GEN9.eot_payload_grf, 0, Type::UD, 1);
                b8.mov(p, Opnd::g(0, 0, Type::UD, 1));
                b8.inst(
                    LOp::Send {
                        indirect: false,
                        sfid: Sfid::ThreadSpawner,
                        desc: 0x0200_0010,
                        ex_desc: 0,
                        mlen: 1,
                        ex_mlen: 0,
                        rlen: 0,
                        eot: true,
                    },
                    Opnd::null(Type::UD),
                    vec![p],
                );
            }
            LOp::ScratchRead { offset, regs } => {
                let hdr = scratch_header(&mut b, offset);
                b.at(8, 0, true).inst(
                    LOp::Send {
                        indirect: false,
                        sfid: Sfid::DpDc0,
                        desc: desc(1, regs as u32, true, SCRATCH_BTI | (oword_code(regs) << 8)),
                        ex_desc: 0,
                        mlen: 1,
                        ex_mlen: 0,
                        rlen: regs,
                        eot: false,
                    },
                    i.dst.retype(Type::UD),
                    vec![hdr],
                );
            }
            LOp::ScratchWrite { offset, regs } => {
                let hdr = scratch_header(&mut b, offset);
                let fc = (0x08 << 14) | (oword_code(regs) << 8) | SCRATCH_BTI;
                b.at(8, 0, true).inst(
                    LOp::Send {
                        indirect: false,
                        sfid: Sfid::DpDc0,
                        desc: desc(1, 0, true, fc),
                        ex_desc: (regs as u32) << 6,
                        mlen: 1,
                        ex_mlen: regs,
                        rlen: 0,
                        eot: false,
                    },
                    Opnd::null(Type::UD),
                    vec![hdr, i.srcs[0].retype(Type::UD)],
                );
            }
            _ => unreachable!("not a logical message"),
        }
    }
}

/// A byte scattered read (message type 0x04) or write (0x0C) on data cache 0: message
/// control bit 0 = SIMD16, bits 3:2 = data size (0 byte, 1 word, 2 dword); address payload
/// of one dword per lane, data (write) or response (read) one dword per lane.
///
/// On an A64 surface: the A64 scattered read (0x10) or write (0x1A) on data cache 1, with
/// message control bits 1:0 = 0 (byte subtype), 3:2 = data size, bit 4 = SIMD16, and two
/// address GRFs per eight lanes (docs/gen9.md 4.1).
fn byte_scattered(write: bool, surf: Surface, size_log2: u8, exec: u8) -> LOp {
    let bl = regs(exec);
    let simd16 = u32::from(exec == 16);
    let (sfid, ty, mc, al) = if surf == Surface::A64 {
        let ty = if write { 0x1A } else { 0x10 };
        (
            Sfid::DpDc1,
            ty,
            ((size_log2 as u32) << 2) | (simd16 << 4),
            2 * bl,
        )
    } else {
        let ty = if write { 0x0C } else { 0x04 };
        (Sfid::DpDc0, ty, ((size_log2 as u32) << 2) | simd16, bl)
    };
    let fc = (ty << 14) | (mc << 8) | surf.bti() as u32;
    let rlen = if write { 0 } else { bl };
    LOp::Send {
        indirect: false,
        sfid,
        desc: desc(al, rlen, false, fc),
        ex_desc: if write { bl << 6 } else { 0 },
        mlen: al as u8,
        ex_mlen: if write { bl as u8 } else { 0 },
        rlen: rlen as u8,
        eot: false,
    }
}

/// OWord block size code for `regs` GRFs (2 OWords per GRF).
fn oword_code(regs: u8) -> u32 {
    match regs {
        1 => 2,
        2 => 3,
        _ => 4,
    }
}

/// Scratch header (docs/gen9.md 4.3): zero, DW2 = offset in OWords, DW3[3:0] = R0.3[3:0],
/// DW5 = R0.5 & 0xFFFFFC00.
fn scratch_header(b: &mut Builder, offset: u32) -> Opnd {
    let mut b8 = b.at(8, 0, true);
    let h = b8.vreg(Type::UD, 1);
    b8.mov(h, Opnd::ud(0));
    let mut b1 = b8.at(1, 0, true);
    b1.mov(h.offset(8).scalar(), Opnd::ud(offset / 16));
    b1.alu2(
        Opcode::And,
        h.offset(12).scalar(),
        Opnd::g(0, 12, Type::UD, 0),
        Opnd::ud(0xF),
    );
    b1.alu2(
        Opcode::And,
        h.offset(20).scalar(),
        Opnd::g(0, 20, Type::UD, 0),
        Opnd::ud(0xFFFF_FC00),
    );
    h
}

fn swap_cmod(c: CondMod) -> CondMod {
    match c {
        CondMod::G => CondMod::L,
        CondMod::L => CondMod::G,
        CondMod::Ge => CondMod::Le,
        CondMod::Le => CondMod::Ge,
        x => x,
    }
}

/// Regioning / operand legalization: immediates only in the last source of 2-source ALU
/// instructions and never in MATH; both-immediate sources get a register.
pub fn legalize(prog: &mut Program) {
    let old = std::mem::take(&mut prog.insts);
    for mut i in old {
        let mut b = Builder::new(prog, i.exec);
        b.group = i.group;
        b.we_all = i.we_all;
        if let LOp::Alu(op) = i.op {
            if i.srcs.len() == 2 {
                if i.srcs[0].is_imm() && !i.srcs[1].is_imm() {
                    let swappable = matches!(
                        op,
                        Opcode::Add | Opcode::Mul | Opcode::And | Opcode::Or | Opcode::Xor
                    ) || (op == Opcode::Cmp)
                        || (op == Opcode::Sel && (i.cmod != CondMod::None || i.pred.is_some()));
                    if swappable {
                        i.srcs.swap(0, 1);
                        if op == Opcode::Cmp {
                            i.cmod = swap_cmod(i.cmod);
                        }
                        if op == Opcode::Sel {
                            if let Some(p) = &mut i.pred {
                                p.inverse = !p.inverse;
                            }
                        }
                    } else {
                        i.srcs[0] = b.copy_to_reg(i.srcs[0]);
                    }
                } else if i.srcs[0].is_imm() {
                    i.srcs[0] = b.copy_to_reg(i.srcs[0]);
                }
            }
        }
        // Three-source instructions (Align16) take only GRF sources with region <4,4,1>
        // (contiguous) or <0,1,0> (replicated scalar), and a contiguous destination.
        if let LOp::Alu(_) = i.op {
            if i.srcs.len() == 3 {
                for k in 0..3 {
                    let o = i.srcs[k];
                    // 64-bit sources have no RepCtrl: a scalar becomes a full vector.
                    let wide_scalar = o.stride == 0 && o.ty.size() == 8 && i.exec > 1;
                    let regioned = (o.stride > 1 || o.rows.is_some()) && o.base != Base::Null;
                    if o.is_imm() || regioned || wide_scalar {
                        i.srcs[k] = b.copy_to_reg(o);
                    }
                }
            }
        }
        // A 64-bit immediate is only encodable as the source of a MOV (three-source
        // operands are registers by now): it is moved once into a scalar register (exec
        // size 1, `WE_all`) and read as `<0;1,0>`, not moved per piece at full width;
        // `reuse_constants` then shares the move within the block.
        if let LOp::Alu(op) = i.op {
            if op != Opcode::Mov || i.srcs.len() != 1 {
                for k in 0..i.srcs.len() {
                    let o = i.srcs[k];
                    if o.is_imm() && o.ty.size() == 8 {
                        i.srcs[k] = b.scalar_copy(o);
                    }
                }
            }
        }
        if let LOp::Math(_) = i.op {
            for k in 0..i.srcs.len() {
                if i.srcs[k].is_imm() {
                    i.srcs[k] = b.copy_to_reg(i.srcs[k]);
                }
            }
        }
        b.push(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One SIMD16 instruction in a fresh program.
    fn one(f: impl FnOnce(&mut Builder)) -> LInst {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        f(&mut b);
        p.insts.pop().expect("an instruction")
    }

    #[test]
    fn in_place_split_with_the_destination_layout_is_accepted() {
        // DF add in place: piece k writes exactly the bytes it read.
        let i = one(|b| {
            let v = b.vreg(Type::DF, 1);
            b.alu2(Opcode::Add, v, v, Opnd::g(2, 0, Type::DF, 0));
        });
        assert_eq!(max_width(&i), 8);
        assert_eq!(split_overlap(&i, 8), None);
        // DF -> F in place: piece 0 writes F lanes 0-7 (bytes 0-31), piece 1 reads DF
        // lanes 8-15 (bytes 64-127).
        let i = one(|b| {
            let v = b.vreg(Type::DF, 1);
            b.mov(v.retype(Type::F), v);
        });
        assert_eq!(split_overlap(&i, 8), None);
        // Different registers never overlap.
        let i = one(|b| {
            let d = b.vreg(Type::DF, 1);
            let s = b.vreg(Type::F, 1);
            b.mov(d, s);
        });
        assert_eq!(split_overlap(&i, 8), None);
    }

    #[test]
    fn in_place_split_over_a_differently_laid_out_source_is_caught() {
        // F -> DF in place: piece 0 writes DF lanes 0-7 (bytes 0-63) over the F sources of
        // lanes 8-15 (bytes 32-63) that piece 1 reads.
        let i = one(|b| {
            let v = b.vreg(Type::DF, 1);
            b.mov(v, v.retype(Type::F));
        });
        let e = split_overlap(&i, 8).expect("overlap");
        assert!(e.contains("piece 0") && e.contains("piece 1"), "{e}");
        // A scalar source inside the destination: piece 0 overwrites it before piece 1.
        let i = one(|b| {
            let v = b.vreg(Type::DF, 1);
            b.alu2(Opcode::Add, v, v, v.scalar());
        });
        assert!(split_overlap(&i, 8).is_some());
        // The same on fixed GRFs: piece 0 writes g10-g11 (DF lanes 0-7), piece 1 reads F
        // lanes 8-15 of a source starting at g10, i.e. g11.
        let i = one(|b| {
            b.mov(Opnd::g(10, 0, Type::DF, 1), Opnd::g(10, 0, Type::F, 1));
        });
        assert!(split_overlap(&i, 8).is_some());
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "SIMD-width lowering")]
    fn lowering_refuses_an_overlapping_split_in_debug_builds() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let v = b.vreg(Type::DF, 1);
        b.mov(v, v.retype(Type::F));
        lower_simd_width(&mut p);
    }

    /// A SIMD16 typed read becomes two SIMD8 messages, channels 0-7 with slot group 1 and
    /// channels 8-15 with slot group 2, each with its own half of the coordinates and a
    /// 4-channel response.
    #[test]
    fn simd16_typed_read_splits_into_two_slot_groups() {
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let coords = b.vreg(Type::UD, 2);
        let dst = b.vreg(Type::UD, 4);
        b.inst(
            LOp::TypedRead {
                surf: Surface::Bti(3),
                coords: 2,
                comp_stride: 64,
                comps: 4,
            },
            dst,
            vec![coords],
        );
        lower_simd_width(&mut p);
        assert_eq!(p.insts.len(), 2);
        assert_eq!((p.insts[0].exec, p.insts[0].group), (8, 0));
        assert_eq!((p.insts[1].exec, p.insts[1].group), (8, 8));
        lower_sends(&mut p);
        let sends: Vec<u32> = p
            .insts
            .iter()
            .filter_map(|i| match i.op {
                LOp::Send {
                    desc, mlen, rlen, ..
                } => {
                    assert_eq!((mlen, rlen), (2, 4), "{i}");
                    Some(desc)
                }
                _ => None,
            })
            .collect();
        // mlen 2, rlen 4, type 0x05, mask 0 (XYZW), slot group 1 then 2, BTI 3.
        assert_eq!(sends, vec![0x0441_5003, 0x0441_6003]);
    }

    /// A sampler message with a header (gather4 selects its component there) becomes a
    /// split send: the header GRF (R0 with the component in dword 2) as the first part, the
    /// parameters as the second; the descriptor counts the header alone as mlen.
    #[test]
    fn gather_sends_a_header_then_its_parameters() {
        use ferrite_isa::sampler_msg::{SamplerHeader, SamplerMsgType};
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let params = b.vreg(Type::UD, 2);
        let dst = b.vreg(Type::UD, 4);
        let dw2 = SamplerHeader {
            gather_component: 2,
            ..SamplerHeader::default()
        }
        .to_dw2();
        b.inst(
            LOp::Sample {
                bti: 1,
                sampler: 3,
                msg: SamplerMsgType::Gather4,
                params: 2,
                comp_stride: 64,
                header: Some(dw2),
                indirect: false,
            },
            dst,
            vec![params],
        );
        lower_simd_width(&mut p);
        lower_sends(&mut p);
        let mut sends = 0;
        for i in &p.insts {
            if let LOp::Send {
                sfid,
                desc,
                ex_desc,
                mlen,
                ex_mlen,
                rlen,
                ..
            } = i.op
            {
                sends += 1;
                assert_eq!(
                    (sfid, i.exec, mlen, ex_mlen, rlen),
                    (Sfid::Sampler, 16, 1, 4, 8),
                    "{i}"
                );
                assert_eq!(ex_desc, 4 << 6);
                assert_eq!(i.srcs.len(), 2, "{i}");
                let d = SamplerDesc::decode(desc).unwrap();
                assert!(d.header);
                assert_eq!((d.bti, d.sampler, d.msg), (1, 3, SamplerMsgType::Gather4));
            }
        }
        assert_eq!(sends, 1);
        // The header's dword 2 is written with the component.
        assert!(
            p.insts
                .iter()
                .any(|i| i.exec == 1 && i.srcs.iter().any(|s| *s == Opnd::ud(dw2))),
            "no header dword 2 write"
        );
    }

    /// sample_d is SIMD8 only: a SIMD16 one (2-D: U, dU/dx, dU/dy, V, dV/dx, dV/dy) becomes
    /// two SIMD8 messages of 6 parameters, each returning 4 channels of 1 GRF.
    #[test]
    fn sample_d_splits_to_simd8() {
        use ferrite_isa::sampler_msg::SamplerMsgType;
        let mut p = Program::default();
        let mut b = Builder::new(&mut p, 16);
        let params = b.vreg(Type::UD, 6);
        let dst = b.vreg(Type::UD, 4);
        b.inst(
            LOp::Sample {
                bti: 2,
                sampler: 2,
                msg: SamplerMsgType::SampleD,
                params: 6,
                comp_stride: 64,
                header: None,
                indirect: false,
            },
            dst,
            vec![params],
        );
        lower_simd_width(&mut p);
        lower_sends(&mut p);
        let sends: Vec<_> = p
            .insts
            .iter()
            .filter_map(|i| match i.op {
                LOp::Send {
                    desc, mlen, rlen, ..
                } => Some((i.exec, desc, mlen, rlen)),
                _ => None,
            })
            .collect();
        assert_eq!(sends.len(), 2, "{sends:?}");
        for (exec, desc, mlen, rlen) in sends {
            assert_eq!((exec, mlen, rlen), (8, 6, 4));
            let d = SamplerDesc::decode(desc).unwrap();
            assert_eq!(
                (d.msg, d.simd),
                (SamplerMsgType::SampleD, SamplerSimd::Simd8)
            );
        }
    }

    /// A SIMD32 sample_l (LOD, U, V) becomes two SIMD16 sampler messages, each with 3
    /// parameters of 2 GRFs and 4 channels of 2 GRFs back; at SIMD8 one message of 3 + 4.
    #[test]
    fn sampler_messages_split_to_simd16() {
        use ferrite_isa::sampler_msg::SamplerMsgType;
        for (width, exec, sends_n, mlen, rlen) in [(32u8, 16u8, 2, 6, 8), (8, 8, 1, 3, 4)] {
            let mut p = Program::default();
            let mut b = Builder::new(&mut p, width);
            let stride = 4 * width as u32;
            let params = b.vreg(Type::UD, 3);
            let dst = b.vreg(Type::UD, 4);
            b.inst(
                LOp::Sample {
                    bti: 5,
                    sampler: 5,
                    msg: SamplerMsgType::SampleL,
                    params: 3,
                    comp_stride: stride,
                    header: None,
                    indirect: false,
                },
                dst,
                vec![params],
            );
            lower_simd_width(&mut p);
            lower_sends(&mut p);
            let sends: Vec<SamplerDesc> = p
                .insts
                .iter()
                .filter_map(|i| match i.op {
                    LOp::Send {
                        sfid,
                        desc,
                        mlen: m,
                        rlen: r,
                        ..
                    } => {
                        assert_eq!(
                            (sfid, i.exec, m, r),
                            (Sfid::Sampler, exec, mlen, rlen),
                            "{i}"
                        );
                        Some(SamplerDesc::decode(desc).unwrap())
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(sends.len(), sends_n, "SIMD{width}");
            for d in sends {
                assert_eq!((d.bti, d.sampler, d.msg), (5, 5, SamplerMsgType::SampleL));
                assert_eq!(d.simd.width(), exec as u32);
                assert_eq!((d.params(), d.rlen, d.header), (3, rlen as u32, false));
            }
        }
    }
}
