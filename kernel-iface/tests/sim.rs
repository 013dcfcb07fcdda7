//! The simulated i915 through the public `DrmDevice` API: the same calls a driver makes.

use std::sync::{Arc, Mutex};

use kernel_iface::sim::{ExecError, ExecJob, GpuBackend, GpuHang, NoGpu, SimCounts};
use kernel_iface::uapi::*;
use kernel_iface::{lookup_platform, monotonic_ns, DrmDevice, KernelError};

fn sim() -> DrmDevice {
    DrmDevice::open_sim(kernel_iface::lookup_pci_id(0x1912).unwrap()).unwrap()
}

fn counts(dev: &DrmDevice) -> SimCounts {
    dev.sim().unwrap().counts()
}

fn errno<T: std::fmt::Debug>(r: Result<T, KernelError>) -> i32 {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => e
            .errno()
            .unwrap_or_else(|| panic!("error without errno: {e}")),
    }
}

// --- getparam / query -----------------------------------------------------------------------

#[test]
fn getparam_answers_as_skl_gt2() {
    let dev = sim();
    assert!(dev.is_simulated());
    assert_eq!(dev.getparam(I915_PARAM_CHIPSET_ID).unwrap(), 0x1912);
    assert_eq!(dev.getparam(I915_PARAM_EU_TOTAL).unwrap(), 24);
    assert_eq!(dev.getparam(I915_PARAM_SUBSLICE_TOTAL).unwrap(), 3);
    assert_eq!(dev.getparam(I915_PARAM_SLICE_MASK).unwrap(), 0x1);
    assert_eq!(dev.getparam(I915_PARAM_SUBSLICE_MASK).unwrap(), 0x7);
    assert_eq!(
        dev.getparam(I915_PARAM_CS_TIMESTAMP_FREQUENCY).unwrap(),
        12_000_000
    );
    for p in [
        I915_PARAM_HAS_EXEC_SOFTPIN,
        I915_PARAM_HAS_EXEC_FENCE_ARRAY,
        I915_PARAM_HAS_EXEC_TIMELINE_FENCES,
        I915_PARAM_HAS_CONTEXT_ISOLATION,
        I915_PARAM_HAS_EXECBUF2,
    ] {
        assert_eq!(dev.getparam(p).unwrap(), 1, "param {p}");
    }
    assert!(dev.getparam(I915_PARAM_MMAP_GTT_VERSION).unwrap() >= 4);
    assert_eq!(errno(dev.getparam(9999)), libc::EINVAL);
}

#[test]
fn getparam_with_a_null_value_pointer_is_efault() {
    let dev = sim();
    let mut gp = drm_i915_getparam {
        param: I915_PARAM_CHIPSET_ID,
        value: 0,
    };
    assert_eq!(errno(dev.ioctl(&mut gp)), libc::EFAULT);
}

#[test]
fn other_platforms_answer_their_own_facts() {
    let gt3 = DrmDevice::open_sim(lookup_platform("cfl-gt3").unwrap()).unwrap();
    assert_eq!(gt3.getparam(I915_PARAM_CHIPSET_ID).unwrap(), 0x3ea5);
    assert_eq!(gt3.getparam(I915_PARAM_EU_TOTAL).unwrap(), 48);
    assert_eq!(gt3.getparam(I915_PARAM_SLICE_MASK).unwrap(), 0x3);
    let (hdr, data) = gt3.query_topology().unwrap();
    let eus: u32 = data[hdr.eu_offset as usize..]
        .iter()
        .map(|b| b.count_ones())
        .sum();
    assert_eq!(eus, 48);
}

#[test]
fn topology_query_describes_1x3x8() {
    let dev = sim();
    let (hdr, data) = dev.query_topology().unwrap();
    assert_eq!(data[0], 0x1, "slice mask");
    let ss = &data[hdr.subslice_offset as usize..hdr.eu_offset as usize];
    assert_eq!(ss.iter().map(|b| b.count_ones()).sum::<u32>(), 3);
    let eus = &data[hdr.eu_offset as usize..];
    assert_eq!(
        eus.len(),
        (hdr.max_slices * hdr.max_subslices * hdr.eu_stride) as usize
    );
    assert_eq!(eus.iter().map(|b| b.count_ones()).sum::<u32>(), 24);
    assert_eq!(eus[0], 0xff, "8 EUs in subslice 0");
}

#[test]
fn engine_query_lists_the_render_engine() {
    let engines = sim().query_engines().unwrap();
    assert_eq!(engines.len(), 1);
    assert_eq!(engines[0].engine.engine_class, I915_ENGINE_CLASS_RENDER);
}

#[test]
fn query_two_call_protocol_and_item_errors() {
    let dev = sim();
    let mut items = [
        drm_i915_query_item {
            query_id: DRM_I915_QUERY_TOPOLOGY_INFO,
            ..Default::default()
        },
        drm_i915_query_item {
            query_id: 77,
            ..Default::default()
        },
    ];
    let mut q = drm_i915_query {
        num_items: 2,
        flags: 0,
        items_ptr: items.as_mut_ptr() as u64,
    };
    dev.ioctl(&mut q).unwrap();
    let needed = items[0].length;
    assert!(needed > 16);
    assert_eq!(items[1].length, -libc::EINVAL, "unknown query id");
    // A buffer that is too small is an error in the item, not in the ioctl.
    let mut small = vec![0u8; needed as usize - 1];
    items[0].length = small.len() as i32;
    items[0].data_ptr = small.as_mut_ptr() as u64;
    let mut q = drm_i915_query {
        num_items: 1,
        flags: 0,
        items_ptr: items.as_mut_ptr() as u64,
    };
    dev.ioctl(&mut q).unwrap();
    assert_eq!(items[0].length, -libc::EINVAL);
    q.flags = 1;
    assert_eq!(errno(dev.ioctl(&mut q)), libc::EINVAL);
}

