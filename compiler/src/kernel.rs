//! The compiler -> driver kernel contract: the one definition of what a compiled kernel is
//! ([`Kernel`]), how its CURBE data is laid out ([`CurbeLayout`]) and which statistics it
//! reports ([`STATISTICS`]). The back end produces it, the driver records dispatches from it
//! and caches it, the tools print it; docs/dispatch-contract.md describes it in words.
//!
//! The driver never computes a CURBE offset itself: it asks the layout
//! ([`CurbeLayout::curbe_data`], [`CurbeLayout::num_workgroups_offset`]), so the registers
//! the kernel reads and the dwords the driver writes come from the same code.

use crate::BindingUse;
use std::fmt;

/// Bytes in one general register (one CURBE register).
pub const REG_BYTES: u32 = 32;
/// Dwords in one general register.
const REG_DWORDS: usize = 8;

/// The CURBE register layout of a kernel (docs/dispatch-contract.md, "CURBE layout"):
/// g1.. the push-constant registers, then the driver register (num_workgroups x,y,z,
/// base_workgroup_id x,y,z), then the buffer-size registers (one dword per entry of
/// `size_btis`), all cross-thread; then one per-thread register whose last dword is the
/// subgroup id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CurbeLayout {
    /// Registers of push-constant data (ceil(push bytes / 32)).
    pub push_regs: u8,
    /// Binding-table indices whose bound range size (bytes) the driver pushes, one dword
    /// each in order, after the driver register (8 per register).
    pub size_btis: Vec<u32>,
    /// Binding-table index of the push-constant surface (push constants read at dynamic
    /// offsets), when the kernel has such loads; not one of the kernel's `btis`.
    pub push_bti: Option<u32>,
}

/// What the driver knows at dispatch time and the CURBE carries.
#[derive(Clone, Copy, Debug)]
pub struct CurbeValues<'a> {
    /// The push-constant bytes as the application wrote them (shorter is zero-filled).
    pub push: &'a [u8],
    pub num_workgroups: [u32; 3],
    /// vkCmdDispatchBase's base group (0 otherwise).
    pub base_workgroup: [u32; 3],
    /// Threads in one workgroup (one per-thread register each).
    pub threads: u32,
    /// GPU address of the descriptor table's entry for slot 0 (see
    /// [`Kernel::table_descriptors`]; 0 when the kernel has none). The driver allocates only
    /// the entries the kernel reads, so this may point below the allocation: the kernel
    /// always adds `16 * slot` first.
    pub descriptor_table: u64,
}

impl CurbeLayout {
    /// Dword of the driver register holding num_workgroups x (y and z follow).
    pub const NUM_WORKGROUPS_DWORD: u32 = 0;
    /// Dword of the driver register holding base_workgroup_id x (y and z follow).
    pub const BASE_WORKGROUP_DWORD: u32 = 3;
    /// Dword of the per-thread register holding the subgroup id.
    pub const SUBGROUP_ID_DWORD: u32 = 7;
    /// A `size_btis` entry `bti | ADDRESS_LO` asks for the low dword of the 64-bit GPU
    /// address of `bti`'s bound range instead of its size (64-bit atomics on storage
    /// buffers are A64 messages, docs/dispatch-contract.md).
    pub const ADDRESS_LO: u32 = 1 << 31;
    /// A `size_btis` entry `bti | ADDRESS_HI`: the high dword of that address.
    pub const ADDRESS_HI: u32 = 1 << 30;
    /// A `size_btis` entry asking for the low dword of the descriptor table's address
    /// ([`CurbeValues::descriptor_table`]).
    pub const TABLE_LO: u32 = 1 << 29;
    /// A `size_btis` entry asking for the high dword of the descriptor table's address.
    pub const TABLE_HI: u32 = (1 << 29) | 1;

    /// The register and byte of the low and the high dword of the descriptor table's address.
    pub fn table_slots(&self) -> Option<[(u8, u32); 2]> {
        Some([
            self.size_slot(Self::TABLE_LO)?,
            self.size_slot(Self::TABLE_HI)?,
        ])
    }

    /// The register and byte of the low and the high dword of `bti`'s bound-range address.
    pub fn address_slots(&self, bti: u32) -> Option<[(u8, u32); 2]> {
        Some([
            self.size_slot(bti | Self::ADDRESS_LO)?,
            self.size_slot(bti | Self::ADDRESS_HI)?,
        ])
    }
    /// Registers of per-thread data (the subgroup-id register).
    pub const PER_THREAD_REGS: u32 = 1;

