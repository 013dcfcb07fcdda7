//! The one IR builder: everything that creates IR instructions (the front end, GLSL.std.450
//! expansion and the lowering passes) goes through it.
//!
//! A [`Builder`] borrows a function's value-type table (new values get their type there) and
//! an insertion block (instructions are appended to it). It is cheap to make, so a pass makes
//! one wherever it emits; code that nests blocks swaps the insertion block's contents with
//! [`Builder::take_block`] / [`Builder::put_block`].

use crate::ir::{AluOp, Block, Function, Instr, Node, Op, Type, Value};

/// Emits IR into one block of a function; see the module documentation.
pub struct Builder<'a> {
    values: &'a mut Vec<Type>,
    block: &'a mut Block,
}

impl<'a> Builder<'a> {
    /// A builder that appends to `block`, with the value types of the function in `values`
    /// (`Function::values`).
    pub fn new(values: &'a mut Vec<Type>, block: &'a mut Block) -> Self {
        Builder { values, block }
    }

    /// A new value of type `t`, defined by nothing yet (loop parameters and results,
    /// `if` results).
    pub fn new_value(&mut self, t: Type) -> Value {
        self.values.push(t);
        Value(self.values.len() as u32 - 1)
    }

    pub fn ty(&self, v: Value) -> Type {
        self.values[v.0 as usize]
    }

    /// Appends a node (control flow, or an instruction built elsewhere).
    pub fn push(&mut self, n: Node) {
        self.block.push(n);
    }

    /// The last node of the insertion block (a pass may retarget the instruction it just
    /// emitted).
    pub fn last_mut(&mut self) -> Option<&mut Node> {
        self.block.last_mut()
    }

    /// Appends `op` defining a new value of type `t`.
    pub fn emit(&mut self, t: Type, op: Op) -> Value {
        let d = self.new_value(t);
        self.push(Node::Instr(Instr::new(Some(d), op)));
        d
    }

    /// Appends `op` defining an existing value `d` (a pass that rewrites an instruction in
    /// place keeps its destination).
    pub fn emit_to(&mut self, d: Value, op: Op) {
        self.push(Node::Instr(Instr::new(Some(d), op)));
    }

    /// Appends `op` without a result (stores, barriers, ...).
    pub fn emit_void(&mut self, op: Op) {
        self.push(Node::Instr(Instr::new(None, op)));
    }

    pub fn alu(&mut self, op: AluOp, t: Type, srcs: &[Value]) -> Value {
        self.emit(t, Op::Alu(op, srcs.to_vec()))
    }

    /// A constant of type `t` with `bits` in every component: truncated to the type's width,
    /// and any non-zero boolean is all ones (true).
    pub fn konst(&mut self, t: Type, bits: u64) -> Value {
        let b = if t.is_bool() && bits != 0 {
            t.mask()
        } else {
            bits & t.mask()
        };
        self.emit(t, Op::Const(vec![b; usize::from(t.comps)]))
    }

    /// A float constant of type `t` (16, 32 or 64 bits), rounded to nearest.
    pub fn fconst(&mut self, t: Type, v: f64) -> Value {
        let bits = match t.bits {
            16 => u64::from(half::f16::from_f64(v).to_bits()),
            32 => u64::from((v as f32).to_bits()),
            _ => v.to_bits(),
        };
        self.konst(t, bits)
    }

    /// Component `c` of `v`; `v` itself when it is a scalar.
    pub fn extract(&mut self, v: Value, c: u8) -> Value {
        let t = self.ty(v);
        if t.comps == 1 {
            return v;
        }
        self.emit(t.scalar_type(), Op::Extract(v, c))
    }

    /// A vector of type `t` from its components.
    pub fn vec(&mut self, t: Type, comps: Vec<Value>) -> Value {
        self.emit(t, Op::Vec(comps))
    }

    /// Empties the insertion block and returns what it held (to emit a nested block into the
    /// same builder, then [`Builder::put_block`] the outer contents back).
    pub fn take_block(&mut self) -> Block {
        std::mem::take(self.block)
    }

    /// Replaces the insertion block's contents with `b` and returns what it held.
    pub fn put_block(&mut self, b: Block) -> Block {
        std::mem::replace(self.block, b)
    }
}

/// Rebuilds every block of `f`, those of ifs and loops included, for a pass that expands
/// instructions in place: `expand` sees each instruction with a builder that appends to the
/// block being rebuilt, emits the replacement and returns true, or returns false (having
/// emitted nothing) to keep the instruction. Returns true if any instruction was replaced.
pub fn expand_instrs(
    f: &mut Function,
    expand: &mut dyn FnMut(&Instr, &mut Builder) -> bool,
) -> bool {
    fn walk(
        b: &mut Block,
        values: &mut Vec<Type>,
        expand: &mut dyn FnMut(&Instr, &mut Builder) -> bool,
    ) -> bool {
        let mut changed = false;
        let old = std::mem::take(b);
        b.reserve(old.len());
        for n in old {
            match n {
                Node::Instr(i) => {
                    if expand(&i, &mut Builder::new(values, b)) {
                        changed = true;
                    } else {
                        b.push(Node::Instr(i));
                    }
                }
                Node::If(mut i) => {
                    changed |= walk(&mut i.then_, values, expand);
                    changed |= walk(&mut i.else_, values, expand);
                    b.push(Node::If(i));
                }
                Node::Loop(mut l) => {
                    changed |= walk(&mut l.body, values, expand);
                    b.push(Node::Loop(l));
                }
                other => b.push(other),
            }
        }
        changed
    }
    let mut body = std::mem::take(&mut f.body);
    let changed = walk(&mut body, &mut f.values, expand);
    f.body = body;
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Function;

    fn built(f: impl FnOnce(&mut Builder)) -> String {
        let mut func = Function::new("main");
        let mut body = Block::new();
        f(&mut Builder::new(&mut func.values, &mut body));
        func.body = body;
        func.to_string()
    }

    #[test]
    fn constants_are_truncated_and_booleans_all_ones() {
        let text = built(|b| {
            b.konst(Type::I32, 0x1_0000_0005);
            b.konst(Type::B1, 2);
            b.konst(Type::I32.vec(2), 7);
            b.fconst(Type::F32, 0.5);
        });
        let want = "fn main {
    %0:i32 = const 5
    %1:b1 = const true
    %2:i32x2 = const 7, 7
    %3:f32 = const 0.5
}
";
        assert_eq!(text, want);
    }

    #[test]
    fn extract_of_a_scalar_is_the_scalar() {
        let text = built(|b| {
            let x = b.konst(Type::F32, 0);
            assert_eq!(b.extract(x, 0), x);
            let v = b.vec(Type::F32.vec(2), vec![x, x]);
            let e = b.extract(v, 1);
            b.alu(AluOp::Fadd, Type::F32, &[e, x]);
        });
        let want = "fn main {
    %0:f32 = const 0.0
    %1:f32x2 = vec %0, %0
    %2:f32 = extract %1, 1
    %3:f32 = fadd %2, %0
}
";
        assert_eq!(text, want);
    }

    #[test]
    fn take_and_put_block_nest_code() {
        let text = built(|b| {
            let c = b.konst(Type::B1, 1);
            let outer = b.take_block();
            b.konst(Type::I32, 1);
            let inner = b.put_block(outer);
            b.push(Node::If(Box::new(crate::ir::If {
                cond: c,
                then_: inner,
                else_: vec![],
                results: vec![],
            })));
        });
        let want = "fn main {
    %0:b1 = const true
    if %0 {
        %1:i32 = const 1
    }
}
";
        assert_eq!(text, want);
    }
}
