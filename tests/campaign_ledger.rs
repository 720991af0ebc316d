//! Campaign operations (SPEC: "Campaign operations"): the ledger written
//! in the same step as every change, COUPON.ALTER, COUPON.RECLAIM and
//! COUPON.RESERVEALL. The ledger is checked against a model that replays
//! the stream alone, never against the module's rules: at every step of a
//! long random run, what the stream says is live equals COUPON.CLAIMS, and
//! its counts equal COUPON.INFO.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::thread;
use std::time::Duration;

use common::campaign::*;
use common::crowd::Crowd;
use common::rng::Rng;
use common::*;
use redis::{Connection, Value};

const LEDGER: &str = "{s}:ledger";

fn create_with_ledger(con: &mut Connection, key: &str, limit: i64, per_user: i64, hold_s: i64) {
    let _: () = redis::cmd("COUPON.CREATE")
        .arg(key)
        .arg(limit)
        .arg(&[
            "PERUSER",
            &per_user.to_string(),
            "HOLD",
            &hold_s.to_string(),
        ])
        .arg(&["LEDGER", LEDGER])
        .query(con)
        .unwrap();
}

/// `command args... LEDGER {s}:ledger`, which must succeed.
fn ledgered<T: redis::FromRedisValue>(con: &mut Connection, command: &str, args: &[&str]) -> T {
    redis::cmd(command)
        .arg(args)
        .arg(&["LEDGER", LEDGER])
        .query(con)
        .unwrap_or_else(|e| panic!("{command} {args:?}: {e}"))
}

/// One stream entry: its ID and its fields in order.
type Entry = (String, Vec<(String, String)>);

fn entries_after(con: &mut Connection, stream: &str, after: &str) -> Vec<Entry> {
    let start = format!("({after}");
    let rows: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
        .arg(stream)
        .arg(if after.is_empty() { "-" } else { &start })
        .arg("+")
        .query(con)
        .unwrap();
    rows
}

/// A claim as the ledger last described it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Claim {
    user: String,
    expires_at_ms: i64,
    id: Option<String>,
    units: i64,
}

/// A campaign rebuilt from its ledger entries only.
#[derive(Debug, Default)]
struct Replayed {
    limit: i64,
    per_user: i64,
    hold: i64,
    claims: BTreeMap<i64, Claim>,
    made: i64,
    released: i64,
    expired: i64,
    last_available: Option<i64>,
}

impl Replayed {
    fn new(limit: i64, per_user: i64, hold: i64) -> Self {
        Replayed {
            limit,
            per_user,
            hold,
            ..Replayed::default()
        }
    }

