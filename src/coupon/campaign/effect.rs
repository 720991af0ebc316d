//! What changes a campaign, and the one wire format those changes travel
//! in: the arguments of `COUPON.APPLY key op [op ...]`, which the primary
//! propagates, a rewritten AOF holds and Valkey's atomic slot migration
//! replays. Every op carries claim numbers and absolute times, never "now".
//!
//! Ops: `CREATE limit peruser hold`, `PUT claim user expires_at_ms|-1
//! request-id|""`, `CONFIRM claim`, `RELEASE claim`, `EXPIRE claim`,
//! `TOTALS claims_made released expired`.

use std::ffi::CStr;

use crate::integer;
use crate::redis::{KeptWord, Word, Words};

/// The command that carries effects: the primary propagates it, a
/// rewritten AOF holds it.
pub const APPLY_COMMAND: &CStr = c"COUPON.APPLY";

/// What COUPON.CREATE fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Most live claims at once.
    pub limit: i64,
    /// Most live claims of one user.
    pub per_user: i64,
    /// RESERVE's default hold, seconds.
    pub hold_s: i64,
}

impl Settings {
    /// Could COUPON.CREATE have made these, whatever its clock said? Each at
    /// least 1, and the hold as milliseconds within 64 bits.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.limit < 1 || self.per_user < 1 || self.hold_s < 1 {
            return Err("a setting is below 1");
        }
        if self.hold_s.checked_mul(1000).is_none() {
            return Err("the hold does not fit in milliseconds");
        }
        Ok(())
    }
}

/// A change to a campaign: the only way one changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A new, empty campaign (on a missing key).
    Create(Settings),
    /// A new claim: held until `expires_at_ms`, or confirmed (`None`).
    Put {
        claim: u64,
        user: Vec<u8>,
        expires_at_ms: Option<i64>,
        request_id: Option<Vec<u8>>,
    },
    /// A held claim becomes confirmed.
    Confirm { claim: u64 },
    /// A live claim is given back; its place is free.
    Release { claim: u64 },
    /// An expired hold's memory is reclaimed.
    Expire { claim: u64 },
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

/// Why a list of ops could not be read.
pub type WireError = &'static str;

/// The one mapping from effects to ops: each op's name, then its
/// arguments.
#[inline]
pub fn words(effects: &[Effect]) -> Words<'_> {
    static CREATE: KeptWord = KeptWord::new(c"CREATE");
    static PUT: KeptWord = KeptWord::new(c"PUT");
    static CONFIRM: KeptWord = KeptWord::new(c"CONFIRM");
    static RELEASE: KeptWord = KeptWord::new(c"RELEASE");
    static EXPIRE: KeptWord = KeptWord::new(c"EXPIRE");
    static TOTALS: KeptWord = KeptWord::new(c"TOTALS");
    let mut words = Words::new();
    for effect in effects {
        match effect {
            Effect::Create(settings) => words.extend(&[
                Word::Kept(&CREATE),
                Word::Number(settings.limit),
                Word::Number(settings.per_user),
                Word::Number(settings.hold_s),
            ]),
            Effect::Put {
                claim,
                user,
                expires_at_ms,
                request_id,
            } => words.extend(&[
                Word::Kept(&PUT),
                Word::Unsigned(*claim),
                Word::Bytes(user),
                Word::Number(expires_at_ms.unwrap_or(-1)),
                Word::Bytes(request_id.as_deref().unwrap_or_default()),
            ]),
            Effect::Confirm { claim } => {
                words.extend(&[Word::Kept(&CONFIRM), Word::Unsigned(*claim)])
            }
            Effect::Release { claim } => {
                words.extend(&[Word::Kept(&RELEASE), Word::Unsigned(*claim)])
            }
            Effect::Expire { claim } => {
                words.extend(&[Word::Kept(&EXPIRE), Word::Unsigned(*claim)])
            }
            Effect::Totals(totals) => words.extend(&[
                Word::Kept(&TOTALS),
                Word::Unsigned(totals.claims_made),
                Word::Unsigned(totals.released),
                Word::Unsigned(totals.expired),
            ]),
        }
    }
    words
}

/// The arguments after the key that carry `effects`.
pub fn to_args(effects: &[Effect]) -> Vec<Vec<u8>> {
    words(effects).to_args()
}

/// A count: a non-negative 64-bit signed integer.
fn count(bytes: &[u8]) -> Result<u64, WireError> {
    integer::parse(bytes)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or("a count is not a non-negative integer")
}

