//! The scripts backend from the tests' side. Each public command of the
//! module has one Lua script, `clients/scripts/<command>.lua` (its name in
//! lower case), which the packages run where the module cannot load: KEYS
//! are the command's keys and ARGV its other arguments, both in the
//! command's order, and it answers what the command answers, errors
//! included. What the server gets is `prelude.lua` then the command's own
//! file. A call is written once, its keys marked, and sent either way.
//! A `TZ` zone goes to a script with its rules, as the packages send it.

use std::path::PathBuf;

use redis::{ConnectionLike, RedisResult, Value};

/// One argument of a call: a key, or any other argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    Key(Vec<u8>),
    Arg(Vec<u8>),
}

/// A call of a module command, its keys marked.
#[derive(Clone, PartialEq, Eq)]
pub struct Call {
    pub command: String,
    pub words: Vec<Word>,
}

/// As redis-cli would show it, keys in braces.
impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.command)?;
        for word in &self.words {
            match word {
                Word::Key(k) => write!(f, " <{}>", String::from_utf8_lossy(k))?,
                Word::Arg(a) => write!(f, " {:?}", String::from_utf8_lossy(a))?,
            }
        }
        Ok(())
    }
}

impl Call {
    pub fn new(command: &str) -> Call {
        Call {
            command: command.to_string(),
            words: Vec::new(),
        }
    }

    pub fn key(mut self, key: impl AsRef<[u8]>) -> Call {
        self.words.push(Word::Key(key.as_ref().to_vec()));
        self
    }

    pub fn arg(mut self, arg: impl ToString) -> Call {
        self.words.push(Word::Arg(arg.to_string().into_bytes()));
        self
    }

    /// An argument of any bytes (not UTF-8, NUL).
    pub fn bytes(mut self, arg: &[u8]) -> Call {
        self.words.push(Word::Arg(arg.to_vec()));
        self
    }

    pub fn args<T: ToString>(self, args: impl IntoIterator<Item = T>) -> Call {
        args.into_iter().fold(self, Call::arg)
    }

    /// The call's keys, in order.
    pub fn keys(&self) -> Vec<&[u8]> {
        self.words_that(true)
    }

    /// The call's other arguments, in order.
    pub fn other_args(&self) -> Vec<&[u8]> {
        self.words_that(false)
    }

    fn words_that(&self, are_keys: bool) -> Vec<&[u8]> {
        self.words
            .iter()
            .filter_map(|w| match w {
                Word::Key(bytes) | Word::Arg(bytes) if matches!(w, Word::Key(_)) == are_keys => {
                    Some(&bytes[..])
                }
                _ => None,
            })
            .collect()
    }

    /// The module's command with every word in place.
    pub fn module(&self, con: &mut impl ConnectionLike) -> RedisResult<Value> {
        let mut cmd = redis::cmd(&self.command);
        for word in &self.words {
            match word {
                Word::Key(bytes) | Word::Arg(bytes) => cmd.arg(&bytes[..]),
            };
        }
        cmd.query(con)
    }

    /// The call through its script (`by_script`) or the module's command.
    pub fn on(&self, con: &mut impl ConnectionLike, by_script: bool) -> RedisResult<Value> {
        match by_script {
            true => self.script(con),
            false => self.module(con),
        }
    }

    /// The command's script: EVALSHA, loading it first if the server does
    /// not have it (NOSCRIPT), as the packages do.
    pub fn script(&self, con: &mut impl ConnectionLike) -> RedisResult<Value> {
        let script = redis::Script::new(&script_source(&self.command));
        let mut invocation = script.prepare_invoke();
        for key in self.keys() {
            invocation.key(key);
        }
        // A zone goes as the packages send it: with its rules (Lua has no
        // zone data), worked out here by Python's zoneinfo.
        let mut after_tz = false;
        for arg in self.other_args() {
            match after_tz {
                true => invocation.arg(super::zoneinfo::as_sent_to_scripts(arg)),
                false => invocation.arg(arg),
            };
            after_tz = arg.eq_ignore_ascii_case(b"TZ");
        }
        invocation.invoke(con)
    }
}

