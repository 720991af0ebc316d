//! The rule book of every campaign command: a decision is a function of
//! the stored campaign and `now` (unix ms) that changes nothing and
//! returns a typed outcome with the [`Effect`]s that carry it out (none:
//! nothing changes, nothing is propagated, no `WATCH` is disturbed).
//!
//! A hold is gone once `now > expires_at_ms`, for every decision, whether
//! or not its memory was reclaimed yet. Reclaiming is itself an effect
//! ([`Effect::Expire`]), added only by calls that write anyway, at most
//! [`RECLAIM_PER_CALL`] a call, whatever `PERUSER` is.

use super::effect::Effect;
use super::settings::Settings;
use super::store::{Campaign, ClaimState, LAST_CLAIM};
use crate::coupon::outcome::Coupon;

/// Expired holds reclaimed by one writing call, so that no call does
/// unbounded work.
pub const RECLAIM_PER_CALL: usize = 16;

/// A decision and the effects that carry it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan<T> {
    pub outcome: T,
    pub effects: Vec<Effect>,
    /// The new claim takes the last place (`coupon.soldout`).
    pub fills_last_place: bool,
}

impl<T> Plan<T> {
    fn nothing(outcome: T) -> Self {
        Plan {
            outcome,
            effects: Vec::new(),
            fills_last_place: false,
        }
    }
}

/// What COUPON.RESERVE decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// A new held claim.
    New { claim: u64, expires_at_ms: i64 },
    /// The request id's live claim, repeated (`expires_at_ms` -1 once
    /// confirmed); nothing changes.
    Repeat { claim: u64, expires_at_ms: i64 },
    /// The user's live units and these would pass `PERUSER`.
    UserFull,
    /// The campaign's live units and these would pass `limit`.
    SoldOut,
}

impl Reservation {
    /// `[claim, expires_at_ms]`, `[-1, 0]` or `[-2, 0]`.
    pub fn reply(self) -> [i64; 2] {
        match self {
            Reservation::New {
                claim,
                expires_at_ms,
            }
            | Reservation::Repeat {
                claim,
                expires_at_ms,
            } => [claim as i64, expires_at_ms],
            Reservation::UserFull => [-1, 0],
            Reservation::SoldOut => [-2, 0],
        }
    }
}

/// What COUPON.CONFIRM decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmation {
    Confirmed,
    AlreadyConfirmed,
    /// A hold that had expired is live again (a clock behind, a loaded
    /// value) and confirming it would go over `limit` or `PERUSER`: it is
    /// released instead.
    NoRoom,
    NoLiveClaim,
}

impl Confirmation {
    pub fn reply(self) -> i64 {
        match self {
            Confirmation::Confirmed => 1,
            Confirmation::AlreadyConfirmed => 0,
            Confirmation::NoRoom => -2,
            Confirmation::NoLiveClaim => -3,
        }
    }
}

/// What COUPON.RELEASE decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    Released,
    NoLiveClaim,
}

impl Release {
    pub fn reply(self) -> i64 {
        match self {
            Release::Released => 1,
            Release::NoLiveClaim => 0,
        }
    }
}

/// What COUPON.REVOKE decides on a campaign: how many live claims of the
/// user it releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revocation {
    pub released: u64,
}

/// A call the rules refuse: an error reply, nothing written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The request id belongs to a live claim of another user.
    RequestIdTaken,
    /// The request id's held claim was reserved with other units.
    QtyMismatch,
    /// CONFIRM's QTY is above the held claim's units.
    QtyAboveUnits,
    /// ISSUE's limit is not the campaign's.
    LimitMismatch,
    /// Claim number 2^63 - 1 has been made: no new claim can be numbered.
    ClaimNumbersUsedUp,
    /// ALTER's LIMIT is below the confirmed claims.
    LimitBelowConfirmed,
    /// ALTER's PERUSER is below some user's confirmed claims.
    PerUserBelowConfirmed,
}

impl Refusal {
    pub fn message(self) -> &'static str {
        match self {
            Refusal::RequestIdTaken => "ERR id is held by a live claim of another user",
            Refusal::QtyMismatch => "ERR id was reserved with another qty",
            Refusal::QtyAboveUnits => "ERR qty is above the claim's units",
            Refusal::LimitMismatch => "ERR limit does not match the campaign's limit",
            Refusal::ClaimNumbersUsedUp => {
                "ERR the campaign has used every claim number (the last is 9223372036854775807)"
            }
            Refusal::LimitBelowConfirmed => "ERR limit must not be below the confirmed claims",
            Refusal::PerUserBelowConfirmed => {
                "ERR peruser must not be below a user's confirmed claims"
            }
        }
    }
}

/// The number a new claim gets.
fn next_claim(c: &Campaign) -> Result<u64, Refusal> {
    match c.totals().claims_made {
        LAST_CLAIM.. => Err(Refusal::ClaimNumbersUsedUp),
        made => Ok(made + 1),
    }
}

