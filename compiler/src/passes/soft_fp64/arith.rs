//! The f64 operations as 32-bit integer code: the word helpers of [`SoftBuilder`] and each
//! operation's correctly rounded routine (see the parent module for the semantics).

use super::{SoftBuilder, Words64, EXP_INF, QNAN_HI, SIGN};
use crate::ir::*;

/// The two-operand word operations: `name(a, b)` for `a op b` and, where a second name is
/// given, `second(a, k)` for the same op with the constant `k` as the second operand.
macro_rules! word_ops {
    ($($name:ident $(, $with_const:ident)?: $op:ident;)*) => {$(
        pub(super) fn $name(&mut self, a: Value, b: Value) -> Value {
            self.i2(AluOp::$op, a, b)
        }
        $(pub(super) fn $with_const(&mut self, a: Value, k: u32) -> Value {
            let k = self.c(k);
            self.$name(a, k)
        })?
    )*};
}

impl SoftBuilder<'_> {
    pub(super) fn c(&mut self, x: u32) -> Value {
        self.b.konst(Type::I32, u64::from(x))
    }
    pub(super) fn bc(&mut self, x: bool) -> Value {
        self.b.konst(Type::B1, u64::from(x))
    }
    pub(super) fn i2(&mut self, op: AluOp, a: Value, b: Value) -> Value {
        self.alu(op, Type::I32, &[a, b])
    }
    word_ops! {
        add, addc: Iadd;
        sub: Isub;
        and, andc: Iand;
        or, orc: Ior;
        xor: Ixor;
        shl, shlc: Ishl;
        shr, shrc: Ushr;
    }
    /// Arithmetic right shift by a constant.
    pub(super) fn sarc(&mut self, a: Value, n: u32) -> Value {
        let n = self.c(n);
        self.i2(AluOp::Ishr, a, n)
    }
    /// `k - a`.
    pub(super) fn csub(&mut self, k: u32, a: Value) -> Value {
        let k = self.c(k);
        self.sub(k, a)
    }
    pub(super) fn not(&mut self, a: Value) -> Value {
        self.alu(AluOp::Inot, Type::I32, &[a])
    }
    pub(super) fn cmp(&mut self, op: AluOp, a: Value, b: Value) -> Value {
        self.alu(op, Type::B1, &[a, b])
    }
    pub(super) fn cmpc(&mut self, op: AluOp, a: Value, k: u32) -> Value {
        let k = self.c(k);
        self.cmp(op, a, k)
    }
    pub(super) fn band(&mut self, a: Value, b: Value) -> Value {
        self.alu(AluOp::Iand, Type::B1, &[a, b])
    }
    pub(super) fn bor(&mut self, a: Value, b: Value) -> Value {
        self.alu(AluOp::Ior, Type::B1, &[a, b])
    }
    pub(super) fn bnot(&mut self, a: Value) -> Value {
        self.alu(AluOp::Inot, Type::B1, &[a])
    }
    pub(super) fn b2i(&mut self, b: Value) -> Value {
        self.alu(AluOp::B2i, Type::I32, &[b])
    }
    pub(super) fn sel(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.alu(AluOp::Bcsel, Type::I32, &[c, a, b])
    }
    pub(super) fn selc(&mut self, c: Value, a: u32, b: Value) -> Value {
        let a = self.c(a);
        self.sel(c, a, b)
    }
    pub(super) fn selp(&mut self, c: Value, a: Words64, b: Words64) -> Words64 {
        Words64 {
            hi: self.sel(c, a.hi, b.hi),
            lo: self.sel(c, a.lo, b.lo),
        }
    }
    pub(super) fn pc(&mut self, x: u64) -> Words64 {
        Words64 {
            hi: self.c((x >> 32) as u32),
            lo: self.c(x as u32),
        }
    }
    pub(super) fn nan(&mut self) -> Words64 {
        self.pc(u64::from(QNAN_HI) << 32)
    }

    // ---- 64-bit integer helpers on word pairs ----

    pub(super) fn add64(&mut self, a: Words64, b: Words64) -> Words64 {
        let lo = self.add(a.lo, b.lo);
        let c = self.cmp(AluOp::Ult, lo, a.lo);
        let c = self.b2i(c);
        let hi = self.add(a.hi, b.hi);
        let hi = self.add(hi, c);
        Words64 { hi, lo }
    }
    pub(super) fn sub64(&mut self, a: Words64, b: Words64) -> Words64 {
        let lo = self.sub(a.lo, b.lo);
        let c = self.cmp(AluOp::Ult, a.lo, b.lo);
        let c = self.b2i(c);
        let hi = self.sub(a.hi, b.hi);
        let hi = self.sub(hi, c);
        Words64 { hi, lo }
    }
    pub(super) fn ult64(&mut self, a: Words64, b: Words64) -> Value {
        let h = self.cmp(AluOp::Ult, a.hi, b.hi);
        let e = self.cmp(AluOp::Ieq, a.hi, b.hi);
        let l = self.cmp(AluOp::Ult, a.lo, b.lo);
        let el = self.band(e, l);
        self.bor(h, el)
    }
    /// `a` with `w` ORed into its low word (a sticky bit, a shifted-in bit).
    pub(super) fn or_lo(&mut self, a: Words64, w: Value) -> Words64 {
        Words64 {
            hi: a.hi,
            lo: self.or(a.lo, w),
        }
    }
    pub(super) fn is_zero64(&mut self, a: Words64) -> Value {
        let o = self.or(a.hi, a.lo);
        self.cmpc(AluOp::Ieq, o, 0)
    }
    /// Left shift by a constant 1..=31.
    pub(super) fn shl64c(&mut self, a: Words64, n: u32) -> Words64 {
        let h = self.shlc(a.hi, n);
        let l = self.shrc(a.lo, 32 - n);
        Words64 {
            hi: self.or(h, l),
            lo: self.shlc(a.lo, n),
        }
    }
    /// Right shift by a constant 1..=31.
    pub(super) fn shr64c(&mut self, a: Words64, n: u32) -> Words64 {
        let l = self.shrc(a.lo, n);
        let h = self.shlc(a.hi, 32 - n);
        Words64 {
            hi: self.shrc(a.hi, n),
            lo: self.or(l, h),
        }
    }
    /// Left shift by `n` in 0..=63 (32-bit shifts use their count modulo 32).
    pub(super) fn shl64(&mut self, a: Words64, n: Value) -> Words64 {
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
    pub(super) fn shr64_sticky(&mut self, a: Words64, n: Value) -> (Words64, Value) {
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
    pub(super) fn clz32(&mut self, x: Value) -> Value {
        // ufind_msb of 0 is all ones, so 31 - msb gives 32 for 0.
        let m = self.alu(AluOp::UfindMsb, Type::I32, &[x]);
        self.csub(31, m)
    }
    /// Leading zeros of a 64-bit quantity (64 for 0).
    pub(super) fn clz64(&mut self, a: Words64) -> Value {
        let hz = self.cmpc(AluOp::Ieq, a.hi, 0);
        let ch = self.clz32(a.hi);
        let m = self.alu(AluOp::UfindMsb, Type::I32, &[a.lo]);
        let cl = self.csub(63, m);
        self.sel(hz, cl, ch)
    }
    /// 64 x 64 -> 128-bit product as (high pair, low pair).
    pub(super) fn mul128(&mut self, a: Words64, b: Words64) -> (Words64, Words64) {
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

    pub(super) fn abs_hi(&mut self, a: Words64) -> Value {
        self.andc(a.hi, !SIGN)
    }
    pub(super) fn sign(&mut self, a: Words64) -> Value {
        self.andc(a.hi, SIGN)
    }
    pub(super) fn biased_exp(&mut self, a: Words64) -> Value {
        let e = self.shrc(a.hi, 20);
        self.andc(e, 0x7ff)
    }
    pub(super) fn is_nan(&mut self, a: Words64) -> Value {
        // |hi| | (lo != 0) > 0x7ff00000 exactly when the exponent is all ones and the
        // fraction is not zero.
        let ah = self.abs_hi(a);
        let nz = self.cmpc(AluOp::Ine, a.lo, 0);
        let nz = self.b2i(nz);
        let x = self.or(ah, nz);
        let k = self.c(EXP_INF);
        self.cmp(AluOp::Ult, k, x)
    }
    pub(super) fn is_inf(&mut self, a: Words64) -> Value {
        let ah = self.abs_hi(a);
        let h = self.cmpc(AluOp::Ieq, ah, EXP_INF);
        let l = self.cmpc(AluOp::Ieq, a.lo, 0);
        self.band(h, l)
    }
    pub(super) fn is_zero(&mut self, a: Words64) -> Value {
        let ah = self.abs_hi(a);
        let o = self.or(ah, a.lo);
        self.cmpc(AluOp::Ieq, o, 0)
    }
    /// NaN, infinity and zero tests of two operands, in the order
    /// `[a NaN, b NaN, a inf, b inf, a zero, b zero]`.
    pub(super) fn specials2(&mut self, a: Words64, b: Words64) -> [Value; 6] {
        let an = self.is_nan(a);
        let bn = self.is_nan(b);
        let ai = self.is_inf(a);
        let bi = self.is_inf(b);
        let az = self.is_zero(a);
        let bz = self.is_zero(b);
        [an, bn, ai, bi, az, bz]
    }
    /// |a| as a pair.
    pub(super) fn mag(&mut self, a: Words64) -> Words64 {
        Words64 {
            hi: self.abs_hi(a),
            lo: a.lo,
        }
    }
    /// The 53-bit significand (implicit bit included for normal numbers) and the exponent
    /// clamped to at least 1 (denormals scale like exponent 1).
    pub(super) fn sig53(&mut self, a: Words64) -> (Words64, Value) {
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
    pub(super) fn normalize(&mut self, a: Words64) -> (Words64, Value) {
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
    pub(super) fn round_pack64(&mut self, sign: Value, be: Value, m: Words64) -> Words64 {
        let (one, be_eff, t, st) = self.round_shift(be, m, 9);
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
    pub(super) fn round_inc(&mut self, t: Value) -> Value {
        let r = self.andc(t, 7);
        let k = self.c(0xc8);
        let x = self.shr(k, r);
        self.andc(x, 1)
    }
    /// The shift both roundings start with: `m` moved right by `keep_shift` plus however
    /// far the exponent `be` lies below 1 (a denormal result), capped at 63. Returns the
    /// constant 1, the exponent clamped to at least 1, the shifted words and the bits
    /// shifted out as a 0/1 sticky word.
    fn round_shift(
        &mut self,
        be: Value,
        m: Words64,
        keep_shift: u32,
    ) -> (Value, Value, Words64, Value) {
        let one = self.c(1);
        let be_eff = self.i2(AluOp::Imax, be, one);
        let extra = self.sub(be_eff, be);
        let sh = self.addc(extra, keep_shift);
        let c63 = self.c(63);
        let sh = self.i2(AluOp::Umin, sh, c63);
        let (t, st) = self.shr64_sticky(m, sh);
        let st = self.b2i(st);
        (one, be_eff, t, st)
    }
    /// Rounds like [`SoftBuilder::round_pack64`] to a smaller format whose bits fit in 32
    /// (`mbits` fraction bits, all-ones exponent `emax`); the sign goes above the exponent.
    pub(super) fn round_pack_small(
        &mut self,
        sign: Value,
        be: Value,
        m: Words64,
        mbits: u32,
        emax: u32,
    ) -> Value {
        let (one, be_eff, t, st) = self.round_shift(be, m, 61 - mbits);
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
    pub(super) fn counted_loop<F: FnOnce(&mut Self, &[Value]) -> Vec<Value>>(
        &mut self,
        n: u32,
        init: Vec<Value>,
        body: F,
    ) -> Vec<Value> {
        let zero = self.c(0);
        let kn = self.c(n);
        let mut params = Vec::new();
        let ctr = self.new_value(Type::I32);
        params.push((ctr, zero));
        let mut state = Vec::new();
        for v in &init {
            let p = self.new_value(Type::I32);
            params.push((p, *v));
            state.push(p);
        }
        let results: Vec<Value> = init.iter().map(|_| self.new_value(Type::I32)).collect();
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

    // ---- f64 operations ----

    pub(super) fn fneg(&mut self, a: Words64) -> Words64 {
        let k = self.c(SIGN);
        Words64 {
            hi: self.xor(a.hi, k),
            lo: a.lo,
        }
    }
    pub(super) fn fabs(&mut self, a: Words64) -> Words64 {
        self.mag(a)
    }
    pub(super) fn signed_zero(&mut self, a: Words64) -> Words64 {
        Words64 {
            hi: self.sign(a),
            lo: self.c(0),
        }
    }
    pub(super) fn fadd(&mut self, a: Words64, b: Words64) -> Words64 {
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
        let my = self.or_lo(my, st);
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
    pub(super) fn fsub(&mut self, a: Words64, b: Words64) -> Words64 {
        let nb = self.fneg(b);
        self.fadd(a, nb)
    }
    pub(super) fn result_sign(&mut self, a: Words64, b: Words64) -> Value {
        let x = self.xor(a.hi, b.hi);
        self.andc(x, SIGN)
    }
    pub(super) fn fmul(&mut self, a: Words64, b: Words64) -> Words64 {
        let sr = self.result_sign(a, b);
        let (ma, ea) = self.normalize(a);
        let (mb, eb) = self.normalize(b);
        let (t, l) = self.mul128(ma, mb);
        let lz = self.is_zero64(l);
        let st = self.bnot(lz);
        let st = self.b2i(st);
        let t = self.or_lo(t, st);
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
        let [an, bn, ai, bi, az, bz] = self.specials2(a, b);
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
    pub(super) fn fdiv(&mut self, a: Words64, b: Words64) -> Words64 {
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
            let mut r = Words64::pair_at(st, 0);
            let mut q = Words64::pair_at(st, 2);
            for _ in 0..2 {
                // r < 2 * xb < 2^54: the sign of the 64-bit difference is the comparison.
                let d = s.sub64(r, xb);
                let ge = s.cmpc(AluOp::Ige, d.hi, 0);
                let rs = s.selp(ge, d, r);
                r = s.shl64c(rs, 1);
                let q2 = s.shl64c(q, 1);
                let g = s.b2i(ge);
                q = s.or_lo(q2, g);
            }
            vec![r.hi, r.lo, q.hi, q.lo]
        });
        let m = self.quotient_with_sticky(&res);
        let be = self.sub(ea, eb);
        let l = self.b2i(lt);
        let be = self.sub(be, l);
        let be = self.addc(be, 1023);
        let r = self.round_pack64(sr, be, m);
        let [an, bn, ai, bi, az, bz] = self.specials2(a, b);
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
    /// The significand of a digit-by-digit loop's result (`res` = remainder words, then
    /// quotient words): the quotient moved up by 8 with a sticky bit in bit 0 when the
    /// remainder is not zero.
    fn quotient_with_sticky(&mut self, res: &[Value]) -> Words64 {
        let r = Words64::pair_at(res, 0);
        let q = Words64::pair_at(res, 2);
        let rz = self.is_zero64(r);
        let st = self.bnot(rz);
        let st = self.b2i(st);
        let m = self.shl64c(q, 8);
        self.or_lo(m, st)
    }
    pub(super) fn fsqrt(&mut self, a: Words64) -> Words64 {
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
            let mut r = Words64::pair_at(st, 0);
            let mut q = Words64::pair_at(st, 2);
            let mut xs = Words64::pair_at(st, 4);
            for _ in 0..2 {
                let top = s.shrc(xs.hi, 30);
                let r2 = s.shl64c(r, 2);
                r = s.or_lo(r2, top);
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
                q = s.or_lo(q2, g);
            }
            vec![r.hi, r.lo, q.hi, q.lo, xs.hi, xs.lo]
        });
        let m = self.quotient_with_sticky(&res);
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
    pub(super) fn one(&mut self) -> Words64 {
        self.pc(1f64.to_bits())
    }

    /// Unordered (NaN involved), equal (as numbers) and less-than (as numbers, ignoring
    /// NaN) tests.
    pub(super) fn cmp_parts(&mut self, a: Words64, b: Words64) -> (Value, Value, Value, Value) {
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
    pub(super) fn lt_total(&mut self, a: Words64, b: Words64) -> Value {
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
    pub(super) fn fcmp(&mut self, op: AluOp, a: Words64, b: Words64) -> Value {
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
    pub(super) fn fminmax(&mut self, a: Words64, b: Words64, max: bool) -> Words64 {
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
    pub(super) fn int_mask(&mut self, e: Value) -> (Words64, Words64) {
        let n = self.csub(1075, e);
        let ones = self.pc(u64::MAX);
        let hi_mask = self.shl64(ones, n);
        let zero = self.c(0);
        let one = self.c(1);
        let unit = self.shl64(Words64 { hi: zero, lo: one }, n);
        (hi_mask, unit)
    }
    pub(super) fn and64(&mut self, a: Words64, b: Words64) -> Words64 {
        Words64 {
            hi: self.and(a.hi, b.hi),
            lo: self.and(a.lo, b.lo),
        }
    }
    /// trunc/floor/ceil: `mode` 0 = toward zero, 1 = down, 2 = up.
    pub(super) fn fround_dir(&mut self, a: Words64, mode: u32) -> Words64 {
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
    pub(super) fn cmp_ne64(&mut self, a: Words64, b: Words64) -> Value {
        let x = self.xor(a.hi, b.hi);
        let y = self.xor(a.lo, b.lo);
        let o = self.or(x, y);
        self.cmpc(AluOp::Ine, o, 0)
    }
    pub(super) fn fround_even(&mut self, a: Words64) -> Words64 {
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
    pub(super) fn fsign(&mut self, a: Words64) -> Words64 {
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
    pub(super) fn f64_to_small(&mut self, a: Words64, mbits: u32, ebits: u32) -> Value {
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
    pub(super) fn f32_to_f64(&mut self, x: Value) -> Words64 {
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
    pub(super) fn u32_to_f64(&mut self, ax: Value, sign: Value) -> Words64 {
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
    pub(super) fn i32_to_f64(&mut self, x: Value) -> Words64 {
        let neg = self.cmpc(AluOp::Ilt, x, 0);
        let nx = self.alu(AluOp::Ineg, Type::I32, &[x]);
        let ax = self.sel(neg, nx, x);
        let zero = self.c(0);
        let s = self.selc(neg, SIGN, zero);
        self.u32_to_f64(ax, s)
    }
    /// A 64-bit integer (as words) to f64, rounded to nearest even.
    pub(super) fn u64_to_f64(&mut self, ax: Words64, sign: Value) -> Words64 {
        let k = self.clz64(ax);
        let m = self.shl64(ax, k);
        let be = self.csub(1086, k);
        self.round_pack64(sign, be, m)
    }
    pub(super) fn i64_to_f64(&mut self, x: Words64) -> Words64 {
        let neg = self.cmpc(AluOp::Ilt, x.hi, 0);
        let zero = self.c(0);
        let nx = self.sub64(Words64 { hi: zero, lo: zero }, x);
        let ax = self.selp(neg, nx, x);
        let s = self.selc(neg, SIGN, zero);
        self.u64_to_f64(ax, s)
    }
    /// Truncated magnitude of `a` as a 64-bit integer, valid for 1023 <= exponent <= 1086.
    pub(super) fn trunc_mag64(&mut self, a: Words64) -> Words64 {
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
    pub(super) fn f64_to_i32(&mut self, a: Words64, signed: bool) -> Value {
        let e = self.biased_exp(a);
        let v = self.trunc_mag64(a).lo;
        let s = self.sign(a);
        let neg = self.cmpc(AluOp::Ine, s, 0);
        let zero = self.c(0);
        let r = if signed {
            let nv = self.alu(AluOp::Ineg, Type::I32, &[v]);
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
    pub(super) fn f64_to_i64(&mut self, a: Words64, signed: bool) -> Words64 {
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
    pub(super) fn frexp(&mut self, a: Words64) -> (Words64, Value) {
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

    pub(super) fn w128(hi: Words64, lo: Words64) -> [Value; 4] {
        [lo.lo, lo.hi, hi.lo, hi.hi]
    }
    /// Selects among `x[i + q]` (q = 0..=3, from precomputed q == 1, 2, 3 tests).
    pub(super) fn pick(&mut self, qs: [Value; 3], c: [Value; 4]) -> Value {
        let r = self.sel(qs[0], c[1], c[0]);
        let r = self.sel(qs[1], c[2], r);
        self.sel(qs[2], c[3], r)
    }
    pub(super) fn q_tests(&mut self, q: Value) -> [Value; 3] {
        [
            self.cmpc(AluOp::Ieq, q, 1),
            self.cmpc(AluOp::Ieq, q, 2),
            self.cmpc(AluOp::Ieq, q, 3),
        ]
    }
    /// Right shift by `n` in 0..=127 and whether a 1 bit was shifted out.
    pub(super) fn shr128_sticky(&mut self, x: [Value; 4], n: Value) -> ([Value; 4], Value) {
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
    pub(super) fn shl128(&mut self, x: [Value; 4], n: Value) -> [Value; 4] {
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
    pub(super) fn clz128(&mut self, x: [Value; 4]) -> Value {
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
    pub(super) fn add128(&mut self, a: [Value; 4], b: [Value; 4]) -> [Value; 4] {
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
    pub(super) fn sub128(&mut self, a: [Value; 4], b: [Value; 4]) -> ([Value; 4], Value) {
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
    pub(super) fn sel128(&mut self, c: Value, a: [Value; 4], b: [Value; 4]) -> [Value; 4] {
        let z = self.c(0);
        let mut out = [z; 4];
        for i in 0..4 {
            out[i] = self.sel(c, a[i], b[i]);
        }
        out
    }
    /// a * b + c with a single rounding.
    pub(super) fn ffma(&mut self, a: Words64, b: Words64, c: Words64) -> Words64 {
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
        let m = self.or_lo(Words64 { hi: r[3], lo: r[2] }, lnz);
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
    pub(super) fn clampc(&mut self, v: Value, lo: i32, hi: i32) -> Value {
        let l = self.c(lo as u32);
        let h = self.c(hi as u32);
        let v = self.i2(AluOp::Imax, v, l);
        self.i2(AluOp::Imin, v, h)
    }
    /// x * 2^n with one rounding (as `eval::ldexp`): the normalized significand repacked
    /// at exponent e + n by the rounding [`SoftBuilder::round_pack64`] (denormal results, overflow
    /// to infinity); zero stays a signed zero, inf and NaN come back as they are.
    pub(super) fn ldexp(&mut self, a: Words64, n: Value) -> Words64 {
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
