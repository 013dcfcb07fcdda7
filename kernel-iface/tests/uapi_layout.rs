//! Compiles a C probe against libdrm's `i915_drm.h`/`drm.h` and checks every struct size,
//! field offset, ioctl request number and constant of `kernel_iface::uapi` against it.
//!
//! Needs `gcc` and libdrm's headers (`scripts/setup` installs `gcc libdrm-dev`).

use std::fmt::Write as _;
use std::mem::{offset_of, size_of};
use std::path::PathBuf;
use std::process::Command;

use kernel_iface::uapi::*;

struct StructCheck {
    c_name: &'static str,
    size: usize,
    fields: Vec<(&'static str, usize)>,
}

macro_rules! st {
    ($t:ident { $($f:ident),* $(,)? }) => {
        StructCheck {
            c_name: concat!("struct ", stringify!($t)),
            size: size_of::<$t>(),
            fields: vec![$((stringify!($f), offset_of!($t, $f))),*],
        }
    };
}

fn structs() -> Vec<StructCheck> {
    vec![
        st!(drm_version {
            version_major,
            version_minor,
            version_patchlevel,
            name_len,
            name,
            date_len,
            date,
            desc_len,
            desc
        }),
        st!(drm_gem_close { handle, pad }),
        st!(drm_get_cap { capability, value }),
        st!(drm_syncobj_create { handle, flags }),
        st!(drm_syncobj_destroy { handle, pad }),
        st!(drm_syncobj_transfer {
            src_handle,
            dst_handle,
            src_point,
            dst_point,
            flags,
            pad
        }),
        st!(drm_syncobj_wait {
            handles,
            timeout_nsec,
            count_handles,
            flags,
            first_signaled,
            pad
        }),
        st!(drm_syncobj_timeline_wait {
            handles,
            points,
            timeout_nsec,
            count_handles,
            flags,
            first_signaled,
            pad
        }),
        st!(drm_syncobj_array {
            handles,
            count_handles,
            pad
        }),
        st!(drm_syncobj_timeline_array {
            handles,
            points,
            count_handles,
            flags
        }),
        st!(i915_user_extension {
            next_extension,
            name,
            flags,
            rsvd
        }),
        st!(i915_engine_class_instance {
            engine_class,
            engine_instance
        }),
        st!(drm_i915_getparam { param, value }),
        st!(drm_i915_gem_create { size, handle, pad }),
        st!(drm_i915_gem_create_ext {
            size,
            handle,
            flags,
            extensions
        }),
        st!(drm_i915_gem_mmap_offset {
            handle,
            pad,
            offset,
            flags,
            extensions
        }),
        st!(drm_i915_gem_set_domain {
            handle,
            read_domains,
            write_domain
        }),
        st!(drm_i915_gem_relocation_entry {
            target_handle,
            delta,
            offset,
            presumed_offset,
            read_domains,
            write_domain
        }),
        st!(drm_i915_gem_exec_object2 {
            handle,
            relocation_count,
            relocs_ptr,
            alignment,
            offset,
            flags,
            rsvd1,
            rsvd2
        }),
        st!(drm_i915_gem_exec_fence { handle, flags }),
        st!(drm_i915_gem_execbuffer_ext_timeline_fences {
            base,
            fence_count,
            handles_ptr,
            values_ptr
        }),
        st!(drm_i915_gem_execbuffer2 {
            buffers_ptr,
            buffer_count,
            batch_start_offset,
            batch_len,
            DR1,
            DR4,
            num_cliprects,
            cliprects_ptr,
            flags,
            rsvd1,
            rsvd2
        }),
        st!(drm_i915_gem_wait {
            bo_handle,
            flags,
            timeout_ns
        }),
        st!(drm_i915_gem_context_create { ctx_id, pad }),
        st!(drm_i915_gem_context_create_ext {
            ctx_id,
            flags,
            extensions
        }),
        st!(drm_i915_gem_context_param {
            ctx_id,
            size,
            param,
            value
        }),
        st!(drm_i915_gem_context_create_ext_setparam { base, param }),
        st!(drm_i915_gem_context_destroy { ctx_id, pad }),
        st!(drm_i915_reset_stats {
            ctx_id,
            flags,
            reset_count,
            batch_active,
            batch_pending,
            pad
        }),
        st!(drm_i915_query_item {
            query_id,
            length,
            flags,
            data_ptr
        }),
        st!(drm_i915_query {
            num_items,
            flags,
            items_ptr
        }),
        st!(drm_i915_query_topology_info {
            flags,
            max_slices,
            max_subslices,
            max_eus_per_subslice,
            subslice_offset,
            subslice_stride,
            eu_offset,
            eu_stride
        }),
        st!(drm_i915_engine_info {
            engine,
            rsvd0,
            flags,
            capabilities,
            logical_instance,
            rsvd1,
            rsvd2
        }),
        st!(drm_i915_query_engine_info { num_engines, rsvd }),
    ]
}

/// (C expression, C type to convert it to, Rust value converted the same way).
fn values() -> Vec<(&'static str, &'static str, i64)> {
    macro_rules! v {
        ($($name:ident),* $(,)?) => { vec![$((stringify!($name), "unsigned long long", $name as i64)),*] };
    }
    // Ioctl request numbers.
    let mut out = v![
        DRM_IOCTL_VERSION,
        DRM_IOCTL_GEM_CLOSE,
        DRM_IOCTL_GET_CAP,
        DRM_CAP_SYNCOBJ,
        DRM_CAP_SYNCOBJ_TIMELINE,
        DRM_IOCTL_SYNCOBJ_CREATE,
        DRM_IOCTL_SYNCOBJ_DESTROY,
        DRM_IOCTL_SYNCOBJ_WAIT,
        DRM_IOCTL_SYNCOBJ_RESET,
        DRM_IOCTL_SYNCOBJ_SIGNAL,
        DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT,
        DRM_IOCTL_SYNCOBJ_QUERY,
        DRM_IOCTL_SYNCOBJ_TRANSFER,
        DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
        DRM_IOCTL_I915_GETPARAM,
        DRM_IOCTL_I915_GEM_CREATE,
        DRM_IOCTL_I915_GEM_CREATE_EXT,
        DRM_IOCTL_I915_GEM_MMAP_OFFSET,
        DRM_IOCTL_I915_GEM_SET_DOMAIN,
        DRM_IOCTL_I915_GEM_EXECBUFFER2,
        DRM_IOCTL_I915_GEM_EXECBUFFER2_WR,
        DRM_IOCTL_I915_GEM_WAIT,
        DRM_IOCTL_I915_GEM_CONTEXT_CREATE,
        DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT,
        DRM_IOCTL_I915_GEM_CONTEXT_DESTROY,
        DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM,
        DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM,
        DRM_IOCTL_I915_GET_RESET_STATS,
        DRM_IOCTL_I915_QUERY,
        DRM_COMMAND_BASE,
        // 64-bit flags
        EXEC_OBJECT_NEEDS_FENCE,
        EXEC_OBJECT_NEEDS_GTT,
        EXEC_OBJECT_WRITE,
        EXEC_OBJECT_SUPPORTS_48B_ADDRESS,
        EXEC_OBJECT_PINNED,
        EXEC_OBJECT_PAD_TO_SIZE,
        EXEC_OBJECT_ASYNC,
        EXEC_OBJECT_CAPTURE,
        I915_EXEC_RING_MASK,
        I915_EXEC_DEFAULT,
        I915_EXEC_RENDER,
        I915_EXEC_BSD,
        I915_EXEC_BLT,
        I915_EXEC_VEBOX,
        I915_EXEC_CONSTANTS_MASK,
        I915_EXEC_GEN7_SOL_RESET,
        I915_EXEC_SECURE,
        I915_EXEC_IS_PINNED,
        I915_EXEC_NO_RELOC,
        I915_EXEC_HANDLE_LUT,
        I915_EXEC_BSD_SHIFT,
        I915_EXEC_BSD_MASK,
        I915_EXEC_RESOURCE_STREAMER,
        I915_EXEC_FENCE_IN,
        I915_EXEC_FENCE_OUT,
        I915_EXEC_BATCH_FIRST,
        I915_EXEC_FENCE_ARRAY,
        I915_EXEC_FENCE_SUBMIT,
        I915_EXEC_USE_EXTENSIONS,
        I915_EXEC_CONTEXT_ID_MASK,
        I915_MMAP_OFFSET_GTT,
        I915_MMAP_OFFSET_WC,
        I915_MMAP_OFFSET_WB,
        I915_MMAP_OFFSET_UC,
        I915_MMAP_OFFSET_FIXED,
        I915_CONTEXT_PARAM_BAN_PERIOD,
        I915_CONTEXT_PARAM_NO_ZEROMAP,
        I915_CONTEXT_PARAM_GTT_SIZE,
        I915_CONTEXT_PARAM_NO_ERROR_CAPTURE,
        I915_CONTEXT_PARAM_BANNABLE,
        I915_CONTEXT_PARAM_PRIORITY,
        I915_CONTEXT_PARAM_SSEU,
        I915_CONTEXT_PARAM_RECOVERABLE,
        I915_CONTEXT_PARAM_VM,
        I915_CONTEXT_PARAM_ENGINES,
        I915_CONTEXT_PARAM_PERSISTENCE,
        DRM_I915_QUERY_TOPOLOGY_INFO,
        DRM_I915_QUERY_ENGINE_INFO,
        DRM_I915_QUERY_PERF_CONFIG,
        DRM_I915_QUERY_MEMORY_REGIONS,
    ];
    macro_rules! w {
        ($ctype:literal: $($name:ident),* $(,)?) => { $(out.push((stringify!($name), $ctype, $name as i64));)* };
    }
    w!("unsigned int": DRM_SYNCOBJ_CREATE_SIGNALED, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
        DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
        DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED, I915_EXEC_FENCE_WAIT, I915_EXEC_FENCE_SIGNAL,
        DRM_I915_GEM_EXECBUFFER_EXT_TIMELINE_FENCES, I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS,
        I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE, I915_CONTEXT_CREATE_FLAGS_UNKNOWN,
        I915_CONTEXT_CREATE_EXT_SETPARAM, I915_CONTEXT_CREATE_EXT_CLONE,
        I915_GEM_CREATE_EXT_FLAG_NEEDS_CPU_ACCESS, I915_GEM_CREATE_EXT_MEMORY_REGIONS,
        I915_GEM_CREATE_EXT_PROTECTED_CONTENT, I915_GEM_DOMAIN_CPU, I915_GEM_DOMAIN_RENDER,
        I915_GEM_DOMAIN_SAMPLER, I915_GEM_DOMAIN_COMMAND, I915_GEM_DOMAIN_INSTRUCTION,
        I915_GEM_DOMAIN_VERTEX, I915_GEM_DOMAIN_GTT, I915_GEM_DOMAIN_WC);
    w!("int": I915_PARAM_CHIPSET_ID, I915_PARAM_HAS_EXECBUF2, I915_PARAM_HAS_LLC,
        I915_PARAM_HAS_WAIT_TIMEOUT, I915_PARAM_HAS_EXEC_NO_RELOC, I915_PARAM_HAS_EXEC_HANDLE_LUT,
        I915_PARAM_MMAP_VERSION, I915_PARAM_REVISION, I915_PARAM_SUBSLICE_TOTAL,
        I915_PARAM_EU_TOTAL, I915_PARAM_HAS_GPU_RESET, I915_PARAM_HAS_EXEC_SOFTPIN,
        I915_PARAM_MMAP_GTT_VERSION, I915_PARAM_HAS_SCHEDULER, I915_PARAM_HAS_EXEC_ASYNC,
        I915_PARAM_HAS_EXEC_FENCE, I915_PARAM_HAS_EXEC_CAPTURE, I915_PARAM_SLICE_MASK,
        I915_PARAM_SUBSLICE_MASK, I915_PARAM_HAS_EXEC_BATCH_FIRST, I915_PARAM_HAS_EXEC_FENCE_ARRAY,
        I915_PARAM_HAS_CONTEXT_ISOLATION, I915_PARAM_CS_TIMESTAMP_FREQUENCY,
        I915_PARAM_MMAP_GTT_COHERENT, I915_PARAM_HAS_EXEC_SUBMIT_FENCE,
        I915_PARAM_HAS_EXEC_TIMELINE_FENCES, I915_SCHEDULER_CAP_ENABLED,
        I915_SCHEDULER_CAP_PRIORITY);
    w!("long long": I915_CONTEXT_MAX_USER_PRIORITY, I915_CONTEXT_DEFAULT_PRIORITY,
        I915_CONTEXT_MIN_USER_PRIORITY);
    w!("unsigned short": I915_ENGINE_CLASS_RENDER, I915_ENGINE_CLASS_COPY,
        I915_ENGINE_CLASS_VIDEO, I915_ENGINE_CLASS_VIDEO_ENHANCE, I915_ENGINE_CLASS_COMPUTE);
    // Names that differ: the header's reserved-looking double-underscore masks.
    out.push((
        "__EXEC_OBJECT_UNKNOWN_FLAGS",
        "unsigned long long",
        EXEC_OBJECT_UNKNOWN_FLAGS as i64,
    ));
    out.push((
        "__I915_EXEC_UNKNOWN_FLAGS",
        "unsigned long long",
        I915_EXEC_UNKNOWN_FLAGS as i64,
    ));
    out.push((
        "__I915_EXEC_FENCE_UNKNOWN_FLAGS",
        "unsigned int",
        I915_EXEC_FENCE_UNKNOWN_FLAGS as i64,
    ));
    out
}

fn probe_source(structs: &[StructCheck], values: &[(&str, &str, i64)]) -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <drm.h>\n#include <i915_drm.h>\nint main(void) {\n",
    );
    for s in structs {
        writeln!(
            c,
            "  printf(\"size|%s|%zu\\n\", \"{0}\", sizeof({0}));",
            s.c_name
        )
        .unwrap();
        for (f, _) in &s.fields {
            writeln!(
                c,
                "  printf(\"offset|%s.%s|%zu\\n\", \"{0}\", \"{1}\", offsetof({0}, {1}));",
                s.c_name, f
            )
            .unwrap();
        }
    }
    for (name, ctype, _) in values {
        writeln!(
            c,
            "  printf(\"value|%s|%lld\\n\", \"{name}\", (long long)({ctype})({name}));"
        )
        .unwrap();
    }
    c.push_str("  return 0;\n}\n");
    c
}

