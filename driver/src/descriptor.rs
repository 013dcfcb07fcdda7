//! Descriptor set layouts, pools and sets (storage and uniform buffers, and their dynamic
//! variants), vkUpdateDescriptorSets.
//!
//! A set is a list of buffer descriptors, one slot per array element, bindings in increasing
//! order; the pipeline layout turns (set, slot) into a binding-table index (dispatch contract).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ash::vk;
use ash::vk::Handle;

use crate::device::{dev, Core, Device};
use crate::error::{DriverError, Result};
use crate::ffi;
use crate::memory::Memory;
use crate::sampler::Sampler;

/// One binding of a set layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutBinding {
    pub binding: u32,
    pub ty: vk::DescriptorType,
    pub count: u32,
    /// Index of its first element among the set's slots.
    pub first: u32,
}

impl LayoutBinding {
    pub fn is_dynamic(&self) -> bool {
        matches!(
            self.ty,
            vk::DescriptorType::STORAGE_BUFFER_DYNAMIC | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
        )
    }
}

#[derive(Debug)]
pub struct SetLayout {
    /// In increasing binding order.
    pub bindings: Vec<LayoutBinding>,
    /// Number of slots (descriptors) in a set.
    pub slots: u32,
    /// Immutable samplers: (slot, sampler), set by vkCreateDescriptorSetLayout.
    pub immutable: Vec<(u32, Arc<Sampler>)>,
    /// VkDescriptorSetLayoutBindingFlagsCreateInfo: the flags of each binding that has any
    /// (see [`SetLayout::set_binding_flags`]).
    pub binding_flags: Vec<(u32, vk::DescriptorBindingFlags)>,
    /// Inline uniform blocks: one slot each, bytes in the set's own object (inline_uniform.rs).
    pub inline: Vec<crate::inline_uniform::InlineBlock>,
}

impl SetLayout {
    pub fn new(mut raw: Vec<(u32, vk::DescriptorType, u32)>) -> Result<SetLayout> {
        let blocks = crate::inline_uniform::take_blocks(&mut raw)?;
        raw.sort_by_key(|b| b.0);
        let mut bindings = Vec::new();
        let mut next = 0u32;
        for (binding, ty, count) in raw {
            if !matches!(
                ty,
                vk::DescriptorType::STORAGE_BUFFER
                    | vk::DescriptorType::UNIFORM_BUFFER
                    | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
                    | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
                    | vk::DescriptorType::STORAGE_IMAGE
                    | vk::DescriptorType::STORAGE_TEXEL_BUFFER
                    | vk::DescriptorType::UNIFORM_TEXEL_BUFFER
                    | vk::DescriptorType::SAMPLER
                    | vk::DescriptorType::SAMPLED_IMAGE
                    | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
                    | vk::DescriptorType::INLINE_UNIFORM_BLOCK
            ) {
                return Err(DriverError::NotImplemented(
                    "descriptor types other than buffers, storage and sampled images, samplers \
                     and storage texel buffers",
                ));
            }
            if bindings
                .iter()
                .any(|b: &LayoutBinding| b.binding == binding)
            {
                return Err(DriverError::InvalidArgument(format!(
                    "binding {binding} appears twice"
                )));
            }
            bindings.push(LayoutBinding {
                binding,
                ty,
                count,
                first: next,
            });
            next = next.saturating_add(count);
        }
        // The binding table bounds what one stage reaches: the pipeline layout checks that
        // over all of its sets (pipeline.rs).
        let max = crate::physical::MAX_PER_SET_DESCRIPTORS;
        if next > max {
            return Err(DriverError::InvalidArgument(format!(
                "{next} descriptors in a set exceed maxPerSetDescriptors ({max})"
            )));
        }
        Ok(SetLayout {
            bindings,
            slots: next,
            immutable: Vec::new(),
            binding_flags: Vec::new(),
            inline: crate::inline_uniform::place(&blocks),
        })
    }

    /// Records the binding flags of VkDescriptorSetLayoutBindingFlagsCreateInfo (one per
    /// binding of the create info, in its order) after checking what the spec requires of
    /// VARIABLE_DESCRIPTOR_COUNT: only on the binding with the largest number, never on a
    /// dynamic buffer. PARTIALLY_BOUND needs nothing (a descriptor never written is a NULL
    /// surface or a zero table entry); the UPDATE_AFTER_BIND flags are kept for the command
    /// recorder.
    pub fn set_binding_flags(
        &mut self,
        flags: impl IntoIterator<Item = (u32, vk::DescriptorBindingFlags)>,
    ) -> Result<()> {
        let last = self.bindings.last().map(|b| b.binding);
        for (binding, f) in flags {
            if f.is_empty() {
                continue;
            }
            let b = self.binding(binding).copied().ok_or_else(|| {
                DriverError::InvalidArgument(format!("binding flags for absent binding {binding}"))
            })?;
            if f.contains(vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT)
                && (Some(binding) != last || b.is_dynamic())
            {
                return Err(DriverError::InvalidArgument(format!(
                    "VARIABLE_DESCRIPTOR_COUNT on binding {binding}: only the last binding,                      and not a dynamic buffer, may have a variable count"
                )));
            }
            self.binding_flags.push((binding, f));
        }
        Ok(())
    }

    /// The flags of `binding` (empty when none were given).
    pub fn flags(&self, binding: u32) -> vk::DescriptorBindingFlags {
        self.binding_flags
            .iter()
            .find(|(b, _)| *b == binding)
            .map_or(vk::DescriptorBindingFlags::empty(), |(_, f)| *f)
    }

