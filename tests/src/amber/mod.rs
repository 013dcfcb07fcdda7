//! An AmberScript runner for the compute subset of Google's Amber test format
//! (`docs/amber_script.md` of google/amber), used to run conformance-style `.amber` files
//! on Ferrite or on any other Vulkan driver the loader selects.
//!
//! Pipeline: [`lexer`] -> [`parser`] (typed [`ast`], printable with `Display`) ->
//! [`runner`], which compiles shaders ([`shader`]), lays buffers out ([`layout`]) and runs
//! them on Vulkan ([`vk`]).

pub mod ast;
pub mod format;
pub mod layout;
pub mod lexer;
pub mod parser;
pub mod runner;
pub mod shader;
pub mod vk;

use thiserror::Error;

/// Everything that can go wrong running a script (other than a failed expectation).
#[derive(Debug, Error)]
pub enum AmberError {
    #[error(transparent)]
    Parse(#[from] parser::ParseError),
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    #[error("shader {shader}: {msg}")]
    Compile { shader: String, msg: String },
    #[error("cannot load the Vulkan loader: {0}")]
    Loader(String),
    #[error("{0} failed: {1}")]
    Vulkan(&'static str, ash::vk::Result),
    #[error("the loader exposes no Vulkan physical device")]
    NoDevice,
    #[error("unknown DEVICE_FEATURE {0}")]
    UnknownFeature(String),
    #[error("unknown DEVICE_PROPERTY {0}")]
    UnknownProperty(String),
    #[error("fence timeout after {0} ms")]
    FenceTimeout(u32),
    #[error("{0}")]
    Setup(String),
}
