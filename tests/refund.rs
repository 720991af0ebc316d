//! CL.REFUND and `BLOCK` (CL.THROTTLE's and CL.THROTTLEALL's penalty box)
//! against a real server: replies and stored cells call by call against
//! SPEC's rules written out in `common::gcra`, refunds that never pass a
//! full limiter and delete the key when it is full, a later block kept
//! without a write, errors that change nothing, replicas, the AOF and
//! INFO.

mod common;

use common::gcra::{self, Limiter, Write};
use common::*;
use redis::{Connection, Value};

const S: i64 = 1_000_000_000;

fn tat(con: &mut Connection, key: &str) -> Option<i64> {
    redis::cmd("GET").arg(key).query(con).unwrap()
}

fn args(l: &Limiter) -> [i64; 3] {
    [l.max_burst, l.count, l.period]
}

/// The model at every instant of `bracket` (1 µs apart, and both ends),
/// and at the exact instants the observed arrival times `seen` imply (a
/// stored time is the call's instant plus what the model adds to it, so
/// sampled instants alone would miss it): does one give `wanted`?
fn model_gives<T: PartialEq>(
    bracket: (i64, i64),
    seen: &[Option<i64>],
    model: impl Fn(i64) -> (T, Vec<Option<i64>>),
    wanted: &T,
) -> bool {
    let (from, to) = bracket;
    let matches = |now: i64| {
        let (value, stored) = model(now);
        (value == *wanted && stored == seen, stored)
    };
    for now in (from..to).step_by(1_000).chain([to]) {
        let (hit, stored) = matches(now);
        if hit {
            return true;
        }
        // A cell the model writes at `now`, seen written: the instant
        // that wrote exactly what is seen.
        for (model_tat, seen_tat) in stored.iter().zip(seen) {
            if let (Some(t), Some(o)) = (model_tat, seen_tat) {
                let exact = now + (o - t);
                if exact != now && (from..=to).contains(&exact) && matches(exact).0 {
                    return true;
                }
            }
        }
    }
    false
}

/// One call at an instant the test brackets: its reply must be one the
/// model gives at an instant of the bracket, with the cell left as the
/// model leaves it at that same instant, its expiry the first ms at or
/// after the arrival time.
fn check<F>(
    con: &mut Connection,
    key: &str,
    call: impl FnOnce(&mut Connection) -> [i64; 5],
    model: F,
) where
    F: Fn(Option<i64>, i64) -> ([i64; 5], Write),
{
    let stored = tat(con, key);
    let expiry = pexpiretime(con, key);
    let before = now_ns();
    let reply = call(con);
    let after = now_ns();
    let left = tat(con, key);
    let left_expiry = pexpiretime(con, key);
    let expected_expiry = match left {
        Some(t) if left != stored => (t + 999_999) / 1_000_000,
        Some(_) => expiry,
        None => -2,
    };
    assert_eq!(
        left_expiry, expected_expiry,
        "{key}: the expiry of {left:?}"
    );
    let leaves = |now: i64| {
        let (reply, write) = model(stored, now);
        let left = match write {
            Write::Nothing => stored,
            Write::Set(t) => Some(t),
            Write::Del => None,
        };
        (reply, vec![left])
    };
    assert!(
        model_gives((before, after), &[left], leaves, &reply),
        "{key} at {stored:?}: replied {reply:?}, left {left:?}; the model at the start: {:?}",
        model(stored, before)
    );
}

fn written(stored: Option<i64>) -> Write {
    stored.map_or(Write::Nothing, Write::Set)
}

