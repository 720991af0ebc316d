//! Upgrades: one DUMP payload per value shape and encoding version ever
//! released, under tests/golden/, made once by the module of that version
//! (`make_golden_payloads`, ignored: never run again for a released
//! version) and loaded by RESTORE in every later build, with the replies
//! and expiries stated here by hand. A payload of a newer version than the
//! module reads is refused with a clear error, not a crash.

mod common;

use std::path::PathBuf;
use std::thread;
use std::time::Duration;

use common::campaign::*;
use common::payload::{dump, restore, with_encoding_version};
use common::*;
use redis::Connection;

fn golden_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"))
}

fn golden(name: &str) -> Vec<u8> {
    let path = golden_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// 100 years: a window made once stays live for as long as its payload
/// is kept, so its sums and reports can be stated by hand.
const CENTURY_S: &str = "3153600000";
/// About 95 years: holds made once stay live as long.
const LONG_HOLD_S: &str = "3000000000";

fn create_with(con: &mut Connection, key: &str, args: &[&str]) {
    let _: () = redis::cmd("COUPON.CREATE")
        .arg(key)
        .arg(args)
        .query(con)
        .unwrap();
}

/// Writes tests/golden/*.v1.dump from this build, and prints what the
/// loading test states by hand. Run once per encoding version:
/// `cargo test --release --test golden -- --ignored`.
#[test]
#[ignore]
fn make_golden_payloads() {
    let server = Server::start();
    let mut con = server.con();
    create_with(&mut con, "cpn-empty", &["5", "PERUSER", "2", "HOLD", "600"]);

    create_with(
        &mut con,
        "cpn-held",
        &["10", "PERUSER", "2", "HOLD", LONG_HOLD_S],
    );
    reserve(&mut con, "cpn-held", "alice", &["ID", "order-1"]);
    reserve(&mut con, "cpn-held", "bob", &[]);
    reserve(&mut con, "cpn-held", "alice", &[]);

    create_with(
        &mut con,
        "cpn-mixed",
        &["4", "PERUSER", "3", "HOLD", LONG_HOLD_S],
    );
    reserve(&mut con, "cpn-mixed", "alice", &["ID", "a1"]);
    confirm(&mut con, "cpn-mixed", 1);
    reserve(&mut con, "cpn-mixed", "bob", &[]);
    release(&mut con, "cpn-mixed", 2);
    reserve(&mut con, "cpn-mixed", "carol", &["HOLD", "1"]);
    reserve(&mut con, "cpn-mixed", "dave", &["HOLD", "1"]);
    thread::sleep(Duration::from_millis(1_100));
    // Reclaims claims 3 and 4.
    reserve(&mut con, "cpn-mixed", "erin", &["ID", "e1"]);
    issue(&mut con, "cpn-mixed", "gus", 4);
    // Expired, never reclaimed: stored with its past expiry.
    reserve(&mut con, "cpn-mixed", "frank", &["HOLD", "1"]);
    thread::sleep(Duration::from_millis(1_100));

    slide(&mut con, "win-one", 3, CENTURY_S, &["10"]);
    slide(
        &mut con,
        "win-reports",
        4,
        CENTURY_S,
        &["3", "5", "BUCKETS", "3600"],
    );
    slide(
        &mut con,
        "win-reports",
        2,
        CENTURY_S,
        &["3", "5", "BUCKETS", "3600"],
    );
    // Two buckets (the ring and the last one) and a report, aged by now.
    slide(&mut con, "win-short", 1, "2", &["1", "BUCKETS", "2"]);
    thread::sleep(Duration::from_millis(1_000));
    slide(&mut con, "win-short", 2, "2", &["1", "BUCKETS", "2"]);

    for key in ["cpn-empty", "cpn-held", "cpn-mixed"] {
        println!("{key}: {:?}", info(&mut con, key));
        println!("{key}: {:?}", claims(&mut con, key, &[]));
    }
    for key in [
        "cpn-empty",
        "cpn-held",
        "cpn-mixed",
        "win-one",
        "win-reports",
        "win-short",
    ] {
        std::fs::write(
            golden_dir().join(format!("{key}.v1.dump")),
            dump(&mut con, key),
        )
        .unwrap();
    }
}

/// Writes tests/golden/*.v2.dump (guard-cpn's encoding 2: a ledger) from
/// this build. Run once: `cargo test --release --test golden --
/// --ignored make_golden_payloads_of_encoding_2`.
#[test]
#[ignore]
fn make_golden_payloads_of_encoding_2() {
    let server = Server::start();
    let mut con = server.con();
    let ledger = ["LEDGER", "cpn-ledger:log"];
    create_with(
        &mut con,
        "cpn-ledger",
        &[
            "3",
            "HOLD",
            LONG_HOLD_S,
            "LEDGER",
            "cpn-ledger:log",
            "MAXLEN",
            "100",
        ],
    );
    reserve(
        &mut con,
        "cpn-ledger",
        "alice",
        &["ID", "a1", ledger[0], ledger[1]],
    );
    let _: i64 = redis::cmd("COUPON.CONFIRM")
        .arg(&["cpn-ledger", "1", ledger[0], ledger[1]])
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("COUPON.ALTER")
        .arg(&["cpn-ledger", "LIMIT", "5", ledger[0], ledger[1]])
        .query(&mut con)
        .unwrap();
    println!("cpn-ledger: {:?}", info(&mut con, "cpn-ledger"));
    std::fs::write(
        golden_dir().join("cpn-ledger.v2.dump"),
        dump(&mut con, "cpn-ledger"),
    )
    .unwrap();
}

fn restored(con: &mut Connection, name: &str) -> String {
    restored_of(con, name, 1)
}

fn restored_of(con: &mut Connection, name: &str, version: u32) -> String {
    let key = name.to_string();
    restore(con, &key, &golden(&format!("{name}.v{version}.dump")))
        .unwrap_or_else(|e| panic!("{name}.v{version}.dump no longer loads: {e}"));
    key
}

/// COUPON.INFO's fields in SPEC's order.
fn info_fields(con: &mut Connection, key: &str) -> [i64; 11] {
    let got = info(con, key);
    [
        "limit",
        "peruser",
        "hold",
        "confirmed",
        "held",
        "available",
        "claims",
        "expired",
        "released",
        "held_units",
        "confirmed_units",
    ]
    .map(|field| got[field])
}

/// A row of a claim of one unit (every claim before encoding 3).
fn row(claim: i64, user: &str, state: &str, expires_at_ms: i64, id: Option<&str>) -> ClaimRow {
    ClaimRow {
        claim,
        user: user.into(),
        state: state.into(),
        expires_at_ms,
        request_id: id.map(str::to_string),
        units: 1,
    }
}

/// Writes tests/golden/cpn-units.v3.dump (guard-cpn's encoding 3: units)
/// from this build. Run once: `cargo test --release --test golden --
/// --ignored make_golden_payloads_of_encoding_3`.
#[test]
#[ignore]
fn make_golden_payloads_of_encoding_3() {
    let server = Server::start();
    let mut con = server.con();
    create_with(
        &mut con,
        "cpn-units",
        &["10", "PERUSER", "4", "HOLD", LONG_HOLD_S],
    );
    reserve(&mut con, "cpn-units", "alice", &["ID", "a1", "QTY", "4"]);
    reserve(&mut con, "cpn-units", "bob", &["QTY", "3"]);
    reserve(&mut con, "cpn-units", "carol", &[]);
    let _: i64 = redis::cmd("COUPON.CONFIRM")
        .arg(&["cpn-units", "1", "QTY", "2"])
        .query(&mut con)
        .unwrap();
    println!("cpn-units: {:?}", info(&mut con, "cpn-units"));
    println!("cpn-units: {:?}", claims(&mut con, "cpn-units", &[]));
    std::fs::write(
        golden_dir().join("cpn-units.v3.dump"),
        dump(&mut con, "cpn-units"),
    )
    .unwrap();
}

/// Encoding 3 of guard-cpn (0.5.0): alice reserved 4 units and confirmed
/// 2, bob holds 3, carol 1. Limit 10: 2 + 3 + 1 live, 4 available.
#[test]
fn campaigns_of_encoding_3_load_with_their_units() {
    let server = Server::start();
    let mut con = server.con();
    let sale = restored_of(&mut con, "cpn-units", 3);
    assert_eq!(
        info_fields(&mut con, &sale),
        [10, 4, 3_000_000_000, 1, 2, 4, 3, 0, 0, 4, 2]
    );
    let rows = claims(&mut con, &sale, &[]);
    let units: Vec<(i64, &str, i64)> = rows
        .iter()
        .map(|r| (r.claim, r.state.as_str(), r.units))
        .collect();
    assert_eq!(units, [(1, "confirmed", 2), (2, "held", 3), (3, "held", 1)]);
    // bob's 3 units are PERUSER 4 but for 1; 5 pass PERUSER (judged
    // before the limit); 3 of the 4 left, then 2 do not fit the 1 left.
    assert_eq!(reserve(&mut con, &sale, "bob", &["QTY", "2"]), (-1, 0));
    assert_eq!(reserve(&mut con, &sale, "dave", &["QTY", "5"]), (-1, 0));
    assert_eq!(reserve(&mut con, &sale, "dave", &["QTY", "3"]).0, 4);
    assert_eq!(reserve(&mut con, &sale, "erin", &["QTY", "2"]), (-2, 0));
}

/// Encoding 1 of guard-cpn, as made on 2026-12-01 (hold expiries as the
/// payloads hold them).
#[test]
fn campaigns_of_encoding_1_load_with_the_same_replies() {
    let server = Server::start();
    let mut con = server.con();
    let empty = restored(&mut con, "cpn-empty");
    assert_eq!(
        info_fields(&mut con, &empty),
        [5, 2, 600, 0, 0, 5, 0, 0, 0, 0, 0]
    );
    assert_eq!(claims(&mut con, &empty, &[]), []);

    let held = restored(&mut con, "cpn-held");
    assert_eq!(
        info_fields(&mut con, &held),
        [10, 2, 3_000_000_000, 0, 3, 7, 3, 0, 0, 3, 0]
    );
    let until = 4_796_161_217_551;
    assert_eq!(
        claims(&mut con, &held, &[]),
        [
            row(1, "alice", "held", until, Some("order-1")),
            row(2, "bob", "held", until, None),
            row(3, "alice", "held", until, None),
        ]
    );
    // alice holds PERUSER 2; her request id repeats her claim.
    let again: (i64, i64) = redis::cmd("COUPON.RESERVE")
        .arg(&held)
        .arg("alice")
        .arg("ID")
        .arg("order-1")
        .query(&mut con)
        .unwrap();
    assert_eq!(again, (1, until));

    // Claim 1 confirmed (id a1), 2 released, 3 and 4 expired and
    // reclaimed, 5 held (id e1), 6 confirmed by ISSUE, 7 expired and
    // still stored.
    let mixed = restored(&mut con, "cpn-mixed");
    assert_eq!(
        info_fields(&mut con, &mixed),
        [4, 3, 3_000_000_000, 2, 1, 1, 7, 3, 1, 1, 2]
    );
    assert_eq!(
        claims(&mut con, &mixed, &[]),
        [
            row(1, "alice", "confirmed", -1, Some("a1")),
            row(5, "erin", "held", 4_796_161_218_652, Some("e1")),
            row(6, "gus", "confirmed", -1, None),
        ]
    );
    assert_eq!(confirm(&mut con, &mixed, 7), -3, "an expired hold");
    assert_eq!(confirm(&mut con, &mixed, 5), 1);
}

/// Encoding 2 of guard-cpn (0.3.0), as made on 2026-12-02: a campaign
/// with its ledger, altered to LIMIT 5. Its ledger stream is not in the
/// payload; the campaign still names it and writes to it.
#[test]
fn campaigns_of_encoding_2_load_with_their_ledger() {
    let server = Server::start();
    let mut con = server.con();
    let sale = restored_of(&mut con, "cpn-ledger", 2);
    assert_eq!(
        info_fields(&mut con, &sale),
        [5, 1, 3_000_000_000, 1, 0, 4, 1, 0, 0, 0, 1]
    );
    assert_eq!(
        claims(&mut con, &sale, &[]),
        [row(1, "alice", "confirmed", -1, Some("a1"))]
    );
    let unnamed = redis::cmd("COUPON.RESERVE")
        .arg(&[&sale, "bob"])
        .query::<(i64, i64)>(&mut con)
        .unwrap_err();
    assert!(
        unnamed
            .to_string()
            .contains("ledger: the campaign keeps a ledger"),
        "{unnamed}"
    );
    let (claim, _) = reserve(&mut con, &sale, "bob", &["LEDGER", "cpn-ledger:log"]);
    assert_eq!(claim, 2);
    let entries: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
        .arg(&["cpn-ledger:log", "-", "+"])
        .query(&mut con)
        .unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].1[1], ("op".to_string(), "reserved".to_string()));
}

