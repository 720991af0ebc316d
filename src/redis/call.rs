//! Set and sorted-set commands run through Redis itself: Redis 7.0 gives
//! modules no low-level set API, and the nested sorted-set commands bring
//! their own propagation (only when they changed something), keyspace
//! events and WATCH signals, exactly as the client's own would.

use std::ffi::CStr;
use std::os::raw::c_char;

use redis_module::raw;

use super::command::Arg;
use super::key::CommandKey;
use crate::reply::ErrorReply;

#[derive(Clone, Copy)]
pub enum SetCall {
    /// `SADD key member`: 1 added, 0 already there.
    Add,
    /// `SREM key member`: 1 removed, 0 not there.
    Remove,
    /// `SISMEMBER key member`: 1 or 0; writes nothing.
    IsMember,
}

/// The sorted-set steps of MON.DISTINCT; each replicates itself, with
/// absolute times, when it changed something.
#[derive(Clone, Copy)]
pub enum ZsetCall<'call> {
    /// `ZREMRANGEBYSCORE key -inf cutoff`: how many were dropped.
    DropUpTo(i64),
    /// `ZADD key score member`: 1 added, 0 re-scored.
    Add { score: i64, member: Arg<'call> },
    /// `PEXPIREAT key at_ms`: 1.
    ExpireAt(i64),
}

impl CommandKey<'_> {
    /// Runs a sorted-set step on this key. No handle of this key may be
    /// open.
    pub fn zset_call(self, call: ZsetCall) -> Result<i64, ErrorReply> {
        let (ctx, key) = (self.ctx.as_ptr(), self.name.as_ptr());
        // SAFETY: each format matches the arguments after it (s: a
        // RedisModuleString, c: a C string, l: a long long; `!`:
        // replicate); the reply is read, then freed once.
        unsafe {
            let call_fn = raw::RedisModule_Call.unwrap();
            let reply = match call {
                ZsetCall::DropUpTo(cutoff) => call_fn(
                    ctx,
                    c"ZREMRANGEBYSCORE".as_ptr(),
                    c"!scl".as_ptr(),
                    key,
                    c"-inf".as_ptr(),
                    cutoff,
                ),
                ZsetCall::Add { score, member } => call_fn(
                    ctx,
                    c"ZADD".as_ptr(),
                    c"!sls".as_ptr(),
                    key,
                    score,
                    member.as_ptr(),
                ),
                ZsetCall::ExpireAt(at_ms) => {
                    call_fn(ctx, c"PEXPIREAT".as_ptr(), c"!sl".as_ptr(), key, at_ms)
                }
            };
            if reply.is_null() {
                return Err(ErrorReply::new(
                    "ERR nested sorted-set command could not run",
                ));
            }
            let result = integer_reply(reply);
            raw::RedisModule_FreeCallReply.unwrap()(reply);
            result
        }
    }

    /// Runs a set command on this key. SADD and SREM bring their own
    /// propagation, keyspace events and WATCH signal, and replicate only
    /// when they changed something. No handle of this key may be open.
    pub fn set_call(self, call: SetCall, member: Arg) -> Result<i64, ErrorReply> {
        let (command, format): (&CStr, &CStr) = match call {
            // `!`: replicate the call (only when it changed something).
            SetCall::Add => (c"SADD", c"!ss"),
            SetCall::Remove => (c"SREM", c"!ss"),
            SetCall::IsMember => (c"SISMEMBER", c"ss"),
        };
        // SAFETY: the format's two `s` take the two RedisModuleStrings
        // passed; the reply is read, then freed once.
        unsafe {
            let reply = raw::RedisModule_Call.unwrap()(
                self.ctx.as_ptr(),
                command.as_ptr(),
                format.as_ptr(),
                self.name.as_ptr(),
                member.as_ptr(),
            );
            if reply.is_null() {
                return Err(ErrorReply::new("ERR nested set command could not run"));
            }
            let result = integer_reply(reply);
            raw::RedisModule_FreeCallReply.unwrap()(reply);
            result
        }
    }
}

/// An integer reply's value; an error reply's text passes through.
///
/// # Safety
/// `reply` is a live, non-null call reply.
unsafe fn integer_reply(reply: *mut raw::RedisModuleCallReply) -> Result<i64, ErrorReply> {
    match raw::RedisModule_CallReplyType.unwrap()(reply) as isize {
        raw::REDISMODULE_REPLY_INTEGER => Ok(raw::RedisModule_CallReplyInteger.unwrap()(reply)),
        raw::REDISMODULE_REPLY_ERROR => {
            let mut len = 0;
            let ptr: *const c_char = raw::RedisModule_CallReplyStringPtr.unwrap()(reply, &mut len);
            let text = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
            Err(ErrorReply::owned(
                String::from_utf8_lossy(text).into_owned(),
            ))
        }
        _ => Err(ErrorReply::new(
            "ERR unexpected reply from a nested command",
        )),
    }
}
