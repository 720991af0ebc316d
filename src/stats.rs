//! Counters since start, shown by `INFO guard` as `guard_<name>`.

use std::sync::atomic::{AtomicU64, Ordering};

use redis_module::{InfoContext, RedisResult};
use redis_module_macros::info_command_handler;

/// One counter. Commands run on Redis's main thread; atomics only make the
/// statics shareable, so relaxed ordering is enough.
pub struct Counter(AtomicU64);

impl Counter {
    const fn new() -> Self {
        Counter(AtomicU64::new(0))
    }

    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub fn bump(&self) {
        self.add(1);
    }

    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Calls that reached a handler (errors included).
pub static MON_INCRCHECK_CALLS: Counter = Counter::new();
/// MON.INCRCHECK replies with level > 0.
pub static MON_CROSSINGS: Counter = Counter::new();
pub static MON_DECRCLAMP_CALLS: Counter = Counter::new();
/// Refunds that hit 0 with an excess left over.
pub static MON_CLAMPS: Counter = Counter::new();
/// Sum of the excess those clamps swallowed.
pub static MON_CLAMPED_AMOUNT: Counter = Counter::new();
pub static COUPON_ISSUE_CALLS: Counter = Counter::new();
pub static COUPON_ISSUED: Counter = Counter::new();
pub static COUPON_DUPLICATES: Counter = Counter::new();
pub static COUPON_SOLDOUT: Counter = Counter::new();
pub static COUPON_REVOKED: Counter = Counter::new();

const FIELDS: [(&str, &Counter); 10] = [
    ("mon_incrcheck_calls", &MON_INCRCHECK_CALLS),
    ("mon_crossings", &MON_CROSSINGS),
    ("mon_decrclamp_calls", &MON_DECRCLAMP_CALLS),
    ("mon_clamps", &MON_CLAMPS),
    ("mon_clamped_amount", &MON_CLAMPED_AMOUNT),
    ("coupon_issue_calls", &COUPON_ISSUE_CALLS),
    ("coupon_issued", &COUPON_ISSUED),
    ("coupon_duplicates", &COUPON_DUPLICATES),
    ("coupon_soldout", &COUPON_SOLDOUT),
    ("coupon_revoked", &COUPON_REVOKED),
];

/// The module's INFO section (named after the module: `INFO guard`).
/// The builder API can only add `guard_<name>` sections, hence the
/// deprecated calls that address the module's own section.
#[info_command_handler]
#[allow(deprecated)]
fn info(ctx: &InfoContext, _for_crash_report: bool) -> RedisResult<()> {
    ctx.add_info_section(None);
    for (name, counter) in FIELDS {
        // Saturate rather than wrap: INFO prints signed 64-bit integers.
        ctx.add_info_field_long_long(name, i64::try_from(counter.get()).unwrap_or(i64::MAX));
    }
    Ok(())
}
