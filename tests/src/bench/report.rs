//! Tables from worker results: Ferrite vs anv per shader with totals and ratios, and the
//! before/after comparison of two saved runs (shader-db style helped/hurt counts).

use crate::bench::json::Json;
use std::fmt::Write as _;

/// The statistics compared, with the short column names.
pub const METRICS: [(&str, &str); 6] = [
    ("Instruction Count", "instr"),
    ("SEND Count", "sends"),
    ("Loop Count", "loops"),
    ("Cycle Count", "cycles"),
    ("Spill Count", "spills"),
    ("Fill Count", "fills"),
];

/// One side's figures for one shader.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub simd: Option<f64>,
    pub stats: Vec<Option<f64>>,
    /// (median, min, max) of the creation times in ms.
    pub compile: Option<(f64, f64, f64)>,
    pub error: Option<String>,
}

impl Figures {
    /// The `i`-th statistic of [`METRICS`], if reported.
    pub fn stat(&self, i: usize) -> Option<f64> {
        self.stats.get(i).copied().flatten()
    }
}

/// (median, min, max).
pub fn spread(samples: &[f64]) -> Option<(f64, f64, f64)> {
    if samples.is_empty() {
        return None;
    }
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    Some((v[v.len() / 2], v[0], v[v.len() - 1]))
}

fn nums(j: Option<&Json>) -> Vec<f64> {
    j.map(|a| a.as_arr().iter().filter_map(Json::as_f64).collect())
        .unwrap_or_default()
}

/// A shader's figures from a worker result, by name.
pub fn figures(result: &Json, name: &str) -> Option<Figures> {
    let s = result
        .get("shaders")?
        .as_arr()
        .iter()
        .find(|s| s.get("name").and_then(Json::as_str) == Some(name))?;
    let error = s
        .get("error")
        .or_else(|| s.get("stats_error"))
        .or_else(|| result.get("stats_error"))
        .and_then(Json::as_str)
        .map(String::from);
    let st = s.get("stats");
    Some(Figures {
        simd: s.get("simd").and_then(Json::as_f64),
        stats: METRICS
            .iter()
            .map(|(k, _)| st.and_then(|st| st.get(k)).and_then(Json::as_f64))
            .collect(),
        compile: spread(&nums(s.get("compile_ms"))),
        error,
    })
}

