//! GLSL.std.450 extended instructions, expanded into IR ops. Instructions the EU's math
//! unit or ALU has (sqrt, rsq, exp2, log2, sin, cos, pow, floor, ...) map to one op; the
//! rest are expansions whose accuracy is within the Vulkan precision table (atan family:
//! an odd minimax polynomial on [0, 1] with range reduction, error below 1e-6 rad).

use super::types::SType;
use super::values::FVal;
use super::{unsupported, Fe, FrontendError, Res};
use crate::ir::{AluOp as A, Kind, Op, Type, Value};

use rspirv::spirv;

struct G<'a, 'b> {
    fe: &'a mut Fe<'b>,
}

impl G<'_, '_> {
    fn t(&self, v: Value) -> Type {
        self.fe.ty(v)
    }
    fn op(&mut self, op: A, s: &[Value]) -> Res<Value> {
        let t = self.t(s[0]);
        let t = match op.class() {
            crate::ir::AluClass::Compare | crate::ir::AluClass::Test => Type::B1.vec(t.comps),
            crate::ir::AluClass::Select => self.t(s[1]),
            _ => t,
        };
        self.fe.alu_checked(op, t, s)
    }
    fn c(&mut self, like: Value, v: f64) -> Res<Value> {
        let t = self.t(like);
        self.fe.fconst(t, v)
    }
    fn ic(&mut self, like: Value, v: u64) -> Res<Value> {
        let t = self.t(like);
        self.fe.konst(t, v)
    }
    fn add(&mut self, a: Value, b: Value) -> Res<Value> {
        self.op(A::Fadd, &[a, b])
    }
    fn sub(&mut self, a: Value, b: Value) -> Res<Value> {
        self.op(A::Fsub, &[a, b])
    }
    fn mul(&mut self, a: Value, b: Value) -> Res<Value> {
        self.op(A::Fmul, &[a, b])
    }
    fn mulc(&mut self, a: Value, k: f64) -> Res<Value> {
        let c = self.c(a, k)?;
        self.mul(a, c)
    }
    fn div(&mut self, a: Value, b: Value) -> Res<Value> {
        self.op(A::Fdiv, &[a, b])
    }
    fn sel(&mut self, c: Value, a: Value, b: Value) -> Res<Value> {
        self.op(A::Bcsel, &[c, a, b])
    }
    fn dot(&mut self, a: Value, b: Value) -> Res<Value> {
        if self.t(a).comps == 1 {
            self.mul(a, b)
        } else {
            self.fe.dot(a, b)
        }
    }
    fn clamp(&mut self, x: Value, lo: f64, hi: f64) -> Res<Value> {
        let l = self.c(x, lo)?;
        let h = self.c(x, hi)?;
        let m = self.op(A::Fmax, &[x, l])?;
        self.op(A::Fmin, &[m, h])
    }
    fn exp(&mut self, x: Value) -> Res<Value> {
        let y = self.mulc(x, std::f64::consts::LOG2_E)?;
        self.op(A::Fexp2, &[y])
    }
    fn log(&mut self, x: Value) -> Res<Value> {
        let y = self.op(A::Flog2, &[x])?;
        self.mulc(y, std::f64::consts::LN_2)
    }
    /// atan on [0, 1].
    fn atan_poly(&mut self, t: Value) -> Res<Value> {
        const K: [f64; 6] = [
            0.999_977_26,
            -0.332_623_47,
            0.193_543_46,
            -0.116_432_87,
            0.052_653_32,
            -0.011_721_20,
        ];
        let t2 = self.mul(t, t)?;
        let mut acc = self.c(t, K[5])?;
        for k in K[..5].iter().rev() {
            let m = self.mul(acc, t2)?;
            let kc = self.c(t, *k)?;
            acc = self.add(m, kc)?;
        }
        self.mul(acc, t)
    }
    fn atan2(&mut self, y: Value, x: Value) -> Res<Value> {
        let (ax, ay) = (self.op(A::Fabs, &[x])?, self.op(A::Fabs, &[y])?);
        let mx = self.op(A::Fmax, &[ax, ay])?;
        let mn = self.op(A::Fmin, &[ax, ay])?;
        let z = self.c(x, 0.0)?;
        let zero_both = self.op(A::Feq, &[mx, z])?;
        let one = self.c(x, 1.0)?;
        let den = self.sel(zero_both, one, mx)?;
        let q = self.div(mn, den)?;
        let p = self.atan_poly(q)?;
        let steep = self.op(A::Fgt, &[ay, ax])?;
        let hp = self.c(x, std::f64::consts::FRAC_PI_2)?;
        let r1 = self.sub(hp, p)?;
        let r = self.sel(steep, r1, p)?;
        let xneg = self.op(A::Flt, &[x, z])?;
        let pi = self.c(x, std::f64::consts::PI)?;
        let r2 = self.sub(pi, r)?;
        let r = self.sel(xneg, r2, r)?;
        let yneg = self.op(A::Flt, &[y, z])?;
        let nr = self.op(A::Fneg, &[r])?;
        self.sel(yneg, nr, r)
    }
    fn atan(&mut self, x: Value) -> Res<Value> {
        let one = self.c(x, 1.0)?;
        self.atan2(x, one)
    }
    fn length(&mut self, x: Value) -> Res<Value> {
        if self.t(x).comps == 1 {
            return self.op(A::Fabs, &[x]);
        }
        let d = self.dot(x, x)?;
        self.op(A::Fsqrt, &[d])
    }
    fn splat(&mut self, s: Value, like: Value) -> Res<Value> {
        let n = self.t(like).comps;
        self.fe.splat(s, n)
    }
    fn det(&mut self, m: &[Vec<Value>]) -> Res<Value> {
        // m[row][col] scalars; Laplace expansion along the first row.
        let n = m.len();
        if n == 1 {
            return Ok(m[0][0]);
        }
        if n == 2 {
            let a = self.mul(m[0][0], m[1][1])?;
            let b = self.mul(m[0][1], m[1][0])?;
            return self.sub(a, b);
        }
        let mut acc: Option<Value> = None;
        for j in 0..n {
            let minor = minor(m, 0, j);
            let d = self.det(&minor)?;
            let t = self.mul(m[0][j], d)?;
            acc = Some(match acc {
                None => t,
                Some(a) if j % 2 == 1 => self.sub(a, t)?,
                Some(a) => self.add(a, t)?,
            });
        }
        Ok(acc.unwrap())
    }
    fn elements(&mut self, cols: &[Value]) -> Res<Vec<Vec<Value>>> {
        let rows = self.t(cols[0]).comps;
        let mut m = vec![Vec::new(); usize::from(rows)];
        for c in cols {
            for (r, row) in m.iter_mut().enumerate() {
                row.push(self.fe.extract(*c, r as u8)?);
            }
        }
        Ok(m)
    }
    fn pack(&mut self, v: Value, bits: u32, snorm: bool) -> Res<Value> {
        let n = self.t(v).comps;
        let scale = if snorm {
            (1u64 << (bits - 1)) - 1
        } else {
            (1u64 << bits) - 1
        } as f64;
        let c = if snorm {
            self.clamp(v, -1.0, 1.0)?
        } else {
            self.clamp(v, 0.0, 1.0)?
        };
        let s = self.mulc(c, scale)?;
        let r = self.op(A::FroundEven, &[s])?;
        let it = Type::I32.vec(n);
        let i = self
            .fe
            .alu_checked(if snorm { A::F2i } else { A::F2u }, it, &[r])?;
        let mut acc: Option<Value> = None;
        for k in 0..n {
            let x = self.fe.extract(i, k)?;
            let mask = self.fe.konst(Type::I32, (1u64 << bits) - 1)?;
            let x = self.fe.alu_checked(A::Iand, Type::I32, &[x, mask])?;
            let sh = self.fe.konst(Type::I32, u64::from(k as u32 * bits))?;
            let x = self.fe.alu_checked(A::Ishl, Type::I32, &[x, sh])?;
            acc = Some(match acc {
                None => x,
                Some(a) => self.fe.alu_checked(A::Ior, Type::I32, &[a, x])?,
            });
        }
        Ok(acc.unwrap())
    }
    fn unpack(&mut self, p: Value, bits: u32, n: u8, snorm: bool) -> Res<Value> {
        let scale = if snorm {
            (1u64 << (bits - 1)) - 1
        } else {
            (1u64 << bits) - 1
        } as f64;
        let mut comps = Vec::new();
        for k in 0..u32::from(n) {
            let off = self.fe.konst(Type::I32, u64::from(k * bits))?;
            let cnt = self.fe.konst(Type::I32, u64::from(bits))?;
            let op = if snorm {
                A::IbitfieldExtract
            } else {
                A::UbitfieldExtract
            };
            let x = self.fe.alu_checked(op, Type::I32, &[p, off, cnt])?;
            let f = self
                .fe
                .alu_checked(if snorm { A::I2f } else { A::U2f }, Type::F32, &[x])?;
            let f = self.mulc(f, 1.0 / scale)?;
            comps.push(if snorm { self.clamp(f, -1.0, 1.0)? } else { f });
        }
        self.fe.emit(Type::F32.vec(n), Op::Vec(comps))
    }
}

