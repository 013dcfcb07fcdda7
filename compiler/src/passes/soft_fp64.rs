//! Software fp64: rewrites every 64-bit float value and operation into 32-bit integer code,
//! so a target without DF hardware (`Target.has_fp64 == false`) can still offer
//! `shaderFloat64`, and `FERRITE_DEBUG=soft64` can force the same code on Gen9.
//!
//! # Representation
//! An `f64` component becomes two `i32` words, low word first (the memory order), so an
//! `f64xN` value is `2N` scalar `i32` values. The pass runs after `scalarize`, where every
//! ALU op is scalar and vectors remain only in `const`, `vec`, `extract`, `load`, `store`
//! and on structure edges; it rewrites those too: a vector `load`/`store` becomes `i32x4`
//! (or shorter) pieces 16 bytes apart, `if` results, `loop` parameters and results, and
//! the `yield`/`break`/`continue` arguments carry the words. After the pass no value of an
//! `f64` type remains (their old numbers are retyped `i32` and left undefined).
//!
//! # Semantics (what the interpreter's `eval` defines, bit for bit)
//! * `fadd`/`fsub`/`fmul`/`fdiv`/`fsqrt`/`ffma`: correctly rounded, round to nearest even,
//!   denormals preserved (inputs and results), overflow to infinity.
//! * `frcp` = `fdiv 1.0, x` and `frsq` = `fdiv 1.0, fsqrt x` (two roundings, exactly as
//!   `eval` computes them); `ffract` = `x - floor(x)`; `ldexp` is correctly rounded
//!   (denormal results too; `eval` scales in two products, the first exact); `frexp`
//!   normalizes denormal inputs.
//! * Any NaN an arithmetic op produces is the canonical quiet NaN `0x7ff8000000000000`
//!   (payloads do not propagate); `fneg`/`fabs`/`bcsel`/moves keep the bits;
//!   `ftrunc`/`ffloor`/`fceil`/`fround_even`/`fsign`/`frexp_sig` return a NaN input itself.
//! * `fmin`/`fmax` follow GLSL.std.450 NMin/NMax (a NaN operand yields the other operand)
//!   and order -0 below +0.
//! * `f2i`/`f2u`: round toward zero, saturating to the destination's range, NaN to 0
//!   (the Gen conversion rule `eval` models); `f2f` to f32/f16 rounds to nearest even with
//!   denormal results; f32/f16 to f64 is exact.
//! * `fexp2`/`flog2`/`fsin`/`fcos`/`fpow` have no 64-bit form in SPIR-V for Vulkan
//!   (GLSL.std.450 limits them to 16/32-bit floats); should one appear it is computed in f32
//!   and converted back.
//!
//! Multi-bit loops (`fdiv`, `fsqrt`: one quotient/root bit per iteration, 55 iterations)
//! keep the code small; every other op is straight-line code with `bcsel`, no branches.

use crate::builder::Builder;
use crate::ir::*;
use std::collections::HashMap;

const SIGN: u32 = 0x8000_0000;
const EXP_INF: u32 = 0x7ff0_0000;
const QNAN_HI: u32 = 0x7ff8_0000;

fn is_f64(t: Type) -> bool {
    t.kind == Kind::Float && t.bits == 64
}

/// A 64-bit quantity as two 32-bit words.
#[derive(Clone, Copy, Debug)]
struct Words64 {
    hi: Value,
    lo: Value,
}

/// The IR builder with the helpers soft fp64 emits its 32-bit integer code with (word
/// arithmetic, 64-bit quantities as two words, and the f64 operations themselves).
struct SoftBuilder<'a> {
    b: Builder<'a>,
}

