//! `COUPON.REVOKE key user`: takes a coupon back, freeing its place (on a
//! campaign: every live claim of the user).

use super::backend;
use crate::args;
use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"coupon.revoke",
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: 3,
    keys: Keys::One(KeyAccess::DELETE),
    summary: c"Takes a user's coupon back, freeing its place.",
    complexity: c"O(1) on a set; O(K log N) on a campaign, for the user's K of N live claims.",
    since: c"0.1.0",
    args: &[ArgDoc::KEY, ArgDoc::string(c"user")],
    callback: callback::<CouponRevoke>,
};

/// A parsed call; the user stays in the caller's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revoke;

impl Revoke {
    /// `args` are the arguments after the key.
    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        let [user] = args else {
            return Err(args::wrong_arity("coupon.revoke"));
        };
        args::non_empty(user.as_ref(), "user")?;
        Ok(Revoke)
    }
}

/// The command.
pub struct CouponRevoke;

impl Handler for CouponRevoke {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        Revoke::parse(&args[2..])?;
        let removed = backend::revoke(ctx, args[1], args[2])?;
        stats::COUPON_REVOKED.add(removed);
        Ok(Reply::Integer(removed as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_an_empty_user() {
        assert!(Revoke::parse(&["u1"]).is_ok());
        assert!(Revoke::parse(&[""])
            .unwrap_err()
            .to_string()
            .contains("user"));
    }
}
