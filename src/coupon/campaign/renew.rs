//! `COUPON.RENEW key claim [HOLD seconds] [LEDGER stream]`: a live hold
//! ends `HOLD` from now instead (the campaign's hold by default; sooner
//! or later): the heartbeat of a lease.

use super::claim_number;
use super::ledger::Op;
use super::ledger_option::{self, LEDGER};
use super::{rules, write};
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.renew",
    // No deny-oom: a running job keeps its slot when the server is full
    // (a renewal adds no claim).
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: -3,
    keys: ledger_option::keys(KeyAccess::UPDATE, OPTIONS_FROM),
    summary: c"Renews a held claim: its new expires_at_ms, 0 when it is confirmed, -3 when there is no live claim.",
    complexity: c"O(log N) for N live claims.",
    since: c"0.4.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"claim"),
        ArgDoc::integer(c"hold").option(c"HOLD"),
        ledger_option::DOC,
    ],
    callback: callback_finding_keys::<CouponRenew>,
};

/// Where the options start: after the claim.
const OPTIONS_FROM: usize = 3;

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renew<'a, A> {
    pub claim: u64,
    /// The hold's new end when HOLD was given; else the campaign's hold
    /// from now.
    pub hold_until_ms: Option<i64>,
    pub ledger: Option<&'a A>,
}

impl<'a, A: AsRef<[u8]>> Renew<'a, A> {
    /// `args` are the arguments after the key.
    pub fn parse(args: &'a [A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [claim, options @ ..] = args else {
            return Err(args::wrong_arity("coupon.renew"));
        };
        let mut request = Renew {
            claim: claim_number(claim.as_ref(), "claim")?,
            hold_until_ms: None,
            ledger: None,
        };
        args::options(options, &["HOLD", LEDGER], |option, value| {
            match option {
                0 => {
                    let hold = args::seconds_from(value.as_ref(), "hold", now_ms, "coupon.renew");
                    request.hold_until_ms = Some(hold?.1)
                }
                _ => request.ledger = Some(value),
            }
            Ok(())
        })?;
        Ok(request)
    }
}

/// The command.
pub struct CouponRenew;

impl FindsKeys for CouponRenew {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        ledger_option::key_positions(args, OPTIONS_FROM)
    }
}

impl Handler for CouponRenew {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let request = Renew::parse(&args[2..], ctx.now_ms())?;
        let outcome = write::decide(
            ctx,
            args[1],
            request.ledger.copied(),
            Op::Released,
            |campaign, now| {
                let until = request.hold_until_ms.unwrap_or_else(|| {
                    args::span_end_ms(now, campaign.settings().hold_s).unwrap_or(i64::MAX)
                });
                Ok(rules::renew(campaign, request.claim, until, now))
            },
        )?;
        Ok(Reply::Integer(outcome.reply()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn error(args: &[&str]) -> String {
        Renew::parse(args, NOW).unwrap_err().to_string()
    }

    #[test]
    fn parses_the_claim_and_options() {
        let renew = Renew::parse(&["7", "hold", "30", "LEDGER", "l"], NOW).unwrap();
        assert_eq!((renew.claim, renew.hold_until_ms), (7, Some(NOW + 30_000)));
        assert_eq!(renew.ledger, Some(&"l"));
        assert_eq!(Renew::parse(&["7"], NOW).unwrap().hold_until_ms, None);
    }

    #[test]
    fn names_the_first_bad_argument() {
        assert!(error(&["0", "HOLD", "0"]).starts_with("ERR claim "));
        assert!(error(&["x"]).starts_with("ERR claim "));
        assert!(error(&["1", "HOLD", "0", "FOO", "1"]).starts_with("ERR hold "));
        assert!(error(&["1", "HOLD", "9223372036854775807"]).contains("hold is too large"));
        assert_eq!(error(&["1", "FOO", "1"]), "ERR unknown option 'FOO'");
        assert_eq!(
            error(&["1", "HOLD", "1", "hold", "2"]),
            "ERR option HOLD is given more than once"
        );
    }
}
