//! Issue 18's "done when" from one saved `ferrite-bench --json` run: the markdown table of
//! `docs/performance.md` ("Issue 18: where it stands") and the per-shader plot of Ferrite's
//! instruction count over anv's, sorted (`ferrite-bench report RUN.json [--svg OUT.svg]`), so
//! the table is regenerated from the code being measured rather than typed in.

use crate::bench::json::Json;
use crate::bench::report::{ferrite_figures, figures, names, spread, Figures};
use crate::bench::svg;
use std::fmt::Write as _;

/// Index of each statistic in [`crate::bench::report::METRICS`].
const INSTR: usize = 0;
const SENDS: usize = 1;
const SPILLS: usize = 4;
const FILLS: usize = 5;

/// One shader both drivers compiled, with the figures the table needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub name: String,
    pub ferrite: Figures,
    pub anv: Figures,
}

impl Row {
    /// Ferrite's instruction count over anv's (infinite when anv reports 0 and Ferrite not).
    pub fn instr_ratio(&self) -> f64 {
        let (f, a) = (
            self.ferrite.stat(INSTR).unwrap_or(0.0),
            self.anv.stat(INSTR).unwrap_or(0.0),
        );
        if a == 0.0 {
            if f == 0.0 {
                1.0
            } else {
                f64::INFINITY
            }
        } else {
            f / a
        }
    }
}

/// The shaders both drivers have statistics for (Ferrite through the driver, or the
/// compiler crate where the driver gave none, as the side-by-side table does), corpus order.
pub fn rows(merged: &Json) -> Vec<Row> {
    let null = Json::Null;
    let anv = merged.get("anv").unwrap_or(&null);
    let fer = merged.get("ferrite").unwrap_or(&null);
    let cc = merged.get("ferrite-compiler");
    let mut all = names(anv);
    for n in names(fer)
        .into_iter()
        .chain(cc.map(names).unwrap_or_default())
    {
        if !all.contains(&n) {
            all.push(n);
        }
    }
    all.into_iter()
        .filter_map(|name| {
            let a = figures(anv, &name)?;
            let (f, _) = ferrite_figures(fer, cc, &name);
            let ok = |x: &Figures| x.error.is_none() && x.stat(INSTR).is_some();
            (ok(&a) && ok(&f)).then_some(Row {
                name,
                ferrite: f,
                anv: a,
            })
        })
        .collect()
}

fn total(rows: &[Row], side: fn(&Row) -> &Figures, i: usize) -> f64 {
    rows.iter().map(|r| side(r).stat(i).unwrap_or(0.0)).sum()
}

fn ratio_cell(f: f64, a: f64, digits: usize) -> String {
    if a == 0.0 {
        format!("{f:.digits$} / {a:.digits$}")
    } else {
        format!("{f:.digits$} / {a:.digits$} = {:.2}", f / a)
    }
}

/// Median per-dispatch recording cost (ns) and empty submit + wait (us) of one driver.
fn overhead(worker: Option<&Json>) -> (Option<f64>, Option<f64>) {
    let ov = worker.and_then(|w| w.get("overhead"));
    let nums = |k: &str| -> Vec<f64> {
        ov.and_then(|o| o.get(k))
            .map(|a| a.as_arr().iter().filter_map(Json::as_f64).collect())
            .unwrap_or_default()
    };
    (
        spread(&nums("record_10k_ms")).map(|r| r.0 * 1e6 / 10_000.0),
        spread(&nums("submit_ms")).map(|s| s.0 * 1e3),
    )
}

