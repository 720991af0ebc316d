//! Assertions: what a call changed (a snapshot of a key, the AOF and the
//! INFO guard counters, compared before and after), the errors that must
//! change nothing, and SPEC's levels worked out independently.

use redis::{Connection, Value};

/// One field of an INFO section, as the server wrote it.
pub fn info_value(con: &mut Connection, section: &str, field: &str) -> String {
    let info: String = redis::cmd("INFO").arg(section).query(con).unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("INFO {section} has no {field}"))
        .trim()
        .to_string()
}

/// One field of `INFO everything` as an integer.
pub fn info_field(con: &mut Connection, field: &str) -> i64 {
    info_value(con, "everything", field).parse().unwrap()
}

/// Everything a call could change about `key`, plus what was propagated
/// (the AOF size) and the module's success counters.
#[derive(Debug, PartialEq)]
pub struct Snapshot {
    pub key_type: String,
    pub dump: Value,
    pub pexpiretime: i64,
    pub aof_size: i64,
    /// Every counter of INFO guard but the `*_calls` ones (which count
    /// errors too, by SPEC), by name: a counter added later is in it.
    pub successes: std::collections::BTreeMap<String, i64>,
}

pub fn snapshot(con: &mut Connection, key: &str) -> Snapshot {
    let mut successes = guard_counters(con);
    successes.retain(|name, _| !name.ends_with("_calls"));
    Snapshot {
        key_type: redis::cmd("TYPE").arg(key).query(con).unwrap(),
        dump: redis::cmd("DUMP").arg(key).query(con).unwrap(),
        pexpiretime: redis::cmd("PEXPIRETIME").arg(key).query(con).unwrap(),
        aof_size: info_field(con, "aof_current_size"),
        successes,
    }
}

/// `after` with the counters a call legitimately moved (`moved`: each
/// name and by how much, asserted) put back to `before`'s values, so the
/// caller can then compare everything else with `before`.
pub fn counted(mut after: Snapshot, before: &Snapshot, moved: &[(&str, i64)]) -> Snapshot {
    for &(name, by) in moved {
        assert_eq!(
            after.successes[name] - before.successes[name],
            by,
            "{name} must move by {by}"
        );
        after
            .successes
            .insert(name.to_string(), before.successes[name]);
    }
    after
}

/// Runs each call (its key is `args[1]`) expecting an error reply that
/// mentions `expected`, and asserts it changed nothing about the key.
pub fn assert_errors_change_nothing(con: &mut Connection, cases: &[(Vec<&[u8]>, &str)]) {
    for (args, expected) in cases {
        let key = std::str::from_utf8(args[1]).unwrap();
        assert_error_changes_nothing(con, key, args, expected);
    }
}

/// Each call gets Redis's own arity error (the module is never reached).
pub fn assert_arity_errors(con: &mut Connection, calls: &[Vec<&str>]) {
    for args in calls {
        let error = redis::cmd(args[0])
            .arg(&args[1..])
            .query::<Value>(con)
            .unwrap_err();
        assert!(
            error.to_string().contains("wrong number of arguments"),
            "{args:?}: {error}"
        );
    }
}

/// Runs `args` expecting an error reply whose text contains `expected`,
/// and asserts it changed nothing about `key`.
pub fn assert_error_changes_nothing(
    con: &mut Connection,
    key: &str,
    args: &[&[u8]],
    expected: &str,
) {
    assert_error_changes_none_of(con, &[key], args, expected);
}

/// As [`assert_error_changes_nothing`], for a call that names several
/// keys (a counter and its alert stream): none of `keys` changes.
pub fn assert_error_changes_none_of(
    con: &mut Connection,
    keys: &[&str],
    args: &[&[u8]],
    expected: &str,
) {
    let snapshots = |con: &mut Connection| -> Vec<Snapshot> {
        keys.iter().map(|key| snapshot(con, key)).collect()
    };
    let before = snapshots(con);
    let mut command = redis::cmd(std::str::from_utf8(args[0]).unwrap());
    for arg in &args[1..] {
        command.arg(*arg);
    }
    let error = command.query::<Value>(con).expect_err("an error reply");
    let text = format!(
        "{} {}",
        error.code().unwrap_or(""),
        error.detail().unwrap_or("")
    );
    assert!(
        text.contains(expected),
        "{:?} replied {text:?}, expected it to mention {expected:?}",
        String::from_utf8_lossy(&args.concat())
    );
    assert_eq!(
        before,
        snapshots(con),
        "an error changed a key, the AOF or the stats"
    );
}

/// Every `guard_*` field of `INFO guard`, by name: tests compare the whole
/// map, so a counter that moved when it should not is caught too.
pub fn guard_counters(con: &mut Connection) -> std::collections::BTreeMap<String, i64> {
    let info: String = redis::cmd("INFO").arg("guard").query(con).unwrap();
    info.lines()
        .filter_map(|line| line.strip_prefix("guard_")?.split_once(':'))
        .map(|(name, value)| (name.to_string(), value.trim().parse().unwrap()))
        .collect()
}

/// Asserts that exactly the `moved` counters of INFO guard have these
/// values and every other one is still 0.
pub fn assert_only_these_counters(con: &mut Connection, moved: &[(&str, i64)]) {
    let mut expected = guard_counters(con);
    expected.values_mut().for_each(|value| *value = 0);
    for (name, value) in moved {
        assert!(expected.contains_key(*name), "INFO guard has no {name}");
        expected.insert(name.to_string(), *value);
    }
    assert_eq!(guard_counters(con), expected);
}

/// SPEC's level, worked out independently of the module's rules: the
/// 1-based index of the highest threshold `t` with `prev < t <= current`,
/// 0 when none.
pub fn crossed_level(prev: i64, current: i64, thresholds: &[i64]) -> i64 {
    let mut level = 0;
    for (index, &t) in thresholds.iter().enumerate() {
        if prev < t && t <= current {
            level = index as i64 + 1;
        }
    }
    level
}
