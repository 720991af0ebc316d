//! The documentation's examples are tests. Its client snippets are the
//! files in tests/clients/, which must appear verbatim in the README or a
//! page of docs/ and are run against a real server from an empty database
//! (the client libraries are installed into the build output by
//! tests/clients/install.sh, never system-wide); the redis-cli session of
//! docs/tutorial.md is replayed against a real server and must print what
//! it shows.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::tools::{installed, repository, run};
use common::*;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The README and every page of docs/, one after the other.
fn documentation() -> String {
    let mut pages: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "md"))
            .collect();
    pages.sort();
    let mut text = read("README.md");
    for page in pages {
        text.push_str(&std::fs::read_to_string(page).unwrap());
    }
    text
}

fn snippet(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// The folder the client libraries were installed into.
fn clients() -> PathBuf {
    installed(&repository("tests/clients/install.sh"), &[])
}

/// What every snippet prints on a fresh server: MON.INCRCHECK's
/// `current level`, the coupon's rank, the refund on a missing key, and
/// CL.THROTTLE's `limited remaining`.
const EXPECTED: &str = "1 0 1 0 0 15";

fn assert_shown(name: &str) {
    let code = snippet(name);
    assert!(
        documentation().contains(code.trim_end()),
        "README.md or docs/ must show tests/clients/{name} verbatim"
    );
}

/// The client libraries, and the checkout's Python package (redis_guard).
fn python_path() -> String {
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python");
    format!(
        "{}:{}",
        clients().join("python").display(),
        package.display()
    )
}

/// Runs the Python snippet `name` (shown verbatim in the README) against
/// a fresh server; what it printed.
fn run_python(name: &str) -> String {
    run_python_on(name, &Server::start())
}

/// Runs the Python snippet `name` against `server`; what it printed.
fn run_python_on(name: &str, server: &Server) -> String {
    assert_shown(name);
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name);
    run(
        Command::new("python3")
            .arg(script)
            .env("PYTHONPATH", python_path())
            .env("REDIS_URL", server.url()),
        name,
    )
}

#[test]
fn the_redis_py_snippet_runs() {
    assert_eq!(run_python("redis_py.py").trim(), EXPECTED);
}

#[test]
fn the_layered_limits_snippet_runs() {
    assert_eq!(run_python("layered_limits.py").trim(), "0 9 999");
}

/// Two crossings of a customer written to `{cust:42}:alerts`, and a worker
/// that took the first and died before acking it. A worker snippet must
/// claim that one, read the other and print both, in order, then leave
/// nothing pending.
fn alerts_with_a_dead_worker(server: &Server) -> String {
    let mut con = server.con();
    for _ in 0..5 {
        let _: (i64, i64) = redis::cmd("MON.INCRCHECK")
            .arg("{cust:42}:orders")
            .arg(1)
            .arg(3600)
            .arg(&[3, 5])
            .arg("ALERT")
            .arg("{cust:42}:alerts")
            .query(&mut con)
            .unwrap();
    }
    let _: () = redis::cmd("XGROUP")
        .arg(&["CREATE", "{cust:42}:alerts", "senders", "0"])
        .query(&mut con)
        .unwrap();
    let _: redis::Value = redis::cmd("XREADGROUP")
        .arg(&["GROUP", "senders", "crashed", "COUNT", "1"])
        .arg(&["STREAMS", "{cust:42}:alerts", ">"])
        .query(&mut con)
        .unwrap();
    let entries: Vec<(String, Vec<String>)> = redis::cmd("XRANGE")
        .arg(&["{cust:42}:alerts", "-", "+"])
        .query(&mut con)
        .unwrap();
    entries
        .iter()
        .map(|(id, fields)| {
            let value = |name: &str| {
                let at = fields.iter().position(|f| f == name).unwrap();
                fields[at + 1].clone()
            };
            format!(
                "{id} {} {} {} {}\n",
                value("key"),
                value("level"),
                value("threshold"),
                value("current")
            )
        })
        .collect()
}

fn assert_nothing_pending(server: &Server) {
    let pending: (i64, redis::Value, redis::Value, redis::Value) = redis::cmd("XPENDING")
        .arg(&["{cust:42}:alerts", "senders"])
        .query(&mut server.con())
        .unwrap();
    assert_eq!(pending.0, 0);
}

