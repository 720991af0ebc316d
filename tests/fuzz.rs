//! A seeded, reproducible random caller against a live server: random
//! arity, random bytes (NUL included), boundary integers, 1 MB arguments,
//! keys of every type with and without TTL. After every call the server
//! answers PING, an error left the key exactly as it was, and the replies
//! keep their invariants. Errors must carry the code ERR, WRONGTYPE or
//! BUSYKEY (COUPON.CREATE on an existing key, as RESTORE).
//! `make test` makes 20k calls; `make fuzz` 1M
//! (GUARD_FUZZ_CALLS, GUARD_FUZZ_SEED). A failure prints seed and call.

mod common;

use common::rng::Rng;
use common::*;
use redis::{Connection, Value};

/// Keys of every type, with and without TTL (long ones: nothing may expire
/// between a call and the checks after it).
const KEYS: [&str; 18] = [
    "int",
    "int:ttl",
    "neg",
    "max",
    "min",
    "text",
    "list",
    "hash",
    "set",
    "set:ttl",
    "zset",
    "stream",
    "missing",
    "campaign",
    "campaign:ttl",
    "campaign:ledger",
    "ledger",
    "window",
];

/// The campaigns of the fixture, a cart's usual keys.
const CAMPAIGNS: [&str; 3] = ["campaign", "campaign:ttl", "campaign:ledger"];

/// What a `LEDGER` option names: the ledger of `campaign:ledger`, another
/// stream, a missing key, a key of another type.
const LEDGERS: [&str; 4] = ["ledger", "stream", "missing", "text"];

fn fixture(con: &mut Connection) {
    let script = "redis.call('FLUSHALL') \
        redis.call('SET', 'int', 10) \
        redis.call('SET', 'int:ttl', 10, 'EX', 100000) \
        redis.call('SET', 'neg', -5) \
        redis.call('SET', 'max', '9223372036854775807') \
        redis.call('SET', 'min', '-9223372036854775808') \
        redis.call('SET', 'text', 'hello\\0world') \
        redis.call('RPUSH', 'list', 'a') \
        redis.call('HSET', 'hash', 'f', 'v') \
        redis.call('SADD', 'set', 'alice', 'bob') \
        redis.call('SADD', 'set:ttl', 'carol') redis.call('EXPIRE', 'set:ttl', 100000) \
        redis.call('ZADD', 'zset', 1, 'a') \
        return 1";
    let _: i64 = redis::cmd("EVAL").arg(script).arg(0).query(con).unwrap();
    for (key, args) in [
        ("campaign", &["3", "PERUSER", "2"][..]),
        ("campaign:ttl", &["50", "HOLD", "3600"]),
        (
            "campaign:ledger",
            &["4", "PERUSER", "2", "LEDGER", "ledger", "MAXLEN", "50"],
        ),
    ] {
        let _: () = redis::cmd("COUPON.CREATE")
            .arg(key)
            .arg(args)
            .query(con)
            .unwrap();
    }
    let _: i64 = redis::cmd("EXPIRE")
        .arg("campaign:ttl")
        .arg(100_000)
        .query(con)
        .unwrap();
    let _: Value = redis::cmd("MON.SLIDECHECK")
        .arg("window")
        .arg(1)
        .arg(3600)
        .arg(5)
        .query(con)
        .unwrap();
    let _: String = redis::cmd("XADD")
        .arg("stream")
        .arg("*")
        .arg("f")
        .arg("v")
        .query(con)
        .unwrap();
}

const INTEGERS: [&str; 24] = [
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "5",
    "100",
    "+5",
    " 5",
    "5 ",
    "05",
    "1.5",
    "1e3",
    "9223372036854775807",
    "9223372036854775806",
    "-9223372036854775808",
    "-9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999",
    "",
    "abc",
    "0x10",
    "5\0",
];

/// Windows: boundary values, but no small positive ones that could expire
/// a key between a call and its checks.
const WINDOWS: [&str; 10] = [
    "0",
    "-1",
    "3600",
    "86400",
    "9223372036854775",
    "9223372036854775807",
    "+3600",
    "03600",
    "",
    "3600.0",
];

