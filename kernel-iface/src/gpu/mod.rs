//! The simulated Gen9 GPU: command streamer ([`cs`], the [`SimGpu`] backend of the simulated
//! kernel), thread dispatch ([`dispatch`]), data port and gateway ([`dataport`]), the GPU's
//! view of memory ([`memory`]), EU execution ([`eu`]) and the per-op reference semantics used
//! to test it ([`reference`]).

pub mod cs;
pub mod dataport;
pub mod dispatch;
pub mod eu;
pub mod memory;
pub mod reference;
pub mod sampler;
pub mod surface;

pub use cs::SimGpu;