#[test]
fn refunds_and_blocks_follow_spec_call_by_call() {
    let server = Server::start();
    let mut con = server.con();
    // Limit 5, one per 12 s; and limit 1, one per 40 s (an interval that
    // does not divide into whole seconds: 13.33 s).
    for (key, l) in [
        (
            "a",
            Limiter {
                max_burst: 4,
                count: 5,
                period: 60,
            },
        ),
        (
            "b",
            Limiter {
                max_burst: 0,
                count: 3,
                period: 40,
            },
        ),
    ] {
        let steps: &[(&str, i64)] = &[
            ("refund", 1),
            ("take", 3),
            ("refund", 1),
            ("take", 9),
            ("block", 2),
            ("take", 1),
            ("block", 30),
            ("block", 30),
            ("block", 1),
            ("refund", 2),
            ("block", 6),
            ("refund", 100),
            ("take", 0),
            ("take", 5),
            ("refund", 4),
            ("take", 1),
            ("refund", 1),
        ];
        for &(what, n) in steps {
            match what {
                "take" => check(
                    &mut con,
                    key,
                    |c| throttle(c, key, l.max_burst, l.count, l.period, n),
                    |t, now| {
                        let (r, s) = gcra::throttle(t, now, &l, n);
                        (r, written(s))
                    },
                ),
                "block" => check(
                    &mut con,
                    key,
                    |c| throttle_block(c, key, args(&l), 1, n),
                    |t, now| {
                        let (r, s) = gcra::throttle_blocking(t, now, &l, 1, n);
                        (r, written(s))
                    },
                ),
                _ => check(
                    &mut con,
                    key,
                    |c| refund(c, key, args(&l), n),
                    |t, now| gcra::refund(t, now, &l, n),
                ),
            }
        }
    }
}

#[test]
fn a_refund_never_passes_a_full_limiter_and_deletes_the_key_when_full() {
    let server = Server::start();
    let mut con = server.con();
    let l = [2, 1, 60];
    assert_eq!(throttle(&mut con, "rate", 2, 1, 60, 3), [0, 3, 0, -1, 180]);
    // Two back: one place in flight.
    assert_eq!(refund(&mut con, "rate", l, 2), [0, 3, 2, -1, 60]);
    // More back than is in flight: full, and the key is gone.
    let events = events_of(&server, |c| {
        assert_eq!(refund(c, "rate", l, 5), [0, 3, 3, -1, 0]);
    });
    assert_eq!(events, pairs(&[("del", "rate")]));
    let exists: i64 = redis::cmd("EXISTS").arg("rate").query(&mut con).unwrap();
    assert_eq!(exists, 0);
    // The burst is exactly max_burst + 1 again, no more.
    let burst: Vec<i64> = (0..4)
        .map(|_| throttle(&mut con, "rate", 2, 1, 60, 1)[0])
        .collect();
    assert_eq!(burst, [0, 0, 0, 1]);
}

#[test]
fn refunds_on_a_full_limiter_write_nothing_and_keep_watch() {
    let server = Server::start();
    let _replica = Server::replica_of(&server);
    let mut con = server.con();
    let _: () = redis::cmd("SET")
        .arg("past")
        .arg(5)
        .query(&mut con)
        .unwrap();
    let offset = info_field(&mut con, "master_repl_offset");
    let changes = info_field(&mut con, "rdb_changes_since_last_save");
    for key in ["missing", "past"] {
        let before = snapshot(&mut con, key);
        assert_eq!(refund(&mut con, key, [2, 1, 60], 1), [0, 3, 3, -1, 0]);
        assert_eq!(snapshot(&mut con, key), before, "{key}");
        assert!(watch_survives(&server, key, |c| {
            refund(c, key, [2, 1, 60], 1);
        }));
    }
    assert_eq!(info_field(&mut con, "master_repl_offset"), offset);
    assert_eq!(info_field(&mut con, "rdb_changes_since_last_save"), changes);
    // A refund that gives something back is a write WATCH sees.
    throttle(&mut con, "rate", 2, 1, 60, 2);
    assert!(!watch_survives(&server, "rate", |c| {
        refund(c, "rate", [2, 1, 60], 1);
    }));
}

#[test]
fn block_keeps_a_later_arrival_time_without_a_write() {
    let server = Server::start();
    let _replica = Server::replica_of(&server);
    let mut con = server.con();
    // Blocked for an hour already.
    let later = now_ns() + 3_600 * S;
    let _: () = redis::cmd("SET")
        .arg("login")
        .arg(later)
        .arg("PXAT")
        .arg((later + 999_999) / 1_000_000)
        .query(&mut con)
        .unwrap();
    let before = snapshot(&mut con, "login");
    let offset = info_field(&mut con, "master_repl_offset");
    let reply = throttle_block(&mut con, "login", [4, 5, 60], 1, 60);
    assert_eq!(reply[..3], [1, 5, 0]);
    assert!((3_599..=3_600).contains(&reply[4]), "{reply:?}");
    // Nothing written: only the counters of what happened moved.
    let moved = [("throttle_limited", 1), ("throttle_blocked", 1)];
    assert_eq!(
        counted(snapshot(&mut con, "login"), &before, &moved),
        before
    );
    assert_eq!(info_field(&mut con, "master_repl_offset"), offset);
    assert!(watch_survives(&server, "login", |c| {
        assert_eq!(throttle_block(c, "login", [4, 5, 60], 1, 60)[0], 1);
    }));
    // A shorter stored block is pushed out, and WATCH sees it.
    let _: () = redis::cmd("SET")
        .arg("short")
        .arg(now_ns() + 5 * 12 * S)
        .query(&mut con)
        .unwrap();
    assert!(!watch_survives(&server, "short", |c| {
        assert_eq!(
            throttle_block(c, "short", [4, 5, 60], 1, 600),
            [1, 5, 0, 600, 648]
        );
    }));
}

