//! The generic cell rate algorithm (GCRA), as pure functions of the stored
//! arrival time, the clock and the arguments.
//!
//! A limiter allows `count` requests per `period`, at most `max_burst + 1`
//! at once. It keeps one number, the theoretical arrival time (TAT): when
//! the limiter would be back to full. Each allowed request pushes it
//! `emission interval × quantity` later; a request is refused while that
//! would put the TAT more than the burst tolerance ahead of now. Times are
//! integer nanoseconds since the Unix epoch, as redis-cell stores them.
//! Intermediate sums are taken in i128, so no i64 edge can overflow.

use crate::reply::ErrorReply;

const NS_PER_S: i64 = 1_000_000_000;
const NS_PER_MS: i64 = 1_000_000;

/// A limiter's arguments, checked and turned into nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// `max_burst + 1`: how many requests fit at once.
    pub limit: i64,
    /// `period / count`: the time one request takes up.
    pub emission_ns: i64,
    /// `emission × limit`: how far ahead of now the TAT may run.
    pub tolerance_ns: i64,
    /// `emission × quantity`: how far this request moves the TAT.
    pub increment_ns: i64,
}

fn too_large(name: &str, why: &str) -> ErrorReply {
    ErrorReply::owned(format!("ERR {name} is too large: {why}"))
}

impl Rate {
    /// `max_burst >= 0`, `count >= 1`, `period >= 1` (seconds) and
    /// `quantity >= 0`, as parsed. Products that overflow, and an emission
    /// interval that rounds to 0 ns, are errors naming the argument.
    pub fn new(
        max_burst: i64,
        count: i64,
        period_s: i64,
        quantity: i64,
    ) -> Result<Rate, ErrorReply> {
        let period_ns = period_s
            .checked_mul(NS_PER_S)
            .ok_or_else(|| too_large("period", "it overflows in nanoseconds"))?;
        let emission_ns = period_ns / count;
        if emission_ns == 0 {
            return Err(too_large("count", "period / count rounds to 0 nanoseconds"));
        }
        let limit = max_burst
            .checked_add(1)
            .ok_or_else(|| too_large("max_burst", "max_burst + 1 overflows"))?;
        let tolerance_ns = emission_ns
            .checked_mul(limit)
            .ok_or_else(|| too_large("max_burst", "the burst overflows in nanoseconds"))?;
        let increment_ns = emission_ns
            .checked_mul(quantity)
            .ok_or_else(|| too_large("quantity", "it overflows in nanoseconds"))?;
        Ok(Rate {
            limit,
            emission_ns,
            tolerance_ns,
            increment_ns,
        })
    }
}

impl Rate {
    /// The same limiter asked with quantity 0: its state, unconsumed.
    pub fn peek(&self) -> Rate {
        Rate {
            increment_ns: 0,
            ..*self
        }
    }
}

/// What CL.THROTTLE answers, and what it stores when it allowed something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub limited: bool,
    pub limit: i64,
    /// Requests of one that would still be allowed right after this call.
    pub remaining: i64,
    /// Seconds until this request would be allowed, rounded up; -1 when it
    /// was allowed, or when it never can be (quantity above the limit).
    pub retry_after_s: i64,
    /// Seconds until the limiter is full again, rounded up.
    pub reset_after_s: i64,
    /// The new TAT to store; `None`: write nothing (limited, or a peek with
    /// quantity 0).
    pub store: Option<Stored>,
}

/// A TAT to store, and when its key expires: the first millisecond at or
/// after the TAT, when the limiter is full again and the key no longer
/// needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored {
    pub tat_ns: i64,
    pub expires_at_ms: i64,
}

impl Decision {
    /// `[limited, limit, remaining, retry_after, reset_after]`
    pub fn reply(&self) -> [i64; 5] {
        [
            i64::from(self.limited),
            self.limit,
            self.remaining,
            self.retry_after_s,
            self.reset_after_s,
        ]
    }
}

/// `ceil(ns / unit)` for `ns >= 0`, in i64 (any i128 that came from i64
/// differences fits once divided by a unit of at least 10^6).
fn ceil_div(ns: i128, unit: i64) -> i64 {
    let unit = i128::from(unit);
    ((ns + unit - 1) / unit) as i64
}

