//! Several limiters judged at one instant, all or nothing: each exactly as
//! CL.THROTTLE judges it alone ([`gcra::decide`]), and either every one
//! consumes or none does. A request that one limit refuses takes no place
//! from the others.

use super::gcra::{self, Decision, Rate};
use crate::reply::ErrorReply;

/// What CL.THROTTLEALL answers and stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub limited: bool,
    /// -1 when allowed, or when a refusing limiter can never allow this
    /// quantity; else the longest wait among the refusing limiters.
    pub retry_after_s: i64,
    /// Per limiter, in order, the decision it answers with: its own with
    /// this quantity when the call is allowed (its `store` is what to
    /// write); when refused, a refusing limiter's own and for the others
    /// their state unconsumed (quantity 0), none of them storing anything.
    pub cells: Vec<Decision>,
}

/// `inputs[i]` is limiter `i`'s stored TAT (`None`: no key) and its
/// arguments with the call's quantity; `block_ns` is `BLOCK`'s penalty:
/// a refused call that every refusing limiter could one day allow blocks
/// each of them ([`gcra::blocked`]), and `retry_after` is then the
/// longest of their blocked waits. The only error is a TAT that would
/// pass i64::MAX, as for CL.THROTTLE; nothing is stored then.
pub fn decide(
    inputs: &[(Option<i64>, Rate)],
    now_ns: i64,
    block_ns: Option<i64>,
) -> Result<Verdict, ErrorReply> {
    let mut cells = inputs
        .iter()
        .map(|(tat, rate)| gcra::decide(*tat, now_ns, rate))
        .collect::<Result<Vec<Decision>, _>>()?;
    if !cells.iter().any(|d| d.limited) {
        return Ok(Verdict {
            limited: false,
            retry_after_s: -1,
            cells,
        });
    }
    let never = cells.iter().any(|d| d.limited && !gcra::blockable(d));
    for (cell, (tat, rate)) in cells.iter_mut().zip(inputs) {
        if !cell.limited {
            *cell = gcra::decide(*tat, now_ns, &rate.peek())?;
        } else if let (Some(block_ns), false) = (block_ns, never) {
            *cell = gcra::blocked(*tat, now_ns, rate, block_ns)?;
        }
    }
    let retry_after_s = if never {
        -1
    } else {
        let refusing = cells.iter().filter(|d| d.limited);
        refusing.map(|d| d.retry_after_s).max().unwrap_or(-1)
    };
    Ok(Verdict {
        limited: true,
        retry_after_s,
        cells,
    })
}

