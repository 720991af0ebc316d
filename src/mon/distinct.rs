//! `MON.DISTINCT key member window threshold [threshold ...] [ALERT stream
//! [MAXLEN n]]`: distinct members seen in the last `window` seconds (cards
//! per customer, customers per card), on a plain sorted set scored by when
//! each member was last seen, and the first crossing of a threshold
//! (recorded in the stream).

use super::alert::{self, Alert, Record};
use super::rules;
use super::thresholds::Thresholds;
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, CommandKey, Ctx, EventClass, FindsKeys, Handler,
    KeyAccess, PlainWrite,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

/// Where the search for `ALERT` starts: after the first threshold.
const ALERT_FROM: usize = 5;

pub const COMMAND: Command = Command {
    name: c"mon.distinct",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -5,
    keys: alert::keys(KeyAccess::UPDATE, ALERT_FROM),
    summary: c"Counts distinct members seen in the last window seconds; reports a crossing.",
    complexity: c"O(log N) for N members, plus the members that aged out.",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::string(c"member"),
        ArgDoc::integer(c"window"),
        ArgDoc::integer(c"threshold").multiple(),
        alert::DOC,
    ],
    callback: callback_finding_keys::<MonDistinct>,
};

/// A parsed call; the member stays in the caller's arguments, `A` is how
/// an argument is given (the stream stays one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Distinct<'a, A> {
    pub window_ms: i64,
    pub expires_at_ms: i64,
    pub thresholds: Thresholds,
    pub alert: Option<Alert<'a, A>>,
}

impl<'a, A: AsRef<[u8]>> Distinct<'a, A> {
    /// `args` are the arguments after the key; `now_ms` the server clock.
    pub fn parse(key: &[u8], args: &'a [A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [member, window, tail @ ..] = args else {
            return Err(args::wrong_arity("mon.distinct"));
        };
        if tail.is_empty() {
            return Err(args::wrong_arity("mon.distinct"));
        }
        args::non_empty(member.as_ref(), "member")?;
        let (window_s, expires_at_ms) =
            args::seconds_from(window.as_ref(), "window", now_ms, "mon.distinct")?;
        let (thresholds, alert) = alert::after_thresholds(tail, key, &[], |_, _| Ok(()))?;
        Ok(Distinct {
            window_ms: window_s * 1000,
            expires_at_ms,
            thresholds,
            alert,
        })
    }
}

/// The command (its parsed calls borrow their arguments).
pub struct MonDistinct;

impl FindsKeys for MonDistinct {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        alert::key_positions(args, ALERT_FROM)
    }
}

impl Handler for MonDistinct {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::MON_DISTINCT_CALLS.bump();
        let now = ctx.now_ms();
        let request = Distinct::parse(args[1].as_bytes(), &args[2..], now)?;
        alert::check(request.alert.as_ref(), ctx)?;
        let (member, thresholds) = (args[2], request.thresholds.as_slice());
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        // WRONGTYPE before anything is written; decided before writing.
        let members = key.zset_len()?;
        let cutoff = rules::distinct_cutoff(now, request.window_ms);
        let aged = key.zset_up_to(cutoff);
        let prev = members - aged.len() as i64;
        // Only a member new to the count can cross: its last score is
        // looked up (another walk of a small set) only when it would.
        let if_new = rules::distinct(prev, true, thresholds);
        let record = (if_new.level > 0 && rules::arrives(key.zset_score(member), cutoff))
            .then(|| {
                Record::crossing(
                    thresholds,
                    if_new.level,
                    if_new.count,
                    Some(member.as_bytes()),
                )
            })
            .flatten();
        let alerted = alert::append(request.alert.as_ref(), ctx, args[1], record)?;

        if !aged.is_empty() {
            key.zset_remove(aged);
            target.notify(EventClass::SortedSet, c"zremrangebyscore");
            target.replicate(PlainWrite::ZsetDropUpTo(cutoff));
        }
        let (added, changed) = key.zset_add(now, member)?;
        if changed {
            target.notify(EventClass::SortedSet, c"zadd");
            target.replicate(PlainWrite::ZsetAdd { score: now, member });
        }
        key.set_expires_at_ms(request.expires_at_ms);
        target.notify(EventClass::Generic, c"expire");
        target.replicate(PlainWrite::ExpireAt(request.expires_at_ms));
        let distinct = rules::distinct(prev, added, thresholds);
        if distinct.level > 0 {
            stats::MON_DISTINCT_CROSSINGS.bump();
            target.notify(EventClass::String, c"mon.crossed");
        }
        if let Some(entry) = alerted {
            entry.propagate();
        }
        target.signal_modified();
        Ok(Reply::Integers(
            [distinct.count, distinct.level as i64].into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    #[test]
    fn errors_name_the_argument_in_order() {
        let error = |args: &[&str]| Distinct::parse(b"k", args, NOW).unwrap_err().to_string();
        assert!(error(&["", "60", "3"]).starts_with("ERR member "));
        assert!(error(&["", "0", "x"]).starts_with("ERR member "));
        assert!(error(&["card", "0", "3"]).starts_with("ERR window "));
        assert!(error(&["card", "60", "0"]).starts_with("ERR threshold #1 "));
        assert!(error(&["card", "60"]).contains("wrong number"));
        let call = Distinct::parse(b"k", &["card", "60", "3", "5"], NOW).unwrap();
        assert_eq!((call.window_ms, call.expires_at_ms), (60_000, NOW + 60_000));
    }
}