    fn apply(&mut self, fields: &[(String, String)]) {
        let field = |name: &str| {
            fields
                .iter()
                .find(|(f, _)| f == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no {name} in {fields:?}"))
        };
        let number = |name: &str| field(name).parse::<i64>().unwrap();
        let names: Vec<&str> = fields.iter().map(|(f, _)| f.as_str()).collect();
        let op = field("op");
        if op == "altered" {
            assert_eq!(
                names,
                ["key", "op", "limit", "peruser", "hold", "available"]
            );
            (self.limit, self.per_user, self.hold) =
                (number("limit"), number("peruser"), number("hold"));
        } else {
            assert_eq!(
                names,
                [
                    "key",
                    "op",
                    "claim",
                    "user",
                    "expires_at_ms",
                    "id",
                    "available",
                    "units"
                ]
            );
            let claim = number("claim");
            let id = Some(field("id")).filter(|id| !id.is_empty());
            let described = Claim {
                user: field("user"),
                expires_at_ms: number("expires_at_ms"),
                id,
                units: number("units"),
            };
            match op.as_str() {
                "reserved" => {
                    assert!(claim > self.made, "claim numbers only grow");
                    self.made = claim;
                    assert!(self.claims.insert(claim, described).is_none());
                }
                "confirmed" => {
                    assert_eq!(described.expires_at_ms, -1);
                    if let Some(held) = self.claims.get_mut(&claim) {
                        assert_eq!((&held.user, &held.id), (&described.user, &described.id));
                        assert!((1..=held.units).contains(&described.units));
                        held.expires_at_ms = -1;
                        held.units = described.units;
                    } else {
                        // COUPON.ISSUE: confirmed as it is made.
                        assert!(claim > self.made);
                        self.made = claim;
                        self.claims.insert(claim, described);
                    }
                }
                "renewed" => {
                    let held = self.claims.get_mut(&claim).expect("a stored claim");
                    assert_ne!(held.expires_at_ms, -1, "only a hold is renewed");
                    let before = Claim {
                        expires_at_ms: held.expires_at_ms,
                        ..described.clone()
                    };
                    assert_eq!(*held, before, "renewed describes the claim as it is");
                    held.expires_at_ms = described.expires_at_ms;
                }
                "released" | "revoked" | "expired" => {
                    let stored = self.claims.remove(&claim).expect("a stored claim");
                    assert_eq!(stored, described, "{op} describes the claim as it was");
                    if op == "expired" {
                        self.expired += 1;
                    } else {
                        self.released += 1;
                    }
                }
                other => panic!("unknown op {other}"),
            }
        }
        self.last_available = Some(number("available"));
    }

    fn live(&self, now: i64) -> BTreeMap<i64, Claim> {
        self.claims
            .iter()
            .filter(|(_, c)| c.expires_at_ms == -1 || c.expires_at_ms >= now)
            .map(|(n, c)| (*n, c.clone()))
            .collect()
    }

    /// COUPON.INFO as the ledger tells it at `now`.
    fn info(&self, now: i64) -> HashMap<String, i64> {
        let live = self.live(now);
        let (confirmed, held): (Vec<&Claim>, Vec<&Claim>) =
            live.values().partition(|c| c.expires_at_ms == -1);
        let units = |claims: &[&Claim]| claims.iter().map(|c| c.units).sum::<i64>();
        let (confirmed_units, held_units) = (units(&confirmed), units(&held));
        let stored_holds = (self.claims.len() - confirmed.len()) as i64;
        let held = held.len() as i64;
        let fields = [
            ("limit", self.limit),
            ("peruser", self.per_user),
            ("hold", self.hold),
            ("confirmed", confirmed.len() as i64),
            ("held", held),
            (
                "available",
                (self.limit - confirmed_units - held_units).max(0),
            ),
            ("claims", self.made),
            ("expired", self.expired + stored_holds - held),
            ("released", self.released),
            ("held_units", held_units),
            ("confirmed_units", confirmed_units),
        ];
        fields.iter().map(|(f, v)| (f.to_string(), *v)).collect()
    }
}

/// The live claims and INFO of `key`, with the server's time read just
/// before and after (the claims whose hold ends between the two are left
/// out of the comparison: either answer is right).
fn observed(
    con: &mut Connection,
    key: &str,
) -> (i64, i64, BTreeMap<i64, Claim>, HashMap<String, i64>) {
    let before = server_ms(con);
    let rows = claims(con, key, &["COUNT", "100000"]);
    let info = info(con, key);
    let after = server_ms(con);
    let live = rows
        .into_iter()
        .map(|row| {
            (
                row.claim,
                Claim {
                    user: row.user,
                    expires_at_ms: row.expires_at_ms,
                    id: row.request_id,
                    units: row.units,
                },
            )
        })
        .collect();
    (before, after, live, info)
}

fn assert_ledger_matches(con: &mut Connection, key: &str, model: &Replayed, step: usize) {
    let (before, after, live, info) = observed(con, key);
    let ambiguous =
        |c: &Claim| c.expires_at_ms != -1 && (before - 1..=after).contains(&c.expires_at_ms);
    let unambiguous = |claims: BTreeMap<i64, Claim>| -> BTreeMap<i64, Claim> {
        claims.into_iter().filter(|(_, c)| !ambiguous(c)).collect()
    };
    assert_eq!(
        unambiguous(live),
        unambiguous(model.live(before)),
        "step {step}: {key}'s live claims by the ledger"
    );
    if model.claims.values().any(ambiguous) {
        return;
    }
    assert_eq!(
        info,
        model.info(before),
        "step {step}: {key}'s INFO by the ledger"
    );
}

/// Every op of every campaign write, at random, on two campaigns that
/// share a ledger (and one that keeps none, in carts), with holds of one
/// second that expire during the run: after each step the stream alone
/// gives COUPON.CLAIMS and COUPON.INFO.
#[test]
fn the_ledger_replayed_equals_claims_and_info_at_every_step() {
    let server = Server::start();
    let mut con = server.con();
    let keys = ["{s}:a", "{s}:b"];
    create_with_ledger(&mut con, keys[0], 6, 2, 1);
    create_with_ledger(&mut con, keys[1], 4, 1, 1);
    create(&mut con, "{s}:plain", 50, 5, 600);
    let mut models: HashMap<&str, Replayed> = HashMap::from([
        (keys[0], Replayed::new(6, 2, 1)),
        (keys[1], Replayed::new(4, 1, 1)),
    ]);
    let mut last_id = String::new();
    let mut rng = Rng(27);
    let users = ["ann", "ben", "cat", "dan", "eve"];
    let mut ops_seen = BTreeMap::<String, u32>::new();
    for step in 0..500 {
        let key = keys[rng.below(2)];
        let user = users[rng.below(users.len())];
        let id = format!("order-{}", rng.below(6));
        let claim = (1 + rng.below(models[key].made.max(1) as usize + 1)).to_string();
        let issue_limit = models[key].limit.to_string();
        let limit = (2 + rng.below(6)).to_string();
        let per_user = (1 + rng.below(3)).to_string();
        // Units: 1 to 3, and 1 to 3 for each campaign of a cart.
        let qty: Vec<String> = (0..3).map(|_| (1 + rng.below(3)).to_string()).collect();
        let call: Vec<&str> = match rng.below(12) {
            0..=2 => {
                let mut call = vec!["COUPON.RESERVE", key, user];
                if rng.below(2) == 0 {
                    call.extend(["ID", &id]);
                }
                if rng.below(3) == 0 {
                    call.extend(["HOLD", "600"]);
                }
                if rng.below(2) == 0 {
                    call.extend(["QTY", &qty[0]]);
                }
                call.extend(["LEDGER", LEDGER]);
                call
            }
            3 if rng.below(2) == 0 => vec!["COUPON.CONFIRM", key, &claim, "LEDGER", LEDGER],
            3 => vec![
                "COUPON.CONFIRM",
                key,
                &claim,
                "QTY",
                &qty[0],
                "LEDGER",
                LEDGER,
            ],
            10 => vec!["COUPON.RENEW", key, &claim, "LEDGER", LEDGER],
            4 => vec!["COUPON.RELEASE", key, &claim, "LEDGER", LEDGER],
            5 => vec!["COUPON.ISSUE", key, user, &issue_limit, "LEDGER", LEDGER],
            6 => vec!["COUPON.REVOKE", key, user, "LEDGER", LEDGER],
            7 => {
                vec![
                    "COUPON.ALTER",
                    key,
                    "LIMIT",
                    &limit,
                    "PERUSER",
                    &per_user,
                    "LEDGER",
                    LEDGER,
                ]
            }
            8 => vec!["COUPON.RECLAIM", key, "COUNT", "2", "LEDGER", LEDGER],
            _ => {
                let mut call = vec![
                    "COUPON.RESERVEALL",
                    "3",
                    keys[0],
                    "{s}:plain",
                    keys[1],
                    user,
                ];
                if rng.below(2) == 0 {
                    call.extend(["ID", &id]);
                }
                if rng.below(2) == 0 {
                    call.extend(["QTY", &qty[0], &qty[1], &qty[2]]);
                }
                call.extend(["LEDGER", LEDGER]);
                call
            }
        };
        // Errors (ALTER below what is confirmed, an id of another user)
        // are part of the run: they must leave no entry.
        let reply: redis::RedisResult<Value> = redis::cmd(call[0]).arg(&call[1..]).query(&mut con);
        if let Err(error) = &reply {
            assert!(!is_internal_error(&error.to_string()), "{call:?}: {error}");
        }
        for (id, fields) in entries_after(&mut con, LEDGER, &last_id) {
            let campaign = fields[0].1.clone();
            *ops_seen.entry(fields[1].1.clone()).or_default() += 1;
            models.get_mut(campaign.as_str()).unwrap().apply(&fields);
            last_id = id;
        }
        if reply.is_err() {
            continue;
        }
        for key in keys {
            assert_ledger_matches(&mut con, key, &models[key], step);
        }
        if step % 100 == 99 {
            thread::sleep(Duration::from_millis(1_100));
        }
    }
    for op in [
        "reserved",
        "confirmed",
        "released",
        "expired",
        "revoked",
        "altered",
        "renewed",
    ] {
        assert!(
            ops_seen.get(op).copied().unwrap_or(0) > 0,
            "{op} never happened: {ops_seen:?}"
        );
    }
    assert_eq!(
        info_field(&mut con, "guard_coupon_ledger_entries"),
        ops_seen.values().sum::<u32>() as i64
    );
}

/// A replica and the AOF end with the same entries, IDs included, as the
/// primary wrote them (explicit IDs and exact trims in one MULTI).
#[test]
fn replicas_and_the_aof_hold_the_same_entries_and_ids() {
    let mut primary = Server::start();
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();
    let _: () = redis::cmd("COUPON.CREATE")
        .arg(&[
            "{s}:sale", "3", "HOLD", "1", "LEDGER", LEDGER, "MAXLEN", "5",
        ])
        .query(&mut con)
        .unwrap();
    for user in ["a", "b", "c", "d"] {
        let _: Value = ledgered(&mut con, "COUPON.RESERVE", &["{s}:sale", user]);
    }
    let _: Value = ledgered(&mut con, "COUPON.CONFIRM", &["{s}:sale", "1"]);
    thread::sleep(Duration::from_millis(1_100));
    let reclaimed: i64 = ledgered(&mut con, "COUPON.RECLAIM", &["{s}:sale"]);
    assert_eq!(reclaimed, 2, "b's and c's holds expired");
    let _: () = ledgered(&mut con, "COUPON.ALTER", &["{s}:sale", "LIMIT", "10"]);
    let written = entries_after(&mut con, LEDGER, "");
    // 3 reserved (d found it full), 1 confirmed, 2 expired, 1 altered:
    // MAXLEN 5 trims about (whole nodes) on the primary, so none went;
    // replicas get the exact length it left.
    assert_eq!(written.len(), 7);
    let _: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut con).unwrap();
    let mut replica_con = replica.con();
    assert_eq!(entries_after(&mut replica_con, LEDGER, ""), written);
    assert_eq!(
        info(&mut replica_con, "{s}:sale"),
        info(&mut con, "{s}:sale")
    );
    primary.restart();
    let mut con = primary.con();
    assert_eq!(
        entries_after(&mut con, LEDGER, ""),
        written,
        "after an AOF load"
    );
    // Replicas write no entry of their own, and count none.
    assert_eq!(
        info_field(&mut replica_con, "guard_coupon_ledger_entries"),
        0
    );
}

