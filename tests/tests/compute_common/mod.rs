//! Shared helpers of the compute tests: GLSL compiled with glslangValidator at test time, a
//! device on Ferrite (simulated GPU) through the loader with validation, host-visible buffers,
//! compute pipelines over one descriptor set of storage buffers, one-shot submissions.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use ash::vk;
use ferrite_tests::icd::{
    compute_binding, compute_layout, compute_pipeline, one_set, workspace_root, write_buffers,
    Harness, PipelineOptions,
};

/// SPIR-V of a GLSL compute shader from tests/shaders/ (or inline source when `name` has no
/// file), compiled by glslangValidator. Panics (fails the test) when the tool is missing:
/// these tests exist to run the shader.
pub fn spirv(name: &str, src: Option<&str>) -> Vec<u32> {
    spirv_env(name, src, "vulkan1.0")
}

/// As [`spirv`], for the glslangValidator target environment `env` (e.g. "vulkan1.1").
pub fn spirv_env(name: &str, src: Option<&str>, env: &str) -> Vec<u32> {
    let dir = ferrite_tests::fresh_temp_dir("ferrite-compute").unwrap();
    let input: PathBuf = match src {
        Some(s) => {
            let p = dir.join(format!("{name}.comp"));
            std::fs::write(&p, s).unwrap();
            p
        }
        None => workspace_root()
            .join("tests/shaders")
            .join(format!("{name}.comp")),
    };
    let output = dir.join(format!("{name}.spv"));
    let out = Command::new("glslangValidator")
        .args(["-V", "--target-env", env, "-o"])
        .arg(&output)
        .arg(&input)
        .output()
        .expect("glslangValidator (package glslang-tools) is required by the compute tests");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let bytes = std::fs::read(&output).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub struct Buffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub ptr: *mut u8,
    pub size: u64,
}

impl Buffer {
    pub fn write_u32s(&self, data: &[u32]) {
        assert!(data.len() as u64 * 4 <= self.size);
        // SAFETY: ptr maps `size` bytes of host-coherent memory.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.cast(), data.len()) };
    }
    pub fn read_u32s(&self, n: usize) -> Vec<u32> {
        assert!(n as u64 * 4 <= self.size);
        let mut v = vec![0u32; n];
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.cast::<u32>(), v.as_mut_ptr(), n) };
        v
    }
    pub fn write_bytes(&self, offset: usize, data: &[u8]) {
        assert!((offset + data.len()) as u64 <= self.size);
        // SAFETY: ptr maps `size` bytes of host-coherent memory; the range lies inside.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(offset), data.len()) };
    }
    pub fn read_bytes(&self, n: usize) -> Vec<u8> {
        assert!(n as u64 <= self.size);
        let mut v = vec![0u8; n];
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr, v.as_mut_ptr(), n) };
        v
    }
    pub fn write_f32s(&self, data: &[f32]) {
        self.write_u32s(&data.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
    }
    pub fn read_f32s(&self, n: usize) -> Vec<f32> {
        self.read_u32s(n).into_iter().map(f32::from_bits).collect()
    }
}

pub struct Kernel {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set_layout: vk::DescriptorSetLayout,
    pub pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
}

pub struct Ctx {
    pub h: Harness,
    pub pd: vk::PhysicalDevice,
    pub dev: ash::Device,
    pub queue: vk::Queue,
    pub cmd_pool: vk::CommandPool,
    pub mem_type: u32,
    buffers: Vec<Buffer>,
    kernels: Vec<Kernel>,
    /// Flags of the compute pipelines `kernel_with` creates.
    pub pipeline_flags: vk::PipelineCreateFlags,
    /// Flags of their shader stage.
    pub stage_flags: vk::PipelineShaderStageCreateFlags,
    /// A required subgroup size chained to their shader stage (VK_EXT_subgroup_size_control).
    pub required_subgroup_size: Option<u32>,
}

impl Ctx {
    pub fn new() -> Ctx {
        Ctx::with_create_info(Harness::new(), vk::DeviceCreateInfo::default())
    }

