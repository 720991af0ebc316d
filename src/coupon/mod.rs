//! COUPON.ISSUE and COUPON.REVOKE: first-come-first-served coupons kept as
//! a plain set of winners, or as a campaign's claims (`backend.rs` tells
//! which).

pub mod backend;
pub mod issue;
pub mod revoke;
pub mod rules;
