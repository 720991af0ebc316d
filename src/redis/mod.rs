//! The Redis module API, and the only place in the crate that touches it.
//!
//! Every `unsafe` block of the crate lives in this folder, each with the
//! reason it holds. What the rest of the crate sees is safe: a [`Ctx`] and
//! [`Arg`]s that cannot outlive the call they belong to, an [`OpenKey`]
//! that closes itself, the [`PlainWrite`]s a command propagates, and the
//! [`Command`] metadata that registers a command. Business rules live
//! elsewhere; nothing here decides anything, and nothing here knows a
//! command of the module: a family names its keywords and words itself.
//!
//! - `entry.rs`: the call at run time: the C entry (panics caught),
//!   [`Ctx`], [`Arg`], the reply sent back.
//! - `spec.rs`: what registers a command: [`Command`], its [`Keys`] and
//!   their key specs, [`ArgDoc`] for `COMMAND DOCS`.
//! - `key_access.rs`: how a command uses a key ([`KeyAccess`]).
//! - `key.rs`: opening a key ([`CommandKey`], [`OpenKey`]), its existence
//!   and expiry.
//! - `access.rs`: typed access to an open key: integers in strings, sorted
//!   sets, sets, module values.
//! - `propagate.rs`: propagation to replicas and the AOF ([`Word`]s,
//!   [`PlainWrite`]s).
//! - `events.rs`: keyspace events and the `WATCH` signal.
//! - `call.rs`: commands run through the server (sets, XINFO, XTRIM).
//! - `stream.rs`: appending to a stream as XADD does.
//! - `datatype.rs`: module data types, their RDB and AOF rewrite.
//! - `load.rs`, `info.rs`, `alloc.rs`: loading, the INFO section, the
//!   allocator.

mod access;
mod alloc;
mod call;
mod datatype;
mod defrag;
mod entry;
mod events;
mod info;
mod key;
mod key_access;
mod load;
mod propagate;
mod spec;
mod stream;
mod tailed;

#[cfg(test)]
pub use alloc::reallocated_bytes;
pub use alloc::{allocated, ModuleAlloc};
pub use call::SetCall;
pub use datatype::{AofCommand, DataType, ModuleValue, Reader, Writer};
pub use defrag::Mover;
pub use entry::{callback, callback_finding_keys, Arg, Ctx, FindsKeys, Handler};
pub use events::EventClass;
pub use key::{CommandKey, OpenKey};
pub use key_access::KeyAccess;
pub use load::load;
pub use propagate::{KeptWord, PlainWrite, Word, Words};
pub use spec::{ArgDoc, Command, Keys};
pub use stream::{StreamId, STREAM_IDS_USED_UP};
pub use tailed::{Boxed, TailLength, Tailed};
