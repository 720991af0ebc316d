//! `make lab`: reproduces the flash-sale races against a real redis-server
//! (started here, with the module) and prints markdown tables comparing the
//! naive client-side steps, a Lua script and the native commands.
//!
//! Coupons: 260 simultaneous requests from 200 users (60 ask twice), limit
//! 100, 30 repetitions, request order shuffled with a fixed seed.
//! Monitoring: 50 connections × 20 adds on one counter (threshold 500), and
//! 40 connections × 2 refunds of 5 on a counter of 1000 with a TTL.

mod common;

use std::collections::HashMap;

use common::crowd::{naive_decrclamp, naive_incrcheck, CouponStep, Crowd, ISSUED, WINNERS};
use common::rng::Rng;
use common::{decrclamp, incrcheck, pexpiretime, set_ex, Server};
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
    println!("## Coupons: {REQUESTS} requests, {USERS} users (60 ask twice), limit {LIMIT}, {REPETITIONS} runs\n");
    println!("| implementation | coupons issued | distinct winners | users holding 2+ | SCARD left | counter left |");
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
    println!("## Velocity check: 50 connections × 20 adds of 1 on one counter, threshold 500, {REPETITIONS} windows\n");
    println!("| implementation | alerts per window | windows with a duplicate or missed alert | final value |");
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
    println!("| implementation | final value (exact: 600) | lost refunds per run | runs that dropped the TTL |");
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
}
