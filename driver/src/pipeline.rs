//! Shader modules, pipeline layouts, the pipeline cache and compute pipelines.
//!
//! A compute pipeline is the compiler's Gen9 kernel copied into a GEM object in the
//! instruction heap, plus what a dispatch needs (SIMD width, CURBE shape, SLM, scratch).
//! The binding table of a pipeline layout is flat: sets in order, bindings in increasing
//! order, one index per descriptor (docs/dispatch-contract.md).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use ash::vk;
use ash::vk::Handle;
use ferrite_compiler::backend::SubgroupWidth;
use ferrite_compiler::hw::{HwFacts, GEN9};
use ferrite_compiler::kernel::{CurbeLayout, Statistic, Statistics, STATISTICS};
use ferrite_compiler::pipeline::{CompileOptions, DebugFlags};
use ferrite_compiler::{BindingSlot, Kernel, Target};
use kernel_iface::DeviceInfo;

use crate::bo::{GemBo, Heap};
use crate::descriptor::SetLayout;
use crate::device::{dev, Core, Device};
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::physical::pipeline_cache_uuid;

pub struct ShaderModule {
    pub words: Vec<u32>,
}

pub struct PipelineLayout {
    pub sets: Vec<Arc<SetLayout>>,
    /// The descriptor slot of each binding's first element: (first slot, count, set, slot in
    /// the set), sorted by slot (see [`PipelineLayout::new`]).
    pub runs: Vec<(u32, u32, usize, u32)>,
    /// Total push-constant bytes (end of the furthest range).
    pub push_size: u32,
}

/// Binding-table entries the descriptors of one pipeline layout may use (BTIs 0 ..
/// MAX_BTI - 1; the push-constant surface may take MAX_BTI): the compiler's
/// `HwFacts::max_descriptor_btis`, so both sides agree.
pub const MAX_BTI: u32 = GEN9.max_descriptor_btis();

/// Descriptors one pipeline layout may hold (maxPerStageResources): storage and uniform
/// buffers past the binding table are reached through the descriptor table and A64
/// messages, so only images, texel buffers and samplers are bounded by [`MAX_BTI`]. 65535 is
/// anv's per-stage storage-buffer count on Gen9 (docs/limits.md).
pub const MAX_DESCRIPTORS: u32 = 65535;

/// Whether descriptors of type `ty` may live in the descriptor table (past the binding
/// table): the buffer types, which the compiler can reach with A64 messages.
pub fn table_capable(ty: vk::DescriptorType) -> bool {
    matches!(
        ty,
        vk::DescriptorType::STORAGE_BUFFER
            | vk::DescriptorType::UNIFORM_BUFFER
            | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
            | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
            | vk::DescriptorType::INLINE_UNIFORM_BLOCK
    )
}

impl PipelineLayout {
    /// Descriptor slots: first every binding that needs a binding-table entry (images,
    /// texel buffers, samplers), then the storage and uniform buffers, each group in set
    /// order and binding order, array elements consecutive. Slots below [`MAX_BTI`] are
    /// binding-table indices; buffers at higher slots are read through the descriptor table
    /// (docs/dispatch-contract.md, "Resources").
    pub fn new(sets: Vec<Arc<SetLayout>>, ranges: &[vk::PushConstantRange]) -> Result<Self> {
        let mut runs = Vec::new();
        let mut next = 0u32;
        for buffers in [false, true] {
            for (set, l) in sets.iter().enumerate() {
                for b in &l.bindings {
                    if table_capable(b.ty) == buffers && b.count > 0 {
                        runs.push((next, b.count, set, b.first));
                        next = next.saturating_add(b.count);
                    }
                }
            }
            if !buffers && next > MAX_BTI {
                return Err(DriverError::InvalidArgument(format!(
                    "{next} image, texel-buffer and sampler descriptors exceed the binding \
                     table ({MAX_BTI})"
                )));
            }
        }
        if next > MAX_DESCRIPTORS {
            return Err(DriverError::InvalidArgument(format!(
                "{next} descriptors exceed maxPerStageResources ({MAX_DESCRIPTORS})"
            )));
        }
        if sets.len() > crate::physical::MAX_BOUND_DESCRIPTOR_SETS as usize {
            return Err(DriverError::InvalidArgument(format!(
                "{} set layouts exceed maxBoundDescriptorSets ({})",
                sets.len(),
                crate::physical::MAX_BOUND_DESCRIPTOR_SETS
            )));
        }
        crate::inline_uniform::check_pipeline_layout(&sets)?;
        let push_size = ranges.iter().map(|r| r.offset + r.size).max().unwrap_or(0);
        runs.sort_unstable();
        Ok(PipelineLayout {
            sets,
            runs,
            push_size,
        })
    }

    /// The (set, binding) -> slot map the compiler gets (first element of each binding;
    /// array elements follow consecutively).
    pub fn binding_slots(&self) -> Vec<BindingSlot> {
        let mut v = Vec::new();
        for (set, l) in self.sets.iter().enumerate() {
            for b in &l.bindings {
                let run = self
                    .runs
                    .iter()
                    .find(|r| r.2 == set && r.3 == b.first && r.1 == b.count);
                if let Some(r) = run {
                    v.push(BindingSlot {
                        set: set as u32,
                        binding: b.binding,
                        bti: r.0,
                        count: b.count,
                    });
                }
            }
        }
        v
    }

    /// Which (set, slot in the set) a descriptor slot (a binding-table index below
    /// [`MAX_BTI`]) names.
    pub fn slot_of_bti(&self, bti: u32) -> Option<(usize, u32)> {
        let k = self.runs.partition_point(|r| r.0 <= bti).checked_sub(1)?;
        let (first, count, set, in_set) = self.runs[k];
        (bti < first + count).then_some((set, in_set + bti - first))
    }
}

struct Writer(Vec<u8>);
impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
}

struct Reader<'a>(&'a [u8]);
impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
}

