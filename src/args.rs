//! Checks shared by every command's parsing, with errors that name the
//! argument. Each command parses its own arguments, in argument order,
//! before its key is looked at.

use std::fmt::Display;

use crate::integer;
use crate::reply::ErrorReply;

/// An integer argument `name`, as INCRBY reads integers. The name is
/// formatted only for an error (`format_args!` costs nothing otherwise).
pub fn integer(bytes: &[u8], name: impl Display) -> Result<i64, ErrorReply> {
    integer::parse(bytes)
        .ok_or_else(|| ErrorReply::owned(format!("ERR {name} is not an integer or out of range")))
}

/// A strictly positive integer argument.
pub fn positive(bytes: &[u8], name: impl Display) -> Result<i64, ErrorReply> {
    match integer(bytes, &name)? {
        n if n > 0 => Ok(n),
        _ => Err(ErrorReply::owned(format!(
            "ERR {name} must be a positive integer"
        ))),
    }
}

/// An integer argument that may be 0 but not negative.
pub fn non_negative(bytes: &[u8], name: impl Display) -> Result<i64, ErrorReply> {
    match integer(bytes, &name)? {
        n if n >= 0 => Ok(n),
        _ => Err(ErrorReply::owned(format!(
            "ERR {name} must not be negative"
        ))),
    }
}

/// A string argument that must not be empty (any bytes otherwise).
pub fn non_empty(bytes: &[u8], name: impl Display) -> Result<&[u8], ErrorReply> {
    if bytes.is_empty() {
        Err(ErrorReply::owned(format!("ERR {name} must not be empty")))
    } else {
        Ok(bytes)
    }
}

/// The end (unix ms) of a span of `seconds` starting at `now_ms`, or
/// `None` where EXPIRE itself would refuse it as overflowing.
pub fn span_end_ms(now_ms: i64, seconds: i64) -> Option<i64> {
    seconds.checked_mul(1000)?.checked_add(now_ms)
}

/// A positive number of seconds `name` (a window, a hold) counted from
/// `now_ms`: its end in unix ms, refused as EXPIRE refuses an expiry that
/// overflows.
#[inline]
pub fn seconds_from(
    bytes: &[u8],
    name: &str,
    now_ms: i64,
    command: &str,
) -> Result<(i64, i64), ErrorReply> {
    let seconds = positive(bytes, name)?;
    let end = span_end_ms(now_ms, seconds).ok_or_else(|| {
        ErrorReply::owned(format!(
            "ERR invalid expire time in '{command}' command: {name} is too large"
        ))
    })?;
    Ok((seconds, end))
}

/// Walks `NAME value` options after a command's fixed arguments: names
/// are case-insensitive, each at most once, in any order. `each` gets the
/// option's index in `names` and its value, in argument order, so the
/// first bad argument is the one reported (the value as given, so a key
/// argument stays one). An unknown or repeated option, or one without its
/// value, is an error naming it.
pub fn options<'a, A: AsRef<[u8]>>(
    args: &'a [A],
    names: &[&str],
    mut each: impl FnMut(usize, &'a A) -> Result<(), ErrorReply>,
) -> Result<(), ErrorReply> {
    options_taking(args, names, None, |index, values| each(index, &values[0]))
}