/// Decides a request at `now_ns` against the stored TAT (`None`: no key).
/// A TAT in the past, negative included, means a full limiter, as no key
/// does. The only error is a TAT that would pass i64::MAX.
pub fn decide(stored_tat: Option<i64>, now_ns: i64, rate: &Rate) -> Result<Decision, ErrorReply> {
    let now = i128::from(now_ns);
    let tat = stored_tat.map_or(now, |tat| i128::from(tat).max(now));
    let increment = i128::from(rate.increment_ns);
    let tolerance = i128::from(rate.tolerance_ns);
    let new_tat = tat + increment;
    let allow_at = new_tat - tolerance;

    let (limited, ttl, retry_after_s) = if allow_at > now {
        // Refused. A request larger than the whole burst never fits: -1.
        let retry = if increment <= tolerance {
            ceil_div(allow_at - now, NS_PER_S)
        } else {
            -1
        };
        (true, tat - now, retry)
    } else {
        (false, new_tat - now, -1)
    };

    let store = if !limited && increment > 0 {
        let tat_ns = i64::try_from(new_tat).map_err(|_| {
            ErrorReply::new("ERR quantity is too large: the arrival time would overflow")
        })?;
        Some(Stored {
            tat_ns,
            expires_at_ms: ceil_div(new_tat, NS_PER_MS),
        })
    } else {
        None
    };

    let room = tolerance - ttl;
    let remaining = if room > 0 {
        (room / i128::from(rate.emission_ns)) as i64
    } else {
        0
    };
    Ok(Decision {
        limited,
        limit: rate.limit,
        remaining,
        retry_after_s,
        reset_after_s: ceil_div(ttl, NS_PER_S),
        store,
    })
}

/// `BLOCK seconds` as nanoseconds, when `now_ns + seconds` in ns fits
/// i64 (`None` otherwise: an error naming `block`).
pub fn block_ns(seconds: i64, now_ns: i64) -> Option<i64> {
    let ns = seconds.checked_mul(NS_PER_S)?;
    now_ns.checked_add(ns).map(|_| ns)
}

/// CL.THROTTLE's rule with `BLOCK` (`block_ns`: the penalty, `None`
/// without the option). A refused request that could ever be allowed
/// sets its cell so that its next request of one is allowed `block_ns`
/// from now and not before; an allowed one, or one whose quantity never
/// fits (`retry_after` -1), is [`decide`]'s alone.
pub fn decide_blocking(
    stored_tat: Option<i64>,
    now_ns: i64,
    rate: &Rate,
    block_ns: Option<i64>,
) -> Result<Decision, ErrorReply> {
    let decision = decide(stored_tat, now_ns, rate)?;
    match block_ns {
        Some(block_ns) if blockable(&decision) => blocked(stored_tat, now_ns, rate, block_ns),
        _ => Ok(decision),
    }
}

/// Does `BLOCK` act on this decision: refused, and not for good?
pub fn blockable(decision: &Decision) -> bool {
    decision.limited && decision.retry_after_s != -1
}

/// A refused cell blocked for `block_ns`: its arrival time becomes
/// `max(stored, now + block + max_burst × interval)` (the burst refills
/// from there), and the reply is the request's against that cell. A
/// stored time already that late is kept: nothing to store. The only
/// error is an arrival time past i64::MAX (nothing stored then).
pub fn blocked(
    stored_tat: Option<i64>,
    now_ns: i64,
    rate: &Rate,
    block_ns: i64,
) -> Result<Decision, ErrorReply> {
    let target = i128::from(now_ns) + i128::from(block_ns) + i128::from(rate.tolerance_ns)
        - i128::from(rate.emission_ns);
    if stored_tat.is_some_and(|tat| i128::from(tat) >= target) {
        return decide(stored_tat, now_ns, rate);
    }
    let tat_ns = i64::try_from(target)
        .map_err(|_| ErrorReply::new("ERR block is too large: the arrival time would overflow"))?;
    let mut decision = decide(Some(tat_ns), now_ns, rate)?;
    debug_assert!(decision.limited);
    decision.store = Some(Stored {
        tat_ns,
        expires_at_ms: ceil_div(target, NS_PER_MS),
    });
    Ok(decision)
}

