//! Typed calls to CL.THROTTLE.

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
