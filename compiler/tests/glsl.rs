//! End-to-end tests of the front end and the passes: GLSL compiled with glslangValidator,
//! translated, run on the reference interpreter before and after the pipeline, and compared
//! with a CPU reference. Skipped (with a message) when glslangValidator is not installed.

use ferrite_compiler::frontend::{translate, FrontendInput};
use ferrite_compiler::interp::{run, Memory};
use ferrite_compiler::pipeline::{run_pipeline, CompileOptions};
use ferrite_compiler::validate::validate;
use ferrite_compiler::{BindingSlot, DebugFlags, Target};

fn glsl_to_spirv(name: &str, src: &str) -> Option<Vec<u32>> {
    ferrite_compiler::testing::glsl_for_test(name, src, "vulkan1.1")
}

fn words_u32(m: &Memory, bti: u32) -> Vec<u32> {
    m.ssbo[&bti]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Runs the shader before and after the pipeline; both must give the same memory.
fn run_both(name: &str, src: &str, groups: [u32; 3], mem: Memory) -> Option<Memory> {
    run_both_spec(name, src, groups, mem, &[])
}

fn run_both_spec(
    name: &str,
    src: &str,
    groups: [u32; 3],
    mem: Memory,
    spec: &[(u32, Vec<u8>)],
) -> Option<Memory> {
    let words = glsl_to_spirv(name, src)?;
    let target = Target::gen9();
    let slots: Vec<BindingSlot> = (0..8)
        .map(|b| BindingSlot {
            set: 0,
            binding: b,
            bti: b,
            count: 1,
        })
        .collect();
    let out = translate(&FrontendInput {
        words: &words,
        entry: "main",
        specialization: spec,
        bindings: &slots,
        target: &target,
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut shader = out.shader;
    validate(&shader.func).unwrap_or_else(|e| panic!("{name}: {e}\n{}", shader.func));
    let mut before = mem.clone();
    run(&shader, groups, 16, &mut before).unwrap_or_else(|e| panic!("{name} before: {e}"));
    // The interpreter must give the same bits before and after, so no multiply-add is fused
    // here (a fused one rounds once: Vulkan allows it, but the bits differ; the simulator
    // tests check fused results against both roundings).
    let exact = CompileOptions {
        debug: DebugFlags {
            nocontract: true,
            ..DebugFlags::default()
        },
        ..CompileOptions::default()
    };
    run_pipeline(&mut shader, &exact).unwrap_or_else(|e| panic!("{name}: {e}"));
    // What the back end relies on: no 1-bit booleans and no vector ALU ops remain.
    shader.func.for_each_node(&mut |n| {
        if let ferrite_compiler::ir::Node::Instr(i) = n {
            if let Some(d) = i.dst {
                let t = shader.func.ty(d);
                assert!(
                    !(t.is_bool() && t.bits == 1),
                    "{name}: 1-bit boolean left: {d}"
                );
                if matches!(i.op, ferrite_compiler::ir::Op::Alu(..)) {
                    assert_eq!(t.comps, 1, "{name}: vector ALU op left: {d}");
                }
            }
        }
    });
    let mut after = mem;
    run(&shader, groups, 16, &mut after).unwrap_or_else(|e| panic!("{name} after: {e}\n{shader}"));
    for (k, v) in &before.ssbo {
        assert_eq!(
            v, &after.ssbo[k],
            "{name}: pipeline changed buffer {k}\n{shader}"
        );
    }
    Some(after)
}

#[test]
fn integer_arithmetic_matches_cpu() {
    let src = r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { int a[]; };
layout(std430, binding = 1) buffer O { int o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int x = a[i];
    int y = int(i) - 40;
    o[i * 6u + 0u] = x * y + (x >> 3);
    o[i * 6u + 1u] = y != 0 ? x / y : 0;
    o[i * 6u + 2u] = y != 0 ? x % y : 0;
    o[i * 6u + 3u] = int(uint(x) / 8u) ^ (x & 0xff);
    o[i * 6u + 4u] = abs(y) + min(x, y) - max(x, 7) + clamp(x, -5, 5);
    o[i * 6u + 5u] = findMSB(x) + bitCount(x) + findLSB(y);
}
"#;
    let n = 128usize;
    let a: Vec<i32> = (0..n as i32)
        .map(|i| i.wrapping_mul(2654435761u32 as i32) >> 7)
        .collect();
    let mut mem = Memory::default();
    mem.ssbo
        .insert(0, a.iter().flat_map(|x| x.to_le_bytes()).collect());
    mem.ssbo.insert(1, vec![0; n * 6 * 4]);
    let Some(m) = run_both("intarith", src, [2, 1, 1], mem) else {
        return;
    };
    let o = words_u32(&m, 1);
    for i in 0..n {
        let x = a[i];
        let y = i as i32 - 40;
        let exp = [
            x.wrapping_mul(y).wrapping_add(x >> 3),
            if y != 0 { x.wrapping_div(y) } else { 0 },
            // glslang emits OpSMod for `%`: the result takes the sign of the divisor.
            if y != 0 {
                x.wrapping_rem(y)
                    + if x.wrapping_rem(y) != 0 && (x.wrapping_rem(y) < 0) != (y < 0) {
                        y
                    } else {
                        0
                    }
            } else {
                0
            },
            ((x as u32 / 8) as i32) ^ (x & 0xff),
            y.abs() + x.min(y) - x.max(7) + x.clamp(-5, 5),
            (if x == 0 {
                -1
            } else if x < 0 {
                31 - (!x).leading_zeros() as i32
            } else {
                31 - x.leading_zeros() as i32
            }) + x.count_ones() as i32
                + if y == 0 {
                    -1
                } else {
                    y.trailing_zeros() as i32
                },
        ];
        for k in 0..6 {
            assert_eq!(
                o[i * 6 + k] as i32,
                exp[k],
                "lane {i} output {k}: x={x} y={y}"
            );
        }
    }
}

#[test]
fn nested_control_flow_with_break_continue_and_switch() {
    let src = r#"#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer O { uint o[]; };
uint f(uint v) {
    if (v > 20u) return v * 2u;
    for (uint k = 0u; k < 4u; k++) { if (k == v) return k + 100u; }
    return v;
}
void main() {
    uint i = gl_LocalInvocationIndex;
    uint acc = 0u;
    for (uint j = 0u; j < 40u; j++) {
        if (j > i) break;
        if ((j & 1u) == 1u) continue;
        switch (j % 5u) {
            case 0u: acc += 1u; break;
            case 1u: acc += 10u;
            case 2u: acc += 100u; break;
            default: acc += j; if (acc > 300u) continue;
        }
        acc += 1000u;
    }
    uint w = 0u;
    do { w += 3u; } while (w < i);
    o[i] = acc + f(i) * 7u + w * 100000u;
}
"#;
    let mut mem = Memory::default();
    mem.ssbo.insert(0, vec![0; 32 * 4]);
    let Some(m) = run_both("control", src, [1, 1, 1], mem) else {
        return;
    };
    let o = words_u32(&m, 0);
    for i in 0..32u32 {
        let mut acc = 0u32;
        for j in 0..40u32 {
            if j > i {
                break;
            }
            if j & 1 == 1 {
                continue;
            }
            match j % 5 {
                0 => acc += 1,
                1 => acc += 110,
                2 => acc += 100,
                _ => {
                    acc += j;
                    if acc > 300 {
                        continue;
                    }
                }
            }
            acc += 1000;
        }
        let f = |v: u32| {
            if v > 20 {
                return v * 2;
            }
            for k in 0..4 {
                if k == v {
                    return k + 100;
                }
            }
            v
        };
        let mut w = 0u32;
        loop {
            w += 3;
            if w >= i {
                break;
            }
        }
        assert_eq!(o[i as usize], acc + f(i) * 7 + w * 100000, "lane {i}");
    }
}

/// Reduced from the conformance suite's `subgroup_uniform_control_flow` `*reconverge20`
/// shaders: a variable changed only in the arm that does not `return` (once by a plain
/// assignment, once by a loop) and read after the `if`. vars_to_ssa once used the arm's
/// value after the `if`, where it is not visible.
#[test]
fn variable_assigned_only_in_the_arm_that_does_not_return() {
    let src = r#"#version 450
layout(local_size_x = 16) in;
layout(std430, binding = 0) buffer A { uint a[]; };
layout(std430, binding = 1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint v = 7u;
    uint w = 1u;
    if (a[i] % 4u == 0u) {
        return;
    } else {
        v = a[i] * 3u;
        if (a[i] % 4u == 1u) {
            return;
        } else {
            while (w < a[i]) w *= 2u;
        }
    }
    o[i] = v + w * 1000u;
}
"#;
    let n = 32usize;
    let a: Vec<u32> = (0..n as u32).map(|i| i * 5 % 37).collect();
    let mut mem = Memory::default();
    mem.ssbo
        .insert(0, a.iter().flat_map(|x| x.to_le_bytes()).collect());
    mem.ssbo.insert(1, vec![0xff; n * 4]);
    let Some(m) = run_both("return_in_one_arm", src, [2, 1, 1], mem) else {
        return;
    };
    let o = words_u32(&m, 1);
    for i in 0..n {
        let x = a[i];
        let exp = if x % 4 < 2 {
            u32::MAX
        } else {
            x * 3 + x.next_power_of_two().max(1) * 1000
        };
        assert_eq!(o[i], exp, "lane {i}: a={x}");
    }
}

#[test]
fn shared_memory_reduction_and_atomics() {
    let src = r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer I { uint v[]; };
layout(std430, binding = 1) buffer O { uint sum; uint maxv; uint count; uint sums[]; };
shared uint s[64];
void main() {
    uint l = gl_LocalInvocationIndex;
    s[l] = v[gl_GlobalInvocationID.x];
    barrier();
    for (uint st = 32u; st > 0u; st >>= 1u) {
        if (l < st) s[l] += s[l + st];
        barrier();
    }
    if (l == 0u) sums[gl_WorkGroupID.x] = s[0];
    atomicAdd(sum, v[gl_GlobalInvocationID.x]);
    atomicMax(maxv, v[gl_GlobalInvocationID.x]);
    if (v[gl_GlobalInvocationID.x] % 3u == 0u) atomicAdd(count, 1u);
}
"#;
    let n = 256usize;
    let v: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(7919) % 1000).collect();
    let mut mem = Memory::default();
    mem.ssbo
        .insert(0, v.iter().flat_map(|x| x.to_le_bytes()).collect());
    mem.ssbo.insert(1, vec![0; (3 + 4) * 4]);
    let Some(m) = run_both("shared", src, [4, 1, 1], mem) else {
        return;
    };
    let o = words_u32(&m, 1);
    assert_eq!(o[0], v.iter().sum::<u32>());
    assert_eq!(o[1], *v.iter().max().unwrap());
    assert_eq!(o[2], v.iter().filter(|x| *x % 3 == 0).count() as u32);
    for g in 0..4 {
        assert_eq!(
            o[3 + g],
            v[g * 64..g * 64 + 64].iter().sum::<u32>(),
            "group {g}"
        );
    }
}

#[test]
fn float_builtins_ubo_std140_and_runtime_length() {
    let src = r#"#version 450
layout(local_size_x = 16) in;
struct S { vec3 p; float w; };
layout(std140, binding = 0) uniform U { float scale; S s[2]; mat2 m; };
layout(std430, binding = 1) buffer I { float x[]; };
layout(std430, binding = 2) buffer O { float o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    float a = x[i];
    vec2 r = m * vec2(a, 1.0);
    o[i * 8u + 0u] = sqrt(abs(a)) + floor(a) * scale;
    o[i * 8u + 1u] = dot(s[1].p, vec3(a)) + s[0].w;
    o[i * 8u + 2u] = r.x - r.y;
    o[i * 8u + 3u] = mix(a, 2.0, 0.25) + clamp(a, -1.0, 1.0) + fract(a);
    o[i * 8u + 4u] = float(x.length());
    o[i * 8u + 5u] = length(vec2(a, 3.0)) + step(0.5, a);
    o[i * 8u + 6u] = mod(a, 1.5);
    o[i * 8u + 7u] = float(int(a * 3.0)) + (a < 0.0 ? -2.0 : 2.0);
}
"#;
    let n = 16usize;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 - 7.5) * 0.37).collect();
    // std140: scale @0, s[0] @16 (p @16, w @28), s[1] @32, m @48 (columns 16 bytes apart)
    let mut ubo = vec![0u8; 96];
    let put =
        |u: &mut Vec<u8>, off: usize, v: f32| u[off..off + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut ubo, 0, 2.0);
    put(&mut ubo, 28, 0.5);
    for (k, v) in [1.0f32, 2.0, 3.0].iter().enumerate() {
        put(&mut ubo, 32 + 4 * k, *v);
    }
    put(&mut ubo, 48, 1.0);
    put(&mut ubo, 52, 2.0);
    put(&mut ubo, 64, 3.0);
    put(&mut ubo, 68, 4.0);
    let mut mem = Memory::default();
    mem.ubo.insert(0, ubo);
    mem.ssbo
        .insert(1, x.iter().flat_map(|v| v.to_le_bytes()).collect());
    mem.ssbo.insert(2, vec![0; n * 8 * 4]);
    let Some(m) = run_both("float", src, [1, 1, 1], mem) else {
        return;
    };
    let o: Vec<f32> = words_u32(&m, 2).into_iter().map(f32::from_bits).collect();
    for i in 0..n {
        let a = x[i];
        let (rx, ry) = (1.0 * a + 3.0, 2.0 * a + 4.0);
        let exp = [
            a.abs().sqrt() + a.floor() * 2.0,
            a * 1.0 + a * 2.0 + a * 3.0 + 0.5,
            rx - ry,
            a * 0.75 + 2.0 * 0.25 + a.clamp(-1.0, 1.0) + (a - a.floor()),
            n as f32,
            (a * a + 9.0).sqrt() + if a < 0.5 { 0.0 } else { 1.0 },
            a - 1.5 * (a / 1.5).floor(),
            ((a * 3.0) as i32) as f32 + if a < 0.0 { -2.0 } else { 2.0 },
        ];
        for k in 0..8 {
            let d = (o[i * 8 + k] - exp[k]).abs();
            assert!(
                d <= 1e-5 * exp[k].abs().max(1.0),
                "lane {i} output {k}: a={a} got {} want {}",
                o[i * 8 + k],
                exp[k]
            );
        }
    }
}

