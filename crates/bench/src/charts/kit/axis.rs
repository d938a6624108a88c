//! Axes in plot space (linear, log10 or categories), the plot rectangle,
//! and the grid, ticks and descriptions drawn around it.

use plotters::style::text_anchor::{HPos, VPos};

use super::{fit, line, Area, Drawn, Txt, DESC_SIZE, GRID, GRID_MINOR, INK, LABEL_SIZE, MUTED, W};
use crate::format::format_number;

/// One axis in "plot space": linear values, log10 of values, or category
/// indices; ticks and minor grid lines are in plot space too.
pub(crate) struct Axis {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) log: bool,
    pub(crate) ticks: Vec<(f64, String)>,
    pub(crate) minor: Vec<f64>,
    /// Categories: no grid lines through the ticks.
    pub(crate) categorical: bool,
}

impl Axis {
    /// `lo..=hi` widened to whole steps of a "nice" size (1, 2, 2.5, 5 × 10ⁿ).
    pub(crate) fn linear(lo: f64, hi: f64, target_ticks: usize, min_step: f64) -> Axis {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        let step = nice_step(hi - lo, target_ticks).max(min_step);
        let (lo, hi) = ((lo / step).floor() * step, (hi / step).ceil() * step);
        let mut ticks = Vec::new();
        let mut k = 0;
        loop {
            let v = lo + step * k as f64;
            if v > hi + step * 1e-9 {
                break;
            }
            ticks.push((v, format_number(v)));
            k += 1;
        }
        Axis { lo, hi, log: false, ticks, minor: Vec::new(), categorical: false }
    }

    /// `min..=max` (both positive) with a margin of `pad` of the span (in
    /// decades) at each end, so that no point sits on the frame.
    pub(crate) fn log(min: f64, max: f64, pad: f64) -> Axis {
        let (lo, hi) = Axis::log_bounds(min, max);
        let span = (hi - lo).max(0.5);
        Axis::log_between(lo - pad * span, hi + pad * span)
    }

    /// log10 of `min` and `max`, made positive and ordered.
    pub(crate) fn log_bounds(min: f64, max: f64) -> (f64, f64) {
        let min = if min > 0.0 && min.is_finite() { min } else { 1.0 };
        let max = if max.is_finite() { max.max(min) } else { min };
        (min.log10(), max.log10())
    }

    /// A log axis from 10^`lo` to 10^`hi`: labels at each power of ten, and
    /// at 2× and 5× when the axis spans less than three decades.
    pub(crate) fn log_between(lo: f64, hi: f64) -> Axis {
        let eps = 1e-9;
        let mut ticks = Vec::new();
        let mut minor = Vec::new();
        let dense = hi - lo < 3.0;
        for e in (lo.floor() as i32)..=(hi.ceil() as i32) {
            let base = 10f64.powi(e);
            for m in 1..10 {
                let v = base * f64::from(m);
                let at = v.log10();
                if at < lo - eps || at > hi + eps {
                    continue;
                }
                if m == 1 || (dense && (m == 2 || m == 5)) {
                    ticks.push((at, format_number(v)));
                } else {
                    minor.push(at);
                }
            }
        }
        Axis { lo, hi, log: true, ticks, minor, categorical: false }
    }

    /// Categories at 0, 1, ... (the first at the low end of the axis).
    pub(crate) fn categories(labels: Vec<String>) -> Axis {
        let n = labels.len().max(1);
        let ticks = labels.into_iter().enumerate().map(|(i, l)| (i as f64, l)).collect();
        Axis { lo: -0.5, hi: n as f64 - 0.5, log: false, ticks, minor: Vec::new(), categorical: true }
    }

    /// Ends the axis at `hi` (dropping ticks beyond it) instead of at a whole step.
    pub(crate) fn ending_at(mut self, hi: f64) -> Axis {
        if hi > self.lo && hi < self.hi {
            self.hi = hi;
            self.ticks.retain(|t| t.0 <= hi + 1e-9);
        }
        self
    }

    /// The same ticks and grid without their labels (an axis another
    /// plot labels).
    pub(crate) fn unlabelled(mut self) -> Axis {
        for t in &mut self.ticks {
            t.1.clear();
        }
        self
    }

    /// A value in plot space (log axes clamp at their low end).
    pub(crate) fn at(&self, v: f64) -> f64 {
        if self.log {
            if v > 0.0 {
                v.log10().max(self.lo)
            } else {
                self.lo
            }
        } else {
            v
        }
    }

    pub(crate) fn widest_tick(&self, txt: Txt) -> i32 {
        self.ticks.iter().map(|(_, l)| txt.width(l)).max().unwrap_or(0)
    }
}

