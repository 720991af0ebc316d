//! COUPON.RENEW, the heartbeat of a lease, against real servers: replies
//! worked out from SPEC at the server's clock, errors that change
//! nothing, the ledger, events and INFO, a replica and the AOF with the
//! absolute end, a server clock that steps, and a pool of workers sharing
//! 5 slots of a campaign, one of which dies holding its slot.

mod common;

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use common::calls::campaign::{claims, confirm, create, info, release, reserve};
use common::*;
use redis::Connection;

fn renew(con: &mut Connection, key: &str, claim: i64, options: &[&str]) -> i64 {
    redis::cmd("COUPON.RENEW")
        .arg(key)
        .arg(claim)
        .arg(options)
        .query(con)
        .unwrap()
}

/// `renew` at the server's clock: its reply, and the clock read just
/// before and after it.
fn renewed_between(
    con: &mut Connection,
    key: &str,
    claim: i64,
    options: &[&str],
) -> (i64, i64, i64) {
    let before = server_ms(con);
    let reply = renew(con, key, claim, options);
    (before, reply, server_ms(con))
}

fn expiry_of(con: &mut Connection, key: &str, claim: i64) -> Option<i64> {
    claims(con, key, &[])
        .into_iter()
        .find(|row| row.claim == claim)
        .map(|row| row.expires_at_ms)
}

#[test]
fn a_live_hold_ends_hold_from_now_and_other_claims_answer_0_or_minus_3() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 3, 3, 30);
    let (held, _) = reserve(&mut con, "sale", "alice", &[]);
    // The campaign's hold from now.
    let (before, until, after) = renewed_between(&mut con, "sale", held, &[]);
    assert!(
        before + 30_000 <= until && until <= after + 30_000,
        "{until}"
    );
    assert_eq!(expiry_of(&mut con, "sale", held), Some(until));
    // HOLD, sooner than before.
    let (before, until, after) = renewed_between(&mut con, "sale", held, &["HOLD", "5"]);
    assert!(before + 5_000 <= until && until <= after + 5_000, "{until}");
    assert_eq!(expiry_of(&mut con, "sale", held), Some(until));
    // Confirmed: nothing to renew. Released, never made: no live claim.
    let (paid, _) = reserve(&mut con, "sale", "bob", &[]);
    assert_eq!(confirm(&mut con, "sale", paid), 1);
    assert_eq!(renew(&mut con, "sale", paid, &[]), 0);
    assert_eq!(release(&mut con, "sale", held), 1);
    assert_eq!(renew(&mut con, "sale", held, &[]), -3);
    assert_eq!(renew(&mut con, "sale", 99, &[]), -3);
    // An expired hold does not come back.
    let (short, _) = reserve(&mut con, "sale", "carol", &["HOLD", "1"]);
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(renew(&mut con, "sale", short, &["HOLD", "60"]), -3);
    let counters = guard_counters(&mut con);
    assert_eq!(counters["coupon_renewed"], 2, "renewals made, not calls");
}

#[test]
fn a_renewed_lease_keeps_its_slot_past_its_first_end() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "pool", 1, 1, 1);
    let (slot, _) = reserve(&mut con, "pool", "worker-a", &["ID", "token-a"]);
    std::thread::sleep(Duration::from_millis(600));
    assert!(renew(&mut con, "pool", slot, &["HOLD", "30"]) > 0);
    std::thread::sleep(Duration::from_millis(700));
    // Past the first end: still held, the pool is full.
    assert_eq!(reserve(&mut con, "pool", "worker-b", &[]).0, -2);
    assert_eq!(release(&mut con, "pool", slot), 1);
    assert!(reserve(&mut con, "pool", "worker-b", &[]).0 > 0);
}

#[test]
fn bad_input_is_an_error_naming_it_that_changes_nothing() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 3, 3, 30);
    let (claim, _) = reserve(&mut con, "sale", "alice", &[]);
    let _: () = redis::cmd("SET")
        .arg("text")
        .arg("x")
        .query(&mut con)
        .unwrap();
    let claim = claim.to_string();
    let renew = |args: &[&str]| -> Vec<Vec<u8>> {
        ["COUPON.RENEW", "sale"]
            .iter()
            .chain(args)
            .map(|a| a.as_bytes().to_vec())
            .collect()
    };
    let cases = [
        (renew(&["0"]), "claim"),
        (renew(&["x", "HOLD", "0"]), "claim"),
        (renew(&[&claim, "HOLD", "0"]), "hold"),
        (renew(&[&claim, "HOLD", "-5"]), "hold"),
        (
            renew(&[&claim, "HOLD", "9223372036854775807"]),
            "hold is too large",
        ),
        (renew(&[&claim, "HOLD", "5", "HOLD", "6"]), "HOLD"),
        (renew(&[&claim, "TTL", "5"]), "TTL"),
        (renew(&[&claim, "HOLD"]), "HOLD"),
        // A campaign without a ledger named with one.
        (renew(&[&claim, "LEDGER", "ledger"]), "ledger"),
    ];
    for (args, expected) in &cases {
        let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        assert_error_changes_nothing(&mut con, "sale", &args, expected);
    }
    assert_errors_change_nothing(
        &mut con,
        &[
            (vec![b"COUPON.RENEW", b"none", b"1"], "no such campaign"),
            (vec![b"COUPON.RENEW", b"text", b"1"], "WRONGTYPE"),
        ],
    );
    assert_arity_errors(&mut con, &[vec!["COUPON.RENEW", "sale"]]);
}

