//! The Python package (clients/python) against real servers with the
//! module: its pytest suite (every method on redis-py and valkey-glide,
//! sync and asyncio, RESP2 and RESP3, standalone and a 3-primary cluster,
//! routing counted by the servers) with the oldest and the newest redis-py
//! supported; and the package as a user gets it: `pip install`, the type
//! check, its example run.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::cluster::Cluster;
use common::tools::installed;
use common::*;

fn package() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python")
}

/// The folder holding one set of client libraries (installed on first use).
fn libraries(set: &str) -> PathBuf {
    installed(&package().join("tests/install.sh"), &[set])
}

fn search_path(folders: &[&Path]) -> String {
    let folders: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
    folders.join(":")
}

/// Runs python3 with `args` and `PYTHONPATH`; its output, or a panic with it.
fn python(path: &str, args: &[&str], env: &[(&str, String)]) -> String {
    let output = Command::new("python3")
        .args(args)
        .current_dir(package())
        .env("PYTHONPATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run python3");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "python3 {args:?} failed:\n{text}");
    text
}

fn addresses(servers: &[&Server]) -> String {
    let each: Vec<String> = servers
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port))
        .collect();
    each.join(",")
}

#[test]
fn every_method_on_every_python_client_routed_in_a_cluster() {
    let server = Server::start();
    let cluster = Cluster::with_replicas(0);
    let primaries: Vec<&Server> = cluster.nodes.iter().collect();
    // The same as a managed service gives them, where the package runs
    // its scripts.
    let plain = Server::managed(&[]);
    let plain_cluster = Cluster::without_module(0);
    let plain_primaries: Vec<&Server> = plain_cluster.nodes.iter().collect();
    let env = [
        ("GUARD_STANDALONE", addresses(&[&server])),
        ("GUARD_CLUSTER", addresses(&primaries)),
        ("GUARD_PLAIN", addresses(&[&plain])),
        ("GUARD_PLAIN_CLUSTER", addresses(&plain_primaries)),
    ];
    let tests = package().join("tests");
    for set in ["oldest", "newest"] {
        let libraries = libraries(set);
        let path = search_path(&[&package(), &tests, &libraries]);
        let report = python(
            &path,
            &[
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-W",
                "ignore::DeprecationWarning",
                "tests",
            ],
            &env,
        );
        let summary = report.lines().last().unwrap_or_default();
        assert!(
            summary.contains(" passed")
                && !summary.contains("failed")
                && !summary.contains("skipped"),
            "redis-py {set}: {summary}"
        );
        println!("python clients, {set}: {summary}");
    }
    // The README's cluster example, as shown, from an empty cluster.
    for node in &primaries {
        let _: () = redis::cmd("FLUSHALL").query(&mut node.con()).unwrap();
    }
    let libraries = libraries("newest");
    let printed = python(
        &search_path(&[&package(), &libraries]),
        &["-P", "example_cluster.py"],
        &env,
    );
    assert_eq!(printed, "1 False [1, 1, 1]\n");
    assert_shown_in_readme("example_cluster.py", &printed);
}

/// README.md shows the example file verbatim, and what it printed.
fn assert_shown_in_readme(example: &str, printed: &str) {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let code = std::fs::read_to_string(package().join(example)).unwrap();
    assert!(
        readme.contains(&format!(
            "```python\n{code}```\n\nIt prints:\n\n```text\n{printed}```"
        )),
        "README.md shows clients/python/{example} and what it prints, verbatim"
    );
}

