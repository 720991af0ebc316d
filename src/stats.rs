//! Counters since start, shown by `INFO guard` as `guard_<name>`
//! (`redis::info` prints them).

use std::sync::atomic::{AtomicU64, Ordering};

/// One counter. Commands run on Redis's main thread; atomics only make the
/// statics shareable, so relaxed ordering is enough.
pub struct Counter(AtomicU64);

impl Counter {
    const fn new() -> Self {
        Counter(AtomicU64::new(0))
    }

    /// Adds `n`, saturating: a sum that passed 2^64 would otherwise wrap
    /// and show a smaller number. Only Redis's main thread writes, so a
    /// load and a store do it, with no compare-and-swap loop on the hot path.
    pub fn add(&self, n: u64) {
        let sum = self.0.load(Ordering::Relaxed).saturating_add(n);
        self.0.store(sum, Ordering::Relaxed);
    }

    pub fn bump(&self) {
        self.add(1);
    }

    /// Keeps the largest `n` seen: for a counter that is a maximum.
    pub fn raise_to(&self, n: u64) {
        if n > self.get() {
            self.0.store(n, Ordering::Relaxed);
        }
    }

    pub fn get(&self) -> u64 {
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
/// MON.SLIDECHECK calls, and its replies with level > 0.
pub static MON_SLIDECHECK_CALLS: Counter = Counter::new();
pub static MON_SLIDE_CROSSINGS: Counter = Counter::new();
/// MON.DISTINCT calls, and its replies with level > 0.
pub static MON_DISTINCT_CALLS: Counter = Counter::new();
pub static MON_DISTINCT_CROSSINGS: Counter = Counter::new();
/// Alert entries appended to an `ALERT` stream (crossings and clamps).
pub static MON_ALERTS_WRITTEN: Counter = Counter::new();
pub static COUPON_ISSUE_CALLS: Counter = Counter::new();
pub static COUPON_ISSUED: Counter = Counter::new();
pub static COUPON_DUPLICATES: Counter = Counter::new();
pub static COUPON_SOLDOUT: Counter = Counter::new();
pub static COUPON_REVOKED: Counter = Counter::new();
/// Campaigns: new holds, confirmations, releases, expired holds reclaimed.
pub static COUPON_RESERVED: Counter = Counter::new();
pub static COUPON_CONFIRMED: Counter = Counter::new();
pub static COUPON_RELEASED: Counter = Counter::new();
pub static COUPON_EXPIRED: Counter = Counter::new();
/// Ledger entries appended; holds reclaimed by COUPON.RECLAIM; settings
/// changed by COUPON.ALTER; COUPON.RESERVEALL calls, and those refused
/// (-1 or -2).
pub static COUPON_LEDGER_ENTRIES: Counter = Counter::new();
pub static COUPON_RECLAIMED: Counter = Counter::new();
pub static COUPON_ALTERED: Counter = Counter::new();
/// Holds renewed by COUPON.RENEW (not its calls that renew nothing).
pub static COUPON_RENEWED: Counter = Counter::new();
pub static COUPON_RESERVEALL_CALLS: Counter = Counter::new();
pub static COUPON_RESERVEALL_REFUSED: Counter = Counter::new();
/// The most entries one operation moved while a campaign's table of users
/// or request ids grew (see `interned.rs`): the bound on that work, seen
/// from outside.
pub static COUPON_REHASH_MAX_MOVED: Counter = Counter::new();
pub static THROTTLE_CALLS: Counter = Counter::new();
/// CL.THROTTLE replies with limited = 0 (peeks included).
pub static THROTTLE_ALLOWED: Counter = Counter::new();
pub static THROTTLE_LIMITED: Counter = Counter::new();
/// Refused CL.THROTTLE and CL.THROTTLEALL calls whose `BLOCK` set (or
/// found) their refusing cells blocked: one per call.
pub static THROTTLE_BLOCKED: Counter = Counter::new();
/// CL.REFUND calls that gave something back (a cell moved or deleted).
pub static THROTTLE_REFUNDS: Counter = Counter::new();
/// CL.THROTTLEALL calls, and how each ended (by its `limited`).
pub static THROTTLE_ALL_CALLS: Counter = Counter::new();
pub static THROTTLE_ALL_ALLOWED: Counter = Counter::new();
pub static THROTTLE_ALL_LIMITED: Counter = Counter::new();
/// CL.QUOTA calls, and how each ended (peeks included).
pub static QUOTA_CALLS: Counter = Counter::new();
pub static QUOTA_ALLOWED: Counter = Counter::new();
pub static QUOTA_LIMITED: Counter = Counter::new();
/// Allocations of module values that active defragmentation moved.
pub static DEFRAG_MOVES: Counter = Counter::new();
/// Replies that are the module's own failure, not the caller's: a caught
/// panic, an effect its value refused (see `ErrorReply::internal`). Any
/// non-zero value is a bug to report.
pub static INTERNAL_ERRORS: Counter = Counter::new();

/// Every counter with its INFO field name, in the order INFO prints them.
pub const FIELDS: [(&str, &Counter); 39] = [
    ("mon_incrcheck_calls", &MON_INCRCHECK_CALLS),
    ("mon_crossings", &MON_CROSSINGS),
    ("mon_decrclamp_calls", &MON_DECRCLAMP_CALLS),
    ("mon_clamps", &MON_CLAMPS),
    ("mon_clamped_amount", &MON_CLAMPED_AMOUNT),
    ("mon_slidecheck_calls", &MON_SLIDECHECK_CALLS),
    ("mon_slide_crossings", &MON_SLIDE_CROSSINGS),
    ("mon_distinct_calls", &MON_DISTINCT_CALLS),
    ("mon_distinct_crossings", &MON_DISTINCT_CROSSINGS),
    ("mon_alerts_written", &MON_ALERTS_WRITTEN),
    ("coupon_issue_calls", &COUPON_ISSUE_CALLS),
    ("coupon_issued", &COUPON_ISSUED),
    ("coupon_duplicates", &COUPON_DUPLICATES),
    ("coupon_soldout", &COUPON_SOLDOUT),
    ("coupon_revoked", &COUPON_REVOKED),
    ("coupon_reserved", &COUPON_RESERVED),
    ("coupon_confirmed", &COUPON_CONFIRMED),
    ("coupon_released", &COUPON_RELEASED),
    ("coupon_expired", &COUPON_EXPIRED),
    ("coupon_ledger_entries", &COUPON_LEDGER_ENTRIES),
    ("coupon_reclaimed", &COUPON_RECLAIMED),
    ("coupon_altered", &COUPON_ALTERED),
    ("coupon_renewed", &COUPON_RENEWED),
    ("coupon_reserveall_calls", &COUPON_RESERVEALL_CALLS),
    ("coupon_reserveall_refused", &COUPON_RESERVEALL_REFUSED),
    ("coupon_rehash_max_moved", &COUPON_REHASH_MAX_MOVED),
    ("throttle_calls", &THROTTLE_CALLS),
    ("throttle_allowed", &THROTTLE_ALLOWED),
    ("throttle_limited", &THROTTLE_LIMITED),
    ("throttle_blocked", &THROTTLE_BLOCKED),
    ("throttle_refunds", &THROTTLE_REFUNDS),
    ("throttle_all_calls", &THROTTLE_ALL_CALLS),
    ("throttle_all_allowed", &THROTTLE_ALL_ALLOWED),
    ("throttle_all_limited", &THROTTLE_ALL_LIMITED),
    ("quota_calls", &QUOTA_CALLS),
    ("quota_allowed", &QUOTA_ALLOWED),
    ("quota_limited", &QUOTA_LIMITED),
    ("defrag_moves", &DEFRAG_MOVES),
    ("internal_errors", &INTERNAL_ERRORS),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sum_saturates_instead_of_wrapping() {
        let counter = Counter::new();
        counter.add(u64::MAX - 1);
        counter.add(5);
        assert_eq!(counter.get(), u64::MAX);
        counter.bump();
        assert_eq!(counter.get(), u64::MAX);
    }
}
