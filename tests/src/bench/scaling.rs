//! `ferrite-bench --scaling`: compile time against shader size. Generated GLSL compute
//! shaders of several shapes at sizes doubling from 100 to 6,400 statements, each compiled
//! in a child process of its own (so its peak RSS is the compile's), by Ferrite's compiler
//! crate and, when the shim is set up, by anv through the loader.

use super::json::Json;
use super::svg;

/// The shapes: what each stresses.
pub const SHAPES: &[(&str, &str)] = &[
    (
        "straight",
        "straight-line arithmetic: three dependent multiply-adds per statement",
    ),
    (
        "branches",
        "one small if per statement (a multiply-add under a compare)",
    ),
    (
        "loops",
        "nests of four loops with run-time trip counts, one statement per level",
    ),
    (
        "live",
        "a window of 100 values live at once (each read again 100 statements later)",
    ),
    ("memory", "one load and one store per statement"),
];

/// Default sizes (statements).
pub const SIZES: &[u32] = &[100, 200, 400, 800, 1600, 3200, 6400];

fn coef(k: u32) -> String {
    format!("{:.3}", 1.0 + f64::from(k % 7) / 8.0)
}

/// The GLSL of `shape` with `n` statements, or None for an unknown shape.
pub fn glsl(shape: &str, n: u32) -> Option<String> {
    let v = ["a", "b", "c"];
    let r = |k: u32, d: u32| v[((k + d) % 3) as usize];
    let mut s = String::from(
        "#version 450\nlayout(local_size_x = 64) in;\n\
         layout(std430, binding = 0) buffer B { float d[]; };\n\
         layout(push_constant) uniform P { uint m; };\n\
         void main() {\n  uint i = gl_GlobalInvocationID.x;\n\
         float a = d[i], b = d[i + 1u], c = d[i + 2u];\n",
    );
    let madd = |k: u32| format!("{} = {} * {} + {};", r(k, 0), r(k, 1), coef(k), r(k, 2));
    match shape {
        "straight" => (0..n).for_each(|k| s += &format!("  {}\n", madd(k))),
        "branches" => (0..n).for_each(|k| {
            s += &format!("  if ({} > {}) {}\n", r(k, 1), r(k, 2), madd(k));
        }),
        "loops" => {
            let mut k = 0;
            while k < n {
                for level in 0..4 {
                    s += &format!(
                        "{}for (uint j{level} = 0u; j{level} < m; j{level}++) {{ {}\n",
                        " ".repeat(level + 2),
                        madd(k)
                    );
                    k += 1;
                }
                s += "  }}}}\n";
            }
        }
        "live" => {
            const WINDOW: u32 = 100;
            for k in 0..n {
                let near = if k > 0 {
                    format!("t{}", k - 1)
                } else {
                    "a".into()
                };
                let far = if k >= WINDOW {
                    format!("t{}", k - WINDOW)
                } else {
                    r(k, 0).to_string()
                };
                s += &format!("  float t{k} = {near} * {} + {far};\n", coef(k));
            }
            s += "  float s = 0.0;\n";
            for k in n.saturating_sub(WINDOW)..n {
                s += &format!("  s = s * 0.5 + t{k};\n");
            }
            s += "  a = s;\n";
        }
        "memory" => (0..n).for_each(|k| {
            s += &format!(
                "  d[i + {}u] = d[i + {}u] * {} + {};\n",
                k + 3,
                k + 4,
                coef(k),
                r(k, 0)
            );
        }),
        _ => return None,
    }
    s += "  d[i] = a + b + c;\n}\n";
    Some(s)
}

/// Median of a worker's `compile_ms` list for its only shader.
pub fn median_ms(worker: &Json) -> Option<f64> {
    median_of(worker, "compile_ms")
}

/// Median of a worker's `key` list (`compile_ms`: wall time, `cpu_ms`: CPU time) for its
/// only shader.
pub fn median_of(worker: &Json, key: &str) -> Option<f64> {
    let t = sorted(worker, key)?;
    Some(t[t.len() / 2])
}

/// Minimum of a worker's `key` list for its only shader: the compile least disturbed by the
/// other processes of the machine (a compile never runs faster than its work allows).
pub fn min_of(worker: &Json, key: &str) -> Option<f64> {
    sorted(worker, key)?.first().copied()
}

