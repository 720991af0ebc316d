//! Windows that end with a calendar period of a time zone: `minute`,
//! `hour`, `day`, `week` (ISO: Monday 00:00) or `month`, in an IANA zone
//! (`TZ Asia/Seoul`). A period ends at the first instant whose local time
//! belongs to another period, so a day is 23 or 25 hours long when the
//! clocks change, and a midnight that does not exist (a change at 00:00)
//! is replaced by the first instant of that day.
//!
//! The rules come from `jiff`'s database: the host's `/usr/share/zoneinfo`
//! (or `TZDIR`), re-read by jiff when its files change, and the copy
//! bundled at build time where the host has none (docs/operations.md).
//! An end is looked up once per zone and period, not per call: it holds
//! for every instant from the one it was worked out at until it passes.

use crate::args;
use crate::reply::ErrorReply;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use std::cell::RefCell;
use std::collections::HashMap;

/// A calendar period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    Minute,
    Hour,
    Day,
    Week,
    Month,
}

impl Unit {
    const NAMES: [(&'static str, Unit); 5] = [
        ("minute", Unit::Minute),
        ("hour", Unit::Hour),
        ("day", Unit::Day),
        ("week", Unit::Week),
        ("month", Unit::Month),
    ];

    /// The unit named by `bytes`, case-insensitively.
    pub fn named(bytes: &[u8]) -> Option<Unit> {
        Unit::NAMES
            .iter()
            .find(|(name, _)| name.as_bytes().eq_ignore_ascii_case(bytes))
            .map(|&(_, unit)| unit)
    }

    /// The local time at which the period holding `local` ends: the start
    /// of the next one, as a wall clock reads it. Two instants are in the
    /// same period exactly when this is the same for both.
    fn next_start(self, local: DateTime) -> DateTime {
        let date = local.date();
        let next = match self {
            Unit::Minute => date
                .at(local.hour(), local.minute(), 0, 0)
                .checked_add(1.minute()),
            Unit::Hour => date.at(local.hour(), 0, 0, 0).checked_add(1.hour()),
            Unit::Day => date.tomorrow().map(midnight),
            Unit::Week => date
                .checked_add((7 - i64::from(date.weekday().to_monday_zero_offset())).days())
                .map(midnight),
            Unit::Month => date.first_of_month().checked_add(1.month()).map(midnight),
        };
        // Past the year 9999 (a server clock cannot be there): the last instant.
        next.unwrap_or(DateTime::MAX)
    }
}

fn midnight(date: Date) -> DateTime {
    date.at(0, 0, 0, 0)
}

/// A window: seconds from the call that starts it, or a calendar period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    Seconds(i64),
    Calendar(Unit),
}

impl Window {
    /// `window` as given: a positive integer or a unit's name; errors
    /// name `name`.
    pub fn parse(bytes: &[u8], name: &str) -> Result<Window, ErrorReply> {
        match Unit::named(bytes) {
            Some(unit) => Ok(Window::Calendar(unit)),
            None => args::positive(bytes, name).map(Window::Seconds),
        }
    }
}

/// A command's `window` argument with its zone, validated: where the
/// window a call starts ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zoned<'a> {
    end: End,
    /// The zone's name as given (`None`: UTC); only with a calendar unit.
    tz: Option<&'a [u8]>,
}

/// Where a window ends: a window in seconds, known as soon as the
/// argument is read (the call's instant is), or its period's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    AtMs(i64),
    Period(Unit),
}

impl<'a> Zoned<'a> {
    /// The `window` argument of `command` for a call at `now_ms`, in UTC
    /// until [`Zoned::in_zone`]; a window in seconds whose end overflows
    /// is refused where it stands, as EXPIRE refuses it.
    pub fn parse(bytes: &[u8], now_ms: i64, command: &str) -> Result<Self, ErrorReply> {
        let end = match Window::parse(bytes, "window")? {
            Window::Seconds(seconds) => {
                End::AtMs(args::span_end_ms(now_ms, seconds).ok_or_else(|| {
                    ErrorReply::owned(format!(
                        "ERR invalid expire time in '{command}' command: window is too large"
                    ))
                })?)
            }
            Window::Calendar(unit) => End::Period(unit),
        };
        Ok(Zoned { end, tz: None })
    }

