//! The units of the claims that hold more than one, by claim number: a
//! claim of 1 unit (every claim of a campaign that never says QTY) costs
//! nothing here, so units add no byte to it. Sorted blocks of
//! (claim, units), 16 bytes an entry; claims arrive in number order, so
//! an entry is appended.

use super::expiry::SortedBlocks;
use crate::redis::Mover;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Units(SortedBlocks<(u64, u64)>);

impl Units {
    /// The units of claim `claim` (stored or not: 1 unless noted here).
    pub fn of(&self, claim: u64) -> u64 {
        if self.0.is_empty() {
            return 1;
        }
        match self.0.first_from(&(claim, 0)) {
            Some((found, units)) if found == claim => units,
            _ => 1,
        }
    }

    /// Claim `claim` of `from` units now has `to` (1 when it goes).
    pub fn set(&mut self, claim: u64, from: u64, to: u64) {
        if from == to {
            return;
        }
        if from > 1 {
            self.0.remove((claim, from), 1);
        }
        if to > 1 {
            self.0.insert((claim, to), 1, |_| 1);
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }

    pub fn allocations(&self) -> usize {
        self.0.allocations()
    }

    pub fn defrag(&mut self, mover: &mut Mover) {
        self.0.defrag(mover);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_claims_of_more_than_one_unit_are_kept() {
        let mut units = Units::default();
        assert_eq!(units.of(7), 1);
        units.set(7, 1, 4);
        units.set(9, 1, 2);
        units.set(8, 1, 1);
        assert_eq!([6, 7, 8, 9, 10].map(|c| units.of(c)), [1, 4, 1, 2, 1]);
        units.set(7, 4, 1);
        units.set(9, 2, 3);
        assert_eq!([7, 9].map(|c| units.of(c)), [1, 3]);
        units.set(9, 3, 1);
        assert_eq!(units, Units::default());
        assert_eq!(units.heap_bytes(), Units::default().heap_bytes());
    }
}
