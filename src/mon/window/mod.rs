//! Sliding windows: a `guard-win` key holds the sums of the last `window`
//! seconds in buckets aligned to absolute time, and the thresholds it
//! reported lately, for MON.SLIDECHECK. Built in the campaign's layers (no
//! two files import each other):
//! - `rules.rs`: the pure rule, the outcome and its effects;
//! - `effect.rs`: the effects and their one wire format (MON.APPLY);
//! - `store.rs`: the window as stored, and `apply`, which refuses effects
//!   that do not fit;
//! - `encoding.rs`: the data type, its validated RDB encoding;
//! - this file: how those plug into the `replicated` layer, which applies
//!   effects (a window's expiry is its key's) and owns their events,
//!   counters, propagation and AOF rewrite.
//!
//! Then MON.APPLY, which replays effects; MON.SLIDECHECK is `../slidecheck.rs`.

pub mod apply;
pub mod effect;
pub mod encoding;
pub mod rules;
pub mod shape;
pub mod store;

use std::ffi::CStr;

use effect::Effect;
use encoding::WINDOW;
use shape::Shape;
use store::Window;

use crate::redis::{DataType, EventClass, Words};
use crate::replicated::{Acts, ApplyError, Owed, Replicated, WireError};
use crate::stats;

impl Replicated for Window {
    type Effect = Effect;
    type Shape = Shape;
    const APPLY_COMMAND: &'static CStr = c"MON.APPLY";

    fn data_type() -> &'static DataType<Self> {
        &WINDOW
    }

    fn acts(effect: &Effect) -> Acts<Shape> {
        match *effect {
            Effect::Create(shape) => Acts::Creating(shape),
            Effect::ExpireAt(at_ms) => Acts::Expiring(at_ms),
            _ => Acts::OnValue,
        }
    }

    fn new(shape: Shape) -> Box<Self> {
        Window::create(shape)
    }

    fn apply(&mut self, effect: &Effect) -> Result<(), ApplyError> {
        Window::apply(self, effect)
    }

    fn owed(effect: &Effect) -> Option<Owed> {
        let (class, event, counter) = match effect {
            Effect::Create(_) | Effect::Fold { .. } => return None,
            Effect::Add { .. } => (EventClass::String, c"mon.slide", None),
            Effect::Report { .. } => (
                EventClass::String,
                c"mon.crossed",
                Some(&stats::MON_SLIDE_CROSSINGS),
            ),
            Effect::ExpireAt(_) => (EventClass::Generic, c"expire", None),
        };
        Some(Owed {
            class,
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

    /// CREATE with the shape, every bucket, every report; the key's
    /// expiry follows them (Redis writes it).
    fn rebuild(&self) -> Vec<Effect> {
        encoding::rebuild(self)
    }
}

#[cfg(test)]
mod tests {
    use super::effect::Effect;
    use super::shape::Shape;
    use super::store::Window;
    use crate::replicated::wire::{self, to_args};

    fn from_args<A: AsRef<[u8]>>(args: &[A]) -> Result<Vec<Effect>, wire::WireError> {
        wire::from_args::<Window, A>(args)
    }

    #[test]
    fn effects_round_trip_through_their_arguments() {
        let effects = vec![
            Effect::Create(Shape {
                window_ms: 60_000,
                buckets: 60,
            }),
            Effect::Add {
                bucket: 1_800_000_000,
                amount: 3,
            },
            Effect::Fold {
                bucket: 1_800_000_000,
            },
            Effect::Report {
                threshold: 5,
                at_ms: 1_800_000_000_123,
            },
            Effect::ExpireAt(1_800_000_060_123),
        ];
        assert_eq!(from_args(&to_args::<Window>(&effects)), Ok(effects.clone()));
        // The ops that were there before FOLD keep their bytes.
        let words: Vec<String> = to_args::<Window>(&[effects[1], effects[2]])
            .into_iter()
            .map(|w| String::from_utf8(w).unwrap())
            .collect();
        assert_eq!(words, ["ADD", "1800000000", "3", "FOLD", "1800000000"]);
    }

    #[test]
    fn malformed_ops_are_refused() {
        for args in [
            &["CREATE", "60000"][..],
            &["CREATE", "60001", "1"],
            &["CREATE", "60000", "7"],
            &["CREATE", "60000", "0"],
            &["CREATE", "7200000", "7200"],
            &["ADD", "1", "0"],
            &["ADD", "-1", "1"],
            &["FOLD"],
            &["FOLD", "-1"],
            &["REPORT", "0", "1"],
            &["PEXPIREAT", "x"],
            &["NOPE"],
        ] {
            assert!(from_args(args).is_err(), "{args:?}");
        }
    }
}
