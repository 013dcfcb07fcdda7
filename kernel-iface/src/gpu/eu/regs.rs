//! Layout of a thread's register space: the 128 GRFs followed by the architecture
//! registers, so that every operand is a byte offset into one array (docs/gen9.md 2.10).

/// 128 GRFs of 32 bytes.
pub const GRF_SIZE: usize = 4096;
/// `null`: reads as zero, writes are dropped.
pub const NULL_OFF: usize = GRF_SIZE;
/// `a0`: sixteen 16-bit address sub-registers.
pub const A0_OFF: usize = NULL_OFF + 64;
/// `acc0`..`acc9`, 32 bytes each, contiguous (a SIMD16 dword access of acc0 spans acc1).
pub const ACC_OFF: usize = A0_OFF + 32;
/// `f0` (f0.0, f0.1) and `f1` (f1.0, f1.1): 64 flag bits.
pub const F_OFF: usize = ACC_OFF + 320;
/// `ce0` (printed `mask0`): the channel enables of the control flow, without the dispatch
/// mask (refreshed before an instruction reads it).
pub const CE_OFF: usize = F_OFF + 32;
/// `sr0`: sr0.2 = dispatch mask, sr0.3 = vector mask.
pub const SR_OFF: usize = CE_OFF + 32;
/// `cr0`: cr0.0 = float modes.
pub const CR_OFF: usize = SR_OFF + 32;
/// `n0`: notification counts.
pub const N_OFF: usize = CR_OFF + 32;
/// `ip`.
pub const IP_OFF: usize = N_OFF + 32;
/// `tdr0`.
pub const TDR_OFF: usize = IP_OFF + 32;
/// `tm0`: timestamp.
pub const TM_OFF: usize = TDR_OFF + 32;
/// Mask stack registers (no Gen9 use; kept addressable).
pub const MS_OFF: usize = TM_OFF + 32;
/// Total size, with slack so a region that runs a little past the last register stays
/// inside the array (such accesses are illegal regions; they read zeros).
pub const REGS_SIZE: usize = MS_OFF + 32 + 256;
