//! A vector kept in chunks of at most [`CHUNK_BYTES`], for a campaign's
//! arrays of one element per user or per string (the users' own indexes,
//! long strings, their free lists): growing one never copies more than a
//! chunk, where a `Vec` doubles its whole buffer in one push (a campaign
//! whose 262,144th user took a second claim copied 40 MB of trees in that
//! one call, 32 ms).
//!
//! Every chunk but the last is full; the first grows by doubling up to a
//! chunk (a few elements take one small allocation), later ones are made
//! whole. The list of chunks still doubles, but it has one pointer per
//! chunk: 24 bytes for every 64 KiB of elements.

use super::heap::vec_bytes;
use crate::redis::Mover;

/// The most bytes of elements a chunk holds.
pub const CHUNK_BYTES: usize = 64 * 1024;

#[derive(Debug)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
    /// Heap bytes of the chunks (not of `chunks` itself).
    chunk_bytes: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
            chunk_bytes: 0,
        }
    }
}

/// A clone's chunks hold their elements and no more (`Vec::clone`), so
/// their bytes are counted anew: a COPY's MEMORY USAGE is its own.
impl<T: Clone> Clone for Chunked<T> {
    fn clone(&self) -> Self {
        let chunks = self.chunks.clone();
        let chunk_bytes = chunks.iter().map(|c| vec_bytes::<T>(c.capacity())).sum();
        Chunked {
            chunks,
            len: self.len,
            chunk_bytes,
        }
    }
}

impl<T> Chunked<T> {
    /// Elements a chunk holds.
    const PER_CHUNK: usize = {
        let size = std::mem::size_of::<T>();
        if size == 0 || size >= CHUNK_BYTES {
            1
        } else {
            CHUNK_BYTES / size
        }
    };

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, value: T) {
        if self
            .chunks
            .last()
            .is_none_or(|c| c.len() == Self::PER_CHUNK)
        {
            // The first chunk grows from one element, later ones are
            // made whole: the elements before them filled a chunk.
            let capacity = if self.chunks.is_empty() {
                1
            } else {
                Self::PER_CHUNK
            };
            self.chunks.push(Vec::with_capacity(capacity));
            self.chunk_bytes += vec_bytes::<T>(capacity);
        }
        let chunk = self.chunks.last_mut().expect("a chunk");
        if chunk.len() == chunk.capacity() {
            let before = vec_bytes::<T>(chunk.capacity());
            let grown = (chunk.capacity() * 2).clamp(1, Self::PER_CHUNK);
            chunk.reserve_exact(grown - chunk.len());
            self.chunk_bytes = self.chunk_bytes - before + vec_bytes::<T>(chunk.capacity());
        }
        chunk.push(value);
        self.len += 1;
    }

    /// Takes the last element; a chunk emptied goes.
    pub fn pop(&mut self) -> Option<T> {
        let chunk = self.chunks.last_mut()?;
        let value = chunk.pop()?;
        self.len -= 1;
        if chunk.is_empty() {
            self.chunk_bytes -= vec_bytes::<T>(chunk.capacity());
            self.chunks.pop();
            if self.chunks.len() * 4 <= self.chunks.capacity() {
                self.chunks.shrink_to(self.chunks.len() * 2);
            }
        }
        Some(value)
    }

    pub fn get(&self, index: usize) -> Option<&T> {
        self.chunks
            .get(index / Self::PER_CHUNK)?
            .get(index % Self::PER_CHUNK)
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        self.chunks
            .get_mut(index / Self::PER_CHUNK)?
            .get_mut(index % Self::PER_CHUNK)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.chunks.iter_mut().flatten()
    }

    /// Heap bytes, for MEMORY USAGE: O(1).
    pub fn heap_bytes(&self) -> usize {
        vec_bytes::<Vec<T>>(self.chunks.capacity()) + self.chunk_bytes
    }

    /// Shows the list of chunks, then each chunk, to `mover` (the
    /// elements' own buffers are the caller's).
    pub fn defrag(&mut self, mover: &mut Mover) {
        mover.vec(&mut self.chunks);
        for chunk in &mut self.chunks {
            mover.vec(chunk);
        }
    }

    /// Allocations, for the lazyfree decision.
    pub fn allocations(&self) -> usize {
        self.chunks.len() + 1
    }
}

impl<T> std::ops::Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        self.get(index).expect("an index below the length")
    }
}

impl<T> std::ops::IndexMut<usize> for Chunked<T> {
    fn index_mut(&mut self, index: usize) -> &mut T {
        self.get_mut(index).expect("an index below the length")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same pushes, pops and writes on a plain vector; the bytes kept
    /// are the chunks' capacities.
    #[test]
    fn agrees_with_a_vector_over_random_operations() {
        let mut chunked = Chunked::<[u64; 5]>::default();
        let mut plain: Vec<[u64; 5]> = Vec::new();
        let mut rng = crate::xorshift::Xorshift::new(0x2545_f491_4f6c_dd1du64);
        let mut next = || rng.next();
        for round in 0..200_000u64 {
            match next() % 10 {
                0..=5 => {
                    chunked.push([round; 5]);
                    plain.push([round; 5]);
                }
                6..=8 => assert_eq!(chunked.pop(), plain.pop()),
                _ if !plain.is_empty() => {
                    let at = next() as usize % plain.len();
                    chunked[at][1] = round;
                    plain[at][1] = round;
                }
                _ => {}
            }
            assert_eq!(chunked.len(), plain.len());
            let probe = next() as usize % (plain.len() + 2);
            assert_eq!(chunked.get(probe), plain.get(probe));
        }
        assert!(chunked.iter().eq(plain.iter()));
        let walked: usize = chunked
            .chunks
            .iter()
            .map(|c| vec_bytes::<[u64; 5]>(c.capacity()))
            .sum();
        assert_eq!(chunked.chunk_bytes, walked);
        let copy = chunked.clone();
        assert!(copy.iter().eq(plain.iter()));
        while chunked.pop().is_some() {}
        assert_eq!(chunked.heap_bytes(), 0);
    }

    /// Every chunk but the last is full and no larger than a chunk, so an
    /// element is where its index says.
    #[test]
    fn chunks_fill_in_order() {
        let mut chunked = Chunked::<u32>::default();
        let per = Chunked::<u32>::PER_CHUNK;
        for n in 0..(per * 3 + 7) as u32 {
            chunked.push(n);
        }
        let (last, full) = chunked.chunks.split_last().unwrap();
        assert!(full.iter().all(|c| c.len() == per && c.capacity() == per));
        assert_eq!(last.len(), 7);
        assert_eq!(vec_bytes::<u32>(per), CHUNK_BYTES);
        assert_eq!(chunked[per * 2 + 3], (per * 2 + 3) as u32);
    }
}
