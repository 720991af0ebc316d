//! Cluster operations under load (`make test-cluster`, on Redis 7.0 and
//! Valkey 9.1): client threads call every family through a cluster client
//! that follows MOVED and ASK while slots holding every value type move
//! (the classic way, IMPORTING/MIGRATING and MIGRATE; and on Valkey 9+
//! with CLUSTER MIGRATESLOTS), and while the primary of the busiest shard
//! is killed three times in a row. After each: every call was answered,
//! every acknowledged write is there, no claim number went to two users,
//! live claims stay within the limit, a retried request id gets its first
//! claim, and keys at rest moved with the same digest and expiry.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::cluster::*;
use common::*;
use redis::cluster::{ClusterClient, ClusterConnection};
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{Cmd, Connection, Value};

/// Hash tags the load writes under: each a slot, spread over the shards.
const TAGS: usize = 6;
const CAMPAIGN_LIMIT: i64 = 1_000_000;
const WRITERS: usize = 4;

fn key(tag: usize, family: &str) -> String {
    format!("{{ops:{tag}}}:{family}")
}

/// Keys written once before a move and never during it (the load writes
/// `counter`, `coupon`, `campaign` and `rate` under the same tags).
const AT_REST: [&str; 6] = [
    "rest-counter",
    "rest-coupon",
    "rest-campaign",
    "rest-rate",
    "rest-window",
    "rest-cards",
];

fn client(cluster: &Cluster) -> ClusterConnection {
    ClusterClient::builder(cluster.urls())
        .retries(40)
        .min_retry_wait(50)
        .max_retry_wait(1_000)
        .build()
        .unwrap()
        .get_connection()
        .unwrap()
}

/// What one writer saw: calls sent, calls answered with an error after
/// the client's retries, and the writes acknowledged.
#[derive(Default)]
struct Seen {
    calls: u64,
    failures: Vec<String>,
    /// Counter key → (acknowledged increments, increments sent).
    increments: HashMap<String, (i64, i64)>,
    /// Coupon key → users issued.
    winners: HashMap<String, Vec<String>>,
    /// Campaign key → (claim, user, request id).
    claims: HashMap<String, Vec<(i64, String, String)>>,
    /// Sliding-window key → (acknowledged adds, adds sent).
    slides: HashMap<String, (i64, i64)>,
    /// Distinct-count key → members added.
    members: HashMap<String, Vec<String>>,
}

impl Seen {
    fn merge(&mut self, other: Seen) {
        self.calls += other.calls;
        self.failures.extend(other.failures);
        for (k, (acked, sent)) in other.increments {
            let entry = self.increments.entry(k).or_default();
            entry.0 += acked;
            entry.1 += sent;
        }
        for (k, users) in other.winners {
            self.winners.entry(k).or_default().extend(users);
        }
        for (k, claims) in other.claims {
            self.claims.entry(k).or_default().extend(claims);
        }
        for (k, (acked, sent)) in other.slides {
            let entry = self.slides.entry(k).or_default();
            entry.0 += acked;
            entry.1 += sent;
        }
        for (k, members) in other.members {
            self.members.entry(k).or_default().extend(members);
        }
    }

    fn acknowledged(&self) -> usize {
        self.increments
            .values()
            .map(|(a, _)| *a as usize)
            .sum::<usize>()
            + self.winners.values().map(Vec::len).sum::<usize>()
            + self.claims.values().map(Vec::len).sum::<usize>()
            + self
                .slides
                .values()
                .map(|(a, _)| *a as usize)
                .sum::<usize>()
            + self.members.values().map(Vec::len).sum::<usize>()
    }
}

/// One writer's calls. With `wait`, a write counts as acknowledged only
/// once `WAIT 1` says a replica has it; a call the client could not get
/// answered (a node being killed) is sent again, as an application would.
struct Writer {
    con: ClusterConnection,
    /// The scenario's own keys, under the shared tags.
    scenario: &'static str,
    wait: bool,
    seen: Seen,
}

