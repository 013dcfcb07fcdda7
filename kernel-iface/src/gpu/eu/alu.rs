//! ALU execution: operand gathering through pre-computed lane offsets, conversion into the
//! execution domain (f32, f64 or exact i128 integers), the operation, and the conversion
//! to the destination type with saturation, rounding, denormal handling, the conditional
//! modifier and accumulator updates. Common 32-bit cases take the fast path (`fast.rs`).

// Lane loops index several parallel per-lane arrays at once.
#![allow(clippy::needless_range_loop)]

use ferrite_isa::{CondMod, MathFunction, Type};

use super::fp::{self, FpEnv, Rnd};
use super::math;
use super::prep::{Alu, AluOp, Dom, DstDesc, Op, SrcDesc};
use super::regs::*;
use super::ThreadState;

#[inline]
fn rd_raw(regs: &[u8; REGS_SIZE], o: usize, sz: usize) -> u64 {
    match sz {
        1 => regs[o] as u64,
        2 => u16::from_le_bytes([regs[o], regs[o + 1]]) as u64,
        4 => u32::from_le_bytes([regs[o], regs[o + 1], regs[o + 2], regs[o + 3]]) as u64,
        _ => {
            let mut b = [0u8; 8];
            b.copy_from_slice(&regs[o..o + 8]);
            u64::from_le_bytes(b)
        }
    }
}

#[inline]
fn wr_raw(regs: &mut [u8; REGS_SIZE], o: usize, sz: usize, v: u64) {
    match sz {
        1 => regs[o] = v as u8,
        2 => regs[o..o + 2].copy_from_slice(&(v as u16).to_le_bytes()),
        4 => regs[o..o + 4].copy_from_slice(&(v as u32).to_le_bytes()),
        _ => regs[o..o + 8].copy_from_slice(&v.to_le_bytes()),
    }
}

/// Integer value of raw bits of an integer type (sign- or zero-extended).
#[inline]
fn int_of(ty: Type, raw: u64) -> i128 {
    match ty {
        Type::UB => raw as u8 as i128,
        Type::B => raw as u8 as i8 as i128,
        Type::UW => raw as u16 as i128,
        Type::W => raw as u16 as i16 as i128,
        Type::UD => raw as u32 as i128,
        Type::D => raw as u32 as i32 as i128,
        Type::UQ => raw as i128,
        Type::Q => raw as i64 as i128,
        Type::F => f32::from_bits(raw as u32) as i64 as i128,
        Type::HF => fp::f16_to_f32(raw as u16) as i64 as i128,
        Type::DF => f64::from_bits(raw) as i64 as i128,
        Type::V | Type::UV | Type::VF => 0,
    }
}

/// Range of an integer type.
#[inline]
fn int_range(ty: Type) -> (i128, i128) {
    match ty {
        Type::UB => (0, u8::MAX as i128),
        Type::B => (i8::MIN as i128, i8::MAX as i128),
        Type::UW => (0, u16::MAX as i128),
        Type::W => (i16::MIN as i128, i16::MAX as i128),
        Type::UD => (0, u32::MAX as i128),
        Type::D => (i32::MIN as i128, i32::MAX as i128),
        Type::UQ => (0, u64::MAX as i128),
        _ => (i64::MIN as i128, i64::MAX as i128),
    }
}

#[inline]
fn f32_of(ty: Type, raw: u64, rnd: Rnd) -> f32 {
    match ty {
        Type::F => f32::from_bits(raw as u32),
        Type::HF => fp::f16_to_f32(raw as u16),
        Type::DF => fp::f64_to_f32(f64::from_bits(raw), rnd),
        t => fp::i128_to_f32(int_of(t, raw), rnd),
    }
}

#[inline]
fn f64_of(ty: Type, raw: u64, rnd: Rnd) -> f64 {
    match ty {
        Type::F => f32::from_bits(raw as u32) as f64,
        Type::HF => fp::f16_to_f32(raw as u16) as f64,
        Type::DF => f64::from_bits(raw),
        t => fp::i128_to_f64(int_of(t, raw), rnd),
    }
}

/// Saturation to [0, 1]: NaN and every value <= 0 (including -0) give +0.
fn clamp01_f32(x: f32) -> f32 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else {
        x.min(1.0)
    }
}

