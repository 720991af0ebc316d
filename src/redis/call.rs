//! Commands run through Redis itself: the set commands (Redis 7.0 gives
//! modules no low-level set API), a stream's XINFO (its last generated ID)
//! and, rarely, XTRIM (`stream.rs` appends through the module API).

use std::ffi::CStr;
use std::os::raw::c_char;

use redis_module::raw;

use super::entry::Arg;
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

/// `XTRIM key MAXLEN ~ maxlen` on this stream, not propagated: the trim
/// XADD's `MAXLEN ~` makes (the two share their default LIMIT), with its
/// `xtrim` event and WATCH signal when it deletes. No handle of this key
/// may be open.
pub(super) fn stream_trim_call(key: CommandKey<'_>, maxlen: i64) -> Result<(), ErrorReply> {
    // SAFETY: format "sccl": the key, two C strings, a long long; the
    // reply is read, then freed once.
    unsafe {
        let reply = raw::RedisModule_Call.unwrap()(
            key.ctx.as_ptr(),
            c"XTRIM".as_ptr(),
            c"sccl".as_ptr(),
            key.name.as_ptr(),
            c"MAXLEN".as_ptr(),
            c"~".as_ptr(),
            maxlen as std::os::raw::c_longlong,
        );
        if reply.is_null() {
            return Err(ErrorReply::new("ERR nested XTRIM could not run"));
        }
        let result = integer_reply(reply);
        raw::RedisModule_FreeCallReply.unwrap()(reply);
        result.map(drop)
    }
}

impl CommandKey<'_> {
    /// Can this stream take `entries` more entries with IDs of its own
    /// choosing (XADD `*`)? Only a stream whose last generated ID is within
    /// `entries` of the largest there is cannot: asked so that a call
    /// appending several refuses before the first rather than after it. A
    /// missing stream can. Not for the hot path: XINFO builds a reply.
    pub fn stream_has_ids_for(self, entries: u64) -> Result<bool, ErrorReply> {
        if self.open_read().is_none() {
            return Ok(true);
        }
        // SAFETY: format "cs": a C string, then the key; the reply and its
        // elements are read while it lives, then it is freed once.
        let last = unsafe {
            let reply = raw::RedisModule_Call.unwrap()(
                self.ctx.as_ptr(),
                c"XINFO".as_ptr(),
                c"cs".as_ptr(),
                c"STREAM".as_ptr(),
                self.name.as_ptr(),
            );
            if reply.is_null() {
                return Err(ErrorReply::new("ERR nested XINFO could not run"));
            }
            let length = raw::RedisModule_CallReplyLength.unwrap()(reply);
            let mut last = None;
            for at in (0..length.saturating_sub(1)).step_by(2) {
                let name = raw::RedisModule_CallReplyArrayElement.unwrap()(reply, at);
                if !name.is_null() && string_reply(name).as_deref() == Ok(b"last-generated-id") {
                    let value = raw::RedisModule_CallReplyArrayElement.unwrap()(reply, at + 1);
                    last = (!value.is_null())
                        .then(|| string_reply(value))
                        .and_then(Result::ok);
                    break;
                }
            }
            raw::RedisModule_FreeCallReply.unwrap()(reply);
            last
        };
        let parsed = last.as_deref().and_then(|id| {
            let (ms, seq) = std::str::from_utf8(id).ok()?.split_once('-')?;
            Some((ms.parse::<u64>().ok()?, seq.parse::<u64>().ok()?))
        });
        Ok(match parsed {
            Some((u64::MAX, seq)) => u64::MAX - seq >= entries,
            _ => true,
        })
    }
}

/// A string reply's bytes; an error reply's text passes through.
///
/// # Safety
/// `reply` is a live, non-null call reply.
unsafe fn string_reply(reply: *mut raw::RedisModuleCallReply) -> Result<Vec<u8>, ErrorReply> {
    let mut len = 0;
    let ptr: *const c_char = raw::RedisModule_CallReplyStringPtr.unwrap()(reply, &mut len);
    let bytes = if ptr.is_null() {
        &[][..]
    } else {
        std::slice::from_raw_parts(ptr.cast::<u8>(), len)
    };
    match raw::RedisModule_CallReplyType.unwrap()(reply) as isize {
        raw::REDISMODULE_REPLY_STRING => Ok(bytes.to_vec()),
        raw::REDISMODULE_REPLY_ERROR => Err(ErrorReply::owned(
            String::from_utf8_lossy(bytes).into_owned(),
        )),
        _ => Err(ErrorReply::new(
            "ERR unexpected reply from a nested command",
        )),
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
