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
//!
//! The table grows as Redis's dict does, a few entries per operation: a
//! full table is kept beside its larger successor while every insert and
//! remove moves the next [`MOVES_PER_OPERATION`] slots of it over, so no
//! call rehashes a large campaign's strings at once (a stall of ~0.5 s at a
//! million), and lookups search both tables meanwhile.

use std::hash::{BuildHasher, RandomState};

use super::chunked::Chunked;
use super::heap::{alloc_size, vec_bytes};
use crate::redis::Mover;
use crate::stats;

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

/// A table slot holds a handle inverted (`!handle`), so that an empty slot
/// is 0 and a new table is zeroed memory, which the allocator hands out
/// without writing it (calloc), as Redis's dict gets its tables; handles
/// `u32::MAX` and `u32::MAX - 1` are never made (see [`Interned::store`]).
const EMPTY: u32 = 0;
const TOMBSTONE: u32 = 1;

/// Slots of the table being replaced that each insert and remove moves to
/// its successor. A successor starts at most half full and fills to at
/// most 3/4 before the move ends (a table of `s` slots is moved in `s / 4`
/// operations, each adding at most one string to a successor of `2s`
/// slots or more), below the 7/8 that would make it grow again.
const MOVES_PER_OPERATION: usize = 4;

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
    /// The long strings, and their free slots, in chunks: growing them
    /// copies no more than a chunk in one call.
    boxed: Chunked<Option<(u64, Box<[u8]>)>>,
    boxed_free: Chunked<u32>,
    boxed_bytes: usize,
    /// Where new strings go.
    table: Vec<u32>,
    len: usize,
    /// Tombstones of `table`.
    tombstones: usize,
    /// While `table` grows: its predecessor, whose strings are not all
    /// moved over yet.
    draining: Option<Draining>,
    /// While a load builds the strings ([`Interned::start_load`]): each
    /// slot's hash (its low 32 bits), so that a search compares hashes
    /// before it reads a string and growth moves strings without reading
    /// them. Never kept past the load (nothing else sees it: no memory
    /// counted, no defrag).
    load_hashes: Option<Box<[u32]>>,
    hasher: RandomState,
    /// Entries moved by the last insert or remove (checks).
    #[cfg(test)]
    moved_by_last_operation: usize,
}

/// A table being emptied into its successor, from slot 0 up.
#[derive(Debug, Clone)]
struct Draining {
    table: Vec<u32>,
    /// The next slot to move; every slot below it has moved.
    next: usize,
}

