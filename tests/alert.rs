//! `ALERT stream [MAXLEN n]` against real servers: the entry of every
//! crossing (and clamp) with its fields in order, nothing when nothing
//! crossed, errors and wrong types that write nothing (the counter
//! included), a stream that cannot take an entry, contention, a replica
//! held back and the AOF with the same entries and IDs, ACL key patterns,
//! events, and the worker's side: a consumer group, a worker killed before
//! XACK, the entry ID as the idempotency key.

mod common;

use std::collections::BTreeSet;

use common::crowd::Crowd;
use common::*;
use redis::{Connection, Value};

/// An entry: its ID and its field/value pairs in order.
type Entry = (String, Vec<String>);

fn entries(con: &mut Connection, stream: &str) -> Vec<Entry> {
    let raw: Vec<(String, Vec<String>)> = redis::cmd("XRANGE")
        .arg(stream)
        .arg("-")
        .arg("+")
        .query(con)
        .unwrap();
    raw
}

fn fields(entries: &[Entry]) -> Vec<Vec<String>> {
    entries.iter().map(|(_, fields)| fields.clone()).collect()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn call(con: &mut Connection, args: &[&str]) -> Value {
    redis::cmd(args[0]).arg(&args[1..]).query(con).unwrap()
}

fn pair(value: Value) -> (i64, i64) {
    redis::from_redis_value(&value).unwrap()
}

#[test]
fn each_command_records_its_crossing_with_fields_in_order() {
    let server = Server::start();
    let mut con = server.con();
    let alert = ["ALERT", "alerts"];
    let incr = |con: &mut Connection, n: &str| {
        let args = [&["MON.INCRCHECK", "orders", n, "600", "2", "4"][..], &alert].concat();
        pair(call(con, &args))
    };
    // 1 then 1 crosses 2; 3 more jump over 4 (level 2); 1 more crosses none.
    assert_eq!(
        [
            incr(&mut con, "1"),
            incr(&mut con, "1"),
            incr(&mut con, "3"),
            incr(&mut con, "1")
        ],
        [(1, 0), (2, 1), (5, 2), (6, 0)]
    );
    let slide = [&["MON.SLIDECHECK", "orders-1m", "3", "60", "3"][..], &alert].concat();
    assert_eq!(pair(call(&mut con, &slide)), (3, 1));
    assert_eq!(pair(call(&mut con, &slide)), (6, 0));
    for card in ["visa-1", "visa-2"] {
        let distinct = [&["MON.DISTINCT", "cards", card, "86400", "2"][..], &alert].concat();
        call(&mut con, &distinct);
    }
    set_ex(&mut con, "refunds", 50, 600);
    let refund = |con: &mut Connection, n: &str| {
        let args = [&["MON.DECRCLAMP", "refunds", n][..], &alert[..]].concat();
        redis::from_redis_value::<i64>(&call(con, &args)).unwrap()
    };
    // A refund that fits writes no entry; the one that clamps does.
    assert_eq!((refund(&mut con, "30"), refund(&mut con, "70")), (20, 0));

    let written = entries(&mut con, "alerts");
    let expected = [
        &[
            "key",
            "orders",
            "level",
            "1",
            "threshold",
            "2",
            "current",
            "2",
        ][..],
        &[
            "key",
            "orders",
            "level",
            "2",
            "threshold",
            "4",
            "current",
            "5",
        ],
        &[
            "key",
            "orders-1m",
            "level",
            "1",
            "threshold",
            "3",
            "current",
            "3",
        ],
        &[
            "key",
            "cards",
            "level",
            "1",
            "threshold",
            "2",
            "current",
            "2",
            "member",
            "visa-2",
        ],
        &["key", "refunds", "clamped", "50", "current", "0"],
    ];
    assert_eq!(
        fields(&written),
        expected.map(strings).to_vec(),
        "{written:?}"
    );
    assert_eq!(info_field(&mut con, "guard_mon_alerts_written"), 5);
    // The server's IDs, increasing.
    let ids: Vec<&String> = written.iter().map(|(id, _)| id).collect();
    assert!(ids.windows(2).all(|w| w[0] != w[1]), "{ids:?}");
    // The counters are exactly as without ALERT.
    let orders: i64 = redis::cmd("GET").arg("orders").query(&mut con).unwrap();
    assert_eq!(orders, 6);
}

#[test]
fn nothing_crossed_nothing_written_and_no_watch_disturbed() {
    let server = Server::start();
    let mut con = server.con();
    let quiet: [&[&str]; 5] = [
        &[
            "MON.INCRCHECK",
            "orders",
            "1",
            "600",
            "5",
            "ALERT",
            "alerts",
        ],
        &[
            "MON.SLIDECHECK",
            "w",
            "1",
            "60",
            "5",
            "ALERT",
            "alerts",
            "MAXLEN",
            "10",
        ],
        &["MON.DISTINCT", "cards", "c1", "600", "5", "ALERT", "alerts"],
        // A refund on a missing key writes nothing at all.
        &["MON.DECRCLAMP", "refunds", "5", "ALERT", "alerts"],
        &["MON.DECRCLAMP", "orders", "1", "ALERT", "alerts"],
    ];
    for args in quiet {
        call(&mut con, args);
    }
    let exists: i64 = redis::cmd("EXISTS").arg("alerts").query(&mut con).unwrap();
    assert_eq!(exists, 0);
    assert_eq!(info_field(&mut con, "guard_mon_alerts_written"), 0);
    // An existing stream is not touched by a call that crosses nothing...
    let _: String = redis::cmd("XADD")
        .arg("alerts")
        .arg("*")
        .arg("seed")
        .arg("1")
        .query(&mut con)
        .unwrap();
    assert!(watch_survives(&server, "alerts", |con| {
        call(
            con,
            &[
                "MON.INCRCHECK",
                "orders",
                "1",
                "600",
                "5",
                "ALERT",
                "alerts",
            ],
        );
    }));
    // ...and is signalled by one that does.
    assert!(!watch_survives(&server, "alerts", |con| {
        call(
            con,
            &[
                "MON.INCRCHECK",
                "orders",
                "5",
                "600",
                "5",
                "ALERT",
                "alerts",
            ],
        );
    }));
}

/// The call is refused with `expected` and neither its counter nor the
/// stream `alerts` changes.
fn assert_refused_changing_nothing(con: &mut Connection, args: &[&str], expected: &str) {
    let bytes: Vec<&[u8]> = args.iter().map(|arg| arg.as_bytes()).collect();
    assert_error_changes_none_of(con, &[args[1], "alerts"], &bytes, expected);
}

/// A counter 4 below a threshold of 5, a stream with one entry: any call
/// below that got through would cross and write.
fn primed(server: &Server) -> Connection {
    let mut con = server.con();
    set_ex(&mut con, "orders", 4, 600);
    let _: String = redis::cmd("XADD")
        .arg("alerts")
        .arg("*")
        .arg("seed")
        .arg("1")
        .query(&mut con)
        .unwrap();
    con
}

#[test]
fn every_option_error_names_the_option_and_writes_nothing() {
    let server = Server::with_args(&["--appendonly", "yes"]);
    let mut con = primed(&server);
    let incr = ["MON.INCRCHECK", "orders", "1", "600", "5"];
    let with = |tail: &[&'static str]| [&incr[..], tail].concat();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (with(&["ALERT"]), "option ALERT needs a value"),
        (with(&["ALERT", "alerts", "alert", "x"]), "more than once"),
        (
            with(&["ALERT", "alerts", "MAXLEN"]),
            "option MAXLEN needs a value",
        ),
        (
            with(&["ALERT", "alerts", "MAXLEN", "0"]),
            "maxlen must be a positive",
        ),
        (
            with(&["ALERT", "alerts", "MAXLEN", "-3"]),
            "maxlen must be a positive",
        ),
        (
            with(&["ALERT", "alerts", "MAXLEN", "~"]),
            "maxlen is not an integer",
        ),
        (with(&["MAXLEN", "10"]), "MAXLEN is only valid with ALERT"),
        (
            with(&["ALERT", "alerts", "BUCKETS", "6"]),
            "unknown option 'BUCKETS'",
        ),
        (
            with(&["ALERT", "alerts", "NOMKSTREAM"]),
            "unknown option 'NOMKSTREAM'",
        ),
        (with(&["x", "ALERT", "alerts"]), "threshold #2"),
        (
            with(&["4", "ALERT", "alerts"]),
            "threshold #2 must be greater",
        ),
        (
            with(&["ALERT", "orders"]),
            "alert stream must not be the counter's key",
        ),
        // The first bad argument in argument order wins.
        (
            vec![
                "MON.INCRCHECK",
                "orders",
                "0",
                "600",
                "5",
                "ALERT",
                "orders",
            ],
            "increment",
        ),
        (
            vec![
                "MON.SLIDECHECK",
                "orders",
                "1",
                "60",
                "5",
                "ALERT",
                "alerts",
                "ALERT",
                "b",
            ],
            "more than once",
        ),
        (
            vec![
                "MON.SLIDECHECK",
                "orders",
                "1",
                "60",
                "5",
                "BUCKETS",
                "7",
                "ALERT",
                "alerts",
            ],
            "buckets",
        ),
        (
            vec!["MON.DISTINCT", "orders", "c", "60", "5", "MAXLEN", "1"],
            "only valid with ALERT",
        ),
        (
            vec!["MON.DISTINCT", "orders", "", "60", "5", "ALERT", "alerts"],
            "member",
        ),
        (
            vec!["MON.DECRCLAMP", "orders", "9", "ALERT"],
            "option ALERT needs a value",
        ),
        (
            vec![
                "MON.DECRCLAMP",
                "orders",
                "9",
                "ALERT",
                "alerts",
                "LIMIT",
                "1",
            ],
            "unknown option 'LIMIT'",
        ),
        (
            vec!["MON.DECRCLAMP", "orders", "9", "ALERT", "orders"],
            "must not be the counter's key",
        ),
        // A token after amount that is no option name: Redis's arity error.
        (
            vec!["MON.DECRCLAMP", "orders", "9", "alerts"],
            "wrong number of arguments for 'mon.decrclamp'",
        ),
        (
            vec!["MON.DECRCLAMP", "orders", "0", "ALERT", "alerts"],
            "amount",
        ),
        // Whatever the amount: the arity error comes first, as Redis's
        // own check would give it.
        (
            vec!["MON.DECRCLAMP", "orders", "-1", "alerts"],
            "wrong number of arguments for 'mon.decrclamp'",
        ),
        (
            vec!["MON.DECRCLAMP", "orders", "x", "7"],
            "wrong number of arguments for 'mon.decrclamp'",
        ),
        // And after it, MAXLEN's error is first.
        (
            with(&["MAXLEN", "0", "ALERT", "orders"]),
            "maxlen must be a positive",
        ),
    ];
    for (args, expected) in &cases {
        assert_refused_changing_nothing(&mut con, args, expected);
    }
    // A stream that is the counter, before a bad MAXLEN: the stream is
    // the first bad argument, for each of the four commands.
    for head in [
        &incr[..],
        &["MON.SLIDECHECK", "orders", "1", "60", "5"],
        &["MON.DISTINCT", "orders", "c", "60", "5"],
        &["MON.DECRCLAMP", "orders", "9"],
    ] {
        let args = [head, &["ALERT", "orders", "MAXLEN", "0"]].concat();
        assert_refused_changing_nothing(
            &mut con,
            &args,
            "alert stream must not be the counter's key",
        );
    }
    assert_only_these_counters(
        &mut con,
        &[
            ("mon_incrcheck_calls", 15),
            ("mon_slidecheck_calls", 3),
            ("mon_distinct_calls", 3),
            ("mon_decrclamp_calls", 8),
        ],
    );
}

#[test]
fn a_stream_key_of_another_type_refuses_the_whole_call() {
    let server = Server::with_args(&["--appendonly", "yes"]);
    let mut con = primed(&server);
    let _: () = redis::cmd("DEL").arg("alerts").query(&mut con).unwrap();
    for (kind, make) in [
        ("string", &["SET", "alerts", "x"][..]),
        ("list", &["RPUSH", "alerts", "x"]),
        ("zset", &["ZADD", "alerts", "1", "x"]),
    ] {
        let _: () = redis::cmd("DEL").arg("alerts").query(&mut con).unwrap();
        call(&mut con, make);
        let calls: [&[&str]; 5] = [
            // Would cross: nothing written, the counter included.
            &[
                "MON.INCRCHECK",
                "orders",
                "1",
                "600",
                "5",
                "ALERT",
                "alerts",
            ],
            &["MON.SLIDECHECK", "w", "5", "60", "5", "ALERT", "alerts"],
            &["MON.DISTINCT", "cards", "c", "60", "1", "ALERT", "alerts"],
            &["MON.DECRCLAMP", "orders", "100", "ALERT", "alerts"],
            // Would write nothing at all: WRONGTYPE all the same.
            &["MON.DECRCLAMP", "missing", "1", "ALERT", "alerts"],
        ];
        for args in calls {
            assert_refused_changing_nothing(&mut con, args, "WRONGTYPE");
            let exists: i64 = redis::cmd("EXISTS").arg(args[1]).query(&mut con).unwrap();
            assert_eq!(exists, i64::from(args[1] == "orders"), "{kind}: {args:?}");
        }
    }
    // A counter of another type beside a good stream: the stream untouched.
    let _: () = redis::cmd("DEL").arg("alerts").query(&mut con).unwrap();
    let _: () = redis::cmd("RPUSH")
        .arg("list")
        .arg("x")
        .query(&mut con)
        .unwrap();
    for command in ["MON.INCRCHECK", "MON.SLIDECHECK"] {
        let args = [command, "list", "1", "60", "1", "ALERT", "alerts"];
        assert_refused_changing_nothing(&mut con, &args, "WRONGTYPE");
    }
    let exists: i64 = redis::cmd("EXISTS").arg("alerts").query(&mut con).unwrap();
    assert_eq!(exists, 0);
    assert_eq!(info_field(&mut con, "guard_mon_alerts_written"), 0);
}

/// An attacker's stream: its last ID is the largest there is, so XADD `*`
/// must fail. The crossing is refused with the server's error, and the
/// counter stays where it was (with ALERT, no crossing without its entry).
#[test]
fn a_stream_that_cannot_take_an_entry_leaves_the_counter_as_it_was() {
    let server = Server::with_args(&["--appendonly", "yes"]);
    let mut con = primed(&server);
    let _: () = redis::cmd("XSETID")
        .arg("alerts")
        .arg("18446744073709551615-18446744073709551615")
        .query(&mut con)
        .unwrap();
    let _: i64 = redis::cmd("ZADD")
        .arg("cards")
        .arg(now_ms())
        .arg("c1")
        .query(&mut con)
        .unwrap();
    let _: i64 = redis::cmd("EXPIRE")
        .arg("cards")
        .arg(600)
        .query(&mut con)
        .unwrap();
    call(&mut con, &["MON.SLIDECHECK", "w", "4", "60", "5"]);
    let calls: [&[&str]; 4] = [
        &[
            "MON.INCRCHECK",
            "orders",
            "1",
            "600",
            "5",
            "ALERT",
            "alerts",
        ],
        &["MON.SLIDECHECK", "w", "1", "60", "5", "ALERT", "alerts"],
        &["MON.DISTINCT", "cards", "c2", "600", "2", "ALERT", "alerts"],
        &["MON.DECRCLAMP", "orders", "10", "ALERT", "alerts"],
    ];
    for args in calls {
        assert_refused_changing_nothing(&mut con, args, "exhausted the last possible ID");
    }
    // The same calls without ALERT go through (they were valid).
    assert_eq!(incrcheck(&mut con, "orders", 1, 600, &[5]), (5, 1));
}

#[test]
fn fifty_connections_one_crossing_one_entry() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 50);
    let thresholds = ["100", "500", "1000"];
    for command in ["MON.INCRCHECK", "MON.SLIDECHECK"] {
        let key = format!("{command}:orders");
        let stream = format!("{command}:alerts");
        let levels: Vec<Vec<i64>> = crowd.run(|_, con| {
            (0..20)
                .map(|_| {
                    let reply: (i64, i64) = redis::cmd(command)
                        .arg(&key)
                        .arg(1)
                        .arg(600)
                        .arg(&thresholds[..])
                        .arg("ALERT")
                        .arg(&stream)
                        .query(con)
                        .unwrap();
                    reply.1
                })
                .collect()
        });
        let mut crossed: Vec<i64> = levels.concat().into_iter().filter(|&l| l > 0).collect();
        crossed.sort();
        assert_eq!(crossed, [1, 2, 3], "{command}");
        let mut con = server.con();
        let written = fields(&entries(&mut con, &stream));
        let expected: Vec<Vec<String>> = thresholds
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let level = (i + 1).to_string();
                strings(&["key", &key, "level", &level, "threshold", t, "current", t])
            })
            .collect();
        assert_eq!(written, expected, "{command}");
    }
    let mut con = server.con();
    let cards: Vec<i64> = crowd.run(|i, con| {
        let reply: (i64, i64) = redis::cmd("MON.DISTINCT")
            .arg("cards")
            .arg(format!("card-{}", i % 10))
            .arg(600)
            .arg(5)
            .arg("ALERT")
            .arg("card-alerts")
            .query(con)
            .unwrap();
        reply.1
    });
    assert_eq!(cards.iter().sum::<i64>(), 1);
    assert_eq!(entries(&mut con, "card-alerts").len(), 1);
    assert_eq!(info_field(&mut con, "guard_mon_alerts_written"), 7);
}

