//! COUPON.*: first-come-first-served coupons. COUPON.ISSUE and
//! COUPON.REVOKE keep their winners in a plain set (`set.rs`) or in a
//! campaign (`campaign/`, the `guard-cpn` type with holds that expire and
//! its own commands); `backend.rs` tells which, and both answer with
//! `outcome.rs`'s one type.

pub mod backend;
pub mod campaign;
pub mod issue;
pub mod outcome;
pub mod revoke;
pub mod set;
