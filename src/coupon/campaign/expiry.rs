//! The held claims ordered by expiry, answering "how many holds, and how
//! many units, have expired by now" exactly without touching them, and
//! "which expired first" for the amortised reclaim.
//!
//! Sorted blocks of at most `BLOCK` entries, each block with the sum of
//! its entries' weights (a hold's units): insert and remove are a binary
//! search and a short shift inside one block; counting walks the blocks
//! (n / BLOCK lengths and sums, about 2,000 additions for a million holds)
//! and reads into one. Holds mostly arrive in expiry order, so inserts
//! land at the end.

use super::heap::vec_bytes;
use crate::redis::Mover;

const BLOCK: usize = 512;

/// One hold: (expires_at_ms, claim number).
pub type Entry = (i64, u64);

/// Sorted blocks of at most `BLOCK` values, each a `Vec` grown by doubling
/// up to `BLOCK` (an index of one entry takes one small allocation); an
/// append past a full last block starts a new block rather than splitting
/// it, so values that arrive in order fill their blocks. The heap bytes
/// of the blocks are kept as they change, so [`SortedBlocks::heap_bytes`]
/// is O(1).
#[derive(Debug)]
pub struct SortedBlocks<T> {
    blocks: Vec<Vec<T>>,
    /// Each block's sum of its entries' weights, given as they come and go
    /// (u128: a loaded value's holds are not judged against its limit, so
    /// their units may sum past 64 bits). Every weight is 1 or more, so a
    /// sum equal to its block's length says each weighs 1.
    weights: Vec<u128>,
    /// All the weights.
    weight: u128,
    len: usize,
    /// Heap bytes of the blocks (not of `blocks` itself).
    block_bytes: usize,
}

/// A clone's blocks hold their entries and no more (`Vec::clone`), so
/// their bytes are counted anew: a COPY's MEMORY USAGE is its own.
impl<T: Clone> Clone for SortedBlocks<T> {
    fn clone(&self) -> Self {
        let blocks = self.blocks.clone();
        let block_bytes = blocks
            .iter()
            .map(|block| vec_bytes::<T>(block.capacity()))
            .sum();
        SortedBlocks {
            blocks,
            weights: self.weights.clone(),
            weight: self.weight,
            len: self.len,
            block_bytes,
        }
    }
}

/// The held claims ordered by expiry.
pub type ExpiryIndex = SortedBlocks<Entry>;

impl<T> Default for SortedBlocks<T> {
    fn default() -> Self {
        SortedBlocks {
            blocks: Vec::new(),
            weights: Vec::new(),
            weight: 0,
            len: 0,
            block_bytes: 0,
        }
    }
}

/// Equal when they hold the same entries, however the blocks fell.
impl<T: PartialEq> PartialEq for SortedBlocks<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self
                .blocks
                .iter()
                .flatten()
                .eq(other.blocks.iter().flatten())
    }
}

impl<T: Eq> Eq for SortedBlocks<T> {}

