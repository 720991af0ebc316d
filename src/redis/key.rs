//! The key a command names, and opening it: for writing or reading, as
//! the command's own lookup does, closed on drop; whether it exists and
//! its expiry, always as an absolute time. What an open key holds is read
//! and written in `access.rs`; what a write owes afterwards (propagation,
//! events, the `WATCH` signal) in `propagate.rs` and `events.rs`.

use std::os::raw::c_int;
use std::ptr::NonNull;

use redis_module::raw;

use super::entry::{Arg, Ctx};

/// A key named by the running command (its argv[1], or another key among
/// its arguments): what its effects, events and signals are addressed to,
/// open or not.
#[derive(Clone, Copy)]
pub struct CommandKey<'call> {
    pub(super) ctx: Ctx<'call>,
    pub(super) name: Arg<'call>,
}

impl<'call> CommandKey<'call> {
    #[inline]
    pub fn new(ctx: Ctx<'call>, name: Arg<'call>) -> Self {
        CommandKey { ctx, name }
    }

    /// Opens the key for reading and writing, as a write command's lookup
    /// does (a logically expired key is gone). Closed on drop.
    #[inline]
    pub fn open(self) -> OpenKey<'call> {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        // SAFETY: ctx and name belong to the running command.
        let handle = unsafe {
            raw::RedisModule_OpenKey.unwrap()(self.ctx.as_ptr(), self.name.as_ptr(), mode)
        };
        OpenKey {
            handle: NonNull::new(handle.cast()).expect("OpenKey in write mode returns a handle"),
            _key: self,
        }
    }

    /// Opens the key for reading only, as a read command's lookup does;
    /// `None` for a missing key.
    #[inline]
    pub fn open_read(self) -> Option<OpenKey<'call>> {
        let mode = raw::REDISMODULE_READ as c_int;
        // SAFETY: ctx and name belong to the running command.
        let handle = unsafe {
            raw::RedisModule_OpenKey.unwrap()(self.ctx.as_ptr(), self.name.as_ptr(), mode)
        };
        NonNull::new(handle.cast()).map(|handle| OpenKey { handle, _key: self })
    }
}

/// An open key handle, closed on drop.
pub struct OpenKey<'call> {
    pub(super) handle: NonNull<raw::RedisModuleKey>,
    pub(super) _key: CommandKey<'call>,
}

impl OpenKey<'_> {
    #[inline]
    pub(super) fn key_type(&self) -> c_int {
        // SAFETY: an open key.
        unsafe { raw::RedisModule_KeyType.unwrap()(self.handle.as_ptr()) }
    }

    /// Does the key exist, of any type?
    #[inline]
    pub fn exists(&self) -> bool {
        self.key_type() as isize != raw::REDISMODULE_KEYTYPE_EMPTY
    }

    /// The absolute expiry (unix ms), or `None` for no TTL.
    #[inline]
    pub fn expires_at_ms(&self) -> Option<i64> {
        // SAFETY: an open key.
        let at = unsafe { raw::RedisModule_GetAbsExpire.unwrap()(self.handle.as_ptr()) };
        (at != raw::REDISMODULE_NO_EXPIRE as i64).then_some(at)
    }

    /// Deletes the key (open for writing), as DEL does; the caller owes
    /// the `del` event, the propagation and the WATCH signal.
    #[inline]
    pub fn delete(&mut self) {
        // SAFETY: a key open for writing; on an empty one the API does
        // nothing.
        unsafe { raw::RedisModule_DeleteKey.unwrap()(self.handle.as_ptr()) };
    }

    /// Sets the absolute expiry of a key that exists (just written).
    #[inline]
    pub fn set_expires_at_ms(&mut self, at_ms: i64) {
        // SAFETY: an open key; on an empty one the API only returns an error.
        unsafe { raw::RedisModule_SetAbsExpire.unwrap()(self.handle.as_ptr(), at_ms) };
    }
}

impl Drop for OpenKey<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: opened in `open`, closed once.
        unsafe { raw::RedisModule_CloseKey.unwrap()(self.handle.as_ptr()) };
    }
}
