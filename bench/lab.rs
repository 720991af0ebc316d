//! `make lab`: reproduces the flash-sale races against a real redis-server
//! (started here, with the module) and prints markdown tables comparing the
//! naive client-side steps, a Lua script and the native commands.
//!
//! Coupons: 260 simultaneous requests from 200 users (60 ask twice), limit
//! 100, 30 repetitions, request order shuffled with a fixed seed.
//! Monitoring: 50 connections × 20 adds on one counter (threshold 500), and
//! 40 connections × 2 refunds of 5 on a counter of 1000 with a TTL.
//! Reservations: 200 buyers for 100 places, some payments fail, some
//! checkouts crash; set-based coupons against a campaign.
//! Boundaries: one stream of orders against a fixed and a sliding window.
//! Crashes: alerts sent from the reply or from an `ALERT` stream while the
//! processes doing it are SIGKILLed at random.
//! Reconciliation: an orders database kept by the checkout itself (two
//! writes) or built from a campaign's ledger, while the checkouts (and the
//! reconciler) are SIGKILLed at random.

// The test harness, shared with tests/.
#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::HashMap;

use common::crowd::{naive_decrclamp, naive_incrcheck, CouponStep, Crowd, ISSUED, WINNERS};
use common::rng::Rng;
use common::{campaign, decrclamp, incrcheck, issue, pexpiretime, revoke, set_ex, Server};
use redis::{Connection, Value};

const REPETITIONS: usize = 30;
const REQUESTS: usize = 260;
const USERS: usize = 200;
const LIMIT: i64 = 100;
const SEED: u64 = 0x5eed_2026;

/// Mean and range of a series, as `mean (min–max)`.
fn spread(values: &[i64]) -> String {
    let mean = values.iter().sum::<i64>() as f64 / values.len() as f64;
    let (min, max) = (values.iter().min().unwrap(), values.iter().max().unwrap());
    if min == max {
        format!("{mean:.0}")
    } else {
        format!("{mean:.1} ({min}–{max})")
    }
}

fn query_i64(con: &mut Connection, args: &[&str]) -> i64 {
    let value: Option<i64> = redis::cmd(args[0]).arg(&args[1..]).query(con).unwrap();
    value.unwrap_or(0)
}

fn coupons(server: &Server) {
    let mut crowd = Crowd::connect(server, REQUESTS);
    let mut con = server.con();
    println!(
        "## Coupons: {REQUESTS} requests, {USERS} users (60 ask twice), limit {LIMIT}, \
        {REPETITIONS} runs\n"
    );
    println!(
        "| implementation | coupons issued | distinct winners | users holding 2+ | \
        SCARD left | counter left |"
    );
    println!("|---|---|---|---|---|---|");
    for step in CouponStep::ALL {
        let mut rng = Rng(SEED);
        let (mut issued, mut distinct, mut doubles, mut scards, mut counters) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..REPETITIONS {
            let _: i64 = redis::cmd("DEL")
                .arg(WINNERS)
                .arg(ISSUED)
                .query(&mut con)
                .unwrap();
            let mut requests: Vec<String> = (0..REQUESTS)
                .map(|i| format!("user-{}", i % USERS))
                .collect();
            rng.shuffle(&mut requests);
            let wins = crowd.run(|i, c| step.issue(c, &requests[i], LIMIT));
            let mut per_user: HashMap<&String, i64> = HashMap::new();
            for (user, _) in requests.iter().zip(&wins).filter(|(_, won)| **won) {
                *per_user.entry(user).or_default() += 1;
            }
            issued.push(wins.iter().filter(|w| **w).count() as i64);
            distinct.push(per_user.len() as i64);
            doubles.push(per_user.values().filter(|n| **n >= 2).count() as i64);
            scards.push(query_i64(&mut con, &["SCARD", WINNERS]));
            counters.push(query_i64(&mut con, &["GET", ISSUED]));
        }
        let keeps_set = step != CouponStep::IncrOnly;
        let keeps_counter = !matches!(step, CouponStep::Lua | CouponStep::Native);
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            step.name(),
            spread(&issued),
            spread(&distinct),
            spread(&doubles),
            if keeps_set {
                spread(&scards)
            } else {
                "–".into()
            },
            if keeps_counter {
                spread(&counters)
            } else {
                "–".into()
            },
        );
    }
    println!("\nExact means: 100 issued to 100 distinct users, nobody twice, SCARD 100.\n");
}

