//! The one way a window key changes: open it, decide with the server's
//! clock (or take the primary's effects as they came), make the value when
//! an effect says CREATE, apply the effects in order, set the key's
//! expiry, then owe what every real write owes: a keyspace event per
//! effect, the INFO counters (on the primary only), one `MON.APPLY`
//! propagated with absolute bucket numbers and times, and the `WATCH`
//! signal.

use super::effect::{self, Effect, APPLY_COMMAND};
use super::encoding::WINDOW;
use super::rules::{self, Slid, Slide};
use super::store::Window;
use crate::redis::{Arg, CommandKey, Ctx, EventClass, OpenKey};
use crate::reply::ErrorReply;
use crate::stats;

/// Who asked for the effects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A client's call, decided here: counted.
    Client,
    /// The primary's (or the AOF's, or a migrating node's) effects.
    Replay,
}

/// MON.SLIDECHECK on the key `name`, decided at `now`. `before_writing`
/// sees the decision before anything is written (an alert's entry goes
/// first, so a refused one stops the call with nothing written).
pub fn slide<T>(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    call: &Slide<'_>,
    before_writing: impl FnOnce(&Slid) -> Result<T, ErrorReply>,
) -> Result<(Slid, T), ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let mut key = target.open();
    let (slid, effects) = rules::slide(key.value(&WINDOW)?, call, ctx.now_ms())
        .map_err(|refusal| ErrorReply::owned(refusal.message()))?;
    let alongside = before_writing(&slid)?;
    carry_out(target, &mut key, effects.as_slice(), Origin::Client)?;
    Ok((slid, alongside))
}

/// MON.APPLY: the effects as the primary decided them.
pub fn replay(ctx: Ctx<'_>, name: Arg<'_>, effects: &[Effect]) -> Result<(), ErrorReply> {
    let target = CommandKey::new(ctx, name);
    let mut key = target.open();
    carry_out(target, &mut key, effects, Origin::Replay)
}

/// Applies `effects` in order with their events and counters, then
/// propagates what applied as one MON.APPLY. An effect that does not apply
/// stops the call with an error; what applied before it is still
/// propagated, so a replica never misses a change made here.
fn carry_out(
    target: CommandKey<'_>,
    key: &mut OpenKey<'_>,
    effects: &[Effect],
    origin: Origin,
) -> Result<(), ErrorReply> {
    let mut applied = 0;
    let mut failure = None;
    for effect in effects {
        if let Err(why) = apply(key, effect) {
            failure = Some(ErrorReply::could_not_apply(why));
            break;
        }
        applied += 1;
        match effect {
            Effect::Create(_) | Effect::Fold { .. } => {}
            Effect::Add { .. } => target.notify(EventClass::String, c"mon.slide"),
            Effect::Report { .. } => {
                if origin == Origin::Client {
                    stats::MON_SLIDE_CROSSINGS.bump();
                }
                target.notify(EventClass::String, c"mon.crossed");
            }
            Effect::ExpireAt(_) => target.notify(EventClass::Generic, c"expire"),
        }
    }
    if applied > 0 {
        target.replicate_words(APPLY_COMMAND, effect::words(&effects[..applied]).as_slice());
        target.signal_modified();
    }
    failure.map_or(Ok(()), Err)
}

/// One effect on the key: CREATE makes the value on a missing key, the
/// expiry is the key's, the rest the value's.
fn apply(key: &mut OpenKey<'_>, effect: &Effect) -> Result<(), &'static str> {
    match effect {
        Effect::Create(shape) => {
            if key.exists() {
                return Err("the key exists");
            }
            key.set_value(&WINDOW, Window::new(*shape))
                .map_err(|_| "the value could not be stored")
        }
        Effect::ExpireAt(at_ms) => {
            if !key.exists() {
                return Err("no such window");
            }
            key.set_expires_at_ms(*at_ms);
            Ok(())
        }
        _ => match key.value_mut(&WINDOW) {
            Ok(Some(window)) => window.apply(effect),
            Ok(None) => Err("no such window"),
            Err(_) => Err("the key holds another type"),
        },
    }
}
