//! Calls to the campaign commands, typed, for every test that needs them.

use std::collections::HashMap;

use redis::{ConnectionLike, Value};

pub fn create(con: &mut impl ConnectionLike, key: &str, limit: i64, per_user: i64, hold_s: i64) {
    let _: () = redis::cmd("COUPON.CREATE")
        .arg(key)
        .arg(limit)
        .arg("PERUSER")
        .arg(per_user)
        .arg("HOLD")
        .arg(hold_s)
        .query(con)
        .unwrap();
}

/// `[claim, expires_at_ms]`; `options` as `["HOLD", "5", "ID", "r1"]`.
pub fn reserve(
    con: &mut impl ConnectionLike,
    key: &str,
    user: &str,
    options: &[&str],
) -> (i64, i64) {
    redis::cmd("COUPON.RESERVE")
        .arg(key)
        .arg(user)
        .arg(options)
        .query(con)
        .unwrap()
}

pub fn confirm(con: &mut impl ConnectionLike, key: &str, claim: i64) -> i64 {
    redis::cmd("COUPON.CONFIRM")
        .arg(key)
        .arg(claim)
        .query(con)
        .unwrap()
}

pub fn release(con: &mut impl ConnectionLike, key: &str, claim: i64) -> i64 {
    redis::cmd("COUPON.RELEASE")
        .arg(key)
        .arg(claim)
        .query(con)
        .unwrap()
}

/// COUPON.INFO as field → value.
pub fn info(con: &mut impl ConnectionLike, key: &str) -> HashMap<String, i64> {
    let flat: Vec<Value> = redis::cmd("COUPON.INFO").arg(key).query(con).unwrap();
    flat.chunks(2)
        .map(|pair| match pair {
            [Value::BulkString(name), Value::Int(n)] => {
                (String::from_utf8_lossy(name).into_owned(), *n)
            }
            other => panic!("COUPON.INFO pair {other:?}"),
        })
        .collect()
}

/// One row of COUPON.CLAIMS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRow {
    pub claim: i64,
    pub user: String,
    pub state: String,
    pub expires_at_ms: i64,
    pub request_id: Option<String>,
    pub units: i64,
}

pub fn claims(con: &mut impl ConnectionLike, key: &str, options: &[&str]) -> Vec<ClaimRow> {
    let rows: Vec<(i64, String, String, i64, Option<String>, i64)> = redis::cmd("COUPON.CLAIMS")
        .arg(key)
        .arg(options)
        .query(con)
        .unwrap();
    rows.into_iter()
        .map(
            |(claim, user, state, expires_at_ms, request_id, units)| ClaimRow {
                claim,
                user,
                state,
                expires_at_ms,
                request_id,
                units,
            },
        )
        .collect()
}

/// DEBUG DIGEST-VALUE: equal digests, equal values (a campaign's claims,
/// users, request ids, expiries and totals; a window's buckets and
/// reports).
pub fn digest(con: &mut impl ConnectionLike, key: &str) -> String {
    let digests: Vec<String> = redis::cmd("DEBUG")
        .arg("DIGEST-VALUE")
        .arg(key)
        .query(con)
        .unwrap();
    digests.into_iter().next().unwrap()
}
