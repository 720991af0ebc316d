//! What Redis knows about the commands: module name, arity, flags, key
//! specs (COMMAND GETKEYS, cluster routing, ACL) and the INFO section.

mod common;

use common::metadata::{docs_of, flatten, text};
use common::*;
use redis::Value;

#[test]
fn the_module_is_called_guard() {
    let server = Server::start();
    let mut con = server.con();
    let list: Vec<Vec<Value>> = redis::cmd("MODULE").arg("LIST").query(&mut con).unwrap();
    assert!(
        list.iter()
            .any(|fields| fields.len() > 1 && text(&fields[1]) == "guard"),
        "{list:?}"
    );
}

#[test]
fn command_getkeys_finds_the_one_key() {
    let server = Server::start();
    let mut con = server.con();
    let calls = registry::COMMANDS
        .iter()
        .map(|spec| {
            let keys: Vec<&str> = spec.keys_at.iter().map(|&at| spec.example[at]).collect();
            (
                [spec.name].iter().chain(spec.example).copied().collect(),
                keys,
            )
        })
        .chain([
            (
                vec!["CL.THROTTLE", "{user:7}:api", "15", "30", "60", "2"],
                vec!["{user:7}:api"],
            ),
            // No ALERT, no second key.
            (vec!["MON.INCRCHECK", "k", "1", "60", "3"], vec!["k"]),
            // QTY's values are values, even spelled as a number after
            // a LEDGER keyword: the ledger is the value of the option.
            (
                vec![
                    "COUPON.RESERVEALL",
                    "2",
                    "{s}a",
                    "{s}b",
                    "LEDGER",
                    "QTY",
                    "2",
                    "3",
                    "LEDGER",
                    "{s}log",
                ],
                vec!["{s}a", "{s}b", "{s}log"],
            ),
            (
                vec![
                    "COUPON.CONFIRM",
                    "{s}a",
                    "7",
                    "QTY",
                    "2",
                    "LEDGER",
                    "{s}log",
                ],
                vec!["{s}a", "{s}log"],
            ),
            (vec!["MON.DECRCLAMP", "k", "5"], vec!["k"]),
            // A member spelled ALERT comes before the search starts; a
            // stream may be called ALERT; the keyword in any case.
            (
                vec!["MON.DISTINCT", "k", "ALERT", "60", "3", "alert", "s"],
                vec!["k", "s"],
            ),
            (
                vec![
                    "MON.INCRCHECK",
                    "k",
                    "1",
                    "60",
                    "3",
                    "MAXLEN",
                    "5",
                    "ALERT",
                    "ALERT",
                ],
                vec!["k", "ALERT"],
            ),
        ]);
    for (args, expected) in calls {
        let keys: Vec<String> = redis::cmd("COMMAND")
            .arg("GETKEYS")
            .arg(&args)
            .query(&mut con)
            .unwrap();
        assert_eq!(keys, expected, "{args:?}");
    }
}

#[test]
fn the_registry_of_the_tests_lists_every_command_the_module_has() {
    let server = Server::start();
    let mut registered: Vec<String> = redis::cmd("COMMAND")
        .arg("LIST")
        .arg("FILTERBY")
        .arg("MODULE")
        .arg("guard")
        .query(&mut server.con())
        .unwrap();
    registered.sort();
    let mut listed: Vec<String> = registry::COMMANDS
        .iter()
        .map(|spec| spec.name.to_lowercase())
        .collect();
    listed.sort();
    assert_eq!(registered, listed);
}

#[test]
fn command_info_has_arity_flags_and_key_positions() {
    let server = Server::start();
    let mut con = server.con();
    for spec in &registry::COMMANDS {
        let (name, arity, flags) = (spec.name.to_lowercase(), spec.arity, spec.flags);
        let name = name.as_str();
        let info: Vec<Vec<Value>> = redis::cmd("COMMAND")
            .arg("INFO")
            .arg(name)
            .query(&mut con)
            .unwrap();
        let info = &info[0];
        assert_eq!(text(&info[0]), name);
        assert_eq!(info[1], Value::Int(arity), "{name} arity");
        let Value::Array(got_flags) = &info[2] else {
            panic!("{info:?}")
        };
        let mut got: Vec<String> = got_flags
            .iter()
            .map(text)
            .filter(|f| f != "module")
            .collect();
        got.sort();
        let mut want: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        want.sort();
        assert_eq!(got, want, "{name} flags");
        assert_eq!(
            &info[3..6],
            &spec.range.map(Value::Int),
            "{name} key positions"
        );
    }
}