#[test]
fn huge_user_counts_fail_without_sizing_a_buffer_by_them() {
    // Found by scripts/soak's ioctl fuzzer: the query's item count and the execbuffer's object
    // count sized one allocation each, so a random count aborted the process.
    let dev = sim();
    let mut q = drm_i915_query {
        num_items: u32::MAX,
        flags: 0,
        items_ptr: 0,
    };
    assert_eq!(errno(dev.ioctl(&mut q)), libc::EFAULT);
    let mut eb = drm_i915_gem_execbuffer2 {
        buffers_ptr: 0,
        buffer_count: i32::MAX as u32,
        ..Default::default()
    };
    assert_eq!(errno(dev.execbuffer2(&mut eb)), libc::ENOMEM);
}

#[test]
fn version_names_the_i915_driver() {
    let dev = sim();
    let mut name = [0u8; 16];
    let mut v = drm_version {
        name_len: name.len() as u64,
        name: name.as_mut_ptr() as u64,
        ..Default::default()
    };
    dev.ioctl(&mut v).unwrap();
    assert_eq!(&name[..v.name_len as usize], b"i915");
}

// --- GEM ------------------------------------------------------------------------------------

#[test]
fn gem_create_mmap_write_read_close() {
    let dev = sim();
    let h = dev.gem_create(5000).unwrap();
    let m = dev.gem_mmap(h, 8192).unwrap();
    let mut zeros = vec![1u8; 8192];
    m.read(0, &mut zeros);
    assert!(zeros.iter().all(|&b| b == 0), "new objects are zero-filled");
    let pattern: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    m.write(0, &pattern);
    // A second mapping of the same object sees the same pages.
    let m2 = dev.gem_mmap(h, 8192).unwrap();
    let mut back = vec![0u8; 8192];
    m2.read(0, &mut back);
    assert_eq!(back, pattern);
    assert_ne!(m.as_ptr(), std::ptr::null_mut());
    assert_eq!(m.len(), 8192);
    // Mapping more than the object is refused.
    assert_eq!(errno(dev.gem_mmap(h, 3 * 4096)), libc::EINVAL);
    dev.gem_close(h).unwrap();
    // As with the kernel, a mapping outlives GEM_CLOSE.
    m2.read(0, &mut back);
    assert_eq!(back, pattern);
    assert_eq!(counts(&dev).bos, 0);
    assert_eq!(counts(&dev).bo_memory, 1);
    drop((m, m2));
    assert_eq!(counts(&dev), SimCounts::default());
    // The handle is gone.
    assert_eq!(errno(dev.gem_close(h)), libc::EINVAL);
    assert_eq!(errno(dev.gem_mmap(h, 4096)), libc::ENOENT);
}

#[test]
fn gem_create_rejects_zero_and_huge_sizes() {
    let dev = sim();
    assert_eq!(errno(dev.gem_create(0)), libc::EINVAL);
    assert_eq!(errno(dev.gem_create(u64::MAX)), libc::E2BIG);
    let mut c = drm_i915_gem_create_ext {
        size: 4096,
        flags: 1 << 5,
        ..Default::default()
    };
    assert_eq!(errno(dev.ioctl(&mut c)), libc::EINVAL);
    c.flags = 0;
    dev.ioctl(&mut c).unwrap();
    assert_eq!(c.size, 4096);
    dev.gem_close(c.handle).unwrap();
}

#[test]
fn gem_create_returns_page_rounded_size() {
    let dev = sim();
    let mut c = drm_i915_gem_create {
        size: 1,
        ..Default::default()
    };
    dev.ioctl(&mut c).unwrap();
    assert_eq!(c.size, 4096);
    assert_ne!(c.handle, 0);
}

#[test]
fn mmap_offset_checks_flags_and_extensions() {
    let dev = sim();
    let h = dev.gem_create(4096).unwrap();
    let mut mo = drm_i915_gem_mmap_offset {
        handle: h,
        flags: I915_MMAP_OFFSET_FIXED,
        ..Default::default()
    };
    assert_eq!(errno(dev.ioctl(&mut mo)), libc::EINVAL);
    mo.flags = I915_MMAP_OFFSET_WC;
    mo.extensions = 8;
    assert_eq!(errno(dev.ioctl(&mut mo)), libc::EINVAL);
    mo.extensions = 0;
    dev.ioctl(&mut mo).unwrap();
    assert_eq!(mo.offset % 4096, 0);
}

#[test]
fn set_domain_and_wait_checks() {
    let dev = sim();
    let h = dev.gem_create(4096).unwrap();
    dev.gem_set_domain(h, I915_GEM_DOMAIN_CPU, I915_GEM_DOMAIN_CPU)
        .unwrap();
    dev.gem_set_domain(h, I915_GEM_DOMAIN_GTT, 0).unwrap();
    assert_eq!(
        errno(dev.gem_set_domain(h, I915_GEM_DOMAIN_RENDER, 0)),
        libc::EINVAL
    );
    assert_eq!(
        errno(dev.gem_set_domain(h, I915_GEM_DOMAIN_CPU, I915_GEM_DOMAIN_GTT)),
        libc::EINVAL
    );
    assert_eq!(
        errno(dev.gem_set_domain(999, I915_GEM_DOMAIN_CPU, 0)),
        libc::ENOENT
    );
    // Without a read domain the kernel returns before looking the handle up.
    dev.gem_set_domain(999, 0, 0).unwrap();
    dev.gem_wait(h, 0).unwrap();
    assert_eq!(errno(dev.gem_wait(999, 0)), libc::ENOENT);
    let mut w = drm_i915_gem_wait {
        bo_handle: h,
        flags: 1,
        timeout_ns: 0,
    };
    assert_eq!(errno(dev.ioctl(&mut w)), libc::EINVAL);
}

