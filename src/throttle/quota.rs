//! CL.QUOTA's rule: a fixed window of `limit` units that refuses what does
//! not fit, as a pure function of the stored count, its expiry and the
//! clock. Sums are taken in i128, so no stored value can overflow them.

/// What the key holds: the units used and when its window ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored {
    pub used: i64,
    /// `None`: a count without a TTL (PERSIST took it), which gets a new
    /// window from this call, as MON.INCRCHECK's counter does.
    pub expires_at_ms: Option<i64>,
}

/// The call's write: the count after it and its window's absolute end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    pub used: i64,
    pub expires_at_ms: i64,
    /// This call starts the window (the key gets its expiry now).
    pub starts_window: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub limited: bool,
    /// `[limited, limit, remaining, retry_after, reset_after]`.
    pub reply: [i64; 5],
    /// `None`: nothing written (a refusal, a peek).
    pub write: Option<Write>,
}

/// Decides a call asking `quantity` of `limit` at `now_ms`, where a window
/// this call starts would end at `new_window_ends_ms`.
pub fn decide(
    stored: Option<Stored>,
    limit: i64,
    quantity: i64,
    now_ms: i64,
    new_window_ends_ms: i64,
) -> Decision {
    let used = stored.map_or(0, |s| s.used);
    let running = stored.and_then(|s| s.expires_at_ms);
    let ends_ms = running.unwrap_or(new_window_ends_ms);
    let reset_after = seconds_up(i128::from(ends_ms) - i128::from(now_ms));
    let after = i128::from(used) + i128::from(quantity);
    let limited = after > i128::from(limit);
    let left_from = if limited { i128::from(used) } else { after };
    let remaining = (i128::from(limit) - left_from).clamp(0, i128::from(i64::MAX)) as i64;
    let retry_after = if !limited || quantity > limit {
        -1
    } else {
        reset_after
    };
    let write = (!limited && quantity > 0).then(|| Write {
        // Fits below `limit`, so within i64.
        used: after as i64,
        expires_at_ms: ends_ms,
        starts_window: running.is_none(),
    });
    Decision {
        limited,
        reply: [
            i64::from(limited),
            limit,
            remaining,
            retry_after,
            reset_after,
        ],
        write,
    }
}

/// Whole seconds, rounded up, of a span in ms (never below 0).
fn seconds_up(ms: i128) -> i64 {
    let s = (ms.max(0) + 999) / 1000;
    s.min(i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000;

    fn stored(used: i64, ends_in_ms: i64) -> Option<Stored> {
        Some(Stored {
            used,
            expires_at_ms: Some(NOW + ends_in_ms),
        })
    }

    #[test]
    fn a_missing_key_starts_a_window_with_the_first_units() {
        let d = decide(None, 5, 2, NOW, NOW + 60_000);
        assert_eq!(d.reply, [0, 5, 3, -1, 60]);
        assert_eq!(
            d.write,
            Some(Write {
                used: 2,
                expires_at_ms: NOW + 60_000,
                starts_window: true
            })
        );
    }

    #[test]
    fn what_does_not_fit_is_refused_until_the_window_ends_and_writes_nothing() {
        let d = decide(stored(4, 10_001), 5, 2, NOW, NOW + 60_000);
        assert_eq!(d.reply, [1, 5, 1, 11, 11]);
        assert_eq!(d.write, None);
        // Exactly the rest fits, and keeps the running window.
        let d = decide(stored(4, 10_001), 5, 1, NOW, NOW + 60_000);
        assert_eq!(d.reply, [0, 5, 0, -1, 11]);
        assert_eq!(d.write.map(|w| (w.used, w.starts_window)), Some((5, false)));
    }

    #[test]
    fn a_quantity_above_the_limit_can_never_fit() {
        assert_eq!(decide(None, 5, 6, NOW, NOW + 1_000).reply, [1, 5, 5, -1, 1]);
    }

    #[test]
    fn a_peek_writes_nothing() {
        let d = decide(None, 5, 0, NOW, NOW + 86_400_000);
        assert_eq!((d.reply, d.write), ([0, 5, 5, -1, 86_400], None));
        // Over the limit (it was lowered): even a peek is limited.
        assert_eq!(
            decide(stored(7, 500), 5, 0, NOW, NOW).reply,
            [1, 5, 0, 1, 1]
        );
    }

    #[test]
    fn a_count_without_ttl_gets_a_new_window() {
        let persisted = Some(Stored {
            used: 1,
            expires_at_ms: None,
        });
        let w = decide(persisted, 5, 1, NOW, NOW + 2_000).write.unwrap();
        assert_eq!(
            (w.used, w.expires_at_ms, w.starts_window),
            (2, NOW + 2_000, true)
        );
    }

    #[test]
    fn extreme_counts_neither_overflow_nor_fit_wrongly() {
        let d = decide(stored(i64::MAX, 1), i64::MAX, 1, NOW, NOW);
        assert_eq!(d.reply[..3], [1, i64::MAX, 0]);
        let d = decide(stored(i64::MIN, 1), 1, 1, NOW, NOW);
        assert_eq!(d.reply[..3], [0, 1, i64::MAX]);
        assert_eq!(d.write.unwrap().used, i64::MIN + 1);
    }
}
