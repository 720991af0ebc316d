//! One MON.SLIDECHECK call reads the clock once: the key's expiry is
//! `window` after the add it makes ("its expiry is window seconds after its
//! last add"), and the threshold it reports is reported at that same time.
//! Reading the clock twice (once for the expiry, once for the bucket and
//! the report) lets a millisecond tick, or a pause, fall between the two:
//! the key then expires before its last add stops counting.

mod common;

use common::payload::{dump, items};
use common::*;

#[test]
fn the_expiry_and_the_report_of_one_call_are_the_same_moment() {
    let server = Server::start();
    let mut con = server.con();
    const CALLS: usize = 20_000;
    let mut pipe = redis::pipe();
    for i in 0..CALLS {
        let key = format!("one-clock:{i}");
        pipe.cmd("MON.SLIDECHECK")
            .arg(&key)
            .arg(&["1", "60", "1"])
            .ignore();
        pipe.cmd("PEXPIRETIME").arg(&key);
    }
    let expiries: Vec<i64> = pipe.query(&mut con).unwrap();
    let mut apart = Vec::new();
    for (i, expiry) in expiries.into_iter().enumerate() {
        // window 60000, buckets 60, 1 bucket (number, sum), 1 report
        // (threshold 1, at_ms).
        let items = items(&dump(&mut con, &format!("one-clock:{i}")));
        assert_eq!(items.len(), 8, "{items:?}");
        let (bucket, reported_at) = (items[3], items[7]);
        assert_eq!(bucket, reported_at / 1000, "the add and the report");
        if reported_at != expiry - 60_000 {
            apart.push((i, reported_at, expiry));
        }
    }
    assert!(
        apart.is_empty(),
        "{} of {CALLS} calls set an expiry that is not window after their add (key, add ms, expiry ms): {:?}",
        apart.len(),
        &apart[..apart.len().min(5)]
    );
}
