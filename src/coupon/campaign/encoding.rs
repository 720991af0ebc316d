//! A campaign as bytes: its data type, its RDB encoding (and so DUMP,
//! RESTORE, MIGRATE and full syncs; DEBUG DIGEST-VALUE digests the same
//! sequence) with the validation a load owes, and its AOF rewrite (the
//! effects that rebuild it, which Valkey's atomic slot migration replays
//! too).
//!
//! A payload is accepted only when this module could have made it, judged
//! without a clock (a replica's may differ from the primary's): holds are
//! not counted against `limit` or `PERUSER`, confirmed claims are.
//! Nothing is allocated by a count the payload states: claims are read
//! one at a time until the count is reached or the input fails.

use super::effect::{Effect, Totals};
use super::settings::{Ledger, Settings};
use super::store::{Campaign, ClaimState};
use crate::redis::{AofCommand, Boxed, DataType, ModuleValue, Mover, Reader, Writer};
use crate::replicated::rewrite;

/// The `guard-cpn` data type.
pub static CAMPAIGN: DataType<Campaign> = DataType::new();

impl Boxed for Campaign {}

impl ModuleValue for Campaign {
    const NAME: &'static std::ffi::CStr = c"guard-cpn";
    /// 3: version 2's with each claim's units after its request id
    /// (0.5.0). 2: version 1's, then the ledger (0.3.0). 1: settings,
    /// totals, then each stored claim in claim order (0.1.0).
    const ENCODING_VERSION: i32 = 3;

    fn write(&self, out: &mut dyn Writer) {
        let Settings {
            limit,
            per_user,
            hold_s,
        } = self.settings();
        let totals = self.totals();
        for n in [limit, per_user, hold_s] {
            out.integer(n);
        }
        for n in [totals.claims_made, totals.released, totals.expired] {
            out.integer(n as i64);
        }
        out.integer(self.stored_count() as i64);
        for (number, claim) in self.stored_claims() {
            out.integer(number as i64);
            out.bytes(claim.user);
            out.integer(claim.state.expires_at_ms());
            match &claim.request_id {
                Some(id) => {
                    out.integer(1);
                    out.bytes(id);
                }
                None => out.integer(0),
            }
            out.integer(claim.units as i64);
        }
        match self.ledger() {
            Some(ledger) => {
                out.integer(1);
                out.bytes(&ledger.stream);
                out.integer(ledger.maxlen.unwrap_or(0));
            }
            None => out.integer(0),
        }
    }

    /// One loader per encoding version ever released; a new version adds
    /// its own and keeps these (tests/golden/ holds a payload of each).
    fn read(input: &mut dyn Reader, version: i32) -> Option<Box<Self>> {
        match version {
            1 => read_claims(input, Units::One),
            2 => read_claims(input, Units::One).and_then(|c| read_ledger(input, c)),
            3 => read_claims(input, Units::Stored).and_then(|c| read_ledger(input, c)),
            _ => None,
        }
        .map(Box::new)
    }

    fn duplicate(&self) -> Box<Self> {
        Box::new(self.clone())
    }

    /// The effects that rebuild it ([`rebuild`]), in COUPON.APPLY commands.
    fn rewrite(&self) -> Vec<AofCommand> {
        rewrite::commands(self)
    }

    fn memory(&self) -> usize {
        self.heap_bytes()
    }

    fn free_effort(&self) -> usize {
        Campaign::free_effort(self)
    }

    fn defrag(&mut self, mover: &mut Mover) {
        Campaign::defrag(self, mover);
    }
}

/// The effects that rebuild a campaign on an empty key: CREATE with the
/// settings, every stored claim, then the totals.
pub fn rebuild(campaign: &Campaign) -> Vec<Effect> {
    let mut effects = vec![Effect::Create(campaign.settings())];
    effects.extend(campaign.ledger().cloned().map(Effect::Ledger));
    effects.extend(campaign.stored_claims().map(|(claim, c)| Effect::Put {
        claim,
        user: c.user.to_vec(),
        expires_at_ms: match c.state {
            ClaimState::Held { expires_at_ms } => Some(expires_at_ms),
            ClaimState::Confirmed => None,
        },
        request_id: c.request_id.map(<[u8]>::to_vec),
        units: c.units,
    }));
    effects.push(Effect::Totals(campaign.totals()));
    effects
}

/// Encodings 2 and 3 end with the ledger: 0, or 1, its stream and its
/// MAXLEN (0 for none).
fn read_ledger(input: &mut dyn Reader, mut campaign: Campaign) -> Option<Campaign> {
    match input.integer()? {
        0 => {}
        1 => {
            let stream = input.bytes()?.into();
            let maxlen = Some(input.integer()?).filter(|&n| n != 0);
            campaign
                .apply(&Effect::Ledger(Ledger { stream, maxlen }))
                .ok()?;
        }
        _ => return None,
    }
    Some(campaign)
}

