//! What COUPON.ISSUE answers, whichever backend keeps the winners (a set
//! or a campaign): the one type both produce.

/// What COUPON.ISSUE answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coupon {
    /// A new winner with this rank (1-based). `sold_out` when it took the
    /// last place.
    Issued { rank: i64, sold_out: bool },
    /// The user already holds one (reply -1).
    AlreadyHeld,
    /// No place left (reply -2).
    SoldOut,
}

impl Coupon {
    /// The integer reply (docs/commands.md).
    pub fn reply(self) -> i64 {
        match self {
            Coupon::Issued { rank, .. } => rank,
            Coupon::AlreadyHeld => -1,
            Coupon::SoldOut => -2,
        }
    }
}