impl SoftBuilder<'_> {
    fn emit(&mut self, t: Type, op: Op) -> Value {
        self.b.emit(t, op)
    }
    fn c(&mut self, x: u32) -> Value {
        self.b.konst(Type::I32, u64::from(x))
    }
    fn bc(&mut self, x: bool) -> Value {
        self.b.konst(Type::B1, u64::from(x))
    }
    fn alu(&mut self, t: Type, op: AluOp, s: &[Value]) -> Value {
        self.b.alu(op, t, s)
    }
    fn i2(&mut self, op: AluOp, a: Value, b: Value) -> Value {
        self.alu(Type::I32, op, &[a, b])
    }
    fn add(&mut self, a: Value, b: Value) -> Value {
        self.i2(AluOp::Iadd, a, b)
    }
    fn addc(&mut self, a: Value, k: u32) -> Value {
        let k = self.c(k);
        self.add(a, k)
    }
    fn sub(&mut self, a: Value, b: Value) -> Value {
        self.i2(AluOp::Isub, a, b)
    }
    fn csub(&mut self, k: u32, a: Value) -> Value {
        let k = self.c(k);
        self.sub(k, a)
    }
    fn and(&mut self, a: Value, b: Value) -> Value {
        self.i2(AluOp::Iand, a, b)
    }
    fn andc(&mut self, a: Value, k: u32) -> Value {
        let k = self.c(k);
        self.and(a, k)
    }
    fn or(&mut self, a: Value, b: Value) -> Value {
        self.i2(AluOp::Ior, a, b)
    }
    fn orc(&mut self, a: Value, k: u32) -> Value {
        let k = self.c(k);
        self.or(a, k)
    }
    fn xor(&mut self, a: Value, b: Value) -> Value {
        self.i2(AluOp::Ixor, a, b)
    }
    fn not(&mut self, a: Value) -> Value {
        self.alu(Type::I32, AluOp::Inot, &[a])
    }
    fn shl(&mut self, a: Value, n: Value) -> Value {
        self.i2(AluOp::Ishl, a, n)
    }
    fn shlc(&mut self, a: Value, n: u32) -> Value {
        let n = self.c(n);
        self.shl(a, n)
    }
    fn shr(&mut self, a: Value, n: Value) -> Value {
        self.i2(AluOp::Ushr, a, n)
    }
    fn shrc(&mut self, a: Value, n: u32) -> Value {
        let n = self.c(n);
        self.shr(a, n)
    }
    fn sarc(&mut self, a: Value, n: u32) -> Value {
        let n = self.c(n);
        self.i2(AluOp::Ishr, a, n)
    }
    fn cmp(&mut self, op: AluOp, a: Value, b: Value) -> Value {
        self.alu(Type::B1, op, &[a, b])
    }
    fn cmpc(&mut self, op: AluOp, a: Value, k: u32) -> Value {
        let k = self.c(k);
        self.cmp(op, a, k)
    }
    fn band(&mut self, a: Value, b: Value) -> Value {
        self.alu(Type::B1, AluOp::Iand, &[a, b])
    }
    fn bor(&mut self, a: Value, b: Value) -> Value {
        self.alu(Type::B1, AluOp::Ior, &[a, b])
    }
    fn bnot(&mut self, a: Value) -> Value {
        self.alu(Type::B1, AluOp::Inot, &[a])
    }
    fn b2i(&mut self, b: Value) -> Value {
        self.alu(Type::I32, AluOp::B2i, &[b])
    }
    fn sel(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.alu(Type::I32, AluOp::Bcsel, &[c, a, b])
    }
    fn selc(&mut self, c: Value, a: u32, b: Value) -> Value {
        let a = self.c(a);
        self.sel(c, a, b)
    }
    fn selp(&mut self, c: Value, a: Words64, b: Words64) -> Words64 {
        Words64 {
            hi: self.sel(c, a.hi, b.hi),
            lo: self.sel(c, a.lo, b.lo),
        }
    }
    fn pc(&mut self, x: u64) -> Words64 {
        Words64 {
            hi: self.c((x >> 32) as u32),
            lo: self.c(x as u32),
        }
    }
    fn nan(&mut self) -> Words64 {
        self.pc(u64::from(QNAN_HI) << 32)
    }

    // ---- 64-bit integer helpers on word pairs ----

    fn add64(&mut self, a: Words64, b: Words64) -> Words64 {
        let lo = self.add(a.lo, b.lo);
        let c = self.cmp(AluOp::Ult, lo, a.lo);
        let c = self.b2i(c);
        let hi = self.add(a.hi, b.hi);
        let hi = self.add(hi, c);
        Words64 { hi, lo }
    }
    fn sub64(&mut self, a: Words64, b: Words64) -> Words64 {
        let lo = self.sub(a.lo, b.lo);
        let c = self.cmp(AluOp::Ult, a.lo, b.lo);
        let c = self.b2i(c);
        let hi = self.sub(a.hi, b.hi);
        let hi = self.sub(hi, c);
        Words64 { hi, lo }
    }
    fn ult64(&mut self, a: Words64, b: Words64) -> Value {
        let h = self.cmp(AluOp::Ult, a.hi, b.hi);
        let e = self.cmp(AluOp::Ieq, a.hi, b.hi);
        let l = self.cmp(AluOp::Ult, a.lo, b.lo);
        let el = self.band(e, l);
        self.bor(h, el)
    }
    fn is_zero64(&mut self, a: Words64) -> Value {
        let o = self.or(a.hi, a.lo);
        self.cmpc(AluOp::Ieq, o, 0)
    }
    /// Left shift by a constant 1..=31.
    fn shl64c(&mut self, a: Words64, n: u32) -> Words64 {
        let h = self.shlc(a.hi, n);
        let l = self.shrc(a.lo, 32 - n);
        Words64 {
            hi: self.or(h, l),
            lo: self.shlc(a.lo, n),
        }
    }
    /// Right shift by a constant 1..=31.
    fn shr64c(&mut self, a: Words64, n: u32) -> Words64 {
        let l = self.shrc(a.lo, n);
        let h = self.shlc(a.hi, 32 - n);
        Words64 {
            hi: self.shrc(a.hi, n),
            lo: self.or(l, h),
        }
    }
    /// Left shift by `n` in 0..=63 (32-bit shifts use their count modulo 32).
    fn shl64(&mut self, a: Words64, n: Value) -> Words64 {
        let big = self.cmpc(AluOp::Uge, n, 32);
        let h = self.shl(a.hi, n);
        let l1 = self.shrc(a.lo, 1);
        let rn = self.csub(31, n);
        let l = self.shr(l1, rn);
        let ah = self.or(h, l);
        let al = self.shl(a.lo, n);
        let zero = self.c(0);
        Words64 {
            hi: self.sel(big, al, ah),
            lo: self.sel(big, zero, al),
        }
    }
    /// Right shift by `n` in 0..=63 and whether any 1 bit was shifted out.
    fn shr64_sticky(&mut self, a: Words64, n: Value) -> (Words64, Value) {
        let big = self.cmpc(AluOp::Uge, n, 32);
        let l = self.shr(a.lo, n);
        let h1 = self.shlc(a.hi, 1);
        let rn = self.csub(31, n);
        let h = self.shl(h1, rn);
        let al = self.or(l, h);
        let ah = self.shr(a.hi, n);
        let zero = self.c(0);
        let r = Words64 {
            hi: self.sel(big, zero, ah),
            lo: self.sel(big, ah, al),
        };
        let ones = self.c(u32::MAX);
        let m = self.shl(ones, n);
        let m = self.not(m);
        let lo_m = self.sel(big, ones, m);
        let hi_m = self.sel(big, m, zero);
        let x = self.and(a.lo, lo_m);
        let y = self.and(a.hi, hi_m);
        let o = self.or(x, y);
        let st = self.cmpc(AluOp::Ine, o, 0);
        (r, st)
    }
    fn clz32(&mut self, x: Value) -> Value {
        // ufind_msb of 0 is all ones, so 31 - msb gives 32 for 0.
        let m = self.alu(Type::I32, AluOp::UfindMsb, &[x]);
        self.csub(31, m)
    }
    /// Leading zeros of a 64-bit quantity (64 for 0).
    fn clz64(&mut self, a: Words64) -> Value {
        let hz = self.cmpc(AluOp::Ieq, a.hi, 0);
        let ch = self.clz32(a.hi);
        let m = self.alu(Type::I32, AluOp::UfindMsb, &[a.lo]);
        let cl = self.csub(63, m);
        self.sel(hz, cl, ch)
    }
    /// 64 x 64 -> 128-bit product as (high pair, low pair).
    fn mul128(&mut self, a: Words64, b: Words64) -> (Words64, Words64) {
        let m = |s: &mut Self, x, y| (s.i2(AluOp::UmulHigh, x, y), s.i2(AluOp::Imul, x, y));
        let (ll_h, ll_l) = m(self, a.lo, b.lo);
        let (lh_h, lh_l) = m(self, a.lo, b.hi);
        let (hl_h, hl_l) = m(self, a.hi, b.lo);
        let (hh_h, hh_l) = m(self, a.hi, b.hi);
        // Accumulates a sum of words and counts its carries.
        let acc = |s: &mut Self, terms: &[Value]| -> (Value, Vec<Value>) {
            let mut sum = terms[0];
            let mut carries = Vec::new();
            for &t in &terms[1..] {
                let n = s.add(sum, t);
                let c = s.cmp(AluOp::Ult, n, sum);
                carries.push(s.b2i(c));
                sum = n;
            }
            (sum, carries)
        };
        let (w1, c1) = acc(self, &[ll_h, lh_l, hl_l]);
        let mut t2 = vec![hh_l, lh_h, hl_h];
        t2.extend(c1);
        let (w2, c2) = acc(self, &t2);
        let mut w3 = hh_h;
        for c in c2 {
            w3 = self.add(w3, c);
        }
        (Words64 { hi: w3, lo: w2 }, Words64 { hi: w1, lo: ll_l })
    }

    // ---- float helpers ----

    fn abs_hi(&mut self, a: Words64) -> Value {
        self.andc(a.hi, !SIGN)
    }
    fn sign(&mut self, a: Words64) -> Value {
        self.andc(a.hi, SIGN)
    }
    fn biased_exp(&mut self, a: Words64) -> Value {
        let e = self.shrc(a.hi, 20);
        self.andc(e, 0x7ff)
    }
    fn is_nan(&mut self, a: Words64) -> Value {
        // |hi| | (lo != 0) > 0x7ff00000 exactly when the exponent is all ones and the
        // fraction is not zero.
        let ah = self.abs_hi(a);
        let nz = self.cmpc(AluOp::Ine, a.lo, 0);
        let nz = self.b2i(nz);
        let x = self.or(ah, nz);
        let k = self.c(EXP_INF);
        self.cmp(AluOp::Ult, k, x)
    }
    fn is_inf(&mut self, a: Words64) -> Value {
        let ah = self.abs_hi(a);
        let h = self.cmpc(AluOp::Ieq, ah, EXP_INF);
        let l = self.cmpc(AluOp::Ieq, a.lo, 0);
        self.band(h, l)
    }
    fn is_zero(&mut self, a: Words64) -> Value {
        let ah = self.abs_hi(a);
        let o = self.or(ah, a.lo);
        self.cmpc(AluOp::Ieq, o, 0)
    }
    /// |a| as a pair.
    fn mag(&mut self, a: Words64) -> Words64 {
        Words64 {
            hi: self.abs_hi(a),
            lo: a.lo,
        }
    }
    /// The 53-bit significand (implicit bit included for normal numbers) and the exponent
    /// clamped to at least 1 (denormals scale like exponent 1).
    fn sig53(&mut self, a: Words64) -> (Words64, Value) {
        let e = self.biased_exp(a);
        let ez = self.cmpc(AluOp::Ieq, e, 0);
        let f = self.andc(a.hi, 0xf_ffff);
        let imp = self.orc(f, 0x10_0000);
        let hi = self.sel(ez, f, imp);
        let e1 = self.selc(ez, 1, e);
        (Words64 { hi, lo: a.lo }, e1)
    }
    /// Normalized significand: `a = m / 2^63 * 2^(E - 1023)` with bit 63 of `m` set (for a
    /// non-zero finite `a`).
    fn normalize(&mut self, a: Words64) -> (Words64, Value) {
        let (s, e1) = self.sig53(a);
        let m0 = self.shl64c(s, 11);
        let k = self.clz64(m0);
        let m = self.shl64(m0, k);
        let e = self.sub(e1, k);
        (m, e)
    }
    /// Rounds `m / 2^63 * 2^(be - 1023)` (bit 63 of `m` set, or `m` zero; a sticky bit
    /// already ORed into bit 0) to the nearest f64, ties to even, with denormal results
    /// and overflow to infinity. `sign` is 0 or 0x80000000; `be` is a signed exponent.
    fn round_pack64(&mut self, sign: Value, be: Value, m: Words64) -> Words64 {
        let one = self.c(1);
        let be_eff = self.i2(AluOp::Imax, be, one);
        let extra = self.sub(be_eff, be);
        let sh = self.addc(extra, 9);
        let c63 = self.c(63);
        let sh = self.i2(AluOp::Umin, sh, c63);
        let (t, st) = self.shr64_sticky(m, sh);
        let st = self.b2i(st);
        let tlo = self.or(t.lo, st);
        let t = Words64 { hi: t.hi, lo: tlo };
        let inc = self.round_inc(tlo);
        let mant = self.shr64c(t, 2);
        let zero = self.c(0);
        let mant = self.add64(mant, Words64 { hi: zero, lo: inc });
        let eb = self.sub(be_eff, one);
        let eb = self.shlc(eb, 20);
        let hi = self.add(eb, mant.hi);
        let k2046 = self.c(2046);
        let ovf = self.cmp(AluOp::Ilt, k2046, be);
        let hi = self.selc(ovf, EXP_INF, hi);
        let lo = self.sel(ovf, zero, mant.lo);
        let mz = self.is_zero64(m);
        let hi = self.sel(mz, zero, hi);
        let lo = self.sel(mz, zero, lo);
        Words64 {
            hi: self.or(hi, sign),
            lo,
        }
    }
    /// Round-to-nearest-even increment from the two guard bits (bits 1..0: half, sticky)
    /// and the lowest kept bit (bit 2): increment for 0b011, 0b110, 0b111.
    fn round_inc(&mut self, t: Value) -> Value {
        let r = self.andc(t, 7);
        let k = self.c(0xc8);
        let x = self.shr(k, r);
        self.andc(x, 1)
    }
    /// Rounds like [`SoftBuilder::round_pack64`] to a smaller format whose bits fit in 32
    /// (`mbits` fraction bits, all-ones exponent `emax`); the sign goes above the exponent.
    fn round_pack_small(
        &mut self,
        sign: Value,
        be: Value,
        m: Words64,
        mbits: u32,
        emax: u32,
    ) -> Value {
        let one = self.c(1);
        let be_eff = self.i2(AluOp::Imax, be, one);
        let extra = self.sub(be_eff, be);
        let sh = self.addc(extra, 61 - mbits);
        let c63 = self.c(63);
        let sh = self.i2(AluOp::Umin, sh, c63);
        let (t, st) = self.shr64_sticky(m, sh);
        let st = self.b2i(st);
        let t = self.or(t.lo, st);
        let inc = self.round_inc(t);
        let mant = self.shrc(t, 2);
        let mant = self.add(mant, inc);
        let eb = self.sub(be_eff, one);
        let eb = self.shlc(eb, mbits);
        let r = self.add(eb, mant);
        let kmax = self.c(emax - 1);
        let ovf = self.cmp(AluOp::Ilt, kmax, be);
        let r = self.selc(ovf, emax << mbits, r);
        let mz = self.is_zero64(m);
        let r = self.selc(mz, 0, r);
        self.or(r, sign)
    }

    /// A counted loop: `n` iterations of `body` over the state words.
    fn counted_loop<F: FnOnce(&mut Self, &[Value]) -> Vec<Value>>(
        &mut self,
        n: u32,
        init: Vec<Value>,
        body: F,
    ) -> Vec<Value> {
        let zero = self.c(0);
        let kn = self.c(n);
        let mut params = Vec::new();
        let ctr = self.new_val(Type::I32);
        params.push((ctr, zero));
        let mut state = Vec::new();
        for v in &init {
            let p = self.new_val(Type::I32);
            params.push((p, *v));
            state.push(p);
        }
        let results: Vec<Value> = init.iter().map(|_| self.new_val(Type::I32)).collect();
        let outer = self.b.take_block();
        let exit = self.cmp(AluOp::Uge, ctr, kn);
        self.b.push(Node::If(Box::new(If {
            cond: exit,
            then_: vec![Node::Break(state.clone())],
            else_: vec![],
            results: vec![],
        })));
        let next = body(self, &state);
        let ctr1 = self.addc(ctr, 1);
        let mut args = vec![ctr1];
        args.extend(next);
        self.b.push(Node::Continue(args));
        let body_block = self.b.put_block(outer);
        self.b.push(Node::Loop(Box::new(Loop {
            params,
            body: body_block,
            results: results.clone(),
        })));
        results
    }
    fn new_val(&mut self, t: Type) -> Value {
        self.b.new_value(t)
    }

    // ---- f64 operations ----

    fn fneg(&mut self, a: Words64) -> Words64 {
        let k = self.c(SIGN);
        Words64 {
            hi: self.xor(a.hi, k),
            lo: a.lo,
        }
    }
    fn fabs(&mut self, a: Words64) -> Words64 {
        self.mag(a)
    }
    fn signed_zero(&mut self, a: Words64) -> Words64 {
        Words64 {
            hi: self.sign(a),
            lo: self.c(0),
        }
    }
    fn fadd(&mut self, a: Words64, b: Words64) -> Words64 {
        // x is the operand of larger magnitude.
        let ma = self.mag(a);
        let mb = self.mag(b);
        let swap = self.ult64(ma, mb);
        let x = self.selp(swap, b, a);
        let y = self.selp(swap, a, b);
        let sx = self.sign(x);
        let sy = self.sign(y);
        let ex = self.biased_exp(x);
        let ey = self.biased_exp(y);
        let (fx, ex1) = self.sig53(x);
        let (fy, ey1) = self.sig53(y);
        // Significands at bits 62..10: a carry fits in bit 63, and 10 guard bits plus a
        // sticky bit in bit 0 keep the rounding exact for subtraction.
        let mx = self.shl64c(fx, 10);
        let my = self.shl64c(fy, 10);
        let d = self.sub(ex1, ey1);
        let c63 = self.c(63);
        let d = self.i2(AluOp::Umin, d, c63);
        let (my, st) = self.shr64_sticky(my, d);
        let st = self.b2i(st);
        let my = Words64 {
            hi: my.hi,
            lo: self.or(my.lo, st),
        };
        let same = self.cmp(AluOp::Ieq, sx, sy);
        let sum = self.add64(mx, my);
        let dif = self.sub64(mx, my);
        let m = self.selp(same, sum, dif);
        let mz = self.is_zero64(m);
        let k = self.clz64(m);
        let m = self.shl64(m, k);
        let be = self.addc(ex1, 1);
        let be = self.sub(be, k);
        // Exact cancellation gives +0 in round-to-nearest.
        let nsame = self.bnot(same);
        let cancel = self.band(mz, nsame);
        let sign = self.selc(cancel, 0, sx);
        let r = self.round_pack64(sign, be, m);
        let x_special = self.cmpc(AluOp::Ieq, ex, 0x7ff);
        let xnan = self.is_nan(x);
        let y_special = self.cmpc(AluOp::Ieq, ey, 0x7ff);
        let inf_minus_inf = self.band(y_special, nsame);
        let nan = self.bor(xnan, inf_minus_inf);
        let qnan = self.nan();
        let sp = self.selp(nan, qnan, x);
        self.selp(x_special, sp, r)
    }
    fn fsub(&mut self, a: Words64, b: Words64) -> Words64 {
        let nb = self.fneg(b);
        self.fadd(a, nb)
    }
    fn result_sign(&mut self, a: Words64, b: Words64) -> Value {
        let x = self.xor(a.hi, b.hi);
        self.andc(x, SIGN)
    }
    fn fmul(&mut self, a: Words64, b: Words64) -> Words64 {
        let sr = self.result_sign(a, b);
        let (ma, ea) = self.normalize(a);
        let (mb, eb) = self.normalize(b);
        let (t, l) = self.mul128(ma, mb);
        let lz = self.is_zero64(l);
        let st = self.bnot(lz);
        let st = self.b2i(st);
        let t = Words64 {
            hi: t.hi,
            lo: self.or(t.lo, st),
        };
        // The product of two [1,2) significands is in [1,4): normalize by at most 1 bit.
        let top = self.shrc(t.hi, 31);
        let n = self.cmpc(AluOp::Ieq, top, 0);
        let t2 = self.shl64c(t, 1);
        let m = self.selp(n, t2, t);
        let be = self.add(ea, eb);
        let be = self.addc(be, (-1022i32) as u32);
        let nb = self.b2i(n);
        let be = self.sub(be, nb);
        let r = self.round_pack64(sr, be, m);
        let an = self.is_nan(a);
        let bn = self.is_nan(b);
        let ai = self.is_inf(a);
        let bi = self.is_inf(b);
        let az = self.is_zero(a);
        let bz = self.is_zero(b);
        let x = self.band(ai, bz);
        let y = self.band(bi, az);
        let nan = self.bor(an, bn);
        let nan = self.bor(nan, x);
        let nan = self.bor(nan, y);
        let inf = self.bor(ai, bi);
        let infp = Words64 {
            hi: self.orc(sr, EXP_INF),
            lo: self.c(0),
        };
        let r = self.selp(inf, infp, r);
        let qnan = self.nan();
        self.selp(nan, qnan, r)
    }
    fn fdiv(&mut self, a: Words64, b: Words64) -> Words64 {
        let sr = self.result_sign(a, b);
        let (ma, ea) = self.normalize(a);
        let (mb, eb) = self.normalize(b);
        let xa = self.shr64c(ma, 11);
        let xb = self.shr64c(mb, 11);
        let lt = self.ult64(xa, xb);
        let xa2 = self.shl64c(xa, 1);
        let xa = self.selp(lt, xa2, xa);
        // Restoring division, two quotient bits per iteration: 56 bits (53 + guard + round
        // + one more) with the remainder as sticky.
        let zero = self.c(0);
        let res = self.counted_loop(28, vec![xa.hi, xa.lo, zero, zero], |s, st| {
            let mut r = Words64 {
                hi: st[0],
                lo: st[1],
            };
            let mut q = Words64 {
                hi: st[2],
                lo: st[3],
            };
            for _ in 0..2 {
                // r < 2 * xb < 2^54: the sign of the 64-bit difference is the comparison.
                let d = s.sub64(r, xb);
                let ge = s.cmpc(AluOp::Ige, d.hi, 0);
                let rs = s.selp(ge, d, r);
                r = s.shl64c(rs, 1);
                let q2 = s.shl64c(q, 1);
                let g = s.b2i(ge);
                q = Words64 {
                    hi: q2.hi,
                    lo: s.or(q2.lo, g),
                };
            }
            vec![r.hi, r.lo, q.hi, q.lo]
        });
        let r = Words64 {
            hi: res[0],
            lo: res[1],
        };
        let q = Words64 {
            hi: res[2],
            lo: res[3],
        };
        let rz = self.is_zero64(r);
        let st = self.bnot(rz);
        let st = self.b2i(st);
        let m = self.shl64c(q, 8);
        let m = Words64 {
            hi: m.hi,
            lo: self.or(m.lo, st),
        };
        let be = self.sub(ea, eb);
        let l = self.b2i(lt);
        let be = self.sub(be, l);
        let be = self.addc(be, 1023);
        let r = self.round_pack64(sr, be, m);
        let an = self.is_nan(a);
        let bn = self.is_nan(b);
        let ai = self.is_inf(a);
        let bi = self.is_inf(b);
        let az = self.is_zero(a);
        let bz = self.is_zero(b);
        let zz = self.band(az, bz);
        let ii = self.band(ai, bi);
        let nan = self.bor(an, bn);
        let nan = self.bor(nan, zz);
        let nan = self.bor(nan, ii);
        let inf = self.bor(ai, bz);
        let zr = self.bor(az, bi);
        let zp = Words64 { hi: sr, lo: zero };
        let r = self.selp(zr, zp, r);
        let infp = Words64 {
            hi: self.orc(sr, EXP_INF),
            lo: zero,
        };
        let r = self.selp(inf, infp, r);
        let qnan = self.nan();
        self.selp(nan, qnan, r)
    }
    fn fsqrt(&mut self, a: Words64) -> Words64 {
        let (m, e) = self.normalize(a);
        let x = self.shr64c(m, 11);
        let u = self.addc(e, (-1023i32) as u32);
        let u1 = self.andc(u, 1);
        let odd = self.cmpc(AluOp::Ine, u1, 0);
        let x2 = self.shl64c(x, 1);
        let x = self.selp(odd, x2, x);
        let u = self.sub(u, u1);
        // Digit-by-digit square root of x * 2^56 (two radicand bits per step, taken from
        // the top of `xs`; two steps per iteration): 56 root bits and the remainder as
        // sticky.
        let xs = self.shl64c(x, 10);
        let zero = self.c(0);
        let res = self.counted_loop(28, vec![zero, zero, zero, zero, xs.hi, xs.lo], |s, st| {
            let mut r = Words64 {
                hi: st[0],
                lo: st[1],
            };
            let mut q = Words64 {
                hi: st[2],
                lo: st[3],
            };
            let mut xs = Words64 {
                hi: st[4],
                lo: st[5],
            };
            for _ in 0..2 {
                let top = s.shrc(xs.hi, 30);
                let r2 = s.shl64c(r, 2);
                r = Words64 {
                    hi: r2.hi,
                    lo: s.or(r2.lo, top),
                };
                xs = s.shl64c(xs, 2);
                let t = s.shl64c(q, 2);
                let t = Words64 {
                    hi: t.hi,
                    lo: s.orc(t.lo, 1),
                };
                // r and t stay below 2^59: the sign of the difference is the comparison.
                let d = s.sub64(r, t);
                let ge = s.cmpc(AluOp::Ige, d.hi, 0);
                r = s.selp(ge, d, r);
                let q2 = s.shl64c(q, 1);
                let g = s.b2i(ge);
                q = Words64 {
                    hi: q2.hi,
                    lo: s.or(q2.lo, g),
                };
            }
            vec![r.hi, r.lo, q.hi, q.lo, xs.hi, xs.lo]
        });
        let r = Words64 {
            hi: res[0],
            lo: res[1],
        };
        let q = Words64 {
            hi: res[2],
            lo: res[3],
        };
        let rz = self.is_zero64(r);
        let st = self.bnot(rz);
        let st = self.b2i(st);
        let m = self.shl64c(q, 8);
        let m = Words64 {
            hi: m.hi,
            lo: self.or(m.lo, st),
        };
        let half = self.sarc(u, 1);
        let be = self.addc(half, 1023);
        let r = self.round_pack64(zero, be, m);
        let an = self.is_nan(a);
        let s = self.sign(a);
        let neg = self.cmpc(AluOp::Ine, s, 0);
        let az = self.is_zero(a);
        let nz = self.bnot(az);
        let negnz = self.band(neg, nz);
        let nan = self.bor(an, negnz);
        let ai = self.is_inf(a);
        let keep = self.bor(az, ai);
        let r = self.selp(keep, a, r);
        let qnan = self.nan();
        self.selp(nan, qnan, r)
    }
    fn one(&mut self) -> Words64 {
        self.pc(1f64.to_bits())
    }

    /// Unordered (NaN involved), equal (as numbers) and less-than (as numbers, ignoring
    /// NaN) tests.
    fn cmp_parts(&mut self, a: Words64, b: Words64) -> (Value, Value, Value, Value) {
        let an = self.is_nan(a);
        let bn = self.is_nan(b);
        let nan = self.bor(an, bn);
        let ma = self.mag(a);
        let mb = self.mag(b);
        let x = self.or(ma.hi, ma.lo);
        let y = self.or(mb.hi, mb.lo);
        let o = self.or(x, y);
        let both_zero = self.cmpc(AluOp::Ieq, o, 0);
        let eh = self.cmp(AluOp::Ieq, a.hi, b.hi);
        let el = self.cmp(AluOp::Ieq, a.lo, b.lo);
        let same = self.band(eh, el);
        let eq = self.bor(same, both_zero);
        let lt_ab = self.lt_total(a, b);
        let lt_ba = self.lt_total(b, a);
        let nbz = self.bnot(both_zero);
        let lt = self.band(lt_ab, nbz);
        let gt = self.band(lt_ba, nbz);
        (nan, eq, lt, gt)
    }
    /// a < b in the order -inf < ... < -0 < +0 < ... < +inf (NaN not considered).
    fn lt_total(&mut self, a: Words64, b: Words64) -> Value {
        let sa = self.sign(a);
        let sb = self.sign(b);
        let an = self.cmpc(AluOp::Ine, sa, 0);
        let diff = self.cmp(AluOp::Ine, sa, sb);
        let ma = self.mag(a);
        let mb = self.mag(b);
        let pos = self.ult64(ma, mb);
        let neg = self.ult64(mb, ma);
        let x = self.band(an, neg);
        let nan_ = self.bnot(an);
        let y = self.band(nan_, pos);
        let same_lt = self.bor(x, y);
        let d = self.band(diff, an);
        let nd = self.bnot(diff);
        let s = self.band(nd, same_lt);
        self.bor(d, s)
    }
    fn fcmp(&mut self, op: AluOp, a: Words64, b: Words64) -> Value {
        use AluOp::*;
        let (nan, eq, lt, gt) = self.cmp_parts(a, b);
        let ord = self.bnot(nan);
        let rel = match op {
            Feq | Fneu => eq,
            Fne | Fequ => self.bnot(eq),
            Flt | Fgeu => lt,
            Fle | Fgtu => self.bor(lt, eq),
            Fgt | Fleu => gt,
            Fge | Fltu => self.bor(gt, eq),
            _ => unreachable!("not a float comparison: {op:?}"),
        };
        match op {
            Feq | Fne | Flt | Fle | Fgt | Fge => self.band(ord, rel),
            // The unordered forms are the negations of the opposite ordered ones.
            _ => {
                let o = self.band(ord, rel);
                self.bnot(o)
            }
        }
    }
    fn fminmax(&mut self, a: Words64, b: Words64, max: bool) -> Words64 {
        let an = self.is_nan(a);
        let bn = self.is_nan(b);
        let lt = if max {
            self.lt_total(b, a)
        } else {
            self.lt_total(a, b)
        };
        let x = self.bor(bn, lt);
        let nan_ = self.bnot(an);
        let pick_a = self.band(nan_, x);
        self.selp(pick_a, a, b)
    }
    /// The mask of the bits at or above the units bit for 1023 <= exponent <= 1074 (the
    /// fraction bits below it are clear) and the units bit itself.
    fn int_mask(&mut self, e: Value) -> (Words64, Words64) {
        let n = self.csub(1075, e);
        let ones = self.pc(u64::MAX);
        let hi_mask = self.shl64(ones, n);
        let zero = self.c(0);
        let one = self.c(1);
        let unit = self.shl64(Words64 { hi: zero, lo: one }, n);
        (hi_mask, unit)
    }
    fn and64(&mut self, a: Words64, b: Words64) -> Words64 {
        Words64 {
            hi: self.and(a.hi, b.hi),
            lo: self.and(a.lo, b.lo),
        }
    }
    /// trunc/floor/ceil: `mode` 0 = toward zero, 1 = down, 2 = up.
    fn fround_dir(&mut self, a: Words64, mode: u32) -> Words64 {
        let e = self.biased_exp(a);
        let small = self.cmpc(AluOp::Ult, e, 1023);
        let big = self.cmpc(AluOp::Uge, e, 1075);
        let (mask, unit) = self.int_mask(e);
        let t = self.and64(a, mask);
        let s = self.sign(a);
        let neg = self.cmpc(AluOp::Ine, s, 0);
        let sz = self.signed_zero(a);
        let r = match mode {
            0 => self.selp(small, sz, t),
            _ => {
                let frac = self.cmp_ne64(t, a);
                let dir = if mode == 1 { neg } else { self.bnot(neg) };
                let bump = self.band(frac, dir);
                // Adding one unit to the magnitude bits carries into the exponent as needed.
                let up = self.add64(t, unit);
                let mid = self.selp(bump, up, t);
                // |a| < 1: 0 with a's sign, or +-1 when rounding away from zero.
                let az = self.is_zero(a);
                let nz = self.bnot(az);
                let away = self.band(nz, dir);
                let one = Words64 {
                    hi: self.orc(s, 0x3ff0_0000),
                    lo: self.c(0),
                };
                let sm = self.selp(away, one, sz);
                self.selp(small, sm, mid)
            }
        };
        self.selp(big, a, r)
    }
    fn cmp_ne64(&mut self, a: Words64, b: Words64) -> Value {
        let x = self.xor(a.hi, b.hi);
        let y = self.xor(a.lo, b.lo);
        let o = self.or(x, y);
        self.cmpc(AluOp::Ine, o, 0)
    }
    fn fround_even(&mut self, a: Words64) -> Words64 {
        let e = self.biased_exp(a);
        let (mask, unit) = self.int_mask(e);
        // For exponent 1023 the units bit is the exponent's low bit, which is 1: right.
        let lsb_bits = self.and64(a, unit);
        let lz = self.is_zero64(lsb_bits);
        let lsb = self.bnot(lz);
        let lsb = self.b2i(lsb);
        let low = Words64 {
            hi: self.not(mask.hi),
            lo: self.not(mask.lo),
        };
        let half_m1 = self.shr64c(low, 1);
        let zero = self.c(0);
        let add = self.add64(half_m1, Words64 { hi: zero, lo: lsb });
        let sum = self.add64(a, add);
        let mid = self.and64(sum, mask);
        let sz = self.signed_zero(a);
        // 0.5 <= |a| < 1 (exponent 1022): +-1 above one half, +-0 at it.
        let mag = self.mag(a);
        let halfp = self.pc(0.5f64.to_bits());
        let above = self.ult64(halfp, mag);
        let s = self.sign(a);
        let one = Words64 {
            hi: self.orc(s, 0x3ff0_0000),
            lo: zero,
        };
        let r1022 = self.selp(above, one, sz);
        let lt1022 = self.cmpc(AluOp::Ult, e, 1022);
        let is1022 = self.cmpc(AluOp::Ieq, e, 1022);
        let big = self.cmpc(AluOp::Uge, e, 1075);
        let r = self.selp(is1022, r1022, mid);
        let r = self.selp(lt1022, sz, r);
        self.selp(big, a, r)
    }
    fn fsign(&mut self, a: Words64) -> Words64 {
        let z = self.is_zero(a);
        let n = self.is_nan(a);
        let keep = self.bor(z, n);
        let s = self.sign(a);
        let one = Words64 {
            hi: self.orc(s, 0x3ff0_0000),
            lo: self.c(0),
        };
        self.selp(keep, a, one)
    }
    /// f64 -> a smaller float format in the low bits of an i32 (`mbits` fraction bits,
    /// `ebits` exponent bits).
    fn f64_to_small(&mut self, a: Words64, mbits: u32, ebits: u32) -> Value {
        let total = 1 + ebits + mbits;
        let emax = (1u32 << ebits) - 1;
        let bias = emax >> 1;
        let s = self.sign(a);
        let s = self.shrc(s, 32 - total);
        let (m, e) = self.normalize(a);
        let be = self.addc(e, bias.wrapping_sub(1023));
        let r = self.round_pack_small(s, be, m, mbits, emax);
        let inf = self.is_inf(a);
        let infs = self.orc(s, emax << mbits);
        let r = self.sel(inf, infs, r);
        let nan = self.is_nan(a);
        self.selc(nan, (emax << mbits) | (1 << (mbits - 1)), r)
    }
    fn f32_to_f64(&mut self, x: Value) -> Words64 {
        let s = self.andc(x, SIGN);
        let e = self.shrc(x, 23);
        let e = self.andc(e, 0xff);
        let f = self.andc(x, 0x7f_ffff);
        let ez = self.cmpc(AluOp::Ieq, e, 0);
        // Denormals: move the leading one to the implicit position.
        let k = self.clz32(f);
        let sh = self.addc(k, (-8i32) as u32);
        let fnorm = self.shl(f, sh);
        let fnorm = self.andc(fnorm, 0x7f_ffff);
        let enorm = self.csub(905, k);
        let f2 = self.sel(ez, fnorm, f);
        let eb = self.addc(e, 896);
        let e2 = self.sel(ez, enorm, eb);
        let eh = self.shlc(e2, 20);
        let fh = self.shrc(f2, 3);
        let hi = self.or(s, eh);
        let hi = self.or(hi, fh);
        let lo = self.shlc(f2, 29);
        let zero = self.c(0);
        let fz = self.cmpc(AluOp::Ieq, f, 0);
        let is_zero = self.band(ez, fz);
        let emx = self.cmpc(AluOp::Ieq, e, 0xff);
        let is_inf = self.band(emx, fz);
        let nfz = self.bnot(fz);
        let is_nan = self.band(emx, nfz);
        let r = Words64 { hi, lo };
        let zp = Words64 { hi: s, lo: zero };
        let r = self.selp(is_zero, zp, r);
        let ip = Words64 {
            hi: self.orc(s, EXP_INF),
            lo: zero,
        };
        let r = self.selp(is_inf, ip, r);
        let qnan = self.nan();
        self.selp(is_nan, qnan, r)
    }
    /// An unsigned 32-bit magnitude and a sign word (0 or 0x80000000) to f64 (exact).
    fn u32_to_f64(&mut self, ax: Value, sign: Value) -> Words64 {
        let k = self.clz32(ax);
        let m = self.shl(ax, k);
        let e = self.csub(1054, k);
        let eh = self.shlc(e, 20);
        let mh = self.shrc(m, 11);
        let mh = self.andc(mh, 0xf_ffff);
        let hi = self.or(sign, eh);
        let hi = self.or(hi, mh);
        let lo = self.shlc(m, 21);
        let z = self.cmpc(AluOp::Ieq, ax, 0);
        let zero = self.c(0);
        Words64 {
            hi: self.sel(z, zero, hi),
            lo: self.sel(z, zero, lo),
        }
    }
    fn i32_to_f64(&mut self, x: Value) -> Words64 {
        let neg = self.cmpc(AluOp::Ilt, x, 0);
        let nx = self.alu(Type::I32, AluOp::Ineg, &[x]);
        let ax = self.sel(neg, nx, x);
        let zero = self.c(0);
        let s = self.selc(neg, SIGN, zero);
        self.u32_to_f64(ax, s)
    }
    /// A 64-bit integer (as words) to f64, rounded to nearest even.
    fn u64_to_f64(&mut self, ax: Words64, sign: Value) -> Words64 {
        let k = self.clz64(ax);
        let m = self.shl64(ax, k);
        let be = self.csub(1086, k);
        self.round_pack64(sign, be, m)
    }
    fn i64_to_f64(&mut self, x: Words64) -> Words64 {
        let neg = self.cmpc(AluOp::Ilt, x.hi, 0);
        let zero = self.c(0);
        let nx = self.sub64(Words64 { hi: zero, lo: zero }, x);
        let ax = self.selp(neg, nx, x);
        let s = self.selc(neg, SIGN, zero);
        self.u64_to_f64(ax, s)
    }
    /// Truncated magnitude of `a` as a 64-bit integer, valid for 1023 <= exponent <= 1086.
    fn trunc_mag64(&mut self, a: Words64) -> Words64 {
        let (s53, _) = self.sig53(a);
        let e = self.biased_exp(a);
        let n = self.csub(1075, e);
        let (right, _) = self.shr64_sticky(s53, n);
        let ln = self.addc(e, (-1075i32) as u32);
        let left = self.shl64(s53, ln);
        let k = self.c(1075);
        let is_left = self.cmp(AluOp::Ult, k, e);
        self.selp(is_left, left, right)
    }
    /// f64 -> 32-bit integer: toward zero, saturating, NaN to 0.
    fn f64_to_i32(&mut self, a: Words64, signed: bool) -> Value {
        let e = self.biased_exp(a);
        let v = self.trunc_mag64(a).lo;
        let s = self.sign(a);
        let neg = self.cmpc(AluOp::Ine, s, 0);
        let zero = self.c(0);
        let r = if signed {
            let nv = self.alu(Type::I32, AluOp::Ineg, &[v]);
            let r = self.sel(neg, nv, v);
            let sat = self.cmpc(AluOp::Uge, e, 1054);
            let mx = self.c(i32::MAX as u32);
            let satv = self.selc(neg, i32::MIN as u32, mx);
            self.sel(sat, satv, r)
        } else {
            let sat = self.cmpc(AluOp::Uge, e, 1055);
            let r = self.selc(sat, u32::MAX, v);
            self.sel(neg, zero, r)
        };
        let small = self.cmpc(AluOp::Ult, e, 1023);
        let r = self.sel(small, zero, r);
        let nan = self.is_nan(a);
        self.sel(nan, zero, r)
    }
    /// f64 -> 64-bit integer words: toward zero, saturating, NaN to 0.
    fn f64_to_i64(&mut self, a: Words64, signed: bool) -> Words64 {
        let e = self.biased_exp(a);
        let v = self.trunc_mag64(a);
        let s = self.sign(a);
        let neg = self.cmpc(AluOp::Ine, s, 0);
        let zero = self.c(0);
        let zp = Words64 { hi: zero, lo: zero };
        let r = if signed {
            let nv = self.sub64(zp, v);
            let r = self.selp(neg, nv, v);
            let sat = self.cmpc(AluOp::Uge, e, 1086);
            let mx = self.pc(i64::MAX as u64);
            let mn = self.pc(i64::MIN as u64);
            let satv = self.selp(neg, mn, mx);
            self.selp(sat, satv, r)
        } else {
            let sat = self.cmpc(AluOp::Uge, e, 1087);
            let mx = self.pc(u64::MAX);
            let r = self.selp(sat, mx, v);
            self.selp(neg, zp, r)
        };
        let small = self.cmpc(AluOp::Ult, e, 1023);
        let r = self.selp(small, zp, r);
        let nan = self.is_nan(a);
        self.selp(nan, zp, r)
    }
    fn frexp(&mut self, a: Words64) -> (Words64, Value) {
        let (m, e) = self.normalize(a);
        let f = self.shr64c(m, 11);
        let fh = self.andc(f.hi, 0xf_ffff);
        let s = self.sign(a);
        let hi = self.orc(s, 0x3fe0_0000);
        let hi = self.or(hi, fh);
        let sig = Words64 { hi, lo: f.lo };
        let ex = self.addc(e, (-1022i32) as u32);
        let z = self.is_zero(a);
        let eb = self.biased_exp(a);
        let sp = self.cmpc(AluOp::Ieq, eb, 0x7ff);
        let special = self.bor(z, sp);
        let sig = self.selp(special, a, sig);
        let zero = self.c(0);
        let ex = self.sel(special, zero, ex);
        (sig, ex)
    }

    // ---- 128-bit helpers on little-endian word arrays (for ffma) ----

    fn w128(hi: Words64, lo: Words64) -> [Value; 4] {
        [lo.lo, lo.hi, hi.lo, hi.hi]
    }
    /// Selects among `x[i + q]` (q = 0..=3, from precomputed q == 1, 2, 3 tests).
    fn pick(&mut self, qs: [Value; 3], c: [Value; 4]) -> Value {
        let r = self.sel(qs[0], c[1], c[0]);
        let r = self.sel(qs[1], c[2], r);
        self.sel(qs[2], c[3], r)
    }
    fn q_tests(&mut self, q: Value) -> [Value; 3] {
        [
            self.cmpc(AluOp::Ieq, q, 1),
            self.cmpc(AluOp::Ieq, q, 2),
            self.cmpc(AluOp::Ieq, q, 3),
        ]
    }
    /// Right shift by `n` in 0..=127 and whether a 1 bit was shifted out.
    fn shr128_sticky(&mut self, x: [Value; 4], n: Value) -> ([Value; 4], Value) {
        let q = self.shrc(n, 5);
        let r = self.andc(n, 31);
        let qs = self.q_tests(q);
        let z = self.c(0);
        let get = |i: usize| if i < 4 { x[i] } else { z };
        let mut y = [z; 5];
        for (i, yi) in y.iter_mut().enumerate().take(4) {
            *yi = self.pick(qs, [get(i), get(i + 1), get(i + 2), get(i + 3)]);
        }
        // Whole words dropped: x0 when q >= 1, x1 when q >= 2, x2 when q == 3.
        let q1 = self.cmpc(AluOp::Uge, q, 1);
        let q2 = self.cmpc(AluOp::Uge, q, 2);
        let d0 = self.sel(q1, x[0], z);
        let d1 = self.sel(q2, x[1], z);
        let d2 = self.sel(qs[2], x[2], z);
        let d = self.or(d0, d1);
        let d = self.or(d, d2);
        let ones = self.c(u32::MAX);
        let m = self.shl(ones, r);
        let m = self.not(m);
        let b = self.and(y[0], m);
        let st = self.or(d, b);
        let st = self.cmpc(AluOp::Ine, st, 0);
        let rn = self.csub(31, r);
        let mut out = [z; 4];
        for i in 0..4 {
            let a = self.shr(y[i], r);
            let h = self.shlc(y[i + 1], 1);
            let h = self.shl(h, rn);
            out[i] = self.or(a, h);
        }
        (out, st)
    }
    /// Left shift by `n` in 0..=127.
    fn shl128(&mut self, x: [Value; 4], n: Value) -> [Value; 4] {
        let q = self.shrc(n, 5);
        let r = self.andc(n, 31);
        let qs = self.q_tests(q);
        let z = self.c(0);
        let get = |i: isize| if i >= 0 { x[i as usize] } else { z };
        let mut y = [z; 4];
        for (i, yi) in y.iter_mut().enumerate() {
            let i = i as isize;
            *yi = self.pick(qs, [get(i), get(i - 1), get(i - 2), get(i - 3)]);
        }
        let rn = self.csub(31, r);
        let mut out = [z; 4];
        for i in 0..4 {
            let a = self.shl(y[i], r);
            let prev = if i > 0 { y[i - 1] } else { z };
            let l = self.shrc(prev, 1);
            let l = self.shr(l, rn);
            out[i] = self.or(a, l);
        }
        out
    }
    fn clz128(&mut self, x: [Value; 4]) -> Value {
        let mut r = self.clz32(x[0]);
        r = self.addc(r, 96);
        for (i, base) in [(1usize, 64u32), (2, 32), (3, 0)] {
            let nz = self.cmpc(AluOp::Ine, x[i], 0);
            let c = self.clz32(x[i]);
            let c = self.addc(c, base);
            r = self.sel(nz, c, r);
        }
        r
    }
    fn add128(&mut self, a: [Value; 4], b: [Value; 4]) -> [Value; 4] {
        let z = self.c(0);
        let mut out = [z; 4];
        let mut carry = z;
        for i in 0..4 {
            let s = self.add(a[i], b[i]);
            let c1 = self.cmp(AluOp::Ult, s, a[i]);
            let s2 = self.add(s, carry);
            let c2 = self.cmp(AluOp::Ult, s2, s);
            out[i] = s2;
            let c = self.bor(c1, c2);
            carry = self.b2i(c);
        }
        out
    }
    /// a - b and whether it borrowed (a < b).
    fn sub128(&mut self, a: [Value; 4], b: [Value; 4]) -> ([Value; 4], Value) {
        let z = self.c(0);
        let mut out = [z; 4];
        let mut borrow = z;
        let mut bb = self.bc(false);
        for i in 0..4 {
            let d = self.sub(a[i], b[i]);
            let b1 = self.cmp(AluOp::Ult, a[i], b[i]);
            let d2 = self.sub(d, borrow);
            let b2 = self.cmp(AluOp::Ult, d, borrow);
            out[i] = d2;
            bb = self.bor(b1, b2);
            borrow = self.b2i(bb);
        }
        (out, bb)
    }
    fn sel128(&mut self, c: Value, a: [Value; 4], b: [Value; 4]) -> [Value; 4] {
        let z = self.c(0);
        let mut out = [z; 4];
        for i in 0..4 {
            out[i] = self.sel(c, a[i], b[i]);
        }
        out
    }
    /// a * b + c with a single rounding.
    fn ffma(&mut self, a: Words64, b: Words64, c: Words64) -> Words64 {
        let sp = self.result_sign(a, b);
        let sc = self.sign(c);
        let (ma, ea) = self.normalize(a);
        let (mb, eb) = self.normalize(b);
        let (ph, pl) = self.mul128(ma, mb);
        let p = Self::w128(ph, pl);
        // p / 2^126 is in [1, 4); bring its top bit to 126 (the low 22 bits of p are zero,
        // so nothing is lost), keeping one bit of headroom for the sum.
        let top = self.shrc(p[3], 31);
        let t1 = self.cmpc(AluOp::Ieq, top, 1);
        let zero = self.c(0);
        let sh = self.selc(t1, 1, zero);
        let (xp, _) = self.shr128_sticky(p, sh);
        // value = x / 2^126 * 2^E
        let e_p = self.add(ea, eb);
        let e_p = self.addc(e_p, (-2046i32) as u32);
        let tb = self.b2i(t1);
        let e_p = self.add(e_p, tb);
        let (mc, ec) = self.normalize(c);
        let mc1 = self.shr64c(mc, 1);
        let xc = Self::w128(mc1, Words64 { hi: zero, lo: zero });
        let e_c = self.addc(ec, (-1023i32) as u32);
        // A zero addend never wins the alignment.
        let cz = self.is_zero(c);
        let e_c = self.selc(cz, (-10000i32) as u32, e_c);
        let (_, borrow) = self.sub128(xp, xc);
        let egt = self.cmp(AluOp::Ilt, e_c, e_p);
        let eeq = self.cmp(AluOp::Ieq, e_c, e_p);
        let nb = self.bnot(borrow);
        let eq_ge = self.band(eeq, nb);
        let pbig = self.bor(egt, eq_ge);
        let xb = self.sel128(pbig, xp, xc);
        let xs = self.sel128(pbig, xc, xp);
        let eb_ = self.sel(pbig, e_p, e_c);
        let es = self.sel(pbig, e_c, e_p);
        let sb = self.sel(pbig, sp, sc);
        let d = self.sub(eb_, es);
        let c127 = self.c(127);
        let d = self.i2(AluOp::Umin, d, c127);
        let (xs, st) = self.shr128_sticky(xs, d);
        let st = self.b2i(st);
        let mut xs = xs;
        xs[0] = self.or(xs[0], st);
        let same = self.cmp(AluOp::Ieq, sp, sc);
        let sum = self.add128(xb, xs);
        let (dif, _) = self.sub128(xb, xs);
        let r = self.sel128(same, sum, dif);
        let o1 = self.or(r[0], r[1]);
        let o2 = self.or(r[2], r[3]);
        let o = self.or(o1, o2);
        let rz = self.cmpc(AluOp::Ieq, o, 0);
        let k = self.clz128(r);
        let c127b = self.c(127);
        let kk = self.i2(AluOp::Umin, k, c127b);
        let r = self.shl128(r, kk);
        let low = self.or(r[0], r[1]);
        let lnz = self.cmpc(AluOp::Ine, low, 0);
        let lnz = self.b2i(lnz);
        let m = Words64 {
            hi: r[3],
            lo: self.or(r[2], lnz),
        };
        let be = self.addc(eb_, 1024);
        let be = self.sub(be, k);
        let nsame = self.bnot(same);
        let cancel = self.band(rz, nsame);
        let sign = self.selc(cancel, 0, sb);
        let res = self.round_pack64(sign, be, m);
        // Special operands.
        let an = self.is_nan(a);
        let bn = self.is_nan(b);
        let cn = self.is_nan(c);
        let ai = self.is_inf(a);
        let bi = self.is_inf(b);
        let ci = self.is_inf(c);
        let az = self.is_zero(a);
        let bz = self.is_zero(b);
        let x = self.band(ai, bz);
        let y = self.band(bi, az);
        let pinf = self.bor(ai, bi);
        let pc_inf = self.band(pinf, ci);
        let opp = self.cmp(AluOp::Ine, sp, sc);
        let w = self.band(pc_inf, opp);
        let nan = self.bor(an, bn);
        let nan = self.bor(nan, cn);
        let nan = self.bor(nan, x);
        let nan = self.bor(nan, y);
        let nan = self.bor(nan, w);
        let pz = self.bor(az, bz);
        let zs = self.and(sp, sc);
        let zz = Words64 { hi: zs, lo: zero };
        let pzr = self.selp(cz, zz, c);
        let r = self.selp(pz, pzr, res);
        let r = self.selp(ci, c, r);
        let pinfr = Words64 {
            hi: self.orc(sp, EXP_INF),
            lo: zero,
        };
        let r = self.selp(pinf, pinfr, r);
        let qnan = self.nan();
        self.selp(nan, qnan, r)
    }
    /// Signed clamp of `v` to [lo, hi].
    fn clampc(&mut self, v: Value, lo: i32, hi: i32) -> Value {
        let l = self.c(lo as u32);
        let h = self.c(hi as u32);
        let v = self.i2(AluOp::Imax, v, l);
        self.i2(AluOp::Imin, v, h)
    }
    /// x * 2^n with one rounding (as `eval::ldexp`): the normalized significand repacked
    /// at exponent e + n by the rounding [`SoftBuilder::round_pack64`] (denormal results, overflow
    /// to infinity); zero stays a signed zero, inf and NaN come back as they are.
    fn ldexp(&mut self, a: Words64, n: Value) -> Words64 {
        let n = self.clampc(n, -2200, 2200);
        let (m, e) = self.normalize(a);
        let be = self.add(e, n);
        let s = self.sign(a);
        let r = self.round_pack64(s, be, m);
        let eb = self.biased_exp(a);
        let special = self.cmpc(AluOp::Ieq, eb, 0x7ff);
        self.selp(special, a, r)
    }
}

