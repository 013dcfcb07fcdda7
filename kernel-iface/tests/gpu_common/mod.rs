//! Shared helpers of the simulated-GPU tests: BOs at fixed GPU addresses on the simulated
//! DrmDevice, batches packed with the genxml structs, and submission through EXECBUFFER2.
#![allow(dead_code)]

use std::sync::Arc;

use kernel_iface::genxml::*;
use kernel_iface::gpu::SimGpu;
use kernel_iface::uapi::*;
use kernel_iface::{DrmDevice, KernelError, Mapping};

pub struct Bo {
    pub handle: u32,
    pub addr: u64,
    pub size: u64,
    pub map: Mapping,
}

pub struct Gpu {
    pub dev: DrmDevice,
    pub ctx: u32,
    pub bos: Vec<Bo>,
    pub sim: Arc<SimGpu>,
}

/// What a submission ended with.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// The out-fence was signaled with this error (a GPU hang gives -EIO).
    FenceError(i32),
}

impl Gpu {
    /// A simulated SKL GT2 with a fresh [`SimGpu`] (so tests can tune it) and a new context.
    pub fn new() -> Gpu {
        Gpu::with_gpu(SimGpu::new())
    }

    pub fn with_gpu(gpu: SimGpu) -> Gpu {
        let dev = DrmDevice::open_sim(kernel_iface::lookup_pci_id(0x1912).unwrap()).unwrap();
        let sim = Arc::new(gpu);
        dev.sim().unwrap().set_gpu_backend(sim.clone());
        let ctx = dev.context_create().unwrap();
        Gpu {
            dev,
            ctx,
            bos: Vec::new(),
            sim,
        }
    }

    /// A BO of `size` bytes softpinned at `addr`; returns its index.
    pub fn bo(&mut self, addr: u64, size: u64) -> usize {
        let handle = self.dev.gem_create(size).unwrap();
        let map = self.dev.gem_mmap(handle, size).unwrap();
        self.bos.push(Bo {
            handle,
            addr,
            size,
            map,
        });
        self.bos.len() - 1
    }

    pub fn write(&self, bo: usize, off: usize, data: &[u8]) {
        self.bos[bo].map.write(off, data);
    }

    pub fn write_u32s(&self, bo: usize, off: usize, data: &[u32]) {
        let bytes: Vec<u8> = data.iter().flat_map(|d| d.to_le_bytes()).collect();
        self.write(bo, off, &bytes);
    }

    pub fn read_u32s(&self, bo: usize, off: usize, n: usize) -> Vec<u32> {
        let mut b = vec![0u8; n * 4];
        self.bos[bo].map.read(off, &mut b);
        b.chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    pub fn read_u64(&self, bo: usize, off: usize) -> u64 {
        let mut b = [0u8; 8];
        self.bos[bo].map.read(off, &mut b);
        u64::from_le_bytes(b)
    }

    /// Submits the batch at the start of BO `batch` on context `ctx` with every BO softpinned,
    /// and reports how its out-fence was signaled.
    pub fn submit_on(&self, ctx: u32, batch: usize) -> Result<Outcome, KernelError> {
        let pinned = EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS | EXEC_OBJECT_WRITE;
        let mut objs: Vec<drm_i915_gem_exec_object2> = self
            .bos
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != batch)
            .map(|(_, b)| drm_i915_gem_exec_object2 {
                handle: b.handle,
                offset: b.addr,
                flags: pinned,
                ..Default::default()
            })
            .collect();
        objs.push(drm_i915_gem_exec_object2 {
            handle: self.bos[batch].handle,
            offset: self.bos[batch].addr,
            flags: EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS,
            ..Default::default()
        });
        let out = self.dev.syncobj_create(false)?;
        let mut fences = [drm_i915_gem_exec_fence {
            handle: out,
            flags: I915_EXEC_FENCE_SIGNAL,
        }];
        let mut eb = drm_i915_gem_execbuffer2 {
            buffers_ptr: objs.as_mut_ptr() as u64,
            buffer_count: objs.len() as u32,
            batch_start_offset: 0,
            batch_len: 0,
            flags: I915_EXEC_RENDER | I915_EXEC_NO_RELOC | I915_EXEC_FENCE_ARRAY,
            num_cliprects: 1,
            cliprects_ptr: fences.as_mut_ptr() as u64,
            rsvd1: ctx as u64,
            ..Default::default()
        };
        self.dev.execbuffer2(&mut eb)?;
        self.dev
            .syncobj_wait(&[out], kernel_iface::monotonic_ns() + 60_000_000_000, true)?;
        let err = self.dev.sim().unwrap().syncobj_fence_error(out).unwrap();
        self.dev.syncobj_destroy(out)?;
        Ok(match err {
            None | Some(0) => Outcome::Ok,
            Some(e) => Outcome::FenceError(e),
        })
    }

