//! The `time` namespace's deterministic half: Unix milliseconds to RFC 3339 UTC text and back,
//! over the proleptic Gregorian calendar for years 0000–9999 (no leap seconds).

use crate::diag::codes;
use crate::value::{Value, ValueError};

use super::args::Args;

const MILLIS_PER_DAY: i64 = 86_400_000;
/// 0000-01-01T00:00:00.000Z.
const FIRST_MILLIS: i64 = -62_167_219_200_000;
/// 9999-12-31T23:59:59.999Z.
const LAST_MILLIS: i64 = 253_402_300_799_999;

/// Days since 1970-01-01 of a civil date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The civil date of days since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `time.format(millis)`: `YYYY-MM-DDTHH:MM:SS.sssZ`.
pub(super) fn format(args: Args<'_>) -> Result<Value, ValueError> {
    let millis = args.integer(0)?;
    if !(FIRST_MILLIS..=LAST_MILLIS).contains(&millis) {
        return Err(args.invalid(format!(
            "{millis} is outside the years 0000 to 9999 ({FIRST_MILLIS} to {LAST_MILLIS})"
        )));
    }
    let (days, in_day) = (millis.div_euclid(MILLIS_PER_DAY), millis.rem_euclid(MILLIS_PER_DAY));
    let (year, month, day) = civil_from_days(days);
    let (hour, minute) = (in_day / 3_600_000, in_day / 60_000 % 60);
    let (second, milli) = (in_day / 1000 % 60, in_day % 1000);
    Ok(Value::from(format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{milli:03}Z")))
}

/// A cursor over RFC 3339 text.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    /// Exactly `count` ASCII digits as a number.
    fn digits(&mut self, count: usize) -> Option<i64> {
        let slice = self.bytes.get(self.at..self.at + count)?;
        if !slice.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.at += count;
        Some(slice.iter().fold(0, |n, b| n * 10 + i64::from(b - b'0')))
    }

    fn expect(&mut self, allowed: &[u8]) -> Option<u8> {
        let byte = *self.bytes.get(self.at).filter(|b| allowed.contains(b))?;
        self.at += 1;
        Some(byte)
    }

    fn ranged(&mut self, count: usize, range: std::ops::RangeInclusive<i64>) -> Option<i64> {
        self.digits(count).filter(|n| range.contains(n))
    }
}

/// Reads `YYYY-MM-DD(T|t| )HH:MM:SS(.fraction)?(Z|z|±HH:MM)` into Unix milliseconds; digits
/// beyond milliseconds are dropped (rounding toward the earlier instant).
fn read(text: &str) -> Option<i64> {
    let mut r = Reader { bytes: text.as_bytes(), at: 0 };
    let year = r.digits(4)?;
    r.expect(b"-")?;
    let month = r.ranged(2, 1..=12)?;
    r.expect(b"-")?;
    let day = r.ranged(2, 1..=days_in_month(year, month))?;
    r.expect(b"Tt ")?;
    let hour = r.ranged(2, 0..=23)?;
    r.expect(b":")?;
    let minute = r.ranged(2, 0..=59)?;
    r.expect(b":")?;
    let second = r.ranged(2, 0..=59)?;
    let mut milli = 0;
    if r.expect(b".").is_some() {
        let start = r.at;
        while r.bytes.get(r.at).is_some_and(u8::is_ascii_digit) {
            r.at += 1;
        }
        let fraction = &r.bytes[start..r.at];
        if fraction.is_empty() {
            return None;
        }
        milli = (0..3).fold(0, |n, i| n * 10 + fraction.get(i).map_or(0, |b| i64::from(b - b'0')));
    }
    let offset = match r.expect(b"Zz+-")? {
        b'Z' | b'z' => 0,
        sign => {
            let hours = r.ranged(2, 0..=23)?;
            r.expect(b":")?;
            let minutes = r.ranged(2, 0..=59)?;
            let magnitude = (hours * 60 + minutes) * 60_000;
            if sign == b'-' { -magnitude } else { magnitude }
        }
    };
    if r.at != r.bytes.len() {
        return None;
    }
    let local = days_from_civil(year, month, day) * MILLIS_PER_DAY
        + ((hour * 60 + minute) * 60 + second) * 1000
        + milli;
    Some(local - offset)
}

/// `time.parse(text)`: RFC 3339 date-time to Unix milliseconds; anything else is `RL5404`.
pub(super) fn parse(args: Args<'_>) -> Result<Value, ValueError> {
    let text = args.text(0)?;
    read(text).map(Value::Int).ok_or_else(|| {
        ValueError::new(
            codes::INVALID_TIME_TEXT,
            format!("`time.parse` cannot read {text:?}: it is not an RFC 3339 date-time such as 2026-01-31T09:30:00Z"),
        )
        .with_detail("text", text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_round_trip_across_the_supported_years() {
        for days in (days_from_civil(0, 1, 1)..=days_from_civil(9999, 12, 31)).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(0, 1, 1) * MILLIS_PER_DAY, FIRST_MILLIS);
        assert_eq!((days_from_civil(9999, 12, 31) + 1) * MILLIS_PER_DAY - 1, LAST_MILLIS);
    }

    #[test]
    fn reads_offsets_fractions_and_rejects_impossible_dates() {
        assert_eq!(read("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(read("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(read("1969-12-31t23:59:59.9999z"), Some(-1));
        assert_eq!(read("2024-02-29 12:00:00.5-00:30"), Some(1_709_209_800_500));
        for bad in [
            "2023-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:00:60Z",
            "2024-01-01",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00Z ",
            "２０２４-01-01T00:00:00Z",
        ] {
            assert_eq!(read(bad), None, "{bad}");
        }
    }
}
