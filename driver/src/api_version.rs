//! The apiVersion decision: the highest Vulkan version whose base + compute requirements all
//! hold, computed from what the driver offers (its entry-point table, feature rows, properties
//! and SPIR-V acceptance) against a table of each version's requirements.
//!
//! The table follows the specification's own split (docs/api-version.md quotes it): the
//! commands of the `VK_BASE_VERSION_1_x` and `VK_COMPUTE_VERSION_1_x` interface sets of
//! `vk.xml`, the "Feature requirements" of `VK_VERSION_1_x`, the required limits of the
//! "Limit Requirements" table and the SPIR-V versions of the "Versions and Formats" appendix.
//! A requirement that only concerns rendering (render passes, multiview, fragment shaders) is
//! listed with [`Scope::Rendering`]: it cannot be met or used on a device whose only queue
//! family is compute + transfer, so it does not hold a version back; the feature stays false.
//!
//! Nothing here is set by hand: when a helper's feature row or command lands, the version
//! rises by itself, and the test `decision_on_skl_gt2` says what blocks the next one.

use ash::vk;
use kernel_iface::DeviceInfo;

use crate::entry::{EntryInfo, ENTRY_POINTS};

/// The versions the table describes, lowest first.
pub const VERSIONS: [u32; 4] = [
    vk::API_VERSION_1_0,
    vk::API_VERSION_1_1,
    vk::API_VERSION_1_2,
    vk::API_VERSION_1_3,
];

/// Whether a requirement concerns compute (checked) or only rendering (listed, not checked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Compute,
    Rendering,
}

/// When a command may be present as an entry point that refuses (logs and returns an error)
/// instead of working: the spec forbids calling it unless something optional is offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// The command must work.
    Always,
    /// Valid only when this feature is enabled; a refusing entry suffices while it is false.
    Feature(&'static str),
    /// Takes a VkImage: refusing is accepted while vkCreateImage refuses (no image can exist,
    /// as on the 1.0 device today); once images work, it must work too.
    Images,
}

/// The properties and limits the table checks, as the driver reports them.
#[derive(Clone, Debug, Default)]
pub struct Props {
    pub max_per_set_descriptors: u32,
    pub max_memory_allocation_size: u64,
    pub subgroup_size: u32,
    pub subgroup_stages: vk::ShaderStageFlags,
    pub subgroup_operations: vk::SubgroupFeatureFlags,
    pub max_timeline_semaphore_value_difference: u64,
    pub max_buffer_size: u64,
    pub min_subgroup_size: u32,
    pub max_subgroup_size: u32,
    pub max_compute_workgroup_subgroups: u32,
    pub max_inline_uniform_block_size: u32,
    pub max_inline_uniform_total_size: u32,
}

