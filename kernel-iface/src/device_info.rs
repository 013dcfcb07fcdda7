//! Per-PCI-id device facts, as a table.
//!
//! Facts (counts, limits, PCI ids and names) are taken from Mesa's
//! `src/intel/dev/intel_device_info.c` and `include/pci_ids/iris_pci_ids.h` (Mesa 25.0, MIT
//! licence); only the numbers are used. Gen11/Gen12 rows are placeholders marked unsupported:
//! Ferrite compiles for Gen9 only so far.

use crate::KernelError;

/// GPU generation ("gfx version").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gen {
    Gen9,
    Gen11,
    Gen12,
}

/// Platform (code name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    Skl,
    Kbl,
    Cfl,
    Icl,
    Tgl,
}

impl Platform {
    /// The short lower-case name used by `FERRITE_DEVICE=sim:<platform>`.
    pub fn short_name(self) -> &'static str {
        match self {
            Platform::Skl => "skl",
            Platform::Kbl => "kbl",
            Platform::Cfl => "cfl",
            Platform::Icl => "icl",
            Platform::Tgl => "tgl",
        }
    }

    const ALL: [Platform; 5] = [
        Platform::Skl,
        Platform::Kbl,
        Platform::Cfl,
        Platform::Icl,
        Platform::Tgl,
    ];
}

/// Facts about one PCI device id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceInfo {
    pub pci_id: u16,
    /// Short name, e.g. "SKL GT2".
    pub name: &'static str,
    /// Marketing name, e.g. "Intel(R) HD Graphics 530".
    pub marketing_name: &'static str,
    pub platform: Platform,
    pub gen: Gen,
    pub gt: u8,
    pub slices: u32,
    /// Subslices in total (all slices).
    pub subslices: u32,
    pub eus_per_subslice: u32,
    pub eu_total: u32,
    pub threads_per_eu: u32,
    /// Hardware threads one compute work group may use (Mesa's `max_cs_threads`).
    pub max_threads_per_group: u32,
    /// Shared local memory one work group may use, in bytes.
    pub slm_size_per_group: u32,
    pub has_fp64: bool,
    pub has_int64: bool,
    pub has_llc: bool,
    /// Command-streamer timestamp frequency.
    pub timestamp_frequency_hz: u64,
    /// Size of the per-context GPU virtual address space (48-bit full PPGTT on Gen9+).
    pub aperture_size: u64,
    /// Whether Ferrite drives this device. Gen11/Gen12 entries are placeholders.
    pub supported: bool,
}

impl DeviceInfo {
    /// Subslices in one slice (the table has uniform slices).
    pub fn subslices_per_slice(&self) -> u32 {
        self.subslices / self.slices
    }
}

/// The PCI id the simulated device answers as unless told otherwise: SKL GT2.
pub const DEFAULT_SIM_PCI_ID: u16 = 0x1912;

const KIB: u32 = 1024;

/// Gen9 template (GFX9_FEATURES in Mesa): 7 threads/EU, 56 CS threads, 12 MHz timestamps,
/// fp64/int64, LLC.
const GEN9: DeviceInfo = DeviceInfo {
    pci_id: 0,
    name: "",
    marketing_name: "",
    platform: Platform::Skl,
    gen: Gen::Gen9,
    gt: 0,
    slices: 0,
    subslices: 0,
    eus_per_subslice: 0,
    eu_total: 0,
    threads_per_eu: 7,
    max_threads_per_group: 56,
    slm_size_per_group: 64 * KIB,
    has_fp64: true,
    has_int64: true,
    has_llc: true,
    timestamp_frequency_hz: 12_000_000,
    aperture_size: 1 << 48,
    supported: true,
};

const fn gen9(platform: Platform, gt: u8, slices: u32, ss_per_slice: u32, eus: u32) -> DeviceInfo {
    DeviceInfo {
        platform,
        gt,
        slices,
        subslices: slices * ss_per_slice,
        eus_per_subslice: eus,
        eu_total: slices * ss_per_slice * eus,
        ..GEN9
    }
}

