//! MON.INCRCHECK and MON.DECRCLAMP against a real server: replies, windows,
//! refunds, errors that change nothing, WATCH, INFO and keyspace events.

mod common;

use std::time::Duration;

use common::*;
use redis::Connection;

fn set(con: &mut Connection, key: &str, value: &str) {
    let _: () = redis::cmd("SET").arg(key).arg(value).query(con).unwrap();
}

fn get(con: &mut Connection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query(con).unwrap()
}

fn exists(con: &mut Connection, key: &str) -> bool {
    redis::cmd("EXISTS").arg(key).query::<i64>(con).unwrap() == 1
}

#[test]
fn one_threshold_is_reported_exactly_once() {
    let server = Server::start();
    let mut con = server.con();
    let replies: Vec<(i64, i64)> = (0..5)
        .map(|_| incrcheck(&mut con, "orders", 1, 60, &[3]))
        .collect();
    assert_eq!(replies, [(1, 0), (2, 0), (3, 1), (4, 0), (5, 0)]);
}

#[test]
fn a_jump_reports_the_highest_threshold_crossed() {
    let server = Server::start();
    let mut con = server.con();
    assert_eq!(
        incrcheck(&mut con, "amount", 99, 60, &[100, 500, 900]),
        (99, 0)
    );
    assert_eq!(
        incrcheck(&mut con, "amount", 1, 60, &[100, 500, 900]),
        (100, 1)
    );
    assert_eq!(
        incrcheck(&mut con, "amount", 900, 60, &[100, 500, 900]),
        (1000, 3)
    );
    assert_eq!(
        incrcheck(&mut con, "amount", 1, 60, &[100, 500, 900]),
        (1001, 0)
    );
}

#[test]
fn a_refund_below_a_threshold_rearms_it() {
    let server = Server::start();
    let mut con = server.con();
    assert_eq!(incrcheck(&mut con, "c", 3, 60, &[3]), (3, 1));
    assert_eq!(decrclamp(&mut con, "c", 2), 1);
    assert_eq!(incrcheck(&mut con, "c", 1, 60, &[3]), (2, 0));
    assert_eq!(incrcheck(&mut con, "c", 1, 60, &[3]), (3, 1));
}

#[test]
fn counters_stay_ordinary_strings() {
    let server = Server::start();
    let mut con = server.con();
    incrcheck(&mut con, "c", 5, 60, &[100]);
    assert_eq!(get(&mut con, "c").as_deref(), Some("5"));
    let after: i64 = redis::cmd("INCRBY")
        .arg("c")
        .arg(10)
        .query(&mut con)
        .unwrap();
    assert_eq!(after, 15);
    assert_eq!(incrcheck(&mut con, "c", 1, 60, &[100]), (16, 0));
    set(&mut con, "preset", "41");
    assert_eq!(incrcheck(&mut con, "preset", 1, 60, &[42]), (42, 1));
    set(&mut con, "negative", "-10");
    assert_eq!(incrcheck(&mut con, "negative", 11, 60, &[1]), (1, 1));
    let deleted: i64 = redis::cmd("DEL").arg("c").query(&mut con).unwrap();
    assert_eq!(deleted, 1);
}

#[test]
fn a_new_counter_gets_the_window_and_it_is_never_extended() {
    let server = Server::start();
    let mut con = server.con();
    incrcheck(&mut con, "w", 1, 100, &[10]);
    let ttl: i64 = redis::cmd("TTL").arg("w").query(&mut con).unwrap();
    assert!((99..=100).contains(&ttl), "ttl {ttl}");
    let expiry = pexpiretime(&mut con, "w");
    std::thread::sleep(Duration::from_millis(20));
    // A longer window on later calls does not move the running one.
    incrcheck(&mut con, "w", 1, 5000, &[10]);
    incrcheck(&mut con, "w", 1, 1, &[10]);
    assert_eq!(pexpiretime(&mut con, "w"), expiry);
}

#[test]
fn a_counter_without_ttl_gets_a_window() {
    let server = Server::start();
    let mut con = server.con();
    set(&mut con, "k", "7");
    assert_eq!(pexpiretime(&mut con, "k"), -1);
    assert_eq!(incrcheck(&mut con, "k", 1, 50, &[10]), (8, 0));
    let ttl: i64 = redis::cmd("TTL").arg("k").query(&mut con).unwrap();
    assert!((49..=50).contains(&ttl), "ttl {ttl}");
    let _: i64 = redis::cmd("PERSIST").arg("k").query(&mut con).unwrap();
    incrcheck(&mut con, "k", 1, 30, &[10]);
    let ttl: i64 = redis::cmd("TTL").arg("k").query(&mut con).unwrap();
    assert!((29..=30).contains(&ttl), "ttl {ttl}");
}

