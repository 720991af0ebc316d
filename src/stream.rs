//! Entries appended to a stream in the same step as a write (an alert's
//! record, a campaign's ledger): what XADD does on the primary (through
//! the module API, not a nested command), not propagated, and the XADD
//! owed to replicas and the AOF as Redis rewrites its own (the entry's ID
//! in place of `*`, an exact trim), sent after the write's effects, so the
//! whole call travels in one MULTI.

use crate::redis::{CommandKey, KeptWord, StreamId, Word, Words};
use crate::reply::ErrorReply;
use crate::stats::Counter;

/// An entry's field/value pairs, in order, as words: fixed names kept
/// (no string made for them), the rest as bytes or numbers.
pub trait EntryFields {
    fn words(&self) -> Words<'_>;
}

/// Fields given as bytes.
impl EntryFields for Vec<Vec<u8>> {
    fn words(&self) -> Words<'_> {
        let mut words = Words::new();
        for field in self {
            words.extend(&[Word::Bytes(field)]);
        }
        words
    }
}

static MAXLEN: KeptWord = KeptWord::new(c"MAXLEN");
static EXACTLY: KeptWord = KeptWord::new(c"=");

/// The XADD owed to replicas and the AOF after the key, as Redis rewrites
/// its own: the ID the entry got instead of `*`, and an exact trim to the
/// length the primary left (`MAXLEN = length`), so a replica ends with the
/// same entries: `[MAXLEN = length] id field value ...`.
fn propagated<'a>(
    maxlen: Option<i64>,
    length: i64,
    id: &'a [u8],
    fields: &'a Words<'a>,
) -> Words<'a> {
    let mut words = Words::new();
    if maxlen.is_some() {
        words.extend(&[
            Word::Kept(&MAXLEN),
            Word::Kept(&EXACTLY),
            Word::Number(length),
        ]);
    }
    words.extend(&[Word::Bytes(id)]);
    words.extend(fields.as_slice());
    words
}

/// Appends an entry of `fields` to `stream`, trimmed to about `maxlen`
/// (as `XADD stream [MAXLEN ~ maxlen] * fields...`). An entry the server
/// refuses (a stream whose last ID is the largest there is) is the error,
/// and nothing is appended. No handle of the stream may be open.
pub fn append<'call, F: EntryFields>(
    stream: CommandKey<'call>,
    maxlen: Option<i64>,
    fields: F,
    counter: &'static Counter,
) -> Result<Appended<'call, F>, ErrorReply> {
    let (id, length) = stream.stream_add(maxlen, fields.words().as_slice())?;
    Ok(Appended {
        stream,
        maxlen,
        fields,
        id,
        length,
        counter,
    })
}

/// An entry written and owed to replicas and the AOF.
pub struct Appended<'call, F = Vec<Vec<u8>>> {
    stream: CommandKey<'call>,
    maxlen: Option<i64>,
    fields: F,
    id: StreamId,
    length: i64,
    counter: &'static Counter,
}

impl<F: EntryFields> Appended<'_, F> {
    /// Propagates the entry (after the write's effects: one MULTI with
    /// them) and counts it.
    pub fn propagate(self) {
        let id = self.id.to_string();
        let fields = self.fields.words();
        let words = propagated(self.maxlen, self.length, id.as_bytes(), &fields);
        self.stream.replicate_words(c"XADD", words.as_slice());
        self.counter.bump();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(words: &Words) -> Vec<String> {
        words
            .to_args()
            .iter()
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect()
    }

    #[test]
    fn the_xadd_propagated_names_the_id_and_trims_exactly() {
        let fields = vec![b"key".to_vec(), b"k".to_vec()];
        let words = fields.words();
        assert_eq!(
            text(&propagated(Some(100), 180, b"7-0", &words)),
            ["MAXLEN", "=", "180", "7-0", "key", "k"]
        );
        assert_eq!(
            text(&propagated(None, 3, b"7-1", &words)),
            ["7-1", "key", "k"]
        );
        let id = StreamId { ms: 7, seq: 12 };
        assert_eq!(id.to_string(), "7-12");
    }
}