/// A claim's units in a payload.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Units {
    /// Encodings 1 and 2: every claim is of 1 unit.
    One,
    /// Encoding 3: after the request id.
    Stored,
}

/// Settings, totals, then each stored claim in claim order: number, user,
/// expiry (-1 confirmed), 0 or 1 and a request id, then (encoding 3) its
/// units.
fn read_claims(input: &mut dyn Reader, units: Units) -> Option<Campaign> {
    let settings = Settings {
        limit: input.integer()?,
        per_user: input.integer()?,
        hold_s: input.integer()?,
    };
    settings.check().ok()?;
    let mut count = || u64::try_from(input.integer()?).ok();
    let totals = Totals {
        claims_made: count()?,
        released: count()?,
        expired: count()?,
    };
    let stored = count()?;
    if stored > totals.claims_made {
        return None;
    }
    let mut campaign = Campaign::new(settings);
    // Built in one step: its tables grow at once, searched by hash.
    campaign.start_load();
    let mut with_request_ids = 0;
    for _ in 0..stored {
        let claim = u64::try_from(input.integer()?).ok()?;
        let user = input.bytes()?;
        let expires_at_ms = match input.integer()? {
            -1 => None,
            at => Some(at),
        };
        let request_id = match input.integer()? {
            0 => None,
            1 => Some(input.bytes()?),
            _ => return None,
        };
        let units = match units {
            Units::One => 1,
            Units::Stored => u64::try_from(input.integer()?).ok()?,
        };
        if claim > totals.claims_made {
            return None;
        }
        with_request_ids += request_id.is_some() as usize;
        let put = Effect::Put {
            claim,
            user,
            expires_at_ms,
            request_id,
            units,
        };
        campaign.apply(&put).ok()?;
    }
    campaign.end_load();
    // Stored claims never share a request id, yet a put gives an id a
    // held claim has to the new claim (an effect from the primary): one
    // shared shows as fewer ids kept than claims that came with one.
    if campaign.request_id_count() != with_request_ids {
        return None;
    }
    campaign.apply(&Effect::Totals(totals)).ok()?;
    Some(campaign)
}

#[cfg(test)]
mod tests {
    use super::super::rules;
    use super::*;
    use crate::replicated::{wire, Replicated};
    use crate::tape::Tape;

    const NOW: i64 = 1_000_000;

    fn sample() -> Campaign {
        let mut c = Campaign::new(Settings {
            limit: 10,
            per_user: 3,
            hold_s: 60,
        });
        for (user, id, units) in [
            ("a", Some("r1"), 1),
            ("b", None, 1),
            ("a", None, 1),
            ("c", Some("r2"), 3),
        ] {
            let plan = rules::reserve(
                &c,
                user.as_bytes(),
                id.map(str::as_bytes),
                units,
                NOW + 60_000,
                NOW,
            )
            .unwrap();
            for e in &plan.effects {
                c.apply(e).unwrap();
            }
        }
        for effects in [
            rules::confirm(&c, 2, None, NOW).unwrap().effects,
            rules::release(&c, 3, NOW).effects,
        ] {
            for e in &effects {
                c.apply(e).unwrap();
            }
        }
        c
    }

    fn tape_of(c: &Campaign) -> Tape {
        let mut tape = Tape::default();
        c.write(&mut tape);
        tape
    }

    #[test]
    fn the_encoding_round_trips() {
        let campaign = sample();
        assert_eq!(
            Campaign::read(&mut tape_of(&campaign), Campaign::ENCODING_VERSION),
            Some(Box::new(campaign))
        );
    }

    #[test]
    fn a_ledger_round_trips_and_rebuilds() {
        let mut campaign = sample();
        let ledger = Ledger {
            stream: b"{s}:ledger".to_vec().into(),
            maxlen: Some(1000),
        };
        campaign.apply(&Effect::Ledger(ledger.clone())).unwrap();
        let loaded = Campaign::read(&mut tape_of(&campaign), Campaign::ENCODING_VERSION).unwrap();
        assert_eq!(loaded.ledger(), Some(&ledger));
        let rebuilt = rebuild(&campaign);
        assert_eq!(rebuilt[1], Effect::Ledger(ledger));
    }