impl Writer {
    fn call<T: redis::FromRedisValue>(&mut self, cmd: &Cmd) -> Option<T> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            self.seen.calls += 1;
            match cmd.query::<T>(&mut self.con) {
                Ok(reply) => return Some(reply),
                Err(_) if self.wait && Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(100));
                }
                Err(error) => {
                    let sent = String::from_utf8_lossy(&cmd.get_packed_command()).into_owned();
                    self.seen.failures.push(format!("{sent:?}: {error}"));
                    return None;
                }
            }
        }
    }

    /// Did a replica acknowledge this writer's writes to `key`'s node?
    fn replicated(&mut self, key: &str) -> bool {
        if !self.wait {
            return true;
        }
        let wait = redis::cmd("WAIT").arg(1).arg(2_000).clone();
        matches!(on_owner(&mut self.con, key, &wait), Ok(Value::Int(n)) if n >= 1)
    }

    fn round(&mut self, id: usize, i: usize) {
        let tag = (id + i) % TAGS;
        let user = format!("w{id}-{i}");

        let counter = key(tag, &format!("{}:counter", self.scenario));
        let mut incr = redis::cmd("MON.INCRCHECK");
        incr.arg(&counter).arg(1).arg(3_600).arg(1_000_000_000);
        let sent_before = self.seen.calls;
        let answered = self.call::<(i64, i64)>(&incr).is_some();
        let sent = (self.seen.calls - sent_before) as i64;
        let acked = answered && self.replicated(&counter);
        let entry = self.seen.increments.entry(counter).or_default();
        entry.0 += i64::from(acked);
        entry.1 += sent;

        let coupon = key(tag, &format!("{}:coupon", self.scenario));
        let mut issue = redis::cmd("COUPON.ISSUE");
        issue.arg(&coupon).arg(&user).arg(1_000_000);
        // -1 after a resend: the first send issued it.
        if let Some(rank) = self.call::<i64>(&issue) {
            if (rank > 0 || rank == -1) && self.replicated(&coupon) {
                self.seen
                    .winners
                    .entry(coupon)
                    .or_default()
                    .push(user.clone());
            }
        }

        let campaign = key(tag, &format!("{}:campaign", self.scenario));
        let id_option = format!("req-{user}");
        let mut reserve = redis::cmd("COUPON.RESERVE");
        reserve.arg(&campaign).arg(&user).arg("ID").arg(&id_option);
        if let Some((claim, _)) = self.call::<(i64, i64)>(&reserve) {
            assert!(claim > 0, "{user}: reserve replied {claim}");
            // A retry with the same request id is the same claim.
            let again = self.call::<(i64, i64)>(&reserve);
            if let Some((repeated, _)) = again {
                assert_eq!(repeated, claim, "{user}: a retried request id");
            }
            let mut confirm = redis::cmd("COUPON.CONFIRM");
            confirm.arg(&campaign).arg(claim);
            self.call::<i64>(&confirm);
            if self.replicated(&campaign) {
                let record = (claim, user.clone(), id_option);
                self.seen.claims.entry(campaign).or_default().push(record);
            }
        }

        let window = key(tag, &format!("{}:window", self.scenario));
        let mut slide = redis::cmd("MON.SLIDECHECK");
        slide.arg(&window).arg(1).arg(3_600).arg(1_000_000_000);
        let sent_before = self.seen.calls;
        let answered = self.call::<(i64, i64)>(&slide).is_some();
        let sent = (self.seen.calls - sent_before) as i64;
        let acked = answered && self.replicated(&window);
        let entry = self.seen.slides.entry(window).or_default();
        entry.0 += i64::from(acked);
        entry.1 += sent;

        let cards = key(tag, &format!("{}:cards", self.scenario));
        let mut distinct = redis::cmd("MON.DISTINCT");
        distinct
            .arg(&cards)
            .arg(&user)
            .arg(3_600)
            .arg(1_000_000_000);
        if self.call::<(i64, i64)>(&distinct).is_some() && self.replicated(&cards) {
            self.seen
                .members
                .entry(cards)
                .or_default()
                .push(user.clone());
        }

        let mut throttle = redis::cmd("CL.THROTTLE");
        throttle
            .arg(key(tag, "rate"))
            .arg(1_000_000)
            .arg(1_000)
            .arg(60);
        self.call::<Vec<i64>>(&throttle);
    }
}

/// `cmd` sent to the primary serving `key`, for commands whose key is not
/// their first argument (WAIT has none; DEBUG DIGEST-VALUE's is second).
fn on_owner(con: &mut ClusterConnection, key: &str, cmd: &Cmd) -> redis::RedisResult<Value> {
    let slot = redis::cluster_routing::get_slot(key.as_bytes());
    let route = Route::new(slot, SlotAddr::Master);
    con.route_command(
        cmd,
        RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route)),
    )
}

/// Bounds on a writer, whatever happens to the cluster: it stops by itself.
const MAX_ROUNDS: usize = 100_000;
const MAX_LOAD: Duration = Duration::from_secs(180);

