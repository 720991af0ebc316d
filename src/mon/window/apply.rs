//! `MON.APPLY key op [op ...]`: replays a sliding window's effects as the
//! primary decided them (the wire format is `effect.rs`'s). It runs only
//! for the replication link, the AOF and the slot import client.

use super::{effect, pipeline};
use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const COMMAND: Command = Command {
    name: c"mon.apply",
    flags: c"write",
    acl_categories: c"write slow",
    arity: -4,
    keys: Keys::One(KeyAccess::UPDATE),
    summary:
        c"Replays a sliding window's effects from the primary or the AOF; refused from clients.",
    complexity: c"O(N) for N effects.",
    since: c"0.1.0",
    args: &[ArgDoc::KEY, ArgDoc::string(c"op").multiple()],
    callback: callback::<Apply>,
};

pub struct Apply;

impl Handler for Apply {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        ctx.require_replay("MON.APPLY")?;
        let effects = effect::from_args(&args[2..])
            .map_err(|why| ErrorReply::owned(format!("ERR MON.APPLY: {why}")))?;
        pipeline::replay(ctx, args[1], &effects)?;
        Ok(Reply::Simple("OK"))
    }
}
