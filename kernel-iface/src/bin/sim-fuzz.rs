//! Fuzzes the simulated i915's ioctl layer and the simulated GPU's batch parser with random
//! input: no ioctl argument and no batch may panic the simulated kernel (a real kernel answers
//! an errno; a bad batch is at worst a GPU hang).
//!
//! `sim-fuzz [--seconds N] [--seed S] [--corpus DIR] [--mode ioctl|batch|both]`
//!
//! Each case is one seed (printed on a crash; `--seed S --seconds 0` replays exactly that case):
//! a fresh simulated kernel with a few objects, contexts and syncobjs, then 24 random ioctls
//! (random argument bytes; 64-bit slots sometimes replaced by the address of a scratch buffer,
//! 0 or a handle-sized value; waits get a zero timeout) or a random batch (random dwords biased
//! towards command headers, ending with MI_BATCH_BUFFER_END) submitted with EXECBUFFER2.
//! `--corpus DIR` keeps the seeds that produced an (ioctl, errno) pair not seen before in
//! `DIR/ioctl` or `DIR/batch` (replayed first on the next run) and crashing seeds in
//! `DIR/crashes`. Prints executions, distinct outcomes and crashes; exits 1 after a crash.

use std::collections::HashSet;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kernel_iface::sim::{KernelVersion, SimKernel};
use kernel_iface::uapi::*;

/// splitmix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Every request the simulated kernel handles, plus two it does not.
const REQUESTS: &[u64] = &[
    DRM_IOCTL_VERSION,
    DRM_IOCTL_GEM_CLOSE,
    DRM_IOCTL_GET_CAP,
    DRM_IOCTL_I915_GETPARAM,
    DRM_IOCTL_I915_QUERY,
    DRM_IOCTL_I915_GEM_CREATE,
    DRM_IOCTL_I915_GEM_CREATE_EXT,
    DRM_IOCTL_I915_GEM_MMAP_OFFSET,
    DRM_IOCTL_I915_GEM_SET_DOMAIN,
    DRM_IOCTL_I915_GEM_WAIT,
    DRM_IOCTL_I915_GEM_CONTEXT_CREATE,
    DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT,
    DRM_IOCTL_I915_GEM_CONTEXT_DESTROY,
    DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM,
    DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM,
    DRM_IOCTL_I915_GET_RESET_STATS,
    DRM_IOCTL_I915_GEM_EXECBUFFER2,
    DRM_IOCTL_I915_GEM_EXECBUFFER2_WR,
    DRM_IOCTL_SYNCOBJ_CREATE,
    DRM_IOCTL_SYNCOBJ_DESTROY,
    DRM_IOCTL_SYNCOBJ_WAIT,
    DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT,
    DRM_IOCTL_SYNCOBJ_RESET,
    DRM_IOCTL_SYNCOBJ_SIGNAL,
    DRM_IOCTL_SYNCOBJ_QUERY,
    DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
    DRM_IOCTL_SYNCOBJ_TRANSFER,
    drm_iowr::<u64>(0x7f),
    drm_iowr::<[u64; 4]>(DRM_COMMAND_BASE + 0x3f),
];

/// Command headers the batch generator prefers (MI, 3D/media/GPGPU state and walkers).
const HEADERS: &[u32] = &[
    0x0000_0000, // MI_NOOP
    0x0500_0000, // MI_BATCH_BUFFER_END
    0x1100_0001, // MI_LOAD_REGISTER_IMM
    0x1000_0002, // MI_STORE_DATA_IMM
    0x1c00_0001, // MI_SEMAPHORE_WAIT-like
    0x6101_0011, // STATE_BASE_ADDRESS
    0x6904_0302, // PIPELINE_SELECT (GPGPU)
    0x7000_0007, // MEDIA_VFE_STATE
    0x7001_0002, // MEDIA_CURBE_LOAD
    0x7002_0002, // MEDIA_INTERFACE_DESCRIPTOR_LOAD
    0x7004_0000, // MEDIA_STATE_FLUSH
    0x7105_000d, // GPGPU_WALKER
    0x7a00_0004, // PIPE_CONTROL
    0x7800_0000, // 3DSTATE-like
];

