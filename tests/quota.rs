//! CL.QUOTA and calendar windows (MON.INCRCHECK and CL.QUOTA with `day`,
//! `TZ zone`) against real servers: replies against a model written here
//! from SPEC, expiries against Python's zoneinfo, clocks set just before
//! the zones' changes, contention on one key, errors that change nothing,
//! replicas and the AOF with absolute times.

mod common;

use common::rng::Rng;
use common::scripts;
use common::zoneinfo::{period_ends, sent_to_scripts_at, utc_ms};
use common::*;
use redis::{Connection, Value};

fn quota(con: &mut Connection, key: &str, limit: i64, window: &str, extra: &[&str]) -> [i64; 5] {
    let reply: Vec<i64> = redis::cmd("CL.QUOTA")
        .arg(key)
        .arg(limit)
        .arg(window)
        .arg(extra)
        .query(con)
        .unwrap();
    reply.try_into().expect("five integers")
}

fn pexpiretime(con: &mut Connection, key: &str) -> i64 {
    redis::cmd("PEXPIRETIME").arg(key).query(con).unwrap()
}

fn get(con: &mut Connection, key: &str) -> Option<i64> {
    redis::cmd("GET").arg(key).query(con).unwrap()
}

/// SPEC's quota, written out: `used` units of `limit`, a window ending
/// `reset_ms` from now (that of a new window when the key is missing).
fn expected(used: i64, limit: i64, quantity: i64, reset_ms: i64) -> [i64; 5] {
    let reset_after = (reset_ms + 999) / 1000;
    if used + quantity <= limit {
        [0, limit, limit - used - quantity, -1, reset_after]
    } else {
        let retry = if quantity > limit { -1 } else { reset_after };
        [1, limit, limit - used, retry, reset_after]
    }
}

#[test]
fn replies_follow_the_model_through_random_calls_and_refunds() {
    let server = Server::start();
    let mut con = server.con();
    let mut rng = Rng(38);
    let limit = 10;
    let mut used = 0;
    for step in 0..400 {
        if rng.chance(6) {
            let amount = 1 + rng.below(4) as i64;
            let after: i64 = redis::cmd("MON.DECRCLAMP")
                .arg("q")
                .arg(amount)
                .query(&mut con)
                .unwrap();
            used = (used - amount).max(0);
            assert_eq!(after, used, "step {step}: the refund");
            continue;
        }
        let quantity = rng.below(13) as i64;
        let ends_before = match get(&mut con, "q") {
            Some(_) => pexpiretime(&mut con, "q"),
            None => server_ms(&mut con) + 3_600_000,
        };
        let reply = quota(&mut con, "q", limit, "3600", &[&quantity.to_string()]);
        let now = server_ms(&mut con);
        // reset_after from the window's end: within the call's drift.
        let ends = if used == 0 && get(&mut con, "q").is_some() && quantity > 0 && reply[0] == 0 {
            pexpiretime(&mut con, "q")
        } else {
            ends_before
        };
        let model = expected(used, limit, quantity, ends - now);
        assert_eq!(
            reply[..4],
            model[..4],
            "step {step}: quantity {quantity}, used {used}"
        );
        assert!(
            (reply[4] - model[4]).abs() <= 1,
            "step {step}: {reply:?} vs {model:?}"
        );
        if reply[0] == 0 && quantity > 0 {
            used += quantity;
        }
        assert_eq!(get(&mut con, "q").unwrap_or(0), used, "step {step}");
    }
}

