//! Set commands run through Redis itself: Redis 7.0 gives modules no
//! low-level set API.

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

impl CommandKey<'_> {
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
