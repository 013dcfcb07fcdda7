//! Scalar optimizations and lowering: DCE, constant folding, copy propagation, CSE,
//! scalarization, integer division lowering.

use crate::builder::expand_instrs;
use crate::eval::eval_alu_vec;
use crate::hash::HashMap;
use crate::ir::*;

/// Applies a substitution map (following chains) to every use.
pub(crate) fn apply_subst(f: &mut Function, subst: &HashMap<Value, Value>) {
    if subst.is_empty() {
        return;
    }
    let m = |v: Value| {
        let mut v = v;
        let mut n = 0;
        while let Some(x) = subst.get(&v) {
            v = *x;
            n += 1;
            if n > 1000 {
                break;
            }
        }
        v
    };
    f.rewrite_uses(&m);
}

/// Calls `edit` on every break (`is_break`) or continue of the loop whose body is `b`
/// (not those of nested loops).
pub(crate) fn edit_jumps(b: &mut Block, is_break: bool, edit: &mut dyn FnMut(&mut Vec<Value>)) {
    for n in b {
        match n {
            Node::Break(v) if is_break => edit(v),
            Node::Continue(v) if !is_break => edit(v),
            Node::If(i) => {
                edit_jumps(&mut i.then_, is_break, edit);
                edit_jumps(&mut i.else_, is_break, edit);
            }
            _ => {}
        }
    }
}

fn remove_index(v: &mut Vec<Value>, k: usize) {
    if k < v.len() {
        v.remove(k);
    }
}

/// Removes instructions, `if` results and loop results/parameters nobody reads.
pub fn opt_dce(f: &mut Function) -> bool {
    dce(f).0
}

/// What defines a value, for [`dce`]: whether removing the definition is allowed, and the
/// uses that go with it (a range of `Dce::ops`).
#[derive(Clone, Copy, Default)]
struct DefUses {
    removable: bool,
    start: u32,
    end: u32,
}

