//! SVG charts of a `results.json`, one per figure worth comparing with a seed.
//!
//! | scenario            | file                          | what it shows                                      |
//! |---------------------|-------------------------------|----------------------------------------------------|
//! | `partition-keys`    | `partition-keys-<case>.svg`   | consumed vs throttled write units per second, with the seed's rate (seed 004, figures 3, 5, 6, 7) |
//! | `latency`           | `latency.svg`                 | percentiles per write API, ours vs the seed's, log ms |
//! | `doc-size`          | `doc-size.svg`                | documents per ms against writers, per document size |
//! | `write-apis`        | `write-apis.svg`              | wall seconds per API, ours vs the seed's, log scale |
//! | `parallel-patterns` | `parallel-patterns.svg`       | mean ms per loader pattern, ours vs the seed's, log scale |
//!
//! A missing scenario (or one without plottable figures) has no chart;
//! [`plan_charts`] says which charts a results file gets, and the report
//! links exactly those. Charts are 800×500, drawn with plotters' SVG backend
//! without font files: text is SVG `<text>` in the viewer's sans-serif font,
//! and every layout decision (title size, label areas, legend rows) is made
//! here from an estimate of text width, so nothing is clipped or overlaps.

use std::fmt;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;
use serde_json::Value;

use crate::report::{format_number, list, num, seed_obj, str_of};

/// Width of every chart, in pixels.
pub const WIDTH: u32 = 800;
/// Height of every chart, in pixels.
pub const HEIGHT: u32 = 500;

/// Why charts could not be written.
#[derive(Debug)]
pub enum ChartError {
    /// The output directory could not be created.
    CreateDir { path: PathBuf, source: std::io::Error },
    /// A chart file could not be written.
    Write { path: PathBuf, source: std::io::Error },
    /// plotters refused to draw (not expected with the SVG backend).
    Draw { file: String, message: String },
}

impl fmt::Display for ChartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChartError::CreateDir { path, source } => {
                write!(f, "cannot create chart directory {}: {source}", path.display())
            }
            ChartError::Write { path, source } => {
                write!(f, "cannot write chart {}: {source}", path.display())
            }
            ChartError::Draw { file, message } => write!(f, "cannot draw chart {file}: {message}"),
        }
    }
}

impl std::error::Error for ChartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ChartError::CreateDir { source, .. } | ChartError::Write { source, .. } => Some(source),
            ChartError::Draw { .. } => None,
        }
    }
}

/// One chart a results file gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChart {
    /// The scenario key in `results.json` (`"latency"`, ...).
    pub scenario: &'static str,
    /// For `partition-keys`, the load case the chart shows.
    pub case: Option<String>,
    /// File name, relative to the output directory.
    pub file: String,
    /// Alt text for the report's image link.
    pub alt: String,
}

/// Which of seed 004's figures a partition-keys load case recreates.
pub fn seed_figure(case: &str) -> Option<u32> {
    match case {
        "single-key" => Some(3),
        "sorted" => Some(5),
        "shuffled" => Some(6),
        "provisioned" => Some(7),
        _ => None,
    }
}

/// The charts `results` gets, in report order; scenarios that are missing or
/// have nothing to plot get none.
pub fn plan_charts(results: &Value) -> Vec<PlannedChart> {
    let mut out = Vec::new();
    let Some(scenarios) = results.get("scenarios").filter(|s| s.is_object()) else {
        return out;
    };
    let plan = |scenario: &'static str, file: &str, alt: String| PlannedChart {
        scenario,
        case: None,
        file: file.to_string(),
        alt,
    };
    if let Some(s) = scenarios.get("write-apis") {
        if list(s, "rows").iter().any(|r| positive(r, "wall_s") || positive(r, "seed_wall_s")) {
            out.push(plan(
                "write-apis",
                "write-apis.svg",
                format!("Wall seconds per write API, ours vs seed {}", seed_id(s, "000")),
            ));
        }
    }
    if let Some(s) = scenarios.get("doc-size") {
        if !doc_size_points(s).is_empty() {
            out.push(plan(
                "doc-size",
                "doc-size.svg",
                format!("Documents per ms against writers, ours vs seed {}", seed_id(s, "001")),
            ));
        }
    }
    if let Some(s) = scenarios.get("parallel-patterns") {
        if list(s, "patterns").iter().any(|p| positive(p, "mean_ms") || positive(p, "seed_mean_ms")) {
            out.push(plan(
                "parallel-patterns",
                "parallel-patterns.svg",
                format!("Mean ms per loader pattern, ours vs seed {}", seed_id(s, "002")),
            ));
        }
    }
    if let Some(s) = scenarios.get("latency") {
        if list(s, "rows").iter().any(|r| !latency_values(Some(r)).is_empty()) {
            out.push(plan(
                "latency",
                "latency.svg",
                format!("Latency percentiles per write API, ours vs seed {}", seed_id(s, "003")),
            ));
        }
    }
    if let Some(s) = scenarios.get("partition-keys") {
        for load in list(s, "loads") {
            let Some(case) = str_of(load, "case") else {
                continue;
            };
            if timeline(load).is_empty() {
                continue;
            }
            let fig = seed_figure(case)
                .map(|n| format!(", as in seed {}'s figure {n}", seed_id(s, "004")))
                .unwrap_or_default();
            out.push(PlannedChart {
                scenario: "partition-keys",
                case: Some(case.to_string()),
                file: format!("partition-keys-{}.svg", file_safe(case)),
                alt: format!("Consumed vs throttled write units per second, {case}{fig}"),
            });
        }
    }
    out
}