/// Every wrong use of LEDGER, and every bad argument of the new commands,
/// is an error that changes nothing (the campaign, the ledger).
#[test]
fn ledger_and_option_errors_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    create_with_ledger(&mut con, "{s}:sale", 2, 1, 600);
    create(&mut con, "{s}:open", 2, 1, 600);
    let _: () = redis::cmd("SET")
        .arg(&["{s}:text", "x"])
        .query(&mut con)
        .unwrap();
    let _: Value = ledgered(&mut con, "COUPON.RESERVE", &["{s}:sale", "u"]);
    let cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (vec![b"COUPON.RESERVE", b"{s}:sale", b"v"], "ERR ledger"),
        (
            vec![
                b"COUPON.RESERVE",
                b"{s}:sale",
                b"v",
                b"LEDGER",
                b"{s}:other",
            ],
            "ERR ledger",
        ),
        (
            vec![b"COUPON.RESERVE", b"{s}:sale", b"v", b"LEDGER", b"{s}:text"],
            "WRONGTYPE",
        ),
        (
            vec![
                b"COUPON.RESERVE",
                b"{s}:open",
                b"v",
                b"LEDGER",
                LEDGER.as_bytes(),
            ],
            "ERR ledger",
        ),
        (vec![b"COUPON.CONFIRM", b"{s}:sale", b"1"], "ERR ledger"),
        // Options follow the claim: an argument too many is no option.
        (
            vec![b"COUPON.CONFIRM", b"{s}:sale", b"1", b"2"],
            "ERR unknown option '2'",
        ),
        (
            vec![b"COUPON.RELEASE", b"{s}:sale", b"1", b"LEDGER", b"{s}:x"],
            "ERR ledger",
        ),
        (vec![b"COUPON.ISSUE", b"{s}:sale", b"v", b"2"], "ERR ledger"),
        (vec![b"COUPON.REVOKE", b"{s}:sale", b"u"], "ERR ledger"),
        (vec![b"COUPON.RECLAIM", b"{s}:sale"], "ERR ledger"),
        (
            vec![
                b"COUPON.RECLAIM",
                b"{s}:sale",
                b"COUNT",
                b"10001",
                b"LEDGER",
                LEDGER.as_bytes(),
            ],
            "ERR count",
        ),
        (
            vec![b"COUPON.ALTER", b"{s}:sale", b"LIMIT", b"5"],
            "ERR ledger",
        ),
        (
            vec![b"COUPON.ALTER", b"{s}:sale", b"LEDGER", LEDGER.as_bytes()],
            "needs LIMIT, PERUSER or HOLD",
        ),
        (
            vec![
                b"COUPON.ALTER",
                b"{s}:sale",
                b"LIMIT",
                b"0",
                b"LEDGER",
                LEDGER.as_bytes(),
            ],
            "ERR limit",
        ),
        (
            vec![b"COUPON.ALTER", b"{s}:missing", b"LIMIT", b"3"],
            "ERR no such campaign",
        ),
        (
            vec![b"COUPON.CREATE", b"{s}:new", b"5", b"LEDGER", b"{s}:new"],
            "ERR ledger",
        ),
        (
            vec![b"COUPON.CREATE", b"{s}:new", b"5", b"MAXLEN", b"5"],
            "only valid with LEDGER",
        ),
        (
            vec![b"COUPON.CREATE", b"{s}:new", b"5", b"LEDGER", b"{s}:text"],
            "WRONGTYPE",
        ),
        (
            vec![
                b"COUPON.ISSUE",
                b"{s}:winners",
                b"u",
                b"5",
                b"LEDGER",
                LEDGER.as_bytes(),
            ],
            "ERR ledger",
        ),
    ];
    assert_errors_change_nothing(&mut con, &cases);
    // The ledger itself is untouched by all of them: one entry, the first
    // reservation's.
    assert_eq!(entries_after(&mut con, LEDGER, "").len(), 1);
    // ALTER may not undo a sale: below the confirmed claims.
    let _: i64 = ledgered(&mut con, "COUPON.CONFIRM", &["{s}:sale", "1"]);
    let _: Value = ledgered(&mut con, "COUPON.RESERVE", &["{s}:sale", "w"]);
    let _: i64 = ledgered(&mut con, "COUPON.CONFIRM", &["{s}:sale", "2"]);
    let below: Vec<(Vec<&[u8]>, &str)> = vec![
        (
            vec![
                b"COUPON.ALTER",
                b"{s}:sale",
                b"LIMIT",
                b"1",
                b"LEDGER",
                LEDGER.as_bytes(),
            ],
            "ERR limit must not be below the confirmed claims",
        ),
        (
            vec![
                b"COUPON.ALTER",
                b"{s}:sale",
                b"PERUSER",
                b"0",
                b"LEDGER",
                LEDGER.as_bytes(),
            ],
            "ERR peruser",
        ),
    ];
    assert_errors_change_nothing(&mut con, &below);
    let limit: Vec<(Vec<&[u8]>, &str)> = vec![(
        vec![
            b"COUPON.ALTER",
            b"{s}:sale",
            b"LIMIT",
            b"0",
            b"LEDGER",
            LEDGER.as_bytes(),
        ],
        "ERR limit",
    )];
    assert_errors_change_nothing(&mut con, &limit);
    // A stream with one ID left: a call that owes two entries (a cart of
    // two) is refused before the first, nothing written anywhere, not
    // even one entry.
    let _: () = redis::cmd("DEL").arg(LEDGER).query(&mut con).unwrap();
    let _: String = redis::cmd("XADD")
        .arg(&[
            LEDGER,
            "18446744073709551615-18446744073709551614",
            "f",
            "v",
        ])
        .query(&mut con)
        .unwrap();
    create_with_ledger(&mut con, "{s}:more", 2, 2, 600);
    create_with_ledger(&mut con, "{s}:third", 2, 2, 600);
    let full: Vec<(Vec<&[u8]>, &str)> = vec![(
        vec![
            b"COUPON.RESERVEALL",
            b"2",
            b"{s}:more",
            b"{s}:third",
            b"z",
            b"LEDGER",
            LEDGER.as_bytes(),
        ],
        "exhausted the last possible ID",
    )];
    assert_error_changes_none_of(
        &mut con,
        &["{s}:more", "{s}:third", LEDGER],
        &full[0].0,
        full[0].1,
    );
}

