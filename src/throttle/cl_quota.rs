//! `CL.QUOTA key limit window [quantity] [TZ zone]`: at most `limit` units
//! per window (seconds from the call that starts it, or a calendar period
//! of a zone), refusing what does not fit, with CL.THROTTLE's reply. The
//! key is a plain count, so MON.DECRCLAMP refunds units.

use super::quota::{self, Stored};
use crate::args;
use crate::calendar::Zoned;
use crate::redis::{
    callback, Arg, ArgDoc, Command, CommandKey, Ctx, EventClass, Handler, KeyAccess, Keys,
    PlainWrite,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"cl.quota",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -4,
    keys: Keys::One(KeyAccess::UPDATE),
    summary: c"Fixed-window quota: at most limit units per window or calendar period; refuses what does not fit.",
    complexity: c"O(1)",
    since: c"0.4.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"limit"),
        ArgDoc::string(c"window"),
        ArgDoc::integer(c"quantity").optional(),
        ArgDoc::string(c"zone").option(c"TZ"),
    ],
    callback: callback::<ClQuota>,
};

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub limit: i64,
    pub quantity: i64,
    /// Where a window this call starts ends (unix ms).
    pub new_window_ends_ms: i64,
}

impl Quota {
    /// `args` are the arguments after the key; `now_ms` the server clock.
    pub fn parse<A: AsRef<[u8]>>(args: &[A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [limit, window, tail @ ..] = args else {
            return Err(args::wrong_arity("cl.quota"));
        };
        let limit = args::positive(limit.as_ref(), "limit")?;
        let mut window = Zoned::parse(window.as_ref(), now_ms, "cl.quota")?;
        // A first token that names no option is the quantity.
        let (quantity, options) = match tail {
            [first, rest @ ..] if !first.as_ref().eq_ignore_ascii_case(b"TZ") => {
                (args::non_negative(first.as_ref(), "quantity")?, rest)
            }
            options => (1, options),
        };
        args::options(options, &["TZ"], |_, tz| {
            window = window.in_zone(tz.as_ref())?;
            Ok(())
        })?;
        Ok(Quota {
            limit,
            quantity,
            new_window_ends_ms: window.ends_at_ms(now_ms)?,
        })
    }
}

/// The command.
pub struct ClQuota;

impl Handler for ClQuota {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::QUOTA_CALLS.bump();
        let now_ms = ctx.now_ms();
        let request = Quota::parse(&args[2..], now_ms)?;
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        let stored = key.read_integer()?.map(|used| Stored {
            used,
            expires_at_ms: key.expires_at_ms(),
        });
        let decision = quota::decide(
            stored,
            request.limit,
            request.quantity,
            now_ms,
            request.new_window_ends_ms,
        );

        if let Some(write) = decision.write {
            key.write_integer(write.used)?;
            target.notify(EventClass::String, c"incrby");
            if write.starts_window {
                key.set_expires_at_ms(write.expires_at_ms);
                target.notify(EventClass::Generic, c"expire");
            }
            // The count and its window's absolute end, as one write.
            target.replicate(PlainWrite::SetExpiringAt {
                value: write.used,
                at_ms: write.expires_at_ms,
            });
            target.signal_modified();
        }
        if decision.limited {
            stats::QUOTA_LIMITED.bump();
        } else {
            stats::QUOTA_ALLOWED.bump();
        }
        Ok(Reply::Integers(decision.reply.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn error(args: &[&str]) -> String {
        Quota::parse(args, NOW).unwrap_err().to_string()
    }

    #[test]
    fn parses_seconds_units_quantity_and_zone() {
        let q = Quota::parse(&["5", "60"], NOW).unwrap();
        assert_eq!(
            (q.limit, q.quantity, q.new_window_ends_ms),
            (5, 1, NOW + 60_000)
        );
        let q = Quota::parse(&["5", "day", "0", "tz", "Asia/Seoul"], NOW).unwrap();
        assert_eq!(q.quantity, 0);
        // 2023-11-14T22:13:20Z is 07:13:20 in Seoul; its midnight is 15:00 UTC.
        assert_eq!(q.new_window_ends_ms, 1_700_060_400_000);
        let q = Quota::parse(&["5", "DAY", "TZ", "Asia/Seoul"], NOW).unwrap();
        assert_eq!(q.quantity, 1);
    }

    #[test]
    fn names_the_first_bad_argument() {
        assert!(error(&["0", "x", "-1"]).starts_with("ERR limit "));
        assert!(error(&["1", "x", "-1"]).starts_with("ERR window "));
        assert!(error(&["1", "9223372036854775807"]).contains("window is too large"));
        assert!(error(&["1", "day", "-1", "TZ", "Nowhere"]).starts_with("ERR quantity "));
        assert!(error(&["1", "day", "1", "TZ", "Nowhere"]).starts_with("ERR tz "));
        assert!(error(&["1", "60", "TZ", "UTC"]).starts_with("ERR tz "));
        assert_eq!(
            error(&["1", "60", "1", "FOO", "x"]),
            "ERR unknown option 'FOO'"
        );
        assert_eq!(error(&["1", "day", "TZ"]), "ERR option TZ needs a value");
        assert!(error(&["1"]).contains("wrong number"));
    }
}
