//! CL.THROTTLE, CL.THROTTLEALL (with `BLOCK`) and CL.REFUND as SPEC
//! states them, written out here
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

/// What a call writes to a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Nothing,
    /// `SET key tat PXAT ceil(tat / 1 ms)`
    Set(i64),
    Del,
}

fn interval(l: &Limiter) -> i128 {
    i128::from(l.period) * S / i128::from(l.count)
}

/// SPEC's `BLOCK s`: a limited call whose quantity could ever be allowed
/// (`retry_after` not -1) sets the arrival time to `max(stored, now + s +
/// max_burst × interval)` and replies with the blocked cell; a stored
/// time that late is kept, nothing written. Otherwise CL.THROTTLE's.
pub fn throttle_blocking(
    tat: Option<i64>,
    now: i64,
    l: &Limiter,
    quantity: i64,
    block_s: i64,
) -> ([i64; 5], Option<i64>) {
    let (reply, stored) = throttle(tat, now, l, quantity);
    if reply[0] == 0 || reply[3] == -1 {
        return (reply, stored);
    }
    let blocked = i128::from(now) + i128::from(block_s) * S + i128::from(l.max_burst) * interval(l);
    match tat {
        Some(t) if i128::from(t) >= blocked => (reply, None),
        _ => {
            let blocked = blocked as i64;
            (throttle(Some(blocked), now, l, quantity).0, Some(blocked))
        }
    }
}

/// SPEC's CL.REFUND: the arrival time moves back `quantity × interval`,
/// never before now; a missing or past time writes nothing, one that the
/// refund brings to now (a full limiter) is deleted. The reply is
/// CL.THROTTLE's with quantity 0 after the refund.
pub fn refund(tat: Option<i64>, now: i64, l: &Limiter, quantity: i64) -> ([i64; 5], Write) {
    let write = match tat {
        Some(t) if t > now => {
            let back = i128::from(t) - interval(l) * i128::from(quantity);
            if back <= i128::from(now) {
                Write::Del
            } else {
                Write::Set(back as i64)
            }
        }
        _ => Write::Nothing,
    };
    let after = match write {
        Write::Nothing => tat,
        Write::Set(t) => Some(t),
        Write::Del => None,
    };
    (throttle(after, now, l, 0).0, write)
}

/// CL.THROTTLEALL with `BLOCK s`: as [`throttle_all`], and when refused by
/// limiters that could each allow this quantity one day, each refusing
/// one is blocked ([`throttle_blocking`]) and `retry_after` is the longest
/// of their blocked waits. Also the arrival times written, per limiter.
pub fn throttle_all_blocking(
    tats: &[Option<i64>],
    now: i64,
    limiters: &[Limiter],
    quantity: i64,
    block_s: i64,
) -> (Vec<Vec<i64>>, Vec<Option<i64>>) {
    let mut reply = throttle_all(tats, now, limiters, quantity);
    let nothing = vec![None; tats.len()];
    if reply[0][0] == 0 {
        let written = tats
            .iter()
            .zip(limiters)
            .map(|(tat, l)| throttle(*tat, now, l, quantity).1)
            .collect();
        return (reply, written);
    }
    if reply[0][1] == -1 {
        return (reply, nothing);
    }
    let mut written = nothing;
    for (i, (tat, l)) in tats.iter().zip(limiters).enumerate() {
        if throttle(*tat, now, l, quantity).0[0] == 1 {
            let (cell, stored) = throttle_blocking(*tat, now, l, quantity, block_s);
            reply[1 + i] = cell.to_vec();
            written[i] = stored;
        }
    }
    reply[0][1] = reply[1..]
        .iter()
        .filter(|cell| cell[0] == 1)
        .map(|cell| cell[3])
        .max()
        .unwrap();
    (reply, written)
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
