//! The held claims ordered by expiry, answering "how many have expired by
//! now" exactly without touching them, and "which expired first" for the
//! amortised reclaim.
//!
//! Sorted blocks of at most `BLOCK` entries: insert and remove are a binary
//! search and a short shift inside one block; counting walks the blocks
//! (n / BLOCK lengths, about 2,000 additions for a million holds) and
//! searches one. Holds mostly arrive in expiry order, so inserts land at
//! the end.

const BLOCK: usize = 512;

/// One hold: (expires_at_ms, claim number).
pub type Entry = (i64, u64);

#[derive(Debug, Clone, Default)]
pub struct ExpiryIndex {
    blocks: Vec<Vec<Entry>>,
    len: usize,
}

/// Equal when they hold the same entries, however the blocks fell.
impl PartialEq for ExpiryIndex {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for ExpiryIndex {}

impl ExpiryIndex {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The block that holds (or would hold) `entry`: the first whose last
    /// entry is not below it, else the last block.
    fn block_for(&self, entry: &Entry) -> usize {
        let index = self
            .blocks
            .partition_point(|block| block.last().is_some_and(|last| last < entry));
        index.min(self.blocks.len().saturating_sub(1))
    }

    pub fn insert(&mut self, entry: Entry) {
        if self.blocks.is_empty() {
            // A user's own index mostly holds one entry: room for one, and
            // grown by doubling from there.
            self.blocks.reserve_exact(1);
            self.blocks.push(Vec::with_capacity(1));
        }
        let index = self.block_for(&entry);
        let block = &mut self.blocks[index];
        let at = block.partition_point(|e| e < &entry);
        block.insert(at, entry);
        self.len += 1;
        if block.len() > BLOCK {
            let upper = block.split_off(BLOCK / 2);
            self.blocks.insert(index + 1, upper);
        }
    }

    /// Removes `entry`; false when it was not there.
    pub fn remove(&mut self, entry: Entry) -> bool {
        if self.blocks.is_empty() {
            return false;
        }
        let index = self.block_for(&entry);
        let block = &mut self.blocks[index];
        match block.binary_search(&entry) {
            Ok(at) => {
                block.remove(at);
                if block.is_empty() {
                    self.blocks.remove(index);
                }
                self.len -= 1;
                true
            }
            Err(_) => false,
        }
    }

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

    /// Every entry, in order (for checks and serialisation).
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.blocks.iter().flatten()
    }

    /// Heap bytes, for MEMORY USAGE.
    pub fn heap_bytes(&self) -> usize {
        self.blocks.capacity() * std::mem::size_of::<Vec<Entry>>()
            + self
                .blocks
                .iter()
                .map(|b| b.capacity() * std::mem::size_of::<Entry>())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same operations on a plain sorted vector.
    #[test]
    fn agrees_with_a_sorted_vector_over_random_operations() {
        let mut index = ExpiryIndex::default();
        let mut plain: Vec<Entry> = Vec::new();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for claim in 0..20_000u64 {
            let roll = next() % 10;
            if roll < 6 || plain.is_empty() {
                let entry = ((next() % 5_000) as i64, claim);
                index.insert(entry);
                let at = plain.partition_point(|e| e < &entry);
                plain.insert(at, entry);
            } else {
                let victim = plain.remove((next() as usize) % plain.len());
                assert!(index.remove(victim));
                assert!(!index.remove(victim));
            }
            let at = (next() % 5_200) as i64;
            assert_eq!(index.count_before(at), plain.partition_point(|e| e.0 < at));
            assert!(index
                .iter_from(at)
                .copied()
                .eq(plain.iter().copied().filter(|e| e.0 >= at)));
            assert_eq!(index.len(), plain.len());
        }
        assert!(index.iter().copied().eq(plain.iter().copied()));
        assert!(index
            .blocks
            .iter()
            .all(|b| !b.is_empty() && b.len() <= BLOCK));
    }

    #[test]
    fn counts_what_has_expired_by_now() {
        let mut index = ExpiryIndex::default();
        for (expiry, claim) in [(100, 1), (200, 2), (200, 3), (300, 4)] {
            index.insert((expiry, claim));
        }
        // At 200 the holds expiring at 200 are still live (now > expiry
        // is the rule), at 201 they are gone.
        assert_eq!(index.count_before(200), 1);
        assert_eq!(index.count_before(201), 3);
        assert_eq!(index.count_before(i64::MAX), 4);
        assert_eq!(index.count_before(i64::MIN), 0);
    }
}
