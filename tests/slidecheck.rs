//! MON.SLIDECHECK and its guard-win type against real servers, with real
//! time: the straddling burst side by side with MON.INCRCHECK, bucket
//! boundaries, the pure model call by call, errors, contention, replicas
//! and the AOF with a later clock, persistence and crafted payloads.

mod common;

use std::thread;
use std::time::Duration;

use common::campaign::digest;
use common::crowd::Crowd;
use common::payload::{dump, restore, Payload};
use common::rng::Rng;
use common::*;
use redis::{Connection, Value};

/// Sleeps until the server clock reads `at_ms` (the same clock as ours).
fn sleep_until(at_ms: i64) {
    let wait = at_ms - now_ms();
    if wait > 0 {
        thread::sleep(Duration::from_millis(wait as u64));
    }
}

#[test]
fn a_burst_that_straddles_a_fixed_window_is_caught_by_the_sliding_one() {
    let server = Server::start();
    let mut con = server.con();
    // 3 orders in 2 s is the rule. One order opens INCRCHECK's 2 s window;
    // one near its end; two just after it closed: 3 within 0.2 s.
    let mut levels = (Vec::new(), Vec::new());
    let mut order = |con: &mut Connection| {
        levels.0.push(incrcheck(con, "fixed", 1, 2, &[3]).1);
        levels.1.push(slide(con, "sliding", 1, 2, &["3"]).1);
    };
    let start = now_ms();
    order(&mut con);
    sleep_until(start + 1_900);
    order(&mut con);
    wait_for(
        || {
            let exists: i64 = redis::cmd("EXISTS").arg("fixed").query(&mut con).unwrap();
            exists == 0
        },
        Duration::from_secs(2),
        "the fixed window's end",
    );
    order(&mut con);
    order(&mut con);
    assert!(
        now_ms() - start < 2_300,
        "the burst took too long to mean anything"
    );
    assert_eq!(levels.0, [0, 0, 0, 0], "INCRCHECK: two windows of two");
    assert_eq!(levels.1, [0, 0, 0, 1], "SLIDECHECK: three within 2 s");
}

#[test]
fn an_add_counts_while_its_bucket_is_less_than_n_buckets_behind() {
    let server = Server::start();
    let mut con = server.con();
    // One bucket of 1 s: an add counts only within its own second.
    let second = |t: i64| t.div_euclid(1_000);
    loop {
        let before = now_ms();
        let (first, _) = slide(&mut con, "one", 1, 1, &["9", "BUCKETS", "1"]);
        let (again, _) = slide(&mut con, "one", 1, 1, &["9", "BUCKETS", "1"]);
        let after = now_ms();
        if second(before) == second(after) {
            assert_eq!((first, again), (1, 2), "within one second");
            sleep_until((second(after) + 1) * 1_000 + 20);
            assert_eq!(slide(&mut con, "one", 1, 1, &["9", "BUCKETS", "1"]).0, 1);
            break;
        }
        // The pair straddled a second: try again in a fresh one.
        let _: i64 = redis::cmd("DEL").arg("one").query(&mut con).unwrap();
    }
    // 2 s in 50 buckets of 40 ms: an add ages out 50 buckets later.
    let bucket = loop {
        let before = now_ms();
        slide(&mut con, "fifty", 5, 2, &["100"]);
        let after = now_ms();
        if before.div_euclid(40) == after.div_euclid(40) {
            break before.div_euclid(40);
        }
        let _: i64 = redis::cmd("DEL").arg("fifty").query(&mut con).unwrap();
    };
    sleep_until((bucket + 49) * 40 + 10);
    let (last_live, _) = slide(&mut con, "fifty", 1, 2, &["100"]);
    if now_ms().div_euclid(40) == bucket + 49 {
        assert_eq!(last_live, 6, "49 buckets later, the add still counts");
    }
    sleep_until((bucket + 50) * 40 + 10);
    let (aged, _) = slide(&mut con, "fifty", 1, 2, &["100"]);
    assert_eq!(aged, 2, "50 buckets later, it does not");
}

