//! A campaign as stored: its settings, its claims and the indexes that
//! answer the rules' questions in O(log n), and [`Campaign::apply`], the
//! only way it changes. Nothing here decides; everything here is owned
//! outright (no shared buffers), so a value may be copied on the main
//! thread and freed on Redis's lazyfree thread.
//!
//! `apply` refuses an effect that breaks what can be judged effect by
//! effect, whoever sent it (a decision of this module, the replication
//! stream, an AOF, a loaded payload): it changes nothing then.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::effect::{Effect, Totals};
use super::expiry::{Entry, ExpiryIndex};
use super::settings::{Ledger, Settings};
use crate::replicated::ApplyError;

/// Claim numbers per [`ClaimBlock`].
const CLAIM_BLOCK: u64 = 512;

/// The last claim number: numbers are positive 64-bit signed integers on
/// the wire, in the RDB and in replies.
pub const LAST_CLAIM: u64 = i64::MAX as u64;

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

    /// Is a claim in this state live at `now`? A hold is gone once now is
    /// past its expiry (the rule Redis uses for keys).
    pub fn is_live(self, now: i64) -> bool {
        match self {
            ClaimState::Confirmed => true,
            ClaimState::Held { expires_at_ms } => now <= expires_at_ms,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub user: Box<[u8]>,
    pub request_id: Option<Box<[u8]>>,
    pub state: ClaimState,
}

/// One user's stored claims: confirmed by number, held by expiry. Finding,
/// counting and removing one is O(log n) (counting the live holds walks
/// the index's blocks: n / 512 lengths).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct UserClaims {
    confirmed: BTreeSet<u64>,
    holds: ExpiryIndex,
}

impl UserClaims {
    fn live(&self, now: i64) -> u64 {
        (self.confirmed.len() + self.holds.len() - self.holds.count_before(now)) as u64
    }

    fn is_empty(&self) -> bool {
        self.confirmed.is_empty() && self.holds.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Campaign {
    settings: Settings,
    ledger: Option<Ledger>,
    /// `claims_made` is the highest claim number made so far: numbers are
    /// never reused.
    totals: Totals,
    /// Live claims, and expired holds not yet reclaimed, by number.
    claims: BTreeMap<u64, Claim>,
    users: HashMap<Box<[u8]>, UserClaims>,
    by_request: HashMap<Box<[u8]>, u64>,
    /// The held claims of `claims`, by expiry.
    holds: ExpiryIndex,
    /// `claims` summed per run of numbers.
    blocks: BTreeMap<u64, ClaimBlock>,
    confirmed: u64,
    /// How many users have each count of confirmed claims (counts of 1 or
    /// more): the highest is what COUPON.ALTER may not lower PERUSER below.
    confirmed_per_user: BTreeMap<usize, u64>,
    /// Bytes of the users and request ids stored, kept as claims come and
    /// go so that MEMORY USAGE does not walk the campaign.
    text_bytes: usize,
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
            ledger: None,
            totals: Totals::default(),
            claims: BTreeMap::new(),
            users: HashMap::new(),
            by_request: HashMap::new(),
            holds: ExpiryIndex::default(),
            blocks: BTreeMap::new(),
            confirmed: 0,
            confirmed_per_user: BTreeMap::new(),
            text_bytes: 0,
        }
    }

    pub fn settings(&self) -> Settings {
        self.settings
    }

    pub fn ledger(&self) -> Option<&Ledger> {
        self.ledger.as_ref()
    }

    /// Confirmed claims.
    pub fn confirmed_count(&self) -> u64 {
        self.confirmed
    }

    /// The most confirmed claims any one user has.
    pub fn most_confirmed_of_a_user(&self) -> u64 {
        self.confirmed_per_user
            .keys()
            .next_back()
            .map_or(0, |&n| n as u64)
    }

    /// The stored claim numbered `claim`, live or an expired hold.
    pub fn stored(&self, claim: u64) -> Option<&Claim> {
        self.claims.get(&claim)
    }

    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// The claim numbered `claim` if it is live at `now`.
    pub fn live(&self, claim: u64, now: i64) -> Option<&Claim> {
        self.claims
            .get(&claim)
            .filter(|found| found.state.is_live(now))
    }