/// Housekeeping owed by a call that writes: `stale` (a request id's old
/// claim, when it is an expired hold), then the oldest expired holds, at
/// most [`RECLAIM_PER_CALL`] in all.
fn reclaim(c: &Campaign, now: i64, stale: Option<u64>) -> Vec<Effect> {
    let stale = stale.filter(|&claim| c.is_expired_hold(claim, now));
    let oldest = c.expired_holds(now).filter(|&claim| Some(claim) != stale);
    stale
        .into_iter()
        .chain(oldest)
        .take(RECLAIM_PER_CALL)
        .map(|claim| Effect::Expire { claim })
        .collect()
}

/// Would a new claim of `units` at `now` take the last place?
fn fills_last_place(c: &Campaign, units: u64, now: i64) -> bool {
    c.live_units(now) + u128::from(units) == c.settings().limit as u128
}

/// The user's units and the campaign's, checked in that order.
fn room_for(c: &Campaign, user: &[u8], units: u64, now: i64) -> Result<(), Reservation> {
    let settings = c.settings();
    let units = u128::from(units);
    if c.user_live(user, now) + units > settings.per_user as u128 {
        return Err(Reservation::UserFull);
    }
    if c.live_units(now) + units > settings.limit as u128 {
        return Err(Reservation::SoldOut);
    }
    Ok(())
}

/// COUPON.RESERVE: `units` held until `expires_at_ms` for `user`. The
/// request id is checked first, then the user's units, then the limit.
pub fn reserve(
    c: &Campaign,
    user: &[u8],
    request_id: Option<&[u8]>,
    units: u64,
    expires_at_ms: i64,
    now: i64,
) -> Result<Plan<Reservation>, Refusal> {
    let mut stale = None;
    if let Some(owner) = request_id.and_then(|id| c.request_owner(id)) {
        match c.live(owner, now) {
            Some(claim) if *claim.user == *user => {
                // Once confirmed, a claim may keep fewer units than it was
                // reserved with: only a hold's are compared.
                if let ClaimState::Held { .. } = claim.state {
                    if claim.units != units {
                        return Err(Refusal::QtyMismatch);
                    }
                }
                return Ok(Plan::nothing(Reservation::Repeat {
                    claim: owner,
                    expires_at_ms: claim.state.expires_at_ms(),
                }));
            }
            Some(_) => return Err(Refusal::RequestIdTaken),
            // Released or expired: the id is free again.
            None => stale = Some(owner),
        }
    }
    if let Err(full) = room_for(c, user, units, now) {
        return Ok(Plan::nothing(full));
    }
    let claim = next_claim(c)?;
    let mut effects = reclaim(c, now, stale);
    effects.push(Effect::Put {
        claim,
        user: user.to_vec(),
        expires_at_ms: Some(expires_at_ms),
        request_id: request_id.map(<[u8]>::to_vec),
        units,
    });
    Ok(Plan {
        outcome: Reservation::New {
            claim,
            expires_at_ms,
        },
        effects,
        fills_last_place: fills_last_place(c, units, now),
    })
}

/// COUPON.CONFIRM: `units` of the held claim kept (`None`: all), the rest
/// free at once.
pub fn confirm(
    c: &Campaign,
    claim: u64,
    units: Option<u64>,
    now: i64,
) -> Result<Plan<Confirmation>, Refusal> {
    let Some(found) = c.live(claim, now) else {
        return Ok(Plan::nothing(Confirmation::NoLiveClaim));
    };
    if found.state == ClaimState::Confirmed {
        return Ok(Plan::nothing(Confirmation::AlreadyConfirmed));
    }
    let kept = units.unwrap_or(found.units);
    if kept > found.units {
        return Err(Refusal::QtyAboveUnits);
    }
    let mut effects = reclaim(c, now, None);
    let outcome = if c.room_to_confirm(claim, kept) {
        effects.push(Effect::Confirm {
            claim,
            units: (kept != found.units).then_some(kept),
        });
        Confirmation::Confirmed
    } else {
        // Back within the limits in the same step.
        effects.push(Effect::Release { claim });
        Confirmation::NoRoom
    };
    Ok(Plan {
        outcome,
        effects,
        fills_last_place: false,
    })
}

/// COUPON.RENEW: what a call for claim `claim` got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewal {
    /// The hold now ends then.
    Renewed {
        expires_at_ms: i64,
    },
    /// Confirmed: nothing to renew.
    Confirmed,
    NoLiveClaim,
}

impl Renewal {
    pub fn reply(self) -> i64 {
        match self {
            Renewal::Renewed { expires_at_ms } => expires_at_ms,
            Renewal::Confirmed => 0,
            Renewal::NoLiveClaim => -3,
        }
    }
}

/// COUPON.RENEW: a live hold ends at `until_ms` instead (later or sooner).
pub fn renew(c: &Campaign, claim: u64, until_ms: i64, now: i64) -> Plan<Renewal> {
    match c.live(claim, now).map(|found| found.state) {
        Some(ClaimState::Held { .. }) => {
            let mut effects = reclaim(c, now, None);
            effects.push(Effect::Renew {
                claim,
                expires_at_ms: until_ms,
            });
            Plan {
                outcome: Renewal::Renewed {
                    expires_at_ms: until_ms,
                },
                effects,
                fills_last_place: false,
            }
        }
        Some(ClaimState::Confirmed) => Plan::nothing(Renewal::Confirmed),
        None => Plan::nothing(Renewal::NoLiveClaim),
    }
}

