//! A campaign as stored: its settings, its claims and the indexes that
//! answer the rules' questions in O(log n), and [`Campaign::apply`], the
//! only way it changes. Nothing here decides; everything here is owned
//! outright (no shared buffers), so a value may be copied on the main
//! thread and freed on Redis's lazyfree thread.
//!
//! `apply` refuses an effect that breaks what can be judged effect by
//! effect, whoever sent it (a decision of this module, the replication
//! stream, an AOF, a loaded payload): it changes nothing then.

use std::collections::BTreeMap;

use super::chunked::Chunked;
use super::effect::{Effect, Totals};
use super::expiry::{ExpiryIndex, SortedBlocks};
use super::heap::alloc_size;
use super::interned::{Handle, Interned};
use super::numbered::{Numbered, Stored, CONFIRMED, NO_REQUEST};
use super::settings::{Ledger, Settings};
use super::units::Units;
use crate::redis::Mover;
use crate::replicated::ApplyError;

/// The last claim number: numbers are positive 64-bit signed integers on
/// the wire, in the RDB and in replies.
pub const LAST_CLAIM: u64 = i64::MAX as u64;

/// A user's payload in [`Campaign::users`] with this bit set names its
/// [`UserTree`] (the rest of the bits are its index in `trees`); clear, it
/// is the number of the user's one claim (numbers end at 2^63 - 1).
const TREE: u64 = 1 << 63;

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

    fn of(expires_at_ms: i64) -> Self {
        match expires_at_ms {
            CONFIRMED => ClaimState::Confirmed,
            expires_at_ms => ClaimState::Held { expires_at_ms },
        }
    }
}

/// A stored claim, as read from the campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim<'a> {
    pub user: &'a [u8],
    pub request_id: Option<&'a [u8]>,
    pub state: ClaimState,
    pub units: u64,
}

/// The claims of a user with more than one: confirmed by number, held by
/// expiry. Finding, counting and removing one is O(log n) (counting the
/// live units walks the index's blocks: n / 512 sums). A user with one
/// claim has none: its claim's number is kept in its user record.
/// Both indexes weigh each claim by its units (`units` tells them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct UserTree {
    confirmed: SortedBlocks<u64>,
    holds: ExpiryIndex,
}

impl UserTree {
    /// Live units at `now`.
    fn live(&self, now: i64, units: &Units) -> u128 {
        self.confirmed.weight() + self.holds.weight()
            - self.holds.units_before(now, |&(_, claim)| units.of(claim))
    }

    /// Units of the confirmed claims (at most PERUSER).
    fn confirmed_units(&self) -> u64 {
        self.confirmed.weight() as u64
    }

    fn len(&self) -> usize {
        self.confirmed.len() + self.holds.len()
    }

    /// Adds `claim` of `weight` units.
    fn add(&mut self, claim: &Stored, weight: u64, units: &Units) {
        match claim.expires_at_ms {
            CONFIRMED => self
                .confirmed
                .insert(claim.number, weight, |&c| units.of(c)),
            at => self
                .holds
                .insert((at, claim.number), weight, |&(_, c)| units.of(c)),
        }
    }

    /// Removes `claim`, added with `weight` units.
    fn remove(&mut self, claim: &Stored, weight: u64) {
        match claim.expires_at_ms {
            CONFIRMED => self.confirmed.remove(claim.number, weight),
            at => self.holds.remove((at, claim.number), weight),
        };
    }

    /// Its one claim, once it has one.
    fn only(&self) -> Option<u64> {
        (self.len() == 1).then(|| {
            self.confirmed
                .first()
                .or(self.holds.first().map(|(_, claim)| claim))
                .expect("one claim")
        })
    }

    fn heap_bytes(&self) -> usize {
        self.confirmed.heap_bytes() + self.holds.heap_bytes()
    }
}

/// The campaign, in compact storage: each claim an entry of 24 bytes in
/// number order (its units apart, only where more than 1), each user and each request id stored once (see
/// `interned.rs`), a user's own indexes only once it has two claims.
#[derive(Debug)]
pub struct Campaign {
    settings: Settings,
    ledger: Option<Ledger>,
    /// `claims_made` is the highest claim number made so far: numbers are
    /// never reused.
    totals: Totals,
    /// Live claims, and expired holds not yet reclaimed, by number.
    claims: Numbered,
    /// Every user with a stored claim; the payload is its one claim or
    /// `TREE` with the index of its [`UserTree`].
    users: Interned,
    /// In chunks (as `free_trees`), so that growing them copies no more
    /// than a chunk in one call.
    trees: Chunked<Option<UserTree>>,
    free_trees: Chunked<u32>,
    /// Heap bytes of the trees' indexes, kept as they change.
    tree_bytes: usize,
    /// Every stored request id; the payload is the claim holding it.
    requests: Interned,
    /// The units of the stored claims of more than 1.
    units: Units,
    /// The held claims of `claims`, by expiry, weighed by their units.
    holds: ExpiryIndex,
    /// Confirmed claims, and their units (at most `limit`).
    confirmed: u64,
    confirmed_units: u64,
    /// How many users have each sum of confirmed units (sums of 1 or
    /// more): the highest is what COUPON.ALTER may not lower PERUSER below.
    confirmed_per_user: BTreeMap<u64, u64>,
}

