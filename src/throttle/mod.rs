//! CL.THROTTLE: the GCRA rate limiter with redis-cell's arguments, reply
//! and stored layout, kept as a plain string key; CL.THROTTLEALL: several
//! such limiters, all or nothing (`all_or_nothing.rs`, over the same GCRA);
//! CL.REFUND: quantity given back to a cell of either; CL.QUOTA: a
//! fixed-window count that refuses what does not fit (`quota.rs`), its
//! window in seconds or a calendar period.

pub mod all_or_nothing;
pub mod cl_quota;
pub mod cl_refund;
pub mod cl_throttle;
pub mod cl_throttleall;
pub mod gcra;
pub mod quota;

use crate::redis::{CommandKey, EventClass, OpenKey, PlainWrite};
use crate::reply::ErrorReply;

/// What an allowed request (a blocked cell, a refund) writes to its cell:
/// the TAT, its absolute
/// expiry, the events, `SET key tat PXAT ms` to replicas and the AOF, the
/// WATCH signal.
fn store(
    target: CommandKey<'_>,
    key: &mut OpenKey<'_>,
    stored: gcra::Stored,
) -> Result<(), ErrorReply> {
    key.write_integer(stored.tat_ns)?;
    key.set_expires_at_ms(stored.expires_at_ms);
    target.notify(EventClass::String, c"set");
    target.notify(EventClass::Generic, c"expire");
    target.replicate(PlainWrite::SetExpiringAt {
        value: stored.tat_ns,
        at_ms: stored.expires_at_ms,
    });
    target.signal_modified();
    Ok(())
}