/// COUPON.RELEASE: held or confirmed.
pub fn release(c: &Campaign, claim: u64, now: i64) -> Plan<Release> {
    if c.live(claim, now).is_none() {
        return Plan::nothing(Release::NoLiveClaim);
    }
    let mut effects = reclaim(c, now, None);
    effects.push(Effect::Release { claim });
    Plan {
        outcome: Release::Released,
        effects,
        fills_last_place: false,
    }
}

/// COUPON.ISSUE on a campaign: reserve and confirm in one step, answered
/// as ISSUE on a set is (the claim number is the rank). `limit` must be
/// the campaign's.
pub fn issue(c: &Campaign, user: &[u8], limit: i64, now: i64) -> Result<Plan<Coupon>, Refusal> {
    if limit != c.settings().limit {
        return Err(Refusal::LimitMismatch);
    }
    match room_for(c, user, 1, now) {
        Err(Reservation::UserFull) => return Ok(Plan::nothing(Coupon::AlreadyHeld)),
        Err(_) => return Ok(Plan::nothing(Coupon::SoldOut)),
        Ok(()) => {}
    }
    let claim = next_claim(c)?;
    let mut effects = reclaim(c, now, None);
    effects.push(Effect::Put {
        claim,
        user: user.to_vec(),
        expires_at_ms: None,
        request_id: None,
        units: 1,
    });
    let sold_out = fills_last_place(c, 1, now);
    Ok(Plan {
        outcome: Coupon::Issued {
            rank: claim as i64,
            sold_out,
        },
        effects,
        fills_last_place: sold_out,
    })
}

/// COUPON.REVOKE on a campaign: releases every live claim of `user`.
pub fn revoke(c: &Campaign, user: &[u8], now: i64) -> Plan<Revocation> {
    let live = c.user_live_claims(user, now);
    if live.is_empty() {
        return Plan::nothing(Revocation { released: 0 });
    }
    let mut effects = reclaim(c, now, None);
    effects.extend(live.iter().map(|&claim| Effect::Release { claim }));
    Plan {
        outcome: Revocation {
            released: live.len() as u64,
        },
        effects,
        fills_last_place: false,
    }
}

/// COUPON.RECLAIM: up to `count` expired holds reclaimed now, the oldest
/// first; how many.
pub fn reclaim_expired(c: &Campaign, count: usize, now: i64) -> Plan<u64> {
    let effects: Vec<Effect> = c
        .expired_holds(now)
        .take(count)
        .map(|claim| Effect::Expire { claim })
        .collect();
    Plan {
        outcome: effects.len() as u64,
        effects,
        fills_last_place: false,
    }
}

/// What COUPON.ALTER asks to change (at least one is given).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    pub limit: Option<i64>,
    pub per_user: Option<i64>,
    pub hold_s: Option<i64>,
    /// PERUSER came before LIMIT in the call: when both are refused, the
    /// error names the first in argument order.
    pub per_user_first: bool,
}

/// COUPON.ALTER: the settings changed now. Nothing live is touched; only
/// a sale already made (confirmed units) bounds how low LIMIT and
/// PERUSER may go. Settings equal to the current ones change nothing.
pub fn alter(c: &Campaign, changes: Changes) -> Result<Plan<()>, Refusal> {
    let current = c.settings();
    let settings = Settings {
        limit: changes.limit.unwrap_or(current.limit),
        per_user: changes.per_user.unwrap_or(current.per_user),
        hold_s: changes.hold_s.unwrap_or(current.hold_s),
    };
    let limit_refused = (settings.limit as u64) < c.confirmed_units();
    let per_user_refused = (settings.per_user as u64) < c.most_confirmed_of_a_user();
    match (limit_refused, per_user_refused) {
        (true, true) if changes.per_user_first => return Err(Refusal::PerUserBelowConfirmed),
        (true, _) => return Err(Refusal::LimitBelowConfirmed),
        (false, true) => return Err(Refusal::PerUserBelowConfirmed),
        (false, false) => {}
    }
    if settings == current {
        return Ok(Plan::nothing(()));
    }
    Ok(Plan {
        outcome: (),
        effects: vec![Effect::Alter(settings)],
        fills_last_place: false,
    })
}

/// What COUPON.RESERVEALL decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cart {
    /// Every campaign's reservation (new or repeated), in key order, and
    /// each campaign's plan.
    Reserved(Vec<Plan<Reservation>>),
    /// The first campaign, 0-based, that refuses, and why (UserFull or
    /// SoldOut); nothing is written anywhere.
    Refused { at: usize, why: Reservation },
}

