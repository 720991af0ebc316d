//! `MON.SLIDECHECK key increment window threshold [threshold ...] [BUCKETS
//! n]`: adds to a sliding window and reports the highest threshold crossed
//! that the key has not reported within the window.

use super::effect::{Shape, MAX_BUCKETS};
use super::pipeline;
use super::rules::{self, Slide};
use crate::args;
use crate::mon::thresholds::{self, Thresholds};
use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"mon.slidecheck",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -5,
    keys: Keys::One(KeyAccess::UPDATE),
    summary: c"Adds to a sliding window (the last window seconds) and reports a new crossing.",
    complexity: c"O(1) amortised, plus the thresholds (at most 32).",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"increment"),
        ArgDoc::integer(c"window"),
        ArgDoc::integer(c"threshold").multiple(),
        ArgDoc::integer(c"buckets").option(c"BUCKETS"),
    ],
    callback: callback::<SlideCheck>,
};

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlideCheck {
    pub shape: Shape,
    pub increment: i64,
    pub expires_at_ms: i64,
    pub thresholds: Thresholds,
}

impl SlideCheck {
    /// `args` are the arguments after the key; `now_ms` the server clock
    /// (a window whose end would overflow is refused as EXPIRE refuses it).
    pub fn parse<A: AsRef<[u8]>>(args: &[A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [increment, window, rest @ ..] = args else {
            return Err(args::wrong_arity("mon.slidecheck"));
        };
        if rest.is_empty() {
            return Err(args::wrong_arity("mon.slidecheck"));
        }
        let increment = args::positive(increment.as_ref(), "increment")?;
        let (window_s, expires_at_ms) =
            args::seconds_from(window.as_ref(), "window", now_ms, "mon.slidecheck")?;
        let window_ms = window_s * 1000;
        let (thresholds, options) = thresholds::then_options(rest, &["BUCKETS"]);
        let thresholds = Thresholds::parse(thresholds)?;
        let mut buckets = rules::default_buckets(window_ms);
        args::options(options, &["BUCKETS"], |_, value| {
            let n = args::positive(value, "buckets")?;
            if n > MAX_BUCKETS {
                return Err(ErrorReply::new("ERR buckets must be at most 3600"));
            }
            if window_ms % n != 0 {
                return Err(ErrorReply::new(
                    "ERR buckets must cut the window into whole milliseconds",
                ));
            }
            buckets = n;
            Ok(())
        })?;
        Ok(SlideCheck {
            shape: Shape { window_ms, buckets },
            increment,
            expires_at_ms,
            thresholds,
        })
    }
}

impl Handler for SlideCheck {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::MON_SLIDECHECK_CALLS.bump();
        let request = SlideCheck::parse(&args[2..], ctx.now_ms())?;
        let call = Slide {
            shape: request.shape,
            increment: request.increment,
            thresholds: request.thresholds.as_slice(),
            expires_at_ms: request.expires_at_ms,
        };
        let slid = pipeline::slide(ctx, args[1], &call)?;
        Ok(Reply::Integers([slid.current, slid.level as i64].into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn error(args: &[&str]) -> String {
        SlideCheck::parse(args, NOW).unwrap_err().to_string()
    }

    #[test]
    fn the_default_cut_and_buckets_in_any_case() {
        let call = SlideCheck::parse(&["1", "60", "3", "5"], NOW).unwrap();
        assert_eq!(
            call.shape,
            Shape {
                window_ms: 60_000,
                buckets: 60
            }
        );
        assert_eq!(call.thresholds.as_slice(), [3, 5]);
        assert_eq!(call.expires_at_ms, NOW + 60_000);
        let call = SlideCheck::parse(&["1", "3600", "3", "buckets", "3600"], NOW).unwrap();
        assert_eq!(call.shape.buckets, 3600);
    }

    #[test]
    fn errors_name_the_argument_in_order() {
        assert!(error(&["0", "60", "3"]).starts_with("ERR increment "));
        assert!(error(&["1", "0", "3"]).starts_with("ERR window "));
        assert!(error(&["1", "60", "x"]).starts_with("ERR threshold #1 "));
        assert!(error(&["1", "60", "3", "2"]).contains("strictly increasing"));
        assert!(error(&["1", "60", "3", "BUCKETS", "0"]).starts_with("ERR buckets "));
        assert!(error(&["1", "60", "3", "BUCKETS", "3601"]).starts_with("ERR buckets "));
        assert!(error(&["1", "7", "3", "BUCKETS", "3000"]).contains("whole milliseconds"));
        assert!(error(&["1", "60", "3", "BUCKETS"]).contains("BUCKETS needs a value"));
        assert!(error(&["1", "60", "3", "BUCKETS", "6", "buckets", "6"]).contains("more than once"));
        assert!(error(&["1", "9223372036854775", "3"]).contains("window"));
    }
}
