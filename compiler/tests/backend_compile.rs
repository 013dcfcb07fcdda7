//! Back-end tests: kernels compiled from IR text and from GLSL (through the front end and
//! the middle passes) at SIMD8/16/32; every kernel goes through the ISA validator (the
//! back end runs it in debug builds, and these tests set `validate` as well), and its
//! binary must decode back to the same instruction count.

use ferrite_compiler::backend::{self, BackendOptions, Kernel};
use ferrite_compiler::parse::parse_shader;
use ferrite_compiler::pipeline::{compile_to_ir, CompileOptions, DebugFlags};
use ferrite_compiler::{BindingSlot, Target};

fn opts(width: u32) -> BackendOptions {
    BackendOptions {
        no8: width != 8,
        no16: width != 16,
        no32: width != 32,
        validate: true,
        ..BackendOptions::gen9()
    }
}

fn check(k: &Kernel, width: u32) {
    assert_eq!(k.simd, width);
    assert!(!k.binary.is_empty());
    assert_eq!(k.binary.len() % 16, 0);
    let decoded = ferrite_isa::decode_program(&k.binary, ferrite_isa::Gen::Gen9).unwrap();
    // Compaction may pad the program with one NOP.
    let real = decoded.len() as u32
        - u32::from(decoded.last().unwrap().inst.opcode == ferrite_isa::Opcode::Nop);
    assert_eq!(real, k.stats.instructions, "{}", k.asm);
    // Last real instruction (before any padding NOP) is the EOT send.
    let eot = decoded
        .iter()
        .rev()
        .find(|p| p.inst.opcode != ferrite_isa::Opcode::Nop)
        .unwrap();
    assert!(
        matches!(
            eot.inst.operands,
            ferrite_isa::Operands::Send { eot: true, .. }
        ),
        "{}",
        k.asm
    );
    // The validator on the decoded (compacted) binary too.
    let insts: Vec<_> = decoded.iter().map(|p| p.inst).collect();
    let offs: Vec<usize> = decoded.iter().map(|p| p.offset).collect();
    let v = ferrite_isa::validate::validate_program_at(
        &insts,
        &offs,
        k.binary.len(),
        ferrite_isa::validate::Platform::Skl,
    );
    assert!(
        v.is_empty(),
        "{}\n{}",
        ferrite_isa::validate::report(&v),
        k.asm
    );
}

const STRAIGHT: &str = "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 4
    %3:i32 = imul %1, %2
    %4:f32 = load ssbo[0] %3 align 4
    %5:f32 = const 2.0
    %6:f32 = fmul %4, %5
    %7:f32 = const 1.0
    %8:f32 = fadd %6, %7
    store ssbo[1] %3, %8 align 4
}
";

#[test]
fn straight_line_kernel_all_widths() {
    let s = parse_shader(STRAIGHT).unwrap();
    for w in [8, 16, 32] {
        let k = backend::compile(&s, &opts(w)).unwrap();
        check(&k, w);
        // SIMD32 sends data-port messages as two SIMD16 halves.
        let sends = if w == 32 { 2 * 2 + 1 } else { 2 + 1 };
        assert_eq!(k.stats.sends, sends, "{}", k.asm);
        assert_eq!(k.stats.spills, 0);
        assert_eq!(k.btis, vec![0, 1]);
        assert!(k.asm.contains("send"), "{}", k.asm);
        assert!(k.stats.cycles > 200, "a data-port read costs ~200 cycles");
    }
}

#[test]
fn width_policy_is_mesas() {
    let o = BackendOptions::gen9();
    assert_eq!(backend::candidate_widths(8, &o), vec![8]);
    assert_eq!(backend::candidate_widths(20, &o), vec![8, 16]);
    assert_eq!(backend::candidate_widths(1024, &o), vec![32]);
    assert_eq!(backend::candidate_widths(512, &o), vec![16]);
    let no16 = BackendOptions {
        no16: true,
        ..BackendOptions::gen9()
    };
    assert_eq!(backend::candidate_widths(20, &no16), vec![8]);
    let s = parse_shader(STRAIGHT).unwrap();
    // 64 invocations: SIMD8 (8 threads) and SIMD16 compile; the widest without spills wins.
    let k = backend::compile(&s, &o).unwrap();
    assert_eq!(k.simd, 16);
    assert_eq!(k.threads_per_group, 4);
    assert_eq!(k.stats.max_dispatch_width, 16);
}

/// `n` floats loaded, all live together, then summed: at SIMD16 each takes two GRFs.
fn live_loads(n: u32) -> String {
    let mut s = String::from(
        "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 4
    %3:i32 = imul %1, %2
",
    );
    for k in 0..n {
        s += &format!("    %{}:f32 = load ssbo[0] %3 align 4\n", 10 + k);
    }
    let mut sum = 10;
    for k in 1..n {
        s += &format!("    %{}:f32 = fadd %{sum}, %{}\n", 10 + n + k, 10 + k);
        sum = 10 + n + k;
    }
    s += &format!("    store ssbo[1] %3, %{sum} align 4\n}}\n");
    s
}

