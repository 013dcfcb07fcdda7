//! GPGPU_WALKER -> thread groups -> EU threads.
//!
//! For every thread group of the walker's grid this builds `ceil(group / SIMD)` threads
//! (the walker's `Thread Width Counter Maximum + 1`), loads each one's payload and runs them
//! interleaved: each thread runs until it ends or waits at a barrier, and once every thread
//! of the group has arrived at the barrier all are resumed. Groups are independent and are
//! spread over host threads (`std::thread::scope`), each with its own SLM.
//!
//! Thread payload (see docs/dispatch-contract.md):
//! * R0: DW1 group id X, DW2 bits 27:24 barrier id, DW3 bits 31:5 the IDD's sampler-state
//!   pointer and bits 3:0 the per-thread scratch size code, DW5 bits 31:10 the thread's scratch base (relative to General State Base) and bits
//!   9:0 its FFTID, DW6 group id Y, DW7 group id Z; the rest zero.
//! * R1..: the IDD's cross-thread CURBE registers (the first `CrossThreadConstantDataReadLength`
//!   registers of the CURBE), then the thread's own per-thread block
//!   (`ConstantURBEntryReadLength` registers at `cross + t * per_thread` registers).
//! * The group's last thread starts with the walker's Right Execution Mask as dispatch mask;
//!   the others with every channel of the SIMD width.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferrite_isa::Gen;

use crate::genxml::{GpgpuWalker, InterfaceDescriptorData};
use crate::gpu::dataport::{Port, Surface, SurfaceContext};
use crate::gpu::eu::{Kernel, ThreadState, ThreadStatus};
use crate::gpu::memory::GpuMemory;

/// The byte a fresh shared-local-memory allocation holds in the model (see the dispatch
/// loop).
pub const SLM_POISON: u8 = 0xA5;

/// At most this many threads in one thread group (SKL GT2: 56 per subslice).
pub const MAX_THREADS_PER_GROUP: u32 = 56;
/// At most this much shared local memory per group.
pub const MAX_SLM_BYTES: usize = 64 * 1024;

/// Everything a walker needs besides memory.
#[derive(Debug, Clone)]
pub struct DispatchParams {
    pub walker: GpgpuWalker,
    pub idd: InterfaceDescriptorData,
    /// The CURBE as loaded by MEDIA_CURBE_LOAD.
    pub curbe: Vec<u8>,
    /// Group counts (from the walker, or the indirect-dispatch registers).
    pub groups: [u32; 3],
    pub instruction_base: u64,
    pub surfaces: SurfaceContext,
    /// Per-thread scratch size code (MEDIA_VFE_STATE Per Thread Scratch Space) and base.
    pub scratch_code: u32,
    pub scratch_base: u64,
    /// MEDIA_VFE_STATE Maximum Number of Threads + 1.
    pub max_threads: u32,
    /// L3CNTLREG has the SLM partition enabled.
    pub slm_enabled: bool,
    /// Instruction budget of each thread.
    pub budget: u64,
    /// Host threads to use.
    pub host_threads: usize,
}

/// What a dispatch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchStats {
    pub groups: u64,
    pub threads: u64,
    pub instructions: u64,
    pub lane_instructions: u64,
    pub messages: u64,
    /// CPU time of the host threads that ran the groups, in nanoseconds.
    pub cpu_nanos: u64,
}

fn ones(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1 << n) - 1
    }
}

/// How many decoded kernels a [`KernelCache`] keeps.
const KERNEL_CACHE_ENTRIES: usize = 64;

/// Kernels already decoded and prepared, keyed by start address and checked against the
/// bytes they were decoded from: a pipeline dispatched many times is decoded once, and a
/// kernel rewritten at the same address is decoded again.
#[derive(Default)]
pub struct KernelCache {
    /// Most recently used first.
    entries: Mutex<Vec<CachedKernel>>,
}

struct CachedKernel {
    address: u64,
    bytes: Vec<u8>,
    kernel: Arc<Kernel>,
}

impl std::fmt::Debug for KernelCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KernelCache")
    }
}

impl KernelCache {
    /// The kernel binary at `address` (up to the end of its object), decoded.
    fn load(&self, mem: &GpuMemory, address: u64) -> Result<Arc<Kernel>, String> {
        let (obj, off) = mem
            .object_at(address)
            .ok_or_else(|| format!("kernel start 0x{address:x} is not inside any object"))?;
        let len = (obj.len() as u64 - off).min(1 << 20) as usize;
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = entries
            .iter()
            .position(|c| c.address == address && c.bytes.len() <= len)
        {
            let mut now = vec![0u8; entries[i].bytes.len()];
            obj.read(off, &mut now);
            if now == entries[i].bytes {
                let hit = entries.remove(i);
                let kernel = hit.kernel.clone();
                entries.insert(0, hit);
                return Ok(kernel);
            }
        }
        let mut bytes = vec![0u8; len];
        obj.read(off, &mut bytes);
        let kernel = Arc::new(
            Kernel::decode(&bytes, Gen::Gen9)
                .map_err(|e| format!("kernel at 0x{address:x}: {e}"))?,
        );
        bytes.truncate(kernel.byte_len());
        entries.retain(|c| c.address != address);
        entries.insert(
            0,
            CachedKernel {
                address,
                bytes,
                kernel: kernel.clone(),
            },
        );
        entries.truncate(KERNEL_CACHE_ENTRIES);
        Ok(kernel)
    }
}