/// [`opt_dce`], also returning its work (nodes visited plus uses given up: the test that
/// pins the pass's growth with the program's size counts it).
///
/// Removing a definition takes away its uses (an instruction's sources, the `yield`
/// arguments of an `if` result, the `break` arguments of a loop result, the initial value
/// and `continue` arguments of a loop parameter), which can leave further values unused. It
/// counts uses once, follows the counts that drop to zero with a worklist, then removes all
/// dead definitions in one walk: the same values as removing and recounting to a fixed
/// point, which took one walk per link of a dead chain (a chain as long as the program
/// made it quadratic). Values that only read each other (a loop parameter its `continue`
/// feeds) keep their uses, as before; `opt_dead_values` removes those.
pub(crate) fn dce(f: &mut Function) -> (bool, u64) {
    let mut counts = f.use_counts();
    let mut defs = vec![DefUses::default(); f.values.len()];
    let mut ops: Vec<Value> = Vec::new();
    let mut work = 0u64;
    fn def(
        defs: &mut [DefUses],
        ops: &mut Vec<Value>,
        d: Value,
        uses: impl Iterator<Item = Value>,
    ) {
        let start = ops.len() as u32;
        ops.extend(uses);
        defs[d.0 as usize] = DefUses {
            removable: true,
            start,
            end: ops.len() as u32,
        };
    }
    fn collect(b: &Block, defs: &mut [DefUses], ops: &mut Vec<Value>, work: &mut u64) {
        for n in b {
            *work += 1;
            match n {
                Node::Instr(i) => {
                    if let Some(d) = i.dst {
                        if !i.op.has_side_effects() && !matches!(i.op, Op::Atomic { .. }) {
                            def(defs, ops, d, i.op.srcs_iter());
                        }
                    }
                }
                Node::If(i) => {
                    let yields = [&i.then_, &i.else_].map(|arm| match arm.last() {
                        Some(Node::Yield(y)) => Some(y),
                        _ => None,
                    });
                    for (k, r) in i.results.iter().enumerate() {
                        let args = yields.iter().flatten().filter_map(|y| y.get(k).copied());
                        def(defs, ops, *r, args);
                    }
                    collect(&i.then_, defs, ops, work);
                    collect(&i.else_, defs, ops, work);
                }
                Node::Loop(l) => {
                    let (mut breaks, mut continues) = (Vec::new(), Vec::new());
                    jumps_of(&l.body, &mut breaks, &mut continues, work);
                    for (k, r) in l.results.iter().enumerate() {
                        def(
                            defs,
                            ops,
                            *r,
                            breaks.iter().filter_map(|v| v.get(k).copied()),
                        );
                    }
                    for (k, (p, init)) in l.params.iter().enumerate() {
                        let args = continues.iter().filter_map(|v| v.get(k).copied());
                        def(defs, ops, *p, std::iter::once(*init).chain(args));
                    }
                    collect(&l.body, defs, ops, work);
                }
                _ => {}
            }
        }
    }
    /// The `break` and `continue` arguments of the loop whose body is `b`.
    fn jumps_of<'a>(
        b: &'a Block,
        breaks: &mut Vec<&'a Vec<Value>>,
        continues: &mut Vec<&'a Vec<Value>>,
        work: &mut u64,
    ) {
        for n in b {
            *work += 1;
            match n {
                Node::Break(v) => breaks.push(v),
                Node::Continue(v) => continues.push(v),
                Node::If(i) => {
                    jumps_of(&i.then_, breaks, continues, work);
                    jumps_of(&i.else_, breaks, continues, work);
                }
                _ => {}
            }
        }
    }
    collect(&f.body, &mut defs, &mut ops, &mut work);
    let mut dead = vec![false; f.values.len()];
    let mut stack: Vec<u32> = (0..f.values.len() as u32)
        .filter(|&v| defs[v as usize].removable && counts[v as usize] == 0)
        .collect();
    work += f.values.len() as u64;
    let mut any = false;
    while let Some(v) = stack.pop() {
        let d = defs[v as usize];
        dead[v as usize] = true;
        any = true;
        for u in &ops[d.start as usize..d.end as usize] {
            work += 1;
            let c = &mut counts[u.0 as usize];
            *c -= 1;
            if *c == 0 && defs[u.0 as usize].removable {
                stack.push(u.0);
            }
        }
    }
    if !any {
        return (false, work);
    }
    fn remove(b: &mut Block, dead: &[bool], work: &mut u64) {
        *work += b.len() as u64;
        b.retain(|n| !matches!(n, Node::Instr(Instr { dst: Some(d), .. }) if dead[d.0 as usize]));
        let is_dead = |v: &Value| dead[v.0 as usize];
        for n in b.iter_mut() {
            match n {
                Node::If(i) => {
                    let gone: Vec<usize> = (0..i.results.len())
                        .rev()
                        .filter(|&k| is_dead(&i.results[k]))
                        .collect();
                    if !gone.is_empty() {
                        i.results.retain(|r| !is_dead(r));
                        for arm in [&mut i.then_, &mut i.else_] {
                            if let Some(Node::Yield(y)) = arm.last_mut() {
                                gone.iter().for_each(|&k| remove_index(y, k));
                            }
                        }
                    }
                    remove(&mut i.then_, dead, work);
                    remove(&mut i.else_, dead, work);
                }
                Node::Loop(l) => {
                    // Dead indices in descending order, removed from every jump in one
                    // walk of the body (a walk per index was quadratic).
                    let gone: Vec<usize> = (0..l.results.len())
                        .rev()
                        .filter(|&k| is_dead(&l.results[k]))
                        .collect();
                    if !gone.is_empty() {
                        l.results.retain(|r| !is_dead(r));
                        edit_jumps(&mut l.body, true, &mut |v| {
                            gone.iter().for_each(|&k| remove_index(v, k))
                        });
                    }
                    let gone: Vec<usize> = (0..l.params.len())
                        .rev()
                        .filter(|&k| is_dead(&l.params[k].0))
                        .collect();
                    if !gone.is_empty() {
                        l.params.retain(|p| !is_dead(&p.0));
                        edit_jumps(&mut l.body, false, &mut |v| {
                            gone.iter().for_each(|&k| remove_index(v, k))
                        });
                    }
                    remove(&mut l.body, dead, work);
                }
                _ => {}
            }
        }
    }
    remove(&mut f.body, &dead, &mut work);
    (true, work)
}

