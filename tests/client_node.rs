//! The Node package (`clients/node`, npm `redis-guard`) against the real
//! module, through the oldest and newest supported release of each client
//! library: ioredis 5.0.0, 5.10.1 and 6.1.0, node-redis 4.0.0, 5.12.1 and
//! 6.4.0. Each set is installed once into the build output by
//! clients/node/test/install.sh (the package itself as a user installs it,
//! `npm install <checkout>/clients/node`); node's test runner then runs
//! clients/node/test/guard.test.mjs against a standalone server and a
//! 3-primary cluster made here: every method's result is the raw reply it
//! parses, errors are the library's own, options left out are not sent,
//! pipelines parse in order, and in the cluster every call reaches its
//! key's owner as one command (counted from INFO commandstats and
//! errorstats), also after the key's slot moved. The same again on the
//! scripts backend, against a standalone server and a cluster without the
//! module (a managed service's), for each command whose script
//! clients/scripts holds: the module's results, one EVALSHA per call.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::cluster::Cluster;
use common::tools::{installed, run};
use common::*;

fn package() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/node")
}

/// The folder of client set `name`, installed on first use.
fn client_set(name: &str) -> PathBuf {
    installed(&package().join("test/install.sh"), &[name])
}

/// The cluster's nodes as `host:port,...`.
fn addresses(cluster: &Cluster) -> String {
    let addresses: Vec<String> = cluster
        .nodes
        .iter()
        .map(|node| format!("127.0.0.1:{}", node.port))
        .collect();
    addresses.join(",")
}

/// Runs the package's node tests through client set `set` (library
/// `library`) against a fresh standalone server and a fresh cluster, each
/// with the module and without it.
fn node_tests(set: &str, library: &str) {
    let dir = client_set(set);
    // Every command in the slow log: the tests read what each call sent
    // there (CONFIG SET is not theirs to send: the bare server has CONFIG
    // renamed away, as a managed service does).
    let every_call = ["--slowlog-log-slower-than", "0"];
    let server = Server::with_args(&every_call);
    let cluster = Cluster::with_replicas(0);
    let bare_server = Server::managed(&every_call);
    let bare_cluster = Cluster::without_module(0);
    let printed = run(
        Command::new("node")
            .arg("--test")
            .arg(package().join("test/guard.test.mjs"))
            .current_dir(&dir)
            .env("GUARD_CLIENT", library)
            .env("GUARD_STANDALONE", format!("127.0.0.1:{}", server.port))
            .env("GUARD_CLUSTER", addresses(&cluster))
            .env(
                "GUARD_STANDALONE_NO_MODULE",
                format!("127.0.0.1:{}", bare_server.port),
            )
            .env("GUARD_CLUSTER_NO_MODULE", addresses(&bare_cluster)),
        &format!("node --test with {set}"),
    );
    // The routing figures and the commands without a script yet, for
    // `cargo test -- --nocapture`.
    for line in printed
        .lines()
        .filter(|line| line.contains("ROUTING") || line.contains("no script yet"))
    {
        println!("{line}");
    }
    assert!(printed.contains("# fail 0"), "{printed}");
    assert!(!printed.contains("# pass 0"), "{printed}");
}

#[test]
fn ioredis_oldest_5x() {
    node_tests("ioredis-5.0.0", "ioredis");
}

#[test]
fn ioredis_newest_5x() {
    node_tests("ioredis-5.10.1", "ioredis");
}

#[test]
fn ioredis_newest_6x() {
    node_tests("ioredis-6.1.0", "ioredis");
}

#[test]
fn node_redis_oldest_4x() {
    node_tests("redis-4.0.0", "redis");
}

#[test]
fn node_redis_newest_5x() {
    node_tests("redis-5.12.1", "redis");
}

#[test]
fn node_redis_newest_6x() {
    node_tests("redis-6.4.0", "redis");
}