    /// A context on a Vulkan 1.1 instance (validation layer on) whose device enables one
    /// device extension and its feature structure. 1.1 because the tests that use this check
    /// one extension's behaviour, not the 1.2/1.3 property structures the layer also checks
    /// at higher versions.
    pub fn with_extension<T: vk::ExtendsDeviceCreateInfo + ?Sized>(
        extension: &std::ffi::CStr,
        features: &mut T,
    ) -> Ctx {
        let h = Harness::with_api_version(true, &[], vk::API_VERSION_1_1);
        let names = [extension.as_ptr()];
        Ctx::with_create_info(
            h,
            vk::DeviceCreateInfo::default()
                .enabled_extension_names(&names)
                .push_next(features),
        )
    }

    /// A context whose device enables the core `features` (no extensions), on the default
    /// instance (validation layer on).
    pub fn with_features(features: &vk::PhysicalDeviceFeatures) -> Ctx {
        Ctx::with_create_info(
            Harness::new(),
            vk::DeviceCreateInfo::default().enabled_features(features),
        )
    }

    /// A context on `h`'s instance whose device has one queue and what `info` adds
    /// (extensions, core features, a chain of feature structures).
    pub fn with_create_info(h: Harness, info: vk::DeviceCreateInfo<'_>) -> Ctx {
        let pd = h.physical_device();
        let dev = h.create_device_with(pd, info);
        Ctx::with_device(h, pd, dev)
    }

    /// A context over a device the caller created (extensions, features) on `h`'s instance.
    pub fn with_device(h: Harness, pd: vk::PhysicalDevice, dev: ash::Device) -> Ctx {
        let mem_type = h
            .memory_type(
                pd,
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
            )
            .expect("host-visible memory");
        // SAFETY: live device; objects destroyed in Drop.
        let (queue, cmd_pool) = unsafe {
            (
                dev.get_device_queue(0, 0),
                dev.create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .unwrap(),
            )
        };
        Ctx {
            h,
            pd,
            dev,
            queue,
            cmd_pool,
            mem_type,
            buffers: Vec::new(),
            kernels: Vec::new(),
            pipeline_flags: vk::PipelineCreateFlags::empty(),
            stage_flags: vk::PipelineShaderStageCreateFlags::empty(),
            required_subgroup_size: None,
        }
    }

