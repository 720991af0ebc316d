//! `ALERT stream [MAXLEN n]`: the alert record of a crossing (or of a
//! clamp), appended to a stream in the same step as the counter's write,
//! so an alert worker reading it with a consumer group gets every alert at
//! least once. Shared by MON.INCRCHECK, MON.SLIDECHECK, MON.DISTINCT and
//! MON.DECRCLAMP: the options, the stream's checks, the entry's fields,
//! the XADD and the XADD propagated.

use super::thresholds::{self, Thresholds};
use crate::args;
use std::ffi::CStr;

use crate::redis::{Arg, ArgDoc, CommandKey, Ctx, KeyAccess, Keys};
use crate::reply::ErrorReply;
use crate::stats;
use crate::stream::{self, Appended};

/// `[ALERT stream [MAXLEN n]]`, as `COMMAND DOCS` shows it.
pub const DOC: ArgDoc = ArgDoc::block(
    c"alert",
    &[
        ArgDoc::keyword_key(c"stream", ALERT_KEYWORD),
        ArgDoc::integer(c"maxlen").option(c"MAXLEN"),
    ],
)
.optional();

/// The option's keyword, as the key spec names it ...
const ALERT_KEYWORD: &CStr = c"ALERT";
/// ... and as the arguments are read.
const ALERT: &str = match ALERT_KEYWORD.to_str() {
    Ok(text) => text,
    Err(_) => panic!("ALERT is ASCII"),
};

/// The keys of a command that takes the option: the counter at argv[1],
/// used as `access`, and the stream, the argument after the first `ALERT`
/// from argv[`alert_from`] on (no argument before it can be spelled so:
/// they are integers), appended to.
pub const fn keys(access: KeyAccess, alert_from: usize) -> Keys {
    Keys::WithKeyword {
        access,
        keyword: ALERT_KEYWORD,
        from: alert_from as i32,
        keyword_access: KeyAccess::APPEND,
    }
}
const MAXLEN: &str = "MAXLEN";

/// Where a call's alert goes: the stream argument as given (a key of the
/// call), and `MAXLEN n`, the length the stream is trimmed to, about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alert<'a, A> {
    pub stream: &'a A,
    pub maxlen: Option<i64>,
}

/// A velocity check's tail after its fixed arguments: thresholds, then
/// options (the first option name after the first threshold starts them):
/// `ALERT stream [MAXLEN n]` and the command's `own` options, handed to
/// `each_own` by their index in `own`. `key` is the counter's: a stream
/// that is the counter is refused where it stands, so the first bad
/// argument is the one named. Inlined: the thresholds are built
/// where the caller keeps them (no copies of 32 slots on the hot path).
#[inline(always)]
pub fn after_thresholds<'a, A: AsRef<[u8]>>(
    tail: &'a [A],
    key: &[u8],
    own: &[&str],
    each_own: impl FnMut(usize, &'a A) -> Result<(), ErrorReply>,
) -> Result<(Thresholds, Option<Alert<'a, A>>), ErrorReply> {
    let names = Names::new(own);
    let (given, options) = thresholds::then_options(tail, names.all());
    let thresholds = Thresholds::parse(given)?;
    if options.is_empty() {
        return Ok((thresholds, None));
    }
    Ok((thresholds, walk(options, key, &names, each_own)?))
}

/// MON.DECRCLAMP's tail after `amount`: only `ALERT stream [MAXLEN n]`; a
/// first token that is no option name is an argument too many, which is
/// Redis's arity error whatever the other arguments are (so checked
/// before `amount` is read, by [`AmountTail::new`]).
pub struct AmountTail<'a, A>(&'a [A]);

impl<'a, A: AsRef<[u8]>> AmountTail<'a, A> {
    #[inline]
    pub fn new(tail: &'a [A], command: &str) -> Result<Self, ErrorReply> {
        match tail {
            [first, ..] if !Names::new(&[]).contains(first.as_ref()) => {
                Err(args::wrong_arity(command))
            }
            _ => Ok(AmountTail(tail)),
        }
    }

