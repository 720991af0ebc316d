//! `LEDGER stream`, the option every campaign write takes: its doc, its
//! key spec, where its key is, and the checks of a call that names one
//! (or should): the stream is a stream or nothing, and it is the
//! campaign's ledger.

use std::ffi::CStr;

use super::store::Campaign;
use crate::args;
use crate::redis::{Arg, ArgDoc, CommandKey, Ctx, KeyAccess, Keys};
use crate::reply::ErrorReply;

/// The option's keyword, as the key spec names it ...
const KEYWORD: &CStr = c"LEDGER";
/// ... and as the arguments are read.
pub const LEDGER: &str = match KEYWORD.to_str() {
    Ok(text) => text,
    Err(_) => panic!("LEDGER is ASCII"),
};

/// `LEDGER stream`, the key argument of the option.
pub const DOC_KEY: ArgDoc = ArgDoc::keyword_key(c"stream", KEYWORD);

/// `[LEDGER stream]`, as `COMMAND DOCS` shows it.
pub const DOC: ArgDoc = DOC_KEY.optional();

/// The keys of a campaign write whose options start at argv[`from`]: the
/// campaign at argv[1], used as `access`, and the ledger, appended to. An
/// option's value (a request id) may be spelled LEDGER, so the keyword's
/// spec is incomplete: the server asks [`key_positions`].
pub const fn keys(access: KeyAccess, from: usize) -> Keys {
    Keys::WithKeyword {
        access,
        keyword: KEYWORD,
        from: from as i32,
        keyword_access: KeyAccess::APPEND.incomplete(),
    }
}

/// Where the keys are in a call whose `NAME value` options start at
/// argv[`from`]: argv[1], and the value of a `LEDGER` option. Options are
/// walked in pairs, so a value spelled LEDGER is no keyword.
pub fn key_positions<A: AsRef<[u8]>>(args: &[A], from: usize) -> Vec<(usize, KeyAccess)> {
    let campaign = (args.len() > 1).then_some((1, KeyAccess::UPDATE));
    campaign
        .into_iter()
        .chain(ledger_position(args, from, 1))
        .collect()
}

/// The position of a `LEDGER` option's value among options from `from`,
/// each followed by its value (`QTY` by `qty_values` of them).
pub fn ledger_position<A: AsRef<[u8]>>(
    args: &[A],
    from: usize,
    qty_values: usize,
) -> Option<(usize, KeyAccess)> {
    let mut at = from;
    while at + 1 < args.len() {
        let option = args[at].as_ref();
        if option.eq_ignore_ascii_case(LEDGER.as_bytes()) {
            return Some((at + 1, KeyAccess::APPEND));
        }
        at += if option.eq_ignore_ascii_case(b"QTY") {
            1 + qty_values
        } else {
            2
        };
    }
    None
}

/// Options that are only `[LEDGER stream]`: the stream, if given.
pub fn only_ledger<A: AsRef<[u8]>>(options: &[A]) -> Result<Option<&A>, ErrorReply> {
    let mut stream = None;
    args::options(options, &[LEDGER], |_, value| {
        stream = Some(value);
        Ok(())
    })?;
    Ok(stream)
}

/// A call's stream, before the campaign is read: a stream or nothing
/// (WRONGTYPE even if nothing would be written).
pub fn check_stream(ctx: Ctx<'_>, given: Option<Arg<'_>>) -> Result<(), ErrorReply> {
    given.map_or(Ok(()), |stream| {
        CommandKey::new(ctx, stream).require_stream()
    })
}

/// The stream a call names against the campaign's ledger.
pub fn check_named(campaign: &Campaign, given: Option<&[u8]>) -> Result<(), ErrorReply> {
    match (campaign.ledger(), given) {
        (None, None) => Ok(()),
        (Some(ledger), Some(given)) if *ledger.stream == *given => Ok(()),
        (Some(_), None) => Err(ErrorReply::new(
            "ERR ledger: the campaign keeps a ledger; name its stream with LEDGER",
        )),
        (Some(_), Some(_)) => Err(ErrorReply::new(
            "ERR ledger: the stream is not the campaign's ledger",
        )),
        (None, Some(_)) => Err(ErrorReply::new("ERR ledger: the campaign keeps no ledger")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(args: &[&str], from: usize) -> Vec<usize> {
        key_positions(args, from)
            .into_iter()
            .map(|(at, _)| at)
            .collect()
    }

    #[test]
    fn the_ledger_is_the_value_of_a_ledger_option() {
        assert_eq!(at(&["coupon.reserve", "k", "u", "LEDGER", "s"], 3), [1, 4]);
        assert_eq!(
            at(&["coupon.reserve", "k", "u", "id", "x", "ledger", "s"], 3),
            [1, 6]
        );
        // A value spelled LEDGER is a value; a user too.
        assert_eq!(
            at(
                &[
                    "coupon.reserve",
                    "k",
                    "LEDGER",
                    "ID",
                    "LEDGER",
                    "LEDGER",
                    "s"
                ],
                3
            ),
            [1, 6]
        );
        // QTY's values are values.
        let qty = ["x", "k", "k2", "u", "QTY", "LEDGER", "2", "LEDGER", "s"];
        assert_eq!(ledger_position(&qty, 4, 2).map(|(at, _)| at), Some(8));
        // A last LEDGER has no value.
        assert_eq!(at(&["coupon.confirm", "k", "1", "LEDGER"], 3), [1]);
        assert_eq!(at(&["coupon.confirm"], 3), Vec::<usize>::new());
    }
}
