//! Load/store vectorisation: loads or stores of one memory space at constant distances from
//! the same base value become one vector access of up to four dwords (see
//! [`opt_vectorize`]). Each access is a SEND message of its own in the back end; a vector
//! access is one untyped surface read or write with several channels (docs/gen9.md 4.3), so
//! `o[b + 0] = x; o[b + 1] = y; o[b + 2] = z; o[b + 3] = w` costs one message instead of
//! four.
//!
//! Which accesses may move (the rules of `passes/loads.rs`, whose memory classes this pass
//! shares):
//! - a store moves down to the last store of its group, past instructions that touch no
//!   memory and past loads and stores of other classes (shared memory does not alias a
//!   storage buffer); never past a load or store that may alias it, an atomic, an image
//!   access, a barrier or control flow. Stores to different bases or spaces are never
//!   reordered with each other (two bindings may be views of one buffer);
//! - a load moves up to the first load of its group, past instructions that write no memory
//!   of its class (uniform buffers are read-only in a shader, so nothing stops those);
//! - nothing is merged in memory the module marks `Volatile`, except read-only memory.
//!
//! Robustness: a merged access must behave as its members did when some of them are out of
//! bounds. Binding-table surfaces are bounds-checked per dword (docs/gen9.md 6.3), so a
//! vector write drops exactly the out-of-bounds dwords and a vector read returns 0 in
//! exactly those, as the separate accesses would. Buffers past the binding table are
//! checked by the shader for the whole access, so they are left alone, as are A64
//! (`PhysicalStorageBuffer`) accesses, which nothing checks. Private memory (`local`, the
//! lane's block of scratch) has no bounds to check: a vector access there reads or writes
//! the same dwords of the lane's block as its members did. As in Mesa's vectoriser, a
//! group whose constant offsets straddle the base (some negative, some not) is not merged:
//! if `base - 4` wraps around 2^32 the separate accesses differ from one message whose
//! channel addresses are computed from the lowest one.
//!
//! 8- and 16-bit values (scalars, and vectors of whole dwords) merge into whole dwords at a
//! dword-aligned address (`i8x4` to `i8x16`, `i16x2` to `i16x8`), which the back end reads
//! and writes as one untyped message of up to four dwords, and at any other address into 2
//! or 4 bytes (`i8x2`, `i8x4`, `i16x2`), one word or dword byte scattered message. Such a
//! message may cross a dword boundary; the bounds check is per dword (docs/gen9.md 6.3), so
//! each byte is read or written exactly when its own dword lies inside the surface, as its
//! byte or word access alone would be (and `robustStorageBufferAccessSizeAlignment` is 4,
//! docs/kernel.md). 64-bit values merge in pairs (`f64x2`, `i64x2`: four dword channels,
//! each checked on its own as before).

use super::loads::{class, clobbers, READ_ONLY};
use crate::hash::{HashMap, HashSet};
use crate::hw::GEN9;
use crate::ir::*;

/// Largest merged access in bytes: four dword channels of an untyped message.
const MAX_BYTES: i64 = 16;

/// What the pass knows of a 32-bit integer value used in an offset.
#[derive(Clone, Copy, Default)]
struct Known {
    /// `root + off` (`root` None: the constant `off`).
    root: Option<Value>,
    off: i64,
    /// Known trailing zero bits.
    tz: u32,
}

/// One load or store that may join a group.
#[derive(Clone, Copy)]
struct Access {
    node: usize,
    off: i64,
    /// The loaded or stored value's type.
    ty: Type,
    /// Load: the destination; store: the stored value.
    value: Value,
    offset: Value,
    align: u32,
}

impl Access {
    fn end(&self) -> i64 {
        self.off + i64::from(self.ty.bytes())
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    space: Space,
    root: Option<Value>,
}

/// A rewrite of one block: nodes inserted before an index, indices removed.
#[derive(Default)]
struct Plan {
    insert: HashMap<usize, Vec<Node>>,
    remove: HashSet<usize>,
}

struct Vectorize<'a> {
    values: &'a mut Vec<Type>,
    known: HashMap<Value, Known>,
    volatile: bool,
    /// The function's `readonly_buffers` (`loads::class`).
    readonly: &'a [u32],
    changed: bool,
}

/// Spaces whose accesses are bounds-checked per dword, or not at all by definition (shared
/// and private memory): the only ones merged (module doc).
fn mergeable_space(s: Space) -> bool {
    let max = GEN9.max_descriptor_btis();
    match s {
        Space::Ssbo(b) | Space::Ubo(b) => b < max,
        Space::SsboArray(x) | Space::UboArray(x) => x.base + x.count <= max,
        Space::Shared | Space::Local => true,
        Space::Push | Space::Global(_) => false,
    }
}