    /// A host-visible storage buffer of `size` bytes (zeroed); index into the context's list.
    pub fn buffer(&mut self, size: u64) -> usize {
        // SAFETY: valid create infos on a live device; destroyed in Drop.
        unsafe {
            let buffer = self
                .dev
                .create_buffer(
                    &vk::BufferCreateInfo::default().size(size).usage(
                        vk::BufferUsageFlags::STORAGE_BUFFER
                            | vk::BufferUsageFlags::UNIFORM_BUFFER
                            | vk::BufferUsageFlags::TRANSFER_DST
                            | vk::BufferUsageFlags::TRANSFER_SRC
                            | vk::BufferUsageFlags::INDIRECT_BUFFER
                            | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER
                            | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER,
                    ),
                    None,
                )
                .unwrap();
            let req = self.dev.get_buffer_memory_requirements(buffer);
            let memory = self
                .dev
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(self.mem_type),
                    None,
                )
                .unwrap();
            self.dev.bind_buffer_memory(buffer, memory, 0).unwrap();
            let ptr = self
                .dev
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .unwrap()
                .cast();
            // New memory's contents are undefined (lavapipe hands back freed pages with their
            // old data); tests compare whole buffers between drivers, so each starts zeroed.
            std::ptr::write_bytes(ptr, 0, size as usize);
            self.buffers.push(Buffer {
                buffer,
                memory,
                ptr,
                size,
            });
        }
        self.buffers.len() - 1
    }

    pub fn buf(&self, i: usize) -> &Buffer {
        &self.buffers[i]
    }

    /// A compute pipeline with `types` descriptors at bindings 0.. of set 0, a push-constant
    /// range of `push` bytes, and the given specialization.
    pub fn kernel_with(
        &mut self,
        code: &[u32],
        types: &[vk::DescriptorType],
        push: u32,
        spec: &[(u32, u32)],
        cache: vk::PipelineCache,
    ) -> Result<usize, vk::Result> {
        // SAFETY: valid create infos on a live device; destroyed in Drop.
        unsafe {
            let bindings: Vec<_> = types
                .iter()
                .enumerate()
                .map(|(i, &t)| compute_binding(i as u32, t, 1))
                .collect();
            let (set_layout, layout) = compute_layout(
                &self.dev,
                &bindings,
                vk::DescriptorSetLayoutCreateFlags::empty(),
                push,
            )
            .unwrap();
            let r = compute_pipeline(
                &self.dev,
                code,
                layout,
                spec,
                &self.pipeline_options(),
                cache,
            );
            let pipeline = match r {
                Ok(p) => p,
                Err((_, e)) => {
                    self.dev.destroy_pipeline_layout(layout, None);
                    self.dev.destroy_descriptor_set_layout(set_layout, None);
                    return Err(e);
                }
            };
            let (pool, set) = one_set(&self.dev, set_layout, types).unwrap();
            self.kernels.push(Kernel {
                pipeline,
                layout,
                set_layout,
                pool,
                set,
            });
        }
        Ok(self.kernels.len() - 1)
    }

    /// Storage buffers at bindings 0.. of set 0, no push constants.
    pub fn kernel(&mut self, code: &[u32], n: usize, push: u32) -> usize {
        self.kernel_with(
            code,
            &vec![vk::DescriptorType::STORAGE_BUFFER; n],
            push,
            &[],
            vk::PipelineCache::null(),
        )
        .expect("vkCreateComputePipelines")
    }

    /// The compute pipeline of `code` over a layout the caller made, with the context's
    /// pipeline flags, no specialization and no cache; on failure the handles
    /// vkCreateComputePipelines wrote and its error.
    pub fn pipeline(
        &self,
        code: &[u32],
        layout: vk::PipelineLayout,
    ) -> Result<vk::Pipeline, (Vec<vk::Pipeline>, vk::Result)> {
        // SAFETY: a live device and one of its pipeline layouts.
        unsafe {
            compute_pipeline(
                &self.dev,
                code,
                layout,
                &[],
                &self.pipeline_options(),
                vk::PipelineCache::null(),
            )
        }
    }

    /// The pipeline and stage flags every pipeline of this context is made with.
    fn pipeline_options(&self) -> PipelineOptions {
        PipelineOptions {
            pipeline_flags: self.pipeline_flags,
            stage_flags: self.stage_flags,
            required_subgroup_size: self.required_subgroup_size,
        }
    }

    pub fn k(&self, i: usize) -> &Kernel {
        &self.kernels[i]
    }

    /// Points binding b of kernel `k`'s set at whole buffer `bufs[b]`.
    pub fn bind(&self, k: usize, bufs: &[usize]) {
        let types = vec![vk::DescriptorType::STORAGE_BUFFER; bufs.len()];
        self.bind_typed(k, bufs, &types);
    }

    pub fn bind_typed(&self, k: usize, bufs: &[usize], types: &[vk::DescriptorType]) {
        let writes: Vec<_> = bufs
            .iter()
            .enumerate()
            .map(|(b, &i)| {
                let ty = types[b];
                let range = if ty == vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
                    || ty == vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
                {
                    16
                } else {
                    vk::WHOLE_SIZE
                };
                (self.buffers[i].buffer, ty, range)
            })
            .collect();
        // SAFETY: valid writes to a live set that no pending command buffer uses.
        unsafe { write_buffers(&self.dev, self.kernels[k].set, &writes) };
    }

    /// A primary command buffer from the context's pool, in the recording state (the caller
    /// ends, submits and frees it).
    pub fn begin_command_buffer_with(
        &self,
        flags: vk::CommandBufferUsageFlags,
    ) -> vk::CommandBuffer {
        // SAFETY: valid allocate and begin infos on a live device and pool.
        unsafe {
            let cb = self
                .dev
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.cmd_pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .unwrap()[0];
            self.dev
                .begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default().flags(flags))
                .unwrap();
            cb
        }
    }

    /// [`Ctx::begin_command_buffer_with`] without usage flags.
    pub fn begin_command_buffer(&self) -> vk::CommandBuffer {
        self.begin_command_buffer_with(vk::CommandBufferUsageFlags::empty())
    }

    /// An unsignalled fence (the caller destroys it).
    pub fn fence(&self) -> vk::Fence {
        // SAFETY: a valid create info on a live device.
        unsafe {
            self.dev
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .unwrap()
        }
    }

    /// Records with `f` into a fresh primary command buffer, submits with a fence, waits.
    pub fn run(&self, f: impl FnOnce(&ash::Device, vk::CommandBuffer)) -> Result<(), vk::Result> {
        let cb = self.begin_command_buffer_with(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: valid objects on a live device; everything waited for and freed here.
        unsafe {
            f(&self.dev, cb);
            self.dev.end_command_buffer(cb)?;
            let fence = self.fence();
            let cbs = [cb];
            let submit = vk::SubmitInfo::default().command_buffers(&cbs);
            let r = self
                .dev
                .queue_submit(self.queue, &[submit], fence)
                .and_then(|_| self.dev.wait_for_fences(&[fence], true, u64::MAX));
            self.dev.destroy_fence(fence, None);
            if r.is_ok() {
                self.dev.free_command_buffers(self.cmd_pool, &cbs);
            }
            r
        }
    }

    /// Binds kernel `k` (pipeline + its set) into `cb`.
    pub fn bind_kernel(&self, cb: vk::CommandBuffer, k: usize) {
        self.bind_kernel_at(cb, k, &[]);
    }

    /// Binds kernel `k` (pipeline + its set, with `dynamic_offsets` for its dynamic buffers)
    /// into `cb`.
    pub fn bind_kernel_at(&self, cb: vk::CommandBuffer, k: usize, dynamic_offsets: &[u32]) {
        let kk = &self.kernels[k];
        // SAFETY: recording into a live command buffer.
        unsafe {
            self.dev
                .cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, kk.pipeline);
            self.dev.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                kk.layout,
                0,
                &[kk.set],
                dynamic_offsets,
            );
        }
    }

    /// A compute -> compute/host memory barrier.
    pub fn barrier(&self, cb: vk::CommandBuffer) {
        let mb = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)];
        // SAFETY: recording into a live command buffer.
        unsafe {
            self.dev.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &mb,
                &[],
                &[],
            )
        };
    }

    /// Destroys everything and checks validation stayed quiet.
    pub fn finish(self) {
        drop_ctx(self, true);
    }

    /// Destroys everything without checking validation (after a lost device).
    pub fn finish_unchecked(self) {
        drop_ctx(self, false);
    }
}

