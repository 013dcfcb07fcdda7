//! Running Vulkan programs on Ferrite through the real loader.
//!
//! Finds the built `libvulkan_ferrite.so`, writes a loader manifest for it in a temporary
//! directory and provides the environment that makes the loader use it (`VK_DRIVER_FILES`,
//! `FERRITE_DEVICE=sim`). Tests never build the library themselves (cargo's lock would
//! deadlock): `scripts/test` runs `cargo build -p ferrite-driver` first.
//!
//! [`Harness`] is an instance with `VK_LAYER_KHRONOS_validation` and a debug-utils messenger
//! that collects every message, so tests can assert that validation had nothing to say.

use std::ffi::{c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once, OnceLock};

use ash::vk;

/// File name of the ICD.
pub const LIB_NAME: &str = "libvulkan_ferrite.so";

/// Where the workspace is (the tests crate sits one level below it).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests crate has a parent")
        .to_path_buf()
}

/// Candidate locations of the library, most specific first: `FERRITE_ICD_LIB`, next to the
/// running executable (a binary in `target/<profile>/` or a test in `target/<profile>/deps/`),
/// then `${CARGO_TARGET_DIR:-<workspace>/target}/debug`.
pub fn library_candidates() -> Vec<PathBuf> {
    let mut c = Vec::new();
    if let Some(p) = std::env::var_os("FERRITE_ICD_LIB") {
        c.push(PathBuf::from(p));
        return c;
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            c.push(dir.join(LIB_NAME));
            if let Some(up) = dir.parent() {
                c.push(up.join(LIB_NAME));
            }
        }
    }
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) if Path::new(&t).is_absolute() => PathBuf::from(t),
        Some(t) => workspace_root().join(t),
        None => workspace_root().join("target"),
    };
    c.push(target.join("debug").join(LIB_NAME));
    c
}

/// The built ICD library, or an error that says how to build it.
pub fn driver_library() -> Result<PathBuf, String> {
    let candidates = library_candidates();
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        let list: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        format!(
            "{LIB_NAME} not found (looked at: {}). Build it first with `cargo build -p ferrite-driver` \
             (scripts/test does), or point FERRITE_ICD_LIB at it.",
            list.join(", ")
        )
    })
}

/// A loader manifest in its own temporary directory, removed on drop.
#[derive(Debug)]
pub struct Manifest {
    dir: PathBuf,
    pub path: PathBuf,
}

impl Drop for Manifest {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The repository's loader manifest, the one place its `api_version` is written (the scripts'
/// manifests copy it too, through `scripts/icd-manifest`).
const TOP_LEVEL_MANIFEST: &str = include_str!("../../icd.json");

/// The `api_version` the manifests state, from the top-level `icd.json`: what the driver
/// reports (`VkPhysicalDeviceProperties::apiVersion`; `loader_instance` checks the two agree).
pub fn manifest_api_version() -> &'static str {
    let after_key = TOP_LEVEL_MANIFEST
        .split_once("\"api_version\"")
        .and_then(|(_, rest)| rest.split_once(':'))
        .map(|(_, rest)| rest.trim_start());
    after_key
        .and_then(|v| v.strip_prefix('"'))
        .and_then(|v| v.split_once('"'))
        .map(|(v, _)| v)
        .expect("icd.json states an api_version")
}

/// Writes a manifest pointing at `lib` (absolute) into a fresh temporary directory.
pub fn write_manifest(lib: &Path) -> std::io::Result<Manifest> {
    let dir = crate::fresh_temp_dir("ferrite-icd")?;
    let lib = lib.canonicalize()?;
    let path = dir.join("ferrite_icd.json");
    let json = format!(
        "{{\n    \"file_format_version\": \"1.0.1\",\n    \"ICD\": {{\n        \"library_path\": {:?},\n        \"api_version\": \"{}\",\n        \"is_portability_driver\": false\n    }}\n}}\n",
        lib.display().to_string(),
        manifest_api_version()
    );
    std::fs::write(&path, json)?;
    Ok(Manifest { dir, path })
}

