//! The "scalar" Gen9 back end: one lane per invocation, SIMD8/16/32.
//!
//! Pipeline per SIMD width: instruction selection into LIR through the [`lir::Builder`]
//! ([`isel`]) -> SIMD-width lowering ([`lower::lower_simd_width`]) -> logical messages to
//! payload + SEND ([`lower::lower_sends`]) -> regioning legalization ([`lower::legalize`])
//! -> where more GRFs are live at once than the file holds, register splitting ([`split`])
//! and scheduling for register pressure ([`sched_pre`]) -> register allocation with
//! spilling ([`ra`]) -> list scheduling ([`sched`]) ->
//! emission with JIP/UIP, the ISA validator, encoding and compaction ([`emit`]).
//!
//! Input assumptions (what the middle passes deliver): a [`crate::ir::Shader`] with 32-bit
//! integer/float values, booleans as 1- or 32-bit values (held as 32-bit 0 / ~0), memory
//! ops with byte offsets on `ssbo[bti]`/`ubo[bti]`/`push`/`shared`, no function variables.
//! Vectors are accepted (no scalarization needed). Push-constant loads at constant
//! offsets read the CURBE registers; at dynamic offsets they read the push-constant surface
//! (`CurbeLayout::push_bti`). `local` memory lives in scratch (per lane, stateless BTI 255),
//! before the spill slots. 8/16-bit values (after `passes::lower_narrow`: only moves,
//! conversions to and from 32 bits, `bcsel`, loads and stores) live in dword slots, see
//! [`narrow`]; 64-bit values in qword slots, see `wide`. Not yet: the ops listed in
//! [`isel`] as unsupported; they give [`BackendError::Unsupported`].
//!
//! Dispatch follows docs/dispatch-contract.md: g0 = R0, g1.. = push constants
//! (`push_regs`), then the driver register (num_workgroups, base_workgroup_id), then the
//! buffer-size registers (`CurbeLayout::size_btis`, one dword each), then the per-thread
//! register whose dword 7 is the subgroup id.

pub mod descriptor;
pub mod emit;
pub mod isel;
pub mod lir;
pub mod lower;
pub mod narrow;
pub mod opt;
pub mod ra;
pub mod sched;
pub mod sched_pre;
pub mod split;
pub mod subgroup;
pub mod wide;

use crate::hw::HwFacts;
use crate::ir;
use crate::pipeline::DebugFlags;
use crate::Target;
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("unsupported in the Gen9 back end: {0}")]
    Unsupported(String),
    #[error("no SIMD width fits: {0}")]
    NoWidth(String),
    #[error("ISA validation failed:\n{0}")]
    Validation(String),
    #[error("internal back-end error: {0}")]
    Internal(String),
    #[error("internal back-end error: {what}: {err}")]
    Isa {
        what: &'static str,
        #[source]
        err: ferrite_isa::IsaError,
    },
    /// Register allocation needed to spill where the caller said a spilling result is of
    /// no use (see [`compile`]).
    #[error("this width would spill")]
    WouldSpill,
}

/// Options the back end honours (from `FERRITE_DEBUG`) and the hardware facts it compiles for.
#[derive(Clone, Debug)]
pub struct BackendOptions {
    pub no8: bool,
    pub no16: bool,
    pub no32: bool,
    /// Run the ISA validator even in release builds.
    pub validate: bool,
    /// Skip list scheduling (keeps program order).
    pub no_sched: bool,
    /// Compute uniform values per channel, as before uniform values were computed once
    /// per thread (`FERRITE_DEBUG=nouniform`; for measuring and bisecting).
    pub no_uniform: bool,
    /// Never reorder for register pressure before allocation (`FERRITE_DEBUG=nopresched`;
    /// for measuring, and for tests that need a kernel that spills).
    pub no_pressure_sched: bool,
    /// Skip the LIR's flag-move folding, if-conversion and predicated jumps
    /// (`FERRITE_DEBUG=nobranchopt`; for measuring and bisecting).
    pub no_branch_opt: bool,
    /// Keep private memory the middle end leaves in memory in scratch, never in a register
    /// array (`FERRITE_DEBUG=noprivregs`; for measuring and bisecting).
    pub no_private_regs: bool,
    /// The target's hardware facts (GRF count, special binding-table indices, threads per
    /// workgroup).
    pub hw: HwFacts,
    /// The width rule of the pipeline stage (VK_EXT_subgroup_size_control).
    pub subgroup: SubgroupWidth,
}