    /// The options, for the counter `key`.
    #[inline]
    pub fn parse(self, key: &[u8]) -> Result<Option<Alert<'a, A>>, ErrorReply> {
        if self.0.is_empty() {
            return Ok(None);
        }
        walk(self.0, key, &Names::new(&[]), |_, _| Ok(()))
    }
}

/// ALERT and MAXLEN, then a command's own option names, without a heap.
struct Names<'n> {
    list: [&'n str; 4],
    len: usize,
}

impl<'n> Names<'n> {
    #[inline]
    fn new(own: &[&'n str]) -> Self {
        debug_assert!(own.len() <= 2);
        let mut list = [ALERT, MAXLEN, "", ""];
        for (slot, name) in list[2..].iter_mut().zip(own) {
            *slot = name;
        }
        Names {
            list,
            len: 2 + own.len().min(2),
        }
    }

    fn all(&self) -> &[&'n str] {
        &self.list[..self.len]
    }

    fn contains(&self, token: &[u8]) -> bool {
        self.all()
            .iter()
            .any(|name| name.as_bytes().eq_ignore_ascii_case(token))
    }
}

/// The options as given: ALERT's stream (never the counter `key`),
/// MAXLEN's n (only beside an ALERT), the command's own handed on.
#[inline]
fn walk<'a, A: AsRef<[u8]>>(
    options: &'a [A],
    key: &[u8],
    names: &Names<'_>,
    mut each_own: impl FnMut(usize, &'a A) -> Result<(), ErrorReply>,
) -> Result<Option<Alert<'a, A>>, ErrorReply> {
    let (mut stream, mut maxlen) = (None, None);
    args::options(options, names.all(), |index, value| match index {
        0 if value.as_ref() == key => Err(ErrorReply::new(
            "ERR alert stream must not be the counter's key",
        )),
        0 => {
            stream = Some(value);
            Ok(())
        }
        1 => {
            maxlen = Some(args::positive(value.as_ref(), "maxlen")?);
            Ok(())
        }
        own => each_own(own - 2, value),
    })?;
    match (stream, maxlen) {
        (Some(stream), maxlen) => Ok(Some(Alert { stream, maxlen })),
        (None, Some(_)) => Err(ErrorReply::new(
            "ERR option MAXLEN is only valid with ALERT",
        )),
        (None, None) => Ok(None),
    }
}

/// Where a velocity check's keys are, for the server's key-position
/// requests: argv[1], and the argument after the first `ALERT` at or after
/// argv[`from`], as a keyword key spec finds it (the last argument is no
/// keyword: nothing follows it).
pub fn key_positions<A: AsRef<[u8]>>(args: &[A], from: usize) -> Vec<(usize, KeyAccess)> {
    let stream = args
        .iter()
        .enumerate()
        .take(args.len().saturating_sub(1))
        .skip(from)
        .find(|(_, arg)| arg.as_ref().eq_ignore_ascii_case(ALERT.as_bytes()))
        .map(|(at, _)| (at + 1, KeyAccess::APPEND));
    let counter = (args.len() > 1).then_some((1, KeyAccess::UPDATE));
    counter.into_iter().chain(stream).collect()
}

/// What an alert entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    /// A threshold crossed: the level and the threshold's value, the
    /// count after the call and, for MON.DISTINCT, the member that
    /// crossed it.
    Crossing {
        level: usize,
        threshold: i64,
        current: i64,
        member: Option<&'a [u8]>,
    },
    /// A refund clamped at 0, losing `clamped`.
    Clamp { clamped: i64 },
}

impl<'a> Record<'a> {
    /// The record of a call that reported `level` (1-based) of
    /// `thresholds`; `None` for level 0, which records nothing.
    pub fn crossing(
        thresholds: &[i64],
        level: usize,
        current: i64,
        member: Option<&'a [u8]>,
    ) -> Option<Self> {
        let threshold = *thresholds.get(level.checked_sub(1)?)?;
        Some(Record::Crossing {
            level,
            threshold,
            current,
            member,
        })
    }