#[test]
fn create_close_loop_leaks_nothing() {
    let dev = sim();
    for i in 0..2000u64 {
        let h = dev.gem_create(4096 * (1 + i % 4)).unwrap();
        let m = dev.gem_mmap(h, 4096).unwrap();
        m.write(0, &i.to_le_bytes());
        dev.gem_close(h).unwrap();
    }
    assert_eq!(counts(&dev), SimCounts::default());
}

// --- contexts -------------------------------------------------------------------------------

#[test]
fn context_params() {
    let dev = sim();
    let ctx = dev.context_create().unwrap();
    assert_ne!(ctx, 0);
    assert_eq!(
        dev.context_get_param(ctx, I915_CONTEXT_PARAM_RECOVERABLE)
            .unwrap(),
        0
    );
    assert_eq!(
        dev.context_get_param(0, I915_CONTEXT_PARAM_RECOVERABLE)
            .unwrap(),
        1
    );
    assert_eq!(
        dev.context_get_param(ctx, I915_CONTEXT_PARAM_BANNABLE)
            .unwrap(),
        1
    );
    assert_eq!(
        dev.context_get_param(ctx, I915_CONTEXT_PARAM_PRIORITY)
            .unwrap(),
        0
    );
    assert_eq!(
        dev.context_get_param(ctx, I915_CONTEXT_PARAM_GTT_SIZE)
            .unwrap(),
        1 << 48
    );
    dev.context_set_param(ctx, I915_CONTEXT_PARAM_PRIORITY, (-10i64) as u64)
        .unwrap();
    assert_eq!(
        dev.context_get_param(ctx, I915_CONTEXT_PARAM_PRIORITY)
            .unwrap() as i64,
        -10
    );
    assert_eq!(
        errno(dev.context_set_param(ctx, I915_CONTEXT_PARAM_PRIORITY, 10)),
        libc::EPERM
    );
    assert_eq!(
        errno(dev.context_set_param(ctx, I915_CONTEXT_PARAM_PRIORITY, 5000)),
        libc::EINVAL
    );
    assert_eq!(
        errno(dev.context_set_param(ctx, I915_CONTEXT_PARAM_BANNABLE, 0)),
        libc::EPERM
    );
    dev.context_set_param(ctx, I915_CONTEXT_PARAM_RECOVERABLE, 1)
        .unwrap();
    assert_eq!(
        dev.context_get_param(ctx, I915_CONTEXT_PARAM_RECOVERABLE)
            .unwrap(),
        1
    );
    assert_eq!(errno(dev.context_set_param(ctx, 0x999, 0)), libc::EINVAL);
    assert_eq!(
        errno(dev.context_get_param(ctx, I915_CONTEXT_PARAM_BAN_PERIOD)),
        libc::EINVAL
    );
    assert_eq!(
        errno(dev.context_get_param(12345, I915_CONTEXT_PARAM_PRIORITY)),
        libc::ENOENT
    );
    let mut p = ContextSetParam(drm_i915_gem_context_param {
        ctx_id: ctx,
        size: 4,
        param: I915_CONTEXT_PARAM_RECOVERABLE,
        value: 0,
    });
    assert_eq!(errno(dev.ioctl(&mut p)), libc::EINVAL);
    let stats = dev.context_reset_stats(ctx).unwrap();
    assert_eq!((stats.batch_active, stats.batch_pending), (0, 0));
    assert_eq!(errno(dev.context_reset_stats(777)), libc::ENOENT);
    let mut s = drm_i915_reset_stats {
        ctx_id: ctx,
        flags: 1,
        ..Default::default()
    };
    assert_eq!(errno(dev.ioctl(&mut s)), libc::EINVAL);
    dev.context_destroy(ctx).unwrap();
    assert_eq!(errno(dev.context_destroy(ctx)), libc::ENOENT);
    assert_eq!(errno(dev.context_destroy(0)), libc::ENOENT);
    assert_eq!(counts(&dev).contexts, 0);
}

#[test]
fn context_create_ext_checks() {
    let dev = sim();
    let mut c = drm_i915_gem_context_create_ext {
        flags: 1 << 7,
        ..Default::default()
    };
    assert_eq!(errno(dev.ioctl(&mut c)), libc::EINVAL);
    let mut ext = drm_i915_gem_context_create_ext_setparam {
        base: i915_user_extension {
            name: 42,
            ..Default::default()
        },
        param: drm_i915_gem_context_param {
            param: I915_CONTEXT_PARAM_RECOVERABLE,
            ..Default::default()
        },
    };
    // The pointer is taken afresh for every call, after the edits.
    let create = |ext: &mut drm_i915_gem_context_create_ext_setparam| {
        let mut c = drm_i915_gem_context_create_ext {
            ctx_id: 0,
            flags: I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS,
            extensions: ext as *mut _ as u64,
        };
        dev.ioctl(&mut c).map(|()| c.ctx_id)
    };
    assert_eq!(errno(create(&mut ext)), libc::EINVAL, "unknown extension");
    ext.base.name = I915_CONTEXT_CREATE_EXT_SETPARAM;
    ext.base.rsvd[2] = 1;
    assert_eq!(errno(create(&mut ext)), libc::EINVAL, "reserved bits");
    ext.base.rsvd[2] = 0;
    ext.param.ctx_id = 3;
    assert_eq!(errno(create(&mut ext)), libc::EINVAL, "ctx_id in setparam");
    ext.param.ctx_id = 0;
    // A chain that loops forever ends with E2BIG.
    ext.base.next_extension = &mut ext as *mut _ as u64;
    assert_eq!(errno(create(&mut ext)), libc::E2BIG);
    ext.base.next_extension = 0;
    let ctx = create(&mut ext).unwrap();
    assert_eq!(
        dev.context_get_param(ctx, I915_CONTEXT_PARAM_RECOVERABLE)
            .unwrap(),
        0
    );
    // The plain create ioctl makes a recoverable context.
    let mut plain = drm_i915_gem_context_create::default();
    dev.ioctl(&mut plain).unwrap();
    assert_eq!(
        dev.context_get_param(plain.ctx_id, I915_CONTEXT_PARAM_RECOVERABLE)
            .unwrap(),
        1
    );
    assert_eq!(counts(&dev).contexts, 2);
}