/// The markdown of the done-when table, the shaders that miss a per-shader criterion and
/// the ten worst instruction ratios.
pub fn markdown(merged: &Json) -> String {
    let rows = rows(merged);
    fn f(r: &Row) -> &Figures {
        &r.ferrite
    }
    fn a(r: &Row) -> &Figures {
        &r.anv
    }
    let corpus = merged
        .get("shader_count")
        .and_then(Json::as_f64)
        .unwrap_or(0.0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Over the {} shaders both drivers compile ({} in the corpus; `--runs {}`).\n",
        rows.len(),
        corpus,
        merged.get("runs").and_then(Json::as_f64).unwrap_or(0.0)
    );
    let _ = writeln!(out, "| metric (\"Done when\" of issue 18) | target | now |");
    let _ = writeln!(out, "|---|---|---|");
    for (label, target, i) in [
        ("instructions (Ferrite / anv)", "<= 0.95x anv", INSTR),
        ("SEND messages (Ferrite / anv)", "<= 1.0x anv", SENDS),
    ] {
        let _ = writeln!(
            out,
            "| {label} | {target} | {} |",
            ratio_cell(total(&rows, f, i), total(&rows, a, i), 0)
        );
    }
    let _ = writeln!(
        out,
        "| spills / fills (anv: {} / {}) | 0 where anv has none | {} / {} |",
        total(&rows, a, SPILLS),
        total(&rows, a, FILLS),
        total(&rows, f, SPILLS),
        total(&rows, f, FILLS)
    );
    let spills = |x: &Figures| x.stat(SPILLS).unwrap_or(0.0) + x.stat(FILLS).unwrap_or(0.0);
    let spilling: Vec<&Row> = rows
        .iter()
        .filter(|r| spills(&r.ferrite) > 0.0 && spills(&r.anv) == 0.0)
        .collect();
    let narrower: Vec<&Row> = rows
        .iter()
        .filter(|r| matches!((r.ferrite.simd, r.anv.simd), (Some(x), Some(y)) if x < y))
        .collect();
    let over: Vec<&Row> = rows.iter().filter(|r| r.instr_ratio() > 1.5).collect();
    let _ = writeln!(
        out,
        "| shaders that spill where anv does not | 0 | {} |",
        spilling.len()
    );
    let _ = writeln!(
        out,
        "| shaders at a narrower SIMD width than anv | 0 | {} |",
        narrower.len()
    );
    let timed: Vec<&Row> = rows
        .iter()
        .filter(|r| r.ferrite.compile.is_some() && r.anv.compile.is_some())
        .collect();
    let cf: f64 = timed
        .iter()
        .filter_map(|r| r.ferrite.compile.map(|c| c.0))
        .sum();
    let ca: f64 = timed
        .iter()
        .filter_map(|r| r.anv.compile.map(|c| c.0))
        .sum();
    let _ = writeln!(
        out,
        "| pipeline creation, sum of medians (ms, {} shaders) | <= 0.5x anv | {} |",
        timed.len(),
        ratio_cell(cf, ca, 0)
    );
    let _ = writeln!(
        out,
        "| shaders over 1.5x anv's instructions | 0 | {} |",
        over.len()
    );
    let (fr, fs) = overhead(merged.get("ferrite"));
    let (ar, asub) = overhead(merged.get("anv"));
    let show = |v: Option<f64>, unit: &str, digits: usize| {
        v.map_or("not measured".to_string(), |v| {
            format!("{v:.digits$} {unit}")
        })
    };
    let _ = writeln!(
        out,
        "| record one `vkCmdDispatch` | <= 60 ns | {} (anv {}) |",
        show(fr, "ns", 1),
        show(ar, "ns", 1)
    );
    let _ = writeln!(
        out,
        "| empty submit + fence wait | <= 2 us | {} (anv {}, a no-op on the shim) |",
        show(fs, "us", 2),
        show(asub, "us", 2)
    );
    let list = |rs: &[&Row]| -> String {
        let n: Vec<&str> = rs.iter().map(|r| r.name.as_str()).collect();
        n.join(", ")
    };
    if !spilling.is_empty() {
        let _ = writeln!(out, "\nSpilling where anv does not: {}.", list(&spilling));
    }
    if !narrower.is_empty() {
        let _ = writeln!(out, "\nNarrower than anv: {}.", list(&narrower));
    }
    let mut worst: Vec<&Row> = rows.iter().collect();
    worst.sort_by(|x, y| y.instr_ratio().total_cmp(&x.instr_ratio()));
    let _ = writeln!(out, "\nTen worst instruction ratios (Ferrite / anv):\n");
    let _ = writeln!(out, "```");
    for r in worst.iter().take(10) {
        let _ = writeln!(
            out,
            "{:<50} {:>6} / {:>5} = {:>5.2}",
            r.name,
            r.ferrite.stat(INSTR).unwrap_or(0.0),
            r.anv.stat(INSTR).unwrap_or(0.0),
            r.instr_ratio()
        );
    }
    let _ = writeln!(out, "```");
    out
}