fn random_bytes(rng: &mut Rng) -> Vec<u8> {
    if rng.chance(500) {
        return vec![b'7'; 1 << 20];
    }
    let len = rng.below(12);
    (0..len).map(|_| rng.next() as u8).collect()
}

/// Half the time a small valid number, so that calls also get through to
/// the success paths; otherwise a boundary value or arbitrary bytes.
fn integer(rng: &mut Rng) -> Vec<u8> {
    match rng.below(10) {
        0..=4 => (1 + rng.below(9)).to_string().into_bytes(),
        5 => random_bytes(rng),
        _ => rng.pick(&INTEGERS).as_bytes().to_vec(),
    }
}

fn user(rng: &mut Rng) -> Vec<u8> {
    match rng.below(8) {
        0 => Vec::new(),
        1 => random_bytes(rng),
        _ => rng
            .pick(&["alice", "bob", "carol", "dave"])
            .as_bytes()
            .to_vec(),
    }
}

/// `NAME value` options from `names`, in any case and order; sometimes an
/// unknown one, a repeated one, or one without its value.
fn options(
    rng: &mut Rng,
    call: &mut Vec<Vec<u8>>,
    names: &[&str],
    value: impl Fn(&mut Rng, &str) -> Vec<u8>,
) {
    for _ in 0..rng.below(3) {
        let name = match rng.below(12) {
            0 => b"BOGUS".to_vec(),
            1 => random_bytes(rng),
            _ => {
                let name = *rng.pick(names);
                if rng.chance(2) {
                    name.to_lowercase()
                } else {
                    name.to_string()
                }
                .into_bytes()
            }
        };
        let text = String::from_utf8_lossy(&name).to_uppercase();
        call.push(name);
        if !rng.chance(15) {
            call.push(value(rng, &text));
        }
    }
}

/// A velocity check's options, half the time: `ALERT stream` (a key of
/// any type, often the stream, sometimes the counter itself), `MAXLEN`
/// and the command's `own` (BUCKETS), as [`options`] makes them.
fn alert(rng: &mut Rng, call: &mut Vec<Vec<u8>>, own: &[&str]) {
    if rng.chance(2) {
        return;
    }
    let names: Vec<&str> = ["ALERT", "MAXLEN"].iter().chain(own).copied().collect();
    let counter = call[1].clone();
    options(rng, call, &names, |rng, name| match name {
        "ALERT" => match rng.below(6) {
            0 => counter.clone(),
            1 | 2 => b"stream".to_vec(),
            _ => rng.pick(&KEYS).as_bytes().to_vec(),
        },
        "BUCKETS" if rng.chance(3) => rng
            .pick(&["1", "60", "3600", "7", "3601"])
            .as_bytes()
            .to_vec(),
        "TZ" => zone(rng),
        _ => integer(rng),
    });
}

/// Calendar windows, and near misses. No minute or hour: a key must not
/// expire between a call and its checks.
const CALENDAR: [&str; 5] = ["day", "WEEK", "Month", "days", "year"];

/// `TZ` values: zones, names that are none, and paths.
const ZONES: [&str; 7] = [
    "UTC",
    "Asia/Seoul",
    "america/new_york",
    "Australia/Lord_Howe",
    "Mars/Olympus",
    "../../../etc/passwd",
    "",
];

/// A window: seconds (boundary values), a calendar unit, or bytes.
fn window(rng: &mut Rng) -> Vec<u8> {
    match rng.below(6) {
        0 => rng.pick(&WINDOWS).as_bytes().to_vec(),
        1 => random_bytes(rng),
        2 => rng.pick(&CALENDAR).as_bytes().to_vec(),
        _ => b"3600".to_vec(),
    }
}

/// A `TZ` option's value: usually a name from [`ZONES`].
fn zone(rng: &mut Rng) -> Vec<u8> {
    if rng.chance(8) {
        return random_bytes(rng);
    }
    rng.pick(&ZONES).as_bytes().to_vec()
}

