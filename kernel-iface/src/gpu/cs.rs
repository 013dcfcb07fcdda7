//! The render command streamer: walks a batch through the job's objects and executes it.
//!
//! Commands are recognised and decoded with the genxml layouts ([`crate::genxml`]). State set
//! by a batch (pipeline, base addresses, VFE, CURBE, interface descriptors, MMIO registers)
//! belongs to the context and persists across its batches, as the hardware context image
//! does. Anything the hardware would choke on (unknown or malformed command, a batch address
//! outside every object, a runaway kernel) is a [`GpuHang`]; the kernel side then signals the
//! job's fences with an error and bans the context if needed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::debug_flag;
use crate::genxml::*;
use crate::gpu::dataport::SurfaceContext;
use crate::gpu::dispatch::{run_walker, DispatchParams, DispatchStats, KernelCache};
use crate::gpu::memory::{simstrict_from_env, GpuMemory};
use crate::sim::{ExecError, ExecJob, GpuBackend, GpuHang};

/// MMIO registers the command streamer gives meaning to.
pub mod reg {
    /// GPGPU_DISPATCHDIMX/Y/Z: group counts of an indirect GPGPU_WALKER.
    pub const GPGPU_DISPATCHDIMX: u32 = 0x2500;
    pub const GPGPU_DISPATCHDIMY: u32 = 0x2504;
    pub const GPGPU_DISPATCHDIMZ: u32 = 0x2508;
    /// Render ring timestamp (low/high dword), 12 MHz on SKL.
    pub const TIMESTAMP: u32 = 0x2358;
    pub const TIMESTAMP_HI: u32 = 0x235C;
    /// L3 partitioning; bit 0 enables the SLM partition.
    pub const L3CNTLREG: u32 = 0x7034;
    /// First command-streamer general purpose register (16 x 64 bits).
    pub const CS_GPR0: u32 = 0x2600;
}

/// Default instruction budget of one EU thread (`FERRITE_SIM_BUDGET` overrides).
pub const DEFAULT_THREAD_BUDGET: u64 = 20_000_000;
/// Commands one batch may execute before it counts as a runaway (chained-batch loops).
pub const MAX_COMMANDS_PER_BATCH: u64 = 2_000_000;
/// Commands up to this many dwords are fetched into a buffer on the stack.
const SHORT_COMMAND: usize = 64;
/// Timestamp frequency of SKL (Hz).
pub const TIMESTAMP_HZ: u64 = 12_000_000;

const PIPELINE_3D: u64 = 0;
const PIPELINE_GPGPU: u64 = 2;

/// State of one hardware context.
#[derive(Debug, Clone, Default)]
struct ContextState {
    pipeline: u64,
    general_state_base: u64,
    surface_state_base: u64,
    dynamic_state_base: u64,
    indirect_object_base: u64,
    instruction_base: u64,
    vfe: Option<MediaVfeState>,
    curbe: Vec<u8>,
    idds: Vec<u8>,
    registers: FxHashMap<u32, u32>,
}

impl ContextState {
    fn read_reg(&self, r: u32) -> u32 {
        match r {
            reg::TIMESTAMP => timestamp() as u32,
            reg::TIMESTAMP_HI => (timestamp() >> 32) as u32,
            _ => self.registers.get(&r).copied().unwrap_or(0),
        }
    }
}

fn timestamp() -> u64 {
    (crate::monotonic_ns() as u128 * TIMESTAMP_HZ as u128 / 1_000_000_000) as u64
}

/// Statistics over the life of a [`SimGpu`].
#[derive(Debug, Default)]
pub struct GpuStats {
    pub batches: AtomicU64,
    pub commands: AtomicU64,
    pub walkers: AtomicU64,
    pub groups: AtomicU64,
    pub threads: AtomicU64,
    pub instructions: AtomicU64,
    pub lane_instructions: AtomicU64,
    pub hangs: AtomicU64,
    /// Host time spent executing walkers, in nanoseconds.
    pub walker_nanos: AtomicU64,
    /// CPU time of the host threads that ran the walkers' groups, in nanoseconds (on a
    /// shared machine the wall time above also counts other processes).
    pub walker_cpu_nanos: AtomicU64,
}

