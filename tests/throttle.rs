//! CL.THROTTLE against a real server: replies, the stored TAT and its
//! expiry, calls that write nothing, errors that change nothing, INFO.
//! Periods are whole seconds and long, so the few ms between calls never
//! change a reply.

mod common;

use common::*;
use redis::{Connection, Value};

fn get(con: &mut Connection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query(con).unwrap()
}

fn set(con: &mut Connection, key: &str, value: &str) {
    let _: () = redis::cmd("SET").arg(key).arg(value).query(con).unwrap();
}

#[test]
fn a_fresh_limiter_allows_the_burst_then_limits() {
    let server = Server::start();
    let mut con = server.con();
    // 1 per 60 s, burst 2: three at once, then wait 60 s for the next.
    let replies: Vec<[i64; 5]> = (0..4)
        .map(|_| throttle(&mut con, "rate", 2, 1, 60, 1))
        .collect();
    assert_eq!(
        replies,
        [
            [0, 3, 2, -1, 60],
            [0, 3, 1, -1, 120],
            [0, 3, 0, -1, 180],
            [1, 3, 0, 60, 180],
        ]
    );
    // quantity is optional (1), and a request may take several places.
    let reply: Vec<i64> = redis::cmd("CL.THROTTLE")
        .arg("other")
        .arg(4)
        .arg(1)
        .arg(60)
        .query(&mut con)
        .unwrap();
    assert_eq!(reply, [0, 5, 4, -1, 60]);
    assert_eq!(throttle(&mut con, "other", 4, 1, 60, 3), [0, 5, 1, -1, 240]);
    assert_eq!(throttle(&mut con, "other", 4, 1, 60, 2), [1, 5, 1, 60, 240]);
}

#[test]
fn times_are_rounded_up_to_whole_seconds() {
    let server = Server::start();
    let mut con = server.con();
    // 3 per 10 s: each request takes 3.33 s; limit 1.
    assert_eq!(throttle(&mut con, "r", 0, 3, 10, 1), [0, 1, 0, -1, 4]);
    // Refused: allowed again in 3.33 s minus the ms since, so 4 (redis-cell
    // truncates to 3, and a client that waits 3 s is refused again).
    assert_eq!(throttle(&mut con, "r", 0, 3, 10, 1), [1, 1, 0, 4, 4]);
}

#[test]
fn the_key_holds_the_tat_in_ns_and_expires_when_the_limiter_is_full_again() {
    let server = Server::start();
    let mut con = server.con();
    let before = now_ns();
    throttle(&mut con, "rate", 5, 1, 60, 2);
    let after = now_ns();
    let key_type: String = redis::cmd("TYPE").arg("rate").query(&mut con).unwrap();
    assert_eq!(key_type, "string");
    let tat: i64 = get(&mut con, "rate").unwrap().parse().unwrap();
    let two_requests = 120 * 1_000_000_000;
    assert!(
        (before + two_requests..=after + two_requests).contains(&tat),
        "{tat}"
    );
    // The first millisecond at or after the TAT.
    let expected = (tat + 999_999) / 1_000_000;
    assert_eq!(pexpiretime(&mut con, "rate"), expected);
}

#[test]
fn limited_calls_and_peeks_write_nothing_and_keep_watch() {
    let server = Server::start();
    let _replica = Server::replica_of(&server);
    let mut con = server.con();
    assert_eq!(throttle(&mut con, "rate", 0, 1, 60, 1)[0], 0);
    let before = snapshot(&mut con, "rate");
    let offset = info_field(&mut con, "master_repl_offset");
    let changes = info_field(&mut con, "rdb_changes_since_last_save");

    assert_eq!(throttle(&mut con, "rate", 0, 1, 60, 1), [1, 1, 0, 60, 60]);
    assert_eq!(throttle(&mut con, "rate", 0, 1, 60, 0), [0, 1, 0, -1, 60]);
    assert_eq!(throttle(&mut con, "missing", 0, 1, 60, 0), [0, 1, 1, -1, 0]);

    // Only the counters of what happened moved: one limited, two peeks.
    let moved = [("throttle_allowed", 2), ("throttle_limited", 1)];
    assert_eq!(counted(snapshot(&mut con, "rate"), &before, &moved), before);
    assert_eq!(info_field(&mut con, "master_repl_offset"), offset);
    assert_eq!(info_field(&mut con, "rdb_changes_since_last_save"), changes);
    let exists: i64 = redis::cmd("EXISTS").arg("missing").query(&mut con).unwrap();
    assert_eq!(exists, 0, "a peek creates no key");

    // WATCH survives a limited call and a peek, not an allowed call.
    assert!(watch_survives(&server, "rate", |c| {
        assert_eq!(throttle(c, "rate", 0, 1, 60, 1)[0], 1);
    }));
    assert!(watch_survives(&server, "rate", |c| {
        assert_eq!(throttle(c, "rate", 0, 1, 60, 0)[0], 0);
    }));
    assert!(!watch_survives(&server, "fresh", |c| {
        assert_eq!(throttle(c, "fresh", 0, 1, 60, 1)[0], 0);
    }));
}

#[test]
fn each_allowed_call_counts_as_a_change_for_save_rules() {
    let server = Server::start();
    let mut con = server.con();
    let start = info_field(&mut con, "rdb_changes_since_last_save");
    for _ in 0..3 {
        assert_eq!(throttle(&mut con, "rate", 2, 1, 60, 1)[0], 0);
    }
    assert_eq!(
        info_field(&mut con, "rdb_changes_since_last_save"),
        start + 3
    );
}

