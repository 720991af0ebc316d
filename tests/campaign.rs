//! Campaigns against a real server: every reply and error, holds that stop
//! counting at their expiry, request ids, calls that change nothing, the
//! reclaim, keyspace events and INFO.

mod common;

use std::thread;
use std::time::Duration;

use common::campaign::*;
use common::*;
use redis::{Connection, Value};

fn error(con: &mut Connection, args: &[&str]) -> String {
    let error = redis::cmd(args[0])
        .arg(&args[1..])
        .query::<Value>(con)
        .unwrap_err();
    format!(
        "{} {}",
        error.code().unwrap_or(""),
        error.detail().unwrap_or("")
    )
}

#[test]
fn reserve_confirm_release_in_order() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 2, 1, 600);
    let before = now_ms();
    let (claim, expires_at) = reserve(&mut con, "sale", "alice", &[]);
    assert_eq!(claim, 1);
    assert!(
        (before + 600_000..=now_ms() + 600_000).contains(&expires_at),
        "{expires_at}"
    );
    let (claim, expires_at) = reserve(&mut con, "sale", "bob", &["HOLD", "30"]);
    assert_eq!(claim, 2);
    assert!(expires_at <= now_ms() + 30_000);
    assert_eq!(reserve(&mut con, "sale", "alice", &[]), (-1, 0));
    assert_eq!(reserve(&mut con, "sale", "carol", &[]), (-2, 0));
    assert_eq!(confirm(&mut con, "sale", 1), 1);
    assert_eq!(confirm(&mut con, "sale", 1), 0);
    assert_eq!(confirm(&mut con, "sale", 3), -3);
    assert_eq!(release(&mut con, "sale", 2), 1);
    assert_eq!(release(&mut con, "sale", 2), 0);
    assert_eq!(confirm(&mut con, "sale", 2), -3);
    // Numbers are never reused.
    assert_eq!(reserve(&mut con, "sale", "carol", &[]).0, 3);
    let info = info(&mut con, "sale");
    let expected = [
        ("limit", 2),
        ("peruser", 1),
        ("hold", 600),
        ("confirmed", 1),
        ("held", 1),
        ("available", 0),
        ("claims", 3),
        ("expired", 0),
        ("released", 1),
        ("held_units", 1),
        ("confirmed_units", 1),
    ];
    assert_eq!(
        info,
        expected.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    );
}

#[test]
fn the_user_is_checked_before_the_limit_and_peruser_allows_several() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 3, 2, 600);
    assert_eq!(reserve(&mut con, "sale", "a", &[]).0, 1);
    assert_eq!(reserve(&mut con, "sale", "a", &[]).0, 2);
    assert_eq!(reserve(&mut con, "sale", "a", &[]), (-1, 0));
    assert_eq!(reserve(&mut con, "sale", "b", &[]).0, 3);
    assert_eq!(reserve(&mut con, "sale", "a", &[]), (-1, 0));
    assert_eq!(reserve(&mut con, "sale", "c", &[]), (-2, 0));
}

#[test]
fn a_hold_stops_counting_once_its_millisecond_has_passed() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 1, 1, 600);
    let (claim, expires_at) = reserve(&mut con, "sale", "alice", &["HOLD", "1"]);
    assert_eq!(reserve(&mut con, "sale", "bob", &[]), (-2, 0));
    thread::sleep(Duration::from_millis(
        (expires_at - now_ms() + 30).max(0) as u64
    ));
    // Gone for every command, before anything reclaimed it.
    assert_eq!(confirm(&mut con, "sale", claim), -3);
    assert_eq!(release(&mut con, "sale", claim), 0);
    assert_eq!(claims(&mut con, "sale", &[]), []);
    let info = info(&mut con, "sale");
    assert_eq!(
        (info["held"], info["expired"], info["available"]),
        (0, 1, 1)
    );
    // Its place goes to the next buyer, and alice may reserve again.
    assert_eq!(reserve(&mut con, "sale", "bob", &[]).0, 2);
    assert_eq!(release(&mut con, "sale", 2), 1);
    assert_eq!(reserve(&mut con, "sale", "alice", &[]).0, 3);
}