    pub fn submit(&self, batch: usize) -> Result<Outcome, KernelError> {
        self.submit_on(self.ctx, batch)
    }
}

/// A batch under construction.
#[derive(Default)]
pub struct Batch {
    pub dw: Vec<u32>,
}

impl Batch {
    pub fn add(&mut self, dws: Vec<u32>) -> &mut Batch {
        self.dw.extend(dws);
        self
    }

    pub fn end(&mut self) -> &mut Batch {
        self.add(MiBatchBufferEnd::default().to_dwords());
        if self.dw.len() % 2 == 1 {
            self.add(MiNoop::default().to_dwords());
        }
        self
    }

    pub fn store_dword(&mut self, addr: u64, v: u32) -> &mut Batch {
        self.add(
            MiStoreDataImm {
                address: addr,
                immediate_data: v as u64,
                ..Default::default()
            }
            .to_dwords(),
        )
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.dw.iter().flat_map(|d| d.to_le_bytes()).collect()
    }
}

/// Fixed layout of the compute tests.
pub const KERNEL_ADDR: u64 = 0x20_0000;
pub const STATE_ADDR: u64 = 0x30_0000;
pub const BATCH_ADDR: u64 = 0x50_0000;
pub const IDD_OFFSET: u64 = 0;
pub const CURBE_OFFSET: u64 = 0x100;
pub const BT_OFFSET: u64 = 0x4000;
pub const SS_OFFSET: u64 = 0x4100;

/// One compute dispatch of a hand-written kernel.
pub struct Dispatch<'a> {
    pub asm: &'a str,
    pub simd: u32,
    pub group_size: u32,
    pub groups: [u32; 3],
    pub slm_bytes: u32,
    pub barrier: bool,
    /// Client push constants: whole cross-thread registers (padded with zeros) before
    /// `push`, so a kernel's push data starts at g1 and `push` follows it.
    pub client_push: &'a [u32],
    /// Push constants in the cross-thread register (g1, or after `client_push`), at most
    /// 8 dwords.
    pub push: [u32; 8],
    /// Buffers bound at BTI 1, 2, ...: (BO index, byte size).
    pub buffers: &'a [(usize, u64)],
    /// L3CNTLREG value (SLM needs bit 0).
    pub l3: u32,
    /// Extra threads per group beyond ceil(group / SIMD) (to provoke the 56 limit).
    pub thread_override: Option<u32>,
    /// Per-thread scratch: (ScratchSpaceBasePointer, PerThreadScratchSpace code).
    pub scratch: Option<(u64, u64)>,
    /// Indirect dispatch: group counts loaded into 0x2500/0x2504/0x2508 with MI_LOAD_REGISTER_IMM.
    pub indirect: Option<[u32; 3]>,
}

impl Default for Dispatch<'_> {
    fn default() -> Self {
        Dispatch {
            asm: "",
            simd: 16,
            group_size: 16,
            groups: [1, 1, 1],
            slm_bytes: 0,
            barrier: false,
            client_push: &[],
            push: [0; 8],
            buffers: &[],
            l3: 0x6000_0021,
            thread_override: None,
            scratch: None,
            indirect: None,
        }
    }
}

/// RENDER_SURFACE_STATE of a RAW buffer (docs/gen9.md 6.1, with the size trick).
pub fn buffer_surface(addr: u64, size: u64) -> Vec<u32> {
    raw_buffer_surface(addr, size).to_dwords()
}

