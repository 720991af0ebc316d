//! ACL categories: on servers that let a module put its commands in
//! categories (Redis 7.2+, Valkey), every command is in its twin's
//! (`@write @fast`) and in `@guard` where the server lets modules define a
//! category; on Redis 7.0 the module says once, at load, that it cannot.

mod common;

use common::*;
use redis::{Connection, Value};

/// Every writer a client may call, with arguments.
const WRITERS: [(&str, &[&str]); 9] = [
    ("MON.INCRCHECK", &["k:counter", "1", "60", "5"]),
    ("MON.DECRCLAMP", &["k:refund", "1"]),
    ("COUPON.ISSUE", &["k:coupons", "alice", "10"]),
    ("COUPON.REVOKE", &["k:coupons", "alice"]),
    ("CL.THROTTLE", &["k:rate", "1", "10", "60"]),
    ("COUPON.CREATE", &["k:new", "10"]),
    ("COUPON.RESERVE", &["k:sale", "alice"]),
    ("COUPON.CONFIRM", &["k:sale", "1"]),
    ("COUPON.RELEASE", &["k:sale", "1"]),
];

/// The readers.
const READERS: [(&str, &[&str]); 2] =
    [("COUPON.INFO", &["k:sale"]), ("COUPON.CLAIMS", &["k:sale"])];

/// Every command the module registers: COUPON.APPLY too, which only the
/// replication link and the AOF may run.
fn all_commands() -> Vec<String> {
    let mut names: Vec<String> = WRITERS
        .iter()
        .chain(&READERS)
        .map(|(n, _)| n.to_lowercase())
        .collect();
    names.push("coupon.apply".into());
    names.sort();
    names
}

/// A server with a campaign for the campaign commands to work on.
fn server() -> Server {
    let server = Server::start();
    let _: () = redis::cmd("COUPON.CREATE")
        .arg("k:sale")
        .arg(10)
        .query(&mut server.con())
        .unwrap();
    server
}

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

/// Did ACL let the call through? Any answer but NOPERM means it ran (a
/// BUSYKEY from a second COUPON.CREATE ran too).
fn allowed(con: &mut Connection, name: &str, args: &[&str]) -> bool {
    match redis::cmd(name).arg(args).query::<Value>(con) {
        Err(error) => error.code() != Some("NOPERM"),
        Ok(_) => true,
    }
}

fn categories_supported(con: &mut Connection) -> bool {
    let (kind, version) = server_kind(con);
    kind == "valkey" || version >= [7, 2, 0]
}

/// A command's ACL categories as `COMMAND INFO` reports them (`@write`):
/// what the server enforces. (`ACL CAT write` would do too, but Valkey
/// 8.0 leaves module commands out of that listing while enforcing them.)
fn categories_of(con: &mut Connection, command: &str) -> Vec<String> {
    let info: Vec<Vec<Value>> = redis::cmd("COMMAND")
        .arg("INFO")
        .arg(command)
        .query(con)
        .unwrap();
    match info[0].get(6) {
        Some(Value::Array(categories)) => categories
            .iter()
            .map(|c| redis::from_redis_value::<String>(c).unwrap())
            .collect(),
        other => panic!("{command}: no ACL categories in COMMAND INFO: {other:?}"),
    }
}

#[test]
fn minus_write_denies_every_writer_where_categories_exist() {
    let server = server();
    let mut admin = server.con();
    let mut con = as_user(&server, "no-writes", &["+@all", "-@write"]);
    if !categories_supported(&mut admin) {
        // Redis 7.0: in no category, so `-@write` cannot reach them; the
        // README says to deny them by name.
        for (name, args) in WRITERS {
            assert!(allowed(&mut con, name, args), "{name}");
        }
        return;
    }
    for (name, args) in WRITERS {
        assert!(!allowed(&mut con, name, args), "{name} must be denied");
    }
    for (name, args) in READERS {
        assert!(allowed(&mut con, name, args), "{name} must be allowed");
    }
    let mut writer = as_user(&server, "writer", &["+@write"]);
    for (name, args) in WRITERS {
        assert!(allowed(&mut writer, name, args), "{name}");
    }
    // As their twins: @write or @read, and @fast but for CLAIMS (a range)
    // and APPLY.
    for name in all_commands() {
        let categories = categories_of(&mut admin, &name);
        let reader = READERS.iter().any(|(r, _)| r.eq_ignore_ascii_case(&name));
        let kind = if reader { "@read" } else { "@write" };
        let speed = if name == "coupon.claims" || name == "coupon.apply" {
            "@slow"
        } else {
            "@fast"
        };
        for category in [kind, speed] {
            assert!(
                categories.iter().any(|c| c == category),
                "{name}: {categories:?} lacks {category}"
            );
        }
    }
}

#[test]
fn plus_read_alone_runs_only_the_readers() {
    let server = server();
    if !categories_supported(&mut server.con()) {
        return;
    }
    let mut reader = as_user(&server, "reader", &["+@read"]);
    for (name, args) in WRITERS {
        assert!(!allowed(&mut reader, name, args), "{name} must be denied");
    }
    for (name, args) in READERS {
        assert!(allowed(&mut reader, name, args), "{name} must be allowed");
    }
}

#[test]
fn plus_guard_allows_every_command_and_nothing_else() {
    let server = server();
    let mut admin = server.con();
    let categories: Vec<String> = redis::cmd("ACL").arg("CAT").query(&mut admin).unwrap();
    // Modules may define categories from Redis 7.4 and in every Valkey
    // (all of make test-matrix but Redis 7.0).
    let (kind, version) = server_kind(&mut admin);
    let expected = kind == "valkey" || version >= [7, 4, 0];
    assert_eq!(
        categories.iter().any(|c| c == "guard"),
        expected,
        "{kind} {version:?}"
    );
    if !expected {
        // The module said at load why there is no @guard.
        let said = if categories_supported(&mut admin) {
            "no @guard"
        } else {
            "cannot put module commands in ACL categories"
        };
        assert!(server.log().contains(said), "{}", server.log());
        return;
    }
    let mut guard = as_user(&server, "guard-only", &["+@guard"]);
    for (name, args) in WRITERS.iter().chain(&READERS) {
        assert!(allowed(&mut guard, name, args), "{name}");
    }
    assert!(!allowed(&mut guard, "INCRBY", &["k:other", "1"]));
    for name in all_commands() {
        assert!(
            categories_of(&mut admin, &name).contains(&"@guard".to_string()),
            "{name}"
        );
    }
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
