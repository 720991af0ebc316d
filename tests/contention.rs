//! The races are gone: many connections on the SAME key and the SAME users,
//! released together by a barrier. A self-test first shows that this crowd
//! does break the naive client-side versions, so a pass here means something.

mod common;

use std::collections::{HashMap, HashSet};

use common::crowd::{naive_decrclamp, naive_incrcheck, Crowd};
use common::*;
use redis::Connection;

const REPETITIONS: usize = 30;

fn del(con: &mut Connection, key: &str) {
    let _: i64 = redis::cmd("DEL").arg(key).query(con).unwrap();
}

/// 260 simultaneous COUPON.ISSUE calls for `users(i)`, limit 100, repeated:
/// every repetition issues exactly 100 coupons to 100 different users.
fn coupon_rush(users: impl Fn(usize) -> String + Sync) {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 260);
    let mut con = server.con();
    for repetition in 0..REPETITIONS {
        del(&mut con, "drop");
        let replies = crowd.run(|i, c| (users(i), issue(c, "drop", &users(i), 100)));
        let winners: Vec<&String> = replies
            .iter()
            .filter(|(_, r)| *r > 0)
            .map(|(u, _)| u)
            .collect();
        let distinct: HashSet<&String> = winners.iter().copied().collect();
        assert_eq!(
            winners.len(),
            100,
            "repetition {repetition}: coupons issued"
        );
        assert_eq!(
            distinct.len(),
            100,
            "repetition {repetition}: a user got two"
        );
        let mut ranks: Vec<i64> = replies.iter().map(|(_, r)| *r).filter(|r| *r > 0).collect();
        ranks.sort();
        assert_eq!(
            ranks,
            (1..=100).collect::<Vec<_>>(),
            "repetition {repetition}: ranks"
        );
        let scard: i64 = redis::cmd("SCARD").arg("drop").query(&mut con).unwrap();
        assert_eq!(scard, 100, "repetition {repetition}: SCARD");
        let members: HashSet<String> = redis::cmd("SMEMBERS").arg("drop").query(&mut con).unwrap();
        assert_eq!(
            members,
            distinct.into_iter().cloned().collect(),
            "repetition {repetition}: set vs replies"
        );
        // Everyone else heard -1 (asked twice and won once) or -2.
        assert!(replies.iter().all(|(_, r)| *r > 0 || *r == -1 || *r == -2));
    }
}

#[test]
fn coupons_go_to_exactly_100_people_when_60_of_200_users_ask_twice() {
    coupon_rush(|i| format!("user-{}", i % 200));
}

#[test]
fn coupons_go_to_exactly_100_people_out_of_260_distinct_users() {
    coupon_rush(|i| format!("user-{i}"));
}

#[test]
fn a_user_asking_many_times_at_once_wins_at_most_once() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 100);
    let replies = crowd.run(|_, c| issue(c, "drop", "same-user", 10));
    assert_eq!(replies.iter().filter(|r| **r == 1).count(), 1);
    assert_eq!(replies.iter().filter(|r| **r == -1).count(), 99);
}

/// 50 connections × 20 calls of +1 on one key: returns every level replied.
fn crossing_rush(crowd: &mut Crowd, con: &mut Connection, thresholds: &[i64]) -> Vec<i64> {
    del(con, "orders");
    let levels = crowd.run(|_, c| {
        (0..20)
            .map(|_| incrcheck(c, "orders", 1, 600, thresholds).1)
            .collect::<Vec<_>>()
    });
    let value: i64 = redis::cmd("GET").arg("orders").query(con).unwrap();
    assert_eq!(value, 1000, "no add was lost");
    levels.concat()
}

#[test]
fn a_threshold_is_reported_once_by_a_crowd_on_one_key() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 50);
    let mut con = server.con();
    for _ in 0..5 {
        let levels = crossing_rush(&mut crowd, &mut con, &[500]);
        assert_eq!(levels.iter().filter(|l| **l == 1).count(), 1);
        assert_eq!(levels.iter().filter(|l| **l != 0).count(), 1);
    }
}

#[test]
fn each_of_several_thresholds_is_reported_once() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 50);
    let mut con = server.con();
    for _ in 0..5 {
        let levels = crossing_rush(&mut crowd, &mut con, &[100, 500, 900]);
        let mut counts: HashMap<i64, usize> = HashMap::new();
        for level in levels.iter().filter(|l| **l != 0) {
            *counts.entry(*level).or_default() += 1;
        }
        assert_eq!(counts, HashMap::from([(1, 1), (2, 1), (3, 1)]));
    }
}

#[test]
fn concurrent_refunds_lose_nothing_and_keep_the_expiry() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 40);
    let mut con = server.con();
    for _ in 0..5 {
        set_ex(&mut con, "total", 1000, 600);
        let expiry = pexpiretime(&mut con, "total");
        crowd.run(|_, c| {
            decrclamp(c, "total", 5);
            decrclamp(c, "total", 5);
        });
        let value: i64 = redis::cmd("GET").arg("total").query(&mut con).unwrap();
        assert_eq!(value, 1000 - 40 * 2 * 5);
        assert_eq!(pexpiretime(&mut con, "total"), expiry);
    }
}

