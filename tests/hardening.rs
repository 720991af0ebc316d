//! Nothing takes the server down: panics become error replies, OOM is
//! refused like Redis's own writers refuse it, and memory stays flat.

mod common;

use std::process::{Command, Stdio};

use common::*;
use redis::Connection;

#[test]
fn a_panic_in_a_handler_becomes_an_error_reply() {
    let mut server = Server::with_module_args(&["test-panic-command"], &[]);
    let mut con = server.con();
    let _: () = redis::cmd("SET").arg("k").arg(5).query(&mut con).unwrap();
    for _ in 0..100 {
        let error = redis::cmd("GUARD.TEST-PANIC")
            .arg("k")
            .query::<redis::Value>(&mut con)
            .unwrap_err();
        assert!(error.to_string().contains("panic"), "{error}");
    }
    assert!(server.alive());
    let pong: String = redis::cmd("PING").query(&mut con).unwrap();
    assert_eq!(pong, "PONG");
    assert_eq!(incrcheck(&mut con, "k", 1, 60, &[6]), (6, 1));
    // Each one counted, for the harness's audit (which wants 0 elsewhere).
    assert_eq!(info_field(&mut con, "guard_internal_errors"), 100);
    server.expect_internal_errors(100);
}

#[test]
fn the_panic_command_exists_only_when_asked_for() {
    let server = Server::start();
    let error = redis::cmd("GUARD.TEST-PANIC")
        .arg("k")
        .query::<redis::Value>(&mut server.con())
        .unwrap_err();
    assert!(
        error.to_string().to_lowercase().contains("unknown command"),
        "{error}"
    );
}

#[test]
fn an_unknown_module_argument_refuses_to_load() {
    let status = Command::new(server_binary())
        .args(["--port", "0", "--save", ""])
        .arg("--loadmodule")
        .arg(module_path())
        .arg("no-such-option")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(
        !status.success(),
        "redis-server must not start with a bad module argument"
    );
}

fn oom_error(con: &mut Connection, args: &[&str]) -> Option<String> {
    redis::cmd(args[0])
        .arg(&args[1..])
        .query::<redis::Value>(con)
        .err()
        .map(|e| e.code().unwrap_or("").to_string())
}

#[test]
fn under_maxmemory_noeviction_writers_refuse_like_incrby_and_sadd() {
    let server = Server::start();
    let mut con = server.con();
    let _: () = redis::cmd("SET")
        .arg("counter")
        .arg(10)
        .query(&mut con)
        .unwrap();
    let _: i64 = redis::cmd("SADD")
        .arg("drop")
        .arg("alice")
        .query(&mut con)
        .unwrap();
    let used = info_field(&mut con, "used_memory");
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(used / 2)
        .query(&mut con)
        .unwrap();

    let before = (
        snapshot(&mut con, "counter"),
        snapshot(&mut con, "drop"),
        snapshot(&mut con, "fresh"),
    );
    // Redis's own writers first: the module must behave the same.
    assert_eq!(
        oom_error(&mut con, &["INCRBY", "counter", "1"]).as_deref(),
        Some("OOM")
    );
    assert_eq!(
        oom_error(&mut con, &["SADD", "drop", "bob"]).as_deref(),
        Some("OOM")
    );
    assert_eq!(
        oom_error(&mut con, &["MON.INCRCHECK", "counter", "1", "60", "5"]).as_deref(),
        Some("OOM")
    );
    assert_eq!(
        oom_error(&mut con, &["MON.INCRCHECK", "fresh", "1", "60", "5"]).as_deref(),
        Some("OOM")
    );
    assert_eq!(
        oom_error(&mut con, &["MON.DECRCLAMP", "counter", "1"]).as_deref(),
        Some("OOM")
    );
    assert_eq!(
        oom_error(&mut con, &["COUPON.ISSUE", "drop", "bob", "10"]).as_deref(),
        Some("OOM")
    );
    let after = (
        snapshot(&mut con, "counter"),
        snapshot(&mut con, "drop"),
        snapshot(&mut con, "fresh"),
    );
    assert_eq!(before, after);
    // A refund never needs memory: not refused (SPEC: `write fast`).
    let refund: Vec<i64> = redis::cmd("CL.REFUND")
        .arg("counter")
        .arg(1)
        .arg(1)
        .arg(60)
        .arg(1)
        .query(&mut con)
        .unwrap();
    assert_eq!(refund, [0, 2, 2, -1, 0]);
    // Like SREM, a revoke frees memory and stays allowed.
    let _: i64 = redis::cmd("SREM")
        .arg("drop")
        .arg("nobody")
        .query(&mut con)
        .unwrap();
    assert_eq!(revoke(&mut con, "drop", "alice"), 1);
}