fn include_flags() -> Vec<String> {
    let from_pkg_config = Command::new("pkg-config")
        .args(["--cflags", "libdrm"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        });
    from_pkg_config.unwrap_or_else(|| vec!["-I/usr/include/libdrm".to_string()])
}

#[test]
fn uapi_matches_libdrm_headers() {
    let structs = structs();
    let values = values();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("uapi-probe");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("probe.c");
    let exe = dir.join("probe");
    std::fs::write(&src, probe_source(&structs, &values)).unwrap();
    let out = Command::new("gcc")
        .args(include_flags())
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("gcc must be installed (scripts/setup installs gcc and libdrm-dev)");
    assert!(
        out.status.success(),
        "the C probe did not compile (is libdrm-dev installed?):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let text = String::from_utf8(run.stdout).unwrap();
    let c: std::collections::HashMap<String, String> = text
        .lines()
        .map(|l| {
            let mut it = l.splitn(3, '|');
            let kind = it.next().unwrap();
            let key = it.next().unwrap();
            (format!("{kind} {key}"), it.next().unwrap().to_string())
        })
        .collect();

    let mut mismatches = Vec::new();
    let mut checked = 0;
    for s in &structs {
        let key = format!("size {}", s.c_name);
        checked += 1;
        if c[&key] != s.size.to_string() {
            mismatches.push(format!("{key}: C {} Rust {}", c[&key], s.size));
        }
        for (f, off) in &s.fields {
            let key = format!("offset {}.{}", s.c_name, f);
            checked += 1;
            if c[&key] != off.to_string() {
                mismatches.push(format!("{key}: C {} Rust {off}", c[&key]));
            }
        }
    }
    for (name, _, v) in &values {
        let key = format!("value {name}");
        checked += 1;
        if c[&key] != v.to_string() {
            mismatches.push(format!("{key}: C {} Rust {v}", c[&key]));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {checked} checks differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    // Every field of every struct is listed: the listed offsets plus sizes cover the struct.
    assert!(checked > 300, "only {checked} checks");
}

#[test]
fn every_request_encodes_its_argument_size() {
    fn check<T: Ioctl>() {
        assert_eq!(ioc_size(T::REQUEST), size_of::<T>(), "{}", T::NAME);
    }
    check::<drm_version>();
    check::<drm_gem_close>();
    check::<drm_get_cap>();
    check::<drm_syncobj_create>();
    check::<drm_syncobj_destroy>();
    check::<drm_syncobj_wait>();
    check::<SyncobjReset>();
    check::<SyncobjSignal>();
    check::<drm_syncobj_timeline_wait>();
    check::<SyncobjQuery>();
    check::<drm_syncobj_transfer>();
    check::<SyncobjTimelineSignal>();
    check::<drm_i915_getparam>();
    check::<drm_i915_gem_create>();
    check::<drm_i915_gem_create_ext>();
    check::<drm_i915_gem_mmap_offset>();
    check::<drm_i915_gem_set_domain>();
    check::<drm_i915_gem_execbuffer2>();
    check::<Execbuffer2Wr>();
    check::<drm_i915_gem_wait>();
    check::<drm_i915_gem_context_create>();
    check::<drm_i915_gem_context_create_ext>();
    check::<drm_i915_gem_context_param>();
    check::<ContextSetParam>();
    check::<drm_i915_gem_context_destroy>();
    check::<drm_i915_reset_stats>();
    check::<drm_i915_query>();
    assert!(!ioc_is_read(DRM_IOCTL_I915_GEM_EXECBUFFER2));
    assert!(ioc_is_read(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR));
}
