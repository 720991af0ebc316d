//! Every copy of a campaign converges exactly (claim numbers, users,
//! request ids, absolute expiries, totals: DEBUG DIGEST-VALUE): DEBUG
//! RELOAD, an AOF rewrite then kill -9 and restart, a replica that applies
//! the stream late, DUMP/RESTORE and MIGRATE to another server. And the
//! data type agrees with the pure model, call by call.

mod common;

use std::thread;
use std::time::Duration;

use common::campaign::*;
use common::rng::Rng;
use common::*;
use redis::{Connection, Value};
use redis_guard::campaign::effect::Settings;
use redis_guard::campaign::rules::{self, Reservation};
use redis_guard::campaign::store::{Campaign, ClaimState};

/// A campaign that has seen everything: held, confirmed, released,
/// expired (some reclaimed, one not), request ids, several users.
fn history(con: &mut Connection) {
    create(con, "sale", 50, 2, 600);
    for user in 0..20 {
        let id = format!("order-{user}");
        let hold = if user % 5 == 0 { "1" } else { "600" };
        reserve(
            con,
            "sale",
            &format!("user-{user}"),
            &["ID", &id, "HOLD", hold],
        );
    }
    for claim in [2, 3, 7] {
        confirm(con, "sale", claim);
    }
    release(con, "sale", 4);
    issue(con, "sale", "user-99", 50);
    thread::sleep(Duration::from_millis(1_100));
    // Writes after the expiry reclaim some expired holds, not all of them.
    reserve(con, "sale", "late", &[]);
    revoke(con, "sale", "user-8");
}

fn state(
    con: &mut Connection,
) -> (
    String,
    Vec<ClaimRow>,
    std::collections::HashMap<String, i64>,
) {
    (
        digest(con, "sale"),
        claims(con, "sale", &["COUNT", "1000"]),
        info(con, "sale"),
    )
}

#[test]
fn debug_reload_keeps_the_campaign() {
    let server = Server::start();
    let mut con = server.con();
    history(&mut con);
    let before = state(&mut con);
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut con).unwrap();
    assert_eq!(state(&mut con), before);
}

#[test]
fn an_aof_rewrite_then_a_crash_and_a_restart_keep_the_campaign() {
    for preamble in ["yes", "no"] {
        let mut server = Server::with_args(&["--aof-use-rdb-preamble", preamble]);
        let mut con = server.con();
        history(&mut con);
        let _: String = redis::cmd("BGREWRITEAOF").query(&mut con).unwrap();
        server.wait_until(
            |info| {
                info.contains("aof_rewrite_in_progress:0")
                    && info.contains("aof_rewrite_scheduled:0")
            },
            "rewrite",
        );
        // After the rewrite, more effects land in the new incremental file.
        reserve(&mut con, "sale", "after-rewrite", &["ID", "z"]);
        let before = state(&mut con);
        server.kill();
        server.restart();
        let mut con = server.con();
        assert_eq!(state(&mut con), before, "preamble {preamble}");
    }
}

#[test]
fn a_replica_that_applies_the_stream_late_ends_with_the_same_campaign() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();
    // Hold the replica back: it applies everything 1.5 s late, after the
    // short holds have expired by its own clock.
    let sleeper = replica.hold_back(1.5);
    create(&mut con, "sale", 5, 1, 600);
    let (short, _) = reserve(&mut con, "sale", "a", &["HOLD", "1"]);
    reserve(&mut con, "sale", "b", &["ID", "r"]);
    // Confirmed by the primary just in time: a replica that re-decided
    // with its own clock would find the hold expired.
    thread::sleep(Duration::from_millis(900));
    assert_eq!(confirm(&mut con, "sale", short), 1);
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(10_000)
        .query(&mut con)
        .unwrap();
    assert_eq!(acked, 1);
    sleeper.join().unwrap();
    let mut replica_con = replica.con();
    assert_eq!(digest(&mut replica_con, "sale"), digest(&mut con, "sale"));
    assert_eq!(
        claims(&mut replica_con, "sale", &[]),
        claims(&mut con, "sale", &[])
    );
    assert_eq!(claims(&mut con, "sale", &[])[0].state, "confirmed");
    // And later history too.
    thread::sleep(Duration::from_millis(200));
    let mut con = primary.con();
    history_tail(&mut con);
    let _: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(10_000)
        .query(&mut con)
        .unwrap();
    assert_eq!(digest(&mut replica.con(), "sale"), digest(&mut con, "sale"));
}

