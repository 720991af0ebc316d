//! The servers under test: real redis-server processes with the module
//! loaded, each on a free loopback port in its own directory, always
//! stopped (and their directory removed) when dropped, and audited for
//! `guard_internal_errors` before they stop.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use redis::Connection;

use super::time::{now_ms, wait_for};
use super::tools;

/// The built module; `make test` builds it before the tests run. It sits
/// beside the test binary's own folder (`<target>/release/deps/..`), so
/// CARGO_TARGET_DIR is honoured; GUARD_MODULE overrides.
pub fn module_path() -> PathBuf {
    let path = std::env::var_os("GUARD_MODULE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let exe = std::env::current_exe().unwrap();
            let profile_dir = exe.parent().and_then(Path::parent).unwrap();
            profile_dir.join("libredis_guard.so")
        });
    assert!(
        path.exists(),
        "{} is missing: run `make build` (or `make test`) first",
        path.display()
    );
    path
}

/// redis-cell 0.2.2, the peer CL.THROTTLE is checked and benchmarked
/// against: built by tests/peers/redis-cell.sh on first use; GUARD_REDIS_CELL
/// names another build.
pub fn redis_cell_module() -> PathBuf {
    // Another build of redis-cell (e.g. 0.5.0 from its repository, which
    // crates.io lacks) for a one-off comparison.
    if let Some(path) = std::env::var_os("GUARD_REDIS_CELL") {
        return PathBuf::from(path);
    }
    tools::installed(&tools::repository("tests/peers/redis-cell.sh"), &[])
}

/// The server binary every test starts: GUARD_SERVER (`make test-matrix`
/// sets it per server), else `redis-server` from PATH.
pub fn server_binary() -> String {
    std::env::var("GUARD_SERVER").unwrap_or_else(|_| "redis-server".to_string())
}

/// What the server under test is, from `INFO server`: ("redis", 7.0.15) or
/// ("valkey", 9.1.2). Valkey also reports a redis_version for
/// compatibility, which this ignores.
pub fn server_kind(con: &mut Connection) -> (String, [u32; 3]) {
    let info: String = redis::cmd("INFO").arg("server").query(con).unwrap();
    let field = |name: &str| {
        info.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .map(|v| v.trim().to_string())
    };
    let (name, version) = match field("valkey_version") {
        Some(version) => ("valkey", version),
        None => ("redis", field("redis_version").expect("redis_version")),
    };
    let mut parts = version.split('.').map(|p| p.parse().unwrap_or(0));
    let version = [(); 3].map(|_| parts.next().unwrap_or(0));
    (name.to_string(), version)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// How long a server may take to come up (much longer under valgrind).
fn startup_time() -> Duration {
    match std::env::var_os("GUARD_SERVER_WRAPPER") {
        Some(_) => Duration::from_secs(60),
        None => Duration::from_secs(10),
    }
}

fn fresh_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "redis-guard-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub struct Server {
    pub port: u16,
    dir: PathBuf,
    /// The module loaded: this crate's, a peer's (redis-cell), or none (a
    /// server the scripts backend runs on, as a managed service is).
    module: Option<PathBuf>,
    module_args: Vec<String>,
    extra: Vec<String>,
    child: Option<Child>,
    /// How many internal errors the test provokes on purpose (the panic
    /// command); any other is a failure of whatever test ran this server.
    internal_errors_expected: i64,
    /// What an audit before a stop or kill found, reported at drop.
    internal_errors_found: Vec<String>,
    /// The file libfaketime reads the server's clock offset from, for a
    /// server whose clock a test moves (see [`Server::with_clock`]).
    clock: Option<PathBuf>,
}

impl Server {
    pub fn start() -> Server {
        Server::with_args(&[])
    }

    pub fn with_args(extra: &[&str]) -> Server {
        Server::with_module_args(&[], extra)
    }

    /// `module_args` follow the module's path on `--loadmodule`.
    pub fn with_module_args(module_args: &[&str], extra: &[&str]) -> Server {
        Server::with_module(module_path(), module_args, extra)
    }