fn clamp01_f64(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else {
        x.min(1.0)
    }
}

/// Float (as f64, exact for f32 inputs) to an integer type: round toward zero, saturate,
/// NaN -> 0. Returns the bits and whether the value was out of range.
#[inline]
fn float_to_int(x: f64, ty: Type) -> (u64, bool) {
    let (lo, hi) = int_range(ty);
    if x.is_nan() {
        return (0, true);
    }
    let t = x.trunc();
    let (v, o) = if t < lo as f64 {
        (lo, true)
    } else if t > hi as f64 {
        (hi, true)
    } else {
        (t as i128, false)
    };
    (v as u64, o)
}

/// Result of converting a value to the destination type.
struct Out {
    raw: u64,
    ovf: bool,
}

#[inline]
fn out_from_f32(x: f32, ty: Type, sat: bool, env: &FpEnv) -> Out {
    match ty {
        Type::F => {
            let x = if sat { clamp01_f32(x) } else { x };
            let x = fp::flush_f32(x, env.f_denorm);
            Out {
                raw: x.to_bits() as u64,
                ovf: x.is_infinite(),
            }
        }
        Type::HF => {
            let x = if sat { clamp01_f32(x) } else { x };
            let h = fp::f32_to_f16(x, env.rnd, env.hf_denorm);
            Out {
                raw: h as u64,
                ovf: h & 0x7FFF == 0x7C00,
            }
        }
        Type::DF => {
            let x = if sat { clamp01_f32(x) } else { x };
            let d = fp::flush_f64(x as f64, env.df_denorm);
            Out {
                raw: d.to_bits(),
                ovf: d.is_infinite(),
            }
        }
        t => {
            let (raw, ovf) = float_to_int(x as f64, t);
            Out { raw, ovf }
        }
    }
}

#[inline]
fn out_from_f64(x: f64, ty: Type, sat: bool, env: &FpEnv) -> Out {
    match ty {
        Type::DF => {
            let x = if sat { clamp01_f64(x) } else { x };
            let x = fp::flush_f64(x, env.df_denorm);
            Out {
                raw: x.to_bits(),
                ovf: x.is_infinite(),
            }
        }
        Type::F | Type::HF => {
            let x = if sat { clamp01_f64(x) } else { x };
            let f = fp::f64_to_f32(x, env.rnd);
            out_from_f32(f, ty, false, env)
        }
        t => {
            let (raw, ovf) = float_to_int(x, t);
            Out { raw, ovf }
        }
    }
}

#[inline]
fn out_from_i(v: i128, ty: Type, sat: bool, env: &FpEnv) -> Out {
    match ty {
        Type::F | Type::HF => {
            let f = fp::i128_to_f32(v, env.rnd);
            out_from_f32(f, ty, sat, env)
        }
        Type::DF => out_from_f64(fp::i128_to_f64(v, env.rnd), ty, sat, env),
        t => {
            let (lo, hi) = int_range(t);
            let ovf = v < lo || v > hi;
            let v = if sat { v.clamp(lo, hi) } else { v };
            Out { raw: v as u64, ovf }
        }
    }
}

/// `x cm y` for the ordering modifiers (Z, NZ, G, GE, L, LE), the same in every domain and
/// for a comparison (CMP, SEL) as for a result tested against zero; `other()` for O, U, none
/// and R, whose meaning depends on the domain.
#[inline(always)]
pub(super) fn ordered<T: PartialOrd>(
    cm: CondMod,
    x: T,
    y: T,
    other: impl FnOnce() -> bool,
) -> bool {
    match cm {
        CondMod::Z => x == y,
        CondMod::Nz => x != y,
        CondMod::G => x > y,
        CondMod::Ge => x >= y,
        CondMod::L => x < y,
        CondMod::Le => x <= y,
        CondMod::O | CondMod::U | CondMod::None | CondMod::R => other(),
    }
}