impl Verdict {
    /// The per-limiter replies, in order.
    pub fn replies(&self) -> Vec<[i64; 5]> {
        self.cells.iter().map(Decision::reply).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;
    const NOW: i64 = 1_700_000_000 * S;

    /// Limit `burst + 1`, one per `period` seconds, quantity `q`.
    fn rate(burst: i64, period: i64, q: i64) -> Rate {
        Rate::new(burst, 1, period, q).unwrap()
    }

    fn inputs(tats: &[Option<i64>], rates: &[Rate]) -> Vec<(Option<i64>, Rate)> {
        tats.iter().copied().zip(rates.iter().copied()).collect()
    }

    fn judge(tats: &[Option<i64>], rates: &[Rate]) -> Verdict {
        decide(&inputs(tats, rates), NOW, None).unwrap()
    }

    fn stores(v: &Verdict) -> Vec<Option<gcra::Stored>> {
        v.cells.iter().map(|d| d.store).collect()
    }

    /// Runs CL.THROTTLE's rule alone on each limiter.
    fn alone(tats: &[Option<i64>], rates: &[Rate]) -> Vec<Decision> {
        tats.iter()
            .zip(rates)
            .map(|(tat, rate)| gcra::decide(*tat, NOW, rate).unwrap())
            .collect()
    }

    #[test]
    fn when_every_limiter_allows_each_answers_and_stores_as_alone() {
        let (tats, rates) = ([None, Some(NOW + 3 * S)], [rate(2, 1, 1), rate(9, 1, 1)]);
        let verdict = judge(&tats, &rates);
        let alone = alone(&tats, &rates);
        assert!(!verdict.limited);
        assert_eq!(verdict.retry_after_s, -1);
        assert_eq!(verdict.cells, alone);
        assert!(stores(&verdict).iter().all(Option::is_some));
    }

    #[test]
    fn one_refusal_consumes_nothing_anywhere() {
        // The second limiter is full: 3 in flight of 3.
        let (tats, rates) = ([None, Some(NOW + 3 * S)], [rate(2, 1, 1), rate(2, 1, 1)]);
        let verdict = judge(&tats, &rates);
        assert!(verdict.limited);
        assert_eq!(stores(&verdict), [None, None]);
        // The refusing limiter's own reply; the other one unconsumed.
        let alone = alone(&tats, &rates);
        assert!(alone[1].limited);
        assert_eq!(verdict.replies()[1], alone[1].reply());
        let peek = gcra::decide(None, NOW, &rates[0].peek()).unwrap();
        assert_eq!(verdict.replies()[0], peek.reply());
        assert_eq!(verdict.replies()[0][2], 3, "all 3 places left");
        assert_eq!(verdict.retry_after_s, alone[1].retry_after_s);
    }

    #[test]
    fn the_longest_wait_wins_and_never_beats_any_wait() {
        let full = |period: i64| Some(NOW + 3 * period * S);
        let tats = [full(1), full(10), None];
        let rates = [rate(2, 1, 1), rate(2, 10, 1), rate(0, 1, 1)];
        let verdict = judge(&tats, &rates);
        assert_eq!(verdict.retry_after_s, 10);
        // A quantity above one limiter's burst can never be allowed: -1.
        let rates = [rate(2, 1, 1), rate(9, 10, 5), rate(0, 1, 5)];
        let verdict = judge(&[full(1), None, None], &rates);
        assert!(verdict.limited);
        assert_eq!(verdict.retry_after_s, -1);
    }

    #[test]
    fn quantity_zero_is_a_peek_that_stores_nothing() {
        let tats = [Some(NOW + S), None];
        let rates = [rate(2, 1, 0), rate(0, 60, 0)];
        let verdict = judge(&tats, &rates);
        assert!(!verdict.limited);
        assert_eq!(stores(&verdict), [None, None]);
        assert_eq!(verdict.replies()[0][2], 2, "one of 3 in flight");
    }

    #[test]
    fn an_overflowing_arrival_time_is_an_error_for_the_whole_call() {
        // A burst as long as i64 allows: the call is allowed, its TAT overflows.
        let huge = Rate::new(i64::MAX / S - 1, 1, 1, 1).unwrap();
        assert!(decide(
            &inputs(&[None, Some(i64::MAX - 1)], &[rate(2, 1, 1), huge]),
            NOW,
            None
        )
        .is_err());
    }

    #[test]
    fn block_blocks_each_refusing_limiter_and_only_those() {
        // The second and third limiters are full; the first has room.
        let tats = [None, Some(NOW + 3 * S), Some(NOW + 30 * S)];
        let rates = [rate(2, 1, 1), rate(2, 1, 1), rate(2, 10, 1)];
        let verdict = decide(&inputs(&tats, &rates), NOW, Some(60 * S)).unwrap();
        assert!(verdict.limited);
        let blocked = |i: usize| gcra::blocked(tats[i], NOW, &rates[i], 60 * S).unwrap();
        assert_eq!(verdict.cells[1], blocked(1));
        assert_eq!(verdict.cells[2], blocked(2));
        assert_eq!(
            verdict.cells[0],
            gcra::decide(None, NOW, &rates[0].peek()).unwrap()
        );
        // Each refusing limiter blocked for 60 s.
        assert_eq!(verdict.replies()[1][3], 60);
        assert_eq!(verdict.retry_after_s, 60);
        assert_eq!(stores(&verdict)[0], None);
        assert!(stores(&verdict)[1].is_some() && stores(&verdict)[2].is_some());
        // Allowed: nothing blocked, the same verdict as without BLOCK.
        let free = inputs(&[None, None], &[rate(2, 1, 1), rate(2, 1, 1)]);
        assert_eq!(
            decide(&free, NOW, Some(60 * S)).unwrap(),
            decide(&free, NOW, None).unwrap()
        );
        // One refusing limiter can never allow this quantity: nothing blocked.
        let hopeless = inputs(&[Some(NOW + 3 * S), None], &[rate(2, 1, 3), rate(1, 1, 3)]);
        let verdict = decide(&hopeless, NOW, Some(60 * S)).unwrap();
        assert_eq!(verdict, decide(&hopeless, NOW, None).unwrap());
        assert_eq!(stores(&verdict), [None, None]);
    }
}
