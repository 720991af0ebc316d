//! The one place that touches Redis keys: opening them, reading and writing
//! counters in place (so the TTL is never dropped), windows as absolute
//! expiry times, set membership, and the side effects every real write owes:
//! propagation of its *effects*, keyspace events and `WATCH` signals.
//!
//! The module runs with `NO_IMPLICIT_SIGNAL_MODIFIED`, so opening a key for
//! writing and changing nothing disturbs no `WATCH`; [`KeyRef::written`] signals
//! the writes that happened.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::ptr::NonNull;

use redis_module::raw;

use crate::args;
use crate::reply::{ErrorReply, NOT_AN_INTEGER, WRONGTYPE};

pub type Ctx = *mut raw::RedisModuleCtx;

/// One command argument, read in place without copying.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Arg(NonNull<raw::RedisModuleString>);

impl Arg {
    /// # Safety
    /// `argv` must be the argument vector Redis passed to a command, alive
    /// for the whole call.
    pub unsafe fn from_argv<'a>(argv: *mut *mut raw::RedisModuleString, argc: c_int) -> &'a [Arg] {
        match usize::try_from(argc) {
            // Arg is a transparent wrapper of a non-null pointer.
            Ok(len) if !argv.is_null() => std::slice::from_raw_parts(argv.cast::<Arg>(), len),
            _ => &[],
        }
    }

    fn as_ptr(self) -> *mut raw::RedisModuleString {
        self.0.as_ptr()
    }
}

impl AsRef<[u8]> for Arg {
    fn as_ref(&self) -> &[u8] {
        let mut len = 0;
        // SAFETY: a live argument string; Redis keeps it for the call.
        unsafe {
            let ptr = raw::RedisModule_StringPtrLen.unwrap()(self.as_ptr(), &mut len);
            std::slice::from_raw_parts(ptr.cast::<u8>(), len)
        }
    }
}

/// Keyspace event classes, as `notify-keyspace-events` selects them.
#[derive(Clone, Copy)]
pub enum EventClass {
    Generic = raw::REDISMODULE_NOTIFY_GENERIC as isize,
    String = raw::REDISMODULE_NOTIFY_STRING as isize,
    Set = raw::REDISMODULE_NOTIFY_SET as isize,
}

/// The server clock in unix ms, the base EXPIRE uses.
pub fn now_ms() -> i64 {
    // SAFETY: a plain API call with no arguments.
    unsafe { raw::RedisModule_Milliseconds.unwrap()() }
}

/// A key named by the current command: what its effects are addressed to.
#[derive(Clone, Copy)]
pub struct KeyRef {
    ctx: Ctx,
    name: Arg,
}

impl KeyRef {
    pub fn new(ctx: Ctx, name: Arg) -> Self {
        KeyRef { ctx, name }
    }

    /// Opens the key for reading and writing, as a write command's lookup
    /// does (a logically expired key is gone).
    pub fn open(self) -> Key {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        // SAFETY: ctx and name belong to the running command.
        let handle =
            unsafe { raw::RedisModule_OpenKey.unwrap()(self.ctx, self.name.as_ptr(), mode).cast() };
        Key { at: self, handle }
    }

    /// Propagates the effect of this command to replicas and the AOF: one
    /// plain write per call, so no MULTI/EXEC wrapper is needed.
    pub fn propagate(&self, effect: Effect) {
        let key = self.name.as_ptr();
        // SAFETY: each format string matches the arguments passed after it.
        unsafe {
            let replicate = raw::RedisModule_Replicate.unwrap();
            match effect {
                // The increment travels as the client sent it: it parsed as
                // a canonical integer, so the replica reads the same number.
                Effect::IncrBy(increment) => replicate(
                    self.ctx,
                    c"INCRBY".as_ptr(),
                    c"ss".as_ptr(),
                    key,
                    increment.as_ptr(),
                ),
                Effect::SetKeepTtl(value) => replicate(
                    self.ctx,
                    c"SET".as_ptr(),
                    c"slc".as_ptr(),
                    key,
                    value,
                    c"KEEPTTL".as_ptr(),
                ),
                Effect::SetExpiringAt { value, at_ms } => replicate(
                    self.ctx,
                    c"SET".as_ptr(),
                    c"slcl".as_ptr(),
                    key,
                    value,
                    c"PXAT".as_ptr(),
                    at_ms,
                ),
            };
        }
    }