    /// The GRF number of the driver register (g0 is R0, the CURBE starts at g1).
    pub fn driver_reg(&self) -> u8 {
        1 + self.push_regs
    }
    /// Registers holding the buffer sizes (ceil(size_btis / 8)).
    pub fn size_regs(&self) -> u8 {
        self.size_btis.len().div_ceil(REG_DWORDS) as u8
    }
    /// The register and byte of the size dword of `bti`, when the layout has one.
    pub fn size_slot(&self, bti: u32) -> Option<(u8, u32)> {
        let k = self.size_btis.iter().position(|&b| b == bti)?;
        Some((
            self.driver_reg() + 1 + (k / REG_DWORDS) as u8,
            4 * (k % REG_DWORDS) as u32,
        ))
    }
    /// The GRF number of the per-thread register.
    pub fn per_thread_reg(&self) -> u8 {
        2 + self.push_regs + self.size_regs()
    }
    /// The first GRF the register allocator may use.
    pub fn first_free(&self) -> u8 {
        self.per_thread_reg() + Self::PER_THREAD_REGS as u8
    }
    /// Registers of the cross-thread block (push, driver and size registers).
    pub fn cross_thread_regs(&self) -> u32 {
        self.push_regs as u32 + 1 + self.size_regs() as u32
    }
    /// Registers of the per-thread block.
    pub fn per_thread_regs(&self) -> u32 {
        Self::PER_THREAD_REGS
    }
    /// Registers of CURBE data for a workgroup of `threads` threads.
    pub fn curbe_regs(&self, threads: u32) -> u32 {
        self.cross_thread_regs() + self.per_thread_regs() * threads
    }
    /// Bytes of push-constant data the CURBE carries.
    pub fn push_bytes(&self) -> u32 {
        u32::from(self.push_regs) * REG_BYTES
    }
    /// CURBE dword index of `reg` (a GRF number of the payload).
    fn dword_of(reg: u8) -> usize {
        (usize::from(reg) - 1) * REG_DWORDS
    }
    /// Byte offset in the CURBE data of num_workgroups x (y and z follow): where an
    /// indirect dispatch stores the group counts it reads from memory.
    pub fn num_workgroups_offset(&self) -> u64 {
        4 * (Self::dword_of(self.driver_reg()) + Self::NUM_WORKGROUPS_DWORD as usize) as u64
    }

    /// The CURBE data of one dispatch, `curbe_regs(threads)` registers: the cross-thread
    /// block then one per-thread block per thread. `buffer_size(bti)` gives the bound range
    /// size of each size entry of `size_btis`, `buffer_address(bti)` the GPU address of the
    /// bound range of each address entry.
    pub fn curbe_data(
        &self,
        v: &CurbeValues,
        buffer_size: impl Fn(u32) -> u32,
        buffer_address: impl Fn(u32) -> u64,
    ) -> Vec<u32> {
        let mut curbe = vec![0u32; self.curbe_regs(v.threads) as usize * REG_DWORDS];
        let push_dw = usize::from(self.push_regs) * REG_DWORDS;
        for (dw, bytes) in curbe[..push_dw].iter_mut().zip(v.push.chunks(4)) {
            let mut b = [0u8; 4];
            b[..bytes.len()].copy_from_slice(bytes);
            *dw = u32::from_le_bytes(b);
        }
        let drv = Self::dword_of(self.driver_reg());
        let n = drv + Self::NUM_WORKGROUPS_DWORD as usize;
        curbe[n..n + 3].copy_from_slice(&v.num_workgroups);
        let b = drv + Self::BASE_WORKGROUP_DWORD as usize;
        curbe[b..b + 3].copy_from_slice(&v.base_workgroup);
        let sizes = drv + REG_DWORDS;
        let tags = Self::ADDRESS_LO | Self::ADDRESS_HI;
        for (i, &e) in self.size_btis.iter().enumerate() {
            let bti = e & !tags;
            curbe[sizes + i] = if e == Self::TABLE_LO {
                v.descriptor_table as u32
            } else if e == Self::TABLE_HI {
                (v.descriptor_table >> 32) as u32
            } else if e & Self::ADDRESS_LO != 0 {
                buffer_address(bti) as u32
            } else if e & Self::ADDRESS_HI != 0 {
                (buffer_address(bti) >> 32) as u32
            } else {
                buffer_size(bti)
            };
        }
        for t in 0..v.threads {
            let reg = self.cross_thread_regs() + t * self.per_thread_regs();
            curbe[reg as usize * REG_DWORDS + Self::SUBGROUP_ID_DWORD as usize] = t;
        }
        curbe
    }
}

