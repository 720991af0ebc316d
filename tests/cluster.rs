//! A real Redis Cluster: 3 primaries + 3 replicas on loopback, the module on
//! every node. Routing through a cluster-aware client, MOVED from the wrong
//! node, hash tags, and failovers (manual, then a killed primary) that keep
//! every write acknowledged with WAIT.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::cluster::*;
use common::*;
use redis::Connection;

#[test]
fn cluster_routing_hash_tags_and_failover() {
    let cluster = Cluster::start();
    routes_every_command_to_the_owner(&cluster);
    hash_tagged_keys_share_a_node(&cluster);
    several_keys_must_share_a_slot(&cluster);
    alert_streams_go_with_their_counter(&cluster);
    failovers_keep_acknowledged_writes(cluster);
}

fn routes_every_command_to_the_owner(cluster: &Cluster) {
    let client = redis::cluster::ClusterClient::new(cluster.urls()).unwrap();
    let mut con = client.get_connection().unwrap();
    let mut any = cluster.nodes[0].con();
    let mut owners: HashMap<u16, usize> = HashMap::new();
    for i in 0..300 {
        let (counter, refund, coupon) = (
            format!("orders:{i}"),
            format!("refund:{i}"),
            format!("coupon:{i}"),
        );
        assert_eq!(incrcheck(&mut con, &counter, 2, 600, &[2]), (2, 1));
        set_ex(&mut con, &refund, 10, 600);
        assert_eq!(decrclamp(&mut con, &refund, 15), 0);
        assert_eq!(issue(&mut con, &coupon, "alice", 1), 1);
        assert_eq!(issue(&mut con, &coupon, "bob", 1), -2);
        assert_eq!(revoke(&mut con, &coupon, "alice"), 1);
        assert_eq!(issue(&mut con, &coupon, "bob", 1), 1);
        let sale = format!("sale:{i}");
        campaign::create(&mut con, &sale, 1, 1, 600);
        assert_eq!(
            campaign::reserve(&mut con, &sale, "alice", &["ID", "o1"]).0,
            1
        );
        assert_eq!(campaign::reserve(&mut con, &sale, "bob", &[]), (-2, 0));
        assert_eq!(campaign::confirm(&mut con, &sale, 1), 1);
        let window = format!("window:{i}");
        let slid: (i64, i64) = redis::cmd("MON.SLIDECHECK")
            .arg(&window)
            .arg(2)
            .arg(60)
            .arg(2)
            .query(&mut con)
            .unwrap();
        assert_eq!(slid, (2, 1));
        let cards = format!("cards:{i}");
        let seen: (i64, i64) = redis::cmd("MON.DISTINCT")
            .arg(&cards)
            .arg("card-1")
            .arg(60)
            .arg(1)
            .query(&mut con)
            .unwrap();
        assert_eq!(seen, (1, 1));
        let rate = format!("rate:{i}");
        assert_eq!(throttle(&mut con, &rate, 0, 1, 600, 1), [0, 1, 0, -1, 600]);
        assert_eq!(throttle(&mut con, &rate, 0, 1, 600, 1), [1, 1, 0, 600, 600]);

        // The data sits on the slot's owner, and any other node redirects.
        let owner = cluster.primary_of(slot(&mut any, &counter));
        *owners.entry(owner).or_default() += 1;
        let value: Option<i64> = redis::cmd("GET")
            .arg(&counter)
            .query(&mut cluster.node_at(owner).con())
            .unwrap();
        assert_eq!(value, Some(2));
        let other = cluster
            .nodes
            .iter()
            .find(|n| n.port != owner && cluster_info(n).contains("cluster_state:ok"))
            .unwrap();
        let error = redis::cmd("MON.INCRCHECK")
            .arg(&counter)
            .arg(1)
            .arg(60)
            .arg(1)
            .query::<redis::Value>(&mut other.con())
            .unwrap_err();
        assert_eq!(error.kind(), redis::ErrorKind::Moved, "{error}");
    }
    assert_eq!(
        owners.len(),
        3,
        "keys spread over every primary: {owners:?}"
    );
}

