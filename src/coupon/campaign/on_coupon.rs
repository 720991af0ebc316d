//! COUPON.ISSUE and COUPON.REVOKE when their key is a campaign: decided by
//! the campaign's rules, carried out by its pipeline, answered with the
//! outcomes the set backend gives.

use super::encoding::CAMPAIGN;
use super::ledger::Op;
use super::{rules, write};
use crate::coupon::outcome::Coupon;
use crate::redis::{Arg, Ctx, OpenKey};
use crate::reply::ErrorReply;

/// Does the open key hold a campaign (rather than a set, or nothing)?
pub fn is_campaign(key: &OpenKey<'_>) -> bool {
    matches!(key.value(&CAMPAIGN), Ok(Some(_)))
}

/// Reserve and confirm in one step.
pub fn issue(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    user: &[u8],
    limit: i64,
    ledger: Option<Arg<'_>>,
) -> Result<Coupon, ErrorReply> {
    write::decide(ctx, name, ledger, Op::Released, |campaign, now| {
        rules::issue(campaign, user, limit, now)
    })
}

/// Releases every live claim of `user`; how many.
pub fn revoke(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    user: &[u8],
    ledger: Option<Arg<'_>>,
) -> Result<u64, ErrorReply> {
    let revocation = write::decide(ctx, name, ledger, Op::Revoked, |campaign, now| {
        Ok(rules::revoke(campaign, user, now))
    })?;
    Ok(revocation.released)
}