impl Default for Interned {
    fn default() -> Self {
        Interned {
            classes: Vec::new(),
            boxed: Chunked::default(),
            boxed_free: Chunked::default(),
            boxed_bytes: 0,
            table: Vec::new(),
            len: 0,
            tombstones: 0,
            draining: None,
            load_hashes: None,
            hasher: RandomState::new(),
            #[cfg(test)]
            moved_by_last_operation: 0,
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

    /// The position of `key`'s handle in `table` (hashed to `hash`): Ok
    /// when found, else Err with the position a new handle goes to (the
    /// first tombstone passed, or the empty slot that ended the search).
    /// The table must not be full.
    fn position(&self, table: &[u32], hash: usize, key: &[u8]) -> Result<usize, usize> {
        let mask = table.len() - 1;
        let mut at = hash & mask;
        let mut free = None;
        for step in 1.. {
            match table[at] {
                EMPTY => return Err(free.unwrap_or(at)),
                TOMBSTONE => {
                    free.get_or_insert(at);
                }
                slot if self.key(!slot) == key => return Ok(at),
                _ => {}
            }
            at = (at + step) & mask;
        }
        unreachable!("the table always has an empty slot")
    }

    /// Where a string hashed to `hash` that `table` does not hold goes:
    /// the position [`Interned::position`] would give it (the first
    /// tombstone passed, or the empty slot that ends the search), found
    /// without comparing a string (each comparison reads a slot of the
    /// slab: a cache miss on a large table). For moves, whose strings are
    /// unique. The table must not be full.
    fn vacancy(table: &[u32], hash: usize) -> usize {
        let mask = table.len() - 1;
        let mut at = hash & mask;
        let mut free = None;
        for step in 1.. {
            match table[at] {
                EMPTY => return free.unwrap_or(at),
                TOMBSTONE => {
                    free.get_or_insert(at);
                }
                _ => {}
            }
            at = (at + step) & mask;
        }
        unreachable!("the table always has an empty slot")
    }

    /// Where `handle` (its string hashed to `hash`) is in `table`, found
    /// by comparing handles, never reading a string.
    fn slot_of(table: &[u32], hash: usize, handle: Handle) -> Option<usize> {
        if table.is_empty() {
            return None;
        }
        let mask = table.len() - 1;
        let mut at = hash & mask;
        for step in 1.. {
            match table[at] {
                EMPTY => return None,
                slot if slot == !handle => return Some(at),
                _ => {}
            }
            at = (at + step) & mask;
        }
        unreachable!("the table always has an empty slot")
    }

    /// Where `key`'s handle is: in `table` (false) or in the draining
    /// table (true), and at which position.
    fn locate(&self, key: &[u8]) -> Option<(bool, usize)> {
        if self.len == 0 {
            return None;
        }
        let hash = self.hash(key);
        if let Ok(at) = self.position(&self.table, hash, key) {
            return Some((false, at));
        }
        let draining = self.draining.as_ref()?;
        let at = self.position(&draining.table, hash, key).ok()?;
        Some((true, at))
    }

    /// The handle of `key`, if it is kept.
    pub fn find(&self, key: &[u8]) -> Option<Handle> {
        let (in_draining, at) = self.locate(key)?;
        let table = match &self.draining {
            Some(draining) if in_draining => &draining.table,
            _ => &self.table,
        };
        Some(!table[at])
    }

    /// The handle of `key`, and whether it is new: kept now with
    /// `payload` when it was not. One search finds it or its place.
    pub fn find_or_insert(&mut self, key: &[u8], payload: u64) -> (Handle, bool) {
        if self.load_hashes.is_some() {
            return self.find_or_insert_loading(key, payload);
        }
        self.move_some();
        if self.draining.is_none() && (self.len + self.tombstones + 1) * 8 > self.table.len() * 7 {
            self.grow();
        }
        debug_assert!((self.len + self.tombstones + 1) * 8 <= self.table.len() * 7);
        let hash = self.hash(key);
        let at = match self.position(&self.table, hash, key) {
            Ok(at) => return (!self.table[at], false),
            Err(at) => at,
        };
        if let Some(draining) = &self.draining {
            if let Ok(old) = self.position(&draining.table, hash, key) {
                return (!draining.table[old], false);
            }
        }
        let handle = self.store(key, payload);
        if self.table[at] == TOMBSTONE {
            self.tombstones -= 1;
        }
        self.table[at] = !handle;
        self.len += 1;
        (handle, true)
    }

    /// Keeps the hashes of the table's slots until [`Interned::end_load`]:
    /// for a load, which builds the whole set of strings in one step (a
    /// table grows at once then, never a few slots per operation). Searches
    /// and growth then read no string but the ones whose hash matches;
    /// tables end as large as inserting one by one makes them.
    pub fn start_load(&mut self) {
        self.settle();
        if self.table.len() <= 1 << 32 {
            let mut hashes = vec![0; self.table.len()].into_boxed_slice();
            for (at, &slot) in self.table.iter().enumerate() {
                if slot != EMPTY && slot != TOMBSTONE {
                    hashes[at] = self.hash(self.key(!slot)) as u32;
                }
            }
            self.load_hashes = Some(hashes);
        }
    }

    /// Ends what [`Interned::start_load`] began: the hashes go.
    pub fn end_load(&mut self) {
        self.load_hashes = None;
    }

    /// [`Interned::find_or_insert`] while loading: the table grows at once
    /// when it must, and a slot's string is read only when its hash is
    /// `key`'s.
    fn find_or_insert_loading(&mut self, key: &[u8], payload: u64) -> (Handle, bool) {
        if (self.len + self.tombstones + 1) * 8 > self.table.len() * 7 {
            self.grow_loading();
        }
        let Some(hashes) = self.load_hashes.as_deref() else {
            // Grown past what the hashes place: the usual way.
            return self.find_or_insert(key, payload);
        };
        let hash = self.hash(key) as u32;
        let mask = self.table.len() - 1;
        let mut at = hash as usize & mask;
        let mut free = None;
        for step in 1.. {
            match self.table[at] {
                EMPTY => break,
                TOMBSTONE => {
                    free.get_or_insert(at);
                }
                slot if hashes[at] == hash && self.key(!slot) == key => {
                    return (!slot, false);
                }
                _ => {}
            }
            at = (at + step) & mask;
        }
        let at = free.unwrap_or(at);
        let handle = self.store(key, payload);
        if self.table[at] == TOMBSTONE {
            self.tombstones -= 1;
        }
        self.table[at] = !handle;
        if let Some(hashes) = self.load_hashes.as_deref_mut() {
            hashes[at] = hash;
        }
        self.len += 1;
        (handle, true)
    }

    /// [`Interned::grow`] while loading: the same new size, every string
    /// moved at once by its kept hash, none read.
    fn grow_loading(&mut self) {
        let mut size = self.table.len().max(8);
        while (self.len + 1) * 2 > size {
            size *= 2;
        }
        if size > 1 << 32 {
            // Beyond what 32 bits of hash place: the usual growth.
            self.end_load();
            self.grow();
            self.settle();
            return;
        }
        let old = std::mem::replace(&mut self.table, vec![EMPTY; size]);
        let old_hashes = std::mem::replace(
            self.load_hashes.as_mut().expect("loading"),
            vec![0; size].into_boxed_slice(),
        );
        self.tombstones = 0;
        let hashes = self.load_hashes.as_deref_mut().expect("loading");
        for (&slot, &hash) in old.iter().zip(old_hashes.iter()) {
            if slot == EMPTY || slot == TOMBSTONE {
                continue;
            }
            let at = Self::vacancy(&self.table, hash as usize);
            self.table[at] = slot;
            hashes[at] = hash;
        }
    }

    /// Forgets the string of `handle`.
    pub fn remove(&mut self, handle: Handle) {
        // A load only adds; should one remove, it ends.
        self.end_load();
        self.move_some();
        let hash = self.hash(self.key(handle));
        match Self::slot_of(&self.table, hash, handle) {
            Some(at) => {
                self.table[at] = TOMBSTONE;
                self.tombstones += 1;
            }
            None => {
                // Its table is going: the tombstone is never counted.
                let draining = self.draining.as_mut().expect("a draining table");
                let at = Self::slot_of(&draining.table, hash, handle).expect("a kept key");
                draining.table[at] = TOMBSTONE;
            }
        }
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

    /// Starts replacing the table with one sized for one more string at
    /// most half full, without tombstones (the same size when tombstones
    /// filled it): its strings move over a few per operation.
    fn grow(&mut self) {
        let mut size = self.table.len().max(8);
        while (self.len + 1) * 2 > size {
            size *= 2;
        }
        // Zeroed, so the allocator need not write it (see EMPTY).
        let old = std::mem::replace(&mut self.table, vec![EMPTY; size]);
        self.tombstones = 0;
        if self.len > 0 {
            self.draining = Some(Draining {
                table: old,
                next: 0,
            });
        }
    }

    /// Moves the next [`MOVES_PER_OPERATION`] slots of the draining table
    /// to the table, and drops it once all are moved.
    fn move_some(&mut self) {
        let Some(mut draining) = self.draining.take() else {
            #[cfg(test)]
            {
                self.moved_by_last_operation = 0;
            }
            return;
        };
        let end = (draining.next + MOVES_PER_OPERATION).min(draining.table.len());
        let mut moved = 0;
        for slot in &mut draining.table[draining.next..end] {
            if *slot == EMPTY || *slot == TOMBSTONE {
                continue;
            }
            let at = Self::vacancy(&self.table, self.hash(self.key(!*slot)));
            self.table[at] = *slot;
            // Lookups still search the draining table: it must not find
            // the handle there once it may be removed from here.
            *slot = TOMBSTONE;
            moved += 1;
        }
        draining.next = end;
        if end < draining.table.len() {
            self.draining = Some(draining);
        }
        stats::COUPON_REHASH_MAX_MOVED.raise_to(moved);
        #[cfg(test)]
        {
            self.moved_by_last_operation = moved as usize;
        }
    }

    /// Ends a growth under way now: moves every string left in the
    /// draining table at once. For a load, which builds a whole value in
    /// one step anyway; not counted as an operation's moves
    /// (`coupon_rehash_max_moved` is about calls).
    fn settle(&mut self) {
        let Some(draining) = self.draining.take() else {
            return;
        };
        for &slot in &draining.table[draining.next..] {
            if slot == EMPTY || slot == TOMBSTONE {
                continue;
            }
            let at = Self::vacancy(&self.table, self.hash(self.key(!slot)));
            self.table[at] = slot;
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
            return Self::handle_of(BOXED, index);
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
        let handle = Self::handle_of(class, index);
        let slot = self.slot_mut(handle);
        slot[..8].copy_from_slice(&payload.to_le_bytes());
        slot[8] = key.len() as u8;
        slot[HEADER..HEADER + key.len()].copy_from_slice(key);
        handle
    }

    /// The handle of slot `index` of `class`: the last two of the boxed
    /// class are never made, their inverses are EMPTY and TOMBSTONE.
    fn handle_of(class: usize, index: u32) -> Handle {
        assert!(index <= SLOT_MASK, "too many strings of one size");
        let handle = (class as u32) << CLASS_SHIFT | index;
        assert!(!handle > TOMBSTONE, "too many long strings");
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
        let draining = self.draining.iter().flat_map(|d| d.table.iter());
        self.table
            .iter()
            .chain(draining)
            .filter(|&&slot| slot != EMPTY && slot != TOMBSTONE)
            .map(|&slot| !slot)
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
            + self
                .draining
                .as_ref()
                .map_or(0, |d| vec_bytes::<u32>(d.table.capacity()))
            + self.boxed.heap_bytes()
            + self.boxed_free.heap_bytes()
            + self.boxed_bytes
    }

    /// Shows every buffer to `mover`: the classes and their pages, the
    /// long strings, the tables.
    pub fn defrag(&mut self, mover: &mut Mover) {
        mover.vec(&mut self.classes);
        for class in &mut self.classes {
            mover.vec(&mut class.pages);
            for page in &mut class.pages {
                mover.boxed_slice(page);
            }
        }
        self.boxed.defrag(mover);
        for (_, long) in self.boxed.iter_mut().flatten() {
            mover.boxed_slice(long);
        }
        self.boxed_free.defrag(mover);
        mover.vec(&mut self.table);
        if let Some(draining) = &mut self.draining {
            mover.vec(&mut draining.table);
        }
    }

    /// Allocations, for the lazyfree decision.
    pub fn allocations(&self) -> usize {
        let pages: usize = self.classes.iter().map(|c| c.pages.len()).sum();
        pages + self.boxed.len() - self.boxed_free.len() + 2 + self.draining.is_some() as usize
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// A load's table (hashes kept, grown at once) finds what it holds,
    /// ends as large as one filled by single inserts, and goes on as
    /// usual after the load; a string seen twice is found, not added.
    #[test]
    fn a_load_builds_the_table_single_inserts_build() {
        for n in [0usize, 1, 7, 8, 100, 5_000, 60_000] {
            let mut one_by_one = Interned::default();
            let mut loaded = Interned::default();
            loaded.start_load();
            for i in 0..n {
                let key = format!("user-{i}");
                assert!(one_by_one.find_or_insert(key.as_bytes(), i as u64).1);
                assert!(loaded.find_or_insert(key.as_bytes(), i as u64).1);
                if i % 7 == 0 {
                    let (handle, new) = loaded.find_or_insert(key.as_bytes(), 0);
                    assert!(!new);
                    assert_eq!(loaded.payload(handle), i as u64);
                }
            }
            loaded.end_load();
            assert!(loaded.draining.is_none() && loaded.load_hashes.is_none());
            one_by_one.settle();
            assert_eq!(loaded.table.len(), one_by_one.table.len(), "{n}");
            assert_eq!(loaded.len(), n);
            for i in 0..n {
                let handle = loaded.find(format!("user-{i}").as_bytes()).unwrap();
                assert_eq!(loaded.payload(handle), i as u64);
            }
            assert!(loaded.find(b"nobody").is_none());
            for i in (0..n).step_by(2) {
                let handle = loaded.find(format!("user-{i}").as_bytes()).unwrap();
                loaded.remove(handle);
            }
            for i in 0..n {
                assert_eq!(
                    loaded.find(format!("user-{i}").as_bytes()).is_some(),
                    i % 2 == 1
                );
            }
        }
    }

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
                    let (handle, new) = kept.find_or_insert(&key, round);
                    assert!(new);
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

    /// Growing the table moves a few entries per operation, never the
    /// whole table in one (the table that held a million strings took
    /// 917,504 moves in one insert), and every string stays found while
    /// both tables are kept.
    #[test]
    fn no_operation_moves_more_than_a_few_entries() {
        let mut kept = Interned::default();
        let mut most = 0;
        let mut grew = 0;
        for n in 0..1_000_000u64 {
            let key = n.to_le_bytes();
            kept.find_or_insert(&key, n);
            most = most.max(kept.moved_by_last_operation);
            if n % 9_973 == 0 {
                assert_eq!(kept.find(&key).map(|h| kept.payload(h)), Some(n));
            }
            if n % 3 == 0 {
                // Removes move entries too, and may meet either table.
                let earlier = (n / 2).to_le_bytes();
                if let Some(handle) = kept.find(&earlier) {
                    kept.remove(handle);
                    most = most.max(kept.moved_by_last_operation);
                }
            }
            grew += kept.draining.is_some() as usize;
        }
        assert!(grew > 0, "the table grew while strings came in");
        assert!(
            most <= MOVES_PER_OPERATION,
            "one operation moved {most} entries"
        );
        assert_eq!(kept.handles().count(), kept.len());
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
