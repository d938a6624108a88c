//! `dynaburst load --simulate`'s chart: write units consumed and throttled
//! per second of the simulated load, with the table's write ceiling.

use super::kit::axis::{draw_axes, plot_rect, Axis};
use super::kit::legend::{item, Stroke};
use super::kit::{canvas, dashed, line, Mark, Txt, BLUE, INK, LABEL_SIZE, VERMILLION};
use super::ChartError;

/// One simulated second: `(second, consumed units, throttled units,
/// write ceiling)`.
pub type SimulatedSecond = (f64, f64, f64, f64);

/// The SVG of a simulated load's seconds. `title` names the load,
/// `subtitle` its predicted figures.
pub fn simulation_svg(title: &str, subtitle: &str, seconds: &[SimulatedSecond]) -> Result<String, ChartError> {
    let max_of = |f: fn(&SimulatedSecond) -> f64| seconds.iter().map(f).fold(0.0_f64, f64::max);
    let max_y = max_of(|s| s.1).max(max_of(|s| s.2)).max(max_of(|s| s.3)).max(1.0);
    let last = seconds.iter().map(|s| s.0).fold(0.0_f64, f64::max).max(1.0);
    let y = Axis::linear(0.0, max_y * 1.08, 6, 0.0);
    let x = Axis::linear(0.0, last, 8, 1.0).ending_at(last);
    let legend = vec![
        item("consumed write units/s", BLUE, Stroke::Solid, Mark::None),
        item("throttled write units/s", VERMILLION, Stroke::Solid, Mark::None),
        item("table write ceiling", INK, Stroke::Dashed, Mark::None),
    ];
    canvas(title, subtitle, &legend, |area, top, bottom| {
        let left = y.widest_tick(Txt::new(LABEL_SIZE));
        let p = plot_rect(top, bottom, left, x, y);
        draw_axes(area, &p, "seconds since the load started (simulated)", "write units per second")?;
        // A step line through the seconds where the ceiling changes (a
        // dashed line through every second would be dashes too short to see).
        let mut steps: Vec<(f64, f64)> = Vec::new();
        for s in seconds {
            match steps.last() {
                Some(&(_, c)) if c == s.3 => {}
                Some(&(_, c)) => steps.extend([(s.0, c), (s.0, s.3)]),
                None => steps.push((s.0, s.3)),
            }
        }
        if let Some(&(_, c)) = steps.last() {
            steps.push((last, c));
        }
        let ceiling: Vec<(i32, i32)> = steps.iter().map(|&(t, c)| p.px(t, c)).collect();
        if ceiling.len() > 1 {
            dashed(area, ceiling, INK, 2)?;
        }
        for (pick, color) in [(2usize, VERMILLION), (1, BLUE)] {
            let pts: Vec<(i32, i32)> = seconds.iter().map(|s| p.px(s.0, if pick == 1 { s.1 } else { s.2 })).collect();
            if pts.len() > 1 {
                line(area, pts, color, 2)?;
            }
        }
        Ok(())
    })
    .map_err(|e| ChartError::Draw { file: "simulation chart".to_string(), message: e.0 })
}