/// Which width a kernel runs at, and which `SubgroupSize` it sees (docs/subgroups.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SubgroupWidth {
    /// The subgroup size is an API constant, the reported one (`HwFacts::subgroup_size`, 32):
    /// `SubgroupSize` reads it, but the kernel runs at the width policy's choice, as anv does.
    /// At a narrower SIMD width the subgroup's invocations from the width up to the size are
    /// never active; `SubgroupId` and `NumSubgroups` count hardware threads.
    #[default]
    Reported,
    /// Exactly this width, whether or not the kernel uses subgroups
    /// (`VkPipelineShaderStageRequiredSubgroupSizeCreateInfo`).
    Required(u32),
    /// The width policy's choice, subgroups or not (`ALLOW_VARYING_SUBGROUP_SIZE`).
    Varying,
}

impl SubgroupWidth {
    /// The value `SubgroupSize` reads when it is known before the width is picked: the
    /// reported size or the required one (None where it is the width itself).
    pub fn fixed_size(self, hw: &HwFacts) -> Option<u32> {
        match self {
            SubgroupWidth::Reported => Some(hw.subgroup_size),
            SubgroupWidth::Required(w) => Some(w),
            SubgroupWidth::Varying => None,
        }
    }
}

impl Default for BackendOptions {
    fn default() -> BackendOptions {
        BackendOptions::gen9()
    }
}

impl BackendOptions {
    /// The options for `target` with the `FERRITE_DEBUG` switches: the widths the target
    /// lacks or the switches exclude are off.
    pub fn new(target: &Target, debug: &DebugFlags) -> BackendOptions {
        let allowed = |w: u32| target.simd_widths.contains(&w);
        BackendOptions {
            no8: debug.no8 || !allowed(8),
            no16: debug.no16 || !allowed(16),
            no32: debug.no32 || !allowed(32),
            validate: debug.validate,
            no_sched: false,
            no_uniform: debug.nouniform,
            no_pressure_sched: debug.nopresched,
            no_branch_opt: debug.nobranchopt,
            no_private_regs: debug.noprivregs,
            hw: target.hw,
            subgroup: SubgroupWidth::Reported,
        }
    }

    /// The options for [`Target::gen9`] without debug switches.
    pub fn gen9() -> BackendOptions {
        BackendOptions::new(&Target::gen9(), &DebugFlags::default())
    }
    /// Gen9 options that compile at exactly `simd` channels, with the PRM validator on (what
    /// tests of one width want).
    pub fn gen9_at(simd: u32) -> BackendOptions {
        BackendOptions {
            no8: simd != 8,
            no16: simd != 16,
            no32: simd != 32,
            validate: true,
            ..BackendOptions::gen9()
        }
    }
}

pub use crate::kernel::{CurbeLayout, Kernel, Statistics};

/// One attempt at a width.
struct Compiled {
    kernel: Kernel,
}

fn collect_btis(f: &ir::Function, hw: &HwFacts) -> Vec<u32> {
    let mut v = Vec::new();
    f.for_each_node(&mut |n| {
        if let ir::Node::Instr(i) = n {
            let s = match &i.op {
                ir::Op::Load { space, .. }
                | ir::Op::Store { space, .. }
                | ir::Op::Atomic { space, .. }
                | ir::Op::BufferSize(space) => Some(*space),
                _ => None,
            };
            let range = match s {
                // Buffers past the binding table are read through the descriptor table.
                Some(s) if descriptor::table_range(s, hw).is_some() => 0..0,
                Some(ir::Space::Ssbo(b) | ir::Space::Ubo(b)) => b..b + 1,
                // Any element of a descriptor array indexed at run time may be read.
                Some(ir::Space::SsboArray(x) | ir::Space::UboArray(x)) => x.base..x.base + x.count,
                _ => 0..0,
            };
            for b in range {
                if !v.contains(&b) {
                    v.push(b);
                }
            }
            if let ir::Op::Image(op, r, _) = &i.op {
                // A sampler's index is its descriptor's BTI: the driver must see it to
                // write that sampler-table entry (dispatch contract). Every element of an
                // array indexed at run time may be read.
                let images = r.bti..r.bti + r.index.map_or(1, |x| x.count);
                let samplers = match op {
                    ir::ImageOp::SampleLod { sampler, .. }
                    | ir::ImageOp::SampleGrad { sampler, .. }
                    | ir::ImageOp::Gather { sampler, .. }
                    | ir::ImageOp::GatherOffset { sampler, .. } => {
                        *sampler..*sampler + r.sampler.map_or(1, |x| x.count)
                    }
                    _ => 0..0,
                };
                for b in images.chain(samplers) {
                    if !v.contains(&b) {
                        v.push(b);
                    }
                }
            }
        }
    });
    v.sort_unstable();
    v
}

