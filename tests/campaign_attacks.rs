//! Campaigns attacked, not only used: crafted RESTORE payloads for every
//! invariant a load must check (and valid crafted ones, so the crafting is
//! proven), values copied on the main thread and freed on the lazyfree
//! thread, CREATE at the HOLD limit replayed by a replica and an AOF load
//! with a later clock, claim numbers run out, and one user with many
//! claims, where work per call must stay bounded.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::campaign::*;
use common::payload::{dump, restore, Payload};
use common::*;
use redis::{Connection, Value};

/// A campaign made by commands: limit 10, PERUSER 2, HOLD 600; claim 1
/// held by "alice" with request id "order-a", claim 2 confirmed for "bob",
/// claim 3 released.
/// A campaign's items (encoding 3): settings, totals and the stored count,
/// then per claim `[number, user, expires_at_ms or -1, request id, units]`.
trait CampaignPayload {
    fn claim(self, number: i64, user: &str, expires_at_ms: i64, id: Option<&str>) -> Self;
    fn claim_of(
        self,
        number: i64,
        user: &str,
        expires_at_ms: i64,
        id: Option<&str>,
        units: i64,
    ) -> Self;
    fn head(self, settings: [i64; 3], totals: [i64; 3], stored: i64) -> Self;
    /// Encoding 2's ledger, then the end: none.
    fn no_ledger(self) -> Vec<u8>;
    /// The ledger `[1, stream, maxlen or 0]`, then the end.
    fn ledger(self, flag: i64, stream: &str, maxlen: i64) -> Vec<u8>;
}

impl CampaignPayload for Payload {
    /// A claim of 1 unit.
    fn claim(self, number: i64, user: &str, expires_at_ms: i64, id: Option<&str>) -> Payload {
        self.claim_of(number, user, expires_at_ms, id, 1)
    }

    /// `[number, user, expires_at_ms or -1, request id, units]`
    fn claim_of(
        self,
        number: i64,
        user: &str,
        expires_at_ms: i64,
        id: Option<&str>,
        units: i64,
    ) -> Payload {
        let claim = self.int(number).text(user).int(expires_at_ms);
        let claim = match id {
            Some(id) => claim.int(1).text(id),
            None => claim.int(0),
        };
        claim.int(units)
    }

    /// Settings, then totals and the stored count.
    fn head(self, settings: [i64; 3], totals: [i64; 3], stored: i64) -> Payload {
        let [limit, per_user, hold] = settings;
        let [made, released, expired] = totals;
        self.int(limit)
            .int(per_user)
            .int(hold)
            .int(made)
            .int(released)
            .int(expired)
            .int(stored)
    }

    fn no_ledger(self) -> Vec<u8> {
        self.int(0).finish()
    }

    fn ledger(self, flag: i64, stream: &str, maxlen: i64) -> Vec<u8> {
        self.int(flag).text(stream).int(maxlen).finish()
    }
}

fn made_by_commands(con: &mut Connection) -> i64 {
    create(con, "real", 10, 2, 600);
    let (_, expires) = reserve(con, "real", "alice", &["ID", "order-a"]);
    reserve(con, "real", "bob", &[]);
    confirm(con, "real", 2);
    reserve(con, "real", "carol", &[]);
    release(con, "real", 3);
    expires
}

#[test]
fn a_crafted_payload_equal_to_dump_is_accepted() {
    let server = Server::start();
    let mut con = server.con();
    let expires = made_by_commands(&mut con);
    let real = dump(&mut con, "real");
    let crafted = Payload::like(&real)
        .head([10, 2, 600], [3, 1, 0], 2)
        .claim(1, "alice", expires, Some("order-a"))
        .claim(2, "bob", -1, None)
        .no_ledger();
    assert_eq!(crafted, real, "the crafting writes what Redis writes");
    restore(&mut con, "copy", &crafted).unwrap();
    assert_eq!(digest(&mut con, "copy"), digest(&mut con, "real"));
    // With a ledger (encoding 2's part): the same bytes as DUMP's.
    let _: () = redis::cmd("COUPON.CREATE")
        .arg(&[
            "ledgered", "10", "PERUSER", "2", "LEDGER", "orders", "MAXLEN", "99",
        ])
        .query(&mut con)
        .unwrap();
    let crafted = Payload::like(&real)
        .head([10, 2, 600], [0, 0, 0], 0)
        .ledger(1, "orders", 99);
    assert_eq!(crafted, dump(&mut con, "ledgered"));
}

