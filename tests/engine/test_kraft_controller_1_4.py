"""KRaft controller rules fixed in engine 1.4.0 (docs/model.md §20.4), read at Kafka 3.9.0
(cc53a632ed) and 4.1.0 (13f70256db). Each test re-simulates the run as engine 1.3.0 too, which
keeps the old behaviour."""
from engine.kraft.java_order import chm_bin, chm_table_size, objects_hash_int_long, timeline_order
from engine.simulation import Simulation

SESSION_MS = 9000           # broker.session.timeout.ms
CHECK_PERIOD_MS = 9000 // 8  # 4.1's maybeFenceStaleBroker period
LINGER_MS = 25              # controller.quorum.append.linger.ms


def cluster(era, brokers=4, duration_ms=30000, timeline=()):
    return {"name": "fencing", "kafka_version": era, "brokers": brokers, "duration_ms": duration_ms,
            "config": {}, "topics": [{"name": "t", "partitions": 2, "replication_factor": 3}],
            "clients": [], "timeline": list(timeline)}


def fences(history, after_ms=0):
    return [(e["t_ms"], e["broker"], e["broker_epoch"]) for e in history
            if e["type"] == "broker_fenced" and e["t_ms"] > after_ms]


def test_java_orders():
    """Objects.hash(0, 1L) = 31 x (31 + 0) + 1; ConcurrentHashMap bins of 16 below 12 keys;
    BaseHashTable slots by Knuth's multiplier 0x9E3779B97F4A7C15: with capacity 4, key 1's top two
    bits are 10 (slot 2), key 2's 00 (slot 0), key 3's 11 (slot 3)."""
    assert objects_hash_int_long(0, 1) == 962 and objects_hash_int_long(2, 33) == 1056
    assert chm_bin(962, 16) == 2 and chm_table_size(11) == 16 and chm_table_size(12) == 32
    assert timeline_order([0, 1, 2, 3]) == [0, 2, 1, 3]
    assert timeline_order([0, 1]) == [0, 1]


def test_4_1_writes_the_fence_record_again_when_a_fenced_brokers_session_expires():
    """ReplicationControlManager.maybeFenceOneStaleBroker @ 4.1.0: BrokerHeartbeatTracker keeps the
    (id, epoch) of a broker fenced by its controlled shutdown; when its last heartbeat is a session
    old, maybeRemoveExpired returns it and handleBrokerFenced writes a second fence record (it does
    not look whether the broker is fenced). Engine 1.3.0 skipped fenced brokers. 3.9's unfenced
    list no longer holds a fenced broker: one record."""
    timeline = [{"op": "shutdown", "broker": 3, "at_ms": 5000}]
    for era, version, count in (("4.1", None, 2), ("4.1", "1.3.0", 1), ("3.9-kraft", None, 1)):
        result = Simulation(cluster(era, timeline=timeline), engine_version=version).run()
        fenced = fences(result["history"])
        assert [b for _, b, _ in fenced] == [3] * count
        if count == 2:
            # its last heartbeat is the one answered with the fence (told at commit, a few ms
            # later); the periodic check runs every 1125 ms
            first = fenced[0][0]
            assert first - LINGER_MS - 5 + SESSION_MS < fenced[1][0] <= first + SESSION_MS + CHECK_PERIOD_MS
            assert fenced[1][2] == fenced[0][2]          # the same broker epoch, fenced again
            second = [e for e in result["history"] if e["type"] == "broker_fenced"][1]
            assert "already fenced" in second["reason"]


def _crash_two_brokers_after_a_controller_failover(version):
    """3.9: the new active controller touches every broker at its activation (the same ms), and
    brokers 1 and 2 crash before their next heartbeat: both are stale at the same deadline."""
    sim = Simulation(cluster("3.9-kraft"), engine_version=version)
    sim.advance_to(5000)
    sim.apply({"op": "crash", "controller": sim.quorum.active})
    t = 5001
    while not [e for e in sim.history if e["type"] == "controller_activated" and e["t_ms"] > 5000]:
        t += 1
        sim.advance_to(t)
    for broker in (1, 2):
        sim.apply({"op": "crash", "broker": broker})
    return t, fences(sim.run()["history"])


