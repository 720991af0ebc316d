//! Entries appended to a stream in the same step as a write (an alert's
//! record, a campaign's ledger): the XADD run on the primary, not
//! propagated, and the XADD owed to replicas and the AOF as Redis rewrites
//! its own (the entry's ID in place of `*`, an exact trim), sent after the
//! write's effects, so the whole call travels in one MULTI.

use crate::redis::{CommandKey, Word};
use crate::reply::ErrorReply;
use crate::stats::Counter;

/// The XADD arguments after the stream key, as the primary runs them:
/// `[MAXLEN ~ n] * field value ...`.
pub fn xadd_args(maxlen: Option<i64>, fields: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut xadd = Vec::with_capacity(fields.len() + 4);
    if let Some(n) = maxlen {
        xadd.extend([
            b"MAXLEN".to_vec(),
            b"~".to_vec(),
            n.to_string().into_bytes(),
        ]);
    }
    xadd.push(b"*".to_vec());
    xadd.extend(fields);
    xadd
}

/// Those arguments as Redis rewrites its own XADD for replicas and the
/// AOF: the ID the entry got instead of `*`, and an exact trim to the
/// length the primary left (`MAXLEN = length`), so a replica ends with
/// the same entries.
pub fn rewritten(mut xadd: Vec<Vec<u8>>, id: Vec<u8>, length: i64) -> Vec<Vec<u8>> {
    let trims = xadd.first().is_some_and(|first| first == b"MAXLEN");
    if trims {
        xadd[1] = b"=".to_vec();
        xadd[2] = length.to_string().into_bytes();
    }
    xadd[if trims { 3 } else { 0 }] = id;
    xadd
}

/// Appends an entry of `fields` to `stream`, trimmed to about `maxlen`.
/// An XADD the server refuses (a stream whose last ID is the largest there
/// is) is the error, and nothing is appended. No handle of the stream may
/// be open.
pub fn append<'call>(
    stream: CommandKey<'call>,
    maxlen: Option<i64>,
    fields: Vec<Vec<u8>>,
    counter: &'static Counter,
) -> Result<Appended<'call>, ErrorReply> {
    let xadd = xadd_args(maxlen, fields);
    let (id, length) = stream.stream_add(&xadd)?;
    Ok(Appended {
        stream,
        xadd: rewritten(xadd, id, length),
        counter,
    })
}

/// An entry written and owed to replicas and the AOF.
pub struct Appended<'call> {
    stream: CommandKey<'call>,
    xadd: Vec<Vec<u8>>,
    counter: &'static Counter,
}

impl Appended<'_> {
    /// Propagates the entry (after the write's effects: one MULTI with
    /// them) and counts it.
    pub fn propagate(self) {
        let words: Vec<Word> = self.xadd.iter().map(|arg| Word::Bytes(arg)).collect();
        self.stream.replicate_words(c"XADD", &words);
        self.counter.bump();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(args: &[Vec<u8>]) -> Vec<String> {
        args.iter()
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect()
    }

    #[test]
    fn the_xadd_propagated_names_the_id_and_trims_exactly() {
        let fields = vec![b"key".to_vec(), b"k".to_vec()];
        let xadd = xadd_args(Some(100), fields.clone());
        assert_eq!(text(&xadd), ["MAXLEN", "~", "100", "*", "key", "k"]);
        assert_eq!(
            text(&rewritten(xadd, b"7-0".to_vec(), 180)),
            ["MAXLEN", "=", "180", "7-0", "key", "k"]
        );
        let xadd = xadd_args(None, fields);
        assert_eq!(
            text(&rewritten(xadd, b"7-1".to_vec(), 3)),
            ["7-1", "key", "k"]
        );
    }
}