    /// The binding whose descriptor count a set chooses at allocation
    /// (VARIABLE_DESCRIPTOR_COUNT), if any: always the last one.
    pub fn variable_binding(&self) -> Option<&LayoutBinding> {
        self.bindings.last().filter(|b| {
            self.flags(b.binding)
                .contains(vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT)
        })
    }

    pub fn binding(&self, binding: u32) -> Option<&LayoutBinding> {
        self.bindings.iter().find(|b| b.binding == binding)
    }

    /// Slots of dynamic descriptors, in the order dynamic offsets are given.
    pub fn dynamic_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.bindings
            .iter()
            .filter(|b| b.is_dynamic())
            .flat_map(|b| b.first..b.first + b.count)
    }

    /// The (binding, array element) of slot `slot`.
    pub fn slot_of(&self, binding: u32, element: u32) -> Option<u32> {
        let b = self.binding(binding)?;
        (element < b.count).then_some(b.first + element)
    }
}

/// A written descriptor: a buffer range, or an image/texel-buffer view whose surface state
/// its view object built (`surface`; `offset`/`range` then give the bytes it covers).
#[derive(Clone)]
pub struct BufferDesc {
    pub memory: Arc<Memory>,
    /// Byte offset of the range in the memory object.
    pub offset: u64,
    pub range: u64,
    /// The RENDER_SURFACE_STATE of an image or texel-buffer view (driver/src/image.rs).
    pub surface: Option<Arc<[u32]>>,
    /// A storage view's surface state in its own format where `surface` holds a lowered
    /// one: the entry of a write-only binding (`BindingKind::StorageImageWriteOnly`).
    pub write_surface: Option<Arc<[u32]>>,
}

impl BufferDesc {
    pub fn address(&self) -> u64 {
        self.memory.va + self.offset
    }
}

pub struct DescriptorSet {
    pub layout: Arc<SetLayout>,
    pub slots: Mutex<Vec<Option<BufferDesc>>>,
    /// The sampler of each SAMPLER / COMBINED_IMAGE_SAMPLER slot (None elsewhere).
    pub samplers: Mutex<Vec<Option<Arc<Sampler>>>>,
    /// The descriptor count of the layout's variable-count binding in this set
    /// (VkDescriptorSetVariableDescriptorCountAllocateInfo); None without one. The slots stay
    /// sized for the layout's count, so elements past it read as NULL descriptors.
    pub variable_count: Option<u32>,
    pool: u64,
    /// Writes so far: a command buffer's built batch is current while this is unchanged
    /// (update-after-bind sets may be written after they were bound; cmd.rs).
    writes: AtomicU64,
}

impl DescriptorSet {
    /// A set of `layout` from pool `pool` (0: outside any pool, the set a
    /// vkCmdPushDescriptorSetKHR builds): no descriptors written, the layout's immutable
    /// samplers in place.
    pub fn new(layout: Arc<SetLayout>, pool: u64) -> DescriptorSet {
        let slots = Mutex::new(vec![None; layout.slots as usize]);
        let mut samplers = vec![None; layout.slots as usize];
        for (slot, s) in &layout.immutable {
            samplers[*slot as usize] = Some(s.clone());
        }
        let variable_count = layout.variable_binding().map(|b| b.count);
        DescriptorSet {
            layout,
            slots,
            samplers: Mutex::new(samplers),
            variable_count,
            pool,
            writes: AtomicU64::new(0),
        }
    }

    /// Sets the variable-count binding's descriptor count of a new set (0 when the
    /// allocation gave none, as the spec says); refuses a count above the layout's.
    pub fn with_variable_count(mut self, count: u32) -> Result<DescriptorSet> {
        let Some(b) = self.layout.variable_binding() else {
            return Ok(self);
        };
        if count > b.count {
            return Err(DriverError::InvalidArgument(format!(
                "variable descriptor count {count} exceeds binding {}'s {}",
                b.binding, b.count
            )));
        }
        self.variable_count = Some(count);
        Ok(self)
    }

    /// A set outside any pool: the set a vkCmdPushDescriptorSetKHR builds.
    pub fn detached(layout: Arc<SetLayout>) -> DescriptorSet {
        DescriptorSet::new(layout, 0)
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<BufferDesc>>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes consecutive descriptors from (`binding`, `element`) on; writes past the end of
    /// a binding continue into the next bindings (vkUpdateDescriptorSets' rule, shared by the
    /// other ways of writing a set).
    pub fn write(
        &self,
        binding: u32,
        element: u32,
        ty: vk::DescriptorType,
        descs: Vec<Written>,
    ) -> Result<()> {
        self.count_write();
        let mut slots = self.lock();
        let mut samplers = self.lock_samplers();
        let mut binding = binding;
        let mut element = element;
        for w in descs {
            let mut lb = self.layout.binding(binding).copied();
            while let Some(b) = lb.filter(|b| element >= b.count) {
                element -= b.count;
                binding = b.binding + 1;
                lb = self
                    .layout
                    .bindings
                    .iter()
                    .find(|x| x.binding >= binding)
                    .copied();
                if let Some(n) = lb {
                    binding = n.binding;
                }
            }
            let lb = lb.ok_or_else(|| {
                DriverError::InvalidArgument(format!("no binding {binding} in the set"))
            })?;
            if lb.ty != ty {
                return Err(DriverError::InvalidArgument(format!(
                    "binding {} is {:?}, write is {:?}",
                    lb.binding, lb.ty, ty
                )));
            }
            if self.layout.variable_binding().map(|b| b.binding) == Some(lb.binding)
                && Some(element) >= self.variable_count
            {
                return Err(DriverError::InvalidArgument(format!(
                    "element {element} of binding {} is past the set's variable descriptor                      count ({})",
                    lb.binding,
                    self.variable_count.unwrap_or(0)
                )));
            }
            let slot = lb.first + element;
            slots[slot as usize] = w.desc;
            // An immutable sampler stays; the write's sampler is ignored (spec).
            if !self.is_immutable(slot) {
                samplers[slot as usize] = w.sampler;
            }
            element += 1;
        }
        Ok(())
    }

    /// How many times descriptors were written into the set (any write counts).
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Acquire)
    }

    /// Counts one write: every path that changes the slots calls it.
    pub fn count_write(&self) {
        self.writes.fetch_add(1, Ordering::AcqRel);
    }

    pub fn lock_samplers(&self) -> std::sync::MutexGuard<'_, Vec<Option<Arc<Sampler>>>> {
        self.samplers.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_immutable(&self, slot: u32) -> bool {
        self.layout.immutable.iter().any(|(s, _)| *s == slot)
    }
}

