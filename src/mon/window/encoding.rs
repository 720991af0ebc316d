//! A window as bytes: its data type, its RDB encoding (and so DUMP,
//! RESTORE, MIGRATE and full syncs; DEBUG DIGEST-VALUE digests the same
//! sequence) with the validation a load owes, and its AOF rewrite (the
//! effects that rebuild it, which Valkey's atomic slot migration replays
//! too). A payload is accepted only when this module could have made it,
//! judged without a clock.

use super::effect::Effect;
use super::shape::Shape;
use super::store::{Window, MAX_REPORTS};
use crate::redis::{AofCommand, DataType, ModuleValue, Mover, Reader, Tailed, Writer};
use crate::replicated::rewrite;

/// The `guard-win` data type.
pub static WINDOW: DataType<Window> = DataType::new();

impl ModuleValue for Window {
    const NAME: &'static std::ffi::CStr = c"guard-win";
    /// 1: shape, the buckets (number, sum), the reports (threshold, at).
    const ENCODING_VERSION: i32 = 1;

    fn write(&self, out: &mut dyn Writer) {
        let shape = self.shape();
        out.integer(shape.window_ms);
        out.integer(shape.buckets);
        out.integer(self.buckets().count() as i64);
        for (bucket, sum) in self.buckets() {
            out.integer(bucket);
            out.integer(sum);
        }
        out.integer(self.reports().len() as i64);
        for &(threshold, at_ms) in self.reports() {
            out.integer(threshold);
            out.integer(at_ms);
        }
    }

    /// One loader per encoding version ever released; a new version adds
    /// its own and keeps these (tests/golden/ holds a payload of each).
    fn read(input: &mut dyn Reader, version: i32) -> Option<Box<Self>> {
        match version {
            1 => read_v1(input),
            _ => None,
        }
    }

    /// The effects that rebuild it ([`rebuild`]), in MON.APPLY commands.
    fn duplicate(&self) -> Box<Self> {
        Tailed::duplicate(self)
    }

    fn rewrite(&self) -> Vec<AofCommand> {
        rewrite::commands(self)
    }

    fn memory(&self) -> usize {
        self.heap_bytes()
    }

    /// One block, and at most the reports and an 8-byte ring beside it,
    /// whatever its length: never worth the lazyfree thread.
    fn free_effort(&self) -> usize {
        1
    }

    fn defrag(&mut self, mover: &mut Mover) {
        Window::defrag(self, mover);
    }
}

/// The effects that rebuild a window on an empty key: CREATE with the
/// shape, every bucket, every report.
pub fn rebuild(window: &Window) -> Vec<Effect> {
    let mut effects = vec![Effect::Create(window.shape())];
    effects.extend(
        window
            .buckets()
            .map(|(bucket, amount)| Effect::Add { bucket, amount }),
    );
    effects.extend(
        window
            .reports()
            .iter()
            .map(|&(threshold, at_ms)| Effect::Report { threshold, at_ms }),
    );
    effects
}