/// A failover to a replica whose clock is 5 s behind: a hold that expired
/// on the primary, not reclaimed there (a write reclaims 16 at most), is
/// live again on the promoted replica, so alice has two live claims under
/// PERUSER 1. Confirming one is fine; confirming the other answers -2 and
/// releases it, never an internal error (the harness audits both servers).
#[test]
fn a_promoted_replica_whose_clock_is_behind_answers_minus_2_for_a_hold_over_peruser() {
    let primary = Server::start();
    let port = primary.port.to_string();
    let Some(replica) = Server::with_clock("-5s", &["--replicaof", "127.0.0.1", &port]) else {
        return;
    };
    replica.wait_until(
        |info| info.contains("master_link_status:up"),
        "replication link up",
    );
    let mut con = primary.con();
    create(&mut con, "sale", 100, 1, 600);
    // 16 holds expire first: the write that follows reclaims those.
    for user in 0..16 {
        reserve(&mut con, "sale", &format!("filler-{user}"), &["HOLD", "1"]);
    }
    let (old, _) = reserve(&mut con, "sale", "alice", &["HOLD", "1"]);
    thread::sleep(Duration::from_millis(1_200));
    let (new, _) = reserve(&mut con, "sale", "alice", &[]);
    assert_eq!((old, new), (17, 18));
    assert_eq!(info(&mut con, "sale")["expired"], 17);
    let _: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut con).unwrap();

    let mut promoted = replica.con();
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut promoted)
        .unwrap();
    // Its clock is behind: claim 17's hold is live again.
    let live: Vec<(i64, String)> = claims(&mut promoted, "sale", &[])
        .into_iter()
        .map(|row| (row.claim, row.user))
        .collect();
    assert_eq!(live, [(17, "alice".to_string()), (18, "alice".to_string())]);
    assert_eq!(confirm(&mut promoted, "sale", 18), 1);
    assert_eq!(confirm(&mut promoted, "sale", 17), -2);
    let counts = info(&mut promoted, "sale");
    assert_eq!(
        [
            counts["confirmed"],
            counts["held"],
            counts["released"],
            counts["available"]
        ],
        [1, 0, 1, 99]
    );
    assert_eq!(info_field(&mut promoted, "guard_coupon_released"), 1);
    assert_eq!(confirm(&mut promoted, "sale", 17), -3);
}

fn history_tail(con: &mut Connection) {
    release(con, "sale", 2);
    issue(con, "sale", "c", 5);
    revoke(con, "sale", "a");
}

#[test]
fn dump_restore_and_migrate_carry_it_to_another_server() {
    let source = Server::start();
    let target = Server::start();
    let mut con = source.con();
    history(&mut con);
    let before = state(&mut con);
    let payload: Vec<u8> = redis::cmd("DUMP").arg("sale").query(&mut con).unwrap();
    let mut other = target.con();
    let _: () = redis::cmd("RESTORE")
        .arg("sale")
        .arg(0)
        .arg(payload)
        .query(&mut other)
        .unwrap();
    assert_eq!(state(&mut other), before);
    // MIGRATE moves it (as Cluster resharding does).
    let _: () = redis::cmd("DEL").arg("sale").query(&mut other).unwrap();
    let _: Value = redis::cmd("MIGRATE")
        .arg("127.0.0.1")
        .arg(target.port)
        .arg("sale")
        .arg(0)
        .arg(5_000)
        .query(&mut con)
        .unwrap();
    let exists: i64 = redis::cmd("EXISTS").arg("sale").query(&mut con).unwrap();
    assert_eq!(exists, 0);
    assert_eq!(state(&mut other), before);
    // A corrupt payload is refused, and the server lives on.
    let mut payload: Vec<u8> = redis::cmd("DUMP").arg("sale").query(&mut other).unwrap();
    let middle = payload.len() / 2;
    payload[middle] ^= 0xff;
    let refused = redis::cmd("RESTORE")
        .arg("bad")
        .arg(0)
        .arg(payload)
        .query::<Value>(&mut other);
    assert!(refused.is_err());
    let pong: String = redis::cmd("PING").query(&mut other).unwrap();
    assert_eq!(pong, "PONG");
}