#[test]
fn the_window_ends_and_counting_starts_again() {
    let server = Server::start();
    let mut con = server.con();
    assert_eq!(incrcheck(&mut con, "short", 2, 1, &[2]), (2, 1));
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(incrcheck(&mut con, "short", 2, 1, &[2]), (2, 1));
}

#[test]
fn refunds_clamp_at_zero_and_keep_the_expiry() {
    let server = Server::start();
    let mut con = server.con();
    set(&mut con, "total", "100");
    let _: i64 = redis::cmd("PEXPIRE")
        .arg("total")
        .arg(90_000)
        .query(&mut con)
        .unwrap();
    let expiry = pexpiretime(&mut con, "total");
    assert_eq!(decrclamp(&mut con, "total", 50), 50);
    assert_eq!(pexpiretime(&mut con, "total"), expiry);
    assert_eq!(decrclamp(&mut con, "total", 70), 0);
    assert_eq!(pexpiretime(&mut con, "total"), expiry);
    assert_eq!(get(&mut con, "total").as_deref(), Some("0"));
}

#[test]
fn refunds_keep_a_counter_without_ttl_without_ttl() {
    let server = Server::start();
    let mut con = server.con();
    set(&mut con, "total", "10");
    assert_eq!(decrclamp(&mut con, "total", 3), 7);
    assert_eq!(pexpiretime(&mut con, "total"), -1);
}

#[test]
fn a_refund_on_nothing_writes_nothing() {
    let server = Server::start();
    let mut con = server.con();
    let before = snapshot(&mut con, "missing");
    assert_eq!(decrclamp(&mut con, "missing", 5), 0);
    assert!(!exists(&mut con, "missing"));
    assert_eq!(before, snapshot(&mut con, "missing"));

    for value in ["0", "-5"] {
        set(&mut con, "low", value);
        let _: i64 = redis::cmd("EXPIRE")
            .arg("low")
            .arg(100)
            .query(&mut con)
            .unwrap();
        let before = snapshot(&mut con, "low");
        assert_eq!(decrclamp(&mut con, "low", 5), 0);
        assert_eq!(before, snapshot(&mut con, "low"));
        assert_eq!(get(&mut con, "low").as_deref(), Some(value));
    }
}

#[test]
fn clamps_are_counted_with_their_lost_excess() {
    let server = Server::start();
    let mut con = server.con();
    set(&mut con, "total", "100");
    decrclamp(&mut con, "total", 50);
    decrclamp(&mut con, "total", 70);
    decrclamp(&mut con, "total", 70); // on 0: no clamp
    assert_eq!(info_field(&mut con, "guard_mon_decrclamp_calls"), 3);
    assert_eq!(info_field(&mut con, "guard_mon_clamps"), 1);
    assert_eq!(info_field(&mut con, "guard_mon_clamped_amount"), 20);
}

#[test]
fn incrcheck_stats_count_calls_and_crossings() {
    let server = Server::start();
    let mut con = server.con();
    for _ in 0..5 {
        incrcheck(&mut con, "c", 1, 60, &[3]);
    }
    let _ = redis::cmd("MON.INCRCHECK")
        .arg("c")
        .arg(0)
        .arg(1)
        .arg(1)
        .query::<redis::Value>(&mut con)
        .expect_err("a bad call gets an error reply");
    assert_eq!(info_field(&mut con, "guard_mon_incrcheck_calls"), 6);
    assert_eq!(info_field(&mut con, "guard_mon_crossings"), 1);
}

/// Keys for the error cases: a counter with a TTL, a list, a string that is
/// not a number, and a counter at the top of i64.
fn error_fixture(con: &mut Connection) {
    set(con, "counter", "10");
    let _: i64 = redis::cmd("EXPIRE")
        .arg("counter")
        .arg(100)
        .query(con)
        .unwrap();
    let _: i64 = redis::cmd("RPUSH").arg("list").arg("a").query(con).unwrap();
    let _: i64 = redis::cmd("EXPIRE")
        .arg("list")
        .arg(100)
        .query(con)
        .unwrap();
    set(con, "text", "hello");
    set(con, "max", &i64::MAX.to_string());
}