/// A customer who has paid is confirmed when the server is full: a
/// memory filled up to `maxmemory` (noeviction) refuses a new hold with
/// OOM and confirms an existing one (SPEC: COUPON.CONFIRM is `write
/// fast`, no deny-oom).
#[test]
fn a_full_server_refuses_new_holds_and_still_confirms_paid_ones() {
    // No AOF: its buffer is not counted against maxmemory, so used_memory
    // is what the limit is compared with.
    let server = Server::with_args(&["--appendonly", "no"]);
    let mut con = server.con();
    let _: () = redis::cmd("COUPON.CREATE")
        .arg("sale")
        .arg(10)
        .query(&mut con)
        .unwrap();
    let (claim, _): (i64, i64) = redis::cmd("COUPON.RESERVE")
        .arg("sale")
        .arg("alice")
        .query(&mut con)
        .unwrap();
    let used = info_field(&mut con, "used_memory");
    for (name, value) in [
        ("maxmemory-policy", "noeviction".to_string()),
        ("maxmemory", (used + (1 << 20)).to_string()),
    ] {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .query(&mut con)
            .unwrap();
    }
    // Fill what is left with 1 kB strings until the server says OOM
    // (small ones: a big argument alone would push it over for one call).
    let blob = "x".repeat(1 << 10);
    let filled =
        (0..10_000).find(|n| oom_error(&mut con, &["SET", &format!("fill:{n}"), &blob]).is_some());
    assert!(
        filled.is_some_and(|n| n > 0),
        "memory never filled: {filled:?}"
    );
    // The refused call's own arguments are freed again: a limit a little
    // under what is used now keeps the server full for what follows.
    let full = info_field(&mut con, "used_memory") - (4 << 10);
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(full)
        .query(&mut con)
        .unwrap();
    assert_eq!(
        oom_error(&mut con, &["COUPON.RESERVE", "sale", "bob"]).as_deref(),
        Some("OOM")
    );
    // A running job keeps its lease (COUPON.RENEW: `write fast` too).
    let renewed: i64 = redis::cmd("COUPON.RENEW")
        .arg("sale")
        .arg(claim)
        .query(&mut con)
        .unwrap();
    assert!(renewed > 0, "{renewed}");
    let confirmed: i64 = redis::cmd("COUPON.CONFIRM")
        .arg("sale")
        .arg(claim)
        .query(&mut con)
        .unwrap();
    assert_eq!(confirmed, 1);
    let claims: Vec<(i64, String, String, i64, Option<String>, i64)> = redis::cmd("COUPON.CLAIMS")
        .arg("sale")
        .query(&mut con)
        .unwrap();
    assert_eq!(
        claims,
        [(
            claim,
            "alice".to_string(),
            "confirmed".to_string(),
            -1,
            None,
            1
        )]
    );
}

/// The churn's sliding windows: 2 s in 2 buckets, so a bucket comes and
/// goes every second and a window holds at most its latest and the one
/// before (the value keeps the latest itself, the one before in a ring
/// made at the first bucket change: the warm-up makes it).
const WINDOW_ARGS: [&str; 4] = ["2", "1000000000", "BUCKETS", "2"];
const WINDOWS: usize = 100;

