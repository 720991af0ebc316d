//! Byte strings kept once each, with a 64-bit payload, found by their
//! bytes: a campaign's users (the payload says where the user's claims
//! are) and its request ids (the payload is the claim that holds it).
//!
//! Each string lives in a slot of a slab of fixed-size slots, sized by its
//! length to the next 8 bytes: `[payload: 8][length: 1][bytes]`, in pages
//! of `PAGE_SLOTS` slots, a freed slot chained into its class's free list.
//! A string too long for the largest slot class is a boxed slice of its
//! own. A handle (u32) names the class and the slot; an open-addressing
//! table of handles (triangular probing, tombstones) finds a string by its
//! bytes. Every buffer is a `Vec` or a `Box` owned outright: a clone
//! shares nothing, and the bytes on the heap are counted from capacities.

use std::hash::{BuildHasher, RandomState};

use super::heap::{alloc_size, vec_bytes};
use crate::redis::Mover;

/// A string's handle: its class (top 4 bits) and its slot in that class.
pub type Handle = u32;

const CLASS_SHIFT: u32 = 28;
const SLOT_MASK: u32 = (1 << CLASS_SHIFT) - 1;
/// Slot classes 0..BOXED hold strings in slots of 16, 24, ..., 128 bytes.
const SLOT_CLASSES: usize = 15;
/// The class of strings kept boxed one by one.
const BOXED: usize = SLOT_CLASSES;
const PAGE_SLOTS: usize = 256;
/// Slot bytes before the string: the payload and the length.
const HEADER: usize = 9;

const EMPTY: u32 = u32::MAX;
const TOMBSTONE: u32 = u32::MAX - 1;

fn slot_size(class: usize) -> usize {
    16 + 8 * class
}

