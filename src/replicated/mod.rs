//! The layer a replicated module type plugs into. Such a type changes only
//! by effects: its pure rules decide them with the server's clock, its
//! store applies them, and they, not the call, are what replicates: one
//! `<TYPE>.APPLY key op [op ...]` carrying absolute times, which replicas,
//! the AOF and Valkey's atomic slot migration replay whatever their clock.
//!
//! A type implements [`Replicated`] (what its effects act on, what each
//! owes, its ops' words); the layer owns the rest once for every type:
//! - `wire.rs`: effects to arguments and back;
//! - `pipeline.rs`: open, decide, apply in order, then the events,
//!   counters, propagation and WATCH signal a real write owes;
//! - `apply.rs`: the APPLY command, refused to clients;
//! - `rewrite.rs`: the AOF rewrite, as the effects that rebuild a value.

pub mod apply;
pub mod pipeline;
pub mod rewrite;
pub mod wire;

use std::ffi::CStr;

use crate::redis::{DataType, EventClass, ModuleValue, Words};
use crate::stats::Counter;
pub use wire::WireError;

/// Why an effect does not fit the value (a replica, an AOF or a RESTOREd
/// value that this module could not have made).
pub type ApplyError = &'static str;

/// What an effect acts on.
pub enum Acts<S> {
    /// It makes a value of this shape on a missing key.
    Creating(S),
    /// It sets the key's expiry to this absolute time, ms.
    Expiring(i64),
    /// It changes the value in place ([`Replicated::apply`]).
    OnValue,
}

/// What an applied effect owes: a keyspace event and, for a client's call
/// (not a replay), an INFO counter.
pub struct Owed {
    pub class: EventClass,
    pub event: &'static CStr,
    pub counter: Option<&'static Counter>,
}

/// A module type whose every change is one of its effects.
pub trait Replicated: ModuleValue + 'static {
    type Effect;
    /// What a new value is made of (a campaign's settings, a window's
    /// length and cut).
    type Shape: Copy;
    /// The command that carries effects (`COUPON.APPLY`, `MON.APPLY`).
    const APPLY_COMMAND: &'static CStr;

    fn data_type() -> &'static DataType<Self>;

    fn acts(effect: &Self::Effect) -> Acts<Self::Shape>;

    /// A new, empty value.
    fn new(shape: Self::Shape) -> Box<Self>;

    /// Applies an [`Acts::OnValue`] effect, or refuses it whole and
    /// changes nothing.
    fn apply(&mut self, effect: &Self::Effect) -> Result<(), ApplyError>;

    /// The event and counter an applied effect owes, if any.
    fn owed(effect: &Self::Effect) -> Option<Owed>;

    /// The effect's op: its name, then its arguments.
    fn write_op<'a>(effect: &'a Self::Effect, words: &mut Words<'a>);

    /// Reads the op named `op` from the start of `args` (its arguments):
    /// the effect and what follows it. Only the op's shape is judged here;
    /// whether it fits a value is [`Replicated::apply`]'s.
    fn read_op<'a, A: AsRef<[u8]>>(
        op: &[u8],
        args: &'a [A],
    ) -> Result<(Self::Effect, &'a [A]), WireError>;

    /// The effects that rebuild the value on an empty key.
    fn rebuild(&self) -> Vec<Self::Effect>;
}