/// Binding-table indices whose size `buffer_size` asks for, sorted; a storage buffer with a
/// 64-bit atomic also asks for its size and for its address (the entries tagged
/// `CurbeLayout::ADDRESS_LO` / `ADDRESS_HI`).
fn collect_size_btis(f: &ir::Function, hw: &HwFacts) -> Vec<u32> {
    let mut v = Vec::new();
    if !collect_table_descriptors(f, hw).is_empty() {
        v.extend([CurbeLayout::TABLE_LO, CurbeLayout::TABLE_HI]);
    }
    f.for_each_node(&mut |n| {
        if let ir::Node::Instr(i) = n {
            if descriptor::table_access(&i.op, hw).is_some() {
                // Address and size come from the descriptor table.
                return;
            }
            if let Some(x) = isel::atomic64_buffers(f, i) {
                for b in x {
                    for e in [b, b | CurbeLayout::ADDRESS_LO, b | CurbeLayout::ADDRESS_HI] {
                        if !v.contains(&e) {
                            v.push(e);
                        }
                    }
                }
            }
        }
        let range = match n {
            ir::Node::Instr(ir::Instr {
                op: ir::Op::BufferSize(ir::Space::Ssbo(b) | ir::Space::Ubo(b)),
                ..
            }) => *b..*b + 1,
            // arrayLength() of a descriptor-array element chosen at run time.
            ir::Node::Instr(ir::Instr {
                op: ir::Op::BufferSize(ir::Space::SsboArray(x) | ir::Space::UboArray(x)),
                ..
            }) => x.base..x.base + x.count,
            _ => 0..0,
        };
        for b in range {
            if !v.contains(&b) {
                v.push(b);
            }
        }
    });
    v.sort_unstable();
    v
}

/// The descriptor slots the kernel reads through the descriptor table, as sorted disjoint
/// (first, count) runs (`Kernel::table_descriptors`).
fn collect_table_descriptors(f: &ir::Function, hw: &HwFacts) -> Vec<(u32, u32)> {
    let mut runs = Vec::new();
    f.for_each_node(&mut |n| {
        if let ir::Node::Instr(i) = n {
            if let Some(r) = descriptor::table_access(&i.op, hw) {
                runs.push(r);
            }
        }
    });
    runs.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (first, count) in runs {
        match out.last_mut() {
            Some(last) if first <= last.0 + last.1 => {
                last.1 = last.1.max(first + count - last.0);
            }
            _ => out.push((first, count)),
        }
    }
    out
}

/// Whether a push-constant load has an offset that is not a constant and a type the CURBE
/// registers cannot be gathered from (`isel::Isel::push_gather`): then the kernel reads
/// push constants through the push-constant surface.
fn has_dynamic_push_load(f: &ir::Function) -> bool {
    let consts = f.consts();
    let mut dynamic = false;
    f.for_each_node(&mut |n| {
        if let ir::Node::Instr(ir::Instr {
            op:
                ir::Op::Load {
                    space: ir::Space::Push,
                    offset,
                    ..
                },
            dst: Some(d),
            ..
        }) = n
        {
            dynamic |= !consts.contains(*offset) && !isel::push_gathers(f.ty(*d));
        }
    });
    dynamic
}

/// Compiles `shader` at exactly `simd` channels, with its disassembly in `Kernel::asm`.
pub fn compile_simd(
    shader: &ir::Shader,
    simd: u32,
    opts: &BackendOptions,
) -> Result<Kernel, BackendError> {
    with_asm(compile_one(shader, simd, opts, true)?.kernel)
}

/// Fills `k.asm` with the disassembly of its binary (byte offsets, Mesa's syntax) and
/// records the time it took among the pass times.
pub fn with_asm(mut k: Kernel) -> Result<Kernel, BackendError> {
    if k.asm.is_empty() {
        let t = Instant::now();
        k.asm = emit::disassemble(&k.binary)?;
        k.stats
            .pass_times
            .add(&format!("simd{} disassemble", k.simd), t.elapsed());
    }
    Ok(k)
}