/// Lowering LIMIT below what is live touches nothing live; new claims
/// wait; a hold that no longer fits answers CONFIRM with -2 and is
/// released in the same step. Equal settings change nothing, not even a
/// WATCH.
#[test]
fn alter_lowers_and_raises_stock_live() {
    let server = Server::start();
    let mut con = server.con();
    create_with_ledger(&mut con, "{s}:sale", 3, 1, 600);
    for user in ["a", "b", "c"] {
        let _: Value = ledgered(&mut con, "COUPON.RESERVE", &["{s}:sale", user]);
    }
    let alter = |con: &mut Connection, limit: &str| -> () {
        ledgered(con, "COUPON.ALTER", &["{s}:sale", "LIMIT", limit])
    };
    alter(&mut con, "1");
    let info_now = info(&mut con, "{s}:sale");
    assert_eq!(
        (info_now["held"], info_now["available"]),
        (3, 0),
        "nothing live touched"
    );
    let confirm = |con: &mut Connection, claim: &str| -> i64 {
        ledgered(con, "COUPON.CONFIRM", &["{s}:sale", claim])
    };
    assert_eq!(confirm(&mut con, "1"), 1);
    assert_eq!(confirm(&mut con, "2"), -2, "the hold no longer fits");
    let (claim, _) = reserve_ledgered(&mut con, "d");
    assert_eq!(claim, -2, "new claims wait");
    // Equal settings: no entry, no propagation, the WATCH survives.
    let before = entries_after(&mut con, LEDGER, "").len();
    assert!(watch_survives(&server, "{s}:sale", |c| alter(c, "1")));
    assert_eq!(entries_after(&mut con, LEDGER, "").len(), before);
    alter(&mut con, "5");
    assert_eq!(reserve_ledgered(&mut con, "d").0, 4, "restocked");
    let ops: Vec<String> = entries_after(&mut con, LEDGER, "")
        .into_iter()
        .map(|(_, fields)| fields[1].1.clone())
        .collect();
    assert_eq!(
        ops,
        [
            "reserved",
            "reserved",
            "reserved",
            "altered",
            "confirmed",
            "released",
            "altered",
            "reserved"
        ]
    );
    assert_eq!(info_field(&mut con, "guard_coupon_altered"), 2);
}