/// Renders one planned chart to SVG text.
pub fn render_chart(results: &Value, chart: &PlannedChart) -> Result<String, ChartError> {
    let empty = Value::Null;
    let s = results.get("scenarios").and_then(|s| s.get(chart.scenario)).unwrap_or(&empty);
    let drawn = match chart.scenario {
        "write-apis" => write_apis_chart(s),
        "doc-size" => doc_size_chart(s),
        "parallel-patterns" => patterns_chart(s),
        "latency" => latency_chart(s),
        "partition-keys" => {
            let case = chart.case.as_deref().unwrap_or("");
            match list(s, "loads").iter().find(|l| str_of(l, "case") == Some(case)) {
                Some(load) => partition_chart(s, load),
                None => Err(DrawErr(format!("no partition-keys load {case:?}"))),
            }
        }
        other => Err(DrawErr(format!("no chart for scenario {other:?}"))),
    };
    drawn.map_err(|DrawErr(message)| ChartError::Draw { file: chart.file.clone(), message })
}

/// Writes every chart `results` gets into `dir` (created if missing) and
/// returns their paths, in report order.
pub fn write_charts(results: &Value, dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    let planned = plan_charts(results);
    if !planned.is_empty() {
        std::fs::create_dir_all(dir).map_err(|source| ChartError::CreateDir { path: dir.to_path_buf(), source })?;
    }
    let mut written = Vec::with_capacity(planned.len());
    for chart in &planned {
        let svg = render_chart(results, chart)?;
        let path = dir.join(&chart.file);
        std::fs::write(&path, svg).map_err(|source| ChartError::Write { path: path.clone(), source })?;
        written.push(path);
    }
    Ok(written)
}

// ============================================================== data access

fn positive(v: &Value, key: &str) -> bool {
    num(v, key).is_some_and(|x| x > 0.0)
}

fn seed_id<'a>(s: &'a Value, default: &'a str) -> &'a str {
    str_of(s, "seed_id").unwrap_or(default)
}

/// A case name as a file-name part: letters, digits, `-` and `_` only.
fn file_safe(case: &str) -> String {
    let s: String =
        case.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    if s.is_empty() {
        "case".into()
    } else {
        s
    }
}

/// One timeline entry: `(second, consumed, throttled)`.
type Second = (f64, Option<f64>, Option<f64>);

/// `(percentile index, ms)` pairs.
type Percentiles = Vec<(usize, f64)>;

/// Each timeline entry that has a second.
fn timeline(load: &Value) -> Vec<Second> {
    list(load, "timeline")
        .iter()
        .filter_map(|t| Some((num(t, "second")?, num(t, "consumed"), num(t, "throttled"))))
        .collect()
}

const PERCENTILE_KEYS: [(&str, &str); 6] =
    [("min_ms", "min"), ("p50_ms", "p50"), ("p90_ms", "p90"), ("p95_ms", "p95"), ("p99_ms", "p99"), ("max_ms", "max")];

/// `(percentile index, ms)` for each positive percentile present.
fn latency_values(v: Option<&Value>) -> Percentiles {
    let Some(v) = v else { return Vec::new() };
    PERCENTILE_KEYS
        .iter()
        .enumerate()
        .filter_map(|(i, (k, _))| num(v, k).filter(|x| *x > 0.0).map(|x| (i, x)))
        .collect()
}

/// `(fields, writers, ours docs/ms, seed docs/ms)` for each row with fields and writers.
fn doc_size_points(s: &Value) -> Vec<(f64, f64, Option<f64>, Option<f64>)> {
    list(s, "rows")
        .iter()
        .filter_map(|r| {
            let fields = num(r, "fields")?;
            let writers = num(r, "writers").filter(|w| *w > 0.0)?;
            let ours = num(r, "docs_per_ms");
            let theirs = seed_obj(r).and_then(|x| num(x, "docs_per_ms"));
            (ours.is_some() || theirs.is_some()).then_some((fields, writers, ours, theirs))
        })
        .collect()
}