#[test]
fn a_request_id_makes_retries_safe() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 1, 1, 600);
    let first = reserve(&mut con, "sale", "alice", &["ID", "order-7"]);
    assert_eq!(first.0, 1);
    // The retry repeats the claim, even though the campaign is full now.
    assert_eq!(
        reserve(&mut con, "sale", "alice", &["ID", "order-7"]),
        first
    );
    assert_eq!(confirm(&mut con, "sale", 1), 1);
    assert_eq!(
        reserve(&mut con, "sale", "alice", &["id", "order-7"]),
        (1, -1)
    );
    // Another user cannot take it while it is live.
    assert_eq!(
        error(
            &mut con,
            &["COUPON.RESERVE", "sale", "bob", "ID", "order-7"]
        ),
        "ERR id is held by a live claim of another user"
    );
    // Released: free again.
    assert_eq!(release(&mut con, "sale", 1), 1);
    assert_eq!(
        reserve(&mut con, "sale", "bob", &["ID", "order-7", "HOLD", "1"]).0,
        2
    );
    // Expired: free again too.
    thread::sleep(Duration::from_millis(1_100));
    assert_eq!(reserve(&mut con, "sale", "carol", &["ID", "order-7"]).0, 3);
    assert_eq!(
        claims(&mut con, "sale", &[])[0].request_id.as_deref(),
        Some("order-7")
    );
}

#[test]
fn claims_lists_live_claims_in_order() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 10, 3, 600);
    let (_, held_until) = reserve(&mut con, "sale", "alice", &["ID", "r1"]);
    reserve(&mut con, "sale", "bob", &[]);
    reserve(&mut con, "sale", "carol", &[]);
    confirm(&mut con, "sale", 2);
    release(&mut con, "sale", 3);
    reserve(&mut con, "sale", "dave", &[]);
    let rows = claims(&mut con, "sale", &[]);
    let numbers: Vec<i64> = rows.iter().map(|r| r.claim).collect();
    assert_eq!(numbers, [1, 2, 4]);
    assert_eq!(
        rows[0],
        ClaimRow {
            claim: 1,
            user: "alice".into(),
            state: "held".into(),
            expires_at_ms: held_until,
            request_id: Some("r1".into()),
            units: 1,
        }
    );
    assert_eq!(
        (
            rows[1].state.as_str(),
            rows[1].expires_at_ms,
            rows[1].request_id.clone()
        ),
        ("confirmed", -1, None)
    );
    let numbers = |options: &[&str]| -> Vec<i64> {
        claims(&mut server.con(), "sale", options)
            .iter()
            .map(|r| r.claim)
            .collect()
    };
    assert_eq!(numbers(&["FROM", "2"]), [2, 4]);
    assert_eq!(numbers(&["FROM", "3", "COUNT", "5"]), [4]);
    assert_eq!(numbers(&["count", "2"]), [1, 2]);
    assert_eq!(numbers(&["FROM", "5"]), Vec::<i64>::new());
}

#[test]
fn issue_and_revoke_on_a_campaign() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 2, 1, 600);
    assert_eq!(
        error(&mut con, &["COUPON.ISSUE", "sale", "alice", "3"]),
        "ERR limit does not match the campaign's limit"
    );
    assert_eq!(issue(&mut con, "sale", "alice", 2), 1);
    assert_eq!(issue(&mut con, "sale", "alice", 2), -1);
    assert_eq!(reserve(&mut con, "sale", "bob", &[]).0, 2);
    assert_eq!(issue(&mut con, "sale", "carol", 2), -2);
    assert_eq!(claims(&mut con, "sale", &[])[0].state, "confirmed");
    assert_eq!(revoke(&mut con, "sale", "alice"), 1);
    assert_eq!(revoke(&mut con, "sale", "alice"), 0);
    assert_eq!(issue(&mut con, "sale", "carol", 2), 3);
    let counters = guard_counters(&mut con);
    let moved: Vec<(&str, i64)> = [
        "coupon_issue_calls",
        "coupon_issued",
        "coupon_duplicates",
        "coupon_soldout",
        "coupon_revoked",
        "coupon_reserved",
    ]
    .iter()
    .map(|name| (*name, counters[*name]))
    .collect();
    assert_eq!(
        moved,
        [
            ("coupon_issue_calls", 5),
            ("coupon_issued", 2),
            ("coupon_duplicates", 1),
            ("coupon_soldout", 1),
            ("coupon_revoked", 1),
            ("coupon_reserved", 1),
        ]
    );
    // Several claims of one user go back together.
    create(&mut con, "multi", 10, 3, 600);
    for _ in 0..3 {
        reserve(&mut con, "multi", "u", &[]);
    }
    confirm(&mut con, "multi", 2);
    assert_eq!(revoke(&mut con, "multi", "u"), 3);
    assert_eq!(info(&mut con, "multi")["released"], 3);
}