/// Campaigns the churn works on, with the limit ISSUE must name.
const CAMPAIGNS: usize = 20;
const CAMPAIGN_LIMIT: i64 = 1_000_000;

/// Alert streams the churn's velocity checks name (`ALERT stream MAXLEN
/// n`): checked on every call, written by none (no call crosses a
/// threshold or clamps). Entries written on every call (a crossing each
/// MON.INCRCHECK, the streams deleted each round) made
/// used_memory_dataset vary by 0.3 to 42 KB between runs on a loaded
/// machine, too much for the check here; tests/alert.rs covers entries.
const ALERT_STREAMS: usize = 2;
const ALERT_MAXLEN: &str = "5";

/// One iteration of a round: the keys its calls work on, and the claim
/// COUPON.RESERVE made for CONFIRM and RELEASE to settle.
struct Turn {
    counter: String,
    coupon: String,
    user: String,
    slot: usize,
    campaign: String,
    alerts: String,
    reserved: Option<i64>,
}

/// Queues `name`'s calls for this turn: every command the registry lists
/// that a client may run has an arm, in the registry's order (a writer
/// comes after what it undoes: DECRCLAMP after INCRCHECK, REVOKE after
/// ISSUE, CONFIRM and RELEASE after RESERVE), so a new command fails the
/// soak until the churn calls it.
fn queue(
    pipe: &mut redis::Pipeline,
    name: &str,
    i: usize,
    turn: &mut Turn,
    next_claim: &mut [i64],
) {
    let alert = ["ALERT", turn.alerts.as_str(), "MAXLEN", ALERT_MAXLEN];
    match name {
        // The counter sits at 100: +3 crosses no threshold.
        "MON.INCRCHECK" => pipe
            .cmd(name)
            .arg(&turn.counter)
            .arg(3)
            .arg(3600)
            .arg(1)
            .arg(1000)
            .arg(&alert[..]),
        // Back to 100: no clamp, so no entry, the stream checked all the same.
        "MON.DECRCLAMP" => pipe.cmd(name).arg(&turn.counter).arg(3).arg(&alert[..]),
        // A coupon as a set, and an issued claim of a campaign.
        "COUPON.ISSUE" => {
            next_claim[turn.slot] += 1;
            pipe.cmd(name)
                .arg(&turn.coupon)
                .arg(&turn.user)
                .arg(1_000_000)
                .ignore()
                .cmd(name)
                .arg(&turn.campaign)
                .arg(&turn.user)
                .arg(CAMPAIGN_LIMIT)
        }
        "COUPON.REVOKE" => pipe
            .cmd(name)
            .arg(&turn.coupon)
            .arg(&turn.user)
            .ignore()
            .cmd(name)
            .arg(&turn.campaign)
            .arg(&turn.user),
        // Never limited; the cells live for hours, so no key comes and
        // goes with the expire cycle.
        "CL.THROTTLE" => pipe
            .cmd(name)
            .arg(format!("t:{}", i % 500))
            .arg(1_000_000)
            .arg(1_000)
            .arg(3_600),
        // A quota of a Seoul day that no churn fills: 250 keys.
        "CL.QUOTA" => pipe
            .cmd(name)
            .arg(format!("qa:{}", i % 250))
            .arg(i64::MAX)
            .arg("day")
            .arg("TZ")
            .arg("Asia/Seoul"),
        // Three reserved, two given back: the cell stays (never full, so
        // never deleted), one place a call used.
        "CL.REFUND" => pipe
            .cmd("CL.THROTTLE")
            .arg(format!("r:{}", i % 500))
            .arg(1_000_000)
            .arg(1_000)
            .arg(3_600)
            .arg(3)
            .ignore()
            .cmd(name)
            .arg(format!("r:{}", i % 500))
            .arg(1_000_000)
            .arg(1_000)
            .arg(3_600)
            .arg(2),
        // Two cells a call: 250 pairs keep the keyspace under 2048 keys,
        // so no dict resize runs during the measured phases.
        "CL.THROTTLEALL" => pipe
            .cmd(name)
            .arg(2)
            .arg(format!("ta:{}:s", i % 250))
            .arg(1_000_000)
            .arg(1_000)
            .arg(3_600)
            .arg(format!("ta:{}:d", i % 250))
            .arg(1_000_000)
            .arg(1_000)
            .arg(86_400)
            .arg("QUANTITY")
            .arg(1),
        "COUPON.CREATE" => {
            let fresh = format!("new:{}", i % 10);
            pipe.cmd(name)
                .arg(&fresh)
                .arg(5)
                .ignore()
                .cmd("DEL")
                .arg(fresh)
        }
        // A held claim with a request id, confirmed and released.
        "COUPON.RESERVE" => {
            turn.reserved = Some(next_claim[turn.slot]);
            next_claim[turn.slot] += 1;
            pipe.cmd(name)
                .arg(&turn.campaign)
                .arg(&turn.user)
                .arg("ID")
                .arg(format!("order:{i}"))
        }
        // The hold renewed for the campaign's default before its confirm.
        "COUPON.RENEW" => pipe
            .cmd(name)
            .arg(&turn.campaign)
            .arg(turn.reserved.expect("COUPON.RESERVE comes first")),
        "COUPON.CONFIRM" | "COUPON.RELEASE" => pipe
            .cmd(name)
            .arg(&turn.campaign)
            .arg(turn.reserved.expect("COUPON.RESERVE comes first")),
        "COUPON.INFO" => pipe.cmd(name).arg(&turn.campaign),
        "COUPON.CLAIMS" => pipe.cmd(name).arg(&turn.campaign).arg("COUNT").arg(1),
        // Nothing has expired: reclaims none, touches nothing.
        "COUPON.RECLAIM" => pipe.cmd(name).arg(&turn.campaign).arg("COUNT").arg(1),
        // The default hold, changed and changed back over the turns.
        "COUPON.ALTER" => pipe
            .cmd(name)
            .arg(&turn.campaign)
            .arg("HOLD")
            .arg(600 + (i % 2)),
        // A cart of one, released in the same turn.
        "COUPON.RESERVEALL" => {
            let claim = next_claim[turn.slot];
            next_claim[turn.slot] += 1;
            pipe.cmd(name)
                .arg(1)
                .arg(&turn.campaign)
                .arg(&turn.user)
                .ignore()
                .cmd("COUPON.RELEASE")
                .arg(&turn.campaign)
                .arg(claim)
        }
        // A sliding window and a distinct count: buckets and members come
        // and go, their number bounded.
        "MON.SLIDECHECK" => pipe
            .cmd(name)
            .arg(format!("w:{}", i % WINDOWS))
            .arg(1)
            .arg(&WINDOW_ARGS[..])
            .arg(&alert[..]),
        "MON.DISTINCT" => pipe
            .cmd(name)
            .arg(format!("z:{}", i % 100))
            .arg(&turn.user)
            .arg(3600)
            .arg(1_000_000)
            .arg(&alert[..]),
        other => panic!("the churn has no call for {other}: give it one in `queue`"),
    }
    .ignore();
}