#[test]
fn a_new_window_starts_at_the_call_and_a_refusal_writes_nothing() {
    let server = Server::start();
    let mut con = server.con();
    let before = server_ms(&mut con);
    assert_eq!(
        quota(&mut con, "orders", 3, "60", &["2"]),
        [0, 3, 1, -1, 60]
    );
    let after = server_ms(&mut con);
    let ends = pexpiretime(&mut con, "orders");
    assert!(before + 60_000 <= ends && ends <= after + 60_000);
    let ttl: i64 = redis::cmd("TTL").arg("orders").query(&mut con).unwrap();
    // Refused: nothing written, WATCH undisturbed, the TTL kept.
    assert!(watch_survives(&server, "orders", |con| {
        assert_eq!(quota(con, "orders", 3, "60", &["2"]), [1, 3, 1, ttl, ttl]);
    }));
    assert_eq!(
        (get(&mut con, "orders"), pexpiretime(&mut con, "orders")),
        (Some(2), ends)
    );
    // More than the limit can ever fit: retry_after -1.
    assert_eq!(
        quota(&mut con, "orders", 3, "60", &["4"])[..4],
        [1, 3, 1, -1]
    );
    // A peek of a missing key: the whole window, nothing written.
    assert_eq!(quota(&mut con, "other", 3, "60", &["0"]), [0, 3, 3, -1, 60]);
    assert_eq!(get(&mut con, "other"), None);
    // The rest fits exactly; the window is not moved.
    assert_eq!(
        quota(&mut con, "orders", 3, "60", &["1"])[..4],
        [0, 3, 0, -1]
    );
    assert_eq!(pexpiretime(&mut con, "orders"), ends);
    let counters = guard_counters(&mut con);
    assert_eq!(
        (
            counters["quota_calls"],
            counters["quota_allowed"],
            counters["quota_limited"]
        ),
        (5, 3, 2)
    );
}

