//! A command call at run time: the C entry Redis calls (where every panic
//! is caught), the call's context and arguments, and the reply sent back.
//! What registers a command is in `spec.rs`.

use std::cell::Cell;
use std::ffi::CString;
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use redis_module::raw;

use super::key_access::KeyAccess;
use crate::reply::{CommandResult, ErrorReply, Reply};

/// The context of one command call. It cannot outlive the call: `'call`
/// is chosen by [`callback`], never by the code that receives it.
#[derive(Clone, Copy)]
pub struct Ctx<'call> {
    raw: NonNull<raw::RedisModuleCtx>,
    /// The call's clock reading in ns, taken at the first ask.
    clock: &'call Cell<Option<i64>>,
    _call: PhantomData<&'call raw::RedisModuleCtx>,
}

impl<'call> Ctx<'call> {
    #[inline]
    pub(super) fn as_ptr(self) -> *mut raw::RedisModuleCtx {
        self.raw.as_ptr()
    }

    /// The clock in unix ns, read once a call: its parsing, its decision
    /// and its effects see the same instant (two readings, with a pause
    /// between them such as a big expired key deleted on lookup, set an
    /// expiry that is not the window after the add, or a hold that ends
    /// before its reservation is made). Where the server offers it
    /// (Redis 7.2+, Valkey), the instant it judges keys' expiry by: the
    /// command's start, or the EXEC's or the script's that runs it, so a
    /// key the server still holds is never one this call thinks over;
    /// on Redis 7.0, the wall clock.
    #[inline]
    pub fn now_ns(self) -> i64 {
        if let Some(now) = self.clock.get() {
            return now;
        }
        // SAFETY: a copy of a function pointer the server's API table set
        // at load (None where it lacks the function).
        let cached = unsafe { raw::RedisModule_CachedMicroseconds };
        let now = match cached {
            // SAFETY: a plain API call, valid during any command.
            Some(micros) => unsafe { micros() }.saturating_mul(1_000),
            None => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| {
                    i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
                }),
        };
        self.clock.set(Some(now));
        now
    }

    /// The same reading in unix ms, the unit of expiries.
    #[inline]
    pub fn now_ms(self) -> i64 {
        self.now_ns().div_euclid(1_000_000)
    }

    /// Does this call replay effects a primary decided: the replication
    /// link (its client is the primary), the AOF (its client has the
    /// reserved id), or, on Valkey 9+, the slot import client of an atomic
    /// slot migration? Never an ordinary client, even while the server is
    /// loading (an async load on a writable replica serves clients then).
    pub fn replays_a_primary(self) -> bool {
        // SAFETY: plain API calls on the running command's context.
        let (flags, client) = unsafe {
            (
                raw::RedisModule_GetContextFlags.unwrap()(self.as_ptr()) as u32,
                raw::RedisModule_GetClientId.unwrap()(self.as_ptr()),
            )
        };
        let import = SLOT_IMPORT_CLIENT_FLAG.load(Ordering::Relaxed);
        flags & raw::REDISMODULE_CTX_FLAGS_REPLICATED != 0
            || client == AOF_CLIENT_ID
            || (import != 0 && flags & import != 0)
    }
}

impl Ctx<'_> {
    /// The gate of a module type's apply command (`command` names it in
    /// the error): only what [`Ctx::replays_a_primary`] accepts.
    pub fn require_replay(self, command: &str) -> Result<(), ErrorReply> {
        if self.replays_a_primary() {
            return Ok(());
        }
        Err(ErrorReply::owned(format!(
            "ERR {command} only replays a primary's effects (replication link, AOF, slot import)"
        )))
    }
}

/// The id Redis and Valkey give the client that loads the AOF
/// (`CLIENT_ID_AOF`).
const AOF_CLIENT_ID: u64 = u64::MAX;

/// The context flag of Valkey's slot import client, once the module has
/// declared it handles atomic slot migration; 0 elsewhere (the same bit
/// may mean something else on another server). Valkey 9.1's import client
/// reports it beside REPLICATED (flags 0x2001024, an ordinary client id):
/// the gate names it so as not to depend on the latter.
static SLOT_IMPORT_CLIENT_FLAG: AtomicU32 = AtomicU32::new(0);

/// Called at load when the server migrates slots atomically.
pub(super) fn recognise_slot_import_client(flag: u32) {
    SLOT_IMPORT_CLIENT_FLAG.store(flag, Ordering::Relaxed);
}

/// One command argument, read in place without copying. Tied to the call
/// that received it.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Arg<'call> {
    raw: NonNull<raw::RedisModuleString>,
    _call: PhantomData<&'call raw::RedisModuleString>,
}

impl<'call> Arg<'call> {
    #[inline]
    pub(super) fn as_ptr(self) -> *mut raw::RedisModuleString {
        self.raw.as_ptr()
    }

    /// The argument's bytes, valid for the whole call.
    #[inline]
    pub fn as_bytes(self) -> &'call [u8] {
        let mut len = 0;
        // SAFETY: a live argument string of this call; Redis keeps it (and
        // its buffer, which no command changes) until the call returns.
        unsafe {
            let ptr = raw::RedisModule_StringPtrLen.unwrap()(self.as_ptr(), &mut len);
            std::slice::from_raw_parts(ptr.cast::<u8>(), len)
        }
    }
}

impl AsRef<[u8]> for Arg<'_> {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// What a command does when called. `args[0]` is the command name and
/// `args[1]` the key; Redis has checked the arity.
pub trait Handler {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult;
}