/// COUPON.RESERVEALL: one hold for `user` in each campaign, of the units
/// `units(i)` gives the i-th, all or none, decided at one `now`. Each
/// campaign is judged as RESERVE judges it (a request id repeated, the
/// user's units, then the limit); the first to refuse, in key order,
/// refuses the cart.
pub fn reserve_all(
    campaigns: &[&Campaign],
    user: &[u8],
    request_id: Option<&[u8]>,
    units: impl Fn(usize) -> u64,
    expires_at_ms: i64,
    now: i64,
) -> Result<Cart, Refusal> {
    let mut plans = Vec::with_capacity(campaigns.len());
    for (at, c) in campaigns.iter().enumerate() {
        let plan = reserve(c, user, request_id, units(at), expires_at_ms, now)?;
        if let why @ (Reservation::UserFull | Reservation::SoldOut) = plan.outcome {
            return Ok(Cart::Refused { at, why });
        }
        plans.push(plan);
    }
    Ok(Cart::Reserved(plans))
}

#[cfg(test)]
mod tests {
    use super::super::effect::Totals;
    use super::super::settings::Settings;
    use super::*;

    const NOW: i64 = 1_800_000_000_000;
    const HOLD: i64 = 600_000;

    fn campaign(limit: i64, per_user: i64) -> Campaign {
        Campaign::new(Settings {
            limit,
            per_user,
            hold_s: 600,
        })
    }

    /// Decides, then applies the plan's effects as the pipeline does; the
    /// outcome.
    fn run<T>(c: &mut Campaign, decide: impl FnOnce(&Campaign) -> Plan<T>) -> T {
        let plan = decide(c);
        for effect in &plan.effects {
            c.apply(effect).unwrap();
        }
        plan.outcome
    }

    /// Decides and applies a reserve, as the command does.
    fn reserve_at(
        c: &mut Campaign,
        user: &str,
        id: Option<&str>,
        now: i64,
    ) -> Result<Reservation, Refusal> {
        let plan = reserve(
            c,
            user.as_bytes(),
            id.map(str::as_bytes),
            1,
            now + HOLD,
            now,
        )?;
        Ok(run(c, |_| plan))
    }

    fn check_totals(c: &Campaign, now: i64) {
        let info = c.info(now);
        assert_eq!(
            info.claims,
            info.confirmed + info.held + info.released + info.expired
        );
        assert_eq!(
            info.available,
            (info.limit - info.confirmed_units - info.held_units).max(0)
        );
    }

    fn new_claim(claim: u64, now: i64) -> Result<Reservation, Refusal> {
        Ok(Reservation::New {
            claim,
            expires_at_ms: now + HOLD,
        })
    }

    #[test]
    fn claims_are_numbered_in_order_and_never_reused() {
        let mut c = campaign(3, 1);
        assert_eq!(reserve_at(&mut c, "a", None, NOW), new_claim(1, NOW));
        assert_eq!(run(&mut c, |c| release(c, 1, NOW)), Release::Released);
        assert_eq!(reserve_at(&mut c, "a", None, NOW), new_claim(2, NOW));
        check_totals(&c, NOW);
    }

    #[test]
    fn replies_are_the_documented_integers() {
        assert_eq!(
            Reservation::New {
                claim: 4,
                expires_at_ms: 9
            }
            .reply(),
            [4, 9]
        );
        assert_eq!(Reservation::UserFull.reply(), [-1, 0]);
        assert_eq!(Reservation::SoldOut.reply(), [-2, 0]);
        let confirmations = [
            Confirmation::Confirmed,
            Confirmation::AlreadyConfirmed,
            Confirmation::NoRoom,
            Confirmation::NoLiveClaim,
        ];
        assert_eq!(confirmations.map(Confirmation::reply), [1, 0, -2, -3]);
        assert_eq!(
            [Release::Released, Release::NoLiveClaim].map(Release::reply),
            [1, 0]
        );
    }

    #[test]
    fn the_user_is_checked_before_the_limit() {
        let mut c = campaign(1, 1);
        reserve_at(&mut c, "a", None, NOW).unwrap();
        assert_eq!(
            reserve_at(&mut c, "a", None, NOW),
            Ok(Reservation::UserFull)
        );
        assert_eq!(reserve_at(&mut c, "b", None, NOW), Ok(Reservation::SoldOut));
    }

    #[test]
    fn the_last_place_is_reported_once() {
        let mut c = campaign(2, 1);
        let first = reserve(&c, b"a", None, 1, NOW + HOLD, NOW).unwrap();
        assert!(!first.fills_last_place);
        run(&mut c, |_| first);
        let last = reserve(&c, b"b", None, 1, NOW + HOLD, NOW).unwrap();
        assert!(last.fills_last_place);
    }

    #[test]
    fn a_hold_stops_counting_the_millisecond_after_its_expiry() {
        let mut c = campaign(1, 1);
        reserve_at(&mut c, "a", None, NOW).unwrap();
        let at = NOW + HOLD;
        assert_eq!(reserve_at(&mut c, "b", None, at), Ok(Reservation::SoldOut));
        assert_eq!(
            confirm(&c, 1, None, at).unwrap().outcome,
            Confirmation::Confirmed
        );
        assert_eq!(
            confirm(&c, 1, None, at + 1).unwrap().outcome,
            Confirmation::NoLiveClaim
        );
        assert_eq!(release(&c, 1, at + 1).outcome, Release::NoLiveClaim);
        assert_eq!(c.info(at).held, 1);
        assert_eq!(c.info(at + 1).held, 0);
        assert_eq!(c.info(at + 1).expired, 1);
        assert!(c.claims(1, 10, at + 1).is_empty());
        // The place is free at once, before any reclaim.
        assert_eq!(reserve_at(&mut c, "b", None, at + 1), new_claim(2, at + 1));
        check_totals(&c, at + 1);
    }