/// A window and 1 to 4 thresholds (sometimes 33, or a bad one). Never a
/// small window: a key must not expire between a call and the checks that
/// follow it.
fn window_and_thresholds(rng: &mut Rng, call: &mut Vec<Vec<u8>>) {
    call.push(window(rng));
    let count = if rng.chance(20) { 33 } else { 1 + rng.below(4) };
    let mut threshold = 0i64;
    for _ in 0..count {
        if rng.chance(12) {
            call.push(integer(rng));
        } else {
            threshold += 1 + rng.below(20) as i64;
            call.push(threshold.to_string().into_bytes());
        }
    }
}

/// A limiter's `max_burst count period`. Periods as windows: never so
/// short that a key written here expires before the checks that follow.
fn limiter(rng: &mut Rng, call: &mut Vec<Vec<u8>>) {
    call.push(integer(rng));
    call.push(integer(rng));
    call.push(match rng.below(4) {
        0 => rng.pick(&WINDOWS).as_bytes().to_vec(),
        1 => random_bytes(rng),
        _ => b"3600".to_vec(),
    });
}

/// The keys a call names: CL.THROTTLEALL's every 4 arguments after its
/// count, as far as the call goes; argv[1] for the others, and the
/// argument after each `ALERT` (a superset of the stream keys: more keys
/// checked, never fewer).
fn keys_of(call: &[Vec<u8>]) -> Vec<Vec<u8>> {
    // Any value after ALERT or LEDGER: a superset of the keys named.
    let streams = call
        .windows(2)
        .skip(2)
        .filter(|pair| {
            pair[0].eq_ignore_ascii_case(b"ALERT") || pair[0].eq_ignore_ascii_case(b"LEDGER")
        })
        .map(|pair| pair[1].clone());
    if call[0] == b"COUPON.RESERVEALL" {
        let n = integer_of(&call[1]).unwrap_or(0).clamp(0, 16) as usize;
        let keys = (0..n).filter_map(|i| call.get(2 + i).cloned());
        return keys.chain(streams).collect();
    }
    if call[0] != b"CL.THROTTLEALL" {
        return std::iter::once(call[1].clone()).chain(streams).collect();
    }
    let n = integer_of(&call[1]).unwrap_or(0).clamp(0, 16) as usize;
    (0..n)
        .map(|i| 2 + 4 * i)
        .filter_map(|at| call.get(at).cloned())
        .collect()
}

/// One random call: usually the right shape with doubtful values,
/// sometimes any number of arbitrary arguments. A write of the campaign
/// that keeps a ledger usually names it (else nearly every such call
/// would be the same ledger error).
fn random_call(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut call = shaped_call(rng);
    let names_ledgered = call[1..].iter().any(|arg| arg == b"campaign:ledger");
    let names_a_ledger = call.iter().any(|arg| arg.eq_ignore_ascii_case(b"LEDGER"));
    if names_ledgered && !names_a_ledger && !rng.chance(10) {
        call.extend([b"LEDGER".to_vec(), b"ledger".to_vec()]);
    }
    call
}