    /// Encodings 1 and 2, written as 0.4 wrote them: no units.
    fn earlier_tape(c: &Campaign, version: i32) -> Tape {
        let mut tape = Tape::default();
        let out: &mut dyn Writer = &mut tape;
        let (settings, totals) = (c.settings(), c.totals());
        for n in [settings.limit, settings.per_user, settings.hold_s] {
            out.integer(n);
        }
        for n in [totals.claims_made, totals.released, totals.expired] {
            out.integer(n as i64);
        }
        out.integer(c.stored_count() as i64);
        for (number, claim) in c.stored_claims() {
            assert_eq!(claim.units, 1, "earlier encodings have 1-unit claims");
            out.integer(number as i64);
            out.bytes(claim.user);
            out.integer(claim.state.expires_at_ms());
            out.integer(claim.request_id.is_some() as i64);
            claim.request_id.inspect(|id| out.bytes(id));
        }
        if version == 2 {
            out.integer(0);
        }
        tape
    }

    #[test]
    fn earlier_encodings_load_as_claims_of_one_unit() {
        let mut campaign = sample();
        // Claim 4 holds 3 units: released, so every claim left has 1.
        for e in rules::release(&campaign, 4, NOW).effects {
            campaign.apply(&e).unwrap();
        }
        for version in [1, 2] {
            let loaded = Campaign::read(&mut earlier_tape(&campaign, version), version);
            assert_eq!(loaded.as_deref(), Some(&campaign), "encoding {version}");
        }
        // Encoding 1 knew no ledger: its loader reads its own part only.
        let mut with_ledger = earlier_tape(&campaign, 2);
        assert!(Campaign::read(&mut with_ledger, 1)
            .unwrap()
            .ledger()
            .is_none());
    }

    #[test]
    fn a_ledger_that_could_not_be_named_is_refused() {
        let mut tape = tape_of(&sample());
        let flag = tape.items.len() - 1;
        tape.items[flag] = Ok(1);
        tape.items.push(Err(b"ledger".to_vec()));
        tape.items.push(Ok(-5));
        assert_eq!(Campaign::read(&mut tape, Campaign::ENCODING_VERSION), None);
        let mut tape = tape_of(&sample());
        tape.items[flag] = Ok(2);
        assert_eq!(Campaign::read(&mut tape, Campaign::ENCODING_VERSION), None);
    }

    #[test]
    fn a_truncated_payload_or_another_version_is_refused() {
        let mut tape = tape_of(&sample());
        tape.items.pop();
        assert_eq!(Campaign::read(&mut tape, Campaign::ENCODING_VERSION), None);
        assert_eq!(
            Campaign::read(&mut tape_of(&sample()), Campaign::ENCODING_VERSION + 1),
            None
        );
    }

    /// The sample's tape with item `at` replaced.
    fn crafted(at: usize, item: Result<i64, Vec<u8>>) -> Tape {
        let mut tape = tape_of(&sample());
        tape.items[at] = item;
        tape
    }

    /// The sample's layout: limit, peruser, hold, claims made, released,
    /// expired, stored; then per claim number, user, expiry, flag[, id],
    /// units. Claims: 1 (a, r1) at 7..=12, 2 (b, confirmed) at 13..=17,
    /// 4 (c, r2, 3 units) at 18..=23.
    #[test]
    fn every_broken_invariant_is_refused() {
        let mut cases: Vec<(&str, Tape)> = vec![
            ("limit 0", crafted(0, Ok(0))),
            ("peruser -1", crafted(1, Ok(-1))),
            ("hold 0", crafted(2, Ok(0))),
            ("hold beyond 64-bit ms", crafted(2, Ok(i64::MAX / 1000 + 1))),
            ("claims made negative", crafted(3, Ok(-1))),
            ("claims made i64::MAX, totals off", crafted(3, Ok(i64::MAX))),
            ("claims made 1000, totals off", crafted(3, Ok(1000))),
            ("released off", crafted(4, Ok(5))),
            ("expired negative", crafted(5, Ok(-1))),
            ("stored above claims made", crafted(6, Ok(5))),
            ("stored count huge", crafted(6, Ok(i64::MAX))),
            ("claim number 0", crafted(7, Ok(0))),
            ("claim number above claims made", crafted(18, Ok(9))),
            ("claim stored twice", crafted(13, Ok(1))),
            ("0 units", crafted(12, Ok(0))),
            ("negative units", crafted(23, Ok(-3))),
            // Claim 2 is confirmed: 11 units over limit 10.
            ("confirmed units over the limit", crafted(17, Ok(11))),
            // 4 confirmed units of b over PERUSER 3.
            ("confirmed units over PERUSER", crafted(17, Ok(4))),
            ("empty user", crafted(8, Err(Vec::new()))),
            ("a hold before 1970", crafted(9, Ok(-7))),
            ("a flag that is not 0 or 1", crafted(10, Ok(2))),
            ("empty request id", crafted(11, Err(Vec::new()))),
            // Claim 4 takes claim 1's request id.
            (
                "a request id on two claims",
                crafted(22, Err(b"r1".to_vec())),
            ),
        ];
        // Limit 1 with 3 confirmed claims; two confirmed of one user over
        // PERUSER 1; a confirmed claim's id on a hold.
        let mut over_limit = Campaign::new(Settings {
            limit: 3,
            per_user: 1,
            hold_s: 60,
        });
        for (n, user) in [(1, "a"), (2, "b"), (3, "c")] {
            over_limit
                .apply(&Effect::Put {
                    claim: n,
                    user: user.as_bytes().to_vec(),
                    expires_at_ms: None,
                    request_id: (n == 1).then(|| b"paid".to_vec()),
                    units: 1,
                })
                .unwrap();
        }
        let mut tape = tape_of(&over_limit);
        tape.items[0] = Ok(1);
        cases.push(("3 confirmed, limit 1", tape));
        let mut tape = tape_of(&over_limit);
        tape.items[14] = Err(b"a".to_vec());
        cases.push(("2 confirmed of one user, PERUSER 1", tape));
        let mut tape = tape_of(&over_limit);
        tape.items[15] = Ok(NOW);
        tape.items[16] = Ok(1);
        tape.items.insert(17, Err(b"paid".to_vec()));
        cases.push(("a confirmed claim's id on a hold", tape));
        for (what, mut tape) in cases {
            assert_eq!(
                Campaign::read(&mut tape, Campaign::ENCODING_VERSION),
                None,
                "{what}"
            );
        }
    }