/// The same random calls to the server and to the pure model: every reply
/// and the final claims agree. Holds are long (nothing expires by
/// accident) except a batch of 1 s holds made before a pause, so expiry
/// is exercised without a race against the clock.
#[test]
fn the_data_type_agrees_with_the_pure_model() {
    let server = Server::start();
    let mut con = server.con();
    let mut rng = Rng(0xc1a1_35ed_0000_0001);
    let settings = Settings {
        limit: 12,
        per_user: 2,
        hold_s: 3_600,
    };
    create(
        &mut con,
        "sale",
        settings.limit,
        settings.per_user,
        settings.hold_s,
    );
    let mut model = Campaign::new(settings);
    let users = ["ann", "bob", "cy", "dee", "eve", "fay", "gus"];
    let ids = ["r1", "r2", "r3", "r4"];
    for step in 0..1_500 {
        if step == 500 {
            // Short holds, then the pause that expires them on both sides.
            for user in &users[..4] {
                let (claim, expires_at) = reserve(&mut con, "sale", user, &["HOLD", "1"]);
                let plan =
                    rules::reserve(&model, user.as_bytes(), None, expires_at, now_ms()).unwrap();
                assert_eq!(claim, plan.outcome.reply()[0], "short hold for {user}");
                for effect in &plan.effects {
                    model.apply(effect).unwrap();
                }
            }
            thread::sleep(Duration::from_millis(1_100));
        }
        let now = now_ms();
        let user = *rng.pick(&users);
        let what = format!("step {step}");
        match rng.below(6) {
            0 | 1 => {
                let id = rng.chance(2).then(|| *rng.pick(&ids));
                let options: Vec<&str> = id.map(|id| vec!["ID", id]).unwrap_or_default();
                let reply = redis::cmd("COUPON.RESERVE")
                    .arg("sale")
                    .arg(user)
                    .arg(&options)
                    .query::<(i64, i64)>(&mut con);
                match rules::reserve(&model, user.as_bytes(), id.map(str::as_bytes), 0, now) {
                    Err(_) => assert!(reply.is_err(), "{what}: the model refused the id"),
                    Ok(plan) => {
                        let (claim, expires_at) = reply.unwrap_or_else(|e| panic!("{what}: {e}"));
                        let [number, expires] = plan.outcome.reply();
                        let expected = match plan.outcome {
                            // The server chose the expiry of a new hold.
                            Reservation::New { .. } => (number, None),
                            _ => (number, Some(expires)),
                        };
                        assert_eq!(claim, expected.0, "{what}: claim");
                        if let Some(expires) = expected.1 {
                            assert_eq!(expires_at, expires, "{what}: expiry");
                        }
                        // The server chose the expiry; the model takes it.
                        let plan = rules::reserve(
                            &model,
                            user.as_bytes(),
                            id.map(str::as_bytes),
                            expires_at,
                            now,
                        )
                        .unwrap();
                        for effect in &plan.effects {
                            model.apply(effect).unwrap();
                        }
                    }
                }
            }
            2 => {
                let claim = 1 + rng.below(model.info(now).claims as usize + 2) as i64;
                let plan = rules::confirm(&model, claim as u64, now);
                assert_eq!(
                    confirm(&mut con, "sale", claim),
                    plan.outcome.reply(),
                    "{what}: confirm {claim}"
                );
                plan.effects.iter().for_each(|e| model.apply(e).unwrap());
            }
            3 => {
                let claim = 1 + rng.below(model.info(now).claims as usize + 2) as i64;
                let plan = rules::release(&model, claim as u64, now);
                assert_eq!(
                    release(&mut con, "sale", claim),
                    plan.outcome.reply(),
                    "{what}: release {claim}"
                );
                plan.effects.iter().for_each(|e| model.apply(e).unwrap());
            }
            4 => {
                let plan = rules::issue(&model, user.as_bytes(), settings.limit, now).unwrap();
                assert_eq!(
                    issue(&mut con, "sale", user, settings.limit),
                    plan.outcome.reply(),
                    "{what}: issue"
                );
                plan.effects.iter().for_each(|e| model.apply(e).unwrap());
            }
            _ => {
                let plan = rules::revoke(&model, user.as_bytes(), now);
                assert_eq!(
                    revoke(&mut con, "sale", user),
                    plan.outcome.released as i64,
                    "{what}: revoke"
                );
                plan.effects.iter().for_each(|e| model.apply(e).unwrap());
            }
        }
        if step % 100 == 99 {
            compare(&mut con, &model, now_ms(), &what);
        }
    }
    compare(&mut con, &model, now_ms(), "the end");
}

fn compare(con: &mut Connection, model: &Campaign, now: i64, what: &str) {
    let expected: Vec<ClaimRow> = model
        .claims(1, 1_000, now)
        .iter()
        .map(|view| ClaimRow {
            claim: view.claim as i64,
            user: String::from_utf8_lossy(view.user).into_owned(),
            state: match view.state {
                ClaimState::Held { .. } => "held".into(),
                ClaimState::Confirmed => "confirmed".into(),
            },
            expires_at_ms: view.state.expires_at_ms(),
            request_id: view
                .request_id
                .map(|id| String::from_utf8_lossy(id).into_owned()),
        })
        .collect();
    assert_eq!(
        claims(con, "sale", &["COUNT", "1000"]),
        expected,
        "{what}: claims"
    );
    let info = model.info(now);
    let got = common::campaign::info(con, "sale");
    let fields = [
        ("confirmed", info.confirmed),
        ("held", info.held),
        ("available", info.available),
        ("claims", info.claims),
        ("expired", info.expired),
        ("released", info.released),
    ];
    for (name, value) in fields {
        assert_eq!(got[name], value, "{what}: INFO {name}");
    }
}
