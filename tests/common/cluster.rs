//! A real cluster on loopback: 3 primaries + 3 replicas, the module on
//! every node (or on none), made with `redis-cli --cluster create`; and what tests ask
//! of it (slot owners, node ids, roles).

use std::process::Command;
use std::time::Duration;

use redis::Connection;

use super::{wait_for, Server};

pub struct Cluster {
    pub nodes: Vec<Server>,
}

impl Cluster {
    /// 3 primaries, each with a replica.
    pub fn start() -> Cluster {
        Cluster::with_replicas(1)
    }

    /// 3 primaries, each with `replicas` replicas (0: primaries only, what
    /// the client packages' routing tests need).
    pub fn with_replicas(replicas: usize) -> Cluster {
        Cluster::of(replicas, Server::with_args)
    }

    /// The same without the module on any node: where the client packages
    /// run scripts, as on a managed service.
    pub fn without_module(replicas: usize) -> Cluster {
        Cluster::of(replicas, Server::without_module)
    }

    /// 3 primaries, each with `replicas` replicas, each node started by
    /// `launch` with the cluster's arguments.
    fn of(replicas: usize, launch: fn(&[&str]) -> Server) -> Cluster {
        let nodes: Vec<Server> = (0..3 * (1 + replicas))
            .map(|_| {
                launch(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "2000",
                ])
            })
            .collect();
        let addresses: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "redis-cli --cluster create failed");
        let cluster = Cluster { nodes };
        for node in &cluster.nodes {
            wait_for(
                || cluster_info(node).contains("cluster_state:ok"),
                Duration::from_secs(60),
                "cluster_state:ok",
            );
        }
        // Replicas must also have synced before failovers are meaningful.
        for node in &cluster.nodes {
            wait_for(
                || {
                    let info: String = redis::cmd("INFO")
                        .arg("replication")
                        .query(&mut node.con())
                        .unwrap();
                    info.contains("role:master") || info.contains("master_link_status:up")
                },
                Duration::from_secs(60),
                "replicas in sync",
            );
        }
        cluster
    }

    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Server::url).collect()
    }

    pub fn node_at(&self, port: u16) -> &Server {
        self.nodes.iter().find(|n| n.port == port).unwrap()
    }

    /// The port of the node serving `slot` as primary, as the first node
    /// that answers sees it (0 while none lists an owner).
    pub fn primary_of(&self, slot: i64) -> u16 {
        self.nodes
            .iter()
            .find_map(Server::try_con)
            .map_or(0, |mut con| owner_seen_by(&mut con, slot))
    }
}

pub fn cluster_info(node: &Server) -> String {
    redis::cmd("CLUSTER")
        .arg("INFO")
        .query(&mut node.con())
        .unwrap_or_default()
}

pub fn slot(con: &mut Connection, key: &str) -> i64 {
    redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query(con)
        .unwrap()
}

pub fn replica_of(cluster: &Cluster, primary: u16) -> u16 {
    let nodes: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query(&mut cluster.node_at(primary).con())
        .unwrap();
    let primary_id = nodes
        .lines()
        .find(|l| l.contains("myself"))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    let line = nodes
        .lines()
        .find(|l| l.contains("slave") && l.contains(&primary_id))
        .expect("a replica");
    let address = line.split(' ').nth(1).unwrap();
    address.split(['@', ':']).nth(1).unwrap().parse().unwrap()
}

pub fn is_primary(node: &Server) -> bool {
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query(&mut node.con())
        .unwrap_or_default();
    info.contains("role:master")
}

impl Cluster {
    /// The node's cluster id.
    pub fn id_of(&self, port: u16) -> String {
        redis::cmd("CLUSTER")
            .arg("MYID")
            .query(&mut self.node_at(port).con())
            .unwrap()
    }

    /// The ports of the nodes that serve slots as primaries now.
    pub fn primaries(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = (0..16384)
            .step_by(1024)
            .map(|slot| self.primary_of(slot))
            .collect();
        ports.sort();
        ports.dedup();
        ports
    }

    /// Waits until every live node says the cluster is ok and agrees on
    /// the owner of `slot`.
    pub fn wait_until_settled(&self, slot: i64) {
        wait_for(
            || {
                let owners: Vec<u16> = self
                    .nodes
                    .iter()
                    .filter_map(|node| node.try_con())
                    .map(|mut con| {
                        let info: String = redis::cmd("CLUSTER")
                            .arg("INFO")
                            .query(&mut con)
                            .unwrap_or_default();
                        (info.contains("cluster_state:ok"), con)
                    })
                    .filter(|(ok, _)| *ok)
                    .map(|(_, mut con)| owner_seen_by(&mut con, slot))
                    .collect();
                !owners.is_empty() && owners.iter().all(|o| *o == owners[0])
            },
            Duration::from_secs(60),
            "the cluster settled",
        );
    }
}

/// The port `con`'s node believes serves `slot` as primary.
fn owner_seen_by(con: &mut Connection, slot: i64) -> u16 {
    let raw: Vec<Vec<redis::Value>> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query(con)
        .unwrap_or_default();
    raw.iter()
        .find(|entry| {
            let start: i64 = redis::from_redis_value(&entry[0]).unwrap();
            let end: i64 = redis::from_redis_value(&entry[1]).unwrap();
            (start..=end).contains(&slot)
        })
        .map(|entry| {
            let master: Vec<redis::Value> = redis::from_redis_value(&entry[2]).unwrap();
            redis::from_redis_value::<i64>(&master[1]).unwrap() as u16
        })
        .unwrap_or(0)
}