def test_3_9_fences_the_oldest_contact_first():
    """BrokerHeartbeatManager.findOneStaleBroker @ 3.9.0: the head of the unfenced list, sorted by
    last contact (ties: the broker touched first comes first, BrokerHeartbeatStateList.add).
    ClusterControlManager.activate touches the brokers in the order of brokerRegistrations, a
    TimelineHashMap: with four brokers its slots give 0, 2, 1, 3. So broker 2 is fenced before
    broker 1. Engine 1.3.0 fenced them in id order."""
    activated, fenced = _crash_two_brokers_after_a_controller_failover(None)
    assert [b for _, b, _ in fenced] == [2, 1]
    assert activated + SESSION_MS <= fenced[0][0] <= activated + SESSION_MS + LINGER_MS + 5
    _, fenced = _crash_two_brokers_after_a_controller_failover("1.3.0")
    assert [b for _, b, _ in fenced] == [1, 2]


def test_4_1_fences_stale_brokers_in_the_tracker_maps_order():
    """BrokerHeartbeatTracker.maybeRemoveExpired @ 4.1.0 walks a ConcurrentHashMap of
    BrokerIdAndEpoch: broker 1 (epoch 2) and broker 0 after a restart (epoch 33) share bin 2
    (Objects.hash: 994 and 1026 mod 16), where broker 1 came first; so broker 1 is fenced first,
    broker 0 10 ms later (the task's immediate rerun). Engine 1.3.0 fenced them in id order."""
    # the restart at 3200 ms gives broker 0 epoch 33 (engine 1.5.0 registers a restarted broker at
    # once, with the leader its quorum-state file names; at 3100 it now gets epoch 32)
    timeline = [{"at_ms": 3000, "op": "crash", "broker": 0}, {"at_ms": 3200, "op": "restart", "broker": 0},
                {"at_ms": 20000, "op": "crash", "broker": 0}, {"at_ms": 20000, "op": "crash", "broker": 1}]
    result = Simulation(cluster("4.1", duration_ms=35000, timeline=timeline)).run()
    fenced = fences(result["history"], 20000)
    assert [(b, e) for _, b, e in fenced] == [(1, 2), (0, 33)]
    # decided 10 ms apart (the task's immediate rerun); within one 25 ms linger: one commit
    assert fenced[1][0] == fenced[0][0]
    assert chm_bin(objects_hash_int_long(1, 2), 16) == chm_bin(objects_hash_int_long(0, 33), 16) == 2
    old = fences(Simulation(cluster("4.1", duration_ms=35000, timeline=timeline),
                            engine_version="1.3.0").run()["history"], 20000)
    assert [b for _, b, _ in old] == [0, 1]


def _heartbeats(era, version):
    """(t_ms, kind, body) of broker 0's heartbeats and their answers until it is unfenced."""
    sim = Simulation(cluster(era, duration_ms=4000), engine_version=version)
    seen = []

    def observe(what, env):
        if what != "deliver":
            return
        if env.type == "BrokerHeartbeat" and env.source == 0:
            seen.append((sim.scheduler.now_ms, "request", dict(env.body)))
        elif env.type == "BrokerHeartbeatResponse" and env.target == 0:
            seen.append((sim.scheduler.now_ms, "answer", dict(env.body)))
    sim.network.observer = observe
    result = sim.run()
    unfenced = [e for e in result["history"] if e["type"] == "broker_unfenced" and e["broker"] == 0][0]
    return seen, unfenced


def test_a_broker_asks_to_be_unfenced_once_the_controller_saw_it_caught_up():
    """BrokerLifecycleManager @ 3.9.0 / 4.1.0: a heartbeat asks to be unfenced only once
    readyToUnfence is set (setWantFence(!readyToUnfence)); BrokerServer.startup sets it after the
    first answer with isCaughtUp (initialCatchUpFuture) and the first publish, and
    SetReadyToUnfenceEvent sends the next heartbeat at once. So some heartbeat that still wants to
    stay fenced is answered isCaughtUp, and the very next one (sent the same millisecond) asks.
    Engine 1.3.0 asked in the first heartbeat after the broker applied its registration, before
    any answer said it was caught up."""
    for era in ("3.9-kraft", "4.1"):
        seen, unfenced = _heartbeats(era, None)
        asks = [i for i, (_, kind, body) in enumerate(seen) if kind == "request" and not body["want_fence"]]
        first_ask = asks[0]
        caught_up = [i for i, (_, kind, body) in enumerate(seen)
                     if kind == "answer" and body.get("is_caught_up")]
        assert caught_up and caught_up[0] == first_ask - 1          # the answer just before it
        assert seen[first_ask][0] == seen[caught_up[0]][0] + 1      # sent at once (1 ms link)
        assert all(body["want_fence"] for _, kind, body in seen[:first_ask] if kind == "request")
        assert unfenced["t_ms"] > seen[first_ask][0]
        old, _ = _heartbeats(era, "1.3.0")
        first_old = next(i for i, (_, kind, body) in enumerate(old)
                         if kind == "request" and not body["want_fence"])
        assert not [1 for _, kind, body in old[:first_old] if kind == "answer" and body.get("is_caught_up")]