/// The integers of a module value's DUMP payload, as its encoding wrote
/// them (each an unsigned-integer opcode and a length-encoded value).
fn dumped_integers(con: &mut Connection, key: &str) -> Vec<i64> {
    let payload = dump(con, key);
    let mut at = 10; // the type and the module id
    let len = |payload: &[u8], at: &mut usize| -> u64 {
        let first = payload[*at];
        *at += 1;
        match first >> 6 {
            0 => u64::from(first & 0x3f),
            1 => {
                *at += 1;
                (u64::from(first & 0x3f) << 8) | u64::from(payload[*at - 1])
            }
            _ if first == 0x80 => {
                *at += 4;
                u64::from(u32::from_be_bytes(
                    payload[*at - 4..*at].try_into().unwrap(),
                ))
            }
            _ => {
                *at += 8;
                u64::from_be_bytes(payload[*at - 8..*at].try_into().unwrap())
            }
        }
    };
    let mut integers = Vec::new();
    loop {
        match len(&payload, &mut at) {
            0 => return integers,
            2 => integers.push(len(&payload, &mut at) as i64),
            opcode => panic!("opcode {opcode} in a window's payload"),
        }
    }
}

/// A sliding window worked out here from SPEC, not from the module's
/// rules: the adds by bucket (`w` ms each, `n` of them count) and the
/// thresholds reported with their times.
#[derive(Debug, Clone)]
struct WindowModel {
    window_ms: i64,
    n: i64,
    /// (bucket, sum), buckets increasing; only those live at the last add.
    buckets: Vec<(i64, i64)>,
    /// (threshold, reported at), in the order they were last reported.
    reports: Vec<(i64, i64)>,
    /// The last add: the key expires `window_ms` after it (SPEC), and
    /// with it every bucket and report.
    last_add: Option<i64>,
}

impl WindowModel {
    fn new(window_ms: i64, n: i64) -> Self {
        WindowModel {
            window_ms,
            n,
            buckets: Vec::new(),
            reports: Vec::new(),
            last_add: None,
        }
    }

    /// An add at `now`: `[current, level]`.
    fn add(&mut self, increment: i64, thresholds: &[i64], now: i64) -> (i64, i64) {
        // A key is gone once the server's clock is past its expiry (a
        // test stalled for a window finds none).
        if self.last_add.is_some_and(|at| now > at + self.window_ms) {
            *self = WindowModel::new(self.window_ms, self.n);
        }
        self.last_add = Some(now);
        let bucket = now.div_euclid(self.window_ms / self.n);
        // An add made at t counts while floor(now/w) - floor(t/w) < n.
        self.buckets.retain(|&(b, _)| bucket - b < self.n);
        let prev: i64 = self.buckets.iter().map(|&(_, sum)| sum).sum();
        let current = prev + increment;
        match self.buckets.last_mut() {
            Some((b, sum)) if *b == bucket => *sum += increment,
            _ => self.buckets.push((bucket, increment)),
        }
        let held_back = |t: i64| {
            self.reports
                .iter()
                .any(|&(r, at)| r == t && now - at < self.window_ms)
        };
        let level = (0..thresholds.len())
            .rev()
            .find(|&i| {
                prev < thresholds[i] && thresholds[i] <= current && !held_back(thresholds[i])
            })
            .map_or(0, |i| i + 1);
        if level > 0 {
            let t = thresholds[level - 1];
            self.reports.retain(|&(r, _)| r != t);
            self.reports.push((t, now));
        }
        (current, level as i64)
    }

    /// The integers a DUMP of it holds: shape, buckets, reports.
    fn encoded(&self) -> Vec<i64> {
        let mut out = vec![self.window_ms, self.n, self.buckets.len() as i64];
        out.extend(self.buckets.iter().flat_map(|&(b, sum)| [b, sum]));
        out.push(self.reports.len() as i64);
        out.extend(self.reports.iter().flat_map(|&(t, at)| [t, at]));
        out
    }
}

