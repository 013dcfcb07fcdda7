//! Ferrite: a Vulkan ICD for Intel Gen9 GPUs.
//!
//! The loader finds the three `vk_icd*` symbols ([`entry`]); everything else is reached through
//! the entry-point table there. Every entry point runs inside [`ffi::run`], which catches
//! panics and turns [`error::DriverError`] into a `VkResult`.

mod api_version;
mod bo;
mod cmd;
pub mod debug;
mod descriptor;
mod device;
pub mod entry;
pub mod error;
mod features;
mod ffi;
mod format;
mod group;
pub mod handles;
mod image;
mod inline_uniform;
mod instance;
mod limits;
mod memory;
mod meta;
mod physical;
mod pipeline;
mod private_data;
mod query;
mod queue;
mod refuse;
mod requirements;
mod sampler;
mod sync;

pub use instance::api_version;
