//! Pins Ferrite's format features to the table of docs/images.md ("Format features against
//! anv"): for every VkFormat of the core range, the compute-relevant features Ferrite reports
//! through the loader (optimal and linear tiling, which are the same on Ferrite, and buffers)
//! must be the table's Ferrite columns, and a format with none must be absent from the table
//! or listed with none. The table's anv columns come from `vulkaninfo --json` on anv
//! (scripts/format-table-vs-anv builds the table) and are not checked here.

mod compute_common;

use ash::vk;
use compute_common::*;
use std::collections::BTreeMap;

/// Abbreviations of scripts/format-table-vs-anv, in its order.
fn image_short(f: vk::FormatFeatureFlags) -> String {
    use vk::FormatFeatureFlags as F;
    let mut s = Vec::new();
    for (bit, a) in [
        (F::SAMPLED_IMAGE, "S"),
        (F::SAMPLED_IMAGE_FILTER_LINEAR, "L"),
        (F::STORAGE_IMAGE, "St"),
        (F::STORAGE_IMAGE_ATOMIC, "A"),
    ] {
        if f.contains(bit) {
            s.push(a);
        }
    }
    if f.contains(F::TRANSFER_SRC | F::TRANSFER_DST) {
        s.push("T");
    }
    if f.contains(F::BLIT_SRC | F::BLIT_DST) {
        s.push("B");
    } else if f.contains(F::BLIT_SRC) {
        s.push("b");
    }
    if s.is_empty() {
        "-".into()
    } else {
        s.join(" ")
    }
}

fn buffer_short(f: vk::FormatFeatureFlags) -> String {
    use vk::FormatFeatureFlags as F;
    let s: Vec<&str> = [
        (F::UNIFORM_TEXEL_BUFFER, "U"),
        (F::STORAGE_TEXEL_BUFFER, "Sb"),
        (F::STORAGE_TEXEL_BUFFER_ATOMIC, "Ab"),
    ]
    .iter()
    .filter(|(b, _)| f.contains(*b))
    .map(|(_, a)| *a)
    .collect();
    if s.is_empty() {
        "-".into()
    } else {
        s.join(" ")
    }
}

/// The table's rows: format name (without VK_FORMAT_) -> (Ferrite optimal, Ferrite buffer).
fn doc_table() -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(ferrite_tests::icd::workspace_root().join("docs/images.md"))
        .unwrap();
    let start = text
        .find("## Format features against anv")
        .expect("docs/images.md has the section");
    text[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| format |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            (c[1].to_string(), (c[3].to_string(), c[5].to_string()))
        })
        .collect()
}

#[test]
fn reported_format_features_match_the_docs_table() {
    let c = Ctx::new();
    let table = doc_table();
    assert!(table.len() > 40, "table too short: {}", table.len());
    let mut bad = Vec::new();
    // The core formats: VK_FORMAT_R4G4_UNORM_PACK8 (1) to VK_FORMAT_ASTC_12x12_SRGB_BLOCK (184).
    for raw in 1..=184 {
        let f = vk::Format::from_raw(raw);
        // SAFETY: a query on a live physical device.
        let p = unsafe { c.h.instance.get_physical_device_format_properties(c.pd, f) };
        let name = format!("{f:?}");
        let got = (
            image_short(p.optimal_tiling_features),
            buffer_short(p.buffer_features),
        );
        if image_short(p.linear_tiling_features) != got.0 {
            bad.push(format!("{name}: linear tiling differs from optimal"));
        }
        let want = table
            .get(&name)
            .cloned()
            .unwrap_or(("-".into(), "-".into()));
        if got != want {
            bad.push(format!(
                "{name}: reported {got:?}, docs/images.md says {want:?}"
            ));
        }
    }
    c.finish();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