    /// Fires a keyspace event for this key.
    pub fn notify(&self, class: EventClass, event: &CStr) {
        // SAFETY: the event name is a NUL-terminated literal.
        unsafe {
            raw::RedisModule_NotifyKeyspaceEvent.unwrap()(
                self.ctx,
                class as c_int,
                event.as_ptr(),
                self.name.as_ptr(),
            );
        }
    }

    /// Marks the key as modified (WATCH, client-side caching) after a real
    /// write through a key handle.
    pub fn written(&self) {
        // SAFETY: ctx and name belong to the running command.
        unsafe { raw::RedisModule_SignalModifiedKey.unwrap()(self.ctx, self.name.as_ptr()) };
    }

    /// Runs a set command on this key through Redis itself (modules have no
    /// low-level set API). SADD and SREM bring their own propagation,
    /// events and WATCH signal. No handle of this key may be open meanwhile.
    pub fn set_call(&self, call: SetCall, member: Arg) -> Result<i64, ErrorReply> {
        let (command, format): (&CStr, &CStr) = match call {
            // `!` replicates the call, and only when it changed something.
            SetCall::Add => (c"SADD", c"!ss"),
            SetCall::Remove => (c"SREM", c"!ss"),
            SetCall::IsMember => (c"SISMEMBER", c"ss"),
        };
        // SAFETY: format "ss" takes two RedisModuleStrings.
        unsafe {
            let reply = raw::RedisModule_Call.unwrap()(
                self.ctx,
                command.as_ptr(),
                format.as_ptr(),
                self.name.as_ptr(),
                member.as_ptr(),
            );
            call_reply_integer(reply)
        }
    }
}

/// An open key handle; it also addresses effects to its key (`Deref`).
/// Closed on drop.
pub struct Key {
    at: KeyRef,
    handle: *mut raw::RedisModuleKey,
}

impl std::ops::Deref for Key {
    type Target = KeyRef;

    fn deref(&self) -> &KeyRef {
        &self.at
    }
}

impl Key {
    fn key_type(&self) -> c_int {
        // SAFETY: an open key.
        unsafe { raw::RedisModule_KeyType.unwrap()(self.handle) }
    }