/// A command that names its keys itself (see [`Keys::Counted`]): where
/// they are in a call's arguments, for the server's key-position requests
/// (COMMAND GETKEYS, Cluster routing, ACL key patterns). Whatever the
/// arguments, it must not panic; positions past the end are left out.
pub trait FindsKeys: Handler {
    /// Positions in `args` (`args[0]` is the name) and how each is used.
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)>;
}

pub(super) type Callback =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// The C entry Redis calls for the command `H`. A panic must never unwind
/// into Redis (it would abort the server): anything that panics, the
/// handler or the reply, ends as an error reply instead.
pub extern "C" fn callback<H: Handler>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    let Some(ctx) = NonNull::new(ctx) else {
        return raw::REDISMODULE_ERR as c_int;
    };
    let clock = Cell::new(None);
    let ctx = Ctx {
        raw: ctx,
        clock: &clock,
        _call: PhantomData,
    };
    // SAFETY: the arguments Redis passed with this call.
    let args = unsafe { call_args(argv, argc) };
    let replied = catch_unwind(AssertUnwindSafe(|| {
        let result = H::run(ctx, args);
        send(ctx, &result);
    }));
    if replied.is_err() {
        send(
            ctx,
            &Err(ErrorReply::internal(
                "ERR redis-guard internal error (caught a panic)",
            )),
        );
    }
    raw::REDISMODULE_OK as c_int
}

/// The C entry of a command that finds its own keys: a key-position
/// request gets the positions, any other call runs the command.
pub extern "C" fn callback_finding_keys<H: FindsKeys>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    // SAFETY: ctx is the context of this call, as Redis passed it.
    let asks_keys =
        !ctx.is_null() && unsafe { raw::RedisModule_IsKeysPositionRequest.unwrap()(ctx) } != 0;
    if !asks_keys {
        return callback::<H>(ctx, argv, argc);
    }
    // SAFETY: as in `callback`.
    let args = unsafe { call_args(argv, argc) };
    let positions = catch_unwind(AssertUnwindSafe(|| H::key_positions(args))).unwrap_or_default();
    for (position, access) in positions {
        if let Ok(position) = c_int::try_from(position) {
            // SAFETY: a key-position request on this call's context; the
            // position is within argc, as `key_positions` promises.
            unsafe {
                raw::RedisModule_KeyAtPosWithFlags.unwrap()(ctx, position, access.0 as c_int)
            };
        }
    }
    raw::REDISMODULE_OK as c_int
}

/// The call's arguments as `Arg`s (none for a null or negative count).
///
/// # Safety
/// `argv` and `argc` are what Redis passed to the running callback: `argc`
/// live, non-null argument strings. `Arg` is a transparent wrapper of such
/// a pointer, and the slice lives only as long as the callback, whose
/// local `'call` it is given.
unsafe fn call_args<'call>(
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> &'call [Arg<'call>] {
    match usize::try_from(argc) {
        // SAFETY: the caller's promise above.
        Ok(len) if !argv.is_null() => unsafe {
            std::slice::from_raw_parts(argv.cast::<Arg>(), len)
        },
        _ => &[],
    }
}

fn send(ctx: Ctx, result: &CommandResult) {
    match result {
        Ok(reply) => send_reply(ctx.as_ptr(), reply),
        Err(error) => {
            // Our texts have no NUL; one that did is cut, not a panic.
            let text = error.message().replace('\0', "");
            let text = CString::new(text).unwrap_or_default();
            // SAFETY: replying on the running command's own context.
            unsafe { raw::RedisModule_ReplyWithError.unwrap()(ctx.as_ptr(), text.as_ptr()) };
        }
    }
}

fn send_reply(ctx: *mut raw::RedisModuleCtx, reply: &Reply) {
    // SAFETY: replying on the running command's own context; every array
    // and map is announced with the number of elements that follow it,
    // and every buffer is passed with its own length.
    unsafe {
        match reply {
            Reply::Integer(n) => {
                raw::RedisModule_ReplyWithLongLong.unwrap()(ctx, *n);
            }
            Reply::Integers(values) => {
                raw::RedisModule_ReplyWithArray.unwrap()(ctx, values.len() as _);
                for &n in values.as_slice() {
                    raw::RedisModule_ReplyWithLongLong.unwrap()(ctx, n);
                }
            }
            Reply::Simple(text) => {
                let text = CString::new(*text).unwrap_or_default();
                raw::RedisModule_ReplyWithSimpleString.unwrap()(ctx, text.as_ptr());
            }
            Reply::Bulk(bytes) => {
                raw::RedisModule_ReplyWithStringBuffer.unwrap()(
                    ctx,
                    bytes.as_ptr().cast(),
                    bytes.len(),
                );
            }
            Reply::Null => {
                raw::RedisModule_ReplyWithNull.unwrap()(ctx);
            }
            Reply::Array(items) => {
                raw::RedisModule_ReplyWithArray.unwrap()(ctx, items.len() as _);
                for item in items {
                    send_reply(ctx, item);
                }
            }
            Reply::Map(pairs) => {
                raw::RedisModule_ReplyWithMap.unwrap()(ctx, pairs.len() as _);
                for (field, value) in pairs {
                    raw::RedisModule_ReplyWithStringBuffer.unwrap()(
                        ctx,
                        field.as_ptr().cast(),
                        field.len(),
                    );
                    send_reply(ctx, value);
                }
            }
        }
    }
}