    #[test]
    fn a_request_id_repeats_its_live_claim_even_when_full() {
        let mut c = campaign(1, 1);
        assert_eq!(reserve_at(&mut c, "a", Some("r1"), NOW), new_claim(1, NOW));
        let repeat = Reservation::Repeat {
            claim: 1,
            expires_at_ms: NOW + HOLD,
        };
        assert_eq!(reserve_at(&mut c, "a", Some("r1"), NOW + 5), Ok(repeat));
        assert_eq!(
            reserve(&c, b"a", Some(b"r1"), 1, 0, NOW).unwrap().effects,
            []
        );
        run(&mut c, |c| confirm(c, 1, None, NOW).unwrap());
        let confirmed = Reservation::Repeat {
            claim: 1,
            expires_at_ms: -1,
        };
        assert_eq!(reserve_at(&mut c, "a", Some("r1"), NOW), Ok(confirmed));
        // Another user with the same id: an error.
        assert_eq!(
            reserve_at(&mut c, "b", Some("r1"), NOW),
            Err(Refusal::RequestIdTaken)
        );
    }

    #[test]
    fn a_released_or_expired_request_id_is_free_again() {
        let mut c = campaign(5, 1);
        reserve_at(&mut c, "a", Some("r1"), NOW).unwrap();
        run(&mut c, |c| release(c, 1, NOW));
        assert_eq!(reserve_at(&mut c, "b", Some("r1"), NOW), new_claim(2, NOW));
        // Claim 2 expires; its id goes to a third user, and the stale
        // claim is reclaimed by that write.
        let later = NOW + HOLD + 1;
        assert_eq!(
            reserve_at(&mut c, "c", Some("r1"), later),
            new_claim(3, later)
        );
        assert!(!c.is_expired_hold(2, later), "the stale claim went");
        assert_eq!(c.request_owner(b"r1"), Some(3));
        let repeat = Reservation::Repeat {
            claim: 3,
            expires_at_ms: later + HOLD,
        };
        assert_eq!(reserve_at(&mut c, "c", Some("r1"), later), Ok(repeat));
        check_totals(&c, later);
    }

    #[test]
    fn an_expired_id_is_taken_over_even_before_it_is_reclaimed() {
        let mut c = campaign(40, 1);
        // 20 older expired holds fill the reclaim budget before claim 21.
        for n in 0..20 {
            reserve_at(&mut c, &format!("old{n}"), None, NOW - 2 * HOLD).unwrap();
        }
        reserve_at(&mut c, "a", Some("r1"), NOW - HOLD - 10).unwrap();
        let plan = reserve(&c, b"b", Some(b"r1"), 1, NOW + HOLD, NOW).unwrap();
        let expired = plan
            .effects
            .iter()
            .filter(|e| matches!(e, Effect::Expire { .. }))
            .count();
        assert_eq!(expired, RECLAIM_PER_CALL);
        assert_eq!(plan.effects[0], Effect::Expire { claim: 21 });
        assert_eq!(run(&mut c, |_| plan), new_claim(22, NOW).unwrap());
        assert_eq!(c.request_owner(b"r1"), Some(22));
        check_totals(&c, NOW);
    }

    #[test]
    fn calls_that_change_nothing_have_no_effects() {
        let mut c = campaign(2, 1);
        // An expired hold nothing has reclaimed yet, and two live ones.
        for (claim, user, expires_at_ms) in [
            (1, "old", NOW - 1),
            (2, "a", NOW + HOLD),
            (3, "b", NOW + HOLD),
        ] {
            let put = Effect::Put {
                claim,
                user: user.as_bytes().to_vec(),
                expires_at_ms: Some(expires_at_ms),
                request_id: None,
                units: 1,
            };
            c.apply(&put).unwrap();
        }
        assert_eq!(
            confirm(&c, 99, None, NOW).unwrap(),
            Plan::nothing(Confirmation::NoLiveClaim)
        );
        assert_eq!(
            confirm(&c, 1, None, NOW).unwrap(),
            Plan::nothing(Confirmation::NoLiveClaim)
        );
        assert_eq!(release(&c, 99, NOW), Plan::nothing(Release::NoLiveClaim));
        assert_eq!(revoke(&c, b"nobody", NOW).effects, []);
        assert_eq!(revoke(&c, b"old", NOW).effects, []);
        assert_eq!(
            reserve(&c, b"a", None, 1, NOW + HOLD, NOW),
            Ok(Plan::nothing(Reservation::UserFull))
        );
        assert_eq!(
            reserve(&c, b"c", None, 1, NOW + HOLD, NOW),
            Ok(Plan::nothing(Reservation::SoldOut))
        );
        assert_eq!(issue(&c, b"c", 2, NOW), Ok(Plan::nothing(Coupon::SoldOut)));
        assert!(c.is_expired_hold(1, NOW));
    }

