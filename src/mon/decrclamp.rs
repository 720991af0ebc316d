//! `MON.DECRCLAMP key amount`: a refund that never takes a counter below 0
//! and keeps its TTL.

use super::rules::{self, Refund};
use crate::args;
use crate::redis::{
    callback, Arg, ArgDoc, Command, CommandKey, Ctx, Effect, EventClass, Handler, KeyAccess, Keys,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

pub const COMMAND: Command = Command {
    name: c"mon.decrclamp",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: 3,
    keys: Keys::One(KeyAccess::UPDATE),
    summary: c"Subtracts from a counter without going below 0, keeping its TTL.",
    complexity: c"O(1)",
    args: &[ArgDoc::KEY, ArgDoc::integer(c"amount")],
    callback: callback::<DecrClamp>,
};

/// A parsed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecrClamp {
    pub amount: i64,
}

impl DecrClamp {
    /// `args` are the arguments after the key.
    pub fn parse<A: AsRef<[u8]>>(args: &[A]) -> Result<Self, ErrorReply> {
        let [amount] = args else {
            return Err(args::wrong_arity("mon.decrclamp"));
        };
        Ok(DecrClamp {
            amount: args::positive(amount.as_ref(), "amount")?,
        })
    }
}

impl Handler for DecrClamp {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::MON_DECRCLAMP_CALLS.bump();
        let request = DecrClamp::parse(&args[2..])?;
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        match rules::refund(key.read_integer()?, request.amount) {
            Refund::Nothing => Ok(Reply::Integer(0)),
            Refund::Write { value, lost } => {
                key.write_integer(value)?;
                target.replicate(Effect::SetKeepTtl(value));
                target.notify(EventClass::String, c"decrby");
                if lost > 0 {
                    stats::MON_CLAMPS.bump();
                    stats::MON_CLAMPED_AMOUNT.add(lost.unsigned_abs());
                    target.notify(EventClass::String, c"mon.clamped");
                }
                target.signal_modified();
                Ok(Reply::Integer(value))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_a_positive_amount() {
        assert_eq!(DecrClamp::parse(&["50"]).unwrap().amount, 50);
        for bad in ["0", "-5", "", "abc", "-0", "+1", "01"] {
            let error = DecrClamp::parse(&[bad]).unwrap_err();
            assert!(error.message().starts_with("ERR amount "), "{bad}: {error}");
        }
    }
}
