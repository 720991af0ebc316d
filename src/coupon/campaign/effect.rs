//! What changes a campaign, and the one wire format those changes travel
//! in: the arguments of `COUPON.APPLY key op [op ...]`, which the primary
//! propagates, a rewritten AOF holds and Valkey's atomic slot migration
//! replays. Every op carries claim numbers and absolute times, never "now".
//!
//! Ops: `CREATE limit peruser hold`, `LEDGER stream maxlen|0`, `PUT claim
//! user expires_at_ms|-1 request-id|""` (1 unit), `PUTUNITS` (PUT's, then
//! its units), `CONFIRM claim` (all its units), `CONFIRMUNITS claim units`
//! (those kept), `RELEASE claim`, `EXPIRE claim`, `RENEW claim
//! expires_at_ms`, `ALTER limit peruser hold`, `TOTALS claims_made
//! released expired`. The short forms are what 0.4 wrote: its AOFs and
//! replication streams still apply.

use super::settings::{Ledger, Settings};
use crate::integer;
use crate::redis::{KeptWord, Word, Words};
use crate::replicated::wire::{at_least, UNKNOWN_OP};
use crate::replicated::WireError;

/// A change to a campaign: the only way one changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A new, empty campaign (on a missing key).
    Create(Settings),
    /// The new campaign's ledger (right after its CREATE).
    Ledger(Ledger),
    /// The settings, changed by COUPON.ALTER.
    Alter(Settings),
    /// A new claim of `units`: held until `expires_at_ms`, or confirmed
    /// (`None`).
    Put {
        claim: u64,
        user: Vec<u8>,
        expires_at_ms: Option<i64>,
        request_id: Option<Vec<u8>>,
        units: u64,
    },
    /// A held claim becomes confirmed with `units` of its units (`None`:
    /// all); the others are free.
    Confirm { claim: u64, units: Option<u64> },
    /// A live claim is given back; its place is free.
    Release { claim: u64 },
    /// An expired hold's memory is reclaimed.
    Expire { claim: u64 },
    /// A held claim now ends at `expires_at_ms` (COUPON.RENEW).
    Renew { claim: u64, expires_at_ms: i64 },
    /// The running totals, as a rewritten AOF restores them after its claims.
    Totals(Totals),
}

/// Every claim ever made is stored (live, or expired and not reclaimed
/// yet), released, or expired and reclaimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    pub claims_made: u64,
    pub released: u64,
    pub expired: u64,
}

/// The one mapping from an effect to its op: the op's name, then its
/// arguments.
#[inline]
pub fn words<'a>(effect: &'a Effect, words: &mut Words<'a>) {
    static CREATE: KeptWord = KeptWord::new(c"CREATE");
    static LEDGER: KeptWord = KeptWord::new(c"LEDGER");
    static ALTER: KeptWord = KeptWord::new(c"ALTER");
    static PUT: KeptWord = KeptWord::new(c"PUT");
    static PUT_UNITS: KeptWord = KeptWord::new(c"PUTUNITS");
    static CONFIRM: KeptWord = KeptWord::new(c"CONFIRM");
    static CONFIRM_UNITS: KeptWord = KeptWord::new(c"CONFIRMUNITS");
    static RELEASE: KeptWord = KeptWord::new(c"RELEASE");
    static EXPIRE: KeptWord = KeptWord::new(c"EXPIRE");
    static RENEW: KeptWord = KeptWord::new(c"RENEW");
    static TOTALS: KeptWord = KeptWord::new(c"TOTALS");
    match effect {
        Effect::Create(settings) => words.extend(&[
            Word::Kept(&CREATE),
            Word::Number(settings.limit),
            Word::Number(settings.per_user),
            Word::Number(settings.hold_s),
        ]),
        Effect::Ledger(ledger) => words.extend(&[
            Word::Kept(&LEDGER),
            Word::Bytes(&ledger.stream),
            Word::Number(ledger.maxlen.unwrap_or(0)),
        ]),
        Effect::Alter(settings) => words.extend(&[
            Word::Kept(&ALTER),
            Word::Number(settings.limit),
            Word::Number(settings.per_user),
            Word::Number(settings.hold_s),
        ]),
        Effect::Put {
            claim,
            user,
            expires_at_ms,
            request_id,
            units,
        } => {
            words.extend(&[
                Word::Kept(if *units == 1 { &PUT } else { &PUT_UNITS }),
                Word::Unsigned(*claim),
                Word::Bytes(user),
                Word::Number(expires_at_ms.unwrap_or(-1)),
                Word::Bytes(request_id.as_deref().unwrap_or_default()),
            ]);
            if *units != 1 {
                words.extend(&[Word::Unsigned(*units)]);
            }
        }
        Effect::Confirm { claim, units: None } => {
            words.extend(&[Word::Kept(&CONFIRM), Word::Unsigned(*claim)])
        }
        Effect::Confirm {
            claim,
            units: Some(units),
        } => words.extend(&[
            Word::Kept(&CONFIRM_UNITS),
            Word::Unsigned(*claim),
            Word::Unsigned(*units),
        ]),
        Effect::Release { claim } => words.extend(&[Word::Kept(&RELEASE), Word::Unsigned(*claim)]),
        Effect::Expire { claim } => words.extend(&[Word::Kept(&EXPIRE), Word::Unsigned(*claim)]),
        Effect::Renew {
            claim,
            expires_at_ms,
        } => words.extend(&[
            Word::Kept(&RENEW),
            Word::Unsigned(*claim),
            Word::Number(*expires_at_ms),
        ]),
        Effect::Totals(totals) => words.extend(&[
            Word::Kept(&TOTALS),
            Word::Unsigned(totals.claims_made),
            Word::Unsigned(totals.released),
            Word::Unsigned(totals.expired),
        ]),
    }
}

