//! `MON.APPLY key op [op ...]`: replays a sliding window's effects as the
//! primary decided them (the ops are `effect.rs`'s).

use super::store::Window;
use crate::redis::Command;
use crate::replicated::apply;

pub const COMMAND: Command = apply::command::<Window>(
    c"mon.apply",
    c"Replays a sliding window's effects from the primary or the AOF; refused from clients.",
    c"O(N) for N effects.",
);
