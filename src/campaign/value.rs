//! A campaign as a Redis value: its data type, its encoding (RDB, and so
//! DUMP, RESTORE, MIGRATE and full syncs; DEBUG DIGEST-VALUE; AOF
//! rewrite), and the one way a command changes it: [`perform`].

use super::apply;
use super::model::{Campaign, CampaignError, ClaimState, Effect, Plan, Settings};
use super::NO_SUCH_CAMPAIGN;
use crate::redis::{
    AofCommand, Arg, CommandKey, Ctx, DataType, EventClass, ModuleValue, OpenKey, Reader, Writer,
};
use crate::reply::ErrorReply;
use crate::stats;

/// The `guard-cpn` data type.
pub static CAMPAIGN: DataType<Campaign> = DataType::new();

/// Claims per COUPON.APPLY command in a rewritten AOF.
const CLAIMS_PER_AOF_COMMAND: usize = 100;

impl ModuleValue for Campaign {
    const NAME: &'static std::ffi::CStr = c"guard-cpn";
    /// 1: settings, totals, then each stored claim.
    const ENCODING_VERSION: i32 = 1;

    fn write(&self, out: &mut dyn Writer) {
        let Settings {
            limit,
            per_user,
            hold_s,
        } = self.settings;
        let (claims_made, released, expired) = self.totals();
        for n in [limit, per_user, hold_s] {
            out.integer(n);
        }
        for n in [claims_made, released, expired] {
            out.integer(n as i64);
        }
        out.integer(self.stored_claims().count() as i64);
        for (number, claim) in self.stored_claims() {
            out.integer(number as i64);
            out.bytes(&claim.user);
            out.integer(claim.state.expires_at_ms());
            match &claim.request_id {
                Some(id) => {
                    out.integer(1);
                    out.bytes(id);
                }
                None => out.integer(0),
            }
        }
    }

    fn read(input: &mut dyn Reader, version: i32) -> Option<Self> {
        if version != Self::ENCODING_VERSION {
            return None;
        }
        let settings = Settings {
            limit: input.integer()?,
            per_user: input.integer()?,
            hold_s: input.integer()?,
        };
        if settings.limit < 1 || settings.per_user < 1 || settings.hold_s < 1 {
            return None;
        }
        let mut totals = [0u64; 3];
        for total in &mut totals {
            *total = u64::try_from(input.integer()?).ok()?;
        }
        let mut campaign = Campaign::new(settings);
        for _ in 0..input.integer()? {
            let claim = u64::try_from(input.integer()?).ok()?;
            let user = input.bytes()?;
            let expires_at_ms = match input.integer()? {
                -1 => None,
                at => Some(at),
            };
            let request_id = match input.integer()? {
                0 => None,
                _ => Some(input.bytes()?),
            };
            let put = Effect::Put {
                claim,
                user,
                expires_at_ms,
                request_id,
            };
            campaign.apply(&put).ok()?;
        }
        let [claims_made, released, expired] = totals;
        campaign
            .apply(&Effect::Totals {
                claims_made,
                released,
                expired,
            })
            .ok()?;
        Some(campaign)
    }

    /// COUPON.CREATE with the settings, then COUPON.APPLY with the totals
    /// and every stored claim, in batches.
    fn rewrite(&self) -> Vec<AofCommand> {
        let Settings {
            limit,
            per_user,
            hold_s,
        } = self.settings;
        let create = [
            limit.to_string(),
            "PERUSER".into(),
            per_user.to_string(),
            "HOLD".into(),
            hold_s.to_string(),
        ];
        let (claims_made, released, expired) = self.totals();
        let mut commands = vec![
            (c"COUPON.CREATE", create.map(String::into_bytes).to_vec()),
            (
                apply::NAME,
                apply::effect_args(&[Effect::Totals {
                    claims_made,
                    released,
                    expired,
                }]),
            ),
        ];
        let puts: Vec<Effect> = self
            .stored_claims()
            .map(|(claim, c)| Effect::Put {
                claim,
                user: c.user.to_vec(),
                expires_at_ms: match c.state {
                    ClaimState::Held { expires_at_ms } => Some(expires_at_ms),
                    ClaimState::Confirmed => None,
                },
                request_id: c.request_id.as_deref().map(<[u8]>::to_vec),
            })
            .collect();
        for batch in puts.chunks(CLAIMS_PER_AOF_COMMAND) {
            commands.push((apply::NAME, apply::effect_args(batch)));
        }
        commands
    }

    fn memory(&self) -> usize {
        self.heap_bytes()
    }
}

/// A rule's refusal as the error a client reads.
pub fn refusal(error: CampaignError) -> ErrorReply {
    match error {
        CampaignError::RequestIdTaken => {
            ErrorReply::new("ERR id is held by a live claim of another user")
        }
        CampaignError::LimitMismatch => {
            ErrorReply::new("ERR limit does not match the campaign's limit")
        }
    }
}

