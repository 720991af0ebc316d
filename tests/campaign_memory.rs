//! What a campaign's claims cost in real memory (the growth of INFO
//! `used_memory`, what the allocator gave) and that MEMORY USAGE tells it:
//! at most 100 bytes a claim of a 10-byte user, 100 plus the id's length
//! with a request id, a confirmed claim no more than a held one, and
//! MEMORY USAGE within 10% of the real growth. Memory figures are counts,
//! not timings: asserted. 100,000 claims a case; `GUARD_MEMORY_CLAIMS`
//! sets another number (1,000,000 for the figure docs/ quote).

mod common;

use common::memory::{freed_by_del, memory_info, memory_usage, used_memory};
use common::*;
use redis::Connection;

const PER_CLAIM: f64 = 100.0;
const ID_BYTES: usize = 21;

fn claims() -> usize {
    std::env::var("GUARD_MEMORY_CLAIMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

fn user(i: usize) -> String {
    format!("u:{i:08}") // 10 bytes
}

fn id(i: usize) -> String {
    format!("r:{i:019}") // 21 bytes
}

/// Sends `calls` pipelined, 2,000 at a time, each reply checked.
fn drive(con: &mut Connection, calls: impl Iterator<Item = redis::Cmd>) {
    let calls: Vec<redis::Cmd> = calls.collect();
    for batch in calls.chunks(2_000) {
        let mut pipe = redis::pipe();
        for call in batch {
            pipe.add_command(call.clone());
        }
        let replies: Vec<redis::Value> = pipe.query(con).unwrap();
        assert!(
            replies
                .iter()
                .all(|r| !matches!(r, redis::Value::ServerError(_))),
            "{replies:?}"
        );
    }
}

fn reserve(i: usize, user: &str, with_id: bool) -> redis::Cmd {
    let mut call = redis::cmd("COUPON.RESERVE");
    call.arg("cpn").arg(user);
    if with_id {
        call.arg("ID").arg(id(i));
    }
    call
}

/// One case's figures, per claim: real growth and MEMORY USAGE.
struct Figures {
    real: f64,
    usage: f64,
}

fn figures(con: &mut Connection, start: i64, n: usize) -> Figures {
    Figures {
        real: (used_memory(con) - start) as f64 / n as f64,
        usage: memory_usage(con, &["cpn"]) as f64 / n as f64,
    }
}

/// Checks a case: the bound on real memory, and MEMORY USAGE within 10%
/// of it where the server's allocator is jemalloc (whose size classes
/// the module counts with).
fn check(case: &str, f: &Figures, bound: f64, jemalloc: bool) {
    eprintln!(
        "{case}: {:.1} B real, {:.1} B MEMORY USAGE a claim (bound {bound} B)",
        f.real, f.usage
    );
    assert!(f.real <= bound, "{case}: {:.1} B a claim", f.real);
    if jemalloc {
        let off = (f.usage - f.real).abs() / f.real;
        assert!(
            off <= 0.10,
            "{case}: MEMORY USAGE {:.1} B against {:.1} B real",
            f.usage,
            f.real
        );
    }
}

/// A fresh server with an empty campaign `cpn`; its `used_memory` then.
fn fresh(per_user: usize) -> (Server, Connection, i64, bool) {
    let server = Server::with_args(&["--appendonly", "no"]);
    let mut con = server.con();
    let jemalloc = memory_info(&mut con, "mem_allocator").starts_with("jemalloc");
    if !jemalloc {
        eprintln!("not jemalloc: MEMORY USAGE is not compared with the real growth");
    }
    let _: () = redis::cmd("COUPON.CREATE")
        .arg("cpn")
        .arg(1_000_000_000)
        .arg("PERUSER")
        .arg(per_user)
        .arg("HOLD")
        .arg(3_600)
        .query(&mut con)
        .unwrap();
    let start = used_memory(&mut con);
    (server, con, start, jemalloc)
}

#[test]
fn claims_of_many_users_held_then_confirmed() {
    let n = claims();
    let (_server, mut con, start, jemalloc) = fresh(1);
    drive(&mut con, (0..n).map(|i| reserve(i, &user(i), false)));
    let held = figures(&mut con, start, n);
    check("held, many users", &held, PER_CLAIM, jemalloc);
    drive(
        &mut con,
        (1..=n).map(|claim| {
            let mut call = redis::cmd("COUPON.CONFIRM");
            call.arg("cpn").arg(claim);
            call
        }),
    );
    let confirmed = figures(&mut con, start, n);
    check("confirmed, many users", &confirmed, held.real, jemalloc);
}

#[test]
fn claims_of_one_user_held_then_confirmed() {
    let n = claims();
    let (_server, mut con, start, jemalloc) = fresh(n);
    drive(&mut con, (0..n).map(|i| reserve(i, "u:00000000", false)));
    let held = figures(&mut con, start, n);
    check("held, one user", &held, PER_CLAIM, jemalloc);
    // Half confirmed, then all: the user's two indexes at once.
    for claims in [1..=n / 2, n / 2 + 1..=n] {
        drive(
            &mut con,
            claims.map(|claim| {
                let mut call = redis::cmd("COUPON.CONFIRM");
                call.arg("cpn").arg(claim);
                call
            }),
        );
        let confirmed = figures(&mut con, start, n);
        check("confirmed, one user", &confirmed, held.real, jemalloc);
    }
}

#[test]
fn held_claims_with_request_ids() {
    let n = claims();
    let (_server, mut con, start, jemalloc) = fresh(1);
    let clients =
        |con: &mut Connection| -> i64 { memory_info(con, "mem_clients_normal").parse().unwrap() };
    let clients_at_start = clients(&mut con);
    drive(&mut con, (0..n).map(|i| reserve(i, &user(i), true)));
    let held = figures(&mut con, start, n);
    check(
        "held with a 21-byte id, many users",
        &held,
        PER_CLAIM + ID_BYTES as f64,
        jemalloc,
    );
    // Everything released: the memory goes back, and MEMORY USAGE says so.
    drive(
        &mut con,
        (1..=n).map(|claim| {
            let mut call = redis::cmd("COUPON.RELEASE");
            call.arg("cpn").arg(claim);
            call
        }),
    );
    let left = memory_usage(&mut con, &["cpn"]);
    // Beyond what the clients' buffers grew by (the pipelines' replies):
    // those are the server's, and on glibc's malloc they alone are near
    // a byte a claim.
    let grown = used_memory(&mut con) - start - (clients(&mut con) - clients_at_start);
    eprintln!("all released: {grown} B real growth left, MEMORY USAGE {left} B");
    // What is left is the campaign's own record and the server's buffers.
    assert!(left < 4_096, "{left}");
    assert!(grown < n as i64, "{grown}");
}

#[test]
fn one_user_with_request_ids() {
    let n = claims();
    let (_server, mut con, start, jemalloc) = fresh(n);
    drive(&mut con, (0..n).map(|i| reserve(i, "u:00000000", true)));
    let held = figures(&mut con, start, n);
    check(
        "held with a 21-byte id, one user",
        &held,
        PER_CLAIM + ID_BYTES as f64,
        jemalloc,
    );
}

/// MEMORY USAGE of a COPY, and of a campaign thinned by releases, against
/// what DEL gives back: within 10% (on jemalloc). A copy's buffers hold
/// their contents and no more, so it must not report its source's
/// capacities (it said 127% of what DEL freed).
#[test]
fn a_copy_and_a_thinned_campaign_tell_what_del_frees() {
    let n = claims();
    let (_server, mut con, _, jemalloc) = fresh(1);
    drive(&mut con, (0..n).map(|i| reserve(i, &user(i), true)));
    // Three claims of four released.
    drive(
        &mut con,
        (1..=n).filter(|claim| claim % 4 != 0).map(|claim| {
            let mut call = redis::cmd("COUPON.RELEASE");
            call.arg("cpn").arg(claim);
            call
        }),
    );
    let copied: i64 = redis::cmd("COPY")
        .arg("cpn")
        .arg("copy")
        .query(&mut con)
        .unwrap();
    assert_eq!(copied, 1);
    for key in ["copy", "cpn"] {
        let usage = memory_usage(&mut con, &[key]);
        let freed = freed_by_del(&mut con, key);
        eprintln!("{key}: MEMORY USAGE {usage} B, DEL freed {freed} B");
        if jemalloc {
            let off = (usage - freed).abs() as f64 / freed as f64;
            assert!(
                off <= 0.10,
                "{key}: MEMORY USAGE {usage} B against {freed} B freed by DEL"
            );
        }
    }
}
