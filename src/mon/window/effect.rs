//! What changes a sliding window, and the one wire format those changes
//! travel in: the arguments of `MON.APPLY key op [op ...]`, which the
//! primary propagates, a rewritten AOF holds and Valkey's atomic slot
//! migration replays. Every op carries absolute bucket numbers and times.
//!
//! Ops: `CREATE window_ms buckets`, `ADD bucket amount`, `FOLD bucket`
//! (the buckets after it moved into it, after a clock step back), `REPORT
//! threshold at_ms`, `PEXPIREAT at_ms` (the key's expiry, applied to the
//! key).

use super::shape::Shape;
use crate::integer;
use crate::redis::{KeptWord, Word, Words};
use crate::replicated::wire::{at_least, UNKNOWN_OP};
use crate::replicated::WireError;

/// A change to a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// A new, empty window (on a missing key).
    Create(Shape),
    /// `amount` added in bucket number `bucket` (time / bucket length);
    /// buckets `n` or more behind it are dropped.
    Add { bucket: i64, amount: i64 },
    /// Every bucket numbered after `bucket` moved into it: a clock that
    /// stepped back finds the buckets it wrote ahead (SPEC: clock steps).
    Fold { bucket: i64 },
    /// Threshold `threshold` reported at `at_ms`.
    Report { threshold: i64, at_ms: i64 },
    /// The key expires at `at_ms`.
    ExpireAt(i64),
}

/// One call's effects, at most one of each kind (CREATE or FOLD, ADD,
/// REPORT, PEXPIREAT), kept inline: a call allocates nothing for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallEffects {
    items: [Effect; 4],
    len: usize,
}

impl Default for CallEffects {
    fn default() -> Self {
        CallEffects {
            items: [Effect::ExpireAt(0); 4],
            len: 0,
        }
    }
}

impl CallEffects {
    /// Adds an effect; a call never makes more than four.
    pub fn push(&mut self, effect: Effect) {
        debug_assert!(self.len < self.items.len());
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = effect;
            self.len += 1;
        }
    }

    pub fn as_slice(&self) -> &[Effect] {
        &self.items[..self.len]
    }
}

impl AsRef<[Effect]> for CallEffects {
    fn as_ref(&self) -> &[Effect] {
        self.as_slice()
    }
}

impl IntoIterator for CallEffects {
    type Item = Effect;
    type IntoIter = std::iter::Take<std::array::IntoIter<Effect, 4>>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter().take(self.len)
    }
}

/// The one mapping from an effect to its op: the op's name, then its
/// numbers.
#[inline]
pub fn words(effect: &Effect, words: &mut Words<'_>) {
    static CREATE: KeptWord = KeptWord::new(c"CREATE");
    static ADD: KeptWord = KeptWord::new(c"ADD");
    static FOLD: KeptWord = KeptWord::new(c"FOLD");
    static REPORT: KeptWord = KeptWord::new(c"REPORT");
    static PEXPIREAT: KeptWord = KeptWord::new(c"PEXPIREAT");
    match *effect {
        Effect::Create(shape) => words.extend(&[
            Word::Kept(&CREATE),
            Word::Number(shape.window_ms),
            Word::Number(shape.buckets),
        ]),
        Effect::Add { bucket, amount } => {
            words.extend(&[Word::Kept(&ADD), Word::Number(bucket), Word::Number(amount)])
        }
        Effect::Fold { bucket } => words.extend(&[Word::Kept(&FOLD), Word::Number(bucket)]),
        Effect::Report { threshold, at_ms } => words.extend(&[
            Word::Kept(&REPORT),
            Word::Number(threshold),
            Word::Number(at_ms),
        ]),
        Effect::ExpireAt(at_ms) => words.extend(&[Word::Kept(&PEXPIREAT), Word::Number(at_ms)]),
    }
}

fn number(bytes: &[u8]) -> Result<i64, WireError> {
    integer::parse(bytes).ok_or("a number is not an integer")
}

fn positive(bytes: &[u8]) -> Result<i64, WireError> {
    at_least(bytes, 1, "a number is not a positive integer")
}

fn time(bytes: &[u8]) -> Result<i64, WireError> {
    at_least(bytes, 0, "a time is not an integer from 1970")
}

/// The op named `op` from the start of `args`, and what follows it; the
/// inverse of [`words`]. Only the shape of the op is judged here; whether
/// it fits the window is the store's.
pub fn read<'a, A: AsRef<[u8]>>(op: &[u8], args: &'a [A]) -> Result<(Effect, &'a [A]), WireError> {
    let read = match (op, args) {
        (b"CREATE", [window_ms, buckets, tail @ ..]) => {
            let shape = Shape {
                window_ms: number(window_ms.as_ref())?,
                buckets: number(buckets.as_ref())?,
            };
            shape.check()?;
            (Effect::Create(shape), tail)
        }
        (b"ADD", [bucket, amount, tail @ ..]) => (
            Effect::Add {
                bucket: time(bucket.as_ref())?,
                amount: positive(amount.as_ref())?,
            },
            tail,
        ),
        (b"FOLD", [bucket, tail @ ..]) => (
            Effect::Fold {
                bucket: time(bucket.as_ref())?,
            },
            tail,
        ),
        (b"REPORT", [threshold, at_ms, tail @ ..]) => (
            Effect::Report {
                threshold: positive(threshold.as_ref())?,
                at_ms: time(at_ms.as_ref())?,
            },
            tail,
        ),
        (b"PEXPIREAT", [at_ms, tail @ ..]) => (Effect::ExpireAt(time(at_ms.as_ref())?), tail),
        _ => return Err(UNKNOWN_OP),
    };
    Ok(read)
}