fn sorted(worker: &Json, key: &str) -> Option<Vec<f64>> {
    let sh = worker.get("shaders")?.as_arr().first()?;
    let mut t: Vec<f64> = sh
        .get(key)?
        .as_arr()
        .iter()
        .filter_map(Json::as_f64)
        .collect();
    if t.is_empty() {
        return None;
    }
    t.sort_by(f64::total_cmp);
    Some(t)
}

/// One driver's results at one point, measured in rounds (one compile per worker and round,
/// see `ferrite-bench --scaling`), merged into one worker result: the first round's result
/// with the compile times of every round appended in round order and the largest peak RSS.
/// A round that failed or was stopped at the time limit makes the result that round's
/// (a stopped round carries `timeout_s`), so a failure is never averaged away.
pub fn merge_rounds(rounds: Vec<Json>) -> Option<Json> {
    if let Some(bad) = rounds.iter().find(|r| error(r).is_some()) {
        return Some(bad.clone());
    }
    let mut it = rounds.into_iter();
    let mut merged = it.next()?;
    for r in it {
        for key in ["compile_ms", "cpu_ms"] {
            let more: Vec<Json> = r
                .get("shaders")
                .and_then(|s| s.as_arr().first())
                .and_then(|s| s.get(key))
                .map(|t| t.as_arr().to_vec())
                .unwrap_or_default();
            let Some(Json::Arr(shaders)) = merged.get_mut("shaders") else {
                continue;
            };
            let Some(sh) = shaders.first_mut() else {
                continue;
            };
            match sh.get_mut(key) {
                Some(Json::Arr(t)) => t.extend(more),
                _ => sh.set(key, more),
            }
        }
        let kb = |w: &Json| w.get("peak_rss_kb").and_then(Json::as_f64);
        if let Some(b) = kb(&r) {
            if kb(&merged).is_none_or(|a| b > a) {
                merged.set("peak_rss_kb", b);
            }
        }
    }
    Some(merged)
}

/// One measured point: a shape at a size. `ferrite`: the compiler crate (per-pass times,
/// instructions); `ferrite_vk` and `anv`: `vkCreateComputePipelines` through the loader. A
/// loader result with `bound_ms` set ran out of time: its compiles take longer than that.
pub struct Point {
    pub shape: String,
    pub size: u32,
    pub ferrite: Option<Json>,
    pub ferrite_vk: Option<Json>,
    pub anv: Option<Json>,
}

/// A lower bound (ms) on one compile of a worker that was stopped after using `limit_s`
/// seconds of CPU time with `runs` compiles to do: that time minus a margin for the loader,
/// instance and one device per run (tens of ms each on the shim; 2 s + 0.5 s per run are
/// allowed), shared by the runs.
pub fn timeout_bound_ms(limit_s: f64, runs: usize) -> f64 {
    let runs = runs.max(1) as f64;
    ((limit_s - 2.0 - 0.5 * runs).max(0.0) / runs * 1e3).floor()
}

/// A driver's time at a point: measured (median), or longer than a bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Time {
    Ms(f64),
    Over(f64),
}

impl Time {
    /// The median CPU time of a worker's compiles (wall time when it has none), or the
    /// lower bound of a stopped worker.
    pub fn of(worker: Option<&Json>) -> Option<Time> {
        let w = worker?;
        median_of(w, "cpu_ms")
            .or_else(|| median_ms(w))
            .map(Time::Ms)
            .or_else(|| Self::bound(w))
    }

    /// The minimum CPU time of a worker's compiles (wall time when it has none), or the
    /// lower bound of a stopped worker.
    pub fn min(worker: Option<&Json>) -> Option<Time> {
        let w = worker?;
        min_of(w, "cpu_ms")
            .or_else(|| min_of(w, "compile_ms"))
            .map(Time::Ms)
            .or_else(|| Self::bound(w))
    }

    fn bound(w: &Json) -> Option<Time> {
        w.get("bound_ms").and_then(Json::as_f64).map(Time::Over)
    }

    fn ms(self) -> f64 {
        match self {
            Time::Ms(v) | Time::Over(v) => v,
        }
    }
}

impl std::fmt::Display for Time {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Time::Ms(v) => write!(f, "{v:.1}"),
            Time::Over(v) => write!(f, ">{v:.0}"),
        }
    }
}

