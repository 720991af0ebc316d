//! The unit tests' random numbers: xorshift64, seeded, so a failing run
//! repeats.

pub struct Xorshift(u64);

impl Xorshift {
    /// `seed` must not be 0.
    pub fn new(seed: u64) -> Self {
        Xorshift(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