#[test]
fn a_renewal_is_in_the_ledger_fires_its_event_and_reaches_replicas_and_the_aof() {
    let mut primary = Server::start();
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();
    let _: () = redis::cmd("COUPON.CREATE")
        .arg("{s}:sale")
        .arg(2)
        .arg("LEDGER")
        .arg("{s}:ledger")
        .query(&mut con)
        .unwrap();
    let (claim, _): (i64, i64) = redis::cmd("COUPON.RESERVE")
        .arg("{s}:sale")
        .arg("alice")
        .arg("ID")
        .arg("order-1")
        .arg("LEDGER")
        .arg("{s}:ledger")
        .query(&mut con)
        .unwrap();
    // The replica applies the stream 1.5 s late: a relative time would move.
    let sleeper = replica.hold_back(1.5);
    let until = AtomicI64::new(0);
    let events = events_of(&primary, |c| {
        until.store(
            renew(
                c,
                "{s}:sale",
                claim,
                &["HOLD", "60", "LEDGER", "{s}:ledger"],
            ),
            Ordering::Relaxed,
        );
    });
    let until = until.into_inner();
    assert!(
        events.contains(&("coupon.renewed".to_string(), "{s}:sale".to_string())),
        "{events:?}"
    );
    let (_, fields): (String, Vec<String>) = last_entry(&mut con, "{s}:ledger").unwrap();
    let expected: Vec<String> = [
        "key",
        "{s}:sale",
        "op",
        "renewed",
        "claim",
        &claim.to_string(),
        "user",
        "alice",
        "expires_at_ms",
        &until.to_string(),
        "id",
        "order-1",
        "available",
        "1",
        "units",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(fields, expected);
    replica_caught_up(&mut con);
    sleeper.join().unwrap();
    let on_primary = claims(&mut con, "{s}:sale", &[]);
    assert_eq!(on_primary[0].expires_at_ms, until);
    assert_eq!(claims(&mut replica.con(), "{s}:sale", &[]), on_primary);
    primary.restart();
    assert_eq!(claims(&mut primary.con(), "{s}:sale", &[]), on_primary);
}

/// A server whose clock steps (libfaketime; Valkey 9.1 of the matrix): a
/// renewal counts from the clock the server reads at the call, forward
/// or back, and a hold its stepped clock has passed is gone.
#[test]
fn renewals_follow_the_servers_clock_when_it_steps() {
    let Some(server) = Server::with_clock("+0s", &[]) else {
        return;
    };
    let mut con = server.con();
    create(&mut con, "pool", 2, 2, 10);
    let (slot, first_end) = reserve(&mut con, "pool", "w", &[]);
    server.set_clock(5);
    let (before, until, after) = renewed_between(&mut con, "pool", slot, &[]);
    assert!(before + 10_000 <= until && until <= after + 10_000);
    assert!(until >= first_end + 4_000, "{until} vs {first_end}");
    server.set_clock(-3);
    let (before, until, after) = renewed_between(&mut con, "pool", slot, &["HOLD", "2"]);
    assert!(before + 2_000 <= until && until <= after + 2_000);
    // Past its end by the server's clock: gone, its slot free.
    server.set_clock(60);
    assert_eq!(renew(&mut con, "pool", slot, &[]), -3);
    assert!(reserve(&mut con, "pool", "v", &[]).0 > 0);
}

/// 30 workers share 5 slots of a pool (HOLD 2 s, renewed while they
/// work), all released together over and over: never more than 5 leases
/// live at once; a worker that dies holding a slot gives it back when its
/// lease ends, and the others then use all 5 again.
#[test]
fn a_pool_of_30_workers_never_holds_more_than_5_leases() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "pool", 5, 1, 2);
    // The dead worker: it took a slot and never renews or releases it.
    assert!(reserve(&mut con, "pool", "dead", &["ID", "dead-token"]).0 > 0);
    let mut crowd = crowd::Crowd::connect(&server, 30);
    let most_live = AtomicI64::new(0);
    let rounds: Vec<Vec<i64>> = crowd.run(|i, con| {
        let mut got = Vec::new();
        for round in 0..12 {
            let token = format!("w{i}:{round}");
            let (claim, _) = reserve(con, "pool", &format!("w{i}"), &["ID", &token]);
            if claim > 0 {
                let live = info(con, "pool")["held"];
                most_live.fetch_max(live, Ordering::Relaxed);
                assert!(renew(con, "pool", claim, &[]) > 0, "a live lease renews");
                std::thread::sleep(Duration::from_millis(50));
                assert_eq!(release(con, "pool", claim), 1);
                got.push(round);
            } else {
                assert_eq!(claim, -2, "the pool is full, never the worker");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        got
    });
    assert!(most_live.load(Ordering::Relaxed) <= 5);
    let served: usize = rounds.iter().map(Vec::len).sum();
    assert!(served > 0, "no worker ever got a slot");
    // After the dead worker's lease (2 s, the rounds took longer): 5 free.
    let held: Vec<i64> = (0..5)
        .map(|n| reserve(&mut con, "pool", &format!("late{n}"), &[]).0)
        .collect();
    assert!(held.iter().all(|&claim| claim > 0), "{held:?}");
    assert_eq!(reserve(&mut con, "pool", "one-too-many", &[]).0, -2);
}
