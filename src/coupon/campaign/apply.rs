//! `COUPON.APPLY key op [op ...]`: replays a campaign's effects as the
//! primary decided them (the ops are `effect.rs`'s). Every campaign write
//! propagates as one of these, a rewritten AOF rebuilds campaigns with
//! them, and Valkey's atomic slot migration replays them on the target.

use super::store::Campaign;
use crate::redis::Command;
use crate::replicated::apply;

pub const COMMAND: Command = apply::command::<Campaign>(
    c"coupon.apply",
    c"Replays a campaign's effects from the primary or the AOF; refused from clients.",
    c"O(N log M) for N effects on a campaign of M claims.",
);
