//! What a command answers: a value or a standard error reply.

use std::borrow::Cow;
use std::fmt;

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
