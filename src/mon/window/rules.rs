//! MON.SLIDECHECK's rule: a decision is a function of the stored window
//! (or none), the call and `now` that changes nothing and returns the
//! outcome with the effects that carry it out.
//!
//! The sum is that of the adds of the last `window` seconds at bucket
//! resolution; `level` is the highest threshold this add crossed that the
//! key has not reported within a window, so traffic hovering around a
//! threshold alerts once per window, not on every crossing.

use super::effect::{CallEffects, Effect};
use super::shape::Shape;
use super::store::Window;

/// What a call asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slide<'a> {
    pub shape: Shape,
    pub increment: i64,
    /// Positive, strictly increasing.
    pub thresholds: &'a [i64],
    /// The key's new expiry: now + window.
    pub expires_at_ms: i64,
}

/// What it answers: `[current, level]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slid {
    pub current: i64,
    pub level: usize,
}

/// A call the rule refuses: an error reply, nothing written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The key was made with another window (seconds).
    WindowMismatch { window_s: i64 },
    /// The key was made with another number of buckets.
    BucketsMismatch { buckets: i64 },
    /// The sum would pass 2^63 - 1.
    Overflow,
}

impl Refusal {
    pub fn message(self) -> String {
        match self {
            Refusal::WindowMismatch { window_s } => format!(
                "ERR window does not match the key's ({window_s} s): DEL the key to change its shape"
            ),
            Refusal::BucketsMismatch { buckets } => format!(
                "ERR buckets does not match the key's ({buckets}): DEL the key to change its shape"
            ),
            Refusal::Overflow => "ERR increment or decrement would overflow".into(),
        }
    }
}

/// The outcome and its effects: a CREATE for a new key, the ADD, the
/// REPORT when a threshold is reported, the key's new expiry.
pub fn slide(
    stored: Option<&Window>,
    call: &Slide<'_>,
    now: i64,
) -> Result<(Slid, CallEffects), Refusal> {
    let mut effects = CallEffects::default();
    if let Some(window) = stored {
        let shape = window.shape();
        if shape.window_ms != call.shape.window_ms {
            return Err(Refusal::WindowMismatch {
                window_s: shape.window_ms / 1000,
            });
        }
        if shape.buckets != call.shape.buckets {
            return Err(Refusal::BucketsMismatch {
                buckets: shape.buckets,
            });
        }
    } else {
        effects.push(Effect::Create(call.shape));
    }
    // A new key holds nothing and has reported nothing.
    let prev = stored.map_or(0, |window| window.sum_at(now));
    let current = prev.checked_add(call.increment).ok_or(Refusal::Overflow)?;
    let reported_lately = |t| stored.is_some_and(|window| window.reported_lately(t, now));
    let level = call
        .thresholds
        .iter()
        .enumerate()
        .rev()
        .find(|&(_, &t)| prev < t && t <= current && !reported_lately(t))
        .map_or(0, |(i, _)| i + 1);
    // An add goes into now's bucket; buckets written ahead of now (the
    // clock stepped back) are folded into it first, so they age.
    let bucket = now.div_euclid(call.shape.bucket_ms());
    if stored.is_some_and(|window| window.holds_after(bucket)) {
        effects.push(Effect::Fold { bucket });
    }
    effects.push(Effect::Add {
        bucket,
        amount: call.increment,
    });
    if level > 0 {
        effects.push(Effect::Report {
            threshold: call.thresholds[level - 1],
            at_ms: now,
        });
    }
    effects.push(Effect::ExpireAt(call.expires_at_ms));
    Ok((Slid { current, level }, effects))
}