#[test]
fn info_is_a_map_in_resp3() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 5, 1, 60);
    let client = redis::Client::open(format!("{}?protocol=resp3", server.url())).unwrap();
    let mut resp3 = client.get_connection().unwrap();
    let reply: Value = redis::cmd("COUPON.INFO")
        .arg("sale")
        .query(&mut resp3)
        .unwrap();
    let Value::Map(pairs) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(pairs.len(), 11);
    assert_eq!(
        pairs[0],
        (Value::BulkString(b"limit".to_vec()), Value::Int(5))
    );
}

#[test]
fn errors_name_the_argument_and_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 2, 1, 600);
    reserve(&mut con, "sale", "alice", &["ID", "r1"]);
    let _: () = redis::cmd("SET")
        .arg("text")
        .arg("x")
        .query(&mut con)
        .unwrap();
    let cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (
            vec![b"COUPON.CREATE", b"sale", b"5"],
            "BUSYKEY Target key name already exists.",
        ),
        (vec![b"COUPON.CREATE", b"text", b"5"], "BUSYKEY"),
        (vec![b"COUPON.CREATE", b"new", b"0"], "limit"),
        (
            vec![b"COUPON.CREATE", b"new", b"5", b"PERUSER", b"0"],
            "peruser",
        ),
        (vec![b"COUPON.CREATE", b"new", b"5", b"HOLD", b"-1"], "hold"),
        (
            vec![
                b"COUPON.CREATE",
                b"new",
                b"5",
                b"HOLD",
                b"9223372036854775807",
            ],
            "hold is too large",
        ),
        (
            vec![b"COUPON.CREATE", b"new", b"5", b"HOLD"],
            "HOLD needs a value",
        ),
        (
            vec![b"COUPON.CREATE", b"new", b"5", b"hold", b"1", b"HOLD", b"2"],
            "HOLD is given more than once",
        ),
        (
            vec![b"COUPON.CREATE", b"new", b"5", b"BOGUS", b"1"],
            "unknown option 'BOGUS'",
        ),
        (vec![b"COUPON.RESERVE", b"sale", b""], "user"),
        (
            vec![b"COUPON.RESERVE", b"sale", b"bob", b"HOLD", b"0"],
            "hold",
        ),
        (vec![b"COUPON.RESERVE", b"sale", b"bob", b"ID", b""], "id"),
        (
            vec![b"COUPON.RESERVE", b"sale", b"bob", b"ID", b"r1"],
            "ERR id is held by a live claim",
        ),
        (
            vec![b"COUPON.RESERVE", b"sale", b"bob", b"ID"],
            "ID needs a value",
        ),
        (
            vec![b"COUPON.RESERVE", b"missing", b"bob"],
            "ERR no such campaign",
        ),
        (vec![b"COUPON.RESERVE", b"text", b"bob"], "WRONGTYPE"),
        (vec![b"COUPON.RESERVE", b"text", b""], "user"),
        (vec![b"COUPON.CONFIRM", b"sale", b"0"], "claim"),
        (vec![b"COUPON.CONFIRM", b"sale", b"x"], "claim"),
        (
            vec![b"COUPON.CONFIRM", b"missing", b"1"],
            "ERR no such campaign",
        ),
        (vec![b"COUPON.RELEASE", b"sale", b"-1"], "claim"),
        (vec![b"COUPON.RELEASE", b"text", b"1"], "WRONGTYPE"),
        (vec![b"COUPON.INFO", b"missing"], "ERR no such campaign"),
        (vec![b"COUPON.INFO", b"text"], "WRONGTYPE"),
        (vec![b"COUPON.CLAIMS", b"sale", b"FROM", b"0"], "from"),
        (vec![b"COUPON.CLAIMS", b"sale", b"COUNT", b"0"], "count"),
        (
            vec![b"COUPON.CLAIMS", b"sale", b"COUNT"],
            "COUNT needs a value",
        ),
        (vec![b"COUPON.CLAIMS", b"missing"], "ERR no such campaign"),
        (vec![b"COUPON.ISSUE", b"sale", b"bob", b"3"], "limit"),
        (
            vec![b"COUPON.APPLY", b"sale", b"CONFIRM", b"1"],
            "only replays",
        ),
    ];
    assert_errors_change_nothing(&mut con, &cases);
    for key in ["missing", "new"] {
        let exists: i64 = redis::cmd("EXISTS").arg(key).query(&mut con).unwrap();
        assert_eq!(exists, 0, "{key}");
    }
}