/// Every writing campaign command, after parsing: opens the campaign at
/// `name`, decides with the server's clock, performs what was decided.
pub fn decide_and_perform<T>(
    ctx: Ctx<'_>,
    name: Arg<'_>,
    decide: impl FnOnce(&Campaign, i64) -> Result<Plan<T>, CampaignError>,
) -> Result<T, ErrorReply> {
    let target = CommandKey::new(ctx, name);
    decide_on(target, &mut target.open(), ctx.now_ms(), decide)
}

/// As [`decide_and_perform`], on a key already open.
pub fn decide_on<T>(
    target: CommandKey<'_>,
    key: &mut OpenKey<'_>,
    now: i64,
    decide: impl FnOnce(&Campaign, i64) -> Result<Plan<T>, CampaignError>,
) -> Result<T, ErrorReply> {
    let campaign = key.value_mut(&CAMPAIGN)?.ok_or(NO_SUCH_CAMPAIGN)?;
    let plan = decide(campaign, now).map_err(refusal)?;
    perform(target, campaign, &plan.effects)?;
    Ok(plan.outcome)
}

/// Carries out a decision: applies its effects in order, fires each
/// effect's keyspace event, propagates them as one COUPON.APPLY (absolute
/// times, claim numbers: replicas and the AOF converge whatever their
/// clock), and signals the key as modified. Effects that do not apply stop
/// the call with an error; what applied before them is still propagated,
/// so replicas never miss a change the primary made.
pub fn perform(
    target: CommandKey,
    campaign: &mut Campaign,
    effects: &[Effect],
) -> Result<(), ErrorReply> {
    let mut applied = 0;
    let mut failure = None;
    for effect in effects {
        if let Err(why) = campaign.apply(effect) {
            failure = Some(ErrorReply::owned(format!(
                "ERR redis-guard could not apply an effect: {why}"
            )));
            break;
        }
        applied += 1;
        let event = match effect {
            Effect::Put {
                expires_at_ms: Some(_),
                ..
            } => c"coupon.reserved",
            Effect::Put { .. } | Effect::Confirm { .. } => c"coupon.confirmed",
            Effect::Release { .. } => c"coupon.released",
            Effect::Expire { .. } => {
                stats::COUPON_EXPIRED.bump();
                c"coupon.expired"
            }
            Effect::Totals { .. } => continue,
        };
        target.notify(EventClass::Module, event);
    }
    if applied > 0 {
        target.replicate_command(apply::NAME, &apply::effect_args(&effects[..applied]));
        target.signal_modified();
    }
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain in-memory RDB.
    #[derive(Default)]
    struct Tape {
        items: Vec<Result<i64, Vec<u8>>>,
        at: usize,
    }

    impl Writer for Tape {
        fn integer(&mut self, value: i64) {
            self.items.push(Ok(value));
        }
        fn bytes(&mut self, value: &[u8]) {
            self.items.push(Err(value.to_vec()));
        }
    }

    impl Reader for Tape {
        fn integer(&mut self) -> Option<i64> {
            self.at += 1;
            self.items.get(self.at - 1)?.clone().ok()
        }
        fn bytes(&mut self) -> Option<Vec<u8>> {
            self.at += 1;
            self.items.get(self.at - 1)?.clone().err()
        }
    }

    fn sample() -> Campaign {
        let mut c = Campaign::new(Settings {
            limit: 10,
            per_user: 2,
            hold_s: 60,
        });
        let now = 1_000_000;
        for (user, id) in [
            ("a", Some("r1")),
            ("b", None),
            ("a", None),
            ("c", Some("r2")),
        ] {
            let plan = c
                .reserve(user.as_bytes(), id.map(str::as_bytes), now + 60_000, now)
                .unwrap();
            for e in &plan.effects {
                c.apply(e).unwrap();
            }
        }
        for plan in [c.confirm(2, now), c.release(3, now)] {
            for e in &plan.effects {
                c.apply(e).unwrap();
            }
        }
        c
    }

    #[test]
    fn the_encoding_round_trips() {
        let campaign = sample();
        let mut tape = Tape::default();
        campaign.write(&mut tape);
        assert_eq!(Campaign::read(&mut tape, 1), Some(campaign));
    }

    #[test]
    fn a_truncated_payload_or_another_version_is_refused() {
        let mut tape = Tape::default();
        sample().write(&mut tape);
        tape.items.pop();
        assert_eq!(Campaign::read(&mut tape, 1), None);
        let mut tape = Tape::default();
        sample().write(&mut tape);
        assert_eq!(Campaign::read(&mut tape, 2), None);
    }

    #[test]
    fn the_aof_rewrite_rebuilds_the_same_campaign() {
        let campaign = sample();
        let commands = campaign.rewrite();
        assert_eq!(commands[0].0, c"COUPON.CREATE");
        let mut rebuilt = Campaign::new(campaign.settings);
        for (name, args) in &commands[1..] {
            assert_eq!(*name, apply::NAME);
            for effect in apply::parse_effects(args).unwrap() {
                rebuilt.apply(&effect).unwrap();
            }
        }
        assert_eq!(rebuilt, campaign);
    }
}
