//! CL.THROTTLE against the real peer, redis-cell 0.2.2 (built from
//! crates.io by tests/peers/redis-cell.sh): the same seeded calls go to a
//! server with redis-cell and a server with this module, and must agree
//! call by call, but for the rounding docs/commands.md states (times rounded up where
//! redis-cell truncates). Then keys redis-cell wrote move to a fresh server
//! with this module and carry on as if nothing happened.
//!
//! The two servers read the clock at two instants: ours first, the peer a
//! round trip later. A reply's times are a stored time minus now, in whole
//! seconds, and `remaining` is a whole number of intervals: when the
//! exact value lies within that round trip of a whole second (or
//! interval), the two replies may differ by one step more than rounding,
//! about once in a few thousand calls on a loaded machine. So each call is
//! bracketed by the test's own clock (the same clock: before our call,
//! after the peer's reply), and each server's reply must be what redis-cell's
//! algorithm, written out below from its source, gives for that server's
//! stored time at some instant inside the bracket, rounded as that server
//! rounds; where no step lies inside the bracket, the two must agree
//! exactly.

mod common;

use common::gcra::within;
use common::rng::Rng;
use common::*;
use redis::Connection;

const SEED: u64 = 0x5eed_ce11_0000_0022;
const CALLS: usize = 600;

/// A key's limiter: (max_burst, count, period).
struct Limiter {
    key: String,
    max_burst: i64,
    count: i64,
    period: i64,
}

fn limiters(rng: &mut Rng) -> Vec<Limiter> {
    (0..8)
        .map(|i| {
            let period = *rng.pick(&[60, 300, 3600]);
            Limiter {
                key: format!("rate:{i}"),
                max_burst: rng.below(12) as i64,
                // period / count >= 3 s
                count: 1 + rng.below(20) as i64,
                period,
            }
        })
        .collect()
}

/// redis-cell 0.2.2's GCRA (`cell/mod.rs`, `rate_limit`) for one call at
/// `now` (ns) on a cell that stored `tat` (ns): (limited, remaining,
/// retry_after ns or None for "never", reset_after ns).
fn gcra(
    tat: Option<i64>,
    now: i64,
    limiter: &Limiter,
    quantity: i64,
) -> (bool, i64, Option<i64>, i64) {
    let interval = (limiter.period as f64 * 1e9 / limiter.count as f64) as i64;
    let tolerance = interval * (limiter.max_burst + 1);
    let increment = interval * quantity;
    let tat = tat.unwrap_or(now).max(now);
    let allow_at = tat + increment - tolerance;
    let (limited, retry, ttl) = if now < allow_at {
        let retry = (increment <= tolerance).then_some(allow_at - now);
        (true, retry, tat - now)
    } else {
        (false, None, tat + increment - now)
    };
    let next = tolerance - ttl;
    let remaining = if next > -interval {
        ((next / 1000) as f64 / (interval / 1000) as f64) as i64
    } else {
        0
    };
    (limited, remaining, retry, ttl)
}

/// The reply one server gives at `now`: times rounded up (ours) or toward
/// zero (redis-cell).
fn reply_at(
    tat: Option<i64>,
    now: i64,
    limiter: &Limiter,
    quantity: i64,
    round_up: bool,
) -> [i64; 5] {
    let (limited, remaining, retry, reset) = gcra(tat, now, limiter, quantity);
    let seconds = |ns: i64| {
        if round_up {
            ns.div_euclid(1_000_000_000) + i64::from(ns.rem_euclid(1_000_000_000) > 0)
        } else {
            ns / 1_000_000_000
        }
    };
    [
        i64::from(limited),
        limiter.max_burst + 1,
        remaining,
        retry.map_or(-1, seconds),
        seconds(reset),
    ]
}

/// The stored time (ns) of a cell, if any.
fn stored(con: &mut Connection, key: &str) -> Option<i64> {
    let value: Option<String> = redis::cmd("GET").arg(key).query(con).unwrap();
    value.map(|v| v.parse().unwrap())
}