    /// The entry's field/value pairs, in SPEC's order, for the counter
    /// `key`.
    pub fn fields(&self, key: &[u8]) -> Vec<Vec<u8>> {
        let number = |n: i64| n.to_string().into_bytes();
        let mut fields = vec![b"key".to_vec(), key.to_vec()];
        match *self {
            Record::Crossing {
                level,
                threshold,
                current,
                member,
            } => {
                fields.extend([
                    b"level".to_vec(),
                    level.to_string().into_bytes(),
                    b"threshold".to_vec(),
                    number(threshold),
                    b"current".to_vec(),
                    number(current),
                ]);
                if let Some(member) = member {
                    fields.extend([b"member".to_vec(), member.to_vec()]);
                }
            }
            Record::Clamp { clamped } => {
                fields.extend([
                    b"clamped".to_vec(),
                    number(clamped),
                    b"current".to_vec(),
                    b"0".to_vec(),
                ]);
            }
        }
        fields
    }
}

/// [`Alert::check`] for a call that may name a stream.
#[inline]
pub fn check<'call>(
    alert: Option<&Alert<'_, Arg<'call>>>,
    ctx: Ctx<'call>,
) -> Result<(), ErrorReply> {
    alert.map_or(Ok(()), |alert| alert.check(ctx))
}

/// [`Alert::append`] for a call that may name a stream and may have
/// something to record.
#[inline]
pub fn append<'call>(
    alert: Option<&Alert<'_, Arg<'call>>>,
    ctx: Ctx<'call>,
    key: Arg<'call>,
    record: Option<Record<'_>>,
) -> Result<Option<Appended<'call>>, ErrorReply> {
    match (alert, record) {
        (Some(alert), Some(record)) => alert.append(ctx, key, record).map(Some),
        _ => Ok(None),
    }
}

