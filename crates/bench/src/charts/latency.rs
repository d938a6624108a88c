//! Seed 003: latency percentiles per write API, ours against the seed's,
//! on a log scale.

use super::kit::axis::{draw_axes, plot_rect, Axis};
use super::kit::legend::series_legend;
use super::kit::{canvas, ours_vs_seed, DrawErr, Txt, LABEL_SIZE, PALETTE};
use super::plan::{latency_values, PercentilePoints};
use crate::results::{Latency, Percentiles, Scenario};

pub(super) fn latency_chart(s: &Scenario<Latency>) -> Result<String, DrawErr> {
    let seed = &s.seed_id;
    let rows: Vec<(&str, PercentilePoints, PercentilePoints)> = s
        .figures
        .rows
        .iter()
        .map(|r| (r.operation.as_str(), latency_values(Some(&r.ours)), latency_values(r.seed.as_ref())))
        .filter(|(_, o, t)| !o.is_empty() || !t.is_empty())
        .collect();
    let all = rows.iter().flat_map(|(_, o, t)| o.iter().chain(t).map(|p| p.1));
    let (min, max) = all.fold((f64::MAX, 0.0_f64), |(a, b), v| (a.min(v), b.max(v)));
    let y = Axis::log(min, max, 0.06);
    let x = Axis::categories(Percentiles::LABELS.iter().map(|l| l.to_string()).collect());
    let any_seed = rows.iter().any(|r| !r.2.is_empty());

    let title = format!("Seed {seed}: {}", s.title);
    let subtitle = if any_seed {
        format!("Latency percentiles per operation: ours (solid, ●) vs seed {seed} (dashed, △), log scale")
    } else {
        "Latency percentiles per operation, log scale".to_string()
    };
    let legend = series_legend(rows.iter().map(|(op, _, _)| op.to_string()), seed, any_seed);

    canvas(&title, &subtitle, &legend, |area, top, bottom| {
        let left = y.widest_tick(Txt::new(LABEL_SIZE));
        let p = plot_rect(top, bottom, left, x, y);
        draw_axes(area, &p, "percentile of requests", "latency per request (ms, log scale)")?;
        // Operations side by side within each percentile, so equal values stay visible.
        let n = rows.len() as f64;
        let spread = 0.36_f64.min(0.12 * (n - 1.0));
        for (i, (_, ours, theirs)) in rows.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let dx = if n > 1.0 { -spread / 2.0 + spread * i as f64 / (n - 1.0) } else { 0.0 };
            let to_px = |pts: &PercentilePoints| -> Vec<(i32, i32)> {
                pts.iter().map(|(k, v)| p.px(*k as f64 + dx, *v)).collect()
            };
            ours_vs_seed(area, to_px(ours), to_px(theirs), color, 2)?;
        }
        Ok(())
    })
}
