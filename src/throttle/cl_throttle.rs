//! `CL.THROTTLE key max_burst count period [quantity]`: redis-cell's rate
//! limiter, argument for argument, with effects replicated.

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

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttle {
    pub rate: Rate,
}

impl Throttle {
    /// `args` are the arguments after the key.
    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        let (max_burst, count, period, quantity) = match args {
            [max_burst, count, period] => (max_burst, count, period, None),
            [max_burst, count, period, quantity] => (max_burst, count, period, Some(quantity)),
            _ => return Err(args::wrong_arity("cl.throttle")),
        };
        let limit = Limit::parse(max_burst, count, period)?;
        let quantity = match quantity {
            Some(quantity) => args::non_negative(quantity.as_ref(), "quantity")?,
            None => 1,
        };
        Ok(Throttle {
            rate: limit.rate(quantity)?,
        })
    }
}

/// The command.
pub struct ClThrottle;

impl Handler for ClThrottle {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::THROTTLE_CALLS.bump();
        let request = Throttle::parse(&args[2..])?;
        // The call's instant, before a lookup that may take time (a big
        // expired key deleted on the way).
        let now = ctx.now_ns();
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        let decision = gcra::decide(key.read_integer()?, now, &request.rate)?;

        if let Some(stored) = decision.store {
            store(target, &mut key, stored)?;
        }
        if decision.limited {
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

    fn error(args: &[&str]) -> String {
        Throttle::parse(args).unwrap_err().to_string()
    }

    #[test]
    fn quantity_defaults_to_one() {
        let rate = Throttle::parse(&["15", "30", "60"]).unwrap().rate;
        assert_eq!(rate, Rate::new(15, 30, 60, 1).unwrap());
        assert_eq!(rate.limit, 16);
        assert_eq!(rate.emission_ns, 2_000_000_000);
        assert_eq!(
            Throttle::parse(&["0", "1", "1", "0"])
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
        assert!(error(&["1", "1", "1", "1", "1"]).contains("wrong number"));
    }
}
