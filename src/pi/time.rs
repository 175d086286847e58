//! Timestamps: Pi writes entry times as ISO-8601 strings and message times
//! as Unix epoch milliseconds. Both become milliseconds since the epoch
//! here, and are printed back as RFC 3339 UTC with exactly three fractional
//! digits (`2026-04-02T23:48:11.257Z`).
//!
//! Hand-written because it runs once per indexed message and the formats
//! are narrow; a general date library would parse far more than Pi writes.

/// Parse an ISO-8601 / RFC 3339 timestamp (`YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]`,
/// `T` or space, fraction of any length, no zone meaning UTC) into epoch
/// milliseconds. Returns `None` for anything else.
pub fn parse_iso_millis(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let mut v = 0i64;
        for &c in b.get(r)? {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(c - b'0');
        }
        Some(v)
    };
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 3 {
                millis = millis * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        let digits = i - start;
        if digits == 0 {
            return None;
        }
        for _ in digits..3 {
            millis *= 10;
        }
    }
    let offset_minutes = match b.get(i) {
        None => 0,
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let rest = &s[i + 1..];
            let (h, m) = match rest.len() {
                5 if rest.as_bytes()[2] == b':' => (&rest[0..2], &rest[3..5]),
                4 => (&rest[0..2], &rest[2..4]),
                2 => (&rest[0..2], "00"),
                _ => return None,
            };
            let h: i64 = h.parse().ok()?;
            let m: i64 = m.parse().ok()?;
            let total = h * 60 + m;
            if sign == b'+' {
                total
            } else {
                -total
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(secs * 1000 + millis)
}

/// Format epoch milliseconds as RFC 3339 UTC with three fractional digits.
/// Years 0 to 9999 are written digit by digit, since a page of hits
/// formats dozens and `format!` with padding was a visible share of a
/// search ([docs/performance.md](../../docs/performance.md#what-a-page-costs-to-print));
/// others through `format!`, as before.
pub fn format_millis(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
            rem / 3600,
            (rem / 60) % 60,
            rem % 60
        );
    }
    let mut out = [0u8; 24];
    let fields = [
        (y, 4, b'-'),
        (m, 2, b'-'),
        (d, 2, b'T'),
        (rem / 3600, 2, b':'),
        ((rem / 60) % 60, 2, b':'),
        (rem % 60, 2, b'.'),
        (millis, 3, b'Z'),
    ];
    let mut at = 0;
    for (mut n, width, after) in fields {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
        out[at + width] = after;
        at += width + 1;
    }
    // ASCII digits and separators only.
    String::from_utf8_lossy(&out[..at]).into_owned()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (inverse of [`days_from_civil`]).
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trips_with_three_digits() {
        let ms = parse_iso_millis("2026-04-02T23:48:11.257Z").unwrap();
        assert_eq!(format_millis(ms), "2026-04-02T23:48:11.257Z");
        let ms = parse_iso_millis("2024-01-15T09:30:00Z").unwrap();
        assert_eq!(format_millis(ms), "2024-01-15T09:30:00.000Z");
        assert_eq!(ms, 1_705_311_000_000);
    }

    #[test]
    fn offsets_and_long_fractions_are_normalised_to_utc() {
        let ms = parse_iso_millis("2026-01-01T01:00:00.123456+01:00").unwrap();
        assert_eq!(format_millis(ms), "2026-01-01T00:00:00.123Z");
        assert_eq!(parse_iso_millis("1970-01-01T00:00:00.5Z"), Some(500));
    }

    #[test]
    fn garbage_is_rejected() {
        for s in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00Zjunk",
        ] {
            assert_eq!(parse_iso_millis(s), None, "{s}");
        }
    }

    #[test]
    fn civil_conversions_agree() {
        for days in [-800_000, -1, 0, 1, 19_000, 20_500, 2_000_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    proptest::proptest! {
        /// Written digit by digit, the same text as `format!` gives, from
        /// before year 0 to past 9999.
        #[test]
        fn formatting_by_digits_is_formatting_by_format(ms in -70_000_000_000_000i64..300_000_000_000_000) {
            let secs = ms.div_euclid(1000);
            let rem = secs.rem_euclid(86_400);
            let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
            let expected = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
                rem / 3600,
                (rem / 60) % 60,
                rem % 60,
                ms.rem_euclid(1000)
            );
            proptest::prop_assert_eq!(format_millis(ms), expected);
        }
    }
}