impl<T: Ord + Copy> SortedBlocks<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    /// The sum of every entry's weight.
    pub fn weight(&self) -> u128 {
        self.weight
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The block that holds (or would hold) `entry`: the first whose last
    /// entry is not below it, else the last block.
    fn block_for(&self, entry: &T) -> usize {
        let index = self
            .blocks
            .partition_point(|block| block.last().is_some_and(|last| last < entry));
        index.min(self.blocks.len().saturating_sub(1))
    }

    /// Inserts `entry` of `weight` (1 or more); `weigh` tells the weight
    /// of the entries a full block hands to a new one.
    pub fn insert(&mut self, entry: T, weight: u64, weigh: impl Fn(&T) -> u64) {
        if self.blocks.is_empty() {
            self.blocks.push(Vec::with_capacity(1));
            self.weights.push(0);
            self.block_bytes += vec_bytes::<T>(1);
        }
        // Holds mostly arrive in expiry order (and a load reads them so):
        // past the last entry, the place is the end, found without a
        // search over the blocks (each a pointer to follow).
        let last = self.blocks.len() - 1;
        let (mut index, mut at) = match self.blocks[last].last() {
            Some(end) if *end < entry => (last, self.blocks[last].len()),
            _ => {
                let index = self.block_for(&entry);
                (index, self.blocks[index].partition_point(|e| e < &entry))
            }
        };
        if self.blocks[index].len() == BLOCK {
            if index + 1 == self.blocks.len() && at == BLOCK {
                // Past the end of a full last block: a new block, sized
                // for the run that is arriving in order.
                self.blocks.push(Vec::with_capacity(BLOCK));
                self.weights.push(0);
                self.block_bytes += vec_bytes::<T>(BLOCK);
                index += 1;
                at = 0;
            } else {
                // A full block splits in halves; the last one splits where
                // the entry goes (holds renewed at once by many clients
                // arrive a little out of order near the end), so the
                // blocks behind the end stay full.
                let mid = match index + 1 == self.blocks.len() {
                    true => at.max(BLOCK / 2),
                    false => BLOCK / 2,
                };
                let mut upper = Vec::with_capacity(BLOCK);
                upper.extend_from_slice(&self.blocks[index][mid..]);
                let moved = if self.weights[index] == BLOCK as u128 {
                    upper.len() as u128
                } else {
                    sum(&upper, &weigh)
                };
                self.blocks[index].truncate(mid);
                self.weights[index] -= moved;
                self.weights.insert(index + 1, moved);
                self.blocks.insert(index + 1, upper);
                self.block_bytes += vec_bytes::<T>(BLOCK);
                if at > mid {
                    index += 1;
                    at -= mid;
                }
            }
        }
        let block = &mut self.blocks[index];
        if block.len() == block.capacity() {
            let before = vec_bytes::<T>(block.capacity());
            block.reserve_exact((block.capacity() * 2).clamp(1, BLOCK) - block.len());
            self.block_bytes = self.block_bytes - before + vec_bytes::<T>(block.capacity());
        }
        block.insert(at, entry);
        self.weights[index] += u128::from(weight);
        self.weight += u128::from(weight);
        self.len += 1;
    }

    /// Removes `entry`, inserted with `weight`; false when it was not
    /// there.
    pub fn remove(&mut self, entry: T, weight: u64) -> bool {
        if self.blocks.is_empty() {
            return false;
        }
        let index = self.block_for(&entry);
        let block = &mut self.blocks[index];
        let Ok(at) = block.binary_search(&entry) else {
            return false;
        };
        block.remove(at);
        self.weights[index] -= u128::from(weight);
        self.weight -= u128::from(weight);
        self.len -= 1;
        let before = vec_bytes::<T>(block.capacity());
        if block.is_empty() {
            self.blocks.remove(index);
            self.weights.remove(index);
            self.block_bytes -= before;
            if self.blocks.len() * 4 <= self.blocks.capacity() {
                self.blocks.shrink_to(self.blocks.len() * 2);
                self.weights.shrink_to(self.blocks.len() * 2);
            }
        } else if block.len() * 4 <= block.capacity() && block.capacity() > 4 {
            // A block thinned by removals gives half its room back.
            block.shrink_to(block.capacity() / 2);
            self.block_bytes = self.block_bytes - before + vec_bytes::<T>(block.capacity());
        }
        true
    }

    /// The lowest entry.
    pub fn first(&self) -> Option<T> {
        self.blocks.first().and_then(|block| block.first()).copied()
    }

    /// The lowest entry not below `probe`.
    pub fn first_from(&self, probe: &T) -> Option<T> {
        let block = self.blocks.get(self.block_for(probe))?;
        block.get(block.partition_point(|e| e < probe)).copied()
    }

    /// Every entry, in order (for checks and serialisation).
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.blocks.iter().flatten()
    }

    /// Heap bytes, for MEMORY USAGE: O(1).
    pub fn heap_bytes(&self) -> usize {
        vec_bytes::<Vec<T>>(self.blocks.capacity())
            + vec_bytes::<u128>(self.weights.capacity())
            + self.block_bytes
    }

    /// Shows every buffer to `mover`: the list of blocks, their sums, then
    /// each block.
    pub fn defrag(&mut self, mover: &mut Mover) {
        mover.vec(&mut self.blocks);
        mover.vec(&mut self.weights);
        for block in &mut self.blocks {
            mover.vec(block);
        }
    }

    /// Allocations, for the lazyfree decision.
    pub fn allocations(&self) -> usize {
        self.blocks.len() + 2
    }
}

