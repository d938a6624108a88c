//! Calendar dates from Unix time, for labels and reports (no clock read:
//! the time is an argument).

/// A UTC date and time of day.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millisecond: u32,
}

impl UtcTime {
    /// The UTC time `ms` milliseconds after 1970-01-01T00:00:00Z
    /// (proleptic Gregorian; negative values before it).
    pub fn from_unix_ms(ms: i64) -> UtcTime {
        let secs = ms.div_euclid(1000);
        let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        UtcTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: (sod / 3600) as u32,
            minute: (sod % 3600 / 60) as u32,
            second: (sod % 60) as u32,
            millisecond: ms.rem_euclid(1000) as u32,
        }
    }

    /// ISO 8601 with milliseconds and no zone: `2015-05-20T20:44:30.252`.
    pub fn iso8601_millis(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.millisecond
        )
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// days_from_civil; the inverse of [`UtcTime::from_unix_ms`]'s date).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (m, d) = (i64::from(month), i64::from(day));
    let y = if m <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A UTC time as Java's `java.util.Date.toString` writes it in UTC:
/// `Thu May 21 00:44:30 UTC 2015`.
pub fn java_date(ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let t = UtcTime::from_unix_ms(ms);
    // 1970-01-01 was a Thursday.
    let weekday = DAYS[ms.div_euclid(86_400_000).rem_euclid(7) as usize];
    let month = MONTHS[(t.month as usize).saturating_sub(1) % 12];
    format!("{weekday} {month} {:02} {:02}:{:02}:{:02} UTC {}", t.day, t.hour, t.minute, t.second, t.year)
}

/// A UTC time as DynamoDB's decrease-limit messages write it (Java's
/// FULL date and MEDIUM time in English):
/// `Friday, October 9, 2026 at 1:21:34 AM Coordinated Universal Time`.
pub fn long_date(ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"];
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let t = UtcTime::from_unix_ms(ms);
    let weekday = DAYS[ms.div_euclid(86_400_000).rem_euclid(7) as usize];
    let month = MONTHS[(t.month as usize).saturating_sub(1) % 12];
    let (hour, half) = match t.hour {
        0 => (12, "AM"),
        h @ 1..=11 => (h, "AM"),
        12 => (12, "PM"),
        h => (h - 12, "PM"),
    };
    format!(
        "{weekday}, {month} {}, {} at {hour}:{:02}:{:02} {half} Coordinated Universal Time",
        t.day, t.year, t.minute, t.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_dates_read_as_dynamodbs_messages_write_them() {
        // The texts of ack-api-quirks DDB-TABLE-326 and -184, live 2026-10.
        let at = |d: i64, h: i64, m: i64, s: i64| ((d * 24 + h) * 60 + m) * 60_000 + s * 1000;
        let oct9 = days_from_civil(2026, 10, 9);
        assert_eq!(long_date(at(oct9, 0, 21, 34)), "Friday, October 9, 2026 at 12:21:34 AM Coordinated Universal Time");
        assert_eq!(long_date(at(oct9, 1, 21, 34)), "Friday, October 9, 2026 at 1:21:34 AM Coordinated Universal Time");
        assert_eq!(
            long_date(at(oct9 - 1, 23, 20, 48)),
            "Thursday, October 8, 2026 at 11:20:48 PM Coordinated Universal Time"
        );
        assert_eq!(long_date(at(oct9, 12, 0, 0)), "Friday, October 9, 2026 at 12:00:00 PM Coordinated Universal Time");
    }

    #[test]
    fn java_dates_name_the_weekday_and_month() {
        assert_eq!(java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(java_date(1_432_154_670_252), "Wed May 20 20:44:30 UTC 2015");
        assert_eq!(java_date(951_782_400_000), "Tue Feb 29 00:00:00 UTC 2000");
        assert_eq!(java_date(-1), "Wed Dec 31 23:59:59 UTC 1969");
    }

    #[test]
    fn dates_follow_the_gregorian_calendar() {
        let t = UtcTime::from_unix_ms(1_432_154_670_252);
        assert_eq!((t.year, t.month, t.day, t.hour, t.minute, t.second, t.millisecond), (2015, 5, 20, 20, 44, 30, 252));
        let leap = UtcTime::from_unix_ms(951_782_400_000);
        assert_eq!((leap.year, leap.month, leap.day), (2000, 2, 29));
        let before = UtcTime::from_unix_ms(-1);
        assert_eq!((before.year, before.month, before.day, before.second, before.millisecond), (1969, 12, 31, 59, 999));
        assert_eq!(t.iso8601_millis(), "2015-05-20T20:44:30.252");
    }

    #[test]
    fn days_from_civil_inverts_the_date() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        for days in [-800_000i64, -1, 0, 59, 60, 11_016, 20_000, 2_932_896] {
            let t = UtcTime::from_unix_ms(days * 86_400_000);
            assert_eq!(days_from_civil(t.year, t.month, t.day), days, "{t:?}");
        }
    }
}
