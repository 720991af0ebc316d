//! CL.THROTTLEALL against real servers: replies call by call against the
//! GCRA as SPEC and redis-cell define it, worked out in the test, for each limiter (interleaved with CL.THROTTLE
//! on the same keys), all or nothing, a refusal that changes nothing, the
//! errors, contention on the same two keys, replicas, the AOF and INFO.

mod common;

use std::thread;
use std::time::Duration;

use common::crowd::Crowd;
use common::*;
use redis::{Connection, Value};

/// `[limited, retry_after, [5 integers] per key]`
type Reply = (i64, i64, Vec<[i64; 5]>);

fn throttle_all(con: &mut Connection, args: &[&str]) -> Reply {
    let reply: Value = redis::cmd("CL.THROTTLEALL").arg(args).query(con).unwrap();
    let Value::Array(items) = reply else {
        panic!("{reply:?}")
    };
    let int = |v: &Value| match v {
        Value::Int(n) => *n,
        other => panic!("{other:?}"),
    };
    let cells = items[2..]
        .iter()
        .map(|cell| {
            let cell: Vec<i64> = redis::from_redis_value(cell).unwrap();
            cell.try_into().unwrap()
        })
        .collect();
    (int(&items[0]), int(&items[1]), cells)
}

fn tat(con: &mut Connection, key: &str) -> Option<i64> {
    redis::cmd("GET").arg(key).query(con).unwrap()
}

/// Calls `call` and checks its reply against `expected(now)` for the
/// server's instant, which lies between the readings around the call: the
/// reply must be what the model gives at one of them (both agree but where
/// a second or an emission boundary falls in between).
fn matches_the_model<R: PartialEq + std::fmt::Debug>(
    call: impl FnOnce() -> R,
    expected: impl Fn(i64) -> R,
    what: &str,
) -> R {
    let before = now_ns();
    let reply = call();
    let after = now_ns();
    let (early, late) = (expected(before), expected(after));
    assert!(
        reply == early || reply == late,
        "{what}: {reply:?}, the model says {early:?} .. {late:?}"
    );
    reply
}

/// A limiter's arguments: `(max_burst, count, period_s)`.
type Limiter = (i64, i64, i64);

/// One limiter as SPEC and redis-cell define it, worked out here (not the
/// module's rules): `(max_burst, count, period_s)`, the stored TAT (ns; a
/// past one or none means full) and the quantity at `now` (ns): the
/// 5-integer reply, times rounded up to seconds.
fn cell_model(limiter: Limiter, tat: Option<i64>, quantity: i64, now: i64) -> [i64; 5] {
    let (max_burst, count, period_s) = limiter;
    let ceil_s = |ns: i128| ((ns + 999_999_999) / 1_000_000_000) as i64;
    let emission = i128::from(period_s) * 1_000_000_000 / i128::from(count);
    let tolerance = emission * i128::from(max_burst + 1);
    let now = i128::from(now);
    let tat = tat.map_or(now, |t| i128::from(t).max(now));
    let increment = emission * i128::from(quantity);
    let allow_at = tat + increment - tolerance;
    let limited = allow_at > now;
    let (ttl, retry_after) = match (limited, increment <= tolerance) {
        (false, _) => (tat + increment - now, -1),
        (true, true) => (tat - now, ceil_s(allow_at - now)),
        (true, false) => (tat - now, -1),
    };
    let remaining = ((tolerance - ttl).max(0) / emission) as i64;
    [
        i64::from(limited),
        max_burst + 1,
        remaining,
        retry_after,
        ceil_s(ttl),
    ]
}

/// CL.THROTTLEALL by SPEC over [`cell_model`]: every limiter judged at
/// `now`; refused when any refuses, then the refusing ones' replies and
/// the others' unconsumed (quantity 0); retry_after the longest wait, -1
/// when allowed or when a refusing one can never allow.
fn all_model(limiters: &[(Limiter, Option<i64>)], quantity: i64, now: i64) -> Reply {
    let cells: Vec<[i64; 5]> = limiters
        .iter()
        .map(|&(limiter, tat)| cell_model(limiter, tat, quantity, now))
        .collect();
    let refusing: Vec<&[i64; 5]> = cells.iter().filter(|c| c[0] == 1).collect();
    if refusing.is_empty() {
        return (0, -1, cells);
    }
    let retry_after = if refusing.iter().any(|c| c[3] == -1) {
        -1
    } else {
        refusing.iter().map(|c| c[3]).max().unwrap()
    };
    let cells = cells
        .iter()
        .zip(limiters)
        .map(|(cell, &(limiter, tat))| match cell[0] {
            1 => *cell,
            _ => cell_model(limiter, tat, 0, now),
        })
        .collect();
    (1, retry_after, cells)
}

