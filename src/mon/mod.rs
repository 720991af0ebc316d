//! MON.INCRCHECK and MON.DECRCLAMP: counters in a time window, kept as
//! plain string keys.

pub mod decrclamp;
pub mod incrcheck;
pub mod rules;