#[test]
fn widest_width_without_spills_is_compiled_first_and_alone() {
    // In program order (no scheduling for pressure, which would load each value next to
    // its add: see `pressure_scheduling_keeps_simd16_for_independent_loads`).
    let o = BackendOptions {
        no_pressure_sched: true,
        ..BackendOptions::gen9()
    };
    let at = |w: u32| BackendOptions {
        no_pressure_sched: true,
        ..opts(w)
    };
    let times = |k: &Kernel| -> Vec<String> {
        k.stats
            .pass_times
            .0
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    };
    // Fits at SIMD16: SIMD8 is never compiled (its kernel could not have been chosen).
    let s = parse_shader(STRAIGHT).unwrap();
    let k = backend::compile_binary(&s, &o).unwrap();
    assert_eq!(k.simd, 16);
    let names = times(&k);
    assert!(names.iter().all(|n| !n.starts_with("simd8")), "{names:?}");
    // 80 values live at once spill at SIMD16 (160 GRFs), not at SIMD8: SIMD16 stops at the
    // register pressure, then SIMD8 is the kernel, the same one SIMD8 alone gives.
    let s = parse_shader(&live_loads(80)).unwrap();
    let k = backend::compile_binary(&s, &o).unwrap();
    assert_eq!((k.simd, k.stats.spills), (8, 0));
    let names = times(&k);
    assert!(
        names.contains(&"simd16 (failed: this width would spill)".to_string())
            && !names.iter().any(|n| n == "simd16 regalloc"),
        "{names:?}"
    );
    let alone = backend::compile_binary(&s, &at(8)).unwrap();
    assert_eq!(k.binary, alone.binary);
    // Spilling everywhere: the fewest spills, narrowest first among equals.
    let s = parse_shader(&live_loads(200)).unwrap();
    let k = backend::compile_binary(&s, &o).unwrap();
    let (k8, k16) = (
        backend::compile_binary(&s, &at(8)).unwrap(),
        backend::compile_binary(&s, &at(16)).unwrap(),
    );
    assert!(k8.stats.spills > 0 && k16.stats.spills > 0);
    let want = if k16.stats.spills < k8.stats.spills {
        &k16
    } else {
        &k8
    };
    assert_eq!((k.simd, &k.binary), (want.simd, &want.binary));
}

/// The 80 loads of `live_loads(80)` read memory no store in between may change, so the
/// scheduling for register pressure moves each next to its add: SIMD16 fits without spills
/// (in program order it needs 160 GRFs and the kernel drops to SIMD8).
#[test]
fn pressure_scheduling_keeps_simd16_for_independent_loads() {
    let s = parse_shader(&live_loads(80)).unwrap();
    let k = backend::compile_binary(&s, &BackendOptions::gen9()).unwrap();
    assert_eq!((k.simd, k.stats.spills, k.stats.fills), (16, 0, 0));
}

const CONTROL: &str = "shader local_size 16 1 1 shared 0 local 0 push 0
fn main {
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 4
    %2:i32 = imul %0, %1
    %3:i32 = load ssbo[0] %2 align 4
    %4:i32 = const 0
    %5:i32 = const 1
    %6:i32 = const 10
    %7:i32, %8:i32 = loop (%9:i32 = %4, %10:i32 = %4) {
        %11:b32 = ilt %9, %3
        if %11 {
            yield
        } else {
            break %9, %10
        }
        %12:i32 = iand %9, %5
        %13:b32 = ieq %12, %4
        %14:i32 = if %13 {
            %15:i32 = iadd %10, %9
            yield %15
        } else {
            yield %10
        }
        %16:i32 = iadd %9, %5
        continue %16, %14
    }
    store ssbo[1] %2, %8 align 4
}
";

#[test]
fn control_flow_kernel() {
    let s = match parse_shader(CONTROL) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    for w in [8, 16, 32] {
        let k = backend::compile(&s, &opts(w)).unwrap();
        check(&k, w);
        assert_eq!(k.stats.loops, 1, "{}", k.asm);
        for op in ["if", "else", "endif", "while", "break"] {
            assert!(k.asm.contains(op), "missing {op}:\n{}", k.asm);
        }
    }
}

fn glsl(name: &str, src: &str) -> Option<Vec<u32>> {
    ferrite_compiler::testing::glsl_for_test(name, src, "vulkan1.1")
}

fn ir_of(name: &str, src: &str) -> Option<ferrite_compiler::ir::Shader> {
    let words = glsl(name, src)?;
    let copts = CompileOptions {
        entry_point: "main".into(),
        bindings: (0..8)
            .map(|b| BindingSlot {
                set: 0,
                binding: b,
                bti: b,
                count: 1,
            })
            .collect(),
        push_constant_range: (0, 64),
        ..Default::default()
    };
    let (shader, _) = compile_to_ir(&words, &Target::gen9(), &copts).unwrap();
    Some(shader)
}

/// Sample shaders; the statistics test prints their numbers.
pub const SAMPLES: &[(&str, &str)] = &[
    (
        "saxpy",
        "#version 450
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer X { float x[]; };
layout(set=0, binding=1) buffer Y { float y[]; };
layout(push_constant) uniform P { float a; } pc;
void main() { uint i = gl_GlobalInvocationID.x; y[i] = pc.a * x[i] + y[i]; }",
    ),
    (
        "intmath",
        "#version 450
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer B { int v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    int a = v[i];
    int b = a * 7 - 3;
    v[i] = (b / 5) + (b % 3) + min(a, 9) + max(a, -4) + abs(a) + (a << 2) + (a >> 1) + (a & 12) + (a | 3) + (a ^ 5);
}",
    ),
    (
        "floatmath",
        "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) buffer B { vec4 v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 a = v[i];
    v[i] = vec4(sqrt(abs(a.x)) + floor(a.y) + ceil(a.z) + fract(a.w),
                exp2(a.x) + log2(abs(a.y) + 1.0) + sin(a.z) * cos(a.w),
                a.x / (a.y + 2.0) + inversesqrt(abs(a.z) + 1.0) + pow(abs(a.w), 1.5),
                clamp(a.x, -1.0, 1.0) + sign(a.y) + mod(a.z, 3.0) + trunc(a.w));
}",
    ),
    (
        "loops",
        "#version 450
layout(local_size_x = 8, local_size_y = 4) in;
layout(set=0, binding=0) buffer B { uint v[]; };
void main() {
    uint i = gl_LocalInvocationIndex + gl_WorkGroupID.x * 32u;
    uint n = v[i] % 50u;
    uint acc = 0u;
    for (uint k = 0u; k < n; k++) {
        if ((k & 3u) == 1u) continue;
        if (acc > 1000u) break;
        acc += k * k;
    }
    v[i] = acc + gl_LocalInvocationID.y;
}",
    ),
    (
        "shared_reduce",
        "#version 450
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer B { uint v[]; };
shared uint s[64];
void main() {
    uint l = gl_LocalInvocationID.x;
    s[l] = v[gl_GlobalInvocationID.x];
    barrier();
    for (uint st = 32u; st > 0u; st >>= 1u) {
        if (l < st) s[l] += s[l + st];
        barrier();
    }
    if (l == 0u) v[gl_WorkGroupID.x * 64u] = s[0];
}",
    ),
    (
        "atomics",
        "#version 450
layout(local_size_x = 128) in;
layout(set=0, binding=0) buffer B { uint count; uint maxv; uint data[]; };
void main() {
    uint x = data[gl_GlobalInvocationID.x];
    if ((x & 1u) == 0u) atomicAdd(count, 1u);
    atomicMax(maxv, x);
    data[gl_GlobalInvocationID.x] = atomicExchange(maxv, x) + atomicMin(count, 3u);
}",
    ),
    (
        "pressure",
        "#version 450
layout(local_size_x = 1024) in;
layout(set=0, binding=0) buffer B { vec4 v[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 a0 = v[i], a1 = v[i + 1u], a2 = v[i + 2u], a3 = v[i + 3u], a4 = v[i + 4u];
    vec4 a5 = v[i + 5u], a6 = v[i + 6u], a7 = v[i + 7u], a8 = v[i + 8u], a9 = v[i + 9u];
    vec4 b0 = a0 * a1 + a2, b1 = a3 * a4 + a5, b2 = a6 * a7 + a8, b3 = a9 * a0 + a1;
    vec4 b4 = a2 * a3 + a4, b5 = a5 * a6 + a7, b6 = a8 * a9 + a0;
    v[i] = b0 * b1 + b2 * b3 + b4 * b5 + b6 + a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
}",
    ),
];