// ============================================================ drawing kit

struct DrawErr(String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawErr {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawErr(e.to_string())
    }
}

type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;
type Drawn = Result<(), DrawErr>;

const W: i32 = WIDTH as i32;
const H: i32 = HEIGHT as i32;

// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
const BLUE: RGBColor = RGBColor(0x00, 0x72, 0xB2);
const ORANGE: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
const GREEN: RGBColor = RGBColor(0x00, 0x9E, 0x73);
const VERMILLION: RGBColor = RGBColor(0xD5, 0x5E, 0x00);
const PURPLE: RGBColor = RGBColor(0xCC, 0x79, 0xA7);
const SKY: RGBColor = RGBColor(0x56, 0xB4, 0xE9);
const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
const GRID_MINOR: RGBColor = RGBColor(0xF0, 0xF0, 0xF0);
const PALETTE: [RGBColor; 6] = [BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY];

const OURS: RGBColor = BLUE;
const SEED: RGBColor = ORANGE;

/// Font sizes in plotters' units: its SVG backend writes `size / 1.24` px.
const TITLE_SIZE: f64 = 24.0; // 19 px
const SUBTITLE_SIZE: f64 = 17.0; // 14 px
const LABEL_SIZE: f64 = 17.0; // 14 px: ticks, legend, categories
const DESC_SIZE: f64 = 18.0; // 15 px: axis descriptions
const VALUE_SIZE: f64 = 16.0; // 13 px: values printed on bars

/// Text of one size, weight, colour and anchor.
#[derive(Clone, Copy)]
struct Txt {
    size: f64,
    bold: bool,
    color: RGBColor,
    h: HPos,
    v: VPos,
    vertical: bool,
}

impl Txt {
    fn new(size: f64) -> Self {
        Txt { size, bold: false, color: INK, h: HPos::Left, v: VPos::Top, vertical: false }
    }
    fn bold(self) -> Self {
        Txt { bold: true, ..self }
    }
    fn color(self, color: RGBColor) -> Self {
        Txt { color, ..self }
    }
    fn anchor(self, h: HPos, v: VPos) -> Self {
        Txt { h, v, ..self }
    }
    fn vertical(self) -> Self {
        Txt { vertical: true, ..self }
    }
    /// Estimated rendered width in pixels (sans-serif averages about 0.58 em;
    /// bold a little more), erring wide so that layout never clips.
    fn width(&self, s: &str) -> i32 {
        let em = self.size / 1.24;
        let per_char = if self.bold { 0.62 } else { 0.58 };
        (s.chars().count() as f64 * em * per_char).ceil() as i32
    }
    fn height(&self) -> i32 {
        (self.size / 1.24 * 1.2).ceil() as i32
    }
    fn draw(&self, area: &Area, s: &str, at: (i32, i32)) -> Drawn {
        let style = if self.bold { FontStyle::Bold } else { FontStyle::Normal };
        let mut font = FontDesc::new(FontFamily::SansSerif, self.size, style);
        if self.vertical {
            font = font.transform(FontTransform::Rotate270);
        }
        let text_style = TextStyle::from(font).color(&self.color).pos(Pos::new(self.h, self.v));
        area.draw(&Text::new(s.to_string(), at, text_style))?;
        Ok(())
    }
    /// Draws on a white box so that lines behind stay out of the way.
    fn draw_boxed(&self, area: &Area, s: &str, at: (i32, i32)) -> Drawn {
        let w = self.width(s);
        let h = self.height();
        let x0 = match self.h {
            HPos::Left => at.0,
            HPos::Center => at.0 - w / 2,
            HPos::Right => at.0 - w,
        };
        let y0 = match self.v {
            VPos::Top => at.1,
            VPos::Center => at.1 - h / 2,
            VPos::Bottom => at.1 - h,
        };
        area.draw(&Rectangle::new([(x0 - 3, y0 - 1), (x0 + w + 3, y0 + h + 1)], WHITE.mix(0.85).filled()))?;
        self.draw(area, s, at)
    }
}

/// Shrinks `s` to fit `max` pixels: smaller type first, then an ellipsis.
fn fit(txt: Txt, s: &str, max: i32, min_size: f64) -> (Txt, String) {
    let mut t = txt;
    while t.width(s) > max && t.size > min_size {
        t.size -= 1.0;
    }
    if t.width(s) <= max {
        return (t, s.to_string());
    }
    let mut cut: String = s.to_string();
    while !cut.is_empty() && t.width(&format!("{cut}…")) > max {
        cut.pop();
    }
    (t, format!("{}…", cut.trim_end()))
}