fn minor(m: &[Vec<Value>], row: usize, col: usize) -> Vec<Vec<Value>> {
    m.iter()
        .enumerate()
        .filter(|(r, _)| *r != row)
        .map(|(_, r)| {
            r.iter()
                .enumerate()
                .filter(|(c, _)| *c != col)
                .map(|(_, v)| *v)
                .collect()
        })
        .collect()
}

/// Translates GLSL.std.450 instruction `n` with result type `rt`.
pub(super) fn glsl_std_450(fe: &mut Fe, n: u32, rt: u32, args: &[FVal]) -> Res<FVal> {
    use spirv::GLOp as G450;
    let Some(op) = G450::from_u32(n) else {
        return Err(FrontendError::Invalid(format!(
            "unknown GLSL.std.450 instruction {n}"
        )));
    };
    let nargs = match op {
        G450::FClamp
        | G450::UClamp
        | G450::SClamp
        | G450::NClamp
        | G450::FMix
        | G450::IMix
        | G450::SmoothStep
        | G450::Fma
        | G450::FaceForward
        | G450::Refract => 3,
        G450::Atan2
        | G450::Pow
        | G450::FMin
        | G450::UMin
        | G450::SMin
        | G450::FMax
        | G450::UMax
        | G450::SMax
        | G450::NMin
        | G450::NMax
        | G450::Step
        | G450::Modf
        | G450::Frexp
        | G450::Ldexp
        | G450::Distance
        | G450::Cross
        | G450::Reflect => 2,
        _ => 1,
    };
    if args.len() != nargs {
        return Err(FrontendError::Invalid(format!(
            "GLSL.std.450 {op:?} takes {nargs} operands"
        )));
    }
    if matches!(op, G450::Determinant | G450::MatrixInverse) {
        let cols = args[0].cols()?;
        let mut g = G { fe };
        let m = g.elements(&cols)?;
        if m.len() != cols.len() {
            return Err(FrontendError::Invalid(
                "determinant of a non-square matrix".into(),
            ));
        }
        let det = g.det(&m)?;
        if op == G450::Determinant {
            return Ok(FVal::V(det));
        }
        let n = m.len();
        let one = g.c(det, 1.0)?;
        let inv_det = g.div(one, det)?;
        let mut out = Vec::new();
        for c in 0..n {
            let mut comps = Vec::new();
            for r in 0..n {
                // inverse[row r][col c] = cofactor(c, r) / det
                let mn = minor(&m, c, r);
                let d = if n == 1 { g.c(det, 1.0)? } else { g.det(&mn)? };
                let d = if (r + c) % 2 == 1 {
                    g.op(A::Fneg, &[d])?
                } else {
                    d
                };
                comps.push(g.mul(d, inv_det)?);
            }
            let t = g.t(comps[0]).vec(n as u8);
            out.push(FVal::V(g.fe.emit(t, Op::Vec(comps))?));
        }
        return Ok(FVal::C(out));
    }
    if matches!(op, G450::ModfStruct | G450::FrexpStruct) {
        let x = args[0].v()?;
        let mut g = G { fe };
        let (a, b) = if op == G450::ModfStruct {
            let i = g.op(A::Ftrunc, &[x])?;
            (g.sub(x, i)?, i)
        } else {
            let t = g.t(x);
            (
                g.op(A::FrexpSig, &[x])?,
                g.fe.alu_checked(A::FrexpExp, Type::I32.vec(t.comps), &[x])?,
            )
        };
        return Ok(FVal::C(vec![FVal::V(a), FVal::V(b)]));
    }
    if !matches!(fe.decl.types.get(&rt), Some(SType::Struct(_))) {
        fe.ir_type(rt)?;
    }
    let mut g = G { fe };
    let a = |k: usize| args[k].v();
    let x = match op {
        G450::Modf | G450::Frexp => a(0)?,
        _ => a(0)?,
    };
    let float_ok = g.t(x).kind == Kind::Float;
    let needs_float = !matches!(
        op,
        G450::SAbs
            | G450::SSign
            | G450::UMin
            | G450::SMin
            | G450::UMax
            | G450::SMax
            | G450::UClamp
            | G450::SClamp
            | G450::FindILsb
            | G450::FindSMsb
            | G450::FindUMsb
            | G450::PackSnorm4x8
            | G450::PackUnorm4x8
            | G450::PackSnorm2x16
            | G450::PackUnorm2x16
            | G450::PackHalf2x16
            | G450::UnpackSnorm2x16
            | G450::UnpackUnorm2x16
            | G450::UnpackHalf2x16
            | G450::UnpackSnorm4x8
            | G450::UnpackUnorm4x8
            | G450::PackDouble2x32
            | G450::UnpackDouble2x32
    );
    if needs_float && !float_ok {
        return Err(FrontendError::Invalid(format!(
            "GLSL.std.450 {op:?} on a non-float operand"
        )));
    }
    let v = match op {
        G450::Round | G450::RoundEven => g.op(A::FroundEven, &[x])?,
        G450::Trunc => g.op(A::Ftrunc, &[x])?,
        G450::FAbs => g.op(A::Fabs, &[x])?,
        G450::SAbs => g.op(A::Iabs, &[x])?,
        G450::FSign => g.op(A::Fsign, &[x])?,
        G450::SSign => g.op(A::Isign, &[x])?,
        G450::Floor => g.op(A::Ffloor, &[x])?,
        G450::Ceil => g.op(A::Fceil, &[x])?,
        G450::Fract => g.op(A::Ffract, &[x])?,
        G450::Radians => g.mulc(x, std::f64::consts::PI / 180.0)?,
        G450::Degrees => g.mulc(x, 180.0 / std::f64::consts::PI)?,
        G450::Sin => g.op(A::Fsin, &[x])?,
        G450::Cos => g.op(A::Fcos, &[x])?,
        G450::Tan => {
            let s = g.op(A::Fsin, &[x])?;
            let c = g.op(A::Fcos, &[x])?;
            g.div(s, c)?
        }
        G450::Asin | G450::Acos => {
            let x2 = g.mul(x, x)?;
            let one = g.c(x, 1.0)?;
            let d = g.sub(one, x2)?;
            let s = g.op(A::Fsqrt, &[d])?;
            if op == G450::Asin {
                g.atan2(x, s)?
            } else {
                g.atan2(s, x)?
            }
        }
        G450::Atan => g.atan(x)?,
        G450::Atan2 => g.atan2(x, a(1)?)?,
        G450::Sinh | G450::Cosh => {
            let e = g.exp(x)?;
            let nx = g.op(A::Fneg, &[x])?;
            let en = g.exp(nx)?;
            let r = if op == G450::Sinh {
                g.sub(e, en)?
            } else {
                g.add(e, en)?
            };
            g.mulc(r, 0.5)?
        }
        G450::Tanh => {
            let c = g.clamp(x, -10.0, 10.0)?;
            let c2 = g.mulc(c, 2.0)?;
            let e = g.exp(c2)?;
            let one = g.c(x, 1.0)?;
            let n = g.sub(e, one)?;
            let d = g.add(e, one)?;
            g.div(n, d)?
        }
        G450::Asinh => {
            let ax = g.op(A::Fabs, &[x])?;
            let x2 = g.mul(x, x)?;
            let one = g.c(x, 1.0)?;
            let s = g.add(x2, one)?;
            let r = g.op(A::Fsqrt, &[s])?;
            let t = g.add(ax, r)?;
            let l = g.log(t)?;
            let sg = g.op(A::Fsign, &[x])?;
            g.mul(l, sg)?
        }
        G450::Acosh => {
            let x2 = g.mul(x, x)?;
            let one = g.c(x, 1.0)?;
            let s = g.sub(x2, one)?;
            let r = g.op(A::Fsqrt, &[s])?;
            let t = g.add(x, r)?;
            g.log(t)?
        }
        G450::Atanh => {
            let one = g.c(x, 1.0)?;
            let n = g.add(one, x)?;
            let d = g.sub(one, x)?;
            let q = g.div(n, d)?;
            let l = g.log(q)?;
            g.mulc(l, 0.5)?
        }
        G450::Pow => g.op(A::Fpow, &[x, a(1)?])?,
        G450::Exp => g.exp(x)?,
        G450::Log => g.log(x)?,
        G450::Exp2 => g.op(A::Fexp2, &[x])?,
        G450::Log2 => g.op(A::Flog2, &[x])?,
        G450::Sqrt => g.op(A::Fsqrt, &[x])?,
        G450::InverseSqrt => g.op(A::Frsq, &[x])?,
        G450::Modf => {
            let i = g.op(A::Ftrunc, &[x])?;
            let p = args[1].ptr()?;
            g.fe.store_ptr(&p, &FVal::V(i))?;
            g.sub(x, i)?
        }
        G450::Frexp => {
            let t = g.t(x);
            let e =
                g.fe.alu_checked(A::FrexpExp, Type::I32.vec(t.comps), &[x])?;
            let p = args[1].ptr()?;
            g.fe.store_ptr(&p, &FVal::V(e))?;
            g.op(A::FrexpSig, &[x])?
        }
        G450::FMin | G450::NMin => g.op(A::Fmin, &[x, a(1)?])?,
        G450::FMax | G450::NMax => g.op(A::Fmax, &[x, a(1)?])?,
        G450::UMin => g.op(A::Umin, &[x, a(1)?])?,
        G450::SMin => g.op(A::Imin, &[x, a(1)?])?,
        G450::UMax => g.op(A::Umax, &[x, a(1)?])?,
        G450::SMax => g.op(A::Imax, &[x, a(1)?])?,
        G450::FClamp | G450::NClamp | G450::UClamp | G450::SClamp => {
            let (mx, mn) = match op {
                G450::UClamp => (A::Umax, A::Umin),
                G450::SClamp => (A::Imax, A::Imin),
                _ => (A::Fmax, A::Fmin),
            };
            let m = g.op(mx, &[x, a(1)?])?;
            g.op(mn, &[m, a(2)?])?
        }
        G450::FMix => {
            let (y, t) = (a(1)?, a(2)?);
            let one = g.c(x, 1.0)?;
            let omt = g.sub(one, t)?;
            let p = g.mul(x, omt)?;
            let q = g.mul(y, t)?;
            g.add(p, q)?
        }
        G450::Step => {
            let e = x;
            let xx = a(1)?;
            let lt = g.op(A::Flt, &[xx, e])?;
            let z = g.c(xx, 0.0)?;
            let one = g.c(xx, 1.0)?;
            g.sel(lt, z, one)?
        }
        G450::SmoothStep => {
            let (e0, e1, xx) = (x, a(1)?, a(2)?);
            let n = g.sub(xx, e0)?;
            let d = g.sub(e1, e0)?;
            let q = g.div(n, d)?;
            let t = g.clamp(q, 0.0, 1.0)?;
            let t2 = g.mul(t, t)?;
            let three = g.c(t, 3.0)?;
            let tt = g.mulc(t, 2.0)?;
            let k = g.sub(three, tt)?;
            g.mul(t2, k)?
        }
        G450::Fma => g.op(A::Ffma, &[x, a(1)?, a(2)?])?,
        G450::Ldexp => {
            let e = a(1)?;
            g.fe.alu_checked(A::Ldexp, g.t(x), &[x, e])?
        }
        G450::PackSnorm4x8 => g.pack(x, 8, true)?,
        G450::PackUnorm4x8 => g.pack(x, 8, false)?,
        G450::PackSnorm2x16 => g.pack(x, 16, true)?,
        G450::PackUnorm2x16 => g.pack(x, 16, false)?,
        G450::UnpackSnorm4x8 => g.unpack(x, 8, 4, true)?,
        G450::UnpackUnorm4x8 => g.unpack(x, 8, 4, false)?,
        G450::UnpackSnorm2x16 => g.unpack(x, 16, 2, true)?,
        G450::UnpackUnorm2x16 => g.unpack(x, 16, 2, false)?,
        G450::PackHalf2x16 => {
            let h = g.fe.alu_checked(A::F2f, Type::float(16).vec(2), &[x])?;
            let bi = g.fe.alu_checked(A::Bitcast, Type::int(16).vec(2), &[h])?;
            let w = g.fe.alu_checked(A::U2u, Type::I32.vec(2), &[bi])?;
            let lo = g.fe.extract(w, 0)?;
            let hi = g.fe.extract(w, 1)?;
            let sh = g.fe.konst(Type::I32, 16)?;
            let hi = g.fe.alu_checked(A::Ishl, Type::I32, &[hi, sh])?;
            g.fe.alu_checked(A::Ior, Type::I32, &[lo, hi])?
        }
        G450::UnpackHalf2x16 => {
            let sh = g.fe.konst(Type::I32, 16)?;
            let hi = g.fe.alu_checked(A::Ushr, Type::I32, &[x, sh])?;
            let v = g.fe.emit(Type::I32.vec(2), Op::Vec(vec![x, hi]))?;
            let s = g.fe.alu_checked(A::U2u, Type::int(16).vec(2), &[v])?;
            let h = g.fe.alu_checked(A::Bitcast, Type::float(16).vec(2), &[s])?;
            g.fe.alu_checked(A::F2f, Type::F32.vec(2), &[h])?
        }
        G450::PackDouble2x32 => {
            let lo = g.fe.extract(x, 0)?;
            let hi = g.fe.extract(x, 1)?;
            let lo = g.fe.alu_checked(A::U2u, Type::int(64), &[lo])?;
            let hi = g.fe.alu_checked(A::U2u, Type::int(64), &[hi])?;
            let sh = g.fe.konst(Type::I32, 32)?;
            let hi = g.fe.alu_checked(A::Ishl, Type::int(64), &[hi, sh])?;
            let w = g.fe.alu_checked(A::Ior, Type::int(64), &[lo, hi])?;
            g.fe.alu_checked(A::Bitcast, Type::float(64), &[w])?
        }
        G450::UnpackDouble2x32 => {
            let w = g.fe.alu_checked(A::Bitcast, Type::int(64), &[x])?;
            let lo = g.fe.alu_checked(A::U2u, Type::I32, &[w])?;
            let sh = g.fe.konst(Type::I32, 32)?;
            let h = g.fe.alu_checked(A::Ushr, Type::int(64), &[w, sh])?;
            let hi = g.fe.alu_checked(A::U2u, Type::I32, &[h])?;
            g.fe.emit(Type::I32.vec(2), Op::Vec(vec![lo, hi]))?
        }
        G450::Length => g.length(x)?,
        G450::Distance => {
            let d = g.sub(x, a(1)?)?;
            g.length(d)?
        }
        G450::Cross => {
            let y = a(1)?;
            let t = g.t(x);
            if t.comps != 3 {
                return Err(FrontendError::Invalid("cross of non-vec3".into()));
            }
            let xs: Vec<Value> = (0..3).map(|k| g.fe.extract(x, k)).collect::<Res<_>>()?;
            let ys: Vec<Value> = (0..3).map(|k| g.fe.extract(y, k)).collect::<Res<_>>()?;
            let mut c = Vec::new();
            for (i, j) in [(1, 2), (2, 0), (0, 1)] {
                let p = g.mul(xs[i], ys[j])?;
                let q = g.mul(xs[j], ys[i])?;
                c.push(g.sub(p, q)?);
            }
            g.fe.emit(t, Op::Vec(c))?
        }
        G450::Normalize => {
            if g.t(x).comps == 1 {
                g.op(A::Fsign, &[x])?
            } else {
                let d = g.dot(x, x)?;
                let r = g.op(A::Frsq, &[d])?;
                let r = g.splat(r, x)?;
                g.mul(x, r)?
            }
        }
        G450::FaceForward => {
            let (nn, i, nref) = (x, a(1)?, a(2)?);
            let d = g.dot(nref, i)?;
            let z = g.c(d, 0.0)?;
            let lt = g.op(A::Flt, &[d, z])?;
            let neg = g.op(A::Fneg, &[nn])?;
            g.sel(lt, nn, neg)?
        }
        G450::Reflect => {
            let (i, nn) = (x, a(1)?);
            let d = g.dot(nn, i)?;
            let d2 = g.mulc(d, 2.0)?;
            let d2 = g.splat(d2, nn)?;
            let p = g.mul(d2, nn)?;
            g.sub(i, p)?
        }
        G450::Refract => {
            let (i, nn, eta) = (x, a(1)?, a(2)?);
            let d = g.dot(nn, i)?;
            let one = g.c(d, 1.0)?;
            let d2 = g.mul(d, d)?;
            let omd = g.sub(one, d2)?;
            let e2 = g.mul(eta, eta)?;
            let t = g.mul(e2, omd)?;
            let k = g.sub(one, t)?;
            let z = g.c(k, 0.0)?;
            let neg = g.op(A::Flt, &[k, z])?;
            let sk = g.op(A::Fsqrt, &[k])?;
            let ed = g.mul(eta, d)?;
            let s = g.add(ed, sk)?;
            let es = g.splat(eta, i)?;
            let a1 = g.mul(es, i)?;
            let ss = g.splat(s, nn)?;
            let a2 = g.mul(ss, nn)?;
            let r = g.sub(a1, a2)?;
            let zero = g.c(r, 0.0)?;
            let n1 = g.fe.splat(neg, g.t(r).comps)?;
            let _ = n1;
            g.fe.alu_checked(A::Bcsel, g.t(r), &[neg, zero, r])?
        }
        G450::FindILsb => g.op(A::FindLsb, &[x])?,
        G450::FindSMsb => g.op(A::IfindMsb, &[x])?,
        G450::FindUMsb => g.op(A::UfindMsb, &[x])?,
        other => return unsupported(format!("GLSL.std.450 {other:?} in a compute shader")),
    };
    let _ = g.ic(v, 0);
    Ok(FVal::V(v))
}

