//! Propagation: what a write changed, sent to replicas and the AOF as the
//! plain commands that reproduce it (one command per call; several in one
//! call travel in one MULTI/EXEC). Words become RedisModuleStrings without
//! copying where they can, and fixed words are made once per process.

use std::ffi::CStr;
use std::sync::atomic::{AtomicPtr, Ordering};

use redis_module::raw;

use super::entry::Arg;
use super::key::CommandKey;

/// How many words [`CommandKey::replicate_words`] propagates without the
/// heap, each count with a format of its own (one name per count in its
/// `replicate_by_count!`).
const INLINE: usize = 16;

/// `replicate($ctx, $command, format, $key, strings...)` for the slice
/// `$strings`: one match arm per count up to one per `$name` given, each
/// with the fixed format "s" (the key) then one "s" per string, since "sv"
/// costs Redis a reallocation of its argument vector; no strings, the key
/// alone (`DEL key`); longer slices go as "sv", the array and its length. The arms are the
/// names' prefixes, gathered one name at a time.
macro_rules! replicate_by_count {
    ($replicate:ident($ctx:ident, $command:ident, $key:ident), $strings:expr; $($name:ident)*) => {
        replicate_by_count!(@gather ($replicate, $ctx, $command, $key, $strings) [] []; $($name)*)
    };
    (@gather $call:tt [$($arm:tt)*] [$($seen:ident)*]; $next:ident $($rest:ident)*) => {
        replicate_by_count!(@gather $call [$($arm)* [$($seen)* $next]] [$($seen)* $next]; $($rest)*)
    };
    (
        @gather ($replicate:ident, $ctx:ident, $command:ident, $key:ident, $strings:expr)
        [$([$($string:ident)*])*] [$($_all:ident)*];
    ) => {
        match $strings {
            [] => {
                $replicate($ctx, $command, c"s".as_ptr(), $key);
            }
            $(
                [$($string),*] => {
                    let format = concat!("s", $(one_s!($string),)* "\0");
                    $replicate($ctx, $command, format.as_ptr().cast(), $key, $(*$string),*);
                }
            )*
            long => {
                $replicate($ctx, $command, c"sv".as_ptr(), $key, long.as_ptr(), long.len());
            }
        }
    };
}

/// The format letter of one string, whatever its name.
macro_rules! one_s {
    ($_string:ident) => {
        "s"
    };
}

