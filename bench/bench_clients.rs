//! `make bench-clients`: the client packages in a real 3-primary cluster
//! with the module. Each language's bench program (bench/clients/) prints
//! a JSON object a measured row: python.py (redis-py, valkey-glide), then
//! node.mjs once per Node client (ioredis, node-redis, each from its
//! newest set of clients/node/test/install.sh). This makes them one
//! table, with the package's rate as a ratio to INCRBY and to the Lua twin
//! through the same client, and what each call cost the servers (module
//! command or EVALSHA, COMMAND GETKEYS, MOVED); and a second table, the
//! package's methods on the module against the same on its scripts
//! backend and against the Lua twins. Writes both into their section of
//! bench/RESULTS.md.

// The test harness, shared with tests/.
#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::cluster::Cluster;
use common::tools::installed;

/// (operation, its INCRBY row, its Lua twin's row)
const PACKAGE_ROWS: [(&str, &str); 3] = [
    ("MON.INCRCHECK (package)", "incrcheck.lua (EVALSHA)"),
    ("CL.THROTTLE (package)", "throttle.lua (EVALSHA)"),
    ("COUPON.RESERVE (package)", "campaign_reserve.lua (EVALSHA)"),
];

/// (command, its package row on the module, on the scripts backend, its
/// Lua twin's row)
const BACKEND_ROWS: [(&str, &str, &str, &str); 3] = [
    (
        "MON.INCRCHECK",
        "MON.INCRCHECK (package)",
        "MON.INCRCHECK (scripts)",
        "incrcheck.lua (EVALSHA)",
    ),
    (
        "CL.THROTTLE",
        "CL.THROTTLE (package)",
        "CL.THROTTLE (scripts)",
        "throttle.lua (EVALSHA)",
    ),
    (
        "COUPON.RESERVE",
        "COUPON.RESERVE (package)",
        "COUPON.RESERVE (scripts)",
        "campaign_reserve.lua (EVALSHA)",
    ),
];

struct Row {
    /// Calls per second, one a round.
    rates: Vec<f64>,
    /// Server commands per call: the command itself (those answered MOVED
    /// too), GETKEYS.
    per_call: f64,
    getkeys: i64,
    moved: i64,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

impl Row {
    /// The median of the rounds' rates: one slow round on a shared
    /// machine does not move it.
    fn rate(&self) -> f64 {
        median(self.rates.clone())
    }