#[test]
fn incrcheck_errors_name_the_argument_and_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    error_fixture(&mut con);
    let too_many: Vec<String> = (1..=33).map(|t| t.to_string()).collect();
    let mut thirty_three: Vec<&[u8]> = vec![b"MON.INCRCHECK", b"counter", b"1", b"60"];
    thirty_three.extend(too_many.iter().map(|t| t.as_bytes()));
    let cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (
            vec![b"MON.INCRCHECK", b"counter", b"0", b"60", b"5"],
            "increment",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"-1", b"60", b"5"],
            "increment",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"1.5", b"60", b"5"],
            "increment",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"+1", b"60", b"5"],
            "increment",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"", b"60", b"5"],
            "increment",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"1", b"0", b"5"],
            "window",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"1", b"01", b"5"],
            "window",
        ),
        (
            vec![
                b"MON.INCRCHECK",
                b"counter",
                b"1",
                b"9223372036854775807",
                b"5",
            ],
            "window",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"1", b"60", b"0"],
            "threshold",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"1", b"60", b"5", b"5"],
            "threshold",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"1", b"60", b"5", b"4"],
            "threshold",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"1", b"60", b"5", b"x"],
            "threshold",
        ),
        (thirty_three, "threshold"),
        // the first bad argument in argument order is the one named
        (
            vec![b"MON.INCRCHECK", b"counter", b"0", b"0", b"0"],
            "increment",
        ),
        (
            vec![b"MON.INCRCHECK", b"counter", b"1", b"0", b"0"],
            "window",
        ),
        // arguments are checked before the key
        (
            vec![b"MON.INCRCHECK", b"list", b"0", b"60", b"5"],
            "increment",
        ),
        (
            vec![b"MON.INCRCHECK", b"list", b"1", b"60", b"5"],
            "WRONGTYPE",
        ),
        (
            vec![b"MON.INCRCHECK", b"text", b"1", b"60", b"5"],
            "ERR value is not an integer or out of range",
        ),
        (
            vec![b"MON.INCRCHECK", b"max", b"1", b"60", b"5"],
            "ERR increment or decrement would overflow",
        ),
    ];
    assert_errors_change_nothing(&mut con, &cases);
}

#[test]
fn decrclamp_errors_name_the_argument_and_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    error_fixture(&mut con);
    let cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (vec![b"MON.DECRCLAMP", b"counter", b"0"], "amount"),
        (vec![b"MON.DECRCLAMP", b"counter", b"-5"], "amount"),
        (vec![b"MON.DECRCLAMP", b"counter", b"-0"], "amount"),
        (vec![b"MON.DECRCLAMP", b"counter", b"abc"], "amount"),
        (
            vec![b"MON.DECRCLAMP", b"counter", b"99999999999999999999"],
            "amount",
        ),
        (vec![b"MON.DECRCLAMP", b"missing", b"0"], "amount"),
        (vec![b"MON.DECRCLAMP", b"list", b"1"], "WRONGTYPE"),
        (
            vec![b"MON.DECRCLAMP", b"text", b"1"],
            "ERR value is not an integer or out of range",
        ),
    ];
    assert_errors_change_nothing(&mut con, &cases);
    assert!(!exists(&mut con, "missing"));
}

#[test]
fn wrong_arity_gets_redis_own_error() {
    let server = Server::start();
    let mut con = server.con();
    assert_arity_errors(
        &mut con,
        &[
            vec!["MON.INCRCHECK", "k", "1", "60"],
            vec!["MON.INCRCHECK", "k"],
            vec!["MON.DECRCLAMP", "k"],
            vec!["MON.DECRCLAMP", "k", "1", "2"],
        ],
    );
    assert!(!exists(&mut con, "k"));
}

