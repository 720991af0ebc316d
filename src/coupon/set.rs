//! The decisions of COUPON.ISSUE on a plain set of winners, as pure
//! functions of plain values.

use super::outcome::Coupon;

/// What COUPON.ISSUE does to the set first, given how many places are
/// taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueStep {
    /// Places are left: add the user unless present (SADD). That one write
    /// is the membership check too, and it adds exactly when [`coupon`]
    /// issues, so no separate look-up is paid on the busy path.
    AddIfAbsent,
    /// Sold out: nothing may be written; only ask whether the user holds
    /// one (SISMEMBER), for the reply.
    AskMembership,
}

pub fn issue_step(issued: i64, limit: i64) -> IssueStep {
    if issued < limit {
        IssueStep::AddIfAbsent
    } else {
        IssueStep::AskMembership
    }
}

/// Decides a coupon request from the facts: does `user` already hold one,
/// how many are `issued`, and the `limit`. Holding one is checked first, so
/// a winner who retries after the sell-out still gets -1.
pub fn coupon(already_holds: bool, issued: i64, limit: i64) -> Coupon {
    if already_holds {
        Coupon::AlreadyHeld
    } else if issued >= limit {
        Coupon::SoldOut
    } else {
        let rank = issued + 1;
        Coupon::Issued {
            rank,
            sold_out: rank == limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_is_written_only_while_places_are_left() {
        assert_eq!(issue_step(0, 2), IssueStep::AddIfAbsent);
        assert_eq!(issue_step(1, 2), IssueStep::AddIfAbsent);
        assert_eq!(issue_step(2, 2), IssueStep::AskMembership);
        assert_eq!(issue_step(7, 2), IssueStep::AskMembership);
    }

    #[test]
    fn the_add_step_adds_exactly_when_the_rule_issues() {
        for limit in 1..4 {
            for issued in 0..6 {
                for holds in [false, true] {
                    let adds = issue_step(issued, limit) == IssueStep::AddIfAbsent && !holds;
                    let issues = matches!(coupon(holds, issued, limit), Coupon::Issued { .. });
                    assert_eq!(adds, issues, "issued {issued} limit {limit} holds {holds}");
                }
            }
        }
    }

    #[test]
    fn coupons_rank_winners_and_stop_at_the_limit() {
        assert_eq!(
            coupon(false, 0, 2),
            Coupon::Issued {
                rank: 1,
                sold_out: false
            }
        );
        assert_eq!(
            coupon(false, 1, 2),
            Coupon::Issued {
                rank: 2,
                sold_out: true
            }
        );
        assert_eq!(coupon(false, 2, 2), Coupon::SoldOut);
        assert_eq!(coupon(false, 5, 2), Coupon::SoldOut);
    }

    #[test]
    fn holding_a_coupon_is_checked_before_the_sell_out() {
        assert_eq!(coupon(true, 0, 2), Coupon::AlreadyHeld);
        assert_eq!(coupon(true, 2, 2), Coupon::AlreadyHeld);
    }

    #[test]
    fn coupon_replies_follow_the_spec() {
        assert_eq!(coupon(false, 0, 1).reply(), 1);
        assert_eq!(Coupon::AlreadyHeld.reply(), -1);
        assert_eq!(Coupon::SoldOut.reply(), -2);
    }
}
