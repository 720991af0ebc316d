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
    fn bounds() {
        assert_eq!(positive(b"1", "n"), Ok(1));
        assert_eq!(non_negative(b"0", "n"), Ok(0));
        assert!(non_negative(b"-0", "n").is_err());
        assert_eq!(non_empty(b"\0", "user"), Ok(&b"\0"[..]));
    }
}
