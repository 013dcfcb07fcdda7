//! Multiply-add fusion: `fadd (fmul a, b), c` becomes `ffma a, b, c` (Gen9's 3-source `mad`)
//! when SPIR-V allows the contraction; so do `a * b - c`, `c - a * b` and `-(a * b) + c`,
//! with a negated operand (see [`opt_fuse_mad`]).
//!
//! The Vulkan spec lets an implementation fuse a multiply and an add into one operation
//! unless either is decorated `NoContraction` (the IR's `exact`); the fused result is rounded
//! once, so it is at least as accurate as the two roundings it replaces. Only float scalars
//! are fused (after `scalarize`): 32-bit ones in every form, doubles only as `a * b + c`
//! (Gen9's DF `mad`, which the back end emits for an f64 `ffma`; where doubles are emulated,
//! `soft_fp64` has already lowered them to integer code), and only a product with no other
//! use. 16-bit float products are not fused: fp16 `fmul` and `fadd` are native HF
//! instructions on halves kept one per dword (`backend::narrow`), while an HF `mad` is a
//! 3-source Align16 instruction whose sources are packed halves (docs/gen9.md 1.5), so each
//! operand would need a packing `mov` first (brw emits one per half), and an fp16 `ffma` is
//! computed in f32 and rounded back (`lower_narrow`): either is longer than the `mul` and
//! `add` it replaces (docs/performance.md, "Bytes and halves read in place"). Fusing a shared
//! product would compute it twice. Gen9's `mad` takes no immediates, so each constant operand
//! costs a `mov`: with two or three constants the fused form is longer than `mul` + `add`
//! (which take one immediate each) and is not used.

use crate::hash::HashMap;
use crate::ir::*;

/// Fuses single-use `fmul` results into the `fadd` or `fsub` that reads them (also through
/// a single-use `fneg` of the product). Returns true if anything changed; the dead `fmul`s
/// are left for DCE.
///
/// A subtraction needs one operand negated: `a * b - c` becomes `ffma a, b, -c` and
/// `c - a * b` and `-(a * b) + c` become `ffma -a, b, c`, where `-x` is a new `fneg` (or, for
/// a constant, the constant with its sign flipped). The back end folds an `fneg` feeding an
/// `ffma` into the `mad`'s source modifier, so the negation costs nothing there. Negation is
/// exact, so the fused result is the same as for the addition.
pub fn opt_fuse_mad(f: &mut Function) -> bool {
    let uses = f.use_counts();
    let consts = f.consts();
    let mut products: HashMap<Value, (Value, Value)> = HashMap::default();
    let mut negs: HashMap<Value, Value> = HashMap::default();
    f.for_each_node(&mut |n| match n {
        Node::Instr(Instr {
            dst: Some(d),
            op: Op::Alu(AluOp::Fmul, s),
            exact: false,
        }) if uses[d.0 as usize] == 1 => {
            products.insert(*d, (s[0], s[1]));
        }
        Node::Instr(Instr {
            dst: Some(d),
            op: Op::Alu(AluOp::Fneg, s),
            exact: false,
        }) if uses[d.0 as usize] == 1 => {
            negs.insert(*d, s[0]);
        }
        _ => {}
    });
    // A negated product is fused only when the `fneg` is its one use.
    negs.retain(|_, p| products.contains_key(p));
    if products.is_empty() {
        return false;
    }
    let mut cx = Fuse {
        values: std::mem::take(&mut f.values),
        products: &products,
        negs: &negs,
        consts: &consts,
    };
    let changed = cx.block(&mut f.body);
    f.values = cx.values;
    changed
}

struct Fuse<'a> {
    values: Vec<Type>,
    products: &'a HashMap<Value, (Value, Value)>,
    negs: &'a HashMap<Value, Value>,
    consts: &'a Consts,
}

/// An `ffma` operand: a value, or the negation of one (to be materialised).
#[derive(Clone, Copy)]
enum Operand {
    Plain(Value),
    Neg(Value),
}

