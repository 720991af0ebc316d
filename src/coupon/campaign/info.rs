//! `COUPON.INFO key`: a campaign's settings and counts, exact as of now.

use super::encoding::CAMPAIGN;
use super::write::NO_SUCH_CAMPAIGN;
use crate::redis::{callback, Arg, ArgDoc, Command, CommandKey, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.info",
    flags: c"readonly fast",
    acl_categories: c"read fast",
    arity: 2,
    keys: Keys::One(KeyAccess::READ),
    summary: c"A campaign's settings and counts: confirmed, held, available, expired..., held_units, confirmed_units.",
    complexity: c"O(N / 512) for N held claims.",
    since: c"0.1.0",
    args: &[ArgDoc::KEY],
    callback: callback::<CouponInfo>,
};

pub struct CouponInfo;

impl Handler for CouponInfo {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let key = CommandKey::new(ctx, args[1])
            .open_read()
            .ok_or(NO_SUCH_CAMPAIGN)?;
        let campaign = key.value(&CAMPAIGN)?.ok_or(NO_SUCH_CAMPAIGN)?;
        let info = campaign.info(ctx.now_ms());
        let fields = [
            ("limit", info.limit),
            ("peruser", info.per_user),
            ("hold", info.hold_s),
            ("confirmed", info.confirmed),
            ("held", info.held),
            ("available", info.available),
            ("claims", info.claims),
            ("expired", info.expired),
            ("released", info.released),
            ("held_units", info.held_units),
            ("confirmed_units", info.confirmed_units),
        ];
        Ok(Reply::Map(
            fields.map(|(name, n)| (name, Reply::Integer(n))).to_vec(),
        ))
    }
}
