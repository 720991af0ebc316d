//! What a real write owes the clients that look at its key: a keyspace
//! event, and the `WATCH` signal.
//!
//! The module runs with `NO_IMPLICIT_SIGNAL_MODIFIED`, so opening a key for
//! writing and changing nothing disturbs no `WATCH`;
//! [`CommandKey::signal_modified`] signals the writes that happened.

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::raw;

use super::key::CommandKey;

/// Keyspace event classes, as `notify-keyspace-events` selects them.
#[derive(Clone, Copy)]
pub enum EventClass {
    Generic = raw::REDISMODULE_NOTIFY_GENERIC as isize,
    String = raw::REDISMODULE_NOTIFY_STRING as isize,
    Set = raw::REDISMODULE_NOTIFY_SET as isize,
    /// Module data types' events (`d` in notify-keyspace-events).
    Module = raw::REDISMODULE_NOTIFY_MODULE as isize,
    SortedSet = raw::REDISMODULE_NOTIFY_ZSET as isize,
    /// Streams' events (`t`): `xadd`, `xtrim`.
    Stream = raw::REDISMODULE_NOTIFY_STREAM as isize,
}

impl CommandKey<'_> {
    /// Fires a keyspace event for this key.
    #[inline]
    pub fn notify(self, class: EventClass, event: &CStr) {
        // SAFETY: the event name is NUL-terminated; ctx and name belong to
        // the running command.
        unsafe {
            raw::RedisModule_NotifyKeyspaceEvent.unwrap()(
                self.ctx.as_ptr(),
                class as c_int,
                event.as_ptr(),
                self.name.as_ptr(),
            );
        }
    }

    /// Tells `WATCH` (and client-side caching) that the key changed: owed
    /// by every real write made through an open key.
    #[inline]
    pub fn signal_modified(self) {
        // SAFETY: ctx and name belong to the running command.
        unsafe {
            raw::RedisModule_SignalModifiedKey.unwrap()(self.ctx.as_ptr(), self.name.as_ptr())
        };
    }
}
