//! Typed calls to plain Redis commands the tests set keys up with.

use redis::ConnectionLike;

/// `SET key value EX seconds`: a counter with a running TTL.
pub fn set_ex(con: &mut impl ConnectionLike, key: &str, value: i64, seconds: i64) {
    let _: () = redis::cmd("SET")
        .arg(key)
        .arg(value)
        .arg("EX")
        .arg(seconds)
        .query(con)
        .unwrap();
}

pub fn pexpiretime(con: &mut impl ConnectionLike, key: &str) -> i64 {
    redis::cmd("PEXPIRETIME").arg(key).query(con).unwrap()
}