fn reserve_ledgered(con: &mut Connection, user: &str) -> (i64, i64) {
    ledgered(con, "COUPON.RESERVE", &["{s}:sale", user])
}

/// Many connections reserve carts of three products at once, the last
/// with fewer places than buyers: every cart is whole or absent, never
/// half reserved, and the ledger has exactly the holds made.
#[test]
fn a_cart_whose_last_product_sells_out_is_never_half_reserved() {
    let server = Server::start();
    let mut con = server.con();
    create_with_ledger(&mut con, "{s}:shirt", 100, 1, 600);
    create_with_ledger(&mut con, "{s}:shoes", 100, 1, 600);
    create_with_ledger(&mut con, "{s}:hat", 5, 1, 600);
    let mut crowd = Crowd::connect(&server, 24);
    let replies = crowd.run(|i, con| -> Vec<i64> {
        redis::cmd("COUPON.RESERVEALL")
            .arg(&[
                "3",
                "{s}:shirt",
                "{s}:shoes",
                "{s}:hat",
                &format!("buyer-{i}"),
            ])
            .arg(&["ID", &format!("cart-{i}"), "LEDGER", LEDGER])
            .query(con)
            .unwrap()
    });
    let whole = replies.iter().filter(|r| r.len() == 6).count();
    let refused: Vec<&Vec<i64>> = replies.iter().filter(|r| r.len() == 2).collect();
    assert_eq!(whole, 5, "as many carts as hats");
    assert_eq!(refused.len(), 19);
    assert!(
        refused.iter().all(|r| r[..] == [-2, 3]),
        "the hat, 3rd, is sold out"
    );
    for key in ["{s}:shirt", "{s}:shoes", "{s}:hat"] {
        assert_eq!(info(&mut con, key)["held"], 5, "{key}: no half cart");
    }
    assert_eq!(entries_after(&mut con, LEDGER, "").len(), 15);
    assert_eq!(info_field(&mut con, "guard_coupon_reserveall_refused"), 19);
    // A retry with the same ID repeats each cart's claims and writes nothing.
    let winner = replies.iter().position(|r| r.len() == 6).unwrap();
    let again: Vec<i64> = redis::cmd("COUPON.RESERVEALL")
        .arg(&[
            "3",
            "{s}:shirt",
            "{s}:shoes",
            "{s}:hat",
            &format!("buyer-{winner}"),
        ])
        .arg(&["ID", &format!("cart-{winner}"), "LEDGER", LEDGER])
        .query(&mut con)
        .unwrap();
    assert_eq!(again, replies[winner]);
    assert_eq!(entries_after(&mut con, LEDGER, "").len(), 15);
}

