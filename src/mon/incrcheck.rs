//! `MON.INCRCHECK key increment window threshold [threshold ...] [TZ zone]
//! [ALERT stream [MAXLEN n]]`: adds to a windowed counter and reports the
//! first crossing of a threshold (and records it in the stream). The
//! window is seconds from the add that starts it, or a calendar period of
//! a zone (`day`, `TZ Asia/Seoul`).

use super::alert::{self, Alert, Record};
use super::rules;
use super::thresholds::Thresholds;
use crate::args;
use crate::calendar::Zoned;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, CommandKey, Ctx, EventClass, FindsKeys, Handler,
    KeyAccess, PlainWrite,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

/// Where the search for `ALERT` starts: after the first threshold.
const ALERT_FROM: usize = 5;

pub const COMMAND: Command = Command {
    name: c"mon.incrcheck",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -5,
    keys: alert::keys(KeyAccess::UPDATE, ALERT_FROM),
    summary: c"Adds to a windowed counter and reports the highest threshold this call crossed.",
    complexity: c"O(N) where N is the number of thresholds (at most 32).",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"increment"),
        ArgDoc::string(c"window"),
        ArgDoc::integer(c"threshold").multiple(),
        ArgDoc::string(c"zone").option(c"TZ"),
        alert::DOC,
    ],
    callback: callback_finding_keys::<MonIncrCheck>,
};

/// A parsed call; `A` is how an argument is given (the stream stays one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncrCheck<'a, A> {
    pub increment: i64,
    /// Absolute expiry (unix ms) the window gets if the key has no TTL.
    pub window_expires_at_ms: i64,
    pub thresholds: Thresholds,
    pub alert: Option<Alert<'a, A>>,
}

impl<'a, A: AsRef<[u8]>> IncrCheck<'a, A> {
    /// `args` are the arguments after the key. `now_ms` is the server
    /// clock: a window whose expiry would overflow is rejected as EXPIRE
    /// rejects it, in argument order.
    pub fn parse(key: &[u8], args: &'a [A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [increment, window, tail @ ..] = args else {
            return Err(args::wrong_arity("mon.incrcheck"));
        };
        if tail.is_empty() {
            return Err(args::wrong_arity("mon.incrcheck"));
        }
        let increment = args::positive(increment.as_ref(), "increment")?;
        let mut window = Zoned::parse(window.as_ref(), now_ms, "mon.incrcheck")?;
        let (thresholds, alert) = alert::after_thresholds(tail, key, &["TZ"], |_, tz| {
            window = window.in_zone(tz.as_ref())?;
            Ok(())
        })?;
        let window_expires_at_ms = window.ends_at_ms(now_ms)?;
        Ok(IncrCheck {
            increment,
            window_expires_at_ms,
            thresholds,
            alert,
        })
    }
}

/// The command (its parsed calls borrow their arguments).
pub struct MonIncrCheck;

impl FindsKeys for MonIncrCheck {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        alert::key_positions(args, ALERT_FROM)
    }
}

impl Handler for MonIncrCheck {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::MON_INCRCHECK_CALLS.bump();
        let request = IncrCheck::parse(args[1].as_bytes(), &args[2..], ctx.now_ms())?;
        // Every parsed call is valid: tests/fuzz-proof.sh's build panics on each.
        #[cfg(feature = "test-panic-incrcheck")]
        if request.increment > 0 {
            panic!("test-panic-incrcheck: a valid MON.INCRCHECK panics");
        }
        alert::check(request.alert.as_ref(), ctx)?;
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        let current = key.read_integer()?;
        // A missing key has no TTL: no need to ask.
        let window_running = current.is_some() && key.expires_at_ms().is_some();
        let count = rules::count(
            current,
            window_running,
            request.increment,
            request.thresholds.as_slice(),
        )?;
        let record = Record::crossing(
            request.thresholds.as_slice(),
            count.level,
            count.value,
            None,
        );
        let alerted = alert::append(request.alert.as_ref(), ctx, args[1], record)?;

