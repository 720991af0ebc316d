//! The Redis module API, and the only place in the crate that touches it.
//!
//! Every `unsafe` block of the crate lives in this folder, each with the
//! reason it holds. What the rest of the crate sees is safe: a [`Ctx`] and
//! [`Arg`]s that cannot outlive the call they belong to, an [`OpenKey`]
//! that closes itself, the [`Effect`]s a command propagates, and the
//! [`Command`] metadata that registers a command. Business rules live
//! elsewhere; nothing here decides anything.

mod alloc;
mod call;
mod command;
mod datatype;
mod info;
mod key;
mod load;

pub use alloc::ModuleAlloc;
pub use call::SetCall;
pub use command::{
    callback, callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess, Keys,
};
pub use datatype::{AofCommand, DataType, ModuleValue, Reader, Writer};
pub use key::{CommandKey, Effect, EventClass, KeptWord, OpenKey, Word, Words};
pub use load::load;
