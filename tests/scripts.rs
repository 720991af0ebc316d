//! The scripts backend against the module, call by call: the same seeded
//! calls, valid and invalid, go to a server with the module (its
//! commands) and to a server without it (each command's Lua script,
//! clients/scripts/), and must get the same reply or the same error text,
//! and leave the same stored type, value and alert entries, with expiries
//! that differ by no more than the time between the two calls.
//!
//! A sliding window is the module's type on one side and the scripts'
//! hash on the other (docs/clients.md): for it the replies, alert entries,
//! existence and expiry are compared. So is a campaign (the module's type;
//! the scripts' sorted set): after every call that names one, COUPON.INFO
//! and COUPON.CLAIMS, read on each backend its own way, must agree, and so
//! must its ledger's entries; a hold's expiry is made at each server's
//! instant of the call, so times in ms there may differ by the most the
//! two instants of a call were apart. Answers that depend on the instant
//! (an expiry, a window's bucket edge or report hold, a distinct member
//! aging out) are kept apart from the two calls' instants by waiting; a
//! call with such an edge between its two instants anyway is not compared
//! and its keys start again on both (the run says how many: none so far).
//!
//! Lua numbers are doubles, exact to 2^53: past that a script replies the
//! exact integer as a bulk string of its digits (the packages read it as
//! the integer), which counts here as the module's integer.

mod common;

use common::gcra::{self, within, Limiter};
use common::rng::Rng;
use common::scripts::{outcome, Call, Word};
use common::*;
use redis::{Connection, Value};

const SEED: u64 = 0x005c_4197_0000_0036;

