//! Boolean lowering: 1-bit booleans become the size the hardware produces (docs/architecture.md, "Design rules").
//!
//! * A comparison (or `isnan`/`isinf`/`i2b`) of N-bit values yields an N-bit boolean, except
//!   that 8-bit sources give 16 bits: byte destinations need stride 2 and there are no byte
//!   immediates, so there are no 8-bit booleans.
//! * Logical ops, `mov`, boolean `bcsel`/`vec`, `if` results and loop parameters with
//!   sources of mixed sizes take the smallest; the larger sources are converted with `b2b`
//!   placed right after their definition (after the `if`/`loop` for its results, at the
//!   top of the body for a loop parameter), never in front of a `yield`/`continue`/`break`.
//! * Boolean constants take the size their use needs (one constant per size). Where any size
//!   works (an `if` or `bcsel` condition, `b2i`, `b2f`, `b2b`) a constant is 32-bit.

use crate::builder::Builder;
use crate::hash::HashMap;
use crate::ir::*;

const ANY: u8 = 0;

/// Where a value is defined, for placing conversions after it.
#[derive(Clone, Copy, PartialEq)]
enum DefSite {
    Instr,
    NodeResult,
    LoopParam,
}

struct Lower {
    size: HashMap<Value, u8>,
    consts: Consts,
    /// Conversions/constant copies to emit after a value's definition.
    after: HashMap<Value, Block>,
    conv: HashMap<(Value, u8), Value>,
    values: Vec<Type>,
    site: HashMap<Value, DefSite>,
}

fn bool_size_of_compare(src_bits: u8) -> u8 {
    src_bits.max(16)
}

fn min_known(it: impl Iterator<Item = Option<u8>>) -> Option<u8> {
    it.flatten().filter(|s| *s != ANY).min()
}

impl Lower {
    fn is_bool(&self, v: Value) -> bool {
        self.values[v.0 as usize].is_bool()
    }

