//! Active defragmentation moves windows and campaigns out of sparse pages
//! and changes nothing in them, while clients keep writing. Runs where the
//! server can defragment (a jemalloc build with Redis's patch: Redis 8.2 of
//! `make test-matrix`); elsewhere the server's refusal is checked and said.

mod common;

use common::memory::memory_info;
use common::*;
use redis::{Connection, Value};

const WINDOWS: usize = 20_000;
const CAMPAIGNS: usize = 2_000;
/// Every KEPT-th value of each kind survives the deletion that fragments.
const KEPT: usize = 5;

fn info_float(con: &mut Connection, field: &str) -> f64 {
    memory_info(con, field).parse().unwrap()
}

fn pipeline_ok(con: &mut Connection, commands: impl Iterator<Item = redis::Cmd>) {
    let mut pipe = redis::pipe();
    for command in commands {
        pipe.add_command(command).ignore();
    }
    let () = pipe.query(con).unwrap();
}

/// What each value is, byte for byte: DUMP, its digest, its expiry.
fn contents(con: &mut Connection, keys: &[String]) -> Vec<(Value, Value, i64)> {
    keys.iter()
        .map(|key| {
            let dump: Value = redis::cmd("DUMP").arg(key).query(con).unwrap();
            let digest: Value = redis::cmd("DEBUG")
                .arg("DIGEST-VALUE")
                .arg(key)
                .query(con)
                .unwrap();
            let pttl: i64 = redis::cmd("PEXPIRETIME").arg(key).query(con).unwrap();
            (dump, digest, pttl)
        })
        .collect()
}

