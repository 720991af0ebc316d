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

/// A campaign that has seen everything: held, confirmed, released,
/// expired (some reclaimed, one not), request ids, several users, claims
/// of several units and one confirmed with fewer.
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
    // Units: a hold of 2, a hold of 2 confirmed with 1, a refused 3.
    reserve(con, "sale", "pair", &["QTY", "2", "ID", "pair-1"]);
    let (kept, _) = reserve(con, "sale", "kept", &["QTY", "2"]);
    let _: i64 = redis::cmd("COUPON.CONFIRM")
        .arg("sale")
        .arg(kept)
        .arg(&["QTY", "1"])
        .query(con)
        .unwrap();
    assert_eq!(reserve(con, "sale", "many", &["QTY", "3"]), (-1, 0));
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
    replica_caught_up(&mut con);
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

/// A campaign worked out here from SPEC, not from the module's rules:
/// every claim ever made with its user, request id, units and state. A
/// hold is live until `now > expires_at`; from then on it is expired for
/// good. `limit` and PERUSER count units.
struct CampaignModel {
    limit: i64,
    per_user: i64,
    claims: Vec<ModelClaim>,
}

struct ModelClaim {
    user: String,
    id: Option<String>,
    units: i64,
    state: ModelState,
}

#[derive(Clone, Copy, PartialEq)]
enum ModelState {
    Held(i64),
    Confirmed,
    Released,
}

impl CampaignModel {
    fn is_live(claim: &ModelClaim, now: i64) -> bool {
        match claim.state {
            ModelState::Held(at) => now <= at,
            ModelState::Confirmed => true,
            ModelState::Released => false,
        }
    }

    /// (number, claim) of every live claim, in order.
    fn live(&self, now: i64) -> impl Iterator<Item = (i64, &ModelClaim)> {
        (1..)
            .zip(&self.claims)
            .filter(move |(_, c)| Self::is_live(c, now))
    }

    /// Live units of `user`, or of everyone.
    fn live_units(&self, user: Option<&str>, now: i64) -> i64 {
        self.live(now)
            .filter(|(_, c)| user.is_none_or(|user| c.user == user))
            .map(|(_, c)| c.units)
            .sum()
    }

    fn live_claim(&mut self, number: i64, now: i64) -> Option<&mut ModelClaim> {
        let claim = self.claims.get_mut(usize::try_from(number - 1).ok()?)?;
        Self::is_live(claim, now).then_some(claim)
    }

    /// RESERVE of `units`: `Err` for an id another user's live claim
    /// holds, or this user's hold of other units; else the reply, and a
    /// new claim held until `expires_at` (the server's).
    fn reserve(
        &mut self,
        user: &str,
        id: Option<&str>,
        units: i64,
        now: i64,
        expires_at: i64,
    ) -> Result<(i64, i64), ()> {
        let owner = self
            .live(now)
            .find(|(_, c)| id.is_some() && c.id.as_deref() == id);
        if let Some((number, claim)) = owner {
            return match claim.state {
                _ if claim.user != user => Err(()),
                ModelState::Held(_) if claim.units != units => Err(()),
                ModelState::Held(at) => Ok((number, at)),
                _ => Ok((number, -1)),
            };
        }
        self.take_place(user, id, units, ModelState::Held(expires_at), now)
            .map(|number| Ok((number, expires_at)))
            .unwrap_or_else(|refused| Ok((refused, 0)))
    }

    /// A new claim in `state`, or -1 (the user's places are taken, judged
    /// first) or -2 (the campaign's are).
    fn take_place(
        &mut self,
        user: &str,
        id: Option<&str>,
        units: i64,
        state: ModelState,
        now: i64,
    ) -> Result<i64, i64> {
        if self.live_units(Some(user), now) + units > self.per_user {
            return Err(-1);
        }
        if self.live_units(None, now) + units > self.limit {
            return Err(-2);
        }
        self.claims.push(ModelClaim {
            user: user.to_string(),
            id: id.map(str::to_string),
            units,
            state,
        });
        Ok(self.claims.len() as i64)
    }

    /// CONFIRM keeping `units` (all when `None`): `Err` for more than the
    /// hold has. (No clock goes back here: a confirm always fits.)
    fn confirm(&mut self, number: i64, units: Option<i64>, now: i64) -> Result<i64, ()> {
        match self.live_claim(number, now) {
            Some(claim) if claim.state == ModelState::Confirmed => Ok(0),
            Some(claim) if units.is_some_and(|units| units > claim.units) => Err(()),
            Some(claim) => {
                claim.state = ModelState::Confirmed;
                claim.units = units.unwrap_or(claim.units);
                Ok(1)
            }
            None => Ok(-3),
        }
    }

    /// RENEW to `until` (the server's answer): 0 for a confirmed claim,
    /// -3 for none live.
    fn renew(&mut self, number: i64, now: i64, until: i64) -> i64 {
        match self.live_claim(number, now) {
            Some(claim) if claim.state == ModelState::Confirmed => 0,
            Some(claim) => {
                claim.state = ModelState::Held(until);
                until
            }
            None => -3,
        }
    }

    fn release(&mut self, number: i64, now: i64) -> i64 {
        match self.live_claim(number, now) {
            Some(claim) => {
                claim.state = ModelState::Released;
                1
            }
            None => 0,
        }
    }

    fn issue(&mut self, user: &str, now: i64) -> i64 {
        self.take_place(user, None, 1, ModelState::Confirmed, now)
            .unwrap_or_else(|refused| refused)
    }

    fn revoke(&mut self, user: &str, now: i64) -> i64 {
        let mut released = 0;
        for claim in &mut self.claims {
            if claim.user == user && Self::is_live(claim, now) {
                claim.state = ModelState::Released;
                released += 1;
            }
        }
        released
    }