/// A worker calling COUPON.RECLAIM every second brings every expiry's
/// entry within about a second, with no other traffic.
#[test]
fn a_reclaim_worker_records_every_expiry_within_a_second() {
    let server = Server::start();
    let mut con = server.con();
    create_with_ledger(&mut con, "{s}:sale", 100, 1, 1);
    for user in 0..30 {
        let _: Value = ledgered(
            &mut con,
            "COUPON.RESERVE",
            &["{s}:sale", &format!("u{user}")],
        );
    }
    let expires = now_ms() + 1_000;
    let mut reclaimed = 0;
    while reclaimed < 30 {
        assert!(now_ms() < expires + 2_500, "expiries not recorded in time");
        thread::sleep(Duration::from_millis(250));
        let n: i64 = ledgered(&mut con, "COUPON.RECLAIM", &["{s}:sale", "COUNT", "10"]);
        reclaimed += n;
    }
    let expired = entries_after(&mut con, LEDGER, "")
        .iter()
        .filter(|(_, fields)| fields[1].1 == "expired")
        .count();
    assert_eq!(expired, 30);
    assert_eq!(info_field(&mut con, "guard_coupon_reclaimed"), 30);
    let nothing: i64 = ledgered(&mut con, "COUPON.RECLAIM", &["{s}:sale"]);
    assert_eq!(nothing, 0);
}

