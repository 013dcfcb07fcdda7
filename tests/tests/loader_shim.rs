//! The loader tests' second configuration: Ferrite's real render-node path (FERRITE_DEVICE
//! unset) on Mesa's Intel noop drm-shim, an `LD_PRELOAD` library that fakes
//! `/dev/dri/renderD128` as a Skylake GT2 with an i915 written by Mesa's authors, not ours.
//! `scripts/peer-setup` builds it. The shim executes nothing (EXECBUFFER2 is a no-op, every
//! syncobj wait succeeds at once), so results are not checked, only that every call the
//! driver makes is answered and every Vulkan command returns what it should. What the shim
//! answers differently from a real i915 is listed in docs/kernel.md ("Mesa's drm-shim").
//!
//! The work runs in a child process of this test binary (the preload must be in place before
//! the process starts). Without the shim the test prints why and passes: the shim is a peer
//! tool, built by `scripts/peer-setup`, not a build dependency.

mod compute_common;

use std::path::PathBuf;

use ash::vk;
use compute_common::*;

/// Marks the child process.
const CHILD: &str = "FERRITE_SHIM_CHILD";
/// Printed by the child as its last line.
const DONE: &str = "SHIM-WORKLOAD-DONE";

/// The shim library: `FERRITE_ANV_SHIM` (what `scripts/peer-setup` prints), else its place in
/// the peer-setup cache (`FERRITE_MESA_CACHE`, default `~/.cache/ferrite/mesa`).
fn shim_library() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FERRITE_ANV_SHIM") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let cache = match std::env::var_os("FERRITE_MESA_CACHE") {
        Some(c) => PathBuf::from(c),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/ferrite/mesa"),
    };
    Some(cache.join("build/src/intel/tools/libintel_noop_drm_shim.so")).filter(|p| p.is_file())
}

#[test]
fn real_render_node_path_on_mesa_drm_shim() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let Some(shim) = shim_library() else {
        eprintln!(
            "skipped: Mesa's noop drm-shim is not built (run scripts/peer-setup, or set FERRITE_ANV_SHIM)"
        );
        return;
    };
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "shim_child_workload",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("LD_PRELOAD", &shim)
        .env_remove("FERRITE_DEVICE")
        .env(
            "VK_DRIVER_FILES",
            ferrite_tests::icd::manifest().path.as_os_str(),
        )
        .env("FERRITE_TESTS_OTHER_DRIVER", "1")
        .env("FERRITE_LOG", "kernel_iface=info,warn")
        .output()
        .expect("running the child test process");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains(DONE),
        "the workload on the drm-shim ({}) failed:\n{stdout}\n{stderr}",
        shim.display()
    );
    // Every ioctl the driver issued is one the shim implements.
    let unhandled: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("DRM_SHIM: unhandled") || l.contains("Unknown DRM_IOCTL"))
        .collect();
    assert!(
        unhandled.is_empty(),
        "the driver used ioctls the shim does not know:\n{}",
        unhandled.join("\n")
    );
    // The shim's kernel has no timeline fences: the fallback is what ran.
    assert!(
        stderr.contains("timeline semaphores use binary syncobjs"),
        "{stderr}"
    );
}

/// Runs only as the child of `real_render_node_path_on_mesa_drm_shim`.
#[test]
#[ignore = "the child of real_render_node_path_on_mesa_drm_shim (needs LD_PRELOAD)"]
fn shim_child_workload() {
    assert!(
        std::env::var_os(CHILD).is_some(),
        "run through real_render_node_path_on_mesa_drm_shim"
    );
    let mut c = Ctx::new();
    // SAFETY: a live physical device.
    let (props, mem) = unsafe {
        (
            c.h.instance.get_physical_device_properties(c.pd),
            c.h.instance.get_physical_device_memory_properties(c.pd),
        )
    };
    assert_eq!(props.device_id, 0x1912);
    // The shim answers I915_PARAM_HAS_LLC = 0, and the memory types follow the kernel's
    // answer, not the device table's (SKL has an LLC): no cached type.
    let types = &mem.memory_types[..mem.memory_type_count as usize];
    assert!(!types.is_empty());
    assert!(types.iter().all(|t| !t
        .property_flags
        .contains(vk::MemoryPropertyFlags::HOST_CACHED)));

    // Memory: the shim's objects are real shared memory, so a mapping reads back.
    let b = c.buffer(4096);
    c.buf(b).write_u32s(&[1, 2, 3, 4]);
    assert_eq!(c.buf(b).read_u32s(4), [1, 2, 3, 4]);

    // A pipeline, descriptors, push constants, a dispatch, submission and a fence wait.
    let x = c.buffer(256 * 4);
    let y = c.buffer(256 * 4);
    let k = c.kernel(&spirv("saxpy", None), 2, 8);
    c.bind(k, &[x, y]);
    let mut pc = Vec::new();
    pc.extend(2.0f32.to_le_bytes());
    pc.extend(256u32.to_le_bytes());
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        push(&c, cb, k, &pc);
        dispatch(&c, cb, 4, 1);
        c.barrier(cb);
    })
    .expect("submit + fence wait");

    // SAFETY: valid objects on a live device; everything destroyed before `finish`.
    unsafe {
        // Semaphores between submissions, an empty submission with a fence, queue idle.
        let sem = c
            .dev
            .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            .unwrap();
        let cb = c.begin_command_buffer();
        c.dev.end_command_buffer(cb).unwrap();
        let cbs = [cb];
        let sems = [sem];
        let stages = [vk::PipelineStageFlags::COMPUTE_SHADER];
        let first = vk::SubmitInfo::default()
            .command_buffers(&cbs)
            .signal_semaphores(&sems);
        let second = vk::SubmitInfo::default()
            .wait_semaphores(&sems)
            .wait_dst_stage_mask(&stages);
        let fence = c.fence();
        c.dev
            .queue_submit(c.queue, &[first, second], fence)
            .unwrap();
        c.dev.wait_for_fences(&[fence], true, u64::MAX).unwrap();
        c.dev.queue_wait_idle(c.queue).unwrap();
        c.dev.device_wait_idle().unwrap();
        c.dev.destroy_fence(fence, None);
        c.dev.destroy_semaphore(sem, None);
        c.dev.free_command_buffers(c.cmd_pool, &cbs);
    }
    c.finish();

    // Error paths (invalid use on purpose, so without validation): an allocation larger than
    // the heap is refused before the kernel sees it.
    let h = ferrite_tests::icd::Harness::with_validation(false);
    let pd = h.physical_device();
    let dev = h.create_device(pd);
    // SAFETY: a live device; destroyed below.
    unsafe {
        let heap = h
            .instance
            .get_physical_device_memory_properties(pd)
            .memory_heaps[0]
            .size;
        let too_big = vk::MemoryAllocateInfo::default()
            .allocation_size(heap + 4096)
            .memory_type_index(0);
        assert_eq!(
            dev.allocate_memory(&too_big, None),
            Err(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY)
        );
        ferrite_tests::icd::destroy_device(&dev);
    }
    println!("{DONE}");
}