fn shaped_call(rng: &mut Rng) -> Vec<Vec<u8>> {
    let command = rng.pick(&registry::COMMANDS).name;
    // A campaign command gets a campaign half the time: its valid calls
    // need one, and 3 keys in 18 are.
    let on_campaigns = [
        "COUPON.RESERVE",
        "COUPON.CONFIRM",
        "COUPON.RELEASE",
        "COUPON.RENEW",
        "COUPON.INFO",
        "COUPON.CLAIMS",
        "COUPON.RECLAIM",
        "COUPON.ALTER",
    ];
    let key = if rng.chance(20) {
        random_bytes(rng)
    } else if on_campaigns.contains(&command) && rng.chance(2) {
        rng.pick(&CAMPAIGNS).as_bytes().to_vec()
    } else {
        rng.pick(&KEYS).as_bytes().to_vec()
    };
    let mut call = vec![command.as_bytes().to_vec(), key];
    if rng.chance(10) {
        for _ in 0..rng.below(7) {
            call.push(random_bytes(rng));
        }
        return call;
    }
    match command {
        "MON.INCRCHECK" => {
            call.push(integer(rng));
            window_and_thresholds(rng, &mut call);
            alert(rng, &mut call, &["TZ"]);
        }
        "MON.SLIDECHECK" => {
            call.push(integer(rng));
            window_and_thresholds(rng, &mut call);
            alert(rng, &mut call, &["BUCKETS"]);
        }
        "MON.DISTINCT" => {
            call.push(user(rng));
            window_and_thresholds(rng, &mut call);
            alert(rng, &mut call, &[]);
        }
        "MON.DECRCLAMP" => {
            call.push(integer(rng));
            alert(rng, &mut call, &[]);
        }
        "COUPON.CREATE" => {
            call.push(integer(rng));
            options(
                rng,
                &mut call,
                &["PERUSER", "HOLD", "LEDGER", "MAXLEN"],
                |rng, name| match name {
                    "HOLD" => rng.pick(&WINDOWS).as_bytes().to_vec(),
                    "LEDGER" => rng.pick(&LEDGERS).as_bytes().to_vec(),
                    _ => integer(rng),
                },
            );
        }
        "COUPON.RESERVE" => {
            call.push(user(rng));
            options(
                rng,
                &mut call,
                &["HOLD", "ID", "QTY", "LEDGER"],
                reserve_option,
            );
        }
        "COUPON.RESERVEALL" => {
            // The key drawn above is the count's place, as for THROTTLEALL.
            let n = 1 + rng.below(3);
            call[1] = match rng.below(8) {
                0 => integer(rng),
                _ => n.to_string().into_bytes(),
            };
            let keys = if rng.chance(10) { n - 1 } else { n };
            for _ in 0..keys {
                let key = if rng.chance(4) {
                    rng.pick(&KEYS)
                } else {
                    rng.pick(&CAMPAIGNS)
                };
                call.push(key.as_bytes().to_vec());
            }
            call.push(user(rng));
            options(
                rng,
                &mut call,
                &["HOLD", "ID", "QTY", "LEDGER"],
                reserve_option,
            );
            // QTY takes a value per key: usually that many, sometimes not.
            if let Some(at) = call.iter().position(|a| a.eq_ignore_ascii_case(b"QTY")) {
                let more = if rng.chance(6) { rng.below(3) } else { n - 1 };
                for _ in 0..more {
                    call.insert((at + 2).min(call.len()), qty(rng));
                }
            }
        }
        "COUPON.CONFIRM" => {
            call.push(integer(rng));
            options(rng, &mut call, &["QTY", "LEDGER"], |rng, name| match name {
                "QTY" => qty(rng),
                _ => ledger_option(rng, name),
            });
        }
        "COUPON.RELEASE" => {
            call.push(integer(rng));
            options(rng, &mut call, &["LEDGER"], ledger_option);
        }
        "COUPON.RENEW" => {
            call.push(integer(rng));
            options(
                rng,
                &mut call,
                &["HOLD", "LEDGER"],
                |rng, name| match name {
                    "HOLD" => rng.pick(&WINDOWS).as_bytes().to_vec(),
                    _ => ledger_option(rng, name),
                },
            );
        }
        "COUPON.RECLAIM" => options(
            rng,
            &mut call,
            &["COUNT", "LEDGER"],
            |rng, name| match name {
                "LEDGER" => ledger_option(rng, name),
                _ => integer(rng),
            },
        ),
        "COUPON.ALTER" => options(
            rng,
            &mut call,
            &["LIMIT", "PERUSER", "HOLD", "LEDGER"],
            |rng, name| match name {
                "HOLD" => rng.pick(&WINDOWS).as_bytes().to_vec(),
                "LEDGER" => ledger_option(rng, name),
                _ => integer(rng),
            },
        ),
        "COUPON.INFO" => {}
        "COUPON.CLAIMS" => options(rng, &mut call, &["FROM", "COUNT"], |rng, _| integer(rng)),
        "COUPON.APPLY" | "MON.APPLY" => {
            for _ in 0..1 + rng.below(3) {
                call.push(
                    rng.pick(&[
                        "PUT", "CONFIRM", "RELEASE", "EXPIRE", "TOTALS", "ADD", "CREATE",
                    ])
                    .as_bytes()
                    .to_vec(),
                );
                call.push(integer(rng));
            }
        }
        "CL.THROTTLE" => {
            limiter(rng, &mut call);
            if rng.chance(2) {
                call.push(integer(rng));
            }
            options(rng, &mut call, &["BLOCK"], |rng, _| integer(rng));
        }
        "CL.REFUND" => {
            limiter(rng, &mut call);
            call.push(integer(rng));
        }
        "CL.QUOTA" => {
            call.push(integer(rng));
            call.push(window(rng));
            if rng.chance(2) {
                call.push(integer(rng));
            }
            options(rng, &mut call, &["TZ"], |rng, _| zone(rng));
        }
        "CL.THROTTLEALL" => {
            // The key drawn above is the count's place: usually a small
            // count, with groups to match (or one short).
            let n = 1 + rng.below(3);
            call[1] = match rng.below(8) {
                0 => integer(rng),
                _ => n.to_string().into_bytes(),
            };
            let groups = if rng.chance(10) { n - 1 } else { n };
            for _ in 0..groups {
                call.push(rng.pick(&KEYS).as_bytes().to_vec());
                limiter(rng, &mut call);
            }
            options(rng, &mut call, &["QUANTITY", "BLOCK"], |rng, _| {
                integer(rng)
            });
        }
        "COUPON.ISSUE" => {
            call.push(user(rng));
            call.push(integer(rng));
            options(rng, &mut call, &["LEDGER"], ledger_option);
        }
        "COUPON.REVOKE" => {
            call.push(user(rng));
            options(rng, &mut call, &["LEDGER"], ledger_option);
        }
        _ => call.push(user(rng)),
    }
    call
}