/// The process-wide manifest for the built library (written once).
pub fn manifest() -> &'static Manifest {
    static MANIFEST: OnceLock<Manifest> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let lib = driver_library().unwrap_or_else(|e| panic!("{e}"));
        write_manifest(&lib).unwrap_or_else(|e| panic!("cannot write the ICD manifest: {e}"))
    })
}

/// The environment a child process needs to run on the simulated device.
pub fn loader_env() -> Vec<(String, String)> {
    vec![
        (
            "VK_DRIVER_FILES".into(),
            manifest().path.display().to_string(),
        ),
        ("FERRITE_DEVICE".into(), "sim".into()),
    ]
}

/// Sets the loader environment for this process, once, before any Vulkan call. Every test
/// calls it first (through [`Harness::new`] or directly), so no thread reads the environment
/// while it changes.
///
/// A child process started with `FERRITE_TESTS_OTHER_DRIVER=1` keeps the `VK_DRIVER_FILES` its
/// parent gave it (another driver, e.g. lavapipe, for comparisons).
pub fn init_process_env() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("FERRITE_TESTS_OTHER_DRIVER").is_some() {
            return;
        }
        for (k, v) in loader_env() {
            std::env::set_var(k, v);
        }
    });
}

/// One message from the debug-utils messenger.
#[derive(Debug, Clone)]
pub struct Message {
    pub severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    pub text: String,
}

type Messages = Arc<Mutex<Vec<Message>>>;

unsafe extern "system" fn collect_messages(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    p_data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes valid callback data for the duration of the call, and
    // user_data is the `Mutex<Vec<Message>>` the Harness keeps alive while the messenger exists.
    let (data, sink) = unsafe { (&*p_data, &*(user_data as *const Mutex<Vec<Message>>)) };
    let text = if data.p_message.is_null() {
        String::new()
    } else {
        // SAFETY: p_message is a NUL-terminated string per the spec.
        unsafe { CStr::from_ptr(data.p_message) }
            .to_string_lossy()
            .into_owned()
    };
    if let Ok(mut v) = sink.lock() {
        v.push(Message { severity, text });
    }
    vk::FALSE
}

/// A Vulkan instance on Ferrite through the system loader.
pub struct Harness {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    messages: Messages,
}

impl Harness {
    /// An instance with the validation layer and a collecting messenger.
    pub fn new() -> Harness {
        Self::with_validation(true)
    }

    /// Without validation: for tests that pass invalid input on purpose.
    pub fn with_validation(validation: bool) -> Harness {
        Self::with_instance_extensions(validation, &[])
    }

    /// With instance extensions enabled besides VK_EXT_debug_utils (e.g.
    /// VK_KHR_get_physical_device_properties2, which device extensions depend on).
    pub fn with_instance_extensions(validation: bool, extra: &[&std::ffi::CStr]) -> Harness {
        Self::with_api_version(validation, extra, vk::API_VERSION_1_0)
    }