#[test]
fn glsl_samples_compile_and_validate_at_every_width() {
    for (name, src) in SAMPLES {
        let Some(shader) = ir_of(name, src) else {
            return;
        };
        for w in [8, 16, 32] {
            let total: u32 = shader.local_size.iter().product();
            if total.div_ceil(w) > 56 {
                continue;
            }
            let k = backend::compile(&shader, &opts(w))
                .unwrap_or_else(|e| panic!("{name} SIMD{w}: {e}\n{shader}"));
            check(&k, w);
            eprintln!(
                "{name:14} SIMD{w:2}: {} insts, {} sends, {} loops, {} cycles, {} spills, {} fills, {} GRFs, {} us",
                k.stats.instructions,
                k.stats.sends,
                k.stats.loops,
                k.stats.cycles,
                k.stats.spills,
                k.stats.fills,
                k.stats.grf_used,
                k.stats.compile_time_us
            );
        }
    }
}

#[test]
fn barrier_and_slm_reported() {
    let Some(shader) = ir_of("shared_reduce", SAMPLES[4].1) else {
        return;
    };
    let k = backend::compile(&shader, &BackendOptions::gen9()).unwrap();
    assert!(k.uses_barrier);
    assert_eq!(k.slm_size, 256);
    assert!(k.asm.contains("wait"), "{}", k.asm);
    assert!(k.asm.contains("gateway"), "{}", k.asm);
}

/// limits_ubo_range_64k: a constant table of eight words read at the invocation index.
const CONST_TABLE: &str = "#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) uniform U { uvec4 u[4096]; };
layout(set = 0, binding = 1) buffer O { uvec4 o[8]; };
const uint idx[8] = uint[](0u, 1u, 2047u, 2048u, 4094u, 4095u, 17u, 3000u);
void main() {
  uint i = gl_LocalInvocationID.x;
  o[i] = u[idx[i]];
}";

/// pipeline_threads' accumulator: `float acc[NUM_ROWS]` with NUM_ROWS 1, indexed by a loop
/// counter, updated in a loop.
const ACCUMULATOR: &str = "#version 450
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint ncols; } p;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer D { float d[]; };
void main() {
    uint tid = gl_LocalInvocationID.x;
    float acc[1];
    for (uint n = 0; n < 1; ++n) acc[n] = 0.0;
    for (uint col = tid; col < p.ncols; col += 32)
        for (uint n = 0; n < 1; ++n) acc[n] += a[col];
    for (uint n = 0; n < 1; ++n) d[tid + n] = acc[n];
}";

/// Small private arrays become values (passes/private.rs): no scratch, and only the
/// buffer messages and the end of thread are sends (the constant table was eight scratch
/// writes and a scratch read; the accumulator a scratch read and write per iteration).
#[test]
fn small_private_arrays_need_no_scratch() {
    for (name, src, sends) in [
        ("const_table", CONST_TABLE, 3),
        ("accumulator", ACCUMULATOR, 3),
    ] {
        let Some(shader) = ir_of(name, src) else {
            return;
        };
        assert_eq!(shader.func.local_mem_size, 0, "{name}:\n{shader}");
        let k = backend::compile(&shader, &BackendOptions::gen9()).unwrap();
        assert_eq!(k.scratch_size, 0, "{name}:\n{}", k.asm);
        assert_eq!(k.stats.sends, sends, "{name}:\n{}", k.asm);
    }
}

/// Twelve words of private memory, written at constant and run-time offsets and read at a
/// run-time one: the shape of backend_sim's `local_array`, which the middle end leaves in
/// memory (its selects would cost more than scratch).
const REG_ARRAY: &str = "shader local_size 16 1 1 shared 0 local 48 push 0
fn main {
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 4
    %2:i32 = imul %0, %1
    %3:i32 = load ssbo[0] %2 align 4
    %4:i32 = const 44
    %5:i32 = iand %3, %4
    %6:i32 = const 0
    store local %6, %3 align 4
    %7:i32 = const 40
    store local %7, %0 align 4
    store local %5, %2 align 4
    %8:i32 = load local %5 align 4
    %9:i32 = load local %6 align 4
    %10:i32 = iadd %8, %9
    %11:i32 = iadd %3, %1
    %12:i32 = iand %11, %4
    %13:i32 = load local %12 align 4
    %14:i32 = iadd %10, %13
    store ssbo[0] %2, %14 align 4
}
";

