//! Algebraic simplification: identities (x+0, x*1, x&x, ...), annihilators, double
//! negation, multiplication by a power of two as a shift, negated comparisons as the inverse
//! comparison (NaN-correct: !(a < b) is `fgeu`), `bcsel` on booleans and of 1 and 0
//! (`b2i`, `b2f`), `if` arms swapped so a condition's empty `then` disappears, and the
//! 32-bit words of a 64-bit integer built from two are those two (unpack of a pack).

use crate::builder::Builder;
use crate::hash::HashMap;
use crate::ir::*;

/// What a rule replaces an instruction's op with.
enum Rewrite {
    /// Another op on existing values.
    Op(Op),
    /// `x << n`, with the shift count `n` a new constant emitted before the instruction.
    ShlBy(Value, u64),
    /// `(x << shift) + add`: the shift and the constant `add` are emitted before it.
    AddAfterShl { x: Value, shift: Value, add: u64 },
}

struct Ctx {
    /// The definitions the rules look at (see [`Ctx::record`]).
    defs: HashMap<Value, Op>,
    values: Vec<Type>,
    changed: bool,
    float_controls: FloatControls,
}

impl Ctx {
    /// Keeps `d`'s definition if a rule can ask for it: a splat constant, an `iadd`, a
    /// negation, a shift or mask, a comparison with an inverse. Keeping every definition was a clone of each
    /// instruction's operation into the table.
    fn record(&mut self, d: Value, op: &Op) {
        let read = match op {
            Op::Const(c) => splat(c).is_some(),
            Op::Alu(a, _) => {
                matches!(
                    a,
                    AluOp::Iadd
                        | AluOp::Fneg
                        | AluOp::Inot
                        | AluOp::Ineg
                        | AluOp::Ishl
                        | AluOp::Ushr
                        | AluOp::Iand
                ) || a.inverse().is_some()
                    // 64-bit integers built from and read as 32-bit words.
                    || (self.values[d.0 as usize] == Type::int(64)
                        && matches!(a, AluOp::U2u | AluOp::Ior))
            }
            _ => false,
        };
        if read {
            self.defs.insert(d, op.clone());
        }
    }
    fn konst(&self, v: Value) -> Option<u64> {
        self.defs.get(&v).and_then(Op::const_splat)
    }
    fn fconst(&self, v: Value) -> Option<f64> {
        let t = self.values[v.0 as usize];
        let c = self.konst(v)?;
        match t.bits {
            32 => Some(f64::from(f32::from_bits(c as u32))),
            64 => Some(f64::from_bits(c)),
            _ => None,
        }
    }
    fn is_neg_zero(&self, v: Value) -> bool {
        let t = self.values[v.0 as usize];
        self.konst(v) == Some(1u64 << (t.bits - 1))
    }
    /// The words of a 64-bit integer built from two 32-bit ones ([`packed_words`]).
    fn packed(&self, x: Value) -> Option<(Value, Value)> {
        packed_words(x, |v| self.defs.get(&v), |v| self.values[v.0 as usize])
    }
    /// Float results of type `t` must flush denormals (DenormFlushToZero).
    fn ftz(&self, t: Type) -> bool {
        t.kind == Kind::Float && self.float_controls.mode(t.bits).denorm == Denorm::FlushToZero
    }
    /// Returns the rewrite of `op` (of result type `t`), if a rule applies.
    fn simplify(&self, t: Type, op: &Op) -> Option<Rewrite> {
        use AluOp::*;
        let Op::Alu(a, s) = op else { return None };
        let mov = |v: Value| Some(Rewrite::Op(Op::Alu(Mov, vec![v])));
        let zero = |t: Type| Some(Rewrite::Op(Op::Const(vec![0; usize::from(t.comps)])));
        let k = |i: usize| s.get(i).and_then(|v| self.konst(*v));
        let ones = t.mask();
        match a {
            Iadd if k(1) == Some(0) => mov(s[0]),
            Iadd if k(0) == Some(0) => mov(s[1]),
            Isub if k(1) == Some(0) => mov(s[0]),
            Isub | Ixor if s[0] == s[1] && !t.is_bool() => zero(t),
            Ixor if s[0] == s[1] => zero(t),
            Imul if k(1) == Some(1) => mov(s[0]),
            Imul if k(0) == Some(1) => mov(s[1]),
            Imul if k(0) == Some(0) || k(1) == Some(0) => zero(t),
            Imul if k(1).is_some_and(|c| c.is_power_of_two()) => {
                let n = u64::from(k(1).unwrap().trailing_zeros());
                Some(Rewrite::ShlBy(s[0], n))
            }
            Udiv | Idiv if k(1) == Some(1) => mov(s[0]),
            // An integer compared with itself.
            Ieq | Ige | Uge if s[0] == s[1] => {
                Some(Rewrite::Op(Op::Const(vec![ones; usize::from(t.comps)])))
            }
            Ine | Ilt | Ult if s[0] == s[1] => zero(t),
            Iand | Ior if s[0] == s[1] => mov(s[0]),
            Iand if k(1) == Some(0) || k(0) == Some(0) => zero(t),
            Iand if k(1) == Some(ones) => mov(s[0]),
            Iand if k(0) == Some(ones) => mov(s[1]),
            Ior | Ixor if k(1) == Some(0) => mov(s[0]),
            Ior | Ixor if k(0) == Some(0) => mov(s[1]),
            Ior if k(1) == Some(ones) || k(0) == Some(ones) => {
                Some(Rewrite::Op(Op::Const(vec![ones; usize::from(t.comps)])))
            }
            Ishl | Ishr | Ushr if k(1) == Some(0) => mov(s[0]),
            // SPIR-V's bitfield instructions: a Count of 0 gives Base (insert) or 0
            // (extract); Offset 0 with Count the whole width gives Insert, or Base.
            BitfieldInsert if k(3) == Some(0) => mov(s[0]),
            BitfieldInsert if k(2) == Some(0) && k(3) == Some(u64::from(t.bits)) => mov(s[1]),
            UbitfieldExtract | IbitfieldExtract if k(2) == Some(0) => zero(t),
            UbitfieldExtract | IbitfieldExtract
                if k(1) == Some(0) && k(2) == Some(u64::from(t.bits)) =>
            {
                mov(s[0])
            }
            // The words of a 64-bit integer built from two (`ir::packed_words`): its low
            // word is `lo`, and shifted right by 32 it is `hi` widened.
            U2u if t == Type::I32 => match self.defs.get(&s[0]) {
                Some(Op::Alu(U2u, w)) if self.values[w[0].0 as usize] == t => mov(w[0]),
                _ => self.packed(s[0]).and_then(|(lo, _)| mov(lo)),
            },
            Ushr if t == Type::int(64) && k(1) == Some(32) => self
                .packed(s[0])
                .map(|(_, hi)| Rewrite::Op(Op::Alu(U2u, vec![hi]))),
            // (x + c1) << c2 == (x << c2) + (c1 << c2) modulo 2^n: addresses `(i + k) * 4`
            // then share one shift (CSE) and differ by an immediate.
            Ishl if t.kind != Kind::Float && t.bits == 32 && k(1).is_some_and(|c| c < 32) => {
                match self.defs.get(&s[0]) {
                    Some(Op::Alu(Iadd, inner)) => {
                        let c1 = inner.get(1).and_then(|v| self.konst(*v))?;
                        Some(Rewrite::AddAfterShl {
                            x: inner[0],
                            shift: s[1],
                            add: (c1 << k(1).unwrap()) & ones,
                        })
                    }
                    _ => None,
                }
            }
            Ieq if t.is_bool()
                && self.values[s[0].0 as usize].is_bool()
                && k(1).is_some_and(|c| c != 0) =>
            {
                mov(s[0])
            }
            // Exact, but not a flush: under DenormFlushToZero a denormal x must become 0.
            Fmul | Fadd | Fsub if self.ftz(t) => None,
            Fmul if self.fconst(s[1]) == Some(1.0) => mov(s[0]),
            Fmul if self.fconst(s[0]) == Some(1.0) => mov(s[1]),
            Fadd if self.is_neg_zero(s[1]) => mov(s[0]),
            Fadd if self.is_neg_zero(s[0]) => mov(s[1]),
            Fsub if k(1) == Some(0) => mov(s[0]),
            Fneg | Inot | Ineg => match self.defs.get(&s[0]) {
                Some(Op::Alu(b, inner)) if b == a => mov(inner[0]),
                Some(Op::Alu(cmp, inner)) if *a == Inot && cmp.inverse().is_some() => {
                    Some(Rewrite::Op(Op::Alu(cmp.inverse().unwrap(), inner.clone())))
                }
                _ => None,
            },
            Bcsel if s[1] == s[2] => mov(s[1]),
            // Picking 1 or 0 (1.0 or 0.0) by a boolean is `b2i` (`b2f`): one operation on the
            // boolean's bits (a negation, an `and`; booleans are all ones or zero, docs/gen9.md)
            // where a select needs the flag, a register for the 1 and the `sel`. brw's NIR has
            // the same rule (`bcsel(a, 1, 0)` -> `b2i(a)`).
            Bcsel if t.kind == Kind::Int && t.bits == 32 && k(1) == Some(1) && k(2) == Some(0) => {
                Some(Rewrite::Op(Op::Alu(B2i, vec![s[0]])))
            }
            Bcsel
                if t.kind == Kind::Float
                    && t.bits == 32
                    && self.fconst(s[1]) == Some(1.0)
                    && k(2) == Some(0) =>
            {
                Some(Rewrite::Op(Op::Alu(B2f, vec![s[0]])))
            }
            Bcsel
                if t.is_bool()
                    && t == self.values[s[0].0 as usize]
                    && k(1).is_some_and(|c| c != 0)
                    && k(2) == Some(0) =>
            {
                mov(s[0])
            }
            Bcsel
                if t.is_bool()
                    && t == self.values[s[0].0 as usize]
                    && k(1) == Some(0)
                    && k(2).is_some_and(|c| c != 0) =>
            {
                Some(Rewrite::Op(Op::Alu(Inot, vec![s[0]])))
            }
            // ((x >> a) << (a + b)) + ((x & (2^a - 1)) << b) == x << b modulo 2^32: the high
            // and the low part of x, each shifted by b, share no bit. An index j split into
            // `[j / 4][j % 4]` of a `uvec4` array is the byte offset `j * 4` again, which the
            // vectoriser can see is next to `(j + 1) * 4`.
            Iadd if t == Type::I32 => self
                .split_shift(s[0], s[1])
                .or_else(|| self.split_shift(s[1], s[0])),
            _ => None,
        }
    }