#[test]
fn the_python_alert_worker_claims_what_a_dead_worker_left() {
    assert_shown("alert_worker.py");
    let server = Server::start();
    let expected = alerts_with_a_dead_worker(&server);
    assert_eq!(expected.lines().count(), 2);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/alert_worker.py");
    let printed = run(
        Command::new("python3")
            .arg(script)
            .env("PYTHONPATH", python_path())
            .env("REDIS_URL", server.url())
            .env("IDLE_MS", "0"),
        "alert_worker.py",
    );
    assert_eq!(printed, expected);
    assert_nothing_pending(&server);
}

#[test]
fn the_node_alert_worker_claims_what_a_dead_worker_left() {
    assert_shown("alert_worker.mjs");
    let server = Server::start();
    let expected = alerts_with_a_dead_worker(&server);
    let dir = node_dir(&clients(), "alert-worker");
    std::fs::write(dir.join("worker.mjs"), snippet("alert_worker.mjs")).unwrap();
    let printed = run(
        Command::new("node")
            .arg(dir.join("worker.mjs"))
            .env("REDIS_URL", server.url())
            .env("IDLE_MS", "0"),
        "alert_worker.mjs",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(printed, expected);
    assert_nothing_pending(&server);
}

/// What the ledger worker snippets print: each change of a claim, in order,
/// the hold that was never paid for as `expired` once reclaimed.
const PYTHON_LEDGER: &str = "reserved 1 alice order-1 99\nconfirmed 1 alice order-1 99\n\
                             reserved 2 bob order-2 98\nexpired 2 bob order-2 99\n";
const NODE_LEDGER: &str = "cart true 1 1\n\
                           {sale:8}:hats reserved 1 carol order-3 4\n\
                           {sale:8}:scarves reserved 1 carol order-3 1\n\
                           {sale:8}:hats expired 1 carol order-3 5\n\
                           {sale:8}:scarves expired 1 carol order-3 2\n";

/// After a ledger worker: its group read every entry and acked it.
fn assert_ledger_done(server: &Server, ledger: &str, entries: i64) {
    let mut con = server.con();
    let pending: (i64, redis::Value, redis::Value, redis::Value) = redis::cmd("XPENDING")
        .arg(&[ledger, "orders-db"])
        .query(&mut con)
        .unwrap();
    assert_eq!(pending.0, 0, "{ledger}: entries left unacknowledged");
    let length: i64 = redis::cmd("XLEN").arg(ledger).query(&mut con).unwrap();
    assert_eq!(length, entries, "{ledger}");
}

#[test]
fn the_python_ledger_worker_prints_every_change_and_acks_it() {
    assert_shown("ledger_worker.py");
    let server = Server::start();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ledger_worker.py");
    let printed = run(
        Command::new("python3")
            .arg(script)
            .env("PYTHONPATH", python_path())
            .env("REDIS_URL", server.url()),
        "ledger_worker.py",
    );
    assert_eq!(printed, PYTHON_LEDGER);
    assert_ledger_done(&server, "{sale:9}:ledger", 4);
}

#[test]
fn the_restock_and_cart_snippet_runs() {
    assert_eq!(
        run_python("restock_and_cart.py"),
        "True [1, 1]\nsold out: item 2 hats left 4\nTrue 9\n"
    );
}

/// Compiles the TypeScript snippet `name` under `tsc --strict` against the
/// Node package as a user installs it (clients/node/test/install.sh's
/// `tools`: ioredis, TypeScript and `npm install ./clients/node`), then
/// runs it against `server`; what it printed.
fn run_typescript(name: &str, server: &Server) -> String {
    assert_shown(name);
    let tools = installed(&repository("clients/node/test/install.sh"), &["tools"]);
    let dir = tools.join(format!("run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("snippet.mts"), snippet(name)).unwrap();
    run(
        Command::new(tools.join("node_modules/.bin/tsc"))
            .current_dir(&dir)
            .args(["--strict", "--skipLibCheck", "--target", "es2022"])
            .args([
                "--module",
                "nodenext",
                "--moduleResolution",
                "nodenext",
                "snippet.mts",
            ]),
        &format!("tsc --strict on {name}"),
    );
    let printed = run(
        Command::new("node")
            .arg(dir.join("snippet.mjs"))
            .env("REDIS_URL", server.url()),
        name,
    );
    std::fs::remove_dir_all(&dir).unwrap();
    printed
}

#[test]
fn the_typescript_ledger_worker_type_checks_and_runs() {
    let server = Server::start();
    assert_eq!(run_typescript("ledger_worker.mts", &server), NODE_LEDGER);
    assert_ledger_done(&server, "{sale:8}:ledger", 4);
}

/// The daily cap at Seoul's midnight, in Python and TypeScript.
const DAILY_CAP: &str = "order 1 taken, 4 left today\n\
                         order 2 taken, 3 left today\n\
                         order 3 taken, 2 left today\n\
                         order 4 taken, 1 left today\n\
                         order 5 taken, 0 left today\n";

#[test]
fn the_daily_cap_recipes_end_the_day_at_seouls_midnight() {
    assert_eq!(
        run_python("daily_cap.py"),
        format!(
            "{DAILY_CAP}order 6 refused until midnight in Seoul\n\
             the day ends at 00:00 in Seoul; 1 left\n"
        )
    );
    let server = Server::start();
    assert_eq!(
        run_typescript("daily_cap.mts", &server),
        format!("{DAILY_CAP}order 6 refused\nthe day ends at 00:00 in Seoul\n")
    );
}

/// Tickets with quantities: 4 seats held, 3 confirmed, the 4th free at
/// once.
const TICKETS: &str = "ann holds 4 seats: claim 1\n\
                       bob's 4 seats: sold out\n\
                       ann paid for 3: confirmed 3, held 0, available 4\n\
                       bob's 4 seats: claim 2\n";

#[test]
fn the_tickets_recipes_confirm_3_of_4_seats_and_free_the_4th_on_both_backends() {
    // With the module, and without it (the packages switch to scripts).
    for server in [Server::start(), Server::without_module(&[])] {
        assert_eq!(run_python_on("tickets.py", &server), TICKETS);
        let _: () = redis::cmd("FLUSHALL").query(&mut server.con()).unwrap();
        assert_eq!(run_typescript("tickets.mts", &server), TICKETS);
    }
}

#[test]
fn the_llm_recipe_reserves_the_most_and_refunds_the_rest() {
    assert_eq!(
        run_python("llm_tokens.py"),
        "first used 1250 -> 8750 left\nsecond used 1250 -> 7500 left\nthird used 1250 -> 6250 left\n"
    );
}

#[test]
fn the_login_recipe_locks_the_account_in_a_penalty_box() {
    let server = Server::start();
    assert_eq!(
        run_typescript("login_penalty.mts", &server),
        "1 wrong password, 4 left\n2 wrong password, 3 left\n3 wrong password, 2 left\n\
         4 wrong password, 1 left\n5 wrong password, 0 left\n6 locked, retry in 900 s\n\
         right password: locked\nafter a reset: welcome\n"
    );
}

/// A folder inside the Node install, so that `import` finds its packages.
fn node_dir(clients: &Path, test: &str) -> PathBuf {
    let dir = clients
        .join("node")
        .join(format!("run-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_node_redis_snippet_runs() {
    assert_shown("node_redis.mjs");
    let server = Server::start();
    let dir = node_dir(&clients(), "node-redis");
    std::fs::write(dir.join("snippet.mjs"), snippet("node_redis.mjs")).unwrap();
    let printed = run(
        Command::new("node")
            .arg(dir.join("snippet.mjs"))
            .env("REDIS_URL", server.url()),
        "node-redis snippet",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(printed.trim(), EXPECTED);
}

#[test]
fn the_ioredis_typescript_snippet_type_checks_and_runs() {
    assert_shown("ioredis.ts");
    let server = Server::start();
    let clients = clients();
    let tsc = clients.join("node/node_modules/.bin/tsc");
    let dir = node_dir(&clients, "ioredis");
    let compile = |file: &str| {
        let mut tsc = Command::new(&tsc);
        tsc.current_dir(&dir).args([
            "--strict",
            "--target",
            "es2022",
            "--module",
            "nodenext",
            "--moduleResolution",
            "nodenext",
            file,
        ]);
        tsc
    };
    std::fs::write(dir.join("snippet.mts"), snippet("ioredis.ts")).unwrap();
    run(&mut compile("snippet.mts"), "tsc on the ioredis snippet");
    let printed = run(
        Command::new("node")
            .arg(dir.join("snippet.mjs"))
            .env("REDIS_URL", server.url()),
        "ioredis snippet",
    );
    // The declaration really types the commands: a wrong call fails to compile.
    let wrong = snippet("ioredis.ts").replace(
        r#"redis["cl.throttle"]("user:7:api", 15, 30, 60)"#,
        r#"redis["cl.throttle"]("user:7:api", "15")"#,
    );
    assert_ne!(wrong, snippet("ioredis.ts"));
    std::fs::write(dir.join("wrong.mts"), wrong).unwrap();
    let refused = compile("wrong.mts").output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(printed.trim(), EXPECTED);
    assert!(!refused.status.success(), "tsc accepted a mistyped call");
}

mod redis_rs {
    include!("clients/redis_rs.rs");

    #[test]
    fn the_redis_rs_snippet_runs() {
        super::assert_shown("redis_rs.rs");
        let server = super::Server::start();
        assert_eq!(guard_calls(&mut server.con()).unwrap(), super::EXPECTED);
    }
}

/// docs/tutorial.md's redis-cli session, as (command, expected output) pairs.
fn session() -> Vec<(String, Vec<String>)> {
    let tutorial = read("docs/tutorial.md");
    let start = tutorial
        .find("## A session")
        .expect("docs/tutorial.md has a session");
    let block = &tutorial[start..];
    let block = &block[block.find("```text\n").unwrap() + 8..];
    let block = &block[..block.find("```").unwrap()];
    let mut exchanges: Vec<(String, Vec<String>)> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("127.0.0.1:6379> ") {
            Some(command) => exchanges.push((command.to_string(), Vec::new())),
            None if line == "$ redis-cli" => {}
            None => exchanges
                .last_mut()
                .expect("output after a command")
                .1
                .push(line.to_string()),
        }
    }
    exchanges
}

#[test]
fn the_tutorial_session_prints_what_the_server_prints() {
    replay_session(&Server::start());
}

/// The snippets use keys of their own: after the whole session on the
/// same server they still print what the documentation says.
#[test]
fn the_python_snippets_print_the_same_after_the_session() {
    let server = Server::start();
    replay_session(&server);
    for (name, expected) in [("redis_py.py", EXPECTED), ("layered_limits.py", "0 9 999")] {
        let printed = run(
            Command::new("python3")
                .arg(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/clients")
                        .join(name),
                )
                .env("PYTHONPATH", python_path())
                .env("REDIS_URL", server.url()),
            name,
        );
        assert_eq!(printed.trim(), expected, "{name} after the session");
    }
}

fn replay_session(server: &Server) {
    let exchanges = session();
    assert!(exchanges.len() > 20, "{exchanges:?}");
    for (command, expected) in exchanges {
        let words: Vec<&str> = command.split_whitespace().collect();
        // A set has no order: the README must not show one.
        assert!(
            !["SMEMBERS", "HGETALL", "HKEYS", "SRANDMEMBER"].contains(&words[0]),
            "{command}: its order is not defined"
        );
        let printed = run(
            Command::new("redis-cli")
                .args(["-p", &server.port.to_string(), "--no-raw"])
                .args(&words),
            &command,
        );
        let printed: Vec<&str> = printed.lines().map(|l| l.trim_end_matches('\r')).collect();
        assert_eq!(printed, expected, "docs/tutorial.md session: {command}");
    }
}

/// A page's `$ redis-cli ...` examples (in ```sh blocks), in order: the
/// words and the lines shown after them, comments (`# ...`) cut off.
fn cli_examples(page: &str) -> Vec<(String, Vec<String>)> {
    let mut examples: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_sh = false;
    for line in page.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        match line.strip_prefix("$ redis-cli ") {
            Some(command) => examples.push((command.to_string(), Vec::new())),
            None => {
                if let Some((_, shown)) = examples.last_mut() {
                    let without_comment = line.split("  #").next().unwrap_or(line);
                    shown.push(without_comment.trim_end().to_string());
                }
            }
        }
    }
    examples
}

/// The guide's redis-cli examples run in order on one empty server and
/// print what they show; `<...>` stands for a value that varies (a time),
/// and `...` for the rest of a long reply.
#[test]
fn the_guides_redis_cli_examples_print_what_they_show() {
    let server = Server::start();
    let examples = cli_examples(&read("docs/guide.md"));
    assert!(examples.len() >= 8, "{examples:?}");
    for (command, shown) in examples {
        let printed = run(
            Command::new("redis-cli")
                .args(["-p", &server.port.to_string(), "--no-raw"])
                .args(command.split_whitespace()),
            &command,
        );
        let printed: Vec<&str> = printed.lines().map(|l| l.trim_end_matches('\r')).collect();
        let shown_lines = shown.iter().take_while(|line| line.trim() != "...").count();
        let complete = shown_lines == shown.len();
        assert!(
            printed.len() >= shown_lines && (!complete || printed.len() == shown_lines),
            "docs/guide.md: {command}: shows {shown:?}, prints {printed:?}"
        );
        for (line, printed) in shown.iter().take(shown_lines).zip(&printed) {
            let matches = match line.split_once('<') {
                Some((fixed, _)) => printed.starts_with(fixed),
                None => printed == line,
            };
            assert!(
                matches,
                "docs/guide.md: {command}: shows {line:?}, prints {printed:?}"
            );
        }
    }
}