/// An operand of a lowered scalar op: f64 words or an untouched value.
#[derive(Clone, Copy)]
enum Arg {
    F(Words64),
    O(Value),
}

impl Arg {
    fn f(self) -> LowerResult<Words64> {
        match self {
            Arg::F(p) => Ok(p),
            Arg::O(v) => Err(format!("expected an f64 operand, got {v}")),
        }
    }
    fn o(self) -> LowerResult<Value> {
        match self {
            Arg::O(v) => Ok(v),
            Arg::F(_) => Err("expected a non-f64 operand, got an f64".into()),
        }
    }
}

/// The result of one lowered scalar op: the words of an f64, or a value of another type.
enum Lowered {
    F(Words64),
    O(Value),
}

/// Lowers one scalar ALU op with at least one f64 operand or result.
fn lower_alu(
    b: &mut SoftBuilder,
    op: AluOp,
    dt: Type,
    st: &[Type],
    a: &[Arg],
) -> LowerResult<Lowered> {
    use AluOp::*;
    let f = |i: usize| a[i].f();
    let r = match op {
        Mov => Lowered::F(f(0)?),
        Fneg => Lowered::F(b.fneg(f(0)?)),
        Fabs => Lowered::F(b.fabs(f(0)?)),
        Fadd => Lowered::F(b.fadd(f(0)?, f(1)?)),
        Fsub => Lowered::F(b.fsub(f(0)?, f(1)?)),
        Fmul => Lowered::F(b.fmul(f(0)?, f(1)?)),
        Fdiv => Lowered::F(b.fdiv(f(0)?, f(1)?)),
        Ffma => Lowered::F(b.ffma(f(0)?, f(1)?, f(2)?)),
        Fsqrt => Lowered::F(b.fsqrt(f(0)?)),
        Frcp => {
            let one = b.one();
            Lowered::F(b.fdiv(one, f(0)?))
        }
        Frsq => {
            let s = b.fsqrt(f(0)?);
            let one = b.one();
            Lowered::F(b.fdiv(one, s))
        }
        Fmin => Lowered::F(b.fminmax(f(0)?, f(1)?, false)),
        Fmax => Lowered::F(b.fminmax(f(0)?, f(1)?, true)),
        Fsign => Lowered::F(b.fsign(f(0)?)),
        Ftrunc => Lowered::F(b.fround_dir(f(0)?, 0)),
        Ffloor => Lowered::F(b.fround_dir(f(0)?, 1)),
        Fceil => Lowered::F(b.fround_dir(f(0)?, 2)),
        FroundEven => Lowered::F(b.fround_even(f(0)?)),
        Ffract => {
            let fl = b.fround_dir(f(0)?, 1);
            Lowered::F(b.fsub(f(0)?, fl))
        }
        Fmod | Frem => {
            // x - y * round(x / y), the IR's definition (lower_int_div normally expands
            // these before this pass runs).
            let (x, y) = (f(0)?, f(1)?);
            let q = b.fdiv(x, y);
            let r = b.fround_dir(q, if op == Fmod { 1 } else { 0 });
            let m = b.fmul(y, r);
            let d = b.fsub(x, m);
            // As lower_int_div: a 64-bit mod returns 0 where the result would equal y.
            let eq = b.fcmp(Feq, d, y);
            let z = b.pc(0);
            Lowered::F(b.selp(eq, z, d))
        }
        Ldexp => {
            let n = a[1].o()?;
            let n = widen_int(b, n, st[1], true);
            Lowered::F(b.ldexp(f(0)?, n))
        }
        FrexpSig => Lowered::F(b.frexp(f(0)?).0),
        FrexpExp => {
            let e = b.frexp(f(0)?).1;
            Lowered::O(narrow_int(b, e, dt))
        }
        Feq | Fne | Flt | Fle | Fgt | Fge | Fequ | Fneu | Fltu | Fleu | Fgtu | Fgeu => {
            Lowered::O(b.fcmp(op, f(0)?, f(1)?))
        }
        IsNan => Lowered::O(b.is_nan(f(0)?)),
        IsInf => Lowered::O(b.is_inf(f(0)?)),
        Bcsel => {
            let (x, y) = (f(1)?, f(2)?);
            Lowered::F(b.selp(a[0].o()?, x, y))
        }
        B2f => {
            let one = b.one();
            let z = b.pc(0);
            Lowered::F(b.selp(a[0].o()?, one, z))
        }
        I2f | U2f if !is_f64(st[0]) => {
            let signed = op == I2f;
            let x = a[0].o()?;
            if st[0].bits == 64 {
                let p = int64_words(b, x);
                Lowered::F(if signed {
                    b.i64_to_f64(p)
                } else {
                    let z = b.c(0);
                    b.u64_to_f64(p, z)
                })
            } else {
                let x = widen_int(b, x, st[0], signed);
                Lowered::F(if signed {
                    b.i32_to_f64(x)
                } else {
                    let z = b.c(0);
                    b.u32_to_f64(x, z)
                })
            }
        }
        F2i | F2u if is_f64(st[0]) => {
            let signed = op == F2i;
            if dt.bits == 64 {
                let p = b.f64_to_i64(f(0)?, signed);
                Lowered::O(int64_from_words(b, p))
            } else {
                let v = b.f64_to_i32(f(0)?, signed);
                if dt.bits == 32 {
                    Lowered::O(v)
                } else {
                    // Saturate to the narrow range, then truncate.
                    let (lo, hi) = if signed {
                        let h = (1u32 << (dt.bits - 1)) - 1;
                        (Some(!h), h)
                    } else {
                        (None, (1u32 << dt.bits) - 1)
                    };
                    let v = match lo {
                        Some(lo) => {
                            let h = b.c(hi);
                            let v = b.i2(Imin, v, h);
                            let l = b.c(lo);
                            b.i2(Imax, v, l)
                        }
                        None => {
                            let h = b.c(hi);
                            b.i2(Umin, v, h)
                        }
                    };
                    Lowered::O(narrow_int(b, v, dt))
                }
            }
        }
        F2f if is_f64(dt) && !is_f64(st[0]) => {
            let x = a[0].o()?;
            let x = if st[0].bits == 32 {
                x
            } else {
                b.alu(Type::F32, F2f, &[x])
            };
            let bits = b.alu(Type::I32, Bitcast, &[x]);
            Lowered::F(b.f32_to_f64(bits))
        }
        F2f if is_f64(st[0]) && !is_f64(dt) => {
            let v = if dt.bits == 16 {
                b.f64_to_small(f(0)?, 10, 5)
            } else {
                b.f64_to_small(f(0)?, 23, 8)
            };
            if dt.bits == 16 {
                let h = b.alu(Type::int(16), U2u, &[v]);
                Lowered::O(b.alu(dt, Bitcast, &[h]))
            } else {
                Lowered::O(b.alu(dt, Bitcast, &[v]))
            }
        }
        F2f => Lowered::F(f(0)?),
        Bitcast if is_f64(dt) => Lowered::F(int64_words(b, a[0].o()?)),
        Bitcast => Lowered::O(int64_from_words(b, f(0)?)),
        Fexp2 | Flog2 | Fsin | Fcos | Fpow => {
            // No 64-bit form in SPIR-V for Vulkan; computed in f32 should one appear.
            let mut xs = Vec::new();
            for i in 0..a.len() {
                let v = b.f64_to_small(f(i)?, 23, 8);
                xs.push(b.alu(Type::F32, Bitcast, &[v]));
            }
            let r = b.alu(Type::F32, op, &xs);
            let bits = b.alu(Type::I32, Bitcast, &[r]);
            Lowered::F(b.f32_to_f64(bits))
        }
        _ => return Err(format!("no lowering for {op:?} {dt} <- {st:?}")),
    };
    Ok(r)
}