    /// Is `claim` a hold that has expired at `now`, not reclaimed yet?
    pub fn is_expired_hold(&self, claim: u64, now: i64) -> bool {
        self.claims
            .get(&claim)
            .is_some_and(|c| matches!(c.state, ClaimState::Held { .. }) && !c.state.is_live(now))
    }

    /// Live claims at `now`.
    pub fn live_count(&self, now: i64) -> u64 {
        self.confirmed + (self.holds.len() - self.holds.count_before(now)) as u64
    }

    /// Live claims of `user` at `now`.
    pub fn user_live(&self, user: &[u8], now: i64) -> u64 {
        self.users.get(user).map_or(0, |claims| claims.live(now))
    }

    /// The numbers of `user`'s live claims at `now`, in order: O(k log n)
    /// for k of them, whatever number of expired holds the user has.
    pub fn user_live_claims(&self, user: &[u8], now: i64) -> Vec<u64> {
        let Some(claims) = self.users.get(user) else {
            return Vec::new();
        };
        let mut numbers: Vec<u64> = claims.confirmed.iter().copied().collect();
        numbers.extend(claims.holds.iter_from(now).map(|&(_, claim)| claim));
        numbers.sort_unstable();
        numbers
    }

    /// The stored claim that holds `request_id`, live or not.
    pub fn request_owner(&self, request_id: &[u8]) -> Option<u64> {
        self.by_request.get(request_id).copied()
    }

