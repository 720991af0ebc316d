//! The AOF rewrite of a replicated value: the effects that rebuild it, in
//! APPLY commands of a bounded size (Valkey's atomic slot migration
//! replays the same commands).

use super::{wire, Replicated};
use crate::redis::AofCommand;

/// Effects per APPLY command in a rewritten AOF.
const EFFECTS_PER_AOF_COMMAND: usize = 100;

pub fn commands<T: Replicated + ?Sized>(value: &T) -> Vec<AofCommand> {
    value
        .rebuild()
        .chunks(EFFECTS_PER_AOF_COMMAND)
        .map(|batch| (T::APPLY_COMMAND, wire::to_args::<T>(batch)))
        .collect()
}