    #[test]
    fn valid_crafted_payloads_are_accepted() {
        // The crafting is proven: the same edits that stay within the
        // rules load, and load what they say.
        let mut tape = crafted(0, Ok(3));
        assert_eq!(
            Campaign::read(&mut tape, Campaign::ENCODING_VERSION)
                .unwrap()
                .settings()
                .limit,
            3
        );
        let mut tape = crafted(2, Ok(i64::MAX / 1000));
        assert!(Campaign::read(&mut tape, Campaign::ENCODING_VERSION).is_some());
        // 3 more claims made, all released.
        let mut tape = tape_of(&sample());
        tape.items[3] = Ok(7);
        tape.items[4] = Ok(4);
        assert_eq!(
            Campaign::read(&mut tape, Campaign::ENCODING_VERSION)
                .unwrap()
                .totals()
                .released,
            4
        );
        // Claim 4 renumbered 9, with 5 more released.
        let mut tape = tape_of(&sample());
        tape.items[3] = Ok(9);
        tape.items[4] = Ok(6);
        tape.items[18] = Ok(9);
        let loaded = Campaign::read(&mut tape, Campaign::ENCODING_VERSION).unwrap();
        assert_eq!(loaded.stored_claims().last().unwrap().0, 9);
        // Claim 2 confirmed with 3 units: b's PERUSER 3, within limit 10.
        let loaded = Campaign::read(&mut crafted(17, Ok(3)), 3).unwrap();
        assert_eq!(loaded.info(NOW).confirmed_units, 3);
        // A hold of 2^63 - 1 units: holds are not judged at load.
        let loaded = Campaign::read(&mut crafted(23, Ok(i64::MAX)), 3).unwrap();
        assert_eq!(loaded.info(NOW).held_units, i64::MAX);
        assert_eq!(loaded.info(NOW).available, 0);
        // Holds over the limit or PERUSER load: they may have expired by
        // the loader's clock, which is not consulted.
        let mut tape = crafted(0, Ok(1));
        tape.items[1] = Ok(1);
        assert!(Campaign::read(&mut tape, Campaign::ENCODING_VERSION).is_some());
    }

    #[test]
    fn the_aof_rewrite_rebuilds_the_same_campaign() {
        let campaign = sample();
        let commands = campaign.rewrite();
        let mut effects = Vec::new();
        for (name, args) in &commands {
            assert_eq!(*name, <Campaign as Replicated>::APPLY_COMMAND);
            effects.extend(wire::from_args::<Campaign, _>(args).unwrap());
        }
        let Some((Effect::Create(settings), rest)) = effects.split_first() else {
            panic!("the rewrite starts with CREATE: {effects:?}");
        };
        let mut rebuilt = Campaign::new(*settings);
        for effect in rest {
            rebuilt.apply(effect).unwrap();
        }
        assert_eq!(rebuilt, campaign);
    }
}