/// A loaded value may hold more live claims than `limit` or `PERUSER`
/// allow (load judges no hold against a clock): here limit 1 with claim 1
/// confirmed and claim 2 a live hold; PERUSER 1 with both claims alice's.
/// Confirming the hold answers -2 and releases it in the same step
/// (counted and signalled as a release, propagated), never an internal
/// error; COUPON.INFO's `available` never shows less than 0.
#[test]
fn confirming_a_hold_over_the_limits_answers_minus_2_and_releases_it() {
    let server = Server::start();
    let replica = Server::replica_of(&server);
    let mut con = server.con();
    create(&mut con, "real", 1, 1, 600);
    let real = dump(&mut con, "real");
    let later = now_ms() + 600_000;
    for (key, settings, second_user) in [
        ("over-limit", [1, 1, 600], "bob"),
        ("over-peruser", [5, 1, 600], "alice"),
    ] {
        let payload = Payload::like(&real)
            .head(settings, [2, 0, 0], 2)
            .claim(1, "alice", -1, None)
            .claim(2, second_user, later, None)
            .no_ledger();
        restore(&mut con, key, &payload).unwrap();
        let available = |con: &mut Connection| info(con, key)["available"];
        // limit 1: 1 - 1 confirmed - 1 held is -1, shown as 0.
        let expected_available = if key == "over-limit" { 0 } else { 3 };
        assert_eq!(available(&mut con), expected_available, "{key}");
        let released = info_field(&mut con, "guard_coupon_released");
        let events = events_of(&server, |c| assert_eq!(confirm(c, key, 2), -2, "{key}"));
        assert_eq!(events, pairs(&[("coupon.released", key)]), "{key}");
        assert_eq!(info_field(&mut con, "guard_coupon_released"), released + 1);
        let counts = info(&mut con, key);
        assert_eq!(
            [
                counts["confirmed"],
                counts["held"],
                counts["released"],
                counts["claims"]
            ],
            [1, 0, 1, 2],
            "{key}"
        );
        assert_eq!(available(&mut con), settings[0] - 1, "{key}");
        let live: Vec<i64> = claims(&mut con, key, &[]).iter().map(|c| c.claim).collect();
        assert_eq!(live, [1], "{key}");
        // The release is done: the claim is gone for every command.
        assert_eq!(confirm(&mut con, key, 2), -3, "{key}");
    }
    assert_eq!(info_field(&mut con, "guard_coupon_confirmed"), 0);
    // The replica applied the release: the same values.
    let _: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut con).unwrap();
    let mut on_replica = replica.con();
    for key in ["over-limit", "over-peruser"] {
        assert_eq!(digest(&mut on_replica, key), digest(&mut con, key), "{key}");
    }
}

