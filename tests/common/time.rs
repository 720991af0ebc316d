//! Time as the tests see it: the wall clock the servers under test share
//! with them, and polling until something holds.

use std::thread;
use std::time::{Duration, Instant};

/// The wall clock in ms since the Unix epoch: the servers under test run
/// on this machine and read the same clock.
pub fn now_ms() -> i64 {
    now_ns() / 1_000_000
}

/// The same in ns, as CL.THROTTLE keeps its times.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

/// Polls `ready` until it holds, for at most `timeout`.
pub fn wait_for(mut ready: impl FnMut() -> bool, timeout: Duration, what: &str) {
    let deadline = Instant::now() + timeout;
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(20));
    }
}
