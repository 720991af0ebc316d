//! Typed calls to COUPON.ISSUE and COUPON.REVOKE (a coupon as a set).

use redis::ConnectionLike;

pub fn issue(con: &mut impl ConnectionLike, key: &str, user: &str, limit: i64) -> i64 {
    redis::cmd("COUPON.ISSUE")
        .arg(key)
        .arg(user)
        .arg(limit)
        .query(con)
        .unwrap()
}

pub fn revoke(con: &mut impl ConnectionLike, key: &str, user: &str) -> i64 {
    redis::cmd("COUPON.REVOKE")
        .arg(key)
        .arg(user)
        .query(con)
        .unwrap()
}
