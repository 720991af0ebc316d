//! Effects reach replicas and the AOF as plain writes with absolute expiry
//! times: a late replica or a restart ends with the same values and the
//! same PEXPIRETIME as the primary.

mod common;

use std::thread;
use std::time::Duration;

use common::*;
use redis::Connection;

/// Everything the module writes, for one key set.
fn state(con: &mut Connection) -> Vec<(String, Vec<String>, i64)> {
    keys_state(con, &["orders", "amount", "refund", "drop", "rate"])
}

fn workload(con: &mut Connection) {
    for _ in 0..3 {
        incrcheck(con, "orders", 1, 30, &[2]);
    }
    incrcheck(con, "amount", 500, 60, &[100, 1000]);
    set_ex(con, "refund", 100, 45);
    decrclamp(con, "refund", 30);
    decrclamp(con, "refund", 100);
    issue(con, "drop", "alice", 3);
    issue(con, "drop", "bob", 3);
    issue(con, "drop", "alice", 3);
    revoke(con, "drop", "bob");
    issue(con, "drop", "carol", 3);
    throttle(con, "rate", 2, 1, 60, 1);
    throttle(con, "rate", 2, 1, 60, 2);
    throttle(con, "rate", 2, 1, 60, 1);
    throttle(con, "rate", 2, 1, 60, 0);
}

#[test]
fn a_replica_that_applies_the_stream_late_ends_with_the_same_expiry() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();

    // Hold the replica back so it replays the stream well after the primary
    // wrote it: a relative EXPIRE would land 1.5 s later there.
    let sleeper = replica.hold_back(1.5);
    workload(&mut con);
    replica_caught_up(&mut con);
    sleeper.join().unwrap();

    let on_primary = state(&mut con);
    assert!(
        on_primary.iter().all(|(_, _, expiry)| *expiry != -2),
        "{on_primary:?}"
    );
    assert_eq!(on_primary, state(&mut replica.con()));
}

#[test]
fn calls_that_change_nothing_propagate_nothing() {
    let primary = Server::start();
    let _replica = Server::replica_of(&primary);
    let mut con = primary.con();
    issue(&mut con, "drop", "alice", 1);
    throttle(&mut con, "rate", 0, 1, 60, 1);
    let _: () = redis::cmd("SET")
        .arg("zero")
        .arg(0)
        .query(&mut con)
        .unwrap();
    let offset = info_field(&mut con, "master_repl_offset");
    assert_eq!(decrclamp(&mut con, "missing", 5), 0);
    assert_eq!(decrclamp(&mut con, "zero", 5), 0);
    assert_eq!(issue(&mut con, "drop", "alice", 1), -1);
    assert_eq!(issue(&mut con, "drop", "bob", 1), -2);
    assert_eq!(revoke(&mut con, "drop", "bob"), 0);
    assert_eq!(throttle(&mut con, "rate", 0, 1, 60, 1)[0], 1);
    assert_eq!(throttle(&mut con, "rate", 0, 1, 60, 0)[0], 0);
    let _ = redis::cmd("MON.INCRCHECK")
        .arg("drop")
        .arg(1)
        .arg(1)
        .arg(1)
        .query::<redis::Value>(&mut con)
        .expect_err("a bad call gets an error reply");
    assert_eq!(info_field(&mut con, "master_repl_offset"), offset);
    // ...while a real write does move the stream.
    decrclamp(&mut con, "missing", 1);
    incrcheck(&mut con, "c", 1, 10, &[5]);
    assert!(info_field(&mut con, "master_repl_offset") > offset);
}

#[test]
fn an_aof_restart_keeps_values_and_does_not_extend_the_window() {
    let mut server = Server::start();
    let mut con = server.con();
    workload(&mut con);
    assert_eq!(incrcheck(&mut con, "short", 1, 3, &[1]), (1, 1));
    let expiry = pexpiretime(&mut con, "short");
    let before = state(&mut con);

    thread::sleep(Duration::from_millis(1500));
    server.restart();
    let mut con = server.con();
    assert_eq!(state(&mut con), before);
    assert_eq!(pexpiretime(&mut con, "short"), expiry);

    // The 3 s window still ends when it was meant to, not 3 s after the restart.
    thread::sleep(Duration::from_millis(
        (expiry - now_ms() + 100).max(0) as u64
    ));
    let exists: i64 = redis::cmd("EXISTS").arg("short").query(&mut con).unwrap();
    assert_eq!(exists, 0);
    // The new window is a fresh one, reported again.
    assert_eq!(incrcheck(&mut con, "short", 1, 3, &[1]), (1, 1));
}
