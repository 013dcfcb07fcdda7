//! Command pools and command buffers: a compact command list while recording, Gen9 batches
//! built from it at submission.
//!
//! Recording appends plain-data commands ([`Cmd`]) to a [`Recording`]: bind a pipeline, bind a
//! set (an `Arc` of the set, no copy of its descriptors), push constants (into one byte arena),
//! dispatch with its group counts, and pre-packed batch dwords for barriers, stores and copies.
//! Nothing is allocated per command beyond the amortized growth of those vectors.
//!
//! The batch is built from the list the first time the command buffer is submitted (or run by a
//! primary as a secondary): a [`BatchBuilder`] replays the list, resolving every descriptor the
//! kernels use as the sets hold it then (which is what update-after-bind descriptors need),
//! writing its indirect state (binding tables, surface states, CURBE data, interface
//! descriptors) into 64 KB state blocks, GEM objects the [`Executable`] owns, and its commands
//! into a batch. Each block is both the Surface State Base and the Dynamic State Base while it
//! is current (binding-table pointers must be under 64 KB). Every address is final: objects are
//! softpinned (see [`crate::bo`]). The built executable is kept and submitted again as long as
//! no descriptor set it read was written since (each set counts its writes); otherwise it is
//! rebuilt. Batches follow docs/dispatch-contract.md and the Gen9 ordering rules (docs/gen9.md
//! 5.5).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ash::vk;
use ash::vk::Handle;
use kernel_iface::genxml::*;

use crate::bo::{GemBo, Heap, INSTRUCTION_BASE};
use crate::debug::{self, Flag};
use crate::descriptor::DescriptorSet;
use crate::device::{dev, Core, Device};
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::handles::{self, Dispatchable};
use crate::memory::Memory;
use crate::pipeline::{total_threads, Pipeline};
use crate::query::{Event, QueryPool};
use ferrite_compiler::kernel::{CurbeValues, Kernel};
use ferrite_compiler::BindingKind;

use crate::image::Image;
use crate::meta::{self, Dest, MetaOp, Place, Source};

/// Size of one state block.
pub const STATE_BLOCK: u64 = 64 * 1024;
/// Descriptor sets a pipeline layout may have (maxBoundDescriptorSets).
pub const MAX_SETS: usize = crate::physical::MAX_BOUND_DESCRIPTOR_SETS as usize;
/// Push-constant bytes (maxPushConstantsSize).
pub const MAX_PUSH: usize = 128;
/// MMIO registers the walker reads indirect group counts from.
const GPGPU_DISPATCHDIM: [u32; 3] = [0x2500, 0x2504, 0x2508];
/// L3 configurations (docs/gen9.md 5.5): with SLM (32,16,48,0,0) and without (0,48,48,0,0).
const L3_SLM: u32 = 0x6000_0021;
const L3_NO_SLM: u32 = 0x6000_0060;

/// A built command buffer ready to run: its batch, state and everything it references.
pub struct Executable {
    pub batch: GemBo,
    pub blocks: Vec<GemBo>,
    pub memories: Vec<Arc<Memory>>,
    pub pipelines: Vec<Arc<Pipeline>>,
    pub queries: Vec<Arc<QueryPool>>,
    pub events: Vec<Arc<Event>>,
    pub secondaries: Vec<Arc<Executable>>,
    /// Every descriptor set the build read, with its write count then.
    sets: Vec<(Arc<DescriptorSet>, u64)>,
}

/// (GEM handle, address, size) of one object the kernel must bind.
pub type ExecObject = (u32, u64, u64);

impl Executable {
    /// Every object a submission of this batch must list (the batch itself excluded).
    pub fn objects(&self, out: &mut HashMap<u32, ExecObject>) {
        let mut add = |h: u32, va: u64, size: u64| {
            out.insert(h, (h, va, size));
        };
        for b in &self.blocks {
            add(b.handle, b.va, b.size);
        }
        for m in &self.memories {
            add(
                m.bo,
                m.va,
                m.size.div_ceil(crate::bo::PAGE) * crate::bo::PAGE,
            );
        }
        for p in &self.pipelines {
            add(p.kernel_bo.handle, p.kernel_bo.va, p.kernel_bo.size);
            if let Some(s) = &p.scratch {
                add(s.handle, s.va, s.size);
            }
        }
        for q in &self.queries {
            add(q.bo.handle, q.bo.va, q.bo.size);
        }
        for e in &self.events {
            add(e.bo.handle, e.bo.va, e.bo.size);
        }
        let batches: Vec<ExecObject> = self
            .secondaries
            .iter()
            .map(|s| (s.batch.handle, s.batch.va, s.batch.size))
            .collect();
        for (h, va, size) in batches {
            add(h, va, size);
        }
        for s in &self.secondaries {
            s.objects(out);
        }
    }

    /// Whether the batch still says what the command buffer says: no descriptor set it read
    /// was written since it was built (only update-after-bind sets may legally be), in it or
    /// in the secondaries it runs.
    fn current(&self) -> bool {
        self.sets.iter().all(|(s, n)| s.writes() == *n)
            && self.secondaries.iter().all(|s| s.current())
    }
}

/// A surface of a meta dispatch: the memory it points into and its RENDER_SURFACE_STATE.
type MetaSurface = (Arc<Memory>, Vec<u32>);

/// Copies and fills of at most this many bytes stay on command-streamer stores (one
/// 5-dword MI_COPY_MEM_MEM or 4-dword MI_STORE_DATA_IMM per dword: 80 batch dwords at this
/// size); larger ones run a meta kernel, whose fixed cost is about 55 batch dwords plus
/// under 1 KB of state (docs/images.md, "Transfer commands").
const MI_TRANSFER_MAX: u64 = 64;
/// Texels one meta dispatch of a buffer copy or fill moves at most.
const META_CHUNK: u64 = 1 << 24;

/// One descriptor a dispatch uses: its binding-table index, the bound range's size in bytes
/// and GPU address (for the CURBE's size and address dwords).
#[derive(Clone, Copy)]
struct BoundSize {
    bti: u32,
    size: u32,
    address: u64,
}
/// The samplers of a dispatch's descriptors, by binding-table index.
type BoundSamplers = Vec<(u32, Arc<crate::sampler::Sampler>)>;

/// What one dispatch binds: its binding table, the bound sizes and samplers by BTI, and
/// the push-constant bytes.
struct Bound<'a> {
    bt: Vec<u32>,
    /// GPU address of the descriptor table's slot-0 entry (`CurbeValues::descriptor_table`).
    table: u64,
    sizes: &'a [BoundSize],
    samplers: &'a [(u32, Arc<crate::sampler::Sampler>)],
    push: &'a [u8],
}

/// One descriptor as a dispatch sees it (`BatchBuilder::resolve`).
struct Resolved {
    /// GPU address of the bound range (dynamic offset included).
    address: u64,
    /// Bytes of the bound range, None for a NULL descriptor.
    size: Option<u64>,
    /// An image or texel-buffer view's RENDER_SURFACE_STATE.
    view: Option<Arc<[u32]>>,
    /// A storage view's state in its own format, when `view` holds a lowered one.
    write_view: Option<Arc<[u32]>>,
    sampler: Option<Arc<crate::sampler::Sampler>>,
}

/// A descriptor set bound at one set index while building: the recording's set
/// (`Recording::sets`) and its dynamic offsets (a range of `Recording::dynamic`).
#[derive(Clone, Copy)]
struct BoundSet {
    set: u32,
    dynamic: (u32, u32),
}

/// One recorded command: plain data, whatever it refers to lives in the recording's side
/// tables (indices), so recording allocates nothing per command.
#[derive(Clone, Copy, Debug)]
enum Cmd {
    /// `Recording::pipelines[i]` becomes the bound pipeline.
    BindPipeline(u32),
    /// `Recording::sets[set]` at set index `index`, its dynamic offsets
    /// `Recording::dynamic[dynamic.0..dynamic.1]`.
    BindSet {
        index: u8,
        set: u32,
        dynamic: (u32, u32),
    },
    /// `Recording::bytes[at..at + len]` to push-constant bytes `offset..`.
    Push {
        offset: u16,
        len: u16,
        at: u32,
    },
    Dispatch {
        groups: [u32; 3],
        base: [u32; 3],
    },
    /// Group counts at this GPU address (VkDispatchIndirectCommand).
    DispatchIndirect(u64),
    /// Pre-packed batch dwords `Recording::dwords[start..end]` (barriers, stores, copies).
    Dwords {
        start: u32,
        end: u32,
    },
    /// A transfer's meta dispatch, `Recording::metas[i]`.
    Meta(u32),
    /// Runs the secondary command buffer `Recording::secondaries[i]`.
    Execute(u32),
}

/// One meta dispatch of a transfer command (crate::meta): its kernel, the source (none for
/// constant texels) and destination surfaces, the sampler of a blit, push constants, grid.
struct MetaCmd {
    pipeline: Arc<Pipeline>,
    src: Option<MetaSurface>,
    dst: MetaSurface,
    sampler: Option<Arc<crate::sampler::Sampler>>,
    push: [u8; MAX_PUSH],
    extent: [u32; 3],
}

/// The command list of a command buffer and what it refers to.
#[derive(Default)]
struct Recording {
    cmds: Vec<Cmd>,
    dwords: Vec<u32>,
    bytes: Vec<u8>,
    dynamic: Vec<u32>,
    pipelines: Vec<Arc<Pipeline>>,
    sets: Vec<Arc<DescriptorSet>>,
    metas: Vec<MetaCmd>,
    secondaries: Vec<Arc<Recorded>>,
    /// Memory the transfer commands touch (descriptors' memory is added at build).
    memories: HashMap<u32, Arc<Memory>>,
    queries: Vec<Arc<QueryPool>>,
    events: Vec<Arc<Event>>,
    /// While recording: the bound pipeline (handle, index in `pipelines`, the set indices its
    /// kernel reads as a mask).
    pipeline: Option<(u64, u32, u64)>,
    /// While recording: the set bound at each index (handle, 0 for a push descriptor set,
    /// and its index in `sets`), and the indices bound as a mask.
    bound: [Option<(u64, u32)>; MAX_SETS],
    bound_mask: u64,
    /// The first error met while recording; vkEndCommandBuffer reports it.
    error: Option<DriverError>,
}

impl Recording {
    /// Forgets every command, keeping the vectors' capacity for the next recording.
    fn clear(&mut self) {
        self.cmds.clear();
        self.dwords.clear();
        self.bytes.clear();
        self.dynamic.clear();
        self.pipelines.clear();
        self.sets.clear();
        self.metas.clear();
        self.secondaries.clear();
        self.memories.clear();
        self.queries.clear();
        self.events.clear();
        self.pipeline = None;
        self.bound = Default::default();
        self.bound_mask = 0;
        self.error = None;
    }

    /// Appends batch dwords (a `Cmd::Dwords`, merged with the previous one when adjacent).
    fn emit(&mut self, dws: Vec<u32>) {
        let start = self.dwords.len() as u32;
        self.dwords.extend(dws);
        let end = self.dwords.len() as u32;
        if let Some(Cmd::Dwords { end: last, .. }) = self.cmds.last_mut() {
            if *last == start {
                *last = end;
                return;
            }
        }
        self.cmds.push(Cmd::Dwords { start, end });
    }

    fn pipe_control(&mut self, pc: PipeControl) {
        self.emit(pc.to_dwords());
    }

    fn use_memory(&mut self, m: &Arc<Memory>) {
        self.memories.entry(m.bo).or_insert_with(|| m.clone());
    }

    /// A dword store by the command streamer.
    fn store_dword(&mut self, addr: u64, v: u32) {
        self.emit(
            MiStoreDataImm {
                address: addr,
                immediate_data: u64::from(v),
                ..Default::default()
            }
            .to_dwords(),
        );
    }

    /// A qword store as two dword stores (the packer emits the 4-dword form only).
    fn store_qword(&mut self, addr: u64, v: u64) {
        self.store_dword(addr, v as u32);
        self.store_dword(addr + 4, (v >> 32) as u32);
    }

    /// Binds pipeline `handle` (nothing is recorded when it is bound already).
    fn bind_pipeline(&mut self, core: &Core, handle: u64) -> Result<()> {
        if matches!(self.pipeline, Some((h, ..)) if h == handle) {
            return Ok(());
        }
        let p = core.pipelines.get(handle)?;
        let needs = sets_read(&p);
        let i = self.pipelines.len() as u32;
        self.pipelines.push(p);
        self.cmds.push(Cmd::BindPipeline(i));
        self.pipeline = Some((handle, i, needs));
        Ok(())
    }

