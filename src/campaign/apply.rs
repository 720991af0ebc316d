//! `COUPON.APPLY key op [op ...]`: replays a campaign's effects as the
//! primary decided them. Every campaign write propagates as one of these
//! (claim numbers and absolute times, never "now"), and a rewritten AOF
//! rebuilds campaigns with them. It runs only on the replication link and
//! while the AOF loads; a client gets an error.
//!
//! Ops: `PUT claim user expires_at_ms|-1 request-id|""`, `CONFIRM claim`,
//! `RELEASE claim`, `EXPIRE claim`, `TOTALS claims_made released expired`.

use std::ffi::CStr;

use super::model::Effect;
use super::value::{perform, CAMPAIGN};
use super::NO_SUCH_CAMPAIGN;
use crate::args;
use crate::integer;
use crate::redis::{callback, Arg, ArgDoc, Command, CommandKey, Ctx, Handler, KeyAccess};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const NAME: &CStr = c"COUPON.APPLY";

pub const COMMAND: Command = Command {
    name: c"coupon.apply",
    flags: c"write",
    acl_categories: c"write slow",
    arity: -4,
    key: KeyAccess::UPDATE,
    summary: c"Replays a campaign's effects from the primary or the AOF; refused from clients.",
    complexity: c"O(N log M) for N effects on a campaign of M claims.",
    args: &[ArgDoc::KEY, ArgDoc::string(c"op").multiple()],
    callback: callback::<Apply>,
};

fn number(n: u64) -> Vec<u8> {
    n.to_string().into_bytes()
}

/// The arguments after the key that carry `effects`.
pub fn effect_args(effects: &[Effect]) -> Vec<Vec<u8>> {
    let mut args = Vec::new();
    for effect in effects {
        match effect {
            Effect::Put {
                claim,
                user,
                expires_at_ms,
                request_id,
            } => args.extend([
                b"PUT".to_vec(),
                number(*claim),
                user.clone(),
                expires_at_ms.unwrap_or(-1).to_string().into_bytes(),
                request_id.clone().unwrap_or_default(),
            ]),
            Effect::Confirm { claim } => args.extend([b"CONFIRM".to_vec(), number(*claim)]),
            Effect::Release { claim } => args.extend([b"RELEASE".to_vec(), number(*claim)]),
            Effect::Expire { claim } => args.extend([b"EXPIRE".to_vec(), number(*claim)]),
            Effect::Totals {
                claims_made,
                released,
                expired,
            } => args.extend([
                b"TOTALS".to_vec(),
                number(*claims_made),
                number(*released),
                number(*expired),
            ]),
        }
    }
    args
}

fn bad(what: &str) -> ErrorReply {
    ErrorReply::owned(format!("ERR COUPON.APPLY: {what}"))
}

fn count(bytes: &[u8]) -> Result<u64, ErrorReply> {
    integer::parse(bytes)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| bad("a number is not a non-negative integer"))
}

/// The effects `args` carry; the inverse of [`effect_args`].
pub fn parse_effects<A: AsRef<[u8]>>(args: &[A]) -> Result<Vec<Effect>, ErrorReply> {
    let mut effects = Vec::new();
    let mut rest = args;
    while let [op, tail @ ..] = rest {
        let (effect, tail) = match (op.as_ref(), tail) {
            (b"PUT", [claim, user, expires, id, tail @ ..]) => {
                let expires_at_ms =
                    integer::parse(expires.as_ref()).ok_or_else(|| bad("bad expiry"))?;
                let put = Effect::Put {
                    claim: count(claim.as_ref())?,
                    user: user.as_ref().to_vec(),
                    expires_at_ms: (expires_at_ms != -1).then_some(expires_at_ms),
                    request_id: Some(id.as_ref().to_vec()).filter(|id| !id.is_empty()),
                };
                (put, tail)
            }
            (b"CONFIRM", [claim, tail @ ..]) => (
                Effect::Confirm {
                    claim: count(claim.as_ref())?,
                },
                tail,
            ),
            (b"RELEASE", [claim, tail @ ..]) => (
                Effect::Release {
                    claim: count(claim.as_ref())?,
                },
                tail,
            ),
            (b"EXPIRE", [claim, tail @ ..]) => (
                Effect::Expire {
                    claim: count(claim.as_ref())?,
                },
                tail,
            ),
            (b"TOTALS", [made, released, expired, tail @ ..]) => {
                let totals = Effect::Totals {
                    claims_made: count(made.as_ref())?,
                    released: count(released.as_ref())?,
                    expired: count(expired.as_ref())?,
                };
                (totals, tail)
            }
            _ => return Err(bad("unknown op or missing arguments")),
        };
        effects.push(effect);
        rest = tail;
    }
    if effects.is_empty() {
        return Err(args::wrong_arity("coupon.apply"));
    }
    Ok(effects)
}

pub struct Apply;

impl Handler for Apply {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        if !ctx.is_replaying() {
            return Err(ErrorReply::new(
                "ERR COUPON.APPLY only replays a primary's effects (replication link, AOF)",
            ));
        }
        let effects = parse_effects(&args[2..])?;
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        let campaign = key.value_mut(&CAMPAIGN)?.ok_or(NO_SUCH_CAMPAIGN)?;
        perform(target, campaign, &effects)?;
        Ok(Reply::Simple("OK"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_round_trip_through_their_arguments() {
        let effects = vec![
            Effect::Expire { claim: 3 },
            Effect::Put {
                claim: 9,
                user: b"u \0x".to_vec(),
                expires_at_ms: Some(1_800_000_000_123),
                request_id: Some(b"req-1".to_vec()),
            },
            Effect::Put {
                claim: 10,
                user: b"v".to_vec(),
                expires_at_ms: None,
                request_id: None,
            },
            Effect::Confirm { claim: 9 },
            Effect::Release { claim: 10 },
            Effect::Totals {
                claims_made: 10,
                released: 4,
                expired: 2,
            },
        ];
        assert_eq!(parse_effects(&effect_args(&effects)), Ok(effects));
    }

    #[test]
    fn malformed_ops_are_refused() {
        for args in [
            &["PUT", "1", "u"][..],
            &["CONFIRM"],
            &["CONFIRM", "-1"],
            &["NOPE", "1"],
            &["TOTALS", "1", "2"],
            &["PUT", "1", "u", "x", ""],
        ] {
            assert!(parse_effects(args).is_err(), "{args:?}");
        }
    }
}