/// With `may_spill` false, stops with [`BackendError::WouldSpill`] at the first failed
/// colouring.
fn compile_one(
    shader: &ir::Shader,
    simd: u32,
    opts: &BackendOptions,
    may_spill: bool,
) -> Result<Compiled, BackendError> {
    let t0 = Instant::now();
    let btis = collect_btis(&shader.func, &opts.hw);
    let push_bti = has_dynamic_push_load(&shader.func).then(|| btis.last().map_or(0, |m| m + 1));
    if push_bti.is_some_and(|b| b > opts.hw.max_buffer_bti) {
        return Err(BackendError::Unsupported(
            "no binding-table index left for the push-constant surface".into(),
        ));
    }
    let layout = CurbeLayout {
        push_regs: shader.push_size.div_ceil(32) as u8,
        size_btis: collect_size_btis(&shader.func, &opts.hw),
        push_bti,
    };
    if layout.first_free() as u32 + 8 > u32::from(opts.hw.eot_payload_grf) {
        return Err(BackendError::Unsupported(
            "push constants and buffer sizes larger than the GRF file".into(),
        ));
    }
    let mut times = crate::pipeline::PassTimes::default();
    let name = |pass: &str| format!("simd{simd} {pass}");
    let mut sel = isel::Isel::new(shader, simd as u8, &layout, &opts.hw);
    sel.no_uniform = opts.no_uniform;
    if opts.no_private_regs {
        sel.private_rows = None;
    }
    if let Some(n) = opts.subgroup.fixed_size(&opts.hw) {
        sel.subgroup_size = n;
    }
    times.time(name("isel"), || sel.run())?;
    let uses_barrier = sel.uses_barrier;
    let private_in_scratch = sel.private_rows.is_none();
    let mut prog = sel.prog;
    log::trace!("LIR after selection (SIMD{simd}):\n{prog}");
    let payload_end = layout.first_free();
    if times.time(name("propagate_payload_copies"), || {
        opt::propagate_payload_copies(&mut prog, payload_end)
    }) {
        log::trace!("LIR after propagate_payload_copies:\n{prog}");
    }
    if times.time(name("lir dce"), || opt::dce(&mut prog)) {
        log::trace!("LIR after dce:\n{prog}");
    }
    if !opts.no_branch_opt {
        if times.time(name("fold_flag_moves"), || opt::fold_flag_moves(&mut prog)) {
            log::trace!("LIR after fold_flag_moves:\n{prog}");
        }
        if times.time(name("flatten_ifs"), || opt::flatten_ifs(&mut prog)) {
            log::trace!("LIR after flatten_ifs:\n{prog}");
        }
        if times.time(name("predicate_jumps"), || opt::predicate_jumps(&mut prog)) {
            log::trace!("LIR after predicate_jumps:\n{prog}");
        }
    }
    if times.time(name("coalesce_copies"), || opt::coalesce_copies(&mut prog)) {
        log::trace!("LIR after coalesce_copies:\n{prog}");
    }
    times.time(name("lower_simd_width"), || {
        lower::lower_simd_width(&mut prog)
    });
    times.time(name("lower_sends"), || lower::lower_sends(&mut prog));
    times.time(name("legalize"), || lower::legalize(&mut prog));
    if times.time(name("reuse_constants"), || opt::reuse_constants(&mut prog)) {
        log::trace!("LIR after reuse_constants:\n{prog}");
    }
    if times.time(name("propagate_copies"), || {
        opt::propagate_copies(&mut prog)
    }) {
        log::trace!("LIR after propagate_copies:\n{prog}");
        times.time(name("lir dce"), || opt::dce(&mut prog));
    }
    let file = ra::RegFile {
        first: layout.first_free(),
        end: opts.hw.allocatable_end(),
    };
    // Splitting registers lets the allocator place and spill their pieces separately, but
    // pieces packed into the same GRFs leave the scheduler after allocation fewer
    // independent instructions: split only when more GRFs are live at once than the file
    // holds, where the alternative is spilling.
    let over = |p: &lir::Program| ra::max_pressure(p) > u32::from(file.end - file.first);
    if times.time(name("split_vregs"), || {
        over(&prog) && split::split_vregs(&mut prog)
    }) {
        log::trace!("LIR after split_vregs:\n{prog}");
    }
    // Likewise, reorder for register pressure only where the program order would spill.
    if times.time(name("schedule_for_pressure"), || {
        !opts.no_pressure_sched && over(&prog) && sched_pre::schedule_for_pressure(&mut prog)
    }) {
        log::trace!("LIR after schedule_for_pressure:\n{prog}");
    }
    // Private memory first (one block per lane) unless it is in registers, spill slots after
    // it.
    let local_bytes = if private_in_scratch {
        (shader.func.local_mem_size.next_multiple_of(4) * simd).next_multiple_of(32)
    } else {
        0
    };
    let alloc = times.time(name("regalloc"), || {
        ra::allocate_with(&mut prog, file, local_bytes, may_spill)
    })?;
    let cycles = if opts.no_sched {
        0
    } else {
        times.time(name("schedule"), || sched::schedule(&mut prog, &alloc.reg))
    };
    let mut insts = times.time(name("to_isa"), || {
        emit::to_isa(&prog, &alloc.reg, simd as u8, opts.hw.grf_count)
    })?;
    // Float modes in cr0 first (branch offsets are relative, so first instructions move
    // none): the kernel's float controls, and DF denormals kept by default.
    let (mask, value) =
        emit::cr0_float_mode(&shader.func.float_controls, insts.iter().any(emit::uses_df));
    if mask != 0 {
        insts.splice(0..0, emit::cr0_write(mask, value)?);
    }
    if cfg!(debug_assertions) || opts.validate {
        times.time(name("isa validation"), || emit::validate(&insts))?;
    }
    let binary = times
        .time(name("encode+compact"), || {
            ferrite_isa::encode_program(&insts, opts.hw.gen, true)
        })
        .map_err(|err| BackendError::Isa {
            what: "encode",
            err,
        })?;
    if cfg!(debug_assertions) || opts.validate {
        times.time(name("listing round trip"), || emit::check_listing(&binary))?;
    }
    let total = shader.local_size.iter().product::<u32>().max(1);
    let stats = Statistics {
        instructions: insts.len() as u32,
        sends: insts.iter().filter(|i| i.opcode.is_send()).count() as u32,
        loops: insts
            .iter()
            .filter(|i| i.opcode == ferrite_isa::Opcode::While)
            .count() as u32,
        cycles,
        spills: alloc.spills,
        fills: alloc.fills,
        max_dispatch_width: simd,
        compile_time_us: t0.elapsed().as_micros() as u64,
        grf_used: alloc.grf_used,
        ra_rounds: alloc.rounds,
        pass_times: times,
    };
    let scratch_size = if alloc.scratch_bytes == 0 {
        0
    } else {
        alloc.scratch_bytes.next_power_of_two().max(1024)
    };
    Ok(Compiled {
        kernel: Kernel {
            binary,
            simd,
            local_size: shader.local_size,
            layout,
            slm_size: shader.shared_size,
            scratch_size,
            uses_barrier,
            btis,
            table_descriptors: collect_table_descriptors(&shader.func, &opts.hw),
            threads_per_group: total.div_ceil(simd),
            stats,
            // Filled only when someone asks (see `compile_text` and `with_asm`): decoding and
            // printing every instruction costs as much as a middle pass on large kernels.
            asm: String::new(),
            ir: String::new(),
            bindings: Vec::new(),
        },
    })
}