// --- execbuffer2 ----------------------------------------------------------------------------

/// A GPU backend for tests: records jobs, writes a marker through the first object's memory,
/// and hangs when told to.
/// What a job looked like: context, batch address, batch length, (handle, address) of each
/// object.
type JobRecord = (u32, u64, u64, Vec<(u32, u64)>);

#[derive(Default)]
struct TestGpu {
    jobs: Mutex<Vec<JobRecord>>,
    hang: Mutex<bool>,
}

impl GpuBackend for TestGpu {
    fn execute(&self, job: &ExecJob<'_>) -> Result<(), ExecError> {
        self.jobs.lock().unwrap().push((
            job.ctx_id,
            job.batch_address(),
            job.batch_len,
            job.objects.iter().map(|o| (o.handle, o.address)).collect(),
        ));
        let (obj, off) = job.translate(job.objects[0].address + 16).unwrap();
        assert!(obj.memory.write_u32(off, 0xC0FFEE));
        if *self.hang.lock().unwrap() {
            return Err(ExecError::Hang(GpuHang {
                reason: "test hang".into(),
            }));
        }
        Ok(())
    }
}

struct Setup {
    dev: DrmDevice,
    data: u32,
    batch: u32,
    ctx: u32,
    out: u32,
}

impl Setup {
    fn new() -> Setup {
        let dev = sim();
        let data = dev.gem_create(8192).unwrap();
        let batch = dev.gem_create(4096).unwrap();
        let ctx = dev.context_create().unwrap();
        let out = dev.syncobj_create(false).unwrap();
        Setup {
            dev,
            data,
            batch,
            ctx,
            out,
        }
    }

    fn objects(&self) -> Vec<drm_i915_gem_exec_object2> {
        let pinned = EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS;
        vec![
            drm_i915_gem_exec_object2 {
                handle: self.data,
                offset: 0x1_0000,
                flags: pinned | EXEC_OBJECT_WRITE,
                ..Default::default()
            },
            drm_i915_gem_exec_object2 {
                handle: self.batch,
                offset: 0x4_0000,
                flags: pinned,
                ..Default::default()
            },
        ]
    }

    fn execbuf(&self, objs: &mut [drm_i915_gem_exec_object2]) -> drm_i915_gem_execbuffer2 {
        drm_i915_gem_execbuffer2 {
            buffers_ptr: objs.as_mut_ptr() as u64,
            buffer_count: objs.len() as u32,
            batch_start_offset: 0,
            batch_len: 64,
            flags: I915_EXEC_RENDER | I915_EXEC_NO_RELOC,
            rsvd1: self.ctx as u64,
            ..Default::default()
        }
    }

    fn submit(
        &self,
        objs: &mut [drm_i915_gem_exec_object2],
        edit: impl FnOnce(&mut drm_i915_gem_execbuffer2),
    ) -> Result<(), KernelError> {
        let mut eb = self.execbuf(objs);
        edit(&mut eb);
        self.dev.execbuffer2(&mut eb)
    }
}

/// Gives `e` the fence array `fences` (I915_EXEC_FENCE_ARRAY: the array and its length ride
/// in the cliprects fields).
fn fence_array(e: &mut drm_i915_gem_execbuffer2, fences: &[drm_i915_gem_exec_fence]) {
    e.flags |= I915_EXEC_FENCE_ARRAY;
    e.num_cliprects = fences.len() as u32;
    e.cliprects_ptr = fences.as_ptr() as u64;
}

/// Gives `e` the extension chain that starts at `ext` (I915_EXEC_USE_EXTENSIONS: the chain
/// rides in cliprects_ptr).
fn extensions<T>(e: &mut drm_i915_gem_execbuffer2, ext: &T) {
    e.flags |= I915_EXEC_USE_EXTENSIONS;
    e.cliprects_ptr = ext as *const T as u64;
}

/// The timeline-fences execbuf extension over `handles` at `points` (one point a handle).
fn timeline_fences(
    handles: &[drm_i915_gem_exec_fence],
    points: &[u64],
) -> drm_i915_gem_execbuffer_ext_timeline_fences {
    assert_eq!(handles.len(), points.len());
    drm_i915_gem_execbuffer_ext_timeline_fences {
        base: i915_user_extension {
            name: DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES,
            ..Default::default()
        },
        fence_count: handles.len() as u64,
        handles_ptr: handles.as_ptr() as u64,
        values_ptr: points.as_ptr() as u64,
    }
}

#[test]
fn valid_execbuf_fails_clearly_without_a_gpu() {
    let s = Setup::new();
    s.dev.sim().unwrap().set_gpu_backend(Arc::new(NoGpu));
    let mut objs = s.objects();
    let err = s.submit(&mut objs, |_| {}).unwrap_err();
    assert_eq!(err.errno(), Some(libc::ENODEV), "{err}");
}

