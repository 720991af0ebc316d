//! `COUPON.ALTER key [LIMIT n] [PERUSER n] [HOLD seconds] [LEDGER stream]`:
//! changes a campaign's settings while the sale runs (a restock, a
//! smaller allocation, a new per-user rule). Nothing live is touched.

use super::ledger::Op;
use super::ledger_option::{self, LEDGER};
use super::rules::{self, Changes};
use super::write;
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.alter",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -4,
    keys: ledger_option::keys(KeyAccess::UPDATE, OPTIONS_FROM),
    summary: c"Changes a campaign's LIMIT, PERUSER or HOLD now; never below what is confirmed.",
    complexity: c"O(log N) for N claims.",
    since: c"0.3.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"limit").option(c"LIMIT"),
        ArgDoc::integer(c"peruser").option(c"PERUSER"),
        ArgDoc::integer(c"hold").option(c"HOLD"),
        ledger_option::DOC,
    ],
    callback: callback_finding_keys::<CouponAlter>,
};

/// Where the options start: right after the key.
const OPTIONS_FROM: usize = 2;

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alter<'a, A> {
    pub changes: Changes,
    pub ledger: Option<&'a A>,
}

impl<'a, A: AsRef<[u8]>> Alter<'a, A> {
    /// `args` are the arguments after the key. HOLD follows CREATE's rule
    /// (an expiry from `now_ms` within 64 bits).
    pub fn parse(args: &'a [A], now_ms: i64) -> Result<Self, ErrorReply> {
        let mut request = Alter {
            changes: Changes::default(),
            ledger: None,
        };
        args::options(
            args,
            &["LIMIT", "PERUSER", "HOLD", LEDGER],
            |option, value| {
                let changes = &mut request.changes;
                match option {
                    0 => changes.limit = Some(args::positive(value.as_ref(), "limit")?),
                    1 => {
                        changes.per_user = Some(args::positive(value.as_ref(), "peruser")?);
                        changes.per_user_first = changes.limit.is_none();
                    }
                    2 => {
                        let hold =
                            args::seconds_from(value.as_ref(), "hold", now_ms, "coupon.alter");
                        changes.hold_s = Some(hold?.0)
                    }
                    _ => request.ledger = Some(value),
                }
                Ok(())
            },
        )?;
        if request.changes == Changes::default() {
            return Err(ErrorReply::new(
                "ERR COUPON.ALTER needs LIMIT, PERUSER or HOLD",
            ));
        }
        Ok(request)
    }
}

/// The command.
pub struct CouponAlter;

impl FindsKeys for CouponAlter {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        ledger_option::key_positions(args, OPTIONS_FROM)
    }
}

impl Handler for CouponAlter {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let request = Alter::parse(&args[2..], ctx.now_ms())?;
        let ledger = request.ledger.copied();
        write::decide(ctx, args[1], ledger, Op::Released, |campaign, _| {
            rules::alter(campaign, request.changes)
        })?;
        Ok(Reply::Simple("OK"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn parse(args: &'static [&'static str]) -> Result<Changes, String> {
        Alter::parse(args, NOW)
            .map(|call| call.changes)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn any_of_the_three_in_any_order_and_case() {
        assert_eq!(
            parse(&["hold", "30", "LIMIT", "5"]),
            Ok(Changes {
                limit: Some(5),
                per_user: None,
                hold_s: Some(30),
                per_user_first: false,
            })
        );
        assert!(
            parse(&["PERUSER", "2", "LIMIT", "5"])
                .unwrap()
                .per_user_first
        );
        assert!(
            !parse(&["LIMIT", "5", "PERUSER", "2"])
                .unwrap()
                .per_user_first
        );
        assert!(parse(&["LEDGER", "l"])
            .unwrap_err()
            .contains("needs LIMIT, PERUSER or HOLD"));
        assert!(parse(&["LIMIT", "0"])
            .unwrap_err()
            .starts_with("ERR limit "));
        assert!(parse(&["PERUSER", "x"])
            .unwrap_err()
            .starts_with("ERR peruser "));
        assert!(parse(&["HOLD", "9223372036854775807"])
            .unwrap_err()
            .contains("hold is too large"));
        assert!(parse(&["LIMIT", "1", "limit", "2"])
            .unwrap_err()
            .contains("more than once"));
    }
}