/// Private memory in a register array (`backend::isel::private`): no scratch and no
/// message for it at SIMD8 and SIMD16 (the buffer load, the store and the EOT remain, where
/// scratch took six messages more), one VxH gather per 16 channels of each run-time load,
/// and a `cmp` per row a run-time store may write. At SIMD32 the twelve rows would take 48
/// GRFs, over the quarter of the file: scratch, as with `no_private_regs` at every width.
#[test]
fn private_arrays_with_run_time_reads_live_in_registers() {
    let shader = parse_shader(REG_ARRAY).unwrap();
    for w in [8u32, 16, 32] {
        let k = backend::compile(&shader, &opts(w)).unwrap();
        check(&k, w);
        let scratch = backend::compile(
            &shader,
            &BackendOptions {
                no_private_regs: true,
                ..opts(w)
            },
        )
        .unwrap();
        check(&scratch, w);
        assert!(scratch.scratch_size >= 1024, "SIMD{w}:\n{}", scratch.asm);
        // Six scratch messages besides the three; SIMD32 splits every message in two but
        // the EOT.
        let sends = if w == 32 { 17 } else { 9 };
        assert_eq!(scratch.stats.sends, sends, "SIMD{w}:\n{}", scratch.asm);
        if w == 32 {
            assert_eq!(k.asm, scratch.asm, "SIMD32 keeps scratch");
            continue;
        }
        assert_eq!(k.scratch_size, 0, "SIMD{w}:\n{}", k.asm);
        assert_eq!(k.stats.sends, 3, "SIMD{w}:\n{}", k.asm);
        let gathers = k.asm.matches("g[a0").count();
        assert_eq!(gathers, 2, "SIMD{w}:\n{}", k.asm);
        assert!(k.asm.contains("VxH"), "SIMD{w}:\n{}", k.asm);
        // One row per start of the run-time store (twelve), none for the constant ones.
        assert_eq!(k.asm.matches("cmp.z").count(), 12, "SIMD{w}:\n{}", k.asm);
        assert!(
            k.stats.instructions < scratch.stats.instructions + 24,
            "SIMD{w}: {} against {} in scratch\n{}",
            k.stats.instructions,
            scratch.stats.instructions,
            k.asm
        );
    }
}

#[test]
fn push_constants_in_curbe_layout() {
    let Some(shader) = ir_of("saxpy", SAMPLES[0].1) else {
        return;
    };
    let k = backend::compile(&shader, &BackendOptions::gen9()).unwrap();
    assert_eq!(k.layout.push_regs, 1);
    assert_eq!(k.layout.cross_thread_regs(), 2);
    assert_eq!(k.layout.per_thread_regs(), 1);
    // The push constant is read from g1.0 (first CURBE register); a replicated three-source
    // operand shows its swizzle.
    assert!(
        ["g1<0,1,0>F", "g1.0<0,1,0>F", "g1.0<0,1,0>.xyzwF"]
            .iter()
            .any(|t| k.asm.contains(t)),
        "{}",
        k.asm
    );
    // The subgroup id is dword 7 of the per-thread register (g3 with one push register).
    assert!(k.asm.contains("g3.7<0,1,0>"), "{}", k.asm);
}

const SIZES: &str = "shader local_size 64 1 1 shared 0 local 0 push 8
fn main {
    %0:i32 = buffer_size ssbo[3]
    %1:i32 = buffer_size ubo[1]
    %2:i32 = iadd %0, %1
    %3:i32 = const 0
    %4:i32 = load push %3 align 4
    %5:i32 = iadd %2, %4
    %6:i32 = sysval subgroup_id
    %7:i32 = iadd %5, %6
    store ssbo[0] %3, %7 align 4
}
";

#[test]
fn buffer_sizes_follow_the_driver_register() {
    let shader = parse_shader(SIZES).unwrap();
    for w in [8, 16, 32] {
        let k = backend::compile(&shader, &opts(w)).unwrap();
        check(&k, w);
        assert_eq!(k.btis, vec![0, 1, 3]);
        // One dword per BTI, in BTI order, in the register after the driver register (g2).
        assert_eq!(k.layout.size_btis, vec![1, 3]);
        assert_eq!((k.layout.push_regs, k.layout.cross_thread_regs()), (1, 3));
        assert_eq!(
            k.layout.push_bti, None,
            "constant push offsets stay in the CURBE"
        );
        assert!(k.asm.contains("g3<0,1,0>UD"), "{}", k.asm);
        assert!(k.asm.contains("g3.1<0,1,0>UD"), "{}", k.asm);
        // The per-thread register (subgroup id in dword 7) moves behind the size register.
        // (local_size 64: more than one thread at every width, so the subgroup id is read; a
        // one-thread workgroup's is the constant 0.)
        assert!(k.asm.contains("g4.7<0,1,0>"), "{}", k.asm);
    }
}

const DYN_PUSH: &str = "shader local_size 16 1 1 shared 0 local 0 push 64
fn main {
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 4
    %2:i32 = imul %0, %1
    %3:i32 = load push %2 align 4
    store ssbo[2] %2, %3 align 4
}
";

/// A 32-bit push constant at a run-time offset is gathered from the CURBE registers (one
/// VxH `mov` per 16 channels, the word index straight from the `imul` by 4): no push surface
/// and no message for it, where the surface read was one message (two at SIMD32).
#[test]
fn dynamic_push_offsets_gather_from_the_curbe() {
    let shader = parse_shader(DYN_PUSH).unwrap();
    for w in [8, 16, 32] {
        let k = backend::compile(&shader, &opts(w)).unwrap();
        check(&k, w);
        assert_eq!(k.btis, vec![2]);
        assert_eq!(k.layout.push_bti, None);
        assert_eq!(k.layout.size_btis, Vec::<u32>::new());
        assert_eq!((k.layout.push_regs, k.layout.cross_thread_regs()), (2, 3));
        // Store and EOT; SIMD32 splits the store into halves.
        let sends = if w == 32 { 3 } else { 2 };
        assert_eq!(k.stats.sends, sends, "{}", k.asm);
        let gathers = k.asm.matches("g[a0").count();
        assert_eq!(gathers, (w as usize).div_ceil(16), "{}", k.asm);
        assert!(
            !k.asm.contains("shr("),
            "no shift back of the offset\n{}",
            k.asm
        );
    }
}