/// One requirement of one version.
#[derive(Clone, Copy, Debug)]
pub enum Need {
    /// A command of the version's base or compute interface, under its core name.
    Command(&'static str, Gate),
    /// A feature the version requires.
    Feature(&'static str),
    /// A feature required when another one is supported (`depends` in vk.xml).
    FeatureIf(&'static str, &'static str),
    /// A limit or property with its required value.
    Property(&'static str, fn(&Props) -> bool),
    /// The highest SPIR-V version the version must accept, as (major << 16) | (minor << 8).
    Spirv(u32),
}

/// A row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Requirement {
    pub version: u32,
    pub scope: Scope,
    pub need: Need,
}

/// The features vk.xml's VK_VERSION_1_2 "Feature requirements" require of a device that
/// reports descriptorIndexing (VK_EXT_descriptor_indexing).
pub const DESCRIPTOR_INDEXING_REQUIRES: [&str; 15] = [
    "shaderSampledImageArrayDynamicIndexing",
    "shaderStorageBufferArrayDynamicIndexing",
    "shaderUniformTexelBufferArrayDynamicIndexing",
    "shaderStorageTexelBufferArrayDynamicIndexing",
    "shaderSampledImageArrayNonUniformIndexing",
    "shaderStorageBufferArrayNonUniformIndexing",
    "shaderUniformTexelBufferArrayNonUniformIndexing",
    "descriptorBindingSampledImageUpdateAfterBind",
    "descriptorBindingStorageImageUpdateAfterBind",
    "descriptorBindingStorageBufferUpdateAfterBind",
    "descriptorBindingUniformTexelBufferUpdateAfterBind",
    "descriptorBindingStorageTexelBufferUpdateAfterBind",
    "descriptorBindingUpdateUnusedWhilePending",
    "descriptorBindingPartiallyBound",
    "runtimeDescriptorArray",
];

const fn req(version: u32, scope: Scope, need: Need) -> Requirement {
    Requirement {
        version,
        scope,
        need,
    }
}

use Gate::{Always, Images};
use Need::{Command, Feature, FeatureIf, Property, Spirv};
use Scope::{Compute, Rendering};

const V10: u32 = vk::API_VERSION_1_0;
const V11: u32 = vk::API_VERSION_1_1;
const V12: u32 = vk::API_VERSION_1_2;
const V13: u32 = vk::API_VERSION_1_3;

macro_rules! commands {
    ($v:expr, $gate:expr; $($name:literal),* $(,)?) => {
        [$(req($v, Compute, Command($name, $gate))),*]
    };
}

/// The requirements, version by version (Vulkan-Docs 1.4.360: `xml/vk.xml`,
/// `chapters/features.adoc` "Feature Requirements", `chapters/limits.adoc` "Limit
/// Requirements", `appendices/spirvenv.adoc`). 1.0's compute commands are the driver's
/// existing table and are not repeated; its one feature requirement is.
pub fn table() -> Vec<Requirement> {
    let mut t = vec![
        // VK_VERSION_1_0 "Feature requirements".
        req(V10, Compute, Feature("robustBufferAccess")),
        req(V10, Compute, Spirv(0x0001_0000)),
    ];
    // VK_BASE_VERSION_1_1 + VK_COMPUTE_VERSION_1_1.
    t.extend(commands!(V11, Always;
        "vkEnumerateInstanceVersion", "vkBindBufferMemory2", "vkGetDeviceGroupPeerMemoryFeatures",
        "vkCmdSetDeviceMask", "vkEnumeratePhysicalDeviceGroups", "vkGetBufferMemoryRequirements2",
        "vkGetPhysicalDeviceFeatures2", "vkGetPhysicalDeviceProperties2",
        "vkGetPhysicalDeviceFormatProperties2", "vkGetPhysicalDeviceImageFormatProperties2",
        "vkGetPhysicalDeviceQueueFamilyProperties2", "vkGetPhysicalDeviceMemoryProperties2",
        "vkGetPhysicalDeviceSparseImageFormatProperties2", "vkTrimCommandPool", "vkGetDeviceQueue2",
        "vkGetPhysicalDeviceExternalBufferProperties", "vkGetPhysicalDeviceExternalFenceProperties",
        "vkGetPhysicalDeviceExternalSemaphoreProperties", "vkCmdDispatchBase",
        "vkCreateDescriptorUpdateTemplate", "vkDestroyDescriptorUpdateTemplate",
        "vkUpdateDescriptorSetWithTemplate", "vkGetDescriptorSetLayoutSupport",
    ));
    t.extend(commands!(V11, Images;
        "vkBindImageMemory2", "vkGetImageMemoryRequirements2", "vkGetImageSparseMemoryRequirements2",
    ));
    t.extend(commands!(V11, Gate::Feature("samplerYcbcrConversion");
        "vkCreateSamplerYcbcrConversion", "vkDestroySamplerYcbcrConversion",
    ));
    t.extend([
        // VK_VERSION_1_1 "Feature requirements".
        req(V11, Rendering, Feature("multiview")),
        req(
            V11,
            Compute,
            FeatureIf(
                "storageBuffer16BitAccess",
                "uniformAndStorageBuffer16BitAccess",
            ),
        ),
        // shaderDrawParameters is required only with VK_KHR_shader_draw_parameters (vertex).
        // "Limit Requirements": the 1.1 rows.
        req(
            V11,
            Compute,
            Property("maxPerSetDescriptors >= 1024", |p| {
                p.max_per_set_descriptors >= 1024
            }),
        ),
        req(
            V11,
            Compute,
            Property("maxMemoryAllocationSize >= 2^30", |p| {
                p.max_memory_allocation_size >= 1 << 30
            }),
        ),
        req(
            V11,
            Compute,
            Property("subgroupSize >= 1", |p| p.subgroup_size >= 1),
        ),
        req(
            V11,
            Compute,
            Property("subgroupSupportedStages has COMPUTE", |p| {
                p.subgroup_stages.contains(vk::ShaderStageFlags::COMPUTE)
            }),
        ),
        req(
            V11,
            Compute,
            Property("subgroupSupportedOperations has BASIC", |p| {
                p.subgroup_operations
                    .contains(vk::SubgroupFeatureFlags::BASIC)
            }),
        ),
        // "Versions and Formats": a 1.1 implementation accepts SPIR-V 1.0-1.3.
        req(V11, Compute, Spirv(0x0001_0300)),
    ]);
    // VK_BASE_VERSION_1_2 (VK_COMPUTE_VERSION_1_2 adds types only).
    t.extend(commands!(V12, Always;
        "vkResetQueryPool", "vkGetSemaphoreCounterValue", "vkWaitSemaphores", "vkSignalSemaphore",
    ));
    t.extend(commands!(V12, Gate::Feature("bufferDeviceAddress");
        "vkGetBufferDeviceAddress", "vkGetBufferOpaqueCaptureAddress",
        "vkGetDeviceMemoryOpaqueCaptureAddress",
    ));
    t.extend([
        // VK_VERSION_1_2 "Feature requirements".
        req(V12, Compute, Feature("subgroupBroadcastDynamicId")),
        req(V12, Rendering, Feature("imagelessFramebuffer")),
        req(V12, Compute, Feature("uniformBufferStandardLayout")),
        req(V12, Compute, Feature("shaderSubgroupExtendedTypes")),
        req(V12, Rendering, Feature("separateDepthStencilLayouts")),
        req(V12, Compute, Feature("hostQueryReset")),
        req(V12, Compute, Feature("timelineSemaphore")),
        req(
            V12,
            Compute,
            FeatureIf(
                "storageBuffer8BitAccess",
                "uniformAndStorageBuffer8BitAccess",
            ),
        ),
        req(
            V12,
            Compute,
            FeatureIf("shaderInt64", "shaderBufferInt64Atomics"),
        ),
        req(
            V12,
            Compute,
            FeatureIf("shaderInt64", "shaderSharedInt64Atomics"),
        ),
        req(
            V12,
            Compute,
            Property("maxTimelineSemaphoreValueDifference >= 2^31-1", |p| {
                p.max_timeline_semaphore_value_difference >= (1 << 31) - 1
            }),
        ),
        // "Versions and Formats": 1.2 accepts SPIR-V 1.0-1.5.
        req(V12, Compute, Spirv(0x0001_0500)),
    ]);
    // VK_VERSION_1_2 "Feature requirements": what descriptorIndexing brings with it.
    t.extend(
        DESCRIPTOR_INDEXING_REQUIRES
            .iter()
            .map(|&f| req(V12, Compute, FeatureIf(f, "descriptorIndexing"))),
    );
    // VK_BASE_VERSION_1_3 + VK_COMPUTE_VERSION_1_3.
    t.extend(commands!(V13, Always;
        "vkGetPhysicalDeviceToolProperties", "vkCreatePrivateDataSlot", "vkDestroyPrivateDataSlot",
        "vkSetPrivateData", "vkGetPrivateData", "vkCmdPipelineBarrier2", "vkCmdWriteTimestamp2",
        "vkQueueSubmit2", "vkCmdCopyBuffer2", "vkGetDeviceBufferMemoryRequirements",
        "vkCmdSetEvent2", "vkCmdResetEvent2", "vkCmdWaitEvents2",
    ));
    t.extend(commands!(V13, Images;
        "vkCmdCopyImage2", "vkCmdCopyBufferToImage2", "vkCmdCopyImageToBuffer2",
        "vkGetDeviceImageMemoryRequirements", "vkGetDeviceImageSparseMemoryRequirements",
    ));
    t.extend([
        // VK_VERSION_1_3 "Feature requirements". OpTerminateInvocation and
        // OpDemoteToHelperInvocation exist only in the Fragment execution model.
        req(V13, Rendering, Feature("shaderTerminateInvocation")),
        req(V13, Rendering, Feature("shaderDemoteToHelperInvocation")),
        req(V13, Compute, Feature("privateData")),
        req(V13, Compute, Feature("pipelineCreationCacheControl")),
        req(V13, Compute, Feature("synchronization2")),
        req(V13, Compute, Feature("shaderZeroInitializeWorkgroupMemory")),
        req(V13, Compute, Feature("robustImageAccess")),
        req(V13, Compute, Feature("subgroupSizeControl")),
        req(V13, Compute, Feature("computeFullSubgroups")),
        req(V13, Rendering, Feature("dynamicRendering")),
        req(V13, Compute, Feature("shaderIntegerDotProduct")),
        req(V13, Compute, Feature("maintenance4")),
        req(V13, Compute, Feature("vulkanMemoryModel")),
        req(V13, Compute, Feature("vulkanMemoryModelDeviceScope")),
        req(V13, Compute, Feature("inlineUniformBlock")),
        req(V13, Compute, Feature("bufferDeviceAddress")),
        req(
            V13,
            Compute,
            FeatureIf(
                "descriptorBindingInlineUniformBlockUpdateAfterBind",
                "descriptorIndexing",
            ),
        ),
        req(
            V13,
            Compute,
            Property("maxBufferSize >= 2^30", |p| p.max_buffer_size >= 1 << 30),
        ),
        req(
            V13,
            Compute,
            Property("minSubgroupSize <= subgroupSize <= maxSubgroupSize", |p| {
                p.min_subgroup_size >= 1
                    && p.min_subgroup_size <= p.subgroup_size
                    && p.subgroup_size <= p.max_subgroup_size
            }),
        ),
        req(
            V13,
            Compute,
            Property("maxComputeWorkgroupSubgroups >= 1", |p| {
                p.max_compute_workgroup_subgroups >= 1
            }),
        ),
        req(
            V13,
            Compute,
            Property("maxInlineUniformBlockSize >= 256", |p| {
                p.max_inline_uniform_block_size >= 256
            }),
        ),
        req(
            V13,
            Compute,
            Property("maxInlineUniformTotalSize >= 256", |p| {
                p.max_inline_uniform_total_size >= 256
            }),
        ),
        // "Versions and Formats": 1.3 accepts SPIR-V 1.0-1.6.
        req(V13, Compute, Spirv(0x0001_0600)),
    ]);
    t
}

/// What the driver offers, gathered from its own tables.
pub struct Offer {
    /// Feature rows (`features::rows`).
    pub features: Vec<(&'static str, bool)>,
    /// The entry-point table.
    pub entries: &'static [EntryInfo],
    pub props: Props,
    /// Highest SPIR-V version the compiler's front end translates.
    pub spirv: u32,
}

impl Offer {
    /// The offer of the driver on a device entry.
    pub fn of(info: &DeviceInfo) -> Offer {
        Offer {
            features: crate::features::rows(info),
            entries: ENTRY_POINTS,
            props: crate::physical::version_props(info),
            spirv: ferrite_compiler::Target::gen9().max_spirv_version,
        }
    }

    fn feature(&self, name: &str) -> bool {
        crate::features::supported(&self.features, name)
    }

    /// The entry under its core name: Some(true) works, Some(false) refuses, None absent.
    fn command(&self, name: &str) -> Option<bool> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.implemented)
    }

    /// Why `r` does not hold, or None when it does.
    pub fn unmet(&self, r: &Requirement) -> Option<String> {
        match r.need {
            Command(name, gate) => {
                let refusal_ok = match gate {
                    Always => false,
                    Gate::Feature(f) => !self.feature(f),
                    Images => self.command("vkCreateImage") != Some(true),
                };
                match self.command(name) {
                    Some(true) => None,
                    Some(false) if refusal_ok => None,
                    Some(false) => Some(format!("command {name} refuses")),
                    None => Some(format!("command {name} missing")),
                }
            }
            Feature(f) => (!self.feature(f)).then(|| format!("feature {f}")),
            FeatureIf(f, when) => (self.feature(when) && !self.feature(f))
                .then(|| format!("feature {f} (required with {when})")),
            Property(what, ok) => (!ok(&self.props)).then(|| format!("property {what}")),
            Spirv(v) => {
                (self.spirv < v).then(|| format!("SPIR-V {}.{} accepted", v >> 16, (v >> 8) & 0xff))
            }
        }
    }
}

/// The outcome: the version reported and what keeps each higher version away.
#[derive(Debug)]
pub struct Decision {
    pub version: u32,
    /// (version, unmet compute requirements) for every version above the reported one
    /// (and for the reported one when it is the 1.0 floor with requirements unmet).
    pub blockers: Vec<(u32, Vec<String>)>,
}

/// The highest version whose compute requirements, and those of every version below it, all
/// hold. 1.0 is the floor: a Vulkan driver cannot report less.
pub fn decide(offer: &Offer) -> Decision {
    let table = table();
    let mut version = V10;
    let mut blocked = false;
    let mut blockers = Vec::new();
    for v in VERSIONS {
        let unmet: Vec<String> = table
            .iter()
            .filter(|r| r.version == v && r.scope == Compute)
            .filter_map(|r| offer.unmet(r))
            .collect();
        if unmet.is_empty() && !blocked {
            version = v;
        } else {
            blocked = true;
        }
        if !unmet.is_empty() {
            blockers.push((v, unmet));
        }
    }
    Decision { version, blockers }
}

/// The apiVersion of a device entry (with patch 0; cached per entry is not needed, the
/// decision is a few hundred comparisons).
pub fn device_version(info: &DeviceInfo) -> u32 {
    decide(&Offer::of(info)).version
}

/// The instance's version (vkEnumerateInstanceVersion): the highest device decision over the
/// device-info table, so an instance never offers less than one of its devices.
pub fn driver_version() -> u32 {
    static V: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *V.get_or_init(|| {
        let v = kernel_iface::device_info::DEVICES
            .iter()
            .map(device_version)
            .max()
            .unwrap_or(V10);
        // Once per process: what was decided and why the next version is not reported.
        if let Some(info) = kernel_iface::lookup_pci_id(kernel_iface::DEFAULT_SIM_PCI_ID) {
            let d = decide(&Offer::of(info));
            log::info!("apiVersion {} ({})", name(v), info.name);
            for (bv, unmet) in d.blockers.iter().filter(|(bv, _)| *bv > d.version).take(1) {
                log::info!("Vulkan {} blocked by: {}", name(*bv), unmet.join("; "));
            }
        }
        v
    })
}

/// The highest SPIR-V version a device of `version` accepts (the table's `Spirv` rows).
pub fn spirv_for(version: u32) -> u32 {
    table()
        .iter()
        .filter(|r| r.version <= version)
        .filter_map(|r| match r.need {
            Spirv(v) => Some(v),
            _ => None,
        })
        .max()
        .unwrap_or(0x0001_0000)
}

/// `major.minor` of a version, for logs and messages.
pub fn name(v: u32) -> String {
    format!("{}.{}", vk::api_version_major(v), vk::api_version_minor(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_iface::lookup_pci_id;

    fn report(d: &Decision) -> String {
        let mut s = format!("reported: {}\n", name(d.version));
        for (v, unmet) in &d.blockers {
            s += &format!("blocking {}:\n", name(*v));
            for u in unmet {
                s += &format!("  {u}\n");
            }
        }
        s
    }

    /// Pins the decision on the default simulated device and prints what blocks each higher
    /// version. When a feature or command lands, this test fails and shows the new list: update
    /// the expected version and blocker count with the change that raised it. 1.3 is the
    /// highest version the table knows, so nothing is listed while every row holds.
    #[test]
    fn decision_on_skl_gt2() {
        let d = decide(&Offer::of(lookup_pci_id(0x1912).unwrap()));
        let r = report(&d);
        println!("{r}");
        assert_eq!(d.version, vk::API_VERSION_1_3, "{r}");
        assert!(d.blockers.is_empty(), "{r}");
    }

    #[test]
    fn spirv_follows_the_version() {
        assert_eq!(spirv_for(V10), 0x0001_0000);
        assert_eq!(spirv_for(V11), 0x0001_0300);
        assert_eq!(spirv_for(V12), 0x0001_0500);
        assert_eq!(spirv_for(V13), 0x0001_0600);
    }

    #[test]
    fn a_version_needs_every_lower_version() {
        // With every requirement met except one of 1.1, 1.2's own rows do not help.
        let mut offer = Offer::of(lookup_pci_id(0x1912).unwrap());
        let all: Vec<&'static str> = table()
            .iter()
            .filter_map(|r| match r.need {
                Feature(f) | FeatureIf(f, _) => Some(f),
                _ => None,
            })
            .collect();
        offer.features = all.iter().map(|f| (*f, true)).collect();
        offer.props = Props {
            max_per_set_descriptors: 1024,
            max_memory_allocation_size: 1 << 30,
            subgroup_size: 16,
            subgroup_stages: vk::ShaderStageFlags::COMPUTE,
            subgroup_operations: vk::SubgroupFeatureFlags::BASIC,
            max_timeline_semaphore_value_difference: u64::MAX,
            max_buffer_size: 1 << 30,
            min_subgroup_size: 8,
            max_subgroup_size: 32,
            max_compute_workgroup_subgroups: 128,
            max_inline_uniform_block_size: 256,
            max_inline_uniform_total_size: 256,
        };
        let names: Vec<&'static str> = table()
            .iter()
            .filter_map(|r| match r.need {
                Command(n, _) => Some(n),
                _ => None,
            })
            .collect();
        let entries: Vec<EntryInfo> = names
            .iter()
            .chain(["vkCreateImage"].iter())
            .map(|n| EntryInfo {
                name: n,
                scope: crate::entry::Scope::Device,
                extension: None,
                implemented: true,
            })
            .collect();
        offer.entries = Box::leak(entries.into_boxed_slice());
        assert_eq!(decide(&offer).version, vk::API_VERSION_1_3);
        offer.props.max_per_set_descriptors = 1023;
        let d = decide(&offer);
        assert_eq!(d.version, vk::API_VERSION_1_0, "{}", report(&d));
        assert_eq!(d.blockers.len(), 1);
    }

    #[test]
    fn gated_commands_may_refuse_until_their_feature_or_images_exist() {
        let mut offer = Offer::of(lookup_pci_id(0x1912).unwrap());
        let refusing = |n: &'static str| EntryInfo {
            name: n,
            scope: crate::entry::Scope::Device,
            extension: None,
            implemented: false,
        };
        let ycbcr = req(
            V11,
            Compute,
            Command(
                "vkCreateSamplerYcbcrConversion",
                Gate::Feature("samplerYcbcrConversion"),
            ),
        );
        let image = req(V11, Compute, Command("vkBindImageMemory2", Images));
        offer.entries = Box::leak(Box::new([
            refusing("vkCreateSamplerYcbcrConversion"),
            refusing("vkBindImageMemory2"),
            refusing("vkCreateImage"),
        ]));
        assert_eq!(offer.unmet(&ycbcr), None);
        assert_eq!(offer.unmet(&image), None);
        offer.features.push(("samplerYcbcrConversion", true));
        assert!(offer.unmet(&ycbcr).is_some());
        let mut e = offer.entries.to_vec();
        e[2].implemented = true;
        offer.entries = Box::leak(e.into_boxed_slice());
        assert_eq!(
            offer.unmet(&image).as_deref(),
            Some("command vkBindImageMemory2 refuses")
        );
    }

    #[test]
    fn rendering_rows_name_features_a_compute_device_cannot_use() {
        let rendering: Vec<&str> = table()
            .iter()
            .filter(|r| r.scope == Rendering)
            .filter_map(|r| match r.need {
                Feature(f) => Some(f),
                _ => None,
            })
            .collect();
        assert_eq!(
            rendering,
            [
                "multiview",
                "imagelessFramebuffer",
                "separateDepthStencilLayouts",
                "shaderTerminateInvocation",
                "shaderDemoteToHelperInvocation",
                "dynamicRendering"
            ]
        );
    }
}
