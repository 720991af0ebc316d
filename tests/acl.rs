//! ACL categories: on servers that let a module put its commands in
//! categories (Redis 7.2+, Valkey), every command is in its twin's
//! (`@write @fast`) and in `@guard` where the server lets modules define a
//! category; on Redis 7.0 the module says once, at load, that it cannot.

mod common;

use common::*;
use redis::{Connection, Value};

/// Every command with a call that would succeed on an empty server.
const WRITERS: [(&str, &[&str]); 5] = [
    ("MON.INCRCHECK", &["k:counter", "1", "60", "5"]),
    ("MON.DECRCLAMP", &["k:refund", "1"]),
    ("COUPON.ISSUE", &["k:coupons", "alice", "10"]),
    ("COUPON.REVOKE", &["k:coupons", "alice"]),
    ("CL.THROTTLE", &["k:rate", "1", "10", "60"]),
];

/// A connection logged in as `user`, created with `rules` (and `nopass`).
fn as_user(server: &Server, user: &str, rules: &[&str]) -> Connection {
    let mut admin = server.con();
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg(user)
        .arg(&["reset", "on", "nopass", "~*"][..])
        .arg(rules)
        .query(&mut admin)
        .unwrap();
    let mut con = server.con();
    let _: () = redis::cmd("AUTH")
        .arg(user)
        .arg("any")
        .query(&mut con)
        .unwrap();
    con
}

/// Ok, or the error's code (`NOPERM`).
fn call(con: &mut Connection, name: &str, args: &[&str]) -> Result<(), String> {
    redis::cmd(name)
        .arg(args)
        .query::<Value>(con)
        .map(|_| ())
        .map_err(|e| e.code().unwrap_or("?").to_string())
}

fn categories_supported(con: &mut Connection) -> bool {
    let (kind, version) = server_kind(con);
    kind == "valkey" || version >= [7, 2, 0]
}

fn acl_cat(con: &mut Connection, category: &str) -> Vec<String> {
    redis::cmd("ACL")
        .arg("CAT")
        .arg(category)
        .query(con)
        .unwrap_or_default()
}

#[test]
fn minus_write_denies_every_writer_where_categories_exist() {
    let server = Server::start();
    let mut admin = server.con();
    if !categories_supported(&mut admin) {
        // Redis 7.0: in no category, so `-@write` cannot reach them; the
        // README says to deny them by name.
        let mut con = as_user(&server, "no-writes", &["+@all", "-@write"]);
        for (name, args) in WRITERS {
            assert_eq!(call(&mut con, name, args), Ok(()), "{name}");
        }
        return;
    }
    let mut con = as_user(&server, "no-writes", &["+@all", "-@write"]);
    for (name, args) in WRITERS {
        assert_eq!(call(&mut con, name, args), Err("NOPERM".into()), "{name}");
    }
    let mut writer = as_user(&server, "writer", &["+@write"]);
    for (name, args) in WRITERS {
        assert_eq!(call(&mut writer, name, args), Ok(()), "{name}");
    }
    let write = acl_cat(&mut admin, "write");
    let fast = acl_cat(&mut admin, "fast");
    for (name, _) in WRITERS {
        let name = name.to_lowercase();
        assert!(write.contains(&name) && fast.contains(&name), "{name}");
    }
}

#[test]
fn plus_read_alone_runs_no_writer() {
    let server = Server::start();
    if !categories_supported(&mut server.con()) {
        return;
    }
    let mut reader = as_user(&server, "reader", &["+@read"]);
    for (name, args) in WRITERS {
        assert_eq!(
            call(&mut reader, name, args),
            Err("NOPERM".into()),
            "{name}"
        );
    }
    assert_eq!(call(&mut reader, "GET", &["k:counter"]), Ok(()));
}

#[test]
fn plus_guard_allows_every_command_and_nothing_else() {
    let server = Server::start();
    let mut admin = server.con();
    let categories: Vec<String> = redis::cmd("ACL").arg("CAT").query(&mut admin).unwrap();
    if !categories.iter().any(|c| c == "guard") {
        // No categories for module commands at all, or none a module may
        // define: either way the module said so at load.
        let said = if categories_supported(&mut admin) {
            "no @guard"
        } else {
            "cannot put module commands in ACL categories"
        };
        assert!(server.log().contains(said), "{}", server.log());
        return;
    }
    let mut guard = as_user(&server, "guard-only", &["+@guard"]);
    for (name, args) in WRITERS {
        assert_eq!(call(&mut guard, name, args), Ok(()), "{name}");
    }
    assert_eq!(
        call(&mut guard, "INCRBY", &["k:other", "1"]),
        Err("NOPERM".into())
    );
    let mut listed = acl_cat(&mut admin, "guard");
    listed.sort();
    let mut expected: Vec<String> = WRITERS.iter().map(|(n, _)| n.to_lowercase()).collect();
    expected.sort();
    assert_eq!(listed, expected);
}

#[test]
fn redis_7_0_warns_once_at_load_that_it_cannot_set_categories() {
    let server = Server::start();
    let warnings = server
        .log()
        .matches("cannot put module commands in ACL categories")
        .count();
    let expected = usize::from(!categories_supported(&mut server.con()));
    assert_eq!(warnings, expected, "{}", server.log());
}
