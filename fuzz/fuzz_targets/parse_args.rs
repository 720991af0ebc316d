//! Argument parsing never panics, accepts integers only in INCRBY's
//! canonical form, and every request it accepts is well formed.
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

const NOW_MS: i64 = 1_800_000_000_000;

fuzz_target!(|data: &[u8]| {
    // 0xFE separates arguments; every other byte (NUL included) is data.
    let parts: Vec<&[u8]> = data.split(|b| *b == 0xFE).collect();

    for part in &parts {
        if let Some(n) = args::parse_i64(part) {
            assert_eq!(
                n.to_string().as_bytes(),
                *part,
                "only the canonical form parses"
            );
        }
    }

    match args::IncrCheck::parse(&parts, NOW_MS) {
        Ok(request) => {
            let thresholds = request.thresholds.as_slice();
            assert!(request.increment > 0);
            assert!((1..=args::MAX_THRESHOLDS).contains(&thresholds.len()));
            assert!(thresholds.iter().all(|t| *t > 0));
            assert!(thresholds.windows(2).all(|w| w[0] < w[1]));
            let window = args::parse_i64(parts[1]).unwrap();
            assert_eq!(
                rules::window_expiry_ms(NOW_MS, window),
                Some(request.window_expires_at_ms)
            );
        }
        Err(error) => assert_standard(&error),
    }
    match args::DecrClamp::parse(&parts) {
        Ok(request) => assert!(request.amount > 0),
        Err(error) => assert_standard(&error),
    }
    match args::CouponIssue::parse(&parts) {
        Ok(request) => assert!(request.limit > 0 && !parts[0].is_empty()),
        Err(error) => assert_standard(&error),
    }
    if let Err(error) = args::CouponRevoke::parse(&parts) {
        assert_standard(&error);
    }
});

fn assert_standard(error: &reply::ErrorReply) {
    assert!(error.message().starts_with("ERR "), "{error}");
}