#[test]
fn allowed_and_hopeless_calls_ignore_block() {
    let server = Server::start();
    let mut con = server.con();
    // Allowed: exactly the reply and cell of a call without BLOCK.
    assert_eq!(
        throttle_block(&mut con, "a", [2, 1, 60], 1, 900),
        [0, 3, 2, -1, 60]
    );
    let stored = tat(&mut con, "a");
    // A quantity above the limit never fits: refused, nothing blocked.
    assert_eq!(
        throttle_block(&mut con, "a", [2, 1, 60], 4, 900),
        [1, 3, 2, -1, 60]
    );
    assert_eq!(tat(&mut con, "a"), stored);
    let before = snapshot(&mut con, "a");
    let reply = throttle_all_blocking(
        &mut con,
        &[
            "2", "a", "2", "1", "60", "b", "9", "1", "60", "QUANTITY", "4", "BLOCK", "900",
        ],
    );
    assert_eq!(reply[..2], [1, -1]);
    let moved = [("throttle_all_limited", 1)];
    assert_eq!(counted(snapshot(&mut con, "a"), &before, &moved), before);
    let exists: i64 = redis::cmd("EXISTS").arg("b").query(&mut con).unwrap();
    assert_eq!(exists, 0);
    assert_eq!(info_field(&mut con, "guard_throttle_blocked"), 0);
}

/// CL.THROTTLEALL's reply flattened: `[limited, retry_after, cells...]`.
fn throttle_all_blocking(con: &mut Connection, args: &[&str]) -> Vec<i64> {
    let reply: Value = redis::cmd("CL.THROTTLEALL").arg(args).query(con).unwrap();
    let Value::Array(items) = reply else {
        panic!("{reply:?}")
    };
    let mut flat = vec![
        redis::from_redis_value::<i64>(&items[0]).unwrap(),
        redis::from_redis_value::<i64>(&items[1]).unwrap(),
    ];
    for cell in &items[2..] {
        flat.extend(redis::from_redis_value::<Vec<i64>>(cell).unwrap());
    }
    flat
}

#[test]
fn throttleall_blocks_each_refusing_limiter_as_spec_says() {
    let server = Server::start();
    let mut con = server.con();
    let limiters = [
        Limiter {
            max_burst: 9,
            count: 10,
            period: 1,
        },
        Limiter {
            max_burst: 1,
            count: 2,
            period: 60,
        },
        Limiter {
            max_burst: 0,
            count: 1,
            period: 30,
        },
    ];
    let keys = ["{u}:s", "{u}:m", "{u}:h"];
    let mut call = vec!["3".to_string()];
    for (key, l) in keys.iter().zip(&limiters) {
        call.push(key.to_string());
        call.extend(args(l).map(|n| n.to_string()));
    }
    call.extend(["block".to_string(), "120".to_string()]);
    let call: Vec<&str> = call.iter().map(String::as_str).collect();
    for _ in 0..4 {
        let stored: Vec<Option<i64>> = keys.iter().map(|k| tat(&mut con, k)).collect();
        let before = now_ns();
        let reply = throttle_all_blocking(&mut con, &call);
        let after = now_ns();
        let left: Vec<Option<i64>> = keys.iter().map(|k| tat(&mut con, k)).collect();
        let leaves = |now: i64| {
            let (reply, written) = gcra::throttle_all_blocking(&stored, now, &limiters, 1, 120);
            let left = written.iter().zip(&stored).map(|(w, s)| w.or(*s)).collect();
            (reply.concat(), left)
        };
        assert!(
            model_gives((before, after), &left, leaves, &reply),
            "replied {reply:?}, left {left:?}; the model at the start: {:?}",
            gcra::throttle_all_blocking(&stored, before, &limiters, 1, 120)
        );
    }
    // From the second call on, the half-minute limiter refused (nothing
    // consumed elsewhere, so the minute's two places stay free), blocked
    // 120 s each time.
    let h = tat(&mut con, "{u}:h").unwrap();
    assert!(h > now_ns() + 119 * S, "{h}");
    assert!(tat(&mut con, "{u}:m").unwrap() < now_ns() + 61 * S);
    assert_eq!(info_field(&mut con, "guard_throttle_blocked"), 3);
    assert_eq!(info_field(&mut con, "guard_throttle_all_limited"), 3);
}

