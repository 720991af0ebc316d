// redis-rs: redis::cmd builds any command
fn guard_calls(con: &mut redis::Connection) -> redis::RedisResult<String> {
    let (current, level): (i64, i64) = redis::cmd("MON.INCRCHECK")
        .arg("cust:7:orders").arg(1).arg(3600).arg(3)
        .query(con)?;
    let rank: i64 = redis::cmd("COUPON.ISSUE")
        .arg("drop:coupons").arg("alice").arg(100)
        .query(con)?;
    let left: i64 = redis::cmd("MON.DECRCLAMP").arg("refunds:shop").arg(50).query(con)?;
    let [limited, _limit, remaining, _retry, _reset]: [i64; 5] = redis::cmd("CL.THROTTLE")
        .arg("user:7:api").arg(15).arg(30).arg(60)
        .query(con)?;
    Ok(format!("{current} {level} {rank} {left} {limited} {remaining}"))
}