/// The pipeline-cache form of a kernel. Every field of [`Kernel`], [`CurbeLayout`] and
/// [`Statistics`] is named here (destructured, no `..`), so a field added to the contract
/// does not compile until the cache stores it.
pub fn serialize_kernel(k: &Kernel) -> Vec<u8> {
    let Kernel {
        binary,
        simd,
        local_size,
        layout:
            CurbeLayout {
                push_regs,
                size_btis,
                push_bti,
            },
        slm_size,
        scratch_size,
        uses_barrier,
        btis,
        threads_per_group,
        stats:
            Statistics {
                instructions,
                sends,
                loops,
                cycles,
                spills,
                fills,
                max_dispatch_width,
                compile_time_us,
                grf_used,
                // Diagnostics of the compile that made the entry; a cache hit compiled nothing.
                ra_rounds: _,
                pass_times: _,
            },
        asm,
        ir,
        bindings: _,
        table_descriptors,
    } = k;
    let mut w = Writer(Vec::new());
    w.bytes(binary);
    for v in [
        *simd,
        local_size[0],
        local_size[1],
        local_size[2],
        u32::from(*push_regs),
        *slm_size,
        *scratch_size,
        u32::from(*uses_barrier),
        *threads_per_group,
        *instructions,
        *sends,
        *loops,
        *spills,
        *fills,
        *max_dispatch_width,
        *grf_used,
    ] {
        w.u32(v);
    }
    w.u64(*cycles);
    w.u64(*compile_time_us);
    for list in [btis, size_btis] {
        w.u32(list.len() as u32);
        for &b in list {
            w.u32(b);
        }
    }
    w.u32(push_bti.unwrap_or(u32::MAX));
    w.u32(table_descriptors.len() as u32);
    for &(first, count) in table_descriptors {
        w.u32(first);
        w.u32(count);
    }
    w.bytes(asm.as_bytes());
    w.bytes(ir.as_bytes());
    w.0
}

/// The kernel of [`serialize_kernel`]'s bytes; None when they are truncated or too long.
/// The descriptor list (`bindings`) is not cached: dispatch reads `btis`.
pub fn deserialize_kernel(data: &[u8]) -> Option<Kernel> {
    let mut r = Reader(data);
    let binary = r.bytes()?.to_vec();
    let mut f = [0u32; 16];
    for v in &mut f {
        *v = r.u32()?;
    }
    let cycles = r.u64()?;
    let compile_time_us = r.u64()?;
    let nb = r.u32()? as usize;
    let btis = (0..nb).map(|_| r.u32()).collect::<Option<Vec<_>>>()?;
    let ns = r.u32()? as usize;
    let size_btis = (0..ns).map(|_| r.u32()).collect::<Option<Vec<_>>>()?;
    let push_bti = Some(r.u32()?).filter(|&b| b != u32::MAX);
    let nt = r.u32()? as usize;
    let table_descriptors = (0..nt)
        .map(|_| Some((r.u32()?, r.u32()?)))
        .collect::<Option<Vec<_>>>()?;
    let asm = r.string()?;
    let ir = r.string()?;
    if !r.0.is_empty() {
        return None;
    }
    Some(Kernel {
        binary,
        simd: f[0],
        local_size: [f[1], f[2], f[3]],
        layout: CurbeLayout {
            push_regs: u8::try_from(f[4]).ok()?,
            size_btis,
            push_bti,
        },
        slm_size: f[5],
        scratch_size: f[6],
        uses_barrier: f[7] != 0,
        threads_per_group: f[8],
        btis,
        table_descriptors,
        stats: Statistics {
            instructions: f[9],
            sends: f[10],
            loops: f[11],
            cycles,
            spills: f[12],
            fills: f[13],
            max_dispatch_width: f[14],
            compile_time_us,
            grf_used: f[15],
            ra_rounds: 0,
            pass_times: Default::default(),
        },
        asm,
        ir,
        bindings: Vec::new(),
    })
}

/// The compiler's target for a device.
pub fn target(info: &DeviceInfo) -> Target {
    let version = crate::api_version::device_version(info);
    Target {
        has_fp64: info.has_fp64,
        has_int64: info.has_int64,
        max_shared_size: info.slm_size_per_group,
        hw: HwFacts {
            max_threads_per_group: info.max_threads_per_group,
            ..GEN9
        },
        // What the reported apiVersion allows (docs/api-version.md): SPIR-V 1.0 on a 1.0
        // device, 1.3 on 1.1, 1.5 on 1.2, 1.6 on 1.3; GroupNonUniform* capabilities (SPIR-V
        // 1.3) from 1.1 on, where the subgroup properties are reported. A newer module is
        // refused by the front end ("SPIR-V version 1.x"), not compiled behind the API's back.
        max_spirv_version: crate::api_version::spirv_for(version),
        subgroup_ops: version >= vk::API_VERSION_1_1,
        ..Target::gen9()
    }
}

/// Compiler switches from `FERRITE_DEBUG` (the words the compiler knows; the driver's own
/// registry ignores them).
pub fn compiler_debug() -> DebugFlags {
    let words = std::env::var("FERRITE_DEBUG").unwrap_or_default();
    let known: Vec<&str> = words
        .split(',')
        .map(str::trim)
        .filter(|w| DebugFlags::REGISTRY.iter().any(|(n, _)| n == w))
        .collect();
    DebugFlags::parse(&known.join(",")).unwrap_or_default()
}

/// FNV-1a, 128 bits as two 64-bit lanes: a stable key across processes (std's hasher is not
/// guaranteed to be).
fn fnv128(parts: &[&[u8]]) -> [u8; 16] {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for p in parts {
        for &x in p.iter().chain(&(p.len() as u64).to_le_bytes()) {
            a = (a ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
            b = (b ^ x as u64)
                .wrapping_mul(0x0000_0100_0000_01b3)
                .rotate_left(5);
        }
    }
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&a.to_le_bytes());
    k[8..].copy_from_slice(&b.to_le_bytes());
    k
}

