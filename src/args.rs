//! Argument parsing: raw command arguments into typed requests.
//!
//! Everything here is pure (no Redis types), so every rule is unit tested.
//! Arguments are checked in argument order and the first bad one is
//! reported, before any key is looked at.

use crate::reply::ErrorReply;
use crate::rules;

/// Most thresholds one MON.INCRCHECK call may carry.
pub const MAX_THRESHOLDS: usize = 32;

/// Parses an integer exactly as Redis's `string2ll` (INCRBY) does: optional
/// `-`, no `+`, no spaces, no leading zeros, no `-0`, within i64.
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
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

/// A strictly positive integer argument, with errors that name it.
fn positive(
    bytes: &[u8],
    not_integer: &'static str,
    not_positive: &'static str,
) -> Result<i64, ErrorReply> {
    match parse_i64(bytes) {
        None => Err(ErrorReply::new(not_integer)),
        Some(n) if n <= 0 => Err(ErrorReply::new(not_positive)),
        Some(n) => Ok(n),
    }
}

fn increment(bytes: &[u8]) -> Result<i64, ErrorReply> {
    positive(
        bytes,
        "ERR increment is not an integer or out of range",
        "ERR increment must be a positive integer",
    )
}

fn amount(bytes: &[u8]) -> Result<i64, ErrorReply> {
    positive(
        bytes,
        "ERR amount is not an integer or out of range",
        "ERR amount must be a positive integer",
    )
}

fn limit(bytes: &[u8]) -> Result<i64, ErrorReply> {
    positive(
        bytes,
        "ERR limit is not an integer or out of range",
        "ERR limit must be a positive integer",
    )
}

fn user(bytes: &[u8]) -> Result<(), ErrorReply> {
    if bytes.is_empty() {
        Err(ErrorReply::new("ERR user must not be empty"))
    } else {
        Ok(())
    }
}

/// Thresholds as given: 1 to 32 positive, strictly increasing integers.
/// Kept inline (no heap) because MON.INCRCHECK is a hot path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    values: [i64; MAX_THRESHOLDS],
    len: usize,
}

impl Thresholds {
    pub fn as_slice(&self) -> &[i64] {
        &self.values[..self.len]
    }

    fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        if args.len() > MAX_THRESHOLDS {
            return Err(ErrorReply::new(
                "ERR too many threshold values (at most 32)",
            ));
        }
        let mut thresholds = Thresholds {
            values: [0; MAX_THRESHOLDS],
            len: 0,
        };
        for arg in args {
            let value = positive(
                arg.as_ref(),
                "ERR threshold is not an integer or out of range",
                "ERR threshold must be a positive integer",
            )?;
            if thresholds
                .as_slice()
                .last()
                .is_some_and(|&last| value <= last)
            {
                return Err(ErrorReply::new(
                    "ERR threshold values must be strictly increasing",
                ));
            }
            thresholds.values[thresholds.len] = value;
            thresholds.len += 1;
        }
        Ok(thresholds)
    }
}

/// `MON.INCRCHECK key increment window threshold [threshold ...]`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncrCheck {
    pub increment: i64,
    /// Absolute expiry (unix ms) the window gets if the key has no TTL.
    pub window_expires_at_ms: i64,
    pub thresholds: Thresholds,
}

impl IncrCheck {
    /// `args` are the arguments after the key. `now_ms` is the server
    /// clock: a window whose expiry would overflow is rejected like EXPIRE
    /// rejects it, in argument order.
    pub fn parse<A: AsRef<[u8]>>(args: &[A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [increment_arg, window_arg, threshold_args @ ..] = args else {
            return Err(ErrorReply::new(
                "ERR wrong number of arguments for 'mon.incrcheck' command",
            ));
        };
        if threshold_args.is_empty() {
            return Err(ErrorReply::new(
                "ERR wrong number of arguments for 'mon.incrcheck' command",
            ));
        }
        let increment = increment(increment_arg.as_ref())?;
        let window_s = positive(
            window_arg.as_ref(),
            "ERR window is not an integer or out of range",
            "ERR window must be a positive integer",
        )?;
        let window_expires_at_ms = rules::window_expiry_ms(now_ms, window_s).ok_or_else(|| {
            ErrorReply::new(
                "ERR invalid expire time in 'mon.incrcheck' command: window is too large",
            )
        })?;
        let thresholds = Thresholds::parse(threshold_args)?;
        Ok(IncrCheck {
            increment,
            window_expires_at_ms,
            thresholds,
        })
    }
}

/// `MON.DECRCLAMP key amount`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecrClamp {
    pub amount: i64,
}

impl DecrClamp {
    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        let [amount_arg] = args else {
            return Err(ErrorReply::new(
                "ERR wrong number of arguments for 'mon.decrclamp' command",
            ));
        };
        Ok(DecrClamp {
            amount: amount(amount_arg.as_ref())?,
        })
    }
}

/// `COUPON.ISSUE key user limit`; the user stays in the caller's argv.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CouponIssue {
    pub limit: i64,
}

impl CouponIssue {
    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        let [user_arg, limit_arg] = args else {
            return Err(ErrorReply::new(
                "ERR wrong number of arguments for 'coupon.issue' command",
            ));
        };
        user(user_arg.as_ref())?;
        Ok(CouponIssue {
            limit: limit(limit_arg.as_ref())?,
        })
    }
}