/// The ledger is a declared key: ACL key patterns apply to it (a user who
/// may write the campaign but not the stream is refused, nothing written),
/// even when a request id is spelled LEDGER.
#[test]
fn acl_key_patterns_guard_the_ledger() {
    let server = Server::start();
    let mut admin = server.con();
    create_with_ledger(&mut admin, "{s}:sale", 10, 2, 600);
    let _: () = redis::cmd("ACL")
        .arg(&[
            "SETUSER",
            "shop",
            "reset",
            "on",
            "nopass",
            "+@all",
            "~{s}:sale",
        ])
        .query(&mut admin)
        .unwrap();
    let mut shop = server.con();
    let _: () = redis::cmd("AUTH")
        .arg(&["shop", "x"])
        .query(&mut shop)
        .unwrap();
    for call in [
        &["COUPON.RESERVE", "{s}:sale", "u", "LEDGER", LEDGER][..],
        &[
            "COUPON.RESERVE",
            "{s}:sale",
            "u",
            "ID",
            "LEDGER",
            "LEDGER",
            LEDGER,
        ],
        &["COUPON.RESERVEALL", "1", "{s}:sale", "u", "LEDGER", LEDGER],
        &["COUPON.ALTER", "{s}:sale", "LIMIT", "5", "LEDGER", LEDGER],
    ] {
        let error = redis::cmd(call[0])
            .arg(&call[1..])
            .query::<Value>(&mut shop)
            .unwrap_err();
        assert_eq!(error.code(), Some("NOPERM"), "{call:?}: {error}");
    }
    assert_eq!(info(&mut admin, "{s}:sale")["claims"], 0);
    assert_eq!(key_state(&mut admin, LEDGER).0, "none");
    let _: () = redis::cmd("ACL")
        .arg(&["SETUSER", "shop", "~{s}:ledger"])
        .query(&mut admin)
        .unwrap();
    let (claim, _): (i64, i64) = ledgered(
        &mut shop,
        "COUPON.RESERVE",
        &["{s}:sale", "u", "ID", "LEDGER"],
    );
    assert_eq!(claim, 1);
}

/// In a Cluster the ledger goes with its campaign: the server routes a
/// call by both keys (MOVED from another node) and refuses a ledger or a
/// cart of another slot (CROSSSLOT) with nothing written.
#[test]
fn the_ledger_and_a_cart_share_their_campaigns_slot() {
    let cluster = common::cluster::Cluster::with_replicas(0);
    let mut any = cluster.nodes[0].con();
    let owner_port = cluster.primary_of(common::cluster::slot(&mut any, "{s}:sale"));
    let mut owner = cluster.node_at(owner_port).con();
    create_with_ledger(&mut owner, "{s}:sale", 10, 1, 600);
    create_with_ledger(&mut owner, "{s}:more", 10, 1, 600);
    let error = redis::cmd("COUPON.CREATE")
        .arg(&["{s}:other", "5", "LEDGER", "{t}:ledger"])
        .query::<Value>(&mut owner)
        .unwrap_err();
    assert_eq!(error.kind(), redis::ErrorKind::CrossSlot, "{error}");
    let error = redis::cmd("COUPON.RESERVEALL")
        .arg(&["2", "{s}:sale", "{t}:sale", "u", "LEDGER", LEDGER])
        .query::<Value>(&mut owner)
        .unwrap_err();
    assert_eq!(error.kind(), redis::ErrorKind::CrossSlot, "{error}");
    let other = cluster
        .primaries()
        .into_iter()
        .find(|&port| port != owner_port)
        .unwrap();
    let error = redis::cmd("COUPON.RESERVE")
        .arg(&["{s}:sale", "u", "LEDGER", LEDGER])
        .query::<Value>(&mut cluster.node_at(other).con())
        .unwrap_err();
    assert_eq!(error.kind(), redis::ErrorKind::Moved, "{error}");
    assert_eq!(
        info(&mut owner, "{s}:sale")["claims"],
        0,
        "refused calls wrote nothing"
    );
    let cart: Vec<i64> = ledgered(
        &mut owner,
        "COUPON.RESERVEALL",
        &["2", "{s}:sale", "{s}:more", "u"],
    );
    assert_eq!((cart[0], cart[2]), (1, 1));
    assert_eq!(entries_after(&mut owner, LEDGER, "").len(), 2);
}

/// `XADD twin MAXLEN ~ maxlen id fields...` with the ID and fields of the
/// ledger's last entry: what the module's append must equal.
fn xadd_last_entry_to(con: &mut Connection, twin: &str, maxlen: i64) {
    let (id, fields): Entry = common::observe::last_entry(con, LEDGER).expect("a ledger entry");
    let mut xadd = redis::cmd("XADD");
    xadd.arg(twin).arg("MAXLEN").arg("~").arg(maxlen).arg(&id);
    for (field, value) in &fields {
        xadd.arg(field).arg(value);
    }
    let _: String = xadd.query(con).unwrap();
}

