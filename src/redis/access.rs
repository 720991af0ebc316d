//! Typed access to what an open key holds: integers in strings (written
//! in place, so the TTL is never dropped), sorted sets, sets, streams'
//! length and module values. Every read checks the key's type first:
//! WRONGTYPE for any other.

use std::os::raw::c_int;

use redis_module::raw;

use super::datatype::{into_raw, DataType, ModuleValue};
use super::entry::{Arg, Ctx};
use super::key::{CommandKey, OpenKey};
use crate::integer;
use crate::reply::{ErrorReply, NOT_AN_INTEGER, WRONGTYPE};

impl CommandKey<'_> {
    /// WRONGTYPE unless this key is missing or a stream (a stream the
    /// call will append to, checked before anything is written).
    #[inline]
    pub fn require_stream(self) -> Result<(), ErrorReply> {
        match self.open_read() {
            Some(key) if key.key_type() as isize != raw::REDISMODULE_KEYTYPE_STREAM => {
                Err(WRONGTYPE)
            }
            _ => Ok(()),
        }
    }
}

impl<'call> OpenKey<'call> {
    /// The integer held here: `None` for a missing key, WRONGTYPE for a
    /// non-string, INCRBY's error for a string that is not an integer.
    #[inline]
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
    #[inline]
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

    /// How many elements the value holds (a stream's entries).
    #[inline]
    pub fn length(&self) -> i64 {
        // SAFETY: an open key.
        unsafe { raw::RedisModule_ValueLength.unwrap()(self.handle.as_ptr()) as i64 }
    }

    /// The value of data type `T` held here: `None` for a missing key,
    /// WRONGTYPE for a key of any other type.
    pub fn value<T: ModuleValue + ?Sized>(
        &self,
        data_type: &DataType<T>,
    ) -> Result<Option<&T>, ErrorReply> {
        self.value_ptr(data_type)
            // SAFETY: a value of this type, owned by the key, which stays
            // open (and so the value alive) while `self` is borrowed.
            .map(|value| value.map(|ptr| unsafe { &*ptr }))
    }

    /// As [`OpenKey::value`], for changing it in place.
    pub fn value_mut<T: ModuleValue + ?Sized>(
        &mut self,
        data_type: &DataType<T>,
    ) -> Result<Option<&mut T>, ErrorReply> {
        self.value_ptr(data_type)
            // SAFETY: as in `value`; `&mut self` makes the borrow unique.
            .map(|value| value.map(|ptr| unsafe { &mut *ptr }))
    }

    fn value_ptr<T: ModuleValue + ?Sized>(
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
                    Ok(Some(T::from_thin(
                        raw::RedisModule_ModuleTypeGetValue.unwrap()(handle)
                    )))
                }
            }
            _ => Err(WRONGTYPE),
        }
    }

    /// Stores `value` as this (empty, writable) key's value.
    pub fn set_value<T: ModuleValue + ?Sized>(
        &mut self,
        data_type: &DataType<T>,
        value: Box<T>,
    ) -> Result<(), ErrorReply> {
        let value = into_raw(value);
        // SAFETY: a key open for writing; on success Redis owns the value
        // and frees it with the type's `free`; on failure it is ours.
        unsafe {
            let set = raw::RedisModule_ModuleTypeSetValue.unwrap();
            if set(self.handle.as_ptr(), data_type.raw(), value) != raw::REDISMODULE_OK as c_int {
                drop(Box::from_raw(T::from_thin(value)));
                return Err(ErrorReply::new("ERR redis-guard could not store the value"));
            }
        }
        Ok(())
    }

    /// A sorted set's cardinality without a nested call: 0 for a missing
    /// key, WRONGTYPE for anything but a sorted set.
    #[inline]
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
    #[inline]
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
    #[inline]
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

    /// A set's cardinality without a nested call: 0 for a missing key,
    /// WRONGTYPE for anything but a set.
    #[inline]
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