#[test]
fn concurrent_refunds_past_zero_end_at_zero() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 40);
    let mut con = server.con();
    set_ex(&mut con, "total", 100, 600);
    let expiry = pexpiretime(&mut con, "total");
    let replies = crowd.run(|_, c| [decrclamp(c, "total", 7), decrclamp(c, "total", 7)]);
    assert!(replies.concat().iter().all(|v| *v >= 0));
    let value: i64 = redis::cmd("GET").arg("total").query(&mut con).unwrap();
    assert_eq!(value, 0);
    assert_eq!(pexpiretime(&mut con, "total"), expiry);
    // 100 = 14 refunds of 7 (98) + one clamp that lost 5.
    assert_eq!(info_field(&mut con, "guard_mon_clamps"), 1);
    assert_eq!(info_field(&mut con, "guard_mon_clamped_amount"), 5);
}

/// The harness must be able to fail: the same crowd running the naive
/// client-side steps shows duplicate or missing alerts, lost refunds and a
/// dropped TTL. Tried a few times, since a race is a matter of timing.
#[test]
fn self_test_the_crowd_breaks_the_naive_versions() {
    let server = Server::start();
    let mut con = server.con();

    let mut crowd = Crowd::connect(&server, 50);
    let alerts_seen: Vec<usize> = (0..10)
        .map(|_| {
            del(&mut con, "naive");
            let alerts = crowd.run(|_, c| {
                (0..20)
                    .map(|_| naive_incrcheck(c, "naive", 1, 500))
                    .sum::<i64>()
            });
            alerts.iter().sum::<i64>() as usize
        })
        .collect();
    assert!(
        alerts_seen.iter().any(|a| *a != 1),
        "GET then INCRBY never misfired: {alerts_seen:?}"
    );

    let mut crowd = Crowd::connect(&server, 40);
    let finals: Vec<i64> = (0..10)
        .map(|_| {
            set_ex(&mut con, "naive", 1000, 600);
            crowd.run(|_, c| {
                naive_decrclamp(c, "naive", 5);
                naive_decrclamp(c, "naive", 5);
            });
            assert_eq!(
                pexpiretime(&mut con, "naive"),
                -1,
                "GET then SET drops the TTL"
            );
            redis::cmd("GET").arg("naive").query(&mut con).unwrap()
        })
        .collect();
    assert!(
        finals.iter().any(|v| *v != 600),
        "GET then SET never lost a refund: {finals:?}"
    );
}

/// The coupon crowd (60 of 200 users asking twice) must break the naive
/// `SISMEMBER`→`INCR`→`SADD`: some repetition gives a user two coupons or
/// leaves set and counter disagreeing. Otherwise the coupon tests above
/// would prove nothing about one-per-user.
#[test]
fn self_test_the_coupon_crowd_breaks_check_then_add() {
    use common::crowd::{CouponStep, ISSUED, WINNERS};
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 260);
    let mut con = server.con();
    let broken = (0..REPETITIONS).any(|_| {
        let _: i64 = redis::cmd("DEL")
            .arg(WINNERS)
            .arg(ISSUED)
            .query(&mut con)
            .unwrap();
        let wins =
            crowd.run(|i, c| CouponStep::CheckIncrAdd.issue(c, &format!("user-{}", i % 200), 100));
        let scard: i64 = redis::cmd("SCARD").arg(WINNERS).query(&mut con).unwrap();
        wins.iter().filter(|w| **w).count() as i64 != scard
    });
    assert!(
        broken,
        "the crowd never made SISMEMBER→INCR→SADD give a user two coupons"
    );
}

/// 260 simultaneous COUPON.RESERVE calls from users `user-(i % 200)` on
/// one campaign of 100 places, 30 times: exactly 100 live claims, for 100
/// different users, numbered 1 to 100.
#[test]
fn campaign_holds_go_to_exactly_100_people() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 260);
    let mut con = server.con();
    for repetition in 0..REPETITIONS {
        del(&mut con, "sale");
        campaign::create(&mut con, "sale", 100, 1, 600);
        let replies = crowd.run(|i, c| {
            let user = format!("user-{}", i % 200);
            let (claim, _) = campaign::reserve(c, "sale", &user, &[]);
            (user, claim)
        });
        let mut numbers: Vec<i64> = replies.iter().map(|(_, n)| *n).filter(|n| *n > 0).collect();
        numbers.sort_unstable();
        assert_eq!(
            numbers,
            (1..=100).collect::<Vec<_>>(),
            "repetition {repetition}"
        );
        let holders: HashSet<&String> = replies
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(u, _)| u)
            .collect();
        assert_eq!(
            holders.len(),
            100,
            "repetition {repetition}: distinct users"
        );
        let refused = replies.iter().filter(|(_, n)| *n < 0).count();
        assert_eq!(refused, 160, "repetition {repetition}: -1 and -2 replies");
        let info = campaign::info(&mut con, "sale");
        assert_eq!((info["held"], info["available"]), (100, 0));
        let listed: HashSet<String> = campaign::claims(&mut con, "sale", &["COUNT", "1000"])
            .into_iter()
            .map(|row| row.user)
            .collect();
        assert_eq!(listed, holders.into_iter().cloned().collect());
    }
}

