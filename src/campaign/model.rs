//! A campaign, as plain values: its settings, its claims and the rules of
//! every campaign command.
//!
//! Every decision is a function of the campaign and `now` (unix ms) that
//! changes nothing; what a decision changes is a list of [`Effect`]s,
//! applied by [`Campaign::apply`] the same way on the primary, on a
//! replica and when the AOF loads. Effects carry absolute times and claim
//! numbers, never "now", so every copy converges exactly.
//!
//! A hold is gone once `now > expires_at_ms` (the rule Redis uses for
//! keys), for every decision, whether or not its memory was reclaimed yet.
//! Reclaiming is itself an effect ([`Effect::Expire`]), and only calls that
//! write anyway add it, a bounded number per call.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use super::expiry::ExpiryIndex;

/// Oldest expired holds reclaimed by one writing call (besides the
/// caller's own), so that no call does unbounded work.
pub const RECLAIM_PER_CALL: usize = 16;

/// Claim numbers per [`ClaimBlock`].
const CLAIM_BLOCK: u64 = 512;

/// What one run of [`CLAIM_BLOCK`] claim numbers holds, so that CLAIMS
/// skips runs with nothing live: after a mass expiry, long runs of expired
/// holds wait for the amortised reclaim.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ClaimBlock {
    confirmed: u32,
    held: u32,
    /// The latest expiry among its holds.
    latest_expiry: i64,
}

impl ClaimBlock {
    fn has_live(&self, now: i64) -> bool {
        self.confirmed > 0 || (self.held > 0 && now <= self.latest_expiry)
    }
}

/// What COUPON.CREATE fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Most live claims at once.
    pub limit: i64,
    /// Most live claims of one user.
    pub per_user: i64,
    /// RESERVE's default hold, seconds.
    pub hold_s: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimState {
    Held { expires_at_ms: i64 },
    Confirmed,
}

impl ClaimState {
    /// As replies show it: the expiry, or -1 once confirmed.
    pub fn expires_at_ms(self) -> i64 {
        match self {
            ClaimState::Held { expires_at_ms } => expires_at_ms,
            ClaimState::Confirmed => -1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub user: Rc<[u8]>,
    pub request_id: Option<Box<[u8]>>,
    pub state: ClaimState,
}

/// A change to a campaign. The only way one changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A new claim: held until `expires_at_ms`, or confirmed (`None`).
    Put {
        claim: u64,
        user: Vec<u8>,
        expires_at_ms: Option<i64>,
        request_id: Option<Vec<u8>>,
    },
    /// A held claim becomes confirmed.
    Confirm { claim: u64 },
    /// A live claim is given back; its place is free.
    Release { claim: u64 },
    /// An expired hold's memory is reclaimed.
    Expire { claim: u64 },
    /// The running totals, as a rewritten AOF restores them.
    Totals {
        claims_made: u64,
        released: u64,
        expired: u64,
    },
}

/// Why an effect could not be applied: the effect does not fit the
/// campaign (a corrupt or foreign replication stream), never a user error.
pub type ApplyError = &'static str;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Campaign {
    pub settings: Settings,
    /// The highest claim number made so far: numbers are never reused.
    claims_made: u64,
    /// Live claims, and expired holds not yet reclaimed, by number.
    claims: BTreeMap<u64, Claim>,
    by_user: HashMap<Rc<[u8]>, Vec<u64>>,
    by_request: HashMap<Box<[u8]>, u64>,
    /// The held claims of `claims`, by expiry.
    holds: ExpiryIndex,
    /// `claims` summed per run of numbers.
    blocks: BTreeMap<u64, ClaimBlock>,
    confirmed: u64,
    released: u64,
    /// Expired holds reclaimed so far.
    expired: u64,
    /// Bytes of the users and request ids stored, kept as claims come and
    /// go so that MEMORY USAGE does not walk the campaign.
    text_bytes: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            limit: 1,
            per_user: 1,
            hold_s: 600,
        }
    }
}

/// What COUPON.RESERVE decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    /// A new held claim; `sold_out` when it took the last place.
    New {
        claim: u64,
        expires_at_ms: i64,
        sold_out: bool,
    },
    /// The request id's live claim, repeated (`expires_at_ms` -1 once
    /// confirmed); nothing changes.
    Repeat { claim: u64, expires_at_ms: i64 },
    /// The user already has `per_user` live claims: `[-1, 0]`.
    UserFull,
    /// `limit` claims are live: `[-2, 0]`.
    SoldOut,
}