impl Point {
    /// Ferrite's pipeline-creation time: through the loader when measured, else the compiler
    /// crate's.
    pub fn ferrite_time(&self) -> Option<Time> {
        Time::of(self.ferrite_vk.as_ref()).or_else(|| Time::of(self.ferrite.as_ref()))
    }

    /// The minimum of Ferrite's pipeline-creation times (see [`Point::ferrite_time`]).
    pub fn ferrite_min(&self) -> Option<Time> {
        Time::min(self.ferrite_vk.as_ref()).or_else(|| Time::min(self.ferrite.as_ref()))
    }

    /// Ferrite / anv of the medians, as text: "<r" when anv's time is only a lower bound.
    pub fn ratio(&self) -> Option<String> {
        ratio_text(self.ferrite_time()?, Time::of(self.anv.as_ref())?)
    }

    /// Ferrite / anv of the minimum times.
    pub fn ratio_min(&self) -> Option<String> {
        ratio_text(self.ferrite_min()?, Time::min(self.anv.as_ref())?)
    }
}

fn ratio_text(f: Time, a: Time) -> Option<String> {
    match (f, a) {
        (Time::Ms(f), Time::Ms(a)) => Some(format!("{:.2}", f / a)),
        (Time::Ms(f), Time::Over(a)) if a > 0.0 => Some(format!("<{:.3}", f / a)),
        _ => None,
    }
}

fn stat(worker: &Json, name: &str) -> Option<f64> {
    worker
        .get("shaders")?
        .as_arr()
        .first()?
        .get("stats")?
        .get(name)?
        .as_f64()
}

fn error(worker: &Json) -> Option<String> {
    if let Some(e) = worker.get("error").and_then(Json::as_str) {
        return Some(e.to_string());
    }
    let sh = worker.get("shaders")?.as_arr().first()?;
    sh.get("error").and_then(Json::as_str).map(String::from)
}

/// Growth exponent between two sizes: log(t2 / t1) / log(n2 / n1).
pub fn exponent(n1: u32, t1: f64, n2: u32, t2: f64) -> f64 {
    (t2 / t1).ln() / (f64::from(n2) / f64::from(n1)).ln()
}

