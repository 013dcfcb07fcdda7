//! Fast paths for the bulk of compute code: 32-bit F or D/UD operations, and HF arithmetic
//! (fp16 modes of frameworks), whose sources and destination share the type class, with
//! direct operands (any region: the lane offsets are pre-computed), no saturation, no
//! accumulator, round-to-nearest-even. Values are gathered into plain lane arrays, computed
//! in tight loops and scattered back under the execution mask. Everything else takes the general path in `alu.rs`; both implement
//! the same semantics and the reference tests run through both.

// Lane loops index several parallel per-lane arrays at once.
#![allow(clippy::needless_range_loop)]

use ferrite_isa::{CondMod, Type};

use super::alu::ordered;
use super::fp::{FpEnv, Rnd};
use super::prep::{Alu, AluOp, Op};
use super::regs::REGS_SIZE;
use super::ThreadState;

#[inline(always)]
fn rd32(regs: &[u8; REGS_SIZE], o: usize) -> u32 {
    u32::from_le_bytes([regs[o], regs[o + 1], regs[o + 2], regs[o + 3]])
}

#[inline(always)]
fn flush(x: u32, keep: bool) -> u32 {
    if !keep && x & 0x7F80_0000 == 0 {
        x & 0x8000_0000
    } else {
        x
    }
}

#[inline(always)]
fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

/// Which fast path executes an instruction, decided once when the kernel is prepared
/// ([`classify`]); the cr0 rounding mode is the only thing left to check per execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// F sources and destination.
    F32,
    /// D/UD sources and destination.
    I32,
    /// HF sources and destination: computed in f32 and rounded once to half, as the general
    /// path does.
    Hf,
}

/// The fast path `a` qualifies for, if any: direct operands (any region), no saturation, no
/// accumulator write, no Align16 write mask, and an op/conditional-modifier pair the fast
/// paths implement exactly as the general path does.
pub(super) fn classify(a: &Alu) -> Option<Class> {
    if a.sat || a.acc_wr || a.dst.ind.is_some() || a.dst.wmask != 0xF || a.dst.is_ip {
        return None;
    }
    let class = match a.dst.ty {
        Type::F => Class::F32,
        Type::D | Type::UD => Class::I32,
        Type::HF => Class::Hf,
        _ => return None,
    };
    for s in &a.src {
        let ok = match class {
            Class::F32 => s.ty == Type::F,
            Class::I32 => matches!(s.ty, Type::D | Type::UD),
            Class::Hf => s.ty == Type::HF,
        };
        if !ok || s.ind.is_some() {
            return None;
        }
    }
    let float = class != Class::I32;
    let n = a.src.len();
    let cm = a.cmod;
    let simple_cmod = matches!(
        cm,
        CondMod::Z | CondMod::Nz | CondMod::G | CondMod::Ge | CondMod::L | CondMod::Le
    ) || (float && cm == CondMod::U);
    // Integer compares: only same-typed, unmodified sources (the general path compares the
    // exact values of mixed D/UD and negated operands).
    let int_mods = a.src.iter().any(|s| s.neg || s.abs || s.ty != a.src[0].ty);
    let ok = match (a.op, n) {
        (AluOp::Mov, 1) | (AluOp::Add, 2) | (AluOp::Mul, 2) => cm == CondMod::None || simple_cmod,
        (AluOp::Mad, 3) => cm == CondMod::None && float,
        (AluOp::Sel, 2) => cm == CondMod::None || (simple_cmod && (float || !int_mods)),
        (AluOp::Cmp, 2) => simple_cmod && (float || !int_mods),
        (AluOp::And | AluOp::Or | AluOp::Xor | AluOp::Shl | AluOp::Shr | AluOp::Asr, 2)
        | (AluOp::Not, 1) => !float && (cm == CondMod::None || simple_cmod),
        _ => false,
    };
    ok.then_some(class)
}

