//! The compute workloads of compute_workloads.rs (same SPIR-V, same inputs) on Ferrite's
//! simulated GPU, on lavapipe and on the CPU: all three must agree exactly (the inputs are
//! chosen so that float results are exact, fused or not).
//!
//! The loader reads VK_DRIVER_FILES once per process, so each driver runs in a child process:
//! this test binary started again on its ignored `child_runs_workloads` test, with the driver's
//! manifest, printing one `RESULT <name> <words>` line per workload.

mod compute_common;

use compute_common::*;
use ferrite_tests::icd::loader_env;

// Inputs, shared by the child (which runs them) and the parent (CPU reference).
const SAXPY_N: usize = 4096;
fn saxpy_inputs() -> (f32, Vec<f32>, Vec<f32>) {
    let xs = (0..SAXPY_N).map(|i| i as f32 * 0.5 - 100.0).collect();
    let ys = (0..SAXPY_N).map(|i| (i % 7) as f32 * 3.25).collect();
    (2.5, xs, ys)
}
const REDUCE_GROUPS: usize = 5;
fn reduce_input() -> Vec<u32> {
    random_u32s(7, 64 * REDUCE_GROUPS)
        .iter()
        .map(|x| x % 1000)
        .collect()
}
fn prefix_input() -> Vec<u32> {
    random_u32s(3, 256).iter().map(|x| x % 100).collect()
}
const MAT_N: usize = 16;
fn matmul_inputs() -> (Vec<f32>, Vec<f32>) {
    (
        (0..MAT_N * MAT_N)
            .map(|i| ((i * 7) % 11) as f32 - 5.0)
            .collect(),
        (0..MAT_N * MAT_N)
            .map(|i| ((i * 3) % 5) as f32 * 0.5)
            .collect(),
    )
}
const HIST_GROUPS: usize = 3;
fn histogram_input() -> Vec<u32> {
    random_u32s(11, 50 * HIST_GROUPS)
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// Runs every workload on the driver the loader picks in this process.
fn run_workloads() -> Results {
    let mut r = Results::new();
    let mut c = Ctx::new();

    let (a, xs, ys) = saxpy_inputs();
    let k = c.kernel(&spirv("saxpy", None), 2, 8);
    let (x, y) = (c.buffer(SAXPY_N as u64 * 4), c.buffer(SAXPY_N as u64 * 4));
    c.buf(x).write_f32s(&xs);
    c.buf(y).write_f32s(&ys);
    c.bind(k, &[x, y]);
    let mut pc = a.to_le_bytes().to_vec();
    pc.extend((SAXPY_N as u32).to_le_bytes());
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        push(&c, cb, k, &pc);
        dispatch(&c, cb, SAXPY_N.div_ceil(64) as u32, 1);
    })
    .unwrap();
    r.insert("saxpy".into(), c.buf(y).read_u32s(SAXPY_N));

    let input = reduce_input();
    let k = c.kernel(&spirv("reduce", None), 2, 0);
    let (v, t) = (c.buffer(input.len() as u64 * 4), zeroed(&mut c, 2));
    c.buf(v).write_u32s(&input);
    c.bind(k, &[v, t]);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        dispatch(&c, cb, REDUCE_GROUPS as u32, 1);
    })
    .unwrap();
    r.insert("reduce".into(), c.buf(t).read_u32s(2));

    let input = prefix_input();
    let k = c.kernel(&spirv("prefix", None), 1, 0);
    let v = c.buffer(256 * 4);
    c.buf(v).write_u32s(&input);
    c.bind(k, &[v]);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    r.insert("prefix".into(), c.buf(v).read_u32s(256));

    let (av, bv) = matmul_inputs();
    let k = c.kernel(&spirv("matmul", None), 3, 4);
    let bytes = (MAT_N * MAT_N * 4) as u64;
    let (ma, mb) = (c.buffer(bytes), c.buffer(bytes));
    let mo = zeroed(&mut c, MAT_N * MAT_N);
    c.buf(ma).write_f32s(&av);
    c.buf(mb).write_f32s(&bv);
    c.bind(k, &[ma, mb, mo]);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        push(&c, cb, k, &(MAT_N as u32).to_le_bytes());
        dispatch(&c, cb, (MAT_N / 8) as u32, (MAT_N / 8) as u32);
    })
    .unwrap();
    r.insert("matmul".into(), c.buf(mo).read_u32s(MAT_N * MAT_N));

    let input = histogram_input();
    let k = c.kernel(&spirv("histogram", None), 2, 0);
    let (v, h) = (c.buffer(input.len() as u64 * 4), zeroed(&mut c, 16));
    c.buf(v).write_u32s(&input);
    c.bind(k, &[v, h]);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        dispatch(&c, cb, HIST_GROUPS as u32, 1);
    })
    .unwrap();
    r.insert("histogram".into(), c.buf(h).read_u32s(16));

    let k = c.kernel(&spirv("ids", None), 1, 0);
    let (o, ind) = (zeroed(&mut c, 4 * 64), c.buffer(12));
    c.buf(ind).write_u32s(&[3, 2, 1]);
    c.bind(k, &[o]);
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        // SAFETY: recording into a live command buffer.
        unsafe { c.dev.cmd_dispatch_indirect(cb, c.buf(ind).buffer, 0) };
    })
    .unwrap();
    r.insert("indirect".into(), c.buf(o).read_u32s(4 * 64));

    c.finish();
    r
}