fn calls() -> usize {
    std::env::var("GUARD_SCRIPT_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

/// The keys the calls share, so they build on each other: a few counters,
/// their alert streams, and a key of another type.
const COUNTERS: [&str; 3] = ["{c}:a", "{c}:b", "{c}:c"];
const STREAMS: [&str; 2] = ["{c}:alerts", "{c}:other-alerts"];
const A_LIST: &str = "{c}:list";
/// Throttle cells.
const CELLS: [&str; 3] = ["{c}:t1", "{c}:t2", "{c}:t3"];
/// Sliding windows (the module's type; the scripts' hash), distinct
/// sorted sets, coupon sets, and a hash of no window's layout.
const WINDOWS: [&str; 2] = ["{c}:w1", "{c}:w2"];
const DISTINCTS: [&str; 2] = ["{c}:d1", "{c}:d2"];
const COUPONS: [&str; 2] = ["{c}:s1", "{c}:s2"];
const A_HASH: &str = "{c}:hash";
/// Keys of other types where a call's key goes (throttles take only the
/// list: a cell's value differs by the drift, a counter's must not).
const OTHER_TYPES: [&str; 7] = [
    A_LIST,
    CAMPAIGNS[0],
    A_HASH,
    WINDOWS[0],
    DISTINCTS[0],
    COUPONS[0],
    COUNTERS[0],
];

/// An integer argument: mostly valid and small, sometimes anything a
/// client could send.
fn integer(rng: &mut Rng, small: i64) -> String {
    match rng.below(20) {
        0 => rng
            .pick(&["0", "-1", "-0", "+1", "01", "1.5", "", "x", " 1"])
            .to_string(),
        1 => rng
            .pick(&[
                "9223372036854775807",
                "9223372036854775808",
                "-9223372036854775808",
            ])
            .to_string(),
        _ => (1 + rng.below(small as usize) as i64).to_string(),
    }
}

/// Thresholds `step` apart at most, sometimes wrong.
fn thresholds(rng: &mut Rng, step: usize) -> Vec<String> {
    let mut values = Vec::new();
    let mut at = 0;
    let most = if rng.below(30) == 0 { 40 } else { 4 };
    for _ in 0..1 + rng.below(most) {
        at += 1 + rng.below(step) as i64;
        values.push(at.to_string());
    }
    if rng.below(15) == 0 {
        values.reverse();
    }
    if rng.below(25) == 0 {
        values.push(integer(rng, 50));
    }
    values
}

/// `[ALERT stream] [MAXLEN n]`, in either order, sometimes wrong.
fn alert_options(mut call: Call, rng: &mut Rng, counter: &str) -> Call {
    let mut options: Vec<Vec<Option<String>>> = Vec::new();
    if rng.below(3) == 0 {
        let stream = if rng.below(20) == 0 {
            counter.to_string()
        } else {
            rng.pick(&STREAMS).to_string()
        };
        options.push(vec![None, Some(stream)]);
    }
    if rng.below(5) == 0 {
        options.push(vec![Some("MAXLEN".into()), Some(integer(rng, 100))]);
    }
    if rng.below(40) == 0 {
        options.push(vec![
            Some(rng.pick(&["BUCKETS", "FOO", "maxlen"]).to_string()),
            Some("1".into()),
        ]);
    }
    if rng.below(2) == 0 {
        options.reverse();
    }
    // An unknown option of any bytes: the error shows it as the module
    // does (invalid UTF-8 replaced, NUL dropped).
    let odd: Option<&[u8]> = (rng.below(60) == 0).then(|| {
        *rng.pick(&[
            &b"\xff"[..],
            b"a\x00b",
            b"\xe9t\xe9",
            b"\xf0\x9f\x98",
            b"\xed\xa0\x80",
        ])
    });
    for option in options {
        match &option[..] {
            [None, Some(stream)] => {
                let name = *rng.pick(&["ALERT", "alert", "Alert"]);
                call = call.arg(name).key(stream);
            }
            [Some(name), Some(value)] => call = call.arg(name).arg(value),
            _ => unreachable!(),
        }
    }
    match odd {
        Some(name) => call.bytes(name).arg("1"),
        None => call,
    }
}

/// Calendar windows (and a near miss) and zones: those Python's zoneinfo
/// names as the module's database does, and one neither knows.
const UNITS: [&str; 6] = ["minute", "HOUR", "day", "Week", "month", "days"];
const ZONES: [&str; 7] = [
    "UTC",
    "Asia/Seoul",
    "America/New_York",
    "Asia/Kolkata",
    "Australia/Lord_Howe",
    "Mars/Olympus",
    "",
];

/// A window: seconds as [`integer`] draws them, a third of the time a
/// calendar unit.
fn window(rng: &mut Rng, small: i64) -> String {
    match rng.below(3) {
        0 => rng.pick(&UNITS).to_string(),
        _ => integer(rng, small),
    }
}

/// `TZ zone` a third of the time.
fn zone_option(call: Call, rng: &mut Rng) -> Call {
    match rng.below(3) {
        0 => call.arg(rng.pick(&["TZ", "tz"])).arg(rng.pick(&ZONES)),
        _ => call,
    }
}

fn incrcheck(rng: &mut Rng) -> Call {
    let counter = *rng.pick(&COUNTERS);
    let call = Call::new("MON.INCRCHECK")
        .key(counter)
        .arg(integer(rng, 5))
        .arg(window(rng, 3))
        .args(thresholds(rng, 8));
    let call = zone_option(call, rng);
    alert_options(call, rng, counter)
}

/// CL.QUOTA on the counters MON.INCRCHECK and MON.DECRCLAMP use (a count
/// is a count), sometimes on a key of another type.
fn quota(rng: &mut Rng) -> Call {
    let key = match rng.below(15) {
        0 => *rng.pick(&OTHER_TYPES),
        _ => *rng.pick(&COUNTERS),
    };
    let mut call = Call::new("CL.QUOTA")
        .key(key)
        .arg(integer(rng, 12))
        .arg(window(rng, 3));
    if rng.below(2) == 0 {
        call = call.arg(quantity(rng));
    }
    zone_option(call, rng)
}

fn decrclamp(rng: &mut Rng) -> Call {
    let counter = *rng.pick(&COUNTERS);
    let mut call = Call::new("MON.DECRCLAMP").key(counter).arg(integer(rng, 8));
    if rng.below(30) == 0 {
        call = call.arg("7");
    }
    alert_options(call, rng, counter)
}

/// The windows' calls: each window key has a usual shape (w1: 1 s in 5
/// buckets of 200 ms, w2: 2 s in the default 50 of 40 ms), and now and
/// then another, which the key refuses while it lives.
fn slidecheck(rng: &mut Rng) -> Call {
    let first = rng.below(2);
    let key = WINDOWS[first];
    let window = match rng.below(12) {
        0 => integer(rng, 3),
        _ => (first + 1).to_string(),
    };
    let mut call = Call::new("MON.SLIDECHECK")
        .key(key)
        .arg(integer(rng, 4))
        .arg(window)
        .args(thresholds(rng, 30));
    let buckets = match (first, rng.below(12)) {
        (_, 0) => Some(
            rng.pick(&["0", "1", "2", "3", "7", "8", "3600", "3601", "x", "-1"])
                .to_string(),
        ),
        (0, _) => Some("5".to_string()),
        _ => None,
    };
    if let Some(n) = buckets {
        call = call.arg(rng.pick(&["BUCKETS", "buckets"])).arg(n);
    }
    alert_options(call, rng, key)
}

/// A window that lives through the run (30 s) and climbs: each call
/// crosses thresholds just above `sum`, its sum so far, so the key reports
/// a new one nearly every call and forgets the oldest past 32.
const CLIMBING: &str = "{c}:w3";

fn climbing(rng: &mut Rng, sum: i64) -> Call {
    let thresholds: Vec<i64> = (1..=4).filter(|_| rng.chance(2)).map(|n| sum + n).collect();
    let call = Call::new("MON.SLIDECHECK")
        .key(CLIMBING)
        .arg(1 + rng.below(4))
        .arg(30)
        .args(if thresholds.is_empty() {
            vec![sum + 1]
        } else {
            thresholds
        });
    alert_options(call, rng, CLIMBING)
}

/// A few members, sometimes empty or of any bytes.
fn member(rng: &mut Rng, prefix: &str) -> Vec<u8> {
    match rng.below(40) {
        0 => Vec::new(),
        1 => b"\xff\x00m".to_vec(),
        _ => format!("{prefix}{}", rng.below(8)).into_bytes(),
    }
}

fn distinct(rng: &mut Rng) -> Call {
    let key = *rng.pick(&DISTINCTS);
    let call = Call::new("MON.DISTINCT")
        .key(key)
        .bytes(&member(rng, "card"))
        .arg(integer(rng, 2))
        .args(thresholds(rng, 3));
    alert_options(call, rng, key)
}

/// `[LEDGER stream]`, which a set refuses, now and then, sometimes wrong.
fn ledger_option(call: Call, rng: &mut Rng) -> Call {
    match rng.below(40) {
        0 => call
            .arg(rng.pick(&["LEDGER", "ledger"]))
            .key(rng.pick(&STREAMS)),
        1 => call.arg("LEDGER").key(A_LIST),
        2 => call.arg("LEDGER"),
        3 => call.arg(rng.pick(&["HOLD", "FOO"])).arg("1"),
        _ => call,
    }
}

/// A coupon set mostly, or a campaign (ISSUE and REVOKE take both), with
/// its options: `(key, campaign's index)`.
fn coupon_key(rng: &mut Rng) -> (&'static str, Option<usize>) {
    match rng.below(3) {
        0 => {
            let at = some_campaign(rng);
            (CAMPAIGNS[at], Some(at))
        }
        _ => (*rng.pick(&COUPONS), None),
    }
}

fn coupon_options(call: Call, rng: &mut Rng, campaign: Option<usize>) -> Call {
    match campaign {
        Some(at) => campaign_ledger(call, rng, at),
        None => ledger_option(call, rng),
    }
}

fn issue(rng: &mut Rng) -> Call {
    let (key, campaign) = coupon_key(rng);
    let user = match campaign {
        Some(_) => campaign_user(rng),
        None => member(rng, "user"),
    };
    let call = Call::new("COUPON.ISSUE")
        .key(key)
        .bytes(&user)
        .arg(integer(rng, 6));
    coupon_options(call, rng, campaign)
}

fn revoke(rng: &mut Rng) -> Call {
    let (key, campaign) = coupon_key(rng);
    let call = Call::new("COUPON.REVOKE").key(key);
    let user = match campaign {
        Some(_) => campaign_user(rng),
        None => member(rng, "user"),
    };
    match rng.below(40) {
        0 => call,
        _ => coupon_options(call.bytes(&user), rng, campaign),
    }
}

/// Campaigns (the module's type; the scripts' sorted set): k1 holds for
/// 1 s and keeps no ledger, k2 holds for 2 s and keeps the ledger; k3, a
/// large one (up to 1,000 places, PERUSER up to 1,000) with the ledger,
/// holds for 1 s and is called in bursts (BURST) with quiet seconds
/// between, so that its expired holds pile up past what one write
/// reclaims. Each keeps one hold length (or 600 s, which outlives the
/// run) so that holds expire in the order they were made on both servers,
/// whose instants of one call differ by a ms or so.
const CAMPAIGNS: [&str; 3] = ["{c}:k1", "{c}:k2", "{c}:k3"];
const HOLDS: [usize; 3] = [1, 2, 1];
/// Is k3 called now?
static BURST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// One of the campaigns (k3 only in a burst).
fn some_campaign(rng: &mut Rng) -> usize {
    if BURST.load(std::sync::atomic::Ordering::Relaxed) && rng.below(4) > 0 {
        2
    } else {
        rng.below(2)
    }
}
const LEDGER: &str = "{c}:ledger";
/// A key that holds no campaign, but for one call after a CREATE.
const NO_CAMPAIGN: &str = "{c}:nothing";
const USERS: [&str; 4] = ["u0", "u1", "u2", "u3"];

/// A campaign key, sometimes a missing one.
fn campaign_key(rng: &mut Rng) -> (usize, &'static str) {
    match rng.below(30) {
        0 => (0, NO_CAMPAIGN),
        _ => {
            let at = some_campaign(rng);
            (at, CAMPAIGNS[at])
        }
    }
}

/// `[LEDGER stream]` as a write on campaign `at` names it: k2's ledger
/// mostly, sometimes none, another stream, a list, or no value.
fn campaign_ledger(call: Call, rng: &mut Rng, at: usize) -> Call {
    let usual = at >= 1;
    match rng.below(25) {
        0 => call,
        1 => call.arg("LEDGER").key(STREAMS[0]),
        2 => call.arg("ledger").key(A_LIST),
        3 => call.arg("LEDGER"),
        4 if !usual => call.arg("LEDGER").key(LEDGER),
        _ if usual => call.arg(rng.pick(&["LEDGER", "Ledger"])).key(LEDGER),
        _ => call,
    }
}

/// A user: mostly one of a few, so they contend for small limits.
fn campaign_user(rng: &mut Rng) -> Vec<u8> {
    match rng.below(40) {
        0 => Vec::new(),
        1 => b"\xff\x00u".to_vec(),
        _ => rng.pick(&USERS).as_bytes().to_vec(),
    }
}

/// A LIMIT or PERUSER for campaign `at`: small (at most `small`), or
/// anything; k3's mostly up to 1,000.
fn setting(rng: &mut Rng, at: usize, small: i64) -> String {
    match at {
        2 if rng.below(8) > 0 => (1 + rng.below(1000)).to_string(),
        _ => integer(rng, small),
    }
}

/// An option of a call: `NAME value`, `NAME value...` or `NAME key`.
enum Opt {
    Arg(&'static str, String),
    Args(&'static str, Vec<String>),
    Key(&'static str, &'static str),
}

/// One of `names`.
fn one(rng: &mut Rng, names: &[&'static str]) -> &'static str {
    names[rng.below(names.len())]
}

fn with_options(mut call: Call, rng: &mut Rng, mut options: Vec<Opt>) -> Call {
    rng.shuffle(&mut options);
    for option in options {
        call = match option {
            Opt::Arg(name, value) => call.arg(name).arg(value),
            Opt::Args(name, values) => call.arg(name).args(values),
            Opt::Key(name, key) => call.arg(name).key(key),
        };
    }
    call
}

fn create(rng: &mut Rng) -> Call {
    let (at, key) = campaign_key(rng);
    let mut options = Vec::new();
    if at == 2 || rng.below(3) > 0 {
        options.push(Opt::Arg("PERUSER", setting(rng, at, 3)));
    }
    if rng.below(8) > 0 {
        let hold = match rng.below(15) {
            0 => integer(rng, 3),
            _ => HOLDS[at].to_string(),
        };
        options.push(Opt::Arg(one(rng, &["HOLD", "hold"]), hold));
    }
    if (at >= 1 && rng.below(3 * at * at) > 0) || rng.chance(30) {
        let stream = match rng.below(20) {
            0 => key,
            1 => A_LIST,
            _ => LEDGER,
        };
        options.push(Opt::Key(one(rng, &["LEDGER", "ledger"]), stream));
    }
    if rng.chance(8) {
        options.push(Opt::Arg("MAXLEN", integer(rng, 1000)));
    }
    if rng.chance(40) {
        options.push(Opt::Arg(one(rng, &["ID", "PERUSER", "X"]), "1".into()));
    }
    let call = Call::new("COUPON.CREATE").key(key).arg(setting(rng, at, 4));
    with_options(call, rng, options)
}

/// A QTY value (a claim's units): mostly 1 to 3, sometimes anything.
fn qty(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => integer(rng, 3),
        1..=4 => "1".into(),
        _ => (2 + rng.below(2)).to_string(),
    }
}

/// `QTY` in either case.
fn qty_word(rng: &mut Rng) -> &'static str {
    one(rng, &["QTY", "qty", "Qty"])
}

/// A HOLD for campaign `at`: its own length, 600 s, or anything.
fn hold(rng: &mut Rng, at: usize) -> String {
    match rng.below(8) {
        0 => integer(rng, 3),
        1 => "600".into(),
        _ => HOLDS[at].to_string(),
    }
}

fn reserve(rng: &mut Rng) -> Call {
    let (at, key) = campaign_key(rng);
    let user = campaign_user(rng);
    let mut options = Vec::new();
    if rng.chance(3) {
        options.push(Opt::Arg("HOLD", hold(rng, at)));
    }
    // k3 takes a request id now and then, so its users hold many places.
    let with_id = match at {
        2 => rng.chance(4),
        _ => rng.below(3) > 0,
    };
    if with_id {
        let id = match rng.below(30) {
            0 => String::new(),
            _ => request_id(rng, &user),
        };
        options.push(Opt::Arg(one(rng, &["ID", "id"]), id));
    }
    // Units: with a request id reused, often another QTY than its claim's.
    if rng.chance(2) {
        options.push(Opt::Arg(qty_word(rng), qty(rng)));
    }
    if rng.chance(40) {
        options.push(Opt::Arg(one(rng, &["FROM", "HOLD", "QTY"]), "1".into()));
    }
    let call = Call::new("COUPON.RESERVE").key(key).bytes(&user);
    campaign_ledger(with_options(call, rng, options), rng, at)
}

/// A request id: one of a few that every user sends, or one of two of
/// `user`'s own (which the user repeats, now and then with another QTY).
fn request_id(rng: &mut Rng, user: &[u8]) -> String {
    match rng.below(4) {
        0 => format!("r{}", rng.below(6)),
        _ => format!("{}:r{}", String::from_utf8_lossy(user), rng.below(2)),
    }
}

/// A claim number: mostly one of the latest made on `at`.
fn claim_number(rng: &mut Rng, latest: &[i64; 3], at: usize) -> String {
    match rng.below(15) {
        0 => integer(rng, 3),
        _ => (latest[at] - rng.below(4) as i64).max(1).to_string(),
    }
}

fn confirm_or_release(rng: &mut Rng, latest: &[i64; 3]) -> Call {
    let (at, key) = campaign_key(rng);
    let command = match rng.below(4) {
        0 => "COUPON.RELEASE",
        1 => "COUPON.RENEW",
        _ => "COUPON.CONFIRM",
    };
    let call = Call::new(command).key(key);
    if rng.chance(60) {
        return call;
    }
    let mut call = call.arg(claim_number(rng, latest, at));
    if rng.chance(50) {
        call = call.arg(rng.pick(&["ID", "QTY"])).arg("x");
    }
    if command == "COUPON.RENEW" && rng.chance(2) {
        call = call.arg(rng.pick(&["HOLD", "hold"])).arg(hold(rng, at));
    }
    // CONFIRM's QTY, before or after `LEDGER stream` (never after a
    // LEDGER without its stream: the scripts would not know that the
    // module takes QTY for the stream); now and then twice.
    let units = command == "COUPON.CONFIRM" && rng.chance(2);
    let after = rng.chance(3);
    if units && !after {
        call = call.arg(qty_word(rng)).arg(qty(rng));
    }
    let mut call = campaign_ledger(call, rng, at);
    let bare_ledger =
        matches!(call.words.last(), Some(Word::Arg(a)) if a.eq_ignore_ascii_case(b"LEDGER"));
    if units && (after || rng.chance(30)) && !bare_ledger {
        call = call.arg(qty_word(rng)).arg(qty(rng));
    }
    call
}

fn info_or_claims(rng: &mut Rng, latest: &[i64; 3]) -> Call {
    let (at, key) = campaign_key(rng);
    if rng.chance(2) {
        let call = Call::new("COUPON.INFO").key(key);
        return if rng.chance(30) { call.arg("x") } else { call };
    }
    let mut options = Vec::new();
    if rng.chance(3) {
        options.push(Opt::Arg("FROM", claim_number(rng, latest, at)));
    }
    if rng.chance(3) {
        options.push(Opt::Arg("COUNT", integer(rng, 3)));
    }
    if rng.chance(40) {
        options.push(Opt::Arg("HOLD", "1".into()));
    }
    with_options(Call::new("COUPON.CLAIMS").key(key), rng, options)
}

fn reclaim(rng: &mut Rng) -> Call {
    let (at, key) = campaign_key(rng);
    let mut options = Vec::new();
    if rng.chance(2) {
        let count = match rng.below(10) {
            0 => integer(rng, 3),
            1 => rng.pick(&["10000", "10001"]).to_string(),
            _ => (1 + rng.below(3)).to_string(),
        };
        options.push(Opt::Arg(one(rng, &["COUNT", "count"]), count));
    }
    if rng.chance(40) {
        options.push(Opt::Arg("HOLD", "1".into()));
    }
    let call = with_options(Call::new("COUPON.RECLAIM").key(key), rng, options);
    campaign_ledger(call, rng, at)
}

/// ALTER keeps each campaign's hold length (or 600 s), as CREATE does.
fn alter(rng: &mut Rng) -> Call {
    let (at, key) = campaign_key(rng);
    let mut options = Vec::new();
    if rng.chance(2) {
        let limit = setting(rng, at, 4);
        options.push(Opt::Arg(one(rng, &["LIMIT", "limit"]), limit));
    }
    if rng.chance(2) {
        options.push(Opt::Arg("PERUSER", setting(rng, at, 3)));
    }
    if rng.chance(4) {
        options.push(Opt::Arg("HOLD", hold(rng, at)));
    }
    if rng.chance(40) {
        options.push(Opt::Arg("COUNT", "1".into()));
    }
    let call = with_options(Call::new("COUPON.ALTER").key(key), rng, options);
    campaign_ledger(call, rng, at)
}

/// A cart over campaigns of one hold length (k1 and k3, or k2 alone), so
/// that each campaign's holds still expire in the order they were made.
/// A QTY of the wrong count is refused before any key is read: such a
/// call takes a cart of two (k1 and k3) at any time.
fn reserve_all(rng: &mut Rng) -> Call {
    let miscount = rng.chance(6);
    let mut carts: Vec<Vec<usize>> = vec![vec![0], vec![1], vec![0, 2], vec![2, 0]];
    if !BURST.load(std::sync::atomic::Ordering::Relaxed) && !miscount {
        carts.truncate(2);
    }
    let cart = rng.pick(&carts).clone();
    let mut keys: Vec<&str> = cart.iter().map(|&at| CAMPAIGNS[at]).collect();
    match rng.below(30) {
        0 => keys.push(keys[0]),
        1 => keys.push(NO_CAMPAIGN),
        2 => keys.push(A_LIST),
        _ => {}
    }
    // numkeys one too many makes the user a key (as the packages declare
    // it), and nothing follows.
    let numkeys = match rng.below(30) {
        0 => rng.pick(&["0", "17", "x", "-1"]).to_string(),
        1 => (keys.len() + 1).to_string(),
        _ => keys.len().to_string(),
    };
    let mut call = Call::new("COUPON.RESERVEALL").arg(&numkeys);
    for key in keys {
        call = call.key(key);
    }
    let user = campaign_user(rng);
    let call = match numkeys.parse::<usize>() {
        Ok(n) if n == call.keys().len() + 1 => return call.key(user),
        _ => call.bytes(&user),
    };
    let mut options = Vec::new();
    if rng.chance(3) {
        options.push(Opt::Arg("HOLD", hold(rng, cart[0])));
    }
    if rng.chance(2) {
        options.push(Opt::Arg("ID", request_id(rng, &user)));
    }
    // QTY: a value per key, or one too few or too many.
    let per_key = match numkeys.parse::<usize>() {
        Ok(n) if n <= 16 => n,
        _ => call.keys().len(),
    };
    let mut units = None;
    if miscount || rng.below(3) > 0 {
        let count = match (miscount, rng.chance(2)) {
            (false, _) => per_key,
            (true, true) => per_key.saturating_sub(1),
            (true, false) => per_key + 1,
        };
        let values: Vec<String> = (0..count).map(|_| qty(rng)).collect();
        units = Some((qty_word(rng), values));
    }
    let at = cart.iter().copied().max().unwrap();
    match units {
        // Last (but never after a LEDGER without its stream, which the
        // module would take QTY for), so that too few values end the call.
        Some((name, values)) if rng.chance(2) => {
            let ledger = campaign_ledger(Call::new(""), rng, at);
            let bare = matches!(ledger.words.last(), Some(Word::Arg(_)));
            let call = with_options(call, rng, options);
            let (mut call, units) = (call, Call::new("").arg(name).args(values));
            let order = if bare {
                [units, ledger]
            } else {
                [ledger, units]
            };
            for part in order {
                call.words.extend(part.words);
            }
            call
        }
        Some((name, values)) => {
            options.push(Opt::Args(name, values));
            campaign_ledger(with_options(call, rng, options), rng, at)
        }
        None => campaign_ledger(with_options(call, rng, options), rng, at),
    }
}

/// A campaign call: its command, the call.
fn campaign(rng: &mut Rng, latest: &[i64; 3]) -> (&'static str, Call) {
    let burst = BURST.load(std::sync::atomic::Ordering::Relaxed);
    let call = match rng.below(13) {
        // k3's crowd: holds that expire together in the quiet that follows.
        _ if burst && rng.below(4) > 0 => {
            let call = Call::new("COUPON.RESERVE")
                .key(CAMPAIGNS[2])
                .arg(rng.pick(&USERS));
            let call = match rng.below(3) {
                0 => call.arg("QTY").arg(2 + rng.below(4)),
                _ => call,
            };
            call.arg("LEDGER").key(LEDGER)
        }
        0 => create(rng),
        1..=4 => reserve(rng),
        5..=7 => confirm_or_release(rng, latest),
        8 => reclaim(rng),
        9 => alter(rng),
        10 => reserve_all(rng),
        _ => info_or_claims(rng, latest),
    };
    let name = [
        "COUPON.RESERVEALL",
        "COUPON.RECLAIM",
        "COUPON.ALTER",
        "COUPON.CREATE",
        "COUPON.RESERVE",
        "COUPON.CONFIRM",
        "COUPON.RELEASE",
        "COUPON.RENEW",
        "COUPON.INFO",
        "COUPON.CLAIMS",
    ]
    .into_iter()
    .find(|name| *name == call.command)
    .unwrap();
    (name, call)
}

/// What both backends must show of the campaigns a call names, read
/// right after it on each: COUPON.INFO and COUPON.CLAIMS (the module's
/// commands on one, the scripts on the other).
fn campaign_views(
    call: &Call,
    con: &mut Connection,
    by_script: bool,
) -> Vec<Result<Value, String>> {
    let mut views = Vec::new();
    for key in call.keys() {
        if !CAMPAIGNS.iter().any(|k| k.as_bytes() == key) {
            continue;
        }
        for view in [
            Call::new("COUPON.INFO").key(key),
            Call::new("COUPON.CLAIMS").key(key).arg("COUNT").arg(1000),
        ] {
            let seen = outcome(view.on(con, by_script));
            views.push(if by_script {
                seen.map(as_integers)
            } else {
                seen
            });
        }
    }
    views
}

/// The expiries of each campaign's live holds, on either backend.
type Holds = std::collections::HashMap<String, Vec<i64>>;

/// Keeps `holds` as the views of the campaigns `call` names show them.
fn note_holds(holds: &mut Holds, call: &Call, views: [&[Result<Value, String>]; 2]) {
    let named = call
        .keys()
        .into_iter()
        .filter(|key| CAMPAIGNS.iter().any(|k| k.as_bytes() == *key));
    for (i, key) in named.enumerate() {
        let held = views
            .iter()
            .flat_map(|v| hold_expiries(v.get(2 * i + 1)))
            .collect();
        holds.insert(String::from_utf8_lossy(key).into_owned(), held);
    }
}

/// The expiries of the live holds COUPON.CLAIMS lists.
fn hold_expiries(reply: Option<&Result<Value, String>>) -> Vec<i64> {
    let Some(Ok(Value::Array(rows))) = reply else {
        return Vec::new();
    };
    rows.iter()
        .filter_map(|row| match row {
            Value::Array(fields) => match fields.get(3) {
                Some(Value::Int(at)) if *at > 0 => Some(*at),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Equal, but for times in ms (integers past 10^12) that may be
/// `tolerance` apart: the two servers' instants of a call differ.
fn alike(a: &Value, b: &Value, tolerance: i64) -> bool {
    let time = |v: &Value| {
        match v {
            Value::Int(n) => Some(*n),
            Value::BulkString(digits) => std::str::from_utf8(digits).ok()?.parse().ok(),
            _ => None,
        }
        .filter(|n: &i64| *n > 1_000_000_000_000)
    };
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| alike(x, y, tolerance))
        }
        _ => match (time(a), time(b)) {
            (Some(x), Some(y)) => (x - y).abs() <= tolerance,
            _ => a == b,
        },
    }
}

fn alike_outcomes(
    a: &[Result<Value, String>],
    b: &[Result<Value, String>],
    tolerance: i64,
) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|pair| match pair {
            (Ok(x), Ok(y)) => alike(x, y, tolerance),
            (x, y) => x == y,
        })
}

/// How far apart (ms) the two servers' instants of a call may be, as the
/// settling below allows for: from an instant where the call's answer may
/// change, the calls keep MARGIN before and AHEAD after.
const MARGIN: i64 = 3;
const AHEAD: i64 = 10;

/// The instants (server ms) around now where a call's answer may change,
/// so that no call lands on one server before one and on the other after
/// it: its keys' expiries; for a window, the ends of its reports' holds
/// (read from the scripts' layout) and its buckets' edges (every `period`
/// ms); for a distinct set, the instants its members age out.
struct Edges {
    instants: Vec<i64>,
    period: Option<i64>,
}

impl Edges {
    fn of(call: &Call, module: &mut Connection, plain: &mut Connection, holds: &Holds) -> Edges {
        let keys: Vec<String> = call
            .keys()
            .iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        let mut instants: Vec<i64> = keys
            .iter()
            .flat_map(|key| [pexpiretime(module, key), pexpiretime(plain, key)])
            .filter(|&at| at > 0)
            .collect();
        let args: Vec<String> = call
            .other_args()
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let window_ms = args
            .get(1)
            .and_then(|w| w.parse::<i64>().ok())
            .filter(|w| (1..1_000_000).contains(w))
            .map(|w| w * 1000);
        // A calendar window ends on a minute, or on a quarter hour (every
        // zone's hours, days and months start on one).
        let mut period = match args.get(1).map(|w| w.to_lowercase()).as_deref() {
            Some("minute") => Some(60_000),
            Some("hour" | "day" | "week" | "month") => Some(900_000),
            _ => None,
        };
        match (call.command.as_str(), window_ms) {
            ("MON.SLIDECHECK", Some(window_ms)) => {
                let buckets = args
                    .iter()
                    .position(|a| a.eq_ignore_ascii_case("BUCKETS"))
                    .and_then(|at| args.get(at + 1)?.parse::<i64>().ok())
                    .unwrap_or_else(|| (1..=60).rev().find(|n| window_ms % n == 0).unwrap());
                if buckets > 0 && window_ms % buckets == 0 {
                    period = Some(window_ms / buckets);
                }
                let fields: Vec<(String, String)> = redis::cmd("HGETALL")
                    .arg(&keys[0])
                    .query(plain)
                    .unwrap_or_default();
                let held: i64 = fields
                    .iter()
                    .find(|(f, _)| f == "window")
                    .and_then(|(_, w)| w.parse().ok())
                    .map_or(0, |w: i64| w * 1000);
                instants.extend(
                    fields
                        .iter()
                        .filter(|(f, _)| f.starts_with("r:"))
                        .filter_map(|(_, at)| at.parse::<i64>().ok())
                        .map(|at| at + held),
                );
            }
            ("MON.DISTINCT", Some(window_ms)) => {
                let now = now_ms();
                let seen: Vec<(String, f64)> = redis::cmd("ZRANGEBYSCORE")
                    .arg(&keys[0])
                    .arg(now - window_ms - 100)
                    .arg(now - window_ms + 100)
                    .arg("WITHSCORES")
                    .query(module)
                    .unwrap_or_default();
                instants.extend(seen.iter().map(|(_, at)| *at as i64 + window_ms));
            }
            _ => {}
        }
        // A campaign's holds (as each backend showed them after the last
        // call that named it): each is live through its expiry, gone the
        // ms after.
        for key in &keys {
            if let Some(held) = holds.get(key.as_str()) {
                instants.extend(held.iter().flat_map(|&at| [at, at + 1]));
            }
        }
        Edges { instants, period }
    }

    /// The edges within `from..=to`.
    fn within(&self, from: i64, to: i64) -> impl Iterator<Item = i64> + '_ {
        let steps = self.period.into_iter().filter_map(move |w| {
            let last = to.div_euclid(w) * w;
            (last >= from).then_some(last)
        });
        self.instants
            .iter()
            .copied()
            .filter(move |at| (from..=to).contains(at))
            .chain(steps)
    }

    /// Waits until no edge is within MARGIN before now or AHEAD after.
    fn settle(&self) {
        loop {
            let now = now_ms();
            match self.within(now - MARGIN, now + AHEAD).max() {
                Some(edge) => std::thread::sleep(std::time::Duration::from_millis(
                    (edge - now + MARGIN + 1) as u64,
                )),
                None => return,
            }
        }
    }
}

/// A script's reply with the integers past 2^53 it sends as digits made
/// integers again.
fn as_integers(reply: Value) -> Value {
    match reply {
        Value::Array(items) => Value::Array(items.into_iter().map(as_integers).collect()),
        Value::BulkString(digits) => match std::str::from_utf8(&digits)
            .ok()
            .and_then(|d| d.parse::<i64>().ok())
        {
            Some(n) if n.unsigned_abs() > 1 << 53 => Value::Int(n),
            _ => Value::BulkString(digits),
        },
        other => other,
    }
}

/// Makes one call of a command, valid or not.
type Generator = fn(&mut Rng) -> Call;

/// A limiter's `max_burst count period`: mostly small, valid and quick to
/// refill, sometimes anything.
fn limiter_args(rng: &mut Rng) -> [String; 3] {
    if rng.below(15) == 0 {
        return [integer(rng, 3), integer(rng, 5), integer(rng, 3)];
    }
    let period = *rng.pick(&[1, 2, 60]);
    [
        rng.below(4).to_string(),
        (1 + rng.below(6)).to_string(),
        period.to_string(),
    ]
}

fn quantity(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => integer(rng, 3),
        1 => "0".into(),
        _ => (1 + rng.below(3)).to_string(),
    }
}

fn throttle(rng: &mut Rng) -> Call {
    let mut call = Call::new("CL.THROTTLE")
        .key(rng.pick(&CELLS))
        .args(limiter_args(rng));
    if rng.below(2) == 0 {
        call = call.arg(quantity(rng));
    }
    if rng.below(40) == 0 {
        call = call.arg("1");
    }
    block(rng, call)
}

/// `BLOCK seconds` now and then: mostly valid (short, so cells refill
/// within the run), sometimes anything, repeated, or without its value.
fn block(rng: &mut Rng, call: Call) -> Call {
    match rng.below(12) {
        0..=2 => call
            .arg(rng.pick(&["BLOCK", "block", "Block"]))
            .arg(1 + rng.below(3)),
        3 => call.arg("BLOCK").arg(integer(rng, 3)),
        4 if rng.chance(4) => call.arg("BLOCK").arg(2).arg("BLOCK").arg(1),
        5 if rng.chance(4) => call.arg("BLOCK"),
        6 if rng.chance(4) => call.arg("BLOCK").arg("8000000000"),
        _ => call,
    }
}

fn refund(rng: &mut Rng) -> Call {
    let call = Call::new("CL.REFUND")
        .key(rng.pick(&CELLS))
        .args(limiter_args(rng));
    match rng.below(15) {
        0 => call,
        1 => call.arg(integer(rng, 3)).arg(1),
        2 => call.arg(rng.pick(&["0", "-1", "x"])),
        _ => call.arg(1 + rng.below(4)),
    }
}

fn throttle_all(rng: &mut Rng) -> Call {
    let n = 1 + rng.below(3);
    let numkeys = match rng.below(30) {
        0 => rng.pick(&["0", "17", "x", "4"]).to_string(),
        _ => n.to_string(),
    };
    let mut call = Call::new("CL.THROTTLEALL").arg(numkeys);
    let mut keys: Vec<&str> = CELLS.to_vec();
    for _ in 0..n {
        let key = if rng.below(25) == 0 {
            CELLS[0]
        } else {
            keys.remove(rng.below(keys.len()))
        };
        call = call.key(key).args(limiter_args(rng));
    }
    if rng.below(2) == 0 {
        call = call
            .arg(rng.pick(&["QUANTITY", "quantity", "QTY"]))
            .arg(quantity(rng));
    }
    block(rng, call)
}

/// The limiters, quantity and `BLOCK` seconds of a valid CL.THROTTLE,
/// CL.THROTTLEALL or CL.REFUND call, as its words say.
fn limiters_of(call: &Call) -> (Vec<Limiter>, i64, Option<i64>) {
    let words: Vec<String> = call
        .other_args()
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let int = |w: &String| w.parse::<i64>().unwrap();
    let (groups, mut options) = if call.command == "CL.THROTTLEALL" {
        let n = int(&words[0]) as usize;
        (&words[1..1 + 3 * n], &words[1 + 3 * n..])
    } else {
        (&words[..3], &words[3..])
    };
    let mut quantity = 1;
    if let Some(first) = options.first().filter(|w| !w.eq_ignore_ascii_case("BLOCK")) {
        if call.command != "CL.THROTTLEALL" {
            quantity = int(first);
            options = &options[1..];
        }
    }
    let mut block = None;
    for pair in options.chunks(2) {
        if pair[0].eq_ignore_ascii_case("BLOCK") {
            block = Some(int(&pair[1]));
        } else {
            quantity = int(&pair[1]);
        }
    }
    let limiters = groups
        .chunks(3)
        .map(|g| Limiter {
            max_burst: int(&g[0]),
            count: int(&g[1]),
            period: int(&g[2]),
        })
        .collect();
    (limiters, quantity, block)
}

/// Every reply a valid throttle call may get at an instant of `bracket`
/// from cells holding `tats`, as SPEC says.
fn throttle_replies(call: &Call, tats: &[Option<i64>], bracket: (i64, i64)) -> Vec<Value> {
    let (limiters, quantity, block) = limiters_of(call);
    let ints = |v: &[i64]| Value::Array(v.iter().map(|&n| Value::Int(n)).collect());
    within(bracket, |now| match (call.command.as_str(), block) {
        ("CL.REFUND", _) => ints(&gcra::refund(tats[0], now, &limiters[0], quantity).0),
        ("CL.THROTTLE", None) => ints(&gcra::throttle(tats[0], now, &limiters[0], quantity).0),
        ("CL.THROTTLE", Some(s)) => {
            ints(&gcra::throttle_blocking(tats[0], now, &limiters[0], quantity, s).0)
        }
        _ => {
            let reply = match block {
                None => gcra::throttle_all(tats, now, &limiters, quantity),
                Some(s) => gcra::throttle_all_blocking(tats, now, &limiters, quantity, s).0,
            };
            let mut items: Vec<Value> = reply[0].iter().map(|&n| Value::Int(n)).collect();
            items.extend(reply[1..].iter().map(|cell| ints(cell)));
            Value::Array(items)
        }
    })
}

/// The arrival times a call's cells hold.
fn tats(con: &mut Connection, call: &Call) -> Vec<Option<i64>> {
    call.keys()
        .into_iter()
        .map(|key| {
            let value: Option<String> = redis::cmd("GET").arg(key).query(con).ok()?;
            value.and_then(|v| v.parse().ok())
        })
        .collect()
}

/// What a key holds, as both backends must leave it: its type (a window
/// is the module's type on one and the scripts' hash on the other: both
/// "window"), its value (a string's; a stream's entries without their
/// IDs; a set's members, sorted; a sorted set's members, sorted, whose
/// scores come apart), a sorted set's scores, and its expiry.
fn state(con: &mut Connection, key: &str) -> (String, Value, Vec<f64>, i64) {
    let mut kind: String = redis::cmd("TYPE").arg(key).query(con).unwrap();
    let mut scores = Vec::new();
    let value = match kind.as_str() {
        "string" => redis::cmd("GET").arg(key).query(con).unwrap(),
        "stream" => {
            let entries: Vec<(String, Value)> = redis::cmd("XRANGE")
                .arg(key)
                .arg("-")
                .arg("+")
                .query(con)
                .unwrap();
            Value::Array(entries.into_iter().map(|(_, fields)| fields).collect())
        }
        "set" => {
            let mut members: Vec<Vec<u8>> = redis::cmd("SMEMBERS").arg(key).query(con).unwrap();
            members.sort();
            Value::Array(members.into_iter().map(Value::BulkString).collect())
        }
        "zset" if holds_campaign(con, key) => {
            kind = "campaign".into();
            Value::Nil
        }
        "zset" => {
            let mut seen: Vec<(Vec<u8>, f64)> = redis::cmd("ZRANGE")
                .arg(key)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query(con)
                .unwrap();
            seen.sort_by(|a, b| a.0.cmp(&b.0));
            scores = seen.iter().map(|(_, at)| *at).collect();
            Value::Array(
                seen.into_iter()
                    .map(|(m, _)| Value::BulkString(m))
                    .collect(),
            )
        }
        "guard-win" => {
            kind = "window".into();
            Value::Nil
        }
        // COUPON.INFO and COUPON.CLAIMS compare campaigns.
        "guard-cpn" => {
            kind = "campaign".into();
            Value::Nil
        }
        "hash" if key != A_HASH => {
            kind = "window".into();
            Value::Nil
        }
        _ => Value::Nil,
    };
    (kind, value, scores, pexpiretime(con, key))
}

/// Does the sorted set `key` hold a campaign in the scripts' layout (its
/// first member the settings', scored 0)?
fn holds_campaign(con: &mut Connection, key: &str) -> bool {
    let first: Vec<(Vec<u8>, f64)> = redis::cmd("ZRANGE")
        .arg(key)
        .arg(0)
        .arg(0)
        .arg("WITHSCORES")
        .query(con)
        .unwrap();
    matches!(&first[..], [(member, score)] if *score == 0.0 && member.starts_with(b"A"))
}

fn type_of(con: &mut Connection, key: &str) -> String {
    redis::cmd("TYPE").arg(key).query(con).unwrap()
}

/// Deletes the keys the calls build on.
fn start_again(cons: &mut [&mut Connection]) {
    for con in cons {
        let _: () = redis::cmd("DEL")
            .arg(&COUNTERS)
            .arg(&WINDOWS)
            .arg(&DISTINCTS)
            .arg(&COUPONS)
            .query(*con)
            .unwrap();
    }
}

#[test]
fn every_script_answers_as_the_module_call_by_call() {
    let module_server = Server::start();
    let plain_server = Server::without_module(&[]);
    let (mut module, mut plain) = (module_server.con(), plain_server.con());
    for con in [&mut module, &mut plain] {
        let _: () = redis::cmd("RPUSH").arg(A_LIST).arg("x").query(con).unwrap();
        let _: () = redis::cmd("HSET")
            .arg(A_HASH)
            .arg("window")
            .arg("1")
            .query(con)
            .unwrap();
    }
    let generators: [(&str, Generator); 10] = [
        ("MON.INCRCHECK", incrcheck),
        ("CL.QUOTA", quota),
        ("MON.DECRCLAMP", decrclamp),
        ("CL.THROTTLE", throttle),
        ("CL.THROTTLEALL", throttle_all),
        ("CL.REFUND", refund),
        ("MON.SLIDECHECK", slidecheck),
        ("MON.DISTINCT", distinct),
        ("COUPON.ISSUE", issue),
        ("COUPON.REVOKE", revoke),
    ];
    // The most the two servers' instants of one call were apart, ns: a
    // throttle cell's arrival time may differ by that.
    let mut drift = 0;
    // Calls with an edge inside: not compared, their keys deleted.
    let mut straddled = 0;
    // The climbing window's sum.
    let mut climbed = 0;
    let mut rng = Rng(SEED);
    let mut compared = std::collections::BTreeMap::<&str, (usize, usize)>::new();
    // Of those, the calls that say QTY (a claim's units).
    let mut with_qty = std::collections::BTreeMap::<&str, (usize, usize)>::new();
    // The latest claim made on each campaign, which CONFIRM and RELEASE
    // mostly name.
    let mut latest = [1; 3];
    let mut holds = Holds::new();
    for i in 0..calls() {
        // k3's bursts: 200 calls (about half a second, less than its
        // holds) in every 2,000, so its holds expire in the quiet between.
        BURST.store(i % 2000 < 200, std::sync::atomic::Ordering::Relaxed);
        let (name, mut call) = if i % 2000 == 0 {
            // Each burst finds k3, made now if it is missing.
            let call = Call::new("COUPON.CREATE")
                .key(CAMPAIGNS[2])
                .arg(1000)
                .arg("PERUSER")
                .arg(1000)
                .arg("HOLD")
                .arg(HOLDS[2])
                .arg("LEDGER")
                .key(LEDGER);
            ("COUPON.CREATE", call)
        } else if rng.chance(3) {
            campaign(&mut rng, &latest)
        } else {
            let (name, generate) = *rng.pick(&generators);
            let call = if name == "MON.SLIDECHECK" && rng.chance(3) {
                climbing(&mut rng, climbed)
            } else {
                generate(&mut rng)
            };
            (name, call)
        };
        // GCRA cells (CL.REFUND's too): replies judged against SPEC's model
        // at the instants of the call, as their arrival times may differ by
        // the drift.
        let throttles = name.starts_with("CL.THROTTLE") || name == "CL.REFUND";
        // Keys start again now and then (after this call), so windows
        // start again too.
        let restart = rng.below(200) == 0;
        // Campaigns live longer, so that their holds expire.
        let campaigns_restart = rng.below(1500) == 0;
        if rng.below(50) == 0 {
            // A key of another type where the first key goes.
            let other = if throttles {
                A_LIST
            } else {
                *rng.pick(&OTHER_TYPES)
            };
            if let Some(first) = call.words.iter_mut().find(|w| matches!(w, Word::Key(_))) {
                *first = Word::Key(other.into());
            }
        }
        let edges = Edges::of(&call, &mut module, &mut plain, &holds);
        edges.settle();
        let (module_tats, script_tats) = if throttles {
            (tats(&mut module, &call), tats(&mut plain, &call))
        } else {
            Default::default()
        };
        let before = now_ns();
        let by_module = outcome(call.module(&mut module));
        let by_script = outcome(call.script(&mut plain)).map(as_integers);
        drift = drift.max(now_ns() - before);
        // The campaigns as each backend shows them now.
        let module_views = campaign_views(&call, &mut module, false);
        let script_views = campaign_views(&call, &mut plain, true);
        let bracket = (before, now_ns());
        let apart = (bracket.1 - bracket.0) / 1_000_000 + 1;
        note_holds(&mut holds, &call, [&module_views, &script_views]);
        let what = format!("call {i} (seed {SEED:#x}): {call:?}");
        if let (Some(at), Ok(Value::Array(reply))) = (
            CAMPAIGNS
                .iter()
                .position(|k| call.command == "COUPON.RESERVE" && call.keys()[0] == k.as_bytes()),
            &by_module,
        ) {
            if let Some(Value::Int(claim)) = reply.first().filter(|_| reply.len() == 2) {
                latest[at] = latest[at].max(*claim);
            }
        }
        if let (true, Ok(Value::Array(reply))) = (call.keys() == [CLIMBING.as_bytes()], &by_module)
        {
            if let Some(Value::Int(sum)) = reply.first() {
                climbed = *sum;
            }
        }
        // What the call may have written: its keys.
        let named: Vec<String> = call
            .keys()
            .iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        if edges
            .within(
                bracket.0 / 1_000_000 - MARGIN,
                bracket.1 / 1_000_000 + MARGIN,
            )
            .next()
            .is_some()
        {
            straddled += 1;
            for con in [&mut module, &mut plain] {
                let _: () = redis::cmd("DEL").arg(&named).query(con).unwrap();
            }
            if restart {
                start_again(&mut [&mut module, &mut plain]);
            }
            continue;
        }
        match (&by_module, &by_script) {
            // A limiter's reply depends on the instant: each must be one
            // SPEC gives at an instant of the call for its own cells (whose
            // arrival times may differ by the drift), and the two equal
            // where no step of the rules falls inside that for either.
            (Ok(mine), Ok(theirs)) if throttles => {
                let could = throttle_replies(&call, &module_tats, bracket);
                assert!(
                    could.contains(mine),
                    "module {mine:?}, SPEC {could:?}: {what}"
                );
                let could_too = throttle_replies(&call, &script_tats, bracket);
                assert!(
                    could_too.contains(theirs),
                    "script {theirs:?}, SPEC {could_too:?}: {what}"
                );
                if could.len() == 1 && could == could_too {
                    assert_eq!(theirs, mine, "the reply: {what}");
                }
            }
            // A campaign's replies, INFO and CLAIMS carry hold expiries,
            // each made at its server's instant of the call.
            _ if !module_views.is_empty() || name.starts_with("COUPON.") => {
                let tolerance = drift / 1_000_000 + 1;
                assert!(
                    alike_outcomes(
                        std::slice::from_ref(&by_script),
                        std::slice::from_ref(&by_module),
                        tolerance
                    ),
                    "the reply: script {by_script:?}, module {by_module:?}: {what}"
                );
                assert!(
                    alike_outcomes(&script_views, &module_views, tolerance),
                    "INFO and CLAIMS: script {script_views:?}, module {module_views:?} after {what}"
                );
            }
            // A quota's times are whole seconds rounded up from each
            // server's instant: one second apart at most.
            (Ok(Value::Array(mine)), Ok(Value::Array(theirs))) if name == "CL.QUOTA" => {
                assert_eq!(theirs[..3], mine[..3], "the reply: {what}");
                for (a, b) in mine[3..].iter().zip(&theirs[3..]) {
                    assert!(
                        matches!((a, b), (Value::Int(a), Value::Int(b)) if (a - b).abs() <= 1),
                        "the reply: script {theirs:?}, module {mine:?}: {what}"
                    );
                }
            }
            _ => assert_eq!(by_script, by_module, "the reply: {what}"),
        }
        let counts = compared.entry(name).or_default();
        if by_module.is_ok() {
            counts.0 += 1;
        } else {
            counts.1 += 1;
        }
        if call.command.starts_with("COUPON.")
            && call
                .other_args()
                .iter()
                .any(|a| a.eq_ignore_ascii_case(b"QTY"))
        {
            let counts = with_qty.entry(name).or_default();
            if by_module.is_ok() {
                counts.0 += 1;
            } else {
                counts.1 += 1;
            }
        }
        let close = |a: i64, b: i64| (a - b).abs() <= drift / 1_000_000 + 1;
        for key in &named {
            let (kind, value, scores, expiry) = state(&mut module, key);
            let (script_kind, script_value, script_scores, script_expiry) = state(&mut plain, key);
            if CELLS.contains(&key.as_str()) {
                assert_eq!(script_kind, kind, "{key} after {what}");
                let tat = |value: &Value| match value {
                    Value::BulkString(digits) => {
                        std::str::from_utf8(digits).unwrap().parse::<i64>().ok()
                    }
                    _ => None,
                };
                if let (Some(mine), Some(theirs)) = (tat(&value), tat(&script_value)) {
                    assert!(
                        (mine - theirs).abs() <= drift,
                        "{key}: {mine} and {theirs} after {what}"
                    );
                    assert!(close(expiry, script_expiry), "{key} after {what}");
                } else {
                    assert_eq!(script_value, value, "{key} after {what}");
                }
                continue;
            }
            // A window ending between the two reads: one side has just
            // expired it.
            let just_ended = |kind: &str, other_expiry: i64| {
                kind == "none" && other_expiry > 0 && other_expiry <= now_ms() + apart
            };
            if just_ended(&kind, script_expiry) || just_ended(&script_kind, expiry) {
                continue;
            }
            assert_eq!(script_kind, kind, "{key} after {what}");
            if key == LEDGER {
                assert!(
                    alike(&script_value, &value, drift / 1_000_000 + 1),
                    "{key}: script {script_value:?}, module {value:?} after {what}"
                );
            } else {
                assert_eq!(script_value, value, "{key} after {what}");
            }
            assert!(
                scores
                    .iter()
                    .zip(&script_scores)
                    .all(|(&a, &b)| close(a as i64, b as i64)),
                "{key}'s scores: script {script_scores:?}, module {scores:?} after {what}"
            );
            assert!(
                (script_expiry < 0 && script_expiry == expiry)
                    || (expiry > 0 && close(script_expiry, expiry)),
                "{key}'s expiry: script {script_expiry}, module {expiry} after {what}"
            );
        }
        if restart {
            start_again(&mut [&mut module, &mut plain]);
        }
        // ISSUE on a missing campaign makes a set of winners there: gone
        // again, so the campaign keys mostly hold campaigns.
        let sets: Vec<&str> = match name {
            "COUPON.ISSUE" => CAMPAIGNS
                .into_iter()
                .filter(|key| type_of(&mut module, key) == "set")
                .collect(),
            _ => Vec::new(),
        };
        for con in [&mut module, &mut plain] {
            let _: () = redis::cmd("DEL")
                .arg(NO_CAMPAIGN)
                .arg(&sets)
                .query(con)
                .unwrap();
        }
        if campaigns_restart {
            for con in [&mut module, &mut plain] {
                let _: () = redis::cmd("DEL")
                    .arg(&CAMPAIGNS)
                    .arg(LEDGER)
                    .query(con)
                    .unwrap();
            }
        }
    }
    let total: usize = compared.values().map(|(r, e)| r + e).sum();
    eprintln!(
        "{total} calls compared, {straddled} left out (an edge between the two servers' instants), \
         the two apart by {:.1} ms at most",
        drift as f64 / 1e6
    );
    for (name, (replies, errors)) in &compared {
        eprintln!("{name}: {replies} replies and {errors} errors compared");
        assert!(
            *replies > 0 && *errors > 0,
            "{name}: both kinds must be compared"
        );
    }
    for (name, (replies, errors)) in &with_qty {
        eprintln!("{name} with QTY: {replies} replies and {errors} errors compared");
    }
    for name in ["COUPON.RESERVE", "COUPON.CONFIRM", "COUPON.RESERVEALL"] {
        let (replies, errors) = with_qty.get(name).copied().unwrap_or_default();
        assert!(
            replies > 0 && errors > 0,
            "{name} with QTY: both kinds must be compared"
        );
    }
}

/// MON.INCRCHECK's fast path (above the prelude) on counters about 2^53,
/// where a Lua number stops being the counter, and near the 64-bit edge:
/// the reply is the counter plus the increment, as the module's, and so
/// is what is stored.
#[test]
fn the_incrcheck_fast_path_answers_the_exact_counter_past_2_53() {
    let (module_server, plain_server) = (Server::start(), Server::without_module(&[]));
    let (mut module, mut plain) = (module_server.con(), plain_server.con());
    let edge = 1_i64 << 53;
    let starts = [
        edge - 3,
        edge - 1,
        edge,
        edge + 1,
        i64::MAX - 4,
        -edge - 2,
        -edge,
    ];
    for start in starts {
        for increment in [1_i64, 2] {
            let expected = start + increment;
            let call = Call::new("MON.INCRCHECK")
                .key("big")
                .arg(increment)
                .arg(60)
                .arg(5);
            for (con, script) in [(&mut module, false), (&mut plain, true)] {
                let _: () = redis::cmd("SET").arg("big").arg(start).query(con).unwrap();
                let reply = as_integers(call.on(con, script).unwrap());
                let values = Value::Array(vec![Value::Int(expected), Value::Int(0)]);
                assert_eq!(reply, values, "{start} + {increment}, script: {script}");
                let stored: i64 = redis::cmd("GET").arg("big").query(con).unwrap();
                assert_eq!(stored, expected);
            }
        }
    }
}

/// The prelude's exact integers against Rust's i128: sums, products,
/// comparisons and floor divisions of operands drawn around the edges of
/// the scripts' fast path (15 characters: Lua numbers below 10^15) and of
/// the 64-bit range, every answer a canonical decimal string.
#[test]
fn the_preludes_integers_are_exact() {
    let server = Server::without_module(&[]);
    let mut con = server.con();
    let prelude = std::fs::read_to_string(common::scripts::script_path("prelude")).unwrap();
    let script = redis::Script::new(
        &(prelude
            + "local a, b = ARGV[1], ARGV[2]\n\
           local q, r = '', ''\n\
           if int_cmp(b, '0') > 0 then q, r = int_floordiv(a, b) end\n\
           return {int_add(a, b), int_sub(a, b), int_mul(a, b), int_cmp(a, b), q, r}"),
    );
    let mut rng = Rng(SEED ^ 0x1e7);
    let edges: [i128; 8] = [
        0,
        1,
        999_999_999_999_999,
        1_000_000_000_000_000,
        99_999_999_999_999,
        (1 << 53) - 1,
        1_764_000_000_000_000_000,
        i64::MAX as i128,
    ];
    let draw = |rng: &mut Rng| -> i128 {
        let base = edges[rng.below(edges.len())];
        let near = base + rng.below(7) as i128 - 3;
        let scaled = (rng.below(1 << 30) as i128) * 10_i128.pow(rng.below(10) as u32);
        let value = if rng.below(2) == 0 { near } else { scaled };
        let value = value.clamp(i64::MIN as i128 + 1, i64::MAX as i128);
        if rng.below(3) == 0 {
            -value
        } else {
            value
        }
    };
    for _ in 0..3_000 {
        let (a, b) = (draw(&mut rng), draw(&mut rng));
        let got: Vec<Value> = script
            .arg(a.to_string())
            .arg(b.to_string())
            .invoke(&mut con)
            .unwrap();
        let text = |v: &Value| match v {
            Value::BulkString(bytes) => String::from_utf8(bytes.clone()).unwrap(),
            Value::Int(n) => n.to_string(),
            other => panic!("{other:?}"),
        };
        let got: Vec<String> = got.iter().map(text).collect();
        let (q, r) = if b > 0 {
            (a.div_euclid(b).to_string(), a.rem_euclid(b).to_string())
        } else {
            (String::new(), String::new())
        };
        let expected = [
            (a + b).to_string(),
            (a - b).to_string(),
            (a * b).to_string(),
            (a.cmp(&b) as i8).to_string(),
            q,
            r,
        ];
        assert_eq!(got, expected, "{a} and {b}");
    }
}

/// A zone (as the packages encode one) whose clocks go back an hour at
/// 00:15, ten minutes from now, when it is 00:05 there: the day ends at
/// the change, where its local date goes back to yesterday, not when the
/// clock reaches the next midnight. (No IANA zone does this today, so the
/// module cannot be asked; SPEC's rule is the first instant in another
/// period.)
#[test]
fn a_day_ends_where_a_change_takes_the_clock_back_past_midnight() {
    let server = Server::without_module(&[]);
    let mut con = server.con();
    let (now, _): (i64, i64) = redis::cmd("TIME").query(&mut con).unwrap();
    // 00:05 local: 300 s past a UTC midnight, kept (with the hour the
    // clocks go back) within a day of UTC, as zones' offsets are; from
    // 23:05 UTC on that is tomorrow's midnight (the clean-clone CI failed
    // at 23:40 with an offset a day and 17 minutes behind).
    let mut before = 300 - now.rem_euclid(86_400);
    if before - 3600 <= -86_400 {
        before += 86_400;
    }
    let change = now + 600;
    let zone = format!(
        "Test/Back|{}|{}|{before}|{change}:{}",
        now - 86_400,
        now + 40 * 86_400,
        before - 3600
    );
    let reply = Call::new("CL.QUOTA")
        .key("q")
        .arg(5)
        .arg("day")
        .arg("TZ")
        .arg(&zone)
        .script(&mut con)
        .unwrap();
    assert_eq!(
        reply,
        Value::Array(vec![
            Value::Int(0),
            Value::Int(5),
            Value::Int(4),
            Value::Int(-1),
            Value::Int(600)
        ])
    );
    let expiry: i64 = redis::cmd("PEXPIRETIME").arg("q").query(&mut con).unwrap();
    assert_eq!(expiry, change * 1000);
}

/// A refused call counts one error on the server, as the module's does:
/// a fast path must not let a command inside the script fail first (a
/// failed `redis.pcall` is counted too). Each case from the same data on
/// both servers, the scripts loaded beforehand (a NOSCRIPT counts).
#[test]
fn a_script_counts_the_errors_the_module_counts() {
    let (module_server, plain_server) = (Server::start(), Server::without_module(&[]));
    let (mut module, mut plain) = (module_server.con(), plain_server.con());
    let errors = |con: &mut Connection| -> Vec<String> {
        let info: String = redis::cmd("INFO").arg("all").query(con).unwrap();
        let mut counted: Vec<String> = info
            .lines()
            .filter(|l| l.starts_with("errorstat_") || l.starts_with("total_error_replies"))
            .map(str::to_string)
            .collect();
        counted.sort();
        counted
    };
    let incrcheck = || Call::new("MON.INCRCHECK").key("k").arg(1).arg(60).arg(5);
    let throttle = || Call::new("CL.THROTTLE").key("k").arg(3).arg(10).arg(60);
    let decrclamp = || Call::new("MON.DECRCLAMP").key("k").arg(1);
    let cases: [(&[&str], Call); 9] = [
        (&["SET", "k", "abc"], incrcheck()),
        (&["SET", "k", "9223372036854775807"], incrcheck()),
        (&["RPUSH", "k", "1"], incrcheck()),
        (&["RPUSH", "k", "1"], throttle()),
        (&["HSET", "k", "a", "1"], throttle()),
        (&["SET", "k", "abc"], throttle()),
        (&["SET", "k", "abc"], decrclamp()),
        (&["RPUSH", "k", "1"], decrclamp()),
        (
            &["RPUSH", "k", "1"],
            Call::new("COUPON.ISSUE").key("k").arg("u").arg(5),
        ),
    ];
    for (setup, call) in &cases {
        let mut seen = Vec::new();
        for (con, script) in [(&mut module, false), (&mut plain, true)] {
            let _: () = redis::cmd("FLUSHALL").query(con).unwrap();
            let _: Value = redis::cmd(setup[0]).arg(&setup[1..]).query(con).unwrap();
            if script {
                let _: String = redis::cmd("SCRIPT")
                    .arg("LOAD")
                    .arg(common::scripts::script_source(&call.command))
                    .query(con)
                    .unwrap();
            }
            let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(con).unwrap();
            seen.push((outcome(call.on(con, script)), errors(con)));
        }
        assert!(
            seen[0].0.is_err(),
            "{call:?} after {setup:?}: {:?}",
            seen[0]
        );
        assert_eq!(seen[0], seen[1], "{call:?} after {setup:?}: module, script");
    }
}

/// MON.SLIDECHECK's fast path answers as its exact way for a window hash
/// whose bucket field is not a whole number (`b:<n>.5`, written by hand):
/// the exact way counts a bucket while `number >= now's - buckets + 1`,
/// so one half a bucket past the oldest edge has aged out, where the fast
/// path's `number > now's - buckets` still counted it. `BUCKETS 60`, the
/// default cut of a minute, sends the same call the exact way.
#[test]
fn the_slidecheck_fast_path_reads_a_fractional_bucket_as_the_exact_way() {
    let server = Server::without_module(&[]);
    let mut con = server.con();
    let mut seen = Vec::new();
    for _ in 0..5 {
        let (before, _): (i64, i64) = redis::cmd("TIME").query(&mut con).unwrap();
        seen.clear();
        for (key, exact) in [("fast", false), ("exact", true)] {
            // Window 60 s, 60 buckets: bucket n is second n.
            let _: () = redis::cmd("DEL").arg(key).query(&mut con).unwrap();
            let _: i64 = redis::cmd("HSET")
                .arg(key)
                .arg(&["window", "60", "buckets", "60"])
                .arg(format!("b:{}.5", before - 60))
                .arg(100)
                .arg(format!("b:{}.5", before - 59))
                .arg(1000)
                .query(&mut con)
                .unwrap();
            let mut call = Call::new("MON.SLIDECHECK").key(key).arg(1).arg(60).arg(5);
            if exact {
                call = call.arg("BUCKETS").arg(60);
            }
            let reply = as_integers(call.script(&mut con).unwrap());
            let stored: Vec<(String, String)> =
                redis::cmd("HGETALL").arg(key).query(&mut con).unwrap();
            let mut stored = stored;
            stored.sort();
            seen.push((reply, stored));
        }
        let (after, _): (i64, i64) = redis::cmd("TIME").query(&mut con).unwrap();
        if before == after {
            break;
        }
    }
    assert_eq!(seen[0], seen[1], "fast path, exact way");
}
