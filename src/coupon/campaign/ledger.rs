//! The ledger's entries: one per change a call makes, in the order it
//! makes them, worked out from the campaign before the call and the
//! effects the rules decided (pure; the write path appends them).

use super::effect::Effect;
use super::settings::Settings;
use super::store::Campaign;
use crate::redis::{KeptWord, Word, Words};

/// What happened to a claim (or to the settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Reserved,
    Confirmed,
    Released,
    Expired,
    Revoked,
    Altered,
    Renewed,
}

impl Op {
    /// Its name in an entry, kept: propagating or appending it makes no
    /// string.
    fn word(self) -> &'static KeptWord {
        static RESERVED: KeptWord = KeptWord::new(c"reserved");
        static CONFIRMED: KeptWord = KeptWord::new(c"confirmed");
        static RELEASED: KeptWord = KeptWord::new(c"released");
        static EXPIRED: KeptWord = KeptWord::new(c"expired");
        static REVOKED: KeptWord = KeptWord::new(c"revoked");
        static ALTERED: KeptWord = KeptWord::new(c"altered");
        static RENEWED: KeptWord = KeptWord::new(c"renewed");
        match self {
            Op::Reserved => &RESERVED,
            Op::Confirmed => &CONFIRMED,
            Op::Released => &RELEASED,
            Op::Expired => &EXPIRED,
            Op::Revoked => &REVOKED,
            Op::Altered => &ALTERED,
            Op::Renewed => &RENEWED,
        }
    }
}

/// The entries' field names.
static KEY: KeptWord = KeptWord::new(c"key");
static OP: KeptWord = KeptWord::new(c"op");
static CLAIM: KeptWord = KeptWord::new(c"claim");
static USER: KeptWord = KeptWord::new(c"user");
static EXPIRES_AT_MS: KeptWord = KeptWord::new(c"expires_at_ms");
static ID: KeptWord = KeptWord::new(c"id");
static AVAILABLE: KeptWord = KeptWord::new(c"available");
static LIMIT: KeptWord = KeptWord::new(c"limit");
static PERUSER: KeptWord = KeptWord::new(c"peruser");
static HOLD: KeptWord = KeptWord::new(c"hold");
static UNITS: KeptWord = KeptWord::new(c"units");

/// What one ledger entry records; `available` is after the change, as COUPON.INFO
/// would report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Claim {
        op: Op,
        claim: u64,
        user: Vec<u8>,
        /// -1 once confirmed.
        expires_at_ms: i64,
        id: Option<Vec<u8>>,
        available: i64,
        /// The claim's units (for `confirmed`, those confirmed).
        units: u64,
    },
    Altered {
        settings: Settings,
        available: i64,
    },
}

impl Record {
    /// The stream entry's field/value pairs, in SPEC's order, for the
    /// campaign `key`.
    pub fn words<'a>(&'a self, key: Word<'a>) -> Words<'a> {
        use Word::{Bytes, Kept, Number, Unsigned};
        let mut words = Words::new();
        words.extend(&[Kept(&KEY), key, Kept(&OP)]);
        match self {
            Record::Claim {
                op,
                claim,
                user,
                expires_at_ms,
                id,
                available,
                units,
            } => words.extend(&[
                Kept(op.word()),
                Kept(&CLAIM),
                Unsigned(*claim),
                Kept(&USER),
                Bytes(user),
                Kept(&EXPIRES_AT_MS),
                Number(*expires_at_ms),
                Kept(&ID),
                Bytes(id.as_deref().unwrap_or_default()),
                Kept(&AVAILABLE),
                Number(*available),
                Kept(&UNITS),
                Unsigned(*units),
            ]),
            Record::Altered {
                settings,
                available,
            } => words.extend(&[
                Kept(Op::Altered.word()),
                Kept(&LIMIT),
                Number(settings.limit),
                Kept(&PERUSER),
                Number(settings.per_user),
                Kept(&HOLD),
                Number(settings.hold_s),
                Kept(&AVAILABLE),
                Number(*available),
            ]),
        }
        words
    }

    /// Those pairs as bytes.
    #[cfg(test)]
    pub fn fields(&self, key: &[u8]) -> Vec<Vec<u8>> {
        self.words(Word::Bytes(key)).to_args()
    }
}

