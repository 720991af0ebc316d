//! Integers as Redis writes them in strings, both ways: parsed exactly as
//! INCRBY parses them (`string2ll`), formatted without allocating.

/// Digits of the longest i64 (`-9223372036854775808`).
pub const MAX_DIGITS: usize = 20;

/// Parses an integer exactly as Redis's `string2ll` (INCRBY) does: optional
/// `-`, no `+`, no spaces, no leading zeros, no `-0`, within i64.
pub fn parse(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    match digits {
        [] => return None,
        [b'0'] if !negative => return Some(0),
        [b'0', ..] => return None,
        _ => {}
    }
    // Accumulate negatively so that i64::MIN parses without overflow.
    let mut value: i64 = 0;
    for &byte in digits {
        if !byte.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_sub(i64::from(byte - b'0'))?;
    }
    if negative {
        Some(value)
    } else {
        value.checked_neg()
    }
}

/// Decimal digits of `value` in `buffer`.
pub fn format(value: i64, buffer: &mut [u8; MAX_DIGITS]) -> &[u8] {
    let mut magnitude = value.unsigned_abs();
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    if value < 0 {
        // 19 digits at most for i64, so there is room for the sign.
        start -= 1;
        buffer[start] = b'-';
    }
    &buffer[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_string2ll() {
        assert_eq!(parse(b"0"), Some(0));
        assert_eq!(parse(b"7"), Some(7));
        assert_eq!(parse(b"-7"), Some(-7));
        assert_eq!(parse(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"-0",
            b"+5",
            b" 5",
            b"5 ",
            b"05",
            b"00",
            b"1.5",
            b"1e3",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"99999999999999999999999",
            b"5\0",
            b"\xff",
        ] {
            assert_eq!(parse(bad), None, "{:?} must not parse", bad);
        }
    }

    #[test]
    fn formats_like_display() {
        for value in [0, 7, -7, 10, 1000, i64::MAX, i64::MIN, i64::MIN + 1] {
            let mut buffer = [0u8; MAX_DIGITS];
            assert_eq!(format(value, &mut buffer), value.to_string().as_bytes());
        }
    }
}