    /// With the application's `apiVersion` (e.g. 1.1, for SPIR-V 1.3 and subgroups).
    pub fn with_api_version(
        validation: bool,
        extra: &[&std::ffi::CStr],
        api_version: u32,
    ) -> Harness {
        init_process_env();
        // SAFETY: loads the system's libvulkan.so.1; the loader is sound to load once per process.
        let entry = unsafe { ash::Entry::load() }
            .expect("libvulkan.so.1 (package libvulkan1) must be installed");
        let app = vk::ApplicationInfo::default()
            .application_name(c"ferrite-tests")
            .api_version(api_version);
        let layers = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
        let extra: Vec<_> = extra.iter().map(|e| e.as_ptr()).collect();
        let exts: Vec<_> = [ash::ext::debug_utils::NAME.as_ptr()]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let messages: Messages = Arc::new(Mutex::new(Vec::new()));
        let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                    | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::INFO,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(collect_messages))
            .user_data(Arc::as_ptr(&messages) as *mut c_void);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_extension_names(&extra);
        if validation {
            // Also catches messages of vkCreateInstance/vkDestroyInstance themselves.
            info = info
                .enabled_layer_names(&layers)
                .enabled_extension_names(&exts)
                .push_next(&mut messenger_info);
        }
        // SAFETY: valid create info; the instance is destroyed in Drop.
        let instance = unsafe { entry.create_instance(&info, None) }.expect("vkCreateInstance");
        let debug = validation.then(|| {
            let du = ash::ext::debug_utils::Instance::new(&entry, &instance);
            // SAFETY: valid create info; user_data outlives the messenger (held by self).
            let m = unsafe { du.create_debug_utils_messenger(&messenger_info, None) }
                .expect("messenger");
            (du, m)
        });
        Harness {
            entry,
            instance,
            debug,
            messages,
        }
    }

    /// Every message of warning or error severity so far.
    pub fn problems(&self) -> Vec<Message> {
        let v = self.messages.lock().unwrap();
        v.iter()
            .filter(|m| {
                m.severity.intersects(
                    vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                        | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
                )
            })
            .cloned()
            .collect()
    }

    /// Panics with the messages if validation reported a warning or an error.
    pub fn assert_clean(&self) {
        let p = self.problems();
        assert!(
            p.is_empty(),
            "validation reported {} problem(s):\n{:#?}",
            p.len(),
            p
        );
    }

    pub fn physical_devices(&self) -> Vec<vk::PhysicalDevice> {
        // SAFETY: live instance.
        unsafe { self.instance.enumerate_physical_devices() }.expect("vkEnumeratePhysicalDevices")
    }

    /// The one simulated device.
    pub fn physical_device(&self) -> vk::PhysicalDevice {
        let pds = self.physical_devices();
        assert_eq!(
            pds.len(),
            1,
            "FERRITE_DEVICE=sim exposes exactly one device"
        );
        pds[0]
    }

    /// A device with one queue of family 0.
    pub fn create_device(&self, pd: vk::PhysicalDevice) -> ash::Device {
        self.create_device_with(pd, vk::DeviceCreateInfo::default())
    }

    /// A device with one queue of family 0 and what `info` adds (extensions, core features,
    /// a `pNext` chain of feature structures).
    pub fn create_device_with(
        &self,
        pd: vk::PhysicalDevice,
        info: vk::DeviceCreateInfo<'_>,
    ) -> ash::Device {
        let prio = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(0)
            .queue_priorities(&prio)];
        let info = info.queue_create_infos(&queues);
        // SAFETY: valid create info for a live physical device.
        unsafe { create_device(&self.instance, pd, &info) }.expect("vkCreateDevice")
    }

    /// Index of the first memory type with all of `flags`.
    pub fn memory_type(
        &self,
        pd: vk::PhysicalDevice,
        flags: vk::MemoryPropertyFlags,
    ) -> Option<u32> {
        // SAFETY: live physical device.
        let props = unsafe { self.instance.get_physical_device_memory_properties(pd) };
        (0..props.memory_type_count).find(|&i| {
            props.memory_types[i as usize]
                .property_flags
                .contains(flags)
        })
    }
}

/// Serialises `vkCreateDevice` and `vkDestroyDevice` across the test threads of one process.
///
/// The Vulkan loader keeps every logical device of the process in per-driver lists that
/// `vkCreateDevice` walks (it resolves the new device's dispatch table through
/// `vkGetDeviceProcAddr`) under a lock which `vkDestroyDevice` does not take when it unlinks and
/// frees a node. Creating a device in one thread while another destroys one is therefore a
/// use-after-free inside the loader (Debian's 1.3.239 and upstream as of 1.4.341; reported as
/// KhronosGroup/Vulkan-Loader issue 2018). The Vulkan spec allows the two calls concurrently, so a
/// test process that runs its tests on several threads would crash at random in the loader, not in
/// Ferrite; every test creates and destroys devices through these two functions instead.
static DEVICE_LIST: Mutex<()> = Mutex::new(());

fn device_list_lock() -> std::sync::MutexGuard<'static, ()> {
    // A panicking test may poison the lock; the list it guards lives in the loader, not here.
    DEVICE_LIST.lock().unwrap_or_else(|e| e.into_inner())
}