/// A scratch folder inside a client set, so that its packages resolve.
fn scratch(set: &Path, what: &str) -> PathBuf {
    let dir = set.join(format!("run-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_example_compiles_under_tsc_strict_and_a_mistyped_one_does_not() {
    let tools = client_set("tools");
    let dir = scratch(&tools, "example");
    let example = std::fs::read_to_string(package().join("example.ts")).unwrap();
    // The pipeline's results are typed in order: the first is a Reservation;
    // COUPON.INFO's fields are named (a misspelt one does not compile).
    let wrong = example.replace("reservation.claim,", "reservation.current,");
    let misspelt = example.replace("info.available,", "info.availble,");
    assert!(wrong != example && misspelt != example);
    std::fs::write(dir.join("example.ts"), &example).unwrap();
    std::fs::write(dir.join("wrong.ts"), wrong).unwrap();
    std::fs::write(dir.join("misspelt.ts"), misspelt).unwrap();
    // One compiler run for both (node-redis 5's types take seconds to
    // load); the libraries' own .d.ts are not re-checked, the programs are.
    let output = Command::new(tools.join("node_modules/.bin/tsc"))
        .current_dir(&dir)
        .args([
            "--strict",
            "--noEmit",
            "--skipLibCheck",
            "--target",
            "es2022",
            "--module",
            "nodenext",
            "--moduleResolution",
            "nodenext",
            "example.ts",
            "wrong.ts",
            "misspelt.ts",
        ])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).to_string();
    let errors: Vec<&str> = printed.lines().filter(|l| l.contains("error")).collect();
    assert!(!output.status.success(), "tsc accepted a mistyped result");
    let failed = |file: &str, message: &str| {
        errors
            .iter()
            .any(|e| e.starts_with(&format!("{file}(")) && e.contains(message))
    };
    assert!(
        errors.len() == 2
            && failed("wrong.ts", "Property 'current' does not exist on type 'Reservation'.")
            && failed("misspelt.ts", "Property 'availble' does not exist on type 'CampaignInfo'."),
        "tsc --strict: example.ts must compile, wrong.ts and misspelt.ts fail once each:\n{printed}"
    );
}

/// The oldest supported releases' own types fit `guard()` too (the example
/// is compiled against the newest).
#[test]
fn the_oldest_clients_types_fit_guard_under_tsc_strict() {
    let tools = client_set("tools");
    let programs = [
        (
            "ioredis-5.0.0",
            r#"import Redis, { Cluster } from "ioredis";
import { guard, type Check } from "redis-guard";
async function main(): Promise<void> {
  const a: Check = await guard(new Redis()).incrcheck("k", 1, 60, 5);
  const [b] = await guard(new Cluster([])).pipeline({ transaction: true }).throttle("t", 1, 1, 1).exec();
  console.log(a.level, b.limited);
}
void main();
"#,
        ),
        (
            "redis-4.0.0",
            r#"import { createClient, createCluster } from "redis";
import { guard, type Check } from "redis-guard";
async function main(): Promise<void> {
  const a: Check = await guard(createClient()).incrcheck("k", 1, 60, 5);
  const [b] = await guard(createCluster({ rootNodes: [] })).pipeline().throttle("t", 1, 1, 1).exec();
  console.log(a.level, b.limited);
}
void main();
"#,
        ),
    ];
    for (set, program) in programs {
        let dir = scratch(&client_set(set), "types");
        std::fs::write(dir.join("program.ts"), program).unwrap();
        run(
            Command::new(tools.join("node_modules/.bin/tsc"))
                .current_dir(&dir)
                .args(["--strict", "--noEmit", "--skipLibCheck", "--typeRoots"])
                .arg(tools.join("node_modules/@types"))
                .args([
                    "--types",
                    "node",
                    "--target",
                    "es2022",
                    "--module",
                    "nodenext",
                    "--moduleResolution",
                    "nodenext",
                    "program.ts",
                ]),
            &format!("tsc --strict against {set}'s types"),
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// `npm install ./clients/node` installs the committed dist/ (no build
/// step on the user's machine): it must be exactly the build of src/.
#[test]
fn the_committed_dist_is_the_build_of_src() {
    let tools = client_set("tools");
    let dir = scratch(&tools, "dist");
    run(
        Command::new(tools.join("node_modules/.bin/tsc"))
            .current_dir(&tools)
            .arg("-p")
            .arg(package().join("tsconfig.json"))
            .arg("--typeRoots")
            .arg(tools.join("node_modules/@types"))
            .arg("--outDir")
            .arg(&dir),
        "tsc -p clients/node",
    );
    let mut built: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    built.sort();
    let mut shipped: Vec<_> = std::fs::read_dir(package().join("dist"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    shipped.sort();
    assert_eq!(built, shipped, "dist/ has other files than the build");
    for name in &built {
        let fresh = std::fs::read_to_string(dir.join(name)).unwrap();
        let committed = std::fs::read_to_string(package().join("dist").join(name)).unwrap();
        assert!(
            fresh == committed,
            "clients/node/dist/{} is not the build of src/: run `npm run build` in clients/node",
            name.to_string_lossy()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The README's Node example, as shown: compiled under `tsc --strict` as
/// the ES module it is, then run against a fresh server.
#[test]
fn the_readme_quickstart_compiles_and_prints_what_the_readme_shows() {
    let tools = client_set("tools");
    let dir = scratch(&tools, "quickstart");
    let code = std::fs::read_to_string(package().join("quickstart.mts")).unwrap();
    std::fs::write(dir.join("quickstart.mts"), &code).unwrap();
    run(
        Command::new(tools.join("node_modules/.bin/tsc"))
            .current_dir(&dir)
            .args(["--strict", "--skipLibCheck", "--target", "es2022"])
            .args([
                "--module",
                "nodenext",
                "--moduleResolution",
                "nodenext",
                "quickstart.mts",
            ]),
        "tsc --strict quickstart.mts",
    );
    let server = Server::start();
    let printed = run(
        Command::new("node")
            .arg(dir.join("quickstart.mjs"))
            .env("REDIS_URL", server.url()),
        "node quickstart.mjs",
    );
    // Unchanged on a server as a managed service gives it (no module; the
    // package falls back to its scripts): the same output.
    let managed = Server::managed(&[]);
    let on_scripts = run(
        Command::new("node")
            .arg(dir.join("quickstart.mjs"))
            .env("REDIS_URL", managed.url()),
        "node quickstart.mjs without the module",
    );
    assert_eq!(on_scripts, printed, "quickstart.mts without the module");
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        printed,
        "orders 3 1\nclaim 1 1 confirmed\nlimited false remaining 4\nrank 1 refunded to 2\n"
    );
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(
        readme.contains(&format!(
            "```ts\n{code}```\n\nIt prints:\n\n```text\n{printed}```"
        )),
        "README.md shows clients/node/quickstart.mts and what it prints, verbatim"
    );
}

/// The package as a registry would serve it: `npm pack`, then `npm
/// install` of the tarball into a fresh folder beside ioredis 6.1.0 and
/// node-redis 6.4.0, the current releases, without `--legacy-peer-deps`
/// (clients/node/test/install-packed.sh; npm fails with ERESOLVE when a
/// peer range leaves either out). A small program then runs there through
/// each client against a server with the module and one without it, where
/// the scripts come from the tarball itself.
#[test]
fn the_npm_pack_tarball_installs_beside_the_current_clients_and_runs() {
    let dir = installed(&package().join("test/install-packed.sh"), &[]);
    std::fs::copy(package().join("test/packed.mjs"), dir.join("packed.mjs")).unwrap();
    let server = Server::start();
    let managed = Server::managed(&[]);
    let printed = run(
        Command::new("node")
            .arg("packed.mjs")
            .current_dir(&dir)
            .env("GUARD_STANDALONE", format!("127.0.0.1:{}", server.port))
            .env(
                "GUARD_STANDALONE_NO_MODULE",
                format!("127.0.0.1:{}", managed.port),
            ),
        "node packed.mjs in the packed install",
    );
    assert_eq!(
        printed,
        "ioredis 6.1.0\nredis 6.4.0\n\
         module ioredis 1 0 true 1 1\nmodule redis 1 0 true 1 1\n\
         scripts ioredis 1 0 true 1 1\nscripts redis 1 0 true 1 1\n"
    );
}

/// The package sends each command's script as the tests build it (the
/// part of the prelude it uses, then its own): the same SHA-1s.
#[test]
fn the_package_sends_the_scripts_the_tests_run() {
    let commands = common::scripts::scripted_commands().join(" ");
    let printed = run(
        Command::new("node")
            .current_dir(package())
            .arg("-e")
            .arg(
                "const { scriptOf } = require('./dist/scripts');\n\
                 for (const c of process.argv[1].split(' ')) console.log(c, scriptOf(c).sha);",
            )
            .arg(&commands),
        "node -e scriptOf",
    );
    common::scripts::assert_sends_the_scripts_built_here("redis-guard (npm)", &printed);
}