/// 8/16- and 64-bit push constants at run-time offsets read the push surface (the BTI after
/// the highest descriptor BTI the kernel uses); a 32-bit vector gathers from the CURBE.
#[test]
fn dynamic_push_offsets_of_every_width_compile() {
    for (t, size, surface) in [("i16", 2, true), ("f64", 8, true), ("i32x2", 4, false)] {
        let text = DYN_PUSH.replace(
            "%3:i32 = load push %2 align 4",
            &format!("%3:{t} = load push %2 align {size}"),
        );
        let Ok(shader) = parse_shader(&text) else {
            panic!("{text}");
        };
        for w in [8, 16, 32] {
            let k =
                backend::compile(&shader, &opts(w)).unwrap_or_else(|e| panic!("{t} SIMD{w}: {e}"));
            check(&k, w);
            assert_eq!(k.layout.push_bti, surface.then_some(3), "{t}");
        }
    }
}

/// A kernel computing `op` on 16-bit values of kind `kind` (made from loaded 32-bit values,
/// the result widened back and stored), in the form the middle end hands the back end.
fn native16_kernel(kind: ferrite_compiler::ir::Kind, op: ferrite_compiler::ir::AluOp) -> String {
    use ferrite_compiler::ir::{AluClass, Kind};
    let mut t = String::from(
        "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 4
    %3:i32 = imul %1, %2
    %4:i32 = load ssbo[0] %3 align 4
    %5:f32 = load ssbo[1] %3 align 4
",
    );
    // %10 is the 16-bit source.
    t += match kind {
        Kind::Int => "    %10:i16 = i2i %4\n",
        Kind::Float => "    %10:f16 = f2f %5\n",
        Kind::Bool => "    %6:i16 = i2i %4\n    %7:i16 = const 0\n    %10:b16 = ine %6, %7\n",
    };
    let st = match kind {
        Kind::Int => "i16",
        Kind::Float => "f16",
        Kind::Bool => "b16",
    };
    let srcs = vec!["%10"; op.num_srcs()].join(", ");
    let boolean = matches!(op.class(), AluClass::Compare | AluClass::Test) || kind == Kind::Bool;
    let rt = if boolean { "b16" } else { st };
    t += &format!("    %11:{rt} = {} {srcs}\n", op.name());
    t += match (boolean, kind) {
        (true, _) => "    %12:i32 = b2i %11\n    store ssbo[2] %3, %12 align 4\n",
        (false, Kind::Float) => "    %12:f32 = f2f %11\n    store ssbo[2] %3, %12 align 4\n",
        _ => "    %12:i32 = i2i %11\n    store ssbo[2] %3, %12 align 4\n",
    };
    t + "}\n"
}

/// Every op the Gen9 facts list as native in 16 bits has an emission in the back end, and
/// the kernel it gives validates at every width.
#[test]
fn every_native16_op_compiles_in_16_bits() {
    let mut n = 0;
    for (kind, ops) in ferrite_compiler::hw::GEN9.native16 {
        for op in *ops {
            let text = native16_kernel(*kind, *op);
            let s = parse_shader(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            for w in [8, 16, 32] {
                let k = backend::compile(&s, &opts(w)).unwrap_or_else(|e| panic!("{e}\n{text}"));
                check(&k, w);
            }
            n += 1;
        }
    }
    assert!(n > 30);
}

/// A 16-bit ALU op the facts do not list (here integer division, which `lower_narrow`
/// computes in 32 bits) is refused by the back end with an internal error.
#[test]
fn unlisted_16_bit_op_is_an_internal_error() {
    use ferrite_compiler::backend::BackendError;
    use ferrite_compiler::ir::{AluOp, Kind};
    let text = native16_kernel(Kind::Int, AluOp::Udiv);
    let s = parse_shader(&text).unwrap();
    match backend::compile(&s, &opts(16)) {
        Err(BackendError::Internal(m)) => assert!(m.contains("native16"), "{m}"),
        r => panic!("{:?}", r.map(|k| k.asm)),
    }
}

/// A reduction (spirv-reduce) of llama.cpp's `mul_mat_vec_id_mxfp4_f32_f32_subgroup_no_shmem`
/// shader, compiled at SIMD32 (a required subgroup size: by default it would now run at the
/// width policy's SIMD8, where it does not spill), where after the first spill rounds spill
/// temporaries of 2 GRFs next to 12- and 16-GRF registers did not colour, and the allocator
/// spilled registers live nowhere near them until it gave up ("register allocation did not
/// converge"). Compiled without `dead_values`, which removes enough loop-carried values from
/// it that it no longer spills: the allocator path needs the original pressure.
#[test]
fn allocation_converges_when_spill_temporaries_do_not_colour() {
    let bytes = include_bytes!("data/ra_stuck_spill_temporaries.spv");
    let copts = CompileOptions {
        debug: DebugFlags {
            nodeadvalues: true,
            ..Default::default()
        },
        entry_point: "main".into(),
        bindings: (0..8)
            .map(|b| BindingSlot {
                set: 0,
                binding: b,
                bti: b,
                count: 1,
            })
            .collect(),
        ..Default::default()
    };
    let words = ferrite_compiler::testing::spirv_words(bytes);
    let (shader, _) = compile_to_ir(&words, &Target::gen9(), &copts).unwrap();
    let o = BackendOptions {
        validate: true,
        subgroup: backend::SubgroupWidth::Required(32),
        ..BackendOptions::gen9()
    };
    let k = backend::compile(&shader, &o).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(k.simd, 32);
    assert!(k.stats.spills > 0, "the test needs spills: {:?}", k.stats);
}

/// Two computed doubles stored at `16 * i`, as one `f64x2` store (what `opt_vectorize` makes
/// of two adjacent stores) or as two `f64` stores.
fn f64_pair_kernel(merged: bool) -> String {
    let stores = if merged {
        "%9:f64x2 = vec %6, %8\n    store ssbo[1] %3, %9 align 16"
    } else {
        "store ssbo[1] %3, %6 align 8\n    store ssbo[1] %11, %8 align 8"
    };
    format!(
        "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {{
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 16
    %3:i32 = imul %1, %2
    %4:f64 = load ssbo[0] %3 align 8
    %5:f64 = const 2.0
    %6:f64 = fmul %4, %5
    %7:f64 = const 1.0
    %8:f64 = fadd %4, %7
    %10:i32 = const 8
    %11:i32 = iadd %3, %10
    {stores}
}}
"
    )
}