/// `vkCreateDevice`, serialised against other threads' device creation and destruction.
///
/// # Safety
/// The same as `vkCreateDevice`: a live physical device of `instance` and a valid create info.
pub unsafe fn create_device(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    info: &vk::DeviceCreateInfo,
) -> ash::prelude::VkResult<ash::Device> {
    let _list = device_list_lock();
    // SAFETY: the caller's contract.
    unsafe { instance.create_device(pd, info, None) }
}

/// `vkDestroyDevice`, serialised against other threads' device creation and destruction.
///
/// # Safety
/// The same as `vkDestroyDevice`: a live device whose children are all destroyed and which no
/// other thread uses.
pub unsafe fn destroy_device(device: &ash::Device) {
    let _list = device_list_lock();
    // SAFETY: the caller's contract.
    unsafe { device.destroy_device(None) }
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        // SAFETY: children (devices) are destroyed by the tests before the harness drops.
        unsafe {
            if let Some((du, m)) = self.debug.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

/// Runs `program` with the loader environment (plus `extra`), returning (status ok, stdout+stderr).
pub fn run_with_loader_env(
    program: &Path,
    args: &[&str],
    extra: &[(&str, &str)],
) -> (bool, String) {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    for (k, v) in loader_env() {
        cmd.env(k, v);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Binding `binding` of set 0: `count` descriptors of type `ty`, visible to the compute
/// stage.
pub fn compute_binding(
    binding: u32,
    ty: vk::DescriptorType,
    count: u32,
) -> vk::DescriptorSetLayoutBinding<'static> {
    vk::DescriptorSetLayoutBinding::default()
        .binding(binding)
        .descriptor_type(ty)
        .descriptor_count(count)
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
}

/// A descriptor set layout of `bindings` created with `flags`, and a pipeline layout of that
/// one set with `push_bytes` of compute push constants (no range when 0).
///
/// # Safety
/// `dev` must be a live device.
pub unsafe fn compute_layout(
    dev: &ash::Device,
    bindings: &[vk::DescriptorSetLayoutBinding],
    flags: vk::DescriptorSetLayoutCreateFlags,
    push_bytes: u32,
) -> ash::prelude::VkResult<(vk::DescriptorSetLayout, vk::PipelineLayout)> {
    // SAFETY: a live device (caller contract) and valid create infos.
    unsafe {
        let set_layout = dev.create_descriptor_set_layout(
            &vk::DescriptorSetLayoutCreateInfo::default()
                .flags(flags)
                .bindings(bindings),
            None,
        )?;
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(push_bytes)];
        let ranges = if push_bytes == 0 {
            &[][..]
        } else {
            &ranges[..]
        };
        let layout = dev.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default()
                .set_layouts(&[set_layout])
                .push_constant_ranges(ranges),
            None,
        )?;
        Ok((set_layout, layout))
    }
}

/// A descriptor set layout of `buffers` storage buffers (bindings 0..buffers, compute stage)
/// and a pipeline layout over it with `push_bytes` of push constants: the layout of the
/// SAXPY-like kernels the benchmarks and stress tests dispatch.
///
/// # Safety
/// `dev` must be a live device.
pub unsafe fn storage_buffer_layout(
    dev: &ash::Device,
    buffers: u32,
    push_bytes: u32,
) -> ash::prelude::VkResult<(vk::DescriptorSetLayout, vk::PipelineLayout)> {
    let bindings: Vec<_> = (0..buffers)
        .map(|b| compute_binding(b, vk::DescriptorType::STORAGE_BUFFER, 1))
        .collect();
    // SAFETY: forwarded contract.
    unsafe {
        compute_layout(
            dev,
            &bindings,
            vk::DescriptorSetLayoutCreateFlags::empty(),
            push_bytes,
        )
    }
}

/// A descriptor pool for exactly one set with one descriptor of each of `types`, and that
/// set (of `set_layout`).
///
/// # Safety
/// `dev` must be a live device and `set_layout` one of its set layouts.
pub unsafe fn one_set(
    dev: &ash::Device,
    set_layout: vk::DescriptorSetLayout,
    types: &[vk::DescriptorType],
) -> ash::prelude::VkResult<(vk::DescriptorPool, vk::DescriptorSet)> {
    let counts: Vec<_> = types.iter().map(|&ty| (ty, 1)).collect();
    // SAFETY: forwarded (caller contract).
    unsafe { one_set_of(dev, set_layout, &counts) }
}

/// A descriptor pool for exactly one set with `count` descriptors of each (type, count), and
/// that set (of `set_layout`).
///
/// # Safety
/// `dev` must be a live device and `set_layout` one of its set layouts.
pub unsafe fn one_set_of(
    dev: &ash::Device,
    set_layout: vk::DescriptorSetLayout,
    counts: &[(vk::DescriptorType, u32)],
) -> ash::prelude::VkResult<(vk::DescriptorPool, vk::DescriptorSet)> {
    let sizes: Vec<_> = counts
        .iter()
        .map(|&(ty, descriptor_count)| vk::DescriptorPoolSize {
            ty,
            descriptor_count,
        })
        .collect();
    // SAFETY: a live device and its set layout (caller contract); valid create infos.
    unsafe {
        let pool = dev.create_descriptor_pool(
            &vk::DescriptorPoolCreateInfo::default()
                .max_sets(1)
                .pool_sizes(&sizes),
            None,
        )?;
        let set = dev.allocate_descriptor_sets(
            &vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(pool)
                .set_layouts(&[set_layout]),
        )?[0];
        Ok((pool, set))
    }
}

/// Points binding b of `set` at `buffers[b]` = (buffer, descriptor type, range from offset
/// 0).
///
/// # Safety
/// `dev` must be a live device; `set` and the buffers its objects, the set not in use by
/// pending work.
pub unsafe fn write_buffers(
    dev: &ash::Device,
    set: vk::DescriptorSet,
    buffers: &[(vk::Buffer, vk::DescriptorType, vk::DeviceSize)],
) {
    let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
        .iter()
        .map(|&(buffer, _, range)| {
            [vk::DescriptorBufferInfo {
                buffer,
                offset: 0,
                range,
            }]
        })
        .collect();
    let writes: Vec<_> = infos
        .iter()
        .zip(buffers)
        .enumerate()
        .map(|(b, (info, &(_, ty, _)))| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(b as u32)
                .descriptor_type(ty)
                .buffer_info(info)
        })
        .collect();
    // SAFETY: caller contract; the writes point at live infos.
    unsafe { dev.update_descriptor_sets(&writes, &[]) };
}