#[test]
fn the_python_package_installs_type_checks_and_runs_its_example() {
    let newest = libraries("newest");
    let target = std::env::temp_dir().join(format!("redis-guard-pip-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&target);
    // pip builds in the folder it installs from (build/, egg-info and the
    // bundled scripts), and the matrix runs two servers' tests at once on
    // one checkout: the clean-clone CI failed here. So from a copy of the
    // checkout's two folders, laid out as the repository is.
    let checkout_copy = target.join("checkout");
    let copied_package = checkout_copy.join("clients/python");
    std::fs::create_dir_all(&copied_package).unwrap();
    let copied = Command::new("cp")
        .arg("-R")
        .args(["pyproject.toml", "setup.py", "README.md", "redis_guard"].map(|f| package().join(f)))
        .arg(&copied_package)
        .status()
        .unwrap()
        .success()
        && Command::new("cp")
            .arg("-R")
            .arg(package().join("../scripts"))
            .arg(checkout_copy.join("clients/scripts"))
            .status()
            .unwrap()
            .success();
    assert!(copied, "copying clients/python and clients/scripts");
    let _ = std::fs::remove_dir_all(copied_package.join("redis_guard/lua"));
    let installed_into = target.join("site");
    // As a user installs it: pip from the checkout, nothing else.
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .args(["--root-user-action=ignore", "--target"])
        .arg(&installed_into)
        .arg(&copied_package)
        .status()
        .unwrap();
    assert!(status.success(), "pip install ./clients/python failed");
    assert!(
        installed_into.join("redis_guard/py.typed").exists(),
        "the wheel ships the type hints"
    );
    let installed = search_path(&[&installed_into, &newest]);
    let found = python(
        &installed,
        // -P: not the checkout beside the script, only PYTHONPATH.
        &[
            "-P",
            "-c",
            "import redis_guard; print(redis_guard.__file__)",
        ],
        &[],
    );
    assert!(
        found
            .trim()
            .starts_with(&installed_into.display().to_string()),
        "{found}"
    );

    let checkout = search_path(&[&package(), &newest]);
    let typed = python(
        &checkout,
        &[
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir=/dev/null",
            "redis_guard",
            "example.py",
        ],
        &[],
    );
    assert!(typed.contains("Success: no issues found"), "{typed}");

    let server = Server::start();
    let printed = python(
        &installed,
        &["-P", "example.py"],
        &[("GUARD_STANDALONE", addresses(&[&server]))],
    );
    assert_eq!(
        printed,
        "orders 5 1\nconfirm 1\navailable 99 live ['confirmed']\nrank 1 limited False\n\
         distinct 1 refunded to 3\n"
    );
    // Unchanged on a server as a managed service gives it (no module; the
    // package falls back to its scripts): the same output.
    let managed = Server::managed(&[]);
    let on_scripts = python(
        &installed,
        &["-P", "example.py"],
        &[("GUARD_STANDALONE", addresses(&[&managed]))],
    );
    // Its stderr says so, once per guard (the example makes two).
    let (switched, output): (Vec<&str>, Vec<&str>) = on_scripts
        .lines()
        .partition(|line| line.starts_with("redis-guard: the server has no module"));
    assert_eq!(
        output.join("\n") + "\n",
        printed,
        "example.py without the module"
    );
    assert_eq!(switched.len(), 2, "{on_scripts}");
    let _ = std::fs::remove_dir_all(&target);
    assert_shown_in_readme("example.py", &printed);
}

/// The distribution as an index would serve it: a wheel and an sdist built
/// with `python3 -m build` (clients/python/tests/install-packed.sh), each
/// installed by pip into a folder of its own, then a small program run
/// with only that install and the current client releases (redis-py
/// 8.1.0, valkey-glide 2.5.3) on the path, from outside the checkout:
/// through each client against a server with the module and one without,
/// where the scripts the distribution bundles run.
#[test]
fn the_wheel_and_the_sdist_install_beside_the_current_clients_and_run() {
    let newest = libraries("newest");
    let printed = common::tools::run(
        &mut Command::new(package().join("tests/install-packed.sh")),
        "clients/python/tests/install-packed.sh",
    );
    let folders: Vec<PathBuf> = printed.lines().map(PathBuf::from).collect();
    let [dist, from_wheel, from_sdist] = &folders[..] else {
        panic!("install-packed.sh printed {printed}")
    };
    // What each file carries: the scripts, the type hints, no tests.
    let listing = python(
        &search_path(&[&newest]),
        &[
            "-c",
            "import sys, tarfile, zipfile, glob\n\
             w, = glob.glob(sys.argv[1] + '/*.whl'); s, = glob.glob(sys.argv[1] + '/*.tar.gz')\n\
             names = zipfile.ZipFile(w).namelist() + [n.split('/', 1)[1] for n in tarfile.open(s).getnames() if '/' in n]\n\
             for n in ['redis_guard/lua/prelude.lua', 'redis_guard/lua/cl.refund.lua', 'redis_guard/py.typed']:\n\
             \x20   print(n, names.count(n))\n\
             print('tests', sum('tests/' in n for n in names))",
            &dist.display().to_string(),
        ],
        &[],
    );
    assert_eq!(
        listing,
        "redis_guard/lua/prelude.lua 2\nredis_guard/lua/cl.refund.lua 2\nredis_guard/py.typed 2\ntests 0\n",
        "in the wheel and in the sdist, once each"
    );
    let server = Server::start();
    let managed = Server::managed(&[]);
    let outside = std::env::temp_dir();
    for install in [from_wheel, from_sdist] {
        let output = Command::new("python3")
            .arg("-P")
            .arg(package().join("tests/packed.py"))
            .arg(install)
            .current_dir(&outside)
            .env("PYTHONPATH", search_path(&[install, &newest]))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("GUARD_STANDALONE", addresses(&[&server]))
            .env("GUARD_PLAIN", addresses(&[&managed]))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "packed.py from {}:\n{text}{}",
            install.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            text,
            "redis 8.1.0\nvalkey-glide 2.5.3\nvalkey-glide-sync 2.5.3\n\
             module redis-py 1 0 True 1 1\nmodule glide 1 0 True 1 1\n\
             scripts redis-py 1 0 True 1 1\nscripts glide 1 0 True 1 1\n",
            "packed.py from {}",
            install.display()
        );
    }
}

/// The package sends each command's script as the tests build it (the
/// part of the prelude it uses, then its own): the same SHA-1s.
#[test]
fn the_package_sends_the_scripts_the_tests_run() {
    let commands = common::scripts::scripted_commands().join(" ");
    let printed = python(
        &search_path(&[&package()]),
        &[
            "-c",
            "import sys\nfrom redis_guard import scripts\n\
             for c in sys.argv[1].split(): print(c, scripts.source(c)[1])",
            &commands,
        ],
        &[],
    );
    common::scripts::assert_sends_the_scripts_built_here("redis_guard", &printed);
}