/// 32- and 64-bit values (a 64-bit component is two dword channels of the message), and
/// 8/16-bit scalars and vectors of whole dwords (`i8x4`, `f16x2`, `i16x4`; see `runs`).
fn mergeable_type(t: Type) -> bool {
    t.kind != Kind::Bool
        && (matches!(t.bits, 32 | 64)
            || (matches!(t.bits, 8 | 16) && (t.comps == 1 || t.bytes().is_multiple_of(4))))
}

impl Vectorize<'_> {
    fn new_value(&mut self, t: Type) -> Value {
        self.values.push(t);
        Value(self.values.len() as u32 - 1)
    }

    /// Records what `i` tells about offsets (constants, `x + c`, alignment).
    fn learn(&mut self, i: &Instr) {
        let Some(d) = i.dst else { return };
        if self.values[d.0 as usize] != Type::I32 {
            return;
        }
        let get = |v: &Value| self.known.get(v).copied();
        let plain = |v: Value| Known {
            root: Some(v),
            off: 0,
            tz: 0,
        };
        let k = match &i.op {
            Op::Const(c) => {
                let x = i64::from(c[0] as u32 as i32);
                Known {
                    root: None,
                    off: x,
                    tz: (c[0] as u32).trailing_zeros(),
                }
            }
            Op::Alu(op, s) if s.len() == 2 => {
                let (a, b) = (get(&s[0]), get(&s[1]));
                let tz = |k: Option<Known>| k.map_or(0, |k| k.tz);
                let is_const = |k: Option<Known>| k.filter(|k| k.root.is_none()).map(|k| k.off);
                match op {
                    AluOp::Iadd | AluOp::Isub => {
                        let sign = if *op == AluOp::Isub { -1 } else { 1 };
                        let tzs = tz(a).min(tz(b));
                        match (is_const(a), is_const(b)) {
                            (_, Some(c)) => {
                                let base = a.unwrap_or_else(|| plain(s[0]));
                                Known {
                                    root: base.root,
                                    off: base.off + sign * c,
                                    tz: tzs,
                                }
                            }
                            (Some(c), None) if sign == 1 => {
                                let base = b.unwrap_or_else(|| plain(s[1]));
                                Known {
                                    root: base.root,
                                    off: base.off + c,
                                    tz: tzs,
                                }
                            }
                            _ => Known {
                                tz: tzs,
                                ..plain(d)
                            },
                        }
                    }
                    AluOp::Imul => Known {
                        tz: (tz(a) + tz(b)).min(32),
                        ..plain(d)
                    },
                    AluOp::Ishl => match is_const(b) {
                        Some(c) if (0..32).contains(&c) => Known {
                            tz: (tz(a) + c as u32).min(32),
                            ..plain(d)
                        },
                        _ => plain(d),
                    },
                    AluOp::Iand => Known {
                        tz: tz(a).max(tz(b)),
                        ..plain(d)
                    },
                    AluOp::Ior => Known {
                        tz: tz(a).min(tz(b)),
                        ..plain(d)
                    },
                    _ => plain(d),
                }
            }
            _ => plain(d),
        };
        // Keep offsets far from overflow: the constants of real offsets are small.
        if k.off.abs() < 1 << 30 {
            self.known.insert(d, k);
        }
    }

    fn known(&self, v: Value) -> Known {
        self.known.get(&v).copied().unwrap_or(Known {
            root: Some(v),
            off: 0,
            tz: 0,
        })
    }

    /// The group key and access of a load or store that may be merged.
    fn candidate(&self, node: usize, i: &Instr) -> Option<(Key, Access, bool)> {
        let (space, offset, value, align, store) = match (&i.op, i.dst) {
            (
                Op::Load {
                    space,
                    offset,
                    align,
                },
                Some(d),
            ) => (*space, *offset, d, *align, false),
            (
                Op::Store {
                    space,
                    offset,
                    value,
                    align,
                },
                None,
            ) => (*space, *offset, *value, *align, true),
            _ => return None,
        };
        let ty = self.values[value.0 as usize];
        if !mergeable_space(space)
            || !mergeable_type(ty)
            || (self.volatile && class(space, self.readonly) != READ_ONLY)
        {
            return None;
        }
        let k = self.known(offset);
        let key = Key {
            space,
            root: k.root,
        };
        let a = Access {
            node,
            off: k.off,
            ty,
            value,
            offset,
            align,
        };
        Some((key, a, store))
    }

    fn block(&mut self, b: &mut Block) {
        let mut loads: HashMap<Key, Vec<Access>> = HashMap::default();
        let mut stores: Option<(Key, Vec<Access>)> = None;
        let mut plan = Plan::default();
        for (k, n) in b.iter_mut().enumerate() {
            let i = match n {
                Node::Instr(i) => i,
                Node::If(x) => {
                    self.close_loads(&mut loads, &mut plan, u8::MAX);
                    self.flush_stores(&mut stores, &mut plan);
                    self.block(&mut x.then_);
                    self.block(&mut x.else_);
                    continue;
                }
                Node::Loop(l) => {
                    self.close_loads(&mut loads, &mut plan, u8::MAX);
                    self.flush_stores(&mut stores, &mut plan);
                    self.block(&mut l.body);
                    continue;
                }
                Node::Break(_) | Node::Continue(_) | Node::Yield(_) => {
                    self.close_loads(&mut loads, &mut plan, u8::MAX);
                    self.flush_stores(&mut stores, &mut plan);
                    continue;
                }
            };
            self.learn(i);
            let cand = self.candidate(k, i);
            // Pending stores may not sink past anything that may touch their memory.
            let ro = self.readonly;
            let store_class = stores.as_ref().map_or(0, |(key, _)| class(key.space, ro));
            let conflicts_stores = match &i.op {
                Op::Load { space, .. } => class(*space, ro) & store_class != 0,
                Op::Store { .. } => match (&cand, &stores) {
                    (Some((key, a, _)), Some((skey, members))) => {
                        key != skey || members.iter().any(|m| m.off < a.end() && a.off < m.end())
                    }
                    _ => clobbers(&i.op, ro) & store_class != 0,
                },
                Op::Atomic { .. } | Op::Barrier { .. } | Op::Image(..) => true,
                op => clobbers(op, ro) != 0,
            };
            if conflicts_stores {
                self.flush_stores(&mut stores, &mut plan);
            }
            // Later loads may not rise above a write of their memory.
            let c = clobbers(&i.op, ro);
            if c != 0 {
                self.close_loads(&mut loads, &mut plan, c);
            }
            if let Some((key, a, store)) = cand {
                if store {
                    stores.get_or_insert_with(|| (key, Vec::new())).1.push(a);
                } else {
                    loads.entry(key).or_default().push(a);
                }
            }
        }
        self.close_loads(&mut loads, &mut plan, u8::MAX);
        self.flush_stores(&mut stores, &mut plan);
        if plan.remove.is_empty() {
            return;
        }
        self.changed = true;
        let old = std::mem::take(b);
        for (k, n) in old.into_iter().enumerate() {
            if let Some(new) = plan.insert.remove(&k) {
                b.extend(new);
            }
            if !plan.remove.contains(&k) {
                b.push(n);
            }
        }
    }

    /// Ends the load groups of the classes in `c` (`u8::MAX`: all).
    fn close_loads(&mut self, loads: &mut HashMap<Key, Vec<Access>>, plan: &mut Plan, c: u8) {
        let keys: Vec<Key> = loads
            .keys()
            .filter(|k| c == u8::MAX || class(k.space, self.readonly) & c != 0)
            .copied()
            .collect();
        for key in keys {
            if let Some(members) = loads.remove(&key) {
                for run in self.runs(key, members) {
                    self.merge_loads(key, &run, plan);
                }
            }
        }
    }

    fn flush_stores(&mut self, stores: &mut Option<(Key, Vec<Access>)>, plan: &mut Plan) {
        if let Some((key, members)) = stores.take() {
            for run in self.runs(key, members) {
                self.merge_stores(key, &run, plan);
            }
        }
    }

    /// Splits a group into runs of adjacent accesses of one component type that make one
    /// vector access each (two members or more).
    fn runs(&self, key: Key, mut members: Vec<Access>) -> Vec<Vec<Access>> {
        if members.len() < 2 {
            return Vec::new();
        }
        members.sort_by_key(|m| (m.off, m.node));
        let root_tz = key.root.map_or(32, |r| self.known(r).tz);
        let mut out = Vec::new();
        let mut k = 0;
        while k < members.len() {
            let first = members[k];
            let elem = first.ty.scalar_type();
            let mut run = vec![first];
            let mut end = first.end();
            let narrow = elem.bits < 32;
            // Trailing zero bits of the run's start address.
            let start_tz = root_tz.min(first.off.trailing_zeros());
            let dword = start_tz >= 2;
            // 8/16-bit runs: whole dwords at a dword-aligned address (one untyped message of
            // up to four dwords), else 2 or 4 bytes (one byte scattered message, see the
            // module doc).
            let mut limit = if narrow && !dword { 4 } else { MAX_BYTES };
            // A run that starts inside a dword whose boundaries are known (a dword-aligned
            // base) and goes on for two dwords or more past the next boundary: its head up
            // to that boundary is a run of its own, so that the rest is dword-aligned and
            // moves in untyped messages of up to four dwords instead of 4-byte pieces.
            if narrow && !dword && root_tz >= 2 {
                let boundary = first.off + 4 - first.off.rem_euclid(4);
                let mut ext = first.end();
                for m in &members[k + 1..] {
                    if m.off != ext || m.ty.scalar_type() != elem {
                        break;
                    }
                    ext = m.end();
                }
                if ext - boundary >= 8 {
                    limit = boundary - first.off;
                }
            }
            for m in &members[k + 1..] {
                if m.off != end || m.ty.scalar_type() != elem || m.end() - first.off > limit {
                    break;
                }
                let comps: u32 = run.iter().map(|r| u32::from(r.ty.comps)).sum();
                if !narrow && comps + u32::from(m.ty.comps) > 4 {
                    break;
                }
                run.push(*m);
                end = m.end();
            }
            // Cut a narrow run to its longest prefix of a size one message moves.
            if narrow {
                let fits = |bytes: i64| bytes == 2 || bytes % 4 == 0 && (dword || bytes == 4);
                let mut bytes = 0;
                let mut keep = 0;
                for (j, m) in run.iter().enumerate() {
                    bytes += i64::from(m.ty.bytes());
                    if fits(bytes) {
                        keep = j + 1;
                    }
                }
                run.truncate(keep);
            }
            let straddles = first.off < 0 && run.last().is_some_and(|m| m.off >= 0);
            k += run.len().max(1);
            if run.len() >= 2 && !straddles {
                out.push(run);
            }
        }
        out
    }

    /// The alignment of the run's start address.
    fn align(&self, key: Key, first: &Access) -> u32 {
        let root_tz = key.root.map_or(32, |r| self.known(r).tz);
        let off_tz = if first.off == 0 {
            32
        } else {
            first.off.trailing_zeros()
        };
        let tz = root_tz.min(off_tz).min(4);
        first.align.max(1 << tz)
    }

    fn vec_type(run: &[Access]) -> Type {
        let comps: u32 = run.iter().map(|m| u32::from(m.ty.comps)).sum();
        run[0].ty.scalar_type().vec(comps as u8)
    }

    fn merge_stores(&mut self, key: Key, run: &[Access], plan: &mut Plan) {
        let t = Self::vec_type(run);
        let last = run.iter().map(|m| m.node).max().expect("a run has members");
        let mut nodes = Vec::new();
        let mut comps = Vec::new();
        for m in run {
            if m.ty.comps == 1 {
                comps.push(m.value);
                continue;
            }
            for c in 0..m.ty.comps {
                let e = self.new_value(m.ty.scalar_type());
                nodes.push(Node::Instr(Instr::new(Some(e), Op::Extract(m.value, c))));
                comps.push(e);
            }
        }
        let v = self.new_value(t);
        nodes.push(Node::Instr(Instr::new(Some(v), Op::Vec(comps))));
        nodes.push(Node::Instr(Instr::new(
            None,
            Op::Store {
                space: key.space,
                offset: run[0].offset,
                value: v,
                align: self.align(key, &run[0]),
            },
        )));
        plan.insert.entry(last).or_default().extend(nodes);
        plan.remove.extend(run.iter().map(|m| m.node));
    }

    fn merge_loads(&mut self, key: Key, run: &[Access], plan: &mut Plan) {
        let t = Self::vec_type(run);
        let first = run.iter().map(|m| m.node).min().expect("a run has members");
        let mut nodes = Vec::new();
        // The lowest member's offset value is defined before the first load only when that
        // member is the first; otherwise the address is computed again from the base.
        let offset = if run[0].node == first {
            run[0].offset
        } else if let (Some(r), 0) = (key.root, run[0].off) {
            r
        } else {
            let c = self.new_value(Type::I32);
            nodes.push(Node::Instr(Instr::new(
                Some(c),
                Op::Const(vec![u64::from(run[0].off as i32 as u32)]),
            )));
            match key.root {
                Some(r) => {
                    let a = self.new_value(Type::I32);
                    nodes.push(Node::Instr(Instr::new(
                        Some(a),
                        Op::Alu(AluOp::Iadd, vec![r, c]),
                    )));
                    a
                }
                None => c,
            }
        };
        let v = self.new_value(t);
        nodes.push(Node::Instr(Instr::new(
            Some(v),
            Op::Load {
                space: key.space,
                offset,
                align: self.align(key, &run[0]),
            },
        )));
        let mut c = 0u8;
        for m in run {
            if m.ty.comps == 1 {
                nodes.push(Node::Instr(Instr::new(Some(m.value), Op::Extract(v, c))));
                c += 1;
                continue;
            }
            let mut parts = Vec::new();
            for _ in 0..m.ty.comps {
                let e = self.new_value(m.ty.scalar_type());
                nodes.push(Node::Instr(Instr::new(Some(e), Op::Extract(v, c))));
                parts.push(e);
                c += 1;
            }
            nodes.push(Node::Instr(Instr::new(Some(m.value), Op::Vec(parts))));
        }
        plan.insert.entry(first).or_default().extend(nodes);
        plan.remove.extend(run.iter().map(|m| m.node));
    }
}