/// Writers on the scenario's keys until `stop` (or the bounds above); the
/// scenario's campaigns are made first.
fn load(
    cluster: &Cluster,
    scenario: &'static str,
    wait: bool,
    stop: Arc<AtomicBool>,
) -> Vec<thread::JoinHandle<Seen>> {
    let mut con = client(cluster);
    for tag in 0..TAGS {
        let campaign = key(tag, &format!("{scenario}:campaign"));
        campaign::create(&mut con, &campaign, CAMPAIGN_LIMIT, 1, 3_600);
    }
    (0..WRITERS)
        .map(|id| {
            let mut writer = Writer {
                con: client(cluster),
                scenario,
                wait,
                seen: Seen::default(),
            };
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let started = Instant::now();
                for i in 0..MAX_ROUNDS {
                    if stop.load(Ordering::Relaxed) || started.elapsed() > MAX_LOAD {
                        break;
                    }
                    writer.round(id, i);
                }
                writer.seen
            })
        })
        .collect()
}

fn finish(stop: &AtomicBool, writers: Vec<thread::JoinHandle<Seen>>) -> Seen {
    stop.store(true, Ordering::Relaxed);
    let mut seen = Seen::default();
    for writer in writers {
        seen.merge(writer.join().unwrap());
    }
    seen
}

/// The keys at rest, made before the load.
fn prepare(con: &mut ClusterConnection) {
    for tag in 0..TAGS {
        incrcheck(con, &key(tag, "rest-counter"), 5, 3_600, &[3]);
        issue(con, &key(tag, "rest-coupon"), "alice", 10);
        let rest = key(tag, "rest-campaign");
        campaign::create(con, &rest, 10, 2, 600);
        campaign::reserve(con, &rest, "bob", &["ID", "r1"]);
        campaign::reserve(con, &rest, "carol", &[]);
        campaign::confirm(con, &rest, 2);
        throttle(con, &key(tag, "rest-rate"), 5, 1, 60, 1);
        let _: Value = redis::cmd("MON.SLIDECHECK")
            .arg(key(tag, "rest-window"))
            .arg(3)
            .arg(900)
            .arg(2)
            .query(con)
            .unwrap();
        let _: Value = redis::cmd("MON.DISTINCT")
            .arg(key(tag, "rest-cards"))
            .arg("card-1")
            .arg(900)
            .arg(2)
            .query(con)
            .unwrap();
        let _: i64 = redis::cmd("PEXPIRE")
            .arg(&rest)
            .arg(900_000)
            .query(con)
            .unwrap();
    }
}

/// Every key at rest with its digest and absolute expiry.
fn at_rest(con: &mut ClusterConnection) -> BTreeMap<String, (String, i64)> {
    (0..TAGS)
        .flat_map(|tag| AT_REST.iter().map(move |f| key(tag, f)))
        .map(|k| {
            let cmd = redis::cmd("DEBUG").arg("DIGEST-VALUE").arg(&k).clone();
            let digest: Vec<String> =
                redis::from_redis_value(&on_owner(con, &k, &cmd).unwrap()).unwrap();
            let expiry = pexpiretime(con, &k);
            (k, (digest[0].clone(), expiry))
        })
        .collect()
}