#[test]
fn errors_name_the_argument_and_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    throttle(&mut con, "rate", 5, 1, 60, 3);
    let _: () = redis::cmd("SET")
        .arg("text")
        .arg("abc")
        .query(&mut con)
        .unwrap();
    let _: i64 = redis::cmd("SADD")
        .arg("set")
        .arg("x")
        .query(&mut con)
        .unwrap();
    let huge = b"9223372036854775807";
    let cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (
            vec![b"CL.REFUND", b"rate", b"-1", b"1", b"60", b"1"],
            "ERR max_burst",
        ),
        (
            vec![b"CL.REFUND", b"rate", b"+5", b"1", b"60", b"1"],
            "ERR max_burst",
        ),
        (
            vec![b"CL.REFUND", b"rate", b"5", b"0", b"60", b"1"],
            "ERR count",
        ),
        (
            vec![b"CL.REFUND", b"rate", b"5", b"1", b"0", b"1"],
            "ERR period",
        ),
        (
            vec![b"CL.REFUND", b"rate", b"5", b"1", b"60", b"0"],
            "ERR quantity",
        ),
        (
            vec![b"CL.REFUND", b"rate", b"5", b"1", b"60", b"-2"],
            "ERR quantity",
        ),
        (
            vec![b"CL.REFUND", b"rate", b"5", b"1", b"60", b"\xff"],
            "ERR quantity",
        ),
        (
            vec![b"CL.REFUND", b"rate", b"5", b"1", b"60", huge],
            "ERR quantity is too large",
        ),
        (
            vec![b"CL.REFUND", b"rate", b"5", b"1", huge, b"1"],
            "ERR period is too large",
        ),
        (
            vec![b"CL.REFUND", b"rate", b"5", b"2000000000", b"1", b"1"],
            "ERR count is too large",
        ),
        (
            vec![b"CL.REFUND", b"missing", b"5", b"0", b"60", b"1"],
            "ERR count",
        ),
        (
            vec![b"CL.REFUND", b"set", b"5", b"1", b"60", b"1"],
            "WRONGTYPE",
        ),
        (
            vec![b"CL.REFUND", b"set", b"5", b"1", b"60", b"0"],
            "ERR quantity",
        ),
        (
            vec![b"CL.REFUND", b"text", b"5", b"1", b"60", b"1"],
            "value is not an integer",
        ),
        (
            vec![
                b"CL.THROTTLE",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"1",
                b"BLOCK",
                b"0",
            ],
            "ERR block must be a positive integer",
        ),
        (
            vec![b"CL.THROTTLE", b"rate", b"5", b"1", b"60", b"BLOCK", b"-1"],
            "ERR block",
        ),
        (
            vec![
                b"CL.THROTTLE",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"1",
                b"block",
                b"x",
            ],
            "ERR block is not an integer",
        ),
        (
            vec![
                b"CL.THROTTLE",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"1",
                b"BLOCK",
                huge,
            ],
            "ERR block is too large",
        ),
        (
            vec![
                b"CL.THROTTLE",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"1",
                b"BLOCK",
                b"8000000000",
            ],
            "ERR block is too large",
        ),
        (
            vec![b"CL.THROTTLE", b"rate", b"5", b"1", b"60", b"1", b"BLOCK"],
            "ERR option BLOCK needs a value",
        ),
        (
            vec![
                b"CL.THROTTLE",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"1",
                b"BLOCK",
                b"5",
                b"Block",
                b"5",
            ],
            "ERR option BLOCK is given more than once",
        ),
        (
            vec![
                b"CL.THROTTLE",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"1",
                b"BOGUS",
                b"5",
            ],
            "ERR unknown option 'BOGUS'",
        ),
        (
            vec![b"CL.THROTTLE", b"rate", b"5", b"1", b"60", b"1", b"1"],
            "ERR unknown option '1'",
        ),
        (
            vec![
                b"CL.THROTTLE",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"-1",
                b"BLOCK",
                b"0",
            ],
            "ERR quantity",
        ),
        (
            vec![b"CL.THROTTLE", b"set", b"5", b"1", b"60", b"BLOCK", b"0"],
            "ERR block",
        ),
        (
            vec![b"CL.THROTTLE", b"text", b"5", b"1", b"60", b"BLOCK", b"10"],
            "value is not an integer",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"1",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"BLOCK",
                b"0",
            ],
            "ERR block",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"1",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"BLOCK",
                b"1",
                b"BLOCK",
                b"1",
            ],
            "more than once",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"1",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"BLOCK",
                b"0",
                b"QUANTITY",
                b"-1",
            ],
            "ERR block",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"1",
                b"rate",
                b"5",
                b"1",
                b"60",
                b"QUANTITY",
                huge,
                b"BLOCK",
                b"0",
            ],
            "ERR quantity is too large",
        ),
    ];
    for (call, expected) in &cases {
        // CL.THROTTLEALL's key is its argv[2].
        let key = if call[0] == b"CL.THROTTLEALL" {
            call[2]
        } else {
            call[1]
        };
        assert_error_changes_nothing(&mut con, std::str::from_utf8(key).unwrap(), call, expected);
    }
    let exists: i64 = redis::cmd("EXISTS").arg("missing").query(&mut con).unwrap();
    assert_eq!(exists, 0);
    assert_arity_errors(
        &mut con,
        &[
            vec!["CL.REFUND", "k", "1", "1", "1"],
            vec!["CL.REFUND", "k", "1", "1", "1", "1", "1"],
        ],
    );
}

