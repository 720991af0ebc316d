//! Module data types: a Rust value stored under a key, with the callbacks
//! that make it a real Redis value (RDB save and load, and so DUMP,
//! RESTORE, MIGRATE and full syncs; AOF rewrite; COPY; MEMORY USAGE;
//! DEBUG DIGEST-VALUE; freeing). What the value is, and how it encodes
//! itself, is the [`ModuleValue`] implementation's business.

use std::ffi::{c_void, CStr};
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicPtr, Ordering};

use redis_module::raw;

use super::alloc::allocated;
use super::defrag::{self, Mover};
use super::tailed::Thin;

/// Where a value writes itself: an RDB payload, or a digest.
pub trait Writer {
    fn integer(&mut self, value: i64);
    fn bytes(&mut self, value: &[u8]);
}

/// Where a value reads itself back from; `None` once the input is bad.
pub trait Reader {
    fn integer(&mut self) -> Option<i64>;
    fn bytes(&mut self) -> Option<Vec<u8>>;
}

/// A command written to a rewritten AOF: its name and its arguments after
/// the key.
pub type AofCommand = (&'static CStr, Vec<Vec<u8>>);

/// A module type's value: kept by Redis behind one thin pointer ([`Thin`]:
/// a plain box, or one block with a run sized at creation).
pub trait ModuleValue: Thin + 'static {
    /// Exactly 9 characters, as Redis requires.
    const NAME: &'static CStr;
    /// Written beside every RDB payload; `read` gets it back. A payload of
    /// a higher version (a newer module's) is refused before `read`, with
    /// a log line saying so.
    const ENCODING_VERSION: i32;
    /// RDB save; DEBUG DIGEST-VALUE digests the same sequence.
    fn write(&self, out: &mut dyn Writer);
    /// RDB load of any version up to [`Self::ENCODING_VERSION`]: every
    /// version ever released keeps its loader (tests/golden holds a
    /// payload of each); `None` rejects the payload.
    fn read(input: &mut dyn Reader, version: i32) -> Option<Box<Self>>;
    /// A deep copy, sharing nothing (COPY).
    fn duplicate(&self) -> Box<Self>;
    /// The commands that rebuild the value, for AOF rewrite.
    fn rewrite(&self) -> Vec<AofCommand>;
    /// Bytes the allocator gave for what the value owns beyond its own
    /// box (size classes, see [`super::allocated`]), for MEMORY USAGE.
    fn memory(&self) -> usize;
    /// Work to free it (about one unit an allocation): above
    /// `lazyfree-lazy-*`'s threshold Redis frees it on its lazyfree thread.
    fn free_effort(&self) -> usize;
    /// Shows `mover` every buffer the value owns beyond its own block
    /// (moved already), always in the same order, so that a walk stopped
    /// half way resumes where it stopped.
    fn defrag(&mut self, mover: &mut Mover);
}

/// A registered data type; `register` at load, then keys can hold `T`.
pub struct DataType<T: ?Sized> {
    raw: AtomicPtr<raw::RedisModuleType>,
    _value: PhantomData<fn() -> Box<T>>,
}

impl<T: ModuleValue + ?Sized> DataType<T> {
    pub const fn new() -> Self {
        DataType {
            raw: AtomicPtr::new(std::ptr::null_mut()),
            _value: PhantomData,
        }
    }

    pub(super) fn raw(&self) -> *mut raw::RedisModuleType {
        self.raw.load(Ordering::Relaxed)
    }

    /// Creates the type with Redis; once, from OnLoad.
    pub(super) fn register(&self, ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
        let mut methods = raw::RedisModuleTypeMethods {
            version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
            rdb_load: Some(rdb_load::<T>),
            rdb_save: Some(rdb_save::<T>),
            aof_rewrite: Some(aof_rewrite::<T>),
            mem_usage: Some(mem_usage::<T>),
            digest: Some(digest::<T>),
            free: Some(free::<T>),
            aux_load: None,
            aux_save: None,
            aux_save_triggers: 0,
            free_effort: Some(free_effort::<T>),
            unlink: None,
            copy: Some(copy::<T>),
            defrag: if defrag::available() {
                Some(defrag::<T>)
            } else {
                None
            },
            mem_usage2: None,
            free_effort2: None,
            unlink2: None,
            copy2: None,
            aux_save2: None,
        };
        // SAFETY: called from OnLoad with the load context; the name is a
        // NUL-terminated static; Redis copies the methods it is given.
        let created = unsafe {
            raw::RedisModule_CreateDataType.unwrap()(
                ctx,
                T::NAME.as_ptr(),
                T::ENCODING_VERSION,
                &mut methods,
            )
        };
        if created.is_null() {
            return Err(format!(
                "could not create the data type {}",
                T::NAME.to_string_lossy()
            ));
        }
        self.raw.store(created, Ordering::Relaxed);
        Ok(())
    }
}