const SKL_GT1: DeviceInfo = gen9(Platform::Skl, 1, 1, 2, 6);
const SKL_GT2: DeviceInfo = gen9(Platform::Skl, 2, 1, 3, 8);
const SKL_GT3: DeviceInfo = gen9(Platform::Skl, 3, 2, 3, 8);
const KBL_GT1: DeviceInfo = DeviceInfo {
    max_threads_per_group: 7 * 6,
    ..gen9(Platform::Kbl, 1, 1, 2, 6)
};
const KBL_GT1_5: DeviceInfo = DeviceInfo {
    max_threads_per_group: 7 * 6,
    ..gen9(Platform::Kbl, 1, 1, 3, 6)
};
const KBL_GT2: DeviceInfo = gen9(Platform::Kbl, 2, 1, 3, 8);
const KBL_GT3: DeviceInfo = gen9(Platform::Kbl, 3, 2, 3, 8);
const CFL_GT1: DeviceInfo = gen9(Platform::Cfl, 1, 1, 2, 6);
const CFL_GT2: DeviceInfo = gen9(Platform::Cfl, 2, 1, 3, 8);
const CFL_GT3: DeviceInfo = gen9(Platform::Cfl, 3, 2, 3, 8);

/// Gen11 placeholder (GFX11_FEATURES): no fp64/int64, 8 EUs per subslice.
const ICL_GT2: DeviceInfo = DeviceInfo {
    gen: Gen::Gen11,
    has_fp64: false,
    has_int64: false,
    // Mesa's table keeps the Gen8 default; the kernel reports the real value.
    timestamp_frequency_hz: 12_500_000,
    supported: false,
    ..gen9(Platform::Icl, 2, 1, 8, 8)
};
const ICL_GT1: DeviceInfo = DeviceInfo {
    gt: 1,
    subslices: 4,
    eu_total: 4 * 8,
    ..ICL_GT2
};
/// Gen12 placeholder (GFX12_FEATURES): dual subslices of 16 EUs, 112 CS threads per DSS.
const TGL_GT2: DeviceInfo = DeviceInfo {
    gen: Gen::Gen12,
    platform: Platform::Tgl,
    gt: 2,
    slices: 1,
    subslices: 6,
    eus_per_subslice: 16,
    eu_total: 96,
    max_threads_per_group: 112,
    has_fp64: false,
    has_int64: false,
    timestamp_frequency_hz: 12_500_000,
    supported: false,
    ..GEN9
};
const TGL_GT1: DeviceInfo = DeviceInfo {
    gt: 1,
    subslices: 2,
    eu_total: 32,
    ..TGL_GT2
};

const fn entry(
    base: DeviceInfo,
    pci_id: u16,
    name: &'static str,
    marketing_name: &'static str,
) -> DeviceInfo {
    DeviceInfo {
        pci_id,
        name,
        marketing_name,
        ..base
    }
}