/// Encoding 1: the shape, the buckets (number, sum), the reports
/// (threshold, at).
fn read_v1(input: &mut dyn Reader) -> Option<Box<Window>> {
    let shape = Shape {
        window_ms: input.integer()?,
        buckets: input.integer()?,
    };
    shape.check().ok()?;
    let mut window = Window::create(shape);
    let stored = input.integer()?;
    if !(0..=shape.buckets).contains(&stored) {
        return None;
    }
    let mut first = None;
    for _ in 0..stored {
        let (bucket, amount) = (input.integer()?, input.integer()?);
        // Every stored bucket is live as of the last: none was dropped
        // by loading it.
        let first = *first.get_or_insert(bucket);
        if bucket.checked_sub(first).is_none_or(|d| d >= shape.buckets)
            || window
                .newest_bucket()
                .is_some_and(|newest| newest >= bucket)
        {
            return None;
        }
        window.apply(&Effect::Add { bucket, amount }).ok()?;
    }
    let reports = input.integer()?;
    if !(0..=MAX_REPORTS as i64).contains(&reports) {
        return None;
    }
    for _ in 0..reports {
        let (threshold, at_ms) = (input.integer()?, input.integer()?);
        if window.reports().iter().any(|&(t, _)| t == threshold) {
            return None;
        }
        window.apply(&Effect::Report { threshold, at_ms }).ok()?;
    }
    Some(window)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replicated::{wire, Replicated};
    use crate::tape::Tape;

    const SHAPE: Shape = Shape {
        window_ms: 60_000,
        buckets: 60,
    };

    fn sample() -> Box<Window> {
        let mut w = Window::create(SHAPE);
        for (bucket, amount) in [(1_000, 2), (1_010, 1), (1_059, 4)] {
            w.apply(&Effect::Add { bucket, amount }).unwrap();
        }
        for (threshold, at_ms) in [(3, 1_010_000), (5, 1_059_500)] {
            w.apply(&Effect::Report { threshold, at_ms }).unwrap();
        }
        w
    }

    fn tape_of(w: &Window) -> Tape {
        let mut tape = Tape::default();
        w.write(&mut tape);
        tape
    }

    #[test]
    fn the_encoding_round_trips_and_the_rewrite_rebuilds() {
        let w = sample();
        assert_eq!(Window::read(&mut tape_of(&w), 1), Some(w.clone()));
        let mut effects = Vec::new();
        for (name, args) in w.rewrite() {
            assert_eq!(name, <Window as Replicated>::APPLY_COMMAND);
            effects.extend(wire::from_args::<Window, _>(&args).unwrap());
        }
        let Some((Effect::Create(shape), rest)) = effects.split_first() else {
            panic!("{effects:?}")
        };
        let mut rebuilt = Window::create(*shape);
        for effect in rest {
            rebuilt.apply(effect).unwrap();
        }
        assert_eq!(rebuilt, w);
    }

    /// Layout: window, buckets, count, (bucket, sum)..., count,
    /// (threshold, at)...: items 0, 1, 2, 3-8, 9, 10-13.
    #[test]
    fn every_broken_invariant_is_refused() {
        let crafted = |at: usize, value: i64| {
            let mut tape = tape_of(&sample());
            tape.items[at] = Ok(value);
            tape
        };
        for (what, mut tape) in [
            ("a window of 0.5 s", crafted(0, 500)),
            ("7 buckets of 60 s", crafted(1, 7)),
            ("buckets 0", crafted(1, 0)),
            ("more buckets stored than the shape has", crafted(2, 61)),
            ("a negative count", crafted(2, -1)),
            ("buckets out of order", crafted(5, 999)),
            ("a bucket stored twice", crafted(5, 1_000)),
            ("a bucket a window behind the first", crafted(7, 1_060)),
            ("an empty bucket", crafted(4, 0)),
            ("a sum past i64", crafted(8, i64::MAX)),
            ("33 reports", crafted(9, 33)),
            ("a threshold reported twice", crafted(12, 3)),
            ("a threshold of 0", crafted(10, 0)),
            ("a report before 1970", crafted(11, -1)),
        ] {
            assert_eq!(Window::read(&mut tape, 1), None, "{what}");
        }
        let mut truncated = tape_of(&sample());
        truncated.items.pop();
        assert_eq!(Window::read(&mut truncated, 1), None);
        assert_eq!(Window::read(&mut tape_of(&sample()), 2), None);
        // The crafting is proven: an edit within the rules loads.
        assert!(Window::read(&mut crafted(4, 9), 1).is_some());
    }

    /// Loading reads each ring slot a bounded number of times: a full
    /// window of 3,600 buckets is not walked once per stored bucket (that
    /// was 6.5 million slot reads, 28 ms, for one RESTORE).
    #[test]
    fn a_load_is_linear_in_the_buckets() {
        let shape = Shape {
            window_ms: 3_600_000,
            buckets: 3_600,
        };
        let mut full = Window::create(shape);
        for bucket in 1_000_000..1_003_600 {
            full.apply(&Effect::Add { bucket, amount: 1 }).unwrap();
        }
        let mut tape = tape_of(&full);
        super::super::store::SLOTS_READ.set(0);
        assert_eq!(Window::read(&mut tape, 1), Some(full));
        let read = super::super::store::SLOTS_READ.get();
        assert!(
            read <= 4 * 3_600,
            "{read} ring slots read to load 3,600 buckets"
        );
    }
}
