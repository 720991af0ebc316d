//! What a command answers: a value or a standard error reply.

use std::borrow::Cow;
use std::fmt;

/// A successful reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Integer(i64),
    /// MON.INCRCHECK's `[current, level]`.
    CounterLevel {
        current: i64,
        level: i64,
    },
}

/// An error reply; its text starts with a standard code (`ERR `,
/// `WRONGTYPE `) as clients expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorReply(Cow<'static, str>);

impl ErrorReply {
    pub const fn new(message: &'static str) -> Self {
        ErrorReply(Cow::Borrowed(message))
    }

    /// An error text that Redis produced (from a nested call).
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
