//! A command as registration sees it: its metadata (name, flags, arity,
//! ACL categories), its key specs and the `COMMAND DOCS` of its arguments,
//! and the calls that hand them to the server. What runs when it is called
//! is in `entry.rs`.

use std::ffi::{CStr, CString};
use std::os::raw::c_int;

use redis_module::raw;

use super::entry::Callback;
use super::key_access::KeyAccess;

/// The keys a command names, as its key specs tell Redis.
#[derive(Clone, Copy)]
pub enum Keys {
    /// One key, at argv[1].
    One(KeyAccess),
    /// `numkeys` at argv[1], then a key every `step` arguments from
    /// argv[2], options after them. Redis 7.0 to 8.2 and Valkey 8 find only
    /// the first keys of such a key spec, so it is marked incomplete and the
    /// command answers the server's key-position requests itself
    /// (`getkeys-api`, see [`FindsKeys`](super::FindsKeys)).
    Counted { access: KeyAccess, step: i32 },
    /// [`Keys::Counted`]'s keys, and an optional last one: the argument
    /// after a `keyword` among the options, used as `keyword_access`.
    /// Where the keyword is depends on `numkeys`, so its key spec searches
    /// from argv[2] and is marked incomplete too.
    CountedWithKeyword {
        access: KeyAccess,
        step: i32,
        keyword: &'static CStr,
        keyword_access: KeyAccess,
    },
    /// One key at argv[1], and an optional second one: the argument after
    /// the first `keyword` from argv[`from`] on (the family sees to it that
    /// no argument before it can be spelled so), used as `keyword_access`.
    /// A keyword key spec says so; Redis 7.0's Cluster routing reads only
    /// ranges or the module, so the command also answers key-position
    /// requests itself (`getkeys-api`, see [`FindsKeys`](super::FindsKeys)).
    WithKeyword {
        access: KeyAccess,
        keyword: &'static CStr,
        from: i32,
        keyword_access: KeyAccess,
    },
}

/// One argument as `COMMAND DOCS` shows it.
pub struct ArgDoc {
    name: &'static CStr,
    kind: raw::RedisModuleCommandArgType,
    flags: u32,
    /// The option word before the value (`HOLD seconds`).
    token: Option<&'static CStr>,
    /// A block's arguments (`key max_burst count period`).
    subargs: &'static [ArgDoc],
    /// The key spec of a key argument: 0 for argv[1]'s, 1 for the one
    /// after [`Keys::WithKeyword`]'s keyword.
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

    /// The key after the keyword of a [`Keys::WithKeyword`] command
    /// (`keyword name`), the key of its second key spec.
    pub const fn keyword_key(name: &'static CStr, keyword: &'static CStr) -> ArgDoc {
        ArgDoc {
            token: Some(keyword),
            key_spec: 1,
            ..ArgDoc::new(
                name,
                raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
            )
        }
    }

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
            // it (as for EVAL); the key spec and the callback do. A key after
            // a keyword: the range says argv[1], the callback that key too.
            let (flags, range) = match self.keys {
                Keys::One(_) => (self.flags.to_owned(), 1),
                Keys::WithKeyword { .. } => (finding_keys(self.flags, &name)?, 1),
                Keys::Counted { .. } | Keys::CountedWithKeyword { .. } => {
                    (finding_keys(self.flags, &name)?, 0)
                }
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

    /// The key specs: argv[1] (then the key after a keyword), or a key every
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
        let counted = |access: KeyAccess, step| {
            spec(
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
            )
        };
        match self.keys {
            Keys::One(access) => vec![spec(access.0, index, at_first, range, one_key)],
            Keys::WithKeyword {
                access,
                keyword,
                from,
                keyword_access,
            } => {
                let after_keyword = raw::RedisModuleCommandKeySpec__bindgen_ty_1 {
                    keyword: raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_2 {
                        keyword: keyword.as_ptr(),
                        startfrom: from,
                    },
                };
                vec![
                    spec(access.0, index, at_first, range, one_key),
                    spec(
                        keyword_access.0,
                        raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_KEYWORD,
                        after_keyword,
                        range,
                        one_key,
                    ),
                ]
            }
            Keys::Counted { access, step } => vec![counted(access, step)],
            Keys::CountedWithKeyword {
                access,
                step,
                keyword,
                keyword_access,
            } => {
                let among_options = raw::RedisModuleCommandKeySpec__bindgen_ty_1 {
                    keyword: raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_2 {
                        keyword: keyword.as_ptr(),
                        startfrom: 2,
                    },
                };
                vec![
                    counted(access, step),
                    spec(
                        keyword_access.incomplete().0,
                        raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_KEYWORD,
                        among_options,
                        range,
                        one_key,
                    ),
                ]
            }
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