/// A merged 64-bit pair is one message whose payload is built from the doubles themselves:
/// fewer instructions than the two stores (before, the `vec` copied both into a vector
/// register that was then copied again into the payload).
#[test]
fn sixty_four_bit_pair_store_builds_its_payload_in_place() {
    let merged = parse_shader(&f64_pair_kernel(true)).unwrap();
    let split = parse_shader(&f64_pair_kernel(false)).unwrap();
    for w in [8, 16, 32] {
        let m = backend::compile(&merged, &opts(w)).unwrap();
        let s = backend::compile(&split, &opts(w)).unwrap();
        check(&m, w);
        check(&s, w);
        assert!(m.stats.sends < s.stats.sends, "{}\n{}", m.asm, s.asm);
        assert!(
            m.stats.instructions < s.stats.instructions,
            "SIMD{w}:\n{}\n{}",
            m.asm,
            s.asm
        );
    }
}

/// A byte pair at an even offset is one word byte scattered write (and read), not two
/// byte writes.
#[test]
fn byte_pair_is_one_word_message() {
    let text = "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 2
    %3:i32 = imul %1, %2
    %4:i8x2 = load ssbo[0] %3 align 2
    %5:i8 = extract %4, 0
    %6:i8 = extract %4, 1
    %7:i8x2 = vec %6, %5
    store ssbo[1] %3, %7 align 2
}
";
    let s = parse_shader(text).unwrap();
    for w in [8, 16, 32] {
        let k = backend::compile(&s, &opts(w)).unwrap();
        check(&k, w);
        // Read, write, EOT; SIMD32 sends each message as two SIMD16 halves.
        let sends = if w == 32 { 5 } else { 3 };
        assert_eq!(k.stats.sends, sends, "{}", k.asm);
    }
}

/// Four bytes (or two 16-bit values) at an offset known only to be even, or not even that,
/// are one dword byte scattered read and write, not one message per component (the access
/// may cross a dword; the data port checks each dword on its own, docs/gen9.md 6.3).
#[test]
fn four_bytes_at_an_unaligned_offset_are_one_dword_message() {
    for (ty, comps, align) in [("i8x4", 4, 2), ("i8x4", 4, 1), ("i16x2", 2, 2)] {
        let extracts: String = (0..comps)
            .map(|c| {
                format!(
                    "%{}:{} = extract %4, {c}\n",
                    10 + c,
                    &ty[..ty.find('x').unwrap()]
                )
            })
            .collect();
        let vec: Vec<String> = (0..comps).rev().map(|c| format!("%{}", 10 + c)).collect();
        let text = format!(
            "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {{
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 6
    %3:i32 = imul %1, %2
    %4:{ty} = load ssbo[0] %3 align {align}
{extracts}    %9:{ty} = vec {}
    store ssbo[1] %3, %9 align {align}
}}
",
            vec.join(", ")
        );
        let s = parse_shader(&text).unwrap();
        for w in [8, 16, 32] {
            let k = backend::compile(&s, &opts(w)).unwrap();
            check(&k, w);
            // Read, write, EOT; SIMD32 sends each message as two SIMD16 halves.
            let sends = if w == 32 { 5 } else { 3 };
            assert_eq!(k.stats.sends, sends, "{ty} align {align}:\n{}", k.asm);
        }
    }
}

/// A workgroup barrier with a shared-memory fence, in a workgroup of 16 invocations: at
/// SIMD16 and SIMD32 the workgroup is one thread and neither the gateway barrier nor the
/// fence is sent; at SIMD8 (two threads) both are. A fence for buffer memory stays.
#[test]
fn barriers_in_a_one_thread_workgroup_send_nothing() {
    let kernel = |semantics: &str| {
        format!(
            "shader local_size 16 1 1 shared 64 local 0 push 0
fn main {{
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 4
    %2:i32 = imul %0, %1
    store shared %2, %0 align 4
    control_barrier workgroup workgroup {semantics}
    %3:i32 = const 60
    %4:i32 = isub %3, %2
    %5:i32 = load shared %4 align 4
    store ssbo[0] %2, %5 align 4
}}
"
        )
    };
    let shared = parse_shader(&kernel("0x108")).unwrap();
    let buffer = parse_shader(&kernel("0x148")).unwrap();
    for w in [8, 16, 32] {
        let k = backend::compile(&shared, &opts(w)).unwrap();
        check(&k, w);
        let kb = backend::compile(&buffer, &opts(w)).unwrap();
        check(&kb, w);
        // Shared store and load, buffer store, EOT (two halves each at SIMD32), and at SIMD8
        // the fence and the barrier; with buffer memory in the semantics the fence stays.
        let base = if w == 32 { 7 } else { 4 };
        let sync = if w == 8 { 2 } else { 0 };
        assert_eq!(k.stats.sends, base + sync, "SIMD{w}:\n{}", k.asm);
        assert_eq!(kb.stats.sends, base + sync.max(1), "SIMD{w}:\n{}", kb.asm);
    }
}

