//! `COUPON.CONFIRM key claim [QTY m] [LEDGER stream]`: the payment went
//! through; the place is kept, with `m` of its units (default all; the
//! others are free at once).

use super::claim_number;
use super::ledger::Op;
use super::ledger_option::{self, LEDGER};
use super::{rules, write};
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::reply::{CommandResult, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.confirm",
    // No deny-oom: a customer who has paid is confirmed even when the
    // server is full (a confirm adds no claim).
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: -3,
    keys: ledger_option::keys(KeyAccess::UPDATE, OPTIONS_FROM),
    summary: c"Confirms a held claim with QTY of its units (default all): 1 confirmed now, 0 already confirmed, -2 no place (the hold is released), -3 no live claim.",
    complexity: c"O(log N) for N live claims.",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"claim"),
        ArgDoc::integer(c"qty").option(c"QTY"),
        ledger_option::DOC,
    ],
    callback: callback_finding_keys::<CouponConfirm>,
};

/// Where the options start: after the claim.
const OPTIONS_FROM: usize = 3;

pub struct CouponConfirm;

impl FindsKeys for CouponConfirm {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        ledger_option::key_positions(args, OPTIONS_FROM)
    }
}

impl Handler for CouponConfirm {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let [_, _, claim, options @ ..] = args else {
            return Err(args::wrong_arity("coupon.confirm"));
        };
        let claim = claim_number(claim.as_bytes(), "claim")?;
        let (mut units, mut ledger) = (None, None);
        args::options(options, &["QTY", LEDGER], |option, value| {
            match option {
                0 => units = Some(args::positive(value.as_bytes(), "qty")? as u64),
                _ => ledger = Some(*value),
            }
            Ok(())
        })?;
        let outcome = write::decide(ctx, args[1], ledger, Op::Released, |campaign, now| {
            rules::confirm(campaign, claim, units, now)
        })?;
        Ok(Reply::Integer(outcome.reply()))
    }
}
