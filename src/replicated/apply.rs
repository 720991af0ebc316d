//! `<TYPE>.APPLY key op [op ...]`: replays a value's effects as the
//! primary decided them. It runs only for the replication link, the AOF
//! and the slot import client; any other client gets an error.

use std::marker::PhantomData;

use super::{pipeline, wire, Replicated};
use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, ErrorReply, Reply};

const ARGS: &[ArgDoc] = &[ArgDoc::KEY, ArgDoc::string(c"op").multiple()];

/// The APPLY command of `T`; the type names and documents it.
pub const fn command<T: Replicated + ?Sized>(
    name: &'static std::ffi::CStr,
    summary: &'static std::ffi::CStr,
    complexity: &'static std::ffi::CStr,
) -> Command {
    Command {
        name,
        flags: c"write",
        acl_categories: c"write slow",
        arity: -4,
        keys: Keys::One(KeyAccess::UPDATE),
        summary,
        complexity,
        since: c"0.1.0",
        args: ARGS,
        callback: callback::<Apply<T>>,
    }
}

struct Apply<T: ?Sized>(PhantomData<fn() -> Box<T>>);

impl<T: Replicated + ?Sized> Handler for Apply<T> {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let name = T::APPLY_COMMAND.to_str().unwrap_or("APPLY");
        ctx.require_replay(name)?;
        let effects = wire::from_args::<T, _>(&args[2..])
            .map_err(|why| ErrorReply::owned(format!("ERR {name}: {why}")))?;
        pipeline::replay::<T>(ctx, args[1], &effects)?;
        Ok(Reply::Simple("OK"))
    }
}