/// Encoding 1 of guard-win: 100-year windows keep their sums and reports
/// as long as the payloads are kept; the short one has aged.
#[test]
fn windows_of_encoding_1_load_with_the_same_replies() {
    let server = Server::start();
    let mut con = server.con();
    // 3 added; 2 more is 5, under 10.
    let one = restored(&mut con, "win-one");
    assert_eq!(slide(&mut con, &one, 2, CENTURY_S, &["10"]), (5, 0));
    // 6 added, thresholds 3 and 5 reported: 1 more crosses only 7.
    let reports = restored(&mut con, "win-reports");
    assert_eq!(
        slide(
            &mut con,
            &reports,
            1,
            CENTURY_S,
            &["3", "5", "7", "BUCKETS", "3600"]
        ),
        (7, 3)
    );
    // Its shape is kept: another cut is refused.
    let error = redis::cmd("MON.SLIDECHECK")
        .arg(&reports)
        .arg(1)
        .arg(CENTURY_S)
        .arg(3)
        .query::<(i64, i64)>(&mut con)
        .unwrap_err();
    assert!(error.to_string().contains("buckets"), "{error}");
    // 2 s in 2 buckets, made long ago: everything aged, the report too.
    let short = restored(&mut con, "win-short");
    assert_eq!(
        slide(&mut con, &short, 1, "2", &["1", "BUCKETS", "2"]),
        (1, 1)
    );
    // The key expires a window after the add, as for any window.
    let expiry = pexpiretime(&mut con, &short);
    assert!((expiry - now_ms() - 2_000).abs() < 1_000, "{expiry}");
}

/// A payload of a newer encoding than this module reads (a downgrade) is
/// refused with RESTORE's error, nothing changed, and the log says why.
#[test]
fn a_payload_of_a_newer_encoding_is_refused_clearly() {
    let server = Server::start();
    let mut con = server.con();
    for (name, type_name, reads) in [
        ("cpn-mixed", "guard-cpn", 3),
        ("win-reports", "guard-win", 1),
    ] {
        let newer = with_encoding_version(&golden(&format!("{name}.v1.dump")), reads + 1);
        let error = restore(&mut con, name, &newer).unwrap_err();
        assert!(error.to_string().contains("Bad data format"), "{error}");
        assert_eq!(key_state(&mut con, name).0, "none");
        assert!(
            server.log().contains(&format!(
                "a {type_name} value of encoding version {} is newer than this module reads \
                 ({reads})",
                reads + 1
            )),
            "the log must say why: {}",
            server.log()
        );
    }
    assert!(server.try_con().is_some(), "the server is up");
}
