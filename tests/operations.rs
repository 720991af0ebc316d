//! Operating the module: ACLs, transactions, scripts and RESP3 clients.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::*;
use redis::Connection;

fn as_user(server: &Server, user: &str) -> Connection {
    let mut con = server.con();
    let _: () = redis::cmd("AUTH")
        .arg(user)
        .arg("secret")
        .query(&mut con)
        .unwrap();
    con
}

fn acl_setuser(con: &mut Connection, rules: &[&str]) {
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg(rules)
        .query(con)
        .unwrap();
}

/// Every command a client may run (the registry's writers and readers),
/// its example call with each key put under `prefix`.
fn every_command(prefix: &str) -> Vec<Vec<String>> {
    registry::COMMANDS
        .iter()
        .filter(|spec| spec.access != registry::Access::Replay)
        .map(|spec| {
            let mut args = vec![spec.name.to_string()];
            for (at, arg) in spec.example.iter().enumerate() {
                args.push(match spec.keys_at.contains(&at) {
                    true => format!("{prefix}{at}"),
                    false => arg.to_string(),
                });
            }
            args
        })
        .collect()
}

fn run(con: &mut Connection, args: &[String]) -> redis::RedisResult<redis::Value> {
    redis::cmd(&args[0]).arg(&args[1..]).query(con)
}

#[test]
fn acl_key_patterns_apply_to_every_command() {
    let server = Server::start();
    acl_setuser(
        &mut server.con(),
        &["shop", "on", ">secret", "~shop:*", "+@all"],
    );
    let mut shop = as_user(&server, "shop");
    for (i, args) in every_command("other:key").iter().enumerate() {
        let error = run(&mut shop, args).unwrap_err();
        assert_eq!(error.code(), Some("NOPERM"), "{args:?}: {error}");
        // The same command on allowed keys gets past ACL (a command on a
        // missing campaign may still refuse, but not for NOPERM).
        let allowed: Vec<String> = every_command(&format!("shop:{i}:"))[i].clone();
        if let Err(error) = run(&mut shop, &allowed) {
            assert_ne!(error.code(), Some("NOPERM"), "{allowed:?}: {error}");
        }
    }
    let written: Vec<String> = redis::cmd("KEYS")
        .arg("other:*")
        .query(&mut server.con())
        .unwrap();
    assert_eq!(written, Vec::<String>::new());
}

#[test]
fn a_user_without_the_command_cannot_call_it() {
    let server = Server::start();
    acl_setuser(
        &mut server.con(),
        &["clerk", "on", ">secret", "~*", "+@all", "-coupon.issue"],
    );
    let mut clerk = as_user(&server, "clerk");
    let error = redis::cmd("COUPON.ISSUE")
        .arg("drop")
        .arg("alice")
        .arg(10)
        .query::<i64>(&mut clerk)
        .unwrap_err();
    assert_eq!(error.code(), Some("NOPERM"), "{error}");
    assert!(
        error.to_string().to_lowercase().contains("coupon.issue"),
        "{error}"
    );
    // other commands stay allowed
    assert_eq!(incrcheck(&mut clerk, "c", 1, 60, &[1]), (1, 1));
    assert_eq!(
        info_field(&mut server.con(), "guard_coupon_issue_calls"),
        0,
        "rejected before the handler"
    );
}

#[test]
fn commands_work_inside_multi_exec_and_replicate_correctly() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();
    set_ex(&mut con, "refund", 10, 100);
    let (levels, left, rank, again): ((i64, i64), i64, i64, i64) = redis::pipe()
        .atomic()
        .cmd("MON.INCRCHECK")
        .arg("orders")
        .arg(3)
        .arg(60)
        .arg(3)
        .cmd("MON.DECRCLAMP")
        .arg("refund")
        .arg(4)
        .cmd("COUPON.ISSUE")
        .arg("drop")
        .arg("alice")
        .arg(5)
        .cmd("COUPON.ISSUE")
        .arg("drop")
        .arg("alice")
        .arg(5)
        .query(&mut con)
        .unwrap();
    assert_eq!((levels, left, rank, again), ((3, 1), 6, 1, -1));
    assert_same_on_replica(&primary, &replica, &["orders", "refund", "drop"]);
}

#[test]
fn commands_work_from_lua_scripts_and_replicate_correctly() {
    let primary = Server::start();
    let replica = Server::replica_of(&primary);
    let mut con = primary.con();
    let script = redis::Script::new(
        "local r = redis.call('MON.INCRCHECK', KEYS[1], 2, 60, 2) \
         local c = redis.call('COUPON.ISSUE', KEYS[2], 'bob', 3) \
         return {r[1], r[2], c}",
    );
    let reply: Vec<i64> = script.key("orders").key("drop").invoke(&mut con).unwrap();
    assert_eq!(reply, [2, 1, 1]);
    assert_same_on_replica(&primary, &replica, &["orders", "drop"]);
}

fn assert_same_on_replica(primary: &Server, replica: &Server, keys: &[&str]) {
    let mut con = primary.con();
    let acked: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut con).unwrap();
    assert_eq!(acked, 1);
    let mut replica_con = replica.con();
    for key in keys {
        let dump = |c: &mut Connection| -> (redis::Value, i64) {
            (
                redis::cmd("DUMP").arg(*key).query(c).unwrap(),
                pexpiretime(c, key),
            )
        };
        let on_primary = dump(&mut con);
        assert_ne!(on_primary.0, redis::Value::Nil, "{key} exists");
        assert_eq!(on_primary, dump(&mut replica_con), "{key} on the replica");
    }
}

/// Sends `request` as raw RESP and asserts the exact reply bytes.
fn assert_raw_reply(stream: &mut TcpStream, request: &[&str], expected: &str) {
    let mut out = format!("*{}\r\n", request.len());
    for part in request {
        out.push_str(&format!("${}\r\n{part}\r\n", part.len()));
    }
    stream.write_all(out.as_bytes()).unwrap();
    let mut reply = vec![0u8; expected.len()];
    stream.read_exact(&mut reply).unwrap();
    assert_eq!(String::from_utf8_lossy(&reply), expected, "{request:?}");
}

#[test]
fn resp3_clients_get_the_same_replies() {
    let server = Server::start();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    // HELLO 3 answers with a map of server details; a PING after it marks
    // where that map ends.
    stream
        .write_all(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*1\r\n$4\r\nPING\r\n")
        .unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"+PONG\r\n") {
        stream.read_exact(&mut byte).unwrap();
        seen.push(byte[0]);
    }
    assert!(seen.starts_with(b"%"), "HELLO 3 answered with a map");
    assert_raw_reply(
        &mut stream,
        &["MON.INCRCHECK", "k", "3", "60", "3"],
        "*2\r\n:3\r\n:1\r\n",
    );
    assert_raw_reply(&mut stream, &["MON.DECRCLAMP", "k", "1"], ":2\r\n");
    assert_raw_reply(&mut stream, &["COUPON.ISSUE", "d", "u", "1"], ":1\r\n");
    assert_raw_reply(&mut stream, &["COUPON.ISSUE", "d", "v", "1"], ":-2\r\n");
    assert_raw_reply(&mut stream, &["COUPON.REVOKE", "d", "u"], ":1\r\n");
    assert_raw_reply(
        &mut stream,
        &["MON.DECRCLAMP", "k", "0"],
        "-ERR amount must be a positive integer\r\n",
    );
}
