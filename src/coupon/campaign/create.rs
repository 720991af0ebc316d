//! `COUPON.CREATE key limit [PERUSER n] [HOLD seconds]`: a new campaign.

use super::settings::Settings;
use super::write;
use crate::args;
use crate::redis::{callback, Arg, ArgDoc, Command, Ctx, Handler, KeyAccess, Keys};
use crate::reply::{CommandResult, ErrorReply, Reply};

pub const COMMAND: Command = Command {
    name: c"coupon.create",
    flags: c"write deny-oom fast",
    acl_categories: c"write fast",
    arity: -3,
    keys: Keys::One(KeyAccess::INSERT),
    summary: c"Creates a campaign: at most limit live claims, PERUSER each, holds of HOLD s.",
    complexity: c"O(1)",
    since: c"0.1.0",
    args: &[
        ArgDoc::KEY,
        ArgDoc::integer(c"limit"),
        ArgDoc::integer(c"peruser").option(c"PERUSER"),
        ArgDoc::integer(c"hold").option(c"HOLD"),
    ],
    callback: callback::<CouponCreate>,
};

/// The default hold of RESERVE, seconds.
pub const DEFAULT_HOLD_S: i64 = 600;

pub struct CouponCreate;

impl CouponCreate {
    /// `args` are the arguments after the key. A HOLD must fit as an
    /// expiry from `now_ms`, as a window does: a client's call is judged by
    /// the clock; what it made travels as values (see the pipeline).
    pub fn parse<A: AsRef<[u8]>>(args: &[A], now_ms: i64) -> Result<Settings, ErrorReply> {
        let [limit, options @ ..] = args else {
            return Err(args::wrong_arity("coupon.create"));
        };
        let mut settings = Settings {
            limit: args::positive(limit.as_ref(), "limit")?,
            per_user: 1,
            hold_s: DEFAULT_HOLD_S,
        };
        args::options(options, &["PERUSER", "HOLD"], |option, value| {
            let value = value.as_ref();
            match option {
                0 => settings.per_user = args::positive(value, "peruser")?,
                _ => {
                    settings.hold_s = args::seconds_from(value, "hold", now_ms, "coupon.create")?.0
                }
            }
            Ok(())
        })?;
        Ok(settings)
    }
}

impl Handler for CouponCreate {
    fn run(ctx: Ctx<'_>, args: &[Arg<'_>]) -> CommandResult {
        let settings = CouponCreate::parse(&args[2..], ctx.now_ms())?;
        write::create(ctx, args[1], settings)?;
        Ok(Reply::Simple("OK"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn error(args: &[&str]) -> String {
        CouponCreate::parse(args, NOW).unwrap_err().to_string()
    }

    #[test]
    fn defaults_and_options_in_any_order_and_case() {
        assert_eq!(
            CouponCreate::parse(&["100"], NOW),
            Ok(Settings {
                limit: 100,
                per_user: 1,
                hold_s: 600
            })
        );
        let settings = CouponCreate::parse(&["5", "hold", "30", "PerUser", "2"], NOW).unwrap();
        assert_eq!((settings.per_user, settings.hold_s), (2, 30));
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
    }
}
