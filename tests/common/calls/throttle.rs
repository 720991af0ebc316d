//! Typed calls to CL.THROTTLE and CL.REFUND.

use redis::ConnectionLike;

/// `[limited, limit, remaining, retry_after, reset_after]` from CL.THROTTLE.
pub fn throttle(
    con: &mut impl ConnectionLike,
    key: &str,
    max_burst: i64,
    count: i64,
    period: i64,
    quantity: i64,
) -> [i64; 5] {
    let reply: Vec<i64> = redis::cmd("CL.THROTTLE")
        .arg(key)
        .arg(max_burst)
        .arg(count)
        .arg(period)
        .arg(quantity)
        .query(con)
        .unwrap();
    reply.try_into().expect("five integers")
}

/// CL.THROTTLE with `BLOCK block`.
pub fn throttle_block(
    con: &mut impl ConnectionLike,
    key: &str,
    limiter: [i64; 3],
    quantity: i64,
    block: i64,
) -> [i64; 5] {
    let reply: Vec<i64> = redis::cmd("CL.THROTTLE")
        .arg(key)
        .arg(&limiter[..])
        .arg(quantity)
        .arg("BLOCK")
        .arg(block)
        .query(con)
        .unwrap();
    reply.try_into().expect("five integers")
}

/// CL.REFUND: the state after the refund, as a peek gives it.
pub fn refund(
    con: &mut impl ConnectionLike,
    key: &str,
    limiter: [i64; 3],
    quantity: i64,
) -> [i64; 5] {
    let reply: Vec<i64> = redis::cmd("CL.REFUND")
        .arg(key)
        .arg(&limiter[..])
        .arg(quantity)
        .query(con)
        .unwrap();
    reply.try_into().expect("five integers")
}