#[test]
fn each_limiter_is_judged_as_cl_throttle_judges_it_all_or_nothing() {
    let server = Server::start();
    let mut con = server.con();
    // Per second: 3 at once, one a second; per "day": 5 at once, one every
    // 2 s. Arguments as given, and as (max_burst, count, period).
    let args = ["2", "s", "2", "1", "1", "d", "4", "1", "2"];
    let limiters = [(2, 1, 1), (4, 1, 2)];
    let (mut allowed, mut refused) = (0, 0);
    for step in 0..24 {
        let tats = [tat(&mut con, "s"), tat(&mut con, "d")];
        if step % 4 == 3 {
            // CL.THROTTLE on one of the same keys, between the others.
            let reply = matches_the_model(
                || throttle(&mut con, "s", 2, 1, 1, 1),
                |now| cell_model(limiters[0], tats[0], 1, now),
                &format!("step {step}: CL.THROTTLE"),
            );
            assert_eq!(reply[1], 3);
        } else {
            let (limited, _, _) = matches_the_model(
                || throttle_all(&mut con, &args),
                |now| {
                    let given: Vec<_> = limiters.iter().copied().zip(tats).collect();
                    all_model(&given, 1, now)
                },
                &format!("step {step}"),
            );
            if limited == 1 {
                refused += 1;
                // All or nothing: neither TAT moved.
                assert_eq!([tat(&mut con, "s"), tat(&mut con, "d")], tats);
            } else {
                allowed += 1;
            }
        }
        thread::sleep(Duration::from_millis(230));
    }
    assert!(
        allowed > 3 && refused > 3,
        "{allowed} allowed, {refused} refused"
    );
}

#[test]
fn a_refused_call_changes_nothing_on_any_key() {
    let server = Server::start();
    let _replica = Server::replica_of(&server);
    let mut con = server.con();
    // "day" has room; "second" is full.
    let args = ["2", "day", "99", "100", "86400", "second", "0", "1", "60"];
    assert_eq!(throttle_all(&mut con, &args).0, 0);
    let before = (snapshot(&mut con, "day"), snapshot(&mut con, "second"));
    let offset = info_field(&mut con, "master_repl_offset");
    for key in ["day", "second"] {
        assert!(watch_survives(&server, key, |c| {
            let (limited, retry_after, cells) = throttle_all(c, &args);
            assert_eq!((limited, cells[1][0]), (1, 1));
            assert!(retry_after > 0);
            // The day limiter is reported unconsumed: 99 left of 100.
            assert_eq!(cells[0][..3], [0, 100, 99]);
        }));
    }
    // Two refusals, counted as such, and nothing else.
    let limited = [("throttle_all_limited", 2)];
    assert_eq!(
        counted(snapshot(&mut con, "day"), &before.0, &limited),
        before.0
    );
    assert_eq!(
        counted(snapshot(&mut con, "second"), &before.1, &limited),
        before.1
    );
    assert_eq!(info_field(&mut con, "master_repl_offset"), offset);
    // A peek (QUANTITY 0) writes nothing either, even when allowed.
    let peek = [
        "2", "day", "99", "100", "86400", "other", "0", "1", "60", "QUANTITY", "0",
    ];
    assert!(watch_survives(&server, "day", |c| {
        assert_eq!(throttle_all(c, &peek).0, 0);
    }));
    let counted_too = [("throttle_all_limited", 2), ("throttle_all_allowed", 1)];
    assert_eq!(
        counted(snapshot(&mut con, "day"), &before.0, &counted_too),
        before.0
    );
    let exists: i64 = redis::cmd("EXISTS").arg("other").query(&mut con).unwrap();
    assert_eq!(exists, 0);
}

#[test]
fn a_quantity_above_any_burst_can_never_be_allowed() {
    let server = Server::start();
    let mut con = server.con();
    let args = [
        "2", "a", "9", "10", "1", "b", "2", "1", "1", "QUANTITY", "5",
    ];
    let (limited, retry_after, cells) = throttle_all(&mut con, &args);
    assert_eq!((limited, retry_after), (1, -1));
    assert_eq!(cells[1][3], -1);
    assert_eq!(cells[0][..3], [0, 10, 10]);
}