#[test]
fn active_defrag_moves_values_and_changes_none_of_them() {
    let server = Server::with_args(&["--appendonly", "no", "--hz", "100"]);
    let mut con = server.con();
    let enabled: redis::RedisResult<()> = redis::cmd("CONFIG")
        .arg(&["SET", "activedefrag", "yes"])
        .query(&mut con);
    if let Err(refused) = enabled {
        // The server's own error: the module registers its callbacks all
        // the same, and nothing else is to be seen here.
        assert!(
            refused
                .to_string()
                .contains("Active defragmentation cannot be enabled"),
            "{refused}"
        );
        eprintln!(
            "this server cannot defragment ({refused}): left to Redis 8.2 of make test-matrix"
        );
        return;
    }
    let () = redis::cmd("CONFIG")
        .arg(&["SET", "activedefrag", "no"])
        .query(&mut con)
        .unwrap();

    // Windows of 60 buckets (a ring each) and campaigns of 20 claims,
    // made interleaved, then four in five deleted: the survivors sit
    // alone in pages that are mostly free.
    let window = |i: usize| format!("w:{i}");
    let campaign = |i: usize| format!("c:{i}");
    for chunk in (0..WINDOWS).collect::<Vec<_>>().chunks(1_000) {
        pipeline_ok(
            &mut con,
            chunk.iter().flat_map(|&i| {
                let mut add = redis::cmd("MON.SLIDECHECK");
                add.arg(window(i)).arg(&["3", "3600", "1000000000"]);
                let mut made = vec![add];
                if i % (WINDOWS / CAMPAIGNS) == 0 {
                    let c = campaign(i / (WINDOWS / CAMPAIGNS));
                    let mut create = redis::cmd("COUPON.CREATE");
                    create.arg(&c).arg(&["1000", "HOLD", "3600"]);
                    made.push(create);
                    for u in 0..20 {
                        let mut reserve = redis::cmd("COUPON.RESERVE");
                        reserve
                            .arg(&c)
                            .arg(format!("user:{i}:{u}"))
                            .arg("ID")
                            .arg(format!("order:{i}:{u}"));
                        made.push(reserve);
                    }
                }
                made
            }),
        );
    }
    let dropped = |n: usize, name: &dyn Fn(usize) -> String| {
        (0..n)
            .filter(|i| i % KEPT != 0)
            .map(|i| {
                let mut del = redis::cmd("DEL");
                del.arg(name(i));
                del
            })
            .collect::<Vec<_>>()
    };
    pipeline_ok(&mut con, dropped(WINDOWS, &window).into_iter());
    pipeline_ok(&mut con, dropped(CAMPAIGNS, &campaign).into_iter());
    let kept: Vec<String> = (0..WINDOWS)
        .step_by(KEPT)
        .map(window)
        .chain((0..CAMPAIGNS).step_by(KEPT).map(campaign))
        .collect();
    let before = contents(&mut con, &kept);
    let fragmented = info_float(&mut con, "allocator_frag_ratio");

    // Defragment while a second client keeps writing to other keys.
    for (name, value) in [
        ("active-defrag-ignore-bytes", "100kb"),
        ("active-defrag-threshold-lower", "1"),
        ("active-defrag-cycle-min", "50"),
        ("active-defrag-cycle-max", "90"),
        // Every value but the smallest is walked late, in steps Redis
        // resumes by the module's cursor.
        ("active-defrag-max-scan-fields", "5"),
        ("activedefrag", "yes"),
    ] {
        let () = redis::cmd("CONFIG")
            .arg(&["SET", name, value])
            .query(&mut con)
            .unwrap();
    }
    let writer = {
        let mut con = server.con();
        std::thread::spawn(move || {
            let mut calls = 0;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(8);
            while std::time::Instant::now() < deadline {
                let _: Value = redis::cmd("MON.SLIDECHECK")
                    .arg(format!("live:w:{}", calls % 50))
                    .arg(&["1", "3600", "1000000000"])
                    .query(&mut con)
                    .unwrap();
                let _: Value = redis::cmd("COUPON.RESERVE")
                    .arg(format!("c:{}", (calls % 400) * KEPT))
                    .arg(format!("live:{calls}"))
                    .query(&mut con)
                    .unwrap();
                calls += 1;
            }
            calls
        })
    };
    let calls = writer.join().unwrap();
    let defragged = info_float(&mut con, "allocator_frag_ratio");
    let moves = info_field(&mut con, "guard_defrag_moves");
    let () = redis::cmd("CONFIG")
        .arg(&["SET", "activedefrag", "no"])
        .query(&mut con)
        .unwrap();
    eprintln!(
        "allocator_frag_ratio {fragmented} -> {defragged}, {moves} module allocations moved, \
         {calls} writes meanwhile"
    );
    assert!(moves > 0, "no module allocation moved");
    assert!(
        defragged < fragmented - 0.1,
        "fragmentation {fragmented} -> {defragged}"
    );

    // The writer's keys hold exactly its calls; the others are unchanged
    // but for the writer's holds on the campaigns it touched.
    let live_sum: i64 = (0..50)
        .map(|w| {
            let reply: Vec<i64> = redis::cmd("MON.SLIDECHECK")
                .arg(format!("live:w:{w}"))
                .arg(&["1", "3600", "1000000000"])
                .query(&mut con)
                .unwrap();
            reply[0] - 1
        })
        .sum();
    assert_eq!(live_sum, calls as i64);
    let touched = |key: &String| {
        key.strip_prefix("c:")
            .and_then(|i| i.parse::<usize>().ok())
            .is_some_and(|i| i / KEPT < 400 && i / KEPT < calls)
    };
    let after = contents(&mut con, &kept);
    for ((key, before), after) in kept.iter().zip(&before).zip(&after) {
        if !touched(key) {
            assert_eq!(before, after, "{key} changed");
        }
    }
    let held: i64 = kept
        .iter()
        .filter(|key| touched(key))
        .map(|key| {
            let info: Vec<Value> = redis::cmd("COUPON.INFO").arg(key).query(&mut con).unwrap();
            let at = info
                .iter()
                .position(|v| *v == Value::BulkString(b"held".to_vec()))
                .unwrap();
            match &info[at + 1] {
                Value::Int(held) => held - 20,
                other => panic!("{other:?}"),
            }
        })
        .sum();
    assert_eq!(held, calls as i64, "the writer's holds");
}