    /// A server that loads `module` instead of this crate's.
    pub fn with_module(module: PathBuf, module_args: &[&str], extra: &[&str]) -> Server {
        Server::launched(Some(module), module_args, extra)
    }

    /// A server that loads no module: where the packages run scripts.
    pub fn without_module(extra: &[&str]) -> Server {
        Server::launched(None, &[], extra)
    }

    /// A server as a managed service gives it: no module, and `COMMAND`,
    /// `MODULE` and `CONFIG` renamed away (Aiven blocks them; the others
    /// refuse `MODULE LOAD`), with the server options `extra`.
    pub fn managed(extra: &[&str]) -> Server {
        let mut args = vec![
            "--rename-command",
            "COMMAND",
            "",
            "--rename-command",
            "MODULE",
            "",
            "--rename-command",
            "CONFIG",
            "",
        ];
        args.extend(extra);
        Server::without_module(&args)
    }

    fn launched(module: Option<PathBuf>, module_args: &[&str], extra: &[&str]) -> Server {
        let mut server = Server {
            port: 0,
            dir: fresh_dir(),
            module,
            module_args: module_args.iter().map(|s| s.to_string()).collect(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            child: None,
            internal_errors_expected: 0,
            internal_errors_found: Vec::new(),
            clock: None,
        };
        server.launch();
        server
    }

    /// A server whose clock runs `offset` from the real one (libfaketime's
    /// form: `-5s`, `+1h`), movable with [`Server::set_clock`]; `None`,
    /// said on stderr, where libfaketime cannot run the server under test
    /// (a jemalloc build: Debian's redis-server, whose allocator calls the
    /// clock while libfaketime starts).
    pub fn with_clock(offset: &str, extra: &[&str]) -> Option<Server> {
        if !faketime_runs_the_server() {
            eprintln!(
                "libfaketime cannot run {}: the clock-step test is left to the servers that it can run",
                server_binary()
            );
            return None;
        }
        let dir = fresh_dir();
        let clock = dir.join("faketime");
        std::fs::write(&clock, offset).unwrap();
        let mut server = Server {
            port: 0,
            dir,
            module: Some(module_path()),
            module_args: Vec::new(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            child: None,
            internal_errors_expected: 0,
            internal_errors_found: Vec::new(),
            clock: Some(clock),
        };
        server.launch();
        Some(server)
    }

    /// Moves this server's clock to `seconds` from the real one, and waits
    /// until its `TIME` says so (libfaketime notices a changed file on a
    /// later read, not always the next one).
    pub fn set_clock(&self, seconds: i64) {
        let clock = self.clock.as_ref().expect("a server made by with_clock");
        std::fs::write(clock, format!("{seconds:+}s")).unwrap();
        let mut con = self.con();
        wait_for(
            || {
                let (now, _): (i64, i64) = redis::cmd("TIME").query(&mut con).unwrap();
                (now - now_ms() / 1000 - seconds).abs() <= 1
            },
            Duration::from_secs(5),
            "the server's clock to step",
        );
    }

    /// A replica of `primary`, connected and in sync.
    pub fn replica_of(primary: &Server) -> Server {
        let port = primary.port.to_string();
        let replica = Server::with_args(&["--replicaof", "127.0.0.1", &port]);
        replica.wait_until(
            |info| info.contains("master_link_status:up"),
            "replication link up",
        );
        replica
    }

    fn launch(&mut self) {
        // A port can be taken between picking and binding: retry on another.
        for _ in 0..5 {
            self.port = free_port();
            let mut child = self
                .command()
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run {} (make deps): {e}", server_binary()));
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if self.try_connect().is_some() {
                    self.child = Some(child);
                    return;
                }
                thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server did not start; log: {}", self.log());
    }

    /// The AOF is on so tests can see what was propagated (its size), and
    /// survives restarts in the server's own directory. `appendfsync no`:
    /// with `everysec` Redis may postpone an AOF write while a background
    /// fsync runs, and `aof_current_size` would lag behind writes made
    /// before a snapshot; a killed process keeps its writes in the page
    /// cache all the same.
    ///
    /// `GUARD_SERVER_WRAPPER` runs the server under another program, e.g.
    /// valgrind (tests/valgrind.sh).
    fn command(&self) -> Command {
        let wrapper = std::env::var("GUARD_SERVER_WRAPPER").unwrap_or_default();
        let server = server_binary();
        let mut words = wrapper.split_whitespace().chain([server.as_str()]);
        let mut command = Command::new(words.next().unwrap());
        if let Some(clock) = &self.clock {
            command.envs(faketime_env(clock));
        }
        command
            .args(words)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"]);
        if let Some(module) = &self.module {
            command
                .arg("--loadmodule")
                .arg(module)
                .args(&self.module_args);
        }
        command
            .arg("--dir")
            .arg(&self.dir)
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "no",
                "--enable-debug-command",
                "local",
            ])
            .args(["--logfile", "redis.log"])
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe. If the test process dies
        // without dropping its servers (killed, aborted), they die too.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        command
    }

    fn try_connect(&self) -> Option<Connection> {
        let client = redis::Client::open(format!("redis://127.0.0.1:{}/", self.port)).ok()?;
        let mut con = client
            .get_connection_with_timeout(Duration::from_secs(1))
            .ok()?;
        redis::cmd("PING").query::<String>(&mut con).ok()?;
        Some(con)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A connection, or `None` while the server is down.
    pub fn try_con(&self) -> Option<Connection> {
        self.try_connect()
    }

    pub fn con(&self) -> Connection {
        self.try_connect()
            .unwrap_or_else(|| panic!("cannot connect to {}", self.port))
    }

    /// The server's working directory (its AOF is under `appendonlydir`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Everything the AOF holds so far, as text.
    pub fn aof_text(&self) -> String {
        let mut text = String::new();
        for entry in std::fs::read_dir(self.dir.join("appendonlydir")).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
        text
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default()
    }

    /// Stops the server, keeping its directory (AOF) and port, and starts
    /// it again from what it persisted.
    pub fn restart(&mut self) {
        self.stop();
        self.child = Some(self.command().spawn().unwrap());
        let deadline = Instant::now() + startup_time();
        while self.try_connect().is_none() {
            assert!(
                Instant::now() < deadline,
                "restart failed; log: {}",
                self.log()
            );
            thread::sleep(Duration::from_millis(20));
        }
        self.wait_until(|info| info.contains("loading:0"), "AOF loaded");
    }

    /// This server will answer `n` internal errors on purpose (a test of
    /// the panic command); the audit then wants exactly `n`.
    pub fn expect_internal_errors(&mut self, n: i64) {
        self.internal_errors_expected = n;
    }

    /// Every server is audited before it stops, is killed or is dropped:
    /// INFO's `guard_internal_errors` (a caught panic, an effect that
    /// could not apply, on this server or applied here as a replica)
    /// must be what the test expected, 0 unless it said otherwise. So no
    /// suite can forget to look. A server that cannot answer (killed
    /// already, blocked) or runs another module (redis-cell) is skipped.
    fn audit(&mut self) {
        if !self.alive() || thread::panicking() {
            return;
        }
        let Some(mut con) = self.try_connect() else {
            return;
        };
        let _ = con.set_read_timeout(Some(Duration::from_secs(2)));
        let Ok(info) = redis::cmd("INFO").arg("guard").query::<String>(&mut con) else {
            return;
        };
        if !info.contains("guard_") {
            return;
        }
        let found = info
            .lines()
            .find_map(|line| line.strip_prefix("guard_internal_errors:"))
            .and_then(|value| value.trim().parse::<i64>().ok());
        if found != Some(self.internal_errors_expected) {
            self.internal_errors_found.push(format!(
                "server on port {} answered {found:?} internal errors \
                 (ERR redis-guard internal error / could not apply), {} expected",
                self.port, self.internal_errors_expected
            ));
        }
        // A restart starts the count again.
        self.internal_errors_expected = 0;
    }

    /// SHUTDOWN (flushing the AOF), then waits for the process to exit.
    fn stop(&mut self) {
        self.audit();
        if let Some(mut child) = self.child.take() {
            let mut con = self.con();
            let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").query(&mut con);
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Polls INFO until `ready` holds (at most 10 s).
    pub fn wait_until(&self, ready: impl Fn(&str) -> bool, what: &str) {
        let mut con = self.con();
        let info = |con: &mut Connection| -> String {
            redis::cmd("INFO").arg("everything").query(con).unwrap()
        };
        wait_for(|| ready(&info(&mut con)), Duration::from_secs(10), what);
    }

    /// Blocks this server for `seconds` (DEBUG SLEEP, on a thread): a
    /// replica held back applies its stream that much later. Join the
    /// handle to wait for it.
    pub fn hold_back(&self, seconds: f64) -> thread::JoinHandle<()> {
        let mut con = self.con();
        let sleeper = thread::spawn(move || {
            let _: () = redis::cmd("DEBUG")
                .arg("SLEEP")
                .arg(seconds)
                .query(&mut con)
                .unwrap();
        });
        // Let the sleep begin before the caller writes.
        thread::sleep(Duration::from_millis(100));
        sleeper
    }

    /// Kills the process outright (SIGKILL), as a crash or a lost machine.
    pub fn kill(&mut self) {
        self.audit();
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Is the process still alive (it would not be after a crash)?
    pub fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SHUTDOWN first, so a wrapper such as valgrind gets to report.
        if std::env::var_os("GUARD_SERVER_WRAPPER").is_some() && self.alive() {
            self.stop();
        }
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
        let found = std::mem::take(&mut self.internal_errors_found);
        if !found.is_empty() && !thread::panicking() {
            panic!("{}", found.join("\n"));
        }
    }
}

/// Is this error reply the module's own failure (a caught panic, an
/// effect that could not apply) rather than the caller's?
pub fn is_internal_error(text: &str) -> bool {
    text.contains("redis-guard internal error") || text.contains("could not apply")
}

/// libfaketime, from the `faketime` package (make deps installs it).
fn libfaketime() -> PathBuf {
    ["/usr/lib/x86_64-linux-gnu/faketime", "/usr/lib/faketime"]
        .iter()
        .map(|dir| Path::new(dir).join("libfaketime.so.1"))
        .find(|path| path.exists())
        .expect("libfaketime is missing: apt-get install faketime (make deps)")
}

/// The environment that runs a program on a clock offset by what `clock`
/// (a file) says, read again on every call. Monotonic clocks stay real:
/// the server's timers and timeouts are not what a test moves.
fn faketime_env(clock: &Path) -> Vec<(&'static str, std::ffi::OsString)> {
    vec![
        ("LD_PRELOAD", libfaketime().into_os_string()),
        ("FAKETIME_TIMESTAMP_FILE", clock.as_os_str().to_owned()),
        ("FAKETIME_NO_CACHE", "1".into()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".into()),
    ]
}

/// Can libfaketime run the server under test? `--version` under it ends
/// in time with the server's banner (a jemalloc build hangs or aborts).
fn faketime_runs_the_server() -> bool {
    static RUNS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *RUNS.get_or_init(|| {
        let dir = fresh_dir();
        let clock = dir.join("faketime");
        std::fs::write(&clock, "-5s").unwrap();
        let mut child = Command::new(server_binary())
            .arg("--version")
            .envs(faketime_env(&clock))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(2);
        let ended = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status.success(),
                _ if Instant::now() > deadline => break false,
                _ => thread::sleep(Duration::from_millis(20)),
            }
        };
        let _ = child.kill();
        let _ = child.wait();
        let mut complaints = String::new();
        if let Some(mut stderr) = child.stderr.take() {
            use std::io::Read;
            let _ = stderr.read_to_string(&mut complaints);
        }
        let _ = std::fs::remove_dir_all(&dir);
        ended && !complaints.contains("libfaketime")
    })
}
