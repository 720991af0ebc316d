//! `COUPON.RELEASE key claim [LEDGER stream]`: the payment failed or the
//! order was cancelled; the place is free at once.

use super::claim_number;
use super::ledger::Op;
use super::ledger_option;
use super::{rules, write};
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::reply::{CommandResult, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.release",
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: -3,
    keys: ledger_option::keys(KeyAccess::DELETE, OPTIONS_FROM),
    summary: c"Releases a live claim, held or confirmed: 1 released, 0 no live claim.",
    complexity: c"O(log N) for N live claims.",
    since: c"0.1.0",
    args: &[ArgDoc::KEY, ArgDoc::integer(c"claim"), ledger_option::DOC],
    callback: callback_finding_keys::<CouponRelease>,
};

/// Where the options start: after the claim.
const OPTIONS_FROM: usize = 3;

pub struct CouponRelease;

impl FindsKeys for CouponRelease {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        ledger_option::key_positions(args, OPTIONS_FROM)
    }
}

impl Handler for CouponRelease {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let [_, _, claim, options @ ..] = args else {
            return Err(args::wrong_arity("coupon.release"));
        };
        let claim = claim_number(claim.as_bytes(), "claim")?;
        let ledger = ledger_option::only_ledger(options)?.copied();
        let outcome = write::decide(ctx, args[1], ledger, Op::Released, |campaign, now| {
            Ok(rules::release(campaign, claim, now))
        })?;
        Ok(Reply::Integer(outcome.reply()))
    }
}