/// What COUPON.ISSUE decides on a campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issue {
    /// A new confirmed claim; `sold_out` when it took the last place.
    New {
        claim: u64,
        sold_out: bool,
    },
    UserFull,
    SoldOut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CampaignError {
    /// The request id belongs to a live claim of another user.
    RequestIdTaken,
    /// ISSUE's limit is not the campaign's.
    LimitMismatch,
}

/// A decision and the effects that carry it out (none: nothing changes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan<T> {
    pub outcome: T,
    pub effects: Vec<Effect>,
}

impl<T> Plan<T> {
    fn nothing(outcome: T) -> Self {
        Plan {
            outcome,
            effects: Vec::new(),
        }
    }
}

/// COUPON.INFO's fields, exact as of `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    pub limit: i64,
    pub per_user: i64,
    pub hold_s: i64,
    pub confirmed: i64,
    pub held: i64,
    pub available: i64,
    pub claims: i64,
    pub expired: i64,
    pub released: i64,
}

/// One live claim as COUPON.CLAIMS lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimView<'a> {
    pub claim: u64,
    pub user: &'a [u8],
    pub state: ClaimState,
    pub request_id: Option<&'a [u8]>,
}

impl Campaign {
    pub fn new(settings: Settings) -> Self {
        Campaign {
            settings,
            ..Campaign::default()
        }
    }

    fn is_live(claim: &Claim, now: i64) -> bool {
        match claim.state {
            ClaimState::Confirmed => true,
            ClaimState::Held { expires_at_ms } => now <= expires_at_ms,
        }
    }

    fn live(&self, claim: u64, now: i64) -> Option<&Claim> {
        self.claims
            .get(&claim)
            .filter(|found| Self::is_live(found, now))
    }

    /// Holds whose expiry has passed at `now`, reclaimed or not.
    fn expired_holds(&self, now: i64) -> usize {
        self.holds.count_before(now)
    }

    fn live_count(&self, now: i64) -> i64 {
        (self.confirmed as usize + self.holds.len() - self.expired_holds(now)) as i64
    }