#[test]
fn unsupported_capability_is_named() {
    let src = r#"#version 450
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer O { float o; };
void main() { atomicAdd(o, 1.0); }
"#;
    let Some(words) = glsl_to_spirv("atomicfloat", src) else {
        return;
    };
    let target = Target::gen9();
    let err = translate(&FrontendInput {
        words: &words,
        entry: "main",
        specialization: &[],
        bindings: &[],
        target: &target,
    })
    .err()
    .expect("must be rejected");
    let msg = err.to_string();
    assert!(
        msg.contains("AtomicFloat32AddEXT") || msg.contains("SPV_EXT_shader_atomic_float_add"),
        "{msg}"
    );
}

#[test]
fn compile_reports_front_end_errors() {
    let src = "#version 450\nlayout(local_size_x = 8) in;\nvoid main() {}\n";
    let Some(words) = glsl_to_spirv("empty", src) else {
        return;
    };
    let opts = CompileOptions {
        entry_point: "nope".into(),
        ..Default::default()
    };
    let e = ferrite_compiler::compile(&words, &Target::gen9(), &opts).unwrap_err();
    assert!(
        e.to_string()
            .contains("no GLCompute entry point named 'nope'"),
        "{e}"
    );
    assert!(ferrite_compiler::compile(&[1, 2, 3], &Target::gen9(), &opts).is_err());
}

