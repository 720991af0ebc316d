//! `COUPON.RESERVEALL numkeys key [key ...] user [HOLD seconds] [ID
//! request-id] [QTY n [n ...]] [LEDGER stream]`: a cart, one hold for the
//! user in every campaign (of the units QTY gives each, in key order), all
//! or none, at one clock reading.

use super::ledger_option;
use super::reserve::Reserve;
use super::rules::{self, Cart, Reservation};
use super::write;
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess, Keys,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"coupon.reserveall",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -4,
    keys: Keys::CountedWithKeyword {
        access: KeyAccess::UPDATE,
        step: 1,
        keyword: c"LEDGER",
        keyword_access: KeyAccess::APPEND,
    },
    summary: c"Holds one place for user in every campaign, all or none: [claim, expires_at_ms, ...], or [-1, i] / [-2, i] for the first campaign that refuses.",
    complexity: c"O(K log N) for K campaigns of N claims.",
    since: c"0.3.0",
    args: &[
        ArgDoc::integer(c"numkeys"),
        ArgDoc::KEY.multiple(),
        ArgDoc::string(c"user"),
        ArgDoc::integer(c"hold").option(c"HOLD"),
        ArgDoc::string(c"id").option(c"ID"),
        ArgDoc::integer(c"qty").option(c"QTY").multiple(),
        ledger_option::DOC,
    ],
    callback: callback_finding_keys::<CouponReserveAll>,
};

/// Most campaigns in one call.
const MAX_CAMPAIGNS: i64 = 16;

/// A parsed call: the keys stay in the caller's arguments
/// (`args[2..2 + campaigns]`); the user and options are RESERVE's (a
/// HOLD's end when given, else the campaigns' smallest default hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReserveAll<'a, A> {
    pub campaigns: usize,
    pub reserve: Reserve<'a, A>,
}

impl<'a, A: AsRef<[u8]>> ReserveAll<'a, A> {
    /// `args` are the arguments after the name: numkeys, the keys, the
    /// user, the options. Errors name the first bad argument in order.
    pub fn parse(args: &'a [A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [count, rest @ ..] = args else {
            return Err(args::wrong_arity("coupon.reserveall"));
        };
        let n = args::positive(count.as_ref(), "numkeys")?;
        if n > MAX_CAMPAIGNS {
            return Err(ErrorReply::new("ERR numkeys must be at most 16"));
        }
        let n = n as usize;
        let (keys, [user, options @ ..]) = rest.split_at(n.min(rest.len())) else {
            return Err(ErrorReply::owned(format!(
                "ERR numkeys is {n}, but fewer than {n} keys and a user follow"
            )));
        };
        if keys.len() < n {
            return Err(ErrorReply::owned(format!(
                "ERR numkeys is {n}, but fewer than {n} keys and a user follow"
            )));
        }
        for (i, key) in keys.iter().enumerate() {
            if keys[..i]
                .iter()
                .any(|earlier| earlier.as_ref() == key.as_ref())
            {
                return Err(ErrorReply::new("ERR key is given more than once"));
            }
        }
        Ok(ReserveAll {
            campaigns: n,
            reserve: Reserve::of(user, options, n, now_ms, "coupon.reserveall")?,
        })
    }
}

/// The command.
pub struct CouponReserveAll;

impl FindsKeys for CouponReserveAll {
    /// The keys after numkeys (as many as there are, up to 16), then the
    /// value of a LEDGER option among the pairs after the user.
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        let Some(n) = args
            .get(1)
            .and_then(|count| crate::integer::parse(count.as_bytes()))
            .filter(|n| (1..=MAX_CAMPAIGNS).contains(n))
        else {
            return Vec::new();
        };
        let keys = (2..(2 + n as usize).min(args.len())).map(|at| (at, KeyAccess::UPDATE));
        let ledger = ledger_option::ledger_position(args, 3 + n as usize, n as usize);
        keys.chain(ledger).collect()
    }
}

impl Handler for CouponReserveAll {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::COUPON_RESERVEALL_CALLS.bump();
        let request = ReserveAll::parse(&args[1..], ctx.now_ms())?;
        let names = &args[2..2 + request.campaigns];
        let Reserve {
            user,
            hold_until_ms,
            request_id,
            ledger,
            ..
        } = request.reserve;
        let ledger = ledger.copied();
        let cart = write::reserve_all(ctx, names, ledger, |campaigns, now| {
            let hold_until_ms = hold_until_ms.unwrap_or_else(|| {
                let hold_s = campaigns.iter().map(|c| c.settings().hold_s).min();
                hold_s
                    .and_then(|hold_s| args::span_end_ms(now, hold_s))
                    .unwrap_or(i64::MAX)
            });
            let units = |i| request.reserve.units(i);
            rules::reserve_all(campaigns, user, request_id, units, hold_until_ms, now)
        })?;
        let reply = match cart {
            Cart::Reserved(plans) => plans.iter().flat_map(|plan| plan.outcome.reply()).collect(),
            Cart::Refused { at, why } => {
                stats::COUPON_RESERVEALL_REFUSED.bump();
                let code = match why {
                    Reservation::UserFull => -1,
                    _ => -2,
                };
                vec![code, at as i64 + 1]
            }
        };
        Ok(Reply::Array(
            reply.into_iter().map(Reply::Integer).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn parse(args: &'static [&'static str]) -> Result<ReserveAll<'static, &'static str>, String> {
        ReserveAll::parse(args, NOW).map_err(|error| error.to_string())
    }

    #[test]
    fn keys_then_the_user_then_options() {
        let call = parse(&["2", "a", "b", "u", "ID", "r", "LEDGER", "l"]).unwrap();
        assert_eq!((call.campaigns, call.reserve.user), (2, &b"u"[..]));
        assert_eq!(
            (call.reserve.request_id, call.reserve.ledger),
            (Some(&b"r"[..]), Some(&"l"))
        );
        assert_eq!(
            parse(&["1", "a", "u", "HOLD", "30"])
                .unwrap()
                .reserve
                .hold_until_ms,
            Some(NOW + 30_000)
        );
    }

    #[test]
    fn errors_name_the_first_bad_argument() {
        let error = |args| parse(args).unwrap_err();
        assert!(error(&["0", "a", "u"]).starts_with("ERR numkeys "));
        assert!(error(&["17", "a", "u"]).starts_with("ERR numkeys must be at most 16"));
        assert!(error(&["2", "a", "u"]).contains("fewer than 2 keys and a user"));
        assert!(error(&["2", "a", "a", "u"]).contains("key is given more than once"));
        assert!(error(&["1", "a", ""]).starts_with("ERR user "));
        assert!(error(&["1", "a", "u", "ID"]).contains("ID needs a value"));
        let units = parse(&["2", "a", "b", "u", "QTY", "2", "3", "ID", "r"]).unwrap();
        assert_eq!((units.reserve.units(0), units.reserve.units(1)), (2, 3));
        let per_key = "ERR qty needs 2 values, one per key";
        assert_eq!(error(&["2", "a", "b", "u", "QTY", "2"]), per_key);
        assert_eq!(error(&["2", "a", "b", "u", "QTY", "2", "3", "4"]), per_key);
        assert_eq!(error(&["2", "a", "b", "u", "QTY"]), per_key);
        assert_eq!(
            error(&["2", "a", "b", "u", "QTY", "2", "LEDGER", "s"]),
            "ERR qty is not an integer or out of range"
        );
        assert_eq!(
            error(&["1", "a", "u", "QTY"]),
            "ERR option QTY needs a value"
        );
    }
}
