//! `COUPON.RECLAIM key [COUNT n] [LEDGER stream]`: reclaims now up to `n`
//! expired holds, the oldest first, so that a worker calling it every
//! second brings each expiry's ledger entry within about a second, with no
//! other traffic.

use super::ledger::Op;
use super::ledger_option::{self, LEDGER};
use super::{rules, write};
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"coupon.reclaim",
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: -2,
    keys: ledger_option::keys(KeyAccess::DELETE, OPTIONS_FROM),
    summary: c"Reclaims up to COUNT expired holds now, the oldest first: how many.",
    complexity: c"O(K log N) for K holds reclaimed of N claims.",
    since: c"0.3.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"count").option(c"COUNT"),
        ledger_option::DOC,
    ],
    callback: callback_finding_keys::<CouponReclaim>,
};

/// Where the options start: right after the key.
const OPTIONS_FROM: usize = 2;

/// COUNT's default and its largest value.
const DEFAULT_COUNT: usize = 100;
const MAX_COUNT: i64 = 10_000;

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reclaim<'a, A> {
    pub count: usize,
    pub ledger: Option<&'a A>,
}

impl<'a, A: AsRef<[u8]>> Reclaim<'a, A> {
    /// `args` are the arguments after the key.
    pub fn parse(args: &'a [A]) -> Result<Self, ErrorReply> {
        let mut request = Reclaim {
            count: DEFAULT_COUNT,
            ledger: None,
        };
        args::options(args, &["COUNT", LEDGER], |option, value| {
            match option {
                0 => match args::positive(value.as_ref(), "count")? {
                    n @ 1..=MAX_COUNT => request.count = n as usize,
                    _ => return Err(ErrorReply::new("ERR count must be at most 10000")),
                },
                _ => request.ledger = Some(value),
            }
            Ok(())
        })?;
        Ok(request)
    }
}

/// The command.
pub struct CouponReclaim;

impl FindsKeys for CouponReclaim {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        ledger_option::key_positions(args, OPTIONS_FROM)
    }
}

impl Handler for CouponReclaim {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let request = Reclaim::parse(&args[2..])?;
        let ledger = request.ledger.copied();
        let reclaimed = write::decide(ctx, args[1], ledger, Op::Released, |campaign, now| {
            Ok(rules::reclaim_expired(campaign, request.count, now))
        })?;
        stats::COUPON_RECLAIMED.add(reclaimed);
        Ok(Reply::Integer(reclaimed as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &'static [&'static str]) -> Result<Reclaim<'static, &'static str>, String> {
        Reclaim::parse(args).map_err(|error| error.to_string())
    }

    #[test]
    fn count_defaults_to_100_and_stops_at_10000() {
        assert_eq!(parse(&[]).unwrap().count, 100);
        assert_eq!(parse(&["count", "10000"]).unwrap().count, 10_000);
        assert_eq!(parse(&["LEDGER", "l"]).unwrap().ledger, Some(&"l"));
        assert!(parse(&["COUNT", "10001"])
            .unwrap_err()
            .starts_with("ERR count "));
        assert!(parse(&["COUNT", "0"])
            .unwrap_err()
            .starts_with("ERR count "));
        assert!(parse(&["COUNT"])
            .unwrap_err()
            .contains("COUNT needs a value"));
    }
}