#[test]
fn every_payload_that_breaks_an_invariant_is_refused_and_changes_nothing() {
    let server = Server::start();
    let mut con = server.con();
    let expires = made_by_commands(&mut con);
    let real = dump(&mut con, "real");
    let base = || Payload::like(&real);
    let held = expires;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "claims made i64::MAX, totals off",
            base()
                .head([10, 2, 600], [i64::MAX, 1, 0], 1)
                .claim(1, "a", held, None)
                .no_ledger(),
        ),
        (
            "limit 1 with 3 confirmed claims",
            base()
                .head([1, 1, 600], [3, 0, 0], 3)
                .claim(1, "a", -1, None)
                .claim(2, "b", -1, None)
                .claim(3, "c", -1, None)
                .no_ledger(),
        ),
        (
            "claims 1000 and no claims",
            base().head([10, 1, 600], [1000, 0, 0], 0).no_ledger(),
        ),
        (
            "a confirmed claim's request id on another claim",
            base()
                .head([10, 1, 600], [2, 0, 0], 2)
                .claim(1, "a", -1, Some("paid"))
                .claim(2, "b", held, Some("paid"))
                .no_ledger(),
        ),
        (
            "a request-id flag with empty bytes",
            base()
                .head([10, 1, 600], [1, 0, 0], 1)
                .claim(1, "a", held, Some(""))
                .no_ledger(),
        ),
        (
            "hold i64::MAX",
            base().head([10, 1, i64::MAX], [0, 0, 0], 0).no_ledger(),
        ),
        (
            "two confirmed claims of one user, PERUSER 1",
            base()
                .head([10, 1, 600], [2, 0, 0], 2)
                .claim(1, "a", -1, None)
                .claim(2, "a", -1, None)
                .no_ledger(),
        ),
        (
            "a claim number stored twice",
            base()
                .head([10, 5, 600], [2, 0, 0], 2)
                .claim(2, "a", held, None)
                .claim(2, "b", held, None)
                .no_ledger(),
        ),
        (
            "an empty user",
            base()
                .head([10, 1, 600], [1, 0, 0], 1)
                .claim(1, "", held, None)
                .no_ledger(),
        ),
        (
            "a stored count of i64::MAX with nothing after it",
            base()
                .head([10, 1, 600], [i64::MAX, 0, 0], i64::MAX)
                .no_ledger(),
        ),
        (
            "negative released",
            base().head([10, 1, 600], [0, -1, 1], 0).no_ledger(),
        ),
        (
            "a ledger flag other than 0 or 1",
            base()
                .head([10, 1, 600], [0, 0, 0], 0)
                .ledger(2, "orders", 0),
        ),
        (
            "an empty ledger stream",
            base().head([10, 1, 600], [0, 0, 0], 0).ledger(1, "", 0),
        ),
        (
            "a negative ledger MAXLEN",
            base()
                .head([10, 1, 600], [0, 0, 0], 0)
                .ledger(1, "orders", -5),
        ),
        (
            "a claim of 0 units",
            base()
                .head([10, 1, 600], [1, 0, 0], 1)
                .claim_of(1, "a", held, None, 0)
                .no_ledger(),
        ),
        (
            "a claim of -4 units",
            base()
                .head([10, 1, 600], [1, 0, 0], 1)
                .claim_of(1, "a", held, None, -4)
                .no_ledger(),
        ),
        (
            "11 confirmed units, limit 10",
            base()
                .head([10, 20, 600], [2, 0, 0], 2)
                .claim_of(1, "a", -1, None, 6)
                .claim_of(2, "b", -1, None, 5)
                .no_ledger(),
        ),
        (
            "3 confirmed units of one user, PERUSER 2",
            base()
                .head([10, 2, 600], [2, 0, 0], 2)
                .claim_of(1, "a", -1, None, 1)
                .claim_of(2, "a", -1, None, 2)
                .no_ledger(),
        ),
        (
            "units missing at the end",
            base()
                .head([10, 1, 600], [1, 0, 0], 1)
                .int(1)
                .text("a")
                .int(held)
                .int(0)
                .finish(),
        ),
    ];
    let before = digest(&mut con, "real");
    for (what, payload) in &cases {
        for key in ["fresh", "real"] {
            let error = restore(&mut con, key, payload).expect_err(what);
            assert!(
                error.to_string().contains("Bad data format"),
                "{what}: {error}"
            );
        }
        let exists: i64 = redis::cmd("EXISTS").arg("fresh").query(&mut con).unwrap();
        assert_eq!(exists, 0, "{what}: a key was made");
        assert_eq!(digest(&mut con, "real"), before, "{what}: the key changed");
    }
    // The same with units that fit load, and say what they hold: holds
    // are not judged against the limit at load, confirmed units are.
    let fits = base()
        .head([10, 2, 600], [3, 0, 0], 3)
        .claim_of(1, "a", -1, None, 2)
        .claim_of(2, "b", held, None, i64::MAX)
        .claim_of(3, "c", -1, None, 2)
        .no_ledger();
    restore(&mut con, "fits", &fits).unwrap();
    let counts = info(&mut con, "fits");
    assert_eq!(
        [
            counts["confirmed_units"],
            counts["held_units"],
            counts["available"]
        ],
        [4, i64::MAX, 0]
    );
    assert_eq!(reserve(&mut con, "fits", "d", &[]), (-2, 0));
    // The server and everything it holds still save and load.
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut con).unwrap();
    assert_eq!(digest(&mut con, "real"), before);
    assert_eq!(info(&mut con, "fits"), counts);
}