/// The table: per shape, time per size for Ferrite (through the loader and the compiler
/// crate alone) and anv, the ratio, Ferrite's instructions and peak RSS, the growth
/// exponents between the two largest sizes, and Ferrite's slowest passes at the largest size.
pub fn report(points: &[Point], note: &str) -> String {
    let mut out = String::from(note);
    out += "Times: CPU ms per compile, median of the runs and (min) their minimum (wall ms \
             where a worker has no CPU times); the drivers and sizes are measured in \
             interleaved rounds, one compile per worker and round. Ferrite and anv: \
             vkCreateComputePipelines through the loader; compiler: \
             ferrite_compiler::compile. >T: stopped at the CPU-time limit, each compile took \
             longer than T.\n";
    let opt = |x: Option<Time>| x.map_or("-".to_string(), |v| v.to_string());
    let rss = |w: Option<&Json>| {
        w.and_then(|w| w.get("peak_rss_kb"))
            .and_then(Json::as_f64)
            .map_or("-".to_string(), |kb| format!("{:.1}", kb / 1024.0))
    };
    for (shape, what) in SHAPES {
        let pts: Vec<&Point> = points.iter().filter(|p| p.shape == *shape).collect();
        if pts.is_empty() {
            continue;
        }
        out += &format!("\n{shape}: {what}\n");
        out += &format!(
            "{:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7} {:>6} {:>6}\n",
            "stmts",
            "Ferrite",
            "(min)",
            "compiler",
            "anv",
            "(min)",
            "F/A",
            "(min)",
            "instr",
            "F MB",
            "anv MB"
        );
        for p in &pts {
            out += &format!(
                "{:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7} {:>6} {:>6}",
                p.size,
                opt(Time::of(p.ferrite_vk.as_ref())),
                opt(Time::min(p.ferrite_vk.as_ref())),
                opt(Time::of(p.ferrite.as_ref())),
                opt(Time::of(p.anv.as_ref())),
                opt(Time::min(p.anv.as_ref())),
                p.ratio().unwrap_or_else(|| "-".into()),
                p.ratio_min().unwrap_or_else(|| "-".into()),
                p.ferrite
                    .as_ref()
                    .and_then(|f| stat(f, "Instruction Count"))
                    .map_or("-".into(), |v| v.to_string()),
                rss(p.ferrite_vk.as_ref().or(p.ferrite.as_ref())),
                rss(p.anv.as_ref()),
            );
            for (who, w) in [
                ("Ferrite", &p.ferrite_vk),
                ("compiler", &p.ferrite),
                ("anv", &p.anv),
            ] {
                if let Some(e) = w.as_ref().and_then(error) {
                    out += &format!("  {who}: {e}");
                }
            }
            out += "\n";
        }
        if let [.., p1, p2] = pts.as_slice() {
            let growth = |w1: Option<&Json>, w2: Option<&Json>| {
                let one = |t: fn(Option<&Json>) -> Option<Time>| match (t(w1), t(w2)) {
                    (Some(Time::Ms(t1)), Some(Time::Ms(t2))) => {
                        format!("{:.2}", exponent(p1.size, t1, p2.size, t2))
                    }
                    _ => "-".into(),
                };
                format!("{} (min {})", one(Time::of), one(Time::min))
            };
            out += &format!(
                "growth exponent {} -> {}: Ferrite {}, compiler {}, anv {}\n",
                p1.size,
                p2.size,
                growth(p1.ferrite_vk.as_ref(), p2.ferrite_vk.as_ref()),
                growth(p1.ferrite.as_ref(), p2.ferrite.as_ref()),
                growth(p1.anv.as_ref(), p2.anv.as_ref()),
            );
            let passes = p2
                .ferrite
                .as_ref()
                .and_then(|f| f.get("shaders"))
                .and_then(|s| s.as_arr().first())
                .and_then(|s| s.get("pass_ms"));
            if let Some(passes) = passes {
                let mut v: Vec<(&str, f64)> = passes
                    .members()
                    .iter()
                    .filter_map(|(n, t)| Some((n.as_str(), t.as_f64()?)))
                    .collect();
                v.sort_by(|a, b| b.1.total_cmp(&a.1));
                let top: Vec<String> = v
                    .iter()
                    .take(8)
                    .map(|(n, t)| format!("{n} {t:.1}"))
                    .collect();
                out += &format!(
                    "Ferrite's slowest passes at {} (ms, one compile): {}\n",
                    p2.size,
                    top.join(", ")
                );
            }
        }
    }
    out
}

