//! The one way a campaign key changes: open it, decide with the server's
//! clock (or take the primary's effects as they came), apply the effects
//! in order, then owe what every real write owes: a keyspace event per
//! effect, the INFO counters (on the primary only: a replica or an AOF
//! load replays, it does not serve), one `COUPON.APPLY` propagated with
//! absolute times and claim numbers, and the `WATCH` signal. A call whose
//! plan has no effect does none of it.

use super::effect::{self, Effect, Settings, APPLY_COMMAND};
use super::encoding::CAMPAIGN;
use super::rules::{Plan, Refusal};
use super::store::Campaign;
use crate::redis::{Arg, CommandKey, Ctx, EventClass};
use crate::reply::ErrorReply;
use crate::stats;

pub const NO_SUCH_CAMPAIGN: ErrorReply = ErrorReply::new("ERR no such campaign");

/// RESTORE's error for a key that exists.
const BUSYKEY: ErrorReply = ErrorReply::new("BUSYKEY Target key name already exists.");

/// Who asked for the effects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A client's call, decided here: counted.
    Client,
    /// The primary's (or the AOF's, or a migrating node's) effects.
    Replay,
}

/// A writing command on the campaign at `name`: decides with the
/// server's clock, carries out the plan, returns its outcome.
pub fn decide<T>(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    decide: impl FnOnce(&Campaign, i64) -> Result<Plan<T>, Refusal>,
) -> Result<T, ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let mut key = target.open();
    let campaign = key.value_mut(&CAMPAIGN)?.ok_or(NO_SUCH_CAMPAIGN)?;
    let plan =
        decide(campaign, ctx.now_ms()).map_err(|refusal| ErrorReply::new(refusal.message()))?;
    carry_out(target, campaign, &plan.effects, Origin::Client, &[])?;
    if plan.fills_last_place {
        target.notify(EventClass::Module, c"coupon.soldout");
    }
    Ok(plan.outcome)
}

/// COUPON.CREATE: a new campaign at `name`, propagated as its settings
/// (a CREATE op), so no replica or AOF load judges them by its own clock.
pub fn create(ctx: Ctx<'_>, name: Arg<'_>, settings: Settings) -> Result<(), ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let mut key = target.open();
    if key.exists() {
        return Err(BUSYKEY);
    }
    key.set_value(&CAMPAIGN, Campaign::new(settings))?;
    let create = [Effect::Create(settings)];
    target.replicate_words(APPLY_COMMAND, effect::words(&create).as_slice());
    target.signal_modified();
    Ok(())
}

/// COUPON.APPLY: the effects as the primary decided them. A leading
/// CREATE makes the campaign on a missing key.
pub fn replay(ctx: Ctx<'_>, name: Arg<'_>, effects: &[Effect]) -> Result<(), ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let mut key = target.open();
    let (created, rest) = match effects {
        [Effect::Create(settings), rest @ ..] => {
            if key.exists() {
                return Err(BUSYKEY);
            }
            key.set_value(&CAMPAIGN, Campaign::new(*settings))?;
            (&effects[..1], rest)
        }
        _ => (&[][..], effects),
    };
    let Some(campaign) = key.value_mut(&CAMPAIGN)? else {
        return Err(NO_SUCH_CAMPAIGN);
    };
    carry_out(target, campaign, rest, Origin::Replay, created)
}

/// Applies `effects` in order with their events and counters, then
/// propagates what applied (after `already`, effects applied by the
/// caller) as one COUPON.APPLY. An effect that does not apply stops the
/// call with an error; what applied before it is still propagated, so a
/// replica never misses a change made here.
fn carry_out(
    target: CommandKey<'_>,
    campaign: &mut Campaign,
    effects: &[Effect],
    origin: Origin,
    already: &[Effect],
) -> Result<(), ErrorReply> {
    let mut applied = 0;
    let mut failure = None;
    for effect in effects {
        if let Err(why) = campaign.apply(effect) {
            failure = Some(ErrorReply::could_not_apply(why));
            break;
        }
        applied += 1;
        let (event, counter) = match effect {
            Effect::Put {
                expires_at_ms: Some(_),
                ..
            } => (c"coupon.reserved", Some(&stats::COUPON_RESERVED)),
            // A claim confirmed as it is made is ISSUE's: counted there.
            Effect::Put { .. } => (c"coupon.confirmed", None),
            Effect::Confirm { .. } => (c"coupon.confirmed", Some(&stats::COUPON_CONFIRMED)),
            Effect::Release { .. } => (c"coupon.released", Some(&stats::COUPON_RELEASED)),
            Effect::Expire { .. } => (c"coupon.expired", Some(&stats::COUPON_EXPIRED)),
            Effect::Create(_) | Effect::Totals(_) => continue,
        };
        if let (Origin::Client, Some(counter)) = (origin, counter) {
            counter.bump();
        }
        target.notify(EventClass::Module, event);
    }
    if applied + already.len() > 0 {
        let mut words = effect::words(already);
        words.extend(effect::words(&effects[..applied]).as_slice());
        target.replicate_words(APPLY_COMMAND, words.as_slice());
        target.signal_modified();
    }
    failure.map_or(Ok(()), Err)
}
