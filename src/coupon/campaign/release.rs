//! `COUPON.RELEASE key claim`: the payment failed or the order was
//! cancelled; the place is free at once.

use super::claim_number;
use super::{rules, write};
use crate::args;
use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.release",
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: 3,
    keys: Keys::One(KeyAccess::DELETE),
    summary: c"Releases a live claim, held or confirmed: 1 released, 0 no live claim.",
    complexity: c"O(log N) for N live claims.",
    since: c"0.1.0",
    args: &[ArgDoc::KEY, ArgDoc::integer(c"claim")],
    callback: callback::<CouponRelease>,
};

pub struct CouponRelease;

impl Handler for CouponRelease {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let [_, _, claim] = args else {
            return Err(args::wrong_arity("coupon.release"));
        };
        let claim = claim_number(claim.as_bytes(), "claim")?;
        let outcome = write::decide(ctx, args[1], |campaign, now| {
            Ok(rules::release(campaign, claim, now))
        })?;
        Ok(Reply::Integer(outcome.reply()))
    }
}