/// The model fed the same calls, over real time: each reply must be what
/// it gives at one of the milliseconds the call could have run in, and
/// the server's value must then hold exactly what the model holds (a
/// call that spans a bucket boundary has two candidate instants; the
/// server's state tells which it was).
#[test]
fn replies_and_state_agree_with_a_model_over_time() {
    let server = Server::start();
    let mut con = server.con();
    let mut rng = Rng(0x5eed_51de);
    let shapes = [(1_000, 50), (1_000, 4)];
    let mut models: Vec<WindowModel> = shapes
        .iter()
        .map(|&(window_ms, n)| WindowModel::new(window_ms, n))
        .collect();
    // The sums hover around 20 to 30: the upper thresholds are crossed
    // again and again, and held back within a window.
    let thresholds = [4i64, 8, 12, 16, 20, 24, 28];
    let mut crossings = 0;
    for step in 0..300 {
        let which = rng.below(2);
        let increment = 1 + rng.below(3) as i64;
        let key = format!("w{which}");
        let mut rest: Vec<String> = thresholds.iter().map(i64::to_string).collect();
        rest.extend(["BUCKETS".to_string(), shapes[which].1.to_string()]);
        let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
        let before = now_ms();
        let reply = slide(&mut con, &key, increment, 1, &rest);
        let after = now_ms();
        let stored = dumped_integers(&mut con, &key);
        let next = (before..=after).find_map(|now| {
            let mut model = models[which].clone();
            let replied = model.add(increment, &thresholds, now);
            (replied == reply && model.encoded() == stored).then_some(model)
        });
        models[which] = next.unwrap_or_else(|| {
            panic!("step {step}: no instant in {before}..={after} gives {reply:?} and the stored {stored:?}; model {:?}", models[which])
        });
        crossings += i32::from(reply.1 > 0);
        // Now and then a pause past the window: both keys expire, their
        // reports with them.
        let pause = match step % 100 == 99 {
            true => 1_150,
            false => rng.below(80) as u64,
        };
        thread::sleep(Duration::from_millis(pause));
    }
    assert!(
        crossings > 10,
        "{crossings} crossings: the walk must reach the thresholds"
    );
}

#[test]
fn hovering_traffic_alerts_once_a_window() {
    let server = Server::start();
    let mut con = server.con();
    // An order every 400 ms against 3 per second: the sum sits at 2 or 3
    // and re-crosses 3 whenever the oldest order ages out.
    let start = now_ms();
    let mut alerts = Vec::new();
    for i in 0..15 {
        sleep_until(start + i * 400);
        if slide(&mut con, "hover", 1, 1, &["3"]).1 > 0 {
            alerts.push(now_ms());
        }
    }
    assert!(
        (2..=6).contains(&alerts.len()),
        "{} alerts in 6 s of hovering",
        alerts.len()
    );
    assert!(
        alerts.windows(2).all(|pair| pair[1] - pair[0] >= 1_000),
        "alerted twice within a window: {alerts:?}"
    );
}

#[test]
fn errors_name_the_argument_and_change_nothing() {
    let server = Server::start();
    let mut con = server.con();
    slide(&mut con, "w", 5, 60, &["10"]);
    let _: () = redis::cmd("SET")
        .arg("text")
        .arg("1")
        .query(&mut con)
        .unwrap();
    slide(&mut con, "big", i64::MAX - 1, 60, &["10"]);
    let max = (i64::MAX / 1000).to_string();
    let cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (
            vec![b"MON.SLIDECHECK", b"w", b"0", b"60", b"10"],
            "increment",
        ),
        (vec![b"MON.SLIDECHECK", b"w", b"1", b"-60", b"10"], "window"),
        (
            vec![b"MON.SLIDECHECK", b"w", b"1", max.as_bytes(), b"10"],
            "window",
        ),
        (
            vec![b"MON.SLIDECHECK", b"w", b"1", b"60", b"10", b"5"],
            "strictly increasing",
        ),
        (
            vec![b"MON.SLIDECHECK", b"w", b"1", b"60", b"x"],
            "threshold #1",
        ),
        (
            vec![
                b"MON.SLIDECHECK",
                b"w",
                b"1",
                b"60",
                b"10",
                b"BUCKETS",
                b"7",
            ],
            "buckets",
        ),
        (
            vec![
                b"MON.SLIDECHECK",
                b"w",
                b"1",
                b"60",
                b"10",
                b"BUCKETS",
                b"0",
            ],
            "buckets",
        ),
        (
            vec![b"MON.SLIDECHECK", b"w", b"1", b"60", b"10", b"BUCKETS"],
            "BUCKETS needs a value",
        ),
        (
            vec![b"MON.SLIDECHECK", b"w", b"1", b"30", b"10"],
            "ERR window does not match",
        ),
        (
            vec![
                b"MON.SLIDECHECK",
                b"w",
                b"1",
                b"60",
                b"10",
                b"BUCKETS",
                b"30",
            ],
            "ERR buckets does not match",
        ),
        (
            vec![b"MON.SLIDECHECK", b"text", b"1", b"60", b"10"],
            "WRONGTYPE",
        ),
        (
            vec![b"MON.SLIDECHECK", b"big", b"2", b"60", b"10"],
            "overflow",
        ),
        (vec![b"MON.APPLY", b"w", b"ADD", b"1", b"1"], "only replays"),
    ];
    assert_errors_change_nothing(&mut con, &cases);
    // INCRCHECK's counter is another type for SLIDECHECK, and back.
    incrcheck(&mut con, "counter", 1, 60, &[5]);
    let error = redis::cmd("MON.SLIDECHECK")
        .arg("counter")
        .arg(1)
        .arg(60)
        .arg(5)
        .query::<Value>(&mut con)
        .unwrap_err();
    assert!(error.to_string().contains("WRONGTYPE"), "{error}");
    assert_arity_errors(&mut con, &[vec!["MON.SLIDECHECK", "w", "1", "60"]]);
}