pub struct DescriptorPool {
    max_sets: u32,
    can_free: bool,
    sets: Mutex<Vec<u64>>,
}

crate::device::registry_creates! {
    create_descriptor_set_layout, "vkCreateDescriptorSetLayout", DescriptorSetLayoutCreateInfo => set_layouts, DescriptorSetLayout, "pSetLayout", new_set_layout;
}

/// The object vkCreateDescriptorSetLayout makes of its create info.
fn new_set_layout(d: &Device, info: &vk::DescriptorSetLayoutCreateInfo<'_>) -> Result<SetLayout> {
    // SAFETY: bindingCount valid structures.
    let raw = unsafe { ffi::slice(info.p_bindings, info.binding_count, "pBindings") }?;
    let mut layout = SetLayout::new(
        raw.iter()
            .map(|b| (b.binding, b.descriptor_type, b.descriptor_count))
            .collect(),
    )?;
    // SAFETY: a valid create info's pNext chain per the spec.
    let flags = unsafe { binding_flags(info, raw) }?;
    layout.set_binding_flags(flags)?;
    for b in raw.iter().filter(|b| {
        !b.p_immutable_samplers.is_null()
            && matches!(
                b.descriptor_type,
                vk::DescriptorType::SAMPLER | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
            )
    }) {
        // SAFETY: descriptorCount samplers when pImmutableSamplers is not NULL.
        let samplers = unsafe {
            ffi::slice(
                b.p_immutable_samplers,
                b.descriptor_count,
                "pImmutableSamplers",
            )
        }?;
        for (i, s) in samplers.iter().enumerate() {
            let slot = layout.slot_of(b.binding, i as u32).ok_or_else(|| {
                DriverError::InvalidArgument("immutable sampler outside its binding".into())
            })?;
            layout.immutable.push((slot, d.samplers.get(s.as_raw())?));
        }
    }
    Ok(layout)
}