/// The checks owed after every operation.
fn check(con: &mut ClusterConnection, seen: &Seen, exact: bool, what: &str) {
    assert!(
        seen.failures.is_empty(),
        "{what}: calls without an answer: {:?}",
        &seen.failures[..seen.failures.len().min(5)]
    );
    for (counter, (acked, sent)) in &seen.increments {
        let value: i64 = redis::cmd("GET").arg(counter).query(con).unwrap();
        assert!(
            *acked <= value && value <= *sent,
            "{what}: {counter} is {value}, acknowledged {acked}, sent {sent}"
        );
        if exact {
            assert_eq!(value, *acked, "{what}: {counter}");
        }
    }
    for (coupon, users) in &seen.winners {
        let members: HashSet<String> = redis::cmd("SMEMBERS").arg(coupon).query(con).unwrap();
        for user in users {
            assert!(members.contains(user), "{what}: {coupon} lost {user}");
        }
    }
    for (window, (acked, sent)) in &seen.slides {
        // One more add tells the sum: the checks end the scenario.
        let (sum, _): (i64, i64) = redis::cmd("MON.SLIDECHECK")
            .arg(window)
            .arg(1)
            .arg(3_600)
            .arg(1_000_000_000)
            .query(con)
            .unwrap();
        let value = sum - 1;
        assert!(
            *acked <= value && value <= *sent,
            "{what}: {window} sums {value}, acknowledged {acked}, sent {sent}"
        );
        if exact {
            assert_eq!(value, *acked, "{what}: {window}");
        }
    }
    for (cards, users) in &seen.members {
        let members: HashSet<String> = redis::cmd("ZRANGE")
            .arg(cards)
            .arg(0)
            .arg(-1)
            .query(con)
            .unwrap();
        for user in users {
            assert!(members.contains(user), "{what}: {cards} lost {user}");
        }
    }
    for (key, acked) in &seen.claims {
        let live = campaign::claims(con, key, &["COUNT", "1000000"]);
        let by_number: HashMap<i64, &campaign::ClaimRow> =
            live.iter().map(|row| (row.claim, row)).collect();
        let mut numbers = HashSet::new();
        for (claim, user, request_id) in acked {
            assert!(numbers.insert(*claim), "{what}: claim {claim} given twice");
            let row = by_number
                .get(claim)
                .unwrap_or_else(|| panic!("{what}: {key} lost claim {claim} of {user}"));
            assert_eq!(&row.user, user, "{what}: claim {claim}");
            assert_eq!(row.request_id.as_ref(), Some(request_id));
            // The first claim of a request id, asked again.
            let (again, _) = campaign::reserve(con, key, user, &["ID", request_id]);
            assert_eq!(again, *claim, "{what}: {request_id} retried");
        }
        let info = campaign::info(con, key);
        assert!(info["confirmed"] + info["held"] <= CAMPAIGN_LIMIT);
    }
}

/// The slots of the tags, with the port that serves each.
fn tag_slots(cluster: &Cluster) -> Vec<(i64, u16)> {
    let mut slots: Vec<i64> = (0..TAGS)
        .map(|tag| i64::from(redis::cluster_routing::get_slot(key(tag, "x").as_bytes())))
        .collect();
    slots.sort();
    slots.dedup();
    slots
        .into_iter()
        .map(|slot| (slot, cluster.primary_of(slot)))
        .collect()
}

/// Another primary than `port`.
fn other_primary(cluster: &Cluster, port: u16) -> u16 {
    *cluster.primaries().iter().find(|p| **p != port).unwrap()
}

/// The classic move of one slot: IMPORTING on the target, MIGRATING on the
/// source, MIGRATE of its keys in batches (clients get ASK meanwhile),
/// then the slot assigned on every node.
fn migrate_slot(cluster: &Cluster, slot: i64, from: u16, to: u16) {
    let (from_id, to_id) = (cluster.id_of(from), cluster.id_of(to));
    let (mut source, mut target) = (cluster.node_at(from).con(), cluster.node_at(to).con());
    let setslot = |con: &mut Connection, state: &str, id: &str| {
        let _: () = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg(state)
            .arg(id)
            .query(con)
            .unwrap();
    };
    setslot(&mut target, "IMPORTING", &from_id);
    setslot(&mut source, "MIGRATING", &to_id);
    loop {
        let keys: Vec<String> = redis::cmd("CLUSTER")
            .arg("GETKEYSINSLOT")
            .arg(slot)
            .arg(2)
            .query(&mut source)
            .unwrap();
        if keys.is_empty() {
            break;
        }
        let _: Value = redis::cmd("MIGRATE")
            .arg("127.0.0.1")
            .arg(to)
            .arg("")
            .arg(0)
            .arg(5_000)
            .arg("KEYS")
            .arg(&keys)
            .query(&mut source)
            .unwrap();
        // Let clients meet the half-moved slot.
        thread::sleep(Duration::from_millis(20));
    }
    for port in cluster.primaries() {
        setslot(&mut cluster.node_at(port).con(), "NODE", &to_id);
    }
}

/// Valkey 9's atomic slot migration of one slot, to completion.
fn migrate_slot_atomically(cluster: &Cluster, slot: i64, from: u16, to: u16) {
    let mut source = cluster.node_at(from).con();
    let _: () = redis::cmd("CLUSTER")
        .arg("MIGRATESLOTS")
        .arg("SLOTSRANGE")
        .arg(slot)
        .arg(slot)
        .arg("NODE")
        .arg(cluster.id_of(to))
        .query(&mut source)
        .unwrap_or_else(|e| panic!("CLUSTER MIGRATESLOTS refused: {e}"));
    wait_for(
        || cluster.primary_of(slot) == to,
        Duration::from_secs(60),
        "the atomic slot migration",
    );
}