/// The stream's entries' fields, IDs left out.
fn contents(con: &mut Connection, stream: &str) -> Vec<Vec<(String, String)>> {
    entries_after(con, stream, "")
        .into_iter()
        .map(|(_, fields)| fields)
        .collect()
}

/// The ledger is appended to as XADD appends (the module writes it
/// through the module API, not a nested XADD): beside a twin stream that
/// gets the same entries by XADD, the same keyspace events (`xadd`, and
/// `xtrim` when the approximate trim removes a node), the same entries
/// left after each trim, also for a trim XADD's limit stops short (a
/// stream far over MAXLEN with `stream-node-max-entries 0`); the WATCH
/// signal; a client blocked on the ledger woken.
#[test]
fn the_ledger_is_written_as_xadd_writes_a_stream() {
    let server = Server::start();
    let mut con = server.con();
    let config = |con: &mut Connection, value: &str| {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("stream-node-max-entries")
            .arg(value)
            .query(con)
            .unwrap();
    };
    config(&mut con, "4");
    let create = |con: &mut Connection, key: &str, maxlen: i64| {
        let _: () = redis::cmd("COUPON.CREATE")
            .arg(&[key, "100000", "PERUSER", "100000"])
            .arg(&["LEDGER", LEDGER, "MAXLEN", &maxlen.to_string()])
            .query(con)
            .unwrap();
    };
    create(&mut con, "{s}:sale", 10);
    let events = events_of(&server, |con| {
        for i in 0..30 {
            reserve_ledgered(con, &format!("u{i}"));
            xadd_last_entry_to(con, "{s}:twin", 10);
        }
    });
    let of = |stream: &str| -> Vec<String> {
        events
            .iter()
            .filter(|(_, key)| key == stream)
            .map(|(event, _)| event.clone())
            .collect()
    };
    assert_eq!(of(LEDGER), of("{s}:twin"));
    assert!(
        of(LEDGER).contains(&"xtrim".to_string()),
        "{:?}",
        of(LEDGER)
    );
    assert_eq!(contents(&mut con, LEDGER), contents(&mut con, "{s}:twin"));

    assert!(!watch_survives(&server, LEDGER, |c| {
        reserve_ledgered(c, "watched");
    }));
    let mut reader = server.con();
    let blocked = thread::spawn(move || -> Value {
        redis::cmd("XREAD")
            .arg(&["BLOCK", "10000", "STREAMS", LEDGER, "$"])
            .query(&mut reader)
            .unwrap()
    });
    thread::sleep(Duration::from_millis(300));
    reserve_ledgered(&mut con, "woken");
    assert_ne!(blocked.join().unwrap(), Value::Nil, "the reader was woken");

    // 25,000 entries over MAXLEN 100: XADD's trim stops at 10,000 entries
    // whatever nodes hold (here only their bytes bound them).
    config(&mut con, "0");
    let _: () = redis::cmd("DEL").arg(LEDGER).query(&mut con).unwrap();
    // The twin gets the same IDs, so its nodes fill alike.
    for batch in 0..25 {
        let mut pipe = redis::pipe();
        for i in 0..1_000 {
            pipe.cmd("XADD")
                .arg(LEDGER)
                .arg("*")
                .arg("n")
                .arg(batch * 1_000 + i);
        }
        let ids: Vec<String> = pipe.query(&mut con).unwrap();
        let mut pipe = redis::pipe();
        for (i, id) in ids.iter().enumerate() {
            pipe.cmd("XADD")
                .arg("{s}:big-twin")
                .arg(id)
                .arg("n")
                .arg(batch * 1_000 + i)
                .ignore();
        }
        let _: () = pipe.query(&mut con).unwrap();
    }
    create(&mut con, "{s}:big", 100);
    let _: (i64, i64) = ledgered(&mut con, "COUPON.RESERVE", &["{s}:big", "u"]);
    xadd_last_entry_to(&mut con, "{s}:big-twin", 100);
    let len = |con: &mut Connection, stream: &str| -> i64 {
        redis::cmd("XLEN").arg(stream).query(con).unwrap()
    };
    assert_eq!(len(&mut con, LEDGER), len(&mut con, "{s}:big-twin"));
    assert!(len(&mut con, LEDGER) > 10_000, "XADD's limit held");
    assert_eq!(
        contents(&mut con, LEDGER),
        contents(&mut con, "{s}:big-twin")
    );
}
