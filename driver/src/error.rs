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
    #[error("pipeline not in the cache and FAIL_ON_PIPELINE_COMPILE_REQUIRED set")]
    PipelineCompileRequired,
    #[error("compile failed: {0}")]
    Compile(#[from] ferrite_compiler::CompileError),
    #[error("panic: {0}")]
    Panic(String),
}

/// What an error that has no code of its own becomes, by command (a shader the compiler refuses
/// has one: VK_ERROR_UNKNOWN, see [`DriverError::result`]). This is the one place that decides:
/// - in vkCreateInstance, vkCreateDevice and vkEnumeratePhysicalDevices, every such error is
///   VK_ERROR_INITIALIZATION_FAILED (the code those commands have for "could not initialise");
/// - a caught panic or an unexpected kernel errno (`severe`) in a command that may report a
///   lost device (queue submission, waits, status queries) is VK_ERROR_DEVICE_LOST: the driver's
///   state for that queue can no longer be trusted;
/// - a severe error in any other command is VK_ERROR_UNKNOWN: the spec's code for "an
///   unexpected error ... that cannot be attributed to valid behavior of the application and
///   implementation", which "may be returned from any command returning a VkResult" (no memory
///   ran out, so OUT_OF_HOST_MEMORY would send the application after the wrong cause);
/// - anything else (an invalid handle or pointer, a violated valid-usage rule) is
///   VK_ERROR_OUT_OF_HOST_MEMORY, the one error every command may return.
pub fn unexpected_result(command: &str, severe: bool) -> vk::Result {
    const INIT: &[&str] = &[
        "vkCreateInstance",
        "vkCreateDevice",
        "vkEnumeratePhysicalDevices",
    ];
    const LOSES_DEVICE: &[&str] = &[
        "vkQueueSubmit",
        "vkQueueSubmit2KHR",
        "vkQueueWaitIdle",
        "vkDeviceWaitIdle",
        "vkWaitForFences",
        "vkGetFenceStatus",
        "vkWaitSemaphoresKHR",
        "vkGetSemaphoreCounterValueKHR",
        "vkGetEventStatus",
        "vkGetQueryPoolResults",
    ];
    if INIT.contains(&command) {
        vk::Result::ERROR_INITIALIZATION_FAILED
    } else if severe && LOSES_DEVICE.contains(&command) {
        vk::Result::ERROR_DEVICE_LOST
    } else if severe {
        vk::Result::ERROR_UNKNOWN
    } else {
        vk::Result::ERROR_OUT_OF_HOST_MEMORY
    }
}

impl DriverError {
    /// The `VkResult` an application sees for this error returned by `command`.
    pub fn result_in(&self, command: &str) -> vk::Result {
        match self.result() {
            Some(r) => r,
            None => unexpected_result(
                command,
                matches!(self, DriverError::Panic(_) | DriverError::Kernel(_)),
            ),
        }
    }

    /// The `VkResult` of this error, or None when it has no code of its own (see
    /// [`unexpected_result`]).
    pub fn result(&self) -> Option<vk::Result> {
        Some(match self {
            DriverError::Kernel(e) => return kernel_result(e),
            DriverError::ExtensionNotPresent(_) => vk::Result::ERROR_EXTENSION_NOT_PRESENT,
            DriverError::FeatureNotPresent(_) | DriverError::NotImplemented(_) => {
                vk::Result::ERROR_FEATURE_NOT_PRESENT
            }
            DriverError::IncompatibleDriver(_) => vk::Result::ERROR_INCOMPATIBLE_DRIVER,
            DriverError::OutOfDeviceMemory(_) => vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
            DriverError::MemoryMapFailed(_) => vk::Result::ERROR_MEMORY_MAP_FAILED,
            DriverError::FormatNotSupported => vk::Result::ERROR_FORMAT_NOT_SUPPORTED,
            DriverError::DeviceLost(_) => vk::Result::ERROR_DEVICE_LOST,
            // VK_EXT_pipeline_creation_cache_control: a success code, not an error.
            DriverError::PipelineCompileRequired => vk::Result::PIPELINE_COMPILE_REQUIRED,
            // A shader the compiler refuses: one that uses a capability or feature the device
            // does not report (a "must not" of the SPIR-V environment appendix, so invalid
            // input), malformed SPIR-V, or a valid shader Ferrite cannot compile (an
            // implementation limit or failure). That is what VK_ERROR_UNKNOWN describes ("either
            // the application has provided invalid input, or an implementation failure has
            // occurred"), a code vkCreateComputePipelines and vkCreateShaderModule list; no
            // memory ran out, so OUT_OF_HOST/DEVICE_MEMORY would mislead, and INVALID_SHADER_NV
            // belongs to VK_NV_glsl_shader. anv answers a SPIR-V it cannot translate the same
            // way. The compiler's reason is logged at error level (`log_level`).
            DriverError::Compile(_) => vk::Result::ERROR_UNKNOWN,
            // Valid-usage violations are undefined behaviour in Vulkan; we answer instead of
            // crashing, with a code that depends on the command (unexpected_result).
            DriverError::InvalidHandle { .. }
            | DriverError::NullPointer(_)
            | DriverError::InvalidArgument(_)
            | DriverError::Panic(_) => return None,
        })
    }