#[test]
fn no_ops_and_errors_do_not_disturb_watch_but_writes_do() {
    let server = Server::start();
    let mut con = server.con();
    set(&mut con, "zero", "0");
    set(&mut con, "text", "hello");
    set(&mut con, "counter", "10");
    assert!(watch_survives(&server, "missing", |c| assert_eq!(
        decrclamp(c, "missing", 5),
        0
    )));
    assert!(watch_survives(&server, "zero", |c| assert_eq!(
        decrclamp(c, "zero", 5),
        0
    )));
    assert!(watch_survives(&server, "text", |c| {
        redis::cmd("MON.INCRCHECK")
            .arg("text")
            .arg(1)
            .arg(1)
            .arg(1)
            .query::<redis::Value>(c)
            .unwrap_err();
    }));
    assert!(watch_survives(&server, "counter", |c| {
        redis::cmd("MON.DECRCLAMP")
            .arg("counter")
            .arg(0)
            .query::<redis::Value>(c)
            .unwrap_err();
    }));
    assert!(!watch_survives(&server, "counter", |c| assert_eq!(
        decrclamp(c, "counter", 1),
        9
    )));
    assert!(!watch_survives(&server, "counter", |c| {
        incrcheck(c, "counter", 1, 60, &[100]);
    }));
    assert!(!watch_survives(&server, "fresh", |c| {
        incrcheck(c, "fresh", 1, 60, &[100]);
    }));
}

#[test]
fn incrcheck_fires_incrby_expire_and_crossed() {
    let server = Server::start();
    let events = events_of(&server, |con| {
        incrcheck(con, "c", 1, 60, &[2]);
        incrcheck(con, "c", 1, 60, &[2]);
        incrcheck(con, "c", 1, 60, &[2]);
    });
    assert_eq!(
        events,
        pairs(&[
            ("incrby", "c"),
            ("expire", "c"),
            ("incrby", "c"),
            ("mon.crossed", "c"),
            ("incrby", "c")
        ])
    );
}

#[test]
fn decrclamp_fires_decrby_and_clamped_only_on_writes() {
    let server = Server::start();
    set(&mut server.con(), "t", "10");
    let events = events_of(&server, |con| {
        decrclamp(con, "t", 4);
        decrclamp(con, "t", 10);
        decrclamp(con, "t", 10); // on 0: nothing
        decrclamp(con, "nothing", 10);
    });
    assert_eq!(
        events,
        pairs(&[("decrby", "t"), ("decrby", "t"), ("mon.clamped", "t")])
    );
}

#[test]
fn malformed_input_never_crashes_the_server() {
    let mut server = Server::start();
    let mut con = server.con();
    let huge = vec![b'9'; 1 << 20];
    let binary = b"\0\xff\xfe-1\r\n";
    // (call, what it must answer): a huge key and an empty one are keys
    // like any other; everything else is refused with a standard error.
    let counted = redis::Value::Array(vec![redis::Value::Int(1), redis::Value::Int(1)]);
    for (args, expected) in [
        (vec![&b"MON.INCRCHECK"[..], b"k", &huge, b"1", b"1"], None),
        (
            vec![b"MON.INCRCHECK", &huge, b"1", b"1", b"1"],
            Some(&counted),
        ),
        (vec![b"MON.INCRCHECK", b"k", binary, binary, binary], None),
        (
            vec![b"MON.INCRCHECK", b"", b"1", b"1", b"1"],
            Some(&counted),
        ),
        (vec![b"MON.DECRCLAMP", b"k", binary], None),
        (vec![b"MON.DECRCLAMP", b"k", &huge], None),
    ] {
        let mut command = redis::cmd(std::str::from_utf8(args[0]).unwrap());
        for arg in &args[1..] {
            command.arg(*arg);
        }
        match (command.query::<redis::Value>(&mut con), expected) {
            (Ok(reply), Some(expected)) => assert_eq!(&reply, expected),
            (Err(error), None) => assert_eq!(error.code(), Some("ERR"), "{error}"),
            (other, _) => panic!("unexpected answer {other:?}"),
        }
        let pong: String = redis::cmd("PING").query(&mut con).unwrap();
        assert_eq!(pong, "PONG");
    }
    assert!(server.alive());
}

#[test]
fn the_snapshot_sees_every_kind_of_change() {
    // Self-test of the harness: the "changes nothing" checks above would
    // catch a write, a propagation or a TTL change.
    let server = Server::start();
    let mut con = server.con();
    set(&mut con, "t", "10");
    let before = snapshot(&mut con, "t");
    assert_eq!(decrclamp(&mut con, "t", 1), 9);
    let after = snapshot(&mut con, "t");
    assert_ne!(before.dump, after.dump);
    assert!(
        after.aof_size > before.aof_size,
        "the write was propagated to the AOF"
    );
    let _: i64 = redis::cmd("EXPIRE")
        .arg("t")
        .arg(100)
        .query(&mut con)
        .unwrap();
    assert_ne!(after.pexpiretime, snapshot(&mut con, "t").pexpiretime);
}
