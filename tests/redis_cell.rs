//! CL.THROTTLE against the real peer, redis-cell 0.2.2 (built from
//! crates.io by tests/peers/redis-cell.sh): the same seeded calls go to a
//! server with redis-cell and a server with this module, and must agree
//! call by call, but for the rounding docs/commands.md states (times rounded up where
//! redis-cell truncates). Then keys redis-cell wrote move to a fresh server
//! with this module and carry on as if nothing happened.
//!
//! Every limiter's emission interval is at least 3 s, so the microseconds
//! between the two servers' calls never change a reply.

mod common;

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

/// One call on both servers; the replies must agree.
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
    let mine = throttle(ours, args.0, args.1, args.2, args.3, args.4);
    let theirs = throttle(peer, args.0, args.1, args.2, args.3, args.4);
    let what = format!(
        "call {call} (seed {SEED:#x}) CL.THROTTLE {args:?}: ours {mine:?}, redis-cell {theirs:?}"
    );
    assert_eq!(mine[..3], theirs[..3], "limited, limit, remaining: {what}");
    for (index, name) in [(3, "retry_after"), (4, "reset_after")] {
        let (m, t) = (mine[index], theirs[index]);
        let rounding_only = (m == -1 && t == -1) || (t >= 0 && (m == t || m == t + 1));
        assert!(rounding_only, "{name} differs beyond rounding: {what}");
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
