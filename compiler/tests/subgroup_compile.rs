//! Every subgroup operation of the IR compiled at SIMD8/16/32 inside a branch, with the ISA
//! validator on (the PRM region and exec-size rules), on 32-bit operands and on every other
//! type the hardware has (8/16/64-bit integers, fp16, fp64). The simulator tests in
//! `tests/tests/subgroup_sim.rs` check results; these check that every op, reduction
//! operator and cluster size produces legal code.

use ferrite_compiler::backend::{self, BackendOptions};
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
    // The value: the loaded dword reinterpreted, then converted to the operand type.
    let val = match src_ty {
        "b1" => "%7:b1 = ine %2, %1".to_string(),
        "i32" | "f32" => format!("%7:{src_ty} = bitcast %2"),
        "f16" | "f64" => format!("%6:f32 = bitcast %2\n        %7:{src_ty} = f2f %6"),
        _ => format!("%7:{src_ty} = i2i %2"),
    };
    let srcs = match op.num_srcs() {
        0 => String::new(),
        1 => " %7".to_string(),
        _ => " %7, %3".to_string(),
    };
    let store = match dst_ty {
        "i32x4" => "%9:i32 = extract %8, 0\n        store ssbo[0] %0, %9 align 4".to_string(),
        "b1" => "%9:i32 = b2i %8\n        store ssbo[0] %0, %9 align 4".to_string(),
        "i32" | "f32" => "store ssbo[0] %0, %8 align 4".to_string(),
        "f16" | "f64" => "%9:f32 = f2f %8\n        store ssbo[0] %0, %9 align 4".to_string(),
        _ => "%9:i32 = i2i %8\n        store ssbo[0] %0, %9 align 4".to_string(),
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

/// Compiles every subgroup operation on `int` / `float` operands (the type the operation
/// computes on) at every width.
fn compile_all(int: &str, float: &str) {
    let mut n = 0;
    for op in SubgroupOp::all() {
        let ty = match op {
            SubgroupOp::Reduce(r)
            | SubgroupOp::InclusiveScan(r)
            | SubgroupOp::ExclusiveScan(r)
            | SubgroupOp::ClusteredReduce(r, _)
                if r.is_float() =>
            {
                float
            }
            _ => int,
        };
        let text = shader(op, ty);
        let s = parse_shader(&text).unwrap_or_else(|e| panic!("{op}: {e}\n{text}"));
        ferrite_compiler::validate::validate(&s.func).unwrap_or_else(|e| panic!("{op}: {e}"));
        for w in [8, 16, 32] {
            let k = backend::compile(&s, &opts(w))
                .unwrap_or_else(|e| panic!("{op} on {ty} at SIMD{w}: {e}\n{text}"));
            assert_eq!(k.simd, w);
            n += 1;
        }
    }
    assert_eq!(n, SubgroupOp::all().len() * 3);
}

#[test]
fn every_subgroup_op_compiles_to_valid_code_at_every_width() {
    compile_all("i32", "f32");
}

#[test]
fn every_subgroup_op_on_16_bit_types_compiles_to_valid_code() {
    compile_all("i16", "f16");
}

#[test]
fn every_subgroup_op_on_8_bit_integers_compiles_to_valid_code() {
    compile_all("i8", "f32");
}

#[test]
fn every_subgroup_op_on_64_bit_types_compiles_to_valid_code() {
    compile_all("i64", "f64");
}

/// Without a required or varying size, a kernel that uses subgroups runs at the width the
/// policy picks for any kernel (SIMD16 for a group of 40, as anv): the reported subgroup size
/// is an API constant that `SubgroupSize` reads, not the dispatch width.
#[test]
fn subgroup_kernels_run_at_the_policy_width() {
    let o = BackendOptions::gen9();
    assert_eq!(o.hw.subgroup_size, 32);
    for op in [SubgroupOp::Elect, SubgroupOp::Reduce(RedOp::Iadd)] {
        let text = shader(op, "i32");
        let s = parse_shader(&text).unwrap();
        assert!(backend::uses_subgroups(&s.func), "{op}");
        let k = backend::compile(&s, &o).unwrap();
        assert_eq!(k.simd, 16, "{op}");
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

/// A required subgroup size is the only width tried, subgroups or not; one the group cannot
/// be dispatched at is refused with `NoWidth`; `Varying` leaves the policy's choice.
#[test]
fn a_required_subgroup_size_is_the_kernel_width() {
    use ferrite_compiler::backend::{BackendError, SubgroupWidth};
    let s = parse_shader(&shader(SubgroupOp::Reduce(RedOp::Iadd), "i32")).unwrap();
    for w in [8, 16, 32] {
        let o = BackendOptions {
            subgroup: SubgroupWidth::Required(w),
            ..BackendOptions::gen9()
        };
        assert_eq!(backend::compile(&s, &o).unwrap().simd, w);
    }
    let o = BackendOptions {
        subgroup: SubgroupWidth::Varying,
        ..BackendOptions::gen9()
    };
    assert_eq!(
        backend::compile(&s, &o).unwrap().simd,
        16,
        "the policy's width for 40"
    );
    let big = shader(SubgroupOp::Elect, "i32").replace("local_size 40 1 1", "local_size 1024 1 1");
    let s = parse_shader(&big).unwrap();
    let o = BackendOptions {
        subgroup: SubgroupWidth::Required(8),
        ..BackendOptions::gen9()
    };
    match backend::compile(&s, &o) {
        Err(BackendError::NoWidth(m)) => assert!(m.contains("required subgroup size 8"), "{m}"),
        other => panic!("SIMD8 for 1024 invocations: {:?}", other.map(|k| k.simd)),
    }
}
