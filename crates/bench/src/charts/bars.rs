//! Seeds 000 and 002: horizontal bars per API or pattern, ours above the
//! seed's, on a log scale.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::kit::axis::{draw_axes, plot_rect, Axis};
use super::kit::legend::{item, Stroke};
use super::kit::{canvas, wrap2, DrawErr, Mark, Txt, LABEL_SIZE, OURS, SEED, VALUE_SIZE};
use crate::format::format_number;
use crate::results::{ParallelPatterns, Scenario, WriteApis};

/// Horizontal bars, two per category (ours above the seed's), on a log axis.
struct Bars<'a> {
    title: String,
    subtitle: String,
    seed: &'a str,
    categories: Vec<String>,
    ours: Vec<Option<f64>>,
    theirs: Vec<Option<f64>>,
    unit: &'a str,
    x_desc: String,
}

fn bars_chart(b: Bars<'_>) -> Result<String, DrawErr> {
    let values = || b.ours.iter().chain(&b.theirs).flatten().copied().filter(|v| *v > 0.0);
    let min = values().fold(f64::MAX, f64::min);
    let max = values().fold(0.0_f64, f64::max);
    // Bars start at a power of ten well below the shortest bar, so that every
    // bar has a visible length and the baseline has a label; about a fifth of
    // the width stays free right of the longest bar for its value.
    let (lo, hi) = Axis::log_bounds(min, max);
    let base = (lo - 0.3 * (hi - lo).max(1.0)).floor();
    let x = Axis::log_between(base, hi + 0.25 * (hi - base));
    let n = b.categories.len();
    // Category 0 at the top.
    let y = Axis::categories(b.categories.iter().rev().cloned().collect());

    let legend = vec![
        item("ours (dynaburst, this machine)", OURS, Stroke::Bar, Mark::None),
        item(format!("seed {} (published, against AWS)", b.seed), SEED, Stroke::Bar, Mark::None),
    ];
    let cat = Txt::new(LABEL_SIZE);
    let max_label = 300;
    let wrapped: Vec<Vec<String>> = b.categories.iter().map(|c| wrap2(cat, c, max_label)).collect();
    let left = wrapped.iter().flat_map(|ls| ls.iter().map(|l| cat.width(l))).max().unwrap_or(0);

    canvas(&b.title, &b.subtitle, &legend, |area, top, bottom| {
        // Category labels are drawn below (wrapped); the axis keeps empty ones.
        let mut y = y;
        for t in &mut y.ticks {
            t.1.clear();
        }
        let p = plot_rect(top, bottom, left, x, y);
        draw_axes(area, &p, &b.x_desc, "")?;
        let slot = f64::from(p.b - p.t) / n.max(1) as f64;
        let bar = (slot * 0.32).clamp(6.0, 30.0) as i32;
        let value_txt = Txt::new(VALUE_SIZE).anchor(HPos::Left, VPos::Center);
        for (i, lines) in wrapped.iter().enumerate() {
            let yc = p.ypx((n - 1 - i) as f64);
            let lh = cat.height();
            let y0 = yc - lh * (lines.len() as i32 - 1) / 2;
            for (k, l) in lines.iter().enumerate() {
                cat.anchor(HPos::Right, VPos::Center).draw(area, l, (p.l - 10, y0 + k as i32 * lh))?;
            }
            for (value, color, y_top) in [(b.ours[i], OURS, yc - bar - 1), (b.theirs[i], SEED, yc + 1)] {
                let Some(v) = value else { continue };
                let x1 = p.xpx(p.x.at(v)).max(p.l + 1);
                area.draw(&Rectangle::new([(p.l + 1, y_top), (x1, y_top + bar)], color.filled()))?;
                value_txt.draw(area, &format!("{} {}", format_number(v), b.unit), (x1 + 5, y_top + bar / 2))?;
            }
        }
        Ok(())
    })
}

pub(super) fn write_apis_chart(s: &Scenario<WriteApis>) -> Result<String, DrawErr> {
    let seed = s.seed_id.as_str();
    let rows: Vec<_> =
        s.figures.rows.iter().filter(|r| r.wall_s > 0.0 || r.seed_wall_s.is_some_and(|t| t > 0.0)).collect();
    let same_items = rows.windows(2).all(|w| w[0].items == w[1].items);
    let subtitle = match rows.first() {
        Some(r) if same_items => format!(
            "Wall-clock seconds to write {} items, per API: ours vs seed {seed} (log scale)",
            format_number(r.items as f64)
        ),
        _ => format!("Wall-clock seconds to write every item, per API: ours vs seed {seed} (log scale)"),
    };
    bars_chart(Bars {
        title: format!("Seed {seed}: {}", s.title),
        subtitle,
        seed,
        categories: rows.iter().map(|r| r.api.clone()).collect(),
        ours: rows.iter().map(|r| Some(r.wall_s)).collect(),
        theirs: rows.iter().map(|r| r.seed_wall_s).collect(),
        unit: "s",
        x_desc: "wall-clock time to write all items (s, log scale)".into(),
    })
}

pub(super) fn patterns_chart(s: &Scenario<ParallelPatterns>) -> Result<String, DrawErr> {
    let seed = s.seed_id.as_str();
    let rows: Vec<_> = s.figures.patterns.iter().filter(|p| p.mean_ms > 0.0 || p.seed_mean_ms > 0.0).collect();
    let same_items = rows.windows(2).all(|w| w[0].items == w[1].items);
    let per = match rows.first() {
        Some(r) if same_items => format!("of {} items", format_number(r.items as f64)),
        _ => "per trial".to_string(),
    };
    bars_chart(Bars {
        title: format!("Seed {seed}: {}", s.title),
        subtitle: format!("Mean time per load {per}, per loader pattern: ours vs seed {seed} (log scale)"),
        seed,
        categories: rows.iter().map(|r| r.pattern.clone()).collect(),
        ours: rows.iter().map(|r| Some(r.mean_ms)).collect(),
        theirs: rows.iter().map(|r| Some(r.seed_mean_ms)).collect(),
        unit: "ms",
        x_desc: format!("mean time per load {per} (ms, log scale)"),
    })
}
