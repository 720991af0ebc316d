//! `COUPON.APPLY key op [op ...]`: replays a campaign's effects as the
//! primary decided them (the wire format is `effect.rs`'s). Every campaign
//! write propagates as one of these, a rewritten AOF rebuilds campaigns
//! with them, and Valkey's atomic slot migration replays them on the
//! target. It runs only for the replication link, the AOF and the slot
//! import client; any other client gets an error.

use super::{effect, pipeline};
use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.apply",
    flags: c"write",
    acl_categories: c"write slow",
    arity: -4,
    keys: Keys::One(KeyAccess::UPDATE),
    summary: c"Replays a campaign's effects from the primary or the AOF; refused from clients.",
    complexity: c"O(N log M) for N effects on a campaign of M claims.",
    since: c"0.1.0",
    args: &[ArgDoc::KEY, ArgDoc::string(c"op").multiple()],
    callback: callback::<Apply>,
};

pub struct Apply;

impl Handler for Apply {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        ctx.require_replay("COUPON.APPLY")?;
        let effects = effect::from_args(&args[2..])
            .map_err(|why| ErrorReply::owned(format!("ERR COUPON.APPLY: {why}")))?;
        pipeline::replay(ctx, args[1], &effects)?;
        Ok(Reply::Simple("OK"))
    }
}