fn drop_ctx(mut c: Ctx, check: bool) {
    // SAFETY: the device is idle after the waits; every object was made by this context.
    unsafe {
        let _ = c.dev.device_wait_idle();
        for k in c.kernels.drain(..) {
            c.dev.destroy_pipeline(k.pipeline, None);
            c.dev.destroy_descriptor_pool(k.pool, None);
            c.dev.destroy_pipeline_layout(k.layout, None);
            c.dev.destroy_descriptor_set_layout(k.set_layout, None);
        }
        for b in c.buffers.drain(..) {
            c.dev.unmap_memory(b.memory);
            c.dev.destroy_buffer(b.buffer, None);
            c.dev.free_memory(b.memory, None);
        }
        c.dev.destroy_command_pool(c.cmd_pool, None);
        ferrite_tests::icd::destroy_device(&c.dev);
    }
    if check {
        c.h.assert_clean();
    }
}

/// Deterministic pseudo-random u32s (xorshift).
pub fn random_u32s(seed: u32, n: usize) -> Vec<u32> {
    let mut rng = ferrite_tests::rng::XorShift32(seed.max(1));
    (0..n).map(|_| rng.next_u32()).collect()
}

/// Where lavapipe's loader manifest may be (package mesa-vulkan-drivers).
pub const LAVAPIPE_MANIFESTS: &[&str] = &[
    "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json",
    "/usr/share/vulkan/icd.d/lvp_icd.aarch64.json",
];

/// Lavapipe's manifest; panics (fails the comparison test) when it is not installed.
pub fn lavapipe_manifest() -> &'static str {
    LAVAPIPE_MANIFESTS
        .iter()
        .find(|p| std::path::Path::new(p).is_file())
        .expect("lavapipe's manifest not found (install mesa-vulkan-drivers)")
}

/// The environment of a child process that runs on lavapipe instead of Ferrite.
pub fn lavapipe_env() -> Vec<(String, String)> {
    vec![
        ("VK_DRIVER_FILES".into(), lavapipe_manifest().to_string()),
        ("FERRITE_TESTS_OTHER_DRIVER".into(), "1".into()),
    ]
}

/// Named results of a child process: one list of 32-bit words per workload.
pub type Results = BTreeMap<String, Vec<u32>>;

/// Set in the environment of the child processes `run_child` starts.
pub const CHILD_ENV: &str = "FERRITE_COMPARE_CHILD";