/// [`options`], where the option `(index, n)` of `many` takes `n` values
/// (n >= 2): too few, or an integer after its n-th, is an error naming it
/// (`ERR qty needs 3 values, one per key`: the values are per key).
pub fn options_taking<'a, A: AsRef<[u8]>>(
    args: &'a [A],
    names: &[&str],
    many: Option<(usize, usize)>,
    mut each: impl FnMut(usize, &'a [A]) -> Result<(), ErrorReply>,
) -> Result<(), ErrorReply> {
    debug_assert!(names.len() <= 32);
    let per_key = |index: usize| {
        let (_, n) = many.expect("a counted option");
        ErrorReply::owned(format!(
            "ERR {} needs {n} values, one per key",
            names[index].to_ascii_lowercase()
        ))
    };
    // One bit per known option; nothing is allocated unless for an error.
    let mut seen = 0u32;
    let mut rest = args;
    while let [name, tail @ ..] = rest {
        let name = name.as_ref();
        let Some(index) = names
            .iter()
            .position(|n| n.as_bytes().eq_ignore_ascii_case(name))
        else {
            let given = String::from_utf8_lossy(name);
            return Err(ErrorReply::owned(format!("ERR unknown option '{given}'")));
        };
        let option = names[index];
        let bit = 1 << index;
        if seen & bit != 0 {
            return Err(ErrorReply::owned(format!(
                "ERR option {option} is given more than once"
            )));
        }
        seen |= bit;
        let count = match many {
            Some((counted, n)) if counted == index && n > 1 => n,
            _ => 1,
        };
        if tail.len() < count {
            return Err(match count {
                1 => ErrorReply::owned(format!("ERR option {option} needs a value")),
                _ => per_key(index),
            });
        }
        let (values, tail) = tail.split_at(count);
        each(index, values)?;
        if count > 1
            && tail
                .first()
                .is_some_and(|next| integer::parse(next.as_ref()).is_some())
        {
            return Err(per_key(index));
        }
        rest = tail;
    }
    Ok(())
}

/// Redis's own arity error, for parsers called with the wrong count
/// (Redis checks the arity before a handler runs; fuzzers and unit tests
/// do not).
pub fn wrong_arity(command: &str) -> ErrorReply {
    ErrorReply::owned(format!(
        "ERR wrong number of arguments for '{command}' command"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_argument_and_carry_a_standard_code() {
        let errors = [
            integer(b"x", "amount").unwrap_err(),
            positive(b"0", "amount").unwrap_err(),
            positive(b"-1", "amount").unwrap_err(),
            non_negative(b"-1", "amount").unwrap_err(),
            non_empty(b"", "amount").unwrap_err(),
        ];
        for error in errors {
            assert!(error.message().starts_with("ERR amount "), "{error}");
        }
    }

    #[test]
    fn options_are_case_insensitive_once_each_and_need_a_value() {
        let walk = |args: &[&str]| {
            let mut got = Vec::new();
            options(args, &["HOLD", "ID"], |i, v| {
                got.push((i, v.as_bytes().to_vec()));
                Ok(())
            })
            .map(|()| got)
        };
        assert_eq!(
            walk(&["id", "r", "Hold", "5"]),
            Ok(vec![(1, b"r".to_vec()), (0, b"5".to_vec())])
        );
        assert_eq!(walk(&[]), Ok(vec![]));
        let error = |args: &[&str]| walk(args).unwrap_err().to_string();
        assert_eq!(error(&["FOO", "1"]), "ERR unknown option 'FOO'");
        assert_eq!(
            error(&["HOLD", "1", "hold", "2"]),
            "ERR option HOLD is given more than once"
        );
        assert_eq!(error(&["HOLD"]), "ERR option HOLD needs a value");
        // A bad value is reported before a later unknown option.
        let first = options(&["HOLD", "x", "FOO"], &["HOLD"], |_, v| {
            positive(v.as_bytes(), "hold").map(drop)
        });
        assert!(first.unwrap_err().message().starts_with("ERR hold "));
    }

    #[test]
    fn seconds_from_now_overflow_like_expire() {
        assert_eq!(span_end_ms(1_000, 2), Some(3_000));
        assert_eq!(span_end_ms(0, i64::MAX / 1000 + 1), None);
        assert_eq!(span_end_ms(i64::MAX - 999, 1), None);
        assert_eq!(span_end_ms(i64::MAX - 1000, 1), Some(i64::MAX));
        assert_eq!(seconds_from(b"2", "hold", 1_000, "x"), Ok((2, 3_000)));
        let error = seconds_from(b"9223372036854775807", "hold", 0, "coupon.reserve").unwrap_err();
        assert_eq!(
            error.message(),
            "ERR invalid expire time in 'coupon.reserve' command: hold is too large"
        );
    }

    #[test]
    fn bounds() {
        assert_eq!(positive(b"1", "n"), Ok(1));
        assert_eq!(non_negative(b"0", "n"), Ok(0));
        assert!(non_negative(b"-0", "n").is_err());
        assert_eq!(non_empty(b"\0", "user"), Ok(&b"\0"[..]));
    }
}