    fn infer(&mut self, b: &Block) -> bool {
        let mut changed = false;
        for n in b {
            match n {
                Node::Instr(i) => {
                    let Some(d) = i.dst else { continue };
                    if !self.is_bool(d) {
                        continue;
                    }
                    let s = match &i.op {
                        Op::Const(_) => None,
                        Op::Alu(op, srcs) => match op.class() {
                            // `ieq`/`ine` of booleans (GLSL `==`, `!=`, `^^`): the smaller
                            // source size, as `rewrite` gives it, not that of 1-bit values.
                            AluClass::Compare if self.is_bool(srcs[0]) => {
                                min_known(srcs.iter().map(|s| self.size.get(s).copied()))
                                    .map(|m| m.max(16))
                            }
                            AluClass::Compare | AluClass::Test => {
                                Some(bool_size_of_compare(self.values[srcs[0].0 as usize].bits))
                            }
                            AluClass::Convert => match op {
                                AluOp::I2b => {
                                    Some(bool_size_of_compare(self.values[srcs[0].0 as usize].bits))
                                }
                                _ => Some(32),
                            },
                            AluClass::Select => {
                                min_known(srcs[1..].iter().map(|s| self.size.get(s).copied()))
                            }
                            _ => min_known(srcs.iter().map(|s| self.size.get(s).copied())),
                        },
                        Op::Vec(srcs) => min_known(srcs.iter().map(|s| self.size.get(s).copied())),
                        Op::Extract(v, _) | Op::Swizzle(v, _) => self.size.get(v).copied(),
                        Op::Insert(v, s, _) => min_known(
                            [self.size.get(v).copied(), self.size.get(s).copied()].into_iter(),
                        ),
                        _ => Some(32),
                    };
                    if let Some(s) = s {
                        if self.size.get(&d) != Some(&s) {
                            self.size.insert(d, s);
                            changed = true;
                        }
                    }
                }
                Node::If(i) => {
                    changed |= self.infer(&i.then_);
                    changed |= self.infer(&i.else_);
                    for (k, r) in i.results.iter().enumerate() {
                        if !self.is_bool(*r) {
                            continue;
                        }
                        let inc =
                            [&i.then_, &i.else_]
                                .into_iter()
                                .filter_map(|arm| match arm.last() {
                                    Some(Node::Yield(y)) => Some(self.size.get(&y[k]).copied()),
                                    _ => None,
                                });
                        let s = min_known(inc.collect::<Vec<_>>().into_iter());
                        if let Some(s) = s {
                            if self.size.get(r) != Some(&s) {
                                self.size.insert(*r, s);
                                changed = true;
                            }
                        }
                    }
                }
                Node::Loop(l) => {
                    changed |= self.infer(&l.body);
                    for (k, (p, init)) in l.params.iter().enumerate() {
                        if !self.is_bool(*p) {
                            continue;
                        }
                        let mut inc = vec![self.size.get(init).copied()];
                        collect_jumps(&l.body, false, &mut |v| {
                            inc.push(self.size.get(&v[k]).copied())
                        });
                        if let Some(s) = min_known(inc.into_iter()) {
                            if self.size.get(p) != Some(&s) {
                                self.size.insert(*p, s);
                                changed = true;
                            }
                        }
                    }
                    for (k, r) in l.results.iter().enumerate() {
                        if !self.is_bool(*r) {
                            continue;
                        }
                        let mut inc = vec![];
                        collect_jumps(&l.body, true, &mut |v| {
                            inc.push(self.size.get(&v[k]).copied())
                        });
                        if let Some(s) = min_known(inc.into_iter()) {
                            if self.size.get(r) != Some(&s) {
                                self.size.insert(*r, s);
                                changed = true;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        changed
    }

    /// The value to use where a boolean of `need` bits is required.
    fn fit(&mut self, v: Value, need: u8) -> Value {
        if !self.is_bool(v) {
            return v;
        }
        let have = self.size.get(&v).copied();
        let need = if need == ANY {
            have.unwrap_or(32)
        } else {
            need
        };
        if have == Some(need) {
            return v;
        }
        if let Some(c) = self.conv.get(&(v, need)) {
            return *c;
        }
        let comps = self.values[v.0 as usize].comps;
        let t = Type::bool(need).vec(comps);
        let mut b = Builder::new(&mut self.values, self.after.entry(v).or_default());
        let nv = match self.consts.splat(v) {
            Some(c) => b.konst(t, c),
            None => b.alu(AluOp::B2b, t, &[v]),
        };
        self.size.insert(nv, need);
        self.conv.insert((v, need), nv);
        nv
    }

    fn need(&self, d: Option<Value>) -> u8 {
        d.and_then(|d| self.size.get(&d).copied()).unwrap_or(ANY)
    }

    fn rewrite(&mut self, b: &mut Block) {
        for n in b.iter_mut() {
            match n {
                Node::Instr(i) => {
                    let need = self.need(i.dst);
                    let dst_bool = i.dst.is_some_and(|d| self.is_bool(d));
                    match &mut i.op {
                        Op::Alu(op, srcs) => {
                            let class = op.class();
                            let op = *op;
                            for (k, s) in srcs.iter_mut().enumerate() {
                                let want = match class {
                                    AluClass::Select if k == 0 => ANY,
                                    AluClass::Convert => ANY,
                                    AluClass::Compare if op.info().src == Domain::Bits => {
                                        // Comparing booleans: both sides at the smaller size.
                                        ANY
                                    }
                                    _ if dst_bool => need,
                                    _ => ANY,
                                };
                                *s = self.fit(*s, want);
                            }
                            if class == AluClass::Compare && self.is_bool(srcs[0]) {
                                let a = self.size.get(&srcs[0]).copied().unwrap_or(32);
                                let bb = self.size.get(&srcs[1]).copied().unwrap_or(32);
                                let m = a.min(bb);
                                srcs[0] = self.fit(srcs[0], m);
                                srcs[1] = self.fit(srcs[1], m);
                                if let Some(d) = i.dst {
                                    self.size.insert(d, m.max(16));
                                }
                            }
                        }
                        Op::Vec(srcs) => {
                            for s in srcs.iter_mut() {
                                *s = self.fit(*s, need);
                            }
                        }
                        Op::Insert(v, s, _) => {
                            *v = self.fit(*v, need);
                            *s = self.fit(*s, need);
                        }
                        op => {
                            for s in op.srcs_mut() {
                                *s = self.fit(*s, ANY);
                            }
                        }
                    }
                }
                Node::If(i) => {
                    i.cond = self.fit(i.cond, ANY);
                    let needs: Vec<u8> = i.results.iter().map(|r| self.need(Some(*r))).collect();
                    for arm in [&mut i.then_, &mut i.else_] {
                        self.rewrite(arm);
                        if let Some(Node::Yield(y)) = arm.last_mut() {
                            for (k, v) in y.iter_mut().enumerate() {
                                *v = self.fit(*v, needs[k]);
                            }
                        }
                    }
                }
                Node::Loop(l) => {
                    let pneeds: Vec<u8> = l.params.iter().map(|p| self.need(Some(p.0))).collect();
                    for (k, p) in l.params.iter_mut().enumerate() {
                        p.1 = self.fit(p.1, pneeds[k]);
                    }
                    let rneeds: Vec<u8> = l.results.iter().map(|r| self.need(Some(*r))).collect();
                    self.rewrite(&mut l.body);
                    let mut jumps = Vec::new();
                    collect_jump_ptrs(&mut l.body, &mut jumps);
                    for (is_break, v) in jumps {
                        let needs = if is_break { &rneeds } else { &pneeds };
                        for (k, x) in v.iter_mut().enumerate() {
                            *x = self.fit(*x, needs[k]);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Inserts the conversions after their sources' definitions.
    fn place(&mut self, b: &mut Block) {
        let old = std::mem::take(b);
        for mut n in old {
            let defs: Vec<Value> = match &mut n {
                Node::Instr(i) => i.dst.into_iter().collect(),
                Node::If(i) => {
                    self.place(&mut i.then_);
                    self.place(&mut i.else_);
                    i.results.clone()
                }
                Node::Loop(l) => {
                    self.place(&mut l.body);
                    let mut head = Vec::new();
                    for (p, _) in &l.params {
                        self.take_after(*p, &mut head);
                    }
                    head.append(&mut l.body);
                    l.body = head;
                    l.results.clone()
                }
                _ => vec![],
            };
            b.push(n);
            for d in defs {
                let mut extra = Vec::new();
                self.take_after(d, &mut extra);
                b.extend(extra);
            }
        }
    }

    fn take_after(&mut self, v: Value, out: &mut Block) {
        if let Some(list) = self.after.remove(&v) {
            for n in list {
                let d = match &n {
                    Node::Instr(i) => i.dst,
                    _ => None,
                };
                out.push(n);
                // Conversions of conversions (none today) would follow here.
                if let Some(d) = d {
                    self.take_after(d, out);
                }
            }
        }
    }
}

fn collect_jumps(b: &Block, is_break: bool, f: &mut dyn FnMut(&[Value])) {
    for n in b {
        match n {
            Node::Break(v) if is_break => f(v),
            Node::Continue(v) if !is_break => f(v),
            Node::If(i) => {
                collect_jumps(&i.then_, is_break, f);
                collect_jumps(&i.else_, is_break, f);
            }
            _ => {}
        }
    }
}

fn collect_jump_ptrs<'a>(b: &'a mut Block, out: &mut Vec<(bool, &'a mut Vec<Value>)>) {
    for n in b.iter_mut() {
        match n {
            Node::Break(v) => out.push((true, v)),
            Node::Continue(v) => out.push((false, v)),
            Node::If(i) => {
                collect_jump_ptrs(&mut i.then_, out);
                collect_jump_ptrs(&mut i.else_, out);
            }
            _ => {}
        }
    }
}

/// Lowers 1-bit booleans to hardware sizes. Returns true if there were any.
pub fn lower_bools(f: &mut Function) -> bool {
    if !f.values.iter().any(|t| t.is_bool() && t.bits == 1) {
        return false;
    }
    let consts = f.consts();
    let mut site = HashMap::default();
    f.for_each_node(&mut |n| match n {
        Node::Instr(i) => {
            if let Some(d) = i.dst {
                site.insert(d, DefSite::Instr);
            }
        }
        Node::If(i) => i.results.iter().for_each(|r| {
            site.insert(*r, DefSite::NodeResult);
        }),
        Node::Loop(l) => {
            l.results.iter().for_each(|r| {
                site.insert(*r, DefSite::NodeResult);
            });
            l.params.iter().for_each(|p| {
                site.insert(p.0, DefSite::LoopParam);
            });
        }
        _ => {}
    });
    let mut l = Lower {
        size: HashMap::default(),
        consts,
        after: HashMap::default(),
        conv: HashMap::default(),
        values: f.values.clone(),
        site,
    };
    let body = std::mem::take(&mut f.body);
    let mut guard = 0;
    while l.infer(&body) && guard < 64 {
        guard += 1;
    }
    let mut body = body;
    l.rewrite(&mut body);
    l.place(&mut body);
    let _ = (
        DefSite::Instr,
        DefSite::NodeResult,
        DefSite::LoopParam,
        &l.site,
    );
    f.body = body;
    // Constants keep 32 bits where nothing asked for another size; unused ones die in DCE.
    for (k, t) in l.values.iter_mut().enumerate() {
        if t.is_bool() && t.bits == 1 {
            let s = l.size.get(&Value(k as u32)).copied().unwrap_or(32);
            *t = Type::bool(if s == ANY { 32 } else { s }).vec(t.comps);
        }
    }
    f.values = l.values;
    // Boolean constants were stored as 0/1; widen them to all ones of their size.
    let values = f.values.clone();
    f.for_each_instr_mut(&mut |i| {
        if let (Some(d), Op::Const(c)) = (i.dst, &mut i.op) {
            let t = values[d.0 as usize];
            if t.is_bool() {
                for x in c.iter_mut() {
                    *x = if *x != 0 { t.mask() } else { 0 };
                }
            }
        }
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    #[test]
    fn compare_size_follows_sources_and_mixed_and_takes_smaller() {
        check_pass(
            lower_bools,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 3
            %2:b1 = ilt %0, %1
            %3:f16 = const 0x3c00
            %4:b1 = fge %3, %3
            %5:b1 = iand %2, %4
            %6:i32 = b2i %5
            store ssbo[0] %0, %6 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 3
            %2:b32 = ilt %0, %1
            %7:b16 = b2b %2
            %3:f16 = const 0x3c00
            %4:b16 = fge %3, %3
            %5:b16 = iand %7, %4
            %6:i32 = b2i %5
            store ssbo[0] %0, %6 align 4",
        );
    }

    #[test]
    fn byte_compare_gives_16_bits_and_constants_take_use_size() {
        check_pass(
            lower_bools,
            "%0:i8 = const 1
            %1:b1 = ieq %0, %0
            %2:b1 = const true
            %3:b1 = ior %1, %2
            %4:i32 = b2i %3
            %5:i32 = const 0
            store ssbo[0] %5, %4 align 4",
            "%0:i8 = const 1
            %1:b16 = ieq %0, %0
            %2:b32 = const true
            %6:b16 = const true
            %3:b16 = ior %1, %6
            %4:i32 = b2i %3
            %5:i32 = const 0
            store ssbo[0] %5, %4 align 4",
        );
    }

    #[test]
    fn boolean_xor_of_32_bit_booleans_stays_32_bit() {
        // `a ^^ b` is `ine` of booleans; it used to be sized as a comparison of 1-bit values
        // (16 bits), which the `if` consuming it then inherited.
        check_pass(
            lower_bools,
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 3
            %2:b1 = ilt %0, %1
            %3:b1 = ieq %0, %1
            %4:b1 = ine %2, %3
            %5:b1 = if %4 {
                yield %2
            } else {
                yield %4
            }
            %6:i32 = b2i %5
            store ssbo[0] %0, %6 align 4",
            "%0:i32 = sysval local_invocation_index
            %1:i32 = const 3
            %2:b32 = ilt %0, %1
            %3:b32 = ieq %0, %1
            %4:b32 = ine %2, %3
            %5:b32 = if %4 {
                yield %2
            } else {
                yield %4
            }
            %6:i32 = b2i %5
            store ssbo[0] %0, %6 align 4",
        );
    }

    #[test]
    fn loop_parameter_takes_smallest_incoming_conversion_after_definition() {
        check_pass(
            lower_bools,
            "%0:i32 = const 0
            %1:b1 = ieq %0, %0
            %2:b1 = loop (%3:b1 = %1) {
                %4:i16 = const 1
                %5:b1 = ieq %4, %4
                if %3 {
                    break %3
                }
                continue %5
            }
            %6:i32 = b2i %2
            store ssbo[0] %0, %6 align 4",
            "%0:i32 = const 0
            %1:b32 = ieq %0, %0
            %7:b16 = b2b %1
            %2:b16 = loop (%3:b16 = %7) {
                %4:i16 = const 1
                %5:b16 = ieq %4, %4
                if %3 {
                    break %3
                }
                continue %5
            }
            %6:i32 = b2i %2
            store ssbo[0] %0, %6 align 4",
        );
    }
}
