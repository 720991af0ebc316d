//! The key a command names: opening it, reading and writing integers in
//! place (so the TTL is never dropped), expiry as absolute times, and the
//! side effects every real write owes: propagation of its *effects*,
//! keyspace events and the `WATCH` signal.
//!
//! The module runs with `NO_IMPLICIT_SIGNAL_MODIFIED`, so opening a key for
//! writing and changing nothing disturbs no `WATCH`;
//! [`CommandKey::signal_modified`] signals the writes that happened.

use std::ffi::CStr;
use std::os::raw::c_int;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};

use redis_module::raw;

use super::command::{Arg, Ctx};
use super::datatype::{into_raw, DataType, ModuleValue};
use crate::integer;
use crate::reply::{ErrorReply, NOT_AN_INTEGER, WRONGTYPE};

/// Keyspace event classes, as `notify-keyspace-events` selects them.
#[derive(Clone, Copy)]
pub enum EventClass {
    Generic = raw::REDISMODULE_NOTIFY_GENERIC as isize,
    String = raw::REDISMODULE_NOTIFY_STRING as isize,
    Set = raw::REDISMODULE_NOTIFY_SET as isize,
    /// Module data types' events (`d` in notify-keyspace-events).
    Module = raw::REDISMODULE_NOTIFY_MODULE as isize,
    SortedSet = raw::REDISMODULE_NOTIFY_ZSET as isize,
}

/// What a command changed, as the plain Redis write that reproduces it on a
/// replica or AOF reload. Expiry always travels as an absolute time.
#[derive(Clone, Copy)]
pub enum Effect<'call> {
    /// `INCRBY key increment`, the argument as received: it parsed as a
    /// canonical integer, so the replica reads the same number.
    IncrBy(Arg<'call>),
    /// `SET key value KEEPTTL`
    SetKeepTtl(i64),
    /// `SET key value PXAT at_ms`
    SetExpiringAt { value: i64, at_ms: i64 },
    /// `ZREMRANGEBYSCORE key -inf cutoff`
    ZsetDropUpTo(i64),
    /// `ZADD key score member`
    ZsetAdd { score: i64, member: Arg<'call> },
    /// `PEXPIREAT key at_ms`
    ExpireAt(i64),
}

/// A key named by the running command (its argv[1], or an alert's
/// stream): what its effects, events and signals are addressed to, open
/// or not.
#[derive(Clone, Copy)]
pub struct CommandKey<'call> {
    pub(super) ctx: Ctx<'call>,
    pub(super) name: Arg<'call>,
}

impl<'call> CommandKey<'call> {
    pub fn new(ctx: Ctx<'call>, name: Arg<'call>) -> Self {
        CommandKey { ctx, name }
    }

