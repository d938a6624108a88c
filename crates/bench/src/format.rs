//! Numbers, durations and dates for people, shared by `report.md` and the
//! charts: 1,234 · 293.38 · 0.12 · 16× · 2026-11-20 23:06:40 UTC.

/// What a figure that is missing renders as.
pub const MISSING: &str = "–";

/// A number for people: integers from 1,000 up with thousands separators
/// (`1,234`), at most two decimals from 1 to 1,000 (`293.38`, `1.9`), three
/// significant digits below 1 (`0.12`, `0.0065`). Trailing zeros are dropped.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.into();
    }
    let a = v.abs();
    let s = if a >= 999.995 {
        return format_thousands(v.round());
    } else if a >= 1.0 || a == 0.0 {
        format!("{v:.2}")
    } else {
        let digits = (-a.log10().floor()) as usize + 2;
        format!("{v:.digits$}")
    };
    trim_zeros(&s)
}

/// A whole number with thousands separators: `300,000`.
pub fn format_count(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.into();
    }
    format_thousands(v.round())
}

fn format_thousands(v: f64) -> String {
    let neg = v < 0.0;
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

fn trim_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    let t = s.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" {
        "0".into()
    } else {
        t.to_string()
    }
}

/// A ratio: `0.0065×`, `0.83×`, `12×`, `154×`.
pub fn format_ratio(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.into();
    }
    let s = if v.abs() >= 10.0 {
        format_thousands(v.round())
    } else if v == 0.0 {
        "0".into()
    } else {
        let digits = ((1.0 - v.abs().log10().floor()) as i64).max(0) as usize;
        trim_zeros(&format!("{v:.digits$}"))
    };
    format!("{s}×")
}

/// Bytes as decimal megabytes: `40 MB` (no unit when used in an "MB" column).
pub fn format_mb(bytes: f64) -> String {
    format_number(bytes / 1e6)
}

pub fn format_duration(s: f64) -> String {
    if s < 60.0 {
        return format!("{} s", format_number(s));
    }
    let whole = s.floor() as u64;
    let (h, m) = (whole / 3600, (whole % 3600) / 60);
    let rest = s - (h * 3600 + m * 60) as f64;
    let secs = trim_zeros(&format!("{rest:.1}"));
    let human = if h > 0 { format!("{h} h {m} min {secs} s") } else { format!("{m} min {secs} s") };
    format!("{} s ({human})", format_number(s))
}

/// `2026-11-21 10:13:20 UTC` from Unix milliseconds (proleptic Gregorian).
pub fn format_unix_ms(ms: i64) -> String {
    let t = dynaburst_model::time::UtcTime::from_unix_ms(ms);
    format!("{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", t.year, t.month, t.day, t.hour, t.minute, t.second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_people_write_them() {
        assert_eq!(format_number(1.9), "1.9");
        assert_eq!(format_number(293.38), "293.38");
        assert_eq!(format_number(0.12), "0.12");
        assert_eq!(format_number(0.0065), "0.0065");
        assert_eq!(format_number(12.34), "12.34");
        assert_eq!(format_number(254.0), "254");
        assert_eq!(format_number(1002.0), "1,002");
        assert_eq!(format_number(300000.0), "300,000");
        assert_eq!(format_number(0.0), "0");
        assert_eq!(format_number(-1234.0), "-1,234");
        assert_eq!(format_number(f64::NAN), "–");
        assert_eq!(format_count(1234567.0), "1,234,567");
        assert_eq!(format_count(999.0), "999");
        assert_eq!(format_ratio(1.9 / 293.38), "0.0065×");
        assert_eq!(format_ratio(619.0 / 38.0), "16×");
        assert_eq!(format_ratio(0.834), "0.83×");
        assert_eq!(format_ratio(1.0), "1×");
    }

    #[test]
    fn dates_and_durations() {
        assert_eq!(format_unix_ms(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_unix_ms(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(format_unix_ms(1_795_216_000_000), "2026-11-20 23:06:40 UTC");
        assert_eq!(format_duration(12.5), "12.5 s");
        assert_eq!(format_duration(312.5), "312.5 s (5 min 12.5 s)");
        assert_eq!(format_duration(3725.0), "3,725 s (1 h 2 min 5 s)");
    }
}