fn hash_tagged_keys_share_a_node(cluster: &Cluster) {
    let client = redis::cluster::ClusterClient::new(cluster.urls()).unwrap();
    let mut con = client.get_connection().unwrap();
    let mut any = cluster.nodes[0].con();
    let (orders, amount) = ("{cust:42}:orders", "{cust:42}:amount");
    assert_eq!(slot(&mut any, orders), slot(&mut any, amount));
    assert_eq!(incrcheck(&mut con, orders, 1, 600, &[1]), (1, 1));
    assert_eq!(incrcheck(&mut con, amount, 7500, 600, &[10000]), (7500, 0));
    let owner = cluster.node_at(cluster.primary_of(slot(&mut any, orders)));
    let both: Vec<Option<i64>> = redis::cmd("MGET")
        .arg(orders)
        .arg(amount)
        .query(&mut owner.con())
        .unwrap();
    assert_eq!(both, [Some(1), Some(7500)]);
    // A customer's rate limit beside their counters, on the same node.
    let rate = "{cust:42}:rate";
    assert_eq!(slot(&mut any, rate), slot(&mut any, orders));
    assert_eq!(throttle(&mut con, rate, 4, 10, 60, 1)[..3], [0, 5, 4]);
    let stored: Option<i64> = redis::cmd("GET").arg(rate).query(&mut owner.con()).unwrap();
    assert!(stored.is_some_and(|tat| tat > 0), "{stored:?}");
}

/// CL.THROTTLEALL declares every key: the server routes it by them (a
/// node that does not own their slot answers MOVED) and refuses keys of
/// two slots itself (CROSSSLOT).
fn several_keys_must_share_a_slot(cluster: &Cluster) {
    let (second, day) = ("{cust:9}:second", "{cust:9}:day");
    let call = |con: &mut Connection, keys: [&str; 2]| {
        redis::cmd("CL.THROTTLEALL")
            .arg(2)
            .arg(keys[0])
            .arg(9)
            .arg(10)
            .arg(1)
            .arg(keys[1])
            .arg(999)
            .arg(1000)
            .arg(86400)
            .query::<redis::Value>(con)
    };
    let mut any = cluster.nodes[0].con();
    let owner = cluster.primary_of(slot(&mut any, second));
    let reply = call(&mut cluster.node_at(owner).con(), [second, day]).unwrap();
    let redis::Value::Array(items) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(items[0], redis::Value::Int(0));
    let other = cluster
        .primaries()
        .into_iter()
        .find(|&port| port != owner)
        .unwrap();
    let error = call(&mut cluster.node_at(other).con(), [second, day]).unwrap_err();
    assert_eq!(error.kind(), redis::ErrorKind::Moved, "{error}");
    let error = call(&mut cluster.node_at(owner).con(), [second, "{cust:10}:day"]).unwrap_err();
    assert_eq!(error.kind(), redis::ErrorKind::CrossSlot, "{error}");
}

/// The ALERT stream is a declared key: a hash-tagged stream beside its
/// counter is routed with it (MOVED elsewhere), a stream of another slot
/// is refused by the server (CROSSSLOT) with nothing written.
fn alert_streams_go_with_their_counter(cluster: &Cluster) {
    let (orders, alerts) = ("{cust:7}:orders", "{cust:7}:alerts");
    fn call(con: &mut impl redis::ConnectionLike, stream: &str) -> redis::RedisResult<(i64, i64)> {
        redis::cmd("MON.INCRCHECK")
            .arg("{cust:7}:orders")
            .arg(1)
            .arg(600)
            .arg(1)
            .arg("ALERT")
            .arg(stream)
            .query(con)
    }
    let client = redis::cluster::ClusterClient::new(cluster.urls()).unwrap();
    let mut routed = client.get_connection().unwrap();
    assert_eq!(call(&mut routed, alerts).unwrap(), (1, 1));
    let mut any = cluster.nodes[0].con();
    let owner = cluster.node_at(cluster.primary_of(slot(&mut any, orders)));
    let length: i64 = redis::cmd("XLEN")
        .arg(alerts)
        .query(&mut owner.con())
        .unwrap();
    assert_eq!(length, 1);
    let other = cluster
        .primaries()
        .into_iter()
        .find(|&port| port != owner.port)
        .unwrap();
    let error = call(&mut cluster.node_at(other).con(), alerts).unwrap_err();
    assert_eq!(error.kind(), redis::ErrorKind::Moved, "{error}");
    assert_ne!(slot(&mut any, "alerts:all"), slot(&mut any, orders));
    let error = call(&mut owner.con(), "alerts:all").unwrap_err();
    assert_eq!(error.kind(), redis::ErrorKind::CrossSlot, "{error}");
    let value: i64 = redis::cmd("GET")
        .arg(orders)
        .query(&mut owner.con())
        .unwrap();
    assert_eq!(value, 1, "a refused call wrote nothing");
}

fn state(con: &mut Connection, keys: &[String]) -> Vec<(String, Vec<String>, i64)> {
    keys.iter().map(|key| key_state(con, key)).collect()
}