/// A plain Redis write that reproduces what a command changed, on a
/// replica or AOF reload (see [`CommandKey::replicate`]). Expiry always
/// travels as an absolute time.
#[derive(Clone, Copy)]
pub enum PlainWrite<'call> {
    /// `INCRBY key increment`, the argument as received: it parsed as a
    /// canonical integer, so the replica reads the same number.
    IncrBy(Arg<'call>),
    /// `SET key value KEEPTTL`
    SetKeepTtl(i64),
    /// `SET key value PXAT at_ms`
    SetExpiringAt { value: i64, at_ms: i64 },
    /// `ZREMRANGEBYSCORE key -inf cutoff`
    ZsetDropUpTo(i64),
    /// `ZADD key score member`
    ZsetAdd { score: i64, member: Arg<'call> },
    /// `PEXPIREAT key at_ms`
    ExpireAt(i64),
    /// `DEL key`
    Delete,
}

impl CommandKey<'_> {
    /// Propagates `command key words...` to replicas and the AOF, one
    /// command for the whole call (several in one call travel in one
    /// MULTI/EXEC). Words become RedisModuleStrings without copying where
    /// they can: the call's own arguments and kept words are passed by
    /// reference; numbers and bytes are made here and freed once Replicate
    /// has taken its references. Up to [`INLINE`] words need no heap.
    pub fn replicate_words(self, command: &CStr, words: &[Word<'_>]) {
        let (ctx, key) = (self.ctx.as_ptr(), self.name.as_ptr());
        let mut inline = [std::ptr::null_mut(); INLINE];
        let mut long = Vec::new();
        let strings = match inline.get_mut(..words.len()) {
            Some(slots) => slots,
            None => {
                long.resize(words.len(), std::ptr::null_mut());
                &mut long[..]
            }
        };
        for (slot, word) in strings.iter_mut().zip(words) {
            // SAFETY: the running command's context.
            *slot = unsafe { word.to_string(ctx) };
        }
        // SAFETY: `replicate_by_count!` passes a format of one "s" per
        // string (the key's, then each word's) or "sv" with the array and
        // its length. Every string is alive until Replicate has taken its
        // reference; those made here are freed once, after it.
        unsafe {
            let replicate = raw::RedisModule_Replicate.unwrap();
            let command = command.as_ptr();
            replicate_by_count!(
                replicate(ctx, command, key),
                &*strings;
                w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15
            );
            for (&string, word) in strings.iter().zip(words) {
                if word.is_made() {
                    raw::RedisModule_FreeString.unwrap()(ctx, string);
                }
            }
        }
    }

    /// Propagates what this command changed to replicas and the AOF, as
    /// the plain write that reproduces it.
    #[inline]
    pub fn replicate(self, write: PlainWrite) {
        let (command, words): (&CStr, [Option<Word>; 3]) = match write {
            PlainWrite::IncrBy(increment) => (c"INCRBY", [Some(Word::Arg(increment)), None, None]),
            PlainWrite::SetKeepTtl(value) => (
                c"SET",
                [Some(Word::Number(value)), Some(Word::Kept(&KEEPTTL)), None],
            ),
            PlainWrite::SetExpiringAt { value, at_ms } => (
                c"SET",
                [
                    Some(Word::Number(value)),
                    Some(Word::Kept(&PXAT)),
                    Some(Word::Number(at_ms)),
                ],
            ),
            PlainWrite::ZsetDropUpTo(cutoff) => (
                c"ZREMRANGEBYSCORE",
                [
                    Some(Word::Kept(&MINUS_INF)),
                    Some(Word::Number(cutoff)),
                    None,
                ],
            ),
            PlainWrite::ZsetAdd { score, member } => (
                c"ZADD",
                [Some(Word::Number(score)), Some(Word::Arg(member)), None],
            ),
            PlainWrite::ExpireAt(at_ms) => (c"PEXPIREAT", [Some(Word::Number(at_ms)), None, None]),
            PlainWrite::Delete => (c"DEL", [None, None, None]),
        };
        let len = words.iter().flatten().count();
        let words = words.map(|word| word.unwrap_or(Word::Number(0)));
        self.replicate_words(command, &words[..len]);
    }
}

/// An argument of a propagated write (see
/// [`CommandKey::replicate_words`]).
#[derive(Clone, Copy)]
pub enum Word<'a> {
    /// One of the call's own arguments.
    Arg(Arg<'a>),
    /// A fixed word of a wire format (`PXAT`, an op's name).
    Kept(&'static KeptWord),
    Number(i64),
    /// A count or claim number that may pass i64 (totals).
    Unsigned(u64),
    /// Bytes of the module's own (a value it stores, a field it writes).
    Bytes(&'a [u8]),
}

impl Word<'_> {
    /// The word as the bytes it propagates (what an AOF rewrite writes).
    pub fn to_vec(self) -> Vec<u8> {
        match self {
            Word::Arg(arg) => arg.as_bytes().to_vec(),
            Word::Kept(word) => word.text.to_bytes().to_vec(),
            Word::Number(n) => n.to_string().into_bytes(),
            Word::Unsigned(n) => n.to_string().into_bytes(),
            Word::Bytes(bytes) => bytes.to_vec(),
        }
    }

    /// Is its string made for each call (and freed after it)?
    #[inline]
    fn is_made(&self) -> bool {
        matches!(self, Word::Number(_) | Word::Unsigned(_) | Word::Bytes(_))
    }

    /// The word as a string to propagate; a new one where
    /// [`Word::is_made`], which the caller frees.
    ///
    /// # Safety
    /// `ctx` is the running command's context.
    #[inline]
    unsafe fn to_string(self, ctx: *mut raw::RedisModuleCtx) -> *mut raw::RedisModuleString {
        match self {
            Word::Arg(arg) => arg.as_ptr(),
            Word::Kept(word) => word.string(),
            Word::Number(n) => raw::RedisModule_CreateStringFromLongLong.unwrap()(ctx, n),
            Word::Unsigned(n) => make_string(ctx, n.to_string().as_bytes()),
            Word::Bytes(bytes) => make_string(ctx, bytes),
        }
    }
}

impl Word<'_> {
    /// Is its plain string ([`Word::to_plain_string`]) made for each
    /// call? Every word's but a kept word's.
    #[inline]
    pub(super) fn is_made_plain(&self) -> bool {
        !matches!(self, Word::Kept(_))
    }

    /// The word as a plain string (raw bytes, never an integer encoding:
    /// what a stream entry's fields must be): a kept word is shared,
    /// everything else is copied into a new string, which the caller
    /// frees ([`Word::is_made_plain`]).
    ///
    /// # Safety
    /// `ctx` is the running command's context.
    #[inline]
    pub(super) unsafe fn to_plain_string(
        self,
        ctx: *mut raw::RedisModuleCtx,
    ) -> *mut raw::RedisModuleString {
        let mut digits = [0u8; 20];
        let bytes = match self {
            Word::Kept(word) => return word.string(),
            Word::Arg(arg) => arg.as_bytes(),
            Word::Number(n) => decimal(&mut digits, n.unsigned_abs(), n < 0),
            Word::Unsigned(n) => decimal(&mut digits, n, false),
            Word::Bytes(bytes) => bytes,
        };
        make_string(ctx, bytes)
    }
}

/// `n` (negated when `negative`) in decimal, written into the end of
/// `buffer`.
fn decimal(buffer: &mut [u8; 20], mut n: u64, negative: bool) -> &[u8] {
    let mut at = buffer.len();
    loop {
        at -= 1;
        buffer[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if negative {
        // u64's 20 digits need no sign; i64's at most 19 leave room.
        at -= 1;
        buffer[at] = b'-';
    }
    &buffer[at..]
}

/// Words gathered for one propagated command: inline up to 16 (a hot
/// path's few ops), on the heap past that (a replay's long lists).
pub struct Words<'a> {
    inline: [Word<'a>; 16],
    len: usize,
    long: Vec<Word<'a>>,
}

impl<'a> Words<'a> {
    #[inline]
    pub fn new() -> Self {
        Words {
            inline: [Word::Number(0); 16],
            len: 0,
            long: Vec::new(),
        }
    }

    #[inline]
    pub fn extend(&mut self, words: &[Word<'a>]) {
        let end = self.len + words.len();
        match self.inline.get_mut(self.len..end) {
            Some(slots) if self.long.is_empty() => slots.copy_from_slice(words),
            _ => {
                if self.long.is_empty() {
                    self.long.extend_from_slice(&self.inline[..self.len]);
                }
                self.long.extend_from_slice(words);
            }
        }
        self.len = end;
    }

    pub fn as_slice(&self) -> &[Word<'a>] {
        if self.long.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.long
        }
    }

    /// The words as the arguments they propagate (what an AOF rewrite
    /// writes, and an apply command parses back).
    pub fn to_args(&self) -> Vec<Vec<u8>> {
        self.as_slice().iter().map(|word| word.to_vec()).collect()
    }
}

impl Default for Words<'_> {
    fn default() -> Self {
        Words::new()
    }
}

static KEEPTTL: KeptWord = KeptWord::new(c"KEEPTTL");
static PXAT: KeptWord = KeptWord::new(c"PXAT");
static MINUS_INF: KeptWord = KeptWord::new(c"-inf");

/// A fixed word of propagated writes (`PXAT`, an apply command's op
/// names), made into a RedisModuleString the first time it is sent and
/// kept for the life of the process: propagating it then costs Redis a
/// reference count instead of an allocation. Only the main thread
/// propagates, so loads and stores need no more than relaxed order.
pub struct KeptWord {
    text: &'static CStr,
    string: AtomicPtr<raw::RedisModuleString>,
}

impl KeptWord {
    pub const fn new(text: &'static CStr) -> Self {
        KeptWord {
            text,
            string: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    #[inline]
    fn string(&self) -> *mut raw::RedisModuleString {
        let kept = self.string.load(Ordering::Relaxed);
        if !kept.is_null() {
            return kept;
        }
        // SAFETY: a string made without a context is owned by nobody but
        // this word, which keeps it for the life of the process; Redis only
        // takes and drops references to it on the main thread, as for any
        // propagated argument.
        let made = unsafe { make_string(std::ptr::null_mut(), self.text.to_bytes()) };
        self.string.store(made, Ordering::Relaxed);
        made
    }
}

/// A new string of `bytes`.
///
/// # Safety
/// `ctx` is the running command's context, or null for a string nobody
/// frees.
#[inline]
unsafe fn make_string(ctx: *mut raw::RedisModuleCtx, bytes: &[u8]) -> *mut raw::RedisModuleString {
    raw::RedisModule_CreateString.unwrap()(ctx, bytes.as_ptr().cast(), bytes.len())
}

#[cfg(test)]
mod tests {
    use super::decimal;

    #[test]
    fn decimals_are_written_as_to_string_writes_them() {
        for n in [0, 1, -1, 9, 10, -10, 123_456_789, i64::MAX, i64::MIN] {
            let mut buffer = [0; 20];
            let text = decimal(&mut buffer, n.unsigned_abs(), n < 0);
            assert_eq!(text, n.to_string().as_bytes());
        }
        let mut buffer = [0; 20];
        assert_eq!(
            decimal(&mut buffer, u64::MAX, false),
            u64::MAX.to_string().as_bytes()
        );
    }
}
