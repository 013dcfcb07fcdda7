//! IR validator: SSA (one definition, scoped visibility), edge arity and types, op typing.
//! The pass pipeline runs it after every pass in debug builds and under the `validate` flag.

use crate::ir::*;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("invalid IR: {0}")]
pub struct ValidationError(pub String);

struct Ctx<'a> {
    f: &'a Function,
    /// Values visible at the current point.
    visible: Vec<bool>,
    /// Values made visible, in order; a scope is undone by hiding what it added, so entering
    /// and leaving scopes costs the values defined in them, not the function's size.
    shown: Vec<Value>,
    /// For each open scope, the length of `shown` when it opened.
    scopes: Vec<usize>,
    /// Visibility cells written when scopes close: the work of scoping, which the tests pin to
    /// the number of values (copying the visible set per scope made validation quadratic).
    hidden: usize,
    defined: Vec<bool>,
    /// For each enclosing loop: (param types, result types).
    loops: Vec<(Vec<Type>, Vec<Type>)>,
    /// For each enclosing `if` arm: result types.
    ifs: Vec<Vec<Type>>,
    /// Whether the innermost construct is an `if` arm (yield allowed) or a loop body.
    in_if_arm: Vec<bool>,
}

fn err<T>(msg: String) -> Result<T, ValidationError> {
    Err(ValidationError(msg))
}