/// A one-set pool and set of `set_layout` (whose bindings 0.. are storage buffers) with
/// binding b pointed at the whole of `buffers[b]`.
///
/// # Safety
/// `dev` must be a live device; `set_layout` and `buffers` must be its objects.
pub unsafe fn storage_buffer_set(
    dev: &ash::Device,
    set_layout: vk::DescriptorSetLayout,
    buffers: &[vk::Buffer],
) -> ash::prelude::VkResult<(vk::DescriptorPool, vk::DescriptorSet)> {
    let ty = vk::DescriptorType::STORAGE_BUFFER;
    // SAFETY: forwarded contract.
    unsafe {
        let (pool, set) = one_set(dev, set_layout, &vec![ty; buffers.len()])?;
        let writes: Vec<_> = buffers.iter().map(|&b| (b, ty, vk::WHOLE_SIZE)).collect();
        write_buffers(dev, set, &writes);
        Ok((pool, set))
    }
}

/// A storage buffer of `size` bytes bound at offset 0 to memory of its own, of the type `pick`
/// chooses from the buffer's requirements; also gives those requirements and the type.
///
/// # Safety
/// `device` must be live; the caller destroys the buffer and frees the memory.
pub unsafe fn bound_storage_buffer(
    device: &ash::Device,
    size: u64,
    pick: impl FnOnce(&vk::MemoryRequirements) -> Result<u32, String>,
) -> Result<(vk::Buffer, vk::DeviceMemory, vk::MemoryRequirements, u32), String> {
    let binfo = vk::BufferCreateInfo::default()
        .size(size)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
    // SAFETY: a live device (caller contract) and valid create infos built here.
    unsafe {
        let buffer = device
            .create_buffer(&binfo, None)
            .map_err(|e| format!("vkCreateBuffer: {e}"))?;
        let req = device.get_buffer_memory_requirements(buffer);
        let type_index = pick(&req)?;
        let ainfo = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(type_index);
        let memory = device
            .allocate_memory(&ainfo, None)
            .map_err(|e| format!("vkAllocateMemory: {e}"))?;
        device
            .bind_buffer_memory(buffer, memory, 0)
            .map_err(|e| format!("vkBindBufferMemory: {e}"))?;
        Ok((buffer, memory, req, type_index))
    }
}

