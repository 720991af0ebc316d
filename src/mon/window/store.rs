//! A sliding window as stored: its shape, the sums of its live buckets in
//! time order with their total, and the thresholds it reported lately.
//! [`Window::apply`] is the only way it changes; it refuses an effect that
//! does not fit, whoever sent it, and changes nothing then. Everything is
//! owned outright, so a copy may be freed on Redis's lazyfree thread.

use std::collections::VecDeque;

use super::effect::Effect;
use super::shape::Shape;
use crate::replicated::ApplyError;

/// Most reports a window remembers.
pub const MAX_REPORTS: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    shape: Shape,
    /// The latest bucket (bucket number, sum of its adds), kept in the
    /// value itself: most adds land in it and touch no other memory.
    last: Option<(i64, i64)>,
    /// The live buckets before it, bucket numbers increasing, all within
    /// `buckets` of the last.
    earlier: VecDeque<(i64, i64)>,
    /// The oldest bucket number held (`i64::MAX` when empty): while it is
    /// live, nothing has aged out and `earlier` need not be read.
    oldest: i64,
    /// The sum of every bucket held.
    total: i64,
    /// (threshold, reported at ms), one per threshold, at most 32.
    reports: Vec<(i64, i64)>,
}

impl Window {
    pub fn new(shape: Shape) -> Self {
        Window {
            shape,
            last: None,
            earlier: VecDeque::new(),
            oldest: i64::MAX,
            total: 0,
            reports: Vec::new(),
        }
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The bucket an add at `now` goes to: always its time's, never a
    /// later one (buckets after it are folded into it first: see
    /// [`Effect::Fold`]).
    pub fn bucket_at(&self, now: i64) -> i64 {
        now.div_euclid(self.shape.bucket_ms())
    }

    /// Is a bucket numbered after `bucket` held (written while the clock
    /// ran ahead, or loaded from such a server)?
    pub fn holds_after(&self, bucket: i64) -> bool {
        self.last.is_some_and(|(last, _)| last > bucket)
    }

    /// The sum of the adds held in buckets older than `oldest_live`.
    fn aged_before(&self, oldest_live: i64) -> i64 {
        if self.oldest >= oldest_live {
            return 0;
        }
        self.buckets()
            .take_while(|(bucket, _)| *bucket < oldest_live)
            .map(|(_, sum)| sum)
            .sum()
    }

    /// The sum of the adds that count at `now`: those whose bucket is less
    /// than `buckets` behind now's. Walks only the buckets that have aged
    /// out, which the next add drops.
    pub fn sum_at(&self, now: i64) -> i64 {
        let oldest_live = now.div_euclid(self.shape.bucket_ms()) - self.shape.buckets + 1;
        self.total - self.aged_before(oldest_live)
    }

    /// Was `threshold` reported less than a window before `now`?
    pub fn reported_lately(&self, threshold: i64, now: i64) -> bool {
        self.reports
            .iter()
            .any(|&(t, at)| t == threshold && now - at < self.shape.window_ms)
    }

    /// The buckets held, oldest first.
    pub fn buckets(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.earlier.iter().copied().chain(self.last)
    }

    pub fn reports(&self) -> &[(i64, i64)] {
        &self.reports
    }

    /// Applies one effect, or refuses it whole and changes nothing.
    /// `ExpireAt` is the key's, not the value's: nothing to do here.
    pub fn apply(&mut self, effect: &Effect) -> Result<(), ApplyError> {
        match *effect {
            Effect::Create(_) => return Err("the window exists"),
            Effect::Add { bucket, amount } => self.add(bucket, amount)?,
            Effect::Fold { bucket } => self.fold(bucket)?,
            Effect::Report { threshold, at_ms } => self.report(threshold, at_ms)?,
            Effect::ExpireAt(_) => {}
        }
        Ok(())
    }

    /// A bucket number is a time: `bucket × w` ms since 1970, within 64
    /// bits (a window whose buckets no time maps to could never age).
    fn check_bucket(&self, bucket: i64) -> Result<(), ApplyError> {
        match bucket.checked_mul(self.shape.bucket_ms()) {
            Some(ms) if ms >= 0 => Ok(()),
            _ => Err("a bucket number that is no time since 1970"),
        }
    }

    fn add(&mut self, bucket: i64, amount: i64) -> Result<(), ApplyError> {
        self.check_bucket(bucket)?;
        if amount < 1 {
            return Err("an add of nothing");
        }
        if self.last.is_some_and(|(last, _)| bucket < last) {
            return Err("an add to a bucket older than the last");
        }
        let oldest_kept = bucket - self.shape.buckets + 1;
        let total = (self.total - self.aged_before(oldest_kept))
            .checked_add(amount)
            .ok_or("the sum would overflow")?;
        // Checked; from here on nothing fails.
        if self.oldest < oldest_kept {
            while self.earlier.front().is_some_and(|&(b, _)| b < oldest_kept) {
                self.earlier.pop_front();
            }
            if self.last.is_some_and(|(last, _)| last < oldest_kept) {
                self.last = None;
            }
            self.oldest = self
                .earlier
                .front()
                .or(self.last.as_ref())
                .map_or(i64::MAX, |b| b.0);
        }
        match &mut self.last {
            Some((last, sum)) if *last == bucket => *sum += amount,
            _ => {
                if let Some(closed) = self.last.replace((bucket, amount)) {
                    self.earlier.push_back(closed);
                }
                self.oldest = self.oldest.min(bucket);
            }
        }
        self.total = total;
        Ok(())
    }

    /// Moves the sums of every bucket numbered after `bucket` into
    /// `bucket` (made if missing): from then on they age as adds made in
    /// it. The total does not change.
    fn fold(&mut self, bucket: i64) -> Result<(), ApplyError> {
        self.check_bucket(bucket)?;
        if !self.holds_after(bucket) {
            return Err("a fold with no later bucket");
        }
        // Checked; from here on nothing fails. Each sum is part of the
        // total, so their sum fits too.
        let mut moved = 0;
        while let Some((_, sum)) = self.last.filter(|&(last, _)| last > bucket) {
            moved += sum;
            self.last = self.earlier.pop_back();
        }
        match &mut self.last {
            Some((last, sum)) if *last == bucket => *sum += moved,
            _ => {
                if let Some(closed) = self.last.replace((bucket, moved)) {
                    self.earlier.push_back(closed);
                }
            }
        }
        self.oldest = self
            .earlier
            .front()
            .or(self.last.as_ref())
            .map_or(i64::MAX, |b| b.0);
        Ok(())
    }

    /// Remembers `threshold` as reported at `at_ms`: one entry a threshold,
    /// at most 32, forgetting the oldest (the smaller threshold first on a
    /// tie), which are those older than the window first.
    fn report(&mut self, threshold: i64, at_ms: i64) -> Result<(), ApplyError> {
        if threshold < 1 || at_ms < 0 {
            return Err("a report of no threshold, or before 1970");
        }
        self.reports.retain(|&(t, _)| t != threshold);
        self.reports.push((threshold, at_ms));
        while self.reports.len() > MAX_REPORTS {
            let oldest = (0..self.reports.len())
                .min_by_key(|&i| (self.reports[i].1, self.reports[i].0))
                .unwrap_or(0);
            self.reports.remove(oldest);
        }
        Ok(())
    }

    pub fn heap_bytes(&self) -> usize {
        self.earlier.capacity() * std::mem::size_of::<(i64, i64)>()
            + self.reports.capacity() * std::mem::size_of::<(i64, i64)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: Shape = Shape {
        window_ms: 60_000,
        buckets: 60,
    };

    fn add(w: &mut Window, bucket: i64, amount: i64) {
        w.apply(&Effect::Add { bucket, amount }).unwrap();
    }

    #[test]
    fn an_add_counts_while_its_bucket_is_less_than_n_behind() {
        let mut w = Window::new(SHAPE);
        add(&mut w, 100, 2); // 100 000 ms .. 100 999 ms
        add(&mut w, 130, 3);
        // At bucket 159 both count; at 160 bucket 100 is 60 behind: gone.
        assert_eq!(w.sum_at(159_999), 5);
        assert_eq!(w.sum_at(160_000), 3);
        assert_eq!(w.sum_at(189_999), 3);
        assert_eq!(w.sum_at(190_000), 0);
        // An add drops what has aged out, and keeps the total exact.
        add(&mut w, 160, 1);
        assert_eq!(w.buckets().collect::<Vec<_>>(), [(130, 3), (160, 1)]);
        assert_eq!(w.sum_at(160_000), 4);
    }

    #[test]
    fn effects_that_do_not_fit_are_refused_and_change_nothing() {
        let mut w = Window::new(SHAPE);
        add(&mut w, 100, i64::MAX - 1);
        let before = w.clone();
        for effect in [
            Effect::Add {
                bucket: 99,
                amount: 1,
            },
            Effect::Add {
                bucket: 100,
                amount: 2,
            },
            Effect::Add {
                bucket: 101,
                amount: 0,
            },
            Effect::Report {
                threshold: 0,
                at_ms: 5,
            },
            Effect::Create(SHAPE),
        ] {
            assert!(w.apply(&effect).is_err(), "{effect:?}");
            assert_eq!(w, before);
        }
        // Once the big add ages out, there is room again.
        add(&mut w, 160, 5);
        assert_eq!(w.sum_at(160_000), 5);
    }

    #[test]
    fn a_fold_moves_the_later_buckets_into_one_that_ages_from_there() {
        let mut w = Window::new(SHAPE);
        add(&mut w, 100, 1);
        add(&mut w, 130, 2); // written while the clock ran 30 s ahead
        add(&mut w, 140, 4);
        w.apply(&Effect::Fold { bucket: 110 }).unwrap();
        assert_eq!(w.buckets().collect::<Vec<_>>(), [(100, 1), (110, 6)]);
        assert_eq!(w.sum_at(110_000), 7);
        assert_eq!(w.sum_at(159_999), 7);
        assert_eq!(w.sum_at(160_000), 6);
        assert_eq!(w.sum_at(169_999), 6);
        assert_eq!(w.sum_at(170_000), 0);
        // Into a bucket already held, and only when something is later.
        add(&mut w, 120, 1);
        w.apply(&Effect::Fold { bucket: 120 }).unwrap_err();
        let mut v = Window::new(SHAPE);
        add(&mut v, 130, 1);
        add(&mut v, 150, 2);
        v.apply(&Effect::Fold { bucket: 130 }).unwrap();
        assert_eq!(v.buckets().collect::<Vec<_>>(), [(130, 3)]);
        v.apply(&Effect::Fold { bucket: 130 }).unwrap_err();
    }

    #[test]
    fn a_bucket_number_must_be_a_time() {
        let mut w = Window::new(SHAPE); // 1000 ms a bucket
        for bucket in [i64::MAX, i64::MAX / 1000 + 1, -1] {
            let before = w.clone();
            assert!(w.apply(&Effect::Add { bucket, amount: 1 }).is_err());
            assert!(w.apply(&Effect::Fold { bucket }).is_err());
            assert_eq!(w, before);
        }
        add(&mut w, i64::MAX / 1000, 1);
    }

    #[test]
    fn reports_keep_one_entry_a_threshold_and_at_most_32() {
        let mut w = Window::new(SHAPE);
        let report = |w: &mut Window, threshold, at_ms| {
            w.apply(&Effect::Report { threshold, at_ms }).unwrap()
        };
        report(&mut w, 5, 1_000);
        report(&mut w, 5, 2_000);
        assert_eq!(w.reports(), [(5, 2_000)]);
        assert!(w.reported_lately(5, 61_999));
        assert!(!w.reported_lately(5, 62_000));
        // 40 thresholds within one window: the 8 oldest go, the smaller
        // first on a tie.
        let mut w = Window::new(SHAPE);
        for t in 1..=40 {
            report(&mut w, t, 10_000 + (t / 2) * 10);
        }
        assert_eq!(w.reports().len(), 32);
        assert!(w.reports().iter().all(|&(t, _)| t > 8));
        // Past the window: the oldest goes, threshold 9 (at 10 040 ms,
        // with 10 at 10 050).
        report(&mut w, 99, 200_000);
        assert_eq!(w.reports().len(), 32);
        assert!(w.reports().contains(&(99, 200_000)));
        assert!(!w.reports().iter().any(|&(t, _)| t == 9));
    }
}
