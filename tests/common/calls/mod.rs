//! Typed calls to the module's commands (and the plain Redis ones tests
//! set keys up with), one file a family.

pub mod campaign;
mod coupon;
mod keys;
mod mon;
mod throttle;

pub use coupon::*;
pub use keys::*;
pub use mon::*;
pub use throttle::*;
