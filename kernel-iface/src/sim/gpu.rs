//! The hook between the simulated kernel and the simulated GPU.
//!
//! The kernel side validates an execbuffer exactly as i915 does, places every object at its
//! GPU address and then hands the GPU a [`ExecJob`]. What the GPU does with it (walk the batch
//! with a command streamer, run EU threads) lives behind [`GpuBackend`], so a real command
//! streamer plugs in with [`super::SimKernel::set_gpu_backend`] without touching the ioctl
//! layer.

use std::sync::Arc;

use super::memory::BoMemory;

/// One validated object of an execbuffer, bound at its GPU virtual address.
#[derive(Debug, Clone)]
pub struct ExecObject {
    pub handle: u32,
    /// GPU virtual address (non-canonical form, below 2^48).
    pub address: u64,
    /// Bytes the binding covers (object size, or `pad_to_size` if larger).
    pub size: u64,
    /// `EXEC_OBJECT_*` flags as given.
    pub flags: u64,
    pub memory: Arc<BoMemory>,
}

/// A batch ready to run on the render engine.
#[derive(Debug)]
pub struct ExecJob<'a> {
    /// The context's id (state that survives between batches belongs to it).
    pub ctx_id: u32,
    /// Every object of the execbuffer, in the user's order.
    pub objects: &'a [ExecObject],
    /// Index of the batch object in `objects`.
    pub batch_index: usize,
    /// Byte offset of the first command in the batch object.
    pub batch_start: u64,
    /// Length of the batch in bytes (the rest of the object when the user gave 0).
    pub batch_len: u64,
}

impl ExecJob<'_> {
    /// The batch object.
    pub fn batch(&self) -> &ExecObject {
        &self.objects[self.batch_index]
    }

    /// GPU address of the first batch command.
    pub fn batch_address(&self) -> u64 {
        self.batch().address + self.batch_start
    }

    /// Finds the object bound at GPU address `address` and the offset inside it.
    pub fn translate(&self, address: u64) -> Option<(&ExecObject, u64)> {
        self.objects
            .iter()
            .find(|o| address >= o.address && address - o.address < o.size)
            .map(|o| (o, address - o.address))
    }
}

/// The GPU stopped making progress (runaway kernel, bad command, fault).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("GPU hang: {reason}")]
pub struct GpuHang {
    pub reason: String,
}

/// Why a job did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The GPU hung: the kernel signals the job's fences with an error, blames the context
    /// and bans it if it is not recoverable.
    #[error(transparent)]
    Hang(#[from] GpuHang),
    /// The backend cannot run this job at all; the execbuffer ioctl fails with ENODEV and
    /// nothing is signaled.
    #[error("not supported by the simulated GPU: {0}")]
    Unsupported(String),
}

/// The simulated GPU behind the simulated kernel.
pub trait GpuBackend: Send + Sync {
    /// Runs one batch to completion (or to a hang).
    fn execute(&self, job: &ExecJob<'_>) -> Result<(), ExecError>;

    /// A context was destroyed; per-context GPU state may be dropped.
    fn context_destroyed(&self, _ctx_id: u32) {}
}

/// The default backend until the simulated GPU exists: it refuses every batch, loudly.
#[derive(Debug, Default)]
pub struct NoGpu;

impl GpuBackend for NoGpu {
    fn execute(&self, job: &ExecJob<'_>) -> Result<(), ExecError> {
        log::error!(
            "batch execution not implemented by the simulated GPU yet (context {}, batch at 0x{:x}, {} bytes)",
            job.ctx_id,
            job.batch_address(),
            job.batch_len
        );
        Err(ExecError::Unsupported(
            "batch execution not implemented by the simulated GPU yet".into(),
        ))
    }
}