    /// COUPON.CLAIMS, and COUPON.INFO's counts.
    fn rows(&self, now: i64) -> Vec<ClaimRow> {
        self.live(now)
            .map(|(number, c)| ClaimRow {
                claim: number,
                user: c.user.clone(),
                state: match c.state {
                    ModelState::Confirmed => "confirmed".into(),
                    _ => "held".into(),
                },
                expires_at_ms: match c.state {
                    ModelState::Held(at) => at,
                    _ => -1,
                },
                request_id: c.id.clone(),
                units: c.units,
            })
            .collect()
    }

    fn info(&self, now: i64) -> [(&'static str, i64); 8] {
        let count =
            |f: &dyn Fn(&ModelClaim) -> bool| self.claims.iter().filter(|c| f(c)).count() as i64;
        let confirmed = count(&|c| c.state == ModelState::Confirmed);
        let held = count(&|c| matches!(c.state, ModelState::Held(at) if now <= at));
        let expired = count(&|c| matches!(c.state, ModelState::Held(at) if now > at));
        let released = count(&|c| c.state == ModelState::Released);
        let live_units = self.live_units(None, now);
        let confirmed_units: i64 = self
            .claims
            .iter()
            .filter(|c| c.state == ModelState::Confirmed)
            .map(|c| c.units)
            .sum();
        [
            ("confirmed", confirmed),
            ("held", held),
            ("available", (self.limit - live_units).max(0)),
            ("claims", self.claims.len() as i64),
            ("expired", expired),
            ("released", released),
            ("held_units", live_units - confirmed_units),
            ("confirmed_units", confirmed_units),
        ]
    }
}

/// The same random calls to the server and to the model: every reply and
/// the claims and counts agree, with units (QTY 1 to 4 against PERUSER 5),
/// partial confirms and renews. Holds are long (nothing expires by
/// accident) except a batch of 1 s holds made before a pause, so expiry
/// is exercised without a race against the clock.
#[test]
fn the_data_type_agrees_with_a_model_of_spec() {
    let server = Server::start();
    let mut con = server.con();
    let mut rng = Rng(0xc1a1_35ed_0000_0001);
    let (limit, per_user) = (20, 5);
    create(&mut con, "sale", limit, per_user, 3_600);
    let mut model = CampaignModel {
        limit,
        per_user,
        claims: Vec::new(),
    };
    let users = ["ann", "bob", "cy", "dee", "eve", "fay", "gus"];
    let ids = ["r1", "r2", "r3", "r4"];
    for step in 0..1_500 {
        if step == 500 {
            // Short holds, then the pause that expires them on both sides.
            for user in &users[..4] {
                let reply = reserve(&mut con, "sale", user, &["HOLD", "1"]);
                let expected = model.reserve(user, None, 1, now_ms(), reply.1);
                assert_eq!(Ok(reply), expected, "short hold for {user}");
            }
            thread::sleep(Duration::from_millis(1_100));
        }
        let now = now_ms();
        let user = *rng.pick(&users);
        let what = format!("step {step}");
        let claim = 1 + rng.below(model.claims.len() + 2) as i64;
        let units = rng.chance(2).then(|| 1 + rng.below(4) as i64);
        let qty: Vec<String> = units
            .map(|n| vec!["QTY".into(), n.to_string()])
            .unwrap_or_default();
        match rng.below(7) {
            0 | 1 => {
                let id = rng.chance(2).then(|| *rng.pick(&ids));
                let options: Vec<&str> = id.map(|id| vec!["ID", id]).unwrap_or_default();
                let reply = redis::cmd("COUPON.RESERVE")
                    .arg("sale")
                    .arg(user)
                    .arg(&options)
                    .arg(&qty)
                    .query::<(i64, i64)>(&mut con)
                    .map_err(drop);
                // A new hold's expiry is the server's to choose.
                let expires_at = reply.map_or(0, |(_, at)| at);
                assert_eq!(
                    reply,
                    model.reserve(user, id, units.unwrap_or(1), now, expires_at),
                    "{what}: reserve {qty:?}"
                );
            }
            2 => assert_eq!(
                redis::cmd("COUPON.CONFIRM")
                    .arg("sale")
                    .arg(claim)
                    .arg(&qty)
                    .query::<i64>(&mut con)
                    .map_err(drop),
                model.confirm(claim, units, now),
                "{what}: confirm {claim} {qty:?}"
            ),
            6 => {
                let reply: i64 = redis::cmd("COUPON.RENEW")
                    .arg("sale")
                    .arg(claim)
                    .arg(&["HOLD", "3600"])
                    .query(&mut con)
                    .unwrap();
                assert_eq!(reply, model.renew(claim, now, reply), "{what}: renew");
            }
            3 => assert_eq!(
                release(&mut con, "sale", claim),
                model.release(claim, now),
                "{what}: release {claim}"
            ),
            4 => assert_eq!(
                issue(&mut con, "sale", user, limit),
                model.issue(user, now),
                "{what}: issue"
            ),
            _ => assert_eq!(
                revoke(&mut con, "sale", user),
                model.revoke(user, now),
                "{what}: revoke"
            ),
        }
        if step % 100 == 99 {
            compare(&mut con, &model, now_ms(), &what);
        }
    }
    compare(&mut con, &model, now_ms(), "the end");
}

fn compare(con: &mut Connection, model: &CampaignModel, now: i64, what: &str) {
    assert_eq!(
        claims(con, "sale", &["COUNT", "1000"]),
        model.rows(now),
        "{what}: claims"
    );
    let got = common::campaign::info(con, "sale");
    for (name, value) in model.info(now) {
        assert_eq!(got[name], value, "{what}: INFO {name}");
    }
}