impl std::fmt::Display for GpuStats {
    /// One line: the work done and the simulator's speed on it (lane-instructions per second
    /// of walker time and per CPU-second of the host threads that ran it: one
    /// lane-instruction is one EU instruction in one enabled channel).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let secs = get(&self.walker_nanos) as f64 * 1e-9;
        let cpu = get(&self.walker_cpu_nanos) as f64 * 1e-9;
        let lanes = get(&self.lane_instructions);
        write!(
            f,
            "{} walkers, {} groups, {} threads, {} instructions, {} lane-instructions in {:.3} s: {:.1} M lane-instructions/s; {:.3} CPU-s: {:.1} M per CPU-second",
            get(&self.walkers),
            get(&self.groups),
            get(&self.threads),
            get(&self.instructions),
            lanes,
            secs,
            if secs > 0.0 { lanes as f64 / secs * 1e-6 } else { 0.0 },
            cpu,
            if cpu > 0.0 { lanes as f64 / cpu * 1e-6 } else { 0.0 }
        )
    }
}

/// The simulated Gen9 render engine: command streamer, thread dispatch, EUs and data port.
pub struct SimGpu {
    /// Boxed: a job takes its context's state out of the map and puts it back after.
    contexts: Mutex<FxHashMap<u32, Box<ContextState>>>,
    scratch_page: Arc<Mutex<Vec<u8>>>,
    thread_budget: AtomicU64,
    host_threads: AtomicU64,
    strict: bool,
    dump: bool,
    /// `FERRITE_DEBUG=simstats`: log [`GpuStats`] when the device goes away.
    report: bool,
    stats: GpuStats,
    kernels: KernelCache,
}

impl Drop for SimGpu {
    fn drop(&mut self) {
        if self.report {
            log::info!("simulated GPU: {}", self.stats);
        }
    }
}

impl std::fmt::Debug for SimGpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SimGpu")
    }
}

impl Default for SimGpu {
    fn default() -> Self {
        SimGpu::new()
    }
}

