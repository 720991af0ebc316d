//! How a campaign command writes: through the `replicated` pipeline, with
//! the campaign's own errors (a missing campaign, a refusal of its rules,
//! a ledger named wrong), its ledger entries appended in the same step and
//! propagated after its effects, and the `coupon.soldout` event when a
//! call takes the last place.

use super::effect::Effect;
use super::encoding::CAMPAIGN;
use super::ledger::{self, Op};
use super::ledger_option;
use super::rules::{Cart, Plan, Refusal};
use super::settings::{Ledger, Settings};
use super::store::Campaign;
use crate::redis::{Arg, CommandKey, Ctx, EventClass, OpenKey, Word, Words, STREAM_IDS_USED_UP};
use crate::replicated::pipeline;
use crate::reply::ErrorReply;
use crate::stats;
use crate::stream::{self, Appended, EntryFields};

pub const NO_SUCH_CAMPAIGN: ErrorReply = ErrorReply::new("ERR no such campaign");

fn refused(refusal: Refusal) -> ErrorReply {
    ErrorReply::new(refusal.message())
}

/// A writing command on the campaign at `name`, naming `ledger` (its
/// `LEDGER stream`, if given): decides with the server's clock, appends
/// the ledger's entries (a release is recorded as `releases`), carries
/// out the plan, returns its outcome.
pub fn decide<T>(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    ledger: Option<Arg<'_>>,
    releases: Op,
    decide: impl FnOnce(&Campaign, i64) -> Result<Plan<T>, Refusal>,
) -> Result<T, ErrorReply> {
    ledger_option::check_stream(ctx, ledger)?;
    let (outcome, fills_last_place, appended) =
        pipeline::decide::<Campaign, _, _>(ctx, name, |campaign, now| {
            let campaign = campaign.ok_or(NO_SUCH_CAMPAIGN)?;
            ledger_option::check_named(campaign, ledger.map(Arg::as_bytes))?;
            let plan = decide(campaign, now).map_err(refused)?;
            let owed = records(name, campaign, &plan.effects, now, releases);
            let appended = append(ctx, ledger, owed)?;
            Ok((
                (plan.outcome, plan.fills_last_place, appended),
                plan.effects,
            ))
        })?;
    if fills_last_place {
        CommandKey::new(ctx, name).notify(EventClass::Module, c"coupon.soldout");
    }
    appended.into_iter().for_each(Appended::propagate);
    Ok(outcome)
}

/// What one campaign's call owes its ledger: each record of `effects` on
/// the campaign at `name`, with its ledger's MAXLEN; none without one (a
/// release recorded as `releases`).
fn records<'call>(
    name: Arg<'call>,
    campaign: &Campaign,
    effects: &[Effect],
    now: i64,
    releases: Op,
) -> Vec<(Arg<'call>, Option<i64>, ledger::Record)> {
    let Some(ledger) = campaign.ledger() else {
        return Vec::new();
    };
    ledger::entries(campaign, effects, now, releases)
        .into_iter()
        .map(|record| (name, ledger.maxlen, record))
        .collect()
}

/// Appends to the ledger `stream` the records of one call, each
/// `(campaign key, its ledger's MAXLEN, record)`, before any is carried
/// out: all or none, so a refused call writes nothing (the stream is
/// asked first whether it has IDs for them all: after the first XADD
/// only a stream at the last ID there is refuses one).
fn append<'call>(
    ctx: Ctx<'call>,
    stream: Option<Arg<'call>>,
    records: Vec<(Arg<'call>, Option<i64>, ledger::Record)>,
) -> Result<Vec<Appended<'call, Entry<'call>>>, ErrorReply> {
    let Some(stream) = stream.filter(|_| !records.is_empty()) else {
        return Ok(Vec::new());
    };
    let target = CommandKey::new(ctx, stream);
    if records.len() > 1 && !target.stream_has_ids_for(records.len() as u64)? {
        return Err(STREAM_IDS_USED_UP);
    }
    let mut appended = Vec::with_capacity(records.len());
    for (name, maxlen, record) in records {
        let entry = Entry { name, record };
        match stream::append(target, maxlen, entry, &stats::COUPON_LEDGER_ENTRIES) {
            Ok(entry) => appended.push(entry),
            Err(error) => {
                // Not reached after the check above; should it be, what
                // was appended is owed to replicas all the same.
                appended.into_iter().for_each(Appended::propagate);
                return Err(error);
            }
        }
    }
    Ok(appended)
}