/// The per-shader plot: Ferrite's instruction count over anv's for every shader both
/// compile, sorted, on a log2 axis, with the 0.95 (target total), 1.0 and 1.5 (per-shader
/// limit) lines.
pub fn svg(merged: &Json) -> String {
    let mut ratios: Vec<f64> = rows(merged).iter().map(Row::instr_ratio).collect();
    ratios.sort_by(f64::total_cmp);
    let (w, h) = (900.0, 420.0);
    let (left, right, top, bottom) = (60.0, 20.0, 30.0, 50.0);
    let (lo, hi) = (0.25f64, 16.0f64);
    let y = |r: f64| {
        let r = r.clamp(lo, hi);
        top + (h - top - bottom) * (hi.log2() - r.log2()) / (hi.log2() - lo.log2())
    };
    let n = ratios.len().max(1) as f64;
    let x = |i: usize| left + (w - left - right) * (i as f64 + 0.5) / n;
    let mut s = svg::open(w, h);
    let _ = writeln!(
        s,
        "<text x=\"{left}\" y=\"18\">Ferrite / anv instructions per shader, sorted ({} shaders; log scale)</text>",
        ratios.len()
    );
    for t in [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0] {
        s += &svg::grid_line(left, w - right, y(t), t);
    }
    let bar = ((w - left - right) / n * 0.8).max(0.5);
    let base = y(1.0);
    for (i, &r) in ratios.iter().enumerate() {
        let (top_y, bottom_y) = if y(r) < base {
            (y(r), base)
        } else {
            (base, y(r))
        };
        let colour = if r > 1.5 {
            "#d62728"
        } else if r > 1.0 {
            "#ff7f0e"
        } else {
            "#2ca02c"
        };
        let _ = writeln!(
            s,
            "<rect x=\"{:.2}\" y=\"{top_y:.1}\" width=\"{bar:.2}\" height=\"{:.1}\" fill=\"{colour}\"/>",
            x(i) - bar / 2.0,
            (bottom_y - top_y).max(0.5)
        );
    }
    // Reference lines over the bars; the 0.95 label goes below its line, clear of 1.0's.
    for (t, colour, label, dy) in [
        (1.5, "#c00", "1.5 (no shader above)", -4.0),
        (1.0, "#444", "1.0", -4.0),
        (0.95, "#080", "0.95 (target for the total)", 14.0),
    ] {
        let yy = y(t);
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"{colour}\" stroke-dasharray=\"5,3\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{colour}\">{label}</text>",
            w - right,
            w - right - 4.0,
            yy + dy,
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{left}\" y=\"{}\">shaders, best to worst (ratios outside 0.25..16 drawn at the edge)</text>\n</svg>",
        h - 15.0
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(shaders: &[(&str, f64, f64, f64)]) -> Json {
        // (name, instructions, spills, simd)
        let mut w = Json::obj();
        let list: Vec<Json> = shaders
            .iter()
            .map(|&(n, instr, spills, simd)| {
                let mut st = Json::obj();
                st.set("Instruction Count", instr);
                st.set("SEND Count", 1.0);
                st.set("Spill Count", spills);
                st.set("Fill Count", spills);
                let mut s = Json::obj();
                s.set("name", n);
                s.set("simd", simd);
                s.set("stats", st);
                s.set("compile_ms", vec![Json::Num(2.0)]);
                s
            })
            .collect();
        w.set("shaders", list);
        w
    }

    #[test]
    fn table_counts_the_done_when_criteria() {
        let mut m = Json::obj();
        m.set("runs", 3u32);
        m.set("shader_count", 4u32);
        m.set(
            "anv",
            worker(&[
                ("a", 10.0, 0.0, 16.0),
                ("b", 10.0, 0.0, 16.0),
                ("c", 10.0, 0.0, 16.0),
                ("d", 10.0, 0.0, 8.0),
            ]),
        );
        m.set(
            "ferrite",
            worker(&[
                ("a", 9.0, 0.0, 16.0),
                ("b", 20.0, 2.0, 8.0),
                ("c", 15.0, 0.0, 16.0),
            ]),
        );
        let r = rows(&m);
        assert_eq!(r.len(), 3, "d has no Ferrite figures");
        let md = markdown(&m);
        assert!(md.contains("| 44 / 30 = 1.47 |"), "{md}");
        assert!(
            md.contains("| shaders that spill where anv does not | 0 | 1 |"),
            "{md}"
        );
        assert!(
            md.contains("| shaders at a narrower SIMD width than anv | 0 | 1 |"),
            "{md}"
        );
        assert!(
            md.contains("| shaders over 1.5x anv's instructions | 0 | 1 |"),
            "{md}"
        );
        // Worst first.
        let worst = md.split("```").nth(1).unwrap();
        let first = worst.lines().find(|l| !l.is_empty()).unwrap();
        assert!(first.starts_with("b "), "{worst}");
        let plot = svg(&m);
        assert_eq!(plot.matches("<rect x=").count(), 3, "{plot}");
    }
}