#[test]
fn execbuf_bad_inputs_get_the_kernels_errno() {
    let s = Setup::new();
    let gpu = Arc::new(TestGpu::default());
    s.dev.sim().unwrap().set_gpu_backend(gpu.clone());
    let unsignaled = drm_i915_gem_exec_fence {
        handle: s.out,
        flags: I915_EXEC_FENCE_WAIT,
    };
    let bad_syncobj = drm_i915_gem_exec_fence {
        handle: 4242,
        flags: I915_EXEC_FENCE_SIGNAL,
    };
    let bad_fence_flags = drm_i915_gem_exec_fence {
        handle: s.out,
        flags: 1 << 5,
    };
    let ext_bad_name = i915_user_extension {
        name: 9,
        ..Default::default()
    };
    let timeline = s.dev.syncobj_create(false).unwrap();
    s.dev.syncobj_timeline_signal(&[timeline], &[3]).unwrap();
    let tl_handles = [drm_i915_gem_exec_fence {
        handle: timeline,
        flags: I915_EXEC_FENCE_WAIT,
    }];
    let tl_points_missing = [7u64];
    let tl_missing = timeline_fences(&tl_handles, &tl_points_missing);
    let tl_wait_signal = [drm_i915_gem_exec_fence {
        handle: timeline,
        flags: I915_EXEC_FENCE_WAIT | I915_EXEC_FENCE_SIGNAL,
    }];
    let tl_points_3 = [3u64];
    let tl_same_point = timeline_fences(&tl_wait_signal, &tl_points_3);
    let mut ext_flags = tl_same_point;
    ext_flags.base.flags = 1;
    ext_flags.handles_ptr = tl_handles.as_ptr() as u64;

    type EbEdit<'a> = Box<dyn Fn(&mut drm_i915_gem_execbuffer2) + 'a>;
    type ObjEdit<'a> = Box<dyn Fn(&mut Vec<drm_i915_gem_exec_object2>) + 'a>;
    let none_eb = || -> EbEdit { Box::new(|_| {}) };
    let none_obj = || -> ObjEdit { Box::new(|_| {}) };
    let cases: Vec<(&str, ObjEdit, EbEdit, i32)> = vec![
        (
            "no buffers",
            none_obj(),
            Box::new(|e| e.buffer_count = 0),
            libc::EINVAL,
        ),
        (
            "unknown exec flag",
            none_obj(),
            Box::new(|e| e.flags |= 1 << 22),
            libc::EINVAL,
        ),
        (
            "constants mode",
            none_obj(),
            Box::new(|e| e.flags |= I915_EXEC_CONSTANTS_MASK),
            libc::EINVAL,
        ),
        (
            "resource streamer",
            none_obj(),
            Box::new(|e| e.flags |= I915_EXEC_RESOURCE_STREAMER),
            libc::EINVAL,
        ),
        (
            "cliprects",
            none_obj(),
            Box::new(|e| e.num_cliprects = 1),
            libc::EINVAL,
        ),
        ("DR1", none_obj(), Box::new(|e| e.DR1 = 1), libc::EINVAL),
        (
            "unaligned batch start",
            none_obj(),
            Box::new(|e| e.batch_start_offset = 4),
            libc::EINVAL,
        ),
        (
            "unaligned batch length",
            none_obj(),
            Box::new(|e| e.batch_len = 12),
            libc::EINVAL,
        ),
        (
            "null buffer list",
            none_obj(),
            Box::new(|e| e.buffers_ptr = 0),
            libc::EFAULT,
        ),
        (
            "secure batch",
            none_obj(),
            Box::new(|e| e.flags |= I915_EXEC_SECURE),
            libc::EPERM,
        ),
        (
            "bad handle",
            Box::new(|o| o[0].handle = 999),
            none_eb(),
            libc::ENOENT,
        ),
        (
            "bad context",
            none_obj(),
            Box::new(|e| e.rsvd1 = 555),
            libc::ENOENT,
        ),
        (
            "blitter ring",
            none_obj(),
            Box::new(|e| e.flags = (e.flags & !I915_EXEC_RING_MASK) | I915_EXEC_BLT),
            libc::EINVAL,
        ),
        (
            "unknown ring",
            none_obj(),
            Box::new(|e| e.flags = (e.flags & !I915_EXEC_RING_MASK) | 9),
            libc::EINVAL,
        ),
        (
            "bsd selector on render",
            none_obj(),
            Box::new(|e| e.flags |= 1 << I915_EXEC_BSD_SHIFT),
            libc::EINVAL,
        ),
        (
            "unknown object flag",
            Box::new(|o| o[0].flags |= 1 << 9),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "needs GTT on full ppgtt",
            Box::new(|o| o[0].flags |= EXEC_OBJECT_NEEDS_GTT),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "alignment not a power of two",
            Box::new(|o| o[0].alignment = 3 * 4096),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "unaligned softpin",
            Box::new(|o| o[0].offset = 0x1_0010),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "non-canonical softpin",
            Box::new(|o| o[0].offset = 1 << 47),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "softpin beyond the address space",
            Box::new(|o| o[0].offset = 0xffff_ffff_ffff_f000),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "softpin above 4 GiB without 48-bit",
            Box::new(|o| {
                o[0].offset = 0x1_0000_0000;
                o[0].flags &= !EXEC_OBJECT_SUPPORTS_48B_ADDRESS;
            }),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "softpin misaligned to its alignment",
            Box::new(|o| o[0].alignment = 0x10_0000),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "overlapping softpin",
            Box::new(|o| o[1].offset = 0x1_1000),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "unaligned pad_to_size",
            Box::new(|o| {
                o[0].flags |= EXEC_OBJECT_PAD_TO_SIZE;
                o[0].rsvd1 = 100;
            }),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "pad_to_size makes objects overlap",
            Box::new(|o| {
                o[0].flags |= EXEC_OBJECT_PAD_TO_SIZE;
                o[0].rsvd1 = 0x10_0000;
            }),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "duplicate handle",
            Box::new(|o| o[0].handle = o[1].handle),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "writable batch",
            Box::new(|o| o[1].flags |= EXEC_OBJECT_WRITE),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "batch outside its object",
            none_obj(),
            Box::new(|e| {
                e.batch_start_offset = 4096;
                e.batch_len = 8;
            }),
            libc::EINVAL,
        ),
        (
            "batch start at the end",
            none_obj(),
            Box::new(|e| {
                e.batch_start_offset = 4096;
                e.batch_len = 0;
            }),
            libc::EINVAL,
        ),
        (
            "relocations (not simulated)",
            Box::new(|o| o[0].relocation_count = 1),
            none_eb(),
            libc::EINVAL,
        ),
        (
            "sync_file in-fence (not simulated)",
            none_obj(),
            Box::new(|e| e.flags |= I915_EXEC_FENCE_IN),
            libc::EINVAL,
        ),
        (
            "fence array: waits on a syncobj without fence",
            none_obj(),
            Box::new(|e| fence_array(e, std::slice::from_ref(&unsignaled))),
            libc::EINVAL,
        ),
        (
            "fence array: bad syncobj",
            none_obj(),
            Box::new(|e| fence_array(e, std::slice::from_ref(&bad_syncobj))),
            libc::ENOENT,
        ),
        (
            "fence array: unknown fence flags",
            none_obj(),
            Box::new(|e| fence_array(e, std::slice::from_ref(&bad_fence_flags))),
            libc::EINVAL,
        ),
        (
            "fence array with extensions",
            none_obj(),
            Box::new(|e| {
                e.flags |= I915_EXEC_FENCE_ARRAY | I915_EXEC_USE_EXTENSIONS;
            }),
            libc::EINVAL,
        ),
        (
            "unknown execbuf extension",
            none_obj(),
            Box::new(|e| extensions(e, &ext_bad_name)),
            libc::EINVAL,
        ),
        (
            "extension with flags",
            none_obj(),
            Box::new(|e| extensions(e, &ext_flags)),
            libc::EINVAL,
        ),
        (
            "timeline point not submitted",
            none_obj(),
            Box::new(|e| extensions(e, &tl_missing)),
            libc::EINVAL,
        ),
        (
            "wait and signal the same timeline point",
            none_obj(),
            Box::new(|e| extensions(e, &tl_same_point)),
            libc::EINVAL,
        ),
    ];
    let baseline = counts(&s.dev);
    for (name, obj_edit, eb_edit, want) in &cases {
        let mut objs = s.objects();
        obj_edit(&mut objs);
        let got = errno(s.submit(&mut objs, eb_edit));
        assert_eq!(
            got,
            *want,
            "{name}: got {} expected {}",
            kernel_iface::errno_name(got),
            kernel_iface::errno_name(*want)
        );
        assert_eq!(counts(&s.dev), baseline, "{name}: objects leaked or lost");
        assert!(
            gpu.jobs.lock().unwrap().is_empty(),
            "{name}: a rejected batch ran"
        );
        assert_eq!(s.dev.syncobj_query(&[timeline], 0).unwrap(), [3], "{name}");
    }
    // The device keeps working: the unmodified submission runs.
    let mut objs = s.objects();
    s.submit(&mut objs, |_| {}).unwrap();
    let jobs = gpu.jobs.lock().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].0, s.ctx);
    assert_eq!(jobs[0].1, 0x4_0000);
    assert_eq!(jobs[0].2, 64);
    assert_eq!(jobs[0].3, vec![(s.data, 0x1_0000), (s.batch, 0x4_0000)]);
    let m = s.dev.gem_mmap(s.data, 4096).unwrap();
    let mut marker = [0u8; 4];
    m.read(16, &mut marker);
    assert_eq!(
        u32::from_le_bytes(marker),
        0xC0FFEE,
        "the backend wrote through the BO memory"
    );
}