    /// The integer counter held here: `None` for a missing key, WRONGTYPE for
    /// a non-string, INCRBY's error for a string that is not an integer.
    pub fn counter(&self) -> Result<Option<i64>, ErrorReply> {
        match self.key_type() as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => Ok(None),
            raw::REDISMODULE_KEYTYPE_STRING => {
                let mut len = 0;
                // SAFETY: a string key; the pointer is read before any other
                // call touches the key.
                let bytes = unsafe {
                    let ptr = raw::RedisModule_StringDMA.unwrap()(
                        self.handle,
                        &mut len,
                        raw::REDISMODULE_READ as c_int,
                    );
                    if ptr.is_null() {
                        return Err(WRONGTYPE);
                    }
                    std::slice::from_raw_parts(ptr.cast::<u8>(), len)
                };
                args::parse_i64(bytes).map(Some).ok_or(NOT_AN_INTEGER)
            }
            _ => Err(WRONGTYPE),
        }
    }

    /// Stores `value` as the counter, in place: the key's TTL stays exactly
    /// as it was (StringSet would drop it). Creates the key if missing.
    /// Callers read it with `counter` first, so it holds a string or nothing.
    pub fn set_counter(&mut self, value: i64) -> Result<(), ErrorReply> {
        let mut buffer = [0u8; 20];
        let digits = format_i64(value, &mut buffer);
        // SAFETY: a key open for writing; DMA is re-obtained after the
        // truncate, as the API requires, and written within its length.
        unsafe {
            let resized = raw::RedisModule_StringTruncate.unwrap()(self.handle, digits.len());
            let mut len = 0;
            let ptr = raw::RedisModule_StringDMA.unwrap()(
                self.handle,
                &mut len,
                raw::REDISMODULE_WRITE as c_int,
            );
            if resized != raw::REDISMODULE_OK as c_int || ptr.is_null() || len != digits.len() {
                return Err(ErrorReply::new(
                    "ERR redis-guard could not write the counter",
                ));
            }
            std::ptr::copy_nonoverlapping(digits.as_ptr(), ptr.cast::<u8>(), len);
        }
        Ok(())
    }

    /// The absolute expiry (unix ms), or `None` for no TTL.
    pub fn expires_at_ms(&self) -> Option<i64> {
        // SAFETY: an open key.
        let at = unsafe { raw::RedisModule_GetAbsExpire.unwrap()(self.handle) };
        (at != raw::REDISMODULE_NO_EXPIRE as i64).then_some(at)
    }

    pub fn set_expires_at_ms(&mut self, at_ms: i64) {
        // SAFETY: an open, non-empty key.
        unsafe { raw::RedisModule_SetAbsExpire.unwrap()(self.handle, at_ms) };
    }

    /// A set's cardinality without a nested call: 0 for a missing key,
    /// WRONGTYPE for anything but a set.
    pub fn set_len(&self) -> Result<i64, ErrorReply> {
        match self.key_type() as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => Ok(0),
            // SAFETY: an open set key.
            raw::REDISMODULE_KEYTYPE_SET => {
                Ok(unsafe { raw::RedisModule_ValueLength.unwrap()(self.handle) } as i64)
            }
            _ => Err(WRONGTYPE),
        }
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: opened in `open`, closed once.
        unsafe { raw::RedisModule_CloseKey.unwrap()(self.handle) };
    }
}

/// What a command changed, as the plain Redis write that reproduces it on a
/// replica or AOF reload. Expiry always travels as an absolute time.
#[derive(Clone, Copy)]
pub enum Effect {
    /// `INCRBY key increment` (the argument as received).
    IncrBy(Arg),
    /// `SET key value KEEPTTL`
    SetKeepTtl(i64),
    /// `SET key value PXAT at_ms`: a value that starts a new window.
    SetExpiringAt { value: i64, at_ms: i64 },
}

#[derive(Clone, Copy)]
pub enum SetCall {
    Add,
    Remove,
    IsMember,
}

/// Reads an integer reply and frees it; error replies pass through.
unsafe fn call_reply_integer(reply: *mut raw::RedisModuleCallReply) -> Result<i64, ErrorReply> {
    if reply.is_null() {
        return Err(ErrorReply::new("ERR nested set command could not run"));
    }
    let result = match raw::RedisModule_CallReplyType.unwrap()(reply) as isize {
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
            "ERR unexpected reply from nested set command",
        )),
    };
    raw::RedisModule_FreeCallReply.unwrap()(reply);
    result
}

/// Decimal digits of `value` in `buffer`, without allocating.
fn format_i64(value: i64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut magnitude = value.unsigned_abs();
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    if value < 0 {
        // 19 digits at most for i64, so there is room for the sign.
        start -= 1;
        buffer[start] = b'-';
    }
    &buffer[start..]
}

#[cfg(test)]
mod tests {
    use super::format_i64;

    #[test]
    fn formats_like_display() {
        for value in [0, 7, -7, 10, 1000, i64::MAX, i64::MIN, i64::MIN + 1] {
            let mut buffer = [0u8; 20];
            assert_eq!(format_i64(value, &mut buffer), value.to_string().as_bytes());
        }
    }
}