/// Writes through the module to `keys` on `port` and has them acknowledged
/// by the replica with WAIT.
fn acknowledged_writes(node: &Server, keys: &[String]) {
    let mut con = node.con();
    for key in keys {
        if key.starts_with("fo:counter") {
            incrcheck(&mut con, key, 1, 600, &[100]);
        } else if key.starts_with("fo:refund") {
            let exists: i64 = redis::cmd("EXISTS").arg(key).query(&mut con).unwrap();
            if exists == 0 {
                set_ex(&mut con, key, 1000, 600);
            }
            decrclamp(&mut con, key, 7);
        } else if key.starts_with("fo:campaign") {
            let exists: i64 = redis::cmd("EXISTS").arg(key).query(&mut con).unwrap();
            if exists == 0 {
                campaign::create(&mut con, key, 100, 1, 600);
            }
            let made = campaign::info(&mut con, key)["claims"];
            let (claim, _) = campaign::reserve(
                &mut con,
                key,
                &format!("user-{made}"),
                &["ID", &format!("o{made}")],
            );
            campaign::confirm(&mut con, key, claim);
            campaign::reserve(&mut con, key, &format!("user-{made}-b"), &[]);
        } else {
            let issued: i64 = redis::cmd("SCARD").arg(key).query(&mut con).unwrap();
            issue(&mut con, key, &format!("user-{issued}"), 100);
        }
    }
    let acked: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut con).unwrap();
    assert_eq!(acked, 1, "the replica acknowledged the writes");
}

fn failovers_keep_acknowledged_writes(mut cluster: Cluster) {
    let mut any = cluster.nodes[0].con();
    let first_primary = cluster.primary_of(0);
    // Keys owned by that primary, one family each.
    let mut keys = Vec::new();
    for family in ["fo:counter", "fo:refund", "fo:coupon", "fo:campaign"] {
        let mut found = 0;
        for i in 0.. {
            let key = format!("{family}:{i}");
            if cluster.primary_of(slot(&mut any, &key)) == first_primary {
                keys.push(key);
                found += 1;
                if found == 5 {
                    break;
                }
            }
        }
    }
    acknowledged_writes(cluster.node_at(first_primary), &keys);
    let before = state(&mut cluster.node_at(first_primary).con(), &keys);

    // 1. A manual failover: the replica takes over with everything.
    let second_primary = replica_of(&cluster, first_primary);
    let _: () = redis::cmd("CLUSTER")
        .arg("FAILOVER")
        .query(&mut cluster.node_at(second_primary).con())
        .unwrap();
    wait_for(
        || is_primary(cluster.node_at(second_primary)),
        Duration::from_secs(60),
        "manual failover",
    );
    assert_eq!(
        state(&mut cluster.node_at(second_primary).con(), &keys),
        before
    );
    // The promoted node keeps counting in the same window.
    let mut con = cluster.node_at(second_primary).con();
    let expiry = pexpiretime(&mut con, &keys[0]);
    let value: i64 = redis::cmd("GET").arg(&keys[0]).query(&mut con).unwrap();
    assert_eq!(incrcheck(&mut con, &keys[0], 1, 600, &[100]).0, value + 1);
    assert_eq!(pexpiretime(&mut con, &keys[0]), expiry);

    // 2. The old primary is now its replica; kill the new primary outright.
    wait_for(
        || {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query(&mut cluster.node_at(first_primary).con())
                .unwrap();
            info.contains("master_link_status:up")
        },
        Duration::from_secs(60),
        "old primary following the new one",
    );
    acknowledged_writes(cluster.node_at(second_primary), &keys);
    let before = state(&mut cluster.node_at(second_primary).con(), &keys);
    let victim = cluster
        .nodes
        .iter()
        .position(|n| n.port == second_primary)
        .unwrap();
    cluster.nodes[victim].kill();
    wait_for(
        || is_primary(cluster.node_at(first_primary)),
        Duration::from_secs(60),
        "failover after a killed primary",
    );
    let mut con = cluster.node_at(first_primary).con();
    assert_eq!(
        state(&mut con, &keys),
        before,
        "every acknowledged write survived"
    );
    let expiry = pexpiretime(&mut con, &keys[0]);
    let value: i64 = redis::cmd("GET").arg(&keys[0]).query(&mut con).unwrap();
    assert_eq!(incrcheck(&mut con, &keys[0], 1, 600, &[100]).0, value + 1);
    assert_eq!(
        pexpiretime(&mut con, &keys[0]),
        expiry,
        "same window after the failover"
    );
}