/// Shader names of a result, in order.
pub fn names(result: &Json) -> Vec<String> {
    result
        .get("shaders")
        .map(|a| {
            a.as_arr()
                .iter()
                .filter_map(|s| s.get("name").and_then(Json::as_str).map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn ratio(f: f64, a: f64) -> String {
    if a == 0.0 {
        if f == 0.0 {
            "1.00".into()
        } else {
            "inf".into()
        }
    } else {
        format!("{:.2}", f / a)
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v}"))
}

/// The Ferrite figures for a shader: the driver's when it produced statistics, else the
/// compiler crate's (`true` in the second field).
pub fn ferrite_figures(driver: &Json, compiler: Option<&Json>, name: &str) -> (Figures, bool) {
    let d = figures(driver, name).unwrap_or_else(|| Figures {
        error: driver
            .get("error")
            .and_then(Json::as_str)
            .map(String::from)
            .or(Some("not run".into())),
        ..Figures::default()
    });
    if d.error.is_none() && d.stats.iter().any(Option::is_some) {
        return (d, false);
    }
    // The crate's figures only when it has some (a shader neither can compile keeps the
    // driver's error and does not count as a compiler-crate row).
    match compiler
        .and_then(|c| figures(c, name))
        .filter(|c| c.error.is_none() && c.stats.iter().any(Option::is_some))
    {
        Some(mut c) => {
            // Creation time through the driver whenever it created the pipeline.
            if d.compile.is_some() {
                c.compile = d.compile;
            }
            (c, true)
        }
        None => (d, false),
    }
}

/// The side-by-side table (text): one row per shader, then totals over the shaders where
/// both sides have figures.
pub fn side_by_side(merged: &Json) -> String {
    let null = Json::Null;
    let anv = merged.get("anv").unwrap_or(&null);
    let fer = merged.get("ferrite").unwrap_or(&null);
    let cc = merged.get("ferrite-compiler");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "anv: {} ({}); Ferrite driver: {} ({})",
        anv.get("device").and_then(Json::as_str).unwrap_or("?"),
        anv.get("error").and_then(Json::as_str).unwrap_or("ok"),
        fer.get("device").and_then(Json::as_str).unwrap_or("?"),
        fer.get("error")
            .or_else(|| fer.get("stats_error"))
            .and_then(Json::as_str)
            .map_or("ok".to_string(), |e| format!("statistics unavailable: {e}")),
    );
    for (label, d) in [("anv", anv), ("Ferrite driver", fer)] {
        let crashed: Vec<&str> = d
            .get("crashed")
            .map(|c| {
                c.as_arr()
                    .iter()
                    .filter_map(Json::as_f64)
                    .filter_map(|i| d.get("shaders")?.as_arr().get(i as usize)?.get("name"))
                    .filter_map(Json::as_str)
                    .collect()
            })
            .unwrap_or_default();
        if !crashed.is_empty() {
            let _ = writeln!(
                out,
                "{label}: its worker crashed on {} shader(s), run again without them: {}",
                crashed.len(),
                crashed.join(", ")
            );
        }
    }
    let _ = writeln!(
        out,
        "Columns: Ferrite / anv (ratio F/A). Rows marked 'c' take Ferrite's figures from the compiler crate directly (ferrite_compiler::compile): the driver path gave none. Compile times are vkCreateComputePipelines through the driver where it created the pipeline, else compile() of the crate.\n"
    );
    let mut header = format!("{:<40} {:>7}", "shader", "SIMD");
    for (_, short) in METRICS {
        let _ = write!(header, " {:>17}", short);
    }
    let _ = write!(header, " {:>27}", "compile ms F/A (median)");
    let _ = writeln!(out, "{header}");
    let mut tot_f = [0f64; 6];
    let mut tot_a = [0f64; 6];
    let mut common = 0;
    let (mut cf, mut ca, mut cf_lo, mut cf_hi, mut ca_lo, mut ca_hi) = (0., 0., 0., 0., 0., 0.);
    let mut ctimes = 0;
    let mut unavailable: Vec<(String, String)> = Vec::new();
    let mut all = names(anv);
    for n in names(fer)
        .into_iter()
        .chain(cc.map(names).unwrap_or_default())
    {
        if !all.contains(&n) {
            all.push(n);
        }
    }
    let mut from_cc = 0;
    for name in &all {
        let a = figures(anv, name).unwrap_or_default();
        let (f, is_cc) = ferrite_figures(fer, cc, name);
        if is_cc {
            from_cc += 1;
        }
        let short: String = if name.len() > 38 {
            format!("…{}", &name[name.len() - 37..])
        } else {
            name.clone()
        };
        let mut row = format!(
            "{:<38}{:>2} {:>7}",
            short,
            if is_cc { "c" } else { "" },
            format!("{}/{}", opt(f.simd), opt(a.simd))
        );
        let both = (0..METRICS.len()).all(|i| f.stat(i).is_some() && a.stat(i).is_some());
        for i in 0..METRICS.len() {
            let cell = match (f.stat(i), a.stat(i)) {
                (Some(x), Some(y)) => format!("{x}/{y} ({})", ratio(x, y)),
                (x, y) => format!("{}/{}", opt(x), opt(y)),
            };
            let _ = write!(row, " {:>17}", cell);
            if both {
                tot_f[i] += f.stat(i).unwrap_or(0.0);
                tot_a[i] += a.stat(i).unwrap_or(0.0);
            }
        }
        if both {
            common += 1;
        }
        let cell = match (f.compile, a.compile) {
            (Some(x), Some(y)) => {
                if both {
                    ctimes += 1;
                    cf += x.0;
                    ca += y.0;
                    cf_lo += x.1;
                    cf_hi += x.2;
                    ca_lo += y.1;
                    ca_hi += y.2;
                }
                format!("{:.2}/{:.2} ({})", x.0, y.0, ratio(x.0, y.0))
            }
            (x, y) => format!(
                "{}/{}",
                x.map_or("-".into(), |x| format!("{:.2}", x.0)),
                y.map_or("-".into(), |y| format!("{:.2}", y.0))
            ),
        };
        let _ = write!(row, " {:>27}", cell);
        let _ = writeln!(out, "{row}");
        if let Some(e) = &a.error {
            unavailable.push((format!("{name} (anv)"), e.clone()));
        }
        if let Some(e) = &f.error {
            unavailable.push((format!("{name} (Ferrite)"), e.clone()));
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "TOTALS over {common} shaders with figures from both ({} in the corpus; Ferrite figures from the compiler crate for {from_cc}):",
        all.len()
    );
    for (i, (_, short)) in METRICS.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {:<8} Ferrite {:>10}  anv {:>10}  ratio {}",
            short,
            tot_f[i],
            tot_a[i],
            ratio(tot_f[i], tot_a[i])
        );
    }
    let _ = writeln!(
        out,
        "  compile  Ferrite {cf:>10.2}  anv {ca:>10.2}  ratio {}  (sum of per-shader medians in ms over {ctimes} shaders; sums of minima..maxima: Ferrite {cf_lo:.2}..{cf_hi:.2}, anv {ca_lo:.2}..{ca_hi:.2})",
        ratio(cf, ca)
    );
    let _ = writeln!(out, "\nDriver overhead (median of samples, min..max):");
    for (label, j) in [("Ferrite", fer), ("anv", anv)] {
        let ov = j.get("overhead");
        let rec = spread(&nums(ov.and_then(|o| o.get("record_10k_ms"))));
        let sub = spread(&nums(ov.and_then(|o| o.get("submit_ms"))));
        let err = |k: &str| {
            ov.and_then(|o| o.get(k).or_else(|| o.get("error")))
                .and_then(Json::as_str)
                .unwrap_or("not measured")
                .to_string()
        };
        let rec = rec.map_or(format!("unavailable: {}", err("record_error")), |r| {
            format!(
                "{:.3} ms ({:.3}..{:.3}), {:.1} ns per vkCmdDispatch",
                r.0,
                r.1,
                r.2,
                r.0 * 1e6 / 10_000.0
            )
        });
        let sub = sub.map_or(format!("unavailable: {}", err("submit_error")), |s| {
            format!("{:.1} us ({:.1}..{:.1})", s.0 * 1e3, s.1 * 1e3, s.2 * 1e3)
        });
        let note = if label == "anv" {
            "  [anv's submit is a no-op on the noop drm-shim: EXECBUFFER2 does nothing, fences signal at once]"
        } else {
            "  [Ferrite's simulated i915 runs the batch]"
        };
        let miss = spread(&nums(ov.and_then(|o| o.get("cache_miss_ms"))));
        let hit = spread(&nums(ov.and_then(|o| o.get("cache_hit_ms"))));
        let cache = match (miss, hit) {
            (Some(m), Some(h)) => format!(
                "miss {:.3} ms ({:.3}..{:.3}), hit {:.3} ms ({:.3}..{:.3}), hit/miss {}",
                m.0,
                m.1,
                m.2,
                h.0,
                h.1,
                h.2,
                ratio(h.0, m.0)
            ),
            _ => format!("unavailable: {}", err("cache_error")),
        };
        let _ = writeln!(
            out,
            "  {label:<8} vkCreateComputePipelines with a VkPipelineCache: {cache}"
        );
        let _ = writeln!(out, "  {label:<8} record 10,000 dispatches: {rec}");
        let _ = writeln!(
            out,
            "  {label:<8} empty vkQueueSubmit + vkWaitForFences: {sub}{note}"
        );
    }
    if !unavailable.is_empty() {
        let _ = writeln!(out, "\nUnavailable figures ({}):", unavailable.len());
        // Group identical reasons so a driver that is missing a whole path says so once.
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for (who, why) in unavailable {
            match groups.iter_mut().find(|(w, _)| *w == why) {
                Some(g) => g.1.push(who),
                None => groups.push((why, vec![who])),
            }
        }
        for (why, who) in groups {
            let shown: Vec<&str> = who.iter().take(4).map(String::as_str).collect();
            let more = if who.len() > 4 {
                format!(" and {} more", who.len() - 4)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  unavailable: {why}\n      for {}{more}",
                shown.join(", ")
            );
        }
    }
    out
}

/// Per-metric before/after comparison of Ferrite's figures in two saved runs.
pub fn compare(before: &Json, after: &Json) -> String {
    let null = Json::Null;
    let pick = |m: &Json| -> (Json, Option<Json>) {
        (
            m.get("ferrite").cloned().unwrap_or(Json::Null),
            m.get("ferrite-compiler").cloned(),
        )
    };
    let (bd, bc) = pick(before);
    let (ad, ac) = pick(after);
    let mut out = String::new();
    let mut all = names(&bd);
    for n in bc
        .as_ref()
        .map(names)
        .unwrap_or_default()
        .into_iter()
        .chain(names(&ad))
    {
        if !all.contains(&n) {
            all.push(n);
        }
    }
    let _ = &null;
    let mut metrics: Vec<(&str, usize)> =
        METRICS.iter().enumerate().map(|(i, m)| (m.1, i)).collect();
    metrics.push(("compile ms", usize::MAX));
    for (label, idx) in metrics {
        let (mut tb, mut ta, mut affb, mut affa) = (0f64, 0f64, 0f64, 0f64);
        let (mut helped, mut hurt, mut shared) = (0, 0, 0);
        let mut changes: Vec<(f64, String, f64, f64)> = Vec::new();
        for n in &all {
            let b = ferrite_figures(&bd, bc.as_ref(), n).0;
            let a = ferrite_figures(&ad, ac.as_ref(), n).0;
            let get = |f: &Figures| {
                if idx == usize::MAX {
                    f.compile.map(|c| c.0)
                } else {
                    f.stat(idx)
                }
            };
            let (Some(x), Some(y)) = (get(&b), get(&a)) else {
                continue;
            };
            shared += 1;
            tb += x;
            ta += y;
            // Compile times move with noise: only a change beyond 10% counts.
            let moved = if idx == usize::MAX {
                (y - x).abs() > 0.1 * x.max(y)
            } else {
                y != x
            };
            if moved {
                affb += x;
                affa += y;
                if y < x {
                    helped += 1;
                } else {
                    hurt += 1;
                }
                let rel = if x == 0.0 { f64::INFINITY } else { (y - x) / x };
                changes.push((rel, n.clone(), x, y));
            }
        }
        let pct = |x: f64, y: f64| {
            if x == 0.0 {
                "n/a".into()
            } else {
                format!("{:+.2}%", (y - x) / x * 100.0)
            }
        };
        let _ = writeln!(
            out,
            "total {label} in shared programs: {tb} -> {ta} ({})",
            pct(tb, ta)
        );
        let _ = writeln!(
            out,
            "{label} in affected programs: {affb} -> {affa} ({})",
            pct(affb, affa)
        );
        let _ = writeln!(
            out,
            "helped: {helped}\nHURT: {hurt}\n(shared programs: {shared})"
        );
        changes.sort_by(|p, q| p.0.total_cmp(&q.0));
        for (rel, n, x, y) in changes.iter().take(3) {
            if *rel < 0.0 {
                let _ = writeln!(out, "  helped most: {n}: {x} -> {y}");
            }
        }
        for (rel, n, x, y) in changes.iter().rev().take(3) {
            if *rel > 0.0 {
                let _ = writeln!(out, "  hurt most: {n}: {x} -> {y}");
            }
        }
        let _ = writeln!(out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(shaders: &[(&str, [f64; 6], f64)]) -> Json {
        let mut r = Json::obj();
        let list: Vec<Json> = shaders
            .iter()
            .map(|(n, st, t)| {
                let mut s = Json::obj();
                s.set("name", *n);
                s.set("simd", 16u32);
                let mut o = Json::obj();
                for (i, (k, _)) in METRICS.iter().enumerate() {
                    o.set(k, st[i]);
                }
                s.set("stats", o);
                s.set(
                    "compile_ms",
                    vec![Json::Num(*t), Json::Num(t * 2.0), Json::Num(*t)],
                );
                s
            })
            .collect();
        r.set("shaders", list);
        r
    }

    #[test]
    fn compare_counts_helped_and_hurt() {
        let mut before = Json::obj();
        before.set(
            "ferrite",
            run(&[
                ("a", [10., 1., 0., 100., 0., 0.], 1.0),
                ("b", [20., 2., 1., 200., 0., 0.], 1.0),
            ]),
        );
        let mut after = Json::obj();
        after.set(
            "ferrite",
            run(&[
                ("a", [8., 1., 0., 100., 0., 0.], 1.0),
                ("b", [21., 2., 1., 200., 0., 0.], 1.0),
            ]),
        );
        let r = compare(&before, &after);
        assert!(
            r.contains("total instr in shared programs: 30 -> 29 (-3.33%)"),
            "{r}"
        );
        assert!(r.contains("helped: 1\nHURT: 1"), "{r}");
        assert!(
            r.contains("total sends in shared programs: 3 -> 3 (+0.00%)"),
            "{r}"
        );
    }

    #[test]
    fn totals_only_over_shaders_both_sides_have() {
        let mut m = Json::obj();
        m.set(
            "anv",
            run(&[
                ("a", [10., 1., 0., 100., 0., 0.], 2.0),
                ("b", [5., 1., 0., 50., 0., 0.], 1.0),
            ]),
        );
        let mut fer = Json::obj();
        fer.set(
            "error",
            "vkCreateComputePipelines: ERROR_OUT_OF_HOST_MEMORY",
        );
        m.set("ferrite", fer);
        m.set(
            "ferrite-compiler",
            run(&[("a", [12., 1., 0., 90., 0., 0.], 1.0)]),
        );
        let t = side_by_side(&m);
        assert!(t.contains("TOTALS over 1 shaders"), "{t}");
        assert!(
            t.contains("instr    Ferrite         12  anv         10  ratio 1.20"),
            "{t}"
        );
        assert!(
            t.contains("unavailable: vkCreateComputePipelines: ERROR_OUT_OF_HOST_MEMORY"),
            "{t}"
        );
        assert_eq!(spread(&[3.0, 1.0, 2.0]), Some((2.0, 1.0, 3.0)));
    }
}