/// Runs `a` on a fast path if it has one; returns false (having done nothing) if not.
#[inline]
pub(super) fn fast_path(
    t: &mut ThreadState,
    a: &Alu,
    op: &Op,
    mask: u32,
    pred: u32,
    env: &FpEnv,
) -> bool {
    match a.fast {
        None => false,
        Some(Class::F32) if env.rnd != Rnd::Rtne => false,
        Some(Class::Hf) if env.rnd != Rnd::Rtne => false,
        Some(Class::Hf) => {
            fast_hf(t, a, op, mask, pred, env);
            true
        }
        Some(c) => fast_32(t, a, op, mask, pred, env, c == Class::F32),
    }
}

/// 32-bit F or D/UD operations.
fn fast_32(
    t: &mut ThreadState,
    a: &Alu,
    op: &Op,
    mask: u32,
    pred: u32,
    env: &FpEnv,
    float: bool,
) -> bool {
    let cm = a.cmod;
    let exec = op.exec as usize;
    let keep = env.f_denorm;
    let logic = matches!(a.op, AluOp::And | AluOp::Or | AluOp::Xor | AluOp::Not);
    let regs = &mut t.regs;
    let mut v = [[0u32; 32]; 3];
    for (j, s) in a.src.iter().enumerate() {
        let out = &mut v[j];
        match &s.imm {
            Some((imm, 1)) => out[..exec].fill(imm[0] as u32),
            Some((imm, m)) => {
                for (k, o) in out.iter_mut().enumerate().take(exec) {
                    *o = imm[k % *m as usize] as u32;
                }
            }
            None if s.scalar => out[..exec].fill(rd32(regs, s.off[0] as usize)),
            None if s.packed => {
                let b = s.off[0] as usize;
                if let Some(bytes) = regs.get(b..b + 4 * exec) {
                    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                        *o = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
            }
            None => {
                for (o, &off) in out.iter_mut().zip(s.off.iter()).take(exec) {
                    *o = rd32(regs, off as usize);
                }
            }
        }
        if float {
            if !a.raw_mov && !keep {
                out[..exec].iter_mut().for_each(|x| *x = flush(*x, false));
            }
            if s.abs {
                out[..exec].iter_mut().for_each(|x| *x &= 0x7FFF_FFFF);
            }
            if s.neg {
                out[..exec].iter_mut().for_each(|x| *x ^= 0x8000_0000);
            }
        } else {
            if s.abs && s.ty == Type::D {
                out[..exec]
                    .iter_mut()
                    .for_each(|x| *x = (*x as i32).wrapping_abs() as u32);
            }
            if s.neg {
                if logic {
                    out[..exec].iter_mut().for_each(|x| *x = !*x);
                } else {
                    out[..exec].iter_mut().for_each(|x| *x = x.wrapping_neg());
                }
            }
        }
    }
    let [s0, s1, s2] = &v;
    let mut r = [0u32; 32];
    let mut cond = 0u32;
    let signed = a.src.iter().any(|s| s.ty == Type::D);
    // `classify` admits only the ordering modifiers, and U for floats.
    let icmp = |x: u32, y: u32| -> bool {
        let (x, y) = if signed {
            (x as i32 as i64, y as i32 as i64)
        } else {
            (x as i64, y as i64)
        };
        ordered(cm, x, y, || false)
    };
    let fcmp = |x: f32, y: f32| -> bool { ordered(cm, x, y, || x.is_nan() || y.is_nan()) };
    match (a.op, float) {
        (AluOp::Mov, _) => r[..exec].copy_from_slice(&s0[..exec]),
        (AluOp::Add, true) => (0..exec).for_each(|k| r[k] = (f(s0[k]) + f(s1[k])).to_bits()),
        (AluOp::Mul, true) => (0..exec).for_each(|k| r[k] = (f(s0[k]) * f(s1[k])).to_bits()),
        (AluOp::Mad, _) => {
            (0..exec).for_each(|k| r[k] = f(s1[k]).mul_add(f(s2[k]), f(s0[k])).to_bits())
        }
        (AluOp::Add, false) => (0..exec).for_each(|k| r[k] = s0[k].wrapping_add(s1[k])),
        (AluOp::Mul, false) => (0..exec).for_each(|k| r[k] = s0[k].wrapping_mul(s1[k])),
        (AluOp::And, _) => (0..exec).for_each(|k| r[k] = s0[k] & s1[k]),
        (AluOp::Or, _) => (0..exec).for_each(|k| r[k] = s0[k] | s1[k]),
        (AluOp::Xor, _) => (0..exec).for_each(|k| r[k] = s0[k] ^ s1[k]),
        (AluOp::Not, _) => (0..exec).for_each(|k| r[k] = !s0[k]),
        (AluOp::Shl, _) => (0..exec).for_each(|k| r[k] = s0[k] << (s1[k] & 31)),
        (AluOp::Shr, _) => (0..exec).for_each(|k| r[k] = s0[k] >> (s1[k] & 31)),
        (AluOp::Asr, _) => (0..exec).for_each(|k| r[k] = ((s0[k] as i32) >> (s1[k] & 31)) as u32),
        (AluOp::Sel, fl) => {
            for k in 0..exec {
                let take0 = if cm == CondMod::None {
                    pred >> k & 1 != 0
                } else if fl {
                    let (x, y) = (f(s0[k]), f(s1[k]));
                    if x.is_nan() {
                        false
                    } else if y.is_nan() {
                        true
                    } else {
                        fcmp(x, y)
                    }
                } else {
                    icmp(s0[k], s1[k])
                };
                r[k] = if take0 { s0[k] } else { s1[k] };
            }
        }
        (AluOp::Cmp, fl) => {
            for k in 0..exec {
                let c = if fl {
                    fcmp(f(s0[k]), f(s1[k]))
                } else {
                    icmp(s0[k], s1[k])
                };
                cond |= (c as u32) << k;
                r[k] = if c { u32::MAX } else { 0 };
            }
        }
        _ => return false,
    }
    if float && !keep && !a.raw_mov && a.op != AluOp::Cmp {
        r[..exec].iter_mut().for_each(|x| *x = flush(*x, false));
    }
    // Conditional modifiers of ordinary ops test the written value against zero.
    let result_cmod = cm != CondMod::None && !matches!(a.op, AluOp::Cmp | AluOp::Sel);
    if result_cmod {
        let dsigned = a.dst.ty == Type::D;
        for k in 0..exec {
            let c = if float {
                fcmp(f(r[k]), 0.0)
            } else {
                let v = if dsigned {
                    r[k] as i32 as i64
                } else {
                    r[k] as i64
                };
                ordered(cm, v, 0, || false)
            };
            cond |= (c as u32) << k;
        }
    }
    if !a.dst.null {
        let full = mask == super::prep::ones(op.exec);
        let b = a.dst.off[0] as usize;
        if full && a.dst.packed {
            if let Some(bytes) = regs.get_mut(b..b + 4 * exec) {
                for (c, x) in bytes.chunks_exact_mut(4).zip(r.iter()) {
                    c.copy_from_slice(&x.to_le_bytes());
                }
            }
        } else {
            for k in 0..exec {
                if full || mask >> k & 1 != 0 {
                    let o = a.dst.off[k] as usize;
                    regs[o..o + 4].copy_from_slice(&r[k].to_le_bytes());
                }
            }
        }
    }
    if a.op == AluOp::Cmp || result_cmod {
        write_flag_bits(t, op, mask, cond);
    }
    true
}

#[inline(always)]
fn rd16(regs: &[u8; REGS_SIZE], o: usize) -> u16 {
    u16::from_le_bytes([regs[o], regs[o + 1]])
}

/// Half-float operations (fp16 arithmetic of frameworks such as ncnn): each source is
/// widened to f32 exactly, the operation runs in f32 (round to nearest even), and the result
/// is rounded once to half with cr0's half denormal mode, as the general path does. A half
/// value is never an f32 denormal, so the f32 source flush of the general path is a no-op
/// here and is left out.
fn fast_hf(t: &mut ThreadState, a: &Alu, op: &Op, mask: u32, pred: u32, env: &FpEnv) {
    let exec = op.exec as usize;
    let cm = a.cmod;
    let regs = &mut t.regs;
    let mut raw = [[0u16; 32]; 3];
    let mut v = [[0f32; 32]; 3];
    for (j, s) in a.src.iter().enumerate() {
        let bits = &mut raw[j];
        match &s.imm {
            Some((imm, m)) => {
                for (k, o) in bits.iter_mut().enumerate().take(exec) {
                    *o = imm[k % *m as usize] as u16;
                }
            }
            None => {
                for (o, &off) in bits.iter_mut().zip(s.off.iter()).take(exec) {
                    *o = rd16(regs, off as usize);
                }
            }
        }
        let out = &mut v[j];
        for k in 0..exec {
            let mut x = super::fp::f16_to_f32(bits[k]);
            if s.abs {
                x = x.abs();
            }
            if s.neg {
                x = -x;
            }
            out[k] = x;
        }
    }
    let fcmp = |x: f32, y: f32| -> bool {
        let (x, y) = (x as f64, y as f64);
        ordered(cm, x, y, || x.is_nan() || y.is_nan())
    };
    let [s0, s1, s2] = &v;
    let mut r = [0u16; 32];
    let mut cond = 0u32;
    let round = |x: f32| super::fp::f32_to_f16(x, env.rnd, env.hf_denorm);
    match a.op {
        AluOp::Mov if a.raw_mov => r[..exec].copy_from_slice(&raw[0][..exec]),
        AluOp::Mov => (0..exec).for_each(|k| r[k] = round(s0[k])),
        AluOp::Add => (0..exec).for_each(|k| r[k] = round(s0[k] + s1[k])),
        AluOp::Mul => (0..exec).for_each(|k| r[k] = round(s0[k] * s1[k])),
        AluOp::Mad => (0..exec).for_each(|k| r[k] = round(s1[k].mul_add(s2[k], s0[k]))),
        AluOp::Sel => {
            for k in 0..exec {
                let take0 = if cm == CondMod::None {
                    pred >> k & 1 != 0
                } else if s0[k].is_nan() {
                    false
                } else {
                    s1[k].is_nan() || fcmp(s0[k], s1[k])
                };
                r[k] = round(if take0 { s0[k] } else { s1[k] });
            }
        }
        AluOp::Cmp => {
            for k in 0..exec {
                let c = fcmp(s0[k], s1[k]);
                cond |= (c as u32) << k;
                r[k] = if c { 0xFFFF } else { 0 };
            }
        }
        // `classify` admits nothing else for HF.
        _ => unreachable!("HF fast path for {:?}", a.op),
    }
    // Conditional modifiers of ordinary ops test the written half against zero.
    let result_cmod = cm != CondMod::None && !matches!(a.op, AluOp::Cmp | AluOp::Sel);
    if result_cmod {
        for k in 0..exec {
            let x = super::fp::f16_to_f32(r[k]) as f64;
            let c = ordered(cm, x, 0.0, || x.is_nan());
            cond |= (c as u32) << k;
        }
    }
    if !a.dst.null {
        for k in 0..exec {
            if mask >> k & 1 != 0 {
                let o = a.dst.off[k] as usize;
                regs[o..o + 2].copy_from_slice(&r[k].to_le_bytes());
            }
        }
    }
    if a.op == AluOp::Cmp || result_cmod {
        write_flag_bits(t, op, mask, cond);
    }
}

/// Writes the enabled lanes' bits of `cond` into the instruction's flag subregister.
#[inline]
fn write_flag_bits(t: &mut ThreadState, op: &Op, mask: u32, cond: u32) {
    let base = op.flag_base + op.first;
    if base < 64 {
        let m = (mask as u64) << base;
        let c = (cond as u64) << base;
        let flags = t.flags();
        t.set_flags((flags & !m) | (c & m));
    }
}