    /// `x << b` when `hi` is `(x >> a) << (a + b)` and `lo` is `(x & (2^a - 1)) << b`.
    fn split_shift(&self, hi: Value, lo: Value) -> Option<Rewrite> {
        use AluOp::*;
        let (Op::Alu(Ishl, h), Op::Alu(Ishl, l)) = (self.defs.get(&hi)?, self.defs.get(&lo)?)
        else {
            return None;
        };
        let (Op::Alu(Ushr, u), Op::Alu(Iand, m)) = (self.defs.get(&h[0])?, self.defs.get(&l[0])?)
        else {
            return None;
        };
        let (c, b, a) = (self.konst(h[1])?, self.konst(l[1])?, self.konst(u[1])?);
        let x = u[0];
        let mask = m
            .iter()
            .position(|v| *v == x)
            .and_then(|i| self.konst(m[1 - i]))?;
        (c < 32 && c == a + b && mask == (1 << a) - 1)
            .then(|| Rewrite::Op(Op::Alu(Ishl, vec![x, l[1]])))
    }

    /// An `if` whose arms only yield (after constants they define) as a select of each
    /// result (as brw's NIR peephole_select does for empty arms), where a rule above
    /// simplifies every such select (`bcsel(c, 1, 0)` is `b2i(c)`, ...): the arms' constants
    /// and the selects, not yet simplified. None for other `if`s: selection makes a plain
    /// select a `sel` on the flag the branch sets, where a `bcsel` of a uniform condition
    /// would need the flag set again.
    fn selects_of(&mut self, i: &If) -> Option<Block> {
        let ((kt, x), (ke, y)) = (yields(&i.then_)?, yields(&i.else_)?);
        if i.results.is_empty() {
            return None;
        }
        for n in kt.iter().chain(ke) {
            if let Node::Instr(c) = n {
                self.record(c.dst.expect("constant"), &c.op);
            }
        }
        let sels = i
            .results
            .iter()
            .zip(x.iter().zip(y))
            .map(|(r, (x, y))| {
                let op = Op::Alu(AluOp::Bcsel, vec![i.cond, *x, *y]);
                let t = self.values[r.0 as usize];
                self.simplify(t, &op)
                    .map(|_| Node::Instr(Instr::new(Some(*r), op)))
            })
            .collect::<Option<Vec<Node>>>()?;
        Some(kt.iter().chain(ke).cloned().chain(sels).collect())
    }