/// A claim number: 1 to 2^63 - 1.
fn claim(bytes: &[u8]) -> Result<u64, WireError> {
    count(bytes)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or("a claim number is not a positive integer")
}

fn setting(bytes: &[u8]) -> Result<i64, WireError> {
    integer::parse(bytes).ok_or("a setting is not an integer")
}

/// The effects `args` carry; the inverse of [`to_args`]. Only the shape
/// is judged here (numbers, arity, non-empty users); whether an effect
/// fits the campaign is the store's to judge.
pub fn from_args<A: AsRef<[u8]>>(args: &[A]) -> Result<Vec<Effect>, WireError> {
    let mut effects = Vec::new();
    let mut rest = args;
    while let [op, tail @ ..] = rest {
        let (effect, tail) = match (op.as_ref(), tail) {
            (b"CREATE", [limit, per_user, hold_s, tail @ ..]) => {
                let settings = Settings {
                    limit: setting(limit.as_ref())?,
                    per_user: setting(per_user.as_ref())?,
                    hold_s: setting(hold_s.as_ref())?,
                };
                settings.check()?;
                (Effect::Create(settings), tail)
            }
            (b"PUT", [number, user, expires, id, tail @ ..]) => {
                let expires_at_ms = match integer::parse(expires.as_ref()) {
                    Some(-1) => None,
                    Some(at) if at >= 0 => Some(at),
                    _ => return Err("an expiry is not -1 or a time"),
                };
                if user.as_ref().is_empty() {
                    return Err("a user is empty");
                }
                let put = Effect::Put {
                    claim: claim(number.as_ref())?,
                    user: user.as_ref().to_vec(),
                    expires_at_ms,
                    request_id: Some(id.as_ref().to_vec()).filter(|id| !id.is_empty()),
                };
                (put, tail)
            }
            (b"CONFIRM", [number, tail @ ..]) => (
                Effect::Confirm {
                    claim: claim(number.as_ref())?,
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
            (b"TOTALS", [made, released, expired, tail @ ..]) => {
                let totals = Totals {
                    claims_made: count(made.as_ref())?,
                    released: count(released.as_ref())?,
                    expired: count(expired.as_ref())?,
                };
                (Effect::Totals(totals), tail)
            }
            _ => return Err("an unknown op, or an op without all its arguments"),
        };
        effects.push(effect);
        rest = tail;
    }
    Ok(effects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_round_trip_through_their_arguments() {
        let effects = vec![
            Effect::Create(Settings {
                limit: 5,
                per_user: 2,
                hold_s: 9_223_372_036_854_775,
            }),
            Effect::Expire { claim: 3 },
            Effect::Put {
                claim: 9,
                user: b"u \0x".to_vec(),
                expires_at_ms: Some(1_800_000_000_123),
                request_id: Some(b"req-1".to_vec()),
            },
            Effect::Put {
                claim: i64::MAX as u64,
                user: b"v".to_vec(),
                expires_at_ms: None,
                request_id: None,
            },
            Effect::Confirm { claim: 9 },
            Effect::Release { claim: 10 },
            Effect::Totals(Totals {
                claims_made: 10,
                released: 4,
                expired: 2,
            }),
        ];
        assert_eq!(from_args(&to_args(&effects)), Ok(effects));
    }

    #[test]
    fn malformed_ops_are_refused() {
        for args in [
            &["PUT", "1", "u"][..],
            &["CONFIRM"],
            &["CONFIRM", "-1"],
            &["CONFIRM", "0"],
            &["CONFIRM", "9223372036854775808"],
            &["NOPE", "1"],
            &["TOTALS", "1", "2"],
            &["TOTALS", "1", "2", "-3"],
            &["PUT", "1", "u", "x", ""],
            &["PUT", "1", "u", "-2", ""],
            &["PUT", "1", "", "-1", ""],
            &["CREATE", "0", "1", "1"],
            &["CREATE", "1", "1", "9223372036854776"],
            &["CREATE", "1", "1"],
        ] {
            assert!(from_args(args).is_err(), "{args:?}");
        }
    }

    #[test]
    fn settings_are_judged_without_a_clock() {
        let at_the_limit = Settings {
            limit: 1,
            per_user: 1,
            hold_s: i64::MAX / 1000,
        };
        assert_eq!(at_the_limit.check(), Ok(()));
        let over = Settings {
            hold_s: i64::MAX / 1000 + 1,
            ..at_the_limit
        };
        assert!(over.check().is_err());
    }
}
