//! A large campaign and a mass expiry: every hold expires at once, and no
//! call after that does unbounded work. `make test` runs it with 20,000
//! claims; `make campaign-scale` with 1,000,000 (GUARD_SCALE_CLAIMS). It
//! asserts what is counted (exact INFO, at most 16 reclaims plus the
//! caller's own per write) and prints what is timed (the slowest call of
//! each command, from SLOWLOG), never asserting a time.

mod common;

use std::collections::HashMap;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::campaign::*;
use common::*;
use redis::Connection;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn claims_wanted() -> usize {
    std::env::var("GUARD_SCALE_CLAIMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

fn config(con: &mut Connection, name: &str, value: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query(con)
        .unwrap();
}

#[test]
fn a_mass_expiry_leaves_every_call_bounded() {
    let claims_made = claims_wanted();
    // Nothing persisted: this is about the data type, not disk speed.
    let server = Server::with_args(&["--appendonly", "no"]);
    let mut con = server.con();
    create(&mut con, "sale", claims_made as i64 + 1_000, 1, 3_600);

    // Fill: one hold length for all, long enough to outlast the filling;
    // the last claim made is the last to expire.
    let filling = Instant::now();
    let hold_s = 2 + claims_made as i64 / 50_000;
    for batch in (0..claims_made).collect::<Vec<_>>().chunks(2_000) {
        let mut pipe = redis::pipe();
        for i in batch {
            pipe.cmd("COUPON.RESERVE")
                .arg("sale")
                .arg(format!("user-{i}"))
                .arg("HOLD")
                .arg(hold_s)
                .ignore();
        }
        let _: () = pipe.query(&mut con).unwrap();
    }
    let filled_in = filling.elapsed();
    let info_full = info(&mut con, "sale");
    assert_eq!(
        info_full["held"], claims_made as i64,
        "filled before the holds ended"
    );
    let bytes: i64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg("sale")
        .arg("SAMPLES")
        .arg(0)
        .query(&mut con)
        .unwrap();

    // The mass expiry: every hold ends, nothing reclaimed yet.
    let last = claims(&mut con, "sale", &["FROM", &claims_made.to_string()])[0].expires_at_ms;
    thread::sleep(Duration::from_millis((last - now_ms() + 50).max(0) as u64));
    let info_after = info(&mut con, "sale");
    assert_eq!(
        (info_after["held"], info_after["expired"]),
        (0, claims_made as i64)
    );

    // Every call from now on is logged with its duration.
    config(&mut con, "slowlog-log-slower-than", "0");
    config(&mut con, "slowlog-max-len", "100000");
    let _: () = redis::cmd("SLOWLOG").arg("RESET").query(&mut con).unwrap();
    let reclaimed = |con: &mut Connection| info_field(con, "guard_coupon_expired");
    let mut max_reclaim = 0;
    for i in 0..1_000 {
        let before = reclaimed(&mut con);
        let (claim, _) = reserve(&mut con, "sale", &format!("new-{i}"), &[]);
        assert!(claim > claims_made as i64);
        if i % 3 == 0 {
            assert_eq!(confirm(&mut con, "sale", claim), 1);
        }
        max_reclaim = max_reclaim.max(reclaimed(&mut con) - before);
        if i % 100 == 0 {
            info(&mut con, "sale");
            claims(&mut con, "sale", &["COUNT", "10"]);
        }
    }
    assert!(
        max_reclaim <= 2 * 17,
        "a reserve and a confirm reclaimed {max_reclaim}"
    );
    let total_reclaimed = reclaimed(&mut con);
    let info_end = info(&mut con, "sale");
    assert_eq!(
        info_end["expired"], claims_made as i64,
        "counts stay exact while reclaiming"
    );
    assert_eq!(info_end["held"] + info_end["confirmed"], 1_000);

    // The slowest call of each command, from the server's own log:
    // entries are [id, time, duration µs, [command, args...], ...].
    let entries: Vec<Vec<redis::Value>> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(-1)
        .query(&mut con)
        .unwrap();
    let mut slowest: HashMap<String, i64> = HashMap::new();
    for entry in &entries {
        let (Some(redis::Value::Int(micros)), Some(args)) = (entry.get(2), entry.get(3)) else {
            panic!("a SLOWLOG entry of another shape: {entry:?}");
        };
        let args: Vec<String> = redis::from_redis_value(args).unwrap();
        let worst = slowest.entry(args[0].to_lowercase()).or_default();
        *worst = (*worst).max(*micros);
    }
    let mut report: Vec<_> = slowest
        .into_iter()
        .filter(|(n, _)| n.starts_with("coupon."))
        .collect();
    report.sort();
    println!(
        "campaign scale: {claims_made} holds filled in {filled_in:.1?}, MEMORY USAGE {bytes} B \
         ({:.0} B per claim); after the mass expiry, {total_reclaimed} reclaimed by 1,000 reserves \
         and 334 confirms (at most {max_reclaim} in one pair); slowest call in µs: {report:?}",
        bytes as f64 / claims_made as f64
    );
}