/// A deep copy (COPY shares nothing); the trees' bytes are counted from
/// the copy's own buffers, which hold their contents and no more.
impl Clone for Campaign {
    fn clone(&self) -> Self {
        let trees = self.trees.clone();
        let tree_bytes = trees.iter().flatten().map(UserTree::heap_bytes).sum();
        Campaign {
            settings: self.settings,
            ledger: self.ledger.clone(),
            totals: self.totals,
            claims: self.claims.clone(),
            users: self.users.clone(),
            trees,
            free_trees: self.free_trees.clone(),
            tree_bytes,
            requests: self.requests.clone(),
            units: self.units.clone(),
            holds: self.holds.clone(),
            confirmed: self.confirmed,
            confirmed_units: self.confirmed_units,
            confirmed_per_user: self.confirmed_per_user.clone(),
        }
    }
}

/// Equal when they hold the same settings, totals and claims, however
/// they are laid out.
impl PartialEq for Campaign {
    fn eq(&self, other: &Self) -> bool {
        self.settings == other.settings
            && self.ledger == other.ledger
            && self.totals == other.totals
            && self.confirmed == other.confirmed
            && self.confirmed_units == other.confirmed_units
            && self.confirmed_per_user == other.confirmed_per_user
            && self.holds == other.holds
            && self.stored_count() == other.stored_count()
            && self.stored_claims().eq(other.stored_claims())
    }
}

impl Eq for Campaign {}

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
    pub held_units: i64,
    pub confirmed_units: i64,
}

#[cfg(test)]
thread_local! {
    /// Entries of the expiry index read by [`Campaign::expired_holds`] on
    /// this thread (tests assert the work of a call with it).
    pub static HOLDS_VISITED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[inline(always)]
fn count_visit() {
    #[cfg(test)]
    HOLDS_VISITED.with(|visited| visited.set(visited.get() + 1));
}

/// One live claim as COUPON.CLAIMS lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimView<'a> {
    pub claim: u64,
    pub user: &'a [u8],
    pub state: ClaimState,
    pub request_id: Option<&'a [u8]>,
    pub units: u64,
}

