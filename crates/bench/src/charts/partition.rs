//! Seed 004's figures 3, 5, 6 and 7: write units consumed and throttled
//! per second of one load, with the rate the seed published.

use plotters::style::text_anchor::{HPos, VPos};

use super::kit::axis::{draw_axes, plot_rect, Axis, Plot};
use super::kit::legend::{item, Stroke};
use super::kit::{
    canvas, dashed, line, mark, Area, DrawErr, Drawn, Mark, Txt, BLUE, GREEN, INK, LABEL_SIZE, PURPLE, VERMILLION,
};
use crate::format::format_number;
use crate::results::{PartitionKeys, PartitionLoad, Scenario};

/// One second: `(second, consumed, throttled)`.
type Second = (f64, f64, f64);

pub(super) fn partition_chart(s: &Scenario<PartitionKeys>, load: &PartitionLoad) -> Result<String, DrawErr> {
    let seed = &s.seed_id;
    let points: Vec<Second> = load.timeline.iter().map(|t| (t.second as f64, t.consumed, t.throttled as f64)).collect();
    let seed_rate = Some(load.seed_rate).filter(|r| *r > 0.0);
    let last_second = points.iter().map(|p| p.0).fold(0.0_f64, f64::max).max(1.0);

    // One scale for every load of the scenario, so the four charts read
    // side by side: log, since throttled items can outnumber consumed
    // units forty to one, from the power of ten under the smallest value
    // to the power of ten over the largest, so that every line sits under
    // a labelled tick.
    let values = || {
        s.figures
            .loads
            .iter()
            .flat_map(|l| l.timeline.iter().flat_map(|t| [t.consumed, t.throttled as f64]).chain(Some(l.seed_rate)))
    };
    let max_y = values().filter(|v| v.is_finite()).fold(1.0_f64, f64::max);
    let min_pos = values().filter(|v| *v > 0.0 && v.is_finite()).fold(f64::MAX, f64::min).min(max_y);
    let y = Axis::log_between(min_pos.max(1.0).log10().floor(), max_y.log10().ceil().max(1.0));
    let x = Axis::linear(0.0, last_second, 8, 1.0).ending_at(last_second);

    let title = match load.seed_figure() {
        Some(n) => format!("Seed {seed}, figure {n}: {}", load.label),
        None => format!("Seed {seed}: {}", load.label),
    };
    let mut sub = vec!["Write units consumed and items throttled, per second".to_string()];
    let how = if load.modelled { "modelled" } else { "measured" };
    sub.push(format!("ours {}/s over {} s ({how})", format_number(load.rate_units_per_s), format_number(load.seconds)));
    if let Some(r) = seed_rate {
        sub.push(format!("seed {}/s", format_number(r)));
    }
    let seed_label = seed_rate.map(|r| format!("seed {seed}: {}/s", format_number(r)));
    let mut legend = vec![
        item("ours: write units consumed/s", BLUE, Stroke::Solid, Mark::None),
        item("ours: items throttled/s (offered, refused)", VERMILLION, Stroke::Solid, Mark::None),
    ];
    if let Some(l) = &seed_label {
        legend.push(item(format!("{l} (published rate)"), INK, Stroke::Dashed, Mark::None));
    }
    // The table's partitions each second and its splits, in a panel of
    // their own under the rates (seed 004's explanation of them).
    let partitions: Vec<(f64, f64, f64)> = load
        .timeline
        .iter()
        .filter_map(|t| Some((t.second as f64, t.partitions? as f64, t.partitions_written.unwrap_or(0) as f64)))
        .collect();
    if !partitions.is_empty() {
        legend.push(item("partitions; ▲ a split (partitions after it)", GREEN, Stroke::Solid, Mark::Triangle));
        legend.push(item("partitions written that second", PURPLE, Stroke::Dashed, Mark::None));
    }
    let y_desc = "per second (log scale)";
    let x_desc = "seconds since the load started (s)";

    canvas(&title, &sub.join(" · "), &legend, |area, top, bottom| {
        let tick = Txt::new(LABEL_SIZE);
        let left = y.widest_tick(tick);
        let p = if partitions.is_empty() {
            let p = plot_rect(top, bottom, left, x, y);
            draw_axes(area, &p, x_desc, y_desc)?;
            p
        } else {
            let whole = plot_rect(top, bottom, left, x, y);
            let lower = partition_panel(area, &whole, last_second, &partitions, &load.splits, x_desc)?;
            // The rates above, sharing the panel's seconds (their tick
            // labels are the panel's).
            let upper_x = Axis::linear(0.0, last_second, 8, 1.0).ending_at(last_second).unlabelled();
            let p = Plot { b: lower.t - PANEL_GAP, x: upper_x, ..whole };
            draw_axes(area, &p, "", y_desc)?;
            p
        };
        // The seed's rate first, so our consumed line (often on it) stays visible.
        if let Some(rate) = seed_rate {
            let (_, yy) = p.px(0.0, rate);
            dashed(area, vec![(p.l, yy), (p.r, yy)], INK, 1)?;
        }
        let few = points.len() <= 30;
        for (pick, color, width) in [(2usize, VERMILLION, 2), (1, BLUE, 3)] {
            let pts: Vec<(i32, i32)> = points.iter().map(|t| p.px(t.0, if pick == 1 { t.1 } else { t.2 })).collect();
            if pts.len() > 1 {
                line(area, pts.clone(), color, width)?;
            }
            if few {
                for pt in pts {
                    mark(area, Mark::Dot, pt, color)?;
                }
            }
        }
        if let (Some(rate), Some(label)) = (seed_rate, &seed_label) {
            let (_, yy) = p.px(0.0, rate);
            let txt = Txt::new(LABEL_SIZE).bold();
            let series: Vec<Vec<(i32, i32)>> = [1usize, 2]
                .iter()
                .map(|&pick| points.iter().map(|t| p.px(t.0, if pick == 1 { t.1 } else { t.2 })).collect())
                .collect();
            let (w, h) = (txt.width(label), txt.height());
            // Right end above the line, else below, else the left end: the
            // first spot no data point falls in.
            let spots = [
                (HPos::Right, VPos::Bottom, p.r - 6, yy - 4),
                (HPos::Right, VPos::Top, p.r - 6, yy + 4),
                (HPos::Left, VPos::Bottom, p.l + 6, yy - 4),
                (HPos::Left, VPos::Top, p.l + 6, yy + 4),
            ];
            let free = |&(hp, vp, x, y): &(HPos, VPos, i32, i32)| {
                let x0 = if matches!(hp, HPos::Right) { x - w } else { x };
                let y0 = if matches!(vp, VPos::Bottom) { y - h } else { y };
                y0 >= p.t
                    && y0 + h <= p.b
                    && !series.iter().any(|s| crosses(s, (x0 - 4, y0 - 3), (x0 + w + 4, y0 + h + 3)))
            };
            let (hp, vp, x, y) = spots.iter().copied().find(free).unwrap_or(spots[0]);
            txt.anchor(hp, vp).draw_boxed(area, label, (x, y))?;
        }
        Ok(())
    })
}