/// The default cut of a window: the largest n <= 60 that divides it into
/// whole milliseconds (at least 50, as 1000 ms has 50 as a divisor).
pub fn default_buckets(window_ms: i64) -> i64 {
    (1..=60).rev().find(|n| window_ms % n == 0).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Shape = Shape {
        window_ms: 60_000,
        buckets: 60,
    };
    const T0: i64 = 1_800_000_000_000;

    /// Runs calls of `increment` at each time in `times_ms` against
    /// thresholds; the replies.
    fn run(thresholds: &[i64], calls: &[(i64, i64)]) -> Vec<(i64, usize)> {
        let mut stored: Option<Box<Window>> = None;
        calls
            .iter()
            .map(|&(at, increment)| {
                let call = Slide {
                    shape: MINUTE,
                    increment,
                    thresholds,
                    expires_at_ms: at + 60_000,
                };
                let (slid, effects) = slide(stored.as_deref(), &call, at).unwrap();
                for effect in effects {
                    match (&mut stored, effect) {
                        (None, Effect::Create(shape)) => stored = Some(Window::create(shape)),
                        (Some(w), effect) => w.apply(&effect).unwrap(),
                        (None, other) => panic!("{other:?} before CREATE"),
                    }
                }
                (slid.current, slid.level)
            })
            .collect()
    }

    #[test]
    fn a_burst_that_straddles_a_minute_is_caught() {
        // Two orders at 0:59 and two at 1:01, 3 a minute.
        let s = 1_000;
        let replies = run(
            &[3],
            &[(59 * s, 1), (59 * s + 500, 1), (61 * s, 1), (61 * s + 1, 1)],
        );
        assert_eq!(replies, [(1, 0), (2, 0), (3, 1), (4, 0)]);
    }

    #[test]
    fn adds_age_out_at_bucket_resolution() {
        let replies = run(&[100], &[(T0, 5), (T0 + 59_999, 1), (T0 + 60_000, 1)]);
        // Bucket of T0 counts until 60 buckets later.
        assert_eq!(replies[1].0, 6);
        assert_eq!(replies[2].0, 2);
    }

    #[test]
    fn hovering_traffic_alerts_once_a_window() {
        // One order every 20 s against 3 a minute: the sum sits at 3,
        // crossing it again whenever the oldest order ages out.
        let calls: Vec<(i64, i64)> = (0..12).map(|i| (T0 + i * 20_000, 1)).collect();
        let replies = run(&[3], &calls);
        let alerts: Vec<i64> = replies
            .iter()
            .zip(&calls)
            .filter(|((_, level), _)| *level > 0)
            .map(|(_, (at, _))| (at - T0) / 1000)
            .collect();
        // Reported at 40 s, held back at 60 and 80 s, again at 100 s.
        assert_eq!(alerts, [40, 100, 160, 220]);
        assert!(replies[3..].iter().all(|&(current, _)| current == 3));
    }

    #[test]
    fn the_highest_unreported_threshold_is_named() {
        let replies = run(&[2, 4, 6], &[(T0, 5), (T0 + 1, 2), (T0 + 2, 10)]);
        assert_eq!(replies, [(5, 2), (7, 3), (17, 0)]);
    }

    #[test]
    fn another_shape_or_an_overflow_is_refused() {
        let mut w = Window::create(MINUTE);
        w.apply(&Effect::Add {
            bucket: 1,
            amount: i64::MAX,
        })
        .unwrap();
        let call = |shape, increment| Slide {
            shape,
            increment,
            thresholds: &[1],
            expires_at_ms: 0,
        };
        let other = Shape {
            window_ms: 120_000,
            buckets: 60,
        };
        assert_eq!(
            slide(Some(&w), &call(other, 1), 1_000),
            Err(Refusal::WindowMismatch { window_s: 60 })
        );
        let other = Shape {
            window_ms: 60_000,
            buckets: 30,
        };
        assert_eq!(
            slide(Some(&w), &call(other, 1), 1_000),
            Err(Refusal::BucketsMismatch { buckets: 60 })
        );
        assert_eq!(
            slide(Some(&w), &call(MINUTE, 1), 1_000),
            Err(Refusal::Overflow)
        );
    }

    #[test]
    fn default_cuts() {
        assert_eq!(default_buckets(60_000), 60);
        assert_eq!(default_buckets(1_000), 50);
        assert_eq!(default_buckets(7_000), 56);
        assert_eq!(default_buckets(86_400_000), 60);
    }
}
