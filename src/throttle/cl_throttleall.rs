//! `CL.THROTTLEALL numkeys key max_burst count period [key max_burst count
//! period ...] [QUANTITY n] [BLOCK seconds]`: several CL.THROTTLE limiters,
//! all or nothing.
//! Keys, values and expiry are CL.THROTTLE's, so a key works with both.

use super::all_or_nothing;
use super::cl_throttle::{parse_block, Limit, BLOCK};
use super::gcra::Rate;
use super::store;
use crate::args;
use crate::integer;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, CommandKey, Ctx, FindsKeys, Handler, KeyAccess,
    Keys,
};
use crate::reply::{CommandResult, ErrorReply, Reply};
use crate::stats;

/// Arguments per limiter: key, max_burst, count, period.
const GROUP: usize = 4;
/// Most limiters in one call.
pub const MAX_LIMITERS: i64 = 16;

pub const COMMAND: Command = Command {
    name: c"cl.throttleall",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -6,
    keys: Keys::Counted {
        access: KeyAccess::UPDATE,
        step: GROUP as i32,
    },
    summary: c"Several GCRA limits at once: all consume, or none does (a refusal costs nothing).",
    complexity: c"O(N) for N limiters.",
    since: c"0.1.0",
    args: &[
        ArgDoc::integer(c"numkeys"),
        ArgDoc::block(
            c"limiter",
            &[
                ArgDoc::KEY,
                ArgDoc::integer(c"max_burst"),
                ArgDoc::integer(c"count"),
                ArgDoc::integer(c"period"),
            ],
        )
        .multiple(),
        ArgDoc::integer(c"quantity").option(c"QUANTITY"),
        ArgDoc::integer(c"block").option(c"BLOCK"),
    ],
    callback: callback_finding_keys::<ClThrottleAll>,
};

/// A parsed call: where each limiter's key is (an index into the call's
/// arguments, the name being 0) and its rate with the call's quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleAll {
    pub limiters: Vec<(usize, Rate)>,
    /// `BLOCK`'s penalty in ns, if given.
    pub block_ns: Option<i64>,
}

/// The count at argv[1], as the key positions read it too.
fn numkeys(bytes: &[u8]) -> Result<usize, ErrorReply> {
    let n = args::positive(bytes, "numkeys")?;
    if n > MAX_LIMITERS {
        return Err(ErrorReply::owned(format!(
            "ERR numkeys must be at most {MAX_LIMITERS}"
        )));
    }
    Ok(n as usize)
}

impl ThrottleAll {
    /// `args` are the call's arguments after the name: numkeys, the
    /// groups, the options; `now_ns` the call's instant (`BLOCK` must fit
    /// after it). Errors name the first bad argument in order.
    pub fn parse<A: AsRef<[u8]>>(args: &[A], now_ns: i64) -> Result<Self, ErrorReply> {
        let [count, rest @ ..] = args else {
            return Err(args::wrong_arity("cl.throttleall"));
        };
        let n = numkeys(count.as_ref())?;
        if rest.len() < n * GROUP {
            return Err(ErrorReply::owned(format!(
                "ERR numkeys is {n}, but fewer than {n} limiters (key max_burst count period) \
                 follow"
            )));
        }
        let (groups, options) = rest.split_at(n * GROUP);
        let mut limits = [(0, Limit::default()); MAX_LIMITERS as usize];
        for (i, group) in groups.chunks_exact(GROUP).enumerate() {
            let [key, max_burst, count, period] = group else {
                unreachable!("chunks of GROUP")
            };
            let key = key.as_ref();
            if groups[..i * GROUP]
                .chunks_exact(GROUP)
                .any(|earlier| earlier[0].as_ref() == key)
            {
                return Err(ErrorReply::new("ERR key is given more than once"));
            }
            let limit = Limit::parse(max_burst, count, period)?;
            // Overflows of the group's own arguments, before QUANTITY's.
            limit.rate(0)?;
            limits[i] = (2 + i * GROUP, limit);
        }
        let limits = &limits[..n];
        let mut quantity = 1;
        let mut block_ns = None;
        args::options(options, &["QUANTITY", BLOCK], |option, value| {
            let value = value.as_ref();
            if option == 0 {
                quantity = args::non_negative(value, "quantity")?;
                // Its overflows where it stands, before a later BLOCK's.
                for (_, limit) in limits {
                    limit.rate(quantity)?;
                }
            } else {
                block_ns = Some(parse_block(value, now_ns)?);
            }
            Ok(())
        })?;
        let limiters = limits
            .iter()
            .map(|&(at, limit)| Ok((at, limit.rate(quantity)?)))
            .collect::<Result<_, ErrorReply>>()?;
        Ok(ThrottleAll { limiters, block_ns })
    }
}

/// The command.
pub struct ClThrottleAll;

impl Handler for ClThrottleAll {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        stats::THROTTLE_ALL_CALLS.bump();
        // One clock reading for every limiter (and BLOCK's check), before
        // the lookups.
        let now = ctx.now_ns();
        let request = ThrottleAll::parse(&args[1..], now)?;
        let mut keys: Vec<(CommandKey, _)> = request
            .limiters
            .iter()
            .map(|&(at, _)| {
                let target = CommandKey::new(ctx, args[at]);
                (target, target.open())
            })
            .collect();
        let inputs = keys
            .iter()
            .zip(&request.limiters)
            .map(|((_, key), &(_, rate))| Ok((key.read_integer()?, rate)))
            .collect::<Result<Vec<_>, ErrorReply>>()?;
        let verdict = all_or_nothing::decide(&inputs, now, request.block_ns)?;
        for ((target, key), cell) in keys.iter_mut().zip(&verdict.cells) {
            if let Some(stored) = cell.store {
                store(*target, key, stored)?;
            }
        }
        if verdict.limited {
            if request.block_ns.is_some() && verdict.retry_after_s != -1 {
                stats::THROTTLE_BLOCKED.bump();
            }
            stats::THROTTLE_ALL_LIMITED.bump();
        } else {
            stats::THROTTLE_ALL_ALLOWED.bump();
        }
        let mut reply = Vec::with_capacity(2 + verdict.cells.len());
        reply.push(Reply::Integer(i64::from(verdict.limited)));
        reply.push(Reply::Integer(verdict.retry_after_s));
        reply.extend(
            verdict
                .cells
                .iter()
                .map(|cell| Reply::Integers(cell.reply().into())),
        );
        Ok(Reply::Array(reply))
    }
}

