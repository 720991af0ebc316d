//! The decisions each command makes, as pure functions of plain values.
//!
//! No Redis types here: the handlers gather the facts from the key, ask
//! these functions what to do, and carry it out.

/// Absolute expiry (unix ms) of a window of `window_s` seconds starting at
/// `now_ms`, or `None` where EXPIRE itself would refuse it as overflowing.
pub fn window_expiry_ms(now_ms: i64, window_s: i64) -> Option<i64> {
    window_s.checked_mul(1000)?.checked_add(now_ms)
}

/// INCRBY's arithmetic: `None` means "increment or decrement would overflow".
pub fn add(current: i64, increment: i64) -> Option<i64> {
    current.checked_add(increment)
}

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

/// What COUPON.ISSUE answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coupon {
    /// A new winner with this rank (1-based). `sold_out` when it took the
    /// last place.
    Issued { rank: i64, sold_out: bool },
    /// The user already holds one (reply -1).
    AlreadyHeld,
    /// No place left (reply -2).
    SoldOut,
}

impl Coupon {
    /// The integer reply SPEC.md defines.
    pub fn reply(self) -> i64 {
        match self {
            Coupon::Issued { rank, .. } => rank,
            Coupon::AlreadyHeld => -1,
            Coupon::SoldOut => -2,
        }
    }
}

/// Decide a coupon request from the facts: does `user` already hold one,
/// how many are `issued`, and the `limit`. Holding one is checked first, so
/// a winner who retries after the sell-out still gets -1.
pub fn coupon(already_holds: bool, issued: i64, limit: i64) -> Coupon {
    if already_holds {
        Coupon::AlreadyHeld
    } else if issued >= limit {
        Coupon::SoldOut
    } else {
        let rank = issued + 1;
        Coupon::Issued {
            rank,
            sold_out: rank == limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn add_detects_overflow() {
        assert_eq!(add(1, 2), Some(3));
        assert_eq!(add(i64::MAX - 1, 1), Some(i64::MAX));
        assert_eq!(add(i64::MAX, 1), None);
    }

    #[test]
    fn window_expiry_overflows_like_expire() {
        assert_eq!(window_expiry_ms(1_000, 2), Some(3_000));
        assert_eq!(window_expiry_ms(0, i64::MAX / 1000 + 1), None);
        assert_eq!(window_expiry_ms(i64::MAX - 999, 1), None);
        assert_eq!(window_expiry_ms(i64::MAX - 1000, 1), Some(i64::MAX));
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

    #[test]
    fn coupons_rank_winners_and_stop_at_the_limit() {
        assert_eq!(
            coupon(false, 0, 2),
            Coupon::Issued {
                rank: 1,
                sold_out: false
            }
        );
        assert_eq!(
            coupon(false, 1, 2),
            Coupon::Issued {
                rank: 2,
                sold_out: true
            }
        );
        assert_eq!(coupon(false, 2, 2), Coupon::SoldOut);
        assert_eq!(coupon(false, 5, 2), Coupon::SoldOut);
    }

    #[test]
    fn holding_a_coupon_is_checked_before_the_sell_out() {
        assert_eq!(coupon(true, 0, 2), Coupon::AlreadyHeld);
        assert_eq!(coupon(true, 2, 2), Coupon::AlreadyHeld);
    }

    #[test]
    fn coupon_replies_follow_the_spec() {
        assert_eq!(coupon(false, 0, 1).reply(), 1);
        assert_eq!(Coupon::AlreadyHeld.reply(), -1);
        assert_eq!(Coupon::SoldOut.reply(), -2);
    }
}
