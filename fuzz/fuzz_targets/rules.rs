//! The rules agree with plain reference definitions for any numbers.
#![no_main]
#![allow(dead_code)]

// The module's pure sources, compiled in as they are (the module itself
// builds as a cdylib only).
#[path = "../../src/args.rs"]
mod args;
#[path = "../../src/reply.rs"]
mod reply;
#[path = "../../src/rules.rs"]
mod rules;

use libfuzzer_sys::fuzz_target;
use rules::{Coupon, Refund};

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
    if let Some(current) = rules::add(prev, increment) {
        let expected = (0..thresholds.len())
            .filter(|&i| prev < thresholds[i] && thresholds[i] <= current)
            .map(|i| i + 1)
            .max()
            .unwrap_or(0);
        assert_eq!(rules::crossing_level(prev, current, &thresholds), expected);
    } else {
        assert!(prev.checked_add(increment).is_none());
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
    match rules::coupon(increment % 2 == 0, issued, limit) {
        Coupon::AlreadyHeld => assert!(increment % 2 == 0),
        Coupon::SoldOut => assert!(increment % 2 != 0 && issued >= limit),
        Coupon::Issued { rank, sold_out } => {
            assert!(issued < limit && rank == issued + 1 && sold_out == (rank == limit));
        }
    }
});