pub(crate) fn nice_step(span: f64, target: usize) -> f64 {
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// The plotting rectangle in pixels and its two axes.
pub(crate) struct Plot {
    pub(crate) l: i32,
    pub(crate) t: i32,
    pub(crate) r: i32,
    pub(crate) b: i32,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
}

impl Plot {
    pub(crate) fn xpx(&self, xp: f64) -> i32 {
        let f = (xp - self.x.lo) / (self.x.hi - self.x.lo);
        self.l + (f * f64::from(self.r - self.l)).round() as i32
    }
    pub(crate) fn ypx(&self, yp: f64) -> i32 {
        let f = (yp - self.y.lo) / (self.y.hi - self.y.lo);
        self.b - (f * f64::from(self.b - self.t)).round() as i32
    }
    /// Pixel of a data point (values, mapped through each axis).
    pub(crate) fn px(&self, x: f64, y: f64) -> (i32, i32) {
        (self.xpx(self.x.at(x)), self.ypx(self.y.at(y)))
    }
}

/// Room below the plot: tick labels, then the axis description.
pub(crate) const X_LABEL_AREA: i32 = 56;
pub(crate) const Y_DESC_X: i32 = 10;
pub(crate) const PLOT_RIGHT: i32 = W - 28;

/// The plot rectangle between the header and the legend, leaving room on
/// the left for `left_labels` pixels of tick labels and the y description.
pub(crate) fn plot_rect(top: i32, bottom: i32, left_labels: i32, x: Axis, y: Axis) -> Plot {
    let l = Y_DESC_X + Txt::new(DESC_SIZE).height() + 10 + left_labels + 10;
    Plot { l, t: top + 10, r: PLOT_RIGHT, b: bottom - X_LABEL_AREA, x, y }
}

/// Grid lines, axis lines, tick labels and axis descriptions.
pub(crate) fn draw_axes(area: &Area, p: &Plot, x_desc: &str, y_desc: &str) -> Drawn {
    for v in &p.y.minor {
        let y = p.ypx(*v);
        line(area, vec![(p.l, y), (p.r, y)], GRID_MINOR, 1)?;
    }
    for v in &p.x.minor {
        let x = p.xpx(*v);
        line(area, vec![(x, p.t), (x, p.b)], GRID_MINOR, 1)?;
    }
    let tick = Txt::new(LABEL_SIZE).color(MUTED);
    for (v, label) in &p.y.ticks {
        let y = p.ypx(*v);
        if !p.y.categorical {
            line(area, vec![(p.l, y), (p.r, y)], GRID, 1)?;
        }
        line(area, vec![(p.l - 5, y), (p.l, y)], MUTED, 1)?;
        if !label.is_empty() {
            tick.anchor(HPos::Right, VPos::Center).draw(area, label, (p.l - 8, y))?;
        }
    }
    for (v, label) in &p.x.ticks {
        let x = p.xpx(*v);
        if !p.x.categorical {
            line(area, vec![(x, p.t), (x, p.b)], GRID, 1)?;
        }
        line(area, vec![(x, p.b), (x, p.b + 5)], MUTED, 1)?;
        if !label.is_empty() {
            tick.anchor(HPos::Center, VPos::Top).draw(area, label, (x, p.b + 8))?;
        }
    }
    line(area, vec![(p.l, p.t), (p.l, p.b), (p.r, p.b)], INK, 1)?;
    let desc = Txt::new(DESC_SIZE);
    if !x_desc.is_empty() {
        let (dx, x_desc) = fit(desc, x_desc, p.r - p.l, 14.0);
        dx.anchor(HPos::Center, VPos::Bottom).draw(area, &x_desc, ((p.l + p.r) / 2, p.b + X_LABEL_AREA - 6))?;
    }
    if !y_desc.is_empty() {
        let (dy, y_desc) = fit(desc, y_desc, p.b - p.t, 14.0);
        dy.vertical().anchor(HPos::Center, VPos::Top).draw(area, &y_desc, (Y_DESC_X, (p.t + p.b) / 2))?;
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_spans_whole_decades() {
        let a = Axis::log(0.1, 254.0, 0.06);
        assert!(a.lo < -1.0 && a.hi > 254f64.log10() && a.hi < 3.0);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0.1", "1", "10", "100"]);
        let one = Axis::log(5.0, 90.0, 0.0);
        let labels: Vec<&str> = one.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["5", "10", "20", "50"], "under three decades gets 2× and 5× labels");
        let bars = Axis::log_between(-2.0, 3.2);
        assert_eq!(bars.ticks.first().map(|t| t.1.as_str()), Some("0.01"));
    }

    #[test]
    fn linear_axis_ticks_are_nice_and_cover_the_range() {
        let a = Axis::linear(0.0, 42120.0, 6, 0.0);
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 42120.0);
        assert_eq!(a.ticks[1].1, "10,000");
    }
}