/// Runs `rounds` rounds of every command the registry lists (the ones a
/// client may run; the replay commands refused) on a fixed key set, each
/// round ending in the state it started from, and returns the memory in
/// use after. `next_claim` follows each campaign's claim numbers.
fn churn(con: &mut Connection, rounds: usize, next_claim: &mut [i64; CAMPAIGNS]) -> i64 {
    const BATCH: usize = 1000;
    for round in 0..rounds.div_ceil(BATCH) {
        let mut pipe = redis::pipe();
        for i in 0..BATCH {
            let slot = i % CAMPAIGNS;
            let mut turn = Turn {
                counter: format!("c:{}", i % 500),
                coupon: format!("d:{}", i % 50),
                user: format!("u:{}", i % 200),
                slot,
                campaign: format!("cpn:{slot}"),
                alerts: format!("alerts:{}", i % ALERT_STREAMS),
                reserved: None,
            };
            for spec in registry::COMMANDS.iter() {
                if spec.access != registry::Access::Replay {
                    queue(&mut pipe, spec.name, i, &mut turn, next_claim);
                }
            }
        }
        for stream in 0..ALERT_STREAMS {
            pipe.cmd("DEL").arg(format!("alerts:{stream}")).ignore();
        }
        let _: () = pipe
            .query(con)
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        // The commands a client cannot run: refused, every round.
        for spec in registry::with_access(registry::Access::Replay) {
            let refused = redis::cmd(spec.name)
                .arg(spec.example)
                .query::<redis::Value>(con);
            assert!(refused.is_err(), "{} ran for a client", spec.name);
        }
    }
    // The dataset part of used_memory: a module leak shows there, client
    // buffers (which vary with the pipeline) do not.
    info_field(con, "used_memory_dataset")
}

