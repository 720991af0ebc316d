//! The one way a replicated value changes: open its key, decide with the
//! server's clock (or take the primary's effects as they came), apply the
//! effects in order, then owe what every real write owes: the event of
//! each effect, the INFO counters (on the primary only: a replica or an
//! AOF load replays, it does not serve), one APPLY propagated with
//! absolute values, and the `WATCH` signal. A call whose decision has no
//! effect does none of it.

use super::{wire, Acts, Replicated};
use crate::redis::{Arg, CommandKey, Ctx, OpenKey};
use crate::reply::ErrorReply;

/// RESTORE's error for a key that exists.
const BUSYKEY: ErrorReply = ErrorReply::new("BUSYKEY Target key name already exists.");

/// Who asked for the effects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A client's call, decided here: counted.
    Client,
    /// The primary's (or the AOF's, or a migrating node's) effects.
    Replay,
}

/// A client's writing call on the key `name`: `decide` sees the value (if
/// the key holds one) and the clock and returns its outcome with the
/// effects that carry it out, or refuses with nothing written.
pub fn decide<T: Replicated + ?Sized, O, E: AsRef<[T::Effect]>>(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    decide: impl FnOnce(Option<&T>, i64) -> Result<(O, E), ErrorReply>,
) -> Result<O, ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let mut key = target.open();
    let (outcome, effects) = decide(key.value(T::data_type())?, ctx.now_ms())?;
    carry_out::<T>(target, &mut key, effects.as_ref(), Origin::Client)?;
    Ok(outcome)
}

/// A client's call that makes a new value at `name` (`effects` start
/// with the one that makes it): BUSYKEY when the key exists, as RESTORE
/// answers.
pub fn create<T: Replicated + ?Sized>(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    effects: &[T::Effect],
) -> Result<(), ErrorReply> {
    if CommandKey::new(ctx, name).open_read().is_some() {
        return Err(BUSYKEY);
    }
    write::<T>(ctx, name, effects)
}

/// Carries out a client's call whose effects on `name` were decided
/// elsewhere (a new value's, or several values' decided at one clock
/// reading, all or none).
pub fn write<T: Replicated + ?Sized>(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    effects: &[T::Effect],
) -> Result<(), ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let mut key = target.open();
    carry_out::<T>(target, &mut key, effects, Origin::Client)
}

/// The APPLY command: the effects as the primary decided them. One that
/// makes the value first on a key that exists is BUSYKEY, as RESTORE.
pub fn replay<T: Replicated + ?Sized>(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    effects: &[T::Effect],
) -> Result<(), ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let mut key = target.open();
    if let Some(first) = effects.first() {
        if matches!(T::acts(first), Acts::Creating(_)) && key.exists() {
            return Err(BUSYKEY);
        }
    }
    carry_out::<T>(target, &mut key, effects, Origin::Replay)
}

/// Applies `effects` in order with what each owes, then propagates what
/// applied as one APPLY. An effect that does not apply stops the call
/// with an error; what applied before it is still propagated, so a
/// replica never misses a change made here.
fn carry_out<T: Replicated + ?Sized>(
    target: CommandKey<'_>,
    key: &mut OpenKey<'_>,
    effects: &[T::Effect],
    origin: Origin,
) -> Result<(), ErrorReply> {
    let mut applied = 0;
    let mut failure = None;
    for effect in effects {
        if let Err(why) = apply::<T>(key, effect) {
            failure = Some(ErrorReply::could_not_apply(why));
            break;
        }
        applied += 1;
        if let Some(owed) = T::owed(effect) {
            if let (Origin::Client, Some(counter)) = (origin, owed.counter) {
                counter.bump();
            }
            target.notify(owed.class, owed.event);
        }
    }
    if applied > 0 {
        let words = wire::words::<T>(&effects[..applied]);
        target.replicate_words(T::APPLY_COMMAND, words.as_slice());
        target.signal_modified();
    }
    failure.map_or(Ok(()), Err)
}

/// One effect on the open key: on the key itself, or on its value.
fn apply<T: Replicated + ?Sized>(
    key: &mut OpenKey<'_>,
    effect: &T::Effect,
) -> Result<(), super::ApplyError> {
    match T::acts(effect) {
        Acts::Creating(shape) => {
            if key.exists() {
                return Err("the key exists");
            }
            key.set_value(T::data_type(), T::new(shape))
                .map_err(|_| "the value could not be stored")
        }
        Acts::Expiring(at_ms) => {
            if !key.exists() {
                return Err("the key does not exist");
            }
            key.set_expires_at_ms(at_ms);
            Ok(())
        }
        Acts::OnValue => match key.value_mut(T::data_type()) {
            Ok(Some(value)) => value.apply(effect),
            Ok(None) => Err("the key holds no value of this type"),
            Err(_) => Err("the key holds another type"),
        },
    }
}