/// Whether this process is a child started by [`run_child`] (its ignored child test only runs
/// there).
pub fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// Prints `results` as the `RESULT <name> <hex words>` lines [`run_child`] parses.
pub fn print_results(results: &Results) {
    for (name, words) in results {
        let hex: Vec<String> = words.iter().map(|w| format!("{w:x}")).collect();
        println!("RESULT {name} {}", hex.join(" "));
    }
}

/// Runs this test binary again on its ignored test `child_test` with `env` (the loader reads
/// VK_DRIVER_FILES once per process, so each driver needs its own process) and parses the
/// child's RESULT lines.
pub fn run_child(child_test: &str, env: &[(String, String)]) -> Results {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args([
        child_test,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running the child test process");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The harness may print "test <name> ... " on the first result's line.
    text.lines()
        .filter_map(|l| l.find("RESULT ").map(|i| &l[i + "RESULT ".len()..]))
        .map(|l| {
            let mut it = l.split_whitespace();
            let name = it.next().unwrap().to_string();
            let words = it.map(|w| u32::from_str_radix(w, 16).unwrap()).collect();
            (name, words)
        })
        .collect()
}

/// Runs the ignored test `child_test` on Ferrite and on lavapipe (a process each) and checks
/// that both produced results for the same cases; returns (Ferrite's, lavapipe's).
pub fn run_on_ferrite_and_lavapipe(child_test: &str) -> (Results, Results) {
    let ferrite = run_child(child_test, &ferrite_tests::icd::loader_env());
    let lvp = run_child(child_test, &lavapipe_env());
    assert!(!ferrite.is_empty(), "{child_test}: no results");
    assert_eq!(
        ferrite.keys().collect::<Vec<_>>(),
        lvp.keys().collect::<Vec<_>>(),
        "both drivers ran every case"
    );
    (ferrite, lvp)
}

/// Runs the ignored test `child_test` on Ferrite (simulated GPU) and on lavapipe, a child
/// process each, and checks every result of both against the CPU model's `expected`; a
/// mismatch names the driver, the result and the word.
pub fn check_ferrite_and_lavapipe_against(child_test: &str, expected: &Results) {
    for (driver, env) in [
        ("Ferrite", ferrite_tests::icd::loader_env()),
        ("lavapipe", lavapipe_env()),
    ] {
        let got = run_child(child_test, &env);
        for (name, want) in expected {
            let g = got
                .get(name)
                .unwrap_or_else(|| panic!("{driver}: no result {name}"));
            if let Some(k) = (0..want.len()).find(|&k| g.get(k) != Some(&want[k])) {
                panic!(
                    "{driver}: {name} word {k} is {:#x?}, the CPU model says {:#x}",
                    g.get(k),
                    want[k]
                );
            }
        }
    }
}

/// The colour aspect's mip levels `0..levels` and array layers `0..layers` of an image.
pub fn color_range(levels: u32, layers: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: levels,
        base_array_layer: 0,
        layer_count: layers,
    }
}

/// One side of an image barrier: the layout, and the access and stage scope.
pub type ImageScope = (vk::ImageLayout, vk::AccessFlags, vk::PipelineStageFlags);

/// Records the barrier that moves `range` of `image` from `from` to `to` into `cb`.
///
/// # Safety
/// `cb` is a command buffer of `dev` in the recording state and `image` is alive.
pub unsafe fn image_barrier(
    dev: &ash::Device,
    cb: vk::CommandBuffer,
    image: vk::Image,
    range: vk::ImageSubresourceRange,
    from: ImageScope,
    to: ImageScope,
) {
    let b = [vk::ImageMemoryBarrier::default()
        .src_access_mask(from.1)
        .dst_access_mask(to.1)
        .old_layout(from.0)
        .new_layout(to.0)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(range)];
    // SAFETY: the caller's contract.
    unsafe {
        dev.cmd_pipeline_barrier(cb, from.2, to.2, vk::DependencyFlags::empty(), &[], &[], &b)
    };
}

/// An image made from `info` with its own memory of type `mem_type` bound at offset 0; the
/// caller destroys both.
pub fn bound_image(
    c: &Ctx,
    info: &vk::ImageCreateInfo<'_>,
    mem_type: u32,
) -> (vk::Image, vk::DeviceMemory) {
    // SAFETY: a valid create info on a live device; the memory is sized by the image's
    // requirements.
    unsafe {
        let image = c.dev.create_image(info, None).unwrap();
        let req = c.dev.get_image_memory_requirements(image);
        let memory = c
            .dev
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(mem_type),
                None,
            )
            .unwrap();
        c.dev.bind_image_memory(image, memory, 0).unwrap();
        (image, memory)
    }
}