    #[test]
    fn writes_reclaim_a_bounded_number_of_the_oldest_expired_holds() {
        let mut c = campaign(1_000, 1);
        for user in 0..100 {
            reserve_at(&mut c, &format!("u{user}"), None, NOW + user).unwrap();
        }
        let later = NOW + HOLD + 1_000;
        let plan = reserve(&c, b"new", None, 1, later + HOLD, later).unwrap();
        let expired: Vec<u64> = plan
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::Expire { claim } => Some(*claim),
                _ => None,
            })
            .collect();
        assert_eq!(expired, (1..=RECLAIM_PER_CALL as u64).collect::<Vec<_>>());
        run(&mut c, |_| plan);
        assert_eq!(c.info(later).expired, 100);
        assert_eq!(c.stored_count(), 100 - RECLAIM_PER_CALL + 1);
        check_totals(&c, later);
    }

    #[test]
    fn one_users_expired_holds_are_reclaimed_within_the_same_budget() {
        let mut c = campaign(100_000, 100_000);
        for _ in 0..5_000 {
            reserve_at(&mut c, "whale", None, NOW).unwrap();
        }
        let later = NOW + HOLD + 1;
        assert_eq!(c.user_live(b"whale", later), 0);
        let plan = reserve(&c, b"whale", None, 1, later + HOLD, later).unwrap();
        assert_eq!(plan.effects.len(), RECLAIM_PER_CALL + 1);
        run(&mut c, |_| plan);
        let plan = revoke(&c, b"whale", later);
        assert_eq!(plan.outcome, Revocation { released: 1 });
        assert_eq!(plan.effects.len(), RECLAIM_PER_CALL + 1);
    }

    /// Units, worked out by hand from SPEC: limit 10, PERUSER 4.
    #[test]
    fn units_count_against_the_limit_and_the_users_units() {
        let mut c = campaign(10, 4);
        let hold = |c: &Campaign, user: &str, id: Option<&str>, units: u64| {
            reserve(
                c,
                user.as_bytes(),
                id.map(str::as_bytes),
                units,
                NOW + HOLD,
                NOW,
            )
        };
        // a holds 3; 3 + 2 would pass PERUSER 4: -1, whatever the limit.
        let plan = hold(&c, "a", Some("r"), 3).unwrap();
        assert_eq!(plan.outcome, new_claim(1, NOW).unwrap());
        run(&mut c, |_| plan);
        assert_eq!(
            hold(&c, "a", None, 2).unwrap().outcome,
            Reservation::UserFull
        );
        assert_eq!(
            hold(&c, "a", None, 1).unwrap().outcome,
            new_claim(2, NOW).unwrap()
        );
        // The same id: repeated with the same units, refused with others.
        assert_eq!(
            hold(&c, "a", Some("r"), 3).unwrap().outcome,
            Reservation::Repeat {
                claim: 1,
                expires_at_ms: NOW + HOLD
            }
        );
        assert_eq!(hold(&c, "a", Some("r"), 2), Err(Refusal::QtyMismatch));
        // b: 4 units fill 3 + 4 = 7; c's 4 would pass 10, 3 take the last.
        run(&mut c, |c| hold(c, "b", None, 4).unwrap());
        assert_eq!(
            hold(&c, "c", None, 4).unwrap().outcome,
            Reservation::SoldOut
        );
        let last = hold(&c, "c", None, 3).unwrap();
        assert!(last.fills_last_place);
        run(&mut c, |_| last);
        let info = c.info(NOW);
        assert_eq!((info.held, info.held_units, info.available), (3, 10, 0));
        // a confirms 1 of its 3: 2 free at once, for d.
        assert_eq!(confirm(&c, 1, Some(4), NOW), Err(Refusal::QtyAboveUnits));
        assert_eq!(
            run(&mut c, |c| confirm(c, 1, Some(1), NOW).unwrap()),
            Confirmation::Confirmed
        );
        let info = c.info(NOW);
        assert_eq!(
            (
                info.confirmed,
                info.confirmed_units,
                info.held_units,
                info.available
            ),
            (1, 1, 7, 2)
        );
        assert_eq!(c.live(1, NOW).unwrap().units, 1);
        // A confirmed claim repeats whatever QTY says (it may keep fewer).
        assert_eq!(
            hold(&c, "a", Some("r"), 3).unwrap().outcome,
            Reservation::Repeat {
                claim: 1,
                expires_at_ms: -1
            }
        );
        assert_eq!(
            confirm(&c, 1, Some(9), NOW).unwrap().outcome,
            Confirmation::AlreadyConfirmed
        );
        run(&mut c, |c| hold(c, "d", None, 2).unwrap());
        // ALTER judges confirmed units: b confirms 4 (PERUSER 4), then
        // LIMIT 4 is below 5 confirmed units and PERUSER 3 below b's 4.
        run(&mut c, |c| confirm(c, 2, None, NOW).unwrap());
        let lower = |limit, per_user| Changes {
            limit,
            per_user,
            ..Changes::default()
        };
        assert_eq!(
            alter(&c, lower(Some(4), None)),
            Err(Refusal::LimitBelowConfirmed)
        );
        assert_eq!(
            alter(&c, lower(None, Some(3))),
            Err(Refusal::PerUserBelowConfirmed)
        );
        assert!(alter(&c, lower(Some(5), Some(4))).is_ok());
        // Every unit of a released or revoked claim is free.
        run(&mut c, |c| revoke(c, b"b", NOW));
        assert_eq!(c.info(NOW).available, 4);
        check_totals(&c, NOW);
    }

    /// CONFIRM's -2 with units: a hold live again past the limit's units.
    #[test]
    fn a_confirm_whose_units_do_not_fit_releases_the_hold() {
        let mut c = campaign(5, 5);
        for (claim, user, units, expires_at_ms) in [(1, "a", 3, None), (2, "b", 3, Some(NOW))] {
            let put = Effect::Put {
                claim,
                user: user.as_bytes().to_vec(),
                expires_at_ms,
                request_id: None,
                units,
            };
            c.apply(&put).unwrap();
        }
        // 3 + 3 do not fit 5; 3 + 2 do.
        let plan = confirm(&c, 2, None, NOW).unwrap();
        assert_eq!(plan.outcome, Confirmation::NoRoom);
        assert_eq!(plan.effects, [Effect::Release { claim: 2 }]);
        let plan = confirm(&c, 2, Some(2), NOW).unwrap();
        assert_eq!(plan.outcome, Confirmation::Confirmed);
        run(&mut c, |_| plan);
        assert_eq!(c.info(NOW).confirmed_units, 5);
    }

    #[test]
    fn issue_needs_the_campaigns_limit_and_confirms_at_once() {
        let mut c = campaign(2, 1);
        assert_eq!(issue(&c, b"a", 3, NOW), Err(Refusal::LimitMismatch));
        let issued = |rank, sold_out| Coupon::Issued { rank, sold_out };
        assert_eq!(
            run(&mut c, |c| issue(c, b"a", 2, NOW).unwrap()),
            issued(1, false)
        );
        assert_eq!(
            run(&mut c, |c| issue(c, b"a", 2, NOW).unwrap()),
            Coupon::AlreadyHeld
        );
        assert_eq!(
            run(&mut c, |c| issue(c, b"b", 2, NOW).unwrap()),
            issued(2, true)
        );
        assert_eq!(
            run(&mut c, |c| issue(c, b"c", 2, NOW).unwrap()),
            Coupon::SoldOut
        );
        assert_eq!(c.info(NOW + 10 * HOLD).confirmed, 2);
    }

    #[test]
    fn revoke_releases_every_live_claim_of_the_user() {
        let mut c = campaign(10, 3);
        for _ in 0..3 {
            reserve_at(&mut c, "a", None, NOW).unwrap();
        }
        run(&mut c, |c| confirm(c, 2, None, NOW).unwrap());
        assert_eq!(
            run(&mut c, |c| revoke(c, b"a", NOW)),
            Revocation { released: 3 }
        );
        assert_eq!(c.info(NOW).released, 3);
        assert_eq!(revoke(&c, b"a", NOW).outcome, Revocation { released: 0 });
        check_totals(&c, NOW);
    }

    #[test]
    fn claims_lists_live_claims_in_order_from_a_number() {
        let mut c = campaign(10, 5);
        reserve_at(&mut c, "a", Some("x"), NOW).unwrap();
        reserve_at(&mut c, "b", None, NOW - HOLD - 1).unwrap(); // already expired at NOW
        reserve_at(&mut c, "c", None, NOW).unwrap();
        run(&mut c, |c| confirm(c, 3, None, NOW).unwrap());
        let listed: Vec<(u64, ClaimState)> = c
            .claims(1, 10, NOW)
            .iter()
            .map(|v| (v.claim, v.state))
            .collect();
        let held = ClaimState::Held {
            expires_at_ms: NOW + HOLD,
        };
        assert_eq!(listed, [(1, held), (3, ClaimState::Confirmed)]);
        assert_eq!(c.claims(2, 10, NOW)[0].claim, 3);
        assert_eq!(c.claims(1, 1, NOW).len(), 1);
        assert_eq!(c.claims(1, 10, NOW)[0].request_id, Some(&b"x"[..]));
    }

    #[test]
    fn the_last_claim_number_is_made_then_new_claims_are_refused() {
        let mut c = campaign(10, 10);
        let made = LAST_CLAIM - 1;
        c.apply(&Effect::Totals(Totals {
            claims_made: made,
            released: made,
            expired: 0,
        }))
        .unwrap();
        assert_eq!(
            reserve_at(&mut c, "a", Some("r"), NOW),
            new_claim(LAST_CLAIM, NOW)
        );
        assert_eq!(
            reserve_at(&mut c, "b", None, NOW),
            Err(Refusal::ClaimNumbersUsedUp)
        );
        assert_eq!(issue(&c, b"b", 10, NOW), Err(Refusal::ClaimNumbersUsedUp));
        // A repeat, and the -1/-2 answers, reply as usual.
        assert!(matches!(
            reserve_at(&mut c, "a", Some("r"), NOW),
            Ok(Reservation::Repeat { .. })
        ));
        let mut one = campaign(1, 1);
        one.apply(&Effect::Totals(Totals {
            claims_made: made,
            released: made,
            expired: 0,
        }))
        .unwrap();
        reserve_at(&mut one, "a", None, NOW).unwrap();
        assert_eq!(
            reserve_at(&mut one, "a", None, NOW),
            Ok(Reservation::UserFull)
        );
        assert_eq!(
            reserve_at(&mut one, "b", None, NOW),
            Ok(Reservation::SoldOut)
        );
        check_totals(&c, NOW);
    }

    /// A write's decision, its outcome dropped.
    type Decide = Box<dyn Fn(&Campaign) -> Plan<()>>;

    fn unit<T>(plan: Plan<T>) -> Plan<()> {
        Plan {
            outcome: (),
            effects: plan.effects,
            fills_last_place: plan.fills_last_place,
        }
    }

    /// Expiry-index entries read by `decide`, and the holds its plan
    /// reclaims.
    fn work<T>(c: &Campaign, decide: impl FnOnce(&Campaign) -> Plan<T>) -> (usize, usize, Plan<T>) {
        use super::super::store::HOLDS_VISITED;
        HOLDS_VISITED.with(|v| v.set(0));
        let plan = decide(c);
        let reclaimed = plan
            .effects
            .iter()
            .filter(|e| matches!(e, Effect::Expire { .. }))
            .count();
        (HOLDS_VISITED.with(|v| v.get()), reclaimed, plan)
    }

    /// Work per call is bounded by the call, not by the campaign: RECLAIM
    /// reads and reclaims at most COUNT expired holds (one more entry read
    /// ends the walk), every other write at most RECLAIM_PER_CALL, however
    /// many holds have expired, of many users or of one.
    #[test]
    fn a_call_reclaims_and_reads_a_bounded_number_of_holds() {
        const EXPIRED: usize = 30_000;
        let past = NOW - 2 * HOLD;
        for whale in [false, true] {
            let mut c = campaign(
                EXPIRED as i64 + 1_000,
                if whale { EXPIRED as i64 + 10 } else { 1 },
            );
            let user = move |i: usize| {
                if whale {
                    "whale".to_string()
                } else {
                    format!("u{i}")
                }
            };
            for i in 0..EXPIRED {
                reserve_at(&mut c, &user(i), None, past).unwrap();
            }
            // A live hold and a confirmed claim to confirm and release.
            let live = match reserve_at(&mut c, "live", None, NOW).unwrap() {
                Reservation::New { claim, .. } => claim,
                other => panic!("{other:?}"),
            };
            assert_eq!(c.info(NOW).expired, EXPIRED as i64);
            for count in [1, 16, 100, 10_000] {
                let (visited, reclaimed, plan) = work(&c, |c| reclaim_expired(c, count, NOW));
                assert_eq!(reclaimed, count, "RECLAIM COUNT {count}");
                assert_eq!(plan.outcome, count as u64);
                assert!(visited <= count + 1, "RECLAIM COUNT {count} read {visited}");
            }
            let bounded = RECLAIM_PER_CALL + 1;
            let calls: [(&str, Decide); 6] = [
                (
                    "reserve",
                    Box::new(|c| unit(reserve(c, b"new", None, 1, NOW + HOLD, NOW).unwrap())),
                ),
                (
                    "reserve by the user",
                    Box::new(move |c| {
                        unit(reserve(c, user(0).as_bytes(), None, 1, NOW + HOLD, NOW).unwrap())
                    }),
                ),
                (
                    "confirm",
                    Box::new(move |c| unit(confirm(c, live, None, NOW).unwrap())),
                ),
                ("release", Box::new(move |c| unit(release(c, live, NOW)))),
                (
                    "issue",
                    Box::new(|c| unit(issue(c, b"buyer", c.settings().limit, NOW).unwrap())),
                ),
                ("revoke", Box::new(|c| unit(revoke(c, b"live", NOW)))),
            ];
            for (name, call) in &calls {
                let (visited, reclaimed, _) = work(&c, call);
                assert_eq!(reclaimed, RECLAIM_PER_CALL, "{name} (one user: {whale})");
                assert!(
                    visited <= bounded,
                    "{name} read {visited} holds (one user: {whale})"
                );
            }
            // Drained by RECLAIM: never more than COUNT a call, and no
            // hold is left behind.
            let mut calls = 0;
            loop {
                let (visited, reclaimed, plan) = work(&c, |c| reclaim_expired(c, 7_000, NOW));
                assert!(reclaimed <= 7_000 && visited <= 7_001);
                run(&mut c, |_| plan);
                calls += 1;
                if reclaimed == 0 {
                    break;
                }
            }
            assert_eq!(calls, EXPIRED.div_ceil(7_000) + 1);
            assert_eq!(c.expired_holds(NOW).count(), 0);
            check_totals(&c, NOW);
        }
    }
}