impl FindsKeys for ClThrottleAll {
    /// A key every 4 arguments after numkeys, as many as numkeys says and
    /// the call holds; none when numkeys is not a count.
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        let Some(n) = args
            .get(1)
            .and_then(|count| integer::parse(count.as_bytes()))
            .and_then(|n| usize::try_from(n).ok())
        else {
            return Vec::new();
        };
        (0..n.min(args.len() / GROUP))
            .map(|i| 2 + i * GROUP)
            .take_while(|&at| at < args.len())
            .map(|at| (at, KeyAccess::UPDATE))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000_000_000;

    fn error(args: &[&str]) -> String {
        ThrottleAll::parse(args, NOW).unwrap_err().to_string()
    }

    #[test]
    fn groups_then_options() {
        let call = ThrottleAll::parse(&["2", "a", "9", "10", "1", "b", "99", "1000", "86400"], NOW)
            .unwrap();
        let positions: Vec<usize> = call.limiters.iter().map(|(at, _)| *at).collect();
        assert_eq!(positions, [2, 6]);
        assert_eq!(call.limiters[0].1, Rate::new(9, 10, 1, 1).unwrap());
        assert_eq!(call.limiters[1].1, Rate::new(99, 1000, 86400, 1).unwrap());
        assert_eq!(call.block_ns, None);
        let peek = ThrottleAll::parse(&["1", "a", "0", "1", "1", "quantity", "0"], NOW).unwrap();
        assert_eq!(peek.limiters[0].1.increment_ns, 0);
        let blocking = ThrottleAll::parse(
            &["1", "a", "0", "1", "1", "block", "5", "QUANTITY", "2"],
            NOW,
        )
        .unwrap();
        assert_eq!(blocking.block_ns, Some(5_000_000_000));
        assert_eq!(blocking.limiters[0].1.increment_ns, 2_000_000_000);
    }

    #[test]
    fn errors_name_the_first_bad_argument_in_order() {
        for (args, expected) in [
            (&["0", "a", "1", "1", "1"][..], "ERR numkeys "),
            (
                &["17", "a", "1", "1", "1"],
                "ERR numkeys must be at most 16",
            ),
            (&["x", "a", "1", "1", "1"], "ERR numkeys "),
            (&["2", "a", "1", "1", "1"], "ERR numkeys is 2"),
            (
                &["2", "a", "1", "1", "1", "b", "1", "1"],
                "ERR numkeys is 2",
            ),
            (
                &["2", "a", "-1", "1", "1", "b", "1", "0", "1"],
                "ERR max_burst ",
            ),
            (&["2", "a", "1", "1", "1", "b", "1", "0", "1"], "ERR count "),
            (
                &["2", "a", "1", "1", "1", "a", "1", "1", "1"],
                "ERR key is given more than once",
            ),
            (
                &["2", "a", "1", "1", "0", "a", "1", "1", "1"],
                "ERR period ",
            ),
            (
                &["1", "a", "1", "1", "1", "QUANTITY", "-1"],
                "ERR quantity ",
            ),
            (
                &["1", "a", "-1", "1", "1", "QUANTITY", "-1"],
                "ERR max_burst ",
            ),
            (
                &["1", "a", "1", "1", "1", "QUANTITY"],
                "QUANTITY needs a value",
            ),
            (
                &["1", "a", "1", "1", "1", "BOGUS", "1"],
                "unknown option 'BOGUS'",
            ),
            (
                &["1", "a", "1", "1", "1", "quantity", "1", "QUANTITY", "2"],
                "more than once",
            ),
            (
                &["1", "a", "1", "1", "9223372036854775807"],
                "ERR period is too large",
            ),
            (
                &["1", "a", "1", "1", "1", "QUANTITY", "9223372036854775807"],
                "ERR quantity is too large",
            ),
            (
                &["1", "a", "1", "1", "1", "BLOCK", "0"],
                "ERR block must be a positive integer",
            ),
            (
                &["1", "a", "1", "1", "1", "BLOCK", "8000000000"],
                "ERR block is too large",
            ),
            (
                &["1", "a", "1", "1", "1", "BLOCK", "1", "Block", "1"],
                "ERR option BLOCK is given more than once",
            ),
            // In argument order: QUANTITY's overflow before a bad BLOCK,
            // a bad BLOCK before a bad QUANTITY after it.
            (
                &[
                    "1",
                    "a",
                    "1",
                    "1",
                    "1",
                    "QUANTITY",
                    "9223372036854775807",
                    "BLOCK",
                    "0",
                ],
                "ERR quantity is too large",
            ),
            (
                &["1", "a", "1", "1", "1", "BLOCK", "0", "QUANTITY", "-1"],
                "ERR block ",
            ),
        ] {
            let error = error(args);
            assert!(error.contains(expected), "{args:?}: {error}");
        }
    }
}
