//! UTC calendar arithmetic for the usage store: event timestamps (ISO 8601, as the analytics
//! events carry them) to milliseconds and back to days, and `--since` values.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds in a UTC day.
pub const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD` of a day number (days since 1970-01-01).
pub fn civil(day: i64) -> String {
    crate::analytics::iso8601(
        UNIX_EPOCH + std::time::Duration::from_secs((day.max(0) * 86_400) as u64),
    )[..10]
        .to_owned()
}

/// `YYYY-MM-DD` to a day number; None when it is not a date.
pub fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year: i64 = s[..4].parse().ok()?;
    let month: u32 = s[5..7].parse().ok()?;
    let day: u32 = s[8..10].parse().ok()?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Milliseconds since the epoch of an event timestamp `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let day = parse_date(s.get(..10)?)?;
    let rest = s.get(10..)?.strip_prefix('T')?.strip_suffix('Z')?;
    let (hms, frac) = rest.split_once('.').unwrap_or((rest, ""));
    let mut parts = hms.split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let sec: i64 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let ms: i64 = match frac.len() {
        0 => 0,
        n if frac.bytes().all(|b| b.is_ascii_digit()) => {
            let digits = &frac[..n.min(3)];
            digits.parse::<i64>().ok()? * 10_i64.pow(3 - digits.len() as u32)
        }
        _ => return None,
    };
    Some(day * DAY_MS + ((h * 60 + m) * 60 + sec) * 1000 + ms)
}

/// Now, in milliseconds since the epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
