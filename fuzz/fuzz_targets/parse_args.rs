//! Argument parsing never panics, accepts integers only in INCRBY's
//! canonical form, and every request it accepts is well formed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_guard::coupon::{issue::Issue, revoke::Revoke};
use redis_guard::integer;
use redis_guard::mon::{decrclamp::DecrClamp, incrcheck::IncrCheck, thresholds};
use redis_guard::reply::ErrorReply;
use redis_guard::throttle::cl_throttle::Throttle;

const NOW_MS: i64 = 1_800_000_000_000;

fuzz_target!(|data: &[u8]| {
    // 0xFE separates arguments; every other byte (NUL included) is data.
    let parts: Vec<&[u8]> = data.split(|b| *b == 0xFE).collect();

    for part in &parts {
        if let Some(n) = integer::parse(part) {
            assert_eq!(
                n.to_string().as_bytes(),
                *part,
                "only the canonical form parses"
            );
        }
    }

    match IncrCheck::parse(b"k", &parts, NOW_MS) {
        Ok(request) => {
            let thresholds = request.thresholds.as_slice();
            assert!(request.increment > 0);
            assert!((1..=thresholds::MAX_THRESHOLDS).contains(&thresholds.len()));
            assert!(thresholds.iter().all(|t| *t > 0));
            assert!(thresholds.windows(2).all(|w| w[0] < w[1]));
            let window = integer::parse(parts[1]).unwrap();
            assert_eq!(
                redis_guard::args::span_end_ms(NOW_MS, window),
                Some(request.window_expires_at_ms)
            );
        }
        Err(error) => assert_standard(&error),
    }
    match DecrClamp::parse(b"k", &parts) {
        Ok(request) => assert!(request.amount > 0),
        Err(error) => assert_standard(&error),
    }
    match Issue::parse(&parts) {
        Ok(request) => assert!(request.limit > 0 && !parts[0].is_empty()),
        Err(error) => assert_standard(&error),
    }
    if let Err(error) = Revoke::parse(&parts) {
        assert_standard(&error);
    }
    match Throttle::parse(&parts, NOW_MS * 1_000_000) {
        Ok(request) => {
            let rate = request.rate;
            assert!(rate.limit >= 1 && rate.emission_ns >= 1 && rate.increment_ns >= 0);
            assert_eq!(
                i128::from(rate.tolerance_ns),
                i128::from(rate.emission_ns) * i128::from(rate.limit)
            );
        }
        Err(error) => assert_standard(&error),
    }
});

fn assert_standard(error: &ErrorReply) {
    assert!(error.message().starts_with("ERR "), "{error}");
}