/// Writes an image descriptor of type `ty` (view in GENERAL layout) at binding 0 and the
/// whole of buffer `buf` at binding 1 of kernel `k`'s set.
pub fn write_image_and_buffer(
    c: &Ctx,
    k: usize,
    ty: vk::DescriptorType,
    view: vk::ImageView,
    buf: usize,
) {
    let ii = [vk::DescriptorImageInfo {
        sampler: vk::Sampler::null(),
        image_view: view,
        image_layout: vk::ImageLayout::GENERAL,
    }];
    let bi = [vk::DescriptorBufferInfo {
        buffer: c.buf(buf).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    let w = [
        vk::WriteDescriptorSet::default()
            .dst_set(c.k(k).set)
            .dst_binding(0)
            .descriptor_type(ty)
            .image_info(&ii),
        vk::WriteDescriptorSet::default()
            .dst_set(c.k(k).set)
            .dst_binding(1)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&bi),
    ];
    // SAFETY: valid writes to a set no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&w, &[]) };
}

/// A descriptor set layout of `bindings` with `flags` (and `binding_flags`, one per binding,
/// when given) and a pipeline layout of that one set; the caller destroys both.
pub fn set_and_pipeline_layout(
    c: &Ctx,
    flags: vk::DescriptorSetLayoutCreateFlags,
    bindings: &[vk::DescriptorSetLayoutBinding],
    binding_flags: Option<&[vk::DescriptorBindingFlags]>,
) -> (vk::DescriptorSetLayout, vk::PipelineLayout) {
    let mut fi = vk::DescriptorSetLayoutBindingFlagsCreateInfo::default()
        .binding_flags(binding_flags.unwrap_or_default());
    let mut info = vk::DescriptorSetLayoutCreateInfo::default()
        .flags(flags)
        .bindings(bindings);
    if binding_flags.is_some() {
        info = info.push_next(&mut fi);
    }
    // SAFETY: valid create infos on a live device; the caller destroys the objects.
    unsafe {
        let set_layout = c.dev.create_descriptor_set_layout(&info, None).unwrap();
        let layout = c
            .dev
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&[set_layout]),
                None,
            )
            .unwrap();
        (set_layout, layout)
    }
}

/// One descriptor for [`write_descriptors`].
#[derive(Clone, Copy)]
pub enum Desc {
    /// The whole of buffer `c.buf(index)` as a storage buffer.
    Storage(usize),
    /// An image view (in the GENERAL layout) with a sampler (null for storage images).
    Image(vk::DescriptorType, vk::ImageView, vk::Sampler),
}

/// Writes `descs[i]` to binding `i` of kernel `k`'s set (one descriptor per binding).
pub fn write_descriptors(c: &Ctx, k: usize, descs: &[Desc]) {
    let images: Vec<[vk::DescriptorImageInfo; 1]> = descs
        .iter()
        .map(|d| match *d {
            Desc::Image(_, view, sampler) => [vk::DescriptorImageInfo {
                sampler,
                image_view: view,
                image_layout: vk::ImageLayout::GENERAL,
            }],
            Desc::Storage(_) => [vk::DescriptorImageInfo::default()],
        })
        .collect();
    let buffers: Vec<[vk::DescriptorBufferInfo; 1]> = descs
        .iter()
        .map(|d| match *d {
            Desc::Storage(b) => [vk::DescriptorBufferInfo {
                buffer: c.buf(b).buffer,
                offset: 0,
                range: vk::WHOLE_SIZE,
            }],
            Desc::Image(..) => [vk::DescriptorBufferInfo::default()],
        })
        .collect();
    let w: Vec<vk::WriteDescriptorSet> = descs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let base = vk::WriteDescriptorSet::default()
                .dst_set(c.k(k).set)
                .dst_binding(i as u32);
            match *d {
                Desc::Storage(_) => base
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&buffers[i]),
                Desc::Image(ty, ..) => base.descriptor_type(ty).image_info(&images[i]),
            }
        })
        .collect();
    // SAFETY: valid writes to a set no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&w, &[]) };
}

