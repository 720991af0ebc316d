//! When a calendar period ends, worked out by Python's `zoneinfo` (the
//! host's tzdata) independently of the module: the first millisecond after
//! `now` whose local date and time, read field by field, falls in another
//! period (another minute, hour, date, ISO week or month). It walks a
//! minute at a time, then bisects the last minute: no period arithmetic.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Mutex;

const ORACLE: &str = r#"
import sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

def period(unit, ms, zone):
    t = datetime.fromtimestamp(ms // 1000, timezone.utc).replace(
        microsecond=(ms % 1000) * 1000).astimezone(zone)
    return {
        "minute": (t.year, t.month, t.day, t.hour, t.minute),
        "hour": (t.year, t.month, t.day, t.hour),
        "day": (t.year, t.month, t.day),
        "week": t.isocalendar()[:2],
        "month": (t.year, t.month),
    }[unit]

for line in sys.stdin:
    name, unit, now = line.split()
    zone, now = ZoneInfo(name), int(now)
    here = period(unit, now, zone)
    before, after = now, now + 60_000
    while period(unit, after, zone) == here:
        before, after = after, after + 60_000
    while after - before > 1:
        middle = (before + after) // 2
        if period(unit, middle, zone) == here:
            before = middle
        else:
            after = middle
    print(after)
"#;

/// The end (unix ms) of each `(zone, unit, now_ms)`'s period.
pub fn period_ends(queries: &[(&str, &str, i64)]) -> Vec<i64> {
    let mut python = Command::new("python3")
        .args(["-c", ORACLE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 (zoneinfo) works out the expected ends");
    let mut input = python.stdin.take().unwrap();
    for (zone, unit, now) in queries {
        writeln!(input, "{zone} {unit} {now}").unwrap();
    }
    drop(input);
    let output = python.wait_with_output().unwrap();
    assert!(output.status.success(), "the zoneinfo oracle failed");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

/// Unix ms of a UTC instant written `2027-03-14T06:59:50Z`.
pub fn utc_ms(text: &str) -> i64 {
    let script = format!(
        "from datetime import datetime; print(int(datetime.fromisoformat('{}').timestamp() * 1000))",
        text.replace('Z', "+00:00")
    );
    let output = Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The Python package's encoding of a zone for the scripts (its rules
/// for the span around now, redis_guard/zones.py): the input a script
/// gets, which the differential test then judges by the script's answers.
const ENCODE: &str = r#"
import sys
from redis_guard.zones import encoded
print(encoded(sys.argv[1], *map(int, sys.argv[2:])), end="")
"#;

fn encode(name: &str, at_s: Option<i64>) -> Vec<u8> {
    let at = at_s.map(|at| at.to_string());
    let output = Command::new("python3")
        .args(["-c", ENCODE, name])
        .args(at)
        .env("PYTHONPATH", super::tools::repository("clients/python"))
        .output()
        .unwrap();
    assert!(output.status.success(), "the package's rules for {name}");
    output.stdout
}

/// `zone` as the packages would send it at `at_s` (unix seconds): for a
/// server whose clock a test moved.
pub fn sent_to_scripts_at(zone: &str, at_s: i64) -> String {
    String::from_utf8(encode(zone, Some(at_s))).unwrap()
}

/// `zone` as a script gets it from the packages (once per zone per run).
pub fn as_sent_to_scripts(zone: &[u8]) -> Vec<u8> {
    static SENT: Mutex<Option<HashMap<Vec<u8>, Vec<u8>>>> = Mutex::new(None);
    let mut sent = SENT.lock().unwrap();
    let sent = sent.get_or_insert_with(HashMap::new);
    if let Some(rules) = sent.get(zone) {
        return rules.clone();
    }
    let rules = match std::str::from_utf8(zone) {
        Ok(name) if !name.is_empty() && !name.contains('|') => encode(name, None),
        _ => zone.to_vec(),
    };
    sent.insert(zone.to_vec(), rules.clone());
    rules
}