/// Conditional modifier of a written value: the value against zero; O also from the
/// conversion's overflow.
#[inline]
fn cond_of(cm: CondMod, ty: Type, raw: u64, ovf: bool) -> bool {
    if ty.is_float() {
        let x = match ty {
            Type::F => f32::from_bits(raw as u32) as f64,
            Type::HF => fp::f16_to_f32(raw as u16) as f64,
            _ => f64::from_bits(raw),
        };
        ordered(cm, x, 0.0, || match cm {
            CondMod::O => ovf || x.is_infinite(),
            CondMod::U => x.is_nan(),
            _ => false,
        })
    } else {
        ordered(cm, int_of(ty, raw), 0, || cm == CondMod::O && ovf)
    }
}

/// Comparison of CMP/SEL/CSEL in a float domain.
#[inline]
fn fcmp(cm: CondMod, a: f64, b: f64) -> bool {
    ordered(cm, a, b, || match cm {
        CondMod::U => a.is_nan() || b.is_nan(),
        CondMod::O => a.is_finite() && b.is_finite() && (a - b).is_infinite(),
        _ => false,
    })
}

#[inline]
fn icmp(cm: CondMod, a: i128, b: i128, exec_ty: Type) -> bool {
    ordered(cm, a, b, || {
        cm == CondMod::O && {
            let (lo, hi) = int_range(exec_ty);
            let d = a - b;
            d < lo || d > hi
        }
    })
}

/// Integer execution type of a set of integer sources (the widest, signed if any is).
fn int_exec_type(srcs: &[SrcDesc]) -> Type {
    let size = srcs.iter().map(|s| s.ty.size()).max().unwrap_or(4);
    let signed = srcs.iter().any(|s| s.ty.is_signed_int());
    match (size, signed) {
        (8, true) => Type::Q,
        (8, false) => Type::UQ,
        (_, true) => Type::D,
        _ => Type::UD,
    }
}

fn bits_of(ty: Type) -> u32 {
    ty.size() * 8
}

impl ThreadState {
    /// Lane offsets of a source for this execution (direct: precomputed; indirect: from a0).
    fn src_offsets(&self, s: &SrcDesc, exec: usize, out: &mut [u16; 32]) -> Result<(), String> {
        match s.ind {
            None => {
                out.copy_from_slice(&s.off);
                Ok(())
            }
            Some(ind) => {
                let sz = s.ty.size() as usize;
                for (k, o) in out.iter_mut().enumerate().take(exec) {
                    let w = ind.width as usize;
                    let (word, rel) = if ind.vxh {
                        (
                            ind.a0_word as usize + k / w,
                            (k % w) * ind.hstride as usize * sz,
                        )
                    } else {
                        (
                            ind.a0_word as usize,
                            ((k / w) * ind.vstride as usize + (k % w) * ind.hstride as usize) * sz,
                        )
                    };
                    if word >= 16 {
                        return Err("indirect region uses a0 beyond a0.15".into());
                    }
                    let a = self.a0(word) as i64 + ind.imm as i64 + rel as i64;
                    if a < 0 || a as usize + sz > GRF_SIZE {
                        return Err(format!("indirect address {a:#x} outside the GRF file"));
                    }
                    *o = a as u16;
                }
                Ok(())
            }
        }
    }

    fn dst_offsets(&self, d: &DstDesc, exec: usize, out: &mut [u16; 32]) -> Result<(), String> {
        match d.ind {
            None => {
                out.copy_from_slice(&d.off);
                Ok(())
            }
            Some(ind) => {
                let sz = d.ty.size() as usize;
                let base = self.a0(ind.a0_word as usize) as i64 + ind.imm as i64;
                for (k, o) in out.iter_mut().enumerate().take(exec) {
                    let a = base + (k * ind.hstride as usize * sz) as i64;
                    if a < 0 || a as usize + sz > GRF_SIZE {
                        return Err(format!("indirect address {a:#x} outside the GRF file"));
                    }
                    *o = a as u16;
                }
                Ok(())
            }
        }
    }