#[test]
fn a_late_replica_and_the_aof_get_absolute_times_and_del() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();
    let start = now_ms();
    let sleeper = replica.hold_back(1.5);
    throttle(&mut con, "llm", 9, 10, 60, 10);
    refund(&mut con, "llm", [9, 10, 60], 4);
    throttle(&mut con, "login", 0, 1, 60, 1);
    throttle_block(&mut con, "login", [0, 1, 60], 1, 900);
    throttle(&mut con, "gone", 4, 1, 60, 2);
    refund(&mut con, "gone", [4, 1, 60], 2);
    replica_caught_up(&mut con);
    sleeper.join().unwrap();
    let keys = ["llm", "login", "gone"];
    let on_primary = keys_state(&mut con, &keys);
    assert_eq!(on_primary[2], ("none".to_string(), vec![], -2));
    // Blocked 900 s from the call, not from when the replica applied it.
    assert!(on_primary[1].2 >= start + 900_000, "{on_primary:?}");
    assert_eq!(on_primary, keys_state(&mut replica.con(), &keys));
    let aof = primary.aof_text().to_lowercase();
    assert!(
        !aof.contains("cl.refund") && !aof.contains("cl.throttle"),
        "{aof}"
    );
    assert_eq!(aof.matches("pxat").count(), 5, "{aof}");
    assert_eq!(aof.matches("\r\ndel\r\n").count(), 1, "{aof}");
}

#[test]
fn info_counts_refunds_and_blocks() {
    let server = Server::start();
    let mut con = server.con();
    throttle(&mut con, "r", 2, 1, 60, 3);
    refund(&mut con, "r", [2, 1, 60], 1);
    refund(&mut con, "r", [2, 1, 60], 9);
    refund(&mut con, "r", [2, 1, 60], 1);
    throttle(&mut con, "b", 0, 1, 60, 1);
    throttle_block(&mut con, "b", [0, 1, 60], 1, 30);
    throttle_block(&mut con, "b", [0, 1, 60], 1, 30);
    assert_eq!(info_field(&mut con, "guard_throttle_refunds"), 2);
    assert_eq!(info_field(&mut con, "guard_throttle_blocked"), 2);
    assert_eq!(info_field(&mut con, "guard_throttle_calls"), 4);
    assert_eq!(info_field(&mut con, "guard_throttle_limited"), 2);
}