/// A count: a non-negative 64-bit signed integer.
fn count(bytes: &[u8]) -> Result<u64, WireError> {
    at_least(bytes, 0, "a count is not a non-negative integer").map(|n| n as u64)
}

/// A claim number: 1 to 2^63 - 1.
fn claim(bytes: &[u8]) -> Result<u64, WireError> {
    at_least(bytes, 1, "a claim number is not a positive integer").map(|n| n as u64)
}

/// A claim's units: 1 to 2^63 - 1.
fn units(bytes: &[u8]) -> Result<u64, WireError> {
    at_least(bytes, 1, "units are not a positive integer").map(|n| n as u64)
}

/// PUT's arguments, with `units`.
fn put<A: AsRef<[u8]>>(
    [number, user, expires, id]: [&A; 4],
    units: u64,
) -> Result<Effect, WireError> {
    let expires_at_ms = match integer::parse(expires.as_ref()) {
        Some(-1) => None,
        Some(at) if at >= 0 => Some(at),
        _ => return Err("an expiry is not -1 or a time"),
    };
    if user.as_ref().is_empty() {
        return Err("a user is empty");
    }
    Ok(Effect::Put {
        claim: claim(number.as_ref())?,
        user: user.as_ref().to_vec(),
        expires_at_ms,
        request_id: Some(id.as_ref().to_vec()).filter(|id| !id.is_empty()),
        units,
    })
}

fn setting(bytes: &[u8]) -> Result<i64, WireError> {
    integer::parse(bytes).ok_or("a setting is not an integer")
}

fn settings<A: AsRef<[u8]>>(limit: &A, per_user: &A, hold_s: &A) -> Result<Settings, WireError> {
    let settings = Settings {
        limit: setting(limit.as_ref())?,
        per_user: setting(per_user.as_ref())?,
        hold_s: setting(hold_s.as_ref())?,
    };
    settings.check()?;
    Ok(settings)
}

/// The op named `op` from the start of `args`, and what follows it; the
/// inverse of [`words`]. Only the shape is judged here (numbers, arity,
/// non-empty users); whether an effect fits the campaign is the store's.
pub fn read<'a, A: AsRef<[u8]>>(op: &[u8], args: &'a [A]) -> Result<(Effect, &'a [A]), WireError> {
    let read = match (op, args) {
        (b"CREATE", [limit, per_user, hold_s, tail @ ..]) => {
            (Effect::Create(settings(limit, per_user, hold_s)?), tail)
        }
        (b"ALTER", [limit, per_user, hold_s, tail @ ..]) => {
            (Effect::Alter(settings(limit, per_user, hold_s)?), tail)
        }
        (b"LEDGER", [stream, maxlen, tail @ ..]) => {
            let ledger = Ledger {
                stream: stream.as_ref().into(),
                maxlen: Some(at_least(maxlen.as_ref(), 0, "a MAXLEN is not a count")?)
                    .filter(|&n| n > 0),
            };
            ledger.check()?;
            (Effect::Ledger(ledger), tail)
        }
        (b"PUT", [number, user, expires, id, tail @ ..]) => {
            (put([number, user, expires, id], 1)?, tail)
        }
        (b"PUTUNITS", [number, user, expires, id, n, tail @ ..]) => {
            (put([number, user, expires, id], units(n.as_ref())?)?, tail)
        }
        (b"CONFIRM", [number, tail @ ..]) => (
            Effect::Confirm {
                claim: claim(number.as_ref())?,
                units: None,
            },
            tail,
        ),
        (b"CONFIRMUNITS", [number, n, tail @ ..]) => (
            Effect::Confirm {
                claim: claim(number.as_ref())?,
                units: Some(units(n.as_ref())?),
            },
            tail,
        ),
        (b"RELEASE", [number, tail @ ..]) => (
            Effect::Release {
                claim: claim(number.as_ref())?,
            },
            tail,
        ),
        (b"EXPIRE", [number, tail @ ..]) => (
            Effect::Expire {
                claim: claim(number.as_ref())?,
            },
            tail,
        ),
        (b"RENEW", [number, expires, tail @ ..]) => (
            Effect::Renew {
                claim: claim(number.as_ref())?,
                expires_at_ms: at_least(expires.as_ref(), 0, "an expiry is not a time")?,
            },
            tail,
        ),
        (b"TOTALS", [made, released, expired, tail @ ..]) => {
            let totals = Totals {
                claims_made: count(made.as_ref())?,
                released: count(released.as_ref())?,
                expired: count(expired.as_ref())?,
            };
            (Effect::Totals(totals), tail)
        }
        _ => return Err(UNKNOWN_OP),
    };
    Ok(read)
}
