//! Multiply-add fusion: `fadd (fmul a, b), c` becomes `ffma a, b, c` (Gen9's 3-source `mad`)
//! when SPIR-V allows the contraction.
//!
//! The Vulkan spec lets an implementation fuse a multiply and an add into one operation
//! unless either is decorated `NoContraction` (the IR's `exact`); the fused result is rounded
//! once, so it is at least as accurate as the two roundings it replaces. Only 32-bit float
//! scalars are fused (after `scalarize`; 16-bit floats are 32-bit arithmetic by then and
//! doubles keep their own lowering), and only a product with no other use: fusing a shared
//! product would compute it twice. Gen9's `mad` takes no immediates, so each constant operand
//! costs a `mov`: with two or three constants the fused form is longer than `mul` + `add`
//! (which take one immediate each) and is not used.

use crate::ir::*;
use std::collections::HashMap;

/// Fuses single-use `fmul` results into the `fadd` that reads them. Returns true if anything
/// changed; the dead `fmul`s are left for DCE.
pub fn opt_fuse_mad(f: &mut Function) -> bool {
    let uses = f.use_counts();
    let consts = f.consts();
    let mut products: HashMap<Value, (Value, Value)> = HashMap::new();
    f.for_each_node(&mut |n| {
        if let Node::Instr(Instr {
            dst: Some(d),
            op: Op::Alu(AluOp::Fmul, s),
            exact: false,
        }) = n
        {
            if uses[d.0 as usize] == 1 {
                products.insert(*d, (s[0], s[1]));
            }
        }
    });
    if products.is_empty() {
        return false;
    }
    fn walk(
        b: &mut Block,
        values: &[Type],
        products: &HashMap<Value, (Value, Value)>,
        consts: &Consts,
    ) -> bool {
        let mut changed = false;
        for n in b.iter_mut() {
            match n {
                Node::Instr(i) => {
                    let Instr {
                        dst: Some(d),
                        op: Op::Alu(AluOp::Fadd, s),
                        exact: false,
                    } = i
                    else {
                        continue;
                    };
                    if values[d.0 as usize] != Type::F32 {
                        continue;
                    }
                    let fused = [(s[0], s[1]), (s[1], s[0])]
                        .into_iter()
                        .find_map(|(p, c)| products.get(&p).map(|&(a, b)| (a, b, c)));
                    let immediates = fused.map_or(0, |(a, b, c)| {
                        [a, b, c].iter().filter(|v| consts.contains(**v)).count()
                    });
                    if let (Some((a, b, c)), 0..=1) = (fused, immediates) {
                        i.op = Op::Alu(AluOp::Ffma, vec![a, b, c]);
                        changed = true;
                    }
                }
                Node::If(i) => {
                    changed |= walk(&mut i.then_, values, products, consts);
                    changed |= walk(&mut i.else_, values, products, consts);
                }
                Node::Loop(l) => changed |= walk(&mut l.body, values, products, consts),
                Node::Break(_) | Node::Continue(_) | Node::Yield(_) => {}
            }
        }
        changed
    }
    let values = std::mem::take(&mut f.values);
    let changed = walk(&mut f.body, &values, &products, &consts);
    f.values = values;
    changed
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
            %7:f64 = load ssbo[2] %0 align 8
            %8:f64 = fmul %7, %7
            %9:f64 = fadd %8, %7
            store ssbo[2] %0, %9 align 8";
        check_pass(fuse_then_dce, src, src);
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
    fn exact_prints_and_parses() {
        let src = "%0:i32 = const 0
            %1:f32 = load ssbo[0] %0 align 4
            %2:f32 = exact fmul %1, %1
            store ssbo[0] %0, %2 align 4";
        let f = crate::parse::parse_function(src).unwrap();
        assert!(f.to_string().contains("%2:f32 = exact fmul %1, %1"), "{f}");
    }
}