/// Sets up state BO contents and the batch for `d` (kernel BO, state BO and batch BO
/// must exist at the fixed addresses: indices `kernel`, `state`, `batch`).
pub fn build_dispatch(g: &Gpu, d: &Dispatch, kernel: usize, state: usize, batch: usize) {
    let code = ferrite_isa::assemble(d.asm, ferrite_isa::Gen::Gen9).expect("kernel assembles");
    g.write(kernel, 0, &code);
    let threads = d.thread_override.unwrap_or(d.group_size.div_ceil(d.simd));
    // CURBE: the client push registers and 1 cross-thread register, then 1 per-thread
    // register whose last dword holds the subgroup id (the thread's index in its group).
    let mut curbe = d.client_push.to_vec();
    curbe.resize(d.client_push.len().next_multiple_of(8), 0);
    let cross_regs = curbe.len() as u64 / 8 + 1;
    curbe.extend_from_slice(&d.push);
    for t in 0..threads {
        let mut r = [0u32; 8];
        r[7] = t;
        curbe.extend_from_slice(&r);
    }
    while !curbe.len().is_multiple_of(16) {
        curbe.push(0);
    }
    g.write_u32s(state, CURBE_OFFSET as usize, &curbe);
    let slm_code = match d.slm_bytes {
        0 => 0,
        b => (b.max(1024).next_power_of_two().trailing_zeros() - 10 + 1) as u64,
    };
    let idd = InterfaceDescriptorData {
        kernel_start_pointer: 0,
        binding_table_pointer: BT_OFFSET,
        binding_table_entry_count: d.buffers.len().min(30) as u64 + 1,
        constant_urb_entry_read_length: 1,
        cross_thread_constant_data_read_length: cross_regs,
        number_of_threads_in_gpgpu_thread_group: threads as u64,
        shared_local_memory_size: slm_code,
        barrier_enable: d.barrier,
        ..Default::default()
    };
    g.write_u32s(state, IDD_OFFSET as usize, &idd.to_dwords());
    // Binding table: entry i + 1 -> surface state i.
    for (i, &(bo, size)) in d.buffers.iter().enumerate() {
        let ss_off = SS_OFFSET + 64 * i as u64;
        g.write_u32s(
            state,
            ss_off as usize,
            &buffer_surface(g.bos[bo].addr, size),
        );
        let entry = BindingTableState {
            surface_state_pointer: ss_off,
        }
        .to_dwords();
        g.write_u32s(state, BT_OFFSET as usize + 4 * (i + 1), &entry);
    }
    let rem = d.group_size % d.simd;
    let right_mask = if rem == 0 {
        (1u64 << d.simd) - 1
    } else {
        (1u64 << rem) - 1
    };
    let mut b = Batch::default();
    b.add(
        PipeControl {
            command_streamer_stall_enable: true,
            ..Default::default()
        }
        .to_dwords(),
    )
    .add(
        PipelineSelect {
            pipeline_selection: PipelineSelect::PIPELINE_SELECTION_GPGPU,
            mask_bits: 3,
            ..Default::default()
        }
        .to_dwords(),
    );
    let mut lri = MiLoadRegisterImm {
        register_offset: L3cntlreg::NUM as u64,
        data_dword: d.l3 as u64,
        ..Default::default()
    }
    .to_dwords();
    lri.truncate(MiLoadRegisterImm::LENGTH);
    b.add(lri)
        .add(
            StateBaseAddress {
                general_state_base_address_modify_enable: true,
                general_state_base_address: 0,
                surface_state_base_address_modify_enable: true,
                surface_state_base_address: STATE_ADDR,
                dynamic_state_base_address_modify_enable: true,
                dynamic_state_base_address: STATE_ADDR,
                instruction_base_address_modify_enable: true,
                instruction_base_address: KERNEL_ADDR,
                ..Default::default()
            }
            .to_dwords(),
        )
        .add(
            MediaVfeState {
                maximum_number_of_threads: 167,
                scratch_space_base_pointer: d.scratch.map_or(0, |s| s.0),
                per_thread_scratch_space: d.scratch.map_or(0, |s| s.1),
                number_of_urb_entries: 2,
                urb_entry_allocation_size: 2,
                curbe_allocation_size: ((threads as u64 + 1) + 1) & !1,
                ..Default::default()
            }
            .to_dwords(),
        )
        .add(
            MediaCurbeLoad {
                curbe_total_data_length: curbe.len() as u64 * 4,
                curbe_data_start_address: CURBE_OFFSET,
                ..Default::default()
            }
            .to_dwords(),
        )
        .add(
            MediaInterfaceDescriptorLoad {
                interface_descriptor_total_length: 32,
                interface_descriptor_data_start_address: IDD_OFFSET,
                ..Default::default()
            }
            .to_dwords(),
        )
        .add(match d.indirect {
            Some(counts) => {
                let mut v = Vec::new();
                for (i, c) in counts.iter().enumerate() {
                    v.extend(
                        MiLoadRegisterImm {
                            register_offset: 0x2500 + 4 * i as u64,
                            data_dword: *c as u64,
                            ..Default::default()
                        }
                        .to_dwords(),
                    );
                }
                v
            }
            None => Vec::new(),
        })
        .add(
            GpgpuWalker {
                indirect_parameter_enable: d.indirect.is_some(),
                simd_size: match d.simd {
                    8 => 0,
                    16 => 1,
                    _ => 2,
                },
                thread_width_counter_maximum: threads as u64 - 1,
                thread_group_id_x_dimension: d.groups[0] as u64,
                thread_group_id_y_dimension: d.groups[1] as u64,
                thread_group_id_z_dimension: d.groups[2] as u64,
                right_execution_mask: right_mask,
                bottom_execution_mask: 0xFFFF_FFFF,
                ..Default::default()
            }
            .to_dwords(),
        )
        .add(MediaStateFlush::default().to_dwords())
        .end();
    g.write(batch, 0, &b.bytes());
}

