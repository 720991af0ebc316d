//! Random calls to the campaign's rules over a moving clock: every effect
//! a decision makes applies (on the primary, on a replica after its wire
//! format), and the counts hold after every call: live units within
//! `limit`, a user's within `PERUSER`, every claim made accounted for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_guard::coupon::campaign::settings::Settings;
use redis_guard::coupon::campaign::rules::{self, Plan};
use redis_guard::coupon::campaign::store::Campaign;
use redis_guard::replicated::wire;
use redis_guard::tape::Tape;
use redis_guard::ModuleValue;

const USERS: [&[u8]; 4] = [b"ann", b"bob", b"cy", b"\0"];
const IDS: [&[u8]; 3] = [b"r1", b"r2", b"r3"];

/// Applies a plan on the primary's copy and, through the wire format, on
/// a replica's.
fn carry_out<T>(primary: &mut Campaign, replica: &mut Campaign, plan: &Plan<T>) {
    for effect in &plan.effects {
        primary.apply(effect).expect("a decision's effect applies");
    }
    let args = wire::to_args::<Campaign>(&plan.effects);
    for effect in wire::from_args::<Campaign, _>(&args).expect("effects parse back") {
        replica.apply(&effect).expect("the replica applies it too");
    }
}

fuzz_target!(|data: &[u8]| {
    let [limit, per_user, hold, ops @ ..] = data else {
        return;
    };
    let settings = Settings {
        limit: i64::from(limit % 8) + 1,
        per_user: i64::from(per_user % 4) + 1,
        hold_s: i64::from(*hold) + 1,
    };
    let mut primary = Campaign::new(settings);
    let mut replica = primary.clone();
    let mut now = 1_800_000_000_000i64;
    for op in ops.chunks(2) {
        let (kind, arg) = (op[0], op.get(1).copied().unwrap_or(0));
        let user = USERS[usize::from(arg) % USERS.len()];
        let claim = u64::from(arg % 16) + 1;
        // 1 to 3 units: the bits not used for the user or claim.
        let units = u64::from((arg >> 5) % 3) + 1;
        match kind % 7 {
            0 | 1 => {
                let id = (arg & 0x80 != 0).then(|| IDS[usize::from(arg >> 4) % IDS.len()]);
                let until = now + i64::from(arg % 4) * 1_000;
                if let Ok(plan) = rules::reserve(&primary, user, id, units, until, now) {
                    carry_out(&mut primary, &mut replica, &plan);
                }
            }
            2 => {
                // Odd args keep `units` of the hold (refused when above it).
                let kept = (arg & 1 == 1).then_some(units);
                if let Ok(plan) = rules::confirm(&primary, claim, kept, now) {
                    carry_out(&mut primary, &mut replica, &plan);
                }
            }
            3 => {
                let plan = rules::release(&primary, claim, now);
                carry_out(&mut primary, &mut replica, &plan);
            }
            4 => {
                let plan = rules::issue(&primary, user, settings.limit, now).expect("its limit");
                carry_out(&mut primary, &mut replica, &plan);
            }
            5 => {
                let plan = rules::revoke(&primary, user, now);
                carry_out(&mut primary, &mut replica, &plan);
            }
            _ => now += i64::from(arg) * 37,
        }
        let info = primary.info(now);
        assert_eq!(
            info.claims,
            info.confirmed + info.held + info.released + info.expired
        );
        assert!(info.available >= 0, "{info:?}");
        for user in USERS {
            assert!(primary.user_live(user, now) <= settings.per_user as u128);
        }
    }
    assert_eq!(replica, primary);
    let mut saved = Tape::default();
    primary.write(&mut saved);
    assert_eq!(Campaign::read(&mut saved, Campaign::ENCODING_VERSION), Some(Box::new(primary)));
});