    /// The results of `i` that both arms yield as constants a rule turns into an operation
    /// on the condition alone (`bcsel(c, true, false)` is `c`, `bcsel(c, 1, 0)` is
    /// `b2i(c)`, ...), whatever the arms do besides: they leave the `if` and become those
    /// operations, returned to follow it. Each such result cost a move per arm, and a
    /// result that is the condition lets later passes see through it (a `switch` case's
    /// flag that says which arm ran).
    fn const_results(&mut self, i: &mut If) -> Vec<Node> {
        let (Some(Node::Yield(x)), Some(Node::Yield(y))) = (i.then_.last(), i.else_.last()) else {
            return Vec::new();
        };
        let mut after = Vec::new();
        let mut keep = Vec::new();
        for (k, r) in i.results.iter().enumerate() {
            let (a, b) = (x[k], y[k]);
            let op = Op::Alu(AluOp::Bcsel, vec![i.cond, a, b]);
            let t = self.values[r.0 as usize];
            let on_cond = |op: &Op| matches!(op, Op::Alu(_, s) if s[..] == [i.cond]);
            match self.simplify(t, &op) {
                Some(Rewrite::Op(new))
                    if on_cond(&new) && self.konst(a).is_some() && self.konst(b).is_some() =>
                {
                    self.record(*r, &new);
                    after.push(Node::Instr(Instr::new(Some(*r), new)));
                }
                _ => keep.push(k),
            }
        }
        if after.is_empty() {
            return after;
        }
        self.changed = true;
        i.results = keep.iter().map(|k| i.results[*k]).collect();
        for arm in [&mut i.then_, &mut i.else_] {
            if let Some(Node::Yield(v)) = arm.last_mut() {
                *v = keep.iter().map(|k| v[*k]).collect();
            }
        }
        after
    }