/// The primary decides; a replica 1 s behind ends with the same entries
/// under the same IDs, approximate trimming included; the AOF reloads them.
#[test]
fn replicas_and_the_aof_hold_the_same_entries_with_the_same_ids() {
    let mut primary = Server::with_args(&["--appendonly", "yes"]);
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();
    let held = replica.hold_back(1.0);
    // 250 clamps into one stream trimmed to about 20: Redis trims whole
    // nodes, so the primary keeps more than 20; the replica must keep the
    // very same.
    for i in 0..250 {
        let key = format!("refund:{}", i % 5);
        set_ex(&mut con, &key, 1, 600);
        let args = [
            "MON.DECRCLAMP",
            &key,
            "3",
            "ALERT",
            "alerts",
            "MAXLEN",
            "20",
        ];
        assert_eq!(call(&mut con, &args), Value::Int(0));
    }
    for i in 0..30 {
        let key = format!("orders:{}", i % 3);
        call(
            &mut con,
            &[
                "MON.INCRCHECK",
                &key,
                "1",
                "600",
                "3",
                "7",
                "ALERT",
                "alerts",
            ],
        );
        call(
            &mut con,
            &[
                "MON.DISTINCT",
                "cards",
                &format!("c{i}"),
                "600",
                "10",
                "20",
                "ALERT",
                "alerts",
            ],
        );
    }
    held.join().unwrap();
    let on_primary = entries(&mut con, "alerts");
    let length = on_primary.len();
    assert!(
        (20..250 + 8).contains(&length),
        "trimmed about 20, not exactly: {length}"
    );
    let _: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut con).unwrap();
    assert_eq!(entries(&mut replica.con(), "alerts"), on_primary);
    for key in ["orders:0", "orders:1", "orders:2", "cards", "refund:0"] {
        assert_eq!(
            key_state(&mut replica.con(), key),
            key_state(&mut con, key),
            "{key}"
        );
    }
    // The AOF carries explicit IDs and exact trims, never `*` or `~`.
    let aof = primary.aof_text();
    assert!(aof.contains("XADD"), "no XADD in the AOF");
    assert!(
        !aof.contains("\r\n*\r\n") && !aof.contains("\r\n~\r\n"),
        "{aof}"
    );
    primary.restart();
    assert_eq!(entries(&mut primary.con(), "alerts"), on_primary);
}