/// COUPON.ALTER below what is confirmed, in both LIMIT and PERUSER: the
/// error names the first of the two in argument order.
#[test]
fn alter_below_the_confirmed_names_the_first_option_refused() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 5, 3, 60);
    for _ in 0..2 {
        let (claim, _) = reserve(&mut con, "sale", "ann", &[]);
        assert_eq!(confirm(&mut con, "sale", claim), 1);
    }
    let alter = |options: [&'static str; 4]| {
        let mut call: Vec<&[u8]> = vec![b"COUPON.ALTER", b"sale"];
        call.extend(options.iter().map(|o| o.as_bytes()));
        call
    };
    assert_errors_change_nothing(
        &mut con,
        &[
            (alter(["PERUSER", "1", "LIMIT", "1"]), "ERR peruser "),
            (alter(["LIMIT", "1", "PERUSER", "1"]), "ERR limit "),
            (alter(["peruser", "1", "limit", "4"]), "ERR peruser "),
            (alter(["limit", "1", "peruser", "2"]), "ERR limit "),
        ],
    );
}

#[test]
fn wrong_arity_gets_the_servers_own_error() {
    let server = Server::start();
    let mut con = server.con();
    assert_arity_errors(
        &mut con,
        &[
            vec!["COUPON.CREATE", "k"],
            vec!["COUPON.RESERVE", "k"],
            vec!["COUPON.CONFIRM", "k"],
            vec!["COUPON.RELEASE", "k"],
            vec!["COUPON.RECLAIM"],
            vec!["COUPON.ALTER", "k", "LIMIT"],
            vec!["COUPON.RESERVEALL", "1", "k"],
            vec!["COUPON.INFO"],
            vec!["COUPON.INFO", "k", "x"],
            vec!["COUPON.CLAIMS"],
        ],
    );
}

#[test]
fn calls_that_change_nothing_write_nothing_reclaim_nothing_and_keep_watch() {
    let server = Server::start();
    let _replica = Server::replica_of(&server);
    let mut con = server.con();
    // "sale": a live claim with a request id, and an expired hold that no
    // write has reclaimed yet. "full": sold out.
    create(&mut con, "sale", 3, 1, 600);
    let mine = reserve(&mut con, "sale", "a", &["ID", "r9"]);
    let (expired, until) = reserve(&mut con, "sale", "old", &["HOLD", "1"]);
    create(&mut con, "full", 1, 1, 600);
    reserve(&mut con, "full", "x", &[]);
    thread::sleep(Duration::from_millis((until - now_ms() + 30).max(0) as u64));

    let digests = |con: &mut Connection| (digest(con, "sale"), digest(con, "full"));
    let digests_before = digests(&mut con);
    let offset = info_field(&mut con, "master_repl_offset");
    let snapshot_before = snapshot(&mut con, "sale");
    let counters_before = guard_counters(&mut con);
    type Call = Box<dyn Fn(&mut Connection)>;
    let no_ops: Vec<(&str, &str, Call)> = vec![
        (
            "sale",
            "user full",
            Box::new(|c| assert_eq!(reserve(c, "sale", "a", &[]), (-1, 0))),
        ),
        (
            "sale",
            "repeat",
            Box::new(move |c| assert_eq!(reserve(c, "sale", "a", &["ID", "r9"]), mine)),
        ),
        (
            "sale",
            "confirm expired",
            Box::new(move |c| assert_eq!(confirm(c, "sale", expired), -3)),
        ),
        (
            "sale",
            "release expired",
            Box::new(move |c| assert_eq!(release(c, "sale", expired), 0)),
        ),
        (
            "sale",
            "revoke nobody",
            Box::new(|c| assert_eq!(revoke(c, "sale", "nobody"), 0)),
        ),
        (
            "sale",
            "info",
            Box::new(|c| assert_eq!(info(c, "sale")["expired"], 1)),
        ),
        (
            "sale",
            "claims",
            Box::new(|c| assert_eq!(claims(c, "sale", &[]).len(), 1)),
        ),
        (
            "full",
            "sold out",
            Box::new(|c| assert_eq!(reserve(c, "full", "y", &[]), (-2, 0))),
        ),
        (
            "full",
            "issue sold out",
            Box::new(|c| assert_eq!(issue(c, "full", "y", 1), -2)),
        ),
    ];
    for (key, what, call) in &no_ops {
        assert!(
            watch_survives(&server, key, |c| call(c)),
            "{what} disturbed WATCH"
        );
    }
    assert_eq!(
        digests(&mut con),
        digests_before,
        "a no-op reclaimed or changed something"
    );
    assert_eq!(info_field(&mut con, "master_repl_offset"), offset);
    let after = snapshot(&mut con, "sale");
    let unchanged = |s: Snapshot| (s.key_type, s.dump, s.pexpiretime, s.aof_size);
    assert_eq!(unchanged(after), unchanged(snapshot_before));
    // Only what the no-ops count moved: ISSUE's call and its -2.
    let mut expected = counters_before;
    for counter in ["coupon_issue_calls", "coupon_soldout"] {
        *expected.get_mut(counter).unwrap() += 1;
    }
    assert_eq!(guard_counters(&mut con), expected);
    // A real write does all three, and reclaims the expired hold.
    assert!(!watch_survives(&server, "sale", |c| assert_eq!(
        reserve(c, "sale", "b", &[]).0,
        3
    )));
    assert_ne!(digests(&mut con), digests_before);
    assert!(info_field(&mut con, "master_repl_offset") > offset);
    assert_eq!(info_field(&mut con, "guard_coupon_expired"), 1);
}