/// Sign- or zero-extends a narrow integer to 32 bits.
fn widen_int(b: &mut SoftBuilder, x: Value, t: Type, signed: bool) -> Value {
    if t.bits == 32 {
        x
    } else {
        b.alu(
            Type::I32,
            if signed { AluOp::I2i } else { AluOp::U2u },
            &[x],
        )
    }
}

fn narrow_int(b: &mut SoftBuilder, x: Value, t: Type) -> Value {
    if t.bits == 32 {
        x
    } else {
        b.alu(t, AluOp::U2u, &[x])
    }
}

/// The words of a 64-bit integer (the target has 64-bit integer ops).
fn int64_words(b: &mut SoftBuilder, x: Value) -> Words64 {
    let t = Type::int(64);
    let x = if b.b.ty(x) == t {
        x
    } else {
        b.alu(t, AluOp::Bitcast, &[x])
    };
    let lo = b.alu(Type::I32, AluOp::U2u, &[x]);
    let k = b.c(32);
    let h = b.alu(t, AluOp::Ushr, &[x, k]);
    let hi = b.alu(Type::I32, AluOp::U2u, &[h]);
    Words64 { hi, lo }
}

fn int64_from_words(b: &mut SoftBuilder, p: Words64) -> Value {
    let t = Type::int(64);
    let lo = b.alu(t, AluOp::U2u, &[p.lo]);
    let hi = b.alu(t, AluOp::U2u, &[p.hi]);
    let k = b.c(32);
    let hi = b.alu(t, AluOp::Ishl, &[hi, k]);
    b.alu(t, AluOp::Ior, &[lo, hi])
}