#[test]
fn the_aof_holds_only_set_with_an_absolute_expiry() {
    let server = Server::start();
    let mut con = server.con();
    throttle(&mut con, "rate", 2, 1, 60, 1);
    throttle(&mut con, "rate", 2, 1, 60, 1);
    let aof = server.aof_text().to_lowercase();
    assert_eq!(aof.matches("pxat").count(), 2, "{aof}");
    assert!(!aof.contains("cl.throttle"), "{aof}");
    assert!(
        !aof.contains("pexpire\r") && !aof.contains("\r\npx\r"),
        "{aof}"
    );
}

#[test]
fn a_stored_tat_in_the_past_is_a_full_limiter() {
    let server = Server::start();
    let mut con = server.con();
    let fresh = [0, 3, 2, -1, 60];
    for stale in ["-5", "0", "1", "-9223372036854775808"] {
        set(&mut con, "rate", stale);
        assert_eq!(throttle(&mut con, "rate", 2, 1, 60, 1), fresh, "{stale}");
    }
}

#[test]
fn errors_name_the_argument_and_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    throttle(&mut con, "rate", 5, 1, 60, 1);
    set(&mut con, "text", "abc");
    let _: i64 = redis::cmd("SADD")
        .arg("set")
        .arg("x")
        .query(&mut con)
        .unwrap();
    let case = |args: &[&'static [u8]], expected: &'static str| {
        let mut call: Vec<&[u8]> = vec![b"CL.THROTTLE"];
        call.extend_from_slice(args);
        (call, expected)
    };
    let cases = vec![
        case(&[b"rate", b"+5", b"1", b"60"], "max_burst"),
        case(&[b"rate", b"007", b"1", b"60"], "max_burst"),
        case(&[b"rate", b"-1", b"1", b"60"], "max_burst"),
        case(&[b"rate", b"\xff\xfe", b"1", b"60"], "max_burst"),
        case(&[b"rate", b"1", b"0", b"60"], "count"),
        case(&[b"rate", b"1", b"-3", b"60"], "count"),
        case(&[b"rate", b"1", b"1", b"0"], "period"),
        case(&[b"rate", b"1", b"1", b"1.5"], "period"),
        case(&[b"rate", b"1", b"1", b"60", b"-1"], "quantity"),
        case(&[b"rate", b"1", b"1", b"60", b""], "quantity"),
        // Products that overflow, and an interval that rounds to 0 ns.
        case(&[b"rate", b"1", b"1", b"9223372036854775807"], "period"),
        case(&[b"rate", b"1", b"2000000000", b"1"], "count"),
        case(&[b"rate", b"9223372036854775807", b"1", b"1"], "max_burst"),
        case(
            &[b"rate", b"1", b"1", b"1", b"9223372036854775807"],
            "quantity",
        ),
        // The first bad argument in order.
        case(&[b"rate", b"-1", b"0", b"0", b"-1"], "max_burst"),
        case(&[b"missing", b"1", b"0", b"60"], "count"),
        case(&[b"set", b"1", b"1", b"60"], "WRONGTYPE"),
        case(&[b"set", b"1", b"0", b"60"], "count"),
        case(&[b"text", b"1", b"1", b"60"], "value is not an integer"),
        // After quantity come options only (BLOCK), so a sixth argument
        // is an unknown option, not an arity error.
        case(
            &[b"rate", b"1", b"1", b"1", b"1", b"1"],
            "unknown option '1'",
        ),
    ];
    assert_errors_change_nothing(&mut con, &cases);
    let exists: i64 = redis::cmd("EXISTS").arg("missing").query(&mut con).unwrap();
    assert_eq!(exists, 0);
}

#[test]
fn errors_carry_a_standard_code() {
    let server = Server::start();
    let mut con = server.con();
    let error = redis::cmd("CL.THROTTLE")
        .arg("rate")
        .arg(-1)
        .arg(1)
        .arg(1)
        .query::<Value>(&mut con)
        .unwrap_err();
    assert_eq!(error.code(), Some("ERR"));
    assert_eq!(error.detail(), Some("max_burst must not be negative"));
}

#[test]
fn wrong_arity_gets_redis_own_error() {
    let server = Server::start();
    let mut con = server.con();
    assert_arity_errors(
        &mut con,
        &[vec!["CL.THROTTLE", "k", "1", "1"], vec!["CL.THROTTLE", "k"]],
    );
}

#[test]
fn info_counts_calls_allowed_and_limited() {
    let server = Server::start();
    let mut con = server.con();
    throttle(&mut con, "rate", 0, 1, 60, 1);
    throttle(&mut con, "rate", 0, 1, 60, 1);
    throttle(&mut con, "rate", 0, 1, 60, 0);
    let _ = redis::cmd("CL.THROTTLE")
        .arg("rate")
        .arg(0)
        .arg(0)
        .arg(60)
        .query::<Value>(&mut con)
        .expect_err("a bad call gets an error reply");
    assert_eq!(info_field(&mut con, "guard_throttle_calls"), 4);
    assert_eq!(info_field(&mut con, "guard_throttle_allowed"), 2);
    assert_eq!(info_field(&mut con, "guard_throttle_limited"), 1);
}

#[test]
fn keyspace_events_follow_set_with_an_expiry() {
    let server = Server::start();
    let events = events_of(&server, |con| {
        throttle(con, "rate", 0, 1, 60, 1);
        throttle(con, "rate", 0, 1, 60, 1);
    });
    assert_eq!(events, pairs(&[("set", "rate"), ("expire", "rate")]));
}
