//! COUPON.ISSUE and COUPON.REVOKE: first-come-first-served coupons kept as a
//! plain set of winners.

use super::Command;
use crate::args::{CouponIssue, CouponRevoke};
use crate::reply::{CommandResult, Reply};
use crate::rules::{self, Coupon};
use crate::stats;
use crate::store::{Arg, Ctx, EventClass, KeyRef, SetCall};

pub struct IssueCommand;

impl Command for IssueCommand {
    fn run(ctx: Ctx, argv: &[Arg]) -> CommandResult {
        stats::COUPON_ISSUE_CALLS.bump();
        let request = CouponIssue::parse(&argv[2..])?;
        let (key, user) = (KeyRef::new(ctx, argv[1]), argv[2]);
        let issued = key.open().set_len()?;
        // While places are left, SADD is the membership check: it writes
        // only a user who does not hold one yet, exactly when the rule
        // below issues. Once sold out nothing may be written, so ask.
        let already_holds = if issued < request.limit {
            key.set_call(SetCall::Add, user)? == 0
        } else {
            key.set_call(SetCall::IsMember, user)? == 1
        };
        let outcome = rules::coupon(already_holds, issued, request.limit);
        match outcome {
            Coupon::Issued { sold_out, .. } => {
                stats::COUPON_ISSUED.bump();
                if sold_out {
                    key.notify(EventClass::Set, c"coupon.soldout");
                }
            }
            Coupon::AlreadyHeld => stats::COUPON_DUPLICATES.bump(),
            Coupon::SoldOut => stats::COUPON_SOLDOUT.bump(),
        }
        Ok(Reply::Integer(outcome.reply()))
    }
}

pub struct RevokeCommand;

impl Command for RevokeCommand {
    fn run(ctx: Ctx, argv: &[Arg]) -> CommandResult {
        CouponRevoke::parse(&argv[2..])?;
        let key = KeyRef::new(ctx, argv[1]);
        if key.open().set_len()? == 0 {
            return Ok(Reply::Integer(0));
        }
        let removed = key.set_call(SetCall::Remove, argv[2])?;
        if removed == 1 {
            stats::COUPON_REVOKED.bump();
        }
        Ok(Reply::Integer(removed))
    }
}