    /// Binds `set` at `index` with its dynamic offsets; `handle` 0 for a push descriptor set
    /// (never skipped as the same binding again).
    fn bind_set(
        &mut self,
        index: usize,
        handle: u64,
        set: impl FnOnce() -> Result<Arc<DescriptorSet>>,
        dynamic: &[u32],
    ) -> Result<()> {
        if index >= MAX_SETS {
            return Err(DriverError::InvalidArgument(format!(
                "set {index} is past maxBoundDescriptorSets ({MAX_SETS})"
            )));
        }
        if handle != 0
            && dynamic.is_empty()
            && matches!(self.bound[index], Some((h, _)) if h == handle)
        {
            return Ok(());
        }
        let set = set()?;
        let i = self.sets.len() as u32;
        self.sets.push(set);
        let start = self.dynamic.len() as u32;
        self.dynamic.extend_from_slice(dynamic);
        self.cmds.push(Cmd::BindSet {
            index: index as u8,
            set: i,
            dynamic: (start, self.dynamic.len() as u32),
        });
        self.bound[index] = Some((handle, i));
        self.bound_mask |= 1 << index;
        Ok(())
    }

    /// The set bound at `index` while recording.
    fn bound_set(&self, index: usize) -> Option<&Arc<DescriptorSet>> {
        let (_, i) = (*self.bound.get(index)?)?;
        self.sets.get(i as usize)
    }

    fn push_constants(&mut self, offset: u32, values: &[u8]) -> Result<()> {
        let end = offset as usize + values.len();
        if end > MAX_PUSH {
            return Err(DriverError::InvalidArgument(
                "push constants out of range".into(),
            ));
        }
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(values);
        self.cmds.push(Cmd::Push {
            offset: offset as u16,
            len: values.len() as u16,
            at,
        });
        Ok(())
    }

    /// A dispatch of the bound pipeline (`indirect`: GPU address of the
    /// VkDispatchIndirectCommand). Checked now so vkEndCommandBuffer reports what cannot run.
    fn dispatch(&mut self, groups: [u32; 3], base: [u32; 3], indirect: Option<u64>) -> Result<()> {
        let Some((_, _, needs)) = self.pipeline else {
            return Err(DriverError::InvalidArgument(
                "dispatch without a pipeline".into(),
            ));
        };
        let missing = needs & !self.bound_mask;
        if missing != 0 {
            return Err(DriverError::InvalidArgument(format!(
                "descriptor set {} is not bound",
                missing.trailing_zeros()
            )));
        }
        match indirect {
            Some(addr) => self.cmds.push(Cmd::DispatchIndirect(addr)),
            None if groups.contains(&0) => {}
            None => self.cmds.push(Cmd::Dispatch { groups, base }),
        }
        Ok(())
    }

    /// One dispatch of a meta kernel over a w x h x d grid (crate::meta): the source (none
    /// for constant texels) and destination surfaces at their BTIs, `push` as its push
    /// constants. The application's bound pipeline, sets and push constants are untouched.
    fn meta(
        &mut self,
        core: &Core,
        op: MetaOp,
        src: Option<MetaSurface>,
        dst: MetaSurface,
        push: &[u8],
        extent: [u32; 3],
    ) -> Result<()> {
        self.meta_cmd(core, op, (src, dst, None), push, extent)
    }

    /// One dispatch of a blit kernel: the sampled source with its sampler at BTI 0 (the
    /// sampler table's entry 0), the destination at BTI 1.
    #[allow(clippy::too_many_arguments)]
    fn meta_sampled(
        &mut self,
        core: &Core,
        op: MetaOp,
        src: MetaSurface,
        dst: MetaSurface,
        sampler: Arc<crate::sampler::Sampler>,
        push: &[u8],
        extent: [u32; 3],
    ) -> Result<()> {
        self.meta_cmd(core, op, (Some(src), dst, Some(sampler)), push, extent)
    }

    #[allow(clippy::type_complexity)]
    fn meta_cmd(
        &mut self,
        core: &Core,
        op: MetaOp,
        (src, dst, sampler): (
            Option<MetaSurface>,
            MetaSurface,
            Option<Arc<crate::sampler::Sampler>>,
        ),
        push: &[u8],
        extent: [u32; 3],
    ) -> Result<()> {
        if extent.contains(&0) {
            return Ok(());
        }
        let pipeline = core.meta.get(core, op)?;
        let mut bytes = [0u8; MAX_PUSH];
        bytes
            .get_mut(..push.len())
            .ok_or_else(|| DriverError::InvalidArgument("meta push constants too long".into()))?
            .copy_from_slice(push);
        if let Some((m, _)) = &src {
            self.use_memory(m);
        }
        self.use_memory(&dst.0);
        let i = self.metas.len() as u32;
        self.metas.push(MetaCmd {
            pipeline,
            src,
            dst,
            sampler,
            push: bytes,
            extent,
        });
        self.cmds.push(Cmd::Meta(i));
        Ok(())
    }
}

/// The set indices `p`'s kernel reads descriptors from, as a mask.
fn sets_read(p: &Pipeline) -> u64 {
    let k = &p.kernel;
    let table = k
        .table_descriptors
        .iter()
        .flat_map(|&(start, count)| start..start + count);
    k.btis
        .iter()
        .copied()
        .chain(table)
        .filter_map(|bti| p.layout.slot_of_bti(bti))
        .fold(0, |m, (set, _)| {
            m | 1u64.checked_shl(set as u32).unwrap_or(0)
        })
}

/// A finished recording (vkEndCommandBuffer) and the executable last built from it.
pub struct Recorded {
    list: Recording,
    primary: bool,
    built: Mutex<Option<Arc<Executable>>>,
}

impl Recorded {
    /// The executable of this recording: the one built before while it is current
    /// (`Executable::current`), else a new build.
    pub fn executable(&self, core: &Core) -> Result<Arc<Executable>> {
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = built.as_ref().filter(|e| e.current()) {
            return Ok(e.clone());
        }
        let e = Arc::new(build(core, &self.list, self.primary)?);
        *built = Some(e.clone());
        Ok(e)
    }
}

/// Builds the batch of `list`: replays its commands through a [`BatchBuilder`].
fn build(core: &Core, list: &Recording, primary: bool) -> Result<Executable> {
    let mut b = BatchBuilder::new(list);
    for cmd in &list.cmds {
        b.run(core, *cmd)?;
    }
    b.finish(primary);
    if debug::enabled(Flag::Batch) {
        log::info!("batch of {} dwords:", b.batch.len());
        for (i, chunk) in b.batch.chunks(8).enumerate() {
            let words: Vec<String> = chunk.iter().map(|d| format!("{d:08x}")).collect();
            log::info!("  {:05x}: {}", i * 32, words.join(" "));
        }
    }
    let bytes: Vec<u8> = b.batch.iter().flat_map(|d| d.to_le_bytes()).collect();
    let batch = GemBo::with_data(&core.adapter.drm, &core.va, Heap::General, &bytes)?;
    Ok(Executable {
        batch,
        blocks: b.blocks.into_iter().chain(b.tables).collect(),
        memories: b.memories.into_values().collect(),
        pipelines: b.pipelines,
        queries: list.queries.clone(),
        events: list.events.clone(),
        secondaries: b.secondaries,
        sets: b.read,
    })
}

/// Builds one batch and its state from a recording.
struct BatchBuilder<'a> {
    list: &'a Recording,
    batch: Vec<u32>,
    blocks: Vec<GemBo>,
    /// Bytes used in the last block.
    used: u64,
    memories: HashMap<u32, Arc<Memory>>,
    pipelines: Vec<Arc<Pipeline>>,
    secondaries: Vec<Arc<Executable>>,
    pipeline: Option<Arc<Pipeline>>,
    sets: [Option<BoundSet>; MAX_SETS],
    push: [u8; MAX_PUSH],
    /// Descriptor tables of dispatches whose kernels read buffers past the binding table.
    tables: Vec<GemBo>,
    /// The descriptor sets read, with their write counts before the first read.
    read: Vec<(Arc<DescriptorSet>, u64)>,
    /// Whether STATE_BASE_ADDRESS points at the current block.
    sba_valid: bool,
    gpgpu: bool,
    l3_slm: Option<bool>,
    /// The pipeline whose MEDIA_VFE_STATE is the one in effect.
    vfe: Option<Arc<Pipeline>>,
    /// The last user dispatch, whose state the next one reuses when nothing it depends on
    /// changed in between.
    last: Option<LastDispatch>,
}

/// What a dispatch with the same pipeline, sets, push constants and group counts as the one
/// before it emits again: its CURBE and interface-descriptor loads, walker and flush, pointing at
/// the state the earlier dispatch wrote (the binding table, surfaces, CURBE and IDD would be
/// written identically).
struct LastDispatch {
    groups: [u32; 3],
    base: [u32; 3],
    /// The batch dwords from MEDIA_CURBE_LOAD to MEDIA_STATE_FLUSH.
    tail: Vec<u32>,
}