impl<T: ModuleValue + ?Sized> Default for DataType<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The value behind a pointer Redis hands back: one made by `into_raw`.
///
/// # Safety
/// `value` came from [`into_raw`] for this `T` and is not freed yet.
unsafe fn value_of<'a, T: Thin + ?Sized>(value: *const c_void) -> &'a T {
    &*T::from_thin(value.cast_mut())
}

pub(super) fn into_raw<T: Thin + ?Sized>(value: Box<T>) -> *mut c_void {
    T::into_thin(value)
}

struct RdbWriter(*mut raw::RedisModuleIO);

impl Writer for RdbWriter {
    fn integer(&mut self, value: i64) {
        // SAFETY: the IO handle of the running rdb_save callback.
        unsafe { raw::RedisModule_SaveSigned.unwrap()(self.0, value) };
    }

    fn bytes(&mut self, value: &[u8]) {
        // SAFETY: as above; the buffer is passed with its length.
        unsafe {
            raw::RedisModule_SaveStringBuffer.unwrap()(self.0, value.as_ptr().cast(), value.len())
        };
    }
}

struct RdbReader(*mut raw::RedisModuleIO);

impl RdbReader {
    fn failed(&self) -> bool {
        // SAFETY: the IO handle of the running rdb_load callback; the
        // module runs with HANDLE_IO_ERRORS, so errors are reported here
        // instead of aborting the server.
        unsafe { raw::RedisModule_IsIOError.unwrap()(self.0) != 0 }
    }
}

impl Reader for RdbReader {
    fn integer(&mut self) -> Option<i64> {
        // SAFETY: as in `failed`.
        let value = unsafe { raw::RedisModule_LoadSigned.unwrap()(self.0) };
        (!self.failed()).then_some(value)
    }

    fn bytes(&mut self) -> Option<Vec<u8>> {
        let mut len = 0;
        // SAFETY: as in `failed`; the buffer Redis returns is copied, then
        // freed once with the module allocator that made it.
        unsafe {
            let ptr = raw::RedisModule_LoadStringBuffer.unwrap()(self.0, &mut len);
            if self.failed() || ptr.is_null() {
                return None;
            }
            let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len).to_vec();
            raw::RedisModule_Free.unwrap()(ptr.cast());
            Some(bytes)
        }
    }
}

/// Feeds DEBUG DIGEST-VALUE the value's sequence in blocks of about
/// [`DIGEST_BLOCK`] bytes: Redis runs two SHA1 passes per element it is
/// given, so an element per field (five per claim) made the digest of a
/// million claims take ~5 s. In a block an integer is its 8 bytes and a
/// string its length's 8 bytes then its bytes, all little-endian, and a
/// block ends after the field that fills it: equal sequences give equal
/// blocks, and sequences that differ give blocks that differ.
struct DigestWriter {
    digest: *mut raw::RedisModuleDigest,
    block: Vec<u8>,
}

const DIGEST_BLOCK: usize = 64 * 1024;

impl DigestWriter {
    fn new(digest: *mut raw::RedisModuleDigest) -> Self {
        DigestWriter {
            digest,
            block: Vec::new(),
        }
    }

    /// After each field: a full block goes to the digest.
    fn field_added(&mut self) {
        if self.block.len() >= DIGEST_BLOCK {
            self.hand_over();
        }
    }

    /// At the end: what is left goes to the digest.
    fn finish(&mut self) {
        if !self.block.is_empty() {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        // SAFETY: the digest handle of the running digest callback; the
        // buffer is passed with its length, and Redis only reads it.
        unsafe {
            raw::RedisModule_DigestAddStringBuffer.unwrap()(
                self.digest,
                self.block.as_mut_ptr().cast(),
                self.block.len(),
            )
        };
        self.block.clear();
    }
}

impl Writer for DigestWriter {
    fn integer(&mut self, value: i64) {
        self.block.extend_from_slice(&value.to_le_bytes());
        self.field_added();
    }

