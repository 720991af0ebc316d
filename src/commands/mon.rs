//! MON.INCRCHECK and MON.DECRCLAMP: counters in a time window.

use super::Command;
use crate::args::{DecrClamp, IncrCheck};
use crate::reply::{CommandResult, Reply, OVERFLOW};
use crate::rules::{self, Refund};
use crate::stats;
use crate::store::{self, Arg, Ctx, Effect, EventClass, KeyRef};

pub struct IncrCheckCommand;

impl Command for IncrCheckCommand {
    fn run(ctx: Ctx, argv: &[Arg]) -> CommandResult {
        stats::MON_INCRCHECK_CALLS.bump();
        let request = IncrCheck::parse(&argv[2..], store::now_ms())?;
        let mut key = KeyRef::new(ctx, argv[1]).open();
        let existing = key.counter()?;
        let prev = existing.unwrap_or(0);
        let current = rules::add(prev, request.increment).ok_or(OVERFLOW)?;
        let level = rules::crossing_level(prev, current, request.thresholds.as_slice());

        key.set_counter(current)?;
        key.notify(EventClass::String, c"incrby");
        // A running window is never moved; only a key without TTL (new, or
        // one that lost it) gets one, and then value and expiry travel to
        // replicas as one write.
        if existing.is_none() || key.expires_at_ms().is_none() {
            key.set_expires_at_ms(request.window_expires_at_ms);
            key.notify(EventClass::Generic, c"expire");
            key.propagate(Effect::SetExpiringAt {
                value: current,
                at_ms: request.window_expires_at_ms,
            });
        } else {
            key.propagate(Effect::IncrBy(argv[2]));
        }
        if level > 0 {
            stats::MON_CROSSINGS.bump();
            key.notify(EventClass::String, c"mon.crossed");
        }
        key.written();
        Ok(Reply::CounterLevel {
            current,
            level: level as i64,
        })
    }
}

pub struct DecrClampCommand;

impl Command for DecrClampCommand {
    fn run(ctx: Ctx, argv: &[Arg]) -> CommandResult {
        stats::MON_DECRCLAMP_CALLS.bump();
        let request = DecrClamp::parse(&argv[2..])?;
        let mut key = KeyRef::new(ctx, argv[1]).open();
        match rules::refund(key.counter()?, request.amount) {
            Refund::Nothing => Ok(Reply::Integer(0)),
            Refund::Write { value, lost } => {
                key.set_counter(value)?;
                key.propagate(Effect::SetKeepTtl(value));
                key.notify(EventClass::String, c"decrby");
                if lost > 0 {
                    stats::MON_CLAMPS.bump();
                    stats::MON_CLAMPED_AMOUNT.add(lost.unsigned_abs());
                    key.notify(EventClass::String, c"mon.clamped");
                }
                key.written();
                Ok(Reply::Integer(value))
            }
        }
    }
}
