//! `COUPON.ISSUE key user limit [LEDGER stream]`: one coupon per user, at
//! most `limit`, the winners kept as a plain set (or a campaign's
//! confirmed claims, when the key is a campaign, which names its ledger).

use super::backend;
use super::campaign::ledger_option;
use super::outcome::Coupon;
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"coupon.issue",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -4,
    keys: ledger_option::keys(KeyAccess::INSERT, OPTIONS_FROM),
    summary: c"Issues one coupon per user, at most limit: rank, -1 (holds one) or -2 (sold out).",
    complexity: c"O(1) on a set; O(log N) for N live claims on a campaign.",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::string(c"user"),
        ArgDoc::integer(c"limit"),
        ledger_option::DOC,
    ],
    callback: callback_finding_keys::<CouponIssue>,
};

/// Where the options start: after the limit.
const OPTIONS_FROM: usize = 4;

/// A parsed call; the user stays in the caller's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issue<'a, A> {
    pub limit: i64,
    pub ledger: Option<&'a A>,
}

impl<'a, A: AsRef<[u8]>> Issue<'a, A> {
    /// `args` are the arguments after the key.
    pub fn parse(args: &'a [A]) -> Result<Self, ErrorReply> {
        let [user, limit, options @ ..] = args else {
            return Err(args::wrong_arity("coupon.issue"));
        };
        args::non_empty(user.as_ref(), "user")?;
        let limit = args::positive(limit.as_ref(), "limit")?;
        let ledger = ledger_option::only_ledger(options)?;
        Ok(Issue { limit, ledger })
    }
}

/// The command.
pub struct CouponIssue;

impl FindsKeys for CouponIssue {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        ledger_option::key_positions(args, OPTIONS_FROM)
    }
}

impl Handler for CouponIssue {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::COUPON_ISSUE_CALLS.bump();
        let request = Issue::parse(&args[2..])?;
        let ledger = request.ledger.copied();
        let outcome = backend::issue(ctx, args[1], args[2], request.limit, ledger)?;
        match outcome {
            Coupon::Issued { .. } => stats::COUPON_ISSUED.bump(),
            Coupon::AlreadyHeld => stats::COUPON_DUPLICATES.bump(),
            Coupon::SoldOut => stats::COUPON_SOLDOUT.bump(),
        }
        Ok(Reply::Integer(outcome.reply()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_user_then_limit() {
        assert_eq!(Issue::parse(&["u1", "100"]).unwrap().limit, 100);
        assert!(Issue::parse(&["", "0"])
            .unwrap_err()
            .to_string()
            .contains("user"));
        assert!(Issue::parse(&["u1", "0"])
            .unwrap_err()
            .to_string()
            .contains("limit"));
        assert!(Issue::parse(&["u1", "x"])
            .unwrap_err()
            .to_string()
            .contains("limit"));
        // Any bytes make a user, NUL included.
        assert!(Issue::parse(&[&b"\0\xff"[..], b"1"]).is_ok());
    }
}
