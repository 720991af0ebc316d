//! What a command answers: a value or a standard error reply.

use std::borrow::Cow;
use std::fmt;

use crate::stats;

/// A successful reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Integer(i64),
    /// A flat array of integers (MON.INCRCHECK's pair, CL.THROTTLE's five),
    /// kept inline: the hot paths' replies do not allocate.
    Integers(Integers),
    /// `+OK` and the like.
    Simple(&'static str),
    /// A binary-safe string.
    Bulk(Vec<u8>),
    /// RESP2's null bulk string, RESP3's null.
    Null,
    Array(Vec<Reply>),
    /// A map in RESP3, a flat array of field/value pairs in RESP2.
    Map(Vec<(&'static str, Reply)>),
}

/// Up to five integers, kept inline: replies on hot paths do not allocate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Integers {
    values: [i64; 5],
    len: usize,
}

impl Integers {
    pub fn as_slice(&self) -> &[i64] {
        &self.values[..self.len]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<const N: usize> From<[i64; N]> for Integers {
    fn from(values: [i64; N]) -> Self {
        const { assert!(N <= 5) };
        let mut inline = [0; 5];
        inline[..N].copy_from_slice(&values);
        Integers {
            values: inline,
            len: N,
        }
    }
}

/// An error reply; its text starts with a standard code (`ERR `,
/// `WRONGTYPE `) as clients expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorReply(Cow<'static, str>);

impl ErrorReply {
    pub const fn new(message: &'static str) -> Self {
        ErrorReply(Cow::Borrowed(message))
    }

    /// A text made at run time (naming an argument, or Redis's own).
    pub fn owned(message: String) -> Self {
        ErrorReply(Cow::Owned(message))
    }

    pub fn message(&self) -> &str {
        &self.0
    }

    /// The module's own failure, never the caller's (a caught panic):
    /// each one is counted in INFO's `internal_errors`, so tests and
    /// monitoring see every one whatever the client did with the reply.
    pub fn internal(message: &'static str) -> Self {
        stats::INTERNAL_ERRORS.bump();
        ErrorReply::new(message)
    }

    /// An effect this module decided (or a replica received) that its
    /// value refused: a broken invariant, counted as [`ErrorReply::internal`].
    pub fn could_not_apply(why: impl fmt::Display) -> Self {
        stats::INTERNAL_ERRORS.bump();
        ErrorReply::owned(format!("ERR redis-guard could not apply an effect: {why}"))
    }
}

impl fmt::Display for ErrorReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub const WRONGTYPE: ErrorReply =
    ErrorReply::new("WRONGTYPE Operation against a key holding the wrong kind of value");
pub const NOT_AN_INTEGER: ErrorReply =
    ErrorReply::new("ERR value is not an integer or out of range");
pub const OVERFLOW: ErrorReply = ErrorReply::new("ERR increment or decrement would overflow");

pub type CommandResult = Result<Reply, ErrorReply>;
