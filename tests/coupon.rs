//! COUPON.ISSUE and COUPON.REVOKE against a real server.

mod common;

use common::*;
use redis::Connection;

fn scard(con: &mut Connection, key: &str) -> i64 {
    redis::cmd("SCARD").arg(key).query(con).unwrap()
}

#[test]
fn winners_get_ranks_duplicates_minus_one_and_latecomers_minus_two() {
    let server = Server::start();
    let mut con = server.con();
    assert_eq!(issue(&mut con, "drop", "alice", 2), 1);
    assert_eq!(issue(&mut con, "drop", "alice", 2), -1);
    assert_eq!(issue(&mut con, "drop", "bob", 2), 2);
    assert_eq!(issue(&mut con, "drop", "carol", 2), -2);
    // A winner retrying after the sell-out still hears "already held".
    assert_eq!(issue(&mut con, "drop", "bob", 2), -1);
    assert_eq!(scard(&mut con, "drop"), 2);
    let members: Vec<String> = redis::cmd("SMEMBERS").arg("drop").query(&mut con).unwrap();
    let mut members = members;
    members.sort();
    assert_eq!(members, ["alice", "bob"]);
    let is_member: i64 = redis::cmd("SISMEMBER")
        .arg("drop")
        .arg("carol")
        .query(&mut con)
        .unwrap();
    assert_eq!(is_member, 0);
}

#[test]
fn a_set_already_over_the_limit_is_sold_out() {
    let server = Server::start();
    let mut con = server.con();
    let _: i64 = redis::cmd("SADD")
        .arg("drop")
        .arg(&["a", "b", "c"])
        .query(&mut con)
        .unwrap();
    assert_eq!(issue(&mut con, "drop", "d", 2), -2);
    assert_eq!(issue(&mut con, "drop", "a", 2), -1);
    assert_eq!(issue(&mut con, "drop", "d", 4), 4);
}

#[test]
fn users_are_any_bytes() {
    let server = Server::start();
    let mut con = server.con();
    let user = b"\0\xff user \r\n";
    let rank: i64 = redis::cmd("COUPON.ISSUE")
        .arg("drop")
        .arg(&user[..])
        .arg(5)
        .query(&mut con)
        .unwrap();
    assert_eq!(rank, 1);
    let is_member: i64 = redis::cmd("SISMEMBER")
        .arg("drop")
        .arg(&user[..])
        .query(&mut con)
        .unwrap();
    assert_eq!(is_member, 1);
}

#[test]
fn revoke_frees_a_place_and_an_emptied_set_is_deleted() {
    let server = Server::start();
    let mut con = server.con();
    assert_eq!(issue(&mut con, "drop", "alice", 1), 1);
    assert_eq!(issue(&mut con, "drop", "bob", 1), -2);
    assert_eq!(revoke(&mut con, "drop", "bob"), 0);
    assert_eq!(revoke(&mut con, "drop", "alice"), 1);
    let exists: i64 = redis::cmd("EXISTS").arg("drop").query(&mut con).unwrap();
    assert_eq!(exists, 0);
    assert_eq!(revoke(&mut con, "drop", "alice"), 0);
    assert_eq!(issue(&mut con, "drop", "bob", 1), 1);
}

#[test]
fn outcomes_that_change_nothing_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    issue(&mut con, "drop", "alice", 1);
    let _: i64 = redis::cmd("EXPIRE")
        .arg("drop")
        .arg(100)
        .query(&mut con)
        .unwrap();
    let before = snapshot(&mut con, "drop");
    let stats_before = before.successes.clone();
    assert_eq!(issue(&mut con, "drop", "alice", 1), -1);
    assert_eq!(issue(&mut con, "drop", "bob", 1), -2);
    assert_eq!(revoke(&mut con, "drop", "bob"), 0);
    let after = snapshot(&mut con, "drop");
    assert_eq!(
        (before.dump, before.pexpiretime, before.aof_size),
        (after.dump, after.pexpiretime, after.aof_size)
    );
    // duplicates and sold-out replies are counted, nothing else
    assert_ne!(stats_before, after.successes);
    assert_eq!(info_field(&mut con, "guard_coupon_duplicates"), 1);
    assert_eq!(info_field(&mut con, "guard_coupon_soldout"), 1);
}