impl<'call> Alert<'_, Arg<'call>> {
    /// The check of every call that names a stream, after its arguments
    /// (which refused a stream that is the counter) and before its counter
    /// is read: the stream is a stream or nothing (WRONGTYPE even if
    /// nothing would be written).
    pub fn check(&self, ctx: Ctx<'call>) -> Result<(), ErrorReply> {
        CommandKey::new(ctx, *self.stream).require_stream()
    }

    /// Appends `record` for the counter `key`. Called once the call has
    /// decided and before it writes the counter: an XADD the server
    /// refuses (a stream whose last ID is the largest there is) leaves
    /// everything as it was. What it returns is propagated after the
    /// counter's effects.
    pub fn append(
        &self,
        ctx: Ctx<'call>,
        key: Arg<'call>,
        record: Record<'_>,
    ) -> Result<Appended<'call>, ErrorReply> {
        stream::append(
            CommandKey::new(ctx, *self.stream),
            self.maxlen,
            record.fields(key.as_bytes()),
            &stats::MON_ALERTS_WRITTEN,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parsed tail: thresholds, and the stream with its MAXLEN.
    type Tail = (Vec<i64>, Option<(&'static str, Option<i64>)>);

    fn tail(args: &[&'static str]) -> Result<Tail, String> {
        let mut buckets = None;
        after_thresholds(args, b"k", &["BUCKETS"], |_, value| {
            buckets = Some(*value);
            Ok(())
        })
        .map(|(thresholds, alert)| {
            (
                thresholds.as_slice().to_vec(),
                alert.map(|alert| (*alert.stream, alert.maxlen)),
            )
        })
        .map_err(|error| error.to_string())
    }

    #[test]
    fn options_follow_the_thresholds_in_any_order_and_case() {
        assert_eq!(tail(&["3", "5"]), Ok((vec![3, 5], None)));
        assert_eq!(
            tail(&["3", "alert", "s", "maxlen", "10"]),
            Ok((vec![3], Some(("s", Some(10)))))
        );
        assert_eq!(
            tail(&["3", "MAXLEN", "10", "BUCKETS", "6", "ALERT", "ALERT"]),
            Ok((vec![3], Some(("ALERT", Some(10)))))
        );
    }

    #[test]
    fn option_errors_name_the_option() {
        let error = |args| tail(args).unwrap_err();
        assert!(error(&["3", "x", "ALERT", "s"]).starts_with("ERR threshold #2 "));
        assert_eq!(error(&["3", "ALERT"]), "ERR option ALERT needs a value");
        assert_eq!(
            error(&["3", "ALERT", "s", "alert", "t"]),
            "ERR option ALERT is given more than once"
        );
        assert_eq!(
            error(&["3", "ALERT", "s", "FOO", "1"]),
            "ERR unknown option 'FOO'"
        );
        assert_eq!(
            error(&["3", "MAXLEN", "5"]),
            "ERR option MAXLEN is only valid with ALERT"
        );
        assert!(error(&["3", "ALERT", "s", "MAXLEN", "0"]).starts_with("ERR maxlen "));
        assert!(error(&["3", "ALERT", "s", "MAXLEN", "x"]).starts_with("ERR maxlen "));
        // A bad value is reported before a later missing ALERT.
        assert!(error(&["3", "MAXLEN", "-1"]).starts_with("ERR maxlen "));
        // The first bad argument wins: a stream that is the counter
        // before a bad MAXLEN, and after one.
        let not_the_key = "ERR alert stream must not be the counter's key";
        assert_eq!(error(&["3", "ALERT", "k", "MAXLEN", "0"]), not_the_key);
        assert_eq!(error(&["3", "ALERT", "k", "FOO", "1"]), not_the_key);
        assert!(error(&["3", "MAXLEN", "0", "ALERT", "k"]).starts_with("ERR maxlen "));
    }

    #[test]
    fn after_amount_only_options_or_an_arity_error() {
        let parse = |args: &[&'static str]| {
            AmountTail::new(args, "mon.decrclamp")
                .and_then(|tail| tail.parse(b"k"))
                .map(|alert| alert.map(|alert| (*alert.stream, alert.maxlen)))
                .map_err(|error| error.to_string())
        };
        assert_eq!(parse(&[]), Ok(None));
        assert_eq!(parse(&["Alert", "s"]), Ok(Some(("s", None))));
        assert_eq!(
            parse(&["5"]).unwrap_err(),
            "ERR wrong number of arguments for 'mon.decrclamp' command"
        );
        assert_eq!(
            parse(&["ALERT", "s", "BUCKETS", "6"]).unwrap_err(),
            "ERR unknown option 'BUCKETS'"
        );
    }

    #[test]
    fn the_stream_is_the_argument_after_the_first_alert_from_the_search_start() {
        let at = |args: &[&str], from| -> Vec<usize> {
            key_positions(args, from)
                .iter()
                .map(|(at, _)| *at)
                .collect()
        };
        let call = ["mon.distinct", "k", "ALERT", "60", "3", "alert", "ALERT"];
        assert_eq!(at(&call, 5), [1, 6]);
        // Before the search start it is a member, not the keyword.
        assert_eq!(at(&call[..5], 5), [1]);
        // A last ALERT has no key after it.
        assert_eq!(at(&["mon.decrclamp", "k", "5", "ALERT"], 3), [1]);
        assert_eq!(at(&["mon.decrclamp"], 3), Vec::<usize>::new());
    }

    fn text(args: &[Vec<u8>]) -> Vec<String> {
        args.iter()
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect()
    }

    #[test]
    fn only_a_reported_level_is_recorded() {
        assert_eq!(Record::crossing(&[3, 5], 0, 2, None), None);
        assert_eq!(
            Record::crossing(&[3, 5], 2, 6, None),
            Some(Record::Crossing {
                level: 2,
                threshold: 5,
                current: 6,
                member: None
            })
        );
        assert_eq!(Record::crossing(&[3], 2, 6, None), None);
    }

    #[test]
    fn fields_in_order() {
        let crossing = Record::Crossing {
            level: 2,
            threshold: 5,
            current: 6,
            member: Some(b"card-9"),
        };
        assert_eq!(
            text(&crossing.fields(b"k")),
            [
                "key",
                "k",
                "level",
                "2",
                "threshold",
                "5",
                "current",
                "6",
                "member",
                "card-9"
            ]
        );
        assert_eq!(
            text(&Record::Clamp { clamped: 20 }.fields(b"k")),
            ["key", "k", "clamped", "20", "current", "0"]
        );
    }
}