/// The cache key: SPIR-V, every compile option and the target.
/// (`keep_ir` and `dump_dir` are not part of it: they change no kernel.)
pub fn cache_key(words: &[u32], opts: &CompileOptions, t: &Target) -> [u8; 16] {
    let spirv: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let o = format!(
        "{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        opts.entry_point,
        opts.specialization,
        opts.bindings,
        opts.push_constant_range,
        opts.debug,
        opts.subgroup,
        t
    );
    fnv128(&[&spirv, o.as_bytes()])
}

/// Compiles SPIR-V for a device: front end, passes and the Gen9 back end. The assembly and IR
/// text are kept only with `opts.keep_ir` (statistics always: they cost nothing).
pub fn compile(info: &DeviceInfo, words: &[u32], opts: &CompileOptions) -> Result<Kernel> {
    let mut k = ferrite_compiler::compile(words, &target(info), opts)?;
    if !opts.keep_ir {
        k.asm.clear();
    }
    Ok(k)
}

/// VkPipelineCache: compiled kernels by key.
#[derive(Default)]
pub struct PipelineCache {
    pub entries: Mutex<HashMap<[u8; 16], Arc<Kernel>>>,
    /// Lookups answered from the cache (tests and benchmarks read it through the log).
    pub hits: std::sync::atomic::AtomicU64,
}

const HEADER_SIZE: usize = 32;

impl PipelineCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 16], Arc<Kernel>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// VkPipelineCacheHeaderVersionOne followed by (key, kernel) entries.
    pub fn serialize(&self, info: &DeviceInfo) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.u32(HEADER_SIZE as u32);
        w.u32(vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32);
        w.u32(crate::physical::VENDOR_ID_INTEL);
        w.u32(u32::from(info.pci_id));
        w.0.extend_from_slice(&pipeline_cache_uuid(info.pci_id));
        let entries = self.lock();
        let mut keys: Vec<_> = entries.keys().copied().collect();
        keys.sort();
        w.u32(keys.len() as u32);
        for k in keys {
            w.0.extend_from_slice(&k);
            w.bytes(&serialize_kernel(&entries[&k]));
        }
        w.0
    }

    /// Loads initial data; data from another device or driver version is ignored (allowed).
    pub fn load(&self, info: &DeviceInfo, data: &[u8]) {
        let mut r = Reader(data);
        let header_ok = (|| {
            let size = r.u32()?;
            let version = r.u32()?;
            let vendor = r.u32()?;
            let device = r.u32()?;
            let uuid = r.take(16)?;
            Some(
                size as usize == HEADER_SIZE
                    && version == vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32
                    && vendor == crate::physical::VENDOR_ID_INTEL
                    && device == u32::from(info.pci_id)
                    && uuid == pipeline_cache_uuid(info.pci_id),
            )
        })();
        if header_ok != Some(true) {
            log::info!("pipeline cache data from another device/driver ignored");
            return;
        }
        let Some(n) = r.u32() else { return };
        let mut entries = self.lock();
        for _ in 0..n {
            let Some(key) = r.take(16) else { return };
            let Some(k) = r.bytes().and_then(deserialize_kernel) else {
                log::warn!("corrupt pipeline cache entry; rest ignored");
                return;
            };
            let mut kk = [0u8; 16];
            kk.copy_from_slice(key);
            entries.insert(kk, Arc::new(k));
        }
    }
}

pub struct Pipeline {
    pub kernel: Arc<Kernel>,
    /// The create flags (CAPTURE_STATISTICS / CAPTURE_INTERNAL_REPRESENTATIONS decide what
    /// VK_KHR_pipeline_executable_properties reports).
    pub flags: vk::PipelineCreateFlags,
    pub layout: Arc<PipelineLayout>,
    pub kernel_bo: GemBo,
    /// Per-thread scratch for every hardware thread, when the kernel spills.
    pub scratch: Option<GemBo>,
}

impl Pipeline {
    pub fn kernel_offset(&self) -> u64 {
        self.kernel_bo.va - crate::bo::INSTRUCTION_BASE
    }
}

/// Hardware threads of the device (scratch is sized for all of them).
pub fn total_threads(info: &DeviceInfo) -> u32 {
    info.eu_total * info.threads_per_eu
}

crate::device::registry_creates! {
    create_shader_module, "vkCreateShaderModule", ShaderModuleCreateInfo => shader_modules, ShaderModule, "pShaderModule", new_shader_module;
}

/// The object vkCreateShaderModule makes of its create info.
fn new_shader_module(_d: &Device, info: &vk::ShaderModuleCreateInfo<'_>) -> Result<ShaderModule> {
    if !info.code_size.is_multiple_of(4) {
        return Err(DriverError::InvalidArgument(
            "codeSize is not a multiple of 4".into(),
        ));
    }
    // SAFETY: pCode holds codeSize bytes (codeSize/4 words) per the spec.
    let words = unsafe { ffi::slice(info.p_code, (info.code_size / 4) as u32, "pCode") }?.to_vec();
    Ok(ShaderModule { words })
}

crate::device::registry_destroys! {
    destroy_shader_module, "vkDestroyShaderModule", vk::ShaderModule => shader_modules;
}

crate::device::registry_creates! {
    create_pipeline_layout, "vkCreatePipelineLayout", PipelineLayoutCreateInfo => pipeline_layouts, PipelineLayout, "pPipelineLayout", new_pipeline_layout;
}

/// The object vkCreatePipelineLayout makes of its create info.
fn new_pipeline_layout(
    d: &Device,
    info: &vk::PipelineLayoutCreateInfo<'_>,
) -> Result<PipelineLayout> {
    // SAFETY: arrays of the given counts per the spec.
    let (sets, ranges) = unsafe {
        (
            ffi::slice(info.p_set_layouts, info.set_layout_count, "pSetLayouts")?,
            ffi::slice(
                info.p_push_constant_ranges,
                info.push_constant_range_count,
                "pPushConstantRanges",
            )?,
        )
    };
    let sets = sets
        .iter()
        .map(|s| d.set_layouts.get(s.as_raw()))
        .collect::<Result<Vec<_>>>()?;
    PipelineLayout::new(sets, ranges)
}

