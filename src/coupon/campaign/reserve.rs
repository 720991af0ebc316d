//! `COUPON.RESERVE key user [HOLD seconds] [ID request-id] [QTY n] [LEDGER
//! stream]`: holds `n` units (default 1) while the payment runs.

use super::ledger::Op;
use super::ledger_option::{self, LEDGER};
use super::{rules, write};
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.reserve",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -3,
    keys: ledger_option::keys(KeyAccess::UPDATE, OPTIONS_FROM),
    summary:
        c"Holds QTY units (default 1) for user until the hold ends: [claim, expires_at_ms], [-1, 0] or [-2, 0].",
    complexity: c"O(log N) for N claims.",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::string(c"user"),
        ArgDoc::integer(c"hold").option(c"HOLD"),
        ArgDoc::string(c"id").option(c"ID"),
        ArgDoc::integer(c"qty").option(c"QTY"),
        ledger_option::DOC,
    ],
    callback: callback_finding_keys::<CouponReserve>,
};

/// Where the options start: after the user.
const OPTIONS_FROM: usize = 3;

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserve<'a, A> {
    pub user: &'a [u8],
    /// The hold's end when HOLD was given; else the campaign's default.
    pub hold_until_ms: Option<i64>,
    pub request_id: Option<&'a [u8]>,
    /// QTY's values, as given (one for RESERVE, one per key for
    /// RESERVEALL, each checked positive); none: 1 unit each.
    pub units: Option<&'a [A]>,
    pub ledger: Option<&'a A>,
}

impl<'a, A: AsRef<[u8]>> Reserve<'a, A> {
    /// `args` are the arguments after the key.
    pub fn parse(args: &'a [A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [user, options @ ..] = args else {
            return Err(args::wrong_arity("coupon.reserve"));
        };
        Reserve::of(user, options, 1, now_ms, "coupon.reserve")
    }

    /// A user and RESERVE's options, for `command` (COUPON.RESERVEALL
    /// takes the same after its keys, QTY with a value for each of its
    /// `campaigns`).
    pub fn of(
        user: &'a A,
        options: &'a [A],
        campaigns: usize,
        now_ms: i64,
        command: &str,
    ) -> Result<Self, ErrorReply> {
        let mut request = Reserve {
            user: args::non_empty(user.as_ref(), "user")?,
            hold_until_ms: None,
            request_id: None,
            units: None,
            ledger: None,
        };
        let names = ["HOLD", "ID", "QTY", LEDGER];
        args::options_taking(options, &names, Some((2, campaigns)), |option, values| {
            let value = &values[0];
            match option {
                0 => {
                    let hold = args::seconds_from(value.as_ref(), "hold", now_ms, command);
                    request.hold_until_ms = Some(hold?.1)
                }
                1 => request.request_id = Some(args::non_empty(value.as_ref(), "id")?),
                2 => {
                    for value in values {
                        args::positive(value.as_ref(), "qty")?;
                    }
                    request.units = Some(values);
                }
                _ => request.ledger = Some(value),
            }
            Ok(())
        })?;
        Ok(request)
    }

    /// The units asked of the i-th campaign.
    pub fn units(&self, i: usize) -> u64 {
        self.units.map_or(1, |values| {
            crate::integer::parse(values[i].as_ref()).map_or(1, |n| n as u64)
        })
    }
}

/// The command.
pub struct CouponReserve;

impl FindsKeys for CouponReserve {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        ledger_option::key_positions(args, OPTIONS_FROM)
    }
}

impl Handler for CouponReserve {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let request = Reserve::parse(&args[2..], ctx.now_ms())?;
        let ledger = request.ledger.copied();
        let outcome = write::decide(ctx, args[1], ledger, Op::Released, |campaign, now| {
            let hold_until_ms = request.hold_until_ms.unwrap_or_else(|| {
                args::span_end_ms(now, campaign.settings().hold_s).unwrap_or(i64::MAX)
            });
            rules::reserve(
                campaign,
                request.user,
                request.request_id,
                request.units(0),
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
        assert_eq!(request.units(0), 1);
        assert_eq!(Reserve::parse(&["a", "qty", "3"], NOW).unwrap().units(0), 3);
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
        assert_eq!(
            error(&["u", "QTY", "0"]),
            "ERR qty must be a positive integer"
        );
        assert_eq!(
            error(&["u", "QTY", "x"]),
            "ERR qty is not an integer or out of range"
        );
        assert_eq!(error(&["u", "QTY"]), "ERR option QTY needs a value");
        assert_eq!(error(&["u", "QTY", "1", "2"]), "ERR unknown option '2'");
        assert!(error(&["u", "ID"]).contains("ID needs a value"));
        assert!(error(&["u", "FROM", "1"]).contains("unknown option 'FROM'"));
        assert!(error(&["", "FROM", "1"]).starts_with("ERR user "));
    }
}
