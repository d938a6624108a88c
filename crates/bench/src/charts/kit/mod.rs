//! A small drawing kit on plotters' primitives: text measured and fitted
//! without font files, lines and marks, the legend, axes, and the canvas
//! every chart is drawn on.

pub(crate) mod axis;
pub(crate) mod legend;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;

use self::legend::{draw_legend, legend_height, LegendItem};
use super::{HEIGHT, WIDTH};

/// A drawing failure (plotters' message).
pub(crate) struct DrawErr(pub(crate) String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawErr {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawErr(e.to_string())
    }
}

pub(crate) type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;
pub(crate) type Drawn = Result<(), DrawErr>;

pub(crate) const W: i32 = WIDTH as i32;
pub(crate) const H: i32 = HEIGHT as i32;

// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
pub(crate) const BLUE: RGBColor = RGBColor(0x00, 0x72, 0xB2);
pub(crate) const ORANGE: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
pub(crate) const GREEN: RGBColor = RGBColor(0x00, 0x9E, 0x73);
pub(crate) const VERMILLION: RGBColor = RGBColor(0xD5, 0x5E, 0x00);
pub(crate) const PURPLE: RGBColor = RGBColor(0xCC, 0x79, 0xA7);
pub(crate) const SKY: RGBColor = RGBColor(0x56, 0xB4, 0xE9);
pub(crate) const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(crate) const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
pub(crate) const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
pub(crate) const GRID_MINOR: RGBColor = RGBColor(0xF0, 0xF0, 0xF0);
pub(crate) const PALETTE: [RGBColor; 6] = [BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY];

pub(crate) const OURS: RGBColor = BLUE;
pub(crate) const SEED: RGBColor = ORANGE;

/// Font sizes in plotters' units: its SVG backend writes `size / 1.24` px.
pub(crate) const TITLE_SIZE: f64 = 24.0; // 19 px
pub(crate) const SUBTITLE_SIZE: f64 = 17.0; // 14 px
pub(crate) const LABEL_SIZE: f64 = 17.0; // 14 px: ticks, legend, categories
pub(crate) const DESC_SIZE: f64 = 18.0; // 15 px: axis descriptions
pub(crate) const VALUE_SIZE: f64 = 16.0; // 13 px: values printed on bars

/// Text of one size, weight, colour and anchor.
#[derive(Clone, Copy)]
pub(crate) struct Txt {
    pub(crate) size: f64,
    bold: bool,
    color: RGBColor,
    h: HPos,
    v: VPos,
    vertical: bool,
}

impl Txt {
    pub(crate) fn new(size: f64) -> Self {
        Txt { size, bold: false, color: INK, h: HPos::Left, v: VPos::Top, vertical: false }
    }
    pub(crate) fn bold(self) -> Self {
        Txt { bold: true, ..self }
    }
    pub(crate) fn color(self, color: RGBColor) -> Self {
        Txt { color, ..self }
    }
    pub(crate) fn anchor(self, h: HPos, v: VPos) -> Self {
        Txt { h, v, ..self }
    }
    pub(crate) fn vertical(self) -> Self {
        Txt { vertical: true, ..self }
    }
    /// Estimated rendered width in pixels (sans-serif averages about 0.58 em;
    /// bold a little more), erring wide so that layout never clips.
    pub(crate) fn width(&self, s: &str) -> i32 {
        let em = self.size / 1.24;
        let per_char = if self.bold { 0.62 } else { 0.58 };
        (s.chars().count() as f64 * em * per_char).ceil() as i32
    }
    pub(crate) fn height(&self) -> i32 {
        (self.size / 1.24 * 1.2).ceil() as i32
    }
    pub(crate) fn draw(&self, area: &Area, s: &str, at: (i32, i32)) -> Drawn {
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
    pub(crate) fn draw_boxed(&self, area: &Area, s: &str, at: (i32, i32)) -> Drawn {
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
pub(crate) fn fit(txt: Txt, s: &str, max: i32, min_size: f64) -> (Txt, String) {
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
pub(crate) fn wrap2(txt: Txt, s: &str, max: i32) -> Vec<String> {
    if txt.width(s) <= max {
        return vec![s.to_string()];
    }
    let words: Vec<&str> = s.split(' ').collect();
    let mut best: Option<(i32, usize)> = None;
    for cut in 1..words.len() {
        let a = words[..cut].join(" ");
        let b = words[cut..].join(" ");
        let widest = txt.width(&a).max(txt.width(&b));
        if best.is_none_or(|(w, _)| widest < w) {
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

pub(crate) fn line(area: &Area, points: Vec<(i32, i32)>, color: RGBColor, width: u32) -> Drawn {
    area.draw(&PathElement::new(points, color.stroke_width(width)))?;
    Ok(())
}

pub(crate) fn dashed(area: &Area, points: Vec<(i32, i32)>, color: RGBColor, width: u32) -> Drawn {
    area.draw(&DashedPathElement::new(points, 9, 5, color.stroke_width(width)))?;
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Mark {
    None,
    /// Filled circle: our figures.
    Dot,
    /// Hollow triangle: the seed's figures.
    Triangle,
}

pub(crate) fn mark(area: &Area, m: Mark, at: (i32, i32), color: RGBColor) -> Drawn {
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

/// A white 800×500 SVG with title, subtitle and legend; `body` draws the
/// rest between `top` and `bottom`.
pub(crate) fn canvas(
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

/// One series of ours against the seed's, in `color`: the seed's points
/// joined by a dashed line `seed_width` wide and marked with hollow
/// triangles, ours joined by a solid line and marked with dots (drawn last,
/// so they stay on top).
pub(crate) fn ours_vs_seed(
    area: &Area,
    ours: Vec<(i32, i32)>,
    theirs: Vec<(i32, i32)>,
    color: RGBColor,
    seed_width: u32,
) -> Drawn {
    if theirs.len() > 1 {
        dashed(area, theirs.clone(), color, seed_width)?;
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_shrunk_then_cut() {
        let t = Txt::new(24.0);
        let (t2, s) = fit(t, &"x".repeat(300), 200, 14.0);
        assert!(t2.size >= 14.0);
        assert!(s.ends_with('…'));
        assert!(t2.width(&s) <= 200);
    }
}