/// A compiled kernel: the binary and everything a dispatch needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub binary: Vec<u8>,
    /// SIMD width (8, 16 or 32).
    pub simd: u32,
    pub local_size: [u32; 3],
    /// Where the CURBE data goes.
    pub layout: CurbeLayout,
    /// Bytes of shared local memory.
    pub slm_size: u32,
    /// Per-thread scratch bytes (0, or a power of two >= 1 KB).
    pub scratch_size: u32,
    /// The kernel uses a workgroup barrier (IDD BarrierEnable).
    pub uses_barrier: bool,
    /// Binding-table indices the kernel accesses.
    pub btis: Vec<u32>,
    pub threads_per_group: u32,
    pub stats: Statistics,
    /// Disassembly with byte offsets: filled by `backend::compile`/`compile_simd`, and by the
    /// SPIR-V pipeline only with `CompileOptions::keep_ir` or `FERRITE_DEBUG=asm`.
    pub asm: String,
    /// The optimized IR (only when asked for: `CompileOptions::keep_ir`).
    pub ir: String,
    /// The descriptors the kernel uses (empty when compiled from IR).
    pub bindings: Vec<BindingUse>,
    /// Descriptor slots the kernel reaches through the descriptor table instead of the
    /// binding table, as sorted, disjoint (first slot, count) runs: buffers past the binding
    /// table, accessed with A64 messages (docs/descriptors.md, "Buffers past the binding
    /// table"). For each slot s the driver writes a 16-byte entry at
    /// `descriptor_table + 16 * s`: the bound range's GPU address (dwords 0-1), its size
    /// (dword 2) and 0.
    pub table_descriptors: Vec<(u32, u32)>,
}

impl Kernel {
    /// Entries of the binding table: one past the highest index used (descriptors and the
    /// push-constant surface).
    pub fn binding_table_entries(&self) -> u32 {
        self.btis
            .iter()
            .chain(&self.layout.push_bti)
            .max()
            .map_or(0, |m| m + 1)
    }

    /// Every statistic of [`STATISTICS`], in order, with its value.
    pub fn statistics(&self) -> Vec<(&'static str, u64)> {
        STATISTICS
            .iter()
            .map(|s| (s.name, (s.value)(self)))
            .collect()
    }

    /// The statistics Mesa's drivers report (the first ones of [`STATISTICS`]).
    pub fn mesa_statistics(&self) -> Vec<(&'static str, u64)> {
        STATISTICS
            .iter()
            .filter(|s| s.mesa)
            .map(|s| (s.name, (s.value)(self)))
            .collect()
    }
}

/// What the back end measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Statistics {
    pub instructions: u32,
    pub sends: u32,
    pub loops: u32,
    /// Static cycle estimate of the scheduler's model.
    pub cycles: u64,
    pub spills: u32,
    pub fills: u32,
    pub max_dispatch_width: u32,
    /// Microseconds to compile: the back end alone from `backend::compile`, front end,
    /// passes and back end from `pipeline::compile`.
    pub compile_time_us: u64,
    /// Highest GRF allocated plus one, thread payload included.
    pub grf_used: u32,
    /// Register-allocation rounds (colouring attempts) of the chosen width.
    pub ra_rounds: u32,
    /// Time of each pass (see [`PassTimes`]): a diagnostic of the compile that made the
    /// kernel, not stored in a pipeline cache.
    pub pass_times: crate::pipeline::PassTimes,
}

/// One statistic a kernel reports (vkGetPipelineExecutableStatisticsKHR, `ferrite-cc`,
/// `FERRITE_DEBUG=stats`).
pub struct Statistic {
    pub name: &'static str,
    pub description: &'static str,
    /// One of the statistics Mesa's anv reports, with anv's name and meaning (tools that
    /// read anv's statistics read these).
    pub mesa: bool,
    pub value: fn(&Kernel) -> u64,
}