/// Runs one GPGPU_WALKER to completion; `Err` = GPU hang with the reason.
pub fn run_walker(
    mem: &GpuMemory,
    p: &DispatchParams,
    kernels: &KernelCache,
) -> Result<DispatchStats, String> {
    let w = &p.walker;
    let idd = &p.idd;
    let simd = match w.simd_size {
        0 => 8,
        1 => 16,
        2 => 32,
        s => return Err(format!("GPGPU_WALKER SIMD Size {s} is reserved")),
    };
    if w.thread_height_counter_maximum != 0 || w.thread_depth_counter_maximum != 0 {
        return Err("GPGPU_WALKER with thread height/depth counters is not supported".into());
    }
    let threads = w.thread_width_counter_maximum as u32 + 1;
    if threads > MAX_THREADS_PER_GROUP {
        return Err(format!(
            "thread group of {threads} threads: at most {MAX_THREADS_PER_GROUP} are possible"
        ));
    }
    if idd.number_of_threads_in_gpgpu_thread_group as u32 != threads {
        return Err(format!(
            "IDD says {} threads per group, the walker {threads}",
            idd.number_of_threads_in_gpgpu_thread_group
        ));
    }
    let slm_size = match idd.shared_local_memory_size {
        0 => 0,
        n @ 1..=7 => 1024usize << (n - 1),
        n => return Err(format!("IDD Shared Local Memory Size {n} is reserved")),
    };
    if slm_size > 0 && !p.slm_enabled {
        return Err(
            "the kernel uses shared local memory but L3CNTLREG has no SLM partition".into(),
        );
    }
    let cross = idd.cross_thread_constant_data_read_length as usize;
    let per_thread = idd.constant_urb_entry_read_length as usize;
    let read_offset = idd.constant_urb_entry_read_offset as usize;
    if 1 + cross + per_thread > 128 {
        return Err(format!(
            "CURBE payload of {} registers does not fit in the GRF",
            cross + per_thread
        ));
    }
    let curbe_needed = (read_offset + cross + per_thread * threads as usize) * 32;
    if curbe_needed > p.curbe.len() {
        return Err(format!(
            "the dispatch reads {curbe_needed} CURBE bytes, MEDIA_CURBE_LOAD loaded {}",
            p.curbe.len()
        ));
    }
    let right_mask = {
        let m = w.right_execution_mask as u32 & ones(simd);
        if m == 0 {
            return Err("GPGPU_WALKER Right Execution Mask is empty".into());
        }
        m
    };
    let kernel = kernels.load(mem, p.instruction_base + idd.kernel_start_pointer)?;
    let start = [
        w.thread_group_id_starting_x as u32,
        w.thread_group_id_starting_y as u32,
        w.thread_group_id_starting_resume_z as u32,
    ];
    let counts: Vec<u64> = (0..3)
        .map(|i| p.groups[i].saturating_sub(start[i]) as u64)
        .collect();
    let total = counts[0] * counts[1] * counts[2];
    let scratch_per_thread = if p.scratch_code > 11 {
        0
    } else {
        1024u64 << p.scratch_code
    };

    let next = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let error: Mutex<Option<String>> = Mutex::new(None);
    let stats = Mutex::new(DispatchStats::default());
    let workers = p.host_threads.clamp(1, 64).min(total.max(1) as usize);
    // Scratch slots: each worker owns `threads` consecutive FFTIDs.
    if p.scratch_code <= 11 && (workers as u32) * threads > p.max_threads.max(threads) {
        log::debug!("more concurrent threads than MEDIA_VFE_STATE allows; running serially");
    }
    let workers = if (workers as u32) * threads > p.max_threads.max(threads) {
        1
    } else {
        workers
    };

    let work = |worker: usize| {
        let cpu_start = crate::thread_cpu_ns();
        let mut cache: [Option<Surface>; 253] = [None; 253];
        // Shared local memory is not cleared by the hardware: a group finds what the group
        // before it on the same slice left, and a fresh allocation holds stale data. The model
        // starts from a fixed non-zero pattern and keeps each group's leftovers, so a shader
        // that reads SLM it did not write (or zero, VK_KHR_zero_initialize_workgroup_memory)
        // sees garbage here too.
        let mut slm = vec![SLM_POISON; slm_size];
        let mut local = DispatchStats::default();
        let mut threads_state: Vec<ThreadState> = Vec::new();
        loop {
            if abort.load(Ordering::Relaxed) {
                break;
            }
            let g = next.fetch_add(1, Ordering::Relaxed);
            if g >= total {
                break;
            }
            let gid = [
                start[0] + (g % counts[0]) as u32,
                start[1] + ((g / counts[0]) % counts[1]) as u32,
                start[2] + (g / (counts[0] * counts[1])) as u32,
            ];
            for t in 0..threads {
                let mask = if t + 1 == threads {
                    right_mask
                } else {
                    ones(simd)
                };
                // Threads of the previous group are reused: same state as new ones, without
                // allocating their registers again.
                match threads_state.get_mut(t as usize) {
                    Some(ts) => ts.reset(simd, mask),
                    None => threads_state.push(ThreadState::new(simd, mask)),
                }
                let ts = &mut threads_state[t as usize];
                let grf = ts.grf_bytes_mut();
                let fftid = worker as u32 * threads + t;
                let put = |grf: &mut [u8], dw: usize, v: u32| {
                    grf[dw * 4..dw * 4 + 4].copy_from_slice(&v.to_le_bytes())
                };
                put(grf, 1, gid[0]);
                put(grf, 2, ((g % 16) as u32) << 24);
                // R0.3: the IDD's SamplerStatePointer (bits 31:5) with the scratch size code
                // (bits 3:0); shaders offset it for sampler indices above 15.
                let ssp = p.surfaces.sampler_state_pointer as u32 & !0x1F;
                put(grf, 3, ssp | (p.scratch_code & 0xF));
                let scratch = p.scratch_base + fftid as u64 * scratch_per_thread;
                put(grf, 5, (scratch as u32 & !0x3FF) | (fftid & 0x3FF));
                put(grf, 6, gid[1]);
                put(grf, 7, gid[2]);
                let c0 = read_offset * 32;
                grf[32..32 + cross * 32].copy_from_slice(&p.curbe[c0..c0 + cross * 32]);
                let pt = c0 + (cross + t as usize * per_thread) * 32;
                let at = 32 + cross * 32;
                grf[at..at + per_thread * 32].copy_from_slice(&p.curbe[pt..pt + per_thread * 32]);
            }
            let mut budgets = vec![p.budget; threads as usize];
            let mut done = vec![false; threads as usize];
            let mut failure = None;
            'group: loop {
                let mut waiting = 0;
                let mut finished = 0;
                for (t, ts) in threads_state.iter_mut().enumerate() {
                    if done[t] {
                        finished += 1;
                        continue;
                    }
                    let mut port = Port::new(mem, &p.surfaces, &mut cache, &mut slm);
                    // A bug in the simulator must not take the host process down: it
                    // becomes a hang of this dispatch.
                    let status = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        ts.run(&kernel, &mut port, &mut budgets[t])
                    }))
                    .unwrap_or_else(|_| {
                        ThreadStatus::Hang("the simulator panicked running this thread".into())
                    });
                    local.messages += port.messages;
                    match status {
                        ThreadStatus::Eot => {
                            done[t] = true;
                            finished += 1;
                        }
                        ThreadStatus::Barrier => {
                            if !idd.barrier_enable {
                                failure = Some(format!(
                                    "thread {t} sent a barrier message but the IDD has Barrier Enable clear"
                                ));
                                break 'group;
                            }
                            waiting += 1;
                        }
                        ThreadStatus::Hang(why) => {
                            failure = Some(format!(
                                "thread {t} of group ({}, {}, {}): {why}",
                                gid[0], gid[1], gid[2]
                            ));
                            break 'group;
                        }
                    }
                    if abort.load(Ordering::Relaxed) {
                        break 'group;
                    }
                }
                if finished == threads {
                    break;
                }
                if waiting > 0 && waiting + finished == threads && finished > 0 {
                    failure = Some(format!(
                        "group ({}, {}, {}): {waiting} threads wait at a barrier that {finished} ended threads never reach",
                        gid[0], gid[1], gid[2]
                    ));
                    break;
                }
                // Every live thread has arrived at the barrier: the next round resumes them.
            }
            for ts in &threads_state {
                local.instructions += ts.instructions;
                local.lane_instructions += ts.lane_instructions;
            }
            local.threads += threads as u64;
            local.groups += 1;
            if let Some(f) = failure {
                abort.store(true, Ordering::Relaxed);
                error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(f);
                break;
            }
        }
        local.cpu_nanos = (crate::thread_cpu_ns() - cpu_start).max(0) as u64;
        let mut s = stats.lock().unwrap_or_else(|e| e.into_inner());
        s.cpu_nanos += local.cpu_nanos;
        s.groups += local.groups;
        s.threads += local.threads;
        s.instructions += local.instructions;
        s.lane_instructions += local.lane_instructions;
        s.messages += local.messages;
    };

    if workers <= 1 {
        work(0);
    } else {
        std::thread::scope(|s| {
            for wk in 1..workers {
                let work = &work;
                s.spawn(move || work(wk));
            }
            work(0);
        });
    }
    if let Some(e) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(stats.into_inner().unwrap_or_else(|e| e.into_inner()))
}
