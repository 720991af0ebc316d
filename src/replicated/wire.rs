//! Effects as the arguments of an APPLY command after its key: each op's
//! name, then its arguments, one op after another.

use super::Replicated;
use crate::integer;
use crate::redis::Words;

/// Why a list of ops could not be read.
pub type WireError = &'static str;

/// The words that carry `effects`, in order.
#[inline]
pub fn words<T: Replicated + ?Sized>(effects: &[T::Effect]) -> Words<'_> {
    let mut words = Words::new();
    for effect in effects {
        T::write_op(effect, &mut words);
    }
    words
}

/// The arguments after the key that carry `effects`.
pub fn to_args<T: Replicated + ?Sized>(effects: &[T::Effect]) -> Vec<Vec<u8>> {
    words::<T>(effects).to_args()
}

/// The effects `args` carry; the inverse of [`to_args`].
pub fn from_args<T: Replicated + ?Sized, A: AsRef<[u8]>>(
    args: &[A],
) -> Result<Vec<T::Effect>, WireError> {
    let mut effects = Vec::new();
    let mut rest = args;
    while let [op, tail @ ..] = rest {
        let (effect, tail) = T::read_op(op.as_ref(), tail)?;
        effects.push(effect);
        rest = tail;
    }
    Ok(effects)
}

/// An op's name the type does not know, or an op cut short.
pub const UNKNOWN_OP: WireError = "an unknown op, or an op without all its arguments";

/// A 64-bit signed integer of at least `min`; `why` otherwise.
pub fn at_least(bytes: &[u8], min: i64, why: WireError) -> Result<i64, WireError> {
    integer::parse(bytes).filter(|&n| n >= min).ok_or(why)
}