/// Where the script of `command` is.
pub fn script_path(command: &str) -> PathBuf {
    super::tools::repository(&format!("clients/scripts/{}.lua", command.to_lowercase()))
}

/// The script of `command` as the packages send it: its file with the
/// part of the prelude it uses.
pub fn script_source(command: &str) -> String {
    let read = |path: PathBuf| {
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    assembled(&read(script_path("prelude")), &read(script_path(command)))
}

/// The line after which a script's prelude goes; above it, the common
/// call's fast path.
const MARKER: &str = "-- @prelude\n";

/// What the server runs for `script`: the part of `prelude` it uses,
/// first; with a line `-- @prelude`, only the part that the lines above it
/// use goes first, the rest right after it (a call that returns above it
/// makes none of the rest's functions).
pub fn assembled(prelude: &str, script: &str) -> String {
    match script.find(&format!("\n{MARKER}")) {
        None => used_declarations(prelude, script).concat() + script,
        Some(at) => {
            let (above, below) = script.split_at(at + 1 + MARKER.len());
            let first = used_declarations(prelude, above);
            let rest: Vec<&str> = used_declarations(prelude, script)
                .into_iter()
                .filter(|chunk| !first.contains(chunk))
                .collect();
            format!("{}{above}{}{below}", first.concat(), rest.concat())
        }
    }
}

/// Every command with a script (clients/scripts/<command>.lua), upper
/// case.
pub fn scripted_commands() -> Vec<String> {
    let folder = super::tools::repository("clients/scripts");
    let mut commands: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().into_string().ok()?;
            let command = name.strip_suffix(".lua")?;
            (command != "prelude").then(|| command.to_uppercase())
        })
        .collect();
    commands.sort();
    commands
}

/// A package's `<COMMAND> <sha>` lines, one per scripted command, are the
/// SHA-1s of the scripts built here: it sends what the tests run.
pub fn assert_sends_the_scripts_built_here(package: &str, printed: &str) {
    let expected: Vec<String> = scripted_commands()
        .into_iter()
        .map(|command| {
            let sha = redis::Script::new(&script_source(&command))
                .get_hash()
                .to_string();
            format!("{command} {sha}")
        })
        .collect();
    let got: Vec<&str> = printed.lines().collect();
    assert_eq!(got, expected, "{package}'s scripts");
}

/// The declarations of `prelude` that `script` uses, directly or through
/// others, in their order: the rule of clients/scripts/README.md, as the
/// packages apply it (`_used_declarations` in redis_guard/scripts.py,
/// `usedDeclarations` in src/scripts.ts; their tests compare the three).
fn used_declarations<'p>(prelude: &'p str, script: &str) -> Vec<&'p str> {
    // Top-level declarations start a line with `local `.
    let mut starts: Vec<usize> = prelude
        .match_indices("local ")
        .map(|(at, _)| at)
        .filter(|&at| at == 0 || prelude.as_bytes()[at - 1] == b'\n')
        .collect();
    starts.push(prelude.len());
    let chunks: Vec<&str> = starts.windows(2).map(|w| &prelude[w[0]..w[1]]).collect();
    let mut needed = words(script);
    let mut kept = Vec::new();
    for chunk in chunks.into_iter().rev() {
        let declared = chunk["local ".len()..]
            .trim_start_matches("function ")
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ',' || c == ' '))
            .next()
            .unwrap_or_default();
        if declared.split(',').any(|name| needed.contains(name.trim())) {
            kept.push(chunk);
            needed.extend(words(chunk));
        }
    }
    kept.reverse();
    kept
}

/// The names in `text`, as the packages' `[A-Za-z_]\w*` finds them.
fn words(text: &str) -> std::collections::HashSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(|run| run.trim_start_matches(|c: char| c.is_ascii_digit()))
        .filter(|word| !word.is_empty())
        .collect()
}

/// A reply or an error as text, for comparing the two backends: the
/// error's whole text (its code and message), the value as it came.
pub fn outcome(result: RedisResult<Value>) -> Result<Value, String> {
    result.map_err(|error| {
        let code = error.code().unwrap_or("");
        let detail = error.detail().unwrap_or("");
        format!("{code} {detail}")
    })
}
