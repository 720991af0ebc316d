//! redis-guard: native Redis commands for the read-decide-write steps of
//! online shops. The command reference is docs/commands.md.
//!
//! Layout: `redis/` owns the Redis module API (every `unsafe` is there);
//! each command family is a folder (`mon/` with its `window/` type,
//! `coupon/` with its `campaign/` type, `throttle/`) where a command is
//! one file (metadata, parsing, handler) beside the family's pure
//! decisions (`rules.rs`, `gcra.rs`, `all_or_nothing.rs`);
//! `args`, `integer` and `reply` are the shared pure parts; `stats` the
//! INFO counters; `tape` an in-memory RDB for tests and fuzz targets.

pub mod args;
pub mod calendar;
pub mod coupon;
pub mod integer;
pub mod mon;
mod redis;
pub mod replicated;
pub mod reply;
pub mod stats;
pub mod stream;
pub mod tape;
mod test_panic;
pub mod throttle;
#[cfg(test)]
mod xorshift;

use redis::Command;
/// The encoding interface of module values, for tests and fuzz targets
/// that load and save values without a server.
pub use redis::{ModuleValue, Reader, Writer};

/// Every command the module registers.
const COMMANDS: [&Command; 22] = [
    &mon::incrcheck::COMMAND,
    &mon::decrclamp::COMMAND,
    &coupon::issue::COMMAND,
    &coupon::revoke::COMMAND,
    &coupon::campaign::create::COMMAND,
    &coupon::campaign::reserve::COMMAND,
    &coupon::campaign::confirm::COMMAND,
    &coupon::campaign::release::COMMAND,
    &coupon::campaign::renew::COMMAND,
    &coupon::campaign::info::COMMAND,
    &coupon::campaign::claims::COMMAND,
    &coupon::campaign::reclaim::COMMAND,
    &coupon::campaign::alter::COMMAND,
    &coupon::campaign::reserveall::COMMAND,
    &coupon::campaign::apply::COMMAND,
    &throttle::cl_throttle::COMMAND,
    &throttle::cl_throttleall::COMMAND,
    &throttle::cl_quota::COMMAND,
    &throttle::cl_refund::COMMAND,
    &mon::slidecheck::COMMAND,
    &mon::window::apply::COMMAND,
    &mon::distinct::COMMAND,
];

/// Module start. The one module argument, `test-panic-command`, adds a
/// command that panics on purpose (for tests only).
fn init(ctx: &redis_module::Context, args: &[redis_module::RedisString]) -> redis_module::Status {
    let mut commands = COMMANDS.to_vec();
    for arg in args {
        match arg.as_slice() {
            b"test-panic-command" => commands.push(&test_panic::COMMAND),
            other => {
                let other = String::from_utf8_lossy(other);
                ctx.log_warning(&format!("redis-guard: unknown module argument '{other}'"));
                return redis_module::Status::Err;
            }
        }
    }
    match redis::load(
        ctx,
        &[
            &coupon::campaign::encoding::CAMPAIGN,
            &mon::window::encoding::WINDOW,
        ],
        &commands,
    ) {
        Ok(()) => redis_module::Status::Ok,
        Err(message) => {
            ctx.log_warning(&format!("redis-guard: {message}"));
            redis_module::Status::Err
        }
    }
}

/// The module's version as `MODULE LIST` shows it: Cargo.toml's
/// `major.minor.patch` as one integer (0.2.0 is 200, 1.2.3 is 10203),
/// the way Redis's own modules number theirs.
const MODULE_VERSION: i32 = {
    const fn number(text: &str) -> i32 {
        let bytes = text.as_bytes();
        let mut value = 0;
        let mut i = 0;
        while i < bytes.len() {
            value = value * 10 + (bytes[i] - b'0') as i32;
            i += 1;
        }
        value
    }
    number(env!("CARGO_PKG_VERSION_MAJOR")) * 10_000
        + number(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + number(env!("CARGO_PKG_VERSION_PATCH"))
};

redis_module::redis_module! {
    name: "guard",
    version: MODULE_VERSION,
    allocator: (redis::ModuleAlloc, redis::ModuleAlloc),
    data_types: [],
    init: init,
    commands: [],
}