impl Ctx<'_> {
    fn use_(&self, v: Value, what: &str) -> Result<Type, ValidationError> {
        let i = v.0 as usize;
        if i >= self.f.values.len() || !self.visible[i] {
            return err(format!(
                "{v} used in {what} is not defined or not visible there"
            ));
        }
        Ok(self.f.ty(v))
    }
    fn def(&mut self, v: Value) -> Result<(), ValidationError> {
        let i = v.0 as usize;
        if i >= self.f.values.len() {
            return err(format!("{v} has no type"));
        }
        if self.defined[i] {
            return err(format!("{v} defined twice"));
        }
        self.defined[i] = true;
        self.visible[i] = true;
        self.shown.push(v);
        Ok(())
    }
    fn open_scope(&mut self) {
        self.scopes.push(self.shown.len());
    }
    fn close_scope(&mut self) {
        let start = self.scopes.pop().unwrap_or(0);
        for v in self.shown.drain(start..) {
            self.visible[v.0 as usize] = false;
            self.hidden += 1;
        }
    }
    fn check_args(&self, what: &str, vals: &[Value], tys: &[Type]) -> Result<(), ValidationError> {
        if vals.len() != tys.len() {
            return err(format!(
                "{what} has {} values, expected {}",
                vals.len(),
                tys.len()
            ));
        }
        for (v, t) in vals.iter().zip(tys) {
            let vt = self.use_(*v, what)?;
            if vt != *t {
                return err(format!("{what}: {v} is {vt}, expected {t}"));
            }
        }
        Ok(())
    }

    fn block(&mut self, b: &Block) -> Result<(), ValidationError> {
        for (k, n) in b.iter().enumerate() {
            if n.is_jump() && k + 1 != b.len() {
                return err("a break/continue/yield must end its block".into());
            }
            match n {
                Node::Instr(i) => self.instr(i)?,
                Node::If(i) => {
                    let ct = self.use_(i.cond, "if")?;
                    if ct != Type::bool(ct.bits) {
                        return err(format!("if condition {} is {ct}", i.cond));
                    }
                    let rt: Vec<Type> = i.results.iter().map(|r| self.f.ty(*r)).collect();
                    for arm in [&i.then_, &i.else_] {
                        self.ifs.push(rt.clone());
                        self.in_if_arm.push(true);
                        self.open_scope();
                        self.block(arm)?;
                        self.close_scope();
                        self.in_if_arm.pop();
                        self.ifs.pop();
                        let ends = arm.last().map(|n| n.is_jump()).unwrap_or(false);
                        if !ends && !rt.is_empty() {
                            return err("an if arm with results must end in a jump".into());
                        }
                    }
                    for r in &i.results {
                        self.def(*r)?;
                    }
                }
                Node::Loop(l) => {
                    let mut pt = Vec::new();
                    for (p, init) in &l.params {
                        let it = self.use_(*init, "loop parameter")?;
                        if it != self.f.ty(*p) {
                            return err(format!("loop parameter {p} initialised with {it}"));
                        }
                        pt.push(it);
                    }
                    let rt: Vec<Type> = l.results.iter().map(|r| self.f.ty(*r)).collect();
                    self.open_scope();
                    for (p, _) in &l.params {
                        self.def(*p)?;
                    }
                    self.loops.push((pt.clone(), rt));
                    self.in_if_arm.push(false);
                    self.block(&l.body)?;
                    self.in_if_arm.pop();
                    self.loops.pop();
                    self.close_scope();
                    let ends = l.body.last().map(|n| n.is_jump()).unwrap_or(false);
                    if !ends && !pt.is_empty() {
                        return err("a loop with parameters must not fall off its body".into());
                    }
                    for r in &l.results {
                        self.def(*r)?;
                    }
                }
                Node::Break(v) | Node::Continue(v) => {
                    let Some((pt, rt)) = self.loops.last() else {
                        return err("break/continue outside a loop".into());
                    };
                    if matches!(n, Node::Break(_)) {
                        self.check_args("break", v, &rt.clone())?;
                    } else {
                        self.check_args("continue", v, &pt.clone())?;
                    }
                }
                Node::Yield(v) => {
                    if self.in_if_arm.last() != Some(&true) {
                        return err("yield outside an if arm".into());
                    }
                    let rt = self.ifs.last().unwrap().clone();
                    self.check_args("yield", v, &rt)?;
                }
            }
        }
        Ok(())
    }

    fn instr(&mut self, i: &Instr) -> Result<(), ValidationError> {
        let f = self.f;
        let srcs = i.op.srcs();
        let mut st = Vec::new();
        for s in &srcs {
            st.push(self.use_(*s, "an instruction")?);
        }
        let want_dst = !matches!(
            i.op,
            Op::Store { .. }
                | Op::StoreVar(..)
                | Op::Barrier { .. }
                | Op::Image(ImageOp::Store, ..)
        );
        let dt = match (i.dst, want_dst) {
            (Some(d), true) => Some(f.ty(d)),
            (None, false) => None,
            (None, true)
                if matches!(i.op, Op::Atomic { .. } | Op::Image(ImageOp::Atomic(_), ..)) =>
            {
                None
            }
            (Some(_), false) => return err("instruction without result has a destination".into()),
            (None, true) => return err("instruction needs a destination".into()),
        };
        let show = || InstrDisplay { func: f, instr: i }.to_string();
        let bad = |why: &str| err(format!("{why}: {}", show()));
        let space = match &i.op {
            Op::Load { space, .. }
            | Op::Store { space, .. }
            | Op::Atomic { space, .. }
            | Op::BufferSize(space) => Some(*space),
            _ => None,
        };
        if let Some(Space::SsboArray(x) | Space::UboArray(x)) = space {
            if st.last() != Some(&Type::I32) {
                return bad("descriptor indices are i32");
            }
            if x.count == 0 {
                return bad("descriptor array of no elements");
            }
        }
        if let Some(Space::Global(_)) = space {
            if st.last() != Some(&Type::int(64)) {
                return bad("global base addresses are i64");
            }
            if matches!(i.op, Op::BufferSize(_)) {
                return bad("global memory has no buffer size");
            }
        }
        match &i.op {
            Op::Const(c) => {
                let t = dt.unwrap();
                if c.len() != usize::from(t.comps) {
                    return bad("constant has the wrong number of components");
                }
                if c.iter().any(|b| b & !t.mask() != 0) {
                    return bad("constant has bits above its size");
                }
            }
            Op::Alu(op, _) => {
                let t = dt.unwrap();
                if srcs.len() != op.num_srcs() {
                    return bad("wrong number of sources");
                }
                let ok = op.types_fit(t, &st);
                if !ok {
                    return bad("operand types do not fit the operation");
                }
            }
            Op::Vec(s) => {
                let t = dt.unwrap();
                let n: u32 = st.iter().map(|x| u32::from(x.comps)).sum();
                if s.is_empty()
                    || n != u32::from(t.comps)
                    || st.iter().any(|x| x.scalar_type() != t.scalar_type())
                {
                    return bad("vec components do not match");
                }
            }
            Op::Extract(_, c) => {
                let t = dt.unwrap();
                if *c >= st[0].comps || t != st[0].scalar_type() {
                    return bad("bad extract");
                }
            }
            Op::Insert(_, _, c) => {
                let t = dt.unwrap();
                if *c >= t.comps || st[0] != t || st[1] != t.scalar_type() {
                    return bad("bad insert");
                }
            }
            Op::Swizzle(_, c) => {
                let t = dt.unwrap();
                if c.len() != usize::from(t.comps)
                    || c.iter().any(|x| *x >= st[0].comps)
                    || t.scalar_type() != st[0].scalar_type()
                {
                    return bad("bad swizzle");
                }
            }
            Op::LoadVar(v) | Op::StoreVar(v, _) => {
                let Some(vt) = f.vars.get(v.0 as usize) else {
                    return bad("undeclared variable");
                };
                let t = dt.unwrap_or_else(|| st[0]);
                if *vt != t {
                    return bad("variable type mismatch");
                }
            }
            Op::Load { offset, align, .. } | Op::Store { offset, align, .. } => {
                let _ = offset;
                if st[0] != Type::I32 {
                    return bad("offsets are i32");
                }
                let t = dt.unwrap_or_else(|| st[1]);
                if t.is_bool() && t.bits == 1 {
                    return bad("1-bit booleans have no memory form");
                }
                if !align.is_power_of_two() {
                    return bad("alignment must be a power of two");
                }
            }
            Op::Atomic {
                op, data, space, ..
            } => {
                if st[0] != Type::I32 || data.len() != op.num_data() {
                    return bad("bad atomic operands");
                }
                if !(space.is_ssbo() || matches!(space, Space::Shared | Space::Global(_))) {
                    return bad("atomics work on ssbo, global and shared memory");
                }
                if let Some(t) = dt {
                    let data = &st[1..1 + data.len()];
                    if t.kind != Kind::Int || t.comps != 1 || data.iter().any(|s| *s != t) {
                        return bad("atomic data must be scalar integers of the result type");
                    }
                }
            }
            Op::SysVal(s) => {
                if dt.unwrap() != s.ty() {
                    return bad("system value type");
                }
            }
            Op::BufferSize(s) => {
                if dt.unwrap() != Type::I32 || !s.is_buffer() {
                    return bad("buffer_size");
                }
            }
            Op::Barrier { .. } => {}
            Op::Image(op, _, srcs) => {
                let coords = st[0];
                let texel = |t: Type| t.bits == 32 && t.comps == 4 && !t.is_bool();
                match op {
                    ImageOp::Size
                        if srcs.len() != 1
                            || st[0] != Type::I32
                            || dt != Some(Type::I32.vec(4)) =>
                    {
                        return bad("image_size takes an i32 level and returns i32x4");
                    }
                    ImageOp::SampleLod { .. }
                        if coords.kind != Kind::Float
                            || coords.bits != 32
                            || coords.comps > 4
                            || srcs.len() != 2
                            || st[1] != Type::F32
                            || !texel(dt.unwrap()) =>
                    {
                        return bad(
                            "image_sample_l takes 1-4 f32 coordinates and an f32 level, \
                             returns a texel",
                        );
                    }
                    ImageOp::SampleGrad { .. }
                        if coords.kind != Kind::Float
                            || coords.bits != 32
                            || coords.comps > 4
                            || srcs.len() != 3
                            || st[1] != st[2]
                            || st[1].kind != Kind::Float
                            || st[1].bits != 32
                            || st[1].comps > 3
                            || !texel(dt.unwrap()) =>
                    {
                        return bad(
                            "image_sample_d takes 1-4 f32 coordinates and two f32 derivative \
                             vectors of 1-3 components, returns a texel",
                        );
                    }
                    ImageOp::GatherOffset { comp, .. }
                        if coords.kind != Kind::Float
                            || coords.bits != 32
                            || !(2..=3).contains(&coords.comps)
                            || srcs.len() != 2
                            || st[1] != Type::I32.vec(2)
                            || *comp > 3
                            || !texel(dt.unwrap()) =>
                    {
                        return bad(
                            "image_gather_po takes 2-3 f32 coordinates, i32x2 offsets and a \
                             component 0-3, returns a texel",
                        );
                    }
                    ImageOp::Gather { comp, .. }
                        if coords.kind != Kind::Float
                            || coords.bits != 32
                            || !(2..=4).contains(&coords.comps)
                            || srcs.len() != 1
                            || *comp > 3
                            || !texel(dt.unwrap()) =>
                    {
                        return bad(
                            "image_gather takes 2-4 f32 coordinates and a component 0-3, \
                             returns a texel",
                        );
                    }
                    _ => {}
                }
                let sampled = matches!(
                    op,
                    ImageOp::Size
                        | ImageOp::SampleLod { .. }
                        | ImageOp::SampleGrad { .. }
                        | ImageOp::Gather { .. }
                        | ImageOp::GatherOffset { .. }
                );
                if !sampled && (coords.kind != Kind::Int || coords.bits != 32 || coords.comps > 3) {
                    return bad("image coordinates must be 1 to 3 32-bit integers");
                }
                match op {
                    ImageOp::Fetch
                        if srcs.len() != 2 || st[1] != Type::I32 || !texel(dt.unwrap()) =>
                    {
                        return bad("image_fetch takes coordinates and an i32 level");
                    }
                    ImageOp::Load if !texel(dt.unwrap()) || srcs.len() != 1 => {
                        return bad("image_load returns a 4-component 32-bit texel");
                    }
                    // A store carries the channels of the format it writes (1 to 4).
                    ImageOp::Store
                        if srcs.len() != 2
                            || st[1].bits != 32
                            || st[1].is_bool()
                            || !(1..=4).contains(&st[1].comps) =>
                    {
                        return bad("image_store takes a texel of 1 to 4 32-bit components");
                    }
                    ImageOp::Atomic(a)
                        if srcs.len() != 1 + a.num_data()
                            || st[1..].iter().any(|s| *s != Type::I32)
                            || dt.is_some_and(|t| t != Type::I32) =>
                    {
                        return bad("image atomics work on one 32-bit integer");
                    }
                    _ => {}
                }
            }
            Op::Subgroup(op, srcs) => {
                if srcs.len() != op.num_srcs() {
                    return bad("subgroup operand count");
                }
                let t = dt.unwrap();
                let ok = match op {
                    SubgroupOp::Elect => t.is_bool() && t.comps == 1,
                    SubgroupOp::All | SubgroupOp::Any => {
                        t.is_bool() && t.comps == 1 && st[0].is_bool() && st[0].comps == 1
                    }
                    SubgroupOp::AllEqual => t.is_bool() && t.comps == 1,
                    SubgroupOp::Ballot => {
                        t == Type::I32.vec(4) && st[0].is_bool() && st[0].comps == 1
                    }
                    SubgroupOp::Broadcast | SubgroupOp::Shuffle => {
                        t == st[0] && st[1].kind == Kind::Int
                    }
                    SubgroupOp::BroadcastFirst => t == st[0],
                    SubgroupOp::Reduce(r)
                    | SubgroupOp::ClusteredReduce(r, _)
                    | SubgroupOp::InclusiveScan(r)
                    | SubgroupOp::ExclusiveScan(r) => {
                        t == st[0]
                            && (t.kind == Kind::Float) == r.is_float()
                            && (t.kind != Kind::Bool
                                || matches!(r, RedOp::And | RedOp::Or | RedOp::Xor))
                    }
                };
                if let SubgroupOp::ClusteredReduce(_, n) = op {
                    if !n.is_power_of_two() {
                        return bad("cluster size must be a power of two");
                    }
                }
                // One component per operation: the front end splits vectors.
                if !ok || st.first().is_some_and(|s| s.comps != 1) {
                    return bad("subgroup operand or result type");
                }
            }
        }
        if let Some(d) = i.dst {
            self.def(d)?;
        }
        Ok(())
    }
}