    /// Holds expired at `now` and not reclaimed, the oldest first.
    pub fn expired_holds(&self, now: i64) -> impl Iterator<Item = u64> + '_ {
        self.holds
            .iter()
            .take_while(move |(expires_at_ms, _)| *expires_at_ms < now)
            .map(|&(_, claim)| claim)
    }

    pub fn info(&self, now: i64) -> Info {
        let expired_now = self.holds.count_before(now);
        let held = (self.holds.len() - expired_now) as i64;
        let confirmed = self.confirmed as i64;
        Info {
            limit: self.settings.limit,
            per_user: self.settings.per_user,
            hold_s: self.settings.hold_s,
            confirmed,
            held,
            // Below 0 only where holds that had expired are live again
            // (see CONFIRM's -2): no place is available then.
            available: (self.settings.limit - confirmed - held).max(0),
            claims: self.totals.claims_made as i64,
            expired: (self.totals.expired + expired_now as u64) as i64,
            released: self.totals.released as i64,
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
                if claim.state.is_live(now) {
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

    /// Every claim kept (live, or expired and not reclaimed), in order:
    /// what RDB, AOF rewrite and DEBUG DIGEST write out.
    pub fn stored_claims(&self) -> impl Iterator<Item = (u64, &Claim)> {
        self.claims.iter().map(|(n, c)| (*n, c))
    }

    pub fn stored_count(&self) -> usize {
        self.claims.len()
    }

    /// Applies one effect, or refuses it whole and changes nothing.
    pub fn apply(&mut self, effect: &Effect) -> Result<(), ApplyError> {
        match effect {
            Effect::Create(_) => return Err("the campaign exists"),
            Effect::Ledger(ledger) => {
                if self.ledger.is_some() {
                    return Err("the campaign has a ledger");
                }
                ledger.check()?;
                self.text_bytes += ledger.stream.len();
                self.ledger = Some(ledger.clone());
            }
            Effect::Alter(settings) => {
                settings.check()?;
                if self.confirmed > settings.limit as u64
                    || self.most_confirmed_of_a_user() > settings.per_user as u64
                {
                    return Err("more confirmed claims than the new limit or PERUSER allow");
                }
                self.settings = *settings;
            }
            Effect::Put {
                claim,
                user,
                expires_at_ms,
                request_id,
            } => self.put(*claim, user, *expires_at_ms, request_id.as_deref())?,
            Effect::Confirm { claim } => self.confirm(*claim)?,
            Effect::Release { claim } => {
                self.remove(*claim)?;
                self.totals.released += 1;
            }
            Effect::Expire { claim } => {
                match self.claims.get(claim).map(|c| c.state) {
                    Some(ClaimState::Held { .. }) => {}
                    Some(ClaimState::Confirmed) => return Err("a confirmed claim does not expire"),
                    None => return Err("no such claim"),
                }
                self.remove(*claim)?;
                self.totals.expired += 1;
            }
            Effect::Totals(totals) => {
                let accounted = (self.claims.len() as u64)
                    .checked_add(totals.released)
                    .and_then(|n| n.checked_add(totals.expired));
                let highest = self.claims.keys().next_back().copied().unwrap_or(0);
                if totals.claims_made > LAST_CLAIM
                    || totals.claims_made < highest
                    || accounted != Some(totals.claims_made)
                {
                    return Err("the totals disagree with the claims stored");
                }
                self.totals = *totals;
            }
        }
        Ok(())
    }

    fn put(
        &mut self,
        claim: u64,
        user: &[u8],
        expires_at_ms: Option<i64>,
        request_id: Option<&[u8]>,
    ) -> Result<(), ApplyError> {
        if claim <= self.totals.claims_made || claim > LAST_CLAIM {
            return Err("the claim number is not above every number made");
        }
        if user.is_empty() || request_id.is_some_and(<[u8]>::is_empty) {
            return Err("an empty user or request id");
        }
        if expires_at_ms.is_some_and(|at| at < 0) {
            return Err("a hold expires before 1970");
        }
        if expires_at_ms.is_none() {
            self.check_room_to_confirm(user)?;
        }
        let previous_owner = request_id.and_then(|id| self.request_owner(id));
        if let Some(owner) = previous_owner {
            if self.claims[&owner].state == ClaimState::Confirmed {
                return Err("a confirmed claim's request id is reused");
            }
        }
        // Checked; from here on nothing fails.
        let state = expires_at_ms.map_or(ClaimState::Confirmed, |at| ClaimState::Held {
            expires_at_ms: at,
        });
        if let (Some(id), Some(owner)) = (request_id, previous_owner) {
            // A held owner has expired (the primary decided so): it gives
            // the id up.
            if let Some(taken) = self
                .claims
                .get_mut(&owner)
                .and_then(|c| c.request_id.take())
            {
                self.text_bytes -= taken.len();
            }
            self.by_request.insert(id.into(), claim);
        } else if let Some(id) = request_id {
            self.by_request.insert(id.into(), claim);
        }
        self.text_bytes += user.len() + request_id.map_or(0, <[u8]>::len);
        let claims = match self.users.get_mut(user) {
            Some(claims) => claims,
            None => {
                self.text_bytes += user.len();
                self.users.entry(user.into()).or_default()
            }
        };
        match state {
            ClaimState::Held { expires_at_ms } => {
                claims.holds.insert((expires_at_ms, claim));
                self.holds.insert((expires_at_ms, claim));
            }
            ClaimState::Confirmed => {
                claims.confirmed.insert(claim);
                let now_confirmed = claims.confirmed.len();
                self.confirmed += 1;
                self.count_user_confirmed(now_confirmed - 1, now_confirmed);
            }
        }
        self.count_in_block(claim, state, true);
        self.claims.insert(
            claim,
            Claim {
                user: user.into(),
                request_id: request_id.map(Into::into),
                state,
            },
        );
        self.totals.claims_made = claim;
        Ok(())
    }

    /// One more confirmed claim, of `user`, must fit `limit` and `PERUSER`.
    /// Can the stored claim `claim` become confirmed within `limit` and
    /// its user's `PERUSER`? Only where holds that had expired are live
    /// again (a clock behind the primary's, a loaded value) can it not.
    pub fn room_to_confirm(&self, claim: u64) -> bool {
        self.claims
            .get(&claim)
            .is_some_and(|found| self.room_to_confirm_for(&found.user))
    }

    fn room_to_confirm_for(&self, user: &[u8]) -> bool {
        let of_user = self.users.get(user).map_or(0, |c| c.confirmed.len());
        self.confirmed < self.settings.limit as u64 && of_user < self.settings.per_user as usize
    }

    fn check_room_to_confirm(&self, user: &[u8]) -> Result<(), ApplyError> {
        if !self.room_to_confirm_for(user) {
            return Err("more confirmed claims than the limit or PERUSER allow");
        }
        Ok(())
    }

    fn confirm(&mut self, claim: u64) -> Result<(), ApplyError> {
        let found = self.claims.get(&claim).ok_or("no such claim")?;
        let held = found.state;
        let ClaimState::Held { expires_at_ms } = held else {
            return Err("the claim is not held");
        };
        self.check_room_to_confirm(&found.user)?;
        let found = self.claims.get_mut(&claim).ok_or("no such claim")?;
        found.state = ClaimState::Confirmed;
        let entry: Entry = (expires_at_ms, claim);
        if let Some(claims) = self.users.get_mut(&found.user) {
            claims.holds.remove(entry);
            claims.confirmed.insert(claim);
            let now_confirmed = claims.confirmed.len();
            self.count_user_confirmed(now_confirmed - 1, now_confirmed);
        }
        self.holds.remove(entry);
        self.confirmed += 1;
        self.count_in_block(claim, held, false);
        self.count_in_block(claim, ClaimState::Confirmed, true);
        Ok(())
    }

    fn remove(&mut self, number: u64) -> Result<Claim, ApplyError> {
        let state = self.claims.get(&number).ok_or("no such claim")?.state;
        self.count_in_block(number, state, false);
        let claim = self.claims.remove(&number).ok_or("no such claim")?;
        let mut emptied = false;
        if let Some(claims) = self.users.get_mut(&claim.user) {
            match claim.state {
                ClaimState::Held { expires_at_ms } => {
                    claims.holds.remove((expires_at_ms, number));
                }
                ClaimState::Confirmed => {
                    claims.confirmed.remove(&number);
                    let now_confirmed = claims.confirmed.len();
                    self.count_user_confirmed(now_confirmed + 1, now_confirmed);
                }
            }
            emptied = self
                .users
                .get(&claim.user)
                .is_some_and(UserClaims::is_empty);
        }
        if emptied {
            self.users.remove(&claim.user);
            self.text_bytes -= claim.user.len();
        }
        match claim.state {
            ClaimState::Held { expires_at_ms } => {
                self.holds.remove((expires_at_ms, number));
            }
            ClaimState::Confirmed => self.confirmed -= 1,
        }
        self.text_bytes -= claim.user.len();
        if let Some(id) = &claim.request_id {
            self.text_bytes -= id.len();
            if self.by_request.get(id) == Some(&number) {
                self.by_request.remove(id);
            }
        }
        Ok(claim)
    }

    /// Keeps [`Campaign::confirmed_per_user`] in step with a user whose
    /// confirmed claims went from `before` to `after`.
    fn count_user_confirmed(&mut self, before: usize, after: usize) {
        if before > 0 {
            if let Some(users) = self.confirmed_per_user.get_mut(&before) {
                *users -= 1;
                if *users == 0 {
                    self.confirmed_per_user.remove(&before);
                }
            }
        }
        if after > 0 {
            *self.confirmed_per_user.entry(after).or_default() += 1;
        }
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

    /// Heap bytes, for MEMORY USAGE: an estimate from the sizes of what is
    /// stored (a B-tree entry with its share of a node, a hash map slot,
    /// an entry in its user's index), in time independent of the number of
    /// claims but for the expiry index's blocks (n / 512).
    pub fn heap_bytes(&self) -> usize {
        let per_claim = std::mem::size_of::<(u64, Claim)>() + 16 + std::mem::size_of::<Entry>();
        let per_user = std::mem::size_of::<(Box<[u8]>, UserClaims)>() + 16 + 24;
        let per_request = std::mem::size_of::<(Box<[u8]>, u64)>() + 1;
        let per_block = std::mem::size_of::<(u64, ClaimBlock)>() + 16;
        self.claims.len() * per_claim
            + self.users.len() * per_user
            + self.by_request.len() * per_request
            + self.blocks.len() * per_block
            + self.text_bytes
            + self.holds.heap_bytes()
    }

    /// How much work freeing it is, for Redis's choice of freeing it on
    /// the lazyfree thread: one unit an allocation, about.
    pub fn free_effort(&self) -> usize {
        self.claims.len() + self.users.len() + self.by_request.len() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn campaign(limit: i64, per_user: i64) -> Campaign {
        Campaign::new(Settings {
            limit,
            per_user,
            hold_s: 600,
        })
    }

    fn put(claim: u64, user: &str, expires_at_ms: Option<i64>, id: Option<&str>) -> Effect {
        Effect::Put {
            claim,
            user: user.as_bytes().to_vec(),
            expires_at_ms,
            request_id: id.map(|id| id.as_bytes().to_vec()),
        }
    }

    #[test]
    fn effects_that_do_not_fit_are_refused_and_change_nothing() {
        let mut c = campaign(2, 1);
        c.apply(&put(1, "a", None, Some("r"))).unwrap();
        c.apply(&put(2, "b", Some(NOW), None)).unwrap();
        let before = c.clone();
        for effect in [
            Effect::Confirm { claim: 1 },
            Effect::Confirm { claim: 7 },
            Effect::Release { claim: 7 },
            Effect::Expire { claim: 1 },
            // Not above every number made, or past the last one.
            put(2, "c", None, None),
            put(1, "c", Some(NOW), None),
            put(LAST_CLAIM + 1, "c", Some(NOW), None),
            // Empty texts, a time before 1970.
            put(3, "", Some(NOW), None),
            put(3, "c", Some(NOW), Some("")),
            put(3, "c", Some(-5), None),
            // A second confirmed claim of "a" (PERUSER 1).
            put(3, "a", None, None),
            // The confirmed claim's request id, again.
            put(3, "c", Some(NOW), Some("r")),
            Effect::Create(c.settings()),
            Effect::Totals(Totals {
                claims_made: 1,
                released: 0,
                expired: 0,
            }),
            Effect::Totals(Totals {
                claims_made: 9,
                released: 1,
                expired: 1,
            }),
        ] {
            assert!(c.apply(&effect).is_err(), "{effect:?}");
            assert_eq!(c, before, "{effect:?}");
        }
        // Confirming claim 2 fills the limit of 2: a third confirmed claim
        // does not fit.
        c.apply(&Effect::Confirm { claim: 2 }).unwrap();
        let full = c.clone();
        assert!(c.apply(&put(3, "c", None, None)).is_err());
        assert_eq!(c, full);
    }

    #[test]
    fn the_totals_must_account_for_every_claim() {
        let mut c = campaign(5, 5);
        c.apply(&put(4, "a", Some(NOW), None)).unwrap();
        let totals = Totals {
            claims_made: 10,
            released: 5,
            expired: 4,
        };
        c.apply(&Effect::Totals(totals)).unwrap();
        assert_eq!(c.totals(), totals);
        assert!(c.apply(&put(10, "a", Some(NOW), None)).is_err());
        c.apply(&put(11, "a", Some(NOW), None)).unwrap();
    }

    #[test]
    fn a_held_owner_gives_its_request_id_up_to_a_new_claim() {
        let mut c = campaign(5, 5);
        c.apply(&put(1, "a", Some(NOW - 1), Some("r"))).unwrap();
        c.apply(&put(2, "b", Some(NOW + 1), Some("r"))).unwrap();
        assert_eq!(c.request_owner(b"r"), Some(2));
        assert_eq!(c.claims[&1].request_id, None);
        // The stale claim goes; the new owner keeps the id.
        c.apply(&Effect::Expire { claim: 1 }).unwrap();
        assert_eq!(c.request_owner(b"r"), Some(2));
    }

    #[test]
    fn a_users_claims_are_indexed_live_and_expired() {
        let mut c = campaign(100, 100);
        for n in 1..=40u64 {
            let expiry = if n % 4 == 0 {
                None
            } else {
                Some(NOW + n as i64)
            };
            c.apply(&put(n, "a", expiry, None)).unwrap();
        }
        c.apply(&put(41, "b", Some(NOW), None)).unwrap();
        // At NOW + 20, holds 1..19 have expired; 20.. are live.
        let at = NOW + 20;
        let live = c.user_live_claims(b"a", at);
        let expected: Vec<u64> = (1..=40).filter(|n| n % 4 == 0 || *n >= 20).collect();
        assert_eq!(live, expected);
        assert_eq!(c.user_live(b"a", at), expected.len() as u64);
        assert_eq!(c.user_live(b"b", at), 0);
        assert_eq!(c.user_live(b"nobody", at), 0);
        c.apply(&Effect::Release { claim: 20 }).unwrap();
        c.apply(&Effect::Confirm { claim: 21 }).unwrap();
        assert_eq!(c.user_live(b"a", at), expected.len() as u64 - 1);
        // Confirmed ones never expire: 4, 8, ... 40 but the released 20,
        // and 21.
        assert_eq!(c.user_live(b"a", i64::MAX), 10);
    }

    #[test]
    fn claims_skip_runs_of_expired_holds_and_find_the_live_ones() {
        let mut c = campaign(10_000, 1);
        for n in 1..=3_000u64 {
            let expires = if n % 1_000 == 0 {
                NOW + 600_000
            } else {
                NOW - 1
            };
            c.apply(&put(n, &n.to_string(), Some(expires), None))
                .unwrap();
        }
        let live: Vec<u64> = c.claims(1, 10, NOW).iter().map(|v| v.claim).collect();
        assert_eq!(live, [1_000, 2_000, 3_000]);
        assert_eq!(c.claims(1_001, 1, NOW)[0].claim, 2_000);
        // The summaries follow confirms and removals exactly.
        c.apply(&Effect::Confirm { claim: 2_000 }).unwrap();
        c.apply(&Effect::Release { claim: 1_000 }).unwrap();
        let live: Vec<u64> = c.claims(1, 10, NOW).iter().map(|v| v.claim).collect();
        assert_eq!(live, [2_000, 3_000]);
        assert!(!c.blocks[&(1_000 / CLAIM_BLOCK)].has_live(NOW));
        assert!(c.blocks[&(2_000 / CLAIM_BLOCK)].has_live(NOW + 6_000_000));
        // Rebuilt from its claims, a campaign has the same summaries.
        let mut rebuilt = Campaign::new(c.settings());
        for (n, claim) in c.stored_claims() {
            let expiry = match claim.state {
                ClaimState::Held { expires_at_ms } => Some(expires_at_ms),
                ClaimState::Confirmed => None,
            };
            rebuilt
                .apply(&put(
                    n,
                    std::str::from_utf8(&claim.user).unwrap(),
                    expiry,
                    None,
                ))
                .unwrap();
        }
        assert_eq!(rebuilt.blocks, c.blocks);
    }

    /// What `text_bytes` must equal: a walk over everything stored.
    fn walked_text_bytes(c: &Campaign) -> usize {
        let users: usize = c.users.keys().map(|u| u.len()).sum();
        let claims: usize = c
            .claims
            .values()
            .map(|claim| claim.user.len() + claim.request_id.as_ref().map_or(0, |id| id.len()))
            .sum();
        users + claims
    }

    #[test]
    fn stored_text_bytes_follow_every_change() {
        let mut c = campaign(10, 2);
        c.apply(&put(1, "alice", Some(NOW), Some("order-1")))
            .unwrap();
        c.apply(&put(2, "alice", Some(NOW), None)).unwrap();
        c.apply(&put(3, "bob", Some(NOW), Some("order-2"))).unwrap();
        assert_eq!(c.text_bytes, walked_text_bytes(&c));
        c.apply(&Effect::Confirm { claim: 2 }).unwrap();
        c.apply(&Effect::Release { claim: 3 }).unwrap();
        assert_eq!(c.text_bytes, walked_text_bytes(&c));
        // An expired hold's id taken over, then everything removed.
        c.apply(&put(4, "carol", Some(NOW + 5), Some("order-1")))
            .unwrap();
        assert_eq!(c.text_bytes, walked_text_bytes(&c));
        for claim in [1, 2, 4] {
            c.apply(&Effect::Release { claim }).unwrap();
        }
        assert_eq!(c.text_bytes, 0);
        assert!(c.users.is_empty() && c.by_request.is_empty());
    }

    #[test]
    fn a_copy_shares_no_buffer_with_its_source() {
        let mut c = campaign(10, 2);
        c.apply(&put(1, "alice", Some(NOW), Some("order-1")))
            .unwrap();
        let copy = c.clone();
        let (source, copied) = (&c.claims[&1], &copy.claims[&1]);
        assert_eq!(source, copied);
        assert_ne!(source.user.as_ptr(), copied.user.as_ptr());
        let ids = (source.request_id.as_ref(), copied.request_id.as_ref());
        assert_ne!(ids.0.unwrap().as_ptr(), ids.1.unwrap().as_ptr());
    }
}