/// `readonly` (SPIR-V `NonWritable`) on binding 0: its memory is not written while the
/// shader runs, so `x[i]` is read once although `o` is stored between the reads, and the
/// two stores to `o` become one message. Without `readonly` the same holds while no store
/// names `x` (its variable is not `Aliased`, so `o` is not a view of it); once the shader
/// also writes `x`, the second read may see the first store.
const NON_WRITABLE: &str = "#version 450
layout(local_size_x = 16) in;
layout(set=0, binding=0) readonly buffer X { uint x[]; };
layout(set=0, binding=1) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[2u * i] = x[i];
    o[2u * i + 1u] = x[i] * 3u + x[i ^ 1u];
}";

#[test]
fn non_writable_buffer_loads_are_not_repeated_after_stores() {
    let unwritten = NON_WRITABLE.replace("readonly ", "");
    let writable = unwritten.replace("x[i ^ 1u];\n}", "x[i ^ 1u];\n    x[i] = 0u;\n}");
    let (Some(ro), Some(un), Some(rw)) = (
        ir_of("non_writable", NON_WRITABLE),
        ir_of("unwritten", &unwritten),
        ir_of("writable", &writable),
    ) else {
        return;
    };
    assert_eq!(ro.func.readonly_buffers, vec![0], "{ro}");
    assert_eq!(un.func.readonly_buffers, vec![0], "{un}");
    assert!(rw.func.readonly_buffers.is_empty(), "{rw}");
    for w in [8, 16, 32] {
        let k_ro = backend::compile(&ro, &opts(w)).unwrap();
        let k_un = backend::compile(&un, &opts(w)).unwrap();
        let k_rw = backend::compile(&rw, &opts(w)).unwrap();
        check(&k_ro, w);
        assert_eq!(k_un.stats.sends, k_ro.stats.sends, "{}", k_un.asm);
        // Two loads, one store, EOT (each message two halves at SIMD32); the writable
        // version loads x[i] again and stores twice.
        let per_width = if w == 32 { 2 } else { 1 };
        assert_eq!(k_ro.stats.sends, 3 * per_width + 1, "{}", k_ro.asm);
        assert!(k_rw.stats.sends > k_ro.stats.sends, "{}", k_rw.asm);
    }
}

/// An atomic whose result nobody reads asks for no response (`rlen 0`, as brw sends it),
/// and constant data goes into the message payload with one `mov` (no register of its own
/// first). The second `atomic_add` here is read: it keeps its response.
#[test]
fn atomics_unused_result_and_constant_data() {
    let s = parse_shader(
        "shader local_size 16 1 1 shared 0 local 0 push 0
fn main {
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 4
    %2:i32 = imul %0, %1
    %3:i32 = const 5
    %4:i32 = atomic_add ssbo[0] %2, %3
    %5:i32 = atomic_add ssbo[0] %2, %3
    store ssbo[1] %2, %5 align 4
}
",
    )
    .unwrap();
    for w in [8, 16, 32] {
        let k = backend::compile(&s, &opts(w)).unwrap();
        check(&k, w);
        let lines: Vec<&str> = k.asm.lines().collect();
        // Each message's descriptor line follows its `send`.
        let atomics: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.contains("untyped atomic op"))
            .collect();
        let halves = if w == 32 { 2 } else { 1 };
        assert_eq!(atomics.len(), 2 * halves, "SIMD{w}:\n{}", k.asm);
        let silent = atomics.iter().filter(|l| l.contains("rlen 0")).count();
        assert_eq!(silent, halves, "SIMD{w}:\n{}", k.asm);
        // The constant 5 is written straight into each payload: the only per-channel
        // moves (the others, `WE_all`, set up the channel numbers and the EOT payload).
        let moves: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.contains(" mov(") && !l.contains("WE_all"))
            .collect();
        assert_eq!(moves.len(), 2 * halves, "SIMD{w}:\n{}", k.asm);
        assert!(
            moves.iter().all(|l| l.contains("0x00000005UD")),
            "SIMD{w}:\n{}",
            k.asm
        );
    }
}

/// A 64-bit multiply by a constant whose high dword is zero has no product with that dword
/// (`mul` of the low dwords and of the other operand's high dword only): two `mul`s where a
/// multiply of two run-time values needs three, whichever operand the constant is.
#[test]
fn int64_multiply_by_a_small_constant_skips_the_zero_dword() {
    let kernel = |a: &str, b: &str| {
        format!(
            "shader local_size 16 1 1 shared 0 local 0 push 0
fn main {{
    %0:i32 = sysval local_invocation_index
    %1:i32 = const 8
    %2:i32 = imul %0, %1
    %3:i64 = load ssbo[0] %2 align 8
    %4:i64 = load ssbo[1] %2 align 8
    %5:i64 = const 3
    %6:i64 = imul {a}
    %7:i64 = imul {b}
    %8:i64 = iadd %6, %7
    store ssbo[2] %2, %8 align 8
}}
"
        )
    };
    let constant = parse_shader(&kernel("%3, %5", "%5, %4")).unwrap();
    let variable = parse_shader(&kernel("%3, %4", "%4, %3")).unwrap();
    // Not the address's `mul` (of D, by 8).
    let muls = |k: &Kernel| {
        k.asm
            .lines()
            .filter(|l| l.contains(" mul(") && !l.contains("<1>D "))
            .count()
    };
    for w in [8, 16, 32] {
        let kc = backend::compile(&constant, &opts(w)).unwrap();
        check(&kc, w);
        let kv = backend::compile(&variable, &opts(w)).unwrap();
        check(&kv, w);
        let (c, v) = (muls(&kc), muls(&kv));
        assert!(
            v > 0 && 3 * c == 2 * v,
            "SIMD{w}: {c} against {v}:\n{}",
            kc.asm
        );
    }
}