/// Height of the partitions panel's plot, pixels.
const PANEL_HEIGHT: i32 = 84;
/// Between the rates' plot and the partitions panel, pixels.
const PANEL_GAP: i32 = 26;

/// Draws the table's partitions per second (a step line) and its splits
/// (triangles, numbered with the partitions after each where the numbers
/// do not collide) at the bottom of `whole`, with the seconds axis under
/// it; returns the panel's plot.
fn partition_panel(
    area: &Area,
    whole: &Plot,
    last_second: f64,
    partitions: &[(f64, f64, f64)],
    splits: &[crate::results::SplitMark],
    x_desc: &str,
) -> Result<Plot, DrawErr> {
    let most =
        partitions.iter().map(|p| p.1).chain(splits.iter().map(|e| e.partitions_after as f64)).fold(1.0, f64::max);
    // Headroom over the most, for the count written above its line.
    let y = Axis::linear(0.0, most + 1.0, 3, 1.0);
    let x = Axis::linear(0.0, last_second, 8, 1.0).ending_at(last_second);
    let p = Plot { l: whole.l, t: whole.b - PANEL_HEIGHT, r: whole.r, b: whole.b, x, y };
    draw_axes(area, &p, x_desc, "partitions")?;
    // Step lines: each second's count held until the next.
    let step_line = |value: fn(&(f64, f64, f64)) -> f64| {
        let mut steps = Vec::with_capacity(partitions.len() * 2);
        for (i, s) in partitions.iter().enumerate() {
            let next = partitions.get(i + 1).map_or(last_second, |q| q.0);
            steps.push(p.px(s.0, value(s)));
            steps.push(p.px(next, value(s)));
        }
        steps
    };
    let all = step_line(|s| s.1);
    if all.len() > 1 {
        line(area, all, GREEN, 2)?;
    }
    // Dashed over the partitions, so that it shows where it equals them.
    let written = step_line(|s| s.2);
    if written.len() > 1 {
        dashed(area, written, PURPLE, 2)?;
    }
    // The count at the start, in words (the splits number the later ones).
    if let Some(first) = partitions.first() {
        let (x, y) = p.px(first.0, first.1);
        let label = format!("{} partitions", format_number(first.1));
        Txt::new(LABEL_SIZE).bold().color(GREEN).anchor(HPos::Left, VPos::Bottom).draw_boxed(
            area,
            &label,
            (x + 8, y - 4),
        )?;
    }
    draw_splits(area, &p, splits)?;
    Ok(p)
}