fn alerts(server: &Server) {
    let mut crowd = Crowd::connect(server, 50);
    let mut con = server.con();
    println!(
        "## Velocity check: 50 connections × 20 adds of 1 on one counter, threshold \
        500, {REPETITIONS} windows\n"
    );
    println!(
        "| implementation | alerts per window | windows with a duplicate or missed \
        alert | final value |"
    );
    println!("|---|---|---|---|");
    type Check = fn(&mut Connection) -> i64;
    let naive: Check = |c| naive_incrcheck(c, "lab:orders", 1, 500);
    let native: Check = |c| incrcheck(c, "lab:orders", 1, 600, &[500]).1;
    for (name, check) in [
        ("naive `GET`→`INCRBY`→compare", naive),
        ("`MON.INCRCHECK`", native),
    ] {
        let (mut per_window, mut finals) = (Vec::new(), Vec::new());
        for _ in 0..REPETITIONS {
            let _: i64 = redis::cmd("DEL").arg("lab:orders").query(&mut con).unwrap();
            let alerts = crowd.run(|_, c| (0..20).map(|_| check(c)).sum::<i64>());
            per_window.push(alerts.iter().sum());
            finals.push(query_i64(&mut con, &["GET", "lab:orders"]));
        }
        let wrong = per_window.iter().filter(|a| **a != 1).count();
        println!(
            "| {name} | {} | {wrong} of {REPETITIONS} | {} |",
            spread(&per_window),
            spread(&finals)
        );
    }
    println!();
}

fn refunds(server: &Server) {
    let mut crowd = Crowd::connect(server, 40);
    let mut con = server.con();
    println!(
        "## Refunds: 40 connections × 2 refunds of 5 on 1000 (TTL 600 s), {REPETITIONS} runs\n"
    );
    println!(
        "| implementation | final value (exact: 600) | lost refunds per run | runs \
        that dropped the TTL |"
    );
    println!("|---|---|---|---|");
    type Refund = fn(&mut Connection) -> i64;
    let naive: Refund = |c| naive_decrclamp(c, "lab:refunds", 5);
    let native: Refund = |c| decrclamp(c, "lab:refunds", 5);
    for (name, refund) in [("naive `GET`→`SET`", naive), ("`MON.DECRCLAMP`", native)] {
        let (mut finals, mut lost, mut dropped) = (Vec::new(), Vec::new(), 0);
        for _ in 0..REPETITIONS {
            set_ex(&mut con, "lab:refunds", 1000, 600);
            let expiry = pexpiretime(&mut con, "lab:refunds");
            crowd.run(|_, c| {
                refund(c);
                refund(c);
            });
            let value = query_i64(&mut con, &["GET", "lab:refunds"]);
            finals.push(value);
            lost.push((value - 600) / 5);
            dropped += usize::from(pexpiretime(&mut con, "lab:refunds") != expiry);
        }
        println!(
            "| {name} | {} | {} | {dropped} of {REPETITIONS} |",
            spread(&finals),
            spread(&lost)
        );
    }
    println!();
}

fn main() {
    if let Ok(role) = std::env::var("GUARD_LAB_ROLE") {
        return child(&role);
    }
    let server = Server::start();
    let version: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut server.con())
        .unwrap();
    let version = version
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .unwrap_or("?")
        .to_string();
    println!(
        "# redis-guard lab (Redis {}, seed {SEED:#x})\n",
        version.trim()
    );
    // `GUARD_LAB_ONLY=reconciliation make lab`: that table alone.
    if std::env::var("GUARD_LAB_ONLY").as_deref() == Ok("reconciliation") {
        return reconciliation(&server);
    }
    coupons(&server);
    alerts(&server);
    refunds(&server);
    reservations(&server);
    boundaries(&server);
    crashes(&server);
    reconciliation(&server);
}

/// Bursts in the boundary story, and the rule: 3 orders in 2 s.
const BURSTS: usize = 8;
const RULE_WINDOW_S: i64 = 2;
const RULE_ORDERS: i64 = 3;

/// One stream of orders replayed, in real time, against a fixed window
/// (MON.INCRCHECK: the window opens with the first order) and a sliding
/// one (MON.SLIDECHECK). Every 8 s (quiet in between): a lone order, then
/// a burst of 3 orders over 1 s starting 0.5 to 2.25 s later, in even
/// steps, so the fixed window's end falls at every phase of the burst.
/// Every burst is real (3 orders in 1 s); the fixed window misses those
/// its end cuts into 1 + 2 (a start 1.5 to 2 s after the lone order).
fn boundaries(server: &Server) {
    let mut con = server.con();
    println!(
        "\n## Window boundaries: {BURSTS} bursts of {RULE_ORDERS} orders within 1 s, each after \
         a lone order, against \"{RULE_ORDERS} orders in {RULE_WINDOW_S} s\"\n"
    );
    println!("| implementation | real bursts | bursts caught | bursts missed |");
    println!("|---|---|---|---|");
    let start = std::time::Instant::now();
    let at = |ms: u64| {
        let target = std::time::Duration::from_millis(ms);
        if let Some(wait) = target.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    };
    let (mut fixed, mut sliding) = (0, 0);
    let threshold = RULE_ORDERS.to_string();
    for burst in 0..BURSTS as u64 {
        let base = 500 + burst * 8_000;
        let lone = base;
        let gap = 500 + burst * 250;
        let mut caught = (false, false);
        for (i, time) in [lone, lone + gap, lone + gap + 500, lone + gap + 1_000]
            .into_iter()
            .enumerate()
        {
            at(time);
            let fixed_level = incrcheck(&mut con, "lab:fixed", 1, RULE_WINDOW_S, &[RULE_ORDERS]).1;
            let (_, sliding_level): (i64, i64) = redis::cmd("MON.SLIDECHECK")
                .arg("lab:sliding")
                .arg(1)
                .arg(RULE_WINDOW_S)
                .arg(&threshold)
                .query(&mut con)
                .unwrap();
            // Alerts during the burst count (the lone order alone never
            // reaches 3).
            if i > 0 {
                caught.0 |= fixed_level > 0;
                caught.1 |= sliding_level > 0;
            }
        }
        fixed += usize::from(caught.0);
        sliding += usize::from(caught.1);
    }
    for (name, caught) in [
        ("`MON.INCRCHECK` (fixed window)", fixed),
        ("`MON.SLIDECHECK` (sliding window)", sliding),
    ] {
        println!("| {name} | {BURSTS} | {caught} | {} |", BURSTS - caught);
    }
    println!();
}