/// Scratch "user memory" random pointers may name: 64 KiB followed by an inaccessible guard
/// page, so a copy that runs past it (a huge count) ends in EFAULT instead of overwriting the
/// fuzzer's own heap.
struct Scratch {
    ptr: *mut c_void,
}

const SCRATCH_BYTES: usize = 64 << 10;
const GUARD_BYTES: usize = 4096;

impl Scratch {
    fn new() -> Scratch {
        // SAFETY: a fresh anonymous private mapping at an address the kernel chooses.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                SCRATCH_BYTES + GUARD_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(ptr, libc::MAP_FAILED, "mmap of the scratch memory");
        // SAFETY: the last page of the mapping just made.
        let rc = unsafe {
            libc::mprotect(
                (ptr as *mut u8).add(SCRATCH_BYTES) as *mut c_void,
                GUARD_BYTES,
                libc::PROT_NONE,
            )
        };
        assert_eq!(rc, 0, "mprotect of the guard page");
        Scratch { ptr }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `new`.
        unsafe { libc::munmap(self.ptr, SCRATCH_BYTES + GUARD_BYTES) };
    }
}

/// A simulated kernel with some objects to name in random arguments.
struct Target {
    sim: SimKernel,
    scratch: Scratch,
}

impl Target {
    fn new() -> Target {
        let info = kernel_iface::lookup_platform("skl").expect("skl in the device table");
        let sim = SimKernel::with_kernel(info, KernelVersion::LATEST);
        let t = Target {
            sim,
            scratch: Scratch::new(),
        };
        for _ in 0..3 {
            let mut c = drm_i915_gem_create {
                size: 8192,
                ..Default::default()
            };
            let _ = t.call(&mut c);
            let mut s = drm_syncobj_create::default();
            let _ = t.call(&mut s);
        }
        let mut ctx = drm_i915_gem_context_create::default();
        let _ = t.call(&mut ctx);
        t
    }

    fn call<T: Ioctl>(&self, arg: &mut T) -> Result<(), i32> {
        // SAFETY: `arg` is a live `T` and `T::REQUEST` its request (the `Ioctl` contract).
        unsafe { self.sim.ioctl(T::REQUEST, arg as *mut T as *mut c_void) }
    }

    fn scratch_addr(&self) -> u64 {
        self.scratch.ptr as u64
    }
}

/// A random argument for `request`: random bytes, with 8-byte slots sometimes replaced by a
/// pointer to scratch memory, 0, or a small value (handles, counts, flags).
fn random_arg(rng: &mut Rng, t: &Target, request: u64) -> Vec<u64> {
    let words = ioc_size(request).div_ceil(8).max(1);
    (0..words)
        .map(|_| match rng.below(6) {
            0 => rng.next(),
            1 => 0,
            2 => t.scratch_addr() + 8 * rng.below(SCRATCH_BYTES as u64 / 8),
            3 => rng.below(8),
            4 => rng.below(1 << 16) << 32 | rng.below(8),
            _ => rng.next() & 0xffff_ffff,
        })
        .collect()
}

/// Makes waits return at once (a zero absolute or relative timeout) and keeps objects small
/// (the simulated kernel backs every byte with host memory).
fn defuse(request: u64, arg: &mut [u64]) {
    match request {
        // drm_i915_gem_create(_ext): size at byte 0.
        DRM_IOCTL_I915_GEM_CREATE | DRM_IOCTL_I915_GEM_CREATE_EXT => arg[0] &= 0xf_ffff,
        // drm_syncobj_wait / drm_syncobj_timeline_wait: timeout_nsec at bytes 8 / 16.
        DRM_IOCTL_SYNCOBJ_WAIT => arg[1] = 0,
        DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT => arg[2] = 0,
        // drm_i915_gem_wait: timeout_ns at bytes 8.
        DRM_IOCTL_I915_GEM_WAIT => arg[1] = 0,
        _ => {}
    }
}