impl<'a> BatchBuilder<'a> {
    fn new(list: &'a Recording) -> BatchBuilder<'a> {
        BatchBuilder {
            list,
            batch: Vec::with_capacity(list.dwords.len() + 64),
            blocks: Vec::new(),
            used: STATE_BLOCK,
            memories: list.memories.clone(),
            pipelines: Vec::new(),
            secondaries: Vec::new(),
            pipeline: None,
            sets: [None; MAX_SETS],
            push: [0; MAX_PUSH],
            tables: Vec::new(),
            read: Vec::new(),
            sba_valid: false,
            gpgpu: false,
            l3_slm: None,
            vfe: None,
            last: None,
        }
    }

    /// Replays one command.
    fn run(&mut self, core: &Core, cmd: Cmd) -> Result<()> {
        let list = self.list;
        // Whatever changes the state of the next dispatch forgets the last one (push constants
        // only when they differ).
        let same_push = match cmd {
            Cmd::Push { offset, len, at } => {
                let (o, n, a) = (offset as usize, len as usize, at as usize);
                self.push[o..o + n] == list.bytes[a..a + n]
            }
            _ => false,
        };
        if !same_push && !matches!(cmd, Cmd::Dispatch { .. } | Cmd::Dwords { .. }) {
            self.last = None;
        }
        match cmd {
            Cmd::BindPipeline(i) => self.pipeline = Some(list.pipelines[i as usize].clone()),
            Cmd::BindSet {
                index,
                set,
                dynamic,
            } => {
                let s = &list.sets[set as usize];
                if !self.read.iter().any(|(r, _)| Arc::ptr_eq(r, s)) {
                    self.read.push((s.clone(), s.writes()));
                }
                self.sets[index as usize] = Some(BoundSet { set, dynamic });
            }
            Cmd::Push { offset, len, at } => {
                let (o, n, a) = (offset as usize, len as usize, at as usize);
                self.push[o..o + n].copy_from_slice(&list.bytes[a..a + n]);
            }
            Cmd::Dispatch { groups, base } => self.dispatch(core, groups, base, None)?,
            Cmd::DispatchIndirect(addr) => self.dispatch(core, [0; 3], [0; 3], Some(addr))?,
            Cmd::Dwords { start, end } => self
                .batch
                .extend_from_slice(&list.dwords[start as usize..end as usize]),
            Cmd::Meta(i) => self.meta(core, &list.metas[i as usize])?,
            Cmd::Execute(i) => {
                let exe = list.secondaries[i as usize].executable(core)?;
                self.emit(
                    MiBatchBufferStart {
                        address_space_indicator: MiBatchBufferStart::ADDRESS_SPACE_INDICATOR_PPGTT,
                        second_level_batch_buffer: 1,
                        batch_buffer_start_address: exe.batch.va,
                        ..Default::default()
                    }
                    .to_dwords(),
                );
                self.secondaries.push(exe);
                // The secondary set its own state: re-emit ours before the next dispatch.
                self.sba_valid = false;
                self.gpgpu = false;
                self.l3_slm = None;
                self.vfe = None;
            }
        }
        Ok(())
    }

    fn emit(&mut self, dws: Vec<u32>) {
        self.batch.extend(dws);
    }

    fn pipe_control(&mut self, pc: PipeControl) {
        self.emit(pc.to_dwords());
    }

    fn flush_all(&mut self) {
        self.pipe_control(PipeControl {
            command_streamer_stall_enable: true,
            dc_flush_enable: true,
            render_target_cache_flush_enable: true,
            depth_cache_flush_enable: true,
            ..Default::default()
        });
    }

    fn invalidate_all(&mut self) {
        self.pipe_control(PipeControl {
            command_streamer_stall_enable: true,
            texture_cache_invalidation_enable: true,
            constant_cache_invalidation_enable: true,
            state_cache_invalidation_enable: true,
            instruction_cache_invalidate_enable: true,
            ..Default::default()
        });
    }

    fn lri(&mut self, reg: u32, value: u32) {
        let mut d = MiLoadRegisterImm {
            register_offset: reg as u64,
            data_dword: value as u64,
            ..Default::default()
        }
        .to_dwords();
        d.truncate(MiLoadRegisterImm::LENGTH);
        self.emit(d);
    }

    /// PIPELINE_SELECT GPGPU with the flushes and invalidations Gen9 wants before it.
    fn select_gpgpu(&mut self) {
        self.flush_all();
        self.invalidate_all();
        self.emit(
            X3dstateCcStatePointers {
                color_calc_state_pointer_valid: false,
                ..Default::default()
            }
            .to_dwords(),
        );
        self.emit(
            PipelineSelect {
                pipeline_selection: PipelineSelect::PIPELINE_SELECTION_GPGPU,
                mask_bits: 3,
                ..Default::default()
            }
            .to_dwords(),
        );
        self.gpgpu = true;
    }

    fn set_l3(&mut self, slm: bool) {
        if self.l3_slm == Some(slm) {
            return;
        }
        self.flush_all();
        self.lri(L3cntlreg::NUM, if slm { L3_SLM } else { L3_NO_SLM });
        self.l3_slm = Some(slm);
    }

    /// Reserves `size` bytes (64-aligned) in the current state block, opening a new block
    /// when it does not fit. Returns the offset in the block.
    fn alloc_state(&mut self, core: &Core, size: u64) -> Result<u64> {
        let at = self.used.div_ceil(64) * 64;
        if at + size <= STATE_BLOCK {
            self.used = at + size;
            return Ok(at);
        }
        if size > STATE_BLOCK {
            return Err(DriverError::InvalidArgument(format!(
                "{size} bytes of state for one dispatch"
            )));
        }
        let bo = GemBo::new(&core.adapter.drm, &core.va, Heap::General, STATE_BLOCK)?;
        self.blocks.push(bo);
        self.sba_valid = false;
        self.last = None;
        self.used = size;
        Ok(0)
    }

    fn block(&self) -> &GemBo {
        self.blocks.last().expect("alloc_state opened a block")
    }

    fn write_state(&self, offset: u64, dws: &[u32]) {
        let bytes: Vec<u8> = dws.iter().flat_map(|d| d.to_le_bytes()).collect();
        self.block().write(offset as usize, &bytes);
    }

    fn emit_sba(&mut self) {
        let base = self.block().va;
        // Flush before changing base addresses, invalidate the state caches after.
        self.flush_all();
        self.emit(
            StateBaseAddress {
                general_state_base_address_modify_enable: true,
                general_state_base_address: 0,
                general_state_mocs: 2,
                general_state_buffer_size_modify_enable: true,
                general_state_buffer_size: 0xFFFFF,
                stateless_data_port_access_mocs: 2,
                surface_state_base_address_modify_enable: true,
                surface_state_base_address: base,
                surface_state_mocs: 2,
                dynamic_state_base_address_modify_enable: true,
                dynamic_state_base_address: base,
                dynamic_state_mocs: 2,
                dynamic_state_buffer_size_modify_enable: true,
                dynamic_state_buffer_size: STATE_BLOCK / 4096,
                indirect_object_base_address_modify_enable: true,
                indirect_object_base_address: 0,
                indirect_object_mocs: 2,
                indirect_object_buffer_size_modify_enable: true,
                indirect_object_buffer_size: 0xFFFFF,
                instruction_base_address_modify_enable: true,
                instruction_base_address: INSTRUCTION_BASE,
                instruction_mocs: 2,
                instruction_buffer_size_modify_enable: true,
                instruction_buffer_size: 0xFFFFF,
                ..Default::default()
            }
            .to_dwords(),
        );
        self.invalidate_all();
        self.sba_valid = true;
    }

    fn use_memory(&mut self, m: &Arc<Memory>) {
        self.memories.entry(m.bo).or_insert_with(|| m.clone());
    }

    /// One dispatch: state (binding table, surfaces, CURBE, IDD) then the commands.
    /// `indirect`: GPU address of the VkDispatchIndirectCommand.
    fn dispatch(
        &mut self,
        core: &Core,
        groups: [u32; 3],
        base: [u32; 3],
        indirect: Option<u64>,
    ) -> Result<()> {
        if let Some(last) = self
            .last
            .as_ref()
            .filter(|l| indirect.is_none() && l.groups == groups && l.base == base)
        {
            self.batch.extend_from_slice(&last.tail);
            return Ok(());
        }
        let p = self
            .pipeline
            .clone()
            .ok_or_else(|| DriverError::InvalidArgument("dispatch without a pipeline".into()))?;
        self.reserve_dispatch_state(&p.kernel);
        let (bt, sizes, samplers) = self.descriptor_surfaces(core, &p)?;
        let table = self.descriptor_table(core, &p)?;
        let push = self.push;
        let bound = Bound {
            bt,
            table,
            sizes: &sizes,
            samplers: &samplers,
            push: &push,
        };
        let tail = self.launch(core, &p, bound, groups, base, indirect)?;
        // An indirect dispatch's CURBE receives its group counts from the GPU: never shared.
        if indirect.is_none() {
            self.last = Some(LastDispatch {
                groups,
                base,
                tail: self.batch[tail..].to_vec(),
            });
        }
        Ok(())
    }

    /// The state and commands of one dispatch of `p` once its binding table (surfaces
    /// written, the push surface's entry still 0), sizes, samplers and push constants are
    /// known: user dispatches and the meta kernels (crate::meta) both end here. Returns where
    /// its MEDIA_CURBE_LOAD starts in the batch.
    fn launch(
        &mut self,
        core: &Core,
        p: &Arc<Pipeline>,
        bound: Bound<'_>,
        groups: [u32; 3],
        base: [u32; 3],
        indirect: Option<u64>,
    ) -> Result<usize> {
        let k = &p.kernel;
        let mut bt = bound.bt;
        let sampler_table = self.sampler_table(core, bound.samplers)?;
        let curbe_bytes = curbe_bytes(k);
        let curbe_off = self.alloc_state(core, curbe_bytes)?;
        self.push_surface(core, k, curbe_off, &mut bt)?;
        let bt_off = self.alloc_state(core, (bt.len() as u64 * 4).max(32))?;
        self.write_state(bt_off, &bt);
        self.write_curbe(
            k,
            curbe_off,
            curbe_bytes,
            (groups, base),
            (bound.sizes, bound.table),
            bound.push,
        );
        let idd_off = self.write_idd(core, p, bt_off, sampler_table)?;
        self.emit_compute_state(core, p);
        if let Some(addr) = indirect {
            let counts = self.block().va + curbe_off + k.layout.num_workgroups_offset();
            self.load_indirect_counts(addr, counts);
        }
        let tail = self.batch.len();
        self.emit(
            MediaCurbeLoad {
                curbe_total_data_length: curbe_bytes,
                curbe_data_start_address: curbe_off,
                ..Default::default()
            }
            .to_dwords(),
        );
        self.emit(
            MediaInterfaceDescriptorLoad {
                interface_descriptor_total_length: 32,
                interface_descriptor_data_start_address: idd_off,
                ..Default::default()
            }
            .to_dwords(),
        );
        self.emit(walker(k, groups, indirect.is_some()).to_dwords());
        self.emit(MediaStateFlush::default().to_dwords());
        Ok(tail)
    }

    /// One meta dispatch (crate::meta): the source (none for constant texels) and destination
    /// surfaces at their BTIs, a blit's sampler as the sampler table's entry 0. The
    /// application's bound pipeline, sets and push constants are untouched.
    fn meta(&mut self, core: &Core, m: &MetaCmd) -> Result<()> {
        let p = &m.pipeline;
        self.reserve_dispatch_state(&p.kernel);
        let mut bt = vec![0u32; p.kernel.binding_table_entries() as usize];
        for (bti, side) in [
            (meta::SRC_BTI, &m.src),
            (meta::DST_BTI, &Some(m.dst.clone())),
        ] {
            if let Some((memory, state)) = side {
                self.use_memory(memory);
                bt[bti as usize] = self.surface_state(core, state)?;
            }
        }
        let samplers: Vec<_> = m
            .sampler
            .iter()
            .map(|s| (meta::SRC_BTI, s.clone()))
            .collect();
        let bound = Bound {
            bt,
            table: 0,
            sizes: &[],
            samplers: &samplers,
            push: &m.push,
        };
        self.launch(core, p, bound, meta::groups(m.extent), [0; 3], None)
            .map(|_| ())
    }

    /// Makes sure all the state of one dispatch lands in one block (opens a new one when the
    /// current block lacks the room).
    fn reserve_dispatch_state(&mut self, k: &Kernel) {
        let n_bt = u64::from(k.binding_table_entries());
        let surfaces = k.btis.len() as u64 + u64::from(k.layout.push_bti.is_some());
        // Samplers: a 16-byte table entry per binding-table entry at most, and a 64-byte
        // border colour each.
        let samplers = n_bt * (16 + 64);
        let need = (n_bt * 4).div_ceil(64) * 64
            + 64 * surfaces
            + curbe_bytes(k)
            + 64
            + samplers
            + crate::descriptor::table_state_bytes(&k.table_descriptors);
        if self.blocks.is_empty() || self.used.div_ceil(64) * 64 + need + 64 * 4 > STATE_BLOCK {
            self.used = STATE_BLOCK;
        }
    }

    /// A RENDER_SURFACE_STATE per descriptor the kernel uses, and the binding table pointing
    /// at them (the push-constant surface's entry still 0). Also returns the bound range
    /// size of every BTI (the size the surface state holds, 0 for a NULL descriptor), for the
    /// CURBE's size dwords, and the samplers of SAMPLER / COMBINED_IMAGE_SAMPLER descriptors.
    fn descriptor_surfaces(
        &mut self,
        core: &Core,
        p: &Pipeline,
    ) -> Result<(Vec<u32>, Vec<BoundSize>, BoundSamplers)> {
        let k = &p.kernel;
        let mut bt = vec![0u32; k.binding_table_entries() as usize];
        let mut sizes = Vec::with_capacity(k.btis.len());
        let mut samplers = Vec::new();
        for &bti in &k.btis {
            let d = self.resolve(p, bti)?;
            if let Some(s) = d.sampler {
                samplers.push((bti, s));
            }
            // A binding the kernel only writes takes the view's own format where the
            // storage state holds a lowered one (the typed writes convert).
            let write_only = |bti| {
                k.bindings
                    .iter()
                    .any(|b| b.bti == bti && b.kind == BindingKind::StorageImageWriteOnly)
            };
            let view = match &d.write_view {
                Some(w) if write_only(bti) => Some(w),
                _ => d.view.as_ref(),
            };
            let ss = match (view, d.size) {
                (None, None) => null_surface(),
                // An image or texel-buffer view: its own surface state.
                (Some(ss), _) => ss.to_vec(),
                (None, Some(size)) => buffer_surface(d.address, size),
            };
            let size = d.size.unwrap_or(0);
            sizes.push(BoundSize {
                bti,
                size: u32::try_from(size).unwrap_or(u32::MAX),
                address: if d.view.is_some() { 0 } else { d.address },
            });
            bt[bti as usize] = self.surface_state(core, &ss)?;
        }
        Ok((bt, sizes, samplers))
    }

    /// The descriptor at slot `bti` of the pipeline's layout as the bound sets hold it now,
    /// its memory recorded as used: the bound range's GPU address and size (dynamic offset
    /// included, clamped to the memory object), a view's surface state, the sampler.
    fn resolve(&mut self, p: &Pipeline, bti: u32) -> Result<Resolved> {
        let (set, slot) = p.layout.slot_of_bti(bti).ok_or_else(|| {
            DriverError::InvalidArgument(format!(
                "kernel uses descriptor slot {bti} outside the layout"
            ))
        })?;
        let bound = self.sets[set].ok_or_else(|| {
            DriverError::InvalidArgument(format!("descriptor set {set} is not bound"))
        })?;
        let list = self.list;
        let bound_set = &list.sets[bound.set as usize];
        let dynamic = &list.dynamic[bound.dynamic.0 as usize..bound.dynamic.1 as usize];
        let layout = &bound_set.layout;
        let desc = bound_set.lock()[slot as usize].clone();
        let sampler = bound_set.lock_samplers()[slot as usize].clone();
        let Some(desc) = desc else {
            return Ok(Resolved {
                address: 0,
                size: None,
                view: None,
                write_view: None,
                sampler,
            });
        };
        // Dynamic offsets in set-layout order.
        let dyn_index = layout.dynamic_slots().position(|s| s == slot);
        let extra = dyn_index.and_then(|i| dynamic.get(i).copied()).unwrap_or(0);
        self.use_memory(&desc.memory);
        let avail = desc
            .memory
            .size
            .saturating_sub(desc.offset + u64::from(extra));
        Ok(Resolved {
            address: desc.address() + u64::from(extra),
            size: Some(desc.range.min(avail)),
            view: desc.surface.clone(),
            write_view: desc.write_surface.clone(),
            sampler,
        })
    }

    /// The descriptor table of a kernel that reads buffers past the binding table
    /// (`Kernel::table_descriptors`): a 16-byte entry per slot of its runs (the bound range's
    /// GPU address, its size, 0; zeros for a NULL descriptor), in the state block, or in a GEM
    /// object of its own when larger than `descriptor::TABLE_IN_STATE_BLOCK`. Returns the address of slot 0's entry (below the object when the first run does not
    /// start at 0), or 0 when the kernel has no table.
    fn descriptor_table(&mut self, core: &Core, p: &Pipeline) -> Result<u64> {
        let runs = &p.kernel.table_descriptors;
        let (Some(first), Some(end)) = (runs.first(), runs.last().map(|r| r.0 + r.1)) else {
            return Ok(0);
        };
        let first = first.0;
        let mut words = vec![0u32; 4 * (end - first) as usize];
        for &(start, count) in runs {
            for slot in start..start + count {
                let d = self.resolve(p, slot)?;
                let size = d.size.unwrap_or(0);
                let at = 4 * (slot - first) as usize;
                words[at] = d.address as u32;
                words[at + 1] = (d.address >> 32) as u32;
                words[at + 2] = u32::try_from(size).unwrap_or(u32::MAX);
            }
        }
        // A small table shares the state block reserve_dispatch_state kept room in (the
        // kernel reads it by its GPU address, so any block will do).
        if crate::descriptor::table_state_bytes(runs) > 0 {
            let off = self.alloc_state(core, crate::descriptor::table_bytes(runs))?;
            self.write_state(off, &words);
            return Ok((self.block().va + off).wrapping_sub(16 * u64::from(first)));
        }
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let size = (bytes.len() as u64).div_ceil(crate::bo::PAGE) * crate::bo::PAGE;
        let bo = GemBo::new(&core.adapter.drm, &core.va, Heap::General, size)?;
        bo.write(0, &bytes);
        let at = bo.va.wrapping_sub(16 * u64::from(first));
        self.tables.push(bo);
        Ok(at)
    }

    /// The sampler table (dispatch contract): entry i is the SAMPLER_STATE of the descriptor at
    /// binding-table index i (zeros where none is), each with its border colour written
    /// before it. Returns the table's offset from Dynamic State Base and its entry count.
    fn sampler_table(
        &mut self,
        core: &Core,
        samplers: &[(u32, Arc<crate::sampler::Sampler>)],
    ) -> Result<(u64, u32)> {
        let Some(n) = samplers.iter().map(|(bti, _)| bti + 1).max() else {
            return Ok((0, 0));
        };
        let mut table = vec![0u32; 4 * n as usize];
        for (bti, s) in samplers {
            let border = self.alloc_state(core, 64)?;
            self.write_state(border, &s.border);
            let at = 4 * *bti as usize;
            table[at..at + 4].copy_from_slice(&s.state_with_border(border));
        }
        let off = self.alloc_state(core, 16 * u64::from(n))?;
        self.write_state(off, &table);
        Ok((off, n))
    }

    /// Writes one surface state; returns its binding-table entry.
    fn surface_state(&mut self, core: &Core, ss: &[u32]) -> Result<u32> {
        let off = self.alloc_state(core, 64)?;
        self.write_state(off, ss);
        Ok(BindingTableState {
            surface_state_pointer: off,
        }
        .to_dwords()[0])
    }

    /// The push constants read at dynamic offsets: a RAW buffer over the push bytes of this
    /// dispatch's CURBE (at `curbe_off`), when the kernel has a push-constant surface.
    fn push_surface(
        &mut self,
        core: &Core,
        k: &Kernel,
        curbe_off: u64,
        bt: &mut [u32],
    ) -> Result<()> {
        let Some(bti) = k.layout.push_bti else {
            return Ok(());
        };
        let ss = match k.layout.push_bytes() {
            0 => null_surface(),
            n => buffer_surface(self.block().va + curbe_off, u64::from(n)),
        };
        bt[bti as usize] = self.surface_state(core, &ss)?;
        Ok(())
    }

    /// The CURBE data as the kernel's layout places it: push constants, the driver values,
    /// the buffer sizes, one register per thread.
    fn write_curbe(
        &self,
        k: &Kernel,
        curbe_off: u64,
        curbe_bytes: u64,
        (groups, base): ([u32; 3], [u32; 3]),
        (sizes, table): (&[BoundSize], u64),
        push: &[u8],
    ) {
        let values = CurbeValues {
            push,
            num_workgroups: groups,
            base_workgroup: base,
            threads: k.threads_per_group,
            descriptor_table: table,
        };
        let find = |bti: u32| sizes.iter().find(|s| s.bti == bti);
        let mut curbe = k.layout.curbe_data(
            &values,
            |bti| find(bti).map_or(0, |s| s.size),
            |bti| find(bti).map_or(0, |s| s.address),
        );
        curbe.resize((curbe_bytes / 4) as usize, 0);
        self.write_state(curbe_off, &curbe);
    }

    /// INTERFACE_DESCRIPTOR_DATA of the pipeline's kernel; returns its offset.
    fn write_idd(
        &mut self,
        core: &Core,
        p: &Pipeline,
        bt_off: u64,
        (sampler_off, samplers): (u64, u32),
    ) -> Result<u64> {
        let k = &p.kernel;
        let slm_code = match k.slm_size {
            0 => 0,
            b => u64::from(b.max(1024).next_power_of_two().trailing_zeros() - 10 + 1),
        };
        let idd = InterfaceDescriptorData {
            kernel_start_pointer: p.kernel_offset(),
            binding_table_pointer: bt_off,
            sampler_state_pointer: sampler_off,
            // In groups of four, at most 16 (prefetch hint; a larger table is still read).
            sampler_count: u64::from(samplers.div_ceil(4).min(4)),
            binding_table_entry_count: u64::from(k.binding_table_entries().min(30)),
            constant_urb_entry_read_length: u64::from(k.layout.per_thread_regs()),
            cross_thread_constant_data_read_length: u64::from(k.layout.cross_thread_regs()),
            number_of_threads_in_gpgpu_thread_group: u64::from(k.threads_per_group),
            shared_local_memory_size: slm_code,
            barrier_enable: k.uses_barrier,
            ..Default::default()
        };
        let idd_off = self.alloc_state(core, 64)?;
        self.write_state(idd_off, &idd.to_dwords());
        Ok(idd_off)
    }

    /// The GPGPU pipeline state the dispatch needs: PIPELINE_SELECT, the L3 (SLM) split,
    /// base addresses, then MEDIA_VFE_STATE (threads, CURBE size, scratch).
    fn emit_compute_state(&mut self, core: &Core, p: &Arc<Pipeline>) {
        let k = &p.kernel;
        if !self.gpgpu {
            self.select_gpgpu();
            self.vfe = None;
        }
        if self.l3_slm != Some(k.slm_size > 0) {
            self.set_l3(k.slm_size > 0);
            self.vfe = None;
        }
        if !self.sba_valid {
            self.emit_sba();
            self.vfe = None;
        }
        // MEDIA_VFE_STATE (thread count, CURBE allocation, scratch) depends on the pipeline
        // only: the one in effect stays until another pipeline runs, as anv does.
        if self.vfe.as_ref().is_some_and(|v| Arc::ptr_eq(v, p)) {
            return;
        }
        self.vfe = Some(p.clone());
        if !self.pipelines.iter().any(|q| Arc::ptr_eq(q, p)) {
            self.pipelines.push(p.clone());
        }
        let info = core.adapter.info;
        let (scratch_code, scratch_base) = match &p.scratch {
            Some(s) => (
                u64::from(k.scratch_size.trailing_zeros().saturating_sub(10)),
                s.va,
            ),
            None => (0, 0),
        };
        // A CS stall is required before MEDIA_VFE_STATE.
        self.pipe_control(PipeControl {
            command_streamer_stall_enable: true,
            ..Default::default()
        });
        let curbe_regs = k.layout.curbe_regs(k.threads_per_group);
        self.emit(
            MediaVfeState {
                maximum_number_of_threads: u64::from(
                    (info.max_threads_per_group * info.subslices).min(total_threads(info)) - 1,
                ),
                number_of_urb_entries: 2,
                urb_entry_allocation_size: 2,
                curbe_allocation_size: u64::from(curbe_regs.div_ceil(2) * 2),
                reset_gateway_timer: 1,
                per_thread_scratch_space: scratch_code,
                scratch_space_base_pointer: scratch_base,
                ..Default::default()
            }
            .to_dwords(),
        );
    }

    /// Indirect dispatch: the group counts at `addr` go to the walker's MMIO registers and
    /// into the CURBE's num_workgroups dwords at GPU address `counts`.
    fn load_indirect_counts(&mut self, addr: u64, counts: u64) {
        for (i, reg) in GPGPU_DISPATCHDIM.iter().enumerate() {
            self.emit(
                MiLoadRegisterMem {
                    register_address: u64::from(*reg),
                    memory_address: addr + 4 * i as u64,
                    ..Default::default()
                }
                .to_dwords(),
            );
            self.emit(
                MiStoreRegisterMem {
                    register_address: u64::from(*reg),
                    memory_address: counts + 4 * i as u64,
                    ..Default::default()
                }
                .to_dwords(),
            );
        }
    }

    /// The end of a batch: everything written is flushed to memory. A batch that emitted no
    /// command wrote nothing (every earlier batch flushed at its own end), so it is only the
    /// MI_BATCH_BUFFER_END, as anv's empty batch.
    fn finish(&mut self, primary: bool) {
        if !self.batch.is_empty() {
            self.flush_all();
        }
        self.emit(MiBatchBufferEnd::default().to_dwords());
        if primary && self.batch.len() % 2 == 1 {
            self.emit(MiNoop::default().to_dwords());
        }
    }
}

/// Bytes of CURBE data of one dispatch of `k`, rounded up to 64 (MEDIA_CURBE_LOAD).
fn curbe_bytes(k: &Kernel) -> u64 {
    (u64::from(k.layout.curbe_regs(k.threads_per_group)) * 32).div_ceil(64) * 64
}

/// GPGPU_WALKER of one dispatch: `groups` groups of `k.threads_per_group` threads; the last
/// thread of each group runs only the channels of the invocations left (RightExecutionMask).
fn walker(k: &Kernel, groups: [u32; 3], indirect: bool) -> GpgpuWalker {
    let group = k.local_size.iter().product::<u32>();
    let rem = group % k.simd;
    let right_mask = if rem == 0 {
        (1u64 << k.simd) - 1
    } else {
        (1u64 << rem) - 1
    };
    GpgpuWalker {
        indirect_parameter_enable: indirect,
        simd_size: match k.simd {
            8 => 0,
            16 => 1,
            _ => 2,
        },
        thread_width_counter_maximum: u64::from(k.threads_per_group - 1),
        thread_group_id_x_dimension: u64::from(groups[0]),
        thread_group_id_y_dimension: u64::from(groups[1]),
        thread_group_id_z_dimension: u64::from(groups[2]),
        right_execution_mask: right_mask,
        bottom_execution_mask: 0xFFFF_FFFF,
        ..Default::default()
    }
}

/// RENDER_SURFACE_STATE dwords of a NULL surface (every access out of bounds).
fn null_surface() -> Vec<u32> {
    RenderSurfaceState {
        surface_type: 7,
        surface_format: 0x1FF,
        ..Default::default()
    }
    .to_dwords()
}

/// RENDER_SURFACE_STATE dwords of a RAW buffer (a NULL surface when `size` is 0).
pub fn buffer_surface(addr: u64, size: u64) -> Vec<u32> {
    raw_buffer_surface(addr, size).to_dwords()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CbState {
    Initial,
    Recording,
    Executable,
    Invalid,
}

pub struct CommandBuffer {
    core: Arc<Core>,
    level: vk::CommandBufferLevel,
    inner: Mutex<Inner>,
}

/// A command buffer's state, the list being recorded, and the last finished recording.
struct Inner {
    state: CbState,
    list: Recording,
    recorded: Option<Arc<Recorded>>,
}

impl Inner {
    fn new() -> Inner {
        Inner {
            state: CbState::Initial,
            list: Recording::default(),
            recorded: None,
        }
    }

    /// Back to the initial state; the vectors of the last recording are kept for the next one
    /// when nothing else holds it (a primary that ran it as a secondary may).
    fn reset(&mut self, state: CbState) {
        self.state = state;
        if let Some(r) = self.recorded.take().and_then(Arc::into_inner) {
            self.list = r.list;
        }
        self.list.clear();
    }
}

impl CommandBuffer {
    /// # Safety
    /// `h` must be null or a live command buffer.
    pub unsafe fn from_handle<'a>(h: vk::CommandBuffer) -> Result<&'a CommandBuffer> {
        // SAFETY: forwarded caller contract.
        unsafe { handles::borrow(h.as_raw() as *mut u8, "VkCommandBuffer") }
    }

    /// The finished recording of a command buffer in the executable state.
    fn recorded(&self) -> Result<Arc<Recorded>> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        match (&g.state, &g.recorded) {
            (CbState::Executable, Some(r)) => Ok(r.clone()),
            _ => Err(DriverError::InvalidArgument(
                "command buffer is not executable".into(),
            )),
        }
    }

    /// The executable of a command buffer in the executable state, built now unless the
    /// last build is still current.
    pub fn executable(&self) -> Result<Arc<Executable>> {
        self.recorded()?.executable(&self.core)
    }

    /// Runs `f` on the recording; errors are kept for vkEndCommandBuffer.
    fn record(&self, f: impl FnOnce(&Core, &mut Recording) -> Result<()>) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if g.state != CbState::Recording {
            log::error!("command recorded outside vkBegin/EndCommandBuffer");
            return;
        }
        if g.list.error.is_some() {
            return;
        }
        if let Err(e) = f(&self.core, &mut g.list) {
            log::error!("recording: {e}");
            g.list.error = Some(e);
        }
    }