#[cfg(test)]
mod tests {
    use super::super::testing::check_ir;

    /// FClamp is a max and a min; Exp is exp2 of x * log2(e); Sqrt is one op.
    #[test]
    fn clamp_exp_and_sqrt_expand_to_alu_ops() {
        check_ir(
            "clamp_exp_and_sqrt_expand_to_alu_ops",
            "
            OpDecorate %gid BuiltIn GlobalInvocationId
            %ptr_in = OpTypePointer Input %v3u32
            %gid = OpVariable %ptr_in Input
            %ptr_f = OpTypePointer Function %f32
            %zero = OpConstant %f32 0
            %one = OpConstant %f32 1
            %main = OpFunction %void None %fn_void
            %entry = OpLabel
            %x = OpVariable %ptr_f Function
            %id = OpLoad %v3u32 %gid
            %i = OpCompositeExtract %u32 %id 0
            %f = OpConvertUToF %f32 %i
            %c = OpExtInst %f32 %glsl FClamp %f %zero %one
            %e = OpExtInst %f32 %glsl Exp %c
            %r = OpExtInst %f32 %glsl Sqrt %e
            OpStore %x %r
            OpReturn
            OpFunctionEnd
            ",
            "
            shader local_size 1 1 1 shared 0 local 0 push 0
            fn main {
                var $0:f32
                loop {
                    %0:f32 = const 0.0
                    store_var $0, %0
                    %1:i32x3 = sysval global_invocation_id
                    %2:i32 = extract %1, 0
                    %3:f32 = u2f %2
                    %4:f32 = const 0.0
                    %5:f32 = const 1.0
                    %6:f32 = fmax %3, %4
                    %7:f32 = fmin %6, %5
                    %8:f32 = const 0.0
                    %9:f32 = const 1.442695
                    %10:f32 = fmul %7, %9
                    %11:f32 = fexp2 %10
                    %12:f32 = const 0.0
                    %13:f32 = fsqrt %11
                    %14:f32 = const 0.0
                    store_var $0, %13
                    break
                }
            }
            ",
        );
    }
}
