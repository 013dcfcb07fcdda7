//! The simulated command streamer through the real path: BOs on the simulated DrmDevice,
//! batches packed with the genxml structs, EXECBUFFER2, fences. MI commands and PIPE_CONTROL
//! only (no EU threads).

mod gpu_common;

use gpu_common::*;
use kernel_iface::genxml::*;
use kernel_iface::gpu::SimGpu;
use kernel_iface::KernelError;

const DATA: u64 = 0x10_0000;
const BATCH: u64 = 0x20_0000;
const BATCH2: u64 = 0x30_0000;

fn setup() -> (Gpu, usize, usize, usize) {
    let mut g = Gpu::new();
    let data = g.bo(DATA, 0x2000);
    let batch = g.bo(BATCH, 0x1000);
    let batch2 = g.bo(BATCH2, 0x1000);
    (g, data, batch, batch2)
}

#[test]
fn store_data_imm_and_pipe_control_post_sync_writes() {
    let (g, data, batch, _) = setup();
    let mut b = Batch::default();
    b.store_dword(DATA, 0x1234_5678);
    b.add(
        MiStoreDataImm {
            dword_length: 3,
            store_qword: 1,
            address: DATA + 8,
            immediate_data: 0xAABB_CCDD_1122_3344,
            ..Default::default()
        }
        .to_dwords_len(5),
    );
    b.add(
        PipeControl {
            post_sync_operation: PipeControl::POST_SYNC_OPERATION_WRITE_IMMEDIATE_DATA,
            address: DATA + 16,
            immediate_data: 0x0102_0304_0506_0708,
            command_streamer_stall_enable: true,
            ..Default::default()
        }
        .to_dwords(),
    );
    for off in [24, 32] {
        b.add(
            PipeControl {
                post_sync_operation: PipeControl::POST_SYNC_OPERATION_WRITE_TIMESTAMP,
                address: DATA + off,
                command_streamer_stall_enable: true,
                ..Default::default()
            }
            .to_dwords(),
        );
    }
    b.end();
    g.write(batch, 0, &b.bytes());
    assert_eq!(g.submit(batch).unwrap(), Outcome::Ok);
    assert_eq!(g.read_u32s(data, 0, 2), [0x1234_5678, 0]);
    assert_eq!(g.read_u64(data, 8), 0xAABB_CCDD_1122_3344);
    assert_eq!(g.read_u64(data, 16), 0x0102_0304_0506_0708);
    let (t0, t1) = (g.read_u64(data, 24), g.read_u64(data, 32));
    assert!(t0 > 0 && t1 >= t0, "timestamps {t0} {t1}");
    assert_eq!(
        g.sim
            .stats()
            .hangs
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
}

/// MI_STORE_DATA_IMM with a given length (the generated packer writes `LENGTH` dwords).
trait ToDwordsLen {
    fn to_dwords_len(&self, n: usize) -> Vec<u32>;
}

impl ToDwordsLen for MiStoreDataImm {
    fn to_dwords_len(&self, n: usize) -> Vec<u32> {
        let mut v = vec![0; n];
        self.pack(&mut v);
        v
    }
}

#[test]
fn second_level_and_chained_batches() {
    let (g, data, batch, batch2) = setup();
    // Main batch: write 1 at +0, call the second level at BATCH2, then overwrite +4 with 3
    // (after the callee wrote 2 there), then chain to BATCH + 0x800.
    let mut b = Batch::default();
    b.store_dword(DATA, 1);
    b.add(
        MiBatchBufferStart {
            second_level_batch_buffer: 1,
            address_space_indicator: MiBatchBufferStart::ADDRESS_SPACE_INDICATOR_PPGTT,
            batch_buffer_start_address: BATCH2,
            ..Default::default()
        }
        .to_dwords(),
    );
    b.store_dword(DATA + 4, 3);
    b.add(
        MiBatchBufferStart {
            address_space_indicator: MiBatchBufferStart::ADDRESS_SPACE_INDICATOR_PPGTT,
            batch_buffer_start_address: BATCH + 0x800,
            ..Default::default()
        }
        .to_dwords(),
    );
    // Never reached: the chain does not return.
    b.store_dword(DATA + 12, 0xBAD);
    b.end();
    g.write(batch, 0, &b.bytes());
    let mut callee = Batch::default();
    callee
        .store_dword(DATA + 4, 2)
        .store_dword(DATA + 16, 5)
        .end();
    g.write(batch2, 0, &callee.bytes());
    let mut chained = Batch::default();
    chained.store_dword(DATA + 8, 4).end();
    g.write(batch, 0x800, &chained.bytes());
    assert_eq!(g.submit(batch).unwrap(), Outcome::Ok);
    assert_eq!(g.read_u32s(data, 0, 5), [1, 3, 4, 0, 5]);
}

#[test]
fn register_commands_and_state_persisting_across_batches() {
    let (g, data, batch, _) = setup();
    g.write_u32s(data, 0x100, &[0xFEED_0001]);
    let mut b = Batch::default();
    b.add(
        MiLoadRegisterImm {
            register_offset: 0x2600,
            data_dword: 0x1234,
            ..Default::default()
        }
        .to_dwords(),
    )
    .add(
        MiLoadRegisterMem {
            register_address: 0x2608,
            memory_address: DATA + 0x100,
            ..Default::default()
        }
        .to_dwords(),
    )
    .add(
        MiLoadRegisterReg {
            source_register_address: 0x2608,
            destination_register_address: 0x2610,
            ..Default::default()
        }
        .to_dwords(),
    )
    .add(
        MiStoreRegisterMem {
            register_address: 0x2610,
            memory_address: DATA + 4,
            ..Default::default()
        }
        .to_dwords(),
    )
    .add(
        MiCopyMemMem {
            source_memory_address: DATA + 0x100,
            destination_memory_address: DATA + 8,
            ..Default::default()
        }
        .to_dwords(),
    )
    .end();
    g.write(batch, 0, &b.bytes());
    assert_eq!(g.submit(batch).unwrap(), Outcome::Ok);
    assert_eq!(g.read_u32s(data, 4, 2), [0xFEED_0001, 0xFEED_0001]);
    // A later batch of the same context still sees the register; another context does not.
    let mut b = Batch::default();
    b.add(
        MiStoreRegisterMem {
            register_address: 0x2600,
            memory_address: DATA + 12,
            ..Default::default()
        }
        .to_dwords(),
    )
    .end();
    g.write(batch, 0, &b.bytes());
    assert_eq!(g.submit(batch).unwrap(), Outcome::Ok);
    assert_eq!(g.read_u32s(data, 12, 1), [0x1234]);
    g.write_u32s(data, 12, &[0xFFFF_FFFF]);
    let other = g.dev.context_create().unwrap();
    assert_eq!(g.submit_on(other, batch).unwrap(), Outcome::Ok);
    assert_eq!(g.read_u32s(data, 12, 1), [0]);
}

#[test]
fn unbacked_addresses_hit_the_scratch_page_and_simstrict_faults() {
    let (g, data, batch, _) = setup();
    let hole = 0x7000_0000u64;
    let mut b = Batch::default();
    b.store_dword(hole + 0x40, 0x5CA7C4);
    b.add(
        MiCopyMemMem {
            // Another unbacked page at the same offset sees what landed in the scratch page.
            source_memory_address: hole + 0x9000 + 0x40,
            destination_memory_address: DATA,
            ..Default::default()
        }
        .to_dwords(),
    )
    .end();
    g.write(batch, 0, &b.bytes());
    assert_eq!(g.submit(batch).unwrap(), Outcome::Ok);
    assert_eq!(g.read_u32s(data, 0, 1), [0x5CA7C4]);

    let mut g = Gpu::with_gpu(SimGpu::new().with_strict(true));
    let data = g.bo(DATA, 0x2000);
    let batch = g.bo(BATCH, 0x1000);
    g.write(batch, 0, &b.bytes());
    assert_eq!(g.submit(batch).unwrap(), Outcome::FenceError(-libc::EIO));
    assert_eq!(g.read_u32s(data, 0, 1), [0]);
}

/// Each bad batch hangs: the fence carries -EIO, and a fresh context still works.
#[test]
fn bad_batches_hang_and_the_next_context_works() {
    let unknown = {
        let mut b = Batch::default();
        b.add(vec![0xE000_0000, 0]).end();
        b
    };
    let outside = {
        let mut b = Batch::default();
        b.add(
            MiBatchBufferStart {
                address_space_indicator: 1,
                batch_buffer_start_address: 0x6666_0000,
                ..Default::default()
            }
            .to_dwords(),
        );
        b
    };
    let malformed = {
        let mut b = Batch::default();
        let mut pc = PipeControl::default().to_dwords();
        pc[0] = (pc[0] & !0xFF) | 2; // DWord Length 2: a 4-dword PIPE_CONTROL
        b.add(pc).end();
        b
    };
    let semaphore = {
        let mut b = Batch::default();
        b.add(
            MiSemaphoreWait {
                compare_operation: MiSemaphoreWait::COMPARE_OPERATION_SAD_EQUAL_SDD,
                wait_mode: 1,
                semaphore_data_dword: 1,
                semaphore_address: DATA + 0x200,
                ..Default::default()
            }
            .to_dwords(),
        )
        .end();
        b
    };
    let self_loop = {
        let mut b = Batch::default();
        b.add(
            MiBatchBufferStart {
                address_space_indicator: 1,
                batch_buffer_start_address: BATCH,
                ..Default::default()
            }
            .to_dwords(),
        );
        b
    };
    let media_in_3d = {
        let mut b = Batch::default();
        b.add(MediaVfeState::default().to_dwords()).end();
        b
    };
    for (what, bad) in [
        ("unknown command", unknown),
        ("jump outside every object", outside),
        ("malformed length", malformed),
        ("semaphore never satisfied", semaphore),
        ("batch loop", self_loop),
        ("media command in the 3D pipeline", media_in_3d),
    ] {
        let (g, data, batch, _) = setup();
        g.write(batch, 0, &bad.bytes());
        assert_eq!(
            g.submit(batch).unwrap(),
            Outcome::FenceError(-libc::EIO),
            "{what}"
        );
        // Whatever happened to the context that hung, a new one works.
        let ctx = g.dev.context_create().unwrap();
        let mut good = Batch::default();
        good.store_dword(DATA, 42).end();
        g.write(batch, 0, &good.bytes());
        assert_eq!(g.submit_on(ctx, batch).unwrap(), Outcome::Ok, "{what}");
        assert_eq!(g.read_u32s(data, 0, 1), [42], "{what}");
    }
}

#[test]
fn a_hung_non_recoverable_context_is_banned() {
    let (g, _, batch, _) = setup();
    g.dev
        .context_set_param(g.ctx, kernel_iface::uapi::I915_CONTEXT_PARAM_RECOVERABLE, 0)
        .unwrap();
    let mut b = Batch::default();
    b.add(vec![0xE000_0000]).end();
    g.write(batch, 0, &b.bytes());
    assert_eq!(g.submit(batch).unwrap(), Outcome::FenceError(-libc::EIO));
    let mut good = Batch::default();
    good.end();
    g.write(batch, 0, &good.bytes());
    let err = g.submit(batch).unwrap_err();
    assert!(matches!(err, KernelError::DeviceLost(_)), "{err}");
    let stats = g.dev.context_reset_stats(g.ctx).unwrap();
    assert_eq!(stats.batch_active, 1);
}
