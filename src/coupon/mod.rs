//! COUPON.ISSUE and COUPON.REVOKE: first-come-first-served coupons kept as
//! a plain set of winners.

pub mod issue;
pub mod revoke;
pub mod rules;