#[test]
fn each_entry_fires_xadd_beside_the_counters_events() {
    let server = Server::start();
    let events = events_of(&server, |con| {
        call(
            con,
            &[
                "MON.INCRCHECK",
                "orders",
                "1",
                "600",
                "1",
                "ALERT",
                "alerts",
            ],
        );
        call(
            con,
            &[
                "MON.INCRCHECK",
                "orders",
                "1",
                "600",
                "1",
                "ALERT",
                "alerts",
            ],
        );
    });
    assert_eq!(
        events,
        pairs(&[
            ("xadd", "alerts"),
            ("incrby", "orders"),
            ("expire", "orders"),
            ("mon.crossed", "orders"),
            ("incrby", "orders"),
        ])
    );
}

/// ACL key patterns apply to the stream: a user who may write the counter
/// but not the stream is refused by the server, and nothing is written.
#[test]
fn acl_key_patterns_cover_the_stream() {
    let server = Server::start();
    let mut admin = server.con();
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("shop")
        .arg(
            &[
                "on",
                "nopass",
                "+@all",
                "~{cust:42}:orders",
                "~{cust:42}:amount",
            ][..],
        )
        .query(&mut admin)
        .unwrap();
    let mut shop = server.con();
    let _: () = redis::cmd("AUTH")
        .arg("shop")
        .arg("x")
        .query(&mut shop)
        .unwrap();
    let calls: [&[&str]; 2] = [
        &[
            "MON.INCRCHECK",
            "{cust:42}:orders",
            "1",
            "600",
            "1",
            "ALERT",
            "{cust:42}:alerts",
        ],
        &[
            "MON.DECRCLAMP",
            "{cust:42}:amount",
            "1",
            "ALERT",
            "{cust:42}:alerts",
        ],
    ];
    for args in calls {
        let error = redis::cmd(args[0])
            .arg(&args[1..])
            .query::<Value>(&mut shop)
            .unwrap_err();
        assert_eq!(error.code(), Some("NOPERM"), "{args:?}: {error}");
    }
    assert_eq!(
        keys_state(&mut admin, &["{cust:42}:orders", "{cust:42}:amount"]),
        [
            ("none".to_string(), vec![], -2),
            ("none".to_string(), vec![], -2)
        ]
    );
    assert_eq!(info_field(&mut admin, "guard_mon_incrcheck_calls"), 0);
    // Without ALERT the same user may count.
    assert_eq!(
        incrcheck(&mut shop, "{cust:42}:orders", 1, 600, &[1]),
        (1, 1)
    );
}

