//! `CL.THROTTLE key max_burst count period [quantity] [BLOCK seconds]`:
//! redis-cell's rate limiter, argument for argument, with effects
//! replicated, and a penalty box for refused callers.

use super::gcra::{self, Rate};
use super::store;
use crate::args;
use crate::redis::{callback, Arg, ArgDoc, Command, CommandKey, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"cl.throttle",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -5,
    keys: Keys::One(KeyAccess::UPDATE),
    summary: c"GCRA rate limit: count per period, bursts of max_burst + 1, as redis-cell.",
    complexity: c"O(1)",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"max_burst"),
        ArgDoc::integer(c"count"),
        ArgDoc::integer(c"period"),
        ArgDoc::integer(c"quantity").optional(),
        ArgDoc::integer(c"block").option(c"BLOCK"),
    ],
    callback: callback::<ClThrottle>,
};

/// A limiter's `max_burst count period`, each checked as an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limit {
    pub max_burst: i64,
    pub count: i64,
    pub period_s: i64,
}

impl Limit {
    pub fn parse<A: AsRef<[u8]>>(max_burst: &A, count: &A, period: &A) -> Result<Self, ErrorReply> {
        Ok(Limit {
            max_burst: args::non_negative(max_burst.as_ref(), "max_burst")?,
            count: args::positive(count.as_ref(), "count")?,
            period_s: args::positive(period.as_ref(), "period")?,
        })
    }

    /// The limiter asked for `quantity`; errors name the argument whose
    /// product overflows.
    pub fn rate(&self, quantity: i64) -> Result<Rate, ErrorReply> {
        Rate::new(self.max_burst, self.count, self.period_s, quantity)
    }
}

/// The option CL.THROTTLE and CL.THROTTLEALL share.
pub const BLOCK: &str = "BLOCK";

/// `BLOCK seconds` at `now_ns`: the penalty in ns; `seconds` >= 1 and
/// `now + seconds` in ns must fit i64, else an error naming `block`.
pub fn parse_block(value: &[u8], now_ns: i64) -> Result<i64, ErrorReply> {
    let seconds = args::positive(value, "block")?;
    gcra::block_ns(seconds, now_ns).ok_or_else(|| {
        ErrorReply::new("ERR block is too large: now + block overflows in nanoseconds")
    })
}

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttle {
    pub rate: Rate,
    /// `BLOCK`'s penalty in ns, if given.
    pub block_ns: Option<i64>,
}

impl Throttle {
    /// `args` are the arguments after the key; `now_ns` the call's
    /// instant (`BLOCK` must fit after it).
    pub fn parse<A: AsRef<[u8]>>(args: &[A], now_ns: i64) -> Result<Self, ErrorReply> {
        let [max_burst, count, period, rest @ ..] = args else {
            return Err(args::wrong_arity("cl.throttle"));
        };
        let limit = Limit::parse(max_burst, count, period)?;
        // The positional quantity, unless the options start at once.
        let (quantity, options) = match rest {
            [first, options @ ..] if !first.as_ref().eq_ignore_ascii_case(BLOCK.as_bytes()) => {
                (args::non_negative(first.as_ref(), "quantity")?, options)
            }
            options => (1, options),
        };
        let rate = limit.rate(quantity)?;
        let mut block_ns = None;
        args::options(options, &[BLOCK], |_, value| {
            block_ns = Some(parse_block(value.as_ref(), now_ns)?);
            Ok(())
        })?;
        Ok(Throttle { rate, block_ns })
    }
}

/// The command.
pub struct ClThrottle;

impl Handler for ClThrottle {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::THROTTLE_CALLS.bump();
        // The call's instant, for BLOCK's check and before a lookup that
        // may take time (a big expired key deleted on the way).
        let now = ctx.now_ns();
        let request = Throttle::parse(&args[2..], now)?;
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        let decision =
            gcra::decide_blocking(key.read_integer()?, now, &request.rate, request.block_ns)?;