/// Calls per command for the memory check: `make test` runs 100k,
/// `make soak` 1M (GUARD_SOAK_CALLS).
fn soak_calls() -> usize {
    std::env::var("GUARD_SOAK_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

#[test]
fn valid_calls_leave_memory_flat() {
    // No SLOWLOG: on a loaded machine a call slower than its threshold
    // adds an entry (about 430 B, up to 128) to the dataset's memory,
    // which is the server's, not the module's.
    let server = Server::with_args(&["--appendonly", "no", "--slowlog-log-slower-than", "-1"]);
    let mut con = server.con();
    // Counters and campaigns exist before the warm-up so every round
    // returns to them.
    for i in 0..500 {
        set_ex(&mut con, &format!("c:{i}"), 100, 3600);
    }
    for slot in 0..CAMPAIGNS {
        common::campaign::create(&mut con, &format!("cpn:{slot}"), CAMPAIGN_LIMIT, 2, 600);
    }
    let mut next_claim = [1; CAMPAIGNS];
    // Every window sees a bucket change before the phases (its ring is
    // made then, once).
    for _ in 0..2 {
        for window in 0..WINDOWS {
            let _: (i64, i64) = redis::cmd("MON.SLIDECHECK")
                .arg(format!("w:{window}"))
                .arg(1)
                .arg(&WINDOW_ARGS[..])
                .query(&mut con)
                .unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(1_100));
    }
    // Two equal phases: whatever grows once (dicts finding their size)
    // grows in the first; a leak grows in both. INFO runs once before, as
    // its first run allocates its own latency histogram.
    info_field(&mut con, "used_memory_dataset");
    let calls = soak_calls();
    let first = churn(&mut con, calls, &mut next_claim);
    let second = churn(&mut con, calls, &mut next_claim);
    // The churn went where it meant to: every claim made was given back.
    let sale = common::campaign::info(&mut con, "cpn:0");
    assert_eq!(sale["claims"], next_claim[0] - 1);
    assert_eq!(sale["released"], sale["claims"]);
    // The streams were named, never written (see ALERT_STREAMS).
    assert_eq!(info_field(&mut con, "guard_mon_alerts_written"), 0);
    let growth = second - first;
    println!(
        "{calls} calls of each command, twice: used_memory_dataset {first} -> {second} \
        ({growth:+} bytes)"
    );
    // Measured flat to the byte; a leak of one byte in 64 calls would show.
    let allowed = (calls as i64 / 64).max(1024);
    assert!(
        growth < allowed,
        "used_memory_dataset grew by {growth} bytes over {calls} calls of each command"
    );
}