fn sum<T>(entries: &[T], weigh: impl Fn(&T) -> u64) -> u128 {
    entries.iter().map(|e| u128::from(weigh(e))).sum()
}

impl SortedBlocks<Entry> {
    /// How many expire before `at_ms` (so have expired when now is `at_ms`:
    /// a hold is gone once now > its expiry).
    pub fn count_before(&self, at_ms: i64) -> usize {
        let mut count = 0;
        for block in &self.blocks {
            match block.last() {
                Some(&(last, _)) if last < at_ms => count += block.len(),
                _ => return count + block.partition_point(|&(expiry, _)| expiry < at_ms),
            }
        }
        count
    }

    /// The weight (units) of the holds that expire before `at_ms`, each
    /// weighed by `weigh`: the count (searched) where every hold weighs 1,
    /// else the blocks' sums, then the shorter side of the one block
    /// `at_ms` falls in (at most BLOCK / 2 entries weighed).
    pub fn units_before(&self, at_ms: i64, weigh: impl Fn(&Entry) -> u64) -> u128 {
        if self.weight == self.len as u128 {
            return self.count_before(at_ms) as u128;
        }
        let mut units = 0;
        for (block, &weight) in self.blocks.iter().zip(&self.weights) {
            match block.last() {
                Some(&(last, _)) if last < at_ms => units += weight,
                _ if weight == block.len() as u128 => {
                    return units + block.partition_point(|&(expiry, _)| expiry < at_ms) as u128;
                }
                _ => {
                    let at = block.partition_point(|&(expiry, _)| expiry < at_ms);
                    return if at <= block.len() / 2 {
                        units + sum(&block[..at], weigh)
                    } else {
                        units + weight - sum(&block[at..], weigh)
                    };
                }
            }
        }
        units
    }

