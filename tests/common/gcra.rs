//! CL.THROTTLE and CL.THROTTLEALL as SPEC states them, written out here
//! (in i128, so no edge overflows), for tests whose calls land at an
//! instant they can only bracket: every reply the command may give at an
//! instant between two readings of the test's clock (the servers run on
//! the same machine clock).

/// A limiter's arguments, valid: `count` per `period` seconds, at most
/// `max_burst + 1` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limiter {
    pub max_burst: i64,
    pub count: i64,
    pub period: i64,
}

const S: i128 = 1_000_000_000;

fn ceil(ns: i128, unit: i128) -> i64 {
    ((ns + unit - 1).div_euclid(unit)) as i64
}

/// One limiter asked for `quantity` at `now` (ns) with the stored arrival
/// time `tat`: its 5-element reply, and the arrival time it stores (None:
/// nothing written).
pub fn throttle(tat: Option<i64>, now: i64, l: &Limiter, quantity: i64) -> ([i64; 5], Option<i64>) {
    let interval = i128::from(l.period) * S / i128::from(l.count);
    let tolerance = interval * i128::from(l.max_burst + 1);
    let increment = interval * i128::from(quantity);
    let now = i128::from(now);
    let tat = tat.map_or(now, |t| i128::from(t).max(now));
    let new_tat = tat + increment;
    let allow_at = new_tat - tolerance;
    let (limited, ttl, retry) = if allow_at > now {
        let retry = if increment <= tolerance {
            ceil(allow_at - now, S)
        } else {
            -1
        };
        (true, tat - now, retry)
    } else {
        (false, new_tat - now, -1)
    };
    let room = tolerance - ttl;
    let remaining = if room > 0 {
        (room / interval) as i64
    } else {
        0
    };
    let stored = (!limited && increment > 0).then_some(new_tat as i64);
    (
        [
            i64::from(limited),
            l.max_burst + 1,
            remaining,
            retry,
            ceil(ttl, S),
        ],
        stored,
    )
}

/// CL.THROTTLEALL's reply at `now`: `[limited, retry_after, [5]...]`
/// flattened one reply per limiter.
pub fn throttle_all(
    tats: &[Option<i64>],
    now: i64,
    limiters: &[Limiter],
    quantity: i64,
) -> Vec<Vec<i64>> {
    let cells: Vec<[i64; 5]> = tats
        .iter()
        .zip(limiters)
        .map(|(tat, l)| throttle(*tat, now, l, quantity).0)
        .collect();
    let limited = cells.iter().any(|c| c[0] == 1);
    let mut reply = vec![vec![i64::from(limited)]];
    if !limited {
        reply[0].push(-1);
        reply.extend(cells.iter().map(|c| c.to_vec()));
        return reply;
    }
    let refusing: Vec<i64> = cells.iter().filter(|c| c[0] == 1).map(|c| c[3]).collect();
    let retry = if refusing.contains(&-1) {
        -1
    } else {
        *refusing.iter().max().unwrap()
    };
    reply[0].push(retry);
    for ((cell, tat), l) in cells.iter().zip(tats).zip(limiters) {
        reply.push(if cell[0] == 1 {
            cell.to_vec()
        } else {
            throttle(*tat, now, l, 0).0.to_vec()
        });
    }
    reply
}

/// Every value `at` gives at an instant of `bracket` (ns): its steps are
/// whole seconds and intervals apart, so instants 1 µs apart (and the two
/// ends) meet each.
pub fn within<T: PartialEq>(bracket: (i64, i64), at: impl Fn(i64) -> T) -> Vec<T> {
    let (from, to) = bracket;
    let step = ((to - from) / 100_000).max(1_000);
    let mut values: Vec<T> = Vec::new();
    for now in (from..to).step_by(step as usize).chain([to]) {
        let value = at(now);
        if !values.contains(&value) {
            values.push(value);
        }
    }
    values
}
