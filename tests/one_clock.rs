//! One clock reading per call (SPEC, "Conventions"): every time a call
//! works with comes from one reading taken once for the whole call,
//! parsing included. Two readings let a millisecond tick, or a pause,
//! fall between them: a window's key then expires before its last add
//! stops counting, a hold ends before the reservation that made it.
//!
//! The pause is made on purpose where a call would see it: the call names,
//! as its ALERT or LEDGER stream, a big key that has expired, so the
//! server deletes it (in the main thread) between the call's parsing and
//! its decision.

mod common;

use common::campaign::*;
use common::payload::{dump, items};
use common::*;
use redis::Connection;
use std::thread;
use std::time::{Duration, Instant};

/// The DUMP items of a one-add, one-report window of 60 buckets over 60 s:
/// (bucket number, ms of the report).
fn add_and_report(con: &mut Connection, key: &str) -> (i64, i64) {
    // window 60000, buckets 60, 1 bucket (number, sum), 1 report
    // (threshold 1, at_ms).
    let items = items(&dump(con, key));
    assert_eq!(items.len(), 8, "{items:?}");
    (items[3], items[7])
}

#[test]
fn the_expiry_and_the_report_of_one_call_are_the_same_moment() {
    let server = Server::start();
    let mut con = server.con();
    const CALLS: usize = 20_000;
    let mut pipe = redis::pipe();
    for i in 0..CALLS {
        let key = format!("one-clock:{i}");
        pipe.cmd("MON.SLIDECHECK")
            .arg(&key)
            .arg(&["1", "60", "1"])
            .ignore();
        pipe.cmd("PEXPIRETIME").arg(&key);
    }
    let expiries: Vec<i64> = pipe.query(&mut con).unwrap();
    let mut apart = Vec::new();
    for (i, expiry) in expiries.into_iter().enumerate() {
        let (bucket, reported_at) = add_and_report(&mut con, &format!("one-clock:{i}"));
        assert_eq!(bucket, reported_at / 1000, "the add and the report");
        if reported_at != expiry - 60_000 {
            apart.push((i, reported_at, expiry));
        }
    }
    assert!(
        apart.is_empty(),
        "{} of {CALLS} calls set an expiry that is not window after their add (key, add ms, expiry ms): {:?}",
        apart.len(),
        &apart[..apart.len().min(5)]
    );
}

/// A server that deletes expired keys only on lookup and in the main
/// thread, so a call that looks up a big expired key pauses there.
fn server_that_pauses_on_lookup() -> Server {
    let server = Server::with_args(&["--lazyfree-lazy-expire", "no"]);
    let mut con = server.con();
    let _: () = redis::cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(0)
        .query(&mut con)
        .unwrap();
    server
}

/// A hash of 100,000 fields at `key` that has just expired: the next
/// lookup deletes it, which takes tens of ms.
fn big_expired_key(con: &mut Connection, key: &str) {
    for chunk in 0..100 {
        let mut hset = redis::cmd("HSET");
        hset.arg(key);
        for field in chunk * 1000..(chunk + 1) * 1000 {
            hset.arg(field).arg(field);
        }
        let _: i64 = hset.query(con).unwrap();
    }
    let _: i64 = redis::cmd("PEXPIRE").arg(key).arg(1).query(con).unwrap();
    thread::sleep(Duration::from_millis(5));
}

#[test]
fn a_pause_inside_a_slidecheck_moves_neither_its_expiry_nor_its_report() {
    let server = server_that_pauses_on_lookup();
    let mut con = server.con();
    for round in 0..3 {
        let (key, alerts) = (
            format!("{{w{round}}}:orders"),
            format!("{{w{round}}}:alerts"),
        );
        big_expired_key(&mut con, &alerts);
        let reply: (i64, i64) = redis::cmd("MON.SLIDECHECK")
            .arg(&key)
            .arg(&["1", "60", "1", "ALERT"])
            .arg(&alerts)
            .query(&mut con)
            .unwrap();
        assert_eq!(reply, (1, 1));
        let (bucket, reported_at) = add_and_report(&mut con, &key);
        assert_eq!(bucket, reported_at / 1000, "the add and the report");
        assert_eq!(
            pexpiretime(&mut con, &key) - 60_000,
            reported_at,
            "round {round}: the key's expiry is window after the add, however long the lookup of {alerts} took"
        );
    }
}