    fn bytes(&mut self, value: &[u8]) {
        self.block
            .extend_from_slice(&(value.len() as u64).to_le_bytes());
        self.block.extend_from_slice(value);
        self.field_added();
    }
}

/// Runs a callback body; a panic there must not unwind into Redis.
fn guarded<R>(fallback: R, body: impl FnOnce() -> R) -> R {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(fallback)
}

extern "C" fn rdb_load<T: ModuleValue + ?Sized>(
    rdb: *mut raw::RedisModuleIO,
    encver: c_int,
) -> *mut c_void {
    guarded(std::ptr::null_mut(), || {
        if encver > T::ENCODING_VERSION {
            // Written by a newer module (a downgrade, or a replica not yet
            // upgraded): refused, and the log says why.
            let message = format!(
                "redis-guard: a {} value of encoding version {encver} is newer than this module reads ({}): upgrade the module",
                T::NAME.to_string_lossy(),
                T::ENCODING_VERSION
            );
            let message = std::ffi::CString::new(message).unwrap_or_default();
            // SAFETY: the load's own IO; the format takes the one string
            // argument given, NUL-terminated.
            unsafe {
                raw::RedisModule_LogIOError.unwrap()(
                    rdb,
                    c"warning".as_ptr(),
                    c"%s".as_ptr(),
                    message.as_ptr(),
                )
            };
            return std::ptr::null_mut();
        }
        T::read(&mut RdbReader(rdb), encver).map_or(std::ptr::null_mut(), into_raw)
    })
}

extern "C" fn rdb_save<T: ModuleValue + ?Sized>(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: Redis passes a value of this type, made by `into_raw`.
    guarded((), || {
        unsafe { value_of::<T>(value) }.write(&mut RdbWriter(rdb))
    })
}

extern "C" fn aof_rewrite<T: ModuleValue + ?Sized>(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    guarded((), || {
        // SAFETY: Redis passes a value of this type, made by `into_raw`.
        let commands = unsafe { value_of::<T>(value) }.rewrite();
        for (name, args) in commands {
            // SAFETY: format "sv": the key, then an array of `len`
            // strings made here and freed after the call copied them.
            unsafe {
                let strings: Vec<*mut raw::RedisModuleString> = args
                    .iter()
                    .map(|a| {
                        raw::RedisModule_CreateString.unwrap()(
                            std::ptr::null_mut(),
                            a.as_ptr().cast::<c_char>(),
                            a.len(),
                        )
                    })
                    .collect();
                raw::RedisModule_EmitAOF.unwrap()(
                    aof,
                    name.as_ptr(),
                    c"sv".as_ptr(),
                    key,
                    strings.as_ptr(),
                    strings.len(),
                );
                for string in strings {
                    raw::RedisModule_FreeString.unwrap()(std::ptr::null_mut(), string);
                }
            }
        }
    })
}

/// The two headers Redis makes for a module value (its object and its
/// module value, 16 bytes each), which MEMORY USAGE leaves to the type; it
/// adds the key's name and entry itself.
const VALUE_HEADERS: usize = 32;

/// What the allocator gave for the value: its headers, its box, and what
/// it owns (`memory`, which counts size classes too).
extern "C" fn mem_usage<T: ModuleValue + ?Sized>(value: *const c_void) -> usize {
    // SAFETY: Redis passes a value of this type, made by `into_raw`.
    guarded(0, || {
        // SAFETY: as above.
        let value = unsafe { value_of::<T>(value) };
        let boxed = allocated(value, std::mem::size_of_val(value));
        VALUE_HEADERS + boxed + value.memory()
    })
}

extern "C" fn digest<T: ModuleValue + ?Sized>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guarded((), || {
        let mut writer = DigestWriter::new(md);
        // SAFETY: Redis passes a value of this type, made by `into_raw`.
        unsafe { value_of::<T>(value) }.write(&mut writer);
        writer.finish();
        // SAFETY: the digest handle of this call.
        unsafe { raw::RedisModule_DigestEndSequence.unwrap()(md) };
    })
}

extern "C" fn free_effort<T: ModuleValue + ?Sized>(
    _key: *mut raw::RedisModuleString,
    value: *const c_void,
) -> usize {
    // SAFETY: Redis passes a value of this type, made by `into_raw`.
    guarded(1, || unsafe { value_of::<T>(value) }.free_effort())
}

/// Moves the value's block, then what it owns, resuming where Redis's
/// cursor says: 1 when more is left for a later call, 0 when done.
extern "C" fn defrag<T: ModuleValue + ?Sized>(
    ctx: *mut raw::RedisModuleDefragCtx,
    _key: *mut raw::RedisModuleString,
    value: *mut *mut c_void,
) -> c_int {
    guarded(0, || {
        // SAFETY: the context of this callback, dropped before it returns.
        let mut mover = unsafe { Mover::new(ctx) };
        // SAFETY: `value` is where Redis keeps its pointer to a value of
        // this type, made by `into_raw` (one block: a box, or a `Tailed`
        // whose head is copied along): a moved block is written back
        // there, and the old address is not used again.
        let value = unsafe {
            if let Some(moved) = mover.moved((*value).cast::<u8>()) {
                *value = moved.cast();
            }
            &mut *T::from_thin(*value)
        };
        value.defrag(&mut mover);
        mover.finish()
    })
}

/// Runs on Redis's main thread or on its lazyfree thread: values own all
/// their memory (no shared buffers), so either is safe.
extern "C" fn free<T: ModuleValue + ?Sized>(value: *mut c_void) {
    // SAFETY: Redis frees each value once; it was made by `into_raw`.
    guarded((), || drop(unsafe { Box::from_raw(T::from_thin(value)) }))
}

extern "C" fn copy<T: ModuleValue + ?Sized>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: Redis passes a value of this type, made by `into_raw`.
    guarded(std::ptr::null_mut(), || {
        into_raw(unsafe { value_of::<T>(value) }.duplicate())
    })
}
