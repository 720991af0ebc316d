//! COUPON.ISSUE and COUPON.REVOKE when their key is a campaign: the set
//! commands hand over here, with the key already open.

use super::model::Issue;
use super::value::decide_on;
use crate::redis::{CommandKey, EventClass, OpenKey};
use crate::reply::ErrorReply;
use crate::stats;

/// Reserve and confirm in one step: the claim number, -1 or -2, counted
/// and signalled as ISSUE on a set is.
pub fn issue(
    target: CommandKey<'_>,
    key: &mut OpenKey<'_>,
    user: &[u8],
    limit: i64,
    now: i64,
) -> Result<i64, ErrorReply> {
    let outcome = decide_on(target, key, now, |campaign, now| {
        campaign.issue(user, limit, now)
    })?;
    Ok(match outcome {
        Issue::New { claim, sold_out } => {
            stats::COUPON_ISSUED.bump();
            if sold_out {
                target.notify(EventClass::Module, c"coupon.soldout");
            }
            claim as i64
        }
        Issue::UserFull => {
            stats::COUPON_DUPLICATES.bump();
            -1
        }
        Issue::SoldOut => {
            stats::COUPON_SOLDOUT.bump();
            -2
        }
    })
}

/// Releases every live claim of `user`; how many.
pub fn revoke(
    target: CommandKey<'_>,
    key: &mut OpenKey<'_>,
    user: &[u8],
    now: i64,
) -> Result<i64, ErrorReply> {
    let released = decide_on(target, key, now, |campaign, now| {
        Ok(campaign.revoke(user, now))
    })?;
    stats::COUPON_REVOKED.add(released as u64);
    Ok(released)
}