/// A RESERVE whose lookup of its ledger pauses across another hold's end
/// is judged at one instant: the hold ending inside the pause is still
/// live then (no `expired` entry from the call), and the new hold ends
/// exactly HOLD after that instant. With two readings the call reclaimed
/// a hold as expired at a moment after the one its own hold counts from.
#[test]
fn a_pause_inside_a_reserve_judges_every_hold_at_the_calls_instant() {
    let server = server_that_pauses_on_lookup();
    let mut con = server.con();
    let (campaign, ledger) = ("{sale}:shoes", "{sale}:ledger");
    let _: () = redis::cmd("COUPON.CREATE")
        .arg(campaign)
        .arg(&["100", "PERUSER", "100", "HOLD", "1", "LEDGER"])
        .arg(ledger)
        .query(&mut con)
        .unwrap();
    // How long the lookup of a big expired key pauses the server.
    big_expired_key(&mut con, ledger);
    let started = Instant::now();
    let _: i64 = redis::cmd("EXISTS").arg(ledger).query(&mut con).unwrap();
    let pause = started.elapsed().as_millis() as i64;

    let mut straddled = 0;
    for trial in 0..10 {
        let (held, held_ends) = reserve(&mut con, campaign, "early", &["LEDGER", ledger]);
        assert!(held > 0);
        // The ledger becomes a big expired key, so that the next call's
        // lookup of it pauses; the call's entries are then all it holds.
        let _: i64 = redis::cmd("DEL").arg(ledger).query(&mut con).unwrap();
        big_expired_key(&mut con, ledger);
        let wait = held_ends - now_ms() - pause / 2;
        if wait > 0 {
            thread::sleep(Duration::from_millis(wait as u64));
        }
        let (claim, ends) = reserve(&mut con, campaign, "late", &["HOLD", "1", "LEDGER", ledger]);
        let answered = now_ms();
        assert!(claim > 0, "trial {trial}: {claim}");
        let entries: Vec<(String, Vec<String>)> = redis::cmd("XRANGE")
            .arg(ledger)
            .arg("-")
            .arg("+")
            .query(&mut con)
            .unwrap();
        let instant = ends - 1000;
        // The first hold ended inside the call: live at its instant, over
        // before its answer came.
        if instant <= held_ends && held_ends < answered {
            straddled += 1;
            let expired: Vec<_> = entries
                .iter()
                .filter(|(_, fields)| {
                    let has = |name: &str, value: &str| {
                        fields.windows(2).any(|f| f[0] == name && f[1] == value)
                    };
                    has("op", "expired") && has("claim", &held.to_string())
                })
                .collect();
            assert!(
                expired.is_empty(),
                "trial {trial}: the call counted from {instant} (its hold ends {ends}) but reclaimed \
                 a hold that ended at {held_ends}, after that instant: {expired:?}"
            );
        }
    }
    assert!(
        straddled > 0,
        "no call's pause ({pause} ms) straddled a hold's end"
    );
}

/// Late in a transaction (or a script) a call works with the instant the
/// server judges keys by, as PEXPIRE does beside it: on Redis 7.2+ and
/// Valkey the EXEC's start, on Redis 7.0 the wall clock (for both). With
/// the wall clock on a server that judges by EXEC's start, a window set
/// after a pause in the transaction ends the pause's length later than
/// PEXPIRE's (the module counting on a key the server thinks over, or
/// the reverse).
#[test]
fn a_call_late_in_a_transaction_uses_the_servers_instant_as_pexpire_does() {
    let server = Server::start();
    let mut con = server.con();
    for round in 0..3 {
        let (window, twin) = (format!("window:{round}"), format!("twin:{round}"));
        let _: () = redis::cmd("SET").arg(&twin).arg(1).query(&mut con).unwrap();
        let _: redis::Value = redis::pipe()
            .atomic()
            .cmd("DEBUG")
            .arg("SLEEP")
            .arg(0.3)
            .cmd("PEXPIRE")
            .arg(&twin)
            .arg(60_000)
            .cmd("MON.SLIDECHECK")
            .arg(&window)
            .arg(&["1", "60", "1"])
            .query(&mut con)
            .unwrap();
        let (expiry, twin_expiry) = (pexpiretime(&mut con, &window), pexpiretime(&mut con, &twin));
        assert!(
            (expiry - twin_expiry).abs() <= 1,
            "round {round}: the window expires at {expiry}, PEXPIRE beside it set {twin_expiry}"
        );
    }
}