impl Campaign {
    pub fn new(settings: Settings) -> Self {
        Campaign {
            settings,
            ledger: None,
            totals: Totals::default(),
            claims: Numbered::default(),
            users: Interned::default(),
            trees: Chunked::default(),
            free_trees: Chunked::default(),
            tree_bytes: 0,
            requests: Interned::default(),
            units: Units::default(),
            holds: ExpiryIndex::default(),
            confirmed: 0,
            confirmed_units: 0,
            confirmed_per_user: BTreeMap::new(),
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

    /// Their units.
    pub fn confirmed_units(&self) -> u64 {
        self.confirmed_units
    }

    /// The most confirmed units any one user has.
    pub fn most_confirmed_of_a_user(&self) -> u64 {
        self.confirmed_per_user.keys().next_back().map_or(0, |&n| n)
    }

    fn view(&self, stored: &Stored) -> Claim<'_> {
        Claim {
            user: self.users.key(stored.user),
            request_id: (stored.request != NO_REQUEST).then(|| self.requests.key(stored.request)),
            state: ClaimState::of(stored.expires_at_ms),
            units: self.units.of(stored.number),
        }
    }

    /// The stored claim numbered `claim`, live or an expired hold.
    pub fn stored(&self, claim: u64) -> Option<Claim<'_>> {
        self.claims.get(claim).map(|stored| self.view(stored))
    }

    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// The claim numbered `claim` if it is live at `now`.
    pub fn live(&self, claim: u64, now: i64) -> Option<Claim<'_>> {
        self.stored(claim).filter(|found| found.state.is_live(now))
    }

    /// Is `claim` a hold that has expired at `now`, not reclaimed yet?
    pub fn is_expired_hold(&self, claim: u64, now: i64) -> bool {
        self.claims
            .get(claim)
            .is_some_and(|c| c.expires_at_ms != CONFIRMED && !c.is_live(now))
    }

    /// Live claims at `now`.
    pub fn live_count(&self, now: i64) -> u64 {
        self.confirmed + (self.holds.len() - self.holds.count_before(now)) as u64
    }

    /// Live units at `now`.
    pub fn live_units(&self, now: i64) -> u128 {
        u128::from(self.confirmed_units) + self.held_units(now)
    }

    /// Units of the holds live at `now`.
    fn held_units(&self, now: i64) -> u128 {
        self.holds.weight()
            - self
                .holds
                .units_before(now, |&(_, claim)| self.units.of(claim))
    }

    fn tree(&self, payload: u64) -> Option<&UserTree> {
        if payload & TREE == 0 {
            return None;
        }
        self.trees[(payload & !TREE) as usize].as_ref()
    }

    /// Live units of `user` at `now`.
    pub fn user_live(&self, user: &[u8], now: i64) -> u128 {
        let Some(handle) = self.users.find(user) else {
            return 0;
        };
        let payload = self.users.payload(handle);
        match self.tree(payload) {
            Some(tree) => tree.live(now, &self.units),
            None => self
                .claims
                .get(payload)
                .filter(|c| c.is_live(now))
                .map_or(0, |c| u128::from(self.units.of(c.number))),
        }
    }

    /// The numbers of `user`'s live claims at `now`, in order: O(k log n)
    /// for k of them, whatever number of expired holds the user has.
    pub fn user_live_claims(&self, user: &[u8], now: i64) -> Vec<u64> {
        let Some(handle) = self.users.find(user) else {
            return Vec::new();
        };
        let payload = self.users.payload(handle);
        let Some(tree) = self.tree(payload) else {
            return match self.claims.get(payload) {
                Some(claim) if claim.is_live(now) => vec![payload],
                _ => Vec::new(),
            };
        };
        let mut numbers: Vec<u64> = tree.confirmed.iter().copied().collect();
        numbers.extend(tree.holds.iter_from(now).map(|&(_, claim)| claim));
        numbers.sort_unstable();
        numbers
    }

    /// Confirmed units of the user of `handle`.
    fn user_confirmed(&self, handle: Handle) -> u64 {
        let payload = self.users.payload(handle);
        match self.tree(payload) {
            Some(tree) => tree.confirmed_units(),
            None => self
                .claims
                .get(payload)
                .filter(|c| c.expires_at_ms == CONFIRMED)
                .map_or(0, |c| self.units.of(c.number)),
        }
    }

    /// The stored claim that holds `request_id`, live or not.
    pub fn request_owner(&self, request_id: &[u8]) -> Option<u64> {
        self.requests
            .find(request_id)
            .map(|handle| self.requests.payload(handle))
    }

    /// A load begins: until [`Campaign::end_load`], the tables of users
    /// and request ids keep their slots' hashes and grow at once (see
    /// [`Interned::start_load`]), as a value built in one step may.
    pub fn start_load(&mut self) {
        self.users.start_load();
        self.requests.start_load();
    }

    /// The load has ended (or failed): the tables are as inserting one by
    /// one leaves them, without the hashes.
    pub fn end_load(&mut self) {
        self.users.end_load();
        self.requests.end_load();
    }

    /// Request ids kept: one per stored claim that has one.
    pub fn request_id_count(&self) -> usize {
        self.requests.len()
    }

    /// Holds expired at `now` and not reclaimed, the oldest first: lazy,
    /// each one (and the first live hold, which ends it) read as it is
    /// taken, so taking k reads at most k + 1 entries whatever the size.
    pub fn expired_holds(&self, now: i64) -> impl Iterator<Item = u64> + '_ {
        self.holds
            .iter()
            .inspect(|_| count_visit())
            .take_while(move |(expires_at_ms, _)| *expires_at_ms < now)
            .map(|&(_, claim)| claim)
    }

    pub fn info(&self, now: i64) -> Info {
        let expired_now = self.holds.count_before(now);
        let held_units = self.held_units(now);
        let live_units = u128::from(self.confirmed_units) + held_units;
        Info {
            limit: self.settings.limit,
            per_user: self.settings.per_user,
            hold_s: self.settings.hold_s,
            confirmed: self.confirmed as i64,
            held: (self.holds.len() - expired_now) as i64,
            // Below 0 only where holds that had expired are live again
            // (see CONFIRM's -2): no place is available then.
            available: (self.settings.limit as u128).saturating_sub(live_units) as i64,
            claims: self.totals.claims_made as i64,
            expired: (self.totals.expired + expired_now as u64) as i64,
            released: self.totals.released as i64,
            // Past 2^63 - 1 only in a loaded value's holds (not judged
            // against the limit at load).
            held_units: held_units.min(i64::MAX as u128) as i64,
            confirmed_units: self.confirmed_units as i64,
        }
    }

    /// COUPON.CLAIMS: live claims numbered `from` or more, in order, at
    /// most `count`. Runs of numbers with nothing live are skipped whole.
    pub fn claims(&self, from: u64, count: usize, now: i64) -> Vec<ClaimView<'_>> {
        self.claims
            .live_from(from, now)
            .take(count)
            .map(|stored| {
                let claim = self.view(stored);
                ClaimView {
                    claim: stored.number,
                    user: claim.user,
                    state: claim.state,
                    request_id: claim.request_id,
                    units: claim.units,
                }
            })
            .collect()
    }

    /// Every claim kept (live, or expired and not reclaimed), in order:
    /// what RDB, AOF rewrite and DEBUG DIGEST write out.
    pub fn stored_claims(&self) -> impl Iterator<Item = (u64, Claim<'_>)> {
        self.claims
            .iter()
            .map(|stored| (stored.number, self.view(stored)))
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
                self.ledger = Some(ledger.clone());
            }
            Effect::Alter(settings) => {
                settings.check()?;
                if self.confirmed_units > settings.limit as u64
                    || self.most_confirmed_of_a_user() > settings.per_user as u64
                {
                    return Err("more confirmed units than the new limit or PERUSER allow");
                }
                self.settings = *settings;
            }
            Effect::Put {
                claim,
                user,
                expires_at_ms,
                request_id,
                units,
            } => self.put(*claim, user, *expires_at_ms, request_id.as_deref(), *units)?,
            Effect::Confirm { claim, units } => self.confirm(*claim, *units)?,
            Effect::Release { claim } => {
                self.remove(*claim)?;
                self.totals.released += 1;
            }
            Effect::Expire { claim } => {
                match self.claims.get(*claim).map(|c| c.expires_at_ms) {
                    Some(CONFIRMED) => return Err("a confirmed claim does not expire"),
                    Some(_) => {}
                    None => return Err("no such claim"),
                }
                self.remove(*claim)?;
                self.totals.expired += 1;
            }
            Effect::Renew {
                claim,
                expires_at_ms,
            } => self.renew(*claim, *expires_at_ms)?,
            Effect::Totals(totals) => {
                let accounted = (self.claims.len() as u64)
                    .checked_add(totals.released)
                    .and_then(|n| n.checked_add(totals.expired));
                let highest = self.claims.last_number().unwrap_or(0);
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
        units: u64,
    ) -> Result<(), ApplyError> {
        if claim <= self.totals.claims_made || claim > LAST_CLAIM {
            return Err("the claim number is not above every number made");
        }
        if units == 0 || units > i64::MAX as u64 {
            return Err("units are not 1 to 2^63 - 1");
        }
        if user.is_empty() || request_id.is_some_and(<[u8]>::is_empty) {
            return Err("an empty user or request id");
        }
        if expires_at_ms.is_some_and(|at| at < 0) {
            return Err("a hold expires before 1970");
        }
        if expires_at_ms.is_none() && !self.room_to_confirm_of(self.users.find(user), units) {
            return Err("more confirmed units than the limit or PERUSER allow");
        }
        // The last check: a new id is kept at once (one search), a known
        // one changes nothing unless it may pass to this claim.
        let request = match request_id.map(|id| self.requests.find_or_insert(id, claim)) {
            None => NO_REQUEST,
            Some((handle, true)) => handle,
            Some((handle, false)) => {
                let owner = self.requests.payload(handle);
                if self.claims.get(owner).map(|c| c.expires_at_ms) == Some(CONFIRMED) {
                    return Err("a confirmed claim's request id is reused");
                }
                // Checked. A held owner has expired (the primary decided
                // so): it gives the id up.
                self.claims.set_request(owner, NO_REQUEST);
                self.requests.set_payload(handle, claim);
                handle
            }
        };
        // From here on nothing fails.
        let expires_at_ms = expires_at_ms.unwrap_or(CONFIRMED);
        let stored = Stored {
            number: claim,
            expires_at_ms,
            user: 0,
            request,
        };
        self.units.set(claim, 1, units);
        let handle = match self.users.find_or_insert(user, claim) {
            (handle, true) => {
                if expires_at_ms == CONFIRMED {
                    self.count_user_confirmed(0, units);
                }
                handle
            }
            (handle, false) => {
                let before = self.user_confirmed(handle);
                let payload = self.users.payload(handle);
                let index = match self.tree(payload) {
                    Some(_) => (payload & !TREE) as usize,
                    None => {
                        // A second claim: the user gets its own indexes.
                        let only = *self.claims.get(payload).expect("the user's claim");
                        let mut tree = UserTree::default();
                        tree.add(&only, self.units.of(only.number), &self.units);
                        let index = self.new_tree(tree);
                        self.users.set_payload(handle, TREE | index as u64);
                        index
                    }
                };
                self.change_tree(index, |tree, table| tree.add(&stored, units, table));
                if expires_at_ms == CONFIRMED {
                    self.count_user_confirmed(before, before + units);
                }
                handle
            }
        };
        if expires_at_ms == CONFIRMED {
            self.confirmed += 1;
            self.confirmed_units += units;
        } else {
            let table = &self.units;
            self.holds
                .insert((expires_at_ms, claim), units, |&(_, c)| table.of(c));
        }
        self.claims.push(Stored {
            user: handle,
            ..stored
        });
        self.totals.claims_made = claim;
        Ok(())
    }

    fn new_tree(&mut self, tree: UserTree) -> usize {
        self.tree_bytes += tree.heap_bytes();
        match self.free_trees.pop() {
            Some(index) => {
                self.trees[index as usize] = Some(tree);
                index as usize
            }
            None => {
                self.trees.push(Some(tree));
                self.trees.len() - 1
            }
        }
    }

    /// Changes tree `index` (told the units of claims), keeping
    /// [`Campaign::tree_bytes`] in step.
    fn change_tree<R>(
        &mut self,
        index: usize,
        change: impl FnOnce(&mut UserTree, &Units) -> R,
    ) -> R {
        let tree = self.trees[index].as_mut().expect("a live tree");
        let before = tree.heap_bytes();
        let result = change(tree, &self.units);
        self.tree_bytes = self.tree_bytes - before + tree.heap_bytes();
        result
    }

    fn drop_tree(&mut self, index: usize) {
        if let Some(tree) = self.trees[index].take() {
            self.tree_bytes -= tree.heap_bytes();
        }
        if index + 1 == self.trees.len() {
            self.trees.pop();
        } else {
            self.free_trees.push(index as u32);
        }
        if self.trees.len() == self.free_trees.len() {
            self.trees = Chunked::default();
            self.free_trees = Chunked::default();
        }
    }

    /// Can the stored claim `claim` become confirmed with `units` within
    /// `limit` and its user's `PERUSER`? Only where holds that had expired
    /// are live again (a clock behind the primary's, a loaded value) can
    /// it not.
    pub fn room_to_confirm(&self, claim: u64, units: u64) -> bool {
        self.claims
            .get(claim)
            .is_some_and(|found| self.room_to_confirm_of(Some(found.user), units))
    }

    /// Do `units` more confirmed units, of `user`, fit `limit` and
    /// `PERUSER`?
    fn room_to_confirm_of(&self, user: Option<Handle>, units: u64) -> bool {
        let of_user = user.map_or(0, |handle| self.user_confirmed(handle));
        let fits = |confirmed: u64, most: i64| {
            confirmed
                .checked_add(units)
                .is_some_and(|after| after <= most as u64)
        };
        fits(self.confirmed_units, self.settings.limit) && fits(of_user, self.settings.per_user)
    }

    /// A held claim becomes confirmed with `units` of its units (`None`:
    /// all of them).
    fn confirm(&mut self, claim: u64, units: Option<u64>) -> Result<(), ApplyError> {
        let found = *self.claims.get(claim).ok_or("no such claim")?;
        if found.expires_at_ms == CONFIRMED {
            return Err("the claim is not held");
        }
        let held = self.units.of(claim);
        let units = units.unwrap_or(held);
        if units == 0 || units > held {
            return Err("the units confirmed are not 1 to the claim's");
        }
        if !self.room_to_confirm_of(Some(found.user), units) {
            return Err("more confirmed units than the limit or PERUSER allow");
        }
        let confirmed = Stored {
            expires_at_ms: CONFIRMED,
            ..found
        };
        let before = self.user_confirmed(found.user);
        let payload = self.users.payload(found.user);
        self.holds.remove((found.expires_at_ms, claim), held);
        // Out of the user's indexes with its units as held, back in with
        // those confirmed.
        let tree = self.tree(payload).map(|_| (payload & !TREE) as usize);
        if let Some(index) = tree {
            self.change_tree(index, |tree, _| tree.remove(&found, held));
        }
        self.units.set(claim, held, units);
        if let Some(index) = tree {
            self.change_tree(index, |tree, table| tree.add(&confirmed, units, table));
        }
        self.count_user_confirmed(before, before + units);
        self.claims.set_expiry(claim, CONFIRMED);
        self.confirmed += 1;
        self.confirmed_units += units;
        Ok(())
    }

    /// A held claim's new end: moved in the campaign's and its user's
    /// expiry indexes.
    fn renew(&mut self, claim: u64, expires_at_ms: i64) -> Result<(), ApplyError> {
        let found = *self.claims.get(claim).ok_or("no such claim")?;
        if found.expires_at_ms == CONFIRMED {
            return Err("the claim is not held");
        }
        if expires_at_ms < 0 {
            return Err("a hold expires before 1970");
        }
        let renewed = Stored {
            expires_at_ms,
            ..found
        };
        let units = self.units.of(claim);
        let payload = self.users.payload(found.user);
        if self.tree(payload).is_some() {
            self.change_tree((payload & !TREE) as usize, |tree, table| {
                tree.remove(&found, units);
                tree.add(&renewed, units, table);
            });
        }
        self.claims.set_expiry(claim, expires_at_ms);
        self.holds.remove((found.expires_at_ms, claim), units);
        let table = &self.units;
        self.holds
            .insert((expires_at_ms, claim), units, |&(_, c)| table.of(c));
        Ok(())
    }

    fn remove(&mut self, number: u64) -> Result<(), ApplyError> {
        let claim = self.claims.remove(number).ok_or("no such claim")?;
        let units = self.units.of(number);
        let confirmed = claim.expires_at_ms == CONFIRMED;
        let payload = self.users.payload(claim.user);
        if self.tree(payload).is_some() {
            let index = (payload & !TREE) as usize;
            let before = self.trees[index]
                .as_ref()
                .map_or(0, UserTree::confirmed_units);
            let only = self.change_tree(index, |tree, _| {
                tree.remove(&claim, units);
                tree.only()
            });
            if confirmed {
                self.count_user_confirmed(before, before - units);
            }
            if let Some(only) = only {
                // Back to one claim: kept in the user record again.
                self.drop_tree(index);
                self.users.set_payload(claim.user, only);
            }
        } else {
            if confirmed {
                self.count_user_confirmed(units, 0);
            }
            self.users.remove(claim.user);
        }
        if confirmed {
            self.confirmed -= 1;
            self.confirmed_units -= units;
        } else {
            self.holds.remove((claim.expires_at_ms, number), units);
        }
        self.units.set(number, units, 1);
        if claim.request != NO_REQUEST {
            self.requests.remove(claim.request);
        }
        Ok(())
    }

    /// Keeps [`Campaign::confirmed_per_user`] in step with a user whose
    /// confirmed units went from `before` to `after`.
    fn count_user_confirmed(&mut self, before: u64, after: u64) {
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

    /// Heap bytes, for MEMORY USAGE: every buffer's capacity rounded to
    /// the allocator's size class, kept as they change (O(1) but for the
    /// string slabs' classes). The B-tree of counts per user is estimated
    /// (it has one entry per distinct count, at most PERUSER).
    pub fn heap_bytes(&self) -> usize {
        let counts = self.confirmed_per_user.len().div_ceil(11) * alloc_size(192);
        self.claims.heap_bytes()
            + self.units.heap_bytes()
            + self.holds.heap_bytes()
            + self.users.heap_bytes()
            + self.requests.heap_bytes()
            + self.trees.heap_bytes()
            + self.free_trees.heap_bytes()
            + self.tree_bytes
            + counts
            + self
                .ledger
                .as_ref()
                .map_or(0, |l| alloc_size(l.stream.len()))
    }

    /// How much work freeing it is, for Redis's choice of freeing it on
    /// the lazyfree thread: one unit an allocation, about.
    pub fn free_effort(&self) -> usize {
        self.claims.allocations()
            + self.units.allocations()
            + self.holds.allocations()
            + self.users.allocations()
            + self.requests.allocations()
            + (self.trees.len() - self.free_trees.len()) * 4
            + 1
    }

    /// Shows every buffer to `mover`, always in this order (a walk stopped
    /// half way resumes by position). The B-tree of counts per user (one
    /// entry per distinct count) stays where it is.
    pub fn defrag(&mut self, mover: &mut Mover) {
        if let Some(ledger) = &mut self.ledger {
            mover.boxed_slice(&mut ledger.stream);
        }
        self.claims.defrag(mover);
        self.units.defrag(mover);
        self.holds.defrag(mover);
        self.users.defrag(mover);
        self.requests.defrag(mover);
        self.trees.defrag(mover);
        for tree in self.trees.iter_mut().flatten() {
            tree.confirmed.defrag(mover);
            tree.holds.defrag(mover);
        }
        self.free_trees.defrag(mover);
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
            units: 1,
        }
    }

    #[test]
    fn effects_that_do_not_fit_are_refused_and_change_nothing() {
        let mut c = campaign(2, 1);
        c.apply(&put(1, "a", None, Some("r"))).unwrap();
        c.apply(&put(2, "b", Some(NOW), None)).unwrap();
        let before = c.clone();
        for effect in [
            Effect::Confirm {
                claim: 1,
                units: None,
            },
            Effect::Confirm {
                claim: 7,
                units: None,
            },
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
        c.apply(&Effect::Confirm {
            claim: 2,
            units: None,
        })
        .unwrap();
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
        assert_eq!(c.stored(1).unwrap().request_id, None);
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
        assert_eq!(c.user_live(b"a", at), u128::from(expected.len() as u64));
        assert_eq!(c.user_live(b"b", at), 0u128);
        assert_eq!(c.user_live(b"nobody", at), 0u128);
        c.apply(&Effect::Release { claim: 20 }).unwrap();
        c.apply(&Effect::Confirm {
            claim: 21,
            units: None,
        })
        .unwrap();
        assert_eq!(c.user_live(b"a", at), u128::from(expected.len() as u64 - 1));
        // Confirmed ones never expire: 4, 8, ... 40 but the released 20,
        // and 21.
        assert_eq!(c.user_live(b"a", i64::MAX), 10u128);
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
        c.apply(&Effect::Confirm {
            claim: 2_000,
            units: None,
        })
        .unwrap();
        c.apply(&Effect::Release { claim: 1_000 }).unwrap();
        let live: Vec<u64> = c.claims(1, 10, NOW).iter().map(|v| v.claim).collect();
        assert_eq!(live, [2_000, 3_000]);
        let later: Vec<u64> = c
            .claims(1, 10, NOW + 6_000_000)
            .iter()
            .map(|v| v.claim)
            .collect();
        assert_eq!(later, [2_000]);
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
                    std::str::from_utf8(claim.user).unwrap(),
                    expiry,
                    None,
                ))
                .unwrap();
        }
        rebuilt.apply(&Effect::Totals(c.totals())).unwrap();
        assert_eq!(rebuilt, c);
    }

    #[test]
    fn memory_follows_every_change_and_is_all_given_back() {
        let mut c = campaign(10, 2);
        let empty = c.heap_bytes();
        c.apply(&put(1, "alice", Some(NOW), Some("order-1")))
            .unwrap();
        c.apply(&put(2, "alice", Some(NOW), None)).unwrap();
        c.apply(&put(3, "bob", Some(NOW), Some("order-2"))).unwrap();
        let three = c.heap_bytes();
        assert!(three > empty);
        c.apply(&Effect::Confirm {
            claim: 2,
            units: None,
        })
        .unwrap();
        c.apply(&Effect::Release { claim: 3 }).unwrap();
        assert_eq!(c.user_live(b"alice", NOW), 2u128);
        assert_eq!(c.user_live(b"bob", NOW), 0u128);
        // An expired hold's id taken over, then everything removed.
        c.apply(&put(4, "carol", Some(NOW + 5), Some("order-1")))
            .unwrap();
        assert_eq!(c.request_owner(b"order-1"), Some(4));
        assert_eq!(c.stored(1).unwrap().request_id, None);
        for claim in [1, 2, 4] {
            c.apply(&Effect::Release { claim }).unwrap();
        }
        assert!(c.users.is_empty() && c.requests.is_empty() && c.trees.is_empty());
        assert_eq!(c.heap_bytes(), empty);
        assert_eq!(c.tree_bytes, 0);
    }

    /// Units live apart from the claims, only for claims of more than 1,
    /// and follow a user's indexes through confirm, renew and removal.
    #[test]
    fn units_are_kept_apart_and_counted_everywhere() {
        let mut c = campaign(100, 20);
        let empty = c.heap_bytes();
        let held = |claim, user: &str, units, at| Effect::Put {
            claim,
            user: user.as_bytes().to_vec(),
            expires_at_ms: Some(at),
            request_id: None,
            units,
        };
        c.apply(&held(1, "a", 4, NOW)).unwrap();
        c.apply(&held(2, "a", 1, NOW + 10)).unwrap();
        c.apply(&held(3, "a", 3, NOW + 20)).unwrap();
        c.apply(&held(4, "b", 5, NOW + 20)).unwrap();
        assert_eq!(c.user_live(b"a", NOW), 8);
        assert_eq!(c.user_live(b"a", NOW + 1), 4);
        assert_eq!(c.live_units(NOW + 11), 8);
        // Claim 3 confirmed with 2 of its 3; claim 1 renewed past NOW.
        c.apply(&Effect::Confirm {
            claim: 3,
            units: Some(2),
        })
        .unwrap();
        c.apply(&Effect::Renew {
            claim: 1,
            expires_at_ms: NOW + 30,
        })
        .unwrap();
        assert_eq!(c.stored(3).unwrap().units, 2);
        assert_eq!(c.most_confirmed_of_a_user(), 2);
        let info = c.info(NOW + 25);
        assert_eq!(
            (info.held_units, info.confirmed_units, info.available),
            (4, 2, 94)
        );
        assert_eq!(c.user_live(b"a", NOW + 25), 6);
        // Over PERUSER 20 with 19 more of a's confirmed: refused.
        assert!(c
            .apply(&Effect::Put {
                claim: 5,
                user: b"a".to_vec(),
                expires_at_ms: None,
                request_id: None,
                units: 19,
            })
            .is_err());
        for claim in [1, 2, 3, 4] {
            c.apply(&Effect::Release { claim }).unwrap();
        }
        assert_eq!(c.units, Units::default());
        assert_eq!(c.heap_bytes(), empty);
    }

    /// A user goes from one claim to many and back, its indexes with it.
    #[test]
    fn a_user_keeps_its_own_indexes_only_while_it_has_two_claims_or_more() {
        let mut c = campaign(10_000, 10_000);
        for n in 1..=2_000u64 {
            let expiry = if n % 3 == 0 {
                None
            } else {
                Some(NOW + (n % 7) as i64)
            };
            c.apply(&put(n, "a", expiry, None)).unwrap();
        }
        c.apply(&put(2_001, "b", None, None)).unwrap();
        assert_eq!(c.most_confirmed_of_a_user(), 666);
        let held_live = (1..=2_000u64).filter(|n| n % 3 != 0 && n % 7 >= 4).count() as u64;
        assert_eq!(c.user_live(b"a", NOW + 4), u128::from(666 + held_live));
        for n in (1..=2_000u64).filter(|n| n % 5 != 0) {
            c.apply(&Effect::Release { claim: n }).unwrap();
        }
        assert_eq!(
            c.user_live_claims(b"a", 0),
            (1..=400).map(|n| n * 5).collect::<Vec<_>>()
        );
        for n in (5..2_000u64).step_by(5) {
            c.apply(&Effect::Release { claim: n }).unwrap();
        }
        assert!(c.trees.is_empty() && c.tree_bytes == 0);
        assert_eq!(c.user_live_claims(b"a", 0), [2_000]);
        c.apply(&Effect::Confirm {
            claim: 2_000,
            units: None,
        })
        .unwrap();
        assert_eq!(c.most_confirmed_of_a_user(), 1);
        assert_eq!(c.confirmed_count(), 2);
    }

    /// Growth is spread over calls: however many users hold two claims
    /// (each then has a tree) or have names and request ids too long for
    /// a slot (each kept boxed), no put or release copies more than a
    /// chunk of each of the three arrays it may grow (the trees, the long
    /// users, the long request ids, or their free lists), whatever the
    /// campaign's size. (Kept in `Vec`s, the trees of 20,000 such users
    /// were copied whole, 2.6 MB, by one put.)
    #[test]
    fn no_put_or_release_copies_more_than_a_chunk_of_each_array() {
        use super::super::chunked::CHUNK_BYTES;
        use crate::redis::reallocated_bytes;

        let users = 20_000u64;
        let mut c = campaign(2 * users as i64, 2);
        let mut most = 0;
        let mut apply = |c: &mut Campaign, effect: &Effect| {
            let before = reallocated_bytes();
            c.apply(effect).unwrap();
            most = most.max(reallocated_bytes() - before);
        };
        let name = |user: u64| format!("{user:x>130}");
        for claim in 1..=2 * users {
            let id = format!("{claim:y>130}");
            let effect = put(claim, &name(claim % users), Some(NOW), Some(&id));
            apply(&mut c, &effect);
        }
        assert_eq!(c.trees.len(), users as usize);
        for claim in 1..=2 * users {
            apply(&mut c, &Effect::Release { claim });
        }
        assert_eq!(c.stored_count(), 0);
        assert!(c.trees.is_empty() && c.tree_bytes == 0);
        assert!(
            most <= 3 * CHUNK_BYTES,
            "one call reallocated {most} bytes of buffers"
        );
    }

    #[test]
    fn a_copy_shares_no_buffer_with_its_source() {
        let mut c = campaign(10, 2);
        c.apply(&put(1, "alice", Some(NOW), Some("order-1")))
            .unwrap();
        let copy = c.clone();
        let (source, copied) = (c.stored(1).unwrap(), copy.stored(1).unwrap());
        assert_eq!(source, copied);
        assert_ne!(source.user.as_ptr(), copied.user.as_ptr());
        let ids = (source.request_id.as_ref(), copied.request_id.as_ref());
        assert_ne!(ids.0.unwrap().as_ptr(), ids.1.unwrap().as_ptr());
    }
}