#[test]
fn execbuf_signals_and_waits_on_syncobjs() {
    let s = Setup::new();
    let gpu = Arc::new(TestGpu::default());
    s.dev.sim().unwrap().set_gpu_backend(gpu.clone());
    // Binary out-fence through a fence array.
    let mut fences = [drm_i915_gem_exec_fence {
        handle: s.out,
        flags: I915_EXEC_FENCE_SIGNAL,
    }];
    let mut objs = s.objects();
    s.submit(&mut objs, |e| fence_array(e, &fences)).unwrap();
    s.dev.syncobj_wait(&[s.out], 0, true).unwrap();
    // Now the same syncobj can be waited on by the next batch.
    fences[0].flags = I915_EXEC_FENCE_WAIT;
    let mut objs = s.objects();
    s.submit(&mut objs, |e| fence_array(e, &fences)).unwrap();
    // Timeline: signal point 5 through the extension.
    let tl = s.dev.syncobj_create(false).unwrap();
    let handles = [drm_i915_gem_exec_fence {
        handle: tl,
        flags: I915_EXEC_FENCE_SIGNAL,
    }];
    let points = [5u64];
    let ext = timeline_fences(&handles, &points);
    let mut objs = s.objects();
    s.submit(&mut objs, |e| extensions(e, &ext)).unwrap();
    assert_eq!(s.dev.syncobj_query(&[tl], 0).unwrap(), [5]);
    assert_eq!(gpu.jobs.lock().unwrap().len(), 3);
    // The BOs are idle again.
    s.dev.gem_wait(s.data, 0).unwrap();
}

#[test]
fn unpinned_objects_get_placed_and_written_back() {
    let s = Setup::new();
    s.dev
        .sim()
        .unwrap()
        .set_gpu_backend(Arc::new(TestGpu::default()));
    let mut objs = s.objects();
    objs[0].flags &= !EXEC_OBJECT_PINNED;
    objs[0].offset = 0;
    s.submit(&mut objs, |_| {}).unwrap();
    let addr = objs[0].offset;
    assert_ne!(addr, 0, "the kernel reports where it put the object");
    assert_eq!(addr % 4096, 0);
    let batch = (0x4_0000u64, 0x4_1000u64);
    assert!(
        addr + 8192 <= batch.0 || addr >= batch.1,
        "placed over a softpinned object"
    );
    // Placement is stable across submissions.
    let mut again = s.objects();
    again[0].flags &= !EXEC_OBJECT_PINNED;
    s.submit(&mut again, |_| {}).unwrap();
    assert_eq!(again[0].offset, addr);
}

