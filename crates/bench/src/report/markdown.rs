//! Markdown tables and the cells in them.

use std::fmt::Write as _;

use crate::format::{format_ratio, MISSING};

pub(super) fn table_header(out: &mut String, cols: &[(&str, bool)]) {
    out.push('|');
    for (c, _) in cols {
        let _ = write!(out, " {} |", md_escape(c));
    }
    out.push_str("\n|");
    for (_, right) in cols {
        out.push_str(if *right { "---:|" } else { "---|" });
    }
    out.push('\n');
}

pub(super) fn table_row(out: &mut String, cells: &[String]) {
    out.push('|');
    for c in cells {
        let _ = write!(out, " {c} |");
    }
    out.push('\n');
}

/// Text safe in a table cell.
pub(super) fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub(super) fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A figure that may be missing, formatted by `f`.
pub(super) fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| MISSING.into())
}

/// `ours / theirs` as a ratio; "–" when either is missing or `theirs` is 0.
pub(super) fn ratio(ours: Option<f64>, theirs: Option<f64>) -> String {
    match (ours, theirs) {
        (Some(a), Some(b)) if b != 0.0 => format_ratio(a / b),
        _ => MISSING.into(),
    }
}