#[test]
fn writes_reclaim_a_bounded_number_of_expired_holds() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 1_000, 1, 600);
    let mut pipe = redis::pipe();
    for user in 0..100 {
        pipe.cmd("COUPON.RESERVE")
            .arg("sale")
            .arg(format!("u{user}"))
            .arg("HOLD")
            .arg(1)
            .ignore();
    }
    let _: () = pipe.query(&mut con).unwrap();
    thread::sleep(Duration::from_millis(1_100));
    assert_eq!(info(&mut con, "sale")["expired"], 100);
    let reclaimed = |con: &mut Connection| info_field(con, "guard_coupon_expired");
    assert_eq!(reclaimed(&mut con), 0);
    let events = events_of(&server, |c| {
        reserve(c, "sale", "new", &[]);
    });
    assert_eq!(reclaimed(&mut con), 16, "one write reclaims at most 16");
    assert_eq!(
        events.iter().filter(|(e, _)| e == "coupon.expired").count(),
        16
    );
    // The counts stay exact whatever was reclaimed.
    let info = info(&mut con, "sale");
    assert_eq!(
        (info["expired"], info["held"], info["claims"]),
        (100, 1, 101)
    );
}

#[test]
fn keyspace_events_name_each_change() {
    let server = Server::start();
    let events = events_of(&server, |c| {
        create(c, "sale", 2, 1, 600);
        reserve(c, "sale", "a", &[]);
        confirm(c, "sale", 1);
        reserve(c, "sale", "b", &[]);
        release(c, "sale", 2);
        issue(c, "sale", "c", 2);
        reserve(c, "sale", "d", &[]); // -2: nothing
    });
    assert_eq!(
        events,
        pairs(&[
            ("coupon.reserved", "sale"),
            ("coupon.confirmed", "sale"),
            ("coupon.reserved", "sale"),
            ("coupon.soldout", "sale"),
            ("coupon.released", "sale"),
            ("coupon.confirmed", "sale"),
            ("coupon.soldout", "sale"),
        ])
    );
}

#[test]
fn info_counts_reserved_confirmed_released() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 5, 2, 600);
    reserve(&mut con, "sale", "a", &[]);
    reserve(&mut con, "sale", "a", &[]);
    reserve(&mut con, "sale", "a", &[]);
    confirm(&mut con, "sale", 1);
    confirm(&mut con, "sale", 1);
    release(&mut con, "sale", 2);
    assert_only_these_counters(
        &mut con,
        &[
            ("coupon_reserved", 2),
            ("coupon_confirmed", 1),
            ("coupon_released", 1),
        ],
    );
}

#[test]
fn a_campaign_is_a_real_redis_value() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 5, 1, 600);
    reserve(&mut con, "sale", "a", &["ID", "x"]);
    let key_type: String = redis::cmd("TYPE").arg("sale").query(&mut con).unwrap();
    assert_eq!(key_type, "guard-cpn");
    let usage: i64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg("sale")
        .query(&mut con)
        .unwrap();
    assert!(usage > 100, "{usage}");
    let copied: i64 = redis::cmd("COPY")
        .arg("sale")
        .arg("copy")
        .query(&mut con)
        .unwrap();
    assert_eq!(copied, 1);
    assert_eq!(digest(&mut con, "copy"), digest(&mut con, "sale"));
    reserve(&mut con, "copy", "b", &[]);
    assert_eq!(
        info(&mut con, "sale")["claims"],
        1,
        "the copy is independent"
    );
    // The sale ends: EXPIRE and DEL work as on any key.
    let _: i64 = redis::cmd("PEXPIRE")
        .arg("copy")
        .arg(50)
        .query(&mut con)
        .unwrap();
    thread::sleep(Duration::from_millis(100));
    assert_eq!(
        error(&mut con, &["COUPON.INFO", "copy"]),
        "ERR no such campaign"
    );
    let deleted: i64 = redis::cmd("DEL").arg("sale").query(&mut con).unwrap();
    assert_eq!(deleted, 1);
}
