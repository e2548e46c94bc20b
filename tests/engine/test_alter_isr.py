"""The ZooKeeper-mode AlterIsr / AlterPartition eras 2.7, 3.0, 3.3 and 3.7 (docs/model.md §17),
each rule pinned with a small scenario and Kafka's numbers: the 50 ms "send-alter-isr" task of
2.7.x (AlterIsrManagerImpl.start), replica.lag.time.max.ms 2000 -> isr-expiration every 1000 ms.

Most scenarios put the controller on broker 0 and the partition on brokers 1-3, so that the
leader's AlterIsr really travels leader -> controller and a ``slow`` link can hold it.
"""
from engine import eras
from engine.simulation import Simulation

from .conftest import events

STATE = "/brokers/topics/t/partitions/0/state"
ISOLATE_3 = {"at_ms": 1000, "op": "isolate", "broker": 3, "from": "brokers"}
SLOW_TO_CONTROLLER = {"at_ms": 500, "op": "slow", "from": 1, "to": 0, "latency_ms": 3000}


def cluster(version, timeline, config=None, **overrides):
    """Controller 0; partition t-0 on [1, 2, 3] led by 1; an acks=1 producer writes 4 records
    until 2 s so that followers can fall behind (KAFKA-7152: an idle follower never does)."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 4,
           "config": {"replica.lag.time.max.ms": 2000, **(config or {})},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [1, 2, 3]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "1",
                        "rate_per_s": 2, "stop_ms": 2000}],
           "duration_ms": 20000, "timeline": timeline}
    doc.update(overrides)
    return doc


def alter(result, phase, **match):
    return events(result, "alter_partition", phase=phase, **match)


def test_era_names_and_client_defaults():
    assert eras.ZK_VERSIONS[-4:] == ("2.7", "3.0", "3.3", "3.7")
    assert [eras.ERAS[v].alter_isr_api for v in ("2.7", "3.0", "3.3", "3.7")] == \
        ["AlterIsr", "AlterIsr", "AlterPartition", "AlterPartition"]
    # KIP-679: producer acks=all and idempotence from 3.0; 2.7 keeps acks=1
    assert [eras.default(v, "acks") for v in ("2.6", "2.7", "3.0", "3.7")] == ["1", "1", "all", "all"]
    assert eras.default("3.0", "enable.idempotence") is True
    assert eras.default("2.7", "enable.idempotence") is False
    for v in ("2.7", "3.0", "3.3", "3.7"):  # 2.6 defaults (docs/model.md §17.1)
        assert eras.default(v, "replica.lag.time.max.ms") == 30000
        assert eras.default(v, "zookeeper.session.timeout.ms") == 18000
        assert eras.default(v, "unclean.leader.election.enable") is False


def test_the_2_7_alter_isr_waits_for_the_50_ms_send_task_while_3_0_sends_at_once():
    sent = {}
    for version in ("2.7", "3.0"):
        r = Simulation(cluster(version, [ISOLATE_3])).run()
        [first] = alter(r, "sent")[:1]
        [started] = events(r, "broker_started", broker=1)
        sent[version] = (first["t_ms"], started["t_ms"])
        assert first["proposed_isr"] == [1, 2]
    (t27, start27), (t30, start30) = sent["2.7"], sent["3.0"]
    assert start27 == start30
    assert (t30 - start30) % 1000 == 0      # proposed and sent at an isr-expiration tick
    assert t27 == t30 + 50                   # the next "send-alter-isr" run, 50 ms later
    assert (t27 - start27) % 50 == 0


def test_a_pending_shrink_keeps_the_old_isr_for_acks_all_admission_until_the_answer():
    # min.insync.replicas 3: the shrink of 3 goes pending at 3004 and is answered ~3 s later
    # (the leader -> controller link is slow). Admission uses the committed ISR [1, 2, 3].
    timeline = [SLOW_TO_CONTROLLER, ISOLATE_3,
                {"at_ms": 4000, "op": "produce", "topic": "t", "acks": "all", "producer": "a"},
                {"at_ms": 7000, "op": "produce", "topic": "t", "acks": "all", "producer": "b"}]
    sim = Simulation(cluster("2.7", timeline, {"min.insync.replicas": 3}))
    sim.advance_to(4100)
    part = sim.brokers[1].partitions["t-0"]
    assert part.pending["kind"] == "isr_shrink" and part.isr == [1, 2, 3]
    assert sim.result()["partitions"]["t-0"]["isr_state"] == \
        {"committed": [1, 2, 3], "maximal": [1, 2, 3], "pending": "shrink"}
    assert sim.records["a-0"].status == "pending"       # admitted, waits for broker 3
    r = sim.run()
    [commit] = events(r, "isr_shrink", broker=1)
    assert 6000 < commit["t_ms"] < 6100 and commit["isr"] == [1, 2]
    assert not [e for e in events(r, "produce_error", error="NOT_ENOUGH_REPLICAS")
                if e["t_ms"] < commit["t_ms"]]
    assert events(r, "produce_error", error="NOT_ENOUGH_REPLICAS", producer="b")
    # 2.6: the leader's own ZooKeeper write commits at once, the same request is refused
    old = Simulation(cluster("2.6", timeline, {"min.insync.replicas": 3})).run()
    [shrink] = events(old, "isr_shrink", broker=1)
    assert shrink["t_ms"] < 3100
    refused = events(old, "produce_error", error="NOT_ENOUGH_REPLICAS", producer="a")[0]  # retried
    assert 4000 <= refused["t_ms"] < 4010


STALE = [SLOW_TO_CONTROLLER, ISOLATE_3, {"at_ms": 3500, "op": "shutdown", "broker": 2}]


def test_the_controller_fences_an_alter_isr_from_an_older_leader_epoch():
    # The shrink (epoch 0) is on the slow link when broker 2's controlled shutdown makes the
    # controller remove 2 from the ISR itself: leader epoch 1. The request arrives with epoch 0.
    for version in ("2.7", "3.0", "3.3", "3.7"):
        r = Simulation(cluster(version, STALE)).run()
        [removal] = events(r, "isr_shrink", by="controller")
        assert removal["leader_epoch"] == 1 and removal["isr"] == [1, 3]
        [fenced] = alter(r, "answered", error="FENCED_LEADER_EPOCH")
        assert fenced["leader_epoch"] == 0 and fenced["proposed_isr"] == [1, 2]
        assert fenced["t_ms"] > removal["t_ms"] + 2000


def test_kafka_12686_a_leader_and_isr_during_an_in_flight_alter_isr_loses_the_next_proposal():
    # 2.7.x clearPending drops the in-flight item on makeLeader; the re-proposed shrink of 3
    # (epoch 1) is queued behind it, and the stale answer removes it by partition: stuck pending.
    r = Simulation(cluster("2.7", STALE)).run()
    state = r["partitions"]["t-0"]
    assert state["isr"] == [1, 3] and state["isr_state"]["pending"] == "shrink"
    assert not alter(r, "sent", leader_epoch=1)
    # 3.0 (no clearPending): the new proposal is refused while the old item is queued, and
    # made again at the next isr-expiration tick after the answer
    r = Simulation(cluster("3.0", STALE)).run()
    [retry] = alter(r, "sent", leader_epoch=1)
    assert retry["proposed_isr"] == [1]
    assert r["partitions"]["t-0"]["isr"] == [1]
    assert r["partitions"]["t-0"]["isr_state"]["pending"] is None


def _created_znodes(doc):
    sim = Simulation(doc)
    written = []
    observe = sim.zk_server.observer

    def spy(path, data, version):
        written.append(path)
        observe(path, data, version)
    sim.zk_server.observer = spy
    return sim.run(), written


def test_no_isr_change_notification_znode_is_ever_created_from_2_7():
    timeline = [ISOLATE_3, {"at_ms": 8000, "op": "heal"}]
    r, written = _created_znodes(cluster("2.6", timeline))
    assert [p for p in written if p.startswith("/isr_change_notification/")]
    assert events(r, "isr_change_notification", stage="created")
    for version in ("2.7", "3.0", "3.3", "3.7"):
        r, written = _created_znodes(cluster(version, timeline))
        assert [e["type"] for e in events(r, "isr_shrink") + events(r, "isr_expand")] == \
            ["isr_shrink", "isr_expand"]
        assert not [p for p in written if p.startswith("/isr_change_notification/")]
        assert not [p for p in r["zk"] if p.startswith("/isr_change_notification/")]
        assert not events(r, "isr_change_notification")
        # the controller wrote the change: its epoch in the znode, zkVersion +1 per change
        assert r["zk"][STATE]["data"]["controller_epoch"] == r["controller"]["epoch"]
        assert r["zk"][STATE]["version"] == 2


def test_kafka_13091_the_hw_waits_for_the_next_fetch_in_2_7_and_3_0_and_moves_at_commit_in_3_3():
    # Broker 3 holds the HW at 2 of 4 records; the shrink commits at ~3010.
    for version, hw in (("2.7", 2), ("3.0", 2), ("3.3", 4)):
        sim = Simulation(cluster(version, [ISOLATE_3, {"at_ms": 5000, "op": "produce",
                                                       "topic": "t", "acks": "1"}]))
        sim.advance_to(4000)
        assert sim.brokers[1].partitions["t-0"].isr == [1, 2], version
        assert sim.brokers[1].logs["t-0"].hw == hw, version
        sim.advance_to(5100)   # the next append recomputes it in every era
        assert sim.brokers[1].logs["t-0"].hw == 5, version


def test_kip_841_from_3_3_the_controller_refuses_a_shutting_down_replica():
    # Broker 3 is cut off from the leader (out of the ISR at ~3 s). At 3.9 s it starts a
    # controlled shutdown whose answer takes 3 s (slow link from the controller), so the
    # controller counts it as shutting down while it keeps fetching. The cut heals at 4 s: its
    # held fetch arrives at TCP's retransmission at 4.0 s, it catches up and the leader proposes
    # it back.
    timeline = [dict(ISOLATE_3, **{"from": [1]}),
                {"at_ms": 3000, "op": "slow", "from": 0, "to": 3, "latency_ms": 3000},
                {"at_ms": 3900, "op": "shutdown", "broker": 3},
                {"at_ms": 4000, "op": "heal", "from": 3, "to": 1},
                {"at_ms": 4000, "op": "heal", "from": 1, "to": 3}]
    r = Simulation(cluster("3.3", timeline)).run()
    # every new fetch (replica.fetch.wait.max.ms 500) proposes it again and is refused again
    refused, *again = alter(r, "answered", error="INELIGIBLE_REPLICA")
    assert again and len(again) <= 6
    assert refused["proposed_isr"] == [1, 2, 3] and refused["api"] == "AlterPartition"
    assert not events(r, "isr_expand")
    assert r["partitions"]["t-0"]["isr_state"] == {"committed": [1, 2], "maximal": [1, 2],
                                                   "pending": None}   # reverted
    # 3.0: accepted; the controller removes it again (leader epoch + 1) once the broker is gone
    r = Simulation(cluster("3.0", timeline)).run()
    [expand] = events(r, "isr_expand")
    assert expand["isr"] == [1, 2, 3]
    [removal] = events(r, "isr_shrink", by="controller")
    assert removal["isr"] == [1, 2] and removal["leader_epoch"] == 1


def lonely_leader(version):
    """Broker 0 leads t-0 (and is the controller); 1 and 2 are cut off and leave the ISR at ~3 s;
    min.insync.replicas 2. At 6 s broker 0 dies: unclean election (enabled) of broker 1."""
    return {"seed": 1, "kafka_version": version, "brokers": 3,
            "config": {"replica.lag.time.max.ms": 2000, "min.insync.replicas": 2,
                       "zookeeper.session.timeout.ms": 3000, "unclean.leader.election.enable": True},
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "1",
                         "rate_per_s": 2, "stop_ms": 2000}],
            "duration_ms": 20000,
            "timeline": [{"at_ms": 1000, "op": "isolate", "broker": 1, "from": "brokers"},
                         {"at_ms": 1000, "op": "isolate", "broker": 2, "from": "brokers"},
                         {"at_ms": 5000, "op": "produce", "topic": "t", "acks": "1"},
                         {"at_ms": 6000, "op": "crash", "broker": 0},
                         {"at_ms": 6000, "op": "heal"}]}


def test_kafka_15583_from_3_7_the_hw_is_frozen_while_the_isr_is_below_min_insync_replicas():
    for version, hw in (("3.3", 5), ("3.7", 2)):
        sim = Simulation(lonely_leader(version))
        sim.advance_to(5500)
        assert sim.brokers[0].partitions["t-0"].isr == [0]
        assert sim.brokers[0].logs["t-0"].leo == 5
        assert sim.brokers[0].logs["t-0"].hw == hw, version


def test_kip_704_an_unclean_election_marks_the_partition_recovering_until_the_first_expansion():
    sim = Simulation(lonely_leader("3.3"))
    r = sim.run()
    [unclean] = events(r, "leader_elected", kind="unclean")
    [expand] = events(r, "isr_expand")
    assert unclean["leader"] == 1 and expand["isr"] == [1, 2] and expand["t_ms"] > unclean["t_ms"]
    sim = Simulation(lonely_leader("3.3"))
    sim.advance_to(unclean["t_ms"] + 1)
    data = sim.zk_server.tree.nodes[STATE].data
    assert data["leader"] == 1 and data["isr"] == [1] and data["leader_recovery_state"] == 1
    assert "leader_recovery_state" not in r["zk"][STATE]["data"]   # RECOVERED is never written
    # 3.0 does not know KIP-704
    sim = Simulation(lonely_leader("3.0"))
    sim.advance_to(unclean["t_ms"] + 1)
    assert sim.zk_server.tree.nodes[STATE].data["leader"] == 1
    assert "leader_recovery_state" not in sim.zk_server.tree.nodes[STATE].data


def test_a_zookeeper_badversion_is_invalid_update_version_and_the_leader_gives_up():
    # An out-of-band write of the state znode (an operator, an old-IBP broker) moves its
    # zkVersion to 1 behind the controller's back. The shrink carries zkVersion 0: the
    # controller's conditional write fails (2.7: no pre-check; 3.3: its cache still says 0) and
    # the leader stays pending until a LeaderAndIsr — here, for the rest of the run.
    for version in ("2.7", "3.3"):
        sim = Simulation(cluster(version, [ISOLATE_3]))
        sim.advance_to(2500)
        tree = sim.zk_server.tree
        tree.set(STATE, dict(tree.nodes[STATE].data), -1)
        r = sim.run()
        [answer] = alter(r, "answered")
        assert answer["error"] == "INVALID_UPDATE_VERSION" and answer["partition_epoch"] == 0
        assert r["partitions"]["t-0"]["isr"] == [1, 2, 3]
        assert r["partitions"]["t-0"]["isr_state"] == {"committed": [1, 2, 3],
                                                       "maximal": [1, 2, 3], "pending": "shrink"}
        assert not events(r, "isr_shrink")


def test_not_controller_makes_the_channel_resend_the_same_request_to_the_new_controller():
    # Broker 0 loses its ZooKeeper session (and the controllership) while the shrink is on the
    # slow link; it answers NOT_CONTROLLER, and the same request goes to the new controller
    # after the 50 ms reconnect backoff.
    timeline = [SLOW_TO_CONTROLLER, ISOLATE_3, {"at_ms": 3500, "op": "expire_session", "broker": 0}]
    for version in ("2.7", "3.3"):
        r = Simulation(cluster(version, timeline)).run()
        [sent] = alter(r, "sent")
        first, second = alter(r, "answered")
        assert first["error"] == "NOT_CONTROLLER" and second["error"] is None
        assert second["t_ms"] - first["t_ms"] < 100
        assert (sent["proposed_isr"], sent["partition_epoch"]) == \
            (second["proposed_isr"], second["partition_epoch"]) == ([1, 2], 0)
        [new] = [e for e in events(r, "controller_elected") if e["broker"] != 0]
        assert r["zk"][STATE]["data"]["controller_epoch"] == new["epoch"]


def test_a_controller_moved_exception_in_alter_partition_answers_unknown_server_error_only():
    """Engine 1.3.0 fix (fails under 1.2.0's rule): processAlterIsr @ 2.7.2 and
    processAlterPartition @ 3.3.2 / 3.7.0 catch every Throwable, the ControllerMovedException of
    a failed /controller_epoch check included: the request fails with UNKNOWN_SERVER_ERROR and
    the controller does *not* resign there (the /controller watch would do it). Here the
    /controller_epoch zkVersion is moved out of band, so the check fails on every request and
    the leader resends every 50 ms (2.8+), as Kafka's would."""
    for engine_version, resigns in (("1.3.0", False), ("1.2.0", True)):
        sim = Simulation(cluster("3.3", [ISOLATE_3]), engine_version=engine_version)
        sim.advance_to(2500)
        tree = sim.zk_server.tree
        tree.set("/controller_epoch", tree.nodes["/controller_epoch"].data, -1)
        sim.advance_to(3300)
        r = sim.result()
        assert bool(events(r, "controller_resigned")) is resigns
        if resigns:
            continue
        answers = alter(r, "answered")
        assert {a["error"] for a in answers} == {"UNKNOWN_SERVER_ERROR"} and len(answers) >= 4
        sent = alter(r, "sent")
        assert sent[1]["t_ms"] == answers[0]["t_ms"] + 50     # DefaultAlterPartitionManager retry
        assert sim.brokers[0].controller.active
        assert r["partitions"]["t-0"]["isr_state"]["pending"] == "shrink"


def test_a_failed_state_znode_write_other_than_badversion_is_unknown_server_error():
    """Engine 1.3.0 fix (fails under 1.2.0's rule): KafkaZkClient.updateLeaderAndIsr returns the
    KeeperException of a failed setData (e.g. NONODE) and the controller answers
    Errors.forException of it — UNKNOWN_SERVER_ERROR, not UNKNOWN_TOPIC_OR_PARTITION (which only
    the cache lookup gives). 3.3's leader retries it at once; 2.7's stays pending (KAFKA-14010)."""
    for version, engine_version, error in (("3.3", "1.3.0", "UNKNOWN_SERVER_ERROR"),
                                           ("2.7", "1.3.0", "UNKNOWN_SERVER_ERROR"),
                                           ("3.3", "1.2.0", "UNKNOWN_TOPIC_OR_PARTITION")):
        sim = Simulation(cluster(version, [ISOLATE_3]), engine_version=engine_version)
        sim.advance_to(2500)
        sim.zk_server.tree.delete(STATE)
        sim.advance_to(3100)
        r = sim.result()
        answers = alter(r, "answered")
        assert answers[0]["error"] == error and answers[0]["proposed_isr"] == [1, 2]
        resent = version == "3.3" and engine_version == "1.3.0"
        assert (len(alter(r, "sent")) > 1) is resent
        assert sim.brokers[1].partitions["t-0"].pending["kind"] == "isr_shrink"


def _two_partition_batch(engine_version=None):
    """2.7: t-0 and t-1, both led by 1, shrink at the same tick and go in one AlterIsr; the
    controller answers the first one UNKNOWN_SERVER_ERROR (as a failed ZooKeeper write would)."""
    doc = cluster("2.7", [ISOLATE_3])
    doc["topics"][0].update(partitions=2, assignment={"0": [1, 2, 3], "1": [1, 3, 2]})
    sim = Simulation(doc, engine_version=engine_version)
    sim.advance_to(2900)
    controller = sim.brokers[0].controller
    validate = controller._validate_alter_isr
    failed = []

    def failing(broker, req):
        if not failed:
            failed.append(req["key"])
            return "UNKNOWN_SERVER_ERROR", None
        return validate(broker, req)
    controller._validate_alter_isr = failing
    return failed, sim.run()


def test_kafka_14010_in_2_7_an_unexpected_error_throws_and_leaves_the_rest_of_the_batch_queued():
    """Engine 1.3.0 fix (fails under 1.2.0's rule): Partition.sendAlterIsrRequest @ 2.7.2 throws
    IllegalStateException when the retry of an unexpected error is refused; it escapes
    AlterIsrManagerImpl.handleAlterIsrResponse's loop (try/finally), so the partitions after it in
    the batch are neither answered nor removed: they stay queued and pending, and the next 50 ms
    tick sends them again, answered from the controller's cache (written already)."""
    failed, r = _two_partition_batch()
    [key] = failed
    other = 1 - int(key[-1])
    first_answer = alter(r, "answered", partition=other)[0]
    assert first_answer["error"] is None                # written by the controller ...
    [sent, resent] = alter(r, "sent", partition=other)  # ... but handled only after a resend
    [shrink] = events(r, "isr_shrink", partition=other)
    assert resent["t_ms"] > first_answer["t_ms"] and shrink["t_ms"] > resent["t_ms"]
    assert shrink["zk_version"] == 1 and resent["partition_epoch"] == 0
    assert r["partitions"][key]["isr_state"]["pending"] == "shrink"     # stuck (KAFKA-14010)
    _failed, old = _two_partition_batch("1.2.0")
    assert len(alter(old, "sent", partition=other)) == 1
