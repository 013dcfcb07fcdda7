//! Middle-end passes over Ferrite IR. Each is `fn(&mut Function) -> bool` (true when it
//! changed something) so the pipeline can print the IR after every pass that did.

mod algebraic;
mod bools;
mod cf;
mod dead_values;
mod desc_index;
mod loads;
mod mad;
mod narrow;
mod opt;
pub(crate) mod private;
mod sat;
mod soft_fp64;
mod ssa;
mod sysval;
mod thread;
mod unroll;
mod vectorize;

pub use algebraic::opt_algebraic;
pub use bools::lower_bools;
pub use cf::opt_dead_cf;
pub use dead_values::opt_dead_values;
pub use desc_index::opt_const_desc_index;
pub use loads::opt_load_cse;
pub use mad::opt_fuse_mad;
pub use narrow::lower_narrow;
pub use opt::{lower_int_div, opt_const_fold, opt_copy_prop, opt_cse, opt_dce, scalarize};
pub use private::opt_private_arrays;
pub use sat::lower_sat_add;
pub use soft_fp64::soft_fp64;
pub use ssa::vars_to_ssa;
pub use sysval::fold_subgroup_size;
pub use thread::opt_thread_ifs;
pub use unroll::opt_unroll;
pub use vectorize::opt_vectorize;

#[cfg(test)]
pub(crate) fn check_pass(pass: fn(&mut crate::ir::Function) -> bool, input: &str, expected: &str) {
    let mut f = crate::parse::parse_function(input).expect("input parses");
    crate::validate::validate(&f).expect("input is valid");
    pass(&mut f);
    crate::validate::validate(&f).unwrap_or_else(|e| panic!("{e}\n{f}"));
    f.renumber();
    let mut e = crate::parse::parse_function(expected).expect("expected parses");
    e.renumber();
    assert_eq!(f.to_string(), e.to_string());
}
