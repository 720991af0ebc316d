//! Campaigns: a `guard-cpn` key holds places reserved while a payment
//! runs, confirmed or released, several per user, with request ids that
//! make retries safe and claims numbered in order for reconciliation.
//!
//! Read in layers (no two files import each other):
//! - `rules.rs`: the pure rule book, a typed outcome and its effects for
//!   every command;
//! - `effect.rs`: the effects and their one wire format (COUPON.APPLY);
//! - `store.rs` (with `expiry.rs`): the campaign as stored, and `apply`,
//!   the only way it changes, refusing effects that do not fit;
//! - `pipeline.rs`: opens the key, decides, applies, and owns every event,
//!   counter and propagation;
//! - `encoding.rs`: the data type, its RDB encoding with the validation of
//!   every load, and the AOF rewrite.
//!
//! Then one file a command: COUPON.CREATE, RESERVE, CONFIRM, RELEASE,
//! INFO, CLAIMS, and COUPON.APPLY, which replays effects. `on_coupon.rs`
//! is COUPON.ISSUE and COUPON.REVOKE when their key is a campaign.

pub mod apply;
pub mod claims;
pub mod confirm;
pub mod create;
pub mod effect;
pub mod encoding;
pub mod expiry;
pub mod info;
pub mod on_coupon;
pub mod pipeline;
pub mod release;
pub mod reserve;
pub mod rules;
pub mod store;

use crate::reply::ErrorReply;

/// A claim number argument (`claim`, `from`): a positive integer.
pub fn claim_number(bytes: &[u8], name: &str) -> Result<u64, ErrorReply> {
    crate::args::positive(bytes, name).map(|n| n as u64)
}
