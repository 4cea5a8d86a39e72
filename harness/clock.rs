//! UTC timestamps without a time-zone database.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds and nanoseconds since the Unix epoch.
pub fn now() -> (i64, u32) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64, d.subsec_nanos())
}

/// RFC 3339 UTC with milliseconds, e.g. `2026-07-25T09:00:00.000Z`.
pub fn rfc3339(secs: i64, nanos: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        nanos / 1_000_000
    )
}

/// The current time as RFC 3339 UTC.
pub fn now_rfc3339() -> String {
    let (s, n) = now();
    rfc3339(s, n)
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_instants() {
        assert_eq!(super::rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            super::rfc3339(1_785_056_400, 5_000_000),
            "2026-07-26T09:00:00.005Z"
        );
        assert_eq!(super::rfc3339(951_782_400, 0), "2000-02-29T00:00:00.000Z");
    }
}