/// What a buyer's checkout does once it has a place.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Payment {
    Pays,
    /// Declined: the app gives the place back.
    Fails,
    /// The app crashes before it can do anything more.
    Hangs,
}

const BUYERS: usize = 200;
/// Refused buyers ask again, a hold's length later, until a wave hands out
/// nothing (sold out for good) or nobody is left waiting; at most this
/// many waves.
const MAX_WAVES: usize = 20;
const RESERVATION_RUNS: usize = 5;

/// Each buyer asks at once; refused buyers ask again in the next wave.
/// Returns (paid, leaked, turned away).
fn checkout_rush(
    crowd: &mut Crowd,
    payments: &[Payment],
    try_once: impl Fn(&mut Connection, usize) -> bool + Sync,
    give_back: impl Fn(&mut Connection, usize) + Sync,
    keep: impl Fn(&mut Connection, usize) + Sync,
) -> (i64, i64, i64) {
    let mut waiting: Vec<bool> = vec![true; BUYERS];
    let (mut paid, mut leaked) = (0, 0);
    for _ in 0..MAX_WAVES {
        let outcomes = crowd.run(|i, c| {
            if !waiting[i] || !try_once(c, i) {
                return None;
            }
            match payments[i] {
                Payment::Pays => keep(c, i),
                Payment::Fails => give_back(c, i),
                Payment::Hangs => {}
            }
            Some(payments[i])
        });
        let served = outcomes.iter().flatten().count();
        for (i, outcome) in outcomes.into_iter().enumerate() {
            if let Some(payment) = outcome {
                waiting[i] = false;
                paid += i64::from(payment == Payment::Pays);
                leaked += i64::from(payment == Payment::Hangs);
            }
        }
        if served == 0 || !waiting.contains(&true) {
            break;
        }
        // A hold's length: the crashed checkouts' holds end.
        std::thread::sleep(std::time::Duration::from_millis(1_100));
    }
    let turned_away = waiting
        .iter()
        .zip(payments)
        .filter(|(w, p)| **w && **p == Payment::Pays)
        .count();
    (paid, leaked, turned_away as i64)
}

fn reservations(server: &Server) {
    let mut crowd = Crowd::connect(server, BUYERS);
    let mut con = server.con();
    println!(
        "\n## Reservations: {BUYERS} buyers for {LIMIT} places, payments 60% paid, 20% \
            declined, 20% crashed checkouts; refused buyers retry until a wave hands out \
            nothing; {RESERVATION_RUNS} runs\n"
    );
    println!(
        "| implementation | paid coupons | places lost to crashed checkouts | paying \
        buyers turned away |"
    );
    println!("|---|---|---|---|");
    let mut rng = Rng(SEED);
    let runs: Vec<Vec<Payment>> = (0..RESERVATION_RUNS)
        .map(|_| {
            (0..BUYERS)
                .map(|_| match rng.below(10) {
                    0 | 1 => Payment::Fails,
                    2 | 3 => Payment::Hangs,
                    _ => Payment::Pays,
                })
                .collect()
        })
        .collect();
    let buyer = |i: usize| format!("buyer-{i}");
    let mut sets = (Vec::new(), Vec::new(), Vec::new());
    let mut campaigns = (Vec::new(), Vec::new(), Vec::new());
    for payments in &runs {
        let _: i64 = redis::cmd("DEL")
            .arg("drop")
            .arg("sale")
            .query(&mut con)
            .unwrap();
        let (paid, leaked, away) = checkout_rush(
            &mut crowd,
            payments,
            |c, i| issue(c, "drop", &buyer(i), LIMIT) > 0,
            |c, i| {
                revoke(c, "drop", &buyer(i));
            },
            |_, _| {},
        );
        sets.0.push(paid);
        sets.1.push(leaked);
        sets.2.push(away);
        campaign::create(&mut con, "sale", LIMIT, 1, 1);
        let claim_of = |c: &mut Connection, i: usize| {
            campaign::reserve(c, "sale", &buyer(i), &["ID", &format!("order-{i}")]).0
        };
        let (_, _, away) = checkout_rush(
            &mut crowd,
            payments,
            |c, i| claim_of(c, i) > 0,
            |c, i| {
                let claim = claim_of(c, i);
                campaign::release(c, "sale", claim);
            },
            |c, i| {
                let claim = claim_of(c, i);
                campaign::confirm(c, "sale", claim);
            },
        );
        let info = campaign::info(&mut con, "sale");
        campaigns.0.push(info["confirmed"]);
        campaigns.1.push(info["held"]);
        campaigns.2.push(away);
    }
    println!(
        "| COUPON.ISSUE on a set, REVOKE on decline | {} | {} | {} |",
        spread(&sets.0),
        spread(&sets.1),
        spread(&sets.2)
    );
    println!(
        "| campaign: RESERVE (HOLD 1, ID), CONFIRM or RELEASE | {} | {} | {} |",
        spread(&campaigns.0),
        spread(&campaigns.1),
        spread(&campaigns.2)
    );
}

