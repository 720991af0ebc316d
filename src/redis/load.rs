//! Module start: options, then the commands with their ACL categories.

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::ptr::NonNull;

use redis_module::{raw, Context};

use super::datatype::{DataType, ModuleValue};
use super::entry::recognise_slot_import_client;
use super::spec::Command;

/// The module's own ACL category, `@guard`, on servers that let modules
/// define one.
const CATEGORY: &CStr = c"guard";

/// A data type to create at load, whatever its value type.
pub trait AnyDataType: Sync {
    fn register(&self, ctx: &Context) -> Result<(), String>;
}

impl<T: ModuleValue + ?Sized> AnyDataType for DataType<T> {
    fn register(&self, ctx: &Context) -> Result<(), String> {
        DataType::register(self, ctx.ctx)
    }
}

/// Valkey 9's `VALKEYMODULE_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION`: without
/// it the server refuses `CLUSTER MIGRATESLOTS` while the module is loaded.
const HANDLE_ATOMIC_SLOT_MIGRATION: c_int = 1 << 5;
/// Valkey 9's `VALKEYMODULE_CTX_FLAGS_SLOT_IMPORT_CLIENT`.
const SLOT_IMPORT_CLIENT: u32 = 1 << 25;

/// Runs once, from `RedisModule_OnLoad`: no implicit WATCH signals (a
/// no-op must not disturb `WATCH`; real writes signal explicitly), RDB
/// load errors reported rather than fatal, atomic slot migration where
/// the server has it, the data types, then every command of `commands`.
pub fn load(
    ctx: &Context,
    data_types: &[&dyn AnyDataType],
    commands: &[&Command],
) -> Result<(), String> {
    let mut options = (raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED
        | raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS) as c_int;
    if migrates_slots_atomically() {
        // Every value migrates through its AOF rewrite and the apply
        // commands, which accept the slot import client.
        options |= HANDLE_ATOMIC_SLOT_MIGRATION;
        recognise_slot_import_client(SLOT_IMPORT_CLIENT);
        ctx.log_notice("redis-guard: declared support for atomic slot migration");
    }
    // SAFETY: called once from OnLoad with the load context.
    unsafe {
        raw::RedisModule_SetModuleOptions.unwrap()(ctx.ctx, options);
    }
    for data_type in data_types {
        data_type.register(ctx)?;
    }
    let own_category = acl_categories_supported() && add_own_category(ctx);
    if !acl_categories_supported() {
        ctx.log_warning(
            "redis-guard: this server cannot put module commands in ACL categories \
             (Redis 7.2+ and Valkey can): +@write/-@write do not cover them; \
             allow or deny them by name (see README, Security)",
        );
    }
    for command in commands {
        let categories = acl_categories_supported().then(|| categories(command, own_category));
        command.register(ctx.ctx, categories.as_deref())?;
    }
    Ok(())
}

/// Valkey 9+: the server lists `HANDLE_ATOMIC_SLOT_MIGRATION` among the
/// module options it knows. Asked of Valkey's own API name, which Redis
/// lacks (there the bit may come to mean something else).
fn migrates_slots_atomically() -> bool {
    type OptionsAll = unsafe extern "C" fn() -> c_int;
    let Some(function) = api_function(c"ValkeyModule_GetModuleOptionsAll") else {
        return false;
    };
    // SAFETY: Valkey's GetModuleOptionsAll takes nothing and returns the
    // bitmask of the options this server supports.
    let supported = unsafe {
        let options_all: OptionsAll = std::mem::transmute(function.as_ptr());
        options_all()
    };
    supported & HANDLE_ATOMIC_SLOT_MIGRATION != 0
}

/// `RedisModule_SetCommandACLCategories` exists from Redis 7.2 and in
/// Valkey; on Redis 7.0 the server leaves the pointer null.
fn acl_categories_supported() -> bool {
    // SAFETY: a read of a function pointer the server set at load.
    let set_categories = unsafe { raw::RedisModule_SetCommandACLCategories };
    set_categories.is_some()
}

/// Adds `@guard` where the server offers `RedisModule_AddACLCategory`
/// (looked up by name: the bindings predate it).
fn add_own_category(ctx: &Context) -> bool {
    type AddCategory = unsafe extern "C" fn(*mut raw::RedisModuleCtx, *const c_char) -> c_int;
    let Some(function) = api_function(c"RedisModule_AddACLCategory") else {
        ctx.log_notice("redis-guard: no module-defined ACL categories on this server: no @guard");
        return false;
    };
    // SAFETY: the server's RedisModule_AddACLCategory has this signature;
    // it is called during OnLoad, as required, with a NUL-terminated name.
    let added = unsafe {
        let add: AddCategory = std::mem::transmute(function.as_ptr());
        add(ctx.ctx, CATEGORY.as_ptr())
    };
    added == raw::REDISMODULE_OK as c_int
}

fn categories(command: &Command, own_category: bool) -> CString {
    let mut text = command.acl_categories.to_bytes().to_vec();
    if own_category {
        text.push(b' ');
        text.extend_from_slice(CATEGORY.to_bytes());
    }
    CString::new(text).expect("category names are static text without NUL")
}

/// Looks up an API function by name; null where this server lacks it.
fn api_function(name: &CStr) -> Option<NonNull<c_void>> {
    let mut function: *mut c_void = std::ptr::null_mut();
    // SAFETY: GetApi writes one function pointer (or nothing) into the
    // pointer-sized slot it is given; it is set by the time OnLoad runs.
    let found = unsafe {
        raw::RedisModule_GetApi.unwrap()(name.as_ptr(), (&mut function as *mut *mut c_void).cast())
    };
    if found == raw::REDISMODULE_OK as c_int {
        NonNull::new(function)
    } else {
        None
    }
}