#[test]
fn command_docs_describe_every_argument() {
    let server = Server::start();
    let mut con = server.con();
    let expected = [
        (
            "mon.incrcheck",
            &[
                "key",
                "increment",
                "window",
                "threshold",
                "zone",
                "alert",
                "stream",
                "maxlen",
            ][..],
        ),
        (
            "mon.decrclamp",
            &["key", "amount", "alert", "stream", "maxlen"][..],
        ),
        ("coupon.issue", &["key", "user", "limit", "stream"][..]),
        ("coupon.revoke", &["key", "user", "stream"][..]),
        (
            "cl.throttle",
            &["key", "max_burst", "count", "period", "quantity", "block"][..],
        ),
        (
            "cl.refund",
            &["key", "max_burst", "count", "period", "quantity"][..],
        ),
        (
            "cl.quota",
            &["key", "limit", "window", "quantity", "zone"][..],
        ),
        (
            "coupon.create",
            &[
                "key", "limit", "peruser", "hold", "ledger", "stream", "maxlen",
            ][..],
        ),
        (
            "coupon.reserve",
            &["key", "user", "hold", "id", "qty", "stream"][..],
        ),
        ("coupon.confirm", &["key", "claim", "qty", "stream"][..]),
        ("coupon.release", &["key", "claim", "stream"][..]),
        ("coupon.renew", &["key", "claim", "hold", "stream"][..]),
        ("coupon.reclaim", &["key", "count", "stream"][..]),
        (
            "coupon.alter",
            &["key", "limit", "peruser", "hold", "stream"][..],
        ),
        (
            "coupon.reserveall",
            &["numkeys", "key", "user", "hold", "id", "qty", "stream"][..],
        ),
        ("coupon.info", &["key"][..]),
        ("coupon.claims", &["key", "from", "count"][..]),
        ("coupon.apply", &["key", "op"][..]),
        (
            "mon.slidecheck",
            &[
                "key",
                "increment",
                "window",
                "threshold",
                "buckets",
                "alert",
                "stream",
                "maxlen",
            ][..],
        ),
        ("mon.apply", &["key", "op"][..]),
        (
            "mon.distinct",
            &[
                "key",
                "member",
                "window",
                "threshold",
                "alert",
                "stream",
                "maxlen",
            ][..],
        ),
        (
            "cl.throttleall",
            &[
                "numkeys",
                "limiter",
                "key",
                "max_burst",
                "count",
                "period",
                "quantity",
                "block",
            ][..],
        ),
    ];
    for (name, args) in expected {
        let docs: Value = redis::cmd("COMMAND")
            .arg("DOCS")
            .arg(name)
            .query(&mut con)
            .unwrap();
        let rendered = format!("{docs:?}");
        let docs = flatten(&docs);
        for field in ["summary", "since", "complexity", "arguments"] {
            assert!(
                docs.contains(&field.to_string()),
                "{name} docs lack {field}: {rendered}"
            );
        }
        let names: Vec<&String> = docs
            .windows(2)
            .filter(|w| w[0] == "name")
            .map(|w| &w[1])
            .collect();
        assert_eq!(names, args, "{name} arguments");
    }
    let docs = docs_of(&mut con, "mon.incrcheck");
    assert!(
        docs.windows(2).any(|w| w == ["flags", "multiple"]),
        "threshold is repeatable: {docs:?}"
    );
    let docs = docs_of(&mut con, "cl.throttle");
    assert!(
        docs.windows(2).any(|w| w == ["flags", "optional"]),
        "quantity may be left out: {docs:?}"
    );
    let docs = docs_of(&mut con, "coupon.reserve");
    for token in ["HOLD", "ID", "QTY"] {
        assert!(
            docs.windows(2).any(|w| w == ["token", token]),
            "{token}: {docs:?}"
        );
    }
    // The alert's stream is a key of its own key spec, after ALERT.
    for name in [
        "mon.incrcheck",
        "mon.slidecheck",
        "mon.distinct",
        "mon.decrclamp",
    ] {
        let docs = docs_of(&mut con, name);
        let stream = docs
            .windows(2)
            .position(|w| w == ["name", "stream"])
            .unwrap_or_else(|| panic!("{name}: {docs:?}"));
        // Its fields, up to the next argument's name.
        let end = docs[stream + 2..]
            .iter()
            .position(|field| field == "name")
            .map_or(docs.len(), |at| stream + 2 + at);
        let described = &docs[stream..end];
        for pair in [["key_spec_index", "1"], ["token", "ALERT"], ["type", "key"]] {
            assert!(
                described.windows(2).any(|w| w == pair),
                "{name}: {pair:?} in {described:?}"
            );
        }
    }
}

#[test]
fn info_guard_lists_every_counter() {
    let server = Server::start();
    let mut con = server.con();
    let fields = [
        "mon_incrcheck_calls",
        "mon_crossings",
        "mon_decrclamp_calls",
        "mon_clamps",
        "mon_clamped_amount",
        "mon_slidecheck_calls",
        "mon_slide_crossings",
        "mon_distinct_calls",
        "mon_distinct_crossings",
        "mon_alerts_written",
        "coupon_issue_calls",
        "coupon_issued",
        "coupon_duplicates",
        "coupon_soldout",
        "coupon_revoked",
        "coupon_reserved",
        "coupon_confirmed",
        "coupon_released",
        "coupon_expired",
        "coupon_renewed",
        "throttle_calls",
        "throttle_allowed",
        "throttle_limited",
        "throttle_blocked",
        "throttle_refunds",
        "throttle_all_calls",
        "throttle_all_allowed",
        "throttle_all_limited",
        "internal_errors",
    ];
    for section in ["guard", "modules", "everything"] {
        let info: String = redis::cmd("INFO").arg(section).query(&mut con).unwrap();
        for field in fields {
            assert!(
                info.contains(&format!("\nguard_{field}:0")),
                "INFO {section} lacks guard_{field}: {info}"
            );
        }
    }
    incrcheck(&mut con, "c", 1, 10, &[1]);
    assert_eq!(info_field(&mut con, "guard_mon_incrcheck_calls"), 1);
    assert_eq!(info_field(&mut con, "guard_mon_crossings"), 1);
}
