//! `COUPON.CLAIMS key [FROM claim] [COUNT n]`: live claims in claim order,
//! for a reconciliation job to compare with the orders database.

use super::claim_number;
use super::encoding::CAMPAIGN;
use super::store::ClaimState;
use super::write::NO_SUCH_CAMPAIGN;
use crate::args;
use crate::redis::{callback, Arg, ArgDoc, Command, CommandKey, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.claims",
    flags: c"readonly",
    acl_categories: c"read slow",
    arity: -2,
    keys: Keys::One(KeyAccess::READ),
    summary:
        c"Live claims from FROM in order, at most COUNT: [claim, user, state, expiry, id, units].",
    complexity: c"O(log N + COUNT), plus expired holds not yet reclaimed on the way.",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"from").option(c"FROM"),
        ArgDoc::integer(c"count").option(c"COUNT"),
    ],
    callback: callback::<CouponClaims>,
};

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claims {
    pub from: u64,
    pub count: usize,
}

impl Claims {
    /// `args` are the arguments after the key.
    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        let mut request = Claims {
            from: 1,
            count: 100,
        };
        args::options(args, &["FROM", "COUNT"], |option, value| {
            let value = value.as_ref();
            match option {
                0 => request.from = claim_number(value, "from")?,
                _ => {
                    request.count = args::positive(value, "count")?
                        .try_into()
                        .unwrap_or(usize::MAX)
                }
            }
            Ok(())
        })?;
        Ok(request)
    }
}

/// The command.
pub struct CouponClaims;

impl Handler for CouponClaims {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let request = Claims::parse(&args[2..])?;
        let key = CommandKey::new(ctx, args[1])
            .open_read()
            .ok_or(NO_SUCH_CAMPAIGN)?;
        let campaign = key.value(&CAMPAIGN)?.ok_or(NO_SUCH_CAMPAIGN)?;
        let claims = campaign.claims(request.from, request.count, ctx.now_ms());
        let rows = claims
            .into_iter()
            .map(|view| {
                let state = match view.state {
                    ClaimState::Held { .. } => "held",
                    ClaimState::Confirmed => "confirmed",
                };
                Reply::Array(vec![
                    Reply::Integer(view.claim as i64),
                    Reply::Bulk(view.user.to_vec()),
                    Reply::Bulk(state.as_bytes().to_vec()),
                    Reply::Integer(view.state.expires_at_ms()),
                    view.request_id
                        .map_or(Reply::Null, |id| Reply::Bulk(id.to_vec())),
                    Reply::Integer(view.units as i64),
                ])
            })
            .collect();
        Ok(Reply::Array(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_named_errors() {
        assert_eq!(
            Claims::parse::<&str>(&[]),
            Ok(Claims {
                from: 1,
                count: 100
            })
        );
        assert_eq!(
            Claims::parse(&["count", "5", "FROM", "7"]),
            Ok(Claims { from: 7, count: 5 })
        );
        let error = |args: &[&str]| Claims::parse(args).unwrap_err().to_string();
        assert!(error(&["FROM", "0"]).starts_with("ERR from "));
        assert!(error(&["COUNT", "-1"]).starts_with("ERR count "));
        assert!(error(&["COUNT"]).contains("COUNT needs a value"));
        assert!(error(&["LIMIT", "1"]).contains("unknown option 'LIMIT'"));
    }
}
