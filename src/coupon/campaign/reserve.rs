//! `COUPON.RESERVE key user [HOLD seconds] [ID request-id]`: holds a place
//! while the payment runs.

use super::{rules, write};
use crate::args;
use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.reserve",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -3,
    keys: Keys::One(KeyAccess::UPDATE),
    summary:
        c"Holds a place for user until the hold ends: [claim, expires_at_ms], [-1, 0] or [-2, 0].",
    complexity: c"O(log N) for N claims.",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::string(c"user"),
        ArgDoc::integer(c"hold").option(c"HOLD"),
        ArgDoc::string(c"id").option(c"ID"),
    ],
    callback: callback::<CouponReserve>,
};

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserve<'a> {
    pub user: &'a [u8],
    /// The hold's end when HOLD was given; else the campaign's default.
    pub hold_until_ms: Option<i64>,
    pub request_id: Option<&'a [u8]>,
}

impl<'a> Reserve<'a> {
    /// `args` are the arguments after the key.
    pub fn parse<A: AsRef<[u8]>>(args: &'a [A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [user, options @ ..] = args else {
            return Err(args::wrong_arity("coupon.reserve"));
        };
        let mut request = Reserve {
            user: args::non_empty(user.as_ref(), "user")?,
            hold_until_ms: None,
            request_id: None,
        };
        args::options(options, &["HOLD", "ID"], |option, value| {
            let value = value.as_ref();
            match option {
                0 => {
                    request.hold_until_ms =
                        Some(args::seconds_from(value, "hold", now_ms, "coupon.reserve")?.1)
                }
                _ => request.request_id = Some(args::non_empty(value, "id")?),
            }
            Ok(())
        })?;
        Ok(request)
    }
}

/// The command.
pub struct CouponReserve;

impl Handler for CouponReserve {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let request = Reserve::parse(&args[2..], ctx.now_ms())?;
        let outcome = write::decide(ctx, args[1], |campaign, now| {
            let hold_until_ms = request.hold_until_ms.unwrap_or_else(|| {
                args::span_end_ms(now, campaign.settings().hold_s).unwrap_or(i64::MAX)
            });
            rules::reserve(
                campaign,
                request.user,
                request.request_id,
                hold_until_ms,
                now,
            )
        })?;
        Ok(Reply::Integers(outcome.reply().into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    #[test]
    fn parses_user_and_options() {
        let request = Reserve::parse(&["alice", "id", "r-1", "HOLD", "30"], NOW).unwrap();
        assert_eq!(request.user, b"alice");
        assert_eq!(request.request_id, Some(&b"r-1"[..]));
        assert_eq!(request.hold_until_ms, Some(NOW + 30_000));
        assert_eq!(Reserve::parse(&["alice"], NOW).unwrap().hold_until_ms, None);
    }

    #[test]
    fn errors_name_the_argument_or_the_option() {
        let error = |args: &[&str]| Reserve::parse(args, NOW).unwrap_err().to_string();
        assert!(error(&[""]).starts_with("ERR user "));
        assert!(error(&["u", "ID", ""]).starts_with("ERR id "));
        assert!(error(&["u", "HOLD", "0"]).starts_with("ERR hold "));
        assert!(error(&["u", "ID"]).contains("ID needs a value"));
        assert!(error(&["u", "FROM", "1"]).contains("unknown option 'FROM'"));
        assert!(error(&["", "FROM", "1"]).starts_with("ERR user "));
    }
}