    /// Errors an application provokes on purpose (probing support) are not worth an error line.
    pub fn log_level(&self) -> log::Level {
        match self {
            DriverError::FormatNotSupported | DriverError::PipelineCompileRequired => {
                log::Level::Debug
            }
            DriverError::ExtensionNotPresent(_)
            | DriverError::FeatureNotPresent(_)
            | DriverError::IncompatibleDriver(_)
            | DriverError::OutOfDeviceMemory(_) => log::Level::Warn,
            _ => log::Level::Error,
        }
    }
}

fn kernel_result(e: &KernelError) -> Option<vk::Result> {
    const ENOMEM: i32 = 12;
    const ENOSPC: i32 = 28;
    const EIO: i32 = 5;
    match e {
        KernelError::OutOfMemory => Some(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
        KernelError::DeviceLost(_) => Some(vk::Result::ERROR_DEVICE_LOST),
        KernelError::Timeout => Some(vk::Result::TIMEOUT),
        other => match other.errno() {
            Some(ENOMEM) | Some(ENOSPC) => Some(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
            Some(EIO) => Some(vk::Result::ERROR_DEVICE_LOST),
            _ => None,
        },
    }
}

pub type Result<T, E = DriverError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_without_a_code_of_their_own_follow_the_command() {
        let misuse = [
            DriverError::InvalidHandle {
                kind: "VkFence",
                value: 7,
            },
            DriverError::NullPointer("p"),
            DriverError::InvalidArgument("x".into()),
        ];
        let severe = [
            DriverError::Panic("boom".into()),
            DriverError::Kernel(KernelError::from_errno("TEST", 22)),
        ];
        for e in misuse.iter().chain(&severe) {
            assert_eq!(
                e.result_in("vkCreateDevice"),
                vk::Result::ERROR_INITIALIZATION_FAILED
            );
        }
        for e in &misuse {
            for command in ["vkCreateBuffer", "vkQueueSubmit"] {
                assert_eq!(e.result_in(command), vk::Result::ERROR_OUT_OF_HOST_MEMORY);
            }
        }
        for e in &severe {
            assert_eq!(e.result_in("vkQueueSubmit"), vk::Result::ERROR_DEVICE_LOST);
            assert_eq!(e.result_in("vkCreateBuffer"), vk::Result::ERROR_UNKNOWN);
        }
        assert_eq!(
            DriverError::DeviceLost("x".into()).result_in("vkCreateBuffer"),
            vk::Result::ERROR_DEVICE_LOST
        );
    }

    #[test]
    fn compile_errors_are_unknown_and_logged_as_errors() {
        let e = DriverError::Compile(ferrite_compiler::CompileError::Unsupported(
            "unsupported capability".into(),
        ));
        for command in ["vkCreateComputePipelines", "vkCreateShaderModule"] {
            assert_eq!(e.result_in(command), vk::Result::ERROR_UNKNOWN);
        }
        assert_eq!(e.log_level(), log::Level::Error);
    }
}
