//! The rewrite itself: each scalar ALU op with an f64 operand or result lowered to the
//! routines of [`SoftBuilder`], and the walk over the function's blocks that carries f64
//! values as pairs of words through loads, stores, composites and control flow.

use super::{is_f64, LowerResult, SoftBuilder, Words64};
use crate::builder::Builder;
use crate::hash::HashMap;
use crate::ir::*;

/// An operand of a lowered scalar op: f64 words or an untouched value.
#[derive(Clone, Copy)]
pub(super) enum Arg {
    F(Words64),
    O(Value),
}

impl Arg {
    pub(super) fn f(self) -> LowerResult<Words64> {
        match self {
            Arg::F(p) => Ok(p),
            Arg::O(v) => Err(format!("expected an f64 operand, got {v}")),
        }
    }
    pub(super) fn o(self) -> LowerResult<Value> {
        match self {
            Arg::O(v) => Ok(v),
            Arg::F(_) => Err("expected a non-f64 operand, got an f64".into()),
        }
    }
}

/// The result of one lowered scalar op: the words of an f64, or a value of another type.
pub(super) enum Lowered {
    F(Words64),
    O(Value),
}

/// Lowers one scalar ALU op with at least one f64 operand or result.
pub(super) fn lower_alu(
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
                b.alu(F2f, Type::F32, &[x])
            };
            let bits = b.alu(Bitcast, Type::I32, &[x]);
            Lowered::F(b.f32_to_f64(bits))
        }
        F2f if is_f64(st[0]) && !is_f64(dt) => {
            let v = if dt.bits == 16 {
                b.f64_to_small(f(0)?, 10, 5)
            } else {
                b.f64_to_small(f(0)?, 23, 8)
            };
            if dt.bits == 16 {
                let h = b.alu(U2u, Type::int(16), &[v]);
                Lowered::O(b.alu(Bitcast, dt, &[h]))
            } else {
                Lowered::O(b.alu(Bitcast, dt, &[v]))
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
                xs.push(b.alu(Bitcast, Type::F32, &[v]));
            }
            let r = b.alu(op, Type::F32, &xs);
            let bits = b.alu(Bitcast, Type::I32, &[r]);
            Lowered::F(b.f32_to_f64(bits))
        }
        _ => return Err(format!("no lowering for {op:?} {dt} <- {st:?}")),
    };
    Ok(r)
}

/// Sign- or zero-extends a narrow integer to 32 bits.
pub(super) fn widen_int(b: &mut SoftBuilder, x: Value, t: Type, signed: bool) -> Value {
    if t.bits == 32 {
        x
    } else {
        let op = if signed { AluOp::I2i } else { AluOp::U2u };
        b.alu(op, Type::I32, &[x])
    }
}

pub(super) fn narrow_int(b: &mut SoftBuilder, x: Value, t: Type) -> Value {
    if t.bits == 32 {
        x
    } else {
        b.alu(AluOp::U2u, t, &[x])
    }
}

/// The words of a 64-bit integer (the target has 64-bit integer ops).
pub(super) fn int64_words(b: &mut SoftBuilder, x: Value) -> Words64 {
    let t = Type::int(64);
    let x = if b.b.ty(x) == t {
        x
    } else {
        b.alu(AluOp::Bitcast, t, &[x])
    };
    let lo = b.alu(AluOp::U2u, Type::I32, &[x]);
    let k = b.c(32);
    let h = b.alu(AluOp::Ushr, t, &[x, k]);
    let hi = b.alu(AluOp::U2u, Type::I32, &[h]);
    Words64 { hi, lo }
}

pub(super) fn int64_from_words(b: &mut SoftBuilder, p: Words64) -> Value {
    let t = Type::int(64);
    let lo = b.alu(AluOp::U2u, t, &[p.lo]);
    let hi = b.alu(AluOp::U2u, t, &[p.hi]);
    let k = b.c(32);
    let hi = b.alu(AluOp::Ishl, t, &[hi, k]);
    b.alu(AluOp::Ior, t, &[lo, hi])
}

pub(super) struct Lower {
    pub(super) vals: Vec<Type>,
    /// f64 value -> its words (low, high per component).
    pub(super) map: HashMap<Value, Vec<Value>>,
    /// Definitions of scalar 64-bit integers and 32-bit constants seen so far (to find the
    /// two words packDouble2x32 combines).
    pub(super) defs: HashMap<Value, Op>,
    /// 64-bit integers whose words are known (`bitcast` of an f64, unpackDouble2x32).
    pub(super) int_words: HashMap<Value, Words64>,
}

impl Lower {
    pub(super) fn ty(&self, v: Value) -> Type {
        self.vals[v.0 as usize]
    }
    pub(super) fn words(&self, v: Value) -> LowerResult<Vec<Value>> {
        self.map
            .get(&v)
            .cloned()
            .ok_or_else(|| format!("f64 value {v} used before its definition"))
    }
    pub(super) fn new_words(&mut self, v: Value) -> Vec<Value> {
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
    pub(super) fn expand_defs(&mut self, vs: &[Value]) -> Vec<Value> {
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
    pub(super) fn expand_uses(&self, vs: &[Value]) -> LowerResult<Vec<Value>> {
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

    pub(super) fn const_of(&self, v: Value) -> Option<u64> {
        match self.defs.get(&v) {
            Some(Op::Const(c)) if c.len() == 1 => Some(c[0]),
            _ => None,
        }
    }
    pub(super) fn emit_const(&mut self, out: &mut Block, x: u32) -> Value {
        Builder::new(&mut self.vals, out).konst(Type::I32, u64::from(x))
    }
    /// The two 32-bit words of a 64-bit integer built as packDouble2x32 builds it:
    /// `ior(u2u lo, ishl(u2u hi, 32))` (either operand order).
    pub(super) fn packed_words(&self, x: Value) -> Option<Words64> {
        crate::ir::packed_words(x, |v| self.defs.get(&v), |v| self.ty(v))
            .map(|(lo, hi)| Words64 { hi, lo })
    }

    pub(super) fn block(&mut self, b: Block) -> LowerResult<Block> {
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

    pub(super) fn instr(&mut self, i: Instr, out: &mut Block) -> LowerResult<()> {
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
                    b.b.push(Node::Instr(Instr::new(i.dst, op)));
                    None
                }
            }
            Op::LoadVar(_) | Op::StoreVar(..) => {
                return Err("f64 variable access (soft fp64 runs after vars_to_ssa)".into());
            }
            Op::Atomic { .. } => return Err("f64 atomic operation".into()),
            Op::Image(..) => return Err("f64 image access".into()),
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
pub(super) fn chunk_offset(
    b: &mut SoftBuilder,
    offset: Value,
    align: u32,
    k: usize,
) -> (Value, u32) {
    if k == 0 {
        return (offset, align);
    }
    let add = b.c(4 * k as u32);
    (b.add(offset, add), align.min(16))
}