struct Lower {
    vals: Vec<Type>,
    /// f64 value -> its words (low, high per component).
    map: HashMap<Value, Vec<Value>>,
    /// Definitions of scalar 64-bit integers and 32-bit constants seen so far (to find the
    /// two words packDouble2x32 combines).
    defs: HashMap<Value, Op>,
    /// 64-bit integers whose words are known (`bitcast` of an f64, unpackDouble2x32).
    int_words: HashMap<Value, Words64>,
}

impl Lower {
    fn ty(&self, v: Value) -> Type {
        self.vals[v.0 as usize]
    }
    fn words(&self, v: Value) -> LowerResult<Vec<Value>> {
        self.map
            .get(&v)
            .cloned()
            .ok_or_else(|| format!("f64 value {v} used before its definition"))
    }
    fn new_words(&mut self, v: Value) -> Vec<Value> {
        let n = 2 * usize::from(self.ty(v).comps);
        let w: Vec<Value> = (0..n)
            .map(|_| {
                self.vals.push(Type::I32);
                Value(self.vals.len() as u32 - 1)
            })
            .collect();
        self.map.insert(v, w.clone());
        w
    }
    /// Defined values (structure results, loop parameters) with f64 ones replaced by words.
    fn expand_defs(&mut self, vs: &[Value]) -> Vec<Value> {
        let mut out = Vec::new();
        for &v in vs {
            if is_f64(self.ty(v)) {
                out.extend(self.new_words(v));
            } else {
                out.push(v);
            }
        }
        out
    }
    fn expand_uses(&self, vs: &[Value]) -> LowerResult<Vec<Value>> {
        let mut out = Vec::new();
        for &v in vs {
            if is_f64(self.ty(v)) {
                out.extend(self.words(v)?);
            } else {
                out.push(v);
            }
        }
        Ok(out)
    }

