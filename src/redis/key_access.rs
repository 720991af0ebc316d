//! How a command uses a key, as its key spec tells the server: what both
//! the run-time entry (a command that finds its keys) and registration
//! (the key specs) name.

use redis_module::raw;

/// How a command uses its one key, as its key spec tells Redis.
#[derive(Clone, Copy)]
pub struct KeyAccess(pub(super) u32);

impl KeyAccess {
    const RW: u32 = raw::REDISMODULE_CMD_KEY_RW;
    /// Reads the value and writes it back changed (INCRBY).
    pub const UPDATE: KeyAccess =
        KeyAccess(Self::RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE);
    /// Adds to the value (SADD).
    pub const INSERT: KeyAccess = KeyAccess(Self::RW | raw::REDISMODULE_CMD_KEY_INSERT);
    /// Only reads the value (SCARD).
    pub const READ: KeyAccess =
        KeyAccess(raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS);
    /// Removes from the value (SREM).
    pub const DELETE: KeyAccess = KeyAccess(Self::RW | raw::REDISMODULE_CMD_KEY_DELETE);
    /// Appends to the value and may trim it (XADD).
    pub const APPEND: KeyAccess = KeyAccess(Self::RW | raw::REDISMODULE_CMD_KEY_UPDATE);

    /// The same use, by a key spec that may not find the key (a keyword
    /// an earlier argument could be spelled as): the server then asks the
    /// command ([`FindsKeys`](super::FindsKeys)) where its keys are.
    pub const fn incomplete(self) -> KeyAccess {
        KeyAccess(self.0 | raw::REDISMODULE_CMD_KEY_INCOMPLETE)
    }
}