    fn reset(&self) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.reset(CbState::Initial);
    }
}

pub struct CommandPool {
    /// Raw handles of the command buffers allocated from the pool.
    buffers: Mutex<Vec<usize>>,
}

impl Drop for CommandPool {
    fn drop(&mut self) {
        for raw in self
            .buffers
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            // SAFETY: every entry is a live command buffer allocated from this pool.
            drop(unsafe { handles::take::<CommandBuffer>(raw as *mut u8) });
        }
    }
}

crate::device::registry_creates! {
    create_command_pool, "vkCreateCommandPool", CommandPoolCreateInfo => command_pools, CommandPool, "pCommandPool", new_command_pool;
}

/// The object vkCreateCommandPool makes of its create info.
fn new_command_pool(_d: &Device, info: &vk::CommandPoolCreateInfo<'_>) -> Result<CommandPool> {
    if info.queue_family_index != 0 {
        return Err(DriverError::InvalidArgument("no such queue family".into()));
    }
    Ok(CommandPool {
        buffers: Mutex::new(Vec::new()),
    })
}

crate::device::registry_destroys! {
    destroy_command_pool, "vkDestroyCommandPool", vk::CommandPool => command_pools;
}

pub(crate) unsafe extern "system" fn reset_command_pool(
    device: vk::Device,
    pool: vk::CommandPool,
    _flags: vk::CommandPoolResetFlags,
) -> vk::Result {
    ffi::result("vkResetCommandPool", || {
        // SAFETY: a live device per the spec.
        let p = unsafe { dev(device) }?.command_pools.get(pool.as_raw())?;
        for &raw in p.buffers.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            // SAFETY: a live command buffer of this pool.
            unsafe { handles::borrow::<CommandBuffer>(raw as *mut u8, "VkCommandBuffer") }?.reset();
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn allocate_command_buffers(
    device: vk::Device,
    p_info: *const vk::CommandBufferAllocateInfo<'_>,
    p_out: *mut vk::CommandBuffer,
) -> vk::Result {
    ffi::result("vkAllocateCommandBuffers", || {
        // SAFETY: live device and valid allocate info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pAllocateInfo")?) };
        let pool = d.command_pools.get(info.command_pool.as_raw())?;
        let mut list = pool.buffers.lock().unwrap_or_else(|e| e.into_inner());
        for i in 0..info.command_buffer_count as usize {
            let cb = Dispatchable::new(CommandBuffer {
                core: d.core.clone(),
                level: info.level,
                inner: Mutex::new(Inner::new()),
            });
            let raw = handles::into_raw(cb);
            list.push(raw as usize);
            // SAFETY: pCommandBuffers holds commandBufferCount elements per the spec.
            unsafe {
                ffi::write(
                    p_out.wrapping_add(i),
                    vk::CommandBuffer::from_raw(raw as u64),
                    "pCommandBuffers",
                )
            }?;
        }
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn free_command_buffers(
    device: vk::Device,
    pool: vk::CommandPool,
    count: u32,
    p_buffers: *const vk::CommandBuffer,
) {
    ffi::void("vkFreeCommandBuffers", || {
        // SAFETY: live device and `count` handles per the spec.
        let (d, bufs) = unsafe {
            (
                dev(device)?,
                ffi::slice(p_buffers, count, "pCommandBuffers")?,
            )
        };
        let p = d.command_pools.get(pool.as_raw())?;
        let mut list = p.buffers.lock().unwrap_or_else(|e| e.into_inner());
        for b in bufs.iter().filter(|b| !b.is_null()) {
            let raw = b.as_raw() as usize;
            let Some(pos) = list.iter().position(|&x| x == raw) else {
                return Err(DriverError::InvalidHandle {
                    kind: "VkCommandBuffer",
                    value: raw as u64,
                });
            };
            list.swap_remove(pos);
            // SAFETY: allocated from this pool and removed from its list just now.
            drop(unsafe { handles::take::<CommandBuffer>(raw as *mut u8) });
        }
        Ok(())
    })
}

/// # Safety
/// `cb` must be null or a live command buffer.
unsafe fn cmd<'a>(cb: vk::CommandBuffer) -> Result<&'a CommandBuffer> {
    // SAFETY: forwarded caller contract.
    unsafe { CommandBuffer::from_handle(cb) }
}

pub(crate) unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    _p_info: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    ffi::result("vkBeginCommandBuffer", || {
        // SAFETY: a live command buffer per the spec.
        let c = unsafe { cmd(cb) }?;
        let mut g = c.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.reset(CbState::Recording);
        Ok(vk::Result::SUCCESS)
    })
}

/// Finishes the recording; the batch is built when the command buffer is first submitted
/// (or run as a secondary), so that descriptors are read as they are then.
pub(crate) unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    ffi::result("vkEndCommandBuffer", || {
        // SAFETY: a live command buffer per the spec.
        let c = unsafe { cmd(cb) }?;
        let mut g = c.inner.lock().unwrap_or_else(|e| e.into_inner());
        if g.state != CbState::Recording {
            return Err(DriverError::InvalidArgument("not recording".into()));
        }
        if let Some(e) = g.list.error.take() {
            g.reset(CbState::Invalid);
            return Err(e);
        }
        let list = std::mem::take(&mut g.list);
        g.state = CbState::Executable;
        g.recorded = Some(Arc::new(Recorded {
            list,
            primary: c.level == vk::CommandBufferLevel::PRIMARY,
            built: Mutex::new(None),
        }));
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn reset_command_buffer(
    cb: vk::CommandBuffer,
    _flags: vk::CommandBufferResetFlags,
) -> vk::Result {
    ffi::result("vkResetCommandBuffer", || {
        // SAFETY: a live command buffer per the spec.
        unsafe { cmd(cb) }?.reset();
        Ok(vk::Result::SUCCESS)
    })
}

/// Wraps a vkCmd* body.
fn record(
    name: &'static str,
    cb: vk::CommandBuffer,
    f: impl FnOnce(&Core, &mut Recording) -> Result<()>,
) {
    ffi::void(name, || {
        // SAFETY: a live command buffer per the spec.
        let c = unsafe { cmd(cb) }?;
        c.record(f);
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn cmd_bind_pipeline(
    cb: vk::CommandBuffer,
    bind_point: vk::PipelineBindPoint,
    pipeline: vk::Pipeline,
) {
    record("vkCmdBindPipeline", cb, |core, r| {
        if bind_point != vk::PipelineBindPoint::COMPUTE {
            return Err(DriverError::NotImplemented("graphics pipelines"));
        }
        r.bind_pipeline(core, pipeline.as_raw())
    })
}

pub(crate) unsafe extern "system" fn cmd_bind_descriptor_sets(
    cb: vk::CommandBuffer,
    _bind_point: vk::PipelineBindPoint,
    _layout: vk::PipelineLayout,
    first_set: u32,
    set_count: u32,
    p_sets: *const vk::DescriptorSet,
    dyn_count: u32,
    p_dyn: *const u32,
) {
    record("vkCmdBindDescriptorSets", cb, |core, r| {
        // SAFETY: arrays of the given counts per the spec.
        let (sets, dyns) = unsafe {
            (
                ffi::slice(p_sets, set_count, "pDescriptorSets")?,
                ffi::slice(p_dyn, dyn_count, "pDynamicOffsets")?,
            )
        };
        let mut next_dyn = 0usize;
        for (i, s) in sets.iter().enumerate() {
            let index = first_set as usize + i;
            let set = || core.descriptor_sets.get(s.as_raw());
            // The dynamic offsets of this set: as many as its layout has dynamic descriptors.
            let n = if dyns.len() > next_dyn {
                set()?.layout.dynamic_slots().count()
            } else {
                0
            };
            let dynamic = dyns
                .get(next_dyn..next_dyn + n)
                .ok_or_else(|| DriverError::InvalidArgument("too few dynamic offsets".into()))?;
            next_dyn += n;
            r.bind_set(index, s.as_raw(), set, dynamic)?;
        }
        Ok(())
    })
}

/// Binds a push descriptor set at `index`: the descriptors pushed before at that index (when
/// the layout is the same) with `update` applied (VK_KHR_push_descriptor).
fn push_descriptors(
    core: &Core,
    r: &mut Recording,
    layout: vk::PipelineLayout,
    index: u32,
    update: impl FnOnce(&DescriptorSet) -> Result<()>,
) -> Result<()> {
    let pl = core.pipeline_layouts.get(layout.as_raw())?;
    let sl = pl.sets.get(index as usize).cloned().ok_or_else(|| {
        DriverError::InvalidArgument(format!("pipeline layout has no set {index}"))
    })?;
    let set = DescriptorSet::detached(sl.clone());
    if let Some(old) = r.bound_set(index as usize) {
        if Arc::ptr_eq(&old.layout, &sl) {
            *set.lock() = old.lock().clone();
            *set.lock_samplers() = old.lock_samplers().clone();
        }
    }
    update(&set)?;
    r.bind_set(index as usize, 0, || Ok(Arc::new(set)), &[])
}

pub(crate) unsafe extern "system" fn cmd_push_descriptor_set(
    cb: vk::CommandBuffer,
    _bind_point: vk::PipelineBindPoint,
    layout: vk::PipelineLayout,
    set: u32,
    count: u32,
    p_writes: *const vk::WriteDescriptorSet<'_>,
) {
    record("vkCmdPushDescriptorSetKHR", cb, |core, r| {
        // SAFETY: `count` writes per the spec.
        let writes = unsafe { ffi::slice(p_writes, count, "pDescriptorWrites") }?;
        push_descriptors(core, r, layout, set, |s| {
            for w in writes {
                // SAFETY: the write's arrays are valid for its type per the spec.
                let descs = unsafe { crate::descriptor::write_descs(core, w) }?;
                s.write(w.dst_binding, w.dst_array_element, w.descriptor_type, descs)?;
            }
            Ok(())
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_push_descriptor_set_with_template(
    cb: vk::CommandBuffer,
    template: vk::DescriptorUpdateTemplate,
    layout: vk::PipelineLayout,
    set: u32,
    p_data: *const std::ffi::c_void,
) {
    record("vkCmdPushDescriptorSetWithTemplateKHR", cb, |core, r| {
        let t = core.update_templates.get(template.as_raw())?;
        // SAFETY: pData is laid out as the template says (the spec's requirement).
        push_descriptors(core, r, layout, set, |s| unsafe {
            t.apply(core, s, p_data.cast())
        })
    })
}

pub(crate) unsafe extern "system" fn cmd_push_constants(
    cb: vk::CommandBuffer,
    _layout: vk::PipelineLayout,
    _stages: vk::ShaderStageFlags,
    offset: u32,
    size: u32,
    p_values: *const std::ffi::c_void,
) {
    record("vkCmdPushConstants", cb, |_, r| {
        // SAFETY: pValues holds `size` bytes per the spec.
        let v = unsafe { ffi::slice(p_values.cast::<u8>(), size, "pValues") }?;
        r.push_constants(offset, v)
    })
}

pub(crate) unsafe extern "system" fn cmd_dispatch(cb: vk::CommandBuffer, x: u32, y: u32, z: u32) {
    record("vkCmdDispatch", cb, |_, r| {
        r.dispatch([x, y, z], [0; 3], None)
    })
}

/// The GPU address of `offset` in a bound buffer, recording the memory as used.
fn buffer_address(
    core: &Core,
    r: &mut Recording,
    buffer: vk::Buffer,
    offset: u64,
) -> Result<(u64, u64)> {
    let b = core.buffers.get(buffer.as_raw())?;
    let (mem, base) = b.resolve()?;
    r.use_memory(&mem);
    Ok((mem.va + base + offset, b.size.saturating_sub(offset)))
}

pub(crate) unsafe extern "system" fn cmd_dispatch_indirect(
    cb: vk::CommandBuffer,
    buffer: vk::Buffer,
    offset: u64,
) {
    record("vkCmdDispatchIndirect", cb, |core, r| {
        let (addr, _) = buffer_address(core, r, buffer, offset)?;
        r.dispatch([0; 3], [0; 3], Some(addr))
    })
}

fn barrier(r: &mut Recording) {
    // Compute-to-anything: wait for the EUs, write the data cache back, drop stale
    // constant/texture lines.
    r.pipe_control(PipeControl {
        command_streamer_stall_enable: true,
        dc_flush_enable: true,
        constant_cache_invalidation_enable: true,
        texture_cache_invalidation_enable: true,
        ..Default::default()
    });
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "system" fn cmd_pipeline_barrier(
    cb: vk::CommandBuffer,
    _src: vk::PipelineStageFlags,
    _dst: vk::PipelineStageFlags,
    _deps: vk::DependencyFlags,
    _mb: u32,
    _p_mb: *const vk::MemoryBarrier<'_>,
    _bb: u32,
    _p_bb: *const vk::BufferMemoryBarrier<'_>,
    _ib: u32,
    _p_ib: *const vk::ImageMemoryBarrier<'_>,
) {
    // Image layout transitions need no work: Ferrite's images have no auxiliary
    // (compression, fast-clear) surfaces, so every layout is the same memory in the same
    // layout; the PIPE_CONTROL below is the memory dependency.
    record("vkCmdPipelineBarrier", cb, |_, r| {
        barrier(r);
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn cmd_fill_buffer(
    cb: vk::CommandBuffer,
    buffer: vk::Buffer,
    offset: u64,
    size: u64,
    data: u32,
) {
    record("vkCmdFillBuffer", cb, |core, r| {
        let (addr, avail) = buffer_address(core, r, buffer, offset)?;
        let size = if size == vk::WHOLE_SIZE {
            avail & !3
        } else {
            size
        };
        if !offset.is_multiple_of(4) || !size.is_multiple_of(4) {
            return Err(DriverError::InvalidArgument(
                "fill not dword aligned".into(),
            ));
        }
        if size > MI_TRANSFER_MAX {
            let total = size / 4;
            let mut at = 0;
            while at < total {
                let n = (total - at).min(META_CHUNK);
                let dst = buffer_texels(core, buffer, offset + 4 * at, 4, n)?;
                let push = meta::push_data(
                    &Place::default(),
                    &Place::buffer(n as u32, 0),
                    [n as u32, 1],
                    [data; 4],
                );
                let op = MetaOp {
                    src: Source::Constant,
                    dst: Dest::Buffer,
                };
                r.meta(core, op, None, dst, &push, [n as u32, 1, 1])?;
                at += n;
            }
            return Ok(());
        }
        // Command-streamer stores: one MI_STORE_DATA_IMM per dword.
        barrier(r);
        let mut a = addr;
        let end = addr + size;
        while a < end {
            r.store_dword(a, data);
            a += 4;
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn cmd_update_buffer(
    cb: vk::CommandBuffer,
    buffer: vk::Buffer,
    offset: u64,
    size: u64,
    p_data: *const std::ffi::c_void,
) {
    record("vkCmdUpdateBuffer", cb, |core, r| {
        // SAFETY: pData holds `size` bytes per the spec (size <= 65536).
        let data = unsafe { ffi::slice(p_data.cast::<u8>(), size as u32, "pData") }?;
        if !offset.is_multiple_of(4) || !size.is_multiple_of(4) {
            return Err(DriverError::InvalidArgument(
                "update not dword aligned".into(),
            ));
        }
        let (addr, _) = buffer_address(core, r, buffer, offset)?;
        barrier(r);
        for (i, c) in data.chunks(4).enumerate() {
            r.store_dword(
                addr + 4 * i as u64,
                u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            );
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn cmd_copy_buffer(
    cb: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Buffer,
    count: u32,
    p_regions: *const vk::BufferCopy,
) {
    record("vkCmdCopyBuffer", cb, |core, r| {
        // SAFETY: `count` regions per the spec.
        let regions = unsafe { ffi::slice(p_regions, count, "pRegions") }?;
        copy_buffer_regions(core, r, src, dst, regions)
    })
}

/// The copies of vkCmdCopyBuffer and vkCmdCopyBuffer2.
fn copy_buffer_regions(
    core: &Core,
    r: &mut Recording,
    src: vk::Buffer,
    dst: vk::Buffer,
    regions: &[vk::BufferCopy],
) -> Result<()> {
    {
        barrier(r);
        for reg in regions {
            let (s, _) = buffer_address(core, r, src, reg.src_offset)?;
            let (d, _) = buffer_address(core, r, dst, reg.dst_offset)?;
            let dword = s % 4 == 0 && d % 4 == 0 && reg.size % 4 == 0;
            if reg.size > MI_TRANSFER_MAX || !dword {
                // The widest texel that divides both addresses and the size.
                let bpt = [16u64, 8, 4, 2, 1]
                    .into_iter()
                    .find(|b| (s | d | reg.size) % b == 0)
                    .unwrap_or(1);
                // In pieces of META_CHUNK texels (a typed buffer holds at most 2^27).
                let total = reg.size / bpt;
                let mut at = 0;
                while at < total {
                    let n = (total - at).min(META_CHUNK);
                    let (so, dso) = (reg.src_offset + at * bpt, reg.dst_offset + at * bpt);
                    let from = buffer_texels(core, src, so, bpt as u32, n)?;
                    let to = buffer_texels(core, dst, dso, bpt as u32, n)?;
                    let place = Place::buffer(n as u32, 0);
                    let push = meta::push_data(&place, &place, [n as u32, 1], [0; 4]);
                    let op = MetaOp {
                        src: Source::Buffer,
                        dst: Dest::Buffer,
                    };
                    r.meta(core, op, Some(from), to, &push, [n as u32, 1, 1])?;
                    at += n;
                }
                continue;
            }
            let (s, _) = buffer_address(core, r, src, reg.src_offset)?;
            let (d, _) = buffer_address(core, r, dst, reg.dst_offset)?;
            // MI_COPY_MEM_MEM moves one dword through the command streamer.
            for i in (0..reg.size).step_by(4) {
                r.emit(
                    MiCopyMemMem {
                        source_memory_address: s + i,
                        destination_memory_address: d + i,
                        ..Default::default()
                    }
                    .to_dwords(),
                );
            }
        }
        Ok(())
    }
}

pub(crate) unsafe extern "system" fn cmd_execute_commands(
    cb: vk::CommandBuffer,
    count: u32,
    p_buffers: *const vk::CommandBuffer,
) {
    record("vkCmdExecuteCommands", cb, |_, r| {
        // SAFETY: `count` command buffers per the spec.
        let bufs = unsafe { ffi::slice(p_buffers, count, "pCommandBuffers") }?;
        for b in bufs {
            // SAFETY: live secondary command buffers per the spec.
            let rec = unsafe { cmd(*b) }?.recorded()?;
            let i = r.secondaries.len() as u32;
            r.secondaries.push(rec);
            r.cmds.push(Cmd::Execute(i));
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn cmd_write_timestamp(
    cb: vk::CommandBuffer,
    _stage: vk::PipelineStageFlags,
    pool: vk::QueryPool,
    query: u32,
) {
    record("vkCmdWriteTimestamp", cb, |core, r| {
        let q = core.query_pools.get(pool.as_raw())?;
        let addr = q.slot_address(query)?;
        // Post-sync timestamp write after all earlier work (CS stall).
        r.pipe_control(PipeControl {
            command_streamer_stall_enable: true,
            post_sync_operation: 3,
            address: addr,
            ..Default::default()
        });
        r.store_qword(addr + 8, 1);
        if !r.queries.iter().any(|x| Arc::ptr_eq(x, &q)) {
            r.queries.push(q);
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn cmd_reset_query_pool(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    first: u32,
    count: u32,
) {
    record("vkCmdResetQueryPool", cb, |core, r| {
        let q = core.query_pools.get(pool.as_raw())?;
        for i in first..first + count {
            let a = q.slot_address(i)?;
            r.store_qword(a + 8, 0);
        }
        if !r.queries.iter().any(|x| Arc::ptr_eq(x, &q)) {
            r.queries.push(q);
        }
        Ok(())
    })
}

fn event_write(cb: vk::CommandBuffer, event: vk::Event, value: u32, name: &'static str) {
    record(name, cb, |core, r| {
        let e = core.events.get(event.as_raw())?;
        barrier(r);
        r.store_dword(e.bo.va, value);
        if !r.events.iter().any(|x| Arc::ptr_eq(x, &e)) {
            r.events.push(e);
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn cmd_set_event(
    cb: vk::CommandBuffer,
    event: vk::Event,
    _stage: vk::PipelineStageFlags,
) {
    event_write(cb, event, 1, "vkCmdSetEvent")
}

pub(crate) unsafe extern "system" fn cmd_reset_event(
    cb: vk::CommandBuffer,
    event: vk::Event,
    _stage: vk::PipelineStageFlags,
) {
    event_write(cb, event, 0, "vkCmdResetEvent")
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "system" fn cmd_wait_events(
    cb: vk::CommandBuffer,
    count: u32,
    p_events: *const vk::Event,
    _src: vk::PipelineStageFlags,
    _dst: vk::PipelineStageFlags,
    _mb: u32,
    _p_mb: *const vk::MemoryBarrier<'_>,
    _bb: u32,
    _p_bb: *const vk::BufferMemoryBarrier<'_>,
    _ib: u32,
    _p_ib: *const vk::ImageMemoryBarrier<'_>,
) {
    record("vkCmdWaitEvents", cb, |core, r| {
        // SAFETY: `count` events per the spec.
        let events = unsafe { ffi::slice(p_events, count, "pEvents") }?;
        for ev in events {
            let e = core.events.get(ev.as_raw())?;
            // Poll until the event's dword is 1 (MI_SEMAPHORE_WAIT, SAD_EQUAL_SDD).
            r.emit(
                MiSemaphoreWait {
                    compare_operation: 4,
                    wait_mode: 1,
                    semaphore_data_dword: 1,
                    semaphore_address: e.bo.va,
                    ..Default::default()
                }
                .to_dwords(),
            );
            if !r.events.iter().any(|x| Arc::ptr_eq(x, &e)) {
                r.events.push(e);
            }
        }
        barrier(r);
        Ok(())
    })
}

// --- VK_KHR_synchronization2, VK_KHR_device_group (dispatch base), VK_KHR_maintenance1 (trim) ---

pub(crate) unsafe extern "system" fn cmd_pipeline_barrier2(
    cb: vk::CommandBuffer,
    _p_dependency: *const vk::DependencyInfo<'_>,
) {
    // The same PIPE_CONTROL as vkCmdPipelineBarrier: compute is the only pipeline there is.
    record("vkCmdPipelineBarrier2KHR", cb, |_, r| {
        barrier(r);
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn cmd_write_timestamp2(
    cb: vk::CommandBuffer,
    _stage: vk::PipelineStageFlags2,
    pool: vk::QueryPool,
    query: u32,
) {
    // SAFETY: forwarded caller contract; the stage only matters for when, and the CS stall
    // of vkCmdWriteTimestamp covers every stage.
    unsafe { cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, query) }
}

pub(crate) unsafe extern "system" fn cmd_set_event2(
    cb: vk::CommandBuffer,
    event: vk::Event,
    _p_dependency: *const vk::DependencyInfo<'_>,
) {
    event_write(cb, event, 1, "vkCmdSetEvent2KHR")
}

pub(crate) unsafe extern "system" fn cmd_reset_event2(
    cb: vk::CommandBuffer,
    event: vk::Event,
    _stage: vk::PipelineStageFlags2,
) {
    event_write(cb, event, 0, "vkCmdResetEvent2KHR")
}

pub(crate) unsafe extern "system" fn cmd_wait_events2(
    cb: vk::CommandBuffer,
    count: u32,
    p_events: *const vk::Event,
    _p_dependencies: *const vk::DependencyInfo<'_>,
) {
    // SAFETY: forwarded caller contract; the barriers of vkCmdWaitEvents are one full
    // PIPE_CONTROL whatever the dependency infos say.
    unsafe {
        cmd_wait_events(
            cb,
            count,
            p_events,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::ALL_COMMANDS,
            0,
            std::ptr::null(),
            0,
            std::ptr::null(),
            0,
            std::ptr::null(),
        )
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "system" fn cmd_dispatch_base(
    cb: vk::CommandBuffer,
    base_x: u32,
    base_y: u32,
    base_z: u32,
    x: u32,
    y: u32,
    z: u32,
) {
    // The base goes into the CURBE driver register (dispatch contract, dw3-5); the compiler adds
    // it to gl_WorkGroupID.
    record("vkCmdDispatchBaseKHR", cb, |_, r| {
        r.dispatch([x, y, z], [base_x, base_y, base_z], None)
    })
}

/// vkCmdCopyBuffer2 (VK_KHR_copy_commands2, core 1.3): the regions of the extensible
/// structures, copied as vkCmdCopyBuffer copies them.
pub(crate) unsafe extern "system" fn cmd_copy_buffer2(
    cb: vk::CommandBuffer,
    p_info: *const vk::CopyBufferInfo2<'_>,
) {
    record("vkCmdCopyBuffer2", cb, |core, r| {
        // SAFETY: a valid structure with `region_count` regions per the spec.
        let info = unsafe { ffi::read(p_info, "pCopyBufferInfo") }?;
        // SAFETY: as above.
        let regions = unsafe { ffi::slice(info.p_regions, info.region_count, "pRegions") }?;
        let regions: Vec<vk::BufferCopy> = regions
            .iter()
            .map(|c| vk::BufferCopy {
                src_offset: c.src_offset,
                dst_offset: c.dst_offset,
                size: c.size,
            })
            .collect();
        copy_buffer_regions(core, r, info.src_buffer, info.dst_buffer, &regions)
    })
}

/// The typed-buffer surface of `n` texels of `bpt` bytes from `offset` in `buffer`.
fn buffer_texels(
    core: &Core,
    buffer: vk::Buffer,
    offset: u64,
    bpt: u32,
    n: u64,
) -> Result<MetaSurface> {
    let b = core.buffers.get(buffer.as_raw())?;
    let (memory, base) = b.resolve()?;
    let format =
        meta::uint_format(bpt).ok_or(DriverError::NotImplemented("transfers of 96-bit texels"))?;
    let avail = b.size.saturating_sub(offset) / u64::from(bpt);
    if n == 0 || n > avail || n > u64::from(crate::physical::MAX_TEXEL_BUFFER_ELEMENTS) {
        return Err(DriverError::InvalidArgument(format!(
            "{n} texels of {bpt} bytes at offset {offset} of a {}-byte buffer",
            b.size
        )));
    }
    let address = memory.va + base + offset;
    let state = crate::image::typed_buffer_surface(address, n, format).to_dwords();
    Ok((memory, state))
}

/// The kernel's place of an image subresource at `offset`, and the texel size.
fn image_place(
    image: &Image,
    sub: &vk::ImageSubresourceLayers,
    offset: vk::Offset3D,
) -> Result<Place> {
    if sub.aspect_mask != vk::ImageAspectFlags::COLOR {
        return Err(DriverError::InvalidArgument(format!(
            "aspect {:?} (only COLOR images exist)",
            sub.aspect_mask
        )));
    }
    let o = [offset.x, offset.y, offset.z].map(|v| v.max(0) as u32);
    Ok(match image.ty {
        vk::ImageType::TYPE_1D => Place::image([o[0], sub.base_array_layer, 0], true),
        vk::ImageType::TYPE_3D => Place::image(o, false),
        _ => Place::image([o[0], o[1], sub.base_array_layer], false),
    })
}

/// Layers of a subresource (VK_REMAINING_ARRAY_LAYERS resolved), or the depth of a 3-D
/// region: the grid's third dimension.
fn grid_depth(image: &Image, sub: &vk::ImageSubresourceLayers, extent: vk::Extent3D) -> u32 {
    if image.ty == vk::ImageType::TYPE_3D {
        extent.depth
    } else if sub.layer_count == vk::REMAINING_ARRAY_LAYERS {
        image.layout.layers.saturating_sub(sub.base_array_layer)
    } else {
        sub.layer_count
    }
}

/// The UINT surface of one level of `image` for the meta kernels.
fn image_texels(image: &Image, level: u32) -> Result<(MetaSurface, u32)> {
    let bpt = image.hw.bytes_per_texel();
    let format =
        meta::uint_format(bpt).ok_or(DriverError::NotImplemented("transfers of 96-bit formats"))?;
    Ok((image.transfer_surface(level, format)?, bpt))
}

/// Buffer <-> image copies of vkCmdCopyBufferToImage(2) and vkCmdCopyImageToBuffer(2):
/// one meta dispatch per region over its texels, the buffer addressed as the spec's
/// "Copying Data Between Buffers and Images" says (rows of bufferRowLength texels, slices
/// of bufferImageHeight rows, array layers after one another like slices).
fn copy_buffer_image(
    core: &Core,
    r: &mut Recording,
    buffer: vk::Buffer,
    image: vk::Image,
    to_image: bool,
    regions: &[vk::BufferImageCopy],
) -> Result<()> {
    let img = core.images.get(image.as_raw())?;
    for reg in regions {
        let sub = &reg.image_subresource;
        let (surface, bpt) = image_texels(&img, sub.mip_level)?;
        let e = reg.image_extent;
        let d = grid_depth(&img, sub, e);
        let row = if reg.buffer_row_length == 0 {
            e.width
        } else {
            reg.buffer_row_length
        };
        let height = if reg.buffer_image_height == 0 {
            e.height
        } else {
            reg.buffer_image_height
        };
        if e.width == 0 || e.height == 0 || d == 0 {
            continue;
        }
        let slice = row * height;
        let texels = u64::from(e.width)
            + u64::from(e.height - 1) * u64::from(row)
            + u64::from(d - 1) * u64::from(slice);
        let buf = buffer_texels(core, buffer, reg.buffer_offset, bpt, texels)?;
        let place = image_place(&img, sub, reg.image_offset)?;
        let bplace = Place::buffer(row, slice);
        let grid = [e.width, e.height, d];
        if to_image {
            let push = meta::push_data(&bplace, &place, [e.width, e.height], [0; 4]);
            let op = MetaOp {
                src: Source::Buffer,
                dst: Dest::Image,
            };
            r.meta(core, op, Some(buf), surface, &push, grid)?;
        } else {
            let push = meta::push_data(&place, &bplace, [e.width, e.height], [0; 4]);
            let op = MetaOp {
                src: Source::Image,
                dst: Dest::Buffer,
            };
            r.meta(core, op, Some(surface), buf, &push, grid)?;
        }
    }
    Ok(())
}

/// vkCmdCopyImage(2): texels of the same size (formats of one compatibility class, or any
/// two of the same size: the copy moves bits), between any image types the spec allows
/// (2-D array layers and 3-D slices map onto each other).
fn copy_image_regions(
    core: &Core,
    r: &mut Recording,
    src: vk::Image,
    dst: vk::Image,
    regions: &[vk::ImageCopy],
) -> Result<()> {
    let (si, di) = (
        core.images.get(src.as_raw())?,
        core.images.get(dst.as_raw())?,
    );
    if si.hw.bytes_per_texel() != di.hw.bytes_per_texel() {
        return Err(DriverError::InvalidArgument(format!(
            "copy between {:?} and {:?}: texel sizes differ",
            si.format, di.format
        )));
    }
    for reg in regions {
        let (from, _) = image_texels(&si, reg.src_subresource.mip_level)?;
        let (to, _) = image_texels(&di, reg.dst_subresource.mip_level)?;
        let e = reg.extent;
        let d = grid_depth(&si, &reg.src_subresource, e);
        let sp = image_place(&si, &reg.src_subresource, reg.src_offset)?;
        let dp = image_place(&di, &reg.dst_subresource, reg.dst_offset)?;
        let push = meta::push_data(&sp, &dp, [e.width, e.height], [0; 4]);
        let op = MetaOp {
            src: Source::Image,
            dst: Dest::Image,
        };
        r.meta(core, op, Some(from), to, &push, [e.width, e.height, d])?;
    }
    Ok(())
}

pub(crate) unsafe extern "system" fn cmd_copy_buffer_to_image(
    cb: vk::CommandBuffer,
    buffer: vk::Buffer,
    image: vk::Image,
    _layout: vk::ImageLayout,
    count: u32,
    p_regions: *const vk::BufferImageCopy,
) {
    record("vkCmdCopyBufferToImage", cb, |core, r| {
        // SAFETY: `count` regions per the spec.
        let regions = unsafe { ffi::slice(p_regions, count, "pRegions") }?;
        copy_buffer_image(core, r, buffer, image, true, regions)
    })
}

pub(crate) unsafe extern "system" fn cmd_copy_image_to_buffer(
    cb: vk::CommandBuffer,
    image: vk::Image,
    _layout: vk::ImageLayout,
    buffer: vk::Buffer,
    count: u32,
    p_regions: *const vk::BufferImageCopy,
) {
    record("vkCmdCopyImageToBuffer", cb, |core, r| {
        // SAFETY: `count` regions per the spec.
        let regions = unsafe { ffi::slice(p_regions, count, "pRegions") }?;
        copy_buffer_image(core, r, buffer, image, false, regions)
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "system" fn cmd_copy_image(
    cb: vk::CommandBuffer,
    src: vk::Image,
    _src_layout: vk::ImageLayout,
    dst: vk::Image,
    _dst_layout: vk::ImageLayout,
    count: u32,
    p_regions: *const vk::ImageCopy,
) {
    record("vkCmdCopyImage", cb, |core, r| {
        // SAFETY: `count` regions per the spec.
        let regions = unsafe { ffi::slice(p_regions, count, "pRegions") }?;
        copy_image_regions(core, r, src, dst, regions)
    })
}

/// vkCmdClearColorImage: the clear colour is encoded once on the host in the image's own
/// format (the codec the simulated GPU and the sampler use: UNORM/SNORM rounding, sRGB
/// encoding, narrow floats) and written as raw texels to every level and layer of the
/// ranges.
pub(crate) unsafe extern "system" fn cmd_clear_color_image(
    cb: vk::CommandBuffer,
    image: vk::Image,
    _layout: vk::ImageLayout,
    p_color: *const vk::ClearColorValue,
    count: u32,
    p_ranges: *const vk::ImageSubresourceRange,
) {
    record("vkCmdClearColorImage", cb, |core, r| {
        // SAFETY: a valid colour and `count` ranges per the spec.
        let (color, ranges) = unsafe {
            (
                ffi::read(p_color, "pColor")?,
                ffi::slice(p_ranges, count, "pRanges")?,
            )
        };
        // SAFETY: every member of the union is four plain 32-bit words.
        let words = unsafe { color.uint32 };
        let img = core.images.get(image.as_raw())?;
        let mut bytes = [0u8; 16];
        img.hw.encode(words, &mut bytes);
        let texel: [u32; 4] = std::array::from_fn(|i| {
            u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap_or_default())
        });
        let l = &img.layout;
        for range in ranges {
            if range.aspect_mask != vk::ImageAspectFlags::COLOR {
                return Err(DriverError::InvalidArgument(format!(
                    "clear of aspect {:?}",
                    range.aspect_mask
                )));
            }
            let levels = if range.level_count == vk::REMAINING_MIP_LEVELS {
                l.levels.saturating_sub(range.base_mip_level)
            } else {
                range.level_count
            };
            for level in range.base_mip_level..range.base_mip_level + levels {
                let (surface, _) = image_texels(&img, level)?;
                let size = [0, 1, 2].map(|i| (l.extent[i] >> level).max(1));
                let sub = vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: level,
                    base_array_layer: range.base_array_layer,
                    layer_count: range.layer_count,
                };
                let extent = vk::Extent3D {
                    width: size[0],
                    height: size[1],
                    depth: size[2],
                };
                let d = grid_depth(&img, &sub, extent);
                let place = image_place(&img, &sub, vk::Offset3D::default())?;
                let push = meta::push_data(&Place::default(), &place, [size[0], size[1]], texel);
                let op = MetaOp {
                    src: Source::Constant,
                    dst: Dest::Image,
                };
                r.meta(core, op, None, surface, &push, [size[0], size[1], d])?;
            }
        }
        Ok(())
    })
}

/// vkCmdBlitImage(2): per region and layer, one dispatch of a blit kernel (crate::meta,
/// `Source::Blit`) over the destination region. Each invocation samples the source level
/// and layer with `sample_l` at LOD 0 through a sampler with the command's filter,
/// CLAMP_TO_EDGE and normalized coordinates, at the spec's coordinate ("Image Blits":
/// `u = (i + 1/2 - x_dst0) * (x_src1 - x_src0) / (x_dst1 - x_dst0) + x_src0`, divided by the
/// source width), and the typed write of the destination's own format converts. Flipped
/// regions (offsets in decreasing order, on either side) come out of the same formula.
fn blit_regions(
    core: &Core,
    r: &mut Recording,
    src: vk::Image,
    dst: vk::Image,
    regions: &[vk::ImageBlit],
    filter: vk::Filter,
) -> Result<()> {
    let (si, di) = (
        core.images.get(src.as_raw())?,
        core.images.get(dst.as_raw())?,
    );
    for (img, feature) in [
        (&si, vk::FormatFeatureFlags::BLIT_SRC),
        (&di, vk::FormatFeatureFlags::BLIT_DST),
    ] {
        if !crate::format::image_features(img.format).contains(feature) {
            return Err(DriverError::InvalidArgument(format!(
                "vkCmdBlitImage: {:?} lacks {feature:?}",
                img.format
            )));
        }
    }
    let sampler = Arc::new(crate::sampler::Sampler::new(
        &vk::SamplerCreateInfo::default()
            .mag_filter(filter)
            .min_filter(filter)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .min_lod(0.0)
            .max_lod(0.0),
    )?);
    let dim = match si.ty {
        vk::ImageType::TYPE_1D => 1,
        vk::ImageType::TYPE_3D => 3,
        _ => 2,
    };
    let op = MetaOp {
        src: Source::Blit(dim),
        dst: Dest::Image,
    };
    for reg in regions {
        let (ss, ds) = (&reg.src_subresource, &reg.dst_subresource);
        let src_size = si.layout.level_extent(ss.mip_level);
        let (s0, s1) = (reg.src_offsets[0], reg.src_offsets[1]);
        let (d0, d1) = (reg.dst_offsets[0], reg.dst_offsets[1]);
        let (s0, s1) = ([s0.x, s0.y, s0.z], [s1.x, s1.y, s1.z]);
        let (d0, d1) = ([d0.x, d0.y, d0.z], [d1.x, d1.y, d1.z]);
        let lo: [i32; 3] = std::array::from_fn(|i| d0[i].min(d1[i]));
        let size: [u32; 3] = std::array::from_fn(|i| d0[i].abs_diff(d1[i]));
        if size.contains(&0) {
            continue;
        }
        let mut map = meta::BlitMap::default();
        for i in 0..3 {
            let scale = f64::from(s1[i] - s0[i]) / f64::from(d1[i] - d0[i]);
            map.base[i] = (f64::from(s0[i]) + (f64::from(lo[i] - d0[i]) + 0.5) * scale) as f32;
            map.step[i] = scale as f32;
            map.inv_size[i] = 1.0 / src_size[i] as f32;
        }
        let layers = grid_depth(&si, ss, vk::Extent3D::default().depth(1));
        let (to, _) = (di.transfer_surface(ds.mip_level, di.hw)?, ());
        for l in 0..layers {
            let from = si.blit_source_surface(ss.mip_level, ss.base_array_layer + l)?;
            let dsub = vk::ImageSubresourceLayers {
                base_array_layer: ds.base_array_layer + l,
                ..*ds
            };
            let offset = vk::Offset3D {
                x: lo[0],
                y: lo[1],
                z: lo[2],
            };
            let place = image_place(&di, &dsub, offset)?;
            let push = meta::blit_push_data(&map, &place, [size[0], size[1]]);
            let depth = if di.ty == vk::ImageType::TYPE_3D {
                size[2]
            } else {
                1
            };
            r.meta_sampled(
                core,
                op,
                from,
                to.clone(),
                sampler.clone(),
                &push,
                [size[0], size[1], depth],
            )?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "system" fn cmd_blit_image(
    cb: vk::CommandBuffer,
    src: vk::Image,
    _src_layout: vk::ImageLayout,
    dst: vk::Image,
    _dst_layout: vk::ImageLayout,
    count: u32,
    p_regions: *const vk::ImageBlit,
    filter: vk::Filter,
) {
    record("vkCmdBlitImage", cb, |core, r| {
        // SAFETY: `count` regions per the spec.
        let regions = unsafe { ffi::slice(p_regions, count, "pRegions") }?;
        blit_regions(core, r, src, dst, regions, filter)
    })
}

/// vkCmdBlitImage2 (core 1.3, VK_KHR_copy_commands2): the regions of the extensible
/// structures.
pub(crate) unsafe extern "system" fn cmd_blit_image2(
    cb: vk::CommandBuffer,
    info: *const vk::BlitImageInfo2<'_>,
) {
    record("vkCmdBlitImage2", cb, |core, r| {
        // SAFETY: a valid info with `region_count` regions per the spec.
        let info = unsafe { ffi::read(info, "pBlitImageInfo") }?;
        // SAFETY: as above.
        let regions = unsafe { ffi::slice(info.p_regions, info.region_count, "pRegions") }?;
        let regions: Vec<vk::ImageBlit> = regions
            .iter()
            .map(|b| vk::ImageBlit {
                src_subresource: b.src_subresource,
                src_offsets: b.src_offsets,
                dst_subresource: b.dst_subresource,
                dst_offsets: b.dst_offsets,
            })
            .collect();
        blit_regions(
            core,
            r,
            info.src_image,
            info.dst_image,
            &regions,
            info.filter,
        )
    })
}

/// vkCmdCopyBufferToImage2 (core 1.3): the regions of the extensible structures.
pub(crate) unsafe extern "system" fn cmd_copy_buffer_to_image2(
    cb: vk::CommandBuffer,
    p_info: *const vk::CopyBufferToImageInfo2<'_>,
) {
    record("vkCmdCopyBufferToImage2", cb, |core, r| {
        // SAFETY: a valid structure with `region_count` regions per the spec.
        let info = unsafe { ffi::read(p_info, "pCopyBufferToImageInfo") }?;
        // SAFETY: as above.
        let regions = unsafe { ffi::slice(info.p_regions, info.region_count, "pRegions") }?;
        let regions: Vec<vk::BufferImageCopy> = regions.iter().map(buffer_image_copy).collect();
        copy_buffer_image(core, r, info.src_buffer, info.dst_image, true, &regions)
    })
}

/// vkCmdCopyImageToBuffer2 (core 1.3).
pub(crate) unsafe extern "system" fn cmd_copy_image_to_buffer2(
    cb: vk::CommandBuffer,
    p_info: *const vk::CopyImageToBufferInfo2<'_>,
) {
    record("vkCmdCopyImageToBuffer2", cb, |core, r| {
        // SAFETY: a valid structure with `region_count` regions per the spec.
        let info = unsafe { ffi::read(p_info, "pCopyImageToBufferInfo") }?;
        // SAFETY: as above.
        let regions = unsafe { ffi::slice(info.p_regions, info.region_count, "pRegions") }?;
        let regions: Vec<vk::BufferImageCopy> = regions.iter().map(buffer_image_copy).collect();
        copy_buffer_image(core, r, info.dst_buffer, info.src_image, false, &regions)
    })
}

/// vkCmdCopyImage2 (core 1.3).
pub(crate) unsafe extern "system" fn cmd_copy_image2(
    cb: vk::CommandBuffer,
    p_info: *const vk::CopyImageInfo2<'_>,
) {
    record("vkCmdCopyImage2", cb, |core, r| {
        // SAFETY: a valid structure with `region_count` regions per the spec.
        let info = unsafe { ffi::read(p_info, "pCopyImageInfo") }?;
        // SAFETY: as above.
        let regions = unsafe { ffi::slice(info.p_regions, info.region_count, "pRegions") }?;
        let regions: Vec<vk::ImageCopy> = regions
            .iter()
            .map(|c| vk::ImageCopy {
                src_subresource: c.src_subresource,
                src_offset: c.src_offset,
                dst_subresource: c.dst_subresource,
                dst_offset: c.dst_offset,
                extent: c.extent,
            })
            .collect();
        copy_image_regions(core, r, info.src_image, info.dst_image, &regions)
    })
}

fn buffer_image_copy(c: &vk::BufferImageCopy2<'_>) -> vk::BufferImageCopy {
    vk::BufferImageCopy {
        buffer_offset: c.buffer_offset,
        buffer_row_length: c.buffer_row_length,
        buffer_image_height: c.buffer_image_height,
        image_subresource: c.image_subresource,
        image_offset: c.image_offset,
        image_extent: c.image_extent,
    }
}

pub(crate) unsafe extern "system" fn trim_command_pool(
    device: vk::Device,
    pool: vk::CommandPool,
    _flags: vk::CommandPoolTrimFlags,
) {
    ffi::void("vkTrimCommandPoolKHR", || {
        // SAFETY: a live device per the spec.
        let p = unsafe { dev(device) }?.command_pools.get(pool.as_raw())?;
        // Command buffers give their batch and state objects back to the kernel when they are
        // reset or freed, so the pool caches no memory; what it can give back is its list.
        p.buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .shrink_to_fit();
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_surface_encodes_the_size_trick() {
        // The observed anv 1000-byte SSBO (docs/gen9.md 6.1): DW2 0x00070067.
        let ss = buffer_surface(0x1000, 1000);
        assert_eq!(ss[2], 0x0007_0067);
        let odd = RenderSurfaceState::unpack(&buffer_surface(0, 1001));
        let n = buffer_surface_elements(&odd);
        assert_eq!((n & !3) - (n & 3), 1001);
    }

    #[test]
    fn only_a_batch_that_emitted_commands_ends_with_the_flush() {
        let empty = Recording::default();
        let mut b = BatchBuilder::new(&empty);
        b.finish(true);
        let end = [
            MiBatchBufferEnd::default().to_dwords(),
            MiNoop::default().to_dwords(),
        ];
        assert_eq!(b.batch, end.concat(), "an empty command buffer");

        let mut flush = BatchBuilder::new(&empty);
        flush.flush_all();
        let mut b = BatchBuilder::new(&empty);
        b.emit(MiNoop::default().to_dwords());
        b.finish(true);
        assert!(
            b.batch[1..].starts_with(&flush.batch),
            "a command, then the flush: {:08x?}",
            b.batch
        );
        let tail = &b.batch[1 + flush.batch.len()..];
        assert_eq!(tail[..1], MiBatchBufferEnd::default().to_dwords()[..]);
    }
}
