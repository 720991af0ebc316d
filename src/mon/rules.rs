//! The decisions of the MON.* commands, as pure functions of plain values:
//! the handlers read the key, ask these what to do, and do exactly that.

use crate::reply::{ErrorReply, OVERFLOW};

/// 1-based index of the highest threshold `t` with `prev < t <= current`,
/// or 0 when the step from `prev` to `current` crossed none.
///
/// Judged on the counter's value alone, so a refund that brings the counter
/// back below a threshold lets the next add report it again.
pub fn crossing_level(prev: i64, current: i64, thresholds: &[i64]) -> usize {
    thresholds
        .iter()
        .rposition(|&t| prev < t && t <= current)
        .map_or(0, |index| index + 1)
}

/// What MON.DISTINCT answers: the distinct members after the call, and
/// the highest threshold the count crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub count: i64,
    pub level: usize,
}

/// `prev`: the members after the aged ones were dropped, before this
/// member was added; `added`: the member was new (not a re-score).
pub fn distinct(prev: i64, added: bool, thresholds: &[i64]) -> Tally {
    let count = prev + i64::from(added);
    Tally {
        count,
        level: crossing_level(prev, count, thresholds),
    }
}

/// Is a member new to the count once the aged members are dropped: never
/// seen (`None`), or last seen at or before the `cutoff`?
pub fn arrives(last_seen_ms: Option<f64>, cutoff: i64) -> bool {
    last_seen_ms.is_none_or(|seen| seen <= cutoff as f64)
}

/// The score at or below which a member has aged out at `now`: last seen
/// `window` or longer ago.
pub fn distinct_cutoff(now_ms: i64, window_ms: i64) -> i64 {
    now_ms - window_ms
}

/// What MON.INCRCHECK does to a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    /// The value to write (and reply).
    pub value: i64,
    /// The highest threshold crossed for the first time, 1-based; 0: none.
    pub level: usize,
    /// The key has no running window: give it one (never move a running
    /// one).
    pub starts_window: bool,
}

/// Adds `increment` (> 0) to the counter (`None`: the key is missing, so
/// 0), as INCRBY would, and judges thresholds and window.
/// `window_running`: the key exists and has a TTL.
pub fn count(
    current: Option<i64>,
    window_running: bool,
    increment: i64,
    thresholds: &[i64],
) -> Result<Count, ErrorReply> {
    let prev = current.unwrap_or(0);
    let value = prev.checked_add(increment).ok_or(OVERFLOW)?;
    Ok(Count {
        value,
        level: crossing_level(prev, value, thresholds),
        starts_window: !window_running,
    })
}

/// What MON.DECRCLAMP does to a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refund {
    /// Missing key or a value already at or below 0: reply 0, write nothing.
    Nothing,
    /// Write `value`; `lost` is the excess the clamp to 0 swallowed (0 when
    /// the refund fitted).
    Write { value: i64, lost: i64 },
}

/// Refund `amount` (> 0) from `current` (`None`: the key is missing),
/// never going below 0.
pub fn refund(current: Option<i64>, amount: i64) -> Refund {
    match current {
        Some(current) if current > 0 => {
            if amount > current {
                Refund::Write {
                    value: 0,
                    lost: amount - current,
                }
            } else {
                Refund::Write {
                    value: current - amount,
                    lost: 0,
                }
            }
        }
        _ => Refund::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_member_can_cross_a_re_score_cannot() {
        assert_eq!(distinct(2, true, &[3, 5]), Tally { count: 3, level: 1 });
        assert_eq!(distinct(3, false, &[3, 5]), Tally { count: 3, level: 0 });
        // A count that fell back below a threshold reports it again.
        assert_eq!(distinct(2, true, &[3]).level, 1);
        assert_eq!(distinct_cutoff(1_000_060_000, 60_000), 1_000_000_000);
        // A member seen at the cutoff itself has aged out: it arrives again.
        assert!(arrives(None, 1_000));
        assert!(arrives(Some(1_000.0), 1_000));
        assert!(!arrives(Some(1_001.0), 1_000));
    }

    #[test]
    fn one_threshold_is_reported_once_on_the_call_that_reaches_it() {
        let levels: Vec<usize> = (0..5)
            .map(|prev| crossing_level(prev, prev + 1, &[3]))
            .collect();
        assert_eq!(levels, [0, 0, 1, 0, 0]);
    }

    #[test]
    fn a_jump_over_several_thresholds_reports_the_highest() {
        let t = [100, 500, 900];
        assert_eq!(crossing_level(0, 99, &t), 0);
        assert_eq!(crossing_level(99, 100, &t), 1);
        assert_eq!(crossing_level(100, 600, &t), 2);
        assert_eq!(crossing_level(0, 1000, &t), 3);
        assert_eq!(crossing_level(900, 5000, &t), 0);
    }

    #[test]
    fn crossing_is_judged_on_the_value_so_a_refund_rearms_it() {
        assert_eq!(crossing_level(2, 3, &[3]), 1);
        // refunded back to 1, then up again past 3
        assert_eq!(crossing_level(1, 4, &[3]), 1);
    }

    #[test]
    fn a_counter_that_starts_negative_can_still_cross() {
        assert_eq!(crossing_level(-10, 5, &[1, 5]), 2);
    }

    #[test]
    fn count_adds_like_incrby_and_detects_overflow() {
        let step = count(Some(i64::MAX - 1), true, 1, &[i64::MAX]).unwrap();
        assert_eq!((step.value, step.level), (i64::MAX, 1));
        assert_eq!(count(Some(i64::MAX), true, 1, &[1]), Err(OVERFLOW));
        assert_eq!(count(None, false, 3, &[3]).unwrap().value, 3);
    }

    #[test]
    fn only_a_counter_without_a_running_window_starts_one() {
        assert!(count(None, false, 1, &[5]).unwrap().starts_window);
        assert!(count(Some(4), false, 1, &[5]).unwrap().starts_window);
        assert!(!count(Some(4), true, 1, &[5]).unwrap().starts_window);
    }

    #[test]
    fn refunds_clamp_at_zero_and_record_the_excess() {
        // 100 - 50 - 70 -> 50 -> 0, losing 20
        assert_eq!(refund(Some(100), 50), Refund::Write { value: 50, lost: 0 });
        assert_eq!(refund(Some(50), 70), Refund::Write { value: 0, lost: 20 });
        assert_eq!(refund(Some(50), 50), Refund::Write { value: 0, lost: 0 });
        assert_eq!(
            refund(Some(1), i64::MAX),
            Refund::Write {
                value: 0,
                lost: i64::MAX - 1
            }
        );
    }

    #[test]
    fn refunds_on_nothing_write_nothing() {
        assert_eq!(refund(None, 5), Refund::Nothing);
        assert_eq!(refund(Some(0), 5), Refund::Nothing);
        assert_eq!(refund(Some(-3), 5), Refund::Nothing);
        assert_eq!(refund(Some(i64::MIN), 5), Refund::Nothing);
    }
}