/// Every known device. For each (platform, GT) the first row is the canonical one that
/// `lookup_platform` returns.
pub static DEVICES: &[DeviceInfo] = &[
    // Skylake
    entry(SKL_GT2, 0x1912, "SKL GT2", "Intel(R) HD Graphics 530"),
    entry(SKL_GT2, 0x1916, "SKL GT2", "Intel(R) HD Graphics 520"),
    entry(SKL_GT2, 0x191b, "SKL GT2", "Intel(R) HD Graphics 530"),
    entry(SKL_GT2, 0x191d, "SKL GT2", "Intel(R) HD Graphics P530"),
    entry(SKL_GT2, 0x191e, "SKL GT2", "Intel(R) HD Graphics 515"),
    entry(SKL_GT2, 0x1921, "SKL GT2", "Intel(R) HD Graphics 520"),
    entry(SKL_GT1, 0x1902, "SKL GT1", "Intel(R) HD Graphics 510"),
    entry(SKL_GT1, 0x1906, "SKL GT1", "Intel(R) HD Graphics 510"),
    entry(SKL_GT1, 0x190b, "SKL GT1", "Intel(R) HD Graphics 510"),
    entry(SKL_GT3, 0x1926, "SKL GT3", "Intel(R) Iris(R) Graphics 540"),
    entry(SKL_GT3, 0x1923, "SKL GT3", "Intel(R) HD Graphics 535"),
    entry(SKL_GT3, 0x1927, "SKL GT3", "Intel(R) Iris(R) Graphics 550"),
    entry(SKL_GT3, 0x192b, "SKL GT3", "Intel(R) Iris(R) Graphics 555"),
    // Kaby Lake
    entry(KBL_GT2, 0x5912, "KBL GT2", "Intel(R) HD Graphics 630"),
    entry(KBL_GT2, 0x5916, "KBL GT2", "Intel(R) HD Graphics 620"),
    entry(KBL_GT2, 0x5917, "KBL GT2", "Intel(R) UHD Graphics 620"),
    entry(KBL_GT2, 0x591b, "KBL GT2", "Intel(R) HD Graphics 630"),
    entry(KBL_GT1, 0x5902, "KBL GT1", "Intel(R) HD Graphics 610"),
    entry(KBL_GT1, 0x5906, "KBL GT1", "Intel(R) HD Graphics 610"),
    entry(KBL_GT1_5, 0x5913, "KBL GT1.5", "Intel(R) HD Graphics"),
    entry(
        KBL_GT3,
        0x5926,
        "KBL GT3",
        "Intel(R) Iris(R) Plus Graphics 640",
    ),
    entry(KBL_GT3, 0x5923, "KBL GT3", "Intel(R) HD Graphics 635"),
    entry(
        KBL_GT3,
        0x5927,
        "KBL GT3",
        "Intel(R) Iris(R) Plus Graphics 650",
    ),
    // Coffee Lake (and Whiskey Lake / Comet Lake, which Mesa files under CFL)
    entry(CFL_GT2, 0x3e92, "CFL GT2", "Intel(R) UHD Graphics 630"),
    entry(CFL_GT2, 0x3e91, "CFL GT2", "Intel(R) UHD Graphics 630"),
    entry(CFL_GT2, 0x3e9b, "CFL GT2", "Intel(R) UHD Graphics 630"),
    entry(CFL_GT2, 0x3ea0, "WHL GT2", "Intel(R) UHD Graphics 620"),
    entry(CFL_GT2, 0x9bc5, "CML GT2", "Intel(R) UHD Graphics 630"),
    entry(CFL_GT1, 0x3e90, "CFL GT1", "Intel(R) UHD Graphics 610"),
    entry(CFL_GT1, 0x3e93, "CFL GT1", "Intel(R) UHD Graphics 610"),
    entry(CFL_GT1, 0x3ea1, "WHL GT1", "Intel(R) UHD Graphics 610"),
    entry(
        CFL_GT3,
        0x3ea5,
        "CFL GT3",
        "Intel(R) Iris(R) Plus Graphics 655",
    ),
    entry(
        CFL_GT3,
        0x3ea6,
        "CFL GT3",
        "Intel(R) Iris(R) Plus Graphics 645",
    ),
    entry(
        CFL_GT3,
        0x3ea8,
        "CFL GT3",
        "Intel(R) Iris(R) Plus Graphics 655",
    ),
    // Placeholders: known, not supported.
    entry(ICL_GT2, 0x8a52, "ICL GT2", "Intel(R) Iris(R) Plus Graphics"),
    entry(ICL_GT2, 0x8a50, "ICL GT2", "Intel(R) HD Graphics"),
    entry(ICL_GT1, 0x8a56, "ICL GT1", "Intel(R) UHD Graphics"),
    entry(TGL_GT2, 0x9a49, "TGL GT2", "Intel(R) Iris(R) Xe Graphics"),
    entry(TGL_GT2, 0x9a40, "TGL GT2", "Intel(R) Iris(R) Xe Graphics"),
    entry(TGL_GT1, 0x9a60, "TGL GT1", "Intel(R) UHD Graphics"),
];