crate::device::registry_destroys! {
    destroy_pipeline_layout, "vkDestroyPipelineLayout", vk::PipelineLayout => pipeline_layouts;
}

crate::device::registry_creates! {
    create_pipeline_cache, "vkCreatePipelineCache", PipelineCacheCreateInfo => pipeline_caches, PipelineCache, "pPipelineCache", new_pipeline_cache;
}

/// The object vkCreatePipelineCache makes of its create info.
fn new_pipeline_cache(d: &Device, info: &vk::PipelineCacheCreateInfo<'_>) -> Result<PipelineCache> {
    let cache = PipelineCache::default();
    if info.initial_data_size > 0 {
        // SAFETY: pInitialData holds initialDataSize bytes per the spec.
        let data = unsafe {
            ffi::slice(
                info.p_initial_data.cast::<u8>(),
                info.initial_data_size as u32,
                "pInitialData",
            )
        }?;
        cache.load(d.adapter.info, data);
    }
    Ok(cache)
}

crate::device::registry_destroys! {
    destroy_pipeline_cache, "vkDestroyPipelineCache", vk::PipelineCache => pipeline_caches;
}

pub(crate) unsafe extern "system" fn get_pipeline_cache_data(
    device: vk::Device,
    cache: vk::PipelineCache,
    p_size: *mut usize,
    p_data: *mut c_void,
) -> vk::Result {
    ffi::result("vkGetPipelineCacheData", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        let data = d
            .pipeline_caches
            .get(cache.as_raw())?
            .serialize(d.adapter.info);
        if p_size.is_null() {
            return Err(DriverError::NullPointer("pDataSize"));
        }
        if p_data.is_null() {
            // SAFETY: non-null output pointer per the spec.
            unsafe { p_size.write(data.len()) };
            return Ok(vk::Result::SUCCESS);
        }
        // SAFETY: p_size valid; p_data holds *p_size bytes per the spec.
        let cap = unsafe { p_size.read() };
        if cap < data.len() {
            // Partial entries are useless: write nothing (allowed by the spec).
            // SAFETY: as above.
            unsafe { p_size.write(0) };
            return Ok(vk::Result::INCOMPLETE);
        }
        // SAFETY: p_data holds at least data.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p_data.cast::<u8>(), data.len()) };
        // SAFETY: as above.
        unsafe { p_size.write(data.len()) };
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn merge_pipeline_caches(
    device: vk::Device,
    dst: vk::PipelineCache,
    count: u32,
    p_src: *const vk::PipelineCache,
) -> vk::Result {
    ffi::result("vkMergePipelineCaches", || {
        // SAFETY: live device and `count` handles per the spec.
        let (d, srcs) = unsafe { (dev(device)?, ffi::slice(p_src, count, "pSrcCaches")?) };
        let dst = d.pipeline_caches.get(dst.as_raw())?;
        for s in srcs {
            let src = d.pipeline_caches.get(s.as_raw())?;
            if Arc::ptr_eq(&src, &dst) {
                return Err(DriverError::InvalidArgument(
                    "a cache merged into itself".into(),
                ));
            }
            let add: Vec<_> = src.lock().iter().map(|(k, v)| (*k, v.clone())).collect();
            dst.lock().extend(add);
        }
        Ok(vk::Result::SUCCESS)
    })
}

/// Builds one pipeline (compile or cache hit, then the kernel and scratch objects).
/// VkPipelineCreationFeedbackCreateInfo (VK_EXT_pipeline_creation_feedback, core 1.3): the
/// time the creation took and whether the application's cache held the kernel, for the
/// pipeline and for its one stage.
///
/// # Safety
/// `p_next` must be null or a valid chain whose feedback structure points at writable outputs.
unsafe fn write_feedback(p_next: *const c_void, hit: bool, took: std::time::Duration) {
    // SAFETY: forwarded caller contract.
    let Some(p) = (unsafe {
        ffi::find_in_chain(
            p_next,
            vk::StructureType::PIPELINE_CREATION_FEEDBACK_CREATE_INFO,
        )
    }) else {
        return;
    };
    // SAFETY: a structure with this sType is this type.
    let fb = unsafe { &*p.cast::<vk::PipelineCreationFeedbackCreateInfo<'_>>() };
    let mut flags = vk::PipelineCreationFeedbackFlags::VALID;
    if hit {
        flags |= vk::PipelineCreationFeedbackFlags::APPLICATION_PIPELINE_CACHE_HIT;
    }
    let value = vk::PipelineCreationFeedback {
        flags,
        duration: took.as_nanos().min(u128::from(u64::MAX)) as u64,
    };
    // SAFETY: pPipelineCreationFeedback is a valid output per the spec; the stage array holds
    // pipelineStageCreationFeedbackCount elements (one stage for a compute pipeline).
    unsafe {
        if !fb.p_pipeline_creation_feedback.is_null() {
            fb.p_pipeline_creation_feedback.write(value);
        }
        if fb.pipeline_stage_creation_feedback_count >= 1
            && !fb.p_pipeline_stage_creation_feedbacks.is_null()
        {
            fb.p_pipeline_stage_creation_feedbacks.write(value);
        }
    }
}

/// The stage's subgroup-size rule (VK_EXT_subgroup_size_control, the same order as Mesa's
/// common Vulkan runtime): a required size from
/// `VkPipelineShaderStageRequiredSubgroupSizeCreateInfo` (8, 16 or 32; the kernel is compiled
/// at exactly that SIMD width); the width policy's choice with `ALLOW_VARYING_SUBGROUP_SIZE` or
/// for a module of SPIR-V 1.6 or later (where the size may vary by default);
/// `REQUIRE_FULL_SUBGROUPS` alone: the reported size as the width, so every subgroup is a full
/// 32-wide thread (the application makes the group's x size a multiple of it); otherwise the
/// reported size is an API constant and the width is the policy's (docs/subgroups.md).
fn subgroup_width(
    stage: &vk::PipelineShaderStageCreateInfo<'_>,
    spirv_version: u32,
) -> Result<SubgroupWidth> {
    // SAFETY: pNext is a valid chain per the spec.
    let req = unsafe {
        ffi::find_in_chain(
            stage.p_next,
            vk::StructureType::PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
        )
    };
    if let Some(p) = req {
        // SAFETY: the structure type says what `p` points to.
        let r = unsafe { &*p.cast::<vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo<'_>>() };
        let w = r.required_subgroup_size;
        if !ferrite_compiler::hw::GEN9.simd_widths.contains(&w) {
            return Err(DriverError::InvalidArgument(format!(
                "requiredSubgroupSize {w} (the device gives 8, 16 or 32)"
            )));
        }
        return Ok(SubgroupWidth::Required(w));
    }
    if stage
        .flags
        .contains(vk::PipelineShaderStageCreateFlags::ALLOW_VARYING_SUBGROUP_SIZE)
        || spirv_version >= 0x0001_0600
    {
        return Ok(SubgroupWidth::Varying);
    }
    if stage
        .flags
        .contains(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS)
    {
        return Ok(SubgroupWidth::Required(
            ferrite_compiler::hw::GEN9.subgroup_size,
        ));
    }
    Ok(SubgroupWidth::Reported)
}

fn create_one(
    core: &Core,
    cache: Option<&PipelineCache>,
    info: &vk::ComputePipelineCreateInfo<'_>,
) -> Result<Pipeline> {
    let stage = &info.stage;
    if stage.stage != vk::ShaderStageFlags::COMPUTE {
        return Err(DriverError::InvalidArgument("stage is not COMPUTE".into()));
    }
    let module = core.shader_modules.get(stage.module.as_raw())?;
    let layout = core.pipeline_layouts.get(info.layout.as_raw())?;
    // SAFETY: pName is a NUL-terminated string per the spec.
    let entry = unsafe { ffi::cstr(stage.p_name, "pName") }?;
    let mut specialization = Vec::new();
    // SAFETY: pSpecializationInfo is null or valid per the spec.
    if let Some(si) = unsafe { ffi::read_opt(stage.p_specialization_info) } {
        // SAFETY: mapEntryCount entries and dataSize bytes per the spec.
        let (entries, data) = unsafe {
            (
                ffi::slice(si.p_map_entries, si.map_entry_count, "pMapEntries")?,
                ffi::slice(si.p_data.cast::<u8>(), si.data_size as u32, "pData")?,
            )
        };
        for e in entries {
            let end = e.offset as usize + e.size;
            let bytes = data.get(e.offset as usize..end).ok_or_else(|| {
                DriverError::InvalidArgument("specialization entry outside pData".into())
            })?;
            specialization.push((e.constant_id, bytes.to_vec()));
        }
    }
    let opts = CompileOptions {
        entry_point: entry.to_string(),
        specialization,
        bindings: layout.binding_slots(),
        push_constant_range: (0, layout.push_size),
        debug: compiler_debug(),
        dump_dir: std::env::var_os("FERRITE_DUMP_DIR").map(Into::into),
        keep_ir: info
            .flags
            .contains(vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR),
        // Word 1 of a SPIR-V module is its version (0x00MMmm00).
        subgroup: subgroup_width(stage, module.words.get(1).copied().unwrap_or(0))?,
    };
    let started = std::time::Instant::now();
    let dinfo = core.adapter.info;
    let key = cache_key(&module.words, &opts, &target(dinfo));
    // One directory per pipeline under FERRITE_DUMP_DIR, named by its cache key, so that an
    // application's many pipelines do not overwrite each other's dumps.
    let mut opts = opts;
    if let Some(dir) = opts.dump_dir.take() {
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        let sub = dir.join(format!("pipeline-{}", &hex[..16]));
        match std::fs::create_dir_all(&sub) {
            Ok(()) => opts.dump_dir = Some(sub),
            Err(e) => log::warn!("FERRITE_DUMP_DIR: cannot create {}: {e}", sub.display()),
        }
    }
    // An entry compiled without its assembly/IR text cannot serve a pipeline that wants them:
    // compile again (the new entry, with the text, replaces it).
    let cached = cache
        .and_then(|c| c.lock().get(&key).cloned())
        .filter(|k| !opts.keep_ir || !k.asm.is_empty());
    let hit = cached.is_some();
    let kernel = match cached {
        Some(k) => {
            if let Some(c) = cache {
                c.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            log::debug!("pipeline cache hit");
            k
        }
        None if info
            .flags
            .contains(vk::PipelineCreateFlags::FAIL_ON_PIPELINE_COMPILE_REQUIRED) =>
        {
            return Err(DriverError::PipelineCompileRequired);
        }
        None => {
            let k = Arc::new(compile(dinfo, &module.words, &opts)?);
            if let Some(c) = cache {
                c.lock().insert(key, k.clone());
            }
            k
        }
    };
    // SAFETY: the create info's pNext chain is valid per the spec.
    unsafe { write_feedback(info.p_next, hit, started.elapsed()) };
    Pipeline::upload(core, kernel, info.flags, layout)
}

impl Pipeline {
    /// A pipeline around a compiled kernel: its binary in the instruction heap and, when it
    /// spills, scratch for every hardware thread (user pipelines and the meta kernels).
    pub fn upload(
        core: &Core,
        kernel: Arc<Kernel>,
        flags: vk::PipelineCreateFlags,
        layout: Arc<PipelineLayout>,
    ) -> Result<Pipeline> {
        // The EUs prefetch past the end of a kernel: pad with zeros (a cache line is plenty).
        let mut code = kernel.binary.clone();
        code.resize(code.len() + 128, 0);
        let kernel_bo = GemBo::with_data(&core.adapter.drm, &core.va, Heap::Instruction, &code)?;
        let scratch = match kernel.scratch_size {
            0 => None,
            s => Some(GemBo::new(
                &core.adapter.drm,
                &core.va,
                Heap::Scratch,
                u64::from(s) * u64::from(total_threads(core.adapter.info)),
            )?),
        };
        Ok(Pipeline {
            kernel,
            flags,
            layout,
            kernel_bo,
            scratch,
        })
    }
}

pub(crate) unsafe extern "system" fn create_compute_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    p_infos: *const vk::ComputePipelineCreateInfo<'_>,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
    p_pipelines: *mut vk::Pipeline,
) -> vk::Result {
    ffi::result("vkCreateComputePipelines", || {
        // SAFETY: live device and `count` create infos per the spec.
        let (d, infos) = unsafe { (dev(device)?, ffi::slice(p_infos, count, "pCreateInfos")?) };
        let cache = if cache.is_null() {
            None
        } else {
            Some(d.pipeline_caches.get(cache.as_raw())?)
        };
        let mut first_error = None;
        for (i, info) in infos.iter().enumerate() {
            let handle = match create_one(d, cache.as_deref(), info) {
                Ok(p) => vk::Pipeline::from_raw(d.pipelines.insert(p)),
                Err(e) => {
                    // The wrapper logs the error returned (a compile error at error level, with
                    // the compiler's message); with several pipelines, say which failed.
                    if infos.len() > 1 {
                        log::log!(e.log_level(), "vkCreateComputePipelines: pipeline {i}: {e}");
                    }
                    first_error.get_or_insert(e);
                    vk::Pipeline::null()
                }
            };
            // SAFETY: pPipelines holds `count` elements per the spec.
            unsafe { ffi::write(p_pipelines.wrapping_add(i), handle, "pPipelines") }?;
            if handle.is_null()
                && info
                    .flags
                    .contains(vk::PipelineCreateFlags::EARLY_RETURN_ON_FAILURE)
            {
                // The rest are not created and must read VK_NULL_HANDLE.
                for j in i + 1..infos.len() {
                    // SAFETY: as above.
                    unsafe {
                        ffi::write(
                            p_pipelines.wrapping_add(j),
                            vk::Pipeline::null(),
                            "pPipelines",
                        )
                    }?;
                }
                break;
            }
        }
        match first_error {
            None => Ok(vk::Result::SUCCESS),
            Some(e) => Err(e),
        }
    })
}

crate::device::registry_destroys! {
    destroy_pipeline, "vkDestroyPipeline", vk::Pipeline => pipelines;
}

// ---- VK_KHR_pipeline_executable_properties ----

/// The one executable of a compute pipeline: name and description as anv writes them for a
/// compute shader ("compute", "SIMD16 compute shader").
fn executable_properties(k: &Kernel) -> (String, String) {
    ("compute".into(), format!("SIMD{} compute shader", k.simd))
}

/// The internal representations of a pipeline created with
/// CAPTURE_INTERNAL_REPRESENTATIONS: (name, description, NUL-less text).
fn internal_representations(k: &Kernel) -> Vec<(&'static str, &'static str, &str)> {
    if k.asm.is_empty() {
        return Vec::new();
    }
    vec![
        (
            "Ferrite IR",
            "Ferrite IR after the optimization passes, before the Gen9 back end",
            k.ir.as_str(),
        ),
        (
            "GEN Assembly",
            "Final GEN assembly for the generated shader binary",
            k.asm.as_str(),
        ),
    ]
}

/// The pipeline of a `VkPipelineExecutableInfoKHR`, with the index checked.
fn executable_pipeline(
    d: &Device,
    info: &vk::PipelineExecutableInfoKHR<'_>,
) -> Result<Arc<Pipeline>> {
    let p = d.pipelines.get(info.pipeline.as_raw())?;
    if info.executable_index != 0 {
        return Err(DriverError::InvalidArgument(format!(
            "executableIndex {} (a compute pipeline has one executable)",
            info.executable_index
        )));
    }
    Ok(p)
}

/// Writes the two-call idiom's count for `total` items and returns how many of them to write
/// (None: only the count was asked).
///
/// # Safety
/// `p_count` must be valid for reads and writes.
unsafe fn out_count(p_count: *mut u32, has_items: bool, total: usize) -> Result<Option<usize>> {
    if p_count.is_null() {
        return Err(DriverError::NullPointer("pCount"));
    }
    if !has_items {
        // SAFETY: non-null and valid by the caller's contract.
        unsafe { p_count.write(total as u32) };
        return Ok(None);
    }
    // SAFETY: as above.
    let n = (unsafe { p_count.read() } as usize).min(total);
    // SAFETY: as above.
    unsafe { p_count.write(n as u32) };
    Ok(Some(n))
}

pub(crate) unsafe extern "system" fn get_pipeline_executable_properties(
    device: vk::Device,
    p_pipeline_info: *const vk::PipelineInfoKHR<'_>,
    p_count: *mut u32,
    p_props: *mut vk::PipelineExecutablePropertiesKHR<'_>,
) -> vk::Result {
    ffi::result("vkGetPipelineExecutablePropertiesKHR", || {
        // SAFETY: live device and valid pipeline info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_pipeline_info, "pPipelineInfo")?) };
        let p = d.pipelines.get(info.pipeline.as_raw())?;
        // SAFETY: count pointer valid per the spec.
        let Some(n) = (unsafe { out_count(p_count, !p_props.is_null(), 1) })? else {
            return Ok(vk::Result::SUCCESS);
        };
        if n == 0 {
            return Ok(vk::Result::INCOMPLETE);
        }
        let (name, description) = executable_properties(&p.kernel);
        // SAFETY: p_props holds at least n >= 1 structures per the spec; only the output
        // members are written (sType/pNext stay as the application set them).
        let out = unsafe { &mut *p_props };
        out.stages = vk::ShaderStageFlags::COMPUTE;
        out.name = ffi::name_array(&name);
        out.description = ffi::name_array(&description);
        out.subgroup_size = p.kernel.simd;
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn get_pipeline_executable_statistics(
    device: vk::Device,
    p_info: *const vk::PipelineExecutableInfoKHR<'_>,
    p_count: *mut u32,
    p_stats: *mut vk::PipelineExecutableStatisticKHR<'_>,
) -> vk::Result {
    ffi::result("vkGetPipelineExecutableStatisticsKHR", || {
        // SAFETY: live device and valid executable info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pExecutableInfo")?) };
        let p = executable_pipeline(d, info)?;
        let stats: &[Statistic] = if p
            .flags
            .contains(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR)
        {
            STATISTICS
        } else {
            log::warn!(
                "vkGetPipelineExecutableStatisticsKHR: the pipeline was created without \
                 VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR: no statistics"
            );
            &[]
        };
        // SAFETY: count pointer valid per the spec.
        let Some(n) = (unsafe { out_count(p_count, !p_stats.is_null(), stats.len()) })? else {
            return Ok(vk::Result::SUCCESS);
        };
        for (i, s) in stats.iter().take(n).enumerate() {
            // SAFETY: p_stats holds at least n structures per the spec; only output members
            // are written.
            let out = unsafe { &mut *p_stats.add(i) };
            out.name = ffi::name_array(s.name);
            out.description = ffi::name_array(s.description);
            out.format = vk::PipelineExecutableStatisticFormatKHR::UINT64;
            out.value = vk::PipelineExecutableStatisticValueKHR {
                u64: (s.value)(&p.kernel),
            };
        }
        Ok(if n < stats.len() {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        })
    })
}

pub(crate) unsafe extern "system" fn get_pipeline_executable_internal_representations(
    device: vk::Device,
    p_info: *const vk::PipelineExecutableInfoKHR<'_>,
    p_count: *mut u32,
    p_reps: *mut vk::PipelineExecutableInternalRepresentationKHR<'_>,
) -> vk::Result {
    ffi::result("vkGetPipelineExecutableInternalRepresentationsKHR", || {
        // SAFETY: live device and valid executable info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pExecutableInfo")?) };
        let p = executable_pipeline(d, info)?;
        let reps = if p
            .flags
            .contains(vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR)
        {
            internal_representations(&p.kernel)
        } else {
            log::warn!(
                "vkGetPipelineExecutableInternalRepresentationsKHR: the pipeline was created \
                 without VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR: none"
            );
            Vec::new()
        };
        // SAFETY: count pointer valid per the spec.
        let Some(n) = (unsafe { out_count(p_count, !p_reps.is_null(), reps.len()) })? else {
            return Ok(vk::Result::SUCCESS);
        };
        let mut incomplete = n < reps.len();
        for (i, (name, description, text)) in reps.iter().take(n).enumerate() {
            // SAFETY: p_reps holds at least n structures per the spec; only output members
            // are written.
            let out = unsafe { &mut *p_reps.add(i) };
            out.name = ffi::name_array(name);
            out.description = ffi::name_array(description);
            out.is_text = vk::TRUE;
            let needed = text.len() + 1;
            if out.p_data.is_null() {
                out.data_size = needed;
                continue;
            }
            // A short buffer gets as much of the text as fits, still NUL-terminated.
            let written = out.data_size.min(needed);
            if written > 0 {
                // SAFETY: pData holds dataSize >= written bytes per the spec.
                let dst =
                    unsafe { std::slice::from_raw_parts_mut(out.p_data.cast::<u8>(), written) };
                dst[..written - 1].copy_from_slice(&text.as_bytes()[..written - 1]);
                dst[written - 1] = 0;
            }
            out.data_size = written;
            incomplete |= written < needed;
        }
        Ok(if incomplete {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_subgroup_sizes_outside_the_simd_widths_are_refused() {
        let mut r = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
            .required_subgroup_size(4);
        let stage = vk::PipelineShaderStageCreateInfo::default().push_next(&mut r);
        assert!(matches!(
            subgroup_width(&stage, 0x0001_0300),
            Err(DriverError::InvalidArgument(_))
        ));
        let mut r = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
            .required_subgroup_size(16);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .flags(vk::PipelineShaderStageCreateFlags::ALLOW_VARYING_SUBGROUP_SIZE)
            .push_next(&mut r);
        assert_eq!(
            subgroup_width(&stage, 0x0001_0300).unwrap(),
            SubgroupWidth::Required(16)
        );
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .flags(vk::PipelineShaderStageCreateFlags::ALLOW_VARYING_SUBGROUP_SIZE);
        assert_eq!(
            subgroup_width(&stage, 0x0001_0300).unwrap(),
            SubgroupWidth::Varying
        );
        let stage = vk::PipelineShaderStageCreateInfo::default();
        assert_eq!(
            subgroup_width(&stage, 0x0001_0300).unwrap(),
            SubgroupWidth::Reported
        );
        // SPIR-V 1.6 varies by default; full subgroups alone keep the reported size as width.
        assert_eq!(
            subgroup_width(&stage, 0x0001_0600).unwrap(),
            SubgroupWidth::Varying
        );
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .flags(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS);
        assert_eq!(
            subgroup_width(&stage, 0x0001_0300).unwrap(),
            SubgroupWidth::Required(32)
        );
        assert_eq!(
            subgroup_width(&stage, 0x0001_0600).unwrap(),
            SubgroupWidth::Varying
        );
        let stage = vk::PipelineShaderStageCreateInfo::default().flags(
            vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS
                | vk::PipelineShaderStageCreateFlags::ALLOW_VARYING_SUBGROUP_SIZE,
        );
        assert_eq!(
            subgroup_width(&stage, 0x0001_0300).unwrap(),
            SubgroupWidth::Varying
        );
    }

    fn sample() -> Kernel {
        Kernel {
            binary: vec![1, 2, 3, 4],
            simd: 16,
            local_size: [64, 1, 1],
            layout: CurbeLayout {
                push_regs: 1,
                size_btis: vec![2],
                push_bti: Some(3),
            },
            slm_size: 256,
            scratch_size: 0,
            uses_barrier: true,
            btis: vec![0, 2],
            threads_per_group: 4,
            stats: Statistics {
                instructions: 42,
                cycles: 1 << 40,
                compile_time_us: 7,
                grf_used: 20,
                ..Default::default()
            },
            asm: "mov".into(),
            ir: "ir".into(),
            bindings: Vec::new(),
            table_descriptors: vec![(251, 4), (300, 1)],
        }
    }

    #[test]
    fn kernel_info_round_trips_and_rejects_truncation() {
        let k = sample();
        let s = serialize_kernel(&k);
        assert_eq!(deserialize_kernel(&s), Some(k));
        assert_eq!(deserialize_kernel(&s[..s.len() - 1]), None);
    }

    #[test]
    fn kernel_info_without_push_surface_round_trips() {
        let mut k = sample();
        k.layout.size_btis = vec![];
        k.layout.push_bti = None;
        assert_eq!(deserialize_kernel(&serialize_kernel(&k)), Some(k));
    }

    #[test]
    fn every_reported_statistic_has_a_description() {
        let names: Vec<_> = sample().statistics().iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names[..7],
            [
                "Instruction Count",
                "SEND Count",
                "Loop Count",
                "Cycle Count",
                "Spill Count",
                "Fill Count",
                "Max dispatch width"
            ],
            "anv's order and names"
        );
        for s in STATISTICS {
            assert!(
                !s.description.is_empty() && s.description.len() < vk::MAX_DESCRIPTION_SIZE,
                "{}",
                s.name
            );
        }
    }

    #[test]
    fn internal_representations_only_when_captured() {
        let k = sample();
        let reps = internal_representations(&k);
        assert_eq!(
            reps.iter().map(|r| r.0).collect::<Vec<_>>(),
            ["Ferrite IR", "GEN Assembly"]
        );
        assert_eq!(reps[1].2, "mov");
        let bare = Kernel {
            asm: String::new(),
            ir: String::new(),
            ..k
        };
        assert!(internal_representations(&bare).is_empty());
        assert_eq!(
            executable_properties(&bare),
            ("compute".to_string(), "SIMD16 compute shader".to_string())
        );
    }

    #[test]
    fn cache_key_depends_on_code_and_options() {
        let t = Target::gen9();
        let o = CompileOptions::default();
        let k1 = cache_key(&[1, 2, 3], &o, &t);
        assert_eq!(k1, cache_key(&[1, 2, 3], &o, &t));
        assert_ne!(k1, cache_key(&[1, 2, 4], &o, &t));
        let o2 = CompileOptions {
            specialization: vec![(0, vec![1, 0, 0, 0])],
            ..Default::default()
        };
        assert_ne!(k1, cache_key(&[1, 2, 3], &o2, &t));
    }

    #[test]
    fn layout_flattens_sets_in_order() {
        let s0 = Arc::new(
            SetLayout::new(vec![
                (0, vk::DescriptorType::STORAGE_BUFFER, 1),
                (2, vk::DescriptorType::UNIFORM_BUFFER, 2),
            ])
            .unwrap(),
        );
        let s1 =
            Arc::new(SetLayout::new(vec![(1, vk::DescriptorType::STORAGE_BUFFER, 1)]).unwrap());
        let l = PipelineLayout::new(vec![s0, s1], &[]).unwrap();
        let slots = l.binding_slots();
        let bti = |set, binding| {
            slots
                .iter()
                .find(|s| s.set == set && s.binding == binding)
                .unwrap()
                .bti
        };
        assert_eq!((bti(0, 0), bti(0, 2), bti(1, 1)), (0, 1, 3));
        assert_eq!(l.slot_of_bti(2), Some((0, 2)));
        assert_eq!(l.slot_of_bti(3), Some((1, 0)));
        assert_eq!(l.slot_of_bti(4), None);
    }

    /// Images, texel buffers and samplers take slots before every buffer, so buffers past
    /// the binding table never push them out of it.
    #[test]
    fn layout_puts_binding_table_descriptors_first() {
        let ssbo = vk::DescriptorType::STORAGE_BUFFER;
        let s0 = Arc::new(SetLayout::new(vec![(0, ssbo, 300)]).unwrap());
        let s1 = Arc::new(
            SetLayout::new(vec![
                (0, ssbo, 1),
                (1, vk::DescriptorType::STORAGE_IMAGE, 2),
            ])
            .unwrap(),
        );
        let l = PipelineLayout::new(vec![s0, s1.clone()], &[]).unwrap();
        let slots = l.binding_slots();
        let bti = |set, binding| {
            slots
                .iter()
                .find(|s| s.set == set && s.binding == binding)
                .unwrap()
                .bti
        };
        assert_eq!((bti(1, 1), bti(0, 0), bti(1, 0)), (0, 2, 302));
        assert_eq!(l.slot_of_bti(1), Some((1, 2)));
        assert_eq!(l.slot_of_bti(2), Some((0, 0)));
        assert_eq!(l.slot_of_bti(301), Some((0, 299)));
        assert_eq!(l.slot_of_bti(302), Some((1, 0)));
        assert_eq!(l.slot_of_bti(303), None);
        let images = Arc::new(
            SetLayout::new(vec![(0, vk::DescriptorType::SAMPLED_IMAGE, MAX_BTI + 1)]).unwrap(),
        );
        assert!(PipelineLayout::new(vec![images], &[]).is_err());
        let many = Arc::new(SetLayout::new(vec![(0, ssbo, MAX_DESCRIPTORS)]).unwrap());
        assert!(PipelineLayout::new(vec![many.clone()], &[]).is_ok());
        assert!(PipelineLayout::new(vec![many, s1], &[]).is_err());
    }
}
