//! redis-guard: native Redis commands for velocity checks (MON.INCRCHECK),
//! clamped refunds (MON.DECRCLAMP) and first-come-first-served coupons
//! (COUPON.ISSUE, COUPON.REVOKE). The contract is SPEC.md.
//!
//! Layout: `args` parses arguments into typed requests, `rules` decides,
//! `store` touches keys and emits effects, `commands` holds the thin
//! handlers, `stats` the INFO section and `registry` the command table.

mod args;
mod commands;
mod registry;
mod reply;
mod rules;
mod stats;
mod store;

/// Module start: no implicit WATCH signals (a no-op must not disturb
/// `WATCH`; real writes signal explicitly), then the commands. The one
/// module argument, `test-panic-command`, adds a command that panics on
/// purpose (for tests only).
// Unit tests build without the module block that calls this.
#[cfg_attr(test, allow(dead_code))]
fn init(ctx: &redis_module::Context, args: &[redis_module::RedisString]) -> redis_module::Status {
    use redis_module::raw;
    // SAFETY: called once from OnLoad with the load context.
    unsafe {
        raw::RedisModule_SetModuleOptions.unwrap()(
            ctx.ctx,
            raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as i32,
        );
    }
    let mut with_panic_command = false;
    for arg in args {
        match arg.as_slice() {
            b"test-panic-command" => with_panic_command = true,
            other => {
                let other = String::from_utf8_lossy(other);
                ctx.log_warning(&format!("redis-guard: unknown module argument '{other}'"));
                return redis_module::Status::Err;
            }
        }
    }
    match registry::register(ctx.ctx, with_panic_command) {
        Ok(()) => redis_module::Status::Ok,
        Err(message) => {
            ctx.log_warning(&format!("redis-guard: {message}"));
            redis_module::Status::Err
        }
    }
}

// Kept out of unit tests: the Redis allocator does not exist there.
#[cfg(not(test))]
redis_module::redis_module! {
    name: "guard",
    version: 1,
    allocator: (redis_module::alloc::RedisAlloc, redis_module::alloc::RedisAlloc),
    data_types: [],
    init: init,
    commands: [],
}