    /// The median of this row's rate over `other`'s, round by round: the
    /// two ran seconds apart in each round, the rounds minutes apart on a
    /// machine whose load swings.
    fn over(&self, other: &Row) -> f64 {
        median(
            self.rates
                .iter()
                .zip(&other.rates)
                .map(|(mine, theirs)| mine / theirs)
                .collect(),
        )
    }
}

/// Rounds of every program, one after the other (GUARD_BENCH_ROUNDS).
fn rounds() -> usize {
    std::env::var("GUARD_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3)
}

/// A value of a one-line JSON object, with or without a space after the
/// colon (Python's json.dumps writes one, JSON.stringify none).
fn field(line: &str, name: &str) -> Option<String> {
    let start = line.find(&format!("\"{name}\":"))? + name.len() + 3;
    let rest = line[start..].trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim_matches('"').to_string())
}

fn parse(line: &str) -> Option<(String, String, bool, Row)> {
    let client = field(line, "client")?;
    let op = field(line, "op")?;
    let pipelined = field(line, "pipelined")? == "true";
    let rate: f64 = field(line, "calls_per_s")?.parse().ok()?;
    let calls: f64 = field(line, "calls")?.parse().ok()?;
    let server = &line[line.find("\"server\"")?..];
    let count = |name: &str| {
        field(server, name)
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let getkeys = count("command|getkeys");
    let moved = count("errorstat_MOVED");
    let commands: i64 = [
        "mon.incrcheck",
        "cl.throttle",
        "coupon.reserve",
        "incrby",
        "evalsha",
    ]
    .iter()
    .map(|name| count(name))
    .sum::<i64>()
        // The Lua twin of INCRCHECK calls INCRBY inside: not a client's call.
        - if op.contains("EVALSHA") { count("incrby") } else { 0 };
    // A call answered MOVED is one of its command's rejected_calls, which
    // the programs add to its calls, and one errorstat_MOVED: count it once.
    let per_call = (commands + getkeys) as f64 / calls;
    Some((
        client,
        op,
        pipelined,
        Row {
            rates: vec![rate],
            per_call,
            getkeys,
            moved,
        },
    ))
}

/// The measured rows, by (client, mode) in the order the programs print
/// them, each with its operations.
type Table = Vec<((String, bool), BTreeMap<String, Row>)>;

/// Runs one bench program against the cluster (GUARD_CLUSTER) and adds
/// the rows it prints to `table`.
fn run_bench(program: &mut Command, what: &str, cluster: &str, table: &mut Table) {
    let output = program
        .env("GUARD_CLUSTER", cluster)
        .output()
        .unwrap_or_else(|e| panic!("run {what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some((client, op, pipelined, row)) = parse(line) else {
            continue;
        };
        let key = (client, pipelined);
        match table.iter_mut().find(|(k, _)| *k == key) {
            // A later round: its rate joins the others; its counts, which
            // are the same every round, stand.
            Some((_, ops)) => match ops.get_mut(&op) {
                Some(seen) => {
                    seen.rates.extend(row.rates);
                    seen.per_call = seen.per_call.max(row.per_call);
                    seen.getkeys += row.getkeys;
                    seen.moved += row.moved;
                }
                None => {
                    ops.insert(op, row);
                }
            },
            None => table.push((key, BTreeMap::from([(op, row)]))),
        }
    }
}

fn main() {
    let cluster = Cluster::with_replicas(0);
    let addresses: Vec<String> = cluster
        .nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let addresses = addresses.join(",");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut rows = Table::new();
    let libraries = installed(&root.join("clients/python/tests/install.sh"), &["newest"])
        .display()
        .to_string();
    let mut programs: Vec<(String, Command)> = Vec::new();
    let mut python = Command::new("python3");
    python
        .arg(root.join("bench/clients/python.py"))
        .env(
            "PYTHONPATH",
            format!("{}:{libraries}", root.join("clients/python").display()),
        )
        .env("PYTHONDONTWRITEBYTECODE", "1");
    programs.push(("bench/clients/python.py".into(), python));
    // The newest set of each Node client; node.mjs loads the library and
    // redis-guard from the set's folder, its working directory.
    for (set, library) in [("ioredis-6.1.0", "ioredis"), ("redis-6.4.0", "redis")] {
        let folder = installed(&root.join("clients/node/test/install.sh"), &[set]);
        let mut node = Command::new("node");
        node.arg(root.join("bench/clients/node.mjs"))
            .current_dir(folder)
            .env("GUARD_CLIENT", library);
        programs.push((format!("bench/clients/node.mjs with {set}"), node));
    }
    // Rounds of all programs in turn, so a busy moment of the machine falls
    // on one round of each, not on one client.
    for _ in 0..rounds() {
        for (what, program) in &mut programs {
            run_bench(program, what, &addresses, &mut rows);
        }
    }
    let mut table = String::from(
        "| client | mode | command | package calls/s | INCRBY calls/s | x INCRBY | Lua twin calls/s | x twin | server commands per call | GETKEYS | MOVED |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for ((client, pipelined), ops) in &rows {
        let mode = if *pipelined {
            "pipelined (16)"
        } else {
            "sequential"
        };
        let incrby = ops.get("INCRBY");
        for (op, twin) in PACKAGE_ROWS {
            let Some(row) = ops.get(op) else { continue };
            let ratio = |other: Option<&Row>| {
                other.map_or(("n/a".into(), "n/a".into()), |o| {
                    (format!("{:.0}", o.rate()), format!("{:.2}", row.over(o)))
                })
            };
            let (incrby_rate, x_incrby) = ratio(incrby);
            let (twin_rate, x_twin) = ratio(ops.get(twin));
            table.push_str(&format!(
                "| {client} | {mode} | {} | {:.0} | {incrby_rate} | {x_incrby} | {twin_rate} | {x_twin} | {:.2} | {} | {} |\n",
                op.trim_end_matches(" (package)"),
                row.rate(),
                row.per_call,
                row.getkeys,
                row.moved
            ));
        }
        if let Some(raw) = ops.get("MON.INCRCHECK (raw call)") {
            table.push_str(&format!(
                "| {client} | {mode} | MON.INCRCHECK, raw call (no package) | {:.0} | | | | | {:.2} | {} | {} |\n",
                raw.rate(),
                raw.per_call,
                raw.getkeys,
                raw.moved
            ));
        }
    }
    let mut backends = String::from(
        "| client | mode | command | module calls/s | scripts calls/s | module ÷ scripts | Lua twin calls/s | scripts ÷ twin |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for ((client, pipelined), ops) in &rows {
        let mode = if *pipelined {
            "pipelined (16)"
        } else {
            "sequential"
        };
        for (command, module, scripts, twin) in BACKEND_ROWS {
            let (Some(module), Some(scripts)) = (ops.get(module), ops.get(scripts)) else {
                continue;
            };
            let (twin_rate, x_twin) = ops.get(twin).map_or(("n/a".into(), "n/a".into()), |t| {
                (
                    format!("{:.0}", t.rate()),
                    format!("{:.2}", scripts.over(t)),
                )
            });
            backends.push_str(&format!(
                "| {client} | {mode} | {command} | {:.0} | {:.0} | {:.2} | {twin_rate} | {x_twin} |\n",
                module.rate(),
                scripts.rate(),
                module.over(scripts),
            ));
        }
    }
    print!("{table}\n{backends}");
    common::results::write_clients_section(&format!(
        "## Through the client packages, in a 3-primary cluster\n\n\
         One process per client on this machine's 2 cores with the 3 servers: the rates are the \
         client's, so read the ratios and the commands per call. Each rate is the median of \
         {} rounds of every program in turn, each ratio the median of its rounds' ratios.\n\n{table}\n\
         ### The module against the scripts backend\n\n\
         The same package methods on its two backends, same client, same run, on the cluster with \
         the module (the scripts backend sends EVALSHA whether the module is loaded or not). \
         Goals: the module at least 2 × the scripts pipelined, the scripts at least 0.9 × the \
         bench's own Lua twins.\n\n{backends}",
        rounds()
    ));
}
