//! Where a coupon key keeps its winners: a plain set (SCARD, SISMEMBER
//! work on it), or a campaign. COUPON.ISSUE and COUPON.REVOKE ask here,
//! once, and get one outcome type whichever it is; each backend fires its
//! own keyspace events.

use super::outcome::Coupon;
use super::set::{self, IssueStep};
use crate::coupon::campaign::on_coupon;
use crate::redis::{Arg, CommandKey, Ctx, EventClass, SetCall};
use crate::reply::ErrorReply;

/// A set keeps no ledger: naming one is an error (after the stream's own
/// check, as on a campaign).
fn no_ledger(ctx: Ctx<'_>, ledger: Option<Arg<'_>>) -> Result<(), ErrorReply> {
    match ledger {
        Some(stream) => {
            CommandKey::new(ctx, stream).require_stream()?;
            Err(ErrorReply::new(
                "ERR ledger: the key is no campaign and keeps no ledger",
            ))
        }
        None => Ok(()),
    }
}

/// Issues one coupon to `user` out of `limit`; a campaign names its
/// `ledger`.
pub fn issue(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    user: Arg<'_>,
    limit: i64,
    ledger: Option<Arg<'_>>,
) -> Result<Coupon, ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let key = target.open();
    if on_coupon::is_campaign(&key) {
        drop(key);
        return on_coupon::issue(ctx, name, user.as_bytes(), limit, ledger);
    }
    no_ledger(ctx, ledger)?;
    let issued = key.set_len()?;
    // Nested set calls need the key closed.
    drop(key);
    let already_holds = match set::issue_step(issued, limit) {
        IssueStep::AddIfAbsent => target.set_call(SetCall::Add, user)? == 0,
        IssueStep::AskMembership => target.set_call(SetCall::IsMember, user)? == 1,
    };
    let outcome = set::coupon(already_holds, issued, limit);
    if let Coupon::Issued { sold_out: true, .. } = outcome {
        target.notify(EventClass::Set, c"coupon.soldout");
    }
    Ok(outcome)
}

/// Takes `user`'s coupons back: how many (a set holds at most one).
pub fn revoke(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    user: Arg<'_>,
    ledger: Option<Arg<'_>>,
) -> Result<u64, ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let key = target.open();
    if on_coupon::is_campaign(&key) {
        drop(key);
        return on_coupon::revoke(ctx, name, user.as_bytes(), ledger);
    }
    no_ledger(ctx, ledger)?;
    // The type check (WRONGTYPE) without a nested call; an empty key has
    // no winner to remove.
    if key.set_len()? == 0 {
        return Ok(0);
    }
    drop(key);
    // SREM removes exactly a winner, and signals only then.
    Ok(target.set_call(SetCall::Remove, user)? as u64)
}