/// A GPU with kernel, state and batch BOs at the fixed addresses, plus `data` buffers of the
/// given sizes at 0x40_0000 + 0x10_0000 * i. Returns (gpu, data BO indices).
pub fn compute_setup(data: &[u64]) -> (Gpu, Vec<usize>) {
    compute_setup_with(SimGpu::new(), data)
}

pub fn compute_setup_with(sim: SimGpu, data: &[u64]) -> (Gpu, Vec<usize>) {
    let mut g = Gpu::with_gpu(sim);
    g.bo(KERNEL_ADDR, 0x1_0000);
    g.bo(STATE_ADDR, 0x1_0000);
    g.bo(BATCH_ADDR, 0x1000);
    let idx = data
        .iter()
        .enumerate()
        .map(|(i, &s)| g.bo(0x100_0000 + 0x100_0000 * i as u64, (s + 4095) & !4095))
        .collect();
    (g, idx)
}

pub const KERNEL_BO: usize = 0;
pub const STATE_BO: usize = 1;
pub const BATCH_BO: usize = 2;

/// Builds and submits `d`.
pub fn run(g: &Gpu, d: &Dispatch) -> Outcome {
    build_dispatch(g, d, KERNEL_BO, STATE_BO, BATCH_BO);
    g.submit(BATCH_BO).unwrap()
}

/// The thread epilogue: copy R0 to g127 and end the thread.
pub const EOT: &str = "
mov(8)  g127<1>UD g0<8,8,1>UD { align1 WE_all 1Q };
send(16) null<1>UW g127<8,8,1>UW 0x82000010 thread_spawner MsgDesc: mlen 1 rlen 0 { align1 WE_all 1H EOT };
";

/// SIMD8 prologue: g4 = linear invocation index (group x * g1.0 + subgroup * 8 + lane),
/// g10 = its byte offset.
pub const LINEAR8: &str = "
mov(8)  g3<1>UW   0x76543210V { align1 WE_all 1Q };
mov(8)  g4<1>UD   g3<8,8,1>UW { align1 1Q };
shl(8)  g6<1>UD   g2.7<0,1,0>UD 0x00000003UD { align1 1Q };
add(8)  g4<1>UD   g4<8,8,1>UD g6<8,8,1>UD { align1 1Q };
mul(8)  g8<1>UD   g0.1<0,1,0>UD g1<0,1,0>UD { align1 1Q };
add(8)  g4<1>UD   g4<8,8,1>UD g8<8,8,1>UD { align1 1Q };
shl(8)  g10<1>UD  g4<8,8,1>UD 0x00000002UD { align1 1Q };
";

/// SIMD16 prologue: g4..g5 = linear invocation index (group x * g1.0 + subgroup * 16 + lane),
/// g10..g11 = its byte offset (x4).
pub const LINEAR16: &str = "
mov(8)  g3<1>UW   0x76543210V { align1 WE_all 1Q };
add(8)  g3.8<1>UW g3<8,8,1>UW 0x0008UW { align1 WE_all 1Q };
mov(16) g4<1>UD   g3<8,8,1>UW { align1 1H };
shl(16) g6<1>UD   g2.7<0,1,0>UD 0x00000004UD { align1 1H };
add(16) g4<1>UD   g4<8,8,1>UD g6<8,8,1>UD { align1 1H };
mul(16) g8<1>UD   g0.1<0,1,0>UD g1<0,1,0>UD { align1 1H };
add(16) g4<1>UD   g4<8,8,1>UD g8<8,8,1>UD { align1 1H };
shl(16) g10<1>UD  g4<8,8,1>UD 0x00000002UD { align1 1H };
";

/// The SIMD8 thread epilogue.
pub const EOT8: &str = "
mov(8)  g127<1>UD g0<8,8,1>UD { align1 WE_all 1Q };
send(8) null<1>UW g127<8,8,1>UW 0x82000010 thread_spawner MsgDesc: mlen 1 rlen 0 { align1 WE_all 1Q EOT };
";
