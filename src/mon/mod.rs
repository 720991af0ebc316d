//! The velocity checks: MON.INCRCHECK and MON.DECRCLAMP (counters in a
//! time window, plain string keys) and MON.DISTINCT (distinct members on
//! a sorted set). MON.SLIDECHECK keeps sliding windows, a module type
//! of their own (`guard-win`, in `window/`). `thresholds.rs` is their shared threshold list,
//! `alert.rs` the `ALERT stream` option all four take.

pub mod alert;
pub mod decrclamp;
pub mod distinct;
pub mod incrcheck;
pub mod rules;
pub mod slidecheck;
pub mod thresholds;
pub mod window;