/// Evaluates operations whose sources are all constants.
pub fn opt_const_fold(f: &mut Function) -> bool {
    let mut consts = f.consts();
    let types = f.values.clone();
    let fc = f.float_controls;
    let mut changed = false;
    f.for_each_instr_mut(&mut |i| {
        // A descriptor-array index that became constant (after unrolling, say) names its
        // binding-table entry directly, clamped to the array as the back end clamps.
        if let Op::Load { space, .. }
        | Op::Store { space, .. }
        | Op::Atomic { space, .. }
        | Op::BufferSize(space) = &mut i.op
        {
            if let Space::SsboArray(x) | Space::UboArray(x) = *space {
                if let Some(c) = consts.get(x.index) {
                    let b = x.base + (c[0] as u32).min(x.count.saturating_sub(1));
                    *space = if space.is_ssbo() {
                        Space::Ssbo(b)
                    } else {
                        Space::Ubo(b)
                    };
                    changed = true;
                }
            }
        }
        let Some(d) = i.dst else { return };
        let dt = types[d.0 as usize];
        if let Op::Alu(AluOp::Bcsel, srcs) = &i.op {
            if let Some(c) = consts.get(srcs[0]) {
                if c.len() == 1 {
                    let pick = if c[0] != 0 { srcs[1] } else { srcs[2] };
                    i.op = Op::Alu(AluOp::Mov, vec![pick]);
                    changed = true;
                }
            }
        }
        let new = match &i.op {
            Op::Alu(..) => match &i.op {
                Op::Alu(op, srcs) if srcs.iter().all(|s| consts.contains(*s)) => {
                    let tys: Vec<Type> = srcs.iter().map(|s| types[s.0 as usize]).collect();
                    // `eval` rounds to nearest even and keeps denormals; a kernel that
                    // rounds toward zero or flushes computes it at run time.
                    let unsafe_fold = std::iter::once(dt)
                        .chain(tys.iter().copied())
                        .any(|t| t.kind == Kind::Float && fc.folding_unsafe(t.bits));
                    if unsafe_fold && !matches!(op, AluOp::Mov) {
                        return;
                    }
                    let vals: Vec<&[u64]> = srcs.iter().filter_map(|s| consts.get(*s)).collect();
                    Some(eval_alu_vec(*op, dt, &tys, &vals))
                }
                _ => None,
            },
            Op::Vec(srcs) if srcs.iter().all(|s| consts.contains(*s)) => Some(
                srcs.iter()
                    .filter_map(|s| consts.get(*s))
                    .flatten()
                    .copied()
                    .collect(),
            ),
            Op::Extract(v, c) => consts.get(*v).map(|x| vec![x[usize::from(*c)]]),
            Op::Swizzle(v, c) => consts
                .get(*v)
                .map(|x| c.iter().map(|k| x[usize::from(*k)]).collect()),
            Op::Insert(v, s, c) => match (consts.get(*v), consts.get(*s)) {
                (Some(x), Some(y)) => {
                    let mut x = x.to_vec();
                    x[usize::from(*c)] = y[0];
                    Some(x)
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(c) = new {
            consts.insert(d, c.clone());
            i.op = Op::Const(c);
            changed = true;
        }
    });
    changed
}

/// Removes copies: `mov`, extracts of `vec`/`insert`/`swizzle`, `vec`s that rebuild a
/// vector, loop parameters that never change, and `if` results both arms agree on.
pub fn opt_copy_prop(f: &mut Function) -> bool {
    // Only the copies and vector moves below read definitions: keeping just those (not a
    // clone of every instruction's operation) was a third of the pass.
    let mut defs: HashMap<Value, Op> = HashMap::default();
    f.for_each_node(&mut |n| {
        if let Node::Instr(Instr {
            dst: Some(d), op, ..
        }) = n
        {
            if matches!(
                op,
                Op::Alu(AluOp::Mov, _)
                    | Op::Extract(..)
                    | Op::Vec(_)
                    | Op::Insert(..)
                    | Op::Swizzle(..)
            ) {
                defs.insert(*d, op.clone());
            }
        }
    });
    let types = f.values.clone();
    let mut subst: HashMap<Value, Value> = HashMap::default();
    let mut rewrites: HashMap<Value, Op> = HashMap::default();
    for (d, op) in &defs {
        match op {
            Op::Alu(AluOp::Mov, s) => {
                subst.insert(*d, s[0]);
            }
            Op::Extract(v, k) => match defs.get(v) {
                Some(Op::Vec(srcs)) => {
                    let mut idx = usize::from(*k);
                    for s in srcs {
                        let n = usize::from(types[s.0 as usize].comps);
                        if idx < n {
                            if n == 1 {
                                subst.insert(*d, *s);
                            } else {
                                rewrites.insert(*d, Op::Extract(*s, idx as u8));
                            }
                            break;
                        }
                        idx -= n;
                    }
                }
                Some(Op::Insert(base, s, c)) => {
                    if c == k {
                        subst.insert(*d, *s);
                    } else {
                        rewrites.insert(*d, Op::Extract(*base, *k));
                    }
                }
                Some(Op::Swizzle(base, c)) => {
                    rewrites.insert(*d, Op::Extract(*base, c[usize::from(*k)]));
                }
                _ => {}
            },
            Op::Vec(srcs) => {
                // vec(extract(v,0), ..., extract(v,n-1)) == v
                let mut base = None;
                let ok = srcs.iter().enumerate().all(|(k, s)| match defs.get(s) {
                    Some(Op::Extract(v, c)) if usize::from(*c) == k => {
                        *base.get_or_insert(*v) == *v
                    }
                    _ => false,
                });
                if ok {
                    if let Some(b) = base {
                        if types[b.0 as usize] == types[d.0 as usize] {
                            subst.insert(*d, b);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut changed = !subst.is_empty() || !rewrites.is_empty();
    if !rewrites.is_empty() {
        f.for_each_instr_mut(&mut |i| {
            if let Some(d) = i.dst {
                if let Some(op) = rewrites.get(&d) {
                    i.op = op.clone();
                }
            }
        });
    }
    // Invariant loop parameters and agreeing if results.
    fn structural(b: &mut Block, subst: &mut HashMap<Value, Value>, defined_in: &mut Vec<Value>) {
        for n in b.iter_mut() {
            match n {
                Node::Instr(i) => {
                    if let Some(d) = i.dst {
                        defined_in.push(d);
                    }
                }
                Node::If(i) => {
                    let mut inner = Vec::new();
                    structural(&mut i.then_, subst, &mut inner);
                    structural(&mut i.else_, subst, &mut inner);
                    let ty = matches!(i.then_.last(), Some(Node::Yield(_)));
                    let ey = matches!(i.else_.last(), Some(Node::Yield(_)));
                    for (k, r) in i.results.iter().enumerate() {
                        let a = match i.then_.last() {
                            Some(Node::Yield(y)) => Some(y[k]),
                            _ => None,
                        };
                        let b = match i.else_.last() {
                            Some(Node::Yield(y)) => Some(y[k]),
                            _ => None,
                        };
                        let v = match (a, b, ty, ey) {
                            (Some(a), Some(b), _, _) if a == b => Some(a),
                            _ => None,
                        };
                        if let Some(v) = v {
                            if !inner.contains(&v) {
                                subst.insert(*r, v);
                            }
                        }
                    }
                    defined_in.extend(inner);
                    defined_in.extend(i.results.iter().copied());
                }
                Node::Loop(l) => {
                    let mut inner = Vec::new();
                    structural(&mut l.body, subst, &mut inner);
                    // One walk of the body for all parameters (a walk per parameter was
                    // quadratic).
                    let mut invariant = vec![true; l.params.len()];
                    let params = l.params.clone();
                    edit_jumps(&mut l.body, false, &mut |v| {
                        for (k, &(p, init)) in params.iter().enumerate() {
                            if v[k] != p && v[k] != init {
                                invariant[k] = false;
                            }
                        }
                    });
                    for (k, &(p, init)) in l.params.iter().enumerate() {
                        if invariant[k] {
                            subst.insert(p, init);
                        }
                    }
                    defined_in.extend(inner);
                    defined_in.extend(l.params.iter().map(|p| p.0));
                    defined_in.extend(l.results.iter().copied());
                }
                _ => {}
            }
        }
    }
    let mut s2 = HashMap::default();
    structural(&mut f.body, &mut s2, &mut Vec::new());
    // A parameter substituted by its init: drop it from the loop as well.
    let before = subst.len();
    subst.extend(s2);
    changed |= subst.len() != before || changed;
    apply_subst(f, &subst);
    if changed {
        // Loop parameters replaced by their initial value are now unused.
        opt_dce(f);
    }
    changed
}

/// What makes two pure instructions compute the same value: the operation with its
/// operands, the result type, and `exact` (an `exact` instruction is not merged with one that
/// may be fused). Compared and hashed structurally: formatting the operation as a string
/// was the most expensive part of the pass.
#[derive(PartialEq, Eq, Hash)]
struct CseKey {
    op: Op,
    ty: Type,
    exact: bool,
}

/// The key of a pure operation (one that neither has an effect nor reads memory), or None.
fn cse_key(op: &Op, ty: Type, exact: bool) -> Option<CseKey> {
    (!op.has_side_effects() && !op.reads_memory()).then(|| CseKey {
        op: op.clone(),
        ty,
        exact,
    })
}

/// Common subexpression elimination over pure operations, scoped by structure (a value is
/// reused only where it is visible).
pub fn opt_cse(f: &mut Function) -> bool {
    fn walk(
        b: &mut Block,
        scopes: &mut Vec<HashMap<CseKey, Value>>,
        types: &[Type],
        subst: &mut HashMap<Value, Value>,
    ) {
        scopes.push(HashMap::default());
        // Removed at the end in one pass (removing in place moved the rest of the block
        // each time: quadratic in the block's length).
        let mut keep = vec![true; b.len()];
        for (k, n) in b.iter_mut().enumerate() {
            let mut remove = false;
            match n {
                Node::Instr(i) => {
                    for s in i.op.srcs_mut() {
                        if let Some(x) = subst.get(s) {
                            *s = *x;
                        }
                    }
                    if let Some(d) = i.dst {
                        if let Some(key) = cse_key(&i.op, types[d.0 as usize], i.exact) {
                            let found = scopes.iter().rev().find_map(|m| m.get(&key).copied());
                            match found {
                                Some(prev) => {
                                    subst.insert(d, prev);
                                    remove = true;
                                }
                                None => {
                                    scopes.last_mut().unwrap().insert(key, d);
                                }
                            }
                        }
                    }
                }
                Node::If(i) => {
                    if let Some(x) = subst.get(&i.cond) {
                        i.cond = *x;
                    }
                    walk(&mut i.then_, scopes, types, subst);
                    walk(&mut i.else_, scopes, types, subst);
                }
                Node::Loop(l) => {
                    for p in &mut l.params {
                        if let Some(x) = subst.get(&p.1) {
                            p.1 = *x;
                        }
                    }
                    walk(&mut l.body, scopes, types, subst);
                }
                Node::Break(v) | Node::Continue(v) | Node::Yield(v) => {
                    for x in v {
                        if let Some(y) = subst.get(x) {
                            *x = *y;
                        }
                    }
                }
            }
            keep[k] = !remove;
        }
        let mut keep = keep.into_iter();
        b.retain(|_| keep.next().unwrap_or(true));
        scopes.pop();
    }
    let mut subst = HashMap::default();
    let types = f.values.clone();
    walk(&mut f.body, &mut vec![], &types, &mut subst);
    !subst.is_empty()
}

/// Splits vector ALU operations into per-component scalar ones (`vec`, loads, stores and
/// system values keep their vectors; copy propagation then removes the extracts).
pub fn scalarize(f: &mut Function) -> bool {
    expand_instrs(f, &mut |i, bd| {
        let vector_alu = match (&i.op, i.dst) {
            (Op::Alu(_, _), Some(d)) => bd.ty(d).comps > 1,
            (Op::Swizzle(..) | Op::Insert(..), Some(_)) => true,
            _ => false,
        };
        if !vector_alu {
            return false;
        }
        let d = i.dst.unwrap();
        let dt = bd.ty(d);
        let mut comps = Vec::new();
        for c in 0..dt.comps {
            let scalar = match &i.op {
                // A scalar source is used as it is in every component.
                Op::Alu(op, srcs) => Op::Alu(*op, srcs.iter().map(|s| bd.extract(*s, c)).collect()),
                Op::Swizzle(v, idx) => Op::Extract(*v, idx[usize::from(c)]),
                Op::Insert(v, s, k) => {
                    if *k == c {
                        Op::Alu(AluOp::Mov, vec![*s])
                    } else {
                        Op::Extract(*v, c)
                    }
                }
                _ => unreachable!(),
            };
            comps.push(bd.emit(dt.scalar_type(), scalar));
            if let (true, Some(Node::Instr(s))) = (i.exact, bd.last_mut()) {
                s.exact = true;
            }
        }
        bd.emit_to(d, Op::Vec(comps));
        true
    })
}

/// Division and modulo the EU cannot do directly: unsigned division and modulo by powers of
/// two become shifts and masks, `imod` (sign of the divisor) becomes `irem` plus a fix-up,
/// `isign` becomes a clamp, `fmod`/`frem` become their floor/trunc formulas. The rest
/// (32-bit `idiv`/`udiv`/`irem`/`umod`) stays for the math unit's INT DIV.
pub fn lower_int_div(f: &mut Function) -> bool {
    let consts = f.consts();
    expand_instrs(f, &mut |i, bd| {
        let (Some(d), Op::Alu(op, srcs)) = (i.dst, &i.op) else {
            return false;
        };
        let t = bd.ty(d);
        let pow2 = srcs
            .get(1)
            .and_then(|s| consts.splat(*s))
            .filter(|x| x.is_power_of_two())
            .map(u64::trailing_zeros);
        let shift_t = Type::I32.vec(t.comps);
        match (op, pow2) {
            (AluOp::Udiv, Some(k)) => {
                let sh = bd.emit(shift_t, Op::Const(vec![u64::from(k); usize::from(t.comps)]));
                bd.emit_to(d, Op::Alu(AluOp::Ushr, vec![srcs[0], sh]));
            }
            // The unsigned modulo, and the floor modulo by a positive power of two, are the
            // low bits (two's complement; the floor modulo takes the divisor's sign, so it is
            // never negative: -1 imod 16 = 15 = -1 & 15). 2^(bits-1) is negative as a
            // signed divisor: its `imod` takes the general lowering.
            (AluOp::Umod | AluOp::Imod, Some(k))
                if *op == AluOp::Umod || k + 1 < u32::from(t.bits) =>
            {
                let m = bd.emit(t, Op::Const(vec![(1u64 << k) - 1; usize::from(t.comps)]));
                bd.emit_to(d, Op::Alu(AluOp::Iand, vec![srcs[0], m]));
            }
            (AluOp::Imod, _) => {
                // r = a rem b; if r != 0 and sign(r) != sign(b): r += b
                let (a, bb) = (srcs[0], srcs[1]);
                let bt = Type::B1.vec(t.comps);
                let r = bd.emit(t, Op::Alu(AluOp::Irem, vec![a, bb]));
                let z = bd.emit(t, Op::Const(vec![0; usize::from(t.comps)]));
                let nz = bd.emit(bt, Op::Alu(AluOp::Ine, vec![r, z]));
                let x = bd.emit(t, Op::Alu(AluOp::Ixor, vec![r, bb]));
                let neg = bd.emit(bt, Op::Alu(AluOp::Ilt, vec![x, z]));
                let fix = bd.emit(bt, Op::Alu(AluOp::Iand, vec![nz, neg]));
                let s = bd.emit(t, Op::Alu(AluOp::Iadd, vec![r, bb]));
                bd.emit_to(d, Op::Alu(AluOp::Bcsel, vec![fix, s, r]));
            }
            (AluOp::Fmod | AluOp::Frem, _) => {
                // The IR defines them as x - y*floor(x/y) and x - y*trunc(x/y),
                // so this expansion is exact.
                let (x, y) = (srcs[0], srcs[1]);
                let q = bd.emit(t, Op::Alu(AluOp::Fdiv, vec![x, y]));
                let round = if *op == AluOp::Fmod {
                    AluOp::Ffloor
                } else {
                    AluOp::Ftrunc
                };
                let r = bd.emit(t, Op::Alu(round, vec![q]));
                let m = bd.emit(t, Op::Alu(AluOp::Fmul, vec![y, r]));
                if t.bits == 64 {
                    // docs/architecture.md, "Design rules": a 64-bit mod returns 0 where the result
                    // would equal y (x/y rounded up to an integer).
                    let bt = Type::B1.vec(t.comps);
                    let z = bd.emit(t, Op::Const(vec![0; usize::from(t.comps)]));
                    let r = bd.emit(t, Op::Alu(AluOp::Fsub, vec![x, m]));
                    let eq = bd.emit(bt, Op::Alu(AluOp::Feq, vec![r, y]));
                    bd.emit_to(d, Op::Alu(AluOp::Bcsel, vec![eq, z, r]));
                } else {
                    bd.emit_to(d, Op::Alu(AluOp::Fsub, vec![x, m]));
                }
            }
            (AluOp::Isign, _) => {
                let m1 = bd.emit(t, Op::Const(vec![t.mask(); usize::from(t.comps)]));
                let one = bd.emit(t, Op::Const(vec![1; usize::from(t.comps)]));
                let x = bd.emit(t, Op::Alu(AluOp::Imax, vec![srcs[0], m1]));
                bd.emit_to(d, Op::Alu(AluOp::Imin, vec![x, one]));
            }
            _ => return false,
        }
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    #[test]
    fn dce_removes_unused_add() {
        check_pass(
            opt_dce,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = iadd %0, %0
            %2:i32 = imul %0, %0
            store ssbo[0] %0, %2 align 4",
            "%0:i32 = sysval local_invocation_index
            %2:i32 = imul %0, %0
            store ssbo[0] %0, %2 align 4",
        );
    }

    #[test]
    fn dce_removes_unused_loop_result_and_break_args() {
        check_pass(
            opt_dce,
            "%0:i32 = const 0
            %1:i32 = loop {
                break %0
            }",
            "loop {
                break
            }",
        );
    }

    /// `n` links of a dead chain: an instruction read only by an `if` result, read only by
    /// the next link; at the end a loop whose parameter starts with the last link and
    /// whose unused result is computed from the parameter.
    fn dead_chain(n: usize) -> String {
        let mut s = String::from(
            "%0:i32 = sysval local_invocation_index\n%1:b1 = ieq %0, %0\n\
             store ssbo[0] %0, %0 align 4\n",
        );
        let mut prev = 0;
        for k in 0..n {
            let (a, r) = (2 + 2 * k, 3 + 2 * k);
            s += &format!(
                "%{a}:i32 = iadd %{prev}, %0\n\
                 %{r}:i32 = if %1 {{\nyield %{a}\n}} else {{\nyield %0\n}}\n"
            );
            prev = r;
        }
        let (p, x) = (2 + 2 * n, 3 + 2 * n);
        s + &format!(
            "%{}:i32 = loop (%{p}:i32 = %{prev}) {{\n%{x}:i32 = iadd %{p}, %0\n\
             if %1 {{\nbreak %{x}\n}}\ncontinue %0\n}}\n",
            x + 1
        )
    }

    #[test]
    fn dce_removes_dead_chains_whole() {
        let mut f = crate::parse::parse_function(&dead_chain(3)).expect("parses");
        assert!(opt_dce(&mut f));
        crate::validate::validate(&f).unwrap_or_else(|e| panic!("{e}\n{f}"));
        f.renumber();
        let mut e = crate::parse::parse_function(
            "%0:i32 = sysval local_invocation_index
            %1:b1 = ieq %0, %0
            store ssbo[0] %0, %0 align 4
            if %1 {
                yield
            } else {
                yield
            }
            if %1 {
                yield
            } else {
                yield
            }
            if %1 {
                yield
            } else {
                yield
            }
            loop {
                if %1 {
                    break
                }
                continue
            }",
        )
        .expect("parses");
        e.renumber();
        assert_eq!(f.to_string(), e.to_string());
    }

    /// A dead chain is removed in one walk plus the uses it gives up, not one walk per link
    /// (that was quadratic in the chain's length).
    #[test]
    fn dce_work_grows_linearly_with_dead_chains() {
        let work = |n: usize| {
            let mut f = crate::parse::parse_function(&dead_chain(n)).expect("parses");
            let (changed, w) = dce(&mut f);
            assert!(changed);
            crate::validate::validate(&f).unwrap_or_else(|e| panic!("{e}\n{f}"));
            assert_eq!(f.instr_count(), 3, "{f}");
            w
        };
        let (w1, w2) = (work(500), work(1000));
        assert!(
            w2 * 10 <= w1 * 22,
            "work {w1} at 500 links, {w2} at 1000: more than linear"
        );
    }

    #[test]
    fn const_fold_turns_constant_descriptor_indices_into_entries() {
        // Index 1 of the array at entries 4..6; index 9 is clamped to the last element.
        check_pass(
            opt_const_fold,
            "%0:i32 = const 1
            %1:i32 = const 9
            %2:i32 = sysval local_invocation_index
            %3:i32 = load ssbo.nu[4+%0<3] %2 align 4
            %4:i32 = load ubo[4+%1<3] %2 align 4
            %5:i32 = load ssbo[4+%2<3] %2 align 4
            store ssbo[4+%1<3] %2, %3 align 4
            store ssbo[0] %2, %4 align 4
            store ssbo[0] %2, %5 align 4",
            "%0:i32 = const 1
            %1:i32 = const 9
            %2:i32 = sysval local_invocation_index
            %3:i32 = load ssbo[5] %2 align 4
            %4:i32 = load ubo[6] %2 align 4
            %5:i32 = load ssbo[4+%2<3] %2 align 4
            store ssbo[6] %2, %3 align 4
            store ssbo[0] %2, %4 align 4
            store ssbo[0] %2, %5 align 4",
        );
    }

    #[test]
    fn const_fold_evaluates_arithmetic_and_select() {
        check_pass(
            opt_const_fold,
            "%0:i32 = const 6
            %1:i32 = const 7
            %2:i32 = imul %0, %1
            %3:b1 = const true
            %4:i32 = sysval local_invocation_index
            %5:i32 = bcsel %3, %4, %2
            store ssbo[0] %2, %5 align 4",
            "%0:i32 = const 6
            %1:i32 = const 7
            %2:i32 = const 42
            %3:b1 = const true
            %4:i32 = sysval local_invocation_index
            %5:i32 = mov %4
            store ssbo[0] %2, %5 align 4",
        );
    }

    #[test]
    fn copy_prop_sees_through_mov_and_vec() {
        check_pass(
            opt_copy_prop,
            "%0:i32x3 = sysval global_invocation_id
            %1:i32 = extract %0, 1
            %2:i32 = mov %1
            %3:i32x2 = vec %2, %1
            %4:i32 = extract %3, 0
            store ssbo[0] %4, %4 align 4",
            "%0:i32x3 = sysval global_invocation_id
            %1:i32 = extract %0, 1
            store ssbo[0] %1, %1 align 4",
        );
    }

    #[test]
    fn copy_prop_removes_invariant_loop_parameter() {
        check_pass(
            opt_copy_prop,
            "%0:i32 = const 3
            loop (%1:i32 = %0) {
                store ssbo[0] %1, %1 align 4
                continue %1
            }",
            "%0:i32 = const 3
            loop {
                store ssbo[0] %0, %0 align 4
                continue
            }",
        );
    }

    #[test]
    fn cse_reuses_visible_values_only() {
        check_pass(
            opt_cse,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = iadd %0, %0
            %5:b1 = const true
            if %5 {
                %2:i32 = iadd %0, %0
                store ssbo[0] %2, %2 align 4
                %6:i32 = imul %0, %0
            }
            %7:i32 = imul %0, %0
            %3:i32 = iadd %0, %0
            store ssbo[0] %3, %7 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = iadd %0, %0
            %5:b1 = const true
            if %5 {
                store ssbo[0] %1, %1 align 4
                %6:i32 = imul %0, %0
            }
            %7:i32 = imul %0, %0
            store ssbo[0] %1, %7 align 4",
        );
    }

    #[test]
    fn cse_keeps_loads() {
        let text = "%0:i32 = const 0
            %1:i32 = load ssbo[0] %0 align 4
            store ssbo[0] %0, %0 align 4
            %2:i32 = load ssbo[0] %0 align 4
            store ssbo[0] %0, %2 align 4";
        check_pass(opt_cse, text, text);
    }

    #[test]
    fn scalarize_splits_vector_add() {
        check_pass(
            scalarize,
            "%9:i32 = const 0
            %0:i32x2 = const 1, 2
            %1:i32x2 = iadd %0, %0
            store ssbo[0] %9, %1 align 8",
            "%9:i32 = const 0
            %0:i32x2 = const 1, 2
            %2:i32 = extract %0, 0
            %3:i32 = extract %0, 0
            %4:i32 = iadd %2, %3
            %5:i32 = extract %0, 1
            %6:i32 = extract %0, 1
            %7:i32 = iadd %5, %6
            %1:i32x2 = vec %4, %7
            store ssbo[0] %9, %1 align 8",
        );
    }

    #[test]
    fn fmod_becomes_floor_formula() {
        check_pass(
            lower_int_div,
            "%9:i32 = const 0
            %0:f32 = load ssbo[0] %9 align 4
            %1:f32 = const 1.5
            %2:f32 = fmod %0, %1
            store ssbo[0] %9, %2 align 4",
            "%9:i32 = const 0
            %0:f32 = load ssbo[0] %9 align 4
            %1:f32 = const 1.5
            %3:f32 = fdiv %0, %1
            %4:f32 = ffloor %3
            %5:f32 = fmul %1, %4
            %2:f32 = fsub %0, %5
            store ssbo[0] %9, %2 align 4",
        );
    }

    #[test]
    fn imod_matches_reference_semantics() {
        // Exhaustive over small operands: the lowered form against eval's imod.
        let mut s = crate::parse::parse_shader(
            "shader local_size 64 1 1 shared 0 local 0 push 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 8
            %2:i32 = const 4
            %3:i32 = udiv %0, %1
            %4:i32 = umod %0, %1
            %5:i32 = isub %3, %2
            %6:i32 = isub %4, %2
            %7:i32 = imod %5, %6
            %8:i32 = imul %0, %2
            store ssbo[0] %8, %7 align 4",
        )
        .unwrap();
        let run = |s: &crate::ir::Shader| {
            let mut m = crate::interp::Memory::default();
            m.ssbo.insert(0, vec![0; 256]);
            crate::interp::run(s, [1, 1, 1], 16, &mut m).unwrap();
            m.ssbo[&0].clone()
        };
        let before = run(&s);
        assert!(lower_int_div(&mut s.func));
        crate::validate::validate(&s.func).unwrap();
        assert_eq!(run(&s), before);
    }

    #[test]
    fn imod_by_positive_power_of_two_becomes_mask() {
        // A divisor of 2^31 is negative as an i32: it keeps the general lowering.
        check_pass(
            lower_int_div,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 16
            %2:i32 = imod %0, %1
            store ssbo[0] %0, %2 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 16
            %3:i32 = const 15
            %2:i32 = iand %0, %3
            store ssbo[0] %0, %2 align 4",
        );
    }

    #[test]
    fn imod_by_powers_of_two_matches_reference_semantics() {
        // Dividends around 0 and the i32 extremes against eval's imod, for divisors 1, 16,
        // 2^30 (masks) and 2^31 (negative: the general lowering).
        for k in [0u32, 4, 30, 31] {
            let mut s = crate::parse::parse_shader(&format!(
                "shader local_size 64 1 1 shared 0 local 0 push 0
                %0:i32 = sysval local_invocation_index
                %1:i32 = const {}
                %2:i32 = const 32
                %3:i32 = isub %0, %2
                %4:i32 = const 31
                %5:i32 = ishl %3, %4
                %6:i32 = iadd %3, %5
                %7:i32 = imod %6, %1
                %8:i32 = const 4
                %9:i32 = imul %0, %8
                store ssbo[0] %9, %7 align 4",
                (1i64 << k) as i32
            ))
            .unwrap();
            let run = |s: &crate::ir::Shader| {
                let mut m = crate::interp::Memory::default();
                m.ssbo.insert(0, vec![0; 256]);
                crate::interp::run(s, [1, 1, 1], 16, &mut m).unwrap();
                m.ssbo[&0].clone()
            };
            let before = run(&s);
            assert!(lower_int_div(&mut s.func));
            crate::validate::validate(&s.func).unwrap();
            assert_eq!(run(&s), before, "divisor 2^{k}");
        }
    }

    #[test]
    fn udiv_by_power_of_two_becomes_shift() {
        check_pass(
            lower_int_div,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 8
            %2:i32 = udiv %0, %1
            store ssbo[0] %0, %2 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 8
            %3:i32 = const 3
            %2:i32 = ushr %0, %3
            store ssbo[0] %0, %2 align 4",
        );
    }

    #[test]
    fn folded_f64_mod_is_zero_where_the_formula_gives_y() {
        // Constant folding must agree with the lowering above: a 64-bit mod whose rounded
        // formula gives y (a tiny x against y of the other sign) is 0.
        let t = Type::scalar(crate::ir::Kind::Float, 64);
        for (x, y) in [(-1e-20f64, 1.0f64), (1e-20, -1.0), (-1e-300, 3.0)] {
            let r = crate::eval::eval_alu(AluOp::Fmod, t, &[t, t], &[x.to_bits(), y.to_bits()]);
            assert_eq!(
                f64::from_bits(r),
                0.0,
                "fmod({x:e}, {y:e}) folded to {:e}",
                f64::from_bits(r)
            );
        }
    }
}