#[test]
fn bad_input_is_an_error_naming_it_that_changes_nothing() {
    let server = Server::start();
    let mut con = server.con();
    quota(&mut con, "q", 5, "day", &["2", "TZ", "Asia/Seoul"]);
    incrcheck(&mut con, "c", 1, 60, &[5]);
    let q = |args: &[&'static str]| -> Vec<&'static [u8]> {
        ["CL.QUOTA", "q"]
            .iter()
            .chain(args)
            .map(|a| a.as_bytes())
            .collect()
    };
    let c = |args: &[&'static str]| -> Vec<&'static [u8]> {
        ["MON.INCRCHECK", "c"]
            .iter()
            .chain(args)
            .map(|a| a.as_bytes())
            .collect()
    };
    assert_errors_change_nothing(
        &mut con,
        &[
            (q(&["0", "60"]), "limit"),
            (q(&["x", "60"]), "limit"),
            (q(&["5", "0"]), "window"),
            (q(&["5", "days"]), "window"),
            (q(&["5", "9223372036854775807"]), "window"),
            (q(&["5", "day", "-1"]), "quantity"),
            (q(&["5", "day", "1.5"]), "quantity"),
            (q(&["5", "day", "1", "TZ", "Mars/Olympus"]), "tz"),
            (q(&["5", "day", "TZ", "../../etc/passwd"]), "tz"),
            (q(&["5", "60", "TZ", "UTC"]), "tz"),
            (q(&["5", "day", "TZ", "UTC", "tz", "UTC"]), "TZ"),
            (q(&["5", "day", "1", "ZONE", "UTC"]), "ZONE"),
            (q(&["5", "day", "TZ"]), "TZ"),
            (c(&["1", "day", "5", "TZ", "Nowhere/City"]), "tz"),
            (c(&["1", "60", "5", "TZ", "UTC"]), "tz"),
            (c(&["1", "fortnight", "5"]), "window"),
        ],
    );
    let _: () = redis::cmd("RPUSH")
        .arg("list")
        .arg("x")
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("text")
        .arg("abc")
        .query(&mut con)
        .unwrap();
    assert_errors_change_nothing(
        &mut con,
        &[
            (vec![b"CL.QUOTA", b"list", b"5", b"day"], "WRONGTYPE"),
            (vec![b"CL.QUOTA", b"text", b"5", b"day"], "not an integer"),
        ],
    );
    assert_arity_errors(&mut con, &[vec!["CL.QUOTA", "q", "5"]]);
}

/// Zones and units at the real clock: each new key's expiry is the end
/// zoneinfo works out for the call's instant.
#[test]
fn calendar_windows_end_where_zoneinfo_says() {
    let server = Server::start();
    let mut con = server.con();
    let zones = [
        "UTC",
        "Asia/Seoul",
        "America/New_York",
        "Asia/Kolkata",
        "Australia/Lord_Howe",
    ];
    let units = ["minute", "hour", "day", "week", "month"];
    let mut queries = Vec::new();
    let mut got = Vec::new();
    for zone in zones {
        for unit in units {
            let key = format!("{zone}:{unit}");
            let before = server_ms(&mut con);
            if unit == "day" || unit == "minute" {
                quota(&mut con, &key, 5, unit, &["TZ", zone]);
            } else {
                let _: Value = redis::cmd("MON.INCRCHECK")
                    .arg(&key)
                    .arg(1)
                    .arg(unit.to_uppercase())
                    .arg(5)
                    .arg("TZ")
                    .arg(zone)
                    .query(&mut con)
                    .unwrap();
            }
            let after = server_ms(&mut con);
            queries.push((zone, unit, before));
            queries.push((zone, unit, after));
            got.push((key.clone(), pexpiretime(&mut con, &key)));
        }
    }
    let ends = period_ends(&queries);
    for (i, (key, expiry)) in got.iter().enumerate() {
        // A period that turned during the call may have either end.
        assert!(
            *expiry == ends[2 * i] || *expiry == ends[2 * i + 1],
            "{key}: expires {expiry}, zoneinfo says {} or {}",
            ends[2 * i],
            ends[2 * i + 1]
        );
    }
    // Without TZ a calendar window is UTC's.
    let now = server_ms(&mut con);
    quota(&mut con, "utc", 5, "day", &[]);
    assert_eq!(
        pexpiretime(&mut con, "utc"),
        (now / 86_400_000 + 1) * 86_400_000
    );
}

/// A server whose clock is set just before a zone's change (libfaketime;
/// Valkey 9.1 of the matrix, not a jemalloc build): the window's end is
/// zoneinfo's, for days of 23 and 25 hours, a midnight that does not
/// exist, a 30-minute change and an offset of half an hour; then the clock
/// steps past the change and back.
#[test]
fn windows_across_the_zones_changes_on_a_server_whose_clock_is_moved() {
    let Some(server) = Server::with_clock("+0s", &[]) else {
        return;
    };
    let mut con = server.con();
    let cases = [
        // New York springs forward: a 23-hour day.
        (
            "America/New_York",
            "day",
            "2027-03-14T06:59:50Z",
            Some("2027-03-15T04:00:00Z"),
        ),
        (
            "America/New_York",
            "hour",
            "2027-03-14T06:59:50Z",
            Some("2027-03-14T07:00:00Z"),
        ),
        // ... and falls back: a 25-hour day, a 2-hour 01:00.
        (
            "America/New_York",
            "day",
            "2027-11-07T05:59:50Z",
            Some("2027-11-08T05:00:00Z"),
        ),
        (
            "America/New_York",
            "hour",
            "2027-11-07T05:59:50Z",
            Some("2027-11-07T07:00:00Z"),
        ),
        // Santiago's 2027-09-05 00:00 does not exist: the day starts at 01:00 -03.
        (
            "America/Santiago",
            "day",
            "2027-09-05T03:59:50Z",
            Some("2027-09-05T04:00:00Z"),
        ),
        ("America/Santiago", "day", "2027-09-05T04:00:10Z", None),
        // Lord Howe moves 30 minutes, back in April, forward in October.
        ("Australia/Lord_Howe", "hour", "2027-04-03T14:59:50Z", None),
        (
            "Australia/Lord_Howe",
            "hour",
            "2027-10-02T15:29:50Z",
            Some("2027-10-02T15:30:00Z"),
        ),
        ("Australia/Lord_Howe", "day", "2027-10-02T15:29:50Z", None),
        (
            "Asia/Kolkata",
            "hour",
            "2027-03-14T06:59:50Z",
            Some("2027-03-14T07:30:00Z"),
        ),
        (
            "Asia/Seoul",
            "day",
            "2027-03-14T14:59:50Z",
            Some("2027-03-14T15:00:00Z"),
        ),
    ];
    let mut queries = Vec::new();
    let mut got = Vec::new();
    for (i, (zone, unit, at, by_hand)) in cases.iter().enumerate() {
        server.set_clock((utc_ms(at) - time::now_ms()) / 1000);
        let key = format!("k{i}");
        let before = server_ms(&mut con);
        quota(&mut con, &key, 5, unit, &["1", "TZ", zone]);
        // The script, with the rules the packages send at that instant.
        let rules = sent_to_scripts_at(zone, utc_ms(at) / 1000);
        let by_script = scripts::Call::new("CL.QUOTA")
            .key(format!("s{i}"))
            .args([
                5.to_string(),
                unit.to_string(),
                "1".into(),
                "TZ".into(),
                rules,
            ])
            .script(&mut con)
            .unwrap();
        let after = server_ms(&mut con);
        let expiry = pexpiretime(&mut con, &key);
        assert!(matches!(by_script, Value::Array(_)), "{by_script:?}");
        assert_eq!(
            pexpiretime(&mut con, &format!("s{i}")),
            expiry,
            "the script: {zone} {unit} at {at}"
        );
        if let Some(by_hand) = by_hand {
            assert_eq!(expiry, utc_ms(by_hand), "{zone} {unit} at {at}");
        }
        queries.extend([(*zone, *unit, before), (*zone, *unit, after)]);
        got.push(expiry);
    }
    let ends = period_ends(&queries);
    for (i, expiry) in got.iter().enumerate() {
        assert!(
            *expiry == ends[2 * i] || *expiry == ends[2 * i + 1],
            "{:?}: {expiry} vs zoneinfo {:?}",
            cases[i],
            &ends[2 * i..2 * i + 2]
        );
    }
    // A window opened before the spring change, then the clock steps past
    // it and back: the running window never moves, and a new key gets the
    // period of the instant its call reads.
    let at = |text: &str| (utc_ms(text) - time::now_ms()) / 1000;
    let new_york = ["1", "TZ", "America/New_York"];
    server.set_clock(at("2027-03-14T06:59:50Z"));
    quota(&mut con, "running", 5, "day", &new_york);
    let running = pexpiretime(&mut con, "running");
    assert_eq!(running, utc_ms("2027-03-15T04:00:00Z"));
    server.set_clock(at("2027-03-14T07:00:10Z"));
    assert_eq!(quota(&mut con, "running", 5, "day", &new_york)[2], 3);
    quota(&mut con, "after", 5, "hour", &new_york);
    assert_eq!(
        pexpiretime(&mut con, "after"),
        utc_ms("2027-03-14T08:00:00Z")
    );
    server.set_clock(at("2027-03-14T05:59:50Z"));
    assert_eq!(quota(&mut con, "running", 5, "day", &new_york)[2], 2);
    assert_eq!(pexpiretime(&mut con, "running"), running);
    quota(&mut con, "back", 5, "hour", &new_york);
    assert_eq!(
        pexpiretime(&mut con, "back"),
        utc_ms("2027-03-14T06:00:00Z")
    );
}

#[test]
fn many_connections_on_one_quota_get_exactly_the_limit() {
    let server = Server::start();
    let mut crowd = crowd::Crowd::connect(&server, 32);
    let allowed: i64 = crowd
        .run(|_, con| {
            (0..5)
                .map(|_| quota(con, "drop", 100, "day", &["1", "TZ", "Asia/Seoul"]))
                .filter(|reply| reply[0] == 0)
                .count() as i64
        })
        .iter()
        .sum();
    assert_eq!(allowed, 100);
    let mut con = server.con();
    assert_eq!(get(&mut con, "drop"), Some(100));
}

#[test]
fn replicas_and_the_aof_get_the_absolute_end() {
    let mut primary = Server::start();
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();
    // The replica applies the stream 1.5 s late: a relative TTL would move.
    let sleeper = replica.hold_back(1.5);
    quota(&mut con, "q", 5, "60", &["2"]);
    quota(&mut con, "q", 5, "60", &["1"]);
    quota(&mut con, "d", 5, "day", &["3", "TZ", "Asia/Seoul"]);
    let _: Value = redis::cmd("MON.INCRCHECK")
        .arg("c")
        .arg(4)
        .arg("month")
        .arg(10)
        .arg("TZ")
        .arg("America/New_York")
        .query(&mut con)
        .unwrap();
    replica_caught_up(&mut con);
    sleeper.join().unwrap();
    let state = |con: &mut Connection| -> Vec<(Option<i64>, i64)> {
        ["q", "d", "c"]
            .iter()
            .map(|key| (get(con, key), pexpiretime(con, key)))
            .collect()
    };
    let on_primary = state(&mut con);
    assert_eq!(
        on_primary.iter().map(|s| s.0).collect::<Vec<_>>(),
        [Some(3), Some(3), Some(4)]
    );
    assert_eq!(state(&mut replica.con()), on_primary);
    primary.restart();
    assert_eq!(state(&mut primary.con()), on_primary);
}