#[test]
fn hang_bans_a_non_recoverable_context_and_signals_the_error() {
    let s = Setup::new();
    let gpu = Arc::new(TestGpu::default());
    s.dev.sim().unwrap().set_gpu_backend(gpu.clone());
    *gpu.hang.lock().unwrap() = true;
    let fences = [drm_i915_gem_exec_fence {
        handle: s.out,
        flags: I915_EXEC_FENCE_SIGNAL,
    }];
    let mut objs = s.objects();
    // The execbuf itself succeeds: the hang happens "later" on the GPU.
    s.submit(&mut objs, |e| fence_array(e, &fences)).unwrap();
    s.dev.syncobj_wait(&[s.out], monotonic_ns(), true).unwrap();
    let sim = s.dev.sim().unwrap();
    assert_eq!(sim.syncobj_fence_error(s.out).unwrap(), Some(-libc::EIO));
    let stats = s.dev.context_reset_stats(s.ctx).unwrap();
    assert_eq!(stats.batch_active, 1);
    assert_eq!(stats.reset_count, 1);
    // The context is banned: EIO, which the API reports as device lost.
    *gpu.hang.lock().unwrap() = false;
    let mut objs = s.objects();
    let err = s.submit(&mut objs, |_| {}).unwrap_err();
    assert!(matches!(err, KernelError::DeviceLost(_)), "{err}");
    assert_eq!(err.errno(), Some(libc::EIO));
    assert_eq!(gpu.jobs.lock().unwrap().len(), 1);
    // A recoverable context (the default one) survives its hang.
    *gpu.hang.lock().unwrap() = true;
    let mut objs = s.objects();
    s.submit(&mut objs, |e| e.rsvd1 = 0).unwrap();
    *gpu.hang.lock().unwrap() = false;
    let mut objs = s.objects();
    s.submit(&mut objs, |e| e.rsvd1 = 0).unwrap();
    assert_eq!(s.dev.context_reset_stats(0).unwrap().batch_active, 1);
    assert_eq!(gpu.jobs.lock().unwrap().len(), 3);
    // A batch that depends on a failed fence is cancelled with its error, not run.
    let fences = [drm_i915_gem_exec_fence {
        handle: s.out,
        flags: I915_EXEC_FENCE_WAIT,
    }];
    let out2 = s.dev.syncobj_create(false).unwrap();
    let both = [
        fences[0],
        drm_i915_gem_exec_fence {
            handle: out2,
            flags: I915_EXEC_FENCE_SIGNAL,
        },
    ];
    let mut objs = s.objects();
    s.submit(&mut objs, |e| {
        e.rsvd1 = 0;
        fence_array(e, &both);
    })
    .unwrap();
    assert_eq!(
        gpu.jobs.lock().unwrap().len(),
        3,
        "the dependent batch must not run"
    );
    assert_eq!(sim.syncobj_fence_error(out2).unwrap(), Some(-libc::EIO));
}

// --- sync objects ---------------------------------------------------------------------------

#[test]
fn binary_syncobj_signal_wait_reset() {
    let dev = sim();
    let s = dev.syncobj_create(false).unwrap();
    // No fence yet: EINVAL unless waiting for submit; then a deadline in the past times out.
    assert_eq!(errno(dev.syncobj_wait(&[s], 0, true)), libc::EINVAL);
    let r = dev.syncobj_wait_flags(&[s], monotonic_ns(), DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT);
    assert!(matches!(r, Err(KernelError::Timeout)), "{r:?}");
    dev.syncobj_signal(&[s]).unwrap();
    dev.syncobj_wait(&[s], 0, true).unwrap();
    dev.syncobj_reset(&[s]).unwrap();
    assert_eq!(errno(dev.syncobj_wait(&[s], 0, true)), libc::EINVAL);
    let signaled = dev.syncobj_create(true).unwrap();
    dev.syncobj_wait(&[signaled], 0, true).unwrap();
    // Wait-any reports which one is signaled.
    let first = dev
        .syncobj_wait_flags(&[s, signaled], 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT)
        .unwrap();
    assert_eq!(first, 1);
    let r = dev.syncobj_wait_flags(
        &[s, signaled],
        0,
        DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
    );
    assert!(matches!(r, Err(KernelError::Timeout)));
    // Bad input.
    assert_eq!(errno(dev.syncobj_wait(&[999], 0, true)), libc::ENOENT);
    assert_eq!(errno(dev.syncobj_wait(&[], 0, true)), libc::EINVAL);
    assert_eq!(errno(dev.syncobj_wait_flags(&[s], 0, 1 << 9)), libc::EINVAL);
    assert_eq!(errno(dev.syncobj_signal(&[s, 999])), libc::ENOENT);
    assert_eq!(errno(dev.syncobj_reset(&[])), libc::EINVAL);
    assert_eq!(errno(dev.syncobj_destroy(999)), libc::EINVAL);
    let mut c = drm_syncobj_create {
        handle: 0,
        flags: 2,
    };
    assert_eq!(errno(dev.ioctl(&mut c)), libc::EINVAL);
    dev.syncobj_destroy(s).unwrap();
    dev.syncobj_destroy(signaled).unwrap();
    assert_eq!(counts(&dev).syncobjs, 0);
}

#[test]
fn a_submission_and_its_fence_wait_send_no_wakeup_when_nobody_waits() {
    // The job runs synchronously inside EXECBUFFER2, so its fences are signaled before anyone
    // can wait: signaling them must not cost a wake-up system call (it did, three per
    // submission and wait, a third of an empty submission's time).
    let s = Setup::new();
    s.dev
        .sim()
        .unwrap()
        .set_gpu_backend(Arc::new(TestGpu::default()));
    let fences = [drm_i915_gem_exec_fence {
        handle: s.out,
        flags: I915_EXEC_FENCE_SIGNAL,
    }];
    for _ in 0..3 {
        let mut objs = s.objects();
        s.submit(&mut objs, |e| fence_array(e, &fences)).unwrap();
        s.dev
            .syncobj_wait_flags(&[s.out], i64::MAX, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL)
            .unwrap();
        s.dev.syncobj_reset(&[s.out]).unwrap();
    }
    assert_eq!(s.dev.sim().unwrap().sync_wakeups(), 0);

    // A thread blocked in a wait is woken by the signal (once it is known to be blocked).
    let dev = Arc::new(s.dev);
    let out = s.out;
    let waiter = {
        let dev = dev.clone();
        std::thread::spawn(move || {
            dev.syncobj_wait_flags(
                &[out],
                i64::MAX,
                DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
            )
            .map(|_| ())
        })
    };
    while dev.sim().unwrap().sync_waiters() == 0 {
        std::thread::yield_now();
    }
    dev.syncobj_signal(&[out]).unwrap();
    waiter.join().unwrap().unwrap();
    assert!(dev.sim().unwrap().sync_wakeups() >= 1);
    assert_eq!(dev.sim().unwrap().sync_waiters(), 0);
}

