//! The driver's one error type and its mapping to `VkResult`.

use ash::vk;
use kernel_iface::KernelError;

#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("kernel: {0}")]
    Kernel(#[from] KernelError),
    #[error("invalid {kind} handle {value:#x}")]
    InvalidHandle { kind: &'static str, value: u64 },
    #[error("null pointer passed for {0}")]
    NullPointer(&'static str),
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("extension not present: {0}")]
    ExtensionNotPresent(String),
    #[error("feature not present: {0}")]
    FeatureNotPresent(String),
    #[error("incompatible driver: {0}")]
    IncompatibleDriver(String),
    #[error("out of device memory: {0}")]
    OutOfDeviceMemory(String),
    #[error("memory map failed: {0}")]
    MemoryMapFailed(String),
    #[error("format not supported")]
    FormatNotSupported,
    #[error("not implemented yet: {0}")]
    NotImplemented(&'static str),
    #[error("device lost: {0}")]
    DeviceLost(String),
    #[error("compile failed: {0}")]
    Compile(String),
    #[error("panic: {0}")]
    Panic(String),
}

impl DriverError {
    /// The `VkResult` an application sees for this error.
    pub fn result(&self) -> vk::Result {
        match self {
            DriverError::Kernel(e) => kernel_result(e),
            DriverError::ExtensionNotPresent(_) => vk::Result::ERROR_EXTENSION_NOT_PRESENT,
            DriverError::FeatureNotPresent(_) | DriverError::NotImplemented(_) => {
                vk::Result::ERROR_FEATURE_NOT_PRESENT
            }
            DriverError::IncompatibleDriver(_) => vk::Result::ERROR_INCOMPATIBLE_DRIVER,
            DriverError::OutOfDeviceMemory(_) => vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
            DriverError::MemoryMapFailed(_) => vk::Result::ERROR_MEMORY_MAP_FAILED,
            DriverError::FormatNotSupported => vk::Result::ERROR_FORMAT_NOT_SUPPORTED,
            DriverError::DeviceLost(_) => vk::Result::ERROR_DEVICE_LOST,
            // The shader is valid SPIR-V Ferrite cannot (yet) compile: the pipeline cannot be
            // created (VK_ERROR_UNKNOWN would hide that it is a limitation, not a crash).
            DriverError::Compile(_) => vk::Result::ERROR_FEATURE_NOT_PRESENT,
            // Valid-usage violations are undefined behaviour in Vulkan; we answer instead of crashing.
            DriverError::InvalidHandle { .. }
            | DriverError::NullPointer(_)
            | DriverError::InvalidArgument(_)
            | DriverError::Panic(_) => vk::Result::ERROR_UNKNOWN,
        }
    }

    /// Errors an application provokes on purpose (probing support) are not worth an error line.
    pub fn log_level(&self) -> log::Level {
        match self {
            DriverError::FormatNotSupported => log::Level::Debug,
            DriverError::ExtensionNotPresent(_)
            | DriverError::FeatureNotPresent(_)
            | DriverError::IncompatibleDriver(_)
            | DriverError::OutOfDeviceMemory(_) => log::Level::Warn,
            _ => log::Level::Error,
        }
    }
}

fn kernel_result(e: &KernelError) -> vk::Result {
    const ENOMEM: i32 = 12;
    const ENOSPC: i32 = 28;
    const EIO: i32 = 5;
    match e {
        KernelError::OutOfMemory => vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        KernelError::DeviceLost(_) => vk::Result::ERROR_DEVICE_LOST,
        KernelError::Timeout => vk::Result::TIMEOUT,
        other => match other.errno() {
            Some(ENOMEM) | Some(ENOSPC) => vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
            Some(EIO) => vk::Result::ERROR_DEVICE_LOST,
            _ => vk::Result::ERROR_UNKNOWN,
        },
    }
}

pub type Result<T, E = DriverError> = std::result::Result<T, E>;