/// One call on both servers; each reply must be the algorithm's for its
/// own stored time at an instant of the call, and the two must agree but
/// for rounding where no step of the algorithm falls inside the call.
fn call_both(
    rng: &mut Rng,
    limiters: &[Limiter],
    ours: &mut Connection,
    peer: &mut Connection,
    call: usize,
) -> bool {
    let limiter = rng.pick(limiters);
    let limit = limiter.max_burst + 1;
    // Mostly single requests; some peeks, some larger, some too large.
    let quantity = match rng.below(10) {
        0 => 0,
        1 => 1 + rng.below(limit as usize + 1) as i64,
        _ => 1,
    };
    let args = (
        &limiter.key,
        limiter.max_burst,
        limiter.count,
        limiter.period,
        quantity,
    );
    let (our_tat, their_tat) = (stored(ours, &limiter.key), stored(peer, &limiter.key));
    let before = now_ns();
    let mine = throttle(ours, args.0, args.1, args.2, args.3, args.4);
    let theirs = throttle(peer, args.0, args.1, args.2, args.3, args.4);
    let bracket = (before, now_ns());
    let what = format!(
        "call {call} (seed {SEED:#x}) CL.THROTTLE {args:?}: ours {mine:?}, redis-cell {theirs:?}, \
         within {} µs",
        (bracket.1 - bracket.0) / 1000
    );
    let peer_could = within(bracket, |now| {
        reply_at(their_tat, now, limiter, quantity, false)
    });
    assert!(
        peer_could.contains(&theirs),
        "the model of redis-cell is wrong (it could say {peer_could:?}): {what}"
    );
    let we_could = within(bracket, |now| {
        reply_at(our_tat, now, limiter, quantity, true)
    });
    assert!(
        we_could.contains(&mine),
        "ours is not redis-cell's algorithm rounded up (it could say {we_could:?}): {what}"
    );
    if let ([ours_only], [theirs_only]) = (&we_could[..], &peer_could[..]) {
        assert_eq!(
            ours_only[..3],
            theirs_only[..3],
            "limited, limit, remaining: {what}"
        );
        assert_eq!(mine[..3], theirs[..3], "limited, limit, remaining: {what}");
        for (index, name) in [(3, "retry_after"), (4, "reset_after")] {
            let (m, t) = (mine[index], theirs[index]);
            let rounding_only = (m == -1 && t == -1) || (t >= 0 && (m == t || m == t + 1));
            assert!(rounding_only, "{name} differs beyond rounding: {what}");
        }
    }
    mine[0] == 1
}

#[test]
fn agrees_with_redis_cell_call_by_call_and_takes_over_its_keys() {
    let peer_server = Server::with_module(redis_cell_module(), &[], &[]);
    let ours_server = Server::start();
    let (mut peer, mut ours) = (peer_server.con(), ours_server.con());
    let mut rng = Rng(SEED);
    let limiters = limiters(&mut rng);

    let mut limited = 0;
    for call in 0..CALLS {
        limited += usize::from(call_both(&mut rng, &limiters, &mut ours, &mut peer, call));
    }
    assert!(
        (CALLS / 10..CALLS * 9 / 10).contains(&limited),
        "the calls must reach both answers: {limited} of {CALLS} limited"
    );

    // Keys redis-cell wrote, moved as they are to a server with this module.
    let taken_over = Server::start();
    let mut moved = taken_over.con();
    let mut keys = 0;
    for limiter in &limiters {
        let value: Option<String> = redis::cmd("GET")
            .arg(&limiter.key)
            .query(&mut peer)
            .unwrap();
        let Some(value) = value else { continue };
        let expires_at = pexpiretime(&mut peer, &limiter.key);
        assert!(expires_at > 0, "redis-cell sets a TTL on {}", limiter.key);
        let _: () = redis::cmd("SET")
            .arg(&limiter.key)
            .arg(value)
            .arg("PXAT")
            .arg(expires_at)
            .query(&mut moved)
            .unwrap();
        keys += 1;
    }
    assert!(keys >= limiters.len() / 2, "only {keys} keys to take over");
    for call in CALLS..CALLS + 200 {
        call_both(&mut rng, &limiters, &mut moved, &mut peer, call);
    }
}