/// The crash story: customers' orders, each checked by a checkout process;
/// the threshold's crossing must become an alert that reaches the alert
/// service. Processes are this program itself (a role in the environment),
/// SIGKILLed at random while they work, and replaced.
const CRASH_CUSTOMERS: usize = 60;
const CRASH_ORDERS: usize = 6;
const CRASH_THRESHOLD: i64 = 5;
const CRASH_RUNS: usize = 5;
const CHECKOUTS: usize = 4;
const SENDERS: usize = 2;
/// How long a send to the alert service takes (an HTTP call).
const SEND_MS: u64 = 5;
const ALERTS: &str = "lab:alerts";

/// A stream entry as XAUTOCLAIM and XREADGROUP reply it: its ID and its
/// fields and values.
type Entry = (String, Vec<String>);

/// What a child process does, told by `GUARD_LAB_ROLE`.
fn child(role: &str) {
    let port = std::env::var("GUARD_LAB_PORT").unwrap();
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
    let mut con = client.get_connection().unwrap();
    let pause = |ms| std::thread::sleep(std::time::Duration::from_millis(ms));
    match role {
        // Takes orders off the queue and checks each; with replies alone,
        // a crossing is sent from here.
        "checkout" => {
            let alert = std::env::var("GUARD_LAB_ALERT").is_ok();
            while let Some(customer) = redis::cmd("LPOP")
                .arg("lab:queue")
                .query::<Option<String>>(&mut con)
                .unwrap()
            {
                pause(2); // the rest of the checkout
                let mut check = redis::cmd("MON.INCRCHECK");
                check.arg(&customer).arg(1).arg(600).arg(CRASH_THRESHOLD);
                if alert {
                    check.arg("ALERT").arg(ALERTS);
                }
                let (_, level): (i64, i64) = check.query(&mut con).unwrap();
                if level > 0 && !alert {
                    pause(SEND_MS);
                    let _: i64 = redis::cmd("SADD")
                        .arg("lab:sent")
                        .arg(&customer)
                        .query(&mut con)
                        .unwrap();
                }
            }
        }
        // Sends what the stream holds: claims what dead senders left
        // pending, reads what is new, sends, acks. The alert service
        // records each entry ID once (a resend is recognised).
        "sender" => {
            let me = std::env::var("GUARD_LAB_CONSUMER").unwrap();
            loop {
                let claimed: (String, Vec<Entry>, Value) = redis::cmd("XAUTOCLAIM")
                    .arg(ALERTS)
                    .arg("senders")
                    .arg(&me)
                    .arg(200)
                    .arg("0-0")
                    .query(&mut con)
                    .unwrap();
                let mut work = claimed.1;
                let fresh: Option<Vec<(String, Vec<Entry>)>> = redis::cmd("XREADGROUP")
                    .arg("GROUP")
                    .arg("senders")
                    .arg(&me)
                    .arg("COUNT")
                    .arg(5)
                    .arg("BLOCK")
                    .arg(50)
                    .arg("STREAMS")
                    .arg(ALERTS)
                    .arg(">")
                    .query(&mut con)
                    .unwrap();
                work.extend(fresh.into_iter().flatten().flat_map(|(_, entries)| entries));
                if work.is_empty() {
                    let done: bool = redis::cmd("EXISTS")
                        .arg("lab:done")
                        .query(&mut con)
                        .unwrap();
                    let pending: (i64, Value, Value, Value) = redis::cmd("XPENDING")
                        .arg(ALERTS)
                        .arg("senders")
                        .query(&mut con)
                        .unwrap();
                    if done && pending.0 == 0 {
                        return;
                    }
                    continue;
                }
                for (id, fields) in work {
                    // The request travels, the service records the alert
                    // (once per entry ID), its answer travels back, then
                    // the ack: a kill in between means a resend.
                    pause(SEND_MS / 2);
                    let (new, _): (i64, i64) = redis::pipe()
                        .atomic()
                        .cmd("SADD")
                        .arg("lab:delivered")
                        .arg(&id)
                        .cmd("SADD")
                        .arg("lab:sent")
                        .arg(&fields[1])
                        .query(&mut con)
                        .unwrap();
                    if new == 0 {
                        let _: i64 = redis::cmd("INCR")
                            .arg("lab:resent")
                            .query(&mut con)
                            .unwrap();
                    }
                    pause(SEND_MS - SEND_MS / 2);
                    let _: i64 = redis::cmd("XACK")
                        .arg(ALERTS)
                        .arg("senders")
                        .arg(&id)
                        .query(&mut con)
                        .unwrap();
                }
            }
        }
        "shop" => shop(&mut con),
        "reconciler" => reconcile(&mut con),
        other => panic!("unknown lab role {other}"),
    }
}