/// A log-log plot of pipeline-creation time against statements, one colour per shape:
/// Ferrite solid with dots, anv dashed with squares; an anv time known only as a lower bound
/// is an open triangle pointing up.
pub fn svg(points: &[Point]) -> String {
    const COLOURS: [&str; 5] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];
    let (w, h) = (760.0, 520.0);
    let (left, right, top, bottom) = (70.0, 170.0, 30.0, 60.0);
    let times: Vec<f64> = points
        .iter()
        .flat_map(|p| [p.ferrite_time(), Time::of(p.anv.as_ref())])
        .flatten()
        .map(Time::ms)
        .filter(|v| *v > 0.0)
        .collect();
    let sizes: Vec<f64> = points.iter().map(|p| f64::from(p.size)).collect();
    let decade = |v: f64, up: bool| {
        let l = v.log10();
        10f64.powf(if up { l.ceil() } else { l.floor() })
    };
    let fold = |v: &[f64], f: fn(f64, f64) -> f64, init: f64| v.iter().copied().fold(init, f);
    let (y0, y1) = (
        decade(fold(&times, f64::min, 1e9).min(1e9), false),
        decade(fold(&times, f64::max, 1.0), true),
    );
    let (x0, x1) = (
        fold(&sizes, f64::min, 1e9).min(1e9) / 1.2,
        fold(&sizes, f64::max, 1.0) * 1.2,
    );
    let px = |n: f64| left + (n / x0).ln() / (x1 / x0).ln() * (w - left - right);
    let py = |t: f64| h - bottom - (t / y0).ln() / (y1 / y0).ln() * (h - top - bottom);
    let mut s = svg::open(w, h);
    // Grid: decades of time, the measured sizes.
    let mut t = y0;
    while t <= y1 * 1.001 {
        let label = if t >= 1000.0 {
            format!("{} s", t / 1000.0)
        } else {
            format!("{t} ms")
        };
        s += &svg::grid_line(left, w - right, py(t), label);
        t *= 10.0;
    }
    let mut xs: Vec<u32> = points.iter().map(|p| p.size).collect();
    xs.sort_unstable();
    xs.dedup();
    for n in xs {
        let x = px(f64::from(n));
        s += &format!(
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top}\" y2=\"{}\" stroke=\"#eee\"/>\
             <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{n}</text>\n",
            h - bottom,
            h - bottom + 16.0
        );
    }
    s += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">statements (log scale)</text>\n\
         <text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">\
         CPU time per vkCreateComputePipelines (log scale)</text>\n",
        (left + w - right) / 2.0,
        h - 20.0,
        h / 2.0,
        h / 2.0
    );
    let mut legend = top;
    for (k, (shape, _)) in SHAPES.iter().enumerate() {
        let pts: Vec<&Point> = points.iter().filter(|p| p.shape == *shape).collect();
        if pts.is_empty() {
            continue;
        }
        let c = COLOURS[k % COLOURS.len()];
        for anv in [false, true] {
            let marks: Vec<(f64, Time)> = pts
                .iter()
                .filter_map(|p| {
                    let t = if anv {
                        Time::of(p.anv.as_ref())
                    } else {
                        p.ferrite_time()
                    };
                    Some((f64::from(p.size), t?))
                })
                .collect();
            if marks.is_empty() {
                continue;
            }
            let line: Vec<String> = marks
                .iter()
                .map(|(n, t)| format!("{:.1},{:.1}", px(*n), py(t.ms())))
                .collect();
            let dash = if anv { " stroke-dasharray=\"6,4\"" } else { "" };
            s += &format!(
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.5\"{dash}/>\n",
                line.join(" ")
            );
            for (n, t) in &marks {
                let (x, y) = (px(*n), py(t.ms()));
                s += &match (anv, t) {
                    (false, _) => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"{c}\"/>\n"),
                    (true, Time::Ms(_)) => format!(
                        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"6\" height=\"6\" fill=\"{c}\"/>\n",
                        x - 3.0,
                        y - 3.0
                    ),
                    (true, Time::Over(_)) => format!(
                        "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"white\" stroke=\"{c}\"/>\n",
                        x,
                        y - 5.0,
                        x - 4.5,
                        y + 3.0,
                        x + 4.5,
                        y + 3.0
                    ),
                };
            }
        }
        let lx = w - right + 14.0;
        s += &format!(
            "<line x1=\"{lx}\" x2=\"{}\" y1=\"{legend}\" y2=\"{legend}\" stroke=\"{c}\" stroke-width=\"1.5\"/>\
             <text x=\"{}\" y=\"{}\">{shape} Ferrite</text>\n\
             <line x1=\"{lx}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{c}\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\
             <text x=\"{}\" y=\"{}\">{shape} anv</text>\n",
            lx + 24.0,
            lx + 30.0,
            legend + 4.0,
            lx + 24.0,
            legend + 16.0,
            legend + 16.0,
            lx + 30.0,
            legend + 20.0,
        );
        legend += 38.0;
    }
    s += &format!(
        "<polygon points=\"{x},{y0} {x1},{y1} {x2},{y1}\" fill=\"white\" stroke=\"black\"/>\
         <text x=\"{}\" y=\"{}\">anv longer than shown</text>\n</svg>\n",
        w - right + 30.0,
        legend + 8.0,
        x = w - right + 18.0,
        y0 = legend,
        x1 = w - right + 13.5,
        x2 = w - right + 22.5,
        y1 = legend + 8.0,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_has_the_asked_number_of_statements() {
        for (shape, _) in SHAPES {
            let g = glsl(shape, 40).unwrap();
            let statements = g.matches(';').count();
            // 40 statements plus the fixed prologue/epilogue (and the live shape's sum).
            assert!(
                (40..140).contains(&statements),
                "{shape}: {statements} statements\n{g}"
            );
            let bigger = glsl(shape, 80).unwrap().matches(';').count();
            assert!(
                bigger >= statements + 40,
                "{shape}: {statements} -> {bigger}"
            );
        }
        assert!(glsl("nonsense", 10).is_none());
    }

    #[test]
    fn exponent_of_a_quadratic_is_two() {
        assert!((exponent(100, 1.0, 200, 4.0) - 2.0).abs() < 1e-9);
    }

    fn worker(ms: &[f64]) -> Json {
        let mut sh = Json::obj();
        sh.set(
            "compile_ms",
            ms.iter().map(|&v| Json::Num(v)).collect::<Vec<_>>(),
        );
        let mut w = Json::obj();
        w.set("shaders", vec![sh]);
        w
    }

    fn cpu_worker(ms: &[f64], rss_kb: f64) -> Json {
        let mut sh = Json::obj();
        sh.set(
            "cpu_ms",
            ms.iter().map(|&v| Json::Num(v)).collect::<Vec<_>>(),
        );
        let mut w = Json::obj();
        w.set("shaders", vec![sh]);
        w.set("peak_rss_kb", rss_kb);
        w
    }

    #[test]
    fn rounds_merge_into_one_result_with_median_and_minimum() {
        let merged = merge_rounds(vec![
            cpu_worker(&[30.0], 1000.0),
            cpu_worker(&[10.0], 3000.0),
            cpu_worker(&[20.0], 2000.0),
        ])
        .unwrap();
        assert_eq!(Time::of(Some(&merged)), Some(Time::Ms(20.0)), "{merged}");
        assert_eq!(Time::min(Some(&merged)), Some(Time::Ms(10.0)), "{merged}");
        assert_eq!(
            merged.get("peak_rss_kb").and_then(Json::as_f64),
            Some(3000.0)
        );
        // A stopped round is the result: a failure is not averaged away.
        let mut stopped = Json::obj();
        stopped.set("error", "stopped after 12.0 s of CPU time");
        stopped.set("timeout_s", 12.0);
        let merged = merge_rounds(vec![cpu_worker(&[5.0], 1.0), stopped.clone()]).unwrap();
        assert_eq!(merged, stopped);
        assert!(merge_rounds(vec![]).is_none());
    }

    #[test]
    fn the_table_gives_both_exponents() {
        let p = |size, f: &[f64], a: &[f64]| Point {
            shape: "straight".into(),
            size,
            ferrite: None,
            ferrite_vk: Some(cpu_worker(f, 1.0)),
            anv: Some(cpu_worker(a, 1.0)),
        };
        // Medians 10 -> 40 (exponent 2), minimums 8 -> 16 (exponent 1).
        let pts = [
            p(100, &[8.0, 10.0, 50.0], &[20.0, 30.0, 40.0]),
            p(200, &[16.0, 40.0, 60.0], &[40.0, 50.0, 90.0]),
        ];
        assert_eq!(pts[1].ratio().as_deref(), Some("0.80"));
        assert_eq!(pts[1].ratio_min().as_deref(), Some("0.40"));
        let table = report(&pts, "");
        assert!(table.contains("Ferrite 2.00 (min 1.00)"), "{table}");
    }

    #[test]
    fn a_stopped_anv_worker_is_a_lower_bound_and_the_ratio_says_so() {
        // 120 s for 3 compiles, 3.5 s of margin: each took more than 38.8 s.
        assert_eq!(timeout_bound_ms(120.0, 3), 38833.0);
        let mut stopped = Json::obj();
        stopped.set("error", "stopped after the 120 s limit");
        stopped.set("bound_ms", 38833.0);
        let p = Point {
            shape: "loops".into(),
            size: 3200,
            ferrite: Some(worker(&[900.0, 1000.0, 1100.0])),
            ferrite_vk: Some(worker(&[1200.0, 1300.0, 1250.0])),
            anv: Some(stopped),
        };
        // The loader time is Ferrite's pipeline creation; the compiler crate's is not used.
        assert_eq!(p.ferrite_time(), Some(Time::Ms(1250.0)));
        assert_eq!(p.ratio().as_deref(), Some("<0.032"));
        let table = report(&[p], "");
        assert!(table.contains(">38833"), "{table}");
        let plot = svg(&[Point {
            shape: "loops".into(),
            size: 3200,
            ferrite: None,
            ferrite_vk: Some(worker(&[1250.0])),
            anv: Some(worker(&[40000.0])),
        }]);
        assert!(
            plot.starts_with("<svg") && plot.contains("<polyline"),
            "{plot}"
        );
    }
}