/// A triangle per split, and the partitions after it above where it does
/// not run into the previous number.
fn draw_splits(area: &Area, p: &Plot, splits: &[crate::results::SplitMark]) -> Drawn {
    let txt = Txt::new(LABEL_SIZE).bold().color(GREEN);
    let mut free_from = i32::MIN;
    for e in splits {
        let at = p.px(e.at_s, e.partitions_after as f64);
        mark(area, Mark::Triangle, at, GREEN)?;
        let label = e.partitions_after.to_string();
        let w = txt.width(&label);
        let x0 = at.0 - w / 2;
        if x0 >= free_from && at.1 - 9 - txt.height() >= p.t - 12 {
            txt.anchor(HPos::Center, VPos::Bottom).draw_boxed(area, &label, (at.0, at.1 - 9))?;
            free_from = x0 + w + 6;
        }
    }
    Ok(())
}

/// Whether a polyline passes through the rectangle `a`–`b` (corners).
pub(super) fn crosses(line: &[(i32, i32)], a: (i32, i32), b: (i32, i32)) -> bool {
    let inside =
        |x: f64, y: f64| x >= f64::from(a.0) && x <= f64::from(b.0) && y >= f64::from(a.1) && y <= f64::from(b.1);
    if line.len() == 1 {
        return inside(f64::from(line[0].0), f64::from(line[0].1));
    }
    line.windows(2).any(|seg| {
        let (x0, y0) = (f64::from(seg[0].0), f64::from(seg[0].1));
        let (x1, y1) = (f64::from(seg[1].0), f64::from(seg[1].1));
        // Sampled every pixel or so: segments here are short.
        let steps = ((x1 - x0).abs().max((y1 - y0).abs()) as usize).max(1);
        (0..=steps).any(|i| {
            let f = i as f64 / steps as f64;
            inside(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polylines_crossing_boxes() {
        let line = [(0, 0), (100, 100)];
        assert!(crosses(&line, (40, 40), (60, 60)));
        assert!(!crosses(&line, (60, 0), (100, 30)));
        // A steep drop between two points far outside the box still crosses it.
        assert!(crosses(&[(50, 0), (50, 100)], (40, 40), (60, 60)));
    }
}
