//! `COUPON.CREATE key limit [PERUSER n] [HOLD seconds] [LEDGER stream
//! [MAXLEN n]]`: a new campaign, with the ledger it writes every change
//! to.

use super::ledger_option::{self, LEDGER};
use super::settings::Settings;
use super::write;
use crate::args;
use crate::redis::{
    callback_finding_keys, Arg, ArgDoc, Command, Ctx, FindsKeys, Handler, KeyAccess,
};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.create",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -3,
    keys: ledger_option::keys(KeyAccess::INSERT, OPTIONS_FROM),
    summary: c"Creates a campaign: at most limit live claims, PERUSER each, holds of HOLD s, every change in the LEDGER stream.",
    complexity: c"O(1)",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"limit"),
        ArgDoc::integer(c"peruser").option(c"PERUSER"),
        ArgDoc::integer(c"hold").option(c"HOLD"),
        ArgDoc::block(
            c"ledger",
            &[ledger_option::DOC_KEY, ArgDoc::integer(c"maxlen").option(c"MAXLEN")],
        )
        .optional(),
    ],
    callback: callback_finding_keys::<CouponCreate>,
};

/// Where the options start: after the limit.
const OPTIONS_FROM: usize = 3;

/// The default hold of RESERVE, seconds.
pub const DEFAULT_HOLD_S: i64 = 600;

/// A parsed call: the settings, and the ledger's stream (as given) with
/// its MAXLEN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Create<'a, A> {
    pub settings: Settings,
    pub ledger: Option<(&'a A, Option<i64>)>,
}

impl<'a, A: AsRef<[u8]>> Create<'a, A> {
    /// `args` are the arguments after the `key`. A HOLD must fit as an
    /// expiry from `now_ms`, as a window does: a client's call is judged by
    /// the clock; what it made travels as values (see the pipeline).
    pub fn parse(key: &[u8], args: &'a [A], now_ms: i64) -> Result<Self, ErrorReply> {
        let [limit, options @ ..] = args else {
            return Err(args::wrong_arity("coupon.create"));
        };
        let mut settings = Settings {
            limit: args::positive(limit.as_ref(), "limit")?,
            per_user: 1,
            hold_s: DEFAULT_HOLD_S,
        };
        let (mut stream, mut maxlen) = (None, None);
        args::options(
            options,
            &["PERUSER", "HOLD", LEDGER, "MAXLEN"],
            |option, value| {
                match option {
                    0 => settings.per_user = args::positive(value.as_ref(), "peruser")?,
                    1 => {
                        let hold =
                            args::seconds_from(value.as_ref(), "hold", now_ms, "coupon.create");
                        settings.hold_s = hold?.0
                    }
                    2 if value.as_ref() == key => {
                        return Err(ErrorReply::new(
                            "ERR ledger stream must not be the campaign's key",
                        ))
                    }
                    2 => stream = Some(value),
                    _ => maxlen = Some(args::positive(value.as_ref(), "maxlen")?),
                }
                Ok(())
            },
        )?;
        let ledger = match (stream, maxlen) {
            (Some(stream), maxlen) => Some((stream, maxlen)),
            (None, Some(_)) => {
                return Err(ErrorReply::new(
                    "ERR option MAXLEN is only valid with LEDGER",
                ))
            }
            (None, None) => None,
        };
        Ok(Create { settings, ledger })
    }
}

/// The command.
pub struct CouponCreate;

impl FindsKeys for CouponCreate {
    fn key_positions(args: &[Arg<'_>]) -> Vec<(usize, KeyAccess)> {
        ledger_option::key_positions(args, OPTIONS_FROM)
    }
}

impl Handler for CouponCreate {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let request = Create::parse(args[1].as_bytes(), &args[2..], ctx.now_ms())?;
        let ledger = request.ledger.map(|(stream, maxlen)| (*stream, maxlen));
        write::create(ctx, args[1], request.settings, ledger)?;
        Ok(Reply::Simple("OK"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn parse(args: &[&'static str]) -> Result<Create<'static, &'static str>, ErrorReply> {
        // Leaked: the parsed call borrows its arguments.
        Create::parse(b"k", Box::leak(args.to_vec().into_boxed_slice()), NOW)
    }

    fn error(args: &[&'static str]) -> String {
        parse(args).unwrap_err().to_string()
    }

    #[test]
    fn defaults_and_options_in_any_order_and_case() {
        assert_eq!(
            parse(&["100"]).map(|call| call.settings),
            Ok(Settings {
                limit: 100,
                per_user: 1,
                hold_s: 600
            })
        );
        let call = parse(&["5", "hold", "30", "PerUser", "2", "ledger", "l"]).unwrap();
        assert_eq!((call.settings.per_user, call.settings.hold_s), (2, 30));
        assert_eq!(call.ledger, Some((&"l", None)));
        let call = parse(&["5", "MAXLEN", "9", "LEDGER", "l"]).unwrap();
        assert_eq!(call.ledger, Some((&"l", Some(9))));
    }

    #[test]
    fn errors_name_the_argument_or_the_option() {
        assert!(error(&["0"]).starts_with("ERR limit "));
        assert!(error(&["1", "PERUSER", "0"]).starts_with("ERR peruser "));
        assert!(error(&["1", "HOLD", "-5"]).starts_with("ERR hold "));
        assert!(error(&["1", "HOLD", "9223372036854775807"]).contains("hold is too large"));
        assert!(error(&["1", "HOLD"]).contains("HOLD needs a value"));
        assert!(error(&["1", "HOLD", "1", "hold", "2"]).contains("HOLD is given more than once"));
        assert!(error(&["1", "ID", "x"]).contains("unknown option 'ID'"));
        assert!(error(&["x", "BOGUS"]).starts_with("ERR limit "));
        assert!(error(&["1", "LEDGER", "k"]).starts_with("ERR ledger "));
        assert!(error(&["1", "MAXLEN", "5"]).contains("MAXLEN is only valid with LEDGER"));
        assert!(error(&["1", "LEDGER", "l", "MAXLEN", "0"]).starts_with("ERR maxlen "));
    }
}