impl Fuse<'_> {
    fn block(&mut self, b: &mut Block) -> bool {
        let mut changed = false;
        let mut out = Vec::with_capacity(b.len());
        for mut n in std::mem::take(b) {
            match &mut n {
                Node::Instr(i) => {
                    if let Some(new) = self.fuse(i) {
                        out.extend(new.into_iter().map(Node::Instr));
                        changed = true;
                    }
                }
                Node::If(i) => {
                    changed |= self.block(&mut i.then_);
                    changed |= self.block(&mut i.else_);
                }
                Node::Loop(l) => changed |= self.block(&mut l.body),
                Node::Break(_) | Node::Continue(_) | Node::Yield(_) => {}
            }
            out.push(n);
        }
        *b = out;
        changed
    }

    /// The `ffma` operands `a, b, c` an `fadd`/`fsub` becomes, if it fuses.
    fn pattern(&self, op: AluOp, s: &[Value]) -> Option<[Operand; 3]> {
        use Operand::*;
        let prod = |v: Value| self.products.get(&v).copied();
        let neg_prod = |v: Value| self.negs.get(&v).and_then(|p| prod(*p));
        match op {
            AluOp::Fadd => [(s[0], s[1]), (s[1], s[0])].into_iter().find_map(|(p, c)| {
                prod(p)
                    .map(|(a, b)| [Plain(a), Plain(b), Plain(c)])
                    .or_else(|| neg_prod(p).map(|(a, b)| [Neg(a), Plain(b), Plain(c)]))
            }),
            AluOp::Fsub => prod(s[0])
                .map(|(a, b)| [Plain(a), Plain(b), Neg(s[1])])
                .or_else(|| prod(s[1]).map(|(a, b)| [Neg(a), Plain(b), Plain(s[0])])),
            _ => None,
        }
    }

    /// Rewrites `i` into an `ffma` if it fuses; returns the `fneg`/constant instructions
    /// to insert before it.
    fn fuse(&mut self, i: &mut Instr) -> Option<Vec<Instr>> {
        let Instr {
            dst: Some(d),
            op: Op::Alu(op, s),
            exact: false,
        } = i
        else {
            return None;
        };
        let ty = self.values[d.0 as usize];
        if ty != Type::F32 && ty != Type::float(64) {
            return None;
        }
        let ops = self.pattern(*op, s)?;
        // Doubles: only `a * b + c`. The back end's DF `mad` takes no negate modifier from
        // an `fneg` (that would be a separate DF move, no gain over `mul` + `add`).
        if ty == Type::float(64) && ops.iter().any(|o| matches!(o, Operand::Neg(_))) {
            return None;
        }
        // Gen9's `mad` takes no immediates: at most one constant operand (see the module
        // documentation).
        let constant = |o: &Operand| match o {
            Operand::Plain(v) | Operand::Neg(v) => self.consts.contains(*v),
        };
        if ops.iter().filter(|o| constant(o)).count() > 1 {
            return None;
        }
        let mut before = Vec::new();
        let mut srcs = Vec::with_capacity(3);
        for o in ops {
            match o {
                Operand::Plain(v) => srcs.push(v),
                Operand::Neg(v) => {
                    let n = Value(self.values.len() as u32);
                    self.values.push(Type::F32);
                    let op = match self.consts.get(v) {
                        Some(c) => Op::Const(c.iter().map(|x| x ^ 0x8000_0000).collect()),
                        None => Op::Alu(AluOp::Fneg, vec![v]),
                    };
                    before.push(Instr::new(Some(n), op));
                    srcs.push(n);
                }
            }
        }
        i.op = Op::Alu(AluOp::Ffma, srcs);
        Some(before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::{check_pass, opt_dce};

    fn fuse_then_dce(f: &mut Function) -> bool {
        let c = opt_fuse_mad(f);
        opt_dce(f);
        c
    }

    #[test]
    fn single_use_product_feeding_an_add_becomes_ffma() {
        check_pass(
            fuse_then_dce,
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[1] %0 align 4
            %3:f32 = load ssbo[2] %0 align 4
            %4:f32 = fmul %1, %2
            %5:f32 = fadd %3, %4
            store ssbo[0] %0, %5 align 4",
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[1] %0 align 4
            %3:f32 = load ssbo[2] %0 align 4
            %5:f32 = ffma %1, %2, %3
            store ssbo[0] %0, %5 align 4",
        );
    }

    #[test]
    fn no_contraction_on_either_side_blocks_fusion() {
        for (mul, add) in [("exact ", ""), ("", "exact ")] {
            let src = format!(
                "%0:i32 = const 0
                %1:f32 = load ssbo[0] %0 align 4
                %2:f32 = load ssbo[1] %0 align 4
                %4:f32 = {mul}fmul %1, %2
                %5:f32 = {add}fadd %4, %1
                store ssbo[0] %0, %5 align 4"
            );
            check_pass(fuse_then_dce, &src, &src);
        }
    }

    #[test]
    fn shared_products_and_other_types_are_not_fused() {
        let src = "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[1] %0 align 4
            %4:f32 = fmul %1, %2
            %5:f32 = fadd %4, %1
            %6:f32 = fadd %4, %2
            store ssbo[0] %0, %5 align 4
            store ssbo[1] %0, %6 align 4
            %7:i64 = load ssbo[2] %0 align 8
            %8:i64 = imul %7, %7
            %9:i64 = iadd %8, %7
            store ssbo[2] %0, %9 align 8";
        check_pass(fuse_then_dce, src, src);
    }

    #[test]
    fn double_multiply_add_is_fused_but_not_subtraction() {
        check_pass(
            fuse_then_dce,
            "%0:i32 = const 0
            %1:f64 = load ssbo[0] %0 align 8
            %2:f64 = load ssbo[1] %0 align 8
            %3:f64 = fmul %1, %2
            %4:f64 = fadd %3, %2
            %5:f64 = fmul %1, %1
            %6:f64 = fsub %2, %5
            %7:f64 = fmul %2, %2
            %8:f64 = exact fadd %7, %1
            store ssbo[0] %0, %4 align 8
            store ssbo[1] %0, %6 align 8
            store ssbo[2] %0, %8 align 8",
            "%0:i32 = const 0
            %1:f64 = load ssbo[0] %0 align 8
            %2:f64 = load ssbo[1] %0 align 8
            %4:f64 = ffma %1, %2, %2
            %5:f64 = fmul %1, %1
            %6:f64 = fsub %2, %5
            %7:f64 = fmul %2, %2
            %8:f64 = exact fadd %7, %1
            store ssbo[0] %0, %4 align 8
            store ssbo[1] %0, %6 align 8
            store ssbo[2] %0, %8 align 8",
        );
    }

    #[test]
    fn two_constant_operands_are_not_fused() {
        // y * 0.5 + 2.0: mul and add take one immediate each; mad would need two movs.
        let src = "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = const 0.5
            %3:f32 = const 2.0
            %4:f32 = fmul %1, %2
            %5:f32 = fadd %4, %3
            store ssbo[0] %0, %5 align 4";
        check_pass(fuse_then_dce, src, src);
    }

    #[test]
    fn product_outside_a_loop_fuses_into_the_add_inside() {
        check_pass(
            fuse_then_dce,
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %4:f32 = fmul %1, %1
            loop {
                %5:f32 = fadd %1, %4
                store ssbo[0] %0, %5 align 4
                break
            }",
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            loop {
                %5:f32 = ffma %1, %1, %1
                store ssbo[0] %0, %5 align 4
                break
            }",
        );
    }

    #[test]
    fn product_minus_value_becomes_ffma_of_the_negated_value() {
        check_pass(
            fuse_then_dce,
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[1] %0 align 4
            %3:f32 = load ssbo[2] %0 align 4
            %4:f32 = fmul %1, %2
            %5:f32 = fsub %4, %3
            store ssbo[0] %0, %5 align 4",
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[1] %0 align 4
            %3:f32 = load ssbo[2] %0 align 4
            %6:f32 = fneg %3
            %5:f32 = ffma %1, %2, %6
            store ssbo[0] %0, %5 align 4",
        );
    }

    #[test]
    fn value_minus_product_and_negated_product_plus_value_negate_a_factor() {
        check_pass(
            fuse_then_dce,
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[1] %0 align 4
            %3:f32 = load ssbo[2] %0 align 4
            %4:f32 = fmul %1, %2
            %5:f32 = fsub %3, %4
            %6:f32 = fmul %2, %3
            %7:f32 = fneg %6
            %8:f32 = fadd %7, %1
            store ssbo[0] %0, %5 align 4
            store ssbo[1] %0, %8 align 4",
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[1] %0 align 4
            %3:f32 = load ssbo[2] %0 align 4
            %9:f32 = fneg %1
            %5:f32 = ffma %9, %2, %3
            %10:f32 = fneg %2
            %8:f32 = ffma %10, %3, %1
            store ssbo[0] %0, %5 align 4
            store ssbo[1] %0, %8 align 4",
        );
    }

    #[test]
    fn a_negated_constant_is_a_constant() {
        check_pass(
            fuse_then_dce,
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[1] %0 align 4
            %3:f32 = const 2.0
            %4:f32 = fmul %1, %2
            %5:f32 = fsub %4, %3
            store ssbo[0] %0, %5 align 4",
            "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = load ssbo[1] %0 align 4
            %6:f32 = const -2.0
            %5:f32 = ffma %1, %2, %6
            store ssbo[0] %0, %5 align 4",
        );
    }

    #[test]
    fn no_contraction_blocks_subtraction_forms() {
        for (mul, sub) in [("exact ", ""), ("", "exact ")] {
            let src = format!(
                "%0:i32 = const 0
                %1:f32 = load ssbo[0] %0 align 4
                %2:f32 = load ssbo[1] %0 align 4
                %4:f32 = {mul}fmul %1, %2
                %5:f32 = {sub}fsub %1, %4
                %6:f32 = {mul}fmul %2, %2
                %7:f32 = fneg %6
                %8:f32 = {sub}fadd %7, %1
                store ssbo[0] %0, %5 align 4
                store ssbo[1] %0, %8 align 4"
            );
            check_pass(fuse_then_dce, &src, &src);
        }
    }

    #[test]
    fn exact_prints_and_parses() {
        let src = "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = exact fmul %1, %1
            store ssbo[0] %0, %2 align 4";
        let f = crate::parse::parse_function(src).unwrap();
        assert!(f.to_string().contains("%2:f32 = exact fmul %1, %1"), "{f}");
    }
}
