//! `MON.DISTINCT key member window threshold [threshold ...]`: distinct
//! members seen in the last `window` seconds (cards per customer,
//! customers per card), on a plain sorted set scored by when each member
//! was last seen, and the first crossing of a threshold.

use super::rules;
use super::thresholds::Thresholds;
use crate::args;
use crate::redis::{
    callback, Arg, ArgDoc, Command, CommandKey, Ctx, Effect, EventClass, Handler, KeyAccess, Keys,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"mon.distinct",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -5,
    keys: Keys::One(KeyAccess::UPDATE),
    summary: c"Counts distinct members seen in the last window seconds; reports a crossing.",
    complexity: c"O(log N) for N members, plus the members that aged out.",
    args: &[
        ArgDoc::KEY,
        ArgDoc::string(c"member"),
        ArgDoc::integer(c"window"),
        ArgDoc::integer(c"threshold").multiple(),
    ],
    callback: callback::<MonDistinct>,
};

/// A parsed call; the member stays in the caller's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonDistinct {
    pub window_ms: i64,
    pub expires_at_ms: i64,
    pub thresholds: Thresholds,
}

impl MonDistinct {
    /// `args` are the arguments after the key; `now_ms` the server clock.
    pub fn parse<A: AsRef<[u8]>>(args: &[A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [member, window, thresholds @ ..] = args else {
            return Err(args::wrong_arity("mon.distinct"));
        };
        if thresholds.is_empty() {
            return Err(args::wrong_arity("mon.distinct"));
        }
        args::non_empty(member.as_ref(), "member")?;
        let (window_s, expires_at_ms) =
            args::seconds_from(window.as_ref(), "window", now_ms, "mon.distinct")?;
        Ok(MonDistinct {
            window_ms: window_s * 1000,
            expires_at_ms,
            thresholds: Thresholds::parse(thresholds)?,
        })
    }
}

impl Handler for MonDistinct {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::MON_DISTINCT_CALLS.bump();
        let now = ctx.now_ms();
        let request = MonDistinct::parse(&args[2..], now)?;
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        // WRONGTYPE before anything is written.
        let members = key.zset_len()?;
        let cutoff = rules::distinct_cutoff(now, request.window_ms);
        let dropped = key.zset_drop_up_to(cutoff);
        if dropped > 0 {
            target.notify(EventClass::SortedSet, c"zremrangebyscore");
            target.replicate(Effect::ZsetDropUpTo(cutoff));
        }
        let prev = members - dropped as i64;
        let (added, changed) = key.zset_add(now, args[2])?;
        if changed {
            target.notify(EventClass::SortedSet, c"zadd");
            target.replicate(Effect::ZsetAdd {
                score: now,
                member: args[2],
            });
        }
        key.set_expires_at_ms(request.expires_at_ms);
        target.notify(EventClass::Generic, c"expire");
        target.replicate(Effect::ExpireAt(request.expires_at_ms));
        target.signal_modified();
        let distinct = rules::distinct(prev, added, request.thresholds.as_slice());
        if distinct.level > 0 {
            stats::MON_DISTINCT_CROSSINGS.bump();
            target.notify(EventClass::String, c"mon.crossed");
        }
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
        let error = |args: &[&str]| MonDistinct::parse(args, NOW).unwrap_err().to_string();
        assert!(error(&["", "60", "3"]).starts_with("ERR member "));
        assert!(error(&["", "0", "x"]).starts_with("ERR member "));
        assert!(error(&["card", "0", "3"]).starts_with("ERR window "));
        assert!(error(&["card", "60", "0"]).starts_with("ERR threshold #1 "));
        assert!(error(&["card", "60"]).contains("wrong number"));
        let call = MonDistinct::parse(&["card", "60", "3", "5"], NOW).unwrap();
        assert_eq!((call.window_ms, call.expires_at_ms), (60_000, NOW + 60_000));
    }
}