/// Splits `s` into at most two lines of at most `max` pixels each.
fn wrap2(txt: Txt, s: &str, max: i32) -> Vec<String> {
    if txt.width(s) <= max {
        return vec![s.to_string()];
    }
    let words: Vec<&str> = s.split(' ').collect();
    let mut best: Option<(i32, usize)> = None;
    for cut in 1..words.len() {
        let a = words[..cut].join(" ");
        let b = words[cut..].join(" ");
        let widest = txt.width(&a).max(txt.width(&b));
        if best.map_or(true, |(w, _)| widest < w) {
            best = Some((widest, cut));
        }
    }
    match best {
        Some((_, cut)) => {
            let a = words[..cut].join(" ");
            let b = words[cut..].join(" ");
            vec![fit(txt, &a, max, txt.size).1, fit(txt, &b, max, txt.size).1]
        }
        None => vec![fit(txt, s, max, txt.size).1],
    }
}

fn line(area: &Area, points: Vec<(i32, i32)>, color: RGBColor, width: u32) -> Drawn {
    area.draw(&PathElement::new(points, color.stroke_width(width)))?;
    Ok(())
}

fn dashed(area: &Area, points: Vec<(i32, i32)>, color: RGBColor, width: u32) -> Drawn {
    area.draw(&DashedPathElement::new(points, 9, 5, color.stroke_width(width)))?;
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Mark {
    None,
    /// Filled circle: our figures.
    Dot,
    /// Hollow triangle: the seed's figures.
    Triangle,
}

fn mark(area: &Area, m: Mark, at: (i32, i32), color: RGBColor) -> Drawn {
    match m {
        Mark::None => {}
        Mark::Dot => {
            area.draw(&Circle::new(at, 4, color.filled()))?;
        }
        Mark::Triangle => {
            // plotters' TriangleMarker is always filled; the seed's marks are hollow.
            let (x, y) = at;
            let corners = vec![(x, y - 7), (x - 6, y + 4), (x + 6, y + 4)];
            area.draw(&Polygon::new(corners.clone(), WHITE.filled()))?;
            let mut outline = corners;
            outline.push(outline[0]);
            area.draw(&PathElement::new(outline, color.stroke_width(2)))?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- legend

#[derive(Clone, Copy, PartialEq)]
enum Stroke {
    Solid,
    Dashed,
    Bar,
}

struct LegendItem {
    label: String,
    color: RGBColor,
    stroke: Stroke,
    mark: Mark,
    /// Starts a new legend row.
    row_break: bool,
}

fn item(label: impl Into<String>, color: RGBColor, stroke: Stroke, mark: Mark) -> LegendItem {
    LegendItem { label: label.into(), color, stroke, mark, row_break: false }
}

impl LegendItem {
    fn on_new_row(self) -> Self {
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

fn legend_height(items: &[LegendItem]) -> i32 {
    if items.is_empty() {
        return 8;
    }
    legend_layout(items).1.len() as i32 * LEGEND_ROW + 12
}

fn draw_legend(area: &Area, items: &[LegendItem], top: i32) -> Drawn {
    let (pos, widths) = legend_layout(items);
    let txt = Txt::new(LABEL_SIZE).anchor(HPos::Left, VPos::Center);
    for (it, (row, off)) in items.iter().zip(pos) {
        let x = (W - widths[row]) / 2 + off;
        let y = top + 6 + row as i32 * LEGEND_ROW + LEGEND_ROW / 2;
        match it.stroke {
            Stroke::Solid => line(area, vec![(x, y), (x + SWATCH, y)], it.color, 3)?,
            Stroke::Dashed => dashed(area, vec![(x, y), (x + SWATCH, y)], it.color, 2)?,
            Stroke::Bar => {
                area.draw(&Rectangle::new([(x + 4, y - 7), (x + SWATCH - 4, y + 7)], it.color.filled()))?;
            }
        }
        mark(area, it.mark, (x + SWATCH / 2, y), it.color)?;
        txt.draw(area, &it.label, (x + SWATCH + 6, y))?;
    }
    Ok(())
}

// ---------------------------------------------------------------- axes

/// One axis in "plot space": linear values, log10 of values, or category
/// indices; ticks and minor grid lines are in plot space too.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<(f64, String)>,
    minor: Vec<f64>,
    /// Categories: no grid lines through the ticks.
    categorical: bool,
}

impl Axis {
    /// `lo..=hi` widened to whole steps of a "nice" size (1, 2, 2.5, 5 × 10ⁿ).
    fn linear(lo: f64, hi: f64, target_ticks: usize, min_step: f64) -> Axis {
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
    fn log(min: f64, max: f64, pad: f64) -> Axis {
        let (lo, hi) = Axis::log_bounds(min, max);
        let span = (hi - lo).max(0.5);
        Axis::log_between(lo - pad * span, hi + pad * span)
    }

    /// log10 of `min` and `max`, made positive and ordered.
    fn log_bounds(min: f64, max: f64) -> (f64, f64) {
        let min = if min > 0.0 && min.is_finite() { min } else { 1.0 };
        let max = if max.is_finite() { max.max(min) } else { min };
        (min.log10(), max.log10())
    }

    /// A log axis from 10^`lo` to 10^`hi`: labels at each power of ten, and
    /// at 2× and 5× when the axis spans less than three decades.
    fn log_between(lo: f64, hi: f64) -> Axis {
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
    fn categories(labels: Vec<String>) -> Axis {
        let n = labels.len().max(1);
        let ticks = labels.into_iter().enumerate().map(|(i, l)| (i as f64, l)).collect();
        Axis { lo: -0.5, hi: n as f64 - 0.5, log: false, ticks, minor: Vec::new(), categorical: true }
    }

    /// Ends the axis at `hi` (dropping ticks beyond it) instead of at a whole step.
    fn ending_at(mut self, hi: f64) -> Axis {
        if hi > self.lo && hi < self.hi {
            self.hi = hi;
            self.ticks.retain(|t| t.0 <= hi + 1e-9);
        }
        self
    }

    /// A value in plot space (log axes clamp at their low end).
    fn at(&self, v: f64) -> f64 {
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

    fn widest_tick(&self, txt: Txt) -> i32 {
        self.ticks.iter().map(|(_, l)| txt.width(l)).max().unwrap_or(0)
    }
}

fn nice_step(span: f64, target: usize) -> f64 {
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
struct Plot {
    l: i32,
    t: i32,
    r: i32,
    b: i32,
    x: Axis,
    y: Axis,
}

impl Plot {
    fn xpx(&self, xp: f64) -> i32 {
        let f = (xp - self.x.lo) / (self.x.hi - self.x.lo);
        self.l + (f * f64::from(self.r - self.l)).round() as i32
    }
    fn ypx(&self, yp: f64) -> i32 {
        let f = (yp - self.y.lo) / (self.y.hi - self.y.lo);
        self.b - (f * f64::from(self.b - self.t)).round() as i32
    }
    /// Pixel of a data point (values, mapped through each axis).
    fn px(&self, x: f64, y: f64) -> (i32, i32) {
        (self.xpx(self.x.at(x)), self.ypx(self.y.at(y)))
    }
}

/// Room below the plot: tick labels, then the axis description.
const X_LABEL_AREA: i32 = 56;
const Y_DESC_X: i32 = 10;
const PLOT_RIGHT: i32 = W - 28;

/// The plot rectangle between the header and the legend, leaving room on
/// the left for `left_labels` pixels of tick labels and the y description.
fn plot_rect(top: i32, bottom: i32, left_labels: i32, x: Axis, y: Axis) -> Plot {
    let l = Y_DESC_X + Txt::new(DESC_SIZE).height() + 10 + left_labels + 10;
    Plot { l, t: top + 10, r: PLOT_RIGHT, b: bottom - X_LABEL_AREA, x, y }
}

/// Grid lines, axis lines, tick labels and axis descriptions.
fn draw_axes(area: &Area, p: &Plot, x_desc: &str, y_desc: &str) -> Drawn {
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
        tick.anchor(HPos::Center, VPos::Top).draw(area, label, (x, p.b + 8))?;
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

/// A white 800×500 SVG with title, subtitle and legend; `body` draws the
/// rest between `top` and `bottom`.
fn canvas(
    title: &str,
    subtitle: &str,
    legend: &[LegendItem],
    body: impl FnOnce(&Area, i32, i32) -> Drawn,
) -> Result<String, DrawErr> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let (tt, title) = fit(Txt::new(TITLE_SIZE).bold(), title, W - 32, 19.0);
        tt.anchor(HPos::Left, VPos::Top).draw(&root, &title, (16, 12))?;
        let mut top = 12 + tt.height();
        if !subtitle.is_empty() {
            let (st, subtitle) = fit(Txt::new(SUBTITLE_SIZE).color(MUTED), subtitle, W - 32, 14.0);
            st.anchor(HPos::Left, VPos::Top).draw(&root, &subtitle, (16, top + 4))?;
            top += 4 + st.height();
        }
        let bottom = H - legend_height(legend);
        draw_legend(&root, legend, bottom)?;
        body(&root, top + 4, bottom)?;
        root.present()?;
    }
    Ok(buf)
}

// ========================================================= partition-keys

fn partition_chart(s: &Value, load: &Value) -> Result<String, DrawErr> {
    let seed = seed_id(s, "004");
    let case = str_of(load, "case").unwrap_or("");
    let points = timeline(load);
    let seed_rate = num(load, "seed_rate").filter(|r| *r > 0.0);
    let max_of = |f: fn(&Second) -> Option<f64>| points.iter().filter_map(f).fold(0.0_f64, f64::max);
    let max_consumed = max_of(|p| p.1);
    let max_throttled = max_of(|p| p.2);
    let max_y = max_consumed.max(max_throttled).max(seed_rate.unwrap_or(0.0));
    let last_second = points.iter().map(|p| p.0).fold(0.0_f64, f64::max).max(1.0);

    // Throttled requests can outnumber consumed units forty to one (every
    // retry counts); on a linear axis the consumed line, the one to compare
    // with the seed, would then be a few pixels above zero.
    let log = max_consumed > 0.0 && max_throttled > 8.0 * max_consumed;
    let y = if log {
        let min_pos = points
            .iter()
            .flat_map(|p| [p.1, p.2])
            .flatten()
            .chain(seed_rate)
            .filter(|v| *v > 0.0)
            .fold(f64::MAX, f64::min);
        Axis::log(min_pos.max(1.0), max_y, 0.06)
    } else {
        Axis::linear(0.0, max_y * 1.08, 6, 0.0)
    };
    let x = Axis::linear(0.0, last_second, 8, 1.0).ending_at(last_second);

    let title = match seed_figure(case) {
        Some(n) => format!("Seed {seed}, figure {n}: {}", str_of(load, "label").unwrap_or(case)),
        None => format!("Seed {seed}: {}", str_of(load, "label").unwrap_or(case)),
    };
    let mut sub = vec!["Write units per second, consumed vs throttled".to_string()];
    if let Some(rate) = num(load, "rate_units_per_s") {
        let over = num(load, "seconds").map(|s| format!(" over {} s", format_number(s))).unwrap_or_default();
        let how = match load.get("modelled").and_then(Value::as_bool) {
            Some(true) => " (modelled)",
            Some(false) => " (measured)",
            None => "",
        };
        sub.push(format!("ours {}/s{over}{how}", format_number(rate)));
    }
    if let Some(r) = seed_rate {
        sub.push(format!("seed {}/s", format_number(r)));
    }
    let seed_label = seed_rate.map(|r| format!("seed {seed}: {}/s", format_number(r)));
    let mut legend = vec![
        item("consumed write units/s", BLUE, Stroke::Solid, Mark::None),
        item("throttled write units/s", VERMILLION, Stroke::Solid, Mark::None),
    ];
    if let Some(l) = &seed_label {
        legend.push(item(format!("{l} (published rate)"), INK, Stroke::Dashed, Mark::None));
    }
    let y_desc = if log { "write units per second (log scale)" } else { "write units per second" };

    canvas(&title, &sub.join(" · "), &legend, |area, top, bottom| {
        let tick = Txt::new(LABEL_SIZE);
        let left = y.widest_tick(tick);
        let p = plot_rect(top, bottom, left, x, y);
        draw_axes(area, &p, "seconds since the load started (s)", y_desc)?;
        let few = points.len() <= 30;
        for (pick, color) in [(2usize, VERMILLION), (1, BLUE)] {
            let pts: Vec<(i32, i32)> = points
                .iter()
                .filter_map(|t| {
                    let v = if pick == 1 { t.1 } else { t.2 }?;
                    Some(p.px(t.0, v))
                })
                .collect();
            if pts.len() > 1 {
                line(area, pts.clone(), color, 2)?;
            }
            if few {
                for pt in pts {
                    mark(area, Mark::Dot, pt, color)?;
                }
            }
        }
        if let (Some(rate), Some(label)) = (seed_rate, &seed_label) {
            let (_, yy) = p.px(0.0, rate);
            dashed(area, vec![(p.l, yy), (p.r, yy)], INK, 2)?;
            let txt = Txt::new(LABEL_SIZE).bold();
            let series: Vec<Vec<(i32, i32)>> = [1usize, 2]
                .iter()
                .map(|&pick| {
                    points.iter().filter_map(|t| Some(p.px(t.0, if pick == 1 { t.1 } else { t.2 }?))).collect()
                })
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

/// Whether a polyline passes through the rectangle `a`–`b` (corners).
fn crosses(line: &[(i32, i32)], a: (i32, i32), b: (i32, i32)) -> bool {
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

// ================================================================ latency

fn latency_chart(s: &Value) -> Result<String, DrawErr> {
    let seed = seed_id(s, "003");
    let rows: Vec<(&str, Percentiles, Percentiles)> = list(s, "rows")
        .iter()
        .map(|r| (str_of(r, "operation").unwrap_or("?"), latency_values(Some(r)), latency_values(seed_obj(r))))
        .filter(|(_, o, t)| !o.is_empty() || !t.is_empty())
        .collect();
    let all = rows.iter().flat_map(|(_, o, t)| o.iter().chain(t).map(|p| p.1));
    let (min, max) = all.fold((f64::MAX, 0.0_f64), |(a, b), v| (a.min(v), b.max(v)));
    let y = Axis::log(min, max, 0.06);
    let x = Axis::categories(PERCENTILE_KEYS.iter().map(|(_, l)| l.to_string()).collect());
    let any_seed = rows.iter().any(|r| !r.2.is_empty());

    let title = format!("Seed {seed}: {}", str_of(s, "title").unwrap_or("Latency of each write API"));
    let subtitle = if any_seed {
        format!("Latency percentiles per operation: ours (solid, ●) vs seed {seed} (dashed, △), log scale")
    } else {
        "Latency percentiles per operation, log scale".to_string()
    };
    let mut legend: Vec<LegendItem> = rows
        .iter()
        .enumerate()
        .map(|(i, (op, _, _))| item(*op, PALETTE[i % PALETTE.len()], Stroke::Solid, Mark::None))
        .collect();
    legend.push(item("ours", MUTED, Stroke::Solid, Mark::Dot).on_new_row());
    if any_seed {
        legend.push(item(format!("seed {seed}"), MUTED, Stroke::Dashed, Mark::Triangle));
    }

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
            let to_px =
                |pts: &Percentiles| -> Vec<(i32, i32)> { pts.iter().map(|(k, v)| p.px(*k as f64 + dx, *v)).collect() };
            let (o, t) = (to_px(ours), to_px(theirs));
            if t.len() > 1 {
                dashed(area, t.clone(), color, 2)?;
            }
            if o.len() > 1 {
                line(area, o.clone(), color, 2)?;
            }
            for pt in t {
                mark(area, Mark::Triangle, pt, color)?;
            }
            for pt in o {
                mark(area, Mark::Dot, pt, color)?;
            }
        }
        Ok(())
    })
}

// =============================================================== doc-size

fn doc_size_chart(s: &Value) -> Result<String, DrawErr> {
    let seed = seed_id(s, "001");
    let points = doc_size_points(s);
    let mut fields: Vec<f64> = points.iter().map(|p| p.0).collect();
    fields.sort_by(f64::total_cmp);
    fields.dedup();
    let mut writers: Vec<f64> = points.iter().map(|p| p.1).collect();
    writers.sort_by(f64::total_cmp);
    writers.dedup();

    // Writers double from one run to the next: a log2 axis spaces them evenly.
    let (wmin, wmax) = (writers[0].log2(), writers[writers.len() - 1].log2());
    let pad = if wmax > wmin { 0.3 * (wmax - wmin) / (writers.len() as f64).max(2.0) + 0.15 } else { 1.0 };
    let x = Axis {
        lo: wmin - pad,
        hi: wmax + pad,
        log: false,
        ticks: writers.iter().map(|w| (w.log2(), format_number(*w))).collect(),
        minor: Vec::new(),
        categorical: false,
    };
    let max = points.iter().flat_map(|p| [p.2, p.3]).flatten().fold(0.0_f64, f64::max);
    let y = Axis::linear(0.0, max * 1.1, 6, 0.0);
    let any_seed = points.iter().any(|p| p.3.is_some());

    let title = format!("Seed {seed}: {}", str_of(s, "title").unwrap_or("Document size and writer count"));
    let subtitle = if any_seed {
        format!("Documents written per ms against writers, one colour per document size: ours (●) vs seed {seed} (△)")
    } else {
        "Documents written per ms against writers, one colour per document size".to_string()
    };
    let field_label = |f: f64| {
        if f == 1.0 {
            "1 field per document".to_string()
        } else {
            format!("{} fields per document", format_number(f))
        }
    };
    let mut legend: Vec<LegendItem> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| item(field_label(*f), PALETTE[i % PALETTE.len()], Stroke::Solid, Mark::None))
        .collect();
    legend.push(item("ours", MUTED, Stroke::Solid, Mark::Dot).on_new_row());
    if any_seed {
        legend.push(item(format!("seed {seed}"), MUTED, Stroke::Dashed, Mark::Triangle));
    }

    canvas(&title, &subtitle, &legend, |area, top, bottom| {
        let left = y.widest_tick(Txt::new(LABEL_SIZE));
        let p = plot_rect(top, bottom, left, x, y);
        draw_axes(area, &p, "concurrent writers (log₂ scale)", "documents written per millisecond")?;
        for (i, f) in fields.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let mut group: Vec<_> = points.iter().filter(|pt| pt.0 == *f).collect();
            group.sort_by(|a, b| a.1.total_cmp(&b.1));
            let ours: Vec<(i32, i32)> = group.iter().filter_map(|pt| Some(p.px(pt.1.log2(), pt.2?))).collect();
            let theirs: Vec<(i32, i32)> = group.iter().filter_map(|pt| Some(p.px(pt.1.log2(), pt.3?))).collect();
            if theirs.len() > 1 {
                dashed(area, theirs.clone(), color, 1)?;
            }
            if ours.len() > 1 {
                line(area, ours.clone(), color, 2)?;
            }
            for pt in theirs {
                mark(area, Mark::Triangle, pt, color)?;
            }
            for pt in ours {
                mark(area, Mark::Dot, pt, color)?;
            }
        }
        Ok(())
    })
}

// ======================================================= horizontal bars

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

fn write_apis_chart(s: &Value) -> Result<String, DrawErr> {
    let seed = seed_id(s, "000");
    let rows: Vec<&Value> =
        list(s, "rows").iter().filter(|r| positive(r, "wall_s") || positive(r, "seed_wall_s")).collect();
    let items: Vec<f64> = rows.iter().filter_map(|r| num(r, "items")).collect();
    let same_items = items.len() == rows.len() && items.windows(2).all(|w| w[0] == w[1]);
    let subtitle = match items.first() {
        Some(n) if same_items => {
            format!("Wall-clock seconds to write {} items, per API: ours vs seed {seed} (log scale)", format_number(*n))
        }
        _ => format!("Wall-clock seconds to write every item, per API: ours vs seed {seed} (log scale)"),
    };
    bars_chart(Bars {
        title: format!("Seed {seed}: {}", str_of(s, "title").unwrap_or("Write APIs")),
        subtitle,
        seed,
        categories: rows.iter().map(|r| str_of(r, "api").unwrap_or("?").to_string()).collect(),
        ours: rows.iter().map(|r| num(r, "wall_s")).collect(),
        theirs: rows.iter().map(|r| num(r, "seed_wall_s")).collect(),
        unit: "s",
        x_desc: "wall-clock time to write all items (s, log scale)".into(),
    })
}

fn patterns_chart(s: &Value) -> Result<String, DrawErr> {
    let seed = seed_id(s, "002");
    let rows: Vec<&Value> =
        list(s, "patterns").iter().filter(|p| positive(p, "mean_ms") || positive(p, "seed_mean_ms")).collect();
    let items: Vec<f64> = rows.iter().filter_map(|r| num(r, "items")).collect();
    let same_items = items.len() == rows.len() && items.windows(2).all(|w| w[0] == w[1]);
    let per = match items.first() {
        Some(n) if same_items => format!("of {} items", format_number(*n)),
        _ => "per trial".to_string(),
    };
    bars_chart(Bars {
        title: format!("Seed {seed}: {}", str_of(s, "title").unwrap_or("Parallel loaders")),
        subtitle: format!("Mean time per load {per}, per loader pattern: ours vs seed {seed} (log scale)"),
        seed,
        categories: rows.iter().map(|r| str_of(r, "pattern").unwrap_or("?").to_string()).collect(),
        ours: rows.iter().map(|r| num(r, "mean_ms")).collect(),
        theirs: rows.iter().map(|r| num(r, "seed_mean_ms")).collect(),
        unit: "ms",
        x_desc: format!("mean time per load {per} (ms, log scale)"),
    })
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

    #[test]
    fn polylines_crossing_boxes() {
        let line = [(0, 0), (100, 100)];
        assert!(crosses(&line, (40, 40), (60, 60)));
        assert!(!crosses(&line, (60, 0), (100, 30)));
        // A steep drop between two points far outside the box still crosses it.
        assert!(crosses(&[(50, 0), (50, 100)], (40, 40), (60, 60)));
    }

    #[test]
    fn case_names_cannot_escape_the_directory() {
        assert_eq!(file_safe("../../etc/x"), "------etc-x");
        assert_eq!(file_safe("single-key"), "single-key");
        assert_eq!(file_safe(""), "case");
    }

    #[test]
    fn long_text_is_shrunk_then_cut() {
        let t = Txt::new(24.0);
        let (t2, s) = fit(t, &"x".repeat(300), 200, 14.0);
        assert!(t2.size >= 14.0);
        assert!(s.ends_with('…'));
        assert!(t2.width(&s) <= 200);
    }
}