/// The slot class of a string of `len` bytes, or [`BOXED`].
fn class_of(len: usize) -> usize {
    let slot = (HEADER + len).div_ceil(8) * 8;
    ((slot.max(16) - 16) / 8).min(BOXED)
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SlotClass {
    pages: Vec<Box<[u8]>>,
    /// Slots handed out so far (the next fresh one).
    used: u32,
    /// The first free slot when `live < used` (every slot handed out is
    /// live or free); a free slot's first 4 bytes name the next.
    free: u32,
    live: u32,
}

#[derive(Debug, Clone)]
pub struct Interned {
    /// The slot classes, once a string is kept (an empty set of strings
    /// has no buffer).
    classes: Vec<SlotClass>,
    boxed: Vec<Option<(u64, Box<[u8]>)>>,
    boxed_free: Vec<u32>,
    boxed_bytes: usize,
    table: Vec<u32>,
    len: usize,
    tombstones: usize,
    hasher: RandomState,
}

impl Default for Interned {
    fn default() -> Self {
        Interned {
            classes: Vec::new(),
            boxed: Vec::new(),
            boxed_free: Vec::new(),
            boxed_bytes: 0,
            table: Vec::new(),
            len: 0,
            tombstones: 0,
            hasher: RandomState::new(),
        }
    }
}

impl Interned {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn slot(&self, handle: Handle) -> &[u8] {
        let class = (handle >> CLASS_SHIFT) as usize;
        let index = (handle & SLOT_MASK) as usize;
        let size = slot_size(class);
        let page = &self.classes[class].pages[index / PAGE_SLOTS];
        let at = (index % PAGE_SLOTS) * size;
        &page[at..at + size]
    }

    fn slot_mut(&mut self, handle: Handle) -> &mut [u8] {
        let class = (handle >> CLASS_SHIFT) as usize;
        let index = (handle & SLOT_MASK) as usize;
        let size = slot_size(class);
        let page = &mut self.classes[class].pages[index / PAGE_SLOTS];
        let at = (index % PAGE_SLOTS) * size;
        &mut page[at..at + size]
    }

    fn is_boxed(handle: Handle) -> bool {
        (handle >> CLASS_SHIFT) as usize == BOXED
    }

    fn boxed_entry(&self, handle: Handle) -> &(u64, Box<[u8]>) {
        self.boxed[(handle & SLOT_MASK) as usize]
            .as_ref()
            .expect("a live handle")
    }

    /// The string of `handle`.
    pub fn key(&self, handle: Handle) -> &[u8] {
        if Self::is_boxed(handle) {
            return &self.boxed_entry(handle).1;
        }
        let slot = self.slot(handle);
        &slot[HEADER..HEADER + slot[8] as usize]
    }

    pub fn payload(&self, handle: Handle) -> u64 {
        if Self::is_boxed(handle) {
            return self.boxed_entry(handle).0;
        }
        u64::from_le_bytes(self.slot(handle)[..8].try_into().expect("8 bytes"))
    }

    pub fn set_payload(&mut self, handle: Handle, payload: u64) {
        if Self::is_boxed(handle) {
            let entry = self.boxed[(handle & SLOT_MASK) as usize].as_mut();
            entry.expect("a live handle").0 = payload;
            return;
        }
        self.slot_mut(handle)[..8].copy_from_slice(&payload.to_le_bytes());
    }

    fn hash(&self, key: &[u8]) -> usize {
        self.hasher.hash_one(key) as usize
    }

    /// The table position of `key`'s handle: Ok when found, else Err with
    /// the position a new handle goes to (the first tombstone passed, or
    /// the empty slot that ended the search). The table must not be full.
    fn position(&self, key: &[u8]) -> Result<usize, usize> {
        let mask = self.table.len() - 1;
        let mut at = self.hash(key) & mask;
        let mut free = None;
        for step in 1.. {
            match self.table[at] {
                EMPTY => return Err(free.unwrap_or(at)),
                TOMBSTONE => {
                    free.get_or_insert(at);
                }
                handle if self.key(handle) == key => return Ok(at),
                _ => {}
            }
            at = (at + step) & mask;
        }
        unreachable!("the table always has an empty slot")
    }

    /// The handle of `key`, if it is kept.
    pub fn find(&self, key: &[u8]) -> Option<Handle> {
        if self.table.is_empty() {
            return None;
        }
        self.position(key).ok().map(|at| self.table[at])
    }

    /// Keeps `key` (which must not be kept already) with `payload`.
    pub fn insert(&mut self, key: &[u8], payload: u64) -> Handle {
        if (self.len + self.tombstones + 1) * 8 > self.table.len() * 7 {
            self.rehash();
        }
        let handle = self.store(key, payload);
        let at = self.position(key).expect_err("a new key");
        if self.table[at] == TOMBSTONE {
            self.tombstones -= 1;
        }
        self.table[at] = handle;
        self.len += 1;
        handle
    }

    /// Forgets the string of `handle`.
    pub fn remove(&mut self, handle: Handle) {
        let at = self.position(self.key(handle)).expect("a kept key");
        self.table[at] = TOMBSTONE;
        self.tombstones += 1;
        self.len -= 1;
        self.release(handle);
        if self.len == 0 {
            // Empty: every buffer goes.
            let hasher = self.hasher.clone();
            *self = Interned {
                hasher,
                ..Interned::default()
            };
        }
    }

    /// A table sized for one more string at most 7/8 full, without
    /// tombstones: a rehash of every string, as a growing hash map does.
    fn rehash(&mut self) {
        let mut size = self.table.len().max(8);
        while (self.len + 1) * 8 > size * 7 {
            size *= 2;
        }
        // Room for growth, so that a table full of tombstones at the same
        // size is not rebuilt on every insert.
        if (self.len + 1) * 2 > size {
            size *= 2;
        }
        let old = std::mem::replace(&mut self.table, vec![EMPTY; size]);
        self.tombstones = 0;
        for handle in old {
            if handle != EMPTY && handle != TOMBSTONE {
                let at = self.position(self.key(handle)).expect_err("unique keys");
                self.table[at] = handle;
            }
        }
    }

    fn store(&mut self, key: &[u8], payload: u64) -> Handle {
        let class = class_of(key.len());
        if class == BOXED {
            let entry = Some((payload, Box::<[u8]>::from(key)));
            self.boxed_bytes += alloc_size(key.len());
            let index = match self.boxed_free.pop() {
                Some(index) => {
                    self.boxed[index as usize] = entry;
                    index
                }
                None => {
                    self.boxed.push(entry);
                    (self.boxed.len() - 1) as u32
                }
            };
            return (BOXED as u32) << CLASS_SHIFT | index;
        }
        let size = slot_size(class);
        if self.classes.is_empty() {
            self.classes = vec![SlotClass::default(); SLOT_CLASSES];
        }
        let slots = &mut self.classes[class];
        let index = if slots.live < slots.used {
            let index = slots.free;
            let page = &slots.pages[index as usize / PAGE_SLOTS];
            let at = (index as usize % PAGE_SLOTS) * size;
            slots.free = u32::from_le_bytes(page[at..at + 4].try_into().expect("4 bytes"));
            index
        } else {
            if slots.used as usize == slots.pages.len() * PAGE_SLOTS {
                slots.pages.push(vec![0; size * PAGE_SLOTS].into());
            }
            slots.used += 1;
            slots.used - 1
        };
        slots.live += 1;
        assert!(index <= SLOT_MASK, "too many strings of one size");
        let handle = (class as u32) << CLASS_SHIFT | index;
        let slot = self.slot_mut(handle);
        slot[..8].copy_from_slice(&payload.to_le_bytes());
        slot[8] = key.len() as u8;
        slot[HEADER..HEADER + key.len()].copy_from_slice(key);
        handle
    }

    fn release(&mut self, handle: Handle) {
        let index = handle & SLOT_MASK;
        if Self::is_boxed(handle) {
            let (_, key) = self.boxed[index as usize].take().expect("a live handle");
            self.boxed_bytes -= alloc_size(key.len());
            self.boxed_free.push(index);
            return;
        }
        let class = (handle >> CLASS_SHIFT) as usize;
        let next = self.classes[class].free;
        self.slot_mut(handle)[..4].copy_from_slice(&next.to_le_bytes());
        let slots = &mut self.classes[class];
        slots.free = index;
        slots.live -= 1;
        if slots.live == 0 {
            *slots = SlotClass::default();
        }
    }

    /// Every kept string's handle, in no particular order.
    #[cfg(test)]
    fn handles(&self) -> impl Iterator<Item = Handle> + '_ {
        self.table
            .iter()
            .copied()
            .filter(|&h| h != EMPTY && h != TOMBSTONE)
    }

    /// Heap bytes, for MEMORY USAGE: O(1) but for the classes' page lists.
    pub fn heap_bytes(&self) -> usize {
        let pages: usize = self
            .classes
            .iter()
            .enumerate()
            .map(|(class, slots)| {
                vec_bytes::<Box<[u8]>>(slots.pages.capacity())
                    + slots.pages.len() * alloc_size(slot_size(class) * PAGE_SLOTS)
            })
            .sum();
        pages
            + vec_bytes::<SlotClass>(self.classes.capacity())
            + vec_bytes::<u32>(self.table.capacity())
            + vec_bytes::<Option<(u64, Box<[u8]>)>>(self.boxed.capacity())
            + vec_bytes::<u32>(self.boxed_free.capacity())
            + self.boxed_bytes
    }

    /// Shows every buffer to `mover`: the classes and their pages, the
    /// long strings, the table.
    pub fn defrag(&mut self, mover: &mut Mover) {
        mover.vec(&mut self.classes);
        for class in &mut self.classes {
            mover.vec(&mut class.pages);
            for page in &mut class.pages {
                mover.boxed_slice(page);
            }
        }
        mover.vec(&mut self.boxed);
        for (_, long) in self.boxed.iter_mut().flatten() {
            mover.boxed_slice(long);
        }
        mover.vec(&mut self.boxed_free);
        mover.vec(&mut self.table);
    }

    /// Allocations, for the lazyfree decision.
    pub fn allocations(&self) -> usize {
        let pages: usize = self.classes.iter().map(|c| c.pages.len()).sum();
        pages + self.boxed.len() - self.boxed_free.len() + 2
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn agrees_with_a_hash_map_over_random_operations() {
        let mut kept = Interned::default();
        let mut plain: HashMap<Vec<u8>, (Handle, u64)> = HashMap::new();
        let mut rng = crate::xorshift::Xorshift::new(0x2545_f491_4f6c_dd1du64);
        let mut next = || rng.next();
        for round in 0..30_000u64 {
            let n = next();
            // Lengths across every slot class and the boxed one.
            let len = 1 + (n % 7 == 0) as usize * (n as usize >> 8) % 300 + (n >> 20) as usize % 12;
            let key: Vec<u8> = (0..len)
                .map(|i| (n >> (i % 8 * 8)) as u8 ^ i as u8)
                .collect();
            let key = if n % 3 == 0 { key[..1].to_vec() } else { key };
            match plain.get(&key).copied() {
                Some((handle, payload)) => {
                    assert_eq!(kept.find(&key), Some(handle));
                    assert_eq!(kept.payload(handle), payload);
                    assert_eq!(kept.key(handle), &key[..]);
                    if n % 2 == 0 {
                        kept.remove(handle);
                        plain.remove(&key);
                        assert_eq!(kept.find(&key), None);
                    } else {
                        kept.set_payload(handle, round);
                        plain.insert(key, (handle, round));
                    }
                }
                None => {
                    assert_eq!(kept.find(&key), None);
                    let handle = kept.insert(&key, round);
                    plain.insert(key, (handle, round));
                }
            }
            assert_eq!(kept.len(), plain.len());
        }
        assert_eq!(kept.handles().count(), plain.len());
        for (key, (handle, payload)) in &plain {
            assert_eq!(kept.find(key), Some(*handle));
            assert_eq!(
                (kept.key(*handle), kept.payload(*handle)),
                (&key[..], *payload)
            );
        }
        let copy = kept.clone();
        for (key, (handle, _)) in &plain {
            assert_eq!(copy.find(key), Some(*handle));
            assert_ne!(copy.key(*handle).as_ptr(), kept.key(*handle).as_ptr());
        }
        for (_, (handle, _)) in plain.drain() {
            kept.remove(handle);
        }
        assert!(kept.is_empty());
        assert_eq!(kept.heap_bytes(), 0);
    }

    #[test]
    fn a_short_string_takes_one_slot_of_its_size() {
        assert_eq!(class_of(0), 0);
        assert_eq!(class_of(7), 0);
        assert_eq!(slot_size(class_of(10)), 24);
        assert_eq!(slot_size(class_of(21)), 32);
        assert_eq!(slot_size(class_of(119)), 128);
        assert_eq!(class_of(120), BOXED);
    }
}