/// Checks a function.
pub fn validate(f: &Function) -> Result<(), ValidationError> {
    validate_counting(f).map(|_| ())
}

/// [`validate`], returning the visibility cells written when scopes closed.
fn validate_counting(f: &Function) -> Result<usize, ValidationError> {
    let n = f.values.len();
    let mut c = Ctx {
        f,
        visible: vec![false; n],
        shown: Vec::new(),
        scopes: Vec::new(),
        hidden: 0,
        defined: vec![false; n],
        loops: vec![],
        ifs: vec![],
        in_if_arm: vec![],
    };
    c.block(&f.body)?;
    Ok(c.hidden)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_function;

    fn check(text: &str) -> Result<(), ValidationError> {
        validate(&parse_function(text).unwrap())
    }

    #[test]
    fn accepts_well_formed_loop_and_if() {
        check(
            "%0:i32 = const 0
            %1:i32 = const 10
            %2:i32 = loop (%3:i32 = %0) {
                %4:b1 = ige %3, %1
                %5:i32 = if %4 {
                    break %3
                } else {
                    %6:i32 = iadd %3, %1
                    yield %6
                }
                continue %5
            }",
        )
        .unwrap();
    }

    #[test]
    fn rejects_value_used_outside_its_scope() {
        let e = check(
            "%0:b1 = const true
            if %0 {
                %1:i32 = const 1
            }
            %2:i32 = iadd %1, %1",
        )
        .unwrap_err();
        assert!(e.0.contains("not visible"), "{e}");
    }

    #[test]
    fn rejects_type_mismatch() {
        assert!(check("%0:i32 = const 1\n%1:f32 = fadd %0, %0").is_err());
        assert!(check("%0:f32 = const 1.0\n%1:b1 = ilt %0, %0").is_err());
        assert!(check("%0:i32 = const 1\n%1:b32 = ilt %0, %0").is_ok());
    }

    #[test]
    fn rejects_bad_edges() {
        assert!(check("break").is_err());
        assert!(check("%0:i32 = const 1\nloop {\n break %0\n}").is_err());
        assert!(check("%0:b1 = const true\n%1:i32 = if %0 {\n}").is_err());
        assert!(check("loop {\n break\n %0:i32 = const 1\n}").is_err());
    }

    #[test]
    fn rejects_bool_store() {
        assert!(
            check("%0:i32 = const 0\n%1:b1 = const true\nstore ssbo[0] %0, %1 align 4").is_err()
        );
    }

    #[test]
    fn scopes_hide_what_they_defined() {
        // A loop parameter is not visible after its loop, nor a then-arm value in the else arm.
        let e = check(
            "%0:i32 = const 0
            loop (%1:i32 = %0) {
                break
            }
            %2:i32 = iadd %1, %1",
        )
        .unwrap_err();
        assert!(e.0.contains("not visible"), "{e}");
        let e = check(
            "%0:b1 = const true
            if %0 {
                %1:i32 = const 1
            } else {
                %2:i32 = iadd %1, %1
            }",
        )
        .unwrap_err();
        assert!(e.0.contains("not visible"), "{e}");
    }

    /// `n` sequential ifs after `n` values defined at the top, each if defining one value.
    fn many_ifs(n: usize) -> Function {
        let mut t = String::from("%0:b1 = const true\n");
        for k in 1..=n {
            t += &format!("%{k}:i32 = const {k}\n");
        }
        for k in 1..=n {
            t += &format!("if %0 {{\n %{}:i32 = iadd %{k}, %{k}\n}}\n", n + k);
        }
        parse_function(&t).unwrap()
    }

    #[test]
    fn scoping_work_grows_linearly() {
        // Opening a scope used to copy the whole visible set: n ifs over n values cost n * n.
        let small = validate_counting(&many_ifs(500)).unwrap();
        let large = validate_counting(&many_ifs(1000)).unwrap();
        assert!(
            small <= 500 && large <= 1000,
            "scoping work {small}, {large}"
        );
        assert!(large <= 2 * small + 2, "scoping work {small} -> {large}");
    }
}
