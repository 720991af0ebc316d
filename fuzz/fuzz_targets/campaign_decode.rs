//! Any bytes as an RDB payload of a campaign: the decoder never panics,
//! and what it accepts is a campaign the module could have made: it saves
//! and loads back equal, its AOF rewrite rebuilds it, and its counts add up.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_guard::coupon::campaign::effect::Effect;
use redis_guard::replicated::wire;
use redis_guard::coupon::campaign::store::Campaign;
use redis_guard::tape::Tape;
use redis_guard::ModuleValue;

/// Items from fuzz bytes: a byte below 0x80 is a small integer (-16 to
/// 111, where the settings and counts of real payloads lie), up to 0xbf a
/// full one from the next 8 bytes, above that a string of (byte & 0x3f)
/// bytes.
fn tape_of(mut data: &[u8]) -> Tape {
    let mut tape = Tape::default();
    while let [tag, rest @ ..] = data {
        data = rest;
        let item = match tag {
            0x00..=0x7f => Ok(i64::from(*tag) - 16),
            0x80..=0xbf => {
                let Some((number, rest)) = data.split_first_chunk::<8>() else {
                    break;
                };
                data = rest;
                Ok(i64::from_le_bytes(*number))
            }
            _ => {
                let len = usize::from(tag & 0x3f).min(data.len());
                let (text, rest) = data.split_at(len);
                data = rest;
                Err(text.to_vec())
            }
        };
        tape.items.push(item);
    }
    tape
}

fuzz_target!(|data: &[u8]| {
    let Some(campaign) = Campaign::read(&mut tape_of(data), 1) else {
        return;
    };
    let mut saved = Tape::default();
    campaign.write(&mut saved);
    assert_eq!(Campaign::read(&mut saved, Campaign::ENCODING_VERSION).as_ref(), Some(&campaign));
    let mut effects = Vec::new();
    for (_, args) in campaign.rewrite() {
        effects.extend(wire::from_args::<Campaign, _>(&args).expect("the rewrite's own ops parse"));
    }
    let Some((Effect::Create(settings), rest)) = effects.split_first() else {
        panic!("a rewrite starts with CREATE");
    };
    let mut rebuilt = Campaign::new(*settings);
    for effect in rest {
        rebuilt.apply(effect).expect("the rewrite's effects apply");
    }
    assert_eq!(rebuilt, *campaign);
    for now in [i64::MIN, 0, 1_800_000_000_000, i64::MAX] {
        let info = campaign.info(now);
        assert_eq!(
            info.claims,
            info.confirmed + info.held + info.released + info.expired
        );
        assert!(info.confirmed <= info.limit);
    }
});