    /// Opens the key for reading and writing, as a write command's lookup
    /// does (a logically expired key is gone). Closed on drop.
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
    pub fn open_read(self) -> Option<OpenKey<'call>> {
        let mode = raw::REDISMODULE_READ as c_int;
        // SAFETY: ctx and name belong to the running command.
        let handle = unsafe {
            raw::RedisModule_OpenKey.unwrap()(self.ctx.as_ptr(), self.name.as_ptr(), mode)
        };
        NonNull::new(handle.cast()).map(|handle| OpenKey { handle, _key: self })
    }

    /// WRONGTYPE unless this key is missing or a stream (an alert's
    /// stream, checked before anything is written).
    pub fn require_stream(self) -> Result<(), ErrorReply> {
        match self.open_read() {
            Some(key) if key.key_type() as isize != raw::REDISMODULE_KEYTYPE_STREAM => {
                Err(WRONGTYPE)
            }
            _ => Ok(()),
        }
    }

    /// Propagates `command key words...` to replicas and the AOF, one
    /// command for the whole call (several in one call travel in one
    /// MULTI/EXEC). Words become RedisModuleStrings without copying where
    /// they can: the call's own arguments and kept words are passed by
    /// reference; numbers and bytes are made here and freed once Replicate
    /// has taken its references.
    pub fn replicate_words(self, command: &CStr, words: &[Word<'_>]) {
        const INLINE: usize = 16;
        let (ctx, key) = (self.ctx.as_ptr(), self.name.as_ptr());
        let mut inline = [std::ptr::null_mut(); INLINE];
        let mut long = Vec::new();
        let s = match inline.get_mut(..words.len()) {
            Some(slots) => slots,
            None => {
                long.resize(words.len(), std::ptr::null_mut());
                &mut long[..]
            }
        };
        for (slot, word) in s.iter_mut().zip(words) {
            // SAFETY: the running command's context.
            *slot = unsafe { word.to_string(ctx) };
        }
        // SAFETY: each format is "s" (the key) and one "s" per string
        // passed after it (a fixed format per count: "sv" costs Redis a
        // reallocation); longer lists go as "sv", an array of them. Every
        // string is alive until Replicate has taken its reference; those
        // made here are freed once, after it.
        unsafe {
            let replicate = raw::RedisModule_Replicate.unwrap();
            let command = command.as_ptr();
            match s.len() {
                0 => return,
                1 => replicate(ctx, command, c"ss".as_ptr(), key, s[0]),
                2 => replicate(ctx, command, c"sss".as_ptr(), key, s[0], s[1]),
                3 => replicate(ctx, command, c"ssss".as_ptr(), key, s[0], s[1], s[2]),
                4 => replicate(ctx, command, c"sssss".as_ptr(), key, s[0], s[1], s[2], s[3]),
                5 => replicate(
                    ctx,
                    command,
                    c"ssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                ),
                6 => replicate(
                    ctx,
                    command,
                    c"sssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                ),
                7 => replicate(
                    ctx,
                    command,
                    c"ssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                ),
                8 => replicate(
                    ctx,
                    command,
                    c"sssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                    s[7],
                ),
                9 => replicate(
                    ctx,
                    command,
                    c"ssssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                    s[7],
                    s[8],
                ),
                10 => replicate(
                    ctx,
                    command,
                    c"sssssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                    s[7],
                    s[8],
                    s[9],
                ),
                11 => replicate(
                    ctx,
                    command,
                    c"ssssssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                    s[7],
                    s[8],
                    s[9],
                    s[10],
                ),
                12 => replicate(
                    ctx,
                    command,
                    c"sssssssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                    s[7],
                    s[8],
                    s[9],
                    s[10],
                    s[11],
                ),
                13 => replicate(
                    ctx,
                    command,
                    c"ssssssssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                    s[7],
                    s[8],
                    s[9],
                    s[10],
                    s[11],
                    s[12],
                ),
                14 => replicate(
                    ctx,
                    command,
                    c"sssssssssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                    s[7],
                    s[8],
                    s[9],
                    s[10],
                    s[11],
                    s[12],
                    s[13],
                ),
                15 => replicate(
                    ctx,
                    command,
                    c"ssssssssssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                    s[7],
                    s[8],
                    s[9],
                    s[10],
                    s[11],
                    s[12],
                    s[13],
                    s[14],
                ),
                16 => replicate(
                    ctx,
                    command,
                    c"sssssssssssssssss".as_ptr(),
                    key,
                    s[0],
                    s[1],
                    s[2],
                    s[3],
                    s[4],
                    s[5],
                    s[6],
                    s[7],
                    s[8],
                    s[9],
                    s[10],
                    s[11],
                    s[12],
                    s[13],
                    s[14],
                    s[15],
                ),
                len => replicate(ctx, command, c"sv".as_ptr(), key, s.as_ptr(), len),
            };
            for (&string, word) in s.iter().zip(words) {
                if word.is_made() {
                    raw::RedisModule_FreeString.unwrap()(ctx, string);
                }
            }
        }
    }

    /// Propagates an effect of this command to replicas and the AOF: a
    /// plain write.
    pub fn replicate(self, effect: Effect) {
        let (command, words): (&CStr, [Option<Word>; 3]) = match effect {
            Effect::IncrBy(increment) => (c"INCRBY", [Some(Word::Arg(increment)), None, None]),
            Effect::SetKeepTtl(value) => (
                c"SET",
                [Some(Word::Number(value)), Some(Word::Kept(&KEEPTTL)), None],
            ),
            Effect::SetExpiringAt { value, at_ms } => (
                c"SET",
                [
                    Some(Word::Number(value)),
                    Some(Word::Kept(&PXAT)),
                    Some(Word::Number(at_ms)),
                ],
            ),
            Effect::ZsetDropUpTo(cutoff) => (
                c"ZREMRANGEBYSCORE",
                [
                    Some(Word::Kept(&MINUS_INF)),
                    Some(Word::Number(cutoff)),
                    None,
                ],
            ),
            Effect::ZsetAdd { score, member } => (
                c"ZADD",
                [Some(Word::Number(score)), Some(Word::Arg(member)), None],
            ),
            Effect::ExpireAt(at_ms) => (c"PEXPIREAT", [Some(Word::Number(at_ms)), None, None]),
        };
        let len = words.iter().flatten().count();
        let words = words.map(|word| word.unwrap_or(Word::Number(0)));
        self.replicate_words(command, &words[..len]);
    }

    /// Fires a keyspace event for this key.
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
    pub fn signal_modified(self) {
        // SAFETY: ctx and name belong to the running command.
        unsafe {
            raw::RedisModule_SignalModifiedKey.unwrap()(self.ctx.as_ptr(), self.name.as_ptr())
        };
    }
}

/// An argument of a propagated write (see
/// [`CommandKey::replicate_words`]).
#[derive(Clone, Copy)]
pub enum Word<'a> {
    /// One of the call's own arguments.
    Arg(Arg<'a>),
    /// A fixed word of a wire format (`PXAT`, an op's name).
    Kept(&'static KeptWord),
    Number(i64),
    /// A count or claim number that may pass i64 (totals).
    Unsigned(u64),
    /// Bytes of the module's own (a campaign's user, an alert's field).
    Bytes(&'a [u8]),
}

impl Word<'_> {
    /// The word as the bytes it propagates (what an AOF rewrite writes).
    pub fn to_vec(self) -> Vec<u8> {
        match self {
            Word::Arg(arg) => arg.as_bytes().to_vec(),
            Word::Kept(word) => word.text.to_bytes().to_vec(),
            Word::Number(n) => n.to_string().into_bytes(),
            Word::Unsigned(n) => n.to_string().into_bytes(),
            Word::Bytes(bytes) => bytes.to_vec(),
        }
    }

    /// Is its string made for each call (and freed after it)?
    fn is_made(&self) -> bool {
        matches!(self, Word::Number(_) | Word::Unsigned(_) | Word::Bytes(_))
    }

    /// The word as a string to propagate; a new one where
    /// [`Word::is_made`], which the caller frees.
    ///
    /// # Safety
    /// `ctx` is the running command's context.
    unsafe fn to_string(self, ctx: *mut raw::RedisModuleCtx) -> *mut raw::RedisModuleString {
        match self {
            Word::Arg(arg) => arg.as_ptr(),
            Word::Kept(word) => word.string(),
            Word::Number(n) => raw::RedisModule_CreateStringFromLongLong.unwrap()(ctx, n),
            Word::Unsigned(n) => make_string(ctx, n.to_string().as_bytes()),
            Word::Bytes(bytes) => make_string(ctx, bytes),
        }
    }
}

/// Words gathered for one propagated command: inline up to 16 (a hot
/// path's few ops), on the heap past that (a replay's long lists).
pub struct Words<'a> {
    inline: [Word<'a>; 16],
    len: usize,
    long: Vec<Word<'a>>,
}

impl<'a> Words<'a> {
    #[inline]
    pub fn new() -> Self {
        Words {
            inline: [Word::Number(0); 16],
            len: 0,
            long: Vec::new(),
        }
    }

    #[inline]
    pub fn extend(&mut self, words: &[Word<'a>]) {
        let end = self.len + words.len();
        match self.inline.get_mut(self.len..end) {
            Some(slots) if self.long.is_empty() => slots.copy_from_slice(words),
            _ => {
                if self.long.is_empty() {
                    self.long.extend_from_slice(&self.inline[..self.len]);
                }
                self.long.extend_from_slice(words);
            }
        }
        self.len = end;
    }

    pub fn as_slice(&self) -> &[Word<'a>] {
        if self.long.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.long
        }
    }

    /// The words as the arguments they propagate (what an AOF rewrite
    /// writes, and an apply command parses back).
    pub fn to_args(&self) -> Vec<Vec<u8>> {
        self.as_slice().iter().map(|word| word.to_vec()).collect()
    }
}

impl Default for Words<'_> {
    fn default() -> Self {
        Words::new()
    }
}

static KEEPTTL: KeptWord = KeptWord::new(c"KEEPTTL");
static PXAT: KeptWord = KeptWord::new(c"PXAT");
static MINUS_INF: KeptWord = KeptWord::new(c"-inf");

/// A fixed word of propagated writes (`PXAT`, an apply command's op
/// names), made into a RedisModuleString the first time it is sent and
/// kept for the life of the process: propagating it then costs Redis a
/// reference count instead of an allocation. Only the main thread
/// propagates, so loads and stores need no more than relaxed order.
pub struct KeptWord {
    text: &'static CStr,
    string: AtomicPtr<raw::RedisModuleString>,
}

impl KeptWord {
    pub const fn new(text: &'static CStr) -> Self {
        KeptWord {
            text,
            string: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    fn string(&self) -> *mut raw::RedisModuleString {
        let kept = self.string.load(Ordering::Relaxed);
        if !kept.is_null() {
            return kept;
        }
        // SAFETY: a string made without a context is owned by nobody but
        // this word, which keeps it for the life of the process; Redis only
        // takes and drops references to it on the main thread, as for any
        // propagated argument.
        let made = unsafe { make_string(std::ptr::null_mut(), self.text.to_bytes()) };
        self.string.store(made, Ordering::Relaxed);
        made
    }
}

/// A new string of `bytes`.
///
/// # Safety
/// `ctx` is the running command's context, or null for a string nobody
/// frees.
unsafe fn make_string(ctx: *mut raw::RedisModuleCtx, bytes: &[u8]) -> *mut raw::RedisModuleString {
    raw::RedisModule_CreateString.unwrap()(ctx, bytes.as_ptr().cast(), bytes.len())
}

/// An open key handle, closed on drop.
pub struct OpenKey<'call> {
    handle: NonNull<raw::RedisModuleKey>,
    _key: CommandKey<'call>,
}

impl<'call> OpenKey<'call> {
    pub(super) fn key_type(&self) -> c_int {
        // SAFETY: an open key.
        unsafe { raw::RedisModule_KeyType.unwrap()(self.handle.as_ptr()) }
    }

    /// The integer held here: `None` for a missing key, WRONGTYPE for a
    /// non-string, INCRBY's error for a string that is not an integer.
    pub fn read_integer(&self) -> Result<Option<i64>, ErrorReply> {
        match self.key_type() as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => Ok(None),
            raw::REDISMODULE_KEYTYPE_STRING => {
                let mut len = 0;
                // SAFETY: a string key; its bytes are parsed before any
                // other call touches the key.
                let bytes = unsafe {
                    let ptr = raw::RedisModule_StringDMA.unwrap()(
                        self.handle.as_ptr(),
                        &mut len,
                        raw::REDISMODULE_READ as c_int,
                    );
                    if ptr.is_null() {
                        return Err(WRONGTYPE);
                    }
                    std::slice::from_raw_parts(ptr.cast::<u8>(), len)
                };
                integer::parse(bytes).map(Some).ok_or(NOT_AN_INTEGER)
            }
            _ => Err(WRONGTYPE),
        }
    }

    /// Stores `value` as a decimal string, in place: the key's TTL stays
    /// exactly as it was (StringSet would drop it). Creates a missing key.
    /// Callers read it with `read_integer` first, so it holds a string or
    /// nothing.
    pub fn write_integer(&mut self, value: i64) -> Result<(), ErrorReply> {
        let mut buffer = [0u8; integer::MAX_DIGITS];
        let digits = integer::format(value, &mut buffer);
        // SAFETY: a key open for writing; DMA is re-obtained after the
        // truncate, as the API requires, and written within its length.
        unsafe {
            let handle = self.handle.as_ptr();
            let resized = raw::RedisModule_StringTruncate.unwrap()(handle, digits.len());
            let mut len = 0;
            let ptr = raw::RedisModule_StringDMA.unwrap()(
                handle,
                &mut len,
                raw::REDISMODULE_WRITE as c_int,
            );
            if resized != raw::REDISMODULE_OK as c_int || ptr.is_null() || len != digits.len() {
                return Err(ErrorReply::new("ERR redis-guard could not write the value"));
            }
            std::ptr::copy_nonoverlapping(digits.as_ptr(), ptr.cast::<u8>(), len);
        }
        Ok(())
    }

    /// The absolute expiry (unix ms), or `None` for no TTL.
    pub fn expires_at_ms(&self) -> Option<i64> {
        // SAFETY: an open key.
        let at = unsafe { raw::RedisModule_GetAbsExpire.unwrap()(self.handle.as_ptr()) };
        (at != raw::REDISMODULE_NO_EXPIRE as i64).then_some(at)
    }

    /// Sets the absolute expiry of a key that exists (just written).
    pub fn set_expires_at_ms(&mut self, at_ms: i64) {
        // SAFETY: an open key; on an empty one the API only returns an error.
        unsafe { raw::RedisModule_SetAbsExpire.unwrap()(self.handle.as_ptr(), at_ms) };
    }

    /// Does the key exist, of any type?
    pub fn exists(&self) -> bool {
        self.key_type() as isize != raw::REDISMODULE_KEYTYPE_EMPTY
    }

    /// The value of data type `T` held here: `None` for a missing key,
    /// WRONGTYPE for a key of any other type.
    pub fn value<T: ModuleValue>(&self, data_type: &DataType<T>) -> Result<Option<&T>, ErrorReply> {
        self.value_ptr(data_type)
            // SAFETY: a value of this type, owned by the key, which stays
            // open (and so the value alive) while `self` is borrowed.
            .map(|value| value.map(|ptr| unsafe { &*ptr }))
    }

    /// As [`OpenKey::value`], for changing it in place.
    pub fn value_mut<T: ModuleValue>(
        &mut self,
        data_type: &DataType<T>,
    ) -> Result<Option<&mut T>, ErrorReply> {
        self.value_ptr(data_type)
            // SAFETY: as in `value`; `&mut self` makes the borrow unique.
            .map(|value| value.map(|ptr| unsafe { &mut *ptr }))
    }

    fn value_ptr<T: ModuleValue>(
        &self,
        data_type: &DataType<T>,
    ) -> Result<Option<*mut T>, ErrorReply> {
        match self.key_type() as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => Ok(None),
            raw::REDISMODULE_KEYTYPE_MODULE => {
                // SAFETY: an open module key; its value is of our type when
                // the type pointers match, and was made by `into_raw`.
                unsafe {
                    let handle = self.handle.as_ptr();
                    if raw::RedisModule_ModuleTypeGetType.unwrap()(handle) != data_type.raw() {
                        return Err(WRONGTYPE);
                    }
                    Ok(Some(
                        raw::RedisModule_ModuleTypeGetValue.unwrap()(handle).cast::<T>(),
                    ))
                }
            }
            _ => Err(WRONGTYPE),
        }
    }

    /// Stores `value` as this (empty, writable) key's value.
    pub fn set_value<T: ModuleValue>(
        &mut self,
        data_type: &DataType<T>,
        value: T,
    ) -> Result<(), ErrorReply> {
        let value = into_raw(value);
        // SAFETY: a key open for writing; on success Redis owns the value
        // and frees it with the type's `free`; on failure it is ours.
        unsafe {
            let set = raw::RedisModule_ModuleTypeSetValue.unwrap();
            if set(self.handle.as_ptr(), data_type.raw(), value) != raw::REDISMODULE_OK as c_int {
                drop(Box::from_raw(value.cast::<T>()));
                return Err(ErrorReply::new("ERR redis-guard could not store the value"));
            }
        }
        Ok(())
    }

    /// A sorted set's cardinality without a nested call: 0 for a missing
    /// key, WRONGTYPE for anything but a sorted set.
    pub fn zset_len(&self) -> Result<i64, ErrorReply> {
        match self.key_type() as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => Ok(0),
            // SAFETY: an open sorted-set key.
            raw::REDISMODULE_KEYTYPE_ZSET => {
                Ok(unsafe { raw::RedisModule_ValueLength.unwrap()(self.handle.as_ptr()) } as i64)
            }
            _ => Err(WRONGTYPE),
        }
    }

    /// The members of this sorted set scored `cutoff` or less, to be
    /// removed with [`OpenKey::zset_remove`] once the call has decided.
    pub fn zset_up_to(&self, cutoff: i64) -> ZsetMembers<'call> {
        let handle = self.handle.as_ptr();
        let mut members = ZsetMembers {
            ctx: self._key.ctx,
            strings: Vec::new(),
        };
        // SAFETY: a sorted-set key (the caller checked the type); the range
        // is walked to its end and stopped; each member string Redis
        // returns is ours, kept in `members`, which frees it once.
        unsafe {
            let started = raw::RedisModule_ZsetFirstInScoreRange.unwrap()(
                handle,
                raw::REDISMODULE_NEGATIVE_INFINITE,
                cutoff as f64,
                0,
                0,
            );
            if started == raw::REDISMODULE_OK as c_int {
                while raw::RedisModule_ZsetRangeEndReached.unwrap()(handle) == 0 {
                    let mut score = 0.0;
                    let member =
                        raw::RedisModule_ZsetRangeCurrentElement.unwrap()(handle, &mut score);
                    if member.is_null() {
                        break;
                    }
                    members.strings.push(member);
                    if raw::RedisModule_ZsetRangeNext.unwrap()(handle) == 0 {
                        break;
                    }
                }
                raw::RedisModule_ZsetRangeStop.unwrap()(handle);
            }
        }
        members
    }

    /// Removes `members` (found by [`OpenKey::zset_up_to`]). An emptied
    /// set is deleted, as ZREMRANGEBYSCORE does.
    pub fn zset_remove(&mut self, members: ZsetMembers<'_>) {
        for &member in &members.strings {
            // SAFETY: a sorted-set key open for writing; the member is a
            // live string owned by `members`.
            unsafe {
                raw::RedisModule_ZsetRem.unwrap()(
                    self.handle.as_ptr(),
                    member,
                    std::ptr::null_mut(),
                )
            };
        }
    }

    /// The score of `member` in this sorted set; `None` if it is not
    /// there (or the key is missing).
    pub fn zset_score(&self, member: Arg<'_>) -> Option<f64> {
        let mut score = 0.0;
        // SAFETY: an open key, empty or a sorted set (the caller checked);
        // the member is a live argument of this call.
        let found = unsafe {
            raw::RedisModule_ZsetScore.unwrap()(self.handle.as_ptr(), member.as_ptr(), &mut score)
        };
        (found == raw::REDISMODULE_OK as c_int).then_some(score)
    }

    /// Adds `member` with `score`, or re-scores it: whether it was new,
    /// and whether anything changed (a re-score to the same score does not).
    pub fn zset_add(&mut self, score: i64, member: Arg<'_>) -> Result<(bool, bool), ErrorReply> {
        let mut flags: c_int = 0;
        // SAFETY: a key open for writing, empty or a sorted set; the
        // member is a live argument of this call.
        let added = unsafe {
            raw::RedisModule_ZsetAdd.unwrap()(
                self.handle.as_ptr(),
                score as f64,
                member.as_ptr(),
                &mut flags,
            )
        };
        if added != raw::REDISMODULE_OK as c_int {
            return Err(ErrorReply::new(
                "ERR redis-guard could not add to the sorted set",
            ));
        }
        let flags = flags as u32;
        let new = flags & raw::REDISMODULE_ZADD_ADDED != 0;
        Ok((new, new || flags & raw::REDISMODULE_ZADD_UPDATED != 0))
    }

    /// How many elements the value holds (a stream's entries).
    pub fn length(&self) -> i64 {
        // SAFETY: an open key.
        unsafe { raw::RedisModule_ValueLength.unwrap()(self.handle.as_ptr()) as i64 }
    }

    /// A set's cardinality without a nested call: 0 for a missing key,
    /// WRONGTYPE for anything but a set.
    pub fn set_len(&self) -> Result<i64, ErrorReply> {
        match self.key_type() as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => Ok(0),
            // SAFETY: an open set key.
            raw::REDISMODULE_KEYTYPE_SET => {
                Ok(unsafe { raw::RedisModule_ValueLength.unwrap()(self.handle.as_ptr()) } as i64)
            }
            _ => Err(WRONGTYPE),
        }
    }
}

/// Members of a sorted set, as Redis handed them to the module: freed on
/// drop.
pub struct ZsetMembers<'call> {
    ctx: Ctx<'call>,
    strings: Vec<*mut raw::RedisModuleString>,
}

impl ZsetMembers<'_> {
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

impl Drop for ZsetMembers<'_> {
    fn drop(&mut self) {
        for &string in &self.strings {
            // SAFETY: each string was returned to the module by the range
            // API, is owned here and freed once.
            unsafe { raw::RedisModule_FreeString.unwrap()(self.ctx.as_ptr(), string) };
        }
    }
}

impl Drop for OpenKey<'_> {
    fn drop(&mut self) {
        // SAFETY: opened in `open`, closed once.
        unsafe { raw::RedisModule_CloseKey.unwrap()(self.handle.as_ptr()) };
    }
}
