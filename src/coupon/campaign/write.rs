//! How a campaign command writes: through the `replicated` pipeline, with
//! the campaign's own errors (a missing campaign, a refusal of its rules)
//! and the `coupon.soldout` event when a call takes the last place.

use super::effect::Effect;
use super::rules::{Plan, Refusal};
use super::settings::Settings;
use super::store::Campaign;
use crate::redis::{Arg, CommandKey, Ctx, EventClass};
use crate::replicated::pipeline;
use crate::reply::ErrorReply;

pub const NO_SUCH_CAMPAIGN: ErrorReply = ErrorReply::new("ERR no such campaign");

/// A writing command on the campaign at `name`: decides with the
/// server's clock, carries out the plan, returns its outcome.
pub fn decide<T>(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    decide: impl FnOnce(&Campaign, i64) -> Result<Plan<T>, Refusal>,
) -> Result<T, ErrorReply> {
    let (outcome, fills_last_place) =
        pipeline::decide::<Campaign, _, _>(ctx, name, |campaign, now| {
            let plan = decide(campaign.ok_or(NO_SUCH_CAMPAIGN)?, now)
                .map_err(|refusal| ErrorReply::new(refusal.message()))?;
            Ok(((plan.outcome, plan.fills_last_place), plan.effects))
        })?;
    if fills_last_place {
        CommandKey::new(ctx, name).notify(EventClass::Module, c"coupon.soldout");
    }
    Ok(outcome)
}

/// COUPON.CREATE: a new campaign at `name`, propagated as its settings
/// (a CREATE op), so no replica or AOF load judges them by its own clock.
pub fn create(ctx: Ctx<'_>, name: Arg<'_>, settings: Settings) -> Result<(), ErrorReply> {
    pipeline::create::<Campaign>(ctx, name, Effect::Create(settings))
}