/// The entries of `effects` on `c` at `now`. A released claim's entry says
/// `releases` (`released`, or `revoked` for COUPON.REVOKE). Confirm,
/// release, expire and renew name claims stored before the call.
pub fn entries(c: &Campaign, effects: &[Effect], now: i64, releases: Op) -> Vec<Record> {
    let mut limit = c.settings().limit;
    // Live units, as INFO counts them (u128: a loaded value's holds may
    // sum past 64 bits).
    let mut live = c.live_units(now);
    let mut entries = Vec::new();
    for effect in effects {
        let record = match effect {
            Effect::Put {
                claim,
                user,
                expires_at_ms,
                request_id,
                units,
            } => {
                live += u128::from(*units);
                Record::Claim {
                    op: match expires_at_ms {
                        Some(_) => Op::Reserved,
                        None => Op::Confirmed,
                    },
                    claim: *claim,
                    user: user.clone(),
                    expires_at_ms: expires_at_ms.unwrap_or(-1),
                    id: request_id.clone(),
                    available: available(limit, live),
                    units: *units,
                }
            }
            Effect::Alter(settings) => {
                limit = settings.limit;
                Record::Altered {
                    settings: *settings,
                    available: available(limit, live),
                }
            }
            Effect::Confirm { claim, .. }
            | Effect::Release { claim }
            | Effect::Expire { claim }
            | Effect::Renew { claim, .. } => {
                let Some(stored) = c.stored(*claim) else {
                    continue;
                };
                let freed = u128::from(stored.units);
                let (op, expires_at_ms, units) = match *effect {
                    Effect::Confirm { units: kept, .. } => {
                        let kept = kept.unwrap_or(stored.units);
                        live = live - freed + u128::from(kept);
                        (Op::Confirmed, -1, kept)
                    }
                    Effect::Release { .. } => {
                        live -= freed;
                        (releases, stored.state.expires_at_ms(), stored.units)
                    }
                    Effect::Renew { expires_at_ms, .. } => {
                        (Op::Renewed, expires_at_ms, stored.units)
                    }
                    // An expired hold was not live: nothing is freed.
                    _ => (Op::Expired, stored.state.expires_at_ms(), stored.units),
                };
                Record::Claim {
                    op,
                    claim: *claim,
                    user: stored.user.to_vec(),
                    expires_at_ms,
                    id: stored.request_id.map(<[u8]>::to_vec),
                    available: available(limit, live),
                    units,
                }
            }
            Effect::Create(_) | Effect::Ledger(_) | Effect::Totals(_) => continue,
        };
        entries.push(record);
    }
    entries
}

/// What COUPON.INFO reports as available: never below 0.
fn available(limit: i64, live_units: u128) -> i64 {
    (limit as u128).saturating_sub(live_units) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000;

    fn text(fields: Vec<Vec<u8>>) -> String {
        let words: Vec<String> = fields
            .into_iter()
            .map(|f| String::from_utf8(f).unwrap())
            .collect();
        words.join(" ")
    }

    /// Limit 3: alice's hold (claim 1) expired, bob confirmed (2), carol
    /// held (3). Worked out by hand: before the call 1 confirmed and 1
    /// live hold, so 1 available.
    fn campaign() -> Campaign {
        let mut c = Campaign::new(Settings {
            limit: 3,
            per_user: 2,
            hold_s: 60,
        });
        for (claim, user, expires, id) in [
            (1, "alice", Some(NOW - 1), Some("r1")),
            (2, "bob", None, None),
            (3, "carol", Some(NOW + 5_000), None),
        ] {
            let put = Effect::Put {
                claim,
                user: user.into(),
                expires_at_ms: expires,
                request_id: id.map(Into::into),
                units: 1,
            };
            c.apply(&put).unwrap();
        }
        c
    }

    #[test]
    fn every_change_has_its_entry_with_what_is_available_after_it() {
        let c = campaign();
        let effects = [
            Effect::Expire { claim: 1 },
            Effect::Put {
                claim: 4,
                user: b"dave".to_vec(),
                expires_at_ms: Some(NOW + 60_000),
                request_id: Some(b"r9".to_vec()),
                units: 1,
            },
            Effect::Confirm {
                claim: 3,
                units: None,
            },
            Effect::Release { claim: 2 },
            Effect::Alter(Settings {
                limit: 5,
                per_user: 2,
                hold_s: 30,
            }),
        ];
        let entries: Vec<String> = entries(&c, &effects, NOW, Op::Revoked)
            .iter()
            .map(|entry| text(entry.fields(b"k")))
            .collect();
        assert_eq!(
            entries,
            [
                "key k op expired claim 1 user alice expires_at_ms 999999 id r1 available 1 units 1",
                "key k op reserved claim 4 user dave expires_at_ms 1060000 id r9 available 0 units 1",
                "key k op confirmed claim 3 user carol expires_at_ms -1 id  available 0 units 1",
                "key k op revoked claim 2 user bob expires_at_ms -1 id  available 1 units 1",
                "key k op altered limit 5 peruser 2 hold 30 available 3",
            ]
        );
    }

    /// Units: carol's hold of 1 released, dave's hold of 3 units (limit 3,
    /// bob's 1 confirmed: 2 - 3 shows as 0), then an entry for a confirm
    /// of 1 unit (entries name claims as stored before the call).
    #[test]
    fn entries_carry_units_and_count_them_in_available() {
        let c = campaign();
        let effects = [
            Effect::Release { claim: 3 },
            Effect::Put {
                claim: 4,
                user: b"dave".to_vec(),
                expires_at_ms: Some(NOW + 60_000),
                request_id: None,
                units: 3,
            },
            Effect::Confirm {
                claim: 3,
                units: Some(1),
            },
        ];
        let entries: Vec<String> = entries(&c, &effects, NOW, Op::Released)
            .iter()
            .map(|entry| text(entry.fields(b"k")))
            .collect();
        assert_eq!(
            entries,
            [
                "key k op released claim 3 user carol expires_at_ms 1005000 id  available 2 units 1",
                "key k op reserved claim 4 user dave expires_at_ms 1060000 id  available 0 units 3",
                "key k op confirmed claim 3 user carol expires_at_ms -1 id  available 0 units 1",
            ]
        );
    }

    #[test]
    fn a_put_confirmed_at_once_is_one_confirmed_entry() {
        let c = campaign();
        let issued = [Effect::Put {
            claim: 4,
            user: b"erin".to_vec(),
            expires_at_ms: None,
            request_id: None,
            units: 1,
        }];
        let fields = text(entries(&c, &issued, NOW, Op::Released)[0].fields(b"k"));
        assert_eq!(
            fields,
            "key k op confirmed claim 4 user erin expires_at_ms -1 id  available 0 units 1"
        );
    }
}