#[test]
fn contention_on_one_key_reports_each_threshold_once() {
    let server = Server::with_args(&["--appendonly", "no"]);
    let mut crowd = Crowd::connect(&server, 50);
    let replies = crowd.run(|_, con| {
        (0..20)
            .map(|_| slide(con, "hot", 1, 60, &["100", "500", "1000"]).1)
            .collect::<Vec<i64>>()
    });
    let mut levels: Vec<i64> = replies.into_iter().flatten().filter(|&l| l > 0).collect();
    levels.sort();
    assert_eq!(levels, [1, 2, 3]);
    let mut con = server.con();
    assert_eq!(slide(&mut con, "hot", 1, 60, &["1000"]).0, 1001);
    assert_eq!(info_field(&mut con, "guard_mon_slide_crossings"), 3);
    assert_eq!(info_field(&mut con, "guard_mon_slidecheck_calls"), 1001);
}

#[test]
fn a_replica_held_back_and_an_aof_reload_end_with_the_same_window() {
    let mut server = Server::start();
    let replica = Server::replica_of(&server);
    let mut con = server.con();
    let held = replica.hold_back(1.5);
    for i in 0..30 {
        slide(&mut con, "w", 1 + i % 3, 5, &["5", "20"]);
        thread::sleep(Duration::from_millis(20));
    }
    held.join().unwrap();
    let offset = info_field(&mut con, "master_repl_offset");
    replica.wait_until(
        |info| info.contains(&format!("slave_repl_offset:{offset}")),
        "replica caught up",
    );
    // 1.5 s late, with buckets of 100 ms: a replica that re-decided would
    // hold other buckets.
    let expected = key_state(&mut con, "w");
    assert_eq!(key_state(&mut replica.con(), "w"), expected);
    server.restart();
    assert_eq!(key_state(&mut server.con(), "w"), expected);
    let mut con = server.con();
    let _: String = redis::cmd("BGREWRITEAOF").query(&mut con).unwrap();
    server.wait_until(
        |info| info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrites:1"),
        "AOF rewrite",
    );
    server.restart();
    assert_eq!(key_state(&mut server.con(), "w"), expected);
}

/// The AOF rewrite with and without the RDB preamble: without it the
/// module's own rewrite (MON.APPLY commands) is the base file; either way
/// a restart from it ends with the same DUMP and PEXPIRETIME of every
/// window (several buckets and reports; one bucket; 3600 buckets).
#[test]
fn an_aof_rewrite_with_and_without_the_rdb_preamble_keeps_every_window() {
    for preamble in ["yes", "no"] {
        let mut server = Server::with_args(&["--aof-use-rdb-preamble", preamble]);
        let mut con = server.con();
        for i in 0..12 {
            slide(&mut con, "busy", 1 + i % 3, 60, &["3", "8", "20"]);
            slide(&mut con, "wide", 2, 3600, &["100", "BUCKETS", "3600"]);
            thread::sleep(Duration::from_millis(5));
        }
        slide(&mut con, "single", 7, 10, &["5", "BUCKETS", "1"]);
        let keys = ["busy", "wide", "single"];
        let state = |con: &mut Connection| -> Vec<(Vec<u8>, i64)> {
            keys.iter()
                .map(|key| (dump(con, key), pexpiretime(con, key)))
                .collect()
        };
        let before = state(&mut con);
        let _: String = redis::cmd("BGREWRITEAOF").query(&mut con).unwrap();
        server.wait_until(
            |info| info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrites:1"),
            "AOF rewrite",
        );
        let commands = server.aof_text().contains("MON.APPLY");
        assert_eq!(commands, preamble == "no", "preamble {preamble}");
        server.restart();
        assert_eq!(state(&mut server.con()), before, "preamble {preamble}");
    }
}

