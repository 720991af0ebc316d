//! `COUPON.REVOKE key user [LEDGER stream]`: takes a coupon back, freeing
//! its place (on a campaign: every live claim of the user, each recorded
//! `revoked` in its ledger).

use super::backend;
use super::campaign::ledger_option;
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"coupon.revoke",
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: -3,
    keys: ledger_option::keys(KeyAccess::DELETE, OPTIONS_FROM),
    summary: c"Takes a user's coupon back, freeing its place.",
    complexity: c"O(1) on a set; O(K log N) on a campaign, for the user's K of N live claims.",
    since: c"0.1.0",
    args: &[ArgDoc::KEY, ArgDoc::string(c"user"), ledger_option::DOC],
    callback: callback_finding_keys::<CouponRevoke>,
};

/// Where the options start: after the user.
const OPTIONS_FROM: usize = 3;

/// A parsed call; the user stays in the caller's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revoke<'a, A> {
    pub ledger: Option<&'a A>,
}

impl<'a, A: AsRef<[u8]>> Revoke<'a, A> {
    /// `args` are the arguments after the key.
    pub fn parse(args: &'a [A]) -> Result<Self, ErrorReply> {
        let [user, options @ ..] = args else {
            return Err(args::wrong_arity("coupon.revoke"));
        };
        args::non_empty(user.as_ref(), "user")?;
        let ledger = ledger_option::only_ledger(options)?;
        Ok(Revoke { ledger })
    }
}

/// The command.
pub struct CouponRevoke;

impl FindsKeys for CouponRevoke {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        ledger_option::key_positions(args, OPTIONS_FROM)
    }
}

impl Handler for CouponRevoke {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let request = Revoke::parse(&args[2..])?;
        let removed = backend::revoke(ctx, args[1], args[2], request.ledger.copied())?;
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
