//! `FERRITE_DEVICE` selection and `vulkaninfo`, in child processes (the loader and the driver
//! read the environment once per process).

use std::path::Path;

use ferrite_tests::icd::run_with_loader_env;

const DEMO: &str = env!("CARGO_BIN_EXE_ferrite-demo");

fn list(ferrite_device: &str) -> String {
    let (ok, out) = run_with_loader_env(
        Path::new(DEMO),
        &["--list"],
        &[("FERRITE_DEVICE", ferrite_device)],
    );
    assert!(ok, "ferrite-demo --list failed:\n{out}");
    out
}

#[test]
fn sim_is_skl_gt2() {
    let out = list("sim");
    assert!(out.contains("devices: 1"), "{out}");
    assert!(out.contains("vendor=0x8086 device=0x1912"), "{out}");
    assert!(out.contains("(SKL GT2) [simulated]"), "{out}");
}

#[test]
fn sim_platform_and_pci_id_selection() {
    let out = list("sim:kbl");
    assert!(
        out.contains("devices: 1") && out.contains("(KBL GT2)"),
        "{out}"
    );
    let out = list("sim:0x1916");
    assert!(out.contains("device=0x1916"), "{out}");
}

#[test]
fn invalid_selection_exposes_no_device_and_says_why() {
    let out = list("bogus-device");
    assert!(out.contains("devices: 0"), "{out}");
    assert!(
        out.contains("bogus-device"),
        "the error names the value:\n{out}"
    );
}

#[test]
fn unsupported_generation_exposes_no_device() {
    let out = list("sim:icl");
    assert!(out.contains("devices: 0"), "{out}");
}

#[test]
fn demo_round_trip_passes() {
    let (ok, out) = run_with_loader_env(Path::new(DEMO), &[], &[]);
    assert!(ok, "{out}");
    assert!(out.contains("all match") && out.contains("OK"), "{out}");
}

#[test]
fn vulkaninfo_summary_lists_the_simulated_device() {
    let (ok, out) = run_with_loader_env(Path::new("vulkaninfo"), &["--summary"], &[]);
    assert!(
        ok,
        "vulkaninfo --summary failed (scripts/setup installs vulkan-tools):\n{out}"
    );
    assert!(out.contains("vendorID           = 0x8086"), "{out}");
    assert!(out.contains("deviceID           = 0x1912"), "{out}");
    assert!(out.contains("(SKL GT2)"), "{out}");
}

#[test]
fn ferrite_debug_help_lists_flags_and_unknown_flags_only_warn() {
    let (ok, out) = run_with_loader_env(
        Path::new(DEMO),
        &["--list"],
        &[("FERRITE_DEBUG", "help,nonsense")],
    );
    assert!(ok, "{out}");
    assert!(
        out.contains("FERRITE_DEBUG") && out.contains("api"),
        "{out}"
    );
    assert!(
        out.contains("nonsense"),
        "the unknown flag is named in a warning:\n{out}"
    );
    assert!(out.contains("devices: 1"), "{out}");
}

#[test]
fn ferrite_debug_api_logs_every_call() {
    let (ok, out) = run_with_loader_env(Path::new(DEMO), &["--list"], &[("FERRITE_DEBUG", "api")]);
    assert!(ok, "{out}");
    for call in [
        "vkCreateInstance",
        "vkEnumeratePhysicalDevices",
        "vkGetPhysicalDeviceProperties",
    ] {
        assert!(out.contains(call), "{call} not logged:\n{out}");
    }
}

/// Unset/empty FERRITE_DEVICE means real i915 render nodes only: never a simulated device, and
/// none at all on a machine without /dev/dri/renderD* nodes.
#[test]
fn empty_selection_exposes_only_real_devices() {
    let out = list("");
    assert!(!out.contains("[simulated]"), "{out}");
    let render_nodes = std::fs::read_dir("/dev/dri")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("renderD"))
                .count()
        })
        .unwrap_or(0);
    if render_nodes == 0 {
        assert!(out.contains("devices: 0"), "{out}");
    }
}