/// `SIM_FUZZ_VERBOSE=1` prints every ioctl of a case (to replay one seed).
fn verbose() -> bool {
    std::env::var_os("SIM_FUZZ_VERBOSE").is_some()
}

fn ioctl_case(rng: &mut Rng, seen: &mut HashSet<(u64, i32)>) -> bool {
    let t = Target::new();
    let mut new = false;
    for _ in 0..24 {
        let request = REQUESTS[rng.below(REQUESTS.len() as u64) as usize];
        let mut arg = random_arg(rng, &t, request);
        defuse(request, &mut arg);
        // SAFETY: `arg` is at least `ioc_size(request)` bytes, 8-byte aligned and writable; every
        // argument type of the simulated kernel is plain integers, valid for any bytes. User
        // addresses inside are read and written through uaccess (EFAULT on a bad address).
        if verbose() {
            eprintln!("sim-fuzz: ioctl 0x{request:08x} {arg:x?}");
        }
        let r = unsafe { t.sim.ioctl(request, arg.as_mut_ptr() as *mut c_void) };
        if verbose() {
            eprintln!("sim-fuzz:   -> {r:?}");
        }
        new |= seen.insert((request, r.err().unwrap_or(0)));
    }
    new
}

fn batch_case(rng: &mut Rng, seen: &mut HashSet<(u64, i32)>) -> bool {
    let t = Target::new();
    let dwords = 4 + rng.below(120) as usize;
    let mut batch: Vec<u32> = (0..dwords)
        .map(|_| {
            if rng.below(3) == 0 {
                HEADERS[rng.below(HEADERS.len() as u64) as usize]
            } else if rng.below(2) == 0 {
                rng.below(0x1_0000) as u32
            } else {
                rng.next() as u32
            }
        })
        .collect();
    batch.push(0x0500_0000);
    batch.push(0);
    let size = (batch.len() as u64 * 4).next_multiple_of(4096);
    let mut c = drm_i915_gem_create {
        size,
        ..Default::default()
    };
    if t.call(&mut c).is_err() {
        return false;
    }
    let mut mo = drm_i915_gem_mmap_offset {
        handle: c.handle,
        flags: I915_MMAP_OFFSET_WB,
        ..Default::default()
    };
    if t.call(&mut mo).is_err() {
        return false;
    }
    let Ok((mem, inside)) = t.sim.mmap(mo.offset, size as usize) else {
        return false;
    };
    let bytes: Vec<u8> = batch.iter().flat_map(|d| d.to_le_bytes()).collect();
    // SAFETY: `inside + size` lies within the object's memory (checked by `SimKernel::mmap`),
    // and `bytes` is shorter than `size`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), mem.base().as_ptr().add(inside), bytes.len())
    };
    // The other objects at random softpinned addresses, the batch last.
    let mut objs = Vec::new();
    for h in (1..=3).filter(|&h| h != c.handle) {
        if rng.below(2) == 0 {
            objs.push(drm_i915_gem_exec_object2 {
                handle: h,
                offset: rng.below(1 << 20) << 12,
                flags: EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS | EXEC_OBJECT_WRITE,
                ..Default::default()
            });
        }
    }
    objs.push(drm_i915_gem_exec_object2 {
        handle: c.handle,
        offset: 0x1_0000_0000 + (rng.below(16) << 12),
        flags: EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS,
        ..Default::default()
    });
    let mut eb = Execbuffer2Wr(drm_i915_gem_execbuffer2 {
        buffers_ptr: objs.as_mut_ptr() as u64,
        buffer_count: objs.len() as u32,
        flags: I915_EXEC_RENDER | I915_EXEC_NO_RELOC,
        ..Default::default()
    });
    let r = t.call(&mut eb);
    // Wait for the job (bounded: a runaway batch is a hang after the instruction limit).
    let mut w = drm_i915_gem_wait {
        bo_handle: c.handle,
        flags: 0,
        timeout_ns: 10_000_000_000,
    };
    let _ = t.call(&mut w);
    seen.insert((
        DRM_IOCTL_I915_GEM_EXECBUFFER2_WR ^ u64::from(batch[0] >> 23) << 32,
        r.err().unwrap_or(0),
    ))
}