        if let Some(stored) = decision.store {
            store(target, &mut key, stored)?;
        }
        if decision.limited {
            if request.block_ns.is_some() && gcra::blockable(&decision) {
                stats::THROTTLE_BLOCKED.bump();
            }
            stats::THROTTLE_LIMITED.bump();
        } else {
            stats::THROTTLE_ALLOWED.bump();
        }
        Ok(Reply::Integers(decision.reply().into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000_000_000;

    fn error(args: &[&str]) -> String {
        Throttle::parse(args, NOW).unwrap_err().to_string()
    }

    #[test]
    fn quantity_defaults_to_one() {
        let rate = Throttle::parse(&["15", "30", "60"], NOW).unwrap().rate;
        assert_eq!(rate, Rate::new(15, 30, 60, 1).unwrap());
        assert_eq!(rate.limit, 16);
        assert_eq!(rate.emission_ns, 2_000_000_000);
        assert_eq!(
            Throttle::parse(&["0", "1", "1", "0"], NOW)
                .unwrap()
                .rate
                .increment_ns,
            0
        );
    }

    #[test]
    fn rejects_what_redis_cell_accepted() {
        for (args, name) in [
            (&["+5", "1", "1"][..], "max_burst"),
            (&["007", "1", "1"], "max_burst"),
            (&["-1", "1", "1"], "max_burst"),
            (&["0", "0", "1"], "count"),
            (&["0", "-3", "1"], "count"),
            (&["0", "1", "0"], "period"),
            (&["0", "1", "1.5"], "period"),
            (&["0", "1", "1", "-1"], "quantity"),
            (&["0", "1", "1", "\u{ff}"], "quantity"),
        ] {
            let error = error(args);
            assert!(
                error.starts_with(&format!("ERR {name} ")),
                "{args:?}: {error}"
            );
        }
    }

    #[test]
    fn reports_the_first_bad_argument_in_order() {
        assert!(error(&["-1", "0", "0", "-1"]).starts_with("ERR max_burst "));
        assert!(error(&["1", "0", "0", "-1"]).starts_with("ERR count "));
        assert!(error(&["1", "1", "0", "-1"]).starts_with("ERR period "));
        assert!(error(&["1", "1", "1", "-1"]).starts_with("ERR quantity "));
    }

    #[test]
    fn checks_the_argument_count() {
        assert!(error(&["1", "1"]).contains("wrong number"));
    }

    #[test]
    fn block_follows_the_quantity_or_stands_alone() {
        let parse = |args: &[&str]| Throttle::parse(args, NOW).unwrap();
        let with = parse(&["0", "1", "1", "2", "BLOCK", "30"]);
        assert_eq!(
            (with.rate.increment_ns, with.block_ns),
            (2_000_000_000, Some(30_000_000_000))
        );
        let alone = parse(&["0", "1", "1", "block", "1"]);
        assert_eq!(
            (alone.rate.increment_ns, alone.block_ns),
            (1_000_000_000, Some(1_000_000_000))
        );
        assert_eq!(parse(&["0", "1", "1"]).block_ns, None);
        for (args, expected) in [
            (
                &["0", "1", "1", "1", "BLOCK", "0"][..],
                "ERR block must be a positive integer",
            ),
            (
                &["0", "1", "1", "BLOCK", "-1"],
                "ERR block must be a positive integer",
            ),
            (
                &["0", "1", "1", "1", "BLOCK", "x"],
                "ERR block is not an integer",
            ),
            (
                &["0", "1", "1", "1", "BLOCK", "8000000000"],
                "ERR block is too large",
            ),
            (
                &["0", "1", "1", "1", "BLOCK"],
                "ERR option BLOCK needs a value",
            ),
            (
                &["0", "1", "1", "1", "BLOCK", "1", "block", "2"],
                "ERR option BLOCK is given more than once",
            ),
            (&["0", "1", "1", "1", "1"], "ERR unknown option '1'"),
            (
                &["0", "1", "1", "1", "HOLD", "1"],
                "ERR unknown option 'HOLD'",
            ),
            (&["0", "1", "1", "HOLD", "1"], "ERR quantity "),
            // Arguments in order: quantity (and the products) before BLOCK.
            (&["0", "1", "1", "-1", "BLOCK", "0"], "ERR quantity "),
            (
                &["0", "1", "9223372036854775807", "1", "BLOCK", "0"],
                "ERR period ",
            ),
        ] {
            let error = error(args);
            assert!(error.starts_with(expected), "{args:?}: {error}");
        }
    }
}
