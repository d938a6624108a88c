//! The index trap: items written per second of each load, one line per
//! case, with the busiest GSI partition of the low-cardinality loads and
//! the table's own bound.

use plotters::style::text_anchor::{HPos, VPos};

use super::kit::axis::{draw_axes, plot_rect, Axis};
use super::kit::legend::{item, Stroke};
use super::kit::{canvas, dashed, line, DrawErr, Txt, BLUE, GREEN, LABEL_SIZE, MUTED, PALETTE, PURPLE, VERMILLION};
use super::partition::crosses;
use crate::format::{format_count, format_number};
use crate::results::{IndexTrap, IndexTrapLoad, Scenario};

/// Each known case's colour; others take the palette's in turn.
fn color(case: &str, i: usize) -> plotters::style::RGBColor {
    match case {
        "no-index" => BLUE,
        "low-cardinality" => VERMILLION,
        "high-cardinality" => GREEN,
        "provisioned-low-cardinality" => PURPLE,
        _ => PALETTE[i % PALETTE.len()],
    }
}

/// A load's name in the legend: its GSI key, or none.
fn short(l: &IndexTrapLoad) -> String {
    let provisioned = l.case.starts_with("provisioned");
    match (&l.gsi_key, l.gsi_key_values) {
        (Some(k), _) if provisioned => format!("GSI on {k}, provisioned"),
        (Some(k), Some(v)) => format!("GSI on {k} ({} values)", format_count(v as f64)),
        (Some(k), None) => format!("GSI on {k}"),
        (None, _) if provisioned => "no GSI, provisioned".to_string(),
        (None, _) => "no GSI".to_string(),
    }
}

/// The busiest GSI partition's line is drawn for loads whose GSI, not the
/// table, set the pace.
fn shows_hot_partition(l: &IndexTrapLoad) -> bool {
    l.bound.contains("GSI") && l.timeline.iter().any(|t| t.gsi_hottest_partition_units.is_some())
}

pub(super) fn index_trap_chart(s: &Scenario<IndexTrap>) -> Result<String, DrawErr> {
    let loads: Vec<&IndexTrapLoad> = s.figures.loads.iter().filter(|l| !l.timeline.is_empty()).collect();
    let max_items = loads.iter().flat_map(|l| l.timeline.iter().map(|t| t.items as f64)).fold(0.0, f64::max);
    let max_hot = loads
        .iter()
        .filter(|l| shows_hot_partition(l))
        .flat_map(|l| l.timeline.iter().filter_map(|t| t.gsi_hottest_partition_units))
        .fold(0.0, f64::max);
    let table_bound = loads.iter().find(|l| l.gsi_key.is_none()).map(|l| l.bound_items_per_s).filter(|b| *b > 0.0);
    let max_y = max_items.max(max_hot).max(table_bound.unwrap_or(0.0)).max(1.0);
    let last_second = loads.iter().flat_map(|l| l.timeline.iter().map(|t| t.second as f64)).fold(1.0, f64::max);
    let y = Axis::linear(0.0, max_y * 1.08, 6, 0.0);
    let x = Axis::linear(0.0, last_second, 8, 1.0).ending_at(last_second);

    let items = loads.first().map(|l| format_count(l.items as f64)).unwrap_or_default();
    let how = if loads.iter().all(|l| l.modelled) { "modelled" } else { "measured" };
    let title = "Index trap: a GSI key of few values caps the whole load".to_string();
    let sub = format!(
        "Items written per second, {items} shuffled orders into new tables ({how}) · after seed {}'s figures",
        s.seed_id
    );
    let mut legend = Vec::new();
    for (i, l) in loads.iter().enumerate() {
        let label = format!("{}: {}/s", short(l), format_number(l.rate_items_per_s));
        legend.push(item(label, color(&l.case, i), Stroke::Solid, super::kit::Mark::None));
    }
    for (i, l) in loads.iter().enumerate() {
        if shows_hot_partition(l) {
            let label = format!("busiest partition of the {}", short(l));
            let it = item(label, color(&l.case, i), Stroke::Dashed, super::kit::Mark::None);
            legend.push(if legend.len() == loads.len() { it.on_new_row() } else { it });
        }
    }

    canvas(&title, &sub, &legend, |area, top, bottom| {
        let tick = Txt::new(LABEL_SIZE);
        let left = y.widest_tick(tick);
        let p = plot_rect(top, bottom, left, x, y);
        draw_axes(area, &p, "seconds since the load started (s)", "items written per second")?;
        if let Some(b) = table_bound {
            let (_, yy) = p.px(0.0, b);
            dashed(area, vec![(p.l, yy), (p.r, yy)], MUTED, 1)?;
            let label = format!("a new on-demand table: {} WRU/s", format_number(b));
            Txt::new(LABEL_SIZE).color(MUTED).anchor(HPos::Right, VPos::Bottom).draw(
                area,
                &label,
                (p.r - 6, yy - 4),
            )?;
        }
        if max_hot > 0.0 {
            // Where the dashed lines settle: one partition's maximum, said
            // under them where no line passes (right, middle, then left).
            let (_, yy) = p.px(0.0, 1_000.0);
            let label = "one partition's maximum: 1,000 WCU/s";
            let txt = Txt::new(LABEL_SIZE).color(MUTED);
            let (w, h) = (txt.width(label), txt.height());
            let mut series: Vec<Vec<(i32, i32)>> = loads
                .iter()
                .map(|l| l.timeline.iter().map(|t| p.px(t.second as f64, t.items as f64)).collect())
                .collect();
            series.extend(loads.iter().filter(|l| shows_hot_partition(l)).map(|l| {
                l.timeline
                    .iter()
                    .filter_map(|t| Some(p.px(t.second as f64, t.gsi_hottest_partition_units?)))
                    .collect::<Vec<_>>()
            }));
            let spots = [p.r - 30 - w, (p.l + p.r - w) / 2, p.l + 8];
            let free = |x0: &i32| !series.iter().any(|s| crosses(s, (x0 - 4, yy + 3), (x0 + w + 4, yy + 9 + h)));
            let x0 = spots.iter().copied().find(free).unwrap_or(spots[0]);
            txt.anchor(HPos::Left, VPos::Top).draw(area, label, (x0, yy + 6))?;
        }
        for (i, l) in loads.iter().enumerate() {
            if shows_hot_partition(l) {
                let pts: Vec<(i32, i32)> = l
                    .timeline
                    .iter()
                    .filter_map(|t| Some(p.px(t.second as f64, t.gsi_hottest_partition_units?)))
                    .collect();
                if pts.len() > 1 {
                    dashed(area, pts, color(&l.case, i), 2)?;
                }
            }
        }
        for (i, l) in loads.iter().enumerate() {
            let pts: Vec<(i32, i32)> = l.timeline.iter().map(|t| p.px(t.second as f64, t.items as f64)).collect();
            // The table without a GSI is the baseline, drawn wide and first:
            // a load that runs at its rate runs along it, and it shows around.
            let width = if l.gsi_key.is_none() { 7 } else { 3 };
            if pts.len() > 1 {
                line(area, pts, color(&l.case, i), width)?;
            }
        }
        Ok(())
    })
}
