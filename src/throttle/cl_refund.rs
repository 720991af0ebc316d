//! `CL.REFUND key max_burst count period quantity`: gives `quantity` back
//! to a CL.THROTTLE (or CL.THROTTLEALL) cell: reserve the most a request
//! may cost, refund the rest once its cost is known.

use super::cl_throttle::Limit;
use super::gcra::{self, Rate, Settle};
use super::store;
use crate::args;
use crate::redis::{
    callback, Arg, ArgDoc, Command, CommandKey, Ctx, EventClass, Handler, KeyAccess, Keys,
    PlainWrite,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"cl.refund",
    // A refund never needs memory: not refused under maxmemory.
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: 6,
    keys: Keys::One(KeyAccess::UPDATE),
    summary: c"Gives quantity back to a GCRA limiter, never above its burst: reserve first, settle after.",
    complexity: c"O(1)",
    since: c"0.4.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"max_burst"),
        ArgDoc::integer(c"count"),
        ArgDoc::integer(c"period"),
        ArgDoc::integer(c"quantity"),
    ],
    callback: callback::<ClRefund>,
};

/// A parsed call: the limiter with the quantity to give back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refund {
    pub rate: Rate,
}

impl Refund {
    /// `args` are the arguments after the key: CL.THROTTLE's, with a
    /// quantity that must be given and positive.
    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        let [max_burst, count, period, quantity] = args else {
            return Err(args::wrong_arity("cl.refund"));
        };
        let limit = Limit::parse(max_burst, count, period)?;
        let quantity = args::positive(quantity.as_ref(), "quantity")?;
        Ok(Refund {
            rate: limit.rate(quantity)?,
        })
    }
}

/// The command.
pub struct ClRefund;

impl Handler for ClRefund {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let request = Refund::parse(&args[2..])?;
        let now = ctx.now_ns();
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        let (decision, settle) = gcra::refund(key.read_integer()?, now, &request.rate);
        match settle {
            Settle::Nothing => {}
            Settle::Store(stored) => {
                store(target, &mut key, stored)?;
                stats::THROTTLE_REFUNDS.bump();
            }
            Settle::Delete => {
                key.delete();
                target.notify(EventClass::Generic, c"del");
                target.replicate(PlainWrite::Delete);
                target.signal_modified();
                stats::THROTTLE_REFUNDS.bump();
            }
        }
        Ok(Reply::Integers(decision.reply().into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(args: &[&str]) -> String {
        Refund::parse(args).unwrap_err().to_string()
    }

    #[test]
    fn takes_throttle_arguments_with_a_positive_quantity() {
        let rate = Refund::parse(&["2", "1", "60", "3"]).unwrap().rate;
        assert_eq!(rate, Rate::new(2, 1, 60, 3).unwrap());
        for (args, expected) in [
            (&["-1", "1", "1", "1"][..], "ERR max_burst "),
            (&["1", "0", "1", "1"], "ERR count "),
            (&["1", "1", "0", "1"], "ERR period "),
            (
                &["1", "1", "1", "0"],
                "ERR quantity must be a positive integer",
            ),
            (&["1", "1", "1", "-1"], "ERR quantity "),
            (&["1", "1", "1", "+1"], "ERR quantity "),
            (
                &["1", "1", "1", "9223372036854775807"],
                "ERR quantity is too large",
            ),
            (&["1", "1", "9223372036854775807", "0"], "ERR quantity "),
            (
                &["1", "1", "9223372036854775807", "1"],
                "ERR period is too large",
            ),
            (&["1", "1", "1"], "wrong number"),
            (&["1", "1", "1", "1", "1"], "wrong number"),
        ] {
            let error = error(args);
            assert!(error.contains(expected), "{args:?}: {error}");
        }
    }
}