impl SimGpu {
    /// A GPU configured from the environment: `FERRITE_SIM_BUDGET` (instructions per EU
    /// thread), `FERRITE_SIM_THREADS` (host threads; default: available parallelism),
    /// `FERRITE_DEBUG=batch` (print every command) and `simstrict` (page faults).
    pub fn new() -> SimGpu {
        let budget = std::env::var("FERRITE_SIM_BUDGET")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_THREAD_BUDGET);
        let threads = std::env::var("FERRITE_SIM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get() as u64)
                    .unwrap_or(1)
            });
        SimGpu {
            contexts: Mutex::new(FxHashMap::default()),
            scratch_page: GpuMemory::new_scratch_page(),
            thread_budget: AtomicU64::new(budget.max(1)),
            host_threads: AtomicU64::new(threads.max(1)),
            strict: simstrict_from_env(),
            dump: debug_flag("batch"),
            report: debug_flag("simstats"),
            stats: GpuStats::default(),
            kernels: KernelCache::default(),
        }
    }

    /// Sets the instruction budget of each EU thread.
    pub fn set_thread_budget(&self, budget: u64) {
        self.thread_budget.store(budget.max(1), Ordering::Relaxed);
    }

    /// Sets how many host threads run thread groups.
    pub fn set_host_threads(&self, n: usize) {
        self.host_threads.store(n.max(1) as u64, Ordering::Relaxed);
    }

    /// Makes unbacked accesses faults (as `FERRITE_DEBUG=simstrict`).
    pub fn with_strict(mut self, strict: bool) -> SimGpu {
        self.strict = strict;
        self
    }

    pub fn stats(&self) -> &GpuStats {
        &self.stats
    }

    fn run(&self, job: &ExecJob<'_>, ctx: &mut ContextState) -> Result<(), String> {
        let mem = GpuMemory::new(job.objects, self.scratch_page.clone(), self.strict);
        let mut ip = job.batch_address();
        // Return address of a second-level batch.
        let mut ret: Option<u64> = None;
        let mut executed = 0u64;
        if self.dump {
            eprintln!(
                "ferrite batch: context {} batch 0x{:x} ({} bytes)",
                job.ctx_id, ip, job.batch_len
            );
        }
        loop {
            executed += 1;
            if executed > MAX_COMMANDS_PER_BATCH {
                return Err(format!(
                    "more than {MAX_COMMANDS_PER_BATCH} commands: a batch loop?"
                ));
            }
            let fetch = |addr: u64, out: &mut [u32]| -> Result<(), String> {
                // The whole command in one object (the usual case): one lookup.
                if let Some((obj, off)) = mem.object_at(addr) {
                    let mut ok = true;
                    for (i, d) in out.iter_mut().enumerate() {
                        match obj.read_u32(off + 4 * i as u64) {
                            Some(v) => *d = v,
                            None => {
                                ok = false;
                                break;
                            }
                        }
                    }
                    if ok {
                        return Ok(());
                    }
                }
                // Across objects, or a fault: dword by dword, to name the address that fails.
                for (i, d) in out.iter_mut().enumerate() {
                    let a = addr + 4 * i as u64;
                    let (obj, off) = mem
                        .object_at(a)
                        .ok_or_else(|| format!("batch address 0x{a:x} is outside every object"))?;
                    *d = obj
                        .read_u32(off)
                        .ok_or_else(|| format!("batch address 0x{a:x} is outside its object"))?;
                }
                Ok(())
            };
            let mut dw0 = [0u32; 1];
            fetch(ip, &mut dw0)?;
            let Some((name, len)) = Command::identify(dw0[0]) else {
                return Err(format!("unknown command {:#010x} at 0x{ip:x}", dw0[0]));
            };
            // Commands are short: no allocation per command unless one is long. The header is
            // fetched already; the rest follows it.
            let mut short = [0u32; SHORT_COMMAND];
            let mut long = Vec::new();
            let dw: &mut [u32] = if len <= SHORT_COMMAND {
                &mut short[..len]
            } else {
                long.resize(len, 0);
                &mut long
            };
            dw[0] = dw0[0];
            fetch(ip + 4, &mut dw[1..])?;
            let dw: &[u32] = dw;
            let cmd =
                Command::unpack(dw).ok_or_else(|| format!("cannot decode {name} at 0x{ip:x}"))?;
            if self.dump {
                eprintln!("0x{ip:010x}: {cmd}");
            }
            self.stats.commands.fetch_add(1, Ordering::Relaxed);
            let next = ip + 4 * len as u64;
            let fixed = |expected: usize| -> Result<(), String> {
                if len == expected {
                    Ok(())
                } else {
                    Err(format!(
                        "malformed {name} at 0x{ip:x}: {len} dwords, the command has {expected}"
                    ))
                }
            };
            let fault = |e: crate::gpu::memory::MemFault| format!("{name} at 0x{ip:x}: {e}");
            // `len` bytes of dynamic state at `offset` from the dynamic state base.
            let read_state = |offset: u64, len: usize, ctx: &ContextState| {
                let mut data = vec![0u8; len];
                mem.read(ctx.dynamic_state_base + offset, &mut data)
                    .map_err(fault)?;
                Ok::<_, String>(data)
            };
            match cmd {
                Command::MiNoop(_) | Command::MiArbCheck(_) | Command::MiUserInterrupt(_) => {}
                Command::MiBatchBufferEnd(_) => match ret.take() {
                    Some(r) => {
                        ip = r;
                        continue;
                    }
                    None => return Ok(()),
                },
                Command::MiBatchBufferStart(c) => {
                    fixed(MiBatchBufferStart::LENGTH)?;
                    if c.address_space_indicator
                        != MiBatchBufferStart::ADDRESS_SPACE_INDICATOR_PPGTT
                    {
                        return Err(format!(
                            "MI_BATCH_BUFFER_START at 0x{ip:x} uses the GGTT from a user batch"
                        ));
                    }
                    if c.predication_enable || c.add_offset_enable || c.resource_streamer_enable {
                        return Err(format!(
                            "MI_BATCH_BUFFER_START at 0x{ip:x}: predication/add-offset/resource streamer not supported"
                        ));
                    }
                    if c.second_level_batch_buffer == 1 {
                        if ret.is_some() {
                            return Err(format!(
                                "MI_BATCH_BUFFER_START at 0x{ip:x}: a second-level batch cannot call another"
                            ));
                        }
                        ret = Some(next);
                    }
                    ip = c.batch_buffer_start_address;
                    continue;
                }
                Command::MiStoreDataImm(c) => {
                    if c.use_global_gtt {
                        return Err(format!("{name} at 0x{ip:x} writes through the GGTT"));
                    }
                    match len {
                        4 => mem.write_u32(c.address, c.immediate_data as u32),
                        5 => mem.write_u64(c.address, c.immediate_data),
                        _ => return Err(format!("malformed {name} at 0x{ip:x}: {len} dwords")),
                    }
                    .map_err(fault)?;
                }
                Command::MiLoadRegisterImm(_) => {
                    if len < 3 || len % 2 == 0 {
                        return Err(format!("malformed {name} at 0x{ip:x}: {len} dwords"));
                    }
                    for pair in dw[1..].chunks(2) {
                        let r = pair[0] & 0x007F_FFFC;
                        ctx.registers.insert(r, pair[1]);
                    }
                }
                Command::MiLoadRegisterMem(c) => {
                    fixed(MiLoadRegisterMem::LENGTH)?;
                    let v = mem.read_u32(c.memory_address).map_err(fault)?;
                    ctx.registers.insert(c.register_address as u32, v);
                }
                Command::MiLoadRegisterReg(c) => {
                    fixed(MiLoadRegisterReg::LENGTH)?;
                    let v = ctx.read_reg(c.source_register_address as u32);
                    ctx.registers
                        .insert(c.destination_register_address as u32, v);
                }
                Command::MiStoreRegisterMem(c) => {
                    fixed(MiStoreRegisterMem::LENGTH)?;
                    if c.use_global_gtt || c.predicate_enable {
                        return Err(format!("{name} at 0x{ip:x}: GGTT/predicate not supported"));
                    }
                    let v = ctx.read_reg(c.register_address as u32);
                    mem.write_u32(c.memory_address, v).map_err(fault)?;
                }
                Command::MiCopyMemMem(c) => {
                    fixed(MiCopyMemMem::LENGTH)?;
                    let v = mem.read_u32(c.source_memory_address).map_err(fault)?;
                    mem.write_u32(c.destination_memory_address, v)
                        .map_err(fault)?;
                }
                Command::MiSemaphoreWait(c) => {
                    fixed(MiSemaphoreWait::LENGTH)?;
                    let v = mem.read_u32(c.semaphore_address).map_err(fault)?;
                    let d = c.semaphore_data_dword as u32;
                    let ok = match c.compare_operation {
                        0 => v > d,
                        1 => v >= d,
                        2 => v < d,
                        3 => v <= d,
                        4 => v == d,
                        5 => v != d,
                        op => return Err(format!("{name} at 0x{ip:x}: compare operation {op}")),
                    };
                    // One engine, run synchronously: nobody else can change the value.
                    if !ok {
                        return Err(format!(
                            "{name} at 0x{ip:x} waits forever (memory {v:#x}, data {d:#x}, operation {})",
                            c.compare_operation
                        ));
                    }
                }
                Command::PipeControl(c) => {
                    fixed(PipeControl::LENGTH)?;
                    if c.destination_address_type != 0 && c.post_sync_operation != 0 {
                        return Err(format!("{name} at 0x{ip:x} writes through the GGTT"));
                    }
                    match c.post_sync_operation {
                        0 => {}
                        1 => mem.write_u64(c.address, c.immediate_data).map_err(fault)?,
                        2 => mem.write_u64(c.address, 0).map_err(fault)?,
                        _ => mem.write_u64(c.address, timestamp()).map_err(fault)?,
                    }
                    if c.lri_post_sync_operation == 1 {
                        ctx.registers
                            .insert(c.address as u32 & 0x007F_FFFC, c.immediate_data as u32);
                    }
                }
                Command::PipelineSelect(c) => {
                    fixed(PipelineSelect::LENGTH)?;
                    if c.mask_bits & 3 == 3 {
                        if c.pipeline_selection == 1 || c.pipeline_selection == 3 {
                            return Err(format!(
                                "{name} at 0x{ip:x}: pipeline {} not supported",
                                c.pipeline_selection
                            ));
                        }
                        ctx.pipeline = c.pipeline_selection;
                    }
                }
                Command::StateBaseAddress(c) => {
                    fixed(StateBaseAddress::LENGTH)?;
                    if c.general_state_base_address_modify_enable {
                        ctx.general_state_base = c.general_state_base_address;
                    }
                    if c.surface_state_base_address_modify_enable {
                        ctx.surface_state_base = c.surface_state_base_address;
                    }
                    if c.dynamic_state_base_address_modify_enable {
                        ctx.dynamic_state_base = c.dynamic_state_base_address;
                    }
                    if c.indirect_object_base_address_modify_enable {
                        ctx.indirect_object_base = c.indirect_object_base_address;
                    }
                    if c.instruction_base_address_modify_enable {
                        ctx.instruction_base = c.instruction_base_address;
                    }
                }
                Command::StateSip(_)
                | Command::X3dstateCcStatePointers(_)
                | Command::X3dstateBindingTablePoolAlloc(_)
                | Command::MediaStateFlush(_) => {}
                Command::MediaVfeState(c) => {
                    fixed(MediaVfeState::LENGTH)?;
                    self.need_gpgpu(ctx, name, ip)?;
                    ctx.vfe = Some(c);
                }
                Command::MediaCurbeLoad(c) => {
                    fixed(MediaCurbeLoad::LENGTH)?;
                    self.need_gpgpu(ctx, name, ip)?;
                    ctx.curbe = read_state(
                        c.curbe_data_start_address,
                        c.curbe_total_data_length as usize,
                        ctx,
                    )?;
                }
                Command::MediaInterfaceDescriptorLoad(c) => {
                    fixed(MediaInterfaceDescriptorLoad::LENGTH)?;
                    self.need_gpgpu(ctx, name, ip)?;
                    let n = c.interface_descriptor_total_length as usize;
                    if n == 0 || !n.is_multiple_of(32) {
                        return Err(format!(
                            "{name} at 0x{ip:x}: total length {n} is not a multiple of 32"
                        ));
                    }
                    ctx.idds = read_state(c.interface_descriptor_data_start_address, n, ctx)?;
                }
                Command::GpgpuWalker(c) => {
                    fixed(GpgpuWalker::LENGTH)?;
                    self.need_gpgpu(ctx, name, ip)?;
                    self.walker(&mem, ctx, &c)
                        .map_err(|e| format!("GPGPU_WALKER at 0x{ip:x}: {e}"))?;
                }
                Command::MiStoreDataIndex(_)
                | Command::MiAtomic(_)
                | Command::MiReportPerfCount(_) => {
                    return Err(format!(
                        "{name} at 0x{ip:x} is not supported by the simulated GPU"
                    ));
                }
            }
            ip = next;
        }
    }

    fn need_gpgpu(&self, ctx: &ContextState, name: &str, ip: u64) -> Result<(), String> {
        if ctx.pipeline != PIPELINE_GPGPU {
            return Err(format!(
                "{name} at 0x{ip:x} while the {} pipeline is selected (PIPELINE_SELECT GPGPU first)",
                if ctx.pipeline == PIPELINE_3D { "3D" } else { "media" }
            ));
        }
        Ok(())
    }

    fn walker(
        &self,
        mem: &GpuMemory,
        ctx: &ContextState,
        w: &GpgpuWalker,
    ) -> Result<DispatchStats, String> {
        let vfe = ctx
            .vfe
            .as_ref()
            .ok_or("no MEDIA_VFE_STATE before the walker")?;
        if w.predicate_enable {
            return Err("predicated walkers are not supported".into());
        }
        let at = w.interface_descriptor_offset as usize * 32;
        if at + 32 > ctx.idds.len() {
            return Err(format!(
                "interface descriptor {} was not loaded (MEDIA_INTERFACE_DESCRIPTOR_LOAD)",
                w.interface_descriptor_offset
            ));
        }
        let idd_dw: Vec<u32> = ctx.idds[at..at + 32]
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let idd = InterfaceDescriptorData::unpack(&idd_dw);
        let groups = if w.indirect_parameter_enable {
            [
                ctx.read_reg(reg::GPGPU_DISPATCHDIMX),
                ctx.read_reg(reg::GPGPU_DISPATCHDIMY),
                ctx.read_reg(reg::GPGPU_DISPATCHDIMZ),
            ]
        } else {
            [
                w.thread_group_id_x_dimension as u32,
                w.thread_group_id_y_dimension as u32,
                w.thread_group_id_z_dimension as u32,
            ]
        };
        let l3 = L3cntlreg::unpack(&[ctx.read_reg(reg::L3CNTLREG)]);
        let params = DispatchParams {
            walker: *w,
            idd,
            curbe: ctx.curbe.clone(),
            groups,
            instruction_base: ctx.instruction_base,
            surfaces: SurfaceContext {
                surface_state_base: ctx.surface_state_base,
                binding_table: idd.binding_table_pointer,
                general_state_base: ctx.general_state_base,
                dynamic_state_base: ctx.dynamic_state_base,
                sampler_state_pointer: idd.sampler_state_pointer,
            },
            scratch_code: vfe.per_thread_scratch_space as u32,
            scratch_base: vfe.scratch_space_base_pointer,
            max_threads: vfe.maximum_number_of_threads as u32 + 1,
            slm_enabled: l3.slm_enable,
            budget: self.thread_budget.load(Ordering::Relaxed),
            host_threads: self.host_threads.load(Ordering::Relaxed) as usize,
        };
        let start = std::time::Instant::now();
        let s = run_walker(mem, &params, &self.kernels)?;
        self.stats
            .walker_nanos
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.stats
            .walker_cpu_nanos
            .fetch_add(s.cpu_nanos, Ordering::Relaxed);
        self.stats.walkers.fetch_add(1, Ordering::Relaxed);
        self.stats.groups.fetch_add(s.groups, Ordering::Relaxed);
        self.stats.threads.fetch_add(s.threads, Ordering::Relaxed);
        self.stats
            .instructions
            .fetch_add(s.instructions, Ordering::Relaxed);
        self.stats
            .lane_instructions
            .fetch_add(s.lane_instructions, Ordering::Relaxed);
        Ok(s)
    }
}

impl GpuBackend for SimGpu {
    fn execute(&self, job: &ExecJob<'_>) -> Result<(), ExecError> {
        self.stats.batches.fetch_add(1, Ordering::Relaxed);
        let mut ctx = self
            .contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&job.ctx_id)
            .unwrap_or_default();
        let result = self.run(job, &mut ctx);
        self.contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(job.ctx_id, ctx);
        result.map_err(|reason| {
            self.stats.hangs.fetch_add(1, Ordering::Relaxed);
            if self.dump {
                eprintln!("ferrite batch: GPU hang: {reason}");
            }
            ExecError::Hang(GpuHang { reason })
        })
    }

    fn context_destroyed(&self, ctx_id: u32) {
        self.contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&ctx_id);
    }
}
