//! The one registry of the module's commands: every command it
//! registers, once. What each "all commands" test (ACL, registration,
//! the docs, the fuzzer, the soak) reads, so a new command is in all of
//! them or in none.

/// How a command uses its key, as its Redis twin does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Writer,
    Reader,
    /// COUPON.APPLY: only the replication link, the AOF and a slot import.
    Replay,
}

pub struct Spec {
    pub name: &'static str,
    pub access: Access,
    pub arity: i64,
    /// As COMMAND INFO lists them (without `module`).
    pub flags: &'static [&'static str],
    /// A valid call's arguments after the name; the key first, hash-tagged
    /// where a family's keys go together.
    pub example: &'static [&'static str],
    /// Where `example`'s keys are (indexes into it).
    pub keys_at: &'static [usize],
    /// COMMAND INFO's first key, last key and step: 0 0 0 where no range
    /// can say where the keys are (`movablekeys`, as EVAL).
    pub range: [i64; 3],
}

/// One key, the first argument.
const ONE: &[usize] = &[0];
const FIRST_KEY: [i64; 3] = [1, 1, 1];

const WRITE: &[&str] = &["write", "denyoom", "fast"];
/// A writer that may name a second key after a keyword (`ALERT stream`,
/// `LEDGER stream`): no range can say where, so `movablekeys`, as for EVAL.
const WRITE_ALERTING: &[&str] = &["write", "denyoom", "fast", "movablekeys"];
/// The same, for a writer that frees places (no `denyoom`).
const FREEING_MOVABLE: &[&str] = &["write", "fast", "movablekeys"];

pub const COMMANDS: [Spec; 22] = [
    Spec {
        name: "MON.INCRCHECK",
        access: Access::Writer,
        arity: -5,
        flags: WRITE_ALERTING,
        example: &[
            "{cust:42}:orders",
            "1",
            "60",
            "3",
            "5",
            "ALERT",
            "{cust:42}:alerts",
        ],
        keys_at: &[0, 6],
        range: FIRST_KEY,
    },
    Spec {
        name: "MON.DECRCLAMP",
        access: Access::Writer,
        arity: -3,
        flags: WRITE_ALERTING,
        example: &[
            "{cust:42}:amount",
            "5",
            "ALERT",
            "{cust:42}:alerts",
            "MAXLEN",
            "1000",
        ],
        keys_at: &[0, 3],
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.ISSUE",
        access: Access::Writer,
        arity: -4,
        flags: WRITE_ALERTING,
        example: &["drop:1", "alice", "100"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.REVOKE",
        access: Access::Writer,
        arity: -3,
        flags: FREEING_MOVABLE,
        example: &["drop:1", "alice"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "CL.THROTTLE",
        access: Access::Writer,
        arity: -5,
        flags: WRITE,
        example: &["{user:7}:api", "15", "30", "60"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "CL.QUOTA",
        access: Access::Writer,
        arity: -4,
        flags: WRITE,
        example: &["{user:7}:orders", "5", "day", "1", "TZ", "Asia/Seoul"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.CREATE",
        access: Access::Writer,
        arity: -3,
        flags: WRITE_ALERTING,
        example: &["sale:2", "100", "PERUSER", "2", "LEDGER", "sale:2:ledger"],
        keys_at: &[0, 5],
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.RESERVE",
        access: Access::Writer,
        arity: -3,
        flags: WRITE_ALERTING,
        example: &["sale:1", "alice", "HOLD", "60", "ID", "r"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.RENEW",
        access: Access::Writer,
        arity: -3,
        flags: FREEING_MOVABLE,
        example: &["sale:1", "1", "HOLD", "30"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.CONFIRM",
        access: Access::Writer,
        arity: -3,
        flags: FREEING_MOVABLE,
        example: &["sale:1", "1"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.RELEASE",
        access: Access::Writer,
        arity: -3,
        flags: FREEING_MOVABLE,
        example: &["sale:1", "1"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.INFO",
        access: Access::Reader,
        arity: 2,
        flags: &["readonly", "fast"],
        example: &["sale:1"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.CLAIMS",
        access: Access::Reader,
        arity: -2,
        flags: &["readonly"],
        example: &["sale:1", "FROM", "1", "COUNT", "5"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.RECLAIM",
        access: Access::Writer,
        arity: -2,
        flags: FREEING_MOVABLE,
        example: &["sale:1", "COUNT", "10"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.ALTER",
        access: Access::Writer,
        arity: -4,
        flags: WRITE_ALERTING,
        example: &["sale:1", "LIMIT", "50", "HOLD", "600"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "COUPON.RESERVEALL",
        access: Access::Writer,
        arity: -4,
        flags: WRITE_ALERTING,
        example: &["1", "sale:1", "bob", "HOLD", "60"],
        keys_at: &[1],
        range: [0, 0, 0],
    },
    Spec {
        name: "COUPON.APPLY",
        access: Access::Replay,
        arity: -4,
        flags: &["write"],
        example: &["sale:1", "CONFIRM", "1"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "CL.THROTTLEALL",
        access: Access::Writer,
        arity: -6,
        flags: &["write", "denyoom", "fast", "movablekeys"],
        example: &[
            "2",
            "{user:7}:second",
            "9",
            "10",
            "1",
            "{user:7}:day",
            "999",
            "1000",
            "86400",
            "QUANTITY",
            "1",
        ],
        keys_at: &[1, 5],
        range: [0, 0, 0],
    },
    Spec {
        name: "MON.SLIDECHECK",
        access: Access::Writer,
        arity: -5,
        flags: WRITE_ALERTING,
        example: &[
            "{cust:42}:orders-1m",
            "1",
            "60",
            "3",
            "5",
            "BUCKETS",
            "60",
            "alert",
            "{cust:42}:alerts",
        ],
        keys_at: &[0, 8],
        range: FIRST_KEY,
    },
    Spec {
        name: "MON.APPLY",
        access: Access::Replay,
        arity: -4,
        flags: &["write"],
        example: &["{cust:42}:orders-1m", "ADD", "1", "1"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
    Spec {
        name: "MON.DISTINCT",
        access: Access::Writer,
        arity: -5,
        flags: WRITE_ALERTING,
        example: &[
            "{cust:42}:cards-1d",
            "card-7",
            "86400",
            "5",
            "ALERT",
            "{cust:42}:alerts",
        ],
        keys_at: &[0, 5],
        range: FIRST_KEY,
    },
    Spec {
        name: "CL.REFUND",
        access: Access::Writer,
        arity: 6,
        // A refund never needs memory: no `denyoom`.
        flags: &["write", "fast"],
        example: &["{user:7}:api", "15", "30", "60", "2"],
        keys_at: ONE,
        range: FIRST_KEY,
    },
];

/// The campaign the examples work on (`sale:1`).
pub const EXAMPLE_CAMPAIGN: &str = "sale:1";

/// The commands a client may call with this access.
pub fn with_access(access: Access) -> impl Iterator<Item = &'static Spec> {
    COMMANDS.iter().filter(move |spec| spec.access == access)
}
