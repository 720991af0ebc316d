//! Contention: many connections on the same key, released together.

use std::sync::Barrier;
use std::thread;

use redis::Connection;

use super::Server;

/// Connections opened up front, so a run measures contention, not connects.
pub struct Crowd {
    cons: Vec<Connection>,
}

impl Crowd {
    pub fn connect(server: &Server, size: usize) -> Crowd {
        Crowd {
            cons: (0..size).map(|_| server.con()).collect(),
        }
    }

    /// Runs `work(i, connection)` for every connection at once, one thread
    /// each, all released by one barrier. Results come back in order.
    pub fn run<T: Send>(&mut self, work: impl Fn(usize, &mut Connection) -> T + Sync) -> Vec<T> {
        let barrier = Barrier::new(self.cons.len());
        let (barrier, work) = (&barrier, &work);
        thread::scope(|scope| {
            let handles: Vec<_> = self
                .cons
                .iter_mut()
                .enumerate()
                .map(|(i, con)| {
                    scope.spawn(move || {
                        barrier.wait();
                        work(i, con)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("crowd member panicked"))
                .collect()
        })
    }
}

/// The client-side velocity check this module replaces: read, add, decide
/// from what was read. Returns the level it would alert with.
pub fn naive_incrcheck(con: &mut Connection, key: &str, increment: i64, threshold: i64) -> i64 {
    let prev: Option<i64> = redis::cmd("GET").arg(key).query(con).unwrap();
    let prev = prev.unwrap_or(0);
    let _: i64 = redis::cmd("INCRBY")
        .arg(key)
        .arg(increment)
        .query(con)
        .unwrap();
    i64::from(prev < threshold && threshold <= prev + increment)
}

/// The client-side refund this module replaces: read, clamp, write back
/// (which also drops the TTL).
pub fn naive_decrclamp(con: &mut Connection, key: &str, amount: i64) -> i64 {
    let current: Option<i64> = redis::cmd("GET").arg(key).query(con).unwrap();
    match current {
        Some(current) if current > 0 => {
            let value = (current - amount).max(0);
            let _: () = redis::cmd("SET").arg(key).arg(value).query(con).unwrap();
            value
        }
        _ => 0,
    }
}

/// The ways to hand out a first-come-first-served coupon, from the naive
/// client-side steps to the native command. Keys: a winners set and, for
/// the steps that keep one, a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CouponStep {
    /// `INCR` only: no record of who won.
    IncrOnly,
    /// `SISMEMBER` → `INCR` → `SADD`.
    CheckIncrAdd,
    /// `INCR`, then `SADD`'s result decides.
    IncrThenAdd,
    /// `SADD`, then `INCR` decides.
    AddThenIncr,
    /// The same decision as a Lua script.
    Lua,
    /// `COUPON.ISSUE`.
    Native,
}

pub const WINNERS: &str = "coupon:winners";
pub const ISSUED: &str = "coupon:issued";

impl CouponStep {
    pub const ALL: [CouponStep; 6] = [
        CouponStep::IncrOnly,
        CouponStep::CheckIncrAdd,
        CouponStep::IncrThenAdd,
        CouponStep::AddThenIncr,
        CouponStep::Lua,
        CouponStep::Native,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CouponStep::IncrOnly => "A `INCR` only",
            CouponStep::CheckIncrAdd => "B `SISMEMBER`→`INCR`→`SADD`",
            CouponStep::IncrThenAdd => "C `INCR` then `SADD`'s result",
            CouponStep::AddThenIncr => "E `SADD` then `INCR`",
            CouponStep::Lua => "D Lua script",
            CouponStep::Native => "N `COUPON.ISSUE`",
        }
    }

    /// One request; true when the client was told it won a coupon.
    pub fn issue(self, con: &mut Connection, user: &str, limit: i64) -> bool {
        let incr =
            |con: &mut Connection| -> i64 { redis::cmd("INCR").arg(ISSUED).query(con).unwrap() };
        let sadd = |con: &mut Connection| -> i64 {
            redis::cmd("SADD")
                .arg(WINNERS)
                .arg(user)
                .query(con)
                .unwrap()
        };
        match self {
            CouponStep::IncrOnly => incr(con) <= limit,
            CouponStep::CheckIncrAdd => {
                let held: i64 = redis::cmd("SISMEMBER")
                    .arg(WINNERS)
                    .arg(user)
                    .query(con)
                    .unwrap();
                if held == 1 || incr(con) > limit {
                    return false;
                }
                sadd(con);
                true
            }
            CouponStep::IncrThenAdd => incr(con) <= limit && sadd(con) == 1,
            CouponStep::AddThenIncr => sadd(con) == 1 && incr(con) <= limit,
            CouponStep::Lua => {
                let script =
                    redis::Script::new(include_str!("../../bench/scripts/coupon_issue.lua"));
                script
                    .key(WINNERS)
                    .arg(user)
                    .arg(limit)
                    .invoke::<i64>(con)
                    .unwrap()
                    > 0
            }
            CouponStep::Native => super::issue(con, WINNERS, user, limit) > 0,
        }
    }
}
