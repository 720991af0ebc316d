//! MON.DISTINCT against real servers: distinct members on a plain sorted
//! set, aged members at the exact cutoff, the pure rule call by call,
//! errors, contention, replicas and the AOF, what it propagates.

mod common;

use std::collections::BTreeMap;
use std::thread;
use std::time::Duration;

use common::crowd::Crowd;
use common::rng::Rng;
use common::*;
use redis::Connection;

fn distinct(
    con: &mut Connection,
    key: &str,
    member: &str,
    window: i64,
    thresholds: &[i64],
) -> (i64, i64) {
    redis::cmd("MON.DISTINCT")
        .arg(key)
        .arg(member)
        .arg(window)
        .arg(thresholds)
        .query(con)
        .unwrap()
}

fn scores(con: &mut Connection, key: &str) -> BTreeMap<String, i64> {
    let pairs: Vec<(String, i64)> = redis::cmd("ZRANGE")
        .arg(key)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(con)
        .unwrap();
    pairs.into_iter().collect()
}

#[test]
fn distinct_cards_per_customer_with_thresholds() {
    let server = Server::start();
    let mut con = server.con();
    let replies: Vec<(i64, i64)> = ["visa-1", "visa-2", "visa-1", "amex-9", "mc-3", "mc-4"]
        .iter()
        .map(|card| distinct(&mut con, "cards", card, 86_400, &[3, 5]))
        .collect();
    // The third card crosses 3, the fifth 5; a card seen again is no new one.
    assert_eq!(replies, [(1, 0), (2, 0), (2, 0), (3, 1), (4, 0), (5, 2)]);
    let key_type: String = redis::cmd("TYPE").arg("cards").query(&mut con).unwrap();
    assert_eq!(key_type, "zset");
    let seen = scores(&mut con, "cards");
    assert_eq!(seen.len(), 5);
    let expiry = pexpiretime(&mut con, "cards");
    assert!((expiry - now_ms() - 86_400_000).abs() < 5_000);
    // Members are scored by when they were last seen.
    assert!(seen["visa-1"] >= seen["visa-2"]);
    assert_eq!(info_field(&mut con, "guard_mon_distinct_calls"), 6);
    assert_eq!(info_field(&mut con, "guard_mon_distinct_crossings"), 2);
}

#[test]
fn members_last_seen_a_window_ago_are_dropped_at_the_exact_cutoff() {
    let server = Server::start();
    let mut con = server.con();
    let now = now_ms();
    // Scores written by hand: exactly at the cutoff of a call made now or
    // later (dropped), and one ms inside it once the call runs within a
    // second (kept).
    let _: i64 = redis::cmd("ZADD")
        .arg("z")
        .arg(now - 60_000)
        .arg("at-cutoff")
        .arg(now - 60_000 + 1_000)
        .arg("inside")
        .query(&mut con)
        .unwrap();
    let (count, _) = distinct(&mut con, "z", "new", 60, &[10]);
    assert!(now_ms() - now < 1_000, "the call ran within a second");
    assert_eq!(count, 2);
    let left: Vec<String> = scores(&mut con, "z").into_keys().collect();
    assert_eq!(left, ["inside", "new"]);
}

/// A model set written here from SPEC fed the same calls over real time:
/// each reply must be what the model gives at one of the call's
/// milliseconds, and the set must then hold what the model holds.
#[test]
fn replies_agree_with_a_model_over_time() {
    let server = Server::start();
    let mut con = server.con();
    let mut rng = Rng(0xd15_71c7);
    // About 13 calls a second over 12 members: some 8 distinct in the
    // 1 s window, rising and falling across the thresholds.
    let members = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
    let thresholds = [4i64, 6, 8];
    let mut model: BTreeMap<String, i64> = BTreeMap::new();
    let mut crossings = 0;
    for step in 0..150 {
        let member = *rng.pick(&members);
        let before = now_ms();
        let reply = distinct(&mut con, "z", member, 1, &thresholds);
        let after = now_ms();
        let stored = scores(&mut con, "z");
        let next = (before..=after).find_map(|now| {
            let mut next = model.clone();
            // SPEC, worked out here: drop the members last seen a window
            // ago or earlier, add or re-score this one, the highest
            // threshold with prev < t <= count.
            next.retain(|_, seen| *seen > now - 1_000);
            let prev = next.len() as i64;
            next.insert(member.to_string(), now);
            let count = next.len() as i64;
            let expected = (count, crossed_level(prev, count, &thresholds));
            (expected == reply && next == stored).then_some(next)
        });
        model = next.unwrap_or_else(|| panic!("step {step}: {reply:?}, {stored:?}"));
        crossings += i32::from(reply.1 > 0);
        thread::sleep(Duration::from_millis(rng.below(150) as u64));
    }
    assert!(crossings > 10, "{crossings} crossings");
}

