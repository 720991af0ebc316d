//! ACL categories: on servers that let a module put its commands in
//! categories (Redis 7.2+, Valkey), every command is in its twin's
//! (`@write @fast`) and in `@guard` where the server lets modules define a
//! category; on Redis 7.0 the module says once, at load, that it cannot.

mod common;

use common::*;
use redis::{Connection, Value};

use common::metadata::{categories_of, categories_supported};
use common::registry::{self, Access, Spec};

fn writers() -> impl Iterator<Item = &'static Spec> {
    registry::with_access(Access::Writer)
}

fn readers() -> impl Iterator<Item = &'static Spec> {
    registry::with_access(Access::Reader)
}

/// A server with a campaign for the campaign commands to work on.
fn server() -> Server {
    let server = Server::start();
    let _: () = redis::cmd("COUPON.CREATE")
        .arg(registry::EXAMPLE_CAMPAIGN)
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
fn allowed(con: &mut Connection, spec: &Spec) -> bool {
    runs(con, spec.name, spec.example)
}

fn runs(con: &mut Connection, name: &str, args: &[&str]) -> bool {
    match redis::cmd(name).arg(args).query::<Value>(con) {
        Err(error) => error.code() != Some("NOPERM"),
        Ok(_) => true,
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
        for spec in writers() {
            assert!(allowed(&mut con, spec), "{}", spec.name);
        }
        return;
    }
    for spec in writers() {
        assert!(!allowed(&mut con, spec), "{} must be denied", spec.name);
    }
    for spec in readers() {
        assert!(allowed(&mut con, spec), "{} must be allowed", spec.name);
    }
    let mut writer = as_user(&server, "writer", &["+@write"]);
    for spec in writers() {
        assert!(allowed(&mut writer, spec), "{}", spec.name);
    }
    // As their twins: @write or @read, and @fast where the command is
    // flagged fast (not CLAIMS, a range, nor APPLY).
    for spec in &registry::COMMANDS {
        let categories = categories_of(&mut admin, spec.name);
        let kind = match spec.access {
            Access::Reader => "@read",
            Access::Writer | Access::Replay => "@write",
        };
        let speed = if spec.flags.contains(&"fast") {
            "@fast"
        } else {
            "@slow"
        };
        for category in [kind, speed] {
            assert!(
                categories.iter().any(|c| c == category),
                "{}: {categories:?} lacks {category}",
                spec.name
            );
        }
    }
}

#[test]
fn plus_read_alone_runs_only_the_readers() {
    let server = server();
    let mut reader = as_user(&server, "reader", &["+@read"]);
    if !categories_supported(&mut server.con()) {
        // Redis 7.0: the commands are in no category, so `+@read` grants
        // none of them, readers included (the README: allow by name).
        for spec in writers().chain(readers()) {
            assert!(!allowed(&mut reader, spec), "{} must be denied", spec.name);
        }
        return;
    }
    for spec in writers() {
        assert!(!allowed(&mut reader, spec), "{} must be denied", spec.name);
    }
    for spec in readers() {
        assert!(allowed(&mut reader, spec), "{} must be allowed", spec.name);
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
    for spec in writers().chain(readers()) {
        assert!(allowed(&mut guard, spec), "{}", spec.name);
    }
    assert!(!runs(&mut guard, "INCRBY", &["k:other", "1"]));
    for spec in &registry::COMMANDS {
        assert!(
            categories_of(&mut admin, spec.name).contains(&"@guard".to_string()),
            "{}",
            spec.name
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