    fn block(&mut self, b: &mut Block) {
        let old = std::mem::take(b);
        for n in old {
            match n {
                Node::Instr(mut i) => {
                    if let Some(d) = i.dst {
                        let t = self.values[d.0 as usize];
                        if let Some(rw) = self.simplify(t, &i.op) {
                            self.changed = true;
                            i.op = match rw {
                                Rewrite::Op(op) => op,
                                Rewrite::ShlBy(x, n) => {
                                    let st = Type::I32.vec(t.comps);
                                    let sh = Builder::new(&mut self.values, b).konst(st, n);
                                    self.defs
                                        .insert(sh, Op::Const(vec![n; usize::from(t.comps)]));
                                    Op::Alu(AluOp::Ishl, vec![x, sh])
                                }
                                Rewrite::AddAfterShl { x, shift, add } => {
                                    let mut bld = Builder::new(&mut self.values, b);
                                    let shl = Op::Alu(AluOp::Ishl, vec![x, shift]);
                                    let xs = bld.emit(t, shl.clone());
                                    let c = bld.konst(t, add);
                                    self.defs.insert(xs, shl);
                                    self.defs.insert(
                                        c,
                                        Op::Const(vec![add & t.mask(); usize::from(t.comps)]),
                                    );
                                    Op::Alu(AluOp::Iadd, vec![xs, c])
                                }
                            };
                        }
                        self.record(d, &i.op);
                    }
                    b.push(Node::Instr(i));
                }
                Node::If(mut i) => {
                    self.block(&mut i.then_);
                    self.block(&mut i.else_);
                    if let Some(mut sel) = self.selects_of(&i) {
                        self.block(&mut sel);
                        b.extend(sel);
                        self.changed = true;
                        continue;
                    }
                    let after = self.const_results(&mut i);
                    if i.results.is_empty() {
                        // An arm's `yield` of nothing is its falling through (one-trip loops
                        // flattened into `if`s end their arms so): without it an empty arm
                        // is empty, and its `else` is not emitted.
                        for arm in [&mut i.then_, &mut i.else_] {
                            if matches!(arm.last(), Some(Node::Yield(v)) if v.is_empty()) {
                                arm.pop();
                                self.changed = true;
                            }
                        }
                    }
                    if i.then_.is_empty() && !i.else_.is_empty() && i.results.is_empty() {
                        let ct = self.values[i.cond.0 as usize];
                        let op = match self.defs.get(&i.cond) {
                            Some(Op::Alu(cmp, s)) if cmp.inverse().is_some() => {
                                Op::Alu(cmp.inverse().unwrap(), s.clone())
                            }
                            _ => Op::Alu(AluOp::Inot, vec![i.cond]),
                        };
                        let nc = Builder::new(&mut self.values, b).emit(ct, op.clone());
                        self.defs.insert(nc, op);
                        i.cond = nc;
                        std::mem::swap(&mut i.then_, &mut i.else_);
                        self.changed = true;
                    }
                    b.push(Node::If(i));
                    b.extend(after);
                }
                Node::Loop(mut l) => {
                    self.block(&mut l.body);
                    b.push(Node::Loop(l));
                }
                other => b.push(other),
            }
        }
    }
}

