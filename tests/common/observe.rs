//! What a call did, seen from outside the module: the keyspace events it
//! caused, whether a WATCH saw it, and a key's state in a form two
//! servers can compare.

use std::time::Duration;

use redis::{Connection, Value};

use super::calls::{campaign, pexpiretime};
use super::server::Server;

/// Collects keyspace events (`__keyevent@0__:*`) that `call` causes.
pub fn events_of(server: &Server, call: impl FnOnce(&mut Connection)) -> Vec<(String, String)> {
    let mut con = server.con();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg("KEA")
        .query(&mut con)
        .unwrap();
    let mut listener = server.con();
    let mut pubsub = listener.as_pubsub();
    pubsub.psubscribe("__keyevent@0__:*").unwrap();
    call(&mut con);
    // A marker event tells when everything before it has arrived.
    let _: () = redis::cmd("SET")
        .arg("events-marker")
        .arg(1)
        .query(&mut con)
        .unwrap();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut events = Vec::new();
    loop {
        let message = pubsub.get_message().expect("keyspace event");
        let event = message
            .get_channel_name()
            .trim_start_matches("__keyevent@0__:")
            .to_string();
        let key: String = message.get_payload().unwrap();
        if key == "events-marker" {
            return events;
        }
        events.push((event, key));
    }
}

pub fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(e, k)| (e.to_string(), k.to_string()))
        .collect()
}

/// What the module may have written to `key`, in a form two servers can
/// compare: its type, its contents (a string's value, or a set's members
/// sorted: a set's internal order may differ between servers) and its
/// absolute expiry.
pub fn key_state(con: &mut Connection, key: &str) -> (String, Vec<String>, i64) {
    let key_type: String = redis::cmd("TYPE").arg(key).query(con).unwrap();
    let mut contents: Vec<String> = match key_type.as_str() {
        "string" => vec![redis::cmd("GET").arg(key).query(con).unwrap()],
        "set" => redis::cmd("SMEMBERS").arg(key).query(con).unwrap(),
        // Equal digests, equal values.
        "guard-cpn" | "guard-win" => vec![campaign::digest(con, key)],
        "zset" => redis::cmd("ZRANGE")
            .arg(key)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query(con)
            .unwrap(),
        "none" => Vec::new(),
        other => panic!("{key} is a {other}"),
    };
    contents.sort();
    (key_type, contents, pexpiretime(con, key))
}

pub fn keys_state(con: &mut Connection, keys: &[&str]) -> Vec<(String, Vec<String>, i64)> {
    keys.iter().map(|key| key_state(con, key)).collect()
}

/// WATCH `key`, run `call` on another connection, and report whether a
/// transaction on the watched key still goes through (nothing signalled
/// the key as modified).
pub fn watch_survives(server: &Server, key: &str, call: impl FnOnce(&mut Connection)) -> bool {
    let mut watcher = server.con();
    let _: () = redis::cmd("WATCH").arg(key).query(&mut watcher).unwrap();
    call(&mut server.con());
    let _: () = redis::cmd("MULTI").query(&mut watcher).unwrap();
    let _: Value = redis::cmd("PING").query(&mut watcher).unwrap();
    let result: Value = redis::cmd("EXEC").query(&mut watcher).unwrap();
    result != Value::Nil
}

/// A stream's last entry (`XREVRANGE stream + - COUNT 1`), as `T` reads
/// an entry; None for an empty or missing stream.
pub fn last_entry<T: redis::FromRedisValue>(con: &mut Connection, stream: &str) -> Option<T> {
    let mut last: Vec<T> = redis::cmd("XREVRANGE")
        .arg(stream)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query(con)
        .unwrap();
    last.pop()
}

/// Waits until the one replica has acknowledged every write so far
/// (`WAIT 1 10000` must answer 1).
pub fn replica_caught_up(con: &mut Connection) {
    let acked: i64 = redis::cmd("WAIT").arg(1).arg(10_000).query(con).unwrap();
    assert_eq!(acked, 1, "the replica acknowledged the writes");
}

/// The server's clock (`TIME`) in unix ms.
pub fn server_ms(con: &mut Connection) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(con).unwrap();
    s * 1000 + us / 1000
}
