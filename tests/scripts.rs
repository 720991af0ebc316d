//! The scripts backend against the module, call by call: the same seeded
//! calls, valid and invalid, go to a server with the module (its
//! commands) and to a server without it (each command's Lua script,
//! clients/scripts/), and must get the same reply or the same error text,
//! and leave the same stored type, value and alert entries, with expiries
//! that differ by no more than the time between the two calls.
//!
//! Lua numbers are doubles, exact to 2^53: past that a script replies the
//! exact integer as a bulk string of its digits (the packages read it as
//! the integer), which counts here as the module's integer.

mod common;

use common::gcra::{self, within, Limiter};
use common::rng::Rng;
use common::scripts::{outcome, Call, Word};
use common::*;
use redis::{Connection, Value};

const SEED: u64 = 0x005c_4197_0000_0036;

fn calls() -> usize {
    std::env::var("GUARD_SCRIPT_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

/// The keys the calls share, so they build on each other: a few counters,
/// their alert streams, and a key of another type.
const COUNTERS: [&str; 3] = ["{c}:a", "{c}:b", "{c}:c"];
const STREAMS: [&str; 2] = ["{c}:alerts", "{c}:other-alerts"];
const A_LIST: &str = "{c}:list";
/// Throttle cells.
const CELLS: [&str; 3] = ["{c}:t1", "{c}:t2", "{c}:t3"];

/// An integer argument: mostly valid and small, sometimes anything a
/// client could send.
fn integer(rng: &mut Rng, small: i64) -> String {
    match rng.below(20) {
        0 => rng
            .pick(&["0", "-1", "-0", "+1", "01", "1.5", "", "x", " 1"])
            .to_string(),
        1 => rng
            .pick(&[
                "9223372036854775807",
                "9223372036854775808",
                "-9223372036854775808",
            ])
            .to_string(),
        _ => (1 + rng.below(small as usize) as i64).to_string(),
    }
}

fn thresholds(rng: &mut Rng) -> Vec<String> {
    let mut values = Vec::new();
    let mut at = 0;
    let most = if rng.below(30) == 0 { 40 } else { 4 };
    for _ in 0..1 + rng.below(most) {
        at += 1 + rng.below(8) as i64;
        values.push(at.to_string());
    }
    if rng.below(15) == 0 {
        values.reverse();
    }
    if rng.below(25) == 0 {
        values.push(integer(rng, 50));
    }
    values
}

/// `[ALERT stream] [MAXLEN n]`, in either order, sometimes wrong.
fn alert_options(mut call: Call, rng: &mut Rng, counter: &str) -> Call {
    let mut options: Vec<Vec<Option<String>>> = Vec::new();
    if rng.below(3) == 0 {
        let stream = if rng.below(20) == 0 {
            counter.to_string()
        } else {
            rng.pick(&STREAMS).to_string()
        };
        options.push(vec![None, Some(stream)]);
    }
    if rng.below(5) == 0 {
        options.push(vec![Some("MAXLEN".into()), Some(integer(rng, 100))]);
    }
    if rng.below(40) == 0 {
        options.push(vec![
            Some(rng.pick(&["BUCKETS", "FOO", "maxlen"]).to_string()),
            Some("1".into()),
        ]);
    }
    if rng.below(2) == 0 {
        options.reverse();
    }
    // An unknown option of any bytes: the error shows it as the module
    // does (invalid UTF-8 replaced, NUL dropped).
    let odd: Option<&[u8]> = (rng.below(60) == 0).then(|| {
        *rng.pick(&[
            &b"\xff"[..],
            b"a\x00b",
            b"\xe9t\xe9",
            b"\xf0\x9f\x98",
            b"\xed\xa0\x80",
        ])
    });
    for option in options {
        match &option[..] {
            [None, Some(stream)] => {
                let name = *rng.pick(&["ALERT", "alert", "Alert"]);
                call = call.arg(name).key(stream);
            }
            [Some(name), Some(value)] => call = call.arg(name).arg(value),
            _ => unreachable!(),
        }
    }
    match odd {
        Some(name) => call.bytes(name).arg("1"),
        None => call,
    }
}

fn incrcheck(rng: &mut Rng) -> Call {
    let counter = *rng.pick(&COUNTERS);
    let call = Call::new("MON.INCRCHECK")
        .key(counter)
        .arg(integer(rng, 5))
        .arg(integer(rng, 3))
        .args(thresholds(rng));
    alert_options(call, rng, counter)
}

fn decrclamp(rng: &mut Rng) -> Call {
    let counter = *rng.pick(&COUNTERS);
    let mut call = Call::new("MON.DECRCLAMP").key(counter).arg(integer(rng, 8));
    if rng.below(30) == 0 {
        call = call.arg("7");
    }
    alert_options(call, rng, counter)
}

/// Waits out a counter's window that ends within the next few ms, so that
/// no call lands on one server before the end and on the other after it.
fn settle_expiries(con: &mut Connection) {
    for key in COUNTERS {
        let left = pexpiretime(con, key) - now_ms();
        if (-5..20).contains(&left) {
            std::thread::sleep(std::time::Duration::from_millis((left + 10) as u64));
        }
    }
}

/// A script's reply with the integers past 2^53 it sends as digits made
/// integers again.
fn as_integers(reply: Value) -> Value {
    match reply {
        Value::Array(items) => Value::Array(items.into_iter().map(as_integers).collect()),
        Value::BulkString(digits) => match std::str::from_utf8(&digits)
            .ok()
            .and_then(|d| d.parse::<i64>().ok())
        {
            Some(n) if n.unsigned_abs() > 1 << 53 => Value::Int(n),
            _ => Value::BulkString(digits),
        },
        other => other,
    }
}

/// Makes one call of a command, valid or not.
type Generator = fn(&mut Rng) -> Call;

/// A limiter's `max_burst count period`: mostly small, valid and quick to
/// refill, sometimes anything.
fn limiter_args(rng: &mut Rng) -> [String; 3] {
    if rng.below(15) == 0 {
        return [integer(rng, 3), integer(rng, 5), integer(rng, 3)];
    }
    let period = *rng.pick(&[1, 2, 60]);
    [
        rng.below(4).to_string(),
        (1 + rng.below(6)).to_string(),
        period.to_string(),
    ]
}

fn quantity(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => integer(rng, 3),
        1 => "0".into(),
        _ => (1 + rng.below(3)).to_string(),
    }
}

fn throttle(rng: &mut Rng) -> Call {
    let mut call = Call::new("CL.THROTTLE")
        .key(rng.pick(&CELLS))
        .args(limiter_args(rng));
    if rng.below(2) == 0 {
        call = call.arg(quantity(rng));
    }
    if rng.below(40) == 0 {
        call = call.arg("1");
    }
    call
}

fn throttle_all(rng: &mut Rng) -> Call {
    let n = 1 + rng.below(3);
    let numkeys = match rng.below(30) {
        0 => rng.pick(&["0", "17", "x", "4"]).to_string(),
        _ => n.to_string(),
    };
    let mut call = Call::new("CL.THROTTLEALL").arg(numkeys);
    let mut keys: Vec<&str> = CELLS.to_vec();
    for _ in 0..n {
        let key = if rng.below(25) == 0 {
            CELLS[0]
        } else {
            keys.remove(rng.below(keys.len()))
        };
        call = call.key(key).args(limiter_args(rng));
    }
    if rng.below(2) == 0 {
        call = call
            .arg(rng.pick(&["QUANTITY", "quantity", "QTY"]))
            .arg(quantity(rng));
    }
    call
}

/// The limiters and quantity of a valid CL.THROTTLE or CL.THROTTLEALL
/// call, as its words say.
fn limiters_of(call: &Call) -> (Vec<Limiter>, i64) {
    let args: Vec<i64> = call
        .other_args()
        .iter()
        .filter_map(|a| std::str::from_utf8(a).unwrap().parse().ok())
        .collect();
    let (groups, quantity) = if call.command == "CL.THROTTLE" {
        (&args[..3], args.get(3).copied().unwrap_or(1))
    } else {
        let n = args[0] as usize;
        (
            &args[1..1 + 3 * n],
            args.get(1 + 3 * n).copied().unwrap_or(1),
        )
    };
    let limiters = groups
        .chunks(3)
        .map(|g| Limiter {
            max_burst: g[0],
            count: g[1],
            period: g[2],
        })
        .collect();
    (limiters, quantity)
}

/// Every reply a valid throttle call may get at an instant of `bracket`
/// from cells holding `tats`, as SPEC says.
fn throttle_replies(call: &Call, tats: &[Option<i64>], bracket: (i64, i64)) -> Vec<Value> {
    let (limiters, quantity) = limiters_of(call);
    let ints = |v: &[i64]| Value::Array(v.iter().map(|&n| Value::Int(n)).collect());
    within(bracket, |now| {
        if call.command == "CL.THROTTLE" {
            ints(&gcra::throttle(tats[0], now, &limiters[0], quantity).0)
        } else {
            let reply = gcra::throttle_all(tats, now, &limiters, quantity);
            let mut items: Vec<Value> = reply[0].iter().map(|&n| Value::Int(n)).collect();
            items.extend(reply[1..].iter().map(|cell| ints(cell)));
            Value::Array(items)
        }
    })
}

/// The arrival times a call's cells hold.
fn tats(con: &mut Connection, call: &Call) -> Vec<Option<i64>> {
    call.keys()
        .into_iter()
        .map(|key| {
            let value: Option<String> = redis::cmd("GET").arg(key).query(con).ok()?;
            value.and_then(|v| v.parse().ok())
        })
        .collect()
}

/// What a key holds, as both backends must leave it: its type, its value
/// (a string's, or a stream's entries without their IDs) and its expiry.
fn state(con: &mut Connection, key: &str) -> (String, Value, i64) {
    let kind: String = redis::cmd("TYPE").arg(key).query(con).unwrap();
    let value = match kind.as_str() {
        "string" => redis::cmd("GET").arg(key).query(con).unwrap(),
        "stream" => {
            let entries: Vec<(String, Value)> = redis::cmd("XRANGE")
                .arg(key)
                .arg("-")
                .arg("+")
                .query(con)
                .unwrap();
            Value::Array(entries.into_iter().map(|(_, fields)| fields).collect())
        }
        _ => Value::Nil,
    };
    (kind, value, pexpiretime(con, key))
}

#[test]
fn every_script_answers_as_the_module_call_by_call() {
    let module_server = Server::start();
    let plain_server = Server::without_module(&[]);
    let (mut module, mut plain) = (module_server.con(), plain_server.con());
    for con in [&mut module, &mut plain] {
        let _: () = redis::cmd("RPUSH").arg(A_LIST).arg("x").query(con).unwrap();
    }
    let generators: [(&str, Generator); 4] = [
        ("MON.INCRCHECK", incrcheck),
        ("MON.DECRCLAMP", decrclamp),
        ("CL.THROTTLE", throttle),
        ("CL.THROTTLEALL", throttle_all),
    ];
    // The most the two servers' instants of one call were apart, ns: a
    // throttle cell's arrival time may differ by that.
    let mut drift = 0;
    let mut rng = Rng(SEED);
    let mut compared = std::collections::BTreeMap::<&str, (usize, usize)>::new();
    for i in 0..calls() {
        let (name, generate) = *rng.pick(&generators);
        let mut call = generate(&mut rng);
        if rng.below(50) == 0 {
            // A key of another type where the first key goes.
            if let Some(first) = call.words.iter_mut().find(|w| matches!(w, Word::Key(_))) {
                *first = Word::Key(A_LIST.into());
            }
        }
        settle_expiries(&mut module);
        let throttles = name.starts_with("CL.");
        let (module_tats, script_tats) = if throttles {
            (tats(&mut module, &call), tats(&mut plain, &call))
        } else {
            Default::default()
        };
        let before = now_ns();
        let by_module = outcome(call.module(&mut module));
        let by_script = outcome(call.script(&mut plain)).map(as_integers);
        let bracket = (before, now_ns());
        let apart = (bracket.1 - bracket.0) / 1_000_000 + 1;
        drift = drift.max(bracket.1 - bracket.0);
        let what = format!("call {i} (seed {SEED:#x}): {call:?}");
        match (&by_module, &by_script) {
            // A limiter's reply depends on the instant: each must be one
            // SPEC gives at an instant of the call for its own cells (whose
            // arrival times may differ by the drift), and the two equal
            // where no step of the rules falls inside that for either.
            (Ok(mine), Ok(theirs)) if throttles => {
                let could = throttle_replies(&call, &module_tats, bracket);
                assert!(
                    could.contains(mine),
                    "module {mine:?}, SPEC {could:?}: {what}"
                );
                let could_too = throttle_replies(&call, &script_tats, bracket);
                assert!(
                    could_too.contains(theirs),
                    "script {theirs:?}, SPEC {could_too:?}: {what}"
                );
                if could.len() == 1 && could == could_too {
                    assert_eq!(theirs, mine, "the reply: {what}");
                }
            }
            _ => assert_eq!(by_script, by_module, "the reply: {what}"),
        }
        let counts = compared.entry(name).or_default();
        if by_module.is_ok() {
            counts.0 += 1;
        } else {
            counts.1 += 1;
        }
        // What the call may have written: its keys.
        let named: Vec<String> = call
            .keys()
            .iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        let named =
            |keys: &'static [&'static str]| keys.iter().filter(|k| named.iter().any(|n| n == *k));
        for key in named(&CELLS) {
            let (kind, value, expiry) = state(&mut module, key);
            let (script_kind, script_value, script_expiry) = state(&mut plain, key);
            assert_eq!(script_kind, kind, "{key} after {what}");
            let tat = |value: &Value| match value {
                Value::BulkString(digits) => {
                    std::str::from_utf8(digits).unwrap().parse::<i64>().ok()
                }
                _ => None,
            };
            if let (Some(mine), Some(theirs)) = (tat(&value), tat(&script_value)) {
                assert!(
                    (mine - theirs).abs() <= drift,
                    "{key}: {mine} and {theirs} after {what}"
                );
                assert!(
                    (expiry - script_expiry).abs() <= drift / 1_000_000 + 1,
                    "{key} after {what}"
                );
            } else {
                assert_eq!(script_value, value, "{key} after {what}");
            }
        }
        for key in named(&COUNTERS).chain(named(&STREAMS)) {
            let (kind, value, expiry) = state(&mut module, key);
            let (script_kind, script_value, script_expiry) = state(&mut plain, key);
            // A window ending between the two reads: one side has just
            // expired it.
            let just_ended = |kind: &str, other_expiry: i64| {
                kind == "none" && other_expiry > 0 && other_expiry <= now_ms() + apart
            };
            if just_ended(&kind, script_expiry) || just_ended(&script_kind, expiry) {
                continue;
            }
            assert_eq!(
                (&script_kind, &script_value),
                (&kind, &value),
                "{key} after {what}"
            );
            assert!(
                (script_expiry < 0 && script_expiry == expiry)
                    || (expiry > 0 && (script_expiry - expiry).abs() <= drift / 1_000_000 + 1),
                "{key}'s expiry: script {script_expiry}, module {expiry} after {what}"
            );
        }
        // Counters start again now and then, so windows start again too.
        if rng.below(200) == 0 {
            for con in [&mut module, &mut plain] {
                let _: () = redis::cmd("DEL").arg(&COUNTERS).query(con).unwrap();
            }
        }
    }
    for (name, (replies, errors)) in &compared {
        eprintln!("{name}: {replies} replies and {errors} errors compared");
        assert!(
            *replies > 0 && *errors > 0,
            "{name}: both kinds must be compared"
        );
    }
}