/// `COUPON.REVOKE key user`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CouponRevoke;

impl CouponRevoke {
    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        let [user_arg] = args else {
            return Err(ErrorReply::new(
                "ERR wrong number of arguments for 'coupon.revoke' command",
            ));
        };
        user(user_arg.as_ref())?;
        Ok(CouponRevoke)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    #[test]
    fn parses_integers_like_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"7"), Some(7));
        assert_eq!(parse_i64(b"-7"), Some(-7));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
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
            assert_eq!(parse_i64(bad), None, "{:?} must not parse", bad);
        }
    }

    #[test]
    fn incrcheck_parses_a_valid_request() {
        let req = IncrCheck::parse(&["5", "60", "3", "10"], NOW).unwrap();
        assert_eq!(req.increment, 5);
        assert_eq!(req.window_expires_at_ms, NOW + 60_000);
        assert_eq!(req.thresholds.as_slice(), &[3, 10]);
    }

    #[test]
    fn incrcheck_names_the_bad_argument() {
        let err = |args: &[&str]| IncrCheck::parse(args, NOW).unwrap_err().to_string();
        assert!(err(&["0", "60", "3"]).contains("increment"));
        assert!(err(&["-1", "60", "3"]).contains("increment"));
        assert!(err(&["x", "60", "3"]).contains("increment"));
        assert!(err(&["1", "0", "3"]).contains("window"));
        assert!(err(&["1", "1.5", "3"]).contains("window"));
        assert!(err(&["1", "60", "0"]).contains("threshold"));
        assert!(err(&["1", "60", "3", "-3"]).contains("threshold"));
        assert!(err(&["1", "60", "3", "3"]).contains("strictly increasing"));
        assert!(err(&["1", "60", "5", "4"]).contains("strictly increasing"));
    }

    #[test]
    fn incrcheck_reports_the_first_bad_argument_in_order() {
        let err = |args: &[&str]| IncrCheck::parse(args, NOW).unwrap_err().to_string();
        assert!(err(&["0", "0", "0"]).contains("increment"));
        assert!(err(&["1", "0", "0"]).contains("window"));
        assert!(err(&["1", "9223372036854775807", "0"]).contains("window"));
    }

    #[test]
    fn incrcheck_accepts_32_thresholds_and_rejects_33() {
        let values: Vec<String> = (1..=33).map(|t| t.to_string()).collect();
        let mut args = vec!["1".to_string(), "60".to_string()];
        args.extend(values[..32].iter().cloned());
        assert_eq!(
            IncrCheck::parse(&args, NOW)
                .unwrap()
                .thresholds
                .as_slice()
                .len(),
            32
        );
        args.push(values[32].clone());
        assert!(IncrCheck::parse(&args, NOW)
            .unwrap_err()
            .to_string()
            .contains("threshold"));
    }

    #[test]
    fn incrcheck_rejects_a_window_whose_expiry_overflows() {
        let max_window = (i64::MAX - NOW) / 1000;
        assert!(IncrCheck::parse(
            &["1".to_string(), max_window.to_string(), "1".to_string()],
            NOW
        )
        .is_ok());
        let too_big = (max_window + 1).to_string();
        let err = IncrCheck::parse(&["1", too_big.as_str(), "1"], NOW)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("ERR ") && err.contains("window"), "{err}");
    }

    #[test]
    fn incrcheck_needs_a_threshold() {
        assert!(IncrCheck::parse(&["1", "60"], NOW)
            .unwrap_err()
            .to_string()
            .contains("wrong number"));
    }

    #[test]
    fn decrclamp_requires_a_positive_amount() {
        assert_eq!(DecrClamp::parse(&["50"]).unwrap().amount, 50);
        for bad in ["0", "-5", "", "abc", "-0", "+1", "01"] {
            assert!(
                DecrClamp::parse(&[bad])
                    .unwrap_err()
                    .to_string()
                    .contains("amount"),
                "{bad}"
            );
        }
    }

    #[test]
    fn coupon_issue_checks_user_then_limit() {
        assert_eq!(CouponIssue::parse(&["u1", "100"]).unwrap().limit, 100);
        assert!(CouponIssue::parse(&["", "0"])
            .unwrap_err()
            .to_string()
            .contains("user"));
        assert!(CouponIssue::parse(&["u1", "0"])
            .unwrap_err()
            .to_string()
            .contains("limit"));
        assert!(CouponIssue::parse(&["u1", "x"])
            .unwrap_err()
            .to_string()
            .contains("limit"));
        // Any bytes make a user, NUL included.
        assert!(CouponIssue::parse(&[&b"\0\xff"[..], b"1"]).is_ok());
    }

    #[test]
    fn coupon_revoke_rejects_an_empty_user() {
        assert!(CouponRevoke::parse(&["u1"]).is_ok());
        assert!(CouponRevoke::parse(&[""])
            .unwrap_err()
            .to_string()
            .contains("user"));
    }

    #[test]
    fn every_error_carries_a_standard_code() {
        let errors = [
            IncrCheck::parse(&["0", "1", "1"], NOW).unwrap_err(),
            DecrClamp::parse(&["0"]).unwrap_err(),
            CouponIssue::parse(&["", "1"]).unwrap_err(),
            CouponRevoke::parse(&[""]).unwrap_err(),
        ];
        for error in errors {
            assert!(error.message().starts_with("ERR "), "{error:?}");
        }
    }
}