    /// Executes one ALU instruction on the lanes of `mask`; `pred` = per-lane predicate
    /// (used by SEL to choose).
    pub(super) fn exec_alu(
        &mut self,
        a: &Alu,
        op: &Op,
        mask: u32,
        pred: u32,
    ) -> Result<(), String> {
        let env = FpEnv::from_cr0(self.cr0());
        if super::fast::fast_path(self, a, op, mask, pred, &env) {
            return Ok(());
        }
        let Some(mut sc) = self.scratch.take() else {
            return Err("re-entrant ALU execution".into());
        };
        let r = self.exec_generic(a, op, mask, pred, &env, &mut sc);
        self.scratch = Some(sc);
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_generic(
        &mut self,
        a: &Alu,
        op: &Op,
        mask: u32,
        pred: u32,
        env: &FpEnv,
        sc: &mut super::Scratch,
    ) -> Result<(), String> {
        let exec = op.exec as usize;
        let logic = matches!(a.op, AluOp::And | AluOp::Or | AluOp::Xor | AluOp::Not);
        // 1. Gather sources into the execution domain.
        for (j, s) in a.src.iter().enumerate() {
            let sz = s.ty.size() as usize;
            match &s.imm {
                Some((v, n)) => {
                    for k in 0..exec {
                        sc.raw[k] = v[k % *n as usize];
                    }
                }
                None => {
                    let mut offs = [0u16; 32];
                    self.src_offsets(s, exec, &mut offs)?;
                    sc.off[j] = offs;
                    for k in 0..exec {
                        sc.raw[k] = rd_raw(&self.regs, offs[k] as usize, sz);
                    }
                }
            }
            match a.dom {
                Dom::F => {
                    let dn = if s.ty == Type::HF {
                        env.hf_denorm
                    } else {
                        env.f_denorm
                    };
                    let out = &mut sc.f[j];
                    for k in 0..exec {
                        let mut x = f32_of(s.ty, sc.raw[k], env.rnd);
                        if !a.raw_mov {
                            x = fp::flush_f32(x, dn || s.ty == Type::HF && env.hf_denorm);
                        }
                        if s.abs {
                            x = x.abs();
                        }
                        if s.neg {
                            x = -x;
                        }
                        out[k] = x;
                    }
                }
                Dom::Df => {
                    let out = &mut sc.d[j];
                    for k in 0..exec {
                        let mut x = f64_of(s.ty, sc.raw[k], env.rnd);
                        if s.ty == Type::DF && !a.raw_mov {
                            x = fp::flush_f64(x, env.df_denorm);
                        } else if s.ty == Type::F {
                            x = fp::flush_f64(x, env.f_denorm);
                        }
                        if s.abs {
                            x = x.abs();
                        }
                        if s.neg {
                            x = -x;
                        }
                        out[k] = x;
                    }
                }
                Dom::I => {
                    let out = &mut sc.i[j];
                    for k in 0..exec {
                        let mut v = int_of(s.ty, sc.raw[k]);
                        if s.abs {
                            v = v.abs();
                        }
                        if s.neg {
                            v = if logic { !v } else { -v };
                        }
                        out[k] = v;
                    }
                }
            }
        }

        let dty = a.dst.ty;
        let dsz = dty.size() as usize;
        let mut dst_offs = [0u16; 32];
        if !a.dst.null {
            self.dst_offsets(&a.dst, exec, &mut dst_offs)?;
        }
        let write_lane =
            |k: usize| -> bool { mask >> k & 1 != 0 && a.dst.wmask >> (k % 4) & 1 != 0 };
        let flag_bit = |k: usize| op.flag_base + op.first + k as u32;
        let mut flags = self.flags();
        let mut flags_written = false;

        // 2. Comparisons write all-ones/zero and the flags directly.
        if matches!(a.op, AluOp::Cmp | AluOp::Cmpn) {
            let cm = a.cmod;
            let ity = int_exec_type(&a.src);
            for k in 0..exec {
                if !write_lane(k) {
                    continue;
                }
                let c = match a.dom {
                    Dom::F | Dom::Df => {
                        let (x, y) = if a.dom == Dom::F {
                            (sc.f[0][k] as f64, sc.f[1][k] as f64)
                        } else {
                            (sc.d[0][k], sc.d[1][k])
                        };
                        if a.op == AluOp::Cmpn && (x.is_nan() || y.is_nan()) {
                            // CMPN: a NaN src1 compares true, a NaN src0 false, so that
                            // `cmpn` + `sel` picks the non-NaN operand.
                            y.is_nan()
                        } else {
                            fcmp(cm, x, y)
                        }
                    }
                    Dom::I => icmp(cm, sc.i[0][k], sc.i[1][k], ity),
                };
                if !a.dst.null {
                    let raw = if c { u64::MAX } else { 0 };
                    wr_raw(&mut self.regs, dst_offs[k] as usize, dsz, raw);
                }
                let b = flag_bit(k);
                if b < 64 && cm != CondMod::None {
                    flags = (flags & !(1 << b)) | ((c as u64) << b);
                    flags_written = true;
                }
            }
            if flags_written {
                self.set_flags(flags);
            }
            return Ok(());
        }

        // 3. Compute in the domain.
        let acc_read = |regs: &[u8; REGS_SIZE], k: usize, ty: Type| -> u64 {
            let sz = ty.size() as usize;
            rd_raw(regs, ACC_OFF + k * sz, sz)
        };
        let mut acc_out: Option<(Type, [u64; 32])> = None;
        match a.dom {
            Dom::F => {
                let (s0, s1, s2) = (&sc.f[0], &sc.f[1], &sc.f[2]);
                let r = &mut sc.rf;
                let rnd = env.rnd;
                let f2 = |x: f64| fp::f64_to_f32(x, rnd);
                let dn = env.f_denorm;
                match a.op {
                    AluOp::Mov => r[..exec].copy_from_slice(&s0[..exec]),
                    AluOp::Add => {
                        for k in 0..exec {
                            r[k] = if rnd == Rnd::Rtne {
                                s0[k] + s1[k]
                            } else {
                                f2(s0[k] as f64 + s1[k] as f64)
                            };
                        }
                    }
                    AluOp::Mul => {
                        for k in 0..exec {
                            r[k] = if rnd == Rnd::Rtne {
                                s0[k] * s1[k]
                            } else {
                                f2(s0[k] as f64 * s1[k] as f64)
                            };
                        }
                    }
                    AluOp::Mad => {
                        for k in 0..exec {
                            r[k] = if rnd == Rnd::Rtne {
                                s1[k].mul_add(s2[k], s0[k])
                            } else {
                                f2((s1[k] as f64).mul_add(s2[k] as f64, s0[k] as f64))
                            };
                        }
                    }
                    AluOp::Lrp => {
                        for k in 0..exec {
                            let t = s0[k] as f64;
                            r[k] = f2(t * s1[k] as f64 + (1.0 - t) * s2[k] as f64);
                        }
                    }
                    AluOp::Mac => {
                        for k in 0..exec {
                            let acc = f32_of(Type::F, acc_read(&self.regs, k, Type::F), rnd);
                            r[k] = f2((s0[k] as f64).mul_add(s1[k] as f64, acc as f64));
                        }
                    }
                    AluOp::Sel => {
                        for k in 0..exec {
                            r[k] = if a.cmod == CondMod::None {
                                if pred >> k & 1 != 0 {
                                    s0[k]
                                } else {
                                    s1[k]
                                }
                            } else if s0[k].is_nan() {
                                s1[k]
                            } else if s1[k].is_nan() || fcmp(a.cmod, s0[k] as f64, s1[k] as f64) {
                                s0[k]
                            } else {
                                s1[k]
                            };
                        }
                    }
                    AluOp::Csel => {
                        for k in 0..exec {
                            r[k] = if fcmp(a.cmod, s2[k] as f64, 0.0) {
                                s0[k]
                            } else {
                                s1[k]
                            };
                        }
                    }
                    AluOp::Frc => {
                        for k in 0..exec {
                            r[k] = s0[k] - s0[k].floor();
                        }
                    }
                    AluOp::Rndd => {
                        for k in 0..exec {
                            r[k] = s0[k].floor();
                        }
                    }
                    AluOp::Rndu => {
                        for k in 0..exec {
                            r[k] = s0[k].ceil();
                        }
                    }
                    AluOp::Rnde => {
                        for k in 0..exec {
                            r[k] = s0[k].round_ties_even();
                        }
                    }
                    AluOp::Rndz => {
                        for k in 0..exec {
                            r[k] = s0[k].trunc();
                        }
                    }
                    AluOp::Dp4 | AluOp::Dp3 | AluOp::Dp2 | AluOp::Dph => {
                        for g in 0..exec / 4 {
                            let b = g * 4;
                            let p = |c: usize| s0[b + c] as f64 * s1[b + c] as f64;
                            let v = match a.op {
                                AluOp::Dp4 => p(0) + p(1) + p(2) + p(3),
                                AluOp::Dp3 => p(0) + p(1) + p(2),
                                AluOp::Dp2 => p(0) + p(1),
                                _ => p(0) + p(1) + p(2) + s1[b + 3] as f64,
                            };
                            let v = f2(v);
                            r[b..b + 4].fill(v);
                        }
                    }
                    AluOp::Line => {
                        for k in 0..exec {
                            r[k] = f2((s0[0] as f64).mul_add(s1[k] as f64, s0[3] as f64));
                        }
                    }
                    AluOp::Math(m) => {
                        for k in 0..exec {
                            r[k] = math::f32_op(m, s0[k], s1[k], dn)
                                .map_err(|e| format!("math {}: {e}", m.name()))?;
                        }
                    }
                    other => {
                        return Err(format!("{other:?} does not take float operands"));
                    }
                }
            }
            Dom::Df => {
                let (s0, s1, s2) = (&sc.d[0], &sc.d[1], &sc.d[2]);
                let r = &mut sc.rd;
                // cr0's rounding mode applies to DF results as to F ones.
                let rnd = env.rnd;
                match a.op {
                    AluOp::Mov => r[..exec].copy_from_slice(&s0[..exec]),
                    AluOp::Add => (0..exec).for_each(|k| r[k] = fp::add_f64(s0[k], s1[k], rnd)),
                    AluOp::Mul => (0..exec).for_each(|k| r[k] = fp::mul_f64(s0[k], s1[k], rnd)),
                    AluOp::Mad | AluOp::Madm => {
                        (0..exec).for_each(|k| r[k] = fp::fma_f64(s1[k], s2[k], s0[k], rnd))
                    }
                    AluOp::Lrp => {
                        (0..exec).for_each(|k| r[k] = s0[k] * s1[k] + (1.0 - s0[k]) * s2[k])
                    }
                    AluOp::Sel => {
                        for k in 0..exec {
                            r[k] = if a.cmod == CondMod::None {
                                if pred >> k & 1 != 0 {
                                    s0[k]
                                } else {
                                    s1[k]
                                }
                            } else if s0[k].is_nan() {
                                s1[k]
                            } else if s1[k].is_nan() || fcmp(a.cmod, s0[k], s1[k]) {
                                s0[k]
                            } else {
                                s1[k]
                            };
                        }
                    }
                    AluOp::Frc => (0..exec).for_each(|k| r[k] = s0[k] - s0[k].floor()),
                    AluOp::Rndd => (0..exec).for_each(|k| r[k] = s0[k].floor()),
                    AluOp::Rndu => (0..exec).for_each(|k| r[k] = s0[k].ceil()),
                    AluOp::Rnde => (0..exec).for_each(|k| r[k] = s0[k].round_ties_even()),
                    AluOp::Rndz => (0..exec).for_each(|k| r[k] = s0[k].trunc()),
                    AluOp::Math(m) => {
                        for k in 0..exec {
                            r[k] = math::f64_op(m, s0[k], s1[k])
                                .map_err(|e| format!("math {}: {e}", m.name()))?;
                        }
                    }
                    other => return Err(format!("{other:?} does not take DF operands")),
                }
            }
            Dom::I => {
                let (s0, s1, s2) = (&sc.i[0], &sc.i[1], &sc.i[2]);
                let r = &mut sc.ri;
                let t0 = a.src[0].ty;
                let wide = a.src.iter().any(|s| s.ty.size() == 8);
                let smask: i128 = if wide { 63 } else { 31 };
                match a.op {
                    AluOp::Mov => r[..exec].copy_from_slice(&s0[..exec]),
                    AluOp::Not => (0..exec).for_each(|k| r[k] = !s0[k]),
                    AluOp::And => (0..exec).for_each(|k| r[k] = s0[k] & s1[k]),
                    AluOp::Or => (0..exec).for_each(|k| r[k] = s0[k] | s1[k]),
                    AluOp::Xor => (0..exec).for_each(|k| r[k] = s0[k] ^ s1[k]),
                    AluOp::Shl => {
                        (0..exec).for_each(|k| r[k] = s0[k].wrapping_shl((s1[k] & smask) as u32))
                    }
                    AluOp::Shr => {
                        let m: i128 = if t0.size() == 8 {
                            u64::MAX as i128
                        } else {
                            (1i128 << bits_of(t0)) - 1
                        };
                        (0..exec).for_each(|k| r[k] = (s0[k] & m) >> (s1[k] & smask))
                    }
                    AluOp::Asr => {
                        let b = bits_of(t0);
                        (0..exec).for_each(|k| {
                            // Sign-extend from src0's width, whatever its signedness.
                            let v = (s0[k] << (128 - b)) >> (128 - b);
                            r[k] = v >> (s1[k] & smask)
                        })
                    }
                    AluOp::Add => (0..exec).for_each(|k| r[k] = s0[k].wrapping_add(s1[k])),
                    AluOp::Mul => (0..exec).for_each(|k| r[k] = s0[k].wrapping_mul(s1[k])),
                    AluOp::Mad => {
                        (0..exec).for_each(|k| r[k] = s1[k].wrapping_mul(s2[k]).wrapping_add(s0[k]))
                    }
                    AluOp::Avg => (0..exec).for_each(|k| r[k] = (s0[k] + s1[k] + 1) >> 1),
                    AluOp::Sel => {
                        for k in 0..exec {
                            let take0 = if a.cmod == CondMod::None {
                                pred >> k & 1 != 0
                            } else {
                                icmp(a.cmod, s0[k], s1[k], Type::Q)
                            };
                            r[k] = if take0 { s0[k] } else { s1[k] };
                        }
                    }
                    AluOp::Csel => {
                        for k in 0..exec {
                            r[k] = if icmp(a.cmod, s2[k], 0, Type::Q) {
                                s0[k]
                            } else {
                                s1[k]
                            };
                        }
                    }
                    AluOp::Bfrev => {
                        (0..exec).for_each(|k| r[k] = (s0[k] as u32).reverse_bits() as i128)
                    }
                    AluOp::Cbit => {
                        let m: u64 = if t0.size() == 8 {
                            u64::MAX
                        } else {
                            (1u64 << bits_of(t0)) - 1
                        };
                        (0..exec).for_each(|k| r[k] = ((s0[k] as u64) & m).count_ones() as i128)
                    }
                    AluOp::Lzd => {
                        (0..exec).for_each(|k| r[k] = (s0[k] as u32).leading_zeros() as i128)
                    }
                    AluOp::Fbl => (0..exec).for_each(|k| {
                        let v = s0[k] as u32;
                        r[k] = if v == 0 {
                            u32::MAX as i128
                        } else {
                            v.trailing_zeros() as i128
                        }
                    }),
                    AluOp::Fbh => (0..exec).for_each(|k| {
                        let v = s0[k] as u32;
                        r[k] = if t0.is_signed_int() {
                            let x = v ^ (((v as i32) >> 31) as u32);
                            if x == 0 {
                                u32::MAX as i128
                            } else {
                                x.leading_zeros() as i128
                            }
                        } else if v == 0 {
                            u32::MAX as i128
                        } else {
                            v.leading_zeros() as i128
                        }
                    }),
                    AluOp::Bfe => {
                        let signed = a.src[2].ty.is_signed_int();
                        (0..exec).for_each(|k| {
                            let w = (s0[k] & 31) as u32;
                            let o = (s1[k] & 31) as u32;
                            let v = s2[k] as u32;
                            r[k] = if w == 0 {
                                0
                            } else if w + o < 32 {
                                let up = v << (32 - w - o);
                                if signed {
                                    ((up as i32) >> (32 - w)) as i128
                                } else {
                                    (up >> (32 - w)) as i128
                                }
                            } else if signed {
                                ((v as i32) >> o) as i128
                            } else {
                                (v >> o) as i128
                            };
                        })
                    }
                    AluOp::Bfi1 => (0..exec).for_each(|k| {
                        let w = (s0[k] & 31) as u32;
                        let o = (s1[k] & 31) as u32;
                        r[k] = ((((1u64 << w) - 1) as u32) << o) as i128;
                    }),
                    AluOp::Bfi2 => {
                        (0..exec).for_each(|k| r[k] = (s0[k] & s1[k]) | (!s0[k] & s2[k]))
                    }
                    AluOp::Addc | AluOp::Subb => {
                        let mut acc = [0u64; 32];
                        for k in 0..exec {
                            let x = s0[k] as u32 as i128;
                            let y = s1[k] as u32 as i128;
                            if a.op == AluOp::Addc {
                                let s = x + y;
                                r[k] = s;
                                acc[k] = (s >> 32) as u64 & 1;
                            } else {
                                r[k] = x - y;
                                acc[k] = (x < y) as u64;
                            }
                        }
                        acc_out = Some((Type::UD, acc));
                    }
                    AluOp::Mac => {
                        for k in 0..exec {
                            let acc = int_of(dty, acc_read(&self.regs, k, dty));
                            r[k] = s0[k].wrapping_mul(s1[k]).wrapping_add(acc);
                        }
                    }
                    AluOp::Mach => {
                        let mut acc = [0u64; 32];
                        for k in 0..exec {
                            let p = s0[k].wrapping_mul(s1[k]);
                            r[k] = p >> 32;
                            acc[k] = p as u64 & 0xFFFF_FFFF;
                        }
                        if a.acc_wr {
                            acc_out = Some((Type::UD, acc));
                        }
                    }
                    AluOp::Math(m) => {
                        let signed = a.src.iter().any(|s| s.ty.is_signed_int());
                        let mut rem = [0u64; 32];
                        for k in 0..exec {
                            let (q, rm) = math::int_div(s0[k], s1[k], signed);
                            r[k] = match m {
                                MathFunction::IntMod => rm,
                                _ => q,
                            };
                            rem[k] = rm as u64;
                        }
                        if m == MathFunction::IntDivMod && !a.dst.null {
                            // Remainder goes to the registers after the quotient's.
                            let span = (exec * dsz).div_ceil(32) * 32;
                            for k in 0..exec {
                                if write_lane(k) {
                                    let o = dst_offs[k] as usize + span;
                                    if o + dsz > GRF_SIZE {
                                        return Err("intdivmod remainder beyond g127".into());
                                    }
                                    wr_raw(&mut self.regs, o, dsz, rem[k]);
                                }
                            }
                        }
                    }
                    other => return Err(format!("{other:?} does not take integer operands")),
                }
            }
        }

        // 4. Write the destination, flags and accumulator.
        let cm = if matches!(a.op, AluOp::Sel | AluOp::Csel) {
            CondMod::None
        } else {
            a.cmod
        };
        let sat = a.sat;
        for k in 0..exec {
            if !write_lane(k) {
                continue;
            }
            let o = if a.raw_mov {
                Out {
                    raw: sc.raw[k],
                    ovf: false,
                }
            } else {
                match a.dom {
                    Dom::F => out_from_f32(sc.rf[k], dty, sat, env),
                    Dom::Df => out_from_f64(sc.rd[k], dty, sat, env),
                    Dom::I => out_from_i(sc.ri[k], dty, sat, env),
                }
            };
            if !a.dst.null {
                wr_raw(&mut self.regs, dst_offs[k] as usize, dsz, o.raw);
            }
            if a.acc_wr && acc_out.is_none() {
                wr_raw(&mut self.regs, ACC_OFF + k * dsz, dsz, o.raw);
            }
            if cm != CondMod::None {
                let b = flag_bit(k);
                if b < 64 {
                    let c = cond_of(cm, dty, o.raw, o.ovf);
                    flags = (flags & !(1 << b)) | ((c as u64) << b);
                    flags_written = true;
                }
            }
        }
        if let Some((ty, acc)) = acc_out {
            let sz = ty.size() as usize;
            for (k, v) in acc.iter().enumerate().take(exec) {
                if mask >> k & 1 != 0 {
                    wr_raw(&mut self.regs, ACC_OFF + k * sz, sz, *v);
                }
            }
        }
        if flags_written {
            self.set_flags(flags);
        }
        Ok(())
    }
}
