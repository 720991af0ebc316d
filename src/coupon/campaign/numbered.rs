//! The stored claims by number: compact entries in number-ordered blocks
//! of at most `BLOCK`. Numbers are made increasing, so a new claim is
//! always appended to the last block; finding one is two binary searches;
//! removing one shifts part of its block. Each block sums what it holds,
//! so COUPON.CLAIMS skips blocks with nothing live (after a mass expiry,
//! long runs of expired holds wait for the amortised reclaim).

use super::heap::vec_bytes;
use crate::redis::Mover;

const BLOCK: usize = 512;

/// No request id.
pub const NO_REQUEST: u32 = u32::MAX;

/// One stored claim: its number, its expiry (`CONFIRMED` once confirmed),
/// and the handles of its user and request id (see `interned.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored {
    pub number: u64,
    pub expires_at_ms: i64,
    pub user: u32,
    pub request: u32,
}

/// `expires_at_ms` of a confirmed claim (holds expire at 0 or later).
pub const CONFIRMED: i64 = -1;

impl Stored {
    pub fn is_live(&self, now: i64) -> bool {
        self.expires_at_ms == CONFIRMED || now <= self.expires_at_ms
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Block {
    entries: Vec<Stored>,
    confirmed: u32,
    held: u32,
    /// The latest expiry among its holds.
    latest_expiry: i64,
}

impl Block {
    fn has_live(&self, now: i64) -> bool {
        self.confirmed > 0 || (self.held > 0 && now <= self.latest_expiry)
    }

    fn count(&mut self, expires_at_ms: i64, added: bool) {
        match (expires_at_ms == CONFIRMED, added) {
            (true, true) => self.confirmed += 1,
            (true, false) => self.confirmed -= 1,
            (false, true) => {
                self.held += 1;
                self.latest_expiry = self.latest_expiry.max(expires_at_ms);
            }
            (false, false) => {
                self.held -= 1;
                if expires_at_ms == self.latest_expiry {
                    // Recomputed from the block's own claims: at most 512.
                    self.latest_expiry = self
                        .entries
                        .iter()
                        .map(|e| e.expires_at_ms)
                        .max()
                        .unwrap_or(0)
                        .max(0);
                }
            }
        }
    }
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Numbered {
    blocks: Vec<Block>,
    len: usize,
    /// Heap bytes of the blocks' entries.
    entry_bytes: usize,
}

/// A clone's buffers hold their contents and no more (`Vec::clone`), so
/// their bytes are counted anew: a COPY's MEMORY USAGE is its own, not
/// its source's.
impl Clone for Numbered {
    fn clone(&self) -> Self {
        let blocks = self.blocks.clone();
        let entry_bytes = blocks
            .iter()
            .map(|block| vec_bytes::<Stored>(block.entries.capacity()))
            .sum();
        Numbered {
            blocks,
            len: self.len,
            entry_bytes,
        }
    }
}

impl Numbered {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn last_number(&self) -> Option<u64> {
        self.blocks
            .last()
            .and_then(|b| b.entries.last())
            .map(|e| e.number)
    }

    /// Appends `entry`, numbered above every stored claim.
    pub fn push(&mut self, entry: Stored) {
        debug_assert!(self.last_number().is_none_or(|last| last < entry.number));
        if self.blocks.last().is_none_or(|b| b.entries.len() == BLOCK) {
            // The first block grows from one entry, later ones are sized
            // for the run of claims still arriving.
            let capacity = if self.blocks.is_empty() { 1 } else { BLOCK };
            self.blocks.push(Block {
                entries: Vec::with_capacity(capacity),
                ..Block::default()
            });
            self.entry_bytes += vec_bytes::<Stored>(capacity);
        }
        let block = self.blocks.last_mut().expect("a block");
        if block.entries.len() == block.entries.capacity() {
            let before = vec_bytes::<Stored>(block.entries.capacity());
            let grown = (block.entries.capacity() * 2).clamp(1, BLOCK);
            block.entries.reserve_exact(grown - block.entries.len());
            self.entry_bytes = self.entry_bytes - before + vec_bytes::<Stored>(grown);
        }
        block.entries.push(entry);
        block.count(entry.expires_at_ms, true);
        self.len += 1;
    }

    /// (block, index in it) of claim `number`.
    fn find(&self, number: u64) -> Option<(usize, usize)> {
        let block = self
            .blocks
            .partition_point(|b| b.entries.last().is_some_and(|e| e.number < number));
        let entries = &self.blocks.get(block)?.entries;
        let at = entries.binary_search_by_key(&number, |e| e.number).ok()?;
        Some((block, at))
    }

    pub fn get(&self, number: u64) -> Option<&Stored> {
        let (block, at) = self.find(number)?;
        Some(&self.blocks[block].entries[at])
    }

    /// Sets the expiry of claim `number` (`CONFIRMED` to confirm it).
    pub fn set_expiry(&mut self, number: u64, expires_at_ms: i64) -> Option<()> {
        let (block, at) = self.find(number)?;
        let block = &mut self.blocks[block];
        let before = block.entries[at].expires_at_ms;
        block.entries[at].expires_at_ms = expires_at_ms;
        block.count(before, false);
        block.count(expires_at_ms, true);
        Some(())
    }

    pub fn set_request(&mut self, number: u64, request: u32) -> Option<()> {
        let (block, at) = self.find(number)?;
        self.blocks[block].entries[at].request = request;
        Some(())
    }

    pub fn remove(&mut self, number: u64) -> Option<Stored> {
        let (index, at) = self.find(number)?;
        let block = &mut self.blocks[index];
        let entry = block.entries.remove(at);
        block.count(entry.expires_at_ms, false);
        self.len -= 1;
        let before = vec_bytes::<Stored>(block.entries.capacity());
        if block.entries.is_empty() {
            self.blocks.remove(index);
            self.entry_bytes -= before;
            if self.blocks.len() * 4 <= self.blocks.capacity() {
                self.blocks.shrink_to(self.blocks.len() * 2);
            }
        } else if block.entries.len() * 4 <= block.entries.capacity()
            && block.entries.capacity() > 4
        {
            // A block thinned by releases gives half its room back.
            let half = block.entries.capacity() / 2;
            block.entries.shrink_to(half);
            self.entry_bytes = self.entry_bytes - before + vec_bytes::<Stored>(half);
        }
        Some(entry)
    }

    /// Every stored claim, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Stored> {
        self.blocks.iter().flat_map(|b| b.entries.iter())
    }

    /// The claims numbered `from` or more that are live at `now`, in
    /// order; blocks with nothing live are skipped whole.
    pub fn live_from(&self, from: u64, now: i64) -> impl Iterator<Item = &Stored> {
        let first = self
            .blocks
            .partition_point(|b| b.entries.last().is_some_and(|e| e.number < from));
        self.blocks[first..]
            .iter()
            .filter(move |b| b.has_live(now))
            .flat_map(|b| b.entries.iter())
            .filter(move |e| e.number >= from && e.is_live(now))
    }

    /// Heap bytes, for MEMORY USAGE: O(1).
    pub fn heap_bytes(&self) -> usize {
        vec_bytes::<Block>(self.blocks.capacity()) + self.entry_bytes
    }

    /// Shows every buffer to `mover`: the blocks, then each block's entries.
    pub fn defrag(&mut self, mover: &mut Mover) {
        mover.vec(&mut self.blocks);
        for block in &mut self.blocks {
            mover.vec(&mut block.entries);
        }
    }

    /// Allocations, for the lazyfree decision.
    pub fn allocations(&self) -> usize {
        self.blocks.len() + 1
    }

    /// Do the blocks' sums equal their entries? (checks)
    #[cfg(test)]
    fn sums_agree(&self) -> bool {
        self.blocks.iter().all(|b| {
            let held: Vec<i64> = b
                .entries
                .iter()
                .map(|e| e.expires_at_ms)
                .filter(|&at| at != CONFIRMED)
                .collect();
            !b.entries.is_empty()
                && b.held as usize == held.len()
                && b.confirmed as usize == b.entries.len() - held.len()
                && (held.is_empty() || held.iter().max() == Some(&b.latest_expiry))
        }) && self.entry_bytes
            == self
                .blocks
                .iter()
                .map(|b| vec_bytes::<Stored>(b.entries.capacity()))
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn agrees_with_a_map_over_random_operations() {
        let mut numbered = Numbered::default();
        let mut plain: BTreeMap<u64, Stored> = BTreeMap::new();
        let mut rng = crate::xorshift::Xorshift::new(0x9e37_79b9_7f4a_7c15u64);
        let mut next = || rng.next();
        let mut number = 0;
        for round in 0..20_000u32 {
            let roll = next() % 10;
            if roll < 6 || plain.is_empty() {
                number += 1 + next() % 3;
                let expires_at_ms = if roll == 0 {
                    CONFIRMED
                } else {
                    (next() % 1_000) as i64
                };
                let entry = Stored {
                    number,
                    expires_at_ms,
                    user: round,
                    request: NO_REQUEST,
                };
                numbered.push(entry);
                plain.insert(number, entry);
            } else {
                let keys: Vec<u64> = plain.keys().copied().collect();
                let victim = keys[next() as usize % keys.len()];
                if roll == 9 {
                    numbered.set_expiry(victim, CONFIRMED).unwrap();
                    plain.get_mut(&victim).unwrap().expires_at_ms = CONFIRMED;
                } else {
                    assert_eq!(numbered.remove(victim), plain.remove(&victim));
                    assert_eq!(numbered.remove(victim), None);
                }
            }
            let probe = next() % (number + 2);
            assert_eq!(numbered.get(probe), plain.get(&probe));
            let now = (next() % 1_100) as i64;
            let from = next() % (number + 2);
            assert!(numbered.live_from(from, now).take(20).eq(plain
                .range(from..)
                .map(|(_, e)| e)
                .filter(|e| e.is_live(now))
                .take(20)));
            assert_eq!(numbered.len(), plain.len());
        }
        assert!(numbered.iter().eq(plain.values()));
        assert!(numbered.sums_agree());
        assert_eq!(numbered.last_number(), plain.keys().next_back().copied());
    }
}