/// Finds the row for a PCI device id.
pub fn lookup_pci_id(pci_id: u16) -> Option<&'static DeviceInfo> {
    DEVICES.iter().find(|d| d.pci_id == pci_id)
}

/// Finds the canonical row for a platform name: `"skl"`, `"kbl"`, `"cfl"`, `"icl"`, `"tgl"`
/// (GT2), or with a GT suffix: `"skl-gt1"`, `"cfl-gt3"`, `"kbl-gt1.5"`. Case-insensitive.
pub fn lookup_platform(name: &str) -> Option<&'static DeviceInfo> {
    let name = name.to_ascii_lowercase();
    let (platform, gt_name) = match name.split_once('-') {
        Some((p, gt)) => (p, gt),
        None => (name.as_str(), "gt2"),
    };
    let platform = Platform::ALL
        .into_iter()
        .find(|p| p.short_name() == platform)?;
    let wanted = format!("{} {}", platform.short_name(), gt_name).to_ascii_uppercase();
    DEVICES
        .iter()
        .find(|d| d.platform == platform && d.name.eq_ignore_ascii_case(&wanted))
        .or_else(|| {
            // WHL/CML rows are named after themselves but belong to CFL.
            let gt: u8 = gt_name.strip_prefix("gt")?.parse().ok()?;
            DEVICES
                .iter()
                .find(|d| d.platform == platform && d.gt == gt && !d.name.contains('.'))
        })
}

/// What `FERRITE_DEVICE` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSelection {
    /// Unset or empty: only real i915 render nodes.
    RealOnly,
    /// One simulated device answering as this table row.
    Sim(&'static DeviceInfo),
}

