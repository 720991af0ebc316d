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