/// The widths Mesa's policy compiles for a group of `total` invocations: SIMD8, SIMD16
/// for groups over 8, skipping widths that need more than `hw.max_threads_per_group` threads; SIMD32
/// only when neither fits. Options remove widths.
pub fn candidate_widths(total: u32, opts: &BackendOptions) -> Vec<u32> {
    let max_threads = opts.hw.max_threads_per_group;
    let fits = |w: u32| total.div_ceil(w) <= max_threads;
    let allowed = |w: u32| match w {
        8 => !opts.no8,
        16 => !opts.no16,
        _ => !opts.no32,
    };
    let mut v: Vec<u32> = [8, 16]
        .into_iter()
        .filter(|&w| (w == 8 || total > 8) && fits(w) && allowed(w))
        .collect();
    if v.is_empty() && fits(32) && allowed(32) {
        v.push(32);
    }
    if v.is_empty() {
        // Options excluded every Mesa width: take the narrowest allowed one that fits.
        v.extend(
            [8, 16, 32]
                .into_iter()
                .filter(|&w| fits(w) && allowed(w))
                .take(1),
        );
    }
    v
}

/// Whether a function uses subgroup operations or the subgroup built-ins (whose values depend
/// on the dispatch width).
pub fn uses_subgroups(f: &ir::Function) -> bool {
    fn block(b: &ir::Block) -> bool {
        b.iter().any(|n| match n {
            ir::Node::Instr(i) => matches!(
                i.op,
                ir::Op::Subgroup(..)
                    | ir::Op::SysVal(
                        ir::SysVal::SubgroupSize
                            | ir::SysVal::SubgroupId
                            | ir::SysVal::SubgroupInvocation
                            | ir::SysVal::NumSubgroups
                    )
            ),
            ir::Node::If(i) => block(&i.then_) || block(&i.else_),
            ir::Node::Loop(l) => block(&l.body),
            _ => false,
        })
    }
    block(&f.body)
}