#[test]
fn errors_name_the_first_bad_argument_and_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    let _: () = redis::cmd("SET")
        .arg("text")
        .arg("hello")
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("RPUSH")
        .arg("list")
        .arg("x")
        .query(&mut con)
        .unwrap();
    throttle(&mut con, "cell", 5, 1, 60, 1);
    let cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (
            vec![b"CL.THROTTLEALL", b"0", b"cell", b"1", b"1", b"1"],
            "numkeys",
        ),
        (
            vec![b"CL.THROTTLEALL", b"17", b"cell", b"1", b"1", b"1"],
            "numkeys",
        ),
        (
            vec![b"CL.THROTTLEALL", b"2", b"cell", b"1", b"1", b"1"],
            "numkeys is 2",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"2",
                b"cell",
                b"1",
                b"1",
                b"1",
                b"x",
                b"-1",
                b"0",
                b"0",
            ],
            "max_burst",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"2",
                b"cell",
                b"1",
                b"0",
                b"1",
                b"x",
                b"-1",
                b"0",
                b"0",
            ],
            "count",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"2",
                b"cell",
                b"1",
                b"1",
                b"1",
                b"cell",
                b"1",
                b"1",
                b"1",
            ],
            "ERR key is given more than once",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"1",
                b"cell",
                b"1",
                b"1",
                b"1",
                b"QUANTITY",
                b"-1",
            ],
            "quantity",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"1",
                b"cell",
                b"1",
                b"1",
                b"1",
                b"LIMIT",
                b"1",
            ],
            "unknown option 'LIMIT'",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"2",
                b"cell",
                b"5",
                b"1",
                b"60",
                b"text",
                b"1",
                b"1",
                b"1",
            ],
            "not an integer",
        ),
        (
            vec![
                b"CL.THROTTLEALL",
                b"2",
                b"cell",
                b"5",
                b"1",
                b"60",
                b"list",
                b"1",
                b"1",
                b"1",
            ],
            "WRONGTYPE",
        ),
    ];
    // Whichever key an error would have touched, none changed.
    for key in ["cell", "text", "list", "x"] {
        for (args, expected) in &cases {
            assert_error_changes_nothing(&mut con, key, args, expected);
        }
    }
    assert_arity_errors(&mut con, &[vec!["CL.THROTTLEALL", "1", "k", "1", "1"]]);
}

#[test]
fn contention_on_the_same_two_keys_admits_the_same_requests_on_both() {
    let server = Server::with_args(&["--appendonly", "no"]);
    let mut crowd = Crowd::connect(&server, 50);
    // 10 fit the first limiter, 20 the second: exactly 10 of 50 pass, and
    // each consumes one place of both.
    let args = [
        "2",
        "{u}:burst",
        "9",
        "1",
        "60",
        "{u}:day",
        "19",
        "1",
        "86400",
    ];
    let replies = crowd.run(|_, con| throttle_all(con, &args).0);
    assert_eq!(replies.iter().filter(|&&limited| limited == 0).count(), 10);
    let mut con = server.con();
    let peek = |con: &mut Connection, key: &str, burst: i64, period: i64| {
        throttle(con, key, burst, 1, period, 0)[2]
    };
    assert_eq!(peek(&mut con, "{u}:burst", 9, 60), 0);
    assert_eq!(peek(&mut con, "{u}:day", 19, 86400), 10);
    assert_only_these_counters(
        &mut con,
        &[
            ("throttle_all_calls", 50),
            ("throttle_all_allowed", 10),
            ("throttle_all_limited", 40),
            ("throttle_calls", 2),
            ("throttle_allowed", 2),
        ],
    );
}

#[test]
fn replicas_and_the_aof_get_the_same_cells() {
    let mut server = Server::start();
    let replica = Server::replica_of(&server);
    let mut con = server.con();
    let keys = ["{c}:second".to_string(), "{c}:day".to_string()];
    let held = replica.hold_back(1.0);
    for _ in 0..5 {
        throttle_all(
            &mut con,
            &[
                "2", &keys[0], "9", "10", "1", &keys[1], "99", "100", "86400",
            ],
        );
    }
    held.join().unwrap();
    let offset = info_field(&mut con, "master_repl_offset");
    replica.wait_until(
        |info| info.contains(&format!("slave_repl_offset:{offset}")),
        "replica caught up",
    );
    let key_refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let expected = keys_state(&mut con, &key_refs);
    assert_eq!(keys_state(&mut replica.con(), &key_refs), expected);
    // Each call's writes travel as one transaction of SETs with PXAT.
    let aof = server.aof_text();
    assert_eq!(aof.matches("PXAT").count(), 10, "{aof}");
    assert_eq!(aof.matches("MULTI").count(), 5, "{aof}");
    server.restart();
    assert_eq!(keys_state(&mut server.con(), &key_refs), expected);
}