/// One process of this program in `role`.
fn spawn(server: &Server, role: &str, env: &[(&str, String)]) -> std::process::Child {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .env("GUARD_LAB_ROLE", role)
        .env("GUARD_LAB_PORT", server.port.to_string())
        .stdout(std::process::Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.spawn().unwrap()
}

/// One run: the orders shuffled into a queue, checkout processes (and, with
/// ALERT, sender processes) killed at random and replaced until the work is
/// done. Returns (crossings, alerts delivered, processes killed, resends).
fn crash_run(server: &Server, rng: &mut Rng, alert: bool) -> [i64; 4] {
    let mut con = server.con();
    let _: () = redis::cmd("FLUSHALL").query(&mut con).unwrap();
    let mut orders: Vec<String> = (0..CRASH_CUSTOMERS * CRASH_ORDERS)
        .map(|i| format!("lab:cust:{}", i % CRASH_CUSTOMERS))
        .collect();
    rng.shuffle(&mut orders);
    let _: i64 = redis::cmd("RPUSH")
        .arg("lab:queue")
        .arg(&orders)
        .query(&mut con)
        .unwrap();
    if alert {
        let _: () = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(ALERTS)
            .arg("senders")
            .arg("$")
            .arg("MKSTREAM")
            .query(&mut con)
            .unwrap();
    }
    let checkout_env: Vec<(&str, String)> = if alert {
        vec![("GUARD_LAB_ALERT", "1".to_string())]
    } else {
        Vec::new()
    };
    let mut consumers = 0;
    let sender = |consumers: &mut usize| {
        *consumers += 1;
        spawn(
            server,
            "sender",
            &[("GUARD_LAB_CONSUMER", format!("sender-{consumers}"))],
        )
    };
    let mut checkouts: Vec<_> = (0..CHECKOUTS)
        .map(|_| spawn(server, "checkout", &checkout_env))
        .collect();
    let mut senders: Vec<_> = if alert {
        (0..SENDERS).map(|_| sender(&mut consumers)).collect()
    } else {
        Vec::new()
    };
    let mut killed = 0;
    let queue_left = |con: &mut Connection| query_i64(con, &["LLEN", "lab:queue"]);
    // Kill one process at random every 5–25 ms while orders are left;
    // replace it while there is work.
    while queue_left(&mut con) > 0 {
        std::thread::sleep(std::time::Duration::from_millis(5 + rng.below(20) as u64));
        let all = checkouts.len() + senders.len();
        let victim = rng.below(all);
        let (list, at) = if victim < checkouts.len() {
            (&mut checkouts, victim)
        } else {
            (&mut senders, victim - checkouts.len())
        };
        let mut child = list.swap_remove(at);
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
        if victim < CHECKOUTS {
            checkouts.push(spawn(server, "checkout", &checkout_env));
        } else {
            senders.push(sender(&mut consumers));
        }
    }
    for mut child in checkouts {
        child.wait().unwrap();
    }
    let _: () = redis::cmd("SET")
        .arg("lab:done")
        .arg(1)
        .query(&mut con)
        .unwrap();
    for mut child in senders {
        child.wait().unwrap();
    }
    let crossings = (0..CRASH_CUSTOMERS)
        .filter(|i| query_i64(&mut con, &["GET", &format!("lab:cust:{i}")]) >= CRASH_THRESHOLD)
        .count() as i64;
    let delivered = query_i64(&mut con, &["SCARD", "lab:sent"]);
    let resent = query_i64(&mut con, &["GET", "lab:resent"]);
    [crossings, delivered, killed, resent]
}

fn crashes(server: &Server) {
    println!(
        "\n## Alerts and crashes: {CRASH_CUSTOMERS} customers × {CRASH_ORDERS} orders, \
        threshold {CRASH_THRESHOLD}; {CHECKOUTS} checkout processes (and {SENDERS} alert \
        senders) SIGKILLed at random every 5–25 ms and replaced; a send takes {SEND_MS} ms; \
        {CRASH_RUNS} runs\n"
    );
    println!(
        "| alerts sent from | crossings | alerts delivered | lost | processes killed | \
        resends recognised by entry ID |"
    );
    println!("|---|---|---|---|---|---|");
    let mut rng = Rng(SEED);
    for (name, alert) in [
        ("the reply (`MON.INCRCHECK`, then send)", false),
        ("the stream (`ALERT`, consumer group, `XAUTOCLAIM`)", true),
    ] {
        let runs: Vec<[i64; 4]> = (0..CRASH_RUNS)
            .map(|_| crash_run(server, &mut rng, alert))
            .collect();
        let column = |i: usize| runs.iter().map(|run| run[i]).collect::<Vec<i64>>();
        let lost: Vec<i64> = runs.iter().map(|run| run[0] - run[1]).collect();
        println!(
            "| {name} | {} | {} | {} | {} | {} |",
            spread(&column(0)),
            spread(&column(1)),
            spread(&lost),
            spread(&column(2)),
            spread(&column(3))
        );
    }
    println!(
        "\nWith the stream, every crossing is delivered: the entry was written with the counter.\n"
    );
}

/// The reconciliation story: buyers check out on a campaign (HOLD 1, one
/// place each) while their checkout processes are SIGKILLed at random; a
/// killed checkout's buyer is retried by the next one (the job goes back
/// on the queue, the request id makes the retry safe for the campaign).
/// The orders database is kept either by the checkout itself, a write
/// after each campaign call, or by a reconciler that reads only the
/// ledger (a consumer group, one entry applied once, then acked) and
/// calls COUPON.RECLAIM every second. The database is kept in the same
/// server, as rows (`lab:db:rows`, one pushed per new order) and each
/// claim's last state (`lab:db:state`).
const SALE: &str = "lab:sale";
const LEDGER: &str = "lab:ledger";
const SALE_BUYERS: usize = 200;
const SALE_PLACES: i64 = 100;
const SALE_RUNS: usize = 5;
const SHOPS: usize = 4;
/// A database write's round trip, and a payment.
const DB_MS: u64 = 2;
const PAY_MS: u64 = 4;

/// Whether a buyer's payment goes through (70%), the same on every try.
fn pays(buyer: &str) -> bool {
    let hash = buyer.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    hash % 10 < 7
}

/// One database transaction: a new order row (state `held`), or a claim's
/// new state; `lab:db:writes` counts them. With `last`, the ledger entry
/// it applies is recorded in the same transaction. The request travels,
/// the database commits, its answer travels back: a kill can come on
/// either side of the commit.
fn db_write(con: &mut Connection, claim: &str, state: &str, insert: bool, last: Option<&str>) {
    let pause = |ms| std::thread::sleep(std::time::Duration::from_millis(ms));
    pause(DB_MS / 2);
    let mut tx = redis::pipe();
    tx.atomic();
    if insert {
        tx.cmd("RPUSH").arg("lab:db:rows").arg(claim).ignore();
    }
    tx.cmd("HSET")
        .arg("lab:db:state")
        .arg(claim)
        .arg(state)
        .ignore();
    tx.cmd("INCR").arg("lab:db:writes").ignore();
    if let Some(id) = last {
        tx.cmd("SET").arg("lab:db:last").arg(id).ignore();
    }
    let () = tx.query(con).unwrap();
    pause(DB_MS - DB_MS / 2);
}

/// A checkout process: takes buyers off the queue (into its own in-flight
/// list, which the lab puts back on the queue if it is killed), holds a
/// place with the buyer's request id, pays, confirms or releases. Without
/// a ledger it writes the order itself after each campaign call.
fn shop(con: &mut Connection) {
    let ledger = std::env::var("GUARD_LAB_LEDGER").is_ok();
    let inflight = format!("lab:inflight:{}", std::env::var("GUARD_LAB_SLOT").unwrap());
    let pause = |ms| std::thread::sleep(std::time::Duration::from_millis(ms));
    let with_ledger = |mut call: redis::Cmd| {
        if ledger {
            call.arg("LEDGER").arg(LEDGER);
        }
        call
    };
    while let Some(buyer) = redis::cmd("LMOVE")
        .arg("lab:queue")
        .arg(&inflight)
        .arg("LEFT")
        .arg("RIGHT")
        .query::<Option<String>>(con)
        .unwrap()
    {
        let mut reserve = redis::cmd("COUPON.RESERVE");
        reserve
            .arg(SALE)
            .arg(&buyer)
            .arg("ID")
            .arg(format!("order-{buyer}"));
        let (claim, expires): (i64, i64) = with_ledger(reserve).query(con).unwrap();
        if claim > 0 {
            let claim = claim.to_string();
            if !ledger {
                db_write(con, &claim, "held", true, None);
            }
            // A repeated claim already confirmed: the order is done.
            if expires != -1 {
                pause(PAY_MS);
                let paid = pays(&buyer);
                let mut call = redis::cmd(if paid {
                    "COUPON.CONFIRM"
                } else {
                    "COUPON.RELEASE"
                });
                call.arg(SALE).arg(&claim);
                let done: i64 = with_ledger(call).query(con).unwrap();
                if !ledger && done == 1 {
                    db_write(
                        con,
                        &claim,
                        if paid { "paid" } else { "cancelled" },
                        false,
                        None,
                    );
                }
            }
        }
        let _: i64 = redis::cmd("LREM")
            .arg(&inflight)
            .arg(1)
            .arg(&buyer)
            .query(con)
            .unwrap();
    }
}

/// A stream entry ID as numbers, for order.
fn entry_id(id: &str) -> (u64, u64) {
    let (ms, seq) = id.split_once('-').unwrap();
    (ms.parse().unwrap(), seq.parse().unwrap())
}

/// The reconciler: its own pending entries first (what it read before it
/// was killed), then new ones; an entry at or before the last one the
/// database recorded is acked without applying it again. COUPON.RECLAIM
/// every second turns expired holds into `expired` entries.
fn reconcile(con: &mut Connection) {
    let second = std::time::Duration::from_secs(1);
    let mut reclaimed_at: Option<std::time::Instant> = None;
    let mut from = "0";
    loop {
        if reclaimed_at.is_none_or(|at| at.elapsed() >= second) {
            let _: i64 = redis::cmd("COUPON.RECLAIM")
                .arg(SALE)
                .arg("COUNT")
                .arg(1000)
                .arg("LEDGER")
                .arg(LEDGER)
                .query(con)
                .unwrap();
            reclaimed_at = Some(std::time::Instant::now());
        }
        let read: Option<Vec<(String, Vec<Entry>)>> = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg("orders")
            .arg("reconciler")
            .arg("COUNT")
            .arg(50)
            .arg("BLOCK")
            .arg(100)
            .arg("STREAMS")
            .arg(LEDGER)
            .arg(from)
            .query(con)
            .unwrap();
        let entries: Vec<Entry> = read.into_iter().flatten().flat_map(|(_, e)| e).collect();
        if entries.is_empty() && from == "0" {
            from = ">";
        }
        for (id, fields) in entries {
            let field = |name: &str| {
                let at = fields.iter().step_by(2).position(|f| f == name).unwrap();
                fields[2 * at + 1].clone()
            };
            let last: Option<String> = redis::cmd("GET").arg("lab:db:last").query(con).unwrap();
            if last.is_none_or(|last| entry_id(&last) < entry_id(&id)) {
                let (claim, op) = (field("claim"), field("op"));
                let state = match op.as_str() {
                    "reserved" => "held",
                    "confirmed" => "paid",
                    "released" | "revoked" => "cancelled",
                    "expired" => "expired",
                    other => panic!("unexpected ledger op {other}"),
                };
                db_write(con, &claim, state, op == "reserved", Some(&id));
            } else {
                // Applied before a kill that came before its ack.
                let _: i64 = redis::cmd("INCR").arg("lab:db:skipped").query(con).unwrap();
            }
            let _: i64 = redis::cmd("XACK")
                .arg(LEDGER)
                .arg("orders")
                .arg(&id)
                .query(con)
                .unwrap();
        }
    }
}

/// What one reconciliation run ends with.
struct Books {
    changes: i64,
    entries: i64,
    writes: i64,
    skipped: i64,
    orders: i64,
    lost: i64,
    twice: i64,
    wrong: i64,
    killed: i64,
}

fn sale_run(server: &Server, rng: &mut Rng, ledger: bool) -> Books {
    let mut con = server.con();
    let _: () = redis::cmd("FLUSHALL").query(&mut con).unwrap();
    let mut create = redis::cmd("COUPON.CREATE");
    create
        .arg(SALE)
        .arg(SALE_PLACES)
        .arg("PERUSER")
        .arg(1)
        .arg("HOLD")
        .arg(1);
    if ledger {
        let _: () = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(LEDGER)
            .arg("orders")
            .arg("0")
            .arg("MKSTREAM")
            .query(&mut con)
            .unwrap();
        create.arg("LEDGER").arg(LEDGER);
    }
    let _: () = create.query(&mut con).unwrap();
    let mut buyers: Vec<String> = (0..SALE_BUYERS).map(|i| format!("buyer-{i}")).collect();
    rng.shuffle(&mut buyers);
    let _: i64 = redis::cmd("RPUSH")
        .arg("lab:queue")
        .arg(&buyers)
        .query(&mut con)
        .unwrap();
    let mut slots = 0;
    let shop = |slots: &mut usize| {
        *slots += 1;
        let mut env = vec![("GUARD_LAB_SLOT", slots.to_string())];
        if ledger {
            env.push(("GUARD_LAB_LEDGER", "1".to_string()));
        }
        (*slots, spawn(server, "shop", &env))
    };
    let mut shops: Vec<_> = (0..SHOPS).map(|_| shop(&mut slots)).collect();
    let mut reconciler = ledger.then(|| spawn(server, "reconciler", &[]));
    let mut killed = 0;
    // Kill one process at random every 5–25 ms while buyers are waiting: a
    // killed checkout's buyer goes back on the queue, a replacement starts.
    while query_i64(&mut con, &["LLEN", "lab:queue"]) > 0 {
        std::thread::sleep(std::time::Duration::from_millis(5 + rng.below(20) as u64));
        let victim = rng.below(shops.len() + usize::from(reconciler.is_some()));
        if victim == shops.len() {
            let mut child = reconciler.take().unwrap();
            killed += i64::from(child.try_wait().unwrap().is_none());
            let _ = child.kill();
            let _ = child.wait();
            reconciler = Some(spawn(server, "reconciler", &[]));
            continue;
        }
        let (slot, mut child) = shops.swap_remove(victim);
        killed += i64::from(child.try_wait().unwrap().is_none());
        let _ = child.kill();
        let _ = child.wait();
        let inflight = format!("lab:inflight:{slot}");
        while redis::cmd("LMOVE")
            .arg(&inflight)
            .arg("lab:queue")
            .arg("LEFT")
            .arg("LEFT")
            .query::<Option<String>>(&mut con)
            .unwrap()
            .is_some()
        {}
        shops.push(shop(&mut slots));
    }
    for (_, mut child) in shops {
        child.wait().unwrap();
    }
    // The last holds expire; the reconciler's RECLAIM writes their entries
    // within a second, and it applies every entry.
    std::thread::sleep(std::time::Duration::from_millis(1_100));
    let info = campaign::info(&mut con, SALE);
    let changes = info["claims"] + info["confirmed"] + info["released"] + info["expired"];
    let mut entries = 0;
    if let Some(mut child) = reconciler {
        let started = std::time::Instant::now();
        loop {
            entries = query_i64(&mut con, &["XLEN", LEDGER]);
            let last: Option<Entry> = common::observe::last_entry(&mut con, LEDGER);
            let applied: Option<String> = redis::cmd("GET")
                .arg("lab:db:last")
                .query(&mut con)
                .unwrap();
            let caught_up = last.map(|(id, _)| id) == applied;
            if (entries == changes && caught_up) || started.elapsed().as_secs() >= 10 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    // The truth: the campaign's confirmed claims (no hold is live now).
    let orders: Vec<i64> = campaign::claims(&mut con, SALE, &["COUNT", "1000"])
        .into_iter()
        .filter(|row| row.state == "confirmed")
        .map(|row| row.claim)
        .collect();
    let states: HashMap<String, String> = redis::cmd("HGETALL")
        .arg("lab:db:state")
        .query(&mut con)
        .unwrap();
    let rows: Vec<String> = redis::cmd("LRANGE")
        .arg("lab:db:rows")
        .arg(0)
        .arg(-1)
        .query(&mut con)
        .unwrap();
    let mut per_claim: HashMap<&str, i64> = HashMap::new();
    for row in &rows {
        *per_claim.entry(row).or_default() += 1;
    }
    let state_of = |claim: i64| states.get(&claim.to_string()).map(String::as_str);
    let lost = orders
        .iter()
        .filter(|c| state_of(**c) != Some("paid"))
        .count() as i64;
    let twice = per_claim.values().filter(|n| **n >= 2).count() as i64;
    // Every claim ever made: paid in the database exactly when confirmed,
    // ended (cancelled, expired) otherwise; none missing.
    let wrong = (1..=info["claims"])
        .filter(|c| {
            let confirmed = orders.contains(c);
            match state_of(*c) {
                Some("paid") => !confirmed,
                Some("cancelled" | "expired") => confirmed,
                _ => true,
            }
        })
        .count() as i64;
    Books {
        changes,
        entries,
        writes: query_i64(&mut con, &["GET", "lab:db:writes"]),
        skipped: query_i64(&mut con, &["GET", "lab:db:skipped"]),
        orders: orders.len() as i64,
        lost,
        twice,
        wrong,
        killed,
    }
}

fn reconciliation(server: &Server) {
    println!(
        "\n## Reconciliation: {SALE_BUYERS} buyers for {SALE_PLACES} places (HOLD 1, PERUSER \
         1, 70% pay), {SHOPS} checkout processes (and the reconciler) SIGKILLed at random every \
         5–25 ms and replaced, a killed checkout's buyer retried with the same request id; a \
         database write takes {DB_MS} ms, a payment {PAY_MS} ms; {SALE_RUNS} runs\n"
    );
    println!(
        "| orders database kept by | changes made (COUPON.INFO) | ledger entries | database \
         writes | entries read again after a kill, not applied again | orders (confirmed claims) | orders lost | orders twice | claims the database \
         has wrong | processes killed |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut rng = Rng(SEED);
    for (name, ledger) in [
        (
            "the checkout: two writes (campaign call, then its order record)",
            false,
        ),
        (
            "the ledger (`LEDGER`, consumer group, `XACK`; `COUPON.RECLAIM` each second)",
            true,
        ),
    ] {
        let runs: Vec<Books> = (0..SALE_RUNS)
            .map(|_| sale_run(server, &mut rng, ledger))
            .collect();
        let column = |f: fn(&Books) -> i64| runs.iter().map(f).collect::<Vec<i64>>();
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            spread(&column(|b| b.changes)),
            if ledger {
                spread(&column(|b| b.entries))
            } else {
                "–".into()
            },
            spread(&column(|b| b.writes)),
            if ledger {
                spread(&column(|b| b.skipped))
            } else {
                "–".into()
            },
            spread(&column(|b| b.orders)),
            spread(&column(|b| b.lost)),
            spread(&column(|b| b.twice)),
            spread(&column(|b| b.wrong)),
            spread(&column(|b| b.killed))
        );
    }
    println!(
        "\nChanges made: claims made + confirmed + released + expired. Orders lost: confirmed \
         claims the database does not have as paid; twice: claims with two order rows or \
         more; wrong: claims whose final state (paid, or cancelled/expired) the database \
         misses or contradicts.\n"
    );
}