    fn const_of(&self, v: Value) -> Option<u64> {
        match self.defs.get(&v) {
            Some(Op::Const(c)) if c.len() == 1 => Some(c[0]),
            _ => None,
        }
    }
    fn emit_const(&mut self, out: &mut Block, x: u32) -> Value {
        Builder::new(&mut self.vals, out).konst(Type::I32, u64::from(x))
    }
    /// The two 32-bit words of a 64-bit integer built as packDouble2x32 builds it:
    /// `ior(u2u lo, ishl(u2u hi, 32))` (either operand order).
    fn packed_words(&self, x: Value) -> Option<Words64> {
        let Some(Op::Alu(AluOp::Ior, s)) = self.defs.get(&x) else {
            return None;
        };
        let widened = |v: Value| match self.defs.get(&v) {
            Some(Op::Alu(AluOp::U2u, w)) if self.ty(w[0]) == Type::I32 => Some(w[0]),
            _ => None,
        };
        let shifted = |v: Value| match self.defs.get(&v) {
            Some(Op::Alu(AluOp::Ishl, w)) if self.const_of(w[1]) == Some(32) => widened(w[0]),
            _ => None,
        };
        let (a, b) = (s[0], s[1]);
        if let (Some(lo), Some(hi)) = (widened(a), shifted(b)) {
            return Some(Words64 { hi, lo });
        }
        if let (Some(lo), Some(hi)) = (widened(b), shifted(a)) {
            return Some(Words64 { hi, lo });
        }
        None
    }

    fn block(&mut self, b: Block) -> LowerResult<Block> {
        let mut out = Block::new();
        for n in b {
            match n {
                Node::Instr(i) => self.instr(i, &mut out)?,
                Node::If(mut i) => {
                    i.then_ = self.block(std::mem::take(&mut i.then_))?;
                    i.else_ = self.block(std::mem::take(&mut i.else_))?;
                    i.results = self.expand_defs(&i.results);
                    out.push(Node::If(i));
                }
                Node::Loop(mut l) => {
                    let mut params = Vec::new();
                    for (p, init) in std::mem::take(&mut l.params) {
                        if is_f64(self.ty(p)) {
                            let ws = self.new_words(p);
                            let is = self.words(init)?;
                            params.extend(ws.into_iter().zip(is));
                        } else {
                            params.push((p, init));
                        }
                    }
                    l.params = params;
                    l.results = self.expand_defs(&l.results);
                    l.body = self.block(std::mem::take(&mut l.body))?;
                    out.push(Node::Loop(l));
                }
                Node::Break(v) => out.push(Node::Break(self.expand_uses(&v)?)),
                Node::Continue(v) => out.push(Node::Continue(self.expand_uses(&v)?)),
                Node::Yield(v) => out.push(Node::Yield(self.expand_uses(&v)?)),
            }
        }
        Ok(out)
    }

    fn instr(&mut self, i: Instr, out: &mut Block) -> LowerResult<()> {
        let dt = i.dst.map(|d| self.ty(d));
        let src_tys: Vec<Type> = i.op.srcs().iter().map(|s| self.ty(*s)).collect();
        let involved = dt.is_some_and(is_f64) || i.op.srcs().iter().any(|s| is_f64(self.ty(*s)));
        if let Some(d) = i.dst {
            if !involved && (self.ty(d) == Type::int(64) || matches!(i.op, Op::Const(_))) {
                self.defs.insert(d, i.op.clone());
            }
        }
        if !involved {
            // unpackDouble2x32 reads the words of `bitcast i64 <- f64` with u2u and ushr 32:
            // take them directly, so the 64-bit integer ops die in DCE.
            if let (Some(d), Op::Alu(op, s)) = (i.dst, &i.op) {
                if let Some(p) = self.int_words.get(&s[0]).copied() {
                    match op {
                        AluOp::U2u if self.ty(d) == Type::I32 => {
                            Builder::new(&mut self.vals, out)
                                .emit_to(d, Op::Alu(AluOp::Mov, vec![p.lo]));
                            return Ok(());
                        }
                        AluOp::Ushr if self.const_of(s[1]) == Some(32) => {
                            let zero = self.emit_const(out, 0);
                            self.int_words.insert(d, Words64 { hi: zero, lo: p.hi });
                        }
                        _ => {}
                    }
                }
            }
            out.push(Node::Instr(i));
            return Ok(());
        }
        if let (Some(d), Op::Alu(AluOp::Bitcast, s)) = (i.dst, &i.op) {
            if is_f64(src_tys[0]) {
                let w = self.words(s[0])?;
                self.int_words.insert(d, Words64 { lo: w[0], hi: w[1] });
            } else if let Some(p) = self.packed_words(s[0]) {
                self.map.insert(d, vec![p.lo, p.hi]);
                return Ok(());
            }
        }
        let mut vals = std::mem::take(&mut self.vals);
        let mut nodes = Block::new();
        let mut b = SoftBuilder {
            b: Builder::new(&mut vals, &mut nodes),
        };
        let words: Option<Vec<Value>> = match &i.op {
            Op::Const(c) => Some(
                c.iter()
                    .flat_map(|x| [*x as u32, (*x >> 32) as u32])
                    .map(|w| b.c(w))
                    .collect(),
            ),
            Op::Vec(srcs) => {
                let mut w = Vec::new();
                for s in srcs {
                    w.extend(self.words(*s)?);
                }
                Some(w)
            }
            Op::Extract(v, c) => {
                let w = self.words(*v)?;
                let c = usize::from(*c);
                Some(w[2 * c..2 * c + 2].to_vec())
            }
            Op::Insert(v, s, c) => {
                let mut w = self.words(*v)?;
                let c = usize::from(*c);
                w[2 * c..2 * c + 2].copy_from_slice(&self.words(*s)?);
                Some(w)
            }
            Op::Swizzle(v, idx) => {
                let w = self.words(*v)?;
                Some(
                    idx.iter()
                        .flat_map(|c| {
                            let c = usize::from(*c);
                            [w[2 * c], w[2 * c + 1]]
                        })
                        .collect(),
                )
            }
            Op::Load {
                space,
                offset,
                align,
            } => {
                let n = 2 * usize::from(dt.ok_or("f64 load without a result")?.comps);
                let mut w = Vec::new();
                for k in (0..n).step_by(4) {
                    let len = (n - k).min(4);
                    let (off, al) = chunk_offset(&mut b, *offset, *align, k);
                    let t = Type::I32.vec(len as u8);
                    let v = b.emit(
                        t,
                        Op::Load {
                            space: *space,
                            offset: off,
                            align: al,
                        },
                    );
                    if len == 1 {
                        w.push(v);
                    } else {
                        for c in 0..len {
                            w.push(b.emit(Type::I32, Op::Extract(v, c as u8)));
                        }
                    }
                }
                Some(w)
            }
            Op::Store {
                space,
                offset,
                value,
                align,
            } => {
                let w = self.words(*value)?;
                for k in (0..w.len()).step_by(4) {
                    let len = (w.len() - k).min(4);
                    let (off, al) = chunk_offset(&mut b, *offset, *align, k);
                    let v = if len == 1 {
                        w[k]
                    } else {
                        b.emit(Type::I32.vec(len as u8), Op::Vec(w[k..k + len].to_vec()))
                    };
                    b.b.emit_void(Op::Store {
                        space: *space,
                        offset: off,
                        value: v,
                        align: al,
                    });
                }
                None
            }
            Op::Alu(op, srcs) => {
                let dt = dt.ok_or("f64 ALU op without a result")?;
                let st = &src_tys;
                let mut out_words = Vec::new();
                let mut out_vals = Vec::new();
                for c in 0..dt.comps {
                    let mut args = Vec::new();
                    for (s, t) in srcs.iter().zip(st) {
                        args.push(if is_f64(*t) {
                            let w = self.words(*s)?;
                            let k = if t.comps == 1 { 0 } else { 2 * usize::from(c) };
                            Arg::F(Words64 {
                                lo: w[k],
                                hi: w[k + 1],
                            })
                        } else if t.comps == 1 {
                            Arg::O(*s)
                        } else {
                            Arg::O(b.emit(t.scalar_type(), Op::Extract(*s, c)))
                        });
                    }
                    let sts: Vec<Type> = st.iter().map(|t| t.scalar_type()).collect();
                    match lower_alu(&mut b, *op, dt.scalar_type(), &sts, &args)? {
                        Lowered::F(p) => out_words.extend([p.lo, p.hi]),
                        Lowered::O(v) => out_vals.push(v),
                    }
                }
                if is_f64(dt) {
                    Some(out_words)
                } else {
                    let op = if out_vals.len() == 1 {
                        Op::Alu(AluOp::Mov, out_vals)
                    } else {
                        Op::Vec(out_vals)
                    };
                    b.b.push(Node::Instr(Instr { dst: i.dst, op }));
                    None
                }
            }
            Op::LoadVar(_) | Op::StoreVar(..) => {
                return Err("f64 variable access (soft fp64 runs after vars_to_ssa)".into());
            }
            Op::Atomic { .. } => return Err("f64 atomic operation".into()),
            Op::SysVal(_) | Op::BufferSize(_) | Op::Barrier { .. } => {
                return Err("f64 operand of a system value, buffer size or barrier".into());
            }
            Op::Subgroup(..) => {
                return Err("f64 subgroup operation (not supported yet)".into());
            }
        };
        self.vals = vals;
        out.extend(nodes);
        if let (Some(d), Some(w)) = (i.dst, words) {
            if dt.is_some_and(is_f64) {
                self.map.insert(d, w);
            }
        }
        Ok(())
    }
}

