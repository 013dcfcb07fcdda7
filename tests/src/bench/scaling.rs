//! `ferrite-bench --scaling`: compile time against shader size. Generated GLSL compute
//! shaders of several shapes at sizes doubling from 100 to 6,400 statements, each compiled
//! in a child process of its own (so its peak RSS is the compile's), by Ferrite's compiler
//! crate and, when the shim is set up, by anv through the loader.

use super::json::Json;

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
    let sh = worker.get("shaders")?.as_arr().first()?;
    let mut t: Vec<f64> = sh
        .get("compile_ms")?
        .as_arr()
        .iter()
        .filter_map(Json::as_f64)
        .collect();
    if t.is_empty() {
        return None;
    }
    t.sort_by(f64::total_cmp);
    Some(t[t.len() / 2])
}

/// One measured point: a shape at a size.
pub struct Point {
    pub shape: String,
    pub size: u32,
    pub ferrite: Json,
    pub anv: Option<Json>,
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

/// The table: per shape, time per size for both drivers, Ferrite's instructions and peak
/// RSS, the growth exponents between the two largest sizes, and Ferrite's slowest passes at
/// the largest size.
pub fn report(points: &[Point], anv_note: &str) -> String {
    let mut out = String::new();
    if !anv_note.is_empty() {
        out += &format!("anv: {anv_note}\n");
    }
    let ms = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.1}"));
    for (shape, what) in SHAPES {
        let pts: Vec<&Point> = points.iter().filter(|p| p.shape == *shape).collect();
        if pts.is_empty() {
            continue;
        }
        out += &format!("\n{shape}: {what}\n");
        out += &format!(
            "{:>6} {:>12} {:>10} {:>7} {:>9} {:>10} {:>12}\n",
            "stmts", "Ferrite ms", "anv ms", "F/A", "instr", "F RSS MB", "anv RSS MB"
        );
        for p in &pts {
            let f = median_ms(&p.ferrite);
            let a = p.anv.as_ref().and_then(median_ms);
            let ratio = match (f, a) {
                (Some(f), Some(a)) => format!("{:.2}", f / a),
                _ => "-".into(),
            };
            let rss = |w: Option<&Json>| {
                w.and_then(|w| w.get("peak_rss_kb"))
                    .and_then(Json::as_f64)
                    .map_or("-".to_string(), |kb| format!("{:.1}", kb / 1024.0))
            };
            out += &format!(
                "{:>6} {:>12} {:>10} {:>7} {:>9} {:>10} {:>12}",
                p.size,
                ms(f),
                ms(a),
                ratio,
                stat(&p.ferrite, "Instruction Count").map_or("-".into(), |v| v.to_string()),
                rss(Some(&p.ferrite)),
                rss(p.anv.as_ref()),
            );
            if let Some(e) = error(&p.ferrite) {
                out += &format!("  Ferrite: {e}");
            }
            out += "\n";
        }
        if let [.., p1, p2] = pts.as_slice() {
            let growth = |w1: Option<f64>, w2: Option<f64>| match (w1, w2) {
                (Some(t1), Some(t2)) => format!("{:.2}", exponent(p1.size, t1, p2.size, t2)),
                _ => "-".into(),
            };
            out += &format!(
                "growth exponent {} -> {}: Ferrite {}, anv {}\n",
                p1.size,
                p2.size,
                growth(median_ms(&p1.ferrite), median_ms(&p2.ferrite)),
                growth(
                    p1.anv.as_ref().and_then(median_ms),
                    p2.anv.as_ref().and_then(median_ms)
                ),
            );
            let passes = p2
                .ferrite
                .get("shaders")
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
}