    /// The entries expiring at `at_ms` or later, in order: the holds still
    /// live when now is `at_ms`.
    pub fn iter_from(&self, at_ms: i64) -> impl Iterator<Item = &Entry> {
        let first = self
            .blocks
            .partition_point(|block| block.last().is_some_and(|&(last, _)| last < at_ms));
        let mut rest = self.blocks[first..].iter();
        let head = rest.next().map_or(&[][..], |block| {
            &block[block.partition_point(|e| e.0 < at_ms)..]
        });
        head.iter().chain(rest.flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hold's weight in the tests: 1 to 3, from its claim number.
    fn weigh(entry: &Entry) -> u64 {
        1 + entry.1 % 3
    }

    /// The same operations on a plain sorted vector.
    #[test]
    fn agrees_with_a_sorted_vector_over_random_operations() {
        let mut index = ExpiryIndex::default();
        let mut plain: Vec<Entry> = Vec::new();
        let mut rng = crate::xorshift::Xorshift::new(0x9e37_79b9_7f4a_7c15u64);
        let mut next = || rng.next();
        for claim in 0..20_000u64 {
            let roll = next() % 10;
            if roll < 6 || plain.is_empty() {
                let entry = ((next() % 5_000) as i64, claim);
                index.insert(entry, weigh(&entry), weigh);
                let at = plain.partition_point(|e| e < &entry);
                plain.insert(at, entry);
            } else {
                let victim = plain.remove((next() as usize) % plain.len());
                assert!(index.remove(victim, weigh(&victim)));
                assert!(!index.remove(victim, weigh(&victim)));
            }
            let at = (next() % 5_200) as i64;
            assert_eq!(index.count_before(at), plain.partition_point(|e| e.0 < at));
            let units: u64 = plain.iter().filter(|e| e.0 < at).map(weigh).sum();
            assert_eq!(index.units_before(at, weigh), u128::from(units));
            let probe = (at, next() % 20_000);
            assert_eq!(
                index.first_from(&probe),
                plain.iter().find(|e| **e >= probe).copied()
            );
            assert!(index
                .iter_from(at)
                .copied()
                .eq(plain.iter().copied().filter(|e| e.0 >= at)));
            assert_eq!(index.len(), plain.len());
        }
        assert!(index.iter().copied().eq(plain.iter().copied()));
        assert_eq!(index.weight(), sum(&plain, weigh));
        assert!(index
            .blocks
            .iter()
            .zip(&index.weights)
            .all(|(b, &w)| sum(b, weigh) == w));
        assert!(index
            .blocks
            .iter()
            .all(|b| !b.is_empty() && b.len() <= BLOCK));
        let walked: usize = index
            .blocks
            .iter()
            .map(|b| vec_bytes::<Entry>(b.capacity()))
            .sum();
        assert_eq!(index.block_bytes, walked);
    }

    #[test]
    fn values_arriving_in_order_fill_their_blocks() {
        let mut index = SortedBlocks::<u64>::default();
        for n in 0..(BLOCK * 4) as u64 {
            index.insert(n, 1, |_| 1);
        }
        assert_eq!(index.blocks.len(), 4);
        assert!(index
            .blocks
            .iter()
            .all(|b| b.len() == BLOCK && b.capacity() == BLOCK));
        for n in 0..(BLOCK * 4) as u64 {
            assert!(index.remove(n, 1));
        }
        assert!(index.is_empty() && index.block_bytes == 0);
    }

    /// Renewals by many clients at once: each three arrive as the third,
    /// the first, the second, so a full last block is often given an
    /// entry before its end. The blocks behind the end stay full (halves
    /// would leave each half empty).
    #[test]
    fn values_arriving_nearly_in_order_fill_their_blocks() {
        let mut index = SortedBlocks::<u64>::default();
        let groups = (BLOCK * 4 / 3 + 1) as u64;
        for group in 0..groups {
            for offset in [2, 0, 1] {
                index.insert(group * 3 + offset, 1, |_| 1);
            }
        }
        let (_, behind) = index.blocks.split_last().unwrap();
        let lengths: Vec<usize> = behind.iter().map(Vec::len).collect();
        assert!(lengths.iter().all(|&n| n == BLOCK), "{lengths:?}");
        assert!(index.iter().copied().eq(0..groups * 3));
    }

    #[test]
    fn counts_what_has_expired_by_now() {
        let mut index = ExpiryIndex::default();
        let units = |&(_, claim): &Entry| [0, 1, 4, 1, 2][claim as usize];
        for (expiry, claim) in [(100, 1), (200, 2), (200, 3), (300, 4)] {
            index.insert((expiry, claim), units(&(expiry, claim)), units);
        }
        // At 200 the holds expiring at 200 are still live (now > expiry
        // is the rule), at 201 they are gone.
        assert_eq!(index.count_before(200), 1);
        assert_eq!(index.count_before(201), 3);
        assert_eq!(index.count_before(i64::MAX), 4);
        assert_eq!(index.count_before(i64::MIN), 0);
        let units = [200, 201, i64::MAX, i64::MIN].map(|at| index.units_before(at, units));
        assert_eq!(units, [1, 6, 8, 0]);
    }
}
