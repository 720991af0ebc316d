//! Registration: every command's name, flags, arity, key spec and
//! `COMMAND DOCS`, in one table.

use std::ffi::CStr;
use std::os::raw::c_int;
use std::ptr;

use redis_module::raw;

use crate::commands::coupon::{IssueCommand, RevokeCommand};
use crate::commands::mon::{DecrClampCommand, IncrCheckCommand};
use crate::commands::{entry, PanicCommand};

type Callback =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// One argument as `COMMAND DOCS` shows it.
struct ArgDoc {
    name: &'static CStr,
    kind: raw::RedisModuleCommandArgType,
    multiple: bool,
}

const fn key() -> ArgDoc {
    ArgDoc {
        name: c"key",
        kind: raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
        multiple: false,
    }
}

const fn integer(name: &'static CStr) -> ArgDoc {
    ArgDoc {
        name,
        kind: raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
        multiple: false,
    }
}

const fn string(name: &'static CStr) -> ArgDoc {
    ArgDoc {
        name,
        kind: raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
        multiple: false,
    }
}

struct Spec {
    name: &'static CStr,
    callback: Callback,
    /// As the command's Redis twin (INCRBY, SADD, SREM).
    flags: &'static CStr,
    /// Negative: at least that many arguments, the name included.
    arity: c_int,
    key_flags: u32,
    summary: &'static CStr,
    complexity: &'static CStr,
    args: &'static [ArgDoc],
}

const SINCE: &CStr = c"0.1.0";

const READ_WRITE: u32 = raw::REDISMODULE_CMD_KEY_RW;

static SPECS: [Spec; 4] = [
        Spec {
            name: c"mon.incrcheck",
            callback: entry::<IncrCheckCommand>,
            flags: c"write deny-oom fast",
            arity: -5,
            key_flags: READ_WRITE | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE,
            summary: c"Adds to a windowed counter and reports the highest threshold this call crossed.",
            complexity: c"O(N) where N is the number of thresholds (at most 32).",
            args: &[
                key(),
                integer(c"increment"),
                integer(c"window"),
                ArgDoc {
                    multiple: true,
                    ..integer(c"threshold")
                },
            ],
        },
        Spec {
            name: c"mon.decrclamp",
            callback: entry::<DecrClampCommand>,
            flags: c"write deny-oom fast",
            arity: 3,
            key_flags: READ_WRITE | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE,
            summary: c"Subtracts from a counter without going below 0, keeping its TTL.",
            complexity: c"O(1)",
            args: &[key(), integer(c"amount")],
        },
        Spec {
            name: c"coupon.issue",
            callback: entry::<IssueCommand>,
            flags: c"write deny-oom fast",
            arity: 4,
            key_flags: READ_WRITE | raw::REDISMODULE_CMD_KEY_INSERT,
            summary: c"Issues one coupon per user out of at most limit; replies the rank, -1 (already held) or -2 (sold out).",
            complexity: c"O(1)",
            args: &[key(), string(c"user"), integer(c"limit")],
        },
        Spec {
            name: c"coupon.revoke",
            callback: entry::<RevokeCommand>,
            flags: c"write fast",
            arity: 3,
            key_flags: READ_WRITE | raw::REDISMODULE_CMD_KEY_DELETE,
            summary: c"Takes a user's coupon back, freeing its place.",
            complexity: c"O(1)",
            args: &[key(), string(c"user")],
        },
];

/// Registered only when the module is loaded with `test-panic-command`:
/// it panics on purpose, so tests can prove a panic becomes an error reply.
static PANIC_SPEC: Spec = Spec {
    name: c"guard.test-panic",
    callback: entry::<PanicCommand>,
    flags: c"write fast",
    arity: 2,
    key_flags: READ_WRITE | raw::REDISMODULE_CMD_KEY_UPDATE,
    summary: c"Test only: panics inside a command handler.",
    complexity: c"O(1)",
    args: &[key()],
};

const INFO_VERSION: raw::RedisModuleCommandInfoVersion = raw::RedisModuleCommandInfoVersion {
    version: 1,
    sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
    sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
    sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
};

/// Creates every command with its key at argv[1] (first = last = 1), then
/// attaches key specs, arity and docs. Redis copies what it is given.
pub fn register(ctx: *mut raw::RedisModuleCtx, with_panic_command: bool) -> Result<(), String> {
    let test_only = with_panic_command.then_some(&PANIC_SPEC);
    for spec in SPECS.iter().chain(test_only) {
        let name = spec.name.to_string_lossy();
        // SAFETY: strings are NUL-terminated statics; ctx is the load context.
        unsafe {
            let created = raw::RedisModule_CreateCommand.unwrap()(
                ctx,
                spec.name.as_ptr(),
                Some(spec.callback),
                spec.flags.as_ptr(),
                1,
                1,
                1,
            );
            if created != raw::REDISMODULE_OK as c_int {
                return Err(format!("could not create {name}"));
            }
            let command = raw::RedisModule_GetCommand.unwrap()(ctx, spec.name.as_ptr());
            if command.is_null() {
                return Err(format!("could not find {name} after creating it"));
            }
            let mut key_specs = [key_spec(spec.key_flags), zeroed()];
            let mut args: Vec<raw::RedisModuleCommandArg> = spec.args.iter().map(arg).collect();
            args.push(zeroed());
            let mut info = raw::RedisModuleCommandInfo {
                version: &INFO_VERSION,
                summary: spec.summary.as_ptr(),
                complexity: spec.complexity.as_ptr(),
                since: SINCE.as_ptr(),
                history: ptr::null_mut(),
                tips: ptr::null(),
                arity: spec.arity,
                key_specs: key_specs.as_mut_ptr(),
                args: args.as_mut_ptr(),
            };
            if raw::RedisModule_SetCommandInfo.unwrap()(command, &mut info)
                != raw::REDISMODULE_OK as c_int
            {
                return Err(format!("could not set the command info of {name}"));
            }
        }
    }
    Ok(())
}

/// The one key, at argv[1].
fn key_spec(flags: u32) -> raw::RedisModuleCommandKeySpec {
    raw::RedisModuleCommandKeySpec {
        notes: ptr::null(),
        flags: u64::from(flags),
        begin_search_type: raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX,
        bs: raw::RedisModuleCommandKeySpec__bindgen_ty_1 {
            index: raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos: 1 },
        },
        find_keys_type: raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE,
        fk: raw::RedisModuleCommandKeySpec__bindgen_ty_2 {
            range: raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 {
                lastkey: 0,
                keystep: 1,
                limit: 0,
            },
        },
    }
}

fn arg(doc: &ArgDoc) -> raw::RedisModuleCommandArg {
    let is_key = doc.kind == raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY;
    raw::RedisModuleCommandArg {
        name: doc.name.as_ptr(),
        type_: doc.kind,
        key_spec_index: if is_key { 0 } else { -1 },
        flags: if doc.multiple {
            raw::REDISMODULE_CMD_ARG_MULTIPLE as c_int
        } else {
            0
        },
        ..zeroed()
    }
}

/// The all-zero entry that ends Redis's C arrays.
fn zeroed<T>() -> T {
    // SAFETY: only used for bindgen's plain C structs, for which all-zero
    // (null pointers, 0 numbers) is a valid value.
    unsafe { std::mem::MaybeUninit::zeroed().assume_init() }
}