/// Offset and alignment of the 16-byte piece starting at word `k` of a split access.
fn chunk_offset(b: &mut SoftBuilder, offset: Value, align: u32, k: usize) -> (Value, u32) {
    if k == 0 {
        return (offset, align);
    }
    let add = b.c(4 * k as u32);
    (b.add(offset, add), align.min(16))
}

/// Why an f64 construct has no software lowering.
type LowerResult<T> = Result<T, String>;

/// Replaces every f64 value and operation by 32-bit integer code (see the module comment).
/// Returns true if the function had any f64 value; an error (and the function unchanged)
/// for a construct with no lowering, such as an f64 atomic.
pub fn soft_fp64(f: &mut Function) -> Result<bool, String> {
    let mut any = false;
    f.for_each_node(&mut |n| match n {
        Node::Instr(i) => {
            any |= i.dst.is_some_and(|d| is_f64(f.values[d.0 as usize]))
                || i.op.srcs().iter().any(|s| is_f64(f.values[s.0 as usize]))
        }
        Node::If(i) => any |= i.results.iter().any(|r| is_f64(f.values[r.0 as usize])),
        Node::Loop(l) => any |= l.params.iter().any(|p| is_f64(f.values[p.0 .0 as usize])),
        _ => {}
    });
    if !any {
        return Ok(false);
    }
    // Lowered from copies: on an error the function is left as it was.
    let mut l = Lower {
        vals: f.values.clone(),
        map: HashMap::new(),
        defs: HashMap::new(),
        int_words: HashMap::new(),
    };
    let body = f.body.clone();
    f.body = l.block(body)?;
    // The replaced values are no longer defined or used; give them a harmless type.
    for t in &mut l.vals {
        if is_f64(*t) {
            *t = Type::I32.vec(t.comps);
        }
    }
    f.values = l.vals;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{run, Memory};
    use crate::parse::parse_shader;

    /// xorshift64*: deterministic inputs.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    const EDGES: &[f64] = &[
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        3.0,
        0.1,
        -7.75,
        1e300,
        -1e-300,
        4503599627370496.0,
        4503599627370497.0,
        9007199254740993.0,
        2147483647.5,
        -2147483648.0,
        -2147483649.0,
        4294967295.9,
        4294967296.0,
        9.3e18,
        -9.3e18,
        f64::MAX,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        2.225073858507201e-308,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::EPSILON,
        1.0 - f64::EPSILON / 2.0,
        0.49999999999999994,
        3.4028235677973366e38,
        3.4028234663852886e38,
        1.401298464324817e-45,
        7.006492321624085e-46,
        6.103515625e-5,
    ];

    /// A random f64 bit pattern from a mix of classes: raw bits, edges, denormals, values
    /// near the overflow and underflow limits, small integers and halves.
    fn rand_f64(r: &mut Rng) -> u64 {
        let s = r.next() & (1 << 63);
        match r.below(10) {
            0 | 1 => r.next(),
            2 => EDGES[r.below(EDGES.len() as u64) as usize].to_bits(),
            3 => s | (r.next() & ((1 << 52) - 1)),
            4 => s | ((2040 + r.below(7)) << 52) | (r.next() & ((1 << 52) - 1)),
            5 => s | ((1 + r.below(4)) << 52) | (r.next() & ((1 << 52) - 1)),
            6 => ((r.below(4000) as f64 - 2000.0) / 4.0).to_bits() ^ s,
            7 => s | ((1023 + r.below(64)) << 52) | (r.next() & ((1 << 52) - 1)),
            8 => s | ((1020 + r.below(8)) << 52) | (r.next() >> 40 << 40 & ((1 << 52) - 1)),
            _ => s | ((900 + r.below(250)) << 52) | (r.next() & ((1 << 52) - 1)),
        }
    }

    fn bytes_of(t: &str) -> usize {
        match t {
            "f64" | "i64" => 8,
            "f32" | "i32" => 4,
            "f16" | "i16" => 2,
            "i8" => 1,
            _ => panic!("{t}"),
        }
    }

    /// A shader that applies `op` to inputs loaded from ssbo[k] and stores the result to
    /// ssbo[7]; a boolean result is stored as b2i.
    fn op_shader(op: &str, srcs: &[&str], dst: &str, lanes: usize) -> String {
        let mut s = format!(
            "shader local_size {lanes} 1 1 shared 0 local 0 push 0\n\
             %0:i32 = sysval local_invocation_index\n"
        );
        let mut args = Vec::new();
        for (k, t) in srcs.iter().enumerate() {
            let n = bytes_of(t);
            s += &format!("%{}:i32 = const {n}\n", 10 + k);
            s += &format!("%{}:i32 = imul %0, %{}\n", 20 + k, 10 + k);
            s += &format!("%{}:{t} = load ssbo[{k}] %{} align {n}\n", 30 + k, 20 + k);
            args.push(format!("%{}", 30 + k));
        }
        let (store_t, r) = if dst == "b1" {
            s += &format!("%40:b1 = {op} {}\n%41:i32 = b2i %40\n", args.join(", "));
            ("i32", 41)
        } else {
            s += &format!("%41:{dst} = {op} {}\n", args.join(", "));
            (dst, 41)
        };
        let n = bytes_of(store_t);
        s += &format!("%50:i32 = const {n}\n%51:i32 = imul %0, %50\n");
        s += &format!("store ssbo[7] %51, %{r} align {n}\n");
        s
    }

    fn is_nan_bits(t: &str, b: u64) -> bool {
        match t {
            "f64" => f64::from_bits(b).is_nan(),
            "f32" => f32::from_bits(b as u32).is_nan(),
            "f16" => (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0,
            _ => false,
        }
    }

    /// Runs `op` on every input tuple, once as written (the interpreter computes f64 with
    /// Rust's f64) and once after soft_fp64; results must be bit-identical, except that
    /// NaN results need only both be NaN. `fixup` may adjust the expected value.
    fn check_op(
        op: &str,
        srcs: &[&str],
        dst: &str,
        inputs: &[Vec<u64>],
        fixup: &dyn Fn(&[u64], u64) -> u64,
    ) {
        let lanes = inputs.len();
        let text = op_shader(op, srcs, dst, lanes);
        let orig = parse_shader(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut lowered = orig.clone();
        assert!(soft_fp64(&mut lowered.func).unwrap());
        crate::validate::validate(&lowered.func).unwrap_or_else(|e| panic!("{e}\n{lowered}"));
        assert!(
            !lowered.func.values.iter().any(|t| is_f64(*t)),
            "an f64 type remains"
        );
        let mut mem = Memory::default();
        for (k, t) in srcs.iter().enumerate() {
            let n = bytes_of(t);
            let mut buf = vec![0u8; n * lanes];
            for (l, inp) in inputs.iter().enumerate() {
                buf[l * n..l * n + n].copy_from_slice(&inp[k].to_le_bytes()[..n]);
            }
            mem.ssbo.insert(k as u32, buf);
        }
        let out_t = if dst == "b1" { "i32" } else { dst };
        let on = bytes_of(out_t);
        mem.ssbo.insert(7, vec![0; on * lanes]);
        let mut m1 = mem.clone();
        run(&orig, [1, 1, 1], 16, &mut m1).unwrap();
        run(&lowered, [1, 1, 1], 16, &mut mem).unwrap();
        let read = |m: &Memory, l: usize| {
            let mut b = [0u8; 8];
            b[..on].copy_from_slice(&m.ssbo[&7][l * on..l * on + on]);
            u64::from_le_bytes(b)
        };
        let mut bad = Vec::new();
        for (l, inp) in inputs.iter().enumerate() {
            let want = fixup(inp, read(&m1, l));
            let got = read(&mem, l);
            let ok = want == got || (is_nan_bits(dst, want) && is_nan_bits(dst, got));
            if !ok {
                bad.push(format!(
                    "lane {l}: {op} {:x?} ({:?}): want {want:#x} got {got:#x}",
                    inp,
                    inp.iter()
                        .zip(srcs)
                        .map(|(x, t)| if *t == "f64" {
                            format!("{:e}", f64::from_bits(*x))
                        } else {
                            format!("{x:#x}")
                        })
                        .collect::<Vec<_>>()
                ));
            }
        }
        assert!(
            bad.is_empty(),
            "{} of {lanes} differ (seeded inputs):\n{}",
            bad.len(),
            bad.iter().take(12).cloned().collect::<Vec<_>>().join("\n")
        );
    }

    fn same(_: &[u64], w: u64) -> u64 {
        w
    }

    /// Every pair of edge values, then `n` random tuples.
    fn inputs(arity: usize, n: usize, seed: u64) -> Vec<Vec<u64>> {
        let mut v = Vec::new();
        let e: Vec<u64> = EDGES.iter().map(|x| x.to_bits()).collect();
        match arity {
            1 => v.extend(e.iter().map(|x| vec![*x])),
            2 => {
                for a in &e {
                    for b in &e {
                        v.push(vec![*a, *b]);
                    }
                }
            }
            _ => {}
        }
        let mut r = Rng(seed);
        for _ in 0..n {
            let a = rand_f64(&mut r);
            let mut t = vec![a];
            for k in 1..arity {
                // Half the time a close neighbour of the first operand (cancellation,
                // equal exponents).
                let x = if r.below(2) == 0 {
                    rand_f64(&mut r)
                } else {
                    (a ^ (r.next() & 0xffff)) ^ (r.below(2) << 63) ^ (u64::from(k == 2) << 62)
                };
                t.push(x);
            }
            v.push(t);
        }
        v
    }

    fn check_f64_unary(op: &str, seed: u64) {
        check_op(op, &["f64"], "f64", &inputs(1, 2000, seed), &same);
    }
    fn check_f64_binary(op: &str, seed: u64) {
        check_op(op, &["f64", "f64"], "f64", &inputs(2, 1500, seed), &same);
    }

    #[test]
    fn fadd_fsub_are_correctly_rounded() {
        check_f64_binary("fadd", 1);
        check_f64_binary("fsub", 2);
    }

    #[test]
    fn fmul_is_correctly_rounded() {
        check_f64_binary("fmul", 3);
    }

    #[test]
    fn fdiv_is_correctly_rounded() {
        check_f64_binary("fdiv", 4);
    }

    #[test]
    fn fsqrt_is_correctly_rounded() {
        check_f64_unary("fsqrt", 5);
    }

    #[test]
    fn frcp_frsq_match_the_two_rounding_reference() {
        check_f64_unary("frcp", 6);
        check_f64_unary("frsq", 7);
    }

    #[test]
    fn ffma_is_fused() {
        let mut v = inputs(3, 2500, 8);
        // Products that cancel against the addend.
        let mut r = Rng(80);
        for _ in 0..500 {
            let a = f64::from_bits(rand_f64(&mut r));
            let b = f64::from_bits(rand_f64(&mut r));
            let c = -(a * b);
            v.push(vec![a.to_bits(), b.to_bits(), c.to_bits()]);
        }
        let e: Vec<u64> = EDGES.iter().step_by(3).map(|x| x.to_bits()).collect();
        for a in &e {
            for b in &e {
                for c in &e {
                    v.push(vec![*a, *b, *c]);
                }
            }
        }
        check_op("ffma", &["f64", "f64", "f64"], "f64", &v, &same);
    }

    #[test]
    fn rounding_to_integers() {
        for (k, op) in [
            "ftrunc",
            "ffloor",
            "fceil",
            "fround_even",
            "ffract",
            "fsign",
        ]
        .iter()
        .enumerate()
        {
            check_f64_unary(op, 10 + k as u64);
        }
    }

    #[test]
    fn fneg_fabs_keep_payloads() {
        check_f64_unary("fneg", 20);
        check_f64_unary("fabs", 21);
    }

    #[test]
    fn comparisons_ordered_and_unordered() {
        let v = inputs(2, 1000, 30);
        for op in [
            "feq", "fne", "flt", "fle", "fgt", "fge", "fequ", "fneu", "fltu", "fleu", "fgtu",
            "fgeu",
        ] {
            check_op(op, &["f64", "f64"], "b1", &v, &same);
        }
        let v = inputs(1, 500, 31);
        check_op("isnan", &["f64"], "b1", &v, &same);
        check_op("isinf", &["f64"], "b1", &v, &same);
    }

    #[test]
    fn fmin_fmax_return_the_number_and_order_zeros() {
        // Rust's min/max may return either zero for (+0, -0); the lowering orders -0 < +0
        // (IEEE 754-2019 minimum/maximum on zeros).
        let zeros = |max: bool| {
            move |i: &[u64], w: u64| {
                let (a, b) = (f64::from_bits(i[0]), f64::from_bits(i[1]));
                if a == 0.0 && b == 0.0 {
                    let neg = if max {
                        a.is_sign_negative() && b.is_sign_negative()
                    } else {
                        a.is_sign_negative() || b.is_sign_negative()
                    };
                    if neg {
                        (-0.0f64).to_bits()
                    } else {
                        0
                    }
                } else {
                    w
                }
            }
        };
        let v = inputs(2, 1000, 40);
        check_op("fmin", &["f64", "f64"], "f64", &v, &zeros(false));
        check_op("fmax", &["f64", "f64"], "f64", &v, &zeros(true));
    }

    #[test]
    fn conversions_to_and_from_f32_f16() {
        let v = inputs(1, 3000, 50);
        check_op("f2f", &["f64"], "f32", &v, &same);
        check_op("f2f", &["f64"], "f16", &v, &same);
        let mut r = Rng(51);
        let mut w: Vec<Vec<u64>> = (0..2000).map(|_| vec![r.next() & 0xffff_ffff]).collect();
        w.extend(
            [
                0u64,
                0x8000_0000,
                1,
                0x807f_ffff,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0001,
            ]
            .iter()
            .map(|x| vec![*x]),
        );
        check_op("f2f", &["f32"], "f64", &w, &same);
        let h: Vec<Vec<u64>> = (0..2000).map(|_| vec![r.next() & 0xffff]).collect();
        check_op("f2f", &["f16"], "f64", &h, &same);
    }

    #[test]
    fn conversions_to_and_from_integers() {
        let v = inputs(1, 3000, 60);
        for dst in ["i32", "i16", "i8", "i64"] {
            check_op("f2i", &["f64"], dst, &v, &same);
            check_op("f2u", &["f64"], dst, &v, &same);
        }
        let mut r = Rng(61);
        let mut w: Vec<Vec<u64>> = (0..1500)
            .map(|_| {
                let x = r.next();
                vec![x >> r.below(64)]
            })
            .collect();
        w.extend(
            [
                0u64,
                1,
                u64::MAX,
                1 << 63,
                (1 << 63) - 1,
                0x8000_0000,
                0x7fff_ffff,
            ]
            .iter()
            .map(|x| vec![*x]),
        );
        for src in ["i32", "i16", "i8", "i64"] {
            check_op("i2f", &[src], "f64", &w, &same);
            check_op("u2f", &[src], "f64", &w, &same);
        }
    }

    /// IR instructions one scalar op costs after soft fp64 and the clean-up passes (the
    /// load/store scaffolding of [`op_shader`] subtracted).
    fn op_size(op: &str, srcs: &[&str], dst: &str) -> usize {
        let count = |op: &str, srcs: &[&str], dst: &str| {
            let mut s = parse_shader(&op_shader(op, srcs, dst, 1)).unwrap();
            let opts = crate::pipeline::CompileOptions {
                debug: crate::pipeline::DebugFlags {
                    soft64: true,
                    ..Default::default()
                },
                ..Default::default()
            };
            crate::pipeline::run_pipeline_for(&mut s, &crate::Target::gen9(), &opts).unwrap();
            s.func.instr_count()
        };
        count(op, srcs, dst) - count("mov", &srcs[..1], srcs[0]) + 1
    }

    /// Code size per op stays within bounds (today's count + ~5%), so a change that
    /// bloats a helper is noticed; `--nocapture` prints the counts.
    #[test]
    fn op_sizes_stay_bounded() {
        for (op, srcs, dst, max) in [
            ("fadd", &["f64", "f64"][..], "f64", 190),
            ("fmul", &["f64", "f64"], "f64", 220),
            ("ffma", &["f64", "f64", "f64"], "f64", 510),
            ("fdiv", &["f64", "f64"], "f64", 250),
            ("fsqrt", &["f64"], "f64", 225),
            ("ldexp", &["f64", "i32"], "f64", 115),
            ("frexp_sig", &["f64"], "f64", 62),
            ("flt", &["f64", "f64"], "b1", 56),
            ("f2f", &["f64"], "f32", 110),
            ("f2i", &["f64"], "i32", 60),
            ("i2f", &["i32"], "f64", 31),
            ("fround_even", &["f64"], "f64", 78),
        ] {
            let n = op_size(op, srcs, dst);
            println!("{op}: {n} IR instructions");
            assert!(n <= max, "{op}: {n} IR instructions (bound {max})");
        }
    }

    #[test]
    fn constructs_without_a_lowering_are_errors_and_leave_the_function_alone() {
        let head = "shader local_size 1 1 1 shared 0 local 0 push 0\n";
        for (body, want) in [
            (
                "var $0:f64
                %0:f64 = const 1.5
                store_var $0, %0
                %1:f64 = load_var $0
                %2:i32 = const 0
                store ssbo[0] %2, %1 align 8",
                "variable",
            ),
            (
                "%0:i32 = const 0
                %1:f64 = const 2.5
                %2:f64 = atomic_xchg ssbo[0] %0, %1
                store ssbo[1] %0, %2 align 8",
                "atomic",
            ),
        ] {
            let text = format!("{head}{body}");
            let mut s = parse_shader(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let before = s.to_string();
            let err = soft_fp64(&mut s.func).expect_err(&text);
            assert!(err.contains(want), "{err}");
            assert_eq!(s.to_string(), before);
        }
    }

    #[test]
    fn frexp_and_ldexp() {
        let v = inputs(1, 2000, 70);
        check_op("frexp_sig", &["f64"], "f64", &v, &same);
        check_op("frexp_exp", &["f64"], "i32", &v, &same);
        let mut r = Rng(71);
        let w: Vec<Vec<u64>> = (0..2500)
            .map(|_| {
                let e = match r.below(3) {
                    0 => r.below(200) as i64 - 100,
                    1 => r.below(4400) as i64 - 2200,
                    _ => r.next() as i32 as i64,
                };
                vec![rand_f64(&mut r), e as u64 & 0xffff_ffff]
            })
            .collect();
        check_op("ldexp", &["f64", "i32"], "f64", &w, &same);
    }

    #[test]
    fn fneg_becomes_a_sign_flip_of_the_high_word() {
        crate::passes::check_pass(
            |f| soft_fp64(f).unwrap(),
            "%0:i32 = const 0
            %1:f64 = load ssbo[0] %0 align 8
            %2:f64 = fneg %1
            store ssbo[0] %0, %2 align 8",
            "%0:i32 = const 0
            %1:i32x2 = load ssbo[0] %0 align 8
            %2:i32 = extract %1, 0
            %3:i32 = extract %1, 1
            %4:i32 = const -2147483648
            %5:i32 = ixor %3, %4
            %6:i32x2 = vec %2, %5
            store ssbo[0] %0, %6 align 8",
        );
    }

    #[test]
    fn vectors_phis_and_selects_carry_word_pairs() {
        // f64x3/f64x4 loads and stores split into i32x4 pieces, a loop parameter, an if
        // result, bcsel, vec/extract/swizzle/insert: same memory as the f64 original.
        let text = "shader local_size 8 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 32
            %2:i32 = imul %0, %1
            %3:f64x3 = load ssbo[0] %2 align 8
            %4:f64 = extract %3, 0
            %5:f64 = extract %3, 2
            %6:i32 = const 0
            %7:i32 = const 1
            %8:i32 = const 3
            %9:f64 = loop (%10:i32 = %6, %11:f64 = %4) {
                %12:b1 = ige %10, %8
                if %12 {
                    break %11
                }
                %13:f64 = fmul %11, %5
                %14:i32 = iadd %10, %7
                continue %14, %13
            }
            %15:b1 = flt %9, %5
            %16:f64 = if %15 {
                %17:f64 = fadd %9, %4
                yield %17
            } else {
                yield %5
            }
            %18:f64 = bcsel %15, %4, %16
            %19:f64x4 = vec %16, %18, %9, %4
            %20:f64x4 = swizzle %19, 3 2 1 0
            %21:f64x4 = insert %20, %5, 1
            store ssbo[1] %2, %21 align 8";
        let orig = parse_shader(text).unwrap();
        let mut lowered = orig.clone();
        assert!(soft_fp64(&mut lowered.func).unwrap());
        crate::validate::validate(&lowered.func).unwrap_or_else(|e| panic!("{e}\n{lowered}"));
        assert!(!lowered.to_string().contains("f64"), "{lowered}");
        let mut r = Rng(90);
        let mut mem = Memory::default();
        let input: Vec<u8> = (0..8 * 4)
            .flat_map(|_| f64::from_bits(rand_f64(&mut r)).to_le_bytes())
            .collect();
        mem.ssbo.insert(0, input);
        mem.ssbo.insert(1, vec![0; 8 * 32]);
        let mut m1 = mem.clone();
        run(&orig, [1, 1, 1], 8, &mut m1).unwrap();
        run(&lowered, [1, 1, 1], 8, &mut mem).unwrap();
        let words = |m: &Memory| -> Vec<u64> {
            m.ssbo[&1]
                .chunks(8)
                .map(|c| {
                    let b = u64::from_le_bytes(c.try_into().unwrap());
                    if f64::from_bits(b).is_nan() {
                        u64::MAX
                    } else {
                        b
                    }
                })
                .collect()
        };
        assert_eq!(words(&m1), words(&mem));
        assert!(words(&mem).iter().any(|w| *w != 0));
    }

    #[test]
    fn pack_and_unpack_double_2x32_need_no_64_bit_integers() {
        // The front end's packDouble2x32 / unpackDouble2x32 shapes.
        let text = "shader local_size 8 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 8
            %2:i32 = imul %0, %1
            %3:i32x2 = load ssbo[0] %2 align 8
            %4:i32 = extract %3, 0
            %5:i32 = extract %3, 1
            %6:i64 = u2u %4
            %7:i64 = u2u %5
            %8:i32 = const 32
            %9:i64 = ishl %7, %8
            %10:i64 = ior %6, %9
            %11:f64 = bitcast %10
            %12:f64 = fmul %11, %11
            %13:i64 = bitcast %12
            %14:i32 = u2u %13
            %15:i64 = ushr %13, %8
            %16:i32 = u2u %15
            %17:i32x2 = vec %16, %14
            store ssbo[1] %2, %17 align 8";
        let orig = parse_shader(text).unwrap();
        let mut lowered = orig.clone();
        assert!(soft_fp64(&mut lowered.func).unwrap());
        crate::passes::opt_copy_prop(&mut lowered.func);
        crate::passes::opt_dce(&mut lowered.func);
        crate::validate::validate(&lowered.func).unwrap();
        let t = lowered.to_string();
        assert!(!t.contains("f64") && !t.contains("i64"), "{t}");
        let mut r = Rng(95);
        let mut mem = Memory::default();
        let input: Vec<u8> = (0..8)
            .flat_map(|_| {
                f64::from_bits(rand_f64(&mut r) & !(0x7ffu64 << 52) | (1000 << 52)).to_le_bytes()
            })
            .collect();
        mem.ssbo.insert(0, input);
        mem.ssbo.insert(1, vec![0; 64]);
        let mut m1 = mem.clone();
        run(&orig, [1, 1, 1], 8, &mut m1).unwrap();
        run(&lowered, [1, 1, 1], 8, &mut mem).unwrap();
        assert_eq!(m1.ssbo[&1], mem.ssbo[&1]);
        assert!(mem.ssbo[&1].iter().any(|x| *x != 0));
    }
}