#[test]
fn errors_name_the_argument_and_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    issue(&mut con, "drop", "alice", 5);
    let _: i64 = redis::cmd("EXPIRE")
        .arg("drop")
        .arg(100)
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("text")
        .arg("x")
        .query(&mut con)
        .unwrap();
    let cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (vec![b"COUPON.ISSUE", b"drop", b"", b"5"], "user"),
        (vec![b"COUPON.ISSUE", b"drop", b"", b"0"], "user"),
        (vec![b"COUPON.ISSUE", b"drop", b"bob", b"0"], "limit"),
        (vec![b"COUPON.ISSUE", b"drop", b"bob", b"-1"], "limit"),
        (vec![b"COUPON.ISSUE", b"drop", b"bob", b"ten"], "limit"),
        (vec![b"COUPON.ISSUE", b"drop", b"bob", b" 5"], "limit"),
        (vec![b"COUPON.ISSUE", b"missing", b"bob", b"0"], "limit"),
        (vec![b"COUPON.ISSUE", b"text", b"bob", b"5"], "WRONGTYPE"),
        (vec![b"COUPON.ISSUE", b"text", b"", b"5"], "user"),
        (vec![b"COUPON.REVOKE", b"drop", b""], "user"),
        (vec![b"COUPON.REVOKE", b"text", b"bob"], "WRONGTYPE"),
    ];
    assert_errors_change_nothing(&mut con, &cases);
    let exists: i64 = redis::cmd("EXISTS").arg("missing").query(&mut con).unwrap();
    assert_eq!(exists, 0);
}

#[test]
fn wrong_arity_gets_redis_own_error() {
    let server = Server::start();
    let mut con = server.con();
    assert_arity_errors(
        &mut con,
        &[vec!["COUPON.ISSUE", "k", "u"], vec!["COUPON.REVOKE", "k"]],
    );
    // Since 0.3.0 both take options (LEDGER): an argument too many is an
    // unknown option, and changes nothing.
    assert_errors_change_nothing(
        &mut con,
        &[
            (
                vec![b"COUPON.ISSUE", b"k", b"u", b"1", b"2"],
                "ERR unknown option '2'",
            ),
            (
                vec![b"COUPON.REVOKE", b"k", b"u", b"v"],
                "ERR unknown option 'v'",
            ),
        ],
    );
}

#[test]
fn stats_follow_the_outcomes() {
    let server = Server::start();
    let mut con = server.con();
    issue(&mut con, "d", "a", 2);
    issue(&mut con, "d", "a", 2);
    issue(&mut con, "d", "b", 2);
    issue(&mut con, "d", "c", 2);
    revoke(&mut con, "d", "a");
    let _ = redis::cmd("COUPON.ISSUE")
        .arg("d")
        .arg("")
        .arg(2)
        .query::<redis::Value>(&mut con)
        .expect_err("a bad call gets an error reply");
    // Exactly these moved; every other counter of the module stayed 0.
    assert_only_these_counters(
        &mut con,
        &[
            ("coupon_issue_calls", 5),
            ("coupon_issued", 2),
            ("coupon_duplicates", 1),
            ("coupon_soldout", 1),
            ("coupon_revoked", 1),
        ],
    );
}

#[test]
fn events_sadd_soldout_and_srem() {
    let server = Server::start();
    let events = events_of(&server, |con| {
        issue(con, "d", "a", 2);
        issue(con, "d", "a", 2);
        issue(con, "d", "b", 2);
        issue(con, "d", "c", 2);
        revoke(con, "d", "a");
        revoke(con, "d", "zzz");
    });
    assert_eq!(
        events,
        pairs(&[
            ("sadd", "d"),
            ("sadd", "d"),
            ("coupon.soldout", "d"),
            ("srem", "d")
        ])
    );
}

#[test]
fn duplicates_sold_out_and_empty_revokes_do_not_disturb_watch() {
    let server = Server::start();
    let mut con = server.con();
    issue(&mut con, "d", "a", 1);
    // a duplicate, a sold-out request and a revoke of a non-winner
    assert!(watch_survives(&server, "d", |c| assert_eq!(
        issue(c, "d", "a", 1),
        -1
    )));
    assert!(watch_survives(&server, "d", |c| assert_eq!(
        issue(c, "d", "b", 1),
        -2
    )));
    assert!(watch_survives(&server, "d", |c| assert_eq!(
        revoke(c, "d", "nobody"),
        0
    )));
    assert!(
        !watch_survives(&server, "d", |c| assert_eq!(issue(c, "d", "c", 2), 2)),
        "a real issue touches the watched key"
    );
}