/// Records push constants `bytes` at offset 0 for kernel `k`.
pub fn push(c: &Ctx, cb: vk::CommandBuffer, k: usize, bytes: &[u8]) {
    // SAFETY: recording into a live command buffer; the range lies in the layout's.
    unsafe {
        c.dev
            .cmd_push_constants(cb, c.k(k).layout, vk::ShaderStageFlags::COMPUTE, 0, bytes)
    };
}

/// Records a dispatch of x * y groups.
pub fn dispatch(c: &Ctx, cb: vk::CommandBuffer, x: u32, y: u32) {
    // SAFETY: recording into a live command buffer.
    unsafe { c.dev.cmd_dispatch(cb, x, y, 1) };
}

/// A zero-filled buffer of `words` dwords: fresh memory is not zeroed on every driver
/// (lavapipe's is not).
pub fn zeroed(c: &mut Ctx, words: usize) -> usize {
    let b = c.buffer(words as u64 * 4);
    c.buf(b).write_u32s(&vec![0; words]);
    b
}

/// A descriptor pool with `flags` for one set of each of `set_layouts`, sized for `sizes`
/// (descriptor type, count), and those sets; `variable_counts` (one per set) is chained as
/// VkDescriptorSetVariableDescriptorCountAllocateInfo when given. The caller destroys the pool.
pub fn pool_and_sets(
    c: &Ctx,
    flags: vk::DescriptorPoolCreateFlags,
    sizes: &[(vk::DescriptorType, u32)],
    set_layouts: &[vk::DescriptorSetLayout],
    variable_counts: Option<&[u32]>,
) -> (vk::DescriptorPool, Vec<vk::DescriptorSet>) {
    let sizes: Vec<_> = sizes
        .iter()
        .map(|&(ty, descriptor_count)| vk::DescriptorPoolSize {
            ty,
            descriptor_count,
        })
        .collect();
    let mut vc = vk::DescriptorSetVariableDescriptorCountAllocateInfo::default()
        .descriptor_counts(variable_counts.unwrap_or(&[]));
    // SAFETY: valid create and allocate infos on a live device.
    unsafe {
        let pool = c
            .dev
            .create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .flags(flags)
                    .max_sets(set_layouts.len() as u32)
                    .pool_sizes(&sizes),
                None,
            )
            .unwrap();
        let mut ai = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(set_layouts);
        if variable_counts.is_some() {
            ai = ai.push_next(&mut vc);
        }
        let sets = c.dev.allocate_descriptor_sets(&ai).unwrap();
        (pool, sets)
    }
}

/// A host-visible buffer of `words` usable as uniform and storage texel buffer (R32_UINT views
/// support both), and its memory; the caller destroys both.
pub fn texel_buffer(c: &Ctx, words: &[u32]) -> (vk::Buffer, vk::DeviceMemory) {
    // SAFETY: valid create infos on a live device; the mapping covers `words`.
    unsafe {
        let buffer = c
            .dev
            .create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(words.len() as u64 * 4)
                    .usage(
                        vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
                            | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER,
                    ),
                None,
            )
            .unwrap();
        let req = c.dev.get_buffer_memory_requirements(buffer);
        let memory = c
            .dev
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(c.mem_type),
                None,
            )
            .unwrap();
        c.dev.bind_buffer_memory(buffer, memory, 0).unwrap();
        let ptr: *mut u32 = c
            .dev
            .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            .unwrap()
            .cast();
        std::ptr::copy_nonoverlapping(words.as_ptr(), ptr, words.len());
        c.dev.unmap_memory(memory);
        (buffer, memory)
    }
}

/// Reads `n` words of a buffer made by [`texel_buffer`].
pub fn read_texels(c: &Ctx, memory: vk::DeviceMemory, n: usize) -> Vec<u32> {
    // SAFETY: a live host-visible allocation of at least `n` words, not in use.
    unsafe {
        let ptr: *const u32 = c
            .dev
            .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            .unwrap()
            .cast();
        let v = std::slice::from_raw_parts(ptr, n).to_vec();
        c.dev.unmap_memory(memory);
        v
    }
}

/// An image, its memory and one view of it; [`ImageAndView::destroy`] frees all three.
pub struct ImageAndView {
    pub image: vk::Image,
    pub memory: vk::DeviceMemory,
    pub view: vk::ImageView,
}

