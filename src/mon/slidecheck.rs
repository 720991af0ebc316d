//! `MON.SLIDECHECK key increment window threshold [threshold ...] [BUCKETS
//! n] [ALERT stream [MAXLEN n]]`: adds to a sliding window and reports the
//! highest threshold crossed that the key has not reported within the
//! window (and records it in the stream).

use super::alert::{self, Alert, Record};
use super::thresholds::Thresholds;
use super::window::rules::{self, Slide};
use super::window::shape::{Shape, MAX_BUCKETS};
use super::window::store::Window;
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::replicated::pipeline;
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

/// Where the search for `ALERT` starts: after the first threshold.
const ALERT_FROM: usize = 5;

pub const COMMAND: Command = Command {
    name: c"mon.slidecheck",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -5,
    keys: alert::keys(KeyAccess::UPDATE, ALERT_FROM),
    summary: c"Adds to a sliding window (the last window seconds) and reports a new crossing.",
    complexity: c"O(1) amortised, plus the thresholds (at most 32).",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"increment"),
        ArgDoc::integer(c"window"),
        ArgDoc::integer(c"threshold").multiple(),
        ArgDoc::integer(c"buckets").option(c"BUCKETS"),
        alert::DOC,
    ],
    callback: callback_finding_keys::<MonSlideCheck>,
};

/// A parsed call; `A` is how an argument is given (the stream stays one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlideCheck<'a, A> {
    pub shape: Shape,
    pub increment: i64,
    pub expires_at_ms: i64,
    pub thresholds: Thresholds,
    pub alert: Option<Alert<'a, A>>,
}

impl<'a, A: AsRef<[u8]>> SlideCheck<'a, A> {
    /// `args` are the arguments after the key; `now_ms` the server clock
    /// (a window whose end would overflow is refused as EXPIRE refuses it).
    pub fn parse(key: &[u8], args: &'a [A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [increment, window, tail @ ..] = args else {
            return Err(args::wrong_arity("mon.slidecheck"));
        };
        if tail.is_empty() {
            return Err(args::wrong_arity("mon.slidecheck"));
        }
        let increment = args::positive(increment.as_ref(), "increment")?;
        let (window_s, expires_at_ms) =
            args::seconds_from(window.as_ref(), "window", now_ms, "mon.slidecheck")?;
        let window_ms = window_s * 1000;
        let mut buckets = rules::default_buckets(window_ms);
        let (thresholds, alert) = alert::after_thresholds(tail, key, &["BUCKETS"], |_, value| {
            let value = value.as_ref();
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
            alert,
        })
    }
}

/// The command (its parsed calls borrow their arguments).
pub struct MonSlideCheck;

impl FindsKeys for MonSlideCheck {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        alert::key_positions(args, ALERT_FROM)
    }
}

impl Handler for MonSlideCheck {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::MON_SLIDECHECK_CALLS.bump();
        let request = SlideCheck::parse(args[1].as_bytes(), &args[2..], ctx.now_ms())?;
        alert::check(request.alert.as_ref(), ctx)?;
        let thresholds = request.thresholds.as_slice();
        let call = Slide {
            shape: request.shape,
            increment: request.increment,
            thresholds,
            expires_at_ms: request.expires_at_ms,
        };
        // The alert's entry goes first: a refused one stops the call with
        // nothing written.
        let (slid, alerted) = pipeline::decide::<Window, _, _>(ctx, args[1], |window, now| {
            let (slid, effects) = rules::slide(window, &call, now)
                .map_err(|refusal| ErrorReply::owned(refusal.message()))?;
            let record = Record::crossing(thresholds, slid.level, slid.current, None);
            let alerted = alert::append(request.alert.as_ref(), ctx, args[1], record)?;
            Ok(((slid, alerted), effects))
        })?;
        if let Some(entry) = alerted {
            entry.propagate();
        }
        Ok(Reply::Integers([slid.current, slid.level as i64].into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn error(args: &[&str]) -> String {
        SlideCheck::parse(b"k", args, NOW).unwrap_err().to_string()
    }

    #[test]
    fn the_default_cut_and_buckets_in_any_case() {
        let call = SlideCheck::parse(b"k", &["1", "60", "3", "5"], NOW).unwrap();
        assert_eq!(
            call.shape,
            Shape {
                window_ms: 60_000,
                buckets: 60
            }
        );
        assert_eq!(call.thresholds.as_slice(), [3, 5]);
        assert_eq!(call.expires_at_ms, NOW + 60_000);
        let call = SlideCheck::parse(b"k", &["1", "3600", "3", "buckets", "3600"], NOW).unwrap();
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