/// Merges loads and stores of one space at constant distances from one base value into
/// vector accesses of up to four dwords, under the ordering and robustness rules of the
/// module doc. Returns true if anything changed.
pub fn opt_vectorize(f: &mut Function) -> bool {
    let mut values = std::mem::take(&mut f.values);
    let mut cx = Vectorize {
        values: &mut values,
        known: HashMap::default(),
        volatile: f.volatile_memory,
        readonly: &f.readonly_buffers,
        changed: false,
    };
    cx.block(&mut f.body);
    let changed = cx.changed;
    f.values = values;
    if changed {
        whole_vectors(f);
    }
    changed
}

/// Uses of a `vec` of every component of one value `v` in order (`extract v, 0`, ...,
/// `extract v, n-1`, as a merged load's components stored again by a merged store) use `v`
/// itself; the `vec`, a copy per component, is then dead.
fn whole_vectors(f: &mut Function) {
    let mut extracts: HashMap<Value, (Value, u8)> = HashMap::default();
    let mut vecs: Vec<(Value, Vec<Value>)> = Vec::new();
    f.for_each_node(&mut |n| {
        if let Node::Instr(i) = n {
            match (&i.op, i.dst) {
                (Op::Extract(v, c), Some(d)) => {
                    extracts.insert(d, (*v, *c));
                }
                (Op::Vec(s), Some(d)) => vecs.push((d, s.clone())),
                _ => {}
            }
        }
    });
    let mut map: HashMap<Value, Value> = HashMap::default();
    for (d, srcs) in vecs {
        let Some(&(v, _)) = srcs.first().and_then(|c| extracts.get(c)) else {
            continue;
        };
        let in_order = srcs
            .iter()
            .enumerate()
            .all(|(k, c)| extracts.get(c) == Some(&(v, k as u8)));
        if in_order && f.ty(v) == f.ty(d) {
            // `v` may itself be such a `vec` (defined earlier, so already mapped).
            let v = map.get(&v).copied().unwrap_or(v);
            map.insert(d, v);
        }
    }
    if map.is_empty() {
        return;
    }
    f.rewrite_uses(&|x| map.get(&x).copied().unwrap_or(x));
    // The replaced `vec`s have no uses left.
    fn drop_dead(b: &mut Block, dead: &HashMap<Value, Value>) {
        b.retain(|n| !matches!(n, Node::Instr(i) if i.dst.is_some_and(|d| dead.contains_key(&d))));
        for n in b.iter_mut() {
            match n {
                Node::If(x) => {
                    drop_dead(&mut x.then_, dead);
                    drop_dead(&mut x.else_, dead);
                }
                Node::Loop(l) => drop_dead(&mut l.body, dead),
                _ => {}
            }
        }
    }
    drop_dead(&mut f.body, &map);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::check_pass;

    #[test]
    fn adjacent_stores_become_one_vector_store() {
        check_pass(
            opt_vectorize,
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = const 8
            %4:i32 = iadd %2, %1
            %5:i32 = iadd %2, %3
            %6:f32 = load ubo[0] %2 align 4
            store ssbo[1] %2, %6 align 4
            %7:f32 = fadd %6, %6
            store ssbo[1] %4, %7 align 4
            %8:f32 = fmul %7, %6
            store ssbo[1] %5, %8 align 4
            ",
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = const 8
            %4:i32 = iadd %2, %1
            %5:i32 = iadd %2, %3
            %6:f32 = load ubo[0] %2 align 4
            %7:f32 = fadd %6, %6
            %8:f32 = fmul %7, %6
            %9:f32x3 = vec %6, %7, %8
            store ssbo[1] %2, %9 align 4
            ",
        );
    }

    #[test]
    fn stores_do_not_sink_past_a_load_that_may_alias() {
        // Bindings 1 and 2 may be one buffer: the load must see the first store.
        let text = "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            store ssbo[1] %2, %0 align 4
            %4:i32 = load ssbo[2] %2 align 4
            store ssbo[1] %3, %4 align 4
            ";
        check_pass(opt_vectorize, text, text);
    }

    #[test]
    fn stores_sink_past_shared_memory_and_uniform_loads() {
        check_pass(
            opt_vectorize,
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 16
            %2:i32 = imul %0, %1
            %3:i32 = const 4
            %4:i32 = iadd %2, %3
            store ssbo[1] %2, %0 align 4
            %5:i32 = load shared %2 align 4
            %6:i32 = load ubo[0] %2 align 4
            %7:i32 = iadd %5, %6
            store ssbo[1] %4, %7 align 4
            ",
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 16
            %2:i32 = imul %0, %1
            %3:i32 = const 4
            %4:i32 = iadd %2, %3
            %5:i32 = load shared %2 align 4
            %6:i32 = load ubo[0] %2 align 4
            %7:i32 = iadd %5, %6
            %8:i32x2 = vec %0, %7
            store ssbo[1] %2, %8 align 16
            ",
        );
    }

    #[test]
    fn stores_to_two_bindings_keep_their_order() {
        // ssbo[1] and ssbo[2] may be one buffer: the store to 2 stays between.
        let text = "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            store ssbo[1] %2, %0 align 4
            store ssbo[2] %2, %0 align 4
            store ssbo[1] %3, %0 align 4
            ";
        check_pass(opt_vectorize, text, text);
    }

    #[test]
    fn adjacent_loads_become_one_vector_load_at_the_first() {
        check_pass(
            opt_vectorize,
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            %4:i32 = load ssbo[0] %3 align 4
            store shared %2, %4 align 4
            %5:i32 = load ssbo[0] %2 align 4
            %6:i32 = iadd %4, %5
            store ssbo[1] %2, %6 align 4
            ",
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            %9:i32x2 = load ssbo[0] %2 align 4
            %5:i32 = extract %9, 0
            %4:i32 = extract %9, 1
            store shared %2, %4 align 4
            %6:i32 = iadd %4, %5
            store ssbo[1] %2, %6 align 4
            ",
        );
    }

    #[test]
    fn loads_do_not_rise_above_a_store_that_may_alias() {
        let text = "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            %4:i32 = load ssbo[0] %2 align 4
            store ssbo[1] %2, %4 align 4
            %5:i32 = load ssbo[0] %3 align 4
            store ssbo[1] %3, %5 align 4
            ";
        check_pass(opt_vectorize, text, text);
    }

    #[test]
    fn bytes_merge_into_a_dword_at_a_dword_aligned_address_and_pairs_elsewhere() {
        check_pass(
            opt_vectorize,
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 8
            %2:i32 = imul %0, %1
            %3:i32 = const 1
            %4:i32 = const 2
            %5:i32 = const 3
            %6:i32 = const 4
            %7:i32 = iadd %2, %3
            %8:i32 = iadd %2, %4
            %9:i32 = iadd %2, %5
            %10:i32 = iadd %2, %6
            %11:i32 = iadd %10, %3
            %12:i8 = load ssbo[0] %0 align 1
            store ssbo[1] %2, %12 align 1
            store ssbo[1] %7, %12 align 1
            store ssbo[1] %8, %12 align 1
            store ssbo[1] %9, %12 align 1
            store ssbo[1] %11, %12 align 1
            store ssbo[1] %10, %12 align 1
            ",
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 8
            %2:i32 = imul %0, %1
            %3:i32 = const 1
            %4:i32 = const 2
            %5:i32 = const 3
            %6:i32 = const 4
            %7:i32 = iadd %2, %3
            %8:i32 = iadd %2, %4
            %9:i32 = iadd %2, %5
            %10:i32 = iadd %2, %6
            %11:i32 = iadd %10, %3
            %12:i8 = load ssbo[0] %0 align 1
            %13:i8x4 = vec %12, %12, %12, %12
            store ssbo[1] %2, %13 align 8
            %14:i8x2 = vec %12, %12
            store ssbo[1] %10, %14 align 4
            ",
        );
        // Without a known alignment three bytes are a pair (one word byte scattered
        // message, which may cross a dword) and a byte; a lone byte stays as it is.
        check_pass(
            opt_vectorize,
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 1
            %2:i32 = iadd %0, %1
            %3:i8 = load ssbo[0] %0 align 1
            %4:i32 = const 2
            %5:i32 = iadd %0, %4
            store ssbo[1] %0, %3 align 1
            store ssbo[1] %2, %3 align 1
            store ssbo[1] %5, %3 align 1
            store ssbo[2] %0, %3 align 1
            ",
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 1
            %2:i32 = iadd %0, %1
            %3:i8 = load ssbo[0] %0 align 1
            %4:i32 = const 2
            %5:i32 = iadd %0, %4
            %6:i8x2 = vec %3, %3
            store ssbo[1] %0, %6 align 1
            store ssbo[1] %5, %3 align 1
            store ssbo[2] %0, %3 align 1
            ",
        );
    }

    #[test]
    fn bytes_at_an_even_base_merge_in_fours() {
        // `b = i * 42` is only known even: four bytes (or two 16-bit values) from `b` are one
        // dword byte scattered message that may cross a dword; the byte after a gap stays.
        check_pass(
            opt_vectorize,
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 42
            %2:i32 = imul %0, %1
            %3:i32 = const 1
            %4:i32 = const 2
            %5:i32 = const 3
            %6:i32 = const 5
            %7:i32 = iadd %2, %3
            %8:i32 = iadd %2, %4
            %9:i32 = iadd %2, %5
            %10:i32 = iadd %2, %6
            %11:i8 = load ssbo[0] %0 align 1
            store ssbo[1] %2, %11 align 1
            store ssbo[1] %7, %11 align 1
            store ssbo[1] %8, %11 align 1
            store ssbo[1] %9, %11 align 1
            store ssbo[1] %10, %11 align 1
            %12:i16 = load ssbo[0] %0 align 2
            store ssbo[2] %2, %12 align 2
            store ssbo[2] %8, %12 align 2
            ",
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 42
            %2:i32 = imul %0, %1
            %3:i32 = const 1
            %4:i32 = const 2
            %5:i32 = const 3
            %6:i32 = const 5
            %7:i32 = iadd %2, %3
            %8:i32 = iadd %2, %4
            %9:i32 = iadd %2, %5
            %10:i32 = iadd %2, %6
            %11:i8 = load ssbo[0] %0 align 1
            %13:i8x4 = vec %11, %11, %11, %11
            store ssbo[1] %2, %13 align 2
            store ssbo[1] %10, %11 align 1
            %12:i16 = load ssbo[0] %0 align 2
            %14:i16x2 = vec %12, %12
            store ssbo[2] %2, %14 align 2
            ",
        );
    }

    #[test]
    fn narrow_runs_at_a_dword_aligned_address_fill_four_dwords() {
        // Eight 16-bit stores at `16 * i` are one `i16x8` (four dwords); four `i8x4` loads
        // at `16 * i` are one `i8x16`, each member rebuilt from its components.
        let mut text = String::from(
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 16
            %2:i32 = imul %0, %1
            %3:i16 = load ubo[0] %0 align 2
            ",
        );
        for k in 1..8 {
            text += &format!(
                "%{c}:i32 = const {o}\n%{a}:i32 = iadd %2, %{c}\n",
                c = 2 * k + 2,
                a = 2 * k + 3,
                o = 2 * k
            );
        }
        text += "store ssbo[1] %2, %3 align 2\n";
        for k in 1..8 {
            text += &format!("store ssbo[1] %{}, %3 align 2\n", 2 * k + 3);
        }
        // %7, %11, %15 are 4, 8, 12 bytes past %2.
        text += "
            %20:i8x4 = load ssbo[2] %2 align 4
            %21:i8x4 = load ssbo[2] %7 align 4
            %22:i8x4 = load ssbo[2] %11 align 4
            %23:i8x4 = load ssbo[2] %15 align 4
            store ssbo[3] %15, %20 align 4
            store ssbo[3] %11, %21 align 4
            store ssbo[3] %7, %22 align 4
            store ssbo[3] %2, %23 align 4
            ";
        let mut f = crate::parse::parse_function(&text).unwrap();
        assert!(opt_vectorize(&mut f));
        crate::validate::validate(&f).unwrap();
        let out = f.to_string();
        assert!(
            out.contains(":i16x8 = vec %3, %3, %3, %3, %3, %3, %3, %3"),
            "{out}"
        );
        assert!(out.contains(":i8x16 = load ssbo[2] %2 align 16"), "{out}");
        assert_eq!(out.matches("store ssbo[1]").count(), 1, "{out}");
        assert_eq!(out.matches("load ssbo[2]").count(), 1, "{out}");
    }

    #[test]
    fn sixty_four_bit_pairs_merge() {
        check_pass(
            opt_vectorize,
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 16
            %2:i32 = imul %0, %1
            %3:i32 = const 8
            %4:i32 = iadd %2, %3
            %5:f64 = load ssbo[0] %2 align 8
            %6:f64 = load ssbo[0] %4 align 8
            %7:f64 = fadd %5, %6
            store ssbo[1] %2, %7 align 8
            store ssbo[1] %4, %5 align 8
            ",
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 16
            %2:i32 = imul %0, %1
            %3:i32 = const 8
            %4:i32 = iadd %2, %3
            %8:f64x2 = load ssbo[0] %2 align 16
            %5:f64 = extract %8, 0
            %6:f64 = extract %8, 1
            %7:f64 = fadd %5, %6
            %9:f64x2 = vec %7, %5
            store ssbo[1] %2, %9 align 16
            ",
        );
    }

    #[test]
    fn offsets_on_both_sides_of_the_base_are_not_merged() {
        let text = "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = const -4
            %4:i32 = iadd %2, %3
            store ssbo[1] %4, %0 align 4
            store ssbo[1] %2, %0 align 4
            ";
        check_pass(opt_vectorize, text, text);
    }

    #[test]
    fn volatile_memory_keeps_buffer_accesses_apart() {
        let text = "
            volatile_memory
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            store ssbo[1] %2, %0 align 4
            store ssbo[1] %3, %0 align 4
            ";
        check_pass(opt_vectorize, text, text);
    }

    #[test]
    fn private_memory_at_constant_offsets_merges() {
        // The stores merge before the dynamic load of the same memory; the loads after it
        // merge at the first.
        check_pass(
            opt_vectorize,
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:i32 = const 4
            %3:i32 = const 8
            store local %1, %0 align 4
            store local %2, %0 align 4
            store local %3, %0 align 4
            %4:i32 = const 3
            %5:i32 = iand %0, %4
            %6:i32 = const 2
            %7:i32 = ishl %5, %6
            %8:i32 = load local %7 align 4
            store local %2, %8 align 4
            %9:i32 = load local %1 align 4
            %10:i32 = load local %2 align 4
            %11:i32 = iadd %9, %10
            store ssbo[0] %1, %11 align 4
            ",
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 0
            %2:i32 = const 4
            %3:i32 = const 8
            %12:i32x3 = vec %0, %0, %0
            store local %1, %12 align 16
            %4:i32 = const 3
            %5:i32 = iand %0, %4
            %6:i32 = const 2
            %7:i32 = ishl %5, %6
            %8:i32 = load local %7 align 4
            store local %2, %8 align 4
            %13:i32x2 = load local %1 align 16
            %9:i32 = extract %13, 0
            %10:i32 = extract %13, 1
            %11:i32 = iadd %9, %10
            store ssbo[0] %1, %11 align 4
            ",
        );
    }

    #[test]
    fn loads_of_a_non_writable_buffer_rise_above_stores() {
        // Binding 0 is NonWritable: no store writes it, so the second load joins the first
        // across the store to binding 1.
        check_pass(
            opt_vectorize,
            "
            readonly_buffers 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            %4:i32 = load ssbo[0] %2 align 4
            store ssbo[1] %2, %4 align 4
            %5:i32 = load ssbo[0] %3 align 4
            store ssbo[1] %3, %5 align 4
            ",
            "
            readonly_buffers 0
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            %6:i32x2 = load ssbo[0] %2 align 4
            %4:i32 = extract %6, 0
            %5:i32 = extract %6, 1
            store ssbo[1] %2, %6 align 4
            ",
        );
    }

    #[test]
    fn a_merged_store_of_a_loaded_vector_stores_the_vector() {
        // The stored components are the merged load's, in order: the store takes the load's
        // vector, no `vec` copy. In another order they are rebuilt with a `vec`.
        let text = |a: u32, b: u32| {
            format!(
                "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            %4:i32 = load ubo[0] %2 align 4
            %5:i32 = load ubo[0] %3 align 4
            store ssbo[1] %2, %{a} align 4
            store ssbo[1] %3, %{b} align 4
            "
            )
        };
        let head = "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = imul %0, %1
            %3:i32 = iadd %2, %1
            %6:i32x2 = load ubo[0] %2 align 4
            %4:i32 = extract %6, 0
            %5:i32 = extract %6, 1
            ";
        check_pass(
            opt_vectorize,
            &text(4, 5),
            &format!("{head}store ssbo[1] %2, %6 align 4\n"),
        );
        check_pass(
            opt_vectorize,
            &text(5, 4),
            &format!("{head}%7:i32x2 = vec %5, %4\nstore ssbo[1] %2, %7 align 4\n"),
        );
    }

    #[test]
    fn a_run_inside_a_known_dword_leaves_its_head_and_aligns_the_rest() {
        // Nine 16-bit stores at `16 * i + 2` .. `16 * i + 18`: the base is dword-aligned, so
        // the first value (up to the dword boundary) stays alone and the other eight are one
        // `i16x8` at `16 * i + 4`, not five 4-byte pieces.
        let mut text = String::from(
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 16
            %2:i32 = imul %0, %1
            %3:i16 = load ubo[0] %0 align 2
            ",
        );
        for k in 1..10 {
            text += &format!(
                "%{c}:i32 = const {o}\n%{a}:i32 = iadd %2, %{c}\nstore ssbo[1] %{a}, %3 align 2\n",
                c = 2 * k + 2,
                a = 2 * k + 3,
                o = 2 * k
            );
        }
        let mut f = crate::parse::parse_function(&text).unwrap();
        assert!(opt_vectorize(&mut f));
        crate::validate::validate(&f).unwrap();
        let out = f.to_string();
        assert!(out.contains("store ssbo[1] %5, %3 align 2"), "{out}");
        assert!(out.contains(":i16x8 = vec %3"), "{out}");
        assert!(out.contains("store ssbo[1] %7, %"), "{out}");
        assert_eq!(out.matches("store ssbo[1]").count(), 2, "{out}");
    }

    #[test]
    fn runs_are_at_most_four_dwords() {
        let mut f = crate::parse::parse_function(
            "
            %0:i32 = sysval local_invocation_index
            %1:i32 = const 4
            %2:i32 = const 8
            %3:i32 = const 12
            %4:i32 = const 16
            %5:i32 = const 20
            store ssbo[1] %1, %0 align 4
            store ssbo[1] %2, %0 align 4
            store ssbo[1] %3, %0 align 4
            store ssbo[1] %4, %0 align 4
            store ssbo[1] %5, %0 align 4
            ",
        )
        .unwrap();
        assert!(opt_vectorize(&mut f));
        crate::validate::validate(&f).unwrap();
        let text = f.to_string();
        assert!(
            text.contains("store ssbo[1] %1, %") && text.contains("align 4"),
            "{text}"
        );
        assert_eq!(text.matches("store").count(), 2, "{text}");
        assert!(text.contains(":i32x4 = vec %0, %0, %0, %0"), "{text}");
    }
}
