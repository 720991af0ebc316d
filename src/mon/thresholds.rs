//! The thresholds of the velocity checks (MON.INCRCHECK, MON.SLIDECHECK,
//! MON.DISTINCT): 1 to 32 positive, strictly increasing integers, and
//! where they end when options follow them.

use crate::args;
use crate::reply::ErrorReply;

/// Most thresholds one call may carry.
pub const MAX_THRESHOLDS: usize = 32;

/// 1 to 32 positive, strictly increasing integers, kept inline (no heap:
/// this is a hot path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    values: [i64; MAX_THRESHOLDS],
    len: usize,
}

impl Thresholds {
    pub fn as_slice(&self) -> &[i64] {
        &self.values[..self.len]
    }

    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        if args.len() > MAX_THRESHOLDS {
            return Err(ErrorReply::new(
                "ERR too many threshold values (at most 32)",
            ));
        }
        let mut thresholds = Thresholds {
            values: [0; MAX_THRESHOLDS],
            len: 0,
        };
        for (index, arg) in args.iter().enumerate() {
            let position = index + 1;
            let value = args::positive(arg.as_ref(), format_args!("threshold #{position}"))?;
            if thresholds
                .as_slice()
                .last()
                .is_some_and(|&last| value <= last)
            {
                return Err(ErrorReply::owned(format!(
                    "ERR threshold #{position} must be greater than #{index}: \
                     threshold values must be strictly increasing"
                )));
            }
            thresholds.values[index] = value;
            thresholds.len = position;
        }
        Ok(thresholds)
    }
}

/// Splits the arguments from the first threshold on into thresholds and
/// options: after the first threshold, a token that is one of `options`
/// (case-insensitive) starts the options; any other token before it is a
/// threshold.
/// (A threshold starts with a digit or `-`, an option name with a letter:
/// thresholds are told apart by their first byte, on every call.)
#[inline(always)]
pub fn then_options<'a, A: AsRef<[u8]>>(args: &'a [A], options: &[&str]) -> (&'a [A], &'a [A]) {
    let end = args
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, arg)| {
            let arg = arg.as_ref();
            arg.first().is_some_and(u8::is_ascii_alphabetic)
                && options
                    .iter()
                    .any(|name| arg.eq_ignore_ascii_case(name.as_bytes()))
        })
        .map_or(args.len(), |(at, _)| at);
    args.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_start_at_the_first_option_name_after_a_threshold() {
        let args = ["5", "10", "buckets", "30"];
        assert_eq!(then_options(&args, &["BUCKETS"]), (&args[..2], &args[2..]));
        // The first token is a threshold whatever it says.
        let args = ["BUCKETS", "10"];
        assert_eq!(then_options(&args, &["BUCKETS"]).0.len(), 2);
        assert_eq!(then_options(&["1", "2"], &[]).1.len(), 0);
    }
}