/// What CL.REFUND does to a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// A missing key or a full limiter: nothing to give back, nothing
    /// written.
    Nothing,
    /// The earlier arrival time to store.
    Store(Stored),
    /// The refund made the limiter full: the key goes.
    Delete,
}

/// CL.REFUND: `rate.increment_ns` (quantity × interval) given back to the
/// cell at `now_ns`. The arrival time moves back by that much, never
/// before now (a limiter never holds more than `max_burst + 1`). Returns
/// the state after the refund, as CL.THROTTLE reports it with quantity 0,
/// and what to write.
pub fn refund(stored_tat: Option<i64>, now_ns: i64, rate: &Rate) -> (Decision, Settle) {
    let peek = rate.peek();
    let settle = match stored_tat {
        Some(tat) if tat > now_ns => {
            let back = i128::from(tat) - i128::from(rate.increment_ns);
            if back <= i128::from(now_ns) {
                Settle::Delete
            } else {
                // now < back < tat: an i64.
                Settle::Store(Stored {
                    tat_ns: back as i64,
                    expires_at_ms: ceil_div(back, NS_PER_MS),
                })
            }
        }
        _ => Settle::Nothing,
    };
    let after = match settle {
        Settle::Nothing => stored_tat,
        Settle::Store(stored) => Some(stored.tat_ns),
        Settle::Delete => None,
    };
    // A peek stores nothing and cannot fail.
    let decision = decide(after, now_ns, &peek).expect("a peek never overflows");
    (decision, settle)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000 * NS_PER_S;
    const S: i64 = NS_PER_S;

    /// 1 per second, burst 2 (limit 3), quantity 1.
    fn rate(quantity: i64) -> Rate {
        Rate::new(2, 1, 1, quantity).unwrap()
    }

    fn allowed(decision: &Decision) -> i64 {
        decision
            .store
            .expect("an allowed request stores its TAT")
            .tat_ns
    }

    #[test]
    fn a_fresh_limiter_allows_the_burst_then_limits() {
        let mut tat = None;
        let mut remaining = Vec::new();
        for _ in 0..3 {
            let decision = decide(tat, NOW, &rate(1)).unwrap();
            assert!(!decision.limited);
            remaining.push(decision.remaining);
            tat = Some(allowed(&decision));
        }
        assert_eq!(remaining, [2, 1, 0]);
        let refused = decide(tat, NOW, &rate(1)).unwrap();
        assert_eq!(refused.reply(), [1, 3, 0, 1, 3]);
        assert_eq!(refused.store, None);
    }

    #[test]
    fn exactly_at_allow_at_is_allowed_and_one_ns_before_is_not() {
        // Full burst used at NOW: TAT = NOW + 3 s, allow_at for one more
        // = NOW + 1 s.
        let tat = Some(NOW + 3 * S);
        let before = decide(tat, NOW + S - 1, &rate(1)).unwrap();
        assert!(before.limited);
        assert_eq!(before.retry_after_s, 1, "1 ns to wait rounds up to 1 s");
        let at = decide(tat, NOW + S, &rate(1)).unwrap();
        assert!(!at.limited);
        assert_eq!(allowed(&at), NOW + 4 * S);
        assert_eq!(at.remaining, 0);
    }

    #[test]
    fn times_round_up_to_whole_seconds() {
        // 1 per 3 s, limit 1: after one request, 3 s to reset; at +0.5 s a
        // second request must wait 2.5 s: 3 (redis-cell says 2).
        let rate = Rate::new(0, 1, 3, 1).unwrap();
        let first = decide(None, NOW, &rate).unwrap();
        assert_eq!(first.reply(), [0, 1, 0, -1, 3]);
        let second = decide(Some(allowed(&first)), NOW + S / 2, &rate).unwrap();
        assert_eq!(second.reply(), [1, 1, 0, 3, 3]);
    }

    #[test]
    fn the_key_expires_at_the_first_millisecond_at_or_after_the_tat() {
        let rate = Rate::new(0, 3, 1, 1).unwrap(); // 333_333_333 ns each
        let decision = decide(None, NOW, &rate).unwrap();
        let stored = decision.store.unwrap();
        assert_eq!(stored.tat_ns, NOW + 333_333_333);
        assert_eq!(stored.expires_at_ms, NOW / NS_PER_MS + 334);
        let exact = decide(None, NOW, &Rate::new(0, 1, 1, 1).unwrap()).unwrap();
        assert_eq!(exact.store.unwrap().expires_at_ms, (NOW + S) / NS_PER_MS);
    }

    #[test]
    fn quantity_zero_peeks_and_stores_nothing() {
        let fresh = decide(None, NOW, &rate(0)).unwrap();
        assert_eq!(fresh.reply(), [0, 3, 3, -1, 0]);
        assert_eq!(fresh.store, None);
        let busy = decide(Some(NOW + 2 * S), NOW, &rate(0)).unwrap();
        assert_eq!(busy.reply(), [0, 3, 1, -1, 2]);
        assert_eq!(busy.store, None);
    }

    #[test]
    fn a_quantity_larger_than_the_burst_is_refused_for_good() {
        let decision = decide(None, NOW, &rate(4)).unwrap();
        assert_eq!(decision.reply(), [1, 3, 3, -1, 0]);
        // Exactly the limit fits at once.
        let whole = decide(None, NOW, &rate(3)).unwrap();
        assert_eq!(whole.reply(), [0, 3, 0, -1, 3]);
    }

    #[test]
    fn a_past_or_negative_tat_is_a_full_limiter() {
        let fresh = decide(None, NOW, &rate(1)).unwrap();
        for stale in [NOW - 1, 0, -5, i64::MIN] {
            assert_eq!(
                decide(Some(stale), NOW, &rate(1)).unwrap(),
                fresh,
                "{stale}"
            );
        }
    }

    #[test]
    fn remaining_never_goes_negative_when_the_burst_shrank() {
        // A TAT far ahead (written with a larger burst) under a small one.
        let decision = decide(Some(NOW + 100 * S), NOW, &rate(1)).unwrap();
        assert!(decision.limited);
        assert_eq!(decision.remaining, 0);
        assert_eq!(decision.reset_after_s, 100);
        assert_eq!(decision.retry_after_s, 98);
    }

    #[test]
    fn i64_edges_are_errors_or_exact_never_overflows() {
        assert!(Rate::new(0, 1, i64::MAX / NS_PER_S + 1, 1)
            .unwrap_err()
            .message()
            .starts_with("ERR period "));
        assert!(Rate::new(0, 1_000_000_001, 1, 1)
            .unwrap_err()
            .message()
            .starts_with("ERR count "));
        assert!(Rate::new(i64::MAX, 1, 1, 1)
            .unwrap_err()
            .message()
            .starts_with("ERR max_burst "));
        assert!(Rate::new(i64::MAX / NS_PER_S, 1, 1, 1)
            .unwrap_err()
            .message()
            .starts_with("ERR max_burst "));
        assert!(Rate::new(0, 1, 1, i64::MAX / NS_PER_S + 1)
            .unwrap_err()
            .message()
            .starts_with("ERR quantity "));
        // The largest tolerance there is, against the largest TATs.
        let wide = Rate::new(i64::MAX / NS_PER_S - 1, 1, 1, 1).unwrap();
        let refused = decide(Some(i64::MAX), 0, &wide).unwrap();
        assert!(refused.limited);
        assert_eq!(refused.reset_after_s, ceil_div(i64::MAX.into(), NS_PER_S));
        let near_max = decide(Some(i64::MAX - 1), i64::MAX - 1, &rate(1));
        assert!(near_max.unwrap_err().message().contains("overflow"));
        let at_max = decide(Some(i64::MAX - S), i64::MAX - S, &rate(1)).unwrap();
        assert_eq!(allowed(&at_max), i64::MAX);
        assert_eq!(
            at_max.store.unwrap().expires_at_ms,
            i64::MAX / NS_PER_MS + 1
        );
    }

    #[test]
    fn block_sets_the_next_request_s_seconds_from_now_and_the_burst_refills_from_there() {
        // Limit 3, 1 per second, all 3 used at NOW: refused for 1 s.
        let full = Some(NOW + 3 * S);
        let decision = decide_blocking(full, NOW, &rate(1), Some(10 * S)).unwrap();
        // now + 10 s + max_burst (2) × 1 s.
        let stored = decision.store.expect("a blocked cell is written");
        assert_eq!(stored.tat_ns, NOW + 12 * S);
        assert_eq!(stored.expires_at_ms, (NOW + 12 * S) / NS_PER_MS);
        assert_eq!(decision.reply(), [1, 3, 0, 10, 12]);
        // 1 ns before the 10 s: refused; at 10 s: allowed, then the burst
        // refills at one a second.
        let tat = Some(stored.tat_ns);
        assert!(decide(tat, NOW + 10 * S - 1, &rate(1)).unwrap().limited);
        assert!(!decide(tat, NOW + 10 * S, &rate(1)).unwrap().limited);
        assert_eq!(decide(tat, NOW + 12 * S, &rate(0)).unwrap().remaining, 3);
        // Quantity 2 waits its second place too.
        let two = decide_blocking(full, NOW, &rate(2), Some(10 * S)).unwrap();
        assert_eq!(two.reply(), [1, 3, 0, 11, 12]);
    }

    #[test]
    fn block_keeps_a_later_arrival_time_and_ignores_allowed_and_hopeless_calls() {
        let later = Some(NOW + 100 * S);
        let kept = decide_blocking(later, NOW, &rate(1), Some(10 * S)).unwrap();
        assert_eq!(kept, decide(later, NOW, &rate(1)).unwrap());
        assert_eq!(kept.store, None);
        // Exactly as late: nothing to write either.
        let same = Some(NOW + 12 * S);
        assert_eq!(
            decide_blocking(same, NOW, &rate(1), Some(10 * S))
                .unwrap()
                .store,
            None
        );
        // Allowed: BLOCK changes nothing.
        assert_eq!(
            decide_blocking(None, NOW, &rate(1), Some(10 * S)).unwrap(),
            decide(None, NOW, &rate(1)).unwrap()
        );
        // A quantity that never fits blocks nothing.
        let never = decide_blocking(None, NOW, &rate(4), Some(10 * S)).unwrap();
        assert_eq!(never, decide(None, NOW, &rate(4)).unwrap());
        assert!(!blockable(&never));
        // A block past i64 is an error, never a wrap.
        assert_eq!(block_ns(1, i64::MAX - S), Some(S));
        assert_eq!(block_ns(1, i64::MAX - S + 1), None);
        assert_eq!(block_ns(i64::MAX / NS_PER_S + 1, 0), None);
        let error = blocked(None, i64::MAX - S, &rate(1), S).unwrap_err();
        assert!(error.message().starts_with("ERR block "), "{error}");
    }

    #[test]
    fn refund_moves_the_arrival_time_back_never_before_now() {
        // 3 in flight of 3; give 2 back: one in flight.
        let (after, settle) = refund(Some(NOW + 3 * S), NOW, &rate(2));
        assert_eq!(
            settle,
            Settle::Store(Stored {
                tat_ns: NOW + S,
                expires_at_ms: (NOW + S) / NS_PER_MS
            })
        );
        assert_eq!(after.reply(), [0, 3, 2, -1, 1]);
        // Giving back more than is in flight makes it full: the key goes.
        let (full, settle) = refund(Some(NOW + 2 * S), NOW, &rate(3));
        assert_eq!(settle, Settle::Delete);
        assert_eq!(full, decide(None, NOW, &rate(0)).unwrap());
        assert_eq!(full.reply(), [0, 3, 3, -1, 0]);
        // Exactly what is in flight: full too.
        assert_eq!(refund(Some(NOW + 2 * S), NOW, &rate(2)).1, Settle::Delete);
        // Nothing in flight: nothing written.
        for stale in [None, Some(NOW), Some(NOW - 1), Some(i64::MIN)] {
            let (after, settle) = refund(stale, NOW, &rate(1));
            assert_eq!(settle, Settle::Nothing, "{stale:?}");
            assert_eq!(after.reply(), [0, 3, 3, -1, 0]);
        }
        // The largest times stay exact.
        let (after, settle) = refund(Some(i64::MAX), 0, &rate(1));
        assert_eq!(
            settle,
            Settle::Store(Stored {
                tat_ns: i64::MAX - S,
                expires_at_ms: (i64::MAX - S) / NS_PER_MS + 1
            })
        );
        assert_eq!(after.remaining, 0);
    }
}