#[test]
fn specialization_push_constants_local_arrays_and_transcendentals() {
    let src = r#"#version 450
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int K = 3;
layout(push_constant) uniform P { int add; float f; } pc;
layout(std430, binding = 0) buffer O { int o[]; };
layout(std430, binding = 1) buffer F { float of[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int arr[8];
    for (int j = 0; j < 8; j++) arr[j] = j * K + pc.add;
    o[i] = arr[(i * 3u) % 8u] + int(gl_WorkGroupSize.x);
    float x = float(i) * 0.1 + pc.f;
    of[i * 6u + 0u] = atan(x, 1.5 - x);
    of[i * 6u + 1u] = asin(clamp(x - 1.0, -1.0, 1.0));
    of[i * 6u + 2u] = tanh(x - 1.0);
    of[i * 6u + 3u] = unpackHalf2x16(packHalf2x16(vec2(x, -x))).y;
    of[i * 6u + 4u] = determinant(mat3(x, 1, 2, 3, x, 4, 5, 6, x));
    of[i * 6u + 5u] = pow(x + 0.5, 2.5) + exp(x) + log(x + 1.0);
}
"#;
    let n = 32usize;
    let mut mem = Memory::default();
    mem.ssbo.insert(0, vec![0; n * 4]);
    mem.ssbo.insert(1, vec![0; n * 6 * 4]);
    let (add, fofs) = (11i32, 0.25f32);
    mem.push = add
        .to_le_bytes()
        .iter()
        .chain(fofs.to_le_bytes().iter())
        .copied()
        .collect();
    let spec = [
        (0u32, 16u32.to_le_bytes().to_vec()),
        (1u32, 7u32.to_le_bytes().to_vec()),
    ];
    let Some(m) = run_both_spec("specpush", src, [2, 1, 1], mem, &spec) else {
        return;
    };
    let o = words_u32(&m, 0);
    let of: Vec<f32> = words_u32(&m, 1).into_iter().map(f32::from_bits).collect();
    for i in 0..n {
        assert_eq!(o[i] as i32, ((i * 3) % 8) as i32 * 7 + add + 16, "lane {i}");
        let x = i as f32 * 0.1 + fofs;
        let xd = f64::from(x);
        let det = xd * (xd * xd - 24.0) - 3.0 * (xd - 12.0) + 5.0 * (4.0 - 2.0 * xd);
        let exp = [
            xd.atan2(1.5 - xd),
            (xd - 1.0).clamp(-1.0, 1.0).asin(),
            (xd - 1.0).tanh(),
            f64::from(half::f16::from_f32(-x).to_f32()),
            det,
            (xd + 0.5).powf(2.5) + xd.exp() + (xd + 1.0).ln(),
        ];
        for k in 0..6 {
            let got = f64::from(of[i * 6 + k]);
            let tol = 2e-5 * exp[k].abs().max(1.0);
            assert!(
                (got - exp[k]).abs() <= tol,
                "lane {i} output {k}: x={x} got {got} want {}",
                exp[k]
            );
        }
    }
}

#[test]
fn compile_disassembles_only_when_the_text_is_asked_for() {
    let src = "#version 450\nlayout(local_size_x = 8) in;\nlayout(std430, binding = 0) buffer B { uint v[]; };\nvoid main() { v[gl_GlobalInvocationID.x] *= 3u; }\n";
    let Some(words) = glsl_to_spirv("lazy_asm", src) else {
        return;
    };
    let opts = CompileOptions {
        entry_point: "main".into(),
        ..Default::default()
    };
    let plain = ferrite_compiler::compile(&words, &Target::gen9(), &opts).unwrap();
    assert!(plain.asm.is_empty(), "{}", plain.asm);
    assert!(
        !plain
            .stats
            .pass_times
            .0
            .iter()
            .any(|(n, _)| n.contains("disassemble")),
        "{}",
        plain.stats.pass_times
    );
    let keep = CompileOptions {
        keep_ir: true,
        ..opts
    };
    let text = ferrite_compiler::compile(&words, &Target::gen9(), &keep).unwrap();
    assert_eq!(text.binary, plain.binary);
    assert!(text.asm.contains("send"), "{}", text.asm);
    assert_eq!(
        // The encoder pads the end of the program with a `nop`, not an instruction of the kernel.
        text.asm
            .lines()
            .filter(|l| l.starts_with("0x") && !l.contains(": nop"))
            .count() as u32,
        text.stats.instructions,
        "{}",
        text.asm
    );
}

#[test]
fn multiply_add_fuses_unless_precise_or_nocontract() {
    let src = "#version 450\nlayout(local_size_x = 8) in;\nlayout(std430, binding = 0) buffer B { float v[]; };\nlayout(std430, binding = 1) buffer O { float o[]; };\nvoid main() {\n    uint i = gl_GlobalInvocationID.x;\n    float a = v[3u * i], b = v[3u * i + 1u], c = v[3u * i + 2u];\n    precise float p = a * b + c;\n    o[2u * i] = a * b + c;\n    o[2u * i + 1u] = p;\n}\n";
    // (glslang makes every arithmetic op exact whose result is stored into a buffer a precise
    // value was computed from: the outputs go to a buffer of their own.)
    let Some(words) = glsl_to_spirv("contract", src) else {
        return;
    };
    let ffmas = |debug: DebugFlags| {
        let opts = CompileOptions {
            entry_point: "main".into(),
            debug,
            ..Default::default()
        };
        let (shader, _) =
            ferrite_compiler::pipeline::compile_to_ir(&words, &Target::gen9(), &opts).unwrap();
        let text = shader.to_string();
        (
            text.matches("ffma").count(),
            text.matches("exact fadd").count(),
            text,
        )
    };
    let (n, exact, text) = ffmas(DebugFlags::default());
    assert_eq!(
        (n, exact),
        (1, 1),
        "one fused, the precise one kept\n{text}"
    );
    let (n, _, text) = ffmas(DebugFlags {
        nocontract: true,
        ..DebugFlags::default()
    });
    assert_eq!(n, 0, "nocontract fuses nothing\n{text}");
}

/// A runtime descriptor array (`buffer B { ... } arr[];`) takes the binding's count from the
/// pipeline layout (`BindingSlot::count`): that many consecutive binding-table entries; without
/// a layout it is refused by name.
#[test]
fn runtime_descriptor_array_takes_the_layout_count() {
    let src = "#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer O { uint o[8]; };
layout(set = 0, binding = 1) buffer A { uint v[8]; } arr[];
void main() {
    uint i = gl_LocalInvocationID.x;
    o[i] = arr[nonuniformEXT(i % 5u)].v[i];
}";
    let Some(words) = glsl_to_spirv("runtime_descriptor_array", src) else {
        return;
    };
    let target = Target::gen9();
    let slots = [
        BindingSlot {
            set: 0,
            binding: 0,
            bti: 0,
            count: 1,
        },
        BindingSlot {
            set: 0,
            binding: 1,
            bti: 1,
            count: 5,
        },
    ];
    let input = |bindings| FrontendInput {
        words: &words,
        entry: "main",
        specialization: &[],
        bindings,
        target: &target,
    };
    let out = translate(&input(&slots)).unwrap();
    let mut btis: Vec<u32> = out
        .bindings
        .iter()
        .filter(|b| b.binding == 1)
        .map(|b| b.bti)
        .collect();
    btis.sort_unstable();
    assert_eq!(btis, vec![1, 2, 3, 4, 5]);
    let text = out.shader.func.to_string();
    assert!(
        text.contains("ssbo.nu[1+") && text.contains("<5]"),
        "no NonUniform access to the 5-element array:\n{text}"
    );
    let err = translate(&input(&[]))
        .err()
        .expect("refused without a layout");
    assert!(
        err.to_string().contains("runtime descriptor array"),
        "{err}"
    );
}
