//! Every subgroup operation of the IR compiled at SIMD8/16/32 inside a branch, with the ISA
//! validator on (the PRM region and exec-size rules); and the types the back end does not
//! handle yet refused with an error rather than a panic. The simulator tests in
//! `tests/tests/subgroup_sim.rs` check results; these check that every op, reduction
//! operator and cluster size produces legal code.

use ferrite_compiler::backend::{self, BackendError, BackendOptions};
use ferrite_compiler::ir::{RedOp, SubgroupOp};
use ferrite_compiler::parse::parse_shader;

fn opts(width: u32) -> BackendOptions {
    BackendOptions {
        no8: width != 8,
        no16: width != 16,
        no32: width != 32,
        validate: true,
        ..BackendOptions::gen9()
    }
}

/// A shader that applies `op` to a loaded value of type `ty` where the value is non-zero.
fn shader(op: SubgroupOp, ty: &str) -> String {
    let (src_ty, dst_ty) = match op {
        SubgroupOp::Elect => ("i32", "b1"),
        SubgroupOp::All | SubgroupOp::Any => ("b1", "b1"),
        SubgroupOp::AllEqual => (ty, "b1"),
        SubgroupOp::Ballot => ("b1", "i32x4"),
        _ => (ty, ty),
    };
    let val = if src_ty == "b1" {
        "%7:b1 = ine %2, %1".to_string()
    } else {
        format!("%7:{src_ty} = bitcast %2")
    };
    let srcs = match op.num_srcs() {
        0 => String::new(),
        1 => " %7".to_string(),
        _ => " %7, %3".to_string(),
    };
    let store = if dst_ty == "i32x4" {
        "%9:i32 = extract %8, 0\n        store ssbo[0] %0, %9 align 4".to_string()
    } else if dst_ty == "b1" {
        "%9:i32 = b2i %8\n        store ssbo[0] %0, %9 align 4".to_string()
    } else {
        "store ssbo[0] %0, %8 align 4".to_string()
    };
    format!(
        "shader local_size 40 1 1 shared 0 local 0 push 0
fn main {{
    %0:i32 = const 0
    %1:i32 = const 0
    %2:i32 = load ssbo[0] %0 align 4
    %3:i32 = const 3
    %4:b1 = ine %2, %1
    if %4 {{
        {val}
        %8:{dst_ty} = {op}{srcs}
        {store}
    }}
}}
"
    )
}

#[test]
fn every_subgroup_op_compiles_to_valid_code_at_every_width() {
    let mut n = 0;
    for op in SubgroupOp::all() {
        let ty = match op {
            SubgroupOp::Reduce(r)
            | SubgroupOp::InclusiveScan(r)
            | SubgroupOp::ExclusiveScan(r)
            | SubgroupOp::ClusteredReduce(r, _)
                if r.is_float() =>
            {
                "f32"
            }
            _ => "i32",
        };
        let text = shader(op, ty);
        let s = parse_shader(&text).unwrap_or_else(|e| panic!("{op}: {e}\n{text}"));
        ferrite_compiler::validate::validate(&s.func).unwrap_or_else(|e| panic!("{op}: {e}"));
        for w in [8, 16, 32] {
            let k = backend::compile(&s, &opts(w))
                .unwrap_or_else(|e| panic!("{op} at SIMD{w}: {e}\n{text}"));
            assert_eq!(k.simd, w);
            n += 1;
        }
    }
    assert_eq!(n, SubgroupOp::all().len() * 3);
}

#[test]
fn subgroup_ops_on_64_bit_values_are_refused() {
    let text = shader(SubgroupOp::Reduce(RedOp::Iadd), "i32").replace(
        "%7:i32 = bitcast %2\n        %8:i32 = subgroup_reduce.iadd %7\n        store ssbo[0] %0, %8 align 4",
        "%7:i64 = u2u %2\n        %8:i64 = subgroup_reduce.iadd %7\n        store ssbo[0] %0, %8 align 8",
    );
    assert!(text.contains("i64"), "{text}");
    let s = parse_shader(&text).unwrap();
    for w in [8, 16, 32] {
        match backend::compile(&s, &opts(w)) {
            Err(BackendError::Unsupported(m)) => assert!(m.contains("subgroup"), "{m}"),
            other => panic!(
                "SIMD{w}: expected a refusal, got {:?}",
                other.map(|k| k.simd)
            ),
        }
    }
}

/// Without debug options, a kernel that uses subgroups runs at the reported subgroup size (a
/// SPIR-V 1.3 shader must see `SubgroupSize` equal to it), whatever width the policy would pick
/// otherwise; a kernel without them keeps the policy's width.
#[test]
fn subgroup_kernels_run_at_the_reported_subgroup_size() {
    let o = BackendOptions::gen9();
    let sg = o.hw.subgroup_size;
    for op in [SubgroupOp::Elect, SubgroupOp::Reduce(RedOp::Iadd)] {
        let text = shader(op, "i32");
        let s = parse_shader(&text).unwrap();
        assert!(backend::uses_subgroups(&s.func), "{op}");
        let k = backend::compile(&s, &o).unwrap();
        assert_eq!(k.simd, sg, "{op}");
    }
    let plain = "shader local_size 40 1 1 shared 0 local 0 push 0
fn main {
    %0:i32 = const 0
    %1:i32 = load ssbo[0] %0 align 4
    store ssbo[0] %0, %1 align 4
}
";
    let s = parse_shader(plain).unwrap();
    assert!(!backend::uses_subgroups(&s.func));
    let k = backend::compile(&s, &o).unwrap();
    assert_eq!(k.simd, 16, "the policy's width for a group of 40");
}