fn ledger_option(rng: &mut Rng, _: &str) -> Vec<u8> {
    rng.pick(&LEDGERS).as_bytes().to_vec()
}

fn reserve_option(rng: &mut Rng, name: &str) -> Vec<u8> {
    match name {
        // Never a short hold: a claim must not expire between a call and
        // the checks after it.
        "HOLD" => rng.pick(&WINDOWS).as_bytes().to_vec(),
        "LEDGER" => ledger_option(rng, name),
        "QTY" => qty(rng),
        _ => user(rng),
    }
}

/// Units: mostly 1 to 4, sometimes any doubtful integer.
fn qty(rng: &mut Rng) -> Vec<u8> {
    match rng.below(4) {
        0 => integer(rng),
        _ => (1 + rng.below(4)).to_string().into_bytes(),
    }
}

fn describe(call: &[Vec<u8>]) -> String {
    call.iter()
        .map(|arg| {
            let text = String::from_utf8_lossy(&arg[..arg.len().min(40)]).into_owned();
            if arg.len() > 40 {
                format!("{text:?}...({} bytes)", arg.len())
            } else {
                format!("{text:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// TYPE, DUMP and PEXPIRETIME of a key in one round trip.
fn key_state(con: &mut Connection, key: &[u8]) -> Value {
    let script = "return {redis.call('TYPE', KEYS[1])['ok'], redis.call('DUMP', KEYS[1]), \
    redis.call('PEXPIRETIME', KEYS[1])}";
    redis::cmd("EVAL")
        .arg(script)
        .arg(1)
        .arg(key)
        .query(con)
        .unwrap()
}

fn is_campaign(con: &mut Connection, key: &[u8]) -> bool {
    redis::cmd("TYPE")
        .arg(key)
        .query::<String>(con)
        .is_ok_and(|t| t == "guard-cpn")
}

fn integer_of(args: &[u8]) -> Option<i64> {
    std::str::from_utf8(args).ok()?.parse().ok()
}

/// The reply's invariants, checked against the key after a success.
/// A CL.THROTTLE reply's invariants; whether it was limited.
fn check_cell(values: &[Value], max_burst: i64) -> Result<bool, String> {
    let values: Vec<i64> = values
        .iter()
        .map(|v| match v {
            Value::Int(n) => Ok(*n),
            other => Err(format!("not an integer: {other:?}")),
        })
        .collect::<Result<_, _>>()?;
    let [limited, limit, remaining, retry_after, reset_after] = values[..] else {
        return Err(format!("reply {values:?}"));
    };
    let fine = (0..=1).contains(&limited)
        && limit == max_burst + 1
        && (0..=limit).contains(&remaining)
        && retry_after >= -1
        && (limited == 1 || retry_after == -1)
        && reset_after >= 0;
    if !fine {
        return Err(format!("reply {values:?}"));
    }
    Ok(limited == 1)
}

fn check_reply(con: &mut Connection, call: &[Vec<u8>], reply: &Value) -> Result<(), String> {
    let key = &call[1];
    let stored = |con: &mut Connection| -> Option<i64> {
        redis::cmd("GET").arg(key).query(con).ok().flatten()
    };
    match (call[0].as_slice(), reply) {
        (b"MON.INCRCHECK", Value::Array(pair)) => {
            let (Value::Int(current), Value::Int(level)) = (&pair[0], &pair[1]) else {
                return Err(format!("reply {reply:?}"));
            };
            let thresholds = call.len() as i64 - 4;
            if !(0..=thresholds).contains(level) || stored(con) != Some(*current) {
                return Err(format!("reply {reply:?} but GET {:?}", stored(con)));
            }
        }
        (b"MON.DECRCLAMP", Value::Int(value)) => {
            if *value < 0 || (*value > 0 && stored(con) != Some(*value)) {
                return Err(format!("refund replied {value}, GET {:?}", stored(con)));
            }
        }
        (b"COUPON.ISSUE", Value::Int(claim)) if is_campaign(con, key) => {
            if !(*claim >= 1 || *claim == -1 || *claim == -2) {
                return Err(format!("issue on a campaign replied {claim}"));
            }
        }
        (b"COUPON.ISSUE", Value::Int(rank)) => {
            let limit = integer_of(&call[3]).ok_or("a success with a bad limit")?;
            let size: i64 = redis::cmd("SCARD")
                .arg(key)
                .query(con)
                .map_err(|e| e.to_string())?;
            let holds: bool = redis::cmd("SISMEMBER")
                .arg(key)
                .arg(&call[2])
                .query(con)
                .map_err(|e| e.to_string())?;
            let fine = match *rank {
                -1 => holds,
                -2 => size >= limit && !holds,
                n => n >= 1 && n <= limit && n == size && holds,
            };
            if !fine {
                return Err(format!(
                    "rank {rank}, limit {limit}, SCARD {size}, member {holds}"
                ));
            }
        }
        (b"COUPON.REVOKE", Value::Int(n)) if is_campaign(con, key) && *n >= 0 => {}
        (b"COUPON.REVOKE", Value::Int(0 | 1)) => {}
        (b"COUPON.CREATE", Value::Okay) => {
            if !is_campaign(con, key) {
                return Err("CREATE answered OK but made no campaign".into());
            }
        }
        (b"COUPON.RESERVE", Value::Array(pair)) => match pair[..] {
            [Value::Int(claim), Value::Int(at)] if claim >= 1 && (at > 0 || at == -1) => {}
            [Value::Int(-1 | -2), Value::Int(0)] => {}
            _ => return Err(format!("reserve replied {pair:?}")),
        },
        // -2: a hold that no longer fits after an ALTER lowered the limit.
        (b"COUPON.CONFIRM", Value::Int(1 | 0 | -2 | -3)) => {}
        (b"COUPON.RECLAIM", Value::Int(n)) if *n >= 0 => {}
        (b"COUPON.ALTER", Value::Okay) => {}
        (b"COUPON.RESERVEALL", Value::Array(items)) => {
            let n = integer_of(&call[1]).ok_or("a success with a bad numkeys")?;
            let ints: Vec<i64> = items
                .iter()
                .map(|item| match item {
                    Value::Int(i) => Ok(*i),
                    _ => Err(format!("reserveall replied {items:?}")),
                })
                .collect::<Result<_, _>>()?;
            let fine = match ints[..] {
                [-1 | -2, i] => (1..=n).contains(&i),
                _ => {
                    ints.len() as i64 == 2 * n
                        && ints
                            .chunks(2)
                            .all(|pair| pair[0] >= 1 && (pair[1] > 0 || pair[1] == -1))
                }
            };
            if !fine {
                return Err(format!("reserveall replied {ints:?}"));
            }
        }
        (b"COUPON.RELEASE", Value::Int(1 | 0)) => {}
        // A renewed hold's end (at least a second from now), 0 or -3.
        (b"COUPON.RENEW", Value::Int(reply)) => {
            if !(*reply == 0 || *reply == -3 || *reply > now_ms()) {
                return Err(format!("renew replied {reply}"));
            }
        }
        (b"COUPON.INFO", Value::Array(fields)) if fields.len() == 22 => {}
        (b"COUPON.CLAIMS", Value::Array(rows)) => {
            if rows
                .iter()
                .any(|row| !matches!(row, Value::Array(fields) if fields.len() == 6))
            {
                return Err(format!("claims replied {rows:?}"));
            }
        }
        (b"MON.SLIDECHECK", Value::Array(pair)) => {
            let (Value::Int(current), Value::Int(level)) = (&pair[0], &pair[1]) else {
                return Err(format!("reply {reply:?}"));
            };
            let increment = integer_of(&call[2]).ok_or("a success with a bad increment")?;
            let key_type: String = redis::cmd("TYPE").arg(key).query(con).unwrap();
            if *level < 0 || *level > 32 || *current < increment || key_type != "guard-win" {
                return Err(format!("reply {reply:?}, TYPE {key_type}"));
            }
        }
        (b"MON.DISTINCT", Value::Array(pair)) => {
            let (Value::Int(count), Value::Int(level)) = (&pair[0], &pair[1]) else {
                return Err(format!("reply {reply:?}"));
            };
            let members: i64 = redis::cmd("ZCARD").arg(key).query(con).unwrap();
            if *level < 0 || *level > 32 || *count != members || *count < 1 {
                return Err(format!("reply {reply:?}, ZCARD {members}"));
            }
        }
        (b"CL.THROTTLE", Value::Array(values)) => {
            let max_burst = integer_of(&call[2]).ok_or("a success with a bad max_burst")?;
            let limited = check_cell(values, max_burst)?;
            // An allowed call that took something left a TAT in ns (the
            // quantity is 1 when BLOCK or nothing stands in its place).
            let quantity = match call.get(5) {
                Some(q) if !q.eq_ignore_ascii_case(b"BLOCK") => integer_of(q),
                _ => Some(1),
            };
            let taken = quantity != Some(0);
            if !limited && taken && stored(con).is_none_or(|tat| tat <= 0) {
                return Err(format!("reply {values:?} but GET {:?}", stored(con)));
            }
        }
        (b"CL.QUOTA", Value::Array(values)) => {
            let limit = integer_of(&call[2]).ok_or("a success with a bad limit")?;
            let [Value::Int(limited), Value::Int(replied_limit), Value::Int(remaining), Value::Int(retry_after), Value::Int(reset_after)] =
                values[..]
            else {
                return Err(format!("reply {values:?}"));
            };
            let allowed = limited == 0;
            if !(0..=1).contains(&limited)
                || replied_limit != limit
                || remaining < 0
                || reset_after < 0
                || (allowed && retry_after != -1)
                || (!allowed && retry_after != -1 && retry_after != reset_after)
            {
                return Err(format!("reply {values:?}"));
            }
            // A call that took units left a count whose rest is `remaining`.
            let quantity = call.get(4).and_then(|q| integer_of(q)).unwrap_or(1);
            if allowed && quantity > 0 {
                let used = stored(con).ok_or("allowed, yet no count")?;
                if used >= 0 && remaining != limit - used {
                    return Err(format!("reply {values:?} but GET {used}"));
                }
            }
        }
        (b"CL.REFUND", Value::Array(values)) => {
            let max_burst = integer_of(&call[2]).ok_or("a success with a bad max_burst")?;
            // A refund answers as a peek does: limited only while the cell
            // stays ahead of its burst (a block, a stored time far ahead).
            let limited = check_cell(values, max_burst)?;
            let ahead_ns = stored(con).map_or(0, |tat| tat.saturating_sub(now_ns()));
            if limited && ahead_ns <= 0 {
                return Err(format!(
                    "a refund replied limited, GET {:?}: {values:?}",
                    stored(con)
                ));
            }
        }
        (b"CL.THROTTLEALL", Value::Array(values)) => {
            let [Value::Int(limited), Value::Int(retry_after), cells @ ..] = &values[..] else {
                return Err(format!("reply {values:?}"));
            };
            let keys = keys_of(call);
            if cells.len() != keys.len() || !(0..=1).contains(limited) {
                return Err(format!("{} keys, reply {values:?}", keys.len()));
            }
            if *limited == 0 && *retry_after != -1 {
                return Err(format!("allowed with a retry: {values:?}"));
            }
            for (i, cell) in cells.iter().enumerate() {
                let Value::Array(cell) = cell else {
                    return Err(format!("reply {values:?}"));
                };
                let max_burst = integer_of(&call[3 + 4 * i]).ok_or("a bad max_burst")?;
                let refused = check_cell(cell, max_burst)?;
                if refused && *limited == 0 {
                    return Err(format!("allowed, yet limiter {i} refused: {values:?}"));
                }
            }
        }
        _ => return Err(format!("unexpected reply {reply:?}")),
    }
    Ok(())
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_calls_never_crash_and_errors_change_nothing() {
    let calls = env_or("GUARD_FUZZ_CALLS", 20_000);
    let seed = env_or("GUARD_FUZZ_SEED", 0x6a09_e667_f3bc_c908);
    let mut rng = Rng(seed | 1);
    let mut server = Server::with_args(&["--appendonly", "no"]);
    let mut con = server.con();
    let (mut errors, mut successes) = (0u64, 0u64);
    for n in 0..calls {
        if n % 2_000 == 0 {
            fixture(&mut con);
        }
        let call = random_call(&mut rng);
        let fail = |why: String| -> ! {
            panic!(
                "fuzz failure: seed {seed:#x}, call #{n}: {}\n{why}",
                describe(&call)
            )
        };
        let keys = keys_of(&call);
        let states = |con: &mut Connection| -> Vec<Value> {
            keys.iter().map(|key| key_state(con, key)).collect()
        };
        let before = states(&mut con);
        let mut command = redis::cmd(std::str::from_utf8(&call[0]).unwrap());
        for arg in &call[1..] {
            command.arg(arg.as_slice());
        }
        let reply = command.query::<Value>(&mut con);
        match redis::cmd("PING").query::<String>(&mut con) {
            Ok(pong) if pong == "PONG" && server.alive() => {}
            other => fail(format!("server gone: {other:?}")),
        }
        match reply {
            Err(error) => {
                errors += 1;
                let text = error.to_string();
                // Only the codes the module and Redis's arity check use:
                // any other (a crash report, OOM, a client-side parse
                // failure) is a finding.
                if !matches!(error.code(), Some("ERR" | "WRONGTYPE" | "BUSYKEY")) {
                    fail(format!("not an ERR, WRONGTYPE or BUSYKEY error: {text}"));
                }
                // A caught panic or a refused effect is an ERR too, and
                // always the module's bug.
                if is_internal_error(&text) {
                    fail(format!("the module's own failure: {text}"));
                }
                let after = states(&mut con);
                if before != after {
                    fail(format!(
                        "error {text} changed the key: {before:?} -> {after:?}"
                    ));
                }
            }
            Ok(reply) => {
                successes += 1;
                check_reply(&mut con, &call, &reply).unwrap_or_else(|why| fail(why));
            }
        }
    }
    println!(
        "fuzz: seed {seed:#x}, {calls} calls, {successes} successes, {errors} errors, 0 crashes"
    );
    assert!(
        successes > calls / 20 && errors > calls / 20,
        "the generator must reach both paths"
    );
}
