//! Campaigns: a `guard-cpn` key holds places reserved while a payment
//! runs, confirmed or released, several per user, with request ids that
//! make retries safe and claims numbered in order for reconciliation.
//!
//! Read in layers (no two files import each other):
//! - `rules.rs`: the pure rule book, a typed outcome and its effects for
//!   every command;
//! - `effect.rs`: the effects and their one wire format (COUPON.APPLY);
//! - `store.rs` (with `numbered.rs`, `interned.rs`, `expiry.rs`,
//!   `units.rs`, `chunked.rs` and `heap.rs`): the campaign as stored in
//!   compact buffers, and `apply`, the only way it changes, refusing
//!   effects that do not fit;
//! - `encoding.rs`: the data type, its RDB encoding with the validation of
//!   every load;
//! - this file: how those plug into the `replicated` layer, which applies
//!   effects and owns their events, counters, propagation and AOF rewrite;
//! - `write.rs`: a campaign command's way into that layer, with the
//!   campaign's own errors and sold-out event.
//!
//! - `ledger.rs`: the ledger's entries of a call's effects (pure), and
//!   `ledger_option.rs`, the `LEDGER stream` option every write takes.
//!
//! Then one file a command: COUPON.CREATE, RESERVE, CONFIRM, RELEASE,
//! INFO, CLAIMS, RECLAIM, ALTER, RESERVEALL, and COUPON.APPLY, which
//! replays effects. `on_coupon.rs` is COUPON.ISSUE and COUPON.REVOKE when
//! their key is a campaign.

pub mod alter;
pub mod apply;
pub mod chunked;
pub mod claims;
pub mod confirm;
pub mod create;
pub mod effect;
pub mod encoding;
pub mod expiry;
pub mod heap;
pub mod info;
pub mod interned;
pub mod ledger;
pub mod ledger_option;
pub mod numbered;
pub mod on_coupon;
pub mod reclaim;
pub mod release;
pub mod renew;
pub mod reserve;
pub mod reserveall;
pub mod rules;
pub mod settings;
pub mod store;
pub mod units;
pub mod write;

use std::ffi::CStr;

use effect::Effect;
use encoding::CAMPAIGN;
use settings::Settings;
use store::Campaign;

use crate::redis::{DataType, EventClass, Words};
use crate::replicated::{Acts, ApplyError, Owed, Replicated, WireError};
use crate::reply::ErrorReply;
use crate::stats;

/// A claim number argument (`claim`, `from`): a positive integer.
pub fn claim_number(bytes: &[u8], name: &str) -> Result<u64, ErrorReply> {
    crate::args::positive(bytes, name).map(|n| n as u64)
}

impl Replicated for Campaign {
    type Effect = Effect;
    type Shape = Settings;
    const APPLY_COMMAND: &'static CStr = c"COUPON.APPLY";

    fn data_type() -> &'static DataType<Self> {
        &CAMPAIGN
    }

    fn acts(effect: &Effect) -> Acts<Settings> {
        match effect {
            Effect::Create(settings) => Acts::Creating(*settings),
            _ => Acts::OnValue,
        }
    }

    fn new(settings: Settings) -> Box<Self> {
        Box::new(Campaign::new(settings))
    }

    fn apply(&mut self, effect: &Effect) -> Result<(), ApplyError> {
        Campaign::apply(self, effect)
    }

    fn owed(effect: &Effect) -> Option<Owed> {
        let (event, counter) = match effect {
            Effect::Put {
                expires_at_ms: Some(_),
                ..
            } => (c"coupon.reserved", Some(&stats::COUPON_RESERVED)),
            // A claim confirmed as it is made is ISSUE's: counted there.
            Effect::Put { .. } => (c"coupon.confirmed", None),
            Effect::Confirm { .. } => (c"coupon.confirmed", Some(&stats::COUPON_CONFIRMED)),
            Effect::Release { .. } => (c"coupon.released", Some(&stats::COUPON_RELEASED)),
            Effect::Expire { .. } => (c"coupon.expired", Some(&stats::COUPON_EXPIRED)),
            Effect::Alter(_) => (c"coupon.altered", Some(&stats::COUPON_ALTERED)),
            Effect::Renew { .. } => (c"coupon.renewed", Some(&stats::COUPON_RENEWED)),
            Effect::Create(_) | Effect::Ledger(_) | Effect::Totals(_) => return None,
        };
        Some(Owed {
            class: EventClass::Module,
            event,
            counter,
        })
    }

    fn write_op<'a>(effect: &'a Effect, words: &mut Words<'a>) {
        effect::words(effect, words)
    }

    fn read_op<'a, A: AsRef<[u8]>>(
        op: &[u8],
        args: &'a [A],
    ) -> Result<(Effect, &'a [A]), WireError> {
        effect::read(op, args)
    }

    /// CREATE with the settings, every stored claim, then the totals.
    fn rebuild(&self) -> Vec<Effect> {
        encoding::rebuild(self)
    }
}

#[cfg(test)]
mod tests {
    use super::effect::{Effect, Totals};
    use super::settings::Settings;
    use super::store::Campaign;
    use crate::replicated::wire::{self, to_args};

    fn from_args<A: AsRef<[u8]>>(args: &[A]) -> Result<Vec<Effect>, wire::WireError> {
        wire::from_args::<Campaign, A>(args)
    }

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
                units: 1,
            },
            Effect::Put {
                claim: i64::MAX as u64,
                user: b"v".to_vec(),
                expires_at_ms: None,
                request_id: None,
                units: i64::MAX as u64,
            },
            Effect::Put {
                claim: 11,
                user: b"w".to_vec(),
                expires_at_ms: Some(0),
                request_id: None,
                units: 4,
            },
            Effect::Confirm {
                claim: 11,
                units: Some(3),
            },
            Effect::Confirm {
                claim: 9,
                units: None,
            },
            Effect::Release { claim: 10 },
            Effect::Totals(Totals {
                claims_made: 10,
                released: 4,
                expired: 2,
            }),
        ];
        assert_eq!(from_args(&to_args::<Campaign>(&effects)), Ok(effects));
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
            &["PUTUNITS", "1", "u", "-1", ""],
            &["PUTUNITS", "1", "u", "-1", "", "0"],
            &["CONFIRMUNITS", "1"],
            &["CONFIRMUNITS", "1", "-2"],
        ] {
            assert!(from_args(args).is_err(), "{args:?}");
        }
    }
}