#[test]
fn a_window_is_a_real_redis_value() {
    let server = Server::start();
    let mut con = server.con();
    for _ in 0..3 {
        slide(&mut con, "w", 2, 3600, &["3", "5"]);
    }
    let key_type: String = redis::cmd("TYPE").arg("w").query(&mut con).unwrap();
    assert_eq!(key_type, "guard-win");
    let before = digest(&mut con, "w");
    let copied: i64 = redis::cmd("COPY")
        .arg("w")
        .arg("c")
        .query(&mut con)
        .unwrap();
    assert_eq!(copied, 1);
    assert_eq!(digest(&mut con, "c"), before);
    slide(&mut con, "c", 1, 3600, &["3"]);
    assert_eq!(digest(&mut con, "w"), before, "the copy is independent");
    let payload = dump(&mut con, "w");
    restore(&mut con, "r", &payload).unwrap();
    // The digest counts whether a key expires: give it w's expiry.
    let _: i64 = redis::cmd("PEXPIREAT")
        .arg("r")
        .arg(pexpiretime(&mut con, "w"))
        .query(&mut con)
        .unwrap();
    assert_eq!(digest(&mut con, "r"), before);
    let _: () = redis::cmd("DEBUG").arg("RELOAD").query(&mut con).unwrap();
    assert_eq!(digest(&mut con, "w"), before);
    let usage: i64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg("w")
        .query(&mut con)
        .unwrap();
    assert!(usage > 0 && usage < 1_000, "{usage}");
    // The key expires a window after its last add.
    let expiry = pexpiretime(&mut con, "w");
    assert!((expiry - now_ms() - 3_600_000).abs() < 5_000, "{expiry}");
}

/// A guard-win DUMP payload like `real` (a DUMP of any window): the shape
/// `[window_ms, buckets]`, the buckets (number, sum), the reports
/// (threshold, at_ms), as the value writes them.
fn window_payload(
    real: &[u8],
    shape: [i64; 2],
    buckets: &[(i64, i64)],
    reports: &[(i64, i64)],
) -> Vec<u8> {
    let mut p = Payload::like(real)
        .int(shape[0])
        .int(shape[1])
        .int(buckets.len() as i64);
    for &(b, s) in buckets {
        p = p.int(b).int(s);
    }
    p = p.int(reports.len() as i64);
    for &(t, at) in reports {
        p = p.int(t).int(at);
    }
    p.finish()
}

/// The same add to a control key and to `key`, in one MULTI (one instant
/// for both, to the bucket): their `current`s.
fn slide_both(con: &mut Connection, key: &str, control: &str) -> (i64, i64) {
    let ((current, _), (control_current, _)): ((i64, i64), (i64, i64)) = redis::pipe()
        .atomic()
        .cmd("MON.SLIDECHECK")
        .arg(key)
        .arg(1)
        .arg(2)
        .arg(1_000_000)
        .arg("BUCKETS")
        .arg(2)
        .cmd("MON.SLIDECHECK")
        .arg(control)
        .arg(1)
        .arg(2)
        .arg(1_000_000)
        .arg("BUCKETS")
        .arg(2)
        .query(con)
        .unwrap();
    (current, control_current)
}

/// Steady traffic, 1 add every 100 ms for `ms`, to `key` and a control
/// key made at the same time: `key`'s sum must come down to the
/// control's within a window (2 s) and stay there, not grow for ever.
fn steady_traffic_catches_up(con: &mut Connection, key: &str, control: &str, extra: i64) {
    let start = now_ms();
    let (first, control_first) = slide_both(con, key, control);
    assert_eq!(
        first,
        control_first + extra,
        "the step's adds count at first"
    );
    let mut last = (first, control_first);
    while now_ms() - start < 3_500 {
        thread::sleep(Duration::from_millis(100));
        last = slide_both(con, key, control);
    }
    assert_eq!(
        last.0, last.1,
        "{key} must age like the control key: {last:?}"
    );
}

