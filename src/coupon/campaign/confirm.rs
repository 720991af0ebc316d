//! `COUPON.CONFIRM key claim`: the payment went through; the place is kept.

use super::claim_number;
use super::{rules, write};
use crate::args;
use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.confirm",
    // No deny-oom: a customer who has paid is confirmed even when the
    // server is full (a confirm adds no claim).
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: 3,
    keys: Keys::One(KeyAccess::UPDATE),
    summary: c"Confirms a held claim: 1 confirmed now, 0 already confirmed, -2 no place (the hold is released), -3 no live claim.",
    complexity: c"O(log N) for N live claims.",
    since: c"0.1.0",
    args: &[ArgDoc::KEY, ArgDoc::integer(c"claim")],
    callback: callback::<CouponConfirm>,
};

pub struct CouponConfirm;

impl Handler for CouponConfirm {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let [_, _, claim] = args else {
            return Err(args::wrong_arity("coupon.confirm"));
        };
        let claim = claim_number(claim.as_bytes(), "claim")?;
        let outcome = write::decide(ctx, args[1], |campaign, now| {
            Ok(rules::confirm(campaign, claim, now))
        })?;
        Ok(Reply::Integer(outcome.reply()))
    }
}