#[test]
fn blocking_wait_wakes_when_another_thread_signals() {
    let dev = Arc::new(sim());
    let s = dev.syncobj_create(false).unwrap();
    let tl = dev.syncobj_create(false).unwrap();
    let waiter = {
        let dev = dev.clone();
        std::thread::spawn(move || {
            dev.syncobj_wait_flags(
                &[s],
                i64::MAX,
                DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
            )
            .map(|_| ())
        })
    };
    let tl_waiter = {
        let dev = dev.clone();
        std::thread::spawn(move || {
            dev.syncobj_timeline_wait(
                &[tl],
                &[4],
                i64::MAX,
                DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
            )
            .map(|_| ())
        })
    };
    dev.syncobj_signal(&[s]).unwrap();
    dev.syncobj_timeline_signal(&[tl], &[2]).unwrap();
    dev.syncobj_timeline_signal(&[tl], &[4]).unwrap();
    waiter.join().unwrap().unwrap();
    tl_waiter.join().unwrap().unwrap();
}

#[test]
fn timeline_signal_query_wait_transfer() {
    let dev = sim();
    let tl = dev.syncobj_create(false).unwrap();
    assert_eq!(dev.syncobj_query(&[tl], 0).unwrap(), [0]);
    dev.syncobj_timeline_signal(&[tl], &[3]).unwrap();
    assert_eq!(dev.syncobj_query(&[tl], 0).unwrap(), [3]);
    assert_eq!(
        dev.syncobj_query(&[tl], DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED)
            .unwrap(),
        [3]
    );
    dev.syncobj_timeline_wait(&[tl], &[2], 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL)
        .unwrap();
    dev.syncobj_timeline_wait(&[tl], &[3], 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL)
        .unwrap();
    // Point 5 is not submitted: EINVAL, or a timeout when waiting for submit.
    assert_eq!(
        errno(dev.syncobj_timeline_wait(&[tl], &[5], 0, 0)),
        libc::EINVAL
    );
    let r = dev.syncobj_timeline_wait(
        &[tl],
        &[5],
        monotonic_ns(),
        DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
    );
    assert!(matches!(r, Err(KernelError::Timeout)), "{r:?}");
    let r = dev.syncobj_timeline_wait(&[tl], &[5], 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE);
    assert!(matches!(r, Err(KernelError::Timeout)), "{r:?}");
    dev.syncobj_timeline_wait(&[tl], &[3], 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE)
        .unwrap();
    // Wait-any over two points picks the one that is reached.
    let other = dev.syncobj_create(false).unwrap();
    dev.syncobj_timeline_signal(&[other], &[1]).unwrap();
    let first = dev
        .syncobj_timeline_wait(
            &[tl, other],
            &[9, 1],
            0,
            DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
        )
        .unwrap();
    assert_eq!(first, 1);
    // Transfer timeline point 3 into a binary syncobj, and a binary fence into point 10.
    let bin = dev.syncobj_create(false).unwrap();
    dev.syncobj_transfer(bin, 0, tl, 3, 0).unwrap();
    dev.syncobj_wait(&[bin], 0, true).unwrap();
    dev.syncobj_transfer(tl, 10, bin, 0, 0).unwrap();
    assert_eq!(dev.syncobj_query(&[tl], 0).unwrap(), [10]);
    // Transfer from a point that does not exist.
    assert_eq!(errno(dev.syncobj_transfer(bin, 0, tl, 11, 0)), libc::EINVAL);
    assert_eq!(errno(dev.syncobj_transfer(bin, 0, 999, 0, 0)), libc::ENOENT);
    // Bad input.
    assert_eq!(errno(dev.syncobj_query(&[tl], 4)), libc::EINVAL);
    assert_eq!(
        errno(dev.syncobj_timeline_signal(&[999], &[1])),
        libc::ENOENT
    );
    assert_eq!(
        errno(dev.syncobj_timeline_wait(&[tl], &[1], 0, 1 << 7)),
        libc::EINVAL
    );
    // Many points keep memory bounded and the value right.
    for p in 11..200 {
        dev.syncobj_timeline_signal(&[tl], &[p]).unwrap();
    }
    assert_eq!(dev.syncobj_query(&[tl], 0).unwrap(), [199]);
}

// --- render nodes ---------------------------------------------------------------------------

#[test]
fn render_node_enumeration_without_i915_finds_nothing() {
    // On a machine without an Intel GPU this is empty; where there is one, only i915 nodes.
    let nodes = DrmDevice::enumerate_render_nodes();
    for node in &nodes {
        assert_eq!(node.driver, "i915");
    }
    if !std::path::Path::new("/dev/dri").exists() {
        assert!(nodes.is_empty());
    }
    // A "render node" that is not a DRM device is skipped, not a crash.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fake-dri");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("renderD128"), b"not a device").unwrap();
    std::fs::write(dir.join("card0"), b"ignored").unwrap();
    assert!(DrmDevice::enumerate_render_nodes_in(&dir).is_empty());
    assert!(DrmDevice::enumerate_render_nodes_in(&dir.join("missing")).is_empty());
}