impl ImageAndView {
    /// Destroys the view, the image and the memory (the device must be done with them).
    pub fn destroy(self, c: &Ctx) {
        // SAFETY: the caller's contract: no pending work uses the three objects.
        unsafe {
            c.dev.destroy_image_view(self.view, None);
            c.dev.destroy_image(self.image, None);
            c.dev.free_memory(self.memory, None);
        }
    }
}

/// A colour view of `image` of type `ty` and format `format` over `range`.
pub fn color_view(
    c: &Ctx,
    image: vk::Image,
    ty: vk::ImageViewType,
    format: vk::Format,
    range: vk::ImageSubresourceRange,
) -> vk::ImageView {
    // SAFETY: a valid create info for a live image; destroyed by the caller.
    unsafe {
        c.dev.create_image_view(
            &vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(ty)
                .format(format)
                .subresource_range(range),
            None,
        )
    }
    .unwrap()
}

/// Copies `regions` of buffer `buf` into `range` of a new `image` (from UNDEFINED) and leaves
/// the range in GENERAL, readable by compute shaders; waits for the submission.
pub fn upload_to_image(
    c: &Ctx,
    buf: usize,
    image: vk::Image,
    range: vk::ImageSubresourceRange,
    regions: &[vk::BufferImageCopy],
) {
    let buffer = c.buf(buf).buffer;
    let dst = (
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        vk::AccessFlags::TRANSFER_WRITE,
        vk::PipelineStageFlags::TRANSFER,
    );
    // SAFETY: valid commands on live objects; the submission is waited for.
    unsafe {
        c.run(|d, cb| {
            let undefined = (
                vk::ImageLayout::UNDEFINED,
                vk::AccessFlags::empty(),
                vk::PipelineStageFlags::TOP_OF_PIPE,
            );
            image_barrier(d, cb, image, range, undefined, dst);
            d.cmd_copy_buffer_to_image(cb, buffer, image, dst.0, regions);
            let read = (
                vk::ImageLayout::GENERAL,
                vk::AccessFlags::SHADER_READ,
                vk::PipelineStageFlags::COMPUTE_SHADER,
            );
            image_barrier(d, cb, image, range, dst, read);
        })
        .unwrap();
    }
}

/// Runs `child_test` on Ferrite and on lavapipe and checks every word of every result with
/// `ok(result name, word index, Ferrite's word, lavapipe's word)`; `what(word index)` names
/// the word in the failure message, which lists every difference. Both runs must produce
/// `cases` results, and lavapipe must have written something into each.
pub fn compare_with_lavapipe(
    child_test: &str,
    cases: usize,
    ok: impl Fn(&str, usize, u32, u32) -> bool,
    what: impl Fn(usize) -> String,
) {
    compare_results_with_lavapipe(child_test, cases, |name, got, want| {
        got.iter()
            .zip(want)
            .enumerate()
            .filter(|&(i, (&g, &w))| !ok(name, i, g, w))
            .map(|(i, (&g, &w))| {
                format!(
                    "{name}: word {i} ({}): Ferrite {} ({g:#x}), lavapipe {} ({w:#x})",
                    what(i),
                    f32::from_bits(g),
                    f32::from_bits(w)
                )
            })
            .collect()
    });
}

/// Runs `child_test` on Ferrite and on lavapipe and checks each result with `diff(result name,
/// Ferrite's words, lavapipe's words)`, which lists its differences; the failure message lists
/// them all. Both runs must produce `cases` results of equal lengths, and lavapipe must have
/// written something into each.
pub fn compare_results_with_lavapipe(
    child_test: &str,
    cases: usize,
    diff: impl Fn(&str, &[u32], &[u32]) -> Vec<String>,
) {
    let (ferrite, lvp) = run_on_ferrite_and_lavapipe(child_test);
    assert_eq!(ferrite.len(), cases, "Ferrite's results");
    assert_eq!(lvp.len(), cases, "lavapipe's results");
    let mut bad = Vec::new();
    for (name, want) in &lvp {
        let got = &ferrite[name];
        assert_eq!(got.len(), want.len(), "{name}: lengths");
        assert!(
            want.iter().any(|w| *w != 0),
            "{name}: lavapipe wrote nothing"
        );
        bad.extend(diff(name, got, want));
    }
    assert!(
        bad.is_empty(),
        "{} differences:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