    fn user_claims<'a>(&'a self, user: &[u8]) -> impl Iterator<Item = (u64, &'a Claim)> + 'a {
        let numbers = self.by_user.get(user).map_or(&[][..], Vec::as_slice);
        numbers.iter().map(|n| (*n, &self.claims[n]))
    }

    fn user_live(&self, user: &[u8], now: i64) -> i64 {
        self.user_claims(user)
            .filter(|(_, c)| Self::is_live(c, now))
            .count() as i64
    }

    /// Housekeeping owed by a call that writes: reclaim `own` claims that
    /// are expired holds (the caller's, so its user's list stays short),
    /// then up to [`RECLAIM_PER_CALL`] of the oldest expired holds.
    fn reclaim(&self, now: i64, own: impl IntoIterator<Item = u64>) -> Vec<Effect> {
        let expired = |claim: u64| {
            self.claims.get(&claim).is_some_and(|c| {
                matches!(c.state, ClaimState::Held { .. }) && !Self::is_live(c, now)
            })
        };
        let mut numbers: Vec<u64> = own.into_iter().filter(|&c| expired(c)).collect();
        numbers.sort_unstable();
        numbers.dedup();
        let oldest = self
            .holds
            .iter()
            .take_while(|(expires_at_ms, _)| *expires_at_ms < now)
            .map(|&(_, claim)| claim)
            .filter(|claim| !numbers.contains(claim))
            .take(RECLAIM_PER_CALL)
            .collect::<Vec<_>>();
        numbers.extend(oldest);
        numbers
            .into_iter()
            .map(|claim| Effect::Expire { claim })
            .collect()
    }

    /// COUPON.RESERVE: a place held until `expires_at_ms` for `user`.
    /// The request id is checked first, then the user's claims, then the
    /// limit.
    pub fn reserve(
        &self,
        user: &[u8],
        request_id: Option<&[u8]>,
        expires_at_ms: i64,
        now: i64,
    ) -> Result<Plan<Reserve>, CampaignError> {
        let mut stale_request = None;
        if let Some(id) = request_id {
            if let Some(&number) = self.by_request.get(id) {
                match self.live(number, now) {
                    Some(claim) if *claim.user == *user => {
                        return Ok(Plan::nothing(Reserve::Repeat {
                            claim: number,
                            expires_at_ms: claim.state.expires_at_ms(),
                        }));
                    }
                    Some(_) => return Err(CampaignError::RequestIdTaken),
                    // Released or expired: the id is free again.
                    None => stale_request = Some(number),
                }
            }
        }
        if self.user_live(user, now) >= self.settings.per_user {
            return Ok(Plan::nothing(Reserve::UserFull));
        }
        if self.live_count(now) >= self.settings.limit {
            return Ok(Plan::nothing(Reserve::SoldOut));
        }
        let claim = self.claims_made + 1;
        let own = self.user_claims(user).map(|(n, _)| n).chain(stale_request);
        let mut effects = self.reclaim(now, own);
        effects.push(Effect::Put {
            claim,
            user: user.to_vec(),
            expires_at_ms: Some(expires_at_ms),
            request_id: request_id.map(<[u8]>::to_vec),
        });
        Ok(Plan {
            outcome: Reserve::New {
                claim,
                expires_at_ms,
                sold_out: self.fills_up(now),
            },
            effects,
        })
    }

    /// Would a new claim at `now` take the last place?
    fn fills_up(&self, now: i64) -> bool {
        self.live_count(now) + 1 == self.settings.limit
    }

    /// COUPON.CONFIRM: 1 confirmed now, 0 already confirmed, -3 no live
    /// claim with that number.
    pub fn confirm(&self, claim: u64, now: i64) -> Plan<i64> {
        match self.live(claim, now).map(|c| c.state) {
            Some(ClaimState::Held { .. }) => {
                let mut effects = self.reclaim(now, []);
                effects.push(Effect::Confirm { claim });
                Plan {
                    outcome: 1,
                    effects,
                }
            }
            Some(ClaimState::Confirmed) => Plan::nothing(0),
            None => Plan::nothing(-3),
        }
    }

    /// COUPON.RELEASE: 1 released (held or confirmed), 0 no live claim.
    pub fn release(&self, claim: u64, now: i64) -> Plan<i64> {
        if self.live(claim, now).is_none() {
            return Plan::nothing(0);
        }
        let mut effects = self.reclaim(now, []);
        effects.push(Effect::Release { claim });
        Plan {
            outcome: 1,
            effects,
        }
    }

    /// COUPON.ISSUE on a campaign: reserve and confirm in one step.
    /// `limit` must be the campaign's.
    pub fn issue(&self, user: &[u8], limit: i64, now: i64) -> Result<Plan<Issue>, CampaignError> {
        if limit != self.settings.limit {
            return Err(CampaignError::LimitMismatch);
        }
        if self.user_live(user, now) >= self.settings.per_user {
            return Ok(Plan::nothing(Issue::UserFull));
        }
        if self.live_count(now) >= self.settings.limit {
            return Ok(Plan::nothing(Issue::SoldOut));
        }
        let claim = self.claims_made + 1;
        let own = self.user_claims(user).map(|(n, _)| n);
        let mut effects = self.reclaim(now, own);
        effects.push(Effect::Put {
            claim,
            user: user.to_vec(),
            expires_at_ms: None,
            request_id: None,
        });
        Ok(Plan {
            outcome: Issue::New {
                claim,
                sold_out: self.fills_up(now),
            },
            effects,
        })
    }

    /// COUPON.REVOKE on a campaign: releases every live claim of `user`;
    /// the outcome is how many.
    pub fn revoke(&self, user: &[u8], now: i64) -> Plan<i64> {
        let live: Vec<u64> = self
            .user_claims(user)
            .filter(|(_, c)| Self::is_live(c, now))
            .map(|(n, _)| n)
            .collect();
        if live.is_empty() {
            return Plan::nothing(0);
        }
        let own = self.user_claims(user).map(|(n, _)| n);
        let mut effects = self.reclaim(now, own);
        effects.extend(live.iter().map(|&claim| Effect::Release { claim }));
        Plan {
            outcome: live.len() as i64,
            effects,
        }
    }

    pub fn info(&self, now: i64) -> Info {
        let expired_now = self.expired_holds(now);
        let held = (self.holds.len() - expired_now) as i64;
        let confirmed = self.confirmed as i64;
        Info {
            limit: self.settings.limit,
            per_user: self.settings.per_user,
            hold_s: self.settings.hold_s,
            confirmed,
            held,
            available: self.settings.limit - confirmed - held,
            claims: self.claims_made as i64,
            expired: (self.expired + expired_now as u64) as i64,
            released: self.released as i64,
        }
    }

    /// COUPON.CLAIMS: live claims numbered `from` or more, in order, at
    /// most `count`. Runs of numbers with nothing live are skipped whole.
    pub fn claims(&self, from: u64, count: usize, now: i64) -> Vec<ClaimView<'_>> {
        let mut found = Vec::new();
        for (&block, summary) in self.blocks.range(from / CLAIM_BLOCK..) {
            if !summary.has_live(now) {
                continue;
            }
            let numbers = (block * CLAIM_BLOCK).max(from)..(block + 1) * CLAIM_BLOCK;
            for (&number, claim) in self.claims.range(numbers) {
                if found.len() == count {
                    return found;
                }
                if Self::is_live(claim, now) {
                    found.push(ClaimView {
                        claim: number,
                        user: &claim.user,
                        state: claim.state,
                        request_id: claim.request_id.as_deref(),
                    });
                }
            }
        }
        found.truncate(count);
        found
    }

    /// Keeps the block summary of `number` in step with a change of its
    /// claim: `added` a claim in `state`, or took one away.
    fn count_in_block(&mut self, number: u64, state: ClaimState, added: bool) {
        let key = number / CLAIM_BLOCK;
        let block = self.blocks.entry(key).or_default();
        match (state, added) {
            (ClaimState::Confirmed, true) => block.confirmed += 1,
            (ClaimState::Confirmed, false) => block.confirmed -= 1,
            (ClaimState::Held { expires_at_ms }, true) => {
                block.held += 1;
                block.latest_expiry = block.latest_expiry.max(expires_at_ms);
            }
            (ClaimState::Held { expires_at_ms }, false) => {
                block.held -= 1;
                if expires_at_ms == block.latest_expiry {
                    // Recomputed from the block's own claims: at most 512.
                    let range = key * CLAIM_BLOCK..(key + 1) * CLAIM_BLOCK;
                    block.latest_expiry = self
                        .claims
                        .range(range)
                        .filter(|(&n, _)| n != number)
                        .filter_map(|(_, c)| match c.state {
                            ClaimState::Held { expires_at_ms } => Some(expires_at_ms),
                            ClaimState::Confirmed => None,
                        })
                        .max()
                        .unwrap_or(0);
                }
            }
        }
        if block.confirmed == 0 && block.held == 0 {
            self.blocks.remove(&key);
        }
    }

    /// Applies one effect. Effects come from this module's own decisions,
    /// or from the primary and the AOF, which made them the same way; one
    /// that does not fit is refused whole, and nothing is changed.
    pub fn apply(&mut self, effect: &Effect) -> Result<(), ApplyError> {
        match effect {
            Effect::Put {
                claim,
                user,
                expires_at_ms,
                request_id,
            } => {
                if *claim == 0 || self.claims.contains_key(claim) {
                    return Err("a claim with that number exists");
                }
                let user: Rc<[u8]> = match self.by_user.get_key_value(user.as_slice()) {
                    Some((known, _)) => Rc::clone(known),
                    None => {
                        self.text_bytes += user.len();
                        Rc::from(user.as_slice())
                    }
                };
                let state = match expires_at_ms {
                    Some(at) => {
                        self.holds.insert((*at, *claim));
                        ClaimState::Held { expires_at_ms: *at }
                    }
                    None => {
                        self.confirmed += 1;
                        ClaimState::Confirmed
                    }
                };
                if let Some(id) = request_id {
                    // A stale owner (released or expired) gives the id up.
                    let previous = self
                        .by_request
                        .insert(id.clone().into_boxed_slice(), *claim);
                    if let Some(owner) = previous.and_then(|n| self.claims.get_mut(&n)) {
                        if owner.request_id.take().is_some() {
                            self.text_bytes -= id.len();
                        }
                    }
                    self.text_bytes += id.len();
                }
                self.by_user
                    .entry(Rc::clone(&user))
                    .or_default()
                    .push(*claim);
                self.count_in_block(*claim, state, true);
                self.claims.insert(
                    *claim,
                    Claim {
                        user,
                        request_id: request_id.clone().map(Vec::into_boxed_slice),
                        state,
                    },
                );
                self.claims_made = self.claims_made.max(*claim);
            }
            Effect::Confirm { claim } => {
                let found = self.claims.get_mut(claim).ok_or("no such claim")?;
                let held = found.state;
                let ClaimState::Held { expires_at_ms } = held else {
                    return Err("the claim is not held");
                };
                found.state = ClaimState::Confirmed;
                self.holds.remove((expires_at_ms, *claim));
                self.confirmed += 1;
                self.count_in_block(*claim, held, false);
                self.count_in_block(*claim, ClaimState::Confirmed, true);
            }
            Effect::Release { claim } => {
                self.remove(*claim).ok_or("no such claim")?;
                self.released += 1;
            }
            Effect::Expire { claim } => {
                match self.claims.get(claim).map(|c| c.state) {
                    Some(ClaimState::Held { .. }) => {}
                    Some(ClaimState::Confirmed) => return Err("a confirmed claim does not expire"),
                    None => return Err("no such claim"),
                }
                self.remove(*claim);
                self.expired += 1;
            }
            Effect::Totals {
                claims_made,
                released,
                expired,
            } => {
                if *claims_made < self.claims.keys().next_back().copied().unwrap_or(0) {
                    return Err("fewer claims made than exist");
                }
                self.claims_made = *claims_made;
                self.released = *released;
                self.expired = *expired;
            }
        }
        Ok(())
    }

    fn remove(&mut self, number: u64) -> Option<Claim> {
        let state = self.claims.get(&number)?.state;
        self.count_in_block(number, state, false);
        let claim = self.claims.remove(&number)?;
        match claim.state {
            ClaimState::Held { expires_at_ms } => {
                self.holds.remove((expires_at_ms, number));
            }
            ClaimState::Confirmed => self.confirmed -= 1,
        }
        if let Some(numbers) = self.by_user.get_mut(&claim.user) {
            numbers.retain(|&n| n != number);
            if numbers.is_empty() {
                self.by_user.remove(&claim.user);
                self.text_bytes -= claim.user.len();
            }
        }
        if let Some(id) = &claim.request_id {
            self.text_bytes -= id.len();
            if self.by_request.get(id) == Some(&number) {
                self.by_request.remove(id);
            }
        }
        Some(claim)
    }

    /// Every claim kept (live, or expired and not reclaimed), in order:
    /// what RDB, AOF rewrite and DEBUG DIGEST write out.
    pub fn stored_claims(&self) -> impl Iterator<Item = (u64, &Claim)> {
        self.claims.iter().map(|(n, c)| (*n, c))
    }

    /// `(claims_made, released, expired)`
    pub fn totals(&self) -> (u64, u64, u64) {
        (self.claims_made, self.released, self.expired)
    }

    /// Heap bytes, for MEMORY USAGE: an estimate from the sizes of what is
    /// stored (a B-tree entry with its share of a node, a hash map slot, a
    /// claim number in its user's list), in time independent of the number
    /// of claims but for the expiry index's blocks (n / 512).
    pub fn heap_bytes(&self) -> usize {
        let per_claim = std::mem::size_of::<(u64, Claim)>() + 16 + std::mem::size_of::<u64>();
        let per_user = std::mem::size_of::<(Rc<[u8]>, Vec<u64>)>() + 16 + 24;
        let per_request = std::mem::size_of::<(Box<[u8]>, u64)>() + 1;
        let per_block = std::mem::size_of::<(u64, ClaimBlock)>() + 16;
        self.claims.len() * per_claim
            + self.by_user.len() * per_user
            + self.by_request.len() * per_request
            + self.blocks.len() * per_block
            + self.text_bytes
            + self.holds.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
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

    /// Decides and applies, as a command does.
    fn reserve(
        c: &mut Campaign,
        user: &str,
        id: Option<&str>,
        now: i64,
    ) -> Result<Reserve, CampaignError> {
        let plan = c.reserve(user.as_bytes(), id.map(str::as_bytes), now + HOLD, now)?;
        for effect in &plan.effects {
            c.apply(effect).unwrap();
        }
        Ok(plan.outcome)
    }

    fn run<T>(c: &mut Campaign, decide: impl FnOnce(&Campaign) -> Plan<T>) -> T {
        let plan = decide(c);
        for effect in &plan.effects {
            c.apply(effect).unwrap();
        }
        plan.outcome
    }

    fn check_totals(c: &Campaign, now: i64) {
        let info = c.info(now);
        assert_eq!(
            info.claims,
            info.confirmed + info.held + info.released + info.expired
        );
        assert_eq!(info.available, info.limit - info.confirmed - info.held);
        assert!(info.available >= 0);
    }

    #[test]
    fn claims_are_numbered_in_order_and_never_reused() {
        let mut c = campaign(3, 1);
        assert_eq!(
            reserve(&mut c, "a", None, NOW),
            Ok(Reserve::New {
                claim: 1,
                expires_at_ms: NOW + HOLD,
                sold_out: false
            })
        );
        assert_eq!(run(&mut c, |c| c.release(1, NOW)), 1);
        assert_eq!(
            reserve(&mut c, "a", None, NOW),
            Ok(Reserve::New {
                claim: 2,
                expires_at_ms: NOW + HOLD,
                sold_out: false
            })
        );
        check_totals(&c, NOW);
    }

    #[test]
    fn the_user_is_checked_before_the_limit() {
        let mut c = campaign(1, 1);
        reserve(&mut c, "a", None, NOW).unwrap();
        assert_eq!(reserve(&mut c, "a", None, NOW), Ok(Reserve::UserFull));
        assert_eq!(reserve(&mut c, "b", None, NOW), Ok(Reserve::SoldOut));
    }

    #[test]
    fn several_places_per_user() {
        let mut c = campaign(10, 2);
        assert!(matches!(
            reserve(&mut c, "a", None, NOW),
            Ok(Reserve::New { .. })
        ));
        assert!(matches!(
            reserve(&mut c, "a", None, NOW),
            Ok(Reserve::New { .. })
        ));
        assert_eq!(reserve(&mut c, "a", None, NOW), Ok(Reserve::UserFull));
    }

    #[test]
    fn a_hold_stops_counting_the_millisecond_after_its_expiry() {
        let mut c = campaign(1, 1);
        reserve(&mut c, "a", None, NOW).unwrap();
        let at = NOW + HOLD;
        assert_eq!(reserve(&mut c, "b", None, at), Ok(Reserve::SoldOut));
        assert_eq!(c.confirm(1, at).outcome, 1);
        assert_eq!(c.confirm(1, at + 1).outcome, -3);
        assert_eq!(c.release(1, at + 1).outcome, 0);
        assert_eq!(c.info(at).held, 1);
        assert_eq!(c.info(at + 1).held, 0);
        assert_eq!(c.info(at + 1).expired, 1);
        assert!(c.claims(1, 10, at + 1).is_empty());
        // The place is free at once, before any reclaim.
        assert!(matches!(
            reserve(&mut c, "b", None, at + 1),
            Ok(Reserve::New { claim: 2, .. })
        ));
        check_totals(&c, at + 1);
    }

    #[test]
    fn a_request_id_repeats_its_live_claim_even_when_full() {
        let mut c = campaign(1, 1);
        assert!(matches!(
            reserve(&mut c, "a", Some("r1"), NOW),
            Ok(Reserve::New { claim: 1, .. })
        ));
        let repeat = Reserve::Repeat {
            claim: 1,
            expires_at_ms: NOW + HOLD,
        };
        assert_eq!(reserve(&mut c, "a", Some("r1"), NOW + 5), Ok(repeat));
        assert_eq!(c.reserve(b"a", Some(b"r1"), 0, NOW).unwrap().effects, []);
        run(&mut c, |c| c.confirm(1, NOW));
        let confirmed = Reserve::Repeat {
            claim: 1,
            expires_at_ms: -1,
        };
        assert_eq!(reserve(&mut c, "a", Some("r1"), NOW), Ok(confirmed));
        // Another user with the same id: an error.
        assert_eq!(
            reserve(&mut c, "b", Some("r1"), NOW),
            Err(CampaignError::RequestIdTaken)
        );
    }

    #[test]
    fn a_released_or_expired_request_id_is_free_again() {
        let mut c = campaign(5, 1);
        reserve(&mut c, "a", Some("r1"), NOW).unwrap();
        run(&mut c, |c| c.release(1, NOW));
        assert!(matches!(
            reserve(&mut c, "b", Some("r1"), NOW),
            Ok(Reserve::New { claim: 2, .. })
        ));
        // Claim 2 expires; its id goes to a third user, and the late
        // reclaim of claim 2 leaves the new owner's id alone.
        let later = NOW + HOLD + 1;
        assert!(matches!(
            reserve(&mut c, "c", Some("r1"), later),
            Ok(Reserve::New { claim: 3, .. })
        ));
        assert!(
            !c.claims.contains_key(&2),
            "the stale claim went with the write"
        );
        assert_eq!(c.by_request.get(&b"r1"[..]), Some(&3));
        let repeat = Reserve::Repeat {
            claim: 3,
            expires_at_ms: later + HOLD,
        };
        assert_eq!(reserve(&mut c, "c", Some("r1"), later), Ok(repeat));
        check_totals(&c, later);
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
            };
            c.apply(&put).unwrap();
        }
        // With an expired hold lying around, no answer that changes
        // nothing reclaims it.
        assert_eq!(c.confirm(99, NOW).effects, []);
        assert_eq!(c.confirm(1, NOW), Plan::nothing(-3));
        assert_eq!(c.release(99, NOW).effects, []);
        assert_eq!(c.revoke(b"nobody", NOW).effects, []);
        assert_eq!(
            c.reserve(b"a", None, NOW + HOLD, NOW),
            Ok(Plan::nothing(Reserve::UserFull))
        );
        assert_eq!(
            c.reserve(b"c", None, NOW + HOLD, NOW),
            Ok(Plan::nothing(Reserve::SoldOut))
        );
        assert_eq!(c.issue(b"c", 2, NOW), Ok(Plan::nothing(Issue::SoldOut)));
        assert!(c.claims.contains_key(&1));
    }

    #[test]
    fn writes_reclaim_a_bounded_number_of_the_oldest_expired_holds() {
        let mut c = campaign(1_000, 1);
        for user in 0..100 {
            reserve(&mut c, &format!("u{user}"), None, NOW + user).unwrap();
        }
        let later = NOW + HOLD + 1_000;
        let plan = c.reserve(b"new", None, later + HOLD, later).unwrap();
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
        assert_eq!(c.claims.len(), 100 - RECLAIM_PER_CALL + 1);
        check_totals(&c, later);
    }

    #[test]
    fn issue_needs_the_campaigns_limit_and_confirms_at_once() {
        let mut c = campaign(2, 1);
        assert_eq!(c.issue(b"a", 3, NOW), Err(CampaignError::LimitMismatch));
        assert_eq!(
            run(&mut c, |c| c.issue(b"a", 2, NOW).unwrap()),
            Issue::New {
                claim: 1,
                sold_out: false
            }
        );
        assert_eq!(
            run(&mut c, |c| c.issue(b"a", 2, NOW).unwrap()),
            Issue::UserFull
        );
        assert_eq!(
            run(&mut c, |c| c.issue(b"b", 2, NOW).unwrap()),
            Issue::New {
                claim: 2,
                sold_out: true
            }
        );
        assert_eq!(
            run(&mut c, |c| c.issue(b"c", 2, NOW).unwrap()),
            Issue::SoldOut
        );
        assert_eq!(c.info(NOW + 10 * HOLD).confirmed, 2);
    }

    #[test]
    fn revoke_releases_every_live_claim_of_the_user() {
        let mut c = campaign(10, 3);
        for _ in 0..3 {
            reserve(&mut c, "a", None, NOW).unwrap();
        }
        run(&mut c, |c| c.confirm(2, NOW));
        assert_eq!(run(&mut c, |c| c.revoke(b"a", NOW)), 3);
        assert_eq!(c.info(NOW).released, 3);
        assert_eq!(c.revoke(b"a", NOW).outcome, 0);
        check_totals(&c, NOW);
    }

    #[test]
    fn claims_lists_live_claims_in_order_from_a_number() {
        let mut c = campaign(10, 5);
        reserve(&mut c, "a", Some("x"), NOW).unwrap();
        reserve(&mut c, "b", None, NOW - HOLD - 1).unwrap(); // already expired at NOW
        reserve(&mut c, "c", None, NOW).unwrap();
        run(&mut c, |c| c.confirm(3, NOW));
        let listed: Vec<(u64, ClaimState)> = c
            .claims(1, 10, NOW)
            .iter()
            .map(|v| (v.claim, v.state))
            .collect();
        assert_eq!(
            listed,
            [
                (
                    1,
                    ClaimState::Held {
                        expires_at_ms: NOW + HOLD
                    }
                ),
                (3, ClaimState::Confirmed)
            ]
        );
        assert_eq!(c.claims(2, 10, NOW)[0].claim, 3);
        assert_eq!(c.claims(1, 1, NOW).len(), 1);
        assert_eq!(c.claims(1, 10, NOW)[0].request_id, Some(&b"x"[..]));
    }

    #[test]
    fn claims_skip_runs_of_expired_holds_and_find_the_live_ones() {
        let mut c = campaign(10_000, 1);
        for n in 1..=3_000u64 {
            let expires = if n % 1_000 == 0 { NOW + HOLD } else { NOW - 1 };
            let put = Effect::Put {
                claim: n,
                user: n.to_string().into_bytes(),
                expires_at_ms: Some(expires),
                request_id: None,
            };
            c.apply(&put).unwrap();
        }
        let live: Vec<u64> = c.claims(1, 10, NOW).iter().map(|v| v.claim).collect();
        assert_eq!(live, [1_000, 2_000, 3_000]);
        assert_eq!(c.claims(1_001, 1, NOW)[0].claim, 2_000);
        // The summaries follow confirms and removals exactly.
        run(&mut c, |c| c.confirm(2_000, NOW));
        run(&mut c, |c| c.release(1_000, NOW));
        let live: Vec<u64> = c.claims(1, 10, NOW).iter().map(|v| v.claim).collect();
        assert_eq!(live, [2_000, 3_000]);
        assert!(!c.blocks[&(1_000 / CLAIM_BLOCK)].has_live(NOW));
        assert!(c.blocks[&(2_000 / CLAIM_BLOCK)].has_live(NOW + 10 * HOLD));
        // Rebuilt from its claims, a campaign has the same summaries.
        let mut rebuilt = Campaign::new(c.settings);
        for (n, claim) in c.stored_claims() {
            let put = Effect::Put {
                claim: n,
                user: claim.user.to_vec(),
                expires_at_ms: match claim.state {
                    ClaimState::Held { expires_at_ms } => Some(expires_at_ms),
                    ClaimState::Confirmed => None,
                },
                request_id: None,
            };
            rebuilt.apply(&put).unwrap();
        }
        assert_eq!(rebuilt.blocks, c.blocks);
    }

    /// What `text_bytes` must equal: a walk over everything stored.
    fn walked_text_bytes(c: &Campaign) -> usize {
        let users: usize = c.by_user.keys().map(|u| u.len()).sum();
        let ids: usize = c
            .claims
            .values()
            .filter_map(|claim| claim.request_id.as_ref())
            .map(|id| id.len())
            .sum();
        users + ids
    }

    #[test]
    fn stored_text_bytes_follow_every_change() {
        let mut c = campaign(10, 2);
        let later = NOW + HOLD + 1;
        reserve(&mut c, "alice", Some("order-1"), NOW).unwrap();
        reserve(&mut c, "alice", None, NOW).unwrap();
        reserve(&mut c, "bob", Some("order-2"), NOW).unwrap();
        assert_eq!(c.text_bytes, walked_text_bytes(&c));
        run(&mut c, |c| c.confirm(1, NOW));
        run(&mut c, |c| c.release(3, NOW));
        assert_eq!(c.text_bytes, walked_text_bytes(&c));
        // An expired claim's id taken over, then every user revoked.
        reserve(&mut c, "carol", Some("order-1"), NOW - 2 * HOLD).ok();
        reserve(&mut c, "dave", Some("order-1"), later).ok();
        assert_eq!(c.text_bytes, walked_text_bytes(&c));
        for user in ["alice", "bob", "carol", "dave"] {
            run(&mut c, |c| c.revoke(user.as_bytes(), later));
        }
        assert_eq!(c.text_bytes, walked_text_bytes(&c));
    }

    #[test]
    fn effects_that_do_not_fit_are_refused_and_change_nothing() {
        let mut c = campaign(10, 5);
        reserve(&mut c, "a", None, NOW).unwrap();
        run(&mut c, |c| c.confirm(1, NOW));
        let before = c.clone();
        for effect in [
            Effect::Confirm { claim: 1 },
            Effect::Confirm { claim: 7 },
            Effect::Release { claim: 7 },
            Effect::Expire { claim: 1 },
            Effect::Put {
                claim: 1,
                user: b"b".to_vec(),
                expires_at_ms: None,
                request_id: None,
            },
            Effect::Put {
                claim: 0,
                user: b"b".to_vec(),
                expires_at_ms: None,
                request_id: None,
            },
            Effect::Totals {
                claims_made: 0,
                released: 0,
                expired: 0,
            },
        ] {
            assert!(c.apply(&effect).is_err(), "{effect:?}");
            assert_eq!(c, before, "{effect:?}");
        }
    }
}