/// PERUSER 2: 50 users asking 4 times each, all at once: every user ends
/// with exactly 2 claims.
#[test]
fn campaign_peruser_2_holds_with_four_attempts_each() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 200);
    let mut con = server.con();
    for repetition in 0..REPETITIONS {
        del(&mut con, "sale");
        campaign::create(&mut con, "sale", 1_000, 2, 600);
        let replies = crowd.run(|i, c| {
            let user = format!("user-{}", i % 50);
            (user.clone(), campaign::reserve(c, "sale", &user, &[]).0)
        });
        let mut per_user: HashMap<&String, usize> = HashMap::new();
        for (user, claim) in &replies {
            if *claim > 0 {
                *per_user.entry(user).or_default() += 1;
            } else {
                assert_eq!(
                    *claim, -1,
                    "repetition {repetition}: only the user's limit refuses"
                );
            }
        }
        assert_eq!(per_user.len(), 50, "repetition {repetition}");
        assert!(
            per_user.values().all(|&n| n == 2),
            "repetition {repetition}: {per_user:?}"
        );
    }
}

/// 50 connections retrying one request id of one user at once: one claim,
/// and every retry hears its number.
#[test]
fn retries_of_one_request_id_make_one_claim() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 50);
    let mut con = server.con();
    for repetition in 0..REPETITIONS {
        del(&mut con, "sale");
        campaign::create(&mut con, "sale", 10, 5, 600);
        let replies =
            crowd.run(|_, c| campaign::reserve(c, "sale", "alice", &["ID", "checkout-42"]));
        assert!(
            replies.iter().all(|r| *r == replies[0]),
            "repetition {repetition}: {replies:?}"
        );
        assert_eq!(replies[0].0, 1);
        assert_eq!(
            campaign::info(&mut con, "sale")["claims"],
            1,
            "repetition {repetition}"
        );
    }
}

/// 240 connections reserving 2 units each at once, for users
/// `user-(i % 120)` with PERUSER 3, on one campaign of 101 units: exactly
/// 50 holds (100 units; a 51st of 2 would pass 101), no user with two,
/// and the last unit left; then 3 units confirmed of a 2-unit hold are
/// refused and 1 kept frees the other at once.
#[test]
fn holds_of_two_units_fill_exactly_the_limit_and_never_a_users_peruser() {
    let server = Server::start();
    let mut crowd = Crowd::connect(&server, 240);
    let mut con = server.con();
    for repetition in 0..REPETITIONS {
        del(&mut con, "sale");
        campaign::create(&mut con, "sale", 101, 3, 600);
        let replies = crowd.run(|i, c| {
            let user = format!("user-{}", i % 120);
            (
                user.clone(),
                campaign::reserve(c, "sale", &user, &["QTY", "2"]).0,
            )
        });
        let held: Vec<&String> = replies
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(u, _)| u)
            .collect();
        assert_eq!(held.len(), 50, "repetition {repetition}");
        let distinct: HashSet<&&String> = held.iter().collect();
        assert_eq!(distinct.len(), 50, "repetition {repetition}: 2 + 2 > 3");
        assert!(
            replies.iter().all(|(_, n)| *n > 0 || *n == -1 || *n == -2),
            "repetition {repetition}"
        );
        let info = campaign::info(&mut con, "sale");
        assert_eq!(
            (info["held"], info["held_units"], info["available"]),
            (50, 100, 1),
            "repetition {repetition}"
        );
    }
    let claim = campaign::claims(&mut con, "sale", &["COUNT", "1"])[0].claim;
    let over = redis::cmd("COUPON.CONFIRM")
        .arg("sale")
        .arg(claim)
        .arg(&["QTY", "3"])
        .query::<i64>(&mut con)
        .unwrap_err();
    assert!(
        over.to_string().contains("qty is above the claim's units"),
        "{over}"
    );
    let kept: i64 = redis::cmd("COUPON.CONFIRM")
        .arg("sale")
        .arg(claim)
        .arg(&["QTY", "1"])
        .query(&mut con)
        .unwrap();
    assert_eq!(kept, 1);
    let info = campaign::info(&mut con, "sale");
    assert_eq!(
        (
            info["confirmed_units"],
            info["held_units"],
            info["available"]
        ),
        (1, 98, 2)
    );
}
