//! `MON.DECRCLAMP key amount [ALERT stream [MAXLEN n]]`: a refund that
//! never takes a counter below 0 and keeps its TTL (a clamp is recorded in
//! the stream).

use super::alert::{self, Alert, AmountTail, Record};
use super::rules::{self, Refund};
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, CommandKey, Ctx, EventClass, FindsKeys, Handler,
    KeyAccess, PlainWrite,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

/// Where the search for `ALERT` starts: after `amount`.
const ALERT_FROM: usize = 3;

pub const COMMAND: Command = Command {
    name: c"mon.decrclamp",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -3,
    keys: alert::keys(KeyAccess::UPDATE, ALERT_FROM),
    summary: c"Subtracts from a counter without going below 0, keeping its TTL.",
    complexity: c"O(1)",
    since: c"0.1.0",
    args: &[ArgDoc::KEY, ArgDoc::integer(c"amount"), alert::DOC],
    callback: callback_finding_keys::<MonDecrClamp>,
};

/// A parsed call; `A` is how an argument is given (the stream stays one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecrClamp<'a, A> {
    pub amount: i64,
    pub alert: Option<Alert<'a, A>>,
}

impl<'a, A: AsRef<[u8]>> DecrClamp<'a, A> {
    /// `args` are the arguments after the counter `key`.
    pub fn parse(key: &[u8], args: &'a [A]) -> Result<Self, ErrorReply> {
        let [amount, tail @ ..] = args else {
            return Err(args::wrong_arity("mon.decrclamp"));
        };
        let tail = AmountTail::new(tail, "mon.decrclamp")?;
        let amount = args::positive(amount.as_ref(), "amount")?;
        Ok(DecrClamp {
            amount,
            alert: tail.parse(key)?,
        })
    }
}

/// The command (its parsed calls borrow their arguments).
pub struct MonDecrClamp;

impl FindsKeys for MonDecrClamp {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        alert::key_positions(args, ALERT_FROM)
    }
}

impl Handler for MonDecrClamp {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::MON_DECRCLAMP_CALLS.bump();
        let request = DecrClamp::parse(args[1].as_bytes(), &args[2..])?;
        alert::check(request.alert.as_ref(), ctx)?;
        let target = CommandKey::new(ctx, args[1]);
        let mut key = target.open();
        match rules::refund(key.read_integer()?, request.amount) {
            Refund::Nothing => Ok(Reply::Integer(0)),
            Refund::Write { value, lost } => {
                let record = (lost > 0).then_some(Record::Clamp { clamped: lost });
                let alerted = alert::append(request.alert.as_ref(), ctx, args[1], record)?;
                key.write_integer(value)?;
                target.replicate(PlainWrite::SetKeepTtl(value));
                target.notify(EventClass::String, c"decrby");
                if lost > 0 {
                    stats::MON_CLAMPS.bump();
                    stats::MON_CLAMPED_AMOUNT.add(lost.unsigned_abs());
                    target.notify(EventClass::String, c"mon.clamped");
                }
                if let Some(entry) = alerted {
                    entry.propagate();
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
        assert_eq!(DecrClamp::parse(b"k", &["50"]).unwrap().amount, 50);
        for bad in ["0", "-5", "", "abc", "-0", "+1", "01"] {
            let error = DecrClamp::parse(b"k", &[bad]).unwrap_err();
            assert!(error.message().starts_with("ERR amount "), "{bad}: {error}");
        }
    }

    #[test]
    fn a_token_that_is_no_option_is_an_arity_error_whatever_the_amount() {
        for call in [["x", "5"], ["0", "x"], ["50", "7"]] {
            let error = DecrClamp::parse(b"k", &call).unwrap_err();
            assert_eq!(
                error.message(),
                "ERR wrong number of arguments for 'mon.decrclamp' command",
                "{call:?}"
            );
        }
        // An option after a bad amount: the amount is the first bad one.
        let error = DecrClamp::parse(b"k", &["x", "ALERT", "k"]).unwrap_err();
        assert!(error.message().starts_with("ERR amount "), "{error}");
    }
}
