//! A sliding window as stored: one block holding its shape, the newest
//! bucket's number and sum, the total, the thresholds it reported lately,
//! and a ring of the older buckets' sums sized at creation from BUCKETS.
//! [`Window::apply`] is the only way it changes; it refuses an effect that
//! does not fit, whoever sent it, and changes nothing then. Everything is
//! owned outright, so a copy may be freed on Redis's lazyfree thread.
//!
//! Bucket `b` lives in slot `b mod buckets`: a slot holds the sum of the
//! one bucket of that residue within a window of the newest (0 for none),
//! so the ring needs no bucket numbers. Slots are 4 bytes; a sum past
//! `u32::MAX` moves the whole ring to 8-byte slots beside the block, for
//! good (the 4-byte ring then goes unused).

use super::effect::Effect;
use super::shape::Shape;
use crate::redis::{allocated, Mover, TailLength, Tailed};
use crate::replicated::ApplyError;

/// Most reports a window remembers.
pub const MAX_REPORTS: usize = 32;

/// A window: its [`Header`], then its ring of 4-byte sums.
pub type Window = Tailed<Header, u32>;

#[cfg(test)]
thread_local! {
    /// Ring slots read on this thread: the unit tests bound a load's work
    /// with it.
    pub static SLOTS_READ: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[derive(Debug, Clone)]
pub struct Header {
    shape: Shape,
    /// The newest bucket held, and its sum (0 while the window holds
    /// nothing: every bucket held has a sum of 1 or more). Kept out of the
    /// ring: most adds land in it and touch nothing else.
    newest: i64,
    newest_sum: i64,
    /// The sum of every bucket held.
    total: i64,
    /// (threshold, reported at ms), one per threshold, at most 32.
    reports: Vec<(i64, i64)>,
    /// The ring in 8-byte slots, once a sum did not fit in 4.
    wide: Option<Box<[i64]>>,
}

impl TailLength for Header {
    fn tail_length(&self) -> usize {
        self.shape.buckets as usize
    }
}

/// Equal when they hold the same buckets and reports, whatever the ring's
/// width.
impl PartialEq for Window {
    fn eq(&self, other: &Self) -> bool {
        self.head.shape == other.head.shape
            && self.head.total == other.head.total
            && self.head.reports == other.head.reports
            && self.buckets().eq(other.buckets())
    }
}

impl Eq for Window {}

impl Clone for Box<Window> {
    fn clone(&self) -> Self {
        self.duplicate()
    }
}

impl Window {
    pub fn create(shape: Shape) -> Box<Self> {
        Tailed::new(Header {
            shape,
            newest: 0,
            newest_sum: 0,
            total: 0,
            reports: Vec::new(),
            wide: None,
        })
    }

    pub fn shape(&self) -> Shape {
        self.head.shape
    }

    fn is_empty(&self) -> bool {
        self.head.newest_sum == 0
    }

    fn slot(&self, bucket: i64) -> usize {
        bucket.rem_euclid(self.head.shape.buckets) as usize
    }

    fn sum_in(&self, slot: usize) -> i64 {
        #[cfg(test)]
        SLOTS_READ.set(SLOTS_READ.get() + 1);
        match &self.head.wide {
            Some(wide) => wide[slot],
            None => i64::from(self.tail[slot]),
        }
    }

    /// `sum` is a bucket's, so never negative.
    fn set_sum(&mut self, slot: usize, sum: i64) {
        match (&mut self.head.wide, u32::try_from(sum)) {
            (Some(wide), _) => wide[slot] = sum,
            (None, Ok(narrow)) => self.tail[slot] = narrow,
            (None, Err(_)) => {
                let mut wide: Box<[i64]> = self.tail.iter().map(|&s| i64::from(s)).collect();
                wide[slot] = sum;
                self.tail.fill(0);
                self.head.wide = Some(wide);
            }
        }
    }

    /// The bucket an add at `now` goes to: always its time's, never a
    /// later one (buckets after it are folded into it first: see
    /// [`Effect::Fold`]).
    pub fn bucket_at(&self, now: i64) -> i64 {
        now.div_euclid(self.head.shape.bucket_ms())
    }

    /// The newest bucket held, if any: O(1), where [`Window::buckets`]
    /// walks the ring.
    pub fn newest_bucket(&self) -> Option<i64> {
        (!self.is_empty()).then_some(self.head.newest)
    }

    /// Is a bucket numbered after `bucket` held (written while the clock
    /// ran ahead, or loaded from such a server)?
    pub fn holds_after(&self, bucket: i64) -> bool {
        !self.is_empty() && self.head.newest > bucket
    }

    /// The ring's buckets numbered `from..to` that are held: (bucket, sum).
    fn ring_buckets(&self, from: i64, to: i64) -> impl Iterator<Item = (i64, i64)> + '_ {
        let newest = self.head.newest;
        let from = from.max(newest - self.head.shape.buckets + 1);
        (from..to.min(newest))
            .filter(|_| !self.is_empty())
            .map(|bucket| (bucket, self.sum_in(self.slot(bucket))))
            .filter(|&(_, sum)| sum > 0)
    }

    /// The sum of the adds held in buckets older than `oldest_live`.
    /// Walks only the buckets that have aged out, which the next add drops.
    fn aged_before(&self, oldest_live: i64) -> i64 {
        let newest = self.head.newest;
        if self.is_empty() || oldest_live <= newest - self.head.shape.buckets + 1 {
            return 0;
        }
        if oldest_live > newest {
            return self.head.total;
        }
        self.ring_buckets(i64::MIN, oldest_live)
            .map(|(_, sum)| sum)
            .sum()
    }

    /// The sum of the adds that count at `now`: those whose bucket is less
    /// than `buckets` behind now's.
    pub fn sum_at(&self, now: i64) -> i64 {
        let oldest_live = self.bucket_at(now) - self.head.shape.buckets + 1;
        self.head.total - self.aged_before(oldest_live)
    }

    /// Was `threshold` reported less than a window before `now`?
    pub fn reported_lately(&self, threshold: i64, now: i64) -> bool {
        self.head
            .reports
            .iter()
            .any(|&(t, at)| t == threshold && now - at < self.head.shape.window_ms)
    }

    /// The buckets held, oldest first.
    pub fn buckets(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        let newest = (!self.is_empty()).then_some((self.head.newest, self.head.newest_sum));
        self.ring_buckets(i64::MIN, self.head.newest).chain(newest)
    }

    pub fn reports(&self) -> &[(i64, i64)] {
        &self.head.reports
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
        match bucket.checked_mul(self.head.shape.bucket_ms()) {
            Some(ms) if ms >= 0 => Ok(()),
            _ => Err("a bucket number that is no time since 1970"),
        }
    }

    fn add(&mut self, bucket: i64, amount: i64) -> Result<(), ApplyError> {
        self.check_bucket(bucket)?;
        if amount < 1 {
            return Err("an add of nothing");
        }
        if !self.is_empty() && bucket < self.head.newest {
            return Err("an add to a bucket older than the last");
        }
        let buckets = self.head.shape.buckets;
        let aged = self.aged_before(bucket - buckets + 1);
        let total = (self.head.total - aged)
            .checked_add(amount)
            .ok_or("the sum would overflow")?;
        // Checked; from here on nothing fails.
        let newest = self.head.newest;
        if !self.is_empty() && bucket == newest {
            self.head.newest_sum += amount;
        } else {
            if !self.is_empty() {
                // The buckets that age out hold the slots of those after
                // the newest up to `bucket`: empty them, then close the
                // newest into its slot unless it aged out too.
                for next in newest + 1..=newest + (bucket - newest).min(buckets) {
                    self.set_sum(self.slot(next), 0);
                }
                if bucket - newest < buckets {
                    self.set_sum(self.slot(newest), self.head.newest_sum);
                }
            }
            (self.head.newest, self.head.newest_sum) = (bucket, amount);
        }
        self.head.total = total;
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
        let later: Vec<(i64, i64)> = self.ring_buckets(bucket + 1, self.head.newest).collect();
        let mut moved = self.head.newest_sum;
        for (later, sum) in later {
            moved += sum;
            self.set_sum(self.slot(later), 0);
        }
        let kept: i64 = self
            .ring_buckets(bucket, bucket + 1)
            .map(|(_, sum)| sum)
            .sum();
        if kept > 0 {
            self.set_sum(self.slot(bucket), 0);
        }
        (self.head.newest, self.head.newest_sum) = (bucket, kept + moved);
        Ok(())
    }

    /// Remembers `threshold` as reported at `at_ms`: one entry a threshold,
    /// at most 32, forgetting the oldest (the smaller threshold first on a
    /// tie), which are those older than the window first.
    fn report(&mut self, threshold: i64, at_ms: i64) -> Result<(), ApplyError> {
        if threshold < 1 || at_ms < 0 {
            return Err("a report of no threshold, or before 1970");
        }
        let reports = &mut self.head.reports;
        reports.retain(|&(t, _)| t != threshold);
        reports.push((threshold, at_ms));
        while reports.len() > MAX_REPORTS {
            let oldest = (0..reports.len())
                .min_by_key(|&i| (reports[i].1, reports[i].0))
                .unwrap_or(0);
            reports.remove(oldest);
        }
        Ok(())
    }

    /// Moves the reports and an 8-byte ring if the allocator advises it
    /// (the block itself is moved by its caller).
    pub fn defrag(&mut self, mover: &mut Mover) {
        if let Some(wide) = &mut self.head.wide {
            mover.boxed_slice(wide);
        }
        mover.vec(&mut self.head.reports);
    }

    /// What the allocator gave for the reports and an 8-byte ring.
    pub fn heap_bytes(&self) -> usize {
        let reports = self.head.reports.capacity() * std::mem::size_of::<(i64, i64)>();
        let wide = self.head.wide.as_ref().map_or(0, |wide| {
            allocated(wide.as_ptr(), std::mem::size_of_val(&**wide))
        });
        wide + allocated(self.head.reports.as_ptr(), reports)
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
        let mut w = Window::create(SHAPE);
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
        let mut w = Window::create(SHAPE);
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
        let mut w = Window::create(SHAPE);
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
        let mut v = Window::create(SHAPE);
        add(&mut v, 130, 1);
        add(&mut v, 150, 2);
        v.apply(&Effect::Fold { bucket: 130 }).unwrap();
        assert_eq!(v.buckets().collect::<Vec<_>>(), [(130, 3)]);
        v.apply(&Effect::Fold { bucket: 130 }).unwrap_err();
    }

    #[test]
    fn a_bucket_number_must_be_a_time() {
        let mut w = Window::create(SHAPE); // 1000 ms a bucket
        for bucket in [i64::MAX, i64::MAX / 1000 + 1, -1] {
            let before = w.clone();
            assert!(w.apply(&Effect::Add { bucket, amount: 1 }).is_err());
            assert!(w.apply(&Effect::Fold { bucket }).is_err());
            assert_eq!(w, before);
        }
        add(&mut w, i64::MAX / 1000, 1);
    }

    /// The rule as a plain list of (bucket, sum), written without the
    /// ring: what the window must equal after any run of effects.
    #[derive(Default)]
    struct Model(std::collections::BTreeMap<i64, i64>);

    impl Model {
        fn add(&mut self, n: i64, bucket: i64, amount: i64) -> bool {
            if self.0.keys().next_back().is_some_and(|&b| bucket < b) {
                return false;
            }
            let kept: i64 = self.0.range(bucket - n + 1..).map(|(_, s)| s).sum();
            if kept.checked_add(amount).is_none() {
                return false;
            }
            self.0.retain(|&b, _| b > bucket - n);
            *self.0.entry(bucket).or_default() += amount;
            true
        }

        fn fold(&mut self, bucket: i64) -> bool {
            let later: Vec<i64> = self.0.range(bucket + 1..).map(|(&b, _)| b).collect();
            if later.is_empty() {
                return false;
            }
            let moved: i64 = later.iter().map(|b| self.0.remove(b).unwrap()).sum();
            *self.0.entry(bucket).or_default() += moved;
            true
        }

        fn sum_at(&self, n: i64, bucket: i64) -> i64 {
            self.0.range(bucket - n + 1..).map(|(_, s)| s).sum()
        }
    }

    #[test]
    fn the_ring_equals_a_plain_list_of_buckets_under_any_run_of_effects() {
        let mut rng = crate::xorshift::Xorshift::new(0x2545_f491_4f6c_dd1d);
        let mut next = move |n: u64| rng.below(n);
        for (window_ms, buckets) in [(60_000, 60), (5_000, 5), (3_000, 1), (7_000, 7)] {
            let shape = Shape { window_ms, buckets };
            for _ in 0..200 {
                let (mut w, mut model) = (Window::create(shape), Model::default());
                let mut at = 1_000 + next(50) as i64;
                for _ in 0..60 {
                    // Mostly forward, sometimes far, sometimes back.
                    at = match next(10) {
                        0 => at + next(4 * buckets as u64) as i64,
                        1 => (at - next(2 * buckets as u64) as i64).max(0),
                        _ => at + next(2) as i64,
                    };
                    let amount = match next(20) {
                        0 => (1 << 33) + next(1 << 20) as i64, // past u32
                        1 => i64::MAX / 2,
                        _ => 1 + next(5) as i64,
                    };
                    let before = w.clone();
                    let (took, expected) = match next(4) {
                        0 => (
                            w.apply(&Effect::Fold { bucket: at }).is_ok(),
                            model.fold(at),
                        ),
                        _ => (
                            w.apply(&Effect::Add { bucket: at, amount }).is_ok(),
                            model.add(buckets, at, amount),
                        ),
                    };
                    assert_eq!(took, expected, "{shape:?} at {at}");
                    if !took {
                        assert_eq!(w, before);
                    }
                    let held: Vec<(i64, i64)> = model.0.iter().map(|(&b, &s)| (b, s)).collect();
                    assert_eq!(w.buckets().collect::<Vec<_>>(), held, "{shape:?}");
                    for later in [at, at + 1, at + buckets - 1, at + buckets, at + 3 * buckets] {
                        let now = later * (window_ms / buckets);
                        assert_eq!(w.sum_at(now), model.sum_at(buckets, later), "{shape:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_ring_widened_by_a_big_sum_equals_a_narrow_one_once_it_ages_out() {
        let mut wide = Window::create(SHAPE);
        add(&mut wide, 100, 1 << 40);
        add(&mut wide, 101, 1); // closes 100 into the ring: it widens
        assert!(wide.head.wide.is_some());
        add(&mut wide, 200, 3);
        let mut narrow = Window::create(SHAPE);
        add(&mut narrow, 200, 3);
        assert!(narrow.head.wide.is_none());
        assert_eq!(wide, narrow);
        assert_eq!(wide.sum_at(200_000), 3);
    }

    #[test]
    fn reports_keep_one_entry_a_threshold_and_at_most_32() {
        let mut w = Window::create(SHAPE);
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
        let mut w = Window::create(SHAPE);
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
