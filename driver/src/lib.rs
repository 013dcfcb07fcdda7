//! Ferrite: a Vulkan ICD for Intel Gen9 GPUs.