/// An arm that defines only constants and yields: the constants and the yielded values.
fn yields(arm: &Block) -> Option<(&[Node], &[Value])> {
    let (Node::Yield(y), consts) = arm.split_last()? else {
        return None;
    };
    consts
        .iter()
        .all(|n| matches!(n, Node::Instr(i) if matches!(i.op, Op::Const(_)) && i.dst.is_some()))
        .then_some((consts, y.as_slice()))
}

/// Applies algebraic identities. Returns true if anything changed.
pub fn opt_algebraic(f: &mut Function) -> bool {
    let mut c = Ctx {
        defs: HashMap::default(),
        values: std::mem::take(&mut f.values),
        changed: false,
        float_controls: f.float_controls,
    };
    // Definitions are visited before uses in program order, which is all the rules need.
    let mut body = std::mem::take(&mut f.body);
    c.block(&mut body);
    f.body = body;
    f.values = c.values;
    c.changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    #[test]
    fn multiply_by_one_is_kept_when_denormals_must_flush() {
        // x * 1.0 is x, but under DenormFlushToZero a denormal x must come out as 0.
        let src = "
            float_controls f32:denorm_flush_to_zero
            %9:i32 = const 0
            %0:f32 = const 1.0
            %1:f32 = load ssbo[0] %9 align 4
            %2:f32 = fmul %1, %0
            store ssbo[0] %9, %2 align 4
        ";
        let mut f = crate::parse::parse_function(src).unwrap();
        assert!(!opt_algebraic(&mut f));
        let mut f = crate::parse::parse_function(
            &src.replace("f32:denorm_flush_to_zero", "f32:denorm_preserve"),
        )
        .unwrap();
        assert!(opt_algebraic(&mut f));
    }

    #[test]
    fn constant_if_results_become_operations_on_the_condition() {
        // Arms that do more than yield: the results of true/false and 1/0 leave the `if`
        // (its `else` arm is then empty); 0/1 has no rule and stays a result.
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 1
            %2:i32 = const 0
            %3:b1 = ult %0, %1
            %4:b1, %5:i32, %6:i32 = if %3 {
                store ssbo[0] %0, %0 align 4
                %7:b1 = const true
                yield %7, %1, %2
            } else {
                %8:b1 = const false
                yield %8, %2, %1
            }
            %9:i32 = b2i %4
            store ssbo[1] %9, %5 align 4
            store ssbo[1] %0, %6 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 1
            %2:i32 = const 0
            %3:b1 = ult %0, %1
            %6:i32 = if %3 {
                store ssbo[0] %0, %0 align 4
                %7:b1 = const true
                yield %2
            } else {
                %8:b1 = const false
                yield %1
            }
            %4:b1 = mov %3
            %5:i32 = b2i %3
            %9:i32 = b2i %4
            store ssbo[1] %9, %5 align 4
            store ssbo[1] %0, %6 align 4",
        );
    }

    #[test]
    fn select_of_one_and_zero_is_a_boolean_conversion() {
        check_pass(
            opt_algebraic,
            "%9:i32 = const 0
            %0:f32 = load ssbo[0] %9 align 4
            %1:b1 = flt %0, %0
            %2:i32 = const 1
            %3:i32 = bcsel %1, %2, %9
            %4:f32 = const 1.0
            %5:f32 = const 0.0
            %6:f32 = bcsel %1, %4, %5
            %7:i32 = bcsel %1, %9, %2
            store ssbo[0] %9, %3 align 4
            store ssbo[0] %2, %6 align 4
            store ssbo[0] %2, %7 align 4",
            "%9:i32 = const 0
            %0:f32 = load ssbo[0] %9 align 4
            %1:b1 = flt %0, %0
            %2:i32 = const 1
            %3:i32 = b2i %1
            %4:f32 = const 1.0
            %5:f32 = const 0.0
            %6:f32 = b2f %1
            %7:i32 = bcsel %1, %9, %2
            store ssbo[0] %9, %3 align 4
            store ssbo[0] %2, %6 align 4
            store ssbo[0] %2, %7 align 4",
        );
    }

    #[test]
    fn identities_and_power_of_two_multiply() {
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:i32 = iadd %0, %1
            %3:i32 = const 8
            %4:i32 = imul %2, %3
            %5:i32 = ixor %4, %4
            store ssbo[0] %4, %5 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:i32 = mov %0
            %3:i32 = const 8
            %6:i32 = const 3
            %4:i32 = ishl %2, %6
            %5:i32 = const 0
            store ssbo[0] %4, %5 align 4",
        );
    }

    /// Bitfield instructions that keep a whole operand or give zero (SPIR-V: Count 0; Offset
    /// 0 and Count 32), and one that does neither (kept).
    #[test]
    fn whole_and_empty_bitfields_are_their_operand_or_zero() {
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = load ssbo[0] %0 align 4
            %2:i32 = const 0
            %3:i32 = const 32
            %4:i32 = bitfield_insert %0, %1, %2, %3
            %5:i32 = bitfield_insert %0, %1, %3, %2
            %6:i32 = ubitfield_extract %1, %2, %3
            %7:i32 = ibitfield_extract %1, %0, %2
            %8:i32 = ubitfield_extract %1, %0, %3
            %9:i32x4 = vec %4, %5, %6, %7
            store ssbo[0] %0, %9 align 4
            store ssbo[1] %0, %8 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = load ssbo[0] %0 align 4
            %2:i32 = const 0
            %3:i32 = const 32
            %4:i32 = mov %1
            %5:i32 = mov %0
            %6:i32 = mov %1
            %7:i32 = const 0
            %8:i32 = ubitfield_extract %1, %0, %3
            %9:i32x4 = vec %4, %5, %6, %7
            store ssbo[0] %0, %9 align 4
            store ssbo[1] %0, %8 align 4",
        );
    }

    /// unpack32(pack64(a, b)): the words are a and b again, without 64-bit operations
    /// (the pack itself stays for its other reader).
    #[test]
    fn words_of_a_packed_integer_are_its_words() {
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = load ssbo[0] %0 align 4
            %2:i64 = u2u %0
            %3:i64 = u2u %1
            %4:i32 = const 32
            %5:i64 = ishl %3, %4
            %6:i64 = ior %2, %5
            %7:i32 = u2u %6
            %8:i64 = ushr %6, %4
            %9:i32 = u2u %8
            %10:i32 = iadd %7, %9
            store ssbo[0] %0, %10 align 4
            store ssbo[1] %0, %6 align 8",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = load ssbo[0] %0 align 4
            %2:i64 = u2u %0
            %3:i64 = u2u %1
            %4:i32 = const 32
            %5:i64 = ishl %3, %4
            %6:i64 = ior %2, %5
            %7:i32 = mov %0
            %8:i64 = u2u %1
            %9:i32 = mov %1
            %10:i32 = iadd %7, %9
            store ssbo[0] %0, %10 align 4
            store ssbo[1] %0, %6 align 8",
        );
    }

    #[test]
    fn integer_compared_with_itself_is_a_constant() {
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %1:b32 = ieq %0, %0
            %2:b32 = ult %0, %0
            %3:i32 = b2i %1
            %4:i32 = b2i %2
            store ssbo[0] %3, %4 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:b32 = const true
            %2:b32 = const false
            %3:i32 = b2i %1
            %4:i32 = b2i %2
            store ssbo[0] %3, %4 align 4",
        );
    }

    /// inline_uniform's `c[j / 4u][j % 4u]` of a `uvec4 c[256]`: the byte offset
    /// `((j >> 2) << 4) + ((j & 3) << 2)` is `j << 2`; a mask that is not the shifted-out
    /// bits (`& 7`) or shifts that do not add up stay.
    #[test]
    fn split_index_of_a_vector_array_is_one_shift() {
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 2
            %2:i32 = const 3
            %3:i32 = const 4
            %4:i32 = ushr %0, %1
            %5:i32 = iand %0, %2
            %6:i32 = ishl %4, %3
            %7:i32 = ishl %5, %1
            %8:i32 = iadd %6, %7
            %9:i32 = iadd %7, %6
            store ssbo[0] %8, %9 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 2
            %2:i32 = const 3
            %3:i32 = const 4
            %4:i32 = ushr %0, %1
            %5:i32 = iand %0, %2
            %6:i32 = ishl %4, %3
            %7:i32 = ishl %5, %1
            %8:i32 = ishl %0, %1
            %9:i32 = ishl %0, %1
            store ssbo[0] %8, %9 align 4",
        );
        let kept = "%0:i32 = sysval local_invocation_index
            %1:i32 = const 2
            %2:i32 = const 7
            %3:i32 = const 4
            %4:i32 = ushr %0, %1
            %5:i32 = iand %0, %2
            %6:i32 = ishl %4, %3
            %7:i32 = ishl %5, %1
            %8:i32 = iadd %6, %7
            %10:i32 = ishl %4, %1
            %11:i32 = iadd %10, %7
            store ssbo[0] %8, %11 align 4";
        check_pass(opt_algebraic, kept, kept);
    }

    #[test]
    fn shift_of_an_offset_address_shifts_first_and_adds_an_immediate() {
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 3
            %2:i32 = iadd %0, %1
            %3:i32 = const 2
            %4:i32 = ishl %2, %3
            store ssbo[0] %4, %0 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 3
            %2:i32 = iadd %0, %1
            %3:i32 = const 2
            %5:i32 = ishl %0, %3
            %6:i32 = const 12
            %4:i32 = iadd %5, %6
            store ssbo[0] %4, %0 align 4",
        );
    }

    #[test]
    fn shift_of_a_sum_of_two_values_is_kept() {
        let text = "%0:i32 = sysval local_invocation_index
            %1:i32 = iadd %0, %0
            %3:i32 = const 2
            %4:i32 = ishl %1, %3
            store ssbo[0] %4, %0 align 4";
        check_pass(opt_algebraic, text, text);
    }

    #[test]
    fn negated_float_compare_is_unordered_inverse() {
        check_pass(
            opt_algebraic,
            "%9:i32 = const 0
            %0:f32 = load ssbo[0] %9 align 4
            %1:b1 = flt %0, %0
            %2:b1 = inot %1
            %3:i32 = b2i %2
            store ssbo[0] %9, %3 align 4",
            "%9:i32 = const 0
            %0:f32 = load ssbo[0] %9 align 4
            %1:b1 = flt %0, %0
            %2:b1 = fgeu %0, %0
            %3:i32 = b2i %2
            store ssbo[0] %9, %3 align 4",
        );
    }

    #[test]
    fn empty_then_arm_is_swapped() {
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %2:i32 = load ssbo[0] %0 align 4
            %1:b1 = ult %0, %2
            loop {
                if %1 {
                } else {
                    break
                }
            }",
            "%0:i32 = sysval local_invocation_index
            %2:i32 = load ssbo[0] %0 align 4
            %1:b1 = ult %0, %2
            loop {
                %3:b1 = uge %0, %2
                if %3 {
                    break
                }
            }",
        );
    }

    /// An `if` that only yields 1 or 0 is `b2i` of its condition; one that yields other
    /// values stays an `if` (selection makes it a `sel`).
    #[test]
    fn if_of_yields_is_a_select() {
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %2:i32 = load ssbo[0] %0 align 4
            %1:b1 = ult %0, %2
            %3:i32 = const 1
            %4:i32 = const 0
            %5:i32 = if %1 {
                yield %3
            } else {
                yield %4
            }
            store ssbo[0] %0, %5 align 4",
            "%0:i32 = sysval local_invocation_index
            %2:i32 = load ssbo[0] %0 align 4
            %1:b1 = ult %0, %2
            %3:i32 = const 1
            %4:i32 = const 0
            %5:i32 = b2i %1
            store ssbo[0] %0, %5 align 4",
        );
        // The 1 defined in its arm (as the front end leaves it).
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %2:i32 = load ssbo[0] %0 align 4
            %1:b1 = ult %0, %2
            %4:i32 = const 0
            %5:i32 = if %1 {
                %3:i32 = const 1
                yield %3
            } else {
                yield %4
            }
            store ssbo[0] %0, %5 align 4",
            "%0:i32 = sysval local_invocation_index
            %2:i32 = load ssbo[0] %0 align 4
            %1:b1 = ult %0, %2
            %4:i32 = const 0
            %3:i32 = const 1
            %5:i32 = b2i %1
            store ssbo[0] %0, %5 align 4",
        );
        let kept = "%0:i32 = sysval local_invocation_index
            %2:i32 = load ssbo[0] %0 align 4
            %1:b1 = ult %0, %2
            %3:i32 = const 1
            %5:i32 = if %1 {
                yield %3
            } else {
                yield %2
            }
            store ssbo[0] %0, %5 align 4";
        check_pass(opt_algebraic, kept, kept);
    }

    /// A flattened one-trip loop's arms end in `yield` of nothing: dropped, so the empty
    /// `then` is swapped away as above.
    #[test]
    fn yield_of_nothing_is_falling_through() {
        check_pass(
            opt_algebraic,
            "%0:i32 = sysval local_invocation_index
            %2:i32 = load ssbo[0] %0 align 4
            %1:b1 = ult %0, %2
            if %1 {
                yield
            } else {
                store ssbo[0] %0, %2 align 4
                yield
            }",
            "%0:i32 = sysval local_invocation_index
            %2:i32 = load ssbo[0] %0 align 4
            %1:b1 = ult %0, %2
            %3:b1 = uge %0, %2
            if %3 {
                store ssbo[0] %0, %2 align 4
            }",
        );
    }

    #[test]
    fn float_add_of_positive_zero_is_kept() {
        // x + 0.0 is not x for x = -0.0.
        let text = "%9:i32 = const 0
            %0:f32 = load ssbo[0] %9 align 4
            %1:f32 = const 0.0
            %2:f32 = fadd %0, %1
            store ssbo[0] %9, %2 align 4";
        check_pass(opt_algebraic, text, text);
    }
}