#[test]
fn claim_numbers_end_at_the_last_one_with_an_error_and_stay_loadable() {
    let server = Server::start();
    let mut con = server.con();
    made_by_commands(&mut con);
    let real = dump(&mut con, "real");
    let almost = i64::MAX - 1;
    let payload = Payload::like(&real)
        .head([10, 2, 600], [almost, almost, 0], 0)
        .no_ledger();
    restore(&mut con, "sale", &payload).unwrap();
    let (last, _) = reserve(&mut con, "sale", "a", &["ID", "r"]);
    assert_eq!(last, i64::MAX);
    for call in [
        &["COUPON.RESERVE", "sale", "b"][..],
        &["COUPON.ISSUE", "sale", "b", "10"],
    ] {
        let error = redis::cmd(call[0])
            .arg(&call[1..])
            .query::<Value>(&mut con)
            .unwrap_err();
        assert!(
            error.to_string().contains("used every claim number"),
            "{error}"
        );
    }
    // A repeated request id and -1 answer as usual.
    assert_eq!(reserve(&mut con, "sale", "a", &["ID", "r"]).0, i64::MAX);
    assert_eq!(info(&mut con, "sale")["claims"], i64::MAX);
    let before = digest(&mut con, "sale");
    let saved = dump(&mut con, "sale");
    restore(&mut con, "again", &saved).unwrap();
    assert_eq!(digest(&mut con, "again"), before);
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut con).unwrap();
    assert_eq!(digest(&mut con, "sale"), before);
}

/// A campaign of `claims` held claims, one per user, each user allowed 2.
fn big_campaign(con: &mut Connection, key: &str, claims: usize) {
    create(con, key, 1_000_000, 2, 600);
    let mut pipe = redis::pipe();
    for n in 0..claims {
        pipe.cmd("COUPON.RESERVE")
            .arg(key)
            .arg(format!("user-{n}"))
            .arg("ID")
            .arg(format!("order-{n}"))
            .ignore();
    }
    let _: () = pipe.query(con).unwrap();
}

#[test]
fn a_big_campaign_is_freed_on_the_lazyfree_thread() {
    let server = Server::with_args(&["--lazyfree-lazy-user-del", "yes"]);
    let mut con = server.con();
    // Compact storage frees a claim in a share of a block, not in its own
    // allocations: 20,000 claims (about 250 buffers) are worth the trip.
    big_campaign(&mut con, "big", 20_000);
    let freed = info_field(&mut con, "lazyfreed_objects");
    let _: i64 = redis::cmd("DEL").arg("big").query(&mut con).unwrap();
    wait_for(
        || info_field(&mut con, "lazyfreed_objects") == freed + 1,
        Duration::from_secs(5),
        "the campaign freed in the background (its free effort is above 64)",
    );
    // A small one is not worth a trip to the other thread.
    create(&mut con, "small", 5, 1, 600);
    let _: i64 = redis::cmd("DEL").arg("small").query(&mut con).unwrap();
    thread::sleep(Duration::from_millis(100));
    assert_eq!(info_field(&mut con, "lazyfreed_objects"), freed + 1);
}

fn select(server: &Server, db: i64) -> Connection {
    let mut con = server.con();
    let _: () = redis::cmd("SELECT").arg(db).query(&mut con).unwrap();
    con
}

