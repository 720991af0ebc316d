//! Appending to a stream through the module API (`RedisModule_StreamAdd`,
//! `RedisModule_StreamTrimByLength`), doing what `XADD key [MAXLEN ~ n] *
//! field value ...` does on the primary, without running a command per
//! entry: the same entry and ID, the keyspace events `xadd` and, when it
//! trimmed, `xtrim`, the `WATCH` signal, clients blocked on the stream
//! woken, and the same approximate trim. Not propagated: the caller owes
//! replicas and the AOF the XADD Redis would rewrite its own to.

use std::os::raw::{c_int, c_longlong};

use redis_module::raw;

use super::call::stream_trim_call;
use super::events::EventClass;
use super::key::CommandKey;
use super::propagate::Word;
use crate::reply::ErrorReply;

/// XADD's own error for a stream whose IDs are used up.
pub const STREAM_IDS_USED_UP: ErrorReply =
    ErrorReply::new("ERR The stream has exhausted the last possible ID, unable to add more items");

/// XADD's own error for an entry too large for one listpack.
const ELEMENTS_TOO_LARGE: ErrorReply = ErrorReply::new("ERR Elements are too large to be stored");

/// The errno values StreamAdd sets for those two (the same on every
/// platform Redis runs on).
const EFBIG: i32 = 27;
const ERANGE: i32 = 34;

/// The most entries XADD's approximate trim deletes in one call under any
/// `stream-node-max-entries` (100 nodes of it, at least 10,000: the
/// default's 100 × 100, and 10,000 when the setting is 0). While one trim
/// can delete no more than this, `RedisModule_StreamTrimByLength` (whose
/// limit is 100 nodes, not clamped) deletes what XADD would.
const TRIM_AGREES_UP_TO: i64 = 10_000;

/// An entry's ID: `ms-seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl std::fmt::Display for StreamId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

impl CommandKey<'_> {
    /// Appends an entry of `fields` (field, value, ...) with an ID of the
    /// stream's choosing, as `XADD key [MAXLEN ~ maxlen] * fields...` does
    /// (a missing stream is created; the caller checked the key is missing
    /// or a stream); not propagated. The new entry's ID, and the stream's
    /// length after any trim. A stream whose last ID is the largest there
    /// is refuses with XADD's error, and nothing is written. No handle of
    /// this key may be open.
    pub fn stream_add(
        self,
        maxlen: Option<i64>,
        fields: &[Word<'_>],
    ) -> Result<(StreamId, i64), ErrorReply> {
        let ctx = self.ctx.as_ptr();
        let key = self.open();
        let handle = key.handle.as_ptr();
        let mut id = raw::RedisModuleStreamID { ms: 0, seq: 0 };
        let mut inline = [std::ptr::null_mut(); INLINE];
        let mut long = Vec::new();
        let argv = match inline.get_mut(..fields.len()) {
            Some(slots) => slots,
            None => {
                long.resize(fields.len(), std::ptr::null_mut());
                &mut long[..]
            }
        };
        for (slot, word) in argv.iter_mut().zip(fields) {
            // SAFETY: the running command's context.
            *slot = unsafe { word.to_plain_string(ctx) };
        }
        // SAFETY: an open key in write mode; `argv` holds fields.len()
        // plain strings, read by StreamAdd as fields.len() / 2 field-value
        // pairs (it copies their bytes into the stream); those made here
        // are freed once after it; `id` is written by StreamAdd.
        let added = unsafe {
            let added = raw::RedisModule_StreamAdd.unwrap()(
                handle,
                raw::REDISMODULE_STREAM_ADD_AUTOID as c_int,
                &mut id,
                argv.as_mut_ptr(),
                (fields.len() / 2) as i64,
            );
            // Read before anything else may set it.
            let errno = std::io::Error::last_os_error().raw_os_error();
            for (&string, word) in argv.iter().zip(fields) {
                if word.is_made_plain() {
                    raw::RedisModule_FreeString.unwrap()(ctx, string);
                }
            }
            (added == raw::REDISMODULE_OK as c_int)
                .then_some(())
                .ok_or(errno)
        };
        if let Err(errno) = added {
            return Err(match errno {
                Some(EFBIG) => STREAM_IDS_USED_UP,
                Some(ERANGE) => ELEMENTS_TOO_LARGE,
                _ => ErrorReply::new("ERR the stream refused the entry"),
            });
        }
        let id = StreamId {
            ms: id.ms,
            seq: id.seq,
        };
        // XADD's order: the WATCH signal, then `xadd`, then the trim.
        self.signal_modified();
        self.notify(EventClass::Stream, c"xadd");
        if let Some(maxlen) = maxlen {
            if key.length() - maxlen > TRIM_AGREES_UP_TO {
                // A trim that may delete more than the API's limit and
                // XADD's agree on: XTRIM, which shares XADD's, and fires
                // `xtrim` itself.
                drop(key);
                stream_trim_call(self, maxlen)?;
                let length = self.open_read().map_or(0, |stream| stream.length());
                return Ok((id, length));
            }
            // SAFETY: an open key in write mode holding a stream.
            let deleted = unsafe {
                raw::RedisModule_StreamTrimByLength.unwrap()(
                    handle,
                    raw::REDISMODULE_STREAM_TRIM_APPROX as c_int,
                    maxlen as c_longlong,
                )
            };
            if deleted > 0 {
                self.notify(EventClass::Stream, c"xtrim");
            }
        }
        Ok((id, key.length()))
    }
}

/// Fields of an entry kept off the heap.
const INLINE: usize = 16;