        key.write_integer(count.value)?;
        target.notify(EventClass::String, c"incrby");
        if count.starts_window {
            key.set_expires_at_ms(request.window_expires_at_ms);
            target.notify(EventClass::Generic, c"expire");
            // Value and expiry travel as one write.
            target.replicate(PlainWrite::SetExpiringAt {
                value: count.value,
                at_ms: request.window_expires_at_ms,
            });
        } else {
            target.replicate(PlainWrite::IncrBy(args[2]));
        }
        if count.level > 0 {
            stats::MON_CROSSINGS.bump();
            target.notify(EventClass::String, c"mon.crossed");
        }
        if let Some(entry) = alerted {
            entry.propagate();
        }
        target.signal_modified();
        Ok(Reply::Integers([count.value, count.level as i64].into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn error(args: &[&str]) -> String {
        IncrCheck::parse(b"k", args, NOW).unwrap_err().to_string()
    }

    #[test]
    fn parses_a_valid_request() {
        let request = IncrCheck::parse(b"k", &["5", "60", "3", "10"], NOW).unwrap();
        assert_eq!(request.increment, 5);
        assert_eq!(request.window_expires_at_ms, NOW + 60_000);
        assert_eq!(request.thresholds.as_slice(), &[3, 10]);
    }

    #[test]
    fn names_the_bad_argument() {
        assert!(error(&["0", "60", "3"]).contains("increment"));
        assert!(error(&["-1", "60", "3"]).contains("increment"));
        assert!(error(&["x", "60", "3"]).contains("increment"));
        assert!(error(&["1", "0", "3"]).contains("window"));
        assert!(error(&["1", "1.5", "3"]).contains("window"));
        assert!(error(&["1", "60", "0"]).contains("threshold"));
        assert!(error(&["1", "60", "3", "3"]).contains("strictly increasing"));
        assert!(error(&["1", "60", "5", "4"]).contains("strictly increasing"));
    }

    #[test]
    fn names_the_position_of_a_bad_threshold() {
        assert_eq!(
            error(&["1", "60", "1", "2", "-3"]),
            "ERR threshold #3 must be a positive integer"
        );
        assert_eq!(
            error(&["1", "60", "1", "x"]),
            "ERR threshold #2 is not an integer or out of range"
        );
        assert!(error(&["1", "60", "1", "5", "5"])
            .starts_with("ERR threshold #3 must be greater than #2"));
    }

    #[test]
    fn reports_the_first_bad_argument_in_order() {
        assert!(error(&["0", "0", "0"]).contains("increment"));
        assert!(error(&["1", "0", "0"]).contains("window"));
        assert!(error(&["1", "9223372036854775807", "0"]).contains("window"));
    }

    #[test]
    fn accepts_32_thresholds_and_rejects_33() {
        let mut args: Vec<String> = vec!["1".into(), "60".into()];
        args.extend((1..=32).map(|t| t.to_string()));
        assert_eq!(
            IncrCheck::parse(b"k", &args, NOW)
                .unwrap()
                .thresholds
                .as_slice()
                .len(),
            32
        );
        args.push("33".into());
        assert!(IncrCheck::parse(b"k", &args, NOW)
            .unwrap_err()
            .to_string()
            .contains("threshold"));
    }

    #[test]
    fn rejects_a_window_whose_expiry_overflows() {
        let max_window = (i64::MAX - NOW) / 1000;
        assert!(IncrCheck::parse(
            b"k",
            &["1".to_string(), max_window.to_string(), "1".to_string()],
            NOW
        )
        .is_ok());
        let too_big = (max_window + 1).to_string();
        let error = error(&["1", too_big.as_str(), "1"]);
        assert!(
            error.starts_with("ERR ") && error.contains("window"),
            "{error}"
        );
    }

    #[test]
    fn needs_a_threshold() {
        assert!(error(&["1", "60"]).contains("wrong number"));
    }
}