/// A value copied on the main thread is written there while its source is
/// freed on the lazyfree thread: the copies are in db 1, written with the
/// source's own users (whose bytes a shared buffer would hand between the
/// values), while db 0 is flushed asynchronously. `make valgrind` runs
/// this under helgrind, which reports any access the two threads share.
#[test]
fn copies_written_while_their_source_is_freed_on_the_lazyfree_thread() {
    let server = Server::with_args(&[
        "--lazyfree-lazy-user-flush",
        "yes",
        "--lazyfree-lazy-user-del",
        "yes",
        "--appendonly",
        "no",
    ]);
    let mut con = server.con();
    let freed = info_field(&mut con, "lazyfreed_objects");
    // Fewer under a race detector (`make valgrind`), which is ~100x slower.
    let rounds: i64 = std::env::var("GUARD_LAZYFREE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    const COPIES: usize = 3;
    const USERS: usize = 300;
    // Enough claims for a free effort above 64 (compact storage keeps 256
    // to 512 claims a buffer); the writers add a claim for the first USERS.
    const CLAIMS: usize = 10_000;
    for round in 0..rounds {
        big_campaign(&mut con, "src", CLAIMS);
        for n in 0..COPIES {
            let copied: i64 = redis::cmd("COPY")
                .arg("src")
                .arg(format!("copy-{n}"))
                .arg("DB")
                .arg(1)
                .query(&mut con)
                .unwrap();
            assert_eq!(copied, 1);
        }
        let _: i64 = redis::cmd("COPY")
            .arg("src")
            .arg("local")
            .query(&mut con)
            .unwrap();
        let writers: Vec<_> = (0..COPIES)
            .map(|n| {
                let mut con = select(&server, 1);
                thread::spawn(move || {
                    for user in 0..USERS {
                        let (claim, _) =
                            reserve(&mut con, &format!("copy-{n}"), &format!("user-{user}"), &[]);
                        assert!(claim > CLAIMS as i64, "a second claim of an existing user");
                    }
                })
            })
            .collect();
        let _: i64 = redis::cmd("UNLINK").arg("local").query(&mut con).unwrap();
        let _: () = redis::cmd("FLUSHDB").arg("ASYNC").query(&mut con).unwrap();
        for writer in writers {
            writer.join().unwrap();
        }
        let mut db1 = select(&server, 1);
        for n in 0..COPIES {
            let copy = info(&mut db1, &format!("copy-{n}"));
            assert_eq!(
                copy["held"],
                (CLAIMS + USERS) as i64,
                "round {round}, copy {n}"
            );
        }
        let _: () = redis::cmd("FLUSHDB").arg("ASYNC").query(&mut db1).unwrap();
    }
    // Each round: the local copy, then two flushes of 1 + 3 values.
    wait_for(
        || info_field(&mut con, "lazyfreed_objects") >= freed + 5 * rounds,
        Duration::from_secs(30),
        "the values freed in the background",
    );
}

/// The largest HOLD the server accepts now, plus `margin_ms` to spare:
/// a clock that is later by more than that would refuse it.
fn hold_at_the_limit(margin_ms: i64) -> i64 {
    (i64::MAX - now_ms() - margin_ms) / 1000
}

#[test]
fn create_at_the_hold_limit_reaches_a_later_replica_and_aof_load() {
    let mut primary = Server::start();
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();
    // The replica applies the stream 2 s late: with its clock, a CREATE
    // re-judged there would find the HOLD too large.
    let sleeper = replica.hold_back(2.0);
    create(&mut con, "sale", 5, 1, hold_at_the_limit(500));
    let (claim, _) = reserve(&mut con, "sale", "a", &[]);
    assert_eq!(claim, 1);
    sleeper.join().unwrap();
    let offset = info_field(&mut con, "master_repl_offset");
    replica.wait_until(
        |info| info.contains(&format!("slave_repl_offset:{offset}")),
        "replica caught up",
    );
    let mut replica_con = replica.con();
    assert_eq!(digest(&mut replica_con, "sale"), digest(&mut con, "sale"));
    // The AOF, loaded later still, and its rewrite.
    let expected = digest(&mut con, "sale");
    thread::sleep(Duration::from_millis(1_000));
    primary.restart();
    let mut con = primary.con();
    assert_eq!(digest(&mut con, "sale"), expected, "AOF load");
    let _: String = redis::cmd("BGREWRITEAOF").query(&mut con).unwrap();
    primary.wait_until(
        |info| info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrites:1"),
        "AOF rewrite",
    );
    primary.restart();
    assert_eq!(
        digest(&mut primary.con(), "sale"),
        expected,
        "rewritten AOF"
    );
}

#[test]
fn apply_refuses_every_ordinary_client() {
    let server = Server::start();
    let mut con = server.con();
    create(&mut con, "sale", 5, 1, 600);
    let before = snapshot(&mut con, "sale");
    for args in [
        &["sale", "CONFIRM", "1"][..],
        &["new", "CREATE", "5", "1", "600"],
    ] {
        let error = redis::cmd("COUPON.APPLY")
            .arg(args)
            .query::<Value>(&mut con)
            .unwrap_err();
        assert!(error.to_string().contains("only replays"), "{error}");
    }
    assert_eq!(snapshot(&mut con, "sale"), before);
    // From a script: still a client.
    let from_lua = redis::cmd("EVAL")
        .arg("return redis.call('COUPON.APPLY', KEYS[1], 'CREATE', '5', '1', '600')")
        .arg(1)
        .arg("lua")
        .query::<Value>(&mut con);
    assert!(from_lua.is_err());
    let exists: i64 = redis::cmd("EXISTS").arg("lua").query(&mut con).unwrap();
    assert_eq!(exists, 0);
}

/// Keyspace events of `event` caused by `call`.
fn count_events(server: &Server, event: &str, call: impl FnOnce(&mut Connection)) -> usize {
    events_of(server, call)
        .iter()
        .filter(|(name, _)| name == event)
        .count()
}

/// The quickest of 3 runs: the least disturbed by the machine's noise.
fn quickest(mut run: impl FnMut() -> Duration) -> Duration {
    (0..3).map(|_| run()).min().unwrap()
}

#[test]
fn one_users_many_claims_cost_bounded_work_per_call() {
    let server = Server::with_args(&["--appendonly", "no"]);
    let mut con = server.con();
    const CLAIMS: usize = 20_000;
    create(&mut con, "whale", 1_000_000, CLAIMS as i64, 600);
    let mut pipe = redis::pipe();
    for _ in 0..CLAIMS {
        pipe.cmd("COUPON.RESERVE")
            .arg("whale")
            .arg("w")
            .arg("HOLD")
            .arg(1)
            .ignore();
    }
    let _: () = pipe.query(&mut con).unwrap();
    thread::sleep(Duration::from_millis(1_100));
    // After a mass expiry of the user's holds, each write reclaims a
    // bounded number of them, the user's own included.
    let mut claim = 0;
    let reclaimed = count_events(&server, "coupon.expired", |c| {
        claim = reserve(c, "whale", "w", &[]).0;
    });
    assert!(reclaimed <= 16, "RESERVE reclaimed {reclaimed} at once");
    assert_eq!(claim, CLAIMS as i64 + 1);
    let reclaimed = count_events(&server, "coupon.expired", |c| {
        assert_eq!(confirm(c, "whale", claim), 1);
    });
    assert!(reclaimed <= 16, "CONFIRM reclaimed {reclaimed}");
    let reclaimed = count_events(&server, "coupon.expired", |c| {
        assert_eq!(release(c, "whale", claim), 1);
    });
    assert!(reclaimed <= 16, "RELEASE reclaimed {reclaimed}");
    assert_eq!(info(&mut con, "whale")["held"], 0);

    // REVOKE of k live claims is O(k log n): ten times the claims, about
    // ten times the work (quadratic work would be a hundred).
    let mut revoke_time = |claims: usize| {
        quickest(|| {
            let _: i64 = redis::cmd("DEL").arg("r").query(&mut con).unwrap();
            create(&mut con, "r", 1_000_000, claims as i64, 600);
            let mut pipe = redis::pipe();
            for _ in 0..claims {
                pipe.cmd("COUPON.RESERVE").arg("r").arg("u").ignore();
            }
            let _: () = pipe.query(&mut con).unwrap();
            let start = Instant::now();
            assert_eq!(revoke(&mut con, "r", "u"), claims as i64);
            start.elapsed()
        })
    };
    let small = revoke_time(CLAIMS / 10);
    let large = revoke_time(CLAIMS);
    let ratio = large.as_secs_f64() / small.as_secs_f64();
    println!(
        "REVOKE of {CLAIMS} claims {large:?}, of {} {small:?}: {ratio:.1} x",
        CLAIMS / 10
    );
    assert!(ratio < 40.0, "REVOKE grew {ratio:.1} x for 10 x the claims");
}
