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

mod common;

use std::collections::HashMap;

use common::crowd::{naive_decrclamp, naive_incrcheck, CouponStep, Crowd, ISSUED, WINNERS};
use common::rng::Rng;
use common::{campaign, decrclamp, incrcheck, issue, pexpiretime, revoke, set_ex, Server};
use redis::Connection;

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
    coupons(&server);
    alerts(&server);
    refunds(&server);
    reservations(&server);
    boundaries(&server);
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
        "## Window boundaries: {BURSTS} bursts of {RULE_ORDERS} orders within 1 s, each after \
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