/// A ledger entry: a record of the campaign at `name`.
struct Entry<'call> {
    name: Arg<'call>,
    record: ledger::Record,
}

impl EntryFields for Entry<'_> {
    fn words(&self) -> Words<'_> {
        self.record.words(Word::Arg(self.name))
    }
}

/// COUPON.CREATE: a new campaign at `name`, propagated as its settings
/// (a CREATE op, then its LEDGER), so no replica or AOF load judges them
/// by its own clock.
pub fn create(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    settings: Settings,
    ledger: Option<(Arg<'_>, Option<i64>)>,
) -> Result<(), ErrorReply> {
    ledger_option::check_stream(ctx, ledger.map(|(stream, _)| stream))?;
    let mut effects = vec![Effect::Create(settings)];
    effects.extend(ledger.map(|(stream, maxlen)| {
        Effect::Ledger(Ledger {
            stream: stream.as_bytes().into(),
            maxlen,
        })
    }));
    pipeline::create::<Campaign>(ctx, name, &effects)
}

/// COUPON.RESERVEALL's campaigns at `names` (distinct), naming `ledger`:
/// every campaign is read and judged at one clock reading, then, unless
/// one refuses, each is written: its ledger entries, then its effects.
pub fn reserve_all(
    ctx: Ctx<'_>,
    names: &[Arg<'_>],
    ledger: Option<Arg<'_>>,
    decide: impl FnOnce(&[&Campaign], i64) -> Result<Cart, Refusal>,
) -> Result<Cart, ErrorReply> {
    ledger_option::check_stream(ctx, ledger)?;
    let now = ctx.now_ms();
    let keys: Vec<OpenKey> = names
        .iter()
        .map(|&name| CommandKey::new(ctx, name).open())
        .collect();
    let mut campaigns = Vec::with_capacity(keys.len());
    for key in &keys {
        campaigns.push(key.value(&CAMPAIGN)?.ok_or(NO_SUCH_CAMPAIGN)?);
    }
    check_one_ledger(&campaigns, ledger)?;
    let cart = decide(&campaigns, now).map_err(refused)?;
    let Cart::Reserved(plans) = &cart else {
        return Ok(cart);
    };
    let mut owed = Vec::new();
    for ((&name, campaign), plan) in names.iter().zip(&campaigns).zip(plans) {
        owed.extend(records(name, campaign, &plan.effects, now, Op::Released));
    }
    let appended = append(ctx, ledger, owed)?;
    drop(campaigns);
    drop(keys);
    for (&name, plan) in names.iter().zip(plans) {
        pipeline::write::<Campaign>(ctx, name, &plan.effects)?;
        if plan.fills_last_place {
            CommandKey::new(ctx, name).notify(EventClass::Module, c"coupon.soldout");
        }
    }
    appended.into_iter().for_each(Appended::propagate);
    Ok(cart)
}

/// The campaigns of one call keep at most one ledger, and the call names
/// it exactly when one does.
fn check_one_ledger(campaigns: &[&Campaign], given: Option<Arg<'_>>) -> Result<(), ErrorReply> {
    let mut ledgers = campaigns.iter().filter_map(|c| c.ledger());
    let first = ledgers.next();
    if let Some(first) = first {
        if ledgers.any(|other| other.stream != first.stream) {
            return Err(ErrorReply::new(
                "ERR ledger: the campaigns keep different ledgers",
            ));
        }
    }
    let keeper = campaigns
        .iter()
        .find(|c| c.ledger().is_some())
        .or(campaigns.first());
    match keeper {
        Some(keeper) => ledger_option::check_named(keeper, given.map(Arg::as_bytes)),
        None => Ok(()),
    }
}
