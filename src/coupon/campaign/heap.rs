//! What an allocation of `n` bytes really takes: the size class jemalloc
//! (Redis's allocator, whose usable sizes `used_memory` sums) rounds it up
//! to. MEMORY USAGE of a campaign is computed from its buffers' capacities
//! with this, so it follows the real memory rather than the bytes asked.

/// jemalloc's size class of an `n`-byte request: 8, then multiples of 16
/// up to 128, then four classes per doubling (160, 192, 224, 256, 320, ...).
pub fn alloc_size(n: usize) -> usize {
    match n {
        0 => 0,
        1..=8 => 8,
        9..=128 => n.div_ceil(16) * 16,
        _ => {
            let spacing = 1usize << ((usize::BITS - 1 - (n - 1).leading_zeros()) - 2);
            n.div_ceil(spacing) * spacing
        }
    }
}

/// What a `Vec<T>` of capacity `capacity` holds on the heap.
pub fn vec_bytes<T>(capacity: usize) -> usize {
    alloc_size(capacity * std::mem::size_of::<T>())
}

#[cfg(test)]
mod tests {
    use super::alloc_size;

    #[test]
    fn rounds_to_jemallocs_size_classes() {
        let classes = [
            (0, 0),
            (1, 8),
            (8, 8),
            (9, 16),
            (17, 32),
            (33, 48),
            (100, 112),
            (128, 128),
            (129, 160),
            (256, 256),
            (257, 320),
            (4_097, 5_120),
            (8_192, 8_192),
            (12_288, 12_288),
            (12_289, 14_336),
            (69_632, 81_920),
        ];
        for (n, class) in classes {
            assert_eq!(alloc_size(n), class, "{n}");
        }
    }
}