fn corpus_seeds(dir: &Path) -> Vec<u64> {
    let mut seeds: Vec<u64> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    seeds.sort_unstable();
    seeds
}

fn main() {
    let mut seconds = 60u64;
    let mut seed = 1u64;
    let mut corpus: Option<PathBuf> = None;
    let mut mode = "both".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage(&a));
        match a.as_str() {
            "--seconds" => seconds = value().parse().unwrap_or_else(|_| usage("--seconds")),
            "--seed" => seed = value().parse().unwrap_or_else(|_| usage("--seed")),
            "--corpus" => corpus = Some(PathBuf::from(value())),
            "--mode" => mode = value(),
            _ => usage(&a),
        }
    }
    let modes: Vec<&str> = match mode.as_str() {
        "both" => vec!["ioctl", "batch"],
        "ioctl" | "batch" => vec![mode.as_str()],
        _ => usage("--mode"),
    };
    // Hangs and refused commands are expected outcomes: keep the log quiet.
    std::panic::set_hook(Box::new(|info| eprintln!("sim-fuzz: panic: {info}")));
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let (mut execs, mut crashes) = (0u64, 0u64);
    let mut seen = HashSet::new();
    for (i, m) in modes.iter().enumerate() {
        let share = deadline
            .saturating_duration_since(Instant::now())
            .checked_div((modes.len() - i) as u32)
            .unwrap_or_default();
        let until = Instant::now() + share;
        let dir = corpus.as_ref().map(|c| c.join(m));
        let replay = dir.as_deref().map(corpus_seeds).unwrap_or_default();
        let mut next = seed;
        let mut queue = replay.into_iter();
        let mut first = true;
        loop {
            let s = match queue.next() {
                Some(s) => s,
                None if std::mem::take(&mut first) || Instant::now() < until => {
                    next += 1;
                    next - 1
                }
                None => break,
            };
            let mut rng = Rng(s);
            let outcome = catch_unwind(AssertUnwindSafe(|| match *m {
                "ioctl" => ioctl_case(&mut rng, &mut seen),
                _ => batch_case(&mut rng, &mut seen),
            }));
            execs += 1;
            match outcome {
                Ok(true) => {
                    if let Some(d) = &dir {
                        let _ = std::fs::create_dir_all(d);
                        let _ = std::fs::write(d.join(s.to_string()), m.as_bytes());
                    }
                }
                Ok(false) => {}
                Err(_) => {
                    crashes += 1;
                    eprintln!("sim-fuzz: CRASH in {m} case, seed {s} (replay: --mode {m} --seed {s} --seconds 0)");
                    if let Some(c) = &corpus {
                        let d = c.join("crashes");
                        let _ = std::fs::create_dir_all(&d);
                        let _ = std::fs::write(d.join(format!("{m}-{s}")), m.as_bytes());
                    }
                }
            }
            if seconds == 0 {
                break;
            }
        }
    }
    println!(
        "sim-fuzz: {execs} executions in {:.1} s, {} distinct outcomes, {crashes} crashes",
        start.elapsed().as_secs_f64(),
        seen.len()
    );
    if crashes > 0 {
        std::process::exit(1);
    }
}

fn usage(what: &str) -> ! {
    eprintln!(
        "sim-fuzz: bad argument {what:?}\nusage: sim-fuzz [--seconds N] [--seed S] [--corpus DIR] [--mode ioctl|batch|both]"
    );
    std::process::exit(2)
}
