//! What COUPON.CREATE fixes for a campaign (COUPON.ALTER changes the
//! numbers later), and what any such settings must satisfy, judged
//! without a clock; and the campaign's ledger, fixed at CREATE.

/// What COUPON.CREATE fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Most live claims at once.
    pub limit: i64,
    /// Most live claims of one user.
    pub per_user: i64,
    /// RESERVE's default hold, seconds.
    pub hold_s: i64,
}

impl Settings {
    /// Could COUPON.CREATE have made these, whatever its clock said? Each at
    /// least 1, and the hold as milliseconds within 64 bits.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.limit < 1 || self.per_user < 1 || self.hold_s < 1 {
            return Err("a setting is below 1");
        }
        if self.hold_s.checked_mul(1000).is_none() {
            return Err("the hold does not fit in milliseconds");
        }
        Ok(())
    }
}

/// The stream a campaign writes every change to (`LEDGER stream [MAXLEN
/// n]` at CREATE), fixed for the campaign's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ledger {
    pub stream: Box<[u8]>,
    /// Each append trims the stream to about this length.
    pub maxlen: Option<i64>,
}

impl Ledger {
    /// Could COUPON.CREATE have named it? A stream name, a positive MAXLEN.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.stream.is_empty() {
            return Err("a ledger stream name is empty");
        }
        if self.maxlen.is_some_and(|n| n < 1) {
            return Err("a ledger MAXLEN is below 1");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_judged_without_a_clock() {
        let at_the_limit = Settings {
            limit: 1,
            per_user: 1,
            hold_s: i64::MAX / 1000,
        };
        assert_eq!(at_the_limit.check(), Ok(()));
        let over = Settings {
            hold_s: i64::MAX / 1000 + 1,
            ..at_the_limit
        };
        assert!(over.check().is_err());
    }
}