#[test]
fn errors_name_the_argument_and_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    distinct(&mut con, "z", "a", 60, &[5]);
    let _: () = redis::cmd("SET")
        .arg("text")
        .arg("x")
        .query(&mut con)
        .unwrap();
    let cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (vec![b"MON.DISTINCT", b"z", b"", b"60", b"5"], "member"),
        (vec![b"MON.DISTINCT", b"z", b"b", b"0", b"5"], "window"),
        (
            vec![b"MON.DISTINCT", b"z", b"b", b"60", b"5", b"4"],
            "strictly increasing",
        ),
        (
            vec![b"MON.DISTINCT", b"z", b"b", b"60", b"-5"],
            "threshold #1",
        ),
        (
            vec![b"MON.DISTINCT", b"text", b"b", b"60", b"5"],
            "WRONGTYPE",
        ),
    ];
    assert_errors_change_nothing(&mut con, &cases);
    assert_arity_errors(&mut con, &[vec!["MON.DISTINCT", "z", "a", "60"]]);
}

#[test]
fn contention_on_one_key_reports_each_threshold_once() {
    let server = Server::with_args(&["--appendonly", "no"]);
    let mut crowd = Crowd::connect(&server, 50);
    // 50 connections × 20 calls: 1000 distinct members.
    let replies = crowd.run(|i, con| {
        (0..20)
            .map(|j| distinct(con, "hot", &format!("m{i}-{j}"), 60, &[100, 500, 1000]).1)
            .collect::<Vec<i64>>()
    });
    let mut levels: Vec<i64> = replies.into_iter().flatten().filter(|&l| l > 0).collect();
    levels.sort();
    assert_eq!(levels, [1, 2, 3]);
    let members: i64 = redis::cmd("ZCARD")
        .arg("hot")
        .query(&mut server.con())
        .unwrap();
    assert_eq!(members, 1000);
}

#[test]
fn replicas_and_the_aof_get_the_effects_with_absolute_times() {
    let mut server = Server::start();
    let replica = Server::replica_of(&server);
    let mut con = server.con();
    let held = replica.hold_back(1.2);
    // Each member comes back every 1.25 s: it has aged out of the 1 s
    // window by then.
    for i in 0..12 {
        distinct(&mut con, "z", &format!("m{}", i % 5), 1, &[3]);
        thread::sleep(Duration::from_millis(250));
    }
    held.join().unwrap();
    let offset = info_field(&mut con, "master_repl_offset");
    replica.wait_until(
        |info| info.contains(&format!("slave_repl_offset:{offset}")),
        "replica caught up",
    );
    let expected = key_state(&mut con, "z");
    assert_eq!(key_state(&mut replica.con(), "z"), expected);
    // What travelled: ZADD with the time, PEXPIREAT, and ZREMRANGEBYSCORE
    // once members had aged out; never a relative time.
    let aof = server.aof_text();
    for command in ["ZADD", "PEXPIREAT", "ZREMRANGEBYSCORE"] {
        assert!(aof.contains(command), "{command} in {aof}");
    }
    assert!(!aof.contains("MON.DISTINCT") && !aof.contains("PEXPIRE\r"));
    server.restart();
    assert_eq!(key_state(&mut server.con(), "z"), expected);
}

#[test]
fn keyspace_events_are_the_sorted_sets_own_and_mon_crossed() {
    let server = Server::start();
    let events = events_of(&server, |con| {
        distinct(con, "z", "a", 60, &[1]);
        // A later millisecond: the re-score changes the set.
        thread::sleep(Duration::from_millis(5));
        distinct(con, "z", "a", 60, &[1]);
    });
    assert_eq!(
        events,
        pairs(&[
            ("zadd", "z"),
            ("expire", "z"),
            ("mon.crossed", "z"),
            ("zadd", "z"),
            ("expire", "z"),
        ])
    );
}
