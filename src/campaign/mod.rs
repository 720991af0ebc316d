//! Campaigns: a `guard-cpn` key holds places reserved while a payment
//! runs, confirmed or released, several per user, with request ids that
//! make retries safe and claims numbered in order for reconciliation.
//!
//! `model.rs` is the whole rule book, pure; `expiry.rs` its index of holds
//! by expiry; `value.rs` makes a campaign a Redis value and carries out a
//! decision's effects. Each command is a file: COUPON.CREATE, RESERVE,
//! CONFIRM, RELEASE, INFO, CLAIMS, and COUPON.APPLY, which replays effects
//! on replicas and from the AOF. `on_coupon.rs` is COUPON.ISSUE and
//! COUPON.REVOKE when their key is a campaign.

pub mod apply;
pub mod claims;
pub mod confirm;
pub mod create;
pub mod expiry;
pub mod info;
pub mod model;
pub mod on_coupon;
pub mod release;
pub mod reserve;
pub mod value;

use crate::reply::ErrorReply;

pub const NO_SUCH_CAMPAIGN: ErrorReply = ErrorReply::new("ERR no such campaign");

/// A claim number argument (`claim`, `from`): a positive integer.
pub fn claim_number(bytes: &[u8], name: &str) -> Result<u64, ErrorReply> {
    crate::args::positive(bytes, name).map(|n| n as u64)
}
