//! Sliding windows: a `guard-win` key holds the sums of the last `window`
//! seconds in buckets aligned to absolute time, and the thresholds it
//! reported lately, for MON.SLIDECHECK. Built in the campaign's layers (no
//! two files import each other):
//! - `rules.rs`: the pure rule, the outcome and its effects;
//! - `effect.rs`: the effects and their one wire format (MON.APPLY);
//! - `store.rs`: the window as stored, and `apply`, which refuses effects
//!   that do not fit;
//! - `pipeline.rs`: opens the key, decides, applies, and owns every event,
//!   counter and propagation;
//! - `encoding.rs`: the data type, its validated RDB encoding and its AOF
//!   rewrite.
//!
//! Then MON.APPLY, which replays effects; MON.SLIDECHECK is `../slidecheck.rs`.

pub mod apply;
pub mod effect;
pub mod encoding;
pub mod pipeline;
pub mod rules;
pub mod store;
