//! Command handlers and the one entry point Redis calls for each of them.

pub mod coupon;
pub mod mon;

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw;

use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::store::{Arg, Ctx};

/// A command: `run` gets the context and `argv` (argv[0] is the command
/// name, argv[1] the key; Redis has checked the arity).
pub trait Command {
    fn run(ctx: Ctx, argv: &[Arg]) -> CommandResult;
}

/// The C entry Redis calls. A panic must never unwind into Redis (it
/// would abort the server), so it becomes an error reply.
pub extern "C" fn entry<C: Command>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the argument vector of this very call.
        let argv = unsafe { Arg::from_argv(argv, argc) };
        C::run(ctx, argv)
    }))
    .unwrap_or_else(|_| {
        Err(ErrorReply::new(
            "ERR redis-guard internal error (caught a panic)",
        ))
    });
    send(ctx, result);
    raw::REDISMODULE_OK as c_int
}

/// `GUARD.TEST-PANIC key`: exists only when the module is loaded with
/// `test-panic-command`, to prove that a panic cannot take Redis down.
pub struct PanicCommand;

impl Command for PanicCommand {
    fn run(_ctx: Ctx, _argv: &[Arg]) -> CommandResult {
        panic!("guard.test-panic: a deliberate panic");
    }
}

fn send(ctx: Ctx, result: CommandResult) {
    // SAFETY: replying on the command's own context.
    unsafe {
        match result {
            Ok(Reply::Integer(n)) => {
                raw::RedisModule_ReplyWithLongLong.unwrap()(ctx, n);
            }
            Ok(Reply::CounterLevel { current, level }) => {
                raw::RedisModule_ReplyWithArray.unwrap()(ctx, 2);
                raw::RedisModule_ReplyWithLongLong.unwrap()(ctx, current);
                raw::RedisModule_ReplyWithLongLong.unwrap()(ctx, level);
            }
            Err(error) => {
                // Messages are ours or Redis's own: no interior NUL, but a
                // text with one is still cut safely rather than panicking.
                let message =
                    std::ffi::CString::new(error.message().replace('\0', "")).unwrap_or_default();
                raw::RedisModule_ReplyWithError.unwrap()(ctx, message.as_ptr());
            }
        }
    }
}
