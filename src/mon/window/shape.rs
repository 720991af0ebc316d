//! A window's length and its cut into buckets, fixed when the key is made,
//! and what any shape must satisfy, judged without a clock.

/// Most buckets a window may be cut into.
pub const MAX_BUCKETS: i64 = 3600;

/// A window's length and its cut, fixed when the key is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub window_ms: i64,
    pub buckets: i64,
}

impl Shape {
    /// One bucket's length in ms.
    pub fn bucket_ms(&self) -> i64 {
        self.window_ms / self.buckets
    }

    /// Could MON.SLIDECHECK have made it, whatever its clock said? A whole
    /// number of seconds, 1 to 3600 buckets of whole milliseconds.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.window_ms < 1000 || self.window_ms % 1000 != 0 {
            return Err("the window is not a whole number of seconds");
        }
        if !(1..=MAX_BUCKETS).contains(&self.buckets) || self.window_ms % self.buckets != 0 {
            return Err("the buckets do not cut the window into whole milliseconds");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_judged_without_a_clock() {
        let shape = |window_ms, buckets| Shape { window_ms, buckets }.check();
        assert!(shape(60_000, 60).is_ok());
        assert!(shape(1_000, 1).is_ok());
        assert!(shape(3_600_000, 3_600).is_ok());
        assert!(shape(1_000, 3_000).is_err(), "a bucket of a third of a ms");
        assert!(shape(500, 1).is_err());
    }
}