    /// The window in the zone `name` (`TZ name`): a zone the database
    /// knows, and only beside a calendar unit.
    pub fn in_zone(self, name: &'a [u8]) -> Result<Self, ErrorReply> {
        if let End::AtMs(_) = self.end {
            return Err(ErrorReply::new(
                "ERR tz needs a calendar window (minute, hour, day, week or month)",
            ));
        }
        known_zone(name)?;
        Ok(Zoned {
            tz: Some(name),
            ..self
        })
    }

    /// The end (unix ms) of the window a call at `now_ms` starts.
    pub fn ends_at_ms(&self, now_ms: i64) -> Result<i64, ErrorReply> {
        match self.end {
            End::AtMs(end) => Ok(end),
            End::Period(unit) => period_end_ms(self.tz.unwrap_or(b"UTC"), unit, now_ms),
        }
    }
}

/// Is `name` a zone: one in the table, else one the database has (a
/// lookup that takes a lock and clones the zone's rules).
fn known_zone(name: &[u8]) -> Result<(), ErrorReply> {
    if ENDS.with_borrow(|ends| ends.knows(name)) {
        return Ok(());
    }
    zone(name).map(drop)
}

/// Files of a zoneinfo folder that name no zone: the host's own local
/// time and the default rules of POSIX TZ strings.
const NOT_ZONES: [&str; 2] = ["localtime", "posixrules"];

/// A zone the database knows, by its IANA name.
fn zone(name: &[u8]) -> Result<TimeZone, ErrorReply> {
    std::str::from_utf8(name)
        .ok()
        .filter(|name| !NOT_ZONES.iter().any(|not| not.eq_ignore_ascii_case(name)))
        .and_then(|name| jiff::tz::db().get(name).ok())
        .ok_or_else(|| {
            ErrorReply::new("ERR tz is not a time zone name the server knows (e.g. Asia/Seoul)")
        })
}

/// The end of the period holding `now` in `zone`: the first instant after
/// `now` in another period. The next period's local start, taken at its
/// first instant where clocks change (`compatible`: the later reading of
/// a gap, the earlier of a fold); a change of the clocks before it that
/// already leaves the period (a jump past midnight) ends it first.
pub fn period_end(zone: &TimeZone, unit: Unit, now: Timestamp) -> Timestamp {
    let period = unit.next_start(zone.to_datetime(now));
    let next = zone
        .to_ambiguous_timestamp(period)
        .compatible()
        .unwrap_or(Timestamp::MAX);
    zone.following(now)
        .map(|transition| transition.timestamp())
        .take_while(|&at| at < next)
        .find(|&at| unit.next_start(zone.to_datetime(at)) != period)
        .unwrap_or(next)
}

/// A zone's ends, one per unit: (the instant it was worked out at, the
/// end), valid for every instant between the two.
type UnitEnds = [Option<(i64, i64)>; Unit::NAMES.len()];

/// The ends worked out, by zone name as given. The zone of the last call
/// is kept apart: a server's calls mostly name one zone, found by one
/// comparison, without hashing the name.
#[derive(Default)]
struct Ends {
    last: Option<(Box<[u8]>, UnitEnds)>,
    others: HashMap<Box<[u8]>, UnitEnds>,
}

/// Bounds the table against callers who spell zones in ever new cases.
const ZONES_KEPT: usize = 1024;

impl Ends {
    fn knows(&self, name: &[u8]) -> bool {
        self.last.as_ref().is_some_and(|(last, _)| **last == *name)
            || self.others.contains_key(name)
    }