/// The worker's side: a consumer group hands each alert to one consumer;
/// a worker that dies before XACK leaves it pending, and XAUTOCLAIM hands
/// it to the next; the entry ID tells a resend from a new alert.
#[test]
fn a_consumer_group_delivers_each_alert_once_and_again_after_a_crash() {
    let server = Server::start();
    let mut con = server.con();
    let _: () = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg("alerts")
        .arg("senders")
        .arg("$")
        .arg("MKSTREAM")
        .query(&mut con)
        .unwrap();
    for customer in 0..10 {
        for _ in 0..3 {
            let key = format!("orders:{customer}");
            call(
                &mut con,
                &["MON.INCRCHECK", &key, "1", "600", "3", "ALERT", "alerts"],
            );
        }
    }
    let read = |con: &mut Connection, consumer: &str, count: usize| -> Vec<Entry> {
        let reply: Value = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg("senders")
            .arg(consumer)
            .arg("COUNT")
            .arg(count)
            .arg("STREAMS")
            .arg("alerts")
            .arg(">")
            .query(con)
            .unwrap();
        stream_entries(&reply)
    };
    // Two workers share the alerts: disjoint halves, every one delivered.
    let (mut a, mut b) = (server.con(), server.con());
    let first = read(&mut a, "worker-a", 4);
    let second = read(&mut b, "worker-b", 100);
    let ids = |list: &[Entry]| {
        list.iter()
            .map(|(id, _)| id.clone())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(first.len() + second.len(), 10);
    assert!(ids(&first).is_disjoint(&ids(&second)));
    // worker-b acks everything; worker-a dies (its connection closed)
    // before acking, so its 4 stay pending.
    let sent = |con: &mut Connection, list: &[Entry]| -> i64 {
        list.iter()
            .map(|(id, _)| {
                // The entry ID is the idempotency key of the send.
                let new: i64 = redis::cmd("SADD").arg("sent").arg(id).query(con).unwrap();
                let _: i64 = redis::cmd("XACK")
                    .arg("alerts")
                    .arg("senders")
                    .arg(id)
                    .query(con)
                    .unwrap();
                new
            })
            .sum()
    };
    assert_eq!(sent(&mut b, &second), 6);
    let sent_before_dying: i64 = redis::cmd("SADD")
        .arg("sent")
        .arg(&first[0].0)
        .query(&mut a)
        .unwrap();
    assert_eq!(sent_before_dying, 1);
    drop(a);
    let pending: Value = redis::cmd("XPENDING")
        .arg("alerts")
        .arg("senders")
        .query(&mut con)
        .unwrap();
    assert_eq!(
        redis::from_redis_value::<Vec<Value>>(&pending).unwrap()[0],
        Value::Int(4)
    );
    // A new worker claims what the dead one held; nothing new is read.
    let mut c = server.con();
    let claimed: Value = redis::cmd("XAUTOCLAIM")
        .arg("alerts")
        .arg("senders")
        .arg("worker-c")
        .arg(0)
        .arg("0-0")
        .query(&mut c)
        .unwrap();
    let Value::Array(parts) = &claimed else {
        panic!("{claimed:?}")
    };
    let reclaimed = entries_of(&parts[1]);
    assert_eq!(ids(&reclaimed), ids(&first));
    assert!(read(&mut c, "worker-c", 100).is_empty());
    // The one worker-a had sent is recognised by its ID: sent once.
    assert_eq!(sent(&mut c, &reclaimed), 3);
    let total: i64 = redis::cmd("SCARD").arg("sent").query(&mut con).unwrap();
    assert_eq!(total, 10);
    let pending: Value = redis::cmd("XPENDING")
        .arg("alerts")
        .arg("senders")
        .query(&mut con)
        .unwrap();
    assert_eq!(
        redis::from_redis_value::<Vec<Value>>(&pending).unwrap()[0],
        Value::Int(0)
    );
}

/// XREADGROUP's reply for one stream: its entries.
fn stream_entries(reply: &Value) -> Vec<Entry> {
    match reply {
        Value::Nil => Vec::new(),
        Value::Array(streams) => match &streams[0] {
            Value::Array(stream) => entries_of(&stream[1]),
            other => panic!("{other:?}"),
        },
        Value::Map(streams) => entries_of(&streams[0].1),
        other => panic!("{other:?}"),
    }
}

fn entries_of(list: &Value) -> Vec<Entry> {
    redis::from_redis_value(list).unwrap()
}