/// A window written an hour ahead (a DUMP from a server whose clock ran
/// an hour ahead, as such a server writes it), RESTOREd here: the next
/// add folds the hour-ahead bucket into now's and propagates the fold;
/// from then on it ages, and steady traffic does not grow it for ever.
#[test]
fn a_window_written_an_hour_ahead_folds_into_now_and_ages() {
    let server = Server::start();
    let replica = Server::replica_of(&server);
    let mut con = server.con();
    slide(&mut con, "real", 1, 2, &["9", "BUCKETS", "2"]);
    let real = dump(&mut con, "real");
    let hour_ahead = (now_ms() + 3_600_000) / 1000;
    let payload = window_payload(&real, [2_000, 2], &[(hour_ahead, 5)], &[]);
    restore(&mut con, "ahead", &payload).unwrap();
    steady_traffic_catches_up(&mut con, "ahead", "control", 5);
    // The key expires a window after its last add, not an hour later.
    let expiry = pexpiretime(&mut con, "ahead");
    assert!(expiry - now_ms() <= 2_000, "{expiry}");
    assert!(server.aof_text().contains("FOLD"), "the fold is propagated");
    let _: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut con).unwrap();
    assert_eq!(
        digest(&mut replica.con(), "ahead"),
        digest(&mut con, "ahead")
    );
}

/// The clock itself steps an hour forward, adds land there, and it steps
/// back (libfaketime; skipped, saying so, where it cannot run the server).
#[test]
fn a_clock_that_steps_forward_and_back_over_counts_for_one_window_only() {
    let Some(server) = Server::with_clock("+0s", &[]) else {
        return;
    };
    let mut con = server.con();
    server.set_clock(3_600);
    for _ in 0..4 {
        slide(&mut con, "stepped", 1, 2, &["1000000", "BUCKETS", "2"]);
    }
    server.set_clock(0);
    steady_traffic_catches_up(&mut con, "stepped", "control", 4);
}

#[test]
fn crafted_payloads_that_break_an_invariant_are_refused() {
    let server = Server::start();
    let mut con = server.con();
    slide(&mut con, "w", 2, 60, &["3"]);
    let real = dump(&mut con, "w");
    let window = |shape, buckets: &[(i64, i64)], reports: &[(i64, i64)]| {
        window_payload(&real, shape, buckets, reports)
    };
    // Proven: a crafted valid one loads.
    restore(
        &mut con,
        "ok",
        &window([60_000, 60], &[(100, 2), (120, 3)], &[(3, 120_500)]),
    )
    .unwrap();
    let reply: (i64, i64) = redis::cmd("MON.SLIDECHECK")
        .arg("ok")
        .arg(1)
        .arg(60)
        .arg(3)
        .query(&mut con)
        .unwrap();
    assert_eq!(reply, (1, 0), "buckets from 1970 have aged out");
    let too_many: Vec<(i64, i64)> = (0..61).map(|i| (i, 1)).collect();
    let reports: Vec<(i64, i64)> = (1..=33).map(|t| (t, 1)).collect();
    for (what, payload) in [
        ("window 0.5 s", window([500, 1], &[], &[])),
        ("7 buckets", window([60_000, 7], &[], &[])),
        ("4000 buckets", window([4_000_000, 4_000], &[], &[])),
        ("61 buckets stored", window([60_000, 60], &too_many, &[])),
        ("out of order", window([60_000, 60], &[(5, 1), (4, 1)], &[])),
        (
            "a window apart",
            window([60_000, 60], &[(5, 1), (65, 1)], &[]),
        ),
        ("an empty bucket", window([60_000, 60], &[(5, 0)], &[])),
        (
            "a sum past i64",
            window([60_000, 60], &[(5, i64::MAX), (6, 1)], &[]),
        ),
        ("33 reports", window([60_000, 60], &[], &reports)),
        (
            "a threshold twice",
            window([60_000, 60], &[], &[(3, 1), (3, 2)]),
        ),
        ("a threshold of 0", window([60_000, 60], &[], &[(0, 1)])),
        // Bucket numbers no time maps to (bucket × 1000 ms past 2^63 - 1).
        (
            "bucket 2^63 - 1",
            window([60_000, 60], &[(i64::MAX, 1)], &[]),
        ),
        (
            "bucket past the last time",
            window([60_000, 60], &[(i64::MAX / 1000 + 1, 1)], &[]),
        ),
    ] {
        let error = restore(&mut con, "w", &payload).expect_err(what);
        assert!(
            error.to_string().contains("Bad data format"),
            "{what}: {error}"
        );
        assert_eq!(key_state(&mut con, "w").0, "guard-win", "{what}");
    }
}