    /// `name`'s ends, made the last zone's.
    fn of(&mut self, name: &[u8]) -> &mut UnitEnds {
        if self.last.as_ref().is_none_or(|(last, _)| **last != *name) {
            let ends = self.others.remove(name).unwrap_or_default();
            if let Some((last, its)) = self.last.replace((name.into(), ends)) {
                if self.others.len() >= ZONES_KEPT {
                    self.others.clear();
                }
                self.others.insert(last, its);
            }
        }
        &mut self.last.as_mut().expect("the last zone").1
    }
}

thread_local! {
    static ENDS: RefCell<Ends> = RefCell::new(Ends::default());
}

/// [`period_end`] in unix ms for the zone named `name`, from the table
/// when it holds `now_ms`.
fn period_end_ms(name: &[u8], unit: Unit, now_ms: i64) -> Result<i64, ErrorReply> {
    ENDS.with_borrow_mut(|ends| {
        let slot = unit as usize;
        let known = ends.knows(name);
        if known {
            if let Some((from, end)) = ends.of(name)[slot] {
                if from <= now_ms && now_ms < end {
                    return Ok(end);
                }
            }
        }
        let now = Timestamp::from_millisecond(now_ms).map_err(|_| {
            ErrorReply::new("ERR the server's clock is out of the calendar's range")
        })?;
        let end = period_end(&zone(name)?, unit, now).as_millisecond();
        ends.of(name)[slot] = Some((now_ms, end));
        Ok(end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unix ms of a UTC date and time written by hand.
    fn utc(text: &str) -> i64 {
        text.parse::<Timestamp>().unwrap().as_millisecond()
    }

    fn end(zone: &str, unit: Unit, now: &str) -> i64 {
        let unit = Unit::NAMES.iter().find(|(_, u)| *u == unit).unwrap().0;
        Zoned::parse(unit.as_bytes(), utc(now), "x")
            .and_then(|window| window.in_zone(zone.as_bytes()))
            .and_then(|window| window.ends_at_ms(utc(now)))
            .unwrap()
    }

    #[test]
    fn units_are_named_case_insensitively_and_numbers_are_seconds() {
        assert_eq!(
            Window::parse(b"DAY", "window"),
            Ok(Window::Calendar(Unit::Day))
        );
        assert_eq!(
            Window::parse(b"Month", "window"),
            Ok(Window::Calendar(Unit::Month))
        );
        assert_eq!(Window::parse(b"60", "window"), Ok(Window::Seconds(60)));
        for bad in [&b"days"[..], b"0", b"-1", b"", b"1.5"] {
            let error = Window::parse(bad, "window").unwrap_err();
            assert!(error.message().starts_with("ERR window "), "{error}");
        }
    }

    #[test]
    fn a_zone_must_be_known_and_beside_a_calendar_unit() {
        let day = Zoned::parse(b"day", 0, "x").unwrap();
        assert!(day.in_zone(b"Asia/Seoul").is_ok());
        for bad in [
            &b"Asia/Nowhere"[..],
            b"",
            b"../../etc/passwd",
            b"\xff",
            b"localtime",
            b"posixrules",
        ] {
            let error = day.in_zone(bad).unwrap_err();
            assert!(error.message().starts_with("ERR tz "), "{error}");
        }
        let seconds = Zoned::parse(b"60", 0, "x").unwrap();
        let error = seconds.in_zone(b"UTC").unwrap_err();
        assert!(error.message().starts_with("ERR tz "), "{error}");
    }

    // Expected ends below are worked out by hand from the zones' rules.

    #[test]
    fn a_day_ends_at_the_zones_next_midnight() {
        // Seoul is UTC+9 all year: midnight is 15:00 UTC.
        assert_eq!(
            end("Asia/Seoul", Unit::Day, "2026-12-03T14:59:59Z"),
            utc("2026-12-03T15:00:00Z")
        );
        assert_eq!(
            end("Asia/Seoul", Unit::Day, "2026-12-03T15:00:00Z"),
            utc("2026-12-04T15:00:00Z")
        );
        assert_eq!(
            end("UTC", Unit::Day, "2026-12-03T23:59:59.999Z"),
            utc("2026-12-04T00:00:00Z")
        );
    }

    #[test]
    fn days_when_clocks_change_are_23_and_25_hours() {
        // New York springs forward on 2026-03-08 and falls back on 2026-11-01.
        assert_eq!(
            end("America/New_York", Unit::Day, "2026-03-08T05:00:00Z"),
            utc("2026-03-09T04:00:00Z")
        );
        assert_eq!(
            end("America/New_York", Unit::Day, "2026-11-01T04:00:00Z"),
            utc("2026-11-02T05:00:00Z")
        );
    }

    #[test]
    fn a_midnight_that_does_not_exist_starts_its_day_at_the_change() {
        // Santiago springs forward at 24:00 on the first Saturday of
        // September: 2026-09-06 00:00 -04 does not exist; 01:00 -03 is
        // 04:00 UTC, the day's first instant.
        assert_eq!(
            end("America/Santiago", Unit::Day, "2026-09-05T12:00:00Z"),
            utc("2026-09-06T04:00:00Z")
        );
    }

    #[test]
    fn a_change_that_jumps_past_midnight_ends_the_day_when_it_happens() {
        // A zone whose clocks jump from 23:45 to 00:45 (UTC+0 to +1) on
        // the second Sunday of March: 2027-03-15 begins at the jump, not
        // at the 00:00 the jump skipped.
        let zone = TimeZone::posix("AAA0BBB,M3.2.0/23:45,M11.1.0/1").unwrap();
        let now = "2027-03-14T12:00:00Z".parse::<Timestamp>().unwrap();
        let end = period_end(&zone, Unit::Day, now).as_millisecond();
        assert_eq!(end, utc("2027-03-14T23:45:00Z"));
    }

    #[test]
    fn hours_follow_the_zones_offset() {
        // Kolkata is UTC+5:30: its hours start at :30 UTC.
        assert_eq!(
            end("Asia/Kolkata", Unit::Hour, "2026-12-03T10:10:00Z"),
            utc("2026-12-03T10:30:00Z")
        );
        // Lord Howe moves 30 minutes forward at 02:00 (+10:30 to +11) on
        // 2026-10-04: the 02:00 hour begins at the change (15:30 UTC).
        assert_eq!(
            end("Australia/Lord_Howe", Unit::Hour, "2026-10-03T15:10:00Z"),
            utc("2026-10-03T15:30:00Z")
        );
        assert_eq!(
            end("Australia/Lord_Howe", Unit::Hour, "2026-10-03T15:30:00Z"),
            utc("2026-10-03T16:00:00Z")
        );
    }

    #[test]
    fn weeks_start_on_monday_and_months_on_the_first() {
        // 2026-12-03 is a Thursday.
        assert_eq!(
            end("UTC", Unit::Week, "2026-12-03T12:00:00Z"),
            utc("2026-12-07T00:00:00Z")
        );
        assert_eq!(
            end("UTC", Unit::Week, "2026-12-07T00:00:00Z"),
            utc("2026-12-14T00:00:00Z")
        );
        assert_eq!(
            end("Asia/Seoul", Unit::Month, "2026-12-31T14:59:59Z"),
            utc("2026-12-31T15:00:00Z")
        );
        assert_eq!(
            end("UTC", Unit::Minute, "2026-12-03T12:00:59.999Z"),
            utc("2026-12-03T12:01:00Z")
        );
    }

    #[test]
    fn an_end_is_reused_until_it_passes_and_worked_out_again_after() {
        let first = end("Asia/Seoul", Unit::Day, "2026-12-03T01:00:00Z");
        assert_eq!(end("Asia/Seoul", Unit::Day, "2026-12-03T14:00:00Z"), first);
        assert_eq!(
            end("Asia/Seoul", Unit::Day, "2026-12-03T15:00:00Z"),
            utc("2026-12-04T15:00:00Z")
        );
        // A clock that steps back gets its own period, not the later one.
        assert_eq!(
            end("Asia/Seoul", Unit::Day, "2026-12-02T15:00:00Z"),
            utc("2026-12-03T15:00:00Z")
        );
    }
}