/// `count` primary command buffers from `pool`.
///
/// # Safety
/// `dev` must be a live device and `pool` one of its command pools.
pub unsafe fn primary_command_buffers(
    dev: &ash::Device,
    pool: vk::CommandPool,
    count: u32,
) -> ash::prelude::VkResult<Vec<vk::CommandBuffer>> {
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(count);
    // SAFETY: forwarded contract.
    unsafe { dev.allocate_command_buffers(&info) }
}

/// The flags of a compute pipeline and its one stage.
#[derive(Clone, Copy, Debug, Default)]
pub struct PipelineOptions {
    pub pipeline_flags: vk::PipelineCreateFlags,
    pub stage_flags: vk::PipelineShaderStageCreateFlags,
    /// `VkPipelineShaderStageRequiredSubgroupSizeCreateInfo` when set.
    pub required_subgroup_size: Option<u32>,
}

/// Specialisation constants given as (constant id, 32-bit value): their map entries (the `i`th
/// value at byte offset `4 * i`) and their data.
pub fn specialization(spec: &[(u32, u32)]) -> (Vec<vk::SpecializationMapEntry>, Vec<u8>) {
    let entries = spec
        .iter()
        .enumerate()
        .map(|(i, &(id, _))| vk::SpecializationMapEntry {
            constant_id: id,
            offset: 4 * i as u32,
            size: 4,
        })
        .collect();
    let data = spec.iter().flat_map(|&(_, v)| v.to_le_bytes()).collect();
    (entries, data)
}

/// The compute pipeline of entry point `main` of `code` over `layout`, created with `flags`
/// in `cache`, with the 32-bit specialization constants `spec` ((constant id, value); none
/// when empty). The shader module lives only for the call. On failure: the handles
/// vkCreateComputePipelines wrote (none when the module was refused) and its error.
///
/// # Safety
/// `dev` must be a live device and `layout` one of its pipeline layouts.
pub unsafe fn compute_pipeline(
    dev: &ash::Device,
    code: &[u32],
    layout: vk::PipelineLayout,
    spec: &[(u32, u32)],
    opts: &PipelineOptions,
    cache: vk::PipelineCache,
) -> Result<vk::Pipeline, (Vec<vk::Pipeline>, vk::Result)> {
    let (entries, data) = specialization(spec);
    let si = vk::SpecializationInfo::default()
        .map_entries(&entries)
        .data(&data);
    // SAFETY: a live device (caller contract) and valid create infos; the module is
    // destroyed once the pipeline is made (a pipeline does not need it afterwards).
    unsafe {
        let module = dev
            .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(code), None)
            .map_err(|e| (Vec::new(), e))?;
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .flags(opts.stage_flags)
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        if !spec.is_empty() {
            stage = stage.specialization_info(&si);
        }
        let mut required = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
            .required_subgroup_size(opts.required_subgroup_size.unwrap_or(0));
        if opts.required_subgroup_size.is_some() {
            stage = stage.push_next(&mut required);
        }
        let info = vk::ComputePipelineCreateInfo::default()
            .flags(opts.pipeline_flags)
            .stage(stage)
            .layout(layout);
        let r = dev.create_compute_pipelines(cache, &[info], None);
        dev.destroy_shader_module(module, None);
        r.map(|p| p[0])
    }
}