/// Byte and word k of a loaded dword are read in place by the instructions that widen them
/// or compute on them in 16 bits (a `<32;8,4>:B` or `<16;8,2>:HF` region from byte k): the
/// `i8x4`, `u8x4` and `f16x4` loads below need no `shr` to move a component down into its
/// own dword, and the 32-bit product of a sign- and a zero-extended byte is one `mul` of
/// the two byte regions, without the widening moves.
#[test]
fn loaded_bytes_and_halves_are_read_in_place() {
    let text = "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 8
    %3:i32 = imul %1, %2
    %4:i8x4 = load ssbo[0] %3 align 4
    %5:i8x4 = load ssbo[1] %3 align 4
    %6:i32x4 = i2i %4
    %7:i32x4 = u2u %5
    %8:i32x4 = imul %6, %7
    %9:f16x4 = load ssbo[2] %3 align 8
    %10:f16 = extract %9, 1
    %11:f16x4 = fmul %9, %9
    %12:f16 = fadd %10, %10
    %13:f32x4 = f2f %11
    %14:f32 = f2f %12
    %15:i32 = const 16
    %16:i32 = imul %1, %15
    store ssbo[3] %16, %8 align 16
    store ssbo[4] %16, %13 align 16
    store ssbo[5] %1, %14 align 4
}
";
    let s = parse_shader(text).unwrap();
    for w in [8, 16, 32] {
        let k = backend::compile(&s, &opts(w)).unwrap();
        check(&k, w);
        let count = |op: &str| k.asm.lines().filter(|l| l.contains(op)).count();
        assert_eq!(count("shr("), 0, "SIMD{w}:\n{}", k.asm);
        // Each product reads byte k of the signed and of the unsigned dword.
        let muls = |k_: u32| {
            k.asm.lines().any(|l| {
                l.contains("mul(")
                    && l.contains(&format!(".{k_}<32,8,4>B "))
                    && l.contains(&format!(".{k_}<32,8,4>UB "))
            })
        };
        assert!((1..4).all(muls), "SIMD{w}:\n{}", k.asm);
        // Half 1 of the first dword, read by the products and the sum.
        assert!(count(".1<16,8,2>HF") >= 2, "SIMD{w}:\n{}", k.asm);
    }
}

/// unpack8's pieces (a 32-bit value shifted right by 8k and truncated to 8 bits) widened
/// again, and bitfield extracts of constant byte- or word-aligned fields, are `mov`s from
/// byte or word k of the value's dword; other constant fields are one or two shifts.
#[test]
fn constant_byte_fields_are_region_moves() {
    let text = "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 4
    %3:i32 = imul %1, %2
    %4:i32 = load ssbo[0] %3 align 4
    %5:i32 = const 8
    %6:i32 = ushr %4, %5
    %7:i8 = u2u %6
    %8:i32 = i2i %7
    %9:i32 = const 16
    %10:i32 = ubitfield_extract %4, %9, %9
    %11:i32 = ibitfield_extract %4, %5, %5
    %12:i32 = const 3
    %13:i32 = const 5
    %14:i32 = ubitfield_extract %4, %12, %13
    %15:i32 = const 28
    %16:i32 = const 4
    %17:i32 = ibitfield_extract %4, %15, %16
    %18:i32x4 = vec %8, %10, %11, %14
    %19:i32 = const 16
    %20:i32 = imul %1, %19
    store ssbo[1] %20, %18 align 16
    store ssbo[2] %3, %17 align 4
}
";
    let s = parse_shader(text).unwrap();
    for w in [8, 16, 32] {
        let k = backend::compile(&s, &opts(w)).unwrap();
        check(&k, w);
        let has = |op: &str, region: &str| {
            k.asm
                .lines()
                .any(|l| l.contains(&format!("{op}(")) && l.contains(region))
        };
        assert!(has("mov", ".1<32,8,4>B "), "SIMD{w}:\n{}", k.asm);
        // Word 1 (bytes 2-3; the disassembly counts subregisters in elements).
        assert!(has("mov", ".1<16,8,2>UW "), "SIMD{w}:\n{}", k.asm);
        // The general extract takes a subtraction, shifts and a predicated zero.
        assert!(!k.asm.contains("cmp."), "SIMD{w}:\n{}", k.asm);
        let shifts = k
            .asm
            .lines()
            .filter(|l| l.contains("shl(") || l.contains("shr(") || l.contains("asr("))
            .count();
        let quarters = if w == 32 { 2 } else { 1 };
        // The address's shift, the 5-bit field's two and the top nibble's one.
        assert!(shifts <= 4 * quarters, "SIMD{w}:\n{}", k.asm);
    }
}

/// A `vec4` load at SIMD32 is two SIMD16 messages, each response holding its half of the
/// four components back to back; the value keeps each component's halves together. Its
/// reads take the responses' registers: no `mov` copies a component (before, eight per
/// load), at any width.
#[test]
fn simd32_vector_load_is_read_from_its_responses() {
    let s = parse_shader(
        "shader local_size 64 1 1 shared 0 local 0 push 0
fn main {
    %0:i32x3 = sysval global_invocation_id
    %1:i32 = extract %0, 0
    %2:i32 = const 16
    %3:i32 = imul %1, %2
    %4:f32x4 = load ssbo[0] %3 align 16
    %5:f32 = extract %4, 0
    %6:f32 = extract %4, 1
    %7:f32 = extract %4, 2
    %8:f32 = extract %4, 3
    %9:f32 = fmul %5, %6
    %10:f32 = fmul %7, %8
    %11:f32 = fadd %9, %10
    %12:i32 = const 4
    %13:i32 = imul %1, %12
    store ssbo[1] %13, %11 align 4
}
",
    )
    .unwrap();
    for w in [8, 16, 32] {
        let k = backend::compile(&s, &opts(w)).unwrap();
        check(&k, w);
        // The `WE_all` moves set up the channel numbers and the EOT payload.
        let moves = k
            .asm
            .lines()
            .filter(|l| l.contains(" mov(") && !l.contains("WE_all"))
            .count();
        assert_eq!(moves, 0, "SIMD{w}:\n{}", k.asm);
        let halves = if w == 32 { 2 } else { 1 };
        assert_eq!(k.stats.sends, 2 * halves + 1, "SIMD{w}:\n{}", k.asm);
    }
}
