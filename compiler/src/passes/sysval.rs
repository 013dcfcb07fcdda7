//! Built-ins whose value the pipeline fixes before compilation.

use crate::ir::*;

/// Replaces every `sysval subgroup_size` with the constant `size`: the value `SubgroupSize`
/// reads when it does not depend on the SIMD width the back end picks (the reported size,
/// an API constant, or a required size; docs/subgroups.md). The middle end can then fold
/// what the shader computes from it, as brw folds its constant subgroup size. Returns true
/// if anything changed.
pub fn fold_subgroup_size(f: &mut Function, size: u32) -> bool {
    let mut changed = false;
    f.for_each_instr_mut(&mut |i| {
        if matches!(i.op, Op::SysVal(SysVal::SubgroupSize)) {
            i.op = Op::Const(vec![u64::from(size)]);
            changed = true;
        }
    });
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_function;

    #[test]
    fn subgroup_size_becomes_the_constant() {
        let mut f = parse_function(
            "%0:i32 = sysval subgroup_size
            %1:i32 = sysval subgroup_invocation
            %2:i32 = iadd %0, %1
            store ssbo[0] %1, %2 align 4",
        )
        .expect("parses");
        assert!(fold_subgroup_size(&mut f, 32));
        let want = parse_function(
            "%0:i32 = const 32
            %1:i32 = sysval subgroup_invocation
            %2:i32 = iadd %0, %1
            store ssbo[0] %1, %2 align 4",
        )
        .expect("parses");
        assert_eq!(f.to_string(), want.to_string());
        assert!(!fold_subgroup_size(&mut f, 32));
    }
}