fn supports_atomic_migration(cluster: &Cluster) -> bool {
    let (kind, version) = server_kind(&mut cluster.nodes[0].con());
    kind == "valkey" && version >= [9, 0, 0]
}

/// Moves every tag's slot to another primary with `mover`, under load;
/// checks the writes and the keys at rest.
fn moves_under_load(
    cluster: &Cluster,
    what: &'static str,
    mover: fn(&Cluster, i64, u16, u16),
    expiry_slack_ms: i64,
) {
    let mut con = client(cluster);
    let rest_before = at_rest(&mut con);
    let stop = Arc::new(AtomicBool::new(false));
    let writers = load(cluster, what, false, Arc::clone(&stop));
    thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let slots = tag_slots(cluster);
    for &(slot, from) in &slots {
        mover(cluster, slot, from, other_primary(cluster, from));
    }
    let took = started.elapsed();
    thread::sleep(Duration::from_millis(300));
    let seen = finish(&stop, writers);
    for &(slot, from) in &slots {
        assert_ne!(cluster.primary_of(slot), from, "{what}: slot {slot} moved");
    }
    check(&mut con, &seen, true, what);
    let rest_after = at_rest(&mut con);
    for (key, (digest, expiry)) in &rest_before {
        let (moved_digest, moved_expiry) = &rest_after[key];
        assert_eq!(moved_digest, digest, "{what}: {key}'s digest");
        assert!(
            (moved_expiry - expiry).abs() <= expiry_slack_ms,
            "{what}: {key} expired at {expiry}, now at {moved_expiry}"
        );
    }
    println!(
        "{what}: {} slots moved in {took:.1?} under {} calls; {} acknowledged writes checked, \
         {} keys at rest compared",
        slots.len(),
        seen.calls,
        seen.acknowledged(),
        rest_before.len()
    );
}

/// Kills the primary serving the most tags, waits for its replica to take
/// over, restarts it (it rejoins as a replica): three times, under load
/// with `WAIT 1`.
fn failovers_under_load(cluster: &mut Cluster) {
    let stop = Arc::new(AtomicBool::new(false));
    let writers = load(cluster, "failovers", true, Arc::clone(&stop));
    let mut took = Vec::new();
    for kill in 1..=3 {
        thread::sleep(Duration::from_millis(500));
        let slots = tag_slots(cluster);
        let mut per_node: HashMap<u16, usize> = HashMap::new();
        for (_, port) in &slots {
            *per_node.entry(*port).or_default() += 1;
        }
        let (&victim, _) = per_node.iter().max_by_key(|(_, n)| **n).unwrap();
        let slot = slots.iter().find(|(_, port)| *port == victim).unwrap().0;
        let index = cluster.nodes.iter().position(|n| n.port == victim).unwrap();
        let started = Instant::now();
        cluster.nodes[index].kill();
        wait_for(
            || {
                let owner = cluster.primary_of(slot);
                owner != 0 && owner != victim
            },
            Duration::from_secs(60),
            "a replica promoted",
        );
        took.push(started.elapsed());
        cluster.nodes[index].restart();
        wait_for(
            || {
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query(&mut cluster.nodes[index].con())
                    .unwrap_or_default();
                info.contains("role:slave") && info.contains("master_link_status:up")
            },
            Duration::from_secs(60),
            "the killed primary back as a replica",
        );
        cluster.wait_until_settled(slot);
        println!(
            "failover {kill}: {victim} killed, replaced in {:.1?}",
            took[kill - 1]
        );
    }
    thread::sleep(Duration::from_millis(500));
    let seen = finish(&stop, writers);
    // A connection opened now: one from before the kills holds sockets to
    // processes that are gone.
    check(&mut client(cluster), &seen, false, "failovers");
    println!(
        "failovers: 3 kills of the busiest primary (replaced in {took:.1?}) under {} calls; \
         {} writes acknowledged by WAIT 1 checked",
        seen.calls,
        seen.acknowledged()
    );
}

#[test]
fn resharding_and_failover_under_load_lose_nothing() {
    let mut cluster = Cluster::start();
    let mut con = client(&cluster);
    prepare(&mut con);
    // MIGRATE carries a key's TTL as a relative time: it may shift by the
    // milliseconds of the transfer.
    moves_under_load(&cluster, "classic", migrate_slot, 1_000);
    if supports_atomic_migration(&cluster) {
        moves_under_load(&cluster, "atomic", migrate_slot_atomically, 0);
    } else {
        println!("atomic slot migration: not on this server");
    }
    failovers_under_load(&mut cluster);
}