/// The (binding, flags) pairs of a VkDescriptorSetLayoutBindingFlagsCreateInfo in `info`'s
/// chain (none without one).
///
/// # Safety
/// `info`'s pNext chain must be valid, and `raw` its bindings.
unsafe fn binding_flags(
    info: &vk::DescriptorSetLayoutCreateInfo<'_>,
    raw: &[vk::DescriptorSetLayoutBinding<'_>],
) -> Result<Vec<(u32, vk::DescriptorBindingFlags)>> {
    // SAFETY: a valid chain per the caller.
    let Some(p) = (unsafe {
        ffi::find_in_chain(
            info.p_next,
            vk::StructureType::DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO,
        )
    }) else {
        return Ok(Vec::new());
    };
    // SAFETY: the structure's sType names this type.
    let f = unsafe { &*p.cast::<vk::DescriptorSetLayoutBindingFlagsCreateInfo<'_>>() };
    if f.binding_count == 0 {
        return Ok(Vec::new());
    }
    if f.binding_count as usize != raw.len() {
        return Err(DriverError::InvalidArgument(format!(
            "{} binding flags for {} bindings",
            f.binding_count,
            raw.len()
        )));
    }
    // SAFETY: bindingCount flags per the spec.
    let flags = unsafe { ffi::slice(f.p_binding_flags, f.binding_count, "pBindingFlags") }?;
    Ok(raw
        .iter()
        .map(|b| b.binding)
        .zip(flags.iter().copied())
        .collect())
}

crate::device::registry_destroys! {
    destroy_descriptor_set_layout, "vkDestroyDescriptorSetLayout", vk::DescriptorSetLayout => set_layouts;
}

crate::device::registry_creates! {
    create_descriptor_pool, "vkCreateDescriptorPool", DescriptorPoolCreateInfo => descriptor_pools, DescriptorPool, "pDescriptorPool", new_descriptor_pool;
}

/// The object vkCreateDescriptorPool makes of its create info.
fn new_descriptor_pool(
    _d: &Device,
    info: &vk::DescriptorPoolCreateInfo<'_>,
) -> Result<DescriptorPool> {
    Ok(DescriptorPool {
        max_sets: info.max_sets,
        can_free: info
            .flags
            .contains(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET),
        sets: Mutex::new(Vec::new()),
    })
}

fn reset_pool(d: &Device, pool: &DescriptorPool) {
    let ids: Vec<u64> = std::mem::take(&mut *pool.sets.lock().unwrap_or_else(|e| e.into_inner()));
    for id in ids {
        let _ = d.descriptor_sets.remove(id);
    }
}

pub(crate) unsafe extern "system" fn destroy_descriptor_pool(
    device: vk::Device,
    pool: vk::DescriptorPool,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    ffi::void("vkDestroyDescriptorPool", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        if let Some(p) = d.descriptor_pools.remove(pool.as_raw())? {
            reset_pool(d, &p);
        }
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn reset_descriptor_pool(
    device: vk::Device,
    pool: vk::DescriptorPool,
    _flags: vk::DescriptorPoolResetFlags,
) -> vk::Result {
    ffi::result("vkResetDescriptorPool", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        let p = d.descriptor_pools.get(pool.as_raw())?;
        reset_pool(d, &p);
        Ok(vk::Result::SUCCESS)
    })
}

pub(crate) unsafe extern "system" fn allocate_descriptor_sets(
    device: vk::Device,
    p_info: *const vk::DescriptorSetAllocateInfo<'_>,
    p_sets: *mut vk::DescriptorSet,
) -> vk::Result {
    ffi::result("vkAllocateDescriptorSets", || {
        // SAFETY: live device and valid allocate info per the spec.
        let (d, info) = unsafe { (dev(device)?, ffi::read(p_info, "pAllocateInfo")?) };
        // SAFETY: descriptorSetCount layouts.
        let layouts =
            unsafe { ffi::slice(info.p_set_layouts, info.descriptor_set_count, "pSetLayouts") }?;
        let pool = d.descriptor_pools.get(info.descriptor_pool.as_raw())?;
        let mut sets = pool.sets.lock().unwrap_or_else(|e| e.into_inner());
        if sets.len() + layouts.len() > pool.max_sets as usize {
            return Ok(vk::Result::ERROR_OUT_OF_POOL_MEMORY);
        }
        // SAFETY: a valid allocate info's pNext chain per the spec.
        let counts = unsafe { variable_counts(info) }?;
        let mut made = Vec::new();
        for (i, l) in layouts.iter().enumerate() {
            let layout = d.set_layouts.get(l.as_raw())?;
            let set = DescriptorSet::new(layout, info.descriptor_pool.as_raw());
            // Without the structure (or with descriptorSetCount 0) the count is 0 (spec).
            let set = set.with_variable_count(counts.get(i).copied().unwrap_or(0));
            let set = match set {
                Ok(s) => s,
                Err(e) => {
                    for id in made {
                        let _ = d.descriptor_sets.remove(id);
                    }
                    return Err(e);
                }
            };
            if let Err(e) = crate::inline_uniform::attach(d, &set) {
                for id in made {
                    let _ = d.descriptor_sets.remove(id);
                }
                return Err(e);
            }
            made.push(d.descriptor_sets.insert(set));
        }
        for (i, &id) in made.iter().enumerate() {
            // SAFETY: pDescriptorSets holds descriptorSetCount elements per the spec.
            unsafe {
                ffi::write(
                    p_sets.wrapping_add(i),
                    vk::DescriptorSet::from_raw(id),
                    "pDescriptorSets",
                )
            }?;
        }
        sets.extend(made);
        Ok(vk::Result::SUCCESS)
    })
}

/// The counts of a VkDescriptorSetVariableDescriptorCountAllocateInfo in `info`'s chain, one
/// per set (empty without one).
///
/// # Safety
/// `info`'s pNext chain must be valid.
unsafe fn variable_counts(info: &vk::DescriptorSetAllocateInfo<'_>) -> Result<Vec<u32>> {
    // SAFETY: a valid chain per the caller.
    let Some(p) = (unsafe {
        ffi::find_in_chain(
            info.p_next,
            vk::StructureType::DESCRIPTOR_SET_VARIABLE_DESCRIPTOR_COUNT_ALLOCATE_INFO,
        )
    }) else {
        return Ok(Vec::new());
    };
    // SAFETY: the structure's sType names this type.
    let v = unsafe { &*p.cast::<vk::DescriptorSetVariableDescriptorCountAllocateInfo<'_>>() };
    // SAFETY: descriptorSetCount counts per the spec.
    let counts = unsafe {
        ffi::slice(
            v.p_descriptor_counts,
            v.descriptor_set_count,
            "pDescriptorCounts",
        )
    }?;
    Ok(counts.to_vec())
}

pub(crate) unsafe extern "system" fn free_descriptor_sets(
    device: vk::Device,
    pool: vk::DescriptorPool,
    count: u32,
    p_sets: *const vk::DescriptorSet,
) -> vk::Result {
    ffi::result("vkFreeDescriptorSets", || {
        // SAFETY: live device and `count` handles per the spec.
        let (d, sets) = unsafe { (dev(device)?, ffi::slice(p_sets, count, "pDescriptorSets")?) };
        let p = d.descriptor_pools.get(pool.as_raw())?;
        if !p.can_free {
            return Err(DriverError::InvalidArgument(
                "pool was not created with FREE_DESCRIPTOR_SET".into(),
            ));
        }
        let mut owned = p.sets.lock().unwrap_or_else(|e| e.into_inner());
        for s in sets.iter().filter(|s| !s.is_null()) {
            let set = d.descriptor_sets.get(s.as_raw())?;
            if set.pool != pool.as_raw() {
                return Err(DriverError::InvalidArgument(
                    "descriptor set from another pool".into(),
                ));
            }
            d.descriptor_sets.remove(s.as_raw())?;
            owned.retain(|&id| id != s.as_raw());
        }
        Ok(vk::Result::SUCCESS)
    })
}

fn buffer_desc(d: &Core, info: &vk::DescriptorBufferInfo) -> Result<Option<BufferDesc>> {
    if info.buffer.is_null() {
        return Ok(None);
    }
    let buf = d.buffers.get(info.buffer.as_raw())?;
    let (memory, base, range) = buf.resolve_range(info.offset, info.range, "descriptor")?;
    let max = u64::from(crate::physical::MAX_BUFFER_RANGE);
    if range > max {
        return Err(DriverError::InvalidArgument(format!(
            "descriptor range {range} exceeds maxStorageBufferRange/maxUniformBufferRange ({max})"
        )));
    }
    Ok(Some(BufferDesc {
        memory,
        offset: base + info.offset,
        range,
        surface: None,
        write_surface: None,
    }))
}

/// The descriptor of a view's prebuilt surface (and of its write-only storage surface).
fn view_desc(
    s: &crate::image::ViewSurface,
    write: Option<&crate::image::ViewSurface>,
) -> BufferDesc {
    BufferDesc {
        memory: s.memory.clone(),
        offset: s.offset,
        range: s.size,
        surface: Some(s.state.clone()),
        write_surface: write.map(|w| w.state.clone()),
    }
}

/// One written descriptor: its surface (None for a null handle or a sampler-only descriptor) and
/// its sampler (SAMPLER and COMBINED_IMAGE_SAMPLER).
#[derive(Clone, Default)]
pub struct Written {
    pub desc: Option<BufferDesc>,
    pub sampler: Option<Arc<Sampler>>,
}

/// Where one descriptor's source lives in the application's memory: the structure its type
/// reads (VkDescriptorBufferInfo, VkDescriptorImageInfo or VkBufferView).
pub(crate) enum DescSource<'a> {
    Buffer(&'a vk::DescriptorBufferInfo),
    Image(&'a vk::DescriptorImageInfo),
    TexelBuffer(vk::BufferView),
}

impl DescSource<'_> {
    /// Which structure a descriptor of type `ty` reads.
    pub fn kind(ty: vk::DescriptorType) -> SourceKind {
        match ty {
            vk::DescriptorType::STORAGE_IMAGE
            | vk::DescriptorType::SAMPLED_IMAGE
            | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
            | vk::DescriptorType::SAMPLER => SourceKind::Image,
            vk::DescriptorType::STORAGE_TEXEL_BUFFER | vk::DescriptorType::UNIFORM_TEXEL_BUFFER => {
                SourceKind::TexelBuffer
            }
            _ => SourceKind::Buffer,
        }
    }
}

/// The structure a descriptor type reads its source from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SourceKind {
    Buffer,
    Image,
    TexelBuffer,
}

/// The descriptor one source of a `ty` descriptor describes.
pub(crate) fn source_desc(
    d: &Core,
    ty: vk::DescriptorType,
    src: DescSource<'_>,
) -> Result<Written> {
    use vk::DescriptorType as T;
    match src {
        DescSource::Buffer(i) => Ok(Written {
            desc: buffer_desc(d, i)?,
            sampler: None,
        }),
        DescSource::Image(i) => {
            let sampler =
                if matches!(ty, T::SAMPLER | T::COMBINED_IMAGE_SAMPLER) && !i.sampler.is_null() {
                    Some(d.samplers.get(i.sampler.as_raw())?)
                } else {
                    None
                };
            let desc = if ty == T::SAMPLER || i.image_view.is_null() {
                None
            } else {
                let v = d.image_views.get(i.image_view.as_raw())?;
                // Storage images are accessed through the typed messages' (possibly lowered)
                // format; sampled ones through the view's own format.
                Some(if ty == T::STORAGE_IMAGE {
                    view_desc(&v.storage, v.storage_write.as_ref())
                } else {
                    view_desc(&v.sampled, None)
                })
            };
            Ok(Written { desc, sampler })
        }
        DescSource::TexelBuffer(v) => {
            let desc = if v.is_null() {
                None
            } else {
                let v = d.buffer_views.get(v.as_raw())?;
                // Uniform texel buffers are read by the sampler in the view's own format.
                Some(if ty == T::UNIFORM_TEXEL_BUFFER {
                    view_desc(&v.sampled, None)
                } else {
                    view_desc(&v.surface, v.lowered.then_some(&v.sampled))
                })
            };
            Ok(Written {
                desc,
                sampler: None,
            })
        }
    }
}

/// The descriptors one VkWriteDescriptorSet writes, in order.
///
/// # Safety
/// The write's arrays must be valid for its descriptor type, per the spec.
pub(crate) unsafe fn write_descs(d: &Core, w: &vk::WriteDescriptorSet<'_>) -> Result<Vec<Written>> {
    let (n, ty) = (w.descriptor_count, w.descriptor_type);
    match DescSource::kind(ty) {
        SourceKind::Image => {
            // SAFETY: descriptorCount image infos per the spec.
            let infos = unsafe { ffi::slice(w.p_image_info, n, "pImageInfo") }?;
            infos
                .iter()
                .map(|i| source_desc(d, ty, DescSource::Image(i)))
                .collect()
        }
        SourceKind::TexelBuffer => {
            // SAFETY: descriptorCount buffer views per the spec.
            let views = unsafe { ffi::slice(w.p_texel_buffer_view, n, "pTexelBufferView") }?;
            views
                .iter()
                .map(|&v| source_desc(d, ty, DescSource::TexelBuffer(v)))
                .collect()
        }
        SourceKind::Buffer => {
            // SAFETY: descriptorCount buffer infos for buffer descriptor types.
            let infos = unsafe { ffi::slice(w.p_buffer_info, n, "pBufferInfo") }?;
            infos
                .iter()
                .map(|i| source_desc(d, ty, DescSource::Buffer(i)))
                .collect()
        }
    }
}

pub(crate) unsafe extern "system" fn update_descriptor_sets(
    device: vk::Device,
    write_count: u32,
    p_writes: *const vk::WriteDescriptorSet<'_>,
    copy_count: u32,
    p_copies: *const vk::CopyDescriptorSet<'_>,
) {
    ffi::void("vkUpdateDescriptorSets", || {
        // SAFETY: live device and valid arrays per the spec.
        let (d, writes, copies) = unsafe {
            (
                dev(device)?,
                ffi::slice(p_writes, write_count, "pDescriptorWrites")?,
                ffi::slice(p_copies, copy_count, "pDescriptorCopies")?,
            )
        };
        for w in writes {
            if w.descriptor_type == vk::DescriptorType::INLINE_UNIFORM_BLOCK {
                // SAFETY: the write's chain is valid per the spec.
                unsafe { crate::inline_uniform::apply_write(d, w) }?;
                continue;
            }
            let set = d.descriptor_sets.get(w.dst_set.as_raw())?;
            // SAFETY: the write's arrays are valid for its type per the spec.
            let descs = unsafe { write_descs(d, w) }?;
            set.write(w.dst_binding, w.dst_array_element, w.descriptor_type, descs)?;
        }
        for c in copies {
            let src = d.descriptor_sets.get(c.src_set.as_raw())?;
            let dst = d.descriptor_sets.get(c.dst_set.as_raw())?;
            if crate::inline_uniform::is_block(&src, c.src_binding) {
                crate::inline_uniform::apply_copy(&src, &dst, c)?;
                continue;
            }
            let bad = || DriverError::InvalidArgument("descriptor copy out of range".into());
            let vals: Vec<(Option<BufferDesc>, Option<Arc<Sampler>>)> = {
                let s = src.lock();
                let ss = src.lock_samplers();
                (0..c.descriptor_count)
                    .map(|i| {
                        let slot = src
                            .layout
                            .slot_of(c.src_binding, c.src_array_element + i)
                            .ok_or_else(bad)?;
                        Ok((s[slot as usize].clone(), ss[slot as usize].clone()))
                    })
                    .collect::<Result<_>>()?
            };
            dst.count_write();
            let mut t = dst.lock();
            let mut ts = dst.lock_samplers();
            for (i, (v, smp)) in vals.into_iter().enumerate() {
                let slot = dst
                    .layout
                    .slot_of(c.dst_binding, c.dst_array_element + i as u32)
                    .ok_or_else(bad)?;
                t[slot as usize] = v;
                if !dst.is_immutable(slot) {
                    ts[slot as usize] = smp;
                }
            }
        }
        Ok(())
    })
}

/// One entry of a descriptor update template: `count` descriptors from (`binding`,
/// `element`) on, their `VkDescriptorBufferInfo`s `stride` bytes apart from `offset` in the
/// application's data.
#[derive(Debug, Clone, Copy)]
pub struct TemplateEntry {
    pub binding: u32,
    pub element: u32,
    pub count: u32,
    pub ty: vk::DescriptorType,
    pub offset: usize,
    pub stride: usize,
}

/// A VkDescriptorUpdateTemplate (VK_KHR_descriptor_update_template).
#[derive(Debug)]
pub struct UpdateTemplate {
    pub entries: Vec<TemplateEntry>,
}

impl UpdateTemplate {
    /// Writes the descriptors `data` holds into `set`.
    ///
    /// # Safety
    /// `data` points at memory laid out as the template's entries describe.
    pub unsafe fn apply(&self, d: &Core, set: &DescriptorSet, data: *const u8) -> Result<()> {
        if data.is_null() && self.entries.iter().any(|e| e.count > 0) {
            return Err(DriverError::InvalidArgument("pData is NULL".into()));
        }
        for e in &self.entries {
            if e.ty == vk::DescriptorType::INLINE_UNIFORM_BLOCK {
                // An inline uniform block entry: `count` bytes at `offset`, written at byte
                // `element` (the stride is ignored).
                // SAFETY: the caller's data holds the entry's bytes at its offset.
                let bytes = unsafe {
                    std::slice::from_raw_parts(data.wrapping_add(e.offset), e.count as usize)
                };
                crate::inline_uniform::write(set, e.binding, e.element, bytes)?;
                continue;
            }
            let descs = (0..e.count as usize)
                .map(|j| {
                    let at = data.wrapping_add(e.offset + j * e.stride);
                    // SAFETY: the caller's data holds the structure the entry's type reads here
                    // (the template's layout); the application need not align it.
                    unsafe {
                        match DescSource::kind(e.ty) {
                            SourceKind::Buffer => {
                                let i = at.cast::<vk::DescriptorBufferInfo>().read_unaligned();
                                source_desc(d, e.ty, DescSource::Buffer(&i))
                            }
                            SourceKind::Image => {
                                let i = at.cast::<vk::DescriptorImageInfo>().read_unaligned();
                                source_desc(d, e.ty, DescSource::Image(&i))
                            }
                            SourceKind::TexelBuffer => {
                                let v = at.cast::<vk::BufferView>().read_unaligned();
                                source_desc(d, e.ty, DescSource::TexelBuffer(v))
                            }
                        }
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            set.write(e.binding, e.element, e.ty, descs)?;
        }
        Ok(())
    }
}

crate::device::registry_creates! {
    create_descriptor_update_template, "vkCreateDescriptorUpdateTemplateKHR", DescriptorUpdateTemplateCreateInfo => update_templates, DescriptorUpdateTemplate, "pDescriptorUpdateTemplate", new_update_template;
}

/// The object vkCreateDescriptorUpdateTemplateKHR makes of its create info.
fn new_update_template(
    _d: &Device,
    info: &vk::DescriptorUpdateTemplateCreateInfo<'_>,
) -> Result<UpdateTemplate> {
    // SAFETY: descriptorUpdateEntryCount entries per the spec.
    let raw = unsafe {
        ffi::slice(
            info.p_descriptor_update_entries,
            info.descriptor_update_entry_count,
            "pDescriptorUpdateEntries",
        )
    }?;
    let entries = raw
        .iter()
        .map(|e| TemplateEntry {
            binding: e.dst_binding,
            element: e.dst_array_element,
            count: e.descriptor_count,
            ty: e.descriptor_type,
            offset: e.offset,
            stride: e.stride,
        })
        .collect();
    Ok(UpdateTemplate { entries })
}

pub(crate) unsafe extern "system" fn destroy_descriptor_update_template(
    device: vk::Device,
    template: vk::DescriptorUpdateTemplate,
    _p_allocator: *const vk::AllocationCallbacks<'_>,
) {
    ffi::void("vkDestroyDescriptorUpdateTemplateKHR", || {
        if template.is_null() {
            return Ok(());
        }
        // SAFETY: a live device per the spec.
        unsafe { dev(device) }?
            .update_templates
            .remove(template.as_raw())?;
        Ok(())
    })
}

pub(crate) unsafe extern "system" fn update_descriptor_set_with_template(
    device: vk::Device,
    set: vk::DescriptorSet,
    template: vk::DescriptorUpdateTemplate,
    p_data: *const std::ffi::c_void,
) {
    ffi::void("vkUpdateDescriptorSetWithTemplateKHR", || {
        // SAFETY: a live device per the spec.
        let d = unsafe { dev(device) }?;
        let t = d.update_templates.get(template.as_raw())?;
        let s = d.descriptor_sets.get(set.as_raw())?;
        // SAFETY: pData is laid out as the template says (the spec's requirement).
        unsafe { t.apply(d, &s, p_data.cast()) }
    })
}

/// The largest count a set of `layout` may give its variable-count binding: what
/// maxPerSetDescriptors leaves after the other bindings (0 without such a binding).
pub fn max_variable_count(layout: &SetLayout) -> u32 {
    layout.variable_binding().map_or(0, |b| {
        crate::physical::MAX_PER_SET_DESCRIPTORS - (layout.slots - b.count)
    })
}

/// The bytes of a kernel's descriptor table (`Kernel::table_descriptors`, runs of slots in
/// increasing order): a 16-byte entry per slot from the first run's start to the last run's
/// end (docs/descriptors.md, "Buffers past the binding table").
pub fn table_bytes(runs: &[(u32, u32)]) -> u64 {
    match (runs.first(), runs.last()) {
        (Some(f), Some(l)) => 16 * u64::from(l.0 + l.1 - f.0),
        _ => 0,
    }
}

/// The largest descriptor table written into the command buffer's state block (with the
/// dispatch's other state, so one dispatch costs no GEM object of its own); a larger one
/// (over 1024 descriptors) gets a GEM object, as a state block holds 64 KiB.
pub const TABLE_IN_STATE_BLOCK: u64 = 16 * 1024;
// With the rest of a dispatch's state (at most 256 binding-table entries, their surfaces and
// samplers, the CURBE) such a table still fits one state block.
const _: () = assert!(TABLE_IN_STATE_BLOCK * 2 <= crate::cmd::STATE_BLOCK);

/// The state-block bytes a dispatch of a kernel with descriptor-table `runs` needs for its
/// table: [`table_bytes`] when it goes there, 0 when it gets an object of its own.
pub fn table_state_bytes(runs: &[(u32, u32)]) -> u64 {
    Some(table_bytes(runs))
        .filter(|&b| b <= TABLE_IN_STATE_BLOCK)
        .unwrap_or(0)
}

/// vkGetDescriptorSetLayoutSupport (VK_KHR_maintenance3): a layout is supported exactly
/// when vkCreateDescriptorSetLayout would create it.
pub(crate) unsafe extern "system" fn get_descriptor_set_layout_support(
    _device: vk::Device,
    p_info: *const vk::DescriptorSetLayoutCreateInfo<'_>,
    p_support: *mut vk::DescriptorSetLayoutSupport<'_>,
) {
    ffi::void("vkGetDescriptorSetLayoutSupportKHR", || {
        // SAFETY: valid create info per the spec.
        let info = unsafe { ffi::read(p_info, "pCreateInfo") }?;
        // SAFETY: bindingCount valid structures.
        let raw = unsafe { ffi::slice(info.p_bindings, info.binding_count, "pBindings") }?;
        let ok = SetLayout::new(
            raw.iter()
                .map(|b| (b.binding, b.descriptor_type, b.descriptor_count))
                .collect(),
        )
        .and_then(|mut l| {
            // SAFETY: a valid create info's pNext chain per the spec.
            l.set_binding_flags(unsafe { binding_flags(info, raw) }?)?;
            Ok(l)
        });
        if let Err(e) = &ok {
            log::info!("vkGetDescriptorSetLayoutSupportKHR: not supported: {e}");
        }
        if p_support.is_null() {
            return Err(DriverError::InvalidArgument("pSupport is NULL".into()));
        }
        // SAFETY: pSupport is a valid, writable structure per the spec.
        let support = unsafe { &mut *p_support };
        support.supported = vk::Bool32::from(ok.is_ok());
        // SAFETY: pSupport's pNext chain is valid per the spec.
        if let Some(v) = unsafe {
            ffi::find_in_chain(
                support.p_next,
                vk::StructureType::DESCRIPTOR_SET_VARIABLE_DESCRIPTOR_COUNT_LAYOUT_SUPPORT,
            )
        } {
            let max = ok.as_ref().ok().map_or(0, max_variable_count);
            // SAFETY: the structure's sType names this type; the application made it writable.
            unsafe {
                (*v.cast_mut()
                    .cast::<vk::DescriptorSetVariableDescriptorCountLayoutSupport<'_>>())
                .max_variable_descriptor_count = max
            };
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_sorts_bindings_and_numbers_slots() {
        let l = SetLayout::new(vec![
            (3, vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC, 2),
            (0, vk::DescriptorType::STORAGE_BUFFER, 1),
            (1, vk::DescriptorType::STORAGE_BUFFER_DYNAMIC, 1),
        ])
        .unwrap();
        assert_eq!(l.slots, 4);
        assert_eq!(l.slot_of(0, 0), Some(0));
        assert_eq!(l.slot_of(1, 0), Some(1));
        assert_eq!(l.slot_of(3, 1), Some(3));
        assert_eq!(l.slot_of(3, 2), None);
        assert_eq!(l.dynamic_slots().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert!(SetLayout::new(vec![(0, vk::DescriptorType::INPUT_ATTACHMENT, 1)]).is_err());
        let l = SetLayout::new(vec![
            (2, vk::DescriptorType::COMBINED_IMAGE_SAMPLER, 2),
            (0, vk::DescriptorType::SAMPLER, 1),
            (1, vk::DescriptorType::SAMPLED_IMAGE, 1),
        ])
        .unwrap();
        assert_eq!((l.slots, l.slot_of(2, 1)), (4, Some(3)));
    }

    #[test]
    fn variable_count_only_on_the_last_non_dynamic_binding() {
        use vk::DescriptorBindingFlags as F;
        let (ssbo, dynamic) = (
            vk::DescriptorType::STORAGE_BUFFER,
            vk::DescriptorType::STORAGE_BUFFER_DYNAMIC,
        );
        let mut first = SetLayout::new(vec![(0, ssbo, 1), (3, ssbo, 100)]).unwrap();
        assert!(first
            .set_binding_flags(vec![(0, F::VARIABLE_DESCRIPTOR_COUNT)])
            .is_err());
        let mut l = SetLayout::new(vec![(0, ssbo, 1), (3, ssbo, 100)]).unwrap();
        l.set_binding_flags(vec![
            (0, F::PARTIALLY_BOUND),
            (3, F::VARIABLE_DESCRIPTOR_COUNT | F::PARTIALLY_BOUND),
        ])
        .unwrap();
        assert_eq!(l.variable_binding().map(|b| b.binding), Some(3));
        assert_eq!(
            max_variable_count(&l),
            crate::physical::MAX_PER_SET_DESCRIPTORS - 1
        );
        let set = DescriptorSet::new(Arc::new(l), 0)
            .with_variable_count(7)
            .unwrap();
        assert_eq!(set.variable_count, Some(7));
        let mut d = SetLayout::new(vec![(0, dynamic, 4)]).unwrap();
        assert!(d
            .set_binding_flags(vec![(0, F::VARIABLE_DESCRIPTOR_COUNT)])
            .is_err());
        let plain = Arc::new(SetLayout::new(vec![(0, ssbo, 4)]).unwrap());
        assert_eq!(DescriptorSet::new(plain, 0).variable_count, None);
    }

    #[test]
    fn small_descriptor_tables_go_into_the_state_block() {
        assert_eq!(table_bytes(&[]), 0);
        assert_eq!(table_bytes(&[(251, 49)]), 16 * 49);
        assert_eq!(table_bytes(&[(251, 4), (300, 2)]), 16 * 51);
        assert_eq!(table_state_bytes(&[(251, 1024)]), 16 * 1024);
        assert_eq!(table_state_bytes(&[(251, 1025)]), 0);
    }

    #[test]
    fn set_layouts_stop_at_max_per_set_descriptors() {
        // The compiler's push-constant surface goes after the last descriptor and must still
        // be a buffer BTI: the driver's count and the compiler's facts agree.
        let bt = crate::pipeline::MAX_BTI;
        assert_eq!(bt, ferrite_compiler::hw::GEN9.max_buffer_bti);
        let max = crate::physical::MAX_PER_SET_DESCRIPTORS;
        assert!(max > bt);
        let ub = vk::DescriptorType::UNIFORM_BUFFER;
        assert_eq!(SetLayout::new(vec![(0, ub, max)]).unwrap().slots, max);
        assert!(SetLayout::new(vec![(0, ub, max - 1), (1, ub, 2)]).is_err());
        assert!(SetLayout::new(vec![(0, ub, u32::MAX), (1, ub, 2)]).is_err());
    }
}