/// Parses the value of `FERRITE_DEVICE` (see docs/architecture.md, "Contracts"):
/// unset or `""` -> real render nodes only; `sim` -> SKL GT2 (0x1912); `sim:<platform>`
/// (e.g. `sim:kbl`, `sim:cfl-gt3`) or `sim:0x<pci-id>` -> that table row. Anything else,
/// and rows marked unsupported, are errors that name the value.
pub fn parse_device_selection(value: Option<&str>) -> Result<DeviceSelection, KernelError> {
    let value = match value {
        None => return Ok(DeviceSelection::RealOnly),
        Some(v) if v.trim().is_empty() => return Ok(DeviceSelection::RealOnly),
        Some(v) => v,
    };
    let bad = |reason: &str| KernelError::InvalidDeviceSelection {
        value: value.to_string(),
        reason: reason.to_string(),
    };
    let trimmed = value.trim();
    let lower = trimmed.to_ascii_lowercase();
    let info = if lower == "sim" {
        lookup_pci_id(DEFAULT_SIM_PCI_ID).ok_or_else(|| bad("default device missing"))?
    } else if let Some(what) = lower.strip_prefix("sim:") {
        if let Some(hex) = what.strip_prefix("0x") {
            let id = u16::from_str_radix(hex, 16)
                .map_err(|_| bad("expected a 16-bit hexadecimal PCI id after 0x"))?;
            lookup_pci_id(id).ok_or_else(|| bad("PCI id not in the device table"))?
        } else {
            lookup_platform(what).ok_or_else(|| {
                bad("unknown platform (expected skl, kbl, cfl, icl, tgl, optionally -gt1/-gt2/-gt3)")
            })?
        }
    } else {
        return Err(bad(
            "expected unset, \"sim\", \"sim:<platform>\" or \"sim:0x<pci-id>\"",
        ));
    };
    if !info.supported {
        return Err(bad(&format!(
            "{} (0x{:04x}) is in the table but not supported yet",
            info.name, info.pci_id
        )));
    }
    Ok(DeviceSelection::Sim(info))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skl_gt2_facts() {
        let d = lookup_pci_id(0x1912).unwrap();
        assert_eq!(d.name, "SKL GT2");
        assert_eq!(d.platform, Platform::Skl);
        assert_eq!(d.gen, Gen::Gen9);
        assert_eq!(d.gt, 2);
        assert_eq!(
            (d.slices, d.subslices, d.eus_per_subslice, d.eu_total),
            (1, 3, 8, 24)
        );
        assert_eq!(d.threads_per_eu, 7);
        assert_eq!(d.max_threads_per_group, 56);
        assert_eq!(d.slm_size_per_group, 64 * 1024);
        assert!(d.has_fp64 && d.has_int64 && d.supported);
        assert_eq!(d.timestamp_frequency_hz, 12_000_000);
    }

    #[test]
    fn table_rows_are_consistent() {
        let mut ids = std::collections::HashSet::new();
        for d in DEVICES {
            assert!(ids.insert(d.pci_id), "duplicate PCI id 0x{:04x}", d.pci_id);
            assert_eq!(d.eu_total, d.subslices * d.eus_per_subslice, "{}", d.name);
            assert_eq!(d.subslices % d.slices, 0, "{}", d.name);
            assert_eq!(d.supported, d.gen == Gen::Gen9, "{}", d.name);
            assert!(!d.name.is_empty() && !d.marketing_name.is_empty());
        }
    }

    #[test]
    fn every_gen9_platform_has_gt1_gt2_gt3() {
        for p in ["skl", "kbl", "cfl"] {
            for gt in 1..=3u8 {
                let d = lookup_platform(&format!("{p}-gt{gt}")).unwrap();
                assert_eq!(d.platform.short_name(), p);
                assert_eq!(d.gt, gt);
            }
        }
        assert_eq!(lookup_platform("kbl-gt1.5").unwrap().pci_id, 0x5913);
    }

    #[test]
    fn platform_lookup_defaults_to_gt2() {
        assert_eq!(lookup_platform("skl").unwrap().pci_id, 0x1912);
        assert_eq!(lookup_platform("KBL").unwrap().pci_id, 0x5912);
        assert_eq!(lookup_platform("cfl").unwrap().pci_id, 0x3e92);
        assert_eq!(lookup_platform("cfl-gt3").unwrap().eu_total, 48);
        assert_eq!(lookup_platform("skl-gt1").unwrap().eu_total, 12);
        assert!(lookup_platform("bdw").is_none());
        assert!(lookup_platform("skl-gt9").is_none());
        assert!(!lookup_platform("icl").unwrap().supported);
    }

    #[test]
    fn device_selection_parsing() {
        use DeviceSelection::*;
        assert_eq!(parse_device_selection(None).unwrap(), RealOnly);
        assert_eq!(parse_device_selection(Some("")).unwrap(), RealOnly);
        let pci = |v: &str| match parse_device_selection(Some(v)).unwrap() {
            Sim(d) => d.pci_id,
            RealOnly => panic!("{v} parsed as RealOnly"),
        };
        assert_eq!(pci("sim"), 0x1912);
        assert_eq!(pci("sim:skl"), 0x1912);
        assert_eq!(pci("sim:kbl"), 0x5912);
        assert_eq!(pci("sim:cfl-gt3"), 0x3ea5);
        assert_eq!(pci("sim:0x1916"), 0x1916);
        assert_eq!(pci("sim:0x3E92"), 0x3e92);
        for bad in [
            "simulated",
            "sim:",
            "sim:bdw",
            "sim:0x",
            "sim:0xzz",
            "sim:0x1234",
            "sim:0x12345",
            "real",
            "sim:icl",
            "sim:0x9a49",
        ] {
            let err = parse_device_selection(Some(bad)).unwrap_err();
            assert!(
                err.to_string().contains(bad),
                "error for {bad:?} must name the value: {err}"
            );
        }
    }
}
