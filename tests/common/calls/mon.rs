//! Typed calls to the MON.* commands.

use redis::ConnectionLike;

/// `[current, level]` from MON.INCRCHECK.
pub fn incrcheck(
    con: &mut impl ConnectionLike,
    key: &str,
    increment: i64,
    window: i64,
    thresholds: &[i64],
) -> (i64, i64) {
    redis::cmd("MON.INCRCHECK")
        .arg(key)
        .arg(increment)
        .arg(window)
        .arg(thresholds)
        .query(con)
        .unwrap()
}

/// `[current, level]` from MON.SLIDECHECK; `rest` the thresholds and
/// options.
pub fn slide(
    con: &mut impl ConnectionLike,
    key: &str,
    increment: i64,
    window: impl redis::ToRedisArgs,
    rest: &[&str],
) -> (i64, i64) {
    redis::cmd("MON.SLIDECHECK")
        .arg(key)
        .arg(increment)
        .arg(window)
        .arg(rest)
        .query(con)
        .unwrap()
}

pub fn decrclamp(con: &mut impl ConnectionLike, key: &str, amount: i64) -> i64 {
    redis::cmd("MON.DECRCLAMP")
        .arg(key)
        .arg(amount)
        .query(con)
        .unwrap()
}
