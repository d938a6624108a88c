//! The legend under every chart: swatches and labels in centred rows.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::{dashed, line, mark, Area, Drawn, Mark, Txt, LABEL_SIZE, MUTED, PALETTE, W};

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Stroke {
    Solid,
    Dashed,
    Bar,
    /// No line: a mark alone (points that are not a series).
    None,
}

pub(crate) struct LegendItem {
    label: String,
    color: RGBColor,
    stroke: Stroke,
    mark: Mark,
    /// Starts a new legend row.
    row_break: bool,
}

pub(crate) fn item(label: impl Into<String>, color: RGBColor, stroke: Stroke, mark: Mark) -> LegendItem {
    LegendItem { label: label.into(), color, stroke, mark, row_break: false }
}

impl LegendItem {
    pub(crate) fn on_new_row(self) -> Self {
        LegendItem { row_break: true, ..self }
    }
}

const SWATCH: i32 = 34;
const LEGEND_ROW: i32 = 24;

/// Items laid out in centred rows: `(row, x offset within the row)` and the row widths.
fn legend_layout(items: &[LegendItem]) -> (Vec<(usize, i32)>, Vec<i32>) {
    let txt = Txt::new(LABEL_SIZE);
    let max_row = W - 40;
    let mut pos = Vec::new();
    let mut widths = vec![0];
    for it in items {
        let w = SWATCH + 6 + txt.width(&it.label);
        let row = widths.len() - 1;
        let gap = if widths[row] == 0 { 0 } else { 22 };
        if widths[row] > 0 && (it.row_break || widths[row] + gap + w > max_row) {
            widths.push(w);
            pos.push((row + 1, 0));
        } else {
            pos.push((row, widths[row] + gap));
            widths[row] += gap + w;
        }
    }
    (pos, widths)
}

pub(crate) fn legend_height(items: &[LegendItem]) -> i32 {
    if items.is_empty() {
        return 8;
    }
    legend_layout(items).1.len() as i32 * LEGEND_ROW + 12
}

pub(crate) fn draw_legend(area: &Area, items: &[LegendItem], top: i32) -> Drawn {
    let (pos, widths) = legend_layout(items);
    let txt = Txt::new(LABEL_SIZE).anchor(HPos::Left, VPos::Center);
    for (it, (row, off)) in items.iter().zip(pos) {
        let x = (W - widths[row]) / 2 + off;
        let y = top + 6 + row as i32 * LEGEND_ROW + LEGEND_ROW / 2;
        match it.stroke {
            Stroke::Solid => line(area, vec![(x, y), (x + SWATCH, y)], it.color, 3)?,
            Stroke::Dashed => dashed(area, vec![(x, y), (x + SWATCH, y)], it.color, 2)?,
            Stroke::None => {}
            Stroke::Bar => {
                area.draw(&Rectangle::new([(x + 4, y - 7), (x + SWATCH - 4, y + 7)], it.color.filled()))?;
            }
        }
        mark(area, it.mark, (x + SWATCH / 2, y), it.color)?;
        txt.draw(area, &it.label, (x + SWATCH + 6, y))?;
    }
    Ok(())
}

/// The legend of a chart with one colour per series, each drawn ours
/// against the seed's: the series' colours, then how ours and (when the
/// seed published any) the seed's are drawn, on a row of their own.
pub(crate) fn series_legend(series: impl IntoIterator<Item = String>, seed: &str, any_seed: bool) -> Vec<LegendItem> {
    let mut legend: Vec<LegendItem> = series
        .into_iter()
        .enumerate()
        .map(|(i, label)| item(label, PALETTE[i % PALETTE.len()], Stroke::Solid, Mark::None))
        .collect();
    legend.push(item("ours", MUTED, Stroke::Solid, Mark::Dot).on_new_row());
    if any_seed {
        legend.push(item(format!("seed {seed}"), MUTED, Stroke::Dashed, Mark::Triangle));
    }
    legend
}