def _cache_while_catching_up(version, monkeypatch):
    """Broker 2 restarts late in a long run: its metadata log is longer than one Fetch answer (200
    records), so it replays it over several answers before it is caught up. Returns the brokers
    its metadata cache held after each answer that left it behind the high watermark."""
    from engine.kraft.kraft_broker import KraftBroker
    seen = []
    handle = KraftBroker._on_metadata_fetched

    def spy(self, target, body, error):
        handle(self, target, body, error)
        if self.node_id == 2 and body and not error and not body.get("error") \
                and self.metadata_offset < body["hw"]:
            seen.append(dict(self.live_brokers))
    monkeypatch.setattr(KraftBroker, "_on_metadata_fetched", spy)
    timeline = [{"at_ms": 150000, "op": "crash", "broker": 2}, {"at_ms": 150500, "op": "restart", "broker": 2}]
    Simulation(cluster("3.9-kraft", brokers=3, duration_ms=152000, timeline=timeline),
               engine_version=version).run()
    return seen


def test_a_brokers_metadata_cache_changes_at_a_publish_not_record_by_record(monkeypatch):
    """MetadataLoader @ 3.9.0 / 4.1.0 replays records into a delta and publishes a new image only
    once it has caught up with the high watermark (maybePublishMetadata); KRaftMetadataCache takes
    the image at the publish (setImage). So while a restarted broker is still behind, its cache
    holds no broker at all. Engine 1.3.0 changed the cache at every broker record it replayed."""
    behind = _cache_while_catching_up(None, monkeypatch)
    assert behind and all(cache == {} for cache in behind)
    old = _cache_while_catching_up("1.3.0", monkeypatch)
    assert old and any(cache for cache in old)


def _registrations(era, version):
    """(delivered, answered) times of each BrokerRegistration at the controller, and the metadata
    log of the run."""
    sim = Simulation(cluster(era, brokers=3, duration_ms=4000), engine_version=version)
    seen = {}

    def observe(what, env):
        if what == "deliver" and env.type == "BrokerRegistration":
            seen.setdefault(env.correlation_id, [sim.now_ms, None])
        elif what == "send" and env.type == "BrokerRegistrationResponse" and env.correlation_id in seen:
            seen[env.correlation_id][1] = sim.now_ms
    sim.network.observer = observe
    result = sim.run()
    return [tuple(v) for v in seen.values() if v[1] is not None], result["metadata_log"]


def test_controller_records_linger_25_ms_and_share_a_batch():
    """BatchAccumulator @ 3.9.0 / 4.1.0: QuorumController.appendRecords -> raftClient.prepareAppend
    puts an operation's records in the current batch; the first record after a drain starts the
    linger timer (maybeResetLinger) and KafkaRaftClient.maybeAppendBatches drains only when
    timeUntilDrain is 0, controller.quorum.append.linger.ms = 25 later. So a BrokerRegistration is
    answered no sooner than 25 ms after it arrives (plus the commit's fetch round trip), and the
    three brokers' registrations, sent within a few ms of each other, are one batch. Engine 1.3.0
    appended each operation at once, as its own batch."""
    for era in ("3.9-kraft", "4.1"):
        answers, log = _registrations(era, None)
        assert answers and all(LINGER_MS <= answered - delivered <= LINGER_MS + 5
                               for delivered, answered in answers)
        registered = [r for r in log if r["type"] == "RegisterBrokerRecord"][:3]
        assert len({r["batch"] for r in registered}) == 1
        answers, log = _registrations(era, "1.3.0")
        assert all(answered - delivered < LINGER_MS for delivered, answered in answers)
        registered = [r for r in log if r["type"] == "RegisterBrokerRecord"][:3]
        assert len({r["batch"] for r in registered}) == 3