/// Every statistic, in the order reported: first anv's (Mesa's
/// `anv_GetPipelineExecutableStatisticsKHR` names and descriptions), then Ferrite's own.
/// All are unsigned 64-bit values.
pub const STATISTICS: &[Statistic] = &[
    Statistic {
        name: "Instruction Count",
        description: "Number of GEN instructions in the final generated shader executable.",
        mesa: true,
        value: |k| u64::from(k.stats.instructions),
    },
    Statistic {
        name: "SEND Count",
        description: "Number of instructions in the final generated shader executable which \
                      access external units such as the constant cache or the sampler.",
        mesa: true,
        value: |k| u64::from(k.stats.sends),
    },
    Statistic {
        name: "Loop Count",
        description: "Number of loops (not unrolled) in the final generated shader executable.",
        mesa: true,
        value: |k| u64::from(k.stats.loops),
    },
    Statistic {
        name: "Cycle Count",
        description: "Estimate of the number of EU cycles required to execute the final \
                      generated executable.  This is an estimate only (Ferrite's static \
                      model) and may vary greatly from actual run-time performance.",
        mesa: true,
        value: |k| k.stats.cycles,
    },
    Statistic {
        name: "Spill Count",
        description: "Number of scratch spill operations.  This gives a rough estimate of the \
                      cost incurred due to spilling temporary values to memory.  If this is \
                      non-zero, you may want to adjust your shader to reduce register pressure.",
        mesa: true,
        value: |k| u64::from(k.stats.spills),
    },
    Statistic {
        name: "Fill Count",
        description: "Number of scratch fill operations.  This gives a rough estimate of the \
                      cost incurred due to spilling temporary values to memory.  If this is \
                      non-zero, you may want to adjust your shader to reduce register pressure.",
        mesa: true,
        value: |k| u64::from(k.stats.fills),
    },
    Statistic {
        name: "Max dispatch width",
        description: "Largest SIMD dispatch width.",
        mesa: true,
        value: |k| u64::from(k.stats.max_dispatch_width),
    },
    Statistic {
        name: "Scratch Memory Size",
        description: "Number of bytes of scratch memory required by the generated shader \
                      executable (per hardware thread).  If this is non-zero, you may want to \
                      adjust your shader to reduce register pressure.",
        mesa: false,
        value: |k| u64::from(k.scratch_size),
    },
    Statistic {
        name: "Workgroup Memory Size",
        description: "Number of bytes of workgroup shared memory used by this shader \
                      including any padding.",
        mesa: false,
        value: |k| u64::from(k.slm_size),
    },
    Statistic {
        name: "GRF Registers",
        description: "Number of general registers (of 128) the kernel uses: the highest one \
                      allocated plus one, thread payload included.",
        mesa: false,
        value: |k| u64::from(k.stats.grf_used),
    },
    Statistic {
        name: "Compile Time (us)",
        description: "Microseconds Ferrite's compiler took to produce this executable from \
                      SPIR-V (front end, passes and back end).  On a pipeline-cache hit: the \
                      time of the original compilation.",
        mesa: false,
        value: |k| k.stats.compile_time_us,
    },
];

/// The description of a statistic of [`STATISTICS`] ("" for an unknown name).
pub fn statistic_description(name: &str) -> &'static str {
    STATISTICS
        .iter()
        .find(|s| s.name == name)
        .map_or("", |s| s.description)
}

impl fmt::Display for Kernel {
    /// The statistics, one `name: value` line each.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (n, v) in self.statistics() {
            writeln!(f, "{n}: {v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> CurbeLayout {
        CurbeLayout {
            push_regs: 2,
            size_btis: (0..9).collect(),
            push_bti: None,
        }
    }

    #[test]
    fn registers_follow_the_dispatch_contract() {
        let l = layout();
        assert_eq!(l.driver_reg(), 3);
        assert_eq!(l.size_regs(), 2);
        assert_eq!(l.size_slot(0), Some((4, 0)));
        assert_eq!(l.size_slot(8), Some((5, 0)));
        assert_eq!(l.size_slot(9), None);
        assert_eq!(l.per_thread_reg(), 6);
        assert_eq!(l.first_free(), 7);
        assert_eq!(l.cross_thread_regs(), 5);
        assert_eq!(l.curbe_regs(3), 8);
        assert_eq!(l.num_workgroups_offset(), 64);
    }

