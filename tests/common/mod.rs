//! The test harness, one job a file: `server` starts and stops the
//! servers under test (and audits them), `assert` and `observe` say what
//! a call changed, `calls` are typed calls to the module's commands,
//! `registry` is the one list of those commands and `metadata` what the
//! server reports about them.
// Each test binary uses its own part of the harness.
#![allow(dead_code, unused_imports)]

pub mod assert;
pub mod calls;
pub mod cluster;
pub mod crowd;
pub mod gcra;
pub mod memory;
pub mod metadata;
pub mod observe;
pub mod payload;
pub mod registry;
pub mod results;
pub mod rng;
pub mod scripts;
pub mod server;
pub mod time;
pub mod tools;
pub mod zoneinfo;

pub use assert::*;
pub use calls::*;
pub use observe::*;
pub use server::*;
pub use time::*;