/// The CPU reference of every workload.
fn cpu_reference() -> Results {
    let mut r = Results::new();
    let (a, xs, ys) = saxpy_inputs();
    let saxpy: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| a * x + y).collect();
    r.insert("saxpy".into(), bits(&saxpy));
    let input = reduce_input();
    r.insert(
        "reduce".into(),
        vec![input.iter().sum::<u32>(), REDUCE_GROUPS as u32],
    );
    let prefix: Vec<u32> = prefix_input()
        .iter()
        .scan(0u32, |s, &x| {
            *s += x;
            Some(*s)
        })
        .collect();
    r.insert("prefix".into(), prefix);
    let (av, bv) = matmul_inputs();
    let mut m = vec![0f32; MAT_N * MAT_N];
    for row in 0..MAT_N {
        for col in 0..MAT_N {
            m[row * MAT_N + col] = (0..MAT_N)
                .map(|k| av[row * MAT_N + k] * bv[k * MAT_N + col])
                .sum();
        }
    }
    r.insert("matmul".into(), bits(&m));
    let mut hist = vec![0u32; 16];
    for x in histogram_input() {
        hist[(x & 15) as usize] += 1;
    }
    r.insert("histogram".into(), hist);
    let mut ids = vec![0u32; 4 * 64];
    for gy in 0..2u32 {
        for gx in 0..3u32 {
            let g = (gx + 16 * gy) as usize;
            ids[4 * g..4 * g + 4].copy_from_slice(&[3, 2, gx, 1 + gy]);
        }
    }
    r.insert("indirect".into(), ids);
    r
}

#[test]
#[ignore = "runs only as the child of workloads_agree_on_ferrite_lavapipe_and_cpu"]
fn child_runs_workloads() {
    if !is_child() {
        return;
    }
    print_results(&run_workloads());
}

#[test]
fn workloads_agree_on_ferrite_lavapipe_and_cpu() {
    let cpu = cpu_reference();
    let ferrite = run_child("child_runs_workloads", &loader_env());
    let lavapipe = run_child("child_runs_workloads", &lavapipe_env());
    assert_eq!(
        ferrite.keys().collect::<Vec<_>>(),
        cpu.keys().collect::<Vec<_>>(),
        "Ferrite ran every workload"
    );
    for (name, want) in &cpu {
        assert_eq!(lavapipe.get(name), Some(want), "lavapipe vs CPU: {name}");
        assert_eq!(ferrite.get(name), Some(want), "Ferrite vs CPU: {name}");
    }
}