    /// A storage buffer with 64-bit atomics: its size entry and the two tagged address
    /// entries, the address halves written where `address_slots` says.
    #[test]
    fn tagged_entries_carry_the_bound_range_address() {
        let l = CurbeLayout {
            push_regs: 0,
            size_btis: vec![3, 3 | CurbeLayout::ADDRESS_LO, 3 | CurbeLayout::ADDRESS_HI],
            push_bti: None,
        };
        let [(rl, bl), (rh, bh)] = l.address_slots(3).unwrap();
        assert_eq!(l.address_slots(4), None);
        let v = CurbeValues {
            push: &[],
            num_workgroups: [1, 1, 1],
            base_workgroup: [0, 0, 0],
            threads: 1,
            descriptor_table: 0,
        };
        let c = l.curbe_data(&v, |_| 96, |_| 0x0000_0012_3456_7000);
        let at = |r: u8, b: u32| c[(usize::from(r) - 1) * 8 + b as usize / 4];
        let (rs, bs) = l.size_slot(3).unwrap();
        assert_eq!(at(rs, bs), 96);
        assert_eq!(at(rl, bl), 0x3456_7000);
        assert_eq!(at(rh, bh), 0x12);
    }

    /// A kernel with table descriptors reads the table's address from the two tagged
    /// entries; other entries keep their meaning.
    #[test]
    fn table_entries_carry_the_descriptor_table_address() {
        let l = CurbeLayout {
            push_regs: 1,
            size_btis: vec![2, CurbeLayout::TABLE_LO, CurbeLayout::TABLE_HI],
            push_bti: None,
        };
        let v = CurbeValues {
            push: &[],
            num_workgroups: [1, 1, 1],
            base_workgroup: [0, 0, 0],
            threads: 1,
            descriptor_table: 0x0000_0001_FFFF_F000,
        };
        let c = l.curbe_data(&v, |_| 48, |_| 0xDEAD);
        let at = |(r, b): (u8, u32)| c[(usize::from(r) - 1) * 8 + b as usize / 4];
        let [lo, hi] = l.table_slots().unwrap();
        assert_eq!((at(lo), at(hi)), (0xFFFF_F000, 1));
        assert_eq!(at(l.size_slot(2).unwrap()), 48);
        assert_eq!(CurbeLayout::default().table_slots(), None);
    }

    #[test]
    fn curbe_data_puts_each_value_where_the_kernel_reads_it() {
        let l = layout();
        let push: Vec<u8> = (1..=40).collect();
        let v = CurbeValues {
            push: &push,
            num_workgroups: [4, 5, 6],
            base_workgroup: [7, 8, 9],
            threads: 2,
            descriptor_table: 0,
        };
        let c = l.curbe_data(&v, |bti| 100 + bti, |bti| u64::from(bti) << 32);
        assert_eq!(c.len(), 8 * l.curbe_regs(2) as usize);
        // Push bytes little-endian from dword 0; the rest of the push registers zero.
        assert_eq!(c[0], 0x0403_0201);
        assert_eq!(c[9], 0x2827_2625);
        assert!(c[10..16].iter().all(|&d| d == 0));
        // The driver register is g3: CURBE dwords 16..24.
        let drv = (usize::from(l.driver_reg()) - 1) * 8;
        assert_eq!(&c[drv..drv + 8], &[4, 5, 6, 7, 8, 9, 0, 0]);
        // Size dwords: register and byte from size_slot.
        for bti in 0..9 {
            let (reg, byte) = l.size_slot(bti).unwrap();
            let dw = (usize::from(reg) - 1) * 8 + byte as usize / 4;
            assert_eq!(c[dw], 100 + bti, "bti {bti}");
        }
        // Subgroup id in dword 7 of each thread's per-thread register.
        for t in 0..2u32 {
            let reg = usize::from(l.per_thread_reg()) + t as usize;
            assert_eq!(c[(reg - 1) * 8 + 7], t);
        }
        assert_eq!(4 * drv as u64, l.num_workgroups_offset());
    }

    #[test]
    fn statistics_list_starts_with_mesas_names() {
        let names: Vec<_> = STATISTICS.iter().map(|s| s.name).collect();
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
            ]
        );
        assert!(STATISTICS.iter().take(7).all(|s| s.mesa));
        assert!(STATISTICS.iter().skip(7).all(|s| !s.mesa));
        for s in STATISTICS {
            assert!(
                !s.description.is_empty() && s.description.len() < 256,
                "{}",
                s.name
            );
            assert_eq!(statistic_description(s.name), s.description);
        }
        assert_eq!(statistic_description("No Such Statistic"), "");
    }
}
