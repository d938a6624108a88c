//! Seed 001: documents written per ms against writers, one line per
//! document size, ours against the seed's.

use super::kit::axis::{draw_axes, plot_rect, Axis};
use super::kit::legend::{item, series_legend, Stroke};
use super::kit::{canvas, mark, ours_vs_seed, DrawErr, Mark, Txt, LABEL_SIZE, PALETTE};
use super::plan::doc_size_points;
use crate::format::format_number;
use crate::results::{DocSize, Scenario};

pub(super) fn doc_size_chart(s: &Scenario<DocSize>) -> Result<String, DrawErr> {
    let seed = &s.seed_id;
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

    let title = format!("Seed {seed}: {}", s.title);
    let subtitle = if any_seed {
        format!("Documents written per ms against writers, one colour per document size: ours (● joined) vs seed {seed}'s single runs (△)")
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
    let mut legend = series_legend(fields.iter().map(|f| field_label(*f)), seed, false);
    if any_seed {
        legend.push(item(format!("seed {seed}, one run each"), super::kit::MUTED, Stroke::None, Mark::Triangle));
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
            // Ours is a series (one run per writer count); the seed's
            // points are separate runs of separate sizes: marks, unjoined.
            ours_vs_seed(area, ours, Vec::new(), color, 1)?;
            for pt in theirs {
                mark(area, Mark::Triangle, pt, color)?;
            }
        }
        Ok(())
    })
}