/// Compiles `shader` for every candidate width and returns the widest that does not spill
/// (or the one with fewest spills if all spill), with its disassembly in `Kernel::asm`.
pub fn compile(shader: &ir::Shader, opts: &BackendOptions) -> Result<Kernel, BackendError> {
    with_asm(compile_binary(shader, opts)?)
}

/// [`compile`] without the disassembly (`Kernel::asm` empty): what pipeline creation needs
/// unless the text was asked for.
pub fn compile_binary(shader: &ir::Shader, opts: &BackendOptions) -> Result<Kernel, BackendError> {
    let total = shader.local_size.iter().product::<u32>().max(1);
    let mut widths = candidate_widths(total, opts);
    // A required size is the only width tried; otherwise the width policy chooses, subgroups
    // or not (with the reported size an API constant, see `SubgroupWidth::Reported`).
    match opts.subgroup {
        SubgroupWidth::Required(w) => {
            if !opts.hw.simd_widths.contains(&w)
                || total.div_ceil(w) > opts.hw.max_threads_per_group
            {
                return Err(BackendError::NoWidth(format!(
                    "required subgroup size {w} for a group of {total} invocations (widths {:?}, \
                     at most {} threads per group)",
                    opts.hw.simd_widths, opts.hw.max_threads_per_group
                )));
            }
            widths = vec![w];
        }
        SubgroupWidth::Varying | SubgroupWidth::Reported => {}
    }
    if widths.is_empty() {
        return Err(BackendError::NoWidth(format!(
            "group of {total} invocations with no8={} no16={} no32={}",
            opts.no8, opts.no16, opts.no32
        )));
    }
    let mut times = crate::pipeline::PassTimes::default();
    // The result is the widest width that compiles without spilling when there is one (a
    // spilling kernel never replaces one that does not spill; a wider one without spills
    // replaces a narrower one), so that is tried first, widest first, each width stopping
    // at its first spill: a kernel that fits at SIMD16 is compiled once instead of twice.
    // A width that failed otherwise than by spilling fails the same way when it may spill
    // (it failed before or after an allocation without spills): its error is kept.
    let mut failed: Vec<(u32, BackendError)> = Vec::new();
    for &w in widths.iter().rev() {
        let t = Instant::now();
        match compile_one(shader, w, opts, false) {
            Ok(c) => {
                let mut k = c.kernel;
                times.0.extend(k.stats.pass_times.0.iter().cloned());
                k.stats.pass_times = times;
                return Ok(k);
            }
            Err(e) => {
                times.add(&format!("simd{w} (failed: {e})"), t.elapsed());
                if !matches!(e, BackendError::WouldSpill) {
                    failed.push((w, e));
                }
            }
        }
    }
    // Every width spills (or fails): narrowest first, the fewest spills.
    let mut best: Option<Kernel> = None;
    let mut last_err = None;
    for w in widths {
        if let Some(k) = failed.iter().position(|f| f.0 == w) {
            last_err = Some(failed.swap_remove(k).1);
            continue;
        }
        // No width compiles without spilling, so every one here may spill.
        let t = Instant::now();
        match compile_one(shader, w, opts, true) {
            Ok(c) => {
                let k = c.kernel;
                times.0.extend(k.stats.pass_times.0.iter().cloned());
                let better = match &best {
                    None => true,
                    Some(b) => k.stats.spills == 0 || k.stats.spills < b.stats.spills,
                };
                if better {
                    best = Some(k);
                }
            }
            Err(e) => {
                times.add(&format!("simd{w} (failed: {e})"), t.elapsed());
                last_err = Some(e);
            }
        }
    }
    match (best, last_err) {
        (Some(mut k), _) => {
            k.stats.pass_times = times;
            Ok(k)
        }
        (None, Some(e)) => Err(e),
        (None, None) => Err(BackendError::Internal("no width compiled".into())),
    }
}
