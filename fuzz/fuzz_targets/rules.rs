//! The rules agree with plain reference definitions for any numbers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_guard::coupon::outcome::Coupon;
use redis_guard::coupon::set as coupon_rules;
use redis_guard::mon::rules::{self, Refund};
use redis_guard::throttle::gcra::{self, Rate};

fn numbers(data: &[u8]) -> Vec<i64> {
    data.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let n = numbers(data);
    if n.len() < 3 {
        return;
    }
    let (prev, increment, amount) = (n[0], n[1], n[2]);

    // crossing level: the highest crossed threshold, by brute force
    let mut thresholds: Vec<i64> = n[3..]
        .iter()
        .map(|t| t.unsigned_abs().min(i64::MAX as u64) as i64)
        .filter(|t| *t > 0)
        .collect();
    thresholds.sort();
    thresholds.dedup();
    thresholds.truncate(32);
    if let Some(current) = prev.checked_add(increment) {
        let expected = (0..thresholds.len())
            .filter(|&i| prev < thresholds[i] && thresholds[i] <= current)
            .map(|i| i + 1)
            .max()
            .unwrap_or(0);
        assert_eq!(rules::crossing_level(prev, current, &thresholds), expected);
        if increment > 0 {
            assert_eq!(
                rules::count(Some(prev), true, increment, &thresholds).map(|c| c.value),
                Ok(current)
            );
        }
    } else {
        assert!(rules::count(Some(prev), true, increment, &thresholds).is_err());
    }

    // refunds never go below zero and account for every unit
    if amount > 0 {
        match rules::refund(Some(prev), amount) {
            Refund::Nothing => assert!(prev <= 0),
            Refund::Write { value, lost } => {
                assert!(prev > 0 && value >= 0 && lost >= 0);
                assert_eq!(
                    i128::from(prev) - i128::from(amount),
                    i128::from(value) - i128::from(lost)
                );
                assert!(value == 0 || lost == 0);
            }
        }
    }

    // coupons: a holder always hears -1; otherwise the limit decides
    let (issued, limit) = (
        prev.unsigned_abs().min(1 << 40) as i64,
        (amount.unsigned_abs() % 1000 + 1) as i64,
    );
    match coupon_rules::coupon(increment % 2 == 0, issued, limit) {
        Coupon::AlreadyHeld => assert!(increment % 2 == 0),
        Coupon::SoldOut => assert!(increment % 2 != 0 && issued >= limit),
        Coupon::Issued { rank, sold_out } => {
            assert!(issued < limit && rank == issued + 1 && sold_out == (rank == limit));
        }
    }

    // GCRA: never a panic; the reply stays within its bounds, and only an
    // allowed request that takes something stores a later TAT
    let (burst, count, period, quantity) = (
        (n[0].unsigned_abs() % 1000) as i64,
        (n[1].unsigned_abs() % 1000 + 1) as i64,
        (n[2].unsigned_abs() % 100_000 + 1) as i64,
        (increment.unsigned_abs() % 1100) as i64,
    );
    if let Ok(rate) = Rate::new(burst, count, period, quantity) {
        let stored = n.get(3).copied();
        let now = (amount.unsigned_abs() >> 2) as i64;
        if let Ok(decision) = gcra::decide(stored, now, &rate) {
            assert!((0..=rate.limit).contains(&decision.remaining));
            assert!(decision.reset_after_s >= 0 && decision.retry_after_s >= -1);
            assert_eq!(
                decision.limited,
                decision.retry_after_s != -1 || quantity > rate.limit
            );
            match decision.store {
                Some(stored_tat) => {
                    assert!(!decision.limited && quantity > 0 && stored_tat.tat_ns > now);
                    assert!(
                        i128::from(stored_tat.expires_at_ms) * 1_000_000
                            >= i128::from(stored_tat.tat_ns)
                    );
                }
                None => assert!(decision.limited || quantity == 0),
            }
        }
    }
});
