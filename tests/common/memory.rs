//! Memory as the allocator sees it: `used_memory` (what Redis's allocator
//! gave), `MEMORY USAGE` (what a value says it holds), and values built to
//! a known size to measure them on.

use redis::Connection;

use super::assert::info_value;
use super::payload::{dump, Payload};

/// One field of `INFO memory`, as the server wrote it.
pub fn memory_info(con: &mut Connection, field: &str) -> String {
    info_value(con, "memory", field)
}

pub fn used_memory(con: &mut Connection) -> i64 {
    memory_info(con, "used_memory").parse().unwrap()
}

/// What `DEL key` gives back to `used_memory`, once any background free
/// it started is done (Valkey 8 deletes lazily by default: a big value is
/// freed by another thread after DEL answers).
pub fn freed_by_del(con: &mut Connection, key: &str) -> i64 {
    let before = used_memory(con);
    let _: i64 = redis::cmd("DEL").arg(key).query(con).unwrap();
    let waited = std::time::Instant::now();
    while memory_info(con, "lazyfree_pending_objects") != "0" {
        assert!(waited.elapsed().as_secs() < 30, "{key}: still freeing");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    before - used_memory(con)
}

/// `MEMORY USAGE key SAMPLES 0` summed over `keys` (a missing key: 0).
pub fn memory_usage(con: &mut Connection, keys: &[&str]) -> i64 {
    keys.iter()
        .map(|key| {
            let bytes: Option<i64> = redis::cmd("MEMORY")
                .arg("USAGE")
                .arg(*key)
                .arg("SAMPLES")
                .arg(0)
                .query(con)
                .unwrap();
            bytes.unwrap_or(0)
        })
        .sum()
}

/// A `guard-win` payload with every bucket holding adds, for a window of
/// `window_s` seconds in `buckets` buckets, made from a real DUMP: no
/// client can fill 3,600 buckets of an hour without waiting for it.
pub fn full_window(con: &mut Connection, window_s: i64, buckets: i64) -> Vec<u8> {
    let _: redis::Value = redis::cmd("MON.SLIDECHECK")
        .arg("mem:seed")
        .arg(1)
        .arg(60)
        .arg(1)
        .query(con)
        .unwrap();
    let real = dump(con, "mem:seed");
    let first = 1_800_000_000_000 / (window_s * 1000 / buckets);
    let mut payload = Payload::like(&real)
        .int(window_s * 1000)
        .int(buckets)
        .int(buckets);
    for b in 0..buckets {
        payload = payload.int(first + b).int(1_000 + b);
    }
    payload.int(0).finish()
}
