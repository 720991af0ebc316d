//! A window is one block: 10^4 full windows of 60 buckets take at most
//! 600 B each with their keys, a bucket beyond 60 at most 8 B, as the
//! allocator counts (`used_memory` growth); `MEMORY USAGE` says within 10%
//! of it.

mod common;

use common::memory::{full_window, memory_usage, used_memory};
use common::Server;

/// (real bytes per window with its key, MEMORY USAGE per window) for
/// `count` full windows of `buckets` one-second buckets, on a fresh server.
fn per_window(buckets: i64, count: usize) -> (f64, f64) {
    let server = Server::with_args(&["--appendonly", "no"]);
    let mut con = server.con();
    let payload = full_window(&mut con, buckets, buckets);
    let keys: Vec<String> = (0..count).map(|i| format!("win:{i:06}")).collect();
    let start = used_memory(&mut con);
    let mut pipe = redis::pipe();
    for key in &keys {
        pipe.cmd("RESTORE").arg(key).arg(0).arg(&payload).ignore();
    }
    let () = pipe.query(&mut con).unwrap();
    let real = (used_memory(&mut con) - start) as f64 / count as f64;
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let usage = memory_usage(&mut con, &refs) as f64 / count as f64;
    (real, usage)
}

#[test]
fn a_full_window_fits_its_bound_and_memory_usage_tells_the_truth() {
    let (minute, minute_usage) = per_window(60, 10_000);
    let (hour, hour_usage) = per_window(3_600, 1_000);
    eprintln!("60 buckets: {minute:.0} B real, {minute_usage:.0} B MEMORY USAGE; 3600: {hour:.0} B, {hour_usage:.0} B");
    assert!(minute <= 600.0, "{minute} B for a window of 60 buckets");
    let beyond = (hour - minute) / (3_600.0 - 60.0);
    assert!(beyond <= 8.0, "{beyond} B a bucket beyond 60");
    for (real, usage) in [(minute, minute_usage), (hour, hour_usage)] {
        assert!(
            (usage - real).abs() <= real / 10.0,
            "MEMORY USAGE {usage} B for {real} B real"
        );
    }
}
