//! CL.THROTTLE: the GCRA rate limiter with redis-cell's arguments, reply
//! and stored layout, kept as a plain string key.

pub mod cl_throttle;
pub mod gcra;
