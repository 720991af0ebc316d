//! A command as Redis sees it: its metadata, the C entry Redis calls, the
//! call's context and arguments, and the reply sent back.

use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use redis_module::raw;

use crate::reply::{CommandResult, ErrorReply, Reply};

/// The context of one command call. It cannot outlive the call: `'call`
/// is chosen by [`callback`], never by the code that receives it.
#[derive(Clone, Copy)]
pub struct Ctx<'call> {
    raw: NonNull<raw::RedisModuleCtx>,
    _call: PhantomData<&'call raw::RedisModuleCtx>,
}

impl<'call> Ctx<'call> {
    pub(super) fn as_ptr(self) -> *mut raw::RedisModuleCtx {
        self.raw.as_ptr()
    }

    /// The server clock in unix ms, the base EXPIRE uses.
    pub fn now_ms(self) -> i64 {
        // SAFETY: a plain API call on the running command's context.
        unsafe { raw::RedisModule_Milliseconds.unwrap()() }
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
    pub(super) fn as_ptr(self) -> *mut raw::RedisModuleString {
        self.raw.as_ptr()
    }

    /// The argument's bytes, valid for the whole call.
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

type Callback =
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
    let ctx = Ctx {
        raw: ctx,
        _call: PhantomData,
    };
    let args: &[Arg] = match usize::try_from(argc) {
        // SAFETY: Redis passes the call's `argc` live, non-null argument
        // strings; `Arg` is a transparent wrapper of such a pointer, and
        // the slice lives only as long as this call (`'call` is local).
        Ok(len) if !argv.is_null() => unsafe {
            std::slice::from_raw_parts(argv.cast::<Arg>(), len)
        },
        _ => &[],
    };
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
    let args: &[Arg] = match usize::try_from(argc) {
        // SAFETY: as in `callback`.
        Ok(len) if !argv.is_null() => unsafe {
            std::slice::from_raw_parts(argv.cast::<Arg>(), len)
        },
        _ => &[],
    };
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

/// How a command uses its one key, as its key spec tells Redis.
#[derive(Clone, Copy)]
pub struct KeyAccess(u32);

impl KeyAccess {
    const RW: u32 = raw::REDISMODULE_CMD_KEY_RW;
    /// Reads the value and writes it back changed (INCRBY).
    pub const UPDATE: KeyAccess =
        KeyAccess(Self::RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE);
    /// Adds to the value (SADD).
    pub const INSERT: KeyAccess = KeyAccess(Self::RW | raw::REDISMODULE_CMD_KEY_INSERT);
    /// Only reads the value (SCARD).
    pub const READ: KeyAccess =
        KeyAccess(raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS);
    /// Removes from the value (SREM).
    pub const DELETE: KeyAccess = KeyAccess(Self::RW | raw::REDISMODULE_CMD_KEY_DELETE);
    /// Appends to the value and may trim it (XADD: an alert's stream).
    pub const APPEND: KeyAccess = KeyAccess(Self::RW | raw::REDISMODULE_CMD_KEY_UPDATE);
}

/// The keys a command names, as its key specs tell Redis.
#[derive(Clone, Copy)]
pub enum Keys {
    /// One key, at argv[1].
    One(KeyAccess),
    /// `numkeys` at argv[1], then a key every `step` arguments from
    /// argv[2], options after them. Redis 7.0 to 8.2 and Valkey 8 find only
    /// the first keys of such a key spec, so it is marked incomplete and the
    /// command answers the server's key-position requests itself
    /// (`getkeys-api`, see [`FindsKeys`]).
    Counted { access: KeyAccess, step: i32 },
    /// One key at argv[1], and the stream of an optional `ALERT stream`,
    /// the argument after the first `ALERT` from argv[`alert_from`] on
    /// (no argument before it can be spelled so: they are integers). A
    /// keyword key spec says so; Redis 7.0's Cluster routing reads only
    /// ranges or the module, so the command also answers key-position
    /// requests itself (`getkeys-api`, see [`FindsKeys`]).
    Alerting { access: KeyAccess, alert_from: i32 },
}

/// The keyword of [`Keys::Alerting`]'s second key.
const ALERT_KEYWORD: &CStr = c"ALERT";

/// One argument as `COMMAND DOCS` shows it.
pub struct ArgDoc {
    name: &'static CStr,
    kind: raw::RedisModuleCommandArgType,
    flags: u32,
    /// The option word before the value (`HOLD seconds`).
    token: Option<&'static CStr>,
    /// A block's arguments (`key max_burst count period`).
    subargs: &'static [ArgDoc],
    /// The key spec of a key argument: 0 for argv[1]'s.
    key_spec: c_int,
}

impl ArgDoc {
    pub const KEY: ArgDoc = ArgDoc::new(
        c"key",
        raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
    );

    const fn new(name: &'static CStr, kind: raw::RedisModuleCommandArgType) -> ArgDoc {
        ArgDoc {
            name,
            kind,
            flags: 0,
            token: None,
            subargs: &[],
            key_spec: if kind == raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY {
                0
            } else {
                -1
            },
        }
    }

    /// The stream key of an `ALERT stream` option (see [`Keys::Alerting`]).
    pub const ALERT_STREAM: ArgDoc = ArgDoc {
        token: Some(ALERT_KEYWORD),
        key_spec: 1,
        ..ArgDoc::new(
            c"stream",
            raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
        )
    };

    /// Arguments that come together, as one (often repeated) group.
    pub const fn block(name: &'static CStr, subargs: &'static [ArgDoc]) -> ArgDoc {
        ArgDoc {
            subargs,
            ..ArgDoc::new(
                name,
                raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_BLOCK,
            )
        }
    }

    pub const fn integer(name: &'static CStr) -> ArgDoc {
        ArgDoc::new(
            name,
            raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
        )
    }

    pub const fn string(name: &'static CStr) -> ArgDoc {
        ArgDoc::new(
            name,
            raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
        )
    }

    /// Given one or more times.
    pub const fn multiple(self) -> ArgDoc {
        ArgDoc {
            flags: self.flags | raw::REDISMODULE_CMD_ARG_MULTIPLE,
            ..self
        }
    }

    /// An option: `token` then the value; may be left out.
    pub const fn option(self, token: &'static CStr) -> ArgDoc {
        ArgDoc {
            token: Some(token),
            ..self.optional()
        }
    }

    /// May be left out.
    #[must_use]
    pub const fn optional(self) -> ArgDoc {
        ArgDoc {
            flags: self.flags | raw::REDISMODULE_CMD_ARG_OPTIONAL,
            ..self
        }
    }
}

/// A command's metadata and entry: everything registration needs. Each
/// command declares one beside its handler.
pub struct Command {
    pub name: &'static CStr,
    /// Command flags, as the command's Redis twin has them.
    pub flags: &'static CStr,
    /// ACL categories beside `@guard`, as the Redis twin's (`write fast`).
    pub acl_categories: &'static CStr,
    /// Negative: at least that many arguments, the name included.
    pub arity: i32,
    pub keys: Keys,
    pub summary: &'static CStr,
    pub complexity: &'static CStr,
    /// The version that added the command, for `COMMAND DOCS`.
    pub since: &'static CStr,
    /// After the name, in order; the key first.
    pub args: &'static [ArgDoc],
    pub callback: Callback,
}

const INFO_VERSION: raw::RedisModuleCommandInfoVersion = raw::RedisModuleCommandInfoVersion {
    version: 1,
    sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
    sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
    sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
};

impl Command {
    /// Creates the command with its key at argv[1] (first = last = 1), then
    /// attaches key spec, arity, docs and, where the server has the API,
    /// ACL categories. Redis copies what it is given.
    pub(super) fn register(
        &self,
        ctx: *mut raw::RedisModuleCtx,
        acl: Option<&CStr>,
    ) -> Result<(), String> {
        let name = self.name.to_string_lossy();
        // SAFETY: every string is a NUL-terminated static; ctx is the load
        // context; the arrays handed to SetCommandInfo end with the zeroed
        // entry Redis expects and outlive the call, which copies them.
        unsafe {
            // A key per step after numkeys: no first/last/step range can say
            // it (as for EVAL); the key spec and the callback do. An alert's
            // stream: the range says argv[1], the callback the stream too.
            let (flags, range) = match self.keys {
                Keys::One(_) => (self.flags.to_owned(), 1),
                Keys::Alerting { .. } => (finding_keys(self.flags, &name)?, 1),
                Keys::Counted { .. } => (finding_keys(self.flags, &name)?, 0),
            };
            let created = raw::RedisModule_CreateCommand.unwrap()(
                ctx,
                self.name.as_ptr(),
                Some(self.callback),
                flags.as_ptr(),
                range,
                range,
                range,
            );
            if created != raw::REDISMODULE_OK as c_int {
                return Err(format!("could not create {name}"));
            }
            let command = raw::RedisModule_GetCommand.unwrap()(ctx, self.name.as_ptr());
            if command.is_null() {
                return Err(format!("could not find {name} after creating it"));
            }
            let mut key_specs = self.key_specs();
            key_specs.push(std::mem::zeroed());
            let mut blocks = Vec::new();
            let mut args = ArgDoc::to_raw_list(self.args, &mut blocks);
            let mut info = raw::RedisModuleCommandInfo {
                version: &INFO_VERSION,
                summary: self.summary.as_ptr(),
                complexity: self.complexity.as_ptr(),
                since: self.since.as_ptr(),
                history: std::ptr::null_mut(),
                tips: std::ptr::null(),
                arity: self.arity,
                key_specs: key_specs.as_mut_ptr(),
                args: args.as_mut_ptr(),
            };
            if raw::RedisModule_SetCommandInfo.unwrap()(command, &mut info)
                != raw::REDISMODULE_OK as c_int
            {
                return Err(format!("could not set the command info of {name}"));
            }
            if let (Some(set_categories), Some(categories)) =
                (raw::RedisModule_SetCommandACLCategories, acl)
            {
                if set_categories(command, categories.as_ptr()) != raw::REDISMODULE_OK as c_int {
                    return Err(format!("could not set the ACL categories of {name}"));
                }
            }
        }
        Ok(())
    }

    /// The key specs: argv[1] (then an alert's stream), or a key every
    /// `step` arguments after the count at argv[1].
    fn key_specs(&self) -> Vec<raw::RedisModuleCommandKeySpec> {
        let at_first = raw::RedisModuleCommandKeySpec__bindgen_ty_1 {
            index: raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos: 1 },
        };
        let one_key = raw::RedisModuleCommandKeySpec__bindgen_ty_2 {
            range: raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 {
                lastkey: 0,
                keystep: 1,
                limit: 0,
            },
        };
        let spec = |access: u32, begin_search_type, bs, find_keys_type, fk| {
            raw::RedisModuleCommandKeySpec {
                notes: std::ptr::null(),
                flags: u64::from(access),
                begin_search_type,
                bs,
                find_keys_type,
                fk,
            }
        };
        let index = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
        let range = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
        match self.keys {
            Keys::One(access) => vec![spec(access.0, index, at_first, range, one_key)],
            Keys::Alerting { access, alert_from } => {
                let after_keyword = raw::RedisModuleCommandKeySpec__bindgen_ty_1 {
                    keyword: raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_2 {
                        keyword: ALERT_KEYWORD.as_ptr(),
                        startfrom: alert_from,
                    },
                };
                vec![
                    spec(access.0, index, at_first, range, one_key),
                    spec(
                        KeyAccess::APPEND.0,
                        raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_KEYWORD,
                        after_keyword,
                        range,
                        one_key,
                    ),
                ]
            }
            Keys::Counted { access, step } => vec![spec(
                access.0 | raw::REDISMODULE_CMD_KEY_INCOMPLETE,
                index,
                at_first,
                raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM,
                raw::RedisModuleCommandKeySpec__bindgen_ty_2 {
                    keynum: raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_2 {
                        keynumidx: 0,
                        firstkey: 1,
                        keystep: step,
                    },
                },
            )],
        }
    }
}

/// `flags` and `getkeys-api`: the command answers key-position requests.
fn finding_keys(flags: &CStr, name: &str) -> Result<CString, String> {
    let mut flags = flags.to_bytes().to_vec();
    flags.extend_from_slice(b" getkeys-api");
    CString::new(flags).map_err(|_| format!("{name}: flags"))
}

impl ArgDoc {
    /// `docs` as Redis reads them, ending with the zeroed entry it expects;
    /// the arrays of blocks are kept in `blocks` (Redis copies them all).
    fn to_raw_list(
        docs: &[ArgDoc],
        blocks: &mut Vec<Vec<raw::RedisModuleCommandArg>>,
    ) -> Vec<raw::RedisModuleCommandArg> {
        let mut list: Vec<raw::RedisModuleCommandArg> =
            docs.iter().map(|doc| doc.to_raw(blocks)).collect();
        // SAFETY: the all-zero entry is the terminator Redis looks for.
        list.push(unsafe { std::mem::zeroed() });
        list
    }

    fn to_raw(
        &self,
        blocks: &mut Vec<Vec<raw::RedisModuleCommandArg>>,
    ) -> raw::RedisModuleCommandArg {
        let subargs = if self.subargs.is_empty() {
            std::ptr::null_mut()
        } else {
            let mut list = ArgDoc::to_raw_list(self.subargs, blocks);
            // The list's buffer stays where it is once moved into `blocks`.
            let pointer = list.as_mut_ptr();
            blocks.push(list);
            pointer
        };
        raw::RedisModuleCommandArg {
            name: self.name.as_ptr(),
            type_: self.kind,
            key_spec_index: self.key_spec,
            token: self.token.map_or(std::ptr::null(), CStr::as_ptr),
            summary: std::ptr::null(),
            since: std::ptr::null(),
            flags: self.flags as c_int,
            deprecated_since: std::ptr::null(),
            subargs,
            display_text: std::ptr::null(),
        }
    }
}
